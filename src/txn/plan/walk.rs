//! How the plan looks a path up: name by name, as the kernel
//! walks it (symlinks and `..` followed physically), but each name first
//! in what the transaction has done so far and only then on disk. A name
//! an earlier op vacated is missing (a deleted symlink is no longer
//! followed, so nothing under it or behind it is reached), a name an
//! earlier op filled holds that op's file, and a directory an earlier
//! create or move makes is a directory. Resolving on disk first (as
//! `realpath` does) would let a later op act through a symlink the
//! transaction had deleted and rewrite a file nobody named.
//!
//! What the plan makes of the end (`plan`, `new`): after `delete ld` (a
//! symlink to a directory) `ld/c` and `ld/..` do not resolve, and a
//! create under `ld` makes a directory `ld` (the delete commits first);
//! one where an earlier op moved a file away is refused (that file may
//! commit after the directory is made). A create or move onto a directory
//! an earlier op makes is `file_not_found`, in the plan. A symlink whose
//! target is missing (on disk, or vacated by an earlier op) is
//! `file_not_found` "is a dangling symlink" for `edit`, `insert`, a
//! patch's Update File and its move source (the single-file edit's
//! words; a transaction's `move` moves the link itself); a `create` or
//! a file's move onto it is `file_exists` without `overwrite`, and with
//! it writes the target through the link, which stays (Codex's Add File,
//! checked against its binary), only where the target's directory
//! exists (a directory's move onto it is refused: `plan`); no directory
//! is made through a symlink leading nowhere (`mkdir -p` fails there
//! too). A `..` after a directory an earlier op makes is its parent (it
//! is a directory by then); after one vacated or not there, ENOENT. So `delete a` then
//! `create link` (link -> a) is `file_exists`; with `overwrite` (and in
//! the `apply_patch` mode, as Codex) it makes `a` again through the link.
//!
//! With `--root`, no name outside the root is looked at: a walk that
//! leaves it (by `..`, an absolute path, a symlink) is `outside_root`
//! before anything there is read, except the root's own ancestors, which
//! a walk back into it passes (as `fs::resolve` allows).

use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use super::Model;
use crate::fs::resolve::{errno_of, outside_root};
use crate::fs::{FsError, NotFoundKind};
use rustix::io::Errno;

/// What is at the end of a walk now.
#[derive(PartialEq)]
pub(super) enum What {
    /// File `f` of the model.
    File(usize),
    /// Nothing: never there, or vacated by an earlier op.
    Absent,
    /// A directory an earlier op makes.
    Made,
    /// Something on disk the model does not know (a final symlink itself
    /// when it is not followed).
    Disk,
}

/// Where a walk ended: `base/rest.../name`.
pub(super) struct Walked {
    /// The deepest directory on disk (canonical).
    pub(super) base: PathBuf,
    /// Directories under `base` not on disk (vacated, or to be made).
    pub(super) rest: Vec<OsString>,
    /// The final name; `None` when a symlink's target ended in `/`, `.`
    /// or `..` (a directory).
    pub(super) name: Option<OsString>,
    pub(super) what: What,
    /// The op's own final name was a symlink on disk, followed to here:
    /// its absolute path.
    pub(super) link: Option<PathBuf>,
    /// A symlink that leads to a directory not on disk (one of `rest`):
    /// it dangles, and nothing is made through it.
    pub(super) through: Option<PathBuf>,
}

impl Walked {
    /// The absolute path of the end.
    pub(super) fn key(&self) -> PathBuf {
        let mut k = self.base.clone();
        k.extend(&self.rest);
        k.extend(&self.name);
        k
    }
}

/// The kernel's bound on symlinks followed in one lookup.
const MAX_HOPS: u32 = 40;

/// `path`'s names onto `todo` (a stack: the first name last); a trailing
/// `/` is a `.` (it names a directory). Whether it is absolute.
fn push(todo: &mut Vec<OsString>, path: &[u8]) -> bool {
    let at = todo.len();
    if path.ends_with(b"/") {
        todo.push(".".into());
    }
    for c in path.rsplit(|&b| b == b'/').filter(|c| !c.is_empty()) {
        todo.push(OsString::from_vec(c.to_vec()));
    }
    // An empty symlink target names nothing (the kernel: ENOENT).
    if todo.len() == at && !path.starts_with(b"/") {
        todo.push(OsString::new());
    }
    path.starts_with(b"/")
}

impl Model<'_> {
    /// Walks `path`. `follow`: a symlink as the last name is followed
    /// (every op but `delete`).
    #[cold]
    #[cfg_attr(as_edit_small, optimize(size))]
    pub(super) fn walk(&self, path: &Path, follow: bool) -> Result<Walked, FsError> {
        let fail = |kind| FsError::NotFound {
            path: path.to_owned(),
            kind,
        };
        if path.as_os_str().len() >= 4096 {
            return Err(fail(NotFoundKind::NameTooLong));
        }
        let mut todo = Vec::new();
        let mut cur = match push(&mut todo, path.as_os_str().as_bytes()) {
            true => PathBuf::from("/"),
            false => std::env::current_dir().map_err(|_| fail(NotFoundKind::Missing))?,
        };
        let mut w = Walked {
            base: PathBuf::new(),
            rest: Vec::new(),
            name: None,
            what: What::Disk,
            link: None,
            through: None,
        };
        let mut hops = 0;
        // The symlinks whose targets are being walked: (where on `todo`
        // their names end, the link).
        let mut within: Vec<(usize, PathBuf)> = Vec::new();
        while let Some(c) = todo.pop() {
            let last = todo.is_empty();
            while within.last().is_some_and(|l| l.0 > todo.len()) {
                within.pop();
            }
            match c.as_bytes() {
                b"." => continue,
                // A directory an earlier op makes is one: its `..` is its
                // parent (`mkdir -p a/b/../c`). No `..` after another that
                // is not on disk (the kernel's ENOENT: it is not there yet,
                // or no longer).
                b".." if !w.rest.is_empty() => {
                    if !self.made.contains(&cur) {
                        return Err(fail(NotFoundKind::Missing));
                    }
                    w.rest.pop();
                    cur.pop();
                    continue;
                }
                b".." => {
                    cur.pop();
                    continue;
                }
                _ => {}
            }
            let key = cur.join(&c);
            if let Some((root, _)) = &self.root {
                if !key.starts_with(root) && !root.starts_with(&key) {
                    return Err(outside_root(path, root));
                }
            }
            let known = self.names.iter().find(|n| n.0 == key).map(|n| n.1);
            // A directory of the model still at its own name is the disk's.
            let known = known.filter(|f| {
                !f.is_some_and(|f| {
                    let file = &self.files[f];
                    file.tree == super::Tree::Dir
                        && file.orig.as_ref().is_some_and(|o| o.0.path == key)
                        && !last
                })
            });
            let what = if self.made.contains(&key) {
                What::Made
            } else if let Some(f) = known {
                f.map_or(What::Absent, What::File)
            } else if !w.rest.is_empty() {
                What::Absent
            } else {
                match std::fs::symlink_metadata(&key) {
                    Err(e) if errno_of(&e) == Errno::NOENT => What::Absent,
                    Err(e) => return Err(fail(kind(errno_of(&e)))),
                    Ok(m) if m.file_type().is_symlink() && (follow || !last) => {
                        hops += 1;
                        let to = std::fs::read_link(&key).map_err(|e| fail(kind(errno_of(&e))))?;
                        if hops > MAX_HOPS {
                            return Err(fail(NotFoundKind::SymlinkLoop));
                        }
                        if last && w.link.is_none() {
                            w.link = Some(key.clone());
                        }
                        within.push((todo.len(), key));
                        if push(&mut todo, to.as_os_str().as_bytes()) {
                            cur = PathBuf::from("/");
                        }
                        continue;
                    }
                    Ok(m) if m.is_dir() && !last => {
                        cur = key;
                        continue;
                    }
                    Ok(_) if !last => return Err(fail(NotFoundKind::NotADirectory)),
                    Ok(_) => What::Disk,
                }
            };
            if last {
                w.base = base(cur, &w.rest);
                w.name = Some(c);
                w.what = what;
                return Ok(w);
            }
            match what {
                // A directory an earlier op moves here: the plan resolves
                // names on disk, where it is not yet (`txn.md`).
                What::File(f) if self.files[f].tree != super::Tree::No => {
                    return Err(fail(NotFoundKind::UnderMovedDir))
                }
                // A symlink to a directory an earlier op moves here as a
                // link: not followed in the model, named by the old path.
                What::File(f) if self.files[f].is_link() && self.leads_to_dir(f) => {
                    return Err(fail(NotFoundKind::UnderMovedDir))
                }
                // Through a file: ENOTDIR.
                What::File(_) | What::Disk => return Err(fail(NotFoundKind::NotADirectory)),
                // A directory to make that a symlink leads to: it dangles.
                What::Absent if w.through.is_none() => {
                    w.through = within.first().map(|l| l.1.clone())
                }
                _ => {}
            }
            w.rest.push(c);
            cur = key;
        }
        // Ended on a directory (`.`, `..`, a trailing `/`): `cur` itself.
        w.what = match w.rest.is_empty() {
            true => What::Disk,
            false if self.made.contains(&cur) => What::Made,
            false => What::Absent,
        };
        w.base = base(cur, &w.rest);
        Ok(w)
    }
}

impl Model<'_> {
    /// Whether the symlink file `f` led to a directory where it was.
    fn leads_to_dir(&self, f: usize) -> bool {
        let o = self.files[f].orig.as_ref().expect("on disk");
        rustix::fs::statat(&o.0.dir, &o.0.name, rustix::fs::AtFlags::empty()).is_ok_and(|s| {
            rustix::fs::FileType::from_raw_mode(s.st_mode) == rustix::fs::FileType::Directory
        })
    }
}

/// `cur` without the names in `rest` (which it ends with).
fn base(mut cur: PathBuf, rest: &[OsString]) -> PathBuf {
    for _ in rest {
        cur.pop();
    }
    cur
}

/// A failed lookup's errno as the single-file edit classifies it.
fn kind(e: Errno) -> NotFoundKind {
    match e {
        Errno::LOOP => NotFoundKind::SymlinkLoop,
        Errno::NOTDIR => NotFoundKind::NotADirectory,
        Errno::NAMETOOLONG => NotFoundKind::NameTooLong,
        Errno::ACCESS => NotFoundKind::SearchDenied,
        e => NotFoundKind::Other(e),
    }
}
