//! Every argv form the binary reads, in one pass ([`read`]) into one
//! [`Argv`]. (The binary run as `apply_patch` reads Codex's grammar
//! instead: `patch::codex::read`.)
//!
//! | arguments | read as |
//! | --- | --- |
//! | `-h`, `--help`; `-V`, `--version` | [`Argv::Help`]; [`Argv::Version`] |
//! | `[OPTIONS] [--] PATH OLD_B64 NEW_B64 [true\|false]` | [`Argv::Edit`] |
//! | `[OPTIONS] -- PATH OLD1 NEW1 ALL1 [OLD2 NEW2 ALL2 …]` | [`Argv::Edit`], a batch |
//! | `[OPTIONS] --stdin` | [`Argv::Body`] from [`Input::Stdin`]: the JSON request on stdin |
//! | `[OPTIONS] --request-b64 B64` | [`Argv::Body`] from [`Input::Json`]: that request in argv |
//! | `[OPTIONS] --patch` | [`Argv::Body`] from [`Input::Patch`]: a V4A patch on stdin |
//! | `[OPTIONS] --patch-b64 B64` | [`Argv::Body`] from [`Input::PatchText`]: the patch in argv |
//! | `--patch-strict` | `strict` in [`Argv::Body`] (exact matches only; refused for a request that is no patch) |
//! | `--toolset NAME [--stdin] [--request-b64 B64]` | [`Argv::Toolset`] |
//!
//! OPTIONS are the edit options: the flags, and the options with a value
//! ([`VALUES`]) that is the next argument whatever it looks like, or the
//! rest after `=` (a flag given one is refused); `args/args.md` has each
//! one's contract. They may come between the positionals, and the last
//! of a repeated one wins. Arguments are bytes: a positional and
//! `--root`'s value may be anything, another value must be UTF-8 (else it
//! "needs" one), an option that is not UTF-8 is refused, and after `--`
//! everything is a positional.
//!
//! Three readers share the pass, each argument offered to each, because
//! the grammar has three tiers, the higher one's answer standing over the
//! lower's wherever their arguments stand:
//!
//! 1. **The toolset** (`ToolsetArgs`): the first `--toolset` before the
//!    first `--` makes the invocation a toolset call, even where another
//!    flag expects a value. Its grammar reads every other argument
//!    (`--stdin`, one `--request-b64` taking the next argument, nothing
//!    else), and its refusal is a usage text (exit 2, no result line).
//! 2. **The patch flags** (`PatchFlags`): `--patch`, `--patch-b64 B64` and
//!    `--patch-strict` are taken out of the arguments before the first
//!    `--` wherever they stand (`--root --patch` is a `--root` with no
//!    value); their first refusal (a second patch flag, a B64 that is
//!    missing or not base64) answers.
//! 3. **The edit grammar** (`EditArgs`) reads what is left: its first
//!    refusal, or help or version, answers as soon as read (an error
//!    before `--help` wins). At the end: a value still owed is missing,
//!    `--diff` needs `--report`, the request comes from one input of
//!    `--stdin`, `--request-b64`, `--patch` and `--patch-b64` (a conflict
//!    names both), which is the whole request (no PATH, `--replace-all`
//!    or `--at-line` beside it), and the positionals make the edit.
//!
//! Written by hand: the readers need the raw arguments (an option lexer
//! such as lexopt pairs an option with the next argument before the patch
//! flags could be taken out of them), and size is a feature of a binary
//! uploaded into containers (the static x86_64 binary is 8,192 bytes
//! smaller than with lexopt's loop; clap without default features measured
//! +152 KiB). Every refusal is one `invalid_argument` result line (the
//! toolset's, its usage text), never a usage dump.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;

use crate::args::b64;
use crate::protocol::{ErrorKind, Failure};
use crate::request::{EditOptions, Request};
use crate::toolset::TOOLSET;

mod edit;

use edit::EditArgs;

/// What argv asks for.
#[derive(Debug, PartialEq, Eq)]
pub enum Argv {
    /// `-h`, `--help`.
    Help,
    /// `-V`, `--version`.
    Version,
    /// An edit given whole in argv.
    Edit(Request),
    /// A request read from one input, with the options argv gave.
    Body {
        /// Where the request is.
        input: Input,
        /// The edit options.
        options: EditOptions,
        /// `--max-request-bytes`, or the default: the bound on stdin.
        max_request_bytes: u64,
        /// `--patch-strict`.
        strict: bool,
    },
    /// `--toolset`: Anthropic's tools, their own grammar.
    Toolset(Toolset),
}

/// Where a [`Argv::Body`]'s request is.
#[derive(Debug, PartialEq, Eq)]
pub enum Input {
    /// `--stdin`: a JSON request on standard input.
    Stdin,
    /// `--request-b64`: the JSON request, decoded.
    Json(Vec<u8>),
    /// `--patch`: a patch text on standard input.
    Patch,
    /// `--patch-b64`: the patch text, decoded.
    PatchText(Vec<u8>),
}

/// A `--toolset` invocation's arguments.
#[derive(Debug, PartialEq, Eq)]
pub enum Toolset {
    /// The call is on standard input.
    Stdin,
    /// `--request-b64`: the call, decoded.
    Json(Vec<u8>),
    /// Why the arguments are no call.
    Usage(String),
}

/// The options that take a value, and what the value is ("needs X").
pub const VALUES: [(&str, &str); 7] = [
    ("--at-line", "LINE"),
    ("--lock-timeout", "SECONDS"),
    ("--root", "DIR"),
    ("--request-b64", "B64"),
    ("--expect-sha256", "HEX"),
    ("--eol", "lf|preserve"),
    ("--max-request-bytes", "N"),
];

/// The options that take no value.
const FLAGS: [&str; 9] = [
    "--help",
    "--version",
    "--replace-all",
    "--dry-run",
    "--report",
    "--diff",
    "--fsync",
    "--hints",
    "--stdin",
];

/// Reads argv (without the program name) in one pass; `env_root` is
/// `AS_EDIT_ROOT`. Reads no stdin: an [`Input`] or [`Toolset`] says
/// where the request is.
#[cfg_attr(as_edit_small, optimize(size))]
pub fn read(args: &[OsString], env_root: Option<OsString>) -> Result<Argv, Failure> {
    let mut toolset = ToolsetArgs::default();
    let mut patch = PatchFlags::default();
    let mut edit = EditArgs::new(env_root);
    for a in args {
        toolset.take(a.as_bytes());
        if !patch.take(a) {
            edit.take(a);
        }
    }
    if let Some(t) = toolset.end() {
        return Ok(Argv::Toolset(t));
    }
    let (input, strict) = patch.end()?;
    edit.end(input, strict)
}

/// `--patch-strict` given for a request that is no patch.
pub fn not_a_patch() -> Failure {
    invalid("--patch-strict applies to patches (--patch, --patch-b64, or a patch request)")
}

fn invalid(detail: impl Into<String>) -> Failure {
    Failure::new(ErrorKind::InvalidArgument, detail)
}

/// The toolset's reading: its `--toolset NAME`, and its grammar over every
/// other argument.
#[derive(Default)]
struct ToolsetArgs<'a> {
    /// A `--` was read: a `--toolset` after it is no option.
    dashdash: bool,
    /// The first `--toolset`, once read: its name (None while it is owed).
    found: Option<Option<&'a [u8]>>,
    /// A `--request-b64` was read: its value is owed.
    b64_next: bool,
    b64: Option<&'a [u8]>,
    /// The first argument the grammar refuses.
    bad: Option<&'a [u8]>,
}

impl<'a> ToolsetArgs<'a> {
    fn take(&mut self, a: &'a [u8]) {
        if self.found == Some(None) {
            self.found = Some(Some(a));
            return;
        }
        if self.found.is_none() && !self.dashdash {
            if a == b"--toolset" {
                self.found = Some(None);
                return;
            }
            if let Some(name) = a.strip_prefix(b"--toolset=") {
                self.found = Some(Some(name));
                return;
            }
        }
        self.dashdash |= a == b"--";
        if self.bad.is_some() {
        } else if std::mem::take(&mut self.b64_next) {
            self.b64 = Some(a);
        } else {
            match a {
                b"--stdin" => {}
                b"--request-b64" if self.b64.is_none() => self.b64_next = true,
                _ => self.bad = Some(a),
            }
        }
    }

    /// The call, if a `--toolset` was read.
    #[cfg_attr(as_edit_small, optimize(size))]
    fn end(self) -> Option<Toolset> {
        let usage = |why: String| Some(Toolset::Usage(why));
        let Some(name) = self.found? else {
            return usage("--toolset needs a name".into());
        };
        if name != TOOLSET.as_bytes() {
            return usage(format!(
                "unknown toolset {:?} (this binary has {TOOLSET})",
                String::from_utf8_lossy(name)
            ));
        }
        // A last `--request-b64` has no value to take: it is refused.
        let owed = self.b64_next.then_some(&b"--request-b64"[..]);
        if let Some(a) = self.bad.or(owed) {
            return usage(format!(
                "--toolset takes only --stdin or --request-b64 B64, not {:?}",
                String::from_utf8_lossy(a)
            ));
        }
        Some(match self.b64.map(b64::decode) {
            Some(Ok(json)) => Toolset::Json(json),
            Some(Err(e)) => Toolset::Usage(format!("--request-b64: {e}")),
            None => Toolset::Stdin,
        })
    }
}

/// The patch flags' reading, before the first `--`.
#[derive(Default)]
struct PatchFlags {
    /// A `--` was read: the rest is the edit grammar's.
    ended: bool,
    /// A `--patch-b64` was read: its value is owed.
    b64_next: bool,
    input: Option<Input>,
    strict: bool,
    /// The first refusal: it stands, and nothing more is read.
    refused: Option<Failure>,
}

impl PatchFlags {
    /// Reads `a` if it is the patch flags' (then the edit grammar does not).
    #[cfg_attr(as_edit_small, optimize(size))]
    fn take(&mut self, a: &OsStr) -> bool {
        if self.ended || self.refused.is_some() {
            return !self.ended;
        }
        let value = if std::mem::take(&mut self.b64_next) {
            a.to_str()
        } else {
            let Some(s) = a.to_str() else { return false };
            let inline = s.strip_prefix("--patch-b64=");
            let flag = match s {
                "--" => {
                    self.ended = true;
                    return false;
                }
                "--patch-strict" => {
                    self.strict = true;
                    return true;
                }
                "--patch" | "--patch-b64" => s,
                _ if inline.is_some() => "--patch-b64",
                _ => return false,
            };
            if let Some(given) = &self.input {
                // Which one would win is a guess; the caller meant one patch.
                let given = input_flag(given);
                self.refused = Some(invalid(match given == flag {
                    true => format!("give {flag} once"),
                    false => format!("give one of {given} and {flag}"),
                }));
                return true;
            }
            match (flag, inline) {
                ("--patch", _) => {
                    self.input = Some(Input::Patch);
                    return true;
                }
                (_, None) => {
                    self.b64_next = true;
                    return true;
                }
                (_, inline) => inline,
            }
        };
        let text = value.map(|v| b64::decode(v.as_bytes()));
        match text {
            Some(Ok(text)) => self.input = Some(Input::PatchText(text)),
            Some(Err(e)) => {
                self.refused = Some(invalid(format!("--patch-b64 is not valid base64 ({e})")))
            }
            None => self.refused = Some(invalid("--patch-b64 needs B64")),
        }
        true
    }

    /// The patch input, if any, and `--patch-strict`; or the refusal.
    fn end(self) -> Result<(Option<Input>, bool), Failure> {
        match self.refused {
            Some(f) => Err(f),
            None if self.b64_next => Err(invalid("--patch-b64 needs B64")),
            None => Ok((self.input, self.strict)),
        }
    }
}

/// The flag that names an input.
fn input_flag(input: &Input) -> &'static str {
    match input {
        Input::Stdin => "--stdin",
        Input::Json(_) => "--request-b64",
        Input::Patch => "--patch",
        Input::PatchText(_) => "--patch-b64",
    }
}

#[cfg(test)]
mod tests {
    use std::ffi::OsString;
    use std::os::unix::ffi::OsStringExt;

    use crate::protocol::{self, Failure};

    fn read(v: &[&str]) -> Result<super::Argv, Option<String>> {
        let args: Vec<OsString> = v.iter().map(OsString::from).collect();
        super::read(&args, None).map_err(|f| f.detail)
    }

    /// The rules between the tiers, as the module docs give them.
    #[test]
    fn a_higher_tier_answers_wherever_its_arguments_stand() {
        use super::{Argv, Toolset};
        let toolset = crate::toolset::TOOLSET;
        let usage = |why: &str| Ok(Argv::Toolset(Toolset::Usage(why.into())));
        // A --toolset stands over a refusal before it, even in a value's place.
        assert_eq!(
            read(&["--bogus", "--toolset", toolset]),
            usage("--toolset takes only --stdin or --request-b64 B64, not \"--bogus\"")
        );
        assert_eq!(
            read(&["--request-b64", "--toolset", toolset, "e30="]),
            Ok(Argv::Toolset(Toolset::Json(b"{}".to_vec())))
        );
        // After `--` it is a positional.
        assert_eq!(
            read(&["--", "--toolset", toolset]),
            Err(Some(
                "2 positional arguments: expected PATH OLD_B64 NEW_B64 [true|false], or PATH \
                 followed by OLD NEW true|false triples"
                    .into()
            ))
        );
        // A patch flag is taken out wherever it stands, and its refusal
        // stands over the edit grammar's answer.
        assert_eq!(
            read(&["--root", "--patch"]),
            Err(Some("--root needs DIR".into()))
        );
        assert_eq!(
            read(&["--help", "--patch", "--patch"]),
            Err(Some("give --patch once".into()))
        );
        // A conflict with --stdin names the flag.
        assert_eq!(
            read(&["--patch-b64", "YQ==", "--stdin"]),
            Err(Some("give one of --patch-b64 and --stdin".into()))
        );
    }

    /// The argv intake as it was: three passes, each over the arguments the
    /// one before left (`--toolset` hand-scanned, then the patch flags taken
    /// out, then lexopt over the rest). The oracle of the one pass, kept
    /// verbatim; nothing ships it.
    mod three_passes {
        use std::ffi::{OsStr, OsString};
        use std::io::Read;
        use std::os::unix::ffi::OsStrExt;
        use std::path::PathBuf;

        use crate::args::{b64, decimal, positional_request, seconds, DEFAULT_MAX_REQUEST_BYTES};
        use crate::dispatch::{json, read_stdin, Request};
        use crate::protocol::{ErrorKind, Failure};
        use crate::request::{EditOptions, Eol};
        use crate::toolset::{Call, MAX_STDIN, TOOLSET};

        #[derive(Debug, PartialEq, Eq)]
        enum Invocation {
            Help,
            Version,
            Edit(crate::request::Request),
            Stdin {
                options: EditOptions,
                max_request_bytes: u64,
            },
            RequestB64 {
                options: EditOptions,
                json: Vec<u8>,
            },
        }

        /// `dispatch::parse` without the argv0 `apply_patch` mode.
        pub fn parse(
            args: &[OsString],
            env_root: Option<OsString>,
            stdin: &mut dyn Read,
        ) -> Result<Request, Failure> {
            if let Some(call) = toolset(args, stdin) {
                return Ok(Request::Toolset(call));
            }
            let (source, strict, args) = patch_flags(args)?;
            let req = match edit_grammar(&args, env_root, flag(&source))? {
                Invocation::Help => return Ok(Request::Help),
                Invocation::Version => return Ok(Request::Version),
                Invocation::Edit(r) => Request::Edit(r),
                Invocation::Stdin {
                    options,
                    max_request_bytes,
                } => match source {
                    Some(Source::Bytes(text)) => Request::PatchText {
                        text,
                        options,
                        strict,
                    },
                    Some(Source::Stdin) => Request::PatchText {
                        text: read_stdin(stdin, max_request_bytes)?,
                        options,
                        strict,
                    },
                    None => json(read_stdin(stdin, max_request_bytes)?, options, strict)?,
                },
                Invocation::RequestB64 { options, json: j } => json(j, options, strict)?,
            };
            match req {
                Request::PatchText { .. } | Request::PatchOps { .. } => Ok(req),
                _ if strict => Err(Failure::new(
                    ErrorKind::InvalidArgument,
                    "--patch-strict applies to patches (--patch, --patch-b64, or a patch request)",
                )),
                _ => Ok(req),
            }
        }

        fn toolset(args: &[OsString], stdin: &mut dyn Read) -> Option<Call> {
            let end = args
                .iter()
                .position(|a| a.as_encoded_bytes() == b"--")
                .unwrap_or(args.len());
            let pos = args[..end].iter().position(|a| {
                let a = a.as_encoded_bytes();
                a == b"--toolset" || a.starts_with(b"--toolset=")
            })?;
            let usage = |why: String| Some(Call::Usage(why));
            let mut rest: Vec<&[u8]> = args.iter().map(|a| a.as_encoded_bytes()).collect();
            let name: &[u8] = if rest[pos] == b"--toolset" {
                if pos + 1 >= rest.len() {
                    return usage("--toolset needs a name".into());
                }
                rest.remove(pos + 1)
            } else {
                &rest[pos][b"--toolset=".len()..]
            };
            if name != TOOLSET.as_bytes() {
                return usage(format!(
                    "unknown toolset {:?} (this binary has {TOOLSET})",
                    String::from_utf8_lossy(name)
                ));
            }
            rest.remove(pos);
            let mut b64 = None;
            let mut i = 0;
            while i < rest.len() {
                match rest[i] {
                    b"--stdin" => {}
                    b"--request-b64" if i + 1 < rest.len() && b64.is_none() => {
                        i += 1;
                        b64 = Some(rest[i]);
                    }
                    a => {
                        return usage(format!(
                            "--toolset takes only --stdin or --request-b64 B64, not {:?}",
                            String::from_utf8_lossy(a)
                        ))
                    }
                }
                i += 1;
            }
            Some(match b64 {
                Some(b) => match b64::decode(b) {
                    Ok(j) => Call::Json(j),
                    Err(e) => Call::Usage(format!("--request-b64: {e}")),
                },
                None => {
                    let mut buf = Vec::new();
                    match stdin.take(MAX_STDIN as u64 + 1).read_to_end(&mut buf) {
                        Ok(n) if n > MAX_STDIN => Call::Usage(format!(
                            "the request on stdin is over {MAX_STDIN} bytes (64 MiB), the bound of a \
                             tool call: nothing was done; send a smaller one (write a large file in parts)"
                        )),
                        Ok(_) => Call::Json(buf),
                        Err(e) => Call::Usage(format!("reading the request: {e}")),
                    }
                }
            })
        }

        enum Source {
            Stdin,
            Bytes(Vec<u8>),
        }

        #[allow(clippy::type_complexity)]
        fn patch_flags(
            args: &[OsString],
        ) -> Result<(Option<Source>, bool, Vec<OsString>), Failure> {
            let (mut src, mut strict, mut rest) = (None, false, Vec::new());
            let mut it = args.iter();
            while let Some(a) = it.next() {
                let b64 = match a.to_str() {
                    Some("--") => {
                        rest.push(a.clone());
                        rest.extend(it.by_ref().cloned());
                        break;
                    }
                    Some("--patch") if src.is_some() => return Err(twice(&src, "--patch")),
                    Some("--patch") => {
                        src = Some(Source::Stdin);
                        continue;
                    }
                    Some("--patch-strict") => {
                        strict = true;
                        continue;
                    }
                    Some("--patch-b64") => it.next().and_then(|v| v.to_str()),
                    Some(s) if s.starts_with("--patch-b64=") => Some(&s[12..]),
                    _ => {
                        rest.push(a.clone());
                        continue;
                    }
                };
                if src.is_some() {
                    return Err(twice(&src, "--patch-b64"));
                }
                let b64 = b64.ok_or_else(|| invalid("--patch-b64 needs B64"))?;
                let bytes = b64::decode(b64.as_bytes())
                    .map_err(|e| invalid(format!("--patch-b64 is not valid base64 ({e})")))?;
                src = Some(Source::Bytes(bytes));
            }
            Ok((src, strict, rest))
        }

        fn flag(src: &Option<Source>) -> Option<&'static str> {
            src.as_ref().map(|s| match s {
                Source::Stdin => "--patch",
                Source::Bytes(_) => "--patch-b64",
            })
        }

        fn twice(src: &Option<Source>, now: &str) -> Failure {
            match flag(src) {
                Some(f) if f == now => invalid(format!("give {now} once")),
                f => invalid(format!("give one of {} and {now}", f.unwrap_or(now))),
            }
        }

        fn invalid(detail: impl Into<String>) -> Failure {
            Failure::new(ErrorKind::InvalidArgument, detail)
        }

        /// `args::parse` as it was: lexopt's loop.
        fn edit_grammar(
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
                    Ok(Some(lexopt::Arg::Short(c))) => format!("-{c}"),
                    Ok(Some(lexopt::Arg::Long(l))) => format!("--{l}"),
                    Err(e) => return Err(invalid(e.to_string())),
                };
                let name = name.as_str();
                if is_flag(name) {
                    if let Some(v) = p.optional_value() {
                        let v = v.to_string_lossy();
                        return Err(invalid(format!("{name} takes no value, got {v:?}")));
                    }
                }
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
                        let v = p.value().map_err(|_| invalid("--root needs DIR"))?;
                        if v.is_empty() {
                            return Err(invalid("--root is empty"));
                        }
                        opts.root = Some(PathBuf::from(v));
                    }
                    "--request-b64" => {
                        let v = p.value().map_err(|_| invalid("--request-b64 needs B64"))?;
                        let json = b64::decode(v.as_bytes()).map_err(|e| {
                            invalid(format!("--request-b64 is not valid base64 ({e})"))
                        })?;
                        request_b64 = Some(json);
                    }
                    "--expect-sha256" => {
                        let v = value("HEX")?;
                        opts.expect_sha256 =
                            Some(crate::hex::decode_sha256(&v).ok_or_else(|| {
                                invalid("--expect-sha256 takes 64 lowercase hex digits")
                            })?);
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
                        let n = match v.parse::<u64>() {
                            _ if !decimal(&v) => None,
                            Err(e) if *e.kind() == std::num::IntErrorKind::PosOverflow => {
                                Some(u64::MAX)
                            }
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
                        None => format!(
                            "--at-line is per edit; with {source} give \"at_line\" in the edit"
                        ),
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
    }

    /// A request as read, a refusal as the line it prints.
    fn shown(r: Result<crate::dispatch::Request, Failure>) -> String {
        match r {
            Ok(r) => format!("{r:?}"),
            Err(f) => format!(
                "{:?}",
                (protocol::failure_line(&f, None), f.kind.exit_code())
            ),
        }
    }

    /// Argument vectors of every form: each flag bare, with `=`, with its
    /// value missing, valid and not; `--` anywhere; repeats; unknown and
    /// non-UTF-8 options; positionals, empty and not UTF-8; each whole
    /// request's arguments with other arguments put in among them.
    fn generated() -> Vec<Vec<Vec<u8>>> {
        let b64 = |s: &[u8]| crate::args::b64::encode(s).into_bytes();
        let toolset = crate::toolset::TOOLSET.as_bytes();
        let edit_json = br#"{"path":"f","edits":[{"old":"a","new":"b"}]}"#;
        let tool_json = br#"{"name":"read","input":{"file_path":"f"}}"#;
        let patch = b"*** Begin Patch\n*** Delete File: f\n*** End Patch\n";
        let [_, _, _, _, ops, files, tool] = STDINS;
        let mut tokens: Vec<Vec<u8>> = [
            &b"--toolset"[..],
            b"--toolset=",
            b"--toolset=x",
            b"--toolset=\xff",
            b"--toolsetx",
            b"x",
            b"--stdin",
            b"--stdin=",
            b"--request-b64",
            b"--request-b64=!",
            b"!",
            b"--patch",
            b"--patch=x",
            b"--patch-b64",
            b"--patch-b64=",
            b"--patch-b64=\xff",
            b"--patch-strict",
            b"--patch-strict=",
            b"--",
            b"-",
            b"-h",
            b"-V",
            b"-hV",
            b"-h=x",
            b"-x",
            b"-x=1",
            b"-=",
            b"--help",
            b"--version",
            b"--help=x",
            b"--version=",
            b"--replace-all",
            b"--replace-all=false",
            b"--dry-run",
            b"--report",
            b"--diff",
            b"--fsync",
            b"--hints",
            b"--at-line",
            b"--at-line=2",
            b"--at-line=0",
            b"2",
            b"--lock-timeout",
            b"--lock-timeout=1.5",
            b"--lock-timeout=-1",
            b"--root",
            b"--root=",
            b"--root=/r",
            b"/r",
            b"--expect-sha256",
            b"--expect-sha256=00",
            b"--eol",
            b"--eol=preserve",
            b"--eol=crlf",
            b"preserve",
            b"--max-request-bytes",
            b"--max-request-bytes=5",
            b"--max-request-bytes=0",
            b"5",
            b"f",
            b"YQ==",
            b"Yg==",
            b"/w==",
            b"true",
            b"false",
            b"",
            b"\xff",
            b"-\xff",
            b"--\xff",
            b"--root=\xff",
            b"--bogus",
            b"--bogus=1",
            b"--=x",
            b"---x",
        ]
        .iter()
        .map(|t| t.to_vec())
        .collect();
        tokens.push(toolset.to_vec());
        tokens.push([&b"--toolset="[..], toolset].concat());
        tokens.push([b"--expect-sha256=".to_vec(), vec![b'a'; 64]].concat());
        tokens.push(vec![b'a'; 64]);
        for j in [&edit_json[..], tool_json, patch, ops, files, tool] {
            tokens.push(b64(j));
            tokens.push([b"--request-b64=".to_vec(), b64(j)].concat());
            tokens.push([b"--patch-b64=".to_vec(), b64(j)].concat());
        }
        // Each request whole (and none), as the arguments to build on.
        let cores: Vec<Vec<Vec<u8>>> = vec![
            vec![],
            vec![b"f".to_vec(), b"YQ==".to_vec(), b"Yg==".to_vec()],
            vec![
                b"f".to_vec(),
                b"YQ==".to_vec(),
                b"Yg==".to_vec(),
                b"true".to_vec(),
            ],
            [
                &b"--"[..],
                b"f",
                b"YQ==",
                b"Yg==",
                b"false",
                b"Yg==",
                b"YQ==",
                b"true",
            ]
            .iter()
            .map(|t| t.to_vec())
            .collect(),
            vec![b"--stdin".to_vec()],
            vec![b"--request-b64".to_vec(), b64(edit_json)],
            vec![b"--request-b64".to_vec(), b64(patch)],
            vec![b"--patch".to_vec()],
            vec![b"--patch-b64".to_vec(), b64(patch)],
            vec![b"--patch-strict".to_vec(), b"--patch".to_vec()],
            vec![b"--toolset".to_vec(), toolset.to_vec()],
            vec![b"--toolset".to_vec(), toolset.to_vec(), b"--stdin".to_vec()],
            vec![
                b"--toolset".to_vec(),
                toolset.to_vec(),
                b"--request-b64".to_vec(),
                b64(tool_json),
            ],
        ];
        let mut out: Vec<Vec<Vec<u8>>> = Vec::new();
        // Every vector of one and two tokens.
        for a in &tokens {
            out.push(vec![a.clone()]);
            for b in &tokens {
                out.push(vec![a.clone(), b.clone()]);
            }
        }
        // A fixed xorshift: the same vectors on every run.
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        for _ in 0..60_000 {
            let mut v = cores[next(cores.len())].clone();
            for _ in 0..next(5) {
                let at = next(v.len() + 1);
                v.insert(at, tokens[next(tokens.len())].clone());
            }
            out.push(v);
        }
        out
    }

    /// What the stdin holds for each vector: nothing, an edit request, a
    /// toolset call, a patch, the Responses API's operations, a
    /// transaction, a protocol-4 op.
    const STDINS: [&[u8]; 7] = [
        b"",
        br#"{"path":"f","edits":[{"old":"a","new":"b"}]}"#,
        br#"{"name":"read","input":{"file_path":"f"}}"#,
        b"*** Begin Patch\n*** Delete File: f\n*** End Patch\n",
        br#"{"operations":[{"type":"delete_file","path":"f"}]}"#,
        br#"{"files":[{"op":"delete","path":"f"}]}"#,
        br#"{"op":"stat","paths":["f"]}"#,
    ];

    #[test]
    fn the_one_pass_reads_every_argv_as_the_three_passes_read_it() {
        let mut kinds = std::collections::BTreeMap::new();
        for (n, v) in generated().into_iter().enumerate() {
            let args: Vec<OsString> = v.into_iter().map(OsString::from_vec).collect();
            let stdin = STDINS[n % STDINS.len()];
            for root in [None, Some(OsString::new()), Some(OsString::from("/e"))] {
                let want = shown(three_passes::parse(&args, root.clone(), &mut &stdin[..]));
                let got = shown(crate::dispatch::parse(None, &args, root, &mut &stdin[..]));
                assert_eq!(got, want, "{args:?}");
                let kind = match want.split(['(', ' ']).next().unwrap_or("") {
                    _ if want.starts_with("(\"__RESULT__") => "refused",
                    "Toolset" => want.split('(').nth(1).unwrap_or(""),
                    k => k,
                };
                *kinds.entry(kind.to_owned()).or_insert(0) += 1;
            }
        }
        // Every request was reached, and refusals.
        for k in [
            "Help",
            "Version",
            "Edit",
            "PatchText",
            "PatchOps",
            "Files",
            "Tool",
            "Usage",
            "Json",
            "refused",
        ] {
            assert!(kinds.contains_key(k), "{k} never reached: {kinds:?}");
        }
    }
}
