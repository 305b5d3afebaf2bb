#![doc = include_str!("passes.md")]

use super::chunk::{noop, widest, Chunk};
use super::feed::{scan, Ring};
use super::locate::{place, Grade, Hit, Placed, Refusal, Search};
use super::matches::Matches;
use super::table::{Counts, Keys, Table};
use crate::diff::Builder;

/// Feeds the whole text to its argument; false: it could not.
pub use super::Source;

/// Why no answer: the chunk refused (with the complete count of its
/// occurrences, which `Miss::Multiple`'s lines stop short of), or the
/// source failed.
#[derive(Debug, PartialEq, Eq)]
pub enum Failed {
    /// The locator's refusal, and the count of occurrences.
    Refused(Refusal, usize),
    /// A pass could not read the text.
    Source,
}

/// What the passes found: the locator's placements, and each chunk's
/// 1-based start line in the new text (`write`'s answer).
#[derive(Debug, PartialEq, Eq)]
pub struct Resolved {
    /// Per chunk, in chunk order.
    pub placed: Vec<Placed>,
    /// Per chunk, in the new text.
    pub starts: Vec<usize>,
}

/// From this many searches, a first pass counts their lines in the text to
/// anchor each on its rarest (fewer would not repay a read; the tests
/// anchor from two, to compare more cases with the locator).
const COUNT_FROM: usize = if cfg!(test) { 2 } else { 8 };

/// A pure addition placed at the end of the file (its length unknown yet).
const END: usize = usize::MAX;

use super::rewrite::{Splice, Writer};

/// The searches (chunk, header or `None` for its old lines), and the
/// anchors of each one's old lines and retry.
type Steps<'s> = (&'s [(usize, Option<usize>)], &'s [[usize; 2]]);

/// Whether the search of chunk `c`'s old lines (`h`: its header) is
/// retried without a final empty old line, as the locator does.
fn retried(c: &Chunk, h: Option<usize>) -> bool {
    h.is_none() && !c.separated && c.old.last().is_some_and(|l| l.is_empty())
}

/// One search of the locator from `from`: header `h` of chunk `ci`, or
/// (`None`) its old lines, with the retry without a final empty line.
struct Stage<'c> {
    step: usize,
    from: usize,
    m: Matches<'c>,
    r: Option<Matches<'c>>,
    /// Old lines of an `*** End of File` chunk: what follows waits.
    eof: bool,
    /// A header: its first match decides, however many follow.
    header: bool,
}

impl<'c> Stage<'c> {
    fn new(
        chunks: &'c [Chunk],
        (steps, anchors): Steps<'_>,
        step: usize,
        from: usize,
        max: Grade,
    ) -> Self {
        let [a, ra] = anchors[step];
        let (ci, h) = steps[step];
        let c = &chunks[ci];
        let old = match h {
            Some(h) => std::slice::from_ref(&c.headers[h]),
            None => &c.old[..],
        };
        let again = retried(c, h);
        let r = again.then(|| Matches::new(&old[..old.len() - 1], max, from, ra));
        Stage {
            step,
            from,
            m: Matches::new(old, max, from, a),
            r,
            eof: h.is_none() && c.eof,
            // A chunk that changes nothing takes its first match, as a
            // header (`chunk::noop`; End of File has one place).
            header: h.is_some() || !c.eof && noop(c),
        }
    }

    /// Once an exact match decides, only what can still change the
    /// answer is compared: a header's first is it; a chunk's looser
    /// matches and its retry no longer count (at the end of the file
    /// they still might: `*** End of File`).
    #[inline(never)]
    #[cfg_attr(as_edit_small, optimize(size))]
    fn line(&mut self, n: usize, l: Option<&[u8]>, ring: &Ring) {
        let exact = self.m.count[0] > 0;
        if exact && self.header {
            return;
        }
        if exact && !self.eof {
            self.m.max = Grade::Exact;
        }
        self.m.line(n, l, ring);
        if let Some(r) = self.r.as_mut().filter(|_| self.eof || self.m.count[3] == 0) {
            r.line(n, l, ring);
        }
    }

    /// Whether a partial match is under way that the next line advances
    /// (without one, a line changes nothing unless it can start a match).
    fn busy(&self) -> bool {
        let exact = self.m.count[0] > 0;
        let r = (self.r.as_ref()).filter(|_| self.eof || self.m.count[3] == 0);
        !(exact && self.header)
            && (!self.m.starts.is_empty() || r.is_some_and(|r| !r.starts.is_empty()))
    }

    /// Where the next search starts if the lines seen so far decide this
    /// one: its best match, while it is the only one at its grade (a
    /// header's first).
    fn next(&self) -> Option<usize> {
        let m = match self.m.first() {
            Some(f) => (f, self.m.old.len()),
            None => (self.r.as_ref()?.first()?, self.r.as_ref()?.old.len()),
        };
        (!self.eof && (m.0 .2 == 1 || self.header)).then_some(m.0 .1 + m.1)
    }
}

/// One pass: the search `step` from `from`, and chained to it, each later
/// search from where the one before would leave it, started again when
/// that changes (a match ends on the line just read, so the next search
/// misses no line it would see in its own pass). The searches and the
/// line count.
#[cfg_attr(as_edit_small, optimize(size))]
#[inline(never)]
fn chained<'c>(
    chunks: &'c [Chunk],
    steps: Steps<'_>,
    (step, from): (usize, usize),
    (max, bound, strict): (Grade, usize, bool),
    (table, source): (&Table, &mut Source<'_>),
) -> Result<(Vec<Stage<'c>>, usize), Failed> {
    let held = steps.1.iter().flatten().max().copied().unwrap_or(0);
    let mut c = Chain {
        stages: vec![Stage::new(chunks, steps, step, from, max)],
        chunks,
        steps,
        max,
        table,
        ring: Ring::new(held),
        keys: Keys::default(),
        busy: Vec::new(),
        todo: Vec::new(),
    };
    let each = &mut |i: usize, l: Option<&[u8]>| c.advance(i, l);
    let n = scan(source, bound, strict, each).ok_or(Failed::Source)?;
    c.stages.reverse();
    Ok((c.stages, n))
}

/// The searches of one pass (`stages[j]` is step `stages[0].step + j`),
/// and those a line can change: the ones with a partial match under way
/// (`busy`) and those its keys say it can start (`table.rs`).
struct Chain<'c, 's> {
    stages: Vec<Stage<'c>>,
    chunks: &'c [Chunk],
    /// The searches, and the anchors of each one's old lines and retry.
    steps: Steps<'s>,
    max: Grade,
    table: &'s Table,
    /// The lines before the current one the anchored searches look back to.
    ring: Ring,
    keys: Keys,
    busy: Vec<usize>,
    todo: Vec<usize>,
}

impl Chain<'_, '_> {
    /// Line `i` (`l`, None past the end) to every search it can change
    /// (to any other it is nothing: no partial match to advance or
    /// start), the chain cut where a search would start elsewhere and
    /// grown where the last one's next search can start. Built for size,
    /// as the rest of the passes, not inlined into its closure.
    #[cfg_attr(as_edit_small, optimize(size))]
    #[inline(never)]
    fn advance(&mut self, i: usize, l: Option<&[u8]>) {
        let mut todo = std::mem::take(&mut self.todo);
        todo.clear();
        if let Some(l) = l {
            self.table.hits(&self.keys.of(l, self.max), &mut todo);
            // Steps to positions in the chain.
            let (base, len) = (self.stages[0].step, self.stages.len());
            todo.retain_mut(|s| {
                *s = s.wrapping_sub(base);
                *s < len
            });
        }
        todo.append(&mut self.busy);
        todo.sort_unstable();
        todo.dedup();
        for &j in &todo {
            let Some(s) = self.stages.get_mut(j) else {
                break; // cut: so is every later one
            };
            s.line(i, l, &self.ring);
            if s.busy() {
                self.busy.push(j);
            }
            let next = s.next();
            let k = s.step + 1;
            if self.stages.get(j + 1).is_some_and(|s| Some(s.from) != next) {
                self.stages.truncate(j + 1);
            }
            if self.stages.len() == j + 1 && next == Some(i + 1) && k < self.steps.0.len() {
                let s = Stage::new(self.chunks, self.steps, k, i + 1, self.max);
                self.stages.push(s);
            }
        }
        #[cfg(test)]
        STAGE_LINES.with(|c| c.set(c.get() + todo.len()));
        self.todo = todo;
        self.ring.push(l);
    }
}

#[cfg(test)]
thread_local! {
    /// Lines given to a search (`Stage::line` calls), for the tests.
    static STAGE_LINES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Places every chunk as `locate` does, then writes the new text to `out`
/// as `write` does (and its diff to `diff`): module docs.
#[cfg_attr(as_edit_small, optimize(size))]
pub fn resolve(
    chunks: &[Chunk],
    strict: bool,
    source: &mut Source<'_>,
    out: &mut dyn FnMut(&[u8]),
    diff: Option<&mut Builder>,
) -> Result<Resolved, Failed> {
    let max = Grade::loosest(strict);
    let bound = widest(chunks);
    let steps: Vec<(usize, Option<usize>)> = (chunks.iter().enumerate())
        .flat_map(|(ci, c)| {
            let old = (!c.old.is_empty()).then_some((ci, None));
            (0..c.headers.len()).map(move |h| (ci, Some(h))).chain(old)
        })
        .collect();
    // Each search is anchored on its rarest line (counted in a pass of its
    // own when there are many searches) and a line is compared only with
    // the searches whose anchor it can match (table.rs) and those under way.
    let pats = |&(ci, h): &(usize, Option<usize>)| match h {
        Some(h) => std::slice::from_ref(&chunks[ci].headers[h]),
        None => &chunks[ci].old[..],
    };
    let mut counts = None;
    if steps.len() >= COUNT_FROM && steps.iter().any(|s| pats(s).len() > 1) {
        let mut c = Counts::new(steps.iter().flat_map(pats).map(String::as_str), max);
        let add = &mut |_, l: Option<&[u8]>| l.into_iter().for_each(|l| c.add(l));
        scan(source, bound, strict, add).ok_or(Failed::Source)?;
        counts = Some(c);
    }
    let anchors: Vec<[usize; 2]> = (steps.iter())
        .map(|s| match &mut counts {
            Some(c) => {
                let (old, a) = (pats(s), c.rarest(pats(s)));
                // The retry's old lines are the chunk's without the last.
                match retried(&chunks[s.0], s.1) {
                    true => [a, c.rarest(&old[..old.len() - 1])],
                    false => [a, a],
                }
            }
            None => [0, 0],
        })
        .collect();
    let anchored = steps.iter().zip(&anchors).enumerate();
    let firsts = anchored.flat_map(|(i, (s, a))| {
        let both = &a[..1 + usize::from(a[0] != a[1])];
        both.iter()
            .filter_map(move |&j| Some((i, pats(s).get(j)?.as_str())))
    });
    let table = Table::new(firsts, max);
    // The searches of the last pass still to take, last first; the last
    // taken (for its retry).
    let (mut ready, mut n, mut step) = (Vec::new(), 0, 0);
    let mut taken: Option<Stage<'_>> = None;
    let search = &mut |ci: usize, what: Search, cursor: usize| -> Result<Option<Hit>, Failed> {
        let eof = chunks[ci].eof;
        if let Search::Retry = what {
            let s = taken.as_ref().expect("a search");
            return Ok(s.r.as_ref().expect("a retry").found(n, eof));
        }
        if !ready
            .last()
            .is_some_and(|s: &Stage| s.step == step && s.from == cursor)
        {
            let how = (max, bound, strict);
            let steps = (&steps[..], &anchors[..]);
            (ready, n) = chained(chunks, steps, (step, cursor), how, (&table, source))?;
        }
        step += 1;
        let s = taken.insert(ready.pop().expect("a search"));
        Ok(match what {
            Search::Header(_) => s.m.found(n, false),
            _ => s.m.found(n, eof),
        })
    };
    let (mut splices, mut placed) = place(chunks, END, search, Failed::Refused)?;
    Splice::sort(&mut splices, chunks, n);
    let mut w = Writer::new(chunks, &splices, out, diff);
    let fed = source(&mut |b| w.feed(b));
    w.finish();
    if !fed {
        return Err(Failed::Source);
    }
    let n = w.n;
    for p in placed.iter_mut().filter(|p| p.line == 0) {
        p.line = n + 1;
    }
    Ok(Resolved {
        placed,
        starts: w.starts,
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::hints::OCCURRENCE_LINES_MAX;
    use crate::patch::find::tests::rng;
    use crate::patch::locate;
    use crate::patch::locate::Miss;

    type Answer = (String, Vec<Placed>, Vec<usize>);

    /// The passes on `text` fed in pieces of `piece` bytes.
    pub(in crate::patch) fn passes(
        text: &str,
        chunks: &[Chunk],
        strict: bool,
        piece: usize,
    ) -> Result<Answer, Failed> {
        let mut out = Vec::new();
        let mut source = |each: &mut dyn FnMut(&[u8])| {
            text.as_bytes().chunks(piece).for_each(&mut *each);
            true
        };
        let r = resolve(
            chunks,
            strict,
            &mut source,
            &mut |b| out.extend_from_slice(b),
            None,
        )?;
        Ok((String::from_utf8(out).unwrap(), r.placed, r.starts))
    }

    /// The locator's answer, its refusal's lines cut as the passes cut them.
    pub(in crate::patch) fn oracle(
        text: &str,
        chunks: &[Chunk],
        strict: bool,
    ) -> Result<Answer, Failed> {
        let lines = locate::lines(text);
        match locate::locate(&lines, chunks, strict) {
            Ok(plan) => {
                let mut s = String::new();
                let starts = locate::write(&lines, chunks, &plan, &mut |t| s.push_str(t));
                Ok((s, plan.placed, starts))
            }
            Err(mut r) => {
                let mut count = 0;
                if let Miss::Multiple { lines, .. } = &mut r.miss {
                    count = lines.len();
                    lines.truncate(OCCURRENCE_LINES_MAX);
                }
                Err(Failed::Refused(r, count))
            }
        }
    }

    fn damage(s: &str, how: usize) -> String {
        match how {
            0 => format!("{s} "),
            1 => format!("{s}\t "),
            2 => format!("  {s}"),
            3 => s.replace('"', "\u{201C}"),
            4 => s.replace('-', "\u{2013}").replace('"', "\u{201D}"),
            5 => s.replace(' ', "\u{a0}"),
            6 => format!("\u{3000}{s}"),
            _ => s.to_owned(),
        }
    }

    /// Generated files and patches (repeated lines, loose damage in the
    /// file and in the patch's context and headers, headers, End of File,
    /// pure additions, final empty old lines, text without a final
    /// newline, long blank-padded lines): the passes answer exactly as the
    /// locator and `write` do, every placement, grade, line, refusal and
    /// byte, strict or not, in any piece size.
    #[test]
    fn the_passes_answer_as_the_locator() {
        let words = [
            "a",
            "b",
            "x = 1",
            "}",
            "",
            "say(\"hi\")",
            "fn f() {",
            "  ret 0;",
            "a - b",
        ];
        let pad = format!("{}b{}", " ".repeat(5000), "\t".repeat(4000));
        let mut r = rng(0x9a55e5);
        let (mut ok, mut refused, mut loose, mut multiple) = (0, 0, 0, 0);
        for case in 0..8000 {
            let (n, shape) = (r(24), r(3));
            let lines: Vec<String> = (0..n)
                .map(|i| match r(3) {
                    0 if shape == 0 => format!("v{i}"),
                    0 => words[r(words.len())].to_owned(),
                    _ if shape == 1 => words[r(3)].to_owned(),
                    _ => format!("v{i}"),
                })
                .collect();
            let mut file: Vec<String> = (lines.iter())
                .map(|l| damage(l, if r(5) == 0 { r(7) } else { 9 }))
                .collect();
            if n > 0 && r(30) == 0 {
                file[r(n)] = pad.clone();
            }
            let mut text: String = file.iter().map(|l| format!("{l}\n")).collect();
            if r(5) == 0 {
                text.pop();
            }
            let rate = [0, 2, 3, 6][r(4)];
            let mut chunks = Vec::new();
            let mut at = 0;
            for _ in 0..1 + r(3) {
                let hurt =
                    |s: String, r: &mut dyn FnMut(usize) -> usize| match rate > 0 && r(rate) == 0 {
                        true => damage(&s, r(7)),
                        false => s,
                    };
                let pick = |r: &mut dyn FnMut(usize) -> usize| match lines.is_empty() || r(4) == 0 {
                    true => words[r(words.len())].to_owned(),
                    false => lines[r(lines.len())].clone(),
                };
                let s = at + r(n + 1 - at.min(n));
                let headers: Vec<String> = (0..[0, 0, 1, 2][r(4)])
                    .map(|_| {
                        let h = match s > at && r(4) != 0 {
                            true => lines[at + r(s - at)].clone(),
                            false => pick(&mut r),
                        };
                        hurt(h, &mut r)
                    })
                    .filter(|h| !h.trim().is_empty())
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
                    old = old.into_iter().map(|o| hurt(o, &mut r)).collect();
                    if r(6) == 0 {
                        old.push(String::new());
                    }
                }
                if r(10) == 0 {
                    old = vec![String::new(); 1 + r(2)]; // empty lines alone
                }
                let (mut new, mut keep) = (Vec::new(), Vec::new());
                for (j, o) in old.iter().enumerate() {
                    match r(3) {
                        0 => {}
                        1 => {
                            new.push(format!("new {case} {j}"));
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
                if !old.is_empty() && r(8) == 0 {
                    // Context alone: a chunk that changes nothing.
                    (new, keep) = (old.clone(), (0..old.len()).map(Some).collect());
                }
                if !old.is_empty() && r(6) == 0 {
                    // A '+' line first (`+X`, then context).
                    new.insert(0, "first".into());
                    keep.insert(0, None);
                }
                if old.last().is_some_and(|l| l.is_empty()) && r(2) == 0 {
                    new.push(String::new());
                    keep.push(None);
                }
                chunks.push(Chunk {
                    headers,
                    old,
                    new,
                    keep,
                    eof: r(if at == n { 2 } else { 12 }) == 0,
                    separated: false,
                    line: 1,
                });
            }
            for strict in [false, true] {
                let want = oracle(&text, &chunks, strict);
                for piece in [1, 7, 1 << 16] {
                    let got = passes(&text, &chunks, strict, piece);
                    assert_eq!(got, want, "{strict} {piece} {text:?} {chunks:?}");
                }
                match &want {
                    Ok(a) => {
                        ok += 1;
                        loose += usize::from(a.1.iter().any(|p| p.grade > Grade::Exact));
                    }
                    Err(Failed::Refused(r, _)) => {
                        refused += 1;
                        multiple += usize::from(matches!(r.miss, Miss::Multiple { .. }));
                    }
                    Err(Failed::Source) => unreachable!(),
                }
            }
        }
        eprintln!("{ok} applied ({loose} loose), {refused} refused ({multiple} multiple)");
        assert!(ok > 3000 && loose > 700 && refused > 2000 && multiple > 500);
    }

    /// Codex's placements by hand, in passes as the locator: an End of
    /// File addition retried stays where the search stands, a chunk of an
    /// empty line alone takes the first and moves the search, lines after
    /// a final context line follow an earlier addition at the end, also with the text's last line unterminated.
    #[test]
    fn codex_placements_as_the_locator() {
        let k = |old: &[&str], new: &[&str], keep: &[Option<usize>], eof: bool| Chunk {
            old: old.iter().map(|x| x.to_string()).collect(),
            new: new.iter().map(|x| x.to_string()).collect(),
            keep: keep.to_vec(),
            eof,
            ..Chunk::default()
        };
        let end = k(&[], &["END"], &[None], false);
        let after = k(&["c"], &["c", "after-c"], &[Some(0), None], false);
        let cases = [
            (
                "a\nb\n",
                vec![k(&[""], &["X", ""], &[None, Some(0)], true)],
                "X\na\nb\n",
            ),
            (
                "b\n\nb\n\nc\n",
                vec![
                    k(&[""], &[""], &[Some(0)], false),
                    k(&["b"], &["B"], &[None], false),
                ],
                "b\n\nB\n\nc\n",
            ),
            (
                "a\nc\n",
                vec![end.clone(), after.clone()],
                "a\nc\nEND\nafter-c\n",
            ),
            (
                "a\nc",
                vec![end.clone(), after.clone()],
                "a\nc\nEND\nafter-c\n",
            ),
            ("c\nd\n", vec![end, after], "c\nafter-c\nd\nEND\n"),
        ];
        for (text, chunks, want) in cases {
            let o = oracle(text, &chunks, false);
            assert_eq!(o.as_ref().map(|a| a.0.as_str()), Ok(want), "{text:?}");
            for piece in [1, 7] {
                assert_eq!(passes(text, &chunks, false, piece), o, "{text:?}");
            }
        }
    }

    /// A chunk whose ending empty lines were dropped as
    /// separators is not retried without a final empty old line (Codex's
    /// one retry drops the separator), in passes as by the locator: `x`
    /// and an empty context line are not in "x\n"; unmarked, the retry
    /// finds `x` (the empty line is added before Y, as Codex's retry does).
    #[test]
    fn a_chunk_ending_in_separators_is_not_retried() {
        let mut c = Chunk {
            old: vec!["x".into(), String::new()],
            new: vec!["x".into(), String::new(), "Y".into()],
            keep: vec![Some(0), Some(1), None],
            separated: true,
            ..Chunk::default()
        };
        let o = oracle("x\n", &[c.clone()], false);
        assert!(
            matches!(o, Err(Failed::Refused(ref r, _)) if r.chunk == 0),
            "{o:?}"
        );
        for piece in [1, 7] {
            assert_eq!(passes("x\n", &[c.clone()], false, piece), o);
        }
        c.separated = false;
        let o = oracle("x\n", &[c.clone()], false);
        assert_eq!(o.as_ref().map(|a| a.0.as_str()), Ok("x\n\nY\n"));
        for piece in [1, 7] {
            assert_eq!(passes("x\n", &[c.clone()], false, piece), o);
        }
    }

    /// Chunks found exactly, each once, and their headers take one pass
    /// in all, not one each (`--diff` runs every patch in passes), then one to write; the answer is the locator's.
    #[test]
    fn one_pass_finds_every_chunk_placed_in_turn() {
        let text: String = (0..2000).map(|i| format!("line {i}\n")).collect();
        let chunk = |k: usize| Chunk {
            headers: (k % 3 == 0)
                .then(|| format!("line {}", 20 * k))
                .into_iter()
                .collect(),
            old: vec![format!("line {}", 20 * k + 7)],
            new: vec!["new".into()],
            keep: vec![None],
            eof: false,
            separated: false,
            line: 1,
        };
        let chunks: Vec<Chunk> = (0..100).map(chunk).collect();
        let (mut reads, mut out) = (0, Vec::new());
        let mut source = |each: &mut dyn FnMut(&[u8])| {
            reads += 1;
            text.as_bytes().chunks(999).for_each(&mut *each);
            true
        };
        let put = &mut |b: &[u8]| out.extend_from_slice(b);
        let r = resolve(&chunks, false, &mut source, put, None).map(|r| r.starts);
        assert_eq!(r, oracle(&text, &chunks, false).map(|a| a.2));
        assert_eq!(reads, 2);
    }

    /// A file and many chunks (up to 60) over it: lines matched loosely
    /// (the file's damage), with `overruled` loose copies a line before
    /// some lines, chunks that begin with a line the file repeats,
    /// headers, damage in the patch, now and then a chunk that is not
    /// there or occurs twice (`stream.rs`'s tests take it too).
    pub(in crate::patch) fn many_chunks(
        r: &mut dyn FnMut(usize) -> usize,
        overruled: bool,
    ) -> (String, Vec<Chunk>) {
        let words = ["}", "", "x = 1", "say(\"hi\")", "a - b", "  ret 0;"];
        let n = 100 + r(600);
        let lines: Vec<String> = (0..n)
            .map(|i| match r(25) {
                0 => words[r(words.len())].to_owned(),
                _ => format!("v{i} = \"{}\"", i % 7),
            })
            .collect();
        let (mut text, mut over) = (String::new(), vec![false; n]);
        for (i, l) in lines.iter().enumerate() {
            match r(10) {
                0 => text += &format!("{}\n", damage(l, r(7))),
                // A loose copy, then the line itself: overruled.
                1 if overruled => {
                    text += &format!("{}\n{l}\n", damage(l, r(2)));
                    over[i] = true;
                }
                _ => text += &format!("{l}\n"),
            }
        }
        let rate = [0, 6, 20][r(3)];
        let (mut chunks, mut at) = (Vec::new(), 0);
        while at + 2 < n && chunks.len() < 60 {
            let mut s = at + r(12).min(n - at - 2);
            // Mostly a line the file has once (a word: often twice).
            while s + 2 < n && words.contains(&lines[s].as_str()) {
                s += 1;
            }
            // Not across an overruled copy.
            let more = (1..1 + r(3).min(n - s - 1)).take_while(|&j| !over[s + j]);
            let len = 1 + more.count();
            let mut old = lines[s..s + len].to_vec();
            if r(200) == 0 {
                old[0] = words[r(words.len())].to_owned();
            }
            if rate > 0 && r(rate) == 0 {
                let j = r(len);
                old[j] = damage(&old[j], r(7));
            }
            let headers = match r(6) {
                0 if s > at => vec![lines[s - 1].clone()],
                _ => vec![],
            };
            let headers = headers.into_iter().filter(|h| !h.trim().is_empty());
            let new = vec![format!("new {}", chunks.len()), old[len - 1].clone()];
            chunks.push(Chunk {
                headers: headers.collect(),
                old,
                new,
                keep: vec![None, Some(len - 1)],
                eof: false,
                line: 1,
                separated: false,
            });
            at = s + len;
        }
        (text, chunks)
    }

    /// Many chunks on one file, the shapes that once cost chunks times
    /// lines ([`many_chunks`], with loose matches a stricter one overrules
    /// a line later): the passes answer exactly as the locator and `write`
    /// do, strict or not, in any piece size.
    #[test]
    fn many_loose_chunks_answer_as_the_locator() {
        let mut r = rng(0x33_0013);
        let (mut ok, mut loose, mut refused, mut chunks_seen) = (0, 0, 0, 0);
        for _ in 0..300 {
            let (text, chunks) = many_chunks(&mut r, true);
            chunks_seen += chunks.len();
            for strict in [false, true] {
                let want = oracle(&text, &chunks, strict);
                for piece in [7, 1 << 16] {
                    let got = passes(&text, &chunks, strict, piece);
                    assert_eq!(got, want, "{strict} {piece} {text:?} {chunks:?}");
                }
                match &want {
                    Ok(a) => {
                        ok += 1;
                        loose += usize::from(a.1.iter().any(|p| p.grade > Grade::Exact));
                    }
                    Err(_) => refused += 1,
                }
            }
        }
        eprintln!("{ok} applied ({loose} loose), {refused} refused, {chunks_seen} chunks");
        assert!(ok > 100 && loose > 50 && refused > 100 && chunks_seen > 10_000);
    }

    /// Loose chunks cost the file's lines plus the patch, not their
    /// product: 2,000 chunks on 20,000 lines, each matched
    /// first with trailing blanks and then, half of them, exactly a line
    /// later, give them to about two searches each, not to every search
    /// after its start, in one pass and one to write; the answer is the
    /// locator's.
    #[test]
    fn many_loose_chunks_cost_the_lines_plus_the_patch() {
        let mut text = String::new();
        let chunks: Vec<Chunk> = (0..2000)
            .map(|k| {
                for i in 10 * k..10 * k + 10 {
                    match i % 10 {
                        3 => text += &format!("key {k} \n"),
                        4 if k % 2 == 0 => text += &format!("key {k}\n"),
                        _ => text += &format!("line {i}\n"),
                    }
                }
                let headers = (k % 3 == 0).then(|| format!("line {}", 10 * k)).into_iter();
                Chunk {
                    headers: headers.collect(),
                    old: vec![format!("key {k}")],
                    new: vec!["new".into()],
                    keep: vec![None],
                    eof: false,
                    line: 1,
                    separated: false,
                }
            })
            .collect();
        let (mut reads, mut out) = (0, Vec::new());
        let mut source = |each: &mut dyn FnMut(&[u8])| {
            reads += 1;
            text.as_bytes().chunks(4096).for_each(&mut *each);
            true
        };
        STAGE_LINES.with(|c| c.set(0));
        let put = &mut |b: &[u8]| out.extend_from_slice(b);
        let got = resolve(&chunks, false, &mut source, put, None).map(|r| (r.placed, r.starts));
        let want = oracle(&text, &chunks, false).map(|a| (a.1, a.2));
        assert_eq!(got, want);
        let grades = want.unwrap().0.iter().map(|p| p.grade).collect::<Vec<_>>();
        assert_eq!(grades.iter().filter(|g| **g > Grade::Exact).count(), 1000);
        assert_eq!(reads, 2);
        let work = STAGE_LINES.with(|c| c.get());
        eprintln!("{work} lines given to searches");
        // 3,667: a line per chunk and header, and the overruled ones'
        // second; 26,697,997 when every search saw every line.
        assert!(work <= 2 * chunks.len(), "{work} lines given to searches");
    }
}

#[cfg(test)]
mod search_cost {
    use super::*;

    /// Many chunks whose first old line is one the file repeats (an empty
    /// line, as real chunks' first context line often is) cost the file's
    /// lines plus the patch: 2,000
    /// chunks on 20,000 lines (6,000 empty) give 2,000 lines to searches,
    /// each chunk anchored on its rarest line (counted in a pass of its
    /// own), in three passes; 12,013,996 when every empty line started a
    /// partial match in every search under way.
    #[test]
    fn chunks_starting_with_a_common_line_count() {
        let mut text = String::new();
        let chunks: Vec<Chunk> = (0..2000)
            .map(|k| {
                for i in 10 * k..10 * k + 10 {
                    match i % 10 {
                        3 => text += &format!("key {k}\n"),
                        0 | 5 | 8 => text += "\n",
                        _ => text += &format!("line {i}\n"),
                    }
                }
                Chunk {
                    headers: vec![],
                    old: vec![String::new(), format!("line {}", 10 * k + 1)],
                    new: vec!["new".into()],
                    keep: vec![None],
                    eof: false,
                    separated: false,
                    line: 1,
                }
            })
            .collect();
        let (mut out, mut reads) = (Vec::new(), 0);
        let mut source = |each: &mut dyn FnMut(&[u8])| {
            reads += 1;
            text.as_bytes().chunks(4096).for_each(&mut *each);
            true
        };
        STAGE_LINES.with(|c| c.set(0));
        let put = &mut |b: &[u8]| out.extend_from_slice(b);
        let got = resolve(&chunks, false, &mut source, put, None).map(|r| (r.placed, r.starts));
        let want = super::tests::oracle(&text, &chunks, false).map(|a| (a.1, a.2));
        assert_eq!(got, want);
        assert_eq!(want.map(|w| w.0.len()), Ok(2000));
        assert_eq!(reads, 3);
        let work = STAGE_LINES.with(|c| c.get());
        eprintln!("{work} lines given to searches");
        assert!(work <= 2 * chunks.len(), "{work} lines given to searches");
    }
}

#[cfg(test)]
pub(in crate::patch) mod tricky_lines {
    use super::*;

    /// Pieces of lines: every character the punctuation grade maps, the
    /// whitespace `trim` removes (Unicode's too) and some it does not.
    const ATOMS: &[&str] = &[
        "a", "b", "-", "'", "\"", " ", "\t", "\r", "\u{b}", "\u{c}", "\u{85}", "\u{1680}",
        "\u{2028}", "\u{2029}", "\u{200b}", "\u{feff}", "\u{a0}", "\u{2002}", "\u{2003}",
        "\u{2004}", "\u{2005}", "\u{2006}", "\u{2007}", "\u{2008}", "\u{2009}", "\u{200a}",
        "\u{202f}", "\u{205f}", "\u{3000}", "\u{2010}", "\u{2011}", "\u{2012}", "\u{2013}",
        "\u{2014}", "\u{2015}", "\u{2212}", "\u{2018}", "\u{2019}", "\u{201a}", "\u{201b}",
        "\u{201c}", "\u{201d}", "\u{201e}", "\u{201f}",
    ];

    /// A random equivalent-looking variant of `s`'s atoms, or blanks added.
    fn vary(r: &mut dyn FnMut(usize) -> usize, s: &str) -> String {
        match r(14) {
            0 => format!("{s}{}", ATOMS[5 + r(25)]),
            1 => format!("{}{s}", ATOMS[5 + r(25)]),
            2 => s
                .chars()
                .map(|c| match c {
                    '-' => ATOMS[29 + r(7)].chars().next().unwrap(),
                    '\'' => ATOMS[36 + r(4)].chars().next().unwrap(),
                    '"' => ATOMS[40 + r(4)].chars().next().unwrap(),
                    ' ' => ATOMS[16 + r(13)].chars().next().unwrap(),
                    c => c,
                })
                .collect(),
            _ => s.to_owned(),
        }
    }

    /// A file of repeated short lines of those pieces (periodic runs too)
    /// and unique ones, and up to 90 chunks over it, in order, their lines
    /// varied, some under headers, some `*** End of File`, some with a
    /// final empty old line.
    pub(in crate::patch) fn case(r: &mut dyn FnMut(usize) -> usize) -> (String, Vec<Chunk>) {
        let pool: Vec<String> = (0..2 + r(6))
            .map(|_| (0..r(4)).map(|_| ATOMS[r(ATOMS.len())]).collect())
            .collect();
        let n = 5 + r(300);
        let uniq = r(3);
        let mut lines: Vec<String> = Vec::new();
        while lines.len() < n {
            match r(8) {
                0 => {
                    // periodic: a a a b
                    let (x, y) = (r(pool.len()), r(pool.len()));
                    lines.extend(std::iter::repeat_n(pool[x].clone(), 1 + r(4)));
                    lines.push(pool[y].clone());
                }
                k if k <= uniq => lines.push(pool[r(pool.len())].clone()),
                _ => lines.push(format!("v{}{}", lines.len(), ATOMS[r(ATOMS.len())])),
            }
        }
        let n = lines.len();
        let mut text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        if r(4) == 0 {
            text.pop();
        }
        let mut chunks = Vec::new();
        let (mut at, most) = (0, [3, 20, 90][r(3)]);
        while at < n && chunks.len() < most {
            let mut s = at + r(4).min(n - at - 1);
            // Mostly a line the file has once (pool lines repeat).
            while s + 1 < n && pool.contains(&lines[s]) && r(8) != 0 {
                s += 1;
            }
            let len = (1 + r(4)).min(n - s);
            let mut old: Vec<String> = lines[s..s + len].iter().map(|l| vary(r, l)).collect();
            if r(8) == 0 {
                old.push(String::new());
            }
            let headers = match r(6) {
                0 if s > at => vec![vary(r, &lines[s - 1])],
                1 if r(4) == 0 => {
                    let p = r(pool.len());
                    vec![vary(r, &pool[p])]
                }
                _ => vec![],
            };
            let eof = s + len == n && r(2) == 0 || r(400) == 0;
            let new = (0..r(3)).map(|i| format!("n{i}")).collect::<Vec<_>>();
            let keep = vec![None; new.len()];
            chunks.push(Chunk {
                headers,
                old,
                new,
                keep,
                eof,
                separated: false,
                line: 1,
            });
            at = s + len;
        }
        (text, chunks)
    }

    #[test]
    fn tricky_lines_answer_as_the_locator() {
        let mut r = crate::patch::find::tests::rng(0x33_b12c);
        let (mut ok, mut loose, mut refused, mut big) = (0, 0, 0, 0);
        for _ in 0..3000 {
            let (text, chunks) = case(&mut r);
            big += usize::from(chunks.len() > 64);
            for strict in [false, true] {
                let want = super::tests::oracle(&text, &chunks, strict);
                for piece in [3, 1 << 16] {
                    let got = super::tests::passes(&text, &chunks, strict, piece);
                    assert_eq!(got, want, "{strict} {piece} {text:?} {chunks:?}");
                }
                match &want {
                    Ok(a) => {
                        ok += 1;
                        loose += usize::from(a.1.iter().any(|p| p.grade > Grade::Exact));
                    }
                    Err(_) => refused += 1,
                }
            }
        }
        eprintln!("{ok} applied ({loose} loose), {refused} refused, {big} over 64 chunks");
    }
}
