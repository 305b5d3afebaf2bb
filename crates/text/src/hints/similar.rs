//! `similar`: the line-level similarity search and its bounds (the design
//! note of [`super`] defines the score, the anchors and the bounds).

mod anchors;
mod measure;

use super::exact::same_bytes;
use super::{
    make_hint, Hint, Kind, ANCHOR_KEYS_MAX, ANCHOR_LINES_MAX, MAX_HINTS, PIECE_BITS_MAX,
    SIMILAR_LINES_MAX, SIMILAR_LINE_CHARS, SIMILAR_MIN, SIMILAR_OLD_LINES_MAX, SIMILAR_WORK_MAX,
};
use anchors::{anchor_keys, chosen, key_offsets, seek_line};
use measure::{align, fmax, line_score, LineKeys, PieceBits};

/// Windows start within this many lines of an anchor's alignment.
const SHIFT: usize = 2;
/// Windows have k−SIZE ..= k+SIZE lines.
const SIZE: usize = 2;
/// Half-width of the alignment band beyond |w−k|.
const BAND: usize = 3;

/// `run`, when given, is a part of OLD with at least that many
/// non-overlapping occurrences in `text` (found already).
pub(super) fn similar(
    text: &str,
    pieces: &[&str],
    ends_nl: bool,
    run: Option<(&str, usize)>,
    truncated: &mut bool,
) -> Vec<Hint> {
    similar_pruned(text, pieces, ends_nl, run, truncated, true)
}

/// [`similar`]; `prune` skips the alignments that cannot win, trying the
/// likeliest first (a test holds the answers equal to the plain loop's).
#[cfg_attr(as_edit_small, optimize(size))]
fn similar_pruned(
    text: &str,
    pieces: &[&str],
    ends_nl: bool,
    run: Option<(&str, usize)>,
    truncated: &mut bool,
    prune: bool,
) -> Vec<Hint> {
    let k = pieces.len();
    if k > SIMILAR_OLD_LINES_MAX {
        *truncated = true;
        return Vec::new();
    }
    // OLD's anchor keys, each with the pieces of OLD holding it; the
    // longest first (they tend to be the rarest), at most ANCHOR_KEYS_MAX.
    // Kept in that order while reading the pieces: a key pushed out by
    // longer ones never comes back, so each kept key was kept from its first
    // piece on.
    let mut keys_of_old: Vec<(&str, Vec<usize>)> = Vec::with_capacity(ANCHOR_KEYS_MAX + 1);
    for (j, p) in pieces.iter().enumerate() {
        for key in anchor_keys(p) {
            if let Some((_, js)) = keys_of_old.iter_mut().find(|(k, _)| *k == key) {
                if js.last() != Some(&j) {
                    js.push(j);
                }
                continue;
            }
            let at = keys_of_old.partition_point(|(k, _)| (key.len(), *k) < (k.len(), key));
            if at < ANCHOR_KEYS_MAX {
                keys_of_old.insert(at, (key, vec![j]));
                keys_of_old.truncate(ANCHOR_KEYS_MAX);
            }
        }
    }
    // Where each occurs (as a substring), counting no further than a key
    // that is too common to anchor: memmem is far cheaper than tokenizing.
    let b = text.as_bytes();
    let key_bytes: Vec<&[u8]> = keys_of_old.iter().map(|(key, _)| key.as_bytes()).collect();
    let floor = run.map(|(r, at_least)| (r.as_bytes(), at_least));
    let (offsets, ranges, counts) =
        key_offsets(b, &key_bytes, ANCHOR_LINES_MAX + 1, ANCHOR_LINES_MAX, floor);
    let mut anchors: Vec<(usize, &[usize])> = Vec::with_capacity(ANCHOR_LINES_MAX);
    for n in chosen(counts.into_iter().enumerate()).0 {
        let at = &offsets[ranges[n].clone()];
        if at.len() > ANCHOR_LINES_MAX {
            *truncated = true;
        }
        let js = keys_of_old[n].1.as_slice();
        anchors.extend(at.iter().take(ANCHOR_LINES_MAX).map(|&o| (o, js)));
    }
    anchors.sort_unstable_by_key(|a| a.0);
    // Byte offsets to line numbers in one forward pass, which goes on to
    // count the lines.
    // It also notes where each anchor's line starts, to find the wanted
    // lines from there.
    let mut bases: Vec<i64> = Vec::with_capacity(anchors.iter().map(|a| a.1.len()).sum());
    let mut marks: Vec<(usize, usize)> = Vec::with_capacity(anchors.len());
    let (mut line, mut counted) = (0usize, 0usize);
    for (o, js) in anchors {
        line += memchr::memchr_iter(b'\n', &b[counted..o]).count();
        counted = o;
        bases.extend(js.iter().map(|&j| line as i64 - j as i64));
        if marks.last().is_none_or(|m| m.0 < line) {
            marks.push((line, memchr::memrchr(b'\n', &b[..o]).map_or(0, |i| i + 1)));
        }
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
            off = seek_line(b, (line, off), lo, &marks);
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
    let mut old_keys = LineKeys::with_capacity(k, 0, false);
    for p in pieces {
        old_keys.push(p);
    }
    // Bit sets for every piece, or for none (then lines are sorted).
    let piece_bits: Option<Vec<PieceBits>> = (k * 2 * (1 << 14) / 8 <= PIECE_BITS_MAX)
        .then(|| (0..k).map(|j| PieceBits::of(old_keys.sorted(j))).collect())
        .flatten();
    // Keys are made when a line is first scored (the lines at a range's
    // edges may never be). A line of n bytes has fewer than
    // min(n, SIMILAR_LINE_CHARS) bigrams.
    let most = spans
        .iter()
        .map(|&(s, e)| (e - s).min(SIMILAR_LINE_CHARS))
        .sum();
    let mut keys = LineKeys::with_capacity(spans.len(), most, piece_bits.is_some());
    let mut key_of: Vec<Option<u32>> = vec![None; spans.len()];
    let mut last_keyed: Option<(usize, u32)> = None;
    // The index of a wanted line.
    let index = |l: usize| -> Option<usize> {
        let r = ranges
            .partition_point(|&(lo, _, _)| lo <= l)
            .checked_sub(1)?;
        let (lo, hi, first) = ranges[r];
        (l < hi).then(|| first + l - lo)
    };
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
    let mut cursor = 0; // see below: the range of the lowest new diagonal
    'bases: for &b in &bases {
        work += k * W;
        if work > SIMILAR_WORK_MAX {
            *truncated = true;
            break;
        }
        let first_new = scored_to.map_or(b - R as i64, |t| (t + 1).max(b - R as i64));
        for d in first_new..=b + R as i64 {
            let slot = d.rem_euclid(W as i64) as usize;
            // Diagonals ascend, so the range holding (or after) line d only
            // moves forward; the lines d + j are found from it.
            while cursor < ranges.len() && (ranges[cursor].1 as i64) <= d {
                cursor += 1;
            }
            let mut r = cursor;
            for j in 0..k {
                let line = d + j as i64;
                let at = usize::try_from(line).ok().and_then(|l| {
                    while r < ranges.len() && ranges[r].1 <= l {
                        r += 1;
                    }
                    let &(lo, _, first) = ranges.get(r)?;
                    (lo <= l).then(|| first + l - lo)
                });
                let sim = at.map_or(0.0, |i| {
                    let key = *key_of[i].get_or_insert_with(|| {
                        let bytes = text.as_bytes();
                        let line = &bytes[spans[i].0..spans[i].1];
                        // A line equal to the one keyed last shares its key.
                        if let Some((l, key)) = last_keyed {
                            if same_bytes(&bytes[spans[l].0..spans[l].1], line) {
                                return key;
                            }
                        }
                        keys.push(&text[spans[i].0..spans[i].1]);
                        let key = (keys.skel_hash.len() - 1) as u32;
                        last_keyed = Some((i, key));
                        key
                    });
                    let piece = (old_keys.skel_hash[j], old_keys.sorted(j));
                    let bits = piece_bits.as_ref().map(|b| &b[j]);
                    line_score(piece, bits, keys.get(key as usize))
                });
                mat[j * W + slot] = sim;
            }
        }
        scored_to = Some(b + R as i64);
        // The ring slot of diagonal b - R (offset 0 of this base).
        let ring0 = (b - R as i64).rem_euclid(W as i64) as usize;
        let mut top: Option<(f64, usize, usize)> = None;
        // The windows: starts within SHIFT of the base, sizes k-SIZE..=k+SIZE
        // (at least 1) that end in the text.
        let starts = (-(SHIFT as i64)..=SHIFT as i64)
            .filter_map(|ds| Some((ds, usize::try_from(b + ds).ok()?)));
        let sizes = k.saturating_sub(SIZE).max(1)..=k + SIZE;
        let cost = |w: usize| k * (2 * (BAND + w.abs_diff(k)) + 1);
        // (The plain loop is the tests' reference; the helper has only the
        // pruned one.)
        if prune || !cfg!(test) {
            // Charged up front what the windows one by one would charge (if
            // that passes the bound, the base is cut as it would be midway:
            // nothing of it kept).
            let charge: usize = starts
                .clone()
                .map(|(_, s)| {
                    sizes
                        .clone()
                        .filter(|&w| s + w <= n_lines)
                        .map(cost)
                        .sum::<usize>()
                })
                .sum();
            work += charge;
            if work > SIMILAR_WORK_MAX {
                *truncated = true;
                break 'bases;
            }
            // An alignment takes at most one score per piece and per line,
            // so it is at most min(k, w) and at most the sum of each piece's
            // best score here (added in the same order: float addition is
            // monotone, so both hold as computed). A window whose bound is
            // below SIMILAR_MIN or below the best so far cannot be kept or
            // win: it is not aligned. The likeliest sizes go first.
            let most: f64 = mat
                .chunks_exact(W)
                .map(|row| row.iter().copied().fold(0.0, fmax))
                .sum();
            for dw in 0..=SIZE {
                for (ds, s) in starts.clone() {
                    let ws = if dw == 0 {
                        [k, 0]
                    } else {
                        [k.wrapping_sub(dw), k + dw]
                    };
                    for w in ws {
                        if !sizes.contains(&w) || s + w > n_lines {
                            continue;
                        }
                        let bound = 2.0 * most.min(k.min(w) as f64) / (k + w) as f64;
                        if bound < SIMILAR_MIN || top.is_some_and(|t| bound < t.0) {
                            continue;
                        }
                        let band = BAND + w.abs_diff(k);
                        let a = align(&mat, ring0, ds, k, w, band, &mut row, &mut row_prev);
                        let score = 2.0 * a / (k + w) as f64;
                        // The order the reference loop ends with: the higher
                        // score, the size closest to OLD's, the earlier
                        // start, the smaller size.
                        let better = top.is_none_or(|(ts, tstart, tw)| {
                            score > ts
                                || (score == ts
                                    && (w.abs_diff(k), s, w) < (tw.abs_diff(k), tstart, tw))
                        });
                        if better {
                            top = Some((score, s, w));
                        }
                    }
                }
            }
        } else {
            for (ds, s) in starts {
                for w in sizes.clone() {
                    if s + w > n_lines {
                        break;
                    }
                    let band = BAND + w.abs_diff(k);
                    work += cost(w);
                    if work > SIMILAR_WORK_MAX {
                        *truncated = true;
                        break 'bases;
                    }
                    let a = align(&mat, ring0, ds, k, w, band, &mut row, &mut row_prev);
                    let score = 2.0 * a / (k + w) as f64;
                    // Ties: the size closest to OLD's, then the earlier start.
                    let better = top.is_none_or(|(ts, tstart, tw)| {
                        score > ts || (score == ts && (w.abs_diff(k), s) < (tw.abs_diff(k), tstart))
                    });
                    if better {
                        top = Some((score, s, w));
                    }
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
        // Blank lines matched to OLD's blank lines, and nothing else: no
        // sign of where OLD's text is.
        if text[spans[first].0..spans[last].1].trim().is_empty() {
            continue;
        }
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
    use proptest::prelude::*;
    proptest! {
        #![proptest_config(ProptestConfig { cases: 500, ..ProptestConfig::default() })]

        #[test]
        fn pruning_changes_no_answer(
            lines in proptest::collection::vec("[ab(_ ]{0,12}", 1..60),
            start in 0usize..60,
            len in 1usize..6,
            edit in "[ab(_ ]{0,4}",
        ) {
            // OLD: some of the text's lines with one changed, so windows
            // score all over the range.
            let text = lines.join("\n");
            let start = start % lines.len();
            let mut old: Vec<String> = lines[start..(start + len).min(lines.len())].to_vec();
            old[0].push_str(&edit);
            let pieces: Vec<&str> = old.iter().map(String::as_str).collect();
            let (mut t1, mut t2) = (false, false);
            let pruned = similar_pruned(&text, &pieces, false, None, &mut t1, true);
            let full = similar_pruned(&text, &pieces, false, None, &mut t2, false);
            prop_assert_eq!(pruned, full);
            prop_assert_eq!(t1, t2);
        }

    }

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
    fn pruning_changes_no_answer_when_work_runs_out() {
        // Many bases of a long OLD: the work bound cuts the search midway,
        // at the same base with and without pruning.
        let text: String = (0..3000)
            .map(|i| format!("let v{} = f(a{}, b{});\n", i % 50, i % 7, i % 11))
            .collect();
        let old: Vec<String> = (0..400)
            .map(|i| format!("let v{} = f(a{}, b{});", i % 50, i % 7, (i + 1) % 11))
            .collect();
        let pieces: Vec<&str> = old.iter().map(String::as_str).collect();
        let (mut t1, mut t2) = (false, false);
        let pruned = similar_pruned(&text, &pieces, false, None, &mut t1, true);
        let full = similar_pruned(&text, &pieces, false, None, &mut t2, false);
        assert!(t2, "the work bound is reached");
        assert_eq!((pruned, t1), (full, t2));
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
