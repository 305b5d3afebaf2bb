//! The result line of `grep`, within `max_bytes` ([`answer`](super::answer)).
//!
//! An answer cut by `max_bytes` or by `limit` ends with `"truncated":true`
//! and `"next":{"offset":K}`: `K` counts files for `files` and `count`,
//! and match lines for `content`. A `content` page holds whole *groups*:
//! a match with its before-context and its after-context (the context
//! lines after a match up to `context` of them belong to it, those further
//! on to the next match), so the pages that follow each other through
//! `next` concatenate to the unpaged answer, no line twice, none lost. A
//! group too long for `max_bytes` even alone is `invalid_argument` naming
//! the size it needs (following a `next` that repeats the request would
//! loop forever).
//!
//! A `content` page is written as the search finds its lines
//! ([`Render`]): each entry rendered once, straight into the line that
//! becomes the answer, so the answer is held once (no list of lines, no
//! group strings joined, no second page). Which groups fit is decided at
//! the end, when the tail is known, by cutting the line back to the last
//! group's end that fits; a group that cannot fit whatever the tail is
//! not rendered, nor any after it (the search stops later, as before, so
//! `files_searched` is what it was), and the line never passes
//! `max_bytes`.

use std::fmt::Write as _;
use std::path::Path;

use super::answer::{push_str, Page};
use super::find_answer::{reserve, tail, too_small, too_small_over};
use super::grep_op::{self, GrepRequest, Grepped, LineRef, Output};
use super::name;
use crate::protocol::Failure;

/// One `content` entry, rendered into `out`.
fn entry(out: &mut String, l: &LineRef<'_>) {
    out.push('{');
    name::field(out, "path", l.path);
    let _ = write!(out, ",\"line\":{},\"text\":", l.line);
    push_str(out, l.text);
    if l.cut {
        out.push_str(",\"cut\":true");
    }
    if l.context {
        out.push_str(",\"context\":true");
    }
    out.push('}');
}

/// What follows the list's last entry besides the tail: `]`, `}`, `\n`.
const CLOSE: usize = 3;

/// A `content` page written as its lines are found (see the module docs).
#[derive(Debug)]
pub struct Render {
    /// `__RESULT__{"matches":[` and the entries rendered, comma-separated;
    /// never longer than `max`.
    line: String,
    max: usize,
    /// The longest tail any answer can have.
    worst: usize,
    context: u64,
    /// Where the entries start in `line`.
    open: usize,
    /// The open group's lines, its matches, and its bytes not rendered
    /// (once it passed `max`: it cannot fit).
    group_lines: usize,
    group_matches: u64,
    spill: usize,
    /// A line of the open group is kept short (only that it needs more
    /// than `max_bytes` is known of it).
    group_short: bool,
    /// The open group's match: its path (a buffer reused) and line.
    path: Vec<u8>,
    last: Option<u64>,
    /// Entries rendered, and matches in the groups closed.
    entries: usize,
    matches: u64,
    /// Groups closed as (end in `line`, matches up to it): the last that
    /// fits under any tail, and those after it that may not.
    sure: Option<(usize, u64)>,
    maybe: Vec<(usize, u64)>,
    /// The first group's length, for the refusal of one that never fits,
    /// and whether a line of it was kept short.
    first: Option<(usize, bool)>,
    /// A group closed that cannot fit: no later one is rendered.
    full: bool,
    scratch: String,
}

impl Render {
    /// A page of `max_bytes` for groups of `context` lines each side.
    pub fn new(max_bytes: u64, context: u64) -> Render {
        let max = max_bytes as usize;
        // Capacity `max`: the line never grows past it, nor by copying.
        let mut line = String::with_capacity(max);
        line.push_str(crate::protocol::RESULT_PREFIX);
        line.push_str("{\"matches\":[");
        let n = u64::MAX;
        let worst = reserve(&fields(n, n, n, n), true);
        Render {
            open: line.len(),
            line,
            max,
            worst,
            context,
            group_lines: 0,
            group_matches: 0,
            spill: 0,
            group_short: false,
            path: Vec::new(),
            last: None,
            entries: 0,
            matches: 0,
            sure: None,
            maybe: Vec::new(),
            first: None,
            full: false,
            scratch: String::new(),
        }
    }

    /// The next line of the answer, in order (a group as the module docs say).
    pub fn push(&mut self, l: &LineRef<'_>) {
        let after = l.context
            && self
                .last
                .is_some_and(|n| self.path == l.path && l.line - n <= self.context);
        if !after && self.last.is_some() {
            self.close();
        }
        if !l.context {
            self.last = Some(l.line);
            if self.path != l.path {
                self.path.clear();
                self.path.extend_from_slice(l.path);
            }
            self.group_matches += 1;
        }
        self.group_lines += 1;
        self.group_short |= l.short;
        if self.full {
            return;
        }
        self.scratch.clear();
        entry(&mut self.scratch, l);
        let comma = usize::from(self.entries > 0 || self.spill > 0);
        if self.spill == 0 && self.line.len() + comma + self.scratch.len() <= self.max {
            if comma == 1 {
                self.line.push(',');
            }
            self.line.push_str(&self.scratch);
            self.entries += 1;
        } else {
            // Past `max_bytes` with any tail: counted, not kept.
            self.spill += comma + self.scratch.len();
        }
    }

    /// Ends the open group.
    fn close(&mut self) {
        if self.group_lines > 0 && !self.full {
            let end = self.line.len() + self.spill;
            self.matches += self.group_matches;
            self.first
                .get_or_insert((end - self.open, self.group_short));
            if self.spill > 0 {
                self.full = true;
            } else if end + CLOSE + self.worst <= self.max {
                self.sure = Some((end, self.matches));
                self.maybe.clear();
            } else {
                self.maybe.push((end, self.matches));
            }
        }
        (self.group_lines, self.group_matches, self.spill) = (0, 0, 0);
        self.group_short = false;
        self.last = None;
    }

    /// The page cut after its last group that fits with `reserve` bytes
    /// of tail: the line (list still open), the matches it holds, and
    /// whether a group was cut off; `Err` with the bytes needed when the
    /// first group does not fit even alone (`None`: a line of it was kept
    /// short, so more than `max_bytes`).
    fn finish(mut self, reserve: usize) -> Result<(String, u64, bool), Option<usize>> {
        self.close();
        let fits = |&&(end, _): &&(usize, u64)| end + CLOSE + reserve <= self.max;
        let kept = self.maybe.iter().rev().find(fits).or(self.sure.as_ref());
        let (end, matches) = match (kept, self.first) {
            (Some(&k), _) => k,
            (None, None) => (self.open, 0),
            (None, Some((_, true))) => return Err(None),
            (None, Some((len, false))) => return Err(Some(self.open + len + CLOSE + reserve)),
        };
        let cut = self.full || end < self.line.len();
        self.line.truncate(end);
        Ok((self.line, matches, cut))
    }
}

/// The fields every `grep` answer ends with (before `walk_limit` and `next`).
fn fields(searched: u64, binary: u64, unreadable: u64, pseudo: u64) -> String {
    let mut f = format!(",\"files_searched\":{searched},\"skipped_binary\":{binary}");
    super::find_answer::walk_counts(&mut f, unreadable, pseudo);
    f
}

/// Runs `grep` and writes its line.
pub(super) fn grep(
    req: &GrepRequest,
    root: Option<&Path>,
    max_bytes: u64,
) -> Result<String, Failure> {
    let content = req.output == Output::Content;
    let mut render = content.then(|| Render::new(max_bytes, req.context));
    let g = match render.as_mut() {
        Some(r) => grep_op::grep_into(req, root, max_bytes, &mut |l| r.push(l))?,
        None => grep_op::grep(req, root, max_bytes)?,
    };
    answer(req, g, render, max_bytes)
}

/// The line of what [`grep_op::grep`] found and kept as lines (tests: the
/// same [`Render`] as the op's).
#[cfg(test)]
pub(super) fn render(req: &GrepRequest, g: &Grepped, max_bytes: u64) -> Result<String, Failure> {
    let content = req.output == Output::Content;
    let mut r = Render::new(max_bytes, req.context);
    for l in &g.lines {
        r.push(&LineRef::from(l));
    }
    let kept = Grepped {
        lines: Vec::new(),
        files: g.files.clone(),
        files_searched: g.files_searched,
        skipped_binary: g.skipped_binary,
        unreadable: g.unreadable,
        pseudo: g.pseudo,
        truncated: g.truncated,
        more: g.more,
        walk_cut: g.walk_cut,
    };
    answer(req, kept, content.then_some(r), max_bytes)
}

/// The line of what the search found: `content`'s page from `rendered`
/// (its lines, given to it as found), `files` and `count` from `g`.
fn answer(
    req: &GrepRequest,
    g: Grepped,
    rendered: Option<Render>,
    max_bytes: u64,
) -> Result<String, Failure> {
    let fields = fields(g.files_searched, g.skipped_binary, g.unreadable, g.pseudo);
    let reserve = reserve(&fields, g.walk_cut);
    if let Some(r) = rendered {
        let (mut line, matches, cut) = r.finish(reserve).map_err(|n| match n {
            Some(n) => too_small(max_bytes, n),
            None => too_small_over(max_bytes),
        })?;
        line.push(']');
        line.push_str(&tail(
            &fields,
            req.offset + matches,
            cut || g.more,
            g.walk_cut,
        ));
        line.push_str("}\n");
        debug_assert!(line.len() as u64 <= max_bytes, "grep's reserve was short");
        return Ok(line);
    }
    let mut page = Page::new(max_bytes, "", "files");
    let mut at = req.offset;
    let mut cut = false;
    // Each entry pushed is a whole group (its lines joined by commas), and
    // how many matches it holds.
    let mut push = |text: &str, matches: u64| -> Result<bool, Failure> {
        if page.push(text, reserve) {
            at += matches;
            return Ok(true);
        }
        if page.kept() == 0 {
            return Err(too_small(max_bytes, page.needs(text.len(), reserve)));
        }
        cut = true;
        Ok(false)
    };
    for (p, n) in &g.files {
        let mut out = String::from("{");
        name::field(&mut out, "path", p);
        out.push_str(&format!(",\"count\":{n}}}"));
        if !push(&out, 1)? {
            break;
        }
    }
    // `limit` stopped the search (more were found) or `max_bytes` cut the page.
    Ok(page.finish(&tail(&fields, at, cut || g.more, g.walk_cut)))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::tools::grep_op::Line;
    use proptest::prelude::*;

    /// The lines of `lines` as groups: each a match with the context lines
    /// that belong to it (see the module docs), as index ranges.
    pub fn groups(lines: &[Line], context: u64) -> Vec<std::ops::Range<usize>> {
        let mut out: Vec<std::ops::Range<usize>> = Vec::new();
        // The current group's match: its path and line.
        let mut last: Option<(&[u8], u64)> = None;
        let mut start = 0;
        for (i, l) in lines.iter().enumerate() {
            let after = l.context
                && last.is_some_and(|(p, n)| p == l.path.as_slice() && l.line - n <= context);
            if after {
                continue;
            }
            // A match, or a context line before one: a group starts here
            // unless the one begun is still only before-context.
            if last.is_some() {
                out.push(start..i);
                start = i;
                last = None;
            }
            if !l.context {
                last = Some((&l.path, l.line));
            }
        }
        if start < lines.len() {
            out.push(start..lines.len());
        }
        out
    }

    /// The page as it was built before [`Render`]: every line kept, then
    /// each group rendered, joined and pushed into a [`Page`].
    fn paged(lines: &[Line], context: u64, max: u64, fields: &str) -> Result<String, Failure> {
        let reserve = reserve(fields, false);
        let mut page = Page::new(max, "", "matches");
        let (mut at, mut cut) = (0, false);
        for r in groups(lines, context) {
            let group: Vec<String> = lines[r.clone()]
                .iter()
                .map(|l| {
                    let mut out = String::new();
                    entry(&mut out, &as_ref(l));
                    out
                })
                .collect();
            let text = group.join(",");
            if page.push(&text, reserve) {
                at += lines[r].iter().filter(|l| !l.context).count() as u64;
                continue;
            }
            if page.kept() == 0 {
                return Err(too_small(max, page.needs(text.len(), reserve)));
            }
            cut = true;
            break;
        }
        Ok(page.finish(&tail(fields, at, cut, false)))
    }

    fn as_ref(l: &Line) -> LineRef<'_> {
        LineRef::from(l)
    }

    fn rendered(lines: &[Line], context: u64, max: u64, fields: &str) -> Result<String, Failure> {
        let mut r = Render::new(max, context);
        for l in lines {
            r.push(&as_ref(l));
        }
        let (mut line, at, cut) = r
            .finish(reserve(fields, false))
            .map_err(|n| n.map_or(too_small_over(max), |n| too_small(max, n)))?;
        line.push(']');
        line.push_str(&tail(fields, at, cut, false));
        line.push_str("}\n");
        assert!(line.len() as u64 <= max);
        Ok(line)
    }

    proptest! {
        /// [`Render`] answers as every line kept and paged did, byte for
        /// byte (refusals included), whatever the lines, context and bound.
        #[test]
        fn rendering_as_found_is_the_page_of_the_lines_kept(
            steps in proptest::collection::vec(
                (0u8..3, 1u64..4, "[a-z\u{e9}\"]{0,30}", any::<bool>(), any::<bool>()),
                0..40,
            ),
            context in 0u64..3,
            // From 100: the empty answer (85 bytes at most here) fits, as any
            // request's does (max_bytes is at least 1,024).
            max in 100u64..1500,
            searched in 0u64..100_000,
        ) {
            // Paths in order, lines rising within a path.
            let (mut path, mut no) = (0u8, 0u64);
            let mut lines = Vec::new();
            for (next_path, gap, text, cut, ctx) in steps {
                if next_path > 0 {
                    path += next_path;
                    no = 0;
                }
                no += gap;
                lines.push(Line {
                    path: format!("d/f{path}").into_bytes(),
                    line: no,
                    text,
                    cut,
                    context: ctx,
                    short: false,
                });
            }
            let fields = fields(searched, 1, 0, 0);
            let want = paged(&lines, context, max, &fields);
            let got = rendered(&lines, context, max, &fields);
            match (want, got) {
                (Ok(w), Ok(g)) => prop_assert_eq!(w, g),
                (Err(w), Err(g)) => prop_assert_eq!(w.detail, g.detail),
                (w, g) => prop_assert!(false, "{:?} vs {:?}", w, g),
            }
        }
    }
}
