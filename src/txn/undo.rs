//! The commit's undo log, kept where the panic hook and the out-of-memory
//! exit (`main.rs`) can reach it: a panic inside the commit phase (the
//! release build aborts, it never unwinds) would otherwise exit with some
//! renames done. Every step the commit takes logs its inverse here first
//! by raw descriptor and name (allocated by the commit, before the step);
//! a failure undoes the log newest first ([`take`], `commit`), and so does
//! [`undo_on_exit`] from the hook, allocating nothing (a borrow try, then
//! `renameat2`, `unlinkat` and `statat` on the names held). After a full
//! undo the hook also removes the temps' hidden names; after an undo that
//! failed it leaves every hidden name (an original may be under one).

use std::cell::RefCell;
use std::ffi::{CStr, CString};
use std::os::fd::{BorrowedFd, RawFd};

use rustix::fs::{self as rfs, AtFlags, RenameFlags};
use rustix::io::Errno;

/// The inverse of a step, by directory descriptor and name.
pub(super) enum Back {
    /// Rename `.1` in `.0` to `.3` in `.2` (`.4`: without replacing).
    Rename(RawFd, CString, RawFd, CString, bool),
    Exchange(RawFd, CString, RawFd, CString),
    Unlink(RawFd, CString),
    Rmdir(RawFd, CString),
}

struct Journal {
    /// Each step's inverse, for its file.
    log: Vec<(usize, Back)>,
    /// The temps' hidden names: removed by the hook after a full undo.
    temps: Vec<(RawFd, CString)>,
}

thread_local! {
    // Per thread: the hook runs on the panicking thread, and a library
    // caller's transactions on other threads keep their own logs.
    static JOURNAL: RefCell<Journal> = const {
        RefCell::new(Journal {
            log: Vec::new(),
            temps: Vec::new(),
        })
    };
}

fn with<R>(f: impl FnOnce(&mut Journal) -> R) -> R {
    JOURNAL.with(|j| f(&mut j.borrow_mut()))
}

/// A new commit: room for `steps` entries, so that a push allocates
/// nothing while the journal is borrowed (the out-of-memory exit cannot
/// read a journal a failed allocation holds borrowed).
pub(super) fn begin(steps: usize) {
    with(|j| {
        j.log.clear();
        j.temps.clear();
        j.log.reserve(steps);
        j.temps.reserve(steps);
    })
}

pub(super) fn push(f: usize, b: Back) {
    with(|j| j.log.push((f, b)))
}

/// A temp got the hidden name `name` in `dir`.
pub(super) fn temp(dir: RawFd, name: CString) {
    with(|j| j.temps.push((dir, name)))
}

/// The log, newest last, for the commit's own rollback; the journal is
/// left empty (nothing for the hook to undo).
pub(super) fn take() -> Vec<(usize, Back)> {
    with(|j| {
        j.temps.clear();
        std::mem::take(&mut j.log)
    })
}

/// Everything committed: nothing to undo any more.
pub(super) fn end() {
    with(|j| {
        j.log.clear();
        j.temps.clear();
    })
}

/// From the panic hook and the out-of-memory exit: undoes a commit in
/// progress, newest first. `None`: none was; `Some(true)`: every step
/// undone (every file old, no hidden name left); `Some(false)`: some step
/// could not be (or the journal was mid-update), and the hidden names
/// stay: the caller must then not remove its registered temp either (after
/// an exchange that name holds an original). Allocates nothing.
#[cfg_attr(as_edit_small, optimize(size))]
pub fn undo_on_exit() -> Option<bool> {
    JOURNAL.try_with(undo_all).ok().flatten()
}

fn undo_all(j: &RefCell<Journal>) -> Option<bool> {
    // Borrowed by the panicking push itself: nothing known, every name stays.
    let Ok(g) = j.try_borrow() else {
        return Some(false);
    };
    if g.log.is_empty() {
        return None;
    }
    let ok = g.log.iter().rev().all(|(_, b)| undo(b).is_ok());
    if ok {
        for (d, n) in &g.temps {
            let _ = rfs::unlinkat(fd(*d), n.as_c_str(), AtFlags::empty());
        }
    }
    Some(ok)
}

fn fd<'a>(raw: RawFd) -> BorrowedFd<'a> {
    // SAFETY: every descriptor logged is the plan's or the commit's, both
    // alive until the commit returns: the rollback runs inside it, and the
    // hook runs on the panicking thread before anything is dropped (the
    // process then exits).
    unsafe { BorrowedFd::borrow_raw(raw) }
}

/// Undoes one step. A hidden hard link back onto its own original (the
/// no-exchange path): rename(2) would do nothing and leave both names,
/// so the link is removed instead.
#[cfg_attr(as_edit_small, optimize(size))]
pub(super) fn undo(b: &Back) -> Result<(), Errno> {
    match b {
        Back::Rename(a, an, b, bn, noreplace) => {
            let st = |d: RawFd, n: &CStr| {
                rfs::statat(fd(d), n, AtFlags::SYMLINK_NOFOLLOW).map(|s| (s.st_dev, s.st_ino))
            };
            if !noreplace && st(*a, an).is_ok() && st(*a, an).ok() == st(*b, bn).ok() {
                return rfs::unlinkat(fd(*a), an, AtFlags::empty());
            }
            let flags = if *noreplace {
                RenameFlags::NOREPLACE
            } else {
                RenameFlags::empty()
            };
            match rfs::renameat_with(fd(*a), an, fd(*b), bn, flags) {
                Err(Errno::INVAL) if *noreplace => {
                    rfs::linkat(fd(*a), an, fd(*b), bn, AtFlags::empty())?;
                    rfs::unlinkat(fd(*a), an, AtFlags::empty())
                }
                r => r,
            }
        }
        Back::Exchange(a, an, b, bn) => {
            rfs::renameat_with(fd(*a), an, fd(*b), bn, RenameFlags::EXCHANGE)
        }
        Back::Unlink(a, an) => rfs::unlinkat(fd(*a), an, AtFlags::empty()),
        // A directory another writer put an entry in since we made it (a
        // racing creator of the same new directory) is theirs now too: it
        // stays, and that is no failed undo (it failed as internal_error).
        Back::Rmdir(a, an) => match rfs::unlinkat(fd(*a), an, AtFlags::REMOVEDIR) {
            Err(Errno::NOTEMPTY | Errno::EXIST) => Ok(()),
            r => r,
        },
    }
}
