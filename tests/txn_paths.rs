//! The transaction plan looks every path up
//! in what earlier ops did before the disk (a deleted symlink is no longer
//! followed, a made directory is a directory), through the `apply_patch`
//! mode too (which a scenario folder cannot run: it needs the binary under
//! that name), and what an attacker tried against that view: `--root`,
//! symlinked directories, `..`, spellings of one path, moves that leave a
//! name a later op needs as a directory.

mod common;
use common::*;

use std::collections::BTreeMap;
use std::os::unix::fs::{symlink, MetadataExt};
use std::path::Path;
use std::process::Command;

/// Every entry under `dir`: relative path → (bytes, link target or
/// `<dir>`, and the inode).
fn tree(dir: &Path) -> BTreeMap<String, (Vec<u8>, u64)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let m = std::fs::symlink_metadata(&p).unwrap();
            let rel = p.strip_prefix(dir).unwrap().to_string_lossy().into_owned();
            let body = if m.file_type().is_symlink() {
                let t = std::fs::read_link(&p).unwrap();
                format!("-> {}", t.display()).into_bytes()
            } else if m.is_dir() {
                stack.push(p.clone());
                b"<dir>".to_vec()
            } else {
                std::fs::read(&p).unwrap()
            };
            out.insert(rel, (body, m.ino()));
        }
    }
    out
}

fn files(dir: &Path, args: &[&str], req: &str) -> Run {
    let mut c = Command::new(BIN);
    c.arg("--stdin").args(args);
    run_with_stdin(c, dir, req.as_bytes())
}

/// The binary as `apply_patch` in `dir/w`: (stdout, stderr, exit).
fn apply_patch(dir: &Path, patch: &str) -> (String, String, i32) {
    let link = dir.join("apply_patch");
    if !link.exists() {
        symlink(BIN, &link).unwrap();
    }
    let o = Command::new(&link)
        .arg(patch)
        .current_dir(dir.join("w"))
        .output()
        .unwrap();
    (
        String::from_utf8(o.stdout).unwrap(),
        String::from_utf8(o.stderr).unwrap(),
        o.status.code().unwrap(),
    )
}

/// `link -> a` (and `x`) in `d/w`; returns `d/w`.
fn linked(d: &Path) -> std::path::PathBuf {
    let w = d.join("w");
    std::fs::create_dir(&w).unwrap();
    write_file(&w, "a", b"A\n", 0o644);
    write_file(&w, "x", b"X\n", 0o644);
    symlink("a", w.join("link")).unwrap();
    w
}

const REFUSED: &str = "No files were modified (the patch applies all or nothing).\n";

/// Item 2 in the `apply_patch` mode: `Delete File: link` + `Add File:
/// link` replaces the link with a regular file and leaves `a` alone;
/// `Delete File: link` + `Update File: link` fails (the file is gone), as
/// Codex's binary does. They overwrote and edited `a`.
#[test]
fn apply_patch_mode_replaces_a_deleted_link_and_never_reaches_its_target() {
    let d = scratch();
    let w = linked(d.path());
    let a_ino = inode(&w.join("a"));
    let r = apply_patch(
        d.path(),
        "*** Begin Patch\n*** Delete File: link\n*** Add File: link\n+new\n*** End Patch\n",
    );
    assert_eq!(
        r,
        (
            "Success. Updated the following files:\nA link\nD link\n".into(),
            String::new(),
            0
        )
    );
    assert_unchanged(&w.join("a"), b"A\n", a_ino);
    assert!(!std::fs::symlink_metadata(w.join("link"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(std::fs::read(w.join("link")).unwrap(), b"new\n");

    let d = scratch();
    let w = linked(d.path());
    let before = tree(&w);
    let r = apply_patch(
        d.path(),
        "*** Begin Patch\n*** Delete File: link\n*** Update File: link\n@@\n-A\n+B\n*** End Patch\n",
    );
    let abs = w.canonicalize().unwrap().join("link");
    assert_eq!(
        r,
        (
            String::new(),
            format!(
                "file_not_found: file 2 of 2 (link): {} does not exist\n{REFUSED}",
                abs.display()
            ),
            1
        )
    );
    assert_eq!(tree(&w), before);
}

/// Item 7: in the `apply_patch` mode, Add File over a dangling symlink
/// writes through it (its target is made, the link stays), as Codex's
/// binary does; into a directory that does not exist it is refused
/// (Codex fails too), nothing made. It was `file_exists` with advice the
/// mode cannot follow. Delete File of the target then Add File of the
/// link is the same case, made by the patch: written through (Codex).
#[test]
fn apply_patch_mode_adds_through_a_dangling_symlink() {
    let d = scratch();
    let w = d.path().join("w");
    std::fs::create_dir(&w).unwrap();
    symlink("nowhere", w.join("link")).unwrap();
    let r = apply_patch(
        d.path(),
        "*** Begin Patch\n*** Add File: link\n+new\n*** End Patch\n",
    );
    assert_eq!(
        r,
        (
            "Success. Updated the following files:\nA link\n".into(),
            String::new(),
            0
        )
    );
    assert_eq!(
        std::fs::read_link(w.join("link")).unwrap(),
        Path::new("nowhere")
    );
    assert_eq!(std::fs::read(w.join("nowhere")).unwrap(), b"new\n");

    std::fs::remove_file(w.join("link")).unwrap();
    std::fs::remove_file(w.join("nowhere")).unwrap();
    symlink("nodir/x", w.join("link")).unwrap();
    let before = tree(&w);
    let r = apply_patch(
        d.path(),
        "*** Begin Patch\n*** Add File: link\n+new\n*** End Patch\n",
    );
    let abs = w.canonicalize().unwrap().join("link");
    assert_eq!(
        r,
        (
            String::new(),
            format!(
                "file_not_found: file 1 of 1 (link): {} is a dangling symlink\n{REFUSED}",
                abs.display()
            ),
            1
        )
    );
    assert_eq!(tree(&w), before);

    let d = scratch();
    let w = linked(d.path());
    let r = apply_patch(
        d.path(),
        "*** Begin Patch\n*** Delete File: a\n*** Add File: link\n+new\n*** End Patch\n",
    );
    assert_eq!(
        r,
        (
            "Success. Updated the following files:\nA link\nD a\n".into(),
            String::new(),
            0
        )
    );
    assert_eq!(std::fs::read_link(w.join("link")).unwrap(), Path::new("a"));
    assert_eq!(std::fs::read(w.join("a")).unwrap(), b"new\n");
}

/// Spellings of a deleted link's path (`./link`, `sub/../link`, an
/// absolute path) are the same vacated name, in the delete and in the
/// later op: none reaches `a`.
#[test]
fn every_spelling_of_a_deleted_link_is_missing() {
    for (del, later) in [
        ("./link", "link"),
        ("link", "./link"),
        ("link", "sub/../link"),
        ("sub/../link", "link"),
        ("link", "ABS/link"),
        ("sub/../link", "ABS/./sub/../link"),
    ] {
        let d = scratch();
        let w = linked(d.path());
        std::fs::create_dir(w.join("sub")).unwrap();
        let abs = w.canonicalize().unwrap();
        let later = later.replace("ABS", abs.to_str().unwrap());
        let before = tree(&w);
        let req = format!(
            r#"{{"files":[{{"op":"delete","path":"{del}"}},{{"op":"edit","path":"{later}","edits":[{{"old":"A","new":"B"}}]}}]}}"#
        );
        let r = files(&w, &[], &req);
        assert_result(
            &r,
            &format!(
                r#"{{"error":"file_not_found","detail":"file 2 of 2 ({later}): {}/link does not exist","file":2}}"#,
                abs.display()
            ),
            1,
        );
        assert_eq!(tree(&w), before, "{req}");
    }
}

/// A deleted symlinked directory is no directory any more: `..` through
/// it does not resolve (it reached the target's parent), a move into it
/// makes a real directory there, the old target is never touched.
#[test]
fn a_deleted_directory_link_is_neither_followed_nor_climbed() {
    let d = scratch();
    let w = d.path().join("w");
    std::fs::create_dir_all(w.join("far/d0")).unwrap();
    write_file(&w, "far/d0/c", b"C\n", 0o644);
    write_file(&w, "far/a", b"FAR\n", 0o644);
    write_file(&w, "x", b"X\n", 0o644);
    symlink("far/d0", w.join("ld")).unwrap();
    let before = tree(&w);
    let r = files(
        &w,
        &[],
        r#"{"files":[{"op":"delete","path":"ld"},{"op":"edit","path":"ld/../a","edits":[{"old":"FAR","new":"NEAR"}]}]}"#,
    );
    assert_result(
        &r,
        r#"{"error":"file_not_found","detail":"file 2 of 2 (ld/../a): ld/../a does not exist","file":2}"#,
        1,
    );
    assert_eq!(tree(&w), before);

    let far = tree(&w.join("far"));
    let r = files(
        &w,
        &[],
        r#"{"files":[{"op":"delete","path":"ld"},{"op":"move","path":"x","to":"ld/y"}]}"#,
    );
    assert_result(&r, r#"{"count":0,"files":3}"#, 0);
    assert_eq!(tree(&w.join("far")), far, "the old target is untouched");
    assert!(std::fs::symlink_metadata(w.join("ld")).unwrap().is_dir());
    assert_eq!(std::fs::read(w.join("ld/y")).unwrap(), b"X\n");
}

/// With `--root`: a symlinked directory pointing outside is outside_root
/// while it stands, and once deleted its name is a plain directory to
/// make inside the root; a dangling link pointing outside is outside_root
/// for every op (nothing outside is looked at or made).
#[test]
fn root_links_out_are_refused_until_deleted() {
    let d = scratch();
    let out = d.path().join("out");
    let r0 = d.path().join("r");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::create_dir_all(&r0).unwrap();
    symlink(&out, r0.join("lo")).unwrap();
    symlink(out.join("nothing"), r0.join("dang")).unwrap();
    let root = r0.canonicalize().unwrap();
    let before = tree(d.path());
    for (req, shown) in [
        (
            r#"{"files":[{"op":"create","path":"lo/x","content":"x"}]}"#,
            "lo/x",
        ),
        (
            r#"{"files":[{"op":"create","path":"dang","content":"x","overwrite":true}]}"#,
            "dang",
        ),
        (
            r#"{"files":[{"op":"edit","path":"dang","edits":[{"old":"a","new":"b"}]}]}"#,
            "dang",
        ),
        // The root's parent, spelled as a directory: outside first.
        (
            r#"{"files":[{"op":"create","path":"..","content":"x","overwrite":true}]}"#,
            "..",
        ),
        (
            r#"{"files":[{"op":"delete","path":"lo"},{"op":"create","path":"lo/../lo/x","content":"x"}]}"#,
            "lo/../lo/x",
        ),
    ] {
        let r = files(&r0, &["--root", "."], req);
        let n = if req.contains("delete") { 2 } else { 1 };
        assert_result(
            &r,
            &format!(
                r#"{{"error":"{}","detail":"file {n} of {n} ({shown}): {}","file":{n}}}"#,
                if n == 2 {
                    "file_not_found"
                } else {
                    "outside_root"
                },
                if n == 2 {
                    format!("{shown} does not exist")
                } else {
                    format!("{shown} resolves outside the root {}", root.display())
                }
            ),
            1,
        );
        assert_eq!(tree(d.path()), before, "{req}");
    }
    let r = files(
        &r0,
        &["--root", "."],
        r#"{"files":[{"op":"delete","path":"lo"},{"op":"create","path":"lo/x","content":"x"}]}"#,
    );
    assert_result(&r, r#"{"count":0,"files":2}"#, 0);
    assert_eq!(
        std::fs::read_dir(&out).unwrap().count(),
        0,
        "nothing outside"
    );
    assert_eq!(std::fs::read(r0.join("lo/x")).unwrap(), b"x");
}

/// A directory a later op needs where an earlier op moves a file away
/// is refused in the plan (the moved file may commit after the directory
/// is made: it failed in the commit); where the file was deleted, the
/// delete commits first and the directory is made.
#[test]
fn a_directory_in_place_of_a_moved_file_is_refused_in_the_plan() {
    let d = scratch();
    let w = d.path().join("w");
    std::fs::create_dir(&w).unwrap();
    write_file(&w, "a", b"A\n", 0o644);
    let before = tree(&w);
    let abs = w.canonicalize().unwrap();
    let r = files(
        &w,
        &[],
        r#"{"files":[{"op":"move","path":"a","to":"b"},{"op":"create","path":"a/x","content":"x"},{"op":"edit","path":"b","edits":[{"old":"A","new":"B"}]}]}"#,
    );
    assert_result(
        &r,
        &format!(
            r#"{{"error":"file_not_found","detail":"file 2 of 3 (a/x): a/x needs a directory {}/a where an earlier op moves a file away; send this op in another call","file":2}}"#,
            abs.display()
        ),
        1,
    );
    assert_eq!(tree(&w), before);
    let r = files(
        &w,
        &[],
        r#"{"files":[{"op":"delete","path":"a"},{"op":"create","path":"a/x","content":"x"}]}"#,
    );
    assert_result(&r, r#"{"count":0,"files":2}"#, 0);
    assert_eq!(std::fs::read(w.join("a/x")).unwrap(), b"x");
}

/// A symlink (on disk) to a file an earlier op creates reaches that file:
/// a path an earlier create made exists (it was `file_exists`: the link
/// dangled on disk). A symlink loop is refused as one, even for a create.
#[test]
fn a_link_to_a_created_file_reaches_it_and_a_loop_is_refused() {
    let d = scratch();
    let w = d.path().join("w");
    std::fs::create_dir(&w).unwrap();
    symlink("n", w.join("ln")).unwrap();
    let r = files(
        &w,
        &[],
        r#"{"files":[{"op":"create","path":"n","content":"one\n"},{"op":"edit","path":"ln","edits":[{"old":"one","new":"two"}]}]}"#,
    );
    assert_result(&r, r#"{"count":1,"files":1}"#, 0);
    assert_eq!(std::fs::read(w.join("n")).unwrap(), b"two\n");
    assert_eq!(std::fs::read_link(w.join("ln")).unwrap(), Path::new("n"));

    symlink("loop", w.join("loop")).unwrap();
    let before = tree(&w);
    for op in [
        r#"{"op":"create","path":"loop","content":"x","overwrite":true}"#,
        r#"{"op":"edit","path":"loop","edits":[{"old":"a","new":"b"}]}"#,
    ] {
        let r = files(&w, &[], &format!(r#"{{"files":[{op}]}}"#));
        assert_result(
            &r,
            r#"{"error":"file_not_found","detail":"file 1 of 1 (loop): loop: too many levels of symbolic links (a symlink loop)","file":1}"#,
            1,
        );
        assert_eq!(tree(&w), before, "{op}");
    }
}

/// Another writer replaced the first file while the plan was being made
/// and the freed inode's number came back at the second file's name: the
/// plan took the two names for hard links of one file and ran the second
/// op on the first file (refused here: "three" is not in it; with other
/// contents, an edit meant for one file lands in another). The same
/// inode at a new name is what a reused inode number looks like, so the
/// test makes it by a rename, at a pause after the first op's lookup
/// (AS_EDIT_TEST_PLAN_PAUSE, test builds). The plan is built again: each
/// name gets its own edit.
#[test]
fn a_file_replaced_while_planned_is_not_merged_with_another() {
    let d = scratch();
    let w = d.path().join("w");
    std::fs::create_dir(&w).unwrap();
    write_file(&w, "f1", b"one\n", 0o644);
    write_file(&w, "f3", b"three\n", 0o644);
    let req = r#"{"files":[{"op":"edit","path":"f1","edits":[{"old":"one","new":"ONE"}]},{"op":"edit","path":"f3","edits":[{"old":"three","new":"THREE"}]}]}"#;
    let r = paused(&w, "AS_EDIT_TEST_PLAN_PAUSE", req, || {
        // f1's inode (the one the plan recorded) now holds "three" at f3's
        // name; f1 is a new file.
        std::fs::write(w.join("f1"), b"three\n").unwrap();
        std::fs::rename(w.join("f1"), w.join("f3")).unwrap();
        write_file(&w, "f1", b"one\n", 0o644);
    });
    assert_result(&r, r#"{"count":2,"files":2}"#, 0);
    assert_eq!(std::fs::read(w.join("f1")).unwrap(), b"ONE\n");
    assert_eq!(std::fs::read(w.join("f3")).unwrap(), b"THREE\n");
}

/// Runs `req` in `dir`, held at the pause whose FIFO the test-build
/// variable `var` names (`AS_EDIT_TEST_PLAN_PAUSE`: after the plan's first
/// op; `AS_EDIT_TEST_TXN_PAUSE`: just before the commit), runs `meddle`
/// there (another writer), then lets it go on.
fn paused(dir: &Path, var: &str, req: &str, meddle: impl FnOnce()) -> Run {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let fifos = scratch();
    let fifo = fifos.path().join("pause");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a C string we own.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
    let mut child = Command::new(BIN)
        .arg("--stdin")
        .current_dir(dir)
        .env(var, &fifo)
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
    // FIFO open for reading: it is at the pause.
    let mut pause = loop {
        match std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&fifo)
        {
            Ok(p) => break p,
            Err(e) if e.raw_os_error() == Some(libc::ENXIO) => {
                assert!(
                    child.try_wait().unwrap().is_none(),
                    "ended before the pause"
                );
                std::thread::yield_now();
            }
            Err(e) => panic!("{e}"),
        }
    };
    meddle();
    pause.write_all(b"x").unwrap();
    drop(pause);
    child.wait_with_output().unwrap().into()
}

/// A symlink a delete removes is not locked (the link is not the file);
/// another writer that put a file at its name before the commit (there,
/// or while the plan was made, before a create of the same name) had it
/// removed unseen, exit 0: the commit renamed away whatever the name held.
/// Now the name must still hold that symlink (a file there may reuse its
/// freed inode number, as here on ext4): `conflict`, the file kept.
#[test]
fn a_file_put_where_a_deleted_symlink_was_is_not_removed() {
    let plan = r#"{"files":[{"op":"delete","path":"link"},{"op":"create","path":"link","content":"N\n"}]}"#;
    for (var, req, n) in [
        (
            "AS_EDIT_TEST_TXN_PAUSE",
            r#"{"files":[{"op":"delete","path":"link"}]}"#,
            1,
        ),
        ("AS_EDIT_TEST_TXN_PAUSE", plan, 2),
        ("AS_EDIT_TEST_PLAN_PAUSE", plan, 2),
    ] {
        let d = scratch();
        let w = linked(d.path());
        let r = paused(&w, var, req, || {
            std::fs::remove_file(w.join("link")).unwrap();
            write_file(&w, "link", b"PRECIOUS\n", 0o644);
        });
        let abs = w.canonicalize().unwrap();
        assert_result(
            &r,
            &format!(
                r#"{{"error":"conflict","detail":"file 1 of {n} (link): {}/link was changed by another writer while it was being edited; nothing was written","file":1}}"#,
                abs.display()
            ),
            1,
        );
        let t = tree(&w);
        let names: Vec<_> = t.keys().map(String::as_str).collect();
        assert_eq!(names, ["a", "link", "x"], "{var} {req}");
        assert_eq!(t["link"].0, b"PRECIOUS\n", "{var} {req}");
        assert_eq!(t["a"].0, b"A\n", "{var} {req}");
    }
}

/// A directory renamed away while the plan was made, its name given to a
/// new one: a later op's path, walked through the new directory, was
/// looked up in the old one (the plan kept one descriptor per directory
/// path), so `edit d0/e` edited `d0old/e`, a file that was never at
/// `d0/e`. Each op now acts in the directory its own walk went through;
/// the first op's file is the one it found (locked, its directory held).
#[test]
fn a_later_op_acts_in_the_directory_its_path_names_now() {
    let d = scratch();
    let w = d.path().join("w");
    std::fs::create_dir_all(w.join("d0")).unwrap();
    write_file(&w, "d0/c", b"C\n", 0o644);
    let req = r#"{"files":[{"op":"edit","path":"d0/c","edits":[{"old":"C","new":"Z"}]},{"op":"edit","path":"d0/e","edits":[{"old":"E","new":"Z"}]}]}"#;
    let r = paused(&w, "AS_EDIT_TEST_PLAN_PAUSE", req, || {
        std::fs::rename(w.join("d0"), w.join("d0old")).unwrap();
        std::fs::create_dir(w.join("d0")).unwrap();
        write_file(&w, "d0/e", b"E\n", 0o644);
        write_file(&w, "d0old/e", b"OLD-E\n", 0o644);
    });
    assert_result(&r, r#"{"count":2,"files":2}"#, 0);
    let t = tree(&w);
    let got: Vec<_> = t
        .iter()
        .map(|(k, v)| (k.as_str(), v.0.as_slice()))
        .collect();
    assert_eq!(
        got,
        [
            ("d0", &b"<dir>"[..]),
            ("d0/e", b"Z\n"),
            ("d0old", b"<dir>"),
            ("d0old/c", b"Z\n"),
            ("d0old/e", b"OLD-E\n"),
        ]
    );
}

/// No directory is made through a symlink that leads nowhere: one
/// dangling on disk (`ld2 -> missing`, it failed in the commit, rolled
/// back) or left dangling by an earlier delete (`ld3 -> ld`, `ld` deleted:
/// it made `d0/x` through the deleted link). Both are "is a dangling
/// symlink", nothing made; a symlink to a directory an earlier op makes
/// reaches it.
#[test]
fn no_directory_is_made_through_a_dangling_link() {
    let d = scratch();
    let w = d.path().join("w");
    std::fs::create_dir_all(w.join("d0")).unwrap();
    symlink("missing", w.join("ld2")).unwrap();
    symlink("d0", w.join("ld")).unwrap();
    symlink("ld", w.join("ld3")).unwrap();
    symlink("made", w.join("ld4")).unwrap();
    let abs = w.canonicalize().unwrap();
    let before = tree(&w);
    for (req, n, shown, link) in [
        (
            r#"{"files":[{"op":"create","path":"ld2/x","content":"x"}]}"#,
            1,
            "ld2/x",
            "ld2",
        ),
        (
            r#"{"files":[{"op":"delete","path":"ld"},{"op":"create","path":"ld3/x","content":"x"}]}"#,
            2,
            "ld3/x",
            "ld3",
        ),
    ] {
        let r = files(&w, &[], req);
        assert_result(
            &r,
            &format!(
                r#"{{"error":"file_not_found","detail":"file {n} of {n} ({shown}): {}/{link} is a dangling symlink","file":{n}}}"#,
                abs.display()
            ),
            1,
        );
        assert_eq!(tree(&w), before, "{req}");
    }
    let r = files(
        &w,
        &[],
        r#"{"files":[{"op":"create","path":"made/x","content":"x"},{"op":"create","path":"ld4/y","content":"y"}]}"#,
    );
    assert_result(&r, r#"{"count":0,"files":2}"#, 0);
    assert_eq!(std::fs::read(w.join("made/y")).unwrap(), b"y");
}

/// A directory's delete or move takes the names of the model under it
/// along: after `edit d/x` + `move d e`, a later `edit d/x`
/// edited `e/x` and a `create d/x` with `overwrite` rewrote `e/x` (exit
/// 0, no `d/x`); after `edit d/x` + a recursive delete of `d`, a later
/// `edit d/x` was reported done and a `create d/x` was `file_exists`;
/// `move y d/y` + `move d e` + `edit d/y` edited `e/y`. Now `d/x` is
/// missing (and a create makes it anew); a hard link of a file deleted
/// with the tree is refused as one of a deleted file; moved back, the
/// file is found again.
#[test]
fn names_under_a_deleted_or_moved_directory_go_with_it() {
    let edit = |p: &str, old: &str| {
        format!(r#"{{"op":"edit","path":"{p}","edits":[{{"old":"{old}","new":"Z"}}]}}"#)
    };
    let (ex, mv, rm) = (
        edit("d/x", "C"),
        r#"{"op":"move","path":"d","to":"e"}"#,
        r#"{"op":"delete","path":"d","recursive":true}"#,
    );
    let missing = |w: &Path, n: usize, p: &str| {
        let abs = w.canonicalize().unwrap().join(p);
        format!(
            r#"{{"error":"file_not_found","detail":"file {n} of {n} ({p}): {} does not exist","file":{n}}}"#,
            abs.display()
        )
    };
    for (ops, want) in [
        (vec![ex.clone(), mv.into(), edit("d/x", "Z")], None),
        (vec![ex.clone(), rm.into(), edit("d/x", "Z")], None),
        (
            vec![
                r#"{"op":"move","path":"y","to":"d/y"}"#.into(),
                mv.into(),
                edit("d/y", "Y"),
            ],
            Some("d/y"),
        ),
    ] {
        let d = scratch();
        let w = d.path().join("w");
        std::fs::create_dir_all(w.join("d")).unwrap();
        write_file(&w, "d/x", b"C\n", 0o644);
        write_file(&w, "y", b"Y\n", 0o644);
        let before = tree(&w);
        let r = files(&w, &[], &format!(r#"{{"files":[{}]}}"#, ops.join(",")));
        assert_result(&r, &missing(&w, 3, want.unwrap_or("d/x")), 1);
        assert_eq!(tree(&w), before, "{ops:?}");
    }

    // A create over the moved file's old name: refused as a create where
    // an earlier op moves a directory away (it rewrote e/x).
    let d = scratch();
    let w = d.path().join("w");
    std::fs::create_dir_all(w.join("d")).unwrap();
    write_file(&w, "d/x", b"C\n", 0o644);
    let before = tree(&w);
    let create = r#"{"op":"create","path":"d/x","content":"N\n","overwrite":true}"#;
    let r = files(&w, &[], &format!(r#"{{"files":[{ex},{mv},{create}]}}"#));
    let abs = w.canonicalize().unwrap();
    assert_result(
        &r,
        &format!(
            r#"{{"error":"file_not_found","detail":"file 3 of 3 (d/x): d/x needs a directory {}/d where an earlier op moves a file away; send this op in another call","file":3}}"#,
            abs.display()
        ),
        1,
    );
    assert_eq!(tree(&w), before);

    // After a recursive delete: the create makes d/x anew; a hard link of
    // the deleted d/x is refused; moved back, d/x is the edited file.
    let d = scratch();
    let w = d.path().join("w");
    std::fs::create_dir_all(w.join("d")).unwrap();
    write_file(&w, "d/x", b"C\n", 0o644);
    std::fs::hard_link(w.join("d/x"), w.join("h")).unwrap();
    let before = tree(&w);
    let r = files(
        &w,
        &[],
        &format!(
            r#"{{"files":[{ex},{rm},{},{}]}}"#,
            edit("h", "Z"),
            r#"{"op":"create","path":"d/x","content":"N\n"}"#
        ),
    );
    assert_result(
        &r,
        r#"{"error":"file_not_found","detail":"file 3 of 4 (h): h is a hard link of a file an earlier op removes; send this op in another call","file":3}"#,
        1,
    );
    assert_eq!(tree(&w), before);
    let r = files(
        &w,
        &[],
        &format!(
            r#"{{"files":[{ex},{rm},{}]}}"#,
            r#"{"op":"create","path":"d/x","content":"N\n"}"#
        ),
    );
    assert_result(&r, r#"{"count":1,"files":2}"#, 0);
    let t = tree(&w);
    assert_eq!(t["d/x"].0, b"N\n");
    assert_eq!((t["h"].0.as_slice(), t.len()), (&b"C\n"[..], 3));
    let back = r#"{"op":"move","path":"e","to":"d"}"#;
    let r = files(
        &w,
        &[],
        &format!(
            r#"{{"files":[{},{mv},{back},{}]}}"#,
            edit("d/x", "N"),
            edit("d/x", "Z")
        ),
    );
    assert_result(&r, r#"{"count":2,"files":1}"#, 0);
    assert_eq!(std::fs::read(w.join("d/x")).unwrap(), b"Z\n");
}
