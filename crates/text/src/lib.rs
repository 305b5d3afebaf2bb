//! The pure text layer of as-edit: no I/O.
