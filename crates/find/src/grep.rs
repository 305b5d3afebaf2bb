//! The search of `grep` (pure: bytes in, matching lines out).
//!
//! A literal by default (AgentScope's `grep -F`); with `regex:true` a
//! regular expression in the `regex` crate's dialect, ripgrep's: Unicode
//! `\w \d \s \b`, `\p{…}` of general categories and scripts (boolean
//! properties, ages and segmentation classes are not built in: `Unicode
//! property not found`, where rg searches) and Unicode simple case
//! folding for `(?i)` and `ignore_case` (`(?i)É` finds `é`, `k` finds
//! the Kelvin sign). The regex matches bytes as rg's does: `.` and a
//! negated class match whole UTF-8 characters, never an invalid byte, and
//! `(?-u:\xFF)` matches the byte. Lines are split at `\n` and matched one
//! at a time (a match never spans lines, as in ripgrep); a pattern holding
//! a newline is refused. The static binary's cost of the engine and its
//! Unicode tables is in the README's Performance section.
//!
//! Speed comes from never running the regex engine over lines that cannot
//! match: a literal is found with `memmem` over the whole buffer, and a
//! regex's *required literal* (the longest run of literal characters every
//! match must contain, outside groups and alternations: `_mut(` in
//! `fn \w+_mut\(`) is found the same way, the regex then run only on the
//! lines holding it. A regex with no such literal (or with inline flags,
//! `(?…)`) is run on every line.
//!
//! `ignore_case`: the buffer is lowered (ASCII) 64 KiB at a time into a
//! scratch chunk (overlapping the next by the literal's length - 1) and
//! searched for the lowered literal, so it costs one chunk, not a lowered
//! copy of the block. ASCII lowering finds every case variant only of
//! ASCII characters whose variants are all ASCII: not `k` (U+212A KELVIN
//! SIGN), not `s` (U+017F LONG S), not a non-ASCII letter. So with
//! `ignore_case` the prefilter is the longest run of such characters in
//! the literal, and when that is not the whole literal the line is
//! confirmed by a case-insensitive regex of the literal (a search for
//! `size` or `Été` is Unicode case-insensitive as rg's `-i`).

use memchr::memmem::Finder;

/// A compiled search.
#[derive(Debug)]
pub struct Search {
    /// The literal to find with memmem (the pattern, or a regex's
    /// required literal), lowered when `fold`; `None`: every line is a
    /// candidate.
    finder: Option<Finder<'static>>,
    re: Option<regex::bytes::Regex>,
    fold: bool,
}

/// The regex of `pattern` as rg compiles it (Unicode, `(?i)` for
/// `ignore_case`), or the `regex` crate's refusal.
pub fn compile(pattern: &str, ignore_case: bool) -> Result<regex::bytes::Regex, regex::Error> {
    regex::bytes::RegexBuilder::new(pattern)
        .case_insensitive(ignore_case)
        .build()
}

impl Search {
    /// Compiles `pattern`, or says why it is not one (`invalid_argument`).
    pub fn new(pattern: &str, regex: bool, ignore_case: bool) -> Result<Search, String> {
        if pattern.contains('\n') {
            return Err("the pattern holds a newline: a match never spans lines".into());
        }
        let re = match regex {
            true => Some(compile(pattern, ignore_case).map_err(|e| refusal(&e))?),
            false => None,
        };
        Ok(Search::with(pattern, re, ignore_case))
    }

    /// The search of `pattern`, a regex already compiled as `re` by
    /// [`compile`] (with the same `ignore_case`), or a literal when `re` is
    /// `None`; the pattern holds no newline.
    pub fn with(pattern: &str, mut re: Option<regex::bytes::Regex>, fold: bool) -> Search {
        let lit = match re {
            Some(_) => required_literal(pattern),
            None => Some(pattern.as_bytes().to_vec()),
        };
        let lit = lit.filter(|l| !l.is_empty()).map(|l| match fold {
            false => l,
            true => {
                let run = fold_safe_run(&l);
                if re.is_none() && run.len() < l.len() {
                    // Some case variants are not ASCII: the line is confirmed
                    // by the literal's Unicode case-insensitive regex.
                    re = compile(&regex::escape(pattern), true).ok();
                }
                run.to_ascii_lowercase()
            }
        });
        // An empty literal pattern matches every line (as `grep -F ''`).
        Search {
            finder: lit
                .filter(|l| !l.is_empty())
                .map(|l| Finder::new(&l).into_owned()),
            re,
            fold,
        }
    }

    /// Calls `hit(start, end)` for each matching line of `buf` in order
    /// (`buf[start..end]`, without its `\n`); `buf` holds whole lines (its
    /// last may lack a `\n`). `hit` returns `false` to stop. `scratch`
    /// holds one lowered chunk with `ignore_case`, reused across calls.
    pub fn lines(&self, buf: &[u8], scratch: &mut Vec<u8>, hit: impl FnMut(usize, usize) -> bool) {
        self.lines_in(buf, scratch, FOLD_CHUNK, hit);
    }

    /// [`Search::lines`] lowering `chunk` bytes at a time.
    fn lines_in(
        &self,
        buf: &[u8],
        scratch: &mut Vec<u8>,
        chunk: usize,
        mut hit: impl FnMut(usize, usize) -> bool,
    ) {
        let mut low = Lowered::new(scratch, chunk);
        let mut pos = 0;
        while pos < buf.len() {
            let (start, end) = match &self.finder {
                Some(f) => {
                    let Some(at) = self.find(f, buf, pos, &mut low) else {
                        return;
                    };
                    let start = memchr::memrchr(b'\n', &buf[pos..at]).map_or(pos, |i| pos + i + 1);
                    (start, line_end(buf, at))
                }
                None => (pos, line_end(buf, pos)),
            };
            pos = end + 1;
            if self.line_matches(&buf[start..end]) && !hit(start, end) {
                return;
            }
        }
    }

    /// The first occurrence of the literal in `hay` at or after `pos`.
    /// With `ignore_case`, `hay` is lowered a chunk at a time, each chunk
    /// sharing the literal's length - 1 bytes with the next so that no
    /// occurrence is split unseen (one found is the first: an earlier one
    /// would lie wholly in the chunk); a chunk is reused while `pos` is in it.
    fn find(&self, f: &Finder, hay: &[u8], pos: usize, low: &mut Lowered) -> Option<usize> {
        if !self.fold {
            return f.find(&hay[pos..]).map(|i| pos + i);
        }
        let ov = f.needle().len() - 1;
        let mut p = pos;
        if !(low.at <= p && p < low.at + low.buf.len()) {
            low.lower(hay, p, ov);
        }
        loop {
            if let Some(i) = f.find(&low.buf[p - low.at..]) {
                return Some(p + i);
            }
            let end = low.at + low.buf.len();
            if end == hay.len() {
                return None;
            }
            p = p.max(end - ov);
            low.lower(hay, p, ov);
        }
    }

    /// Whether a line can be searched in windows (`grep_long.rs`): a
    /// literal, or a regex with a required literal; `false` for a regex
    /// without one, which must see the whole line.
    pub fn windowed(&self) -> bool {
        self.re.is_none() || self.finder.is_some()
    }

    /// Bytes a window must share with the next one so that no occurrence
    /// of the literal is split unseen: its length - 1.
    pub fn overlap(&self) -> usize {
        self.finder
            .as_ref()
            .map_or(0, |f| f.needle().len().saturating_sub(1))
    }

    /// Whether `window` (part of one line) holds the literal; always for
    /// a search without one. `scratch` as in [`Search::lines`].
    pub fn literal_in(&self, window: &[u8], scratch: &mut Vec<u8>) -> bool {
        let Some(f) = &self.finder else {
            return true;
        };
        self.find(f, window, 0, &mut Lowered::new(scratch, FOLD_CHUNK))
            .is_some()
    }

    /// Whether a line holding the literal matches: the regex decides
    /// (on the whole line), a literal search always does.
    pub fn needs_line(&self) -> bool {
        self.re.is_some()
    }

    /// Whether one line (a candidate) matches: always for a literal.
    pub fn line_matches(&self, line: &[u8]) -> bool {
        match &self.re {
            None => true,
            Some(re) => re.is_match(line),
        }
    }
}

/// Bytes `ignore_case` lowers at a time (and the literal's length - 1 more).
const FOLD_CHUNK: usize = 64 * 1024;

/// A lowered copy of `hay[at..at + buf.len()]`.
struct Lowered<'a> {
    buf: &'a mut Vec<u8>,
    at: usize,
    chunk: usize,
}

impl<'a> Lowered<'a> {
    fn new(buf: &'a mut Vec<u8>, chunk: usize) -> Lowered<'a> {
        buf.clear();
        Lowered { buf, at: 0, chunk }
    }

    /// Lowers the chunk of `hay` starting at `at`: `chunk` bytes and the overlap `ov`.
    fn lower(&mut self, hay: &[u8], at: usize, ov: usize) {
        let end = at
            .saturating_add(self.chunk)
            .saturating_add(ov)
            .min(hay.len());
        self.buf.clear();
        self.buf
            .extend(hay[at..end].iter().map(u8::to_ascii_lowercase));
        self.at = at;
    }
}

/// `invalid regex: REASON` on one line: regex-syntax's reason without its
/// drawing of the pattern (its `error: ` line), or the crate's message.
fn refusal(e: &regex::Error) -> String {
    let text = e.to_string();
    let why = text.lines().find_map(|l| l.strip_prefix("error: "));
    format!("invalid regex: {}", why.unwrap_or(&text))
}

/// The longest run of `lit` whose every case variant is ASCII (so found
/// by lowering ASCII): ASCII bytes but `k`, `K`, `s`, `S`.
fn fold_safe_run(lit: &[u8]) -> &[u8] {
    let safe = |b: &u8| b.is_ascii() && !matches!(b.to_ascii_lowercase(), b'k' | b's');
    let mut best = &lit[..0];
    for run in lit.split(|b| !safe(b)) {
        if run.len() > best.len() {
            best = run;
        }
    }
    best
}

fn line_end(buf: &[u8], from: usize) -> usize {
    memchr::memchr(b'\n', &buf[from..]).map_or(buf.len(), |i| from + i)
}

/// The longest run of literal characters that every match of the regex
/// `p` contains, when one is found by this conservative reading: `None`
/// for an alternation at the top level or inline flags; groups, classes,
/// escapes that are not punctuation (and `\<`, `\>`), `.`, `^`, `$` end a run, and a
/// character made optional by `?`, `*` or `{…}` leaves it.
pub fn required_literal(p: &str) -> Option<Vec<u8>> {
    if p.contains("(?") {
        return None;
    }
    let b = p.as_bytes();
    let mut best: Vec<u8> = Vec::new();
    // The current run, and where each of its characters starts.
    let mut run: Vec<u8> = Vec::new();
    let mut starts: Vec<usize> = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    let flush = |run: &mut Vec<u8>, starts: &mut Vec<usize>, best: &mut Vec<u8>| {
        if run.len() > best.len() {
            *best = run.clone();
        }
        run.clear();
        starts.clear();
    };
    while i < b.len() {
        let c = b[i];
        if depth > 0 {
            match c {
                b'\\' => i += 1,
                b'[' => i = class_end(b, i)?,
                b'(' => depth += 1,
                b')' => depth -= 1,
                _ => {}
            }
            i += 1;
            continue;
        }
        match c {
            b'|' => return None,
            b'(' => {
                flush(&mut run, &mut starts, &mut best);
                depth = 1;
            }
            b'[' => {
                flush(&mut run, &mut starts, &mut best);
                i = class_end(b, i)?;
            }
            b'.' | b'^' | b'$' | b')' => flush(&mut run, &mut starts, &mut best),
            // `+` keeps its character, unless a repetition that may be
            // zero follows (`a+*`, `a+{0}`, `a+??`; a lazy `a+?` too).
            b'+' if matches!(b.get(i + 1), Some(b'*' | b'?' | b'{')) => {
                if let Some(s) = starts.pop() {
                    run.truncate(s);
                }
                flush(&mut run, &mut starts, &mut best);
            }
            b'+' => flush(&mut run, &mut starts, &mut best),
            b'*' | b'?' | b'{' => {
                if let Some(s) = starts.pop() {
                    run.truncate(s);
                }
                flush(&mut run, &mut starts, &mut best);
                if c == b'{' {
                    i += memchr::memchr(b'}', &b[i..])?;
                }
            }
            b'\\' => {
                let &n = b.get(i + 1)?;
                if n == b'<' || n == b'>' {
                    // Word start and end (`\<`, `\>`): assertions.
                    flush(&mut run, &mut starts, &mut best);
                } else if n.is_ascii_punctuation() {
                    starts.push(run.len());
                    run.push(n);
                } else if b"wWdDsSAzB".contains(&n) || (n == b'b' && b.get(i + 2) != Some(&b'{')) {
                    flush(&mut run, &mut starts, &mut best);
                } else {
                    return None; // \x41, \p{…}, \n and the like: not read here
                }
                i += 1;
            }
            _ => {
                let len = match c {
                    0xf0.. => 4,
                    0xe0.. => 3,
                    0xc0.. => 2,
                    _ => 1,
                };
                starts.push(run.len());
                run.extend_from_slice(&b[i..(i + len).min(b.len())]);
                i += len - 1;
            }
        }
        i += 1;
    }
    flush(&mut run, &mut starts, &mut best);
    Some(best).filter(|b| !b.is_empty())
}

/// The index of the `]` closing the class opened at `i` (nested classes
/// and escapes skipped); `None` if unclosed (the regex compiler refuses).
fn class_end(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    if b.get(j) == Some(&b'^') {
        j += 1;
    }
    if b.get(j) == Some(&b']') {
        j += 1;
    }
    let mut depth = 1;
    while j < b.len() {
        match b[j] {
            b'\\' => j += 1,
            b'[' => depth += 1,
            b']' => {
                depth -= 1;
                if depth == 0 {
                    return Some(j);
                }
            }
            _ => {}
        }
        j += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(p: &str, regex: bool, ic: bool, text: &str) -> Vec<String> {
        let s = Search::new(p, regex, ic).unwrap();
        let mut out = Vec::new();
        s.lines(text.as_bytes(), &mut Vec::new(), |a, b| {
            out.push(text[a..b].to_string());
            true
        });
        out
    }

    #[test]
    fn literal_lines_in_order_each_once() {
        let t = "a foo foo\nbar\nfoo\n\nxfoo";
        assert_eq!(found("foo", false, false, t), ["a foo foo", "foo", "xfoo"]);
        assert_eq!(found("FOO", false, true, t), ["a foo foo", "foo", "xfoo"]);
        assert_eq!(found("FOO", false, false, t), Vec::<String>::new());
        assert_eq!(found("", false, false, "a\n\nb\n"), ["a", "", "b"]);
        assert_eq!(found("a.b", false, false, "a.b\naxb"), ["a.b"]);
    }

    #[test]
    fn regex_lines_with_and_without_a_prefilter() {
        let t = "fn get_mut(x)\nfn get(x)\nlet f = a_mut(\nfn _mut(\n";
        assert_eq!(found(r"fn \w+_mut\(", true, false, t), ["fn get_mut(x)"]);
        assert_eq!(found(r"^\w+$", true, false, "ab\na b\ncd"), ["ab", "cd"]);
        assert_eq!(
            found(r"(?i)GET", true, false, t),
            ["fn get_mut(x)", "fn get(x)"]
        );
        assert_eq!(found(r"GET\(", true, true, t), ["fn get(x)"]);
        assert_eq!(
            found(r"a|get\(", true, false, t),
            ["fn get(x)", "let f = a_mut("]
        );
        // `\s` would cross a newline over the whole buffer: lines are matched alone.
        assert_eq!(found(r"x\)\s+fn", true, false, t), Vec::<String>::new());
    }

    /// `\<` and `\>` are word start and end, no literal `<` or `>`: the
    /// prefilter must not ask lines for one.
    #[test]
    fn word_start_and_end_escapes_are_no_literal() {
        let t = "foo bar\nx<foo\nbarfoo\nfoo>\n";
        assert_eq!(
            found(r"\<foo", true, false, t),
            ["foo bar", "x<foo", "foo>"]
        );
        assert_eq!(
            found(r"foo\>", true, false, t),
            ["foo bar", "x<foo", "barfoo", "foo>"]
        );
        assert_eq!(
            found(r"\<foo\>", true, true, t),
            ["foo bar", "x<foo", "foo>"]
        );
        assert_eq!(
            required_literal(r"\<foo\>bar").as_deref(),
            Some(&b"foo"[..])
        );
        assert_eq!(found(r"foo\>", true, false, "a\nfoo>"), ["foo>"]);
    }

    /// A repetition of a repetition may be zero: `a+*` matches every line
    /// (rg's `(a+)*`), and no literal is required of it.
    #[test]
    fn a_repeated_plus_requires_no_literal() {
        let t = "xa\nb\n";
        for p in [r"a+*", r"xa+*", r"a+{0}", r"a+??", r"a+*?", r"\.+*"] {
            let want: &[&str] = match p {
                r"xa+*" => &["xa"],
                _ => &["xa", "b"],
            };
            assert_eq!(found(p, true, false, t), want, "{p}");
            assert_eq!(found(p, true, true, t), want, "{p}");
        }
        assert_eq!(required_literal(r"ab+c").as_deref(), Some(&b"ab"[..]));
        assert_eq!(required_literal(r"xya+*").as_deref(), Some(&b"xy"[..]));
    }

    /// `ignore_case` lowered in chunks finds what a lowered copy of the
    /// whole buffer finds, occurrences across chunks' edges included, and
    /// keeps `scratch` at one chunk.
    #[test]
    fn ignore_case_in_chunks_answers_as_a_whole_lowered_copy() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut text = Vec::new();
        while text.len() < 300_000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            text.push(b"aAbBxX\nN"[(seed % 8) as usize]);
        }
        let run = |s: &Search, chunk: usize, scratch: &mut Vec<u8>| {
            let mut out = Vec::new();
            s.lines_in(&text, scratch, chunk, |a, b| {
                out.push((a, b));
                true
            });
            out
        };
        for pat in ["a", "Ab", "aBa", "xaXbA", "bbbbbbbb"] {
            let s = Search::new(pat, false, true).unwrap();
            let whole = run(&s, usize::MAX, &mut Vec::new());
            assert!(!whole.is_empty() || pat.len() > 6, "{pat}");
            for chunk in [1, 2, 3, 5, 64, 1000] {
                let mut scratch = Vec::new();
                assert_eq!(run(&s, chunk, &mut scratch), whole, "{pat} {chunk}");
                // (a `Vec<u8>` holds at least 8 bytes once it holds any.)
                let cap = scratch.capacity();
                assert!(cap <= 8 + 2 * (chunk + pat.len()), "{pat} {chunk}: {cap}");
            }
            let mut scratch = Vec::new();
            let mut n = 0;
            s.lines(&text, &mut scratch, |_, _| {
                n += 1;
                true
            });
            assert_eq!(n, whole.len());
            // main lowered a copy of the whole buffer: 300 KB.
            assert!(scratch.capacity() <= 128 * 1024, "{}", scratch.capacity());
            assert_eq!(s.literal_in(&text, &mut scratch), !whole.is_empty());
            assert!(scratch.capacity() <= 128 * 1024, "{}", scratch.capacity());
        }
    }

    /// rg's Unicode dialect: classes, scripts, case folding beyond ASCII
    /// (`ignore_case` and `(?i)`, literal or regex), and bytes: `.` never
    /// matches an invalid byte.
    #[test]
    fn regexes_and_case_folding_are_unicode_as_rgs() {
        let t = "café au lait\nΑθήνα\nstraße\nKELVIN \u{212A}\nſtop\nÉTÉ\n日本語\n";
        assert_eq!(found(r"\p{Greek}+", true, false, t), ["Αθήνα"]);
        assert_eq!(
            found(r"^\w+$", true, false, t),
            ["Αθήνα", "straße", "ſtop", "ÉTÉ", "日本語"]
        );
        assert_eq!(found(r"caf\w\b", true, false, t), ["café au lait"]);
        assert_eq!(found(r"\p{Han}{3}", true, false, t), ["日本語"]);
        assert_eq!(found(r"(?i)été", true, false, t), ["ÉTÉ"]);
        assert_eq!(found("été", true, true, t), ["ÉTÉ"]);
        // Literal searches fold as rg -F -i does, prefilter or not.
        assert_eq!(found("été", false, true, t), ["ÉTÉ"]);
        assert_eq!(found("CAFÉ", false, true, t), ["café au lait"]);
        assert_eq!(found("kelvin k", false, true, t), ["KELVIN \u{212A}"]);
        assert_eq!(found("STOP", false, true, t), ["ſtop"]);
        assert_eq!(found("stop", true, true, t), ["ſtop"]);
        assert_eq!(found("ΑΘΉΝΑ", false, true, t), ["Αθήνα"]);
        // The ASCII prefilter stays where it is right.
        assert!(Search::new("LAIT", false, true).unwrap().re.is_none());
        let s = Search::new("size", false, true).unwrap();
        assert_eq!(s.finder.as_ref().unwrap().needle(), b"ize");
        assert!(s.re.is_some());
        let bytes = b"a\xffb\nab\n";
        let s = Search::new("a.b", true, false).unwrap();
        let mut hits = Vec::new();
        s.lines(bytes, &mut Vec::new(), |a, b| {
            hits.push(bytes[a..b].to_vec());
            true
        });
        assert!(hits.is_empty(), "{hits:?}");
        let s = Search::new(r"a(?-u:\xFF)b", true, false).unwrap();
        assert!(s.line_matches(b"a\xffb"));
    }

    #[test]
    fn bad_patterns_are_refused_naming_the_error() {
        let e = Search::new("a(", true, false).unwrap_err();
        assert_eq!(e, "invalid regex: unclosed group");
        let e = Search::new("a{1000}{1000}", true, false).unwrap_err();
        assert!(
            e.starts_with("invalid regex: Compiled regex exceeds"),
            "{e}"
        );
        assert!(Search::new("(?=x)", true, false).is_err());
        assert!(Search::new("a\nb", false, false).is_err());
    }

    #[test]
    fn required_literals() {
        let r = |p| required_literal(p).map(|v| String::from_utf8(v).unwrap());
        assert_eq!(r(r"fn \w+_mut\("), Some("_mut(".into()));
        assert_eq!(r("abc?d"), Some("ab".into()));
        assert_eq!(r("ab*cdef"), Some("cdef".into()));
        assert_eq!(r("x{2}yz"), Some("yz".into()));
        assert_eq!(r("(ab|cd)ef"), Some("ef".into()));
        assert_eq!(r("ab|cd"), None);
        assert_eq!(r(r"\x41bc"), None);
        assert_eq!(r("[a-z]+foo[]x]bar"), Some("foo".into()));
        assert_eq!(r("éé?x"), Some("é".into()));
        assert_eq!(r("(?i)abc"), None);
        assert_eq!(r(r"\w+"), None);
    }
}
