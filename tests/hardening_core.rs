//! Regression tests for the core's hardening: a batch of 100,000 edits
//! under a small stack, `--diff` cut inside multi-byte text, `--diff` built
//! from the replacements and the cap on `--report` `lines`. Each asserts the exact result line and bytes.

mod common;
use common::*;

use std::process::Command;

use sha2::Digest;

fn sha(b: &[u8]) -> String {
    sha2::Sha256::digest(b)
        .iter()
        .map(|x| format!("{x:02x}"))
        .collect()
}

/// Runs the binary through `sh -c` with `prelude` (e.g. a `ulimit`) first,
/// feeding `input` on stdin.
fn run_sh_stdin(dir: &std::path::Path, prelude: &str, args: &[&str], input: &[u8]) -> Run {
    let mut cmd = format!(
        "{prelude} exec {}",
        String::from_utf8(sh_quote(BIN.as_bytes())).unwrap()
    );
    for a in args {
        cmd.push(' ');
        cmd.push_str(&String::from_utf8(sh_quote(a.as_bytes())).unwrap());
    }
    let mut c = Command::new("sh");
    c.arg("-c").arg(&cmd);
    run_with_stdin(c, dir, input)
}

fn run(dir: &std::path::Path, args: &[&str]) -> Run {
    let a: Vec<&[u8]> = args.iter().map(|s| s.as_bytes()).collect();
    run_argv(dir, &a)
}

fn json(r: &Run) -> serde_json::Value {
    serde_json::from_str(r.stdout.strip_prefix("__RESULT__").expect("result line")).unwrap()
}

// ------------------------------------------------------------ item 2

/// 100,000 chained edits (`v0` → `v1` → … → `v100000`) in one `--stdin`
/// request, under a 256 KiB stack: the chain is a loop, not a recursion.
/// The old engine recursed once per edit and died with SIGSEGV (no line).
#[test]
fn hundred_thousand_edits_run_under_a_small_stack() {
    let d = scratch();
    let p = write_file(d.path(), "f", b"head\nv0\ntail\n", 0o644);
    let n = 100_000;
    let mut req = String::from(r#"{"path":"f","edits":["#);
    for i in 0..n {
        if i > 0 {
            req.push(',');
        }
        req.push_str(&format!(r#"{{"old":"v{i}\n","new":"v{}\n"}}"#, i + 1));
    }
    req.push_str("]}");
    let r = run_sh_stdin(d.path(), "ulimit -s 256 &&", &["--stdin"], req.as_bytes());
    assert_result(&r, &format!(r#"{{"count":{n}}}"#), 0);
    assert_eq!(
        std::fs::read(&p).unwrap(),
        format!("head\nv{n}\ntail\n").into_bytes()
    );
    assert_eq!(listing(d.path()), vec!["f"]);
}

// ------------------------------------------------------------ item 6

fn line_list(lines: impl Iterator<Item = u64>) -> String {
    lines.map(|l| l.to_string()).collect::<Vec<_>>().join(",")
}

/// A replace-all of 5,000 matches reports the lines of the first 1,000 and
/// says the list is cut; in a batch, each edit's list is cut the same way.
/// The old code listed all 5,000 (unbounded: 20 MB of `a\n` gave 79 MB).
#[test]
fn report_lines_are_capped_at_a_thousand() {
    let d = scratch();
    let dir = d.path().display();
    let p = write_file(d.path(), "f", "a\n".repeat(5000).as_bytes(), 0o644);
    let r = run(d.path(), &["--report", "f", &b64("a"), &b64("b"), "true"]);
    let new = "b\n".repeat(5000);
    assert_result(
        &r,
        &format!(
            r#"{{"count":5000,"path":"{dir}/f","size":10000,"sha256":"{}","lines":[{}],"lines_truncated":true}}"#,
            sha(new.as_bytes()),
            line_list(1..=1000)
        ),
        0,
    );
    assert_eq!(std::fs::read(&p).unwrap(), new.as_bytes());

    // A batch: the last edit's list is the top-level one (in that edit's
    // own output: lines 1, 2, 3, ...); the `edits` lists share one budget of
    // 1,000 lines in total, so the second edit's list is empty and cut.
    let r = run(
        d.path(),
        &[
            "--report",
            "--",
            "f",
            &b64("b"),
            &b64("c"),
            "true",
            &b64("c\nc\n"),
            &b64("d\n"),
            "true",
        ],
    );
    let newer = "d\n".repeat(2500);
    assert_result(
        &r,
        &format!(
            r#"{{"count":7500,"path":"{dir}/f","size":5000,"sha256":"{}","lines":[{}],"lines_truncated":true,"edits":[{{"count":5000,"lines":[{}],"lines_truncated":true}},{{"count":2500,"lines":[],"lines_truncated":true}}]}}"#,
            sha(newer.as_bytes()),
            line_list(1..=1000),
            line_list(1..=1000)
        ),
        0,
    );
    assert_eq!(std::fs::read(&p).unwrap(), newer.as_bytes());
}

/// break10 finding 4b: the `edits` lists of a batch share one budget of
/// 1,000 lines in total (so a batch of many replace-all edits cannot make
/// the result line huge): 300 + 300 + 300 + the first 100 of the fourth.
#[test]
fn batch_report_lines_share_one_budget_of_a_thousand() {
    let d = scratch();
    let dir = d.path().display();
    let p = write_file(d.path(), "f", "a\n".repeat(300).as_bytes(), 0o644);
    let (a, b) = (b64("a"), b64("b"));
    let r = run(
        d.path(),
        &[
            "--report", "--", "f", &a, &b, "true", &b, &a, "true", &a, &b, "true", &b, &a, "true",
        ],
    );
    let all = line_list(1..=300);
    assert_result(
        &r,
        &format!(
            r#"{{"count":1200,"path":"{dir}/f","size":600,"sha256":"{}","lines":[{all}],"edits":[{{"count":300,"lines":[{all}]}},{{"count":300,"lines":[{all}]}},{{"count":300,"lines":[{all}]}},{{"count":300,"lines":[{}],"lines_truncated":true}}]}}"#,
            sha("a\n".repeat(300).as_bytes()),
            line_list(1..=100)
        ),
        0,
    );
    assert_eq!(std::fs::read(&p).unwrap(), "a\n".repeat(300).as_bytes());
    assert_eq!(listing(d.path()), vec!["f"]);
}

/// `--report` of a batch has an entry for each of its
/// first 1,000 edits only, then `"edits_truncated":true`, so the line is
/// the same for 1,001 edits as for 200,000 (it was 9.2 MB, an entry per
/// edit); exactly 1,000 edits are listed whole. The top-level lines are
/// the last edit's.
#[test]
fn report_lists_the_first_thousand_edits_of_a_batch() {
    let d = scratch();
    let dir = d.path().display();
    let p = write_file(d.path(), "f", b"x\na\n", 0o644);
    let entries = vec![r#"{"count":1,"lines":[2]}"#; 1000].join(",");
    for (n, rest) in [
        (1000, ""),
        (1001, r#","edits_truncated":true"#),
        (200_000, r#","edits_truncated":true"#),
    ] {
        let edits = vec![serde_json::json!({"old": "a", "new": "a"}); n];
        let req = serde_json::json!({"path": "f", "edits": edits});
        let r = run_stdin(
            d.path(),
            &["--stdin", "--report"],
            req.to_string().as_bytes(),
        );
        assert_result(
            &r,
            &format!(
                r#"{{"count":{n},"path":"{dir}/f","size":4,"sha256":"{}","lines":[2],"edits":[{entries}]{rest}}}"#,
                sha(b"x\na\n")
            ),
            0,
        );
        assert_eq!(std::fs::read(&p).unwrap(), b"x\na\n");
        assert_eq!(listing(d.path()), vec!["f"]);
    }
}

/// break10 finding 4a: a batch too large for the memory it may use (here a
/// 1,000,000-edit `--stdin` request under a 64 MiB address-space limit) ends
/// with exactly one result line and nothing on stderr, exit 1, the file and
/// its directory untouched, instead of std's message on stderr and an abort
/// (exit 134) with no result line. The token is every resource failure's,
/// `write_failed`, not `internal_error`: it is no bug.
#[test]
fn out_of_memory_prints_one_result_line_and_nothing_on_stderr() {
    let d = scratch();
    let p = write_file(d.path(), "f", b"a\n", 0o644);
    let ino = inode(&p);
    let mut req = String::from(r#"{"path":"f","edits":["#);
    for i in 0..1_000_000 {
        if i > 0 {
            req.push(',');
        }
        req.push_str(r#"{"old":"a","new":"b"}"#);
    }
    req.push_str("]}");
    let r = run_sh_stdin(d.path(), "ulimit -v 65536;", &["--stdin"], req.as_bytes());
    assert_eq!(
        (r.stdout.as_str(), r.stderr.as_str(), r.code),
        (
            "__RESULT__{\"error\":\"write_failed\",\"detail\":\"out of memory (an allocation failed); the file is unchanged, retry\"}\n",
            "",
            1
        )
    );
    assert_unchanged(&p, b"a\n", ino);
    assert_eq!(listing(d.path()), vec!["f"]);
}

/// An allocation failing at every point of a single-file edit in turn
/// (`AS_EDIT_TEST_OOM_AT=k`, test builds): before the rename the line says
/// unchanged and the file is (same inode); after it, the edit is made and
/// the line says so, a success with its count (exit 0). It said
/// `write_failed` "the file is unchanged, retry" there too.
#[test]
fn out_of_memory_past_the_rename_says_the_edit_was_made() {
    let (mut k, mut old, mut new) = (1, 0, 0);
    loop {
        let d = scratch();
        let p = write_file(d.path(), "f", b"a\nb\n", 0o640);
        let ino = inode(&p);
        let r: Run = Command::new(BIN)
            .args(["--report", "--", "f", &b64("a"), &b64("x")])
            .current_dir(d.path())
            .env("AS_EDIT_TEST_OOM_AT", k.to_string())
            .output()
            .unwrap()
            .into();
        assert_eq!(r.stderr, "", "k={k}");
        k += 1;
        if r.code == 0 && !r.stdout.contains("out of memory") {
            break;
        }
        if r.stdout.contains("the file is unchanged") {
            assert_eq!(r.code, 1, "k={k}");
            assert_unchanged(&p, b"a\nb\n", ino);
            old += 1;
        } else {
            assert_eq!(
                (r.stdout.as_str(), r.code),
                ("__RESULT__{\"count\":1,\"detail\":\"out of memory after the commit (an allocation failed): every change was made; the rest of the result could not be built\"}\n", 0),
                "k={k}"
            );
            assert_eq!(std::fs::read(&p).unwrap(), b"x\nb\n");
            assert_eq!(mode(&p), 0o640);
            new += 1;
        }
        assert_eq!(listing(d.path()), vec!["f"], "k={k}");
    }
    assert!(old > 5 && new > 0, "{old} before the rename, {new} after");
}

/// break10 finding 4c: a batch's diff over a changed span of millions of
/// lines (a 4 MiB file of empty lines, every line rewritten) is written as
/// one hunk straight into the 64 KiB cap, with no line tables: it runs under
/// a 64 MiB address-space limit (the line tables took 353 MB).
#[test]
fn batch_diff_of_a_huge_span_fits_in_64_mib_of_address_space() {
    let d = scratch();
    let dir = d.path().display();
    let p = write_file(d.path(), "f", &vec![b'\n'; 4 << 20], 0o644);
    let args = [
        "--report",
        "--diff",
        "--",
        "f",
        &b64("\n\n"),
        &b64("a\n"),
        "true",
        &b64("a"),
        &b64("b"),
        "true",
    ];
    let r = run_sh_stdin(d.path(), "ulimit -v 65536;", &args, b"");
    assert_eq!((r.stderr.as_str(), r.code), ("", 0), "{r:?}");
    let v = json(&r);
    let head = format!("--- {dir}/f\n+++ {dir}/f\n@@ -1,4194304 +1,2097152 @@\n");
    let diff = format!("{head}{}", "-\n".repeat((64 * 1024 - head.len()) / 2));
    assert_eq!(v["count"], 4194304);
    assert_eq!(v["diff"].as_str().unwrap(), diff);
    assert_eq!(v["diff_truncated"], true);
    assert_eq!(std::fs::read(&p).unwrap(), "b\n".repeat(1 << 21).as_bytes());
    assert_eq!(listing(d.path()), vec!["f"]);
}

// ------------------------------------------------------------ items 4 and 5

#[path = "support/apply_diff.rs"]
mod apply_diff;

/// The issue's case: the 64 KiB cap falls inside a two-byte `é`. The diff
/// is cut after the last whole line that fits (the old code panicked:
/// `internal_error`, "end byte index 65536 is not a char boundary").
#[test]
fn diff_cap_inside_a_multibyte_character_cuts_on_a_line() {
    let d = scratch();
    let dir = d.path().display();
    let p = write_file(d.path(), "f", b"MARK\n", 0o644);
    let to = format!("a\n{}", format!("{}\n", "é".repeat(40)).repeat(1000));
    let r = run(
        d.path(),
        &["--report", "--diff", "f", &b64("MARK"), &b64(&to)],
    );
    let new = format!("{to}\n");
    let full = format!(
        "--- {dir}/f\n+++ {dir}/f\n@@ -1,1 +1,1002 @@\n-MARK\n{}",
        new.split_inclusive('\n')
            .map(|l| format!("+{l}"))
            .collect::<String>()
    );
    let keep = full.as_bytes()[..64 * 1024]
        .iter()
        .rposition(|b| *b == b'\n')
        .unwrap()
        + 1;
    assert!(
        !full.is_char_boundary(64 * 1024),
        "the cap must fall inside a character"
    );
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert_eq!(r.stderr, "");
    let v = json(&r);
    assert_eq!(v["count"], 1);
    assert_eq!(v["diff"].as_str().unwrap(), &full[..keep]);
    assert_eq!(v["diff_truncated"], true);
    assert_eq!(v["sha256"], sha(new.as_bytes()));
    assert_eq!(std::fs::read(&p).unwrap(), new.as_bytes());
}

/// A file of 65 MiB of empty lines with one match at the end, under a
/// 64 MiB address-space limit: the diff is built from the replacement, so
/// it needs no copy of either text, and is given even past 64 MiB. The old
/// code copied both texts and split them into lines (about 60x the file):
/// it could not run here, and past 64 MiB it gave no diff at all.
#[test]
fn diff_of_a_65_mib_file_fits_in_64_mib_of_address_space() {
    let d = scratch();
    let dir = d.path().display();
    let blank = 65 << 20;
    let mut content = vec![b'\n'; blank];
    content.extend_from_slice(b"MARK\n");
    let p = write_file(d.path(), "f", &content, 0o644);
    drop(content);
    let r = run_sh_stdin(
        d.path(),
        "ulimit -v 65536 &&",
        &["--report", "--diff", "f", &b64("MARK"), &b64("DONE")],
        b"",
    );
    let mut new = vec![b'\n'; blank];
    new.extend_from_slice(b"DONE\n");
    let diff = format!(
        "--- {dir}/f\\n+++ {dir}/f\\n@@ -{0},4 +{0},4 @@\\n \\n \\n \\n-MARK\\n+DONE\\n",
        blank - 2
    );
    assert_result(
        &r,
        &format!(
            r#"{{"count":1,"path":"{dir}/f","size":{},"sha256":"{}","lines":[{}],"diff":"{diff}"}}"#,
            new.len(),
            sha(&new),
            blank + 1
        ),
        0,
    );
    assert!(std::fs::read(&p).unwrap() == new);
}

/// What the binary prints applies with `patch` to the file as it was and
/// gives the file as it is now: one edit, replace-all (merged and separate
/// hunks), a CRLF file, a last line without newline, a batch.
#[test]
fn binary_diffs_apply_with_patch() {
    if std::process::Command::new("patch")
        .arg("--version")
        .output()
        .is_err()
    {
        panic!("patch(1) is needed for this test (Debian package patch)");
    }
    let body: String = (1..=40).map(|i| format!("line {i}\n")).collect();
    let cases: Vec<(&str, String, Vec<&str>)> = vec![
        (
            "one",
            body.clone(),
            vec!["line 7\n", "seven\nand more\n", "false"],
        ),
        ("all", body.clone(), vec!["line 1", "L1", "true"]),
        (
            "crlf",
            body.replace('\n', "\r\n"),
            vec!["line 20\nline 21", "x", "false"],
        ),
        ("no-eol", "a\nb\nc".to_owned(), vec!["c", "C\nD", "false"]),
        (
            "delete",
            body.clone(),
            vec!["line 3\nline 4\n", "", "false"],
        ),
        (
            "batch",
            body.clone(),
            vec![
                "line 2\n",
                "two\n",
                "false",
                "two\nline 3",
                "2-3",
                "false",
                "line 39",
                "end",
                "false",
            ],
        ),
    ];
    for (name, content, edit) in cases {
        let d = scratch();
        let p = write_file(d.path(), "f", content.as_bytes(), 0o644);
        let mut args = vec![
            "--report".to_owned(),
            "--diff".to_owned(),
            "--".to_owned(),
            "f".to_owned(),
        ];
        for (i, a) in edit.iter().enumerate() {
            args.push(if i % 3 == 2 { a.to_string() } else { b64(a) });
        }
        let argv: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
        let r = run(d.path(), &argv);
        assert_eq!(r.code, 0, "{name}: {}", r.stdout);
        let v = json(&r);
        let diff = v["diff"].as_str().unwrap();
        assert_eq!(v.get("diff_truncated"), None, "{name}");
        // patch works on the LF text (the diff is of the normalized text).
        let old_lf = content.replace("\r\n", "\n");
        write_file(d.path(), "orig", old_lf.as_bytes(), 0o644);
        write_file(d.path(), "d.patch", diff.as_bytes(), 0o644);
        let out = std::process::Command::new("patch")
            .args([
                "-s",
                "--no-backup-if-mismatch",
                "-o",
                "patched",
                "orig",
                "d.patch",
            ])
            .current_dir(d.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{name}: patch refused:\n{diff}\n{out:?}"
        );
        let new = std::fs::read(&p).unwrap();
        assert_eq!(
            std::fs::read(d.path().join("patched")).unwrap(),
            new,
            "{name}:\n{diff}"
        );
        assert_eq!(
            apply_diff::apply(&old_lf, diff).map(String::into_bytes),
            Some(new),
            "{name}"
        );
    }
}

/// A batch's diff needs both whole texts: up to 4 MiB each it is given,
/// past that it is left out with `diff_truncated` (documented in README).
#[test]
fn batch_diff_is_bounded_at_four_mib() {
    let d = scratch();
    let dir = d.path().display();
    let line = "0123456789abcdef0123456789abcdef0123456789abcdef012345678\n"; // 58 bytes
    let mut content = line.repeat((5 << 20) / line.len());
    content.push_str("END\n");
    let p = write_file(d.path(), "f", content.as_bytes(), 0o644);
    let args = [
        "--report",
        "--diff",
        "--",
        "f",
        &b64("END"),
        &b64("E"),
        "false",
        &b64("E\n"),
        &b64("F\n"),
        "false",
    ];
    let r = run(d.path(), &args);
    let new = content.replace("END\n", "F\n");
    assert_result(
        &r,
        &format!(
            r#"{{"count":2,"path":"{dir}/f","size":{},"sha256":"{}","lines":[{}],"edits":[{{"count":1,"lines":[{2}]}},{{"count":1,"lines":[{2}]}}],"diff_truncated":true}}"#,
            new.len(),
            sha(new.as_bytes()),
            content.lines().count()
        ),
        0,
    );
    assert_eq!(std::fs::read(&p).unwrap(), new.as_bytes());
    // The same batch on a small file has its diff.
    let small = format!("{}END\n", line.repeat(4));
    write_file(d.path(), "g", small.as_bytes(), 0o644);
    let args = [
        "--report",
        "--diff",
        "--",
        "g",
        &b64("END"),
        &b64("E"),
        "false",
        &b64("E\n"),
        &b64("F\n"),
        "false",
    ];
    let v = json(&run(d.path(), &args));
    assert_eq!(
        v["diff"],
        format!("--- {dir}/g\n+++ {dir}/g\n@@ -2,4 +2,4 @@\n {line} {line} {line}-END\n+F\n")
    );
    assert_eq!(v.get("diff_truncated"), None);
}

/// break10 finding 6: a path with a newline (or another control character,
/// or not UTF-8) is quoted C-style in the diff header, as git does, so the
/// header stays two lines and `patch` reads the name back.
#[test]
fn diff_header_quotes_a_name_with_a_newline_or_invalid_utf8() {
    use std::os::unix::ffi::OsStrExt;
    let d = scratch();
    let dir = d.path().display().to_string();
    for (name, quoted) in [
        (&b"nl\nname"[..], r#"nl\nname"#),
        (&b"bad\xffname"[..], r#"bad\377name"#),
    ] {
        let p = d.path().join(std::ffi::OsStr::from_bytes(name));
        std::fs::write(&p, "one\ntwo\n").unwrap();
        let (o, n) = (b64("two"), b64("2"));
        let r = run_argv(
            d.path(),
            &[
                b"--report",
                b"--diff",
                b"--",
                name,
                o.as_bytes(),
                n.as_bytes(),
            ],
        );
        assert_eq!(r.code, 0, "{r:?}");
        let v = json(&r);
        assert_eq!(
            v["diff"].as_str().unwrap(),
            format!(
                "--- \"{dir}/{quoted}\"\n+++ \"{dir}/{quoted}\"\n@@ -1,2 +1,2 @@\n one\n-two\n+2\n"
            )
        );
        assert_eq!(std::fs::read(&p).unwrap(), b"one\n2\n");
    }
    assert_eq!(listing(d.path()).len(), 2);
}
