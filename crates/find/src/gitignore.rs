//! `.gitignore` rules, as gitignore(5) says and git does (pure: the walker
//! reads the files and keeps one [`Rules`] per directory that has one).
//!
//! Per line (one CR before the LF dropped, as git drops it): a blank line or one starting with `#` is nothing (`\#` is a
//! literal `#`); trailing spaces are dropped unless escaped (`\ `); a
//! leading `!` negates (re-includes; `\!` is a literal `!`); a trailing `/`
//! makes the rule match directories only; a rule with a `/` at its start
//! or in its middle is anchored to the `.gitignore`'s directory (the
//! leading `/` dropped), one without matches a name at any depth below
//! it. The wildcards are wildmatch's ([`super::pattern`], no braces),
//! matched a byte at a time as git and ripgrep do (`?` and `[!a]` match
//! one byte, so neither matches `é`; `??` does; a reversed range `[z-a]`
//! is its start alone, as in git). An anchored rule is matched as git's
//! `match_pathname`: its literal start, then the rest against the rest of
//! the path (so `a**/**` matches `a`). A
//! line that does not compile (an unclosed `[`, a trailing `\`) never
//! matches, as in git. The last matching line of a file decides; a
//! deeper `.gitignore` is asked before a shallower one ([`decide`]); a
//! file under an ignored directory is ignored whatever a rule says,
//! because the walker never enters that directory.
//!
//! The walker reads the `.gitignore` files at and below the walk's `path`;
//! those above it and `.git/info/exclude`, in a repository, come from
//! `ignore_up`; `core.excludesFile` is never read.

use super::pattern::{Pattern, Units};

/// A rule's kind: how it is matched, and so which set holds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// No wildcard, no `/`: the name equals the literal.
    Name,
    /// No wildcard, anchored: the path equals the literal.
    Path,
    /// `*` then a literal, no `/`: the name ends with it.
    Suffix,
    /// A literal then `*`, no `/`: the name starts with it.
    Prefix,
    /// Anything else: wildmatch, compiled when asked.
    Other,
}

/// One rule: where its bytes lie in [`Rules::text`] (the literal, escapes
/// resolved, for the literal kinds; the pattern for [`Kind::Other`]).
#[derive(Clone, Copy, Debug)]
struct Rule {
    at: u32,
    len: u32,
    kind: Kind,
    negated: bool,
    dir_only: bool,
    /// No `/` but a trailing one: matched against the name only.
    base: bool,
}

/// The rules of one `.gitignore` file, compact: every rule's bytes in one
/// buffer and a fixed-size record per rule (no allocation per rule), so a
/// file costs about its size plus 16 bytes a rule ([`Rules::held`]).
///
/// Matching does not try every rule on every path: the literal kinds are
/// looked up in sorted sets (a name, a path, each suffix or prefix length
/// present), and only the other rules, from the last, go through
/// wildmatch, and only those whose literal start the path has. The answer
/// is the highest-numbered matching rule of all of them, so the last
/// matching line still decides, negated or not.
#[derive(Debug, Default)]
pub struct Rules {
    text: Vec<u8>,
    rules: Vec<Rule>,
    names: Set,
    paths: Set,
    suffixes: Set,
    prefixes: Set,
    /// Indices of [`Kind::Other`] rules, ascending.
    other: Vec<u32>,
}

/// The rules of one kind sorted by (bytes, `dir_only`, index), and the
/// distinct lengths of their bytes (for suffixes and prefixes).
#[derive(Debug, Default)]
struct Set {
    idx: Vec<u32>,
    lens: Vec<u32>,
}

impl Rules {
    /// Parses a `.gitignore`'s bytes.
    pub fn parse(text: &[u8]) -> Rules {
        let mut r = Rules::default();
        // A CR ending a line is dropped, as git does (a CRLF file reads as
        // LF); an escaped one (`a\` CR CR LF) stays as the name's CR.
        for l in text.split(|&b| b == b'\n') {
            r.push(l.strip_suffix(b"\r").unwrap_or(l));
        }
        for (i, rule) in r.rules.iter().enumerate() {
            let set = match rule.kind {
                Kind::Name => &mut r.names,
                Kind::Path => &mut r.paths,
                Kind::Suffix => &mut r.suffixes,
                Kind::Prefix => &mut r.prefixes,
                Kind::Other => {
                    r.other.push(i as u32);
                    continue;
                }
            };
            set.idx.push(i as u32);
            set.lens.push(rule.len);
        }
        let (text, rules) = (&r.text, &r.rules);
        for set in [&mut r.names, &mut r.paths, &mut r.suffixes, &mut r.prefixes] {
            set.idx.sort_unstable_by(|&a, &b| {
                let (x, y) = (rules[a as usize], rules[b as usize]);
                let key = |r: Rule| (bytes(text, r), r.dir_only);
                key(x).cmp(&key(y)).then(a.cmp(&b))
            });
            set.lens.sort_unstable();
            set.lens.dedup();
            set.idx.shrink_to_fit();
            set.lens.shrink_to_fit();
        }
        r.text.shrink_to_fit();
        r.rules.shrink_to_fit();
        r.other.shrink_to_fit();
        r
    }

    /// Whether there are no rules.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// The bytes these rules hold (what the walk's bound counts).
    pub fn held(&self) -> usize {
        let sets = [&self.names, &self.paths, &self.suffixes, &self.prefixes];
        let idx: usize = sets.iter().map(|s| s.idx.len() + s.lens.len()).sum();
        self.text.len() + self.rules.len() * size_of::<Rule>() + (idx + self.other.len()) * 4
    }

    /// `Some(true)` ignored, `Some(false)` re-included, `None` no rule
    /// matches: for `rel`, the path relative to this file's directory.
    pub fn decide(&self, rel: &[u8], is_dir: bool) -> Option<bool> {
        let name = match memchr::memrchr(b'/', rel) {
            Some(i) => &rel[i + 1..],
            None => rel,
        };
        let find = |set: &Set, key: &[u8]| self.last_in(set, key, is_dir);
        let mut best = find(&self.names, name).max(find(&self.paths, rel));
        for &l in &self.suffixes.lens {
            if let Some(at) = name.len().checked_sub(l as usize) {
                best = best.max(find(&self.suffixes, &name[at..]));
            }
        }
        for &l in &self.prefixes.lens {
            if let Some(p) = name.get(..l as usize) {
                best = best.max(find(&self.prefixes, p));
            }
        }
        for &i in self.other.iter().rev() {
            if best.is_some_and(|b| b > i) {
                break;
            }
            let r = self.rules[i as usize];
            let s = if r.base { name } else { rel };
            if (is_dir || !r.dir_only) && self.wildmatch(r, s) {
                best = Some(i);
                break;
            }
        }
        best.map(|i| !self.rules[i as usize].negated)
    }

    /// The highest index in `set` of a rule whose bytes are `key` and that
    /// applies to the entry (a `dir_only` rule to directories only).
    fn last_in(&self, set: &Set, key: &[u8], is_dir: bool) -> Option<u32> {
        let rule = |i: &u32| self.rules[*i as usize];
        let lo = set
            .idx
            .partition_point(|i| bytes(&self.text, rule(i)) < key);
        let hi = lo + set.idx[lo..].partition_point(|i| bytes(&self.text, rule(i)) == key);
        let split = lo + set.idx[lo..hi].partition_point(|i| !rule(i).dir_only);
        let any = (split > lo).then(|| set.idx[split - 1]);
        let dir = (is_dir && hi > split).then(|| set.idx[hi - 1]);
        any.max(dir)
    }

    /// Whether the [`Kind::Other`] rule `r` matches `s`: its literal start
    /// and (without escapes) end first, no allocation; then the compiled
    /// pattern.
    fn wildmatch(&self, r: Rule, s: &[u8]) -> bool {
        let p = bytes(&self.text, r);
        let special = |b: &u8| b"\\*?[]".contains(b);
        let head = p.iter().position(special).unwrap_or(p.len());
        // After the last wildcard or class, only literal tokens: the end
        // (but a `/` right after `**`, which `**/` may match as nothing).
        let tail = match p.contains(&b'\\') {
            true => &[][..],
            false => {
                let t = &p[p.iter().rposition(special).map_or(p.len(), |i| i + 1)..];
                t.strip_prefix(b"/").unwrap_or(t)
            }
        };
        if !s.starts_with(&p[..head]) || !s.ends_with(tail) {
            return false;
        }
        // An anchored rule is matched as git's match_pathname does: its
        // literal start (to the first `*`, `?`, `[` or `\\`) compared, then
        // the rest against the rest of the path, so a `**` right after that
        // start is a leading one (`a**/**` matches `a`, `a**/b` `a/x/b`).
        let pre = match r.base {
            true => 0,
            false => p
                .iter()
                .position(|b| b"*?[\\".contains(b))
                .unwrap_or(p.len()),
        };
        s.starts_with(&p[..pre])
            && Pattern::compile_in(&p[pre..], Units::Bytes).is_ok_and(|c| c.matches(&s[pre..]))
    }

    /// Adds the rule of one line, if it is one.
    fn push(&mut self, line: &[u8]) {
        let line = trim_trailing_spaces(line);
        if line.is_empty() || line[0] == b'#' {
            return;
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
        // A line that does not compile never matches, as in git.
        if p.is_empty() || Pattern::compile_in(p, Units::Bytes).is_err() {
            return;
        }
        let at = self.text.len();
        let kind = match (literal(p), p.split_first(), p.split_last()) {
            (Some(l), ..) => {
                self.text.extend_from_slice(&l);
                if base {
                    Kind::Name
                } else {
                    Kind::Path
                }
            }
            (_, Some((b'*', rest)), _) if base && rest.first() != Some(&b'*') => {
                match literal(rest) {
                    Some(l) => {
                        self.text.extend_from_slice(&l);
                        Kind::Suffix
                    }
                    None => Kind::Other,
                }
            }
            (_, _, Some((b'*', rest))) if base && rest.last() != Some(&b'*') => {
                match literal(rest).filter(|_| !rest.ends_with(b"\\")) {
                    Some(l) => {
                        self.text.extend_from_slice(&l);
                        Kind::Prefix
                    }
                    None => Kind::Other,
                }
            }
            _ => Kind::Other,
        };
        if kind == Kind::Other {
            self.text.extend_from_slice(p);
        }
        // A file is at most MAX_IGNORE bytes (ignores.rs): within u32.
        self.rules.push(Rule {
            at: at as u32,
            len: (self.text.len() - at) as u32,
            kind,
            negated,
            dir_only,
            base,
        });
    }
}

/// The bytes of rule `r`.
fn bytes(text: &[u8], r: Rule) -> &[u8] {
    &text[r.at as usize..(r.at + r.len) as usize]
}

/// What `p` matches when it has no wildcard: its bytes, escapes resolved.
fn literal(p: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(p.len());
    let mut it = p.iter();
    while let Some(&b) = it.next() {
        match b {
            b'*' | b'?' | b'[' => return None,
            b'\\' => out.push(*it.next()?),
            _ => out.push(b),
        }
    }
    Some(out)
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

    /// git 2.47's `check-ignore --no-index` on each path under these rules.
    #[test]
    fn an_anchored_rule_matches_past_its_literal_start_as_git_and_a_reversed_range_is_its_start() {
        let rules = "a**/**\np**/b\nx/y**/z\nm[z-a]\n/n*[z-a]\n";
        let ignored = [
            "a", "a/f", "p/b", "p/x/b", "p/x/y/b", "pb", "x/y/z", "x/yy/z", "x/y/q/z", "x/yq/r/z",
            "mz", "nz", "nqz",
        ];
        for p in ignored {
            assert_eq!(ig(rules, p, false), Some(true), "{p}");
        }
        for p in ["ma", "my", "n/z"] {
            assert_eq!(ig(rules, p, false), None, "{p}");
        }
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

    /// git 2.47 `check-ignore` on non-ASCII names: a rule's `?`, `[!a]` and
    /// `[…]` match one byte (`é` is two), as ripgrep's do too.
    #[test]
    fn wildcards_match_one_byte_as_git_does() {
        for (rule, ignored) in [
            ("?", false),
            ("??", true),
            ("[!a]", false),
            ("[^a]", false),
            ("[!a][!a]", true),
            ("[!a]?", true),
            ("[é]", false),
            ("[é][é]", true),
            ("[!é]", false),
            ("[é-ë]", false),
            ("*", true),
            ("é", true),
        ] {
            let d = ig(rule, "é", false);
            assert_eq!(d, ignored.then_some(true), "{rule} against é");
        }
        assert_eq!(ig("caf?", "café", false), None);
        assert_eq!(ig("caf??", "café", false), Some(true));
        assert_eq!(ig("[é-ë][é-ë]", "ê", false), Some(true));
        assert_eq!(ig("x/caf??", "x/café", false), Some(true));
    }

    /// Rules held compactly: about the file's size, not a token per byte.
    #[test]
    fn rules_are_held_in_about_their_size() {
        let text: String = (0..20_000)
            .map(|i| format!("dir{i}/file_{i}.txt\n"))
            .collect();
        let r = Rules::parse(text.as_bytes());
        assert!(r.held() < text.len() * 2, "{} for {}", r.held(), text.len());
        assert_eq!(r.decide(b"dir7/file_7.txt", false), Some(true));
        assert_eq!(r.decide(b"dir7/file_8.txt", false), None);
    }

    /// What the rules decided before they were sorted by kind: every rule
    /// compiled, the last that matches deciding.
    fn reference(text: &[u8], rel: &[u8], is_dir: bool) -> Option<bool> {
        let name = rel.rsplit(|&b| b == b'/').next().unwrap_or(rel);
        let mut out = None;
        for l in text.split(|&b| b == b'\n') {
            let l = trim_trailing_spaces(l.strip_suffix(b"\r").unwrap_or(l));
            if l.is_empty() || l[0] == b'#' {
                continue;
            }
            let (neg, mut p) = match l.strip_prefix(b"!") {
                Some(r) => (true, r),
                None => (false, l),
            };
            let dir_only = p.last() == Some(&b'/');
            if dir_only {
                p = &p[..p.len() - 1];
            }
            let base = !p.contains(&b'/');
            let p = p.strip_prefix(b"/").unwrap_or(p);
            if Pattern::compile_in(p, Units::Bytes).is_err() {
                continue;
            }
            // git's match_pathname: the literal start, then the rest.
            let pre = match base {
                true => 0,
                false => p
                    .iter()
                    .position(|b| b"*?[\\".contains(b))
                    .unwrap_or(p.len()),
            };
            let s = if base { name } else { rel };
            let c = Pattern::compile_in(&p[pre..], Units::Bytes).expect("compiles");
            let hit = s.starts_with(&p[..pre]) && c.matches(&s[pre..]);
            if !p.is_empty() && (is_dir || !dir_only) && hit {
                out = Some(!neg);
            }
        }
        out
    }

    /// Pieces that hit every kind of rule and the corners between them.
    const PIECES: &[&str] = &[
        "a", "b", "ab", ".o", "x.o", "*", "**", "**/", "/**/", "?", "[ab]", "[!a]", "\\*", "\\",
        "é", "/", "\\!", "!", "#", " ", "\\ ", "[", "]", "-", "\\[",
    ];

    fn line() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        proptest::collection::vec(proptest::sample::select(PIECES), 0..5).prop_map(|v| v.concat())
    }

    fn path() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        const NAMES: &[&str] = &["a", "b", "ab", "x.o", ".o", "é", "*", "aé", "a b", "!", "#"];
        proptest::collection::vec(proptest::sample::select(NAMES), 1..4).prop_map(|v| v.join("/"))
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]
        #[test]
        fn sorting_rules_by_kind_changes_no_decision(
            lines in proptest::collection::vec(line(), 0..12),
            paths in proptest::collection::vec(path(), 1..8),
        ) {
            let text = lines.join("\n");
            let rules = Rules::parse(text.as_bytes());
            for p in &paths {
                for is_dir in [false, true] {
                    let want = reference(text.as_bytes(), p.as_bytes(), is_dir);
                    proptest::prop_assert_eq!(
                        rules.decide(p.as_bytes(), is_dir), want, "{:?} on {:?}", text, p
                    );
                }
            }
        }
    }
}
