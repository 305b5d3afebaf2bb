//! The pure text layer of as-edit: what an edit does to text, and nothing
//! else. The helper binary (the `as-edit` crate) streams a file through it
//! under its lock; the host library's transfer fallback runs the same code
//! over a downloaded copy, so both write the same bytes and refuse alike.
//!
//! - [`engine`]: exact replacement, streamed in bounded memory: strict
//!   UTF-8, CRLF and lone CR matched as LF, non-overlapping occurrences
//!   counted left to right, refused unless exactly one matches (or every
//!   one is to be replaced), edits of a batch applied in order;
//! - [`diff`]: unified diffs of the old and the new text (`--diff`);
//! - [`eol`]: the end-of-line policy of `--eol preserve`: count the raw
//!   line ends, choose the style, re-expand LF to CRLF;
//! - [`hints`]: after a refusal, where OLD most likely is and why it did
//!   not match (`--hints`), and where the occurrences start;
//! - [`patch`]: V4A patches: the grammar, the chunk locator (in memory,
//!   in one pass over a file, or in passes bounded by the patch), and a
//!   whole patch applied to an in-memory tree.
//!
//! # What it may depend on
//!
//! `std` for its collections, `memchr` for the searches and `serde` (the
//! hint keys join the helper's result line): no system-call crate
//! (`rustix`, `libc`, `memmap2`), so nothing here can open, read or write
//! a file, and `cargo tree -e normal -p as-edit-text` shows it. The caller
//! reads, writes and decides; this crate sees bytes handed to it. Its
//! public items are the helper's and the host's API for text; the hidden
//! `bytes` and `spare` modules are plumbing the helper's sink shares
//! (short copies, the buffers kept for a transaction's next file).
//!
//! # Examples
//!
//! One exact replacement over a whole buffer; two occurrences of OLD
//! without replace-all are refused, and nothing is produced:
//!
//! ```
//! use as_edit_text::engine::{replace, Edit, Refusal};
//!
//! let edit = Edit::new("return 1", "return 2", false)?;
//! let (out, summary) = replace(b"def f():\n    return 1\n", &[edit]).expect("one occurrence");
//! assert_eq!(out, b"def f():\n    return 2\n");
//! assert_eq!(summary.count, 1);
//!
//! let edit = Edit::new("x", "y", false)?;
//! let refused = replace(b"x = x\n", &[edit]);
//! assert_eq!(refused.unwrap_err(), Refusal::Multiple { edit: 0, count: 2 });
//! # Ok::<(), &str>(())
//! ```
//!
//! The same engine streamed, as the helper runs it over a file: raw chunks
//! of any size in (here a CRLF file, split inside a line end), LF-normalized
//! output out; [`eol`] counted the line ends on the way and writes the
//! CRLFs back:
//!
//! ```
//! use as_edit_text::engine::{Edit, Engine};
//! use as_edit_text::eol::{expand_crlf, EolCounter};
//!
//! let edits = [Edit::new("b", "B", true)?];
//! let mut engine = Engine::new(&edits, false);
//! let (mut counter, mut lf) = (EolCounter::default(), Vec::new());
//! for chunk in [&b"a\r"[..], b"\nb\r\nb\r\n"] {
//!     counter.feed(chunk);
//!     engine.feed(chunk, &mut |piece| lf.extend_from_slice(piece));
//! }
//! let summary = engine.finish(&mut |piece| lf.extend_from_slice(piece)).expect("found");
//! assert_eq!((summary.count, &lf[..]), (2, &b"a\nB\nB\n"[..]));
//!
//! assert!(counter.finish().dominant_is_crlf());
//! let mut out = Vec::new();
//! expand_crlf(&lf, &mut |piece| out.extend_from_slice(piece));
//! assert_eq!(out, b"a\r\nB\r\nB\r\n");
//! # Ok::<(), &str>(())
//! ```
//!
//! A unified diff of two texts, at most [`diff::CAP`] bytes:
//!
//! ```
//! use as_edit_text::diff::{unified, CAP, CONTEXT};
//!
//! let (text, cut) = unified("a\nb\nc\n", "a\nB\nc\n", "f.txt", CONTEXT, CAP);
//! assert_eq!(text, "--- f.txt\n+++ f.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n");
//! assert!(!cut);
//! ```
//!
//! Why an OLD was not found: here its indentation differs, and the hint
//! gives the file's own lines to send as the next OLD:
//!
//! ```
//! use as_edit_text::hints::{find, Kind};
//!
//! let text = "fn f() {\n    let x = 1;\n    x\n}\n";
//! let found = find(text, "let x = 1;\nx\n", "let x = 2;\nx\n", true);
//! let best = &found.hints[0];
//! assert_eq!((best.line, best.end_line, best.kind), (2, 3, Kind::Indentation));
//! assert_eq!(best.text, "    let x = 1;\n    x\n");
//! ```

#![warn(missing_docs)]
// The static release build (scripts/build-static.sh) passes --cfg
// as_edit_small to every crate: this one's per-request code is then built
// for size, its loops stay at opt-level 3.
#![cfg_attr(as_edit_small, feature(optimize_attribute))]

#[doc(hidden)]
pub mod bytes;
pub mod diff;
pub mod engine;
pub mod eol;
pub mod hints;
pub mod patch;
#[doc(hidden)]
pub mod spare;
