//! Each [`FsError`] as the [`Failure`] a result line carries: all of the
//! layer's wording, byte-identical to what hosts and tests have always
//! read. A resource running out is worded first, in `resource`.

use std::path::Path;
use std::time::Duration;

use rustix::io::Errno;

use super::error::{ConflictWhat, FsError, InodeFlag, WriteStep};
use super::not_found::not_found;
use super::words::{cause, shown};
use crate::protocol::{refusal_failure, ErrorKind, Failure};

/// `1.5 s`: to the nearest tenth of a second, without f64 (12 KiB) or u128
/// (1 KiB) formatting; `now + d` was computed first, so `+ 1` cannot overflow.
fn tenths(d: Duration) -> String {
    let r = (d.subsec_millis() + 50) / 100;
    format!("{}.{} s", d.as_secs() + u64::from(r / 10), r % 10)
}

fn parent(p: &Path) -> &Path {
    p.parent().unwrap_or(Path::new("/"))
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
    use crate::fs::error::{FileKind, NotFoundKind};
    use std::path::PathBuf;

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
