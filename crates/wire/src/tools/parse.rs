//! Reading a read-side op's request (the field table: `mod.rs`): strict,
//! every refusal `invalid_argument` naming the field.

use std::fmt;
use std::path::PathBuf;

use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use std::os::unix::ffi::OsStringExt;

use super::GlobRequest;
use super::Options;
use super::{answer, invalid, name, List, Op, Raw64, Read, Request};
use super::{GrepRequest, Output};
use crate::protocol::Failure;
use crate::request::{EditOptions, Eol};

/// Whether a JSON request is an `{"op"}` request, and its op's name if it
/// is a string (`Some(None)`: present but not a string, or begun as one
/// but not valid JSON: `parse` words the refusal). A request with
/// `files` is a transaction, whatever else it holds.
pub fn probe(json: &[u8]) -> Option<Option<String>> {
    #[derive(serde::Deserialize)]
    struct Probe {
        #[serde(default, deserialize_with = "present")]
        files: Option<()>,
        #[serde(default, deserialize_with = "present_op")]
        op: Option<Option<String>>,
    }
    fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<()>, D::Error> {
        IgnoredAny::deserialize(d).map(|_| Some(()))
    }
    fn present_op<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Option<String>>, D::Error> {
        d.deserialize_any(OpName).map(Some)
    }
    let text = std::str::from_utf8(json).ok();
    match text.map(crate::strict_json::from_str::<Probe>) {
        Some(Ok(Probe { files: None, op })) => op,
        Some(Ok(_)) => None,
        _ => {
            let t = json.trim_ascii_start().strip_prefix(b"{");
            let begun = t.is_some_and(|t| t.trim_ascii_start().starts_with(b"\"op\""));
            begun.then_some(None)
        }
    }
}

/// Any JSON value: the string, or None for another type (an `op`'s).
pub struct OpName;

impl<'de> Visitor<'de> for OpName {
    type Value = Option<String>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any value")
    }
    fn visit_str<E>(self, s: &str) -> Result<Self::Value, E> {
        Ok(Some(s.to_owned()))
    }
    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Self::Value, A::Error> {
        while s.next_element::<IgnoredAny>()?.is_some() {}
        Ok(None)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
        while m.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(None)
    }
}

/// A number as JSON gave it, judged by [`bounded`] in the request's words.
#[derive(Clone, Copy)]
pub enum Num {
    /// A whole number, 0 or more.
    Whole(u64),
    /// A negative whole number.
    Negative(i64),
    /// A number with a fraction or an exponent.
    Fraction(f64),
}

impl<'de> Deserialize<'de> for Num {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Num, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Num;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a whole number")
            }
            fn visit_u64<E>(self, n: u64) -> Result<Num, E> {
                Ok(Num::Whole(n))
            }
            fn visit_i64<E>(self, n: i64) -> Result<Num, E> {
                Ok(u64::try_from(n).map_or(Num::Negative(n), Num::Whole))
            }
            fn visit_f64<E>(self, n: f64) -> Result<Num, E> {
                Ok(Num::Fraction(n))
            }
        }
        d.deserialize_any(V)
    }
}

/// `key`'s number within `lo..=hi`, or `default` when absent.
pub fn bounded(key: &str, n: Option<Num>, lo: u64, hi: u64, default: u64) -> Result<u64, Failure> {
    let got = match n {
        None => return Ok(default),
        Some(Num::Whole(n)) if (lo..=hi).contains(&n) => return Ok(n),
        Some(Num::Whole(n)) => n.to_string(),
        Some(Num::Negative(n)) => n.to_string(),
        // Not the value: formatting a float costs the static binary its
        // float printer, for a refusal's words.
        Some(Num::Fraction(f)) if f.abs() < 18_446_744_073_709_551_616.0 => {
            "a number with a fraction or an exponent".to_owned()
        }
        Some(Num::Fraction(_)) => "a number past 2^64".to_owned(),
    };
    Err(invalid(format!(
        "{key:?} takes a whole number from {lo} to {hi}, got {got}"
    )))
}

/// Every field any read-side op takes; which op may have which is checked
/// in [`parse`].
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields, expecting = "an object {\"op\", ...}")]
struct Raw {
    op: String,
    path: Option<String>,
    path_b64: Option<String>,
    paths: Option<Vec<name::Name>>,
    depth: Option<Num>,
    hidden: Option<bool>,
    vcs: Option<bool>,
    offset: Option<Num>,
    limit: Option<Num>,
    start: Option<Num>,
    numbers: Option<bool>,
    max_columns: Option<Num>,
    raw: Option<bool>,
    length: Option<Num>,
    max_bytes: Option<Num>,
    pattern: Option<String>,
    sort: Option<String>,
    gitignore: Option<bool>,
    regex: Option<bool>,
    glob: Option<String>,
    ignore_case: Option<bool>,
    output: Option<String>,
    context: Option<Num>,
    check: Option<Num>,
}

/// The most paths one `stat` takes.
pub const MAX_STAT_PATHS: usize = 256;
/// The deepest `list`.
pub const MAX_DEPTH: u64 = 64;
/// The largest `list` page.
pub const MAX_LIST_LIMIT: u64 = 100_000;
/// The largest line number, byte offset or count a request may give:
/// 2^53 - 1, the last integer every JSON reader holds exactly.
pub const MAX_NUMBER: u64 = (1 << 53) - 1;

/// Reads an `{"op"}` request of the read-side ops (not a transaction op:
/// `txn::is_op` sends those to `txn::parse_op`).
#[cold]
#[cfg_attr(as_edit_small, optimize(size))]
pub fn parse(json: &[u8], options: &EditOptions) -> Result<Request, Failure> {
    let text = std::str::from_utf8(json).map_err(|e| {
        invalid(format!(
            "request is not UTF-8 (bad byte at offset {})",
            e.valid_up_to()
        ))
    })?;
    let raw: Raw = crate::strict_json::from_str(text).map_err(|e| {
        let mut e = crate::strict_json::words(&e)
            .replace("trailing characters", "text after the request's closing }");
        // serde lists every field of every op; the fields an op takes are
        // in the docs, and an op's own refusal names the one it does not.
        if let (Some(a), Some(b)) = (e.find(", expected one of `"), e.rfind(" at line ")) {
            if a < b {
                e.replace_range(a..b, "");
            }
        }
        invalid(format!("op request: {e}"))
    })?;
    let op = raw.op.as_str();
    let allowed: &[&str] = match op {
        "stat" => &["paths", "offset"],
        "list" => &[
            "path", "depth", "hidden", "vcs", "gitignore", "offset", "limit",
        ],
        "read" if raw.raw == Some(true) => &["path", "raw", "offset", "length"],
        "read" => &[
            "path", "raw", "start", "limit", "numbers", "max_columns", "offset", "check",
        ],
        "glob" => &[
            "path", "pattern", "sort", "offset", "limit", "hidden", "vcs", "gitignore",
        ],
        "grep" => &[
            "path", "pattern", "regex", "glob", "ignore_case", "output", "context", "offset",
            "limit", "max_columns", "hidden", "vcs", "gitignore",
        ],
        other => {
            return Err(invalid(format!(
                "unknown op {other:?} (stat, list, read, glob, grep; or a transaction op: edit, insert, create, delete, move)"
            )))
        }
    };
    let given = [
        ("path", raw.path.is_some() || raw.path_b64.is_some()),
        ("paths", raw.paths.is_some()),
        ("depth", raw.depth.is_some()),
        ("hidden", raw.hidden.is_some()),
        ("vcs", raw.vcs.is_some()),
        ("offset", raw.offset.is_some()),
        ("limit", raw.limit.is_some()),
        ("start", raw.start.is_some()),
        ("numbers", raw.numbers.is_some()),
        ("max_columns", raw.max_columns.is_some()),
        ("raw", raw.raw.is_some()),
        ("length", raw.length.is_some()),
        ("pattern", raw.pattern.is_some()),
        ("sort", raw.sort.is_some()),
        ("gitignore", raw.gitignore.is_some()),
        ("regex", raw.regex.is_some()),
        ("glob", raw.glob.is_some()),
        ("ignore_case", raw.ignore_case.is_some()),
        ("output", raw.output.is_some()),
        ("context", raw.context.is_some()),
        ("check", raw.check.is_some()),
    ];
    if let Some((k, _)) = given.iter().find(|(k, g)| *g && !allowed.contains(k)) {
        let mode = if op == "read" && raw.raw == Some(true) {
            " with \"raw\":true"
        } else if op == "read" {
            " of text (\"raw\":true takes length)"
        } else {
            ""
        };
        return Err(invalid(format!("{op:?}{mode} takes no {k:?}")));
    }
    edit_flags(options, op)?;
    let max_bytes = bounded(
        "max_bytes",
        raw.max_bytes,
        answer::MIN_MAX_BYTES,
        answer::MAX_MAX_BYTES,
        answer::DEFAULT_MAX_BYTES,
    )?;
    let path = || -> Result<PathBuf, Failure> {
        name::pick("path", raw.path.clone(), raw.path_b64.clone())?
            .ok_or_else(|| invalid(format!("{op:?} needs \"path\" (or \"path_b64\")")))
    };
    let op = match op {
        "stat" => {
            let names = raw
                .paths
                .ok_or_else(|| invalid("\"stat\" needs \"paths\""))?;
            if names.is_empty() || names.len() > MAX_STAT_PATHS {
                return Err(invalid(format!(
                    "\"paths\" holds 1 to {MAX_STAT_PATHS} paths, got {}",
                    names.len()
                )));
            }
            let paths = names
                .into_iter()
                .map(|n| name::checked("path", n.0))
                .collect::<Result<_, _>>()?;
            let offset = bounded("offset", raw.offset, 0, MAX_STAT_PATHS as u64, 0)?;
            Op::Stat { paths, offset }
        }
        "list" => Op::List(List {
            path: path()?,
            depth: bounded("depth", raw.depth, 1, MAX_DEPTH, 1)?,
            hidden: raw.hidden.unwrap_or(true),
            vcs: raw.vcs.unwrap_or(false),
            gitignore: raw.gitignore.unwrap_or(false),
            offset: bounded("offset", raw.offset, 0, MAX_NUMBER, 0)?,
            limit: bounded("limit", raw.limit, 1, MAX_LIST_LIMIT, 1000)?,
        }),
        "glob" | "grep" => walk_op(if op == "glob" { "glob" } else { "grep" }, raw)?,
        _ if raw.raw == Some(true) => Op::Raw(Raw64 {
            path: path()?,
            offset: bounded("offset", raw.offset, 0, MAX_NUMBER, 0)?,
            length: match raw.length {
                None => None,
                n => Some(bounded("length", n, 1, MAX_NUMBER, 0)?),
            },
        }),
        _ => Op::Read(Read {
            path: path()?,
            start: bounded("start", raw.start, 1, MAX_NUMBER, 1)?,
            limit: match raw.limit {
                None => None,
                n => Some(bounded("limit", n, 1, MAX_NUMBER, 0)?),
            },
            numbers: raw.numbers.unwrap_or(false),
            max_columns: match raw.max_columns {
                None => None,
                n => Some(bounded("max_columns", n, 1, MAX_NUMBER, 0)?),
            },
            // A page's `next` (the find crate's `read/resume.rs`): checked when read, ignored if wrong.
            resume: match (raw.offset, raw.check) {
                (None, None) => None,
                (Some(o), Some(c)) => Some((
                    bounded("offset", Some(o), 0, MAX_NUMBER, 0)?,
                    bounded("check", Some(c), 0, MAX_NUMBER, 0)?,
                )),
                _ => return Err(invalid(
                    "a text read's \"offset\" and \"check\" go together, both from the \"next\" of the page before",
                )),
            },
        }),
    };
    Ok(Request {
        op,
        max_bytes,
        root: options.root.clone(),
    })
}

/// `glob` or `grep`: their fields (the allowed ones checked).
fn walk_op(op: &'static str, raw: Raw) -> Result<Op, Failure> {
    let pattern = raw
        .pattern
        .ok_or_else(|| invalid(format!("{op:?} needs \"pattern\"")))?;
    let path = name::pick("path", raw.path, raw.path_b64)?.map(|p| p.into_os_string().into_vec());
    let walk = Options {
        vcs: raw.vcs.unwrap_or(false),
        hidden: raw.hidden.unwrap_or(true),
        gitignore: raw.gitignore.unwrap_or(false),
        ..Options::default()
    };
    let offset = bounded("offset", raw.offset, 0, MAX_NUMBER, 0)?;
    let limit = bounded("limit", raw.limit, 1, MAX_LIST_LIMIT, 1000)?;
    if op == "glob" {
        let by_mtime = match raw.sort.as_deref() {
            None | Some("path") => false,
            Some("mtime") => true,
            Some(s) => {
                return Err(invalid(format!(
                    "\"sort\" is \"path\" or \"mtime\", got {s:?}"
                )))
            }
        };
        return Ok(Op::Glob(GlobRequest {
            pattern,
            path,
            by_mtime,
            offset,
            limit,
            walk,
        }));
    }
    let output = match raw.output.as_deref() {
        None | Some("content") => Output::Content,
        Some("files") => Output::Files,
        Some("count") => Output::Count,
        Some(s) => {
            return Err(invalid(format!(
                "\"output\" is \"content\", \"files\" or \"count\", got {s:?}"
            )))
        }
    };
    Ok(Op::Grep(GrepRequest {
        pattern,
        regex: raw.regex.unwrap_or(false),
        ignore_case: raw.ignore_case.unwrap_or(false),
        path,
        glob: raw.glob,
        output,
        context: bounded("context", raw.context, 0, MAX_CONTEXT, 0)?,
        offset,
        limit,
        max_columns: bounded("max_columns", raw.max_columns, 1, MAX_NUMBER, 500)?,
        walk,
    }))
}

/// The most `context` lines `grep` shows on each side of a match.
pub const MAX_CONTEXT: u64 = 1000;

/// The edit flags mean nothing to a read-side op: refused, not ignored.
fn edit_flags(o: &EditOptions, op: &str) -> Result<(), Failure> {
    let given = [
        ("--dry-run", o.dry_run),
        ("--report", o.report),
        ("--diff", o.diff),
        ("--hints", o.hints),
        ("--fsync", o.fsync),
        ("--eol", o.eol != Eol::Lf),
        ("--expect-sha256", o.expect_sha256.is_some()),
    ];
    match given.iter().find(|(_, g)| *g) {
        Some((flag, _)) => Err(invalid(format!("{flag} applies to edits, not to {op:?}"))),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::ErrorKind;

    fn refused(json: &str) -> String {
        let f = parse(json.as_bytes(), &EditOptions::default()).unwrap_err();
        assert_eq!(f.kind, ErrorKind::InvalidArgument, "{json}");
        f.detail.unwrap()
    }

    #[test]
    fn requests_are_read_strictly() {
        let cases = [
            (r#"{"op":"stat"}"#, "\"stat\" needs \"paths\""),
            (r#"{"op":"stat","paths":[]}"#, "\"paths\" holds 1 to 256 paths, got 0"),
            (r#"{"op":"stat","paths":["a"],"depth":1}"#, "\"stat\" takes no \"depth\""),
            (r#"{"op":"list"}"#, "\"list\" needs \"path\" (or \"path_b64\")"),
            (r#"{"op":"list","path":"a","depth":0}"#, "\"depth\" takes a whole number from 1 to 64, got 0"),
            (r#"{"op":"list","path":"a","limit":-1}"#, "\"limit\" takes a whole number from 1 to 100000, got -1"),
            (r#"{"op":"list","path":"a","offset":1.5}"#, "\"offset\" takes a whole number from 0 to 9007199254740991, got a number with a fraction or an exponent"),
            (r#"{"op":"list","path":"a","offset":1e300}"#, "\"offset\" takes a whole number from 0 to 9007199254740991, got a number past 2^64"),
            (r#"{"op":"read","path":"a","max_bytes":10}"#, "\"max_bytes\" takes a whole number from 1024 to 8388608, got 10"),
            (r#"{"op":"read","path":"a","length":3}"#, "\"read\" of text (\"raw\":true takes length) takes no \"length\""),
            (r#"{"op":"read","path":"a","offset":3}"#, "a text read's \"offset\" and \"check\" go together, both from the \"next\" of the page before"),
            (r#"{"op":"read","path":"a","check":3}"#, "a text read's \"offset\" and \"check\" go together, both from the \"next\" of the page before"),
            (r#"{"op":"read","path":"a","raw":true,"start":3}"#, "\"read\" with \"raw\":true takes no \"start\""),
            (r#"{"op":"read","path":"a","path_b64":"YQ=="}"#, "give \"path\" or \"path_b64\", not both"),
            (r#"{"op":"glob2","path":"a"}"#, "unknown op \"glob2\" (stat, list, read, glob, grep; or a transaction op: edit, insert, create, delete, move)"),
            (r#"{"op":"glob"}"#, "\"glob\" needs \"pattern\""),
            (r#"{"op":"glob","pattern":"*","limit":0}"#, "\"limit\" takes a whole number from 1 to 100000, got 0"),
            (r#"{"op":"glob","pattern":"*","sort":"size"}"#, "\"sort\" is \"path\" or \"mtime\", got \"size\""),
            (r#"{"op":"glob","pattern":"*","regex":true}"#, "\"glob\" takes no \"regex\""),
            (r#"{"op":"glob","pattern":"*","depth":2}"#, "\"glob\" takes no \"depth\""),
            (r#"{"op":"grep","pattern":"a","context":1001}"#, "\"context\" takes a whole number from 0 to 1000, got 1001"),
            (r#"{"op":"grep","pattern":"a","output":"lines"}"#, "\"output\" is \"content\", \"files\" or \"count\", got \"lines\""),
            (r#"{"op":"grep","pattern":"a","max_columns":0}"#, "\"max_columns\" takes a whole number from 1 to 9007199254740991, got 0"),
            (r#"{"op":"grep","pattern":"a","sort":"mtime"}"#, "\"grep\" takes no \"sort\""),
            (r#"{"op":"list","path":"a","pattern":"x"}"#, "\"list\" takes no \"pattern\""),
        ];
        for (json, want) in cases {
            assert_eq!(refused(json), want, "{json}");
        }
        assert!(refused(r#"{"op":"read","path":"a","bogus":1}"#)
            .starts_with("op request: unknown field `bogus`"));
        assert!(refused(r#"{"op":"read","path":"a","numbers":"yes"}"#)
            .starts_with("op request: invalid type: string \"yes\", expected a boolean"));
        assert!(refused(r#"{"op":"read","path":"a","start":"1"}"#)
            .starts_with("op request: invalid type: string \"1\", expected a whole number"));
        let o = EditOptions {
            report: true,
            ..EditOptions::default()
        };
        let f = parse(br#"{"op":"stat","paths":["a"]}"#, &o).unwrap_err();
        assert_eq!(
            f.detail.unwrap(),
            "--report applies to edits, not to \"stat\""
        );
    }

    #[test]
    fn the_probe_finds_op_requests_only() {
        assert_eq!(
            probe(br#"{"op":"stat","paths":["a"]}"#),
            Some(Some("stat".into()))
        );
        assert_eq!(probe(br#"{"paths":[],"op":7}"#), Some(None));
        assert_eq!(probe(br#"{"op":"stat","paths":["#), Some(None));
        assert_eq!(probe(br#"{"files":[],"op":"stat"}"#), None);
        assert_eq!(probe(br#"{"path":"a","edits":[]}"#), None);
        assert_eq!(probe(br#"{"op":null}"#), Some(None));
    }
}
