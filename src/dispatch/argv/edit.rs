//! The edit grammar's reader of the one argv pass (`dispatch::argv`): the
//! edit options, the positionals and the inputs, from the arguments the
//! toolset and the patch flags leave it.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use super::{input_flag, invalid, not_a_patch, Argv, Input, FLAGS, VALUES};
use crate::args::{b64, decimal, positional_request, seconds, DEFAULT_MAX_REQUEST_BYTES};
use crate::protocol::Failure;
use crate::request::{EditOptions, Eol};

/// The edit grammar's reading: the options, and the positionals.
pub(super) struct EditArgs<'a> {
    options: EditOptions,
    flag_all: bool,
    at_line: Option<u64>,
    stdin: bool,
    request_b64: Option<Vec<u8>>,
    max_request_bytes: u64,
    positionals: Vec<&'a OsStr>,
    /// A `--` was read: the rest are positionals.
    options_ended: bool,
    /// The option whose value the next argument is (a [`VALUES`] entry).
    value_of: Option<(&'static str, &'static str)>,
    /// Help, version or the first refusal: answered as soon as read.
    answer: Option<Result<Argv, Failure>>,
}

impl<'a> EditArgs<'a> {
    pub(super) fn new(env_root: Option<OsString>) -> Self {
        EditArgs {
            options: EditOptions {
                root: env_root.filter(|r| !r.is_empty()).map(PathBuf::from),
                ..EditOptions::default()
            },
            flag_all: false,
            at_line: None,
            stdin: false,
            request_b64: None,
            max_request_bytes: DEFAULT_MAX_REQUEST_BYTES,
            positionals: Vec::new(),
            options_ended: false,
            value_of: None,
            answer: None,
        }
    }

    pub(super) fn take(&mut self, a: &'a OsStr) {
        if self.answer.is_none() {
            self.answer = self.step(a).transpose();
        }
    }

    #[cfg_attr(as_edit_small, optimize(size))]
    fn step(&mut self, a: &'a OsStr) -> Result<Option<Argv>, Failure> {
        if let Some(option) = self.value_of.take() {
            return self.value(option, a).map(|()| None);
        }
        let b = a.as_bytes();
        if self.options_ended || !b.starts_with(b"-") || b == b"-" {
            self.positionals.push(a);
            return Ok(None);
        }
        if b == b"--" {
            self.options_ended = true;
            return Ok(None);
        }
        let text = a.to_str().ok_or_else(|| {
            invalid("unknown option (not UTF-8); put `--` before a PATH that starts with '-'")
        })?;
        // A long option's name is what precedes its first `=`.
        let (name, value) = match text.split_once('=') {
            _ if text == "-h" => return Ok(Some(Argv::Help)),
            _ if text == "-V" => return Ok(Some(Argv::Version)),
            _ if !text.starts_with("--") => return Err(unknown_option(text)),
            Some((name, value)) => (name, Some(value)),
            None => (text, None),
        };
        if FLAGS.contains(&name) {
            // A flag takes no value: `--replace-all=false` must not mean "on".
            if let Some(v) = value {
                return Err(invalid(format!("{name} takes no value, got {v:?}")));
            }
            let o = &mut self.options;
            match name {
                "--help" => return Ok(Some(Argv::Help)),
                "--version" => return Ok(Some(Argv::Version)),
                "--replace-all" => self.flag_all = true,
                "--dry-run" => o.dry_run = true,
                "--report" => o.report = true,
                "--diff" => o.diff = true,
                "--fsync" => o.fsync = true,
                "--hints" => o.hints = true,
                _ => self.stdin = true,
            }
            return Ok(None);
        }
        let Some(&option) = VALUES.iter().find(|(n, _)| *n == name) else {
            return Err(unknown_option(name));
        };
        match value {
            Some(v) => self.value(option, OsStr::new(v))?,
            None => self.value_of = Some(option),
        }
        Ok(None)
    }

    /// A [`VALUES`] option's value: the rest after `=`, or the next argument.
    #[cfg_attr(as_edit_small, optimize(size))]
    fn value(&mut self, (name, what): (&str, &str), v: &OsStr) -> Result<(), Failure> {
        let o = &mut self.options;
        match name {
            // Any bytes: a directory name need not be UTF-8.
            "--root" if v.is_empty() => return Err(invalid("--root is empty")),
            "--root" => {
                o.root = Some(PathBuf::from(v));
                return Ok(());
            }
            "--request-b64" => {
                let json = b64::decode(v.as_bytes())
                    .map_err(|e| invalid(format!("--request-b64 is not valid base64 ({e})")))?;
                self.request_b64 = Some(json);
                return Ok(());
            }
            _ => {}
        }
        let v = v
            .to_str()
            .ok_or_else(|| invalid(format!("{name} needs {what}")))?;
        match name {
            "--at-line" => {
                let n = decimal(v).then(|| v.parse::<u64>().ok()).flatten();
                self.at_line = Some(n.filter(|l| *l >= 1).ok_or_else(|| {
                    invalid(format!("--at-line takes a line number from 1, got {v:?}"))
                })?);
            }
            "--lock-timeout" => {
                o.lock_timeout = seconds(v).ok_or_else(|| {
                    invalid(format!(
                        "--lock-timeout takes seconds from 0 to 86400, got {v:?}"
                    ))
                })?;
            }
            "--expect-sha256" => {
                o.expect_sha256 = Some(
                    crate::hex::decode_sha256(v)
                        .ok_or_else(|| invalid("--expect-sha256 takes 64 lowercase hex digits"))?,
                );
            }
            "--eol" => {
                o.eol = match v {
                    "lf" => Eol::Lf,
                    "preserve" => Eol::Preserve,
                    _ => return Err(invalid(format!("--eol takes lf or preserve, got {v:?}"))),
                }
            }
            _ => {
                // --max-request-bytes. Past u64::MAX is no bound but memory,
                // like u64::MAX itself.
                let n = match v.parse::<u64>() {
                    _ if !decimal(v) => None,
                    Err(e) if *e.kind() == std::num::IntErrorKind::PosOverflow => Some(u64::MAX),
                    r => r.ok(),
                };
                self.max_request_bytes = n.filter(|n| *n > 0).ok_or_else(|| {
                    invalid(format!(
                        "--max-request-bytes takes a positive integer, got {v:?}"
                    ))
                })?;
            }
        }
        Ok(())
    }

    /// The request, once every argument is read; `patch` is the patch
    /// flags' input.
    #[cfg_attr(as_edit_small, optimize(size))]
    pub(super) fn end(self, patch: Option<Input>, strict: bool) -> Result<Argv, Failure> {
        if let Some(answer) = self.answer {
            return answer;
        }
        if let Some((name, what)) = self.value_of {
            return Err(invalid(format!("{name} needs {what}")));
        }
        let options = self.options;
        if options.diff && !options.report {
            return Err(invalid("--diff needs --report"));
        }
        // The request comes from one input; a conflict names what was given.
        let b64 = self.request_b64.is_some().then_some("--request-b64");
        let inputs: Vec<&str> = [patch.as_ref().map(input_flag), b64]
            .into_iter()
            .chain([self.stdin.then_some("--stdin")])
            .flatten()
            .collect();
        if let [a, b, ..] = inputs[..] {
            return Err(invalid(format!("give one of {a} and {b}")));
        }
        if let Some(input) = inputs.first() {
            let whole = match *input {
                "--stdin" => "takes the request from standard input",
                "--patch" => "takes the patch from standard input",
                "--patch-b64" => "carries the whole patch",
                _ => "carries the whole request",
            };
            if !self.positionals.is_empty() || self.flag_all {
                let what = match self.positionals.is_empty() {
                    true => "--replace-all",
                    false => "PATH or edits",
                };
                return Err(invalid(format!("{input} {whole}; give no {what}")));
            }
            if self.at_line.is_some() {
                return Err(invalid(match patch {
                    None => {
                        format!("--at-line is per edit; with {input} give \"at_line\" in the edit")
                    }
                    Some(_) => format!("{input} {whole}; give no --at-line"),
                }));
            }
        }
        let input = match (self.request_b64, patch) {
            (Some(json), _) => Some(Input::Json(json)),
            (None, Some(patch)) => Some(patch),
            (None, None) => self.stdin.then_some(Input::Stdin),
        };
        if let Some(input) = input {
            return Ok(Argv::Body {
                input,
                options,
                max_request_bytes: self.max_request_bytes,
                strict,
            });
        }
        let request = positional_request(&self.positionals, self.flag_all, self.at_line, options)?;
        match strict {
            true => Err(not_a_patch()),
            false => Ok(Argv::Edit(request)),
        }
    }
}

fn unknown_option(name: &str) -> Failure {
    invalid(format!(
        "unknown option {name:?}; put `--` before a PATH that starts with '-'"
    ))
}

#[cfg(test)]
mod tests {
    use std::ffi::OsString;
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    use std::path::PathBuf;

    use crate::args::parse_stdin_request;
    use crate::dispatch::argv::{read, Argv};
    use crate::protocol::ErrorKind;
    use crate::request::{EditOptions, Eol, Request};

    fn args(v: &[&[u8]]) -> Vec<OsString> {
        v.iter().map(|a| OsString::from_vec(a.to_vec())).collect()
    }

    fn detail(v: &[&[u8]]) -> String {
        let f = read(&args(v), None).expect_err("refused");
        assert_eq!(f.kind, ErrorKind::InvalidArgument);
        f.detail.unwrap()
    }

    fn edit(v: &[&[u8]]) -> Request {
        match read(&args(v), None) {
            Ok(Argv::Edit(r)) => r,
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

    // A short cluster (`-hV`) or `-h=x` is refused whole, never split.
    #[test]
    fn short_options_are_exactly_h_and_v() {
        assert_eq!(read(&args(&[b"-h"]), None), Ok(Argv::Help));
        assert_eq!(read(&args(&[b"-V"]), None), Ok(Argv::Version));
        for a in [&b"-hV"[..], b"-h=x", b"-x", b"-1", b"-="] {
            let name = std::str::from_utf8(a).unwrap();
            assert_eq!(
                detail(&[a]),
                format!("unknown option {name:?}; put `--` before a PATH that starts with '-'")
            );
        }
    }

    // An option that is not UTF-8 is refused, never read lossily.
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
        assert_eq!(read(&args(&[b"--help", b"--bogus"]), None), Ok(Argv::Help));
        assert_eq!(read(&args(&[b"-V", b"--eol"]), None), Ok(Argv::Version));
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
