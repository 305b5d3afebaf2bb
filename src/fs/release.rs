//! Closing a transaction's replaced originals side by side.
//!
//! An original that lost its last name in the commit is freed at its last
//! close, and where the file system discards freed blocks synchronously
//! (ext4 without a journal mounted with `discard`, as this project's CI
//! disk is: `ext4_free_blocks` -> `blkdev_issue_discard` ->
//! `submit_bio_wait`, seen in tracefs stacks) each close waits for the
//! device: ten files closed one after another took 34 ms there, and ten at
//! once 13 ms. So after the first close slower than [`QUICK`] the rest are
//! closed by up to [`WORKERS`] workers at once (until then they are closed
//! here: a worker costs about 0.1 ms, more than a close that frees its
//! blocks at once, as on tmpfs, or small files here):
//! `clone(CLONE_VM | CLONE_FILES)` children on small stacks that
//! share our memory and descriptor table and make only the `close` calls,
//! then reaped. (std's threads cost 37 KiB of binary, 7% of the budget;
//! musl's `clone` refuses `CLONE_THREAD`.) A worker that cannot be made (a
//! pids limit, a seccomp profile, qemu-user, which emulates no such child)
//! leaves its share to be closed here, one after another. Valgrind does
//! not refuse such a child: it ends the whole process ("Unsupported clone()
//! flags", after the commit, before the result line), so under it every
//! descriptor is closed here ([`under_valgrind`]).
//!
//! A SIGKILL while workers run leaves them to finish their closes; each
//! then waits as a zombie for PID 1 to reap it, so in a container whose
//! PID 1 never reaps (`sleep infinity` without `--init`) such a kill costs
//! up to 16 entries of the pids limit (measured: 306 after 29 kills aimed
//! at a 256-file transaction's close). A killed single-file edit leaves its
//! commit child likewise (`window`); an edit that is not killed leaves none.

use std::os::fd::{IntoRawFd, OwnedFd, RawFd};

const WORKERS: usize = 16;
const STACK: usize = 16 * 1024;
/// A close slower than this waited on the device.
const QUICK: std::time::Duration = std::time::Duration::from_micros(200);

struct Job<'a> {
    fds: &'a [RawFd],
}

/// Closes `fds`, several at a time when there are several.
pub(crate) fn close_all(fds: Vec<OwnedFd>) {
    if fds.len() < 2 || under_valgrind() {
        return;
    }
    let mut raw: Vec<RawFd> = fds.into_iter().map(IntoRawFd::into_raw_fd).collect();
    // Close here while closes are quick (a fresh worker costs more than a
    // close that frees nothing slowly: tmpfs, ext4 without discard): the
    // workers take over at the first slow one.
    while raw.len() > 1 {
        let start = crate::fs::lock::now();
        raw.pop().into_iter().for_each(close);
        if crate::fs::lock::now().saturating_sub(start) > QUICK || slow_for_tests() {
            break;
        }
    }
    if raw.len() < 2 {
        return raw.into_iter().for_each(close);
    }
    let per = raw.len().div_ceil(WORKERS);
    let jobs: Vec<Job> = raw.chunks(per).map(|fds| Job { fds }).collect();
    let inline = |j: &Job| j.fds.iter().for_each(|&fd| close(fd));
    // SAFETY: the stacks are a fresh mapping of ours, unmapped only after
    // every worker has exited; each reads its `Job`, which outlives it, and
    // makes raw system calls only (no TLS, no allocation).
    unsafe {
        let len = STACK * jobs.len();
        let stacks = libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        );
        if stacks == libc::MAP_FAILED {
            return jobs.iter().for_each(inline);
        }
        // Signals are for us: the workers start with all blocked.
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::sigprocmask(libc::SIG_BLOCK, &all, &mut old);
        let flags = libc::CLONE_VM | libc::CLONE_FILES | libc::SIGCHLD;
        let mut started = Vec::with_capacity(jobs.len());
        for (i, job) in jobs.iter().enumerate() {
            let top = (stacks as *mut u8).add(STACK * (i + 1)) as *mut libc::c_void;
            let arg = job as *const Job as *mut libc::c_void;
            match libc::clone(worker, top, flags, arg) {
                pid if pid > 0 => started.push(pid),
                _ => inline(job),
            }
        }
        libc::sigprocmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        for pid in started {
            // ECHILD when SIGCHLD is ignored: then it has exited already.
            let mut status = 0;
            while libc::waitpid(pid, &mut status, 0) < 0
                && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR)
            {}
        }
        libc::munmap(stacks, len);
    }
}

/// Test builds only: `AS_EDIT_TEST_SLOW_CLOSE` takes every close for a slow
/// one, so the workers run on any disk.
fn slow_for_tests() -> bool {
    #[cfg(any(debug_assertions, feature = "fault-injection"))]
    if std::env::var_os("AS_EDIT_TEST_SLOW_CLOSE").is_some() {
        return true;
    }
    false
}

fn close(fd: RawFd) {
    // SAFETY: each descriptor was taken from its OwnedFd and is closed once.
    unsafe { rustix::io::close(fd) };
}

/// A worker: closes its share and returns (clone's wrapper then exits).
extern "C" fn worker(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is a `Job` that outlives the worker (reaped above).
    let job = unsafe { &*(arg as *const Job) };
    job.fds.iter().for_each(|&fd| close(fd));
    0
}

/// Valgrind's RUNNING_ON_VALGRIND client request: a special no-op (four
/// rotations of a register by 128 bits in all, then a marker instruction)
/// that valgrind answers with its nesting level and the CPU leaves at 0.
#[cfg_attr(as_edit_small, optimize(size))]
fn under_valgrind() -> bool {
    // [request, five arguments]; 0x1001 is RUNNING_ON_VALGRIND.
    let args: [usize; 6] = [0x1001, 0, 0, 0, 0, 0];
    let level: usize;
    // SAFETY: the rotations restore their register; valgrind only reads
    // `args` and writes the result register.
    #[cfg(target_arch = "x86_64")]
    unsafe {
        std::arch::asm!(
            "rol rdi, 3", "rol rdi, 13", "rol rdi, 61", "rol rdi, 51",
            "xchg rbx, rbx",
            inout("rdx") 0usize => level,
            in("rax") args.as_ptr(),
            options(nostack),
        );
    }
    // SAFETY: as above.
    #[cfg(target_arch = "aarch64")]
    unsafe {
        std::arch::asm!(
            "ror x12, x12, #3", "ror x12, x12, #13", "ror x12, x12, #51", "ror x12, x12, #61",
            "orr x10, x10, x10",
            inout("x3") 0usize => level,
            in("x4") args.as_ptr(),
            options(nostack),
        );
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    let level = args[1];
    level != 0
}
