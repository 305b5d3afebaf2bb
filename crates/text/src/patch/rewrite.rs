//! The last of `passes.rs`'s passes: the new text, as `locate::write`
//! writes it (every line followed by `\n`; a context line kept keeps the
//! file's text), streamed: a line is never held, only, with `--diff`, a
//! chunk's old and new lines for the diff [`Builder`]. Pure.

use super::chunk::{keeps, tail, Chunk};
use crate::diff::Builder;

/// A chunk's place: its old lines `at..at + old` become its new lines
/// `from..new` (`at`: `usize::MAX` for the end of the file).
#[derive(Clone, Copy, Debug)]
pub(super) struct Splice {
    pub(super) at: usize,
    pub(super) old: usize,
    pub(super) chunk: usize,
    pub(super) new: usize,
    pub(super) from: usize,
}

impl Splice {
    /// In file order, in chunk order where they meet (one sort for
    /// `locate` and the passes; `v` in chunk order, of a text of `n`
    /// lines). Codex places a chunk's lines between its context lines, so
    /// what it adds after its last line, when that is context and the
    /// text's last, goes after the pure additions of earlier chunks at the
    /// end: that tail becomes a splice of its own at the end then.
    pub(super) fn sort(v: &mut Vec<Splice>, chunks: &[Chunk], n: usize) {
        let mut i = 0;
        while i < v.len() {
            let s = v[i];
            let after = v[..i].iter().any(|e| e.old == 0 && e.at >= n);
            let end = s.old > 0 && s.at.wrapping_add(s.old) == n && after;
            if let Some(from) = end.then(|| tail(&chunks[s.chunk], s.old, s.new)).flatten() {
                v[i].new = from;
                v.insert(
                    i + 1,
                    Splice {
                        at: n,
                        old: 0,
                        from,
                        ..s
                    },
                );
                i += 1;
            }
            i += 1;
        }
        v.sort_by_key(|s| (s.at, s.chunk));
    }
}

/// With `--diff`, a chunk's changed region goes to the diff [`Builder`]
/// in parts, ended at a context line it keeps once the part holds this
/// many changed lines or bytes: the builder compares a region line by line
/// only up to 256 edit steps and 128 KiB a side (past them it shows every
/// line of the region as removed and added again), and a context line
/// is the same in both texts, so a part may end there.
const PART_EDITS: usize = 64;
const PART_BYTES: usize = 16 << 10;

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
    /// Lines removed and added in `old` and `new`.
    edits: usize,
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
            edits: 0,
            open: false,
            n: 0,
        }
    }

    #[cfg_attr(as_edit_small, optimize(size))]
    #[inline(never)] // inlined into a closure it would be built at opt-level 3
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
        self.edits += 1;
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
                    // A context line still to come.
                    let ahead = |j: usize| keeps(c, j, s.old).is_some_and(|k| k >= i);
                    while j < s.new && !ahead(j) {
                        self.literal(s.chunk, j);
                        j += 1;
                    }
                    let kept = j < s.new && keeps(c, j, s.old) == Some(i);
                    if !kept {
                        self.edits += 1;
                    } else if self.edits >= PART_EDITS || self.old.len() > PART_BYTES {
                        self.part();
                    }
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
        if s.from == 0 {
            self.starts[s.chunk] = self.written + 1;
        }
        self.active = Some((self.next, 0, s.from));
        self.next += 1;
    }

    /// The rest of the active splice's new lines, from `j`.
    #[cfg_attr(as_edit_small, optimize(size))]
    fn close(&mut self, s: Splice, j: usize) {
        (j..s.new).for_each(|j| self.literal(s.chunk, j));
        self.active = None;
        self.part();
    }

    /// The changed region so far to the diff (both sides end a line, or
    /// the text).
    fn part(&mut self) {
        if let Some(d) = self.diff.as_mut() {
            if !self.old.is_empty() || !self.new.is_empty() {
                d.change(&self.old, &self.new);
            }
        }
        self.old.clear();
        self.new.clear();
        self.edits = 0;
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
            self.close(self.splices[i], self.splices[i].from);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::diff::{unified, Builder, CAP};
    use crate::patch::{parse, passes::resolve, Hunk};

    /// The `--diff` of `body` applied to `text` by the passes, and
    /// `unified`'s over both whole texts.
    fn diffs(text: &str, body: &str) -> (String, String) {
        let p = parse(&format!(
            "*** Begin Patch\n*** Update File: f\n{body}*** End Patch"
        ))
        .unwrap();
        let Hunk::Update { chunks, .. } = &p.hunks[0] else {
            panic!("an update")
        };
        let (mut out, mut b) = (Vec::new(), Builder::new("f", CAP));
        let mut source = |each: &mut dyn FnMut(&[u8])| {
            text.as_bytes().chunks(1000).for_each(&mut *each);
            true
        };
        let put = &mut |x: &[u8]| out.extend_from_slice(x);
        resolve(chunks, false, &mut source, put, Some(&mut b)).unwrap();
        let new = String::from_utf8(out).unwrap();
        (b.finish().0, unified(text, &new, "f", 3, CAP).0)
    }

    /// A chunk larger than the diff builder keeps of a changed region
    /// (128 KiB), or with more changes than its Myers step bound (256),
    /// still shows only its changed lines, as over the whole texts: not
    /// every line of the chunk removed and added again.
    #[test]
    fn a_large_chunk_shows_only_its_changes() {
        let lines: Vec<String> = (0..10_000).map(|i| format!("line number {i:05}")).collect();
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        let ctx = |r: std::ops::Range<usize>| -> String {
            lines[r].iter().map(|l| format!(" {l}\n")).collect()
        };
        // 4,000 lines of context, one change, 3,899 more (160 KiB).
        let body = format!(
            "@@\n{}-{}\n+CHANGED\n{}",
            ctx(100..4100),
            lines[4100],
            ctx(4101..8000)
        );
        let (got, want) = diffs(&text, &body);
        assert!(want.contains("@@ -4098,7 +4098,7 @@\n"), "{want}");
        assert!(got == want, "{}", &got[..got.len().min(300)]);
        // 400 lines, every other one changed (400 edits).
        let body: String = (100..500)
            .map(|i| match i % 2 {
                1 => format!("-{}\n+changed {i}\n", lines[i]),
                _ => format!(" {}\n", lines[i]),
            })
            .collect();
        let (got, want) = diffs(&text, &format!("@@\n{body}"));
        assert_eq!(got.matches("\n-").count(), 200, "{}", &got[..300]);
        assert!(got == want);
    }
}
