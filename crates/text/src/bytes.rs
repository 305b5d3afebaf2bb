//! Short copies without a call into libc's `memcpy`.
//!
//! musl's x86_64 `memcpy` starts every copy with `rep movsq` and byte loops
//! for the unaligned ends: tens of cycles before the first byte, whatever
//! the length. The hot loops copy many short pieces (the text between two
//! occurrences of a dense replace-all, a line between two CRs), and there
//! that start-up was 40% of the run (perf, 16 MiB with a match every 100
//! bytes). Up to 128 bytes, fixed-size 16-byte moves (overlapping at the
//! ends, so no loop and no per-byte tail) do the same in a few instructions.

/// `dst.copy_from_slice(src)`, inline for `src` up to 128 bytes.
#[inline(always)]
pub fn copy(dst: &mut [u8], src: &[u8]) {
    let n = src.len();
    if dst.len() != n {
        return dst.copy_from_slice(src); // panics, as it would
    }
    // Blocks from the start and from the end, overlapping in the middle;
    // straight-line per size class so the bounds checks fold away.
    // A fn, not a closure: the compiler left a closure out of line (four
    // calls per copy of 17..=64 bytes).
    #[inline(always)]
    fn m16(dst: &mut [u8], src: &[u8], at: usize) {
        dst[at..at + 16].copy_from_slice(&src[at..at + 16]);
    }
    match n {
        0 => {}
        1..=3 => {
            // Not a loop: the compiler would make it a memcpy call.
            dst[0] = src[0];
            dst[n / 2] = src[n / 2];
            dst[n - 1] = src[n - 1];
        }
        4..=7 => {
            dst[..4].copy_from_slice(&src[..4]);
            dst[n - 4..].copy_from_slice(&src[n - 4..]);
        }
        8..=15 => {
            dst[..8].copy_from_slice(&src[..8]);
            dst[n - 8..].copy_from_slice(&src[n - 8..]);
        }
        16..=32 => {
            m16(dst, src, 0);
            m16(dst, src, n - 16);
        }
        33..=64 => {
            m16(dst, src, 0);
            m16(dst, src, 16);
            m16(dst, src, n - 32);
            m16(dst, src, n - 16);
        }
        65..=128 => {
            for at in [0, 16, 32, 48, n - 64, n - 48, n - 32, n - 16] {
                m16(dst, src, at);
            }
        }
        _ => dst.copy_from_slice(src), // long: libc's start-up is amortized
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn copies_every_length_exactly() {
        let src: Vec<u8> = (0..310u32).map(|i| (i * 7 + 1) as u8).collect();
        for n in 0..=300 {
            for off in [0, 1, 5] {
                let mut dst = vec![0xAAu8; n + 10];
                super::copy(&mut dst[off..off + n], &src[3..3 + n]);
                assert_eq!(&dst[off..off + n], &src[3..3 + n], "n {n}");
                assert!(dst[..off].iter().all(|&b| b == 0xAA), "before, n {n}");
                assert!(dst[off + n..].iter().all(|&b| b == 0xAA), "after, n {n}");
            }
        }
    }
}
