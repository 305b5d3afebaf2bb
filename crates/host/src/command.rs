//! Request → command: POSIX single-quoted shell text, or an argv vector.
//!
//! Every argument is quoted, the helper path included. The same text serves
//! backends that run it with `sh -c` and those that `shlex.split` it and
//! exec without a shell: POSIX single quoting is exactly what shlex reverses.

use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::PathBuf;

use base64::Engine as _;

/// Linux caps one argv element at 128 KiB (`MAX_ARG_STRLEN`), and `sh -c CMD`
/// makes the whole command one element; 112 KiB leaves room for wrappers.
pub const DEFAULT_COMMAND_LIMIT: usize = 112 * 1024;

/// One edit of one file, with plain (not base64) strings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EditRequest {
    /// The file, as the sandbox sees it.
    pub path: PathBuf,
    /// The text to find (exactly once unless `replace_all`).
    pub old: String,
    /// The text that replaces it.
    pub new: String,
    /// Replace every occurrence.
    pub replace_all: bool,
    /// Replace only the occurrence that starts on this 1-based line
    /// (`--at-line`; the helper needs protocol 2). Conflicts with `replace_all`.
    pub at_line: Option<u64>,
}

impl EditRequest {
    /// A request from its four parts.
    pub fn new(
        path: impl Into<PathBuf>,
        old: impl Into<String>,
        new: impl Into<String>,
        replace_all: bool,
    ) -> Self {
        EditRequest {
            path: path.into(),
            old: old.into(),
            new: new.into(),
            replace_all,
            at_line: None,
        }
    }

    /// The same request restricted to the occurrence starting on `line`.
    pub fn at_line(mut self, line: u64) -> Self {
        self.at_line = Some(line);
        self
    }
}

/// The command would not fit one argv element: nothing was sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TooLarge {
    /// The command's length in bytes.
    pub size: usize,
    /// The bound it exceeded.
    pub limit: usize,
}

impl std::fmt::Display for TooLarge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the edit command is {} bytes, over the {} byte limit for one command; \
             split the edit into smaller edits (or send it on stdin with --stdin)",
            self.size, self.limit
        )
    }
}

impl std::error::Error for TooLarge {}

/// POSIX single-quote quoting: `'` becomes `'\''`; any other byte is literal.
pub fn sh_quote(arg: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(arg.len() + 2);
    out.push(b'\'');
    for &b in arg {
        if b == b'\'' {
            out.extend_from_slice(b"'\\''");
        } else {
            out.push(b);
        }
    }
    out.push(b'\'');
    out
}

/// Joins argv into one shell-quoted command line.
pub fn join_quoted(argv: &[OsString]) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, a) in argv.iter().enumerate() {
        if i > 0 {
            out.push(b' ');
        }
        out.extend_from_slice(&sh_quote(a.as_bytes()));
    }
    out
}

/// The kind of failure a tool's message names (strerror's words, as GNU
/// coreutils and busybox print them, last: `mkdir: … 'DIR': File exists`),
/// for the transfer path's directories: `Other` when it names none of
/// these. The words end the message: a path may hold them too.
pub(crate) fn said_kind(said: &[u8]) -> std::io::ErrorKind {
    use std::io::ErrorKind as K;
    let said = String::from_utf8_lossy(said);
    let last = said.trim_end().rsplit(": ").next().unwrap_or_default();
    match last {
        "File exists" => K::AlreadyExists,
        "No such file or directory" => K::NotFound,
        "Permission denied" => K::PermissionDenied,
        _ => K::Other,
    }
}

/// `realpath DIR`, quoted. No `--`: busybox's realpath takes it for a
/// path (and exits 1); a relative DIR gets `./`, so `-e` is no option.
pub(crate) fn realpath_command(dir: &std::path::Path) -> Vec<u8> {
    let arg = match dir.is_absolute() {
        true => dir.to_path_buf(),
        false => std::path::Path::new(".").join(dir),
    };
    join_quoted(&["realpath".into(), arg.into()])
}

/// `realpath DIR`'s answer: the one line it prints.
pub(crate) fn realpath_of(out: std::io::Result<super::ExecOutput>) -> std::io::Result<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    let out = out?;
    match (out.exit_code, out.output.strip_suffix(b"\n")) {
        // One absolute path: an empty or relative answer is no key.
        (Some(0), Some(p)) if p.starts_with(b"/") && !p.contains(&b'\n') => {
            Ok(PathBuf::from(std::ffi::OsStr::from_bytes(p)))
        }
        (Some(126 | 127), _) => Err(std::io::Error::new(
            std::io::ErrorKind::Unsupported,
            "the sandbox has no usable realpath",
        )),
        _ => Err(std::io::Error::new(
            said_kind(&out.output),
            format!("realpath: {}", String::from_utf8_lossy(&out.output).trim()),
        )),
    }
}

fn b64(s: &str) -> OsString {
    OsString::from(base64::engine::general_purpose::STANDARD.encode(s.as_bytes()))
}

/// `HELPER -- PATH OLD_B64 NEW_B64 true|false`, for backends that exec argv
/// (`--at-line L` before `--` when the request has one).
pub fn argv(helper: &str, req: &EditRequest) -> Vec<OsString> {
    argv_with(helper, req, false)
}

/// [`argv`], with `--hints` when `hints` (only for a helper of protocol 2
/// or later: an older one refuses the flag).
pub fn argv_with(helper: &str, req: &EditRequest, hints: bool) -> Vec<OsString> {
    let mut a = vec![OsString::from(helper)];
    if hints {
        a.push("--hints".into());
    }
    if let Some(l) = req.at_line {
        a.push("--at-line".into());
        a.push(l.to_string().into());
    }
    a.extend([
        OsString::from("--"),
        req.path.clone().into_os_string(),
        b64(&req.old),
        b64(&req.new),
        OsString::from(if req.replace_all { "true" } else { "false" }),
    ]);
    a
}

/// `'HELPER' -- 'PATH' 'OLD_B64' 'NEW_B64' 'true|false'` for `sh -c`,
/// bounded by `limit` bytes.
pub fn shell_command(helper: &str, req: &EditRequest, limit: usize) -> Result<Vec<u8>, TooLarge> {
    shell_command_with(helper, req, limit, false)
}

/// [`shell_command`], with `--hints` when `hints`.
pub fn shell_command_with(
    helper: &str,
    req: &EditRequest,
    limit: usize,
    hints: bool,
) -> Result<Vec<u8>, TooLarge> {
    let cmd = join_quoted(&argv_with(helper, req, hints));
    if cmd.len() > limit {
        return Err(TooLarge {
            size: cmd.len(),
            limit,
        });
    }
    Ok(cmd)
}

/// The `--stdin` form for edits of any size: a short command plus a JSON
/// body with plain strings (the path must be UTF-8 to travel in JSON).
pub fn stdin_command(helper: &str, req: &EditRequest) -> Option<(Vec<u8>, Vec<u8>)> {
    stdin_command_with(helper, req, false)
}

/// [`stdin_command`], with `--hints` when `hints`.
pub fn stdin_command_with(
    helper: &str,
    req: &EditRequest,
    hints: bool,
) -> Option<(Vec<u8>, Vec<u8>)> {
    let path = req.path.to_str()?;
    let mut edit =
        serde_json::json!({"old": req.old, "new": req.new, "replace_all": req.replace_all});
    if let Some(l) = req.at_line {
        edit["at_line"] = l.into();
    }
    let body = serde_json::json!({"path": path, "edits": [edit]});
    let mut argv = vec![OsString::from(helper)];
    if hints {
        argv.push("--hints".into());
    }
    argv.push("--stdin".into());
    let cmd = join_quoted(&argv);
    Some((
        cmd,
        serde_json::to_vec(&body).expect("JSON of strings serializes"),
    ))
}

/// `HELPER FLAGS… ON_STDIN` with `body` on stdin when `stdin`, else
/// `HELPER FLAGS… IN_ARGV BASE64(body)` if that fits `limit`: every
/// request that carries a body (`forms` = `(ON_STDIN, IN_ARGV)`).
pub(crate) fn body_command(
    helper: &str,
    flags: &[&str],
    forms: (&str, &str),
    body: &[u8],
    stdin: bool,
    limit: usize,
) -> Option<(Vec<u8>, Option<Vec<u8>>)> {
    let mut argv: Vec<OsString> = vec![helper.into()];
    argv.extend(flags.iter().map(OsString::from));
    if stdin {
        argv.push(forms.0.into());
        return Some((join_quoted(&argv), Some(body.to_vec())));
    }
    argv.push(forms.1.into());
    argv.push(
        base64::engine::general_purpose::STANDARD
            .encode(body)
            .into(),
    );
    let cmd = join_quoted(&argv);
    (cmd.len() <= limit).then_some((cmd, None))
}

/// Reverses [`join_quoted`] for the subset it produces (and plain words):
/// what a shlex-splitting backend does. Used by tests and by backends
/// without a shell.
pub fn split_quoted(cmd: &[u8]) -> Option<Vec<OsString>> {
    let mut out = Vec::new();
    let mut cur: Option<Vec<u8>> = None;
    let mut i = 0;
    while i < cmd.len() {
        match cmd[i] {
            b' ' | b'\t' | b'\n' => {
                if let Some(c) = cur.take() {
                    out.push(OsString::from_vec(c));
                }
            }
            b'\'' => {
                let end = cmd[i + 1..].iter().position(|&b| b == b'\'')? + i + 1;
                cur.get_or_insert_with(Vec::new)
                    .extend_from_slice(&cmd[i + 1..end]);
                i = end;
            }
            b'\\' if i + 1 < cmd.len() => {
                cur.get_or_insert_with(Vec::new).push(cmd[i + 1]);
                i += 1;
            }
            b => cur.get_or_insert_with(Vec::new).push(b),
        }
        i += 1;
    }
    if let Some(c) = cur {
        out.push(OsString::from_vec(c));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kind is the message's last words, not words a path holds: a
    /// directory named `File exists` whose parent is missing is NotFound
    /// (not AlreadyExists, for which the transfer would make no parent).
    #[test]
    fn a_tools_error_kind_is_its_last_words_not_its_paths() {
        use std::io::ErrorKind as K;
        let cases = [
            (
                "mkdir: cannot create directory '/w/a': File exists\n",
                K::AlreadyExists,
            ),
            (
                "mkdir: can't create directory '/w/n/x': No such file or directory",
                K::NotFound,
            ),
            (
                "mkdir: cannot create directory ‘/w/n/File exists’: No such file or directory\n",
                K::NotFound,
            ),
            (
                "mkdir: cannot create directory '/w/No such file or directory': File exists",
                K::AlreadyExists,
            ),
            (
                "rmdir: failed to remove '/w/Permission denied': Directory not empty\n",
                K::Other,
            ),
            (
                "chmod: changing permissions of '/w/f': Permission denied\n",
                K::PermissionDenied,
            ),
        ];
        for (said, kind) in cases {
            assert_eq!(said_kind(said.as_bytes()), kind, "{said}");
        }
    }

    #[test]
    fn quotes_every_argument() {
        let req = EditRequest::new("it's $(x)", "a", "", false);
        let cmd = shell_command("/opt/as edit", &req, DEFAULT_COMMAND_LIMIT).unwrap();
        assert_eq!(
            cmd,
            b"'/opt/as edit' '--' 'it'\\''s $(x)' 'YQ==' '' 'false'".to_vec()
        );
        assert_eq!(split_quoted(&cmd).unwrap(), argv("/opt/as edit", &req));
    }

    #[test]
    fn hints_and_at_line_flags() {
        let req = EditRequest::new("f", "a", "b", false).at_line(7);
        assert_eq!(
            shell_command_with("h", &req, DEFAULT_COMMAND_LIMIT, true).unwrap(),
            b"'h' '--hints' '--at-line' '7' '--' 'f' 'YQ==' 'Yg==' 'false'".to_vec()
        );
        let plain = EditRequest::new("f", "a", "b", false);
        assert_eq!(
            shell_command("h", &plain, DEFAULT_COMMAND_LIMIT).unwrap(),
            b"'h' '--' 'f' 'YQ==' 'Yg==' 'false'".to_vec()
        );
        let (cmd, body) = stdin_command_with("h", &req, true).unwrap();
        assert_eq!(cmd, b"'h' '--hints' '--stdin'".to_vec());
        assert_eq!(
            String::from_utf8(body).unwrap(),
            r#"{"edits":[{"at_line":7,"new":"b","old":"a","replace_all":false}],"path":"f"}"#
        );
        let (cmd, body) = stdin_command("h", &plain).unwrap();
        assert_eq!(cmd, b"'h' '--stdin'".to_vec());
        assert!(!String::from_utf8(body).unwrap().contains("at_line"));
    }

    #[test]
    fn bound_is_enforced_with_size_and_limit() {
        let req = EditRequest::new("f", "x".repeat(100_000), "y", false);
        let err = shell_command("h", &req, DEFAULT_COMMAND_LIMIT).unwrap_err();
        assert_eq!(err.limit, 112 * 1024);
        assert!(err.size > err.limit);
        assert!(err.to_string().contains("split the edit"));
    }
}
