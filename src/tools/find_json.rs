//! The `glob` and `grep` requests read from JSON, strictly, and their
//! answers written: an unknown field, a wrong type, a negative number or
//! one past its bound is `invalid_argument` naming the field.
//!
//! Bounds: `limit` ≤ [`MAX_LIMIT`] (default 1000), `offset` < 2^53,
//! `context` ≤ [`MAX_CONTEXT`], `max_columns` 1 to 1,000,000 (default 500).

use serde_json::{Map, Value};

use super::find::{self, GlobRequest};
use super::grep_op::{self, GrepRequest, Output};
use super::walk::Options;
use crate::protocol::{ErrorKind, Failure};

/// The largest `limit`.
pub const MAX_LIMIT: u64 = 100_000;
/// The largest `context`.
pub const MAX_CONTEXT: u64 = 1000;

fn bad(d: String) -> Failure {
    Failure::new(ErrorKind::InvalidArgument, d)
}

struct Fields<'a> {
    op: &'a str,
    m: &'a Map<String, Value>,
}

impl Fields<'_> {
    fn check(&self, known: &[&str]) -> Result<(), Failure> {
        match self.m.keys().find(|k| !known.contains(&k.as_str())) {
            Some(k) => Err(bad(format!("{}: unknown field {k:?}", self.op))),
            None => Ok(()),
        }
    }
    fn str(&self, k: &str) -> Result<Option<&str>, Failure> {
        match self.m.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(bad(format!("{}: {k} must be a string", self.op))),
        }
    }
    fn bool(&self, k: &str, default: bool) -> Result<bool, Failure> {
        match self.m.get(k) {
            None | Some(Value::Null) => Ok(default),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(bad(format!("{}: {k} must be true or false", self.op))),
        }
    }
    fn num(&self, k: &str, default: u64, lo: u64, hi: u64) -> Result<u64, Failure> {
        let v = match self.m.get(k) {
            None | Some(Value::Null) => return Ok(default),
            Some(v) => v,
        };
        match v.as_u64() {
            Some(n) if (lo..=hi).contains(&n) => Ok(n),
            _ => Err(bad(format!(
                "{}: {k} must be an integer from {lo} to {hi} (got {v})",
                self.op
            ))),
        }
    }
    fn path(&self) -> Result<Option<Vec<u8>>, Failure> {
        match (self.str("path")?, self.str("path_b64")?) {
            (Some(_), Some(_)) => Err(bad(format!("{}: path and path_b64 both given", self.op))),
            (Some(p), None) => Ok(Some(p.as_bytes().to_vec())),
            (None, Some(b)) => crate::args::b64::decode(b.as_bytes())
                .map(Some)
                .map_err(|e| bad(format!("{}: path_b64: {e}", self.op))),
            (None, None) => Ok(None),
        }
        .and_then(|p| match p {
            Some(p) if p.is_empty() || p.contains(&0) => {
                Err(bad(format!("{}: path is empty or holds a NUL", self.op)))
            }
            p => Ok(p),
        })
    }
    fn walk(&self) -> Result<Options, Failure> {
        Ok(Options {
            vcs: self.bool("vcs", false)?,
            hidden: self.bool("hidden", true)?,
            gitignore: self.bool("gitignore", false)?,
        })
    }
}

const OFFSET_MAX: u64 = (1 << 53) - 1;

/// Parses a `glob` request (the object holding `"op":"glob"`).
pub fn glob_request(m: &Map<String, Value>) -> Result<GlobRequest, Failure> {
    let f = Fields { op: "glob", m };
    f.check(&[
        "op",
        "pattern",
        "path",
        "path_b64",
        "sort",
        "offset",
        "limit",
        "hidden",
        "vcs",
        "gitignore",
    ])?;
    let pattern = f
        .str("pattern")?
        .ok_or_else(|| bad("glob: pattern is required".into()))?;
    let by_mtime = match f.str("sort")? {
        None | Some("path") => false,
        Some("mtime") => true,
        Some(s) => {
            return Err(bad(format!(
                "glob: sort must be \"path\" or \"mtime\" (got {s:?})"
            )))
        }
    };
    Ok(GlobRequest {
        pattern: pattern.to_owned(),
        path: f.path()?,
        by_mtime,
        offset: f.num("offset", 0, 0, OFFSET_MAX)?,
        limit: f.num("limit", 1000, 0, MAX_LIMIT)?,
        walk: f.walk()?,
    })
}

/// Parses a `grep` request.
pub fn grep_request(m: &Map<String, Value>) -> Result<GrepRequest, Failure> {
    let f = Fields { op: "grep", m };
    f.check(&[
        "op",
        "pattern",
        "regex",
        "path",
        "path_b64",
        "glob",
        "ignore_case",
        "output",
        "context",
        "offset",
        "limit",
        "max_columns",
        "hidden",
        "vcs",
        "gitignore",
    ])?;
    let pattern = f
        .str("pattern")?
        .ok_or_else(|| bad("grep: pattern is required".into()))?;
    let output = match f.str("output")? {
        None | Some("content") => Output::Content,
        Some("files") => Output::Files,
        Some("count") => Output::Count,
        Some(s) => {
            return Err(bad(format!(
                "grep: output must be \"content\", \"files\" or \"count\" (got {s:?})"
            )))
        }
    };
    Ok(GrepRequest {
        pattern: pattern.to_owned(),
        regex: f.bool("regex", false)?,
        ignore_case: f.bool("ignore_case", false)?,
        path: f.path()?,
        glob: f.str("glob")?.map(str::to_owned),
        output,
        context: f.num("context", 0, 0, MAX_CONTEXT)?,
        offset: f.num("offset", 0, 0, OFFSET_MAX)?,
        limit: f.num("limit", 1000, 0, MAX_LIMIT)?,
        max_columns: f.num("max_columns", 500, 1, 1_000_000)?,
        walk: f.walk()?,
    })
}

/// A path's key and value: `"path"` when it is UTF-8, else `"path_b64"`.
pub fn name(m: &mut Map<String, Value>, p: &[u8]) {
    match std::str::from_utf8(p) {
        Ok(s) => m.insert("path".into(), s.into()),
        Err(_) => m.insert("path_b64".into(), b64(p).into()),
    };
}

fn b64(b: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::with_capacity(b.len().div_ceil(3) * 4);
    for c in b.chunks(3) {
        let n = (c[0] as u32) << 16
            | (*c.get(1).unwrap_or(&0) as u32) << 8
            | *c.get(2).unwrap_or(&0) as u32;
        for i in 0..4 {
            if i <= c.len() {
                s.push(A[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                s.push('=');
            }
        }
    }
    s
}

/// Runs `glob` and writes its answer.
pub fn glob(req: &GlobRequest, root: Option<&std::path::Path>) -> Result<Value, Failure> {
    let found = find::glob(req, root)?;
    let entries: Vec<Value> = found
        .entries
        .iter()
        .map(|e| {
            let mut m = Map::new();
            name(&mut m, &e.path);
            m.insert("size".into(), e.size.into());
            m.insert("mtime_ns".into(), mtime(e.mtime_ns));
            Value::Object(m)
        })
        .collect();
    let mut m = Map::new();
    m.insert("entries".into(), entries.into());
    m.insert("total".into(), found.total.into());
    m.insert("truncated".into(), found.truncated.into());
    Ok(Value::Object(m))
}

fn mtime(ns: i128) -> Value {
    i64::try_from(ns).map_or(Value::Null, Value::from)
}

/// Runs `grep` and writes its answer.
pub fn grep(req: &GrepRequest, root: Option<&std::path::Path>) -> Result<Value, Failure> {
    let g = grep_op::grep(req, root)?;
    let mut m = Map::new();
    if req.output == Output::Content {
        let lines: Vec<Value> = g
            .lines
            .iter()
            .map(|l| {
                let mut e = Map::new();
                name(&mut e, &l.path);
                e.insert("line".into(), l.line.into());
                e.insert("text".into(), l.text.clone().into());
                if l.cut {
                    e.insert("cut".into(), true.into());
                }
                if l.context {
                    e.insert("context".into(), true.into());
                }
                Value::Object(e)
            })
            .collect();
        m.insert("matches".into(), lines.into());
    } else {
        let files: Vec<Value> = g
            .files
            .iter()
            .map(|(p, n)| {
                let mut e = Map::new();
                name(&mut e, p);
                if req.output == Output::Count {
                    e.insert("count".into(), (*n).into());
                }
                Value::Object(e)
            })
            .collect();
        m.insert("files".into(), files.into());
    }
    m.insert("files_searched".into(), g.files_searched.into());
    m.insert("skipped_binary".into(), g.skipped_binary.into());
    m.insert("truncated".into(), g.truncated.into());
    Ok(Value::Object(m))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn b64_matches_the_crate() {
        use base64::Engine;
        for n in 0..40u8 {
            let v: Vec<u8> = (0..n).map(|i| i.wrapping_mul(37) ^ 0xa5).collect();
            assert_eq!(
                b64(&v),
                base64::engine::general_purpose::STANDARD.encode(&v)
            );
        }
    }

    fn obj(s: &str) -> Map<String, Value> {
        match serde_json::from_str(s).unwrap() {
            Value::Object(m) => m,
            _ => unreachable!(),
        }
    }

    #[test]
    fn bad_requests_name_the_field() {
        for (j, want) in [
            (r#"{"op":"glob"}"#, "pattern is required"),
            (
                r#"{"op":"glob","pattern":"x","limit":-1}"#,
                "limit must be an integer from 0 to 100000",
            ),
            (
                r#"{"op":"glob","pattern":"x","limit":1e30}"#,
                "limit must be",
            ),
            (
                r#"{"op":"glob","pattern":"x","nope":1}"#,
                "unknown field \"nope\"",
            ),
            (
                r#"{"op":"glob","pattern":"x","sort":"size"}"#,
                "sort must be",
            ),
            (r#"{"op":"glob","pattern":"x","path":""}"#, "path is empty"),
            (
                r#"{"op":"glob","pattern":"x","hidden":1}"#,
                "hidden must be true or false",
            ),
        ] {
            let e = glob_request(&obj(j)).unwrap_err();
            assert_eq!(e.kind, ErrorKind::InvalidArgument);
            assert!(
                e.detail.as_deref().unwrap().contains(want),
                "{j}: {:?}",
                e.detail
            );
        }
        for (j, want) in [
            (
                r#"{"op":"grep","pattern":"x","context":1001}"#,
                "context must be",
            ),
            (
                r#"{"op":"grep","pattern":"x","output":"lines"}"#,
                "output must be",
            ),
            (
                r#"{"op":"grep","pattern":"x","max_columns":0}"#,
                "max_columns must be",
            ),
            (r#"{"op":"grep","pattern":1}"#, "pattern must be a string"),
        ] {
            let e = grep_request(&obj(j)).unwrap_err();
            assert!(
                e.detail.as_deref().unwrap().contains(want),
                "{j}: {:?}",
                e.detail
            );
        }
    }
}
