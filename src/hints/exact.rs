//! The normalized-exact kinds: the window scan for kinds 2 to 6
//! (`trailing_whitespace`, `indentation`, `tabs`, `whitespace`,
//! `unicode_punctuation`), its prefilter, the normalizations, and the
//! unescaping `escapes` uses (`already_applied` and `escapes` are exact
//! searches in [`super::find`]).

use memchr::memmem;

use super::{make_hint, Hint, Kind, EXACT_WORK_MAX, LINE_MAX_BYTES, MAX_HINTS};

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

/// The longest run of characters that no kind changes (printable ASCII
/// other than space and the targets of the punctuation mapping `'"-.`).
fn stable_run(piece: &str) -> &str {
    piece
        .split(|c: char| !c.is_ascii_graphic() || matches!(c, '\'' | '"' | '-' | '.'))
        .max_by_key(|r| r.len())
        .unwrap_or("")
}

/// (0-based line, start, end, equal to the line before it) of each line
/// holding `needle` (which holds no newline), in order. The search resumes
/// at the next line, so each newline is counted once and a line holding
/// many hits costs one.
fn lines_holding<'a>(
    text: &'a str,
    needle: &'a str,
) -> impl Iterator<Item = (usize, usize, usize, bool)> + 'a {
    let finder = memmem::Finder::new(needle.as_bytes());
    let b = text.as_bytes();
    lines_of(
        text,
        Box::new(move |at| Some(at + finder.find(b.get(at..)?)?)),
    )
}

/// [`lines_holding`] from the needle's offsets, found already (all of its
/// non-overlapping ones, left to right: a line holds the needle when one
/// of them is in it).
fn lines_holding_at<'a>(
    text: &'a str,
    offsets: &'a [usize],
) -> impl Iterator<Item = (usize, usize, usize, bool)> + 'a {
    let mut next = 0;
    lines_of(
        text,
        Box::new(move |at| {
            while offsets.get(next).is_some_and(|&p| p < at) {
                next += 1;
            }
            offsets.get(next).copied()
        }),
    )
}

/// The lines of [`lines_holding`], from `hit(at)`: the first offset at or
/// after `at` where the needle occurs (boxed: one copy of this code).
fn lines_of<'a>(
    text: &'a str,
    mut hit: Box<dyn FnMut(usize) -> Option<usize> + 'a>,
) -> impl Iterator<Item = (usize, usize, usize, bool)> + 'a {
    let b = text.as_bytes();
    // `at` is a line start, `line` its number; `last` the line found last.
    let (mut at, mut line) = (0usize, 0usize);
    let mut last: Option<(usize, usize)> = None;
    std::iter::from_fn(move || {
        // A line equal to the one before holds the needle too: a file of
        // repeated lines is walked without searching.
        if let Some((s, e)) = last {
            let next_end = at + (e - s);
            if next_end <= b.len()
                && b.get(next_end).is_none_or(|&c| c == b'\n')
                && same_bytes(&b[at..next_end], &b[s..e])
            {
                let found = (line, at, next_end, true);
                last = Some((at, next_end));
                at = next_end + 1;
                line += 1;
                return Some(found);
            }
        }
        if at > b.len() {
            return None;
        }
        let p = hit(at)?;
        let start = memchr::memrchr(b'\n', &b[at..p]).map_or(at, |i| at + i + 1);
        line += memchr::memchr_iter(b'\n', &b[at..start]).count();
        let end = memchr::memchr(b'\n', &b[p..]).map_or(b.len(), |i| p + i);
        let found = (line, start, end, false);
        last = Some((start, end));
        at = end + 1;
        line += 1;
        Some(found)
    })
}

/// The run [`exact_windows`] anchors on: the longest run of characters no
/// kind changes in any piece (the first piece's on ties), with its piece.
pub(super) fn anchor_run<'a>(pieces: &[&'a str]) -> (usize, &'a str) {
    (0..pieces.len())
        .map(|j| (j, stable_run(pieces[j])))
        .max_by_key(|(j, r)| (r.len(), usize::MAX - j))
        .expect("OLD has a piece")
}

/// Searched for once ahead, the run's offsets are kept while there are
/// fewer than this many (then they tell whether OLD occurs, and which lines
/// anchor, without another pass).
pub(super) const RUN_OFFSETS_MAX: usize = 512;

/// All non-overlapping offsets of `run`, left to right, when fewer than
/// [`RUN_OFFSETS_MAX`].
pub(super) fn run_offsets(text: &str, run: &str) -> Option<Vec<usize>> {
    let mut at: Vec<usize> = Vec::with_capacity(RUN_OFFSETS_MAX);
    at.extend(memmem::find_iter(text.as_bytes(), run.as_bytes()).take(RUN_OFFSETS_MAX));
    (at.len() < RUN_OFFSETS_MAX).then_some(at)
}

/// Whether `old` occurs in `text`, from all non-overlapping offsets of
/// `run`, which is `old`'s part at `off`: an occurrence of `old` holds one
/// of `run` there. A scan skips the occurrences that overlap the one before;
/// those start within it, so for a run with a border each place up to its
/// length after a found one is checked too.
pub(super) fn occurs_around(
    text: &str,
    old: &str,
    run: &str,
    off: usize,
    offsets: &[usize],
) -> bool {
    let within = if has_border(run.as_bytes()) {
        run.len()
    } else {
        1
    };
    offsets.iter().any(|&q| {
        (q..q + within).any(|p| {
            p.checked_sub(off)
                .is_some_and(|s| text.as_bytes()[s..].starts_with(old.as_bytes()))
        })
    })
}

/// Whether a proper prefix of `s` is also its suffix (then two of its
/// occurrences may overlap, and a non-overlapping scan misses some).
pub(super) fn has_border(s: &[u8]) -> bool {
    (1..s.len()).any(|l| s[..l] == s[s.len() - l..])
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

/// `a == b`, eight bytes at a time (the static binary's `memcmp` goes
/// byte by byte).
pub(super) fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let (x, y) = (a.chunks_exact(8), b.chunks_exact(8));
    x.remainder().iter().zip(y.remainder()).all(|(p, q)| p == q)
        && x.zip(y).all(|(x, y)| {
            u64::from_ne_bytes(x.try_into().expect("8 bytes"))
                == u64::from_ne_bytes(y.try_into().expect("8 bytes"))
        })
}

/// Byte spans of the lines of `text` (without their newlines).
fn line_spans(text: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
    let b = text.as_bytes();
    let mut start = Some(0usize);
    std::iter::from_fn(move || {
        let s = start?;
        match memchr::memchr(b'\n', &b[s..]) {
            Some(i) => {
                start = Some(s + i + 1);
                Some((s, s + i))
            }
            None => {
                start = None;
                Some((s, b.len()))
            }
        }
    })
}

/// The first of kinds 2 to 6 under which the window matches OLD's pieces.
fn classify(o: &[&str], ends_nl: bool, t: &[&str]) -> Option<Kind> {
    let k = o.len();
    let all =
        |f: &dyn Fn(&str, &str, Part) -> bool| (0..k).all(|j| f(o[j], t[j], part(j, k, ends_nl)));
    if all(&trailing_ws_eq) {
        return Some(Kind::TrailingWhitespace);
    }
    if let Some(pairs) = leading_pairs(o, ends_nl, t) {
        if uniform_shift(&pairs) {
            return Some(Kind::Indentation);
        }
        if same_width(&pairs) {
            return Some(Kind::Tabs);
        }
    }
    if all(&|o, t, p| rel(&collapse(t), &collapse(o), p)) {
        return Some(Kind::Whitespace);
    }
    if all(&|o, t, p| rel(&fold(t), &fold(o), p)) {
        return Some(Kind::UnicodePunctuation);
    }
    None
}

fn trim_sp_end(s: &str) -> &str {
    s.trim_end_matches([' ', '\t'])
}

fn trailing_ws_eq(o: &str, t: &str, p: Part) -> bool {
    let (ot, tt) = (trim_sp_end(o), trim_sp_end(t));
    match p {
        Part::Whole | Part::Suffix => rel(tt, ot, p),
        // A piece that stops mid-line matches as it is, or reaches the end.
        Part::Prefix => t.starts_with(o) || ot == tt,
        Part::Inner => t.contains(o) || tt.ends_with(ot),
    }
}

fn split_lead(s: &str) -> (&str, &str) {
    let body = s.trim_start_matches([' ', '\t']);
    (&s[..s.len() - body.len()], body)
}

/// Pairs of (OLD's, the file's) leading whitespace for the lines whose
/// indentation counts, when the rest of every piece matches; else None.
fn leading_pairs<'a>(
    o: &[&'a str],
    ends_nl: bool,
    t: &[&'a str],
) -> Option<Vec<(&'a str, &'a str)>> {
    let k = o.len();
    let mut pairs = Vec::with_capacity(k);
    for j in 0..k {
        let ((lo, bo), (lt, bt)) = (split_lead(o[j]), split_lead(t[j]));
        let p = part(j, k, ends_nl);
        // A first piece without leading whitespace may start after the
        // line's indentation: it matches the line's end and does not count.
        if matches!(p, Part::Suffix | Part::Inner) && lo.is_empty() {
            if !rel(t[j], o[j], p) {
                return None;
            }
            continue;
        }
        let ok = match p {
            Part::Whole | Part::Suffix => bo == bt,
            Part::Prefix | Part::Inner => bt.starts_with(bo),
        };
        if !ok {
            return None;
        }
        if !bo.is_empty() {
            pairs.push((lo, lt));
        }
    }
    (!pairs.is_empty()).then_some(pairs)
}

/// One non-empty string added to (or removed from) the start of every line.
fn uniform_shift(pairs: &[(&str, &str)]) -> bool {
    let (lo, lt) = pairs[0];
    let (file_more, s) = if lt.len() > lo.len() && lt.ends_with(lo) {
        (true, &lt[..lt.len() - lo.len()])
    } else if lo.len() > lt.len() && lo.ends_with(lt) {
        (false, &lo[..lo.len() - lt.len()])
    } else {
        return false;
    };
    pairs.iter().all(|&(lo, lt)| {
        let (long, short) = if file_more { (lt, lo) } else { (lo, lt) };
        long.len() == s.len() + short.len() && long.starts_with(s) && long.ends_with(short)
    })
}

/// Leading whitespace of equal visual width with one tab stop (2, 4 or 8),
/// differing somewhere.
fn same_width(pairs: &[(&str, &str)]) -> bool {
    pairs.iter().any(|(lo, lt)| lo != lt)
        && [2, 4, 8].into_iter().any(|stop| {
            pairs
                .iter()
                .all(|(lo, lt)| width(lo, stop) == width(lt, stop))
        })
}

fn width(lead: &str, stop: usize) -> usize {
    lead.bytes().fold(0, |col, b| {
        if b == b'\t' {
            (col / stop + 1) * stop
        } else {
            col + 1
        }
    })
}

fn is_blank(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\x0b' | '\x0c')
}

/// Runs of spaces/tabs collapsed to one space; the edges trimmed.
fn collapse(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for w in s.split(is_blank).filter(|w| !w.is_empty()) {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(w);
    }
    out
}

/// What a typographic character stands for in ASCII: Some("") drops it
/// (zero-width), None keeps the character.
fn ascii_form(c: char) -> Option<&'static str> {
    Some(match c {
        '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{2032}' | '\u{2035}' => "'",
        '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' | '\u{2033}' | '\u{2036}' => "\"",
        '\u{2012}' | '\u{2013}' | '\u{2014}' | '\u{2015}' | '\u{2212}' => "-",
        '\u{2026}' => "...",
        '\u{00A0}' | '\u{2007}' | '\u{202F}' => " ",
        '\u{200B}' | '\u{200C}' | '\u{200D}' | '\u{2060}' | '\u{FEFF}' => "",
        _ => return None,
    })
}

fn fold(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match ascii_form(c) {
            Some(a) => out.push_str(a),
            None => out.push(c),
        }
    }
    out
}

/// The text without any whitespace, typographic characters in ASCII: what
/// every normalized-exact kind leaves equal.
pub(super) fn skeleton(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    skeleton_into(s, &mut out);
    out
}

/// The characters of [`skeleton`], without building it (a long line's
/// copy would cost its size).
pub(super) fn skeleton_chars(s: &str) -> impl Iterator<Item = char> + Clone + '_ {
    s.chars().filter(|c| !c.is_whitespace()).flat_map(|c| {
        let (one, mapped) = match ascii_form(c) {
            Some(a) => (None, a),
            None => (Some(c), ""),
        };
        one.into_iter().chain(mapped.chars().filter(|c| *c != ' '))
    })
}

fn skeleton_into(s: &str, out: &mut String) {
    out.clear();
    if s.is_ascii() {
        // VT too: `is_ascii_whitespace` leaves it, while `char::is_whitespace`
        // (below) and `collapse` treat it as whitespace.
        out.extend(
            s.bytes()
                .filter(|b| !b.is_ascii_whitespace() && *b != 0x0b)
                .map(char::from),
        );
        return;
    }
    for c in s.chars() {
        if c.is_whitespace() {
            continue;
        }
        match ascii_form(c) {
            Some(a) => out.extend(a.chars().filter(|c| *c != ' ')),
            None => out.push(c),
        }
    }
}

/// OLD with literal `\n`, `\t`, `\"`, `\\` unescaped, if it holds any.
pub(super) fn unescape(old: &str) -> Option<String> {
    let mut out = String::with_capacity(old.len());
    let mut chars = old.chars();
    let mut changed = false;
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let mapped = match chars.clone().next() {
            Some('n') => '\n',
            Some('t') => '\t',
            Some('"') => '"',
            Some('\\') => '\\',
            _ => {
                out.push(c);
                continue;
            }
        };
        chars.next();
        out.push(mapped);
        changed = true;
    }
    (changed && !out.is_empty()).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hints::find;
    use crate::hints::tests::{expect, kinds, RS};
    use proptest::prelude::*;

    fn line_of(chars: &'static [char]) -> impl Strategy<Value = String> {
        proptest::collection::vec(proptest::sample::select(chars), 0..12)
            .prop_map(|v| v.into_iter().collect())
    }

    const CHARS: &[char] = &[
        'a', 'b', ' ', '\t', '\x0b', '.', '\u{2019}', '\u{200b}', '\u{a0}',
    ];

    proptest! {
        #![proptest_config(ProptestConfig { cases: 500, ..ProptestConfig::default() })]

        #[test]
        fn lines_holding_equals_the_lines_that_contain(
            pool in proptest::collection::vec(line_of(&['a', 'b', 'c', ' ']), 1..4),
            picks in proptest::collection::vec(0usize..4, 0..40),
            needle in "[abc]{1,3}",
        ) {
            // Few distinct lines, often repeated back to back.
            let lines: Vec<&str> = picks.iter().map(|&i| pool[i % pool.len()].as_str()).collect();
            let text = lines.join("\n");
            let mut want = Vec::new();
            let mut start = 0;
            for (i, l) in text.split('\n').enumerate() {
                if l.contains(needle.as_str()) {
                    want.push((i, start, start + l.len()));
                }
                start += l.len() + 1;
            }
            let got: Vec<(usize, usize, usize, bool)> = lines_holding(&text, &needle).collect();
            let spans: Vec<(usize, usize, usize)> = got.iter().map(|g| (g.0, g.1, g.2)).collect();
            prop_assert_eq!(spans, want);
            // A line said to repeat the one before it does.
            for pair in got.windows(2) {
                if pair[1].3 {
                    prop_assert_eq!(pair[1].0, pair[0].0 + 1);
                    prop_assert_eq!(&text[pair[1].1..pair[1].2], &text[pair[0].1..pair[0].2]);
                }
            }
        }

        #[test]
        fn offsets_of_the_run_tell_where_lines_and_old_are(
            text in "[ab\n]{0,300}",
            old in "[ab\n]{1,12}",
        ) {
            // Short alphabets: runs with borders (aba, aaa) overlap often.
            let (pieces, _) = crate::hints::split_pieces(&old);
            let (_, run) = anchor_run(&pieces);
            prop_assume!(!run.is_empty());
            let at: Vec<usize> = memmem::find_iter(text.as_bytes(), run.as_bytes()).collect();
            let off = run.as_ptr() as usize - old.as_ptr() as usize;
            prop_assert_eq!(
                occurs_around(&text, &old, run, off, &at),
                memmem::find(text.as_bytes(), old.as_bytes()).is_some()
            );
            let from_offsets: Vec<_> = lines_holding_at(&text, &at).collect();
            let searched: Vec<_> = lines_holding(&text, run).collect();
            prop_assert_eq!(from_offsets, searched);
        }

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
    fn already_applied() {
        expect(
            RS,
            "let x = 0;",
            "let x = 1;",
            Kind::AlreadyApplied,
            2,
            2,
            "    let x = 1;",
        );
        // With a newline at the end of NEW the text keeps it.
        expect(
            RS,
            "let x = 0;\n",
            "let x = 1;\n",
            Kind::AlreadyApplied,
            2,
            2,
            "    let x = 1;\n",
        );
        // Near miss: NEW does not occur either.
        assert!(!kinds(RS, "let x = 0;", "let x = 5;").contains(&Kind::AlreadyApplied));
        // An empty NEW (a deletion) never counts as applied.
        assert!(!kinds(RS, "let x = 0;", "").contains(&Kind::AlreadyApplied));
        // Deleting lines: NEW is the rest of OLD, in the file either way.
        // The real candidate (trailing spaces on line 2) is reported instead.
        let py = "def f():\n    debug()  \n    return x\n";
        expect(
            py,
            "    debug()\n    return x\n",
            "    return x\n",
            Kind::TrailingWhitespace,
            2,
            3,
            "    debug()  \n    return x\n",
        );
        assert!(!kinds(py, "    debug()\n    return x\n", "    return x\n")
            .contains(&Kind::AlreadyApplied));
    }

    #[test]
    fn trailing_whitespace() {
        expect(
            RS,
            "let x = 1;  \n    println!(\"{x}\");\t",
            "",
            Kind::TrailingWhitespace,
            2,
            3,
            "    let x = 1;\n    println!(\"{x}\");",
        );
        expect(
            RS,
            "let x = 1; ",
            "",
            Kind::TrailingWhitespace,
            2,
            2,
            "    let x = 1;",
        );
        // Near miss: the space is inside the line, where stripping does not reach.
        assert!(!kinds("x = 1 + y\n", "x = 1  ", "").contains(&Kind::TrailingWhitespace));
        assert!(!kinds(RS, "let x = 1 ;", "").contains(&Kind::TrailingWhitespace));
    }

    #[test]
    fn indentation() {
        let py = "class A:\n    def f(self):\n        return 1\n\n    def g(self):\n        pass\n";
        // OLD lost one level; its first line starts after the indentation.
        expect(
            py,
            "def f(self):\n    return 1",
            "",
            Kind::Indentation,
            2,
            3,
            "    def f(self):\n        return 1",
        );
        // OLD has one level too many, on every line, blank line kept.
        expect(
            py,
            "            return 1\n\n        def g(self):\n",
            "",
            Kind::Indentation,
            3,
            5,
            "        return 1\n\n    def g(self):\n",
        );
        // Near miss: the shift is not uniform (2 then 4 spaces): not indentation.
        let k = kinds(py, "  def f(self):\n    return 1", "");
        assert_eq!(k.first(), Some(&Kind::Whitespace), "{k:?}");
    }

    #[test]
    fn tabs() {
        let go = "func f() {\n\tif x {\n\t\treturn\n\t}\n}\n";
        expect(
            go,
            "    if x {\n        return\n    }",
            "",
            Kind::Tabs,
            2,
            4,
            "\tif x {\n\t\treturn\n\t}",
        );
        expect(
            go,
            "  if x {\n    return",
            "",
            Kind::Tabs,
            2,
            3,
            "\tif x {\n\t\treturn",
        );
        // Near miss: 3 spaces per tab is no tab stop.
        let k = kinds(go, "   if x {\n      return\n   }", "");
        assert!(!k.contains(&Kind::Tabs), "{k:?}");
        // A tab replacing a uniform shift is still tabs, not indentation.
        let k = kinds("\t\tx()\n\t\ty()\n", "        x()\n        y()", "");
        assert_eq!(k, vec![Kind::Tabs]);
    }

    #[test]
    fn whitespace() {
        let t = "let  x =  compute(a,  b);\nnext();\n";
        expect(
            t,
            "let x = compute(a, b);",
            "",
            Kind::Whitespace,
            1,
            1,
            "let  x =  compute(a,  b);",
        );
        expect(
            t,
            "x = compute(a, b);\n next();",
            "",
            Kind::Whitespace,
            1,
            2,
            "let  x =  compute(a,  b);\nnext();",
        );
        // Near miss: a space where the file has none is not a collapsed run.
        assert!(!kinds(t, "let x = compute(a, b) ;", "").contains(&Kind::Whitespace));
        // A vertical tab is whitespace in an ASCII line as in any other.
        let vt = "let total\x0b= compute(a);\nnext();\n";
        expect(
            vt,
            "let total = compute(a);",
            "",
            Kind::Whitespace,
            1,
            1,
            "let total\x0b= compute(a);",
        );
        assert_eq!(skeleton("a\x0bb"), "ab");
    }

    #[test]
    fn unicode_punctuation() {
        let t = "say(\u{201c}it\u{2019}s done\u{201d}) \u{2014} ok\u{2026}\nnext\n";
        expect(
            t,
            "say(\"it's done\") - ok...",
            "",
            Kind::UnicodePunctuation,
            1,
            1,
            "say(\u{201c}it\u{2019}s done\u{201d}) \u{2014} ok\u{2026}",
        );
        // Either side: ASCII file, typographic OLD with a NBSP and a zero-width space.
        let t = "x = \"a b\"\nnext\n";
        expect(
            t,
            "x\u{a0}= \u{201c}a b\u{201d}\u{200b}",
            "",
            Kind::UnicodePunctuation,
            1,
            1,
            "x = \"a b\"",
        );
        // A zero-width space inside a word of the file (the full scan).
        let t = "call(fo\u{200b}obar)\nnext\n";
        expect(
            t,
            "call(foobar)",
            "",
            Kind::UnicodePunctuation,
            1,
            1,
            "call(fo\u{200b}obar)",
        );
        // Near miss: guillemets are not mapped.
        assert!(!kinds(t, "x = \u{ab}a b\u{bb}", "").contains(&Kind::UnicodePunctuation));
    }

    #[test]
    fn escapes() {
        let t = "fn f() {\n\tlet s = \"a\\\\b\";\n}\n";
        expect(
            t,
            "fn f() {\\n\\tlet s = \\\"a\\\\\\\\b\\\";",
            "",
            Kind::Escapes,
            1,
            2,
            "fn f() {\n\tlet s = \"a\\\\b\";",
        );
        // Near miss: unescaped, OLD still does not occur.
        assert!(!kinds(t, "fn f() {\\n\\tlet s = 1;", "").contains(&Kind::Escapes));
        assert_eq!(unescape("no escapes \\x"), None);
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
