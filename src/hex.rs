//! Lowercase hex (the wire crate's [`encode`] and [`decode_sha256`], under
//! the path they always had here) and random names for temps (the host
//! library has its own, for its install parts and boundaries). A random name needs the
//! system's random source (and the clock should that fail), so it is made
//! here, where I/O is allowed, not in the pure wire crate.

pub use as_edit_wire::hex::{decode_sha256, encode};

/// 16 random hex digits, for names that must not collide (temps, install
/// parts). Without getrandom (a very old kernel), time and pid: still unique
/// enough, since every use retries on collision or uses O_EXCL.
#[cfg_attr(as_edit_small, optimize(size))]
pub fn random() -> String {
    let mut r = [0u8; 8];
    let mut filled = 0;
    while filled < r.len() {
        match rustix::rand::getrandom(&mut r[filled..], rustix::rand::GetRandomFlags::empty()) {
            Ok(n) => filled += n,
            Err(_) => {
                // The wall clock through libc (fs::lock::now says why).
                let t = crate::clock::clock(libc::CLOCK_REALTIME).as_nanos() as u64;
                r = (t ^ ((std::process::id() as u64) << 32)).to_le_bytes();
                break;
            }
        }
    }
    encode(&r)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIGITS: &[u8; 16] = b"0123456789abcdef";

    #[test]
    fn random_names() {
        let (a, b) = (random(), random());
        assert_eq!(a.len(), 16);
        assert!(a.bytes().all(|c| DIGITS.contains(&c)));
        assert_ne!(a, b);
    }
}
