//! Backend output → typed outcome.
//!
//! The result line is found anywhere in merged output (profile noise before,
//! `[stderr] …` after, CRLF line ends) and parsed with serde_json, never by
//! substring. Unknown keys are ignored; unknown tokens are kept verbatim;
//! hints of an unknown kind are left out.

use as_edit_text::hints::{Hint, Kind};
use as_edit_wire::protocol::{ErrorKind, RESULT_PREFIX};

/// An error token: one this library knows, or a newer one kept verbatim.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Token {
    /// A token of this protocol version.
    Known(ErrorKind),
    /// A newer token, kept verbatim (treat it as a failure).
    Unknown(String),
}

impl Token {
    /// The token as it appears on the wire.
    pub fn as_str(&self) -> &str {
        match self {
            Token::Known(k) => k.token(),
            Token::Unknown(s) => s,
        }
    }
}

/// What `--hints` added to a refusal (the helper's, or the transfer
/// path's own from the same code).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RefusalHints {
    /// `string_not_found`: candidates, best first (known kinds only).
    pub hints: Vec<Hint>,
    /// A bound cut the search: better candidates may exist.
    pub truncated: bool,
    /// `multiple_occurrences`: the lines where the first occurrences start.
    pub lines: Vec<u64>,
    /// More occurrences than `lines` holds.
    pub lines_truncated: bool,
}

impl RefusalHints {
    /// From the protocol's keys (the transfer path builds them in-process).
    pub fn from_keys(k: as_edit_wire::protocol::HintKeys) -> RefusalHints {
        RefusalHints {
            hints: k.hints.unwrap_or_default(),
            truncated: k.hints_truncated.unwrap_or(false),
            lines: k.lines.unwrap_or_default(),
            lines_truncated: k.lines_truncated.unwrap_or(false),
        }
    }
}

/// What one exec of the helper came to (not the file-system layer's
/// `fs::EditOutcome`: this is the host's reading of the helper's output).
#[derive(Clone, Debug, PartialEq)]
pub enum HelperOutcome {
    /// A result line with `count` and no `error`: the file was edited.
    Edited {
        /// Replacements made.
        count: u64,
    },
    /// A result line with an `error` token: the file was not edited.
    Failed {
        /// The `error` token.
        kind: Token,
        /// `detail`, if the line has one.
        detail: Option<String>,
        /// `count`, if the line has one (`multiple_occurrences`).
        count: Option<u64>,
        /// Present when the line carried `hints` or `lines` (`--hints`).
        hints: Option<RefusalHints>,
    },
    /// No result line, and the shell said the helper is missing or not
    /// executable (exit 126/127, or words to that effect).
    HelperUnavailable,
    /// No result line otherwise.
    Unexpected {
        /// The exit code, if the backend reports one.
        exit_code: Option<i32>,
        /// The first 200 characters of the trimmed output.
        excerpt: String,
    },
}

const EXCERPT_CHARS: usize = 200;

/// Parses merged stdout/stderr and the exit code, if the backend has one.
pub fn parse_output(output: &[u8], exit_code: Option<i32>) -> HelperOutcome {
    let text = String::from_utf8_lossy(output);
    for line in text.split('\n') {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let Some(json) = line.strip_prefix(RESULT_PREFIX) else {
            continue;
        };
        if let Some(o) = parse_result_json(json) {
            return o;
        }
    }
    let lower = text.to_ascii_lowercase();
    let missing = matches!(exit_code, Some(126) | Some(127))
        || [
            "not found",
            "no such file",
            "permission denied",
            "not executable",
            "exec format error",
            "cannot execute",
        ]
        .iter()
        .any(|w| lower.contains(w));
    if missing {
        return HelperOutcome::HelperUnavailable;
    }
    HelperOutcome::Unexpected {
        exit_code,
        excerpt: text.trim().chars().take(EXCERPT_CHARS).collect(),
    }
}

/// The first result line's JSON object (the keys [`parse_output`] does
/// not type: a transaction's `files`, `file`, `chunk`, `changes`, …).
pub fn result_object(output: &[u8]) -> Option<serde_json::Map<String, serde_json::Value>> {
    let text = String::from_utf8_lossy(output);
    text.split('\n').find_map(|line| {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let json = line.strip_prefix(RESULT_PREFIX)?;
        parse_result_json(json)?;
        match serde_json::from_str(json).ok()? {
            serde_json::Value::Object(o) => Some(o),
            _ => None,
        }
    })
}

/// The first result line's JSON object, whatever its keys: a toolset
/// answer has neither `count` nor `error`.
pub fn any_result(output: &[u8]) -> Option<serde_json::Map<String, serde_json::Value>> {
    let text = String::from_utf8_lossy(output);
    text.split('\n').find_map(|line| {
        let line = line.strip_suffix('\r').unwrap_or(line);
        match serde_json::from_str(line.strip_prefix(RESULT_PREFIX)?).ok()? {
            serde_json::Value::Object(o) => Some(o),
            _ => None,
        }
    })
}

/// The JSON after `__RESULT__`: an object with `count` (a non-negative
/// integer) and/or `error` (a string). Anything else is not a result line.
fn parse_result_json(json: &str) -> Option<HelperOutcome> {
    let v: serde_json::Value = serde_json::from_str(json).ok()?;
    let obj = v.as_object()?;
    let count = match obj.get("count") {
        None | Some(serde_json::Value::Null) => None,
        Some(c) => Some(c.as_u64()?),
    };
    let detail = obj
        .get("detail")
        .and_then(|d| d.as_str())
        .map(str::to_owned);
    match obj.get("error") {
        Some(serde_json::Value::String(t)) => Some(HelperOutcome::Failed {
            kind: ErrorKind::from_token(t).map_or_else(|| Token::Unknown(t.clone()), Token::Known),
            detail,
            count,
            hints: parse_hints(obj),
        }),
        Some(_) => None,
        None => count.map(|count| HelperOutcome::Edited { count }),
    }
}

/// The `--hints` keys of a refusal, leniently: a malformed or unknown-kind
/// hint is left out, never an error (the refusal itself stands).
fn parse_hints(obj: &serde_json::Map<String, serde_json::Value>) -> Option<RefusalHints> {
    let list = obj.get("hints").and_then(|h| h.as_array());
    let lines = obj.get("lines").and_then(|l| l.as_array());
    if list.is_none() && lines.is_none() {
        return None;
    }
    let flag = |k: &str| obj.get(k).and_then(|v| v.as_bool()).unwrap_or(false);
    Some(RefusalHints {
        hints: list
            .into_iter()
            .flatten()
            .filter_map(|h| {
                let h = h.as_object()?;
                Some(Hint {
                    line: h.get("line")?.as_u64()?,
                    end_line: h.get("end_line")?.as_u64()?,
                    kind: Kind::from_token(h.get("kind")?.as_str()?)?,
                    score: h.get("score").and_then(|s| s.as_f64()).unwrap_or(0.0),
                    text: h.get("text")?.as_str()?.to_owned(),
                    text_truncated: h
                        .get("text_truncated")
                        .and_then(|t| t.as_bool())
                        .unwrap_or(false),
                })
            })
            .collect(),
        truncated: flag("hints_truncated"),
        lines: lines
            .into_iter()
            .flatten()
            .filter_map(|l| l.as_u64())
            .collect(),
        lines_truncated: flag("lines_truncated"),
    })
}

/// The protocol number in `--version` output (`as-edit X (protocol N; …)`),
/// or None when no line names an as-edit helper.
pub fn helper_protocol(output: &[u8]) -> Option<u32> {
    let s = String::from_utf8_lossy(output);
    s.lines().find_map(|l| {
        let rest = l.strip_prefix("as-edit ")?;
        let n = &rest[rest.find("(protocol ")? + "(protocol ".len()..];
        n[..n.find(|c: char| !c.is_ascii_digit())?].parse().ok()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_line_in_noise() {
        let out = b"Welcome to the box\r\nmotd: __RESULT__{\"count\":9}\r\n__RESULT__{\"count\":2,\"extra\":1}\r\n\n[stderr] warning: x\n";
        assert_eq!(
            parse_output(out, Some(0)),
            HelperOutcome::Edited { count: 2 }
        );
    }

    #[test]
    fn refusals_and_unknown_tokens() {
        assert_eq!(
            parse_output(
                b"__RESULT__{\"error\":\"multiple_occurrences\",\"count\":3}\n",
                Some(1)
            ),
            HelperOutcome::Failed {
                kind: Token::Known(ErrorKind::MultipleOccurrences),
                detail: None,
                count: Some(3),
                hints: None,
            }
        );
        assert_eq!(
            parse_output(b"__RESULT__{\"error\":\"quota\",\"detail\":\"d\"}", None),
            HelperOutcome::Failed {
                kind: Token::Unknown("quota".into()),
                detail: Some("d".into()),
                count: None,
                hints: None,
            }
        );
    }

    #[test]
    fn missing_helper_and_unexpected() {
        assert_eq!(
            parse_output(b"sh: 1: /opt/as-edit: not found\n", Some(127)),
            HelperOutcome::HelperUnavailable
        );
        assert_eq!(
            parse_output(b"", Some(126)),
            HelperOutcome::HelperUnavailable
        );
        assert_eq!(
            parse_output(b"sh: /x: Permission denied", None),
            HelperOutcome::HelperUnavailable
        );
        let long = "z".repeat(500);
        match parse_output(long.as_bytes(), Some(3)) {
            HelperOutcome::Unexpected {
                exit_code: Some(3),
                excerpt,
            } => assert_eq!(excerpt.len(), 200),
            o => panic!("{o:?}"),
        }
        // A marker with broken JSON is not a result.
        assert!(matches!(
            parse_output(b"__RESULT__{\"count\":", Some(0)),
            HelperOutcome::Unexpected { .. }
        ));
    }
}

#[cfg(test)]
mod hint_tests {
    use super::*;

    #[test]
    fn hints_are_parsed_and_unknown_kinds_and_keys_ignored() {
        let out = br#"__RESULT__{"error":"string_not_found","hints":[{"line":2,"end_line":3,"kind":"indentation","score":1.0,"text":"  a\n  b","future":1},{"line":9,"end_line":9,"kind":"telepathy","score":1.0,"text":"x"},{"line":5,"end_line":5,"kind":"similar","score":0.75,"text":"y","text_truncated":true}],"hints_truncated":true,"path":"/p"}"#;
        let HelperOutcome::Failed { hints, .. } = parse_output(out, Some(1)) else {
            panic!()
        };
        let h = hints.unwrap();
        assert_eq!(h.hints.len(), 2, "the unknown kind is left out");
        assert_eq!(
            h.hints[0],
            Hint {
                line: 2,
                end_line: 3,
                kind: Kind::Indentation,
                score: 1.0,
                text: "  a\n  b".into(),
                text_truncated: false
            }
        );
        assert_eq!((h.hints[1].kind, h.hints[1].score), (Kind::Similar, 0.75));
        assert!(h.hints[1].text_truncated && h.truncated);
        let out = b"__RESULT__{\"error\":\"multiple_occurrences\",\"count\":3,\"lines\":[1,4,4]}";
        let HelperOutcome::Failed { hints, .. } = parse_output(out, Some(1)) else {
            panic!()
        };
        assert_eq!(
            hints,
            Some(RefusalHints {
                lines: vec![1, 4, 4],
                ..RefusalHints::default()
            })
        );
    }

    #[test]
    fn protocol_from_version_output() {
        assert_eq!(
            helper_protocol(b"noise\nas-edit 0.1.0 (protocol 2; x86_64-unknown-linux-musl)\n"),
            Some(2)
        );
        assert_eq!(
            helper_protocol(b"as-edit 0.1.0 (protocol 1; aarch64-unknown-linux-musl)"),
            Some(1)
        );
        assert_eq!(helper_protocol(b"sh: as-edit: not found"), None);
        assert_eq!(helper_protocol(b"as-edit 0.1.0 (protocol x; y)"), None);
    }
}
