//! Files that start with a byte-order mark, read as ripgrep reads them.
//!
//! rg (13, `encoding_rs_io`'s BOM sniffing) looks at a file's first
//! bytes: `EF BB BF` (UTF-8) is dropped, the rest searched as it is;
//! `FF FE` (UTF-16LE) and `FE FF` (UTF-16BE) are dropped and the rest
//! transcoded to UTF-8, which is what is searched, checked for NUL (a
//! binary file) and shown; a U+FEFF right after a UTF-16 mark is dropped
//! too (`encoding_rs`'s decoder with BOM removal, which rg gives the
//! bytes after the mark: `FF FE FF FE` is an empty text), a later one kept. Any other start (a UTF-16 file without a BOM
//! included) is read as it is. [`Source`] does the same for `grep` (the
//! op and the toolset's): a reader of the file's bytes as rg sees them.
//!
//! Transcoding is WHATWG's UTF-16 decoder, as `encoding_rs`'s: a
//! surrogate pair is one character; a lone surrogate is U+FFFD; at the
//! end, a lone byte or a high surrogate left open (or both) is one
//! U+FFFD. It streams: [`CHUNK`] bytes of the file at a time, a pair or a
//! character's two bytes split between two reads carried over (a few
//! bytes), so memory is the chunk and its text, whatever the file's size.
//!
//! Positions: [`Source::line_start`] and [`Source::read_line_at`] read a
//! line again (`grep_long.rs`, a regex over a line longer than its
//! windows). For a file read as it is they are byte offsets of the file;
//! for UTF-16, offsets of its raw bytes too, found from the text held: a
//! character of 4 UTF-8 bytes came from 4 bytes (a pair), any other from
//! 2 (a lone surrogate's U+FFFD included), but the final U+FFFD, from
//! the 1 to 3 bytes left open at the end.

use std::io::{self, Read, Seek};
use std::os::unix::fs::FileExt;

/// Bytes of a UTF-16 file read (and transcoded) at a time.
pub const CHUNK: usize = 64 * 1024;

/// The byte-order mark a file starts with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bom {
    /// `EF BB BF`.
    Utf8,
    /// `FF FE`.
    Utf16Le,
    /// `FE FF`.
    Utf16Be,
}

impl Bom {
    /// The mark `head` (a file's first bytes, at least 3 unless the file
    /// is shorter) starts with.
    pub fn sniff(head: &[u8]) -> Option<Bom> {
        if head.starts_with(b"\xef\xbb\xbf") {
            Some(Bom::Utf8)
        } else if head.starts_with(b"\xff\xfe") {
            Some(Bom::Utf16Le)
        } else if head.starts_with(b"\xfe\xff") {
            Some(Bom::Utf16Be)
        } else {
            None
        }
    }

    /// The mark's length in bytes.
    pub fn bytes(self) -> usize {
        match self {
            Bom::Utf8 => 3,
            Bom::Utf16Le | Bom::Utf16Be => 2,
        }
    }

    /// Its name in answers: `utf-8`, `utf-16le`, `utf-16be`.
    pub fn name(self) -> &'static str {
        match self {
            Bom::Utf8 => "utf-8",
            Bom::Utf16Le => "utf-16le",
            Bom::Utf16Be => "utf-16be",
        }
    }
}

/// An incremental UTF-16 to UTF-8 decoder (WHATWG's).
#[derive(Clone, Debug, Default)]
pub struct Utf16 {
    be: bool,
    /// At the text's start: a first U+FEFF is dropped.
    start: bool,
    lead_byte: Option<u8>,
    lead_surrogate: Option<u16>,
}

const REPLACEMENT: &[u8] = "\u{fffd}".as_bytes();

impl Utf16 {
    /// A decoder, big-endian if `be`, of bytes from inside the text.
    pub fn new(be: bool) -> Utf16 {
        Utf16 {
            be,
            ..Utf16::default()
        }
    }

    /// A decoder of the text right after the mark: as `encoding_rs`'s
    /// decoder with BOM removal that rg 13 gives the bytes after the
    /// mark, it drops a U+FEFF that comes first (one, and only there).
    pub fn after_mark(be: bool) -> Utf16 {
        Utf16 {
            be,
            start: true,
            ..Utf16::default()
        }
    }

    /// Decodes `raw` (what follows the bytes fed so far) onto `out`.
    pub fn feed(&mut self, raw: &[u8], out: &mut Vec<u8>) {
        out.reserve(raw.len() / 2 * 3 + 4);
        let mut raw = raw;
        if let (Some(b), Some(&c)) = (self.lead_byte, raw.first()) {
            self.lead_byte = None;
            self.unit(self.word([b, c]), out);
            raw = &raw[1..];
        }
        let mut pairs = raw.chunks_exact(2);
        for p in &mut pairs {
            self.unit(self.word([p[0], p[1]]), out);
        }
        if let [b] = pairs.remainder() {
            self.lead_byte = Some(*b);
        }
    }

    /// The end: one U+FFFD for what is left open; the raw bytes it
    /// stands for (0: none was).
    pub fn finish(&mut self, out: &mut Vec<u8>) -> u64 {
        let open = self.pending();
        if open > 0 {
            out.extend_from_slice(REPLACEMENT);
        }
        (self.lead_byte, self.lead_surrogate) = (None, None);
        open
    }

    /// Raw bytes fed but not yet decoded (0 to 3).
    pub fn pending(&self) -> u64 {
        u64::from(self.lead_byte.is_some()) + 2 * u64::from(self.lead_surrogate.is_some())
    }

    fn word(&self, b: [u8; 2]) -> u16 {
        if self.be {
            u16::from_be_bytes(b)
        } else {
            u16::from_le_bytes(b)
        }
    }

    fn unit(&mut self, u: u16, out: &mut Vec<u8>) {
        if std::mem::take(&mut self.start) && u == 0xfeff {
            return;
        }
        if let Some(hi) = self.lead_surrogate.take() {
            if (0xdc00..0xe000).contains(&u) {
                let c = 0x10000 + ((u32::from(hi) - 0xd800) << 10) + (u32::from(u) - 0xdc00);
                push_char(char::from_u32(c).expect("a pair is a scalar value"), out);
                return;
            }
            out.extend_from_slice(REPLACEMENT);
        }
        match u {
            0xd800..=0xdbff => self.lead_surrogate = Some(u),
            0xdc00..=0xdfff => out.extend_from_slice(REPLACEMENT),
            _ if u < 0x80 => out.push(u as u8),
            _ => push_char(char::from_u32(u.into()).expect("not a surrogate"), out),
        }
    }
}

fn push_char(c: char, out: &mut Vec<u8>) {
    out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
}

/// The raw UTF-16 bytes that `text` (transcoded, split anywhere) came
/// from, the final U+FFFD aside: 4 for each character of 4 UTF-8 bytes,
/// 2 for any other.
pub fn utf16_len(text: &[u8]) -> u64 {
    text.iter()
        .map(|&b| match b {
            0x80..=0xbf => 0,
            0xf0.. => 4,
            _ => 2,
        })
        .sum()
}

/// A file's bytes as rg searches them (module docs), read through `F`:
/// the caller's open file (`std::fs::File`), read in order and at offsets
/// (`FileExt::read_at`), never opened here.
pub struct Source<F> {
    file: F,
    mode: Mode,
}

enum Mode {
    /// The first read has not looked at the start yet.
    Unsniffed,
    /// Read as it is (a UTF-8 BOM dropped): `carry` first, then the file.
    Plain { bom: bool, carry: Vec<u8> },
    /// Transcoded.
    Utf16(Box<Transcode>),
}

struct Transcode {
    bom: Bom,
    dec: Utf16,
    raw: Vec<u8>,
    /// Text transcoded, delivered up to `at`.
    out: Vec<u8>,
    at: usize,
    /// Raw bytes consumed from the file (the BOM included).
    raw_pos: u64,
    eof: bool,
    /// The raw bytes the final U+FFFD stands for (0: none).
    final_error: u64,
}

impl<F: Read + Seek + FileExt> Source<F> {
    /// A reader of `file` from its start.
    pub fn new(file: F) -> Source<F> {
        Source {
            file,
            mode: Mode::Unsniffed,
        }
    }

    /// The BOM the file starts with (known after the first read).
    pub fn bom(&self) -> Option<Bom> {
        match &self.mode {
            Mode::Unsniffed => None,
            Mode::Plain { bom, .. } => bom.then_some(Bom::Utf8),
            Mode::Utf16(t) => Some(t.bom),
        }
    }

    /// The first read: at least the BOM's 3 bytes (unless the file is
    /// shorter), into `dst` when it holds them, looked at.
    fn sniff(&mut self, dst: &mut [u8]) -> io::Result<usize> {
        let mut small = [0u8; 8];
        let into_dst = dst.len() >= small.len();
        let head: &mut [u8] = if into_dst { &mut *dst } else { &mut small };
        let mut n = 0;
        while n < 3 {
            match self.file.read(&mut head[n..]) {
                Ok(0) => break,
                Ok(k) => n += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        let bom = Bom::sniff(&head[..n]);
        match bom {
            Some(b @ (Bom::Utf16Le | Bom::Utf16Be)) => {
                let mut t = Transcode {
                    bom: b,
                    dec: Utf16::after_mark(b == Bom::Utf16Be),
                    raw: Vec::new(),
                    out: Vec::new(),
                    at: 0,
                    raw_pos: n as u64,
                    eof: false,
                    final_error: 0,
                };
                t.dec.feed(&head[2..n], &mut t.out);
                self.mode = Mode::Utf16(Box::new(t));
                self.read(dst)
            }
            _ => {
                let skip = if bom.is_some() { 3 } else { 0 };
                let (n, carry) = if into_dst {
                    dst.copy_within(skip..n, 0);
                    (n - skip, Vec::new())
                } else {
                    // `small` held the start: delivered through `carry`.
                    (0, small[skip..n].to_vec())
                };
                self.mode = Mode::Plain {
                    bom: bom.is_some(),
                    carry,
                };
                if n == 0 {
                    // The mark alone so far, or a small `dst`: read on.
                    return self.read(dst);
                }
                Ok(n)
            }
        }
    }

    /// Where the line whose bytes read so far are `held` (the last bytes
    /// [`Read::read`] gave, from the line's start) starts, for
    /// [`Source::read_line_at`]; `None` if the file cannot tell.
    pub fn line_start(&mut self, held: &[u8]) -> Option<u64> {
        match &self.mode {
            Mode::Unsniffed => Some(0),
            Mode::Plain { carry, .. } => {
                let pos = self.file.stream_position().ok()?;
                pos.checked_sub((held.len() + carry.len()) as u64)
            }
            Mode::Utf16(t) => {
                let ahead = &t.out[t.at..];
                let mut raw = utf16_len(held) + utf16_len(ahead);
                if t.final_error > 0 && held.len() + ahead.len() >= REPLACEMENT.len() {
                    raw = raw - 2 + t.final_error;
                }
                (t.raw_pos - t.dec.pending()).checked_sub(raw)
            }
        }
    }

    /// Fills `buf` with the text from `at` (a [`Source::line_start`]),
    /// reading the file at its offset (the reader's place unmoved).
    pub fn read_line_at(&self, buf: &mut [u8], at: u64) -> io::Result<()> {
        let Mode::Utf16(t) = &self.mode else {
            return self.file.read_exact_at(buf, at);
        };
        let mut dec = Utf16::new(t.bom == Bom::Utf16Be);
        let mut raw = vec![0u8; CHUNK];
        let (mut out, mut got, mut pos) = (Vec::new(), 0, at);
        while got < buf.len() {
            let n = loop {
                match self.file.read_at(&mut raw, pos) {
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    r => break r?,
                }
            };
            out.clear();
            if n == 0 {
                dec.finish(&mut out);
            } else {
                dec.feed(&raw[..n], &mut out);
            }
            let k = out.len().min(buf.len() - got);
            buf[got..got + k].copy_from_slice(&out[..k]);
            got += k;
            pos += n as u64;
            if n == 0 && got < buf.len() {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
        }
        Ok(())
    }
}

impl<F: Read + Seek + FileExt> Read for Source<F> {
    fn read(&mut self, dst: &mut [u8]) -> io::Result<usize> {
        if dst.is_empty() {
            return Ok(0);
        }
        match &mut self.mode {
            Mode::Unsniffed => self.sniff(dst),
            Mode::Plain { carry, .. } if !carry.is_empty() => {
                let k = carry.len().min(dst.len());
                dst[..k].copy_from_slice(&carry[..k]);
                carry.drain(..k);
                Ok(k)
            }
            Mode::Plain { .. } => self.file.read(dst),
            Mode::Utf16(t) => loop {
                if t.at < t.out.len() {
                    let k = (t.out.len() - t.at).min(dst.len());
                    dst[..k].copy_from_slice(&t.out[t.at..t.at + k]);
                    t.at += k;
                    return Ok(k);
                }
                if t.eof {
                    return Ok(0);
                }
                t.raw.resize(CHUNK, 0);
                let n = self.file.read(&mut t.raw)?;
                t.out.clear();
                t.at = 0;
                if n == 0 {
                    t.eof = true;
                    t.final_error = t.dec.finish(&mut t.out);
                } else {
                    t.raw_pos += n as u64;
                    t.dec.feed(&t.raw[..n], &mut t.out);
                }
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::File;

    type Source = super::Source<File>;

    fn utf16(s: &str, be: bool) -> Vec<u8> {
        s.encode_utf16()
            .flat_map(|u| if be { u.to_be_bytes() } else { u.to_le_bytes() })
            .collect()
    }

    fn decode_whole(raw: &[u8], be: bool) -> Vec<u8> {
        let mut d = Utf16::new(be);
        let mut out = Vec::new();
        d.feed(raw, &mut out);
        d.finish(&mut out);
        out
    }

    /// WHATWG's decoder (as `encoding_rs`, so as rg): pairs, lone
    /// surrogates, an odd byte and an open pair at the end.
    #[test]
    fn utf16_decodes_as_whatwg() {
        let d = |raw: &[u8]| String::from_utf8(decode_whole(raw, false)).unwrap();
        assert_eq!(d(&utf16("foo é 𝄞\n", false)), "foo é 𝄞\n");
        assert_eq!(
            String::from_utf8(decode_whole(&utf16("ab 𝄞", true), true)).unwrap(),
            "ab 𝄞"
        );
        // A lone high surrogate before a letter, a lone low one.
        assert_eq!(d(b"a\0\x00\xd8b\0\x00\xdcc\0"), "a\u{fffd}b\u{fffd}c");
        // Two highs, then a pair: the first alone.
        assert_eq!(d(b"\x00\xd8\x34\xd8\x1e\xdd"), "\u{fffd}𝄞");
        // The end: an odd byte, an open high surrogate, both: one U+FFFD.
        assert_eq!(d(b"x\0A"), "x\u{fffd}");
        assert_eq!(d(b"x\0\x3d\xd8"), "x\u{fffd}");
        assert_eq!(d(b"x\0\x3d\xd8A"), "x\u{fffd}");
        assert_eq!(d(b""), "");
    }

    /// Fed in pieces split anywhere (a pair's halves, a unit's two
    /// bytes), the decoder gives what it gives fed at once.
    #[test]
    fn utf16_split_anywhere_decodes_the_same() {
        let mut raw = utf16("a𝄞é\n\u{ffff}z", false);
        raw.extend_from_slice(b"\x00\xd8q\0\x00\xdc\x3d");
        let whole = decode_whole(&raw, false);
        for step in 1..=raw.len() {
            let mut d = Utf16::new(false);
            let mut out = Vec::new();
            for piece in raw.chunks(step) {
                d.feed(piece, &mut out);
            }
            d.finish(&mut out);
            assert_eq!(out, whole, "step {step}");
        }
        for a in 0..=raw.len() {
            for b in a..=raw.len() {
                let mut d = Utf16::new(false);
                let mut out = Vec::new();
                d.feed(&raw[..a], &mut out);
                d.feed(&raw[a..b], &mut out);
                d.feed(&raw[b..], &mut out);
                d.finish(&mut out);
                assert_eq!(out, whole, "{a} {b}");
            }
        }
    }

    fn source(bytes: &[u8]) -> (tempfile::TempDir, Source) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, bytes).unwrap();
        let f = File::open(&p).unwrap();
        (dir, Source::new(f))
    }

    fn read_all(s: &mut Source, step: usize) -> Vec<u8> {
        let mut out = Vec::new();
        let mut buf = vec![0u8; step];
        loop {
            match s.read(&mut buf).unwrap() {
                0 => return out,
                n => out.extend_from_slice(&buf[..n]),
            }
        }
    }

    /// What rg searches: the marks dropped, UTF-16 transcoded, anything
    /// else as it is; read through buffers of any size.
    #[test]
    fn source_reads_what_rg_searches() {
        let mut le = b"\xff\xfe".to_vec();
        le.extend(utf16("foo\né\n", false));
        let mut be = b"\xfe\xff".to_vec();
        be.extend(utf16("foo\n𝄞", true));
        let cases: [(&[u8], &[u8], Option<Bom>); 13] = [
            // A U+FEFF right after a UTF-16 mark is dropped, as rg does;
            // a second one, or one after a UTF-8 mark, is text.
            (b"\xff\xfe\xff\xfe", b"", Some(Bom::Utf16Le)),
            (
                b"\xfe\xff\xfe\xff\xfe\xff\0a",
                "\u{feff}a".as_bytes(),
                Some(Bom::Utf16Be),
            ),
            (
                b"\xff\xfe\xff\xfea\0\xff\xfe",
                "a\u{feff}".as_bytes(),
                Some(Bom::Utf16Le),
            ),
            (
                b"\xef\xbb\xbf\xef\xbb\xbfa",
                "\u{feff}a".as_bytes(),
                Some(Bom::Utf8),
            ),
            (b"\xef\xbb\xbffoo\nbar", b"foo\nbar", Some(Bom::Utf8)),
            (b"\xef\xbb\xbf", b"", Some(Bom::Utf8)),
            (b"\xef\xbbfoo", b"\xef\xbbfoo", None),
            (b"\xff\xfe", b"", Some(Bom::Utf16Le)),
            (b"\xff\xfeA", "\u{fffd}".as_bytes(), Some(Bom::Utf16Le)),
            (&le, "foo\né\n".as_bytes(), Some(Bom::Utf16Le)),
            (&be, "foo\n𝄞".as_bytes(), Some(Bom::Utf16Be)),
            (b"f\0o\0", b"f\0o\0", None),
            (b"", b"", None),
        ];
        for (file, text, bom) in cases {
            for step in [1, 2, 3, 7, 8, 64 * 1024] {
                let (_d, mut s) = source(file);
                assert_eq!(read_all(&mut s, step), text, "{file:?} {step}");
                assert_eq!(s.bom(), bom, "{file:?} {step}");
            }
        }
    }

    /// A line's start found from the text held, read again at it: the
    /// very text, in a UTF-16 file larger than a chunk with pairs, lone
    /// surrogates and an open end across the chunks' edges.
    #[test]
    fn a_line_read_again_is_the_same_text() {
        // The mark, then a U+FEFF that is dropped (line 1 starts after it).
        let mut raw = b"\xff\xfe\xff\xfe".to_vec();
        let mut i = 0;
        while raw.len() < 3 * CHUNK + 100 {
            raw.extend(utf16(&format!("{i} x𝄞é\n"), false));
            if i % 7 == 0 {
                raw.extend_from_slice(b"\x00\xdcq\0\n\0");
            }
            i += 1;
        }
        raw.extend(utf16("last 𝄞", false));
        raw.extend_from_slice(b"\x3d\xd8A");
        for be in [false, true] {
            let mut raw = raw.clone();
            if be {
                for p in raw.chunks_exact_mut(2) {
                    p.swap(0, 1);
                }
            }
            let text = decode_whole(&raw[4..], be);
            for step in [1000, 4096, 65_537, 1 << 20] {
                let (_d, mut s) = source(&raw);
                let mut got = Vec::new();
                let mut buf = vec![0u8; step];
                let mut starts = 0;
                loop {
                    let n = s.read(&mut buf).unwrap();
                    got.extend_from_slice(&buf[..n]);
                    // The last line start in what was read, and the text after it.
                    let ls = memchr::memrchr(b'\n', &got).map_or(0, |i| i + 1);
                    let held = &got[ls..];
                    let at = s.line_start(held).unwrap();
                    let mut again = vec![0u8; text.len() - ls];
                    s.read_line_at(&mut again, at).unwrap();
                    assert_eq!(again, text[ls..], "{be} {step} {ls}");
                    starts += 1;
                    if n == 0 {
                        break;
                    }
                }
                assert_eq!(got, text, "{be} {step}");
                assert!(starts > 1);
            }
        }
    }
}
