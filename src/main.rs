//! Thin entry point, process concerns only: signals, limits, the
//! allocator and panic hook that keep the one-result-line promise, then
//! `dispatch::answer` (every request is read and answered there), its
//! text written to stdout and stderr, and the exit.
// As in src/lib.rs: scripts/build-static.sh's --cfg as_edit_small builds
// the once-per-process code for size.
#![cfg_attr(as_edit_small, feature(optimize_attribute))]

mod arena;

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Write;

use arena::ARENA;

/// The system allocator behind `arena`'s small blocks, except that an
/// allocation that fails ends the
/// process with the one result line the contract promises, instead of std's
/// message on stderr and an abort (exit 134, no result line). A single-file
/// edit commits nothing before its final rename, so the target is
/// untouched; a transaction's commit in progress is undone first (without
/// allocating: `txn::undo`), so every file is old. The token
/// is every resource failure's (`write_failed`, see `fs/resource.rs`): no
/// memory is not a bug, and a host may retry. Once committed (the result
/// line's own allocations), the line is a success with the count and files
/// and a `detail` saying the rest was lost (`fs::committed_line`), exit 0.
struct OomToResultLine;

/// Preformatted: the out-of-memory path must not allocate.
const OOM_LINE: &[u8] = b"__RESULT__{\"error\":\"write_failed\",\"detail\":\"out of memory (an allocation failed); the file is unchanged, retry\"}\n";

#[cold]
#[cfg_attr(as_edit_small, optimize(size))]
fn out_of_memory() -> ! {
    // Removes a named temp without allocating (a lock try, unlinkat on a
    // C string already held; dropping it only frees).
    // A transaction's commit first: its registered temp name may hold an
    // original (exchanged) until undone, and must then stay.
    if as_edit::txn::undo_on_exit() != Some(false) {
        as_edit::fs::remove_registered_temp();
    }
    // Past the commit the change is made: say so (a success line without
    // the report), not "unchanged", which a host would retry or fall back on.
    let mut buf = [0u8; 256];
    let mut line = as_edit::fs::committed_line(&mut buf).unwrap_or(OOM_LINE);
    // SAFETY: fd 1 stays open for the life of the process; a raw write(2)
    // bypasses std's buffered stdout, whose buffer may not exist yet.
    let out = unsafe { std::os::fd::BorrowedFd::borrow_raw(1) };
    while !line.is_empty() {
        match rustix::io::write(out, line) {
            Ok(n) => line = &line[n..],
            Err(rustix::io::Errno::INTR) => {}
            Err(_) => break,
        }
    }
    // _exit, not process::exit: an allocation failing inside std's stdout
    // initialization (its first print) would make exit's stdout flush wait
    // on that same initialization forever, a hang with no exit. Nothing is
    // buffered to flush: the only output is the line just written raw.
    let code = match as_edit::fs::committed() {
        Some(_) => as_edit::protocol::EXIT_EDITED,
        None => as_edit::protocol::EXIT_NOT_EDITED,
    };
    // SAFETY: ends the process; no destructor needs to run.
    unsafe { libc::_exit(code) }
}

/// Test builds only: `AS_EDIT_TEST_OOM_AT=k` makes the k-th allocation
/// after `main` starts fail, so a test can run out of memory at every
/// allocation of a request in turn (0: never).
#[cfg(any(debug_assertions, feature = "fault-injection"))]
static OOM_AT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
#[cfg(any(debug_assertions, feature = "fault-injection"))]
static ALLOCS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

#[inline(always)]
fn injected_oom() -> bool {
    #[cfg(any(debug_assertions, feature = "fault-injection"))]
    {
        use std::sync::atomic::Ordering::Relaxed;
        let k = OOM_AT.load(Relaxed);
        if k != 0 && ALLOCS.fetch_add(1, Relaxed) + 1 == k {
            return true;
        }
    }
    false
}

// SAFETY: a block is the arena's (disjoint, aligned, `arena` docs) or
// `System`'s, told apart by its address; each goes back where it came from,
// and a null result is turned into the exit above.
unsafe impl GlobalAlloc for OomToResultLine {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        allocate(layout, false)
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        allocate(layout, true)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        reallocate(ptr, layout, new_size)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        deallocate(ptr, layout)
    }
}

// Not inlined, these three: every allocation site would carry the arena's
// code (30 KiB of text with LTO).
#[inline(never)]
unsafe fn allocate(layout: Layout, zeroed: bool) -> *mut u8 {
    if injected_oom() {
        out_of_memory();
    }
    grab(layout, zeroed)
}

unsafe fn grab(layout: Layout, zeroed: bool) -> *mut u8 {
    let p = ARENA.alloc(layout);
    if !p.is_null() {
        if zeroed {
            // A block taken back and handed out again holds old bytes.
            p.write_bytes(0, layout.size());
        }
        return p;
    }
    let p = match zeroed {
        true => System.alloc_zeroed(layout),
        false => System.alloc(layout),
    };
    if p.is_null() {
        out_of_memory();
    }
    huge_pages(p, layout.size());
    p
}

/// A block of 4 MiB or more (a long OLD and its copies, a long request, a
/// file's text held) is advised to fault in 2 MiB pages: 4 KiB faults are
/// otherwise a third of parsing a 48 MiB request. musl maps such a block alone, its
/// header in the first page: the advice covers those whole pages, the
/// mapping exactly ([`advised`]), since advice over part of it splits it
/// and musl's `mremap` growth then fails and copies instead. It follows the
/// mapping through `mremap`; refused, it is simply not taken. musl only:
/// glibc serves such blocks from its heap too once it has freed one, where
/// the advice would land on pages other blocks share.
fn huge_pages(p: *mut u8, size: usize) {
    if cfg!(target_env = "musl") && size >= 4 << 20 {
        let (first, end) = advised(p as usize, size);
        let advice = rustix::mm::Advice::LinuxHugepage;
        // SAFETY: the pages of musl's own mapping of this block; the advice
        // changes no byte of them.
        let _ = unsafe { rustix::mm::madvise(first as *mut std::ffi::c_void, end - first, advice) };
    }
}

/// The pages of musl's own mapping of a block at `p` of `size` bytes,
/// exactly: from the page of `p - 16` to the page end after `p + size + 4`.
/// musl maps `size + 20` bytes (a 16-byte header before the block, 4 bytes
/// after it) and cycles where in the slack of its last page the block
/// starts, in 16-byte steps up to 255. So the block may start a whole page
/// in (at `base + 4096`, step 255), and its end may lie 4 bytes before a
/// page that is still the mapping's (step 0): for sizes 4,077 to 4,092
/// past a multiple of 4 KiB, two individually mapped blocks in 256. The
/// page of `p` to the page end after `p + size` left out the header page
/// or the last one, which split the mapping (the mremap growth the advice
/// keeps then failed and copied). glibc's mapped chunks (16 bytes before
/// the block, at least 8 after) are never overshot either.
fn advised(p: usize, size: usize) -> (usize, usize) {
    (
        (p - 16) / 4096 * 4096,
        (p + size + 4).next_multiple_of(4096),
    )
}

#[inline(never)]
unsafe fn reallocate(ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
    if injected_oom() {
        out_of_memory();
    }
    if ARENA.owns(ptr) {
        if ARENA.resize(ptr, layout.size(), new_size) {
            return ptr;
        }
        // Moved (to a newer block or to `System`): copy, then free.
        let q = grab(
            Layout::from_size_align_unchecked(new_size, layout.align()),
            false,
        );
        q.copy_from_nonoverlapping(ptr, layout.size().min(new_size));
        ARENA.free(ptr, layout.size());
        return q;
    }
    let p = System.realloc(ptr, layout, new_size);
    if p.is_null() {
        out_of_memory();
    }
    if new_size > layout.size() {
        huge_pages(p, new_size);
    }
    p
}

#[inline(never)]
unsafe fn deallocate(ptr: *mut u8, layout: Layout) {
    if ARENA.owns(ptr) {
        return ARENA.free(ptr, layout.size());
    }
    System.dealloc(ptr, layout)
}

#[global_allocator]
static ALLOCATOR: OomToResultLine = OomToResultLine;

#[cfg_attr(as_edit_small, optimize(size))]
fn main() {
    // A file size limit (`ulimit -f`, a container's `--ulimit fsize`) under
    // the new content makes the kernel send SIGXFSZ, whose default action
    // kills: no result line, and a named temp left behind. Ignored, the
    // write fails with EFBIG and the edit is an honest `write_failed`.
    // SAFETY: no handler runs; called before any other thread exists.
    unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };
    // Test builds only: `ulimit -n N` as the static binary meets it. A
    // dynamically linked test build cannot start under `ulimit -n 3` (its
    // loader needs a descriptor), so the limit is set here, after it.
    #[cfg(any(debug_assertions, feature = "fault-injection"))]
    if let Some(n) = std::env::var("AS_EDIT_TEST_NOFILE")
        .ok()
        .and_then(|v| v.parse::<libc::rlim_t>().ok())
    {
        let lim = libc::rlimit {
            rlim_cur: n,
            rlim_max: n,
        };
        // SAFETY: a plain syscall on a value on the stack.
        unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) };
    }
    #[cfg(any(debug_assertions, feature = "fault-injection"))]
    if let Some(k) = std::env::var("AS_EDIT_TEST_OOM_AT")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        OOM_AT.store(k, std::sync::atomic::Ordering::Relaxed);
    }
    // Whatever happens, the host gets a result line. A single-file edit
    // commits only by its final rename, so after a panic the target is
    // untouched; a transaction panicking inside its commit phase has the
    // steps already done undone here, newest first (`txn::undo`), and says
    // whether every file is old again.
    std::panic::set_hook(Box::new(|info| {
        // The commit's undo first, as in `out_of_memory`.
        let undone = as_edit::txn::undo_on_exit();
        if undone != Some(false) {
            as_edit::fs::remove_registered_temp();
        }
        let mut detail = match info.payload().downcast_ref::<&str>() {
            Some(s) => (*s).to_owned(),
            None => info
                .payload()
                .downcast_ref::<String>()
                .cloned()
                .unwrap_or_else(|| "panic".to_owned()),
        };
        detail += match undone {
            None if as_edit::fs::committed().is_some() => " (after the commit: every change was made)",
            None => "",
            Some(true) => " (in the commit phase: rolled back, every file is old)",
            Some(false) => {
                " (in the commit phase: could not be fully undone; .as-edit-*.tmp names may hold originals)"
            }
        };
        let f =
            as_edit::protocol::Failure::new(as_edit::protocol::ErrorKind::InternalError, detail);
        let _ = std::io::stdout().write_all(as_edit::protocol::failure_line(&f, None).as_bytes());
        std::process::exit(as_edit::protocol::EXIT_NOT_EDITED);
    }));
    let mut argv = std::env::args_os();
    let argv0 = argv.next();
    let args: Vec<_> = argv.collect();
    let env_root = std::env::var_os("AS_EDIT_ROOT");
    let stdin = &mut std::io::stdin().lock();
    let r = as_edit::dispatch::answer(argv0.as_deref(), &args, env_root, stdin);
    // A result line that cannot be written (a closed stdout, a full device,
    // a broken pipe) changes neither the outcome nor its exit code, the one
    // signal left (protocol docs); nor may it turn into a panic. The
    // apply_patch mode exits 1 then, as Codex's binary does.
    let mut out = std::io::stdout().lock();
    let mut wrote = out.write_all(r.stdout.as_bytes());
    // Only when the exit or the order of the two streams depends on it
    // (the apply_patch mode): otherwise exit's own flush does it.
    if r.exit_code_unwritten != r.exit_code || !r.stderr.is_empty() {
        wrote = wrote.and_then(|()| out.flush());
        let _ = std::io::stderr().lock().write_all(r.stderr.as_bytes());
    }
    std::process::exit(match wrote {
        Ok(()) => r.exit_code,
        Err(_) => r.exit_code_unwritten,
    });
}

#[cfg(test)]
mod tests {
    use super::advised;

    /// musl's individually mapped block of n bytes: `n + 20` bytes mapped
    /// in whole pages, the block at 16 bytes plus 0 to `slack` (at most
    /// 255) steps of 16. Every start is advised over that mapping exactly,
    /// for the sizes around a page multiple, where the block starts a page
    /// in (step 255) or ends 4 bytes before the mapping's last page (step
    /// 0), and for some others.
    #[test]
    fn the_advice_covers_musls_mapping_exactly_at_every_offset() {
        let base = 0x7f00_0000_0000usize;
        let near = (4040..4096).chain(0..40);
        for n in near
            .chain((40..4040).step_by(37))
            .map(|r: usize| (5 << 20) + r)
        {
            let mapped = (n + 20).next_multiple_of(4096);
            let slack = ((mapped - 16 - 4 - n) / 16).min(255);
            for step in 0..=slack {
                let p = base + 16 + 16 * step;
                assert_eq!(advised(p, n), (base, base + mapped), "{n} {step}");
            }
        }
        // glibc's mapped chunk: the block 16 bytes past the mapping's start,
        // the mapping `n + 8` rounded to 16, plus 8, in whole pages.
        for n in (4usize << 20)..(4 << 20) + 8192 {
            let mapped = (((n + 8 + 15) & !15) + 8).next_multiple_of(4096);
            let (first, end) = advised(base + 16, n);
            assert!(first == base && end <= base + mapped, "{n}");
        }
    }
}
