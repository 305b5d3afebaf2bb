//! Strict UTF-8 validation of raw chunks of any size (a sequence may be
//! split between two), naming the raw byte offset of the first bad sequence.

/// Strict UTF-8 across chunk boundaries (a sequence may be split).
#[derive(Default)]
pub(super) struct Utf8Validator {
    /// An incomplete sequence at the end of the previous chunk.
    carry: [u8; 4],
    carry_len: usize,
    /// Raw offset of the carry's first byte, or of the next chunk.
    offset: u64,
    error: Option<(u64, &'static str)>,
}

impl Utf8Validator {
    /// True once a bad sequence was seen: the outcome is final.
    pub(super) fn failed(&self) -> bool {
        self.error.is_some()
    }

    pub(super) fn feed(&mut self, mut chunk: &[u8]) {
        if self.carry_len > 0 {
            let width = utf8_width(self.carry[0]);
            let need = width - self.carry_len;
            let take = need.min(chunk.len());
            let mut tmp = [0u8; 4];
            tmp[..self.carry_len].copy_from_slice(&self.carry[..self.carry_len]);
            tmp[self.carry_len..self.carry_len + take].copy_from_slice(&chunk[..take]);
            let have = self.carry_len + take;
            match std::str::from_utf8(&tmp[..have]) {
                Ok(_) => {
                    self.offset += have as u64;
                    self.carry_len = 0;
                    chunk = &chunk[take..];
                }
                Err(e) if e.error_len().is_none() => {
                    // Still incomplete: the chunk was shorter than the sequence.
                    self.carry = tmp;
                    self.carry_len = have;
                    return;
                }
                Err(_) => {
                    self.error = Some((self.offset, "invalid continuation byte"));
                    return;
                }
            }
        }
        match std::str::from_utf8(chunk) {
            Ok(_) => self.offset += chunk.len() as u64,
            Err(e) => {
                let at = e.valid_up_to();
                match e.error_len() {
                    Some(_) => {
                        self.error = Some((self.offset + at as u64, bad_utf8_reason(chunk[at])));
                    }
                    None => {
                        let rest = &chunk[at..];
                        self.offset += at as u64;
                        self.carry[..rest.len()].copy_from_slice(rest);
                        self.carry_len = rest.len();
                    }
                }
            }
        }
    }

    pub(super) fn finish(&mut self) -> Option<(u64, &'static str)> {
        if self.error.is_none() && self.carry_len > 0 {
            self.error = Some((self.offset, "unexpected end of data"));
        }
        self.error
    }
}

fn utf8_width(b: u8) -> usize {
    match b {
        0xC2..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF4 => 4,
        _ => 1,
    }
}

fn bad_utf8_reason(b: u8) -> &'static str {
    if utf8_width(b) == 1 && b >= 0x80 {
        "invalid start byte"
    } else {
        "invalid continuation byte"
    }
}
