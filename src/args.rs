//! The argument grammar (the python3 script's argv, plus opt-in options).
//!
//! ```text
//! as-edit [OPTIONS] [--] PATH OLD_B64 NEW_B64 [true|false]
//! as-edit [OPTIONS] -- PATH OLD1 NEW1 ALL1 [OLD2 NEW2 ALL2 ...]
//! as-edit [OPTIONS] --stdin            (request as JSON on standard input)
//! ```
//! Options are lexed by lexopt rather than clap: the binary is uploaded into
//! containers and size is a feature (clap, even without default features,
//! added 152 KiB to the static binary; lexopt 8 KiB), and every error must
//! become an `invalid_argument` result line, never a usage dump. The
//! positional triples, the help text and the `--stdin` request are ours.
#![doc = include_str!("args/args.md")]

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::time::Duration;

mod fast_json;
mod positional;

pub(crate) use crate::b64;
use crate::protocol::{ErrorKind, Failure};
use crate::request::{EditOptions, Eol, Request};
pub use fast_json::parse_fast;
pub use positional::decode_b64;
pub(crate) use positional::positional_request;
// The `--stdin` request is the wire's (crates/wire), under its old paths.
use as_edit_wire::stdin;
pub use stdin::{parse_single, parse_stdin_request};

/// The bound on a `--stdin` request when `--max-request-bytes` is not given.
pub const DEFAULT_MAX_REQUEST_BYTES: u64 = 64 << 20;

/// What the command line asks for.
#[derive(Debug, PartialEq, Eq)]
pub enum Invocation {
    /// `--help`: print [`HELP`].
    Help,
    /// `--version`: print [`version_line`].
    Version,
    /// An edit given entirely on the command line.
    Edit(Request),
    /// `--stdin`: the path and edits come as JSON on standard input, at
    /// most `max_request_bytes` of it.
    Stdin {
        /// The flags given on the command line.
        options: EditOptions,
        /// `--max-request-bytes`, or the default.
        max_request_bytes: u64,
    },
    /// `--request-b64`: the `--stdin` JSON, given in argv as base64 (for
    /// exec APIs without stdin).
    RequestB64 {
        /// The flags given on the command line.
        options: EditOptions,
        /// The decoded JSON.
        json: Vec<u8>,
    },
}

fn invalid(detail: impl Into<String>) -> Failure {
    Failure::new(ErrorKind::InvalidArgument, detail)
}

/// Parses argv (without the program name). `env_root` is `AS_EDIT_ROOT`.
///
/// lexopt splits `--name=value`, hands out values and ends options at `--`;
/// the grammar on top is ours: options may come between positionals, the
/// last of a repeated option wins, `-h`/`-V`/`--help`/`--version` answer as
/// soon as they are read, and a value is taken even if it starts with `-`.
/// `input` names the patch flag (`--patch`, `--patch-b64`) the dispatcher
/// took out of `args` (`dispatch::argv`), if any: like `--stdin`, it is the
/// whole request, and a conflict names it.
#[cfg_attr(as_edit_small, optimize(size))]
pub fn parse(
    args: &[OsString],
    env_root: Option<OsString>,
    input: Option<&str>,
) -> Result<Invocation, Failure> {
    let mut opts = EditOptions {
        root: env_root.filter(|r| !r.is_empty()).map(PathBuf::from),
        ..EditOptions::default()
    };
    let mut flag_all = false;
    let mut at_line: Option<u64> = None;
    let mut stdin = false;
    let mut request_b64: Option<Vec<u8>> = None;
    let mut max_request_bytes = DEFAULT_MAX_REQUEST_BYTES;
    let mut positionals: Vec<OsString> = Vec::new();
    let mut p = lexopt::Parser::from_args(args.iter().cloned());
    let mut options_ended = false;
    loop {
        if !options_ended {
            // Every step below consumes a whole argument, so lexopt is always
            // between arguments here and the next one can be inspected raw.
            if let Some(raw) = p.try_raw_args().as_ref().and_then(|r| r.peek()) {
                options_ended = raw == "--";
                refuse_raw_option(raw)?;
            }
        }
        let name = match p.next() {
            Ok(None) => break,
            Ok(Some(lexopt::Arg::Value(v))) => {
                positionals.push(v);
                continue;
            }
            Ok(Some(lexopt::Arg::Short('h'))) => return Ok(Invocation::Help),
            Ok(Some(lexopt::Arg::Short('V'))) => return Ok(Invocation::Version),
            // refuse_raw_option let only `-h` and `-V` through.
            Ok(Some(lexopt::Arg::Short(c))) => format!("-{c}"),
            Ok(Some(lexopt::Arg::Long(l))) => format!("--{l}"),
            Err(e) => return Err(invalid(e.to_string())),
        };
        let name = name.as_str();
        if is_flag(name) {
            // A flag takes no value: `--replace-all=false` must not mean "on".
            if let Some(v) = p.optional_value() {
                let v = v.to_string_lossy();
                return Err(invalid(format!("{name} takes no value, got {v:?}")));
            }
        }
        // The value of an option: the rest after `=`, else the next argument.
        let mut value = |what: &str| -> Result<String, Failure> {
            p.value()
                .ok()
                .and_then(|v| v.into_string().ok())
                .ok_or_else(|| invalid(format!("{name} needs {what}")))
        };
        match name {
            "--help" => return Ok(Invocation::Help),
            "--version" => return Ok(Invocation::Version),
            "--replace-all" => flag_all = true,
            "--dry-run" => opts.dry_run = true,
            "--report" => opts.report = true,
            "--diff" => opts.diff = true,
            "--fsync" => opts.fsync = true,
            "--hints" => opts.hints = true,
            "--stdin" => stdin = true,
            "--at-line" => {
                let v = value("LINE")?;
                let n = decimal(&v).then(|| v.parse::<u64>().ok()).flatten();
                at_line = Some(n.filter(|l| *l >= 1).ok_or_else(|| {
                    invalid(format!("--at-line takes a line number from 1, got {v:?}"))
                })?);
            }
            "--lock-timeout" => {
                let v = value("SECONDS")?;
                opts.lock_timeout = seconds(&v).ok_or_else(|| {
                    invalid(format!(
                        "--lock-timeout takes seconds from 0 to 86400, got {v:?}"
                    ))
                })?;
            }
            "--root" => {
                // Any bytes: a directory name need not be UTF-8.
                let v = p.value().map_err(|_| invalid("--root needs DIR"))?;
                if v.is_empty() {
                    return Err(invalid("--root is empty"));
                }
                opts.root = Some(PathBuf::from(v));
            }
            "--request-b64" => {
                let v = p.value().map_err(|_| invalid("--request-b64 needs B64"))?;
                let json = b64::decode(v.as_bytes())
                    .map_err(|e| invalid(format!("--request-b64 is not valid base64 ({e})")))?;
                request_b64 = Some(json);
            }
            "--expect-sha256" => {
                let v = value("HEX")?;
                opts.expect_sha256 = Some(
                    crate::hex::decode_sha256(&v)
                        .ok_or_else(|| invalid("--expect-sha256 takes 64 lowercase hex digits"))?,
                );
            }
            "--eol" => {
                opts.eol = match value("lf|preserve")?.as_str() {
                    "lf" => Eol::Lf,
                    "preserve" => Eol::Preserve,
                    other => {
                        return Err(invalid(format!(
                            "--eol takes lf or preserve, got {other:?}"
                        )))
                    }
                }
            }
            "--max-request-bytes" => {
                let v = value("N")?;
                // Past u64::MAX is no bound but memory, like u64::MAX itself.
                let n = match v.parse::<u64>() {
                    _ if !decimal(&v) => None,
                    Err(e) if *e.kind() == std::num::IntErrorKind::PosOverflow => Some(u64::MAX),
                    r => r.ok(),
                };
                max_request_bytes = n.filter(|n| *n > 0).ok_or_else(|| {
                    invalid(format!(
                        "--max-request-bytes takes a positive integer, got {v:?}"
                    ))
                })?;
            }
            _ => return Err(unknown_option(name)),
        }
    }
    if opts.diff && !opts.report {
        return Err(invalid("--diff needs --report"));
    }
    // The request comes from one place; a conflict names what was given.
    let b64 = request_b64.is_some().then_some("--request-b64");
    let sources: Vec<&str> = [input, b64, stdin.then_some("--stdin")]
        .into_iter()
        .flatten()
        .collect();
    if let [a, b, ..] = sources[..] {
        return Err(invalid(format!("give one of {a} and {b}")));
    }
    if let Some(source) = sources.first() {
        let whole = match *source {
            "--stdin" => "takes the request from standard input",
            "--patch" => "takes the patch from standard input",
            "--patch-b64" => "carries the whole patch",
            _ => "carries the whole request",
        };
        if !positionals.is_empty() || flag_all {
            let what = match positionals.is_empty() {
                true => "--replace-all",
                false => "PATH or edits",
            };
            return Err(invalid(format!("{source} {whole}; give no {what}")));
        }
        if at_line.is_some() {
            return Err(invalid(match input {
                None => {
                    format!("--at-line is per edit; with {source} give \"at_line\" in the edit")
                }
                Some(_) => format!("{source} {whole}; give no --at-line"),
            }));
        }
    }
    if let Some(json) = request_b64 {
        return Ok(Invocation::RequestB64 {
            options: opts,
            json,
        });
    }
    if stdin || input.is_some() {
        return Ok(Invocation::Stdin {
            options: opts,
            max_request_bytes,
        });
    }
    let positionals: Vec<&OsStr> = positionals.iter().map(OsString::as_os_str).collect();
    let request = positional_request(&positionals, flag_all, at_line, opts)?;
    Ok(Invocation::Edit(request))
}

/// What lexopt would read leniently and the grammar refuses whole: an option
/// that is not UTF-8 (lexopt reads it lossily), and any single-dash argument
/// but `-h` and `-V` (lexopt would split `-hV` into `-h` `-V`).
#[cfg_attr(as_edit_small, optimize(size))]
fn refuse_raw_option(raw: &OsStr) -> Result<(), Failure> {
    let b = raw.as_bytes();
    if !b.starts_with(b"-") || b == b"-" || b == b"--" {
        return Ok(());
    }
    let text = raw.to_str().ok_or_else(|| {
        invalid("unknown option (not UTF-8); put `--` before a PATH that starts with '-'")
    })?;
    if text.starts_with("--") || text == "-h" || text == "-V" {
        return Ok(());
    }
    Err(unknown_option(text))
}

fn unknown_option(name: &str) -> Failure {
    invalid(format!(
        "unknown option {name:?}; put `--` before a PATH that starts with '-'"
    ))
}

/// The long options that take no value.
#[cfg_attr(as_edit_small, optimize(size))]
fn is_flag(name: &str) -> bool {
    matches!(
        name,
        "--help"
            | "--version"
            | "--replace-all"
            | "--dry-run"
            | "--report"
            | "--diff"
            | "--fsync"
            | "--hints"
            | "--stdin"
    )
}

/// The `--help` text.
pub const HELP: &str = "\
as-edit: edit one file atomically (exact-once string replacement)

Usage:
  as-edit [OPTIONS] [--] PATH OLD_B64 NEW_B64 [true|false]
  as-edit [OPTIONS] -- PATH OLD1 NEW1 ALL1 [OLD2 NEW2 ALL2 ...]
  as-edit [OPTIONS] --stdin

OLD and NEW are standard base64 of UTF-8 text (NEW may be empty: delete).
The file must be UTF-8; CRLF and lone CR become LF in the file, OLD and NEW.
OLD must occur exactly once, or at least once with replace-all.
Prints one line, __RESULT__{json}: {\"count\":N} or {\"error\":TOKEN,...}.
Exit: 0 edited, 1 not edited, 2 invalid invocation.

Options:
  --replace-all            replace every occurrence (same as a final `true`)
  --lock-timeout SECONDS   wait at most this long for a concurrent edit [10]
  --root DIR               refuse targets outside DIR (env AS_EDIT_ROOT)
  --expect-sha256 HEX      refuse with `conflict` unless the file has this SHA-256
  --dry-run                do everything but write
  --report                 add path, size, sha256, lines (and edits) to the result
  --diff                   with --report: add a unified diff (max 64 KiB)
  --hints                  on a not-found or ambiguous OLD, say where to look
  --at-line LINE           replace the occurrence of OLD that starts on LINE
  --stdin                  read {\"path\",\"edits\":[{\"old\",\"new\",\"replace_all\",
                           \"at_line\"}],\"expect_sha256\"} as JSON from standard input
                           or {\"files\":[OP,...]}: several files, all or nothing
                           or {\"op\":\"stat\"|\"list\"|\"read\",...}: the toolset
  --request-b64 B64        the --stdin request as base64, in argv
  --max-request-bytes N    bound for --stdin [67108864]
  --eol lf|preserve        line endings written: LF, or the file's own [lf]
  --fsync                  make the edit durable before reporting success
  -h, --help               this text
  -V, --version            version, protocol and target
";

/// One or more ASCII digits and nothing else: the shape of every number
/// option (`u64`'s parser would also take a leading `+`).
pub(crate) fn decimal(v: &str) -> bool {
    !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit())
}

/// `--lock-timeout`'s value: digits with at most one `.` (no sign, exponent,
/// `inf` or `nan`), at most 86400 seconds; digits past nanoseconds are
/// dropped. Parsed by hand: f64's parser and its tables cost the static
/// binary 13 KiB.
#[cfg_attr(as_edit_small, optimize(size))]
pub(crate) fn seconds(v: &str) -> Option<Duration> {
    let (whole, frac) = v.split_once('.').unwrap_or((v, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.len() + frac.len() == 0 || !digits(whole) || !digits(frac) {
        return None;
    }
    let secs = whole.bytes().try_fold(0u64, |n, b| {
        Some(n * 10 + u64::from(b - b'0')).filter(|n| *n <= 86_400)
    })?;
    let nanos = (0..9).fold(0u32, |n, i| {
        n * 10 + frac.as_bytes().get(i).map_or(0, |b| u32::from(b - b'0'))
    });
    (secs < 86_400 || nanos == 0).then(|| Duration::new(secs, nanos))
}

/// `as-edit X.Y.Z (protocol 1; <target triple>)`.
#[cfg_attr(as_edit_small, optimize(size))]
pub fn version_line() -> String {
    let env = if cfg!(target_env = "musl") {
        "musl"
    } else {
        "gnu"
    };
    format!(
        "as-edit {} (protocol {}; {}-unknown-linux-{})\n",
        env!("CARGO_PKG_VERSION"),
        crate::protocol::PROTOCOL_VERSION,
        std::env::consts::ARCH,
        env
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lock_timeout_seconds_are_plain_decimals_up_to_a_day() {
        let ok = |v: &str, s: u64, n: u32| assert_eq!(seconds(v), Some(Duration::new(s, n)), "{v}");
        ok("0", 0, 0);
        ok("1.5", 1, 500_000_000);
        ok(".25", 0, 250_000_000);
        ok("2.", 2, 0);
        ok("0.0000000019", 0, 1);
        ok("86400", 86_400, 0);
        ok("86400.000", 86_400, 0);
        ok("000000000000000000000001", 1, 0);
        for bad in [
            "",
            ".",
            "-1",
            "+1",
            "1e3",
            "inf",
            "nan",
            "1.2.3",
            " 1",
            "1 ",
            "86400.5",
            "86401",
            "99999999999999999999999",
        ] {
            assert_eq!(seconds(bad), None, "{bad:?}");
        }
    }

    fn args(v: &[&[u8]]) -> Vec<OsString> {
        use std::os::unix::ffi::OsStringExt;
        v.iter().map(|a| OsString::from_vec(a.to_vec())).collect()
    }

    fn detail(v: &[&[u8]]) -> String {
        let f = parse(&args(v), None, None).expect_err("refused");
        assert_eq!(f.kind, ErrorKind::InvalidArgument);
        f.detail.unwrap()
    }

    fn edit(v: &[&[u8]]) -> Request {
        match parse(&args(v), None, None) {
            Ok(Invocation::Edit(r)) => r,
            other => panic!("{other:?}"),
        }
    }

    /// Number options take digits only (no sign, no
    /// exponent, no "inf"), and a --stdin path with a NUL is refused.
    #[test]
    fn numbers_are_plain_digits_and_a_stdin_path_has_no_nul() {
        for v in ["+5", "-5", " 5", "5 ", "0x10", "1e3", ""] {
            let a = format!("--max-request-bytes={v}");
            assert_eq!(
                detail(&[a.as_bytes(), b"--stdin"]),
                format!("--max-request-bytes takes a positive integer, got {v:?}")
            );
            let a = format!("--at-line={v}");
            assert_eq!(
                detail(&[a.as_bytes(), b"f", b"YQ==", b"Yg=="]),
                format!("--at-line takes a line number from 1, got {v:?}")
            );
        }
        for v in ["+5", "-0", "1e1", "inf", "nan", ".", "1.2.3", "5s", ""] {
            let a = format!("--lock-timeout={v}");
            assert_eq!(
                detail(&[a.as_bytes(), b"f", b"YQ==", b"Yg=="]),
                format!("--lock-timeout takes seconds from 0 to 86400, got {v:?}")
            );
        }
        for v in ["5", "0.5", "5.", ".5", "86400"] {
            let a = format!("--lock-timeout={v}");
            edit(&[a.as_bytes(), b"f", b"YQ==", b"Yg=="]);
        }
        edit(&[b"--at-line=007", b"f", b"YQ==", b"Yg=="]);
        let json = br#"{"path":"f\u0000x","edits":[{"old":"a","new":"b"}]}"#;
        let f = parse_stdin_request(json, EditOptions::default()).unwrap_err();
        assert_eq!(f.kind, ErrorKind::InvalidArgument);
        assert_eq!(
            f.detail.as_deref(),
            Some("stdin request: path contains a NUL character")
        );
    }

    // lexopt would split a short cluster or read `-h=x` as `-h`; the grammar
    // refuses the whole argument, as the hand-written parser did.
    #[test]
    fn short_options_are_exactly_h_and_v() {
        assert_eq!(parse(&args(&[b"-h"]), None, None), Ok(Invocation::Help));
        assert_eq!(parse(&args(&[b"-V"]), None, None), Ok(Invocation::Version));
        for a in [&b"-hV"[..], b"-h=x", b"-x", b"-1", b"-="] {
            let name = std::str::from_utf8(a).unwrap();
            assert_eq!(
                detail(&[a]),
                format!("unknown option {name:?}; put `--` before a PATH that starts with '-'")
            );
        }
    }

    // lexopt reads a non-UTF-8 option lossily; the grammar refuses it.
    #[test]
    fn non_utf8_options_are_refused_before_and_kept_after_dashdash() {
        let not_utf8 = "unknown option (not UTF-8); put `--` before a PATH that starts with '-'";
        assert_eq!(detail(&[b"-\xff"]), not_utf8);
        assert_eq!(detail(&[b"--root=\xff", b"f", b"YQ==", b"Yg=="]), not_utf8);
        let r = edit(&[b"--", b"-\xff", b"YQ==", b"Yg=="]);
        assert_eq!(r.path.as_os_str().as_bytes(), b"-\xff");
        // A separate value may be any bytes.
        let r = edit(&[b"--root", b"\xff", b"f", b"YQ==", b"Yg=="]);
        assert_eq!(r.options.root.unwrap().as_os_str().as_bytes(), b"\xff");
    }

    #[test]
    fn long_option_names_are_what_precedes_the_first_equals() {
        let unknown =
            |n: &str| format!("unknown option {n:?}; put `--` before a PATH that starts with '-'");
        assert_eq!(detail(&[b"--bogus=1"]), unknown("--bogus"));
        assert_eq!(detail(&[b"--=x"]), unknown("--"));
        assert_eq!(detail(&[b"---x"]), unknown("---x"));
        assert_eq!(
            detail(&[b"--eol=x=y"]),
            "--eol takes lf or preserve, got \"x=y\""
        );
    }

    // A value is the next argument whatever it looks like, `--` included.
    #[test]
    fn values_are_taken_even_when_they_look_like_options() {
        let r = edit(&[b"--root", b"--", b"f", b"YQ==", b"Yg=="]);
        assert_eq!(r.options.root, Some(PathBuf::from("--")));
        assert_eq!(r.path, PathBuf::from("f"));
        assert_eq!(
            detail(&[b"--lock-timeout", b"-1"]),
            "--lock-timeout takes seconds from 0 to 86400, got \"-1\""
        );
        assert_eq!(
            detail(&[b"--lock-timeout", b"\xff"]),
            "--lock-timeout needs SECONDS"
        );
        assert_eq!(detail(&[b"--eol"]), "--eol needs lf|preserve");
        assert_eq!(detail(&[b"--root"]), "--root needs DIR");
        assert_eq!(detail(&[b"--root="]), "--root is empty");
    }

    #[test]
    fn options_may_follow_positionals_and_the_last_one_wins() {
        let r = edit(&[
            b"f",
            b"--eol",
            b"preserve",
            b"YQ==",
            b"--eol=lf",
            b"Yg==",
            b"--report",
        ]);
        assert_eq!(r.options.eol, Eol::Lf);
        assert!(r.options.report);
        assert_eq!(r.edits.len(), 1);
    }

    // Help and version answer when read: an error before them still wins.
    #[test]
    fn help_answers_when_read() {
        assert_eq!(
            parse(&args(&[b"--help", b"--bogus"]), None, None),
            Ok(Invocation::Help)
        );
        assert_eq!(
            parse(&args(&[b"-V", b"--eol"]), None, None),
            Ok(Invocation::Version)
        );
        assert!(detail(&[b"--bogus", b"--help"]).starts_with("unknown option \"--bogus\""));
        // After `--` it is a PATH.
        assert_eq!(
            edit(&[b"--", b"--help", b"YQ==", b"Yg=="]).path,
            PathBuf::from("--help")
        );
    }

    #[test]
    fn hints_and_at_line() {
        let r = edit(&[b"--hints", b"--at-line=12", b"f", b"YQ==", b"Yg=="]);
        assert!(r.options.hints);
        assert_eq!(r.edits[0].at_line(), Some(12));
        let r = edit(&[b"f", b"YQ==", b"Yg=="]);
        assert!(!r.options.hints);
        assert_eq!(r.edits[0].at_line(), None);
        assert_eq!(
            detail(&[b"--at-line", b"x", b"f", b"YQ==", b"Yg=="]),
            "--at-line takes a line number from 1, got \"x\""
        );
        assert_eq!(
            detail(&[b"--at-line=3", b"--replace-all", b"f", b"YQ==", b"Yg=="]),
            "--at-line conflicts with replace-all"
        );
        let json = br#"{"path":"f","edits":[{"old":"a","new":"b","at_line":5}]}"#;
        let r = parse_stdin_request(json, EditOptions::default()).unwrap();
        assert_eq!(r.edits[0].at_line(), Some(5));
        let json = br#"{"path":"f","edits":[{"old":"a","new":"b","at_line":-1}]}"#;
        assert!(parse_stdin_request(json, EditOptions::default())
            .unwrap_err()
            .detail
            .unwrap()
            .starts_with("stdin request: invalid value: integer `-1`"));
    }

    #[test]
    fn flags_refuse_inline_values() {
        assert_eq!(
            detail(&[b"--replace-all=false", b"f", b"YQ==", b"Yg=="]),
            "--replace-all takes no value, got \"false\""
        );
        assert_eq!(
            detail(&[b"--version="]),
            "--version takes no value, got \"\""
        );
    }
}
