//! The transfer path of a transaction: download every file the ops name,
//! compute every new content with the helper's pure code (the engine for
//! edits, the same refusals and hints), refuse before anything is
//! uploaded, then hand the changes to [`write_back`](super::write_back).
//!
//! Differences from the helper, all documented in the host module: files
//! are keyed by the path as written (two spellings of one file, a symlink
//! and its target, are two files here); a create's `mode` is whatever the
//! backend's upload gives a new file; nothing is atomic across files.

use std::path::Path;

use sha2::{Digest, Sha256};

use super::display::indent_words;
use super::txn::{Applied, FileChange, FileOp, TxnAt, TxnEdit};
use super::txn_ops::{build_edits, validate};
use super::write_back::{self, Write};
use super::{EditError, RefusalHints, Sandbox, Token, Via};
use crate::engine;
use crate::protocol::{refusal_failure, ErrorKind, Failure};

struct Entry {
    path: String,
    /// Which file this is: a move's target gets its source's.
    id: usize,
    file: u64,
    original: Option<Vec<u8>>,
    current: Option<Vec<u8>>,
}

/// Files seen so far, in first-use order.
pub(crate) struct Files<'a, S: ?Sized> {
    sb: &'a mut S,
    entries: Vec<Entry>,
    /// Files a move replaced: changed, though their path now holds another.
    replaced: Vec<usize>,
    n: usize,
}

/// A refusal of op `file` (1-based) of `n`, the detail prefixed as the
/// helper prefixes it.
pub(crate) fn refuse(f: Failure, file: u64, n: usize, path: &str) -> EditError {
    let d = f
        .detail
        .unwrap_or_else(|| super::display::default_words(&Token::Known(f.kind), f.count));
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
        }
    }

    /// The entry of `path`, downloaded on first use.
    pub(crate) fn get(&mut self, path: &str, file: u64) -> Result<usize, EditError> {
        if let Some(i) = self.entries.iter().position(|e| e.path == path) {
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
                    _ => self.refuse(
                        Failure::new(ErrorKind::ReadFailed, format!("downloading {path}: {e}")),
                        file,
                        path,
                    ),
                });
            }
        };
        self.entries.push(Entry {
            path: path.to_owned(),
            id: self.entries.len(),
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
    fn existing(&mut self, path: &str, file: u64) -> Result<(usize, Vec<u8>), EditError> {
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

    fn set(&mut self, i: usize, bytes: Option<Vec<u8>>, file: u64) {
        self.entries[i].current = bytes;
        self.entries[i].file = file;
    }

    /// The current bytes of entry `i` (None: absent).
    pub(crate) fn current(&self, i: usize) -> Option<&[u8]> {
        self.entries[i].current.as_deref()
    }

    /// Every file seen and its downloaded bytes, in first-use order.
    pub(crate) fn originals(self) -> Vec<(String, Option<Vec<u8>>)> {
        self.entries
            .into_iter()
            .map(|e| (e.path, e.original))
            .collect()
    }

    /// Every path whose content differs from what was downloaded, and
    /// how many files that is (a move's two paths are one file).
    pub(crate) fn writes(self) -> (Vec<Write>, u64) {
        let mut ids: Vec<usize> = self
            .entries
            .iter()
            .filter(|e| e.current != e.original)
            .map(|e| e.id)
            .chain(self.replaced.iter().copied())
            .collect();
        ids.sort_unstable();
        ids.dedup();
        let writes = self
            .entries
            .into_iter()
            .filter(|e| e.current != e.original)
            .map(|e| Write {
                path: e.path,
                file: e.file,
                original: e.original,
                new: e.current,
            })
            .collect();
        (writes, ids.len() as u64)
    }
}

fn sha256_hex(b: &[u8]) -> String {
    crate::hex::encode(&Sha256::digest(b))
}

fn change(op: &str, path: &str, bytes: Option<&[u8]>, count: u64, lines: Vec<u64>) -> FileChange {
    FileChange {
        path: path.to_owned(),
        op: op.to_owned(),
        count,
        size: bytes.map(|b| b.len() as u64),
        sha256: bytes.map(sha256_hex),
        lines,
        ..FileChange::default()
    }
}

/// Runs `ops` on the transfer path (see the module doc).
pub(crate) fn transfer_txn<S: Sandbox + ?Sized>(
    sb: &mut S,
    ops: &[FileOp],
) -> Result<Applied, EditError> {
    validate(ops)?;
    let mut paths: Vec<&str> = ops.iter().map(FileOp::path).collect();
    paths.extend(ops.iter().filter_map(|o| match o {
        FileOp::Move { to, .. } => Some(to.as_str()),
        _ => None,
    }));
    paths.sort_unstable();
    paths.dedup();
    // In sorted order, so two host threads never wait on each other.
    let _held: Vec<_> = paths
        .iter()
        .map(|p| super::transfer::lock(Path::new(p)))
        .collect();
    let mut files = Files::new(sb, ops.len());
    let (mut count, mut changes) = (0, Vec::with_capacity(ops.len()));
    for (k, op) in ops.iter().enumerate() {
        let file = k as u64 + 1;
        let c = apply_op(&mut files, op, file)?;
        count += c.count;
        changes.push(c);
    }
    let (writes, changed) = files.writes();
    write_back::write_all(sb, &writes, ops.len())?;
    Ok(Applied {
        count,
        files: changed,
        changes,
        via: Via::Transfer,
    })
}

fn check_sha<S: Sandbox + ?Sized>(
    files: &Files<S>,
    bytes: &[u8],
    want: &Option<String>,
    file: u64,
    path: &str,
) -> Result<(), EditError> {
    match want {
        Some(w) if !w.eq_ignore_ascii_case(&sha256_hex(bytes)) => Err(files.refuse(
            Failure::new(
                ErrorKind::Conflict,
                format!(
                    "{path} changed since it was read: its SHA-256 is {}",
                    sha256_hex(bytes)
                ),
            ),
            file,
            path,
        )),
        _ => Ok(()),
    }
}

fn apply_op<S: Sandbox + ?Sized>(
    files: &mut Files<S>,
    op: &FileOp,
    file: u64,
) -> Result<FileChange, EditError> {
    match op {
        FileOp::Edit {
            path,
            edits,
            expect_sha256,
        } => {
            let (i, bytes) = files.existing(path, file)?;
            check_sha(files, &bytes, expect_sha256, file, path)?;
            let (out, count, lines) = run_edits(files, &bytes, edits, file, path)?;
            let c = change("edit", path, Some(&out), count, lines);
            files.set(i, Some(out), file);
            Ok(c)
        }
        FileOp::Insert { path, line, text } => {
            let (i, bytes) = files.existing(path, file)?;
            let old = match engine::replace(&bytes, &[]) {
                Ok((out, _)) => String::from_utf8(out).expect("the engine checked UTF-8"),
                Err(engine::Refusal::Empty) => String::new(),
                Err(r) => return Err(files.refuse(refusal_failure(r, 1, path), file, path)),
            };
            // The helper's own pure function.
            let out = crate::txn::insert(&old, *line, text, Path::new(path))
                .map_err(|r| files.refuse(r.failure, file, path))?
                .text
                .into_bytes();
            let c = change("insert", path, Some(&out), 0, vec![line + 1]);
            files.set(i, Some(out), file);
            Ok(c)
        }
        FileOp::Create {
            path,
            content,
            overwrite,
            ..
        } => {
            let i = files.get(path, file)?;
            if files.entries[i].current.is_some() && !overwrite {
                return Err(files.refuse(exists(path), file, path));
            }
            let c = change("create", path, Some(content.as_bytes()), 0, Vec::new());
            files.set(i, Some(content.as_bytes().to_vec()), file);
            Ok(c)
        }
        FileOp::Delete {
            path,
            expect_sha256,
        } => {
            let (i, bytes) = files.existing(path, file)?;
            check_sha(files, &bytes, expect_sha256, file, path)?;
            files.set(i, None, file);
            Ok(change("delete", path, None, 0, Vec::new()))
        }
        FileOp::Move {
            path,
            to,
            overwrite,
            edits,
            expect_sha256,
        } => {
            let (i, bytes) = files.existing(path, file)?;
            check_sha(files, &bytes, expect_sha256, file, path)?;
            let j = files.get(to, file)?;
            if i != j && files.entries[j].current.is_some() && !overwrite {
                return Err(files.refuse(exists(to), file, path));
            }
            let (out, count, lines) = match edits.is_empty() {
                true => (bytes, 0, Vec::new()),
                false => run_edits(files, &bytes, edits, file, path)?,
            };
            // As the helper reports it: a plain rename has no new content.
            let shown = (!edits.is_empty()).then_some(&out[..]);
            let mut c = change("move", path, shown, count, lines);
            c.to = Some(to.clone());
            if i != j && files.entries[j].original.is_some() {
                files.replaced.push(files.entries[j].id);
            }
            files.set(i, None, file);
            files.set(j, Some(out), file);
            files.entries[j].id = files.entries[i].id;
            Ok(c)
        }
    }
}

fn exists(path: &str) -> Failure {
    Failure::new(
        ErrorKind::FileExists,
        format!("{path} exists; give \"overwrite\": true to replace it"),
    )
}

/// The edits through the engine, as the helper streams them: the new
/// bytes, the count and the last edit's lines; a refusal with hints.
fn run_edits<S: Sandbox + ?Sized>(
    files: &Files<S>,
    bytes: &[u8],
    edits: &[TxnEdit],
    file: u64,
    path: &str,
) -> Result<(Vec<u8>, u64, Vec<u64>), EditError> {
    let built = build_edits(edits)
        .map_err(|m| files.refuse(Failure::new(ErrorKind::InvalidArgument, m), file, path))?;
    // As `engine::replace`, with the lines `--report` gives.
    let mut out = Vec::with_capacity(bytes.len());
    let mut eng = engine::Engine::new(&built, true);
    eng.feed(bytes, &mut |b| out.extend_from_slice(b));
    match eng.finish(&mut |b| out.extend_from_slice(b)) {
        Ok(s) => {
            let lines = s.edits.last().map(|e| e.lines.clone()).unwrap_or_default();
            Ok((out, s.count, lines))
        }
        Err(r) => {
            let which = refused_edit(&r);
            let keys = which.and_then(|w| crate::hints::hint_keys_for_bytes(bytes, &built[w], &r));
            let mut f = refusal_failure(r, built.len(), path);
            f.hints = keys;
            let mut e = files.refuse(f, file, path);
            if let (EditError::Failed { indent, hints, .. }, Some(w)) = (&mut e, which) {
                *indent = indent_words(&edits[w].old, hints.as_deref());
            }
            Err(e)
        }
    }
}

fn refused_edit(r: &engine::Refusal) -> Option<usize> {
    use engine::Refusal as R;
    match r {
        R::NotFound { edit } | R::Multiple { edit, .. } => Some(*edit),
        _ => None,
    }
}
