//! The binary's small allocations (`main.rs`'s allocator; not part of the
//! library): a bump arena in `.bss`.
//!
//! musl's allocator hands freed groups back to the kernel at once, so the
//! few hundred small allocations of a request cost tens of `mmap` and
//! `munmap` pairs, each new mapping a fresh zeroed page to fault in (a
//! 5-file patch: 40 `mmap`, 32 `munmap`). The process lives for one
//! request, so a block of up to [`SMALL`] bytes is carved from a 1 MiB
//! static in order instead. Freeing the newest block moves the bump back
//! (temporaries and a growing `Vec` stay in place); any other block is
//! given up until exit. When the arena is full, allocations go to musl as
//! before. So a request's RSS grows by at most [`ARENA`] (in practice the
//! pages it touches), and nothing is ever handed out twice.

use std::alloc::Layout;
use std::cell::UnsafeCell;
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release};

/// The binary's arena: zero-initialized, so it costs no file bytes, and only
/// the pages used are ever faulted in.
pub static ARENA: Bump<{ 1 << 20 }> = Bump::new();
/// The largest block served (bigger ones, the streaming buffers among them,
/// go to musl and are returned to the kernel when freed).
pub const SMALL: usize = 16 * 1024;

/// `N` bytes handed out in order.
#[repr(C, align(4096))]
pub struct Bump<const N: usize> {
    area: UnsafeCell<[u8; N]>,
    /// Offset of the first free byte.
    top: AtomicUsize,
}

// SAFETY: every byte range is handed out by one successful compare-exchange
// of `top` and belongs to its allocation alone until freed. Bytes taken
// back (a free, a shrink: Release) and handed out again (Acquire) are so
// ordered: the old owner's writes happen before the new owner's, on any
// thread (with Relaxed they raced where stores may be reordered, aarch64;
// the binary has one thread, but its unit tests run several on it).
unsafe impl<const N: usize> Sync for Bump<N> {}

impl<const N: usize> Bump<N> {
    /// An empty arena.
    pub const fn new() -> Self {
        Bump {
            area: UnsafeCell::new([0; N]),
            top: AtomicUsize::new(0),
        }
    }

    fn base(&self) -> usize {
        self.area.get() as usize
    }

    /// Whether `p` was handed out here.
    pub fn owns(&self, p: *mut u8) -> bool {
        (p as usize).wrapping_sub(self.base()) < N
    }

    /// A block for `layout`, or null when it is too big or the arena is full.
    pub fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.size() > SMALL || layout.align() > 4096 {
            return std::ptr::null_mut();
        }
        let mut top = self.top.load(Relaxed);
        loop {
            // The area is 4096-aligned: aligning the offset aligns the address.
            let start = top.next_multiple_of(layout.align());
            let end = start + layout.size();
            if end > N {
                return std::ptr::null_mut();
            }
            match self.top.compare_exchange_weak(top, end, Acquire, Relaxed) {
                Ok(_) => return (self.base() + start) as *mut u8,
                Err(now) => top = now,
            }
        }
    }

    /// Frees the block of `size` bytes at `p` (owned here): only the newest
    /// block's bytes are taken back.
    pub fn free(&self, p: *mut u8, size: usize) {
        let start = p as usize - self.base();
        let _ = self
            .top
            .compare_exchange(start + size, start, Release, Relaxed);
    }

    /// Resizes the block at `p` (owned here) in place: a shrink always, a
    /// growth when it is the newest block and stays within [`SMALL`] and the
    /// arena. False when the caller must move it.
    pub fn resize(&self, p: *mut u8, old: usize, new: usize) -> bool {
        let start = p as usize - self.base();
        if new <= old {
            let _ = self
                .top
                .compare_exchange(start + old, start + new, Release, Relaxed);
            return true;
        }
        new <= SMALL
            && start + new <= N
            && self
                .top
                .compare_exchange(start + old, start + new, AcqRel, Relaxed)
                .is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_disjoint_aligned_and_the_newest_is_taken_back() {
        let l = |s, a| Layout::from_size_align(s, a).unwrap();
        // Its own arena: the global one serves the test harness too.
        let m: Box<Bump<{ 2 * SMALL }>> = Box::new(Bump::new());
        let (alloc, free, resize, owns) = (
            |l| m.alloc(l),
            |p, s| m.free(p, s),
            |p, o, n| m.resize(p, o, n),
            |p| m.owns(p),
        );
        let a = alloc(l(10, 1));
        let b = alloc(l(24, 8));
        assert!(owns(a) && owns(b));
        assert_eq!(b as usize % 8, 0);
        assert!(b as usize >= a as usize + 10);
        // b is the newest: freed, the next block starts where it did.
        free(b, 24);
        let c = alloc(l(24, 8));
        assert_eq!(c, b);
        // a is not the newest: freeing it takes nothing back.
        free(a, 10);
        let d = alloc(l(1, 1));
        assert!(d as usize >= c as usize + 24);
        // The newest grows in place; an older block does not.
        assert!(resize(d, 1, 100));
        assert!(!resize(c, 24, 48));
        assert!(resize(c, 24, 8));
        assert!(alloc(l(SMALL + 1, 1)).is_null());
        // Full: null, for the caller to go to musl.
        assert!(!alloc(l(SMALL, 1)).is_null());
        assert!(alloc(l(SMALL, 1)).is_null());
        assert!(!owns(std::ptr::null_mut()));
        assert_eq!(m.base() % 4096, 0);
    }
    /// The arena's edges, on a small one: a block ending exactly at the end
    /// is served and owned, one byte more is not (null, for musl); the end
    /// itself and the byte before the start are not owned; alignment up to
    /// 4096 comes from the offset, beyond it musl's; a growth in place stops
    /// exactly at the end; freeing the newest takes back only its own bytes
    /// (not the padding an alignment put before it).
    #[test]
    fn the_edges_of_a_small_arena() {
        let l = |s, a| Layout::from_size_align(s, a).unwrap();
        let m: Box<Bump<8192>> = Box::new(Bump::new());
        let base = m.base() as *mut u8;
        // Exactly full, then nothing more.
        let a = m.alloc(l(8192, 1));
        assert_eq!(a, base);
        assert!(m.alloc(l(1, 1)).is_null());
        m.free(a, 8192);
        assert_eq!(m.top.load(Relaxed), 0);
        // One byte over: null, and nothing taken.
        assert!(m.alloc(l(8193, 1)).is_null());
        assert_eq!(m.top.load(Relaxed), 0);
        assert!(m.owns(base) && m.owns(base.wrapping_add(8191)));
        assert!(!m.owns(base.wrapping_add(8192)) && !m.owns(base.wrapping_sub(1)));
        // Alignment: 4096 from the offset; 8192 is musl's.
        let b = m.alloc(l(1, 1));
        let c = m.alloc(l(10, 4096));
        assert_eq!((b, c), (base, base.wrapping_add(4096)));
        assert!(m.alloc(l(1, 8192)).is_null());
        // The newest grows up to the end exactly, not a byte past it.
        assert!(!m.resize(c, 10, 4097));
        assert!(m.resize(c, 10, 4096));
        assert_eq!(m.top.load(Relaxed), 8192);
        assert!(m.alloc(l(1, 1)).is_null());
        // Shrunk, the bytes come back; freed, the padding before it stays.
        assert!(m.resize(c, 4096, 16));
        assert_eq!(m.top.load(Relaxed), 4096 + 16);
        m.free(c, 16);
        assert_eq!(m.top.load(Relaxed), 4096);
        // An older block (b) freed after a newer one is not taken back.
        let d = m.alloc(l(8, 8));
        assert_eq!(d, base.wrapping_add(4096));
        m.free(b, 1);
        assert_eq!(m.top.load(Relaxed), 4096 + 8);
        // A shrink of an older block keeps everything where it is.
        assert!(m.resize(b, 1, 1));
        assert_eq!(m.top.load(Relaxed), 4096 + 8);
    }
}
