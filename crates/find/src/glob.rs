//! The `glob` pattern of the `glob` and `grep` ops (pure: no I/O).
//!
//! Ripgrep's and gitignore's rules ([`super::pattern`] has the wildcard
//! dialect): `*` and `?` within a component, `**` across components,
//! `[…]` classes, and `{a,b}` alternation (nested braces too; at most
//! [`MAX_ALTERNATIVES`] alternatives after expansion; `\{` is a literal
//! brace; an empty alternative is dropped when its group has another, as
//! ripgrep 13 drops it: `x{,.rs}` is `x.rs`, `a{}` is `a`, `{,}` matches
//! nothing). An alternative without `/` matches the file's name at any depth
//! (`*.rs` is every Rust file); one with `/` matches the whole path
//! relative to the op's `path` (`src/*.rs` only directly in `src`). A
//! leading `./` anchors (`./*.rs` is the Rust files directly in `path`). Refused as `invalid_argument`: an empty
//! pattern, an absolute one, one with a `..` component (a walk never
//! leaves `path`, so such a pattern could only match nothing), an
//! unclosed `[` or `{`, a trailing `\`, too many alternatives.

use super::pattern::{Pattern, PatternError};

/// At most this many alternatives once `{…}` is expanded (`{a,b}{c,d}` is 4).
pub const MAX_ALTERNATIVES: usize = 256;

/// A compiled `glob` pattern.
#[derive(Clone, Debug)]
pub struct Glob {
    alts: Vec<(Pattern, bool)>,
}

impl Glob {
    /// Compiles `g`, or says why it is not a pattern.
    pub fn new(g: &str) -> Result<Glob, PatternError> {
        if g.is_empty() {
            return Err("an empty glob".into());
        }
        if g.starts_with('/') {
            return Err(format!(
                "an absolute glob ({g}): globs are relative to the op's path"
            ));
        }
        let mut alts = Vec::new();
        for alt in expand(g.as_bytes())? {
            // `./x` is `x` in the op's path only: anchored, as a `/` makes it.
            let base = !alt.contains(&b'/');
            let mut a = &alt[..];
            while let Some(rest) = a.strip_prefix(b"./") {
                a = rest;
            }
            if a.starts_with(b"/") {
                return Err(format!("the glob {g} has an absolute alternative"));
            }
            if a.is_empty() {
                continue; // `{}` or `{,}`: matches no file, as in ripgrep
            }
            if a.split(|&b| b == b'/').any(|c| c == b"..") {
                return Err(format!(
                    "the glob {g} has a .. component: globs match below the op's path"
                ));
            }
            alts.push((Pattern::compile(a)?, base));
        }
        Ok(Glob { alts })
    }

    /// Whether the file at `rel` (relative to the op's path, `/`-separated)
    /// matches.
    pub fn matches(&self, rel: &[u8]) -> bool {
        let name = match memchr::memrchr(b'/', rel) {
            Some(i) => &rel[i + 1..],
            None => rel,
        };
        self.alts
            .iter()
            .any(|(p, base)| p.matches(if *base { name } else { rel }))
    }
}

/// Expands `{a,b}` alternation (braces within classes and escaped braces
/// are literal); a `}` or `,` outside braces is literal.
fn expand(g: &[u8]) -> Result<Vec<Vec<u8>>, PatternError> {
    let Some((open, close, commas)) = first_group(g)? else {
        return Ok(vec![g.to_vec()]);
    };
    let mut out = Vec::new();
    let mut start = open + 1;
    let ends: Vec<usize> = commas.into_iter().chain([close]).collect();
    // As ripgrep 13's globset: an empty alternative is dropped when the
    // group has another (`x{,.rs}` is `x.rs` only); `a{}` is `a`.
    let all_empty = {
        let mut s = open + 1;
        ends.iter().all(|&e| std::mem::replace(&mut s, e + 1) == e)
    };
    for end in ends {
        if start == end && !all_empty {
            start = end + 1;
            continue;
        }
        let mut s = g[..open].to_vec();
        s.extend_from_slice(&g[start..end]);
        s.extend_from_slice(&g[close + 1..]);
        for e in expand(&s)? {
            if out.len() == MAX_ALTERNATIVES {
                return Err(format!(
                    "the glob has more than {MAX_ALTERNATIVES} alternatives"
                ));
            }
            out.push(e);
        }
        start = end + 1;
    }
    Ok(out)
}

/// The first top-level `{`, its matching `}` and its top-level commas.
#[allow(clippy::type_complexity)]
fn first_group(g: &[u8]) -> Result<Option<(usize, usize, Vec<usize>)>, PatternError> {
    let mut i = 0;
    let mut open = None;
    let mut depth = 0;
    let mut commas = Vec::new();
    while i < g.len() {
        match g[i] {
            b'\\' => i += 1,
            b'[' => i = skip_class(g, i),
            b'{' => {
                if depth == 0 {
                    open = Some(i);
                }
                depth += 1;
            }
            b'}' if depth > 0 => {
                depth -= 1;
                if depth == 0 {
                    return Ok(open.map(|o| (o, i, commas)));
                }
            }
            b',' if depth == 1 => commas.push(i),
            _ => {}
        }
        i += 1;
    }
    if depth > 0 {
        return Err("an unclosed { (an alternation)".into());
    }
    Ok(None)
}

/// The index of the `]` closing the class at `i` (or `i` when it has none:
/// the pattern compiler refuses it then).
fn skip_class(g: &[u8], i: usize) -> usize {
    let mut j = i + 1;
    if matches!(g.get(j), Some(b'!') | Some(b'^')) {
        j += 1;
    }
    if g.get(j) == Some(&b']') {
        j += 1;
    }
    while j < g.len() {
        match g[j] {
            b'\\' => j += 1,
            b'[' if g.get(j + 1) == Some(&b':') => {
                if let Some(e) = g[j + 2..].windows(2).position(|w| w == b":]") {
                    j += 2 + e + 1;
                }
            }
            b']' => return j,
            _ => {}
        }
        j += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(g: &str, p: &str) -> bool {
        Glob::new(g).unwrap().matches(p.as_bytes())
    }

    #[test]
    fn a_glob_without_a_slash_matches_the_name_at_any_depth() {
        assert!(m("*.rs", "a.rs"));
        assert!(m("*.rs", "src/x/a.rs"));
        assert!(!m("*.rs", "src/a.rs/b"));
        assert!(m("src/*.rs", "src/a.rs"));
        assert!(!m("src/*.rs", "x/src/a.rs"));
        assert!(m("**/src/*.rs", "x/src/a.rs"));
        assert!(m("./src/*.rs", "src/a.rs"));
        assert!(m("./*.rs", "a.rs"));
        assert!(!m("./*.rs", "src/a.rs"));
        assert!(m("src/**", "src/a/b.c"));
    }

    #[test]
    fn braces_expand_nested_and_escaped() {
        assert!(m("*.{rs,toml}", "x/Cargo.toml"));
        assert!(m("*.{rs,toml}", "lib.rs"));
        assert!(!m("*.{rs,toml}", "lib.c"));
        assert!(m("{a,b{c,d}}.x", "bd.x"));
        assert!(m("{src/*.rs,*.md}", "README.md"));
        assert!(m("{src/*.rs,*.md}", "src/a.rs"));
        assert!(!m("{src/*.rs,*.md}", "x/a.rs"));
        assert!(m("\\{a,b}", "{a,b}"));
        assert!(m("[{]x}", "{x}"));
        assert!(m("a}b", "a}b"));
        // ripgrep 13 (`rg --files -g`): empty alternatives dropped.
        assert!(!m("{,x}y", "y") && m("{,x}y", "xy"));
        assert!(m("{,a}", "a") && !m("x{,.rs}", "x") && m("x{,.rs}", "x.rs"));
        assert!(m("a{}", "a") && m("{a,,b}", "b"));
        assert!(!m("{,}", "a") && !m("{}", "a"));
        assert_eq!(
            Glob::new("{a,b}{c,d}{e,f}").unwrap().alts.len(),
            8,
            "alternatives multiply"
        );
    }

    #[test]
    fn bad_globs_are_refused_with_a_reason() {
        for (g, why) in [
            ("", "empty"),
            ("/etc/*", "absolute"),
            ("../*", ".."),
            ("a/../b", ".."),
            ("{a,../b}", ".."),
            ("{a,/b}", "absolute"),
            ("[ab", "unclosed ["),
            ("{a,b", "unclosed {"),
            ("a\\", "trailing"),
            (&"{a,b}".repeat(9), "more than 256"),
        ] {
            let e = Glob::new(g).unwrap_err();
            assert!(e.contains(why), "{g}: {e}");
        }
        assert!(Glob::new(&"{a,b}".repeat(8)).is_ok());
        assert!(Glob::new("a..b/..c").is_ok());
    }
}
