//! Where a path that need not exist would go (its deepest existing
//! directory and the names to create under it), whether a create may go
//! there, and the refusals of such paths.

use std::ffi::{CString, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use rustix::fs::{self as rfs, AtFlags, FileType};

use super::walk::{Walked, What};
use super::{Dest, End, Model, Named, Tree};
use crate::fs::resolve::{outside_root, split};
use crate::fs::FileKind;
use crate::fs::{FsError, NotFoundKind, Target};
use crate::protocol::{ErrorKind, Failure};
use crate::txn::op::OpKind;
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

    /// The refusal of `path`, a hard link of file `g` (`Named::Link`).
    #[cold]
    pub(super) fn link(&self, g: usize, path: &Path) -> TxnError {
        let said = match self.at[g] {
            None => "is a hard link of a file an earlier op removes; send this op in another call",
            Some(_) => "is a hard link of a file an earlier op names at another path; send its delete or move in another call",
        };
        refused(path, said)
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

impl Model<'_> {
    /// What `path` names now (`walk`: the transaction's effects first,
    /// then the disk). `follow`: the last component may be a symlink to
    /// the file (every op but `delete`).
    #[cold] // off the single-file path: LLVM optimizes it for size
    #[cfg_attr(as_edit_small, optimize(size))]
    pub(super) fn locate(
        &mut self,
        path: &Path,
        follow: bool,
        dirs: bool,
    ) -> Result<Named, TxnError> {
        let err = |e| TxnError::of(0, e);
        let root = self.root.as_ref().map(|r| r.0.as_path());
        let w = self.walk(path, follow).and_then(|w| match root {
            Some(r) if !w.key().starts_with(r) => Err(outside_root(path, r)),
            _ => Ok(w),
        });
        // Outside the root first: the spelling says nothing of what is there.
        if names_a_dir(path) && !matches!(w, Err(FsError::OutsideRoot { .. })) {
            return Err(refused(path, DIR));
        }
        let w = w.map_err(err)?;
        let key = w.key();
        self.link = w.link.clone();
        match (&w.what, &w.name) {
            (What::File(f), _) => return Ok(Named::File(*f)),
            (What::Made, _) => return Err(refused(path, "is a directory an earlier op makes")),
            (What::Absent, None) => return Err(dangling(w.link.unwrap_or(key))),
            (What::Absent, _) => {
                let (link, via) = (w.link.clone(), w.through.clone());
                return Ok(Named::Nothing(self.dest(w)?, link, via));
            }
            (What::Disk, _) => {}
        }
        // `key` is canonical: split, not resolved again.
        let (parent, name) = split(&key, &key, root).map_err(err)?;
        let (dir, path) = (self.open_dir(parent)?, key.clone());
        let t = Target { dir, name, path };
        let st = rfs::statat(&t.dir, &t.name, AtFlags::SYMLINK_NOFOLLOW).map_err(|e| {
            err(FsError::NotFound {
                path: t.path.clone(),
                kind: NotFoundKind::Other(e),
            })
        })?;
        let kind = FileType::from_raw_mode(st.st_mode);
        if kind == FileType::Directory && !dirs {
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
            let o = &self.files[f].orig.as_ref().expect("found").0;
            let now = rfs::statat(&o.dir, &o.name, AtFlags::SYMLINK_NOFOLLOW);
            if now.map(|s| (s.st_dev, s.st_ino)) != Ok(id) {
                self.stale = true;
                return Err(err(FsError::KeptChanging { path: key }));
            }
            return Ok(Named::Link(f));
        }
        let i = self.txn.ops.len();
        // Neither a symlink nor a directory is locked (`lock`).
        let dir = kind == FileType::Directory;
        let f = self.add(
            Some((t, id, kind == FileType::Symlink || dir)),
            End::InPlace,
            i,
        );
        if dir {
            self.files[f].tree = Tree::Dir;
        }
        Ok(Named::File(f))
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

/// A patch's `Update File` + `Move to` of the symlink `link` to `target`:
/// Codex writes the destination and removes the link; a transaction's
/// move would move the target, a file the patch did not name.
#[cold]
pub(super) fn patch_moves_link(link: &Path, target: &Path) -> TxnError {
    let t = crate::protocol::display_path(target);
    refused(link, &format!("is a symlink to {t}: a patch's Move to does not move the file a link leads to (Codex writes the destination and removes the link); send *** Delete File of the link and *** Add File of the destination"))
}

/// A patch's `Move to: to`, a hard link of the moved file at `from`:
/// Codex removes `from` and writes `to` in place; a rename leaves both.
#[cold]
pub(super) fn patch_onto_link(to: &Path, from: &Path) -> TxnError {
    let a = crate::protocol::display_path(from);
    refused(to, &format!("is a hard link of {a}, the file moved: Codex removes {a} and writes this name in place, a rename would leave both; send *** Delete File of {a} and *** Add File of this path"))
}

/// A patch's `Move to: to`, a symlink to the moved file at `from`:
/// Codex writes the new text through the link and then removes `from`
/// (the link is left dangling); a rename onto the file itself is an
/// update in place.
#[cold]
pub(super) fn patch_onto_symlink(to: &Path, from: &Path) -> TxnError {
    let a = crate::protocol::display_path(from);
    refused(to, &format!("is a symlink to {a}, the file moved: Codex writes through it and then removes {a}, leaving the link dangling; send *** Update File of {a} without Move to, or *** Delete File of the link first"))
}

impl Model<'_> {
    /// Op `i` on file `f`, if it is a symlink the transaction names as
    /// itself (now at `at`): a delete or a plain move (the link renamed,
    /// what it leads to untouched). A move with `edits` or `expect_sha256` is refused
    /// (`invalid_argument`): the content is its target's, a file the move
    /// does not name; an edit of the link and then a plain move do both.
    /// A content op reaching it by the name an earlier op moved it to is
    /// refused too: the target is edited by its own path.
    #[cold]
    #[cfg_attr(as_edit_small, optimize(size))]
    pub(super) fn link_op(&self, i: usize, f: usize, at: &Path) -> Result<(), TxnError> {
        let op = &self.txn.ops[i];
        if !self.files[f].is_link() {
            return Ok(());
        }
        let p = crate::protocol::display_path(&op.path);
        match &op.kind {
            OpKind::Delete { .. } => Ok(()),
            OpKind::Move {
                change,
                expect_sha256,
                ..
            } => {
                let k = match (change, expect_sha256) {
                    (None, None) => return Ok(()),
                    (Some(_), _) => "edits",
                    (None, Some(_)) => "expect_sha256",
                };
                let said = format!("{p} is a symlink: a move moves the link itself, and {k:?} applies to a file; send an edit of the link (it edits the file the link leads to), then a move without {k:?}");
                Err(TxnError::fail(
                    0,
                    Failure::new(ErrorKind::InvalidArgument, said),
                ))
            }
            _ => Err(refused(at, "is a symlink an earlier op moves or names as itself: edit the file it leads to by that file's path, or in another call")),
        }
    }

    /// Whether the symlink file `f` leads to file `g`, not a symlink: its
    /// text read from where `f` is now (an earlier op may have moved it),
    /// as `mv` run op by op would stat it there, followed on disk. Moved
    /// over `g`, the link would replace the file it leads to (`mv`
    /// refuses: "the same file"; `onto_its_file`).
    pub(super) fn leads_to(&self, f: usize, g: usize) -> bool {
        let (Some(o), Some(h)) = (&self.files[f].orig, &self.files[g].orig) else {
            return false;
        };
        if !self.files[f].is_link() || self.files[g].is_link() {
            return false;
        }
        let Ok(text) = rfs::readlinkat(&o.0.dir, &o.0.name, Vec::new()) else {
            return false;
        };
        let now = self.at[f].as_deref().and_then(Path::parent);
        let p = now
            .unwrap_or(Path::new("/"))
            .join(std::ffi::OsStr::from_bytes(text.as_bytes()));
        rfs::stat(&p).is_ok_and(|s| (s.st_dev, s.st_ino) == h.1)
    }

    /// A patch naming `path`, a hard link of file `g`, which an earlier
    /// hunk names: Codex writes it in place (both names change), as-edit
    /// by a new file (one name would keep the old text).
    #[cold]
    pub(super) fn second_link(&self, g: usize, path: &Path) -> TxnError {
        let at = crate::protocol::display_path(self.at[g].as_deref().expect("named"));
        refused(path, &format!("is a hard link of {at}, which the patch names too: Codex writes such a file in place (every name changes), as-edit by a new file (this name would keep the old text); change the file by one name"))
    }
}

/// `invalid_argument`: the symlink `from` moved onto `to`, the file it
/// leads to (`Model::leads_to`).
#[cold]
pub(super) fn onto_its_file(to: &Path, from: &Path) -> TxnError {
    let (t, f) = (
        crate::protocol::display_path(to),
        crate::protocol::display_path(from),
    );
    let said = format!("{t} is the file the symlink {f} leads to: a move of the link over it would replace that file by the link (mv refuses: the same file); nothing was changed, name another destination");
    TxnError::fail(0, Failure::new(ErrorKind::InvalidArgument, said))
}
