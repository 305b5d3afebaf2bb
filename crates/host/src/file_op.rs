//! A transaction's operations as the host builds them ([`FileOp`],
//! [`TxnEdit`]) and as the helper's `{"files":[...]}` request spells them.
//!
//! Paths are [`PathBuf`]s, so any name the sandbox can hold can be named:
//! one that is UTF-8 travels as `"path"` (`"to"`), one that is not as
//! `"path_b64"` (`"to_b64"`), its bytes in base64 — the helper's parser
//! takes either (`as_edit_wire::txn::parse`). `Wire` is that spelling: serde's
//! derive cannot choose a key by the value, so [`FileOp`] converts through
//! it, borrowing its text when serializing.

use std::borrow::Cow;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use base64::Engine as _;
use serde::{Deserialize, Serialize};

/// One old/new pair of an `edit` or `move` op (the single-file request's
/// edit: batch semantics, `at_line` optional).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TxnEdit {
    /// The text to find (exactly once unless `replace_all`).
    pub old: String,
    /// The text that replaces it.
    pub new: String,
    /// Replace every occurrence.
    #[serde(default)]
    pub replace_all: bool,
    /// Only the occurrence starting on this 1-based line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_line: Option<u64>,
}

impl TxnEdit {
    /// One exact-once replacement.
    pub fn new(old: impl Into<String>, new: impl Into<String>) -> TxnEdit {
        TxnEdit {
            old: old.into(),
            new: new.into(),
            replace_all: false,
            at_line: None,
        }
    }
}

/// One operation of a transaction, as the helper's request spells it
/// (`{"op":"edit",...}`, read back the same way); paths are as the
/// sandbox sees them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FileOp {
    /// Change an existing file's content.
    Edit {
        /// The file.
        path: PathBuf,
        /// At least one edit.
        edits: Vec<TxnEdit>,
        /// Refuse with `conflict` unless the file has these bytes (hex).
        expect_sha256: Option<String>,
    },
    /// Insert `text` as whole lines after line `line` (0: before the first).
    Insert {
        /// The file.
        path: PathBuf,
        /// Lines kept before the text.
        line: u64,
        /// The lines (a final newline is added when missing).
        text: String,
    },
    /// A new file with exactly `content`.
    Create {
        /// The file (missing parents are created).
        path: PathBuf,
        /// The bytes (no normalization).
        content: String,
        /// Replace an existing file instead of refusing with `file_exists`.
        overwrite: bool,
        /// Permission bits before the umask (default 0o644).
        mode: Option<u32>,
    },
    /// Remove the directory entry.
    Delete {
        /// The file (a directory with `recursive`).
        path: PathBuf,
        /// Remove a directory and everything under it (the helper only:
        /// protocol 4's writes).
        recursive: bool,
        /// Refuse with `conflict` unless the file has these bytes (hex).
        expect_sha256: Option<String>,
    },
    /// Rename `path` to `to`, applying `edits` on the way.
    Move {
        /// The file.
        path: PathBuf,
        /// Its new path (missing parents are created).
        to: PathBuf,
        /// Replace an existing `to` instead of refusing with `file_exists`.
        overwrite: bool,
        /// Edits applied while moving (none: a plain rename).
        edits: Vec<TxnEdit>,
        /// Refuse with `conflict` unless the file has these bytes (hex).
        expect_sha256: Option<String>,
    },
    /// A new directory (the helper only: protocol 4's writes;
    /// [`Editor::mkdir`](super::Editor::mkdir) has a fallback).
    Mkdir {
        /// The directory.
        path: PathBuf,
        /// Make missing parents, and accept an existing directory (`mkdir -p`).
        parents: bool,
    },
}

impl FileOp {
    /// The path the op is about.
    pub fn path(&self) -> &Path {
        match self {
            FileOp::Edit { path, .. }
            | FileOp::Insert { path, .. }
            | FileOp::Create { path, .. }
            | FileOp::Delete { path, .. }
            | FileOp::Move { path, .. }
            | FileOp::Mkdir { path, .. } => path,
        }
    }
}

/// A name as the request spells it: the UTF-8 text, or the bytes' base64.
type Key<'a> = (Option<Cow<'a, str>>, Option<String>);

fn spell(p: &Path) -> Key<'_> {
    match p.to_str() {
        Some(s) => (Some(Cow::Borrowed(s)), None),
        None => (None, Some(b64().encode(p.as_os_str().as_bytes()))),
    }
}

fn b64() -> base64::engine::GeneralPurpose {
    base64::engine::general_purpose::STANDARD
}

/// The name `key` (or `key_b64`) gives: exactly one of them, as the
/// helper's parser demands.
fn read(key: &str, (text, coded): Key) -> Result<PathBuf, String> {
    match (text, coded) {
        (Some(t), None) => Ok(PathBuf::from(t.into_owned())),
        (None, Some(c)) => b64()
            .decode(c.as_bytes())
            .map(|b| PathBuf::from(std::ffi::OsString::from_vec(b)))
            .map_err(|e| format!("\"{key}_b64\" is not valid base64 ({e})")),
        (Some(_), Some(_)) => Err(format!("give {key:?} or \"{key}_b64\", not both")),
        (None, None) => Err(format!("missing field `{key}`")),
    }
}

/// The request's spelling of a [`FileOp`] (see the module doc).
#[derive(Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "lowercase", deny_unknown_fields)]
enum Wire<'a> {
    Edit {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        path: Option<Cow<'a, str>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        path_b64: Option<String>,
        edits: Cow<'a, [TxnEdit]>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        expect_sha256: Option<Cow<'a, str>>,
    },
    Insert {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        path: Option<Cow<'a, str>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        path_b64: Option<String>,
        line: u64,
        text: Cow<'a, str>,
    },
    Create {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        path: Option<Cow<'a, str>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        path_b64: Option<String>,
        content: Cow<'a, str>,
        #[serde(default)]
        overwrite: bool,
        #[serde(
            default,
            skip_serializing_if = "Option::is_none",
            serialize_with = "octal",
            deserialize_with = "from_octal"
        )]
        mode: Option<u32>,
    },
    Delete {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        path: Option<Cow<'a, str>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        path_b64: Option<String>,
        #[serde(default, skip_serializing_if = "is_false")]
        recursive: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        expect_sha256: Option<Cow<'a, str>>,
    },
    Move {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        path: Option<Cow<'a, str>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        path_b64: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        to: Option<Cow<'a, str>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        to_b64: Option<String>,
        #[serde(default)]
        overwrite: bool,
        #[serde(default, skip_serializing_if = "<[TxnEdit]>::is_empty")]
        edits: Cow<'a, [TxnEdit]>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        expect_sha256: Option<Cow<'a, str>>,
    },
    Mkdir {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        path: Option<Cow<'a, str>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        path_b64: Option<String>,
        #[serde(default)]
        parents: bool,
    },
}

fn is_false(b: &bool) -> bool {
    !b
}

fn octal<S: serde::Serializer>(mode: &Option<u32>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&format!("{:04o}", mode.unwrap_or(0o644)))
}

fn from_octal<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    let s = String::deserialize(d)?;
    // Digits only, as the helper's parser: from_str_radix takes a sign.
    let digits = (3..=4).contains(&s.len()) && s.bytes().all(|b| (b'0'..=b'7').contains(&b));
    u32::from_str_radix(&s, 8)
        .ok()
        .filter(|_| digits)
        .map(Some)
        .ok_or_else(|| {
            serde::de::Error::custom(format!("mode takes 3 or 4 octal digits, got {s:?}"))
        })
}

fn sha(s: &Option<String>) -> Option<Cow<'_, str>> {
    s.as_deref().map(Cow::Borrowed)
}

impl Serialize for FileOp {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let wire = match self {
            FileOp::Edit {
                path,
                edits,
                expect_sha256,
            } => {
                let (path, path_b64) = spell(path);
                Wire::Edit {
                    path,
                    path_b64,
                    edits: Cow::Borrowed(edits),
                    expect_sha256: sha(expect_sha256),
                }
            }
            FileOp::Insert { path, line, text } => {
                let (path, path_b64) = spell(path);
                Wire::Insert {
                    path,
                    path_b64,
                    line: *line,
                    text: Cow::Borrowed(text),
                }
            }
            FileOp::Create {
                path,
                content,
                overwrite,
                mode,
            } => {
                let (path, path_b64) = spell(path);
                Wire::Create {
                    path,
                    path_b64,
                    content: Cow::Borrowed(content),
                    overwrite: *overwrite,
                    mode: *mode,
                }
            }
            FileOp::Delete {
                path,
                recursive,
                expect_sha256,
            } => {
                let (path, path_b64) = spell(path);
                Wire::Delete {
                    path,
                    path_b64,
                    recursive: *recursive,
                    expect_sha256: sha(expect_sha256),
                }
            }
            FileOp::Move {
                path,
                to,
                overwrite,
                edits,
                expect_sha256,
            } => {
                let ((path, path_b64), (to, to_b64)) = (spell(path), spell(to));
                Wire::Move {
                    path,
                    path_b64,
                    to,
                    to_b64,
                    overwrite: *overwrite,
                    edits: Cow::Borrowed(edits),
                    expect_sha256: sha(expect_sha256),
                }
            }
            FileOp::Mkdir { path, parents } => {
                let (path, path_b64) = spell(path);
                Wire::Mkdir {
                    path,
                    path_b64,
                    parents: *parents,
                }
            }
        };
        wire.serialize(s)
    }
}

impl<'de> Deserialize<'de> for FileOp {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let owned = |c: Option<Cow<str>>| c.map(Cow::into_owned);
        let op = match Wire::deserialize(d)? {
            Wire::Edit {
                path,
                path_b64,
                edits,
                expect_sha256,
            } => FileOp::Edit {
                path: read("path", (path, path_b64)).map_err(serde::de::Error::custom)?,
                edits: edits.into_owned(),
                expect_sha256: owned(expect_sha256),
            },
            Wire::Insert {
                path,
                path_b64,
                line,
                text,
            } => FileOp::Insert {
                path: read("path", (path, path_b64)).map_err(serde::de::Error::custom)?,
                line,
                text: text.into_owned(),
            },
            Wire::Create {
                path,
                path_b64,
                content,
                overwrite,
                mode,
            } => FileOp::Create {
                path: read("path", (path, path_b64)).map_err(serde::de::Error::custom)?,
                content: content.into_owned(),
                overwrite,
                mode,
            },
            Wire::Delete {
                path,
                path_b64,
                recursive,
                expect_sha256,
            } => FileOp::Delete {
                path: read("path", (path, path_b64)).map_err(serde::de::Error::custom)?,
                recursive,
                expect_sha256: owned(expect_sha256),
            },
            Wire::Move {
                path,
                path_b64,
                to,
                to_b64,
                overwrite,
                edits,
                expect_sha256,
            } => FileOp::Move {
                path: read("path", (path, path_b64)).map_err(serde::de::Error::custom)?,
                to: read("to", (to, to_b64)).map_err(serde::de::Error::custom)?,
                overwrite,
                edits: edits.into_owned(),
                expect_sha256: owned(expect_sha256),
            },
            Wire::Mkdir {
                path,
                path_b64,
                parents,
            } => FileOp::Mkdir {
                path: read("path", (path, path_b64)).map_err(serde::de::Error::custom)?,
                parents,
            },
        };
        Ok(op)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;

    /// A UTF-8 name is `path`/`to`, one that is not `path_b64`/`to_b64`;
    /// both read back as the same op, and the helper's parser takes them.
    #[test]
    fn names_are_sent_losslessly() {
        let odd = PathBuf::from(OsStr::from_bytes(b"caf\xe9"));
        let cases = [
            (
                FileOp::Move {
                    path: odd.clone(),
                    to: "d/x".into(),
                    overwrite: false,
                    edits: Vec::new(),
                    expect_sha256: None,
                },
                r#"{"op":"move","path_b64":"Y2Fm6Q==","to":"d/x","overwrite":false}"#,
            ),
            (
                FileOp::Create {
                    path: "a".into(),
                    content: "x".into(),
                    overwrite: true,
                    mode: Some(0o600),
                },
                r#"{"op":"create","path":"a","content":"x","overwrite":true,"mode":"0600"}"#,
            ),
            (
                FileOp::Mkdir {
                    path: odd.join(OsStr::from_bytes(b"\xff")),
                    parents: true,
                },
                r#"{"op":"mkdir","path_b64":"Y2Fm6S//","parents":true}"#,
            ),
        ];
        for (op, want) in cases {
            let text = serde_json::to_string(&op).unwrap();
            assert_eq!(text, want);
            assert_eq!(serde_json::from_str::<FileOp>(&text).unwrap(), op);
            let req = format!("{{\"files\":[{text}]}}");
            let txn = as_edit_wire::txn::parse(req.as_bytes(), Default::default()).unwrap();
            assert_eq!(txn.ops[0].path, op.path());
        }
        let both = r#"{"op":"delete","path":"a","path_b64":"YQ=="}"#;
        let e = serde_json::from_str::<FileOp>(both).unwrap_err();
        assert!(e
            .to_string()
            .contains("give \"path\" or \"path_b64\", not both"));
    }
}
