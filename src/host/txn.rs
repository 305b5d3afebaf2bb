//! [`Editor::transaction`]: several files in one call. Natively one exec
//! (`--stdin` where the backend feeds stdin, else `--request-b64` within
//! the command bound) to a helper of protocol 3, all or nothing. Otherwise
//! the transfer fallback, which cannot be atomic across files: it
//! downloads every file, computes every new content with the same pure
//! code (the engine, [`crate::txn::insert`]), refuses before uploading
//! anything, then uploads in order; when an upload fails it re-uploads the
//! originals it had replaced and says which files are in which state. The
//! fallback does `edit`, `insert` and `create`; a `delete` or `move` needs
//! the helper (the backend API has no remove or rename).

use std::path::PathBuf;

use base64::Engine as _;

use super::{command, parse, EditError, Editor, Sandbox, Token, Via};
use crate::protocol::ErrorKind;

/// A committed transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TxnDone {
    /// Replacements over every op's edits.
    pub count: u64,
    /// Files changed.
    pub files: u64,
    /// Which path did the work.
    pub via: Via,
}

fn failed(kind: ErrorKind, detail: String, via: Via) -> EditError {
    EditError::Failed {
        kind: Token::Known(kind),
        detail: Some(detail),
        count: None,
        via,
        hints: None,
        indent: None,
    }
}

impl<S: Sandbox> Editor<S> {
    /// Runs `request` (`{"files":[...]}`, as the helper takes it): natively
    /// when the helper speaks protocol 3, else through the transfer
    /// fallback (see the module docs for what it cannot promise).
    pub fn transaction(&mut self, request: &serde_json::Value) -> Result<TxnDone, EditError> {
        let body = serde_json::to_vec(request).expect("a JSON value serializes");
        if self.helper_protocol().is_some_and(|p| p >= 3) {
            let helper = std::ffi::OsString::from(self.helper());
            let (cmd, stdin) = if self.sandbox.supports_stdin() {
                (
                    command::join_quoted(&[helper, "--stdin".into()]),
                    Some(body.as_slice()),
                )
            } else {
                let b64 = base64::engine::general_purpose::STANDARD.encode(&body);
                (
                    command::join_quoted(&[helper, "--request-b64".into(), b64.into()]),
                    None,
                )
            };
            if cmd.len() <= self.limit || stdin.is_some() {
                let out = self.sandbox.exec(&cmd, stdin).map_err(EditError::Backend)?;
                return native_outcome(&out.output, out.exit_code);
            }
        }
        transfer(&mut self.sandbox, request)
    }
}

fn native_outcome(output: &[u8], exit_code: Option<i32>) -> Result<TxnDone, EditError> {
    match parse::parse_output(output, exit_code) {
        parse::HelperOutcome::Edited { count } => {
            let files = String::from_utf8_lossy(output)
                .lines()
                .find_map(|l| {
                    l.strip_prefix(crate::protocol::RESULT_PREFIX)
                        .map(str::to_owned)
                })
                .and_then(|j| serde_json::from_str::<serde_json::Value>(&j).ok())
                .and_then(|v| v["files"].as_u64())
                .unwrap_or(0);
            Ok(TxnDone {
                count,
                files,
                via: Via::Native,
            })
        }
        parse::HelperOutcome::Failed {
            kind,
            detail,
            count,
            hints,
        } => Err(EditError::Failed {
            kind,
            detail,
            count,
            via: Via::Native,
            hints: hints.map(Box::new),
            indent: None,
        }),
        parse::HelperOutcome::HelperUnavailable => Err(EditError::Unexpected {
            exit_code,
            excerpt: "the helper became unavailable".into(),
        }),
        parse::HelperOutcome::Unexpected { exit_code, excerpt } => {
            Err(EditError::Unexpected { exit_code, excerpt })
        }
    }
}

/// A path's original bytes (if it existed), its new bytes, whether it
/// exists at this point of the transaction.
type Fetched = (PathBuf, Option<Vec<u8>>, Vec<u8>, bool);

/// The fallback: download, compute all, refuse before any upload, upload.
fn transfer<S: Sandbox + ?Sized>(
    sb: &mut S,
    request: &serde_json::Value,
) -> Result<TxnDone, EditError> {
    let json = serde_json::to_vec(request).expect("serializes");
    let txn = crate::txn::parse(&json, Default::default())
        .map_err(|f| failed(f.kind, f.detail.unwrap_or_default(), Via::Transfer))?;
    let n = txn.ops.len();
    let mut files: Vec<Fetched> = Vec::new();
    let mut count = 0;
    for (i, op) in txn.ops.iter().enumerate() {
        let p = crate::protocol::display_path(&op.path);
        let refuse = |kind, d: String| {
            failed(
                kind,
                format!("file {} of {n} ({p}): {d}", i + 1),
                Via::Transfer,
            )
        };
        let k = match files.iter().position(|f| f.0 == op.path) {
            Some(k) => k,
            None => {
                let orig = match sb.download(&op.path) {
                    Ok(b) => Some(b),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                    Err(e) => return Err(EditError::Backend(e)),
                };
                let cur = orig.clone().unwrap_or_default();
                let exists = orig.is_some();
                files.push((op.path.clone(), orig, cur, exists));
                files.len() - 1
            }
        };
        let exists = files[k].3;
        let cur = &files[k].2;
        let new = match &op.kind {
            crate::txn::OpKind::Edit {
                change: crate::txn::Change::Edits(edits),
                ..
            } => {
                if !exists {
                    return Err(refuse(ErrorKind::FileNotFound, "does not exist".into()));
                }
                match crate::engine::replace(cur, edits) {
                    Ok((out, s)) => {
                        count += s.count;
                        out
                    }
                    Err(r) => {
                        let f = crate::protocol::refusal_failure(r, edits.len(), &p);
                        let d = f
                            .detail
                            .clone()
                            .unwrap_or_else(|| f.kind.token().replace('_', " "));
                        return Err(refuse(f.kind, d));
                    }
                }
            }
            crate::txn::OpKind::Insert { line, text } => {
                let old = match crate::engine::replace(cur, &[]) {
                    Ok((o, _)) => String::from_utf8(o).expect("validated"),
                    Err(crate::engine::Refusal::Empty) => String::new(),
                    Err(r) => {
                        let f = crate::protocol::refusal_failure(r, 1, &p);
                        return Err(refuse(f.kind, f.detail.unwrap_or_default()));
                    }
                };
                match crate::txn::insert(&old, *line, text, &op.path) {
                    Ok(t) => t.text.into_bytes(),
                    Err(r) => {
                        return Err(refuse(r.failure.kind, r.failure.detail.unwrap_or_default()))
                    }
                }
            }
            crate::txn::OpKind::Create {
                content, overwrite, ..
            } => {
                if exists && !overwrite {
                    return Err(refuse(
                        ErrorKind::FileExists,
                        format!("{p} exists; give \"overwrite\": true to replace it"),
                    ));
                }
                content.clone().into_bytes()
            }
            _ => {
                let d = "the transfer fallback cannot delete, move or transform; it needs a helper of protocol 3";
                return Err(refuse(ErrorKind::WriteFailed, d.into()));
            }
        };
        files[k].2 = new;
        files[k].3 = true; // a create makes it exist for later ops
    }
    let changed: Vec<usize> = (0..files.len())
        .filter(|k| files[*k].1.as_ref() != Some(&files[*k].2))
        .collect();
    for (done, &k) in changed.iter().enumerate() {
        if let Err(e) = sb.upload(&files[k].0, &files[k].2) {
            let mut states = Vec::new();
            for &j in &changed[..done] {
                let restored = match &files[j].1 {
                    Some(orig) => sb.upload(&files[j].0, orig).is_ok(),
                    None => false,
                };
                states.push(format!(
                    "{}: {}",
                    files[j].0.display(),
                    if restored { "old (re-uploaded)" } else { "new" }
                ));
            }
            let d = format!(
                "uploading {} failed ({e}); not atomic across files: {}",
                files[k].0.display(),
                if states.is_empty() {
                    "nothing was replaced".into()
                } else {
                    states.join(", ")
                }
            );
            return Err(failed(ErrorKind::WriteFailed, d, Via::Transfer));
        }
    }
    Ok(TxnDone {
        count,
        files: changed.len() as u64,
        via: Via::Transfer,
    })
}
