//! [`EditError`]: why an edit, a transaction or a toolset op through the
//! [`Editor`](super::Editor) did not happen, and how it reads for a model.

use std::io;

use super::display::{self, render_hints};
use super::{RefusalHints, Token, TxnAt, Via};

/// Why an edit through the [`Editor`](super::Editor) did not happen.
#[derive(Debug)]
pub enum EditError {
    /// The helper, or the transfer path, answered with a protocol error
    /// token (a [`as_edit_wire::protocol::Failure`] on the wire): the file is untouched.
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
        /// A transaction or patch: which op (and chunk) was refused, and
        /// what the files were left as. None for a single edit.
        at: Option<Box<TxnAt>>,
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
    /// The op needs the helper (protocol 4) in the sandbox: no exact
    /// fallback exists for it (the `tools` module's table says why).
    HelperRequired {
        /// The op: `stat`, `list`, `glob`, `grep`, `directory move`, ….
        op: String,
        /// Why the transfer path cannot do it exactly.
        why: String,
    },
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
                at,
                ..
            } => {
                let mut detail = detail.as_deref();
                if let Some(at) = at {
                    if display::render_at(f, kind, hints.as_deref(), at)? {
                        return display::render_left(f, Some(at));
                    }
                    detail = detail.and_then(|d| display::unprefixed(d, at, kind, *count));
                }
                if let Some(h) = hints {
                    if render_hints(f, kind, *count, h, indent.as_deref())? {
                        if let Some(d) = detail {
                            write!(f, "\n{d}")?;
                        }
                        return display::render_left(f, at.as_deref());
                    }
                }
                write!(f, "{}", kind.as_str().replace('_', " "))?;
                if let Some(c) = count {
                    write!(f, " ({c})")?;
                }
                if let Some(d) = detail {
                    write!(f, ": {d}")?;
                }
                display::render_left(f, at.as_deref())
            }
            EditError::Unexpected { exit_code, excerpt } => {
                write!(
                    f,
                    "unexpected helper output (exit {exit_code:?}): {excerpt}"
                )
            }
            EditError::Backend(e) => write!(f, "backend error: {e}"),
            EditError::Install(m) => write!(f, "installing the helper failed: {m}"),
            EditError::HelperRequired { op, why } => write!(
                f,
                "{op} needs the as-edit helper (protocol 4) in the sandbox: {why}"
            ),
        }
    }
}

impl std::error::Error for EditError {}

/// The refusal of an op no exact fallback exists for.
pub(crate) fn helper_required(op: &str) -> EditError {
    let why = match op {
        "stat" => "POSIX has no stat(1), and ls -l gives no nanoseconds",
        "list" | "glob" => "POSIX find has no -printf: no exact type, size and mtime per name",
        "grep" => "grep -n's path:line: output is ambiguous for names holding ':' or a newline, and POSIX grep has neither ripgrep's dialect nor the binary-file rule",
        "recursive delete" => "rm -R has no POSIX option to stay on one file system, and a tree cannot be made to vanish at once",
        "directory move" => "the transfer path moves files by download and upload, and mv(1) moves a directory into an existing one",
        "a name that is not UTF-8" => "the transaction's transfer path keeps names as UTF-8 text, and would write another file",
        _ => "the transfer path has no exact way to do it",
    };
    EditError::HelperRequired {
        op: op.to_owned(),
        why: why.to_owned(),
    }
}
