//! Several files in one call, all or nothing (issue 19): the request
//! `{"files":[OP,...]}`, its operations ([`op`]) and the machinery that
//! prepares every file before committing any.
//!
//! (The full reference — request, ops, tokens, result keys, the commit
//! and rollback mechanism and the crash window — is written here as the
//! machinery lands.)

pub mod op;

pub use op::{Change, Op, OpKind, OpRefusal, Transform, Transformed, Txn, MAX_OPS};
