//! What one edit asks for, whichever way it arrived (argv or `--stdin`): the
//! path, the edits and the options that reach the filesystem. The parser
//! builds it; `fs` consumes it and never sees the argument grammar.

use std::path::PathBuf;
use std::time::Duration;

use as_edit_text::engine::Edit;

/// How line endings are written back.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Eol {
    /// Everything LF (the status quo).
    #[default]
    Lf,
    /// Keep the file's dominant style (CRLF or LF).
    Preserve,
}

/// The options that change what an edit does to the file or reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EditOptions {
    /// How long to wait for a concurrent edit's lock before `busy`.
    pub lock_timeout: Duration,
    /// `--root`: refuse targets that resolve outside this directory.
    pub root: Option<PathBuf>,
    /// `--expect-sha256`: the raw bytes the host last read.
    pub expect_sha256: Option<[u8; 32]>,
    /// `--dry-run`: everything but the write.
    pub dry_run: bool,
    /// `--report`: add path, size, sha256 and lines to the result line.
    pub report: bool,
    /// With `report`: add a unified diff.
    pub diff: bool,
    /// `--eol`: how line endings are written back.
    pub eol: Eol,
    /// `--fsync`: flush the file and its directory before reporting success.
    pub fsync: bool,
    /// `--hints`: after `string_not_found` or `multiple_occurrences`, say
    /// where the text most likely is (computed only after the refusal).
    pub hints: bool,
}

/// The lock wait when `--lock-timeout` is not given.
pub const DEFAULT_LOCK_TIMEOUT: Duration = Duration::from_secs(10);

impl Default for EditOptions {
    #[cfg_attr(as_edit_small, optimize(size))]
    fn default() -> EditOptions {
        EditOptions {
            lock_timeout: DEFAULT_LOCK_TIMEOUT,
            root: None,
            expect_sha256: None,
            dry_run: false,
            report: false,
            diff: false,
            eol: Eol::Lf,
            fsync: false,
            hints: false,
        }
    }
}

/// A complete edit request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// The target, relative to the working directory (symlinks followed).
    pub path: PathBuf,
    /// The edits, applied in order (one or a batch).
    pub edits: Vec<Edit>,
    /// What the flags ask of the edit.
    pub options: EditOptions,
}
