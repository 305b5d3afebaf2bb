//! A strict `patch` for the tests: shared by the diff module's unit tests
//! and the integration tests (included with `#[path]`).
#![allow(dead_code)]

/// A strict `patch`: applies a unified diff to `old`, checking every
/// header count, context and removed line; None if the diff is not
/// valid for `old`.
pub fn apply(old: &str, diff: &str) -> Option<String> {
    if diff.is_empty() {
        return Some(old.to_owned());
    }
    let a: Vec<&str> = old.split_inclusive('\n').collect();
    let d: Vec<&str> = diff.split_inclusive('\n').collect();
    if d.len() < 2 || !d[0].starts_with("--- ") || !d[1].starts_with("+++ ") {
        return None;
    }
    let mut out = String::new();
    let mut ai = 0; // next line of old to copy
    let mut i = 2;
    while i < d.len() {
        let h = d[i].strip_prefix("@@ -")?.strip_suffix(" @@\n")?;
        let (ra, rb) = h.split_once(" +")?;
        let parse = |r: &str| -> Option<(usize, usize)> {
            let (s, l) = r.split_once(',')?;
            Some((s.parse().ok()?, l.parse().ok()?))
        };
        let ((a0, alen), (_, blen)) = (parse(ra)?, parse(rb)?);
        let start = if alen == 0 { a0 } else { a0.checked_sub(1)? };
        if start < ai {
            return None;
        }
        while ai < start {
            out.push_str(a.get(ai)?);
            ai += 1;
        }
        i += 1;
        let (mut seen_a, mut seen_b) = (0, 0);
        while i < d.len() && !d[i].starts_with("@@") {
            let (mark, rest) = d[i].split_at(1);
            let mut text = rest.to_owned();
            if d.get(i + 1) == Some(&"\\ No newline at end of file\n") {
                text.pop();
                i += 1;
            }
            match mark {
                " " | "-" => {
                    if a.get(ai) != Some(&text.as_str()) {
                        return None;
                    }
                    ai += 1;
                    seen_a += 1;
                    if mark == " " {
                        out.push_str(&text);
                        seen_b += 1;
                    }
                }
                "+" => {
                    out.push_str(&text);
                    seen_b += 1;
                }
                _ => return None,
            }
            i += 1;
        }
        if (seen_a, seen_b) != (alen, blen) {
            return None;
        }
    }
    while ai < a.len() {
        out.push_str(a[ai]);
        ai += 1;
    }
    Some(out)
}
