//! The `apply_patch` mode (src/patch/codex.rs): the binary under that name
//! answers like Codex's CLI. A scenario folder cannot express it: the
//! folders run the binary under its own name and require an empty stderr.

mod common;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

fn apply_patch(dir: &Path, args: &[&str], stdin: &str) -> (String, String, i32) {
    let link = dir.join("apply_patch");
    if !link.exists() {
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_as-edit"), &link).unwrap();
    }
    let mut child = Command::new(&link)
        .args(args)
        .current_dir(dir.join("w"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    (
        String::from_utf8(o.stdout).unwrap(),
        String::from_utf8(o.stderr).unwrap(),
        o.status.code().unwrap(),
    )
}

fn setup(files: &[(&str, &str)]) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    for (p, c) in files {
        let f = d.path().join("w").join(p);
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(f, c).unwrap();
    }
    std::fs::create_dir_all(d.path().join("w")).unwrap();
    d
}

fn read(d: &Path, p: &str) -> Option<String> {
    std::fs::read_to_string(d.join("w").join(p)).ok()
}

#[test]
fn success_prints_codex_summary_and_add_overwrites() {
    let d = setup(&[("a.txt", "one\n"), ("b.txt", "old\n"), ("gone.txt", "x\n")]);
    let patch = "*** Begin Patch\n*** Add File: b.txt\n+new\n*** Update File: a.txt\n*** Move to: m/a.txt\n-one\n+1\n*** Delete File: gone.txt\n*** End Patch\n";
    let (out, err, code) = apply_patch(d.path(), &[patch], "");
    assert_eq!(
        (out.as_str(), err.as_str(), code),
        (
            "Success. Updated the following files:\nA b.txt\nM m/a.txt\nD gone.txt\n",
            "",
            0
        )
    );
    assert_eq!(read(d.path(), "b.txt").as_deref(), Some("new\n"));
    assert_eq!(read(d.path(), "m/a.txt").as_deref(), Some("1\n"));
    assert_eq!(
        (read(d.path(), "a.txt"), read(d.path(), "gone.txt")),
        (None, None)
    );
}

#[test]
fn the_patch_may_come_on_stdin() {
    let d = setup(&[("a.txt", "one\n")]);
    let (out, _, code) = apply_patch(
        d.path(),
        &[],
        "*** Begin Patch\n*** Update File: a.txt\n-one\n+1\n*** End Patch\n",
    );
    assert_eq!(
        (out.as_str(), code),
        ("Success. Updated the following files:\nM a.txt\n", 0)
    );
    assert_eq!(read(d.path(), "a.txt").as_deref(), Some("1\n"));
}

#[test]
fn a_refusal_changes_nothing_and_says_why_on_stderr() {
    let d = setup(&[("a.txt", "one\n"), ("b.py", "x = 1\nx = 1\n")]);
    let patch = "*** Begin Patch\n*** Update File: a.txt\n-one\n+1\n*** Update File: b.py\n-x = 1\n+x = 2\n*** End Patch\n";
    let (out, err, code) = apply_patch(d.path(), &[patch], "");
    assert_eq!((out.as_str(), code), ("", 1));
    assert_eq!(
        err,
        "multiple_occurrences: file 2 of 2 (b.py): chunk 1 (patch line 6): its context occurs at lines 1, 2; \
         add an @@ line naming the enclosing function or class, or more context\n\
         No files were modified (the patch applies all or nothing).\n"
    );
    assert_eq!(read(d.path(), "a.txt").as_deref(), Some("one\n"));
    assert_eq!(read(d.path(), "b.py").as_deref(), Some("x = 1\nx = 1\n"));
}

#[test]
fn usage_and_parse_errors() {
    let d = setup(&[]);
    let usage = "Usage: apply_patch 'PATCH'\n       echo 'PATCH' | apply_patch\n";
    assert_eq!(
        apply_patch(d.path(), &[], ""),
        (String::new(), usage.to_owned(), 2)
    );
    assert_eq!(
        apply_patch(d.path(), &["a", "b"], ""),
        (
            String::new(),
            "Error: apply_patch accepts exactly one argument.\n".to_owned(),
            2
        )
    );
    assert_eq!(
        apply_patch(d.path(), &["*** Begin Patch\n*** Nope\n*** End Patch"], ""),
        (
            String::new(),
            "Invalid patch: line 2: expected '*** Add File: PATH', '*** Delete File: PATH', '*** Update File: PATH' or '*** End Patch', found '*** Nope'\n".to_owned(),
            1
        )
    );
}

#[test]
fn preserve_crlf_keeps_a_crlf_file_crlf() {
    let d = setup(&[("w.txt", "a\r\nb\r\n")]);
    let patch = "*** Begin Patch\n*** Update File: w.txt\n-b\n+c\n*** End Patch\n";
    let (_, _, code) = apply_patch(d.path(), &["--preserve-crlf", patch], "");
    assert_eq!(code, 0);
    assert_eq!(read(d.path(), "w.txt").as_deref(), Some("a\r\nc\r\n"));
}

/// How `bin` (run under the name `apply_patch`) ends with its standard
/// output a full device, a pipe nobody reads, and closed: (exit, stderr,
/// a.txt afterwards) for each, on a fresh a.txt.
fn with_unwritable_stdout(bin: &Path) -> Vec<(&'static str, i32, String, Option<String>)> {
    let patch = "*** Begin Patch\n*** Update File: a.txt\n-one\n+1\n*** End Patch\n";
    let mut seen = Vec::new();
    for way in ["/dev/full", "broken pipe", "closed"] {
        let d = setup(&[("a.txt", "one\n")]);
        let link = d.path().join("apply_patch");
        std::os::unix::fs::symlink(bin, &link).unwrap();
        let mut cmd = match way {
            "closed" => {
                let mut c = Command::new("sh");
                c.args(["-c", "exec \"$0\" \"$1\" >&-"])
                    .arg(&link)
                    .arg(patch);
                c
            }
            _ => {
                let mut c = Command::new(&link);
                c.arg(patch);
                c
            }
        };
        cmd.current_dir(d.path().join("w")).stderr(Stdio::piped());
        match way {
            "/dev/full" => {
                let full = std::fs::OpenOptions::new().write(true).open(way).unwrap();
                cmd.stdout(full);
            }
            "broken pipe" => {
                cmd.stdout(common::broken_pipe());
            }
            _ => {}
        }
        let o = cmd.output().unwrap();
        let err = String::from_utf8(o.stderr).unwrap();
        seen.push((way, o.status.code().unwrap(), err, read(d.path(), "a.txt")));
    }
    seen
}

/// Codex's binary exits 1 when its success text cannot be written (the
/// patch is applied) and 0 with a closed stdout (Rust's stdout ignores
/// EBADF), saying nothing on stderr; this mode does the same.
#[test]
fn an_unwritable_stdout_exits_as_codex_does() {
    let applied = Some("1\n".to_owned());
    let want = vec![
        ("/dev/full", 1, String::new(), applied.clone()),
        ("broken pipe", 1, String::new(), applied.clone()),
        ("closed", 0, String::new(), applied),
    ];
    let ours = with_unwritable_stdout(Path::new(env!("CARGO_BIN_EXE_as-edit")));
    assert_eq!(ours, want);
    // The reference itself, when scripts/patch-refs.sh has installed it.
    let codex = std::env::var_os("APPLY_PATCH").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("target/patch-refs/apply_patch"),
        Into::into,
    );
    match codex.exists() {
        true => assert_eq!(with_unwritable_stdout(&codex), want, "{}", codex.display()),
        false => eprintln!(
            "skipped the comparison with Codex: {} is not installed (scripts/patch-refs.sh)",
            codex.display()
        ),
    }
}

/// Placements at a chunk's edges in this mode (the same parser and
/// locator as `--patch`, whose scenario folders 480-485 hold them): each
/// result is the one Codex's binary gives (checked against
/// `@openai/codex` 0.171.0): an addition after an empty context line, one
/// before `*** End of File`, an empty `@@` chunk, a chunk of one empty
/// context line, and an addition at the end before a later chunk.
#[test]
fn placements_at_chunk_edges_as_codex_places_them() {
    let cases = [
        ("a\n\nb\n", "\n+X", "a\n\nX\nb\n"),
        ("a\nb\n", "+X\n\n*** End of File", "X\na\nb\n"),
        ("a\nb\n", "@@\n-a\n+A\n@@\n", "A\nb\n"),
        ("b\n\nb\n\nc\n", "@@\n\n@@\n-b\n+B", "b\n\nB\n\nc\n"),
        (
            "a\nb\nc\n",
            "@@\n+END\n@@\n c\n+after-c",
            "a\nb\nc\nEND\nafter-c\n",
        ),
    ];
    for (before, body, after) in cases {
        let d = setup(&[("f.txt", before)]);
        let patch = format!("*** Begin Patch\n*** Update File: f.txt\n{body}\n*** End Patch\n");
        let (out, err, code) = apply_patch(d.path(), &[&patch], "");
        assert_eq!(
            (out.as_str(), err.as_str(), code),
            ("Success. Updated the following files:\nM f.txt\n", "", 0),
            "{body:?}"
        );
        assert_eq!(read(d.path(), "f.txt").as_deref(), Some(after), "{body:?}");
    }
}

/// Hard links: Codex writes an updated
/// file in place, so both names of a hard-linked file change (`a` then
/// `h` updated: both hold `z`), and `Update File: a` + `Move to: h`
/// removes `a` and writes `h` (checked against `@openai/codex` 0.171.0).
/// as-edit writes a new file and renames it, so one name would keep the
/// old text (before: `a` edited, `h` unchanged, reported `M h`): refused,
/// naming both paths, nothing written, in this mode and with `--patch`
/// (where a Move to onto an existing name is `file_exists`).
#[test]
fn hard_links_a_patch_names_twice_are_refused_naming_both() {
    let second = "*** Begin Patch\n*** Update File: a\n@@\n-x\n+y\n*** Update File: h\n@@\n-y\n+z\n*** End Patch\n";
    let onto = "*** Begin Patch\n*** Update File: a\n*** Move to: h\n@@\n-x\n+y\n*** End Patch\n";
    for (patch, said) in [
        (second, "h is a hard link of {W}/a, which the patch names too: Codex writes such a file in place (every name changes), as-edit by a new file (this name would keep the old text); change the file by one name"),
        (onto, "h is a hard link of {W}/a, the file moved: Codex removes {W}/a and writes this name in place, a rename would leave both; send *** Delete File of {W}/a and *** Add File of this path"),
    ] {
        let d = setup(&[("a", "x\n")]);
        let w = d.path().join("w").canonicalize().unwrap();
        std::fs::hard_link(w.join("a"), w.join("h")).unwrap();
        let ino = |p: &str| std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(w.join(p)).unwrap());
        let before = ino("a");
        let (out, err, code) = apply_patch(d.path(), &[patch], "");
        let which = if patch == second { 2 } else { 1 };
        let path = if patch == second { "h" } else { "a" };
        let want = format!(
            "file_not_found: file {which} of {which} ({path}): {}\nNo files were modified (the patch applies all or nothing).\n",
            said.replace("{W}", &w.display().to_string())
        );
        assert_eq!((out.as_str(), err.as_str(), code), ("", want.as_str(), 1));
        for p in ["a", "h"] {
            assert_eq!((read(d.path(), p).as_deref(), ino(p)), (Some("x\n"), before), "{p}");
        }
        let entries = std::fs::read_dir(&w).unwrap().count();
        assert_eq!(entries, 2, "no temp left");

        // --patch: the same refusal as a result line; a Move to onto an
        // existing name is file_exists there.
        let o = Command::new(env!("CARGO_BIN_EXE_as-edit"))
            .arg("--patch-b64")
            .arg(common::b64(patch))
            .current_dir(&w)
            .output()
            .unwrap();
        let line = String::from_utf8(o.stdout).unwrap();
        let want = if patch == second {
            format!(
                "__RESULT__{{\"error\":\"file_not_found\",\"detail\":\"file 2 of 2 (h): {}\",\"file\":2}}\n",
                said.replace("{W}", &w.display().to_string())
            )
        } else {
            "__RESULT__{\"error\":\"file_exists\",\"detail\":\"file 1 of 1 (a): h exists; use Update File to change it, or Delete File then Add File to replace it\",\"file\":1}\n".to_owned()
        };
        assert_eq!((line.as_str(), o.status.code()), (want.as_str(), Some(1)));
        for p in ["a", "h"] {
            assert_eq!((read(d.path(), p).as_deref(), ino(p)), (Some("x\n"), before), "{p}");
        }
    }
}

/// The table's open row (not yet fixed, so ignored): a chunk that lost a
/// separator empty line, then a pure addition placed where the search
/// stands. Codex (0.171.0) matched the empty line as context, so its
/// search stands after it: `A`, ``, `X`, `b`; as-edit gives `A`, `X`,
/// ``, `b`. Run with `--ignored` once the locator, the one pass and the
/// passes move the search past such lines.
#[test]
#[ignore = "open: the search after a chunk's dropped separators (src/patch/mod.rs table)"]
fn the_search_after_dropped_separators_stands_as_codex_s() {
    let d = setup(&[("f.txt", "a\n\nb\n")]);
    let patch = "*** Begin Patch\n*** Update File: f.txt\n@@\n-a\n+A\n\n@@\n+X\n\n*** End of File\n*** End Patch\n";
    let (out, err, code) = apply_patch(d.path(), &[patch], "");
    assert_eq!(
        (out.as_str(), err.as_str(), code),
        ("Success. Updated the following files:\nM f.txt\n", "", 0)
    );
    assert_eq!(read(d.path(), "f.txt").as_deref(), Some("A\n\nX\nb\n"));
}

/// `Update File: a` + `Move to: l`, `l` a symlink to `a`:
/// Codex (0.171.0) writes the new text through `l` and then removes `a`,
/// leaving `l` dangling; as-edit saw the destination as the file itself
/// and updated `a` in place, reporting `M l` (exit 0, a silent
/// difference). Refused now, naming both, nothing written; with
/// `--patch` a Move to onto an existing name is `file_exists`.
#[test]
fn a_move_onto_a_symlink_to_the_file_itself_is_refused() {
    let patch = "*** Begin Patch\n*** Update File: a\n*** Move to: l\n@@\n-x\n+y\n*** End Patch\n";
    let d = setup(&[("a", "x\n")]);
    let w = d.path().join("w").canonicalize().unwrap();
    std::os::unix::fs::symlink("a", w.join("l")).unwrap();
    let ino = || std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(w.join("a")).unwrap());
    let before = ino();
    let check = || {
        assert_eq!(
            (read(d.path(), "a").as_deref(), ino()),
            (Some("x\n"), before)
        );
        assert_eq!(std::fs::read_link(w.join("l")).unwrap(), Path::new("a"));
        assert_eq!(std::fs::read_dir(&w).unwrap().count(), 2, "no temp left");
    };
    let (out, err, code) = apply_patch(d.path(), &[patch], "");
    let a = w.join("a").display().to_string();
    let want = format!("file_not_found: file 1 of 1 (a): l is a symlink to {a}, the file moved: Codex writes through it and then removes {a}, leaving the link dangling; send *** Update File of {a} without Move to, or *** Delete File of the link first\nNo files were modified (the patch applies all or nothing).\n");
    assert_eq!((out.as_str(), err.as_str(), code), ("", want.as_str(), 1));
    check();
    let o = Command::new(env!("CARGO_BIN_EXE_as-edit"))
        .arg("--patch-b64")
        .arg(common::b64(patch))
        .current_dir(&w)
        .output()
        .unwrap();
    let want = "__RESULT__{\"error\":\"file_exists\",\"detail\":\"file 1 of 1 (a): l exists; use Update File to change it, or Delete File then Add File to replace it\",\"file\":1}\n";
    assert_eq!(
        (
            String::from_utf8(o.stdout).unwrap().as_str(),
            o.status.code()
        ),
        (want, Some(1))
    );
    check();
}
