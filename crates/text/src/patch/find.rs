//! Where a chunk's lines occur in a file, grade by grade: pure (no I/O).
//!
//! Every chunk must prove its match unique in the rest of the file, so a
//! plain scan costs each chunk the lines after it: 20,000 chunks on a
//! 200,000-line file took 9.8 s. A [`Finder`] scans while that stays cheap
//! (up to about twice the file's lines per grade, so a patch of a few
//! chunks costs what it did), then sorts the line numbers by their text at
//! that grade once, and answers each search from the sorted index: the
//! pattern's rarest line in the open range (counted by binary search) gives
//! the candidate starts, each checked whole. The answer is the scan's,
//! start for start (the tests compare the two on random files).

use std::cmp::Ordering;

/// How loosely a chunk's old lines matched, strictest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Grade {
    /// Byte for byte.
    Exact,
    /// Ignoring whitespace at the end of lines.
    TrailingWhitespace,
    /// Ignoring whitespace at both ends of lines.
    Whitespace,
    /// Also with Unicode dashes, curly quotes and Unicode spaces as ASCII.
    Punctuation,
}

impl Grade {
    /// Every grade, strictest first: the order a search tries them in.
    pub(super) const ALL: [Grade; 4] = [
        Grade::Exact,
        Grade::TrailingWhitespace,
        Grade::Whitespace,
        Grade::Punctuation,
    ];

    /// The loosest grade a search may match at: exact only when `strict`
    /// (`--patch-strict`).
    pub(super) fn loosest(strict: bool) -> Grade {
        match strict {
            true => Grade::Exact,
            false => Grade::Punctuation,
        }
    }

    /// The name in `--report` (`"match"`).
    #[cfg_attr(as_edit_small, optimize(size))]
    pub fn name(self) -> &'static str {
        match self {
            Grade::Exact => "exact",
            Grade::TrailingWhitespace => "trailing_whitespace",
            Grade::Whitespace => "whitespace",
            Grade::Punctuation => "punctuation",
        }
    }
}

/// A file's lines and, per grade, how much scanning it has cost and the
/// index once built.
pub(super) struct Finder<'t> {
    lines: &'t [&'t str],
    /// Per grade: the line numbers sorted by (text at that grade, number).
    index: [Option<Vec<u32>>; 4],
    /// Per grade: candidate starts scanned so far.
    scanned: [usize; 4],
    /// Scanning at a grade past this many starts builds its index.
    budget: usize,
    /// Candidate starts checked plus lines indexed: the work done, which
    /// the tests bound.
    pub(super) work: usize,
}

impl<'t> Finder<'t> {
    pub(super) fn new(lines: &'t [&'t str]) -> Self {
        Finder::with_budget(lines, 2 * lines.len() + 64)
    }

    pub(super) fn with_budget(lines: &'t [&'t str], budget: usize) -> Self {
        Finder {
            lines,
            index: [None, None, None, None],
            scanned: [0; 4],
            budget,
            work: 0,
        }
    }

    /// The file's line count.
    pub(super) fn len(&self) -> usize {
        self.lines.len()
    }

    /// The first of `grades` with any start of `pat` at or after `from`
    /// (only the last possible one with `eof`), and its starts in order, at
    /// most `limit` of them.
    #[cfg_attr(as_edit_small, optimize(size))]
    pub(super) fn find(
        &mut self,
        pat: &[String],
        from: usize,
        eof: bool,
        grades: &[Grade],
        limit: usize,
    ) -> Option<(Grade, Vec<usize>)> {
        let lines = self.lines;
        let last = lines.len().checked_sub(pat.len())?;
        let first = if eof { last.max(from) } else { from };
        if first > last {
            return None;
        }
        let at = |i: usize, g| pat.iter().zip(&lines[i..]).all(|(p, l)| same(l, p, g));
        for &g in grades {
            let mut hits = Vec::new();
            let gi = g as usize;
            let span = last + 1 - first;
            let small = self.scanned[gi] + span <= self.budget || lines.len() > u32::MAX as usize;
            if pat.is_empty() || self.index[gi].is_none() && small {
                for i in first..=last {
                    self.work += 1;
                    self.scanned[gi] += 1;
                    if at(i, g) {
                        hits.push(i);
                        if hits.len() == limit {
                            break;
                        }
                    }
                }
            } else {
                if self.index[gi].is_none() {
                    let mut v: Vec<u32> = (0..lines.len() as u32).collect();
                    // Stable: equal texts stay in line order.
                    v.sort_by(|&a, &b| order(lines[a as usize], lines[b as usize], g));
                    self.work += v.len();
                    self.index[gi] = Some(v);
                }
                let index = self.index[gi].as_deref().expect("built");
                // Where pattern line j's text is in the index, on lines
                // [lo, hi).
                let range = |j: usize, lo: usize, hi: usize| {
                    let key = pat[j].as_str();
                    let before = |n: usize| {
                        index.partition_point(|&i| match order(lines[i as usize], key, g) {
                            Ordering::Less => true,
                            Ordering::Equal => (i as usize) < n,
                            Ordering::Greater => false,
                        })
                    };
                    before(lo)..before(hi)
                };
                self.work += pat.len();
                // The rarest line anchors the candidates.
                let (j, r) = (0..pat.len())
                    .map(|j| (j, range(j, first + j, last + j + 1)))
                    .min_by_key(|(_, r)| r.len())
                    .expect("a line");
                for &q in &index[r] {
                    self.work += 1;
                    let i = q as usize - j;
                    if at(i, g) {
                        hits.push(i);
                        if hits.len() == limit {
                            break;
                        }
                    }
                }
            }
            if !hits.is_empty() {
                return Some((g, hits));
            }
        }
        None
    }
}

/// Whether line `a` of the file is `b` of the patch at grade `g`.
#[cfg_attr(as_edit_small, optimize(size))]
pub(super) fn same(a: &str, b: &str, g: Grade) -> bool {
    order(a, b, g) == Ordering::Equal
}

/// The strictest grade, up to `max`, at which line `a` of the file is `b`
/// of the patch (the grades nest: a match at one is a match at every
/// looser one).
#[inline(always)] // the pass calls it per line (and per busy chunk)
pub(super) fn best(a: &[u8], b: &str, max: Grade) -> Option<Grade> {
    match (a == b.as_bytes(), max) {
        (true, _) => Some(Grade::Exact),
        (false, Grade::Exact) => None,
        _ => loose(a, b, max),
    }
}

#[inline(never)] // per line: compiled for speed, not size
fn loose(a: &[u8], b: &str, max: Grade) -> Option<Grade> {
    // Most lines match at no grade, and most say so at their first
    // difference: cores (blanks trimmed as `trim` does) ending in ASCII
    // are the trimmed texts, and two ASCII characters after equal bytes
    // (or one text's end) differ at every grade, which maps no ASCII.
    let (x, y) = (core(a), core(b.as_bytes()));
    let ascii = |c: Option<&u8>| c.is_none_or(u8::is_ascii);
    if [x.first(), x.last(), y.first(), y.last()]
        .into_iter()
        .all(ascii)
    {
        let i = x.iter().zip(y).take_while(|(p, q)| p == q).count();
        if (x.len() != i || y.len() != i) && ascii(x.get(i)) && ascii(y.get(i)) {
            return None;
        }
    }
    let a = std::str::from_utf8(a).ok()?;
    if !same(a, b, max) {
        return None;
    }
    let looser = [Grade::TrailingWhitespace, Grade::Whitespace];
    Some(looser.into_iter().find(|&g| same(a, b, g)).unwrap_or(max))
}

/// `b` without the ASCII whitespace `char::is_whitespace` trims at its
/// ends (tab to carriage return, space).
fn core(b: &[u8]) -> &[u8] {
    let text = |c: &u8| !matches!(c, b'\t'..=b'\r' | b' ');
    let i = b.iter().position(text).unwrap_or(b.len());
    let j = b.iter().rposition(text).map_or(i, |j| j + 1);
    &b[i..j]
}

/// A lower bound of the characters left in line `b` (or a prefix of it)
/// once trimmed: its characters that are not whitespace (one cut at the
/// end of the prefix is not counted). A line whose count exceeds
/// every patch line's length matches none at any grade, since the grades
/// map characters one for one.
#[cfg_attr(as_edit_small, optimize(size))]
pub(super) fn core_chars(b: &[u8]) -> usize {
    (b.utf8_chunks())
        .map(|c| c.valid().chars().filter(|c| !c.is_whitespace()).count())
        .sum()
}

/// The order of two lines' texts at grade `g` (equal: they match).
#[cfg_attr(as_edit_small, optimize(size))]
fn order(a: &str, b: &str, g: Grade) -> Ordering {
    match g {
        Grade::Exact => a.cmp(b),
        Grade::TrailingWhitespace => a.trim_end().cmp(b.trim_end()),
        Grade::Whitespace => a.trim().cmp(b.trim()),
        Grade::Punctuation => (a.trim().chars().map(ascii)).cmp(b.trim().chars().map(ascii)),
    }
}

/// The Unicode punctuation models and editors swap for ASCII (the set the
/// reference appliers map).
#[cfg_attr(as_edit_small, optimize(size))]
pub(super) fn ascii(c: char) -> char {
    match c {
        '\u{2010}'..='\u{2015}' | '\u{2212}' => '-',
        '\u{2018}'..='\u{201B}' => '\'',
        '\u{201C}'..='\u{201F}' => '"',
        '\u{00A0}' | '\u{2002}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => ' ',
        c => c,
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// xorshift: the tests' own small generator (no seed file to keep;
    /// `stream`'s tests take it too).
    pub(in crate::patch) fn rng(seed: u64) -> impl FnMut(usize) -> usize {
        let mut x = seed | 1;
        move |n| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % n as u64) as usize
        }
    }

    /// `best` is the strictest grade at which `same` matches, on lines of
    /// words with blanks (VT and NBSP too), quotes and dashes at the ends
    /// and inside, ASCII or not.
    #[test]
    fn best_is_the_first_grade_that_matches() {
        let parts = [
            "", " ", "\t", "\u{b}", "\u{a0}", "\u{3000}", "a", "b", "-", "\u{2013}", "\"",
            "\u{201C}", "x y", "x\u{a0}y", "\r", "\u{1c}", "\u{85}",
        ];
        let grades = [
            Grade::Exact,
            Grade::TrailingWhitespace,
            Grade::Whitespace,
            Grade::Punctuation,
        ];
        let mut r = rng(0xbe57);
        let line = |r: &mut dyn FnMut(usize) -> usize| -> String {
            (0..r(5)).map(|_| parts[r(parts.len())]).collect()
        };
        let mut loose = 0;
        for _ in 0..200_000 {
            let (a, b) = (line(&mut r), line(&mut r));
            let max = grades[r(4)];
            let want = grades[..=max as usize]
                .iter()
                .copied()
                .find(|&g| same(&a, &b, g));
            assert_eq!(best(a.as_bytes(), &b, max), want, "{a:?} {b:?} {max:?}");
            loose += usize::from(want.is_some_and(|g| g > Grade::Exact));
        }
        assert!(loose > 5_000, "{loose}");
    }

    /// The index answers every search as the scan does, start for start,
    /// at every grade, with limits, `eof` and every starting point, on
    /// files of few distinct lines (many candidates) and their damaged
    /// variants (trailing and leading blanks, curly quotes, dashes).
    #[test]
    fn the_index_answers_as_the_scan_does() {
        let words = ["a", "b", "x = 1", "}", "", "say(\"hi\")", "a - b"];
        let damage = ["", " ", "\t", "  "];
        let mut r = rng(0x5eed);
        let mut checked = 0;
        for _ in 0..300 {
            let n = r(40);
            let texts: Vec<String> = (0..n)
                .map(|_| {
                    let mut w = words[r(words.len())].to_owned();
                    match r(6) {
                        0 => w = format!("{}{w}", damage[r(4)]),
                        1 => w.push_str(damage[r(4)]),
                        2 => w = w.replace('"', "\u{201C}").replace('-', "\u{2013}"),
                        _ => {}
                    }
                    w
                })
                .collect();
            let lines: Vec<&str> = texts.iter().map(String::as_str).collect();
            let grades = [
                Grade::Exact,
                Grade::TrailingWhitespace,
                Grade::Whitespace,
                Grade::Punctuation,
            ];
            let mut scan = Finder::with_budget(&lines, usize::MAX);
            let mut index = Finder::with_budget(&lines, 0);
            for _ in 0..20 {
                let m = 1 + r(3);
                let pat: Vec<String> = (0..m).map(|_| words[r(words.len())].to_owned()).collect();
                let (from, eof, limit) = (r(n + 2), r(4) == 0, [1, 2, usize::MAX][r(3)]);
                let g = &grades[r(4)..];
                let want = scan.find(&pat, from, eof, g, limit);
                assert_eq!(
                    index.find(&pat, from, eof, g, limit),
                    want,
                    "{lines:?} {pat:?} {from} {eof}"
                );
                checked += usize::from(want.is_some());
            }
        }
        assert!(checked > 1000, "only {checked} searches found anything");
    }
}
