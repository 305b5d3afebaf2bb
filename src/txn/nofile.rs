//! The descriptor bound. Until its commit a transaction holds one
//! descriptor per existing file it locks, one per file with new content
//! (its unnamed temp), one per distinct directory it names (shared by
//! every file in it, `plan`) and, during the commit, one per directory it
//! creates; plus five (stdio, and two held briefly). Measured (the least
//! `ulimit -n` that passes, `tests/txn.rs`): 256 files edited in one
//! directory 518, in 256 directories 773; 256 moves with edits, each
//! within its directory, 518 and 773; 256 plain moves or deletes in one
//! directory 262; 256 creates in 256 new directories 518; 256 moves with
//! edits out of 256 directories into 256 new ones 1,030. The soft
//! `RLIMIT_NOFILE` is raised to the hard one first (under `ulimit -n
//! 1024`, soft and hard, all but the last fit); where descriptors
//! still run out (EMFILE) the `write_failed` says this bound and what to do
//! (fewer files per request, a higher hard limit), not "retry": the same
//! request would need as many again. Nothing is changed then.

use rustix::process::{getrlimit, setrlimit, Resource};

/// Raises the soft `RLIMIT_NOFILE` to the hard limit (best effort).
#[cfg_attr(as_edit_small, optimize(size))]
pub(super) fn raise() {
    let mut l = getrlimit(Resource::Nofile);
    if l.current < l.maximum {
        l.current = l.maximum;
        let _ = setrlimit(Resource::Nofile, l);
    }
}

/// What an EMFILE detail says after the step and the cause.
#[cold]
#[cfg_attr(as_edit_small, optimize(size))]
pub(super) fn bound() -> String {
    let l = getrlimit(Resource::Nofile);
    #[cfg_attr(as_edit_small, optimize(size))]
    fn n(v: Option<u64>) -> String {
        v.map_or("unlimited".into(), |v| v.to_string())
    }
    format!(
        "a transaction holds, until its commit, a descriptor per file it locks, one per new content, \
         one per directory and per directory it creates, and RLIMIT_NOFILE allows {} (hard limit {}); \
         nothing was changed: send fewer files per request, or raise the hard limit (ulimit -Hn)",
        n(l.current),
        n(l.maximum)
    )
}
