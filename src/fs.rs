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

use std::ffi::CString;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rustix::fs::{
    self as rfs, AtFlags, FileType, FlockOperation, Mode, OFlags, ResolveFlags, Stat, XattrFlags,
    CWD,
};
use rustix::io::Errno;
use rustix::thread::CapabilitySet;
use sha2::{Digest, Sha256};

use crate::engine::{EditStats, Engine};
use crate::protocol::{display_path, refusal_failure, EditReport, ErrorKind, Failure, Report};
use crate::request::{Eol, Request};

/// Read and write buffers: bounded memory whatever the file size.
const CHUNK: usize = 256 * 1024;

/// The outcome of one edit: the result (count or failure) and, with
/// `--report`, the extra keys.
#[derive(Debug)]
pub struct Outcome {
    /// The replacement count, or why the file was not edited.
    pub result: Result<u64, Failure>,
    /// `--report`'s keys, when asked for (also after some failures).
    pub report: Option<Report>,
}

/// The resolved target: its directory (an fd, so nothing can swap it under
/// us), its name in there, and its absolute path for messages.
struct Target {
    dir: OwnedFd,
    name: CString,
    path: PathBuf,
}

fn fail(kind: ErrorKind, detail: impl Into<String>) -> Failure {
    Failure::new(kind, detail)
}

/// Words for an errno, as `strerror` would say them.
fn cause(e: Errno) -> String {
    io::Error::from(e).to_string()
}

/// Performs the edit the request describes.
pub fn edit(req: &Request) -> Outcome {
    let mut report = req.options.report.then(Report::default);
    let result = edit_inner(req, &mut report);
    Outcome { result, report }
}

fn edit_inner(req: &Request, report: &mut Option<Report>) -> Result<u64, Failure> {
    let target = resolve(&req.path, req.options.root.as_deref())?;
    if let Some(r) = report.as_mut() {
        r.path = Some(display_path(&target.path));
    }
    let (file, st) = open_locked(&target, req.options.lock_timeout)?;
    let opts = &req.options;

    check_writable(&target, &file, &st)?;
    // The directory, opened for reading once, while nothing is committed:
    // for its inode flags and the --fsync flush. `None` where it cannot be
    // opened so (a 0333 directory): then --fsync flushes the file system.
    let dir_fd = if opts.dry_run {
        None
    } else {
        // A directory that will refuse the rename (sticky, append-only,
        // immutable) is named before any temp exists.
        check_sticky(&target, &st)?;
        let d = open_dir_readable(&target);
        if let Some(f) = d.as_ref().and_then(|d| dir_flags_refusal(&target, d)) {
            return Err(f);
        }
        d
    };

    let crlf_out = opts.eol == Eol::Preserve && dominant_is_crlf(&file)?;

    let flush = (opts.fsync && !opts.dry_run).then_some(dir_fd);
    let temp = if opts.dry_run {
        Err(None)
    } else {
        Temp::create(&target).map_err(Some)
    };
    let mut engine = Engine::new(&req.edits, report.is_some());
    if opts.diff {
        engine = engine.with_diff(&display_path(&target.path));
    }
    let hash_in = opts.expect_sha256.is_some() || report.is_some();
    let mut in_hash = hash_in.then(Sha256::new);
    let mut sink = Sink {
        temp: temp.as_ref().ok().map(|t| t.fd.as_fd()),
        buf: Vec::with_capacity(CHUNK),
        error: None,
        crlf: crlf_out,
        hash: report.is_some().then(Sha256::new),
        size: 0,
    };
    let mut buf = vec![0u8; CHUNK];
    loop {
        let n = match rustix::io::read(&file, &mut buf[..]) {
            Ok(0) => break,
            Ok(n) => n,
            Err(Errno::INTR) => continue,
            Err(e) => {
                return Err(fail(
                    ErrorKind::ReadFailed,
                    format!("reading {}: {}", display_path(&target.path), cause(e)),
                ))
            }
        };
        let chunk = &buf[..n];
        if let Some(h) = in_hash.as_mut() {
            h.update(chunk);
        }
        if engine.doomed() {
            sink.temp = None; // a refusal is certain: stop writing
        }
        engine.feed(chunk, &mut |b| sink.push(b));
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
        sink.flush();
        panic!("injected test panic");
    }
    let in_digest: Option<[u8; 32]> = in_hash.map(|h| h.finalize().into());

    if let Some(expected) = opts.expect_sha256 {
        if in_digest != Some(expected) {
            fill_current(report, &file, in_digest);
            return Err(fail(
                ErrorKind::Conflict,
                format!(
                    "{} changed since it was read: its SHA-256 is {}",
                    display_path(&target.path),
                    hex(&in_digest.unwrap_or_default())
                ),
            ));
        }
    }
    let mut summary = match summary {
        Ok(s) => s,
        Err(refusal) => {
            fill_current(report, &file, in_digest);
            return Err(refusal_failure(
                refusal,
                req.edits.len(),
                &display_path(&target.path),
            ));
        }
    };
    sink.flush();
    if let Some(r) = report.as_mut() {
        r.size = Some(sink.size);
        r.sha256 = sink.hash.take().map(|h| hex(&h.finalize().into()));
        fill_lines(r, &summary.edits);
        if let Some(d) = summary.diff.take() {
            fill_diff(r, d);
        }
    }
    if opts.dry_run {
        if let Some(r) = report.as_mut() {
            r.dry_run = Some(true);
        }
        return Ok(summary.count);
    }
    if let Some(e) = sink.error.take() {
        return Err(write_failed(&target, "writing the temp file", e));
    }
    let temp = match temp {
        Ok(t) => t,
        Err(e) => {
            let e = e.unwrap_or(Errno::INVAL);
            return Err(write_failed(&target, "creating a temp file beside it", e));
        }
    };
    let durable = temp.commit(&target, &file, &st, flush)?;
    if let (false, Some(r)) = (durable, report.as_mut()) {
        r.durable = Some(false);
    }
    Ok(summary.count)
}

/// On an error after a successful read, `--report` describes the current file.
fn fill_current(report: &mut Option<Report>, file: &OwnedFd, digest: Option<[u8; 32]>) {
    if let Some(r) = report.as_mut() {
        r.size = rfs::fstat(file).ok().map(|s| s.st_size as u64);
        r.sha256 = digest.map(|d| hex(&d));
    }
}

fn fill_lines(r: &mut Report, edits: &[EditStats]) {
    r.lines = edits.last().map(|e| e.lines.clone());
    r.lines_truncated = edits.last().and_then(|e| e.lines_truncated.then_some(true));
    if edits.len() > 1 {
        r.edits = Some(
            edits
                .iter()
                .map(|e| EditReport {
                    count: e.count,
                    lines: e.lines.clone(),
                    lines_truncated: e.lines_truncated,
                })
                .collect(),
        );
    }
}

fn write_failed(target: &Target, what: &str, e: Errno) -> Failure {
    let words = match e {
        Errno::BUSY => format!(
            "{} (the target is a mount point, such as a bind-mounted file, and cannot be replaced by rename)",
            cause(e)
        ),
        Errno::XDEV => format!("{} (the temp file and the target are on different file systems)", cause(e)),
        Errno::NOSPC => format!("{} (the file system is full)", cause(e)),
        Errno::DQUOT => format!("{} (the disk quota is exhausted)", cause(e)),
        Errno::ACCESS => format!("{} (the directory is not writable)", cause(e)),
        Errno::PERM => format!(
            "{} (refused by the file system or a security policy, not by the directory's permissions)",
            cause(e)
        ),
        _ => cause(e),
    };
    fail(
        ErrorKind::WriteFailed,
        format!(
            "{what} for {}: {words}; the file is unchanged",
            display_path(&target.path)
        ),
    )
}

/// Permission parity with the host's transfer path: a file the caller may
/// not write is refused (`permission_denied`), not replaced by rename.
///
/// EPERM is both the kernel's answer for an immutable file and what seccomp
/// profiles older than `faccessat2` answer for it, so EPERM alone never
/// decides: the inode flags are read first, and an EPERM or ENOSYS from the
/// access syscalls falls back to the older syscall, then to the mode bits.
fn check_writable(t: &Target, file: &OwnedFd, st: &Stat) -> Result<(), Failure> {
    if let Some(f) = inode_flags_refusal(t, file) {
        return Err(f);
    }
    let verdict = match rfs::accessat(
        &t.dir,
        t.name.as_c_str(),
        rfs::Access::WRITE_OK,
        AtFlags::EACCESS,
    ) {
        Err(Errno::PERM) | Err(Errno::NOSYS) => access_fallback(t, file, st),
        r => r,
    };
    match verdict {
        Err(Errno::ACCESS) => Err(fail(
            ErrorKind::PermissionDenied,
            format!("no write permission on {}", display_path(&t.path)),
        )),
        Err(Errno::ROFS) => Err(fail(
            ErrorKind::WriteFailed,
            format!("{} is on a read-only file system", display_path(&t.path)),
        )),
        // Anything else is left to the write itself, which names its cause.
        _ => Ok(()),
    }
}

/// `chattr +i` / `+a` targets: no writer can replace or truncate them, the
/// host's transfer path included, so the refusal is final. A file system
/// without inode flags (or a filter refusing the ioctl) means "none known".
fn inode_flags_refusal(t: &Target, file: &OwnedFd) -> Option<Failure> {
    let flags = rfs::ioctl_getflags(file).ok()?;
    let what = if flags.contains(rfs::IFlags::IMMUTABLE) {
        "immutable (chattr +i): it cannot be written, replaced or removed until the flag is cleared"
    } else if flags.contains(rfs::IFlags::APPEND) {
        "append-only (chattr +a): it can only be appended to, not rewritten or replaced"
    } else {
        return None;
    };
    Some(fail(
        ErrorKind::PermissionDenied,
        format!("{} is {what}", display_path(&t.path)),
    ))
}

/// Is `cap` in the effective set? Where capget is refused, assume root has
/// it and others do not.
fn has_capability(cap: CapabilitySet) -> bool {
    match rustix::thread::capabilities(None) {
        Ok(c) => c.effective.contains(cap),
        Err(_) => rustix::process::geteuid().is_root(),
    }
}

/// The access check without `faccessat2`: the old `faccessat` (real ids,
/// which equal the effective ones unless as-edit runs setuid/setgid), else
/// the mode bits.
fn access_fallback(t: &Target, file: &OwnedFd, st: &Stat) -> Result<(), Errno> {
    use rustix::process::{getegid, geteuid, getgid, getuid};
    if getuid() == geteuid() && getgid() == getegid() {
        match rfs::accessat(
            &t.dir,
            t.name.as_c_str(),
            rfs::Access::WRITE_OK,
            AtFlags::empty(),
        ) {
            Err(Errno::PERM) | Err(Errno::NOSYS) => {}
            r => return r,
        }
    }
    mode_allows_write(file, st)
}

/// The last resort when no access syscall answers: a read-only mount is
/// EROFS; CAP_DAC_OVERRIDE in effect (root's, unless dropped) may write; else the owner,
/// group (effective or supplementary) or other write bit decides. POSIX ACL
/// entries are not evaluated: with an ACL the group bits are its mask.
fn mode_allows_write(file: &OwnedFd, st: &Stat) -> Result<(), Errno> {
    use rustix::process::{getegid, geteuid, getgroups};
    if let Ok(v) = rfs::fstatvfs(file) {
        if v.f_flag.contains(rfs::StatVfsMountFlags::RDONLY) {
            return Err(Errno::ROFS);
        }
    }
    if has_capability(CapabilitySet::DAC_OVERRIDE) {
        return Ok(());
    }
    let euid = geteuid();
    let gid = rfs::Gid::from_raw(st.st_gid);
    let bit = if st.st_uid == euid.as_raw() {
        0o200
    } else if getegid() == gid || getgroups().is_ok_and(|g| g.contains(&gid)) {
        0o020
    } else {
        0o002
    };
    if st.st_mode & bit != 0 {
        Ok(())
    } else {
        Err(Errno::ACCESS)
    }
}

/// In a sticky directory (`/tmp`, mode 1777) only the owner of the file or
/// of the directory (or root) may rename over a name. Predicting the rename's
/// EPERM here names the real cause before any temp exists. `write_failed`,
/// because the host's transfer path writes the file in place and may succeed.
fn check_sticky(t: &Target, st: &Stat) -> Result<(), Failure> {
    match sticky_refusal(t, st, true) {
        Some(f) => Err(f),
        None => Ok(()),
    }
}

/// `ask_caps`: before the rename, CAP_FOWNER (which overrides the sticky
/// bit) is read; after a refused rename it evidently did not apply.
fn sticky_refusal(t: &Target, st: &Stat, ask_caps: bool) -> Option<Failure> {
    let dir = rfs::fstat(&t.dir).ok()?;
    let euid = rustix::process::geteuid().as_raw();
    if dir.st_mode & 0o1000 == 0 || st.st_uid == euid || dir.st_uid == euid {
        return None;
    }
    if ask_caps && has_capability(CapabilitySet::FOWNER) {
        return None;
    }
    let parent = t.path.parent().unwrap_or(Path::new("/"));
    Some(fail(
        ErrorKind::WriteFailed,
        format!(
            "{} cannot be replaced by rename: its directory {} is sticky and neither the file nor the directory belongs to this user, so only an in-place write can change it; the file is unchanged",
            display_path(&t.path),
            display_path(parent)
        ),
    ))
}

/// An append-only or immutable directory refuses to have a name replaced or
/// removed (the rename), though the file in it may still be written in
/// place: `write_failed`, the host's transfer path can do the edit.
fn dir_flags_refusal(t: &Target, dir: &OwnedFd) -> Option<Failure> {
    let flags = rfs::ioctl_getflags(dir).ok()?;
    let what = if flags.contains(rfs::IFlags::IMMUTABLE) {
        "immutable (chattr +i): no name in it can be created, replaced or removed"
    } else if flags.contains(rfs::IFlags::APPEND) {
        "append-only (chattr +a): names in it can be added but not replaced or removed"
    } else {
        return None;
    };
    let parent = t.path.parent().unwrap_or(Path::new("/"));
    Some(fail(
        ErrorKind::WriteFailed,
        format!(
            "{} cannot be replaced by rename: its directory {} is {what}; the file is unchanged",
            display_path(&t.path),
            display_path(parent)
        ),
    ))
}

/// A rename refused with EPERM: name the cause when it can be seen (an
/// immutable or append-only target or directory, a sticky directory), else
/// the errno's words. (Normally these are caught before the temp exists;
/// this covers a flag set meanwhile, or root without CAP_FOWNER.)
fn rename_refused(t: &Target, file: &OwnedFd, st: &Stat, e: Errno) -> Failure {
    if e == Errno::PERM {
        if let Some(f) = inode_flags_refusal(t, file) {
            return f;
        }
        let dir = open_dir_readable(t);
        if let Some(f) = dir.as_ref().and_then(|d| dir_flags_refusal(t, d)) {
            return f;
        }
        if let Some(f) = sticky_refusal(t, st, false) {
            return f;
        }
    }
    write_failed(t, "renaming the temp file over the target", e)
}

/// The target's directory opened for reading (for its inode flags and the
/// `--fsync` flush), or `None` when the caller may not read it. The `O_PATH`
/// descriptor we hold cannot serve: `fsync` and `ioctl` refuse it (EBADF).
fn open_dir_readable(t: &Target) -> Option<OwnedFd> {
    rfs::openat(
        &t.dir,
        c".",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .ok()
}

fn hex(d: &[u8; 32]) -> String {
    let mut s = String::with_capacity(64);
    for b in d {
        s.push(char::from(b"0123456789abcdef"[(b >> 4) as usize]));
        s.push(char::from(b"0123456789abcdef"[(b & 15) as usize]));
    }
    s
}

/// `--diff`: the core built it (see `core::Engine::with_diff` for its
/// memory bound); `diff_truncated` when it was cut or left out.
fn fill_diff(r: &mut Report, d: crate::engine::Diff) {
    r.diff = d.text;
    if d.truncated {
        r.diff_truncated = Some(true);
    }
}

/// Collects output and writes it to the temp in large pieces; remembers the
/// first write error instead of failing (the refusal, if any, still wins).
struct Sink<'a> {
    temp: Option<BorrowedFd<'a>>,
    buf: Vec<u8>,
    error: Option<Errno>,
    crlf: bool,
    hash: Option<Sha256>,
    size: u64,
}

impl Sink<'_> {
    fn push(&mut self, b: &[u8]) {
        if self.crlf {
            let mut rest = b;
            while let Some(i) = memchr::memchr(b'\n', rest) {
                self.put(&rest[..i]);
                self.put(b"\r\n");
                rest = &rest[i + 1..];
            }
            self.put(rest);
        } else {
            self.put(b);
        }
    }

    fn put(&mut self, b: &[u8]) {
        if b.is_empty() {
            return;
        }
        self.size += b.len() as u64;
        if let Some(h) = self.hash.as_mut() {
            h.update(b);
        }
        if self.temp.is_none() || self.error.is_some() {
            return;
        }
        if self.buf.len() + b.len() <= self.buf.capacity() {
            self.buf.extend_from_slice(b);
            return;
        }
        self.flush();
        if b.len() >= self.buf.capacity() / 2 {
            self.write(b); // large slices go straight through: no copy
        } else {
            self.buf.extend_from_slice(b);
        }
    }

    fn flush(&mut self) {
        let buf = std::mem::take(&mut self.buf);
        self.write(&buf);
        self.buf = buf;
        self.buf.clear();
    }

    fn write(&mut self, mut b: &[u8]) {
        let Some(fd) = self.temp else { return };
        while !b.is_empty() && self.error.is_none() {
            match rustix::io::write(fd, b) {
                Ok(0) => self.error = Some(Errno::IO),
                Ok(n) => b = &b[n..],
                Err(Errno::INTR) => {}
                Err(e) => self.error = Some(e),
            }
        }
    }
}

/// `--eol preserve`: is the file's dominant line ending CRLF? (A pre-pass;
/// only paid for when asked.)
fn dominant_is_crlf(file: &OwnedFd) -> Result<bool, Failure> {
    let mut counter = crate::engine::EolCounter::default();
    let mut buf = vec![0u8; CHUNK];
    let mut off = 0u64;
    loop {
        match rustix::io::pread(file, &mut buf[..], off) {
            Ok(0) => break,
            Ok(n) => {
                counter.feed(&buf[..n]);
                off += n as u64;
            }
            Err(Errno::INTR) => {}
            Err(e) => {
                return Err(fail(
                    ErrorKind::ReadFailed,
                    format!("reading: {}", cause(e)),
                ))
            }
        }
    }
    let c = counter.finish();
    Ok(c.crlf > c.lf + c.cr)
}

// ---------------------------------------------------------------- resolve

fn resolve(path: &Path, root: Option<&Path>) -> Result<Target, Failure> {
    let root = match root {
        Some(r) => Some(std::fs::canonicalize(r).map_err(|e| {
            fail(
                ErrorKind::InvalidArgument,
                format!("--root {}: {e}", display_path(r)),
            )
        })?),
        None => None,
    };
    // Longer than PATH_MAX: the kernel would refuse it (ENAMETOOLONG), but
    // realpath walks it component by component and may report ENOENT first.
    if path.as_os_str().len() >= 4096 {
        return Err(not_found(path, io::Error::from(Errno::NAMETOOLONG)));
    }
    let abs = match std::fs::canonicalize(path) {
        Ok(p) => p,
        Err(e) => {
            if let Some(root) = &root {
                if !nearest_existing_ancestor_within(path, root) {
                    return Err(outside_root(path, root));
                }
            }
            return Err(not_found(path, e));
        }
    };
    if let Some(root) = &root {
        if !abs.starts_with(root) {
            return Err(outside_root(path, root));
        }
    }
    let parent = abs.parent().unwrap_or(Path::new("/"));
    let name = match abs.file_name() {
        Some(n) => CString::new(n.as_bytes()).expect("path components have no NUL"),
        None => {
            return Err(fail(
                ErrorKind::FileNotFound,
                format!("{} is a directory, not a regular file", display_path(&abs)),
            ))
        }
    };
    let dir = match &root {
        Some(root) => open_dir_beneath(root, parent)?,
        None => rfs::open(
            parent,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| {
            fail(
                ErrorKind::FileNotFound,
                format!("{}: {}", display_path(parent), cause(e)),
            )
        })?,
    };
    Ok(Target {
        dir,
        name,
        path: abs,
    })
}

fn not_found(path: &Path, e: io::Error) -> Failure {
    let shown = display_path(path);
    let errno = e.raw_os_error().map(Errno::from_raw_os_error);
    let detail = match errno {
        Some(Errno::NOENT) => match std::fs::symlink_metadata(path) {
            Ok(m) if m.file_type().is_symlink() => format!("{shown} is a dangling symlink"),
            _ => format!("{shown} does not exist"),
        },
        Some(Errno::LOOP) => format!("{shown}: too many levels of symbolic links (a symlink loop)"),
        Some(Errno::NOTDIR) => format!("{shown}: a component of the path is not a directory"),
        Some(Errno::NAMETOOLONG) => format!("{shown}: the path or one of its names is too long"),
        Some(Errno::ACCESS) => format!("{shown}: permission denied while resolving the path"),
        _ => format!("{shown}: {e}"),
    };
    fail(ErrorKind::FileNotFound, detail)
}

fn outside_root(path: &Path, root: &Path) -> Failure {
    fail(
        ErrorKind::OutsideRoot,
        format!(
            "{} resolves outside the root {}",
            display_path(path),
            display_path(root)
        ),
    )
}

/// For a path that does not resolve: does its nearest existing ancestor lie
/// within the root? (So `../../etc/nope` is `outside_root`, not a probe.)
fn nearest_existing_ancestor_within(path: &Path, root: &Path) -> bool {
    let abs = match std::env::current_dir() {
        Ok(cwd) => cwd.join(path),
        Err(_) => return false,
    };
    // Lexical `..` could climb out; normalize before walking up.
    let mut lexical = PathBuf::new();
    for c in abs.components() {
        match c {
            Component::ParentDir => {
                lexical.pop();
            }
            Component::CurDir => {}
            other => lexical.push(other),
        }
    }
    let mut cur = Some(lexical.as_path());
    while let Some(p) = cur {
        if let Ok(real) = std::fs::canonicalize(p) {
            return real.starts_with(root);
        }
        cur = p.parent();
    }
    false
}

/// Opens `parent` (canonical, inside `root`) so that no component can be a
/// symlink or escape the root, even if the tree changes under us
/// (openat2 with RESOLVE_BENEATH, Linux ≥ 5.6); older kernels get a
/// resolve-then-verify through /proc/self/fd.
fn open_dir_beneath(root: &Path, parent: &Path) -> Result<OwnedFd, Failure> {
    let root_fd = rfs::open(
        root,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| {
        fail(
            ErrorKind::InvalidArgument,
            format!("--root {}: {}", display_path(root), cause(e)),
        )
    })?;
    let rel = parent.strip_prefix(root).unwrap_or(Path::new(""));
    let rel: &Path = if rel.as_os_str().is_empty() {
        Path::new(".")
    } else {
        rel
    };
    let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let resolve = ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
    match rfs::openat2(&root_fd, rel, flags, Mode::empty(), resolve) {
        Ok(fd) => Ok(fd),
        Err(Errno::NOSYS) | Err(Errno::PERM) => {
            // No openat2 (old kernel or a seccomp filter): verify after the fact.
            let fd = rfs::open(parent, flags | OFlags::NOFOLLOW, Mode::empty()).map_err(|e| {
                fail(
                    ErrorKind::FileNotFound,
                    format!("{}: {}", display_path(parent), cause(e)),
                )
            })?;
            let proc = format!("/proc/self/fd/{}", fd.as_raw_fd());
            match std::fs::read_link(proc) {
                Ok(p) if p.starts_with(root) => Ok(fd),
                Ok(_) => Err(outside_root(parent, root)),
                // Without /proc we keep the canonical check done before.
                Err(_) => Ok(fd),
            }
        }
        Err(Errno::XDEV) | Err(Errno::LOOP) | Err(Errno::AGAIN) => Err(fail(
            ErrorKind::OutsideRoot,
            format!(
                "{} changed while it was resolved beneath the root {}",
                display_path(parent),
                display_path(root)
            ),
        )),
        Err(e) => Err(fail(
            ErrorKind::FileNotFound,
            format!("{}: {}", display_path(parent), cause(e)),
        )),
    }
}

// ---------------------------------------------------------------- open + lock

fn kind_of(st: &Stat) -> Option<&'static str> {
    match FileType::from_raw_mode(st.st_mode) {
        FileType::RegularFile => None,
        FileType::Directory => Some("a directory"),
        FileType::Fifo => Some("a FIFO"),
        FileType::Socket => Some("a socket"),
        FileType::CharacterDevice => Some("a character device"),
        FileType::BlockDevice => Some("a block device"),
        FileType::Symlink => Some("a symlink"),
        FileType::Unknown => Some("of an unknown type"),
    }
}

/// Opens the target read-only and takes an exclusive `flock`, waiting at
/// most `timeout`. If a previous holder replaced the file while we waited,
/// the path names a new inode: reopen and lock that one instead.
fn open_locked(t: &Target, timeout: Duration) -> Result<(OwnedFd, Stat), Failure> {
    let deadline = Instant::now() + timeout;
    let shown = || display_path(&t.path);
    for _ in 0..1000 {
        // Check the type before opening: opening a device can have effects.
        let st =
            rfs::statat(&t.dir, t.name.as_c_str(), AtFlags::SYMLINK_NOFOLLOW).map_err(|e| {
                fail(
                    ErrorKind::FileNotFound,
                    format!("{}: {}", shown(), cause(e)),
                )
            })?;
        if let Some(k) = kind_of(&st) {
            return Err(fail(
                ErrorKind::FileNotFound,
                format!("{} is {k}, not a regular file", shown()),
            ));
        }
        // O_NONBLOCK: should a FIFO be swapped in after the check, open must not hang.
        let flags =
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
        let fd = match rfs::openat(&t.dir, t.name.as_c_str(), flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(Errno::NOENT) => continue, // replaced between stat and open
            Err(e) => {
                return Err(fail(
                    ErrorKind::ReadFailed,
                    format!("opening {}: {}", shown(), cause(e)),
                ))
            }
        };
        let st = rfs::fstat(&fd)
            .map_err(|e| fail(ErrorKind::ReadFailed, format!("{}: {}", shown(), cause(e))))?;
        if let Some(k) = kind_of(&st) {
            return Err(fail(
                ErrorKind::FileNotFound,
                format!("{} is {k}, not a regular file", shown()),
            ));
        }
        lock(&fd, deadline, timeout, &t.path)?;
        // Still the file the path names? (We may have waited behind an edit
        // that renamed a new file over it.)
        match rfs::statat(&t.dir, t.name.as_c_str(), AtFlags::SYMLINK_NOFOLLOW) {
            Ok(now) if now.st_dev == st.st_dev && now.st_ino == st.st_ino => {
                // Re-read the metadata under the lock: this is the baseline.
                let st = rfs::fstat(&fd).map_err(|e| fail(ErrorKind::ReadFailed, cause(e)))?;
                return Ok((fd, st));
            }
            _ => continue,
        }
    }
    Err(fail(
        ErrorKind::Busy,
        format!("{} kept changing while waiting for the lock", shown()),
    ))
}

fn lock(fd: &OwnedFd, deadline: Instant, timeout: Duration, path: &Path) -> Result<(), Failure> {
    let mut pause = Duration::from_micros(500);
    loop {
        match rfs::flock(fd, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => return Ok(()),
            Err(Errno::INTR) => {}
            Err(Errno::WOULDBLOCK) => {
                let now = Instant::now();
                if now >= deadline {
                    return Err(fail(
                        ErrorKind::Busy,
                        format!(
                            "another edit holds the lock on {} (waited {:.1} s); the file is unchanged",
                            display_path(path),
                            timeout.as_secs_f64()
                        ),
                    ));
                }
                std::thread::sleep(pause.min(deadline - now));
                pause = (pause * 2).min(Duration::from_millis(20));
            }
            // File systems without flock (some network mounts): proceed; the
            // pre-rename re-check still catches a concurrent change.
            Err(_) => return Ok(()),
        }
    }
}

// ---------------------------------------------------------------- temp + commit

/// Hidden temp names registered here are removed by the panic hook.
static NAMED_TEMP: Mutex<Option<(i32, CString)>> = Mutex::new(None);

/// Removes a registered named temp; called from the panic hook.
pub fn remove_registered_temp() {
    if let Ok(mut g) = NAMED_TEMP.try_lock() {
        if let Some((dirfd, name)) = g.take() {
            // SAFETY: the fd stays open for the life of the edit that registered it.
            let dir = unsafe { std::os::fd::BorrowedFd::borrow_raw(dirfd) };
            let _ = rfs::unlinkat(dir, name.as_c_str(), AtFlags::empty());
        }
    }
}

fn register(dir: BorrowedFd<'_>, name: Option<&CString>) {
    if let Ok(mut g) = NAMED_TEMP.lock() {
        *g = name.map(|n| (dir.as_raw_fd(), n.clone()));
    }
}

/// 16 random hex digits, for names that must not collide (temps, install
/// parts). Without getrandom (a very old kernel), time and pid: still unique
/// enough, since every use retries on collision or uses O_EXCL.
pub fn random_hex() -> String {
    let mut r = [0u8; 8];
    let mut filled = 0;
    while filled < r.len() {
        match rustix::rand::getrandom(&mut r[filled..], rustix::rand::GetRandomFlags::empty()) {
            Ok(n) => filled += n,
            Err(_) => {
                let t = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_nanos() as u64)
                    .unwrap_or(0);
                r = (t ^ ((std::process::id() as u64) << 32)).to_le_bytes();
                break;
            }
        }
    }
    r.iter().map(|b| format!("{b:02x}")).collect()
}

fn temp_name() -> CString {
    CString::new(format!(".as-edit-{}.tmp", random_hex())).expect("hex has no NUL")
}

struct Temp<'d> {
    fd: OwnedFd,
    /// Set once the temp has a name in the directory; removed on drop.
    name: Option<CString>,
    dir: BorrowedFd<'d>,
}

impl<'d> Temp<'d> {
    fn create(t: &'d Target) -> Result<Temp<'d>, Errno> {
        let flags = OFlags::TMPFILE | OFlags::RDWR | OFlags::CLOEXEC;
        // Test builds only: exercise the named-temp fallback on any file system.
        #[cfg(any(debug_assertions, feature = "fault-injection"))]
        if std::env::var_os("AS_EDIT_TEST_NO_TMPFILE").is_some() {
            return Temp::create_named(t.dir.as_fd());
        }
        match rfs::openat(&t.dir, c".", flags, Mode::from_raw_mode(0o600)) {
            Ok(fd) => {
                return Ok(Temp {
                    fd,
                    name: None,
                    dir: t.dir.as_fd(),
                })
            }
            // Not supported by this file system or kernel, or refused by a
            // seccomp profile (EPERM/ENOSYS): use a named temp. A real EPERM
            // (an immutable directory) comes back from the named attempt.
            Err(Errno::OPNOTSUPP)
            | Err(Errno::ISDIR)
            | Err(Errno::INVAL)
            | Err(Errno::NOENT)
            | Err(Errno::PERM)
            | Err(Errno::NOSYS) => {}
            Err(e) => return Err(e),
        }
        Temp::create_named(t.dir.as_fd())
    }

    fn create_named(dir: BorrowedFd<'d>) -> Result<Temp<'d>, Errno> {
        let flags =
            OFlags::CREATE | OFlags::EXCL | OFlags::RDWR | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        loop {
            let name = temp_name();
            match rfs::openat(dir, name.as_c_str(), flags, Mode::from_raw_mode(0o600)) {
                Ok(fd) => {
                    register(dir, Some(&name));
                    return Ok(Temp {
                        fd,
                        name: Some(name),
                        dir,
                    });
                }
                Err(Errno::EXIST) => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// Metadata, optional fsync, the stale check, then link (if unnamed) and
    /// rename. `flush` is `Some` with `--fsync` (holding the directory when it
    /// could be opened). Returns whether the edit is known durable: a flush
    /// that fails after the rename cannot undo it, so it is not an error.
    fn commit(
        mut self,
        t: &Target,
        file: &OwnedFd,
        st: &Stat,
        flush: Option<Option<OwnedFd>>,
    ) -> Result<bool, Failure> {
        self.commit_inner(t, file, st, flush)
        // Drop removes the named temp on failure.
    }

    fn commit_inner(
        &mut self,
        t: &Target,
        file: &OwnedFd,
        st: &Stat,
        flush: Option<Option<OwnedFd>>,
    ) -> Result<bool, Failure> {
        copy_metadata(file, &self.fd, st);
        if flush.is_some() {
            rfs::fsync(&self.fd).map_err(|e| write_failed(t, "flushing the new content", e))?;
        }
        // The last look before committing: a writer that ignores the lock may
        // have changed the file since we read it.
        let now = rfs::fstat(file).map_err(|e| write_failed(t, "re-checking the file", e))?;
        let named = rfs::statat(&t.dir, t.name.as_c_str(), AtFlags::SYMLINK_NOFOLLOW).ok();
        let same_inode = named.is_some_and(|n| n.st_dev == st.st_dev && n.st_ino == st.st_ino);
        let unchanged = now.st_size == st.st_size
            && now.st_mtime == st.st_mtime
            && now.st_mtime_nsec == st.st_mtime_nsec
            && now.st_ctime == st.st_ctime
            && now.st_ctime_nsec == st.st_ctime_nsec;
        if !same_inode || !unchanged {
            return Err(fail(
                ErrorKind::Conflict,
                format!(
                    "{} was changed by another writer while it was being edited; nothing was written",
                    display_path(&t.path)
                ),
            ));
        }
        if self.name.is_none() {
            self.link()
                .map_err(|e| write_failed(t, "naming the temp file", e))?;
        }
        let name = self.name.as_ref().expect("named above");
        rfs::renameat(&t.dir, name.as_c_str(), &t.dir, t.name.as_c_str())
            .map_err(|e| rename_refused(t, file, st, e))?;
        self.name = None; // it is the target now
        register(self.dir, None);
        // Committed: from here on nothing may report a failure.
        let Some(dir) = flush else {
            return Ok(true);
        };
        let flushed = match &dir {
            Some(d) => rfs::fsync(d),
            // The directory could not be opened for reading: flushing the
            // whole file system also makes the rename durable.
            None => rfs::syncfs(&self.fd),
        };
        // Test builds only: a flush that fails after the rename (EIO, or the
        // EINVAL of file systems that cannot sync a directory).
        #[cfg(any(debug_assertions, feature = "fault-injection"))]
        let flushed = match std::env::var("AS_EDIT_TEST_DIR_FSYNC_ERRNO").as_deref() {
            Ok("EINVAL") => Err(Errno::INVAL),
            Ok("EIO") => Err(Errno::IO),
            _ => flushed,
        };
        Ok(flushed.is_ok())
    }

    /// Gives the unnamed temp a hidden name in the directory, just before the rename.
    fn link(&mut self) -> Result<(), Errno> {
        let dir = self.dir;
        for _ in 0..16 {
            let name = temp_name();
            register(dir, Some(&name));
            let r = rfs::linkat(&self.fd, c"", dir, name.as_c_str(), AtFlags::EMPTY_PATH).or_else(
                |_| {
                    // Unprivileged (no CAP_DAC_READ_SEARCH): link through /proc.
                    let proc = format!("/proc/self/fd/{}", self.fd.as_raw_fd());
                    rfs::linkat(
                        CWD,
                        proc.as_str(),
                        dir,
                        name.as_c_str(),
                        AtFlags::SYMLINK_FOLLOW,
                    )
                },
            );
            // Test builds only: as if neither link worked (no capability, no /proc).
            #[cfg(any(debug_assertions, feature = "fault-injection"))]
            let r = match std::env::var_os("AS_EDIT_TEST_NO_LINK") {
                Some(_) => r.and_then(|()| {
                    let _ = rfs::unlinkat(dir, name.as_c_str(), AtFlags::empty());
                    Err(Errno::NOENT)
                }),
                None => r,
            };
            match r {
                Ok(()) => {
                    self.name = Some(name);
                    return Ok(());
                }
                Err(Errno::EXIST) => continue,
                Err(Errno::NOENT) | Err(Errno::PERM) | Err(Errno::ACCESS) | Err(Errno::NOSYS) => {
                    // Neither way works (no /proc, or linkat filtered): copy
                    // into a named temp.
                    register(dir, None);
                    return self.copy_to_named();
                }
                Err(e) => {
                    register(dir, None);
                    return Err(e);
                }
            }
        }
        Err(Errno::EXIST)
    }

    fn copy_to_named(&mut self) -> Result<(), Errno> {
        let named = Temp::create_named(self.dir)?;
        let len = rfs::fstat(&self.fd)?.st_size as u64;
        let mut off_in = 0u64;
        let mut buf = vec![0u8; CHUNK];
        let copied = (|| -> Result<(), Errno> {
            while off_in < len {
                let n = rustix::io::pread(&self.fd, &mut buf[..], off_in)?;
                if n == 0 {
                    return Err(Errno::IO);
                }
                let mut w = &buf[..n];
                while !w.is_empty() {
                    let k = rustix::io::write(&named.fd, w)?;
                    w = &w[k..];
                }
                off_in += n as u64;
            }
            let st = rfs::fstat(&self.fd)?;
            copy_metadata(&self.fd, &named.fd, &st);
            Ok(())
        })();
        // The unnamed original vanishes when dropped; a failed copy is
        // removed by the named temp's own drop.
        *self = named;
        copied
    }
}

impl Drop for Temp<'_> {
    fn drop(&mut self) {
        // An unnamed temp vanishes with its fd; a named one that was not
        // renamed over the target is removed here, on every failure path.
        if let Some(name) = self.name.take() {
            if rfs::unlinkat(self.dir, name.as_c_str(), AtFlags::empty()) == Err(Errno::PERM) {
                // A sticky directory lets only the owner remove a name, and
                // the temp was given the target's owner: take it back (root
                // without CAP_FOWNER still has CAP_CHOWN), then remove it.
                use rustix::process::{getegid, geteuid};
                let _ = rfs::fchown(&self.fd, Some(geteuid()), Some(getegid()));
                let _ = rfs::unlinkat(self.dir, name.as_c_str(), AtFlags::empty());
            }
            register(self.dir, None);
        }
    }
}

/// Owner and group (when permitted), then the mode (chown clears setuid),
/// then extended attributes, best-effort.
fn copy_metadata(from: &OwnedFd, to: &OwnedFd, st: &Stat) {
    let euid = rustix::process::geteuid();
    let uid = rfs::Uid::from_raw(st.st_uid);
    let gid = rfs::Gid::from_raw(st.st_gid);
    if euid.is_root() {
        let _ = rfs::fchown(to, Some(uid), Some(gid));
    } else if gid != rustix::process::getegid() {
        // Permitted when the caller is a member of the group.
        let _ = rfs::fchown(to, None, Some(gid));
    }
    let _ = rfs::fchmod(to, Mode::from_raw_mode(st.st_mode & 0o7777));
    copy_xattrs(from, to);
}

fn copy_xattrs(from: &OwnedFd, to: &OwnedFd) {
    let mut names = vec![0u8; 4096];
    let n = match rfs::flistxattr(from, &mut names[..]) {
        Ok(n) => n,
        Err(Errno::RANGE) => {
            names = vec![0u8; 65536];
            match rfs::flistxattr(from, &mut names[..]) {
                Ok(n) => n,
                Err(_) => return,
            }
        }
        Err(_) => return,
    };
    let mut value = vec![0u8; 65536];
    for name in names[..n].split(|b| *b == 0).filter(|s| !s.is_empty()) {
        // File capabilities are privileges granted to exact content: the
        // kernel drops them on any write, and an edit is new content.
        if name == b"security.capability" {
            continue;
        }
        let keep = name.starts_with(b"user.")
            || name.starts_with(b"security.")
            || name == b"system.posix_acl_access"
            || name.starts_with(b"trusted.");
        if !keep {
            continue;
        }
        let Ok(cname) = CString::new(name) else {
            continue;
        };
        if let Ok(len) = rfs::fgetxattr(from, cname.as_c_str(), &mut value[..]) {
            let _ = rfs::fsetxattr(to, cname.as_c_str(), &value[..len], XattrFlags::empty());
        }
    }
}
