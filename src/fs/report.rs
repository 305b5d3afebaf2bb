//! `--report` assembly: the extra keys of the result line, filled from the
//! core's summary (lines, per-edit counts, the diff) and from the file.

use std::os::fd::OwnedFd;

use rustix::fs as rfs;

use crate::engine::{Diff, EditStats, LINES_MAX};
use crate::protocol::{EditReport, Report};

/// On an error after a successful read, `--report` describes the current file.
pub(super) fn fill_current(report: &mut Option<Report>, file: &OwnedFd, digest: Option<[u8; 32]>) {
    if let Some(r) = report.as_mut() {
        r.size = rfs::fstat(file).ok().map(|s| s.st_size as u64);
        r.sha256 = digest.map(|d| crate::hex::encode(&d));
    }
}

/// The new content's size and digest, and where the replacements went.
///
/// The result line stays bounded however many edits a batch has: a
/// batch's `edits` list has an entry for each of its first
/// `engine::EDITS_MAX` (1,000) edits only, then `"edits_truncated":true`, and its
/// entries hold at most [`LINES_MAX`] (1,000) lines in total, given to the
/// edits in order (an edit cut by that budget says `lines_truncated`). The
/// top-level `lines` are the last edit's own (at most `LINES_MAX`), `last`
/// when the batch is longer than `edits`. The vectors are moved, not cloned.
#[cfg_attr(as_edit_small, optimize(size))]
pub(super) fn fill_edited(
    r: &mut Report,
    size: u64,
    digest: Option<[u8; 32]>,
    mut edits: Vec<EditStats>,
    last: Option<EditStats>,
    diff: Option<Diff>,
) {
    r.size = Some(size);
    r.sha256 = digest.map(|d| crate::hex::encode(&d));
    if edits.len() > 1 {
        // The top-level list is the last edit's own, the one copy made here.
        r.edits_truncated = last.is_some().then_some(true);
        let last = last.as_ref().or(edits.last()).expect("more than one");
        r.lines = Some(last.lines.clone());
        r.lines_truncated = last.lines_truncated.then_some(true);
        let mut budget = LINES_MAX;
        r.edits = Some(
            edits
                .into_iter()
                .map(|mut e| {
                    let cut = e.lines.len() > budget;
                    e.lines.truncate(budget);
                    e.lines.shrink_to_fit();
                    budget -= e.lines.len();
                    EditReport {
                        count: e.count,
                        lines: e.lines,
                        lines_truncated: e.lines_truncated || cut,
                    }
                })
                .collect(),
        );
    } else if let Some(e) = edits.pop() {
        r.lines = Some(e.lines);
        r.lines_truncated = e.lines_truncated.then_some(true);
    }
    // `--diff`: the core built it (see `engine::Engine::with_diff` for its
    // memory bound); `diff_truncated` when it was cut or left out.
    if let Some(d) = diff {
        r.diff = d.text;
        if d.truncated {
            r.diff_truncated = Some(true);
        }
    }
}
