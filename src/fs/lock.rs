//! Opening the target: read-only, never blocking, only a regular file, under
//! an exclusive `flock` taken within the deadline, and re-validated so the
//! lock is on the inode the path names once we hold it.

use std::os::fd::OwnedFd;
use std::path::Path;
use std::time::Duration;

use rustix::fs::{self as rfs, AtFlags, FileType, FlockOperation, Mode, OFlags, Stat};
use rustix::io::Errno;

use super::error::{ConflictWhat, FileKind, FsError, NotFoundKind, WriteStep};
use super::resource::is_resource;
use super::Target;

/// The time since an arbitrary fixed point (CLOCK_MONOTONIC): a lock
/// deadline's clock. Not `Instant::now`, whose unwrap of a clock error
/// that cannot happen links io::Error's Debug formatting (3 KiB of the
/// static binary, scripts/bench/README.md's size table).
pub(crate) fn now() -> Duration {
    crate::clock::clock(libc::CLOCK_MONOTONIC)
}

/// The type of what `st` describes: `Ok` for a regular file, else the
/// `file_not_found` naming what is there instead.
#[cfg_attr(as_edit_small, optimize(size))]
fn require_regular(st: &Stat, path: &Path) -> Result<(), FsError> {
    let kind = match FileType::from_raw_mode(st.st_mode) {
        FileType::RegularFile => return Ok(()),
        FileType::Directory => FileKind::Directory,
        FileType::Fifo => FileKind::Fifo,
        FileType::Socket => FileKind::Socket,
        FileType::CharacterDevice => FileKind::CharDevice,
        FileType::BlockDevice => FileKind::BlockDevice,
        FileType::Symlink => FileKind::Symlink,
        FileType::Unknown => FileKind::Unknown,
    };
    Err(FsError::NotFound {
        path: path.to_owned(),
        kind: NotFoundKind::NotRegular(kind),
    })
}

/// Opens the target read-only and takes an exclusive `flock`, waiting at
/// most `timeout`. If a previous holder replaced the file while we waited,
/// the path names a new inode: reopen and lock that one instead.
#[cfg_attr(as_edit_small, optimize(size))]
pub(crate) fn open_locked(t: &Target, timeout: Duration) -> Result<(OwnedFd, Stat), FsError> {
    let deadline = now() + timeout;
    for _ in 0..1000 {
        if let Some(locked) = try_open_locked(t, deadline, timeout, None)? {
            return Ok(locked);
        }
    }
    Err(FsError::KeptChanging {
        path: t.path.clone(),
    })
}

/// One attempt: the file the name holds, opened and locked, or `None`
/// when the name came to hold another inode meanwhile (or, with `want`,
/// holds another than `want`: a transaction then waits on no lock out of
/// its canonical (device, inode) order, `txn::lock`).
#[cfg_attr(as_edit_small, optimize(size))]
pub(crate) fn try_open_locked(
    t: &Target,
    deadline: Duration,
    timeout: Duration,
    want: Option<(u64, u64)>,
) -> Result<Option<(OwnedFd, Stat)>, FsError> {
    let path = || t.path.clone();
    let id = |st: &Stat| (st.st_dev, st.st_ino);
    let wanted = |st: &Stat| want.is_none_or(|w| w == id(st));
    // Check the type before opening: opening a device can have effects.
    let st = rfs::statat(&t.dir, t.name.as_c_str(), AtFlags::SYMLINK_NOFOLLOW).map_err(|e| {
        FsError::NotFound {
            path: path(),
            kind: NotFoundKind::Other(e),
        }
    })?;
    require_regular(&st, &t.path)?;
    if !wanted(&st) {
        return Ok(None);
    }
    // O_NONBLOCK: should a FIFO be swapped in after the check, open must not hang.
    let flags =
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
    let fd = match rfs::openat(&t.dir, t.name.as_c_str(), flags, Mode::empty()) {
        Ok(fd) => fd,
        Err(Errno::NOENT) => return Ok(None), // replaced between stat and open
        Err(errno) => {
            return Err(FsError::Open {
                path: path(),
                errno,
            })
        }
    };
    let st = rfs::fstat(&fd).map_err(|errno| FsError::Stat {
        path: Some(path()),
        errno,
    })?;
    require_regular(&st, &t.path)?;
    if !wanted(&st) {
        return Ok(None);
    }
    lock(&fd, deadline, timeout, &t.path)?;
    // Still the file the path names? (We may have waited behind an edit
    // that renamed a new file over it.)
    match rfs::statat(&t.dir, t.name.as_c_str(), AtFlags::SYMLINK_NOFOLLOW) {
        Ok(now) if id(&now) == id(&st) => {
            // Re-read the metadata under the lock: this is the baseline.
            let st = rfs::fstat(&fd).map_err(|errno| FsError::Stat { path: None, errno })?;
            Ok(Some((fd, st)))
        }
        _ => Ok(None),
    }
}

#[cfg_attr(as_edit_small, optimize(size))]
fn lock(fd: &OwnedFd, deadline: Duration, timeout: Duration, path: &Path) -> Result<(), FsError> {
    let mut pause = Duration::from_micros(500);
    loop {
        match rfs::flock(fd, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => return Ok(()),
            Err(Errno::INTR) => {}
            Err(Errno::WOULDBLOCK) => {
                let t = now();
                if t >= deadline {
                    return Err(FsError::Busy {
                        path: path.to_owned(),
                        waited: timeout,
                    });
                }
                std::thread::sleep(pause.min(deadline - t));
                pause = (pause * 2).min(Duration::from_millis(20));
            }
            // No memory for the lock: a resource, not a reason to go unlocked.
            Err(errno) if is_resource(errno) => {
                return Err(FsError::Lock {
                    path: path.to_owned(),
                    errno,
                })
            }
            // File systems without flock (some network mounts, ENOLCK from
            // NFS without its lock manager): proceed; the pre-rename
            // re-check still catches a concurrent change.
            Err(_) => return Ok(()),
        }
    }
}

/// The last look before committing: a writer that ignores the lock may
/// have changed the file since we read it.
#[cfg_attr(as_edit_small, optimize(size))]
pub(crate) fn recheck(t: &Target, file: &OwnedFd, st: &Stat) -> Result<(), FsError> {
    let now = rfs::fstat(file).map_err(|errno| FsError::Write {
        path: t.path.clone(),
        step: WriteStep::Recheck,
        errno,
    })?;
    let named = match rfs::statat(&t.dir, t.name.as_c_str(), AtFlags::SYMLINK_NOFOLLOW) {
        Ok(n) => Some(n),
        // No memory or descriptor to look: no evidence of another writer.
        Err(errno) if is_resource(errno) => {
            return Err(FsError::Write {
                path: t.path.clone(),
                step: WriteStep::Recheck,
                errno,
            })
        }
        Err(_) => None,
    };
    let same_inode = named.is_some_and(|n| n.st_dev == st.st_dev && n.st_ino == st.st_ino);
    let unchanged = now.st_size == st.st_size
        && now.st_mtime == st.st_mtime
        && now.st_mtime_nsec == st.st_mtime_nsec
        && now.st_ctime == st.st_ctime
        && now.st_ctime_nsec == st.st_ctime_nsec;
    if !same_inode || !unchanged {
        return Err(FsError::Conflict {
            path: t.path.clone(),
            what: match named {
                None => ConflictWhat::Removed,
                Some(_) => ConflictWhat::ChangedWhileEditing,
            },
        });
    }
    Ok(())
}
