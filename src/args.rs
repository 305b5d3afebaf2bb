//! The edit request's pieces: the positional form (the python3 script's
//! argv, plus opt-in options), the `--stdin` request's fast path, the
//! numbers' grammar, and the help and version texts.
//!
//! ```text
//! as-edit [OPTIONS] [--] PATH OLD_B64 NEW_B64 [true|false]
//! as-edit [OPTIONS] -- PATH OLD1 NEW1 ALL1 [OLD2 NEW2 ALL2 ...]
//! as-edit [OPTIONS] --stdin            (request as JSON on standard input)
//! ```
//! Argv itself, options included, is read in one pass by
//! `dispatch::argv`, which builds the positional request here.
#![doc = include_str!("args/args.md")]

use std::time::Duration;

mod fast_json;
mod positional;

pub(crate) use crate::b64;
use crate::protocol::{ErrorKind, Failure};
pub use fast_json::parse_fast;
pub use positional::decode_b64;
pub(crate) use positional::positional_request;
// The `--stdin` request is the wire's (crates/wire), under its old paths.
use as_edit_wire::stdin;
pub use stdin::{parse_single, parse_stdin_request};

/// The bound on a `--stdin` request when `--max-request-bytes` is not given.
pub const DEFAULT_MAX_REQUEST_BYTES: u64 = 64 << 20;

fn invalid(detail: impl Into<String>) -> Failure {
    Failure::new(ErrorKind::InvalidArgument, detail)
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
}
