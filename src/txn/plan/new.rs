//! Where a path that need not exist would go (its deepest existing
//! directory and the names to create under it), whether a create may go
//! there, and the refusals of such paths.

use std::ffi::{CString, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use super::walk::Walked;
use super::{Dest, End, Model};
use crate::fs::{FsError, NotFoundKind, Target};
use crate::protocol::{ErrorKind, Failure};
use crate::txn::TxnError;

impl Model<'_> {
    /// The destination a walk ended at: its base directory opened (and
    /// confined), the directories under it to make, the name.
    #[cold] // off the single-file path: LLVM optimizes it for size
    #[cfg_attr(as_edit_small, optimize(size))]
    pub(super) fn dest(&mut self, w: Walked) -> Result<Dest, TxnError> {
        let path = w.key();
        let dir = self.open_dir(&w.base)?;
        let cstr = |o: OsString| CString::new(o.into_vec()).expect("no NUL in a path");
        Ok(Dest {
            t: Target {
                dir,
                name: cstr(w.name.expect("a name")),
                path,
            },
            missing: w.rest.into_iter().map(cstr).collect(),
            replaces: None,
        })
    }

    /// Whether a create or a move may land at `dest`, which `path` named
    /// (through the symlink `link`, which dangles: written through only
    /// with `overwrite`, in a directory that exists, as `open(2)` with
    /// `O_CREAT` would; `via`: a symlink on the way to a directory to
    /// make, which dangles too). A directory to make where an earlier op moved a
    /// file away is refused: that file could commit after the directory
    /// is made (files commit in order of their last op), finding its name
    /// taken; a deleted one commits first.
    #[cold]
    #[cfg_attr(as_edit_small, optimize(size))]
    pub(super) fn landing(
        &self,
        path: &Path,
        dest: Dest,
        (link, via): (Option<PathBuf>, Option<PathBuf>),
        overwrite: bool,
    ) -> Result<Dest, TxnError> {
        match (link, via) {
            (Some(_), _) if !overwrite => return Err(exists(path)),
            (Some(l), _) if !dest.missing.is_empty() => return Err(dangling(l)),
            // No directory is made through a dangling symlink (`mkdir -p`
            // fails there too; it made the link's target's directories).
            (None, Some(l)) => return Err(dangling(l)),
            _ => {}
        }
        let mut dir = dest.t.path.parent();
        for _ in &dest.missing {
            let d = dir.expect("a parent");
            let moved = (self.files.iter()).any(|f| {
                f.orig.as_ref().is_some_and(|o| o.0.path == d) && !matches!(f.end, End::Gone)
            });
            if moved {
                return Err(refused(path, &format!("needs a directory {} where an earlier op moves a file away; send this op in another call", crate::protocol::display_path(d))));
            }
            dir = d.parent();
        }
        Ok(dest)
    }

    /// Records the directories `dest` makes: a later path finds them.
    pub(super) fn make_dirs(&mut self, dest: &Dest) {
        let mut dir = dest.t.path.parent();
        for _ in &dest.missing {
            let d = dir.expect("a parent");
            self.made.push(d.to_owned());
            dir = d.parent();
        }
    }
}

/// Whether `path` names a directory by its spelling: it ends in `/`,
/// `/.` or `/..`, or is `.`, `..` or `/` (Path's components drop a
/// trailing slash and dot, so this looks at the bytes).
pub(super) fn names_a_dir(path: &Path) -> bool {
    let last = path.as_os_str().as_bytes().rsplit(|&b| b == b'/').next();
    matches!(last, Some(b"" | b"." | b".."))
}

#[cfg_attr(as_edit_small, optimize(size))]
pub(super) fn exists(path: &Path) -> TxnError {
    let p = crate::protocol::display_path(path);
    let said = format!("{p} exists; give \"overwrite\": true to replace it");
    TxnError::fail(0, Failure::new(ErrorKind::FileExists, said))
}

/// `file_not_found`: the symlink `link` (absolute) leads nowhere, in the
/// single-file edit's words.
#[cold]
pub(super) fn dangling(link: PathBuf) -> TxnError {
    TxnError::of(
        0,
        FsError::NotFound {
            path: link,
            kind: NotFoundKind::DanglingSymlink,
        },
    )
}

pub(super) const DIR: &str = "names a directory (it ends in /, /. or /..)";

/// `file_not_found`: `path` cannot be the op's file, for the reason `said`.
#[cold]
#[cfg_attr(as_edit_small, optimize(size))]
pub(super) fn refused(path: &Path, said: &str) -> TxnError {
    let p = crate::protocol::display_path(path);
    TxnError::fail(
        0,
        Failure::new(ErrorKind::FileNotFound, format!("{p} {said}")),
    )
}
