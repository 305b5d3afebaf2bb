//! `read`: lines of a UTF-8 file, or a byte range of any file.
//!
//! Text: `{"op":"read","path":P,"start":1,"limit":L,"numbers":false,"max_columns":C}`
//! answers `{"text","start":S,"end":E,"eof":bool}`, plus `"lines"` (the
//! file's line count) and `"sha256"` (of the whole file, ready for the
//! next edit's `expect_sha256`) when the read reached the end, and
//! `"cut_lines":[…]` when lines were cut by `max_columns` characters,
//! and `"bom":"utf-8"` (`"utf-16le"`, `"utf-16be"`) when the file starts
//! with a byte-order mark: the text is then what follows it, as ripgrep
//! reads it, UTF-16 transcoded to UTF-8; lines and offsets count that
//! text, `sha256` is the file's own (the find crate's `read/read_bom.rs`).
//! Lines, the check for text (`not_text`) and where the reading stops:
//! the find crate's `read/lines.rs` (this op's answer from the bytes read
//! is the find crate's too: [`text_answer`], [`raw_answer`]). A `start`
//! past the last line answers an empty text with `"eof":true` and `lines`. A line is in the page iff the answer with it
//! fits `max_bytes` (measured exactly, escapes included); the page ends
//! before the first that does not:
//! `"truncated":true,"next":{"start":E+1,"offset":B,"check":C}`, so
//! following `next` never skips a byte, and reads on from byte B (where
//! line E+1 starts) instead of from the file's start: each byte read about
//! once, the last page reading the file once more for `lines` and
//! `sha256`. `offset` and `check` are a hint, verified, ignored when they
//! do not hold (the page then read from byte 0, exact): the find crate's `read/resume.rs`.
//! A page's first line too long
//! for `max_bytes` even alone (after its cut at `max_columns`) is
//! `invalid_argument` naming the `max_bytes` it needs.
//!
//! Raw: `{"op":"read","path":P,"raw":true,"offset":B,"length":N}` answers
//! `{"b64","offset":B,"size":S,"eof":bool}`: the bytes from B (at most N;
//! absent, as many as fit), base64, of any file; `eof` when they reach
//! its end. S is the file's size as the reading found it: its `fstat`,
//! unless the reading met the end elsewhere (S is then where), or read
//! up to S and found more (S is then a byte past what was read), as in a
//! file that changed size meanwhile or a /proc file (`st_size` 0); so
//! B plus the bytes is at most S, and equal iff `eof`. Cut by
//! `max_bytes`: `"truncated":true,"next":{"offset":…}` (and `"length"`:
//! what is left of N).
//!
//! The file is the path resolved as an edit's is (symlinks followed,
//! confined by `--root`); it must be a regular file, checked before it is
//! opened (a FIFO or a device is never opened: `file_not_found`), opened
//! `O_NONBLOCK` and checked again.

use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;

use rustix::fs::{self as rfs, FileType};
use rustix::io::Errno;

use super::{place, Raw64, Read, Root};
use crate::fs::{FsError, NotFoundKind};
use crate::protocol::{display_path, ErrorKind, Failure};
/// The answers from the bytes read (the find crate's: the host library
/// answers from downloaded bytes with the same code).
pub use as_edit_find::read::{raw_answer, text_answer};

pub(super) fn run(req: &Read, root: Option<&Root>, max_bytes: u64) -> Result<String, Failure> {
    let fd = open(&req.path, root)?;
    text_answer(req, max_bytes, &mut |buf, at| {
        pread(&fd, buf, at, &req.path)
    })
}

pub(super) fn raw(req: &Raw64, root: Option<&Root>, max_bytes: u64) -> Result<String, Failure> {
    let fd = open(&req.path, root)?;
    let size = rfs::fstat(&fd)
        .map_err(|e| read_failed(&req.path, e))?
        .st_size as u64;
    raw_answer(req, size, max_bytes, &mut |buf, at| {
        pread(&fd, buf, at, &req.path)
    })
}

fn read_failed(path: &Path, e: Errno) -> Failure {
    Failure::new(
        ErrorKind::ReadFailed,
        format!("reading {}: {e}", display_path(path)),
    )
}

fn pread(fd: &OwnedFd, buf: &mut [u8], at: u64, path: &Path) -> Result<usize, Failure> {
    loop {
        match rustix::io::pread(fd, &mut *buf, at) {
            Ok(n) => return Ok(n),
            Err(Errno::INTR) => {}
            Err(e) => return Err(read_failed(path, e)),
        }
    }
}

/// The regular file `path` resolves to, open for reading
/// ([`crate::fs::regular`]: never waited for, its type checked before the
/// open and on the descriptor).
fn open(path: &Path, root: Option<&Root>) -> Result<OwnedFd, Failure> {
    use crate::fs::regular::{open_regular, Unopened};
    let t = crate::fs::resolve::resolve(path, root.map(|r| r.0.as_path()))?;
    let not_regular = |t: FileType| -> Failure {
        let what = place::type_words(t);
        Failure::new(
            ErrorKind::FileNotFound,
            format!("{} is {what}, not a regular file", display_path(path)),
        )
    };
    let path = path.to_owned();
    open_regular(t.dir.as_fd(), t.name.as_c_str(), false)
        .map(|(fd, _)| fd)
        .map_err(|e| match e {
            Unopened::Stat(e) => Failure::from(FsError::NotFound {
                path,
                kind: match e {
                    Errno::NOENT => NotFoundKind::Missing,
                    e => NotFoundKind::Other(e),
                },
            }),
            Unopened::Open(errno, _) => Failure::from(FsError::Open { path, errno }),
            Unopened::Fstat(e) => read_failed(&path, e),
            Unopened::NotRegular(t) => not_regular(t),
        })
}
