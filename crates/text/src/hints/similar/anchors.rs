//! Where `similar` looks: OLD's anchor keys, where they occur in the
//! text (the rarest chosen), and finding a line's start from there.

use memchr::memmem;

use super::super::exact::has_border;
use super::super::ANCHOR_LINES_MAX;

fn is_token_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

fn tokens(s: &str) -> impl Iterator<Item = &str> {
    s.split(|c: char| !is_token_char(c))
        .filter(|t| t.chars().nth(1).is_some())
}

/// Anchor keys of a piece of OLD: its tokens, and for tokens of 4
/// characters or more also their first and last 3, so a typo inside OLD's
/// one distinctive token still finds its line.
pub(super) fn anchor_keys(s: &str) -> impl Iterator<Item = &str> {
    tokens(s).flat_map(|t| {
        let mut ends = None;
        if let (Some((p, _)), Some((q, _))) =
            (t.char_indices().nth(3), t.char_indices().rev().nth(2))
        {
            ends = Some([&t[..p], &t[q..]]);
        }
        std::iter::once(t).chain(ends.into_iter().flatten())
    })
}

/// The offset just past the `n`-th newline from `off` (the start of the
/// line `n` lines further), or the end of `b`. Newlines are counted a block
/// at a time, not found one by one.
fn skip_lines(b: &[u8], mut off: usize, mut n: usize) -> usize {
    const BLOCK: usize = 2048;
    while n > 0 && off < b.len() {
        let end = (off + BLOCK).min(b.len());
        let c = memchr::memchr_iter(b'\n', &b[off..end]).count();
        if c >= n {
            let i = memchr::memchr_iter(b'\n', &b[off..end])
                .nth(n - 1)
                .expect("counted");
            return off + i + 1;
        }
        n -= c;
        off = end;
    }
    if n > 0 {
        b.len()
    } else {
        off
    }
}

/// The keys that anchor, from (key, number of offsets) pairs: those with
/// offsets, rarest first (ties in key order, so the answer is
/// deterministic); the first always, then each while all their offsets
/// still fit in [`ANCHOR_LINES_MAX`] (more common keys add little: the
/// rarest carry the signal). Also the first key that did not fit, as
/// (count, key): no key after it in that order counts.
pub(super) fn chosen(
    counts: impl Iterator<Item = (usize, usize)>,
) -> (Vec<usize>, Option<(usize, usize)>) {
    chosen_within(counts, ANCHOR_LINES_MAX)
}

/// [`chosen`] with `max` anchors (tests use small ones).
fn chosen_within(
    counts: impl Iterator<Item = (usize, usize)>,
    max: usize,
) -> (Vec<usize>, Option<(usize, usize)>) {
    let mut order: Vec<(usize, usize)> = Vec::new();
    for (n, c) in counts {
        insert_sorted(&mut order, (c, n));
    }
    let mut keys = Vec::new();
    let misfit = walk_chosen(&order, max, |n| keys.push(n));
    (keys, misfit)
}

/// Inserts `x` into the sorted `v` (a few dozen keys: no sort needed).
fn insert_sorted(v: &mut Vec<(usize, usize)>, x: (usize, usize)) {
    let at = v.partition_point(|&y| y < x);
    v.insert(at, x);
}

/// [`chosen_within`] over (count, key) pairs already in order: calls
/// `take` with each chosen key and returns the first that did not fit.
fn walk_chosen(
    order: &[(usize, usize)],
    max: usize,
    mut take: impl FnMut(usize),
) -> Option<(usize, usize)> {
    let (mut taken, mut anchors) = (false, 0);
    for &(count, n) in order.iter().filter(|c| c.0 > 0) {
        if taken && anchors + count > max {
            return Some((count, n));
        }
        anchors += count.min(max);
        taken = true;
        take(n);
    }
    None
}

/// For each key, its offsets in `b` as `memmem::find_iter(b, key)
/// .take(cap)` yields them (non-overlapping, left to right), as ranges of
/// one flat vector; the keys that cannot anchor are cut short. Two savings,
/// each a pass over the text per key:
/// - a key holding a shorter key whose scan ended before the cap is not
///   scanned for: it occurs only where that one does, at a fixed distance,
///   and each of those places is checked (`value_301` after `301`). The
///   scan skips occurrences that overlap the one before (`303` at 2 in
///   `30303`); those start within the one before it, so for a key with a
///   border (a prefix that is also its suffix) each place up to its length
///   after a found one is checked too;
/// - once the keys known so far have a first key that does not fit (see
///   [`chosen`]), a key whose count would sort it after that one cannot
///   anchor (keys found later only add before it), so its scan stops at
///   that count instead of at `cap`; and it is not scanned at all when it
///   lies inside `floor`, a string with at least that many non-overlapping
///   occurrences (each holds one of the key's, and those do not overlap
///   either): its count is then given as that many, with no offsets.
///
/// So [`chosen`] picks the same keys with the same offsets as from one
/// full scan per key (a property test holds them equal). Returns the
/// offsets, each key's range of them, and each key's count.
pub(super) fn key_offsets(
    b: &[u8],
    keys: &[&[u8]],
    cap: usize,
    max: usize,
    floor: Option<(&[u8], usize)>,
) -> (Vec<usize>, Vec<std::ops::Range<usize>>, Vec<usize>) {
    let n = keys.len();
    let mut flat: Vec<usize> = Vec::with_capacity(n * cap);
    let mut ranges = vec![0..0; n];
    let mut counts = vec![0; n];
    // Shorter keys first: they are the ones longer keys hold.
    let mut order: Vec<(usize, usize)> = Vec::with_capacity(n);
    for (i, k) in keys.iter().enumerate() {
        insert_sorted(&mut order, (k.len(), i));
    }
    // The keys whose offsets are all known (up to `cap`), with their
    // counts; and of those, the ones whose scan reached the end.
    // (count, key), kept in order.
    let mut known: Vec<(usize, usize)> = Vec::with_capacity(n);
    let mut complete: Vec<usize> = Vec::new();
    for (_, i) in order {
        let key = keys[i];
        // Past this many, the key sorts after the first that does not fit.
        let stop = match walk_chosen(&known, max, |_| {}) {
            Some((count, j)) => (count + usize::from(i < j)).min(cap),
            None => cap,
        };
        let from = flat.len();
        if stop < cap {
            if let Some((outer, at_least)) = floor {
                if at_least >= stop && memmem::find(outer, key).is_some() {
                    ranges[i] = from..from;
                    counts[i] = stop;
                    continue;
                }
            }
        }
        // The known key inside this one with the fewest occurrences.
        let inner = complete
            .iter()
            .filter(|&&j| keys[j].len() < key.len())
            .filter_map(|&j| memmem::find(key, keys[j]).map(|at| (ranges[j].len(), j, at)))
            .min();
        match inner {
            Some((_, j, at)) => {
                let within = if has_border(keys[j]) {
                    keys[j].len()
                } else {
                    1
                };
                for t in ranges[j].clone() {
                    let q = flat[t];
                    for p in q..q + within {
                        push_if_at(b, key, p.checked_sub(at), stop, from, &mut flat);
                    }
                }
            }
            None => flat.extend(memmem::find_iter(b, key).take(stop)),
        }
        ranges[i] = from..flat.len();
        let count = flat.len() - from;
        counts[i] = count;
        if count < stop || stop == cap {
            insert_sorted(&mut known, (count, i));
            if count < stop {
                complete.push(i);
            }
        }
    }
    (flat, ranges, counts)
}

/// Appends `p` when `key` occurs there, does not overlap the last offset
/// appended since `from`, and fewer than `cap` are appended: the candidates
/// come left to right, so this keeps what memmem's `find_iter` finds.
fn push_if_at(
    b: &[u8],
    key: &[u8],
    p: Option<usize>,
    cap: usize,
    from: usize,
    flat: &mut Vec<usize>,
) {
    let Some(p) = p else { return };
    if flat.len() - from >= cap
        || flat[from..]
            .last()
            .is_some_and(|&last| p < last + key.len())
    {
        return;
    }
    if b.get(p..p + key.len()) == Some(key) {
        flat.push(p);
    }
}

/// The start of line `target`, from line `at.0` starting at `at.1` (before
/// it) and `marks`, (line, start) pairs in line order: walks back from the
/// first mark at or after the target when that is nearer, else counts
/// forward. The end of `b` when the text has fewer lines.
pub(super) fn seek_line(
    b: &[u8],
    at: (usize, usize),
    target: usize,
    marks: &[(usize, usize)],
) -> usize {
    let next = marks.partition_point(|m| m.0 < target);
    if let Some(&(line, mut start)) = marks.get(next) {
        if line - target < target - at.0 {
            for _ in target..line {
                start = memchr::memrchr(b'\n', &b[..start - 1]).map_or(0, |i| i + 1);
            }
            return start;
        }
    }
    skip_lines(b, at.1, target - at.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 500, ..ProptestConfig::default() })]

        #[test]
        fn key_offsets_choose_as_one_scan_per_key(
            text in "[ab_1\n]{0,400}",
            keys in proptest::collection::vec("[ab_1]{1,6}", 1..10),
            cap in 1usize..40,
            max in 1usize..60,
            floor in any::<bool>(),
        ) {
            // Keys holding one another, some with borders (aba, aaa).
            let mut keys = keys;
            let extra: Vec<String> = keys.iter().map(|k| format!("{k}{k}b")).collect();
            keys.extend(extra);
            let key_bytes: Vec<&[u8]> = keys.iter().map(|k| k.as_bytes()).collect();
            // A string holding some keys (one of the longer ones), with its
            // count as their floor.
            let outer = keys[keys.len() - 1].clone();
            let at_least = memmem::find_iter(text.as_bytes(), outer.as_bytes()).count();
            let floor = floor.then_some((outer.as_bytes(), at_least));
            let (flat, ranges, counts) = key_offsets(text.as_bytes(), &key_bytes, cap, max, floor);
            let scans: Vec<Vec<usize>> = keys
                .iter()
                .map(|k| memmem::find_iter(text.as_bytes(), k.as_bytes()).take(cap).collect())
                .collect();
            // Each key's offsets are the scan's first ones.
            for (r, scan) in ranges.iter().zip(&scans) {
                prop_assert!(scan.starts_with(&flat[r.clone()]));
            }
            // The same keys anchor, with all their offsets.
            let fast = chosen_within(counts.iter().copied().enumerate(), max).0;
            let full = chosen_within(scans.iter().map(|s| s.len()).enumerate(), max).0;
            prop_assert_eq!(&fast, &full);
            for i in fast {
                prop_assert_eq!(&flat[ranges[i].clone()], scans[i].as_slice(), "{:?}", &keys[i]);
            }
        }

        #[test]
        fn seek_line_equals_counting_forward(text in "[a\n]{0,3000}", from in 0usize..200, target in 0usize..400, picks in proptest::collection::vec(0usize..400, 0..20)) {
            let b = text.as_bytes();
            let starts: Vec<usize> = std::iter::once(0).chain(memchr::memchr_iter(b'\n', b).map(|i| i + 1)).collect();
            prop_assume!(from < target && from < starts.len());
            // Marks: true line starts of some lines, in order.
            let mut picks: Vec<usize> = picks.into_iter().filter(|&l| l < starts.len()).collect();
            picks.sort_unstable();
            picks.dedup();
            let marks: Vec<(usize, usize)> = picks.iter().map(|&l| (l, starts[l])).collect();
            let want = skip_lines(b, starts[from], target - from);
            prop_assert_eq!(seek_line(b, (from, starts[from]), target, &marks), want);
        }

        #[test]
        fn skip_lines_equals_one_newline_at_a_time(text in "[a\n]{0,5000}", off in 0usize..5000, n in 1usize..3000) {
            let b = text.as_bytes();
            let off = off.min(b.len());
            let want = memchr::memchr_iter(b'\n', &b[off..]).nth(n - 1).map_or(b.len(), |i| off + i + 1);
            prop_assert_eq!(skip_lines(b, off, n), want);
        }
    }
}
