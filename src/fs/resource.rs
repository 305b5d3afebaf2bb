//! Running out of a resource: EMFILE and ENFILE (no free file descriptor,
//! the process's `RLIMIT_NOFILE` or the system's table) and ENOMEM (no
//! memory). These say nothing about the file, so they get one answer
//! wherever they strike (resolving the path or the root, opening, locking,
//! reading, the temp, naming it, the rename): `write_failed`, with a detail
//! naming the step and the cause and ending in `retry`.
//!
//! Why `write_failed` and not the step's usual token or a new one:
//! `file_not_found`, `read_failed` and `invalid_argument` are final for
//! every host (and false: the file exists and is readable), and a token a
//! deployed host does not know is treated as a final refusal (README, Host
//! protocol), the opposite of what a resource failure needs. `write_failed`
//! already promises exactly what holds here (nothing was committed, the
//! file is unchanged, another attempt may succeed), and every host retries
//! it: the Rust `Editor` and the README's Java mapping through the transfer
//! path, which runs outside the starved process. `busy` is final for the
//! `Editor` and means another edit's lock. The check is made on the errno
//! that every errno-carrying [`FsError`] holds, at the one place failures
//! are worded, so no step can answer differently; the out-of-memory exit
//! (`main.rs`, a failed allocation) prints the same token.

use std::path::Path;

use rustix::io::Errno;

use super::error::{FsError, NotFoundKind};
use super::words::{cause, shown};
use crate::protocol::{ErrorKind, Failure};

/// Is `e` a resource running out, not a fact about the file?
pub(crate) fn is_resource(e: Errno) -> bool {
    matches!(e, Errno::MFILE | Errno::NFILE | Errno::NOMEM)
}

/// The `write_failed` for a failure that is a resource running out, else `None`.
#[cfg_attr(as_edit_small, optimize(size))]
pub(super) fn failure(e: &FsError) -> Option<Failure> {
    let (what, step, path, errno) = step(e)?;
    if !is_resource(errno) {
        return None;
    }
    let why = match errno {
        Errno::MFILE => {
            "no free file descriptor: the process's RLIMIT_NOFILE, ulimit -n, is used up"
        }
        Errno::NFILE => "no free file descriptor: the system's open-file table is full",
        _ => "out of memory",
    };
    let path = path.map(shown).unwrap_or_default();
    let detail = format!(
        "{what}{step}{path}: {} ({why}); the file is unchanged, retry",
        cause(errno)
    );
    Some(Failure::new(ErrorKind::WriteFailed, detail))
}

/// A transaction out of descriptors (EMFILE) is not worth retrying as it
/// is: the same request needs as many again. Its `write_failed` names the
/// step and the cause as above, then `bound` (what the request holds and
/// what to do); `None` for any other failure.
#[cfg_attr(as_edit_small, optimize(size))]
pub(crate) fn out_of_descriptors(e: &FsError, bound: impl FnOnce() -> String) -> Option<Failure> {
    let (what, step, path, errno) = step(e).filter(|s| s.3 == Errno::MFILE)?;
    let path = path.map(shown).unwrap_or_default();
    let detail = format!("{what}{step}{path}: {}: {}", cause(errno), bound());
    Some(Failure::new(ErrorKind::WriteFailed, detail))
}

/// What was being done (in two parts), on which path, and the kernel's
/// answer, for the variants with an errno.
#[cfg_attr(as_edit_small, optimize(size))]
fn step(e: &FsError) -> Option<(&'static str, &'static str, Option<&Path>, Errno)> {
    Some(match e {
        FsError::BadRoot { root, errno } => ("opening the root ", "", Some(root), *errno),
        FsError::NotFound {
            path,
            kind: NotFoundKind::Other(errno),
        } => ("resolving ", "", Some(path), *errno),
        FsError::Open { path, errno } => ("opening ", "", Some(path), *errno),
        FsError::Stat {
            path: Some(p),
            errno,
        } => ("reading the metadata of ", "", Some(p), *errno),
        FsError::Stat { path: None, errno } => ("reading the file's metadata", "", None, *errno),
        FsError::Read {
            path: Some(p),
            errno,
        } => ("reading ", "", Some(p), *errno),
        FsError::Read { path: None, errno } => ("reading the file", "", None, *errno),
        FsError::Lock { path, errno } => ("locking ", "", Some(path), *errno),
        FsError::Write { path, step, errno } => (step.words(), " for ", Some(path), *errno),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::error::WriteStep;
    use std::path::PathBuf;

    /// Every variant that carries an errno answers a resource errno the
    /// same way, and any other errno as before (here: its usual token).
    #[test]
    fn one_token_for_every_step() {
        let p = || PathBuf::from("/w/f");
        let all = |errno| {
            vec![
                FsError::BadRoot { root: p(), errno },
                FsError::NotFound {
                    path: p(),
                    kind: NotFoundKind::Other(errno),
                },
                FsError::Open { path: p(), errno },
                FsError::Stat { path: None, errno },
                FsError::Read {
                    path: Some(p()),
                    errno,
                },
                FsError::Lock { path: p(), errno },
                FsError::Write {
                    path: p(),
                    step: WriteStep::Rename,
                    errno,
                },
            ]
        };
        for errno in [Errno::MFILE, Errno::NFILE, Errno::NOMEM] {
            for e in all(errno) {
                let f = Failure::from(e);
                assert_eq!(f.kind, ErrorKind::WriteFailed);
                assert!(f
                    .detail
                    .unwrap()
                    .ends_with("; the file is unchanged, retry"));
            }
        }
        let kinds: Vec<ErrorKind> = all(Errno::IO)
            .into_iter()
            .map(|e| Failure::from(e).kind)
            .collect();
        use ErrorKind as K;
        assert_eq!(
            kinds,
            [
                K::InvalidArgument,
                K::FileNotFound,
                K::ReadFailed,
                K::ReadFailed,
                K::ReadFailed,
                K::WriteFailed,
                K::WriteFailed
            ]
        );
        assert_eq!(
            Failure::from(FsError::Stat { path: None, errno: Errno::NOMEM }).detail.unwrap(),
            "reading the file's metadata: Cannot allocate memory (os error 12) (out of memory); the file is unchanged, retry"
        );
    }
}
