//! A file's bytes as the prepare phase reads them (`pread` from the
//! start, in the spare chunk), and its text through the engine (strict
//! UTF-8, CRLF/CR as LF), for `prepare` and `insert`.

use std::os::fd::OwnedFd;

use rustix::io::Errno;

use crate::fs::FsError;
use crate::protocol::{display_path, Failure};

/// `fd`'s bytes from its start to `each`, a chunk at a time.
#[cfg_attr(as_edit_small, optimize(size))]
pub(super) fn read_each(fd: &OwnedFd, each: &mut dyn FnMut(&[u8])) -> Result<(), Errno> {
    let mut buf = crate::spare::chunk();
    let mut off = 0u64;
    loop {
        match rustix::io::pread(fd, &mut buf[..], off) {
            Ok(0) => {
                crate::spare::give_chunk(buf);
                return Ok(());
            }
            Ok(n) => {
                each(&buf[..n]);
                off += n as u64;
            }
            Err(Errno::INTR) => {}
            Err(e) => return Err(e),
        }
    }
}

/// The text of `fd` through the engine (strict UTF-8, CRLF/CR as LF) to
/// `each`; or why not (an empty file is an empty text).
#[cfg_attr(as_edit_small, optimize(size))]
pub(super) fn read_norm(
    fd: &OwnedFd,
    path: &std::path::Path,
    each: &mut dyn FnMut(&[u8]),
) -> Result<(), Failure> {
    let mut engine = crate::engine::Engine::new(&[], false);
    read_each(fd, &mut |b| engine.feed(b, each)).map_err(|errno| {
        super::failure(FsError::Read {
            path: Some(path.to_owned()),
            errno,
        })
    })?;
    match engine.finish(each) {
        Ok(_) | Err(crate::engine::Refusal::Empty) => Ok(()),
        Err(r) => Err(crate::protocol::refusal_failure(r, 1, &display_path(path))),
    }
}
