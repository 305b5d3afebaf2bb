//! The commit window's two calls, made by a child that a SIGKILL to
//! as-edit does not stop.
//!
//! An unnamed temp must be linked to a hidden name and that name renamed
//! over the target: two calls, and Linux has none that puts an unnamed file
//! over an existing name. A SIGKILL between them left `.as-edit-*.tmp`
//! beside the unchanged target (1 to 7 kills in 1,000 aimed at the commit,
//! `scripts/kill-residue.sh`). So the two calls run in a child made with
//! `clone(CLONE_VM | CLONE_VFORK)`: it shares our memory (nothing is
//! copied), we sleep until it exits, and a SIGKILL to our pid leaves it
//! running to its `_exit`. It starts a session of its own (`setsid`), so a
//! signal to our process group (`timeout`, a shell's job control) does not
//! reach it either, and every other signal is blocked in it. Only a kill
//! of the whole cgroup (a container stopped, the OOM killer) inside the
//! two calls can still leave the name.
//!
//! The child reports through a shared anonymous page rather than the
//! stack we share: under valgrind (callgrind guards the instruction
//! counts) a vfork is run as a fork, and the page is shared either way. A
//! `clone` refused (a seccomp profile, a pids limit) returns `None`: the
//! caller makes the calls itself, as before.

use std::ffi::CStr;
use std::os::fd::{AsRawFd, BorrowedFd};

use rustix::fs::{self as rfs, AtFlags, CWD};
use rustix::io::Errno;

/// What the child did.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Outcome {
    /// Linked and renamed: the temp is the target.
    Done,
    /// Neither link worked: nothing was named.
    Link(Errno),
    /// Linked, then the rename failed: the hidden name exists.
    Rename(Errno),
    /// The child ended without a report (killed): the caller looks.
    Unknown,
}

const STACK: usize = 64 * 1024;
// The report's words, at the start of the shared page; the stack above it.
const RAN: u32 = 0x5a5a_0000;
const LINKED: u32 = 1;
const RENAMED: u32 = 2;

struct Args<'a> {
    temp: BorrowedFd<'a>,
    /// `/proc/self/fd/N`, for a caller without CAP_DAC_READ_SEARCH.
    proc_path: &'a CStr,
    dir: BorrowedFd<'a>,
    name: &'a CStr,
    target: &'a CStr,
    /// `[state, errno]` in the shared page.
    report: *mut [u32; 2],
    /// Test builds only: a FIFO the child reads between its two calls.
    #[cfg(any(debug_assertions, feature = "fault-injection"))]
    pause: Option<std::ffi::CString>,
}

/// Links `temp` as `name` in `dir` and renames that over `target`, in a
/// child; `None` if no child could be made.
pub(super) fn link_and_rename(
    temp: BorrowedFd<'_>,
    proc_path: &CStr,
    dir: BorrowedFd<'_>,
    name: &CStr,
    target: &CStr,
) -> Option<Outcome> {
    // Test builds only: as if clone were refused (the calls made inline).
    #[cfg(any(debug_assertions, feature = "fault-injection"))]
    if std::env::var_os("AS_EDIT_TEST_NO_CLONE").is_some() {
        return None;
    }
    // SAFETY: a fresh shared mapping of our own, unmapped below; the child
    // runs on it while we sleep in clone (CLONE_VFORK), or as a fork of us.
    unsafe {
        let page = libc::mmap(
            std::ptr::null_mut(),
            STACK,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_ANONYMOUS,
            -1,
            0,
        );
        if page == libc::MAP_FAILED {
            return None;
        }
        let report = page as *mut [u32; 2];
        let mut args = Args {
            temp,
            proc_path,
            dir,
            name,
            target,
            report,
            #[cfg(any(debug_assertions, feature = "fault-injection"))]
            pause: pause_fifo(),
        };
        // Every blockable signal blocked across the clone: the child starts
        // with them blocked (its own mask from then on); ours is put back.
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::sigprocmask(libc::SIG_BLOCK, &all, &mut old);
        let top = (page as *mut u8).add(STACK) as *mut libc::c_void;
        let pid = libc::clone(
            child,
            top,
            libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
            &mut args as *mut Args as *mut libc::c_void,
        );
        let outcome = if pid > 0 {
            // Reaps it (a fork under valgrind: waits for it). ECHILD when
            // SIGCHLD is ignored, after it has exited: the report is there.
            let mut status = 0;
            while libc::waitpid(pid, &mut status, 0) < 0
                && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR)
            {}
            let [state, errno] = std::ptr::read_volatile(report);
            let e = || Errno::from_raw_os_error(errno as i32);
            Some(match state {
                s if s == RAN | RENAMED => Outcome::Done,
                // A failed call always reports its errno: none is a child
                // killed after its link, before or inside its rename.
                _ if errno == 0 => Outcome::Unknown,
                s if s == RAN | LINKED => Outcome::Rename(e()),
                s if s == RAN => Outcome::Link(e()),
                _ => Outcome::Unknown,
            })
        } else {
            None
        };
        libc::sigprocmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        libc::munmap(page, STACK);
        outcome
    }
}

/// The child: raw system calls only (rustix's, no errno, no allocation).
extern "C" fn child(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the parent's `Args`, alive while it sleeps in clone.
    let a = unsafe { &*(arg as *const Args) };
    let report = |state: u32, e: Option<Errno>| {
        let errno = e.map_or(0, |e| e.raw_os_error() as u32);
        // SAFETY: the shared page outlives the child.
        unsafe { std::ptr::write_volatile(a.report, [RAN | state, errno]) };
    };
    let _ = rustix::process::setsid();
    let linked = rfs::linkat(a.temp, c"", a.dir, a.name, AtFlags::EMPTY_PATH)
        .or_else(|_| rfs::linkat(CWD, a.proc_path, a.dir, a.name, AtFlags::SYMLINK_FOLLOW));
    if let Err(e) = linked {
        report(0, Some(e));
        return 0;
    }
    report(LINKED, None);
    #[cfg(any(debug_assertions, feature = "fault-injection"))]
    pause(a.pause.as_deref());
    match rfs::renameat(a.dir, a.name, a.dir, a.target) {
        Ok(()) => report(RENAMED, None),
        Err(e) => report(LINKED, Some(e)),
    }
    0
}

/// A child that ended without a report (killed on its own): what the
/// directory says it did. Linked and not renamed is a rename to retry here.
#[cfg_attr(as_edit_small, optimize(size))]
pub(super) fn unknown(
    fd: BorrowedFd<'_>,
    dir: BorrowedFd<'_>,
    name: &CStr,
    target: &CStr,
) -> Option<Outcome> {
    let ours = rfs::fstat(fd).ok()?;
    let is_ours = |n: &CStr| {
        rfs::statat(dir, n, AtFlags::SYMLINK_NOFOLLOW)
            .is_ok_and(|s| s.st_dev == ours.st_dev && s.st_ino == ours.st_ino)
    };
    if is_ours(target) {
        return Some(Outcome::Done);
    }
    if is_ours(name) {
        return Some(match rfs::renameat(dir, name, dir, target) {
            Ok(()) => Outcome::Done,
            Err(e) => Outcome::Rename(e),
        });
    }
    None
}

/// Test builds only: the FIFO named by AS_EDIT_TEST_WINDOW_FIFO, read
/// between the link and the rename (in the child, or inline), so that a
/// test can kill us there.
#[cfg(any(debug_assertions, feature = "fault-injection"))]
pub(super) fn pause_fifo() -> Option<std::ffi::CString> {
    let p = std::env::var_os("AS_EDIT_TEST_WINDOW_FIFO")?;
    std::ffi::CString::new(std::os::unix::ffi::OsStrExt::as_bytes(p.as_os_str())).ok()
}

/// Test builds only: blocks until a writer opens the FIFO and writes.
#[cfg(any(debug_assertions, feature = "fault-injection"))]
pub(super) fn pause(fifo: Option<&CStr>) {
    if let Some(f) = fifo {
        if let Ok(fd) = rfs::open(f, rfs::OFlags::RDONLY, rfs::Mode::empty()) {
            let _ = rustix::io::read(&fd, &mut [0u8; 1]);
        }
    }
}

/// `/proc/self/fd/N` of `fd`, made before the window.
pub(super) fn proc_path(fd: BorrowedFd<'_>) -> std::ffi::CString {
    std::ffi::CString::new(format!("/proc/self/fd/{}", fd.as_raw_fd())).expect("digits")
}
