//! Lowercase hex, shared by both sides: digests (`--expect-sha256` in,
//! `--report` out) and random names (temps here, install parts and
//! boundaries in the host library). Neutral: no file system, no argv.

const DIGITS: &[u8; 16] = b"0123456789abcdef";

/// Lowercase hex of `bytes`.
#[cfg_attr(as_edit_small, optimize(size))]
pub fn encode(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(2 * bytes.len());
    for b in bytes {
        s.push(char::from(DIGITS[(b >> 4) as usize]));
        s.push(char::from(DIGITS[(b & 15) as usize]));
    }
    s
}

/// A SHA-256 digest from exactly 64 lowercase hex digits; `None` otherwise.
#[cfg_attr(as_edit_small, optimize(size))]
pub fn decode_sha256(s: &str) -> Option<[u8; 32]> {
    let b = s.as_bytes();
    if b.len() != 64 {
        return None;
    }
    let digit = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    let mut out = [0u8; 32];
    for (i, pair) in b.chunks(2).enumerate() {
        out[i] = digit(pair[0])? << 4 | digit(pair[1])?;
    }
    Some(out)
}

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

    #[test]
    fn round_trip_and_strictness() {
        let d: [u8; 32] = std::array::from_fn(|i| (i * 37) as u8);
        let s = encode(&d);
        assert_eq!(&s[..8], "00254a6f");
        assert_eq!(decode_sha256(&s), Some(d));
        assert_eq!(decode_sha256(&s.to_uppercase()), None);
        assert_eq!(decode_sha256(&s[..62]), None);
        assert_eq!(decode_sha256(&format!("{}g", &s[..63])), None);
    }

    #[test]
    fn random_names() {
        let (a, b) = (random(), random());
        assert_eq!(a.len(), 16);
        assert!(a.bytes().all(|c| DIGITS.contains(&c)));
        assert_ne!(a, b);
    }
}
