//! The toolset's read-side requests (protocol 4: `stat`, `list`, `read`,
//! `glob`, `grep`), read and checked: their types, their strict parser
//! ([`parse()`]), the path fields ([`name`]) and the bounded answer writer
//! every op renders its result line with ([`answer`]). Pure: the ops' I/O
//! is the helper's (`as_edit::tools`, whose module doc has the field
//! table, the answers and the bounds); the host library parses with the
//! same code, so its refusals are the helper's word for word.

use std::path::PathBuf;

use crate::protocol::{ErrorKind, Failure};

pub mod answer;
mod grep_types;
pub mod name;
mod parse;

pub use grep_types::{GrepRequest, Grepped, Line, LineRef, Output};
pub use parse::{
    bounded, parse, probe, Num, OpName, MAX_CONTEXT, MAX_DEPTH, MAX_LIST_LIMIT, MAX_NUMBER,
    MAX_STAT_PATHS,
};

/// A toolset request, read and checked.
#[derive(Debug)]
pub struct Request {
    /// What to do.
    pub op: Op,
    /// The bound of the result line ([`answer`]).
    pub max_bytes: u64,
    /// `--root`.
    pub root: Option<PathBuf>,
}

/// The ops.
#[derive(Debug)]
pub enum Op {
    /// `stat`: the paths, and the first to answer (`offset`).
    Stat {
        /// The paths in request order.
        paths: Vec<PathBuf>,
        /// The first path answered.
        offset: u64,
    },
    /// `list`.
    List(List),
    /// `read` as text.
    Read(Read),
    /// `read` with `raw:true`.
    Raw(Raw64),
    /// `glob` (`find.rs`).
    Glob(GlobRequest),
    /// `grep` (`grep_op.rs`).
    Grep(GrepRequest),
}

/// A `list` request.
#[derive(Debug)]
pub struct List {
    /// The directory.
    pub path: PathBuf,
    /// Levels to descend (1: the directory's own entries).
    pub depth: u64,
    /// Whether names starting with `.` are listed.
    pub hidden: bool,
    /// Whether the walk enters `.git`, `.hg` and `.svn`.
    pub vcs: bool,
    /// Whether `.gitignore` rules leave entries out (as `glob`'s do).
    pub gitignore: bool,
    /// The first entry answered (in sorted order).
    pub offset: u64,
    /// The most entries answered.
    pub limit: u64,
}

/// A text `read` request.
#[derive(Debug)]
pub struct Read {
    /// The file.
    pub path: PathBuf,
    /// The first line (1-based).
    pub start: u64,
    /// The most lines.
    pub limit: Option<u64>,
    /// `cat -n` numbers.
    pub numbers: bool,
    /// Lines longer than this many characters are cut.
    pub max_columns: Option<u64>,
    /// `next`'s `offset` and `check`: where line `start` begins, if
    /// trusted (the find crate's `read/resume.rs`).
    pub resume: Option<(u64, u64)>,
}

/// A raw `read` request.
#[derive(Debug)]
pub struct Raw64 {
    /// The file.
    pub path: PathBuf,
    /// The first byte.
    pub offset: u64,
    /// The most bytes (as many as fit when absent).
    pub length: Option<u64>,
}

/// The `invalid_argument` refusal with `detail`.
pub fn invalid(detail: impl Into<String>) -> Failure {
    Failure::new(ErrorKind::InvalidArgument, detail)
}

/// What to skip, and what to yield.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    /// Enter `.git`, `.hg` and `.svn` (with `rg`, whenever their hidden
    /// names are shown).
    pub vcs: bool,
    /// Yield and enter names starting with `.`.
    pub hidden: bool,
    /// Honour `.gitignore` files (and, in a repository, those above the
    /// start and `.git/info/exclude`: `ignore_up`).
    pub gitignore: bool,
    /// Yield every entry, not only regular files (`list`): a directory
    /// before what is under it; `.git`, `.hg`, `.svn` yielded but entered
    /// only with `vcs`; a start on a pseudo file system listed, not entered.
    pub all: bool,
    /// Levels yielded, 1 being the start's own entries; 0: every level to
    /// its `MAX_DEPTH` (256), past which the walk is cut (`truncated`).
    pub depth: u64,
    /// ripgrep's default filters (module docs; `gitignore` is then unused).
    pub rg: bool,
}

/// A `glob` request, parsed.
#[derive(Clone, Debug)]
pub struct GlobRequest {
    /// `pattern`.
    pub pattern: String,
    /// `path` (or `path_b64`), as given.
    pub path: Option<Vec<u8>>,
    /// `sort: "mtime"` (else by path).
    pub by_mtime: bool,
    /// `offset`: entries to leave out first.
    pub offset: u64,
    /// `limit`: at most this many entries.
    pub limit: u64,
    /// What the walk skips.
    pub walk: Options,
}
