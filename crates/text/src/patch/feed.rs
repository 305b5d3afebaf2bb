//! The lines of the text as `passes.rs` reads them, in memory bounded by
//! the patch: each line whole up to `3 * hold` bytes, a longer one
//! compacted or dropped without changing the grade at which it matches any
//! patch line (`passes.rs`'s module docs). Pure.

use super::Source;

/// The lines of a text fed in pieces: each given whole to `each`, up to
/// `3 * hold` bytes; a longer one compacted or dropped (`None`).
struct Lines {
    hold: usize,
    /// The longest patch line in bytes.
    bound: usize,
    /// Only exact matches count: a line longer than `bound` matches none.
    exact: bool,
    line: Vec<u8>,
    /// Bytes of the current line were seen.
    open: bool,
    dead: bool,
    n: usize,
}

impl Lines {
    fn new(bound: usize, exact: bool) -> Lines {
        Lines {
            hold: 4 * bound + 1024,
            bound,
            exact,
            line: Vec::new(),
            open: false,
            dead: false,
            n: 0,
        }
    }

    #[cfg_attr(as_edit_small, optimize(size))]
    #[inline(never)] // inlined into a closure it would be built at opt-level 3
    fn feed(&mut self, mut b: &[u8], each: &mut dyn FnMut(usize, Option<&[u8]>)) {
        while !b.is_empty() {
            let (seg, nl) = match memchr::memchr(b'\n', b) {
                Some(i) => (&b[..i], true),
                None => (b, false),
            };
            b = &b[seg.len() + usize::from(nl)..];
            self.open |= !seg.is_empty();
            if !self.dead {
                self.line.extend_from_slice(seg);
                if self.exact && self.line.len() > self.bound {
                    self.dead = true;
                } else if self.line.len() > 3 * self.hold {
                    self.compact();
                }
                if self.dead {
                    self.line = Vec::new();
                }
            }
            if nl {
                self.end(each);
            }
        }
    }

    fn end(&mut self, each: &mut dyn FnMut(usize, Option<&[u8]>)) {
        each(self.n, (!self.dead).then_some(&self.line[..]));
        self.n += 1;
        self.line.clear();
        (self.open, self.dead) = (false, false);
    }

    /// The text has ended: its last line, if it had no newline.
    fn finish(&mut self, each: &mut dyn FnMut(usize, Option<&[u8]>)) {
        if self.open {
            self.end(each);
        }
    }

    /// Blank runs at the ends longer than `hold` become `hold + 1` spaces;
    /// a trimmed text longer than `bound` characters matches nothing.
    #[cold]
    #[cfg_attr(as_edit_small, optimize(size))]
    fn compact(&mut self) {
        let l = std::mem::take(&mut self.line);
        let valid = match std::str::from_utf8(&l) {
            Ok(_) => l.len(),
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            Err(_) => return self.dead = true, // the file changed
        };
        let s = std::str::from_utf8(&l[..valid]).expect("valid");
        let lead = s.len() - s.trim_start().len();
        let core = s.trim().len();
        if s[lead..lead + core].chars().count() > self.bound {
            return self.dead = true;
        }
        let run = |r: &str, v: &mut Vec<u8>| match r.len() > self.hold {
            true => v.resize(v.len() + self.hold + 1, b' '),
            false => v.extend_from_slice(r.as_bytes()),
        };
        let mut v = Vec::with_capacity(3 * self.hold);
        run(&s[..lead], &mut v);
        v.extend_from_slice(&s.as_bytes()[lead..lead + core]);
        if core > 0 {
            run(&s[lead + core..], &mut v);
        }
        v.extend_from_slice(&l[valid..]);
        self.line = v;
    }
}

/// One pass: every line of the text, numbered; the line count, or `None`
/// when the source failed.
pub(super) fn scan(
    source: &mut Source<'_>,
    bound: usize,
    exact: bool,
    each: &mut dyn FnMut(usize, Option<&[u8]>),
) -> Option<usize> {
    let mut lines = Lines::new(bound, exact);
    let fed = source(&mut |b| lines.feed(b, each));
    lines.finish(each);
    fed.then_some(lines.n)
}

/// The last lines of the text, for the searches anchored past their first
/// line (`passes.rs`): at most as many as the longest pattern has, each as
/// [`scan`] gives it (`None`: dropped, it matches nothing).
pub(super) struct Ring {
    lines: Vec<(Vec<u8>, bool)>,
    n: usize,
}

impl Ring {
    /// Holds the last `len` lines.
    pub(super) fn new(len: usize) -> Ring {
        Ring {
            lines: vec![(Vec::new(), false); len],
            n: 0,
        }
    }

    /// The next line.
    pub(super) fn push(&mut self, l: Option<&[u8]>) {
        if let Some(at) = self.n.checked_rem(self.lines.len()) {
            let (v, live) = &mut self.lines[at];
            v.clear();
            v.extend_from_slice(l.unwrap_or_default());
            *live = l.is_some();
        }
        self.n += 1;
    }

    /// Line `i`, one of the last `len` pushed.
    pub(super) fn get(&self, i: usize) -> Option<&[u8]> {
        assert!(
            i < self.n && self.n - i <= self.lines.len(),
            "line {i} held"
        );
        let (v, live) = &self.lines[i % self.lines.len()];
        live.then_some(&v[..])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::patch::find::{best, tests::rng};
    use crate::patch::locate::Grade;

    /// A line longer than `3 * hold` is compacted (long blank runs at its
    /// ends cut to `hold + 1` spaces) or dropped: either way it matches
    /// every patch line at the grade the whole line does, fed in any
    /// pieces (characters split across them).
    #[test]
    fn compacted_lines_match_at_the_same_grade() {
        let parts = [
            " ", "\t", "\u{3000}", "\u{a0}", "a", "b", "\u{201C}", "-", "\u{2013}",
        ];
        let pats = ["a", "a b", " a", "a ", "\"a", "-b", "\u{3000}a", "ab", ""];
        let bound = pats.iter().map(|p| p.len()).max().unwrap();
        let mut r = rng(0xc0de);
        let mut long = 0;
        for _ in 0..400 {
            let mut line = String::new();
            for _ in 0..r(6) {
                let p = parts[r(parts.len())];
                let times = [1, 1, 2, 700, 3000][r(5)];
                line.push_str(&p.repeat(times));
            }
            long += usize::from(line.len() > 3 * (4 * bound + 1024));
            for exact in [false, true] {
                let max = Grade::loosest(exact);
                let mut lines = Lines::new(bound, exact);
                let mut got = Vec::new();
                let text = format!("{line}\n");
                for c in text.as_bytes().chunks(1 + r(5000)) {
                    lines.feed(c, &mut |_, l| got.push(l.map(<[u8]>::to_vec)));
                }
                assert_eq!(got.len(), 1);
                for p in pats {
                    let want = best(line.as_bytes(), p, max);
                    let have = got[0].as_deref().and_then(|l| best(l, p, max));
                    assert_eq!(have, want, "{p:?} {exact} {line:?}");
                }
            }
        }
        assert!(long > 100, "{long}");
    }
}
