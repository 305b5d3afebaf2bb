//! The `--stdin` request: `{"path", "edits": [{"old", "new", "replace_all",
//! "at_line"}], "expect_sha256"}` as JSON, plain strings (no base64).
//!
//! Read through [`crate::strict_json`], so every struct here is read only
//! from a JSON object (an array in its place is `invalid_argument`), and so
//! is any struct added to the request later.
//!
//! Memory: the edits are converted one by one as the parser reaches them
//! (each `StdinEdit` is dropped as soon as it is an [`Edit`]), so the
//! request text and the compact edits are all that is held at once.
//!
//! The helper reads the same request faster when its strings need no
//! unescaping (`as_edit::args::parse_fast`), building it through
//! [`StdinRequest`] and [`build`]; a transaction's ops read their edits
//! with [`EditList`] and [`stdin_edits`].

use std::fmt;
use std::path::PathBuf;

use serde::de::{Deserialize, Deserializer, SeqAccess, Unexpected, Visitor};

use as_edit_text::engine::Edit;

use crate::protocol::{edit_prefix, ErrorKind, Failure};
use crate::request::{EditOptions, Request};

fn invalid(detail: impl Into<String>) -> Failure {
    Failure::new(ErrorKind::InvalidArgument, detail)
}

/// The single-file request as read, before its checks ([`build`]).
// `expecting`: the request's words in an error, not the type's name.
#[derive(serde::Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "an object {\"path\", \"edits\"} (or {\"files\"}, {\"patch\"}, {\"operations\"})"
)]
pub struct StdinRequest {
    /// `path`, unchecked.
    pub path: String,
    /// `edits`, each checked as it was read.
    pub edits: EditList,
    /// `expect_sha256`, unchecked.
    #[serde(default)]
    pub expect_sha256: Option<String>,
}

/// One edit of a request (single-file or a transaction's op).
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields, expecting = "an edit {\"old\", \"new\"}")]
struct StdinEdit {
    old: Lf,
    new: Lf,
    #[serde(default)]
    replace_all: bool,
    /// `--at-line` for this edit: a line of the text it sees.
    #[serde(default)]
    at_line: Option<LineNo>,
}

/// A line number (`at_line`, an insert's `line`): a u64 whose errors say
/// "a line number", not serde's Rust type name.
pub struct LineNo(pub u64);

impl<'de> Deserialize<'de> for LineNo {
    #[cfg_attr(as_edit_small, optimize(size))]
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<LineNo, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = LineNo;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a line number (0 or more)")
            }
            fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<LineNo, E> {
                Ok(LineNo(n))
            }
            fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<LineNo, E> {
                let n =
                    u64::try_from(n).map_err(|_| E::invalid_value(Unexpected::Signed(n), &self));
                n.map(LineNo)
            }
        }
        d.deserialize_u64(V)
    }
}

/// A string, LF-normalized as it is read: normalized straight from the
/// parser's own buffer, with no `String` in between (for a 48 MiB OLD, one
/// copy fewer at the peak).
struct Lf(Vec<u8>);

impl<'de> Deserialize<'de> for Lf {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Lf, D::Error> {
        d.deserialize_str(LfVisitor)
    }
}

struct LfVisitor;

impl Visitor<'_> for LfVisitor {
    type Value = Lf;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Lf, E> {
        Ok(Lf(as_edit_text::engine::normalize_eol(s.as_bytes())))
    }
}

/// The edits as read, and the first one that is not a valid edit (its
/// index and why): the detail names it "edit i of N", and N (`total`) is
/// known only once the list has been read. A transaction's ops read theirs
/// the same way.
#[derive(Default)]
pub struct EditList {
    edits: Vec<Edit>,
    total: usize,
    first_invalid: Option<(usize, &'static str)>,
}

impl<'de> Deserialize<'de> for EditList {
    #[cfg_attr(as_edit_small, optimize(size))]
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<EditList, D::Error> {
        d.deserialize_seq(EditListVisitor)
    }
}

struct EditListVisitor;

impl<'de> Visitor<'de> for EditListVisitor {
    type Value = EditList;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a sequence of edits")
    }

    #[cfg_attr(as_edit_small, optimize(size))]
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<EditList, A::Error> {
        let mut list = EditList::default();
        while let Some(e) = seq.next_element::<StdinEdit>()? {
            list.push(e.old.0, &e.new.0, e.replace_all, e.at_line.map(|l| l.0));
        }
        Ok(list)
    }
}

impl EditList {
    /// Adds the next edit as read (OLD and NEW LF-normalized).
    #[cfg_attr(as_edit_small, optimize(size))]
    #[inline(never)]
    pub fn push(&mut self, old: Vec<u8>, new: &[u8], all: bool, at_line: Option<u64>) {
        self.total += 1;
        if self.first_invalid.is_some() {
            return; // read on for the total, build nothing
        }
        let edit = Edit::from_lf(old, new, all);
        let edit = match (edit, at_line) {
            (Ok(edit), Some(line)) => edit.with_at_line(line),
            (edit, _) => edit,
        };
        match edit {
            Ok(edit) => self.edits.push(edit),
            Err(why) => self.first_invalid = Some((self.edits.len(), why)),
        }
    }
}

/// The edits of a list, or why it is refused; `what` prefixes the
/// empty-list detail (`stdin request`, or a transaction's op).
#[cfg_attr(as_edit_small, optimize(size))]
pub fn stdin_edits(list: EditList, what: &str) -> Result<Vec<Edit>, Failure> {
    let EditList {
        mut edits,
        total,
        first_invalid,
    } = list;
    if let Some((i, why)) = first_invalid {
        // A transaction's op names its file, as its other errors do; the
        // single-file request's detail stays as it was.
        let file = match what.starts_with("file ") {
            true => format!("{what}: "),
            false => String::new(),
        };
        return Err(invalid(format!("{file}{}{why}", edit_prefix(i, total))));
    }
    if edits.is_empty() {
        return Err(invalid(format!("{what}: edits is empty")));
    }
    edits.shrink_to_fit();
    Ok(edits)
}

/// Builds a request from `--stdin` JSON (already bounded by the caller).
#[cfg_attr(as_edit_small, optimize(size))]
pub fn parse_stdin_request(json: &[u8], options: EditOptions) -> Result<Request, Failure> {
    let text = std::str::from_utf8(json).map_err(|e| {
        invalid(format!(
            "stdin request is not UTF-8 (bad byte at offset {})",
            e.valid_up_to()
        ))
    })?;
    let req: StdinRequest = crate::strict_json::from_str(text)
        .map_err(|e| invalid(format!("stdin request: {}", crate::strict_json::words(&e))))?;
    build(req, options)
}

/// The request, if `json` is a well-formed single-file request; `None`
/// for anything else (not UTF-8, not JSON, another request's keys), which
/// the caller then tells apart as before. One scan of the text: an object
/// read as `{"path","edits","expect_sha256"}` with unknown keys refused
/// holds no `files`, `patch` or `operations`, so the probes that look for
/// those (each a whole scan, with a 48 MiB OLD about 40 ms) would all
/// answer "not mine" and end here anyway.
#[cfg_attr(as_edit_small, optimize(size))]
pub fn parse_single(json: &[u8], options: &EditOptions) -> Option<Result<Request, Failure>> {
    let text = std::str::from_utf8(json).ok()?;
    let req: StdinRequest = crate::strict_json::from_str(text).ok()?;
    Some(build(req, options.clone()))
}

/// The request from what was read, checked: a path that is not empty
/// and holds no NUL, at least one edit and none invalid, `expect_sha256`
/// as 64 lowercase hex digits and not also given as a flag (`options`).
#[cfg_attr(as_edit_small, optimize(size))]
pub fn build(req: StdinRequest, mut options: EditOptions) -> Result<Request, Failure> {
    if req.path.is_empty() {
        return Err(invalid("stdin request: path is empty"));
    }
    // No file name holds a NUL: the path would be cut there by the kernel.
    if req.path.contains('\0') {
        return Err(invalid("stdin request: path contains a NUL character"));
    }
    let edits = stdin_edits(req.edits, "stdin request")?;
    if let Some(h) = req.expect_sha256 {
        if options.expect_sha256.is_some() {
            return Err(invalid(
                "expect_sha256 given both as a flag and in the stdin request",
            ));
        }
        options.expect_sha256 = Some(crate::hex::decode_sha256(&h).ok_or_else(|| {
            invalid("stdin request: expect_sha256 takes 64 lowercase hex digits")
        })?);
    }
    Ok(Request {
        path: PathBuf::from(req.path),
        edits,
        options,
    })
}
