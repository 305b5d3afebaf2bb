//! rg 13's text for a pattern it refuses. Both parse with regex-syntax,
//! whose refusal is already rg's: `regex parse error:`, the pattern
//! indented four spaces, a caret line under the offending part, `error: `
//! and the reason; it is passed through, and for look-around and
//! back-references rg's advice to enable PCRE2 follows, as rg prints it.
//!
//! The `regex` crate here is newer than the one Debian's rg 13 was built
//! with, whose syntax knows fewer constructs: `\<`, `\>` (word starts and
//! ends), `\b{start}` and the other special word boundaries, `(?<name>…)`
//! groups, the `R` (CRLF) flag, escaped punctuation that is no meta
//! character, and with Unicode off (`(?-u)`) a non-ASCII literal outside a
//! class. rg 13 refuses them in its own words, rebuilt here: the first
//! such construct is the refusal unless the `regex` crate refused
//! something met earlier in the pattern (both parsers stop at the first
//! error, left to right; an unclosed group or class is met at its end).

/// rg's advice after a look-around or back-reference refusal.
const PCRE2: &str = "\n\nConsider enabling PCRE2 with the --pcre2 flag, which can handle \
backreferences\nand look-around.";

/// rg 13's stderr for `pattern` (ending in a newline), given the `regex`
/// crate's verdict on it; `None` when rg 13 takes it too.
pub fn refusal(pattern: &str, err: Option<&regex::Error>) -> Option<String> {
    let p: Vec<char> = pattern.chars().collect();
    let old = rg13_only(&p).filter(|_| !pattern.contains('\n'));
    let text = match (err, old) {
        (Some(regex::Error::Syntax(s)), Some((start, from, to, why)))
            if rg13_first(s, start, why) =>
        {
            caret_text(pattern, from, to, why)
        }
        (Some(e), _) => e.to_string(),
        (None, Some((_, from, to, why))) => caret_text(pattern, from, to, why),
        (None, None) => return None,
    };
    let hint = text.contains("backreferences") || text.contains("look-around");
    Some(format!("{text}{}\n", if hint { PCRE2 } else { "" }))
}

fn caret_text(pattern: &str, from: usize, to: usize, why: &str) -> String {
    format!(
        "regex parse error:\n    {pattern}\n    {}{}\nerror: {why}",
        " ".repeat(from),
        "^".repeat(to - from)
    )
}

/// Whether rg 13's refusal `why` of a construct at `start` is met before
/// regex-syntax's `text`: every parse error before a translation error
/// (one that starts `Unicode`: both parse the whole pattern first), and
/// of two of a kind the earlier.
fn rg13_first(text: &str, start: usize, why: &str) -> bool {
    let translating = |w: &str| w.starts_with("Unicode") || w == "pattern can match invalid UTF-8";
    let theirs = text.lines().find_map(|l| l.strip_prefix("error: "));
    match (translating(why), translating(theirs.unwrap_or(""))) {
        (false, true) => true,
        (true, false) => false,
        _ => detected_at(text).is_none_or(|c| c >= start),
    }
}

/// The character column where regex-syntax's parser met the error of
/// `text`, as rg 13's parser meets it too: the start of the last caret
/// run (a duplicate group name is met at the second name); `None` for an
/// unclosed group or class, met only at the end of the pattern.
fn detected_at(text: &str) -> Option<usize> {
    let why = text.lines().find_map(|l| l.strip_prefix("error: "))?;
    if why == "unclosed group" || why == "unclosed character class" {
        return None;
    }
    let line = text.lines().nth(2)?.strip_prefix("    ")?;
    if !line.bytes().all(|b| b == b' ' || b == b'^') {
        return None;
    }
    let end = line.rfind('^')?;
    Some(line[..end].rfind(' ').map_or(0, |i| i + 1))
}

/// The first construct of `p` that regex-syntax 0.8 takes and rg 13's
/// 0.6 refuses: where it starts, the span rg 13 marks and its reason.
/// Inline flags are followed through groups: `x` (whitespace and `#`
/// comments are no syntax) and `u` (without it rg 13 refuses a non-ASCII
/// literal outside a class, where 0.8 matches its UTF-8 bytes).
fn rg13_only(p: &[char]) -> Option<(usize, usize, usize, &'static str)> {
    const FLAG: &str = "unrecognized flag";
    const UNICODE: &str = "Unicode not allowed here";
    let at = |i: usize| p.get(i).copied();
    // Inside how many classes; the `u` and `x` flags, and theirs outside
    // each open group.
    let (mut depth, mut u, mut x) = (0usize, true, false);
    let mut groups: Vec<(bool, bool)> = Vec::new();
    // A translation error (Unicode with `u` off), met after any parse error.
    let mut late = None;
    let mut i = 0;
    while i < p.len() {
        match p[i] {
            '#' if depth == 0 && x => return late, // a comment to the end
            c if depth == 0 && x && c.is_whitespace() => {}
            '\\' => match at(i + 1) {
                // 0.8 takes any ASCII punctuation escaped; 0.6 only its
                // meta characters (and whitespace in `x` mode).
                Some(c) if c.is_ascii() && !c.is_ascii_alphanumeric() => {
                    let meta = "\\.+*?()|[]{}^$#&-~".contains(c);
                    let taken = meta || x && c.is_ascii_whitespace();
                    if !taken {
                        return Some((i, i, i + 2, "unrecognized escape sequence"));
                    }
                    i += 1;
                }
                // rg 13 reads `\b{` as a counted repetition of `\b`.
                Some('b') if depth == 0 && at(i + 2) == Some('{') => match at(i + 3) {
                    None => return Some((i, i + 2, i + 3, "unclosed counted repetition")),
                    Some(c) if c.is_ascii_alphabetic() || c == '-' => {
                        let why = "repetition quantifier expects a valid decimal";
                        return Some((i, i + 3, i + 4, why));
                    }
                    _ => i += 1,
                },
                // `\p{…}`, `\x{…}`: their braces hold no syntax.
                Some('p' | 'P') if at(i + 2) == Some('{') => {
                    i += p[i..].iter().position(|&c| c == '}')?;
                }
                // A code point escape: without `u`, past ASCII only as
                // `\xHH` (a byte).
                Some(k @ ('x' | 'u' | 'U')) => {
                    let (digits, end) = match (at(i + 2), k) {
                        (Some('{'), _) => {
                            let close = i + p[i..].iter().position(|&c| c == '}')?;
                            (&p[i + 3..close], close + 1)
                        }
                        (_, 'x') => (p.get(i + 2..i + 4)?, i + 4),
                        (_, 'u') => (p.get(i + 2..i + 6)?, i + 6),
                        _ => (p.get(i + 2..i + 10)?, i + 10),
                    };
                    let hex: String = digits.iter().collect();
                    let big = u32::from_str_radix(&hex, 16).is_ok_and(|v| v > 0x7F);
                    let byte = k == 'x' && at(i + 2) != Some('{');
                    if depth == 0 && !u && big && !byte {
                        late.get_or_insert((i, i, end, UNICODE));
                    }
                    i = end - 1;
                }
                _ => i += 1,
            },
            '[' if depth > 0 && at(i + 1) == Some(':') => {
                i += p[i..].iter().position(|&c| c == ']')?;
            }
            '[' => {
                depth += 1;
                // A `]` first (after an optional `^`) is a member.
                if at(i + 1) == Some('^') {
                    i += 1;
                }
                if at(i + 1) == Some(']') {
                    i += 1;
                }
            }
            ']' if depth > 0 => depth -= 1,
            ')' if depth == 0 => (u, x) = groups.pop().unwrap_or((u, x)),
            '(' if depth == 0 => {
                groups.push((u, x));
                if at(i + 1) == Some('?') {
                    match at(i + 2) {
                        Some('<') if !matches!(at(i + 3), Some('=' | '!')) => {
                            return Some((i, i + 2, i + 3, FLAG));
                        }
                        // rg 13 takes only ASCII in a group's name.
                        Some('P') if at(i + 3) == Some('<') => {
                            let mut j = i + 4;
                            while let Some(c) = at(j).filter(|&c| c != '>') {
                                if !c.is_ascii() {
                                    let why = "invalid capture group character";
                                    return Some((i, j, j + 1, why));
                                }
                                j += 1;
                            }
                            i = j;
                        }
                        Some('P' | '<' | '=' | '!') => i += 2,
                        _ => {
                            let (mut j, mut on) = (i + 2, true);
                            let (mut nu, mut nx) = (u, x);
                            while let Some(c) = at(j) {
                                match c {
                                    'R' => return Some((i, j, j + 1, FLAG)),
                                    '-' => on = false,
                                    'u' => nu = on,
                                    'x' => nx = on,
                                    'i' | 'm' | 's' | 'U' => {}
                                    _ => break,
                                }
                                j += 1;
                            }
                            // `(?flags)` sets them for the rest of the
                            // group it is in; `(?flags:` for its own.
                            if at(j) == Some(')') {
                                groups.pop();
                            }
                            (u, x) = (nu, nx);
                            i = j;
                        }
                    }
                }
            }
            c if depth == 0 && !u && !c.is_ascii() => {
                late.get_or_insert((i, i, i + 1, UNICODE));
            }
            _ => {}
        }
        i += 1;
    }
    late
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rg(p: &str) -> Option<String> {
        refusal(p, crate::tools::grep::compile(p, false).err().as_ref())
    }

    /// Each expectation is Debian's rg 13.0.0's stderr for the pattern
    /// (`rg --no-config -e PATTERN`), byte for byte.
    #[test]
    fn refusals_read_as_rg_13s() {
        let pcre = "\n\nConsider enabling PCRE2 with the --pcre2 flag, which can handle \
                    backreferences\nand look-around.";
        let cases = [
            ("a(", "     ^", "unclosed group", ""),
            ("é(", "     ^", "unclosed group", ""),
            ("a)", "     ^", "unopened group", ""),
            ("[", "    ^", "unclosed character class", ""),
            ("*", "    ^", "repetition operator missing expression", ""),
            ("a{", "     ^", "unclosed counted repetition", ""),
            ("x{2,", "     ^^^", "unclosed counted repetition", ""),
            (
                "[z-a]",
                "     ^^^",
                "invalid character class range, the start must be <= the end",
                "",
            ),
            (
                "\\",
                "    ^",
                "incomplete escape sequence, reached end of pattern prematurely",
                "",
            ),
            (
                "(?=x)",
                "    ^^^",
                "look-around, including look-ahead and look-behind, is not supported",
                pcre,
            ),
            (
                "(?<!x)y",
                "    ^^^^",
                "look-around, including look-ahead and look-behind, is not supported",
                pcre,
            ),
            (
                "(a)\\1",
                "       ^^",
                "backreferences are not supported",
                pcre,
            ),
            ("\\p{Foo}", "    ^^^^^^^", "Unicode property not found", ""),
            ("\\pX", "    ^^^", "Unicode property not found", ""),
            (
                "x{2,1}",
                "     ^^^^^",
                "invalid repetition count range, the start must be <= the end",
                "",
            ),
            (
                "(?P<n>a)(?P<n>b)",
                "        ^       ^",
                "duplicate capture group name",
                "",
            ),
            ("(?z)", "      ^", "unrecognized flag", ""),
            ("(?i", "       ^", "expected flag but got end of regex", ""),
            ("\\d\\c", "      ^^", "unrecognized escape sequence", ""),
            (
                "\\u{110000}",
                "       ^^^^^^",
                "hexadecimal literal is not a Unicode scalar value",
                "",
            ),
            (
                "\\p{Greek",
                "            ^",
                "incomplete escape sequence, reached end of pattern prematurely",
                "",
            ),
            (
                "a{,3}",
                "      ^",
                "repetition quantifier expects a valid decimal",
                "",
            ),
            // What only the newer syntax takes, in rg 13's words.
            ("\\<", "    ^^", "unrecognized escape sequence", ""),
            ("a\\>", "     ^^", "unrecognized escape sequence", ""),
            ("(?<n>a)", "      ^", "unrecognized flag", ""),
            ("(?<", "      ^", "unrecognized flag", ""),
            ("(?iR)x", "       ^", "unrecognized flag", ""),
            (
                "\\b{start}",
                "       ^",
                "repetition quantifier expects a valid decimal",
                "",
            ),
            (
                "\\b{foo}",
                "       ^",
                "repetition quantifier expects a valid decimal",
                "",
            ),
            ("\\b{", "      ^", "unclosed counted repetition", ""),
            ("a\\/b", "     ^^", "unrecognized escape sequence", ""),
            ("[\\@]", "     ^^", "unrecognized escape sequence", ""),
            ("[\\<]", "     ^^", "unrecognized escape sequence", ""),
            ("\\ ", "    ^^", "unrecognized escape sequence", ""),
            // Without `u`, a non-ASCII literal outside a class (a
            // character or a code point escape, not `\xHH`).
            ("(?-u)é", "         ^", "Unicode not allowed here", ""),
            (
                "(?i-u)café",
                "             ^",
                "Unicode not allowed here",
                "",
            ),
            ("(?-u:é)", "         ^", "Unicode not allowed here", ""),
            ("(?-u)(é)", "          ^", "Unicode not allowed here", ""),
            (
                "(?-u)a(?:é)",
                "             ^",
                "Unicode not allowed here",
                "",
            ),
            ("a(?-u)b|é", "            ^", "Unicode not allowed here", ""),
            (
                "(?-u)(?i)é",
                "             ^",
                "Unicode not allowed here",
                "",
            ),
            ("(?x-u)a é", "            ^", "Unicode not allowed here", ""),
            (
                "(?-u)\\x{e9}",
                "         ^^^^^^",
                "Unicode not allowed here",
                "",
            ),
            (
                "(?-u)\\x{100}",
                "         ^^^^^^^",
                "Unicode not allowed here",
                "",
            ),
            (
                "(?-u)\\u00e9",
                "         ^^^^^^",
                "Unicode not allowed here",
                "",
            ),
            (
                "(?-u)\\u{e9}",
                "         ^^^^^^",
                "Unicode not allowed here",
                "",
            ),
            (
                "(?-u)\\U{e9}",
                "         ^^^^^^",
                "Unicode not allowed here",
                "",
            ),
            (
                "(?-u)\\U000000e9",
                "         ^^^^^^^^^^",
                "Unicode not allowed here",
                "",
            ),
            // Unicode with `u` off is met after every parse error.
            ("(?-u)é(", "          ^", "unclosed group", ""),
            ("(?-u)é\\x{e9})", "                ^", "unopened group", ""),
            (
                "(?-u)\\x{e9}\\ k",
                "               ^^",
                "unrecognized escape sequence",
                "",
            ),
            (
                "\\p{Foo}\\<",
                "           ^^",
                "unrecognized escape sequence",
                "",
            ),
            (
                "(?-u)é\\p{Foo}",
                "         ^",
                "Unicode not allowed here",
                "",
            ),
            (
                "\\p{Foo}(?-u)é",
                "    ^^^^^^^",
                "Unicode property not found",
                "",
            ),
            // The earlier error wins, whichever parser saw it.
            (
                "(?P<é>a)",
                "        ^",
                "invalid capture group character",
                "",
            ),
            (
                "(?P<aé>a)",
                "         ^",
                "invalid capture group character",
                "",
            ),
            // An unclosed group or class is met at the end of the pattern.
            ("a(\\<", "      ^^", "unrecognized escape sequence", ""),
            (
                "((|é)\\>",
                "         ^^",
                "unrecognized escape sequence",
                "",
            ),
            ("[a(\\/", "       ^^", "unrecognized escape sequence", ""),
            (
                "(?P<n>a)\\/(?P<n>b)",
                "            ^^",
                "unrecognized escape sequence",
                "",
            ),
            (
                "((?x)|é)K\\ ",
                "             ^^",
                "unrecognized escape sequence",
                "",
            ),
            ("((?-u)|é)", "           ^", "Unicode not allowed here", ""),
            ("\\<(?z)", "    ^^", "unrecognized escape sequence", ""),
            (
                "[z-a]\\>",
                "     ^^^",
                "invalid character class range, the start must be <= the end",
                "",
            ),
        ];
        for (p, caret, why, tail) in cases {
            let want = format!("regex parse error:\n    {p}\n{caret}\nerror: {why}{tail}\n");
            assert_eq!(rg(p).as_deref(), Some(&*want), "{p}");
        }
    }

    #[test]
    fn what_rg_13_takes_is_not_refused() {
        for p in [
            "\\p{Greek}+",
            "\\w+é",
            "(?i)straße",
            "[[:foo:]]",
            "a**",
            "\\b{3}",
            "\\(?<n>",
            "\\#\\&\\-\\~[\\-]",
            "(?x)a\\ b",
            "(?<=a)",
            "(?P<n>x)",
            "x{1001}",
            "\\p{L}\\p{Lu}\\p{Han}\\p{scx=Greek}\\pN",
            // `#` starts a comment in `x` mode; `u` back on in a group.
            "(?x)a # \\<",
            "(?x)a # (?<n>",
            "(?x-u)a # é",
            "(?-u)(?u:é)",
            "(?-u:(?u)é)",
            "(?-u:a)é",
            "(?P<a.b>x)(?P<a[b>y)(?P<c]>z)",
            "(?-u)\\xe9[\\xff]a\\x{41}",
        ] {
            let e = crate::tools::grep::compile(p, false).err();
            let lookbehind = p == "(?<=a)";
            assert_eq!(refusal(p, e.as_ref()).is_some(), lookbehind, "{p}");
        }
    }
}
