//! The filesystem work: resolve, open, lock, stream through the core, write a
//! temp beside the target, carry metadata over, re-check, commit by rename.
//!
//! Invariants (each failure path below keeps them):
//! - the target is only ever replaced by `renameat`; it is never opened for writing;
//! - until that rename, every failure leaves the target byte-identical (same inode)
//!   and no temp behind: the temp is unnamed (`O_TMPFILE`) until just before the
//!   rename, or, where that is unsupported, a hidden named temp removed on failure.
//! - after the rename nothing reports a failure: the edit is in the file (a
//!   `--fsync` flush failing then only makes `--report` say `durable: false`).
//!
//! One concern per file: `resolve` (which file, `--root`), `lock` (open
//! and flock), `meta` (permission checks, metadata carried over), `temp`
//! (the temp and the commit), `sink` (the output written to it), `report`
//! (`--report` keys), `error` ([`FsError`]: every failure, as facts), `failure` (their wording),
//! `not_found` (what is at a path that is not a file, and its detail), `words` (an errno's and a path's words),
//! `resource` (EMFILE/ENFILE/ENOMEM: one retryable answer wherever they strike),
//! `regular` (a file opened to be read: never waited for, a regular file checked on its descriptor),
//! `pages` (the `madvise` calls that prefault a large buffer).
//!
//! One pipeline, in two halves: `check` and `prepare` end with the new
//! content in a temp under the lock, `commit` renames it. A single-file
//! edit runs them back to back; a transaction (`crate::txn`) runs `check`
//! and `prepare` for every file (its ops chained through temps) before it
//! commits any, with its own commit step (exchange, no-replace, undo) over
//! the same temp API (`Temp::named`, `lock::recheck`, `meta::copy_metadata`).
#![doc = include_str!("fs.md")]

mod error;
mod failure;
mod hints;
pub(crate) mod lock;
pub(crate) mod meta;
mod not_found;
mod pages;
pub(crate) mod regular;
pub(crate) mod release;
pub(crate) mod replay;
mod report;
pub(crate) mod resolve;
pub(crate) mod resource;
pub(crate) mod sink;
pub(crate) mod temp;
mod window;
mod words;

use std::ffi::CString;
use std::os::fd::{AsFd, OwnedFd};
use std::path::PathBuf;

use rustix::io::Errno;
use sha2::{Digest, Sha256};

pub use error::{ConflictWhat, FileKind, FsError, InodeFlag, NotFoundKind, WriteStep};
pub use temp::remove_registered_temp;

use crate::engine::Engine;
use crate::protocol::{Failure, Report};
use crate::request::{Eol, Request};
use sink::Sink;

/// What a commit made, for the out-of-memory exit and the panic hook
/// (`main.rs`), which must not call a committed change unchanged: the
/// count and the files plus one (0: a single-file edit); `u64::MAX` in
/// the first while nothing is committed. Set without allocating.
static COMMITTED: [std::sync::atomic::AtomicU64; 2] = [
    std::sync::atomic::AtomicU64::new(u64::MAX),
    std::sync::atomic::AtomicU64::new(0),
];

/// The commit is done: `count` replacements, in `files` files (None: a
/// single-file edit).
pub(crate) fn set_committed(count: u64, files: Option<u64>) {
    use std::sync::atomic::Ordering::Relaxed;
    COMMITTED[1].store(files.map_or(0, |f| f + 1), Relaxed);
    COMMITTED[0].store(count.min(u64::MAX - 1), Relaxed);
}

/// What was committed (count, files), if anything was.
pub fn committed() -> Option<(u64, Option<u64>)> {
    use std::sync::atomic::Ordering::Relaxed;
    let count = COMMITTED[0].load(Relaxed);
    let files = COMMITTED[1].load(Relaxed).checked_sub(1);
    (count != u64::MAX).then_some((count, files))
}

/// The out-of-memory exit's line once committed: `{"count":N[,"files":K],
/// "detail":…}` in `buf`, allocating nothing; None before the commit.
#[cold]
#[cfg_attr(as_edit_small, optimize(size))]
pub fn committed_line(buf: &mut [u8; 256]) -> Option<&[u8]> {
    let (count, files) = committed()?;
    let mut n = 0;
    let mut put = |b: &[u8]| {
        if let Some(d) = buf.get_mut(n..n + b.len()) {
            d.copy_from_slice(b);
            n += b.len();
        }
    };
    let digits = |mut v: u64, d: &mut [u8; 20]| {
        let mut i = d.len();
        while i > 0 {
            i -= 1;
            d[i] = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        i
    };
    let mut d = [0u8; 20];
    put(b"__RESULT__{\"count\":");
    let i = digits(count, &mut d);
    put(&d[i..]);
    if let Some(f) = files {
        put(b",\"files\":");
        let i = digits(f, &mut d);
        put(&d[i..]);
    }
    put(b",\"detail\":\"out of memory after the commit (an allocation failed): every change was made; the rest of the result could not be built\"}\n");
    buf.get(..n)
}

pub(crate) use crate::spare::CHUNK;

/// The outcome of one edit: the result (count or failure) and, with
/// `--report`, the extra keys.
#[derive(Debug)]
pub struct EditOutcome {
    /// The replacements made, or why nothing was written.
    pub result: Result<u64, Failure>,
    /// The `--report` keys, when asked for.
    pub report: Option<Report>,
}

/// The resolved target: its directory (an fd, so nothing can swap it under
/// us), its name in there, and its absolute path for messages. The
/// directory is shared: a transaction holds one descriptor per directory,
/// not per file (`txn::plan`).
pub(crate) struct Target {
    pub(crate) dir: std::rc::Rc<OwnedFd>,
    pub(crate) name: CString,
    pub(crate) path: PathBuf,
}

/// Performs the edit the request describes.
pub fn edit(req: &Request) -> EditOutcome {
    meta::forget_euid();
    let mut report = req.options.report.then(Report::default);
    let result = edit_inner(req, &mut report).map_err(Failure::from);
    EditOutcome { result, report }
}

/// One file, one pipeline: resolve, lock, `check`, `prepare` (the new
/// content in a temp under the lock), [`commit`]. A transaction (`txn`)
/// runs the same steps for every file, all prepares before any commit.
#[cfg_attr(as_edit_small, optimize(size))]
fn edit_inner(req: &Request, report: &mut Option<Report>) -> Result<u64, FsError> {
    let opts = &req.options;
    let target = resolve::resolve(&req.path, opts.root.as_deref())?;
    if let Some(r) = report.as_mut() {
        match target.path.to_str() {
            Some(p) => r.path = Some(p.to_owned()),
            None => {
                let b = std::os::unix::ffi::OsStrExt::as_bytes(target.path.as_os_str());
                r.path_b64 = Some(crate::b64::encode(b));
            }
        }
    }
    let (file, st) = lock::open_locked(&target, opts.lock_timeout)?;
    let dir_fd = check(&target, &file, &st, opts.dry_run)?;
    let crlf_out = opts.eol == Eol::Preserve && sink::dominant_is_crlf(&file)?;
    let prepared = prepare(&target, &file, &req.edits, opts, crlf_out, report)?;
    commit(prepared, &target, &file, &st, dir_fd, opts, report)
}

/// What the target's metadata lets an edit do, decided before any temp
/// exists. Returns the directory opened for reading once, while nothing
/// is committed, for its inode flags and the `--fsync` flush (`None` where
/// it cannot be opened so, a 0333 directory, or under `--dry-run`).
#[cfg_attr(as_edit_small, optimize(size))]
pub(crate) fn check(
    target: &Target,
    file: &OwnedFd,
    st: &rustix::fs::Stat,
    dry_run: bool,
) -> Result<Option<OwnedFd>, FsError> {
    meta::check_writable(target, file, st)?;
    if dry_run {
        return Ok(None);
    }
    // A directory that will refuse the rename is named before any temp exists.
    let d = meta::open_dir_readable(target);
    meta::check_rename(target, st, &meta::dir_facts(target, d.as_ref()))?;
    Ok(d)
}

/// The new content, ready under the lock: in a temp beside `target` (none
/// under `--dry-run`), with the engine's count.
pub(crate) struct Prepared<'a> {
    pub(crate) temp: Option<temp::Temp<'a>>,
    pub(crate) count: u64,
    pub(crate) in_digest: Option<[u8; 32]>,
}

/// Streams `source` (from its position, the start) through the engine into a temp
/// beside `target`; a refusal writes nothing. `report` is filled as the
/// single-file `--report` has it.
#[cfg_attr(as_edit_small, optimize(size))]
pub(crate) fn prepare<'a>(
    target: &'a Target,
    source: &OwnedFd,
    edits: &[crate::engine::Edit],
    opts: &crate::request::EditOptions,
    crlf_out: bool,
    report: &mut Option<Report>,
) -> Result<Prepared<'a>, FsError> {
    let mut engine = Engine::new(edits, report.is_some());
    if opts.diff {
        use std::os::unix::ffi::OsStrExt;
        engine = engine.with_diff(&crate::diff::quote_name(target.path.as_os_str().as_bytes()));
    }
    let mut in_hash = (opts.expect_sha256.is_some() || report.is_some()).then(Sha256::new);
    // The temp is created only once the output differs from the input (see
    // `sink`): a refusal writes nothing.
    let marked = engine.marks_changes();
    let mut sink = Sink::new(
        target,
        source,
        crlf_out,
        report.is_some(),
        !opts.dry_run,
        marked,
    );
    let mut buf = crate::spare::chunk();
    // A long OLD's tail slot (a ring of OLD plus 1 MiB) is read into
    // directly: no copy into it, and huge pages, 2 MiB a fault where 4 KiB
    // ones cost a third of a 48 MiB OLD's search (`scripts/bench/README.md`).
    // The advice is taken before the slot's first page is touched.
    if let Some(s) = engine.spare() {
        pages::advise(
            s.as_mut_ptr() as usize,
            s.len(),
            rustix::mm::Advice::LinuxHugepage,
        );
    }
    loop {
        let (dst, direct) = match engine.spare() {
            // A chunk at a time: validated and normalized while in cache.
            Some(s) => {
                let n = CHUNK.min(s.len());
                (&mut s[..n], true)
            }
            None => (&mut buf[..], false),
        };
        // From the descriptor's position (the start: a transaction seeks a
        // chained temp back first).
        let n = match rustix::io::read(source, &mut *dst) {
            Ok(0) => break,
            Ok(n) => n,
            Err(Errno::INTR) => continue,
            Err(errno) => {
                let path = Some(target.path.clone());
                return Err(FsError::Read { path, errno });
            }
        };
        if let Some(h) = in_hash.as_mut() {
            h.update(&dst[..n]);
        }
        let push = &mut |b: &[u8]| sink.push(b);
        match direct {
            true => engine.filled(n, push),
            false => engine.feed(&buf[..n], push),
        }
        sink.fed(&engine);
        // Invalid UTF-8 settles the outcome, but a hash must still see the
        // whole file (--expect-sha256 compares it, --report shows it).
        if engine.invalid_utf8() && in_hash.is_none() {
            break;
        }
    }
    let summary = engine.finish(&mut |b| sink.push(b));
    // Test builds only (debug, or the off-by-default `fault-injection`
    // feature): prove a panic mid-edit leaves the target and the directory
    // as they were. Release builds compile this out.
    #[cfg(any(debug_assertions, feature = "fault-injection"))]
    if std::env::var_os("AS_EDIT_TEST_PANIC").is_some() {
        sink.complete();
        panic!("injected test panic");
    }
    let in_digest: Option<[u8; 32]> = in_hash.map(|h| h.finalize().into());
    if let Some(expected) = opts.expect_sha256 {
        if in_digest != Some(expected) {
            report::fill_current(report, source, in_digest);
            let what = ConflictWhat::Sha256(in_digest.unwrap_or_default());
            return Err(FsError::Conflict {
                path: target.path.clone(),
                what,
            });
        }
    }
    let mut summary = match summary {
        Ok(s) => s,
        Err(refusal) => {
            report::fill_current(report, source, in_digest);
            // --hints: computed here, after the refusal, never on success. The
            // read stops early only on invalid UTF-8, which takes no hints.
            let hints = opts
                .hints
                .then(|| hints::hint_keys(source.as_fd(), edits, &refusal, true))
                .flatten()
                .map(Box::new);
            return Err(FsError::Refused {
                refusal,
                edits: edits.len(),
                path: target.path.clone(),
                hints,
            });
        }
    };
    sink.complete();
    if let Some(r) = report.as_mut() {
        let digest = sink.digest();
        report::fill_edited(
            r,
            sink.size,
            digest,
            std::mem::take(&mut summary.edits),
            summary.last.take(),
            summary.diff.take(),
        );
        if opts.dry_run {
            r.dry_run = Some(true);
        }
    }
    let temp = match opts.dry_run {
        true => None,
        false => match sink.into_temp() {
            Ok(t) => Some(t),
            Err(e) => {
                unwritten(report, source, in_digest);
                return Err(e);
            }
        },
    };
    crate::spare::give_chunk(buf);
    Ok(Prepared {
        temp,
        count: summary.count,
        in_digest,
    })
}

/// Commits a prepared single-file edit: metadata, the stale check, the
/// rename over the target (see `temp`).
#[cfg_attr(as_edit_small, optimize(size))]
fn commit(
    prepared: Prepared<'_>,
    target: &Target,
    file: &OwnedFd,
    st: &rustix::fs::Stat,
    dir_fd: Option<OwnedFd>,
    opts: &crate::request::EditOptions,
    report: &mut Option<Report>,
) -> Result<u64, FsError> {
    let Some(temp) = prepared.temp else {
        return Ok(prepared.count);
    };
    let flush = opts.fsync.then_some(dir_fd);
    match temp.commit(target, file, st, flush) {
        Ok(durable) => {
            set_committed(prepared.count, None);
            if let (false, Some(r)) = (durable, report.as_mut()) {
                r.durable = Some(false);
            }
            Ok(prepared.count)
        }
        Err(e) => {
            unwritten(report, file, prepared.in_digest);
            Err(e)
        }
    }
}

/// Nothing was committed: the report describes the file as it is, not the
/// content that was never written.
#[cfg_attr(as_edit_small, optimize(size))]
fn unwritten(report: &mut Option<Report>, file: &OwnedFd, in_digest: Option<[u8; 32]>) {
    if let Some(r) = report.as_mut() {
        *r = Report {
            path: r.path.take(),
            ..Report::default()
        };
    }
    report::fill_current(report, file, in_digest);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Edit;

    fn req(path: PathBuf) -> Request {
        Request {
            path,
            edits: vec![Edit::new("a", "b", false).unwrap()],
            options: Default::default(),
        }
    }

    /// Callers can match on the facts; the wording stays in `failure.rs`.
    #[test]
    fn failures_are_facts() {
        let dir = tempfile::tempdir().unwrap();
        let err = |p: PathBuf| edit_inner(&req(p), &mut None).unwrap_err();
        assert!(matches!(
            err(dir.path().join("missing")),
            FsError::NotFound {
                kind: NotFoundKind::Missing,
                ..
            }
        ));
        std::os::unix::fs::symlink("nowhere", dir.path().join("dangling")).unwrap();
        assert!(matches!(
            err(dir.path().join("dangling")),
            FsError::NotFound {
                kind: NotFoundKind::DanglingSymlink,
                ..
            }
        ));
        assert!(matches!(
            err(dir.path().to_owned()),
            FsError::NotFound {
                kind: NotFoundKind::NotRegular(FileKind::Directory),
                ..
            }
        ));
        std::fs::write(dir.path().join("f"), "xyz").unwrap();
        assert!(matches!(
            err(dir.path().join("f")),
            FsError::Refused {
                refusal: crate::engine::Refusal::NotFound { edit: 0 },
                edits: 1,
                ..
            }
        ));
        let mut r = req(dir.path().join("f"));
        r.options.root = Some(dir.path().join("sub"));
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        assert!(matches!(
            edit_inner(&r, &mut None).unwrap_err(),
            FsError::OutsideRoot { .. }
        ));
    }
}
