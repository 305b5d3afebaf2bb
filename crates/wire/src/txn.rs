//! A transaction request (`{"files":[...]}`, a V4A patch compiled): its
//! ops and options as values ([`op`]), the `{"files"}` JSON read into
//! them ([`parse`], [`parse_op`], [`parse_request`]), and an op's refusal
//! in words ([`detail_of`]). Building one does no I/O; the helper's
//! transaction machinery (`as_edit::txn`) carries it out.

pub mod insert;
pub mod op;
mod parse;

pub use insert::insert;
pub use op::{
    Change, NewModes, Op, OpKind, OpRefusal, Source, Transform, TransformFn, Transformed, Txn,
    MAX_OPS,
};
pub use parse::{is_op, parse, parse_op, parse_request, Parsed};

use crate::protocol::{ErrorKind, Failure};

/// A refusal's words for the `file i of n (P): ` detail: its own detail,
/// else the token's meaning (a single-file refusal may have none).
#[cfg_attr(as_edit_small, optimize(size))]
pub fn detail_of(f: &Failure) -> String {
    match (&f.detail, f.kind) {
        (Some(d), _) => d.clone(),
        (None, ErrorKind::StringNotFound) => "OLD not found".into(),
        (None, ErrorKind::Empty) => "the file is empty".into(),
        (None, ErrorKind::MultipleOccurrences) => {
            format!("OLD occurs {} times", f.count.unwrap_or(0))
        }
        (None, k) => k.token().replace('_', " "),
    }
}
