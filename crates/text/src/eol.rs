//! End-of-line policy in one place: the content is always matched with LF
//! line ends (the core normalizes CRLF and lone CR on the way in); this unit
//! holds the rest of the rule for `--eol preserve` — counting the raw line
//! ends, deciding the style to write back, and re-expanding LF to CRLF on
//! the way out. Pure: the caller does the reading and the writing.

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

impl EolCounts {
    /// `--eol preserve` writes CRLF when CRLF outnumbers every other ending
    /// (a tie, or a file with no line ends, stays LF: the status quo).
    pub fn dominant_is_crlf(&self) -> bool {
        self.crlf > self.lf + self.cr
    }
}

/// Counts the line endings of raw bytes fed in chunks of any size (a CRLF
/// may be split between two). Only `--eol preserve` pays for it.
#[derive(Default)]
pub struct EolCounter {
    /// The previous chunk ended in CR: its kind depends on the next byte.
    pending_cr: bool,
    crlf: u64,
    cr: u64,
    /// Every LF, paired or not.
    all_lf: u64,
}

impl EolCounter {
    /// Counts the next raw chunk (a CRLF may be split between two).
    pub fn feed(&mut self, chunk: &[u8]) {
        let Some(&first) = chunk.first() else { return };
        if std::mem::take(&mut self.pending_cr) {
            self.count_cr(first == b'\n');
        }
        self.all_lf += memchr::memchr_iter(b'\n', chunk).count() as u64;
        for i in memchr::memchr_iter(b'\r', chunk) {
            match chunk.get(i + 1) {
                Some(&next) => self.count_cr(next == b'\n'),
                None => self.pending_cr = true,
            }
        }
    }

    fn count_cr(&mut self, paired: bool) {
        if paired {
            self.crlf += 1;
        } else {
            self.cr += 1;
        }
    }

    /// The counts of everything fed (a CR at the very end is lone).
    pub fn finish(mut self) -> EolCounts {
        if self.pending_cr {
            self.cr += 1;
        }
        EolCounts {
            crlf: self.crlf,
            cr: self.cr,
            lf: self.all_lf - self.crlf,
        }
    }
}

/// Re-expands normalized output for a CRLF file: every LF is written as
/// CRLF. `put` gets the pieces in order (runs of text and `"\r\n"`).
pub fn expand_crlf(b: &[u8], put: &mut dyn FnMut(&[u8])) {
    let mut rest = b;
    while let Some(i) = memchr::memchr(b'\n', rest) {
        put(&rest[..i]);
        put(b"\r\n");
        rest = &rest[i + 1..];
    }
    put(rest);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_across_any_chunking() {
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

    #[test]
    fn decision() {
        let c = |crlf, cr, lf| EolCounts { crlf, cr, lf };
        assert!(c(3, 1, 1).dominant_is_crlf());
        assert!(!c(2, 1, 1).dominant_is_crlf());
        assert!(!c(0, 0, 0).dominant_is_crlf());
    }

    #[test]
    fn expansion() {
        let mut out = Vec::new();
        expand_crlf(b"a\n\nb", &mut |p| out.extend_from_slice(p));
        assert_eq!(out, b"a\r\n\r\nb");
    }
}
