//! `--diff` of a batch: both whole texts are kept (later edits may rewrite
//! earlier ones), each up to [`BATCH_DIFF_MAX`], then diffed at the end.

use super::{Diff, BATCH_DIFF_MAX};

/// Both texts of a batch, for its diff.
pub(super) struct BatchDiff {
    name: String,
    old: Vec<u8>,
    new: Vec<u8>,
    over: bool,
}

impl BatchDiff {
    #[cfg_attr(as_edit_small, optimize(size))]
    pub(super) fn new(name: &str) -> BatchDiff {
        BatchDiff {
            name: name.to_owned(),
            old: Vec::new(),
            new: Vec::new(),
            over: false,
        }
    }

    #[cfg_attr(as_edit_small, optimize(size))]
    pub(super) fn keep(&mut self, new: bool, b: &[u8]) {
        let v = if new { &mut self.new } else { &mut self.old };
        if self.over {
            return;
        }
        if v.len() + b.len() > BATCH_DIFF_MAX {
            self.over = true;
            self.old = Vec::new();
            self.new = Vec::new();
            return;
        }
        v.extend_from_slice(b);
    }

    #[cfg_attr(as_edit_small, optimize(size))]
    pub(super) fn finish(self) -> Diff {
        let (Ok(old), Ok(new)) = (
            std::str::from_utf8(&self.old),
            std::str::from_utf8(&self.new),
        ) else {
            return Diff {
                text: None,
                truncated: true,
            };
        };
        if self.over {
            return Diff {
                text: None,
                truncated: true,
            };
        }
        let (text, truncated) =
            crate::diff::unified(old, new, &self.name, crate::diff::CONTEXT, crate::diff::CAP);
        Diff {
            text: Some(text),
            truncated,
        }
    }
}
