//! Standard base64 decoding (RFC 4648 alphabet, canonical `=` padding, no
//! stray bits in the last symbol), for OLD_B64/NEW_B64, `--request-b64`
//! and `--patch-b64`. Written here rather than taken from the base64
//! crate, whose decoder costs 3.3 KiB of the binary (the budget is 1.5 MiB,
//! 1,572,864 bytes) for inputs of a few hundred KiB at most. This one
//! refuses exactly what that crate's decoder refuses, with the same error
//! texts ("Invalid symbol 61, offset 2.":
//! result lines quote them), checked against it on generated and mutated
//! inputs (tests below; the crate stays for the host library's encoding).

/// The 6-bit value of an alphabet byte, or `None`.
fn value(b: u8) -> Option<u32> {
    Some(match b {
        b'A'..=b'Z' => b - b'A',
        b'a'..=b'z' => b - b'a' + 26,
        b'0'..=b'9' => b - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => return None,
    } as u32)
}

fn symbol(at: usize, b: u8) -> String {
    format!("Invalid symbol {b}, offset {at}.")
}

/// The decoded bytes, or the error's text. As the crate's decoder does:
/// every quad but the last is decoded first (a `=` among them is an
/// invalid symbol), then the last one (1 to 4 bytes) is checked for its
/// padding, its length and its last symbol's unused bits, in that order.
#[cfg_attr(as_edit_small, optimize(size))]
pub fn decode(input: &[u8]) -> Result<Vec<u8>, String> {
    let rem = input.len() % 4;
    if let (1, Some(&last)) = (rem, input.last()) {
        if last != b'=' && value(last).is_none() {
            return Err(symbol(input.len() - 1, last));
        }
    }
    let quads = input.len().saturating_sub(rem + 4 * (rem == 0) as usize);
    let mut out = Vec::with_capacity(input.len() / 4 * 3 + 3);
    for (q, quad) in input[..quads].chunks_exact(4).enumerate() {
        let mut n = 0;
        for (i, &b) in quad.iter().enumerate() {
            n = n << 6 | value(b).ok_or_else(|| symbol(4 * q + i, b))?;
        }
        out.extend_from_slice(&n.to_be_bytes()[1..]);
    }
    let (mut n, mut morsels, mut pads, mut first_pad, mut last) = (0u32, 0, 0, 0, 0);
    for (i, &b) in input[quads..].iter().enumerate() {
        if b == b'=' {
            if i < 2 {
                return Err(symbol(quads + i, b));
            }
            if pads == 0 {
                first_pad = i;
            }
            pads += 1;
            continue;
        }
        if pads > 0 {
            return Err(symbol(quads + first_pad, b'='));
        }
        last = b;
        n |= value(b).ok_or_else(|| symbol(quads + i, b))? << (26 - 6 * morsels);
        morsels += 1;
    }
    if !input.is_empty() && morsels < 2 {
        return Err(format!("Invalid input length: {}", quads + morsels));
    }
    if (pads + morsels) % 4 != 0 {
        return Err("Invalid padding".into());
    }
    let bytes = morsels * 6 / 8;
    if n & (!0u32 >> (bytes * 8)) != 0 {
        return Err(format!(
            "Invalid last symbol {last}, offset {}.",
            quads + morsels - 1
        ));
    }
    out.extend_from_slice(&n.to_be_bytes()[..bytes]);
    Ok(out)
}

/// Standard base64 with `=` padding (paths that are not UTF-8, raw
/// reads): the alphabet of [`decode`], so each reads the other's output.
#[cfg_attr(as_edit_small, optimize(size))]
pub fn encode(input: &[u8]) -> String {
    let mut out = String::with_capacity(input.len().div_ceil(3) * 4);
    encode_into(&mut out, input);
    out
}

/// [`encode`], appended to `out` (a raw read encodes its bytes a chunk at
/// a time into the answer: no second copy of them).
#[cfg_attr(as_edit_small, optimize(size))]
pub fn encode_into(out: &mut String, input: &[u8]) {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for chunk in input.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for k in 0..4 {
            out.push(match k <= chunk.len() {
                true => ALPHABET[(n >> (18 - 6 * k) & 63) as usize] as char,
                false => '=',
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{decode, encode};
    use base64::Engine as _;

    /// Every input of up to 3 bytes and a sample of longer ones encode as
    /// the crate encodes them, and decode back.
    #[test]
    fn encode_is_the_crates_standard_encoding() {
        let mut inputs: Vec<Vec<u8>> = vec![vec![]];
        for b in 0..=255u8 {
            inputs.push(vec![b]);
            inputs.push(vec![b, b.wrapping_mul(7)]);
            inputs.push(vec![0xff, b, b.wrapping_add(1)]);
            inputs.push((0..b).collect());
        }
        for i in inputs {
            let want = base64::engine::general_purpose::STANDARD.encode(&i);
            assert_eq!(encode(&i), want, "{i:?}");
            assert_eq!(decode(want.as_bytes()).unwrap(), i);
        }
    }

    fn crate_decode(s: &[u8]) -> Result<Vec<u8>, String> {
        base64::engine::general_purpose::STANDARD
            .decode(s)
            .map_err(|e| e.to_string())
    }

    /// Every input of up to 5 bytes over an alphabet of the edge symbols,
    /// and mutated encodings of random bytes: the same answer as the
    /// crate's decoder, error texts included.
    #[test]
    fn decodes_and_refuses_as_the_base64_crate() {
        let edge = b"AQgw/+=_ \n\x80a9";
        let mut cases = 0;
        for len in 0..=5u32 {
            for k in 0..(edge.len() as u64).pow(len) {
                let (mut k, mut s) = (k, Vec::new());
                for _ in 0..len {
                    s.push(edge[(k % edge.len() as u64) as usize]);
                    k /= edge.len() as u64;
                }
                assert_eq!(decode(&s), crate_decode(&s), "{s:?}");
                cases += 1;
            }
        }
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut r = |n: usize| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % n as u64) as usize
        };
        for _ in 0..20_000 {
            let raw: Vec<u8> = (0..r(80)).map(|_| r(256) as u8).collect();
            let mut s = base64::engine::general_purpose::STANDARD
                .encode(&raw)
                .into_bytes();
            assert_eq!(decode(&s).as_deref(), Ok(&raw[..]));
            for _ in 0..r(3) {
                match (r(3), s.len()) {
                    (_, 0) => s.push(edge[r(edge.len())]),
                    (0, n) => s[r(n)] = edge[r(edge.len())],
                    (1, n) => drop(s.remove(r(n))),
                    (_, n) => s.insert(r(n + 1), edge[r(edge.len())]),
                }
            }
            assert_eq!(decode(&s), crate_decode(&s), "{s:?}");
            cases += 1;
        }
        assert!(cases > 390_000, "{cases}");
    }

    /// What the test above leaves out: lengths 6 to 9 (one whole quad,
    /// then every suffix and padding) over every class of symbol (a last
    /// symbol with and without stray bits, `=`, the URL-safe alphabet, a
    /// space), and every byte value at every offset of encodings of 1 to
    /// 12 bytes: the same answer as the crate's decoder.
    #[test]
    fn decodes_longer_inputs_and_every_byte_as_the_base64_crate() {
        let edge = b"Aw/=-\n";
        let mut cases = 0u64;
        for len in 6..=9u32 {
            for k in 0..(edge.len() as u64).pow(len) {
                let (mut k, mut s) = (k, Vec::with_capacity(9));
                for _ in 0..len {
                    s.push(edge[(k % edge.len() as u64) as usize]);
                    k /= edge.len() as u64;
                }
                assert_eq!(decode(&s), crate_decode(&s), "{s:?}");
                cases += 1;
            }
        }
        for n in 1..=12usize {
            let raw: Vec<u8> = (0..n as u8).map(|i| i.wrapping_mul(37) ^ 0xa5).collect();
            let good = base64::engine::general_purpose::STANDARD
                .encode(&raw)
                .into_bytes();
            for at in 0..good.len() {
                for b in 0..=255u8 {
                    let mut s = good.clone();
                    s[at] = b;
                    assert_eq!(decode(&s), crate_decode(&s), "{s:?}");
                    cases += 1;
                }
            }
        }
        assert!(cases > 12_000_000, "{cases}");
    }
}
