//! One edit as the engine holds it: OLD and NEW, LF-normalized, and its
//! options, compact because a batch holds millions of them.

use super::normalize_eol;

/// One replacement, with OLD and NEW already decoded and LF-normalized.
///
/// Compact, as a batch holds millions of them: 40 bytes, and one
/// allocation only when OLD and NEW together exceed [`INLINE`] bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edit {
    /// OLD then NEW.
    text: Text,
    /// `len(OLD)`: at least 1, at most [`OLD_MAX`].
    old_len: u32,
    replace_all: bool,
    /// `--at-line`: replace only the occurrence that starts on this 1-based
    /// line of the text the edit sees.
    at_line: Option<std::num::NonZeroU64>,
}

/// OLD and NEW together up to this many bytes are held in the [`Edit`]
/// itself.
pub const INLINE: usize = 22;

#[derive(Clone, Debug, PartialEq, Eq)]
enum Text {
    Inline { len: u8, bytes: [u8; INLINE] },
    Heap(Box<[u8]>),
}

impl Text {
    fn get(&self) -> &[u8] {
        match self {
            Text::Inline { len, bytes } => &bytes[..*len as usize],
            Text::Heap(b) => b,
        }
    }
}

/// The longest OLD an edit takes (2 GiB - 1 bytes, LF-normalized): far past
/// any request bound a host sets, and an edit's carried tail (up to twice
/// OLD) is counted in 32 bits.
pub const OLD_MAX: usize = (1 << 31) - 1;

impl Edit {
    /// Builds an edit from text; CRLF and lone CR become LF in both strings.
    /// OLD must not be empty (it would match everywhere) nor longer than
    /// [`OLD_MAX`].
    pub fn new(old: &str, new: &str, replace_all: bool) -> Result<Edit, &'static str> {
        let old = normalize_eol(old.as_bytes());
        Edit::from_lf(old, &normalize_eol(new.as_bytes()), replace_all)
    }

    /// [`Edit::new`] of text already LF-normalized (UTF-8, no CR): OLD's
    /// buffer becomes the edit's, NEW is appended to it.
    pub fn from_lf(mut text: Vec<u8>, new: &[u8], replace_all: bool) -> Result<Edit, &'static str> {
        let old_len = text.len();
        if old_len == 0 {
            return Err("OLD is empty");
        }
        if old_len > OLD_MAX {
            return Err("OLD is longer than 2 GiB");
        }
        let text = if old_len + new.len() <= INLINE {
            let mut bytes = [0; INLINE];
            bytes[..old_len].copy_from_slice(&text);
            bytes[old_len..old_len + new.len()].copy_from_slice(new);
            let len = (old_len + new.len()) as u8;
            Text::Inline { len, bytes }
        } else {
            text.reserve_exact(new.len());
            text.extend_from_slice(new);
            Text::Heap(text.into_boxed_slice())
        };
        Ok(Edit {
            text,
            old_len: old_len as u32,
            replace_all,
            at_line: None,
        })
    }

    /// Restricts the edit to the one occurrence (as counted: non-overlapping,
    /// left to right) that starts on 1-based line `line` of the text this
    /// edit sees (in a batch: after the earlier edits).
    pub fn with_at_line(mut self, line: u64) -> Result<Edit, &'static str> {
        if self.replace_all {
            return Err("at_line conflicts with replace-all");
        }
        let line = std::num::NonZeroU64::new(line)
            .ok_or("at_line must be at least 1 (lines are 1-based)")?;
        self.at_line = Some(line);
        Ok(self)
    }

    /// OLD, LF-normalized: the text to find.
    pub fn old_text(&self) -> &[u8] {
        &self.text.get()[..self.old_len as usize]
    }
    /// NEW, LF-normalized: the text that replaces it.
    pub fn new_text(&self) -> &[u8] {
        &self.text.get()[self.old_len as usize..]
    }
    /// Whether every occurrence is replaced (else exactly one must exist).
    pub fn replace_all(&self) -> bool {
        self.replace_all
    }
    /// The `--at-line` restriction, if any (see [`Edit::with_at_line`]).
    pub fn at_line(&self) -> Option<u64> {
        self.at_line.map(|l| l.get())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An edit is 40 bytes, with OLD and NEW inline up to `INLINE` bytes
    /// together, else in one allocation.
    #[test]
    fn an_edit_is_compact() {
        let e = |old: &str, new: &str| Edit::new(old, new, false).unwrap();
        assert_eq!(std::mem::size_of::<Edit>(), 40);
        let short = e("a\r\nb", "c");
        assert!(matches!(short.text, Text::Inline { len: 4, .. }));
        assert_eq!(
            (short.old_text(), short.new_text()),
            (&b"a\nb"[..], &b"c"[..])
        );
        let fits = e(&"o".repeat(INLINE - 1), "n");
        assert!(matches!(fits.text, Text::Inline { .. }));
        assert_eq!(fits.new_text(), b"n");
        let long = e(&"o".repeat(INLINE), "n");
        assert!(matches!(long.text, Text::Heap(_)));
        assert_eq!(long.old_text(), "o".repeat(INLINE).as_bytes());
        assert_eq!(long.new_text(), b"n");
        assert_eq!(Edit::new("", "x", false), Err("OLD is empty"));
    }
}
