//! The new content's file, behind one small API: [`Temp::create`] beside the
//! target, write to [`Temp::fd`], then [`Temp::commit`] renames it over the
//! target; dropped uncommitted, it leaves nothing behind.
//!
//! Two ways inside, kept apart: an unnamed `O_TMPFILE` (vanishes with the
//! process, even under SIGKILL; linked to a hidden name only just before the
//! rename), and, where the file system, kernel or a seccomp filter refuses
//! that, a hidden named temp from the start, registered so that the panic
//! hook can remove it and removed on drop.
//!
//! The commit window. An unnamed temp must get a name (`linkat`) before
//! `renameat` can put it over the target, and a SIGKILL that lands between
//! the start of that `linkat` and the rename leaves `.as-edit-*.tmp` beside
//! the unchanged target: no kernel call replaces a file with an unnamed one.
//! So the window is kept to the two calls themselves. btrfs and ext4
//! (`auto_da_alloc`) start writing the renamed file's data back inside a
//! rename over a file, and on btrfs a rename waiting on that can sleep
//! killably (seen failing with EINTR under SIGKILL): with an 8 MiB file
//! and no write-back first, the window is 17.5 ms median on btrfs, and
//! residue follows in 58 of 1,000 kills (`scripts/kill-residue.sh`). So [`settle`] writes the
//! temp's data back and waits for it (`sync_file_range`: data only, no
//! journal commit, no cache flush) before the `linkat`, while nothing names
//! the temp; `--fsync` flushes it instead. xfs's rename does not flush, but
//! it can commit the rename before the data of a file not yet written back:
//! power cuts left 3 of 4 targets empty there without the write-back
//! (`scripts/power-cut.sh`), so it is done on every file system (tmpfs has
//! no writeback: one cheap call). What remains is the `linkat` and the rename
//! themselves, about 40 µs median on ext4 and xfs and 110 µs on btrfs; a
//! SIGKILL inside them still left the name in about one kill in 300 aimed
//! at the commit, so they are made by a child that outlives a SIGKILL to
//! us (`window`), and only a kill of the whole cgroup there can leave it
//! (README Guarantees; scripts/bench/README.md has the figures).

use std::ffi::CString;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::sync::Mutex;

use rustix::fs::{self as rfs, AtFlags, Mode, OFlags, Stat, CWD};
use rustix::io::Errno;

use super::error::{FsError, WriteStep};
use super::lock::recheck;
use super::meta::{copy_metadata, rename_refused};
use super::window::{self, unknown, Outcome};
use super::{Target, CHUNK};

/// Hidden temp names registered here are removed by the panic hook.
static NAMED_TEMP: Mutex<Option<(i32, CString)>> = Mutex::new(None);

/// Removes a registered named temp; called from the panic hook and from the
/// out-of-memory exit, so it allocates nothing: a lock try, `unlinkat` on
/// the C string held, and dropping it (a free).
#[cfg_attr(as_edit_small, optimize(size))]
pub fn remove_registered_temp() {
    if let Ok(mut g) = NAMED_TEMP.try_lock() {
        if let Some((dirfd, name)) = g.take() {
            // SAFETY: the fd stays open for the life of the edit that registered it.
            let dir = unsafe { BorrowedFd::borrow_raw(dirfd) };
            let _ = rfs::unlinkat(dir, name.as_c_str(), AtFlags::empty());
        }
    }
}

#[cfg_attr(as_edit_small, optimize(size))]
fn register(dir: BorrowedFd<'_>, name: Option<&CString>) {
    // Cloned before the lock is taken: an allocation failing while it is
    // held would leave the out-of-memory exit unable to remove the temp.
    let entry = name.map(|n| (dir.as_raw_fd(), n.clone()));
    if let Ok(mut g) = NAMED_TEMP.lock() {
        *g = entry;
    }
}

/// A fresh hidden name: `.as-edit-<16 hex>.tmp` (what a crash may leave).
pub(crate) fn temp_name() -> CString {
    CString::new(format!(".as-edit-{}.tmp", crate::hex::random())).expect("hex has no NUL")
}

/// A temp file in the target's directory.
pub(crate) struct Temp<'d> {
    fd: OwnedFd,
    /// Set once the temp has a name in the directory; removed on drop.
    name: Option<CString>,
    dir: BorrowedFd<'d>,
}

impl<'d> Temp<'d> {
    /// An unnamed temp where the file system allows it, else a named one.
    #[cfg_attr(as_edit_small, optimize(size))]
    pub(crate) fn create(t: &'d Target) -> Result<Temp<'d>, Errno> {
        let flags = OFlags::TMPFILE | OFlags::RDWR | OFlags::CLOEXEC;
        // Test builds only: the n-th temp of the process meets a full disk
        // (AS_EDIT_TEST_TEMP_ENOSPC=n).
        #[cfg(any(debug_assertions, feature = "fault-injection"))]
        {
            use std::sync::atomic::{AtomicU32, Ordering};
            static MADE: AtomicU32 = AtomicU32::new(0);
            let n = MADE.fetch_add(1, Ordering::Relaxed) + 1;
            if std::env::var("AS_EDIT_TEST_TEMP_ENOSPC").ok() == Some(n.to_string()) {
                return Err(Errno::NOSPC);
            }
        }
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

    #[cfg_attr(as_edit_small, optimize(size))]
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

    /// The temp's descriptor (read by the next op of a transaction).
    pub(crate) fn file(&self) -> &OwnedFd {
        &self.fd
    }

    /// Where the new content is written.
    pub(crate) fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    /// Metadata, optional fsync, the stale check, then link (if unnamed) and
    /// rename. `flush` is `Some` with `--fsync` (holding the directory when it
    /// could be opened). Returns whether the edit is known durable: a flush
    /// that fails after the rename cannot undo it, so it is not an error.
    #[cfg_attr(as_edit_small, optimize(size))]
    pub(crate) fn commit(
        mut self,
        t: &Target,
        file: &OwnedFd,
        st: &Stat,
        flush: Option<Option<OwnedFd>>,
    ) -> Result<bool, FsError> {
        self.commit_inner(t, file, st, flush)
        // Drop removes the named temp on failure.
    }

    #[cfg_attr(as_edit_small, optimize(size))]
    fn commit_inner(
        &mut self,
        t: &Target,
        file: &OwnedFd,
        st: &Stat,
        flush: Option<Option<OwnedFd>>,
    ) -> Result<bool, FsError> {
        let failed = |step, errno| FsError::Write {
            path: t.path.clone(),
            step,
            errno,
        };
        copy_metadata(file, &self.fd, st).map_err(|e| failed(WriteStep::Metadata, e))?;
        settle(&self.fd, flush.is_some()).map_err(|e| failed(WriteStep::Flush, e))?;
        recheck(t, file, st)?;
        match self.commit_in_child(t) {
            Some(Ok(())) => {}
            Some(Err(e)) => return Err(rename_refused(t, file, st, e)),
            None => {
                self.named(flush.is_some())
                    .map_err(|e| failed(WriteStep::NameTemp, e))?;
                let name = self.name.as_ref().expect("named above");
                #[cfg(any(debug_assertions, feature = "fault-injection"))]
                window::pause(window::pause_fifo().as_deref());
                rfs::renameat(&t.dir, name.as_c_str(), &t.dir, t.name.as_c_str())
                    .map_err(|e| rename_refused(t, file, st, e))?;
            }
        }
        self.renamed(); // it is the target now
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

    /// The unnamed temp linked and renamed over the target by a child that
    /// outlives a SIGKILL to us (`window`). `None`: no child could be made,
    /// or neither link worked there; the caller makes the calls itself
    /// (and falls back to a copy). `Some(Err)`: linked, the rename failed,
    /// and the name is ours to remove.
    #[cfg_attr(as_edit_small, optimize(size))]
    fn commit_in_child(&mut self, t: &Target) -> Option<Result<(), Errno>> {
        // Test builds only: AS_EDIT_TEST_NO_LINK is simulated by `link`.
        #[cfg(any(debug_assertions, feature = "fault-injection"))]
        if std::env::var_os("AS_EDIT_TEST_NO_LINK").is_some() {
            return None;
        }
        if self.name.is_some() {
            return None;
        }
        let (fd, dir) = (self.fd.as_fd(), self.dir);
        let proc = window::proc_path(fd);
        for _ in 0..16 {
            let name = temp_name();
            register(dir, Some(&name));
            let outcome = window::link_and_rename(fd, &proc, dir, &name, &t.name);
            let outcome = match outcome {
                Some(Outcome::Unknown) => unknown(fd, dir, &name, &t.name),
                o => o,
            };
            match outcome {
                Some(Outcome::Done) => return Some(Ok(())),
                Some(Outcome::Link(Errno::EXIST)) => continue,
                Some(Outcome::Rename(e)) => {
                    self.name = Some(name);
                    return Some(Err(e));
                }
                _ => {
                    register(dir, None);
                    return None;
                }
            }
        }
        register(dir, None);
        None
    }

    /// The temp's hidden name in its directory, linked now if it had none
    /// (just before the rename). `fsync`: a copy made instead is flushed.
    #[cfg_attr(as_edit_small, optimize(size))]
    pub(crate) fn named(&mut self, fsync: bool) -> Result<&CString, Errno> {
        if self.name.is_none() {
            self.link(fsync)?;
        }
        Ok(self.name.as_ref().expect("named above"))
    }

    /// The name was renamed away (it is the target now): nothing to remove.
    pub(crate) fn renamed(&mut self) {
        self.name = None;
        register(self.dir, None);
    }

    /// Gives the unnamed temp a hidden name in the directory, just before the
    /// rename. `fsync`: the content must be flushed (a copy is a new file).
    #[cfg_attr(as_edit_small, optimize(size))]
    fn link(&mut self, fsync: bool) -> Result<(), Errno> {
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
                    return self.copy_to_named(fsync);
                }
                Err(e) => {
                    register(dir, None);
                    return Err(e);
                }
            }
        }
        Err(Errno::EXIST)
    }

    /// The content copied into a new named temp, settled like the unnamed
    /// one was: that was not the file renamed over the target.
    #[cfg_attr(as_edit_small, optimize(size))]
    fn copy_to_named(&mut self, fsync: bool) -> Result<(), Errno> {
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
            copy_metadata(&self.fd, &named.fd, &st)?;
            settle(&named.fd, fsync)
        })();
        // The unnamed original vanishes when dropped; a failed copy is
        // removed by the named temp's own drop.
        *self = named;
        copied
    }
}

/// The new content on the device before the temp gets a name. With
/// `--fsync` (`durable`) flushed. Without it, on every file system, still
/// written back and waited for (`sync_file_range`: data only, no journal
/// commit, no cache flush): it keeps btrfs's and ext4's rename-time
/// writeback out of the commit window, and after a power cut the target is
/// old or new, never empty (XFS can commit the rename before the data of a
/// file not yet written back; see the module docs). A write-back error
/// fails the edit before anything is committed; where the call is
/// unsupported or filtered it is skipped.
#[cfg_attr(as_edit_small, optimize(size))]
pub(crate) fn settle(fd: &OwnedFd, durable: bool) -> Result<(), Errno> {
    if durable {
        return rfs::fsync(fd);
    }
    let flags = libc::SYNC_FILE_RANGE_WAIT_BEFORE
        | libc::SYNC_FILE_RANGE_WRITE
        | libc::SYNC_FILE_RANGE_WAIT_AFTER;
    // SAFETY: a syscall on a descriptor we own; no memory is passed.
    if unsafe { libc::sync_file_range(fd.as_raw_fd(), 0, 0, flags) } == 0 {
        return Ok(());
    }
    match Errno::from_io_error(&std::io::Error::last_os_error()) {
        Some(e @ (Errno::IO | Errno::NOSPC | Errno::DQUOT)) => Err(e),
        _ => Ok(()),
    }
}

/// Starts writing the temp's data back without waiting (a transaction
/// starts every file's, then [`settle`]s each: the writes overlap).
#[cfg_attr(as_edit_small, optimize(size))]
pub(crate) fn start_writeback(fd: &OwnedFd) {
    // SAFETY: a syscall on a descriptor we own; errors surface in `settle`.
    unsafe { libc::sync_file_range(fd.as_raw_fd(), 0, 0, libc::SYNC_FILE_RANGE_WRITE) };
}

impl Drop for Temp<'_> {
    #[cfg_attr(as_edit_small, optimize(size))]
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
