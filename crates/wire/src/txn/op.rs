//! What one transaction asks for: its operations, in request order, and
//! the options that apply to every file. The `{"files":[...]}` parser
//! (`txn::parse`) and the helper's V4A patch compiler both build a
//! [`Txn`]; the helper's transaction machinery (`as_edit::txn`) consumes
//! it and never sees JSON or patch text.
//!
//! An op names a file by path; the machinery resolves it (`--root`
//! confines every path, a move's `to` and created parents included), so
//! two paths reaching one file (a symlink, a hard link) are one file and
//! its ops chain: each sees the content the previous one left.
//!
//! A content change ([`Change`]) is either today's old/new edits, streamed
//! through the engine exactly as a single-file edit is, or a [`Transform`]:
//! a pure function of the whole old text (strict UTF-8, LF-normalized)
//! that streams the new text to a sink or returns a refusal. `insert` is one, and a V4A
//! `Update File` compiles to one (its chunk locator), so a patch refusal
//! can carry its own keys (`"chunk"`) beside the transaction's `"file"`.

use std::path::PathBuf;

use as_edit_text::engine::Edit;

use crate::protocol::Failure;
use crate::request::EditOptions;

/// A whole transaction: every op, in order, and the shared options.
///
/// `options.expect_sha256` is not used (it is per op here); `options.root`
/// confines every path.
#[derive(Debug)]
pub struct Txn {
    /// The operations, applied in order (at least one, at most [`MAX_OPS`]).
    pub ops: Vec<Op>,
    /// `--dry-run`, `--report`, `--diff`, `--hints`, `--fsync`, `--eol`,
    /// `--lock-timeout`, `--root`: for every file.
    pub options: EditOptions,
    /// The permission bits, before the umask, of what the transaction
    /// makes where nothing was.
    pub new_modes: NewModes,
    /// A V4A patch's transaction (`patch::compile`): an `Update File` +
    /// `Move to` of a symlink, a second name of a hard-linked file and a
    /// `Move to` onto a hard link of the file or a symlink to it are refused, where a
    /// `{"files"}` request's `move` and ops follow the rules above
    /// (`plan`: Codex writes in place there, as-edit by rename).
    pub patch: bool,
}

/// Permission bits before the umask: a `create`'s file when it gives no
/// `mode`, and every directory a create or move makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NewModes {
    /// A created file's.
    pub file: u32,
    /// A made directory's.
    pub dir: u32,
}

impl NewModes {
    /// A `{"files"}` request and a `--patch`: 0644 and 0755, whatever the
    /// umask allows beyond them.
    pub const REQUEST: NewModes = NewModes {
        file: 0o644,
        dir: 0o755,
    };
    /// The `apply_patch` mode: 0666 and 0777, so the umask alone decides,
    /// as Codex's `apply_patch` (std's `fs::write` and `create_dir_all`).
    pub const CODEX: NewModes = NewModes {
        file: 0o666,
        dir: 0o777,
    };
}

/// The most ops (and so files) one transaction may hold; more is
/// `invalid_argument`. A file holds one or two descriptors until the
/// commit, a directory one (`txn::nofile`: the whole bound), so the soft
/// `RLIMIT_NOFILE` is raised to the hard one.
pub const MAX_OPS: usize = 256;

/// One operation on one path.
#[derive(Debug)]
pub struct Op {
    /// The file the op is about (relative to the working directory).
    pub path: PathBuf,
    /// What to do with it.
    pub kind: OpKind,
}

/// The six operations. Their JSON names are `edit`, `insert`, `create`,
/// `delete`, `move` and `mkdir`.
#[derive(Debug)]
pub enum OpKind {
    /// Change an existing file's content in place (by rename, as always).
    Edit {
        /// The change (never empty edits).
        change: Change,
        /// Refuse with `conflict` unless the file has these raw bytes.
        expect_sha256: Option<[u8; 32]>,
    },
    /// Insert `text` as whole lines after line `line` (0: before the
    /// first); a text without a final newline gets one; past the last line
    /// is `line_out_of_range`. (Built as a [`Transform`] by the machinery.)
    Insert {
        /// Lines kept before the text (0 to the file's line count).
        line: u64,
        /// The lines inserted (LF-normalized like NEW).
        text: String,
    },
    /// A new regular file with exactly `content` (no normalization).
    Create {
        /// The bytes written (may be empty).
        content: String,
        /// Replace an existing file (its owner kept, and its mode unless
        /// `mode` is given) instead of refusing with `file_exists`.
        overwrite: bool,
        /// Permission bits before the umask, for a new file and for one it
        /// replaces; `None`: a new file gets [`Txn::new_modes`]' `file`,
        /// a replaced one keeps its own.
        mode: Option<u32>,
    },
    /// Remove the directory entry (a symlink itself, never its target).
    Delete {
        /// Refuse with `conflict` unless the file has these raw bytes.
        expect_sha256: Option<[u8; 32]>,
        /// A directory is removed with everything under it (`rm -r`, on
        /// one file system, no symlink followed); without it a directory
        /// is refused.
        recursive: bool,
    },
    /// Rename to `to` (missing parents created), changing the content on
    /// the way when `change` is given.
    Move {
        /// The new path (confined by `--root` like every path).
        to: PathBuf,
        /// Replace an existing `to` instead of refusing with `file_exists`.
        overwrite: bool,
        /// The content change applied while moving, if any.
        change: Option<Change>,
        /// Refuse with `conflict` unless the file has these raw bytes.
        expect_sha256: Option<[u8; 32]>,
    },
    /// Make the directory (0777 before the umask); `parents`: as
    /// `mkdir -p` (missing parents made, an existing directory is fine).
    Mkdir {
        /// `mkdir -p`.
        parents: bool,
    },
}

/// How an op changes a file's content.
#[derive(Debug)]
pub enum Change {
    /// Old/new edits exactly as a single-file request gives them (batch
    /// semantics, `at_line` included), streamed through the engine.
    Edits(Vec<Edit>),
    /// A pure function of the whole old text.
    Transform(Transform),
}

/// A content change computed from the whole old text (strict UTF-8,
/// CRLF/CR already LF). Pure: no I/O, so the host's transfer fallback runs
/// the same function on downloaded bytes. Holds the one file's old text in
/// memory (the edits of [`Change::Edits`] stream instead); the new text
/// goes to the sink piece by piece, into the temp, never whole.
pub struct Transform {
    /// The change.
    pub apply: Box<dyn TransformFn>,
}

/// What a [`Transform`] computes; any `Fn(old, sink)` is one.
pub trait TransformFn {
    /// Writes the new text to the sink, or says why the op is refused
    /// (before writing anything, so a refusal never needs a temp).
    fn apply(&self, old: &str, out: &mut dyn FnMut(&str)) -> Result<Transformed, OpRefusal>;

    /// The same change in one pass over the file, when the transform has
    /// one (a patch's chunks: `patch::stream`): `source` feeds it the old
    /// text (strict UTF-8, LF) piece by piece (false: it could not, the
    /// caller tells why), the new text goes to the sink as it is made.
    /// `None` when the pass cannot prove its answer is [`Self::apply`]'s
    /// (the caller discards the output and runs `apply`).
    fn stream(&self, _source: &mut Source<'_>, _out: &mut dyn FnMut(&[u8])) -> Option<Transformed> {
        None
    }

    /// [`Self::apply`]'s answer in passes over the file (`source` may be
    /// called again for each), in memory bounded independently of its
    /// size (a patch's chunks: `patch::passes`), the diff into `diff`;
    /// `None` when the transform has no such form (the caller then holds
    /// the text and runs `apply`).
    fn passes(
        &self,
        _source: &mut Source<'_>,
        _out: &mut dyn FnMut(&[u8]),
        _diff: Option<&mut as_edit_text::diff::Builder>,
    ) -> Option<Result<Transformed, OpRefusal>> {
        None
    }
}

/// What feeds a [`TransformFn::stream`] the old text: it calls its
/// argument with each piece; false when it could not read it all (the
/// patch locator's, defined beside it in the text crate).
pub use as_edit_text::patch::Source;

impl<F: Fn(&str, &mut dyn FnMut(&str)) -> Result<Transformed, OpRefusal>> TransformFn for F {
    fn apply(&self, old: &str, out: &mut dyn FnMut(&str)) -> Result<Transformed, OpRefusal> {
        self(old, out)
    }
}

impl std::fmt::Debug for Transform {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Transform")
    }
}

/// What a [`Transform`] made of the old text.
#[derive(Debug, Default)]
pub struct Transformed {
    /// Replacements counted into the result's `count` (a patch: chunks).
    pub count: u64,
    /// 1-based lines of the new text where the changes start (`--report`).
    pub lines: Vec<u64>,
    /// Extra `--report` keys of this file's change, as (key, value)
    /// strings (a patch's `("match", "exact")`).
    pub notes: Vec<(&'static str, String)>,
}

/// Why an op is refused: the token, count, detail and hints of a
/// single-file refusal, plus the keys a patch adds. The machinery prefixes
/// the detail with `file i of n (P): ` and adds `"file": i`.
#[derive(Debug)]
pub struct OpRefusal {
    /// The token and its keys, as a single-file refusal has them.
    pub failure: Failure,
    /// A patch's 1-based chunk within the file's `Update File` (`"chunk"`).
    pub chunk: Option<u64>,
}

impl From<Failure> for OpRefusal {
    fn from(failure: Failure) -> OpRefusal {
        OpRefusal {
            failure,
            chunk: None,
        }
    }
}
