//! The walks' defects found by trying to break them, each through
//! the real binary: a `list` past 100,000 entries, `.gitignore` files above
//! the start and `.git/info/exclude` (against git itself), the walk's
//! bound told apart from paging (`walk_limit`), `stat` answering per entry,
//! and devtmpfs mounts never entered.

mod common;

use std::path::Path;
use std::process::Command;

use common::{run_stdin, scratch, BIN};
use serde_json::{json, Value};

fn ask_in(dir: &Path, args: &[&str], req: &Value) -> Value {
    let mut a = args.to_vec();
    a.push("--stdin");
    let r = run_stdin(dir, &a, req.to_string().as_bytes());
    assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{}", r.stdout);
    let line = r.stdout.strip_prefix("__RESULT__").expect("a result line");
    serde_json::from_str(line).expect("valid JSON")
}

fn ask(req: &Value) -> Value {
    ask_in(Path::new("/"), &[], req)
}

fn paths(v: &Value, key: &str) -> Vec<String> {
    v[key]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["path"].as_str().unwrap().to_owned())
        .collect()
}

/// Follows `next` from the first page: every page's entries, joined.
fn all_pages(mut req: Value) -> (Vec<String>, Value) {
    let mut got = Vec::new();
    loop {
        let v = ask(&req);
        got.extend(paths(&v, "entries"));
        match v.get("next") {
            Some(n) => req["offset"] = n["offset"].clone(),
            None => return (got, v),
        }
    }
}

/// Past the old cap of 100,000 gathered entries the listing kept them in
/// readdir order: pages had holes, `total` was 100,000 and the last page
/// said `truncated:false`. Now every page is the sorted listing's.
#[test]
fn a_list_past_a_hundred_thousand_entries_is_exact() {
    let d = scratch();
    let t = d.path().join("t");
    std::fs::create_dir(&t).unwrap();
    let n = 100_100usize;
    for i in 0..n {
        // Creation order unlike sorted order.
        std::fs::File::create(t.join(format!("f{}", (i * 7919) % n))).unwrap();
    }
    let mut want: Vec<String> = (0..n).map(|i| format!("{}/f{i}", t.display())).collect();
    want.sort();
    let p = t.to_str().unwrap();
    let tail = ask(&json!({"op":"list","path":p,"offset":99_900,"limit":1000}));
    assert_eq!(tail["total"], n);
    assert_eq!(tail["truncated"], false);
    assert_eq!(tail.get("walk_limit"), None);
    assert_eq!(paths(&tail, "entries"), want[99_900..]);
    let (got, last) = all_pages(json!({"op":"list","path":p,"limit":100_000}));
    assert_eq!(last["total"], n);
    assert!(got == want, "pages do not join to the sorted listing");
}

/// Pages of a deep listing join to exactly the whole, sorted bytewise
/// (`a` < `a-b` < `a/x`), whatever the page size.
#[test]
fn list_pages_join_to_the_sorted_listing_at_every_depth() {
    let d = scratch();
    for f in ["a/x", "a/y/z", "a-b", "a.b", "A", "b/.h/i", ".git/c"] {
        let p = d.path().join(f);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, "").unwrap();
    }
    let p = d.path().to_str().unwrap();
    let want: Vec<String> = [
        ".git", "A", "a", "a-b", "a.b", "a/x", "a/y", "a/y/z", "b", "b/.h", "b/.h/i",
    ]
    .iter()
    .map(|r| format!("{p}/{r}"))
    .collect();
    for limit in [1, 2, 3, 100] {
        let (got, last) = all_pages(json!({"op":"list","path":p,"depth":3,"limit":limit}));
        assert_eq!(got, want, "limit {limit}");
        assert_eq!(last["total"], want.len());
    }
}

fn git(dir: &Path, args: &[&str]) -> Vec<String> {
    let home = dir.join(".no-home");
    let o = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("HOME", &home)
        .env("XDG_CONFIG_HOME", &home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("git runs");
    assert!(o.status.success(), "git {args:?}");
    let mut v: Vec<String> = String::from_utf8(o.stdout)
        .unwrap()
        .split('\0')
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect();
    v.sort();
    v
}

fn has_git() -> bool {
    Command::new("git").arg("--version").output().is_ok()
}

/// `gitignore:true` honours the `.gitignore` files from the repository's
/// top down to the start and `.git/info/exclude`, as `git ls-files
/// --others --exclude-standard` run in the start says; none above
/// `--root`; a start inside an ignored directory yields nothing.
#[test]
fn gitignore_reads_the_rules_above_the_start_as_git_does() {
    if !has_git() {
        eprintln!("skipped: git is not installed");
        return;
    }
    let d = scratch();
    let top = d.path();
    assert!(!git(top, &["init", "-q"]).iter().any(|_| true));
    std::fs::write(top.join(".gitignore"), "*.log\nbuild/\n").unwrap();
    std::fs::write(top.join(".git/info/exclude"), "*.tmp\n!keep.tmp\n").unwrap();
    std::fs::create_dir_all(top.join("sub/x")).unwrap();
    std::fs::create_dir_all(top.join("build/y")).unwrap();
    std::fs::write(top.join("sub/.gitignore"), "!keep.log\r\n*.rs\r\n").unwrap();
    for f in [
        "sub/x/a.log",
        "sub/x/keep.log",
        "sub/x/b.tmp",
        "sub/x/keep.tmp",
        "sub/x/c.rs",
        "sub/x/d.txt",
        "build/y/e.txt",
    ] {
        std::fs::write(top.join(f), "").unwrap();
    }
    let ls = |dir: &Path| {
        git(
            dir,
            &["ls-files", "-z", "--others", "--exclude-standard", "."],
        )
    };
    let x = top.join("sub/x");
    let want = ls(&x);
    assert_eq!(want, ["d.txt", "keep.log", "keep.tmp"]);
    let px = x.to_str().unwrap();
    let rel = |v: Vec<String>, base: &str| -> Vec<String> {
        v.iter()
            .map(|p| p.strip_prefix(&format!("{base}/")).unwrap().to_owned())
            .collect()
    };
    let g = ask(&json!({"op":"glob","pattern":"**","path":px,"gitignore":true}));
    assert_eq!(rel(paths(&g, "entries"), px), want);
    let l = ask(&json!({"op":"list","path":px,"gitignore":true}));
    assert_eq!(rel(paths(&l, "entries"), px), want);
    let gr = ask(&json!({"op":"grep","pattern":"","path":px,"gitignore":true,"output":"files"}));
    assert_eq!(gr["files_searched"], 3);
    // Inside an ignored directory: nothing, as git says.
    let b = top.join("build/y");
    assert_eq!(ls(&b), Vec::<String>::new());
    let g = ask(&json!({"op":"glob","pattern":"**","path":b.to_str().unwrap(),"gitignore":true}));
    assert_eq!(g["entries"], json!([]));
    // With --root at sub, neither the top's rules nor the repository are seen.
    let sub = top.join("sub");
    let g = ask_in(
        &x,
        &["--root", sub.to_str().unwrap()],
        &json!({"op":"glob","pattern":"**","gitignore":true}),
    );
    assert_eq!(
        paths(&g, "entries"),
        ["a.log", "b.tmp", "d.txt", "keep.log", "keep.tmp"]
    );
}

/// A walk cut by its own bound (256 levels here) says `walk_limit`, with
/// `truncated:false` when no page is left: more pages would not help.
#[test]
fn the_walk_bound_is_told_apart_from_paging() {
    let d = scratch();
    let mut p = d.path().to_owned();
    for _ in 0..258 {
        p.push("d");
    }
    std::fs::create_dir_all(&p).unwrap();
    std::fs::write(p.join("deep"), "x").unwrap();
    std::fs::write(d.path().join("top"), "x").unwrap();
    let path = d.path().to_str().unwrap();
    let g = ask(&json!({"op":"glob","pattern":"**","path":path}));
    assert_eq!(paths(&g, "entries"), [format!("{path}/top")]);
    assert_eq!(
        (&g["truncated"], &g["walk_limit"], g.get("next")),
        (&json!(false), &json!(true), None)
    );
    let g = ask(&json!({"op":"grep","pattern":"x","path":path,"output":"files"}));
    assert_eq!(
        (&g["truncated"], &g["walk_limit"]),
        (&json!(false), &json!(true))
    );
    let small = ask(&json!({"op":"glob","pattern":"top","path":path}));
    assert_eq!(small.get("walk_limit"), Some(&json!(true)));
    let plain = ask(&json!({"op":"glob","pattern":"**","path":format!("{path}/d/d")}));
    assert_eq!(
        (&plain["truncated"], plain.get("walk_limit")),
        (&json!(false), None)
    );
}

/// A path outside `--root` or too long is answered in its own entry; the
/// others still are. Before, the whole batch was refused.
#[test]
fn stat_answers_each_entry_even_when_one_cannot_be_looked_at() {
    let d = scratch();
    std::fs::write(d.path().join("a"), "x").unwrap();
    let long = "x".repeat(300);
    let v = ask_in(
        d.path(),
        &["--root", d.path().to_str().unwrap()],
        &json!({"op":"stat","paths":["a","/etc/passwd",long,"b"]}),
    );
    let e = v["entries"].as_array().unwrap();
    assert_eq!(e.len(), 4);
    assert_eq!(
        (&e[0]["path"], &e[0]["type"]),
        (&json!("a"), &json!("file"))
    );
    assert_eq!(
        e[1],
        json!({"path":"/etc/passwd","error":"outside_root",
               "detail":format!("/etc/passwd resolves outside the root {}", d.path().display())})
    );
    assert_eq!(e[2]["error"], "read_failed");
    assert_eq!(
        e[2]["detail"],
        format!("stat {long}: File name too long (os error 36)")
    );
    assert_eq!(e[2].get("type"), None);
    assert_eq!(e[3], json!({"path":"b","type":"missing"}));
}

/// A devtmpfs mount is never entered, wherever it is mounted: here a bind
/// of the host's `/dev` (devtmpfs) inside the listed tree, in a mount
/// namespace of its own. Needs root and `unshare`; skipped otherwise.
#[test]
fn a_devtmpfs_mount_is_listed_but_never_entered() {
    let devtmpfs = std::fs::read_to_string("/proc/self/mountinfo").is_ok_and(|m| {
        m.lines()
            .any(|l| l.contains(" /dev ") && l.contains(" - devtmpfs "))
    });
    let d = scratch();
    std::fs::create_dir(d.path().join("devs")).unwrap();
    std::fs::write(d.path().join("f"), "").unwrap();
    let p = d.path().to_str().unwrap();
    let req = json!({"op":"list","path":p,"depth":2}).to_string();
    let script = "mount --bind /dev \"$1/devs\" && exec \"$2\" --stdin";
    let o = Command::new("unshare")
        .args(["-m", "sh", "-c", script, "sh", p, BIN])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin.take().unwrap().write_all(req.as_bytes())?;
            c.wait_with_output()
        });
    let Some(o) = o.ok().filter(|o| o.status.success()) else {
        eprintln!("skipped: unshare -m and mount --bind are not allowed here");
        return;
    };
    if !devtmpfs {
        eprintln!("skipped: /dev is not a devtmpfs here");
        return;
    }
    let out = String::from_utf8(o.stdout).unwrap();
    let v: Value = serde_json::from_str(out.strip_prefix("__RESULT__").unwrap()).unwrap();
    assert_eq!(
        paths(&v, "entries"),
        [format!("{p}/devs"), format!("{p}/f")]
    );
}

/// A `.gitignore` rule's `?`, `[!a]` and `[…]` match one byte, as git's
/// (and ripgrep's) do: `é` is two bytes, so `?` leaves it in and `??`
/// leaves it out. `glob` with `gitignore:true` keeps what `git ls-files
/// --others --exclude-standard` lists, rule by rule.
#[test]
fn gitignore_wildcards_match_bytes_on_non_ascii_names_as_git_does() {
    if !has_git() {
        eprintln!("skipped: git is not installed");
        return;
    }
    let d = scratch();
    let top = d.path();
    git(top, &["init", "-q"]);
    let names = ["é", "a", "ab", "aé", "café", "éé", "ê", "x.é"];
    for n in names {
        std::fs::write(top.join(n), "").unwrap();
    }
    let pt = top.to_str().unwrap();
    for rule in [
        "?",
        "??",
        "[!a]",
        "[^a]",
        "[!a][!a]",
        "[!a]?",
        "[é]",
        "[é][é]",
        "[!é]",
        "[é-ë]",
        "[é-ë][é-ë]",
        "caf?",
        "caf??",
        "a?",
        "a??",
        "*.?",
        "*.??",
        "????",
        "é?",
    ] {
        std::fs::write(top.join(".gitignore"), format!("{rule}\n.gitignore\n")).unwrap();
        let want = git(top, &["ls-files", "-z", "--others", "--exclude-standard"]);
        let g = ask(&json!({"op":"glob","pattern":"**","path":pt,"gitignore":true}));
        let got: Vec<String> = paths(&g, "entries")
            .iter()
            .map(|p| p.strip_prefix(&format!("{pt}/")).unwrap().to_owned())
            .collect();
        assert_eq!(got, want, "rule {rule}");
    }
}

/// One request's line, whatever its exit code.
fn line_in(dir: &Path, req: &Value) -> (String, i32) {
    let r = run_stdin(dir, &["--stdin"], req.to_string().as_bytes());
    assert_eq!(r.stderr, "");
    (r.stdout, r.code)
}

/// `n` bytes of distinct rules, `file_<i>.tmp` a line.
fn big_rules(n: usize, tag: &str) -> Vec<u8> {
    let mut t = Vec::with_capacity(n + 32);
    let mut i = 0;
    while t.len() < n {
        t.extend_from_slice(format!("{tag}_{i}.tmp\n").as_bytes());
        i += 1;
    }
    t.truncate(n);
    t
}

/// A `.gitignore` over 1 MiB was not read, silently: the walk went on as
/// if it were absent. Now the three walks with `gitignore:true` refuse,
/// naming it, and a file of exactly 1 MiB is read.
#[test]
fn an_ignore_file_over_its_bound_is_named_never_silently_skipped() {
    let d = scratch();
    let top = d.path();
    std::fs::create_dir_all(top.join("sub/deep")).unwrap();
    std::fs::write(top.join("sub/deep/x.txt"), "needle\n").unwrap();
    let mut rules = big_rules(1 << 20, "f");
    rules.splice(0..0, b"x.txt\n".iter().copied());
    rules.truncate(1 << 20);
    std::fs::write(top.join("sub/.gitignore"), &rules).unwrap();
    let pt = top.to_str().unwrap();
    // Exactly the bound: read, x.txt ignored.
    let g = ask(&json!({"op":"glob","pattern":"**/*.txt","path":pt,"gitignore":true}));
    assert_eq!(g["entries"], json!([]));
    rules.push(b'\n');
    std::fs::write(top.join("sub/.gitignore"), &rules).unwrap();
    let detail = format!(
        "the ignore file {pt}/sub/.gitignore is 1048577 bytes, over the 1048576 an ignore \
         file may hold: not read, so the walk stopped; ask with \\\"gitignore\\\":false, or \
         for a path that does not hold it"
    );
    let want = format!("__RESULT__{{\"error\":\"read_failed\",\"detail\":\"{detail}\"}}\n");
    for req in [
        json!({"op":"glob","pattern":"**","path":pt,"gitignore":true}),
        json!({"op":"grep","pattern":"needle","path":pt,"gitignore":true}),
        json!({"op":"list","path":pt,"depth":5,"gitignore":true}),
    ] {
        assert_eq!(line_in(top, &req), (want.clone(), 1), "{req}");
    }
    // Without gitignore:true nothing is read and x.txt is found.
    let g = ask(&json!({"op":"glob","pattern":"**/*.txt","path":pt}));
    assert_eq!(paths(&g, "entries"), [format!("{pt}/sub/deep/x.txt")]);
}

/// Nested `.gitignore` files each within the per-file bound are held
/// together only to `MAX_HELD` bytes: the one that would pass it is named
/// (where eight nested 1 MiB files took the walk to 331 MiB), also when it
/// lies above the start, in the repository.
#[test]
fn the_ignore_rules_held_for_one_path_are_bounded_and_the_file_past_it_named() {
    use as_edit::tools::gitignore::Rules;
    use as_edit::tools::ignores::MAX_HELD;
    let d = scratch();
    let top = d.path();
    let mut dir = top.to_path_buf();
    let mut held = 0;
    let mut past = None;
    for i in 0..12 {
        let text = big_rules(1 << 20, &format!("l{i}"));
        held += Rules::parse(&text).held();
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(".gitignore"), &text).unwrap();
        if held > MAX_HELD && past.is_none() {
            past = Some(dir.join(".gitignore"));
        }
        dir.push("d");
    }
    std::fs::create_dir_all(&dir).unwrap();
    let past = past.expect("twelve files pass the bound");
    let pt = top.to_str().unwrap();
    let (line, code) = line_in(
        top,
        &json!({"op":"glob","pattern":"**","path":pt,"gitignore":true}),
    );
    assert_eq!(code, 1, "{line}");
    let named = format!(
        "\"the ignore file {} (1048576 bytes) would take",
        past.display()
    );
    assert!(
        line.starts_with("__RESULT__{\"error\":\"read_failed\",\"detail\":"),
        "{line}"
    );
    assert!(line.contains(&named), "{line}");
    // Above the start, in a repository: the same file named, absolute.
    if has_git() {
        git(top, &["init", "-q"]);
        let below = past.parent().unwrap().join("d");
        let pb = below.to_str().unwrap();
        let (line, code) = line_in(
            top,
            &json!({"op":"glob","pattern":"**","path":pb,"gitignore":true}),
        );
        assert_eq!(code, 1, "{line}");
        assert!(line.contains(&named), "{line}");
    }
}
