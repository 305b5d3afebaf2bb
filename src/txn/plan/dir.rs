//! Directories in the model: a directory a recursive
//! `delete` removes or a `move` renames (one a `mkdir` makes: `mkdir`).
//!
//! A directory is one entry of the model, as a file is: its name vacated
//! (everything under it is then missing to later ops) or taken. It is not
//! locked (a lock on a directory keeps no writer out of the files in it);
//! its name must still hold it, by device, inode and type, when the
//! commit comes (`lock::recheck_link`). A recursive delete is refused
//! before anything is touched for `--root`, `/`, the working directory
//! and its ancestors (`invalid_argument`), for a tree holding a mount
//! point of any type (a bind-mounted file too) or itself one
//! (`invalid_argument`, naming it: it stays on one file system), and where a directory of the tree that holds entries does
//! not let the caller remove them (`permission_denied`, naming it: as root
//! every tree is removable; as another user a read-only subdirectory
//! refuses the whole delete rather than leaving half a tree).

use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

use rustix::fs::{self as rfs, Access, AtFlags, FileType, Mode, OFlags};

use super::Model;
use crate::fs::{FsError, NotFoundKind};
use crate::protocol::{display_path, ErrorKind, Failure};
use crate::txn::commit::tree::{ident, Ident};
use crate::txn::op::OpKind;
use crate::txn::TxnError;

/// What kind of entry a file of the model is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(in crate::txn) enum Tree {
    /// A regular file or a symlink.
    No,
    /// An existing directory (a no-op `mkdir -p` names one too).
    Dir,
    /// A directory a `mkdir` makes; `exist_ok`: `parents` (an existing
    /// directory at the commit is no failure); `quiet`: an earlier op
    /// makes it already (not counted in `"files"`).
    Mkdir { exist_ok: bool, quiet: bool },
}

fn fail(kind: ErrorKind, detail: String) -> TxnError {
    TxnError::fail(0, Failure::new(kind, detail))
}

/// `file_exists`: a move onto `to`, which `said`.
pub(super) fn over(to: &Path, said: &str) -> TxnError {
    let p = display_path(to);
    fail(
        ErrorKind::FileExists,
        format!("{p} {said}: a move never replaces a directory, moves into one, or moves a directory over anything"),
    )
}

/// `invalid_argument`: a directory moved into its own subtree.
pub(super) fn into_itself(from: &Path, to: &Path) -> TxnError {
    fail(
        ErrorKind::InvalidArgument,
        format!(
            "cannot move the directory {} into itself ({})",
            display_path(from),
            display_path(to)
        ),
    )
}

impl Model<'_> {
    /// Refuses a recursive delete or a move of `--root`, `/`, the working
    /// directory or one of its ancestors (`path` resolved; its last name
    /// followed only for a patch's move, which follows it: a delete or a
    /// move acts on a symlink to one of them as a link).
    pub(super) fn protected(&self, path: &Path, follow: bool) -> Result<(), TxnError> {
        let Ok(w) = self.walk(path, follow) else {
            return Ok(()); // its own refusal comes from `locate`
        };
        let key = w.key();
        let cwd = std::env::current_dir().unwrap_or_default();
        let root = self.root.as_ref().map(|r| r.0.as_path());
        let what = if key == Path::new("/") {
            "/"
        } else if root == Some(key.as_path()) {
            "--root"
        } else if cwd.starts_with(&key) {
            "the working directory or one of its ancestors"
        } else {
            return Ok(());
        };
        Err(fail(
            ErrorKind::InvalidArgument,
            format!(
                "{} is {what}: it is never deleted or moved",
                display_path(&key)
            ),
        ))
    }

    /// What a directory's delete or move (`f` at `from`; `to`: where it
    /// goes) does to the names under it: each file and made directory
    /// there goes with it (or is removed), and its old name is missing.
    /// Left in place, a later op on `from/x` reached a file of the model
    /// that had moved with the tree (rewriting `to/x`), or one removed
    /// with it (an edit reported done, a create refused `file_exists`).
    pub(super) fn carry(&mut self, f: usize, from: &Path, to: Option<&Path>) {
        if self.files[f].tree == Tree::No {
            return;
        }
        let under = |k: &Path| k != from && k.starts_with(from);
        let moved = |k: &Path| to.map(|t| t.join(k.strip_prefix(from).expect("under")));
        let mut carried = Vec::new();
        for n in self.names.iter_mut().filter(|n| under(&n.0)) {
            if let Some(g) = n.1.take() {
                carried.push((moved(&n.0), g));
            }
        }
        for (key, g) in carried {
            self.at[g] = None;
            if let Some(k) = key {
                self.occupy(g, k);
            }
        }
        let made = std::mem::take(&mut self.made);
        for m in made {
            match under(&m) {
                false => self.made.push(m),
                true => self.made.extend(moved(&m)),
            }
        }
    }

    /// Checks op `i` on the directory file `f` at `from`.
    pub(super) fn dir_op(&mut self, i: usize, f: usize, from: &Path) -> Result<(), TxnError> {
        let p = display_path(from);
        let (expect, change) = match &self.txn.ops[i].kind {
            OpKind::Delete { expect_sha256, .. } => (expect_sha256.is_some(), false),
            OpKind::Move {
                expect_sha256,
                change,
                ..
            } => (expect_sha256.is_some(), change.is_some()),
            _ => (false, false),
        };
        if expect || change {
            let k = if expect { "expect_sha256" } else { "edits" };
            return Err(fail(
                ErrorKind::InvalidArgument,
                format!("{p} is a directory: {k:?} applies to a file"),
            ));
        }
        let (t, _, _) = self.files[f].orig.as_ref().expect("on disk");
        // The tree's mount: its parent's (a mount point, a bind mount of
        // the same file system too, is refused: `commit::tree`).
        let top = ident(t.dir.as_fd(), c"").map_err(|e| io(from, e))?.at;
        let me = ident(t.dir.as_fd(), &t.name).map_err(|e| io(from, e))?;
        if me.foreign(top) {
            return Err(mount(from));
        }
        if matches!(self.txn.ops[i].kind, OpKind::Delete { .. }) {
            if me.pinned {
                return Err(pinned(from));
            }
            let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            let fd = rfs::openat(&t.dir, &t.name, flags, Mode::empty()).map_err(|e| io(from, e))?;
            scan(fd, top, me, from.to_owned())?;
        }
        Ok(())
    }
}

fn io(path: &Path, e: rustix::io::Errno) -> TxnError {
    TxnError::of(
        0,
        FsError::NotFound {
            path: path.to_owned(),
            kind: NotFoundKind::Other(e),
        },
    )
}

fn mount(path: &Path) -> TxnError {
    fail(
        ErrorKind::InvalidArgument,
        format!(
            "{} is a mount point (another file system): a recursive delete or a directory move stays on one file system; nothing was changed",
            display_path(path)
        ),
    )
}

/// `permission_denied`: an entry `chattr +i` or `+a` (its name cannot go).
fn pinned(path: &Path) -> TxnError {
    fail(
        ErrorKind::PermissionDenied,
        format!(
            "{} is immutable or append-only (chattr +i/+a): it cannot be removed; nothing was deleted",
            display_path(path)
        ),
    )
}

/// `permission_denied`: the directory at `path` does not let the caller
/// remove its entries (`why`).
fn locked(path: &Path, why: &str) -> TxnError {
    fail(
        ErrorKind::PermissionDenied,
        format!(
            "{} does not let its entries be removed ({why}): nothing was deleted",
            display_path(path)
        ),
    )
}

/// Every entry of the tree at `fd` (at `path`, the directory `me`, on the
/// mount `top`), a file as well as a directory: on that mount, neither immutable nor append-only, and
/// removable by the caller (its directory writable and searchable; in a
/// sticky directory, owned by the caller or in a directory it owns, unless
/// root). Never follows a symlink. Iterative, one descriptor per level (a
/// deep tree cannot overflow the stack; one deeper than the descriptor
/// limit allows is refused, naming where).
fn scan(fd: OwnedFd, top: (u64, Option<u64>), me: Ident, path: PathBuf) -> Result<(), TxnError> {
    let root = rustix::process::geteuid();
    let mut path = path;
    let dir = rfs::Dir::new(fd).map_err(|e| io(&path, e))?;
    // Each level: its stream, the directory's own ident, whether it holds entries.
    let mut stack = vec![(dir, me, false)];
    while let Some((dir, me, full)) = stack.last_mut() {
        let e = match dir.read() {
            None => {
                let ok = dir.fd().and_then(|d| {
                    rfs::accessat(
                        d,
                        c".",
                        Access::WRITE_OK | Access::EXEC_OK,
                        AtFlags::EACCESS,
                    )
                });
                if *full && ok.is_err() {
                    return Err(locked(&path, "no write or search permission"));
                }
                stack.pop();
                if !stack.is_empty() {
                    path.pop();
                }
                continue;
            }
            Some(e) => e.map_err(|e| io(&path, e))?,
        };
        let name = e.file_name().to_owned();
        if name.as_bytes() == b"." || name.as_bytes() == b".." {
            continue;
        }
        *full = true;
        let sub = path.join(std::ffi::OsStr::from_bytes(name.to_bytes()));
        let d = dir.fd().map_err(|e| io(&path, e))?;
        let st = ident(d, &name).map_err(|e| io(&sub, e))?;
        if st.pinned {
            return Err(pinned(&sub));
        }
        let sticky = me.mode & 0o1000 != 0;
        if sticky && !root.is_root() && st.uid != root.as_raw() && me.uid != root.as_raw() {
            return Err(locked(&path, "sticky, and the entry is another user's"));
        }
        // Every entry, whatever its type: a file bind-mounted into the
        // tree is a mount point too (its mount id, `STATX_ATTR_MOUNT_ROOT`),
        // and its unlink would fail only after the rest had gone.
        if st.foreign(top) {
            return Err(mount(&sub));
        }
        if st.kind != FileType::Directory {
            continue;
        }
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let sfd = rfs::openat(d, &name, flags, Mode::empty()).map_err(|e| io(&sub, e))?;
        if ident(sfd.as_fd(), c"")
            .map_err(|e| io(&sub, e))?
            .foreign(top)
        {
            return Err(mount(&sub));
        }
        let sdir = rfs::Dir::new(sfd).map_err(|e| io(&sub, e))?;
        path = sub;
        stack.push((sdir, st, false));
    }
    Ok(())
}

use std::os::unix::ffi::OsStrExt;
