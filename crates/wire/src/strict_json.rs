//! The `--stdin` JSON reader: serde_json, except that a struct is read only
//! from a JSON object.
//!
//! serde's derived `Deserialize` for a struct also accepts the struct's
//! sequence form: `["f",[["a","b"]]]` would be the request
//! `{"path":"f","edits":[{"old":"a","new":"b"}]}`. Only the documented
//! objects are requests, so [`from_str`] wraps serde_json's deserializer in
//! [`Strict`], which passes every call through unchanged but answers a
//! sequence where a struct (or a struct variant of an enum) is expected with
//! `invalid type: sequence, expected struct …`.
//!
//! The wrapping is structural: `Strict` also wraps every nested value (the
//! elements of a sequence, the keys and values of a map, an `Option`'s
//! content, a newtype's, an enum's variant), so any struct reachable from
//! the request (its edits today; the files of a transaction or a patch
//! request added later) gets the rule with no attribute or code of its own:
//! derive `Deserialize` and parse through [`from_str`]. Not covered: types
//! that buffer input in serde's private content type (`#[serde(flatten)]`,
//! untagged or internally tagged enums); the request types use none.

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess};
use serde::de::{VariantAccess, Visitor};

/// serde_json's words for `e`, and for an escape of half a surrogate pair
/// (`"\ud800"`: serde says "unexpected end of hex escape") what JSON
/// allows, and where a name that is not UTF-8 goes instead (a caller
/// holding one reaches for such an escape).
pub fn words(e: &serde_json::Error) -> String {
    let mut s = e.to_string();
    if s.contains("hex escape") {
        s.push_str(" (\\uD800-\\uDFFF escapes come only as high-low pairs: JSON strings hold Unicode text; a file name that is not UTF-8 goes as base64 in an op's \"path_b64\" or \"to_b64\")");
    }
    s
}

/// Parses `text` as one JSON value of type `T`, structs only from objects.
pub fn from_str<'a, T: de::Deserialize<'a>>(text: &'a str) -> Result<T, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value = T::deserialize(Strict(&mut de))?;
    de.end()?;
    Ok(value)
}

/// A deserializer that refuses the sequence form of a struct, here and in
/// everything nested.
pub struct Strict<D>(pub D);

/// A visitor passed through `Strict`: it wraps what it is handed, and with
/// `struct_only` refuses a sequence.
struct Wrap<V> {
    v: V,
    struct_only: bool,
}

fn wrap<V>(v: V) -> Wrap<V> {
    Wrap {
        v,
        struct_only: false,
    }
}

/// Forwards `deserialize_*` methods that take only a visitor, each with
/// the attributes given first.
macro_rules! forward {
    (#[$a:meta] $($name:ident)*) => {$(
        #[$a]
        fn $name<V: Visitor<'de>>(self, v: V) -> Result<V::Value, D::Error> {
            self.0.$name(wrap(v))
        }
    )*};
    ($($name:ident)*) => {$(
        fn $name<V: Visitor<'de>>(self, v: V) -> Result<V::Value, D::Error> {
            self.0.$name(wrap(v))
        }
    )*};
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Strict<D> {
    type Error = D::Error;

    // A request's long strings (an edit's OLD and NEW) are scanned and
    // LF-normalized below these: at the crate's opt-level.
    forward! {
        deserialize_str deserialize_string deserialize_bytes deserialize_byte_buf
    }
    // The rest reads a request's few numbers, flags, keys and its structure.
    forward! {
        #[cfg_attr(as_edit_small, optimize(size))]
        deserialize_any deserialize_bool deserialize_i8 deserialize_i16 deserialize_i32
        deserialize_i64 deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64
        deserialize_f32 deserialize_f64 deserialize_char deserialize_option deserialize_unit
        deserialize_seq deserialize_map deserialize_identifier deserialize_ignored_any
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        v: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_unit_struct(name, wrap(v))
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        v: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_newtype_struct(name, wrap(v))
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, len: usize, v: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_tuple(len, wrap(v))
    }

    #[cfg_attr(as_edit_small, optimize(size))]
    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        len: usize,
        v: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_tuple_struct(name, len, wrap(v))
    }

    #[cfg_attr(as_edit_small, optimize(size))]
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, D::Error> {
        let v = Wrap {
            v,
            struct_only: true,
        };
        self.0.deserialize_struct(name, fields, v)
    }

    #[cfg_attr(as_edit_small, optimize(size))]
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_enum(name, variants, wrap(v))
    }

    fn is_human_readable(&self) -> bool {
        self.0.is_human_readable()
    }
}

/// Forwards `visit_*` methods that take one plain value.
macro_rules! visit {
    ($($name:ident: $t:ty)*) => {$(
        fn $name<E: de::Error>(self, x: $t) -> Result<V::Value, E> {
            self.v.$name(x)
        }
    )*};
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Wrap<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        self.v.expecting(f)
    }

    visit! {
        visit_bool: bool visit_i64: i64 visit_u64: u64 visit_f64: f64 visit_char: char
        visit_str: &str visit_borrowed_str: &'de str visit_string: String
        visit_bytes: &[u8] visit_borrowed_bytes: &'de [u8] visit_byte_buf: Vec<u8>
    }

    fn visit_none<E: de::Error>(self) -> Result<V::Value, E> {
        self.v.visit_none()
    }

    fn visit_unit<E: de::Error>(self) -> Result<V::Value, E> {
        self.v.visit_unit()
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        self.v.visit_some(Strict(d))
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        self.v.visit_newtype_struct(Strict(d))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<V::Value, A::Error> {
        if self.struct_only {
            return Err(de::Error::invalid_type(de::Unexpected::Seq, &self.v));
        }
        self.v.visit_seq(Strict(seq))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.v.visit_map(Strict(map))
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<V::Value, A::Error> {
        self.v.visit_enum(Strict(data))
    }
}

/// A seed whose value is read through `Strict`.
struct Seed<S>(S);

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for Seed<S> {
    type Value = S::Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<S::Value, D::Error> {
        self.0.deserialize(Strict(d))
    }
}

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for Strict<A> {
    type Error = A::Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, A::Error> {
        self.0.next_element_seed(Seed(seed))
    }

    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Strict<A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        self.0.next_key_seed(Seed(seed))
    }

    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, A::Error> {
        self.0.next_value_seed(Seed(seed))
    }

    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

impl<'de, A: EnumAccess<'de>> EnumAccess<'de> for Strict<A> {
    type Error = A::Error;
    type Variant = Strict<A::Variant>;

    fn variant_seed<T: DeserializeSeed<'de>>(
        self,
        seed: T,
    ) -> Result<(T::Value, Strict<A::Variant>), A::Error> {
        let (value, variant) = self.0.variant_seed(Seed(seed))?;
        Ok((value, Strict(variant)))
    }
}

impl<'de, A: VariantAccess<'de>> VariantAccess<'de> for Strict<A> {
    type Error = A::Error;

    fn unit_variant(self) -> Result<(), A::Error> {
        self.0.unit_variant()
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, A::Error> {
        self.0.newtype_variant_seed(Seed(seed))
    }

    fn tuple_variant<V: Visitor<'de>>(self, len: usize, v: V) -> Result<V::Value, A::Error> {
        self.0.tuple_variant(len, wrap(v))
    }

    #[cfg_attr(as_edit_small, optimize(size))]
    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, A::Error> {
        let v = Wrap {
            v,
            struct_only: true,
        };
        self.0.struct_variant(fields, v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize, Debug, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Inner {
        a: u64,
        #[serde(default)]
        b: Option<String>,
    }

    #[derive(serde::Deserialize, Debug, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Outer {
        one: Inner,
        list: Vec<Inner>,
        maybe: Option<Inner>,
        nested: Vec<Vec<Inner>>,
        #[serde(default)]
        choice: Option<Choice>,
    }

    #[derive(serde::Deserialize, Debug, PartialEq)]
    #[serde(rename_all = "snake_case")]
    enum Choice {
        Plain,
        Wrapped(Inner),
        Fields { x: u64 },
    }

    fn inner(a: u64) -> Inner {
        Inner { a, b: None }
    }

    #[test]
    fn objects_are_read_as_serde_json_reads_them() {
        let text = r#"{"one":{"a":1,"b":"x"},"list":[{"a":2}],"maybe":{"a":3},
            "nested":[[{"a":4}],[]],"choice":{"fields":{"x":5}}}"#;
        let got: Outer = from_str(text).unwrap();
        let want: Outer = serde_json::from_str(text).unwrap();
        assert_eq!(got, want);
        assert_eq!(got.one.b.as_deref(), Some("x"));
        assert_eq!(got.nested, vec![vec![inner(4)], vec![]]);
        assert_eq!(got.choice, Some(Choice::Fields { x: 5 }));
        let plain: Option<Choice> = from_str(r#""plain""#).unwrap();
        assert_eq!(plain, Some(Choice::Plain));
        let wrapped: Choice = from_str(r#"{"wrapped":{"a":6}}"#).unwrap();
        assert_eq!(wrapped, Choice::Wrapped(inner(6)));
    }

    /// Every place a struct can sit refuses its sequence form, which plain
    /// serde_json accepts.
    #[test]
    fn the_sequence_form_of_a_struct_is_refused_at_any_depth() {
        let ok = r#"{"one":{"a":1},"list":[],"maybe":null,"nested":[]}"#;
        from_str::<Outer>(ok).unwrap();
        let cases = [
            (r#"[{"a":1},[],null,[]]"#, "struct Outer"),
            (
                r#"{"one":[1],"list":[],"maybe":null,"nested":[]}"#,
                "struct Inner",
            ),
            (
                r#"{"one":{"a":1},"list":[[1]],"maybe":null,"nested":[]}"#,
                "struct Inner",
            ),
            (
                r#"{"one":{"a":1},"list":[],"maybe":[1],"nested":[]}"#,
                "struct Inner",
            ),
            (
                r#"{"one":{"a":1},"list":[],"maybe":null,"nested":[[[1,"x"]]]}"#,
                "struct Inner",
            ),
            (
                r#"{"one":{"a":1},"list":[],"maybe":null,"nested":[],"choice":{"wrapped":[1]}}"#,
                "struct Inner",
            ),
            (
                r#"{"one":{"a":1},"list":[],"maybe":null,"nested":[],"choice":{"fields":[5]}}"#,
                "struct variant Choice::Fields",
            ),
        ];
        for (text, what) in cases {
            assert!(serde_json::from_str::<Outer>(text).is_ok(), "{text}");
            let e = from_str::<Outer>(text).unwrap_err().to_string();
            assert!(
                e.starts_with(&format!("invalid type: sequence, expected {what}")),
                "{text}: {e}"
            );
        }
    }

    #[test]
    fn trailing_text_is_refused() {
        let e = from_str::<Inner>(r#"{"a":1} x"#).unwrap_err().to_string();
        assert_eq!(e, "trailing characters at line 1 column 9");
    }
}
