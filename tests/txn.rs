//! Transactions (`{"files":[...]}`) end to end through the real
//! binary: rollback under every injected commit failure, a failed undo,
//! a full disk while a temp is written, opposite lock orders under load,
//! two paths to one file, SIGKILL during commits, and a property: a
//! transaction equals its ops one by one, and a refused one changes nothing.

mod common;
use common::*;

use std::collections::BTreeMap;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::{Command, Stdio};

/// Every entry under `dir`: relative path → (bytes or link target, mode, inode).
fn tree(dir: &Path) -> BTreeMap<String, (Vec<u8>, u32, u64)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let m = std::fs::symlink_metadata(&p).unwrap();
            let rel = p.strip_prefix(dir).unwrap().to_string_lossy().into_owned();
            let body = if m.file_type().is_symlink() {
                std::fs::read_link(&p)
                    .unwrap()
                    .into_os_string()
                    .into_encoded_bytes()
            } else if m.is_dir() {
                stack.push(p.clone());
                b"<dir>".to_vec()
            } else {
                std::fs::read(&p).unwrap()
            };
            out.insert(rel, (body, m.mode() & 0o7777, m.ino()));
        }
    }
    out
}

fn txn(dir: &Path, args: &[&str], req: &str, env: &[(&str, String)]) -> Run {
    let mut c = Command::new(BIN);
    c.arg("--stdin").args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    run_with_stdin(c, dir, req.as_bytes())
}

/// Five files, every op kind, a created parent and a move over a file.
fn setup(dir: &Path) -> &'static str {
    write_file(dir, "a.txt", b"alpha\nbeta\n", 0o640);
    write_file(dir, "b.txt", b"one\ntwo\n", 0o600);
    write_file(dir, "c.txt", b"gone\n", 0o644);
    write_file(dir, "d.txt", b"moving\n", 0o755);
    write_file(dir, "e.txt", b"replaced\n", 0o644);
    r#"{"files":[
      {"op":"edit","path":"a.txt","edits":[{"old":"beta","new":"BETA"}]},
      {"op":"insert","path":"b.txt","line":1,"text":"one and a half"},
      {"op":"create","path":"new/dir/n.txt","content":"new\n"},
      {"op":"delete","path":"c.txt"},
      {"op":"move","path":"d.txt","to":"e.txt","overwrite":true},
      {"op":"move","path":"a.txt","to":"sub/a2.txt","edits":[{"old":"alpha","new":"ALPHA"}]}
    ]}"#
}

/// Runs `setup`'s transaction with the test hook `hook` at k = 1, 2, ...,
/// with and without RENAME_EXCHANGE, until a k past the last step lets it
/// succeed. Every failing run must exit 1 and leave every file
/// byte-identical with its mode and inode, nothing left behind; `failed`
/// checks its result line. The success must be the request's whole effect.
fn every_commit_step(hook: &str, mut failed: impl FnMut(&str, &Run)) {
    for hooks in [vec![], vec![("AS_EDIT_TEST_NO_EXCHANGE", "1".to_string())]] {
        let mut k = 1;
        loop {
            let d = scratch();
            let req = setup(d.path());
            let before = tree(d.path());
            let mut env = hooks.clone();
            env.push((hook, k.to_string()));
            let r = txn(d.path(), &[], req, &env);
            assert_eq!(r.stderr, "");
            let what = format!("k={k} {hooks:?}");
            if r.code == 0 {
                assert_eq!(r.stdout, "__RESULT__{\"count\":2,\"files\":7}\n");
                assert!(k > 6, "at least one step per file ({k})");
                let after = tree(d.path());
                assert_eq!(after["sub/a2.txt"].0, b"ALPHA\nBETA\n");
                assert_eq!(after["sub/a2.txt"].1, 0o640, "mode carried over");
                assert_eq!(after["e.txt"], before["d.txt"], "moved: same inode");
                assert!(!after.contains_key("c.txt") && !after.contains_key("a.txt"));
                assert!(after.keys().all(|n| !n.contains(".as-edit-")), "{after:?}");
                break;
            }
            assert_eq!(r.code, 1, "{what}: {}", r.stdout);
            failed(&what, &r);
            assert_eq!(tree(d.path()), before, "{what}: {}", r.stdout);
            k += 1;
        }
    }
}

/// The k-th commit step fails, for every k: `rolled_back: true` and
/// every file as it was.
#[test]
fn every_commit_step_failing_rolls_back_everything() {
    every_commit_step("AS_EDIT_TEST_TXN_FAIL", |what, r| {
        assert!(
            r.stdout.contains("\"rolled_back\":true"),
            "{what}: {}",
            r.stdout
        );
        assert!(
            r.stdout
                .starts_with("__RESULT__{\"error\":\"write_failed\""),
            "{}",
            r.stdout
        );
    });
}

/// A panic at the k-th commit step, for every k: the panic hook undoes the
/// steps already done, newest first, so every file is as it was; the
/// result line is internal_error saying so.
#[test]
fn a_panic_at_every_commit_step_leaves_every_file_old() {
    let line = |said: &str| {
        format!("__RESULT__{{\"error\":\"internal_error\",\"detail\":\"injected commit panic{said}\"}}\n")
    };
    let undone = line(" (in the commit phase: rolled back, every file is old)");
    let mut rolled = [0; 2];
    every_commit_step("AS_EDIT_TEST_TXN_PANIC", |what, r| {
        // A step before any rename (naming a temp) has nothing to undo.
        assert!(
            r.stdout == undone || r.stdout == line(""),
            "{what}: {}",
            r.stdout
        );
        rolled[usize::from(what.contains("NO_EXCHANGE"))] += usize::from(r.stdout == undone);
    });
    assert!(
        rolled.iter().all(|&n| n > 4),
        "panics found steps to undo: {rolled:?}"
    );
}

/// A failed undo is said exactly: internal_error with every file's state,
/// and the original kept under its hidden name.
#[test]
fn a_failed_undo_is_internal_error_with_partial() {
    let d = scratch();
    write_file(d.path(), "a.txt", b"a\n", 0o644);
    write_file(d.path(), "b.txt", b"b\n", 0o644);
    let req = r#"{"files":[{"op":"edit","path":"a.txt","edits":[{"old":"a","new":"A"}]},
        {"op":"edit","path":"b.txt","edits":[{"old":"b","new":"B"}]}]}"#;
    // Steps: name a's temp (1), exchange (2), name b's temp (3), exchange
    // fails (4); the one undo (a's exchange) fails.
    let env = [
        ("AS_EDIT_TEST_TXN_FAIL", "4".to_string()),
        ("AS_EDIT_TEST_TXN_UNDO_FAIL", "1".to_string()),
    ];
    let r = txn(d.path(), &[], req, &env);
    let dir = d.path().canonicalize().unwrap();
    let dir = dir.display();
    assert_result(
        &r,
        &format!(
            "{{\"error\":\"internal_error\",\"detail\":\"file 2 of 2 (b.txt): commit failed (renaming the temp file over the target for {dir}/b.txt: Input/output error (os error 5); the file is unchanged) and could not be fully undone\",\"file\":2,\"rolled_back\":true,\"partial\":[{{\"path\":\"{dir}/a.txt\",\"state\":\"new\"}},{{\"path\":\"{dir}/b.txt\",\"state\":\"old\"}}]}}"
        ),
        1,
    );
    assert_eq!(std::fs::read(d.path().join("a.txt")).unwrap(), b"A\n");
    assert_eq!(std::fs::read(d.path().join("b.txt")).unwrap(), b"b\n");
    let hidden: Vec<String> = listing(d.path())
        .into_iter()
        .filter(|n| n.starts_with(".as-edit-"))
        .collect();
    assert_eq!(hidden.len(), 1, "a's original under its hidden name");
    assert_eq!(std::fs::read(d.path().join(&hidden[0])).unwrap(), b"a\n");
}

/// `partial` names a file that is not UTF-8 by `path_b64` (its lossy text
/// is the exact name of another file that can exist beside it).
#[test]
fn a_failed_undo_names_a_non_utf8_file_by_path_b64() {
    use base64::Engine as _;
    use std::os::unix::ffi::OsStrExt;
    let d = scratch();
    let odd = std::ffi::OsStr::from_bytes(b"\xff.txt");
    std::fs::write(d.path().join(odd), "a\n").unwrap();
    write_file(d.path(), "b.txt", b"b\n", 0o644);
    let req = format!(
        r#"{{"files":[{{"op":"edit","path_b64":"{}","edits":[{{"old":"a","new":"A"}}]}},
        {{"op":"edit","path":"b.txt","edits":[{{"old":"b","new":"B"}}]}}]}}"#,
        b64_bytes(b"\xff.txt")
    );
    let env = [
        ("AS_EDIT_TEST_TXN_FAIL", "4".to_string()),
        ("AS_EDIT_TEST_TXN_UNDO_FAIL", "1".to_string()),
    ];
    let r = txn(d.path(), &[], &req, &env);
    let dir = d.path().canonicalize().unwrap();
    let odd_b64 =
        base64::engine::general_purpose::STANDARD.encode(dir.join(odd).as_os_str().as_bytes());
    let tail = format!(
        ",\"partial\":[{{\"path_b64\":\"{odd_b64}\",\"state\":\"new\"}},{{\"path\":\"{}/b.txt\",\"state\":\"old\"}}]}}\n",
        dir.display()
    );
    assert!(r.stdout.ends_with(&tail), "{}", r.stdout);
    assert_eq!(r.code, 1);
    assert_eq!(std::fs::read(d.path().join(odd)).unwrap(), b"A\n");
}

fn b64_bytes(b: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(b)
}

/// A full disk while the third temp is written: write_failed, nothing
/// changed, nothing left.
#[test]
fn a_full_disk_on_the_third_temp_changes_nothing() {
    let d = scratch();
    let req = setup(d.path());
    let before = tree(d.path());
    let r = txn(
        d.path(),
        &[],
        req,
        &[("AS_EDIT_TEST_TEMP_ENOSPC", "3".into())],
    );
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(
        r.stdout
            .starts_with("__RESULT__{\"error\":\"write_failed\""),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("No space left on device"), "{}", r.stdout);
    // a.txt's two content ops made temps 1 and 2; b.txt's is the third.
    assert!(r.stdout.contains("\"file\":2"), "{}", r.stdout);
    assert!(
        !r.stdout.contains("rolled_back"),
        "nothing was committed: {}",
        r.stdout
    );
    assert_eq!(tree(d.path()), before);
}

/// A symlink and a hard link to one file in one request: one file, the
/// ops chain, locked once (no self-deadlock), committed once.
#[test]
fn a_symlink_and_a_hard_link_are_the_same_file() {
    let d = scratch();
    write_file(d.path(), "real.txt", b"a b c\n", 0o644);
    std::os::unix::fs::symlink("real.txt", d.path().join("sym")).unwrap();
    std::fs::hard_link(d.path().join("real.txt"), d.path().join("hard")).unwrap();
    let req = r#"{"files":[{"op":"edit","path":"sym","edits":[{"old":"a","new":"A"}]},
        {"op":"edit","path":"hard","edits":[{"old":"A b","new":"A B"}]},
        {"op":"edit","path":"real.txt","edits":[{"old":"B c","new":"B C"}]}]}"#;
    let r = txn(d.path(), &["--lock-timeout", "1"], req, &[]);
    assert_result(&r, "{\"count\":3,\"files\":1}", 0);
    assert_eq!(
        std::fs::read(d.path().join("real.txt")).unwrap(),
        b"A B C\n"
    );
    assert_eq!(listing(d.path()), ["hard", "real.txt", "sym"]);
}

/// A file an earlier op removes (a delete, a move over it), reached by a
/// later op of every kind through another hard link: refused in the plan
/// (it was a panic, internal_error "present"), except that a create or
/// move onto it without `overwrite` is `file_exists` (the name is there);
/// nothing changed, no temp left.
#[test]
fn a_hard_link_of_a_removed_file_is_refused_and_nothing_changes() {
    let removes = "is a hard link of a file an earlier op removes; send this op in another call";
    for first in [
        r#"{"op":"delete","path":"a.txt"}"#,
        r#"{"op":"move","path":"c.txt","to":"a.txt","overwrite":true}"#,
    ] {
        for (later, shown, said) in [
            (
                r#"{"op":"edit","path":"b.txt","edits":[{"old":"a","new":"b"}]}"#,
                "b.txt",
                removes,
            ),
            (
                r#"{"op":"insert","path":"b.txt","line":0,"text":"x"}"#,
                "b.txt",
                removes,
            ),
            (r#"{"op":"delete","path":"b.txt"}"#, "b.txt", removes),
            (
                r#"{"op":"create","path":"b.txt","content":"c\n","overwrite":true}"#,
                "b.txt",
                removes,
            ),
            (
                r#"{"op":"move","path":"b.txt","to":"e.txt"}"#,
                "b.txt",
                removes,
            ),
            (
                r#"{"op":"move","path":"d.txt","to":"b.txt","overwrite":true}"#,
                "d.txt",
                removes,
            ),
            (
                r#"{"op":"create","path":"b.txt","content":"c\n"}"#,
                "b.txt",
                "",
            ),
            (r#"{"op":"move","path":"d.txt","to":"b.txt"}"#, "d.txt", ""),
        ] {
            let d = scratch();
            write_file(d.path(), "a.txt", b"a\n", 0o644);
            std::fs::hard_link(d.path().join("a.txt"), d.path().join("b.txt")).unwrap();
            write_file(d.path(), "c.txt", b"c\n", 0o644);
            write_file(d.path(), "d.txt", b"d\n", 0o644);
            let before = tree(d.path());
            let req = format!(r#"{{"files":[{first},{later}]}}"#);
            let r = txn(d.path(), &[], &req, &[]);
            let line = if said.is_empty() {
                "{\"error\":\"file_exists\",\"detail\":\"file 2 of 2 (SHOWN): b.txt exists; give \\\"overwrite\\\": true to replace it\",\"file\":2}".replace("SHOWN", shown)
            } else {
                format!("{{\"error\":\"file_not_found\",\"detail\":\"file 2 of 2 ({shown}): b.txt {said}\",\"file\":2}}")
            };
            assert_result(&r, &line, 1);
            assert_eq!(tree(d.path()), before, "{req}");
        }
    }
}

/// A delete or move through a hard link of a file an earlier op names at
/// another path (edited in place, or moved): refused. The model is one
/// file at its current name, so it removed or moved *that* name: `edit a;
/// delete b` deleted a (with its edit) and kept b, `edit a; move c onto b`
/// put c at a. Content ops through the link still chain (one file).
#[test]
fn a_delete_or_move_through_another_hard_link_is_refused() {
    let said = "is a hard link of a file an earlier op names at another path; send its delete or move in another call";
    for first in [
        r#"{"op":"edit","path":"a.txt","edits":[{"old":"a","new":"b"}]}"#,
        r#"{"op":"move","path":"a.txt","to":"m.txt"}"#,
    ] {
        for (later, shown) in [
            (r#"{"op":"delete","path":"b.txt"}"#, "b.txt"),
            (r#"{"op":"move","path":"b.txt","to":"e.txt"}"#, "b.txt"),
            (
                r#"{"op":"move","path":"c.txt","to":"b.txt","overwrite":true}"#,
                "c.txt",
            ),
        ] {
            let d = scratch();
            write_file(d.path(), "a.txt", b"a\n", 0o644);
            std::fs::hard_link(d.path().join("a.txt"), d.path().join("b.txt")).unwrap();
            write_file(d.path(), "c.txt", b"c\n", 0o644);
            let before = tree(d.path());
            let req = format!(r#"{{"files":[{first},{later}]}}"#);
            let r = txn(d.path(), &[], &req, &[]);
            let line = format!("{{\"error\":\"file_not_found\",\"detail\":\"file 2 of 2 ({shown}): b.txt {said}\",\"file\":2}}");
            assert_result(&r, &line, 1);
            assert_eq!(tree(d.path()), before, "{req}");
        }
    }
    // A move onto its own hard link is rename(2)'s: nothing to do.
    let d = scratch();
    write_file(d.path(), "a.txt", b"a\n", 0o644);
    std::fs::hard_link(d.path().join("a.txt"), d.path().join("b.txt")).unwrap();
    let before = tree(d.path());
    let r = txn(
        d.path(),
        &[],
        r#"{"files":[{"op":"move","path":"a.txt","to":"b.txt"}]}"#,
        &[],
    );
    assert_result(&r, "{\"count\":0,\"files\":0}", 0);
    assert_eq!(tree(d.path()), before);
}

/// A symlink to a deleted file dangles: an edit through it is
/// file_not_found, in the words of a single-file edit of a dangling
/// symlink (it once said its target does not exist); a move
/// of it moves the link, as `rm a.txt; mv s z` does.
#[test]
fn a_symlink_to_a_deleted_file_is_missing() {
    let d = scratch();
    write_file(d.path(), "a.txt", b"a\n", 0o644);
    std::os::unix::fs::symlink("a.txt", d.path().join("s")).unwrap();
    let dir = d.path().canonicalize().unwrap();
    let before = tree(d.path());
    let later = r#"{"op":"edit","path":"s","edits":[{"old":"a","new":"b"}]}"#;
    let req = format!(r#"{{"files":[{{"op":"delete","path":"a.txt"}},{later}]}}"#);
    let r = txn(d.path(), &[], &req, &[]);
    let line = format!("{{\"error\":\"file_not_found\",\"detail\":\"file 2 of 2 (s): {}/s is a dangling symlink\",\"file\":2}}", dir.display());
    assert_result(&r, &line, 1);
    assert_eq!(tree(d.path()), before);
    let req = r#"{"files":[{"op":"delete","path":"a.txt"},{"op":"move","path":"s","to":"z"}]}"#;
    let r = txn(d.path(), &[], req, &[]);
    assert_result(&r, r#"{"count":0,"files":3}"#, 0);
    assert_eq!(listing(d.path()), ["z"]);
    assert_eq!(
        std::fs::read_link(d.path().join("z")).unwrap(),
        Path::new("a.txt")
    );
}

/// A path ending in `/` or `/.` names a directory: a create or a move
/// there is refused (Path's components drop the slash and the dot: it made
/// a file), and so is every op on an existing file spelled so (it was
/// file_exists, "give overwrite", even for an edit, or with overwrite), and
/// so is one ending in `/..`; outside `--root` it is outside_root first.
#[test]
fn a_trailing_slash_or_dot_names_a_directory() {
    let d = scratch();
    write_file(d.path(), "a.txt", b"a\n", 0o644);
    std::fs::create_dir(d.path().join("r")).unwrap();
    let before = tree(d.path());
    for (op, first, path) in [
        (
            r#"{"op":"create","path":"new/","content":"x\n"}"#,
            "new/",
            "new/",
        ),
        (
            r#"{"op":"create","path":"new/.","content":"x\n"}"#,
            "new/.",
            "new/.",
        ),
        (
            r#"{"op":"create","path":"x/y/./","content":"x"}"#,
            "x/y/./",
            "x/y/./",
        ),
        (r#"{"op":"move","path":"a.txt","to":"d/"}"#, "a.txt", "d/"),
        (r#"{"op":"move","path":"a.txt","to":"d/."}"#, "a.txt", "d/."),
        (
            r#"{"op":"edit","path":"a.txt/","edits":[{"old":"a","new":"b"}]}"#,
            "a.txt/",
            "a.txt/",
        ),
        (r#"{"op":"delete","path":"a.txt//"}"#, "a.txt//", "a.txt//"),
        (
            r#"{"op":"move","path":"./a.txt/","to":"z"}"#,
            "./a.txt/",
            "./a.txt/",
        ),
        (
            r#"{"op":"create","path":"a.txt/.","content":"x","overwrite":true}"#,
            "a.txt/.",
            "a.txt/.",
        ),
        (
            r#"{"op":"create","path":"a.txt/..","content":"x","overwrite":true}"#,
            "a.txt/..",
            "a.txt/..",
        ),
        (
            r#"{"op":"edit","path":"missing/..","edits":[{"old":"a","new":"b"}]}"#,
            "missing/..",
            "missing/..",
        ),
        (
            r#"{"op":"move","path":"a.txt","to":"missing/..","overwrite":true}"#,
            "a.txt",
            "missing/..",
        ),
    ] {
        let r = txn(d.path(), &[], &format!(r#"{{"files":[{op}]}}"#), &[]);
        assert_result(
            &r,
            &format!("{{\"error\":\"file_not_found\",\"detail\":\"file 1 of 1 ({first}): {path} names a directory (it ends in /, /. or /..)\",\"file\":1}}"),
            1,
        );
        assert_eq!(tree(d.path()), before, "{op}");
    }
    let root = d.path().join("r").canonicalize().unwrap();
    let r = txn(
        d.path(),
        &["--root", "r"],
        r#"{"files":[{"op":"create","path":"../n/","content":"x"}]}"#,
        &[],
    );
    assert_result(
        &r,
        &format!("{{\"error\":\"outside_root\",\"detail\":\"file 1 of 1 (../n/): ../n/ resolves outside the root {}\",\"file\":1}}", root.display()),
        1,
    );
    assert_eq!(tree(d.path()), before);
}

/// Patches reach the same plan: Delete File then Update File of its hard
/// link, Add File of `new/`, Move to `d/.`; and a NUL in a patch's path
/// (text or operations), which JSON ops refuse in parsing, was a panic
/// (internal_error "no NUL in a path"); an empty operations path was
/// `file_exists: " exists"`.
#[test]
fn patches_refuse_hard_links_trailing_slashes_and_nul() {
    let d = scratch();
    write_file(d.path(), "a.txt", b"a\n", 0o644);
    std::fs::hard_link(d.path().join("a.txt"), d.path().join("b.txt")).unwrap();
    let before = tree(d.path());
    let patch = |p: &str| run_stdin(d.path(), &["--patch"], p.as_bytes());
    let r = patch("*** Begin Patch\n*** Delete File: a.txt\n*** Update File: b.txt\n@@\n-a\n+b\n*** End Patch\n");
    assert_result(&r, "{\"error\":\"file_not_found\",\"detail\":\"file 2 of 2 (b.txt): b.txt is a hard link of a file an earlier op removes; send this op in another call\",\"file\":2}", 1);
    let r = patch("*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+b\n*** Delete File: b.txt\n*** End Patch\n");
    assert_result(&r, "{\"error\":\"file_not_found\",\"detail\":\"file 2 of 2 (b.txt): b.txt is a hard link of a file an earlier op names at another path; send its delete or move in another call\",\"file\":2}", 1);
    let r = patch("*** Begin Patch\n*** Add File: new/\n+x\n*** End Patch\n");
    assert_result(&r, "{\"error\":\"file_not_found\",\"detail\":\"file 1 of 1 (new/): new/ names a directory (it ends in /, /. or /..)\",\"file\":1}", 1);
    let r = patch(
        "*** Begin Patch\n*** Update File: a.txt\n*** Move to: d/.\n@@\n-a\n+b\n*** End Patch\n",
    );
    assert_result(&r, "{\"error\":\"file_not_found\",\"detail\":\"file 1 of 1 (a.txt): d/. names a directory (it ends in /, /. or /..)\",\"file\":1}", 1);
    let r = patch("*** Begin Patch\n*** Add File: n\0x\n+x\n*** End Patch\n");
    assert_result(
        &r,
        "{\"error\":\"invalid_patch\",\"detail\":\"line 2: the path contains a NUL character\"}",
        1,
    );
    let r = patch(
        "*** Begin Patch\n*** Update File: a.txt\n*** Move to: m\0\n@@\n-a\n+b\n*** End Patch\n",
    );
    assert_result(
        &r,
        "{\"error\":\"invalid_patch\",\"detail\":\"line 3: the path contains a NUL character\"}",
        1,
    );
    for ops in [
        r#"{"type":"create_file","path":"n\u0000x","diff":"+x\n"}"#,
        r#"{"type":"delete_file","path":"a\u0000"}"#,
        r#"{"type":"update_file","path":"a.txt","move_to":"q\u0000","diff":"@@\n-a\n+b\n"}"#,
        r#"{"type":"create_file","path":"","diff":"+x\n"}"#,
        r#"{"type":"update_file","path":"a.txt","move_to":"","diff":"@@\n-a\n+b\n"}"#,
    ] {
        let req = format!(r#"{{"operations":[{ops}]}}"#);
        let r = txn(d.path(), &[], &req, &[]);
        assert_result(&r, "{\"error\":\"invalid_argument\",\"detail\":\"stdin request: operation 1 of 1: a path is empty or contains a NUL character\"}", 2);
    }
    assert_eq!(tree(d.path()), before);
}

/// `mode` of a create, before the umask; a created file's parents 0755.
#[test]
fn create_sets_the_mode_and_parents() {
    let d = scratch();
    let req =
        r##"{"files":[{"op":"create","path":"p/q/x.sh","content":"#!/bin/sh\n","mode":"0750"}]}"##;
    let mut c = Command::new("sh");
    c.arg("-c").arg(format!("umask 022; exec {BIN} --stdin"));
    let r = run_with_stdin(c, d.path(), req.as_bytes());
    assert_result(&r, "{\"count\":0,\"files\":1}", 0);
    assert_eq!(mode(&d.path().join("p/q/x.sh")), 0o750);
    assert_eq!(mode(&d.path().join("p/q")), 0o755);
    assert_eq!(mode(&d.path().join("p")), 0o755);
}

/// Two kinds of transaction over the same ten files in opposite orders,
/// 32 at a time: none deadlocks (all finish within the lock timeout), none
/// is lost (every marker is in every file).
#[test]
fn opposite_orders_neither_deadlock_nor_lose_updates() {
    let d = scratch();
    let names: Vec<String> = (0..10).map(|i| format!("f{i}.txt")).collect();
    for n in &names {
        write_file(d.path(), n, b"END\n", 0o644);
    }
    let children: Vec<_> = (0..32)
        .map(|t| {
            let mut order: Vec<&String> = names.iter().collect();
            if t % 2 == 1 {
                order.reverse();
            }
            let ops: Vec<String> = order
                .iter()
                .map(|n| format!(r#"{{"op":"edit","path":"{n}","edits":[{{"old":"END","new":"m{t}\nEND"}}]}}"#))
                .collect();
            let req = format!("{{\"files\":[{}]}}", ops.join(","));
            let mut child = Command::new(BIN)
                .args(["--stdin", "--lock-timeout", "60"])
                .current_dir(d.path())
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            use std::io::Write;
            child.stdin.take().unwrap().write_all(req.as_bytes()).unwrap();
            child
        })
        .collect();
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "__RESULT__{\"count\":10,\"files\":10}\n"
        );
    }
    for n in &names {
        let text = std::fs::read_to_string(d.path().join(n)).unwrap();
        for t in 0..32 {
            assert!(text.contains(&format!("m{t}\n")), "{n} lost m{t}: {text}");
        }
    }
    assert_eq!(listing(d.path()).len(), 10, "nothing left behind");
}

/// Two files, each with a hard link in a second directory; two kinds of
/// transaction loop over them, one through `d1/x` and `d2/y`, the other
/// through `d2/x` and `d1/y`, 8 loops at a time. By (directory, name) they
/// sorted in opposite orders and could deadlock (each holding one inode,
/// waiting for the other until `--lock-timeout`: `busy`); by (device,
/// inode) they cannot. `--dry-run` keeps the links (a commit would give
/// one name a new inode). Waits for the loops with a generous bound and
/// fails, naming the hang, past it.
#[test]
fn hard_links_in_opposite_orders_never_deadlock() {
    let d = scratch();
    for sub in ["d1", "d2"] {
        std::fs::create_dir(d.path().join(sub)).unwrap();
    }
    write_file(d.path(), "d1/x", b"x\n", 0o644);
    write_file(d.path(), "d1/y", b"y\n", 0o644);
    std::fs::hard_link(d.path().join("d1/x"), d.path().join("d2/x")).unwrap();
    std::fs::hard_link(d.path().join("d1/y"), d.path().join("d2/y")).unwrap();
    let req = |a: &str, b: &str| {
        format!(
            r#"{{"files":[{{"op":"edit","path":"{a}/x","edits":[{{"old":"x","new":"X"}}]}},{{"op":"edit","path":"{b}/y","edits":[{{"old":"y","new":"Y"}}]}}]}}"#
        )
    };
    std::fs::write(d.path().join("a.json"), req("d1", "d2")).unwrap();
    std::fs::write(d.path().join("b.json"), req("d2", "d1")).unwrap();
    let runs = 150;
    let mut loops: Vec<_> = (0..8)
        .map(|k| {
            let r = if k % 2 == 0 { "a.json" } else { "b.json" };
            Command::new("sh")
                .arg("-c")
                .arg(format!(
                    "i=0; while [ $i -lt {runs} ]; do {BIN} --stdin --dry-run --lock-timeout 60 < {r} \
                     || exit 1; i=$((i+1)); done"
                ))
                .current_dir(d.path())
                .stdout(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let bound = std::time::Instant::now() + std::time::Duration::from_secs(50);
    while loops.iter_mut().any(|c| c.try_wait().unwrap().is_none()) {
        if std::time::Instant::now() > bound {
            for c in &mut loops {
                let _ = c.kill();
            }
            panic!("hung for 50 s: two transactions over hard links deadlocked");
        }
        std::thread::sleep(std::time::Duration::from_millis(20)); // polling a condition
    }
    for c in loops {
        let out = c.wait_with_output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let ok = "__RESULT__{\"count\":2,\"files\":2}\n";
        assert!(out.status.success(), "a transaction failed: {text}");
        assert_eq!(text, ok.repeat(runs), "every run succeeded");
    }
    assert_eq!(std::fs::read(d.path().join("d2/x")).unwrap(), b"x\n");
    let ino = |p: &str| std::fs::metadata(d.path().join(p)).unwrap().ino();
    assert_eq!(ino("d1/x"), ino("d2/x"), "the links kept");
}

/// SIGKILL at random instants over 10-file transactions: every file is
/// old or new (never torn), and whatever remains besides is a hidden
/// `.as-edit-*.tmp` name. Prints how many runs ended mixed or left names.
#[test]
fn sigkill_leaves_each_file_old_or_new() {
    let runs = 300;
    let (mut mixed, mut left, mut done) = (0, 0, 0);
    let mut seed = 0x9e3779b97f4a7c15u64;
    for run in 0..runs {
        let d = scratch();
        let names: Vec<String> = (0..10).map(|i| format!("f{i}.txt")).collect();
        for n in &names {
            write_file(
                d.path(),
                n,
                format!("old {n}\n").repeat(200).as_bytes(),
                0o644,
            );
        }
        let ops: Vec<String> = names
            .iter()
            .map(|n| format!(r#"{{"op":"edit","path":"{n}","edits":[{{"old":"old","new":"new","replace_all":true}}]}}"#))
            .collect();
        let req = format!("{{\"files\":[{}]}}", ops.join(","));
        let mut child = Command::new(BIN)
            .arg("--stdin")
            .current_dir(d.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(req.as_bytes())
            .unwrap();
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        // The kill instant is the random variable here, not a wait.
        std::thread::sleep(std::time::Duration::from_micros(seed % 4000));
        let _ = child.kill();
        let status = child.wait().unwrap();
        done += usize::from(status.success());
        let (mut old, mut new) = (0, 0);
        for n in &names {
            let text = std::fs::read_to_string(d.path().join(n)).unwrap();
            if text == format!("old {n}\n").repeat(200) {
                old += 1;
            } else if text == format!("new {n}\n").repeat(200) {
                new += 1;
            } else {
                panic!("run {run}: {n} is torn");
            }
        }
        mixed += usize::from(old > 0 && new > 0);
        let extra: Vec<String> = listing(d.path())
            .into_iter()
            .filter(|n| !names.contains(n))
            .collect();
        assert!(
            extra
                .iter()
                .all(|n| n.starts_with(".as-edit-") && n.ends_with(".tmp")),
            "run {run}: {extra:?}"
        );
        left += usize::from(!extra.is_empty());
    }
    eprintln!(
        "sigkill: {runs} runs, {done} completed, {mixed} ended mixed, {left} left hidden names"
    );
}

/// Property: when no op is refused, a transaction leaves the tree the ops
/// one by one would (single-file edits, rm, mv); when one is refused,
/// nothing changes.
#[test]
fn a_transaction_equals_its_ops_one_by_one() {
    let words = ["a", "b", "c", "ab", "ba", "cab"];
    let mut seed = 12345u64;
    let mut next = |n: usize| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) as usize % n
    };
    for case in 0..60 {
        let (t, o) = (scratch(), scratch());
        for dir in [t.path(), o.path()] {
            for i in 0..3 {
                write_file(dir, format!("f{i}"), b"a b c\nab ba\ncab\n", 0o644);
            }
        }
        let mut ops = Vec::new();
        for _ in 0..1 + next(5) {
            let f = format!("f{}", next(3));
            let (old, new) = (words[next(6)], words[next(6)]);
            ops.push((f, old, new));
        }
        let json: Vec<String> = ops
            .iter()
            .map(|(f, old, new)| {
                format!(
                    r#"{{"op":"edit","path":"{f}","edits":[{{"old":"{old}","new":"{new}X"}}]}}"#
                )
            })
            .collect();
        let before = tree(t.path());
        let r = txn(
            t.path(),
            &[],
            &format!("{{\"files\":[{}]}}", json.join(",")),
            &[],
        );
        let mut refused = false;
        for (f, old, new) in &ops {
            let one = run_argv(
                o.path(),
                &[
                    f.as_bytes(),
                    b64(old).as_bytes(),
                    b64(&format!("{new}X")).as_bytes(),
                ],
            );
            if one.code != 0 {
                refused = true;
                break;
            }
        }
        let contents = |d: &Path| -> BTreeMap<String, Vec<u8>> {
            tree(d).into_iter().map(|(k, v)| (k, v.0)).collect()
        };
        if refused {
            assert_eq!(r.code, 1, "case {case}: {ops:?} {}", r.stdout);
            assert_eq!(
                tree(t.path()),
                before,
                "case {case}: a refusal changes nothing"
            );
        } else {
            assert_eq!(r.code, 0, "case {case}: {ops:?} {}", r.stdout);
            assert_eq!(
                contents(t.path()),
                contents(o.path()),
                "case {case}: {ops:?}"
            );
        }
    }
}

/// `--diff`: each change's diff, all under one 64 KiB budget.
#[test]
fn diffs_share_one_budget() {
    let d = scratch();
    let big = "x\n".repeat(30_000);
    for i in 0..3 {
        write_file(d.path(), format!("f{i}"), big.as_bytes(), 0o644);
    }
    let ops: Vec<String> = (0..3)
        .map(|i| format!(r#"{{"op":"edit","path":"f{i}","edits":[{{"old":"x","new":"y","replace_all":true}}]}}"#))
        .collect();
    let r = txn(
        d.path(),
        &["--report", "--diff"],
        &format!("{{\"files\":[{}]}}", ops.join(",")),
        &[],
    );
    assert_eq!(r.code, 0, "{}", r.stdout);
    let v: serde_json::Value =
        serde_json::from_str(r.stdout.strip_prefix("__RESULT__").unwrap()).unwrap();
    let total: usize = v["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["diff"].as_str().map_or(0, str::len))
        .sum();
    assert!(total <= 64 * 1024, "{total}");
    assert!(v["changes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["diff_truncated"] == true));
    let _ = std::fs::Permissions::from_mode(0o644);
}

/// A backend around the local shell: no stdin, and the `fail_upload`-th
/// upload fails.
struct Limited {
    inner: as_edit_host::LocalShell,
    stdin: bool,
    uploads: usize,
    fail_upload: usize,
}

impl as_edit_host::Sandbox for Limited {
    fn exec(&mut self, c: &[u8], s: Option<&[u8]>) -> std::io::Result<as_edit_host::ExecOutput> {
        self.inner.exec(c, s)
    }
    fn download(&mut self, p: &Path) -> std::io::Result<Vec<u8>> {
        self.inner.download(p)
    }
    fn upload(&mut self, p: &Path, b: &[u8]) -> std::io::Result<()> {
        self.uploads += 1;
        if self.uploads == self.fail_upload {
            return Err(std::io::Error::other("injected upload failure"));
        }
        self.inner.upload(p, b)
    }
    fn remove(&mut self, p: &Path) -> std::io::Result<()> {
        self.inner.remove(p)
    }
    fn supports_stdin(&self) -> bool {
        self.stdin
    }
}

fn editor(helper: &str, stdin: bool, fail_upload: usize) -> as_edit_host::Editor<Limited> {
    let sb = Limited {
        inner: as_edit_host::LocalShell::new(),
        stdin,
        uploads: 0,
        fail_upload,
    };
    as_edit_host::Editor::new(sb, helper)
}

fn host_request(d: &Path) -> Vec<as_edit_host::FileOp> {
    use as_edit_host::{FileOp, TxnEdit};
    write_file(d, "a.txt", b"alpha\n", 0o644);
    write_file(d, "b.txt", b"beta\n", 0o644);
    let p = |n: &str| d.join(n).to_string_lossy().into_owned();
    vec![
        FileOp::Edit {
            path: p("a.txt").into(),
            edits: vec![TxnEdit::new("alpha", "ALPHA")],
            expect_sha256: None,
        },
        FileOp::Insert {
            path: p("b.txt").into(),
            line: 0,
            text: "top".into(),
        },
        FileOp::Create {
            path: p("c.txt").into(),
            content: "c\n".into(),
            overwrite: false,
            mode: None,
        },
    ]
}

fn done(a: as_edit_host::Applied) -> (u64, u64, as_edit_host::Via) {
    (a.count, a.files, a.via)
}

/// The Editor's transaction: natively through --stdin and through
/// --request-b64, one exec each after the probe.
#[test]
fn editor_transaction_runs_natively_by_stdin_or_request_b64() {
    for stdin in [true, false] {
        let d = scratch();
        let req = host_request(d.path());
        let a = editor(BIN, stdin, 0).transaction(&req).unwrap();
        assert_eq!(done(a), (1, 3, as_edit_host::Via::Native));
        assert_eq!(std::fs::read(d.path().join("a.txt")).unwrap(), b"ALPHA\n");
        assert_eq!(
            std::fs::read(d.path().join("b.txt")).unwrap(),
            b"top\nbeta\n"
        );
        assert_eq!(std::fs::read(d.path().join("c.txt")).unwrap(), b"c\n");
    }
}

/// Without a helper: the transfer fallback computes everything first (a
/// refusal uploads nothing), and an upload failing re-uploads what it had
/// replaced and says so.
#[test]
fn editor_transaction_falls_back_through_transfer() {
    use as_edit_host::{FileOp, TxnEdit};
    let d = scratch();
    let req = host_request(d.path());
    let a = editor("/nonexistent/as-edit", true, 0)
        .transaction(&req)
        .unwrap();
    assert_eq!(done(a), (1, 3, as_edit_host::Via::Transfer));
    assert_eq!(
        std::fs::read(d.path().join("b.txt")).unwrap(),
        b"top\nbeta\n"
    );

    let d = scratch();
    let mut req = host_request(d.path());
    req[2] = FileOp::Edit {
        path: d.path().join("a.txt").to_string_lossy().into_owned().into(),
        edits: vec![TxnEdit::new("zzz", "y")],
        expect_sha256: None,
    };
    let e = editor("/nonexistent/as-edit", true, 0)
        .transaction(&req)
        .unwrap_err();
    assert_eq!(e.token(), Some("string_not_found"));
    assert_eq!(std::fs::read(d.path().join("a.txt")).unwrap(), b"alpha\n");
    assert_eq!(std::fs::read(d.path().join("b.txt")).unwrap(), b"beta\n");

    let d = scratch();
    let req = host_request(d.path());
    let e = editor("/nonexistent/as-edit", true, 2)
        .transaction(&req)
        .unwrap_err();
    assert_eq!(e.token(), Some("write_failed"));
    let msg = e.to_string();
    assert!(msg.contains("injected upload failure"), "{msg}");
    assert!(
        msg.ends_with("(rolled back: every file has its original content)"),
        "{msg}"
    );
    assert_eq!(std::fs::read(d.path().join("a.txt")).unwrap(), b"alpha\n");
    assert_eq!(std::fs::read(d.path().join("b.txt")).unwrap(), b"beta\n");
    assert!(!d.path().join("c.txt").exists());
}

/// 256 edits (or moves with edits) as one request, in one directory or
/// in 256: one descriptor per directory, not per file.
fn many_files(d: &Path, moves: bool, dirs: bool) -> String {
    let v: Vec<String> = (0..256)
        .map(|i| {
            let p = if dirs { format!("d{i}/f{i}") } else { format!("f{i}") };
            if dirs {
                std::fs::create_dir(d.join(format!("d{i}"))).unwrap();
            }
            write_file(d, &p, b"old\n", 0o644);
            match moves {
                false => format!(r#"{{"op":"edit","path":"{p}","edits":[{{"old":"old","new":"new"}}]}}"#),
                true => format!(r#"{{"op":"move","path":"{p}","to":"{p}.m","edits":[{{"old":"old","new":"new"}}]}}"#),
            }
        })
        .collect();
    format!("{{\"files\":[{}]}}", v.join(","))
}

/// The bound: 256 files pass under `ulimit -n 1024` (soft and hard), edits
/// and moves with edits, in one directory and in 256 (before the
/// directories were shared, the moves ran out at file 252); under a soft
/// limit of 64 too (raised to the hard one); 257 ops are invalid_argument.
#[test]
fn two_hundred_fifty_six_files_under_a_descriptor_limit() {
    for (moves, dirs) in [(false, false), (false, true), (true, false), (true, true)] {
        let d = scratch();
        let req = many_files(d.path(), moves, dirs);
        let mut c = Command::new("sh");
        c.arg("-c").arg(format!(
            "ulimit -Sn 1024 && ulimit -Hn 1024 && exec {BIN} --stdin"
        ));
        let r = run_with_stdin(c, d.path(), req.as_bytes());
        // A move changes two paths (its source and its target: the txn docs).
        let k = if moves { 512 } else { 256 };
        assert_result(&r, &format!("{{\"count\":256,\"files\":{k}}}"), 0);
        let mut want: Vec<String> = (0..256)
            .map(|i| {
                let p = if dirs {
                    format!("d{i}/f{i}")
                } else {
                    format!("f{i}")
                };
                let p = if moves { format!("{p}.m") } else { p };
                assert_eq!(std::fs::read(d.path().join(&p)).unwrap(), b"new\n", "{p}");
                p
            })
            .collect();
        if dirs {
            want.extend((0..256).map(|i| format!("d{i}")));
        }
        let mut got: Vec<String> = tree(d.path()).into_keys().collect();
        got.sort();
        want.sort();
        assert_eq!(got, want, "moves {moves}, dirs {dirs}: nothing else left");
    }
    let d = scratch();
    let req = many_files(d.path(), false, false);
    let mut c = Command::new("sh");
    c.arg("-c")
        .arg(format!("ulimit -Sn 64 && exec {BIN} --stdin"));
    let r = run_with_stdin(c, d.path(), req.as_bytes());
    assert_result(&r, "{\"count\":256,\"files\":256}", 0);
    let mut big = req.strip_suffix("]}").unwrap().to_owned();
    big.push_str(r#",{"op":"delete","path":"f0"}]}"#);
    let r = txn(d.path(), &[], &big, &[]);
    assert_result(
        &r,
        "{\"error\":\"invalid_argument\",\"detail\":\"files request: 257 ops, more than the 256 one transaction may hold\"}",
        2,
    );
}

/// Descriptors that truly run out (a hard limit of 200 for 256 edits in
/// one directory, which need a descriptor each and about 10 more: 518
/// once each held two): `write_failed` whose
/// detail says the bound and what to do, not "retry"; every file as it
/// was, nothing left.
#[test]
fn running_out_of_descriptors_says_the_bound() {
    let d = scratch();
    let req = many_files(d.path(), false, false);
    let before = tree(d.path());
    let mut c = Command::new("sh");
    c.arg("-c").arg(format!(
        "ulimit -Sn 200 && ulimit -Hn 200 && exec {BIN} --stdin"
    ));
    let r = run_with_stdin(c, d.path(), req.as_bytes());
    assert_eq!(r.code, 1, "{r:?}");
    let line = r.stdout.strip_prefix("__RESULT__").expect("a result line");
    let v: serde_json::Value = serde_json::from_str(line.trim_end()).unwrap();
    assert_eq!(v["error"], "write_failed", "{line}");
    let detail = v["detail"].as_str().unwrap();
    let tail = "(os error 24): a transaction holds, until its commit, \
        a descriptor per file (its lock, then its new content), one per directory and per \
        directory it creates, and RLIMIT_NOFILE allows 200 (hard limit 200); nothing was \
        changed: send fewer files per request, or raise the hard limit (ulimit -Hn)";
    assert!(detail.ends_with(tail), "{detail}");
    assert!(detail.starts_with("file "), "{detail}");
    assert!(!detail.contains("retry"), "{detail}");
    assert_eq!(tree(d.path()), before, "every file as it was, nothing left");
}

/// An insert streams through the engine into its temp (`txn::insert`'s
/// `stream`); `--diff` takes the whole-text form. Both must give the bytes
/// of the pure `insert` on the normalized text, for every kind of file:
/// LF, CRLF, lone CR, no final newline, empty, one line; every line from 0
/// to one past the end (`line_out_of_range` with the same detail); texts
/// with and without a final newline; and `--eol preserve`.
#[test]
fn a_streamed_insert_equals_the_whole_text_insert() {
    let files: [&[u8]; 7] = [
        b"a\nb\nc\n",
        b"a\r\nb\r\nc\r\n",
        b"a\rb\rc",
        b"one line no newline",
        b"",
        b"\n\n\n",
        b"x\ny\r\nz",
    ];
    let mut cases = 0;
    for content in files {
        let norm = String::from_utf8(as_edit::engine::normalize_eol(content)).unwrap();
        let lines =
            norm.matches('\n').count() + usize::from(!norm.is_empty() && !norm.ends_with('\n'));
        for line in 0..=lines as u64 + 1 {
            for text in ["NEW", "N1\nN2\n", "M\r\n"] {
                let want = as_edit::txn::insert(&norm, line, text, Path::new("f"));
                for extra in [&[][..], &["--report"][..], &["--report", "--diff"][..]] {
                    let d = scratch();
                    std::fs::write(d.path().join("f"), content).unwrap();
                    let req = format!(
                        r#"{{"files":[{{"op":"insert","path":"f","line":{line},"text":{}}}]}}"#,
                        serde_json::to_string(text).unwrap()
                    );
                    let r = txn(d.path(), extra, &req, &[]);
                    let got = std::fs::read(d.path().join("f")).unwrap();
                    match &want {
                        Ok(t) => {
                            assert_eq!(
                                r.code, 0,
                                "{content:?} line {line} {extra:?}: {}",
                                r.stdout
                            );
                            assert_eq!(
                                got,
                                t.as_bytes(),
                                "{content:?} line {line} {text:?} {extra:?}"
                            );
                            if !extra.is_empty() {
                                use sha2::Digest;
                                let h = as_edit::hex::encode(&sha2::Sha256::digest(&got));
                                let keys = format!(
                                    r#""size":{},"sha256":"{h}","lines":[{}]"#,
                                    got.len(),
                                    line + 1
                                );
                                assert!(r.stdout.contains(&keys), "{} lacks {keys}", r.stdout);
                            }
                        }
                        Err(e) => {
                            assert_eq!(r.code, 1, "{}", r.stdout);
                            assert!(
                                r.stdout.contains(
                                    &e.failure
                                        .detail
                                        .clone()
                                        .unwrap_or_default()
                                        .replace('"', "\\\"")
                                ),
                                "{content:?} line {line}: {} vs {:?}",
                                r.stdout,
                                e.failure.detail
                            );
                            assert_eq!(got, content, "a refusal changes nothing");
                        }
                    }
                    assert_eq!(listing(d.path()), ["f"]);
                    cases += 1;
                }
            }
        }
    }
    // --eol preserve on a CRLF file: the inserted lines are CRLF too.
    let d = scratch();
    std::fs::write(d.path().join("f"), b"a\r\nb\r\n").unwrap();
    let req = r#"{"files":[{"op":"insert","path":"f","line":1,"text":"x\ny"}]}"#;
    let r = txn(d.path(), &["--eol", "preserve"], req, &[]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert_eq!(
        std::fs::read(d.path().join("f")).unwrap(),
        b"a\r\nx\r\ny\r\nb\r\n"
    );
    assert!(cases > 100, "{cases} cases");
}

/// An insert holds nothing proportional to the file: 48 MiB in, peak RSS
/// a few MiB (GNU time's `%M` of the one child: a child of this process
/// would inherit its high-water mark across exec). The whole-text insert
/// it replaced peaked at about twice the file.
#[test]
fn an_insert_into_a_large_file_streams() {
    if !Path::new("/usr/bin/time").exists() {
        return skip("GNU time is not installed (scripts/test.sh installs it as root)");
    }
    let d = scratch();
    let line = b"a line of a large file, to be copied through the temp\n";
    let n = 48 * 1024 * 1024 / line.len();
    {
        use std::io::Write;
        let mut w = std::io::BufWriter::new(std::fs::File::create(d.path().join("f")).unwrap());
        (0..n).for_each(|_| w.write_all(line).unwrap());
    }
    let req = r#"{"files":[{"op":"insert","path":"f","line":2,"text":"INSERTED"}]}"#;
    let mut c = Command::new("/usr/bin/time");
    c.args(["-f", "%M", BIN, "--stdin"]);
    let r = run_with_stdin(c, d.path(), req.as_bytes());
    assert_eq!(
        r.stdout, "__RESULT__{\"count\":0,\"files\":1}\n",
        "{}",
        r.stderr
    );
    let got = std::fs::read(d.path().join("f")).unwrap();
    assert_eq!(got.len(), line.len() * n + 9);
    assert_eq!(
        &got[..2 * line.len() + 9],
        [&line[..], line, b"INSERTED\n"].concat()
    );
    let kib: u64 = r.stderr.trim().parse().expect("time -f %M prints KiB");
    assert!(kib < 16 * 1024, "peak RSS {kib} KiB for a 48 MiB file");
}

/// An allocation failing at every point of a transaction in turn
/// (`AS_EDIT_TEST_OOM_AT=k`), with and without RENAME_EXCHANGE: the one
/// out-of-memory line, and every file old (byte-identical, same inode,
/// nothing left), or the commit complete. Before the commit built each
/// step's inverse ahead of the step, an allocation between a step and its
/// log left that step unundone: one file new beside old ones, an original
/// only under a hidden name, a made directory left behind. Past the commit
/// (the result line's own allocations) every file is new, and the line says
/// so: a success (exit 0) with the count and files and no report; it said
/// `write_failed` "unchanged, retry", which the host library answered by
/// running the transaction again through its transfer path.
#[test]
fn out_of_memory_at_every_allocation_leaves_every_file_old_or_all_new() {
    for hooks in [vec![], vec![("AS_EDIT_TEST_NO_EXCHANGE", "1".to_string())]] {
        let d = scratch();
        let req = setup(d.path());
        let ok = txn(d.path(), &[], req, &hooks);
        assert_eq!(ok.code, 0);
        // The success line, with the words of an exit past the commit.
        let committed = ok.stdout.replace(
            "}\n",
            ",\"detail\":\"out of memory after the commit (an allocation failed): every change was made; the rest of the result could not be built\"}\n",
        );
        let strip = |t: BTreeMap<String, (Vec<u8>, u32, u64)>| {
            t.into_iter()
                .map(|(k, (b, m, _))| (k, (b, m)))
                .collect::<BTreeMap<_, _>>()
        };
        let done = strip(tree(d.path()));
        let (mut k, mut old, mut new) = (1, 0, 0);
        loop {
            let d = scratch();
            let req = setup(d.path());
            let before = tree(d.path());
            let mut env = hooks.clone();
            env.push(("AS_EDIT_TEST_OOM_AT", k.to_string()));
            let r = txn(d.path(), &[], req, &env);
            assert_eq!(r.stderr, "");
            if r.code == 0 && r.stdout == committed {
                assert_eq!(strip(tree(d.path())), done, "k={k} {hooks:?}: committed");
                new += 1;
                k += 1;
                continue;
            }
            if r.code == 0 {
                break;
            }
            assert_eq!(r.code, 1, "k={k}: {}", r.stdout);
            assert!(r.stdout.contains("out of memory"), "k={k}: {}", r.stdout);
            assert_eq!(tree(d.path()), before, "k={k} {hooks:?}: said unchanged");
            old += 1;
            k += 1;
        }
        assert!(new > 0, "{hooks:?}: no run out of memory past the commit");
        assert!(
            old > 50,
            "{hooks:?}: {old} runs out of memory before the end"
        );
        println!("{hooks:?}: {k} allocations, {old} old, {new} new past the commit");
    }
}

/// Runs `req` with the helper held just before its commit (the FIFO of
/// AS_EDIT_TEST_TXN_PAUSE, test builds), runs `meddle` there, then lets
/// it go on.
fn txn_paused(dir: &Path, req: &str, meddle: impl FnOnce()) -> Run {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let fifos = tempfile::tempdir().unwrap();
    let fifo = fifos.path().join("pause");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a C string we own.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
    let mut child = Command::new(BIN)
        .arg("--stdin")
        .current_dir(dir)
        .env("AS_EDIT_TEST_TXN_PAUSE", &fifo)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(req.as_bytes())
        .unwrap();
    // A non-blocking open for writing succeeds once the helper has the
    // FIFO open for reading: it is at the pause, every file prepared.
    let mut w = loop {
        match std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&fifo)
        {
            Ok(w) => break w,
            Err(e) if e.raw_os_error() == Some(libc::ENXIO) => {
                if let Some(s) = child.try_wait().unwrap() {
                    panic!("the helper ended ({s}) without reaching the pause");
                }
                std::thread::yield_now();
            }
            Err(e) => panic!("{e}"),
        }
    };
    meddle();
    w.write_all(b"x").unwrap();
    drop(w);
    child.wait_with_output().unwrap().into()
}

/// Two files removed by another writer between the prepare and the commit:
/// refused with nothing done, naming the first removed file in request
/// order (a.txt, op 1, though b.txt is committed first: a's last op is 3)
/// and what happened to it. It said "was changed by another writer" of
/// b.txt (file 2), after a commit step and a rollback.
#[test]
fn files_removed_before_the_commit_are_named_in_request_order() {
    let d = scratch();
    let p = d.path();
    write_file(p, "a.txt", b"alpha\n", 0o644);
    write_file(p, "b.txt", b"one\n", 0o644);
    write_file(p, "c.txt", b"kept\n", 0o644);
    let req = r#"{"files":[
      {"op":"edit","path":"a.txt","edits":[{"old":"alpha","new":"ALPHA"}]},
      {"op":"edit","path":"b.txt","edits":[{"old":"one","new":"ONE"}]},
      {"op":"insert","path":"a.txt","line":1,"text":"more"},
      {"op":"edit","path":"c.txt","edits":[{"old":"kept","new":"KEPT"}]}
    ]}"#;
    let r = txn_paused(p, req, || {
        std::fs::remove_file(p.join("b.txt")).unwrap();
        std::fs::remove_file(p.join("a.txt")).unwrap();
    });
    let dir = p.display();
    assert_eq!(
        (r.stdout.as_str(), r.code),
        (
            format!("__RESULT__{{\"error\":\"conflict\",\"detail\":\"file 1 of 4 (a.txt): {dir}/a.txt was removed or renamed by another writer while it was being edited; nothing was written\",\"file\":1}}\n").as_str(),
            1
        )
    );
    assert_eq!(listing(p), vec!["c.txt"]);
    assert_eq!(std::fs::read(p.join("c.txt")).unwrap(), b"kept\n");
}

/// A move's target replaced with "overwrite" and named by no op is
/// re-checked with the others before the first commit step: changed by
/// another writer meanwhile, it is refused with nothing done. It was
/// found by the commit's own re-check after b.txt's step, rolled back.
#[test]
fn a_replaced_move_target_changed_before_the_commit_is_refused_with_nothing_done() {
    let d = scratch();
    let p = d.path();
    write_file(p, "a.txt", b"alpha\n", 0o644);
    write_file(p, "b.txt", b"one\n", 0o644);
    let req = r#"{"files":[
      {"op":"edit","path":"b.txt","edits":[{"old":"one","new":"ONE"}]},
      {"op":"move","path":"b.txt","to":"a.txt","overwrite":true}
    ]}"#;
    let r = txn_paused(p, req, || {
        write_file(p, "t", b"other\n", 0o644);
        std::fs::rename(p.join("t"), p.join("a.txt")).unwrap();
    });
    let dir = p.display();
    assert_eq!(
        (r.stdout.as_str(), r.code),
        (
            format!("__RESULT__{{\"error\":\"conflict\",\"detail\":\"file 2 of 2 (b.txt): {dir}/a.txt was changed by another writer while it was being edited; nothing was written\",\"file\":2}}\n").as_str(),
            1
        )
    );
    assert_eq!(listing(p), vec!["a.txt", "b.txt"]);
    assert_eq!(std::fs::read(p.join("a.txt")).unwrap(), b"other\n");
    assert_eq!(std::fs::read(p.join("b.txt")).unwrap(), b"one\n");
}

/// A move with edits whose source cannot be read (`/proc/self/mem` at
/// offset 0: EIO, every time) names the source in its `read_failed`
/// detail: it named the destination, which was never read (nor made).
#[test]
fn a_moved_file_that_cannot_be_read_is_named_not_its_destination() {
    if !Path::new("/proc/self/mem").exists() {
        return skip("no /proc/self/mem");
    }
    let d = scratch();
    let req = br#"{"files":[{"op":"move","path":"/proc/self/mem","to":"mv","edits":[{"old":"a","new":"b"}]}]}"#;
    let r = run_stdin(d.path(), &["--stdin"], req);
    let head = "__RESULT__{\"error\":\"read_failed\",\"detail\":\"file 1 of 1 (/proc/self/mem): reading /proc/";
    let tail = "/mem: Input/output error (os error 5)\",\"file\":1}\n";
    assert!(
        r.stdout.starts_with(head) && r.stdout.ends_with(tail) && r.code == 1,
        "{}",
        r.stdout
    );
    assert!(listing(d.path()).is_empty(), "nothing made");
}
