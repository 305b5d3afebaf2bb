//! The opt-in extensions: --expect-sha256, batches, --dry-run, --report,
//! --diff, --stdin, --eol preserve, --fsync. Each asserts the exact line and
//! the file state; without flags the core contract's lines are unchanged.

mod common;
use common::*;

use std::io::Write;
use std::process::{Command, Stdio};

use sha2::Digest;

fn sha(b: &[u8]) -> String {
    sha2::Sha256::digest(b)
        .iter()
        .map(|x| format!("{x:02x}"))
        .collect()
}

fn run(dir: &std::path::Path, args: &[&str]) -> Run {
    let a: Vec<&[u8]> = args.iter().map(|s| s.as_bytes()).collect();
    run_argv(dir, &a)
}

fn run_stdin(dir: &std::path::Path, args: &[&str], input: &[u8]) -> Run {
    let mut c = Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut pipe = c.stdin.take().unwrap();
    let input = input.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = pipe.write_all(&input);
    });
    let out = c.wait_with_output().unwrap();
    writer.join().unwrap();
    out.into()
}

#[test]
fn expect_sha256_guards_against_stale_reads() {
    let d = scratch();
    let p = write_file(d.path(), "f", b"v1 TOKEN\n", 0o644);
    let ino = inode(&p);
    let stale = sha(b"v0 TOKEN\n");
    let r = run(
        d.path(),
        &["--expect-sha256", &stale, "f", &b64("TOKEN"), &b64("X")],
    );
    assert_result(
        &r,
        &format!(
            r#"{{"error":"conflict","detail":"{}/f changed since it was read: its SHA-256 is {}"}}"#,
            d.path().display(),
            sha(b"v1 TOKEN\n")
        ),
        1,
    );
    assert_eq!(
        (std::fs::read(&p).unwrap(), inode(&p)),
        (b"v1 TOKEN\n".to_vec(), ino)
    );
    let r = run(
        d.path(),
        &[
            "--expect-sha256",
            &sha(b"v1 TOKEN\n"),
            "f",
            &b64("TOKEN"),
            &b64("X"),
        ],
    );
    assert_result(&r, r#"{"count":1}"#, 0);
    assert_eq!(std::fs::read(&p).unwrap(), b"v1 X\n");
    let r = run(
        d.path(),
        &["--expect-sha256", "ABC", "f", &b64("X"), &b64("Y")],
    );
    assert_result(
        &r,
        r#"{"error":"invalid_argument","detail":"--expect-sha256 takes 64 lowercase hex digits"}"#,
        2,
    );
    assert_eq!(listing(d.path()), vec!["f"]);
}

#[test]
fn batches_apply_in_order_all_or_nothing() {
    let d = scratch();
    let p = write_file(d.path(), "f", b"alpha beta gamma beta\n", 0o644);
    let ino = inode(&p);
    // Edit 2 sees edit 1's result; the count is the sum.
    let r = run(
        d.path(),
        &[
            "--",
            "f",
            &b64("alpha"),
            &b64("beta"),
            "false",
            &b64("beta"),
            &b64("B"),
            "true",
            &b64("gamma"),
            &b64("G"),
            "false",
        ],
    );
    assert_result(&r, r#"{"count":5}"#, 0);
    assert_eq!(std::fs::read(&p).unwrap(), b"B B G B\n");
    let ino2 = inode(&p);
    assert_ne!(ino2, ino, "one rename at the end");
    // Edit 2 of 3 fails: nothing is written, the error names it.
    let r = run(
        d.path(),
        &[
            "--",
            "f",
            &b64("G"),
            &b64("g"),
            "false",
            &b64("missing"),
            &b64("x"),
            "false",
            &b64("g"),
            &b64("h"),
            "false",
        ],
    );
    assert_result(
        &r,
        r#"{"error":"string_not_found","detail":"edit 2 of 3: OLD not found"}"#,
        1,
    );
    let r = run(
        d.path(),
        &[
            "--",
            "f",
            &b64("G"),
            &b64("g"),
            "false",
            &b64("B"),
            &b64("b"),
            "false",
        ],
    );
    assert_result(
        &r,
        r#"{"error":"multiple_occurrences","count":3,"detail":"edit 2 of 2: OLD occurs 3 times"}"#,
        1,
    );
    assert_eq!(
        (std::fs::read(&p).unwrap(), inode(&p)),
        (b"B B G B\n".to_vec(), ino2)
    );
    // Every triple carries its flag; a bad one is named.
    let r = run(
        d.path(),
        &[
            "--",
            "f",
            &b64("G"),
            &b64("g"),
            "false",
            &b64("B"),
            &b64("b"),
            "yes",
        ],
    );
    assert_result(
        &r,
        r#"{"error":"invalid_argument","detail":"edit 2 of 2: REPLACE_ALL must be exactly true or false, got \"yes\""}"#,
        2,
    );
    let r = run(
        d.path(),
        &[
            "--",
            "f",
            &b64("G"),
            &b64("g"),
            "false",
            &b64(""),
            &b64("b"),
            "false",
        ],
    );
    assert_result(
        &r,
        r#"{"error":"invalid_argument","detail":"edit 2 of 2: OLD is empty"}"#,
        2,
    );
    assert_eq!(listing(d.path()), vec!["f"]);
}

#[test]
fn dry_run_reports_without_writing() {
    let d = scratch();
    let p = write_file(d.path(), "f", b"a\r\nb\n", 0o600);
    let ino = inode(&p);
    let r = run(d.path(), &["--dry-run", "f", &b64("b"), &b64("c")]);
    assert_result(&r, r#"{"count":1}"#, 0);
    let r = run(
        d.path(),
        &["--dry-run", "--report", "f", &b64("b"), &b64("c")],
    );
    assert_result(
        &r,
        &format!(
            r#"{{"count":1,"path":"{}/f","size":4,"sha256":"{}","lines":[2],"dry_run":true}}"#,
            d.path().display(),
            sha(b"a\nc\n")
        ),
        0,
    );
    let r = run(d.path(), &["--dry-run", "f", &b64("zz"), &b64("c")]);
    assert_result(&r, r#"{"error":"string_not_found"}"#, 1);
    assert_eq!(
        (std::fs::read(&p).unwrap(), inode(&p)),
        (b"a\r\nb\n".to_vec(), ino)
    );
    assert_eq!(listing(d.path()), vec!["f"]);
}

#[test]
fn report_describes_the_new_content_and_errors_the_current_one() {
    let d = scratch();
    let p = write_file(d.path(), "f", b"x\ny\nx\n", 0o644);
    let dir = d.path().display();
    let r = run(
        d.path(),
        &["--report", "f", &b64("x"), &b64("z\nz"), "true"],
    );
    let new = b"z\nz\ny\nz\nz\n";
    assert_result(
        &r,
        &format!(
            r#"{{"count":2,"path":"{dir}/f","size":10,"sha256":"{}","lines":[1,4]}}"#,
            sha(new)
        ),
        0,
    );
    assert_eq!(std::fs::read(&p).unwrap(), new);
    // The sha256 feeds the next edit's --expect-sha256.
    let r = run(
        d.path(),
        &[
            "--report",
            "--expect-sha256",
            &sha(new),
            "--",
            "f",
            &b64("y"),
            &b64("Y"),
            "false",
            &b64("z\nz\nY"),
            &b64("W"),
            "false",
        ],
    );
    let newer = b"W\nz\nz\n";
    assert_result(
        &r,
        &format!(
            r#"{{"count":2,"path":"{dir}/f","size":6,"sha256":"{}","lines":[1],"edits":[{{"count":1,"lines":[3]}},{{"count":1,"lines":[1]}}]}}"#,
            sha(newer)
        ),
        0,
    );
    let r = run(d.path(), &["--report", "f", &b64("nope"), &b64("q")]);
    assert_result(
        &r,
        &format!(
            r#"{{"error":"string_not_found","path":"{dir}/f","size":6,"sha256":"{}"}}"#,
            sha(newer)
        ),
        1,
    );
}

#[test]
fn diff_is_unified_with_three_lines_of_context_and_capped() {
    let d = scratch();
    let content: String = (1..=10).map(|i| format!("line {i}\n")).collect();
    write_file(d.path(), "f", content.as_bytes(), 0o644);
    let dir = d.path().display();
    let r = run(
        d.path(),
        &["--report", "--diff", "f", &b64("line 5\n"), &b64("five\n")],
    );
    let expected_diff = format!(
        "--- {dir}/f\\n+++ {dir}/f\\n@@ -2,7 +2,7 @@\\n line 2\\n line 3\\n line 4\\n-line 5\\n+five\\n line 6\\n line 7\\n line 8\\n"
    );
    let new = content.replace("line 5\n", "five\n");
    assert_result(
        &r,
        &format!(
            r#"{{"count":1,"path":"{dir}/f","size":{},"sha256":"{}","lines":[5],"diff":"{expected_diff}"}}"#,
            new.len(),
            sha(new.as_bytes())
        ),
        0,
    );
    let r = run(d.path(), &["--diff", "f", &b64("five"), &b64("5")]);
    assert_result(
        &r,
        r#"{"error":"invalid_argument","detail":"--diff needs --report"}"#,
        2,
    );
    // A huge change is cut at 64 KiB, at a line end.
    let big: String = (0..20_000).map(|i| format!("row {i}\n")).collect();
    write_file(d.path(), "big", big.as_bytes(), 0o644);
    let r = run(
        d.path(),
        &[
            "--report",
            "--diff",
            "big",
            &b64("row"),
            &b64("ROW"),
            "true",
        ],
    );
    assert_eq!(r.code, 0);
    let v: serde_json::Value =
        serde_json::from_str(r.stdout.strip_prefix("__RESULT__").unwrap()).unwrap();
    let diff = v["diff"].as_str().unwrap();
    assert!(diff.len() <= 64 * 1024 && diff.len() > 60 * 1024 && diff.ends_with('\n'));
    assert_eq!(v["diff_truncated"], true);
    assert_eq!(v["count"], 20_000);
}

#[test]
fn stdin_carries_edits_beyond_the_argv_limit() {
    let d = scratch();
    let old = "o".repeat(200 * 1024);
    let new = "n".repeat(200 * 1024);
    let p = write_file(d.path(), "f", format!("<{old}>").as_bytes(), 0o644);
    let req =
        serde_json::json!({"path": "f", "edits": [{"old": old, "new": new, "replace_all": false}]});
    let r = run_stdin(d.path(), &["--stdin"], req.to_string().as_bytes());
    assert_result(&r, r#"{"count":1}"#, 0);
    assert_eq!(std::fs::read(&p).unwrap(), format!("<{new}>").into_bytes());
    // Flags combine with it; expect_sha256 can ride in the request.
    let cur = std::fs::read(&p).unwrap();
    let req = serde_json::json!({"path": "f", "edits": [{"old": "<", "new": "["}, {"old": ">", "new": "]"}], "expect_sha256": sha(&cur)});
    let r = run_stdin(
        d.path(),
        &["--stdin", "--dry-run"],
        req.to_string().as_bytes(),
    );
    assert_result(&r, r#"{"count":2}"#, 0);
    assert_eq!(std::fs::read(&p).unwrap(), cur);
    let bad: &[(&[u8], &str, &[&str])] = &[
        (b"{", "stdin request: EOF while parsing an object at line 1 column 1", &[]),
        (br#"{"path":"f","edits":[],"x":1}"#, "stdin request: unknown field `x`, expected one of `path`, `edits`, `expect_sha256` at line 1 column 26", &[]),
        (br#"{"edits":[{"old":"a","new":"b"}]}"#, "stdin request: missing field `path` at line 1 column 33", &[]),
        (b"{\"path\":\"f\xff\"}", "stdin request is not UTF-8 (bad byte at offset 10)", &[]),
        (br#"{"path":"f","edits":[]}"#, "stdin request: edits is empty", &[]),
        (br#"{"path":"","edits":[{"old":"a","new":"b"}]}"#, "stdin request: path is empty", &[]),
        (br#"{"path":"f","edits":[{"old":"a","new":"b"}]}"#, "the stdin request exceeds 10 bytes (--max-request-bytes)", &["--max-request-bytes", "10"]),
    ];
    for (input, detail, extra) in bad {
        let mut args = vec!["--stdin"];
        args.extend_from_slice(extra);
        let r = run_stdin(d.path(), &args, input);
        assert_result(
            &r,
            &format!(
                r#"{{"error":"invalid_argument","detail":"{}"}}"#,
                detail.replace('"', "\\\"")
            ),
            2,
        );
    }
    let r = run(d.path(), &["--stdin", "f", &b64("a"), &b64("b")]);
    assert_result(
        &r,
        r#"{"error":"invalid_argument","detail":"--stdin takes the request from standard input; give no PATH or edits"}"#,
        2,
    );
    assert_eq!(std::fs::read(&p).unwrap(), cur);
    assert_eq!(listing(d.path()), vec!["f"]);
}

#[test]
fn eol_preserve_keeps_the_files_style() {
    let d = scratch();
    let cases: &[(&[u8], &str, &str, &[u8])] = &[
        (
            b"a\r\nb\r\nc\r\n",
            "b\n",
            "B1\nB2\n",
            b"a\r\nB1\r\nB2\r\nc\r\n",
        ),
        (b"a\nb\nc\n", "b\n", "B1\r\nB2\n", b"a\nB1\nB2\nc\n"),
        // Mixed: the dominant ending wins (2 CRLF vs 1 LF).
        (b"a\r\nb\r\nc\n", "c", "C", b"a\r\nb\r\nC\r\n"),
        (b"a\nb\nc\r\n", "a", "A", b"A\nb\nc\n"),
    ];
    for (before, old, new, after) in cases {
        let p = write_file(d.path(), "f", before, 0o644);
        let r = run(d.path(), &["--eol", "preserve", "f", &b64(old), &b64(new)]);
        assert_result(&r, r#"{"count":1}"#, 0);
        assert_eq!(
            std::fs::read(&p).unwrap(),
            *after,
            "{:?}",
            String::from_utf8_lossy(before)
        );
    }
    // The default is LF, the status quo.
    let p = write_file(d.path(), "f", b"a\r\nb\r\n", 0o644);
    assert_result(
        &run(d.path(), &["--eol", "lf", "f", &b64("a"), &b64("A")]),
        r#"{"count":1}"#,
        0,
    );
    assert_eq!(std::fs::read(&p).unwrap(), b"A\nb\n");
    let r = run(d.path(), &["--eol", "crlf", "f", &b64("a"), &b64("A")]);
    assert_result(
        &r,
        r#"{"error":"invalid_argument","detail":"--eol takes lf or preserve, got \"crlf\""}"#,
        2,
    );
}

#[test]
fn fsync_edits_like_any_other() {
    let d = scratch();
    let p = write_file(d.path(), "f", b"abc", 0o640);
    let r = run(
        d.path(),
        &["--fsync", "--report", "f", &b64("b"), &b64("B")],
    );
    assert_result(
        &r,
        &format!(
            r#"{{"count":1,"path":"{}/f","size":3,"sha256":"{}","lines":[1]}}"#,
            d.path().display(),
            sha(b"aBc")
        ),
        0,
    );
    assert_eq!(
        (std::fs::read(&p).unwrap(), mode(&p)),
        (b"aBc".to_vec(), 0o640)
    );
    assert_eq!(listing(d.path()), vec!["f"]);
}

#[test]
fn fsync_flushes_the_file_before_the_rename_and_the_directory_after() {
    if Command::new("strace").arg("-V").output().is_err() {
        return skip("strace is not installed (scripts/test.sh installs it as root)");
    }
    let d = scratch();
    write_file(d.path(), "f", b"abc", 0o640);
    let trace = d.path().join("trace");
    let calls = |extra: &[&str]| {
        let mut args = vec![
            "-f",
            "-qq",
            "-e",
            "trace=fsync,fdatasync,rename,renameat,renameat2",
            "-o",
        ];
        let t = trace.to_str().unwrap().to_owned();
        args.push(&t);
        args.push(BIN);
        args.extend_from_slice(extra);
        let (o, n) = (b64("b"), b64("B"));
        let (o2, n2) = (b64("B"), b64("b"));
        let edit: Vec<&str> = if std::fs::read(d.path().join("f")).unwrap() == b"abc" {
            vec!["f", &o, &n]
        } else {
            vec!["f", &o2, &n2]
        };
        let out = Command::new("strace")
            .args(&args)
            .args(&edit)
            .current_dir(d.path())
            .output()
            .unwrap();
        assert!(String::from_utf8_lossy(&out.stdout).starts_with("__RESULT__{\"count\":1}"));
        let text = std::fs::read_to_string(&trace).unwrap();
        std::fs::remove_file(&trace).unwrap();
        text.lines()
            .filter_map(|l| {
                l.split('(')
                    .next()
                    .and_then(|s| s.split_whitespace().last())
                    .map(str::to_owned)
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(
        calls(&["--fsync"]),
        vec!["fsync", "renameat", "fsync"],
        "file, rename, directory"
    );
    assert_eq!(calls(&[]), vec!["renameat"], "no fsync unless asked");
}

#[test]
fn hashes_cover_the_whole_file_even_past_invalid_utf8() {
    let d = scratch();
    let mut bytes = b"ok \xff ".to_vec();
    bytes.extend(std::iter::repeat_n(b'x', 600 * 1024)); // past the first read chunk
    let p = write_file(d.path(), "f", &bytes, 0o644);
    let dir = d.path().display();
    // The expected hash is right: the refusal is about the content, not a conflict.
    let r = run(
        d.path(),
        &[
            "--report",
            "--expect-sha256",
            &sha(&bytes),
            "f",
            &b64("ok"),
            &b64("no"),
        ],
    );
    assert_result(
        &r,
        &format!(
            r#"{{"error":"read_failed","detail":"{dir}/f is not valid UTF-8: invalid start byte at byte offset 3","path":"{dir}/f","size":{},"sha256":"{}"}}"#,
            bytes.len(),
            sha(&bytes)
        ),
        1,
    );
    write_file(d.path(), "e", b"", 0o644);
    let r = run(d.path(), &["--report", "e", &b64("a"), &b64("b")]);
    assert_result(
        &r,
        &format!(
            r#"{{"error":"empty","path":"{dir}/e","size":0,"sha256":"{}"}}"#,
            sha(b"")
        ),
        1,
    );
    assert_eq!(std::fs::read(&p).unwrap(), bytes);
}
