//! Removing a deleted directory's tree once the transaction is committed
//! (it was renamed to a hidden name at the commit, so it disappeared at
//! once): depth first, by descriptor, never following a symlink (a link
//! inside is removed as a link) and never entering another file system
//! (a directory mounted there since the plan's scan stays, and so the
//! hidden name, which the result then names in `"left"`).

use std::ffi::CStr;
use std::os::fd::{AsFd, BorrowedFd};

use rustix::fs::{self as rfs, AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

/// Removes `name` in `dir` and everything under it.
pub(super) fn remove(dir: BorrowedFd<'_>, name: &CStr) -> Result<(), Errno> {
    #[cfg(any(debug_assertions, feature = "fault-injection"))]
    if std::env::var_os("AS_EDIT_TEST_TREE_FAIL").is_some() {
        // Test builds only: the removal fails part way (the tree empty
        // but for what could not go, here everything under it).
        return Err(Errno::IO);
    }
    let dev = rfs::fstat(dir)?.st_dev;
    empty(dir, name, dev)?;
    rfs::unlinkat(dir, name, AtFlags::REMOVEDIR)
}

/// Empties the directory `name` in `dir`, on device `dev`.
fn empty(dir: BorrowedFd<'_>, name: &CStr, dev: u64) -> Result<(), Errno> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = rfs::openat(dir, name, flags, Mode::empty())?;
    if rfs::fstat(&fd)?.st_dev != dev {
        return Err(Errno::XDEV);
    }
    let mut failed = Ok(());
    // Read again after each pass: removing entries while reading may skip some.
    loop {
        let mut names = Vec::new();
        for e in rfs::Dir::read_from(&fd)? {
            let e = e?;
            let n = e.file_name();
            if n != c"." && n != c".." {
                names.push((n.to_owned(), e.file_type()));
            }
            if names.len() >= 4096 {
                break;
            }
        }
        if names.is_empty() {
            return failed;
        }
        let mut progress = false;
        for (n, t) in names {
            let t = match t {
                FileType::Unknown => rfs::statat(&fd, &n, AtFlags::SYMLINK_NOFOLLOW)
                    .map(|s| FileType::from_raw_mode(s.st_mode))?,
                t => t,
            };
            let r = if t == FileType::Directory {
                empty(fd.as_fd(), &n, dev).and_then(|()| rfs::unlinkat(&fd, &n, AtFlags::REMOVEDIR))
            } else {
                rfs::unlinkat(&fd, &n, AtFlags::empty())
            };
            match r {
                Ok(()) => progress = true,
                Err(e) => failed = Err(e),
            }
        }
        if !progress {
            return failed;
        }
    }
}
