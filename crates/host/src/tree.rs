//! The transfer path's files: each downloaded once, in first-use order,
//! with its content as the ops so far left it; what differs at the end is
//! what [`write_back`] writes. Keyed by the directory
//! entry: the canonical path of its directory
//! ([`Sandbox::resolve_dir`], one call per
//! directory) and its name, so `x`, `./x`, `d/../x` and `link-to-dir/x`
//! are one file (a directory a create makes: its parent's path and its
//! name); without `resolve_dir` by the path without `.` and empty
//! components (`..` kept: through a symlinked directory it is no lexical
//! cut). A symlink as the last component is its own entry, as a delete
//! sees it: an edit through it and one of its target are two files here.

use super::txn::TxnAt;
use super::write_back::{self, Write};
use super::{EditError, RefusalHints, Sandbox, Token, Via};
use as_edit_wire::protocol::{ErrorKind, Failure};

pub(crate) struct Entry {
    /// The file's identity (see the module doc).
    key: std::path::PathBuf,
    /// The path as first written, which downloads and uploads use.
    pub(crate) path: String,
    /// A create's mode, when the file is new.
    pub(crate) mode: Option<u32>,
    pub(crate) file: u64,
    pub(crate) original: Option<Vec<u8>>,
    pub(crate) current: Option<Vec<u8>>,
}

/// Files seen so far, in first-use order.
pub(crate) struct Files<'a, S: ?Sized> {
    sb: &'a mut S,
    pub(crate) entries: Vec<Entry>,
    /// Entries a move replaced: changed, even when the file moved there
    /// has the same bytes.
    pub(crate) replaced: Vec<usize>,
    n: usize,
    /// Directories resolved so far (None: `resolve_dir` failed there).
    dirs: Vec<(std::path::PathBuf, Option<std::path::PathBuf>)>,
    resolves: bool,
}

/// A refusal of op `file` (1-based) of `n`, the detail prefixed as the
/// helper prefixes it.
pub(crate) fn refuse(f: Failure, file: u64, n: usize, path: &str) -> EditError {
    // The helper's words for a refusal without a detail of its own.
    let d = as_edit_wire::txn::detail_of(&f);
    EditError::Failed {
        kind: Token::Known(f.kind),
        detail: Some(format!("file {file} of {n} ({path}): {d}")),
        count: f.count,
        via: Via::Transfer,
        hints: f.hints.map(RefusalHints::from_keys).map(Box::new),
        indent: None,
        at: Some(Box::new(TxnAt {
            file,
            path: Some(path.to_owned()),
            ..TxnAt::default()
        })),
    }
}

impl<'a, S: Sandbox + ?Sized> Files<'a, S> {
    pub(crate) fn new(sb: &'a mut S, n: usize) -> Self {
        Files {
            sb,
            entries: Vec::new(),
            replaced: Vec::new(),
            n,
            dirs: Vec::new(),
            resolves: true,
        }
    }

    /// `path`'s identity (see the module doc).
    fn key(&mut self, path: &str) -> std::path::PathBuf {
        use std::path::{Component, Path, PathBuf};
        let lexical: PathBuf = (Path::new(path).components())
            .filter(|c| *c != Component::CurDir)
            .collect();
        let (Some(name), Some(dir)) = (lexical.file_name(), lexical.parent()) else {
            return lexical;
        };
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        let real = self.real_dir(dir);
        real.map_or(lexical.clone(), |r| r.join(name))
    }

    /// `dir`'s canonical path; for one that does not exist (yet: a create
    /// makes it), its parent's and its name, so that its spellings are one
    /// too (`new/x`, `link-to-here/new/x`). None: unresolved.
    fn real_dir(&mut self, dir: &std::path::Path) -> Option<std::path::PathBuf> {
        use std::path::Path;
        if let Some((_, r)) = self.dirs.iter().find(|(d, _)| d == dir) {
            return r.clone();
        }
        if !self.resolves {
            return None;
        }
        let r = match self.sb.resolve_dir(dir) {
            Ok(r) => Some(r),
            Err(e) if e.kind() == std::io::ErrorKind::Unsupported => {
                self.resolves = false;
                None
            }
            // No name (`..`): no lexical step above a missing directory.
            Err(_) => match (dir.parent(), dir.file_name()) {
                (Some(p), Some(n)) => {
                    let p = if p.as_os_str().is_empty() {
                        Path::new(".")
                    } else {
                        p
                    };
                    self.real_dir(p).map(|r| r.join(n))
                }
                _ => None,
            },
        };
        self.dirs.push((dir.to_path_buf(), r.clone()));
        r
    }

    /// A `..` after a directory that is not there (`new/sub/../x`): the
    /// helper walks the path and finds nothing, where making the missing
    /// directories would reach another spelling's file.
    fn through_missing(&mut self, path: &str) -> bool {
        use std::path::{Component, Path, PathBuf};
        let c: Vec<Component> = Path::new(path).components().collect();
        let Some(n) = c.iter().rposition(|c| *c == Component::ParentDir) else {
            return false;
        };
        let upto: PathBuf = c[..=n].iter().collect();
        self.resolves
            && (self.sb.resolve_dir(&upto))
                .is_err_and(|e| e.kind() != std::io::ErrorKind::Unsupported)
    }

    /// `path` as its key spells it (resolved, with `resolve_dir`).
    pub(crate) fn shown(&mut self, path: &str) -> String {
        as_edit_wire::protocol::display_path(&self.key(path))
    }

    /// The entry of `path`, downloaded on first use.
    pub(crate) fn get(&mut self, path: &str, file: u64) -> Result<usize, EditError> {
        let key = self.key(path);
        if let Some(i) = self.entries.iter().position(|e| e.key == key) {
            return Ok(i);
        }
        let bytes = match write_back::read(self.sb, path) {
            Ok(b) => b,
            Err(e) => {
                use std::io::ErrorKind as K;
                return Err(match e.kind() {
                    K::NotConnected => EditError::Backend(e),
                    K::InvalidInput => super::transfer::not_sendable(&e, Via::Transfer),
                    _ if e.raw_os_error() == Some(libc::EISDIR) => self.refuse(
                        Failure::new(
                            ErrorKind::FileNotFound,
                            format!("{path} is a directory, not a regular file"),
                        ),
                        file,
                        path,
                    ),
                    // A file where a directory should be: the helper's token.
                    _ if e.raw_os_error() == Some(libc::ENOTDIR) => self.refuse(
                        Failure::new(ErrorKind::FileNotFound, format!("{path}: {e}")),
                        file,
                        path,
                    ),
                    _ => self.refuse(
                        Failure::new(ErrorKind::ReadFailed, format!("downloading {path}: {e}")),
                        file,
                        path,
                    ),
                });
            }
        };
        if bytes.is_none() && self.through_missing(path) {
            let f = Failure::new(ErrorKind::FileNotFound, format!("{path} does not exist"));
            return Err(self.refuse(f, file, path));
        }
        self.entries.push(Entry {
            key,
            path: path.to_owned(),
            mode: None,
            file,
            current: bytes.clone(),
            original: bytes,
        });
        Ok(self.entries.len() - 1)
    }

    pub(crate) fn refuse(&self, f: Failure, file: u64, path: &str) -> EditError {
        refuse(f, file, self.n, path)
    }

    /// The bytes `path` has now, or `file_not_found`.
    pub(crate) fn existing(
        &mut self,
        path: &str,
        file: u64,
    ) -> Result<(usize, Vec<u8>), EditError> {
        let i = self.get(path, file)?;
        match &self.entries[i].current {
            Some(b) => Ok((i, b.clone())),
            None => Err(self.refuse(
                Failure::new(ErrorKind::FileNotFound, format!("{path} does not exist")),
                file,
                path,
            )),
        }
    }

    pub(crate) fn set(&mut self, i: usize, bytes: Option<Vec<u8>>, file: u64) {
        if bytes.is_none() {
            self.entries[i].mode = None;
        }
        self.entries[i].current = bytes;
        self.entries[i].file = file;
    }

    /// Every path whose content differs from what was downloaded (or
    /// re-created: a new file, its mode), and how many paths changed:
    /// those, and those a move replaced (the helper's
    /// `"files"`: the distinct paths whose entry changed).
    pub(crate) fn writes(self) -> (Vec<Write>, u64) {
        let changed = (self.entries.iter().enumerate())
            .filter(|(i, e)| {
                e.current != e.original || e.mode.is_some() || self.replaced.contains(i)
            })
            .count();
        let writes = self
            .entries
            .into_iter()
            .filter(|e| e.current != e.original || e.mode.is_some())
            .map(|e| Write {
                path: e.path,
                mode: e.mode,
                file: e.file,
                original: e.original,
                new: e.current,
            })
            .collect();
        (writes, changed as u64)
    }
}
