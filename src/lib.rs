#![doc = include_str!("../README.md")]
//!
//! # Modules, one concern each
//!
//! - [`dispatch`]: every request the binary understands, read in one
//!   place and answered in one `match`;
//! - [`args`]: the argument grammar (argv and `--stdin`);
//! - [`request`], [`protocol`], `strict_json`, `b64`: the wire, the crate
//!   `as-edit-wire` (`crates/wire`, no I/O possible), re-exported here
//!   under these paths: what one edit asks for (path, edits, the options
//!   that reach `fs`); tokens, the `__RESULT__` line, exit codes, refusal
//!   → token; serde_json for the `--stdin` request, but a struct only ever
//!   from a JSON object; the strict base64 decoder of argv and requests;
//! - [`engine`], [`eol`], [`diff`], [`hints`]: the pure text layer, the
//!   crate `as-edit-text` (`crates/text`, no I/O possible), re-exported
//!   here under these paths: the streaming replacement engine, the
//!   end-of-line policy of `--eol preserve`, unified diffs for `--diff`,
//!   the failure-hint finder (`--hints`);
//! - [`patch`]: V4A patches as transactions, their inputs and the
//!   `apply_patch` mode; the parser, chunk locator and tree applier are
//!   the text crate's, re-exported there;
//! - [`fs`]: resolve, open, lock, write, commit (one concern per file under `src/fs/`);
//! - [`txn`]: several files in one call, all or nothing (`{"files":[...]}`);
//!   the request's types and its parser are the wire's (`as_edit_wire::txn`,
//!   as the `--stdin` request is: `as_edit_wire::stdin`), re-exported there;
//! - [`tools`]: the read-side ops of the toolset (`stat`, `list`, `read`,
//!   `glob`, `grep`): their I/O; their requests, parser and bounded answer
//!   writer are the wire's (`as_edit_wire::tools`), the read's answer from
//!   the bytes read and what `glob` and `grep` match and search the pure
//!   find layer's, the crate `as-edit-find` (`crates/find`, no I/O), all
//!   re-exported there (`tools::{pattern, glob, gitignore, grep, bom,
//!   lines}`);
//! - [`hex`]: lowercase hex (the wire's) and random names for temps;
//! - `clock`: one clock read, for lock waits and random names;
//! - [`toolset`]: `--toolset agent_toolset_20260401`, Anthropic's file
//!   tools' texts (read, write, edit, glob, grep).
//!
//! The host library (command building, parsing, the `Editor`, fallback,
//! install, backends) is the crate `as-edit-host` (`crates/host`): it
//! depends on the pure crates, never on this one.

#![warn(missing_docs)]
// The static release build (scripts/build-static.sh) passes --cfg
// as_edit_small and optimizes the per-request code for size: see there.
#![cfg_attr(as_edit_small, feature(optimize_attribute))]

pub mod args;
mod clock;
pub mod dispatch;
pub mod fs;
pub mod hex;
pub mod patch;
pub mod tools;
pub mod toolset;
pub mod txn;

// The pure text layer (crates/text), under the paths it always had here.
use as_edit_text::{bytes, spare};
pub use as_edit_text::{diff, engine, eol, hints};
// The wire (crates/wire), likewise.
use as_edit_wire::{b64, strict_json};
pub use as_edit_wire::{protocol, request};

/// What the binary prints and how it exits.
pub struct Response {
    /// Text for stdout (the result line, or help/version text).
    pub stdout: String,
    /// 0 edited, 1 not edited, 2 invalid invocation (see [`protocol`]).
    pub exit_code: i32,
    /// Text for stderr: empty but in the `apply_patch` mode.
    pub stderr: String,
    /// The exit code when [`Response::stdout`] cannot be written: the same
    /// as `exit_code` (the outcome stands), but 1 in the `apply_patch` mode,
    /// as Codex's binary exits.
    pub exit_code_unwritten: i32,
}

/// Runs one invocation end to end; `stdin` is read only for `--stdin`
/// and `--patch`.
///
/// This is the edit entry point, and the crate's [Guarantees](crate#guarantees)
/// hold for it: the file is replaced atomically or not at all, nothing is
/// left behind, a refused edit leaves the file untouched, and
/// [`Response::stdout`] is exactly one result line (or the help or version
/// text), with [`Response::exit_code`] 0 edited, 1 not edited, 2 invalid
/// invocation. Every request is read by [`dispatch::parse`] and answered by
/// [`dispatch::run`].
#[cfg_attr(as_edit_small, optimize(size))]
pub fn run(
    args: &[std::ffi::OsString],
    env_root: Option<std::ffi::OsString>,
    stdin: &mut dyn std::io::Read,
) -> Response {
    dispatch::answer(None, args, env_root, stdin)
}
