//! The block reader: a file read in blocks of whole lines, each with the
//! number of its first line (ripgrep's `LineBuffer` plays this part for
//! `grep-searcher`).
//!
//! [`Blocks`] reads any [`std::io::Read`] (the helper hands it an open
//! file, or a [`crate::bom::Source`] over one; tests, bytes in memory):
//! it opens nothing. Lines end at `\n` (a `\r` before it is the line's
//! byte, as ripgrep reads it); a last line without `\n` ends at the
//! file's end.
//!
//! ```
//! use as_edit_find::block::Blocks;
//!
//! let text = &b"one\r\ntwo\nthree"[..];
//! let mut buf = Vec::new();
//! let mut blocks = Blocks::new(text, &mut buf, 8);
//! let b = blocks.next_block()?.unwrap();
//! assert_eq!((b.bytes, b.first_line, b.cut), (&b"one\r\n"[..], 1, false));
//! let b = blocks.next_block()?.unwrap();
//! assert_eq!((b.bytes, b.first_line), (&b"two\n"[..], 2));
//! let b = blocks.next_block()?.unwrap();
//! assert_eq!((b.bytes, b.first_line), (&b"three"[..], 3));
//! assert!(blocks.next_block()?.is_none());
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! # Reads and growth
//!
//! Each read asks for `size` bytes (the block size the caller gives)
//! after the bytes held; a read failing with
//! [`std::io::ErrorKind::Interrupted`] is retried, any other error is
//! returned (the reader stops there). A block is handed back as soon as
//! one read brings a line end: the held bytes up to the last `\n` read.
//! The bytes after it (an unfinished line) are held for the next block,
//! which starts with them. So the reads are the same whatever the
//! caller does with the blocks, and a block is at most the held line
//! plus `size` bytes.
//!
//! A line longer than a read grows the buffer by `size` bytes a read,
//! without bound — unless the caller set a cap ([`Blocks::cap`]): when
//! the unfinished line held reaches the cap, it is handed back as it is,
//! [`Block::cut`] set, and the next block continues it (with the same
//! line number). The buffer then holds at most `cap - 1 + size` bytes.
//! A cap of 0 hands back every read's bytes at once (the whole lines of
//! it, then its unfinished line, cut): a stream in `size` pieces, each
//! piece numbered.
//!
//! # Who reads with it
//!
//! The toolset's `grep` (`src/toolset/grep.rs`: 64 KiB reads, no cap, as
//! ripgrep's buffer grows to the longest line) and the toolset's `read`
//! of a line range (`src/toolset/read.rs`: cap 0, its memory the read
//! and the text kept). Two readers are not built on it, for these
//! reasons:
//!
//! - the `grep` op (the helper's `grep_op.rs` and `grep_long.rs`) fills
//!   a fixed block to its end (reads until it is full, not one read), checks its first
//!   8 KiB for a NUL once full, takes a failed read for the file's end
//!   (counted `unreadable`, not an error), keeps its before-context lines
//!   in the block from one fill to the next, and searches a line longer
//!   than its cap in windows *inside the same block*, replacing the line
//!   by a stub and reading a regex's line again at its offset: the block
//!   is the searcher's working memory, not a sequence of blocks handed
//!   out, and its blocks (hence its `unreadable` counts and the bytes
//!   read before a stop) differ from a one-read-a-block reader's;
//! - the `read` op ([`crate::read`]) reads by offset (`pread(2)`, the
//!   host library from downloaded bytes), resumes a page at `next`'s byte
//!   offset and reads the file again for `lines` and `sha256`; its line
//!   pager consumes part of a chunk (up to a UTF-8 character split
//!   between two reads, or a terminator whose next byte decides `eof`)
//!   and stops mid-line when a line cannot fit: positions, not whole-line
//!   blocks, are what it needs.

use std::io::{ErrorKind, Read, Result};

/// A file read in blocks of whole lines (see the module docs).
pub struct Blocks<'b, R> {
    src: R,
    buf: &'b mut Vec<u8>,
    size: usize,
    cap: Option<usize>,
    /// Bytes at the front of `buf` handed back last, dropped on the next
    /// call, and the line ends in them.
    handed: (usize, u64),
    line: u64,
    eof: bool,
}

/// One block: whole lines, or (cut) the start of a line.
#[derive(Debug, PartialEq, Eq)]
pub struct Block<'a> {
    /// The bytes: whole lines, each with its `\n` (the file's last line
    /// may have none), unless `cut`.
    pub bytes: &'a [u8],
    /// The number of the block's first line (from 1); a block after a
    /// cut one continues its line and has its number.
    pub first_line: u64,
    /// The last line is unfinished: handed back at the cap, the next
    /// block continues it (or the file ends there, without `\n`).
    pub cut: bool,
}

impl<'b, R: Read> Blocks<'b, R> {
    /// Reads `src` `size` bytes a read (at least 1), through `buf` (its
    /// contents dropped, its allocation reused), without a cap.
    pub fn new(src: R, buf: &'b mut Vec<u8>, size: usize) -> Blocks<'b, R> {
        buf.clear();
        Blocks {
            src,
            buf,
            size: size.max(1),
            cap: None,
            handed: (0, 0),
            line: 1,
            eof: false,
        }
    }

    /// Hands back an unfinished line once `cap` bytes of it are held
    /// ([`Block::cut`]).
    pub fn cap(mut self, cap: usize) -> Blocks<'b, R> {
        self.cap = Some(cap);
        self
    }

    /// The next block, `None` at the file's end, or the read's error.
    pub fn next_block(&mut self) -> Result<Option<Block<'_>>> {
        let (n, lines) = std::mem::take(&mut self.handed);
        self.buf.drain(..n);
        self.line += lines;
        loop {
            let held = self.buf.len();
            let full = self.cap.is_some_and(|c| held >= c);
            if held > 0 && (full || self.eof) {
                return Ok(Some(self.hand(held, !self.eof)));
            }
            if self.eof {
                return Ok(None);
            }
            self.buf.resize(held + self.size, 0);
            let got = loop {
                match self.src.read(&mut self.buf[held..]) {
                    Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                    r => break r,
                }
            };
            let n = match got {
                Ok(n) => n.min(self.size),
                Err(e) => {
                    self.buf.truncate(held);
                    return Err(e);
                }
            };
            self.buf.truncate(held + n);
            if n == 0 {
                self.eof = true;
            } else if let Some(i) = memchr::memrchr(b'\n', &self.buf[held..]) {
                return Ok(Some(self.hand(held + i + 1, false)));
            }
        }
    }

    /// Hands back `buf[..end]`, dropped on the next call.
    fn hand(&mut self, end: usize, cut: bool) -> Block<'_> {
        let bytes = &self.buf[..end];
        self.handed = (end, memchr::memchr_iter(b'\n', bytes).count() as u64);
        Block {
            bytes,
            first_line: self.line,
            cut,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io;

    /// Hands out at most `step` bytes a read, and an `Interrupted` error
    /// before every other read.
    struct Short<'a> {
        data: &'a [u8],
        step: usize,
        calls: usize,
    }

    impl Read for Short<'_> {
        fn read(&mut self, dst: &mut [u8]) -> io::Result<usize> {
            self.calls += 1;
            if self.calls % 2 == 1 {
                return Err(io::Error::from(ErrorKind::Interrupted));
            }
            let n = self.data.len().min(self.step).min(dst.len());
            dst[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    /// Every block of `src`: (bytes, first line, cut).
    fn blocks(src: impl Read, size: usize, cap: Option<usize>) -> Vec<(Vec<u8>, u64, bool)> {
        let mut buf = b"left from before".to_vec();
        let mut b = Blocks::new(src, &mut buf, size);
        if let Some(c) = cap {
            b = b.cap(c);
        }
        let mut out = Vec::new();
        while let Some(k) = b.next_block().unwrap() {
            out.push((k.bytes.to_vec(), k.first_line, k.cut));
        }
        assert!(b.next_block().unwrap().is_none(), "stays at the end");
        out
    }

    const TEXTS: [&[u8]; 8] = [
        b"",
        b"\n",
        b"a\nbb\nccc\n",
        b"a\r\nbb\r\n\r\nccc\r\n",
        b"one\ntwo\nno final newline",
        b"x",
        b"short\nthis line is longer than every block tried below\nend\n",
        b"\n\n\r\n\nlast\r",
    ];

    /// The checks every cut of a text must pass, `size` bytes a read.
    fn check(text: &[u8], got: &[(Vec<u8>, u64, bool)], cap: Option<usize>, size: usize) {
        // The blocks are the text, in order.
        assert_eq!(
            got.iter().flat_map(|g| g.0.clone()).collect::<Vec<_>>(),
            text
        );
        let mut line = 1;
        for (i, (bytes, first, cut)) in got.iter().enumerate() {
            assert!(!bytes.is_empty());
            assert_eq!(*first, line, "block {i} of {text:?}");
            line += bytes.iter().filter(|&&b| b == b'\n').count() as u64;
            let last = i + 1 == got.len();
            if *cut {
                assert!(!bytes.contains(&b'\n'));
                let c = cap.expect("cut only with a cap");
                assert!(bytes.len() >= c && bytes.len() < c.max(1) + size);
            } else if !last {
                assert_eq!(bytes.last(), Some(&b'\n'), "whole lines");
            }
        }
    }

    #[test]
    fn blocks_are_the_text_in_whole_numbered_lines_at_every_size() {
        for text in TEXTS {
            for size in 1..=text.len() + 2 {
                for step in [1, 2, 3, size] {
                    let short = Short {
                        data: text,
                        step,
                        calls: 0,
                    };
                    let got = blocks(short, size, None);
                    check(text, &got, None, size);
                    assert!(got.iter().all(|g| !g.2));
                    // Without a cap every block but the last ends a line.
                    let lines = text.split(|&b| b == b'\n').count()
                        - usize::from(text.ends_with(b"\n") || text.is_empty());
                    let numbered: usize = got
                        .iter()
                        .map(|g| {
                            g.0.split(|&b| b == b'\n').count() - usize::from(g.0.ends_with(b"\n"))
                        })
                        .sum();
                    assert_eq!(numbered, lines, "{text:?} at {size}/{step}");
                }
                let whole = blocks(text, size, None);
                check(text, &whole, None, size);
            }
        }
    }

    #[test]
    fn a_cap_hands_back_the_line_so_far_flagged() {
        for text in TEXTS {
            for size in 1..=text.len() + 2 {
                for cap in 0..=text.len() + 2 {
                    let got = blocks(text, size, Some(cap));
                    check(text, &got, Some(cap), size);
                    // Under the cap, nothing is cut: the blocks are those
                    // without one.
                    let longest = text.split(|&b| b == b'\n').map(<[u8]>::len).max();
                    if cap > longest.unwrap_or(0) + size {
                        assert_eq!(got, blocks(text, size, None));
                    }
                }
            }
        }
    }

    #[test]
    fn cap_zero_hands_back_each_read_at_once() {
        let text = b"ab\ncdefgh\nij";
        let got = blocks(&text[..], 4, Some(0));
        let want: [(&[u8], u64, bool); 5] = [
            (b"ab\n", 1, false),
            (b"c", 2, true),
            (b"defg", 2, true),
            (b"h\n", 2, false),
            // Cut: the file's end is found by the read after it.
            (b"ij", 3, true),
        ];
        let want: Vec<_> = want.iter().map(|w| (w.0.to_vec(), w.1, w.2)).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn a_line_longer_than_the_block_grows_it_without_a_cap() {
        let mut text = vec![b'a'; 1000];
        text.extend_from_slice(b"\nb\n");
        let got = blocks(&text[..], 16, None);
        assert_eq!(got, [(text.clone(), 1, false)]);
        let got = blocks(&text[..], 16, Some(100));
        // Cut at the first read reaching 100 bytes held (112), then on.
        assert_eq!(got[0], (vec![b'a'; 112], 1, true));
        assert!(got[..got.len() - 1].iter().all(|g| g.2 && g.1 == 1));
        assert_eq!(got.last().unwrap().1, 1);
        assert!(got.last().unwrap().0.ends_with(b"a\nb\n"));
    }

    #[test]
    fn an_error_stops_it_and_is_returned() {
        struct Fails(usize);
        impl Read for Fails {
            fn read(&mut self, dst: &mut [u8]) -> io::Result<usize> {
                if self.0 == 0 {
                    return Err(io::Error::other("boom"));
                }
                self.0 -= 1;
                dst[..2].copy_from_slice(b"x\n");
                Ok(2)
            }
        }
        let mut buf = Vec::new();
        let mut b = Blocks::new(Fails(2), &mut buf, 8);
        assert_eq!(b.next_block().unwrap().unwrap().bytes, b"x\n");
        let k = b.next_block().unwrap().unwrap();
        assert_eq!((k.bytes, k.first_line), (&b"x\n"[..], 2));
        assert_eq!(b.next_block().unwrap_err().to_string(), "boom");
    }
}
