#![doc = include_str!("../README.md")]
//!
//! # Modules, one concern each
//!
//! - [`args`]: the argument grammar (argv and `--stdin`);
//! - [`request`]: what one edit asks for (path, edits, the options that reach `fs`);
//! - `strict_json`: serde_json for the `--stdin` request, but a struct only
//!   ever from a JSON object;
//! - [`protocol`]: tokens, the `__RESULT__` line, exit codes, refusal → token;
//! - [`engine`]: the pure streaming replacement engine (no I/O; the host fallback reuses it);
//! - [`eol`]: the end-of-line policy of `--eol preserve` (count, decide, re-expand);
//! - [`diff`]: unified diffs for `--diff`;
//! - [`hints`]: the pure failure-hint finder (`--hints`);
//! - [`patch`]: the pure V4A patch parser, chunk locator and tree applier;
//! - [`fs`]: resolve, open, lock, write, commit (one concern per file under `src/fs/`);
//! - [`txn`]: several files in one call, all or nothing (`{"files":[...]}`);
//! - `bytes`: short copies without libc's `memcpy` start-up (engine and `fs`);
//! - [`hex`]: lowercase hex and random names, shared by `fs`, `args` and `host`;
//! - [`toolset`]: `--toolset agent_toolset_20260401`, Anthropic's file
//!   tools' texts (read, write, edit, glob);
//! - [`host`]: the host library (command building, parsing, the `Editor`,
//!   fallback, install, backends).

#![warn(missing_docs)]
// The static release build (scripts/build-static.sh) passes --cfg
// as_edit_small and optimizes the per-request code for size: see there.
#![cfg_attr(as_edit_small, feature(optimize_attribute))]

pub mod args;
mod bytes;
pub mod diff;
pub mod engine;
pub mod eol;
pub mod fs;
pub mod hex;
pub mod hints;
pub mod host;
pub mod patch;
pub mod protocol;
pub mod request;
mod spare;
mod strict_json;
pub mod toolset;
pub mod txn;

use std::io::Read;

use args::Invocation;
use protocol::{ErrorKind, Failure};

/// What the binary prints and how it exits.
pub struct Response {
    /// Text for stdout (the result line, or help/version text).
    pub stdout: String,
    /// 0 edited, 1 not edited, 2 invalid invocation (see [`protocol`]).
    pub exit_code: i32,
}

/// Runs one invocation end to end; `stdin` is read only for `--stdin`.
///
/// This is the edit entry point, and the crate's [Guarantees](crate#guarantees)
/// hold for it: the file is replaced atomically or not at all, nothing is
/// left behind, a refused edit leaves the file untouched, and
/// [`Response::stdout`] is exactly one result line (or the help or version
/// text), with [`Response::exit_code`] 0 edited, 1 not edited, 2 invalid
/// invocation.
#[cfg_attr(as_edit_small, optimize(size))]
pub fn run(
    args: &[std::ffi::OsString],
    env_root: Option<std::ffi::OsString>,
    stdin: &mut dyn Read,
) -> Response {
    // A toolset request has its own grammar and texts (src/toolset).
    if let Some((stdout, exit_code)) = toolset::cli(args, stdin) {
        return Response { stdout, exit_code };
    }
    let (source, strict, args) = match patch::cli::split(args) {
        Ok(s) => s,
        Err(f) => return failed(&f),
    };
    let done = |(stdout, exit_code)| Response { stdout, exit_code };
    let request = match args::parse(&args, env_root, patch::cli::flag(&source)) {
        Ok(Invocation::Help) => return text(format!("{}{}", args::HELP, patch::cli::HELP)),
        Ok(Invocation::Version) => return text(args::version_line()),
        Ok(Invocation::Edit(r)) => Ok(txn::Parsed::One(r)),
        Ok(Invocation::Stdin {
            options,
            max_request_bytes,
        }) => {
            // --patch-b64 must not wait on a stdin that exec APIs may leave open.
            if let Some(patch::cli::Source::Bytes(p)) = &source {
                return done(patch::cli::run_text(p, options, strict));
            }
            match read_stdin(stdin, max_request_bytes) {
                Ok(b) if source.is_some() => {
                    return done(patch::cli::run_text(&b, options, strict))
                }
                Ok(b) => match json_request(b, options, strict) {
                    Ok(r) => r,
                    Err(r) => return done(r),
                },
                Err(f) => Err(f),
            }
        }
        Ok(Invocation::RequestB64 { options, json }) => match json_request(json, options, strict) {
            Ok(r) => r,
            Err(r) => return done(r),
        },
        Err(f) => Err(f),
    };
    if strict && request.is_ok() {
        let f = protocol::Failure::new(
            ErrorKind::InvalidArgument,
            "--patch-strict applies to patches (--patch, --patch-b64, or a patch request)",
        );
        return failed(&f);
    }
    let request = match request {
        Ok(txn::Parsed::One(r)) => Ok(r),
        Ok(txn::Parsed::Files(txn)) => {
            let (stdout, exit_code) = txn::run(&txn);
            return Response { stdout, exit_code };
        }
        Err(f) => Err(f),
    };
    let (result, report) = match request {
        Ok(req) => {
            let o = fs::edit(&req);
            (o.result, o.report)
        }
        Err(f) => (Err(f), None),
    };
    match result {
        Ok(count) => Response {
            stdout: protocol::success_line(count, report.as_ref()),
            exit_code: protocol::EXIT_EDITED,
        },
        Err(f) => Response {
            exit_code: f.kind.exit_code(),
            stdout: protocol::failure_line(&f, report.as_ref()),
        },
    }
}

/// A JSON request: a single file (read in place when it has the plain
/// shape, else one serde scan of the text when it is a well-formed one),
/// a patch or operations (answered here: `Err`), or a transaction.
#[cfg_attr(as_edit_small, optimize(size))]
fn json_request(
    json: Vec<u8>,
    options: request::EditOptions,
    strict: bool,
) -> Result<Result<txn::Parsed, Failure>, (String, i32)> {
    let json = match args::parse_fast(json, &options) {
        Ok(r) => return Ok(r.map(txn::Parsed::One)),
        Err(json) => json,
    };
    let json = &json[..];
    if let Some(r) = args::parse_single(json, &options) {
        return Ok(r.map(txn::Parsed::One));
    }
    match patch::cli::run_json(json, &options, strict) {
        Some(r) => Err(r),
        None => Ok(txn::parse_request(json, options)),
    }
}

fn failed(f: &Failure) -> Response {
    Response {
        stdout: protocol::failure_line(f, None),
        exit_code: f.kind.exit_code(),
    }
}

fn text(s: String) -> Response {
    Response {
        stdout: s,
        exit_code: 0,
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
    /// probes: the patch probe, then the files probe, then the request.
    fn probed(json: &[u8], options: request::EditOptions) -> String {
        match patch::cli::run_json(json, &options, false) {
            Some(r) => format!("{r:?}"),
            None => format!("{:?}", Ok::<_, ()>(txn::parse_request(json, options))),
        }
    }

    fn direct(json: &[u8], options: request::EditOptions) -> String {
        match json_request(json.to_vec(), options, false) {
            Ok(r) => format!("{:?}", Ok::<_, ()>(r)),
            Err(r) => format!("{r:?}"),
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
}
