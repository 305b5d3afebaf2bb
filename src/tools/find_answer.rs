//! The result lines of `glob` (and the tail `grep_answer.rs` shares),
//! within `max_bytes` ([`answer`](super::answer)).
//!
//! An answer cut by `max_bytes` or by `limit` ends with `"truncated":true`
//! and `"next":{"offset":K}`: `K` counts entries for `glob`. `truncated`
//! speaks of pages only: a walk cut by its own bound (`walk.rs`: 2,000,000
//! directory entries, 64 MiB of pending names, 256 levels) adds
//! `"walk_limit":true`, since no
//! `offset` reaches what it did not walk (`total` and the counts are of
//! what it walked).

use std::path::Path;

use super::answer::{next, Page};
use super::find::{self, GlobRequest};
use super::name;
use crate::protocol::{ErrorKind, Failure};

pub(super) fn too_small(max_bytes: u64, needs: usize) -> Failure {
    refused(max_bytes, &needs.to_string())
}

/// The refusal of an entry whose size is not known, only that it is over
/// `max_bytes` (`grep`'s lines kept short: `grep_long::keep`).
pub(super) fn too_small_over(max_bytes: u64) -> Failure {
    refused(max_bytes, &format!("more than {max_bytes}"))
}

fn refused(max_bytes: u64, needs: &str) -> Failure {
    Failure::new(
        ErrorKind::InvalidArgument,
        format!("\"max_bytes\" {max_bytes} cannot hold one entry of this answer: it needs {needs}"),
    )
}

/// The tail: `fields`, `"walk_limit":true` when a bound of the walk cut
/// it (no page holds what it did not reach), and `truncated` with `next`
/// when entries are left for the next page.
pub(super) fn tail(fields: &str, at: u64, more: bool, walk_cut: bool) -> String {
    let mut t = fields.to_owned();
    if walk_cut {
        t += WALK_LIMIT;
    }
    t += &next(more.then_some(&[("offset", at)][..]));
    t
}

/// What says the walk stopped at its bound (`walk.rs`), not for `max_bytes`
/// or `limit`.
pub(super) const WALK_LIMIT: &str = ",\"walk_limit\":true";

/// What a walk could not see, appended to `fields`: `"unreadable":N`
/// (entries it could not read) and `"pseudo_not_entered":N` (pseudo file
/// systems it did not enter), each only when not 0.
pub(super) fn walk_counts(fields: &mut String, unreadable: u64, pseudo: u64) {
    if unreadable > 0 {
        *fields += &format!(",\"unreadable\":{unreadable}");
    }
    if pseudo > 0 {
        *fields += &format!(",\"pseudo_not_entered\":{pseudo}");
    }
}

/// The reserve of a tail of `fields`: at its longest (the walk is over, so
/// whether it was cut is known).
pub(super) fn reserve(fields: &str, walk_cut: bool) -> usize {
    let cut = if walk_cut { WALK_LIMIT.len() } else { 0 };
    fields.len() + cut + next(Some(&[("offset", u64::MAX)])).len()
}

/// Runs `glob` and writes its line.
#[inline(never)] // its walk at opt-level 3, not inlined into the size-built `tools::answer`
pub(super) fn glob(
    req: &GlobRequest,
    root: Option<&Path>,
    max_bytes: u64,
) -> Result<String, Failure> {
    let found = find::glob(req, root)?;
    let mut fields = format!(",\"total\":{}", found.total);
    walk_counts(&mut fields, found.unreadable, found.pseudo);
    let reserve = reserve(&fields, found.walk_cut);
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
