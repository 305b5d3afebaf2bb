//! Snapshots (insta) of `--help` and of the default result lines: without
//! opt-in flags the line must stay byte-identical to the core contract,
//! which the Java host's strict parser depends on.

mod common;
use common::*;

fn line(before: &[u8], args: &[&str]) -> String {
    let d = scratch();
    write_file(d.path(), "f", before, 0o644);
    let a: Vec<&[u8]> = args.iter().map(|s| s.as_bytes()).collect();
    let r = run_argv(d.path(), &a);
    format!(
        "exit {}: {}",
        r.code,
        r.stdout.replace(&d.path().display().to_string(), "<DIR>")
    )
}

#[test]
fn help() {
    let d = scratch();
    insta::assert_snapshot!(run_argv(d.path(), &[b"--help"]).stdout);
}

#[test]
fn default_result_lines() {
    let (a, b, aa) = (b64("a"), b64("b"), b64("aa"));
    let lines = [
        line(b"a", &["f", &a, &b]),
        line(b"a a", &["f", &a, &b, "true"]),
        line(b"aaaaa", &["f", &aa, &b]),
        line(b"x", &["f", &a, &b]),
        line(b"", &["f", &a, &b]),
        line(b"\xc3", &["f", &a, &b]),
        line(b"a", &["missing", &a, &b]),
        line(b"a", &["f", "!", &b]),
        line(b"a", &["f", &a]),
        line("é".as_bytes(), &["f", &b64("é"), &b64("😀")]),
    ];
    insta::assert_snapshot!(lines.join(""));
}
