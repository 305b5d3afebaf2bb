//! The positional form: `PATH OLD_B64 NEW_B64 [true|false]`, or PATH
//! followed by `OLD NEW true|false` triples, each OLD and NEW standard
//! base64 of UTF-8 text.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use super::invalid;
use crate::engine::Edit;
use crate::protocol::{edit_prefix, Failure};
use crate::request::{EditOptions, Request};

#[cfg_attr(as_edit_small, optimize(size))]
pub(crate) fn positional_request(
    pos: &[&OsStr],
    flag_all: bool,
    at_line: Option<u64>,
    options: EditOptions,
) -> Result<Request, Failure> {
    let usage = "expected PATH OLD_B64 NEW_B64 [true|false], or PATH followed by OLD NEW true|false triples";
    let (path, rest) = match pos.split_first() {
        Some((p, rest)) => (p, rest),
        None => return Err(invalid(format!("missing arguments: {usage}"))),
    };
    if path.is_empty() {
        return Err(invalid("PATH is empty"));
    }
    let mut edits = Vec::new();
    match rest.len() {
        2 | 3 => {
            let all = match rest.get(2) {
                None => flag_all,
                Some(a) => {
                    let a = parse_bool(a, "REPLACE_ALL")?;
                    if flag_all && !a {
                        return Err(invalid("--replace-all contradicts REPLACE_ALL=false"));
                    }
                    a || flag_all
                }
            };
            let mut edit = decode_edit(rest[0], rest[1], all, None)?;
            if let Some(line) = at_line {
                // Only the replace-all conflict remains (the line is ≥ 1).
                edit = edit
                    .with_at_line(line)
                    .map_err(|_| invalid("--at-line conflicts with replace-all"))?;
            }
            edits.push(edit);
        }
        n if n >= 6 && n % 3 == 0 => {
            if flag_all {
                return Err(invalid("--replace-all is for a single edit; in a batch every triple carries true|false"));
            }
            if at_line.is_some() {
                return Err(invalid(
                    "--at-line is for a single edit; in a batch use --stdin with \"at_line\" per edit",
                ));
            }
            let total = n / 3;
            for (i, t) in rest.chunks(3).enumerate() {
                let all = parse_bool(t[2], &format!("{}REPLACE_ALL", edit_prefix(i, total)))?;
                edits.push(decode_edit(t[0], t[1], all, Some((i, total)))?);
            }
        }
        n => {
            return Err(invalid(format!("{} positional arguments: {usage}", n + 1)));
        }
    }
    Ok(Request {
        path: PathBuf::from(path),
        edits,
        options,
    })
}

#[cfg_attr(as_edit_small, optimize(size))]
fn parse_bool(s: &OsStr, what: &str) -> Result<bool, Failure> {
    match s.as_bytes() {
        b"true" => Ok(true),
        b"false" => Ok(false),
        other => Err(invalid(format!(
            "{what} must be exactly true or false, got {:?}",
            String::from_utf8_lossy(other)
        ))),
    }
}

#[cfg_attr(as_edit_small, optimize(size))]
fn decode_edit(
    old: &OsStr,
    new: &OsStr,
    all: bool,
    batch: Option<(usize, usize)>,
) -> Result<Edit, Failure> {
    let prefix = match batch {
        Some((i, n)) => edit_prefix(i, n),
        None => String::new(),
    };
    let old = decode_b64(old).map_err(|e| invalid(format!("{prefix}OLD_B64 {e}")))?;
    let new = decode_b64(new).map_err(|e| invalid(format!("{prefix}NEW_B64 {e}")))?;
    Edit::new(&old, &new, all).map_err(|e| invalid(format!("{prefix}{e}")))
}

/// Standard base64 with canonical padding, decoding to UTF-8 text.
#[cfg_attr(as_edit_small, optimize(size))]
pub fn decode_b64(s: &OsStr) -> Result<String, String> {
    let bytes =
        super::b64::decode(s.as_bytes()).map_err(|e| format!("is not valid base64 ({e})"))?;
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "does not decode to UTF-8 (bad byte at offset {})",
            e.utf8_error().valid_up_to()
        )
    })
}
