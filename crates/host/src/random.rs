//! Random names for what the host library creates in a sandbox (install
//! parts and nonces, upload temps, multipart boundaries).

/// 16 random hex digits, for names that must not collide. Without
/// getrandom (a very old kernel), the time and the pid: still unique
/// enough, since every use retries on collision or checks the name.
pub(crate) fn hex() -> String {
    let mut r = [0u8; 8];
    let mut filled = 0;
    while filled < r.len() {
        match rustix::rand::getrandom(&mut r[filled..], rustix::rand::GetRandomFlags::empty()) {
            Ok(n) => filled += n,
            Err(_) => {
                let t = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos() as u64);
                r = (t ^ ((std::process::id() as u64) << 32)).to_le_bytes();
                break;
            }
        }
    }
    as_edit_wire::hex::encode(&r)
}

#[cfg(test)]
mod tests {
    #[test]
    fn sixteen_hex_digits_that_differ() {
        let (a, b) = (super::hex(), super::hex());
        assert_eq!(a.len(), 16);
        assert!(a
            .bytes()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
        assert_ne!(a, b);
    }
}
