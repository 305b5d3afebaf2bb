//! The commit phase: every file in order of its last op, each step logged
//! with its inverse; on a failure the log is undone newest first.
//!
//! An original is never left without a name until the transaction is
//! complete: an edit's temp is swapped with it by `renameat2(
//! RENAME_EXCHANGE)` (the original then sits under the temp's hidden name),
//! a deleted or moved-away file is renamed to a hidden name, and where the
//! exchange is refused (`EINVAL`: a file system without it) the original
//! is first hard-linked to a hidden name and the temp renamed over it. A
//! rollback renames or exchanges those names back: the original inode
//! survives, with its bytes, mode, owner and xattrs. A name that must not
//! be overwritten (a create, a move without `overwrite`) is taken by
//! `RENAME_NOREPLACE` (or `link` + `unlink` without it); a moved original
//! whose name a file placed before it takes (a swap) is hidden first. Only
//! when the commit is complete are the hidden names (`.as-edit-<hex>.tmp`) removed.

use std::ffi::{CStr, CString};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};

use rustix::fs::{self as rfs, AtFlags, RenameFlags};
use rustix::io::Errno;

use crate::fs::temp::{temp_name, Temp};
use crate::protocol::{ErrorKind, Failure};

use super::lock::first_op;
use super::lock::{Held, Locked};
use super::plan::{Dest, End, Plan};
use super::prepare::temp_dir;
use super::undo::{self, Back};

mod place;
pub(in crate::txn) mod tree;
use super::TxnError;
use place::place;

/// A directory a step names: a file's original's, its destination's base,
/// or one the commit made.
#[derive(Clone, Copy)]
enum D {
    Orig(usize),
    Dest(usize),
    Made(usize),
}

struct Commit<'p> {
    plan: &'p Plan,
    made: Vec<OwnedFd>,
    /// Hidden names holding originals, removed once all is committed.
    hidden: Vec<(D, CString)>,
    /// Directories deleted: file and hidden name, each tree removed once
    /// all is committed (`tree`).
    trees: Vec<(usize, CString)>,
    steps: u32,
    /// Originals released after staging and locked again by the hiding
    /// of a moved original (below), kept until their file's commit.
    again: Vec<Option<OwnedFd>>,
}

/// Test builds only: the k-th commit step (`AS_EDIT_TEST_TXN_FAIL=k`) or
/// undo step (`AS_EDIT_TEST_TXN_UNDO_FAIL=k`) fails with EIO.
#[cfg(any(debug_assertions, feature = "fault-injection"))]
fn injected(var: &str, n: u32) -> Result<(), Errno> {
    match std::env::var(var).ok().and_then(|v| v.parse::<u32>().ok()) {
        Some(k) if k == n => Err(Errno::IO),
        _ => Ok(()),
    }
}

/// File `f`'s original's name and directory.
fn orig(plan: &Plan, f: usize) -> &crate::fs::Target {
    &plan.files[f].orig.as_ref().expect("an original").0
}

impl Commit<'_> {
    fn dir(&self, d: D) -> BorrowedFd<'_> {
        match d {
            D::Orig(f) => orig(self.plan, f).dir.as_fd(),
            D::Dest(f) => match &self.plan.files[f].end {
                End::At(d) => d.t.dir.as_fd(),
                _ => unreachable!("a destination"),
            },
            D::Made(k) => self.made[k].as_fd(),
        }
    }

    fn raw(&self, d: D) -> RawFd {
        self.dir(d).as_raw_fd()
    }

    /// Logs the inverse of the step just done (`undo`: the hook sees it).
    fn log(&self, f: usize, b: Back) {
        undo::push(f, b);
    }

    fn step(&mut self) -> Result<(), Errno> {
        self.steps += 1;
        #[cfg(any(debug_assertions, feature = "fault-injection"))]
        {
            injected("AS_EDIT_TEST_TXN_FAIL", self.steps)?;
            // A panic at step k: the hook must undo steps 1 to k-1.
            if injected("AS_EDIT_TEST_TXN_PANIC", self.steps).is_err() {
                panic!("injected commit panic");
            }
        }
        Ok(())
    }

    #[cfg_attr(as_edit_small, optimize(size))]
    fn rename(&mut self, a: D, an: &CStr, b: D, bn: &CStr, noreplace: bool) -> Result<(), Errno> {
        self.step()?;
        let (da, db) = (self.dir(a), self.dir(b));
        if !noreplace {
            return rfs::renameat(da, an, db, bn);
        }
        match rfs::renameat_with(da, an, db, bn, RenameFlags::NOREPLACE) {
            // No RENAME_NOREPLACE here: link refuses an existing name too.
            Err(Errno::INVAL) | Err(Errno::NOSYS) => {
                rfs::linkat(da, an, db, bn, AtFlags::empty())?;
                rfs::unlinkat(da, an, AtFlags::empty())
            }
            r => r,
        }
    }

    /// Puts `a` (new content) at `b`, keeping what `b` held reachable:
    /// under `a`'s name after an exchange (`a_is_temp`: the temp's drop
    /// removes it), else under a hidden hard link in `b`'s directory.
    #[cfg_attr(as_edit_small, optimize(size))]
    fn replace(
        &mut self,
        f: usize,
        a: D,
        an: &CStr,
        b: D,
        bn: &CStr,
        a_is_temp: bool,
    ) -> Result<bool, Errno> {
        if a_is_temp {
            // Every inverse is built before its step: an allocation failing
            // between a step and its log would leave the step unundone.
            let back = Back::Exchange(self.raw(a), an.into(), self.raw(b), bn.into());
            #[cfg(any(debug_assertions, feature = "fault-injection"))]
            let no_x = std::env::var_os("AS_EDIT_TEST_NO_EXCHANGE").is_some();
            self.step()?;
            let flags = RenameFlags::EXCHANGE;
            let r = rfs::renameat_with(self.dir(a), an, self.dir(b), bn, flags);
            // Test builds only: as on a file system without RENAME_EXCHANGE
            // (checked after the call so the exchange is really undone).
            #[cfg(any(debug_assertions, feature = "fault-injection"))]
            let r = match (r, no_x) {
                (Ok(()), true) => rfs::renameat_with(self.dir(a), an, self.dir(b), bn, flags)
                    .and(Err(Errno::INVAL)),
                (r, _) => r,
            };
            match r {
                Ok(()) => {
                    self.log(f, back);
                    return Ok(false);
                }
                Err(Errno::INVAL) | Err(Errno::NOSYS) => {}
                Err(e) => return Err(e),
            }
        }
        let (bk, rb) = (temp_name(), self.raw(b));
        let back = Back::Rename(rb, bk.clone(), rb, bn.into(), false);
        let moved = (!a_is_temp).then(|| Back::Rename(rb, bn.into(), self.raw(a), an.into(), true));
        self.hidden.reserve(1);
        self.step()?;
        rfs::linkat(self.dir(b), bn, self.dir(b), &bk, AtFlags::empty())?;
        self.log(f, back);
        self.hidden.push((b, bk));
        self.rename(a, an, b, bn, false)?;
        if let Some(back) = moved {
            self.log(f, back);
        }
        Ok(true)
    }

    /// Renames file `f`'s original name away to a hidden one (`gone`:
    /// removed once all is committed, else the commit moves it on).
    #[cfg_attr(as_edit_small, optimize(size))]
    fn hide(&mut self, f: usize, gone: bool) -> Result<CString, Errno> {
        let name = orig(self.plan, f).name.clone();
        let (h, d) = (temp_name(), self.raw(D::Orig(f)));
        let back = Back::Rename(d, h.clone(), d, name.clone(), true);
        self.hidden.reserve(1);
        self.rename(D::Orig(f), &name, D::Orig(f), &h, true)?;
        self.log(f, back);
        if gone {
            self.hidden.push((D::Orig(f), h.clone()));
        }
        Ok(h)
    }
}

/// Commits every file; on a failure undoes what was done and says so.
/// Returns whether everything is known durable (`--fsync`), and the hidden
/// names of deleted trees that could not be removed in full. `done`: the
/// result's count and files, for an exit once committed (`fs::committed`).
#[cold] // off the single-file path: LLVM optimizes it for size
#[cfg_attr(as_edit_small, optimize(size))]
pub(super) fn commit<'p>(
    txn: &super::Txn,
    plan: &'p Plan,
    locked: &[Option<Locked>],
    temps: &mut [Option<Temp<'p>>],
    done: (u64, usize),
) -> Result<(bool, Vec<std::path::PathBuf>), TxnError> {
    super::lock::recheck_all(plan, locked)?;
    let mut c = Commit {
        plan,
        made: Vec::new(),
        hidden: Vec::new(),
        trees: Vec::new(),
        steps: 0,
        again: plan.files.iter().map(|_| None).collect(),
    };
    let mut order: Vec<usize> = (0..plan.files.len()).collect();
    order.sort_by_key(|f| plan.files[*f].last);
    // At most four steps per file (six with a copy across mounts) and one
    // per directory it makes.
    let made: usize = (plan.files.iter())
        .map(|f| match &f.end {
            End::At(d) => d.missing.len(),
            _ => 0,
        })
        .sum();
    undo::begin(6 * plan.files.len() + made);
    let mut failed = None;
    // A moved original whose name a file placed earlier takes leaves it
    // first (a swap, a move then an edit elsewhere); other moves stay one
    // rename, so a crash finds them at one of their two paths.
    let mut src: Vec<Option<CString>> = plan.files.iter().map(|_| None).collect();
    for (k, &f) in order.iter().enumerate() {
        let file = &plan.files[f];
        let taken = |t: &crate::fs::Target| {
            (order[..k].iter())
                .any(|&g| matches!(&plan.files[g].end, End::At(d) if d.t.path == t.path))
        };
        if let (Some((t, _, _)), End::At(_)) = (&file.orig, &file.end) {
            // A directory or a symlink is not locked: rechecked, then hidden.
            let dir = file.tree != super::plan::Tree::No || file.is_link();
            if !taken(t) || (locked[f].is_none() && !dir) {
                continue;
            }
            let r = match &locked[f] {
                Some(l) => l.held(t).map(Some),
                None => super::lock::recheck_link(plan, f).map(|()| None),
            };
            let r = r.map_err(|e| TxnError::of(first_op(plan, f), e));
            match r.and_then(|held| {
                let h = c.hide(f, temps[f].is_some());
                if let Some(Held::Again(fd)) = held {
                    c.again[f] = Some(fd);
                }
                h.map_err(|e| super::prepare::hide_err(plan, f, e))
            }) {
                Ok(h) => src[f] = Some(h),
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
    }
    for &f in order.iter().filter(|_| failed.is_none()) {
        if let Err(e) = commit_file(&mut c, txn, f, locked, temps, src[f].as_deref()) {
            failed = Some(e);
            break;
        }
    }
    let Some(mut err) = failed else {
        undo::end(); // complete: a panic from here on leaves hidden names only
        crate::fs::set_committed(done.0, Some(done.1 as u64));
        for (d, h) in std::mem::take(&mut c.hidden) {
            let _ = rfs::unlinkat(c.dir(d), &h, AtFlags::empty());
        }
        // Deleted trees, last: a file deleted inside one was hidden there.
        let mut left = Vec::new();
        for (f, h) in std::mem::take(&mut c.trees) {
            if tree::remove(c.dir(D::Orig(f)), &h).is_err() {
                let t = orig(plan, f);
                left.push(t.path.with_file_name(
                    <std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(h.as_bytes()),
                ));
            }
        }
        return Ok((super::flush::flush(txn, plan, locked, temps), left));
    };
    // Newest first; a failed undo leaves its file (partly) new.
    let mut new = vec![false; plan.files.len()];
    let log = undo::take();
    for (k, (f, b)) in log.iter().rev().enumerate() {
        #[cfg(any(debug_assertions, feature = "fault-injection"))]
        let fail = injected("AS_EDIT_TEST_TXN_UNDO_FAIL", k as u32 + 1).is_err();
        #[cfg(not(any(debug_assertions, feature = "fault-injection")))]
        let fail = k == usize::MAX;
        if fail || undo::undo(b).is_err() {
            new[*f] = true;
            // An exchanged original under the temp's name must stay.
            if let Some(t) = temps[*f].as_mut() {
                t.renamed();
            }
        }
    }
    err.rolled_back = true;
    if new.iter().any(|n| *n) {
        let partial = (0..plan.files.len())
            .map(|f| (super::file_path(plan, f), new[f]))
            .collect();
        *err.failure = Failure::new(
            ErrorKind::InternalError,
            format!(
                "commit failed ({}) and could not be fully undone",
                err.failure
                    .detail
                    .as_deref()
                    .unwrap_or(err.failure.kind.token())
            ),
        );
        err.partial = Some(partial);
    }
    Err(err)
}

#[cold] // off the single-file path: LLVM optimizes it for size
#[cfg_attr(as_edit_small, optimize(size))]
fn commit_file<'p>(
    c: &mut Commit<'p>,
    txn: &super::Txn,
    f: usize,
    locked: &[Option<Locked>],
    temps: &mut [Option<Temp<'p>>],
    hidden: Option<&CStr>,
) -> Result<(), TxnError> {
    let plan = c.plan;
    let file = &plan.files[f];
    // Replaced by a move onto its name: that move's commit removed it.
    if plan
        .files
        .iter()
        .any(|g| matches!(&g.end, End::At(d) if d.replaces == Some(f)))
    {
        return Ok(());
    }
    // A symlink a delete removes: still that link (not locked).
    if hidden.is_none() && locked[f].is_none() {
        let r = super::lock::recheck_link(plan, f);
        r.map_err(|e| TxnError::of(first_op(plan, f), e))?;
    }
    // The original, checked and locked until this file's steps are done.
    let op = file.last;
    let held = match (&file.orig, &locked[f], hidden) {
        (Some((t, _, _)), Some(l), None) => {
            let h = l.held(t);
            Some(h.map_err(|e| TxnError::of(first_op(plan, f), e))?)
        }
        (_, Some(l), Some(_)) => Some(match (c.again[f].take(), &l.fd) {
            (Some(fd), _) => Held::Again(fd),
            (None, Some(fd)) => Held::Kept(fd),
            (None, None) => unreachable!("hidden: held or locked again"),
        }),
        _ => None,
    };
    // A plain move the kernel refuses across mounts (EXDEV: another file
    // system, or another mount of this one, a bind mount) is copied into a
    // temp where it goes and committed as an edited move (the kernel's
    // answer decides, not st_dev: a bind mount shares its st_dev).
    // The file it replaces, checked and locked until the rename over it
    // (before any step: a copy's retry finds it hard-linked by the first).
    let mut _replaced = None;
    if let End::At(Dest {
        replaces: Some(g), ..
    }) = &file.end
    {
        if let (Some((t, _, _)), Some(l)) = (&plan.files[*g].orig, &locked[*g]) {
            _replaced = Some(l.held(t).map_err(|e| TxnError::of(op, e))?);
        }
    }
    while !place(c, txn, f, locked, temps, hidden, held.as_deref())? {
        let fd = held.as_deref().expect("a moved original is held");
        let copy = super::prepare::copy_temp(temp_dir(file), fd);
        temps[f] = Some(copy.map_err(|e| TxnError::of(op, e))?);
        if let Some(h) = hidden {
            // Hidden before without a temp: now it goes once all is done.
            c.hidden.push((D::Orig(f), h.into()));
        }
    }
    Ok(())
}
