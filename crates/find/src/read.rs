//! The `read` op's answer from a file's bytes, whoever reads them: the
//! helper reads the file (`pread(2)` on the descriptor it opened, confined
//! as an edit's path is), the host library the bytes it downloaded; both
//! hand a [`Pread`] here, so both answer with the very same line. The
//! pager ([`lines`]: lines, the check for text, where a page stops), the
//! resumed page ([`resume`]: `next`'s `offset` and `check`, verified) and
//! a file read after its byte-order mark ([`read_bom`]). The op's
//! semantics (its fields, the answer's keys, the bounds) are documented
//! with the op, in the helper's `src/tools/read.rs`.

use std::fmt::Write as _;

use as_edit_wire::protocol::{display_path, failure_line, ErrorKind, Failure, RESULT_PREFIX};
use as_edit_wire::tools::answer::next;
use as_edit_wire::tools::{Op, Raw64, Read, Request};

use crate::bom::Bom;
use lines::{Ask, Lines, Page};
pub use resume::Pread;

pub mod lines;
pub mod read_bom;
pub mod resume;

/// Bytes read from the file at a time.
const CHUNK: usize = 64 << 10;

/// What a text read's answer takes besides its varying parts
/// (`lines::tail` and the escaped text): the same for every page.
fn base(start: u64, bom: Option<Bom>) -> usize {
    format!("{RESULT_PREFIX}{{\"text\":\"\",\"start\":{start},\"end\":,\"eof\":}}\n").len()
        + bom_field(bom).len()
}

/// `,"bom":NAME` for a file read after its byte-order mark ([`read_bom`]).
fn bom_field(bom: Option<Bom>) -> String {
    bom.map_or(String::new(), |b| format!(",\"bom\":\"{}\"", b.name()))
}

/// A text read's answer from the file read by `pread` (`pread(2)`'s
/// contract: 0 at the end): the file here, the downloaded bytes on the
/// host's transfer path, so both answer with the very same line. With
/// `next`'s `offset` and `check` trusted ([`resume`]), the page is read
/// from that offset; else from byte 0. A file that starts with a
/// byte-order mark is read as its text after it ([`read_bom`]).
pub fn text_answer(req: &Read, max_bytes: u64, pread: &mut Pread<'_>) -> Result<String, Failure> {
    let Some(bom) = read_bom::sniff(pread)? else {
        return text_of(req, max_bytes, None, pread);
    };
    let mut text = read_bom::Text::new(pread, bom);
    let mut line = text_of(req, max_bytes, Some(bom), &mut |b, at| text.pread(b, at))?;
    const SHA: &str = ",\"sha256\":\"";
    if let Some(at) = line.rfind(SHA) {
        // `sha256` of the file's own bytes, the mark included: as long as the text's.
        let sha = as_edit_wire::hex::encode(&read_bom::raw_sha256(pread)?);
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
            as_edit_wire::hex::encode(&sha)
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
        as_edit_wire::b64::encode_into(&mut out, &chunk[..n]);
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

/// Answers a `read` (text or raw) from the file's bytes already in memory,
/// with the code the helper runs on the file: the host library's transfer
/// path, whose answers are thereby the helper's, line for line. The
/// result line and the exit code; None for the other ops (they need the
/// file system).
pub fn on_bytes(req: &Request, bytes: &[u8]) -> Option<(String, i32)> {
    let answer = match &req.op {
        Op::Read(r) => text_answer(r, req.max_bytes, &mut pread_bytes(bytes)),
        Op::Raw(r) => raw_answer(
            r,
            bytes.len() as u64,
            req.max_bytes,
            &mut pread_bytes(bytes),
        ),
        _ => return None,
    };
    Some(line_and_code(answer))
}

/// The result line of `answer` and its exit code.
pub fn line_and_code(answer: Result<String, Failure>) -> (String, i32) {
    match answer {
        Ok(line) => (line, as_edit_wire::protocol::EXIT_EDITED),
        Err(f) => (failure_line(&f, None), f.kind.exit_code()),
    }
}

/// `pread(2)` over bytes in memory.
fn pread_bytes(bytes: &[u8]) -> impl FnMut(&mut [u8], u64) -> Result<usize, Failure> + '_ {
    move |buf, at| {
        let from = usize::try_from(at).map_or(bytes.len(), |a| a.min(bytes.len()));
        let n = buf.len().min(bytes.len() - from);
        buf[..n].copy_from_slice(&bytes[from..from + n]);
        Ok(n)
    }
}
