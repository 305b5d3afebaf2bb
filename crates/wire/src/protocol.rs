//! The result protocol: tokens, the `__RESULT__` line and exit codes.
//!
//! The default line carries only `count`, `error` and `detail`: the Java host
//! reads it into a record of exactly those fields with a strict ObjectMapper.
//! Richer keys appear only when the caller opts in with `--report`.
//!
//! A result line that cannot be written (standard output closed, a full
//! device, a broken pipe) is not retried or reported elsewhere (stderr stays
//! empty), and the exit code stays the outcome's: 0 means the edit is
//! committed. A host then sees that exit code and no result line (the Rust
//! host's `EditError::Unexpected` with `exit_code`), which the host protocol
//! treats as an unexpected failure to report; with exit 0 the file holds the
//! new content. (The `apply_patch` mode exits 1 instead, as Codex does.)

use serde::Serialize;

pub use as_edit_text::hints::HintKeys;

/// The marker hosts search for in merged exec output.
pub const RESULT_PREFIX: &str = "__RESULT__";

/// Protocol version reported by `--version`; bumped only on incompatible change.
/// 2: `--hints` and `--at-line` (hosts pass `--hints` only to a helper of
/// protocol 2 or later). 3: `{"files":[...]}` transactions, `--request-b64`,
/// `line_out_of_range` and `file_exists`. 4: the toolset's `{"op"}`
/// requests (`stat`, `list`, `read`; a transaction op alone), `not_text`.
pub const PROTOCOL_VERSION: u32 = 4;

/// Exit code: the file was edited.
pub const EXIT_EDITED: i32 = 0;
/// Exit code: not edited; the result line says why.
pub const EXIT_NOT_EDITED: i32 = 1;
/// Exit code: invalid invocation (`invalid_argument`).
pub const EXIT_INVALID: i32 = 2;

/// Every error token the helper emits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// `file_not_found`: no regular file at the resolved path.
    FileNotFound,
    /// `read_failed`: the content is not strict UTF-8, or could not be read.
    ReadFailed,
    /// `empty`: the file has zero bytes.
    Empty,
    /// `string_not_found`: OLD does not occur.
    StringNotFound,
    /// `multiple_occurrences`: OLD occurs more than once without replace-all.
    MultipleOccurrences,
    /// `write_failed`: the new content could not be committed; the file is unchanged.
    WriteFailed,
    /// `invalid_argument`: an invalid invocation (exit 2).
    InvalidArgument,
    /// `internal_error`: a bug; the file is unchanged.
    InternalError,
    /// `permission_denied`: the caller may not write the file, or it is immutable or append-only.
    PermissionDenied,
    /// `busy`: another edit held the file's lock past `--lock-timeout`.
    Busy,
    /// `conflict`: the file is not the one the host read, or changed during the edit.
    Conflict,
    /// `outside_root`: the resolved path is outside `--root`.
    OutsideRoot,
    /// `line_out_of_range`: an `insert` after a line past the file's last.
    LineOutOfRange,
    /// `file_exists`: a `create` or `move` onto an existing path without `overwrite`.
    FileExists,
    /// `invalid_patch`: a V4A patch that does not parse (exit 1: a model wrote it).
    InvalidPatch,
    /// `not_text`: a `read` of a file that is not UTF-8 text (a NUL byte,
    /// or invalid UTF-8); the detail names the byte offset.
    NotText,
}

impl ErrorKind {
    /// Every kind, for [`ErrorKind::from_token`] and exhaustive tests.
    pub const ALL: [ErrorKind; 16] = [
        ErrorKind::FileNotFound,
        ErrorKind::ReadFailed,
        ErrorKind::Empty,
        ErrorKind::StringNotFound,
        ErrorKind::MultipleOccurrences,
        ErrorKind::WriteFailed,
        ErrorKind::InvalidArgument,
        ErrorKind::InternalError,
        ErrorKind::PermissionDenied,
        ErrorKind::Busy,
        ErrorKind::Conflict,
        ErrorKind::OutsideRoot,
        ErrorKind::LineOutOfRange,
        ErrorKind::FileExists,
        ErrorKind::InvalidPatch,
        ErrorKind::NotText,
    ];

    /// The token as the result line spells it (`file_not_found`, …).
    #[cfg_attr(as_edit_small, optimize(size))]
    pub fn token(self) -> &'static str {
        match self {
            ErrorKind::FileNotFound => "file_not_found",
            ErrorKind::ReadFailed => "read_failed",
            ErrorKind::Empty => "empty",
            ErrorKind::StringNotFound => "string_not_found",
            ErrorKind::MultipleOccurrences => "multiple_occurrences",
            ErrorKind::WriteFailed => "write_failed",
            ErrorKind::InvalidArgument => "invalid_argument",
            ErrorKind::InternalError => "internal_error",
            ErrorKind::PermissionDenied => "permission_denied",
            ErrorKind::Busy => "busy",
            ErrorKind::Conflict => "conflict",
            ErrorKind::OutsideRoot => "outside_root",
            ErrorKind::LineOutOfRange => "line_out_of_range",
            ErrorKind::FileExists => "file_exists",
            ErrorKind::InvalidPatch => "invalid_patch",
            ErrorKind::NotText => "not_text",
        }
    }

    /// The kind a token names; `None` for a token this version does not know.
    pub fn from_token(s: &str) -> Option<ErrorKind> {
        ErrorKind::ALL.into_iter().find(|k| k.token() == s)
    }

    /// Exit code for a result carrying this error.
    pub fn exit_code(self) -> i32 {
        match self {
            ErrorKind::InvalidArgument => EXIT_INVALID,
            _ => EXIT_NOT_EDITED,
        }
    }
}

/// An error result: token, optional count (multiple_occurrences) and detail.
#[derive(Clone, Debug, PartialEq)]
pub struct Failure {
    /// The `error` token.
    pub kind: ErrorKind,
    /// `count`: set for `multiple_occurrences` only.
    pub count: Option<u64>,
    /// `detail`: words for a person or a model when the token is not enough.
    pub detail: Option<String>,
    /// `--hints` only: the keys a refusal adds.
    pub hints: Option<HintKeys>,
}

impl Failure {
    /// A failure with a detail.
    #[cfg_attr(as_edit_small, optimize(size))]
    pub fn new(kind: ErrorKind, detail: impl Into<String>) -> Failure {
        Failure {
            kind,
            count: None,
            detail: Some(detail.into()),
            hints: None,
        }
    }
    /// A failure with the token alone.
    #[cfg_attr(as_edit_small, optimize(size))]
    pub fn bare(kind: ErrorKind) -> Failure {
        Failure {
            kind,
            count: None,
            detail: None,
            hints: None,
        }
    }
}

/// Opt-in keys added by `--report`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Report {
    /// The resolved path of the file (when UTF-8).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The resolved path, as base64 of its bytes, when it is not UTF-8
    /// (its lossy text is the exact name of another file).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path_b64: Option<String>,
    /// Bytes of the new content (of the current file after a refusal).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Lowercase hex SHA-256 of the new content (of the current file after a refusal).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    /// 1-based lines of the new content where replacements start (in a
    /// batch, those of the last edit).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lines: Option<Vec<u64>>,
    /// `lines` holds only the first `engine::LINES_MAX` replacements.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lines_truncated: Option<bool>,
    /// A batch: each edit's own count and lines, for the first
    /// `engine::EDITS_MAX` (1,000) edits.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub edits: Option<Vec<EditReport>>,
    /// `true` when the batch has more edits than `edits` lists.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub edits_truncated: Option<bool>,
    /// `true` under `--dry-run`: nothing was written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dry_run: Option<bool>,
    /// `--diff`: the unified diff of the LF-normalized old text and the new text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    /// `--diff`: `true` when the diff was cut at its cap or left out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff_truncated: Option<bool>,
    /// A patch's Update (`--report`): each chunk's grade (`exact`,
    /// `trailing_whitespace`, `whitespace`, `punctuation`).
    #[serde(rename = "match", skip_serializing_if = "Option::is_none")]
    pub grades: Option<Vec<String>>,
    /// `--fsync` only: `false` when the edit is applied but the flush after
    /// the rename failed (absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub durable: Option<bool>,
}

/// One edit of a batch, under `--report`'s `edits`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct EditReport {
    /// Replacements this edit made.
    pub count: u64,
    /// 1-based lines of its own output where its replacements start.
    pub lines: Vec<u64>,
    /// More replacements than `lines` lists.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub lines_truncated: bool,
}

/// The JSON object on the result line. Field order is the wire order.
#[derive(Serialize)]
struct Line<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    count: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    detail: Option<&'a str>,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    hints: Option<&'a HintKeys>,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    report: Option<&'a Report>,
}

/// Renders `__RESULT__{...}\n` for a success.
#[cfg_attr(as_edit_small, optimize(size))]
pub fn success_line(count: u64, report: Option<&Report>) -> String {
    render(&Line {
        error: None,
        count: Some(count),
        detail: None,
        hints: None,
        report,
    })
}

/// Renders `__RESULT__{...}\n` for a failure.
#[cfg_attr(as_edit_small, optimize(size))]
pub fn failure_line(f: &Failure, report: Option<&Report>) -> String {
    // `--report` fills `lines` only on success, but a key must never appear
    // twice: the hint's occurrence lines win over any report lines.
    let stripped;
    let report = match (report, f.hints.as_ref()) {
        (Some(r), Some(h))
            if h.lines.is_some() && (r.lines.is_some() || r.lines_truncated.is_some()) =>
        {
            stripped = Report {
                lines: None,
                lines_truncated: None,
                ..r.clone()
            };
            Some(&stripped)
        }
        (r, _) => r,
    };
    render(&Line {
        error: Some(f.kind.token()),
        count: f.count,
        detail: f.detail.as_deref(),
        hints: f.hints.as_ref(),
        report,
    })
}

#[cfg_attr(as_edit_small, optimize(size))]
fn render(line: &Line) -> String {
    render_json(line)
}

/// `__RESULT__` + `value` as ASCII-only JSON ([`crate::json`]) + `\n`
/// (the transaction's lines have their own shape).
#[cfg_attr(as_edit_small, optimize(size))]
pub fn render_json<T: Serialize>(line: &T) -> String {
    // Serializing plain strings and integers cannot fail.
    let json = serde_json::to_string(line).expect("result line serializes");
    let mut out = String::with_capacity(RESULT_PREFIX.len() + json.len() + 1);
    out.push_str(RESULT_PREFIX);
    crate::json::ascii(&mut out, &json);
    out.push('\n');
    out
}

/// How a detail names edit `index` (0-based) of a batch of `total`:
/// `edit 2 of 3: `; empty for a single edit. Every such detail, the
/// parser's and the engine's refusals alike, is worded through it.
pub fn edit_prefix(index: usize, total: usize) -> String {
    if total > 1 {
        format!("edit {} of {total}: ", index + 1)
    } else {
        String::new()
    }
}

/// Maps a refusal of the core to its token and detail. One function for the
/// binary and the host's transfer fallback, so their results cannot drift.
/// `total` is the number of edits (details name the edit in a batch).
#[cfg_attr(as_edit_small, optimize(size))]
pub fn refusal_failure(r: as_edit_text::engine::Refusal, total: usize, path: &str) -> Failure {
    use as_edit_text::engine::Refusal;
    let prefix = |i: usize| edit_prefix(i, total);
    match r {
        Refusal::Empty => Failure::bare(ErrorKind::Empty),
        Refusal::InvalidUtf8 { offset, reason } => Failure::new(
            ErrorKind::ReadFailed,
            format!("{path} is not valid UTF-8: {reason} at byte offset {offset}"),
        ),
        Refusal::NotFound { edit } if total > 1 => Failure::new(
            ErrorKind::StringNotFound,
            format!("{}OLD not found", prefix(edit)),
        ),
        Refusal::NotFound { .. } => Failure::bare(ErrorKind::StringNotFound),
        Refusal::Multiple { edit, count } => Failure {
            kind: ErrorKind::MultipleOccurrences,
            count: Some(count),
            detail: (total > 1).then(|| format!("{}OLD occurs {count} times", prefix(edit))),
            hints: None,
        },
        Refusal::NotAtLine {
            edit,
            line,
            count,
            starts,
        } => Failure::new(
            ErrorKind::StringNotFound,
            format!(
                "{}no occurrence of OLD starts on line {line}; {}",
                prefix(edit),
                occurrence_starts(count, &starts)
            ),
        ),
        Refusal::MultipleAtLine { edit, line, count } => Failure {
            kind: ErrorKind::MultipleOccurrences,
            count: Some(count),
            detail: Some(format!(
                "{}{count} occurrences of OLD start on line {line}",
                prefix(edit)
            )),
            hints: None,
        },
    }
}

/// "occurrences start on lines 3, 12", naming how many are left out.
#[cfg_attr(as_edit_small, optimize(size))]
fn occurrence_starts(count: u64, starts: &[u64]) -> String {
    let list = starts
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    match count {
        1 => format!("the only occurrence starts on line {list}"),
        _ if count as usize > starts.len() => format!(
            "occurrences start on lines {list} (the first {} of {count})",
            starts.len()
        ),
        _ => format!("occurrences start on lines {list}"),
    }
}

/// Renders a path for a detail: lossy (invalid bytes become U+FFFD, then
/// `\ufffd` on the wire) but never able to break the line.
pub fn display_path(p: &std::path::Path) -> String {
    p.to_string_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes() {
        assert_eq!(success_line(3, None), "__RESULT__{\"count\":3}\n");
        let f = Failure {
            kind: ErrorKind::MultipleOccurrences,
            count: Some(2),
            detail: None,
            hints: None,
        };
        assert_eq!(
            failure_line(&f, None),
            "__RESULT__{\"error\":\"multiple_occurrences\",\"count\":2}\n"
        );
        assert_eq!(
            failure_line(&Failure::bare(ErrorKind::Empty), None),
            "__RESULT__{\"error\":\"empty\"}\n"
        );
    }

    #[test]
    fn non_ascii_is_escaped() {
        let f = Failure::new(ErrorKind::FileNotFound, "é😀\n\"\u{fffd}");
        assert_eq!(
            failure_line(&f, None),
            "__RESULT__{\"error\":\"file_not_found\",\"detail\":\"\\u00e9\\ud83d\\ude00\\n\\\"\\ufffd\"}\n"
        );
    }

    #[test]
    fn tokens_round_trip() {
        for k in ErrorKind::ALL {
            assert_eq!(ErrorKind::from_token(k.token()), Some(k));
        }
    }

    #[test]
    fn at_line_details() {
        use as_edit_text::engine::Refusal;
        let f = refusal_failure(
            Refusal::NotAtLine {
                edit: 0,
                line: 7,
                count: 2,
                starts: vec![3, 12],
            },
            1,
            "p",
        );
        assert_eq!(
            failure_line(&f, None),
            "__RESULT__{\"error\":\"string_not_found\",\"detail\":\"no occurrence of OLD starts on line 7; occurrences start on lines 3, 12\"}\n"
        );
        let f = refusal_failure(
            Refusal::NotAtLine {
                edit: 1,
                line: 2,
                count: 1,
                starts: vec![5],
            },
            2,
            "p",
        );
        assert_eq!(
            f.detail.as_deref(),
            Some("edit 2 of 2: no occurrence of OLD starts on line 2; the only occurrence starts on line 5")
        );
        let f = refusal_failure(
            Refusal::NotAtLine {
                edit: 0,
                line: 1,
                count: 25,
                starts: (2..22).collect(),
            },
            1,
            "p",
        );
        assert!(f
            .detail
            .unwrap()
            .ends_with("15, 16, 17, 18, 19, 20, 21 (the first 20 of 25)"));
        let f = refusal_failure(
            Refusal::MultipleAtLine {
                edit: 0,
                line: 4,
                count: 2,
            },
            1,
            "p",
        );
        assert_eq!(
            failure_line(&f, None),
            "__RESULT__{\"error\":\"multiple_occurrences\",\"count\":2,\"detail\":\"2 occurrences of OLD start on line 4\"}\n"
        );
    }

    // `--report` fills `lines` only on success, but if a refusal's report
    // ever held it, the occurrence lines win and no key appears twice.
    #[test]
    fn hint_keys_join_the_report_without_a_key_twice() {
        let mut f = Failure {
            kind: ErrorKind::MultipleOccurrences,
            count: Some(2),
            detail: None,
            hints: Some(HintKeys {
                lines: Some(vec![3, 9]),
                ..HintKeys::default()
            }),
        };
        let r = Report {
            path: Some("/p".into()),
            lines: Some(vec![1]),
            lines_truncated: Some(true),
            ..Report::default()
        };
        assert_eq!(
            failure_line(&f, Some(&r)),
            "__RESULT__{\"error\":\"multiple_occurrences\",\"count\":2,\"lines\":[3,9],\"path\":\"/p\"}\n"
        );
        f.hints = Some(HintKeys {
            hints: Some(Vec::new()),
            hints_truncated: Some(true),
            ..HintKeys::default()
        });
        f.kind = ErrorKind::StringNotFound;
        f.count = None;
        let r = Report {
            path: Some("/p".into()),
            ..Report::default()
        };
        assert_eq!(
            failure_line(&f, Some(&r)),
            "__RESULT__{\"error\":\"string_not_found\",\"hints\":[],\"hints_truncated\":true,\"path\":\"/p\"}\n"
        );
    }

    #[test]
    fn edit_prefix_names_an_edit_of_a_batch_only() {
        assert_eq!(edit_prefix(1, 3), "edit 2 of 3: ");
        assert_eq!(edit_prefix(0, 2), "edit 1 of 2: ");
        assert_eq!(edit_prefix(0, 1), "");
    }

    #[test]
    fn existing_refusal_details_unchanged() {
        use as_edit_text::engine::Refusal;
        let cases = [
            (Refusal::NotFound { edit: 0 }, 1, "__RESULT__{\"error\":\"string_not_found\"}\n"),
            (
                Refusal::NotFound { edit: 1 },
                3,
                "__RESULT__{\"error\":\"string_not_found\",\"detail\":\"edit 2 of 3: OLD not found\"}\n",
            ),
            (
                Refusal::Multiple { edit: 0, count: 3 },
                1,
                "__RESULT__{\"error\":\"multiple_occurrences\",\"count\":3}\n",
            ),
            (
                Refusal::Multiple { edit: 0, count: 3 },
                2,
                "__RESULT__{\"error\":\"multiple_occurrences\",\"count\":3,\"detail\":\"edit 1 of 2: OLD occurs 3 times\"}\n",
            ),
        ];
        for (r, total, line) in cases {
            assert_eq!(failure_line(&refusal_failure(r, total, "p"), None), line);
        }
    }
}
