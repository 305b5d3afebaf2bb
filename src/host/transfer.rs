//! The transfer fallback: download the file, run the same core as the
//! helper, upload the result.

use std::io;

use super::display::indent_words;
use super::{EditError, EditRequest, Edited, RefusalHints, Sandbox, Token, Via};
use crate::engine::{self, Edit};
use crate::protocol::{display_path, refusal_failure, ErrorKind};

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
    };
    let mut edit = Edit::new(&req.old, &req.new, req.replace_all)
        .map_err(|m| refused(ErrorKind::InvalidArgument, Some(m.to_owned()), None))?;
    if let Some(line) = req.at_line {
        edit = edit
            .with_at_line(line)
            .map_err(|m| refused(ErrorKind::InvalidArgument, Some(m.to_owned()), None))?;
    }
    let bytes = match sandbox.download(&req.path) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotConnected => return Err(EditError::Backend(e)),
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
        let keys = crate::hints::hint_keys_for_bytes(&bytes, &edit, &r);
        let f = refusal_failure(r, 1, &display_path(&req.path));
        let hints = keys.map(RefusalHints::from_keys);
        EditError::Failed {
            kind: Token::Known(f.kind),
            detail: f.detail,
            count: f.count,
            via: Via::Transfer,
            indent: indent_words(&req.old, hints.as_ref()),
            hints: hints.map(Box::new),
        }
    })?;
    sandbox.upload(&req.path, &out).map_err(|e| {
        refused(
            ErrorKind::WriteFailed,
            Some(format!("uploading: {e}")),
            None,
        )
    })?;
    Ok(Edited {
        count: summary.count,
        via: Via::Transfer,
    })
}
