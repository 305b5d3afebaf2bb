//! The `glob` op, and where `glob` and `grep` start: the op's `path`.
//!
//! `{"op":"glob","pattern":G,"path":P,"sort":"path"|"mtime","offset":0,
//! "limit":1000,"hidden":true,"vcs":false,"gitignore":false}` answers
//! `{"entries":[{"path","size","mtime_ns"}],"total":N,"truncated":bool}`:
//! the regular files below the directory P (default the working
//! directory) whose path relative to P matches G ([`super::glob`]), walked
//! as [`super::walk`] says. Each `path` is P joined with that relative
//! path (the relative path alone when P is absent); `size` and
//! `mtime_ns` are the file's own (`fstatat` without following). `sort`
//! `path` is bytewise by path; `mtime` newest first, then by path.
//! `total` counts every match; `entries` holds those from `offset`, at
//! most `limit` (kept in a heap of `offset + limit` while walking, so
//! memory is bounded by the request, not the tree); `truncated` says
//! that more matched than `entries` holds, or that the walk hit a bound;
//! `"unreadable":N` (absent when 0) counts directories it could not read.
//!
//! P is resolved as an edit's path is (`realpath`, then opened beneath
//! `--root` with openat2): outside the root is `outside_root`; missing,
//! or not a directory, is `file_not_found` saying which; one that cannot
//! be opened for reading is `read_failed`; a symlink P is
//! followed (only P: the walk follows none).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::fs::{self as rfs, AtFlags, FileType, Mode, OFlags};

use super::glob::Glob;
use super::walk;
use crate::fs::resolve;
use crate::fs::{FileKind, FsError, NotFoundKind};
use crate::protocol::{ErrorKind, Failure};
/// A `glob` request, parsed (the wire crate's).
pub use as_edit_wire::tools::GlobRequest;

/// Where a walk starts.
pub enum Start {
    /// A directory, open for reading, with its real path and `--root`.
    Dir(walk::StartDir),
    /// A regular file, open for reading (`grep` on one file).
    File(OwnedFd),
}

/// Resolves and opens the op's `path` (`files`: a regular file is
/// accepted too).
pub fn open_start(path: &Path, root: Option<&Path>, files: bool) -> Result<Start, Failure> {
    let root = match root {
        Some(r) => Some(resolve::open_root(r)?),
        None => None,
    };
    let root_ref = root.as_ref().map(|(p, fd)| (p.as_path(), fd));
    let abs = match std::fs::canonicalize(path) {
        Ok(a) => a,
        Err(e) => {
            let errno = resolve::errno_of(&e);
            if let Some((r, _)) = root_ref {
                if !resolve::fails_within(path, r) {
                    return Err(resolve::outside_root(path, r).into());
                }
            }
            return Err(resolve::not_found(path, errno).into());
        }
    };
    if let Some((r, _)) = root_ref {
        if !abs.starts_with(r) {
            return Err(resolve::outside_root(path, r).into());
        }
    }
    let meta =
        std::fs::metadata(&abs).map_err(|e| resolve::not_found(path, resolve::errno_of(&e)))?;
    let ro = OFlags::RDONLY | OFlags::CLOEXEC;
    if meta.is_dir() {
        let at = resolve::open_dir(&abs, root_ref)?;
        let fd = rfs::openat(&at, c".", ro | OFlags::DIRECTORY, Mode::empty())
            .map_err(|e| unreadable(&abs, e))?;
        return Ok(Start::Dir(walk::StartDir {
            fd,
            abs: Some(abs),
            root: root_ref.map(|(r, _)| r.to_path_buf()),
        }));
    }
    let ty = FileType::from_raw_mode(std::os::unix::fs::MetadataExt::mode(&meta));
    if !files || ty != FileType::RegularFile {
        return Err(if ty == FileType::RegularFile {
            Failure::new(
                ErrorKind::FileNotFound,
                format!("{} is a regular file, not a directory", abs.display()),
            )
        } else {
            not_found(&abs, NotFoundKind::NotRegular(kind(ty)))
        });
    }
    let (parent, name) = (
        abs.parent().unwrap_or(Path::new("/")),
        abs.file_name().unwrap_or_default(),
    );
    let at = resolve::open_dir(parent, root_ref)?;
    // Never blocks on a FIFO swapped in since the stat: O_NONBLOCK, then fstat.
    let flags = ro | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY;
    let fd =
        rfs::openat(&at, name.as_bytes(), flags, Mode::empty()).map_err(|e| unreadable(&abs, e))?;
    match rfs::fstat(&fd) {
        Ok(st) if FileType::from_raw_mode(st.st_mode) == FileType::RegularFile => {
            Ok(Start::File(fd))
        }
        Ok(st) => Err(not_found(
            &abs,
            NotFoundKind::NotRegular(kind(FileType::from_raw_mode(st.st_mode))),
        )),
        Err(e) => Err(not_found(&abs, NotFoundKind::Other(e))),
    }
}

/// A start that exists but cannot be opened for reading (no permission,
/// say): `read_failed`, as `list` and `read` answer it; one gone since
/// its `stat` is still `file_not_found`.
fn unreadable(p: &Path, e: rustix::io::Errno) -> Failure {
    use rustix::io::Errno;
    match e {
        Errno::NOENT | Errno::NOTDIR | Errno::LOOP => not_found(p, NotFoundKind::Other(e)),
        e => Failure::new(
            ErrorKind::ReadFailed,
            format!("opening {}: {e}", crate::protocol::display_path(p)),
        ),
    }
}

fn not_found(p: &Path, kind: NotFoundKind) -> Failure {
    FsError::NotFound {
        path: p.to_owned(),
        kind,
    }
    .into()
}

fn kind(t: FileType) -> FileKind {
    match t {
        FileType::Directory => FileKind::Directory,
        FileType::Fifo => FileKind::Fifo,
        FileType::Socket => FileKind::Socket,
        FileType::CharacterDevice => FileKind::CharDevice,
        FileType::BlockDevice => FileKind::BlockDevice,
        FileType::Symlink => FileKind::Symlink,
        _ => FileKind::Unknown,
    }
}

/// The path an answer shows for `rel` below the op's `path` (`None`: the
/// working directory, shown as `rel` alone).
pub fn shown(base: Option<&[u8]>, rel: &[u8]) -> Vec<u8> {
    match base {
        None => rel.to_vec(),
        Some(b) if rel.is_empty() => b.to_vec(),
        Some(b) => {
            let mut p = b.to_vec();
            if !p.ends_with(b"/") {
                p.push(b'/');
            }
            p.extend_from_slice(rel);
            p
        }
    }
}

/// The refusal of a `gitignore` walk that left an ignore file unread (its
/// bounds: [`super::ignores`]), naming it: below the start as the entries
/// are shown (`base` and the path from the start), above it absolute.
pub fn refuse_skip(out: &walk::Outcome, base: Option<&[u8]>) -> Result<(), Failure> {
    let Some(s) = &out.ignore_skip else {
        return Ok(());
    };
    let p = match s.path.first() {
        Some(b'/') => s.path.clone(),
        _ => shown(base.or(Some(b".")), &s.path),
    };
    let p = crate::protocol::display_path(Path::new(std::ffi::OsStr::from_bytes(&p)));
    Err(Failure::new(
        ErrorKind::ReadFailed,
        format!(
            "the ignore file {p} {}: not read, so the walk stopped; ask with \"gitignore\":false, or for a path that does not hold it",
            s.why()
        ),
    ))
}

/// One file found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The path as shown.
    pub path: Vec<u8>,
    /// Bytes.
    pub size: u64,
    /// Nanoseconds since the epoch.
    pub mtime_ns: i128,
}

/// The answer of `glob`.
#[derive(Debug, Default)]
pub struct Found {
    /// The entries, in the requested order.
    pub entries: Vec<Entry>,
    /// Every match.
    pub total: u64,
    /// More matched than `entries` holds, or a bound cut the walk.
    pub truncated: bool,
    /// A bound of the walk cut it (`total` is a lower bound).
    pub walk_cut: bool,
    /// Directories the walk could not read (not entered).
    pub unreadable: u64,
    /// Pseudo file systems not entered ([`walk::Outcome::pseudo`]).
    pub pseudo: u64,
}

/// Runs `glob`.
pub fn glob(req: &GlobRequest, root: Option<&Path>) -> Result<Found, Failure> {
    let g = Glob::new(&req.pattern).map_err(|e| Failure::new(ErrorKind::InvalidArgument, e))?;
    let p = req.path.as_deref().map_or(PathBuf::from("."), |b| {
        PathBuf::from(std::ffi::OsStr::from_bytes(b))
    });
    let Start::Dir(dir) = open_start(&p, root, false)? else {
        unreachable!("open_start gives a directory unless files are asked for")
    };
    let keep = req.offset.saturating_add(req.limit);
    // Path order is the walk's: the first `keep` are kept. Newest first:
    // a max-heap on (older, later path) drops the worst past `keep`.
    let mut first: Vec<Entry> = Vec::new();
    let mut heap: BinaryHeap<(Reverse<i128>, Vec<u8>, u64)> = BinaryHeap::new();
    let mut total = 0u64;
    let base = req.path.as_deref();
    let out = walk::walk(dir, req.walk, |f| {
        if !g.matches(f.rel) {
            return true;
        }
        if !req.by_mtime && total >= keep {
            total += 1;
            return true;
        }
        let Ok(st) = rfs::statat(f.dir, f.name, AtFlags::SYMLINK_NOFOLLOW) else {
            return true; // gone since it was listed
        };
        total += 1;
        let mtime_ns = st.st_mtime as i128 * 1_000_000_000 + st.st_mtime_nsec as i128;
        let size = st.st_size as u64;
        if req.by_mtime {
            heap.push((Reverse(mtime_ns), shown(base, f.rel), size));
            if heap.len() as u64 > keep {
                heap.pop();
            }
        } else {
            first.push(Entry {
                path: shown(base, f.rel),
                size,
                mtime_ns,
            });
        }
        true
    });
    refuse_skip(&out, base)?;
    if req.by_mtime {
        first = heap
            .into_sorted_vec()
            .into_iter()
            .map(|(Reverse(mtime_ns), path, size)| Entry {
                path,
                size,
                mtime_ns,
            })
            .collect();
    }
    let skip = (req.offset.min(first.len() as u64)) as usize;
    first.drain(..skip);
    Ok(Found {
        entries: first,
        total,
        truncated: out.truncated || total > keep,
        walk_cut: out.truncated,
        unreadable: out.unreadable,
        pseudo: out.pseudo,
    })
}
