//! The `glob` tool: Python 3.11's `pathlib.Path.glob` as the reference
//! calls it, then its confinement, its newest-first sort and its cut.
//!
//! The pattern is split at `/` (empty and `.` components dropped; a final
//! `/` adds an empty one, which yields the directory reached). Each
//! component is a selector, as pathlib's are:
//! - `**`: the directory itself and every directory below it, in the walk's
//!   order (readdir's, as `os.scandir`), never through a symlink; what the
//!   rest selects from each is yielded once;
//! - a component holding `*`, `?` or `[`: the directory's entries whose
//!   name matches it ([`Pattern`], fnmatch's rules); where components
//!   follow, only entries that are directories (through symlinks);
//! - anything else: that name, if it exists (is a directory where
//!   components follow), through symlinks.
//!
//! Every match is then resolved as the reference's `_confined` does and
//! dropped when it leaves the search root; the first 50,000 matches are
//! kept, sorted by `st_mtime` (a float, as Python computes it) newest
//! first, stable, and the first 200 printed as absolute paths.

use std::collections::HashSet;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::path::{canonicalize, display, resolve};

/// Matches printed at most.
pub const RESULT_LIMIT: usize = 200;
/// Matches collected at most (the reference's `islice`).
pub const WALK_MAX_ENTRIES: usize = 50_000;

/// One component of a glob.
enum Sel {
    Recursive,
    Wild(Pattern),
    Precise(Vec<u8>),
    /// After a final `/`: the directory itself.
    End,
}

/// The tool's text, or the reference's refusal.
#[cfg_attr(as_edit_small, optimize(size))]
pub fn glob(cwd: &Path, pattern: &str, path: Option<&str>) -> Result<String, String> {
    if pattern.starts_with('/') {
        return Err(
            "glob: absolute pattern not permitted; pass a relative pattern (and optionally path)"
                .into(),
        );
    }
    let mut parts: Vec<&str> = pattern
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    if parts.contains(&"..") {
        return Err("glob: '..' is not permitted in the pattern".into());
    }
    let root = match path {
        Some(p) if !p.is_empty() => {
            resolve(&super::root(cwd), p).map_err(|r| format!("glob: {r}"))?
        }
        _ => super::root(cwd),
    };
    if pattern.is_empty() {
        return Err("glob: Unacceptable pattern: ''".into());
    }
    if pattern.ends_with('/') {
        if parts.is_empty() {
            // `./`: pathlib's selector for the empty component alone has no
            // `select_from` (a Python 3.11 bug the tool passes on).
            return Err(
                "AttributeError(\"'_TerminatingSelector' object has no attribute 'select_from'\")"
                    .into(),
            );
        }
        parts.push("");
    }
    if parts.is_empty() {
        // `_make_selector` indexes an empty tuple: not a ToolError.
        return Err("IndexError('tuple index out of range')".into());
    }
    let mut sels = Vec::new();
    for p in parts {
        sels.push(if p.is_empty() {
            Sel::End
        } else if p == "**" {
            Sel::Recursive
        } else if p.contains("**") {
            return Err("glob: Invalid pattern: '**' can only be an entire path component".into());
        } else if p.contains(['*', '?', '[']) {
            Sel::Wild(Pattern::new(p)?)
        } else {
            Sel::Precise(p.as_bytes().to_vec())
        });
        if matches!(sels.last(), Some(Sel::End)) {
            break;
        }
    }
    let mut found = Vec::new();
    if is_dir(&root) {
        select(&sels, &root, &mut found)?;
    }
    found.truncate(WALK_MAX_ENTRIES);
    let mut found: Vec<(f64, PathBuf)> = found
        .into_iter()
        .filter(|m| canonicalize(m).is_ok_and(|c| c.starts_with(&root)))
        .map(|m| (mtime(&m), m))
        .collect();
    if found.is_empty() {
        return Ok("no matches".into());
    }
    // Stable, newest first; a NaN cannot occur (finite seconds).
    found.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap_or(std::cmp::Ordering::Equal));
    let lines: Vec<String> = found
        .iter()
        .take(RESULT_LIMIT)
        .map(|(_, p)| display(p.as_os_str()))
        .collect();
    Ok(lines.join("\n"))
}

/// `Path.stat().st_mtime`, or 0.0 where it fails.
fn mtime(p: &Path) -> f64 {
    std::fs::metadata(p).map_or(0.0, |m| m.mtime() as f64 + m.mtime_nsec() as f64 * 1e-9)
}

fn is_dir(p: &Path) -> bool {
    std::fs::metadata(p).is_ok_and(|m| m.is_dir())
}

fn full(found: &[PathBuf]) -> bool {
    found.len() >= WALK_MAX_ENTRIES
}

/// The directory's entries as `os.scandir` lists them (readdir order);
/// none when it cannot be read, but no descriptor to read it with is the
/// `OSError` the reference raises (one directory is open at a time: a
/// limit under four descriptors).
fn entries(dir: &Path) -> Result<Vec<std::fs::DirEntry>, String> {
    match std::fs::read_dir(dir) {
        Ok(rd) => Ok(rd.flatten().collect()),
        Err(e) if matches!(e.raw_os_error(), Some(24 | 23)) => Err(format!(
            "[Errno {}] {}: '{}'",
            e.raw_os_error().unwrap_or(0),
            if e.raw_os_error() == Some(24) {
                "Too many open files"
            } else {
                "Too many open files in system"
            },
            display(dir.as_os_str())
        )),
        Err(_) => Ok(Vec::new()),
    }
}

fn select(sels: &[Sel], parent: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
    let Some((sel, rest)) = sels.split_first() else {
        out.push(parent.to_owned());
        return Ok(());
    };
    // Components follow (a final `/` counts): only directories lead on.
    let dironly = !rest.is_empty();
    match sel {
        Sel::End => out.push(parent.to_owned()),
        Sel::Precise(name) => {
            let p = parent.join(std::ffi::OsStr::from_bytes(name));
            let ok = if dironly {
                is_dir(&p)
            } else {
                std::fs::metadata(&p).is_ok()
            };
            if ok {
                select(rest, &p, out)?;
            }
        }
        Sel::Wild(pat) => {
            for e in entries(parent)? {
                if full(out) {
                    return Ok(());
                }
                let p = e.path();
                if dironly {
                    let dir = match e.file_type() {
                        Ok(t) if t.is_symlink() => is_dir(&p),
                        Ok(t) => t.is_dir(),
                        Err(_) => false,
                    };
                    if !dir {
                        continue;
                    }
                }
                if pat.matches(e.file_name().as_bytes()) {
                    select(rest, &p, out)?;
                }
            }
        }
        Sel::Recursive => {
            let mut dirs = vec![parent.to_owned()];
            let mut i = 0;
            // Depth-first, each directory before what is below it.
            while i < dirs.len() && dirs.len() < WALK_MAX_ENTRIES * 4 {
                let below: Vec<PathBuf> = entries(&dirs[i])?
                    .into_iter()
                    .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                    .map(|e| e.path())
                    .collect();
                i += 1;
                dirs.splice(i..i, below);
            }
            let mut seen = HashSet::new();
            for d in dirs {
                let mut sub = Vec::new();
                select(rest, &d, &mut sub)?;
                for p in sub {
                    if full(out) {
                        return Ok(());
                    }
                    if seen.insert(p.clone()) {
                        out.push(p);
                    }
                }
            }
        }
    }
    Ok(())
}

/// One fnmatch pattern (`fnmatch.translate`'s meaning, case-sensitive,
/// `*` and `?` matching any character, newline included).
pub struct Pattern(Vec<Tok>);

enum Tok {
    Star,
    One,
    Lit(char),
    Class {
        negate: bool,
        items: Vec<(char, char)>,
    },
    Never,
}

/// A name's characters: UTF-8 decoded, each byte of an invalid sequence
/// a private-use character of its own (Python's surrogate escapes, which
/// no pattern character equals).
fn chars_of(name: &[u8]) -> Vec<char> {
    let mut out = Vec::new();
    let mut b = name;
    while !b.is_empty() {
        match std::str::from_utf8(b) {
            Ok(s) => {
                out.extend(s.chars());
                break;
            }
            Err(e) => {
                let (ok, bad) = b.split_at(e.valid_up_to());
                out.extend(std::str::from_utf8(ok).expect("checked").chars());
                let n = e.error_len().unwrap_or(bad.len());
                out.extend(
                    bad[..n]
                        .iter()
                        .map(|&x| char::from_u32(0x10_FF00 + x as u32).expect("valid")),
                );
                b = &bad[n..];
            }
        }
    }
    out
}

impl Pattern {
    /// Compiles `pat` as `fnmatch.translate` reads it (`Err`: the text
    /// of the exception `translate` raises on it).
    pub fn new(pat: &str) -> Result<Pattern, String> {
        let p: Vec<char> = pat.chars().collect();
        let (n, mut i) = (p.len(), 0);
        let mut toks = Vec::new();
        while i < n {
            let c = p[i];
            i += 1;
            match c {
                '*' => {
                    if !matches!(toks.last(), Some(Tok::Star)) {
                        toks.push(Tok::Star);
                    }
                }
                '?' => toks.push(Tok::One),
                '[' => {
                    let mut j = i;
                    if j < n && p[j] == '!' {
                        j += 1;
                    }
                    if j < n && p[j] == ']' {
                        j += 1;
                    }
                    while j < n && p[j] != ']' {
                        j += 1;
                    }
                    if j >= n {
                        toks.push(Tok::Lit('['));
                        continue;
                    }
                    toks.push(class(&p, i, j)?);
                    i = j + 1;
                }
                c => toks.push(Tok::Lit(c)),
            }
        }
        Ok(Pattern(toks))
    }

    /// Whether the whole name matches.
    pub fn matches(&self, name: &[u8]) -> bool {
        let s = chars_of(name);
        let t = &self.0;
        let (mut si, mut ti) = (0, 0);
        let mut back: Option<(usize, usize)> = None;
        loop {
            if ti < t.len() {
                if let Tok::Star = t[ti] {
                    back = Some((ti + 1, si));
                    ti += 1;
                    continue;
                }
                if si < s.len() && one(&t[ti], s[si]) {
                    ti += 1;
                    si += 1;
                    continue;
                }
            } else if si == s.len() {
                return true;
            }
            match back {
                Some((bt, bs)) if bs < s.len() => {
                    back = Some((bt, bs + 1));
                    ti = bt;
                    si = bs + 1;
                }
                _ => return false,
            }
        }
    }
}

fn one(t: &Tok, c: char) -> bool {
    match t {
        Tok::One => true,
        Tok::Lit(l) => *l == c,
        Tok::Class { negate, items } => items.iter().any(|&(a, b)| a <= c && c <= b) != *negate,
        Tok::Never => false,
        Tok::Star => unreachable!("handled by the matcher"),
    }
}

/// `[…]` between `p[i]` (after the `[`) and `p[j]` (the `]`), as
/// `fnmatch.translate` builds its character class: hyphens between chunks
/// are ranges, a reversed range is dropped, an empty class never matches,
/// `[!]`-only is any character, a leading `!` negates.
fn class(p: &[char], i0: usize, j: usize) -> Result<Tok, String> {
    let stuff = &p[i0..j];
    let mut chunks: Vec<Vec<char>> = Vec::new();
    if !stuff.contains(&'-') {
        chunks.push(stuff.to_vec());
    } else {
        let mut i = i0;
        let mut k = if p[i0] == '!' { i0 + 2 } else { i0 + 1 };
        while let Some(at) = (k..j).find(|&x| p[x] == '-') {
            chunks.push(p[i..at].to_vec());
            i = at + 1;
            k = at + 3;
        }
        let chunk = &p[i.min(j)..j];
        if !chunk.is_empty() {
            chunks.push(chunk.to_vec());
        } else if let Some(last) = chunks.last_mut() {
            last.push('-');
        }
        let mut k = chunks.len();
        while k > 1 {
            k -= 1;
            // Python indexes both ends: an emptied chunk is its IndexError.
            let (Some(&prev_last), Some(&first)) = (chunks[k - 1].last(), chunks[k].first()) else {
                return Err("IndexError('string index out of range')".into());
            };
            if prev_last > first {
                let tail: Vec<char> = chunks[k][1..].to_vec();
                chunks[k - 1].pop();
                chunks[k - 1].extend(tail);
                chunks.remove(k);
            }
        }
    }
    let flat: usize = chunks.iter().map(Vec::len).sum::<usize>() + chunks.len().saturating_sub(1);
    if flat == 0 {
        return Ok(Tok::Never);
    }
    if chunks.len() == 1 && chunks[0] == ['!'] {
        return Ok(Tok::One);
    }
    let negate = chunks[0].first() == Some(&'!');
    if negate {
        chunks[0].remove(0);
    }
    // Each hyphen between two chunks is a range from the last character
    // before it to the first after it; every other character is itself.
    let mut items: Vec<(char, char)> = Vec::new();
    for (n, chunk) in chunks.iter().enumerate() {
        let mut rest = &chunk[..];
        if n > 0 {
            let lo = items.pop().map(|(a, _)| a);
            let Some((&hi, r)) = rest.split_first() else {
                // `chunks[k-1] += '-'` only happens to the last chunk.
                continue;
            };
            match lo {
                Some(lo) => items.push((lo, hi)),
                // Nothing before the hyphen but the `^`: a literal `-`.
                None => items.extend([('-', '-'), (hi, hi)]),
            }
            rest = r;
        }
        items.extend(rest.iter().map(|&c| (c, c)));
    }
    Ok(Tok::Class { negate, items })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(p: &str, s: &str) -> bool {
        Pattern::new(p).unwrap().matches(s.as_bytes())
    }

    #[test]
    fn fnmatch_as_python_translates_it() {
        assert!(m("*", ".hidden"));
        assert!(m("*", "new\nline"));
        assert!(m("?", "é"));
        assert!(m("[a-c]*", "b.txt") && !m("[a-c]*", "d"));
        assert!(m("[!a]*", "b") && !m("[!a]*", "a"));
        assert!(m("{a,b}.txt", "{a,b}.txt") && !m("{a,b}.txt", "a.txt"));
        assert!(m("[]]*", "]x"));
        assert!(m("[!]*", "[!]x") && !m("[!]*", "a"));
        assert!(!m("[z-a]*", "z") && !m("[z-a]", "a"));
        assert!(m("[!z-a]", "q")); // the dropped range leaves `[!]`: any character
        assert!(m("[a-]", "-") && m("[-a]", "-"));
        assert!(m("[[]*", "[x"));
        assert!(m("*.[tp][xy]*", "a.txt") && m("*.[tp][xy]*", "b.py"));
        assert!(m("*[", "a[") && !m("*[", "a"));
        assert!(m("a*b*c", "aXbYbc") && !m("a*b*c", "acb"));
    }
}
