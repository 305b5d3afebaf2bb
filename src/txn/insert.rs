//! `insert`: text as whole lines after line N (0: before the first).
//!
//! Two forms, one answer. [`insert`](as_edit_wire::txn::insert::insert)
//! (the wire crate's, pure) works on a whole text: the host's
//! transfer fallback runs it on the downloaded file, and `--diff` needs
//! both texts anyway. [`stream`] reads the file through the engine's
//! strict UTF-8 and line-ending normalization and writes the new content
//! into the temp as it goes, so an insert holds nothing proportional to
//! the file (a 32 MiB file took 64 MiB of memory as a whole text).

use std::os::fd::OwnedFd;
use std::path::Path;

use crate::fs::temp::Temp;
use crate::fs::Target;
use crate::protocol::Report;

use super::op::OpRefusal;
use super::read::read_norm;
use super::writer::TempWriter;
use as_edit_wire::txn::insert::{lines_of, out_of_range};

/// The streaming insert of `text` after line `line` of `src`, into a new
/// temp beside `at`: the same bytes as [`insert`] on the whole text.
#[cold] // off the single-file path: LLVM optimizes it for size
#[cfg_attr(as_edit_small, optimize(size))]
pub(super) fn stream<'a>(
    at: &'a Target,
    src: &OwnedFd,
    line: u64,
    text: &str,
    path: &Path,
    crlf: bool,
    report: &mut Option<Report>,
) -> Result<Temp<'a>, OpRefusal> {
    let t = lines_of(text);
    let mut w = TempWriter::new(at, crlf, report.is_some());
    // Newlines passed so far, the last byte out, and whether `t` is in.
    let (mut seen, mut last, mut done) = (0u64, None, line == 0);
    if done {
        w.put(&t);
    }
    let mut on = |b: &[u8]| {
        if b.is_empty() {
            return;
        }
        last = b.last().copied();
        if done {
            return w.put(b);
        }
        let need = (line - seen) as usize;
        match memchr::memchr_iter(b'\n', b).nth(need - 1) {
            Some(i) => {
                w.put(&b[..=i]);
                w.put(&t);
                w.put(&b[i + 1..]);
                done = true;
            }
            None => {
                seen += memchr::memchr_iter(b'\n', b).count() as u64;
                w.put(b);
            }
        }
    };
    read_norm(src, path, &mut on)?;
    if !done {
        // After the last line: one without a final newline gets it first.
        let lines = seen + u64::from(last.is_some_and(|b| b != b'\n'));
        if line > lines {
            return Err(out_of_range(line, lines, path));
        }
        w.put(b"\n");
        w.put(&t);
    }
    Ok(w.finish(report).map_err(super::failure)?)
}
