//! Lossless names. A file name is bytes; JSON strings are Unicode. So:
//!
//! - in an answer, a path that is UTF-8 comes as `"path":"…"` (escaped as
//!   every result line is), and one that is not as `"path_b64":"…"`, the
//!   standard base64 of its bytes ([`field`]; for a symlink's text the same
//!   rule gives `"target"` or `"target_b64"`);
//! - in a request, `"path_b64"` is accepted wherever `"path"` is (giving
//!   both is `invalid_argument`, [`pick`]); an element of `stat`'s `paths`
//!   is a string or `{"path_b64":"…"}` ([`Name`]).
//!
//! A name is never empty and never holds a NUL (the kernel would cut it
//! there): either is `invalid_argument`.

use std::ffi::OsString;
use std::fmt;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};

use super::answer::push_str;
use super::invalid;
use crate::b64;
use crate::protocol::Failure;

/// Appends `"key":"name"`, or `"key_b64":"…"` when `name` is not UTF-8.
#[cfg_attr(as_edit_small, optimize(speed))]
pub fn field(out: &mut String, key: &str, name: &[u8]) {
    out.push('"');
    out.push_str(key);
    match std::str::from_utf8(name) {
        Ok(s) => {
            out.push_str("\":");
            push_str(out, s);
        }
        Err(_) => {
            out.push_str("_b64\":\"");
            out.push_str(&b64::encode(name));
            out.push('"');
        }
    }
}

/// [`field`] of a path.
#[cfg_attr(as_edit_small, optimize(speed))]
pub fn path_field(out: &mut String, key: &str, path: &Path) {
    field(out, key, path.as_os_str().as_bytes());
}

/// The name a request gives as `key` (a string) or `key_b64` (base64 of
/// its bytes): one of them, never both; `None` if neither.
pub fn pick(
    key: &str,
    plain: Option<String>,
    b64: Option<String>,
) -> Result<Option<PathBuf>, Failure> {
    let bytes = match (plain, b64) {
        (Some(_), Some(_)) => {
            return Err(invalid(format!("give {key:?} or \"{key}_b64\", not both")))
        }
        (Some(p), None) => p.into_bytes(),
        (None, Some(b)) => b64::decode(b.as_bytes())
            .map_err(|e| invalid(format!("\"{key}_b64\" is not valid base64 ({e})")))?,
        (None, None) => return Ok(None),
    };
    checked(key, bytes).map(Some)
}

/// A name's bytes as a path: not empty, no NUL.
pub fn checked(key: &str, bytes: Vec<u8>) -> Result<PathBuf, Failure> {
    if bytes.is_empty() {
        return Err(invalid(format!("{key:?} is empty")));
    }
    if bytes.contains(&0) {
        return Err(invalid(format!("{key:?} contains a NUL character")));
    }
    Ok(PathBuf::from(OsString::from_vec(bytes)))
}

/// An element of a list of names: `"name"` or `{"path_b64":"…"}` (or
/// `{"path":"…"}`), as raw bytes; checked by the caller ([`checked`]).
pub struct Name(pub Vec<u8>);

impl<'de> Deserialize<'de> for Name {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Name, D::Error> {
        d.deserialize_any(NameVisitor)
    }
}

struct NameVisitor;

impl<'de> Visitor<'de> for NameVisitor {
    type Value = Name;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a path: a string or {\"path_b64\": BASE64}")
    }

    fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Name, E> {
        Ok(Name(s.as_bytes().to_vec()))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Name, A::Error> {
        use serde::de::Error;
        let mut name = None;
        while let Some(k) = map.next_key::<String>()? {
            let v: String = map.next_value()?;
            let bytes = match k.as_str() {
                "path" => v.into_bytes(),
                "path_b64" => b64::decode(v.as_bytes()).map_err(|e| {
                    A::Error::custom(format_args!("\"path_b64\" is not valid base64 ({e})"))
                })?,
                other => return Err(A::Error::unknown_field(other, &["path", "path_b64"])),
            };
            if name.replace(bytes).is_some() {
                return Err(A::Error::custom("give \"path\" or \"path_b64\" once"));
            }
        }
        name.map(Name)
            .ok_or_else(|| A::Error::custom("a path object needs \"path\" or \"path_b64\""))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_names_are_strings_and_others_base64() {
        let mut out = String::new();
        field(&mut out, "path", "a:\tb\né".as_bytes());
        assert_eq!(out, r#""path":"a:\tb\n\u00e9""#);
        let mut out = String::new();
        field(&mut out, "path", b"caf\xe9");
        assert_eq!(out, r#""path_b64":"Y2Fm6Q==""#);
    }

    #[test]
    fn a_request_gives_one_name_never_empty_nor_with_a_nul() {
        let p = pick("path", None, Some("Y2Fm6Q==".into()))
            .unwrap()
            .unwrap();
        assert_eq!(p.as_os_str().as_bytes(), b"caf\xe9");
        assert_eq!(pick("path", None, None).unwrap(), None);
        let detail = |r: Result<Option<PathBuf>, Failure>| r.unwrap_err().detail.unwrap();
        assert_eq!(
            detail(pick("path", Some("a".into()), Some("YQ==".into()))),
            "give \"path\" or \"path_b64\", not both"
        );
        assert_eq!(
            detail(pick("path", Some("".into()), None)),
            "\"path\" is empty"
        );
        assert_eq!(
            detail(pick("path", None, Some("YQA=".into()))),
            "\"path\" contains a NUL character"
        );
        assert_eq!(
            detail(pick("path", None, Some("Y=".into()))),
            "\"path_b64\" is not valid base64 (Invalid symbol 61, offset 1.)"
        );
    }

    #[test]
    fn a_list_element_is_a_string_or_an_object() {
        let names: Vec<Name> =
            crate::strict_json::from_str(r#"["a",{"path_b64":"/w=="},{"path":"b"}]"#).unwrap();
        let got: Vec<&[u8]> = names.iter().map(|n| &n.0[..]).collect();
        assert_eq!(got, [&b"a"[..], b"\xff", b"b"]);
        for bad in [
            r#"[1]"#,
            r#"[{"x":"a"}]"#,
            r#"[{}]"#,
            r#"[{"path":"a","path":"b"}]"#,
        ] {
            assert!(
                crate::strict_json::from_str::<Vec<Name>>(bad).is_err(),
                "{bad}"
            );
        }
    }
}
