//! The pure parts of a transaction's ops on the transfer path: the
//! request's own checks, worded as the helper's request parser words
//! them (`insert` itself is the helper's [`crate::txn::insert`]).

use super::txn::{FileOp, TxnEdit};
use super::{EditError, Token, Via};
use crate::engine::Edit;
use crate::protocol::ErrorKind;

/// The request's own errors, before any download: `invalid_argument`
/// worded as the helper's request parser words it (no `file` key).
pub(crate) fn validate(ops: &[FileOp]) -> Result<(), EditError> {
    let n = ops.len();
    let invalid = |d: String| EditError::Failed {
        kind: Token::Known(ErrorKind::InvalidArgument),
        detail: Some(d),
        count: None,
        via: Via::Transfer,
        hints: None,
        indent: None,
        at: None,
    };
    if n == 0 {
        return Err(invalid("files request: files is empty".into()));
    }
    if n > crate::txn::MAX_OPS {
        return Err(invalid(format!(
            "files request: {n} ops, more than the {} one transaction may hold",
            crate::txn::MAX_OPS
        )));
    }
    for (k, op) in ops.iter().enumerate() {
        let what = format!("file {} of {n}", k + 1);
        let to = match op {
            FileOp::Move { to, .. } => Some(to),
            _ => None,
        };
        for (key, p) in [("path", Some(op.path())), ("to", to.map(String::as_str))] {
            match p {
                Some("") => return Err(invalid(format!("{what}: {key} is empty"))),
                Some(p) if p.contains('\0') => {
                    return Err(invalid(format!("{what}: {key} contains a NUL character")))
                }
                _ => {}
            }
        }
        let edits = match op {
            FileOp::Edit { edits, .. } if edits.is_empty() => {
                return Err(invalid(format!("{what}: edits is empty")))
            }
            FileOp::Edit { edits, .. } | FileOp::Move { edits, .. } => &edits[..],
            _ => &[],
        };
        build_edits(edits).map_err(invalid)?;
    }
    Ok(())
}

/// The engine's edits, or the helper's words for a bad one.
pub(crate) fn build_edits(edits: &[TxnEdit]) -> Result<Vec<Edit>, String> {
    let total = edits.len();
    let mut built = Vec::with_capacity(total);
    for (i, e) in edits.iter().enumerate() {
        let bad = |m: &str| format!("{}{m}", crate::protocol::edit_prefix(i, total));
        let mut edit = Edit::new(&e.old, &e.new, e.replace_all).map_err(bad)?;
        if let Some(l) = e.at_line {
            edit = edit.with_at_line(l).map_err(bad)?;
        }
        built.push(edit);
    }
    Ok(built)
}
