//! The normalized-exact kinds' comparisons: which of kinds 2 to 6 a
//! window matches under ([`classify`]), the normalizations they compare
//! by (trailing blanks, leading whitespace, collapsed runs, ASCII forms of
//! typographic characters, the skeleton), and the unescaping of `escapes`.

use super::{part, rel, Part};
use crate::hints::Kind;

/// The first of kinds 2 to 6 under which the window matches OLD's pieces.
pub(super) fn classify(o: &[&str], ends_nl: bool, t: &[&str]) -> Option<Kind> {
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

#[cfg_attr(as_edit_small, optimize(size))]
fn trailing_ws_eq(o: &str, t: &str, p: Part) -> bool {
    let (ot, tt) = (trim_sp_end(o), trim_sp_end(t));
    match p {
        Part::Whole | Part::Suffix => rel(tt, ot, p),
        // A piece that stops mid-line matches as it is, or reaches the end.
        Part::Prefix => t.starts_with(o) || ot == tt,
        Part::Inner => t.contains(o) || tt.ends_with(ot),
    }
}

#[cfg_attr(as_edit_small, optimize(size))]
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
#[cfg_attr(as_edit_small, optimize(size))]
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
pub(super) fn ascii_form(c: char) -> Option<&'static str> {
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

#[cfg_attr(as_edit_small, optimize(size))]
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
pub(in crate::hints) fn skeleton_chars(s: &str) -> impl Iterator<Item = char> + Clone + '_ {
    s.chars().filter(|c| !c.is_whitespace()).flat_map(|c| {
        let (one, mapped) = match ascii_form(c) {
            Some(a) => (None, a),
            None => (Some(c), ""),
        };
        one.into_iter().chain(mapped.chars().filter(|c| *c != ' '))
    })
}

#[cfg_attr(as_edit_small, optimize(size))]
pub(super) fn skeleton_into(s: &str, out: &mut String) {
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
pub(in crate::hints) fn unescape(old: &str) -> Option<String> {
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
    use crate::hints::tests::{expect, kinds, RS};

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
}
