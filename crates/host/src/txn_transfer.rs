//! The transfer path of a transaction: the very [`Txn`] the helper runs
//! (from the helper's own request parser, [`as_edit_wire::txn::parse`], or patch
//! compiler, [`as_edit_wire::patch::compile`]), over downloaded files: every new
//! content is computed with the helper's pure code (the engine for edits,
//! [`as_edit_wire::txn::insert`], a patch's chunk locator), with the same
//! refusals and hints, before anything is uploaded; then the changes go
//! to [`write_back`].
//!
//! Differences from the helper, all documented in the host module: files
//! are keyed by their directory entry ([`tree`](super::tree): a symlink
//! and its target are two files here); a moved file's mode is what the
//! upload gives a new file; nothing is atomic across files.

use std::path::Path;

use sha2::{Digest, Sha256};

use super::display::indent_words;
use super::error::helper_required;
use super::tree::Files;
use super::txn::{Applied, FileChange, FileOp};
use super::write_back;
use super::{EditError, Sandbox, Token, Via};
use as_edit_text::engine;
use as_edit_wire::protocol::{display_path, refusal_failure, ErrorKind, Failure};
use as_edit_wire::request::EditOptions;
use as_edit_wire::txn::{Change, OpKind, Txn};

fn sha256_hex(b: &[u8]) -> String {
    as_edit_wire::hex::encode(&Sha256::digest(b))
}

fn change(op: &str, path: &str, bytes: Option<&[u8]>, count: u64, lines: Vec<u64>) -> FileChange {
    FileChange {
        path: path.into(),
        op: op.to_owned(),
        count,
        size: bytes.map(|b| b.len() as u64),
        sha256: bytes.map(sha256_hex),
        lines,
        ..FileChange::default()
    }
}

/// The options the helper gets from the Editor: `--report --hints`.
pub(crate) fn options() -> EditOptions {
    EditOptions {
        report: true,
        hints: true,
        ..EditOptions::default()
    }
}

/// Runs `ops` on the transfer path: parsed by the helper's own parser, so
/// a malformed request is refused in its words before any download.
pub(crate) fn transfer_ops<S: Sandbox + ?Sized>(
    sb: &mut S,
    ops: &[FileOp],
) -> Result<Applied, EditError> {
    let json = serde_json::to_vec(&serde_json::json!({ "files": ops }))
        .map_err(|e| super::transfer::not_sendable(&std::io::Error::other(e), Via::Transfer))?;
    let txn = as_edit_wire::txn::parse(&json, options()).map_err(refused)?;
    transfer_txn(sb, &txn)
}

/// A request the helper's own parser refused, answered by the fallback.
pub(crate) fn refused(f: as_edit_wire::protocol::Failure) -> EditError {
    EditError::Failed {
        kind: Token::Known(f.kind),
        detail: f.detail,
        count: f.count,
        via: Via::Transfer,
        hints: None,
        indent: None,
        at: None,
    }
}

/// Runs `txn` on the transfer path (see the module doc).
pub(crate) fn transfer_txn<S: Sandbox + ?Sized>(
    sb: &mut S,
    txn: &Txn,
) -> Result<Applied, EditError> {
    // Directories are the helper's: the transfer moves file contents
    // (the `tools` module's table says why there is no exact fallback).
    for op in &txn.ops {
        let to = match &op.kind {
            OpKind::Move { to, .. } => Some(to),
            _ => None,
        };
        // `tree.rs` keys and names files as text: a name that is not
        // UTF-8 would be written under its lossy spelling, another file.
        if op.path.to_str().is_none() || to.is_some_and(|t| t.to_str().is_none()) {
            let e = helper_required("a name that is not UTF-8");
            return Err(e);
        }
        match op.kind {
            OpKind::Mkdir { .. } => return Err(helper_required("mkdir")),
            OpKind::Delete {
                recursive: true, ..
            } => return Err(helper_required("recursive delete")),
            _ => {}
        }
    }
    let mut paths: Vec<&Path> = txn.ops.iter().map(|o| o.path.as_path()).collect();
    paths.extend(txn.ops.iter().filter_map(|o| match &o.kind {
        OpKind::Move { to, .. } => Some(to.as_path()),
        _ => None,
    }));
    // Paths compare by component (`./x` is `x`, as the lock's set sees
    // it): deduplicated so, a second spelling does not wait on the first.
    paths.sort_unstable();
    paths.dedup();
    // In sorted order, so two host threads never wait on each other.
    let _held: Vec<_> = paths.iter().map(|p| super::transfer::lock(p)).collect();
    let mut files = Files::new(sb, txn.ops.len());
    plan(&mut files, txn)?;
    let (mut count, mut changes) = (0, Vec::with_capacity(txn.ops.len()));
    for (k, op) in txn.ops.iter().enumerate() {
        let file = k as u64 + 1;
        let mut c = apply_op(&mut files, &op.kind, &display_path(&op.path), file)?;
        // Resolved, as the helper reports them.
        // The names are UTF-8 here (checked above): display_path is exact.
        c.path = files.shown(&display_path(&c.path)).into();
        c.to =
            c.to.map(|t| std::path::PathBuf::from(files.shown(&display_path(&t))));
        count += c.count;
        changes.push(c);
    }
    let (writes, changed) = files.writes();
    write_back::write_all(sb, &writes, txn.ops.len())?;
    Ok(Applied {
        count,
        files: changed,
        changes,
        via: Via::Transfer,
    })
}

/// The helper's plan phase: which paths exist at each op (every file
/// downloaded), so `file_not_found` and `file_exists` are found, in op
/// order, before any content is looked at, as the helper finds them.
fn plan<S: Sandbox + ?Sized>(files: &mut Files<S>, txn: &Txn) -> Result<(), EditError> {
    let mut exists: Vec<Option<bool>> = Vec::new();
    for (k, op) in txn.ops.iter().enumerate() {
        let (file, path) = (k as u64 + 1, display_path(&op.path));
        let mut at = |files: &mut Files<S>, p: &str| -> Result<(usize, bool), EditError> {
            let i = files.get(p, file)?;
            exists.resize(exists.len().max(i + 1), None);
            let e = *exists[i].get_or_insert(files.entries[i].original.is_some());
            Ok((i, e))
        };
        let (i, here) = at(files, &path)?;
        let gone = || Failure::new(ErrorKind::FileNotFound, format!("{path} does not exist"));
        match &op.kind {
            OpKind::Create { overwrite, .. } => {
                if here && !overwrite {
                    return Err(files.refuse(exists_failure(&path), file, &path));
                }
                exists[i] = Some(true);
            }
            _ if !here => return Err(files.refuse(gone(), file, &path)),
            OpKind::Delete { .. } => exists[i] = Some(false),
            OpKind::Move { to, overwrite, .. } => {
                let to = display_path(to);
                let (j, there) = at(files, &to)?;
                if i != j && there && !overwrite {
                    return Err(files.refuse(exists_failure(&to), file, &path));
                }
                exists[i] = Some(false);
                exists[j] = Some(true);
            }
            _ => {}
        }
    }
    Ok(())
}

fn check_sha<S: Sandbox + ?Sized>(
    files: &Files<S>,
    bytes: &[u8],
    want: &Option<[u8; 32]>,
    file: u64,
    path: &str,
) -> Result<(), EditError> {
    let has: [u8; 32] = Sha256::digest(bytes).into();
    match want {
        Some(w) if *w != has => Err(files.refuse(
            Failure::new(
                ErrorKind::Conflict,
                format!(
                    "{path} changed since it was read: its SHA-256 is {}",
                    as_edit_wire::hex::encode(&has)
                ),
            ),
            file,
            path,
        )),
        _ => Ok(()),
    }
}

/// The LF text of a file, as the helper reads it for a transform.
fn text<S: Sandbox + ?Sized>(
    files: &Files<S>,
    bytes: &[u8],
    file: u64,
    path: &str,
) -> Result<String, EditError> {
    match engine::replace(bytes, &[]) {
        Ok((out, _)) => Ok(String::from_utf8(out).expect("the engine checked UTF-8")),
        Err(engine::Refusal::Empty) => Ok(String::new()),
        Err(r) => Err(files.refuse(refusal_failure(r, 1, path), file, path)),
    }
}

fn apply_op<S: Sandbox + ?Sized>(
    files: &mut Files<S>,
    op: &OpKind,
    path: &str,
    file: u64,
) -> Result<FileChange, EditError> {
    match op {
        OpKind::Edit {
            change,
            expect_sha256,
        } => {
            let (i, bytes) = files.existing(path, file)?;
            check_sha(files, &bytes, expect_sha256, file, path)?;
            let (out, mut c) = run_change(files, &bytes, change, file, path)?;
            c.op = "edit".into();
            files.set(i, Some(out), file);
            Ok(c)
        }
        OpKind::Insert { line, text: t } => {
            let (i, bytes) = files.existing(path, file)?;
            let old = text(files, &bytes, file, path)?;
            // The helper's own pure function.
            let out = as_edit_wire::txn::insert(&old, *line, t, Path::new(path))
                .map_err(|r| files.refuse(r.failure, file, path))?
                .into_bytes();
            let c = change("insert", path, Some(&out), 0, vec![line + 1]);
            files.set(i, Some(out), file);
            Ok(c)
        }
        OpKind::Create {
            content,
            overwrite,
            mode,
        } => {
            let i = files.get(path, file)?;
            let new = files.entries[i].current.is_none();
            if !new && !overwrite {
                return Err(files.refuse(exists_failure(path), file, path));
            }
            let c = change("create", path, Some(content.as_bytes()), 0, Vec::new());
            files.set(i, Some(content.as_bytes().to_vec()), file);
            // A new file gets the mode; one replaced keeps its own unless
            // the op gives one (as the helper's commit does).
            match (new, mode) {
                (_, Some(m)) => files.entries[i].mode = Some(*m),
                (true, None) => {
                    files.entries[i].mode = Some(as_edit_wire::txn::NewModes::REQUEST.file)
                }
                (false, None) => {}
            }
            Ok(c)
        }
        OpKind::Delete { expect_sha256, .. } => {
            let (i, bytes) = files.existing(path, file)?;
            check_sha(files, &bytes, expect_sha256, file, path)?;
            files.set(i, None, file);
            Ok(change("delete", path, None, 0, Vec::new()))
        }
        OpKind::Move {
            to,
            overwrite,
            change: edits,
            expect_sha256,
        } => {
            let (i, bytes) = files.existing(path, file)?;
            check_sha(files, &bytes, expect_sha256, file, path)?;
            let to = display_path(to);
            let j = files.get(&to, file)?;
            if i != j && files.entries[j].current.is_some() && !overwrite {
                return Err(files.refuse(exists_failure(&to), file, path));
            }
            // As the helper reports it: a plain rename has no new content.
            let (out, mut c) = match edits {
                Some(ch) => run_change(files, &bytes, ch, file, path)?,
                None => (bytes, change("", path, None, 0, Vec::new())),
            };
            c.op = "move".into();
            c.to = Some(to.into());
            if i != j && files.entries[j].original.is_some() {
                files.replaced.push(j);
            }
            // A file created by this transaction keeps its create's mode.
            let mode = files.entries[i].mode;
            files.set(i, None, file);
            files.set(j, Some(out), file);
            files.entries[j].mode = mode;
            Ok(c)
        }
        OpKind::Mkdir { .. } => unreachable!("refused by transfer_txn"),
    }
}

fn exists_failure(path: &str) -> Failure {
    Failure::new(
        ErrorKind::FileExists,
        format!("{path} exists; give \"overwrite\": true to replace it"),
    )
}

/// A content change as the helper makes it: old/new edits through the
/// engine (a refusal with hints), or a transform of the LF text (a
/// patch's chunks: a refusal with its chunk).
fn run_change<S: Sandbox + ?Sized>(
    files: &Files<S>,
    bytes: &[u8],
    change_: &Change,
    file: u64,
    path: &str,
) -> Result<(Vec<u8>, FileChange), EditError> {
    let edits = match change_ {
        Change::Edits(e) => e,
        Change::Transform(t) => {
            let old = text(files, bytes, file, path)?;
            let mut out = String::new();
            let done = t.apply.apply(&old, &mut |s| out.push_str(s)).map_err(|r| {
                let mut e = files.refuse(r.failure, file, path);
                if let EditError::Failed { at: Some(at), .. } = &mut e {
                    at.chunk = r.chunk;
                }
                e
            })?;
            let out = out.into_bytes();
            let mut c = change("", path, Some(&out), done.count, done.lines);
            c.grades = done.notes.into_iter().map(|(_, g)| g).collect();
            return Ok((out, c));
        }
    };
    // As `engine::replace`, with the lines `--report` gives.
    let mut out = Vec::with_capacity(bytes.len());
    let mut eng = engine::Engine::new(edits, true);
    eng.feed(bytes, &mut |b| out.extend_from_slice(b));
    match eng.finish(&mut |b| out.extend_from_slice(b)) {
        Ok(s) => {
            let lines = s.edits.last().map(|e| e.lines.clone()).unwrap_or_default();
            let c = change("", path, Some(&out), s.count, lines);
            Ok((out, c))
        }
        Err(r) => {
            let which = refused_edit(&r);
            let keys =
                which.and_then(|w| as_edit_text::hints::hint_keys_for_bytes(bytes, &edits[w], &r));
            let mut f = refusal_failure(r, edits.len(), path);
            f.hints = keys;
            let mut e = files.refuse(f, file, path);
            if let (EditError::Failed { indent, hints, .. }, Some(w)) = (&mut e, which) {
                let old = String::from_utf8_lossy(edits[w].old_text());
                *indent = indent_words(&old, hints.as_deref());
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
