//! The tree walk of `glob` and `grep`: the regular files below a directory,
//! in bytewise order of their paths, relative to directory descriptors.
//!
//! The promises:
//! - **No symlink is followed.** Every directory is opened with
//!   `openat(parent, name, O_DIRECTORY | O_NOFOLLOW)` from its parent's
//!   descriptor, so the walk never leaves the tree it started in (and so
//!   never leaves `--root`, which the op checked for the starting
//!   directory); a symlink in the tree, to a file or a directory, is not
//!   listed (only the op's own `path` is followed when it names one).
//! - **Loops** (a bind mount of an ancestor) are cut: a directory whose
//!   (device, inode) is one of its ancestors' is not entered.
//! - **Only regular files** are yielded: FIFOs, sockets and devices are
//!   skipped from their directory entry's type (`fstatat` without
//!   following when the file system does not give one), never opened.
//! - **Pseudo file systems** are not entered: at a mount crossing (a
//!   device change) and at the start, the file system is named
//!   (`pseudo.rs`: proc, sysfs, devtmpfs, devpts, …) and skipped.
//! - **VCS directories** `.git`, `.hg`, `.svn` are skipped unless `vcs`
//!   or `rg` (ripgrep has no rule of its own for them: they are hidden
//!   names, searched when a `!` rule such as `!*/` whitelists them);
//!   names starting with `.` unless `hidden`; with `gitignore`, the
//!   `.gitignore` files below the start ([`super::gitignore`]) and, in a
//!   repository, above it and `.git/info/exclude` (`ignore_up`);
//!   with `rg`, ripgrep 13's default filters instead (`.rgignore`,
//!   `.ignore`, `.gitignore` in a repository, the start's parents' files
//!   given to [`walk_with`], a hidden name shown when a `!` rule
//!   whitelists it: [`super::ignores`]). An ignore file the bounds of
//!   [`super::ignores`] leave unread stops a `gitignore` walk (the ops
//!   refuse, naming it) and is noted by an `rg` one, which goes on
//!   without it ([`Outcome::ignore_skip`]).
//! - **Bounded**: at most [`MAX_ENTRIES`] directory entries are read,
//!   [`MAX_PENDING`] bytes of names held, directories at most
//!   [`MAX_DEPTH`] levels deep entered; past any the walk says `truncated`
//!   (what was read before the bound is still yielded; the answers say
//!   `walk_limit`). Memory is the pending names of the directories on the
//!   current path (all of each, for the sort: a name's length and 8 to 12
//!   bytes, in one buffer per directory), not the tree.
//! - **Any descriptor limit** (`walk_fd`): short of descriptors,
//!   upper levels' are closed, then reopened by name and checked; below
//!   the least a walk needs: [`Outcome::unreadable`], [`Outcome::short`].
//! - **Every entry** with [`Options::all`] (`list`): directories (before
//!   what is under them), symlinks, FIFOs…, to [`Options::depth`] levels.
//!
//! Order: a directory's entries are sorted by name, a directory's with a
//! `/` appended, so a depth-first walk yields paths in bytewise order
//! (`a-b` before `a/x`, as a sort of the whole paths would).
//!
//! Which of these promises `ignore`'s path-based walk cannot keep, and
//! what it would cost: [`super`]'s "Why written here".

use std::os::fd::{AsFd, OwnedFd};
use std::path::PathBuf;

use rustix::fs::{self as rfs, AtFlags, FileType};
use rustix::io::Errno;

use super::ignore_up;
use super::ignores::{Ignores, Seen, Skip};
pub use super::walk_fd::File;
use super::walk_fd::{self, is_short, Frame};
/// What to skip, and what to yield (a request's, so the wire crate's).
pub use as_edit_wire::tools::Options;

mod rules;

/// At most this many directory entries are read by one walk.
pub const MAX_ENTRIES: u64 = 2_000_000;
/// Directories deeper than this below the start are not entered.
pub const MAX_DEPTH: usize = 256;
/// Bytes of pending names held at once (each name, and 12 bytes of its
/// sort key, of the directories on the walk's path): past it no more
/// names are read (`truncated`).
pub const MAX_PENDING: usize = 64 << 20;

/// Where a walk starts: the directory open for reading and, so that the
/// `.gitignore` files above it can be read, its real path and `--root`.
pub struct StartDir {
    /// The directory.
    pub fd: OwnedFd,
    /// Its canonical path (`None`: only `.gitignore` files at and below
    /// the start are read).
    pub abs: Option<PathBuf>,
    /// `--root`: nothing above it is read.
    pub root: Option<PathBuf>,
}

impl From<OwnedFd> for StartDir {
    fn from(fd: OwnedFd) -> StartDir {
        StartDir {
            fd,
            abs: None,
            root: None,
        }
    }
}

/// How a walk ended.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// A bound ([`MAX_ENTRIES`], [`MAX_DEPTH`]) cut the walk short.
    pub truncated: bool,
    /// Names left out because they start with `.` (`hidden: false`).
    pub hidden: u64,
    /// Directories that could not be opened or read (for want of
    /// descriptors too, when even the walk's least could not be had:
    /// `walk_fd`).
    pub unreadable: u64,
    /// The first directory not read for want of descriptors (`EMFILE`,
    /// `ENFILE`), its path relative to the start (empty: the start).
    pub short: Option<Vec<u8>>,
    /// Pseudo file systems (proc, sysfs, devtmpfs, …) not entered, the
    /// start's own included: said, so a walk of `/proc` that found nothing
    /// is not mistaken for an empty tree.
    pub pseudo: u64,
    /// Ignore files not read (over their bounds: [`super::ignores`]): a
    /// `gitignore` walk stops at the first, an `rg` one goes on.
    pub ignore_skip: Option<Skip>,
}

impl Outcome {
    /// Counts a directory not read (`rel`, its path), and remembers the
    /// first one lost for want of descriptors.
    pub(super) fn lost<T>(&mut self, e: Errno, rel: &[u8]) -> Option<T> {
        self.unreadable += 1;
        if is_short(e) && self.short.is_none() {
            self.short = Some(rel.to_vec());
        }
        None
    }
}

/// Walks the directory `start`, calling `f` on each entry in path order;
/// `f` returns `false` to stop the walk.
pub fn walk(start: impl Into<StartDir>, opts: Options, f: impl FnMut(File<'_>) -> bool) -> Outcome {
    walk_bounded(start, opts, (MAX_ENTRIES, MAX_PENDING), Vec::new(), f)
}

/// [`walk`] under the ignore files of the start's parents, outermost
/// first, each with the path from it to the start ending in `/`
/// ([`super::ignores::ancestors`]; ripgrep's filters, `opts.rg`).
pub fn walk_with(
    start: impl Into<StartDir>,
    opts: Options,
    outer: Vec<(Ignores, Vec<u8>)>,
    f: impl FnMut(File<'_>) -> bool,
) -> Outcome {
    walk_bounded(start, opts, (MAX_ENTRIES, MAX_PENDING), outer, f)
}

/// [`walk`] with other bounds than [`MAX_ENTRIES`] and [`MAX_PENDING`]
/// (tests reach them).
pub fn walk_bounded(
    start: impl Into<StartDir>,
    opts: Options,
    (max_entries, max_pending): (u64, usize),
    outer: Vec<(Ignores, Vec<u8>)>,
    mut f: impl FnMut(File<'_>) -> bool,
) -> Outcome {
    let start = start.into();
    let mut w = Walker {
        opts,
        max_entries,
        entries: 0,
        max_pending,
        pending: 0,
        out: Outcome::default(),
        pseudo: super::pseudo::Known::default(),
        path: Vec::new(),
        above: ignore_up::Above::default(),
        enter: true,
    };
    let Ok(st) = rfs::fstat(&start.fd) else {
        return w.out;
    };
    if w.pseudo.is_pseudo(&start.fd, st.st_dev) {
        w.out.pseudo += 1;
        if !opts.all {
            return w.out;
        }
        w.enter = false; // `list /proc` lists it, never descends
    }
    if !outer.is_empty() {
        w.above = ignore_up::Above::of_outer(outer);
    } else if opts.gitignore && !opts.rg {
        if let Some(abs) = &start.abs {
            w.above = ignore_up::above(abs, start.root.as_deref());
            w.out.ignore_skip = w.above.skip.take();
            if w.above.ignored || w.out.ignore_skip.is_some() {
                return w.out;
            }
        }
    }
    let mut stack = Vec::new();
    match w.frame(start.fd, (st.st_dev, st.st_ino), 0, &mut stack) {
        Some(fr) => {
            w.pending += fr.held();
            stack.push(fr);
        }
        None => return w.out,
    }
    while let Some(top) = stack.last() {
        if top.todo.is_empty() {
            w.pending -= top.held();
            stack.pop();
            continue;
        }
        if top.fd.is_none() {
            // Closed for want of descriptors: opened again by name.
            if let Err((i, e)) = walk_fd::reopen(&mut stack, &w.path) {
                w.out.unreadable += (stack.len() - i) as u64 - 1;
                w.out.lost::<()>(e, &w.path[..stack[i].prefix - 1]);
                w.pending -= stack[i..].iter().map(Frame::held).sum::<usize>();
                stack.truncate(i);
                continue;
            }
        }
        let depth = stack.len();
        let (top, upper) = stack.split_last_mut().expect("not empty");
        let (a, b) = top.todo.pop().expect("not empty");
        let key = &top.arena[a as usize..b as usize];
        let (name, is_dir) = match key.strip_suffix(b"/") {
            Some(n) => (n, true),
            None => (key, false),
        };
        let prefix = top.prefix;
        w.path.truncate(prefix);
        w.path.extend_from_slice(name);
        let name = &w.path[prefix..];
        let dir = top.fd.as_ref().expect("reopened").as_fd();
        if !is_dir {
            let file = File {
                rel: &w.path,
                dir,
                name,
                upper,
            };
            if !f(file) {
                w.out.truncated |= w.entries > w.max_entries;
                return w.out;
            }
            continue;
        }
        if depth > MAX_DEPTH {
            w.out.truncated = true;
            continue;
        }
        let fd = match walk_fd::open_dir(dir, name, upper) {
            Ok(fd) => fd,
            Err(e) => {
                w.out.lost::<()>(e, &w.path); // gone, a symlink now, or unreadable: skipped as rg does
                continue;
            }
        };
        let Ok(st) = rfs::fstat(&fd) else { continue };
        let key = (st.st_dev, st.st_ino);
        if stack.iter().any(|fr| fr.dev_ino == key) {
            continue; // a loop (a bind mount of an ancestor)
        }
        if key.0 != stack[stack.len() - 1].dev_ino.0 && w.pseudo.is_pseudo(&fd, st.st_dev) {
            w.out.pseudo += 1;
            continue;
        }
        w.path.push(b'/');
        let prefix = w.path.len();
        if let Some(fr) = w.frame(fd, key, prefix, &mut stack) {
            w.pending += fr.held();
            stack.push(fr);
        } else if w.out.ignore_skip.is_some() && !opts.rg {
            return w.out;
        }
    }
    w.out.truncated |= w.entries > w.max_entries;
    w.out
}

struct Walker {
    opts: Options,
    max_entries: u64,
    entries: u64,
    /// [`MAX_PENDING`], and the bytes the frames on the path hold.
    max_pending: usize,
    pending: usize,
    out: Outcome,
    pseudo: super::pseudo::Known,
    path: Vec<u8>,
    above: ignore_up::Above,
    /// Whether directories are entered at all (not on a pseudo start).
    enter: bool,
}

fn is_vcs(name: &[u8]) -> bool {
    matches!(name, b".git" | b".hg" | b".svn")
}

impl Walker {
    /// Reads the directory `fd` (whose path is `self.path[..prefix]`) into
    /// a frame: its keys to visit, sorted, and its `.gitignore`.
    fn frame(
        &mut self,
        fd: OwnedFd,
        dev_ino: (u64, u64),
        prefix: usize,
        stack: &mut [Frame],
    ) -> Option<Frame> {
        // Past the bound nothing more is read; what was read is still walked.
        if self.entries > self.max_entries {
            return None;
        }
        let opts = self.opts;
        let at = prefix.saturating_sub(1);
        let dir = match walk_fd::retry(stack, || rustix::io::dup(&fd)) {
            Ok(dir) => dir,
            Err(e) => return self.out.lost(e, &self.path[..at]), // no descriptor to read it with
        };
        let Ok(dir) = rfs::Dir::new(dir) else {
            self.out.unreadable += 1;
            return None;
        };
        // Each name in `arena` (a directory's with its `/`): `found` holds
        // its range and whether it is a directory.
        let mut arena: Vec<u8> = Vec::new();
        let mut found: Vec<(u32, u32, bool)> = Vec::new();
        let mut seen = Seen::default();
        for e in dir {
            let Ok(e) = e else {
                self.out.unreadable += 1;
                break;
            };
            self.entries += 1;
            if self.entries > self.max_entries {
                break;
            }
            if self.pending + arena.len() + 12 * found.len() > self.max_pending {
                self.out.truncated = true;
                break;
            }
            let name = e.file_name();
            let b = name.to_bytes();
            if b == b"." || b == b".." {
                continue;
            }
            seen.note(b);
            if !opts.all && !opts.vcs && !opts.rg && is_vcs(b) {
                continue;
            }
            // rg: a hidden name may be whitelisted, so it is decided below.
            if !opts.hidden && !opts.rg && b.first() == Some(&b'.') {
                self.out.hidden += 1;
                continue;
            }
            let mut ty = e.file_type();
            if ty == FileType::Unknown {
                ty = match rfs::statat(&fd, name, AtFlags::SYMLINK_NOFOLLOW) {
                    Ok(st) => FileType::from_raw_mode(st.st_mode),
                    Err(_) => continue,
                };
            }
            let is_dir = ty == FileType::Directory;
            if opts.all || is_dir || ty == FileType::RegularFile {
                // At most MAX_ENTRIES names of 255 bytes: within u32.
                let at = arena.len() as u32;
                arena.extend_from_slice(b);
                found.push((at, arena.len() as u32, is_dir));
                if is_dir {
                    arena.push(b'/');
                }
            }
        }
        let rules = match opts.gitignore || opts.rg {
            true => self.rules(&fd, seen, prefix, stack).ok()?,
            false => None,
        };
        self.ignore(&arena, &mut found, rules.as_ref(), prefix, stack);
        // The level of these entries: 1 for the start's own.
        let level = stack.len() as u64 + 1;
        let enter = self.enter && (opts.depth == 0 || level < opts.depth);
        let mut todo: Vec<(u32, u32)> = Vec::with_capacity(found.len());
        for (a, b, is_dir) in found {
            let name = &arena[a as usize..b as usize];
            if is_dir && enter && (opts.vcs || opts.rg || !is_vcs(name)) {
                todo.push((a, b + 1));
            }
            if opts.all || !is_dir {
                todo.push((a, b));
            }
        }
        // Sorted so that popping from the back yields bytewise path order.
        let key = |&(a, b): &(u32, u32)| &arena[a as usize..b as usize];
        todo.sort_unstable_by(|x, y| key(y).cmp(key(x)));
        todo.shrink_to_fit();
        arena.shrink_to_fit();
        Some(Frame {
            fd: Some(fd),
            dev_ino,
            arena,
            todo,
            prefix,
            rules,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustix::fs::{Mode, OFlags};

    fn open(p: &std::path::Path) -> OwnedFd {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        rfs::open(p, flags, Mode::empty()).unwrap()
    }

    fn files(p: &std::path::Path, opts: Options, max: u64) -> (Vec<String>, bool) {
        let mut v = Vec::new();
        let o = walk_bounded(open(p), opts, (max, MAX_PENDING), Vec::new(), |f| {
            v.push(String::from_utf8(f.rel.to_vec()).unwrap());
            true
        });
        (v, o.truncated)
    }

    #[test]
    fn paths_come_in_bytewise_order() {
        let d = tempfile::tempdir().unwrap();
        for p in ["a/x", "a-b", "a.b", "a0", "a/y/z", "b", "A"] {
            let p = d.path().join(p);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "").unwrap();
        }
        let (v, t) = files(d.path(), Options::default(), MAX_ENTRIES);
        let mut sorted = v.clone();
        sorted.sort();
        assert_eq!(v, sorted);
        assert_eq!(v, ["A", "a-b", "a.b", "a/x", "a/y/z", "a0", "b"]);
        assert!(!t);
    }

    #[test]
    fn the_entry_bound_truncates() {
        let d = tempfile::tempdir().unwrap();
        for i in 0..10 {
            std::fs::write(d.path().join(format!("f{i}")), "").unwrap();
        }
        // `.` and `..` are entries too: 12 in all.
        assert_eq!(
            files(d.path(), Options::default(), 12),
            ((0..10).map(|i| format!("f{i}")).collect(), false)
        );
        let (v, t) = files(d.path(), Options::default(), 11);
        assert!(t && v.len() < 10, "{v:?}");
    }

    #[test]
    fn the_pending_names_bound_truncates() {
        let d = tempfile::tempdir().unwrap();
        let long = "x".repeat(200);
        let sub = d.path().join("sub");
        std::fs::create_dir(&sub).unwrap();
        for i in 0..100 {
            std::fs::write(d.path().join(format!("{i:03}{long}")), "").unwrap();
            std::fs::write(sub.join(format!("{i:03}{long}")), "").unwrap();
        }
        let walk = |max| {
            let mut v = Vec::new();
            let o = walk_bounded(
                open(d.path()),
                Options::default(),
                (MAX_ENTRIES, max),
                Vec::new(),
                |f| {
                    v.push(f.rel.starts_with(b"sub/"));
                    true
                },
            );
            (
                v.iter().filter(|s| !**s).count(),
                v.iter().filter(|s| **s).count(),
                o.truncated,
            )
        };
        assert_eq!(walk(MAX_PENDING), (100, 100, false));
        // One level's names (about 21 KB) fit, not two: the bound counts
        // the names held above a level too.
        let (top, below, t) = walk(30_000);
        assert!(t && top == 100 && below < 50, "{top} {below}");
        let (top, below, t) = walk(10_000);
        assert!(t && top < 50 && below == 0, "{top} {below}");
    }

    #[test]
    fn the_depth_bound_truncates() {
        let d = tempfile::tempdir().unwrap();
        let mut p = d.path().to_owned();
        for _ in 0..MAX_DEPTH + 2 {
            p.push("d");
        }
        std::fs::create_dir_all(&p).unwrap();
        std::fs::write(p.join("deep"), "").unwrap();
        std::fs::write(d.path().join("top"), "").unwrap();
        let (v, t) = files(d.path(), Options::default(), MAX_ENTRIES);
        assert_eq!((v, t), (vec!["top".to_string()], true));
    }

    #[test]
    fn pseudo_file_systems_are_not_entered() {
        for p in ["/proc", "/sys"] {
            let p = std::path::Path::new(p);
            if p.join("self").exists() || p.join("kernel").exists() {
                assert_eq!(
                    files(p, Options::default(), MAX_ENTRIES),
                    (vec![], false),
                    "{}",
                    p.display()
                );
            }
        }
    }

    #[test]
    fn hidden_and_vcs_names_are_skipped_unless_asked() {
        let d = tempfile::tempdir().unwrap();
        for p in [".git/HEAD", ".hg/x", ".svn/x", ".h/x", ".f", "v"] {
            let p = d.path().join(p);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "").unwrap();
        }
        let all = Options {
            hidden: true,
            vcs: true,
            ..Options::default()
        };
        let names = |o| files(d.path(), o, MAX_ENTRIES).0;
        assert_eq!(names(Options::default()), ["v"]);
        assert_eq!(
            names(Options {
                hidden: true,
                ..Options::default()
            }),
            [".f", ".h/x", "v"]
        );
        assert_eq!(
            names(all),
            [".f", ".git/HEAD", ".h/x", ".hg/x", ".svn/x", "v"]
        );
    }
}
