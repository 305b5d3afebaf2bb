//! The read-side ops of the toolset (protocol 4).
//!
//! - [`glob`]: the `glob` pattern (pure); [`pattern`]: its wildcard engine,
//!   shared with [`gitignore`] (pure: `.gitignore` rules);
//! - [`grep`]: the search of one file's bytes (pure);
//! - [`walk`]: the tree walk under `path` (the I/O of `glob` and `grep`);
//! - [`find`]: the `glob` and `grep` ops on top of them.

pub mod find;
pub mod find_json;
pub mod gitignore;
pub mod glob;
pub mod grep;
pub mod grep_op;
pub mod pattern;
pub mod walk;

use crate::protocol::{self, Failure};

/// Answers a `glob` or `grep` request (`None`: not one of them): the
/// result line and the exit code.
pub fn run_json(json: &[u8], options: &crate::request::EditOptions) -> Option<(String, i32)> {
    let serde_json::Value::Object(m) = serde_json::from_slice(json).ok()? else {
        return None;
    };
    let root = options.root.as_deref();
    let r: Result<serde_json::Value, Failure> = match m.get("op")?.as_str()? {
        "glob" => find_json::glob_request(&m).and_then(|q| find_json::glob(&q, root)),
        "grep" => find_json::grep_request(&m).and_then(|q| find_json::grep(&q, root)),
        _ => return None,
    };
    Some(match r {
        Ok(v) => (protocol::render_json(&v), protocol::EXIT_EDITED),
        Err(f) => (protocol::failure_line(&f, None), f.kind.exit_code()),
    })
}
