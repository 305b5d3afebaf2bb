//! The pure text layer of as-edit: no I/O.

#![warn(missing_docs)]
// The static release build (scripts/build-static.sh) passes --cfg
// as_edit_small to every crate; this one's per-request code is then built
// for size, its loops stay at opt-level 3.
#![cfg_attr(as_edit_small, feature(optimize_attribute))]

#[doc(hidden)]
pub mod bytes;
pub mod diff;
pub mod engine;
pub mod eol;
pub mod hints;
#[doc(hidden)]
pub mod spare;
