//! `--hints` on the helper's side: after a refusal (never on the success
//! path), re-read the target with `pread` and compute what [`crate::hints`]
//! says about it.
//!
//! The text a refused edit saw is rebuilt by streaming the file through the
//! same [`Engine`] that refused, with only the edits before it (none for a
//! single edit): strict UTF-8, CRLF/CR → LF, and in a batch the earlier
//! replacements, exactly as the edit saw them.
//!
//! Memory (the target is peak RSS ≤ 16 MiB on any file):
//! - `string_not_found`: the text is buffered up to [`TEXT_MAX`] bytes; a
//!   longer text is cut at its last whole line and the answer is marked
//!   `hints_truncated` (the hint finder then sees only that first part). The
//!   rest of the peak is the 64 KiB read buffer, the finder's own bounded
//!   work (at most 4 MiB of `similar` line keys, tens of KiB for source
//!   code) and the helper's baseline of about 1 MiB.
//! - `multiple_occurrences`: the occurrences are found as the text streams
//!   by, holding at most `2 * (len(OLD) - 1)` bytes and one piece (reserved
//!   at once, in huge pages from 1 MiB of OLD; a search
//!   runs once that much is held and carries `len(OLD) - 1` bytes on, so
//!   each byte is searched about twice at most: linear for any OLD; a
//!   long OLD takes the engine's piece search, `engine/needle.rs`); the
//!   lines are complete for any file size, and reading stops once
//!   [`OCCURRENCE_LINES_MAX`] lines, or all the edit counted, are known.

use std::os::fd::BorrowedFd;

use crate::engine::{Edit, Engine, Needle, Refusal};
use crate::hints::{multiple_keys, not_found_keys, OCCURRENCE_LINES_MAX, TEXT_MAX};
use crate::protocol::HintKeys;

/// The re-read's chunk size.
const CHUNK: usize = 64 * 1024;

/// The keys `--hints` adds to `refusal`, or None for refusals that take none
/// (an `--at-line` refusal's detail already lists the lines; other tokens
/// have nothing to hint). `file` is the target as opened for the edit;
/// `fully_read` is whether the edit read it to the end (when not, the
/// answer is marked truncated).
#[cfg_attr(as_edit_small, optimize(size))]
pub fn hint_keys(
    file: BorrowedFd<'_>,
    edits: &[Edit],
    refusal: &Refusal,
    fully_read: bool,
) -> Option<HintKeys> {
    match *refusal {
        Refusal::NotFound { edit } => {
            let (text, whole) = text_seen(file, &edits[..edit]);
            not_found_keys(&text, whole && fully_read, edits.get(edit)?)
        }
        Refusal::Multiple { edit, count } => {
            // The edit counted them all: reading stops at the last one.
            let limit = OCCURRENCE_LINES_MAX.min(count as usize);
            let old = edits.get(edit)?.old_text();
            let mut scan = OccurrenceScan::new(old, limit);
            if edit > 0 || !scan.read_without_cr(file) {
                // Earlier edits, or a CR: the text differs from the bytes.
                scan = OccurrenceScan::new(old, limit);
                stream(file, &edits[..edit], &mut |b| scan.feed(b));
            }
            scan.finish();
            Some(multiple_keys(scan.lines, count))
        }
        _ => None,
    }
}

/// The text the edit after `before` saw: at most [`TEXT_MAX`] bytes, cut at
/// a line end, and whether it is the whole text.
#[cfg_attr(as_edit_small, optimize(size))]
fn text_seen(file: BorrowedFd<'_>, before: &[Edit]) -> (String, bool) {
    if before.is_empty() {
        if let Some(seen) = read_without_cr(file) {
            return seen;
        }
    }
    let size = rustix::fs::fstat(file).map_or(0, |st| st.st_size.max(0) as usize);
    // Reserve what the text needs (normalizing only shrinks; earlier edits
    // may grow it), never more than the cap: no doubling past it.
    let mut text: Vec<u8> = Vec::with_capacity(size.min(TEXT_MAX));
    let mut over = false;
    let complete = stream(file, before, &mut |b| {
        let take = b.len().min(TEXT_MAX - text.len());
        if text.len() + take > text.capacity() {
            // Grow by doubling, but never past the cap (a plain extend
            // from 8 MiB would reserve 16).
            let want = (text.capacity() * 2).max(text.len() + take).min(TEXT_MAX);
            text.reserve_exact(want - text.len());
        }
        text.extend_from_slice(&b[..take]);
        over = take < b.len();
        !over
    });
    let whole = complete && !over;
    if !whole {
        // A cut may split a character; the finder ignores the partial last
        // line anyway.
        let end = memchr::memrchr(b'\n', &text).map_or(0, |i| i + 1);
        text.truncate(end);
    }
    match String::from_utf8(text) {
        Ok(t) => (t, whole),
        // The file changed under a writer that ignores the lock: no hints.
        Err(_) => (String::new(), false),
    }
}

/// The common case, faster: one edit and a file without CR, whose text is
/// its bytes. Read straight into the text buffer and validated once, with
/// no bounce buffer and no second copy. None when the file holds a CR (the
/// engine path then reads it again and normalizes) or a read fails.
#[cfg_attr(as_edit_small, optimize(size))]
fn read_without_cr(file: BorrowedFd<'_>) -> Option<(String, bool)> {
    use rustix::buffer::spare_capacity;
    let size = rustix::fs::fstat(file).map_or(0, |st| st.st_size.max(0) as usize);
    // One byte more than the file: the read that says end-of-file then
    // finds room, and the buffer is not doubled for it.
    let mut text: Vec<u8> = Vec::with_capacity(size.saturating_add(1).min(TEXT_MAX));
    prefault(&mut text);
    let whole = loop {
        if text.len() == text.capacity() {
            if text.len() >= TEXT_MAX {
                // Full: whole only if nothing follows.
                let mut probe = [0u8; 1];
                break matches!(
                    rustix::io::pread(file, &mut probe, text.len() as u64),
                    Ok(0)
                );
            }
            // The file grew since fstat: grow by doubling, never past the cap.
            let want = (text.capacity() * 2).min(TEXT_MAX);
            text.reserve_exact(want - text.len());
        }
        let at = text.len();
        match rustix::io::pread(file, spare_capacity(&mut text), at as u64) {
            Ok(0) => break true,
            // A CR: give up at once, before buffering more.
            Ok(_) if memchr::memchr(b'\r', &text[at..]).is_some() => return None,
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => {}
            Err(_) => return None,
        }
    };
    if !whole {
        let end = memchr::memrchr(b'\n', &text).map_or(0, |i| i + 1);
        text.truncate(end);
    }
    match String::from_utf8(text) {
        Ok(t) => Some((t, whole)),
        Err(_) => Some((String::new(), false)),
    }
}

/// Asks the kernel to provide the pages of `buf`'s spare capacity now, in
/// one call, rather than one page fault per 4 KiB as the read fills them:
/// about a third of the time of re-reading a 1 MiB file into a fresh
/// buffer (kernels before 5.14 have no MADV_POPULATE_WRITE: the pages then
/// fault in as before).
fn prefault(buf: &mut Vec<u8>) {
    let spare = buf.spare_capacity_mut();
    super::pages::advise(
        spare.as_mut_ptr() as usize,
        spare.len(),
        rustix::mm::Advice::LinuxPopulateWrite,
    );
}

/// Streams the file from offset 0 through an engine holding `before`,
/// passing its output to `sink` until `sink` answers false. True when the
/// whole file was read and the engine finished cleanly.
#[cfg_attr(as_edit_small, optimize(size))]
fn stream(file: BorrowedFd<'_>, before: &[Edit], sink: &mut dyn FnMut(&[u8]) -> bool) -> bool {
    let mut engine = Engine::new(before, false);
    let mut buf = vec![0u8; CHUNK];
    let mut offset = 0u64;
    let mut more = true;
    loop {
        let n = match rustix::io::pread(file, &mut buf[..], offset) {
            Ok(0) => break,
            Ok(n) => n,
            Err(rustix::io::Errno::INTR) => continue,
            Err(_) => return false,
        };
        offset += n as u64;
        engine.feed(&buf[..n], &mut |b| {
            if more {
                more = sink(b);
            }
        });
        if !more || engine.invalid_utf8() {
            return false;
        }
    }
    let done = engine.finish(&mut |b| {
        if more {
            more = sink(b);
        }
    });
    done.is_ok() && more
}

/// Finds where the non-overlapping occurrences of OLD start, left to right,
/// in text that arrives in pieces: the streaming twin of
/// [`crate::hints::occurrence_lines`] (the host's fallback uses that one on the
/// whole text; a test holds them equal).
pub struct OccurrenceScan<'o> {
    finder: Needle<'o>,
    /// Unscanned text: at most `len(OLD) - 1` bytes carried plus one piece.
    buf: Vec<u8>,
    /// The line of `buf[0]`.
    line: u64,
    limit: usize,
    pub lines: Vec<u64>,
}

impl<'o> OccurrenceScan<'o> {
    #[cfg_attr(as_edit_small, optimize(size))]
    pub fn new(old: &'o [u8], limit: usize) -> OccurrenceScan<'o> {
        // All it will hold, at once: no copy as it grows; for a long OLD in
        // huge pages (2 MiB a fault), as the edit's own tail slot.
        let mut buf = Vec::with_capacity(2 * old.len() + CHUNK);
        if old.len() >= 1 << 20 {
            let spare = buf.spare_capacity_mut();
            let (at, len) = (spare.as_mut_ptr() as usize, spare.len());
            super::pages::advise(at, len, rustix::mm::Advice::LinuxHugepage);
        }
        OccurrenceScan {
            finder: Needle::new(old),
            buf,
            line: 1,
            limit,
            lines: Vec::new(),
        }
    }

    /// Takes the next piece; false once `limit` lines are known (reading
    /// further cannot change the answer).
    #[cfg_attr(as_edit_small, optimize(size))]
    pub fn feed(&mut self, piece: &[u8]) -> bool {
        let n = self.finder.len();
        if n == 0 || self.lines.len() >= self.limit {
            return false;
        }
        self.buf.extend_from_slice(piece);
        // Search only once the text held is at least twice what a search
        // carries on (`n - 1` bytes): re-searching a long OLD's carried
        // text for every 64 KiB piece made the re-read quadratic.
        if self.buf.len() < 2 * (n - 1) {
            return true;
        }
        self.search(false)
    }

    /// A single edit's text is the file's bytes when it holds no CR: read
    /// them straight into the held text (no bounce buffer, no engine, no
    /// second copy), as much as there is room for at once. False on a CR
    /// or a failed read: the scan is then spoiled and made anew.
    #[cfg_attr(as_edit_small, optimize(size))]
    fn read_without_cr(&mut self, file: BorrowedFd<'_>) -> bool {
        let n = self.finder.len();
        let mut offset = 0u64;
        while n > 0 && self.lines.len() < self.limit {
            let at = self.buf.len();
            match rustix::io::pread(file, rustix::buffer::spare_capacity(&mut self.buf), offset) {
                Ok(0) => return true,
                Ok(got) if memchr::memchr(b'\r', &self.buf[at..]).is_none() => {
                    offset += got as u64;
                }
                Err(rustix::io::Errno::INTR) => {}
                _ => return false,
            }
            // As feed: search once twice the carry is held.
            if self.buf.len() >= 2 * (n - 1) && !self.search(false) {
                break;
            }
        }
        true
    }

    /// The text has ended: what is held is searched to its end.
    pub fn finish(&mut self) {
        if self.finder.len() > 0 && self.lines.len() < self.limit {
            self.search(true);
        }
    }

    #[cfg_attr(as_edit_small, optimize(size))]
    fn search(&mut self, end: bool) -> bool {
        let n = self.finder.len();
        let mut at = 0;
        while let Some(p) = self.finder.find(&self.buf[at..]) {
            let p = at + p;
            self.line += newlines(&self.buf[at..p]);
            self.lines.push(self.line);
            if self.lines.len() == self.limit {
                self.buf = Vec::new();
                return false;
            }
            at = p + n;
            self.line += newlines(&self.buf[p..at]);
        }
        // Keep what could still be the start of an occurrence.
        let keep = match end {
            true => self.buf.len(),
            false => at.max(self.buf.len().saturating_sub(n - 1)),
        };
        self.line += newlines(&self.buf[at..keep]);
        self.buf.drain(..keep);
        true
    }
}

fn newlines(b: &[u8]) -> u64 {
    memchr::memchr_iter(b'\n', b).count() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(text: &str, old: &str, limit: usize, piece: usize) -> Vec<u64> {
        let mut s = OccurrenceScan::new(old.as_bytes(), limit);
        for c in text.as_bytes().chunks(piece.max(1)) {
            if !s.feed(c) {
                break;
            }
        }
        s.finish();
        s.lines
    }

    #[test]
    fn streaming_scan_matches_the_whole_text_scan() {
        let texts = [
            "aaaaa\naa\na",
            "x\nab\nab ab\n\nab",
            "a\nb\na\nb\n",
            "",
            "\n\n\n",
        ];
        let olds = ["a", "aa", "ab", "a\nb", "\n", "b\na\nb", "zz"];
        for t in texts {
            for o in olds {
                for limit in [0, 1, 2, 1000] {
                    let want = crate::hints::occurrence_lines(t, o, limit);
                    for piece in 1..=t.len().max(1) {
                        assert_eq!(
                            scan(t, o, limit, piece),
                            want,
                            "{t:?} {o:?} limit {limit} piece {piece}"
                        );
                    }
                }
            }
        }
    }
}
