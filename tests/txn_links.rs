//! A transaction's `move` of a symlink moves the entry named, the link
//! itself, as `mv` and rename(2) do: what it leads to keeps its bytes and
//! inode, in every mode (`--dry-run`, across file systems, a dangling
//! link); a directory never lands on a symlink.
//! Each case asserts the exact result line and the whole tree afterwards
//! (names, kinds, bytes or link targets, inodes), so a hidden name or a
//! temp left behind fails.

mod common;

use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{symlink, MetadataExt};
use std::path::Path;

use common::*;

/// One entry: relative path, kind, bytes or link target, inode.
type Entry = (String, &'static str, Vec<u8>, u64);

/// Every entry under `dir`, sorted.
fn tree(dir: &Path) -> Vec<Entry> {
    fn go(base: &Path, d: &Path, out: &mut Vec<Entry>) {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            let m = std::fs::symlink_metadata(&p).unwrap();
            let rel = p.strip_prefix(base).unwrap().display().to_string();
            let (kind, body) = if m.file_type().is_symlink() {
                let t = std::fs::read_link(&p).unwrap();
                ("link", t.as_os_str().as_bytes().to_vec())
            } else if m.is_dir() {
                go(base, &p, out);
                ("dir", Vec::new())
            } else {
                ("file", std::fs::read(&p).unwrap())
            };
            out.push((rel, kind, body, m.ino()));
        }
    }
    let mut v = Vec::new();
    go(dir, dir, &mut v);
    v.sort();
    v
}

/// `before` with the entry `from` (and everything under it) renamed `to`.
fn renamed(before: &[Entry], from: &str, to: &str) -> Vec<Entry> {
    let mut v: Vec<Entry> = before
        .iter()
        .map(|e| match e.0.strip_prefix(from) {
            Some(rest) if rest.is_empty() || rest.starts_with('/') => {
                (format!("{to}{rest}"), e.1, e.2.clone(), e.3)
            }
            _ => e.clone(),
        })
        .collect();
    v.sort();
    v
}

fn dir_s(p: &Path) -> String {
    p.canonicalize().unwrap().display().to_string()
}

/// A symlink to a directory: the link is renamed (its own inode kept),
/// the directory and what it holds untouched; `--dry-run` changes nothing.
#[test]
fn a_moved_symlink_to_a_directory_is_the_link() {
    let s = scratch();
    std::fs::create_dir(s.path().join("d")).unwrap();
    std::fs::write(s.path().join("d/f"), "f\n").unwrap();
    symlink("d", s.path().join("ld")).unwrap();
    let before = tree(s.path());
    let body = br#"{"op":"move","path":"ld","to":"moved"}"#;
    let r = run_stdin(s.path(), &["--stdin", "--dry-run"], body);
    assert_result(&r, r#"{"count":0,"files":2}"#, 0);
    assert_eq!(tree(s.path()), before);
    let r = run_stdin(s.path(), &["--stdin"], body);
    assert_result(&r, r#"{"count":0,"files":2}"#, 0);
    assert_eq!(tree(s.path()), renamed(&before, "ld", "moved"));
    assert_eq!(
        std::fs::read_link(s.path().join("moved")).unwrap(),
        Path::new("d")
    );
}

/// A symlink to a file, into directories the move makes: the link moves
/// with its target text as it is (here it then dangles, as after `mv`);
/// the file keeps its bytes and inode.
#[test]
fn a_moved_symlink_to_a_file_is_the_link() {
    let s = scratch();
    std::fs::write(s.path().join("a"), "a\n").unwrap();
    symlink("a", s.path().join("l")).unwrap();
    let before = tree(s.path());
    let r = run_stdin(
        s.path(),
        &["--stdin"],
        br#"{"op":"move","path":"l","to":"n/m/l2"}"#,
    );
    assert_result(&r, r#"{"count":0,"files":2}"#, 0);
    let mut want = renamed(&before, "l", "n/m/l2");
    let made = |p: &str| (p.to_string(), "dir", Vec::new(), inode(&s.path().join(p)));
    want.extend([made("n"), made("n/m")]);
    want.sort();
    assert_eq!(tree(s.path()), want);
}

/// A link's destination is the entry named, not followed: onto itself
/// nothing changes; onto another symlink it needs `overwrite` and then
/// replaces that link, never the file either leads to.
#[test]
fn a_symlink_lands_on_the_entry_named() {
    let s = scratch();
    std::fs::write(s.path().join("a"), "a\n").unwrap();
    std::fs::write(s.path().join("b"), "b\n").unwrap();
    symlink("a", s.path().join("l")).unwrap();
    symlink("b", s.path().join("m")).unwrap();
    let before = tree(s.path());
    for o in ["", r#","overwrite":true"#] {
        let body = format!(r#"{{"op":"move","path":"l","to":"l"{o}}}"#);
        let r = run_stdin(s.path(), &["--stdin"], body.as_bytes());
        assert_result(&r, r#"{"count":0,"files":0}"#, 0);
        assert_eq!(tree(s.path()), before);
    }
    let r = run_stdin(
        s.path(),
        &["--stdin"],
        br#"{"op":"move","path":"l","to":"m"}"#,
    );
    assert_result(
        &r,
        r#"{"error":"file_exists","detail":"file 1 of 1 (l): m exists; give \"overwrite\": true to replace it","file":1}"#,
        1,
    );
    assert_eq!(tree(s.path()), before);
    let r = run_stdin(
        s.path(),
        &["--stdin"],
        br#"{"op":"move","path":"l","to":"m","overwrite":true}"#,
    );
    assert_result(&r, r#"{"count":0,"files":2}"#, 0);
    let want = renamed(
        &before
            .into_iter()
            .filter(|e| e.0 != "m")
            .collect::<Vec<_>>(),
        "l",
        "m",
    );
    assert_eq!(tree(s.path()), want);
    assert_eq!(
        std::fs::read_link(s.path().join("m")).unwrap(),
        Path::new("a")
    );
}

/// `edits` or `expect_sha256` on a symlink's move: refused, saying how
/// to do both (an edit of the link, then the move), which works.
#[test]
fn a_symlinks_move_with_edits_is_refused_and_the_two_ops_do_it() {
    let s = scratch();
    std::fs::write(s.path().join("a"), "old\n").unwrap();
    symlink("a", s.path().join("l")).unwrap();
    let before = tree(s.path());
    let r = run_stdin(
        s.path(),
        &["--stdin"],
        br#"{"op":"move","path":"l","to":"l2","edits":[{"old":"old","new":"new"}]}"#,
    );
    assert_result(
        &r,
        r#"{"error":"invalid_argument","detail":"file 1 of 1 (l): l is a symlink: a move moves the link itself, and \"edits\" applies to a file; send an edit of the link (it edits the file the link leads to), then a move without \"edits\"","file":1}"#,
        2,
    );
    let sha = "0".repeat(64);
    let r = run_stdin(
        s.path(),
        &["--stdin"],
        format!(r#"{{"op":"move","path":"l","to":"l2","expect_sha256":"{sha}"}}"#).as_bytes(),
    );
    assert_result(
        &r,
        r#"{"error":"invalid_argument","detail":"file 1 of 1 (l): l is a symlink: a move moves the link itself, and \"expect_sha256\" applies to a file; send an edit of the link (it edits the file the link leads to), then a move without \"expect_sha256\"","file":1}"#,
        2,
    );
    assert_eq!(tree(s.path()), before);
    let r = run_stdin(
        s.path(),
        &["--stdin"],
        br#"{"files":[{"op":"edit","path":"l","edits":[{"old":"old","new":"new"}]},{"op":"move","path":"l","to":"l2"}]}"#,
    );
    assert_result(&r, r#"{"count":1,"files":3}"#, 0);
    assert_eq!(std::fs::read(s.path().join("a")).unwrap(), b"new\n");
    assert_eq!(
        std::fs::read_link(s.path().join("l2")).unwrap(),
        Path::new("a")
    );
    assert!(std::fs::symlink_metadata(s.path().join("l")).is_err());
}

/// After a link's move, an edit by its new name (or a path through it)
/// is refused, naming what to do; nothing is changed.
#[test]
fn a_moved_link_is_not_edited_through_in_the_same_call() {
    let s = scratch();
    std::fs::create_dir(s.path().join("d")).unwrap();
    std::fs::write(s.path().join("d/f"), "old\n").unwrap();
    symlink("d/f", s.path().join("l")).unwrap();
    symlink("d", s.path().join("ld")).unwrap();
    let before = tree(s.path());
    let p = dir_s(s.path());
    let r = run_stdin(
        s.path(),
        &["--stdin"],
        br#"{"files":[{"op":"move","path":"l","to":"l2"},{"op":"edit","path":"l2","edits":[{"old":"old","new":"new"}]}]}"#,
    );
    assert_result(
        &r,
        &format!(
            r#"{{"error":"file_not_found","detail":"file 2 of 2 (l2): {p}/l2 is a symlink an earlier op moves or names as itself: edit the file it leads to by that file's path, or in another call","file":2}}"#
        ),
        1,
    );
    let r = run_stdin(
        s.path(),
        &["--stdin"],
        br#"{"files":[{"op":"move","path":"ld","to":"ld2"},{"op":"edit","path":"ld2/f","edits":[{"old":"old","new":"new"}]}]}"#,
    );
    assert_result(
        &r,
        r#"{"error":"file_not_found","detail":"file 2 of 2 (ld2/f): ld2/f: a directory on the path is one this transaction moves there; name what is under it by its old path, before the move (or in another call)","file":2}"#,
        1,
    );
    assert_eq!(tree(s.path()), before);
}

/// Across file systems (EXDEV) the link is made again there with the same
/// target text, never its target copied: onto a free name, and with
/// `overwrite` over a file (replaced); a failure at any commit step rolls
/// back to the trees as they were, no temp or hidden name left.
#[test]
fn a_symlink_moved_across_file_systems_is_made_again_not_copied() {
    let s = scratch();
    let mnt = s.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    if !tmpfs(&mnt) {
        return skip("needs root and mount -t tmpfs");
    }
    let t = s.path().join("target");
    std::fs::write(&t, "t\n").unwrap();
    symlink(&t, s.path().join("l")).unwrap();
    symlink(&t, s.path().join("l2")).unwrap();
    std::fs::write(mnt.join("taken"), "taken\n").unwrap();
    let before = (tree(s.path()), tree(&mnt));
    let cases: [(&[u8], &str, &str); 2] = [
        (br#"{"op":"move","path":"l","to":"mnt/new"}"#, "l", "new"),
        (
            br#"{"op":"move","path":"l2","to":"mnt/taken","overwrite":true}"#,
            "l2",
            "taken",
        ),
    ];
    let mut ran = 0;
    for (body, from, to) in cases {
        // Each commit step failing in turn: rolled back, nothing left.
        let b = (tree(s.path()), tree(&mnt));
        for k in 1..=8 {
            let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_as-edit"));
            c.arg("--stdin").env("AS_EDIT_TEST_TXN_FAIL", k.to_string());
            let r = run_with_stdin(c, s.path(), body);
            if r.code == 0 {
                break; // fewer steps than k: committed
            }
            assert!(
                r.stdout.contains(r#""rolled_back":true"#),
                "step {k}: {}",
                r.stdout
            );
            assert_eq!((tree(s.path()), tree(&mnt)), b, "step {k}");
            ran += 1;
        }
        let link = |d: &Path, n: &str| std::fs::read_link(d.join(n)).unwrap();
        // Committed by the last round (its step k beyond the last) or now.
        if std::fs::symlink_metadata(s.path().join(from)).is_ok() {
            let r = run_stdin(s.path(), &["--stdin"], body);
            assert_result(&r, r#"{"count":0,"files":2}"#, 0);
        }
        assert_eq!(link(&mnt, to), t);
        assert!(std::fs::symlink_metadata(s.path().join(from)).is_err());
    }
    let after = (tree(s.path()), tree(&mnt));
    umount(&mnt);
    assert!(ran >= 4, "the failure rounds ran ({ran})");
    // The target untouched (bytes, inode); the links made anew there.
    let kept = |v: &[Entry]| {
        let v = v
            .iter()
            .filter(|e| !e.0.starts_with("mnt/") && e.0 != "l" && e.0 != "l2");
        v.cloned().collect::<Vec<_>>()
    };
    assert_eq!(kept(&after.0), kept(&before.0));
    assert_eq!(before.1.len(), 1, "{:?}", before.1);
    let names: Vec<_> = after.1.iter().map(|e| (e.0.as_str(), e.1)).collect();
    assert_eq!(names, [("new", "link"), ("taken", "link")]);
}

/// A directory never lands on a symlink: a dangling one is an entry (it
/// was renamed to the link's target name with `overwrite`), with or
/// without `overwrite`, and the refusal does not advise it; a directory
/// onto a file without `overwrite` says the same (it advised it).
#[test]
fn a_directory_never_moves_onto_a_symlink_or_a_file() {
    let s = scratch();
    std::fs::create_dir(s.path().join("d")).unwrap();
    std::fs::write(s.path().join("d/f"), "f\n").unwrap();
    symlink("nowhere", s.path().join("dang")).unwrap();
    std::fs::write(s.path().join("file"), "x\n").unwrap();
    let before = tree(s.path());
    let over =
        "a move never replaces a directory, moves into one, or moves a directory over anything";
    for o in ["", r#","overwrite":true"#, r#","overwrite":false"#] {
        let r = run_stdin(
            s.path(),
            &["--stdin"],
            format!(r#"{{"op":"move","path":"d","to":"dang"{o}}}"#).as_bytes(),
        );
        assert_result(
            &r,
            &format!(
                r#"{{"error":"file_exists","detail":"file 1 of 1 (d): dang is a symlink: {over}","file":1}}"#
            ),
            1,
        );
        let r = run_stdin(
            s.path(),
            &["--stdin"],
            format!(r#"{{"op":"move","path":"d","to":"file"{o}}}"#).as_bytes(),
        );
        assert_result(
            &r,
            &format!(
                r#"{{"error":"file_exists","detail":"file 1 of 1 (d): file exists and the source is a directory: {over}","file":1}}"#
            ),
            1,
        );
        assert_eq!(tree(s.path()), before);
    }
}

/// A symlink moved over the file it leads to (directly, through another
/// link, or by a path that differs from its text): `mv` refuses ("are
/// the same file"); rename(2) would leave the link leading to itself and
/// the file's bytes gone. Refused with or without `overwrite`, in every
/// mode, the file and the links untouched; a hard link of that file is
/// the same file too.
#[test]
fn a_symlink_never_replaces_the_file_it_leads_to() {
    let s = scratch();
    std::fs::create_dir(s.path().join("s")).unwrap();
    std::fs::write(s.path().join("s/a"), "a\n").unwrap();
    std::fs::hard_link(s.path().join("s/a"), s.path().join("h")).unwrap();
    symlink("s/a", s.path().join("l")).unwrap();
    symlink("l", s.path().join("l2")).unwrap();
    let before = tree(s.path());
    for (from, to) in [("l", "s/a"), ("l2", "s/a"), ("l", "h"), ("l2", "h")] {
        for o in ["", r#","overwrite":true"#] {
            for mode in [&["--stdin"][..], &["--stdin", "--dry-run"]] {
                let body = format!(
                    r#"{{"files":[{{"op":"edit","path":"{to}","edits":[{{"old":"a","new":"b"}}]}},{{"op":"move","path":"{from}","to":"{to}"{o}}}]}}"#
                );
                let r = run_stdin(s.path(), mode, body.as_bytes());
                let want = format!(
                    r#"{{"error":"invalid_argument","detail":"file 2 of 2 ({from}): {to} is the file the symlink {from} leads to: a move of the link over it would replace that file by the link (mv refuses: the same file); nothing was changed, name another destination","file":2}}"#
                );
                assert_result(&r, &want, 2);
                assert_eq!(tree(s.path()), before, "{from} onto {to}{o} {mode:?}");
            }
        }
    }
}

/// A directory moved onto a symlink that leads to it (or to another
/// directory, or to a file) is refused as onto any symlink: rename(2)
/// and `mv` refuse a directory over a non-directory; following the link
/// answered success for a move that moved nothing.
#[test]
fn a_directory_onto_a_symlink_leading_anywhere_is_refused() {
    let s = scratch();
    std::fs::create_dir(s.path().join("d")).unwrap();
    std::fs::create_dir(s.path().join("e")).unwrap();
    std::fs::write(s.path().join("d/f"), "f\n").unwrap();
    std::fs::write(s.path().join("a"), "a\n").unwrap();
    symlink("d", s.path().join("ld")).unwrap();
    symlink("e", s.path().join("le")).unwrap();
    symlink("a", s.path().join("la")).unwrap();
    let before = tree(s.path());
    let over =
        "a move never replaces a directory, moves into one, or moves a directory over anything";
    for to in ["ld", "le", "la"] {
        for o in ["", r#","overwrite":true"#] {
            for mode in [&["--stdin"][..], &["--stdin", "--dry-run"]] {
                let body = format!(r#"{{"op":"move","path":"d","to":"{to}"{o}}}"#);
                let r = run_stdin(s.path(), mode, body.as_bytes());
                let want = format!(
                    r#"{{"error":"file_exists","detail":"file 1 of 1 (d): {to} is a symlink: {over}","file":1}}"#
                );
                assert_result(&r, &want, 1);
                assert_eq!(tree(s.path()), before, "d onto {to}{o} {mode:?}");
            }
        }
    }
}

/// The same check where an earlier op moved the link: its text is read
/// from where it is then (as `mv` run op by op stats it there), so a
/// link `a` moved into `s` and then over `s/a` is refused too.
#[test]
fn a_symlink_moved_twice_never_replaces_the_file_it_then_leads_to() {
    let s = scratch();
    std::fs::create_dir(s.path().join("s")).unwrap();
    std::fs::write(s.path().join("a"), "a\n").unwrap();
    std::fs::write(s.path().join("s/a"), "s/a\n").unwrap();
    symlink("a", s.path().join("l")).unwrap();
    let before = tree(s.path());
    let body = br#"{"files":[{"op":"move","path":"l","to":"s/m"},{"op":"move","path":"s/m","to":"s/a","overwrite":true}]}"#;
    let r = run_stdin(s.path(), &["--stdin"], body);
    assert_result(
        &r,
        r#"{"error":"invalid_argument","detail":"file 2 of 2 (s/m): s/a is the file the symlink s/m leads to: a move of the link over it would replace that file by the link (mv refuses: the same file); nothing was changed, name another destination","file":2}"#,
        2,
    );
    assert_eq!(tree(s.path()), before);
}
