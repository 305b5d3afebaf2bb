//! Where a read-side op looks, confined by `--root` as edits are
//! (`fs::resolve`: realpath, then `openat2` `RESOLVE_BENEATH` from the
//! root's descriptor). Unlike an edit's target, the root itself may be
//! named: it can be listed and stat'ed.
//!
//! - [`entry`] (`stat`): the directory holding the path's last name,
//!   resolved and confined, and that name, not followed (an `lstat`);
//!   `None` when that directory does not exist (the path is missing).
//! - [`dir`] (`list`): the directory the path names, symlinks followed.
//!
//! A path that does not resolve is `outside_root` when its walk leaves the
//! root before it fails (`fs::resolve::fails_within`), so no answer tells
//! what is outside.

use std::ffi::CString;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path};

use rustix::fs::{self as rfs, AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

use super::Root;
use crate::fs::resolve::{errno_of, fails_within, not_found, open_dir, outside_root};
use crate::fs::{FsError, NotFoundKind};
use crate::protocol::{display_path, ErrorKind, Failure};

/// The directory holding `path`'s last name and that name, for an
/// `lstat`; `None` when there is no such directory.
pub(super) fn entry(
    path: &Path,
    root: Option<&Root>,
) -> Result<Option<(OwnedFd, CString)>, Failure> {
    // `a/b` names `b` in `a`; `/`, `.`, `..` and `a/..` name a directory
    // reached only by resolving it whole (none of them is a symlink).
    let (parent, name) = match path.components().next_back() {
        Some(Component::Normal(n)) => {
            let p = path.parent().filter(|p| !p.as_os_str().is_empty());
            (p.unwrap_or(Path::new(".")).to_owned(), n.to_owned())
        }
        _ => match std::fs::canonicalize(path) {
            Ok(abs) => match (abs.parent(), abs.file_name()) {
                (Some(p), Some(n)) => (p.to_owned(), n.to_owned()),
                _ => (abs.clone(), ".".into()), // `/` itself
            },
            Err(e) => return unresolved(path, errno_of(&e), root).map(|()| None),
        },
    };
    let abs = match std::fs::canonicalize(&parent) {
        Ok(a) => a,
        Err(e) => return unresolved(path, errno_of(&e), root).map(|()| None),
    };
    let name = CString::new(name.as_bytes()).expect("path components have no NUL");
    if let Some((r, fd)) = root {
        if abs.join(Path::new(std::ffi::OsStr::from_bytes(name.as_bytes()))) == *r {
            return Ok(Some((reopen(fd, r)?, c".".to_owned())));
        }
        if name.as_bytes() == b"." && abs == *r {
            return Ok(Some((reopen(fd, r)?, name)));
        }
    }
    match open_within(path, &abs, root) {
        Ok(fd) => Ok(Some((fd, name))),
        Err(FsError::NotFound {
            kind: NotFoundKind::Other(Errno::NOENT | Errno::NOTDIR),
            ..
        }) => Ok(None),
        Err(e) => Err(as_asked(e, path)),
    }
}

/// The directory `path` names (symlinks followed), as an `O_PATH`
/// descriptor; `file_not_found` if it is missing or not a directory.
pub(super) fn dir(path: &Path, root: Option<&Root>) -> Result<OwnedFd, Failure> {
    let abs = match std::fs::canonicalize(path) {
        Ok(a) => a,
        Err(e) => {
            let errno = errno_of(&e);
            unresolved(path, errno, root)?;
            return Err(not_found(path, errno).into());
        }
    };
    match open_within(path, &abs, root) {
        Ok(fd) => Ok(fd),
        Err(FsError::NotFound {
            kind: NotFoundKind::Other(Errno::NOTDIR),
            ..
        }) => {
            // Canonical, so not a symlink: what is there instead.
            let what = match rfs::lstat(&abs).map(|s| FileType::from_raw_mode(s.st_mode)) {
                Ok(t) => type_words(t),
                Err(_) => "not a directory",
            };
            Err(Failure::new(
                ErrorKind::FileNotFound,
                format!("{} is {what}, not a directory", display_path(path)),
            ))
        }
        Err(e) => Err(as_asked(e, path)),
    }
}

/// A refusal of the resolved directory, naming the path as asked: the
/// resolved one may lie outside the root, and no answer tells what is
/// there (a symlink's target directory, say).
fn as_asked(e: FsError, path: &Path) -> Failure {
    match e {
        FsError::OutsideRoot { root, .. } => outside_root(path, &root).into(),
        FsError::ChangedBeneathRoot { root, .. } => FsError::ChangedBeneathRoot {
            path: path.to_owned(),
            root,
        }
        .into(),
        e => e.into(),
    }
}

/// A path that did not resolve (`errno`): `outside_root` if its walk left
/// the root first; `Ok` if it is simply missing (ENOENT, ENOTDIR, ELOOP);
/// else the resolution's refusal.
fn unresolved(path: &Path, errno: Errno, root: Option<&Root>) -> Result<(), Failure> {
    if let Some((r, _)) = root {
        if !crate::fs::resource::is_resource(errno) && !fails_within(path, r) {
            return Err(outside_root(path, r).into());
        }
    }
    match errno {
        Errno::NOENT | Errno::NOTDIR | Errno::LOOP => Ok(()),
        e => Err(not_found(path, e).into()),
    }
}

/// Opens the canonical directory `abs` (`O_PATH`), beneath the root if
/// there is one (the root itself included). Outside it, the refusal names
/// `path` as given, as every op's does (not where it leads).
fn open_within(path: &Path, abs: &Path, root: Option<&Root>) -> Result<OwnedFd, FsError> {
    match root {
        Some((r, _)) if !abs.starts_with(r) => Err(outside_root(path, r)),
        Some((r, fd)) if abs == r => reopen(fd, r).map_err(|_| not_dir(abs)),
        Some((r, fd)) => open_dir(abs, Some((r, fd))),
        None => open_dir(abs, None),
    }
}

fn not_dir(p: &Path) -> FsError {
    FsError::NotFound {
        path: p.to_owned(),
        kind: NotFoundKind::Other(Errno::NOTDIR),
    }
}

/// A new descriptor of the root (the caller keeps the original).
fn reopen(fd: &OwnedFd, r: &Path) -> Result<OwnedFd, Failure> {
    let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
    rfs::openat(fd, c".", flags, Mode::empty())
        .map_err(|e| crate::fs::resolve::not_found(r, e).into())
}

/// The words for a type in a detail.
pub(super) fn type_words(t: FileType) -> &'static str {
    match t {
        FileType::RegularFile => "a regular file",
        FileType::Directory => "a directory",
        FileType::Symlink => "a symlink",
        FileType::Fifo => "a FIFO",
        FileType::Socket => "a socket",
        FileType::CharacterDevice => "a character device",
        FileType::BlockDevice => "a block device",
        FileType::Unknown => "of an unknown type",
    }
}

/// The answer's type name: `file`, `dir`, `symlink` or `other`.
pub(super) fn type_name(t: FileType) -> &'static str {
    match t {
        FileType::RegularFile => "file",
        FileType::Directory => "dir",
        FileType::Symlink => "symlink",
        _ => "other",
    }
}

/// `lstat` of `name` in `dir`.
pub(super) fn lstat(dir: &OwnedFd, name: &CString) -> Result<rfs::Stat, Errno> {
    rfs::statat(dir, name.as_c_str(), AtFlags::SYMLINK_NOFOLLOW)
}

/// Nanoseconds since the epoch of a stat's mtime.
// The field types differ between targets: the casts are not all no-ops.
#[allow(clippy::unnecessary_cast)]
pub(super) fn mtime_ns(st: &rfs::Stat) -> i64 {
    (st.st_mtime as i64)
        .saturating_mul(1_000_000_000)
        .saturating_add(st.st_mtime_nsec as i64)
}
