//! The temps of the prepare phase (`prepare`), written piece by piece.

use std::os::fd::{AsFd, OwnedFd};

use rustix::io::Errno;
use sha2::{Digest, Sha256};

use crate::fs::replay::Short;
use crate::fs::temp::Temp;
use crate::fs::{ConflictWhat, FsError, Target, WriteStep};
use crate::protocol::Report;

/// A new temp beside `at` holding `bytes` (LF written as CRLF with `crlf`).
#[cfg_attr(as_edit_small, optimize(size))]
pub(super) fn write_temp<'a>(
    at: &'a Target,
    bytes: &[u8],
    crlf: bool,
    report: &mut Option<Report>,
) -> Result<Temp<'a>, FsError> {
    let mut w = TempWriter::new(at, crlf, report.is_some());
    w.put(bytes);
    w.finish(report)
}

/// Bytes gathered before a write: a transform's output comes a line and
/// its newline at a time (a write each would be 32,769 for a 1 MiB file).
const BUF: usize = 64 * 1024;

/// A new temp beside a target, written piece by piece: made at the first
/// write (a refusal found before any makes none), LF written as CRLF with
/// `crlf`, gathered into writes of [`BUF`], hashed for `--report` only (a
/// patch's CPU was half this hash), the first error kept for
/// [`TempWriter::finish`].
pub(super) struct TempWriter<'a> {
    temp: Option<Temp<'a>>,
    at: &'a Target,
    buf: Vec<u8>,
    hash: Option<Sha256>,
    size: u64,
    crlf: bool,
    r: Result<(), (WriteStep, Errno)>,
    /// Deferred (a patch's pass): the bytes put so far, not written, that
    /// are the source's normalized prefix; `None`: writing through.
    skipped: Option<u64>,
    /// Bringing the prefix over failed other than by a write.
    read: Option<FsError>,
}

impl<'a> TempWriter<'a> {
    pub(super) fn new(at: &'a Target, crlf: bool, hash: bool) -> Self {
        TempWriter {
            temp: None,
            at,
            buf: Vec::new(),
            hash: hash.then(Sha256::new),
            size: 0,
            crlf,
            r: Ok(()),
            skipped: None,
            read: None,
        }
    }

    /// A writer that writes nothing until [`TempWriter::change`]: what is
    /// put before is the source's text (a refusal then writes nothing).
    pub(super) fn deferred(at: &'a Target, crlf: bool, hash: bool) -> Self {
        TempWriter {
            skipped: Some(0),
            ..TempWriter::new(at, crlf, hash)
        }
    }

    /// The output now differs from the source's text: the temp is made,
    /// the prefix put so far is brought over from `src`, re-read and
    /// normalized again, and from now on written through.
    #[cold]
    #[inline(never)]
    #[cfg_attr(as_edit_small, optimize(size))]
    pub(super) fn change(&mut self, src: &OwnedFd) {
        let Some(len) = self.skipped.take() else {
            return;
        };
        let (crlf, path) = (self.crlf, &self.at.path);
        let Some(temp) = self.made() else { return };
        match crate::fs::replay::replay(src.as_fd(), temp.fd(), len, crlf) {
            Ok(()) => {}
            Err(Short::Write(e)) => self.r = Err((WriteStep::WriteTemp, e)),
            Err(Short::Read(errno)) => {
                let path = Some(path.clone());
                self.read = Some(FsError::Read { path, errno })
            }
            Err(Short::Changed) => {
                let what = ConflictWhat::ChangedWhileEditing;
                let path = path.clone();
                self.read = Some(FsError::Conflict { path, what })
            }
        }
        if self.read.is_some() {
            self.r = Err((WriteStep::WriteTemp, Errno::IO)); // stops writing
        }
    }

    pub(super) fn put(&mut self, b: &[u8]) {
        match self.crlf {
            true => crate::eol::expand_crlf(b, &mut |p| self.gather(p)),
            false => self.gather(b),
        }
    }

    fn gather(&mut self, b: &[u8]) {
        if let Some(n) = self.skipped.as_mut() {
            // Counted and hashed as written; brought over at the change.
            *n += b.len() as u64;
            self.size += b.len() as u64;
            if let Some(h) = self.hash.as_mut() {
                h.update(b);
            }
            return;
        }
        if self.buf.len() + b.len() > BUF {
            self.flush();
        }
        match b.len() >= BUF {
            true => self.write(b),
            false => self.buf.extend_from_slice(b),
        }
    }

    #[inline(never)]
    #[cfg_attr(as_edit_small, optimize(size))]
    fn flush(&mut self) {
        let buf = std::mem::take(&mut self.buf);
        self.write(&buf);
        self.buf = buf;
        self.buf.clear();
    }

    #[inline(never)]
    #[cfg_attr(as_edit_small, optimize(size))]
    fn write(&mut self, b: &[u8]) {
        if b.is_empty() || self.made().is_none() {
            return;
        }
        if let Some(h) = self.hash.as_mut() {
            h.update(b);
        }
        self.size += b.len() as u64;
        let temp = self.temp.as_ref().expect("made");
        self.r = write_all(temp.file(), b).map_err(|e| (WriteStep::WriteTemp, e));
    }

    #[inline(never)] // write and finish share it
    #[cfg_attr(as_edit_small, optimize(size))]
    fn made(&mut self) -> Option<&Temp<'a>> {
        if self.temp.is_none() && self.r.is_ok() {
            match Temp::create(self.at) {
                Ok(t) => self.temp = Some(t),
                Err(e) => self.r = Err((WriteStep::CreateTemp, e)),
            }
        }
        self.temp.as_ref().filter(|_| self.r.is_ok())
    }

    /// The temp, its size and hash in `report`; or the first error.
    #[cfg_attr(as_edit_small, optimize(size))]
    pub(super) fn finish(mut self, report: &mut Option<Report>) -> Result<Temp<'a>, FsError> {
        self.flush();
        if let Some(e) = self.read.take() {
            return Err(e);
        }
        self.made();
        let temp = self.temp.take();
        self.r.map_err(|(step, errno)| FsError::Write {
            path: self.at.path.clone(),
            step,
            errno,
        })?;
        if let (Some(rep), Some(h)) = (report.as_mut(), self.hash) {
            rep.size = Some(self.size);
            rep.sha256 = Some(crate::hex::encode(&h.finalize()));
        }
        Ok(temp.expect("made"))
    }
}

#[cfg_attr(as_edit_small, optimize(size))]
pub(super) fn write_all(fd: impl AsFd, mut b: &[u8]) -> Result<(), Errno> {
    while !b.is_empty() {
        match rustix::io::write(fd.as_fd(), b) {
            Ok(0) => return Err(Errno::IO),
            Ok(n) => b = &b[n..],
            Err(Errno::INTR) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
