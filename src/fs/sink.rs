//! The output side of the stream: the core's LF-normalized output, re-expanded
//! to CRLF when `--eol preserve` asks for it, hashed for `--report`, and
//! written to the temp in large pieces.

use std::os::fd::{BorrowedFd, OwnedFd};

use rustix::io::Errno;
use sha2::{Digest, Sha256};

use super::error::FsError;
use super::CHUNK;
use crate::eol::{expand_crlf, EolCounter};

/// Collects output and writes it to the temp in large pieces; remembers the
/// first write error instead of failing (the refusal, if any, still wins).
pub(super) struct Sink<'a> {
    /// `None`: nothing is written (`--dry-run`, no temp, or a certain refusal).
    pub(super) temp: Option<BorrowedFd<'a>>,
    buf: Vec<u8>,
    pub(super) error: Option<Errno>,
    crlf: bool,
    hash: Option<Sha256>,
    /// Bytes of output, whether written or not.
    pub(super) size: u64,
}

impl<'a> Sink<'a> {
    /// `crlf`: write LF as CRLF; `hash`: digest the output for `--report`.
    pub(super) fn new(temp: Option<BorrowedFd<'a>>, crlf: bool, hash: bool) -> Sink<'a> {
        Sink {
            temp,
            buf: Vec::with_capacity(CHUNK),
            error: None,
            crlf,
            hash: hash.then(Sha256::new),
            size: 0,
        }
    }

    pub(super) fn push(&mut self, b: &[u8]) {
        if self.crlf {
            expand_crlf(b, &mut |p| self.put(p));
        } else {
            self.put(b);
        }
    }

    /// The digest of all output, once it is complete.
    pub(super) fn digest(&mut self) -> Option<[u8; 32]> {
        self.hash.take().map(|h| h.finalize().into())
    }

    fn put(&mut self, b: &[u8]) {
        if b.is_empty() {
            return;
        }
        self.size += b.len() as u64;
        if let Some(h) = self.hash.as_mut() {
            h.update(b);
        }
        if self.temp.is_none() || self.error.is_some() {
            return;
        }
        if self.buf.len() + b.len() <= self.buf.capacity() {
            self.buf.extend_from_slice(b);
            return;
        }
        self.flush();
        if b.len() >= self.buf.capacity() / 2 {
            self.write(b); // large slices go straight through: no copy
        } else {
            self.buf.extend_from_slice(b);
        }
    }

    pub(super) fn flush(&mut self) {
        let buf = std::mem::take(&mut self.buf);
        self.write(&buf);
        self.buf = buf;
        self.buf.clear();
    }

    fn write(&mut self, mut b: &[u8]) {
        let Some(fd) = self.temp else { return };
        while !b.is_empty() && self.error.is_none() {
            match rustix::io::write(fd, b) {
                Ok(0) => self.error = Some(Errno::IO),
                Ok(n) => b = &b[n..],
                Err(Errno::INTR) => {}
                Err(e) => self.error = Some(e),
            }
        }
    }
}

/// `--eol preserve`: is the file's dominant line ending CRLF? (A pre-pass;
/// only paid for when asked.)
pub(super) fn dominant_is_crlf(file: &OwnedFd) -> Result<bool, FsError> {
    let mut counter = EolCounter::default();
    let mut buf = vec![0u8; CHUNK];
    let mut off = 0u64;
    loop {
        match rustix::io::pread(file, &mut buf[..], off) {
            Ok(0) => break,
            Ok(n) => {
                counter.feed(&buf[..n]);
                off += n as u64;
            }
            Err(Errno::INTR) => {}
            Err(errno) => return Err(FsError::Read { path: None, errno }),
        }
    }
    Ok(counter.finish().dominant_is_crlf())
}
