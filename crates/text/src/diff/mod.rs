//! Unified diffs for `--report --diff` (pure; no I/O).
//!
//! One edit: [`Builder`] is fed the engine's stream of unchanged text and
//! replacements (OLD → NEW) as it goes, and builds the hunks around each
//! replacement with a few lines of context, in bounded memory: the last
//! lines before a change, the changed lines themselves (each side kept up to
//! `SIDE_KEEP` bytes), and the hunk being built (up to the output cap). No
//! copy of either text is kept, whatever the file size.
//!
//! A batch (later edits may rewrite earlier ones) is diffed by [`unified`]
//! over both whole texts, which the engine keeps only up to a bound.
//!
//! Lines are compared with Myers' algorithm after trimming the common prefix
//! and suffix. Past a step bound the middle is shown as removals then
//! additions: still a correct diff, just not minimal, and the time and
//! memory stay bounded.

/// The diff in the result line is at most this long (cut at a line end).
pub const CAP: usize = 64 * 1024;
/// Lines of context around each change.
pub const CONTEXT: usize = 3;

mod builder;
mod hunk;
mod lines;

pub use builder::Builder;
pub use lines::unified;

/// The file name for the `---`/`+++` header lines. A name with a control
/// character, `"` or `\\`, or that is not UTF-8, would break the header
/// line (a newline) or be misread, so it is quoted C-style as git does:
/// `"…"` with `\\a \\b \\t \\n \\v \\f \\r \\" \\\\` and every other byte
/// below 0x20, 0x7f and above as a three-digit octal escape (`patch` and
/// `git apply` read it back). Any other name is written as it is.
#[cfg_attr(as_edit_small, optimize(size))]
pub fn quote_name(name: &[u8]) -> String {
    let needs = std::str::from_utf8(name).is_err()
        || name
            .iter()
            .any(|&b| b < 0x20 || b == 0x7f || b == b'"' || b == b'\\');
    if !needs {
        return String::from_utf8_lossy(name).into_owned();
    }
    let mut out = String::with_capacity(name.len() + 2);
    out.push('"');
    for &b in name {
        match b {
            0x07 => out.push_str("\\a"),
            0x08 => out.push_str("\\b"),
            b'\t' => out.push_str("\\t"),
            b'\n' => out.push_str("\\n"),
            0x0b => out.push_str("\\v"),
            0x0c => out.push_str("\\f"),
            b'\r' => out.push_str("\\r"),
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\{b:03o}")),
        }
    }
    out.push('"');
    out
}

/// Appends the whole lines of `text` that fit within `cap` bytes in total.
/// Returns false when some of `text` was left out. Cutting after a `\n`
/// byte never splits a UTF-8 character.
#[cfg_attr(as_edit_small, optimize(size))]
fn push_capped(out: &mut Vec<u8>, text: &[u8], cap: usize) -> bool {
    if out.len() + text.len() <= cap {
        out.extend_from_slice(text);
        return true;
    }
    let room = cap.saturating_sub(out.len()).min(text.len());
    let keep = memchr::memrchr(b'\n', &text[..room]).map_or(0, |p| p + 1);
    out.extend_from_slice(&text[..keep]);
    false
}

/// The diff's bytes are cut only after `\n`, so they stay UTF-8; a lossy
/// conversion is only a guard.
fn into_string(b: Vec<u8>) -> String {
    String::from_utf8(b).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// A hunk header range. Unified format: an empty range names the line before it.
fn range(first: u64, len: u64) -> String {
    if len == 0 {
        format!("{first},0")
    } else {
        format!("{},{len}", first + 1)
    }
}

/// The tests' strict `patch`, shared with the integration tests.
#[cfg(test)]
#[path = "../../../../tests/support/apply_diff.rs"]
mod apply_diff;

#[cfg(test)]
mod tests {
    use super::*;

    /// break10 finding 6: names that would break the header are quoted as
    /// git quotes them; ordinary names (UTF-8 included) are unchanged.
    #[test]
    fn header_names_are_quoted_like_git() {
        assert_eq!(quote_name(b"/w/src/app.py"), "/w/src/app.py");
        assert_eq!(quote_name("/w/caf\u{e9} x".as_bytes()), "/w/caf\u{e9} x");
        assert_eq!(quote_name(b"/tmp/nl\nname"), r#""/tmp/nl\nname""#);
        assert_eq!(
            quote_name(b"/a\tb\rc\x07\x08\x0b\x0c\x01\x7f\"q\"\\z"),
            r#""/a\tb\rc\a\b\v\f\001\177\"q\"\\z""#
        );
        // Not UTF-8: the whole name is quoted, every byte >= 0x80 in octal.
        assert_eq!(quote_name(b"/x\xff\xc3\xa9"), r#""/x\377\303\251""#);
    }

    fn piece() -> impl proptest::strategy::Strategy<Value = &'static str> {
        proptest::sample::select(vec![
            "a", "b", "ab", "\n", "\n", "\n\n", "é", "😀", "€ ", "xyz",
        ])
    }

    pub(super) fn text(max: usize) -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::strategy::Strategy;
        proptest::collection::vec(piece(), 0..max).prop_map(|v| v.concat())
    }
}
