//! The search for one edit's OLD: memchr's finder for OLDs shorter than
//! [`LONG`], and for longer ones a cheaper search that gives the same
//! answers. The `--hints` re-read (`fs/hints.rs`) uses it
//! too.
//!
//! memchr's finder of a long OLD costs where a short one's does not: it is
//! built with a Two-Way factorization of all of OLD (about 3 ns a byte:
//! 0.15 s of a 48 MiB OLD, before the file is read), and its prefilter
//! picks two rare bytes among OLD's first 255 only, so in repetitive text
//! every line is a candidate and each costs a Two-Way check. A long OLD's
//! search here looks for a [`PIECE`]-byte piece of OLD around the byte
//! that is rarest in OLD itself (a byte OLD holds once is likely rare in
//! the text OLD was copied from), ranked by the same counts for memchr's
//! prefilter, and compares OLD in full at each start the piece proposes.
//! Those comparisons are budgeted: once they have cost more than twice the
//! starts passed plus OLD's length twice, the piece is too common in this
//! text, and the Two-Way finder is built and used from then on. The work
//! before that is linear in what was searched, and after it Two-Way's is,
//! so the search stays linear for any OLD and text. [`Needle::find_ring`]
//! is the same piece search over a ring's text (a single long OLD read
//! into its slot, `matcher/ring.rs`), which Two-Way cannot search.

use memchr::arch::all::packedpair::HeuristicFrequencyRank;
use memchr::memmem::{Finder, FinderBuilder};

#[cfg(test)]
thread_local! {
    /// Bytes a finder had to see on this thread (up to the match it found,
    /// or the whole haystack): the tests hold the search linear in the input.
    pub(super) static SEARCHED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    /// Bytes of OLD finders were built from on this thread.
    pub(super) static BUILT: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// OLDs at least this long take the piece search.
pub(super) const LONG: usize = 4096;

/// The piece's length.
pub(super) const PIECE: usize = 32;

/// The search for one OLD, as the engine runs it: memchr's finder, or for
/// an OLD of 4 KiB or more the piece search, linear whatever the text.
// `len` is OLD's, which the caller holds: no emptiness test is needed.
#[allow(clippy::len_without_is_empty)]
pub struct Needle<'a> {
    old: &'a [u8],
    /// OLD's finder, or for a long OLD the piece's (or, past the budget,
    /// OLD's, in `full`).
    finder: Finder<'a>,
    /// Where the piece starts in OLD (0 for a short OLD).
    at: usize,
    /// A long OLD's Two-Way finder, once the budget is spent.
    full: Option<Box<Finder<'a>>>,
    /// Bytes compared at proposed starts, and starts passed (the budget).
    compared: u64,
    passed: u64,
}

/// What a long OLD's byte counts are taken from: all of it up to
/// [`SAMPLE`] bytes, else [`PARTS`] evenly spaced parts that add up to it.
/// The counts only choose the piece and rank the prefilter's bytes, so a
/// sample changes the search's speed, never its answers; counting all of a
/// 48 MiB OLD cost about 15 ms before the file was read.
fn sample(old: &[u8]) -> impl Iterator<Item = &[u8]> {
    let (parts, len) = match old.len() <= SAMPLE {
        true => (1, old.len()),
        false => (PARTS, SAMPLE / PARTS),
    };
    let room = old.len() - len;
    let at = move |i: usize| i * room / (parts - 1).max(1);
    (0..parts).map(move |i| &old[at(i)..at(i) + len])
}

/// A long OLD's counts are of at most this many bytes of it.
const SAMPLE: usize = 1 << 20;
const PARTS: usize = 16;

/// memchr's prefilter rank from byte counts: rarer is lower.
struct Counts([u8; 256]);

impl HeuristicFrequencyRank for Counts {
    fn rank(&self, byte: u8) -> u8 {
        self.0[byte as usize]
    }
}

impl<'a> Needle<'a> {
    /// The search for `old`.
    pub fn new(old: &'a [u8]) -> Needle<'a> {
        if old.len() < LONG {
            return Needle::with(old, build(old), 0);
        }
        // Four tables: one would wait on its own last store in runs of a
        // repeated byte.
        let mut n = [[0u32; 256]; 4];
        for part in sample(old) {
            let mut quads = part.chunks_exact(4);
            for q in &mut quads {
                for (t, &b) in n.iter_mut().zip(q) {
                    t[b as usize] += 1;
                }
            }
            for &b in quads.remainder() {
                n[0][b as usize] += 1;
            }
        }
        let mut rank = [0u8; 256];
        let mut rare = (u32::MAX, 0u8);
        for b in 0..256 {
            let c = n[0][b] + n[1][b] + n[2][b] + n[3][b];
            // Counts of 1 to 2^31 onto 8..=248, by powers of two.
            rank[b] = (8 * (32 - c.leading_zeros())) as u8;
            if c > 0 && c < rare.0 {
                rare = (c, b as u8);
            }
        }
        // Its first place in the sample, where it was counted: a search of
        // all of OLD read up to 48 MiB for a byte near its end (7 ms).
        let base = old.as_ptr() as usize;
        let i = sample(old)
            .find_map(|p| Some(p.as_ptr() as usize - base + memchr::memchr(rare.1, p)?))
            .unwrap_or(0);
        let at = i.saturating_sub(PIECE / 2).min(old.len() - PIECE);
        #[cfg(test)]
        BUILT.with(|c| c.set(c.get() + PIECE as u64));
        let piece =
            FinderBuilder::new().build_forward_with_ranker(Counts(rank), &old[at..at + PIECE]);
        Needle::with(old, piece, at)
    }

    fn with(old: &'a [u8], finder: Finder<'a>, at: usize) -> Needle<'a> {
        Needle {
            old,
            finder,
            at,
            full: None,
            compared: 0,
            passed: 0,
        }
    }

    /// `len(OLD)`.
    pub fn len(&self) -> usize {
        self.old.len()
    }

    /// Where OLD first occurs in `hay`, as `memmem::Finder::find`.
    #[inline]
    pub fn find(&mut self, hay: &[u8]) -> Option<usize> {
        // Inlined, a short OLD's search is memchr's alone: a dense
        // replace-all calls this once per match.
        if self.old.len() < LONG {
            return self.finder.find(hay);
        }
        self.find_long(hay)
    }

    #[inline(never)]
    fn find_long(&mut self, hay: &[u8]) -> Option<usize> {
        let m = self.old.len();
        if let Some(f) = &self.full {
            return f.find(hay);
        }
        let last = hay.len().checked_sub(m)?;
        let mut from = 0;
        while from <= last {
            // The piece of a start in from..=last lies in this range.
            let range = &hay[from + self.at..last + self.at + PIECE];
            let Some(h) = self.finder.find(range) else {
                self.passed += (last + 1 - from) as u64;
                return None;
            };
            let c = from + h;
            self.passed += (c - from) as u64;
            if self.same(&hay[c..c + m], 0) {
                return Some(c);
            }
            from = c + 1;
            if self.compared > 2 * (self.passed + m as u64) {
                let f = self.full.insert(Box::new(build(self.old)));
                return f.find(&hay[from..]).map(|i| i + from);
            }
        }
        None
    }

    /// As [`Needle::find`] over a ring's text, for the piece search of a
    /// long OLD (`matcher/ring.rs`): the text is the `avail` bytes at
    /// `head` of a ring of `size` bytes, `ring` holding the ring and then
    /// a copy of its first `PIECE - 1` bytes. The first start before
    /// `starts` where OLD occurs; `Err` once the budget is spent (OLD's
    /// Two-Way finder is then built, and the caller searches on in one
    /// piece), before which every start passed is known not to match.
    pub(crate) fn find_ring(
        &mut self,
        ring: &[u8],
        size: usize,
        head: usize,
        avail: usize,
        starts: usize,
    ) -> Result<Option<usize>, ()> {
        let m = self.old.len();
        if self.full.is_some() || m < LONG {
            return Err(());
        }
        let last = starts.min((avail + 1).saturating_sub(m));
        let mut from = 0;
        while from < last {
            // The pieces of the starts from..last, from where they lie in the ring.
            let p = (head + from + self.at) % size;
            let Some(c) = self.piece(ring, size, p, last - from).map(|h| from + h) else {
                self.passed += (last - from) as u64;
                return Ok(None);
            };
            self.passed += (c - from) as u64;
            let o = (head + c) % size;
            let first = m.min(size - o);
            if self.same(&ring[o..o + first], 0) && self.same(&ring[..m - first], first) {
                return Ok(Some(c));
            }
            from = c + 1;
            if self.compared > 2 * (self.passed + m as u64) {
                self.full = Some(Box::new(build(self.old)));
                return Err(());
            }
        }
        Ok(None)
    }

    /// Where the piece first starts among the `n` ring offsets from `p`
    /// (wrapping), as a distance from `p`.
    fn piece(&self, ring: &[u8], size: usize, p: usize, n: usize) -> Option<usize> {
        let first = n.min(size - p);
        // Through the copy after the ring's end: a piece across the wrap.
        let found = self.piece_in(&ring[p..p + first + PIECE - 1]);
        if found.is_some() || first == n {
            return found;
        }
        self.piece_in(&ring[..n - first + PIECE - 1])
            .map(|h| first + h)
    }

    fn piece_in(&self, hay: &[u8]) -> Option<usize> {
        #[cfg(test)]
        SEARCHED.with(|c| c.set(c.get() + hay.len() as u64));
        self.finder.find(hay)
    }

    /// Whether `b` is OLD's bytes from `off`, counting what was compared: a
    /// first short block (most proposed starts differ early), then 4 KiB
    /// blocks, each an OR of differences the compiler vectorizes.
    // Not inlined: the ring's pass, which calls it, is built for size; this
    // loop must stay vectorized (a found 48 MiB OLD is compared in full).
    #[inline(never)]
    fn same(&mut self, b: &[u8], off: usize) -> bool {
        let old = &self.old[off..off + b.len()];
        let mut at = 0;
        let mut block = 64;
        while at < b.len() {
            let end = (at + block).min(b.len());
            self.compared += (end - at) as u64;
            let diff = b[at..end]
                .iter()
                .zip(&old[at..end])
                .fold(0u8, |d, (x, y)| d | (x ^ y));
            if diff != 0 {
                return false;
            }
            at = end;
            block = 4096;
        }
        true
    }
}

fn build(old: &[u8]) -> Finder<'_> {
    #[cfg(test)]
    BUILT.with(|c| c.set(c.get() + old.len() as u64));
    Finder::new(old)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic stream of small-alphabet bytes: repetitive text
    /// where a piece of OLD is proposed often.
    fn bytes(seed: &mut u64, n: usize, alphabet: &[u8]) -> Vec<u8> {
        (0..n)
            .map(|_| {
                *seed ^= *seed << 13;
                *seed ^= *seed >> 7;
                *seed ^= *seed << 17;
                alphabet[(*seed % alphabet.len() as u64) as usize]
            })
            .collect()
    }

    /// The counts' sample: all of OLD up to SAMPLE bytes, else PARTS parts
    /// of equal length adding up to SAMPLE, the first at OLD's start and
    /// the last at its end, in order and apart.
    #[test]
    fn counts_sample_all_of_a_short_old_and_spread_parts_of_a_long_one() {
        for len in [
            LONG,
            SAMPLE - 1,
            SAMPLE,
            SAMPLE + 1,
            3 * SAMPLE + 7,
            48 << 20,
        ] {
            let old = vec![0u8; len];
            let base = old.as_ptr() as usize;
            let parts: Vec<(usize, usize)> = sample(&old)
                .map(|p| (p.as_ptr() as usize - base, p.len()))
                .collect();
            assert_eq!(parts.iter().map(|p| p.1).sum::<usize>(), len.min(SAMPLE));
            assert_eq!(parts.len(), if len <= SAMPLE { 1 } else { PARTS });
            assert_eq!(parts[0].0, 0);
            let last = parts[parts.len() - 1];
            assert_eq!(last.0 + last.1, len, "{len}");
            assert!(parts.windows(2).all(|w| w[0].0 + w[0].1 <= w[1].0));
        }
    }

    /// The piece lies around the rarest byte's first place in the sample:
    /// one near the end of a long OLD is found without reading the rest.
    #[test]
    fn the_piece_lies_around_the_rarest_byte_in_the_sample() {
        let m = 3 * SAMPLE + 4099;
        for zs in [&[m - 100][..], &[m - 1], &[5], &[0], &[m - 100, m - 1]] {
            let mut old = vec![b'a'; m];
            for &z in zs {
                old[z] = b'Z';
            }
            let want = zs[0].saturating_sub(PIECE / 2).min(m - PIECE);
            assert_eq!(Needle::new(&old).at, want, "{zs:?}");
        }
    }

    /// An OLD past the sample, its rarest byte outside every sampled part:
    /// the piece lies elsewhere, and the answers are still memchr's.
    #[test]
    fn a_sampled_old_finds_what_memchr_finds() {
        let mut seed = 0x2545_f491_4f6c_dd1d;
        let m = 3 * SAMPLE + 4099;
        let mut old = bytes(&mut seed, m, b"abc");
        old[SAMPLE / 32 * 3] = b'Z'; // between the first part and the second
        let mut hay = bytes(&mut seed, 5000, b"abc");
        hay.extend_from_slice(&old);
        hay.extend(bytes(&mut seed, 5000, b"abc"));
        for flip in [
            None,
            Some(0),
            Some(SAMPLE / 32 * 3),
            Some(m / 2),
            Some(m - 1),
        ] {
            let mut o = old.clone();
            if let Some(i) = flip {
                o[i] ^= 1;
            }
            let want = memchr::memmem::find(&hay, &o);
            assert_eq!(want.is_some(), flip.is_none());
            assert_eq!(Needle::new(&o).find(&hay), want, "{flip:?}");
        }
    }

    /// The piece search answers as memchr's finder does, from every start,
    /// for OLDs that occur, occur twice, overlap themselves, or miss by one
    /// byte at their start, at the piece and at their end; in text where
    /// the piece is rare and where it is everywhere (the Two-Way fallback).
    #[test]
    fn finds_what_memchr_finds() {
        let mut seed = 0x9e37_79b9_7f4a_7c15;
        // Whether some searches stayed on the piece, and some fell back.
        let mut modes = [false; 2];
        for (alphabet, period) in [(&b"ab"[..], 0), (b"abcd", 0), (b"a", 0), (b"ab", 7)] {
            for m in [LONG, LONG + 33] {
                let mut old = match period {
                    0 => bytes(&mut seed, m, alphabet),
                    p => bytes(&mut seed, p, alphabet).repeat(m / p + 1)[..m].to_vec(),
                };
                old[m / 3] = b'Z'; // the rarest byte: the piece lies around it
                let probe = Needle::new(&old);
                let at = probe.at;
                let mut hay = bytes(&mut seed, 300, alphabet);
                for flip in [None, Some(0), Some(at), Some(at + PIECE - 1), Some(m - 1)] {
                    let mut o = old.clone();
                    if let Some(i) = flip {
                        o[i] ^= 1;
                    }
                    hay.extend_from_slice(&o);
                    hay.extend(bytes(&mut seed, 50, alphabet));
                }
                hay.extend_from_slice(&old[..m / 2]);
                hay.extend_from_slice(&old);
                for text in [hay.clone(), old.repeat(3), old[1..].repeat(2)] {
                    let mut n = Needle::new(&old);
                    for i in (0..text.len()).step_by(37) {
                        let want = memchr::memmem::find(&text[i..], &old);
                        assert_eq!(n.find(&text[i..]), want, "m {m} from {i}");
                    }
                    modes[n.full.is_some() as usize] = true;
                }
            }
        }
        assert_eq!(modes, [true, true]);
    }

    /// A rare piece: no Two-Way factorization of OLD at all. A piece that
    /// is everywhere in the text: the comparisons stop at their budget and
    /// OLD's Two-Way finder is built once.
    #[test]
    fn the_two_way_finder_is_built_only_past_the_budget() {
        let old = [vec![b'q'; 64 << 10], b"!".to_vec()].concat();
        let built = |text: &[u8]| {
            super::BUILT.with(|c| c.set(0));
            let mut n = Needle::new(&old);
            let mut at = 0;
            while let Some(i) = n.find(&text[at..]) {
                at += i + old.len();
            }
            let b = super::BUILT.with(|c| c.get());
            (b, n.compared, n.full.is_some())
        };
        let rare = vec![b'q'; 1 << 20];
        assert_eq!(built(&rare), (PIECE as u64, 0, false));
        let common = [vec![b'q'; 999], b"!".to_vec()].concat().repeat(1 << 10);
        let (b, compared, full) = built(&common);
        assert_eq!((b, full), ((PIECE + old.len()) as u64, true));
        // Stopped at the budget: at most twice the starts passed and OLD.
        assert!(compared <= 2 * (common.len() + 2 * old.len()) as u64);
    }
}
