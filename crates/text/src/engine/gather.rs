//! The last stage's output, gathered into long slices.
//!
//! A dense replace-all emits two short pieces per occurrence (the text
//! since the last one, then NEW). Passed on one by one, each would pay the
//! caller's per-slice work (a dynamic call, its bookkeeping: counting,
//! hashing, buffering): with an occurrence every 100 bytes that was 40% of
//! the run. Short pieces are copied here instead, with inline short copies,
//! and passed on in slices of up to [`GATHER`] bytes; long ones (the
//! unchanged stretches of a sparse edit) pass through uncopied, after what
//! was gathered before them, so the order never changes.

use crate::bytes::copy;

/// Gathered output is passed on once it would grow past this.
pub(super) const GATHER: usize = 256 * 1024;

/// Pieces at least this long pass through without a copy: the caller's
/// per-slice work is small beside 1 KiB, and the unchanged text before the
/// first change (which the caller only counts) is never copied.
const PASS: usize = 1024;

#[derive(Default)]
pub(super) struct Gather {
    /// Up to `GATHER` long (grown from 4 KiB as short pieces come);
    /// filled up to `fill`.
    buf: Vec<u8>,
    fill: usize,
}

impl Drop for Gather {
    fn drop(&mut self) {
        crate::spare::give_small(crate::spare::Small::Gather, std::mem::take(&mut self.buf));
    }
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
        let n = b.len();
        if n == 0 || n >= PASS {
            self.flush(out);
            return out(b);
        }
        if n > self.buf.len() - self.fill && self.buf.len() < GATHER {
            if self.buf.capacity() == 0 {
                // The previous file's (a transaction's next file).
                self.buf = crate::spare::small(crate::spare::Small::Gather);
            }
            // Grown as needed: a small edit never allocates the whole of it.
            let len = (2 * self.buf.len()).max(self.fill + n).clamp(4096, GATHER);
            self.buf.resize(len, 0);
        }
        if n > self.buf.len() - self.fill {
            self.flush(out);
        }
        copy(&mut self.buf[self.fill..self.fill + n], b);
        self.fill += n;
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

/// Where a stage's output goes: the next stage's input, or the last
/// stage's gather. One type, so the matcher is compiled once (a generic
/// sink built it twice: 3 KiB of the binary), and the gather's `put`
/// stays inlined (no dynamic call per piece).
pub(super) enum Out<'o> {
    Append(&'o mut Vec<u8>),
    Gather(&'o mut Gather, &'o mut dyn FnMut(&[u8])),
}

impl Out<'_> {
    #[inline(always)]
    pub(super) fn put(&mut self, b: &[u8]) {
        match self {
            Out::Append(v) => v.extend_from_slice(b),
            Out::Gather(g, out) => g.put(b, *out),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Thousands of pieces of every size class, the marker among them,
    /// with flushes between: the slices passed on join to the pieces in
    /// order, the marker arrives exactly where it was put (after everything
    /// before it), no slice but the marker is empty, none is longer than
    /// GATHER unless it was one long piece, and short pieces were gathered.
    #[test]
    fn passes_everything_on_in_order() {
        let short = [1, 2, 3, 17, 100, 100, 100, 700, PASS - 1];
        let other = [0, PASS, PASS + 1, 5000, 70_000];
        let mut g = Gather::default();
        let mut got: Vec<Vec<u8>> = Vec::new();
        let (mut want, mut markers_at, mut long) = (Vec::new(), Vec::new(), Vec::new());
        let (mut seed, mut next, mut short_bytes, mut flushes) = (7u64, 0u8, 0, 1);
        while want.len() < 3 * GATHER {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let k = (seed >> 33) as usize;
            let n = if k % 50 == 0 {
                other[k / 50 % other.len()]
            } else {
                short[k % short.len()]
            };
            let piece: Vec<u8> = (0..n)
                .map(|_| {
                    next = next.wrapping_add(1);
                    next
                })
                .collect();
            match n {
                0 => markers_at.push(want.len()),
                n if n >= PASS => long.push(n),
                n => short_bytes += n,
            }
            want.extend_from_slice(&piece);
            g.put(&piece, &mut |s| got.push(s.to_vec()));
            if k % 997 == 0 {
                flushes += 1;
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
            assert!(s.len() <= GATHER || long.contains(&s.len()), "{}", s.len());
            joined.extend_from_slice(s);
        }
        assert!(joined == want);
        assert_eq!(seen_markers, markers_at);
        // Gathered slices end where one would overflow (each then holds more
        // than GATHER - PASS bytes), before a long piece or the marker, or at
        // a flush: no more of them than that.
        let gathered = got.len() - markers_at.len() - long.len();
        let bound = short_bytes / (GATHER - PASS) + markers_at.len() + long.len() + flushes;
        assert!(
            gathered <= bound,
            "{gathered} gathered slices, at most {bound}"
        );
    }
}
