//! `--fsync` in a transaction: once everything is committed, every file
//! system touched is flushed, once each (`syncfs`: the renames in every
//! directory, the data written by every temp).

use rustix::fs as rfs;
use std::os::fd::AsFd;

use super::lock::Locked;
use super::op::Txn;
use super::plan::Plan;
use super::prepare;

/// `--fsync`: every file system touched is flushed (the renames in every
/// directory). Best effort after the commit: `false` when a flush failed.
pub(super) fn flush(
    txn: &Txn,
    plan: &Plan,
    locked: &[Option<Locked>],
    temps: &[Option<crate::fs::temp::Temp<'_>>],
) -> bool {
    if !txn.options.fsync {
        return true;
    }
    let mut ok = true;
    let mut devs = Vec::new();
    // A removed symlink has no descriptor: its directory, opened for reading.
    let mut dirs = Vec::new();
    for (f, file) in plan.files.iter().enumerate() {
        if locked[f].is_none() && temps[f].is_none() {
            match crate::fs::meta::open_dir_readable(prepare::temp_dir(file)) {
                Some(d) => dirs.push(d),
                None => ok = false,
            }
        }
    }
    // By the files and temps (the directories are `O_PATH`): the original's
    // file system, and a moved file's new one.
    let held = locked.iter().flatten().filter_map(|l| l.fd.as_ref());
    let fds = (held.map(|fd| fd.as_fd()))
        .chain(temps.iter().flatten().map(|t| t.file().as_fd()))
        .chain(dirs.iter().map(|d| d.as_fd()));
    for fd in fds {
        let dev = rfs::fstat(fd).map(|s| s.st_dev).unwrap_or(0);
        if !devs.contains(&dev) {
            devs.push(dev);
            ok &= rfs::syncfs(fd).is_ok();
        }
    }
    ok
}
