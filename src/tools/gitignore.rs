//! `.gitignore` rules, as gitignore(5) says and git does (pure: the walker
//! reads the files and keeps one [`Rules`] per directory that has one).
//!
//! Per line (one CR before the LF dropped, as git drops it): a blank line or one starting with `#` is nothing (`\#` is a
//! literal `#`); trailing spaces are dropped unless escaped (`\ `); a
//! leading `!` negates (re-includes; `\!` is a literal `!`); a trailing `/`
//! makes the rule match directories only; a rule with a `/` at its start
//! or in its middle is anchored to the `.gitignore`'s directory (the
//! leading `/` dropped), one without matches a name at any depth below
//! it. The wildcards are wildmatch's ([`super::pattern`], no braces). A
//! line that does not compile (an unclosed `[`, a trailing `\`) never
//! matches, as in git. The last matching line of a file decides; a
//! deeper `.gitignore` is asked before a shallower one ([`decide`]); a
//! file under an ignored directory is ignored whatever a rule says,
//! because the walker never enters that directory.
//!
//! The walker reads the `.gitignore` files at and below the walk's `path`;
//! those above it and `.git/info/exclude`, in a repository, come from
//! [`super::ignore_up`]; `core.excludesFile` is never read.

use super::pattern::Pattern;

#[derive(Debug)]
struct Rule {
    pattern: Pattern,
    negated: bool,
    dir_only: bool,
    /// No `/` but a trailing one: matched against the name only.
    base: bool,
}

/// The rules of one `.gitignore` file.
#[derive(Debug, Default)]
pub struct Rules {
    rules: Vec<Rule>,
}

impl Rules {
    /// Parses a `.gitignore`'s bytes.
    pub fn parse(text: &[u8]) -> Rules {
        // A CR ending a line is dropped, as git does (a CRLF file reads as
        // LF); an escaped one (`a\` CR CR LF) stays as the name's CR.
        let lines = text.split(|&b| b == b'\n');
        let rules = lines
            .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
            .filter_map(rule)
            .collect();
        Rules { rules }
    }

    /// Whether there are no rules.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// `Some(true)` ignored, `Some(false)` re-included, `None` no rule
    /// matches: for `rel`, the path relative to this file's directory.
    pub fn decide(&self, rel: &[u8], is_dir: bool) -> Option<bool> {
        let name = match memchr::memrchr(b'/', rel) {
            Some(i) => &rel[i + 1..],
            None => rel,
        };
        self.rules
            .iter()
            .rev()
            .find(|r| (is_dir || !r.dir_only) && r.pattern.matches(if r.base { name } else { rel }))
            .map(|r| !r.negated)
    }
}

/// The decision of a stack of `.gitignore`s, deepest last: each with the
/// path of the entry relative to its directory.
pub fn decide<'a>(
    stack: impl DoubleEndedIterator<Item = (&'a Rules, &'a [u8])>,
    is_dir: bool,
) -> bool {
    for (rules, rel) in stack.rev() {
        if let Some(d) = rules.decide(rel, is_dir) {
            return d;
        }
    }
    false
}

fn rule(line: &[u8]) -> Option<Rule> {
    let line = trim_trailing_spaces(line);
    if line.is_empty() || line[0] == b'#' {
        return None;
    }
    let (negated, mut p) = match line.strip_prefix(b"!") {
        Some(rest) => (true, rest),
        None => (false, line),
    };
    let dir_only = p.last() == Some(&b'/');
    if dir_only {
        p = &p[..p.len() - 1];
    }
    let base = !p.contains(&b'/');
    let p = p.strip_prefix(b"/").unwrap_or(p);
    if p.is_empty() {
        return None;
    }
    let pattern = Pattern::compile(p).ok()?;
    Some(Rule {
        pattern,
        negated,
        dir_only,
        base,
    })
}

/// Drops trailing spaces that no backslash escapes (git's rule: `a\ ` keeps
/// its escaped space, `a\\ ` is a literal backslash and loses the space).
fn trim_trailing_spaces(line: &[u8]) -> &[u8] {
    let mut end = line.len();
    let mut i = 0;
    let mut space_run: Option<usize> = None;
    while i < line.len() {
        match line[i] {
            b' ' => {
                space_run.get_or_insert(i);
            }
            b'\\' => {
                space_run = None;
                i += 1;
            }
            _ => space_run = None,
        }
        i += 1;
    }
    if let Some(s) = space_run {
        end = s;
    }
    &line[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ig(rules: &str, path: &str, is_dir: bool) -> Option<bool> {
        Rules::parse(rules.as_bytes()).decide(path.as_bytes(), is_dir)
    }

    #[test]
    fn names_anchors_and_directories() {
        assert_eq!(ig("*.o", "a/b/x.o", false), Some(true));
        assert_eq!(ig("build/", "build", true), Some(true));
        assert_eq!(ig("build/", "build", false), None);
        assert_eq!(ig("build/", "x/build", true), Some(true));
        assert_eq!(ig("/build", "x/build", true), None);
        assert_eq!(ig("/build", "build", false), Some(true));
        assert_eq!(ig("doc/*.txt", "doc/a.txt", false), Some(true));
        assert_eq!(ig("doc/*.txt", "x/doc/a.txt", false), None);
        assert_eq!(ig("doc/*.txt", "doc/x/a.txt", false), None);
        assert_eq!(ig("**/foo", "a/b/foo", false), Some(true));
        assert_eq!(ig("a/**/b", "a/b", false), Some(true));
        assert_eq!(ig("abc/**", "abc/x/y", false), Some(true));
        assert_eq!(ig("abc/**", "abc", true), None);
    }

    #[test]
    fn negation_comments_escapes_and_spaces() {
        assert_eq!(ig("*.log\n!keep.log", "keep.log", false), Some(false));
        assert_eq!(ig("!keep.log\n*.log", "keep.log", false), Some(true));
        assert_eq!(ig("#x", "#x", false), None);
        assert_eq!(ig("\\#x", "#x", false), Some(true));
        assert_eq!(ig("\\!x", "!x", false), Some(true));
        assert_eq!(ig("x  ", "x", false), Some(true));
        assert_eq!(ig("x\\ ", "x ", false), Some(true));
        assert_eq!(ig("x\\  ", "x ", false), Some(true));
        assert_eq!(ig("x\\\\ ", "x\\", false), Some(true));
        assert_eq!(ig("x\t", "x\t", false), Some(true));
        assert_eq!(ig("[ab", "[ab", false), None);
        assert_eq!(ig("\n\n   \n", "x", false), None);
        assert_eq!(ig("/", "x", true), None);
    }

    /// git 2.47 `check-ignore` on a CRLF `.gitignore`: `a.txt` CR LF
    /// ignores `a.txt`, not `a.txt` CR; `b\` CR CR LF ignores `b` CR.
    #[test]
    fn a_crlf_file_reads_as_lf() {
        let rules = "a.txt\r\nb\\\r\r\n!c\r\nc\r\n";
        assert_eq!(ig(rules, "a.txt", false), Some(true));
        assert_eq!(ig(rules, "a.txt\r", false), None);
        assert_eq!(ig(rules, "b\r", false), Some(true));
        assert_eq!(ig(rules, "b", false), None);
        assert_eq!(ig("x\r\n!x\r\n", "x", false), Some(false));
    }

    #[test]
    fn a_deeper_file_decides_first() {
        let top = Rules::parse(b"*.log\n");
        let sub = Rules::parse(b"!keep.log\n");
        let stack = [(&top, &b"sub/keep.log"[..]), (&sub, &b"keep.log"[..])];
        assert!(!decide(stack.iter().copied(), false));
        assert!(decide(stack[..1].iter().copied(), false));
    }
}
