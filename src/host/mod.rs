//! The host library: everything a Rust host needs to edit files in a
//! sandbox through as-edit, with the transfer path as a fallback that uses
//! the very same replacement core.
//!
//! - [`command`]: request → shell command / argv, within the argv bound;
//! - [`parse`]: backend output → [`HelperOutcome`];
//! - [`install`]: installing the helper over exec alone ([`install::run`] and its commands);
//! - [`Editor`]: build, exec, parse, fall back, and say which path did the work;
//! - [`LocalShell`] (`local.rs`): a [`Sandbox`] on this machine (tests and the example);
//! - `agent_sandbox` (feature `agent-sandbox`): the Kubernetes agent-sandbox runtime;
//! - `docker` (feature `docker`): a container through the docker (or podman) CLI.

pub mod command;
pub mod install;
pub mod parse;

mod local;

#[cfg(feature = "agent-sandbox")]
pub mod agent_sandbox;
#[cfg(feature = "docker")]
pub mod docker;

use std::io;
use std::path::Path;

pub use command::{EditRequest, TooLarge, DEFAULT_COMMAND_LIMIT};
pub use local::LocalShell;
pub use parse::{parse_output, HelperOutcome, Token};

use crate::engine::{self, Edit};
use crate::protocol::{display_path, refusal_failure, ErrorKind};

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
    /// Which path made them.
    pub via: Via,
}

/// Why [`Editor::edit`] (or [`transfer_edit`], or an install) did not edit.
#[derive(Debug)]
pub enum EditError {
    /// The helper, or the transfer path, answered with a protocol error
    /// token (a [`crate::protocol::Failure`] on the wire): the file is untouched.
    Failed {
        /// The `error` token.
        kind: Token,
        /// The result line's `detail`, if any.
        detail: Option<String>,
        /// The result line's `count` (`multiple_occurrences`).
        count: Option<u64>,
        /// Which path answered.
        via: Via,
    },
    /// The helper ran but printed no result line.
    Unexpected {
        /// The exit code, if the backend reports one.
        exit_code: Option<i32>,
        /// The start of the output, for the error message.
        excerpt: String,
    },
    /// The backend failed (exec, download or upload).
    Backend(io::Error),
    /// Installing the helper failed.
    Install(String),
}

impl EditError {
    /// The protocol error token, if the edit failed with one.
    pub fn token(&self) -> Option<&str> {
        match self {
            EditError::Failed { kind, .. } => Some(kind.as_str()),
            _ => None,
        }
    }
}

impl std::fmt::Display for EditError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EditError::Failed {
                kind,
                detail,
                count,
                ..
            } => {
                write!(f, "{}", kind.as_str().replace('_', " "))?;
                if let Some(c) = count {
                    write!(f, " ({c})")?;
                }
                if let Some(d) = detail {
                    write!(f, ": {d}")?;
                }
                Ok(())
            }
            EditError::Unexpected { exit_code, excerpt } => {
                write!(
                    f,
                    "unexpected helper output (exit {exit_code:?}): {excerpt}"
                )
            }
            EditError::Backend(e) => write!(f, "backend error: {e}"),
            EditError::Install(m) => write!(f, "installing the helper failed: {m}"),
        }
    }
}

impl std::error::Error for EditError {}

/// Builds, executes, parses, and falls back.
pub struct Editor<S> {
    /// Where the commands run (public so a caller can reach its own state).
    pub sandbox: S,
    helper: String,
    limit: usize,
}

impl<S: Sandbox> Editor<S> {
    /// `helper` is the helper's path inside the sandbox.
    pub fn new(sandbox: S, helper: impl Into<String>) -> Self {
        Editor {
            sandbox,
            helper: helper.into(),
            limit: DEFAULT_COMMAND_LIMIT,
        }
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
    /// backend has no stdin. Other failures are final.
    pub fn edit(&mut self, req: &EditRequest) -> Result<Edited, EditError> {
        let attempt = match command::shell_command(&self.helper, req, self.limit) {
            Ok(cmd) => Some((cmd, None)),
            Err(_) if self.sandbox.supports_stdin() => {
                command::stdin_command(&self.helper, req).map(|(c, body)| (c, Some(body)))
            }
            Err(_) => None,
        };
        if let Some((cmd, stdin)) = attempt {
            let out = self.sandbox.exec(&cmd, stdin.as_deref());
            // NotConnected: the sandbox itself is unreachable (no such
            // container, say): the transfer path cannot work either.
            if let Err(e) = &out {
                if e.kind() == io::ErrorKind::NotConnected {
                    return Err(EditError::Backend(out.unwrap_err()));
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
                        ..
                    }
                    | HelperOutcome::HelperUnavailable => {}
                    HelperOutcome::Failed {
                        kind,
                        detail,
                        count,
                    } => {
                        return Err(EditError::Failed {
                            kind,
                            detail,
                            count,
                            via: Via::Native,
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
        transfer_edit(&mut self.sandbox, req)
    }

    /// Makes sure a working helper is at the helper path, installing
    /// `binary` there if not. Returns true when it installed.
    ///
    /// Through a shell the exec calls are: one probe (the version check and
    /// the tool probes together), then one per command of
    /// [`install::install_commands`], the last of which also verifies; plus
    /// one cleanup after a failure. See [`install::run`].
    pub fn ensure_helper(&mut self, binary: &[u8]) -> Result<bool, EditError> {
        install::run(&mut self.sandbox, &self.helper, binary, self.limit)
    }
}

/// The transfer path: download, the same core as the helper, upload.
/// Writes through whatever the backend's upload does with symlinks.
pub fn transfer_edit<S: Sandbox + ?Sized>(
    sandbox: &mut S,
    req: &EditRequest,
) -> Result<Edited, EditError> {
    let failed = |kind: ErrorKind, detail: Option<String>, count: Option<u64>| EditError::Failed {
        kind: Token::Known(kind),
        detail,
        count,
        via: Via::Transfer,
    };
    let edit = Edit::new(&req.old, &req.new, req.replace_all)
        .map_err(|m| failed(ErrorKind::InvalidArgument, Some(m.to_owned()), None))?;
    let bytes = match sandbox.download(&req.path) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotConnected => return Err(EditError::Backend(e)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(failed(
                ErrorKind::FileNotFound,
                Some(format!("{} does not exist", display_path(&req.path))),
                None,
            ))
        }
        Err(e) => {
            return Err(failed(
                ErrorKind::ReadFailed,
                Some(format!("downloading {}: {e}", display_path(&req.path))),
                None,
            ))
        }
    };
    let (out, summary) = engine::replace(&bytes, std::slice::from_ref(&edit)).map_err(|r| {
        let f = refusal_failure(r, 1, &display_path(&req.path));
        failed(f.kind, f.detail, f.count)
    })?;
    sandbox.upload(&req.path, &out).map_err(|e| {
        failed(
            ErrorKind::WriteFailed,
            Some(format!("uploading: {e}")),
            None,
        )
    })?;
    Ok(Edited {
        count: summary.count,
        via: Via::Transfer,
    })
}
