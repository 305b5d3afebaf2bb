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
/// A batch's `edits` list holds at most `LINES_MAX` lines in total, given
/// to the edits in order (an edit cut by that budget says
/// `lines_truncated`), so the result line stays bounded however many edits
/// there are. The vectors are moved, not cloned.
pub(super) fn fill_edited(
    r: &mut Report,
    size: u64,
    digest: Option<[u8; 32]>,
    mut edits: Vec<EditStats>,
    diff: Option<Diff>,
) {
    r.size = Some(size);
    r.sha256 = digest.map(|d| crate::hex::encode(&d));
    if edits.len() > 1 {
        // The top-level list is the last edit's own (at most LINES_MAX),
        // the one copy made here.
        let last = edits.last().expect("more than one");
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
