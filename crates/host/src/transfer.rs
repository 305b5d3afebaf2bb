//! The transfer fallback: download the file, run the same core as the
//! helper, upload the result ([`transfer_edit`]), with guards for its write,
//! which, unlike the helper's rename, is neither atomic nor locked on the
//! sandbox side:
//!
//! - [`lock`]: transfer edits of one path from this host process run one at
//!   a time (download → replace → upload), so threads sharing a process do
//!   not lose each other's updates. Other processes and other writers are
//!   not covered by it; [`upload_checked`]'s re-read catches most of them.
//! - [`upload_checked`]: re-reads the file just before the upload (changed
//!   since the download: `conflict`, nothing written), and after a failed
//!   upload, which may have removed or cut the file before failing (`docker
//!   cp` unlinks, then writes), re-reads it again: unchanged is
//!   `write_failed`; otherwise the original is uploaded back and the
//!   refusal says so; if that fails too, a backend error says the file may
//!   be damaged. `write_failed` keeps its promise: the file is as it was.

use std::collections::HashSet;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex};

use super::display::indent_words;
use super::{EditError, EditRequest, Edited, RefusalHints, Sandbox, Token, Via};
use as_edit_text::engine::{self, Edit};
use as_edit_wire::protocol::{display_path, refusal_failure, ErrorKind};

/// The transfer path: download, the same core as the helper, upload.
/// Writes through whatever the backend's upload does with symlinks. A
/// refusal carries the hints the helper's `--hints` would give, from the
/// same code over the downloaded text.
pub fn transfer_edit<S: Sandbox + ?Sized>(
    sandbox: &mut S,
    req: &EditRequest,
) -> Result<Edited, EditError> {
    let refused = |kind: ErrorKind, detail: Option<String>, count: Option<u64>| EditError::Failed {
        kind: Token::Known(kind),
        detail,
        count,
        via: Via::Transfer,
        hints: None,
        indent: None,
        at: None,
    };
    let mut edit = Edit::new(&req.old, &req.new, req.replace_all)
        .map_err(|m| refused(ErrorKind::InvalidArgument, Some(m.to_owned()), None))?;
    if let Some(line) = req.at_line {
        edit = edit
            .with_at_line(line)
            .map_err(|m| refused(ErrorKind::InvalidArgument, Some(m.to_owned()), None))?;
    }
    let _one_at_a_time = lock(&req.path);
    let bytes = match sandbox.download(&req.path) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotConnected => return Err(EditError::Backend(e)),
        Err(e) if e.kind() == io::ErrorKind::InvalidInput => {
            return Err(not_sendable(&e, Via::Transfer))
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(refused(
                ErrorKind::FileNotFound,
                Some(format!("{} does not exist", display_path(&req.path))),
                None,
            ))
        }
        Err(e) => {
            return Err(refused(
                ErrorKind::ReadFailed,
                Some(format!("downloading {}: {e}", display_path(&req.path))),
                None,
            ))
        }
    };
    let (out, summary) = engine::replace(&bytes, std::slice::from_ref(&edit)).map_err(|r| {
        let keys = as_edit_text::hints::hint_keys_for_bytes(&bytes, &edit, &r);
        let f = refusal_failure(r, 1, &display_path(&req.path));
        let hints = keys.map(RefusalHints::from_keys);
        EditError::Failed {
            kind: Token::Known(f.kind),
            detail: f.detail,
            count: f.count,
            via: Via::Transfer,
            indent: indent_words(&req.old, hints.as_ref()),
            hints: hints.map(Box::new),
            at: None,
        }
    })?;
    upload_checked(sandbox, &req.path, &bytes, &out)?;
    Ok(Edited {
        count: summary.count,
        via: Via::Transfer,
    })
}

static HELD: Mutex<Option<HashSet<PathBuf>>> = Mutex::new(None);
static RELEASED: Condvar = Condvar::new();

/// Held while one transfer edit of a path runs; dropping it lets the next in.
#[must_use]
pub(crate) struct PathLock(PathBuf);

/// Waits until no other transfer edit of `path` runs in this process.
/// Keyed by the path as given, whatever the sandbox: two sandboxes with the
/// same path serialize needlessly, never wrongly.
pub(crate) fn lock(path: &Path) -> PathLock {
    let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
    while held.get_or_insert_with(HashSet::new).contains(path) {
        held = RELEASED.wait(held).unwrap_or_else(|e| e.into_inner());
    }
    held.get_or_insert_with(HashSet::new)
        .insert(path.to_path_buf());
    PathLock(path.to_path_buf())
}

impl Drop for PathLock {
    fn drop(&mut self) {
        let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(h) = held.as_mut() {
            h.remove(&self.0);
        }
        RELEASED.notify_all();
    }
}

/// A transfer-path refusal with that token and detail.
pub(crate) fn refused(kind: ErrorKind, detail: String) -> EditError {
    EditError::Failed {
        kind: Token::Known(kind),
        detail: Some(detail),
        count: None,
        via: Via::Transfer,
        hints: None,
        indent: None,
        at: None,
    }
}

/// Uploads `new` over `path`, which held `original` when downloaded; see
/// the module doc for what each failure leaves and says.
pub(crate) fn upload_checked<S: Sandbox + ?Sized>(
    sandbox: &mut S,
    path: &Path,
    original: &[u8],
    new: &[u8],
) -> Result<(), EditError> {
    let shown = display_path(path);
    match sandbox.download(path) {
        Ok(now) if now == original => {}
        Ok(_) => {
            return Err(refused(
                ErrorKind::Conflict,
                format!("{shown} changed while the transfer edit ran; nothing written"),
            ))
        }
        Err(e) if e.kind() == io::ErrorKind::NotConnected => return Err(EditError::Backend(e)),
        Err(e) => {
            return Err(refused(
                ErrorKind::Conflict,
                format!("{shown} cannot be read again before writing ({e}); nothing written"),
            ))
        }
    }
    let Err(e) = sandbox.upload(path, new) else {
        return Ok(());
    };
    if matches!(sandbox.download(path), Ok(now) if now == original) {
        return Err(refused(ErrorKind::WriteFailed, format!("uploading: {e}")));
    }
    match sandbox.upload(path, original) {
        Ok(()) if matches!(sandbox.download(path), Ok(now) if now == original) => Err(refused(
            ErrorKind::WriteFailed,
            format!("uploading: {e} (original restored)"),
        )),
        Ok(()) => Err(EditError::Backend(io::Error::other(format!(
            "uploading {shown} failed ({e}), and after restoring it the file still differs: it may be damaged"
        )))),
        Err(r) => Err(EditError::Backend(io::Error::other(format!(
            "uploading {shown} failed ({e}), and restoring the original failed too ({r}): the file may be damaged"
        )))),
    }
}

/// A transfer refusal after the helper's `write_failed` keeps the helper's
/// detail: it often says more (why the directory refused the temp) than
/// the transfer path's own failure.
pub(crate) fn keep_helper_detail<T>(
    r: Result<T, EditError>,
    helper_said: Option<String>,
) -> Result<T, EditError> {
    match (r, helper_said) {
        (
            Err(EditError::Failed {
                kind,
                detail,
                count,
                via,
                hints,
                indent,
                at,
            }),
            Some(h),
        ) => {
            let mut d = detail.unwrap_or_default();
            d.push_str(if d.is_empty() { "" } else { "; " });
            d.push_str("the helper answered write_failed");
            if !h.is_empty() {
                d.push_str(": ");
                d.push_str(&h);
            }
            Err(EditError::Failed {
                kind,
                detail: Some(d),
                count,
                via,
                hints,
                indent,
                at,
            })
        }
        (r, _) => r,
    }
}

/// A request the backend cannot carry (a non-UTF-8 path to the docker
/// engine's JSON API): `invalid_argument`, as the helper would refuse a bad
/// invocation, rather than a transfer attempt that cannot carry it either.
pub(crate) fn not_sendable(e: &io::Error, via: Via) -> EditError {
    EditError::Failed {
        kind: Token::Known(ErrorKind::InvalidArgument),
        detail: Some(e.to_string()),
        count: None,
        via,
        hints: None,
        indent: None,
        at: None,
    }
}
