//! A text `read` of a file that starts with a byte-order mark ([`crate::bom`]):
//! the text read is what follows the mark, as ripgrep reads it — a UTF-8
//! file's bytes after its 3, a UTF-16 file's bytes after its 2
//! transcoded to UTF-8, a U+FEFF right after the mark dropped too —
//! and the answer says which mark it was
//! (`"bom":"utf-8"`, `"utf-16le"`, `"utf-16be"`).
//!
//! [`Text`] is a `pread(2)` over that text, which `read.rs` reads as it
//! reads any file: lines, `start`/`end`/`lines`, `not_text` and `next`'s
//! `offset` count the text's lines and bytes (a UTF-8 file's offsets so
//! are 3 less than the file's; a UTF-16 file's are offsets into its
//! UTF-8 text). `sha256` alone is of the file's own bytes, mark included
//! ([`raw_sha256`]): what an edit's or a write's `expect_sha256`
//! compares. A UTF-16 file's text is transcoded in [`CHUNK`]s, one held
//! at a time; a read at an offset behind the chunk held starts again
//! from the mark, so a page of a UTF-16 file that resumes at `next`'s
//! offset costs the text up to it (each page about the file's start to
//! its end, not each byte once as for other files).

use sha2::{Digest, Sha256};

use super::resume::{read_at, Pread};
use crate::bom::{Bom, Utf16, CHUNK};
use as_edit_wire::protocol::Failure;

/// The mark the file read by `pread` starts with.
pub fn sniff(pread: &mut Pread<'_>) -> Result<Option<Bom>, Failure> {
    let mut head = [0u8; 3];
    let n = read_at(pread, &mut head, 0)?;
    Ok(Bom::sniff(&head[..n]))
}

/// The text after the mark, read at offsets (module docs).
pub struct Text<'p, 'a> {
    raw: &'p mut Pread<'a>,
    bom: Bom,
    /// UTF-16: the decoder, the chunk's text and its offset in the text,
    /// where the next raw chunk starts, and whether the file ended.
    dec: Utf16,
    out: Vec<u8>,
    out_at: u64,
    raw_at: u64,
    eof: bool,
}

impl<'p, 'a> Text<'p, 'a> {
    /// The text of the file `raw` reads, which starts with `bom`.
    pub fn new(raw: &'p mut Pread<'a>, bom: Bom) -> Text<'p, 'a> {
        let mut t = Text {
            raw,
            bom,
            dec: Utf16::after_mark(bom == Bom::Utf16Be),
            out: Vec::new(),
            out_at: 0,
            raw_at: 0,
            eof: false,
        };
        t.restart();
        t
    }

    fn restart(&mut self) {
        self.dec = Utf16::after_mark(self.bom == Bom::Utf16Be);
        self.out.clear();
        (self.out_at, self.raw_at, self.eof) = (0, self.bom.bytes() as u64, false);
    }

    /// `pread(2)` of the text: bytes at `at` into `buf`, 0 at its end.
    pub fn pread(&mut self, buf: &mut [u8], at: u64) -> Result<usize, Failure> {
        if self.bom == Bom::Utf8 {
            return (self.raw)(buf, at + 3);
        }
        if at < self.out_at {
            self.restart();
        }
        let mut raw = Vec::new();
        while at >= self.out_at + self.out.len() as u64 {
            if self.eof {
                return Ok(0);
            }
            self.out_at += self.out.len() as u64;
            self.out.clear();
            raw.resize(CHUNK, 0);
            let n = read_at(self.raw, &mut raw, self.raw_at)?;
            if n == 0 {
                self.eof = true;
                self.dec.finish(&mut self.out);
            } else {
                self.raw_at += n as u64;
                self.dec.feed(&raw[..n], &mut self.out);
            }
        }
        let from = (at - self.out_at) as usize;
        let k = buf.len().min(self.out.len() - from);
        buf[..k].copy_from_slice(&self.out[from..from + k]);
        Ok(k)
    }
}

/// The SHA-256 of the file's own bytes (its mark included).
pub fn raw_sha256(pread: &mut Pread<'_>) -> Result<[u8; 32], Failure> {
    let mut h = Sha256::new();
    let mut buf = vec![0u8; CHUNK];
    let mut at = 0u64;
    loop {
        match read_at(pread, &mut buf, at)? {
            0 => return Ok(h.finalize().into()),
            n => {
                h.update(&buf[..n]);
                at += n as u64;
            }
        }
    }
}
