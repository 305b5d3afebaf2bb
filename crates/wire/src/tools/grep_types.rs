//! The types of the `grep` op: its request, parsed, and what the search
//! found, before `grep_answer.rs` writes it (`grep_op.rs` searches).

use super::Options;

/// What `grep` answers with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    /// Matching lines.
    Content,
    /// Files with a match.
    Files,
    /// Files with their counts.
    Count,
}

/// A `grep` request, parsed.
#[derive(Clone, Debug)]
pub struct GrepRequest {
    /// `pattern`.
    pub pattern: String,
    /// `regex`.
    pub regex: bool,
    /// `ignore_case`.
    pub ignore_case: bool,
    /// `path` (or `path_b64`), as given.
    pub path: Option<Vec<u8>>,
    /// `glob`.
    pub glob: Option<String>,
    /// `output`.
    pub output: Output,
    /// `context` lines before and after a match.
    pub context: u64,
    /// `offset`: matches (files) to leave out first.
    pub offset: u64,
    /// `limit`: at most this many matches (files).
    pub limit: u64,
    /// `max_columns`: characters of a line shown.
    pub max_columns: u64,
    /// What the walk skips.
    pub walk: Options,
}

/// One line of a `content` answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line {
    /// The file, as shown.
    pub path: Vec<u8>,
    /// 1-based.
    pub line: u64,
    /// Cut at `max_columns` characters.
    pub text: String,
    /// `text` was cut.
    pub cut: bool,
    /// A context line, not a match.
    pub context: bool,
    /// `text` is not what the line shows: kept short of it, and longer
    /// than `max_bytes` with the context before it (`grep_long::keep`).
    pub short: bool,
}

/// A [`Line`] borrowed: its path is the file's, not a copy.
#[derive(Clone, Copy, Debug)]
pub struct LineRef<'a> {
    /// The file, as shown.
    pub path: &'a [u8],
    /// 1-based.
    pub line: u64,
    /// Cut at `max_columns` characters.
    pub text: &'a str,
    /// `text` was cut.
    pub cut: bool,
    /// A context line, not a match.
    pub context: bool,
    /// `text` is kept short of what the line shows (`grep_op::Line`).
    pub short: bool,
}

impl<'a> From<&'a Line> for LineRef<'a> {
    fn from(l: &'a Line) -> LineRef<'a> {
        LineRef {
            path: &l.path,
            line: l.line,
            text: &l.text,
            cut: l.cut,
            context: l.context,
            short: l.short,
        }
    }
}

/// The answer of `grep`.
#[derive(Debug, Default)]
pub struct Grepped {
    /// `content`'s lines, unless given to a sink (the helper's `grep_op::grep_into`).
    pub lines: Vec<Line>,
    /// `files` and `count`'s files, with their counts.
    pub files: Vec<(Vec<u8>, u64)>,
    /// Files read.
    pub files_searched: u64,
    /// Files skipped as binary.
    pub skipped_binary: u64,
    /// Files that could not be opened or read to their end, and
    /// directories the walk could not read.
    pub unreadable: u64,
    /// Pseudo file systems not entered (the walk's `Outcome::pseudo`).
    pub pseudo: u64,
    /// More were found than the answer holds, or the walk hit a bound.
    pub truncated: bool,
    /// More were found than the answer holds (`limit` stopped the search).
    pub more: bool,
    /// A bound of the walk cut it.
    pub walk_cut: bool,
}
