//! Every request the binary understands, read in one place ([`parse`]) and
//! answered in one `match` ([`run`]).
//!
//! | request | comes as | answered by |
//! | --- | --- | --- |
//! | [`Request::Help`], [`Request::Version`] | `-h`, `--help`, `-V`, `--version` | the text, no result line |
//! | [`Request::Edit`] | `[--] PATH OLD_B64 NEW_B64 [ALL]`, batches; `{"path","edits"}` on `--stdin` or `--request-b64` | `fs::edit` |
//! | [`Request::Files`] | `{"files":[OP,…]}`, or one transaction op at the top level (`{"op":"create",…}`) | `txn::run` |
//! | [`Request::PatchText`] | `--patch`, `--patch-b64`, `{"patch": TEXT}` | `patch::cli::run_text` |
//! | [`Request::PatchOps`] | `{"operations":[…]}` | `patch::cli::run_operations` |
//! | [`Request::Tool`] | `{"op":"stat"\|"list"\|"read",…}` (protocol 4) | `tools::run` |
//! | [`Request::Toolset`] | `--toolset agent_toolset_20260401`, `{"name","input"}` on stdin or `--request-b64` | `toolset::answer` (the reference's text, no result line) |
//! | [`Request::ApplyPatch`] | argv0 `apply_patch` (or `applypatch`): `[--preserve-crlf] [PATCH]`, else the patch on stdin | `patch::codex::apply` (Codex's CLI texts on stdout and stderr) |
//!
//! A JSON request is told apart by its keys, cheapest first, so that the
//! edit path pays nothing for the others: the plain single-file request is
//! read without serde (`args::parse_fast`), a well-formed one in one serde
//! scan (`args::parse_single`, which stops at the first key no single-file
//! request has). What is neither has its top-level keys looked at once
//! (`keys::kind`, one scan saying which request it is, its docs give the
//! order that decides between several kinds' keys) and is parsed once, as
//! that kind: a patch (`patch::cli::read_json`), an `{"op"}`
//! (`txn::parse_op` for a transaction op, else `tools::parse`), a
//! transaction (`txn::parse`), or a malformed single-file request
//! (`args::parse_stdin_request`, whose words its refusal keeps).
//!
//! Argv is read in one pass ([`argv::read`], whose docs list every argv
//! form and the rules between them) into an [`argv::Argv`], which
//! [`parse`] turns into the request (reading stdin where argv says the
//! request is there); a binary run under the name `apply_patch` reads
//! Codex's grammar instead (`patch::codex::read`).
//!
//! Adding a request: a variant here, its arm in [`run`], and its reading
//! in [`parse`] (or, for an `{"op"}`, in `tools::parse`).

use std::ffi::{OsStr, OsString};
use std::io::Read;

use crate::args;
use crate::patch::cli as patch_cli;
use crate::patch::codex;
use crate::protocol::{self, ErrorKind, Failure};
use crate::request::{self, EditOptions};
use crate::{fs, tools, toolset, txn, Response};

pub mod argv;
mod keys;

use argv::{Argv, Input};

/// One request of any kind, read and checked, ready to run.
#[derive(Debug)]
pub enum Request {
    /// `--help`.
    Help,
    /// `--version`.
    Version,
    /// A single-file edit, from argv or the JSON request alike.
    Edit(request::Request),
    /// Several files, all or nothing (a top-level op is a transaction of one).
    Files(txn::Txn),
    /// A V4A patch text.
    PatchText {
        /// The text as given (checked for UTF-8 when it runs).
        text: Vec<u8>,
        /// The flags given on the command line.
        options: EditOptions,
        /// `--patch-strict`.
        strict: bool,
    },
    /// The Responses API's `{"operations":[…]}`.
    PatchOps {
        /// The operations as read (not empty).
        ops: Vec<patch_cli::Operation>,
        /// The flags given on the command line.
        options: EditOptions,
        /// `--patch-strict`.
        strict: bool,
    },
    /// A read-side op of the toolset: `stat`, `list`, `read`.
    Tool(tools::Request),
    /// Anthropic's tools (`--toolset`): their own grammar and texts.
    Toolset(toolset::Call),
    /// Codex's `apply_patch` CLI, the binary run under that name.
    ApplyPatch(codex::Invocation),
}

/// Reads and answers one invocation: `argv0` is the name the binary was
/// run under (None: the normal mode), `args` the rest of argv.
#[cfg_attr(as_edit_small, optimize(size))]
pub fn answer(
    argv0: Option<&OsStr>,
    args: &[OsString],
    env_root: Option<OsString>,
    stdin: &mut dyn Read,
) -> Response {
    match parse(argv0, args, env_root, stdin) {
        Ok(req) => run(req),
        Err(f) => line(protocol::failure_line(&f, None), f.kind.exit_code()),
    }
}

/// A response with nothing for stderr, whose exit code stands whether or
/// not stdout can be written.
fn line(stdout: String, exit_code: i32) -> Response {
    Response {
        stdout,
        exit_code,
        stderr: String::new(),
        exit_code_unwritten: exit_code,
    }
}

/// Answers a request: the one `match` every request goes through.
#[cfg_attr(as_edit_small, optimize(size))]
pub fn run(req: Request) -> Response {
    let (stdout, exit_code) = match req {
        Request::ApplyPatch(inv) => {
            let (stdout, stderr, exit_code) = match inv {
                Ok((text, options)) => codex::apply(&text, options),
                Err((stderr, code)) => (String::new(), stderr, code),
            };
            // Codex's binary exits 1 when its stdout cannot be written.
            return Response {
                stdout,
                exit_code,
                stderr,
                exit_code_unwritten: 1,
            };
        }
        Request::Help => (format!("{}{}", args::HELP, patch_cli::HELP), 0),
        Request::Version => (args::version_line(), 0),
        Request::Edit(r) => edit(&r),
        Request::Files(t) => txn::run(&t),
        Request::PatchText {
            text,
            options,
            strict,
        } => patch_cli::run_text(&text, options, strict),
        Request::PatchOps {
            ops,
            options,
            strict,
        } => patch_cli::run_operations(ops, options, strict),
        Request::Tool(t) => tools::run(&t),
        Request::Toolset(c) => toolset::answer(&c),
    };
    line(stdout, exit_code)
}

#[cfg_attr(as_edit_small, optimize(size))]
fn edit(req: &request::Request) -> (String, i32) {
    let o = fs::edit(req);
    match o.result {
        Ok(count) => (
            protocol::success_line(count, o.report.as_ref()),
            protocol::EXIT_EDITED,
        ),
        Err(f) => (
            protocol::failure_line(&f, o.report.as_ref()),
            f.kind.exit_code(),
        ),
    }
}

/// Reads the request from the name the binary was run under, argv
/// (`argv::read`, one pass), `AS_EDIT_ROOT` and (for `--stdin`, `--patch`,
/// `--toolset` and the `apply_patch` mode only) standard input.
#[cfg_attr(as_edit_small, optimize(size))]
pub fn parse(
    argv0: Option<&OsStr>,
    args: &[OsString],
    env_root: Option<OsString>,
    stdin: &mut dyn Read,
) -> Result<Request, Failure> {
    // Under the name apply_patch: Codex's grammar, no other flag.
    if codex::invoked_as(argv0) {
        return Ok(Request::ApplyPatch(codex::read(args, env_root, stdin)));
    }
    let (input, options, max, strict) = match argv::read(args, env_root)? {
        Argv::Help => return Ok(Request::Help),
        Argv::Version => return Ok(Request::Version),
        Argv::Edit(r) => return Ok(Request::Edit(r)),
        Argv::Toolset(t) => return Ok(Request::Toolset(toolset_call(t, stdin))),
        Argv::Body {
            input,
            options,
            max_request_bytes,
            strict,
        } => (input, options, max_request_bytes, strict),
    };
    let req = match input {
        // --patch-b64 must not wait on a stdin that exec APIs may leave open.
        Input::PatchText(text) => Request::PatchText {
            text,
            options,
            strict,
        },
        Input::Patch => Request::PatchText {
            text: read_stdin(stdin, max)?,
            options,
            strict,
        },
        Input::Json(j) => json(j, options, strict)?,
        Input::Stdin => json(read_stdin(stdin, max)?, options, strict)?,
    };
    match req {
        Request::PatchText { .. } | Request::PatchOps { .. } => Ok(req),
        _ if strict => Err(argv::not_a_patch()),
        _ => Ok(req),
    }
}

/// A `--toolset` call, its request read from stdin if argv did not hold it.
#[cfg_attr(as_edit_small, optimize(size))]
fn toolset_call(t: argv::Toolset, stdin: &mut dyn Read) -> toolset::Call {
    use toolset::{Call, MAX_STDIN};
    match t {
        argv::Toolset::Json(j) => Call::Json(j),
        argv::Toolset::Usage(why) => Call::Usage(why),
        argv::Toolset::Stdin => {
            let mut buf = Vec::new();
            // The inputs a model sends are small; the bound stops a runaway
            // pipe, and a request past it is refused whole, never cut.
            match stdin.take(MAX_STDIN as u64 + 1).read_to_end(&mut buf) {
                Ok(n) if n > MAX_STDIN => Call::Usage(format!(
                    "the request on stdin is over {MAX_STDIN} bytes (64 MiB), the bound of a \
                     tool call: nothing was done; send a smaller one (write a large file in parts)"
                )),
                Ok(_) => Call::Json(buf),
                Err(e) => Call::Usage(format!("reading the request: {e}")),
            }
        }
    }
}

/// A JSON request, by its keys (module docs: cheapest first).
#[cfg_attr(as_edit_small, optimize(size))]
pub fn json(json: Vec<u8>, options: EditOptions, strict: bool) -> Result<Request, Failure> {
    let json = match args::parse_fast(json, &options) {
        Ok(r) => return r.map(Request::Edit),
        Err(json) => json,
    };
    let json = &json[..];
    if let Some(r) = args::parse_single(json, &options) {
        return r.map(Request::Edit);
    }
    match keys::kind(json) {
        // Patch: the scan read the text as UTF-8.
        keys::Kind::Patch => match patch_cli::read_json(std::str::from_utf8(json).unwrap_or("")) {
            Ok(patch_cli::Json::Text(p)) => Ok(Request::PatchText {
                text: p.into_bytes(),
                options,
                strict,
            }),
            Ok(patch_cli::Json::Operations(ops)) => Ok(Request::PatchOps {
                ops,
                options,
                strict,
            }),
            Err(f) => Err(f),
        },
        keys::Kind::Op(op) if txn::is_op(op.as_deref()) => {
            txn::parse_op(json, options).map(Request::Files)
        }
        keys::Kind::Op(_) => tools::parse(json, &options).map(Request::Tool),
        keys::Kind::Files => txn::parse(json, options).map(Request::Files),
        keys::Kind::Single => args::parse_stdin_request(json, options).map(Request::Edit),
    }
}

#[cfg_attr(as_edit_small, optimize(size))]
fn read_stdin(stdin: &mut dyn Read, max: u64) -> Result<Vec<u8>, Failure> {
    let mut buf = Vec::new();
    // A request redirected from a regular file (fd 0, whatever `stdin`
    // is: only the capacity depends on it) is read into one block of its
    // size, not a block grown by doubling, each step remapped.
    if let Ok(st) = rustix::fs::fstat(std::io::stdin()) {
        if rustix::fs::FileType::from_raw_mode(st.st_mode).is_file() {
            let _ = buf.try_reserve_exact((st.st_size as u64).min(max) as usize + 1);
        }
    }
    // One byte past the bound tells "too long" from "exactly max"; at
    // u64::MAX there is no bound but memory, and `max + 1` must not wrap.
    stdin
        .take(max.saturating_add(1))
        .read_to_end(&mut buf)
        .map_err(|e| {
            Failure::new(
                ErrorKind::InvalidArgument,
                format!("reading the stdin request: {e}"),
            )
        })?;
    if buf.len() as u64 > max {
        return Err(Failure::new(
            ErrorKind::InvalidArgument,
            format!("the stdin request exceeds {max} bytes (--max-request-bytes)"),
        ));
    }
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a JSON request was before the single-file request skipped the
    /// probes: the patch probe, then the files probe, then the request. A
    /// refusal as the line it prints (patch refusals were answered as
    /// lines), a request as read.
    fn probed(json: &[u8], options: request::EditOptions) -> String {
        match patch_cli::parse_json(json) {
            Some(Ok(patch_cli::Json::Text(p))) => {
                format!("{:?}", patch_cli::run_text(p.as_bytes(), options, false))
            }
            Some(Ok(patch_cli::Json::Operations(ops))) => {
                format!("{:?}", patch_cli::run_operations(ops, options, false))
            }
            Some(Err(f)) => line(&f),
            None => match txn::parse_request(json, options) {
                Ok(r) => format!("{r:?}"),
                Err(f) => line(&f),
            },
        }
    }

    fn line(f: &Failure) -> String {
        format!(
            "{:?}",
            (protocol::failure_line(f, None), f.kind.exit_code())
        )
    }

    fn direct(j: &[u8], options: request::EditOptions) -> String {
        match json(j.to_vec(), options, false) {
            Ok(Request::Edit(r)) => format!("{:?}", txn::Parsed::One(r)),
            Ok(Request::Files(t)) => format!("{:?}", txn::Parsed::Files(t)),
            Ok(r @ (Request::PatchText { .. } | Request::PatchOps { .. })) => {
                let r = run(r);
                format!("{:?}", (r.stdout, r.exit_code))
            }
            Ok(r) => format!("{r:?}"),
            Err(f) => line(&f),
        }
    }

    #[test]
    fn a_single_file_request_parses_as_the_probes_would_have_sent_it() {
        let cases: &[&[u8]] = &[
            br#"{"path":"f","edits":[{"old":"a\r\nb","new":"c","replace_all":true,"at_line":3}]}"#,
            br#"{"edits":[{"old":"a","new":""}],"path":"f","expect_sha256":null}"#,
            br#"{"path":"f","edits":[{"old":"a","new":"b"}],"expect_sha256":"00"}"#,
            br#"{"path":"f","edits":[{"old":"a","new":"b"}],"path":"g"}"#,
            br#"{"path":"f","edits":[{"old":"a","new":"b"}],"files":[]}"#,
            br#"{"files":[{"op":"delete","path":"f"}],"path":"f","edits":[]}"#,
            br#"{"path":"f","edits":[{"old":"a","new":"b"}],"patch":"x"}"#,
            br#"{"patch":"*** Begin Patch\n*** End Patch"}"#,
            br#"{"operations":[]}"#,
            br#"{"path":"f","edits":[{"old":"a","new":"b"}]} x"#,
            br#"["f",[["a","b"]]]"#,
            br#"{"path":"f","edits":[]}"#,
            br#"{"path":"f","edits":[{"old":"","new":"b"},{"old":"a","new":"b"}]}"#,
            br#"{"path":"f\u0000","edits":[{"old":"a","new":"b"}]}"#,
            br#"{"path":"","edits":[{"old":"a","new":"b"}]}"#,
            br#"{"path":"f","edits":[{"old":"a","new":"b","at_line":-1}]}"#,
            b"{\"path\":\"f\xff\",\"edits\":[]}",
            b" \t\n{ \"path\" : \"f\" , \"edits\" : [ { \"old\" : \"a\" , \"new\" : \"b\" } ] } \n",
        ];
        let flagged = request::EditOptions {
            expect_sha256: Some([7; 32]),
            ..Default::default()
        };
        for json in cases {
            // Every prefix too: requests cut anywhere, valid or not.
            for end in 0..=json.len() {
                for o in [request::EditOptions::default(), flagged.clone()] {
                    let j = &json[..end];
                    assert_eq!(direct(j, o.clone()), probed(j, o), "{}", j.escape_ascii());
                }
            }
        }
    }

    /// What a JSON request was when each kind probed the text in turn
    /// (parse_fast, parse_single, the patch probe, the op probe, the files
    /// probe): the oracle of the one key scan. A request as read, a refusal
    /// as its line.
    fn in_turn(json: &[u8], options: request::EditOptions) -> String {
        let json = match args::parse_fast(json.to_vec(), &options) {
            Ok(r) => return shown(r.map(Request::Edit)),
            Err(json) => json,
        };
        let json = &json[..];
        if let Some(r) = args::parse_single(json, &options) {
            return shown(r.map(Request::Edit));
        }
        match patch_cli::parse_json(json) {
            Some(Ok(patch_cli::Json::Text(p))) => return format!("patch {p:?}"),
            Some(Ok(patch_cli::Json::Operations(ops))) => return format!("ops {ops:?}"),
            Some(Err(f)) => return line(&f),
            None => {}
        }
        if let Some(op) = tools::probe(json) {
            return shown(match txn::is_op(op.as_deref()) {
                true => txn::parse_op(json, options).map(Request::Files),
                false => tools::parse(json, &options).map(Request::Tool),
            });
        }
        shown(match txn::parse_request(json, options) {
            Ok(txn::Parsed::One(r)) => Ok(Request::Edit(r)),
            Ok(txn::Parsed::Files(t)) => Ok(Request::Files(t)),
            Err(f) => Err(f),
        })
    }

    fn shown(r: Result<Request, Failure>) -> String {
        match r {
            Ok(Request::PatchText { text, .. }) => {
                format!("patch {:?}", String::from_utf8(text).unwrap())
            }
            Ok(Request::PatchOps { ops, .. }) => format!("ops {ops:?}"),
            Ok(r) => format!("{r:?}"),
            Err(f) => line(&f),
        }
    }

    /// Requests of every kind and none, whole and cut: members drawn from
    /// every kind's keys (each key possibly twice) with values of every
    /// type, valid or not for the key; non-objects; malformed JSON; a
    /// value nested past serde's depth bound; huge values.
    fn generated() -> Vec<Vec<u8>> {
        let keys: &[&str] = &[
            "patch",
            "operations",
            "op",
            "files",
            "path",
            "edits",
            "expect_sha256",
            "paths",
            "name",
            "input",
            "pa\\u0074ch",
            "o\\u0070",
            "x",
        ];
        let values: &[&str] = &[
            "null",
            "\"x\"",
            "1",
            "-1.5e3",
            "1e999",
            "\"\\u0000\"",
            "true",
            "[]",
            "{}",
            "\"*** Begin Patch\\n*** Add File: a\\n+x\\n*** End Patch\"",
            r#"[{"type":"delete_file","path":"f"}]"#,
            r#"[{"type":"delete_file"}]"#,
            "\"stat\"",
            "\"read\"",
            "\"delete\"",
            "\"create\"",
            r#"[{"op":"delete","path":"f"}]"#,
            r#"[{"old":"a","new":"b"}]"#,
            r#"["a"]"#,
            "\"f\"",
            "\"\\ud800\"",
            "\"\\q\"",
            "[1,",
            "{\"a\":[{}]}",
        ];
        let mut out: Vec<Vec<u8>> = Vec::new();
        // A fixed xorshift: the same inputs on every run.
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        for _ in 0..6000 {
            let members = next(5);
            let mut j = String::from(["{", " {", "\n{ "][next(3)]);
            for m in 0..members {
                if m > 0 {
                    j.push(',');
                }
                let k = keys[next(keys.len())];
                let v = values[next(values.len())];
                j.push_str(&format!("\"{k}\":{v}"));
            }
            j.push_str(["}", "} ", "}x", "", "]"][next(5).min(4) * (next(4) / 3)]);
            out.push(j.into_bytes());
        }
        // A request of each kind, whole and with one member from the pools
        // added before or after its own (a second kind's key, its own key
        // again, a bad value).
        let requests: &[&str] = &[
            r#""op":"stat","paths":["a"]"#,
            r#""op":"read","path":"f""#,
            r#""op":"list","path":".""#,
            r#""op":"delete","path":"f""#,
            r#""files":[{"op":"delete","path":"f"}]"#,
            r#""path":"f","edits":[{"old":"a","new":"b"}]"#,
            r#""p\u0061th":"f","edits":[{"old":"a","new":"b"}]"#,
            r#""patch":"*** Begin Patch\n*** Delete File: f\n*** End Patch""#,
            r#""operations":[{"type":"delete_file","path":"f"}]"#,
        ];
        for r in requests {
            out.push(format!("{{{r}}}").into_bytes());
            for k in keys {
                for v in values {
                    out.push(format!(r#"{{{r},"{k}":{v}}}"#).into_bytes());
                    out.push(format!(r#"{{"{k}":{v},{r}}}"#).into_bytes());
                }
            }
        }
        for v in values {
            out.push(v.as_bytes().to_vec());
            out.push(format!("[{v}]").into_bytes());
        }
        let deep = format!("{}{}", "[".repeat(300), "]".repeat(300));
        let long = "y".repeat(1 << 20);
        for k in ["op", "files", "patch", "operations", "path", "x"] {
            out.push(format!(r#"{{"{k}":{deep}}}"#).into_bytes());
            out.push(format!(r#"{{"{k}":"{long}"}}"#).into_bytes());
            out.push(format!(r#"{{"x":"{long}","{k}":null}}"#).into_bytes());
            out.push(format!(r#"{{"{k}":"{long}"#).into_bytes());
        }
        out.push(b"{\"op\":\"stat\",\"p\xffths\":[]}".to_vec());
        out.push(b"{\"files\":[],\"x\":\"\xff\"}".to_vec());
        out.push(deep.into_bytes());
        out
    }

    #[test]
    fn the_one_key_scan_picks_the_request_the_probes_in_turn_picked() {
        let flagged = request::EditOptions {
            expect_sha256: Some([7; 32]),
            ..Default::default()
        };
        let mut kinds = std::collections::BTreeMap::new();
        for j in generated() {
            let cuts: Vec<usize> = match j.len() {
                n if n > 4096 => vec![n, n / 2],
                n => (0..=n).step_by(n / 8 + 1).chain([n]).collect(),
            };
            for end in cuts {
                let j = &j[..end];
                for o in [request::EditOptions::default(), flagged.clone()] {
                    let want = in_turn(j, o.clone());
                    let got = shown(json(j.to_vec(), o, false));
                    let kind = match want.starts_with("(\"__RESULT__") {
                        true => "refused",
                        false => want.split(['(', ' ']).next().unwrap_or(""),
                    };
                    *kinds.entry(kind.to_owned()).or_insert(0) += 1;
                    assert_eq!(got, want, "{}", j[..j.len().min(300)].escape_ascii());
                }
            }
        }
        // Every kind was reached, refusals included.
        for k in ["patch", "ops", "Tool", "Files", "Edit", "refused"] {
            assert!(kinds.contains_key(k), "{k} never reached: {kinds:?}");
        }
    }
}
