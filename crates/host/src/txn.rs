//! Several files in one exec: the host-side operations ([`FileOp`]) that
//! serialize to exactly the helper's `{"files":[...]}` request, the patch
//! inputs ([`PatchOp`] for the Responses API's `apply_patch_call`
//! operations), the one command that carries either, and the result
//! line's transaction keys ([`Applied`], [`TxnAt`]).
//!
//! The request travels on stdin (`--stdin`, `--patch`) where the backend
//! has stdin, else base64 in argv (`--request-b64`, `--patch-b64`) within
//! the command bound. Over the bound with no stdin, the [`Editor`](super::Editor)
//! takes the transfer path, as a single edit does; [`Applied::via`] says so.

use serde::{Deserialize, Serialize};

use super::command::body_command;
use super::parse::{self, HelperOutcome};
use super::{EditError, Via};

/// The protocol that has `{"files":[...]}`, `--request-b64`, `--patch`.
pub const TXN_PROTOCOL: u32 = 3;

pub use super::file_op::{FileOp, TxnEdit};

/// One operation of an `apply_patch_call` (the Responses API's form):
/// `diff` is the hunks of one file, or the `+` lines of a new one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PatchOp {
    /// `create_file`, `update_file` or `delete_file`.
    #[serde(rename = "type")]
    pub kind: PatchOpKind,
    /// The file.
    pub path: String,
    /// The file's diff (empty for `delete_file`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    /// `update_file` only: the new path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub move_to: Option<String>,
}

/// The three operation types of an `apply_patch_call`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PatchOpKind {
    /// A new file from the `+` lines.
    CreateFile,
    /// Chunks applied to an existing file.
    UpdateFile,
    /// The file removed.
    DeleteFile,
}

/// What the helper (or the transfer path) is asked to run.
pub(crate) enum Request<'a> {
    Files(&'a [FileOp]),
    Patch(&'a str),
    Operations(&'a [PatchOp]),
}

impl Request<'_> {
    /// The JSON body (`--stdin`/`--request-b64`), or the patch text.
    fn body(&self) -> Result<Vec<u8>, serde_json::Error> {
        match self {
            Request::Files(ops) => serde_json::to_vec(&serde_json::json!({ "files": ops })),
            Request::Operations(ops) => {
                serde_json::to_vec(&serde_json::json!({ "operations": ops }))
            }
            Request::Patch(text) => Ok(text.as_bytes().to_vec()),
        }
    }

    /// The path of the op (1-based `file`) a refusal names, when the
    /// request says it (a patch: its hunk's, if the patch parses).
    pub(crate) fn path_of(&self, file: u64) -> Option<String> {
        let i = usize::try_from(file).ok()?.checked_sub(1)?;
        match self {
            Request::Files(ops) => ops
                .get(i)
                .map(|o| as_edit_wire::protocol::display_path(o.path())),
            Request::Operations(ops) => ops.get(i).map(|o| o.path.clone()),
            Request::Patch(text) => as_edit_text::patch::parse(text)
                .ok()?
                .hunks
                .get(i)
                .map(|h| match h {
                    as_edit_text::patch::Hunk::Add { path, .. }
                    | as_edit_text::patch::Hunk::Delete { path }
                    | as_edit_text::patch::Hunk::Update { path, .. } => path.clone(),
                }),
        }
    }
}

/// A command and the stdin it needs, if any.
pub(crate) type Command = (Vec<u8>, Option<Vec<u8>>);

/// The command (and stdin) that runs `req` in one exec: `--report` always
/// (the result's `changes`), `--hints` too. None when it cannot be sent:
/// over `limit` without stdin.
pub(crate) fn command(
    helper: &str,
    req: &Request,
    stdin: bool,
    limit: usize,
) -> Result<Option<Command>, EditError> {
    let body = req
        .body()
        .map_err(|e| super::transfer::not_sendable(&std::io::Error::other(e), Via::Native))?;
    let forms = match req {
        Request::Patch(_) => ("--patch", "--patch-b64"),
        _ => ("--stdin", "--request-b64"),
    };
    Ok(body_command(
        helper,
        &["--report", "--hints"],
        forms,
        &body,
        stdin,
        limit,
    ))
}

/// A transaction or patch that was applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Applied {
    /// Replacements summed over the edits (a patch: chunks applied).
    pub count: u64,
    /// The distinct paths whose entry changed (`src/txn/txn.md` defines
    /// it: a move counts its source and its target). The transfer path
    /// leaves a file whose new bytes equal its old ones alone and does not
    /// count it; the helper replaces it and does.
    pub files: u64,
    /// Per op, in request order (`--report`'s `changes`).
    pub changes: Vec<FileChange>,
    /// Which path did the work.
    pub via: Via,
}

/// What one op did (`--report`'s `changes` entry).
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct FileChange {
    /// The path: resolved by the helper, as given on the transfer path;
    /// its bytes exactly (`path` or `path_b64` on the wire).
    #[serde(deserialize_with = "super::tools_answer::de_path")]
    pub path: std::path::PathBuf,
    /// `edit`, `insert`, `create`, `delete` or `move`.
    pub op: String,
    /// A move's destination (`to` or `to_b64` on the wire).
    #[serde(deserialize_with = "super::tools_answer::de_opt_path")]
    pub to: Option<std::path::PathBuf>,
    /// Replacements (a patch: chunks) of this op.
    pub count: u64,
    /// Bytes of the new content (none for a delete).
    pub size: Option<u64>,
    /// Hex SHA-256 of the new content (none for a delete).
    pub sha256: Option<String>,
    /// 1-based lines of the new content where the changes start.
    pub lines: Vec<u64>,
    /// A patch: the grade each chunk matched at (`exact`, …).
    #[serde(rename = "match")]
    pub grades: Vec<String>,
}

/// Where in a transaction or patch a refusal happened, and what it left.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TxnAt {
    /// The failing op (1-based index into the request; a patch: its hunk).
    pub file: u64,
    /// That op's path, when known.
    pub path: Option<String>,
    /// A patch: the refused chunk within the file (1-based).
    pub chunk: Option<u64>,
    /// The failure came while committing, and every file was put back.
    pub rolled_back: bool,
    /// Putting files back failed: every file and its state (empty otherwise).
    pub partial: Vec<FileState>,
}

/// One file's state after a failed undo.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileState {
    /// The file (`path`, or `path_b64` decoded: names are lossless).
    pub path: std::path::PathBuf,
    /// Which content it has.
    pub state: State,
}

/// Old or new content, or (the transfer path only) neither for sure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// The original content.
    Old,
    /// The transaction's content.
    New,
    /// The transfer path could not read it back as either.
    Unknown,
}

impl State {
    /// `old`, `new`, `unknown`.
    pub fn as_str(self) -> &'static str {
        match self {
            State::Old => "old",
            State::New => "new",
            State::Unknown => "unknown",
        }
    }
}

/// The helper's answer to a transaction or patch.
pub(crate) enum Outcome {
    Applied(Applied),
    /// `write_failed` with nothing changed: the transfer path may work.
    WriteFailed(String),
    Unavailable,
    Final(EditError),
}

/// Reads a transaction's result line; refusals carry [`TxnAt`].
pub(crate) fn outcome(output: &[u8], exit_code: Option<i32>, req: &Request) -> Outcome {
    let obj = parse::result_object(output).unwrap_or_default();
    match parse::parse_output(output, exit_code) {
        HelperOutcome::Edited { count } => Outcome::Applied(Applied {
            count,
            files: obj.get("files").and_then(|f| f.as_u64()).unwrap_or(0),
            changes: obj
                .get("changes")
                .and_then(|c| {
                    // Names as bytes, whether `path` or `path_b64` came.
                    let mut c = c.clone();
                    super::tools_answer::bytes_keys(&mut c, &["path", "to"]).ok()?;
                    serde_json::from_value(c).ok()
                })
                .unwrap_or_default(),
            via: Via::Native,
        }),
        HelperOutcome::HelperUnavailable => Outcome::Unavailable,
        HelperOutcome::Unexpected { exit_code, excerpt } => {
            Outcome::Final(EditError::Unexpected { exit_code, excerpt })
        }
        HelperOutcome::Failed {
            kind,
            detail,
            count,
            hints,
        } => {
            let u = |k: &str| obj.get(k).and_then(|v| v.as_u64());
            let at = u("file").map(|file| TxnAt {
                file,
                path: req.path_of(file),
                chunk: u("chunk"),
                rolled_back: obj.get("rolled_back").and_then(|v| v.as_bool()) == Some(true),
                partial: partial(&obj),
            });
            let untouched = at.as_ref().is_none_or(|a| a.partial.is_empty());
            if kind.as_str() == "write_failed" && untouched {
                return Outcome::WriteFailed(detail.unwrap_or_default());
            }
            Outcome::Final(EditError::Failed {
                kind,
                detail,
                count,
                via: Via::Native,
                hints: hints.map(Box::new),
                indent: None,
                at: at.map(Box::new),
            })
        }
    }
}

fn partial(obj: &serde_json::Map<String, serde_json::Value>) -> Vec<FileState> {
    let list = obj.get("partial").and_then(|p| p.as_array());
    list.into_iter()
        .flatten()
        .filter_map(|p| {
            Some(FileState {
                path: super::tools_answer::path_of(p)?,
                state: match p.get("state")?.as_str()? {
                    "old" => State::Old,
                    "new" => State::New,
                    _ => State::Unknown,
                },
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::ffi::OsStrExt;

    #[test]
    fn partial_names_are_read_lossless() {
        let v = serde_json::json!({"partial": [
            {"path_b64": "L3Qv/y50eHQ=", "state": "new"},
            {"path": "/t/b.txt", "state": "old"},
            {"path_b64": "not base64!", "state": "old"},
        ]});
        let got = partial(v.as_object().unwrap());
        assert_eq!(got.len(), 2, "{got:?}");
        assert_eq!(got[0].path.as_os_str().as_bytes(), b"/t/\xff.txt");
        assert_eq!(got[0].state, State::New);
        assert_eq!(got[1].path, std::path::Path::new("/t/b.txt"));
    }
}
