//! The request `{"name","input"}` and each tool's arguments, validated as
//! the reference's pydantic `validate_call` (lax mode) validates them, so a
//! value it coerces (`"2"` for a line, `"yes"` for `replace_all`) means the
//! same here and a value it refuses gets its text.

use serde_json::{Map, Number, Value};

/// A whole number the reference holds as a Python int (unbounded): kept
/// as its decimal text (for messages) and clamped to `i128` (for
/// arithmetic, where anything past the file's length acts alike).
#[derive(Clone, Debug, PartialEq)]
pub struct Int {
    /// Python's `str()` of it.
    pub text: String,
    /// The value, clamped to `i128`.
    pub value: i128,
}

/// An edit's arguments.
#[derive(Debug)]
pub struct Edit {
    /// As the model wrote it.
    pub file_path: String,
    /// Replaced text.
    pub old_string: String,
    /// Replacement.
    pub new_string: String,
    /// Every occurrence, not just a unique one.
    pub replace_all: bool,
}

/// A tool's validated arguments.
#[derive(Debug)]
pub enum Args {
    /// `read`.
    Read {
        /// As the model wrote it.
        file_path: String,
        /// `None`: absent or null.
        range: Option<Vec<Int>>,
    },
    /// `write`.
    Write {
        /// As the model wrote it.
        file_path: String,
        /// The whole new text.
        content: String,
    },
    /// `edit`.
    Edit(Edit),
    /// `glob`.
    Glob {
        /// Python's glob pattern.
        pattern: String,
        /// `None`: absent or null.
        path: Option<String>,
    },
    /// `grep`.
    Grep {
        /// rg's regex.
        pattern: String,
        /// `None`: absent or null.
        path: Option<String>,
    },
}

/// Why there are no arguments.
#[derive(Debug)]
pub enum Outcome {
    /// The reference raised: its text, exit 1.
    Refused(String),
    /// Not a request the reference could be given: exit 2.
    Invalid(String),
}

const TOOLS: [&str; 5] = ["read", "write", "edit", "glob", "grep"];

/// The tool's name and its arguments.
#[cfg_attr(as_edit_small, optimize(size))]
pub fn parse(json: &[u8]) -> Result<(String, Args), Outcome> {
    let invalid = |why: String| Outcome::Invalid(format!("as-edit --toolset: {why}\n"));
    let request: Value = serde_json::from_slice(json)
        .map_err(|e| invalid(format!("the request is not JSON: {e}")))?;
    let Value::Object(mut request) = request else {
        return Err(invalid(
            "the request must be {\"name\": TOOL, \"input\": {...}}".into(),
        ));
    };
    let name = match request.remove("name") {
        Some(Value::String(s)) if TOOLS.contains(&s.as_str()) => s,
        other => {
            return Err(invalid(format!(
                "\"name\" must be one of read, write, edit, glob, grep, not {}",
                other.map_or("nothing".into(), |v| v.to_string())
            )))
        }
    };
    let input = request
        .remove("input")
        .ok_or_else(|| invalid("the request has no \"input\"".into()))?;
    if let Some(k) = request.keys().next() {
        return Err(invalid(format!("unknown request field {k:?}")));
    }
    let Value::Object(input) = input else {
        return Err(Outcome::Refused(format!(
            "TypeError('Input must be a dictionary, got {}')",
            py_type(&input)
        )));
    };
    let bad = || {
        Outcome::Refused(format!(
            "ValueError('Invalid arguments for function {name}')"
        ))
    };
    let args = fields(&name, input).ok_or_else(bad)?;
    Ok((name, args))
}

fn py_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "NoneType",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float",
        Value::Number(_) => "int",
        Value::String(_) => "str",
        Value::Array(_) => "list",
        Value::Object(_) => "dict",
    }
}

/// The tool's arguments, or `None` where pydantic refuses them.
fn fields(name: &str, mut m: Map<String, Value>) -> Option<Args> {
    let mut take = |k: &str| m.remove(k);
    let args = match name {
        "read" => Args::Read {
            file_path: string(take("file_path")?)?,
            range: match take("view_range") {
                None | Some(Value::Null) => None,
                Some(Value::Array(items)) => Some(items.iter().map(int).collect::<Option<_>>()?),
                Some(_) => return None,
            },
        },
        "write" => Args::Write {
            file_path: string(take("file_path")?)?,
            content: string(take("content")?)?,
        },
        "edit" => Args::Edit(Edit {
            file_path: string(take("file_path")?)?,
            old_string: string(take("old_string")?)?,
            new_string: string(take("new_string")?)?,
            replace_all: match take("replace_all") {
                None | Some(Value::Null) => false,
                Some(v) => boolean(&v)?,
            },
        }),
        "glob" => Args::Glob {
            pattern: string(take("pattern")?)?,
            path: match take("path") {
                None | Some(Value::Null) => None,
                Some(v) => Some(string(v)?),
            },
        },
        "grep" => Args::Grep {
            pattern: string(take("pattern")?)?,
            path: match take("path") {
                None | Some(Value::Null) => None,
                Some(v) => Some(string(v)?),
            },
        },
        _ => return None,
    };
    // An unexpected keyword is a validation error too.
    m.is_empty().then_some(args)
}

fn string(v: Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s),
        _ => None,
    }
}

/// pydantic's lax int: an integer, a float with no fraction, a bool, or a
/// string holding a decimal integer (whitespace around it, a sign,
/// single `_` between digits, and a fraction of zeros allowed).
pub fn int(v: &Value) -> Option<Int> {
    match v {
        Value::Bool(b) => Some(small(*b as i128)),
        Value::Number(n) => number(n),
        Value::String(s) => int_text(s),
        _ => None,
    }
}

fn small(v: i128) -> Int {
    Int {
        text: v.to_string(),
        value: v,
    }
}

fn number(n: &Number) -> Option<Int> {
    if let Some(i) = n.as_i64() {
        return Some(small(i as i128));
    }
    if let Some(u) = n.as_u64() {
        return Some(small(u as i128));
    }
    let f = n.as_f64()?;
    if !f.is_finite() || f.fract() != 0.0 {
        return None;
    }
    // Exact: a whole f64 prints all its digits with `{:.0}`.
    let text = format!("{f:.0}");
    let text = if text == "-0" { "0".to_string() } else { text };
    Some(Int {
        value: text
            .parse()
            .unwrap_or(if f < 0.0 { i128::MIN } else { i128::MAX }),
        text,
    })
}

fn int_text(s: &str) -> Option<Int> {
    let t = s.trim();
    let (neg, body) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let (whole, frac) = match body.split_once('.') {
        Some((w, f)) if !f.is_empty() && f.bytes().all(|b| b == b'0') => (w, Some(f)),
        Some(_) => return None,
        None => (body, None),
    };
    let ok = |w: &str| {
        !w.is_empty()
            && !w.starts_with('_')
            && !w.ends_with('_')
            && !w.contains("__")
            && w.bytes().all(|b| b.is_ascii_digit() || b == b'_')
    };
    // A fraction is only read after plain digits ("1_0.0" is refused).
    if !ok(whole) || (frac.is_some() && whole.contains('_')) {
        return None;
    }
    let digits: String = whole.chars().filter(|c| *c != '_').collect();
    let digits = digits.trim_start_matches('0');
    let digits = if digits.is_empty() { "0" } else { digits };
    let text = if neg && digits != "0" {
        format!("-{digits}")
    } else {
        digits.to_string()
    };
    let value = text
        .parse()
        .unwrap_or(if neg { i128::MIN } else { i128::MAX });
    Some(Int { text, value })
}

/// pydantic's lax bool.
fn boolean(v: &Value) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        Value::Number(n) => match n.as_f64()? {
            0.0 => Some(false),
            1.0 => Some(true),
            _ => None,
        },
        Value::String(s) => match s.to_ascii_lowercase().as_str() {
            "0" | "off" | "f" | "false" | "n" | "no" => Some(false),
            "1" | "on" | "t" | "true" | "y" | "yes" => Some(true),
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn i(v: Value) -> Option<String> {
        int(&v).map(|i| i.text)
    }

    #[test]
    fn ints_as_pydantic_coerces_them() {
        use serde_json::json;
        assert_eq!(i(json!(" 7 ")).as_deref(), Some("7"));
        assert_eq!(i(json!("+0")).as_deref(), Some("0"));
        assert_eq!(i(json!("-0")).as_deref(), Some("0"));
        assert_eq!(i(json!("00012")).as_deref(), Some("12"));
        assert_eq!(i(json!("1_0")).as_deref(), Some("10"));
        assert_eq!(i(json!("1.000")).as_deref(), Some("1"));
        assert_eq!(i(json!(1.0)).as_deref(), Some("1"));
        assert_eq!(i(json!(true)).as_deref(), Some("1"));
        assert_eq!(i(json!(1e20)).as_deref(), Some("100000000000000000000"));
        for bad in [
            "1.5", "1__0", "_1", "1_", "", " ", "-", "1.", ".5", "1e3", "0x10", "1 0",
        ] {
            assert_eq!(i(json!(bad)), None, "{bad:?}");
        }
        assert_eq!(i(json!(1.5)), None);
        assert_eq!(i(Value::Null), None);
    }

    #[test]
    fn bools_as_pydantic_coerces_them() {
        use serde_json::json;
        assert_eq!(boolean(&json!("YES")), Some(true));
        assert_eq!(boolean(&json!("off")), Some(false));
        assert_eq!(boolean(&json!(1)), Some(true));
        assert_eq!(boolean(&json!(0.0)), Some(false));
        for bad in [
            json!(" yes"),
            json!("2"),
            json!(2),
            json!(0.5),
            json!(""),
            json!([]),
        ] {
            assert_eq!(boolean(&bad), None, "{bad}");
        }
    }

    #[test]
    fn refusals_have_the_runners_texts() {
        let r = |j: &str| match parse(j.as_bytes()) {
            Err(Outcome::Refused(t)) => t,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            r(r#"{"name":"read","input":[]}"#),
            "TypeError('Input must be a dictionary, got list')"
        );
        assert_eq!(
            r(r#"{"name":"read","input":null}"#),
            "TypeError('Input must be a dictionary, got NoneType')"
        );
        assert_eq!(
            r(r#"{"name":"read","input":{}}"#),
            "ValueError('Invalid arguments for function read')"
        );
        assert_eq!(
            r(
                r#"{"name":"edit","input":{"file_path":"a","old_string":"a","new_string":"b","x":1}}"#
            ),
            "ValueError('Invalid arguments for function edit')"
        );
    }
}
