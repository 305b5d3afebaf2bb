//! Which file an edit means: `realpath(PATH)`, why nothing editable is
//! there, and `--root` confinement (openat2 `RESOLVE_BENEATH`, or
//! resolve-then-verify through `/proc/self/fd` on older kernels).

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use rustix::fs::{self as rfs, Mode, OFlags, ResolveFlags};
use rustix::io::Errno;

use super::error::{FileKind, FsError, NotFoundKind};
use super::Target;

/// Resolves `path` (within `root`, if given) to its directory and name.
pub(crate) fn resolve(path: &Path, root: Option<&Path>) -> Result<Target, FsError> {
    let root = match root {
        Some(r) => Some(std::fs::canonicalize(r).map_err(|e| FsError::BadRoot {
            root: r.to_owned(),
            errno: errno_of(&e),
        })?),
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
            if let Some(root) = &root {
                if !nearest_existing_ancestor_within(path, root) {
                    return Err(outside_root(path, root));
                }
            }
            return Err(not_found(path, errno_of(&e)));
        }
    };
    if let Some(root) = &root {
        if !abs.starts_with(root) {
            return Err(outside_root(path, root));
        }
    }
    let parent = abs.parent().unwrap_or(Path::new("/"));
    let name = match abs.file_name() {
        Some(n) => CString::new(n.as_bytes()).expect("path components have no NUL"),
        None => {
            return Err(FsError::NotFound {
                path: abs,
                kind: NotFoundKind::NotRegular(FileKind::Directory),
            })
        }
    };
    let dir = match &root {
        Some(root) => open_dir_beneath(root, parent)?,
        None => rfs::open(
            parent,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| other(parent, e))?,
    };
    Ok(Target {
        dir,
        name,
        path: abs,
    })
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
fn not_found(path: &Path, e: Errno) -> FsError {
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

/// For a path that does not resolve: does its nearest existing ancestor lie
/// within the root? (So `../../etc/nope` is `outside_root`, not a probe.)
fn nearest_existing_ancestor_within(path: &Path, root: &Path) -> bool {
    let abs = match std::env::current_dir() {
        Ok(cwd) => cwd.join(path),
        Err(_) => return false,
    };
    // Lexical `..` could climb out; normalize before walking up.
    let mut lexical = PathBuf::new();
    for c in abs.components() {
        match c {
            Component::ParentDir => {
                lexical.pop();
            }
            Component::CurDir => {}
            other => lexical.push(other),
        }
    }
    let mut cur = Some(lexical.as_path());
    while let Some(p) = cur {
        if let Ok(real) = std::fs::canonicalize(p) {
            return real.starts_with(root);
        }
        cur = p.parent();
    }
    false
}

/// Opens `parent` (canonical, inside `root`) so that no component can be a
/// symlink or escape the root, even if the tree changes under us
/// (openat2 with RESOLVE_BENEATH, Linux ≥ 5.6); older kernels get a
/// resolve-then-verify through /proc/self/fd.
pub(crate) fn open_dir_beneath(root: &Path, parent: &Path) -> Result<OwnedFd, FsError> {
    let root_fd = rfs::open(
        root,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|errno| FsError::BadRoot {
        root: root.to_owned(),
        errno,
    })?;
    let rel = parent.strip_prefix(root).unwrap_or(Path::new(""));
    let rel: &Path = if rel.as_os_str().is_empty() {
        Path::new(".")
    } else {
        rel
    };
    let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let resolve = ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
    match rfs::openat2(&root_fd, rel, flags, Mode::empty(), resolve) {
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
