//! An Update File applied in one pass (crates/text/src/patch/stream.rs): the result
//! lines and bytes are the in-memory locator's, at every grade, in memory
//! bounded by the patch; whatever the pass cannot prove (a second
//! occurrence, a loose match a stricter one later overrules, `--diff`) is
//! answered by the locator on the whole text, with its refusal and no temp
//! left.

mod common;

use std::path::Path;

use common::*;

/// Runs `patch` with `args` in `dir`; the result line with the directory
/// written as `D`.
fn patch(dir: &Path, args: &[&str], patch: &str) -> (String, i32) {
    let mut a = vec!["--patch"];
    a.extend_from_slice(args);
    let r = run_stdin(dir, &a, patch.as_bytes());
    assert_eq!(r.stderr, "");
    let d = std::fs::canonicalize(dir).unwrap();
    (r.stdout.replace(d.to_str().unwrap(), "D"), r.code)
}

fn update(body: &str) -> String {
    format!("*** Begin Patch\n*** Update File: f\n{body}*** End Patch\n")
}

fn sha(b: &[u8]) -> String {
    use sha2::Digest;
    as_edit::hex::encode(&sha2::Sha256::digest(b))
}

fn changed(op: &str, count: u64, bytes: &[u8], lines: &str, matches: &str) -> String {
    format!(
        "__RESULT__{{\"count\":{count},\"files\":1,\"changes\":[{{\"path\":\"D/f\",\"op\":\"{op}\",\"count\":{count},\"size\":{},\"sha256\":\"{}\",\"lines\":[{lines}],\"match\":[{matches}]}}]}}\n",
        bytes.len(),
        sha(bytes)
    )
}

#[test]
fn a_crlf_file_without_final_newline_moves_with_its_change() {
    let d = scratch();
    write_file(d.path(), "f", b"a\r\nb\r\nc", 0o644);
    let p = "*** Begin Patch\n*** Update File: f\n*** Move to: g\n@@\n-a\n+A\n b\n*** End Patch\n";
    let (out, code) = patch(d.path(), &["--report", "--eol", "preserve"], p);
    let want = b"A\r\nb\r\nc\r\n";
    assert_eq!((out, code), (format!("__RESULT__{{\"count\":1,\"files\":2,\"changes\":[{{\"path\":\"D/f\",\"op\":\"move\",\"to\":\"D/g\",\"count\":1,\"size\":9,\"sha256\":\"{}\",\"lines\":[1],\"match\":[\"exact\"]}}]}}\n", sha(want)), 0));
    assert_eq!(std::fs::read(d.path().join("g")).unwrap(), want);
    assert_eq!(listing(d.path()), ["g"]);
}

#[test]
fn an_empty_file_takes_an_addition_and_refuses_a_chunk() {
    let d = scratch();
    write_file(d.path(), "f", b"", 0o644);
    let (out, code) = patch(d.path(), &["--report", "--hints"], &update("@@\n-x\n+y\n"));
    assert_eq!((out.as_str(), code), ("__RESULT__{\"error\":\"string_not_found\",\"detail\":\"file 1 of 1 (f): chunk 1 (patch line 3): its context and '-' lines are not in the file\",\"hints\":[],\"file\":1,\"chunk\":1}\n", 1));
    assert_eq!(listing(d.path()), ["f"]);
    let (out, code) = patch(d.path(), &["--report"], &update("@@\n+x\n"));
    assert_eq!(
        (out, code),
        (changed("edit", 1, b"x\n", "1", "\"exact\""), 0)
    );
    assert_eq!(std::fs::read(d.path().join("f")).unwrap(), b"x\n");
}

#[test]
fn chunks_at_the_first_and_the_last_line() {
    let d = scratch();
    write_file(d.path(), "f", b"1\n2\n3\n4", 0o644);
    let p = update("@@\n-1\n+one\n 2\n@@\n 3\n-4\n+four\n*** End of File\n");
    let want = b"one\n2\n3\nfour\n";
    assert_eq!(
        patch(d.path(), &["--report"], &p),
        (changed("edit", 2, want, "1,3", "\"exact\",\"exact\""), 0)
    );
    assert_eq!(std::fs::read(d.path().join("f")).unwrap(), want);
}

#[test]
fn a_header_places_an_addition_before_a_chunk() {
    let d = scratch();
    write_file(d.path(), "f", b"fn a\nx\nfn b\nx\n", 0o644);
    let p = update("@@ fn b\n+  new\n@@\n-x\n+X\n");
    let want = b"fn a\nx\nfn b\n  new\nX\n";
    assert_eq!(
        patch(d.path(), &["--report"], &p),
        (changed("edit", 2, want, "4,5", "\"exact\",\"exact\""), 0)
    );
    assert_eq!(std::fs::read(d.path().join("f")).unwrap(), want);
}

#[test]
fn a_line_longer_than_any_chunk_line_streams_through() {
    let d = scratch();
    let long = "y".repeat(300_000);
    write_file(d.path(), "f", format!("a\n{long}\nb\nc").as_bytes(), 0o644);
    let want = format!("a\n{long}\nB\nc\n");
    assert_eq!(
        patch(d.path(), &["--report"], &update("@@\n-b\n+B\n")),
        (changed("edit", 1, want.as_bytes(), "3", "\"exact\""), 0)
    );
    assert_eq!(std::fs::read(d.path().join("f")).unwrap(), want.as_bytes());
}

/// A loose match (the pass's too), a second occurrence found after the
/// pass wrote most of the file, and `--diff` (the locator's): their
/// answers, no temp left.
#[test]
fn what_the_pass_cannot_prove_is_the_locators() {
    let d = scratch();
    write_file(d.path(), "f", b"a\nb  \nc\n", 0o644);
    let want = b"a\nB\nc\n";
    assert_eq!(
        patch(d.path(), &["--report"], &update("@@\n a\n-b\n+B\n")),
        (changed("edit", 1, want, "1", "\"trailing_whitespace\""), 0)
    );
    let before = b"a\nb\nc\nd\ne\nb\n";
    write_file(d.path(), "f", before, 0o644);
    let (out, code) = patch(d.path(), &["--report"], &update("@@\n-b\n+B\n"));
    assert_eq!((out.as_str(), code), ("__RESULT__{\"error\":\"multiple_occurrences\",\"count\":2,\"detail\":\"file 1 of 1 (f): chunk 1 (patch line 3): its context occurs at lines 2, 6; add an @@ line naming the enclosing function or class, or more context\",\"lines\":[2,6],\"file\":1,\"chunk\":1}\n", 1));
    assert_eq!(std::fs::read(d.path().join("f")).unwrap(), before);
    assert_eq!(listing(d.path()), ["f"]);
    write_file(d.path(), "f", b"a\nb\n", 0o644);
    let (out, code) = patch(d.path(), &["--report", "--diff"], &update("@@\n-b\n+B\n"));
    let want = b"a\nB\n";
    assert_eq!((out, code), (format!("__RESULT__{{\"count\":1,\"files\":1,\"changes\":[{{\"path\":\"D/f\",\"op\":\"edit\",\"count\":1,\"size\":4,\"sha256\":\"{}\",\"lines\":[2],\"match\":[\"exact\"],\"diff\":\"--- D/f\\n+++ D/f\\n@@ -1,2 +1,2 @@\\n a\\n-b\\n+B\\n\"}}]}}\n", sha(want)), 0));
}

/// A CRLF file over several read chunks, chunks across their boundaries
/// and at the end, kept CRLF.
#[test]
fn a_large_crlf_file_across_read_chunks() {
    let d = scratch();
    let text: String = (0..70_000).map(|i| format!("line {i}\r\n")).collect();
    write_file(d.path(), "f", text.as_bytes(), 0o644);
    // Line 26,000 or so ends near 262,144 bytes, a chunk boundary.
    let at = text[..262_144].matches('\n').count();
    let p = update(&format!(
        "@@\n line {}\n-line {at}\n+LINE\n line {}\n@@\n-line 69999\n+end\n*** End of File\n",
        at - 1,
        at + 1
    ));
    let want = text
        .replace(&format!("\r\nline {at}\r\n"), "\r\nLINE\r\n")
        .replace("line 69999\r\n", "end\r\n");
    let lines = format!("{},70000", at);
    assert_eq!(
        patch(d.path(), &["--report", "--eol", "preserve"], &p),
        (
            changed("edit", 2, want.as_bytes(), &lines, "\"exact\",\"exact\""),
            0
        )
    );
    assert_eq!(std::fs::read(d.path().join("f")).unwrap(), want.as_bytes());
}

/// A refusal the pass meets before its first change writes nothing: no
/// temp, not even one made and dropped (pre-change, a refused patch made
/// none). The named temp (no `O_TMPFILE`) shows it in the directory's
/// mtime; a file of 1 MiB outgrows the 64 KiB write buffer.
#[test]
fn a_refusal_before_any_change_makes_no_temp() {
    let d = scratch();
    let mut text: String = (0..100_000).map(|i| format!("line {i}\n")).collect();
    let cases = [
        (
            "@@\n-absent\n+x\n",
            "its context and '-' lines are not in the file",
        ),
        (
            "@@ absent\n-line 5\n+x\n",
            "the line '@@ absent' names is not in the file",
        ),
    ];
    // Also without a final newline: the pass adds it, after the mark.
    for (body, why) in cases.iter().chain(&cases) {
        if text.ends_with('\n') {
            text.pop();
        } else {
            text.push('\n');
        }
        let r = refused_unnamed(d.path(), &text, body);
        assert_eq!(
            (r.stdout, r.code),
            (format!("__RESULT__{{\"error\":\"string_not_found\",\"detail\":\"file 1 of 1 (f): chunk 1 (patch line 3): {why}\",\"file\":1,\"chunk\":1}}\n"), 1)
        );
    }
}

/// Runs `patch` on a file `f` of `text` with a named temp (no `O_TMPFILE`)
/// and the directory's mtime set in the past, and checks that nothing was
/// written: the mtime (a temp made and removed moves it), the bytes, the
/// listing.
fn refused_unnamed(dir: &Path, text: &str, patch: &str) -> Run {
    let past = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000_000);
    write_file(dir, "f", text.as_bytes(), 0o644);
    let open = std::fs::File::open(dir).unwrap();
    open.set_modified(past).unwrap();
    let mut c = std::process::Command::new(BIN);
    c.args(["--patch"]).env("AS_EDIT_TEST_NO_TMPFILE", "1");
    let r = run_with_stdin(c, dir, update(patch).as_bytes());
    let m = std::fs::metadata(dir).unwrap().modified().unwrap();
    assert_eq!(m, past, "a temp was made and removed: {patch}");
    assert_eq!(std::fs::read(dir.join("f")).unwrap(), text.as_bytes());
    assert_eq!(listing(dir), ["f"]);
    r
}

/// Nor one the pass knows of only at the end or on the line of a change:
/// an addition at the end before a chunk not in the file, an End of File
/// chunk before one, a header found loosely then exactly on the line that
/// completes its chunk (the locator searches after that one). Each once
/// copied the text into a temp (named here: the directory's mtime) and
/// dropped it.
#[test]
fn a_refusal_the_pass_meets_at_its_first_change_makes_no_temp() {
    let d = scratch();
    let body: String = (0..100_000).map(|i| format!("line {i}\n")).collect();
    let cases = [
        (body.clone(), "@@\n+appended\n@@\n-absent\n+x\n"),
        (
            body.clone(),
            "@@\n-line 99999\n+L\n*** End of File\n@@\n-absent\n+x\n",
        ),
        (format!(" x\n{body}a\nx\n"), "@@ x\n-a\n-x\n+y\n"),
    ];
    for (text, patch) in &cases {
        let r = refused_unnamed(d.path(), text, patch);
        assert_eq!(r.code, 1, "{patch}");
        assert!(
            r.stdout
                .starts_with("__RESULT__{\"error\":\"string_not_found\""),
            "{}",
            r.stdout
        );
    }
}

/// `patch` run under an address-space limit of `mib` MiB.
fn patch_within(dir: &Path, mib: u64, patch: &str) -> (String, i32) {
    let mut c = std::process::Command::new("sh");
    let limit = format!("ulimit -v {}; exec \"$0\" --patch --report", mib << 10);
    c.args(["-c", &limit, BIN]);
    let r = run_with_stdin(c, dir, patch.as_bytes());
    let d = std::fs::canonicalize(dir).unwrap();
    (r.stdout.replace(d.to_str().unwrap(), "D"), r.code)
}

/// Chunks landing at every loose grade (a header too) apply to a 40 MiB
/// file within a 32 MiB address space, which the whole-text locator (1.25
/// times the file) cannot have: a loose match that an exact one later in
/// the file overrules is the locator's, and runs out of memory there
/// (file unchanged, no temp), then applies without the limit.
#[test]
fn loose_grades_stream_in_memory_bounded_by_the_patch() {
    let d = scratch();
    let line = |i: usize| format!("    let v{i} = f(\"{i}\") - 1;");
    let n = 1_250_000;
    let text: String = (0..n).map(|i| line(i) + "\n").collect();
    assert!(text.len() > 40 << 20);
    write_file(d.path(), "f", text.as_bytes(), 0o644);
    let p = update(&format!(
        "@@ {} \n-    let v1001 = f(\u{201C}1001\u{201D}) \u{2013} 1;\n+    let v1001 = 0;\n@@\n {}\t \n-{}\n+    let v600001 = 1;\n@@\n-{}\n+    done\n*** End of File\n",
        line(1000),
        line(600_000),
        line(600_001),
        line(n - 1).trim()
    ));
    let want = text
        .replace(&line(1001), "    let v1001 = 0;")
        .replace(&line(600_001), "    let v600001 = 1;")
        .replace(&line(n - 1), "    done");
    let grades = "\"punctuation\",\"trailing_whitespace\",\"whitespace\"";
    let lines = format!("1002,600001,{n}");
    assert_eq!(
        patch_within(d.path(), 32, &p),
        (changed("edit", 3, want.as_bytes(), &lines, grades), 0)
    );
    assert!(std::fs::read(d.path().join("f")).unwrap() == want.as_bytes());
    // Loose at line 6, exact at the end: the locator's place.
    let mut before = want;
    before.push_str("let v5 = f(\"5\") - 1;\n");
    write_file(d.path(), "f", before.as_bytes(), 0o644);
    let p = update("@@\n-let v5 = f(\"5\") - 1;\n+end\n");
    let after = before.replace("\nlet v5 = f(\"5\") - 1;\n", "\nend\n");
    let lines = format!("{}", n + 1);
    assert_eq!(
        patch_within(d.path(), 32, &p),
        (changed("edit", 1, after.as_bytes(), &lines, "\"exact\""), 0)
    );
}

/// Generated files and one-file patches whose context and headers carry
/// loose damage (blanks at the ends, curly quotes, dashes, NBSP), through
/// the binary (the pass, its deferred temp, CRLF kept with `--eol
/// preserve`, no final newline): the pure applier's bytes and grades, or
/// its refusal with the file unchanged and no temp.
#[test]
fn the_binary_answers_as_the_pure_applier_at_every_grade() {
    let words = [
        "}",
        "",
        "    return x - 1;",
        "say(\"hi\")",
        "    let a = 1;",
    ];
    let damage = |s: &str, how: usize| match how {
        0 => format!("{s}  "),
        1 => format!("\t{s}"),
        2 => s.replace('"', "\u{201C}").replace('-', "\u{2014}"),
        3 => s.replace(' ', "\u{a0}"),
        _ => s.to_owned(),
    };
    let mut x = 0x10a5e_u64;
    let mut r = move |n: usize| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % n as u64) as usize
    };
    let d = scratch();
    let (mut applied, mut loose, mut refused) = (0, 0, 0);
    for case in 0..400 {
        let n = 1 + r(30);
        let lines: Vec<String> = (0..n)
            .map(|i| match r(3) {
                0 => words[r(words.len())].to_owned(),
                _ => format!("fn f{i}() {{"),
            })
            .collect();
        let file: Vec<String> = (lines.iter())
            .map(|l| damage(l, if r(6) == 0 { r(4) } else { 9 }))
            .collect();
        let mut text: String = file.iter().map(|l| format!("{l}\n")).collect();
        if r(6) == 0 {
            text.pop();
        }
        let mut body = String::new();
        let mut at = 0;
        for _ in 0..1 + r(3) {
            if at >= n {
                break;
            }
            let s = at + r((n - at).min(8));
            let hurt = |l: &str, r: &mut dyn FnMut(usize) -> usize| match r(3) {
                0 => damage(l, r(4)),
                _ => l.to_owned(),
            };
            match s > at && r(3) == 0 {
                true => body.push_str(&format!("@@ {}\n", hurt(&lines[s - 1], &mut r))),
                false => body.push_str("@@\n"),
            }
            let e = (s + 1 + r(4)).min(n);
            for (i, l) in lines.iter().enumerate().take(e).skip(s) {
                let tag = if r(3) == 0 { '-' } else { ' ' };
                body.push_str(&format!("{tag}{}\n", hurt(l, &mut r)));
                if r(4) == 0 {
                    body.push_str(&format!("+new {case} {i}\n"));
                }
            }
            body.push_str("+added\n");
            if e == n && r(3) == 0 {
                body.push_str("*** End of File\n");
            }
            at = e;
        }
        let patch_text = update(&body);
        let mut tree = std::collections::BTreeMap::from([("f".to_owned(), text.clone())]);
        let want = as_edit::patch::apply_tree(
            &mut tree,
            &as_edit::patch::parse(&patch_text).unwrap(),
            false,
            false,
        );
        let crlf = r(4) == 0 && text.contains('\n');
        let bytes = match crlf {
            true => text.replace('\n', "\r\n"),
            false => text.clone(),
        };
        write_file(d.path(), "f", bytes.as_bytes(), 0o644);
        let args: &[&str] = match crlf {
            true => &["--report", "--eol", "preserve"],
            false => &["--report"],
        };
        let (out, code) = patch(d.path(), args, &patch_text);
        let got = std::fs::read(d.path().join("f")).unwrap();
        let why = format!("{text:?}\n{patch_text}\n{out}");
        match want {
            Ok(changes) => {
                let Some(as_edit::patch::Change::Updated { placed, .. }) = changes.first() else {
                    panic!("an update: {why}");
                };
                let grades: Vec<String> = (placed.iter())
                    .map(|p| format!("\"{}\"", p.grade.name()))
                    .collect();
                let mut new = tree["f"].clone();
                if crlf {
                    new = new.replace('\n', "\r\n");
                }
                assert_eq!(code, 0, "{why}");
                assert!(got == new.as_bytes(), "{why}");
                let matches = format!("\"match\":[{}]", grades.join(","));
                assert!(out.contains(&matches), "{matches} {why}");
                applied += 1;
                loose += usize::from(placed.iter().any(|p| p.grade.name() != "exact"));
            }
            Err(_) => {
                assert_eq!((code, got), (1, bytes.into_bytes()), "{why}");
                refused += 1;
            }
        }
        assert_eq!(listing(d.path()), ["f"]);
    }
    eprintln!("{applied} applied ({loose} loose), {refused} refused");
    assert!(
        applied > 150 && loose > 60 && refused > 20,
        "{applied} {loose} {refused}"
    );
}
