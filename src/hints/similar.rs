//! `similar`: the line-level similarity search and its bounds (the design
//! note of [`super`] defines the score, the anchors and the bounds).

use memchr::memmem;

use super::exact::{has_border, same_bytes, skeleton_chars};
use super::{
    make_hint, Hint, Kind, ANCHOR_KEYS_MAX, ANCHOR_LINES_MAX, MAX_HINTS, PIECE_BITS_MAX,
    SIMILAR_LINES_MAX, SIMILAR_LINE_CHARS, SIMILAR_MIN, SIMILAR_OLD_LINES_MAX, SIMILAR_WORK_MAX,
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
/// the line's whole skeleton (for equality) and the character bigrams of
/// its start (its first [`SIMILAR_LINE_CHARS`] characters: a minified line
/// stays cheap), as codes `(first << 16) | second`. Sorted, or for an ASCII
/// line when the pieces have bit sets ([`PieceBits`]) split instead: each
/// code's first occurrence in `codes`, the later ones in `more` as their
/// rank (2 for the second, ...) << 14 | their [`ascii_bit`], in line order
/// (4 bytes each, as a code: the memory bound stays that of sorted keys).
struct LineKeys {
    skel_hash: Vec<u64>,
    /// Per key: the end of its codes, the end of its repeats, and whether
    /// it is split.
    ends: Vec<(usize, usize, bool)>,
    codes: Vec<u32>,
    more: Vec<u32>,
    /// Whether ASCII lines are split.
    split: bool,
    /// Scratch for sorting.
    sorting: Vec<u32>,
    /// Scratch for splitting: occurrences so far of each ASCII code.
    seen: Vec<u8>,
}

/// A line key's bigrams: sorted, or split (see [`LineKeys`]).
#[derive(Clone, Copy)]
enum Codes<'a> {
    Sorted(&'a [u32]),
    Split(&'a [u32], &'a [u32]),
}

impl Codes<'_> {
    fn len(&self) -> usize {
        match self {
            Codes::Sorted(c) => c.len(),
            Codes::Split(first, more) => first.len() + more.len(),
        }
    }
}

impl LineKeys {
    fn with_capacity(lines: usize, codes: usize, split: bool) -> LineKeys {
        LineKeys {
            skel_hash: Vec::with_capacity(lines),
            ends: Vec::with_capacity(lines),
            codes: Vec::with_capacity(codes),
            more: Vec::new(),
            split,
            sorting: Vec::new(),
            seen: if split { vec![0; 1 << 14] } else { Vec::new() },
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
        let mut split = false;
        if s.is_ascii() {
            // The skeleton of ASCII text drops the ASCII whitespace (tab,
            // LF, VT, FF, CR and space, as `char::is_whitespace` does) and
            // maps nothing. It is taken CHUNK characters at a time.
            const CHUNK: usize = 64;
            let mut chunk = [0u8; CHUNK];
            let mut wide = [0u8; 4 * CHUNK];
            let (mut m, mut taken, mut prev) = (0usize, 0usize, 0u32);
            let mut flush = |chunk: &[u8], codes: &mut Vec<u32>| {
                for (w, &c) in wide.chunks_exact_mut(4).zip(chunk) {
                    w[0] = c;
                }
                h.write(&wide[..4 * chunk.len()]);
                for &c in &chunk[..chunk.len().min(SIMILAR_LINE_CHARS - taken)] {
                    if taken > 0 {
                        codes.push((prev << 16) | u32::from(c));
                    }
                    prev = u32::from(c);
                    taken += 1;
                }
            };
            for &b in s.as_bytes() {
                // Written always, kept unless whitespace: no branch.
                chunk[m] = b;
                m += usize::from(b != b' ' && !(9..=13).contains(&b));
                if m == CHUNK {
                    flush(&chunk[..m], &mut self.codes);
                    m = 0;
                }
            }
            flush(&chunk[..m], &mut self.codes);
            if self.split {
                split = true;
                // Keep first occurrences in place, move the rest to `more`.
                let mut kept = start;
                for at in start..self.codes.len() {
                    let code = self.codes[at];
                    let bit = ascii_bit(code).expect("an ASCII line's code");
                    self.seen[bit] += 1;
                    match self.seen[bit] {
                        1 => {
                            self.codes[kept] = code;
                            kept += 1;
                        }
                        rank => self.more.push((u32::from(rank) << 14) | bit as u32),
                    }
                }
                self.codes.truncate(kept);
                for &code in &self.codes[start..] {
                    self.seen[ascii_bit(code).expect("an ASCII line's code")] = 0;
                }
            } else {
                sort_ascii_codes(&mut self.codes[start..], &mut self.sorting);
            }
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
            self.codes[start..].sort_unstable();
        }
        self.skel_hash.push(h.finish());
        self.ends.push((self.codes.len(), self.more.len(), split));
    }

    fn get(&self, i: usize) -> (u64, Codes<'_>) {
        let (from, more_from) = match i.checked_sub(1) {
            Some(p) => (self.ends[p].0, self.ends[p].1),
            None => (0, 0),
        };
        let (to, more_to, split) = self.ends[i];
        let codes = &self.codes[from..to];
        let codes = if split {
            Codes::Split(codes, &self.more[more_from..more_to])
        } else {
            Codes::Sorted(codes)
        };
        (self.skel_hash[i], codes)
    }

    /// The sorted codes of a key that is not split.
    fn sorted(&self, i: usize) -> &[u32] {
        match self.get(i).1 {
            Codes::Sorted(c) => c,
            Codes::Split(..) => unreachable!("pieces are not split"),
        }
    }
}

/// The weighted LCS of pieces 0..k against the w lines starting `ds` after
/// the base, in a band of `band` around the diagonal (row j: piece j-1;
/// column i: line i-1 of the window). `mat` holds the base's line scores by
/// diagonal, piece j's at `j * W`, the base's first diagonal at slot
/// `ring0`. Left of the band a row is 0; of it only the cell just left of
/// the band is read, so only that one is set.
#[allow(clippy::too_many_arguments)]
fn align(
    mat: &[f64],
    ring0: usize,
    ds: i64,
    k: usize,
    w: usize,
    band: usize,
    row: &mut Vec<f64>,
    row_prev: &mut Vec<f64>,
) -> f64 {
    const R: usize = SHIFT + BAND + SIZE;
    const W: usize = 2 * R + 1;
    row_prev.clear();
    row_prev.resize(w + 1, 0.0);
    row.resize(w + 1, 0.0);
    for j in 1..=k {
        let lo = j.saturating_sub(band).max(1);
        let hi = (j + band).min(w);
        row[lo - 1] = 0.0;
        let scores = &mat[(j - 1) * W..j * W];
        for i in lo..=hi {
            // line - (base + piece) = ds + (i - j), within ±R.
            let off = (ds + i as i64 - j as i64 + R as i64) as usize;
            let slot = if ring0 + off >= W {
                ring0 + off - W
            } else {
                ring0 + off
            };
            let diag = row_prev[i - 1] + scores[slot];
            row[i] = fmax(fmax(diag, row_prev[i]), row[i - 1]);
        }
        // Right of the band the row's best carries forward.
        for i in hi + 1..=w {
            row[i] = fmax(row[i - 1], row_prev[i]);
        }
        std::mem::swap(row, row_prev);
    }
    row_prev[w]
}

/// `a.max(b)` for the alignment's scores, which are never NaN (so without
/// `f64::max`'s NaN handling: the same value).
fn fmax(a: f64, b: f64) -> f64 {
    if a >= b {
        a
    } else {
        b
    }
}

/// The size of the multiset intersection of two sorted code lists.
fn common_by_merge(x: &[u32], y: &[u32]) -> usize {
    // Without branches on the data (they mispredict about one step in
    // three): each step advances the smaller side, or both.
    let (mut i, mut j, mut common) = (0, 0, 0usize);
    while i < x.len() && j < y.len() {
        let (p, q) = (x[i], y[j]);
        common += usize::from(p == q);
        i += usize::from(p <= q);
        j += usize::from(p >= q);
    }
    common
}

/// [`common_by_merge`] of a piece (its bit sets) and a split line: a bit
/// test per first occurrence, independent steps rather than the merge's
/// chain of dependent ones; a later occurrence of rank r counts when the
/// piece holds the code r times or more.
fn common_by_bits(bits: &PieceBits, first: &[u32], more: &[u32]) -> usize {
    let mut common = 0;
    for &code in first {
        common += has(
            &bits.sets[..WORDS],
            ascii_bit(code).expect("split codes are ASCII"),
        );
    }
    for &m in more {
        let (bit, rank) = ((m & 0x3FFF) as usize, m >> 14);
        common += if rank == 2 {
            has(&bits.sets[WORDS..], bit)
        } else {
            let held = bits
                .thrice
                .iter()
                .find(|t| t.0 as usize == bit)
                .map_or(0, |t| t.1);
            usize::from(held >= rank)
        };
    }
    common
}

/// Sorts the bigram codes of ASCII characters (both halves below 128) in
/// two counting passes, a half at a time: for a line's few dozen codes,
/// cheaper than a comparison sort, and the same order.
fn sort_ascii_codes(v: &mut [u32], tmp: &mut Vec<u32>) {
    if v.len() < 2 {
        return;
    }
    tmp.clear();
    tmp.resize(v.len(), 0);
    fn pass(from: &[u32], to: &mut [u32], shift: u32) {
        let mut at = [0u16; 128];
        for &x in from {
            at[(x >> shift) as usize & 0x7F] += 1;
        }
        let mut sum = 0u16;
        for a in at.iter_mut() {
            let c = *a;
            *a = sum;
            sum += c;
        }
        for &x in from {
            let d = (x >> shift) as usize & 0x7F;
            to[usize::from(at[d])] = x;
            at[d] += 1;
        }
    }
    pass(v, tmp, 0);
    pass(tmp, v, 16);
}

/// The bit of an ASCII bigram code (both characters below 128) in a
/// 16384-bit set, if it is one.
fn ascii_bit(code: u32) -> Option<usize> {
    (code & 0xFF80_FF80 == 0).then_some((((code >> 16) << 7) | (code & 0x7F)) as usize)
}

/// A piece's bigrams as bit sets, when all are ASCII: the codes it holds
/// once or more, and twice or more.
struct PieceBits {
    /// The codes held once or more (the first 256 words), twice or more
    /// (the next 256).
    sets: Vec<u64>,
    /// The codes held three times or more, as (bit, count), by code.
    thrice: Vec<(u32, u32)>,
}

impl PieceBits {
    fn of(sorted: &[u32]) -> Option<PieceBits> {
        let mut bits = PieceBits {
            sets: vec![0; 2 * WORDS],
            thrice: Vec::new(),
        };
        for run in sorted.chunk_by(|a, b| a == b) {
            let b = ascii_bit(run[0])?;
            bits.sets[b >> 6] |= 1 << (b & 63);
            if run.len() >= 2 {
                bits.sets[WORDS + (b >> 6)] |= 1 << (b & 63);
            }
            if run.len() >= 3 {
                bits.thrice.push((b as u32, run.len() as u32));
            }
        }
        Some(bits)
    }
}

/// Words in a set of the 16384 ASCII bigram codes.
const WORDS: usize = (1 << 14) / 64;

fn has(set: &[u64], bit: usize) -> usize {
    ((set[bit >> 6] >> (bit & 63)) & 1) as usize
}

/// The line score as the alignment uses it: 1 when the skeletons are equal
/// (by hash), else the Dice coefficient of the bigram multisets, and 0 when
/// that is below [`SIMILAR_MIN`] (so lines too different in length need no
/// count). `a` is OLD's piece (sorted codes), with its bit sets when it has
/// them (a split line needs them); `b` the file's line.
fn line_score(a: (u64, &[u32]), a_bits: Option<&PieceBits>, b: (u64, Codes<'_>)) -> f64 {
    if a.0 == b.0 {
        return 1.0;
    }
    let x = a.1;
    let y_len = b.1.len();
    if x.is_empty() || y_len == 0 {
        return 0.0;
    }
    let total = x.len() + y_len;
    // 2c / total >= 0.5 needs 4c >= total (exact in integers).
    let need = total.div_ceil(4);
    if x.len().min(y_len) < need {
        return 0.0;
    }
    let common = match b.1 {
        Codes::Sorted(y) => common_by_merge(x, y),
        Codes::Split(first, more) => {
            let bits = a_bits.expect("a line is split only when every piece has bit sets");
            common_by_bits(bits, first, more)
        }
    };
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

/// The keys that anchor, from (key, number of offsets) pairs: those with
/// offsets, rarest first (ties in key order, so the answer is
/// deterministic); the first always, then each while all their offsets
/// still fit in [`ANCHOR_LINES_MAX`] (more common keys add little: the
/// rarest carry the signal). Also the first key that did not fit, as
/// (count, key): no key after it in that order counts.
fn chosen(counts: impl Iterator<Item = (usize, usize)>) -> (Vec<usize>, Option<(usize, usize)>) {
    chosen_within(counts, ANCHOR_LINES_MAX)
}

/// [`chosen`] with `max` anchors (tests use small ones).
fn chosen_within(
    counts: impl Iterator<Item = (usize, usize)>,
    max: usize,
) -> (Vec<usize>, Option<(usize, usize)>) {
    let mut order: Vec<(usize, usize)> = Vec::new();
    for (n, c) in counts {
        insert_sorted(&mut order, (c, n));
    }
    let mut keys = Vec::new();
    let misfit = walk_chosen(&order, max, |n| keys.push(n));
    (keys, misfit)
}

/// Inserts `x` into the sorted `v` (a few dozen keys: no sort needed).
fn insert_sorted(v: &mut Vec<(usize, usize)>, x: (usize, usize)) {
    let at = v.partition_point(|&y| y < x);
    v.insert(at, x);
}

/// [`chosen_within`] over (count, key) pairs already in order: calls
/// `take` with each chosen key and returns the first that did not fit.
fn walk_chosen(
    order: &[(usize, usize)],
    max: usize,
    mut take: impl FnMut(usize),
) -> Option<(usize, usize)> {
    let (mut taken, mut anchors) = (false, 0);
    for &(count, n) in order.iter().filter(|c| c.0 > 0) {
        if taken && anchors + count > max {
            return Some((count, n));
        }
        anchors += count.min(max);
        taken = true;
        take(n);
    }
    None
}

/// For each key, its offsets in `b` as `memmem::find_iter(b, key)
/// .take(cap)` yields them (non-overlapping, left to right), as ranges of
/// one flat vector; the keys that cannot anchor are cut short. Two savings,
/// each a pass over the text per key:
/// - a key holding a shorter key whose scan ended before the cap is not
///   scanned for: it occurs only where that one does, at a fixed distance,
///   and each of those places is checked (`value_301` after `301`). The
///   scan skips occurrences that overlap the one before (`303` at 2 in
///   `30303`); those start within the one before it, so for a key with a
///   border (a prefix that is also its suffix) each place up to its length
///   after a found one is checked too;
/// - once the keys known so far have a first key that does not fit (see
///   [`chosen`]), a key whose count would sort it after that one cannot
///   anchor (keys found later only add before it), so its scan stops at
///   that count instead of at `cap`; and it is not scanned at all when it
///   lies inside `floor`, a string with at least that many non-overlapping
///   occurrences (each holds one of the key's, and those do not overlap
///   either): its count is then given as that many, with no offsets.
///
/// So [`chosen`] picks the same keys with the same offsets as from one
/// full scan per key (a property test holds them equal). Returns the
/// offsets, each key's range of them, and each key's count.
fn key_offsets(
    b: &[u8],
    keys: &[&[u8]],
    cap: usize,
    max: usize,
    floor: Option<(&[u8], usize)>,
) -> (Vec<usize>, Vec<std::ops::Range<usize>>, Vec<usize>) {
    let n = keys.len();
    let mut flat: Vec<usize> = Vec::with_capacity(n * cap);
    let mut ranges = vec![0..0; n];
    let mut counts = vec![0; n];
    // Shorter keys first: they are the ones longer keys hold.
    let mut order: Vec<(usize, usize)> = Vec::with_capacity(n);
    for (i, k) in keys.iter().enumerate() {
        insert_sorted(&mut order, (k.len(), i));
    }
    // The keys whose offsets are all known (up to `cap`), with their
    // counts; and of those, the ones whose scan reached the end.
    // (count, key), kept in order.
    let mut known: Vec<(usize, usize)> = Vec::with_capacity(n);
    let mut complete: Vec<usize> = Vec::new();
    for (_, i) in order {
        let key = keys[i];
        // Past this many, the key sorts after the first that does not fit.
        let stop = match walk_chosen(&known, max, |_| {}) {
            Some((count, j)) => (count + usize::from(i < j)).min(cap),
            None => cap,
        };
        let from = flat.len();
        if stop < cap {
            if let Some((outer, at_least)) = floor {
                if at_least >= stop && memmem::find(outer, key).is_some() {
                    ranges[i] = from..from;
                    counts[i] = stop;
                    continue;
                }
            }
        }
        // The known key inside this one with the fewest occurrences.
        let inner = complete
            .iter()
            .filter(|&&j| keys[j].len() < key.len())
            .filter_map(|&j| memmem::find(key, keys[j]).map(|at| (ranges[j].len(), j, at)))
            .min();
        match inner {
            Some((_, j, at)) => {
                let within = if has_border(keys[j]) {
                    keys[j].len()
                } else {
                    1
                };
                for t in ranges[j].clone() {
                    let q = flat[t];
                    for p in q..q + within {
                        push_if_at(b, key, p.checked_sub(at), stop, from, &mut flat);
                    }
                }
            }
            None => flat.extend(memmem::find_iter(b, key).take(stop)),
        }
        ranges[i] = from..flat.len();
        let count = flat.len() - from;
        counts[i] = count;
        if count < stop || stop == cap {
            insert_sorted(&mut known, (count, i));
            if count < stop {
                complete.push(i);
            }
        }
    }
    (flat, ranges, counts)
}

/// Appends `p` when `key` occurs there, does not overlap the last offset
/// appended since `from`, and fewer than `cap` are appended: the candidates
/// come left to right, so this keeps what memmem's `find_iter` finds.
fn push_if_at(
    b: &[u8],
    key: &[u8],
    p: Option<usize>,
    cap: usize,
    from: usize,
    flat: &mut Vec<usize>,
) {
    let Some(p) = p else { return };
    if flat.len() - from >= cap
        || flat[from..]
            .last()
            .is_some_and(|&last| p < last + key.len())
    {
        return;
    }
    if b.get(p..p + key.len()) == Some(key) {
        flat.push(p);
    }
}

/// The start of line `target`, from line `at.0` starting at `at.1` (before
/// it) and `marks`, (line, start) pairs in line order: walks back from the
/// first mark at or after the target when that is nearer, else counts
/// forward. The end of `b` when the text has fewer lines.
fn seek_line(b: &[u8], at: (usize, usize), target: usize, marks: &[(usize, usize)]) -> usize {
    let next = marks.partition_point(|m| m.0 < target);
    if let Some(&(line, mut start)) = marks.get(next) {
        if line - target < target - at.0 {
            for _ in target..line {
                start = memchr::memrchr(b'\n', &b[..start - 1]).map_or(0, |i| i + 1);
            }
            return start;
        }
    }
    skip_lines(b, at.1, target - at.0)
}

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
        // sign of where OLD's text is (issue 23 item 9).
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

    /// The line key as first written (skeleton characters one at a time,
    /// hashed per character, bigrams sorted by comparison): the reference
    /// the fast path must equal.
    fn reference_key(s: &str) -> (u64, Vec<u32>) {
        use std::hash::Hasher;
        let mut h = std::collections::hash_map::DefaultHasher::new();
        for c in skeleton_chars(s) {
            h.write_u32(c as u32);
        }
        let cs: Vec<u32> = skeleton_chars(s)
            .take(SIMILAR_LINE_CHARS)
            .map(|c| c as u32 & 0xFFFF)
            .collect();
        let mut v: Vec<u32> = cs.windows(2).map(|w| (w[0] << 16) | w[1]).collect();
        v.sort_unstable();
        (h.finish(), v)
    }

    /// The line similarity as first written (no early exits), thresholded
    /// as the alignment uses it.
    fn reference_score(a: &(u64, Vec<u32>), b: &(u64, Vec<u32>)) -> f64 {
        if a.0 == b.0 {
            return 1.0;
        }
        let (x, y) = (&a.1, &b.1);
        if x.is_empty() || y.is_empty() {
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
                }
            }
        }
        let sim = 2.0 * common as f64 / (x.len() + y.len()) as f64;
        if sim >= SIMILAR_MIN {
            sim
        } else {
            0.0
        }
    }

    fn keys_of(lines: &[&str], split: bool) -> LineKeys {
        let mut keys = LineKeys::with_capacity(lines.len(), 0, split);
        for l in lines {
            keys.push(l);
        }
        keys
    }

    /// A key's hash and codes, sorted (a split key's first occurrences and
    /// repeats together), checking a split key's ranks on the way.
    fn flat(key: (u64, Codes<'_>)) -> (u64, Vec<u32>) {
        let mut all = match key.1 {
            Codes::Sorted(c) => c.to_vec(),
            Codes::Split(first, more) => {
                let mut seen = std::collections::HashMap::new();
                for &c in first {
                    assert_eq!(seen.insert(c, 1), None, "a first occurrence");
                }
                let mut all = first.to_vec();
                for &m in more {
                    let (bit, rank) = (m & 0x3FFF, m >> 14);
                    let c = ((bit >> 7) << 16) | (bit & 0x7F);
                    let n = seen.get_mut(&c).expect("a repeat after its first");
                    *n += 1;
                    assert_eq!(*n, rank);
                    all.push(c);
                }
                all
            }
        };
        all.sort_unstable();
        (key.0, all)
    }

    fn score(keys: &LineKeys, bits: Option<&PieceBits>, lines: &LineKeys) -> f64 {
        line_score((keys.skel_hash[0], keys.sorted(0)), bits, lines.get(1))
    }

    #[test]
    fn line_keys_equal_the_reference() {
        let long = "v1=compute(alpha1,beta1); ".repeat(40);
        let lines = [
            "",
            " ",
            "a",
            "ab",
            "\t\x0b\x0c\r x y\u{1c}",
            "    let value_301 = compute_10(alpha.field_2, beta + 301)?; // step 301",
            long.as_str(),
            &"x".repeat(255),
            &"x".repeat(256),
            &"y".repeat(257),
            &"z ".repeat(300),
            &"a".repeat(64),
            &"a ".repeat(64),
            "say(\u{201c}hi\u{201d} \u{2014} ok\u{2026})\u{a0}x\u{200b}y",
            "\u{1F600}\u{1F601} smile",
        ];
        for split in [false, true] {
            let keys = keys_of(&lines, split);
            for (i, l) in lines.iter().enumerate() {
                assert_eq!(flat(keys.get(i)), reference_key(l), "{l:?}");
            }
        }
    }

    fn line() -> impl Strategy<Value = String> {
        proptest::collection::vec(
            prop_oneof![
                Just(' '),
                Just('\t'),
                Just('\x0b'),
                Just('a'),
                Just('b'),
                Just('_'),
                Just('('),
                Just('\u{2019}'),
                Just('\u{200b}'),
                Just('\u{e9}'),
            ],
            0..300,
        )
        .prop_map(|v| v.into_iter().collect())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 500, ..ProptestConfig::default() })]

        #[test]
        fn line_keys_and_scores_equal_the_reference(a in line(), b in line()) {
            let (ra, rb) = (reference_key(&a), reference_key(&b));
            let want = reference_score(&ra, &rb);
            let pieces = keys_of(&[&a], false);
            prop_assert_eq!(flat(pieces.get(0)), ra);
            let bits = PieceBits::of(pieces.sorted(0));
            for split in [false, true] {
                let lines = keys_of(&[&a, &b], split);
                prop_assert_eq!(flat(lines.get(1)), rb.clone());
                if matches!(lines.get(1).1, Codes::Sorted(_)) {
                    prop_assert_eq!(score(&pieces, None, &lines), want);
                }
                if bits.is_some() {
                    prop_assert_eq!(score(&pieces, bits.as_ref(), &lines), want);
                }
            }
        }

        #[test]
        fn ascii_scores_equal_the_reference(a in "[ab_( \t]{0,300}", b in "[ab_( \t]{0,300}") {
            // Few distinct characters: repeated bigrams on both sides.
            let (ra, rb) = (reference_key(&a), reference_key(&b));
            let pieces = keys_of(&[&a], false);
            let bits = PieceBits::of(pieces.sorted(0));
            prop_assert!(bits.is_some());
            let lines = keys_of(&[&a, &b], true);
            prop_assert!(matches!(lines.get(1).1, Codes::Split(..)));
            prop_assert_eq!(flat(lines.get(1)), rb.clone());
            prop_assert_eq!(score(&pieces, bits.as_ref(), &lines), reference_score(&ra, &rb));
            let sorted = keys_of(&[&a, &b], false);
            prop_assert_eq!(score(&pieces, None, &sorted), reference_score(&ra, &rb));
        }

        #[test]
        fn key_offsets_choose_as_one_scan_per_key(
            text in "[ab_1\n]{0,400}",
            keys in proptest::collection::vec("[ab_1]{1,6}", 1..10),
            cap in 1usize..40,
            max in 1usize..60,
            floor in any::<bool>(),
        ) {
            // Keys holding one another, some with borders (aba, aaa).
            let mut keys = keys;
            let extra: Vec<String> = keys.iter().map(|k| format!("{k}{k}b")).collect();
            keys.extend(extra);
            let key_bytes: Vec<&[u8]> = keys.iter().map(|k| k.as_bytes()).collect();
            // A string holding some keys (one of the longer ones), with its
            // count as their floor.
            let outer = keys[keys.len() - 1].clone();
            let at_least = memmem::find_iter(text.as_bytes(), outer.as_bytes()).count();
            let floor = floor.then_some((outer.as_bytes(), at_least));
            let (flat, ranges, counts) = key_offsets(text.as_bytes(), &key_bytes, cap, max, floor);
            let scans: Vec<Vec<usize>> = keys
                .iter()
                .map(|k| memmem::find_iter(text.as_bytes(), k.as_bytes()).take(cap).collect())
                .collect();
            // Each key's offsets are the scan's first ones.
            for (r, scan) in ranges.iter().zip(&scans) {
                prop_assert!(scan.starts_with(&flat[r.clone()]));
            }
            // The same keys anchor, with all their offsets.
            let fast = chosen_within(counts.iter().copied().enumerate(), max).0;
            let full = chosen_within(scans.iter().map(|s| s.len()).enumerate(), max).0;
            prop_assert_eq!(&fast, &full);
            for i in fast {
                prop_assert_eq!(&flat[ranges[i].clone()], scans[i].as_slice(), "{:?}", &keys[i]);
            }
        }

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

        #[test]
        fn seek_line_equals_counting_forward(text in "[a\n]{0,3000}", from in 0usize..200, target in 0usize..400, picks in proptest::collection::vec(0usize..400, 0..20)) {
            let b = text.as_bytes();
            let starts: Vec<usize> = std::iter::once(0).chain(memchr::memchr_iter(b'\n', b).map(|i| i + 1)).collect();
            prop_assume!(from < target && from < starts.len());
            // Marks: true line starts of some lines, in order.
            let mut picks: Vec<usize> = picks.into_iter().filter(|&l| l < starts.len()).collect();
            picks.sort_unstable();
            picks.dedup();
            let marks: Vec<(usize, usize)> = picks.iter().map(|&l| (l, starts[l])).collect();
            let want = skip_lines(b, starts[from], target - from);
            prop_assert_eq!(seek_line(b, (from, starts[from]), target, &marks), want);
        }

        #[test]
        fn skip_lines_equals_one_newline_at_a_time(text in "[a\n]{0,5000}", off in 0usize..5000, n in 1usize..3000) {
            let b = text.as_bytes();
            let off = off.min(b.len());
            let want = memchr::memchr_iter(b'\n', &b[off..]).nth(n - 1).map_or(b.len(), |i| off + i + 1);
            prop_assert_eq!(skip_lines(b, off, n), want);
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
