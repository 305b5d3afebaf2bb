//! The last of `passes.rs`'s passes: the new text, as `locate::write`
//! writes it (every line followed by `\n`; a context line kept keeps the
//! file's text), streamed: a line is never held, only, with `--diff`, a
//! chunk's old and new lines for the diff [`Builder`]. Pure.

use super::parse::Chunk;
use crate::diff::Builder;

/// A chunk's place: its old lines `at..at + old` become its first `new`
/// new lines (`at`: `usize::MAX` for the end of the file).
#[derive(Clone, Copy, Debug)]
pub(super) struct Splice {
    pub(super) at: usize,
    pub(super) old: usize,
    pub(super) chunk: usize,
    pub(super) new: usize,
}

/// The last pass: the new text, as `write` writes it.
pub(super) struct Writer<'c, 'o, 'd> {
    chunks: &'c [Chunk],
    splices: &'c [Splice],
    /// The next splice to begin.
    next: usize,
    /// The splice under way: its index, old lines passed, new lines written.
    active: Option<(usize, usize, usize)>,
    /// The current line is dropped.
    skip: bool,
    written: usize,
    pub(super) starts: Vec<usize>,
    out: &'o mut dyn FnMut(&[u8]),
    diff: Option<&'d mut Builder>,
    /// With `diff`: the splice's old and new text.
    old: Vec<u8>,
    new: Vec<u8>,
    /// A line is begun; `n`: lines begun.
    open: bool,
    pub(super) n: usize,
}

impl<'c, 'o, 'd> Writer<'c, 'o, 'd> {
    pub(super) fn new(
        chunks: &'c [Chunk],
        splices: &'c [Splice],
        out: &'o mut dyn FnMut(&[u8]),
        diff: Option<&'d mut Builder>,
    ) -> Self {
        Writer {
            chunks,
            splices,
            next: 0,
            active: None,
            skip: false,
            written: 0,
            starts: vec![0; chunks.len()],
            out,
            diff,
            old: Vec::new(),
            new: Vec::new(),
            open: false,
            n: 0,
        }
    }

    #[cfg_attr(as_edit_small, optimize(size))]
    pub(super) fn feed(&mut self, mut b: &[u8]) {
        while !b.is_empty() {
            let (seg, nl) = match memchr::memchr(b'\n', b) {
                Some(i) => (&b[..=i], true),
                None => (b, false),
            };
            b = &b[seg.len()..];
            if !self.open {
                self.begin();
            }
            self.bytes(seg);
            if nl {
                self.open = false;
                self.written += usize::from(!self.skip);
            }
        }
    }

    /// Bytes of the current line.
    fn bytes(&mut self, seg: &[u8]) {
        if self.active.is_some() {
            if self.diff.is_some() {
                self.old.extend_from_slice(seg);
                if !self.skip {
                    self.new.extend_from_slice(seg);
                }
            }
        } else if let Some(d) = self.diff.as_mut() {
            d.same(seg);
        }
        if !self.skip {
            (self.out)(seg);
        }
    }

    /// New line `j` of chunk `c` as the patch has it.
    fn literal(&mut self, c: usize, j: usize) {
        let l = self.chunks[c].new[j].as_bytes();
        (self.out)(l);
        (self.out)(b"\n");
        if self.diff.is_some() {
            self.new.extend_from_slice(l);
            self.new.push(b'\n');
        }
        self.written += 1;
    }

    /// Line `n` begins: the splices due, and whether it is copied.
    #[cfg_attr(as_edit_small, optimize(size))]
    fn begin(&mut self) {
        self.open = true;
        self.skip = false;
        loop {
            if let Some((si, i, mut j)) = self.active {
                let s = self.splices[si];
                let c = &self.chunks[s.chunk];
                if i < s.old {
                    let keeps =
                        |j: usize| matches!(c.keep.get(j), Some(&Some(k)) if k < s.old && k >= i);
                    while j < s.new && !keeps(j) {
                        self.literal(s.chunk, j);
                        j += 1;
                    }
                    let kept = j < s.new && c.keep.get(j) == Some(&Some(i));
                    self.skip = !kept;
                    self.active = Some((si, i + 1, j + usize::from(kept)));
                    self.n += 1;
                    return;
                }
                self.close(s, j);
            }
            match self.splices.get(self.next) {
                Some(s) if s.at == self.n => self.open_splice(),
                _ => break,
            }
        }
        self.n += 1;
    }

    fn open_splice(&mut self) {
        let s = self.splices[self.next];
        self.starts[s.chunk] = self.written + 1;
        self.active = Some((self.next, 0, 0));
        self.next += 1;
    }

    /// The rest of the active splice's new lines, from `j`.
    #[cfg_attr(as_edit_small, optimize(size))]
    fn close(&mut self, s: Splice, j: usize) {
        (j..s.new).for_each(|j| self.literal(s.chunk, j));
        self.active = None;
        if let Some(d) = self.diff.as_mut() {
            if !self.old.is_empty() || !self.new.is_empty() {
                d.change(&self.old, &self.new);
            }
        }
        self.old.clear();
        self.new.clear();
    }

    /// The text has ended: a last line gets its newline, and the splices
    /// left (at the end, in chunk order) are written.
    #[cfg_attr(as_edit_small, optimize(size))]
    pub(super) fn finish(&mut self) {
        if self.open && !self.skip {
            (self.out)(b"\n");
            self.written += 1;
            match (self.active.is_some(), self.diff.as_mut()) {
                (true, Some(_)) => self.new.push(b'\n'),
                (false, Some(d)) => d.change(b"", b"\n"),
                _ => {}
            }
        }
        // Pure additions at the end are in chunk order, like those due at
        // the last line (`locate` sorts stably).
        let mut rest: Vec<usize> = (self.next..self.splices.len()).collect();
        rest.sort_by_key(|&i| self.splices[i].chunk);
        if let Some((si, _, j)) = self.active {
            self.close(self.splices[si], j);
        }
        for i in rest {
            self.next = i;
            self.open_splice();
            self.close(self.splices[i], 0);
        }
    }
}
