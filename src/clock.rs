//! The clocks, read through libc: a lock deadline's (`fs::lock::now`) and
//! a random name's fallback seed (`hex::random`). A leaf: it uses no other
//! module of the crate.

use std::time::Duration;

/// `id`'s time (zero should the call ever fail: a deadline then counts
/// from the first working call; a random name's fallback seed is then the
/// pid alone).
pub(crate) fn clock(id: libc::clockid_t) -> Duration {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: writes the one timespec on the stack.
    unsafe { libc::clock_gettime(id, &mut t) };
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}
