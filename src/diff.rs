//! Unified diffs for `--report --diff` (pure; no I/O).
//!
//! Lines are compared with Myers' algorithm after trimming the common prefix
//! and suffix. Past `MAX_EDIT_STEPS` differences the middle is shown as one
//! hunk of removals then additions: still a correct diff, just not minimal,
//! and the time and memory stay bounded.

const MAX_EDIT_STEPS: usize = 2000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
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
pub fn unified(old: &str, new: &str, name: &str, context: usize, cap: usize) -> (String, bool) {
    let (a, b) = (lines(old), lines(new));
    let script = edit_script(&a, &b);
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
        let range = |first: usize, len: usize| {
            // Unified format: an empty range names the line before it.
            if len == 0 {
                format!("{},0", first)
            } else {
                format!("{},{}", first + 1, len)
            }
        };
        out.push_str(&format!(
            "@@ -{} +{} @@\n",
            range(a0, a_len),
            range(b0, b_len)
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
    }
    if out.len() > cap {
        let cut = out[..cap].rfind('\n').map_or(0, |p| p + 1);
        out.truncate(cut);
        return (out, true);
    }
    (out, false)
}

/// (op, index in a, index in b) for every line, in order. For `Add` the a
/// index is the position the insertion happens at; for `Del` likewise for b.
fn edit_script(a: &[&str], b: &[&str]) -> Vec<(Op, usize, usize)> {
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..]
        .iter()
        .rev()
        .zip(b[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (am, bm) = (&a[prefix..a.len() - suffix], &b[prefix..b.len() - suffix]);
    let mut script: Vec<(Op, usize, usize)> = (0..prefix).map(|i| (Op::Same, i, i)).collect();
    let middle = myers(am, bm).unwrap_or_else(|| {
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

/// Myers' greedy shortest edit script; None past `MAX_EDIT_STEPS`.
fn myers(a: &[&str], b: &[&str]) -> Option<Vec<Op>> {
    let (n, m) = (a.len() as isize, b.len() as isize);
    let max = ((n + m) as usize).min(MAX_EDIT_STEPS) as isize;
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

    /// Applying the script to `a` must give `b`, and Same lines must match.
    fn check(a: &str, b: &str) {
        let (la, lb) = (lines(a), lines(b));
        let script = edit_script(&la, &lb);
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
