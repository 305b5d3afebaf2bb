//! [`locate`](super::locate) in one pass over the file, for the binary:
//! memory bounded by the patch, not the file. Pure: the caller
//! feeds the text (strict UTF-8, LF-normalized) piece by piece and takes
//! the new text as it is made.
//!
//! The pass speculates: every header is the first line at or after the
//! point that matches it at any grade, every chunk its first occurrence at
//! any grade (the strictest its lines allow), and the new text is written
//! as the lines go by. Each placement is then watched to the end of the
//! file: a header matched loosely, against a later line matching it at a
//! stricter grade; a chunk, against a later occurrence in the part open to
//! it at its grade or a stricter one. When none turns up, every place is
//! the locator's: nothing in the open part before it matched at any grade
//! and nothing after it at its grade or stricter, so its grade is the
//! first with a match there and it is the only match at that grade. A
//! later one (the locator's refusal, or its better place, which moves
//! every later chunk), a miss, the retry without a final empty line, and
//! a chunk adding lines after a final context line while an addition
//! waits for the end (their order depends on whether that line ends the
//! file: `Splice::sort`) are `None`: the caller discards what was written
//! and runs the locator in passes over the file (`passes.rs`), which
//! answers with its refusal and hints (and `--diff`), still in memory
//! bounded by the patch.
//!
//! One pass, so no second read can disagree with the first: the output is
//! written while the file is read, and only kept if the pass proves it. A
//! placement the end of the file overrules is not rewritten but left to
//! the locator: a second pass would need the file to hold still between
//! the two (a check of both reads against each other) and would serve
//! only a loose match beaten later in the file, which is rare.
//! A fallback costs what the pass wrote (an unnamed temp, dropped) and a
//! read (one more per match a later line overrules), then one to write.
//!
//! Held: the patch (and the keys of the headers found loosely, watched
//! for a stricter match: a line is compared only with those it can match,
//! `table.rs`); the current line up to `hold()` bytes (a longer line
//! whose characters outnumber every patch line's matches none and streams
//! through; one that might still match loosely is `None`); the searched
//! chunk's partially matched lines, copied (a loose match writes the
//! file's text of its context lines); each chunk's partial-match starts
//! and the watch of the placed ones (`watch.rs`: a chunk placed exactly
//! costs a line about a logarithm; those placed loosely or partially
//! matched are compared with it one by one, and more than 64 of them at
//! once leave the patch to the locator).

use super::chunk::{at_end, keeps, tail, widest, Chunk};
use super::find::{best, core_chars};
use super::locate::Grade;
use super::table::{Keys, Table};
use super::watch::Watch;

/// A pure addition's place at the end of the file, its length unknown.
const END: usize = usize::MAX;

/// Per chunk, the 1-based line of the new text where it starts, as
/// `write` reports it, and the grade it matched at.
pub type Placements = Vec<(u64, Grade)>;

/// The longest line held for comparing, for patch lines of at most
/// `bound` bytes: exact, `bound`; loose, room for punctuation three times
/// as long in UTF-8 (an em dash for `-`) and some whitespace at the ends.
fn hold(bound: usize, max: Grade) -> usize {
    match max {
        Grade::Exact => bound,
        _ => 4 * bound + 1024,
    }
}

struct Pass<'c, 'o> {
    chunks: &'c [Chunk],
    out: &'o mut dyn FnMut(&[u8]),
    /// The loosest grade allowed (`--patch-strict`: exact).
    max: Grade,
    /// Partial matches, and the placed chunks watched.
    w: Watch<'c>,
    /// Headers found at a loose grade, with it, and by their keys: a line
    /// is compared only with those it can match (`table.rs`), not each.
    loose: Vec<(&'c str, Grade)>,
    by_key: Table,
    keys: Keys,
    hits: Vec<usize>,
    /// The chunk searched (every one before it is placed), and how many
    /// of its headers are found (more than it has: its old lines).
    k: usize,
    h: usize,
    /// The longest line a chunk compares, in bytes, and the longest held.
    bound: usize,
    hold: usize,
    /// The current line while it is not longer than `hold`; `long`: it
    /// is, and streams through.
    line: Vec<u8>,
    long: bool,
    /// Lines passed.
    n: usize,
    /// Lines `hold_at..n`, copied in `held`: the searched chunk's partial
    /// matches, written once they fail; the oldest starts at `hold_at`.
    hold_at: usize,
    held: Vec<Vec<u8>>,
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

/// Runs the pass (`strict`: exact matches only): `source` feeds the whole
/// text to its argument (false: it could not), `out` takes the new text,
/// and an empty piece once just before the first that is not the text's
/// own (until then the output is the text, byte for byte: the caller need
/// not write it before then, so a refusal met before writes nothing).
/// `None`: not proved (module docs), the output is to be discarded.
#[inline(never)] // not into a caller's closure, compiled for speed
#[cfg_attr(as_edit_small, optimize(size))]
pub fn run(
    chunks: &[Chunk],
    strict: bool,
    source: &mut super::Source<'_>,
    out: &mut dyn FnMut(&[u8]),
) -> Option<Placements> {
    let bound = widest(chunks);
    let max = Grade::loosest(strict);
    let mut p = Pass {
        chunks,
        out,
        max,
        w: Watch::new(chunks, max),
        loose: Vec::new(),
        by_key: Table::default(),
        keys: Keys::default(),
        hits: Vec::new(),
        k: 0,
        h: 0,
        bound,
        hold: hold(bound, max),
        line: Vec::new(),
        long: false,
        n: 0,
        hold_at: 0,
        held: Vec::new(),
        pending: Vec::new(),
        written: 0,
        placed: vec![(0, Grade::Exact); chunks.len()],
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
    /// Lines compared with a header found loosely, for the tests.
    static HEADER_LINES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
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
                if self.line.len() > self.hold {
                    // Matching loosely needs the line whole: a miss, or
                    // one too long to hold (module docs).
                    let head = &self.line[..=self.hold]; // as the pieces fall
                    if self.max > Grade::Exact && core_chars(head) <= self.bound {
                        self.failed = true;
                        return;
                    }
                    self.on_line(None);
                    self.long = true;
                    (self.out)(&self.line); // longer than `hold`: not empty
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
            let at = match at_end(c) {
                true => END,
                false => from,
            };
            self.pending.push((at, self.k));
            self.k += 1;
            self.h = 0;
        }
    }

    /// Writes the held lines before line `to` (at most the current one).
    #[cfg_attr(as_edit_small, optimize(size))]
    fn release(&mut self, to: usize) {
        let m = to.saturating_sub(self.hold_at);
        let mut held = std::mem::take(&mut self.held);
        for l in held.drain(..m) {
            self.put(&l);
            (self.out)(b"\n");
        }
        self.held = held;
        self.written += m;
        self.hold_at = to.max(self.hold_at);
    }

    /// Chunk `k` replaces its old lines, held, from line `at` (or is added
    /// there), matched at `grade`.
    #[cfg_attr(as_edit_small, optimize(size))]
    fn splice(&mut self, k: usize, at: usize, grade: Grade) {
        let c = &self.chunks[k];
        // Its lines after a final context line go after the additions
        // waiting for the end if that line is the last (`Splice::sort`),
        // which only the end shows: the passes' (module docs).
        if tail(c, c.old.len(), c.new.len()).is_some()
            && self.pending.iter().any(|&(at, j)| at == END && j < k)
        {
            self.failed = true;
            return;
        }
        self.mark();
        #[cfg(test)]
        {
            self.old_lines[k] = at + 1;
        }
        let _ = at; // the old line: the tests' only
        self.placed[k] = (self.written as u64 + 1, grade);
        self.w.place(k, grade);
        let held = std::mem::take(&mut self.held);
        for (j, l) in c.new.iter().enumerate() {
            // A context line keeps the file's text (loose grades).
            let l = match keeps(c, j, c.old.len()) {
                Some(x) => &held[x],
                None => l.as_bytes(),
            };
            self.emit(l);
        }
        self.held = held;
        self.held.clear();
    }

    /// Writes the additions due before the next line (`end`: all that
    /// wait, at the end of the file), in chunk order as `locate` sorts.
    #[cfg_attr(as_edit_small, optimize(size))]
    fn additions(&mut self, end: bool) {
        let mut i = 0;
        while let Some(&(at, k)) = self.pending.get(i) {
            if end || at == self.n {
                self.pending.remove(i);
                self.splice(k, self.n, Grade::Exact);
            } else {
                i += 1;
            }
        }
    }

    /// Line `self.n`; `None`: longer than any a chunk compares (the caller
    /// writes it).
    #[cfg_attr(as_edit_small, optimize(size))]
    fn on_line(&mut self, l: Option<&[u8]>) {
        let (k, n) = (self.k, self.n);
        // A second occurrence: the locator refuses, or places the chunk
        // there (a stricter grade).
        self.failed |= !self.w.line(n, l);
        if let Some(l) = l.filter(|_| !self.loose.is_empty()) {
            let mut hits = std::mem::take(&mut self.hits);
            hits.clear();
            self.by_key.hits(&self.keys.of(l, self.max), &mut hits);
            #[cfg(test)]
            HEADER_LINES.with(|c| c.set(c.get() + hits.len()));
            for &i in &hits {
                // The locator's header is this stricter one.
                let (h, g) = self.loose[i];
                self.failed |= best(l, h, g).is_some_and(|b| b < g);
            }
            self.hits = hits;
        }
        if self.failed {
            // Nothing more is written: an addition due here, or a chunk
            // this line completes, would make the temp (the mark) for a
            // patch the locator answers, perhaps with a refusal.
            return;
        }
        self.additions(false);
        self.n += 1;
        let mut held = false;
        if let Some(c) = self.chunks.get(k) {
            if self.h < c.headers.len() {
                let h = &c.headers[self.h];
                if let Some(g) = l.and_then(|l| best(l, h, self.max)) {
                    if g > Grade::Exact {
                        let i = self.loose.len();
                        self.by_key.insert(&mut self.keys, h, i, self.max);
                        self.loose.push((h, g));
                    }
                    self.h += 1;
                    if self.h == c.headers.len() {
                        self.start(n + 1, true);
                    }
                }
            } else if self.w.advance(k, n, l) && !c.eof {
                let (s, g) = self.w.starts[k].remove(0);
                self.release(s);
                self.held.push(l.unwrap_or_default().to_vec());
                self.splice(k, s, g);
                self.hold_at = n + 1;
                self.k += 1;
                return self.start(n + 1, false);
            } else {
                let first = self.w.starts[k].first().map_or(n + 1, |s| s.0);
                self.release(first.min(n));
                held = first <= n;
            }
        }
        match l {
            Some(l) if held => return self.held.push(l.to_vec()),
            Some(l) => self.emit(l),
            None => self.written += 1,
        }
        self.hold_at = n + 1;
    }

    #[cfg_attr(as_edit_small, optimize(size))]
    fn finish(&mut self) {
        self.end = true;
        if !self.failed && (self.long || !self.line.is_empty()) {
            self.end_line();
        }
        let (k, n) = (self.k, self.n);
        let mut eof = None;
        if let Some(c) = (self.chunks.get(k)).filter(|c| c.eof && self.h >= c.headers.len()) {
            // End of File: a match ending at the last line.
            let at = n.wrapping_sub(c.old.len());
            if let Some(&(s, g)) = self.w.starts[k].first().filter(|s| s.0 == at) {
                eof = Some((s, g));
                self.k += 1;
                self.start(n, false);
            }
        }
        // Whether every chunk is placed is known before the End of File
        // chunk and the additions at the end are written: a refusal makes
        // no mark (no temp, no copy of the text).
        self.failed |= self.k < self.chunks.len();
        if self.failed {
            return;
        }
        if let Some((s, g)) = eof {
            self.splice(k, s, g);
        }
        if !self.failed {
            self.additions(true);
            self.mark(); // a held final newline
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::patch::find::tests::rng;
    use crate::patch::locate::{self, Grade};

    /// The pass on `text` fed in pieces of at most `piece` bytes.
    fn pass(text: &str, chunks: &[Chunk], piece: usize) -> Option<(String, Lines)> {
        pass_graded(text, chunks, piece, false).map(|(s, l, _)| (s, l))
    }

    /// The same, with the grades, and `strict`.
    fn pass_graded(text: &str, chunks: &[Chunk], piece: usize, strict: bool) -> Option<Answer> {
        let mut out = Vec::new();
        let mut source = |each: &mut dyn FnMut(&[u8])| {
            text.as_bytes().chunks(piece).for_each(&mut *each);
            true
        };
        let r = run(chunks, strict, &mut source, &mut |b| {
            out.extend_from_slice(b)
        });
        let old = OLD_LINES.with(|o| o.take());
        r.map(|p| {
            let (new, grades) = p.into_iter().unzip();
            (String::from_utf8(out).unwrap(), (old, new), grades)
        })
    }

    /// Old and new start lines.
    type Lines = (Vec<usize>, Vec<u64>);

    /// The new text, its lines and the grades.
    type Answer = (String, Lines, Vec<Grade>);

    /// The locator's answer.
    fn oracle(text: &str, chunks: &[Chunk], strict: bool) -> Result<Answer, ()> {
        let lines = locate::lines(text);
        let plan = locate::locate(&lines, chunks, strict).map_err(|_| ())?;
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
            separated: false,
            line: 1,
        }
    }

    /// Loose damage, as models and editors make it: blanks at either end,
    /// curly quotes, dashes, a non-breaking space.
    fn damage(s: &str, how: usize) -> String {
        match how {
            0 => format!("{s} "),
            1 => format!("{s}\t "),
            2 => format!("  {s}"),
            3 => s.replace('"', "\u{201C}"),
            4 => s.replace('-', "\u{2013}").replace('"', "\u{201D}"),
            5 => s.replace(' ', "\u{a0}"),
            _ => s.to_owned(),
        }
    }

    /// Whether the pass should prove this patch, by the module docs' rule
    /// on the whole text: every header the first line from the point that
    /// matches at any grade, with no stricter one later; every chunk its
    /// first occurrence, with none at its grade or stricter later (End of
    /// File: the last lines); no line too long to hold that might match.
    fn provable(text: &str, chunks: &[Chunk], strict: bool) -> bool {
        let max = Grade::loosest(strict);
        let ls = locate::lines(text);
        let bound = crate::patch::chunk::widest(chunks);
        let h = hold(bound, max);
        let held = |l: &&str| l.len() <= h || core_chars(&l.as_bytes()[..=h]) > bound;
        if !strict && !ls.iter().all(held) {
            return false;
        }
        let at = |i: usize, old: &[String], g: Grade| {
            (old.iter().zip(&ls[i..]))
                .map(|(o, l)| best(l.as_bytes(), o, g))
                .try_fold(Grade::Exact, |a, b| Some(a.max(b?)))
        };
        let (mut cursor, mut waits) = (0, false);
        for c in chunks {
            // After an addition at the end, lines after a final context
            // line (the passes', `Splice::sort`).
            let n = c.new.len();
            if waits && crate::patch::chunk::tail(c, c.old.len(), n).is_some() {
                return false;
            }
            waits |= crate::patch::chunk::at_end(c);
            for h in &c.headers {
                let hit =
                    (cursor..ls.len()).find_map(|i| Some((i, best(ls[i].as_bytes(), h, max)?)));
                let Some((i, g)) = hit else { return false };
                if (i + 1..ls.len()).any(|j| best(ls[j].as_bytes(), h, g).is_some_and(|b| b < g)) {
                    return false;
                }
                cursor = i + 1;
            }
            if c.old.is_empty() {
                continue;
            }
            let Some(last) = ls.len().checked_sub(c.old.len()) else {
                return false;
            };
            let first = if c.eof { last.max(cursor) } else { cursor };
            let hit = (first..=last).find_map(|i| Some((i, at(i, &c.old, max)?)));
            let Some((p, g)) = hit else { return false };
            if (p + 1..=last).any(|q| at(q, &c.old, g).is_some()) {
                return false;
            }
            cursor = p + c.old.len();
        }
        true
    }

    /// Generated files and chunks (repeated lines, whitespace and
    /// punctuation damage in the file and in the patch's context and
    /// headers, headers, End of File, pure additions, final empty old
    /// lines, lines longer than any chunk's, a line of blanks too long to
    /// hold): whenever the pass answers, it is the locator's answer (text,
    /// old and new lines, grades), also with `strict`; it answers exactly
    /// when [`provable`] says so; and it answers most loose cases.
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
            "a - b",
        ];
        let long = "a line longer than any line of a chunk, ".repeat(40);
        let blank = format!("{}b", " ".repeat(1200));
        let mut r = rng(0x57e4);
        let (mut same, mut fell, mut cases, mut refused) = (0, 0, 0, 0);
        let (mut loose, mut loose_same) = (0, 0);
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
            if n > 0 && r(40) == 0 {
                lines[r(n)] = blank.clone();
            }
            // The file's own damage, which the patch may not have.
            let file: Vec<String> = (lines.iter())
                .map(|l| damage(l, if r(5) == 0 { r(6) } else { 9 }))
                .collect();
            let mut text: String = file.iter().map(|l| format!("{l}\n")).collect();
            if r(5) == 0 {
                text.pop();
            }
            // The patch's damage, mostly in some cases, none in others.
            let rate = [0, 2, 3, 6][r(4)];
            let hurt = |s: String, r: &mut dyn FnMut(usize) -> usize| match rate > 0 && r(rate) == 0
            {
                true => damage(&s, r(6)),
                false => s,
            };
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
                    .map(|&h| {
                        let h = match at + h < s && r(8) != 0 {
                            true => lines[at + h].clone(),
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
                    if r(8) == 0 {
                        old.push(String::new());
                    }
                }
                if r(16) == 0 {
                    old = vec![String::new(); 1 + r(2)]; // empty lines alone
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
                if !old.is_empty() && r(12) == 0 {
                    // Context alone: a chunk that changes nothing.
                    (new, keep) = (old.clone(), (0..old.len()).map(Some).collect());
                }
                if !old.is_empty() && r(6) == 0 {
                    // A '+' line first (`+X`, then context).
                    new.insert(0, "first".into());
                    keep.insert(0, None);
                }
                chunks.push(Chunk {
                    headers,
                    old,
                    new,
                    keep,
                    eof: r(if at == n { 2 } else { 16 }) == 0,
                    separated: false,
                    line: 1,
                });
            }
            for strict in [false, true] {
                let want = oracle(&text, &chunks, strict);
                let should = provable(&text, &chunks, strict);
                let pieces: &[usize] = if strict { &[7] } else { &[1, 3, 1 << 16] };
                let is_loose = (want.as_ref()).is_ok_and(|w| w.2.iter().any(|g| *g > Grade::Exact));
                for &piece in pieces {
                    cases += 1;
                    loose += usize::from(is_loose);
                    let got = pass_graded(&text, &chunks, piece, strict);
                    assert_eq!(got.is_some(), should, "{strict} {text:?} {chunks:?}");
                    match (got, &want) {
                        (Some(got), Ok(want)) => {
                            assert_eq!(&got, want, "{strict} {text:?} {chunks:?}");
                            same += 1;
                            loose_same += usize::from(is_loose);
                        }
                        (Some(_), Err(())) => panic!("the locator refuses: {text:?} {chunks:?}"),
                        (None, _) => {
                            fell += 1;
                            refused += usize::from(want.is_err());
                        }
                    }
                }
            }
        }
        assert_eq!(same + fell, cases);
        eprintln!("{cases} cases: {same} streamed, {fell} fell back ({refused} refused); {loose_same} of {loose} loose streamed");
        assert!(
            same > cases / 5
                && fell > cases / 10
                && loose * 15 > cases
                && loose_same * 10 > loose * 7,
            "{same} streamed, {fell} fell back ({refused} refused); {loose_same} of {loose} loose"
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
    }

    /// Lines a chunk adds after a final context line,
    /// while an addition waits for the end, are left to the passes (their
    /// place depends on whether that line ends the file), with no mark;
    /// without the waiting addition, or with its lines first, streamed.
    #[test]
    fn lines_after_a_final_context_line_wait_for_no_addition() {
        let end = chunk(&[], &[], &["END"], vec![None]);
        let after = chunk(&[], &["c"], &["c", "after-c"], vec![Some(0), None]);
        let mut mark = false;
        let mut source = |each: &mut dyn FnMut(&[u8])| {
            each(b"a\nc\n");
            true
        };
        let two = [end.clone(), after.clone()];
        let r = run(&two, false, &mut source, &mut |b| mark |= b.is_empty());
        assert_eq!((r, mark), (None, false));
        let got = pass("a\nc\n", &[after.clone(), end], 1).unwrap();
        assert_eq!(got.0, "a\nc\nafter-c\nEND\n");
        assert_eq!(pass("a\nc\n", &[after], 1).unwrap().0, "a\nc\nafter-c\n");
    }

    /// A pass that fails makes no mark (the temp) once it knows: not for
    /// the additions due at the end before a chunk left unplaced, nor for
    /// an End of File chunk before one, nor for a chunk or an addition
    /// due on the line where a header's stricter match or a second
    /// occurrence shows up. Each is the locator's refusal.
    #[test]
    fn a_failed_pass_makes_no_mark() {
        let marked = |text: &str, chunks: &[Chunk]| {
            let mut mark = false;
            let mut source = |each: &mut dyn FnMut(&[u8])| {
                text.as_bytes().chunks(3).for_each(&mut *each);
                true
            };
            let r = run(chunks, false, &mut source, &mut |b| mark |= b.is_empty());
            assert!(oracle(text, chunks, false).is_err(), "{text:?}");
            (r, mark)
        };
        let c = |headers: &[&str], old: &[&str], new: &[&str]| {
            chunk(headers, old, new, vec![None; new.len()])
        };
        let add = c(&[], &[], &["added"]);
        let absent = c(&[], &["absent"], &["x"]);
        let text = "a\nb\nc\n";
        assert_eq!(marked(text, &[add.clone(), absent.clone()]), (None, false));
        let mut eof = c(&[], &["c"], &["C"]);
        eof.eof = true;
        assert_eq!(marked(text, &[eof, absent]), (None, false));
        // The header " x" is found loosely, then "x" exactly on the line
        // that completes the chunk: the locator searches after that one.
        let text = " x\na\nx\n";
        assert_eq!(
            marked(text, &[c(&["x"], &["a", "x"], &["y"])]),
            (None, false)
        );
        // An addition due on that line (after the header "a").
        let chunks = [c(&["x", "a"], &[], &["added"]), c(&[], &["q"], &[])];
        assert_eq!(marked(text, &chunks), (None, false));
    }

    #[test]
    fn loose_placements_by_hand() {
        let g = |text: &str, chunks: &[Chunk], strict: bool| {
            let got = pass_graded(text, chunks, 2, strict);
            if let Some(got) = &got {
                assert_eq!(Ok(got), oracle(text, chunks, strict).as_ref());
            }
            got.map(|(s, (_, new), grades)| (s, new, grades))
        };
        let c = |old: &[&str], new: &[&str]| chunk(&[], old, new, vec![None; new.len()]);
        let (t, w) = (Grade::TrailingWhitespace, Grade::Whitespace);
        // Matched loosely; a context line keeps the file's text.
        let k = chunk(&[], &["a", "“b”"], &["a", "c"], vec![Some(0), None]);
        let got = g("x\n\ta \n\"b\"\n", &[k], false);
        let want = ("x\n\ta \nc\n".into(), vec![2], vec![Grade::Punctuation]);
        assert_eq!(got, Some(want));
        assert_eq!(g("b \n", &[c(&["b"], &["B"])], true), None);
        // An exact match after a loose one is the locator's place; a
        // second loose one at the same grade its refusal; a looser one
        // after is nothing to either.
        assert_eq!(g("b \nb\n", &[c(&["b"], &["B"])], false), None);
        assert_eq!(g("b \nb\t\n", &[c(&["b"], &["B"])], false), None);
        let got = g("b \n b\n", &[c(&["b"], &["B"])], false);
        assert_eq!(got, Some(("B\n b\n".into(), vec![1], vec![t])));
        // A header found loosely, then stricter later: the locator's.
        let h = chunk(&["fn g"], &["x"], &["y"], vec![None]);
        let got = g(" fn g\nx\nfn g \nx\n", std::slice::from_ref(&h), false);
        assert_eq!(got, None);
        let got = g(" fn g\nx\n  fn g\nz\n", &[h], false);
        let want = (" fn g\ny\n  fn g\nz\n".into(), vec![2], vec![Grade::Exact]);
        assert_eq!(got, Some(want));
        // A later chunk searches after a loose one, at its own grade.
        let two = [c(&["a"], &["A"]), c(&["b "], &["B"])];
        let got = g("a \nb\na\n b\n", &two, false);
        assert_eq!(got, None); // "a" exact at line 3
        let got = g("a \nb\n", &two, false);
        assert_eq!(got, Some(("A\nB\n".into(), vec![1, 2], vec![t, t])));
        let got = g("a\n  b\n", &[c(&["a", "b"], &["c"])], false);
        assert_eq!(got, Some(("c\n".into(), vec![1], vec![w])));
        // A line of blanks too long to hold might match loosely: declined
        // (strict: it cannot match).
        let blank = format!("{}a\n", " ".repeat(2000));
        assert_eq!(g(&blank, &[c(&["a"], &["b"])], false), None);
        let got = g(&blank, &[c(&["a"], &["b"])], true);
        assert_eq!(got, None); // not there exactly
        let long = format!("{}\nq\n", "y ".repeat(2000));
        let got = g(&long, &[c(&["q"], &["b"])], false);
        let want = (
            format!("{}\nb\n", "y ".repeat(2000)),
            vec![2],
            vec![Grade::Exact],
        );
        assert_eq!(got, Some(want));
    }

    /// A thousand chunks, 60 of them matched loosely (trailing blanks, a
    /// leading tab, curly quotes), each under an `@@` line, on a file of
    /// 30,000 lines: the locator's answer in one pass. Chunks that all
    /// begin with a line the file repeats keep more partial matches under
    /// way than the pass follows and are left to the locator, as are more
    /// than 64 placed loosely.
    #[test]
    fn many_chunks_in_one_pass() {
        let n = 30_000;
        let text: String = (0..n)
            .map(|i| match i % 3 {
                0 => format!("fn f{i}() {{\n"),
                1 => format!("    say(\"v{i}\");\n"),
                _ => "}\n".to_owned(),
            })
            .collect();
        let ls = locate::lines(&text);
        let chunks: Vec<Chunk> = (0..1000)
            .map(|k| {
                let a = 30 * k;
                let old = match k % 50 {
                    0 => format!("{} ", ls[a + 1]),
                    10 => format!("\t{}", ls[a + 1].trim()),
                    20 => ls[a + 1].replace('"', "\u{201C}"),
                    _ => ls[a + 1].to_owned(),
                };
                let new = [&format!("    changed({k});"), "}"];
                chunk(&[ls[a]], &[&old, "}"], &new, vec![None, Some(1)])
            })
            .collect();
        let want = oracle(&text, &chunks, false).unwrap();
        let got = pass_graded(&text, &chunks, 4096, false).expect("streamed");
        assert_eq!(got, want);
        let loose = want.2.iter().filter(|g| **g > Grade::Exact).count();
        assert_eq!(loose, 60);
        let mut more = chunks.clone();
        more.iter_mut().take(70).for_each(|c| c.old[0].push(' '));
        assert!(oracle(&text, &more, false).is_ok());
        assert_eq!(pass_graded(&text, &more, 4096, false), None);
        // Each begins with "}", which every third line is.
        let chunks: Vec<Chunk> = (0..100)
            .map(|k| {
                let a = 300 * k;
                chunk(&[], &["}", ls[a + 3], ls[a + 4]], &["x"], vec![None])
            })
            .collect();
        let some = &chunks[..60];
        let got = pass_graded(&text, some, 4096, false).expect("60 followed");
        assert_eq!(Ok(got), oracle(&text, some, false));
        assert!(oracle(&text, &chunks, false).is_ok());
        assert_eq!(pass_graded(&text, &chunks, 4096, false), None);
    }

    /// Headers found loosely are watched to the end for a stricter match
    /// at the cost of a line each, not of a comparison per header: 2,000 chunks on 20,000 lines, each under an `@@` line the file
    /// has only with a trailing space, and two loose copies of one of
    /// them, compare 2 lines with a header, and the answer is the
    /// locator's in one pass; the same header exactly, later, is seen.
    #[test]
    fn headers_found_loosely_cost_a_line_each() {
        let mut text: String = (0..20_000)
            .map(|i| match i % 10 {
                2 => format!("fn f{}() {{ \n", i / 10),
                _ => format!("line {i}\n"),
            })
            .collect();
        text += "fn f7() {\t\n fn f7() {\n";
        let chunks: Vec<Chunk> = (0..2000)
            .map(|k| {
                let old = format!("line {}", 10 * k + 5);
                chunk(&[&format!("fn f{k}() {{")], &[&old], &["x"], vec![None])
            })
            .collect();
        HEADER_LINES.with(|c| c.set(0));
        let got = pass_graded(&text, &chunks, 4096, false).expect("streamed");
        assert_eq!(Ok(got), oracle(&text, &chunks, false));
        // 20,008,000 when each header was compared with every later line.
        let work = HEADER_LINES.with(|c| c.get());
        assert_eq!(work, 2);
        text += "fn f9() {\n";
        assert_eq!(pass_graded(&text, &chunks, 4096, false), None);
    }

    /// Many chunks, loosely matched and under headers found loosely
    /// (`passes.rs`'s [`many_chunks`]): whenever the pass answers, it is the
    /// locator's answer, strict or not, in any piece size (a quarter of
    /// the files with loose copies that a line later overrules).
    ///
    /// [`many_chunks`]: crate::patch::passes::tests::many_chunks
    #[test]
    fn many_loose_chunks_stream_as_the_locator() {
        let mut r = rng(0x33_5713);
        let (mut streamed, mut loose, mut cases) = (0, 0, 0);
        for case in 0..400 {
            let overruled = case % 4 == 0;
            let (text, chunks) = crate::patch::passes::tests::many_chunks(&mut r, overruled);
            for strict in [false, true] {
                let want = oracle(&text, &chunks, strict);
                for piece in [7, 4096] {
                    cases += 1;
                    let Some(got) = pass_graded(&text, &chunks, piece, strict) else {
                        continue;
                    };
                    assert_eq!(Ok(&got), want.as_ref(), "{strict} {text:?} {chunks:?}");
                    streamed += 1;
                    loose += usize::from(got.2.iter().any(|g| *g > Grade::Exact));
                }
            }
        }
        eprintln!("{cases} cases: {streamed} streamed, {loose} of them loose");
        assert!(
            streamed > 100 && loose > 50,
            "{streamed} streamed, {loose} loose"
        );
    }

    /// `passes.rs`'s tricky-line cases (every mapped punctuation
    /// character, Unicode blanks, periodic runs, headers, End of File,
    /// more than 64 chunks): whenever the pass answers, it is the
    /// locator's answer.
    #[test]
    fn tricky_lines_stream_as_the_locator() {
        let mut r = rng(0x33_b12d);
        let (mut streamed, mut loose, mut cases) = (0, 0, 0);
        for _ in 0..3000 {
            let (text, chunks) = crate::patch::passes::tricky_lines::case(&mut r);
            for strict in [false, true] {
                let want = oracle(&text, &chunks, strict);
                for piece in [3, 4096] {
                    cases += 1;
                    let Some(got) = pass_graded(&text, &chunks, piece, strict) else {
                        continue;
                    };
                    assert_eq!(Ok(&got), want.as_ref(), "{strict} {text:?} {chunks:?}");
                    streamed += 1;
                    loose += usize::from(got.2.iter().any(|g| *g > Grade::Exact));
                }
            }
        }
        eprintln!("{cases} cases: {streamed} streamed, {loose} of them loose");
        assert!(streamed > 1000 && loose > 500, "{streamed} {loose}");
    }
}
