//! Removing a deleted directory's tree once the transaction is committed
//! (it was renamed to a hidden name at the commit, so it disappeared at
//! once): depth first, by descriptor, never following a symlink (a link
//! inside is removed as a link) and never entering another mount (a
//! directory mounted there since the plan's scan stays, and so the hidden
//! name, which the result then names in `"left"`). A mount is told by its
//! mount id (`statx`, Linux 5.8), so a bind mount of the same file system
//! is one too (its device is the same: by the device alone, what it shows
//! from outside the tree would be emptied); before 5.8, by the device.
//! Iterative, one descriptor per level: a deep tree cannot overflow the
//! stack (an abort here would leave the hidden tree without an answer).

use std::ffi::{CStr, CString};
use std::os::fd::{AsFd, BorrowedFd};

use rustix::fs::{self as rfs, AtFlags, FileType, Mode, OFlags, StatxAttributes, StatxFlags};
use rustix::io::Errno;

/// What the tree walks need of an entry (never following a symlink).
#[derive(Clone, Copy)]
pub(in crate::txn) struct Ident {
    pub(in crate::txn) kind: FileType,
    /// The device, and the mount id where the kernel tells it.
    pub(in crate::txn) at: (u64, Option<u64>),
    /// The root of a mount (`STATX_ATTR_MOUNT_ROOT`, where told).
    pub(in crate::txn) mount_root: bool,
    /// `chattr +i` or `+a`: its name cannot go (nor, for a directory,
    /// the names in it).
    pub(in crate::txn) pinned: bool,
    pub(in crate::txn) uid: u32,
    pub(in crate::txn) mode: u32,
}

impl Ident {
    /// Whether this entry is on another mount than `top` (the tree's).
    pub(in crate::txn) fn foreign(&self, top: (u64, Option<u64>)) -> bool {
        self.mount_root
            || self.at.0 != top.0
            || matches!((self.at.1, top.1), (Some(a), Some(b)) if a != b)
    }
}

/// `name` in `dir` (`c""`: `dir` itself), by `statx` (falling back to
/// `fstatat` where it is refused: a seccomp filter, a kernel before 4.11).
pub(in crate::txn) fn ident(dir: BorrowedFd<'_>, name: &CStr) -> Result<Ident, Errno> {
    let flags = match name.is_empty() {
        true => AtFlags::EMPTY_PATH | AtFlags::SYMLINK_NOFOLLOW,
        false => AtFlags::SYMLINK_NOFOLLOW,
    };
    match rfs::statx(
        dir,
        name,
        flags,
        StatxFlags::BASIC_STATS | StatxFlags::MNT_ID,
    ) {
        Ok(x) => {
            let known = x.stx_attributes & x.stx_attributes_mask;
            Ok(Ident {
                kind: FileType::from_raw_mode(x.stx_mode.into()),
                at: (
                    rfs::makedev(x.stx_dev_major, x.stx_dev_minor),
                    (x.stx_mask & StatxFlags::MNT_ID.bits() != 0).then_some(x.stx_mnt_id),
                ),
                mount_root: known.contains(StatxAttributes::MOUNT_ROOT),
                pinned: known.intersects(StatxAttributes::IMMUTABLE | StatxAttributes::APPEND),
                uid: x.stx_uid,
                mode: x.stx_mode.into(),
            })
        }
        Err(Errno::NOSYS | Errno::PERM | Errno::ACCESS) => {
            let s = rfs::statat(dir, name, flags)?;
            Ok(Ident {
                kind: FileType::from_raw_mode(s.st_mode),
                at: (s.st_dev, None),
                mount_root: false,
                pinned: false,
                uid: s.st_uid,
                mode: s.st_mode,
            })
        }
        Err(e) => Err(e),
    }
}

/// Opens the directory `name` in `dir`, refusing another mount than `top`.
fn open(dir: BorrowedFd<'_>, name: &CStr, top: (u64, Option<u64>)) -> Result<rfs::Dir, Errno> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = rfs::openat(dir, name, flags, Mode::empty())?;
    if ident(fd.as_fd(), c"")?.foreign(top) {
        return Err(Errno::XDEV);
    }
    rfs::Dir::new(fd)
}

/// A directory being emptied: its stream, its name in its parent, and
/// whether this pass over it saw an entry and removed one.
struct Level {
    dir: rfs::Dir,
    name: CString,
    seen: bool,
    removed: bool,
}

/// Removes `name` in `dir` and everything under it.
pub(super) fn remove(dir: BorrowedFd<'_>, name: &CStr) -> Result<(), Errno> {
    #[cfg(any(debug_assertions, feature = "fault-injection"))]
    if std::env::var_os("AS_EDIT_TEST_TREE_FAIL").is_some() {
        // Test builds only: the removal fails part way (the tree empty
        // but for what could not go, here everything under it).
        return Err(Errno::IO);
    }
    let top = ident(dir, c"")?.at;
    let mut failed = Ok(());
    let mut stack = vec![Level {
        dir: open(dir, name, top)?,
        name: name.to_owned(),
        seen: false,
        removed: false,
    }];
    while let Some(l) = stack.last_mut() {
        let e = match l.dir.read() {
            Some(Ok(e)) => Some(e),
            Some(Err(e)) => {
                failed = Err(e);
                l.seen = true; // not known empty: this level gives up
                l.removed = false;
                None
            }
            None => None,
        };
        let e = e.map(|e| (e.file_name().to_owned(), e.file_type()));
        let Some((n, t)) = e else {
            // End of a pass: removing entries while reading may skip
            // some, so read again while a pass removed anything.
            if l.seen && l.removed {
                l.dir.rewind();
                (l.seen, l.removed) = (false, false);
                continue;
            }
            let l = stack.pop().expect("a level");
            let parent = stack.last().map_or(Ok(dir), |p| p.dir.fd());
            let r = parent.and_then(|p| rfs::unlinkat(p, &l.name, AtFlags::REMOVEDIR));
            match (r, stack.last_mut()) {
                (Ok(()), Some(p)) => p.removed = true,
                (Ok(()), None) => {}
                (Err(e), _) => failed = Err(e),
            }
            continue;
        };
        if n.as_bytes() == b"." || n.as_bytes() == b".." {
            continue;
        }
        l.seen = true;
        let fd = l.dir.fd()?;
        let t = match t {
            FileType::Unknown => ident(fd, &n).map(|i| i.kind),
            t => Ok(t),
        };
        let r = t.and_then(|t| match t {
            FileType::Directory => open(fd, &n, top).map(Some),
            _ => rfs::unlinkat(fd, &n, AtFlags::empty()).map(|()| None),
        });
        match r {
            Ok(Some(d)) => stack.push(Level {
                dir: d,
                name: n,
                seen: false,
                removed: false,
            }),
            Ok(None) => l.removed = true,
            Err(e) => failed = Err(e),
        }
    }
    failed
}
