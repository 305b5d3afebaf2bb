//! The host library of as-edit: everything a Rust host needs to edit and
//! read files in a sandbox through the as-edit helper binary, with the
//! transfer path (download, the very same pure code, upload) as a fallback
//! where the helper cannot run.
//!
//! # What it may depend on
//!
//! The pure crates the helper is built on, so that the fallback's answers
//! are the helper's, line for line: `as-edit-wire` (the result line and
//! its tokens, the request types and parsers, a patch compiled into a
//! transaction), `as-edit-text` (the replacement engine, hints, the patch
//! grammar) and `as-edit-find` (a `read`'s answer from downloaded bytes);
//! and what a host does: run processes and HTTP (`ureq`, feature
//! `agent-sandbox`), tar for `docker cp` (`tar`, feature `docker`), gzip
//! for an install (`flate2`), base64, getrandom for names (`rustix`).
//! Never the helper crate (`as-edit`: its filesystem layer, transactions
//! and binary): `cargo tree -e normal -p as-edit-host` shows no `as-edit`
//! (scripts/test.sh checks it), and a host that wants [`Editor`] compiles
//! none of the helper.
//!
//! # Use
//!
//! An [`Editor`] over a [`Sandbox`] runs the helper at a path inside it,
//! and falls back when it cannot: here the helper is missing, so the edit
//! is done by the transfer path, and [`Edited::via`] says so.
//!
//! ```
//! use as_edit_host::{EditError, EditRequest, Editor, LocalShell, Via};
//!
//! let dir = tempfile::tempdir()?;
//! let file = dir.path().join("f.txt");
//! std::fs::write(&file, "fn main() {\n    old();\n}\n")?;
//!
//! let mut ed = Editor::new(LocalShell::new(), "/nonexistent/as-edit");
//! let done = ed.edit(&EditRequest::new(&file, "old()", "new()", false))?;
//! assert_eq!((done.count, done.via), (1, Via::Transfer));
//! assert_eq!(std::fs::read_to_string(&file)?, "fn main() {\n    new();\n}\n");
//!
//! // A refusal leaves the file as it was, with the helper's token.
//! match ed.edit(&EditRequest::new(&file, "absent", "x", false)) {
//!     Err(EditError::Failed { kind, via, .. }) => {
//!         assert_eq!((kind.as_str(), via), ("string_not_found", Via::Transfer));
//!     }
//!     other => panic!("{other:?}"),
//! }
//! assert_eq!(std::fs::read_to_string(&file)?, "fn main() {\n    new();\n}\n");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! With the helper installed in the sandbox (a docker container here,
//! feature `docker`), the same call edits in place, atomically
//! ([`Via::Native`]); [`Editor::ensure_helper`] installs it over exec alone:
//!
//! ```no_run
//! # #[cfg(feature = "docker")]
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use as_edit_host::docker::Docker;
//! use as_edit_host::{EditRequest, Editor, Via};
//!
//! let helper = std::fs::read("dist/as-edit-x86_64-unknown-linux-musl")?;
//! let mut ed = Editor::new(Docker::new("my-container"), "/tmp/as-edit");
//! ed.ensure_helper(&helper)?;
//! let done = ed.edit(&EditRequest::new("/work/src/main.rs", "old()", "new()", false))?;
//! assert_eq!(done.via, Via::Native);
//! # Ok(())
//! # }
//! # #[cfg(not(feature = "docker"))]
//! # fn main() {}
//! ```
//!
//! The parts, for a host that runs commands itself: [`command`] builds
//! them and [`parse_output`] reads the helper's result line:
//!
//! ```
//! use as_edit_host::command::shell_command;
//! use as_edit_host::{parse_output, EditRequest, HelperOutcome, DEFAULT_COMMAND_LIMIT};
//!
//! let req = EditRequest::new("src/a.rs", "old", "new", false);
//! let cmd = shell_command("/tmp/as-edit", &req, DEFAULT_COMMAND_LIMIT).unwrap();
//! assert_eq!(cmd, b"'/tmp/as-edit' '--' 'src/a.rs' 'b2xk' 'bmV3' 'false'");
//! let out = parse_output(b"__RESULT__{\"count\":1}\n", Some(0));
//! assert!(matches!(out, HelperOutcome::Edited { count: 1, .. }), "{out:?}");
//! ```
//!
//! # Modules
//!
//! - [`command`]: request → shell command / argv, within the argv bound;
//! - [`parse`]: backend output → [`HelperOutcome`];
//! - [`install`]: the commands that install the helper over exec alone;
//! - [`Editor`]: build, exec, parse, fall back, and say which path did the work;
//! - [`transfer_edit`]: the fallback: download, the same core, upload;
//! - [`Editor::transaction`], [`Editor::apply_patch`],
//!   [`Editor::apply_operations`]: several files in one exec (`txn`: the
//!   request types and result keys; `file_op`: [`FileOp`], whose paths are
//!   bytes, sent as `path_b64` when not UTF-8; `run_txn`: native or transfer;
//!   `txn_transfer`/`tree`/`patch_transfer`: the transfer path through the same
//!   pure engine, patch parser and locator; `write_back`: its uploads and
//!   their undo). The transfer path computes every file and refuses before
//!   uploading anything, but it is **not atomic across files**: while it
//!   uploads, a reader may see some files new and some old, and after a
//!   failed upload it puts back what it wrote (a refusal whose `partial`
//!   names each file's state if even that fails). It keys a file by its
//!   directory's canonical path ([`Sandbox::resolve_dir`]) and its name,
//!   so `x`, `./x`, `d/../x` and `link-to-d/x` are one file (without
//!   `resolve_dir`, `..` and symlinked directories are not resolved); a
//!   symlink and its target are still two files. A create's `mode`
//!   (0644 by default, less the umask) is set by [`Sandbox::set_mode`]
//!   after the upload; a moved file gets what the upload gives a new
//!   file. Missing parents are made one by one ([`Sandbox::make_dir`];
//!   else [`Sandbox::create_dirs`]), and a rollback removes exactly those
//!   it made ([`Sandbox::remove_dir`]); deletes and moves need
//!   [`Sandbox::remove`]. Docker, agent-sandbox and [`LocalShell`]
//!   implement them all;
//! - the toolset ([`Editor::stat`], `list`, `read`, `read_all`, `glob`,
//!   `grep`, `write`, `delete`, `mv`, `mkdir`; `tools`: which op falls
//!   back how, `tools_request`/`tools_answer`: the typed requests and
//!   answers, `tools_transfer`: `read` by download through the helper's
//!   own reader (the find crate's), `mkdir` by [`Sandbox::make_dir`]; the rest
//!   [`EditError::HelperRequired`]);
//! - `error`/`display`: [`EditError`], and how a refusal with hints reads for a model (its `Display`);
//! - [`LocalShell`]: a [`Sandbox`] on this machine (tests and the example);
//! - `agent_sandbox` (feature `agent-sandbox`): the Kubernetes agent-sandbox runtime;
//! - `docker` (feature `docker`): a container through the docker (or podman) CLI.

pub mod command;
mod display;
mod error;
mod file_op;
pub mod install;
mod local;
pub mod parse;
mod patch_transfer;
mod random;
mod run_txn;
// The docker backend's unit tests and, with the `testing` feature, the
// helper's integration tests execute files they write.
#[cfg(any(all(test, feature = "docker"), feature = "testing"))]
#[doc(hidden)]
pub mod testing;
mod tools;
mod tools_answer;
mod tools_request;
mod tools_transfer;
mod transfer;
mod tree;
pub mod txn;
mod txn_transfer;
mod write_back;

#[cfg(feature = "agent-sandbox")]
pub mod agent_sandbox;
#[cfg(feature = "docker")]
pub mod docker;

use std::io;
use std::path::Path;

pub use command::{EditRequest, TooLarge, DEFAULT_COMMAND_LIMIT};
pub use error::EditError;
pub use local::LocalShell;
pub use parse::{parse_output, HelperOutcome, RefusalHints, Token};
pub use tools::TOOLS_PROTOCOL;
pub use tools_answer::{
    BytesPage, EntryType, FileEntry, Found, GrepFile, GrepLine, Grepped, ListEntry, Listing, Next,
    StatEntry, Stats, TextPage,
};
pub use tools_request::{
    DeleteRequest, GlobRequest, GrepOutput, GrepRequest, ListRequest, MkdirRequest, MoveRequest,
    RawReadRequest, ReadRequest, Sort, StatRequest, WriteRequest,
};
pub use transfer::transfer_edit;
pub use txn::{
    Applied, FileChange, FileOp, FileState, PatchOp, PatchOpKind, State, TxnAt, TxnEdit,
};

use as_edit_wire::protocol::ErrorKind;
use display::indent_words;

/// What a backend returned for one command.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExecOutput {
    /// The exit code, if the backend reports one.
    pub exit_code: Option<i32>,
    /// stdout, then stderr, merged as the backend returns them.
    pub output: Vec<u8>,
}

/// A place where commands run and files can be moved.
pub trait Sandbox {
    /// Runs `command`, shell-quoted text. A backend with a shell runs it
    /// with `sh -c`; one without splits it as shlex does and execs argv.
    fn exec(&mut self, command: &[u8], stdin: Option<&[u8]>) -> io::Result<ExecOutput>;
    /// Reads a whole file (`io::ErrorKind::NotFound` when it does not exist).
    fn download(&mut self, path: &Path) -> io::Result<Vec<u8>>;
    /// Writes a whole file.
    fn upload(&mut self, path: &Path, bytes: &[u8]) -> io::Result<()>;
    /// False for runtimes that exec argv without a shell: no pipes, no
    /// redirections, so the helper is installed by upload instead.
    fn has_shell(&self) -> bool {
        true
    }
    /// True when `exec` can feed standard input (then edits larger than the
    /// argv bound go through `--stdin`).
    fn supports_stdin(&self) -> bool {
        false
    }
    /// Removes the file (or symlink) at `path`, never a directory: the
    /// transfer path's delete and move. Unsupported unless implemented.
    fn remove(&mut self, path: &Path) -> io::Result<()> {
        let _ = path;
        Err(unsupported("remove files"))
    }
    /// Creates `dir` and its missing parents (existing ones are fine): the
    /// transfer path's create and move. Unsupported unless implemented
    /// (then the upload alone must manage).
    fn create_dirs(&mut self, dir: &Path) -> io::Result<()> {
        let _ = dir;
        Err(unsupported("create directories"))
    }
    /// Creates the one directory `dir`, 0755 before the umask
    /// (`AlreadyExists` when it exists, `NotFound` when its parent does
    /// not), so that the transfer path knows which directories it made and
    /// removes exactly those after a rollback. Unsupported unless
    /// implemented: then [`Sandbox::create_dirs`] makes them, and they stay.
    fn make_dir(&mut self, dir: &Path) -> io::Result<()> {
        let _ = dir;
        Err(unsupported("create a directory"))
    }
    /// Removes `dir` if it is empty (`rmdir`): a rollback's undo of
    /// [`Sandbox::make_dir`]. Unsupported unless implemented.
    fn remove_dir(&mut self, dir: &Path) -> io::Result<()> {
        let _ = dir;
        Err(unsupported("remove a directory"))
    }
    /// Gives the file the transfer path just created the permission bits
    /// `mode` less the sandbox's umask, as the helper's create does.
    /// Unsupported unless implemented: then a create keeps the mode its
    /// upload gave it when `mode` is the default 0644, and any other mode
    /// fails the write (rolled back).
    fn set_mode(&mut self, path: &Path, mode: u32) -> io::Result<()> {
        let _ = (path, mode);
        Err(unsupported("set a file's mode"))
    }
    /// The canonical path of the existing directory `dir` (`realpath`):
    /// the transfer path keys a file by its directory's and its own name,
    /// so that `d/x`, `./d/x` and `link-to-d/x` are one file, as they are
    /// to the helper. Unsupported unless implemented (then `.` and empty
    /// components are dropped, but `..` and symlinked directories are not
    /// resolved).
    fn resolve_dir(&mut self, dir: &Path) -> io::Result<std::path::PathBuf> {
        let _ = dir;
        Err(unsupported("resolve a path"))
    }
}

fn unsupported(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::Unsupported,
        format!("this backend cannot {what}"),
    )
}

/// Which path did the work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Via {
    /// The helper edited the file in place, atomically.
    Native,
    /// Download → the same core → upload.
    Transfer,
}

/// A successful edit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Edited {
    /// Replacements made.
    pub count: u64,
    /// Which path did the work.
    pub via: Via,
}

/// Builds, executes, parses, and falls back.
pub struct Editor<S> {
    /// The backend the editor runs commands in.
    pub sandbox: S,
    helper: String,
    limit: usize,
    /// The helper's protocol, once a `--version` probe answered (None until
    /// then: a missing helper is probed again on the next edit).
    protocol: Option<u32>,
}

impl<S: Sandbox> Editor<S> {
    /// `helper` is the helper's path inside the sandbox.
    pub fn new(sandbox: S, helper: impl Into<String>) -> Self {
        Editor {
            sandbox,
            helper: helper.into(),
            limit: DEFAULT_COMMAND_LIMIT,
            protocol: None,
        }
    }

    /// Tells the editor the helper's protocol (from a `--version` the host
    /// ran itself), sparing the probe; `None` forgets it (probe again, e.g.
    /// after installing a newer helper).
    pub fn with_protocol(mut self, protocol: Option<u32>) -> Self {
        self.protocol = protocol;
        self
    }

    /// The helper's protocol: cached, else probed with `HELPER --version`
    /// (one exec). None when no as-edit helper answers.
    pub fn helper_protocol(&mut self) -> Option<u32> {
        if self.protocol.is_none() {
            let probe = self
                .sandbox
                .exec(&install::version_command(&self.helper), None);
            self.protocol = match probe {
                Ok(o) if o.exit_code == Some(0) => parse::helper_protocol(&o.output),
                _ => None,
            };
        }
        self.protocol
    }

    /// Changes the command bound (default 112 KiB).
    pub fn with_command_limit(mut self, limit: usize) -> Self {
        self.limit = limit;
        self
    }

    /// The helper's path inside the sandbox.
    pub fn helper(&self) -> &str {
        &self.helper
    }

    /// Edits through the helper; falls back to the transfer path when the
    /// helper is unavailable or answers `write_failed` (target untouched by
    /// contract), or when the edit is too large for one command and the
    /// backend has no stdin. Other refusals are final.
    ///
    /// A helper of protocol 2 or later is asked for hints (`--hints`); the
    /// protocol is learned once per editor from `HELPER --version` (see
    /// [`Editor::helper_protocol`]), just before the first command that
    /// would reach the helper. An older helper never gets the flag, and a
    /// request with `at_line`, which it cannot do, goes to the transfer path.
    pub fn edit(&mut self, req: &EditRequest) -> Result<Edited, EditError> {
        let fits = command::shell_command_with(&self.helper, req, self.limit, true).is_ok();
        let reachable = fits || self.sandbox.supports_stdin();
        let protocol = if reachable {
            self.helper_protocol()
        } else {
            None
        };
        let hints = protocol.is_some_and(|p| p >= 2);
        let attempt = match command::shell_command_with(&self.helper, req, self.limit, hints) {
            _ if req.at_line.is_some() && protocol.is_some_and(|p| p < 2) => None,
            Ok(cmd) => Some((cmd, None)),
            Err(_) if self.sandbox.supports_stdin() => {
                command::stdin_command_with(&self.helper, req, hints)
                    .map(|(c, body)| (c, Some(body)))
            }
            Err(_) => None,
        };
        let mut helper_said = None;
        if let Some((cmd, stdin)) = attempt {
            let out = self.sandbox.exec(&cmd, stdin.as_deref());
            // NotConnected: the sandbox itself is unreachable (no such
            // container, say): the transfer path cannot work either.
            if let Err(e) = &out {
                if e.kind() == io::ErrorKind::NotConnected {
                    return Err(EditError::Backend(out.unwrap_err()));
                }
                if e.kind() == io::ErrorKind::InvalidInput {
                    return Err(transfer::not_sendable(e, Via::Native));
                }
            }
            if let Ok(out) = out {
                match parse_output(&out.output, out.exit_code) {
                    HelperOutcome::Edited { count } => {
                        return Ok(Edited {
                            count,
                            via: Via::Native,
                        })
                    }
                    HelperOutcome::Failed {
                        kind: Token::Known(ErrorKind::WriteFailed),
                        detail,
                        ..
                    } => helper_said = Some(detail.unwrap_or_default()),
                    HelperOutcome::HelperUnavailable => self.protocol = None,
                    HelperOutcome::Failed {
                        kind,
                        detail,
                        count,
                        hints,
                    } => {
                        return Err(EditError::Failed {
                            kind,
                            detail,
                            count,
                            via: Via::Native,
                            indent: indent_words(&req.old, hints.as_ref()),
                            hints: hints.map(Box::new),
                            at: None,
                        })
                    }
                    HelperOutcome::Unexpected { exit_code, excerpt } => {
                        return Err(EditError::Unexpected { exit_code, excerpt })
                    }
                }
            }
            // An exec that failed outright also falls through: the transfer
            // path may still work, and reports its own error if not.
        }
        transfer::keep_helper_detail(transfer_edit(&mut self.sandbox, req), helper_said)
    }

    /// Makes sure a working helper is at the helper path, installing
    /// `binary` there if not. Returns true when it installed.
    ///
    /// Through a shell the exec calls are: one probe (the version check and
    /// the tool probes together), then one per command of
    /// [`install::install_commands`], the last of which also verifies; plus
    /// one cleanup after a failure.
    pub fn ensure_helper(&mut self, binary: &[u8]) -> Result<bool, EditError> {
        install::run(&mut self.sandbox, &self.helper, binary, self.limit)
    }
}
