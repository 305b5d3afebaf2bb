//! The [`CHUNK`]-long read and write buffers, kept for the next file of a
//! transaction. Each is over musl's mmap threshold, so its malloc maps it
//! and its free unmaps it: per file an `mmap` and a `munmap` each, and the
//! page faults of fresh memory (ten small files: 40 of the 713 syscalls).

use std::sync::Mutex;

use super::CHUNK;

/// Two: a file's read buffer and its sink's write buffer are live at once.
static SPARE: Mutex<[Option<Vec<u8>>; 2]> = Mutex::new([None, None]);

/// A `CHUNK`-long buffer. A kept one holds what its last user left: every
/// caller reads only what it wrote (a read's count, the sink's fill).
pub(crate) fn take() -> Vec<u8> {
    let kept = SPARE
        .lock()
        .ok()
        .and_then(|mut s| s.iter_mut().find_map(Option::take));
    kept.unwrap_or_else(|| vec![0; CHUNK])
}

/// Keeps a buffer from [`take`] for the next one (if a slot is free).
pub(crate) fn give(b: Vec<u8>) {
    if b.len() != CHUNK {
        return;
    }
    if let Ok(mut s) = SPARE.lock() {
        if let Some(slot) = s.iter_mut().find(|s| s.is_none()) {
            *slot = Some(b);
        }
    }
}
