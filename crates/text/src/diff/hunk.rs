//! What [`super::Builder`] builds hunks of: [`Text`], a line or a changed
//! region kept up to `SIDE_KEEP` bytes with the facts the hunks need about
//! the whole of it, and [`Hunk`], the hunk being built.

use super::CAP;

/// Bytes kept of one line, and of each side of a changed region. A longer
/// line cannot fit in the capped diff, so the rest is never needed.
const SIDE_KEEP: usize = 2 * CAP;

/// Text kept up to `SIDE_KEEP` bytes (`cut` past that), with the facts the
/// hunks need about the whole of it: its newlines and its last byte.
#[derive(Clone, Default)]
pub(super) struct Text {
    pub(super) kept: Vec<u8>,
    pub(super) cut: bool,
    pub(super) newlines: u64,
    pub(super) last: Option<u8>,
}

impl Text {
    #[cfg_attr(as_edit_small, optimize(size))]
    pub(super) fn push(&mut self, b: &[u8]) {
        let Some(&last) = b.last() else { return };
        self.last = Some(last);
        self.newlines += memchr::memchr_iter(b'\n', b).count() as u64;
        if !self.cut {
            let room = SIDE_KEEP - self.kept.len();
            self.kept.extend_from_slice(&b[..b.len().min(room)]);
            self.cut = b.len() > room;
        }
    }
    pub(super) fn from_line(b: &[u8]) -> Text {
        let mut t = Text::default();
        t.push(b);
        t
    }
    pub(super) fn is_empty(&self) -> bool {
        self.last.is_none()
    }
    /// Empty, or ending with a complete line.
    pub(super) fn at_line_start(&self) -> bool {
        matches!(self.last, None | Some(b'\n'))
    }
    pub(super) fn lines(&self) -> u64 {
        self.newlines + u64::from(!self.at_line_start())
    }
}

/// The hunk being built. Its header needs its line counts, known only when
/// it closes, so its body waits here (kept up to what can still fit).
pub(super) struct Hunk {
    pub(super) a_start: u64,
    pub(super) b_start: u64,
    pub(super) a_len: u64,
    pub(super) b_len: u64,
    pub(super) body: Vec<u8>,
    /// Bytes the body may still take in the output; past them it is not kept.
    pub(super) room: usize,
    /// Some of the body was not kept: the diff is cut within this hunk.
    pub(super) full: bool,
    /// Unchanged lines since the last change (up to 2 * CONTEXT + 1).
    pub(super) trail: Vec<Text>,
}

impl Hunk {
    #[cfg_attr(as_edit_small, optimize(size))]
    pub(super) fn line(&mut self, mark: u8, text: &[u8], cut: bool) {
        if self.full {
            return;
        }
        if cut || self.body.len() > self.room {
            self.full = true;
            return;
        }
        self.body.push(mark);
        self.body.extend_from_slice(text);
        if text.last() != Some(&b'\n') {
            self.body
                .extend_from_slice(b"\n\\ No newline at end of file\n");
        }
    }
}
