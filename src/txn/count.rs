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
                // Made under a directory a later op deletes with its tree:
                // made and removed again, only its source (a move) counts.
                End::At(d) if self.deleted_later(&d.t.path, file.last) => paths.extend(orig),
                End::At(d) => paths.extend(orig.into_iter().chain([d.t.path.as_path()])),
            }
        }
        paths.sort_unstable();
        paths.dedup();
        paths.len()
    }

    /// `path` is under a directory that an op after `op` deletes (with
    /// everything under it).
    fn deleted_later(&self, path: &Path, op: usize) -> bool {
        self.files.iter().any(|g| {
            matches!(g.end, End::Gone)
                && g.tree == Tree::Dir
                && g.last > op
                && (g.orig.as_ref())
                    .is_some_and(|o| path.starts_with(&o.0.path) && path != o.0.path)
        })
    }
}
