//! The host library: everything a Rust host needs to edit files in a
//! sandbox through as-edit, with the transfer path as a fallback that uses
//! the very same replacement core.
//!
//! - [`command`]: request → shell command / argv, within the argv bound;
//! - [`parse`]: backend output → [`Outcome`];
//! - [`install`]: the commands that install the helper over exec alone;
//! - [`Editor`]: build, exec, parse, fall back, and say which path did the work;
//! - [`LocalShell`]: a [`Sandbox`] on this machine (tests and the example);
//! - `agent_sandbox` (feature `agent-sandbox`): the Kubernetes agent-sandbox runtime;
//! - `docker` (feature `docker`): a container through the docker (or podman) CLI.

pub mod command;
pub mod install;
pub mod parse;
mod transfer;

#[cfg(feature = "agent-sandbox")]
pub mod agent_sandbox;
#[cfg(feature = "docker")]
pub mod docker;

use std::io;
use std::path::Path;

pub use command::{EditRequest, TooLarge, DEFAULT_COMMAND_LIMIT};
pub use parse::{parse_output, Outcome, Token};

use crate::core::{self, Edit};
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

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Edited {
    pub count: u64,
    pub via: Via,
}

#[derive(Debug)]
pub enum EditError {
    /// The edit was refused (the file is untouched): a protocol token.
    Refused {
        kind: Token,
        detail: Option<String>,
        count: Option<u64>,
        via: Via,
    },
    /// The helper ran but printed no result line.
    Unexpected {
        exit_code: Option<i32>,
        excerpt: String,
    },
    /// The backend failed (exec, download or upload).
    Backend(io::Error),
    /// Installing the helper failed.
    Install(String),
}

impl EditError {
    /// The refusal's token, if this is a refusal.
    pub fn token(&self) -> Option<&str> {
        match self {
            EditError::Refused { kind, .. } => Some(kind.as_str()),
            _ => None,
        }
    }
}

impl std::fmt::Display for EditError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EditError::Refused {
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

    pub fn helper(&self) -> &str {
        &self.helper
    }

    /// Edits through the helper; falls back to the transfer path when the
    /// helper is unavailable or answers `write_failed` (target untouched by
    /// contract), or when the edit is too large for one command and the
    /// backend has no stdin. Other refusals are final.
    pub fn edit(&mut self, req: &EditRequest) -> Result<Edited, EditError> {
        let attempt = match command::shell_command(&self.helper, req, self.limit) {
            Ok(cmd) => Some((cmd, None)),
            Err(_) if self.sandbox.supports_stdin() => {
                command::stdin_command(&self.helper, req).map(|(c, body)| (c, Some(body)))
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
                    Outcome::Edited { count } => {
                        return Ok(Edited {
                            count,
                            via: Via::Native,
                        })
                    }
                    Outcome::Refused {
                        kind: Token::Known(ErrorKind::WriteFailed),
                        detail,
                        ..
                    } => helper_said = Some(detail.unwrap_or_default()),
                    Outcome::HelperUnavailable => {}
                    Outcome::Refused {
                        kind,
                        detail,
                        count,
                    } => {
                        return Err(EditError::Refused {
                            kind,
                            detail,
                            count,
                            via: Via::Native,
                        })
                    }
                    Outcome::Unexpected { exit_code, excerpt } => {
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
        let shell = self.sandbox.has_shell();
        let probe_cmd = if shell {
            install::probe_command(&self.helper)
        } else {
            install::version_command(&self.helper)
        };
        let probe = self.sandbox.exec(&probe_cmd, None);
        if matches!(&probe, Ok(o) if o.exit_code == Some(0) && install::is_helper_version(&o.output))
        {
            return Ok(false);
        }
        if shell {
            let tools = match &probe {
                Ok(o) => install::parse_probe(&o.output),
                Err(_) => install::Tools::default(),
            };
            let nonce = crate::fs::random_hex();
            let (_, cmds) =
                install::install_commands(binary, &self.helper, tools, self.limit, &nonce);
            let last = cmds.len() - 1;
            for (i, c) in cmds.iter().enumerate() {
                let o = self.sandbox.exec(c, None).map_err(EditError::Backend)?;
                let ok =
                    o.exit_code == Some(0) && (i < last || install::is_helper_version(&o.output));
                if !ok {
                    // After the last step's mv the temps are gone already;
                    // removing them again is harmless.
                    let _ = self
                        .sandbox
                        .exec(&install::cleanup_command(&self.helper, &nonce), None);
                    return Err(EditError::Install(format!(
                        "{} exited {:?}: {}",
                        if i < last {
                            "a step"
                        } else {
                            "the last step (finish and run --version)"
                        },
                        o.exit_code,
                        String::from_utf8_lossy(&o.output).trim()
                    )));
                }
            }
        } else {
            // No shell (argv exec): upload the bytes, then chmod through exec.
            self.sandbox
                .upload(Path::new(&self.helper), binary)
                .map_err(EditError::Backend)?;
            let chmod =
                command::join_quoted(&["chmod".into(), "755".into(), self.helper.clone().into()]);
            let o = self
                .sandbox
                .exec(&chmod, None)
                .map_err(EditError::Backend)?;
            if o.exit_code != Some(0) {
                return Err(EditError::Install(format!(
                    "chmod exited {:?}: {}",
                    o.exit_code,
                    String::from_utf8_lossy(&o.output).trim()
                )));
            }
            self.verify(&install::version_command(&self.helper))?;
        }
        Ok(true)
    }

    fn verify(&mut self, cmd: &[u8]) -> Result<(), EditError> {
        let o = self.sandbox.exec(cmd, None).map_err(EditError::Backend)?;
        if o.exit_code == Some(0) && install::is_helper_version(&o.output) {
            Ok(())
        } else {
            Err(EditError::Install(format!(
                "the installed helper does not run (exit {:?}): {}",
                o.exit_code,
                String::from_utf8_lossy(&o.output).trim()
            )))
        }
    }
}

/// The transfer path: download, the same core as the helper, upload.
/// Writes through whatever the backend's upload does with symlinks.
pub fn transfer_edit<S: Sandbox + ?Sized>(
    sandbox: &mut S,
    req: &EditRequest,
) -> Result<Edited, EditError> {
    let refused =
        |kind: ErrorKind, detail: Option<String>, count: Option<u64>| EditError::Refused {
            kind: Token::Known(kind),
            detail,
            count,
            via: Via::Transfer,
        };
    let edit = Edit::new(&req.old, &req.new, req.replace_all)
        .map_err(|m| refused(ErrorKind::InvalidArgument, Some(m.to_owned()), None))?;
    let _one_at_a_time = transfer::lock(&req.path);
    let bytes = match sandbox.download(&req.path) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotConnected => return Err(EditError::Backend(e)),
        Err(e) if e.kind() == io::ErrorKind::InvalidInput => {
            return Err(transfer::not_sendable(&e, Via::Transfer))
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(refused(
                ErrorKind::FileNotFound,
                Some(format!("{} does not exist", display_path(&req.path))),
                None,
            ))
        }
        Err(e) => {
            return Err(refused(
                ErrorKind::ReadFailed,
                Some(format!("downloading {}: {e}", display_path(&req.path))),
                None,
            ))
        }
    };
    let (out, summary) = core::replace(&bytes, std::slice::from_ref(&edit)).map_err(|r| {
        let f = refusal_failure(r, 1, &display_path(&req.path));
        refused(f.kind, f.detail, f.count)
    })?;
    transfer::upload_checked(sandbox, &req.path, &bytes, &out)?;
    Ok(Edited {
        count: summary.count,
        via: Via::Transfer,
    })
}

/// Runs commands with the local `sh -c`; files are plain reads and writes.
/// (Optionally inside `chroot ROOT`, for tests of minimal images.)
#[derive(Clone, Debug, Default)]
pub struct LocalShell {
    /// Run commands as `chroot ROOT /bin/sh -c CMD`; files map under ROOT.
    pub chroot: Option<std::path::PathBuf>,
}

impl LocalShell {
    pub fn new() -> Self {
        LocalShell::default()
    }

    fn host_path(&self, p: &Path) -> std::path::PathBuf {
        match &self.chroot {
            Some(root) => root.join(p.strip_prefix("/").unwrap_or(p)),
            None => p.to_path_buf(),
        }
    }
}

impl Sandbox for LocalShell {
    fn exec(&mut self, command: &[u8], stdin: Option<&[u8]>) -> io::Result<ExecOutput> {
        use std::io::Write;
        use std::os::unix::ffi::OsStrExt;
        use std::process::{Command, Stdio};
        let cmd = std::ffi::OsStr::from_bytes(command);
        let mut c = match &self.chroot {
            Some(root) => {
                let mut c = Command::new("chroot");
                c.arg(root).args(["/bin/sh", "-c"]).arg(cmd);
                c
            }
            None => {
                let mut c = Command::new("sh");
                c.arg("-c").arg(cmd);
                c
            }
        };
        c.stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
        let mut child = c.spawn()?;
        // Feed stdin from a thread while the output is drained, so neither
        // side can block the other on a full pipe.
        let writer = match (stdin, child.stdin.take()) {
            (Some(data), Some(mut pipe)) => {
                let data = data.to_vec();
                // A child that exits early closes the pipe: not our error.
                Some(std::thread::spawn(move || {
                    let _ = pipe.write_all(&data);
                }))
            }
            _ => None,
        };
        let out = child.wait_with_output()?;
        if let Some(w) = writer {
            let _ = w.join();
        }
        let mut merged = out.stdout;
        merged.extend_from_slice(&out.stderr);
        Ok(ExecOutput {
            exit_code: out.status.code(),
            output: merged,
        })
    }

    fn download(&mut self, path: &Path) -> io::Result<Vec<u8>> {
        std::fs::read(self.host_path(path))
    }

    fn upload(&mut self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        std::fs::write(self.host_path(path), bytes)
    }

    fn supports_stdin(&self) -> bool {
        true
    }
}
