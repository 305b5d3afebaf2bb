//! `insert`: text as whole lines after line N (0: before the first).
//!
//! Two forms, one answer. [`insert`] works on a whole text: the host's
//! transfer fallback runs it on the downloaded file, and `--diff` needs
//! both texts anyway. [`stream`] reads the file through the engine's
//! strict UTF-8 and line-ending normalization and writes the new content
//! into the temp as it goes, so an insert holds nothing proportional to
//! the file (a 32 MiB file took 64 MiB of memory as a whole text).

use std::os::fd::OwnedFd;
use std::path::Path;

use crate::fs::temp::Temp;
use crate::fs::Target;
use crate::protocol::{display_path, ErrorKind, Failure, Report};

use super::op::OpRefusal;
use super::read::read_norm;
use super::writer::TempWriter;

/// `text` with LF line ends and a final newline.
fn lines_of(text: &str) -> Vec<u8> {
    let mut t = crate::engine::normalize_eol(text.as_bytes());
    if t.last() != Some(&b'\n') {
        t.push(b'\n');
    }
    t
}

fn out_of_range(line: u64, lines: u64, path: &Path) -> OpRefusal {
    let p = display_path(path);
    let detail = format!("line {line} is past the end: {p} has {lines} lines");
    Failure::new(ErrorKind::LineOutOfRange, detail).into()
}

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

/// `insert`: `text` as whole lines after line `line` (0: first). Pure:
/// the host's transfer fallback runs it on downloaded text.
#[cold] // off the single-file path: LLVM optimizes it for size
#[cfg_attr(as_edit_small, optimize(size))]
pub fn insert(
    old: &str,
    line: u64,
    text: &str,
    path: &std::path::Path,
) -> Result<String, OpRefusal> {
    let lines =
        old.matches('\n').count() as u64 + u64::from(!old.is_empty() && !old.ends_with('\n'));
    if line > lines {
        return Err(out_of_range(line, lines, path));
    }
    let at = match line {
        0 => 0,
        n => old
            .match_indices('\n')
            .nth(n as usize - 1)
            .map_or(old.len(), |(i, _)| i + 1),
    };
    let t = String::from_utf8(lines_of(text)).expect("UTF-8 in");
    let mut out = String::with_capacity(old.len() + t.len() + 1);
    out.push_str(&old[..at]);
    if at == old.len() && !old.is_empty() && !old.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&t);
    out.push_str(&old[at..]);
    Ok(out)
}
