//! The temp's I/O for [`super::sink`]: bringing the deferred identical
//! prefix over from the source (in the kernel by `copy_file_range` when it
//! is the raw input byte for byte, else re-read and re-normalized), and the
//! write loops the sink writes through.

use std::io::IoSlice;
use std::os::fd::{AsRawFd, BorrowedFd};

use rustix::io::Errno;

use super::CHUNK;
use crate::engine::Engine;
use crate::eol::expand_crlf;

/// The raw piece re-read at a time when the prefix is re-normalized (its
/// output, re-expanded, is at most twice as long).
const REPLAY_PIECE: usize = 64 * 1024;

/// Why the prefix could not be brought over.
pub(crate) enum Short {
    Write(Errno),
    Read(Errno),
    Changed,
}

fn write_all(fd: BorrowedFd<'_>, mut b: &[u8]) -> Result<(), Errno> {
    while !b.is_empty() {
        match rustix::io::write(fd, b) {
            Ok(0) => return Err(Errno::IO),
            Ok(n) => b = &b[n..],
            Err(Errno::INTR) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// `head` then `tail`, in one `writev` when both are there; partial writes
/// go on with plain writes, and so does a `writev` a seccomp profile refuses.
pub(super) fn write_two(fd: BorrowedFd<'_>, head: &[u8], tail: &[u8]) -> Result<(), Errno> {
    if head.is_empty() {
        return write_all(fd, tail);
    }
    let n = loop {
        match rustix::io::writev(fd, &[IoSlice::new(head), IoSlice::new(tail)]) {
            Ok(0) => return Err(Errno::IO),
            Ok(n) => break n,
            Err(Errno::INTR) => {}
            Err(Errno::NOSYS | Errno::PERM) => break 0,
            Err(e) => return Err(e),
        }
    };
    if n < head.len() {
        write_all(fd, &head[n..])?;
        write_all(fd, tail)
    } else {
        write_all(fd, &tail[n - head.len()..])
    }
}

fn pread(fd: BorrowedFd<'_>, buf: &mut [u8], off: u64) -> Result<usize, Short> {
    loop {
        match rustix::io::pread(fd, &mut *buf, off) {
            Err(Errno::INTR) => {}
            r => return r.map_err(Short::Read),
        }
    }
}

/// What one `copy_file_range` call copies before the piece's write-back is
/// started: the temp is written back and waited for before it is named
/// (`temp::settle`), so starting each piece's writes as soon as it is
/// copied lets the device write it while the next piece copies, instead
/// of the whole prefix after the copy (an edit near the end of 64 MiB:
/// 1.04x a `cp`+`mv` against 1.26x, `fs.md`).
const COPY_PIECE: usize = 8 << 20;

/// Copies the first `len` bytes of `src` to the first `len` of `dst`, in
/// the kernel where it can (`copy_file_range` with explicit offsets, so
/// neither file's position moves; a reflink on XFS and btrfs), else through
/// a buffer. Each piece copied in the kernel but the last has its
/// write-back started.
pub(super) fn copy_raw(src: BorrowedFd<'_>, dst: BorrowedFd<'_>, len: u64) -> Result<(), Short> {
    let mut off = 0u64;
    // Test builds only: answer as a kernel, file system or seccomp filter
    // refusing the syscall would, or copy in short pieces.
    #[cfg(any(debug_assertions, feature = "fault-injection"))]
    let (refused, piece) = (
        std::env::var("AS_EDIT_TEST_NO_COPY_RANGE")
            .ok()
            .map(|v| match v.as_str() {
                "EXDEV" => Errno::XDEV,
                "ENOSYS" => Errno::NOSYS,
                "EPERM" => Errno::PERM,
                "EOPNOTSUPP" => Errno::OPNOTSUPP,
                "EBADF" => Errno::BADF,
                _ => Errno::INVAL,
            }),
        std::env::var("AS_EDIT_TEST_COPY_RANGE_PIECE")
            .ok()
            .and_then(|v| v.parse::<usize>().ok()),
    );
    #[cfg(not(any(debug_assertions, feature = "fault-injection")))]
    let (refused, piece): (Option<Errno>, Option<usize>) = (None, None);
    while off < len {
        let want = (len - off).min(COPY_PIECE as u64) as usize;
        let want = piece.map_or(want, |p| want.min(p.max(1)));
        let from = off;
        let r = match refused {
            Some(e) => Err(e),
            None => {
                let mut at = off;
                rustix::fs::copy_file_range(src, Some(&mut off), dst, Some(&mut at), want)
            }
        };
        match r {
            Ok(0) => return Err(Short::Changed),
            // `off` has advanced. The last piece's write-back is left to
            // `settle`, which follows at once and waits for all of it (and
            // reports its errors): a short prefix costs no extra call.
            Ok(n) if off < len => start_writeback(dst, from, n),
            Ok(_) => {}
            Err(Errno::INTR) => {}
            // Not between these files (EXDEV on older kernels, EINVAL or
            // EOPNOTSUPP on some file systems), not on this kernel (ENOSYS),
            // refused by a seccomp profile (EPERM), or not for these fds.
            Err(Errno::XDEV)
            | Err(Errno::NOSYS)
            | Err(Errno::PERM)
            | Err(Errno::INVAL)
            | Err(Errno::OPNOTSUPP)
            | Err(Errno::BADF) => return copy_buffered(src, dst, off, len),
            Err(e) => return Err(Short::Write(e)),
        }
    }
    Ok(())
}

/// Starts writing `len` bytes of `fd` at `off` back, without waiting.
fn start_writeback(fd: BorrowedFd<'_>, off: u64, len: usize) {
    // SAFETY: a syscall on a descriptor we hold; no memory is passed.
    unsafe {
        libc::sync_file_range(
            fd.as_raw_fd(),
            off as i64,
            len as i64,
            libc::SYNC_FILE_RANGE_WRITE,
        )
    };
}

/// The fallback: `pread` the source from `off` up to `len`, write to `dst`.
fn copy_buffered(
    src: BorrowedFd<'_>,
    dst: BorrowedFd<'_>,
    mut off: u64,
    len: u64,
) -> Result<(), Short> {
    let mut buf = vec![0u8; CHUNK];
    while off < len {
        let want = (len - off).min(CHUNK as u64) as usize;
        let n = pread(src, &mut buf[..want], off)?;
        if n == 0 {
            return Err(Short::Changed);
        }
        let mut done = 0;
        while done < n {
            match rustix::io::pwrite(dst, &buf[done..n], off + done as u64) {
                Ok(0) => return Err(Short::Write(Errno::NOSPC)),
                Ok(w) => done += w,
                Err(Errno::INTR) => {}
                Err(e) => return Err(Short::Write(e)),
            }
        }
        off += n as u64;
    }
    Ok(())
}

/// The prefix when normalizing changed it (a CR was seen) or CRLF is
/// written: re-read the raw input, normalize it again (the core with no
/// edits), re-expand for CRLF output, and write exactly `len` output bytes.
pub(crate) fn replay(
    src: BorrowedFd<'_>,
    dst: BorrowedFd<'_>,
    len: u64,
    crlf: bool,
) -> Result<(), Short> {
    if len == 0 {
        return Ok(());
    }
    let mut norm = Engine::new(&[], false);
    let mut raw = vec![0u8; REPLAY_PIECE];
    let mut out = Vec::with_capacity(2 * REPLAY_PIECE);
    let (mut off, mut left) = (0u64, len);
    while left > 0 {
        let n = pread(src, &mut raw, off)?;
        out.clear();
        let mut keep = |b: &[u8]| {
            if crlf {
                expand_crlf(b, &mut |p| out.extend_from_slice(p));
            } else {
                out.extend_from_slice(b);
            }
        };
        if n == 0 {
            // The end: a trailing CR is released only now.
            let _ = std::mem::replace(&mut norm, Engine::new(&[], false)).finish(&mut keep);
        } else {
            norm.feed(&raw[..n], &mut keep);
        }
        let take = (out.len() as u64).min(left) as usize;
        write_all(dst, &out[..take]).map_err(Short::Write)?;
        left -= take as u64;
        if n == 0 && left > 0 {
            return Err(Short::Changed);
        }
        off += n as u64;
    }
    Ok(())
}
