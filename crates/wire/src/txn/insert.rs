//! `insert` on a whole text: `text` as whole lines after line N (0:
//! before the first). Pure: the host's transfer fallback runs it on the
//! downloaded file, the helper on a file it holds whole (`--diff`); the
//! helper's streaming form (`as_edit::txn`'s `insert.rs`) gives the same
//! bytes with [`lines_of`] and [`out_of_range`] from here.

use std::path::Path;

use super::op::OpRefusal;
use crate::protocol::{display_path, ErrorKind, Failure};

/// `text` with LF line ends and a final newline.
pub fn lines_of(text: &str) -> Vec<u8> {
    let mut t = as_edit_text::engine::normalize_eol(text.as_bytes());
    if t.last() != Some(&b'\n') {
        t.push(b'\n');
    }
    t
}

/// The `line_out_of_range` refusal of an insert after `line` in a file
/// of `lines` lines.
pub fn out_of_range(line: u64, lines: u64, path: &Path) -> OpRefusal {
    let p = display_path(path);
    let detail = format!("line {line} is past the end: {p} has {lines} lines");
    Failure::new(ErrorKind::LineOutOfRange, detail).into()
}

/// `insert`: `text` as whole lines after line `line` (0: first). Pure:
/// the host's transfer fallback runs it on downloaded text.
#[cold] // off the single-file path: LLVM optimizes it for size
#[cfg_attr(as_edit_small, optimize(size))]
pub fn insert(old: &str, line: u64, text: &str, path: &Path) -> Result<String, OpRefusal> {
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
