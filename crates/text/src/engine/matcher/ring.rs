//! A single long OLD's slot as a ring.
//!
//! The caller reads the input straight into the slot (`Engine::spare`).
//! Read linearly, the slot would be `2 * keep` bytes and, each time it filled,
//! its first `keep` starts resolved and the `keep` bytes after them copied
//! to its front: one copy of the file in all, and every read landing on
//! memory the search had long left. As a ring of `keep` bytes plus
//! [`ROOM`], nothing is carried: each read fills the room after the held
//! text (up to the ring's end, then from its start), and once half the room
//! holds text whose every start can be resolved (`keep` bytes follow it),
//! those starts are resolved and the room is free again. The piece search
//! (`needle.rs`) reads a candidate across the wrap in two slices, and the
//! piece itself through a copy of the ring's first `PIECE - 1` bytes kept
//! after its end (the mirror). OLD's Two-Way finder, past the piece
//! search's budget, needs its text in one piece: then the ring is rotated
//! into the linear slot (`linearize`, once) and the edit goes on as one
//! fed by `feed` (which linearizes too: a caller that does not read into
//! the slot gets the linear path). The ring takes `keep + ROOM` of the
//! slot's `2 * keep` bytes; the rest is never touched, so never paged in.

use super::super::gather::Out;
use super::super::needle::PIECE;
use super::turn::Turn;
use super::{keep, Edit, Stages, DIRECT};

#[cfg(test)]
thread_local! {
    /// The ring's `(head, len, size)` when it was last linearized.
    static LINEARIZED: std::cell::Cell<Option<(usize, usize, usize)>> =
        const { std::cell::Cell::new(None) };
}

/// The room past `keep`: what the reads fill between two passes of the
/// search, which stay in cache.
const ROOM: usize = 1 << 20;

/// The held text of the ring: `len` bytes from `head`, wrapping at `size`.
pub(super) struct Ring {
    size: usize,
    head: usize,
    len: usize,
}

impl Ring {
    /// The ring of a single edit of [`DIRECT`] bytes or more.
    pub(super) fn new(edits: &[Edit]) -> Option<Ring> {
        let [e] = edits else {
            return None;
        };
        let keep = keep(e);
        (keep >= DIRECT).then(|| Ring {
            // The ring and its mirror fit the slot: `size + PIECE - 1 <= 2 * keep`.
            size: keep + ROOM.min(keep + 1 - PIECE),
            head: 0,
            len: 0,
        })
    }

    /// The room after the held text, up to the ring's end (never empty:
    /// the text is resolved before it fills the ring).
    pub(super) fn spare<'s>(&self, slot: &'s mut [u8]) -> &'s mut [u8] {
        let end = (self.head + self.len) % self.size;
        let room = self.size - self.len;
        &mut slot[end..(end + room).min(self.size)]
    }
}

impl Stages<'_> {
    /// The first `n` bytes of the ring's spare room are new text: kept in
    /// the mirror too where they lie in the ring's first `PIECE - 1` bytes,
    /// then, once half the room is filled past `keep`, its starts resolved.
    pub(super) fn ring_filled(&mut self, n: usize, out: &mut Out<'_>) {
        let Some(r) = self.ring.as_mut() else {
            return;
        };
        let end = (r.head + r.len) % r.size;
        if end < PIECE - 1 {
            let to = (end + n).min(PIECE - 1);
            self.tails.copy_within(end..to, r.size + end);
        }
        r.len += n;
        let keep = keep(&self.edits[0]);
        if r.len >= keep + (r.size - keep) / 2 {
            let limit = r.len - keep;
            self.resolve(limit, out);
        }
    }

    /// The end of the input: every start left in the ring is resolved.
    #[cfg_attr(as_edit_small, optimize(size))]
    pub(super) fn ring_finish(&mut self, out: &mut Out<'_>) {
        if let Some(r) = &self.ring {
            let len = r.len;
            self.resolve(len, out);
        }
    }

    /// Handles the matches starting in the ring's first `limit` bytes and
    /// emits the text up to them (or to the end of a match past them).
    #[inline(never)]
    #[cfg_attr(as_edit_small, optimize(size))]
    fn resolve(&mut self, limit: usize, out: &mut Out<'_>) {
        let Stages {
            edits,
            states,
            tails,
            finders,
            ring,
            ..
        } = self;
        let Some(r) = ring.as_mut() else {
            return;
        };
        let mut t = Turn {
            finder: &mut finders[0].1,
            edit: &edits[0],
            st: &mut states[0],
        };
        let (pos, whole) = t.scan_ring(tails, (r.size, r.head, r.len), limit, out);
        r.head = (r.head + pos) % r.size;
        r.len -= pos;
        if !whole {
            self.linearize();
        }
    }

    /// Leaves the ring for the linear slot, if the edit still has one.
    pub(super) fn linear(&mut self) {
        if self.ring.is_some() {
            self.linearize();
        }
    }

    /// The held text rotated to the slot's front, as a linear tail.
    #[cold]
    #[cfg_attr(as_edit_small, optimize(size))]
    fn linearize(&mut self) {
        if let Some(r) = self.ring.take() {
            #[cfg(test)]
            LINEARIZED.with(|c| c.set(Some((r.head, r.len, r.size))));
            self.tails[..r.size].rotate_left(r.head);
            self.states[0].tail_len = r.len as u32;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::needle::{BUILT, SEARCHED};
    use super::*;
    use crate::engine::{Engine, Refusal, Summary};

    type Out = (Vec<u8>, Result<Summary, Refusal>, Vec<usize>);

    /// One run of `edit` over `content`, with `--report` lines and a diff:
    /// read into the slot as `fs::prepare` does, `reads()` bytes a read at
    /// most, or (`direct` false) fed in chunks of that size, the linear
    /// path. The output (cleared on a refusal), the summary and where the
    /// change marker fell.
    fn run(content: &[u8], edit: &Edit, reads: &mut dyn FnMut() -> usize, direct: bool) -> Out {
        let edits = [edit.clone()];
        let mut engine = Engine::new(&edits, true).with_diff("/f");
        let (mut out, mut marks) = (Vec::new(), Vec::new());
        let mut push = |b: &[u8], out: &mut Vec<u8>| {
            if b.is_empty() {
                marks.push(out.len());
            }
            out.extend_from_slice(b)
        };
        let mut rest = content;
        while !rest.is_empty() {
            let p = reads().min(rest.len()).max(1);
            let n = match engine.spare().filter(|_| direct) {
                Some(s) => {
                    let n = p.min(s.len());
                    s[..n].copy_from_slice(&rest[..n]);
                    engine.filled(n, &mut |b| push(b, &mut out));
                    n
                }
                None => {
                    engine.feed(&rest[..p], &mut |b| push(b, &mut out));
                    p
                }
            };
            rest = &rest[n..];
        }
        let s = engine.finish(&mut |b| push(b, &mut out));
        if s.is_err() {
            out.clear();
        }
        (out, s, marks)
    }

    fn ring_of(old: &[u8]) -> (usize, Edit) {
        let e = Edit::new(std::str::from_utf8(old).unwrap(), "NEW\n", true).unwrap();
        (Ring::new(std::slice::from_ref(&e)).unwrap().size, e)
    }

    /// Text that never holds `Z` or `!`: lines of varied length.
    fn filler(n: usize) -> Vec<u8> {
        let mut t = Vec::with_capacity(n + 64);
        let mut i = 0u64;
        while t.len() < n {
            t.extend_from_slice(format!("line {i} {}\n", "ab".repeat((i % 7) as usize)).as_bytes());
            i += 1;
        }
        t.truncate(n);
        t
    }

    /// Matches across the ring's wrap at every offset class (starting at
    /// it, one byte before it, its piece straddling it at each of the
    /// piece's bytes and just past, its end on it), near misses across it
    /// (OLD with its first, piece or last byte changed), and back to back
    /// over it; in reads of 1 byte to whole rings, LF and CRLF: the
    /// output, summary (count, lines, diff) and change marker of the
    /// linear path, and the oracle's bytes.
    #[test]
    fn matches_across_the_wrap_at_every_offset() {
        let m = DIRECT + 301;
        let mut old = filler(m);
        let z = m / 3;
        old[z] = b'Z';
        // The piece: 32 bytes around OLD's rarest byte (`needle.rs`).
        let at = z - PIECE / 2;
        let (size, edit) = ring_of(&old);
        assert_eq!(size, 2 * (m - 1) + 1 - PIECE);
        let near = |i: usize| {
            let mut o = old.clone();
            o[i] = b'Y';
            o
        };
        // (distance of the start before a wrap, what is placed there)
        // (how far before a wrap the start lies, what is placed there)
        let mut places: Vec<(isize, Vec<u8>)> = [
            0,
            1,
            2,
            at - 1,
            at,
            at + 1,
            at + PIECE / 2,
            at + PIECE - 1,
            at + PIECE,
            at + PIECE + 1,
            m - 1,
            m,
        ]
        .into_iter()
        .map(|d| (d as isize, old.clone()))
        .collect();
        let near_at = near(at + 5);
        places.extend([(1, near(0)), (at as isize + 3, near_at), (5, near(m - 1))]);
        // Starts just past a wrap: the text before them crosses it.
        places.extend([-1, -7, -(PIECE as isize) - 3, -4099, -40000].map(|d| (d, old.clone())));
        let mut text = filler((places.len() + 3) * size);
        for (k, (d, o)) in places.iter().enumerate() {
            let s = (((k + 1) * size) as isize - d) as usize;
            text[s..s + o.len()].copy_from_slice(o);
        }
        // Back to back over the last wrap.
        let s = (places.len() + 2) * size - m / 2;
        text[s - m..s].copy_from_slice(&old);
        text[s..s + m].copy_from_slice(&old);
        let count = places.iter().filter(|p| p.1 == old).count() as u64 + 2;
        let norm = std::str::from_utf8(&text).unwrap();
        let want = norm.replace(std::str::from_utf8(&old).unwrap(), "NEW\n");
        let crlf = norm.replace('\n', "\r\n");
        for content in [norm.as_bytes(), crlf.as_bytes()] {
            let linear = run(content, &edit, &mut || 1 << 16, false);
            assert!(linear.0 == want.as_bytes());
            assert_eq!(linear.1.as_ref().map(|s| s.count), Ok(count));
            for p in [
                1,
                3,
                PIECE - 1,
                PIECE + 1,
                4093,
                1 << 18,
                size - 1,
                size,
                usize::MAX,
            ] {
                if p == 1 && content.len() > text.len() {
                    continue; // one byte a read: LF only, for time
                }
                let got = run(content, &edit, &mut || p, true);
                assert!(got == linear, "reads of {p}");
            }
            // Reads of many sizes in turn.
            let mut i = 0;
            let mut reads = || {
                i += 1;
                1 + (i % 97) * 5003
            };
            assert!(run(content, &edit, &mut reads, true) == linear);
        }
        // `--at-line` on the third occurrence, and a refusal's count.
        let third = norm
            .match_indices(std::str::from_utf8(&old).unwrap())
            .nth(2);
        let line = norm[..third.unwrap().0].matches('\n').count() as u64 + 1;
        let o = std::str::from_utf8(&old).unwrap();
        for e in [
            Edit::new(o, "X", false)
                .unwrap()
                .with_at_line(line)
                .unwrap(),
            // None on line 1: the refusal lists every start's line.
            Edit::new(o, "X", false).unwrap().with_at_line(1).unwrap(),
            Edit::new(o, "X", false).unwrap(),
        ] {
            let linear = run(&text, &e, &mut || 1 << 16, false);
            assert!(run(&text, &e, &mut || 4093, true) == linear);
        }
    }

    /// Matches starting on the first start of a pass and on the last one:
    /// in reads of one byte a pass resolves the starts from one multiple
    /// of half the room to the next (then `keep` bytes follow the last).
    #[test]
    fn matches_at_the_edges_of_a_pass() {
        let m = DIRECT + 301;
        let mut old = filler(m);
        old[m / 3] = b'Z';
        let (size, edit) = ring_of(&old);
        let half = (size - (m - 1)) / 2;
        let mut text = filler(16 * half + 2 * m);
        for s in [half, 4 * half, 7 * half - 1, 11 * half, 15 * half - 1] {
            text[s..s + m].copy_from_slice(&old);
        }
        let linear = run(&text, &edit, &mut || 1 << 16, false);
        assert_eq!(linear.1.as_ref().map(|s| s.count), Ok(5));
        for p in [1, 2, 7] {
            assert!(run(&text, &edit, &mut || p, true) == linear, "reads of {p}");
        }
    }

    /// OLD exactly at the ring's threshold: an OLD of `DIRECT` bytes is
    /// fed in chunks (no ring), one byte longer takes the ring, and both
    /// answer as the linear path does with a match across the wrap.
    #[test]
    fn old_at_the_direct_boundary() {
        for m in [DIRECT, DIRECT + 1, DIRECT + PIECE] {
            let mut old = filler(m);
            old[m - 1] = b'Z';
            let e = Edit::new(std::str::from_utf8(&old).unwrap(), "x", false).unwrap();
            let ring = Ring::new(std::slice::from_ref(&e));
            assert_eq!(ring.is_some(), m > DIRECT);
            let size = ring.map_or(2 * m, |r| r.size);
            let mut text = filler(3 * size);
            text[size - 7..size - 7 + m].copy_from_slice(&old);
            let linear = run(&text, &e, &mut || 1 << 16, false);
            assert_eq!(linear.1.as_ref().map(|s| s.count), Ok(1));
            for p in [1, 4096, usize::MAX] {
                assert!(run(&text, &e, &mut || p, true) == linear, "{m} {p}");
            }
        }
    }

    /// A piece that is everywhere in the text: past the budget OLD's
    /// Two-Way finder takes over while the held text wraps, the ring is
    /// rotated into the linear slot, and the match across a later wrap is
    /// found as the linear path finds it, once.
    #[test]
    fn two_way_fallback_across_the_wrap() {
        let m = DIRECT + 300;
        let old = [vec![b'q'; m - 1], b"!".to_vec()].concat();
        let (size, edit) = ring_of(&old);
        let mut text = filler(size + size * 2 / 3);
        while text.len() < 8 * size {
            text.extend_from_slice(&[vec![b'q'; 999], b"!".to_vec()].concat());
        }
        let s = 6 * size - m / 2;
        text[s..s + m].copy_from_slice(&old);
        let linear = run(&text, &edit, &mut || 1 << 16, false);
        assert_eq!(linear.1.as_ref().map(|s| s.count), Ok(1));
        for p in [1, 4093, 1 << 18, usize::MAX] {
            LINEARIZED.with(|c| c.set(None));
            let got = run(&text, &edit, &mut || p, true);
            assert!(got == linear, "reads of {p}");
            let (head, len, size) = LINEARIZED.with(|c| c.get()).expect("no fallback");
            assert!(head + len > size, "not wrapped: reads of {p}");
        }
    }

    /// The ring's search is linear in the input: a rare piece is sought
    /// over each start once (plus a piece per pass), with no Two-Way
    /// finder built, whatever the reads.
    #[test]
    fn the_ring_search_is_linear() {
        let old = [vec![b'q'; DIRECT + 9], b"!".to_vec()].concat();
        let (_, edit) = ring_of(&old);
        let text = vec![b'q'; 6 << 20];
        for p in [1, 4096, 65536, 1 << 20] {
            SEARCHED.with(|c| c.set(0));
            BUILT.with(|c| c.set(0));
            let got = run(&text, &edit, &mut || p, true);
            assert_eq!(got.1, Err(Refusal::NotFound { edit: 0 }));
            let (searched, built) = (SEARCHED.with(|c| c.get()), BUILT.with(|c| c.get()));
            let n = text.len() as u64;
            assert!(searched <= n + n / 8, "reads of {p}: {searched}");
            assert_eq!(built, PIECE as u64);
        }
    }
}
