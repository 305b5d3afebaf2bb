//! Buffers kept for the next file of a transaction. musl's malloc maps a
//! block over its mmap threshold (the [`CHUNK`] read and write buffers) and
//! unmaps it when it is freed, and unmaps a malloc group once its last slot
//! is free (the gather's 4 KiB, the sink's pending output, each alone in
//! its group): per file an `mmap`, a `munmap` and fresh page faults for
//! each (ten small files: `mmap` and `munmap` were 148 of 713 syscalls,
//! 30 of 463 now).

use std::sync::Mutex;

/// Read and write buffers (the file system layer's): bounded memory
/// whatever the file size.
pub const CHUNK: usize = 256 * 1024;

/// Two `CHUNK` buffers (a file's read buffer and its sink's write buffer
/// are live at once), then one slot per [`Small`] user.
static SPARE: Mutex<[Vec<u8>; 4]> = Mutex::new([Vec::new(), Vec::new(), Vec::new(), Vec::new()]);

/// The users of a small kept buffer.
#[derive(Clone, Copy)]
pub enum Small {
    /// The engine's gathered output (`engine/gather.rs`).
    Gather = 2,
    /// The helper's sink: output held before writing starts.
    Pending = 3,
}

/// Small buffers larger than this are freed, not kept.
const SMALL_MAX: usize = 64 * 1024;

#[cfg_attr(as_edit_small, optimize(size))]
#[inline(never)]
fn take_at(i: usize) -> Vec<u8> {
    SPARE
        .lock()
        .map(|mut s| std::mem::take(&mut s[i]))
        .unwrap_or_default()
}

/// Keeps `v` in the first free slot of `slots` (else `v` is freed).
#[cfg_attr(as_edit_small, optimize(size))]
#[inline(never)]
fn keep(slots: std::ops::Range<usize>, v: Vec<u8>) {
    if let Ok(mut s) = SPARE.lock() {
        if let Some(slot) = s[slots].iter_mut().find(|s| s.capacity() == 0) {
            *slot = v;
        }
    }
}

/// A `CHUNK`-long buffer. A kept one holds what its last user left: every
/// caller reads only what it wrote (a read's count, the sink's fill).
#[cfg_attr(as_edit_small, optimize(size))]
#[inline(never)]
pub fn chunk() -> Vec<u8> {
    for i in 0..2 {
        let v = take_at(i);
        if v.len() == CHUNK {
            return v;
        }
    }
    vec![0; CHUNK]
}

/// Keeps a buffer from [`chunk`] for the next one.
#[cfg_attr(as_edit_small, optimize(size))]
#[inline(never)]
pub fn give_chunk(v: Vec<u8>) {
    if v.len() == CHUNK {
        keep(0..2, v);
    }
}

/// An empty buffer with the capacity `who`'s last one had.
#[cfg_attr(as_edit_small, optimize(size))]
#[inline(never)]
pub fn small(who: Small) -> Vec<u8> {
    take_at(who as usize)
}

/// Keeps `who`'s buffer, emptied, for its next one.
#[cfg_attr(as_edit_small, optimize(size))]
#[inline(never)]
pub fn give_small(who: Small, mut v: Vec<u8>) {
    if v.capacity() <= SMALL_MAX {
        v.clear();
        keep(who as usize..who as usize + 1, v);
    }
}
