//! The binary's patch inputs: `--patch` (the text on stdin), `--patch-b64
//! B64` (in argv, for exec APIs without stdin), `--patch-strict` (exact
//! matches only), and on `--stdin` the JSON forms `{"patch": TEXT}` and
//! the Responses API's `{"operations": [{"type": "create_file" |
//! "update_file" | "delete_file", "path", "diff", "move_to"}]}` (a `diff`
//! as the Agents SDK's `apply_diff` takes it: an update's chunks, or a new
//! file's `+` lines). Each compiles to one transaction (`compile.rs`) and
//! answers with its result line (success: `{"count":C,"files":K}`, C the
//! chunks applied, K as a transaction's: the distinct paths changed, both
//! of a move's); a text that does not parse is `invalid_patch` (exit 1: a
//! model wrote it) naming the line. The flags are read with the rest of
//! argv by the dispatcher (`dispatch::argv`), the JSON forms by its key
//! scan; this module runs them.

use super::{compile, parse, parse_create_diff, parse_update_diff, Hunk, Patch};
use crate::protocol::{failure_line, ErrorKind, Failure};
use crate::request::EditOptions;

/// Appended to `--help`.
pub const HELP: &str = "\
Patches (V4A, as OpenAI's apply_patch tool writes them), all or nothing:
  --patch                  read *** Begin Patch ... *** End Patch from standard input
  --patch-b64 B64          the patch as base64, in argv
  --patch-strict           match chunks exactly (no whitespace or punctuation grades)
  --stdin                  also takes {\"patch\": TEXT} or {\"operations\": [...]}
";

fn invalid(detail: String) -> Failure {
    Failure::new(ErrorKind::InvalidArgument, detail)
}

fn invalid_patch(detail: String) -> (String, i32) {
    let f = Failure::new(ErrorKind::InvalidPatch, detail);
    (failure_line(&f, None), f.kind.exit_code())
}

/// Runs a patch text: its result line and exit code.
#[cfg_attr(as_edit_small, optimize(size))]
pub fn run_text(bytes: &[u8], options: EditOptions, strict: bool) -> (String, i32) {
    let text = match std::str::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            return invalid_patch(format!("the patch is not UTF-8 (byte {})", e.valid_up_to()));
        }
    };
    match parse(text) {
        Ok(p) => run_patch(p, options, strict),
        Err(e) => invalid_patch(e.to_string()),
    }
}

#[cfg_attr(as_edit_small, optimize(size))]
fn run_patch(patch: Patch, options: EditOptions, strict: bool) -> (String, i32) {
    if options.expect_sha256.is_some() {
        let f = invalid("--expect-sha256 names one file; a patch may change several".into());
        return (failure_line(&f, None), f.kind.exit_code());
    }
    if patch.hunks.len() > crate::txn::MAX_OPS {
        let n = crate::txn::MAX_OPS;
        return invalid_patch(format!("more than {n} file hunks (the transaction bound)"));
    }
    let (line, code) = crate::txn::run(&compile(patch, options, strict, false));
    // An agent that believes a file is new must not be told to overwrite.
    let line = line.replace(
        "exists; give \\\"overwrite\\\": true to replace it",
        "exists; use Update File to change it, or Delete File then Add File to replace it",
    );
    (line, code)
}

#[derive(serde::Deserialize)]
struct Probe {
    #[serde(default)]
    patch: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    operations: Option<serde::de::IgnoredAny>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Request {
    #[serde(default)]
    patch: Option<String>,
    #[serde(default)]
    operations: Option<Vec<Operation>>,
}

/// One of the Responses API's operations, as read.
#[derive(Debug, serde::Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "an operation {\"type\", \"path\", \"diff\"}"
)]
pub struct Operation {
    #[serde(rename = "type")]
    kind: String,
    path: String,
    #[serde(default)]
    diff: Option<String>,
    #[serde(default)]
    move_to: Option<String>,
}

/// What a `--stdin` request holding `patch` or `operations` asks for.
pub enum Json {
    /// `{"patch": TEXT}`: run as `--patch` would ([`run_text`]).
    Text(String),
    /// `{"operations": [...]}` (not empty): run by [`run_operations`].
    Operations(Vec<Operation>),
}

/// A `--stdin` request holding `patch` or `operations` (not null), read
/// strictly; None for any other request. A malformed one is
/// `invalid_argument` in the request's words.
#[cfg_attr(as_edit_small, optimize(size))]
pub fn parse_json(json: &[u8]) -> Option<Result<Json, Failure>> {
    let text = std::str::from_utf8(json).ok()?;
    let probe: Probe = crate::strict_json::from_str(text).ok()?;
    probe.patch.as_ref().or(probe.operations.as_ref())?;
    Some(read_json(text))
}

/// A `--stdin` request known to hold `patch` or `operations` (not null),
/// read strictly; a malformed one is `invalid_argument` in the request's
/// words.
#[cfg_attr(as_edit_small, optimize(size))]
pub fn read_json(text: &str) -> Result<Json, Failure> {
    let bad = |d: String| Err(invalid(format!("stdin request: {d}")));
    let req: Request = match crate::strict_json::from_str(text) {
        Ok(r) => r,
        Err(e) => return bad(e.to_string()),
    };
    match (req.patch, req.operations) {
        (Some(p), None) => Ok(Json::Text(p)),
        (None, Some(ops)) if !ops.is_empty() => Ok(Json::Operations(ops)),
        (None, Some(_)) => bad("operations is empty".into()),
        _ => bad("give patch or operations, not both".into()),
    }
}

/// Runs the Responses API's operations: their result line and exit code.
#[cfg_attr(as_edit_small, optimize(size))]
pub fn run_operations(ops: Vec<Operation>, options: EditOptions, strict: bool) -> (String, i32) {
    match operations(ops) {
        Ok(p) => run_patch(p, options, strict),
        Err(Ok(d)) => invalid_patch(d),
        Err(Err(d)) => {
            let f = invalid(format!("stdin request: {d}"));
            (failure_line(&f, None), f.kind.exit_code())
        }
    }
}

/// The operations as a patch; Err(Ok) an unparsable diff (`invalid_patch`),
/// Err(Err) a malformed operation (`invalid_argument`).
#[cfg_attr(as_edit_small, optimize(size))]
fn operations(ops: Vec<Operation>) -> Result<Patch, Result<String, String>> {
    let n = ops.len();
    let mut hunks = Vec::with_capacity(n);
    for (i, op) in ops.into_iter().enumerate() {
        let at =
            |e: super::ParseError| Ok(format!("operation {} of {n} ({}): {e}", i + 1, op.path));
        let diff = op.diff.as_deref().unwrap_or("");
        // A NUL was a panic making the C string; "" named nothing (it
        // was "file_exists:  exists").
        let bad = |p: &str| p.is_empty() || p.contains('\0');
        if bad(&op.path) || op.move_to.as_deref().is_some_and(bad) {
            return Err(Err(format!(
                "operation {} of {n}: a path is empty or contains a NUL character",
                i + 1
            )));
        }
        hunks.push(match (op.kind.as_str(), &op.move_to) {
            ("create_file", None) => Hunk::Add {
                content: parse_create_diff(diff).map_err(at)?,
                path: op.path.clone(),
            },
            ("update_file", _) => Hunk::Update {
                chunks: parse_update_diff(diff).map_err(at)?,
                path: op.path.clone(),
                move_to: op.move_to.clone(),
            },
            ("delete_file", None) if op.diff.is_none() => Hunk::Delete {
                path: op.path.clone(),
            },
            (k, _) => {
                return Err(Err(format!(
                    "operation {} of {n}: type \"{k}\" with these fields is not one of create_file (path, diff), update_file (path, diff, move_to), delete_file (path)",
                    i + 1
                )))
            }
        });
    }
    Ok(Patch { hunks })
}
