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
//! text, `sha256` is the file's own (`read_bom.rs`).
//! Lines, the check for text (`not_text`) and where the reading stops:
//! `lines.rs`. A `start` past the last line answers an empty text with
//! `"eof":true` and `lines`. A line is in the page iff the answer with it
//! fits `max_bytes` (measured exactly, escapes included); the page ends
//! before the first that does not:
//! `"truncated":true,"next":{"start":E+1,"offset":B,"check":C}`, so
//! following `next` never skips a byte, and reads on from byte B (where
//! line E+1 starts) instead of from the file's start: each byte read about
//! once, the last page reading the file once more for `lines` and
//! `sha256`. `offset` and `check` are a hint, verified, ignored when they
//! do not hold (the page then read from byte 0, exact): `resume.rs`.
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

use std::fmt::Write as _;
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;

use rustix::fs::{self as rfs, FileType};
use rustix::io::Errno;

use super::answer::next;
use super::bom::Bom;
use super::lines::{Ask, Lines, Page};
use super::resume::Pread;
use super::{place, read_bom, resume, Raw64, Read, Root};
use crate::fs::{FsError, NotFoundKind};
use crate::protocol::{display_path, ErrorKind, Failure, RESULT_PREFIX};

/// Bytes read from the file at a time.
const CHUNK: usize = 64 << 10;

/// What a text read's answer takes besides its varying parts
/// (`lines::tail` and the escaped text): the same for every page.
fn base(start: u64, bom: Option<Bom>) -> usize {
    format!("{RESULT_PREFIX}{{\"text\":\"\",\"start\":{start},\"end\":,\"eof\":}}\n").len()
        + bom_field(bom).len()
}

/// `,"bom":NAME` for a file read after its byte-order mark (`read_bom.rs`).
fn bom_field(bom: Option<Bom>) -> String {
    bom.map_or(String::new(), |b| format!(",\"bom\":\"{}\"", b.name()))
}

pub(super) fn run(req: &Read, root: Option<&Root>, max_bytes: u64) -> Result<String, Failure> {
    let fd = open(&req.path, root)?;
    text_answer(req, max_bytes, &mut |buf, at| {
        pread(&fd, buf, at, &req.path)
    })
}

/// A text read's answer from the file read by `pread` (`pread(2)`'s
/// contract: 0 at the end): the file here, the downloaded bytes on the
/// host's transfer path, so both answer with the very same line. With
/// `next`'s `offset` and `check` trusted (`resume.rs`), the page is read
/// from that offset; else from byte 0. A file that starts with a
/// byte-order mark is read as its text after it (`read_bom.rs`).
pub fn text_answer(req: &Read, max_bytes: u64, pread: &mut Pread<'_>) -> Result<String, Failure> {
    let Some(bom) = read_bom::sniff(pread)? else {
        return text_of(req, max_bytes, None, pread);
    };
    let mut text = read_bom::Text::new(pread, bom);
    let mut line = text_of(req, max_bytes, Some(bom), &mut |b, at| text.pread(b, at))?;
    const SHA: &str = ",\"sha256\":\"";
    if let Some(at) = line.rfind(SHA) {
        // `sha256` of the file's own bytes, the mark included: as long as the text's.
        let sha = crate::hex::encode(&read_bom::raw_sha256(pread)?);
        line.replace_range(at + SHA.len()..at + SHA.len() + 64, &sha);
    }
    Ok(line)
}

/// [`text_answer`] of the text read by `pread` (after the mark `bom`).
fn text_of(
    req: &Read,
    max_bytes: u64,
    bom: Option<Bom>,
    pread: &mut Pread<'_>,
) -> Result<String, Failure> {
    let from = match req.resume {
        Some((at, check)) if resume::trust(pread, req.start, at, check)? => at,
        _ => 0,
    };
    let mut p = page(req, max_bytes, bom, from, pread)?;
    if let (true, Some((lines, hash))) = (from > 0, p.whole) {
        // The last page: `sha256` and `lines` of the whole file.
        match resume::whole(pread, from, p.consumed_to, req.start - 1, hash)? {
            Some(sha) => p.whole = Some((lines, sha)),
            None => {
                drop(p); // not held while the page is read again
                p = page(req, max_bytes, bom, 0, pread)?;
            }
        }
    }
    answer(req, max_bytes, bom, p, pread)
}

/// The page of `req` read from byte `from` (line `req.start` starts
/// there), its text escaped into the answer's line begun
/// (`__RESULT__{"text":"`): the one copy of it held, the line's capacity
/// `max_bytes` from the start, so it never grows by copying.
fn page(
    req: &Read,
    max_bytes: u64,
    bom: Option<Bom>,
    from: u64,
    pread: &mut Pread<'_>,
) -> Result<Page, Failure> {
    let ask = Ask {
        start: req.start,
        limit: req.limit,
        numbers: req.numbers,
        max_columns: req.max_columns,
        budget: max_bytes as usize - base(req.start, bom),
    };
    let mut line = String::with_capacity(max_bytes as usize);
    line.push_str(RESULT_PREFIX);
    line.push_str("{\"text\":\"");
    let mut lines = Lines::escaped(ask, from, line, true);
    // A small page reads small chunks: what it reads past its end is one chunk.
    let mut buf = vec![0u8; CHUNK.min(max_bytes as usize)];
    let (mut have, mut at) = (0, from);
    while !lines.done() {
        if have == buf.len() {
            buf.resize(have + CHUNK, 0); // a character or CR kept from before
        }
        let n = resume::read_at(pread, &mut buf[have..], at)?;
        at += n as u64;
        have += n;
        let used = lines.feed(&buf[..have], n == 0).map_err(|e| {
            Failure::new(
                ErrorKind::NotText,
                format!(
                    "{} is not UTF-8 text: {} at byte offset {}; read it with \"raw\":true",
                    display_path(&req.path),
                    e.what,
                    e.offset
                ),
            )
        })?;
        buf.copy_within(used..have, 0);
        have -= used;
    }
    Ok(lines.finish())
}

fn answer(
    req: &Read,
    max_bytes: u64,
    bom: Option<Bom>,
    p: Page,
    pread: &mut Pread<'_>,
) -> Result<String, Failure> {
    if let Some(need) = p.too_long {
        return Err(Failure::new(
            ErrorKind::InvalidArgument,
            format!(
                "\"max_bytes\" {max_bytes} cannot hold line {} of {}: it needs {}; give a larger \"max_bytes\" or \"max_columns\"",
                req.start,
                display_path(&req.path),
                base(req.start, bom) + need
            ),
        ));
    }
    let mut out = p.text;
    out.push('"');
    let _ = write!(
        out,
        ",\"start\":{},\"end\":{},\"eof\":{}",
        req.start, p.end, p.eof
    );
    out.push_str(&bom_field(bom));
    if let Some((lines, sha)) = p.whole {
        let _ = write!(
            out,
            ",\"lines\":{lines},\"sha256\":\"{}\"",
            crate::hex::encode(&sha)
        );
    }
    if !p.cut_lines.is_empty() {
        let list: Vec<String> = p.cut_lines.iter().map(u64::to_string).collect();
        let _ = write!(out, ",\"cut_lines\":[{}]", list.join(","));
    }
    if p.truncated {
        let check = resume::next_check(pread, p.end + 1, p.next_at)?;
        let fields = [
            ("start", p.end + 1),
            ("offset", p.next_at),
            ("check", check),
        ];
        out.push_str(&next(Some(&fields)));
    }
    out.push_str("}\n");
    // Every part is counted exactly: a line is kept iff the answer with it fits.
    debug_assert!(out.len() as u64 <= max_bytes, "a read's budget was short");
    Ok(out)
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

/// A raw read's answer for a file of `size` bytes read by `pread`
/// (`pread(2)`'s contract), from the file or from downloaded bytes.
pub fn raw_answer(
    req: &Raw64,
    size: u64,
    max_bytes: u64,
    pread: &mut Pread<'_>,
) -> Result<String, Failure> {
    let n = u64::MAX;
    let reserve = format!(
        "{RESULT_PREFIX}{{\"b64\":\"\",\"offset\":{n},\"size\":{n},\"eof\":false{}}}\n",
        next(Some(&[("offset", n), ("length", n)]))
    )
    .len();
    let fit = (max_bytes as usize - reserve) / 4 * 3;
    let want = req.length.map_or(fit as u64, |l| l.min(fit as u64)) as usize;
    // Encoded into the answer a chunk (a multiple of 3 bytes) at a time:
    // memory is the answer and one chunk.
    let mut out = String::with_capacity(reserve + want.div_ceil(3) * 4);
    out.push_str(RESULT_PREFIX);
    out.push_str("{\"b64\":\"");
    let mut chunk = vec![0u8; want.min(CHUNK / 3 * 3)];
    let mut got = 0;
    while got < want {
        let k = chunk.len().min(want - got);
        let n = resume::read_at(pread, &mut chunk[..k], req.offset + got as u64)?;
        crate::args::b64::encode_into(&mut out, &chunk[..n]);
        got += n;
        if n < k {
            break;
        }
    }
    let end = req.offset + got as u64;
    // `size` as the reading found it: a file that changed size since its
    // `fstat` (or a /proc file, whose `st_size` is 0) must not answer
    // bytes past `size`, nor `eof` short of it.
    let size = match got {
        0 if got < want => size.min(req.offset),
        _ if got < want => end,
        _ if end < size => size,
        // Read up to or past `size`: one byte more says whether it ends.
        _ => match pread(&mut [0u8], end)? {
            0 => end,
            _ => end + 1,
        },
    };
    let eof = end >= size;
    let _ = write!(
        out,
        "\",\"offset\":{},\"size\":{size},\"eof\":{eof}",
        req.offset
    );
    let left = req.length.map(|l| l - got as u64);
    if !eof && left != Some(0) {
        match left {
            Some(l) => out.push_str(&next(Some(&[("offset", end), ("length", l)]))),
            None => out.push_str(&next(Some(&[("offset", end)]))),
        }
    }
    out.push_str("}\n");
    debug_assert!(
        out.len() as u64 <= max_bytes,
        "a raw read's reserve was short"
    );
    Ok(out)
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
