//! The normalized-exact kinds: the window scan for kinds 2 to 6
//! (`trailing_whitespace`, `indentation`, `tabs`, `whitespace`,
//! `unicode_punctuation`), its prefilter, the normalizations, and the
//! unescaping `escapes` uses (`already_applied` and `escapes` are exact
//! searches in [`super::find`]).

use memchr::memmem;

mod kinds;
mod lines;

use super::{make_hint, Hint, Kind, EXACT_WORK_MAX, LINE_MAX_BYTES, MAX_HINTS};
use kinds::{ascii_form, classify, skeleton, skeleton_into};
pub(super) use kinds::{skeleton_chars, unescape};
pub(super) use lines::{
    anchor_run, has_border, occurs_around, run_offsets, same_bytes, RUN_OFFSETS_MAX,
};
use lines::{line_spans, lines_holding, lines_holding_at};

/// How a piece of OLD relates to its line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Part {
    /// The whole line.
    Whole,
    /// The end of the line (OLD's first piece may start mid-line).
    Suffix,
    /// The start of the line (OLD's last piece may stop mid-line).
    Prefix,
    /// Anywhere in the line (a one-piece OLD).
    Inner,
}

fn part(j: usize, k: usize, ends_nl: bool) -> Part {
    match (j == 0, j + 1 == k && !ends_nl) {
        (true, true) => Part::Inner,
        (true, false) => Part::Suffix,
        (false, true) => Part::Prefix,
        (false, false) => Part::Whole,
    }
}

fn rel(line: &str, piece: &str, p: Part) -> bool {
    match p {
        Part::Whole => line == piece,
        Part::Suffix => line.ends_with(piece),
        Part::Prefix => line.starts_with(piece),
        Part::Inner => line.contains(piece),
    }
}

/// Scans every window of `k` lines; returns candidates of kinds 2 to 6.
/// `work` counts the bytes of window lines examined (each line one more),
/// at most [`EXACT_WORK_MAX`] (plus one line) before the scan stops.
pub(super) fn exact_windows(
    text: &str,
    pieces: &[&str],
    ends_nl: bool,
    run_at: Option<&[usize]>,
    truncated: &mut bool,
    work: &mut usize,
) -> Vec<Hint> {
    let k = pieces.len();
    let skels: Vec<String> = pieces.iter().map(|p| skeleton(p)).collect();
    if skels.iter().all(|s| s.is_empty()) {
        return Vec::new();
    }
    // Fast path: the longest run of characters every kind leaves as they
    // are, found with memmem; only the lines holding it can anchor a window.
    // Zero-width characters in the file could split such a run: full scan.
    let (run_piece, run) = anchor_run(pieces);
    let fast = run.len() >= 3 && !has_zero_width(text);
    // Else the anchor piece is the longest skeleton, which fails fastest.
    let anchor = if fast {
        run_piece
    } else {
        (0..k)
            .max_by_key(|&j| (skels[j].len(), usize::MAX - j))
            .expect("OLD has a piece")
    };
    let anchor_part = part(anchor, k, ends_nl);
    // (line, start, end, whether equal to the line before it here)
    // `run_at`, when given, holds the run's offsets (searched already).
    let candidates: Box<dyn Iterator<Item = (usize, usize, usize, bool)>> = if fast {
        match run_at {
            Some(at) => Box::new(lines_holding_at(text, at)),
            None => Box::new(lines_holding(text, run)),
        }
    } else {
        Box::new(
            line_spans(text)
                .enumerate()
                .map(|(i, (s, e))| (i, s, e, false)),
        )
    };
    let b = text.as_bytes();
    let mut out: Vec<Hint> = Vec::new();
    let mut per_kind = [0usize; 8];
    let mut scratch = Scratch::default();
    // A one-piece OLD is searched for inside its line's skeleton.
    let inner = memmem::Finder::new(skels[anchor].as_bytes());
    let mut memo = Memo::new();
    let mut spans: Vec<(usize, usize)> = Vec::with_capacity(k);
    // The piece whose line failed the prefilter last: checked first, so a
    // repetitive file fails each window in one line, not k.
    let mut last_fail = anchor;
    // The anchor prefilter's answer for the line before, when it was asked.
    let mut last: Option<bool> = None;
    'scan: for (line, s, e, repeat) in candidates {
        if line < anchor {
            last = None;
            continue;
        }
        if e - s > LINE_MAX_BYTES {
            *truncated = true;
            last = None;
            continue;
        }
        let related = match last.filter(|_| repeat).or_else(|| memo.get(b, s, e)) {
            Some(r) => r,
            None => {
                let r = skel_rel(
                    &text[s..e],
                    &skels[anchor],
                    anchor_part,
                    &inner,
                    &mut scratch,
                );
                memo.put(b, s, e, r);
                r
            }
        };
        last = Some(related);
        if !related {
            continue;
        }
        // The window's other lines, walking out from the anchor line.
        spans.clear();
        spans.push((s, e));
        while spans.len() <= anchor {
            let start = spans.last().expect("non-empty").0;
            let prev_end = start - 1; // line >= anchor: a line precedes
            let prev_start = memchr::memrchr(b'\n', &b[..prev_end]).map_or(0, |i| i + 1);
            if !charge(prev_end - prev_start, work) {
                *truncated = true;
                break 'scan;
            }
            spans.push((prev_start, prev_end));
        }
        spans.reverse();
        while spans.len() < k {
            let end = spans.last().expect("non-empty").1;
            if end >= b.len() {
                break;
            }
            let next = end + 1;
            let next_end = memchr::memchr(b'\n', &b[next..]).map_or(b.len(), |i| next + i);
            if !charge(next_end - next, work) {
                *truncated = true;
                break 'scan;
            }
            spans.push((next, next_end));
        }
        if spans.len() < k {
            continue;
        }
        if spans.iter().any(|&(s, e)| e - s > LINE_MAX_BYTES) {
            *truncated = true;
            continue;
        }
        // Every kind implies each line's skeleton relates to its piece's:
        // a cheap check of all lines before the allocating classification.
        let mut related = true;
        for j in std::iter::once(last_fail).chain((0..k).filter(|&j| j != last_fail && j != anchor))
        {
            let (ls, le) = spans[j];
            if !charge(le - ls, work) {
                *truncated = true;
                break 'scan;
            }
            if !skel_rel(
                &text[ls..le],
                &skels[j],
                part(j, k, ends_nl),
                &inner,
                &mut scratch,
            ) {
                last_fail = j;
                related = false;
                break;
            }
        }
        if !related {
            continue;
        }
        // classify passes over the window a few times: charged once more.
        let bytes: usize = spans.iter().map(|&(s, e)| e - s + 1).sum();
        if !charge(bytes, work) {
            *truncated = true;
            break;
        }
        let window: Vec<&str> = spans.iter().map(|&(s, e)| &text[s..e]).collect();
        let kind = classify(pieces, ends_nl, &window);
        if let Some(kind) = kind {
            // Enough of each kind to survive de-duplication.
            if per_kind[kind as usize] < 2 * MAX_HINTS {
                per_kind[kind as usize] += 1;
                let first = line - anchor;
                out.push(make_hint(
                    text,
                    first as u64 + 1,
                    spans[0].0,
                    spans[k - 1].1,
                    ends_nl,
                    kind,
                    1.0,
                ));
            }
        }
        // Later windows cannot outrank enough of the most specific kind.
        if per_kind[Kind::TrailingWhitespace as usize] >= MAX_HINTS {
            break;
        }
    }
    out
}

/// Charges a line of `n` bytes to `work`; false once the budget is spent.
fn charge(n: usize, work: &mut usize) -> bool {
    *work += n + 1;
    *work <= EXACT_WORK_MAX
}

/// Whether `text` holds a character the punctuation mapping removes (their
/// UTF-8 forms start with 0xE2 or 0xEF: one SIMD pass, no hits in ASCII).
fn has_zero_width(text: &str) -> bool {
    let b = text.as_bytes();
    memchr::memchr2_iter(0xE2, 0xEF, b).any(|i| {
        text.get(i..)
            .and_then(|rest| rest.chars().next())
            .is_some_and(|c| ascii_form(c) == Some(""))
    })
}

/// Scratch buffers for [`skel_rel`].
#[derive(Default)]
struct Scratch {
    bytes: Vec<u8>,
    text: String,
}

/// The whitespace a skeleton drops, in ASCII (VT too, as
/// `char::is_whitespace` and [`skeleton_into`] do).
fn is_ascii_skel_space(b: u8) -> bool {
    b.is_ascii_whitespace() || b == 0x0b
}

/// `rel(&skeleton(line), skel, p)`, without building the skeleton of an
/// ASCII line unless `p` is `Inner` (then `inner` is `skel`'s finder): the
/// comparison stops at the first difference. Byte comparisons of valid
/// UTF-8 answer as the `str` ones do.
#[cfg_attr(as_edit_small, optimize(size))]
fn skel_rel(
    line: &str,
    skel: &str,
    p: Part,
    inner: &memmem::Finder,
    scratch: &mut Scratch,
) -> bool {
    if !line.is_ascii() {
        skeleton_into(line, &mut scratch.text);
        return rel(&scratch.text, skel, p);
    }
    let (l, s) = (line.as_bytes(), skel.as_bytes());
    let kept = |b: &&u8| !is_ascii_skel_space(**b);
    match p {
        Part::Whole => l.iter().filter(kept).eq(s.iter()),
        Part::Prefix => {
            let mut it = l.iter().filter(kept);
            s.iter().all(|c| it.next() == Some(c))
        }
        Part::Suffix => {
            let mut it = l.iter().rev().filter(kept);
            s.iter().rev().all(|c| it.next() == Some(c))
        }
        Part::Inner => {
            scratch.bytes.clear();
            scratch
                .bytes
                .extend(l.iter().copied().filter(|&b| !is_ascii_skel_space(b)));
            inner.find(&scratch.bytes).is_some()
        }
    }
}

/// The anchor prefilter's answers by line content: in a repetitive file
/// each distinct line is checked once. A small direct-mapped cache; a hit
/// is verified against the remembered line's bytes.
struct Memo {
    /// (start, end, answer) of a line of the text; start > end: empty.
    slots: Vec<(usize, usize, bool)>,
}

impl Memo {
    const SLOTS: usize = 64;

    fn new() -> Memo {
        Memo {
            slots: vec![(1, 0, false); Memo::SLOTS],
        }
    }

    fn slot(line: &[u8]) -> usize {
        let n = line.len();
        let word = |at: usize| u64::from_le_bytes(line[at..at + 8].try_into().expect("8 bytes"));
        let (head, tail) = if n >= 8 {
            (word(0), word(n - 8))
        } else {
            (line.iter().fold(0u64, |h, &b| (h << 8) | u64::from(b)), 0)
        };
        let h = (n as u64)
            ^ head.wrapping_mul(0x9E37_79B9_7F4A_7C15)
            ^ tail.wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
        (h.wrapping_mul(0x1656_67B1_9E37_79F9) >> 58) as usize % Memo::SLOTS
    }

    fn get(&self, b: &[u8], s: usize, e: usize) -> Option<bool> {
        let line = &b[s..e];
        let (ms, me, answer) = self.slots[Memo::slot(line)];
        (ms <= me && same_bytes(&b[ms..me], line)).then_some(answer)
    }

    fn put(&mut self, b: &[u8], s: usize, e: usize, answer: bool) {
        self.slots[Memo::slot(&b[s..e])] = (s, e, answer);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hints::find;
    use proptest::prelude::*;

    pub(super) fn line_of(chars: &'static [char]) -> impl Strategy<Value = String> {
        proptest::collection::vec(proptest::sample::select(chars), 0..12)
            .prop_map(|v| v.into_iter().collect())
    }

    const CHARS: &[char] = &[
        'a', 'b', ' ', '\t', '\x0b', '.', '\u{2019}', '\u{200b}', '\u{a0}',
    ];

    proptest! {
        #![proptest_config(ProptestConfig { cases: 500, ..ProptestConfig::default() })]

        #[test]
        fn skel_rel_equals_rel_of_the_skeleton(line in line_of(CHARS), piece in line_of(CHARS)) {
            let skel = skeleton(&piece);
            let inner = memmem::Finder::new(skel.as_bytes());
            let mut scratch = Scratch::default();
            for p in [Part::Whole, Part::Suffix, Part::Prefix, Part::Inner] {
                prop_assert_eq!(
                    skel_rel(&line, &skel, p, &inner, &mut scratch),
                    rel(&skeleton(&line), &skel, p),
                    "{:?}", p
                );
            }
        }

        #[test]
        fn memo_answers_only_for_the_same_line(
            lines in proptest::collection::vec(line_of(&['a', 'b', ' ']), 1..200),
        ) {
            let text = lines.join("\n");
            let b = text.as_bytes();
            let mut memo = Memo::new();
            let mut start = 0;
            for l in &lines {
                let (s, e) = (start, start + l.len());
                // The answer is a function of the content, as the real one is.
                let answer = l.len() % 2 == 0;
                if let Some(got) = memo.get(b, s, e) {
                    prop_assert_eq!(got, answer, "{:?}", l);
                } else {
                    memo.put(b, s, e, answer);
                }
                start = e + 1;
            }
        }
    }

    #[test]
    fn repetitive_file_is_bounded_by_work_not_windows() {
        // break11 #1: every line anchors a window and k-1 of its lines
        // relate; only the last piece differs. The work stays in the budget
        // and the cut is reported.
        let t = "abcdef\n".repeat(1_000_000);
        let old = format!("{}abcdeX", "abcdef \n".repeat(2000));
        let (pieces, ends_nl) = crate::hints::split_pieces(&old);
        let (mut truncated, mut work) = (false, 0usize);
        let out = exact_windows(&t, &pieces, ends_nl, None, &mut truncated, &mut work);
        assert!(out.is_empty());
        assert!(truncated);
        assert!(work <= EXACT_WORK_MAX + LINE_MAX_BYTES + 1, "{work}");
        // The smaller repro: the prefilter fails each window on the piece
        // that failed before, so the whole file is scanned well in budget.
        let t = "abcdef\n".repeat(150_000);
        let old = format!("{}abcdeX", "abcdef \n".repeat(100));
        let (pieces, ends_nl) = crate::hints::split_pieces(&old);
        let (mut truncated, mut work) = (false, 0usize);
        exact_windows(&t, &pieces, ends_nl, None, &mut truncated, &mut work);
        assert!(work <= EXACT_WORK_MAX + LINE_MAX_BYTES + 1, "{work}");
    }

    #[test]
    fn lines_over_the_cap_are_skipped_and_say_so() {
        // break11 #2: a minified line is not copied (memory bound): no exact
        // hint from it, truncated; a short line after it is still found.
        let long = "v1=compute(alpha1,beta1); ".repeat(LINE_MAX_BYTES / 26 + 1);
        let t = format!("{long}\nv2=compute(alpha2,beta2); \n");
        let h = find(&t, "v1=compute(alpha1,beta1);  v1=compute", "", true);
        assert!(h.truncated, "{h:?}");
        assert!(h.hints.iter().all(|x| x.kind == Kind::Similar), "{h:?}");
        let h = find(&t, "v2=compute(alpha2,beta2);  ", "", true);
        assert_eq!(
            (h.hints[0].kind, h.hints[0].line),
            (Kind::TrailingWhitespace, 2)
        );
        // The long line does not hold OLD's stable run: never a candidate.
        assert!(!h.truncated);
        // At the cap itself the line is still checked.
        let t = format!("{}\n", "a b ".repeat(LINE_MAX_BYTES / 4));
        let h = find(&t, "a  b", "", true);
        assert_eq!((h.hints[0].kind, h.truncated), (Kind::Whitespace, false));
    }

    #[test]
    fn stops_early_on_enough_trailing_whitespace() {
        // Every line qualifies; the first three are reported.
        let t = "value = 1\n".repeat(10_000);
        let h = find(&t, "value = 1 \n", "", true);
        let lines: Vec<u64> = h.hints.iter().map(|x| x.line).collect();
        assert_eq!(lines, vec![1, 2, 3]);
        assert!(!h.truncated);
    }
}
