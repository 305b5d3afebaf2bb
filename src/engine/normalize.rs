//! CRLF, then any lone CR, become LF: for whole strings ([`normalize_eol`],
//! OLD and NEW) and across chunk boundaries (the engine's second stage).

/// CRLF, then any lone CR, become LF (Python: `s.replace("\r\n","\n").replace("\r","\n")`).
pub fn normalize_eol(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    let mut n = Normalizer::default();
    n.feed(s, &mut |b| out.extend_from_slice(b));
    n.finish(&mut |b| out.extend_from_slice(b));
    out
}

/// Line endings of raw text: CRLF pairs, lone CRs, lone LFs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EolCounts {
    /// CR LF pairs.
    pub crlf: u64,
    /// CRs not followed by LF.
    pub cr: u64,
    /// LFs not preceded by CR.
    pub lf: u64,
}

/// Counts the line endings of raw bytes (for `--eol preserve`). Kept out
/// of the engine: only this option pays for counting every LF.
#[derive(Default)]
pub struct EolCounter {
    norm: Normalizer,
    all_lf: u64,
}

impl EolCounter {
    /// Counts the next raw chunk (a CRLF may be split between two).
    pub fn feed(&mut self, chunk: &[u8]) {
        self.all_lf += memchr::memchr_iter(b'\n', chunk).count() as u64;
        self.norm.feed(chunk, &mut |_| {});
    }
    /// The counts of everything fed (a CR at the very end is lone).
    pub fn finish(mut self) -> EolCounts {
        self.norm.finish(&mut |_| {});
        let (crlf, cr) = (self.norm.crlf, self.norm.cr);
        EolCounts {
            crlf,
            cr,
            lf: self.all_lf - crlf,
        }
    }
}

/// CRLF → LF, lone CR → LF, across chunk boundaries.
#[derive(Default)]
pub(super) struct Normalizer {
    /// The previous chunk ended in CR: its fate depends on the next byte.
    pending_cr: bool,
    scratch: Vec<u8>,
    /// CRLF pairs and lone CRs seen (cheap: only on the CR path).
    crlf: u64,
    cr: u64,
}

impl Normalizer {
    pub(super) fn feed(&mut self, mut chunk: &[u8], out: &mut dyn FnMut(&[u8])) {
        if chunk.is_empty() {
            return;
        }
        if self.pending_cr {
            self.pending_cr = false;
            if chunk[0] == b'\n' {
                self.crlf += 1;
                chunk = &chunk[1..];
            } else {
                self.cr += 1;
            }
            out(b"\n");
        }
        let Some(first_cr) = memchr::memchr(b'\r', chunk) else {
            out(chunk); // the common case: no copy
            return;
        };
        self.scratch.clear();
        self.scratch.extend_from_slice(&chunk[..first_cr]);
        let mut i = first_cr;
        loop {
            // chunk[i] is a CR
            if i + 1 == chunk.len() {
                self.pending_cr = true;
                break;
            }
            if chunk[i + 1] == b'\n' {
                self.crlf += 1;
                self.scratch.push(b'\n');
                i += 2;
            } else {
                self.cr += 1;
                self.scratch.push(b'\n');
                i += 1;
            }
            match memchr::memchr(b'\r', &chunk[i..]) {
                Some(j) => {
                    self.scratch.extend_from_slice(&chunk[i..i + j]);
                    i += j;
                }
                None => {
                    self.scratch.extend_from_slice(&chunk[i..]);
                    break;
                }
            }
        }
        out(&self.scratch);
    }

    pub(super) fn finish(&mut self, out: &mut dyn FnMut(&[u8])) {
        if self.pending_cr {
            self.pending_cr = false;
            self.cr += 1;
            out(b"\n");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eol_counts() {
        let text = b"a\r\nb\rc\nd\r";
        for size in 1..=text.len() {
            let mut c = EolCounter::default();
            for chunk in text.chunks(size) {
                c.feed(chunk);
            }
            assert_eq!(
                c.finish(),
                EolCounts {
                    crlf: 1,
                    cr: 2,
                    lf: 1
                },
                "chunk {size}"
            );
        }
    }
}
