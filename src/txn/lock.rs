//! The lock phase: every existing file opened read-only and `flock`ed in
//! one canonical order, all within one `--lock-timeout` (`busy` past it),
//! so that transactions over overlapping files in any order cannot
//! deadlock.
//!
//! The order is the (device, inode) of what each name holds when the
//! round starts: the lock is on the inode, so two names of one inode (hard
//! links in two directories) sort as that inode in every transaction.
//! (Ordering by directory and name, as before, let two transactions
//! reaching one inode through different links take it in opposite orders.)
//! An inode changes when a commit renames a new file over its name, and two
//! transactions that looked at different moments would sort differently:
//! so no lock is ever waited for on an inode other than the one sorted
//! (`fs::lock::try_open_locked` with `want`), and a name found holding
//! another inode (before or after the wait) ends the round: every lock
//! taken is released and the files are sorted again. Each waiter then
//! holds only inodes below the one it waits for, so no cycle can form; a
//! new round means some other transaction committed meanwhile. A create
//! takes no lock (nothing exists yet): its `RENAME_NOREPLACE` commit
//! refuses a racing creator (`file_exists`, rolled back), so its place in
//! the order (its parent directory and name) never makes anyone wait. A
//! symlink a delete removes is not locked either (the link is not the file):
//! its name must still hold that symlink when the commit comes (`recheck_link`).

use std::os::fd::OwnedFd;
use std::time::Duration;

use rustix::fs::{self as rfs, AtFlags, Stat};
use rustix::io::Errno;

use crate::fs::lock::{now, recheck, try_open_locked};
use crate::fs::meta::{self, DirFacts};
use crate::fs::{ConflictWhat, FsError, NotFoundKind, Target};

use super::op::Txn;
use super::plan::{End, Plan};
use super::TxnError;

/// The first op naming file `f`, for messages.
pub(super) fn first_op(plan: &Plan, f: usize) -> usize {
    plan.file_of.iter().position(|g| *g == f).unwrap_or(0)
}

/// A file's original, open and locked: the descriptor and the metadata
/// the stale check compares.
pub(super) struct Locked {
    /// `None` once released after its new content was staged (`nofile`:
    /// a transaction the limit would not let hold two per file).
    pub(super) fd: Option<OwnedFd>,
    pub(super) st: Stat,
}

/// An original's descriptor for a commit step: the one held since the
/// lock phase, or the file opened and locked again.
pub(super) enum Held<'a> {
    Kept(&'a OwnedFd),
    Again(OwnedFd),
}

impl std::ops::Deref for Held<'_> {
    type Target = OwnedFd;
    fn deref(&self) -> &OwnedFd {
        match self {
            Held::Kept(fd) => fd,
            Held::Again(fd) => fd,
        }
    }
}

impl Locked {
    /// The original at `t`, checked as the stale check of a single-file
    /// edit checks it (same inode at the name, same size, mtime and
    /// ctime): through the descriptor held, or, released, by opening the
    /// name again and locking what it holds only if it is still the inode
    /// staged: a writer that changed or replaced it meanwhile is found
    /// here, as by the held lock's recheck. The relock never waits (`busy`
    /// at once): this transaction holds other locks by now, in no order
    /// with this one, and a writer holding this one could be waiting for
    /// one of them (a cycle that only `--lock-timeout` ended, then `busy`
    /// for the writer too); one holding it is about to change it anyway.
    #[cfg_attr(as_edit_small, optimize(size))]
    pub(super) fn held(&self, t: &Target) -> Result<Held<'_>, FsError> {
        let h = match &self.fd {
            Some(fd) => Held::Kept(fd),
            None => {
                let id = (self.st.st_dev, self.st.st_ino);
                let changed = |what| FsError::Conflict {
                    path: t.path.clone(),
                    what,
                };
                match try_open_locked(t, now(), Duration::ZERO, Some(id)) {
                    Ok(Some((fd, _))) => Held::Again(fd),
                    Ok(None) => return Err(changed(ConflictWhat::ChangedWhileEditing)),
                    Err(FsError::NotFound {
                        kind: NotFoundKind::Other(Errno::NOENT),
                        ..
                    }) => return Err(changed(ConflictWhat::Removed)),
                    Err(FsError::NotFound { .. }) => {
                        return Err(changed(ConflictWhat::ChangedWhileEditing))
                    }
                    Err(e) => return Err(e),
                }
            }
        };
        recheck(t, &h, &self.st)?;
        Ok(h)
    }
}

/// Locks every existing file of the plan (see the module docs); each is
/// checked, as a single-file edit is, before the next is locked.
#[cold] // off the single-file path: LLVM optimizes it for size
#[cfg_attr(as_edit_small, optimize(size))]
pub(super) fn lock_all(txn: &Txn, plan: &Plan) -> Result<Vec<Option<Locked>>, TxnError> {
    let timeout = txn.options.lock_timeout;
    let deadline = now() + timeout;
    'round: for _ in 0..1000 {
        let mut order: Vec<((u64, u64), usize)> = Vec::new();
        for (f, file) in plan.files.iter().enumerate() {
            if let Some((t, _, false)) = &file.orig {
                // Unreadable here: try_open_locked names the error below.
                let id = rfs::statat(&t.dir, &t.name, AtFlags::SYMLINK_NOFOLLOW)
                    .map(|s| (s.st_dev, s.st_ino))
                    .unwrap_or_default();
                order.push((id, f));
            }
        }
        order.sort_unstable();
        let mut locked: Vec<Option<Locked>> = plan.files.iter().map(|_| None).collect();
        let mut dirs = Vec::new();
        for (k, &(id, f)) in order.iter().enumerate() {
            let (t, _, _) = plan.files[f].orig.as_ref().expect("filtered");
            let op = first_op(plan, f);
            let err = |e| TxnError::of(op, e);
            // Two files of the plan came to be one inode (linked since):
            // a second flock of it would wait on our own first.
            if k > 0 && order[k - 1].0 == id {
                let what = ConflictWhat::ChangedWhileEditing;
                let path = t.path.clone();
                return Err(err(FsError::Conflict { path, what }));
            }
            let Some((fd, st)) = try_open_locked(t, deadline, timeout, Some(id)).map_err(err)?
            else {
                continue 'round; // drops every lock taken: sort again
            };
            // Moved or deleted, content kept: the directory must let the
            // name go, the file's own write bit does not matter.
            if !plan.files[f].steps.is_empty() {
                meta::check_writable(t, &fd, &st).map_err(err)?;
            }
            // Deleted, moved or replaced: an inode flag keeps its name.
            if !matches!(plan.files[f].end, End::InPlace) {
                meta::check_removable(t, &fd).map_err(err)?;
            }
            meta::check_rename(t, &st, facts_of(&mut dirs, t)).map_err(err)?;
            locked[f] = Some(Locked { fd: Some(fd), st });
        }
        return Ok(locked);
    }
    let f = plan
        .files
        .iter()
        .position(|f| f.orig.is_some())
        .unwrap_or(0);
    let path = (plan.files[f].orig.as_ref()).map_or_else(Default::default, |o| o.0.path.clone());
    Err(TxnError::of(
        first_op(plan, f),
        FsError::KeptChanging { path },
    ))
}

/// The directory facts of `t`'s directory, read once per directory (its
/// readable descriptor is dropped: `--fsync` flushes by the file,
/// `txn::flush`, one descriptor less).
#[cfg_attr(as_edit_small, optimize(size))]
fn facts_of<'d>(dirs: &'d mut Vec<(*const OwnedFd, DirFacts)>, t: &Target) -> &'d DirFacts {
    let key = std::rc::Rc::as_ptr(&t.dir);
    let k = match dirs.iter().position(|d| d.0 == key) {
        Some(k) => k,
        None => {
            let d = meta::open_dir_readable(t);
            dirs.push((key, meta::dir_facts(t, d.as_ref())));
            dirs.len() - 1
        }
    };
    &dirs[k].1
}

/// Every original just before the commit takes its first step, in request
/// order: one that another writer changed, removed or renamed meanwhile is
/// refused with nothing done, the first such file named (the commit's own
/// re-check, file by file in commit order, named whichever it met first,
/// after rolling back the files committed before it).
#[cold]
#[cfg_attr(as_edit_small, optimize(size))]
pub(super) fn recheck_all(plan: &Plan, locked: &[Option<Locked>]) -> Result<(), TxnError> {
    // Test builds only: wait here for a byte on the FIFO at
    // AS_EDIT_TEST_TXN_PAUSE, so a test can change files before the commit.
    #[cfg(any(debug_assertions, feature = "fault-injection"))]
    if let Some(p) = std::env::var_os("AS_EDIT_TEST_TXN_PAUSE") {
        use std::io::Read;
        let _ = std::fs::File::open(p).and_then(|mut f| f.read(&mut [0u8; 1]));
    }
    // Each file at its first op: request order, with no sort. A move's
    // target that no op names (replaced with "overwrite") is checked at
    // that move: its commit re-checks it only after earlier steps.
    for (op, &f) in plan.file_of.iter().enumerate() {
        let to = plan.resolved[op].1.as_ref();
        for (g, file) in plan.files.iter().enumerate() {
            let named = match (g == f, &file.orig) {
                (true, _) => first_op(plan, f) == op,
                (false, Some((t, _, _))) => Some(&t.path) == to && !plan.file_of.contains(&g),
                _ => false,
            };
            match (named, &file.orig, &locked[g]) {
                (true, Some((t, _, _)), Some(l)) => {
                    l.held(t).map_err(|e| TxnError::of(op, e))?;
                }
                (true, Some(_), None) => {
                    recheck_link(plan, g).map_err(|e| TxnError::of(op, e))?;
                }
                _ => {}
            }
        }
    }
    Ok(())
}

/// The stale check of a symlink a delete removes (it is not locked: the
/// link is not the file): its name must still hold the link the plan saw,
/// else another writer put something there since (a file written there was
/// removed unseen, exit 0). A symlink still: a file made there may reuse
/// the freed link's inode number. Locked originals are checked by
/// `Locked::held`.
#[cfg_attr(as_edit_small, optimize(size))]
pub(super) fn recheck_link(plan: &Plan, f: usize) -> Result<(), FsError> {
    match &plan.files[f].orig {
        Some((t, id, true)) => {
            let now = rfs::statat(&t.dir, &t.name, AtFlags::SYMLINK_NOFOLLOW);
            // A directory (`plan::dir`) is not locked either: still that one.
            let want = match plan.files[f].tree {
                super::plan::Tree::No => rfs::FileType::Symlink,
                _ => rfs::FileType::Directory,
            };
            let link = |s: &Stat| rfs::FileType::from_raw_mode(s.st_mode) == want;
            match now.map(|s| (s.st_dev, s.st_ino, link(&s))) {
                Ok(n) if n == (id.0, id.1, true) => Ok(()),
                n => Err(FsError::Conflict {
                    path: t.path.clone(),
                    what: match n {
                        Ok(_) => ConflictWhat::ChangedWhileEditing,
                        Err(_) => ConflictWhat::Removed,
                    },
                }),
            }
        }
        _ => Ok(()),
    }
}
