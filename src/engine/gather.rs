//! The last stage's output, gathered into long slices.
//!
//! A dense replace-all emits two short pieces per occurrence (the text
//! since the last one, then NEW). Passed on one by one, each would pay the
//! caller's per-slice work (a dynamic call, its bookkeeping: counting,
//! hashing, buffering): with an occurrence every 100 bytes that was 40% of
//! the run. Short pieces are copied here instead, with inline short copies,
//! and passed on in slices of about [`GATHER`] bytes; long ones (the
//! unchanged stretches of a sparse edit) pass through uncopied, after what
//! was gathered before them, so the order never changes.

use crate::bytes::copy;

/// Gathered output is passed on once it would grow past this.
pub(super) const GATHER: usize = 256 * 1024;

/// Pieces at least this long pass through without a copy.
const PASS: usize = 16 * 1024;

#[derive(Default)]
pub(super) struct Gather {
    /// `GATHER` long once a short piece came; filled up to `fill`.
    buf: Vec<u8>,
    fill: usize,
}

impl Gather {
    /// One piece of output. The empty slice (the engine's change marker,
    /// see `Engine::feed`) passes through in order, like a long piece.
    #[inline(always)]
    pub(super) fn put(&mut self, b: &[u8], out: &mut dyn FnMut(&[u8])) {
        let n = b.len();
        // 1 <= n < PASS (wrapping: the marker's 0 fails it) and it fits.
        if n.wrapping_sub(1) < PASS - 1 && n <= self.buf.len() - self.fill {
            copy(&mut self.buf[self.fill..self.fill + n], b);
            self.fill += n;
        } else {
            self.put_slow(b, out);
        }
    }

    #[inline(never)] // off the per-piece path: once per GATHER or long piece
    fn put_slow(&mut self, b: &[u8], out: &mut dyn FnMut(&[u8])) {
        self.flush(out);
        if b.is_empty() || b.len() >= PASS {
            return out(b);
        }
        if self.buf.is_empty() {
            self.buf = vec![0; GATHER];
        }
        copy(&mut self.buf[..b.len()], b);
        self.fill = b.len();
    }

    /// Passes on what is gathered (at the end of every feed: the caller
    /// learns all output known so far).
    pub(super) fn flush(&mut self, out: &mut dyn FnMut(&[u8])) {
        if self.fill > 0 {
            out(&self.buf[..self.fill]);
            self.fill = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pieces of every size class, the marker among them: the slices
    /// passed on join to the pieces in order, the marker arrives exactly
    /// where it was put (after everything before it), no slice but the
    /// marker is empty.
    #[test]
    fn passes_everything_on_in_order() {
        let sizes = [
            1,
            2,
            100,
            PASS - 1,
            PASS,
            PASS + 1,
            0,
            7,
            GATHER - 3,
            3,
            5,
            0,
            200_000,
            1,
        ];
        let mut g = Gather::default();
        let mut got: Vec<Vec<u8>> = Vec::new();
        let mut want = Vec::new();
        let mut markers_at = Vec::new();
        let mut next = 0u8;
        for (k, &n) in sizes.iter().cycle().take(3 * sizes.len()).enumerate() {
            let piece: Vec<u8> = (0..n)
                .map(|_| {
                    next = next.wrapping_add(1);
                    next
                })
                .collect();
            if n == 0 {
                markers_at.push(want.len());
            }
            want.extend_from_slice(&piece);
            g.put(&piece, &mut |s| got.push(s.to_vec()));
            if k % 5 == 4 {
                g.flush(&mut |s| got.push(s.to_vec()));
            }
        }
        g.flush(&mut |s| got.push(s.to_vec()));
        let mut joined = Vec::new();
        let mut seen_markers = Vec::new();
        for s in &got {
            if s.is_empty() {
                seen_markers.push(joined.len());
            }
            joined.extend_from_slice(s);
        }
        assert_eq!(joined, want);
        assert_eq!(seen_markers, markers_at);
        // Short pieces were gathered: far fewer slices than pieces.
        assert!(got.len() < 3 * sizes.len(), "{} slices", got.len());
    }
}
