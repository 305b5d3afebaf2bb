//! The descriptor bound. Until its commit a transaction holds one
//! descriptor per existing file it locks, one per file with new content
//! (its unnamed temp: until the commit links it, that descriptor is the
//! file), one per distinct directory it names (shared by every file in it,
//! `plan`) and, during the commit, one per directory it creates; plus
//! five (stdio, and two held briefly). Where the soft `RLIMIT_NOFILE`
//! (raised to the hard one first) would not hold all that ([`tight`]), a
//! file with new content gives its original's descriptor back once its
//! temp is staged, so each file holds one: its lock, then its temp (so a
//! 600-file patch runs under `ulimit -n 1024`). Such an original
//! is opened and locked again at its commit and kept only through its own
//! steps, taken only if the name still holds the inode staged, and checked
//! as the held lock's recheck checks it (size, mtime, ctime): a writer that
//! changed it between its staging and the commit is refused (`conflict`,
//! rolled back) where a held lock would have made it wait, and one that
//! holds its lock then makes it `busy` at once (rolled back): waiting there,
//! out of the lock order, could close a cycle (`lock::Locked::held`).
//!
//! Measured (the least `ulimit -n` that passes, `tests/txn.rs`, before the
//! release): 256 files edited in one directory 518, in 256 directories
//! 773; 256 moves with edits, each within its directory, 518 and 773; 256
//! plain moves or deletes in one directory 262; 256 creates in 256 new
//! directories 518; 256 moves with edits out of 256 directories into 256
//! new ones 1,030. With it, 256 files edited in one directory pass under
//! 270 and 600 (a patch in the `apply_patch` mode, which has no hunk bound)
//! under 1024 (`tests/txn_commit.rs`). Where descriptors still run out
//! (EMFILE) the `write_failed` says this bound and what to do (fewer files
//! per request, a higher hard limit), not "retry": the same request would
//! need as many again, a patch's as a `{"files"}` request's (`txn::failure`).
//! Nothing is changed then.

use rustix::process::{getrlimit, setrlimit, Resource};

use super::plan::{End, Plan};

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
        "a transaction holds, until its commit, a descriptor per file (its lock, then its new content), \
         one per directory and per directory it creates, and RLIMIT_NOFILE allows {} (hard limit {}); \
         nothing was changed: send fewer files per request, or raise the hard limit (ulimit -Hn)",
        n(l.current),
        n(l.maximum)
    )
}

/// Would holding an original and a temp per file, and every directory,
/// pass the soft limit? Then the originals are released once staged.
#[cfg_attr(as_edit_small, optimize(size))]
pub(super) fn tight(plan: &Plan) -> bool {
    let mut dirs: Vec<*const std::os::fd::OwnedFd> = Vec::new();
    let mut need = 8u64;
    for f in &plan.files {
        need += 2;
        let at = f.orig.as_ref().map(|o| &o.0);
        let end = match &f.end {
            End::At(d) => {
                need += d.missing.len() as u64;
                Some(&d.t)
            }
            _ => None,
        };
        for t in at.into_iter().chain(end) {
            let p = std::rc::Rc::as_ptr(&t.dir);
            if !dirs.contains(&p) {
                dirs.push(p);
            }
        }
    }
    need += dirs.len() as u64;
    getrlimit(Resource::Nofile)
        .current
        .is_some_and(|l| need > l)
}

/// A file-system failure as a transaction words it: out of descriptors,
/// the transaction's bound (`nofile`), not "retry". Every `FsError` of a
/// transaction goes through here, a patch's transform included (its
/// temp's EMFILE too).
#[cfg_attr(as_edit_small, optimize(size))]
pub(crate) fn failure(e: crate::fs::FsError) -> crate::protocol::Failure {
    let f = crate::fs::resource::out_of_descriptors(&e, bound);
    f.unwrap_or_else(|| crate::protocol::Failure::from(e))
}
