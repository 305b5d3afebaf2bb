//! A transaction request (`{"files":[...]}`, a V4A patch compiled): its
//! ops and options as values ([`op`]), and the `{"files"}` JSON read into
//! them ([`parse`], [`parse_op`], [`parse_request`]). Building one does no
//! I/O; the helper's transaction machinery (`as_edit::txn`) carries it out.

pub mod op;
mod parse;

pub use op::{
    Change, NewModes, Op, OpKind, OpRefusal, Source, Transform, TransformFn, Transformed, Txn,
    MAX_OPS,
};
pub use parse::{is_op, parse, parse_op, parse_request, Parsed};
