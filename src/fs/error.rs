//! The filesystem layer's one error type. Variants carry facts (paths,
//! steps, errnos, waited time); `From<FsError> for Failure` below holds all
//! of the wording, byte-identical to what hosts and tests have always read.
//! Running out of a resource is worded in `resource`, for every variant.

use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rustix::io::Errno;

use super::not_found::not_found;
pub use super::not_found::{FileKind, NotFoundKind};
use crate::engine::Refusal;
use crate::protocol::{display_path, refusal_failure, ErrorKind, Failure};

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

/// Words for an errno, as `strerror` would say them.
pub(super) fn cause(e: Errno) -> String {
    io::Error::from(e).to_string()
}

/// `1.5 s`: to the nearest tenth of a second, without f64 (12 KiB) or u128
/// (1 KiB) formatting; `now + d` was computed first, so `+ 1` cannot overflow.
fn tenths(d: Duration) -> String {
    let r = (d.subsec_millis() + 50) / 100;
    format!("{}.{} s", d.as_secs() + u64::from(r / 10), r % 10)
}

pub(super) fn shown(p: &Path) -> String {
    display_path(p)
}
fn parent(p: &Path) -> &Path {
    p.parent().unwrap_or(Path::new("/"))
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

/// The errno's words plus, where it helps a host decide, what it means here.
#[cfg_attr(as_edit_small, optimize(size))]
fn write_cause(e: Errno, step: WriteStep) -> String {
    match e {
        Errno::BUSY if step == WriteStep::Entry => format!(
            "{} (it is a mount point, such as a bind-mounted file, and cannot be moved or removed)",
            cause(e)
        ),
        Errno::BUSY => format!(
            "{} (the target is a mount point, such as a bind-mounted file, and cannot be replaced by rename)",
            cause(e)
        ),
        Errno::XDEV => format!("{} (the temp file and the target are on different file systems)", cause(e)),
        Errno::NOSPC => format!("{} (the file system is full)", cause(e)),
        Errno::DQUOT => format!("{} (the disk quota is exhausted)", cause(e)),
        Errno::FBIG => format!(
            "{} (over the file size limit: the process's RLIMIT_FSIZE, ulimit -f, or the file system's largest file)",
            cause(e)
        ),
        Errno::ACCESS => format!("{} (the directory is not writable)", cause(e)),
        Errno::PERM => format!(
            "{} (refused by the file system or a security policy, not by the directory's permissions)",
            cause(e)
        ),
        _ => cause(e),
    }
}

impl From<FsError> for Failure {
    #[cfg_attr(as_edit_small, optimize(size))]
    fn from(e: FsError) -> Failure {
        use ErrorKind as K;
        if let Some(f) = super::resource::failure(&e) {
            return f;
        }
        let (kind, detail) = match e {
            FsError::BadRoot { root, errno } => {
                (K::InvalidArgument, format!("--root {}: {}", shown(&root), cause(errno)))
            }
            FsError::NotFound { path, kind } => (K::FileNotFound, not_found(&path, kind)),
            FsError::OutsideRoot { path, root } => (
                K::OutsideRoot,
                format!("{} resolves outside the root {}", shown(&path), shown(&root)),
            ),
            FsError::ChangedBeneathRoot { path, root } => (
                K::OutsideRoot,
                format!(
                    "{} changed while it was resolved beneath the root {}",
                    shown(&path),
                    shown(&root)
                ),
            ),
            FsError::Open { path, errno } => {
                (K::ReadFailed, format!("opening {}: {}", shown(&path), cause(errno)))
            }
            FsError::Stat { path, errno } => (
                K::ReadFailed,
                match path {
                    Some(p) => format!("{}: {}", shown(&p), cause(errno)),
                    None => cause(errno),
                },
            ),
            FsError::Read { path, errno } => (
                K::ReadFailed,
                match path {
                    Some(p) => format!("reading {}: {}", shown(&p), cause(errno)),
                    None => format!("reading: {}", cause(errno)),
                },
            ),
            FsError::Lock { path, errno } => (
                K::WriteFailed,
                format!("locking {}: {}; the file is unchanged", shown(&path), cause(errno)),
            ),
            FsError::Busy { path, waited } => (
                K::Busy,
                format!(
                    "another edit holds the lock on {} (waited {}); the file is unchanged",
                    shown(&path),
                    tenths(waited)
                ),
            ),
            FsError::KeptChanging { path } => (
                K::Busy,
                format!("{} kept changing while waiting for the lock", shown(&path)),
            ),
            FsError::NoWritePermission { path } => (
                K::PermissionDenied,
                format!("no write permission on {}", shown(&path)),
            ),
            FsError::ReadOnlyFs { path } => (
                K::WriteFailed,
                format!("{} is on a read-only file system", shown(&path)),
            ),
            FsError::FileFlag { path, flag } => {
                let what = match flag {
                    InodeFlag::Immutable => "immutable (chattr +i): it cannot be written, replaced or removed until the flag is cleared",
                    InodeFlag::AppendOnly => "append-only (chattr +a): it can only be appended to, not rewritten, replaced or removed",
                };
                (K::PermissionDenied, format!("{} is {what}", shown(&path)))
            }
            FsError::DirFlag { path, flag } => {
                let what = match flag {
                    InodeFlag::Immutable => "immutable (chattr +i): no name in it can be created, replaced or removed",
                    InodeFlag::AppendOnly => "append-only (chattr +a): names in it can be added but not replaced or removed",
                };
                (
                    K::WriteFailed,
                    format!(
                        "{} cannot be replaced by rename: its directory {} is {what}; the file is unchanged",
                        shown(&path),
                        shown(parent(&path))
                    ),
                )
            }
            FsError::StickyDir { path } => (
                K::WriteFailed,
                format!(
                    "{} cannot be replaced by rename: its directory {} is sticky and neither the file nor the directory belongs to this user, so only an in-place write can change it; the file is unchanged",
                    shown(&path),
                    shown(parent(&path))
                ),
            ),
            FsError::Write { path, step, errno } => (
                K::WriteFailed,
                format!(
                    "{} for {}: {}; {}",
                    step.words(),
                    shown(&path),
                    write_cause(errno, step),
                    match step {
                        WriteStep::MakeDir => "nothing was made",
                        _ => "the file is unchanged",
                    }
                ),
            ),
            FsError::Conflict { path, what } => (
                K::Conflict,
                match what {
                    ConflictWhat::Sha256(d) => format!(
                        "{} changed since it was read: its SHA-256 is {}",
                        shown(&path),
                        crate::hex::encode(&d)
                    ),
                    w => format!(
                        "{} was {} by another writer while it was being edited; nothing was written",
                        shown(&path),
                        ["changed", "removed or renamed"][(w == ConflictWhat::Removed) as usize]
                    ),
                },
            ),
            FsError::Refused {
                refusal,
                edits,
                path,
                hints,
            } => {
                let mut f = refusal_failure(refusal, edits, &shown(&path));
                f.hints = hints.map(|h| *h);
                return f;
            }
        };
        Failure::new(kind, detail)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn detail(e: FsError) -> (ErrorKind, String) {
        let f = Failure::from(e);
        (f.kind, f.detail.unwrap_or_default())
    }

    #[test]
    fn tenths_round_as_the_millisecond_count_does() {
        for ms in [
            0, 49, 50, 949, 950, 999, 1_049, 1_050, 9_950, 86_400_949, 86_400_999,
        ] {
            let d = Duration::from_millis(ms) + Duration::from_nanos(999_999);
            let t = (d.as_millis() + 50) / 100;
            assert_eq!(tenths(d), format!("{}.{} s", t / 10, t % 10), "{ms}");
        }
    }

    #[test]
    fn wording() {
        let p = || PathBuf::from("/w/a.txt");
        assert_eq!(
            detail(FsError::Write {
                path: p(),
                step: WriteStep::Rename,
                errno: Errno::BUSY
            }),
            (
                ErrorKind::WriteFailed,
                "renaming the temp file over the target for /w/a.txt: Device or resource busy (os error 16) (the target is a mount point, such as a bind-mounted file, and cannot be replaced by rename); the file is unchanged".to_owned()
            )
        );
        assert_eq!(
            detail(FsError::Busy {
                path: p(),
                waited: Duration::from_millis(1500)
            })
            .1,
            "another edit holds the lock on /w/a.txt (waited 1.5 s); the file is unchanged"
        );
        assert_eq!(
            detail(FsError::NotFound {
                path: p(),
                kind: NotFoundKind::NotRegular(FileKind::Fifo)
            }),
            (
                ErrorKind::FileNotFound,
                "/w/a.txt is a FIFO, not a regular file".to_owned()
            )
        );
        assert_eq!(
            detail(FsError::DirFlag {
                path: p(),
                flag: InodeFlag::AppendOnly
            })
            .1,
            "/w/a.txt cannot be replaced by rename: its directory /w is append-only (chattr +a): names in it can be added but not replaced or removed; the file is unchanged"
        );
        assert_eq!(
            detail(FsError::Read {
                path: None,
                errno: Errno::IO
            })
            .1,
            "reading: Input/output error (os error 5)"
        );
    }
}
