//! The whole-text line diff of a batch: [`unified`], Myers with its step
//! bound, and the one-hunk fallback for spans too long for line tables.

use super::{into_string, push_capped, range};

/// Myers step bound for [`unified`] (whole texts of a batch).
const MAX_EDIT_STEPS: usize = 2000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Op {
    Same,
    Del,
    Add,
}

/// Splits into lines, each keeping its `\n` (the last may lack one).
fn lines(s: &str) -> Vec<&str> {
    s.split_inclusive('\n').collect()
}

/// The unified diff of `old` → `new` with `context` lines, at most `cap`
/// bytes (cut at a line end). Returns the text and whether it was cut.
/// Only the span from the first to the last differing line (plus context)
/// is split into lines: the line tables grow with that span, not the file.
#[cfg_attr(as_edit_small, optimize(size))]
pub fn unified(old: &str, new: &str, name: &str, context: usize, cap: usize) -> (String, bool) {
    let (o, n) = (old.as_bytes(), new.as_bytes());
    let pre = o.iter().zip(n).take_while(|(x, y)| x == y).count();
    // Back to the start of the first differing line, then `context` more.
    let first = memchr::memrchr(b'\n', &o[..pre]).map_or(0, |p| p + 1);
    let (mut start, mut skipped) = (first, memchr::memchr_iter(b'\n', &o[..first]).count());
    for _ in 0..context {
        if start == 0 {
            break;
        }
        start = memchr::memrchr(b'\n', &o[..start - 1]).map_or(0, |p| p + 1);
        skipped -= 1;
    }
    // The suffix may not reach back into the common leading lines.
    let max_suf = o.len().min(n.len()) - first;
    let suf = o
        .iter()
        .rev()
        .zip(n.iter().rev())
        .take(max_suf)
        .take_while(|(x, y)| x == y)
        .count();
    // The common suffix from a line start in both texts, then `context` more.
    let (mut eo, mut en) = (o.len() - suf, n.len() - suf);
    let at_line_start = |t: &[u8], i: usize| i == first || t[i - 1] == b'\n';
    if !(at_line_start(o, eo) && at_line_start(n, en)) {
        let step = memchr::memchr(b'\n', &o[eo..]).map_or(o.len() - eo, |p| p + 1);
        eo += step;
        en += step;
    }
    for _ in 0..context {
        let step = memchr::memchr(b'\n', &o[eo..]).map_or(o.len() - eo, |p| p + 1);
        eo += step;
        en += step;
    }
    // All cuts are just after a `\n` (or at an end), so on char boundaries.
    unified_span(
        &old[start..eo],
        &new[start..en],
        name,
        context,
        cap,
        skipped as u64,
    )
}

/// A changed span longer than this (in lines, either side) is shown as one
/// hunk, written straight into the capped output: no line tables.
const BIG_SPAN_LINES: usize = 64 * 1024;

/// Iterates the lines of `t`, each with its `\n` (the last may lack one).
fn byte_lines(t: &[u8]) -> impl DoubleEndedIterator<Item = &[u8]> {
    t.split_inclusive(|c| *c == b'\n')
}

/// The diff of a span too long to compare line by line, in constant memory
/// besides the output: the common leading and trailing lines as context
/// (at most `context` after), every other old line removed, every other new
/// line added, as one hunk; written line by line into at most `cap` bytes.
#[cfg_attr(as_edit_small, optimize(size))]
fn one_hunk(
    old: &[u8],
    new: &[u8],
    name: &str,
    context: usize,
    cap: usize,
    offset: u64,
) -> (String, bool) {
    let count = |t: &[u8]| byte_lines(t).count();
    let (na, nb) = (count(old), count(new));
    let pre = byte_lines(old)
        .zip(byte_lines(new))
        .take_while(|(x, y)| x == y)
        .count();
    let suf = byte_lines(old)
        .rev()
        .zip(byte_lines(new).rev())
        .take(na.min(nb) - pre)
        .take_while(|(x, y)| x == y)
        .count();
    if pre == na && pre == nb {
        return (String::new(), false);
    }
    let after = suf.min(context);
    let (ma, mb) = (na - pre - suf, nb - pre - suf);
    let mut out = Vec::new();
    let head = format!(
        "--- {name}\n+++ {name}\n@@ -{} +{} @@\n",
        range(offset, (pre + ma + after) as u64),
        range(offset, (pre + mb + after) as u64)
    );
    let mut fits = push_capped(&mut out, head.as_bytes(), cap);
    let mut piece = Vec::new();
    let shown = byte_lines(old)
        .take(pre)
        .map(|l| (b' ', l))
        .chain(byte_lines(old).skip(pre).take(ma).map(|l| (b'-', l)))
        .chain(byte_lines(new).skip(pre).take(mb).map(|l| (b'+', l)))
        .chain(
            byte_lines(old)
                .skip(pre + ma)
                .take(after)
                .map(|l| (b' ', l)),
        );
    for (mark, line) in shown {
        if !fits {
            break;
        }
        piece.clear();
        piece.push(mark);
        piece.extend_from_slice(line);
        if line.last() != Some(&b'\n') {
            piece.extend_from_slice(b"\n\\ No newline at end of file\n");
        }
        fits = push_capped(&mut out, &piece, cap);
    }
    (into_string(out), !fits)
}

/// [`unified`] of two spans that start at line `offset` (0-based) of both texts.
#[cfg_attr(as_edit_small, optimize(size))]
fn unified_span(
    old: &str,
    new: &str,
    name: &str,
    context: usize,
    cap: usize,
    offset: u64,
) -> (String, bool) {
    let many = |t: &str| memchr::memchr_iter(b'\n', t.as_bytes()).count() > BIG_SPAN_LINES;
    if many(old) || many(new) {
        return one_hunk(old.as_bytes(), new.as_bytes(), name, context, cap, offset);
    }
    let (a, b) = (lines(old), lines(new));
    let script = edit_script(&a, &b, MAX_EDIT_STEPS);
    let mut out = String::new();
    if script.iter().all(|(op, _, _)| *op == Op::Same) {
        return (out, false);
    }
    out.push_str(&format!("--- {name}\n+++ {name}\n"));
    // Group changes into hunks with `context` lines around them.
    let n = script.len();
    let mut i = 0;
    while i < n {
        if script[i].0 == Op::Same {
            i += 1;
            continue;
        }
        let start = i.saturating_sub(context);
        let mut end = i;
        // Extend while the next change is within 2*context same lines.
        loop {
            while end < n && script[end].0 != Op::Same {
                end += 1;
            }
            let mut j = end;
            while j < n && script[j].0 == Op::Same && j - end < 2 * context {
                j += 1;
            }
            if j < n && script[j].0 != Op::Same {
                end = j;
                continue;
            }
            end = (end + context).min(n);
            break;
        }
        let hunk = &script[start..end];
        let (a0, b0) = (hunk[0].1, hunk[0].2);
        let a_len = hunk.iter().filter(|h| h.0 != Op::Add).count();
        let b_len = hunk.iter().filter(|h| h.0 != Op::Del).count();
        out.push_str(&format!(
            "@@ -{} +{} @@\n",
            range(offset + a0 as u64, a_len as u64),
            range(offset + b0 as u64, b_len as u64)
        ));
        for &(op, ai, bi) in hunk {
            let (mark, text) = match op {
                Op::Same => (' ', a[ai]),
                Op::Del => ('-', a[ai]),
                Op::Add => ('+', b[bi]),
            };
            out.push(mark);
            out.push_str(text);
            if !text.ends_with('\n') {
                out.push_str("\n\\ No newline at end of file\n");
            }
        }
        i = end;
        if out.len() > cap {
            break; // the rest would be cut anyway
        }
    }
    let mut capped = Vec::new();
    let cut = !push_capped(&mut capped, out.as_bytes(), cap);
    (into_string(capped), cut)
}

/// (op, index in a, index in b) for every line, in order. For `Add` the a
/// index is the position the insertion happens at; for `Del` likewise for b.
#[cfg_attr(as_edit_small, optimize(size))]
pub(super) fn edit_script<T: PartialEq>(
    a: &[T],
    b: &[T],
    max_steps: usize,
) -> Vec<(Op, usize, usize)> {
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..]
        .iter()
        .rev()
        .zip(b[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (am, bm) = (&a[prefix..a.len() - suffix], &b[prefix..b.len() - suffix]);
    let mut script: Vec<(Op, usize, usize)> = (0..prefix).map(|i| (Op::Same, i, i)).collect();
    let middle = myers(am, bm, max_steps).unwrap_or_else(|| {
        let mut m: Vec<Op> = vec![Op::Del; am.len()];
        m.extend(std::iter::repeat_n(Op::Add, bm.len()));
        m
    });
    let (mut ai, mut bi) = (prefix, prefix);
    for op in middle {
        script.push((op, ai, bi));
        match op {
            Op::Same => {
                ai += 1;
                bi += 1;
            }
            Op::Del => ai += 1,
            Op::Add => bi += 1,
        }
    }
    for k in 0..suffix {
        script.push((Op::Same, ai + k, bi + k));
    }
    script
}

/// Myers' greedy shortest edit script; None past `max_steps`.
#[cfg_attr(as_edit_small, optimize(size))]
fn myers<T: PartialEq>(a: &[T], b: &[T], max_steps: usize) -> Option<Vec<Op>> {
    let (n, m) = (a.len() as isize, b.len() as isize);
    let max = ((n + m) as usize).min(max_steps) as isize;
    let off = max + 1;
    let mut v = vec![0isize; 2 * off as usize + 1];
    let mut trace: Vec<Vec<isize>> = Vec::new();
    for d in 0..=max {
        // Keep only the diagonals this step can reach.
        trace.push(v[(off - d) as usize..=(off + d) as usize].to_vec());
        let mut k = -d;
        while k <= d {
            let mut x =
                if k == -d || (k != d && v[(off + k - 1) as usize] < v[(off + k + 1) as usize]) {
                    v[(off + k + 1) as usize]
                } else {
                    v[(off + k - 1) as usize] + 1
                };
            let mut y = x - k;
            while x < n && y < m && a[x as usize] == b[y as usize] {
                x += 1;
                y += 1;
            }
            v[(off + k) as usize] = x;
            if x >= n && y >= m {
                return Some(backtrack(&trace, n, m, d));
            }
            k += 2;
        }
    }
    None
}

/// Walks the trace back from (n, m): each step d is one move (down = Add,
/// right = Del) followed by a snake of equal lines. `trace[d]` is the state
/// before step d, for diagonals -d..=d.
#[cfg_attr(as_edit_small, optimize(size))]
fn backtrack(trace: &[Vec<isize>], n: isize, m: isize, last: isize) -> Vec<Op> {
    let mut ops = Vec::new();
    let (mut x, mut y) = (n, m);
    for d in (1..=last).rev() {
        let v = &trace[d as usize];
        let at = |k: isize| v[(k + d) as usize];
        let k = x - y;
        let down = k == -d || (k != d && at(k - 1) < at(k + 1));
        let prev_k = if down { k + 1 } else { k - 1 };
        let prev_x = at(prev_k);
        let prev_y = prev_x - prev_k;
        // Where the move landed; the snake runs from there to (x, y).
        let (mid_x, mid_y) = if down {
            (prev_x, prev_y + 1)
        } else {
            (prev_x + 1, prev_y)
        };
        while x > mid_x && y > mid_y {
            ops.push(Op::Same);
            x -= 1;
            y -= 1;
        }
        ops.push(if down { Op::Add } else { Op::Del });
        x = prev_x;
        y = prev_y;
    }
    while x > 0 && y > 0 {
        ops.push(Op::Same);
        x -= 1;
        y -= 1;
    }
    ops.reverse();
    ops
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::tests::text;
    use crate::diff::{CAP, CONTEXT};

    /// break10 finding 4c: a span too long for line tables is written as
    /// one hunk straight into the cap, exactly as the step-bound fallback
    /// of the line diff writes it (same header, same lines, same cut).
    #[test]
    fn one_hunk_is_the_line_diffs_fallback() {
        let mut old = String::from("p1\np2\n");
        let mut new = old.clone();
        for i in 0..3000 {
            old.push_str(&format!("a{i}\n"));
            new.push_str(&format!("b{i}\n"));
        }
        new.push_str("extra\n");
        old.push_str("s1\ns2\ns3\ns4\nlast");
        new.push_str("s1\ns2\ns3\ns4\nlast");
        for cap in [0, 40, 100, 1000, 5000, CAP, usize::MAX] {
            let want = unified_span(&old, &new, "/f", CONTEXT, cap, 7);
            assert!(
                want.0.starts_with("--- /f\n+++ /f\n@@ -8,") || cap < 40,
                "{want:?}"
            );
            assert_eq!(
                one_hunk(old.as_bytes(), new.as_bytes(), "/f", CONTEXT, cap, 7),
                want,
                "cap {cap}"
            );
        }
        // No newline at the end, changed: the marker lines as the line diff writes them.
        let (o, n) = ("x\ny", "x\nz");
        assert_eq!(
            one_hunk(o.as_bytes(), n.as_bytes(), "/f", CONTEXT, CAP, 0),
            unified_span(o, n, "/f", CONTEXT, CAP, 0)
        );
    }

    /// Applying the script to `a` must give `b`, and Same lines must match.
    fn check(a: &str, b: &str) {
        let (la, lb) = (lines(a), lines(b));
        let script = edit_script(&la, &lb, MAX_EDIT_STEPS);
        let mut rebuilt = String::new();
        for (op, ai, bi) in script {
            match op {
                Op::Same => {
                    assert_eq!(la[ai], lb[bi]);
                    rebuilt.push_str(la[ai]);
                }
                Op::Add => rebuilt.push_str(lb[bi]),
                Op::Del => {}
            }
        }
        assert_eq!(rebuilt, b);
    }

    #[test]
    fn scripts_rebuild_the_new_text() {
        let cases = [
            ("a\nb\nc\n", "a\nB\nc\n"),
            ("", "x\n"),
            ("x\n", ""),
            ("a\nb\nc\nd\ne\n", "b\nc\nX\ne\nf\n"),
            ("1\n2\n3\n1\n2\n3\n", "3\n1\n2\n1\n2\n"),
            ("no newline", "no newline either"),
        ];
        for (a, b) in cases {
            check(a, b);
            check(b, a);
        }
    }

    #[test]
    fn unified_format() {
        let old = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n";
        let new = "1\n2\n3\n4\nFIVE\n6\n7\n8\n9\n10\n";
        let (d, cut) = unified(old, new, "/f", 3, 65536);
        assert!(!cut);
        assert_eq!(
            d,
            "--- /f\n+++ /f\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+FIVE\n 6\n 7\n 8\n"
        );
        let (d, _) = unified("a", "b", "/f", 3, 65536);
        assert_eq!(d, "--- /f\n+++ /f\n@@ -1,1 +1,1 @@\n-a\n\\ No newline at end of file\n+b\n\\ No newline at end of file\n");
        let (d, cut) = unified(&"x\n".repeat(10), &"y\n".repeat(10), "/f", 3, 40);
        assert!(cut && d.len() <= 40 && d.ends_with('\n'));
        assert_eq!(
            unified("same\n", "same\n", "/f", 3, 100),
            (String::new(), false)
        );
    }

    proptest::proptest! {
        #[test]
        fn any_script_rebuilds(a in proptest::collection::vec(0u8..4, 0..40), b in proptest::collection::vec(0u8..4, 0..40)) {
            let text = |v: &[u8]| v.iter().map(|i| format!("{i}\n")).collect::<String>();
            check(&text(&a), &text(&b));
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 3000, ..Default::default() })]
        /// Trimming to the changed span gives the same diff as diffing the
        /// whole texts.
        #[test]
        fn span_trimming_changes_nothing(a in text(60), b in text(60), pre in text(30), suf in text(30)) {
            let (old, new) = (format!("{pre}{a}{suf}"), format!("{pre}{b}{suf}"));
            proptest::prop_assert_eq!(
                unified(&old, &new, "/f", CONTEXT, CAP),
                unified_span(&old, &new, "/f", CONTEXT, CAP, 0)
            );
        }
    }

    #[test]
    fn past_the_step_bound_it_is_one_correct_hunk() {
        let a: String = (0..3000).map(|i| format!("{i}\n")).collect();
        let b: String = (0..3000).map(|i| format!("{}\n", i * 7)).collect();
        check(&a, &b);
    }

    #[test]
    fn far_apart_changes_make_two_hunks() {
        let old: String = (1..=30).map(|i| format!("{i}\n")).collect();
        let new = old
            .replace("\n5\n", "\nfive\n")
            .replace("\n25\n", "\ntwenty-five\n");
        let (d, _) = unified(&old, &new, "/f", 3, 65536);
        assert_eq!(d.matches("@@ -").count(), 2, "{d}");
        assert!(
            d.contains("@@ -2,7 +2,7 @@") && d.contains("@@ -22,7 +22,7 @@"),
            "{d}"
        );
    }
}
