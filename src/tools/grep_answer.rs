//! The result line of `grep`, within `max_bytes` (`answer.rs`).
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

use std::path::Path;

use super::answer::{push_str, Page};
use super::find_answer::{reserve, tail, too_small, too_small_over};
use super::grep_op::{self, GrepRequest, Grepped, Line, Output};
use super::name;
use crate::protocol::Failure;

/// One `content` entry, rendered.
fn entry(l: &Line) -> String {
    let mut out = String::from("{");
    name::field(&mut out, "path", &l.path);
    out.push_str(&format!(",\"line\":{},\"text\":", l.line));
    push_str(&mut out, &l.text);
    if l.cut {
        out.push_str(",\"cut\":true");
    }
    if l.context {
        out.push_str(",\"context\":true");
    }
    out.push('}');
    out
}

/// The lines of `lines` as groups: each a match with the context lines
/// that belong to it (see the module docs), as index ranges.
pub fn groups(lines: &[Line], context: u64) -> Vec<std::ops::Range<usize>> {
    let mut out: Vec<std::ops::Range<usize>> = Vec::new();
    // The current group's match: its path and line.
    let mut last: Option<(&[u8], u64)> = None;
    let mut start = 0;
    for (i, l) in lines.iter().enumerate() {
        let after =
            l.context && last.is_some_and(|(p, n)| p == l.path.as_slice() && l.line - n <= context);
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

/// Runs `grep` and writes its line.
pub(super) fn grep(
    req: &GrepRequest,
    root: Option<&Path>,
    max_bytes: u64,
) -> Result<String, Failure> {
    render(req, &grep_op::grep(req, root, max_bytes)?, max_bytes)
}

/// The line of what [`grep_op::grep`] found.
pub(super) fn render(req: &GrepRequest, g: &Grepped, max_bytes: u64) -> Result<String, Failure> {
    let mut fields = format!(
        ",\"files_searched\":{},\"skipped_binary\":{}",
        g.files_searched, g.skipped_binary
    );
    if g.unreadable > 0 {
        fields += &format!(",\"unreadable\":{}", g.unreadable);
    }
    if g.pseudo > 0 {
        fields += &format!(",\"pseudo_not_entered\":{}", g.pseudo);
    }
    let reserve = reserve(&fields, g.walk_cut);
    let key = if req.output == Output::Content {
        "matches"
    } else {
        "files"
    };
    let mut page = Page::new(max_bytes, "", key);
    let mut at = req.offset;
    let mut cut = false;
    // Each entry pushed is a whole group (its lines joined by commas), and
    // how many matches it holds.
    // `short`: a line of it is kept short of its text (`grep_op::Line`),
    // so only that it needs more than `max_bytes` is known.
    let mut push = |text: &str, matches: u64, short: bool| -> Result<bool, Failure> {
        if page.push(text, reserve) {
            at += matches;
            return Ok(true);
        }
        if page.kept() == 0 && short {
            return Err(too_small_over(max_bytes));
        }
        if page.kept() == 0 {
            return Err(too_small(max_bytes, page.needs(text.len(), reserve)));
        }
        cut = true;
        Ok(false)
    };
    if req.output == Output::Content {
        for r in groups(&g.lines, req.context) {
            let group: Vec<String> = g.lines[r.clone()].iter().map(entry).collect();
            let short = g.lines[r.clone()].iter().any(|l| l.short);
            let matches = g.lines[r].iter().filter(|l| !l.context).count() as u64;
            if !push(&group.join(","), matches, short)? {
                break;
            }
        }
    } else {
        for (p, n) in &g.files {
            let mut out = String::from("{");
            name::field(&mut out, "path", p);
            out.push_str(&format!(",\"count\":{n}}}"));
            if !push(&out, 1, false)? {
                break;
            }
        }
    }
    // `limit` stopped the search (more were found) or `max_bytes` cut the page.
    Ok(page.finish(&tail(&fields, at, cut || g.more, g.walk_cut)))
}
