//! Opening a file to read it, for every op that reads one (protocol 4's
//! `read`, the toolset's `read` and `grep`): never blocking, whatever is
//! at the name. Its type is checked before it is opened (`fstatat`: a
//! FIFO or a device is never opened, so no device sees an open), then it
//! is opened `O_NONBLOCK | O_NOCTTY | O_CLOEXEC` (`O_NOFOLLOW` where the
//! last name must not be followed, as for a path already resolved: a
//! symlink swapped in is then not a regular file): a FIFO swapped in since the check is
//! opened without waiting for a writer. The type is checked again on the
//! descriptor (`fstat`): it must be a regular file, the inode the check
//! saw. Reads of it then never wait either: a file that has nothing yet
//! (`/proc/kmsg`) answers `EAGAIN` at once instead of blocking.

use std::os::fd::{BorrowedFd, OwnedFd};

use rustix::fs::{self as rfs, AtFlags, FileType, Mode, OFlags, Stat};
use rustix::io::Errno;

/// Why a file was not opened for reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unopened {
    /// The check before the open failed (`NOENT`: nothing there).
    Stat(Errno),
    /// The open failed; the size the check saw.
    Open(Errno, u64),
    /// The `fstat` of the descriptor failed.
    Fstat(Errno),
    /// Not a regular file (before the open, or on the descriptor), or no
    /// longer the inode the check saw (its type then given).
    NotRegular(FileType),
}

/// `name` in `dir` (its last name followed where `follow`), open for
/// reading, and its `fstat`: a regular file, never waited for.
pub(crate) fn open_regular<P: rustix::path::Arg + Copy>(
    dir: BorrowedFd<'_>,
    name: P,
    follow: bool,
) -> Result<(OwnedFd, Stat), Unopened> {
    let at = match follow {
        true => AtFlags::empty(),
        false => AtFlags::SYMLINK_NOFOLLOW,
    };
    let st = rfs::statat(dir, name, at).map_err(Unopened::Stat)?;
    let kind = FileType::from_raw_mode(st.st_mode);
    if kind != FileType::RegularFile {
        return Err(Unopened::NotRegular(kind));
    }
    #[cfg(any(debug_assertions, feature = "fault-injection"))]
    swap_hook(dir, name);
    let mut flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
    if !follow {
        flags |= OFlags::NOFOLLOW;
    }
    let fd = rfs::openat(dir, name, flags, Mode::empty()).map_err(|e| match e {
        // A symlink swapped in since the check: not followed.
        Errno::LOOP if !follow => Unopened::NotRegular(FileType::Symlink),
        e => Unopened::Open(e, st.st_size as u64),
    })?;
    let now = rfs::fstat(&fd).map_err(Unopened::Fstat)?;
    let kind = FileType::from_raw_mode(now.st_mode);
    if kind != FileType::RegularFile || (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino) {
        return Err(Unopened::NotRegular(kind));
    }
    Ok((fd, now))
}

/// Test builds only: `AS_EDIT_TEST_SWAP_BEFORE_OPEN=P` renames `P` (a
/// FIFO, say) over the name between the check and the open, the race a
/// blocking open would hang in.
#[cfg(any(debug_assertions, feature = "fault-injection"))]
fn swap_hook<P: rustix::path::Arg>(dir: BorrowedFd<'_>, name: P) {
    if let Some(p) = std::env::var_os("AS_EDIT_TEST_SWAP_BEFORE_OPEN") {
        let _ = rfs::renameat(rfs::CWD, p.as_os_str(), dir, name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;

    fn at(dir: &std::path::Path, name: &str, follow: bool) -> Result<FileType, Unopened> {
        let d = rfs::open(dir, OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty()).unwrap();
        let n = CString::new(name).unwrap();
        open_regular(rustix::fd::AsFd::as_fd(&d), &n, follow)
            .map(|(_, st)| FileType::from_raw_mode(st.st_mode))
    }

    #[test]
    fn a_regular_file_opens_anything_else_is_named_never_waited_for() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("f"), "x\n").unwrap();
        rustix::fs::mknodat(
            rfs::CWD,
            d.path().join("p").as_os_str().as_bytes(),
            FileType::Fifo,
            Mode::from_raw_mode(0o644),
            0,
        )
        .unwrap();
        std::os::unix::fs::symlink("f", d.path().join("l")).unwrap();
        assert_eq!(at(d.path(), "f", false), Ok(FileType::RegularFile));
        assert_eq!(at(d.path(), "l", true), Ok(FileType::RegularFile));
        assert_eq!(
            at(d.path(), "l", false),
            Err(Unopened::NotRegular(FileType::Symlink))
        );
        assert_eq!(
            at(d.path(), "p", true),
            Err(Unopened::NotRegular(FileType::Fifo))
        );
        assert_eq!(
            at(d.path(), ".", true),
            Err(Unopened::NotRegular(FileType::Directory))
        );
        assert_eq!(
            at(d.path(), "gone", true),
            Err(Unopened::Stat(Errno::NOENT))
        );
    }
}
