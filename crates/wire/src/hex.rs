//! Lowercase hex, shared by both sides: digests (`--expect-sha256` in,
//! `--report` out, the host's checks of what it read). Random names (the
//! helper's temps, the host's install parts) need the system's random
//! source, so they are made where I/O is allowed, from [`encode`].

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
}
