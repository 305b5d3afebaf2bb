//! rg 13's text for a pattern its regex parser refuses, rebuilt from
//! regex-lite's refusal (which has the same cases in other words and no
//! position): `regex parse error:`, the pattern indented four spaces, a
//! caret line under the offending part, `error: ` and regex-syntax's
//! words. The common cases are matched exactly (checked against rg 13):
//! an unclosed or unopened group, an unclosed class, a reversed class
//! range, a repetition with nothing before it, an unclosed `{…}`, a
//! trailing `\`. Any other refusal keeps regex-lite's words and has no
//! caret line (the differential's `regex-error-text`).

/// What one scan of the pattern found, by character column.
#[derive(Default)]
struct Marks {
    open_groups: Vec<usize>,
    unopened: Option<usize>,
    class_open: Option<usize>,
    bad_range: Option<(usize, usize)>,
    bare_repeat: Option<usize>,
    open_count: Option<usize>,
    trailing_escape: Option<usize>,
}

fn scan(p: &[char]) -> Marks {
    let mut m = Marks::default();
    let mut i = 0;
    // Whether a repetition here would have nothing to repeat.
    let mut empty = true;
    while i < p.len() {
        match p[i] {
            '\\' if i + 1 == p.len() => m.trailing_escape = Some(i),
            '\\' => {
                i += 1;
                empty = false;
            }
            '(' => {
                m.open_groups.push(i);
                empty = true;
                // `(?flags)` and `(?:` are not repeatable starts either.
                if p.get(i + 1) == Some(&'?') {
                    while i + 1 < p.len() && !matches!(p[i + 1], ':' | ')') {
                        i += 1;
                    }
                }
            }
            ')' => {
                if m.open_groups.pop().is_none() && m.unopened.is_none() {
                    m.unopened = Some(i);
                }
                empty = false;
            }
            '|' => empty = true,
            '*' | '+' | '?' if empty && m.bare_repeat.is_none() => m.bare_repeat = Some(i),
            '{' => match p[i..].iter().position(|&c| c == '}') {
                Some(k) => i += k,
                None if !empty => {
                    m.open_count.get_or_insert(i);
                }
                None => {}
            },
            '[' => match class_end(p, i, &mut m) {
                Some(end) => {
                    i = end;
                    empty = false;
                }
                None => {
                    m.class_open.get_or_insert(i);
                    break;
                }
            },
            _ => empty = false,
        }
        i += 1;
    }
    m
}

/// The `]` closing the class at `p[at]`, noting a reversed range.
fn class_end(p: &[char], at: usize, m: &mut Marks) -> Option<usize> {
    let mut i = at + 1;
    if p.get(i) == Some(&'^') {
        i += 1;
    }
    if p.get(i) == Some(&']') {
        i += 1;
    }
    while i < p.len() {
        match p[i] {
            ']' => return Some(i),
            '[' if p.get(i + 1) == Some(&':') => {
                i += p[i..].iter().position(|&c| c == ']')?;
            }
            '[' => i = class_end(p, i, m)?,
            '\\' => i += 1,
            c if p.get(i + 1) == Some(&'-') && p.get(i + 2).is_some_and(|&d| d != ']') => {
                if c > p[i + 2] && p[i + 2] != '\\' {
                    m.bad_range.get_or_insert((i, i + 3));
                }
                i += 2;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// rg's stderr for `pattern`, which regex-lite refused saying `lite`.
pub fn text(pattern: &str, lite: &str) -> String {
    let p: Vec<char> = pattern.chars().collect();
    let m = scan(&p);
    let one = |at: usize| (at, at + 1);
    let has = |w: &str| lite.contains(w);
    let found = if has("without closing ')'") {
        m.open_groups.last().map(|&a| (one(a), "unclosed group"))
    } else if has("without matching '('") {
        m.unopened.map(|a| (one(a), "unopened group"))
    } else if has("invalid range in character class") {
        let why = "invalid character class range, the start must be <= the end";
        m.bad_range.map(|r| (r, why))
    } else if has("character class") && (has("no closing bracket") || has("unclosed")) {
        m.class_open.map(|a| (one(a), "unclosed character class"))
    } else if has("must be applied to a sub-expression") {
        let why = "repetition operator missing expression";
        m.bare_repeat.map(|a| (one(a), why))
    } else if has("counted repetition") && has("unclosed") || has("repetition without an end") {
        m.open_count
            .map(|a| ((a, p.len()), "unclosed counted repetition"))
    } else if has("end of pattern before it finished") {
        let why = "incomplete escape sequence, reached end of pattern prematurely";
        m.trailing_escape.map(|a| (one(a), why))
    } else {
        None
    };
    match found {
        Some(((from, to), why)) if !pattern.contains('\n') => format!(
            "regex parse error:\n    {pattern}\n    {}{}\nerror: {why}\n",
            " ".repeat(from),
            "^".repeat((to - from).max(1))
        ),
        _ => format!("regex parse error:\n    {pattern}\nerror: {lite}\n"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rg(p: &str) -> String {
        let e = regex_lite::Regex::new(p).unwrap_err();
        text(p, &e.to_string())
    }

    #[test]
    fn the_common_refusals_read_as_rg_13s() {
        // Each expectation is rg 13.0.0's stderr for the pattern.
        let cases = [
            ("a(", "     ^", "unclosed group"),
            ("a)", "     ^", "unopened group"),
            ("[", "    ^", "unclosed character class"),
            ("*", "    ^", "repetition operator missing expression"),
            ("a{", "     ^", "unclosed counted repetition"),
            ("x{2,", "     ^^^", "unclosed counted repetition"),
            (
                "[z-a]",
                "     ^^^",
                "invalid character class range, the start must be <= the end",
            ),
            (
                "\\",
                "    ^",
                "incomplete escape sequence, reached end of pattern prematurely",
            ),
        ];
        for (p, caret, why) in cases {
            let want = format!("regex parse error:\n    {p}\n{caret}\nerror: {why}\n");
            assert_eq!(rg(p), want, "{p}");
        }
    }
}
