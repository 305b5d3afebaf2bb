//! The transfer path of a V4A patch (or an `apply_patch_call`'s
//! operations): parsed by the helper's own parser and compiled by its own
//! compiler ([`as_edit_wire::patch::compile`]) into the transaction the helper
//! would run, whose chunks the helper's locator places over the
//! downloaded texts ([`transfer_txn`]): the same refusals, with `chunk`.

use super::transfer::refused as failed;
use super::txn::{Applied, PatchOp, PatchOpKind};
use super::txn_transfer::{options, transfer_txn};
use super::{EditError, Sandbox, Token};
use as_edit_text::patch::{self, Hunk, Patch};
use as_edit_wire::protocol::ErrorKind;

/// Parses a patch for the transfer path (`invalid_patch` as the helper
/// words it).
pub(crate) fn parse_patch(text: &str) -> Result<Patch, EditError> {
    patch::parse(text).map_err(|e| failed(ErrorKind::InvalidPatch, e.to_string()))
}

/// An `apply_patch_call`'s operations as one patch, refused as the
/// helper's `{"operations":[...]}` request is.
pub(crate) fn operations_patch(ops: &[PatchOp]) -> Result<Patch, EditError> {
    let n = ops.len();
    if n == 0 {
        return Err(failed(
            ErrorKind::InvalidArgument,
            "stdin request: operations is empty".into(),
        ));
    }
    let mut hunks = Vec::with_capacity(n);
    for (i, op) in ops.iter().enumerate() {
        let bad = |e: patch::ParseError| {
            failed(
                ErrorKind::InvalidPatch,
                format!("operation {} of {n} ({}): {e}", i + 1, op.path),
            )
        };
        let diff = op.diff.as_deref().unwrap_or("");
        let path = op.path.clone();
        hunks.push(match (op.kind, &op.move_to, &op.diff) {
            (PatchOpKind::CreateFile, None, _) => Hunk::Add {
                path,
                content: patch::parse_create_diff(diff).map_err(bad)?,
            },
            (PatchOpKind::UpdateFile, _, _) => Hunk::Update {
                path,
                move_to: op.move_to.clone(),
                chunks: patch::parse_update_diff(diff).map_err(bad)?,
            },
            (PatchOpKind::DeleteFile, None, None) => Hunk::Delete { path },
            (k, _, _) => {
                let k = serde_json::to_value(k).unwrap_or_default();
                return Err(failed(
                    ErrorKind::InvalidArgument,
                    format!(
                        "stdin request: operation {} of {n}: type {k} with these fields is not one of create_file (path, diff), update_file (path, diff, move_to), delete_file (path)",
                        i + 1
                    ),
                ));
            }
        });
    }
    Ok(Patch { hunks })
}

/// Runs `patch` on the transfer path.
pub(crate) fn transfer_patch<S: Sandbox + ?Sized>(
    sb: &mut S,
    p: Patch,
) -> Result<Applied, EditError> {
    let n = as_edit_wire::txn::MAX_OPS;
    if p.hunks.len() > n {
        return Err(failed(
            ErrorKind::InvalidPatch,
            format!("more than {n} file hunks (the transaction bound)"),
        ));
    }
    let txn = as_edit_wire::patch::compile(p, options(), false, false);
    match transfer_txn(sb, &txn) {
        // An agent that believes a file is new must not be told to
        // overwrite (the helper rewords it so too).
        Err(EditError::Failed {
            kind: Token::Known(ErrorKind::FileExists),
            detail: Some(d),
            count,
            via,
            hints,
            indent,
            at,
        }) => Err(EditError::Failed {
            kind: Token::Known(ErrorKind::FileExists),
            detail: Some(d.replace(
                "exists; give \"overwrite\": true to replace it",
                "exists; use Update File to change it, or Delete File then Add File to replace it",
            )),
            count,
            via,
            hints,
            indent,
            at,
        }),
        r => r,
    }
}
