//! Every path of a patch's Update File in memory bounded independently of
//! the file's size (crates/text/src/patch/passes.rs): on a 64 MiB file, a
//! `multiple_occurrences` refusal, a `string_not_found` with `--hints`, a
//! loose match a later exact one overrules, `--report --diff` and more
//! than 64 loose chunks each answer as the locator does with a peak RSS of
//! a few MiB (GNU time's `%M` of the one child), where the whole-text
//! locator held 1.25 times the file.

mod common;

use std::path::Path;
use std::process::Command;

use common::*;

fn line(i: usize) -> String {
    format!("    let v{i} = f({i});")
}

/// About 64 MiB of numbered lines, then `tail`.
fn big(dir: &Path, tail: &str) -> usize {
    use std::io::Write;
    let n = 2_700_000;
    let mut w = std::io::BufWriter::new(std::fs::File::create(dir.join("f")).unwrap());
    for i in 0..n {
        writeln!(w, "{}", line(i)).unwrap();
    }
    w.write_all(tail.as_bytes()).unwrap();
    n
}

/// The result line (the directory as `D`) and the peak RSS in KiB.
fn measured(dir: &Path, args: &[&str], body: &str) -> (String, u64) {
    let mut c = Command::new("/usr/bin/time");
    c.args(["-f", "%M", BIN, "--patch"]).args(args);
    let p = format!("*** Begin Patch\n*** Update File: f\n{body}*** End Patch\n");
    let r = run_with_stdin(c, dir, p.as_bytes());
    let last = r.stderr.trim().lines().last().unwrap_or("");
    let kib: u64 = last.parse().expect("time -f %M prints KiB");
    let d = std::fs::canonicalize(dir).unwrap();
    (r.stdout.replace(d.to_str().unwrap(), "D"), kib)
}

fn unchanged(dir: &Path, len: u64) {
    assert_eq!(std::fs::metadata(dir.join("f")).unwrap().len(), len);
    assert_eq!(listing(dir), ["f"]);
}

#[test]
fn every_path_of_an_update_is_bounded_on_a_64_mib_file() {
    if !Path::new("/usr/bin/time").exists() {
        return skip("GNU time is not installed (scripts/test.sh installs it as root)");
    }
    let d = scratch();
    let n = big(d.path(), &format!("{}\n", line(5)));
    let len = std::fs::metadata(d.path().join("f")).unwrap().len();
    assert!(len > 64 << 20);
    // A second occurrence, at the very end.
    let (out, kib) = measured(d.path(), &["--report"], &format!("@@\n-{}\n+x\n", line(5)));
    assert_eq!(out, format!("__RESULT__{{\"error\":\"multiple_occurrences\",\"count\":2,\"detail\":\"file 1 of 1 (f): chunk 1 (patch line 3): its context occurs at lines 6, {}; add an @@ line naming the enclosing function or class, or more context\",\"lines\":[6,{}],\"file\":1,\"chunk\":1}}\n", n + 1, n + 1));
    assert!(kib < 8 * 1024, "multiple_occurrences: peak RSS {kib} KiB");
    unchanged(d.path(), len);
    // Not there: hints from the first 10 MiB of the text, marked cut.
    let (out, kib) = measured(d.path(), &["--hints"], &format!("@@\n-{}x\n+x\n", line(7)));
    assert!(
        out.starts_with("__RESULT__{\"error\":\"string_not_found\",\"detail\":\"file 1 of 1 (f): chunk 1 (patch line 3): its context and '-' lines are not in the file\",\"hints\":[{")
            && out.ends_with("\"hints_truncated\":true,\"file\":1,\"chunk\":1}\n"),
        "{out}"
    );
    assert!(out.contains(&line(7)), "{out}");
    assert!(
        kib < 32 * 1024,
        "string_not_found --hints: peak RSS {kib} KiB"
    );
    unchanged(d.path(), len);
    // Loose at line 6 (leading blanks trimmed), exact at the end: there.
    let old = line(5).trim().to_owned();
    let tail_len = len as usize - line(5).len() - 1;
    {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(d.path().join("f"))
            .unwrap();
        writeln!(f, "{old}").unwrap();
    }
    let (out, kib) = measured(d.path(), &["--report"], &format!("@@\n-{old}\n+end\n"));
    let size = len as usize + 4;
    assert!(
        out.starts_with(&format!("__RESULT__{{\"count\":1,\"files\":1,\"changes\":[{{\"path\":\"D/f\",\"op\":\"edit\",\"count\":1,\"size\":{size},"))
            && out.ends_with(&format!("\"lines\":[{}],\"match\":[\"exact\"]}}]}}\n", n + 2)),
        "{out}"
    );
    assert!(
        kib < 8 * 1024,
        "a loose match overruled: peak RSS {kib} KiB"
    );
    let got = std::fs::read(d.path().join("f")).unwrap();
    assert_eq!(&got[tail_len..], format!("{}\nend\n", line(5)).as_bytes());
    // --report --diff.
    let (out, kib) = measured(
        d.path(),
        &["--report", "--diff"],
        &format!("@@\n-{}\n+X\n", line(1000)),
    );
    assert!(
        out.ends_with("\"lines\":[1001],\"match\":[\"exact\"],\"diff\":\"--- D/f\\n+++ D/f\\n@@ -998,7 +998,7 @@\\n     let v997 = f(997);\\n     let v998 = f(998);\\n     let v999 = f(999);\\n-    let v1000 = f(1000);\\n+X\\n     let v1001 = f(1001);\\n     let v1002 = f(1002);\\n     let v1003 = f(1003);\\n\"}]}\n"),
        "{out}"
    );
    assert!(kib < 8 * 1024, "--report --diff: peak RSS {kib} KiB");
    // 70 chunks, each matched loosely (a trailing blank in the patch).
    let body: String = (0..70)
        .map(|k| format!("@@\n-{} \n+c{k}\n", line(10_000 * k + 3)))
        .collect();
    let (out, kib) = measured(d.path(), &["--report"], &body);
    assert!(
        out.starts_with("__RESULT__{\"count\":70,\"files\":1,"),
        "{out}"
    );
    let lines: Vec<String> = (0..70).map(|k| (10_000 * k + 4).to_string()).collect();
    let grades = vec!["\"trailing_whitespace\""; 70].join(",");
    assert!(
        out.ends_with(&format!(
            "\"lines\":[{}],\"match\":[{grades}]}}]}}\n",
            lines.join(",")
        )),
        "{out}"
    );
    assert!(kib < 8 * 1024, "70 loose chunks: peak RSS {kib} KiB");
    let got = std::fs::read(d.path().join("f")).unwrap();
    assert!(got.starts_with(format!("{}\n{}\n{}\nc0\n", line(0), line(1), line(2)).as_bytes()));
}
