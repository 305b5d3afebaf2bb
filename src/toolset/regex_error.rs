//! rg 13's text for a pattern it refuses. Both parse with regex-syntax,
//! whose refusal is already rg's: `regex parse error:`, the pattern
//! indented four spaces, a caret line under the offending part, `error: `
//! and the reason; it is passed through, and for look-around and
//! back-references rg's advice to enable PCRE2 follows, as rg prints it.
//!
//! The `regex` crate here is newer than the one Debian's rg 13 was built
//! with, whose syntax knows fewer constructs: `\<`, `\>` (word starts and
//! ends), `\b{start}` and the other special word boundaries, `(?<name>…)`
//! groups and the `R` (CRLF) flag. rg 13 refuses them in its own words,
//! rebuilt here: the first such construct is the refusal unless the
//! `regex` crate refused something earlier in the pattern (both parsers
//! stop at the first error, left to right).

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
            if caret_column(s).is_none_or(|c| c >= start) =>
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

/// The character column of the first caret in regex-syntax's text.
fn caret_column(text: &str) -> Option<usize> {
    let line = text.lines().nth(2)?.strip_prefix("    ")?;
    line.find('^')
        .filter(|&i| line[..i].bytes().all(|b| b == b' '))
}

/// The first construct of `p` that regex-syntax 0.8 takes and rg 13's
/// 0.6 refuses: where it starts, the span rg 13 marks and its reason.
fn rg13_only(p: &[char]) -> Option<(usize, usize, usize, &'static str)> {
    const FLAG: &str = "unrecognized flag";
    let at = |i: usize| p.get(i).copied();
    // Inside how many classes; whether an `x` flag was seen.
    let (mut depth, mut x) = (0usize, false);
    let mut i = 0;
    while i < p.len() {
        match p[i] {
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
                Some('p' | 'P' | 'x' | 'u' | 'U') if at(i + 2) == Some('{') => {
                    i += p[i..].iter().position(|&c| c == '}')?;
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
            '(' if depth == 0 && at(i + 1) == Some('?') => match at(i + 2) {
                Some('<') if !matches!(at(i + 3), Some('=' | '!')) => {
                    return Some((i, i + 2, i + 3, FLAG));
                }
                Some('P' | '<' | '=' | '!') => i += 2,
                _ => {
                    let mut j = i + 2;
                    while let Some(c) = at(j) {
                        match c {
                            'R' => return Some((i, j, j + 1, FLAG)),
                            'i' | 'm' | 's' | 'U' | 'u' | 'x' | '-' => j += 1,
                            _ => break,
                        }
                        x |= c == 'x';
                    }
                    i = j - 1;
                }
            },
            _ => {}
        }
        i += 1;
    }
    None
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
            // The earlier error wins, whichever parser saw it.
            ("a(\\<", "     ^", "unclosed group", ""),
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
        ] {
            let e = crate::tools::grep::compile(p, false).err();
            let lookbehind = p == "(?<=a)";
            assert_eq!(refusal(p, e.as_ref()).is_some(), lookbehind, "{p}");
        }
    }
}
