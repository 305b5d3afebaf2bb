//! The matches of one search of `passes.rs` (a chunk's old lines, or a
//! header) as the lines of the text go by: pure. A match is looked for
//! where its anchor line is (the pattern's rarest, `table.rs`'s counts),
//! and the lines before the anchor are read back from the ring
//! (`feed.rs`), so a line the file repeats, first in many chunks, starts
//! no partial match in each of them. Matches are found on the same line,
//! in the same order, as when every line started one.

use super::feed::Ring;
use super::find::{best, Grade};
use crate::hints::OCCURRENCE_LINES_MAX;

/// The matches of one pattern (a chunk's old lines, or a header) that
/// start at or after `from`, per grade.
pub(super) struct Matches<'c> {
    pub(super) old: &'c [String],
    pub(super) max: Grade,
    pub(super) from: usize,
    /// The line a match is looked for at (`old[anchor]`, the rarest).
    pub(super) anchor: usize,
    /// Partial matches: start and the loosest grade of their lines so far.
    pub(super) starts: Vec<(usize, Grade)>,
    pub(super) count: [usize; 4],
    pub(super) lines: [Vec<usize>; 4],
    /// The last whole match: its end line, start and grade.
    pub(super) last: Option<(usize, usize, Grade)>,
}

impl<'c> Matches<'c> {
    pub(super) fn new(old: &'c [String], max: Grade, from: usize, anchor: usize) -> Self {
        Matches {
            old,
            max,
            from,
            anchor,
            starts: Vec::new(),
            count: [0; 4],
            lines: Default::default(),
            last: None,
        }
    }

    #[cfg_attr(as_edit_small, optimize(size))]
    #[inline(never)] // inlined into a closure it would be built at opt-level 3
    pub(super) fn line(&mut self, n: usize, l: Option<&[u8]>, ring: &Ring) {
        if n < self.from || self.old.is_empty() {
            return;
        }
        let (old, max, a) = (self.old, self.max, self.anchor);
        let at = |l: Option<&[u8]>, i: usize| l.and_then(|l| best(l, old.get(i)?, max));
        let mut kept = 0;
        for i in 0..self.starts.len() {
            let (s, g) = self.starts[i];
            if let Some(x) = at(l, n - s) {
                self.starts[kept] = (s, g.max(x));
                kept += 1;
            }
        }
        self.starts.truncate(kept);
        // A match starts `a` lines before its anchor: the ring's lines.
        if let Some(g) = at(l, a).filter(|_| n >= self.from + a) {
            let s = n - a;
            let g = (0..a).try_fold(g, |g, j| Some(g.max(at(ring.get(s + j), j)?)));
            self.starts.extend(g.map(|g| (s, g)));
        }
        // Only the oldest can be whole.
        if let Some(&(s, g)) = self.starts.first().filter(|s| n + 1 - s.0 == old.len()) {
            self.starts.remove(0);
            self.last = Some((n, s, g));
            // Lines are kept at the best grade only (`found` reads no other).
            let best = self.first().map_or(4, |f| f.0);
            if (g as usize) < best {
                self.lines = Default::default();
            }
            if g as usize <= best && self.lines[g as usize].len() < OCCURRENCE_LINES_MAX {
                self.lines[g as usize].push(s);
            }
            for gi in g as usize..4 {
                self.count[gi] += 1;
            }
        }
    }

    /// The locator's answer for a text of `n` lines: the first grade with
    /// a match, its count and first lines (`eof`: only a match ending the
    /// text counts).
    /// The best grade with a match so far, its first match and count.
    pub(super) fn first(&self) -> Option<(usize, usize, usize)> {
        let gi = (0..4).find(|&g| self.count[g] > 0)?;
        Some((gi, self.lines[gi][0], self.count[gi]))
    }

    pub(super) fn found(&self, n: usize, eof: bool) -> Option<(Grade, usize, Vec<usize>)> {
        if eof {
            let (end, s, g) = self.last.filter(|l| l.0 + 1 == n)?;
            return Some((g, 1, vec![s])).filter(|_| end + 1 == n);
        }
        let gi = (0..4).find(|&g| self.count[g] > 0)?;
        Some((Grade::ALL[gi], self.count[gi], self.lines[gi].clone()))
    }
}
