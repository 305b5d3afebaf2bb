//! The `--stdin` request: the path and edits as JSON on standard input,
//! plain strings (no base64).

use std::path::PathBuf;

use super::invalid;
use crate::engine::Edit;
use crate::protocol::{edit_prefix, Failure};
use crate::request::{EditOptions, Request};

/// The `--stdin` request: plain strings, no base64.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct StdinRequest {
    path: String,
    edits: Vec<StdinEdit>,
    #[serde(default)]
    expect_sha256: Option<String>,
}

/// One edit of a request (single-file or a transaction's op).
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct StdinEdit {
    old: String,
    new: String,
    #[serde(default)]
    replace_all: bool,
    /// `--at-line` for this edit: a line of the text it sees.
    #[serde(default)]
    at_line: Option<u64>,
}

/// The edits of a request, each checked; `what` prefixes the empty-list
/// detail.
pub(crate) fn stdin_edits(raw: &[StdinEdit], what: &str) -> Result<Vec<Edit>, Failure> {
    if raw.is_empty() {
        return Err(invalid(format!("{what}: edits is empty")));
    }
    let total = raw.len();
    let mut edits = Vec::with_capacity(total);
    for (i, e) in raw.iter().enumerate() {
        let prefixed = |m: &str| invalid(format!("{}{m}", edit_prefix(i, total)));
        let mut edit = Edit::new(&e.old, &e.new, e.replace_all).map_err(prefixed)?;
        if let Some(line) = e.at_line {
            edit = edit.with_at_line(line).map_err(prefixed)?;
        }
        edits.push(edit);
    }
    Ok(edits)
}

/// Builds a request from `--stdin` JSON (already bounded by the caller).
pub fn parse_stdin_request(json: &[u8], mut options: EditOptions) -> Result<Request, Failure> {
    let text = std::str::from_utf8(json).map_err(|e| {
        invalid(format!(
            "stdin request is not UTF-8 (bad byte at offset {})",
            e.valid_up_to()
        ))
    })?;
    let req: StdinRequest =
        serde_json::from_str(text).map_err(|e| invalid(format!("stdin request: {e}")))?;
    if req.path.is_empty() {
        return Err(invalid("stdin request: path is empty"));
    }
    // No file name holds a NUL: the path would be cut there by the kernel.
    if req.path.contains('\0') {
        return Err(invalid("stdin request: path contains a NUL character"));
    }
    let edits = stdin_edits(&req.edits, "stdin request")?;
    if let Some(h) = req.expect_sha256 {
        if options.expect_sha256.is_some() {
            return Err(invalid(
                "expect_sha256 given both as a flag and in the stdin request",
            ));
        }
        options.expect_sha256 = Some(crate::hex::decode_sha256(&h).ok_or_else(|| {
            invalid("stdin request: expect_sha256 takes 64 lowercase hex digits")
        })?);
    }
    Ok(Request {
        path: PathBuf::from(req.path),
        edits,
        options,
    })
}
