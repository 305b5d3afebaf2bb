//! Memory advice for the pages of a buffer about to be read into
//! (`madvise`): huge pages for a long OLD's slot, populated pages for the
//! `--hints` re-read.

/// `madvise` over the whole 4 KiB pages of `[start, start + len)`, memory
/// the caller owns and has not initialized (or may see zeroed); where the
/// call fails the advice is simply not taken.
#[cfg_attr(as_edit_small, optimize(size))]
#[inline(never)]
pub(crate) fn advise(start: usize, len: usize, advice: rustix::mm::Advice) {
    const PAGE: usize = 4096;
    let first = start.next_multiple_of(PAGE);
    let end = (start + len) / PAGE * PAGE;
    if end > first {
        // SAFETY: [first, end) lies inside the caller's allocation; the
        // advice used here (populate, huge pages) changes no byte the
        // caller relies on: at most it maps zero-filled pages where none
        // were yet.
        let _ = unsafe { rustix::mm::madvise(first as *mut std::ffi::c_void, end - first, advice) };
    }
}
