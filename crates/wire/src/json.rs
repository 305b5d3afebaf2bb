//! ASCII JSON: how every result line writes its JSON. Non-ASCII
//! characters are escaped `\uXXXX` (a surrogate pair above the BMP), so
//! strict decoders in any runtime accept the line; string literals are
//! escaped as serde_json escapes them. [`json`] renders a `Serialize`
//! value, [`ascii`] escapes JSON text already rendered, [`push_str`] writes
//! a string literal straight into the line and [`str_len`]/[`char_len`]
//! say what it takes, so a bounded answer counts its bytes exactly.
//!
//! (serde_json's `Serializer`, which could escape as it writes, needs its
//! `std` feature, and that turns on memchr's runtime CPU detection: eight
//! `cpuid`s, 13 to 18 µs each in this project's VM, before the first
//! search.) These functions see every character of an answer (a grep's
//! lines, a read's text): they are built for speed in a crate built for
//! size.
//!
//! ```
//! use as_edit_wire::json::{json, push_str, str_len};
//!
//! assert_eq!(json(&("é", 1)), r#"["\u00e9",1]"#);
//! let mut line = String::new();
//! push_str(&mut line, "a\"\t😀");
//! assert_eq!(line, r#""a\"\t\ud83d\ude00""#);
//! assert_eq!(str_len("a\"\t😀"), line.len());
//! ```

use serde::Serialize;
use std::fmt::Write as _;

/// `value` as compact JSON, every non-ASCII character escaped `\uXXXX`
/// (a surrogate pair above the BMP), as the result line writes it.
pub fn json<T: Serialize + ?Sized>(value: &T) -> String {
    // Serializing plain strings, numbers and maps of them cannot fail.
    let text = serde_json::to_string(value).expect("answer serializes");
    let mut out = String::with_capacity(text.len());
    ascii(&mut out, &text);
    out
}

/// Appends JSON text `text` with every non-ASCII character escaped (JSON's
/// structure is ASCII, so what is not stands inside a string, where the
/// escape means the same character).
#[cfg_attr(as_edit_small, optimize(speed))]
pub fn ascii(out: &mut String, text: &str) {
    let mut rest = text;
    while let Some(i) = rest.find(|c: char| !c.is_ascii()) {
        out.push_str(&rest[..i]);
        let ch = rest[i..].chars().next().expect("a char at i");
        let mut units = [0u16; 2];
        for u in ch.encode_utf16(&mut units) {
            let _ = write!(out, "\\u{u:04x}");
        }
        rest = &rest[i + ch.len_utf8()..];
    }
    out.push_str(rest);
}

/// The bytes `c` takes inside an ASCII JSON string literal: serde_json's
/// escapes (`\"`, `\\`, `\n`, `\t`, `\r`, `\b`, `\f`, other controls as
/// `\u00XX`), non-ASCII as one or two `\uXXXX`.
#[cfg_attr(as_edit_small, optimize(speed))]
pub fn char_len(c: char) -> usize {
    match c {
        '"' | '\\' | '\n' | '\t' | '\r' | '\u{8}' | '\u{c}' => 2,
        '\0'..='\u{1f}' => 6,
        c if c.is_ascii() => 1,
        c => 6 * c.len_utf16(),
    }
}

/// The bytes `s` takes as an ASCII JSON string literal, quotes included.
#[cfg_attr(as_edit_small, optimize(speed))]
pub fn str_len(s: &str) -> usize {
    2 + s.chars().map(char_len).sum::<usize>()
}

/// Appends `s` as an ASCII JSON string literal, escaped as serde_json
/// escapes (non-ASCII as `\uXXXX`), straight into `out`: a read's 8 MiB
/// text is not copied twice more on its way (peak RSS).
#[cfg_attr(as_edit_small, optimize(speed))]
pub fn push_str(out: &mut String, s: &str) {
    out.reserve(str_len(s));
    out.push('"');
    let mut rest = s;
    while let Some(i) = rest.find(|c: char| char_len(c) != 1) {
        out.push_str(&rest[..i]);
        let c = rest[i..].chars().next().expect("a char at i");
        push_char(out, c);
        rest = &rest[i + c.len_utf8()..];
    }
    out.push_str(rest);
    out.push('"');
}

/// Appends `c` as it stands inside an ASCII JSON string literal
/// ([`char_len`] bytes).
#[cfg_attr(as_edit_small, optimize(speed))]
pub fn push_char(out: &mut String, c: char) {
    match c {
        '"' => out.push_str("\\\""),
        '\\' => out.push_str("\\\\"),
        '\n' => out.push_str("\\n"),
        '\t' => out.push_str("\\t"),
        '\r' => out.push_str("\\r"),
        '\u{8}' => out.push_str("\\b"),
        '\u{c}' => out.push_str("\\f"),
        // Other controls, and non-ASCII, as `\uXXXX` (DEL is plain ASCII).
        c if c.is_ascii() && c >= ' ' => out.push(c),
        c => {
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                let _ = write!(out, "\\u{u:04x}");
            }
        }
    }
}
