//! `--report` assembly: the extra keys of the result line, filled from the
//! core's summary (lines, per-edit counts, the diff) and from the file.

use std::os::fd::OwnedFd;

use rustix::fs as rfs;

use crate::engine::{Diff, EditStats};
use crate::protocol::{EditReport, Report};

/// On an error after a successful read, `--report` describes the current file.
pub(super) fn fill_current(report: &mut Option<Report>, file: &OwnedFd, digest: Option<[u8; 32]>) {
    if let Some(r) = report.as_mut() {
        r.size = rfs::fstat(file).ok().map(|s| s.st_size as u64);
        r.sha256 = digest.map(|d| crate::hex::encode(&d));
    }
}

/// The new content's size and digest, and where the replacements went.
pub(super) fn fill_edited(
    r: &mut Report,
    size: u64,
    digest: Option<[u8; 32]>,
    edits: &[EditStats],
    diff: Option<Diff>,
) {
    r.size = Some(size);
    r.sha256 = digest.map(|d| crate::hex::encode(&d));
    r.lines = edits.last().map(|e| e.lines.clone());
    r.lines_truncated = edits.last().and_then(|e| e.lines_truncated.then_some(true));
    if edits.len() > 1 {
        r.edits = Some(
            edits
                .iter()
                .map(|e| EditReport {
                    count: e.count,
                    lines: e.lines.clone(),
                    lines_truncated: e.lines_truncated,
                })
                .collect(),
        );
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
