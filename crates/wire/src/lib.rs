//! The wire of as-edit: what goes between a host and the helper binary,
//! and nothing else. The helper (the `as-edit` crate) reads its requests
//! and writes its one result line through it; a host reads the same types,
//! so the two ends cannot drift.
//!
//! - [`protocol`]: the error tokens, the `__RESULT__` line (rendered
//!   ASCII-only), exit codes, the opt-in `--report` keys, and a text
//!   refusal mapped to its token and detail;
//! - [`request`]: what one edit asks for (path, edits, the options that
//!   reach the filesystem), whichever way it arrived;
//! - [`stdin`]: the single-file request's JSON (`--stdin`,
//!   `--request-b64`) read into a [`request::Request`], and the edit list a
//!   transaction's op reads the same way;
//! - [`strict_json`]: serde_json for requests, except that a struct is
//!   read only from a JSON object;
//! - [`b64`]: strict standard base64 (argv's OLD/NEW, `--request-b64`,
//!   `--patch-b64`, `path_b64`), refusing what the `base64` crate refuses
//!   with the same texts;
//! - [`hex`]: lowercase hex of digests (`--expect-sha256`, `sha256`);
//! - [`txn`]: what a transaction asks for (its ops, in order, and the
//!   options every file shares), built by the `{"files"}` parser here and
//!   the V4A patch compiler ([`patch`]), carried out by the helper's
//!   machinery; and `insert` on a whole text;
//! - [`patch`]: a parsed V4A patch compiled into a transaction whose
//!   edits run the text crate's chunk locators;
//! - [`tools`]: the read-side ops' requests (`stat`, `list`, `read`,
//!   `glob`, `grep`), their strict parser, their path fields and the
//!   bounded answer writer their result lines are built with.
//!
//! The result line's grammar, its tokens and exit codes as a host sees
//! them are documented in as-edit's README (the `as_edit` crate's front
//! page), sections *Output* and *Host protocol*; [`protocol`] is their
//! implementation.
//!
//! # What it may depend on
//!
//! `std`, `serde` and `serde_json` (the line and the requests), `memchr`
//! (a line's start in a patch's refusal), and the pure text layer
//! `as-edit-text` (a refusal's [`HintKeys`] and
//! [`Refusal`](as_edit_text::engine::Refusal), a request's
//! [`Edit`](as_edit_text::engine::Edit)): no system-call crate (`rustix`,
//! `libc`, `memmap2`), so nothing here does I/O, and
//! `cargo tree -e normal -p as-edit-wire` shows it. It must never gain
//! any: the caller reads the request and prints the line; this crate turns
//! text into values and values into text. What needs the system (random
//! names, clocks, paths' bytes on disk) stays with the caller.
//!
//! A transaction op's `path_b64` names a file by its bytes, so its path is
//! built with std's Unix `OsStringExt`: the crate builds for Unix targets.
//!
//! [`HintKeys`]: protocol::HintKeys
//!
//! # Examples
//!
//! A refusal of the text layer rendered to its result line, with its exit
//! code: the line is one ASCII line, non-ASCII escaped:
//!
//! ```
//! use as_edit_text::engine::Refusal;
//! use as_edit_wire::protocol::{
//!     failure_line, refusal_failure, success_line, ErrorKind, Failure, EXIT_NOT_EDITED,
//! };
//!
//! let f = refusal_failure(Refusal::Multiple { edit: 0, count: 2 }, 1, "f.txt");
//! assert_eq!(failure_line(&f, None), "__RESULT__{\"error\":\"multiple_occurrences\",\"count\":2}\n");
//! assert_eq!(f.kind.exit_code(), EXIT_NOT_EDITED);
//!
//! let f = Failure::new(ErrorKind::FileNotFound, "no file café.txt");
//! assert_eq!(
//!     failure_line(&f, None),
//!     "__RESULT__{\"error\":\"file_not_found\",\"detail\":\"no file caf\\u00e9.txt\"}\n"
//! );
//! assert_eq!(ErrorKind::from_token("file_not_found"), Some(f.kind));
//! assert_eq!(success_line(1, None), "__RESULT__{\"count\":1}\n");
//! ```
//!
//! Strict base64: canonical padding and no stray bits, refused with the
//! `base64` crate's words (result lines quote them):
//!
//! ```
//! use as_edit_wire::b64;
//!
//! assert_eq!(b64::decode(b"YWJj").unwrap(), b"abc");
//! assert_eq!(b64::decode(b"YW=j").unwrap_err(), "Invalid symbol 61, offset 2.");
//! assert_eq!(b64::decode(b"YR==").unwrap_err(), "Invalid last symbol 82, offset 1.");
//! assert_eq!(b64::encode(b"abc"), "YWJj");
//! ```
//!
//! A request type is read only from a JSON object, never from the
//! sequence form serde would otherwise accept:
//!
//! ```
//! use as_edit_wire::strict_json;
//!
//! #[derive(serde::Deserialize, Debug, PartialEq)]
//! struct Edit {
//!     old: String,
//!     new: String,
//! }
//!
//! let e: Edit = strict_json::from_str(r#"{"old":"a","new":"b"}"#).unwrap();
//! assert_eq!(e, Edit { old: "a".into(), new: "b".into() });
//! assert!(serde_json::from_str::<Edit>(r#"["a","b"]"#).is_ok());
//! let refused = strict_json::from_str::<Edit>(r#"["a","b"]"#).unwrap_err();
//! assert!(refused.to_string().starts_with("invalid type: sequence, expected struct Edit"));
//! ```

#![warn(missing_docs)]
// The static release build (scripts/build-static.sh) passes --cfg
// as_edit_small to every crate: the line's rendering and the request's
// decoding run once per call and are built for size.
#![cfg_attr(as_edit_small, feature(optimize_attribute))]

pub mod b64;
pub mod hex;
pub mod json;
pub mod patch;
pub mod protocol;
pub mod request;
pub mod stdin;
pub mod strict_json;
pub mod tools;
pub mod txn;
