//! `list`: `{"op":"list","path":P,"depth":1,"hidden":true,"vcs":false,"offset":0,"limit":1000}`.
//!
//! Answer: `{"entries":[{"path","type","size","mtime_ns"}],"total":N,"truncated":bool}`:
//! the entries under P (not P itself), each path P joined with the
//! entry's path relative to P, sorted bytewise by path, from `lstat`;
//! `entries` holds those from `offset`, at most `limit` of them, and
//! `total` counts all. `depth` ≥ 1 descends that many levels, never
//! through a symlink (a symlink to a directory is listed as `symlink`); a
//! directory already met on the way down (by device and inode: a bind
//! mount of an ancestor) is listed but not entered. `hidden:false` leaves
//! out names starting with `.` (and what is under them) and says how many
//! names it left out in `"hidden_count"`. `.git`, `.hg` and `.svn` are
//! listed but not entered unless `"vcs":true`; nor are proc and sysfs
//! mounts (a `/proc` walk would list every process's files). A directory that cannot be read
//! is listed but not entered, and counted in `"unreadable"` (absent when
//! 0). At most [`WALK_MAX`] entries are gathered: past that the walk
//! stops and `"walk_truncated":true` says `total` is a lower bound.
//!
//! P itself is followed if it is a symlink. P missing, or not a directory,
//! is `file_not_found` with a detail saying which, never an empty list.
//! Cut by `max_bytes` or `limit` after a whole entry: `"truncated":true,
//! "next":{"offset":K}`.

use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;

use rustix::fs::{self as rfs, FileType, Mode, OFlags};

use super::answer::{next, Page};
use super::stat::{fields, too_small};
use super::{name, place, List, Root};
use crate::protocol::{display_path, ErrorKind, Failure};

/// The most entries one `list` gathers.
pub const WALK_MAX: usize = 100_000;

/// One entry as gathered: its path relative to P, and its `lstat`.
struct Entry {
    rel: Vec<u8>,
    st: rfs::Stat,
}

#[derive(Default)]
struct Walk {
    entries: Vec<Entry>,
    hidden: u64,
    unreadable: u64,
    full: bool,
}

pub(super) fn run(req: &List, root: Option<&Root>, max_bytes: u64) -> Result<String, Failure> {
    let dir = place::dir(&req.path, root)?;
    let fd = open_read(&dir, c".").map_err(|e| {
        Failure::new(
            ErrorKind::ReadFailed,
            format!("reading the directory {}: {e}", display_path(&req.path)),
        )
    })?;
    let st = rfs::fstat(&fd).map_err(|e| Failure::new(ErrorKind::ReadFailed, e.to_string()))?;
    let mut walk = Walk::default();
    let mut seen = vec![id(&st)];
    gather(&mut walk, fd, &[], req, 1, &mut seen);
    walk.entries.sort_unstable_by(|a, b| a.rel.cmp(&b.rel));
    let total = walk.entries.len() as u64;
    let mut tail = format!(",\"total\":{total}");
    if !req.hidden {
        tail += &format!(",\"hidden_count\":{}", walk.hidden);
    }
    if walk.unreadable > 0 {
        tail += &format!(",\"unreadable\":{}", walk.unreadable);
    }
    if walk.full {
        tail += ",\"walk_truncated\":true";
    }
    let reserve = tail.len() + next(Some(&[("offset", u64::MAX)])).len();
    let mut page = Page::new(max_bytes, "", "entries");
    let first = req.offset.min(total) as usize;
    let last = (req.offset.saturating_add(req.limit)).min(total) as usize;
    let mut at = first;
    let base = req.path.as_os_str().as_bytes();
    for e in &walk.entries[first..last] {
        let mut out = String::from("{");
        let mut path = base.to_vec();
        if !path.ends_with(b"/") {
            path.push(b'/');
        }
        path.extend_from_slice(&e.rel);
        name::field(&mut out, "path", &path);
        fields(&mut out, FileType::from_raw_mode(e.st.st_mode), &e.st);
        out.push('}');
        if !page.push(&out, reserve) {
            if page.kept() == 0 {
                return Err(too_small(max_bytes, page.needs(out.len(), reserve)));
            }
            break;
        }
        at += 1;
    }
    let more = (at as u64) < total;
    tail += &next(more.then_some(&[("offset", at as u64)][..]));
    Ok(page.finish(&tail))
}

/// Reads the directory open at `fd` (`rel` its path relative to P, at
/// `level`), descending while `level < depth`.
fn gather(
    w: &mut Walk,
    fd: OwnedFd,
    rel: &[u8],
    req: &List,
    level: u64,
    seen: &mut Vec<(u64, u64)>,
) {
    let Ok(mut dir) = rfs::Dir::read_from(&fd) else {
        w.unreadable += 1;
        return;
    };
    let mut subdirs = Vec::new();
    while let Some(d) = dir.read() {
        let Ok(d) = d else {
            w.unreadable += 1;
            break;
        };
        let n = d.file_name().to_bytes();
        if n == b"." || n == b".." {
            continue;
        }
        if !req.hidden && n.starts_with(b".") {
            w.hidden += 1;
            continue;
        }
        if w.entries.len() >= WALK_MAX {
            w.full = true;
            return;
        }
        let name = d.file_name().to_owned();
        // Gone since it was read: not listed.
        let Ok(st) = place::lstat(&fd, &name) else {
            continue;
        };
        let mut path = rel.to_vec();
        if !path.is_empty() {
            path.push(b'/');
        }
        path.extend_from_slice(n);
        let vcs = matches!(n, b".git" | b".hg" | b".svn");
        let dir = FileType::from_raw_mode(st.st_mode) == FileType::Directory;
        if level < req.depth && dir && (req.vcs || !vcs) {
            subdirs.push((name, path.clone(), id(&st)));
        }
        w.entries.push(Entry { rel: path, st });
    }
    drop(dir);
    for (name, path, id) in subdirs {
        if seen.contains(&id) {
            continue; // an ancestor again (a bind mount): listed, not entered
        }
        // O_NOFOLLOW: a directory swapped for a symlink since its lstat is
        // not followed; the descriptor must still be that directory.
        let sub = match open_read(&fd, &name) {
            Ok(sub) => sub,
            Err(_) => {
                w.unreadable += 1;
                continue;
            }
        };
        match rfs::fstat(&sub) {
            Ok(st) if self::id(&st) == id => {}
            _ => continue,
        }
        if is_pseudo(&sub) {
            continue;
        }
        seen.push(id);
        gather(w, sub, &path, req, level + 1, seen);
        seen.pop();
        if w.full {
            return;
        }
    }
}

/// Whether the directory open at `fd` is on proc or sysfs: listed, never
/// entered.
fn is_pseudo(fd: &OwnedFd) -> bool {
    const PROC_SUPER_MAGIC: i64 = 0x9fa0;
    const SYSFS_MAGIC: i64 = 0x6265_6572;
    // The field's type differs between targets.
    #[allow(clippy::unnecessary_cast)]
    rfs::fstatfs(fd).is_ok_and(|s| matches!(s.f_type as i64, PROC_SUPER_MAGIC | SYSFS_MAGIC))
}

/// A file's device and inode.
// The field types differ between targets: the casts are not all no-ops.
#[allow(clippy::unnecessary_cast)]
fn id(st: &rfs::Stat) -> (u64, u64) {
    (st.st_dev as u64, st.st_ino as u64)
}

/// Opens directory `name` in `dir` for reading, never through a symlink
/// and never blocking.
fn open_read(dir: &OwnedFd, name: &std::ffi::CStr) -> rustix::io::Result<OwnedFd> {
    let flags =
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    rfs::openat(dir, name, flags, Mode::empty())
}
