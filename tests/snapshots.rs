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

// `--hints`: each kind's exact line, the occurrence lines, both joined with
// `--report`, and `--at-line`'s refusals. Only these opted-in lines change.
#[test]
fn hint_lines() {
    let h = |file: &str, old: &str, new: &str| {
        line(
            file.as_bytes(),
            &["--hints", "--", "f", &b64(old), &b64(new)],
        )
    };
    let lines = [
        h("fn a() {\n    return 2;\n}\n", "return 1;", "return 2;"),
        h("x = 1   \ny = 2\nz = 3\n", "x = 1\ny = 2\n", "w"),
        h(
            "def f():\n    if x:\n        go()\n    return\n",
            "if x:\n    go()\n",
            "w",
        ),
        h("def f():\n\tif x:\n\t\tgo()\n", "def f():\n    if x:\n        go()\n", "w"),
        h("let  x =  1;\nlet y = 2;\n", "let x = 1;", "w"),
        h("say(\u{201c}hi\u{201d} \u{2014} ok)\n", "say(\"hi\" - ok)", "W"),
        h("first\n\tsecond\nthird\n", "first\\n\\tsecond", "w"),
        h(
            "fn compute_total(items: &[Item]) -> u64 {\n    items.iter().map(|i| i.price).sum()\n}\n",
            "fn compute_total(items: &[Item]) -> u32 {\n    items.iter().map(|i| i.cost).sum()\n}\n",
            "w",
        ),
        h("nothing alike here\n", "zzz", "w"),
        h("a\nb a\na\n", "a", "w"),
        line(
            b"a\nb a\na\n",
            &["--hints", "--report", "--", "f", &b64("a"), &b64("w")],
        ),
        line(
            b"x = 1   \n",
            &["--hints", "--report", "--", "f", &b64("x = 1\n"), &b64("w")],
        ),
        line(
            b"a\nb\na\n",
            &["--hints", "--at-line", "2", "--", "f", &b64("a"), &b64("w")],
        ),
        line(
            b"a a\n",
            &["--hints", "--at-line", "1", "--", "f", &b64("a"), &b64("w")],
        ),
        line(b"a\nb a\na\n", &["--at-line", "3", "--", "f", &b64("a"), &b64("w")]),
    ];
    insta::assert_snapshot!(lines.join(""));
}
