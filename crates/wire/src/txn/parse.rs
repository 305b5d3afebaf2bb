//! `{"files":[OP,...]}` → [`Txn`]: every field checked, an unknown field
//! or op, a field another op owns, an empty list or more than [`MAX_OPS`]
//! ops are `invalid_argument`. Plain structs with `deny_unknown_fields`,
//! as the single-file request has.

use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use crate::protocol::{ErrorKind, Failure};
use crate::request::EditOptions;
use crate::stdin::{stdin_edits, EditList, LineNo};

use serde::Deserialize;

use super::op::{Change, Op, OpKind, Txn, MAX_OPS};

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields, expecting = "an object {\"files\": [OP, ...]}")]
struct FilesRequest {
    files: Ops,
}

/// The list of ops: an error inside one names it (`file 2: ...`), in
/// the request's words rather than serde's type names.
struct Ops(Vec<RawOp>);

impl<'de> serde::Deserialize<'de> for Ops {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Ops, D::Error> {
        struct List;
        impl<'de> serde::de::Visitor<'de> for List {
            type Value = Ops;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a list of ops")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Ops, A::Error> {
                let mut ops = Vec::new();
                loop {
                    match seq.next_element::<RawOp>() {
                        Ok(Some(op)) => ops.push(op),
                        Ok(None) => return Ok(Ops(ops)),
                        Err(e) => {
                            let i = ops.len() + 1;
                            return Err(serde::de::Error::custom(format_args!("file {i}: {e}")));
                        }
                    }
                }
            }
        }
        d.deserialize_seq(List)
    }
}

/// Every field any op takes; which op may have which is checked below.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields, expecting = "an object with \"op\" and \"path\"")]
struct RawOp {
    op: String,
    /// `path`, or `path_b64` for a name that is not UTF-8 (the toolset's
    /// lossless names, the helper's `tools::name`): one of them.
    path: Option<String>,
    path_b64: Option<String>,
    edits: Option<EditList>,
    expect_sha256: Option<String>,
    line: Option<LineNo>,
    text: Option<String>,
    content: Option<String>,
    overwrite: Option<bool>,
    mode: Option<String>,
    to: Option<String>,
    to_b64: Option<String>,
    recursive: Option<bool>,
    parents: Option<bool>,
}

/// A `--stdin` or `--request-b64` request: one file, or a transaction.
#[derive(Debug)]
pub enum Parsed {
    /// `{"path","edits",...}`: today's single-file request.
    One(crate::request::Request),
    /// `{"files":[...]}`: several files, all or nothing.
    Files(Txn),
}

/// Parses a request's JSON: a `files` key makes it a transaction.
#[cfg_attr(as_edit_small, optimize(size))]
pub fn parse_request(json: &[u8], options: EditOptions) -> Result<Parsed, Failure> {
    #[derive(serde::Deserialize)]
    struct Probe {
        // Any value, null included: `"files": null` is a files request
        // (its error is the list's), not a single file without `path`.
        #[serde(default, deserialize_with = "present")]
        files: Option<()>,
    }
    fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<()>, D::Error> {
        serde::de::IgnoredAny::deserialize(d).map(|_| Some(()))
    }
    let probe: Option<Probe> = std::str::from_utf8(json)
        .ok()
        .and_then(|t| crate::strict_json::from_str(t).ok());
    // Not valid JSON but begun as one (`{"files"` first): its errors in
    // the files request's words, not the single-file request's.
    let begun = |t: &[u8]| {
        let t = t.trim_ascii_start().strip_prefix(b"{");
        t.is_some_and(|t| t.trim_ascii_start().starts_with(b"\"files\""))
    };
    match probe {
        Some(Probe { files: Some(()) }) => parse(json, options).map(Parsed::Files),
        None if begun(json) => parse(json, options).map(Parsed::Files),
        _ => crate::stdin::parse_stdin_request(json, options).map(Parsed::One),
    }
}

/// Whether `op` names a transaction op (`edit`, `insert`, `create`,
/// `delete`, `move`, `mkdir`): such an op alone at the top level is a transaction
/// of one ([`parse_op`]).
pub fn is_op(op: Option<&str>) -> bool {
    matches!(
        op,
        Some("edit" | "insert" | "create" | "delete" | "move" | "mkdir")
    )
}

/// A transaction op given alone at the top level (`{"op":"create",…}`):
/// a transaction of one, read and refused as `{"files":[OP]}` would be.
#[cold] // off the single-file path: LLVM optimizes it for size
#[cfg_attr(as_edit_small, optimize(size))]
pub fn parse_op(json: &[u8], options: EditOptions) -> Result<Txn, Failure> {
    let text = std::str::from_utf8(json).map_err(|e| {
        invalid(format!(
            "request is not UTF-8 (bad byte at offset {})",
            e.valid_up_to()
        ))
    })?;
    let raw: RawOp = crate::strict_json::from_str(text)
        .map_err(|e| invalid(format!("op request: {}", crate::strict_json::words(&e))))?;
    if options.expect_sha256.is_some() {
        return Err(invalid(
            "--expect-sha256 is per op: give \"expect_sha256\" in the op".into(),
        ));
    }
    Ok(Txn {
        ops: vec![op(raw, "file 1 of 1")?],
        options,
        new_modes: super::op::NewModes::REQUEST,
        patch: false,
    })
}

fn invalid(detail: String) -> Failure {
    Failure::new(ErrorKind::InvalidArgument, detail)
}

/// Parses a transaction request. `options.expect_sha256` must be unset:
/// in a transaction it is per op.
#[cold] // off the single-file path: LLVM optimizes it for size
#[cfg_attr(as_edit_small, optimize(size))]
pub fn parse(json: &[u8], options: EditOptions) -> Result<Txn, Failure> {
    let text = std::str::from_utf8(json).map_err(|e| {
        invalid(format!(
            "request is not UTF-8 (bad byte at offset {})",
            e.valid_up_to()
        ))
    })?;
    let req: FilesRequest = crate::strict_json::from_str(text).map_err(|e| {
        // Not JSON at all: the syntax error, not the op it seemed to be in.
        let e = serde_json::from_str::<serde::de::IgnoredAny>(text)
            .err()
            .unwrap_or(e);
        // serde_json's words for text after the object.
        let e = crate::strict_json::words(&e)
            .replace("trailing characters", "text after the request's closing }");
        invalid(format!("files request: {e}"))
    })?;
    if options.expect_sha256.is_some() {
        return Err(invalid(
            "--expect-sha256 is per op in a files request: give \"expect_sha256\" in the op".into(),
        ));
    }
    let n = req.files.0.len();
    if n == 0 {
        return Err(invalid("files request: files is empty".into()));
    }
    if n > MAX_OPS {
        return Err(invalid(format!(
            "files request: {n} ops, more than the {MAX_OPS} one transaction may hold"
        )));
    }
    let ops = (req.files.0.into_iter())
        .enumerate()
        .map(|(i, raw)| op(raw, &format!("file {} of {n}", i + 1)))
        .collect::<Result<_, _>>()?;
    Ok(Txn {
        ops,
        options,
        new_modes: super::op::NewModes::REQUEST,
        patch: false,
    })
}

/// `key` given as a string or as `key_b64` (its bytes in base64); `None`
/// if neither.
#[cfg_attr(as_edit_small, optimize(size))]
fn name(
    what: &str,
    key: &str,
    plain: Option<String>,
    b64: Option<String>,
) -> Result<Option<PathBuf>, Failure> {
    let bytes = match (plain, b64) {
        (Some(_), Some(_)) => {
            return Err(invalid(format!(
                "{what}: give {key:?} or \"{key}_b64\", not both"
            )))
        }
        (Some(p), None) => p.into_bytes(),
        (None, Some(b)) => crate::b64::decode(b.as_bytes())
            .map_err(|e| invalid(format!("{what}: \"{key}_b64\" is not valid base64 ({e})")))?,
        (None, None) => return Ok(None),
    };
    if bytes.is_empty() {
        return Err(invalid(format!("{what}: {key} is empty")));
    }
    if bytes.contains(&0) {
        return Err(invalid(format!("{what}: {key} contains a NUL character")));
    }
    Ok(Some(PathBuf::from(
        <std::ffi::OsString as std::os::unix::ffi::OsStringExt>::from_vec(bytes),
    )))
}

#[cold] // off the single-file path: LLVM optimizes it for size
#[cfg_attr(as_edit_small, optimize(size))]
fn op(mut raw: RawOp, what: &str) -> Result<Op, Failure> {
    // The fields each op may carry besides `op` and `path`.
    let allowed: &[&str] = match raw.op.as_str() {
        "edit" => &["edits", "expect_sha256"],
        "insert" => &["line", "text"],
        "create" => &["content", "overwrite", "mode"],
        "delete" => &["expect_sha256", "recursive"],
        "move" => &["to", "overwrite", "edits", "expect_sha256"],
        "mkdir" => &["parents"],
        other => {
            return Err(invalid(format!(
                "{what}: unknown op {other:?} (edit, insert, create, delete, move or mkdir)"
            )))
        }
    };
    let given = [
        ("edits", raw.edits.is_some()),
        ("expect_sha256", raw.expect_sha256.is_some()),
        ("line", raw.line.is_some()),
        ("text", raw.text.is_some()),
        ("content", raw.content.is_some()),
        ("overwrite", raw.overwrite.is_some()),
        ("mode", raw.mode.is_some()),
        ("to", raw.to.is_some() || raw.to_b64.is_some()),
        ("recursive", raw.recursive.is_some()),
        ("parents", raw.parents.is_some()),
    ];
    if let Some((k, _)) = given.iter().find(|(k, g)| *g && !allowed.contains(k)) {
        return Err(invalid(format!("{what}: {:?} takes no {k:?}", raw.op)));
    }
    let need = |k: &str| invalid(format!("{what}: {:?} needs {k:?}", raw.op));
    let expect = match &raw.expect_sha256 {
        Some(h) => Some(crate::hex::decode_sha256(h).ok_or_else(|| {
            invalid(format!(
                "{what}: expect_sha256 takes 64 lowercase hex digits"
            ))
        })?),
        None => None,
    };
    let edits = match raw.edits.take() {
        Some(e) => Some(stdin_edits(e, what)?),
        None => None,
    };
    let overwrite = raw.overwrite.unwrap_or(false);
    let kind = match raw.op.as_str() {
        "edit" => OpKind::Edit {
            change: Change::Edits(edits.ok_or_else(|| need("edits"))?),
            expect_sha256: expect,
        },
        "insert" => OpKind::Insert {
            line: raw.line.ok_or_else(|| need("line"))?.0,
            text: raw.text.ok_or_else(|| need("text"))?,
        },
        "create" => OpKind::Create {
            content: raw.content.ok_or_else(|| need("content"))?,
            overwrite,
            mode: match &raw.mode {
                None => None,
                Some(m) => Some(octal_mode(m).ok_or_else(|| {
                    invalid(format!(
                        "{what}: mode takes 3 or 4 octal digits (\"0644\"), got {m:?}"
                    ))
                })?),
            },
        },
        "delete" => OpKind::Delete {
            expect_sha256: expect,
            recursive: raw.recursive.unwrap_or(false),
        },
        "mkdir" => OpKind::Mkdir {
            parents: raw.parents.unwrap_or(false),
        },
        _ => OpKind::Move {
            to: name(what, "to", raw.to.take(), raw.to_b64.take())?.ok_or_else(|| need("to"))?,
            overwrite,
            change: edits.map(Change::Edits),
            expect_sha256: expect,
        },
    };
    let mut path =
        name(what, "path", raw.path.take(), raw.path_b64.take())?.ok_or_else(|| need("path"))?;
    if let OpKind::Mkdir { .. } = kind {
        // `mkdir a/` is `mkdir a`: the trailing `/` names the directory made.
        let b = path.as_os_str().as_encoded_bytes();
        let n = b.len() - b.iter().rev().take_while(|&&c| c == b'/').count();
        if n > 0 {
            path = PathBuf::from(std::ffi::OsStr::from_bytes(&b[..n]));
        }
    }
    Ok(Op { path, kind })
}

/// `"0644"`, `"644"`, `"1777"`: permission bits, at most 0o7777.
fn octal_mode(m: &str) -> Option<u32> {
    let ok = (3..=4).contains(&m.len()) && m.bytes().all(|b| (b'0'..=b'7').contains(&b));
    ok.then(|| u32::from_str_radix(m, 8).ok()).flatten()
}
