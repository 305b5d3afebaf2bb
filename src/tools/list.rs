//! `list`: `{"op":"list","path":P,"depth":1,"hidden":true,"vcs":false,
//! "gitignore":false,"offset":0,"limit":1000}`.
//!
//! Answer: `{"entries":[{"path","type","size","mtime_ns"}],"total":N,"truncated":bool}`:
//! the entries under P (not P itself), each path P joined with the
//! entry's path relative to P (the rule `glob` and `grep` follow: P as
//! given, one `/` between), sorted bytewise by path, from `lstat`;
//! `entries` holds those from `offset`, at most `limit` of them, and
//! `total` counts all. The walk is `walk.rs`'s with every entry yielded:
//! `depth` ≥ 1 descends that many levels, never through a symlink (a
//! symlink to a directory is listed as `symlink`); a directory already met
//! on the way down (by device and inode: a bind mount of an ancestor) is
//! listed but not entered, as are `.git`, `.hg` and `.svn` unless
//! `"vcs":true`, and pseudo file systems (proc, sysfs, devtmpfs, …; a P on
//! one is listed, not descended). `hidden:false` leaves out names starting
//! with `.` (and what is under them) and says how many names it left out
//! in `"hidden_count"`; `gitignore:true` leaves out what git ignores, as
//! for `glob`. A directory that cannot be read is listed but not entered,
//! and counted in `"unreadable"` (absent when 0).
//!
//! The listing is exact: the walk visits the tree in sorted order (each
//! directory's names sorted as read), counting every entry and keeping
//! only those of the page, so pages joined by `next` are the whole
//! listing, and memory is the names of the directories on the current
//! path, never the tree. Past the walk's bounds ([`super::walk::MAX_ENTRIES`]
//! directory entries, [`super::walk::MAX_PENDING`] bytes of names held)
//! the walk stops: `"walk_limit":true` says `total`
//! counts only what was walked and no `offset` reaches the rest.
//!
//! P itself is followed if it is a symlink. P missing, or not a directory,
//! is `file_not_found` with a detail saying which, never an empty list.
//! Cut by `max_bytes` or `limit` after a whole entry: `"truncated":true,
//! "next":{"offset":K}`. An entry gone between its directory's read and
//! its `lstat` is counted in `total` but not shown.

use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;

use rustix::fs::{self as rfs, AtFlags, FileType, Mode, OFlags};

use super::answer::{next, Page};
use super::stat::{fields, too_small};
use super::walk::{self, Options, StartDir};
use super::{name, place, List, Root};
use crate::protocol::{display_path, ErrorKind, Failure};

#[inline(never)] // its walk at opt-level 3, not inlined into the size-built `tools::answer`
pub(super) fn run(req: &List, root: Option<&Root>, max_bytes: u64) -> Result<String, Failure> {
    let dir = place::dir(&req.path, root)?;
    let fd = open_read(&dir, c".").map_err(|e| {
        Failure::new(
            ErrorKind::ReadFailed,
            format!("reading the directory {}: {e}", display_path(&req.path)),
        )
    })?;
    drop(dir); // one descriptor fewer for the walk
    let start = StartDir {
        fd,
        abs: req
            .gitignore
            .then(|| std::fs::canonicalize(&req.path).ok())
            .flatten(),
        root: root.map(|(r, _)| r.clone()),
    };
    let opts = Options {
        vcs: req.vcs,
        hidden: req.hidden,
        gitignore: req.gitignore,
        all: true,
        depth: req.depth,
        rg: false,
    };
    // The tail at its longest: every count at its widest, and a `next`.
    let widest = ",\"total\":18446744073709551615,\"hidden_count\":18446744073709551615,\
                  \"unreadable\":18446744073709551615,\"pseudo_not_entered\":18446744073709551615,\
                  \"walk_limit\":true";
    let reserve = widest.len() + next(Some(&[("offset", u64::MAX)])).len();
    let mut page = Page::new(max_bytes, "", "entries");
    let base = req.path.as_os_str().as_bytes();
    let end = req.offset.saturating_add(req.limit);
    let (mut total, mut at, mut full, mut refusal) = (0u64, req.offset, false, None);
    let out = walk::walk(start, opts, |f| {
        let i = total;
        total += 1;
        if i < req.offset || i >= end || full {
            return true;
        }
        let Ok(st) = rfs::statat(f.dir, f.name, AtFlags::SYMLINK_NOFOLLOW) else {
            at += 1; // gone since its directory was read
            return true;
        };
        let mut e = String::from("{");
        name::field(&mut e, "path", &super::find::shown(Some(base), f.rel));
        fields(&mut e, FileType::from_raw_mode(st.st_mode), &st);
        e.push('}');
        if page.push(&e, reserve) {
            at += 1;
        } else {
            full = true;
            if page.kept() == 0 {
                refusal = Some(too_small(max_bytes, page.needs(e.len(), reserve)));
                return false;
            }
        }
        true
    });
    if let Some(r) = refusal {
        return Err(r);
    }
    super::find::refuse_skip(&out, Some(base))?;
    let mut tail = format!(",\"total\":{total}");
    if !req.hidden {
        tail += &format!(",\"hidden_count\":{}", out.hidden);
    }
    super::find_answer::walk_counts(&mut tail, out.unreadable, out.pseudo);
    if out.truncated {
        tail += ",\"walk_limit\":true";
    }
    let more = at < total;
    tail += &next(more.then_some(&[("offset", at)][..]));
    Ok(page.finish(&tail))
}

/// Opens directory `name` in `dir` for reading, never through a symlink
/// and never blocking.
fn open_read(dir: &OwnedFd, name: &std::ffi::CStr) -> rustix::io::Result<OwnedFd> {
    let flags =
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    rfs::openat(dir, name, flags, Mode::empty())
}
