//! A JSON request's top-level keys, looked at once: one scan ([`kind`])
//! reads every key of the object, each value as the request that owns the
//! key reads it (a `patch` or `operations` as present-or-null, an `op` as
//! its name, anything else skipped), and says which request the text is;
//! the caller then parses it once, as that kind.
//!
//! Which kind wins for a text holding several kinds' keys, or for a text
//! that is not one JSON object, is a fixed order (the order the module
//! docs of `dispatch` give, which decides which refusal a malformed or
//! ambiguous request gets):
//!
//! 1. a patch request: one valid object with `patch` or `operations` not
//!    null, neither key twice;
//! 2. an `{"op"}` request: one valid object with `op` once and no `files`;
//!    or, when the text is not one valid object, holds `op` or `files`
//!    twice, or has an op whose name serde cannot read, a text that
//!    begins `{"op"` (refused in the op's words);
//! 3. a transaction: one valid object with `files` once; or, when the text
//!    is not one valid object or holds `files` twice, a text that begins
//!    `{"files"` (refused in the transaction's words);
//! 4. anything else is the single-file request (refused in its words).
//!
//! A key given twice makes its kind's reading refuse it (serde's
//! "duplicate field"), so the text falls to the next kind, exactly as the
//! kinds' own strict readers decide it.

use std::fmt;

use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, Visitor};

use crate::tools::OpName;

/// What the scan found: which request the text is.
#[derive(Debug, PartialEq, Eq)]
pub enum Kind {
    /// `{"patch"}` or `{"operations"}`: read by `patch::cli::read_json`.
    Patch,
    /// `{"op"}`: its name when it is a string (None: not a string, or a
    /// text begun as an op request that is not valid JSON).
    Op(Option<String>),
    /// `{"files"}`: a transaction.
    Files,
    /// The single-file request, or no request at all.
    Single,
}

/// The keys that decide, each counted (2: twice or more).
#[derive(Default)]
struct Keys {
    patch: u8,
    operations: u8,
    files: u8,
    op: u8,
    /// A `patch` or `operations` that is not null was seen.
    patch_given: bool,
    /// The last `op`'s name, if a string.
    op_name: Option<String>,
}

/// Which request `json` is (module docs).
#[cfg_attr(as_edit_small, optimize(size))]
pub fn kind(json: &[u8]) -> Kind {
    let text = std::str::from_utf8(json).ok();
    let named = text.and_then(|t| crate::strict_json::from_str::<Scan<true>>(t).ok());
    // An `op` whose name cannot be read (a string holding half a surrogate
    // pair, a number past f64) fails the op's reading only: the other
    // kinds skip its value. A text that fails the first scan is scanned
    // again so (malformed requests only: the valid ones pay one scan).
    let op_read = named.is_some();
    let keys = match named {
        Some(Scan(k)) => Some(k),
        None => text
            .and_then(|t| crate::strict_json::from_str::<Scan<false>>(t).ok())
            .map(|Scan(k)| k),
    };
    // Not read as that kind (not one valid object, or its key twice) but
    // begun as one: refused in that request's words.
    let begun = |key: &[u8]| {
        let t = json.trim_ascii_start().strip_prefix(b"{");
        t.is_some_and(|t| t.trim_ascii_start().starts_with(key))
    };
    let k = keys.unwrap_or(Keys {
        // Past every bound below: nothing was read.
        files: 2,
        op: 2,
        patch: 2,
        ..Keys::default()
    });
    if k.patch <= 1 && k.operations <= 1 && k.patch_given {
        return Kind::Patch;
    }
    if op_read && k.files <= 1 && k.op <= 1 {
        if k.files == 0 && k.op == 1 {
            return Kind::Op(k.op_name);
        }
    } else if begun(b"\"op\"") {
        return Kind::Op(None);
    }
    if k.files <= 1 {
        if k.files == 1 {
            return Kind::Files;
        }
    } else if begun(b"\"files\"") {
        return Kind::Files;
    }
    Kind::Single
}

/// One top-level key.
enum Key {
    Patch,
    Operations,
    Files,
    Op,
    Other,
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Key, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Key;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_str<E>(self, s: &str) -> Result<Key, E> {
                Ok(match s {
                    "patch" => Key::Patch,
                    "operations" => Key::Operations,
                    "files" => Key::Files,
                    "op" => Key::Op,
                    _ => Key::Other,
                })
            }
        }
        d.deserialize_identifier(V)
    }
}

/// An `op`'s value, read as its own reader reads it.
struct OpValue(Option<String>);

impl<'de> Deserialize<'de> for OpValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<OpValue, D::Error> {
        d.deserialize_any(OpName).map(OpValue)
    }
}

/// The keys, each `op`'s name read when `NAMES` (else its value skipped).
struct Scan<const NAMES: bool>(Keys);

impl<'de, const NAMES: bool> Deserialize<'de> for Scan<NAMES> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<const NAMES: bool>;
        impl<'de, const NAMES: bool> Visitor<'de> for V<NAMES> {
            type Value = Scan<NAMES>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Scan<NAMES>, A::Error> {
                let mut k = Keys::default();
                let seen = |n: &mut u8| *n = (*n + 1).min(2);
                while let Some(key) = m.next_key::<Key>()? {
                    match key {
                        Key::Patch | Key::Operations => {
                            seen(match key {
                                Key::Patch => &mut k.patch,
                                _ => &mut k.operations,
                            });
                            let v = m.next_value::<Option<IgnoredAny>>()?;
                            k.patch_given |= v.is_some();
                        }
                        Key::Files => {
                            seen(&mut k.files);
                            m.next_value::<IgnoredAny>()?;
                        }
                        Key::Op if NAMES => {
                            seen(&mut k.op);
                            k.op_name = m.next_value::<OpValue>()?.0;
                        }
                        Key::Op => {
                            seen(&mut k.op);
                            m.next_value::<IgnoredAny>()?;
                        }
                        Key::Other => {
                            m.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(Scan(k))
            }
        }
        // A struct, so that `strict_json` refuses an array.
        d.deserialize_struct("Keys", &["patch", "operations", "files", "op"], V)
    }
}
