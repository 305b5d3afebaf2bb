//! The transfer path's commit of several files, after every new content
//! was computed and nothing was refused: each file is re-read (changed
//! since the download: `conflict`), then uploaded or removed, uploads
//! first (a move's new file exists before its old name goes).
//!
//! **Not atomic across files.** A reader may see some files new and some
//! old while it runs, and each upload is only as atomic as the backend's
//! (docker with a shell: a temp and `mv`; the local backend: a plain
//! write). When a write fails, the files already written are put back,
//! newest first (an original re-uploaded, a created file removed), each
//! read back to check: all back is `write_failed` (or `conflict`) with
//! `rolled_back`; any not back is `internal_error` whose `partial` lists
//! every file as `old`, `new` or `unknown` (read back as neither). The
//! directories it made for a create or a move
//! ([`Sandbox::make_dir`], one level at a time,
//! so it knows which) are then removed, deepest first, if empty; those that
//! existed are never touched. A new file gets its create's mode
//! ([`Sandbox::set_mode`]) right after its upload.

use std::io;
use std::path::{Path, PathBuf};

use super::txn::{FileState, State, TxnAt};
use super::{EditError, Sandbox, Token, Via};
use as_edit_wire::protocol::ErrorKind;

/// One file's change: `None` is absent (before: did not exist; after:
/// removed).
pub(crate) struct Write {
    pub path: String,
    /// A new file's mode (before the umask).
    pub mode: Option<u32>,
    /// The 1-based op (hunk) that last changed it, for a refusal's `file`.
    pub file: u64,
    pub original: Option<Vec<u8>>,
    pub new: Option<Vec<u8>>,
}

/// The file's bytes now, `None` when absent.
pub(crate) fn read<S: Sandbox + ?Sized>(sb: &mut S, path: &str) -> io::Result<Option<Vec<u8>>> {
    match sb.download(Path::new(path)) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Directories made by this write-back (outermost first), and those
/// known to exist.
#[derive(Default)]
struct Dirs {
    made: Vec<PathBuf>,
    known: Vec<PathBuf>,
}

/// Makes `dir` and its missing parents, recording which it made.
fn make_dirs<S: Sandbox + ?Sized>(sb: &mut S, dir: &Path, dirs: &mut Dirs) -> io::Result<()> {
    if dirs.known.iter().any(|d| d == dir) {
        return Ok(());
    }
    let mut r = sb.make_dir(dir);
    if matches!(&r, Err(e) if e.kind() == io::ErrorKind::NotFound) {
        if let Some(parent) = dir.parent().filter(|d| !d.as_os_str().is_empty()) {
            make_dirs(sb, parent, dirs)?;
            r = sb.make_dir(dir);
        }
    }
    match r {
        Ok(()) => dirs.made.push(dir.to_path_buf()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        // Backends that cannot create directories one by one may still
        // make them all, or have them: the upload says whether it can.
        Err(e) if e.kind() == io::ErrorKind::Unsupported => match sb.create_dirs(dir) {
            Err(e) if e.kind() != io::ErrorKind::Unsupported => return Err(e),
            _ => {}
        },
        Err(e) => return Err(e),
    }
    dirs.known.push(dir.to_path_buf());
    Ok(())
}

fn put<S: Sandbox + ?Sized>(
    sb: &mut S,
    path: &str,
    bytes: Option<&[u8]>,
    mode: Option<u32>,
    dirs: &mut Dirs,
) -> io::Result<()> {
    let p = Path::new(path);
    let Some(b) = bytes else {
        return sb.remove(p);
    };
    if let Some(dir) = p.parent().filter(|d| !d.as_os_str().is_empty()) {
        make_dirs(sb, dir, dirs)?;
    }
    sb.upload(p, b)?;
    match mode.map(|m| (m, sb.set_mode(p, m))) {
        // What every backend's upload gives a new file.
        Some((0o644, Err(e))) if e.kind() == io::ErrorKind::Unsupported => Ok(()),
        Some((m, Err(e))) => Err(io::Error::new(
            e.kind(),
            format!("uploaded, but setting its mode {m:04o} failed: {e}"),
        )),
        _ => Ok(()),
    }
}

fn state<S: Sandbox + ?Sized>(sb: &mut S, w: &Write) -> State {
    match read(sb, &w.path) {
        Ok(now) if now == w.original => State::Old,
        Ok(now) if now == w.new => State::New,
        _ => State::Unknown,
    }
}

/// Writes every change (see the module doc); `n` is the request's op count.
pub(crate) fn write_all<S: Sandbox + ?Sized>(
    sb: &mut S,
    writes: &[Write],
    n: usize,
) -> Result<(), EditError> {
    let mut order: Vec<usize> = (0..writes.len())
        .filter(|&i| writes[i].new.is_some())
        .collect();
    order.extend((0..writes.len()).filter(|&i| writes[i].new.is_none()));
    let mut done: Vec<usize> = Vec::new();
    let mut failed = None;
    let mut dirs = Dirs::default();
    for &i in &order {
        let w = &writes[i];
        match read(sb, &w.path) {
            Ok(now) if now == w.original => {}
            Err(e) if e.kind() == io::ErrorKind::NotConnected => {
                failed = Some((
                    i,
                    ErrorKind::Conflict,
                    format!("{} cannot be read again ({e})", w.path),
                    Some(e),
                ));
                break;
            }
            other => {
                let why = match other {
                    Err(e) => format!("cannot be read again before writing ({e})"),
                    Ok(None) => "was removed while the transfer ran".to_owned(),
                    _ => "changed while the transfer ran".to_owned(),
                };
                failed = Some((i, ErrorKind::Conflict, format!("{} {why}", w.path), None));
                break;
            }
        }
        if let Err(e) = put(sb, &w.path, w.new.as_deref(), w.mode, &mut dirs) {
            if state(sb, w) != State::Old {
                done.push(i);
            }
            let what = if w.new.is_some() {
                "uploading"
            } else {
                "removing"
            };
            failed = Some((
                i,
                ErrorKind::WriteFailed,
                format!("{what} {}: {e}", w.path),
                None,
            ));
            break;
        }
        done.push(i);
    }
    let Some((i, kind, why, unreachable)) = failed else {
        return Ok(());
    };
    if let Some(e) = unreachable.filter(|_| done.is_empty()) {
        return Err(EditError::Backend(e));
    }
    let mut states = vec![State::Old; writes.len()];
    let mut undo_errors = Vec::new();
    for &j in done.iter().rev() {
        let w = &writes[j];
        if w.original.is_some() {
            // Downloaded first: docker's upload gives a file the mode and
            // owner of its last download only when that was this file.
            let _ = read(sb, &w.path);
        }
        let back = put(
            sb,
            &w.path,
            w.original.as_deref(),
            None,
            &mut Dirs::default(),
        );
        states[j] = state(sb, w);
        if let Err(e) = back {
            undo_errors.push(format!("restoring {}: {e}", w.path));
        }
    }
    // Deepest first; one that is not empty (another writer's file in it)
    // or cannot go stays, and the detail says so.
    let mut left = Vec::new();
    for d in dirs.made.iter().rev() {
        if let Err(e) = sb.remove_dir(d) {
            left.push(format!("{} ({e})", d.display()));
        }
    }
    let all_back = states.iter().all(|s| *s == State::Old);
    let w = &writes[i];
    let mut detail = format!("file {} of {n} ({}): {why}", w.file, w.path);
    let at = TxnAt {
        file: w.file,
        path: Some(w.path.clone()),
        chunk: None,
        rolled_back: all_back && !done.is_empty(),
        partial: if all_back {
            Vec::new()
        } else {
            writes
                .iter()
                .zip(&states)
                .map(|(w, s)| FileState {
                    path: w.path.clone().into(),
                    state: *s,
                })
                .collect()
        },
    };
    let kind = if all_back {
        if !done.is_empty() {
            detail.push_str("; the files already written were restored");
        }
        kind
    } else {
        detail.push_str("; restoring the files already written failed");
        for u in &undo_errors {
            detail.push_str("; ");
            detail.push_str(u);
        }
        ErrorKind::InternalError
    };
    if !left.is_empty() {
        detail.push_str("; directories it made were left: ");
        detail.push_str(&left.join(", "));
    }
    Err(EditError::Failed {
        kind: Token::Known(kind),
        detail: Some(detail),
        count: None,
        via: Via::Transfer,
        hints: None,
        indent: None,
        at: Some(Box::new(at)),
    })
}
