//! The model of a transaction before anything is touched: which file each
//! op means (two paths to one inode are one file), where each file ends
//! (in place, at a new path, gone), which ops change its content, and the
//! directories a create or move must make. Paths are resolved once here,
//! `--root` confining every one of them, move targets and created parents
//! included; ops see the effect of earlier ops (a path a move vacated is
//! missing, a path a create made exists).

use std::ffi::CString;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use rustix::fs::{self as rfs, AtFlags, FileType};

use crate::fs::resolve::{open_dir, open_root, outside_root, split};
use crate::fs::{FileKind, FsError, NotFoundKind, Target};

use super::op::{OpKind, Txn};
use super::TxnError;

mod new;
use new::{exists, refused};

/// Where a file ends up.
pub(super) enum End {
    /// At its own name (edited, or untouched but named by an op).
    InPlace,
    /// Removed (deleted, moved away and replaced, or created then deleted).
    Gone,
    /// At a new path (moved, or created).
    At(Dest),
}

/// A path that is to be made: its deepest existing directory, the
/// directories to create under it, the final name.
pub(super) struct Dest {
    /// `dir`: the deepest existing directory; `name`: the final name;
    /// `path`: the absolute path, for messages.
    pub(super) t: Target,
    /// Directories to create under `t.dir`, outermost first.
    pub(super) missing: Vec<CString>,
    /// Another file of the transaction that is at this path now and is
    /// replaced (a move with `overwrite`).
    pub(super) replaces: Option<usize>,
}

/// One file of the transaction.
pub(super) struct File {
    /// The existing file (absent for a create): its name, identity, and
    /// whether it is a symlink (a delete removes the link itself).
    pub(super) orig: Option<(Target, (u64, u64), bool)>,
    pub(super) end: End,
    /// The ops that change its content, in order.
    pub(super) steps: Vec<usize>,
    /// The last op naming it (files commit in this order).
    pub(super) last: usize,
    /// A file created and then removed in the same transaction: where it
    /// would have been, so its ops still run (and may refuse) on a temp.
    pub(super) unborn: Option<Target>,
}

/// The whole model.
pub(super) struct Plan {
    pub(super) files: Vec<File>,
    /// For each op, the file it is about.
    pub(super) file_of: Vec<usize>,
    /// For each op, the resolved path it names (a move: and its target).
    pub(super) resolved: Vec<(PathBuf, Option<PathBuf>)>,
}

/// What a path names at this point of the transaction.
enum Named {
    /// A file of the model.
    File(usize),
    /// A file of the model through another hard link than the one it is
    /// at: one file for content ops, not for a delete or move (the name).
    Link(usize),
    /// Nothing (never there, or vacated by an earlier op).
    Nothing(Dest),
}

struct Model<'t> {
    /// `--root`, canonical, and its descriptor.
    root: Option<(PathBuf, std::os::fd::OwnedFd)>,
    files: Vec<File>,
    /// Absolute path → the file there now (`None`: vacated).
    /// (A list: at most 512 paths, and a map's hashing costs binary size.)
    names: Vec<(PathBuf, Option<usize>)>,
    /// Where each file is now (its key in `names`).
    at: Vec<Option<PathBuf>>,
    txn: &'t Txn,
    /// Every directory opened, by canonical path and (device, inode): one
    /// descriptor each, however many files it holds (the descriptor bound,
    /// `txn` docs).
    dirs: Vec<(PathBuf, (u64, u64), Rc<OwnedFd>)>,
}

/// Builds the model; a refusal names its op.
#[cold] // off the single-file path: LLVM optimizes it for size
#[cfg_attr(as_edit_small, optimize(size))]
pub(super) fn plan(txn: &Txn) -> Result<Plan, TxnError> {
    let root = match txn.options.root.as_deref() {
        Some(r) => Some(open_root(r).map_err(|e| TxnError::of(0, e))?),
        None => None,
    };
    let mut m = Model {
        root,
        files: Vec::new(),
        names: Vec::new(),
        at: Vec::new(),
        dirs: Vec::new(),
        txn,
    };
    let mut file_of = Vec::with_capacity(txn.ops.len());
    let mut resolved = Vec::with_capacity(txn.ops.len());
    for i in 0..txn.ops.len() {
        let (f, from) = m.apply(i).map_err(|e| e.at(i))?;
        let to = matches!(txn.ops[i].kind, OpKind::Move { .. })
            .then(|| m.at[f].clone())
            .flatten();
        file_of.push(f);
        resolved.push((from, to));
    }
    Ok(Plan {
        files: m.files,
        file_of,
        resolved,
    })
}

impl Model<'_> {
    /// Applies op `i` to the model: its file and the path it named.
    #[cold] // off the single-file path: LLVM optimizes it for size
    #[cfg_attr(as_edit_small, optimize(size))]
    fn apply(&mut self, i: usize) -> Result<(usize, PathBuf), TxnError> {
        let op = &self.txn.ops[i];
        let follow = !matches!(op.kind, OpKind::Delete { .. });
        let entry = matches!(op.kind, OpKind::Delete { .. } | OpKind::Move { .. });
        let f = match (&op.kind, self.locate(&op.path, follow)?) {
            (OpKind::Create { .. }, Named::Nothing(dest)) => {
                let path = dest.t.path.clone();
                let f = self.add(None, End::At(dest), i);
                self.files[f].steps.push(i);
                return Ok((f, path));
            }
            (OpKind::Create { overwrite, .. }, _) if !overwrite => return Err(exists(&op.path)),
            // Removed: the model would have to guess; `edit a; delete b`
            // would remove a and keep b.
            (_, Named::Link(f)) if entry || self.at[f].is_none() => {
                return Err(self.link(f, &op.path))
            }
            (_, Named::File(f) | Named::Link(f)) => f,
            (_, Named::Nothing(d)) => {
                return Err(TxnError::of(
                    i,
                    FsError::NotFound {
                        path: d.t.path,
                        kind: NotFoundKind::Missing,
                    },
                ))
            }
        };
        self.files[f].last = i;
        let from = self.at[f].clone().expect("present");
        match &op.kind {
            OpKind::Edit { .. } | OpKind::Insert { .. } | OpKind::Create { .. } => {
                self.files[f].steps.push(i)
            }
            OpKind::Delete { .. } => {
                self.vacate(f);
                self.gone(f);
            }
            OpKind::Move {
                to,
                overwrite,
                change,
                ..
            } => {
                if change.is_some() {
                    self.files[f].steps.push(i);
                }
                let dest = match self.locate(to, true)? {
                    Named::Nothing(d) => d,
                    // Onto itself (a hard link of it too: rename(2) leaves both).
                    Named::File(g) | Named::Link(g) if g == f => return Ok((f, from)),
                    _ if !overwrite => return Err(exists(to)),
                    // It would land at g's other name.
                    Named::Link(g) => return Err(self.link(g, to)),
                    Named::File(g) => {
                        let mut d = self.dest_of(g)?;
                        // What is on disk at that name: g itself if it is
                        // still in place, else what g replaced there (a
                        // file created or moved there is not there yet).
                        d.replaces = match &self.files[g].end {
                            End::InPlace => Some(g),
                            End::At(e) => e.replaces,
                            End::Gone => None,
                        };
                        self.vacate(g);
                        self.gone(g);
                        d
                    }
                };
                self.vacate(f);
                // Moved back to where it was: in place again.
                if let Some((t, _, _)) = &self.files[f].orig {
                    if t.path == dest.t.path && dest.replaces.is_none() {
                        self.files[f].end = End::InPlace;
                        self.occupy(f, dest.t.path);
                        return Ok((f, from));
                    }
                }
                // What f replaced where it was (if anything) is now simply
                // gone: its commit hides it.
                let key = dest.t.path.clone();
                self.files[f].end = End::At(dest);
                self.occupy(f, key);
            }
        }
        Ok((f, from))
    }

    #[cfg_attr(as_edit_small, optimize(size))]
    fn add(&mut self, orig: Option<(Target, (u64, u64), bool)>, end: End, i: usize) -> usize {
        let key = match (&orig, &end) {
            (Some((t, _, _)), _) => t.path.clone(),
            (None, End::At(d)) => d.t.path.clone(),
            _ => unreachable!("a file is somewhere"),
        };
        self.files.push(File {
            orig,
            end,
            steps: Vec::new(),
            last: i,
            unborn: None,
        });
        let f = self.files.len() - 1;
        self.at.push(None);
        self.occupy(f, key);
        f
    }

    /// Removes file `f`; a file the transaction created keeps the place
    /// its temp is made in.
    #[cfg_attr(as_edit_small, optimize(size))]
    fn gone(&mut self, f: usize) {
        let file = &mut self.files[f];
        if let End::At(d) = std::mem::replace(&mut file.end, End::Gone) {
            if file.orig.is_none() {
                file.unborn = Some(d.t);
            }
        }
    }

    fn occupy(&mut self, f: usize, key: PathBuf) {
        self.set(key.clone(), Some(f));
        self.at[f] = Some(key);
    }

    #[cfg_attr(as_edit_small, optimize(size))]
    fn set(&mut self, key: PathBuf, f: Option<usize>) {
        match self.names.iter_mut().find(|n| n.0 == key) {
            Some(n) => n.1 = f,
            None => self.names.push((key, f)),
        }
    }

    fn vacate(&mut self, f: usize) {
        if let Some(k) = self.at[f].take() {
            self.set(k, None);
        }
    }

    /// The canonical directory `dir`, opened (and confined) once however many
    /// files it holds: found by its path, else by its device and inode.
    fn open_dir(&mut self, dir: &Path) -> Result<Rc<OwnedFd>, TxnError> {
        if let Some(d) = self.dirs.iter().find(|d| d.0 == dir) {
            return Ok(d.2.clone());
        }
        let root = self.root.as_ref().map(|(p, fd)| (p.as_path(), fd));
        let mut fd: Rc<OwnedFd> = open_dir(dir, root).map_err(|e| TxnError::of(0, e))?.into();
        // (0, 0): not known, no directory's.
        let id = rfs::fstat(&fd).map_or((0, 0), |st| (st.st_dev, st.st_ino));
        if let Some(d) = self.dirs.iter().find(|d| d.1 == id && id != (0, 0)) {
            fd = d.2.clone();
        }
        self.dirs.push((dir.to_owned(), id, fd.clone()));
        Ok(fd)
    }

    /// The refusal of `path`, a hard link of file `g` (`Named::Link`).
    #[cold]
    fn link(&self, g: usize, path: &Path) -> TxnError {
        let said = match self.at[g] {
            None => "is a hard link of a file an earlier op removes; send this op in another call",
            Some(_) => "is a hard link of a file an earlier op names at another path; send its delete or move in another call",
        };
        refused(path, said)
    }

    /// The destination a file's current path makes (to move another file
    /// over it): its directory and name as they are.
    fn dest_of(&mut self, g: usize) -> Result<Dest, TxnError> {
        let key = self.at[g].clone().expect("present");
        Ok(self.locate_new(&key)?.0)
    }

    /// What `path` names now. `follow`: the last component may be a
    /// symlink to the file (every op but `delete`).
    #[cold] // off the single-file path: LLVM optimizes it for size
    #[cfg_attr(as_edit_small, optimize(size))]
    fn locate(&mut self, path: &Path, follow: bool) -> Result<Named, TxnError> {
        let err = |e| TxnError::of(0, e);
        let link =
            !follow && std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
        let existing = if link {
            None
        } else {
            std::fs::canonicalize(path).ok()
        };
        let (dest, key) = match existing {
            Some(abs) => {
                if let Some((root, _)) = &self.root {
                    if !abs.starts_with(root) {
                        return Err(err(outside_root(path, root)));
                    }
                }
                (None, abs)
            }
            None => {
                let (d, key) = self.locate_new(path)?;
                (Some(d), key)
            }
        };
        if let Some(known) = self.names.iter().find(|n| n.0 == key).map(|n| n.1) {
            return Ok(match (known, dest) {
                (Some(f), _) => Named::File(f),
                (None, Some(d)) => Named::Nothing(d),
                (None, None) => Named::Nothing(self.locate_new(&key)?.0),
            });
        }
        let dest = match dest {
            Some(d) if !link => {
                // Nothing there, or a dangling symlink: a create must not
                // write through it.
                if rfs::statat(&d.t.dir, &d.t.name, AtFlags::SYMLINK_NOFOLLOW).is_ok()
                    && d.missing.is_empty()
                {
                    return Err(exists(path));
                }
                return Ok(Named::Nothing(d));
            }
            d => d,
        };
        let t = match dest {
            Some(d) => d.t, // the symlink itself
            None => {
                // `key` is canonical already: split, not resolved again.
                let root = self.root.as_ref().map(|r| r.0.as_path());
                let (parent, name) = split(&key, &key, root).map_err(err)?;
                let (dir, path) = (self.open_dir(parent)?, key);
                Target { dir, name, path }
            }
        };
        let st = rfs::statat(&t.dir, &t.name, AtFlags::SYMLINK_NOFOLLOW).map_err(|e| {
            err(FsError::NotFound {
                path: t.path.clone(),
                kind: NotFoundKind::Other(e),
            })
        })?;
        let kind = FileType::from_raw_mode(st.st_mode);
        if kind == FileType::Directory {
            return Err(err(FsError::NotFound {
                path: t.path.clone(),
                kind: NotFoundKind::NotRegular(FileKind::Directory),
            }));
        }
        let id = (st.st_dev, st.st_ino);
        // The same inode by another name (a hard link): one file.
        if let Some(f) =
            (self.files.iter()).position(|f| f.orig.as_ref().is_some_and(|o| o.1 == id))
        {
            return Ok(Named::Link(f));
        }
        let i = self.txn.ops.len();
        Ok(Named::File(self.add(
            Some((t, id, kind == FileType::Symlink)),
            End::InPlace,
            i,
        )))
    }
}
