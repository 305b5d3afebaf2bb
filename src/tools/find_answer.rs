//! The result lines of `glob` (and the tail `grep_answer.rs` shares),
//! within `max_bytes` (`answer.rs`).
//!
//! An answer cut by `max_bytes` or by `limit` ends with `"truncated":true`
//! and `"next":{"offset":K}`: `K` counts entries for `glob`. A walk cut by
//! its own bound (`walk.rs`) says `"truncated":true` with no `next`.

use std::path::Path;

use super::answer::{next, Page};
use super::find::{self, GlobRequest};
use super::name;
use crate::protocol::{ErrorKind, Failure};

pub(super) fn too_small(max_bytes: u64, needs: usize) -> Failure {
    Failure::new(
        ErrorKind::InvalidArgument,
        format!("\"max_bytes\" {max_bytes} cannot hold one entry of this answer: it needs {needs}"),
    )
}

/// The tail and the `next` offset: `truncated` alone when the walk was cut
/// (no offset continues it), `next` when entries are left.
pub(super) fn tail(fields: &str, at: u64, more: bool, walk_cut: bool) -> String {
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
