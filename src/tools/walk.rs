//! The tree walk of `glob` and `grep`: the regular files below a directory,
//! in bytewise order of their paths, relative to directory descriptors.
//!
//! The promises (issue 34, item 6):
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
//!   device change) and at the start, `fstatfs` names the file system, and
//!   proc, sysfs, devpts, debugfs, tracefs, securityfs, cgroup, cgroup2,
//!   bpf and the mount at `/dev` (devtmpfs reports tmpfs's magic, so it is
//!   known by its device) are skipped.
//! - **VCS directories** `.git`, `.hg`, `.svn` are skipped unless `vcs`;
//!   names starting with `.` unless `hidden`; with `gitignore`, the
//!   `.gitignore` files below the start ([`super::gitignore`]); with `rg`,
//!   ripgrep 13's default filters instead (`.rgignore`, `.ignore`,
//!   `.gitignore` in a repository, the start's parents' files given to
//!   [`walk_with`], a hidden name shown when a `!` rule whitelists it:
//!   [`super::ignores`]).
//! - **Bounded**: at most [`MAX_ENTRIES`] directory entries are read and
//!   directories at most [`MAX_DEPTH`] levels deep entered (one open
//!   descriptor per level); past either the walk says `truncated` (the
//!   entries read before the bound are still yielded).
//!   Memory is the pending names of the directories on the current path
//!   (one level each), not the tree.
//!
//! Order: a directory's entries are sorted by name, a directory's with a
//! `/` appended, so a depth-first walk yields paths in bytewise order
//! (`a-b` before `a/x`, as a sort of the whole paths would).

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use rustix::fs::{self as rfs, AtFlags, FileType, Mode, OFlags};

use super::ignores::{self, Ignores, Seen};

/// At most this many directory entries are read by one walk.
pub const MAX_ENTRIES: u64 = 2_000_000;
/// Directories deeper than this below the start are not entered.
pub const MAX_DEPTH: usize = 256;

/// What to skip.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    /// Enter `.git`, `.hg` and `.svn`.
    pub vcs: bool,
    /// Yield and enter names starting with `.`.
    pub hidden: bool,
    /// Honour `.gitignore` files.
    pub gitignore: bool,
    /// ripgrep's default filters (module docs; `gitignore` is then unused).
    pub rg: bool,
}

/// One regular file found.
pub struct File<'a> {
    /// Its path relative to the start, `/`-separated.
    pub rel: &'a [u8],
    /// Its directory.
    pub dir: BorrowedFd<'a>,
    /// Its name in `dir`.
    pub name: &'a [u8],
}

/// How a walk ended.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// A bound ([`MAX_ENTRIES`], [`MAX_DEPTH`]) cut the walk short.
    pub truncated: bool,
}

struct Frame {
    fd: OwnedFd,
    dev_ino: (u64, u64),
    /// Sorted children, popped from the back: each a name, with a `/`
    /// after a directory's (the sort key).
    todo: Vec<Box<[u8]>>,
    /// Length of the relative path of this directory (with its `/`).
    prefix: usize,
    rules: Option<Ignores>,
}

const PSEUDO: [i64; 10] = [
    0x9fa0,     // proc
    0x62656572, // sysfs
    0x1cd1,     // devpts
    0x64626720, // debugfs
    0x74726163, // tracefs
    0x73636673, // securityfs
    0x27e0eb,   // cgroup
    0x63677270, // cgroup2
    0xcafe4a11, // bpf
    0x42494e4d, // binfmt_misc
];

/// Walks the directory `start` (opened for reading), calling `f` on each
/// regular file in path order; `f` returns `false` to stop the walk.
pub fn walk(start: OwnedFd, opts: Options, f: impl FnMut(File<'_>) -> bool) -> Outcome {
    walk_bounded(start, opts, MAX_ENTRIES, Vec::new(), f)
}

/// [`walk`] under the ignore files of the start's parents, outermost
/// first, each with the path from it to the start ending in `/`
/// ([`ignores::ancestors`]).
pub fn walk_with(
    start: OwnedFd,
    opts: Options,
    outer: Vec<(Ignores, Vec<u8>)>,
    f: impl FnMut(File<'_>) -> bool,
) -> Outcome {
    walk_bounded(start, opts, MAX_ENTRIES, outer, f)
}

/// [`walk`] with another bound than [`MAX_ENTRIES`] (tests reach it).
pub fn walk_bounded(
    start: OwnedFd,
    opts: Options,
    max_entries: u64,
    outer: Vec<(Ignores, Vec<u8>)>,
    mut f: impl FnMut(File<'_>) -> bool,
) -> Outcome {
    let mut out = Outcome::default();
    let mut w = Walker {
        opts,
        outer,
        max_entries,
        entries: 0,
        dev_of_dev: None,
        path: Vec::new(),
    };
    let Ok(st) = rfs::fstat(&start) else {
        return out;
    };
    if w.pseudo(&start, st.st_dev) {
        return out;
    }
    let mut stack = Vec::new();
    match w.frame(start, (st.st_dev, st.st_ino), 0, &stack) {
        Some(fr) => stack.push(fr),
        None => return out,
    }
    loop {
        let depth = stack.len();
        let Some(top) = stack.last_mut() else { break };
        let Some(entry) = top.todo.pop() else {
            stack.pop();
            continue;
        };
        let (name, is_dir) = match entry.strip_suffix(b"/") {
            Some(n) => (n, true),
            None => (&entry[..], false),
        };
        let prefix = top.prefix;
        w.path.truncate(prefix);
        w.path.extend_from_slice(name);
        if !is_dir {
            let file = File {
                rel: &w.path,
                dir: top.fd.as_fd(),
                name,
            };
            if !f(file) {
                out.truncated |= w.entries > w.max_entries;
                return out;
            }
            continue;
        }
        if depth > MAX_DEPTH {
            out.truncated = true;
            continue;
        }
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let Ok(fd) = rfs::openat(&top.fd, name, flags, Mode::empty()) else {
            continue; // gone, a symlink now, or unreadable: skipped as rg does
        };
        let Ok(st) = rfs::fstat(&fd) else { continue };
        let key = (st.st_dev, st.st_ino);
        if stack.iter().any(|fr| fr.dev_ino == key) {
            continue; // a loop (a bind mount of an ancestor)
        }
        if key.0 != stack[stack.len() - 1].dev_ino.0 && w.pseudo(&fd, st.st_dev) {
            continue;
        }
        w.path.push(b'/');
        let prefix = w.path.len();
        if let Some(fr) = w.frame(fd, key, prefix, &stack) {
            stack.push(fr);
        }
    }
    out.truncated |= w.entries > w.max_entries;
    out
}

struct Walker {
    opts: Options,
    outer: Vec<(Ignores, Vec<u8>)>,
    max_entries: u64,
    entries: u64,
    dev_of_dev: Option<Option<u64>>,
    path: Vec<u8>,
}

impl Walker {
    /// Whether the directory `fd` (on device `dev`) is on a file system
    /// never entered.
    fn pseudo(&mut self, fd: &OwnedFd, dev: u64) -> bool {
        let Ok(fs) = rfs::fstatfs(fd) else {
            return false;
        };
        #[allow(clippy::unnecessary_cast)]
        let magic = fs.f_type as i64;
        if PSEUDO.contains(&magic) {
            return true;
        }
        // devtmpfs and a container's /dev are tmpfs to fstatfs.
        if magic == 0x01021994 {
            let d = *self
                .dev_of_dev
                .get_or_insert_with(|| rfs::stat("/dev").ok().map(|s| s.st_dev));
            return d == Some(dev);
        }
        false
    }

    /// Reads the directory `fd` (whose path is `self.path[..prefix]`) into
    /// a frame: its children to visit, sorted, and its `.gitignore`.
    fn frame(
        &mut self,
        fd: OwnedFd,
        dev_ino: (u64, u64),
        prefix: usize,
        stack: &[Frame],
    ) -> Option<Frame> {
        // Past the bound nothing more is read; what was read is still walked.
        if self.entries > self.max_entries {
            return None;
        }
        let dir = rustix::io::dup(&fd).ok()?;
        let mut names: Vec<Box<[u8]>> = Vec::new();
        let mut seen = Seen::default();
        for e in rfs::Dir::new(dir).ok()? {
            let Ok(e) = e else { break };
            self.entries += 1;
            if self.entries > self.max_entries {
                break;
            }
            let name = e.file_name();
            let b = name.to_bytes();
            if b == b"." || b == b".." {
                continue;
            }
            seen.note(b);
            if !self.opts.vcs && matches!(b, b".git" | b".hg" | b".svn") {
                continue;
            }
            // rg: a hidden name may be whitelisted, so it is decided below.
            if !self.opts.hidden && !self.opts.rg && b.first() == Some(&b'.') {
                continue;
            }
            let mut ty = e.file_type();
            if ty == FileType::Unknown {
                ty = match rfs::statat(&fd, name, AtFlags::SYMLINK_NOFOLLOW) {
                    Ok(st) => FileType::from_raw_mode(st.st_mode),
                    Err(_) => continue,
                };
            }
            match ty {
                FileType::RegularFile => names.push(b.into()),
                FileType::Directory => names.push([b, b"/"].concat().into()),
                _ => {}
            }
        }
        let (rg, hide) = (self.opts.rg, !self.opts.hidden);
        let rules = match self.opts.gitignore || rg {
            true => Ignores::read(fd.as_fd(), seen, rg),
            false => None,
        };
        let inner = stack
            .iter()
            .filter_map(|fr| Some((fr.rules.as_ref()?, fr.prefix)));
        let mut all: Vec<(&Ignores, usize)> = inner.collect();
        all.extend(rules.as_ref().map(|r| (r, prefix)));
        if !all.is_empty() || !self.outer.is_empty() || (rg && hide) {
            let mut full = self.path[..prefix].to_vec();
            let mut joined: Vec<Vec<u8>> = vec![Vec::new(); self.outer.len()];
            names.retain(|n| {
                let (name, is_dir) = match n.strip_suffix(b"/") {
                    Some(n) => (n, true),
                    None => (&n[..], false),
                };
                full.truncate(prefix);
                full.extend_from_slice(name);
                for (j, (_, base)) in joined.iter_mut().zip(&self.outer) {
                    j.clear();
                    j.extend_from_slice(base);
                    j.extend_from_slice(&full);
                }
                let mut levels: Vec<(&Ignores, &[u8])> = Vec::new();
                levels.extend(
                    self.outer
                        .iter()
                        .zip(&joined)
                        .map(|((i, _), j)| (i, &j[..])),
                );
                levels.extend(all.iter().map(|&(r, s)| (r, &full[s..])));
                match ignores::decide(&levels, is_dir, rg) {
                    Some(ignored) => !ignored,
                    None => !(hide && name.first() == Some(&b'.')),
                }
            });
        }
        // Sorted so that popping from the back yields bytewise path order.
        names.sort_unstable_by(|a, b| b.cmp(a));
        Some(Frame {
            fd,
            dev_ino,
            todo: names,
            prefix,
            rules,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open(p: &std::path::Path) -> OwnedFd {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        rfs::open(p, flags, Mode::empty()).unwrap()
    }

    fn files(p: &std::path::Path, opts: Options, max: u64) -> (Vec<String>, bool) {
        let mut v = Vec::new();
        let o = walk_bounded(open(p), opts, max, Vec::new(), |f| {
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
            gitignore: false,
            rg: false,
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
