//! Metadata, both ways: what the target's metadata lets an edit do (write
//! permission with effective ids, immutable/append-only inode flags, a
//! sticky or flagged directory), decided before any temp exists, and what
//! the new file carries over (owner, group, mode, xattrs and ACLs).

use std::ffi::CString;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

use rustix::fs::{self as rfs, AtFlags, Mode, OFlags, Stat, XattrFlags};
use rustix::io::Errno;
use rustix::thread::CapabilitySet;

use super::error::{FsError, InodeFlag, WriteStep};
use super::Target;

/// Permission parity with the host's transfer path: a file the caller may
/// not write is refused (`permission_denied`), not replaced by rename.
///
/// EPERM is both the kernel's answer for an immutable file and what seccomp
/// profiles older than `faccessat2` answer for it, so EPERM alone never
/// decides: the inode flags are read first, and an EPERM or ENOSYS from the
/// access syscalls falls back to the older syscall, then to the mode bits.
#[cfg_attr(as_edit_small, optimize(size))]
pub(crate) fn check_writable(t: &Target, file: &OwnedFd, st: &Stat) -> Result<(), FsError> {
    if let Some(flag) = inode_flag(file) {
        return Err(FsError::FileFlag {
            path: t.path.clone(),
            flag,
        });
    }
    let verdict = match rfs::accessat(
        &t.dir,
        t.name.as_c_str(),
        rfs::Access::WRITE_OK,
        AtFlags::EACCESS,
    ) {
        Err(Errno::PERM) | Err(Errno::NOSYS) => access_fallback(t, file, st),
        r => r,
    };
    match verdict {
        Err(Errno::ACCESS) => Err(FsError::NoWritePermission {
            path: t.path.clone(),
        }),
        Err(Errno::ROFS) => Err(FsError::ReadOnlyFs {
            path: t.path.clone(),
        }),
        // Anything else is left to the write itself, which names its cause.
        _ => Ok(()),
    }
}

/// A file a transaction deletes or moves: `chattr +i` and `+a` let no
/// name of it go (the rename fails EPERM inside the commit), so they are
/// refused before, as an edit of it is (`permission_denied`).
#[cfg_attr(as_edit_small, optimize(size))]
pub(crate) fn check_removable(t: &Target, file: &OwnedFd) -> Result<(), FsError> {
    match inode_flag(file) {
        Some(flag) => Err(FsError::FileFlag {
            path: t.path.clone(),
            flag,
        }),
        None => Ok(()),
    }
}

/// `chattr +i` / `+a`: for a file, no writer can replace or truncate it, the
/// host's transfer path included, so the refusal is final; for a directory,
/// no name in it can be replaced. Read with `FS_IOC_GETFLAGS`; where that
/// ioctl cannot answer (an `O_PATH` descriptor, a directory the caller may
/// not read, a seccomp filter), with `statx`'s attribute bits, which any
/// descriptor serves (`AT_EMPTY_PATH`). Neither answering (no inode flags on
/// this file system, both filtered, a kernel before 4.11) means "none known".
#[cfg_attr(as_edit_small, optimize(size))]
fn inode_flag(fd: &OwnedFd) -> Option<InodeFlag> {
    let (immutable, append) = match rfs::ioctl_getflags(fd) {
        Ok(f) => (
            f.contains(rfs::IFlags::IMMUTABLE),
            f.contains(rfs::IFlags::APPEND),
        ),
        Err(_) => {
            let x = rfs::statx(fd, c"", AtFlags::EMPTY_PATH, rfs::StatxFlags::empty()).ok()?;
            // Only the bits this file system reports are known.
            let known = x.stx_attributes & x.stx_attributes_mask;
            (
                known.contains(rfs::StatxAttributes::IMMUTABLE),
                known.contains(rfs::StatxAttributes::APPEND),
            )
        }
    };
    if immutable {
        Some(InodeFlag::Immutable)
    } else if append {
        Some(InodeFlag::AppendOnly)
    } else {
        None
    }
}

/// Is `cap` in the effective set? Where capget is refused, assume root has
/// it and others do not.
fn has_capability(cap: CapabilitySet) -> bool {
    match rustix::thread::capabilities(None) {
        Ok(c) => c.effective.contains(cap),
        Err(_) => rustix::process::geteuid().is_root(),
    }
}

/// The access check without `faccessat2`: the old `faccessat` (real ids,
/// which equal the effective ones unless as-edit runs setuid/setgid), else
/// the mode bits.
#[cfg_attr(as_edit_small, optimize(size))]
fn access_fallback(t: &Target, file: &OwnedFd, st: &Stat) -> Result<(), Errno> {
    use rustix::process::{getegid, geteuid, getgid, getuid};
    if getuid() == geteuid() && getgid() == getegid() {
        match rfs::accessat(
            &t.dir,
            t.name.as_c_str(),
            rfs::Access::WRITE_OK,
            AtFlags::empty(),
        ) {
            Err(Errno::PERM) | Err(Errno::NOSYS) => {}
            r => return r,
        }
    }
    mode_allows_write(file, st)
}

/// The last resort when no access syscall answers: a read-only mount is
/// EROFS; CAP_DAC_OVERRIDE in effect (root's, unless dropped) may write; else the owner,
/// group (effective or supplementary) or other write bit decides. POSIX ACL
/// entries are not evaluated: with an ACL the group bits are its mask.
#[cfg_attr(as_edit_small, optimize(size))]
fn mode_allows_write(file: &OwnedFd, st: &Stat) -> Result<(), Errno> {
    use rustix::process::{getegid, geteuid, getgroups};
    if let Ok(v) = rfs::fstatvfs(file) {
        if v.f_flag.contains(rfs::StatVfsMountFlags::RDONLY) {
            return Err(Errno::ROFS);
        }
    }
    if has_capability(CapabilitySet::DAC_OVERRIDE) {
        return Ok(());
    }
    let euid = geteuid();
    let gid = rfs::Gid::from_raw(st.st_gid);
    let bit = if st.st_uid == euid.as_raw() {
        0o200
    } else if getegid() == gid || getgroups().is_ok_and(|g| g.contains(&gid)) {
        0o020
    } else {
        0o002
    };
    if st.st_mode & bit != 0 {
        Ok(())
    } else {
        Err(Errno::ACCESS)
    }
}

/// What [`check_rename`] reads of a directory: its metadata (the sticky
/// bit, its owner) and its inode flags, read once for all the files of a
/// transaction that are in it.
pub(crate) struct DirFacts {
    st: Option<Stat>,
    flag: Option<InodeFlag>,
}

/// `dir` is the directory opened for reading, when it could be; else its
/// flags are read through the `O_PATH` descriptor (by `statx`).
#[cfg_attr(as_edit_small, optimize(size))]
pub(crate) fn dir_facts(t: &Target, dir: Option<&OwnedFd>) -> DirFacts {
    DirFacts {
        st: rfs::fstat(&t.dir).ok(),
        flag: inode_flag(dir.unwrap_or(&t.dir)),
    }
}

/// Will the directory let the temp be renamed over the target? Decided
/// before any temp exists, so the real cause is named. A sticky directory
/// (`/tmp`, mode 1777) lets only the owner of the file or of the directory
/// (or CAP_FOWNER) rename over a name; an append-only or immutable one
/// lets no name be replaced. `write_failed` either way: the host's
/// transfer path writes the file in place and may succeed.
#[cfg_attr(as_edit_small, optimize(size))]
pub(crate) fn check_rename(t: &Target, st: &Stat, dir: &DirFacts) -> Result<(), FsError> {
    if sticky_refuses(dir.st.as_ref(), st, true) {
        return Err(FsError::StickyDir {
            path: t.path.clone(),
        });
    }
    match dir.flag {
        Some(flag) => Err(FsError::DirFlag {
            path: t.path.clone(),
            flag,
        }),
        None => Ok(()),
    }
}

/// `ask_caps`: before the rename, CAP_FOWNER (which overrides the sticky
/// bit) is read; after a refused rename it evidently did not apply.
#[cfg_attr(as_edit_small, optimize(size))]
fn sticky_refuses(dir: Option<&Stat>, st: &Stat, ask_caps: bool) -> bool {
    let Some(dir) = dir else {
        return false;
    };
    let euid = euid();
    if dir.st_mode & 0o1000 == 0 || st.st_uid == euid || dir.st_uid == euid {
        return false;
    }
    !(ask_caps && has_capability(CapabilitySet::FOWNER))
}

/// A rename refused with EPERM: name the cause when it can be seen (an
/// immutable or append-only target or directory, a sticky directory), else
/// the errno's words. (Normally these are caught before the temp exists;
/// this covers a flag set meanwhile, or root without CAP_FOWNER.)
#[cfg_attr(as_edit_small, optimize(size))]
pub(super) fn rename_refused(t: &Target, file: &OwnedFd, st: &Stat, e: Errno) -> FsError {
    let path = t.path.clone();
    if e == Errno::PERM {
        if let Some(flag) = inode_flag(file) {
            return FsError::FileFlag { path, flag };
        }
        if let Some(flag) = dir_flag(t) {
            return FsError::DirFlag { path, flag };
        }
        if sticky_refuses(rfs::fstat(&t.dir).ok().as_ref(), st, false) {
            return FsError::StickyDir { path };
        }
    }
    FsError::Write {
        path,
        step: WriteStep::Rename,
        errno: e,
    }
}

/// The inode flag of `t`'s directory, read as [`dir_facts`] reads it.
pub(crate) fn dir_flag(t: &Target) -> Option<InodeFlag> {
    inode_flag(open_dir_readable(t).as_ref().unwrap_or(&t.dir))
}

/// Our effective uid, asked once per edit or transaction (a transaction
/// asked twice per file); (uid_t)-1, no one's uid: not asked yet.
static EUID: AtomicU32 = AtomicU32::new(u32::MAX);

/// Each edit and transaction asks the euid afresh: a library caller may change
/// it between calls (`seteuid`), and a kept one gave root's edits
/// nobody's owner copy.
pub(crate) fn forget_euid() {
    EUID.store(u32::MAX, Relaxed);
}

fn euid() -> u32 {
    let mut e = EUID.load(Relaxed);
    if e == u32::MAX {
        e = rustix::process::geteuid().as_raw();
        EUID.store(e, Relaxed);
    }
    e
}

/// The target's directory opened for reading (for its inode flags and the
/// `--fsync` flush), or `None` when the caller may not read it. The `O_PATH`
/// descriptor we hold cannot serve: `fsync` and `ioctl` refuse it (EBADF).
#[cfg_attr(as_edit_small, optimize(size))]
pub(crate) fn open_dir_readable(t: &Target) -> Option<OwnedFd> {
    rfs::openat(
        &t.dir,
        c".",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .ok()
}

/// The permission bits and extended attributes while the temp is still
/// the caller's (a root without CAP_FOWNER may not change them once it is
/// another's: the old order left every file 0600), then owner and group
/// (when permitted), then the full mode (chown clears setuid). Setuid and
/// setgid are kept only with the owner and group they run as (as `cp -p`):
/// a setuid program of uid 1000 must not become root's because the chown
/// was refused. Exactly the target's ACL state: the one error is an
/// inherited ACL that cannot be removed.
///
/// The group is set whatever the caller's egid: the temp does not start
/// with the caller's group in a setgid directory (it inherits the
/// directory's), and a caller outside that group would then see `fchmod`
/// drop the setgid bit. Setting a group the caller belongs to
/// is permitted; any other fails, as without the edit it would.
#[cfg_attr(as_edit_small, optimize(size))]
pub(crate) fn copy_metadata(from: &OwnedFd, to: &OwnedFd, st: &Stat) -> Result<(), Errno> {
    let _ = rfs::fchmod(to, Mode::from_raw_mode(st.st_mode & 0o1777));
    if !copy_xattrs(from, to) {
        drop_inherited_acl(to)?;
    }
    let uid = (euid() == 0).then(|| rfs::Uid::from_raw(st.st_uid));
    let gid = Some(rfs::Gid::from_raw(st.st_gid));
    // One call sets both or neither: without CAP_CHOWN the group alone may
    // still be permitted (a setgid directory gave the temp another).
    if rfs::fchown(to, uid, gid).is_err() && uid.is_some() {
        let _ = rfs::fchown(to, None, gid);
    }
    let mut mode = st.st_mode & 0o7777;
    match rfs::fstat(to) {
        Ok(now) => {
            if now.st_uid != st.st_uid {
                mode &= !0o4000;
            }
            if now.st_gid != st.st_gid {
                mode &= !0o2000;
            }
        }
        Err(_) => mode &= 0o1777,
    }
    let _ = rfs::fchmod(to, Mode::from_raw_mode(mode));
    Ok(())
}

/// A directory's default ACL becomes the access ACL of every file created
/// in it, the temp included. A target without an access ACL must not gain
/// one (it would grant access the file never gave once its group bits
/// widen), so the temp's is removed; the mode set above is kept. Files have
/// no default ACL (only directories do), so there is none to remove.
#[cfg_attr(as_edit_small, optimize(size))]
fn drop_inherited_acl(to: &OwnedFd) -> Result<(), Errno> {
    let acl = c"system.posix_acl_access";
    // NODATA, OPNOTSUPP: none inherited, or no ACLs on this file system.
    let none = |e| matches!(e, Errno::NODATA | Errno::OPNOTSUPP);
    // Asked first: a read, where a removal of nothing would still start a
    // journal transaction (ext4). Unanswered (a filter): removed anyway.
    match rfs::fgetxattr(to, acl, &mut [0u8; 0][..]) {
        Err(e) if none(e) => Ok(()),
        _ => match rfs::fremovexattr(to, acl) {
            Err(e) if !none(e) => Err(e),
            _ => Ok(()),
        },
    }
}

/// Copies the kept extended attributes; returns whether the access ACL was
/// among those copied.
#[cfg_attr(as_edit_small, optimize(size))]
fn copy_xattrs(from: &OwnedFd, to: &OwnedFd) -> bool {
    // On the stack: a heap one was a 16 KiB mmap and munmap per file.
    let mut small = [0u8; 4096];
    let mut big;
    let mut names = &mut small[..];
    let n = match rfs::flistxattr(from, &mut *names) {
        Ok(n) => n,
        Err(Errno::RANGE) => {
            big = vec![0u8; 65536];
            names = &mut big[..];
            match rfs::flistxattr(from, &mut *names) {
                Ok(n) => n,
                Err(_) => return false,
            }
        }
        Err(_) => return false,
    };
    let mut acl = false;
    if n == 0 {
        return acl; // the common case: no 64 KiB value buffer (an mmap)
    }
    let mut value = vec![0u8; 65536];
    for name in names[..n].split(|b| *b == 0).filter(|s| !s.is_empty()) {
        // File capabilities are privileges granted to exact content: the
        // kernel drops them on any write, and an edit is new content.
        if name == b"security.capability" {
            continue;
        }
        let is_acl = name == b"system.posix_acl_access";
        let keep = name.starts_with(b"user.")
            || name.starts_with(b"security.")
            || is_acl
            || name.starts_with(b"trusted.");
        if !keep {
            continue;
        }
        let Ok(cname) = CString::new(name) else {
            continue;
        };
        if let Ok(len) = rfs::fgetxattr(from, cname.as_c_str(), &mut value[..]) {
            let set = rfs::fsetxattr(to, cname.as_c_str(), &value[..len], XattrFlags::empty());
            acl |= is_acl && set.is_ok();
        }
    }
    acl
}
