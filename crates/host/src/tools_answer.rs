//! The toolset's typed answers: names decoded losslessly (`path` or
//! `path_b64` on the wire, bytes here), the fields of `src/tools/mod.rs`.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::PathBuf;

use base64::Engine as _;
use serde::Deserialize;
use serde_json::Value;

use super::parse::{self, HelperOutcome};
use super::{EditError, Via};

/// What an entry is (`lstat`'s type; `Missing` for `stat` of nothing).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EntryType {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link.
    Symlink,
    /// A FIFO, socket or device.
    Other,
    /// Nothing there (or, for a symlink's `resolved`, a dangling link).
    Missing,
    /// A symlink's `resolved` only: it leads out of `--root`.
    OutsideRoot,
}

/// A page's continuation: the request fields to set and send again.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct Next {
    /// `offset` (stat, list, glob, grep, raw read; text read: a byte hint).
    pub offset: Option<u64>,
    /// `start` (text read).
    pub start: Option<u64>,
    /// `length` (raw read: what is left of it).
    pub length: Option<u64>,
    /// `check` (text read, with `offset`: `tools::resume`).
    pub check: Option<u64>,
}

/// Rewrites every `"K"` (a string) or `"K_b64"` of a name key (`path`,
/// `target`) in `v` as `"K"`: the name's bytes, an array, which
/// [`de_path`] reads. So a name is lossless whichever way it came.
pub(crate) fn bytes_names(v: &mut Value) -> Result<(), String> {
    bytes_keys(v, &["path", "target"])
}

/// [`bytes_names`] for the name keys `keys` (a transaction's `changes`:
/// `path` and `to`).
pub(crate) fn bytes_keys(v: &mut Value, keys: &[&str]) -> Result<(), String> {
    match v {
        Value::Array(a) => a.iter_mut().try_for_each(|v| bytes_keys(v, keys)),
        Value::Object(o) => {
            for &key in keys {
                let b = match (o.remove(key), o.remove(&format!("{key}_b64"))) {
                    (Some(Value::String(s)), None) => s.into_bytes(),
                    (None, Some(Value::String(b))) => base64::engine::general_purpose::STANDARD
                        .decode(b)
                        .map_err(|e| format!("\"{key}_b64\" is not base64: {e}"))?,
                    (None, None) => continue,
                    _ => return Err(format!("\"{key}\" is neither a string nor base64")),
                };
                o.insert(key.into(), b.into());
            }
            o.values_mut().try_for_each(|v| bytes_keys(v, keys))
        }
        _ => Ok(()),
    }
}

/// The name an object gives as `"path"` (text) or `"path_b64"` (base64
/// of its bytes); `None` if neither is there and well formed.
pub(crate) fn path_of(v: &Value) -> Option<PathBuf> {
    let mut v = serde_json::json!({ "p": v.clone() });
    bytes_keys(&mut v["p"], &["path"]).ok()?;
    let b: Vec<u8> = serde_json::from_value(v["p"].get("path")?.clone()).ok()?;
    Some(PathBuf::from(OsString::from_vec(b)))
}

pub(crate) fn de_path<'de, D: serde::Deserializer<'de>>(d: D) -> Result<PathBuf, D::Error> {
    Ok(PathBuf::from(OsString::from_vec(Vec::<u8>::deserialize(
        d,
    )?)))
}

pub(crate) fn de_opt_path<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<PathBuf>, D::Error> {
    de_path(d).map(Some)
}

fn de_mode<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    let s = String::deserialize(d)?;
    u32::from_str_radix(&s, 8)
        .map(Some)
        .map_err(|_| serde::de::Error::custom(format!("mode {s:?} is not octal")))
}

fn de_b64<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
    let s = String::deserialize(d)?;
    (base64::engine::general_purpose::STANDARD.decode(s)).map_err(serde::de::Error::custom)
}

fn native() -> super::Via {
    super::Via::Native
}

/// One `stat` answer.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct StatEntry {
    /// The path as asked.
    #[serde(deserialize_with = "de_path")]
    pub path: PathBuf,
    /// What it is (`Missing` when nothing is there).
    #[serde(rename = "type")]
    pub kind: EntryType,
    /// Bytes (none when missing).
    pub size: Option<u64>,
    /// Modified, nanoseconds since the epoch (none when missing).
    pub mtime_ns: Option<u64>,
    /// The 12 permission bits (none when missing).
    #[serde(default, deserialize_with = "de_mode")]
    pub mode: Option<u32>,
    /// A symlink's text.
    #[serde(default, deserialize_with = "de_opt_path")]
    pub target: Option<PathBuf>,
    /// What a symlink leads to.
    pub resolved: Option<EntryType>,
}

/// A `stat` page.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct Stats {
    /// In request order, from the request's `offset`.
    pub entries: Vec<StatEntry>,
    /// Cut by `max_bytes`: `next` continues it.
    #[serde(default)]
    pub truncated: bool,
    /// The fields that continue a cut page.
    pub next: Option<Next>,
}

/// One `list` entry.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct ListEntry {
    /// The listed path joined with the entry's relative path.
    #[serde(deserialize_with = "de_path")]
    pub path: PathBuf,
    /// What it is.
    #[serde(rename = "type")]
    pub kind: EntryType,
    /// Bytes.
    pub size: u64,
    /// Modified, nanoseconds since the epoch.
    pub mtime_ns: u64,
}

/// A `list` page.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct Listing {
    /// Sorted bytewise by path.
    pub entries: Vec<ListEntry>,
    /// Every entry the walk found.
    pub total: u64,
    /// Names left out by `hidden:false`.
    pub hidden_count: Option<u64>,
    /// Directories that could not be read (listed, not entered).
    #[serde(default)]
    pub unreadable: u64,
    /// The walk's own bound stopped it: `total` is a lower bound.
    #[serde(default)]
    pub walk_truncated: bool,
    /// Cut by `limit` or `max_bytes`: `next` continues it.
    #[serde(default)]
    pub truncated: bool,
    /// The fields that continue a cut page.
    pub next: Option<Next>,
}

/// A text `read` page.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct TextPage {
    /// The lines as in the file (numbered if asked; cut lines cut).
    pub text: String,
    /// The first line asked for.
    pub start: u64,
    /// The last line given (`start - 1` if none).
    pub end: u64,
    /// The page reaches the end of the file.
    pub eof: bool,
    /// With `eof`: the file's line count.
    pub lines: Option<u64>,
    /// With `eof`: the whole file's SHA-256 (hex), for `expect_sha256`.
    pub sha256: Option<String>,
    /// Lines cut by `max_columns` or by the bound.
    #[serde(default)]
    pub cut_lines: Vec<u64>,
    /// Cut by `max_bytes`: `next` continues it.
    #[serde(default)]
    pub truncated: bool,
    /// The fields that continue a cut page.
    pub next: Option<Next>,
    /// Which path answered.
    #[serde(skip, default = "native")]
    pub via: super::Via,
}

/// A raw `read` page.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct BytesPage {
    /// The bytes.
    #[serde(rename = "b64", deserialize_with = "de_b64")]
    pub bytes: Vec<u8>,
    /// Where they start.
    pub offset: u64,
    /// The file's size.
    pub size: u64,
    /// They reach the end of the file.
    pub eof: bool,
    /// Cut by `max_bytes`: `next` continues it.
    #[serde(default)]
    pub truncated: bool,
    /// The fields that continue a cut page.
    pub next: Option<Next>,
    /// Which path answered.
    #[serde(skip, default = "native")]
    pub via: super::Via,
}

/// One `glob` match.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct FileEntry {
    /// The file's path.
    #[serde(deserialize_with = "de_path")]
    pub path: PathBuf,
    /// Bytes.
    pub size: u64,
    /// Modified, nanoseconds since the epoch.
    pub mtime_ns: u64,
}

/// A `glob` page.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct Found {
    /// In the requested order.
    pub entries: Vec<FileEntry>,
    /// Every match.
    pub total: u64,
    /// Directories that could not be read (not entered).
    #[serde(default)]
    pub unreadable: u64,
    /// Cut by `limit`, `max_bytes` or the walk's bound.
    #[serde(default)]
    pub truncated: bool,
    /// The fields that continue a cut page (none when the walk was cut).
    pub next: Option<Next>,
}

/// One `grep` line (`content`).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct GrepLine {
    /// The file.
    #[serde(deserialize_with = "de_path")]
    pub path: PathBuf,
    /// 1-based.
    pub line: u64,
    /// The line's text (cut at `max_columns`).
    pub text: String,
    /// The text was cut.
    #[serde(default)]
    pub cut: bool,
    /// A context line, not a match.
    #[serde(default)]
    pub context: bool,
}

/// One `grep` file (`files`, `count`).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct GrepFile {
    /// The file.
    #[serde(deserialize_with = "de_path")]
    pub path: PathBuf,
    /// Matching lines (`count` only).
    pub count: Option<u64>,
}

/// A `grep` page.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct Grepped {
    /// `content`: matches and context, in path then line order.
    #[serde(default)]
    pub matches: Vec<GrepLine>,
    /// `files` and `count`: in path order.
    #[serde(default)]
    pub files: Vec<GrepFile>,
    /// Files read.
    pub files_searched: u64,
    /// Files left out as binary (a NUL in the first 8 KiB).
    pub skipped_binary: u64,
    /// Files that could not be opened or read to their end, and
    /// directories that could not be read: what they hold was not searched.
    #[serde(default)]
    pub unreadable: u64,
    /// Cut by `limit`, `max_bytes` or the walk's bound.
    #[serde(default)]
    pub truncated: bool,
    /// The fields that continue a cut page.
    pub next: Option<Next>,
}

/// What the helper said to a toolset request.
pub(crate) enum Said {
    /// Its answer object.
    Answer(Value),
    /// No helper answered: the fallback's turn.
    Unavailable,
}

/// Reads a toolset answer from backend output: the result line's object,
/// a refusal (with its token, as for edits), or no helper at all.
pub(crate) fn said(output: &[u8], exit_code: Option<i32>, via: Via) -> Result<Said, EditError> {
    let answer = parse::any_result(output);
    if let Some(obj) = answer.filter(|o| !o.contains_key("error")) {
        return Ok(Said::Answer(Value::Object(obj)));
    }
    match parse::parse_output(output, exit_code) {
        HelperOutcome::Failed {
            kind,
            detail,
            count,
            hints,
        } => Err(EditError::Failed {
            kind,
            detail,
            count,
            via,
            hints: hints.map(Box::new),
            indent: None,
            at: None,
        }),
        HelperOutcome::HelperUnavailable => Ok(Said::Unavailable),
        HelperOutcome::Unexpected { exit_code, excerpt } => {
            Err(EditError::Unexpected { exit_code, excerpt })
        }
        HelperOutcome::Edited { .. } => Err(EditError::Unexpected {
            exit_code,
            excerpt: "an edit's result line where a toolset answer was expected".into(),
        }),
    }
}
