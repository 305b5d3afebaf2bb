//! The model of a transaction before anything is touched: which file each
//! op means (two paths to one inode are one file), where each file ends
//! (in place, at a new path, gone), which ops change its content, and the
//! directories a create or move must make. Paths are resolved once here
//! (`walk`: name by name, each name in the model before the disk),
//! `--root` confining every one of them, move targets and created parents
//! included; ops see the effect of earlier ops (a path a delete or move
//! vacated is missing, and so is everything under it; a path a create
//! made exists; a directory a create made is one).

use std::ffi::CString;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use rustix::fs as rfs;

use crate::fs::resolve::{open_dir, open_root};
use crate::fs::{FsError, NotFoundKind, Target};

use super::op::{OpKind, Txn};
use super::TxnError;

mod dir;
mod mkdir;
mod new;
mod walk;
pub(super) use dir::Tree;
use new::{dangling, exists};

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
    /// whether it is a symlink or a directory (not locked; a delete or a
    /// move acts on a symlink itself).
    pub(super) orig: Option<(Target, (u64, u64), bool)>,
    pub(super) end: End,
    /// The ops that change its content, in order.
    pub(super) steps: Vec<usize>,
    /// The last op naming it (files commit in this order).
    pub(super) last: usize,
    /// A file created and then removed in the same transaction: where it
    /// would have been, so its ops still run (and may refuse) on a temp.
    pub(super) unborn: Option<Target>,
    /// A directory (deleted with everything under it, or moved), or one a
    /// `mkdir` makes; `Tree::No` for a file or a symlink.
    pub(super) tree: Tree,
}

impl File {
    /// A symlink named as itself (deleted, moved): `Model::link_op`.
    pub(super) fn is_link(&self) -> bool {
        self.tree == Tree::No && matches!(self.orig, Some((_, _, true)))
    }
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
    /// Nothing (never there, or vacated by an earlier op); the op's own
    /// name if it is a symlink that leads here (it dangles), and a symlink
    /// on the way that leads to a directory not on disk.
    Nothing(Dest, Option<PathBuf>, Option<PathBuf>),
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
    /// Directories an earlier create or move makes (absolute).
    made: Vec<PathBuf>,
    txn: &'t Txn,
    /// Every directory opened, by (device, inode): one descriptor each,
    /// however many files it holds (the descriptor bound, `txn` docs).
    dirs: Vec<((u64, u64), Rc<OwnedFd>)>,
    /// A file met by its (device, inode) no longer holds it (`plan`).
    stale: bool,
    /// The last path located ended in a symlink, followed: the link.
    link: Option<PathBuf>,
}

/// Builds the model; a refusal names its op. Two names found holding one
/// (device, inode) are one file only if the first still holds it: when it
/// does not, another writer replaced it meanwhile and the freed inode
/// number may have been reused by another file (two files were merged and
/// one's ops edited the other); the model is then built again, up to 100
/// times (then `busy`, as the lock's rounds).
#[cold] // off the single-file path: LLVM optimizes it for size
#[cfg_attr(as_edit_small, optimize(size))]
pub(super) fn plan(txn: &Txn) -> Result<Plan, TxnError> {
    for _ in 0..100 {
        if let Some(r) = plan_once(txn) {
            return r;
        }
    }
    let path = txn.ops[0].path.clone();
    Err(TxnError::of(0, FsError::KeptChanging { path }))
}

/// One attempt; `None`: a stale identity was met, start again.
#[cold]
#[cfg_attr(as_edit_small, optimize(size))]
fn plan_once(txn: &Txn) -> Option<Result<Plan, TxnError>> {
    let root = match txn.options.root.as_deref().map(open_root).transpose() {
        Ok(r) => r,
        Err(e) => return Some(Err(TxnError::of(0, e))),
    };
    let mut m = Model {
        root,
        files: Vec::new(),
        names: Vec::new(),
        at: Vec::new(),
        made: Vec::new(),
        dirs: Vec::new(),
        stale: false,
        link: None,
        txn,
    };
    let mut file_of = Vec::with_capacity(txn.ops.len());
    let mut resolved = Vec::with_capacity(txn.ops.len());
    for i in 0..txn.ops.len() {
        let (f, from) = match m.apply(i) {
            Ok(r) => r,
            Err(_) if m.stale => return None,
            Err(e) => return Some(Err(e.at(i))),
        };
        #[cfg(any(debug_assertions, feature = "fault-injection"))]
        pause(i);
        let to = matches!(txn.ops[i].kind, OpKind::Move { .. })
            .then(|| m.at[f].clone())
            .flatten();
        file_of.push(f);
        resolved.push((from, to));
    }
    Some(Ok(Plan {
        files: m.files,
        file_of,
        resolved,
    }))
}

/// Test builds only: after the first op of the first attempt, wait for a
/// byte on the FIFO at `AS_EDIT_TEST_PLAN_PAUSE` (a test changes files
/// while the model is half built).
#[cfg(any(debug_assertions, feature = "fault-injection"))]
fn pause(i: usize) {
    use std::sync::atomic::{AtomicBool, Ordering};
    static DONE: AtomicBool = AtomicBool::new(false);
    if let (0, Some(p), false) = (
        i,
        std::env::var_os("AS_EDIT_TEST_PLAN_PAUSE"),
        DONE.swap(true, Ordering::Relaxed),
    ) {
        use std::io::Read;
        let _ = std::fs::File::open(p).and_then(|mut f| f.read(&mut [0u8; 1]));
    }
}

impl Model<'_> {
    /// Applies op `i` to the model: its file and the path it named.
    #[cold] // off the single-file path: LLVM optimizes it for size
    #[cfg_attr(as_edit_small, optimize(size))]
    fn apply(&mut self, i: usize) -> Result<(usize, PathBuf), TxnError> {
        let op = &self.txn.ops[i];
        // A delete and a move act on a symlink as a link (rename(2), `mv`);
        // a patch's move follows it, to refuse it (`new::patch_moves_link`).
        let follow = match op.kind {
            OpKind::Delete { .. } => false,
            OpKind::Move { .. } => self.txn.patch,
            _ => true,
        };
        let entry = matches!(op.kind, OpKind::Delete { .. } | OpKind::Move { .. });
        // Directories: a recursive delete's, a move's (`dir`).
        let dirs = match op.kind {
            OpKind::Mkdir { parents } => return self.mkdir(i, parents),
            // Without `recursive` a directory is refused as before.
            OpKind::Delete { recursive, .. } => {
                if recursive {
                    self.protected(&op.path, false)?;
                }
                recursive
            }
            OpKind::Move { .. } => {
                self.protected(&op.path, follow)?;
                true
            }
            _ => false,
        };
        let named = self.locate(&op.path, follow, dirs)?;
        let via = self.link.take();
        let f = match (&op.kind, named) {
            (OpKind::Create { overwrite, .. }, Named::Nothing(dest, link, via)) => {
                let dest = self.landing(&op.path, dest, (link, via), *overwrite)?;
                self.make_dirs(&dest);
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
            // A patch's: Codex writes in place, both names change (`new`).
            (_, Named::Link(f)) if self.txn.patch => return Err(self.second_link(f, &op.path)),
            (_, Named::File(f) | Named::Link(f)) => f,
            (_, Named::Nothing(_, Some(link), _)) => return Err(dangling(link)),
            (_, Named::Nothing(d, None, _)) => {
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
        self.link_op(i, f, &from)?;
        if self.files[f].tree == Tree::Dir {
            self.dir_op(i, f, &from)?;
        }
        match &op.kind {
            OpKind::Edit { .. } | OpKind::Insert { .. } | OpKind::Create { .. } => {
                self.files[f].steps.push(i)
            }
            OpKind::Mkdir { .. } => unreachable!("made above"),
            OpKind::Delete { .. } => {
                self.carry(f, &from, None);
                self.vacate(f);
                self.gone(f);
            }
            OpKind::Move {
                to,
                overwrite,
                change,
                ..
            } => {
                if let (true, Some(l)) = (self.txn.patch, &via) {
                    return Err(new::patch_moves_link(l, &from));
                }
                if change.is_some() {
                    self.files[f].steps.push(i);
                }
                // A link lands on the entry named, as rename(2) does.
                let named = self.locate(to, !self.files[f].is_link(), true)?;
                let onto_symlink = self.link.take();
                let dir = self.files[f].tree != Tree::No;
                let dest = match named {
                    // A directory never lands on anything: a symlink is an
                    // entry, not a way to its target or its target's name.
                    _ if dir && onto_symlink.is_some() => {
                        return Err(dir::over(to, "is a symlink"))
                    }
                    Named::Nothing(d, link, via) => self.landing(to, d, (link, via), *overwrite)?,
                    // A patch onto another name of the file: Codex removes
                    // this one and writes that one in place; by rename the
                    // same file would stay at both (`link`). Onto a symlink
                    // to the file: Codex writes through it, then removes
                    // the file (the link dangles); as-edit saw itself.
                    Named::Link(g) if g == f && self.txn.patch => {
                        return Err(match overwrite {
                            false => exists(to),
                            true => new::patch_onto_link(to, &from),
                        });
                    }
                    Named::File(g) if g == f && self.txn.patch && onto_symlink.is_some() => {
                        return Err(match overwrite {
                            false => exists(to),
                            true => new::patch_onto_symlink(to, &from),
                        });
                    }
                    // Onto itself (a hard link of it too: rename(2) leaves both).
                    Named::File(g) | Named::Link(g) if g == f => return Ok((f, from)),
                    // Never over a directory (nor into one), nor a
                    // directory over anything (`dir`), with or without
                    // `overwrite`: the refusal does not advise it.
                    Named::File(g) if self.files[g].tree != Tree::No => {
                        return Err(dir::over(to, "is a directory"))
                    }
                    _ if dir => return Err(dir::over(to, "exists and the source is a directory")),
                    Named::File(g) if self.leads_to(f, g) => {
                        return Err(new::onto_its_file(to, &op.path))
                    }
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
                        // Its name is taken here: it commits with this op.
                        self.files[g].last = i;
                        self.vacate(g);
                        self.gone(g);
                        d
                    }
                };
                if self.files[f].tree == Tree::Dir && dest.t.path.starts_with(&from) {
                    return Err(dir::into_itself(&from, &dest.t.path));
                }
                self.make_dirs(&dest);
                self.carry(f, &from, Some(&dest.t.path));
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
            tree: Tree::No,
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

    /// The canonical directory `dir`, opened (and confined), one descriptor
    /// however many files it holds: found by its device and inode. Opened
    /// each time, not found by its path: a directory renamed away while
    /// the plan was made (its name given to another) would be the one an
    /// earlier op opened, and a later op, walked through the new one,
    /// would act on a file there that was never at the path it named.
    fn open_dir(&mut self, dir: &Path) -> Result<Rc<OwnedFd>, TxnError> {
        let root = self.root.as_ref().map(|(p, fd)| (p.as_path(), fd));
        let fd: Rc<OwnedFd> = open_dir(dir, root).map_err(|e| TxnError::of(0, e))?.into();
        // (0, 0): not known, no directory's.
        let id = rfs::fstat(&fd).map_or((0, 0), |st| (st.st_dev, st.st_ino));
        if let Some(d) = self.dirs.iter().find(|d| d.0 == id && id != (0, 0)) {
            return Ok(d.1.clone()); // the new descriptor is closed
        }
        self.dirs.push((id, fd.clone()));
        Ok(fd)
    }

    /// The destination a file's current path makes (to move another file
    /// over it): its directory and name as they are.
    fn dest_of(&mut self, g: usize) -> Result<Dest, TxnError> {
        let key = self.at[g].clone().expect("present");
        let w = self.walk(&key, false).map_err(|e| TxnError::of(0, e))?;
        self.dest(w)
    }
}
