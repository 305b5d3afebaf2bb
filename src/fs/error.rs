//! The filesystem layer's one error type. Variants carry facts (paths,
//! steps, errnos, waited time); `failure.rs` words them as the result
//! line's `Failure`, byte-identical to what hosts and tests have always
//! read. Running out of a resource is worded in `resource`, for every
//! variant.

use std::path::PathBuf;
use std::time::Duration;

use rustix::io::Errno;

pub use super::not_found::{FileKind, NotFoundKind};
use crate::engine::Refusal;

/// Why an edit of the file system failed.
#[derive(Debug)]
pub enum FsError {
    /// `--root` itself cannot be resolved or opened (`invalid_argument`).
    BadRoot {
        /// The `--root` directory as given.
        root: PathBuf,
        /// The kernel's answer.
        errno: Errno,
    },
    /// No regular file at the path (`file_not_found`).
    NotFound {
        /// The target (or the directory named), as resolved.
        path: PathBuf,
        /// What is there instead.
        kind: NotFoundKind,
    },
    /// The path resolves outside `--root`.
    OutsideRoot {
        /// The target (or the directory named), as resolved.
        path: PathBuf,
        /// The `--root` directory as given.
        root: PathBuf,
    },
    /// A directory on the way was swapped while resolving beneath the root.
    ChangedBeneathRoot {
        /// The target (or the directory named), as resolved.
        path: PathBuf,
        /// The `--root` directory as given.
        root: PathBuf,
    },
    /// Opening the file for reading failed.
    Open {
        /// The target (or the directory named), as resolved.
        path: PathBuf,
        /// The kernel's answer.
        errno: Errno,
    },
    /// `fstat` of the open file failed (`path` is `None` for the re-read
    /// under the lock, whose detail never named it).
    Stat {
        /// The target (or the directory named), as resolved.
        path: Option<PathBuf>,
        /// The kernel's answer.
        errno: Errno,
    },
    /// Reading the content failed (`path` is `None` for the `--eol
    /// preserve` pre-pass, whose detail never named it).
    Read {
        /// The target (or the directory named), as resolved.
        path: Option<PathBuf>,
        /// The kernel's answer.
        errno: Errno,
    },
    /// Taking the lock failed for want of a resource (ENOMEM; other
    /// errors mean a file system without `flock`, and the edit proceeds).
    Lock {
        /// The target, as resolved.
        path: PathBuf,
        /// The kernel's answer.
        errno: Errno,
    },
    /// Another edit held the lock for the whole `--lock-timeout`.
    Busy {
        /// The target (or the directory named), as resolved.
        path: PathBuf,
        /// How long the lock was waited for.
        waited: Duration,
    },
    /// The path kept naming new inodes while waiting for the lock.
    KeptChanging {
        /// The target (or the directory named), as resolved.
        path: PathBuf,
    },
    /// The caller may not write the file (`permission_denied`).
    NoWritePermission {
        /// The target (or the directory named), as resolved.
        path: PathBuf,
    },
    /// The file is on a read-only mount.
    ReadOnlyFs {
        /// The target (or the directory named), as resolved.
        path: PathBuf,
    },
    /// The file is immutable or append-only (`permission_denied`).
    FileFlag {
        /// The target (or the directory named), as resolved.
        path: PathBuf,
        /// Which flag.
        flag: InodeFlag,
    },
    /// The directory is immutable or append-only: the rename would fail.
    DirFlag {
        /// The target (or the directory named), as resolved.
        path: PathBuf,
        /// Which flag.
        flag: InodeFlag,
    },
    /// A sticky directory whose rename this user may not do.
    StickyDir {
        /// The target (or the directory named), as resolved.
        path: PathBuf,
    },
    /// One step of writing the new content failed.
    Write {
        /// The target (or the directory named), as resolved.
        path: PathBuf,
        /// Which step failed.
        step: WriteStep,
        /// The kernel's answer.
        errno: Errno,
    },
    /// The file is not the one the host read, or changed during the edit.
    Conflict {
        /// The target (or the directory named), as resolved.
        path: PathBuf,
        /// What differed.
        what: ConflictWhat,
    },
    /// The core refused the edit (`string_not_found`, …); `edits` is the
    /// batch size (details name the edit in a batch).
    Refused {
        /// The refusal.
        refusal: Refusal,
        /// How many edits the request has (details name the edit in a batch).
        edits: usize,
        /// The target (or the directory named), as resolved.
        path: PathBuf,
        /// `--hints`: what the refusal adds to the result line.
        hints: Option<Box<crate::protocol::HintKeys>>,
    },
}

/// `chattr` flags that forbid replacing a file or a name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InodeFlag {
    /// `chattr +i`.
    Immutable,
    /// `chattr +a`.
    AppendOnly,
}

/// The step of writing that failed (each `write_failed` detail names it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteStep {
    /// Creating the temp beside the target.
    CreateTemp,
    /// Writing the new content to it.
    WriteTemp,
    /// Flushing it (`--fsync`).
    Flush,
    /// Re-checking the target before the rename.
    Recheck,
    /// Carrying the target's metadata over (removing an ACL the temp
    /// inherited from its directory, which the target did not have).
    Metadata,
    /// Giving the unnamed temp a name.
    NameTemp,
    /// Renaming it over the target.
    Rename,
    /// Making a directory: a `mkdir`, or a missing parent of a create or
    /// a move (no temp is involved).
    MakeDir,
    /// Renaming the entry itself: a move without edits, or a delete (the
    /// entry is renamed to a hidden name first; no temp is involved).
    Entry,
}

/// What changed under the edit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConflictWhat {
    /// `--expect-sha256` differs: the file's actual digest.
    Sha256([u8; 32]),
    /// A writer ignoring the lock changed the file during the edit.
    ChangedWhileEditing,
    /// Or removed (or renamed) it: its name holds nothing now.
    Removed,
}

impl WriteStep {
    #[cfg_attr(as_edit_small, optimize(size))]
    pub(super) fn words(self) -> &'static str {
        match self {
            WriteStep::CreateTemp => "creating a temp file beside it",
            WriteStep::WriteTemp => "writing the temp file",
            WriteStep::Flush => "flushing the new content",
            WriteStep::Recheck => "re-checking the file",
            WriteStep::Metadata => "removing the ACL the temp file inherited",
            WriteStep::NameTemp => "naming the temp file",
            WriteStep::Rename => "renaming the temp file over the target",
            WriteStep::MakeDir => "making a directory",
            WriteStep::Entry => "renaming the entry (to move or remove it)",
        }
    }
}
