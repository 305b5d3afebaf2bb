//! A transaction request (`{"files":[...]}`, a V4A patch compiled): its
//! ops and options as values ([`op`]). Building one does no I/O; the
//! helper's transaction machinery (`as_edit::txn`) carries it out.

pub mod op;

pub use op::{
    Change, NewModes, Op, OpKind, OpRefusal, Source, Transform, TransformFn, Transformed, Txn,
    MAX_OPS,
};
