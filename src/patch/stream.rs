//! [`locate`](super::locate) in one pass over the file, for the binary:
//! memory bounded by the patch, not the file (issue 20). Pure: the caller
//! feeds the text (strict UTF-8, LF-normalized) piece by piece and takes
//! the new text as it is made.
//!
//! The pass speculates that every header is its first exact line at or
//! after the point and every chunk its first exact occurrence, writes the
//! new text as the lines go by, and watches each placed chunk to the end
//! of the file for a second exact occurrence in the part open to it. When
//! every header and chunk matched exactly and none occurs twice, that is
//! the locator's answer (exact is the first grade, and each place is then
//! the only one at it); anything else (a miss, a second occurrence, so a
//! refusal or a looser grade or the retry without a final empty line) is
//! `None`, and the caller discards what was written and runs the locator
//! on the whole text, which answers with its refusal and hints.
//!
//! One pass, so no second read can disagree with the first: the output is
//! written while the file is read, and only kept if the pass proves it.
//! A fallback costs what the pass wrote (an unnamed temp, dropped) and a
//! second read, and then holds the text as the locator does.
//!
//! Held: the patch; the current line up to the longest line the chunks
//! compare (a longer line matches none and streams through); each chunk's
//! partial-match starts (the lines of the searched chunk's partial match
//! are its own old lines, so none is copied). Each line is compared with
//! every placed chunk's first old line until the end of the file, so more
//! than 64 chunks are left to the locator.

use super::parse::Chunk;

/// More chunks than this are placed in memory: each line is compared with
/// every placed chunk's first old line (a cost of lines times chunks).
const MAX_CHUNKS: usize = 64;

/// Per chunk, the 1-based line of the new text where it starts, as
/// `write` reports it (every chunk matched exactly).
pub type Placements = Vec<u64>;

struct Pass<'c, 'o> {
    chunks: &'c [Chunk],
    out: &'o mut dyn FnMut(&[u8]),
    /// Per chunk: the starts of its partial matches, oldest first.
    starts: Vec<Vec<usize>>,
    /// The chunk searched (every one before it is placed), and how many
    /// of its headers are found (more than it has: its old lines).
    k: usize,
    h: usize,
    /// The longest line a chunk compares: a longer one matches none.
    bound: usize,
    /// The current line while it is not longer than `bound`; `long`: it
    /// is, and streams through.
    line: Vec<u8>,
    long: bool,
    /// Lines passed.
    n: usize,
    /// Lines `hold_at..n` are held: the searched chunk's partial matches,
    /// written once they fail. The oldest starts at `hold_at`, so they are
    /// its first old lines and need no copy.
    hold_at: usize,
    /// Pure additions (line they go before, `usize::MAX` the end; chunk).
    pending: Vec<(usize, usize)>,
    written: usize,
    placed: Placements,
    /// Per chunk, its 1-based line in the old text, as `locate` reports it.
    #[cfg(test)]
    old_lines: Vec<usize>,
    failed: bool,
    /// The output differed from the text: `out(&[])` said so (module docs).
    changed: bool,
    /// At the end: the newline of an unterminated last line is the pass's,
    /// held (`nl`) until the mark, which a refusal never makes.
    end: bool,
    nl: bool,
}

/// Runs the pass: `source` feeds the whole text to its argument (false:
/// it could not), `out` takes the new text, and an empty piece once just
/// before the first that is not the text's own (until then the output is
/// the text, byte for byte: the caller need not write it before then, so
/// a refusal met before writes nothing). `None`: not proved (module
/// docs), the output is to be discarded.
#[inline(never)] // not into a caller's closure, compiled for speed
#[cfg_attr(as_edit_small, optimize(size))]
pub fn run(
    chunks: &[Chunk],
    source: &mut crate::txn::Source<'_>,
    out: &mut dyn FnMut(&[u8]),
) -> Option<Placements> {
    if chunks.len() > MAX_CHUNKS {
        return None;
    }
    let mut bound = 0;
    for c in chunks {
        c.old
            .iter()
            .chain(&c.headers)
            .for_each(|l| bound = bound.max(l.len()));
    }
    let mut p = Pass {
        chunks,
        out,
        starts: vec![Vec::new(); chunks.len()],
        k: 0,
        h: 0,
        bound,
        line: Vec::new(),
        long: false,
        n: 0,
        hold_at: 0,
        pending: Vec::new(),
        written: 0,
        placed: vec![0; chunks.len()],
        #[cfg(test)]
        old_lines: vec![0; chunks.len()],
        failed: false,
        changed: false,
        end: false,
        nl: false,
    };
    p.start(0, false);
    let fed = source(&mut |b| p.feed(b));
    p.finish();
    #[cfg(test)]
    OLD_LINES.with(|o| *o.borrow_mut() = p.old_lines);
    (fed && !p.failed).then_some(p.placed)
}

#[cfg(test)]
thread_local! {
    /// The last pass's old lines, for the tests.
    static OLD_LINES: std::cell::RefCell<Vec<usize>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl Pass<'_, '_> {
    #[cfg_attr(as_edit_small, optimize(size))]
    fn emit(&mut self, l: &[u8]) {
        self.put(l);
        self.newline();
        self.written += 1;
    }

    fn newline(&mut self) {
        match self.end && !self.changed {
            true => self.nl = true,
            false => (self.out)(b"\n"),
        }
    }

    /// Output, never empty: an empty piece is the change mark.
    fn put(&mut self, b: &[u8]) {
        if !b.is_empty() {
            (self.out)(b);
        }
    }

    /// What follows is not the text's own.
    fn mark(&mut self) {
        if !self.changed {
            self.changed = true;
            (self.out)(&[]);
            if self.nl {
                (self.out)(b"\n");
            }
        }
    }

    #[inline(never)] // not into run's closure
    #[cfg_attr(as_edit_small, optimize(size))]
    fn feed(&mut self, mut b: &[u8]) {
        while !b.is_empty() && !self.failed {
            let (seg, nl) = match memchr::memchr(b'\n', b) {
                Some(i) => (&b[..i], true),
                None => (b, false),
            };
            b = &b[seg.len() + usize::from(nl)..];
            if self.long {
                self.put(seg);
            } else {
                self.line.extend_from_slice(seg);
                if self.line.len() > self.bound {
                    // Too long to match: it passes through as it comes.
                    self.on_line(None);
                    self.long = true;
                    (self.out)(&self.line); // longer than `bound`: not empty
                }
            }
            if nl {
                self.end_line();
            }
        }
    }

    #[cfg_attr(as_edit_small, optimize(size))]
    fn end_line(&mut self) {
        match self.long {
            true => self.newline(),
            false => {
                let l = std::mem::take(&mut self.line);
                self.on_line(Some(&l));
                self.line = l;
            }
        }
        self.line.clear();
        self.long = false;
    }

    /// Chunk `k` is searched from line `from` (`headed`: its headers are
    /// found): a pure addition is placed at once, and so on.
    #[cfg_attr(as_edit_small, optimize(size))]
    fn start(&mut self, from: usize, headed: bool) {
        self.h = if headed { usize::MAX } else { 0 };
        while let Some(c) = self.chunks.get(self.k) {
            if self.h < c.headers.len() || !c.old.is_empty() {
                return;
            }
            // As `locate`: the end without a header or with End of File.
            let at = match c.headers.is_empty() || c.eof {
                true => usize::MAX,
                false => from,
            };
            self.pending.push((at, self.k));
            self.k += 1;
            self.h = 0;
        }
    }

    /// Advances chunk `c`'s partial matches by line `n`; whether one of
    /// them is now whole.
    #[cfg_attr(as_edit_small, optimize(size))]
    fn advance(&mut self, c: usize, n: usize, l: Option<&[u8]>) -> bool {
        let old = &self.chunks[c].old;
        let v = &mut self.starts[c];
        let l = l.unwrap_or(b"\n"); // no line holds a newline
        let mut kept = 0;
        for i in 0..v.len() {
            let s = v[i];
            if n - s < old.len() && old[n - s].as_bytes() == l {
                v[kept] = s;
                kept += 1;
            }
        }
        v.truncate(kept);
        if old[0].as_bytes() == l {
            v.push(n);
        }
        v.first().is_some_and(|&s| n + 1 - s == old.len())
    }

    /// Writes the held lines before line `to` (at most the current one).
    #[cfg_attr(as_edit_small, optimize(size))]
    fn release(&mut self, to: usize) {
        let old = &self.chunks[self.k].old;
        for i in self.hold_at..to {
            let l = old[i - self.hold_at].as_bytes();
            self.put(l);
            (self.out)(b"\n");
        }
        self.written += to.saturating_sub(self.hold_at);
        self.hold_at = to.max(self.hold_at);
    }

    /// Chunk `k` replaces its old lines from line `at` (or is added there).
    #[cfg_attr(as_edit_small, optimize(size))]
    fn splice(&mut self, k: usize, at: usize) {
        self.mark();
        let c = &self.chunks[k];
        #[cfg(test)]
        {
            self.old_lines[k] = at + 1;
        }
        let _ = at; // the old line: the tests' only
        self.placed[k] = self.written as u64 + 1;
        for (j, l) in c.new.iter().enumerate() {
            // Exact: the file's context line is the chunk's.
            let l = match c.keep.get(j) {
                Some(&Some(x)) if x < c.old.len() => &c.old[x],
                _ => l,
            };
            self.emit(l.as_bytes());
        }
    }

    /// Writes the additions due before the next line (`end`: all that
    /// wait, at the end of the file), in chunk order as `locate` sorts.
    #[cfg_attr(as_edit_small, optimize(size))]
    fn additions(&mut self, end: bool) {
        let mut i = 0;
        while let Some(&(at, k)) = self.pending.get(i) {
            if end || at == self.n {
                self.pending.remove(i);
                self.splice(k, self.n);
            } else {
                i += 1;
            }
        }
    }

    /// Line `self.n`; `None`: longer than any a chunk compares (the caller
    /// writes it).
    #[cfg_attr(as_edit_small, optimize(size))]
    fn on_line(&mut self, l: Option<&[u8]>) {
        self.additions(false);
        let (k, n) = (self.k, self.n);
        self.n += 1;
        for c in 0..k {
            if !self.chunks[c].old.is_empty() && self.advance(c, n, l) {
                // A second exact occurrence: the locator refuses.
                self.failed = true;
            }
        }
        let mut held = false;
        if let Some(c) = self.chunks.get(k) {
            if self.h < c.headers.len() {
                if l == Some(c.headers[self.h].as_bytes()) {
                    self.h += 1;
                    if self.h == c.headers.len() {
                        self.start(n + 1, true);
                    }
                }
            } else if self.advance(k, n, l) && !c.eof {
                let s = self.starts[k].remove(0);
                self.release(s);
                self.hold_at = n + 1;
                self.splice(k, s);
                self.k += 1;
                return self.start(n + 1, false);
            } else {
                let first = self.starts[k].first().copied().unwrap_or(n + 1);
                self.release(first.min(n));
                held = first <= n;
            }
        }
        match l {
            Some(_) if held => return,
            Some(l) => self.emit(l),
            None => self.written += 1,
        }
        self.hold_at = n + 1;
    }

    #[cfg_attr(as_edit_small, optimize(size))]
    fn finish(&mut self) {
        self.end = true;
        if self.long || !self.line.is_empty() {
            self.end_line();
        }
        let (k, n) = (self.k, self.n);
        if let Some(c) = self
            .chunks
            .get(k)
            .filter(|c| c.eof && self.h >= c.headers.len())
        {
            // End of File: a match ending at the last line.
            if self.starts[k].first() == Some(&n.wrapping_sub(c.old.len())) {
                self.splice(k, n - c.old.len());
                self.k += 1;
                self.start(n, false);
            }
        }
        self.additions(true);
        self.failed |= self.k < self.chunks.len();
        if !self.failed {
            self.mark(); // a held final newline
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::patch::find::same as matches_at;
    use crate::patch::find::tests::rng;
    use crate::patch::locate::{self, Grade};

    /// The pass on `text` fed in pieces of at most `piece` bytes.
    fn pass(text: &str, chunks: &[Chunk], piece: usize) -> Option<(String, Lines)> {
        let mut out = Vec::new();
        let mut source = |each: &mut dyn FnMut(&[u8])| {
            text.as_bytes().chunks(piece).for_each(&mut *each);
            true
        };
        let r = run(chunks, &mut source, &mut |b| out.extend_from_slice(b));
        let old = OLD_LINES.with(|o| o.take());
        r.map(|p| (String::from_utf8(out).unwrap(), (old, p)))
    }

    /// The locator's answer: text, old and new start lines, grades.
    type Lines = (Vec<usize>, Vec<u64>);

    fn oracle(text: &str, chunks: &[Chunk]) -> Result<(String, Lines, Vec<Grade>), ()> {
        let lines = locate::lines(text);
        let plan = locate::locate(&lines, chunks, false).map_err(|_| ())?;
        let mut s = String::new();
        let starts = locate::write(&lines, chunks, &plan, &mut |t| s.push_str(t));
        let old = plan.placed.iter().map(|p| p.line).collect();
        let new = starts.iter().map(|&l| l as u64).collect();
        Ok((s, (old, new), plan.placed.iter().map(|p| p.grade).collect()))
    }

    fn chunk(headers: &[&str], old: &[&str], new: &[&str], keep: Vec<Option<usize>>) -> Chunk {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect();
        Chunk {
            headers: s(headers),
            old: s(old),
            new: s(new),
            keep,
            eof: false,
            line: 1,
        }
    }

    /// Generated files and chunks (repeated lines, whitespace and
    /// punctuation damage, headers, End of File, pure additions, final
    /// empty old lines, lines longer than any chunk's): whenever the pass
    /// answers, it is the locator's answer (text, old and new lines, all
    /// exact); whenever it does not, the locator refused, matched loosely,
    /// or a chunk ended in an empty line (the retry).
    #[test]
    fn the_pass_answers_as_the_locator_or_not_at_all() {
        let words = [
            "a",
            "b",
            "x = 1",
            "}",
            "",
            "say(\"hi\")",
            "fn f() {",
            "  ret 0;",
        ];
        let long = "a line longer than any line of a chunk, ".repeat(3);
        let mut r = rng(0x57e4);
        let (mut same, mut fell, mut cases, mut refused) = (0, 0, 0, 0);
        for _ in 0..6000 {
            // Mostly distinct lines, or a few repeated ones.
            let (n, shape) = (r(24), r(3));
            let mut lines: Vec<String> = (0..n)
                .map(|i| match r(3) {
                    0 if shape == 0 => format!("v{i}"),
                    0 => words[r(words.len())].to_owned(),
                    _ if shape == 1 => words[r(3)].to_owned(),
                    _ => format!("v{i}"),
                })
                .collect();
            if n > 0 && r(8) == 0 {
                lines[r(n)] = long.clone();
            }
            let mut text: String = lines.iter().map(|l| format!("{l}\n")).collect();
            match r(5) {
                0 => {
                    text.pop();
                }
                1 => text = text.replace("x = 1\n", "x = 1 \n").replace('"', "\u{201C}"),
                _ => {}
            }
            let mut chunks = Vec::new();
            let mut at = 0;
            for _ in 0..1 + r(3) {
                let pick = |r: &mut dyn FnMut(usize) -> usize| match lines.is_empty() || r(4) == 0 {
                    true => words[r(words.len())].to_owned(),
                    false => lines[r(lines.len())].clone(),
                };
                // Where the chunk starts, and headers mostly between.
                let s = at + r(n + 1 - at.min(n));
                let mut hs: Vec<usize> = (0..[0, 0, 1, 2][r(4)]).map(|_| r(s - at + 1)).collect();
                hs.sort();
                hs.dedup();
                let headers: Vec<String> = (hs.iter())
                    .map(|&h| match at + h < s && r(8) != 0 {
                        true => lines[at + h].clone(),
                        false => pick(&mut r),
                    })
                    .filter(|h| !h.is_empty())
                    .collect();
                let mut old: Vec<String> = Vec::new();
                if r(6) != 0 {
                    let len = 1 + r(4);
                    if s < n && r(5) != 0 {
                        old = lines[s..(s + len).min(n)].to_vec();
                        at = s + old.len();
                    } else {
                        old = (0..len).map(|_| pick(&mut r)).collect();
                    }
                    if r(8) == 0 {
                        old[0].push(' ');
                    }
                    if r(8) == 0 {
                        old.push(String::new());
                    }
                }
                let (mut new, mut keep) = (Vec::new(), Vec::new());
                for (j, o) in old.iter().enumerate() {
                    match r(3) {
                        0 => {}
                        1 => {
                            new.push(format!("new {j}"));
                            keep.push(None);
                        }
                        _ => {
                            new.push(o.clone());
                            keep.push(Some(j));
                        }
                    }
                }
                if old.is_empty() || r(4) == 0 {
                    new.push("added".into());
                    keep.push(None);
                }
                chunks.push(Chunk {
                    headers,
                    old,
                    new,
                    keep,
                    eof: r(if at == n { 2 } else { 16 }) == 0,
                    line: 1,
                });
            }
            let want = oracle(&text, &chunks);
            for piece in [1, 3, 1 << 16] {
                cases += 1;
                match (pass(&text, &chunks, piece), &want) {
                    (Some((s, p)), Ok((ws, wp, grades))) => {
                        assert!(
                            grades.iter().all(|g| *g == Grade::Exact),
                            "{text:?} {chunks:?}"
                        );
                        assert_eq!((&s, &p), (ws, wp), "{text:?} {chunks:?}");
                        same += 1;
                    }
                    (Some(_), Err(())) => panic!("the locator refuses: {text:?} {chunks:?}"),
                    (None, Ok((_, _, grades))) => {
                        let retry = chunks
                            .iter()
                            .any(|c| c.old.last().is_some_and(|l| l.is_empty()));
                        let exact = grades.iter().all(|g| *g == Grade::Exact);
                        // A header that may have matched loosely.
                        let loose = |h: &String| {
                            let ls = locate::lines(&text);
                            ls.iter()
                                .any(|l| l != h && matches_at(l, h, Grade::Punctuation))
                        };
                        let header = chunks.iter().any(|c| c.headers.iter().any(loose));
                        assert!(
                            retry || !exact || header,
                            "not streamed: {text:?} {chunks:?}"
                        );
                        fell += 1;
                    }
                    (None, Err(())) => {
                        fell += 1;
                        refused += 1;
                    }
                }
            }
        }
        assert_eq!(same + fell, cases);
        assert!(
            same > cases / 5 && fell > cases / 10,
            "{same} streamed, {fell} fell back ({refused} refused)"
        );
    }

    #[test]
    fn placements_lines_and_bytes_by_hand() {
        let c = |old: &[&str], new: &[&str]| chunk(&[], old, new, vec![None; new.len()]);
        // A final line without a newline; CR already LF (the engine's).
        let t = "a\nb\nc";
        let got = pass(t, &[c(&["c"], &["C"])], 2).unwrap();
        assert_eq!(got, ("a\nb\nC\n".into(), (vec![3], vec![3])));
        // The empty file: a pure addition, and a chunk that is not there.
        assert_eq!(
            pass("", &[c(&[], &["x"])], 4).unwrap(),
            ("x\n".into(), (vec![1], vec![1]))
        );
        assert_eq!(pass("", &[c(&["x"], &[])], 4), None);
        // A second occurrence, even overlapping, is the locator's refusal.
        assert_eq!(pass("a\na\na\n", &[c(&["a", "a"], &[])], 1), None);
        // First line, last line, and an addition at the end before them.
        let chunks = [c(&[], &["t"]), c(&["1"], &["one"]), c(&["3"], &[])];
        let got = pass("1\n2\n3\n", &chunks, 1).unwrap();
        assert_eq!(got, ("one\n2\nt\n".into(), (vec![4, 1, 3], vec![3, 1, 3])));
        // A header, then its chunk; a context line kept.
        let h = chunk(&["fn g"], &["x", "y"], &["x", "z"], vec![Some(0), None]);
        let got = pass("fn f\nx\ny\nfn g\nx\ny\n", &[h], 5).unwrap();
        assert_eq!(got, ("fn f\nx\ny\nfn g\nx\nz\n".into(), (vec![5], vec![5])));
        // A partial match that fails is written as it was.
        let got = pass("a\na\nb\nx\na\nb\nc\n", &[c(&["a", "b", "c"], &["d"])], 1);
        assert_eq!(got.unwrap(), ("a\na\nb\nx\nd\n".into(), (vec![5], vec![5])));
        // A loose match is the locator's to make.
        assert_eq!(pass("b \n", &[c(&["b"], &["B"])], 1), None);
    }
}
