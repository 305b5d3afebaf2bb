//! The partial matches of `stream.rs`'s pass, per chunk, and the watch of
//! placed chunks for a later occurrence to the end of the file: pure.
//!
//! A chunk placed exactly with no partial match waits in a list sorted by
//! its first old line, so a line finds the ones it starts by a binary
//! search: any number of them costs a line about a logarithm, not a
//! comparison each (the pass once stopped at 64 chunks for that). The
//! others (a partial match under way, or placed loosely: a comparison at
//! their grade) are advanced one by one; more than [`MAX_BUSY`] of them at
//! once leave the patch to the locator.

use super::find::best;
use super::locate::Grade;
use super::parse::Chunk;

/// Chunks compared with every line one by one (a cost of lines times
/// chunks), at most: more leave the patch to the locator.
const MAX_BUSY: usize = 64;

pub(super) struct Watch<'c> {
    chunks: &'c [Chunk],
    /// Per chunk: the starts of its partial matches and their grades so
    /// far (the loosest of their lines'), oldest first.
    pub(super) starts: Vec<Vec<(usize, Grade)>>,
    /// Per chunk: the loosest grade a match of it counts at: the pass's
    /// until it is placed, then its grade (a later match at it or
    /// stricter undoes the placement: `stream.rs`'s docs).
    grades: Vec<Grade>,
    /// Placed exactly, no partial match: by first old line.
    idle: Vec<(&'c [u8], usize)>,
    /// Placed, the others.
    busy: Vec<usize>,
}

impl<'c> Watch<'c> {
    pub(super) fn new(chunks: &'c [Chunk], max: Grade) -> Self {
        Watch {
            chunks,
            starts: vec![Vec::new(); chunks.len()],
            grades: vec![max; chunks.len()],
            idle: Vec::new(),
            busy: Vec::new(),
        }
    }

    /// Chunk `c` placed at `grade`: watched from the next line on, with
    /// the partial matches it has that count at that grade.
    #[cfg_attr(as_edit_small, optimize(size))]
    pub(super) fn place(&mut self, c: usize, grade: Grade) {
        self.grades[c] = grade;
        self.starts[c].retain(|s| s.1 <= grade);
        if !self.chunks[c].old.is_empty() {
            self.rest(c);
        }
    }

    /// Files `c` as idle or busy.
    fn rest(&mut self, c: usize) {
        match self.starts[c].is_empty() && self.grades[c] == Grade::Exact {
            true => {
                let first = self.chunks[c].old[0].as_bytes();
                let at = self.idle.partition_point(|i| i.0 < first);
                self.idle.insert(at, (first, c));
            }
            false => self.busy.push(c),
        }
    }

    /// Line `n` (`None`: one no chunk line matches) against every placed
    /// chunk; false when one occurs again, or too many are busy.
    #[cfg_attr(as_edit_small, optimize(size))]
    pub(super) fn line(&mut self, n: usize, l: Option<&[u8]>) -> bool {
        let mut i = 0;
        while let Some(&c) = self.busy.get(i) {
            if self.advance(c, n, l) {
                return false;
            }
            match self.starts[c].is_empty() && self.grades[c] == Grade::Exact {
                true => {
                    self.busy.swap_remove(i);
                    self.rest(c);
                }
                false => i += 1,
            }
        }
        let Some(l) = l else {
            return true;
        };
        let lo = self.idle.partition_point(|i| i.0 < l);
        let hi = lo + self.idle[lo..].partition_point(|i| i.0 == l);
        let mut whole = false;
        for (_, c) in self.idle.drain(lo..hi) {
            self.starts[c].push((n, Grade::Exact));
            self.busy.push(c);
            // A chunk of one line is whole at once.
            whole |= self.chunks[c].old.len() == 1;
        }
        !whole && self.busy.len() <= MAX_BUSY
    }

    /// Advances chunk `c`'s partial matches by line `n`; whether one of
    /// them is now whole.
    #[cfg_attr(as_edit_small, optimize(size))]
    pub(super) fn advance(&mut self, c: usize, n: usize, l: Option<&[u8]>) -> bool {
        let (old, cut) = (&self.chunks[c].old, self.grades[c]);
        let v = &mut self.starts[c];
        let Some(l) = l else {
            v.clear();
            return false;
        };
        if v.is_empty() {
            // Most lines: no partial match to advance, nor a first line.
            let Some(g) = best(l, &old[0], cut) else {
                return false;
            };
            v.push((n, g));
            return old.len() == 1;
        }
        let mut kept = 0;
        for i in 0..v.len() {
            let (s, g) = v[i];
            if let Some(x) = old.get(n - s).and_then(|o| best(l, o, cut)) {
                v[kept] = (s, g.max(x));
                kept += 1;
            }
        }
        v.truncate(kept);
        if let Some(g) = best(l, &old[0], cut) {
            v.push((n, g));
        }
        v.first().is_some_and(|&(s, _)| n + 1 - s == old.len())
    }
}
