//! `similar`: the line-level similarity search and its bounds (the design
//! note of [`super`] defines the score, the anchors and the bounds).

use memchr::memmem;

use super::exact::skeleton_chars;
use super::{
    make_hint, Hint, Kind, ANCHOR_KEYS_MAX, ANCHOR_LINES_MAX, MAX_HINTS, SIMILAR_LINES_MAX,
    SIMILAR_LINE_CHARS, SIMILAR_MIN, SIMILAR_OLD_LINES_MAX, SIMILAR_WORK_MAX,
};

fn is_token_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

fn tokens(s: &str) -> impl Iterator<Item = &str> {
    s.split(|c: char| !is_token_char(c))
        .filter(|t| t.chars().nth(1).is_some())
}

/// Anchor keys of a piece of OLD: its tokens, and for tokens of 4
/// characters or more also their first and last 3, so a typo inside OLD's
/// one distinctive token still finds its line.
fn anchor_keys(s: &str) -> impl Iterator<Item = &str> {
    tokens(s).flat_map(|t| {
        let mut ends = None;
        if let (Some((p, _)), Some((q, _))) =
            (t.char_indices().nth(3), t.char_indices().rev().nth(2))
        {
            ends = Some([&t[..p], &t[q..]]);
        }
        std::iter::once(t).chain(ends.into_iter().flatten())
    })
}

/// Line keys, stored flat (no allocation per line): for key `i`, a hash of
/// the line's whole skeleton (for equality) and the sorted character
/// bigrams of its start (its first [`SIMILAR_LINE_CHARS`] characters: a
/// minified line stays cheap) at `codes[ends[i]..ends[i + 1]]`.
struct LineKeys {
    skel_hash: Vec<u64>,
    ends: Vec<usize>,
    codes: Vec<u32>,
}

impl LineKeys {
    fn with_capacity(lines: usize, codes: usize) -> LineKeys {
        let mut ends = Vec::with_capacity(lines + 1);
        ends.push(0);
        LineKeys {
            skel_hash: Vec::with_capacity(lines),
            ends,
            codes: Vec::with_capacity(codes),
        }
    }

    /// Appends the key of `s`; streams the skeleton, so a line of any
    /// length costs no copy of itself.
    fn push(&mut self, s: &str) {
        use std::hash::Hasher;
        // DefaultHasher::new() has fixed keys: the same hash on every run.
        // The hash is of each skeleton character as a u32 (`write_u32`,
        // which is `write` of its 4 bytes: written here in chunks, the same
        // byte stream).
        let mut h = std::collections::hash_map::DefaultHasher::new();
        let start = self.codes.len();
        if s.is_ascii() {
            // The skeleton of ASCII text drops the ASCII whitespace (VT
            // included, as `char::is_whitespace` does) and maps nothing.
            let mut buf = [0u8; 256];
            let (mut n, mut taken, mut prev) = (0usize, 0usize, 0u32);
            for &b in s.as_bytes() {
                if b.is_ascii_whitespace() || b == 0x0b {
                    continue;
                }
                buf[n] = b;
                buf[n + 1..n + 4].fill(0);
                n += 4;
                if n == buf.len() {
                    h.write(&buf);
                    n = 0;
                }
                if taken < SIMILAR_LINE_CHARS {
                    if taken > 0 {
                        self.codes.push((prev << 16) | u32::from(b));
                    }
                    prev = u32::from(b);
                    taken += 1;
                }
            }
            h.write(&buf[..n]);
        } else {
            let skel = skeleton_chars(s);
            for c in skel.clone() {
                h.write_u32(c as u32);
            }
            // Characters folded to 16 bits: exact for the BMP, rare
            // collisions above.
            let mut prev = None;
            for c in skel.take(SIMILAR_LINE_CHARS) {
                let c = c as u32 & 0xFFFF;
                if let Some(p) = prev {
                    self.codes.push((p << 16) | c);
                }
                prev = Some(c);
            }
        }
        self.codes[start..].sort_unstable();
        self.skel_hash.push(h.finish());
        self.ends.push(self.codes.len());
    }

    fn get(&self, i: usize) -> (u64, &[u32]) {
        (
            self.skel_hash[i],
            &self.codes[self.ends[i]..self.ends[i + 1]],
        )
    }
}

/// The line score as the alignment uses it: 1 when the skeletons are equal
/// (by hash), else the Dice coefficient of the bigram multisets, and 0 when
/// that is below [`SIMILAR_MIN`] (so the merge may stop once it cannot
/// reach it).
fn line_score(a: (u64, &[u32]), b: (u64, &[u32])) -> f64 {
    if a.0 == b.0 {
        return 1.0;
    }
    let (x, y) = (a.1, b.1);
    if x.is_empty() || y.is_empty() {
        return 0.0;
    }
    let total = x.len() + y.len();
    // 2c / total >= 0.5 needs 4c >= total (exact in integers).
    let need = total.div_ceil(4);
    if x.len().min(y.len()) < need {
        return 0.0;
    }
    let (mut i, mut j, mut common) = (0, 0, 0usize);
    while i < x.len() && j < y.len() {
        match x[i].cmp(&y[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                common += 1;
                i += 1;
                j += 1;
                continue;
            }
        }
        if common + (x.len() - i).min(y.len() - j) < need {
            return 0.0;
        }
    }
    let sim = 2.0 * common as f64 / total as f64;
    if sim >= SIMILAR_MIN {
        sim
    } else {
        0.0
    }
}

/// The offset just past the `n`-th newline from `off` (the start of the
/// line `n` lines further), or the end of `b`. Newlines are counted a block
/// at a time, not found one by one.
fn skip_lines(b: &[u8], mut off: usize, mut n: usize) -> usize {
    const BLOCK: usize = 2048;
    while n > 0 && off < b.len() {
        let end = (off + BLOCK).min(b.len());
        let c = memchr::memchr_iter(b'\n', &b[off..end]).count();
        if c >= n {
            let i = memchr::memchr_iter(b'\n', &b[off..end])
                .nth(n - 1)
                .expect("counted");
            return off + i + 1;
        }
        n -= c;
        off = end;
    }
    if n > 0 {
        b.len()
    } else {
        off
    }
}

/// Windows start within this many lines of an anchor's alignment.
const SHIFT: usize = 2;
/// Windows have k−SIZE ..= k+SIZE lines.
const SIZE: usize = 2;
/// Half-width of the alignment band beyond |w−k|.
const BAND: usize = 3;

pub(super) fn similar(
    text: &str,
    pieces: &[&str],
    ends_nl: bool,
    truncated: &mut bool,
) -> Vec<Hint> {
    let k = pieces.len();
    if k > SIMILAR_OLD_LINES_MAX {
        *truncated = true;
        return Vec::new();
    }
    // OLD's anchor keys, each with the pieces of OLD holding it; the
    // longest first (they tend to be the rarest), at most ANCHOR_KEYS_MAX.
    let mut keys_of_old: Vec<(&str, Vec<usize>)> = Vec::new();
    for (j, p) in pieces.iter().enumerate() {
        for key in anchor_keys(p) {
            match keys_of_old.iter_mut().find(|(k, _)| *k == key) {
                Some((_, js)) if js.last() != Some(&j) => js.push(j),
                Some(_) => {}
                None => keys_of_old.push((key, vec![j])),
            }
        }
    }
    keys_of_old.sort_by(|x, y| y.0.len().cmp(&x.0.len()).then(x.0.cmp(y.0)));
    keys_of_old.truncate(ANCHOR_KEYS_MAX);
    // Where each occurs (as a substring), counting no further than a key
    // that is too common to anchor: memmem is far cheaper than tokenizing.
    let b = text.as_bytes();
    // All keys' offsets in one vector (one allocation, not one per key).
    let mut offsets: Vec<usize> = Vec::with_capacity(keys_of_old.len() * (ANCHOR_LINES_MAX + 1));
    let mut hits: Vec<(usize, &[usize], std::ops::Range<usize>)> = Vec::new();
    for (n, (key, js)) in keys_of_old.iter().enumerate() {
        let from = offsets.len();
        offsets.extend(memmem::find_iter(b, key.as_bytes()).take(ANCHOR_LINES_MAX + 1));
        if offsets.len() > from {
            hits.push((n, js.as_slice(), from..offsets.len()));
        }
    }
    // Rarest first; ties by length order, so the answer is deterministic.
    hits.sort_by_key(|h| (h.2.len(), h.0));
    let mut anchors: Vec<(usize, &[usize])> = Vec::with_capacity(ANCHOR_LINES_MAX);
    for (n, (_, js, at)) in hits.iter().enumerate() {
        let at = &offsets[at.clone()];
        // More common keys add little: the rarest carry the signal.
        if n > 0 && anchors.len() + at.len() > ANCHOR_LINES_MAX {
            break;
        }
        if at.len() > ANCHOR_LINES_MAX {
            *truncated = true;
        }
        anchors.extend(at.iter().take(ANCHOR_LINES_MAX).map(|&o| (o, *js)));
    }
    anchors.sort_unstable_by_key(|a| a.0);
    // Byte offsets to line numbers in one forward pass, which goes on to
    // count the lines.
    let mut bases: Vec<i64> = Vec::with_capacity(anchors.iter().map(|a| a.1.len()).sum());
    let (mut line, mut counted) = (0usize, 0usize);
    for (o, js) in anchors {
        line += memchr::memchr_iter(b'\n', &b[counted..o]).count();
        counted = o;
        bases.extend(js.iter().map(|&j| line as i64 - j as i64));
    }
    let n_lines = line + memchr::memchr_iter(b'\n', &b[counted..]).count() + 1;
    bases.sort_unstable();
    bases.dedup();
    // The lines any window may touch, and their keys.
    let reach = (SHIFT + SIZE + BAND + SIZE) as i64;
    let mut wanted: Vec<(usize, usize)> = Vec::with_capacity(bases.len());
    let mut total = 0usize;
    for (n, &base) in bases.iter().enumerate() {
        let lo = (base - reach).max(0) as usize;
        let hi = ((base + k as i64 + reach).max(0) as usize).min(n_lines);
        match wanted.last_mut() {
            Some(last) if lo <= last.1 => {
                let end = last.1.max(hi);
                total += end - last.1;
                last.1 = end;
            }
            _ if lo < hi => {
                total += hi - lo;
                wanted.push((lo, hi));
            }
            _ => {}
        }
        if total > SIMILAR_LINES_MAX {
            // Memory bound: the later anchors are not scored.
            *truncated = true;
            bases.truncate(n + 1);
            break;
        }
    }
    // The wanted lines' spans and keys, in line order; `ranges` maps a line
    // to its index: (first line, end line, index of the first).
    let mut spans: Vec<(usize, usize)> = Vec::with_capacity(total);
    let mut ranges: Vec<(usize, usize, usize)> = Vec::with_capacity(wanted.len());
    let (mut line, mut off) = (0usize, 0usize);
    for (lo, hi) in wanted {
        if lo > line {
            off = skip_lines(b, off, lo - line);
            line = lo;
        }
        ranges.push((lo, hi, spans.len()));
        while line < hi {
            let end = memchr::memchr(b'\n', &b[off..]).map_or(b.len(), |i| off + i);
            spans.push((off, end));
            off = (end + 1).min(b.len());
            line += 1;
        }
    }
    // A line of n bytes has fewer than min(n, SIMILAR_LINE_CHARS) bigrams.
    let most = spans
        .iter()
        .map(|&(s, e)| (e - s).min(SIMILAR_LINE_CHARS))
        .sum();
    let mut keys = LineKeys::with_capacity(spans.len(), most);
    for &(s, e) in &spans {
        keys.push(&text[s..e]);
    }
    // The index of a wanted line.
    let index = |l: usize| -> Option<usize> {
        let r = ranges
            .partition_point(|&(lo, _, _)| lo <= l)
            .checked_sub(1)?;
        let (lo, hi, first) = ranges[r];
        (l < hi).then(|| first + l - lo)
    };
    let mut old_keys = LineKeys::with_capacity(k, 0);
    for p in pieces {
        old_keys.push(p);
    }
    // Line scores a base can need: piece j against lines b+j-R ..= b+j+R.
    const R: usize = SHIFT + BAND + SIZE;
    const W: usize = 2 * R + 1;
    // The line scores by diagonal: piece j against line j + d, for the
    // W diagonals d of the current base, in a ring (d mod W). Bases ascend,
    // so a diagonal shared with the previous base is not scored again.
    let mut mat: Vec<f64> = vec![0.0; k * W];
    let mut scored_to: Option<i64> = None; // the highest diagonal in the ring
    let mut work = 0usize;
    let mut best: Vec<(f64, usize, usize)> = Vec::with_capacity(bases.len()); // (score, start, size)
    let mut row_prev: Vec<f64> = Vec::new();
    let mut row: Vec<f64> = Vec::new();
    'bases: for &b in &bases {
        work += k * W;
        if work > SIMILAR_WORK_MAX {
            *truncated = true;
            break;
        }
        let first_new = scored_to.map_or(b - R as i64, |t| (t + 1).max(b - R as i64));
        for d in first_new..=b + R as i64 {
            let slot = d.rem_euclid(W as i64) as usize;
            for j in 0..k {
                let line = d + j as i64;
                let sim = usize::try_from(line)
                    .ok()
                    .and_then(index)
                    .map_or(0.0, |i| line_score(old_keys.get(j), keys.get(i)));
                mat[j * W + slot] = sim;
            }
        }
        scored_to = Some(b + R as i64);
        // The ring slot of diagonal b - R (offset 0 of this base).
        let ring0 = (b - R as i64).rem_euclid(W as i64) as usize;
        let mut top: Option<(f64, usize, usize)> = None;
        for ds in -(SHIFT as i64)..=SHIFT as i64 {
            let Ok(s) = usize::try_from(b + ds) else {
                continue;
            };
            for w in k.saturating_sub(SIZE).max(1)..=k + SIZE {
                if s + w > n_lines {
                    break;
                }
                let band = BAND + w.abs_diff(k);
                work += k * (2 * band + 1);
                if work > SIMILAR_WORK_MAX {
                    *truncated = true;
                    break 'bases;
                }
                // Weighted LCS of pieces 0..k against lines s..s+w, in a
                // band around the diagonal (row j: piece j-1; column i: line s+i-1).
                row_prev.clear();
                row_prev.resize(w + 1, 0.0);
                for j in 1..=k {
                    row.clear();
                    row.resize(w + 1, 0.0);
                    let lo = j.saturating_sub(band).max(1);
                    let hi = (j + band).min(w);
                    for i in lo..=hi {
                        // line - (b + piece) = ds + (i - j), within ±R.
                        let off = (ds + i as i64 - j as i64 + R as i64) as usize;
                        let slot = if ring0 + off >= W {
                            ring0 + off - W
                        } else {
                            ring0 + off
                        };
                        let diag = row_prev[i - 1] + mat[(j - 1) * W + slot];
                        row[i] = diag.max(row_prev[i]).max(row[i - 1]);
                    }
                    // Right of the band the row's best carries forward.
                    for i in hi + 1..=w {
                        row[i] = row[i - 1].max(row_prev[i]);
                    }
                    std::mem::swap(&mut row, &mut row_prev);
                }
                let score = 2.0 * row_prev[w] / (k + w) as f64;
                // Ties: the size closest to OLD's, then the earlier start.
                let better = top.is_none_or(|(ts, tstart, tw)| {
                    score > ts || (score == ts && (w.abs_diff(k), s) < (tw.abs_diff(k), tstart))
                });
                if better {
                    top = Some((score, s, w));
                }
            }
        }
        if let Some(t) = top.filter(|t| t.0 >= SIMILAR_MIN) {
            best.push(t);
        }
    }
    best.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    best.dedup_by(|a, b| a.1 == b.1 && a.2 == b.2);
    let mut out: Vec<Hint> = Vec::new();
    for (score, s, w) in best {
        // Enough to fill the slots the exact kinds left, after overlaps.
        if out.len() >= 2 * MAX_HINTS {
            break;
        }
        let (Some(first), Some(last)) = (index(s), index(s + w - 1)) else {
            continue;
        };
        let h = make_hint(
            text,
            s as u64 + 1,
            spans[first].0,
            spans[last].1,
            ends_nl,
            Kind::Similar,
            (score * 1000.0).round() / 1000.0,
        );
        if !out
            .iter()
            .any(|f| h.line <= f.end_line && f.line <= h.end_line)
        {
            out.push(h);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hints::tests::second_call;
    use crate::hints::{find, FULL_HINTS_MAX_BYTES};

    #[test]
    fn similar() {
        let t = "def total(items):\n    s = 0\n    for i in items:\n        s += i.price\n    return s\n\ndef other():\n    pass\n";
        // A stale view: one line changed since the agent read the file.
        let h = find(
            t,
            "def total(items):\n    s = 0\n    for i in items:\n        s += i.cost\n    return s",
            "",
            true,
        );
        let first = &h.hints[0];
        assert_eq!(
            (first.kind, first.line, first.end_line),
            (Kind::Similar, 1, 5),
            "{h:?}"
        );
        // "s+=i.price" vs "s+=i.cost" share 4 of 9 and 8 bigrams: Dice 8/17
        // < 0.5 counts 0, so 4 of 5 lines align: S = 2·4 / (5 + 5).
        assert_eq!(first.score, 0.8);
        second_call(t, &first.text);
        // A typo in a one-line OLD.
        let h = find(t, "s += i.prize", "", true);
        assert_eq!((h.hints[0].kind, h.hints[0].line), (Kind::Similar, 4));
        // Near miss: nothing alike scores below 0.5, so no hint at all.
        assert_eq!(
            find(t, "completely unrelated words here", "", true).hints,
            vec![]
        );
    }

    #[test]
    fn bounds_set_truncated() {
        // Beyond FULL_HINTS_MAX_BYTES: the exact kinds still, `similar` not.
        let mut big = "x\n".repeat(FULL_HINTS_MAX_BYTES / 2 + 1);
        big.push_str("let a = 1;\n");
        let h = find(&big, "let a = 1; ", "", true);
        assert_eq!(h.hints[0].kind, Kind::TrailingWhitespace);
        assert_eq!(h.hints[0].line as usize, FULL_HINTS_MAX_BYTES / 2 + 2);
        assert!(h.truncated);
        let h = find(&big, "let a = 2;", "", true);
        assert_eq!((h.hints.len(), h.truncated), (0, true));
        let h = find(&big[big.len() - 40..], "let a = 2;", "", true);
        assert_eq!((h.hints[0].kind, h.truncated), (Kind::Similar, false));
        // OLD of too many lines skips `similar`.
        let old = "let a = 2;\n".repeat(SIMILAR_OLD_LINES_MAX + 1);
        let h = find("let a = 1;\n", &old, "", true);
        assert_eq!((h.hints.len(), h.truncated), (0, true));
        // A rarest anchor key on more than ANCHOR_LINES_MAX lines.
        let t = "call(alpha);\n".repeat(ANCHOR_LINES_MAX + 5);
        let h = find(&t, "call(alpha, beta);", "", true);
        assert!(h.truncated);
        assert_eq!(h.hints[0].kind, Kind::Similar);
    }
}
