//! `--hints` and `--at-line` through the real binary, for what a scenario
//! folder cannot express: a second call built from the first call's answer,
//! properties over generated files, and bounds that need files of MiBs.

mod common;
use common::*;

use std::path::Path;

use proptest::prelude::*;
use serde_json::Value;

/// Runs `as-edit ARGS` (argv, no shell) and parses the result line.
fn result(dir: &Path, args: &[&str]) -> (Value, i32, String) {
    let a: Vec<&[u8]> = args.iter().map(|s| s.as_bytes()).collect();
    let r = run_argv(dir, &a);
    assert_eq!(r.stderr, "");
    let json = r
        .stdout
        .strip_prefix("__RESULT__")
        .and_then(|s| s.strip_suffix('\n'))
        .unwrap_or_else(|| panic!("one result line: {:?}", r.stdout));
    (serde_json::from_str(json).unwrap(), r.code, r.stdout)
}

/// One kind's case: the file, an OLD that does not match, a NEW.
struct Case {
    kind: &'static str,
    file: &'static str,
    old: &'static str,
    new: &'static str,
}

const CASES: &[Case] = &[
    Case {
        kind: "already_applied",
        file: "fn a() {\n    return 2;\n}\n",
        old: "return 1;",
        new: "return 2;",
    },
    Case {
        kind: "trailing_whitespace",
        file: "x = 1   \ny = 2\nz = 3\n",
        old: "x = 1\ny = 2\n",
        new: "x = 10\ny = 20\n",
    },
    Case {
        kind: "indentation",
        file: "def f():\n    if x:\n        go()\n    return\n",
        old: "if x:\n    go()\n",
        new: "if y:\n    stop()\n",
    },
    Case {
        kind: "tabs",
        file: "def f():\n\tif x:\n\t\tgo()\n",
        old: "def f():\n    if x:\n        go()\n",
        new: "def g():\n\tpass\n",
    },
    Case {
        kind: "whitespace",
        file: "let  x =  1;\nlet y = 2;\n",
        old: "let x = 1;",
        new: "let x = 3;",
    },
    Case {
        kind: "unicode_punctuation",
        file: "say(\u{201c}hi\u{201d} \u{2014} ok)\n",
        old: "say(\"hi\" - ok)",
        new: "SAID",
    },
    Case {
        kind: "escapes",
        file: "first\n\tsecond\nthird\n",
        old: "first\\n\\tsecond",
        new: "one\n\ttwo",
    },
    Case {
        kind: "similar",
        file: "fn compute_total(items: &[Item]) -> u64 {\n    items.iter().map(|i| i.price).sum()\n}\n",
        old: "fn compute_total(items: &[Item]) -> u32 {\n    items.iter().map(|i| i.cost).sum()\n}\n",
        new: "fn total() -> u64 {\n    0\n}\n",
    },
];

/// Splices `new` over the 1-based lines `line..=end` of `file`, keeping the
/// last line's newline unless the hint's text carried it.
fn splice(file: &str, line: u64, text: &str, new: &str) -> String {
    let start: usize = file
        .split_inclusive('\n')
        .take(line as usize - 1)
        .map(str::len)
        .sum();
    assert_eq!(
        &file[start..start + text.len()],
        text,
        "text is the file's lines"
    );
    format!("{}{new}{}", &file[..start], &file[start + text.len()..])
}

// The issue's "done when": for every kind, the second call uses only the
// hint's `text` as OLD (nothing else read from the file) and succeeds.
#[test]
fn every_kind_second_call_with_the_hint_text_succeeds() {
    for c in CASES {
        let d = scratch();
        let p = write_file(d.path(), "f", c.file.as_bytes(), 0o644);
        let ino = inode(&p);
        let (v, code, line) = result(d.path(), &["--hints", "--", "f", &b64(c.old), &b64(c.new)]);
        assert_eq!(
            (v["error"].as_str(), code),
            (Some("string_not_found"), 1),
            "{line}"
        );
        let h = &v["hints"][0];
        assert_eq!(h["kind"], c.kind, "{}: {line}", c.kind);
        assert_eq!(
            std::fs::read(&p).unwrap(),
            c.file.as_bytes(),
            "refusal leaves the file"
        );
        assert_eq!(inode(&p), ino);
        let text = h["text"].as_str().unwrap();
        // already_applied: the text holds NEW; sending it again as OLD with
        // a visible change proves it is unique and exact, like the others.
        let new = if c.kind == "already_applied" {
            "return 3;"
        } else {
            c.new
        };
        let (v, code, line) = result(d.path(), &["--", "f", &b64(text), &b64(new)]);
        assert_eq!(
            (v["count"].as_u64(), code),
            (Some(1), 0),
            "{}: {line}",
            c.kind
        );
        let want = splice(c.file, h["line"].as_u64().unwrap(), text, new);
        assert_eq!(std::fs::read_to_string(&p).unwrap(), want, "{}", c.kind);
        assert_eq!(listing(d.path()), vec!["f"]);
    }
}

#[test]
fn multiple_occurrences_second_call_with_at_line_succeeds() {
    let d = scratch();
    let file = "a = 1\nb = 2\na = 1\nc = 3\na = 1\n";
    let p = write_file(d.path(), "f", file.as_bytes(), 0o644);
    let (a, z) = (b64("a = 1"), b64("a = 9"));
    let (_, _, line) = result(d.path(), &["--hints", "--", "f", &a, &z]);
    assert_eq!(
        line,
        "__RESULT__{\"error\":\"multiple_occurrences\",\"count\":3,\"lines\":[1,3,5]}\n"
    );
    // The second call picks the middle one by its line, from argv and stdin.
    let (_, code, line) = result(d.path(), &["--at-line", "3", "--", "f", &a, &z]);
    assert_eq!((line.as_str(), code), ("__RESULT__{\"count\":1}\n", 0));
    assert_eq!(
        std::fs::read_to_string(&p).unwrap(),
        "a = 1\nb = 2\na = 9\nc = 3\na = 1\n"
    );
}

#[test]
fn at_line_refusals_name_the_lines() {
    let d = scratch();
    let file = "x x\ny\nx\n";
    let p = write_file(d.path(), "f", file.as_bytes(), 0o644);
    let (x, z) = (b64("x"), b64("z"));
    let (_, code, line) = result(d.path(), &["--hints", "--at-line", "2", "--", "f", &x, &z]);
    assert_eq!(
        (line.as_str(), code),
        (
            "__RESULT__{\"error\":\"string_not_found\",\"detail\":\"no occurrence of OLD starts on line 2; occurrences start on lines 1, 1, 3\"}\n",
            1
        )
    );
    let (_, code, line) = result(d.path(), &["--at-line=1", "--", "f", &x, &z]);
    assert_eq!(
        (line.as_str(), code),
        (
            "__RESULT__{\"error\":\"multiple_occurrences\",\"count\":2,\"detail\":\"2 occurrences of OLD start on line 1\"}\n",
            1
        )
    );
    assert_eq!(std::fs::read(&p).unwrap(), file.as_bytes());
    for (args, detail) in [
        (
            vec!["--at-line", "1", "--replace-all", "--", "f", &x, &z],
            "--at-line conflicts with replace-all",
        ),
        (
            vec!["--at-line", "1", "--", "f", &x, &z, "true"],
            "--at-line conflicts with replace-all",
        ),
        (
            vec!["--at-line", "0", "--", "f", &x, &z],
            "--at-line takes a line number from 1, got \"0\"",
        ),
        (
            vec!["--at-line", "-1", "--", "f", &x, &z],
            "--at-line takes a line number from 1, got \"-1\"",
        ),
        (vec!["--at-line"], "--at-line needs LINE"),
        (
            vec![
                "--at-line",
                "1",
                "--",
                "f",
                &x,
                &z,
                "false",
                &x,
                &z,
                "false",
            ],
            "--at-line is for a single edit; in a batch use --stdin with \"at_line\" per edit",
        ),
        (
            vec!["--hints=yes", "--", "f", &x, &z],
            "--hints takes no value, got \"yes\"",
        ),
        (
            vec!["--at-line", "1", "--stdin"],
            "--at-line is per edit; with --stdin give \"at_line\" in the edit",
        ),
    ] {
        let (v, code, line) = result(d.path(), &args);
        assert_eq!(
            (v["error"].as_str(), v["detail"].as_str(), code),
            (Some("invalid_argument"), Some(detail), 2),
            "{line}"
        );
    }
    assert_eq!(std::fs::read(&p).unwrap(), file.as_bytes());
    assert_eq!(listing(d.path()), vec!["f"]);
}

/// `--stdin` with `at_line` per edit: in a batch, edit 2's line counts in
/// the text after edit 1.
#[test]
fn stdin_at_line_per_edit_in_a_batch() {
    let d = scratch();
    let p = write_file(d.path(), "f", b"k\nk\nk\n", 0o644);
    let run = |body: &str| {
        let mut c = std::process::Command::new(BIN)
            .args(["--hints", "--stdin"])
            .current_dir(d.path())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        c.stdin.take().unwrap().write_all(body.as_bytes()).unwrap();
        let o = c.wait_with_output().unwrap();
        (
            String::from_utf8(o.stdout).unwrap(),
            o.status.code().unwrap(),
        )
    };
    // Edit 1 inserts a line before everything: the last k is now on line 4.
    let (line, code) = run(
        r#"{"path":"f","edits":[{"old":"k\nk\nk","new":"top\nk\nk\nk"},{"old":"k","new":"K","at_line":4}]}"#,
    );
    assert_eq!((line.as_str(), code), ("__RESULT__{\"count\":2}\n", 0));
    assert_eq!(std::fs::read(&p).unwrap(), b"top\nk\nk\nK\n");
    let (line, code) =
        run(r#"{"path":"f","edits":[{"old":"k","new":"K","at_line":1,"replace_all":true}]}"#);
    assert_eq!(
        (line.as_str(), code),
        (
            "__RESULT__{\"error\":\"invalid_argument\",\"detail\":\"at_line conflicts with replace-all\"}\n",
            2
        )
    );
    let (line, code) =
        run(r#"{"path":"f","edits":[{"old":"top","new":"T"},{"old":"k","new":"K","at_line":0}]}"#);
    assert_eq!(
        (line.as_str(), code),
        (
            "__RESULT__{\"error\":\"invalid_argument\",\"detail\":\"edit 2 of 2: at_line must be at least 1 (lines are 1-based)\"}\n",
            2
        )
    );
    // Hints for edit 2 of a batch describe the text edit 2 saw.
    let (line, code) = run(
        r#"{"path":"f","edits":[{"old":"top\nk\n","new":"  top\n  k\n"},{"old":"top\nk\n","new":"x"}]}"#,
    );
    assert_eq!(
        (line.as_str(), code),
        (
            "__RESULT__{\"error\":\"string_not_found\",\"detail\":\"edit 2 of 2: OLD not found\",\"hints\":[{\"line\":1,\"end_line\":2,\"kind\":\"indentation\",\"score\":1.0,\"text\":\"  top\\n  k\\n\"}]}\n",
            1
        )
    );
    assert_eq!(std::fs::read(&p).unwrap(), b"top\nk\nk\nK\n");
}

#[test]
fn occurrence_lines_stop_at_one_thousand() {
    let d = scratch();
    let file = "q\n".repeat(1500);
    write_file(d.path(), "f", file.as_bytes(), 0o644);
    let (v, code, _) = result(
        d.path(),
        &["--hints", "--report", "--", "f", &b64("q"), &b64("r")],
    );
    assert_eq!(code, 1);
    assert_eq!(v["count"], 1500);
    let lines: Vec<u64> = v["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_u64().unwrap())
        .collect();
    assert_eq!(lines, (1..=1000).collect::<Vec<u64>>());
    assert_eq!(v["lines_truncated"], true);
    assert!(v["path"].is_string(), "the report keys join");
}

// Over 10 MiB (hints::TEXT_MAX) of text, the finder sees the first
// whole lines only and says so; occurrence lines are streamed and complete.
#[test]
fn large_files_truncate_hints_but_not_occurrence_lines() {
    let d = scratch();
    // Under the cut, the needle's line is found as `whitespace`.
    let small = format!(
        "{}  needle(a,  b)\n",
        "    filler line of text\n".repeat((1 << 20) / 24)
    );
    write_file(d.path(), "f", small.as_bytes(), 0o644);
    let (v, _, line) = result(
        d.path(),
        &["--hints", "--", "f", &b64("needle(a, b)"), &b64("Q")],
    );
    assert_eq!(v["hints"][0]["kind"], "whitespace", "{line}");
    assert_eq!(v["hints"][0]["line"], small.matches('\n').count());
    assert!(v.get("hints_truncated").is_none(), "{line}");
    // Exactly 10 MiB is whole; one byte more is cut after the needle's
    // line (still found, but the answer is marked truncated).
    let needle = "  needle(a,  b)\n";
    let mut exact = "    filler line of text\n".repeat((10 << 20) / 24 - 1);
    exact.push_str(&"x".repeat((10 << 20) - exact.len() - needle.len() - 1));
    exact.push('\n');
    exact.push_str(needle);
    assert_eq!(exact.len(), 10 << 20);
    for (text, cut) in [(exact.clone(), false), (format!("{exact}y"), true)] {
        write_file(d.path(), "f", text.as_bytes(), 0o644);
        let (v, _, line) = result(
            d.path(),
            &["--hints", "--", "f", &b64("needle(a, b)"), &b64("Q")],
        );
        assert_eq!(v.get("hints_truncated").is_some(), cut, "{line}");
        assert_eq!(v["hints"][0]["kind"], "whitespace", "{line}");
    }
    // Past the cut it is not seen, and the answer says so.
    let mut file = "    filler line of text\n".repeat((11 << 20) / 24);
    file.push_str("  needle(a,  b)\n");
    write_file(d.path(), "f", file.as_bytes(), 0o644);
    let (_, code, line) = result(
        d.path(),
        &["--hints", "--", "f", &b64("needle(a, b)"), &b64("Q")],
    );
    assert_eq!(code, 1);
    assert_eq!(
        line,
        "__RESULT__{\"error\":\"string_not_found\",\"hints\":[],\"hints_truncated\":true}\n"
    );
    file.push_str("needle(a,  b)\n");
    write_file(d.path(), "f", file.as_bytes(), 0o644);
    let (_, _, line) = result(
        d.path(),
        &["--hints", "--", "f", &b64("needle(a,  b)"), &b64("Q")],
    );
    let n = file.matches('\n').count();
    assert_eq!(
        line,
        format!(
            "__RESULT__{{\"error\":\"multiple_occurrences\",\"count\":2,\"lines\":[{},{}]}}\n",
            n - 1,
            n
        )
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
    // Hints never change the file (bytes and inode) and never appear
    // without --hints: the line without the flag is the line with the
    // hint keys removed.
    #[test]
    fn hints_never_change_the_file_nor_appear_unasked(
        content in prop::collection::vec(prop::sample::select(vec!["ab", " ", "\t", "  ab\n", "ab  \n", "a  b\n", "\r\n", "\n", "\u{2019}", "x"]), 1..20).prop_map(|v| v.concat()),
        old in prop::collection::vec(prop::sample::select(vec!["a", "b", "ab", "ab\n", " ", "\n", "'", "\\n"]), 1..4).prop_map(|v| v.concat()),
        new in prop::sample::select(vec!["", "ab", "y"]),
        report in any::<bool>(),
    ) {
        let d = scratch();
        let p = write_file(d.path(), "f", content.as_bytes(), 0o644);
        let ino = inode(&p);
        let mut base = vec!["--dry-run"];
        if report {
            base.push("--report");
        }
        let (o, n) = (b64(&old), b64(new));
        let tail = ["--", "f", o.as_str(), n.as_str()];
        let plain: Vec<&str> = base.iter().chain(tail.iter()).copied().collect();
        let hinted: Vec<&str> = base.iter().copied().chain(["--hints"]).chain(tail.iter().copied()).collect();
        let (pv, pc, pl) = result(d.path(), &plain);
        let (mut hv, hc, _) = result(d.path(), &hinted);
        prop_assert_eq!(std::fs::read(&p).unwrap(), content.as_bytes());
        prop_assert_eq!(inode(&p), ino);
        prop_assert_eq!(listing(d.path()), vec!["f"]);
        prop_assert_eq!(pc, hc);
        for k in ["hints", "hints_truncated"] {
            prop_assert!(pv.get(k).is_none(), "{}", pl);
        }
        if pv["error"] != "multiple_occurrences" {
            prop_assert!(pv.get("lines").is_none() || pv.get("error").is_none(), "{}", pl);
        }
        let obj = hv.as_object_mut().unwrap();
        for k in ["hints", "hints_truncated"] {
            obj.remove(k);
        }
        if pv["error"] == "multiple_occurrences" {
            obj.remove("lines");
            obj.remove("lines_truncated");
        }
        prop_assert_eq!(pv, hv);
    }
}

// A file with CR takes the normalizing re-read: the same cut at 10 MiB of
// normalized text, lines counted after CRLF → LF.
#[test]
fn crlf_files_are_cut_after_normalizing() {
    let d = scratch();
    let filler = "    filler line of text\r\n";
    for (lines, cut) in [((1 << 20) / 25, false), ((11 << 20) / 25, true)] {
        let file = format!("{}  needle(a,  b)\r\n", filler.repeat(lines));
        write_file(d.path(), "f", file.as_bytes(), 0o644);
        let (v, _, line) = result(
            d.path(),
            &["--hints", "--", "f", &b64("needle(a, b)"), &b64("Q")],
        );
        assert_eq!(v.get("hints_truncated").is_some(), cut, "{line}");
        if cut {
            assert_eq!(v["hints"], serde_json::json!([]), "{line}");
        } else {
            assert_eq!(v["hints"][0]["kind"], "whitespace", "{line}");
            assert_eq!(v["hints"][0]["line"], lines as u64 + 1);
            assert_eq!(v["hints"][0]["text"], "  needle(a,  b)");
        }
    }
}

/// Numbered CRLF lines `from..to`, each 13 bytes.
fn crlf_lines(from: usize, to: usize) -> String {
    (from..to).map(|i| format!("line {i:06}\r\n")).collect()
}

/// A long OLD (over 256 KiB, read straight into the
/// edit's tail slot) in a CRLF file, straddling the slot's first window:
/// the exact bytes (with `--eol preserve`, CRLF kept, NEW's line end too)
/// and result line.
#[test]
fn a_long_old_in_a_crlf_file() {
    let d = scratch();
    let file = crlf_lines(0, 120_000);
    let p = write_file(d.path(), "f", file.as_bytes(), 0o644);
    let old = crlf_lines(30_000, 55_000).replace("\r\n", "\n");
    assert!(old.len() > 256 << 10);
    let req = serde_json::json!({"path": "f", "edits": [{"old": old, "new": "X\n"}]});
    let r = run_stdin(d.path(), &["--stdin"], req.to_string().as_bytes());
    assert_result(&r, "{\"count\":1}", 0);
    // Written with LF (the default `--eol lf`); `--eol preserve` keeps CRLF.
    let want = format!(
        "{}X\r\n{}",
        crlf_lines(0, 30_000),
        crlf_lines(55_000, 120_000)
    );
    assert!(std::fs::read(&p).unwrap() == want.replace("\r\n", "\n").as_bytes());
    write_file(d.path(), "f", file.as_bytes(), 0o644);
    let r = run_stdin(
        d.path(),
        &["--eol", "preserve", "--stdin"],
        req.to_string().as_bytes(),
    );
    assert_result(&r, "{\"count\":1}", 0);
    assert!(std::fs::read(&p).unwrap() == want.as_bytes());
}

/// `--hints` on a long OLD's `multiple_occurrences`, in
/// CRLF text and LF text: every occurrence's line, one straddling the
/// re-read's 64 KiB pieces and two back to back; the file unchanged.
#[test]
fn hints_on_a_long_old() {
    let d = scratch();
    let old = crlf_lines(0, 25_000);
    let file = format!(
        "{}{old}{}{old}{old}{}",
        crlf_lines(0, 7),
        crlf_lines(7, 5_041),
        crlf_lines(9, 10)
    );
    for text in [file.clone(), file.replace("\r\n", "\n")] {
        let p = write_file(d.path(), "f", text.as_bytes(), 0o644);
        let old = old.replace("\r\n", "\n");
        let req = serde_json::json!({"path": "f", "edits": [{"old": old, "new": "x"}]});
        let r = run_stdin(
            d.path(),
            &["--hints", "--stdin"],
            req.to_string().as_bytes(),
        );
        let lines = [8, 8 + 25_000 + 5_034, 8 + 50_000 + 5_034];
        let line =
            format!("{{\"error\":\"multiple_occurrences\",\"count\":3,\"lines\":{lines:?}}}");
        assert_result(&r, &line.replace(' ', ""), 1);
        assert!(std::fs::read(&p).unwrap() == text.as_bytes());
    }
}

/// The `multiple_occurrences` re-read of a single edit reads a file without
/// CR straight into its scan; a CR found late (past several reads: a lone
/// CR, itself a line break) sends it back to the normalizing path, whose
/// lines count the CR: the answer is the same either way.
#[test]
fn hints_reread_falls_back_at_a_late_cr() {
    let d = scratch();
    let filler = "let x = 1;\n".repeat(40_000);
    for (tail, last) in [
        ("z\rneedle\n", 80_004),
        ("z\nneedle\n", 80_004),
        ("needle\r\n", 80_003),
    ] {
        let text = format!("needle\n{filler}needle\n{filler}{tail}");
        let p = write_file(d.path(), "f", text.as_bytes(), 0o644);
        let r = result(d.path(), &["--hints", "--", "f", "bmVlZGxl", "eA=="]);
        let want = serde_json::json!({"error": "multiple_occurrences", "count": 3, "lines": [1, 40_002, last]});
        assert_eq!((r.0, r.1), (want, 1), "{tail:?}");
        assert!(std::fs::read(&p).unwrap() == text.as_bytes());
    }
}

/// The lines `--hints` gives for `old` in `text` as the edit saw it: CRLF,
/// then lone CR, become LF; occurrences non-overlapping, left to right; the
/// first 1000.
fn model_lines(text: &[u8], old: &str) -> (u64, Vec<u64>) {
    let t = String::from_utf8(text.to_vec()).unwrap();
    let t = t.replace("\r\n", "\n").replace('\r', "\n");
    let starts: Vec<usize> = t.match_indices(old).map(|(i, _)| i).collect();
    let lines = starts.iter().take(1000);
    let lines = lines.map(|&i| 1 + t[..i].matches('\n').count() as u64);
    (starts.len() as u64, lines.collect())
}

/// The re-read straight into the scan (a single edit, no CR) and its
/// fallback give the lines of the normalizing path at the scan's edges: a
/// CR (lone, CRLF, LF CR) just before, at and after the end of the scan's
/// first and second read (`2 * len(OLD) + 64 KiB` bytes, less the carry),
/// 1000 and 1001 occurrences (the cap) overlapping ones among them, an OLD
/// holding a newline, and a batch whose second edit is refused (the engine
/// path: the first edit's newlines count). Checked against a model here,
/// and differentially against the path before it on generated files.
#[test]
fn hints_reread_straight_and_fallback_edges() {
    let d = scratch();
    let mut cases: Vec<(Vec<u8>, &str)> = Vec::new();
    for old in ["q", "qq"] {
        let cap = 2 * old.len() + 65_536;
        for pos in [cap - 1, cap, cap + 1, 2 * cap - 2, 2 * cap] {
            for cr in ["\r", "\r\n", "\n\r"] {
                let mut body = "xxxxxxxxx\n".repeat(14_000).into_bytes();
                for at in [130_000, 40_000, 100] {
                    body.splice(at..at, old.bytes());
                }
                body.splice(pos..pos, cr.bytes());
                cases.push((body, old));
            }
        }
    }
    for k in [1000, 1001] {
        for tail in ["", "\r"] {
            cases.push((format!("{}{tail}", "aaaaa\n".repeat(k)).into_bytes(), "aa"));
            cases.push((format!("{}{tail}", "a\nb\n".repeat(k)).into_bytes(), "a\nb"));
        }
    }
    for (text, old) in &cases {
        let p = write_file(d.path(), "f", text, 0o644);
        let r = result(d.path(), &["--hints", "--", "f", &b64(old), "WA=="]);
        let (count, lines) = model_lines(text, old);
        assert_eq!(r.0["error"], "multiple_occurrences", "{old:?} {}", r.2);
        assert_eq!(r.0["count"], count, "{old:?}");
        assert_eq!(
            r.0["lines"],
            serde_json::json!(lines),
            "{old:?} {}",
            text.len()
        );
        assert!(std::fs::read(&p).unwrap() == *text);
    }
    // A batch: the second edit sees the first's newline.
    let text = "x\nq\nq\n".repeat(30_000);
    write_file(d.path(), "f", text.as_bytes(), 0o644);
    let req = r#"{"path":"f","edits":[{"old":"x\n","new":"x\n\n","replace_all":true},{"old":"q","new":"Z"}]}"#;
    let mut cmd = std::process::Command::new(BIN);
    cmd.args(["--hints", "--stdin"]);
    let r = run_with_stdin(cmd, d.path(), req.as_bytes());
    let (_, lines) = model_lines(text.replace("x\n", "x\n\n").as_bytes(), "q");
    let want = serde_json::json!({"error": "multiple_occurrences", "count": 60_000,
        "detail": "edit 2 of 2: OLD occurs 60000 times", "lines": lines, "lines_truncated": true});
    let got: Value = serde_json::from_str(r.stdout.trim_start_matches("__RESULT__")).unwrap();
    assert_eq!(got, want);
}
