//! The result lines of `glob` and `grep`, within `max_bytes` (`answer.rs`).
//!
//! An answer cut by `max_bytes` or by `limit` ends with `"truncated":true`
//! and `"next":{"offset":K}`: `K` counts entries for `glob`, files for
//! `grep`'s `files` and `count`, and match lines for `content` (a page
//! cut by `max_bytes` may lose the context lines right after its last
//! match; the next page starts at the next match). A walk cut by its own
//! bound (`walk.rs`) says `"truncated":true` with no `next`.

use std::path::Path;

use super::answer::{next, push_str, Page};
use super::find::{self, GlobRequest};
use super::grep_op::{self, GrepRequest, Output};
use super::name;
use crate::protocol::{ErrorKind, Failure};

fn too_small(max_bytes: u64, needs: usize) -> Failure {
    Failure::new(
        ErrorKind::InvalidArgument,
        format!("\"max_bytes\" {max_bytes} cannot hold one entry of this answer: it needs {needs}"),
    )
}

/// The tail and the `next` offset: `truncated` alone when the walk was cut
/// (no offset continues it), `next` when entries are left.
fn tail(fields: &str, at: u64, more: bool, walk_cut: bool) -> String {
    let mut t = fields.to_owned();
    if more {
        t += &next(Some(&[("offset", at)]));
    } else if walk_cut {
        t += ",\"truncated\":true";
    } else {
        t += &next(None);
    }
    t
}

/// Runs `glob` and writes its line.
pub(super) fn glob(
    req: &GlobRequest,
    root: Option<&Path>,
    max_bytes: u64,
) -> Result<String, Failure> {
    let found = find::glob(req, root)?;
    let fields = format!(",\"total\":{}", found.total);
    let reserve = fields.len() + next(Some(&[("offset", u64::MAX)])).len();
    let mut page = Page::new(max_bytes, "", "entries");
    let mut at = req.offset;
    for e in &found.entries {
        let mut out = String::from("{");
        name::field(&mut out, "path", &e.path);
        out.push_str(&format!(
            ",\"size\":{},\"mtime_ns\":{}}}",
            e.size, e.mtime_ns
        ));
        if !page.push(&out, reserve) {
            if page.kept() == 0 {
                return Err(too_small(max_bytes, page.needs(out.len(), reserve)));
            }
            break;
        }
        at += 1;
    }
    Ok(page.finish(&tail(&fields, at, at < found.total, found.walk_cut)))
}

/// Runs `grep` and writes its line.
pub(super) fn grep(
    req: &GrepRequest,
    root: Option<&Path>,
    max_bytes: u64,
) -> Result<String, Failure> {
    let g = grep_op::grep(req, root)?;
    let fields = format!(
        ",\"files_searched\":{},\"skipped_binary\":{}",
        g.files_searched, g.skipped_binary
    );
    let reserve = fields.len() + next(Some(&[("offset", u64::MAX)])).len();
    let key = if req.output == Output::Content {
        "matches"
    } else {
        "files"
    };
    let mut page = Page::new(max_bytes, "", key);
    let mut at = req.offset;
    let mut cut = false;
    let mut entries: Vec<String> = Vec::new();
    let mut counted: Vec<bool> = Vec::new();
    if req.output == Output::Content {
        for l in &g.lines {
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
            entries.push(out);
            counted.push(!l.context);
        }
    } else {
        for (p, n) in &g.files {
            let mut out = String::from("{");
            name::field(&mut out, "path", p);
            if req.output == Output::Count {
                out.push_str(&format!(",\"count\":{n}"));
            }
            out.push('}');
            entries.push(out);
            counted.push(true);
        }
    }
    for (out, c) in entries.iter().zip(&counted) {
        if !page.push(out, reserve) {
            if page.kept() == 0 {
                return Err(too_small(max_bytes, page.needs(out.len(), reserve)));
            }
            cut = true;
            break;
        }
        at += u64::from(*c);
    }
    // Context lines alone filled the page: its `next` would repeat this
    // request forever, so refuse as for one entry too long (the first
    // match and the context before it must fit one page).
    if cut && at == req.offset {
        let first = counted
            .iter()
            .position(|c| *c)
            .map_or(entries.len(), |i| i + 1);
        let len: usize = entries[..first].iter().map(|e| e.len() + 1).sum();
        return Err(too_small(max_bytes, page.needs(len - 1, reserve)));
    }
    // `limit` stopped the search (more were found) or `max_bytes` cut the page.
    Ok(page.finish(&tail(&fields, at, cut || g.more, g.walk_cut)))
}
