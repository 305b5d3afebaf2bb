//! What is at a path that is not an editable regular file
//! ([`NotFoundKind`], [`FileKind`]), and the `file_not_found` detail that
//! says so (`failure.rs` holds the rest of the wording).

use std::path::Path;

use rustix::io::Errno;

use super::words::{cause, shown};

/// What is at a path that is not an editable regular file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotFoundKind {
    /// Nothing exists at the path.
    Missing,
    /// A symlink whose target does not exist.
    DanglingSymlink,
    /// Symlinks that loop.
    SymlinkLoop,
    /// A component of the path is not a directory.
    NotADirectory,
    /// The path goes through a directory an earlier op of the
    /// transaction moves there (not followed: named by its old path).
    UnderMovedDir,
    /// The path or one of its names is too long.
    NameTooLong,
    /// Resolving the path was denied.
    SearchDenied,
    /// Something other than a regular file is there.
    NotRegular(FileKind),
    /// Another cause, in the errno's words.
    Other(Errno),
}

/// File types other than a regular file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// A directory.
    Directory,
    /// A FIFO.
    Fifo,
    /// A socket.
    Socket,
    /// A character device.
    CharDevice,
    /// A block device.
    BlockDevice,
    /// A symlink (the path itself, where one is not followed).
    Symlink,
    /// A type the kernel did not say.
    Unknown,
}

impl FileKind {
    #[cfg_attr(as_edit_small, optimize(size))]
    pub(super) fn words(self) -> &'static str {
        match self {
            FileKind::Directory => "a directory",
            FileKind::Fifo => "a FIFO",
            FileKind::Socket => "a socket",
            FileKind::CharDevice => "a character device",
            FileKind::BlockDevice => "a block device",
            FileKind::Symlink => "a symlink",
            FileKind::Unknown => "of an unknown type",
        }
    }
}

#[cfg_attr(as_edit_small, optimize(size))]
pub(super) fn not_found(path: &Path, kind: NotFoundKind) -> String {
    let p = shown(path);
    match kind {
        NotFoundKind::Missing => format!("{p} does not exist"),
        NotFoundKind::DanglingSymlink => format!("{p} is a dangling symlink"),
        NotFoundKind::SymlinkLoop => {
            format!("{p}: too many levels of symbolic links (a symlink loop)")
        }
        NotFoundKind::NotADirectory => format!("{p}: a component of the path is not a directory"),
        NotFoundKind::UnderMovedDir => format!(
            "{p}: a directory on the path is one this transaction moves there; \
             name what is under it by its old path, before the move (or in another call)"
        ),
        NotFoundKind::NameTooLong => format!("{p}: the path or one of its names is too long"),
        NotFoundKind::SearchDenied => format!("{p}: permission denied while resolving the path"),
        NotFoundKind::NotRegular(k) => format!("{p} is {}, not a regular file", k.words()),
        NotFoundKind::Other(e) => format!("{p}: {}", cause(e)),
    }
}
