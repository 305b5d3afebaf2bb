//! The walk's descriptors under any limit (`RLIMIT_NOFILE`), as `fts`
//! keeps a walk going when descriptors run short.
//!
//! The walk holds one descriptor per level of the path it is on (the
//! start's, then each directory entered), so a tree deeper than the
//! limit would run out. When an `openat` or `dup` fails with `EMFILE` or
//! `ENFILE`, the descriptor of the shallowest level that holds one is
//! closed ([`shed`]; never the start's, which has no name to reopen it
//! by, nor the one in use) and the call tried again. A level keeps its
//! name (the path from the level above, in the walk's relative path) and
//! its (device, inode); when the walk comes back up to a level whose
//! descriptor was closed, [`reopen`] opens it again by name from the
//! nearest level above that holds one, each step
//! `openat(parent, name, O_DIRECTORY | O_NOFOLLOW)` as the walk opens
//! directories, and checks each step is the directory it was (same device
//! and inode). A level that cannot be reopened (gone, swapped for another
//! directory or a symlink, or no descriptor to be had) is not walked
//! further: it and the levels below it count as `unreadable` — a swap
//! never makes the walk leave its tree or walk a directory twice.
//!
//! The least a walk needs: the start's descriptor, the current level's,
//! and one more (a directory being opened, read or reopened, a file being
//! searched, an ignore file being read) — three besides what the process
//! holds (stdin, stdout, stderr, and `--root`'s directory when given).
//! Below that, what cannot be opened is counted as `unreadable`, never
//! silently left out.

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use rustix::fs::{self as rfs, Mode, OFlags, Stat};
use rustix::io::Errno;

use super::ignores::Ignores;
use crate::fs::regular::{open_regular, Unopened};

/// One level of the walk: a directory entered and what is left of it.
pub(super) struct Frame {
    /// Its descriptor; `None` once closed for want of descriptors
    /// (reopened by [`reopen`] before it is used again; the start's is
    /// never closed).
    pub fd: Option<OwnedFd>,
    pub dev_ino: (u64, u64),
    /// The names read, back to back, a directory's with a `/` after it:
    /// one allocation per directory, not one per name.
    pub arena: Vec<u8>,
    /// Sorted keys (ranges of `arena`), popped from the back: a name to
    /// yield, or a directory's name with its `/` to enter (the sort key).
    pub todo: Vec<(u32, u32)>,
    /// Length of the relative path of this directory (with its `/`).
    pub prefix: usize,
    pub rules: Option<Ignores>,
}

impl Frame {
    /// The bytes its pending names hold ([`super::walk::MAX_PENDING`]).
    pub(super) fn held(&self) -> usize {
        self.arena.capacity() + 8 * self.todo.capacity()
    }
}

/// One entry found (a regular file unless [`super::walk::Options::all`]).
pub struct File<'a> {
    /// Its path relative to the start, `/`-separated.
    pub rel: &'a [u8],
    /// Its directory.
    pub dir: BorrowedFd<'a>,
    /// Its name in `dir`.
    pub name: &'a [u8],
    /// The levels above `dir`, whose descriptors [`File::open`] may close.
    pub(super) upper: &'a mut [Frame],
}

impl File<'_> {
    /// `openat(dir, name, flags)`, for want of descriptors tried again
    /// after closing those of the walk's upper levels (reopened when the
    /// walk comes back to them: the module docs).
    pub fn open(&mut self, flags: OFlags) -> rustix::io::Result<OwnedFd> {
        let (dir, name) = (self.dir, self.name);
        retry(self.upper, || rfs::openat(dir, name, flags, Mode::empty()))
    }

    /// [`open_regular`] of the entry, its last name not followed (a
    /// device or FIFO mounted or swapped in since it was listed is never
    /// opened nor waited for), tried again as [`File::open`] is.
    pub(crate) fn open_regular(&mut self) -> Result<(OwnedFd, Stat), Unopened> {
        let (dir, name) = (self.dir, self.name);
        loop {
            match open_regular(dir, name, false) {
                Err(Unopened::Open(e, _)) if is_short(e) && shed(self.upper) => {}
                r => return r,
            }
        }
    }
}

/// The flags every directory of the walk is opened with.
pub(super) const DIR_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::NONBLOCK)
    .union(OFlags::CLOEXEC);

/// Whether `e` says the process (or the system) has no descriptor left.
pub(super) fn is_short(e: Errno) -> bool {
    e == Errno::MFILE || e == Errno::NFILE
}

/// Closes the descriptor of the shallowest of `levels` that holds one,
/// the start's (`levels[0]`) excepted: whether one was closed.
pub(super) fn shed(levels: &mut [Frame]) -> bool {
    let held = levels.iter_mut().skip(1).find(|f| f.fd.is_some());
    held.and_then(|f| f.fd.take()).is_some()
}

/// `f()`, tried again after each [`shed`] of `levels` while it fails for
/// want of descriptors.
pub(super) fn retry<T>(
    levels: &mut [Frame],
    mut f: impl FnMut() -> rustix::io::Result<T>,
) -> rustix::io::Result<T> {
    loop {
        match f() {
            Err(e) if is_short(e) && shed(levels) => {}
            r => return r,
        }
    }
}

/// Opens the directory `name` of `dir` as the walk does.
pub(super) fn open_dir(
    dir: BorrowedFd<'_>,
    name: &[u8],
    levels: &mut [Frame],
) -> rustix::io::Result<OwnedFd> {
    retry(levels, || rfs::openat(dir, name, DIR_FLAGS, Mode::empty()))
}

/// Gives the top level of `stack` its descriptor again, opening each level
/// from the nearest one above that holds its own; `path` holds the walk's
/// relative path down to the top level (each level's name ends at its
/// `prefix`, before the `/`). `Err((i, e))`: level `i` could not be
/// reopened as the directory it was (levels `i` and below are lost).
pub(super) fn reopen(stack: &mut [Frame], path: &[u8]) -> Result<(), (usize, Errno)> {
    let from = stack.iter().rposition(|f| f.fd.is_some()).unwrap_or(0);
    for i in from + 1..stack.len() {
        let (upper, rest) = stack.split_at_mut(i);
        let (parent, above) = upper.split_last_mut().ok_or((i, Errno::BADF))?;
        let dir = parent.fd.as_ref().ok_or((i, Errno::BADF))?.as_fd();
        let name = &path[parent.prefix..rest[0].prefix - 1];
        let fd = open_dir(dir, name, above).map_err(|e| (i, e))?;
        match rfs::fstat(&fd) {
            Ok(st) if (st.st_dev, st.st_ino) == rest[0].dev_ino => rest[0].fd = Some(fd),
            // Swapped for another directory meanwhile.
            _ => return Err((i, Errno::STALE)),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(fd: Option<OwnedFd>) -> Frame {
        level(fd, (0, 0), 0)
    }

    fn level(fd: Option<OwnedFd>, dev_ino: (u64, u64), prefix: usize) -> Frame {
        Frame {
            fd,
            dev_ino,
            arena: Vec::new(),
            todo: Vec::new(),
            prefix,
            rules: None,
        }
    }

    fn dir() -> OwnedFd {
        rfs::open(".", DIR_FLAGS, Mode::empty()).unwrap()
    }

    fn dev_ino(p: &std::path::Path) -> (u64, u64) {
        let st = rfs::stat(p).unwrap();
        (st.st_dev, st.st_ino)
    }

    /// The levels `START`, `START/a`, `START/a/b`, the last two closed.
    fn closed(start: &std::path::Path) -> Vec<Frame> {
        let fd = rfs::open(start, DIR_FLAGS, Mode::empty()).unwrap();
        vec![
            level(Some(fd), dev_ino(start), 0),
            level(None, dev_ino(&start.join("a")), 2),
            level(None, dev_ino(&start.join("a/b")), 4),
        ]
    }

    #[test]
    fn a_closed_level_is_reopened_only_as_the_directory_it_was() {
        let d = tempfile::tempdir().unwrap();
        let (a, b) = (d.path().join("a"), d.path().join("a/b"));
        std::fs::create_dir_all(&b).unwrap();
        let mut stack = closed(d.path());
        assert_eq!(reopen(&mut stack, b"a/b/"), Ok(()));
        assert!(stack.iter().all(|f| f.fd.is_some()));
        let same = |fd: &Option<OwnedFd>, p| {
            let st = rfs::fstat(fd.as_ref().unwrap()).unwrap();
            (st.st_dev, st.st_ino) == dev_ino(p)
        };
        assert!(same(&stack[1].fd, &a) && same(&stack[2].fd, &b));

        // `a/b` swapped for another directory: not reopened, nor walked.
        let mut stack = closed(d.path());
        std::fs::rename(&b, a.join("old")).unwrap();
        std::fs::create_dir(&b).unwrap();
        assert_eq!(reopen(&mut stack, b"a/b/"), Err((2, Errno::STALE)));
        // For a symlink to the directory it was: not followed.
        std::fs::remove_dir(&b).unwrap();
        std::os::unix::fs::symlink("old", &b).unwrap();
        let Err((2, e)) = reopen(&mut stack, b"a/b/") else {
            panic!("reopened through a symlink")
        };
        assert!(e == Errno::LOOP || e == Errno::NOTDIR, "{e:?}");
        // `a` swapped (a level above the one wanted): lost from there.
        let mut stack = closed(d.path());
        std::fs::rename(&a, d.path().join("elsewhere")).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        assert_eq!(reopen(&mut stack, b"a/b/"), Err((1, Errno::STALE)));
    }

    #[test]
    fn shed_closes_the_shallowest_held_level_never_the_start() {
        let mut v = vec![
            frame(Some(dir())),
            frame(None),
            frame(Some(dir())),
            frame(Some(dir())),
        ];
        assert!(shed(&mut v));
        let held: Vec<bool> = v.iter().map(|f| f.fd.is_some()).collect();
        assert_eq!(held, [true, false, false, true]);
        assert!(shed(&mut v));
        assert!(!shed(&mut v));
        assert!(v[0].fd.is_some());
    }
}
