//! Backend output → typed outcome.
//!
//! The result line is found anywhere in merged output (profile noise before,
//! `[stderr] …` after, CRLF line ends) and parsed with serde_json, never by
//! substring. Unknown keys are ignored; unknown tokens are kept verbatim.

use crate::protocol::{ErrorKind, RESULT_PREFIX};

/// An error token: one this library knows, or a newer one kept verbatim.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Token {
    /// A token of this version's protocol.
    Known(ErrorKind),
    /// A token from a newer helper, as it was sent.
    Unknown(String),
}

impl Token {
    /// The token as the result line spells it.
    pub fn as_str(&self) -> &str {
        match self {
            Token::Known(k) => k.token(),
            Token::Unknown(s) => s,
        }
    }
}

/// What one exec of the helper came to (not the file-system layer's
/// `fs::Outcome`: this is the host's reading of the helper's output).
#[derive(Clone, Debug, PartialEq, Eq)]
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
        }),
        Some(_) => None,
        None => count.map(|count| HelperOutcome::Edited { count }),
    }
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
                count: Some(3)
            }
        );
        assert_eq!(
            parse_output(b"__RESULT__{\"error\":\"quota\",\"detail\":\"d\"}", None),
            HelperOutcome::Failed {
                kind: Token::Unknown("quota".into()),
                detail: Some("d".into()),
                count: None
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
