//! Where the normalized-exact scan looks: OLD's anchor run (the longest
//! run of characters no kind changes), its offsets, the lines holding it,
//! and the byte helpers the scan and `similar` share.

use memchr::memmem;

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
pub(super) fn lines_holding<'a>(
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
pub(super) fn lines_holding_at<'a>(
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

/// The run `exact_windows` anchors on: the longest run of characters no
/// kind changes in any piece (the first piece's on ties), with its piece.
pub(in crate::hints) fn anchor_run<'a>(pieces: &[&'a str]) -> (usize, &'a str) {
    (0..pieces.len())
        .map(|j| (j, stable_run(pieces[j])))
        .max_by_key(|(j, r)| (r.len(), usize::MAX - j))
        .expect("OLD has a piece")
}

/// Searched for once ahead, the run's offsets are kept while there are
/// fewer than this many (then they tell whether OLD occurs, and which lines
/// anchor, without another pass).
pub(in crate::hints) const RUN_OFFSETS_MAX: usize = 512;

/// All non-overlapping offsets of `run`, left to right, when fewer than
/// [`RUN_OFFSETS_MAX`].
pub(in crate::hints) fn run_offsets(text: &str, run: &str) -> Option<Vec<usize>> {
    let mut at: Vec<usize> = Vec::with_capacity(RUN_OFFSETS_MAX);
    at.extend(memmem::find_iter(text.as_bytes(), run.as_bytes()).take(RUN_OFFSETS_MAX));
    (at.len() < RUN_OFFSETS_MAX).then_some(at)
}

/// Whether `old` occurs in `text`, from all non-overlapping offsets of
/// `run`, which is `old`'s part at `off`: an occurrence of `old` holds one
/// of `run` there. A scan skips the occurrences that overlap the one before;
/// those start within it, so for a run with a border each place up to its
/// length after a found one is checked too.
pub(in crate::hints) fn occurs_around(
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
pub(in crate::hints) fn has_border(s: &[u8]) -> bool {
    (1..s.len()).any(|l| s[..l] == s[s.len() - l..])
}

/// `a == b`, eight bytes at a time (the static binary's `memcmp` goes
/// byte by byte).
pub(in crate::hints) fn same_bytes(a: &[u8], b: &[u8]) -> bool {
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
pub(super) fn line_spans(text: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hints::exact::tests::line_of;
    use proptest::prelude::*;

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

    }
}
