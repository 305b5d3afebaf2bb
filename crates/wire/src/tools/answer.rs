//! The bounded answer writer: no result line of a toolset op exceeds the
//! request's `max_bytes`.
//!
//! The bound is measured on the line as written: `__RESULT__`, the JSON
//! with every escape (non-ASCII as `\uXXXX`, as every result line is), and
//! the final `\n`. A list that would not fit is cut after its last whole
//! entry; the answer then says `"truncated":true` and `"next":{…}`, the
//! request fields that continue it (merge them into the request and send
//! it again). A read's text is cut after its last whole line the same way
//! (`read.rs`).
//!
//! The API, for every op that answers with a list (plain data and
//! functions, no I/O):
//!
//! - [`Page::new`]`(max_bytes, head, key)` starts `__RESULT__{` + `head` +
//!   `"key":[`; `head` is rendered fields, each ending in `,` (or empty);
//! - [`Page::push`]`(entry, reserve)` adds one rendered entry if the line
//!   still fits with `reserve` bytes left for what follows the list (the
//!   tail as it will be at most: render it with the final counts and the
//!   largest `next`); `false`, and nothing added, if not;
//! - [`Page::finish`]`(tail)` closes the list, appends `tail` (rendered
//!   fields, each starting with `,`) and `}\n`;
//! - [`json`] renders any `Serialize` value as ASCII JSON, [`push_str`]
//!   a string literal, [`str_len`] what a string literal takes;
//! - [`next`] renders `,"truncated":true,"next":{…}` (or `,"truncated":false`).
//!
//! Every byte count here is exact, so `finish`'s line never exceeds
//! `max_bytes` when every `push` was checked with a `reserve` no shorter
//! than the tail (a debug assertion says so).

use std::fmt::Write as _;

pub use crate::json::{char_len, json, push_char, push_str, str_len};

/// `max_bytes` when the request gives none.
pub const DEFAULT_MAX_BYTES: u64 = 262_144;
/// The largest `max_bytes` a request may give: 8 MiB.
pub const MAX_MAX_BYTES: u64 = 8 << 20;
/// The smallest: room for a few entries with long names. An entry that
/// does not fit even alone is refused (`invalid_argument`, naming the
/// size it needs), never cut or dropped.
pub const MIN_MAX_BYTES: u64 = 1024;

/// `,"truncated":false`, or `,"truncated":true,"next":{fields}` with each
/// field a request key and its number.
pub fn next(fields: Option<&[(&str, u64)]>) -> String {
    let Some(fields) = fields else {
        return ",\"truncated\":false".to_owned();
    };
    let mut out = ",\"truncated\":true,\"next\":{".to_owned();
    for (i, (k, v)) in fields.iter().enumerate() {
        let comma = if i > 0 { "," } else { "" };
        let _ = write!(out, "{comma}\"{k}\":{v}");
    }
    out.push('}');
    out
}

/// One result line holding a list, kept within `max_bytes`.
#[derive(Debug)]
pub struct Page {
    line: String,
    max: usize,
    kept: usize,
}

/// What follows the list's last entry besides the tail: `]`, `}`, `\n`.
const CLOSE: usize = 3;

impl Page {
    /// `__RESULT__{` + `head` + `"key":[`.
    pub fn new(max_bytes: u64, head: &str, key: &str) -> Page {
        let mut line = String::with_capacity(4096);
        line.push_str(crate::protocol::RESULT_PREFIX);
        line.push('{');
        line.push_str(head);
        let _ = write!(line, "\"{key}\":[");
        Page {
            line,
            max: max_bytes as usize,
            kept: 0,
        }
    }

    /// Whether an entry of `len` bytes fits with `reserve` bytes of tail.
    #[cfg_attr(as_edit_small, optimize(speed))]
    pub fn fits(&self, len: usize, reserve: usize) -> bool {
        let comma = usize::from(self.kept > 0);
        self.line.len() + comma + len + CLOSE + reserve <= self.max
    }

    /// Adds `entry` (rendered JSON) if it fits with `reserve` bytes of
    /// tail; `false`, and nothing added, if not.
    #[cfg_attr(as_edit_small, optimize(speed))]
    pub fn push(&mut self, entry: &str, reserve: usize) -> bool {
        if !self.fits(entry.len(), reserve) {
            return false;
        }
        if self.kept > 0 {
            self.line.push(',');
        }
        self.line.push_str(entry);
        self.kept += 1;
        true
    }

    /// How many entries were kept.
    pub fn kept(&self) -> usize {
        self.kept
    }

    /// The bytes an entry of `len` bytes would need, alone in a page
    /// with `reserve` bytes of tail: for the refusal of one that never fits.
    #[cfg_attr(as_edit_small, optimize(speed))]
    pub fn needs(&self, len: usize, reserve: usize) -> usize {
        self.line.len() - self.kept_len() + len + CLOSE + reserve
    }

    #[cfg_attr(as_edit_small, optimize(speed))]
    fn kept_len(&self) -> usize {
        // The entries start after the list's `[`.
        let open = self.line.find('[').map_or(self.line.len(), |i| i + 1);
        self.line.len() - open
    }

    /// The line: the list closed, `tail` (fields, each starting with `,`)
    /// and `}\n` appended.
    pub fn finish(mut self, tail: &str) -> String {
        self.line.push(']');
        self.line.push_str(tail);
        self.line.push_str("}\n");
        debug_assert!(self.line.len() <= self.max, "a reserve was short");
        self.line
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_page_keeps_whole_entries_within_the_bound() {
        let tail = next(Some(&[("offset", 2)]));
        // Exactly the line below: a third entry would pass the bound by 7 bytes.
        let mut p = Page::new(85, "\"total\":3,", "entries");
        assert!(p.push("\"aaaa\"", tail.len()));
        assert!(p.push("\"bbbb\"", tail.len()));
        assert!(!p.push("\"cccc\"", tail.len()));
        assert_eq!(p.kept(), 2);
        let line = p.finish(&tail);
        assert_eq!(
            line,
            "__RESULT__{\"total\":3,\"entries\":[\"aaaa\",\"bbbb\"],\"truncated\":true,\"next\":{\"offset\":2}}\n"
        );
        assert_eq!(line.len(), 85);
    }

    #[test]
    fn escapes_are_counted_as_written() {
        for s in [
            "a",
            "\"\\",
            "\n\t\r\u{8}\u{c}",
            "\u{1}\u{1f}\u{7f}",
            "é😀",
            "",
        ] {
            let mut out = String::new();
            push_str(&mut out, s);
            assert_eq!(out.len(), str_len(s), "{s:?}");
            assert!(out.is_ascii());
            assert_eq!(serde_json::from_str::<String>(&out).unwrap(), s);
        }
    }

    proptest! {
        /// Any string's literal is as long as counted, ASCII, and reads back.
        #[test]
        fn string_lengths_are_exact(s in any::<String>()) {
            let mut out = String::new();
            push_str(&mut out, &s);
            prop_assert_eq!(out.len(), str_len(&s));
            prop_assert!(out.is_ascii());
            prop_assert_eq!(serde_json::from_str::<String>(&out).unwrap(), s);
        }

        /// Whatever the bound, a page is valid JSON within it, holding a
        /// prefix of the entries.
        #[test]
        fn pages_stay_within_any_bound(
            names in proptest::collection::vec(any::<String>(), 0..40),
            max in 100u64..2000,
        ) {
            let tail = next(Some(&[("offset", u64::MAX)]));
            let mut p = Page::new(max, "", "entries");
            let mut kept = 0;
            for n in &names {
                if !p.push(&json(n), tail.len()) {
                    break;
                }
                kept += 1;
            }
            let line = p.finish(&next(Some(&[("offset", kept as u64)])));
            prop_assert!(line.len() as u64 <= max);
            let v: serde_json::Value =
                serde_json::from_str(line.strip_prefix("__RESULT__").unwrap()).unwrap();
            let got: Vec<String> = serde_json::from_value(v["entries"].clone()).unwrap();
            prop_assert_eq!(&got[..], &names[..kept]);
        }
    }
}
