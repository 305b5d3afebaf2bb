//! The host library: everything a Rust host needs to edit files in a
//! sandbox through as-edit, with the transfer path as a fallback that uses
//! the very same replacement core.
//!
//! - [`command`]: request → shell command / argv, within the argv bound;
//! - [`parse`]: backend output → [`HelperOutcome`];
//! - [`install`]: the commands that install the helper over exec alone;
//! - [`Editor`]: build, exec, parse, fall back, and say which path did the work;
//! - [`LocalShell`]: a [`Sandbox`] on this machine (tests and the example);
//! - `agent_sandbox` (feature `agent-sandbox`): the Kubernetes agent-sandbox runtime;
//! - `docker` (feature `docker`): a container through the docker (or podman) CLI.

pub mod command;
pub mod install;
mod local;
pub mod parse;
mod transfer;

#[cfg(feature = "agent-sandbox")]
pub mod agent_sandbox;
#[cfg(feature = "docker")]
pub mod docker;

use std::io;
use std::path::Path;

pub use command::{EditRequest, TooLarge, DEFAULT_COMMAND_LIMIT};
pub use local::LocalShell;
pub use parse::{parse_output, HelperOutcome, RefusalHints, Token};

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
    /// Which path did the work.
    pub via: Via,
}

/// Why an edit through the [`Editor`] did not happen.
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
        /// What `--hints` found (the helper's, or the transfer path's from
        /// the same code): candidates on `string_not_found`, occurrence
        /// lines on `multiple_occurrences`. None from a helper older than
        /// protocol 2, and for other tokens. Boxed: errors stay small.
        hints: Option<Box<RefusalHints>>,
        /// How OLD's indentation differs from the best `indentation` hint's
        /// text, in words (`4 spaces more in the file`), for `Display`.
        indent: Option<String>,
    },
    /// The helper ran but printed no result line.
    Unexpected {
        /// The exit code, if the backend reports one.
        exit_code: Option<i32>,
        /// The first 200 characters of the trimmed output.
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
                hints,
                indent,
                ..
            } => {
                if let Some(h) = hints {
                    if render_hints(f, kind, *count, h, indent.as_deref())? {
                        if let Some(d) = detail {
                            write!(f, "\n{d}")?;
                        }
                        return Ok(());
                    }
                }
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

/// `lines 40-44`, or `line 40`.
fn span(h: &crate::hints::Hint) -> String {
    if h.end_line > h.line {
        format!("lines {}-{}", h.line, h.end_line)
    } else {
        format!("line {}", h.line)
    }
}

/// `lines 40-44 differ`, or `line 40 differs`.
fn span_differs(h: &crate::hints::Hint) -> String {
    let verb = if h.end_line > h.line {
        "differ"
    } else {
        "differs"
    };
    format!("{} {verb}", span(h))
}

/// Words for a model: what to send next. False when there is nothing to say
/// beyond the plain refusal (no hints found), so the caller writes that.
fn render_hints(
    f: &mut std::fmt::Formatter<'_>,
    kind: &Token,
    count: Option<u64>,
    h: &RefusalHints,
    indent: Option<&str>,
) -> Result<bool, std::fmt::Error> {
    use crate::hints::Kind;
    match kind {
        Token::Known(ErrorKind::MultipleOccurrences) if !h.lines.is_empty() => {
            const SHOWN: usize = 20;
            let n = count.unwrap_or(h.lines.len() as u64);
            let list: Vec<String> = h.lines.iter().take(SHOWN).map(u64::to_string).collect();
            let more = if n as usize > list.len() {
                format!(" (the first {} of {n})", list.len())
            } else {
                String::new()
            };
            let shared = h.lines.windows(2).any(|w| w[0] == w[1]);
            write!(
                f,
                "{n} occurrences, starting on lines {}{more}; pass at_line to choose one{}",
                list.join(", "),
                if shared {
                    " (where a line holds several, extend OLD instead)"
                } else {
                    ""
                }
            )?;
            Ok(true)
        }
        Token::Known(ErrorKind::StringNotFound) if !h.hints.is_empty() => {
            let best = &h.hints[0];
            let at = span(best);
            let differ = span_differs(best);
            let why = match best.kind {
                Kind::AlreadyApplied => {
                    format!("the edit appears to be applied already ({at})")
                }
                Kind::TrailingWhitespace => {
                    format!("{differ} only in trailing whitespace")
                }
                Kind::Indentation => match indent {
                    Some(i) => format!("{differ} only in indentation ({i})"),
                    None => format!("{differ} only in indentation"),
                },
                Kind::Tabs => format!("{differ} only in tabs versus spaces"),
                Kind::Whitespace => format!("{differ} only in whitespace"),
                Kind::UnicodePunctuation => format!(
                    "{differ} only in Unicode punctuation (curly quotes, dashes, special spaces)"
                ),
                Kind::Escapes => format!(
                    "OLD holds literal escapes (\\n, \\t, \\\", \\\\); unescaped, it is on {at}"
                ),
                Kind::Similar => format!(
                    "the most similar text is on {at} (similarity {})",
                    best.score
                ),
            };
            write!(f, "string not found; {why}")?;
            if best.kind != Kind::AlreadyApplied {
                let text = best.text.strip_suffix('\n').unwrap_or(&best.text);
                let cut = if best.text_truncated { "\n[…]" } else { "" };
                write!(f, ". The file has:\n{text}{cut}")?;
            }
            let others: Vec<String> = h.hints[1..]
                .iter()
                .map(|o| format!("{} ({})", span(o), o.kind.token()))
                .collect();
            if !others.is_empty() {
                write!(f, "\nother candidates: {}", others.join(", "))?;
            }
            if h.truncated {
                write!(f, "\n(only part of the file was searched)")?;
            }
            Ok(true)
        }
        _ => Ok(false),
    }
}

/// How OLD's leading whitespace differs from the file's, in words, for the
/// best hint when it is `indentation`: `4 spaces more in the file`.
fn indent_words(old: &str, h: Option<&RefusalHints>) -> Option<String> {
    let best = h?.hints.first()?;
    if best.kind != crate::hints::Kind::Indentation {
        return None;
    }
    let lead = |l: &str| l.len() - l.trim_start_matches([' ', '\t']).len();
    // The first line of OLD may start after the indentation: prefer a later
    // non-blank line.
    let pairs: Vec<(&str, &str)> = old
        .split('\n')
        .zip(best.text.split('\n'))
        .filter(|(o, t)| !o.trim().is_empty() && !t.trim().is_empty())
        .collect();
    let (o, t) = pairs.get(1).or(pairs.first())?;
    let (lo, lt) = (&o[..lead(o)], &t[..lead(t)]);
    let (diff, more) = match (lt.strip_prefix(lo), lo.strip_prefix(lt)) {
        (Some(d), _) if !d.is_empty() => (d, "more"),
        (_, Some(d)) if !d.is_empty() => (d, "fewer"),
        _ => return None,
    };
    let what = match (
        diff.bytes().all(|b| b == b' '),
        diff.bytes().all(|b| b == b'\t'),
    ) {
        (true, _) => format!(
            "{} space{}",
            diff.len(),
            if diff.len() == 1 { "" } else { "s" }
        ),
        (_, true) => format!(
            "{} tab{}",
            diff.len(),
            if diff.len() == 1 { "" } else { "s" }
        ),
        _ => format!("{diff:?}"),
    };
    Some(format!("{what} {more} in the file"))
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

/// The transfer path: download, the same core as the helper, upload.
/// Writes through whatever the backend's upload does with symlinks. A
/// refusal carries the hints the helper's `--hints` would give, from the
/// same code over the downloaded text.
pub fn transfer_edit<S: Sandbox + ?Sized>(
    sandbox: &mut S,
    req: &EditRequest,
) -> Result<Edited, EditError> {
    let refused = |kind: ErrorKind, detail: Option<String>, count: Option<u64>| EditError::Failed {
        kind: Token::Known(kind),
        detail,
        count,
        via: Via::Transfer,
        hints: None,
        indent: None,
    };
    let mut edit = Edit::new(&req.old, &req.new, req.replace_all)
        .map_err(|m| refused(ErrorKind::InvalidArgument, Some(m.to_owned()), None))?;
    if let Some(line) = req.at_line {
        edit = edit
            .with_at_line(line)
            .map_err(|m| refused(ErrorKind::InvalidArgument, Some(m.to_owned()), None))?;
    }
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
    let (out, summary) = engine::replace(&bytes, std::slice::from_ref(&edit)).map_err(|r| {
        let keys = crate::hints::hint_keys_for_bytes(&bytes, &edit, &r);
        let f = refusal_failure(r, 1, &display_path(&req.path));
        let hints = keys.map(RefusalHints::from_keys);
        EditError::Failed {
            kind: Token::Known(f.kind),
            detail: f.detail,
            count: f.count,
            via: Via::Transfer,
            indent: indent_words(&req.old, hints.as_ref()),
            hints: hints.map(Box::new),
        }
    })?;
    transfer::upload_checked(sandbox, &req.path, &bytes, &out)?;
    Ok(Edited {
        count: summary.count,
        via: Via::Transfer,
    })
}
