//! `glob` and `grep` against models over generated trees (same entries,
//! same order), and `gitignore:true` against git itself.
//!
//! The glob model translates the pattern into a regular expression (a
//! different route than the NFA under test); the walk model is
//! `std::fs::read_dir` recursion sorted as whole paths; the grep model
//! splits each file into lines and tests `contains`.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use as_edit::tools::find::{self, GlobRequest};
use as_edit::tools::grep_op::{self, GrepRequest, Line, Output};
use as_edit::tools::walk::Options;
use proptest::prelude::*;

/// A generated tree: relative paths of files with their bytes (directories
/// are implied).
type Tree = Vec<(String, Vec<u8>)>;

fn name() -> impl Strategy<Value = String> {
    prop::sample::select(vec!["a", "b", "ab", ".a", "a.b", "b.ab", "a-b", "c"])
        .prop_map(String::from)
}

fn content() -> impl Strategy<Value = Vec<u8>> {
    let line = prop::sample::select(vec!["ab", "ba", "xAB", "", "a", "b\0", "abab", "Ab"]);
    (prop::collection::vec(line, 0..10), any::<bool>()).prop_map(|(ls, nl)| {
        let mut s = ls.join("\n").into_bytes();
        if nl && !s.is_empty() {
            s.push(b'\n');
        }
        s
    })
}

fn tree() -> impl Strategy<Value = Tree> {
    let path = prop::collection::vec(name(), 1..4).prop_map(|v| v.join("/"));
    prop::collection::vec((path, content()), 0..14)
}

/// Writes the tree; a path that collides with a file or directory already
/// written is left out (and out of the model: the model reads the disk).
fn write(dir: &Path, t: &Tree) {
    for (rel, bytes) in t {
        let p = dir.join(rel);
        if std::fs::create_dir_all(p.parent().unwrap()).is_ok() && !p.exists() {
            let _ = std::fs::write(&p, bytes);
        }
    }
}

/// Every regular file below `dir`, relative, in bytewise order; hidden
/// names and VCS directories left out as asked.
fn model_files(dir: &Path, hidden: bool) -> Vec<String> {
    fn go(dir: &Path, rel: &str, hidden: bool, out: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let e = e.unwrap();
            let n = e.file_name().into_string().unwrap();
            if [".git", ".hg", ".svn"].contains(&n.as_str()) || (!hidden && n.starts_with('.')) {
                continue;
            }
            let r = if rel.is_empty() {
                n.clone()
            } else {
                format!("{rel}/{n}")
            };
            let ft = e.file_type().unwrap();
            if ft.is_dir() {
                go(&e.path(), &r, hidden, out);
            } else if ft.is_file() {
                out.push(r);
            }
        }
    }
    let mut out = Vec::new();
    go(dir, "", hidden, &mut out);
    out.sort();
    out
}

/// The glob as a regular expression (the model matcher).
fn glob_regex(g: &str) -> regex::Regex {
    let base = !g.contains('/');
    let mut re = String::from(if base { "(?:^|/)" } else { "^" });
    let mut g = g;
    while let Some(r) = g.strip_prefix("./") {
        g = r;
    }
    let b = g.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let rest = &g[i..];
        // A component of two or more stars alone is `**` (git's wildmatch:
        // `a/***/**` matches `a/a`; ripgrep 13 matches nothing there).
        let stars = rest.bytes().take_while(|&c| c == b'*').count();
        let whole = stars >= 2 && (i == 0 || b[i - 1] == b'/');
        if whole && rest[stars..].starts_with('/') {
            re.push_str("(?:.*/)?");
            i += stars + 1;
        } else if whole && stars == rest.len() {
            re.push_str(".*");
            i += stars;
        } else if rest.starts_with('*') {
            re.push_str("[^/]*");
            i += 1;
        } else if rest.starts_with('?') {
            re.push_str("[^/]");
            i += 1;
        } else if rest.starts_with("[!") {
            let end = rest.find(']').unwrap();
            re.push_str(&format!("[^/{}]", &rest[2..end]));
            i += end + 1;
        } else if rest.starts_with('[') {
            let end = rest.find(']').unwrap();
            re.push_str(&rest[..=end]);
            i += end + 1;
        } else if rest.starts_with('{') {
            let end = rest.find('}').unwrap();
            let alts: Vec<String> = rest[1..end].split(',').map(regex::escape).collect();
            re.push_str(&format!("(?:{})", alts.join("|")));
            i += end + 1;
        } else {
            let c = rest.chars().next().unwrap();
            re.push_str(&regex::escape(&c.to_string()));
            i += c.len_utf8();
        }
    }
    re.push('$');
    regex::Regex::new(&re).unwrap()
}

fn glob_pattern() -> impl Strategy<Value = String> {
    let part = prop::sample::select(vec![
        "a", "b", ".", "*", "?", "[ab]", "[!a]", "{a,b.ab}", "-", "ab",
    ]);
    let comp = prop::collection::vec(part, 1..4).prop_map(|v| v.concat());
    let lead = prop::sample::select(vec!["", "**/", "a/", "*/"]);
    let tail = prop::sample::select(vec!["", "/**"]);
    (lead, comp, tail).prop_map(|(l, c, t)| format!("{l}{c}{t}"))
}

fn req_glob(dir: &Path, pattern: &str, hidden: bool) -> GlobRequest {
    GlobRequest {
        pattern: pattern.into(),
        path: Some(dir.to_str().unwrap().as_bytes().to_vec()),
        by_mtime: false,
        offset: 0,
        limit: 100_000,
        walk: Options {
            hidden,
            ..Options::default()
        },
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn glob_lists_what_the_model_lists(t in tree(), g in glob_pattern(), hidden: bool) {
        let d = tempfile::tempdir().unwrap();
        write(d.path(), &t);
        // A `..` component (the parts make one from two dots) is refused:
        // globs match below the op's path.
        if g.split('/').any(|c| c == "..") {
            let e = find::glob(&req_glob(d.path(), &g, hidden), None).unwrap_err();
            prop_assert_eq!(e.kind, as_edit::protocol::ErrorKind::InvalidArgument);
            return Ok(());
        }
        let re = glob_regex(&g);
        let base = format!("{}/", d.path().to_str().unwrap());
        let want: Vec<String> = model_files(d.path(), hidden)
            .into_iter()
            .filter(|r| re.is_match(r))
            .map(|r| format!("{base}{r}"))
            .collect();
        let got = find::glob(&req_glob(d.path(), &g, hidden), None).unwrap();
        let paths: Vec<String> = got.entries.iter().map(|e| String::from_utf8(e.path.clone()).unwrap()).collect();
        prop_assert_eq!(&paths, &want, "glob {}", g);
        prop_assert_eq!(got.total, want.len() as u64);
        prop_assert!(!got.truncated);
        for e in &got.entries {
            let m = std::fs::metadata(String::from_utf8(e.path.clone()).unwrap()).unwrap();
            prop_assert_eq!(e.size, m.len());
        }
    }

    #[test]
    fn glob_pages_join_to_the_whole(t in tree(), off in 0u64..6, lim in 0u64..6, mtime: bool) {
        let d = tempfile::tempdir().unwrap();
        write(d.path(), &t);
        let mut whole = req_glob(d.path(), "*", true);
        whole.by_mtime = mtime;
        let all = find::glob(&whole, None).unwrap();
        let page = find::glob(&GlobRequest { offset: off, limit: lim, ..whole.clone() }, None).unwrap();
        let want: Vec<_> = all.entries.iter().skip(off as usize).take(lim as usize).cloned().collect();
        prop_assert_eq!(&page.entries, &want);
        prop_assert_eq!(page.total, all.total);
        prop_assert_eq!(page.truncated, all.total > off + lim);
        if mtime {
            prop_assert!(all.entries.windows(2).all(|w| (std::cmp::Reverse(w[0].mtime_ns), &w[0].path) <= (std::cmp::Reverse(w[1].mtime_ns), &w[1].path)));
        }
    }

    #[test]
    fn grep_finds_what_the_model_finds(t in tree(), pat in prop::sample::select(vec!["ab", "a", "b", "AB", ""]), ic: bool, ctx in 0u64..3) {
        let d = tempfile::tempdir().unwrap();
        write(d.path(), &t);
        let base = format!("{}/", d.path().to_str().unwrap());
        let (want, binary) = model_grep(d.path(), &base, pat, ic, ctx);
        let got = grep_op::grep(&req_grep(d.path(), pat, ic, ctx, Output::Content), None, u64::MAX).unwrap();
        prop_assert_eq!(&got.lines, &want);
        prop_assert_eq!(got.skipped_binary, binary);
        let files = grep_op::grep(&req_grep(d.path(), pat, ic, 0, Output::Count), None, u64::MAX).unwrap();
        let mut counts: Vec<(Vec<u8>, u64)> = Vec::new();
        for l in want.iter().filter(|l| !l.context) {
            match counts.last_mut() {
                Some((p, n)) if *p == l.path => *n += 1,
                _ => counts.push((l.path.clone(), 1)),
            }
        }
        prop_assert_eq!(&files.files, &counts);
    }
}

fn req_grep(dir: &Path, pat: &str, ic: bool, ctx: u64, output: Output) -> GrepRequest {
    GrepRequest {
        pattern: pat.into(),
        regex: false,
        ignore_case: ic,
        path: Some(dir.to_str().unwrap().as_bytes().to_vec()),
        glob: None,
        output,
        context: ctx,
        offset: 0,
        limit: 100_000,
        max_columns: 1000,
        walk: Options {
            hidden: true,
            ..Options::default()
        },
    }
}

/// The lines `grep` must answer, and the number of binary files.
fn model_grep(dir: &Path, base: &str, pat: &str, ic: bool, ctx: u64) -> (Vec<Line>, u64) {
    let mut out = Vec::new();
    let mut binary = 0;
    for rel in model_files(dir, true) {
        let bytes = std::fs::read(dir.join(&rel)).unwrap();
        if bytes[..bytes.len().min(8192)].contains(&0) {
            binary += 1;
            continue;
        }
        out.extend(model_file(&bytes, &format!("{base}{rel}"), pat, ic, ctx));
    }
    (out, binary)
}

fn model_file(bytes: &[u8], path: &str, pat: &str, ic: bool, ctx: u64) -> Vec<Line> {
    let text = String::from_utf8_lossy(bytes);
    let mut lines: Vec<&str> = text.split('\n').collect();
    if text.ends_with('\n') || text.is_empty() {
        lines.pop();
    }
    let hit = |l: &str| {
        if ic {
            l.to_ascii_lowercase().contains(&pat.to_ascii_lowercase())
        } else {
            l.contains(pat)
        }
    };
    let hits: Vec<bool> = lines.iter().map(|l| hit(l)).collect();
    let near = |i: usize| {
        let lo = i.saturating_sub(ctx as usize);
        let hi = (i + ctx as usize).min(lines.len() - 1);
        (lo..=hi).any(|j| hits[j])
    };
    (0..lines.len())
        .filter(|&i| near(i))
        .map(|i| Line {
            path: path.as_bytes().to_vec(),
            line: i as u64 + 1,
            text: lines[i].to_string(),
            cut: false,
            context: !hits[i],
            short: false,
        })
        .collect()
}

#[test]
fn context_and_line_numbers_hold_across_read_blocks() {
    // Lines of 100 bytes; matches spread so that blocks (256 KiB) cut
    // between a match and its context, on both sides.
    let mut bytes = Vec::new();
    let mut n = 0u64;
    while bytes.len() < 3 * grep_op::BLOCK + 5000 {
        n += 1;
        let mark = if n % 2621 == 0 || n % 2623 == 1 || n == 7000 {
            "NEEDLE"
        } else {
            "hay---"
        };
        bytes.extend_from_slice(format!("{n:>10} {mark} {}\n", "x".repeat(82)).as_bytes());
    }
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("big"), &bytes).unwrap();
    let path = format!("{}/big", d.path().to_str().unwrap());
    for ctx in [0, 1, 3, 40] {
        let got = grep_op::grep(
            &req_grep(d.path(), "NEEDLE", false, ctx, Output::Content),
            None,
            u64::MAX, // the whole search: no page bound
        )
        .unwrap();
        let want = model_file(&bytes, &path, "NEEDLE", false, ctx);
        assert_eq!(got.lines.len(), want.len(), "ctx {ctx}");
        assert!(got.lines == want, "ctx {ctx}");
    }
    // One line longer than a block.
    let mut long = b"start\n".to_vec();
    long.extend(std::iter::repeat_n(b'y', grep_op::BLOCK * 2 + 7));
    long.extend_from_slice(b"NEEDLE\nend NEEDLE");
    std::fs::write(d.path().join("big"), &long).unwrap();
    let got = grep_op::grep(
        &req_grep(d.path(), "NEEDLE", false, 1, Output::Content),
        None,
        u64::MAX,
    )
    .unwrap();
    let lines: Vec<(u64, bool, usize)> = got
        .lines
        .iter()
        .map(|l| (l.line, l.context, l.text.len()))
        .collect();
    assert_eq!(lines, [(1, true, 5), (2, false, 1000), (3, false, 10)]);
}

fn git(dir: &Path, args: &[&str]) -> std::process::Output {
    let home = dir.join(".git").join("no-home");
    Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("HOME", &home)
        .env("XDG_CONFIG_HOME", &home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("git runs")
}

fn rule() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "a", "*.b", "/a", "a/", "!a", "!*.ab", "b/**", "**/c", "a/*.b", "\\!a", "a ", "a\\ ",
        "[ab]", "ab/", "!ab/", "/ab/a", "*", "!.a", "#a", "", "a.b", "**/a/b", "?.b", "a-b", "!b",
        "c/", "!c",
    ])
    .prop_map(String::from)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 120, ..ProptestConfig::default() })]

    #[test]
    fn gitignore_agrees_with_git(
        t in tree(),
        top in prop::collection::vec(rule(), 0..6),
        sub in prop::collection::vec(rule(), 0..4),
        sub_dir in name(),
    ) {
        if Command::new("git").arg("--version").output().is_err() {
            eprintln!("skipped: git is not installed");
            return Ok(());
        }
        let d = tempfile::tempdir().unwrap();
        write(d.path(), &t);
        std::fs::write(d.path().join(".gitignore"), top.join("\n")).unwrap();
        let sd = d.path().join(&sub_dir);
        if sd.is_dir() {
            std::fs::write(sd.join(".gitignore"), sub.join("\n")).unwrap();
        }
        prop_assert!(git(d.path(), &["init", "-q"]).status.success());
        let o = git(d.path(), &["ls-files", "-z", "--others", "--exclude-standard"]);
        let want: BTreeSet<String> = String::from_utf8(o.stdout).unwrap()
            .split('\0').filter(|s| !s.is_empty()).map(String::from).collect();
        let mut req = req_glob(d.path(), "**", true);
        req.walk.gitignore = true;
        let got = find::glob(&req, None).unwrap();
        let base = format!("{}/", d.path().to_str().unwrap());
        let got: BTreeSet<String> = got.entries.iter()
            .map(|e| String::from_utf8(e.path.clone()).unwrap().strip_prefix(&base).unwrap().to_string())
            .collect();
        prop_assert_eq!(got, want, "top {:?} sub {:?} in {}", top, sub, sub_dir);
    }
}

/// One `--stdin` request through the binary's entry point: the line.
fn ask(json: &serde_json::Value) -> String {
    let args = vec![std::ffi::OsString::from("--stdin")];
    let r = as_edit::run(&args, None, &mut json.to_string().as_bytes());
    assert_eq!(r.exit_code, 0, "{}", r.stdout);
    r.stdout
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    /// Every line is JSON within `max_bytes`, and following `next` from
    /// page to page answers every entry exactly once, in order: grep's
    /// context lines included (none twice, none lost), whatever `limit`,
    /// `context` and `max_bytes` cut the pages.
    #[test]
    fn pages_within_max_bytes_join_to_the_whole(
        t in tree(),
        max in 1024u64..2048,
        op in 0..4usize,
        ctx in 0u64..4,
        limit in proptest::option::of(1u64..4),
    ) {
        let d = tempfile::tempdir().unwrap();
        write(d.path(), &t);
        let path = d.path().to_str().unwrap();
        let (mut req, key) = match op {
            0 => (serde_json::json!({"op":"glob","pattern":"*","path":path}), "entries"),
            1 => (serde_json::json!({"op":"grep","pattern":"a","path":path,"context":ctx}), "matches"),
            2 => (serde_json::json!({"op":"grep","pattern":"b","path":path,"output":"count"}), "files"),
            _ => (serde_json::json!({"op":"grep","pattern":"a","path":path,"output":"files"}), "files"),
        };
        let whole: serde_json::Value = serde_json::from_str(ask(&req).strip_prefix("__RESULT__").unwrap()).unwrap();
        req["max_bytes"] = max.into();
        if let Some(l) = limit {
            req["limit"] = l.into();
        }
        let mut got: Vec<serde_json::Value> = Vec::new();
        for _ in 0..1000 {
            let line = ask(&req);
            prop_assert!(line.len() as u64 <= max, "{} > {max}", line.len());
            let v: serde_json::Value = serde_json::from_str(line.strip_prefix("__RESULT__").unwrap()).unwrap();
            got.extend(v[key].as_array().unwrap().iter().cloned());
            match v.get("next") {
                Some(n) => req["offset"] = n["offset"].clone(),
                None => break,
            }
        }
        prop_assert_eq!(&got, whole[key].as_array().unwrap());
    }
}

/// The search stops once what it found cannot all fit the page: with
/// `limit` 100,000 and `max_bytes` 2,048, 40 files of 1,000 matching
/// lines each are not all read and held (before: all 40,000 lines, about
/// 2 MB, for a page of 2 KiB). The answer's pages still join (`next`).
#[test]
fn grep_stops_once_its_page_is_full() {
    let d = tempfile::tempdir().unwrap();
    let body: String = (0..1000).map(|i| format!("NEEDLE line {i}\n")).collect();
    for f in 0..40 {
        std::fs::write(d.path().join(format!("f{f:02}")), &body).unwrap();
    }
    for (output, max) in [(Output::Content, 2048), (Output::Files, 1024)] {
        let g = grep_op::grep(&req_grep(d.path(), "NEEDLE", false, 0, output), None, max).unwrap();
        let held = (g.lines.len() + g.files.len()) as u64;
        // Each entry takes at least 20 bytes on the line: past `max`, full.
        assert!((1..=max / 20 + 1).contains(&held), "{output:?}: {held}");
        assert!(g.truncated && g.more, "{output:?}");
        assert!(g.files_searched < 40, "{output:?}: {}", g.files_searched);
    }
    // No page bound: everything (the model tests above compare it).
    let g = grep_op::grep(
        &req_grep(d.path(), "NEEDLE", false, 0, Output::Content),
        None,
        u64::MAX,
    )
    .unwrap();
    assert_eq!(
        (g.lines.len(), g.files_searched, g.truncated),
        (40_000, 40, false)
    );
}
