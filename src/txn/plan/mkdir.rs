//! A `mkdir` in the model: the directory it makes (and, with `parents`,
//! those above it), or, as `mkdir -p`, an existing one. With `parents` a
//! `..` is taken as mkdir(1) takes it, name by name: `a/b/../c` makes
//! `a`, `a/b` and `a/c` (each missing prefix a `..` follows is made
//! first, a directory of the model not counted in `"files"`), and a path
//! ending on a directory (`a/b/.`, `a/b/..`) makes the one it names.

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::fs::{self as rfs, FileType};

use super::dir::Tree;
use super::new::refused;
use super::walk::What;
use super::{End, Model};
use crate::fs::{FsError, NotFoundKind};
use crate::protocol::{display_path, ErrorKind, Failure};
use crate::txn::TxnError;

/// `file_exists`: a `mkdir` of an existing `path`.
fn taken(path: &Path) -> TxnError {
    let p = display_path(path);
    let said = format!("{p} exists (\"parents\": true accepts an existing directory)");
    TxnError::fail(0, Failure::new(ErrorKind::FileExists, said))
}

impl Model<'_> {
    /// Op `i`, a `mkdir` (`parents`: `-p`).
    pub(super) fn mkdir(&mut self, i: usize, parents: bool) -> Result<(usize, PathBuf), TxnError> {
        let txn = self.txn;
        let path = &txn.ops[i].path;
        if parents {
            self.before_dotdot(i, path)?;
        }
        self.mkdir_at(i, path, parents, false)
    }

    /// `mkdir -p a/b/../c` makes `a/b` too, then goes to its `..` (`a`),
    /// as mkdir(1) does, name by name: each missing prefix of `path` that
    /// a `..` follows is made first (a directory of the model, `quiet`:
    /// not counted), so that the walk then finds it made.
    fn before_dotdot(&mut self, i: usize, path: &Path) -> Result<(), TxnError> {
        let bytes = path.as_os_str().as_bytes();
        let mut at = 0;
        for c in bytes.split(|&b| b == b'/') {
            let start = at;
            at += c.len() + 1;
            if c != b".." {
                continue;
            }
            let mut prefix = &bytes[..start];
            while let Some(p) = prefix.strip_suffix(b"/") {
                prefix = p;
            }
            let last = prefix.rsplit(|&b| b == b'/').next().unwrap_or_default();
            if matches!(last, b"" | b"." | b"..") {
                continue;
            }
            let p = Path::new(std::ffi::OsStr::from_bytes(prefix));
            if matches!(self.walk(p, false), Ok(w) if w.what == What::Absent && w.name.is_some()) {
                self.mkdir_at(i, p, true, true)?;
            }
        }
        Ok(())
    }

    /// A `mkdir` of `path` for op `i`; `extra`: a directory a `..` of the
    /// op's path passes through (`before_dotdot`).
    fn mkdir_at(
        &mut self,
        i: usize,
        path: &Path,
        parents: bool,
        extra: bool,
    ) -> Result<(usize, PathBuf), TxnError> {
        let root = self.root.as_ref().map(|r| r.0.as_path());
        let w = self.walk(path, false).and_then(|w| match root {
            Some(r) if !w.key().starts_with(r) => Err(crate::fs::resolve::outside_root(path, r)),
            _ => Ok(w),
        });
        let w = w.map_err(|e| TxnError::of(0, e))?;
        let key = w.key();
        let quiet = match (&w.what, &w.name) {
            (What::File(g), _) if parents && self.files[*g].tree != Tree::No => {
                return Ok((*g, key))
            }
            // Made by an earlier op (not counted), or by this one on its
            // way through a `..` (`e/f/..` counts `e`).
            (What::Made, Some(_)) if parents => extra || !self.made_by(i, &key),
            (What::Absent, Some(_)) => extra,
            (What::Disk, _) => {
                // `mkdir -p` accepts a directory, or a symlink to one.
                let st = rfs::stat(&key).map(|s| FileType::from_raw_mode(s.st_mode));
                if !parents || st != Ok(FileType::Directory) {
                    return Err(taken(path));
                }
                return self.existing(i, key);
            }
            // Ended on a directory not on disk, no symlink on the way
            // (`a/b/.`, `a/b/..` once `a/b` is made): the one `key` names,
            // as mkdir(1) makes it.
            (What::Absent | What::Made, None) if w.link.is_none() && w.through.is_none() => {
                return match (parents, &w.what) {
                    (true, _) => self.mkdir_at(i, &key, true, extra),
                    (false, What::Made) => Err(taken(path)),
                    (false, _) => Err(TxnError::of(
                        0,
                        FsError::NotFound {
                            path: path.to_owned(),
                            kind: NotFoundKind::Missing,
                        },
                    )),
                };
            }
            (What::Absent, None) => return Err(super::new::dangling(w.link.unwrap_or(key))),
            _ => return Err(taken(path)),
        };
        if let Some(l) = &w.through {
            return Err(super::new::dangling(l.clone()));
        }
        // Without `parents` every directory above must exist: on disk or
        // made by an earlier op (`rest` holds both kinds).
        let mut missing = w.base.clone();
        for r in &w.rest {
            missing.push(r);
            if !parents && !self.made.contains(&missing) {
                return Err(TxnError::of(
                    0,
                    FsError::NotFound {
                        path: missing,
                        kind: NotFoundKind::Missing,
                    },
                ));
            }
        }
        let dest = self.dest(w)?;
        let dest = self.landing(path, dest, (None, None), false)?;
        self.make_dirs(&dest);
        self.made.push(key.clone());
        let f = self.add(None, End::At(dest), i);
        self.files[f].tree = Tree::Mkdir {
            exist_ok: parents,
            quiet,
        };
        Ok((f, key))
    }

    /// Whether op `i` itself makes the directory `key` (a file of its
    /// own lands there, or makes it on the way).
    fn made_by(&self, i: usize, key: &Path) -> bool {
        self.files.iter().any(|f| match &f.end {
            End::At(d) if f.last == i => {
                let mut made = d.t.path.ancestors().take(d.missing.len() + 1);
                made.any(|p| p == key)
            }
            _ => false,
        })
    }

    /// A `mkdir -p` of the existing directory at `key`: a file of the
    /// model that nothing changes.
    fn existing(&mut self, i: usize, key: PathBuf) -> Result<(usize, PathBuf), TxnError> {
        match self.locate(&key, true, true)? {
            super::Named::File(g) | super::Named::Link(g) => {
                // New to the model: it commits (is rechecked) here.
                if self.files[g].last == self.txn.ops.len() {
                    self.files[g].last = i;
                }
                Ok((g, key))
            }
            super::Named::Nothing(..) => Err(refused(&key, "is missing")),
        }
    }
}
