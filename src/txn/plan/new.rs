//! Where a path that need not exist would go: its deepest existing
//! directory and the names to create under it, and the refusals of such
//! paths.

use std::ffi::{CString, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Component, Path, PathBuf};

use super::{Dest, Model};
use crate::fs::resolve::outside_root;
use crate::fs::{FsError, NotFoundKind, Target};
use crate::protocol::{ErrorKind, Failure};
use crate::txn::TxnError;

impl Model<'_> {
    /// A path that need not exist: the longest prefix that resolves, the
    /// plain names after it (no `..` may follow a missing directory).
    #[cold] // off the single-file path: LLVM optimizes it for size
    #[cfg_attr(as_edit_small, optimize(size))]
    pub(super) fn locate_new(&mut self, path: &Path) -> Result<(Dest, PathBuf), TxnError> {
        let err = |e| TxnError::of(0, e);
        let missing = || {
            err(FsError::NotFound {
                path: path.to_owned(),
                kind: NotFoundKind::Missing,
            })
        };
        let comps: Vec<Component> = path.components().collect();
        // The last component is the name (`.`, `..` or `/` name a directory:
        // it was file_exists, "give overwrite", even with it, or for an edit).
        let Some((Component::Normal(name), parents)) = comps.split_last() else {
            return Err(refused(path, DIR));
        };
        let name = name.to_os_string();
        let mut rest: Vec<OsString> = Vec::new();
        let mut n = parents.len();
        let base = loop {
            if n == 0 {
                break std::env::current_dir().map_err(|_| missing())?;
            }
            let prefix: PathBuf = parents[..n].iter().collect();
            if let Ok(p) = std::fs::canonicalize(&prefix) {
                break p;
            }
            match parents[n - 1] {
                Component::Normal(c) => rest.push(c.to_owned()),
                _ => return Err(missing()),
            }
            n -= 1;
        };
        rest.reverse();
        if let Some((root, _)) = &self.root {
            if !base.starts_with(root) {
                return Err(err(outside_root(path, root)));
            }
        }
        // `new/` and `new/.` name a directory (open(2): EISDIR); Path's
        // components drop the slash and the dot.
        let last = path.as_os_str().as_bytes().rsplit(|&b| b == b'/').next();
        if matches!(last, Some(b"" | b".")) {
            return Err(refused(path, DIR));
        }
        let dir = self.open_dir(&base)?;
        let mut abs = base;
        for c in &rest {
            abs.push(c);
        }
        abs.push(&name);
        let cstr = |o: OsString| CString::new(o.into_vec()).expect("no NUL in a path");
        let dest = Dest {
            t: Target {
                dir,
                name: cstr(name),
                path: abs.clone(),
            },
            missing: rest.into_iter().map(cstr).collect(),
            replaces: None,
        };
        Ok((dest, abs))
    }
}

#[cfg_attr(as_edit_small, optimize(size))]
pub(super) fn exists(path: &Path) -> TxnError {
    let p = crate::protocol::display_path(path);
    let said = format!("{p} exists; give \"overwrite\": true to replace it");
    TxnError::fail(0, Failure::new(ErrorKind::FileExists, said))
}

const DIR: &str = "names a directory (it ends in /, /. or /..)";

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
