//! A line's keys, one per grade, and a table of the patch lines that can
//! start a match: pure. So that many chunks cost the file's lines plus the
//! patch, not their product, each file line is hashed once per
//! grade and looked up among the patch lines' keys, and compared only with
//! the patterns whose anchor line (the first, or the rarest in the text:
//! [`Counts`]) has one of its keys.
//!
//! A grade's key is a hash of the text as that grade compares it
//! (`find.rs`'s `order`): the bytes; the text without trailing whitespace;
//! trimmed; trimmed with the Unicode punctuation mapped to ASCII. Lines that
//! match at a grade have equal keys at it, so a lookup of every key of a
//! line finds every pattern it can start (equal keys that do not match cost
//! a comparison, nothing more). A line not UTF-8 matches only exactly, as
//! in `best`. Keys equal to the previous grade's form are given once.
//!
//! Held: four keys and a step per patch line indexed, and one line's
//! mapped text; the counts, a key and a count per distinct key.

use super::find::ascii;
use super::locate::Grade;

/// The keys of lines, with the buffer of the punctuation grade's text.
#[derive(Default)]
pub(super) struct Keys {
    buf: Vec<u8>,
}

/// A line's distinct keys, up to four.
pub(super) type Set = ([u64; 4], usize);

impl Keys {
    /// The distinct keys of `l` at the grades up to `max`.
    #[cfg_attr(as_edit_small, optimize(size))]
    pub(super) fn of(&mut self, l: &[u8], max: Grade) -> Set {
        let mut set = ([hash(l), 0, 0, 0], 1);
        let Some(s) = (max > Grade::Exact)
            .then(|| std::str::from_utf8(l).ok())
            .flatten()
        else {
            return set;
        };
        let mut put = |k: u64| {
            set.0[set.1] = k;
            set.1 += 1;
        };
        let end = s.trim_end();
        if end.len() != s.len() {
            put(hash(end.as_bytes()));
        }
        if max == Grade::TrailingWhitespace {
            return set;
        }
        let t = end.trim_start();
        if t.len() != end.len() {
            put(hash(t.as_bytes()));
        }
        if max == Grade::Whitespace || t.is_ascii() {
            // ASCII maps to itself: the trimmed text's key.
            return set;
        }
        self.buf.clear();
        let mut c = [0; 4];
        for ch in t.chars().map(ascii) {
            self.buf
                .extend_from_slice(ch.encode_utf8(&mut c).as_bytes());
        }
        if self.buf != t.as_bytes() {
            put(hash(&self.buf));
        }
        set
    }
}

/// The text's hash (a multiply-rotate over 8-byte words): equal texts,
/// equal keys; a collision costs a comparison.
#[inline]
fn hash(b: &[u8]) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut h = (b.len() as u64).wrapping_mul(K);
    let mut words = b.chunks_exact(8);
    for w in &mut words {
        let w = u64::from_le_bytes(w.try_into().expect("8 bytes"));
        h = (h ^ w).wrapping_mul(K).rotate_left(27);
    }
    let mut t = [0; 8];
    t[..words.remainder().len()].copy_from_slice(words.remainder());
    h = (h ^ u64::from_le_bytes(t)).wrapping_mul(K);
    h ^ (h >> 29)
}

/// Patterns by the keys of their first line: an open-addressed hash
/// table (a key may map to several patterns), at most half full.
#[derive(Default)]
pub(super) struct Table {
    /// (key, pattern); `EMPTY` for a free slot.
    slots: Vec<(u64, u32)>,
    len: usize,
    /// 64 minus the slots' bits: a key's slot is its top bits.
    shift: u32,
}

const EMPTY: u32 = u32::MAX;

impl Table {
    /// Each `(i, f)`: pattern `i` can start at a line matching `f` (its
    /// anchor; a pattern may have several).
    #[cfg_attr(as_edit_small, optimize(size))]
    pub(super) fn new<'a>(firsts: impl Iterator<Item = (usize, &'a str)>, max: Grade) -> Table {
        let (mut t, mut k) = (Table::default(), Keys::default());
        for (i, f) in firsts {
            t.insert(&mut k, f, i, max);
        }
        t
    }

    /// Adds pattern `i`, whose first line is `f`.
    #[cfg_attr(as_edit_small, optimize(size))]
    pub(super) fn insert(&mut self, keys: &mut Keys, f: &str, i: usize, max: Grade) {
        let (set, n) = keys.of(f.as_bytes(), max);
        for &k in &set[..n] {
            self.insert_key(k, i);
        }
    }

    /// Adds key `k` of pattern `i`.
    fn insert_key(&mut self, k: u64, i: usize) {
        if 2 * (self.len + 1) > self.slots.len() {
            let old = std::mem::take(&mut self.slots);
            let bits = (2 * old.len()).max(16).trailing_zeros();
            (self.slots, self.shift) = (vec![(0, EMPTY); 1 << bits], 64 - bits);
            old.into_iter()
                .filter(|s| s.1 != EMPTY)
                .for_each(|s| self.put(s));
        }
        self.put((k, i as u32));
        self.len += 1;
    }

    /// The slot of key `k`'s first entry.
    fn find(&self, k: u64) -> Option<usize> {
        let mask = self.slots.len().checked_sub(1)?;
        let mut at = self.slot(k);
        while self.slots[at].1 != EMPTY {
            if self.slots[at].0 == k {
                return Some(at);
            }
            at = (at + 1) & mask;
        }
        None
    }

    fn slot(&self, k: u64) -> usize {
        (k.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> self.shift) as usize
    }

    fn put(&mut self, e: (u64, u32)) {
        let mask = self.slots.len() - 1;
        let mut at = self.slot(e.0);
        while self.slots[at].1 != EMPTY {
            at = (at + 1) & mask;
        }
        self.slots[at] = e;
    }

    /// Appends to `hits` the patterns whose first line has one of the keys
    /// in `set` (unsorted, perhaps twice).
    #[cfg_attr(as_edit_small, optimize(size))]
    pub(super) fn hits(&self, set: &Set, hits: &mut Vec<usize>) {
        if self.len == 0 {
            return;
        }
        let mask = self.slots.len() - 1;
        for &k in &set.0[..set.1] {
            let mut at = self.slot(k);
            while let Some(&(key, i)) = self.slots.get(at).filter(|s| s.1 != EMPTY) {
                if key == k {
                    hits.push(i as usize);
                }
                at = (at + 1) & mask;
            }
        }
    }
}

/// How often the text has each patch line, per grade: a first pass counts
/// the lines by their keys, so each search can be anchored on its rarest
/// line (`passes.rs`). A count only chooses the anchor, never a match:
/// keys shared across grades or by collision make it larger, no worse.
pub(super) struct Counts {
    table: Table,
    n: Vec<u32>,
    keys: Keys,
    max: Grade,
}

impl Counts {
    /// For the lines `pats` (each distinct key counted once).
    #[cfg_attr(as_edit_small, optimize(size))]
    pub(super) fn new<'a>(pats: impl Iterator<Item = &'a str>, max: Grade) -> Counts {
        let (mut table, mut keys) = (Table::default(), Keys::default());
        for p in pats {
            let (set, n) = keys.of(p.as_bytes(), max);
            for &k in &set[..n] {
                if table.find(k).is_none() {
                    table.insert_key(k, 0);
                }
            }
        }
        let n = vec![0; table.slots.len()];
        Counts {
            table,
            n,
            keys,
            max,
        }
    }

    /// A line of the text.
    pub(super) fn add(&mut self, l: &[u8]) {
        let (set, n) = self.keys.of(l, self.max);
        for &k in &set[..n] {
            if let Some(s) = self.table.find(k) {
                self.n[s] = self.n[s].saturating_add(1);
            }
        }
    }

    /// The index of the line of `pat` the text has least often (the first
    /// of equals): a match is looked for where that line is.
    #[cfg_attr(as_edit_small, optimize(size))]
    pub(super) fn rarest(&mut self, pat: &[String]) -> usize {
        let mut best = (u64::MAX, 0);
        for (j, p) in pat.iter().enumerate() {
            let (set, n) = self.keys.of(p.as_bytes(), self.max);
            let c = (set[..n].iter())
                .filter_map(|&k| self.table.find(k))
                .map(|s| u64::from(self.n[s]))
                .sum::<u64>();
            if c < best.0 {
                best = (c, j);
            }
        }
        best.1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::patch::find::{best, tests::rng};

    /// Whenever `best` matches a file line with a patch line at a grade,
    /// the table finds the patch line from the file line's keys: on lines
    /// of blanks (Unicode ones too), quotes, dashes and words, and on
    /// bytes that are not UTF-8.
    #[test]
    fn a_line_finds_every_pattern_it_matches() {
        let parts = [
            "", " ", "\t", "\u{b}", "\u{a0}", "\u{3000}", "a", "b", "-", "\u{2013}", "\"",
            "\u{201C}", "x y", "x\u{a0}y", "\r", "\u{85}", "é",
        ];
        let grades = [
            Grade::Exact,
            Grade::TrailingWhitespace,
            Grade::Whitespace,
            Grade::Punctuation,
        ];
        let mut r = rng(0x7ab1e);
        let line = |r: &mut dyn FnMut(usize) -> usize| -> String {
            (0..r(5)).map(|_| parts[r(parts.len())]).collect()
        };
        let (mut matched, mut keys) = (0, Keys::default());
        for _ in 0..2000 {
            let pats: Vec<String> = (0..8).map(|_| line(&mut r)).collect();
            let max = grades[r(4)];
            let table = Table::new(pats.iter().map(String::as_str).enumerate(), max);
            for _ in 0..20 {
                let mut l = line(&mut r).into_bytes();
                if r(10) == 0 {
                    l.push(0xff);
                }
                let mut hits = Vec::new();
                table.hits(&keys.of(&l, max), &mut hits);
                for (i, p) in pats.iter().enumerate() {
                    if best(&l, p, max).is_some() {
                        matched += 1;
                        assert!(hits.contains(&i), "{l:?} {p:?} {max:?}");
                    }
                }
            }
        }
        assert!(matched > 5_000, "{matched}");
    }
}
