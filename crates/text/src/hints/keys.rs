//! The result keys built for the protocol from a refusal: the hint
//! finder's answer for `string_not_found`, the occurrence lines for
//! `multiple_occurrences` (the helper and the host's transfer path alike).

use memchr::memmem;
use serde::Serialize;

use super::{find, Hint, OCCURRENCE_LINES_MAX};
use crate::engine::{Edit, Refusal};

/// The most text buffered for `string_not_found` hints. 10 MiB leaves room
/// under the 16 MiB peak target for the hint finder's bounded work and the
/// helper's baseline (see the module note).
pub const TEXT_MAX: usize = 10 << 20;

/// What `--hints` adds to a refusal: `hints` (and `hints_truncated`) on
/// `string_not_found`, `lines` (and `lines_truncated`) on
/// `multiple_occurrences`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct HintKeys {
    /// `string_not_found`: the candidates, best first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hints: Option<Vec<Hint>>,
    /// A bound cut the search (better candidates may exist).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hints_truncated: Option<bool>,
    /// The start lines of the first [`OCCURRENCE_LINES_MAX`] occurrences.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lines: Option<Vec<u64>>,
    /// More occurrences than `lines` holds (`count` says how many).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lines_truncated: Option<bool>,
}

/// The same keys for the host's transfer path: `bytes` is the downloaded
/// file, `edit` the one edit that `refusal` refused. The text is cut at
/// [`TEXT_MAX`] exactly as the helper cuts it, so both answer alike.
pub fn hint_keys_for_bytes(bytes: &[u8], edit: &Edit, refusal: &Refusal) -> Option<HintKeys> {
    let normalized = crate::engine::normalize_eol(bytes);
    let text = std::str::from_utf8(&normalized).ok()?;
    match *refusal {
        Refusal::NotFound { .. } => {
            let (cut, whole) = if text.len() <= TEXT_MAX {
                (text, true)
            } else {
                let end = memchr::memrchr(b'\n', &text.as_bytes()[..TEXT_MAX]).map_or(0, |i| i + 1);
                (&text[..end], false)
            };
            not_found_keys(cut, whole, edit)
        }
        Refusal::Multiple { count, .. } => {
            let old = std::str::from_utf8(edit.old_text()).ok()?;
            Some(multiple_keys(
                occurrence_lines(text, old, OCCURRENCE_LINES_MAX),
                count,
            ))
        }
        _ => None,
    }
}

/// The `string_not_found` keys: the hint finder's answer for `e`'s OLD in
/// `text` (LF-normalized; `whole` when it is all of the file, not a cut);
/// `None` when OLD or NEW is not UTF-8.
pub fn not_found_keys(text: &str, whole: bool, e: &Edit) -> Option<HintKeys> {
    let found = find(
        text,
        std::str::from_utf8(e.old_text()).ok()?,
        std::str::from_utf8(e.new_text()).ok()?,
        whole,
    );
    Some(HintKeys {
        hints: Some(found.hints),
        hints_truncated: found.truncated.then_some(true),
        ..HintKeys::default()
    })
}

/// The `multiple_occurrences` keys: `lines`, the start lines of the first
/// occurrences, and whether `count` occurrences are more than it holds.
pub fn multiple_keys(lines: Vec<u64>, count: u64) -> HintKeys {
    HintKeys {
        lines_truncated: (count > lines.len() as u64).then_some(true),
        lines: Some(lines),
        ..HintKeys::default()
    }
}

/// The 1-based lines where the non-overlapping occurrences of `old` start,
/// left to right, the first `limit` (for `multiple_occurrences`).
pub fn occurrence_lines(text: &str, old: &str, limit: usize) -> Vec<u64> {
    let mut lines = Vec::new();
    if old.is_empty() {
        return lines;
    }
    let (mut line, mut counted) = (1u64, 0usize);
    for p in memmem::find_iter(text.as_bytes(), old.as_bytes()).take(limit) {
        line += memchr::memchr_iter(b'\n', &text.as_bytes()[counted..p]).count() as u64;
        counted = p;
        lines.push(line);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn occurrence_lines_are_non_overlapping_left_to_right() {
        assert_eq!(occurrence_lines("aa\naaa\n\naa", "aa", 10), vec![1, 2, 4]);
        assert_eq!(occurrence_lines("x\nx\nx", "x", 2), vec![1, 2]);
        assert_eq!(occurrence_lines("a\nb\na\nb", "a\nb", 10), vec![1, 3]);
        assert_eq!(occurrence_lines("abc", "z", 10), Vec::<u64>::new());
    }
}
