//! `--toolset agent_toolset_20260401`: the exact texts
//! Anthropic's reference tools return (anthropic 2.17.0, each expectation
//! below checked against it), exit 0, or the text a tool runner sends for
//! its exception, exit 1; and what the writes leave on disk. Not scenario
//! folders: an answer is the tool's free text, not one result line.
//! scripts/toolset-diff.sh compares thousands of generated cases with the
//! reference itself.

mod common;
use common::*;

use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::Path;

const TOOLSET: [&str; 2] = ["--toolset", "agent_toolset_20260401"];

fn tool(dir: &Path, name: &str, input: serde_json::Value) -> Run {
    let req = serde_json::json!({"name": name, "input": input}).to_string();
    let r = run_stdin(dir, &TOOLSET, req.as_bytes());
    // The same request as --request-b64 answers the same (run twice only
    // where that changes nothing: a second write would replace the file
    // again).
    if matches!(name, "read" | "glob") {
        let b = b64(&req);
        let mut a = TOOLSET.to_vec();
        a.extend(["--request-b64", &b]);
        let again = run_stdin(dir, &a, b"");
        assert_eq!((&again.stdout, again.code), (&r.stdout, r.code), "{req}");
    }
    assert_eq!(r.stderr, "", "{req}");
    r
}

fn fifo(p: &Path) {
    std::process::Command::new("mkfifo")
        .arg(p)
        .status()
        .expect("mkfifo runs");
    assert!(std::fs::symlink_metadata(p).is_ok());
}

fn is(r: &Run, text: &str, code: i32) {
    assert_eq!((r.stdout.as_str(), r.code), (text, code));
}

#[test]
fn read_returns_the_text_or_its_lines() {
    let d = scratch();
    write_file(d.path(), "f.txt", b"a\r\nb\nc\n", 0o644);
    is(
        &tool(d.path(), "read", serde_json::json!({"file_path": "f.txt"})),
        "a\r\nb\nc\n",
        0,
    );
    let r = |range| {
        tool(
            d.path(),
            "read",
            serde_json::json!({"file_path": "f.txt", "view_range": range}),
        )
    };
    is(&r(serde_json::json!([2, 3])), "b\nc", 0);
    is(&r(serde_json::json!([2, -1])), "b\nc\n", 0);
    is(&r(serde_json::json!([0, 1])), "a\r", 0);
    is(&r(serde_json::json!([" 2 ", "3.0"])), "b\nc", 0);
    is(&r(serde_json::json!([3, 1])), "", 0);
    is(&r(serde_json::json!([])), "a\r\nb\nc\n", 0);
    is(
        &r(serde_json::json!([1])),
        "read: view_range must be [start_line, end_line]",
        1,
    );
    is(
        &r(serde_json::json!([1.5, 2])),
        "ValueError('Invalid arguments for function read')",
        1,
    );
}

#[test]
fn read_refusals_have_the_references_texts() {
    let d = scratch();
    let ws = d.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    write_file(d.path(), "secret", b"s\n", 0o644);
    write_file(&ws, "bin", b"a\xffb", 0o644);
    symlink("../secret", ws.join("out")).unwrap();
    symlink("loop", ws.join("loop")).unwrap();
    fifo(&ws.join("fifo"));
    let r = |p: &str| tool(&ws, "read", serde_json::json!({"file_path": p}));
    is(
        &r("../secret"),
        "read: path \"../secret\" is outside the session's working directory",
        1,
    );
    is(
        &r("out"),
        "read: path \"out\" is outside the session's working directory",
        1,
    );
    is(
        &r("loop"),
        "read: path \"loop\": too many levels of symbolic links",
        1,
    );
    is(&r("missing"), "read: missing: no such file or directory", 1);
    is(&r("bin/x"), "read: bin/x: not a directory", 1);
    // A FIFO is never opened: the answer comes at once.
    is(&r("fifo"), "read: fifo: not a regular file", 1);
    is(&r(""), "read: : not a regular file", 1);
    is(&r("a\0b"), "read: embedded null byte", 1);
    is(
        &r("bin"),
        "read: bin: not valid UTF-8 text (binary files are only supported for image/PDF extensions)",
        1,
    );
    is(
        &tool(&ws, "read", serde_json::json!({})),
        "ValueError('Invalid arguments for function read')",
        1,
    );
    is(
        &tool(&ws, "read", serde_json::json!(["x"])),
        "TypeError('Input must be a dictionary, got list')",
        1,
    );
}

#[test]
fn a_large_file_is_read_by_range_under_the_byte_limit() {
    let d = scratch();
    let line = "0123456789abcdef\n";
    write_file(d.path(), "big.txt", line.repeat(7000).as_bytes(), 0o644); // 119,000 bytes
    let r = |range: serde_json::Value| {
        tool(
            d.path(),
            "read",
            serde_json::json!({"file_path": "big.txt", "view_range": range}),
        )
    };
    is(
        &tool(d.path(), "read", serde_json::json!({"file_path": "big.txt"})),
        "read: big.txt is 119000 bytes, exceeds 110000-byte limit. Use the view_range parameter to read specific line ranges, e.g. view_range: [1, 500].",
        1,
    );
    is(&r(serde_json::json!([6999, 7005])), &line.repeat(2), 0);
    is(
        &r(serde_json::json!([2, 3])),
        &line.repeat(2)[..line.len() * 2 - 1],
        0,
    );
    is(
        &r(serde_json::json!([1, "1_0_000"])),
        "read: view_range [1, 10000] of big.txt exceeds 110000-byte limit. Narrow the view_range to read a smaller portion.",
        1,
    );
    write_file(d.path(), "one.txt", &vec![b'x'; 120_000], 0o644);
    is(
        &tool(d.path(), "read", serde_json::json!({"file_path": "one.txt", "view_range": [1, 1]})),
        "read: line 1 of one.txt alone exceeds 110000-byte limit. The read tool cannot return part of a line, so view_range cannot narrow this further.",
        1,
    );
}

#[test]
fn images_and_pdfs_are_content_blocks() {
    let d = scratch();
    write_file(d.path(), "p.PNG", b"\x89PNG\0\x01", 0o644);
    write_file(d.path(), "d.pdf", b"%PDF", 0o644);
    let r = tool(d.path(), "read", serde_json::json!({"file_path": "p.PNG"}));
    is(
        &r,
        r#"[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORwAB"}}]"#,
        3, // content blocks, which a text answer could look like
    );
    let r = tool(d.path(), "read", serde_json::json!({"file_path": "d.pdf"}));
    is(
        &r,
        r#"[{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"JVBERg=="}}]"#,
        3,
    );
    write_file(d.path(), "t.json", br#"[{"type":"image"}]"#, 0o644);
    let r = tool(d.path(), "read", serde_json::json!({"file_path": "t.json"}));
    is(&r, r#"[{"type":"image"}]"#, 0);
    let r = tool(
        d.path(),
        "read",
        serde_json::json!({"file_path": "d.pdf", "view_range": [1, 2]}),
    );
    is(
        &r,
        "read: view_range is not supported for image/PDF files",
        1,
    );
}

#[test]
fn write_replaces_atomically_keeping_the_mode_and_counts_characters() {
    let d = scratch();
    let f = write_file(d.path(), "f.txt", b"old\n", 0o600);
    let ino = inode(&f);
    is(
        &tool(
            d.path(),
            "write",
            serde_json::json!({"file_path": "f.txt", "content": "é\r\n日本"}),
        ),
        "wrote 5 bytes to f.txt",
        0,
    );
    assert_eq!(std::fs::read(&f).unwrap(), "é\r\n日本".as_bytes());
    assert_eq!(mode(&f), 0o600);
    assert_ne!(inode(&f), ino, "replaced by a rename, not written in place");
    is(
        &tool(
            d.path(),
            "write",
            serde_json::json!({"file_path": "n/e/w.txt", "content": ""}),
        ),
        "wrote 0 bytes to n/e/w.txt",
        0,
    );
    let umask = rustix::process::umask(rustix::fs::Mode::empty());
    rustix::process::umask(umask);
    let new = d.path().join("n/e/w.txt");
    assert_eq!(
        std::fs::metadata(&new).unwrap().permissions().mode() & 0o7777,
        0o666 & !umask.bits()
    );
    assert_eq!(std::fs::read(&new).unwrap(), b"");
    assert_eq!(listing(d.path()), ["f.txt", "n"]);
    assert_eq!(listing(&d.path().join("n/e")), ["w.txt"]);
}

#[test]
fn write_refusals_change_nothing() {
    let d = scratch();
    write_file(d.path(), "file", b"x", 0o644);
    std::fs::create_dir(d.path().join("dir")).unwrap();
    fifo(&d.path().join("fifo"));
    let before = listing(d.path());
    let w = |p: &str| {
        tool(
            d.path(),
            "write",
            serde_json::json!({"file_path": p, "content": "y"}),
        )
    };
    is(&w("dir"), "write: dir: is a directory", 1);
    is(&w("file/x"), "write: file/x: file already exists", 1);
    is(&w("file/x/y"), "write: file/x/y: not a directory", 1);
    is(
        &w("../x"),
        "write: path \"../x\" is outside the session's working directory",
        1,
    );
    // The reference blocks opening a FIFO for writing; this answers.
    is(&w("fifo"), "write: fifo: not a regular file", 1);
    // glibc's words, as the reference's (musl's are `filename too long`).
    let long = "n".repeat(300);
    is(
        &w(&long),
        &format!("write: path \"{long}\": file name too long"),
        1,
    );
    assert_eq!(listing(d.path()), before);
    assert_eq!(std::fs::read(d.path().join("file")).unwrap(), b"x");
}

#[test]
fn write_through_a_symlink_writes_its_target() {
    let d = scratch();
    write_file(d.path(), "t.txt", b"a", 0o644);
    symlink("t.txt", d.path().join("l")).unwrap();
    symlink("new.txt", d.path().join("dangling")).unwrap();
    is(
        &tool(
            d.path(),
            "write",
            serde_json::json!({"file_path": "l", "content": "b"}),
        ),
        "wrote 1 bytes to l",
        0,
    );
    is(
        &tool(
            d.path(),
            "write",
            serde_json::json!({"file_path": "dangling", "content": "c"}),
        ),
        "wrote 1 bytes to dangling",
        0,
    );
    assert_eq!(std::fs::read(d.path().join("t.txt")).unwrap(), b"b");
    assert_eq!(std::fs::read(d.path().join("new.txt")).unwrap(), b"c");
    assert!(std::fs::symlink_metadata(d.path().join("l"))
        .unwrap()
        .file_type()
        .is_symlink());
}

#[test]
fn edit_matches_exact_text_without_normalizing_crlf() {
    let d = scratch();
    let f = write_file(d.path(), "f.txt", b"a\r\nb a\r\n", 0o640);
    let e = |old: &str, new: &str, all: serde_json::Value| {
        tool(
            d.path(),
            "edit",
            serde_json::json!({"file_path": "f.txt", "old_string": old, "new_string": new, "replace_all": all}),
        )
    };
    is(
        &e("a\n", "x", serde_json::Value::Null),
        "edit: old_string not found in f.txt",
        1,
    );
    is(
        &e("a", "x", serde_json::Value::Null),
        "edit: old_string appears 2 times in f.txt (must be unique)",
        1,
    );
    assert_eq!(std::fs::read(&f).unwrap(), b"a\r\nb a\r\n");
    is(
        &e("a\r", "é", serde_json::json!("yes")),
        "edited f.txt (2 replacement(s))",
        0,
    );
    assert_eq!(std::fs::read(&f).unwrap(), "é\nb é\n".as_bytes());
    is(
        &e("", "<", serde_json::json!(false)),
        "edit: old_string appears 7 times in f.txt (must be unique)",
        1,
    );
    is(
        &e("b", "B", serde_json::json!(2)),
        "ValueError('Invalid arguments for function edit')",
        1,
    );
    is(
        &e("b", "B", serde_json::json!(0)),
        "edited f.txt (1 replacement(s))",
        0,
    );
    assert_eq!(std::fs::read(&f).unwrap(), "é\nB é\n".as_bytes());
    assert_eq!(mode(&f), 0o640);
    assert_eq!(listing(d.path()).len(), 1);
}

#[test]
fn edit_limits_and_refusals() {
    let d = scratch();
    write_file(d.path(), "big", &vec![b'a'; 262_145], 0o644);
    write_file(d.path(), "bin", b"\xff", 0o644);
    write_file(d.path(), "many", &b"ab".repeat(100_000), 0o644);
    let e = |p: &str, old: &str, new: &str| {
        tool(
            d.path(),
            "edit",
            serde_json::json!({"file_path": p, "old_string": old, "new_string": new, "replace_all": true}),
        )
    };
    is(
        &e("big", "a", "b"),
        "edit: big is 262145 bytes, exceeds 262144-byte limit. The edit tool loads the whole file and cannot modify a file this large.",
        1,
    );
    is(
        &e("bin", "a", "b"),
        "edit: bin: not valid UTF-8 text (cannot edit binary files)",
        1,
    );
    is(
        &e("many", "b", "bb"),
        "edit: 100000 replacements would make many 300000 bytes, exceeds 262144-byte limit.",
        1,
    );
    is(
        &e("none", "a", "b"),
        "edit: none: no such file or directory",
        1,
    );
    is(&e(".", "a", "b"), "edit: .: not a regular file", 1);
    assert_eq!(
        std::fs::read(d.path().join("many")).unwrap(),
        b"ab".repeat(100_000)
    );
    assert_eq!(listing(d.path()).len(), 3);
}

#[test]
fn glob_is_pythons_pathlib_newest_first() {
    let d = scratch();
    let ws = d.path().join("ws");
    std::fs::create_dir_all(ws.join("sub/deep")).unwrap();
    write_file(d.path(), "outside.txt", b"", 0o644);
    for (name, t) in [
        ("a.txt", 1),
        (".hidden", 3),
        ("sub/b.txt", 2),
        ("sub/deep/c.txt", 4),
        ("{a,b}.txt", 0),
    ] {
        let p = write_file(&ws, name, b"", 0o644);
        let t = rustix::fs::Timespec {
            tv_sec: 1_700_000_000 + t,
            tv_nsec: 0,
        };
        rustix::fs::utimensat(
            rustix::fs::CWD,
            &p,
            &rustix::fs::Timestamps {
                last_access: t,
                last_modification: t,
            },
            rustix::fs::AtFlags::empty(),
        )
        .unwrap();
    }
    symlink("../outside.txt", ws.join("out.txt")).unwrap();
    symlink("sub", ws.join("sublink")).unwrap();
    let w = ws.display().to_string();
    let g = |p: &str| tool(&ws, "glob", serde_json::json!({"pattern": p}));
    // `*` matches dotfiles; the link leading outside is dropped.
    is(&g("*.txt"), &format!("{w}/a.txt\n{w}/{{a,b}}.txt"), 0);
    is(&g(".*"), &format!("{w}/.hidden"), 0);
    is(
        &g("**/*.txt"),
        &format!("{w}/sub/deep/c.txt\n{w}/sub/b.txt\n{w}/a.txt\n{w}/{{a,b}}.txt"),
        0,
    );
    // A final `**` yields directories, never through the symlink.
    let mut dirs: Vec<String> = g("**").stdout.split('\n').map(str::to_owned).collect();
    dirs.sort();
    assert_eq!(
        dirs,
        [w.clone(), format!("{w}/sub"), format!("{w}/sub/deep")]
    );
    is(&g("sublink/*.txt"), &format!("{w}/sublink/b.txt"), 0);
    is(&g("*.rs"), "no matches", 0);
    is(
        &g("/etc/*"),
        "glob: absolute pattern not permitted; pass a relative pattern (and optionally path)",
        1,
    );
    is(
        &g("sub/../*"),
        "glob: '..' is not permitted in the pattern",
        1,
    );
    is(&g(""), "glob: Unacceptable pattern: ''", 1);
    is(
        &g("a**"),
        "glob: Invalid pattern: '**' can only be an entire path component",
        1,
    );
    is(&g("."), "IndexError('tuple index out of range')", 1);
    is(
        &g("./"),
        "AttributeError(\"'_TerminatingSelector' object has no attribute 'select_from'\")",
        1,
    );
    is(&g("sub/"), &format!("{w}/sub"), 0);
    let r = tool(
        &ws,
        "glob",
        serde_json::json!({"pattern": "*", "path": "sub"}),
    );
    // sub/deep's mtime is the creation of c.txt: now, the newest.
    is(&r, &format!("{w}/sub/deep\n{w}/sub/b.txt"), 0);
}

#[test]
fn requests_that_are_not_tool_calls_are_invalid_invocations() {
    let d = scratch();
    let r = run_stdin(d.path(), &TOOLSET, br#"{"name":"bash","input":{}}"#);
    assert_eq!(r.code, 2, "{r:?}");
    let r = run_stdin(d.path(), &TOOLSET, b"not json");
    assert_eq!(r.code, 2, "{r:?}");
    let r = run_stdin(d.path(), &["--toolset", "other"], b"{}");
    assert_eq!(r.code, 2, "{r:?}");
    assert!(listing(d.path()).is_empty());
}

/// A request on stdin past 64 MiB is refused saying the bound, not cut
/// and parsed as a truncated JSON text; one byte less is a request.
#[test]
fn a_request_over_64_mib_is_refused_naming_the_bound() {
    let d = scratch();
    let head = br#"{"name":"write","input":{"file_path":"big.txt","content":""#;
    let tail = br#""}}"#;
    let make = |total: usize| {
        let mut req = head.to_vec();
        req.resize(total - tail.len(), b'x');
        req.extend_from_slice(tail);
        req
    };
    let r = run_stdin(d.path(), &TOOLSET, &make((64 << 20) + 1));
    assert_eq!(
        (r.stdout.as_str(), r.code),
        (
            "as-edit --toolset: the request on stdin is over 67108864 bytes (64 MiB), \
             the bound of a tool call: nothing was done; send a smaller one (write a \
             large file in parts)\n",
            2
        )
    );
    assert!(listing(d.path()).is_empty());
    let r = run_stdin(d.path(), &TOOLSET, &make(64 << 20));
    let n = (64 << 20) - head.len() - tail.len();
    is(&r, &format!("wrote {n} bytes to big.txt"), 0);
    assert_eq!(
        std::fs::metadata(d.path().join("big.txt")).unwrap().len(),
        n as u64
    );
}

#[test]
fn a_file_named_like_the_option_is_still_edited() {
    let d = scratch();
    write_file(d.path(), "--toolset", b"abc", 0o644);
    let (o, n) = (b64("b"), b64("x"));
    let r = run_argv(d.path(), &[b"--", b"--toolset", o.as_bytes(), n.as_bytes()]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(std::fs::read(d.path().join("--toolset")).unwrap(), b"axc");
}

#[test]
fn a_file_this_user_may_not_write_is_refused_not_replaced() {
    // The reference opens the file for writing: EACCES. A rename through
    // the writable directory would replace it anyway; as-edit must not.
    if !setpriv_available() {
        return skip("needs root and setpriv to run as another user");
    }
    let d = scratch();
    std::fs::set_permissions(
        d.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .unwrap();
    let f = write_file(d.path(), "f.txt", b"abc", 0o444);
    let ino = inode(&f);
    for (name, input, want) in [
        (
            "write",
            serde_json::json!({"file_path": "f.txt", "content": "x"}),
            "write: f.txt: permission denied",
        ),
        (
            "edit",
            serde_json::json!({"file_path": "f.txt", "old_string": "b", "new_string": "x"}),
            "edit: f.txt: permission denied",
        ),
    ] {
        let req = serde_json::json!({"name": name, "input": input}).to_string();
        let b = b64(&req);
        let r = run_as_nobody(
            d.path(),
            &[
                b"--toolset",
                b"agent_toolset_20260401",
                b"--request-b64",
                b.as_bytes(),
            ],
        );
        assert_eq!((r.stdout.as_str(), r.code), (want, 1), "{r:?}");
        assert_unchanged(&f, b"abc", ino);
    }
    assert_eq!(listing(d.path()), ["f.txt"]);
}

/// The grep tree: ripgrep's default filters each met once.
fn grep_tree(d: &Path) {
    for dir in [".git", "skip", "node_modules", "sub"] {
        std::fs::create_dir(d.join(dir)).unwrap();
    }
    for (name, body) in [
        (".gitignore", &b"*.log\n!keep.log\n!.env\n"[..]),
        (".ignore", b"skip/\n"),
        (".rgignore", b"!b.md\n"),
        ("sub/.ignore", b"*.md\n"),
        ("a.txt", b"foo 1\nbar\nfoo 3"),
        ("x.log", b"foo log\n"),
        ("keep.log", b"foo keep\n"),
        (".env", b"foo env\n"),
        (".hid", b"foo hidden\n"),
        ("skip/s.txt", b"foo skip\n"),
        ("node_modules/m.js", b"foo nm\n"),
        ("bin.dat", b"foo\0bin\n"),
        ("sub/c.txt", b"x foo\r\n"),
        ("sub/r.md", b"foo md\n"),
        ("sub/b.md", b"foo b\n"),
    ] {
        write_file(d, name, body, 0o644);
    }
    symlink("a.txt", d.join("ln")).unwrap();
}

#[test]
fn grep_walks_with_ripgreps_default_filters() {
    let d = scratch();
    grep_tree(d.path());
    let w = std::fs::canonicalize(d.path()).unwrap();
    let w = w.display();
    // Checked against the reference with rg 13 (lines compared sorted:
    // rg's order is its threads'; as-edit's is bytewise by path). Not
    // shown: x.log (.gitignore in a repository), .hid (hidden), skip/
    // (.ignore), bin.dat (a NUL), ln (a symlink), sub/r.md (sub/.ignore);
    // shown: .env (whitelisted), node_modules, sub/b.md (.rgignore's
    // whitelist beats sub/.ignore).
    let r = tool(d.path(), "grep", serde_json::json!({"pattern": "foo"}));
    is(
        &r,
        &format!(
            "{w}/.env:1:foo env\n{w}/a.txt:1:foo 1\n{w}/a.txt:3:foo 3\n{w}/keep.log:1:foo keep\n\
             {w}/node_modules/m.js:1:foo nm\n{w}/sub/b.md:1:foo b\n{w}/sub/c.txt:1:x foo\r\n"
        ),
        0,
    );
    // A subdirectory: the parents' ignore files still count.
    let r = tool(
        d.path(),
        "grep",
        serde_json::json!({"pattern": "o+ ", "path": "sub"}),
    );
    is(&r, &format!("{w}/sub/b.md:1:foo b\n"), 0);
    // Without the repository, .gitignore is not read.
    std::fs::remove_dir(d.path().join(".git")).unwrap();
    let r = tool(d.path(), "grep", serde_json::json!({"pattern": "log$"}));
    is(&r, &format!("{w}/x.log:1:foo log\n"), 0);
}

#[test]
fn grep_reads_the_repositorys_info_exclude_after_its_gitignores() {
    // rg 13 (checked): the nearest repository root's .git/info/exclude
    // ignores what no .gitignore whitelists, also when the search starts
    // below it; a nested repository does not inherit it.
    let d = scratch();
    for dir in [".git/info", "sub", "inner/.git"] {
        std::fs::create_dir_all(d.path().join(dir)).unwrap();
    }
    for (name, body) in [
        (".git/info/exclude", &b"*.log\n"[..]),
        ("sub/.gitignore", b"!keep.log\n"),
        ("a.log", b"foo a\n"),
        ("b.txt", b"foo b\n"),
        ("sub/c.log", b"foo c\n"),
        ("sub/keep.log", b"foo keep\n"),
        ("inner/d.log", b"foo d\n"),
    ] {
        write_file(d.path(), name, body, 0o644);
    }
    let w = std::fs::canonicalize(d.path()).unwrap();
    let w = w.display();
    let r = tool(d.path(), "grep", serde_json::json!({"pattern": "foo"}));
    is(
        &r,
        &format!("{w}/b.txt:1:foo b\n{w}/inner/d.log:1:foo d\n{w}/sub/keep.log:1:foo keep\n"),
        0,
    );
    let r = tool(
        d.path(),
        "grep",
        serde_json::json!({"pattern": "foo", "path": "sub"}),
    );
    is(&r, &format!("{w}/sub/keep.log:1:foo keep\n"), 0);
    // Named, a file is searched whatever the rules say.
    let r = tool(
        d.path(),
        "grep",
        serde_json::json!({"pattern": "foo", "path": "a.log"}),
    );
    is(&r, "1:foo a\n", 0);
}

#[test]
fn grep_enters_a_vcs_directory_a_rule_whitelists() {
    // rg 13 (checked) has no rule of its own for .git: it is a hidden
    // name, searched once an ignore rule whitelists it (`!.git/` here in
    // .git/info/exclude, `!.hg/` in .ignore); .svn stays hidden.
    let d = scratch();
    for dir in [".git/info", ".hg", ".svn"] {
        std::fs::create_dir_all(d.path().join(dir)).unwrap();
    }
    for (name, body) in [
        (".git/info/exclude", &b"!.git/\n"[..]),
        (".git/config", b"foo git\n"),
        (".hg/x", b"foo hg\n"),
        (".svn/y", b"foo svn\n"),
        (".ignore", b"!.hg/\n"),
        ("a", b"foo a\n"),
    ] {
        write_file(d.path(), name, body, 0o644);
    }
    let w = std::fs::canonicalize(d.path()).unwrap();
    let w = w.display();
    let r = tool(d.path(), "grep", serde_json::json!({"pattern": "foo"}));
    is(
        &r,
        &format!("{w}/.git/config:1:foo git\n{w}/.hg/x:1:foo hg\n{w}/a:1:foo a\n"),
        0,
    );
}

#[test]
fn grep_takes_a_class_holding_a_newline_among_other_members() {
    // rg 13 (checked): a class with members besides `\n` loses the `\n`
    // and is taken; a class of `\n` alone is the refused literal.
    let d = scratch();
    write_file(d.path(), "f", b"a\nb\n", 0o644);
    let grep = |p: &str| {
        tool(
            d.path(),
            "grep",
            serde_json::json!({"pattern": p, "path": "f"}),
        )
    };
    is(&grep("[^\\n]"), "1:a\n2:b\n", 0);
    is(&grep("[^a\\x0A]"), "2:b\n", 0);
    is(&grep("[a\\n]"), "1:a\n", 0);
    let refused = "grep: rg failed: the literal '\"\\n\"' is not allowed in a regex\n\n\
                   Consider enabling multiline mode with the --multiline flag (or -U for short).\n\
                   When multiline mode is enabled, new line characters can be matched.\n";
    for p in ["[\\n]", "[\\x{a}]", "x\\n", "[\\n\\x0a]"] {
        is(&grep(p), refused, 1);
    }
}

#[test]
fn grep_of_one_file_prints_no_path_and_names_a_binary_match() {
    let d = scratch();
    grep_tree(d.path());
    let r = tool(
        d.path(),
        "grep",
        serde_json::json!({"pattern": "^foo", "path": "a.txt"}),
    );
    is(&r, "1:foo 1\n3:foo 3\n", 0);
    // Named, a hidden or ignored file is searched.
    let r = tool(
        d.path(),
        "grep",
        serde_json::json!({"pattern": "foo", "path": "x.log"}),
    );
    is(&r, "1:foo log\n", 0);
    let r = tool(
        d.path(),
        "grep",
        serde_json::json!({"pattern": "bin", "path": "bin.dat"}),
    );
    is(
        &r,
        "binary file matches (found \"\\0\" byte around offset 3)\n",
        0,
    );
    let r = tool(
        d.path(),
        "grep",
        serde_json::json!({"pattern": "zzz", "path": "bin.dat"}),
    );
    is(&r, "no matches", 0);
    let r = tool(d.path(), "grep", serde_json::json!({"pattern": "zzz"}));
    is(&r, "no matches", 0);
}

#[test]
fn grep_refusals_have_the_references_texts() {
    let d = scratch();
    grep_tree(d.path());
    let w = std::fs::canonicalize(d.path()).unwrap();
    let r = tool(
        d.path(),
        "grep",
        serde_json::json!({"pattern": "x", "path": "missing"}),
    );
    is(
        &r,
        &format!(
            "grep: rg failed: {}/missing: No such file or directory (os error 2)\n",
            w.display()
        ),
        1,
    );
    let r = tool(
        d.path(),
        "grep",
        serde_json::json!({"pattern": "x", "path": "../x"}),
    );
    is(
        &r,
        "grep: path \"../x\" is outside the session's working directory",
        1,
    );
    let r = tool(d.path(), "grep", serde_json::json!({"pattern": "a\nb"}));
    is(
        &r,
        "grep: rg failed: the literal '\"\\n\"' is not allowed in a regex\n\nConsider enabling \
         multiline mode with the --multiline flag (or -U for short).\nWhen multiline mode is \
         enabled, new line characters can be matched.\n",
        1,
    );
    let r = tool(d.path(), "grep", serde_json::json!({"pattern": "a("}));
    assert!(
        r.stdout
            .starts_with("grep: rg failed: regex parse error:\n    a(\n")
            && r.code == 1,
        "{r:?}"
    );
    fifo(&d.path().join("f"));
    let r = tool(
        d.path(),
        "grep",
        serde_json::json!({"pattern": "x", "path": "f"}),
    );
    is(&r, "grep: f: not a regular file", 1);
}

#[test]
fn grep_output_is_cut_at_100_kib_with_the_notice() {
    let d = scratch();
    std::fs::create_dir(d.path().join(".git")).unwrap();
    let line = format!("{}\n", "foo ".repeat(24));
    write_file(d.path(), "big.txt", line.repeat(2000).as_bytes(), 0o644);
    let r = tool(
        d.path(),
        "grep",
        serde_json::json!({"pattern": "foo", "path": "big.txt"}),
    );
    let full: String = (1..=2000).map(|i| format!("{i}:{line}")).collect();
    let notice = "\n[output truncated at 102400 bytes]";
    is(&r, &format!("{}{notice}", &full[..102_400]), 0);
}

fn utf16(s: &str, be: bool) -> Vec<u8> {
    let mut out = if be {
        b"\xfe\xff".to_vec()
    } else {
        b"\xff\xfe".to_vec()
    };
    for u in s.encode_utf16() {
        out.extend(if be { u.to_be_bytes() } else { u.to_le_bytes() });
    }
    out
}

/// Files with a byte-order mark, as rg 13 (and so the reference) reads
/// them: a UTF-8 BOM neither shown nor seen by `^`, UTF-16 with a BOM
/// transcoded and searched, a NUL after a BOM binary at the offset of
/// the transcoded text (each text checked against the reference).
#[test]
fn grep_reads_files_with_a_bom_as_rg_does() {
    let d = scratch();
    let mut odd = utf16("foo odd\n", false);
    odd.push(b'A');
    let mut lone = utf16("foo a", false);
    lone.extend_from_slice(b"\x00\xd8b\0\n\0");
    for (name, body) in [
        ("u8.txt", b"\xef\xbb\xbffoo bar\nfoo two\nx\n".to_vec()),
        (
            "le.txt",
            utf16("foo le\nbar\nfoo \u{e9} \u{1d11e}\n", false),
        ),
        ("be.txt", utf16("foo be\r\nbar\n", true)),
        ("odd.txt", odd),
        ("lone.txt", lone),
        ("only.txt", b"\xff\xfe".to_vec()),
        ("nul8.txt", b"\xef\xbb\xbffoo\0bar\nfoo\n".to_vec()),
        ("nul16.txt", utf16("foo\0bar\nfoo\n", false)),
        ("nobom.txt", utf16("foo\n", false)[2..].to_vec()),
    ] {
        write_file(d.path(), name, &body, 0o644);
    }
    let w = std::fs::canonicalize(d.path()).unwrap();
    let w = w.display();
    let grep = |pattern: &str, path: Option<&str>| {
        let mut input = serde_json::json!({ "pattern": pattern });
        if let Some(p) = path {
            input["path"] = p.into();
        }
        tool(d.path(), "grep", input)
    };
    is(
        &grep("^foo", None),
        &format!(
            "{w}/be.txt:1:foo be\r\n{w}/le.txt:1:foo le\n{w}/le.txt:3:foo \u{e9} \u{1d11e}\n\
             {w}/lone.txt:1:foo a\u{fffd}b\n{w}/odd.txt:1:foo odd\n\
             {w}/u8.txt:1:foo bar\n{w}/u8.txt:2:foo two\n"
        ),
        0,
    );
    is(&grep("^foo", Some("u8.txt")), "1:foo bar\n2:foo two\n", 0);
    is(&grep("^", Some("odd.txt")), "1:foo odd\n2:\u{fffd}\n", 0);
    is(&grep("^", Some("only.txt")), "no matches", 0);
    is(&grep("\\x{FEFF}", Some("u8.txt")), "no matches", 0);
    let binary = "binary file matches (found \"\\0\" byte around offset 3)\n";
    is(&grep("foo", Some("nul8.txt")), binary, 0);
    is(&grep("foo", Some("nul16.txt")), binary, 0);
    // The reference's read decodes UTF-8 as Python's "utf-8" codec does:
    // the BOM kept as U+FEFF; UTF-16 is not UTF-8.
    let read = |f: &str| tool(d.path(), "read", serde_json::json!({ "file_path": f }));
    is(&read("u8.txt"), "\u{feff}foo bar\nfoo two\nx\n", 0);
    is(
        &read("le.txt"),
        "read: le.txt: not valid UTF-8 text (binary files are only supported for image/PDF extensions)",
        1,
    );
}

/// A UTF-16 file of many transcoding chunks, pairs and lone surrogates
/// split across the chunks' edges at every parity: the lines rg shows
/// (where rg is installed, compared with it too), numbered as rg numbers
/// them; the oracle is the standard library's lossy UTF-16 decoding.
#[test]
fn grep_transcodes_a_large_utf16_file_across_its_chunks() {
    let d = scratch();
    let mut units: Vec<u16> = Vec::new();
    let mut i = 0u32;
    while units.len() < 400_000 {
        units.extend(format!("l{i} \u{e9}").encode_utf16());
        match i % 5 {
            0 => units.extend("\u{1d11e}x".encode_utf16()),
            1 => units.push(0xd800),
            2 => units.push(0xdc00),
            3 => units.extend([0x20, 0xd83d]),
            _ => {}
        }
        if i % 13 == 0 {
            units.extend(" hit".encode_utf16());
        }
        units.push(u16::from(b'\n'));
        i += 1;
    }
    for be in [false, true] {
        let mut raw = if be {
            vec![0xfe, 0xff]
        } else {
            vec![0xff, 0xfe]
        };
        for u in &units {
            raw.extend(if be { u.to_be_bytes() } else { u.to_le_bytes() });
        }
        write_file(d.path(), "big.txt", &raw, 0o644);
        let text = String::from_utf16_lossy(&units);
        let want: String = text
            .split_terminator('\n')
            .enumerate()
            .filter(|(_, l)| l.contains("hit"))
            .map(|(n, l)| format!("{}:{l}\n", n + 1))
            .collect();
        assert!(
            want.len() > 1000 && want.len() < 100 * 1024,
            "{}",
            want.len()
        );
        let r = tool(
            d.path(),
            "grep",
            serde_json::json!({"pattern": "hit", "path": "big.txt"}),
        );
        is(&r, &want, 0);
        match std::process::Command::new("rg")
            .args([
                "--no-config",
                "-n",
                "--no-heading",
                "-e",
                "hit",
                "--",
                "big.txt",
            ])
            .current_dir(d.path())
            .output()
        {
            Ok(o) => assert_eq!(String::from_utf8_lossy(&o.stdout), want, "rg"),
            Err(e) => println!("rg not run ({e}): compared with the oracle only"),
        }
    }
}

#[test]
fn grep_says_which_ignore_file_it_did_not_read() {
    // An ignore file over 1 MiB is not read (tools/ignores.rs): the search
    // goes on as rg's would without it, and says so under its output.
    let d = scratch();
    std::fs::create_dir_all(d.path().join(".git")).unwrap();
    let mut rules = b"a.txt\n".to_vec();
    rules.resize((1 << 20) + 1, b'#');
    write_file(d.path(), ".gitignore", &rules, 0o644);
    write_file(d.path(), "a.txt", b"foo a\n", 0o644);
    let w = std::fs::canonicalize(d.path()).unwrap();
    let w = w.display();
    let note = format!(
        "[ignore file {w}/.gitignore is 1048577 bytes, over the 1048576 an ignore file may \
         hold: not read, its rules not applied]"
    );
    let r = tool(d.path(), "grep", serde_json::json!({"pattern": "foo"}));
    is(&r, &format!("{w}/a.txt:1:foo a\n{note}"), 0);
    let r = tool(d.path(), "grep", serde_json::json!({"pattern": "bar"}));
    is(&r, &format!("no matches\n{note}"), 0);
    // Within the bound the file is read: a.txt ignored.
    rules.truncate(1 << 20);
    write_file(d.path(), ".gitignore", &rules, 0o644);
    let r = tool(d.path(), "grep", serde_json::json!({"pattern": "foo"}));
    is(&r, "no matches", 0);
}

/// rg 13 drops one U+FEFF more right after a UTF-16 mark (its decoder
/// removes a BOM at the text's start): a file of `FF FE FF FE` has no
/// lines, `FE FF FE FF` then text starts with that text; a second U+FEFF,
/// or one after a UTF-8 mark, is text (compared with rg where installed).
#[test]
fn grep_drops_a_u_feff_right_after_a_utf16_mark_as_rg_does() {
    let d = scratch();
    let mut two = utf16("\u{feff}\u{feff}foo\n", false);
    two.extend(utf16("x", false)[2..].iter());
    for (name, body) in [
        ("be.txt", utf16("\u{feff}foo\n", true)),
        ("le.txt", utf16("\u{feff}foo\n", false)),
        ("only.txt", utf16("\u{feff}", false)),
        ("two.txt", two),
        ("u8.txt", b"\xef\xbb\xbf\xef\xbb\xbffoo\n".to_vec()),
    ] {
        write_file(d.path(), name, &body, 0o644);
    }
    let w = std::fs::canonicalize(d.path()).unwrap();
    let w = w.display();
    let grep = |path: Option<&str>| {
        let mut input = serde_json::json!({ "pattern": "^" });
        if let Some(p) = path {
            input["path"] = p.into();
        }
        tool(d.path(), "grep", input)
    };
    let walked = format!(
        "{w}/be.txt:1:foo\n{w}/le.txt:1:foo\n{w}/two.txt:1:\u{feff}foo\n{w}/two.txt:2:x\n\
         {w}/u8.txt:1:\u{feff}foo\n"
    );
    is(&grep(None), &walked, 0);
    is(&grep(Some("le.txt")), "1:foo\n", 0);
    is(&grep(Some("only.txt")), "no matches", 0);
    match std::process::Command::new("rg")
        .args([
            "--no-config",
            "-n",
            "--no-heading",
            "-e",
            "^",
            "--",
            "le.txt",
            "be.txt",
        ])
        .args(["only.txt", "two.txt", "u8.txt"])
        .current_dir(d.path())
        .output()
    {
        Ok(o) => {
            let mut got: Vec<_> = String::from_utf8_lossy(&o.stdout)
                .lines()
                .map(|l| format!("{w}/{l}\n"))
                .collect();
            got.sort();
            assert_eq!(got.concat(), walked, "rg");
        }
        Err(e) => println!("rg not run ({e}): compared with the expected text only"),
    }
}
