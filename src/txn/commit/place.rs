//! One file's commit steps (`commit`): its temp named (with its
//! metadata and mode), then its name taken, replaced, or let go.

use std::ffi::CStr;
use std::os::fd::{AsRawFd, OwnedFd};

use rustix::fs::{self as rfs, AtFlags, Mode, OFlags};
use rustix::io::Errno;

use crate::fs::temp::{temp_name, Temp};
use crate::fs::{FsError, WriteStep};
use crate::protocol::{display_path, ErrorKind, Failure};

use super::super::lock::Locked;
use super::super::plan::{Dest, End, Tree};
use super::super::prepare::temp_dir;
use super::super::undo::{self, Back};
use super::super::TxnError;
use super::{Commit, D};

/// File `f`'s steps, its original `held` (checked and locked); `false`:
/// a plain move the kernel refused across mounts, nothing of it done but
/// directories made.
#[cold] // off the single-file path: LLVM optimizes it for size
#[cfg_attr(as_edit_small, optimize(size))]
pub(super) fn place<'p>(
    c: &mut Commit<'p>,
    txn: &super::super::Txn,
    f: usize,
    locked: &[Option<Locked>],
    temps: &mut [Option<Temp<'p>>],
    hidden: Option<&CStr>,
    held: Option<&OwnedFd>,
) -> Result<bool, TxnError> {
    let plan = c.plan;
    let file = &plan.files[f];
    let op = file.last;
    let path = temp_dir(file).path.clone();
    let io = |step: WriteStep, errno: Errno| io_err(op, &path, step, errno);
    let fsync = txn.options.fsync;
    if let Some(temp) = temps[f].as_mut() {
        if let (Some(l), Some(fd)) = (&locked[f], held) {
            crate::fs::meta::copy_metadata(fd, temp.file(), &l.st)
                .map_err(|e| io(WriteStep::Metadata, e))?;
        }
        // A create's explicit mode wins over the replaced file's; a new
        // file without one gets the transaction's default. Both before the
        // umask.
        let mode = match (created_mode(txn, plan, f), &locked[f]) {
            (Some(m), _) => Some(m),
            (None, None) if file.orig.is_none() => Some(txn.new_modes.file),
            _ => None,
        };
        if let Some(mode) = mode {
            let mask = rustix::process::umask(Mode::empty());
            rustix::process::umask(mask);
            rfs::fchmod(temp.file(), Mode::from_raw_mode(mode & !mask.bits()))
                .map_err(|e| io(WriteStep::Metadata, e))?;
        }
        if fsync {
            rfs::fsync(temp.file()).map_err(|e| io(WriteStep::Flush, e))?;
        }
        c.step().map_err(|e| io(WriteStep::NameTemp, e))?;
        let name = temp.named(fsync).map_err(|e| io(WriteStep::NameTemp, e))?;
        undo::temp(temp_dir(file).dir.as_raw_fd(), name.clone());
    }
    let tname = temps[f]
        .as_mut()
        .map(|t| t.named(false).expect("named").clone());
    let rename = |e| io(WriteStep::Rename, e);
    match &file.end {
        End::InPlace => {
            let (Some(h), Some((t, _, _))) = (&tname, &file.orig) else {
                return Ok(true);
            };
            if c.replace(f, D::Orig(f), h, D::Orig(f), &t.name, true)
                .map_err(rename)?
            {
                temps[f].as_mut().expect("temp").renamed();
            }
        }
        End::Gone => {
            let replaced = plan
                .files
                .iter()
                .any(|g| matches!(&g.end, End::At(d) if d.replaces == Some(f)));
            if file.orig.is_some() && !replaced {
                // A directory's tree is removed once all is committed.
                let dir = file.tree != Tree::No;
                let h = c.hide(f, !dir).map_err(|e| io(WriteStep::Entry, e))?;
                if dir {
                    c.trees.push((f, h));
                }
            }
        }
        End::At(d) => {
            // The missing directories, outermost first.
            let mut at = D::Dest(f);
            // A mkdir's directories: 0777 before the umask, as mkdir(1).
            let mkdir = match file.tree {
                Tree::Mkdir { exist_ok, .. } => Some(exist_ok),
                _ => None,
            };
            let dmode = match mkdir {
                Some(_) => 0o777,
                None => txn.new_modes.dir,
            };
            // No temp is renamed here: the detail says a directory.
            let mkdir_err = |e| io(WriteStep::MakeDir, e);
            for name in &d.missing {
                let back = Back::Rmdir(c.raw(at), name.clone());
                c.step().map_err(mkdir_err)?;
                let mode = Mode::from_raw_mode(dmode);
                match rfs::mkdirat(c.dir(at), name.as_c_str(), mode) {
                    Ok(()) => c.log(f, back),
                    Err(Errno::EXIST) => {}
                    Err(e) => return Err(mkdir_err(e)),
                }
                let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
                let fd = rfs::openat(c.dir(at), name.as_c_str(), flags, Mode::empty())
                    .map_err(mkdir_err)?;
                c.made.push(fd);
                at = D::Made(c.made.len() - 1);
            }
            if let Some(exist_ok) = mkdir {
                let back = Back::Rmdir(c.raw(at), d.t.name.clone());
                c.step().map_err(mkdir_err)?;
                match rfs::mkdirat(c.dir(at), d.t.name.as_c_str(), Mode::from_raw_mode(0o777)) {
                    Ok(()) => c.log(f, back),
                    // `-p`: made meanwhile (or by an earlier op) is fine if a directory.
                    Err(Errno::EXIST)
                        if exist_ok
                            && rfs::statat(c.dir(at), d.t.name.as_c_str(), AtFlags::empty())
                                .is_ok_and(|s| {
                                    rfs::FileType::from_raw_mode(s.st_mode)
                                        == rfs::FileType::Directory
                                }) => {}
                    Err(e) => return Err(mkdir_err(e)),
                }
                return Ok(true);
            }
            match (&tname, &file.orig) {
                (Some(h), _) => {
                    if d.replaces.is_some() {
                        if c.replace(f, D::Dest(f), h, at, &d.t.name, true)
                            .map_err(rename)?
                        {
                            temps[f].as_mut().expect("temp").renamed();
                        }
                    } else {
                        let back = Back::Unlink(c.raw(at), d.t.name.clone());
                        c.rename(D::Dest(f), h, at, &d.t.name, true)
                            .map_err(rename)?;
                        c.log(f, back);
                        temps[f].as_mut().expect("temp").renamed();
                    }
                    if let (Some((t, _, _)), None) = (&file.orig, hidden) {
                        c.hide(f, true)
                            .map_err(|e| io_err(op, &t.path, WriteStep::Entry, e))?;
                    }
                }
                (None, Some((t, _, _))) => {
                    let from = hidden.unwrap_or(&t.name);
                    let r = if d.replaces.is_some() {
                        c.replace(f, D::Orig(f), from, at, &d.t.name, false)
                            .map(|_| ())
                    } else {
                        let (ra, ro) = (c.raw(at), c.raw(D::Orig(f)));
                        let back = Back::Rename(ra, d.t.name.clone(), ro, from.into(), true);
                        let r = c.rename(D::Orig(f), from, at, &d.t.name, true);
                        if r.is_ok() {
                            c.log(f, back);
                        }
                        r
                    };
                    match r {
                        // A directory is not copied: refused, rolled back.
                        Err(Errno::XDEV) if file.tree != Tree::No => {
                            return Err(TxnError::fail(op, Failure::new(ErrorKind::WriteFailed, format!("{} is on another file system (or mount) than {}: a directory is moved only by rename, never copied; nothing was changed", display_path(&t.path), display_path(&d.t.path)))))
                        }
                        // A symlink is made again there, never its target copied.
                        Err(Errno::XDEV) if file.is_link() => {
                            relink(c, f, from, at, d, hidden).map_err(rename)?
                        }
                        Err(Errno::XDEV) => return Ok(false),
                        // The entry named (not where it was going): a
                        // mount point cannot be renamed (EBUSY).
                        Err(e) if d.replaces.is_none() => {
                            return Err(io_err(op, &t.path, WriteStep::Entry, e))
                        }
                        r => r.map_err(rename)?,
                    }
                }
                (None, None) => {}
            }
        }
    }
    Ok(true)
}

/// The symlink file `f` (named `from` in its directory) moved where the
/// kernel refused the rename (EXDEV): a link with the same target made
/// at `d`'s name in `at` (taking it as the rename would: without
/// `overwrite` only if free, else over what is there, kept under a hidden
/// name until all is committed), then the original link hidden and
/// removed with the other hidden names. Each step logged with its inverse.
#[cold]
fn relink(
    c: &mut Commit<'_>,
    f: usize,
    from: &CStr,
    at: D,
    d: &Dest,
    hidden: Option<&CStr>,
) -> Result<(), Errno> {
    let target = rfs::readlinkat(c.dir(D::Orig(f)), from, Vec::new())?;
    let name = match d.replaces {
        Some(_) => temp_name(),
        None => d.t.name.clone(),
    };
    let back = Back::Unlink(c.raw(at), name.clone());
    c.step()?;
    rfs::symlinkat(&target, c.dir(at), &name)?;
    c.log(f, back);
    if d.replaces.is_some() {
        c.replace(f, at, &name, at, &d.t.name, false)?;
    }
    match hidden {
        None => drop(c.hide(f, true)?),
        Some(h) => c.hidden.push((D::Orig(f), h.into())),
    }
    Ok(())
}

/// A commit step's failure for op `op` at `path`; EEXIST: the name was
/// taken by someone else meanwhile.
#[cfg_attr(as_edit_small, optimize(size))]
fn io_err(op: usize, path: &std::path::Path, step: WriteStep, errno: Errno) -> TxnError {
    if errno == Errno::EXIST {
        let p = display_path(path);
        let f = Failure::new(
            ErrorKind::FileExists,
            format!("{p} appeared during the commit"),
        );
        return TxnError::fail(op, f);
    }
    let path = path.to_owned();
    TxnError::of(op, FsError::Write { path, step, errno })
}

/// The `mode` of the last `create` of file `f` that gives one: the mode
/// its new content gets (a later create without one keeps it).
fn created_mode(txn: &super::super::Txn, plan: &super::super::plan::Plan, f: usize) -> Option<u32> {
    let file = &plan.files[f];
    file.steps
        .iter()
        .rev()
        .find_map(|&i| match &txn.ops[i].kind {
            super::super::op::OpKind::Create { mode, .. } => *mode,
            _ => None,
        })
}
