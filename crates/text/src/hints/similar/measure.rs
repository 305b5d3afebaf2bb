//! The similarity measure of `similar`: a line's key (the hash of its
//! skeleton and its character bigrams), the score of two lines, and a
//! window's score as the banded alignment of OLD's pieces to its lines.

use super::super::exact::skeleton_chars;
use super::super::{SIMILAR_LINE_CHARS, SIMILAR_MIN};
use super::{BAND, SHIFT, SIZE};

/// Line keys, stored flat (no allocation per line): for key `i`, a hash of
/// the line's whole skeleton (for equality) and the character bigrams of
/// its start (its first [`SIMILAR_LINE_CHARS`] characters: a minified line
/// stays cheap), as codes `(first << 16) | second`. Sorted, or for an ASCII
/// line when the pieces have bit sets ([`PieceBits`]) split instead: each
/// code's first occurrence in `codes`, the later ones in `more` as their
/// rank (2 for the second, ...) << 14 | their [`ascii_bit`], in line order
/// (4 bytes each, as a code: the memory bound stays that of sorted keys).
pub(super) struct LineKeys {
    pub(super) skel_hash: Vec<u64>,
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
pub(super) enum Codes<'a> {
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
    pub(super) fn with_capacity(lines: usize, codes: usize, split: bool) -> LineKeys {
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
    pub(super) fn push(&mut self, s: &str) {
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

    pub(super) fn get(&self, i: usize) -> (u64, Codes<'_>) {
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
    pub(super) fn sorted(&self, i: usize) -> &[u32] {
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
pub(super) fn align(
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
pub(super) fn fmax(a: f64, b: f64) -> f64 {
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
pub(super) struct PieceBits {
    /// The codes held once or more (the first 256 words), twice or more
    /// (the next 256).
    sets: Vec<u64>,
    /// The codes held three times or more, as (bit, count), by code.
    thrice: Vec<(u32, u32)>,
}

impl PieceBits {
    pub(super) fn of(sorted: &[u32]) -> Option<PieceBits> {
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
pub(super) fn line_score(a: (u64, &[u32]), a_bits: Option<&PieceBits>, b: (u64, Codes<'_>)) -> f64 {
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

#[cfg(test)]
mod tests {
    use super::*;
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

    }
}
