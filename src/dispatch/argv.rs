//! The argv forms that are not the edit grammar, recognised before it:
//! `--toolset NAME` (which takes no other flag) and the patch flags
//! (`--patch`, `--patch-b64 B64`, `--patch-strict`), taken out of argv
//! before lexopt reads the rest (`args::parse`, told which patch flag was
//! given: like `--stdin`, it is the whole request, and a conflict names
//! it). The argv0 `apply_patch` mode's own grammar is `patch::codex::read`.

use std::ffi::OsString;
use std::io::Read;

use crate::protocol::{ErrorKind, Failure};
use crate::toolset::{Call, MAX_STDIN, TOOLSET};

/// `--toolset NAME [--stdin] [--request-b64 B64]`: `None` when the
/// arguments do not ask for a toolset at all.
#[cfg_attr(as_edit_small, optimize(size))]
pub fn toolset(args: &[OsString], stdin: &mut dyn Read) -> Option<Call> {
    // Only an option: after `--` a `--toolset` is an edit's path.
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
        Some(b) => match crate::args::b64::decode(b) {
            Ok(j) => Call::Json(j),
            Err(e) => Call::Usage(format!("--request-b64: {e}")),
        },
        None => {
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
    })
}

/// Where the patch text comes from.
pub enum Source {
    /// `--patch`: standard input.
    Stdin,
    /// `--patch-b64`: decoded from argv.
    Bytes(Vec<u8>),
}

/// The patch flags taken out of `args` (before a `--`): the source, if
/// any, whether `--patch-strict` was given, and the other arguments, which
/// `args::parse` reads with the source's flag named (it is the whole
/// request, as `--stdin` is, and a conflict names it).
#[cfg_attr(as_edit_small, optimize(size))]
pub fn patch_flags(args: &[OsString]) -> Result<(Option<Source>, bool, Vec<OsString>), Failure> {
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
            // Which one would win is a guess; the caller meant one patch.
            return Err(twice(&src, "--patch-b64"));
        }
        let b64 = b64.ok_or_else(|| invalid("--patch-b64 needs B64".into()))?;
        let bytes = crate::args::b64::decode(b64.as_bytes())
            .map_err(|e| invalid(format!("--patch-b64 is not valid base64 ({e})")))?;
        src = Some(Source::Bytes(bytes));
    }
    Ok((src, strict, rest))
}

/// The flag that gives `src`, for `args::parse` and messages.
pub fn flag(src: &Option<Source>) -> Option<&'static str> {
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

fn invalid(detail: String) -> Failure {
    Failure::new(ErrorKind::InvalidArgument, detail)
}
