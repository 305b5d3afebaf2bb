//! The toolset's fallback without the helper (the table in `tools`):
//! `read` downloads the file and answers with the helper's own parser and
//! reader ([`as_edit_wire::tools::parse`], [`as_edit_find::read::on_bytes`]), so
//! its answer is the helper's, line for line; `mkdir` is the backend's
//! [`Sandbox::make_dir`] / [`Sandbox::create_dirs`]; the rest say the
//! helper is required.
//!
//! What the download cannot see as the helper does: a read follows the
//! backend's download (symlinks followed as it follows them), and a FIFO
//! or device is not refused before it is read (the helper never opens
//! one); the whole file is downloaded, even for a range (once for all the
//! pages of a `read_all`).

use std::io;
use std::path::Path;

use serde_json::Value;

use super::error::helper_required;
use super::tools_answer::{said, Said};
use super::tools_request::MkdirRequest;
use super::transfer::{not_sendable, refused};
use super::txn::{Applied, FileChange};
use super::{EditError, Sandbox, Via};
use as_edit_wire::protocol::{display_path, ErrorKind, Failure};

/// A `read` (text or raw) over the downloaded file: the helper's request
/// parser (a bad request is refused in its words, before any download),
/// then its reader over the bytes, then its answer parsed as the
/// helper's output would be. `copy` holds the download for the next
/// page of the same file (`None`: downloaded here, then kept there).
pub(crate) fn read<S: Sandbox + ?Sized>(
    sb: &mut S,
    body: &Value,
    copy: &mut Option<Vec<u8>>,
) -> Result<Value, EditError> {
    let json = serde_json::to_vec(body).expect("a JSON value serializes");
    let options = as_edit_wire::request::EditOptions::default();
    let req = as_edit_wire::tools::parse(&json, &options).map_err(super::txn_transfer::refused)?;
    let path = match &req.op {
        as_edit_wire::tools::Op::Read(r) => &r.path,
        as_edit_wire::tools::Op::Raw(r) => &r.path,
        _ => return Err(helper_required("this op")),
    };
    let bytes = match copy {
        Some(b) => b,
        None => copy.insert(download(sb, path)?),
    };
    let (line, code) = as_edit_find::read::on_bytes(&req, bytes).expect("a read answers");
    match said(line.as_bytes(), Some(code), Via::Transfer)? {
        Said::Answer(v) => Ok(v),
        Said::Unavailable => unreachable!("the reader always writes a result line"),
    }
}

/// The file's bytes, a download failure in the helper's tokens.
fn download<S: Sandbox + ?Sized>(sb: &mut S, path: &Path) -> Result<Vec<u8>, EditError> {
    let shown = display_path(path);
    match sb.download(path) {
        Ok(b) => Ok(b),
        Err(e) if e.kind() == io::ErrorKind::NotConnected => Err(EditError::Backend(e)),
        Err(e) if e.kind() == io::ErrorKind::InvalidInput => Err(not_sendable(&e, Via::Transfer)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Err(refused(
            ErrorKind::FileNotFound,
            format!("{shown} does not exist"),
        )),
        // A FIFO or a device [`LocalShell`](super::LocalShell) would not open.
        Err(e)
            if e.get_ref()
                .is_some_and(|i| i.is::<super::local::NotRegular>()) =>
        {
            Err(refused(
                ErrorKind::FileNotFound,
                format!("{shown} is {}", e.get_ref().expect("checked")),
            ))
        }
        // The helper's words for a directory (it never reads one).
        Err(e) if e.raw_os_error() == Some(libc::EISDIR) => Err(refused(
            ErrorKind::FileNotFound,
            format!("{shown} is a directory, not a regular file"),
        )),
        Err(e) => Err(refused(
            ErrorKind::ReadFailed,
            format!("downloading {shown}: {e}"),
        )),
    }
}

/// `mkdir` through the backend: [`Sandbox::make_dir`] first, so that
/// `files` says whether a directory was made (0 for `parents` over an
/// existing one, as the helper's), then [`Sandbox::create_dirs`] for
/// `parents`. Refusals in the helper's tokens and words, but a missing
/// parent is named as the path's parent, where the helper names the
/// first missing ancestor. A backend without `make_dir` does `parents`
/// by `create_dirs` alone (then `files` is 1 even for an existing
/// directory); without `parents` it cannot, and says the helper is
/// required.
pub(crate) fn mkdir<S: Sandbox + ?Sized>(
    sb: &mut S,
    req: &MkdirRequest,
) -> Result<Applied, EditError> {
    let path = req.path.as_path();
    let made = |files| Applied {
        count: 0,
        files,
        changes: vec![FileChange {
            path: req.path.clone(),
            op: "mkdir".into(),
            ..FileChange::default()
        }],
        via: Via::Transfer,
    };
    let one = sb.make_dir(path);
    let e = match one {
        Ok(()) => return Ok(made(1)),
        Err(e) if !req.parents => e,
        Err(e) => {
            // An existing directory is made by no one: 0 files.
            let files = match e.kind() {
                io::ErrorKind::AlreadyExists => 0,
                io::ErrorKind::NotFound | io::ErrorKind::Unsupported => 1,
                _ => return Err(mkdir_failed(req, e)),
            };
            match sb.create_dirs(path) {
                Ok(()) => return Ok(made(files)),
                Err(e) => e,
            }
        }
    };
    Err(mkdir_failed(req, e))
}

fn mkdir_failed(req: &MkdirRequest, e: io::Error) -> EditError {
    let shown = display_path(req.path.as_path());
    let refuse = |kind, d: String| super::tree::refuse(Failure::new(kind, d), 1, 1, &shown);
    match e.kind() {
        io::ErrorKind::NotConnected => EditError::Backend(e),
        io::ErrorKind::InvalidInput => not_sendable(&e, Via::Transfer),
        io::ErrorKind::Unsupported => helper_required("mkdir"),
        io::ErrorKind::AlreadyExists => refuse(
            ErrorKind::FileExists,
            format!("{shown} exists (\"parents\": true accepts an existing directory)"),
        ),
        io::ErrorKind::NotFound => {
            let parent = req.path.as_path().parent().unwrap_or(Path::new("."));
            refuse(
                ErrorKind::FileNotFound,
                format!("{} does not exist", display_path(parent)),
            )
        }
        io::ErrorKind::NotADirectory => refuse(
            ErrorKind::FileNotFound,
            format!("{shown}: a component of the path is not a directory"),
        ),
        _ => refuse(ErrorKind::WriteFailed, format!("mkdir {shown}: {e}")),
    }
}
