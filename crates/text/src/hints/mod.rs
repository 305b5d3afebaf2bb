//! Failure hints (`--hints`): after a `string_not_found`, say where the text
//! most likely is and why OLD did not match; after `multiple_occurrences`,
//! list where the occurrences start. Pure: no I/O, the same code for the
//! binary and the host's transfer fallback. It diagnoses and never applies:
//! a hint's `text` is the file's own lines, so sending it (or the part of it
//! that corresponds) as the next OLD matches exactly, once when it is unique.
//!
#![doc = include_str!("hints.md")]

use memchr::memmem;
use serde::Serialize;

mod exact;
mod keys;
mod similar;

use exact::{anchor_run, exact_windows, occurs_around, run_offsets, unescape, RUN_OFFSETS_MAX};
pub use keys::{
    hint_keys_for_bytes, multiple_keys, not_found_keys, occurrence_lines, HintKeys, TEXT_MAX,
};
use similar::similar;

/// At most this many hints.
pub const MAX_HINTS: usize = 3;
/// A hint's `text` is cut to this many bytes (on a character boundary).
pub const TEXT_MAX_BYTES: usize = 2048;
/// `similar` runs only on text up to this size.
pub const FULL_HINTS_MAX_BYTES: usize = 16 << 20;
/// `similar` reports only windows scoring at least this.
pub const SIMILAR_MIN: f64 = 0.5;
/// Anchor lines considered by `similar`.
pub const ANCHOR_LINES_MAX: usize = 256;
/// Lines `similar` reads around its anchors (a memory bound).
pub const SIMILAR_LINES_MAX: usize = 4096;
/// Characters of a line's skeleton that `similar` compares.
pub const SIMILAR_LINE_CHARS: usize = 256;
/// `similar` is skipped for OLD of more lines than this.
pub const SIMILAR_OLD_LINES_MAX: usize = 1000;
/// OLD's keys searched for anchors (the longest first).
pub const ANCHOR_KEYS_MAX: usize = 24;
/// Alignment cells (and line comparisons) `similar` may spend.
pub const SIMILAR_WORK_MAX: usize = 2_000_000;
/// `similar` keeps bit sets of OLD's pieces' bigrams (4 KiB a piece, a
/// faster count of common bigrams) while they take at most this many bytes.
pub const PIECE_BITS_MAX: usize = 128 << 10;
/// Bytes of window lines (each line counting one more) the exact kinds may
/// examine beyond the anchor lines: bounds their time on repetitive files.
pub const EXACT_WORK_MAX: usize = 16 << 20;
/// Lines longer than this are skipped by the exact kinds (their copies would
/// break the memory bound); `similar` reads only their start.
pub const LINE_MAX_BYTES: usize = 64 << 10;
/// How many occurrence lines `multiple_occurrences` reports.
pub const OCCURRENCE_LINES_MAX: usize = 1000;

/// Why a candidate did not match, most specific first (the order of checks).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// OLD does not occur, NEW does: the edit looks done already.
    AlreadyApplied,
    /// Equal but for spaces and tabs at line ends.
    TrailingWhitespace,
    /// Equal but for one leading-whitespace string added or removed on every line.
    Indentation,
    /// Equal when leading whitespace is compared by width (tabs versus spaces).
    Tabs,
    /// Equal once runs of whitespace collapse to one space.
    Whitespace,
    /// Equal once curly quotes, dashes, special spaces and zero-width characters map to ASCII.
    UnicodePunctuation,
    /// OLD holds literal escapes (`\n`, `\t`, …) and, unescaped, occurs.
    Escapes,
    /// The most similar window of lines (no exact relation).
    Similar,
}

impl Kind {
    /// Every kind, in the order they are checked.
    pub const ALL: [Kind; 8] = [
        Kind::AlreadyApplied,
        Kind::TrailingWhitespace,
        Kind::Indentation,
        Kind::Tabs,
        Kind::Whitespace,
        Kind::UnicodePunctuation,
        Kind::Escapes,
        Kind::Similar,
    ];

    /// The wire name.
    #[cfg_attr(as_edit_small, optimize(size))]
    pub fn token(self) -> &'static str {
        match self {
            Kind::AlreadyApplied => "already_applied",
            Kind::TrailingWhitespace => "trailing_whitespace",
            Kind::Indentation => "indentation",
            Kind::Tabs => "tabs",
            Kind::Whitespace => "whitespace",
            Kind::UnicodePunctuation => "unicode_punctuation",
            Kind::Escapes => "escapes",
            Kind::Similar => "similar",
        }
    }

    /// The kind a wire name names, if any.
    pub fn from_token(s: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.token() == s)
    }
}

/// One candidate; serializes as the wire object.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Hint {
    /// 1-based first and last line of the candidate.
    pub line: u64,
    /// The candidate's last line (1-based; see `line`).
    pub end_line: u64,
    /// Why OLD did not match here.
    pub kind: Kind,
    /// 1 for the normalized-exact kinds, the similarity for `similar`
    /// (rounded to 3 decimals).
    pub score: f64,
    /// The file's exact lines `line..=end_line`, with the last line's newline
    /// when OLD (NEW for `already_applied`, unescaped OLD for `escapes`) ends
    /// with one; cut to [`TEXT_MAX_BYTES`].
    pub text: String,
    /// `text` was cut.
    #[serde(skip_serializing_if = "is_false")]
    pub text_truncated: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// The answer of [`find`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Hints {
    /// Best first, at most [`MAX_HINTS`].
    pub hints: Vec<Hint>,
    /// A bound cut the search (or the text was only the file's first part):
    /// better candidates may exist.
    pub truncated: bool,
}

/// Hints for a `string_not_found` of `old` in `text` (both LF-normalized).
/// `whole_file` is false when `text` is only the first part of the file
/// (the caller stopped buffering): its partial last line is ignored and the
/// answer is marked truncated. Honest on any input: if OLD occurs in `text`,
/// there are no hints.
#[cfg_attr(as_edit_small, optimize(size))]
pub fn find(text: &str, old: &str, new: &str, whole_file: bool) -> Hints {
    let mut text = text;
    let mut truncated = false;
    if !whole_file {
        truncated = true;
        text = match text.rfind('\n') {
            Some(i) => &text[..=i],
            None => "",
        };
    }
    if old.is_empty() {
        return Hints {
            hints: Vec::new(),
            truncated,
        };
    }
    let (pieces, ends_nl) = split_pieces(old);
    // The exact kinds' anchor run, searched for once: its offsets also
    // say whether OLD occurs, when they are few.
    let (_, run) = anchor_run(&pieces);
    let run_at = (run.len() >= 3).then(|| run_offsets(text, run)).flatten();
    let occurs = match &run_at {
        // `run` is a part of `old`: its offset is the pointers' distance.
        Some(at) => occurs_around(
            text,
            old,
            run,
            run.as_ptr() as usize - old.as_ptr() as usize,
            at,
        ),
        None => memmem::find(text.as_bytes(), old.as_bytes()).is_some(),
    };
    if occurs {
        return Hints {
            hints: Vec::new(),
            truncated,
        };
    }
    let mut found: Vec<Hint> = Vec::new();
    // NEW inside OLD (a deletion keeps the rest of OLD) is in the file
    // whether or not the edit was applied: no evidence, and its candidate
    // would hide the real one by overlapping it.
    let applied = (!new.is_empty() && memmem::find(old.as_bytes(), new.as_bytes()).is_none())
        .then(|| memmem::find(text.as_bytes(), new.as_bytes()))
        .flatten()
        .map(|p| span_hint(text, p, new, Kind::AlreadyApplied));
    let mut by_kind = exact_windows(
        text,
        &pieces,
        ends_nl,
        run_at.as_deref(),
        &mut truncated,
        &mut 0,
    );
    by_kind.sort_by_key(|h| (h.kind, h.line));
    let mut escaped = Vec::new();
    if by_kind.len() < MAX_HINTS {
        if let Some(unescaped) = unescape(old) {
            let finder = memmem::Finder::new(unescaped.as_bytes());
            for p in finder.find_iter(text.as_bytes()).take(MAX_HINTS) {
                escaped.push(span_hint(text, p, &unescaped, Kind::Escapes));
            }
        }
    }
    // NEW found where OLD is, in a normalized form (NEW a part of it: `a = 1`
    // in OLD `a  =  1;\nb = 2;`), is no sign the edit was applied: the
    // normalized-exact candidate there is the explanation.
    if let Some(a) = applied {
        let overlaps = |h: &Hint| a.line <= h.end_line && h.line <= a.end_line;
        if !by_kind.iter().chain(&escaped).any(overlaps) {
            push(&mut found, text, a);
        }
    }
    for h in by_kind.into_iter().chain(escaped) {
        push(&mut found, text, h);
    }
    if found.len() < MAX_HINTS {
        if text.len() > FULL_HINTS_MAX_BYTES {
            truncated = true;
        } else {
            // The run's offsets, or RUN_OFFSETS_MAX of them, are a floor
            // for the count of every key inside it.
            let floor = (run.len() >= 3).then(|| {
                let at_least = run_at.as_ref().map_or(RUN_OFFSETS_MAX, Vec::len);
                (run, at_least)
            });
            for h in similar(text, &pieces, ends_nl, floor, &mut truncated) {
                push(&mut found, text, h);
            }
        }
    }
    found.truncate(MAX_HINTS);
    Hints {
        hints: found,
        truncated,
    }
}

/// Appends `h` unless the list is full, it overlaps a hint already kept,
/// or its text sent back as OLD would not match on its own line (a text cut
/// at [`TEXT_MAX_BYTES`] is only the start of the candidate, not an OLD to
/// send: it is kept for where it points).
#[cfg_attr(as_edit_small, optimize(size))]
fn push(found: &mut Vec<Hint>, text: &str, h: Hint) {
    if found.len() < MAX_HINTS
        && !found
            .iter()
            .any(|f| h.line <= f.end_line && f.line <= h.end_line)
        && (h.text_truncated || matches_on_its_line(text, &h))
    {
        found.push(h);
    }
}

/// Whether `h.text`, sent as OLD with `--at-line h.line`, is replaced where
/// the hint says: the engine counts occurrences left to right without
/// overlap, so one must start at the hint's line start and no other on that
/// line. (In `a\n\n\nb` the blank lines 2..3 are `\n\n`, but that text's
/// first occurrence starts at line 1's newline and takes line 2's: there is
/// none at line 2.)
#[cfg_attr(as_edit_small, optimize(size))]
fn matches_on_its_line(text: &str, h: &Hint) -> bool {
    let (b, t) = (text.as_bytes(), h.text.as_bytes());
    let Some(start) = line_start(b, h.line) else {
        return false;
    };
    if t.is_empty() || !b[start..].starts_with(t) {
        return false;
    }
    // Counted at `start` unless a counted occurrence covers it; none can
    // when none starts in the `len - 1` bytes before (the usual case: no
    // scan from the top).
    let lo = start.saturating_sub(t.len() - 1);
    let counted = match memmem::find(&b[lo..start + t.len()], t) {
        Some(p) if lo + p < start => {
            let mut at = memmem::find_iter(b, t).skip_while(|&p| p < start);
            at.next() == Some(start)
        }
        found => found == Some(start - lo),
    };
    // The next counted one starts past `start`'s line.
    let line_end = memchr::memchr(b'\n', &b[start..]).map_or(b.len(), |i| start + i);
    let next = &b[start + t.len()..(line_end + t.len()).min(b.len()).max(start + t.len())];
    counted && memmem::find(next, t).is_none_or(|p| start + t.len() + p > line_end)
}

/// The byte offset where 1-based `line` starts, newlines counted a block
/// at a time (memchr's vectorized count) until the block holding it.
#[cfg_attr(as_edit_small, optimize(size))]
fn line_start(b: &[u8], line: u64) -> Option<usize> {
    let mut left = usize::try_from(line).ok()?.checked_sub(1)?;
    let mut off = 0;
    for block in b.chunks(16 << 10) {
        let n = memchr::memchr_iter(b'\n', block).count();
        if n >= left {
            if left == 0 {
                return Some(off);
            }
            return memchr::memchr_iter(b'\n', block)
                .nth(left - 1)
                .map(|i| off + i + 1);
        }
        left -= n;
        off += block.len();
    }
    (left == 0).then_some(off)
}

/// OLD's pieces; the second value is whether OLD ends with a newline.
pub(super) fn split_pieces(old: &str) -> (Vec<&str>, bool) {
    match old.strip_suffix('\n') {
        Some(rest) => (rest.split('\n').collect(), true),
        None => (old.split('\n').collect(), false),
    }
}

/// A hint for lines `start..end` of `text` (byte offsets of the first line's
/// start and the last line's end, excluding its newline).
#[cfg_attr(as_edit_small, optimize(size))]
fn lines_hint(
    text: &str,
    first_line: u64,
    start: usize,
    end: usize,
    with_nl: bool,
) -> (u64, String, bool) {
    let end_line =
        first_line + memchr::memchr_iter(b'\n', &text.as_bytes()[start..end]).count() as u64;
    let stop = if with_nl && end < text.len() {
        end + 1
    } else {
        end
    };
    let mut cut = stop.min(start + TEXT_MAX_BYTES);
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    (end_line, text[start..cut].to_owned(), cut < stop)
}

#[cfg_attr(as_edit_small, optimize(size))]
fn make_hint(
    text: &str,
    line: u64,
    start: usize,
    end: usize,
    with_nl: bool,
    kind: Kind,
    score: f64,
) -> Hint {
    let (end_line, t, cut) = lines_hint(text, line, start, end, with_nl);
    Hint {
        line,
        end_line,
        kind,
        score,
        text: t,
        text_truncated: cut,
    }
}

/// The hint for an exact occurrence of `needle` at byte `p`.
#[cfg_attr(as_edit_small, optimize(size))]
fn span_hint(text: &str, p: usize, needle: &str, kind: Kind) -> Hint {
    let b = text.as_bytes();
    let start = memchr::memrchr(b'\n', &b[..p]).map_or(0, |i| i + 1);
    let line = memchr::memchr_iter(b'\n', &b[..p]).count() as u64 + 1;
    let with_nl = needle.ends_with('\n');
    let content_end = (p + needle.len() - usize::from(with_nl)).max(p);
    let end = memchr::memchr(b'\n', &b[content_end..]).map_or(b.len(), |i| content_end + i);
    make_hint(text, line, start, end, with_nl, kind, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first hint, asserting its kind, lines and text, and that sending
    /// its text as OLD succeeds once (the agent's second call).
    pub(super) fn expect(
        text: &str,
        old: &str,
        new: &str,
        kind: Kind,
        line: u64,
        end_line: u64,
        want: &str,
    ) {
        let h = find(text, old, new, true);
        let first = h
            .hints
            .first()
            .unwrap_or_else(|| panic!("no hint for {old:?}"));
        assert_eq!(
            (first.kind, first.line, first.end_line, first.text.as_str()),
            (kind, line, end_line, want),
            "{old:?}: {h:?}"
        );
        assert_eq!(first.score, 1.0);
        second_call(text, &first.text);
    }

    pub(super) fn second_call(text: &str, hint_text: &str) {
        let e = crate::engine::Edit::new(hint_text, "REPLACED", false).unwrap();
        let (_, s) = crate::engine::replace(text.as_bytes(), &[e]).expect("second call succeeds");
        assert_eq!(s.count, 1);
    }

    pub(super) fn kinds(text: &str, old: &str, new: &str) -> Vec<Kind> {
        find(text, old, new, true)
            .hints
            .iter()
            .map(|h| h.kind)
            .collect()
    }

    pub(super) const RS: &str = "fn main() {\n    let x = 1;\n    println!(\"{x}\");\n}\n";

    #[test]
    fn no_hints_when_old_occurs() {
        assert_eq!(find(RS, "let x = 1;", "let x = 2;", true), Hints::default());
    }

    #[test]
    fn order_and_cap() {
        // The same line under several explanations is listed once, most specific first.
        let t = "a  b \nx\na  b \ny\na  b \nz\na  b \n";
        let h = find(t, "a  b", "", true);
        assert_eq!(h, Hints::default(), "OLD occurs: no hints");
        let h = find(t, "a b\n", "", true);
        assert_eq!(h.hints.len(), MAX_HINTS);
        assert!(h.hints.iter().all(|x| x.kind == Kind::Whitespace), "{h:?}");
        assert_eq!(
            h.hints.iter().map(|x| x.line).collect::<Vec<_>>(),
            vec![1, 3, 5]
        );
        // already_applied comes before everything else.
        let t = "foo \nbar\n";
        let k = kinds(t, "foo", "bar");
        assert_eq!(k, vec![]);
        let k = kinds(t, "foo  \nqux", "bar");
        assert_eq!(k.first(), Some(&Kind::AlreadyApplied));
    }

    /// NEW occurring only inside OLD's normalized-exact candidate is not
    /// "applied already": the candidate explains it. Elsewhere it still is.
    #[test]
    fn already_applied_yields_to_an_exact_candidate_it_lies_in() {
        let t = "a = 1;\nb = 2;\n";
        let h = find(t, "a  =  1;\nb = 2;", "a = 1;", true);
        let got: Vec<_> = h
            .hints
            .iter()
            .map(|x| (x.kind, x.line, x.end_line))
            .collect();
        assert_eq!(got, vec![(Kind::Whitespace, 1, 2)]);
        // The escapes kind explains it too.
        let h = find("x\ny\n", "x\\ny", "x", true);
        assert_eq!(h.hints[0].kind, Kind::Escapes, "{h:?}");
        assert!(h.hints.iter().all(|x| x.kind != Kind::AlreadyApplied));
        // NEW on other lines than the candidate: still first.
        let t = "a = 1;\nb = 2;\nc = 3;\n";
        let k = kinds(t, "a  =  1;\nb = 2;", "c = 3;");
        assert_eq!(k, vec![Kind::AlreadyApplied, Kind::Whitespace]);
    }

    #[test]
    fn text_is_capped_on_a_char_boundary() {
        let long = "é".repeat(2000); // 4000 bytes
        let t = format!("{long}\nend\n");
        let h = find(&t, &format!("{long}  "), "", true);
        let first = &h.hints[0];
        assert_eq!(first.kind, Kind::TrailingWhitespace);
        assert!(first.text_truncated);
        assert_eq!(first.text, "é".repeat(1024));
        let json = serde_json::to_string(first).unwrap();
        assert!(json.contains("\"text_truncated\":true"));
        let short = &find(RS, "let x = 1; ", "", true).hints[0];
        assert_eq!(
            serde_json::to_string(short).unwrap(),
            "{\"line\":2,\"end_line\":2,\"kind\":\"trailing_whitespace\",\"score\":1.0,\"text\":\"    let x = 1;\"}"
        );
    }

    #[test]
    fn partial_text_ignores_the_cut_line_and_says_so() {
        let t = "keep\nlet x = 1;\nlet y";
        let h = find(t, "let y = 2; ", "", false);
        assert!(h.truncated);
        assert!(h.hints.iter().all(|x| x.end_line <= 2), "{h:?}");
        assert!(!find(t, "let x = 1; ", "", true).truncated);
    }

    #[test]
    fn kind_tokens_round_trip_in_order() {
        for (i, k) in Kind::ALL.into_iter().enumerate() {
            assert_eq!(Kind::from_token(k.token()), Some(k));
            assert_eq!(
                serde_json::to_string(&k).unwrap(),
                format!("\"{}\"", k.token())
            );
            assert_eq!(k as usize, i);
        }
    }
}
