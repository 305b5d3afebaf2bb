//! CRLF, then any lone CR, become LF: for whole strings ([`normalize_eol`],
//! OLD and NEW) and across chunk boundaries (the engine's second stage).

use crate::bytes::copy;

/// CRLF, then any lone CR, become LF (Python: `s.replace("\r\n","\n").replace("\r","\n")`).
pub fn normalize_eol(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    let mut n = Normalizer::default();
    n.feed(s, &mut |b| out.extend_from_slice(b));
    n.finish(&mut |b| out.extend_from_slice(b));
    out
}

/// CRLF → LF, lone CR → LF, across chunk boundaries.
#[derive(Default)]
pub(super) struct Normalizer {
    /// The previous chunk ended in CR: its fate depends on the next byte.
    pending_cr: bool,
    /// The normalized chunk: as long as the longest chunk fed.
    scratch: Vec<u8>,
    /// A CR was seen: the output is no longer the input byte for byte.
    pub(super) saw_cr: bool,
    /// [`Normalizer::squeeze`]: the last chunk ended in CR, already written
    /// as LF; an LF starting the next one is its pair.
    skip_lf: bool,
}

impl Normalizer {
    pub(super) fn feed(&mut self, mut chunk: &[u8], out: &mut dyn FnMut(&[u8])) {
        if chunk.is_empty() {
            return;
        }
        if self.pending_cr {
            self.pending_cr = false;
            if chunk[0] == b'\n' {
                chunk = &chunk[1..];
            }
            out(b"\n");
        }
        let Some(first_cr) = memchr::memchr(b'\r', chunk) else {
            out(chunk); // the common case: no copy
            return;
        };
        self.saw_cr = true;
        // The output is never longer than the chunk: a fixed buffer filled
        // by short copies (`bytes::copy`: lines are short).
        if self.scratch.len() < chunk.len() {
            self.scratch.resize(chunk.len(), 0);
        }
        let buf = &mut self.scratch[..];
        copy(&mut buf[..first_cr], &chunk[..first_cr]);
        let mut w = first_cr;
        let mut i = first_cr;
        loop {
            // chunk[i] is a CR
            if i + 1 == chunk.len() {
                self.pending_cr = true;
                break;
            }
            buf[w] = b'\n';
            w += 1;
            i += if chunk[i + 1] == b'\n' { 2 } else { 1 };
            let j = memchr::memchr(b'\r', &chunk[i..]).unwrap_or(chunk.len() - i);
            copy(&mut buf[w..w + j], &chunk[i..i + j]);
            w += j;
            i += j;
            if i == chunk.len() {
                break;
            }
        }
        out(&buf[..w]);
    }

    /// Normalizes `buf` in place (the output is never longer), returning
    /// its new length: the engine's [`super::Engine::filled`], where the
    /// text lies in the tail slot and must not be copied out. A final CR
    /// is written as LF at once, so there is nothing for `finish` to add.
    #[cfg_attr(as_edit_small, optimize(size))]
    pub(super) fn squeeze(&mut self, buf: &mut [u8]) -> usize {
        let mut i = (std::mem::take(&mut self.skip_lf) && buf.first() == Some(&b'\n')) as usize;
        let mut w = 0;
        loop {
            let j = memchr::memchr(b'\r', &buf[i..]).map_or(buf.len(), |j| i + j);
            if w != i {
                buf.copy_within(i..j, w);
            }
            w += j - i;
            if j == buf.len() {
                return w;
            }
            self.saw_cr = true;
            buf[w] = b'\n';
            w += 1;
            i = j + 1;
            match buf.get(i) {
                None => self.skip_lf = true,
                Some(b'\n') => i += 1,
                _ => {}
            }
        }
    }

    pub(super) fn finish(&mut self, out: &mut dyn FnMut(&[u8])) {
        if self.pending_cr {
            self.pending_cr = false;
            out(b"\n");
        }
    }
}
