//! The result's `"files"` (K), counted from the plan: the distinct paths
//! whose entry the transaction changes (the definition is in the `txn`
//! module docs). Kept apart from the model that `plan` builds: it reads it.

use std::path::Path;

use super::plan::{End, Plan, Tree};

impl Plan {
    /// K, the result's `"files"`: the distinct paths whose entry changes
    /// (the txn docs); `rewritten(f)`: file `f` gets new content.
    pub(super) fn changed_paths(&self, rewritten: impl Fn(usize) -> bool) -> usize {
        let mut paths: Vec<&Path> = Vec::new();
        for (f, file) in self.files.iter().enumerate() {
            let orig = file.orig.as_ref().map(|o| o.0.path.as_path());
            match &file.end {
                End::InPlace if !rewritten(f) => {}
                End::InPlace | End::Gone => paths.extend(orig),
                // A `mkdir -p` of a directory an earlier op makes: nothing new.
                End::At(_) if matches!(file.tree, Tree::Mkdir { quiet: true, .. }) => {}
                End::At(d) => paths.extend(orig.into_iter().chain([d.t.path.as_path()])),
            }
        }
        paths.sort_unstable();
        paths.dedup();
        paths.len()
    }
}
