//! Which file an edit means: `realpath(PATH)`, why nothing editable is
//! there, and `--root` confinement (openat2 `RESOLVE_BENEATH`, or
//! resolve-then-verify through `/proc/self/fd` on older kernels).
//!
//! The contract every caller relies on (the edit today; creates and moves
//! are built on the same steps):
//! - The target is `realpath(PATH)`: symlinks, `.` and `..` resolved
//!   physically, as the kernel walks them (`sub/..` is the directory that
//!   holds `sub`'s target, not a lexical cut). Its directory is that path's
//!   parent and its name the last component; [`resolve`] returns an `O_PATH`
//!   descriptor of exactly that directory, the name, and the path.
//! - Nothing substitutes one directory for another. [`open_dir`] opens the
//!   directory it is given or fails: a directory that is not the root or
//!   beneath it is `outside_root`, never the root instead (so the root's
//!   own name, looked up inside the root, never edits `DIR/DIR`).
//! - With `--root DIR` (canonicalized, and it must be a directory, else
//!   `invalid_argument`): a target equal to the root (`DIR`, `DIR/`, `.`
//!   inside it, a symlink to it, `DIR/sub/..`) is never edited: it is a
//!   directory, `file_not_found`, as `/` is without a root. A target whose
//!   parent is the root gets the root's own descriptor (`openat2(root, ".")`)
//!   and its name is looked up in it. A target outside (by `..`, an absolute
//!   path, a symlink) is `outside_root`; so is a path that does not resolve
//!   when its walk leaves the root before it fails (a symlink in the root to
//!   a missing name outside, or through a file outside), so no answer tells
//!   what is outside the root.
//! - A directory anywhere else is `file_not_found` too, found when the name
//!   is looked up (`lock`), before anything is opened for reading.
//! - EMFILE, ENFILE and ENOMEM are carried as the errno they are; they say
//!   nothing about the path (see `error`), so they are never classified.

use std::ffi::{CString, OsString};
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use rustix::fs::{self as rfs, Mode, OFlags, ResolveFlags};
use rustix::io::Errno;

use super::error::{FileKind, FsError, NotFoundKind};
use super::resource::is_resource;
use super::Target;

/// Resolves `path` (within `root`, if given) to its directory and name.
#[cfg_attr(as_edit_small, optimize(size))]
pub(crate) fn resolve(path: &Path, root: Option<&Path>) -> Result<Target, FsError> {
    let root = match root {
        Some(r) => Some(open_root(r)?),
        None => None,
    };
    // Longer than PATH_MAX: the kernel would refuse it (ENAMETOOLONG), but
    // realpath walks it component by component and may report ENOENT first.
    if path.as_os_str().len() >= 4096 {
        return Err(not_found(path, Errno::NAMETOOLONG));
    }
    let abs = match std::fs::canonicalize(path) {
        Ok(p) => p,
        Err(e) => {
            let errno = errno_of(&e);
            if let Some((root, _)) = &root {
                // Out of descriptors or memory, the ancestors cannot be
                // resolved either: that is no evidence of an escape.
                if !is_resource(errno) && !fails_within(path, root) {
                    return Err(outside_root(path, root));
                }
            }
            return Err(not_found(path, errno));
        }
    };
    let (parent, name) = split(path, &abs, root.as_ref().map(|r| r.0.as_path()))?;
    let dir = open_dir(parent, root.as_ref().map(|(p, fd)| (p.as_path(), fd)))?;
    Ok(Target {
        dir: dir.into(),
        name,
        path: abs,
    })
}

/// The canonical `abs` (what `path` resolved to) as its directory and
/// name: `outside_root` if it is not within the root; `/` or the root
/// itself is a directory, never a target.
#[cfg_attr(as_edit_small, optimize(size))]
pub(crate) fn split<'a>(
    path: &Path,
    abs: &'a Path,
    root: Option<&Path>,
) -> Result<(&'a Path, CString), FsError> {
    if let Some(root) = root {
        if !abs.starts_with(root) {
            return Err(outside_root(path, root));
        }
    }
    let (Some(parent), Some(name), false) = (abs.parent(), abs.file_name(), root == Some(abs))
    else {
        return Err(FsError::NotFound {
            path: abs.to_owned(),
            kind: NotFoundKind::NotRegular(FileKind::Directory),
        });
    };
    let name = CString::new(name.as_bytes()).expect("path components have no NUL");
    Ok((parent, name))
}

/// `--root`, canonicalized and opened: it must be a directory.
#[cfg_attr(as_edit_small, optimize(size))]
pub(crate) fn open_root(r: &Path) -> Result<(PathBuf, OwnedFd), FsError> {
    let bad = |errno| FsError::BadRoot {
        root: r.to_owned(),
        errno,
    };
    let root = std::fs::canonicalize(r).map_err(|e| bad(errno_of(&e)))?;
    let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let fd = rfs::open(&root, flags, Mode::empty()).map_err(bad)?;
    Ok((root, fd))
}

/// Opens the canonical directory `dir` (`O_PATH`): as it is without a root;
/// with one, only if `dir` is the root or lies beneath it, and so that no
/// component can be a symlink or escape it, even if the tree changes under
/// us (see [`open_dir_beneath`]). Never another directory in its place.
#[cfg_attr(as_edit_small, optimize(size))]
pub(crate) fn open_dir(dir: &Path, root: Option<(&Path, &OwnedFd)>) -> Result<OwnedFd, FsError> {
    match root {
        Some((root, root_fd)) => {
            let rel = dir
                .strip_prefix(root)
                .map_err(|_| outside_root(dir, root))?;
            open_dir_beneath(root, root_fd, dir, rel)
        }
        None => rfs::open(
            dir,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| other(dir, e)),
    }
}

/// A path error's errno (realpath's errors are all the kernel's).
pub(crate) fn errno_of(e: &io::Error) -> Errno {
    e.raw_os_error()
        .map(Errno::from_raw_os_error)
        .unwrap_or(Errno::INVAL)
}

fn other(path: &Path, e: Errno) -> FsError {
    FsError::NotFound {
        path: path.to_owned(),
        kind: NotFoundKind::Other(e),
    }
}

/// Classifies a failed resolution of `path`.
#[cfg_attr(as_edit_small, optimize(size))]
pub(crate) fn not_found(path: &Path, e: Errno) -> FsError {
    let kind = match e {
        Errno::NOENT => match std::fs::symlink_metadata(path) {
            Ok(m) if m.file_type().is_symlink() => NotFoundKind::DanglingSymlink,
            _ => NotFoundKind::Missing,
        },
        Errno::LOOP => NotFoundKind::SymlinkLoop,
        Errno::NOTDIR => NotFoundKind::NotADirectory,
        Errno::NAMETOOLONG => NotFoundKind::NameTooLong,
        Errno::ACCESS => NotFoundKind::SearchDenied,
        e => NotFoundKind::Other(e),
    };
    FsError::NotFound {
        path: path.to_owned(),
        kind,
    }
}

pub(crate) fn outside_root(path: &Path, root: &Path) -> FsError {
    FsError::OutsideRoot {
        path: path.to_owned(),
        root: root.to_owned(),
    }
}

/// For a path that does not resolve: does its walk stay within the root up
/// to where it fails? (So `../../etc/nope` is `outside_root`, not a probe.)
/// The kernel's walk is replayed name by name, symlinks and `..` followed
/// as it follows them, and it is `false` as soon as it leaves the root,
/// before any name outside is looked at: whether the failure lies outside
/// (a symlink to a missing or non-directory name there) is never told.
/// Names on the way to the (canonical) root are its own directories.
#[cfg_attr(as_edit_small, optimize(size))]
pub(crate) fn fails_within(path: &Path, root: &Path) -> bool {
    let Ok(cwd) = std::env::current_dir() else {
        return false;
    };
    let mut todo = Vec::new();
    push_components(&mut todo, &cwd.join(path));
    let mut cur = PathBuf::from("/");
    let mut hops = 0;
    while let Some(c) = todo.pop() {
        match c.as_bytes() {
            b"/" => cur = PathBuf::from("/"),
            b".." => {
                cur.pop();
            }
            _ => cur.push(c),
        }
        if !cur.starts_with(root) {
            if root.starts_with(&cur) {
                continue;
            }
            return false;
        }
        match std::fs::symlink_metadata(&cur) {
            Ok(m) if m.file_type().is_symlink() => {
                hops += 1;
                let Ok(to) = std::fs::read_link(&cur) else {
                    return true;
                };
                if hops > 40 {
                    return true; // ELOOP, found within
                }
                cur.pop();
                push_components(&mut todo, &to);
            }
            Ok(m) if m.is_dir() => {}
            // Missing, not a directory, not searchable: the walk fails here.
            _ => return true,
        }
    }
    true
}

/// Queues `p`'s components (`/` for the root, `..`, names; `.` dropped) so
/// that the first is popped first.
#[cfg_attr(as_edit_small, optimize(size))]
fn push_components(todo: &mut Vec<OsString>, p: &Path) {
    let start = todo.len();
    for c in p.components() {
        match c {
            Component::RootDir => todo.push("/".into()),
            Component::ParentDir => todo.push("..".into()),
            Component::Normal(n) => todo.push(n.to_owned()),
            _ => {}
        }
    }
    todo[start..].reverse();
}

/// Opens `parent` (canonical, `rel` below `root`; empty: the root itself)
/// so that no component can be a symlink or escape the root, even if the
/// tree changes under us (openat2 with RESOLVE_BENEATH, Linux ≥ 5.6); older
/// kernels get a resolve-then-verify through /proc/self/fd.
#[cfg_attr(as_edit_small, optimize(size))]
fn open_dir_beneath(
    root: &Path,
    root_fd: &OwnedFd,
    parent: &Path,
    rel: &Path,
) -> Result<OwnedFd, FsError> {
    let rel: &Path = if rel.as_os_str().is_empty() {
        Path::new(".")
    } else {
        rel
    };
    let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let resolve = ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
    match rfs::openat2(root_fd, rel, flags, Mode::empty(), resolve) {
        Ok(fd) => Ok(fd),
        Err(Errno::NOSYS) | Err(Errno::PERM) => {
            // No openat2 (old kernel or a seccomp filter): verify after the fact.
            let fd = rfs::open(parent, flags | OFlags::NOFOLLOW, Mode::empty())
                .map_err(|e| other(parent, e))?;
            let proc = format!("/proc/self/fd/{}", fd.as_raw_fd());
            match std::fs::read_link(proc) {
                Ok(p) if p.starts_with(root) => Ok(fd),
                Ok(_) => Err(outside_root(parent, root)),
                // Without /proc we keep the canonical check done before.
                Err(_) => Ok(fd),
            }
        }
        Err(Errno::XDEV) | Err(Errno::LOOP) | Err(Errno::AGAIN) => {
            Err(FsError::ChangedBeneathRoot {
                path: parent.to_owned(),
                root: root.to_owned(),
            })
        }
        Err(e) => Err(other(parent, e)),
    }
}
