//! The directory writes of a transaction — `delete` with
//! `recursive`, `move` of a directory, `mkdir`, and `create`'s exclusive
//! mode under a race. Each case asserts the exact result line and the
//! whole tree afterwards (names, kinds, bytes, modes, inodes), so a
//! hidden name or temp left behind fails.

mod common;

use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

use common::*;

/// One entry: relative path, kind, bytes or link target, mode, inode.
type Entry = (Vec<u8>, String, Vec<u8>, u32, u64);

/// Every entry under `dir`: relative path, kind, bytes or link target,
/// mode and inode, sorted.
fn tree(dir: &Path) -> Vec<Entry> {
    fn go(base: &Path, d: &Path, out: &mut Vec<Entry>) {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            let m = std::fs::symlink_metadata(&p).unwrap();
            let rel = p
                .strip_prefix(base)
                .unwrap()
                .as_os_str()
                .as_bytes()
                .to_vec();
            let (kind, body) = if m.file_type().is_symlink() {
                let t = std::fs::read_link(&p).unwrap();
                ("link", t.as_os_str().as_bytes().to_vec())
            } else if m.is_dir() {
                go(base, &p, out);
                ("dir", Vec::new())
            } else {
                ("file", std::fs::read(&p).unwrap())
            };
            out.push((rel, kind.into(), body, m.mode() & 0o7777, m.ino()));
        }
    }
    let mut v = Vec::new();
    go(dir, dir, &mut v);
    v.sort();
    v
}

fn names(dir: &Path) -> Vec<String> {
    tree(dir)
        .into_iter()
        .map(|e| String::from_utf8_lossy(&e.0).into_owned())
        .collect()
}

/// A tree `d` with awkward names, a symlink inside to a directory outside
/// it (`out`, which must survive), and a read-only subdirectory.
fn populate(root: &Path) {
    let d = root.join("d");
    std::fs::create_dir_all(d.join("sub dir/deep:er")).unwrap();
    std::fs::write(d.join("a b:c"), "1\n").unwrap();
    std::fs::write(d.join("new\nline"), "2\n").unwrap();
    std::fs::write(d.join("-lead"), "3\n").unwrap();
    std::fs::write(d.join("sub dir/deep:er/f"), "4\n").unwrap();
    std::fs::create_dir(root.join("out")).unwrap();
    std::fs::write(root.join("out/keep"), "keep\n").unwrap();
    std::os::unix::fs::symlink("../../out", d.join("sub dir/to-out")).unwrap();
    std::fs::create_dir(d.join("ro")).unwrap();
    std::fs::write(d.join("ro/x"), "5\n").unwrap();
    std::fs::set_permissions(d.join("ro"), std::fs::Permissions::from_mode(0o555)).unwrap();
}

fn req(body: &str) -> Vec<u8> {
    body.as_bytes().to_vec()
}

#[test]
fn a_recursive_delete_removes_the_tree_and_never_follows_a_link() {
    let s = scratch();
    populate(s.path());
    std::os::unix::fs::symlink("out", s.path().join("lo")).unwrap();
    let r = run_stdin(
        s.path(),
        &["--stdin"],
        &req(r#"{"op":"delete","path":"d","recursive":true}"#),
    );
    assert_result(&r, r#"{"count":0,"files":1}"#, 0);
    // A symlink given as the path is removed itself.
    let r = run_stdin(
        s.path(),
        &["--stdin"],
        &req(r#"{"op":"delete","path":"lo","recursive":true}"#),
    );
    assert_result(&r, r#"{"count":0,"files":1}"#, 0);
    assert_eq!(names(s.path()), ["out", "out/keep"]);
}

#[test]
fn a_directory_without_recursive_and_protected_directories_are_refused() {
    let s = scratch();
    populate(s.path());
    let before = tree(s.path());
    let d = s.path().canonicalize().unwrap();
    let p = d.display();
    let cases: [(&[&str], &str, String, i32); 5] = [
        (&["--stdin"], r#"{"op":"delete","path":"d"}"#, format!(r#"{{"error":"file_not_found","detail":"file 1 of 1 (d): {p}/d is a directory, not a regular file","file":1}}"#), 1),
        (&["--stdin"], r#"{"op":"delete","path":".","recursive":true}"#, format!(r#"{{"error":"invalid_argument","detail":"file 1 of 1 (.): {p} is the working directory or one of its ancestors: it is never deleted or moved","file":1}}"#), 2),
        (&["--stdin"], r#"{"op":"delete","path":"..","recursive":true}"#, format!(r#"{{"error":"invalid_argument","detail":"file 1 of 1 (..): {} is the working directory or one of its ancestors: it is never deleted or moved","file":1}}"#, d.parent().unwrap().display()), 2),
        (&["--stdin"], r#"{"op":"delete","path":"/","recursive":true}"#, r#"{"error":"invalid_argument","detail":"file 1 of 1 (/): / is /: it is never deleted or moved","file":1}"#.to_string(), 2),
        (&["--root", "d", "--stdin"], r#"{"op":"delete","path":"d","recursive":true}"#, format!(r#"{{"error":"invalid_argument","detail":"file 1 of 1 (d): {p}/d is --root: it is never deleted or moved","file":1}}"#), 2),
    ];
    for (args, body, line, code) in cases {
        let r = run_stdin(s.path(), args, &req(body));
        assert_result(&r, &line, code);
        assert_eq!(tree(s.path()), before, "{body}");
    }
}

/// Every commit step of a transaction making, deleting and moving
/// directories fails in turn (`AS_EDIT_TEST_TXN_FAIL=k`): each failure
/// leaves the tree exactly as it was, with no hidden name behind.
#[test]
fn every_failed_commit_step_leaves_the_directories_as_they_were() {
    let s = scratch();
    populate(s.path());
    std::fs::create_dir_all(s.path().join("mv/in")).unwrap();
    std::fs::write(s.path().join("mv/in/f"), "m\n").unwrap();
    let body = r#"{"files":[{"op":"mkdir","path":"new/a/b","parents":true},{"op":"create","path":"new/a/b/f","content":"x"},{"op":"delete","path":"d","recursive":true},{"op":"move","path":"mv","to":"far/away/mv"},{"op":"mkdir","path":"d"}]}"#;
    let before = tree(s.path());
    let mut k = 1;
    loop {
        let mut c = std::process::Command::new(BIN);
        c.arg("--stdin").env("AS_EDIT_TEST_TXN_FAIL", k.to_string());
        let r = run_with_stdin(c, s.path(), body.as_bytes());
        if r.code == 0 {
            assert_result(&r, r#"{"count":0,"files":5}"#, 0);
            break;
        }
        assert!(
            r.stdout.contains(r#""rolled_back":true"#),
            "step {k}: {}",
            r.stdout
        );
        assert_eq!(tree(s.path()), before, "step {k}");
        k += 1;
        assert!(k < 40, "the commit ends");
    }
    assert!(k > 6, "every step was failed once ({k})");
    assert_eq!(
        names(s.path()),
        [
            "d",
            "far",
            "far/away",
            "far/away/mv",
            "far/away/mv/in",
            "far/away/mv/in/f",
            "new",
            "new/a",
            "new/a/b",
            "new/a/b/f",
            "out",
            "out/keep"
        ]
    );
}

/// A tree whose removal fails after the commit: the answer names the
/// hidden directory left, which holds the whole tree.
#[test]
fn a_tree_whose_removal_fails_is_named_in_left() {
    let s = scratch();
    std::fs::create_dir_all(s.path().join("d/e")).unwrap();
    let mut c = std::process::Command::new(BIN);
    c.arg("--stdin").env("AS_EDIT_TEST_TREE_FAIL", "1");
    let r = run_with_stdin(
        c,
        s.path(),
        br#"{"op":"delete","path":"d","recursive":true}"#,
    );
    let n = listing(s.path());
    assert_eq!(n.len(), 1);
    assert!(
        n[0].starts_with(".as-edit-") && n[0].ends_with(".tmp"),
        "{n:?}"
    );
    let p = s.path().canonicalize().unwrap().join(&n[0]);
    assert_result(
        &r,
        &format!(r#"{{"count":0,"files":1,"left":["{}"]}}"#, p.display()),
        0,
    );
    assert_eq!(listing(&p), ["e"]);
}

/// The same in a directory whose name is not UTF-8: `left_b64`, the
/// hidden directory's path as base64 (its lossy text names another).
#[test]
fn a_tree_left_under_a_non_utf8_name_is_named_in_left_b64() {
    use base64::Engine as _;
    use std::os::unix::ffi::OsStrExt;
    let s = scratch();
    let odd = s.path().join(std::ffi::OsStr::from_bytes(b"\xfe"));
    std::fs::create_dir_all(odd.join("d/e")).unwrap();
    let mut c = std::process::Command::new(BIN);
    c.arg("--stdin").env("AS_EDIT_TEST_TREE_FAIL", "1");
    let b = base64::engine::general_purpose::STANDARD;
    let req = format!(
        r#"{{"op":"delete","path_b64":"{}","recursive":true}}"#,
        b.encode(b"\xfe/d")
    );
    let r = run_with_stdin(c, s.path(), req.as_bytes());
    let n = listing(&odd);
    assert_eq!(n.len(), 1);
    assert!(n[0].starts_with(".as-edit-"), "{n:?}");
    let p = odd.canonicalize().unwrap().join(&n[0]);
    assert_result(
        &r,
        &format!(
            r#"{{"count":0,"files":1,"left_b64":["{}"]}}"#,
            b.encode(p.as_os_str().as_bytes())
        ),
        0,
    );
    assert_eq!(listing(&p), ["e"]);
}

#[test]
fn mkdir_makes_exactly_the_directory_or_with_parents_all_of_them() {
    let s = scratch();
    std::fs::write(s.path().join("f"), "").unwrap();
    let p = s.path().canonicalize().unwrap();
    let p = p.display();
    let cases = [
        (r#"{"op":"mkdir","path":"a/b"}"#, format!(r#"{{"error":"file_not_found","detail":"file 1 of 1 (a/b): {p}/a does not exist","file":1}}"#), 1),
        (r#"{"op":"mkdir","path":"a"}"#, r#"{"count":0,"files":1}"#.into(), 0),
        (r#"{"op":"mkdir","path":"a"}"#, r#"{"error":"file_exists","detail":"file 1 of 1 (a): a exists (\"parents\": true accepts an existing directory)","file":1}"#.into(), 1),
        (r#"{"op":"mkdir","path":"a","parents":true}"#, r#"{"count":0,"files":0}"#.into(), 0),
        (r#"{"op":"mkdir","path":"f","parents":true}"#, r#"{"error":"file_exists","detail":"file 1 of 1 (f): f exists (\"parents\": true accepts an existing directory)","file":1}"#.into(), 1),
        (r#"{"op":"mkdir","path":"a/x/y/","parents":true}"#, r#"{"count":0,"files":1}"#.into(), 0),
    ];
    for (body, line, code) in cases {
        let r = run_stdin(s.path(), &["--stdin"], &req(body));
        assert_result(&r, &line, code);
    }
    assert_eq!(names(s.path()), ["a", "a/x", "a/x/y", "f"]);
    // 0777 less the umask (the test harness's, whatever it is).
    let mask = rustix::process::umask(rustix::fs::Mode::empty());
    rustix::process::umask(mask);
    for d in ["a", "a/x", "a/x/y"] {
        assert_eq!(mode(&s.path().join(d)), 0o777 & !mask.bits(), "{d}");
    }
}

/// `mkdir -p a/b/../c` makes `a`, `a/b` and `a/c` as mkdir(1) does (it
/// was `file_not_found`); `a/b/../../c` makes `c` too; without `parents`
/// a missing `a/b` is still `file_not_found`; a `..` out of `--root` is
/// `outside_root` with nothing made.
#[test]
fn mkdir_parents_goes_through_dotdot_as_mkdir_p() {
    let s = scratch();
    let p = s.path().canonicalize().unwrap().display().to_string();
    let r = run_stdin(
        s.path(),
        &["--stdin"],
        &req(r#"{"op":"mkdir","path":"a/b/../c","parents":true}"#),
    );
    assert_result(&r, r#"{"count":0,"files":1}"#, 0);
    assert_eq!(names(s.path()), ["a", "a/b", "a/c"]);
    let mask = rustix::process::umask(rustix::fs::Mode::empty());
    rustix::process::umask(mask);
    for d in ["a", "a/b", "a/c"] {
        assert_eq!(mode(&s.path().join(d)), 0o777 & !mask.bits(), "{d}");
    }
    let r = run_stdin(
        s.path(),
        &["--stdin"],
        &req(
            r#"{"files":[{"op":"mkdir","path":"x/y/../../z/w","parents":true},{"op":"mkdir","path":"x/y/q"}]}"#,
        ),
    );
    assert_result(&r, r#"{"count":0,"files":2}"#, 0);
    assert_eq!(
        names(s.path()),
        ["a", "a/b", "a/c", "x", "x/y", "x/y/q", "z", "z/w"]
    );
    // Ending on the directory: `e/f/..` is `e` once `e/f` is made, `g/h/.`
    // is `g/h` (both were file_not_found, "a dangling symlink").
    let r = run_stdin(
        s.path(),
        &["--stdin"],
        &req(
            r#"{"files":[{"op":"mkdir","path":"e/f/..","parents":true},{"op":"mkdir","path":"g/h/.","parents":true}]}"#,
        ),
    );
    assert_result(&r, r#"{"count":0,"files":2}"#, 0);
    assert_eq!(
        names(s.path()),
        ["a", "a/b", "a/c", "e", "e/f", "g", "g/h", "x", "x/y", "x/y/q", "z", "z/w"]
    );
    let before = tree(s.path());
    let r = run_stdin(
        s.path(),
        &["--stdin"],
        &req(r#"{"op":"mkdir","path":"m/."}"#),
    );
    assert_result(
        &r,
        r#"{"error":"file_not_found","detail":"file 1 of 1 (m/.): m/. does not exist","file":1}"#,
        1,
    );
    let r = run_stdin(
        s.path(),
        &["--stdin"],
        &req(r#"{"op":"mkdir","path":"m/n/../o"}"#),
    );
    assert_result(
        &r,
        r#"{"error":"file_not_found","detail":"file 1 of 1 (m/n/../o): m/n/../o does not exist","file":1}"#,
        1,
    );
    let root = format!("--root={p}/a");
    let r = run_stdin(
        &s.path().join("a"),
        &["--stdin", &root],
        &req(r#"{"op":"mkdir","path":"k/../../out","parents":true}"#),
    );
    assert_result(
        &r,
        &format!(
            r#"{{"error":"outside_root","detail":"file 1 of 1 (k/../../out): k/../../out resolves outside the root {p}/a","file":1}}"#
        ),
        1,
    );
    assert_eq!(tree(s.path()), before);
}

#[test]
fn a_directory_moves_whole_but_never_into_itself_nor_over_a_directory() {
    let s = scratch();
    std::fs::create_dir_all(s.path().join("m/n")).unwrap();
    std::fs::write(s.path().join("m/n/f"), "f\n").unwrap();
    std::fs::create_dir(s.path().join("e")).unwrap();
    let p = s.path().canonicalize().unwrap();
    let before = tree(s.path());
    let cases = [
        (r#"{"op":"move","path":"m","to":"m/n/z"}"#, format!(r#"{{"error":"invalid_argument","detail":"file 1 of 1 (m): cannot move the directory {0}/m into itself ({0}/m/n/z)","file":1}}"#, p.display()), 2),
        (r#"{"op":"move","path":"m","to":"e"}"#, r#"{"error":"file_exists","detail":"file 1 of 1 (m): e is a directory: a move never replaces a directory, moves into one, or moves a directory over anything","file":1}"#.into(), 1),
        (r#"{"op":"move","path":"m","to":"e","overwrite":true}"#, r#"{"error":"file_exists","detail":"file 1 of 1 (m): e is a directory: a move never replaces a directory, moves into one, or moves a directory over anything","file":1}"#.into(), 1),
    ];
    for (body, line, code) in cases {
        let r = run_stdin(s.path(), &["--stdin"], &req(body));
        assert_result(&r, &line, code);
        assert_eq!(tree(s.path()), before, "{body}");
    }
    let ino = inode(&s.path().join("m/n/f"));
    let r = run_stdin(
        s.path(),
        &["--stdin"],
        &req(r#"{"op":"move","path":"m","to":"p/q"}"#),
    );
    assert_result(&r, r#"{"count":0,"files":2}"#, 0);
    assert_eq!(names(s.path()), ["e", "p", "p/q", "p/q/n", "p/q/n/f"]);
    assert_eq!(inode(&s.path().join("p/q/n/f")), ino, "renamed, not copied");
}

/// A read-only subdirectory: root removes the tree; another user is
/// refused before anything is removed.
#[test]
fn a_read_only_subdirectory_refuses_another_user_before_anything_goes() {
    if !setpriv_available() {
        return skip("needs root and setpriv");
    }
    let s = scratch();
    std::fs::set_permissions(s.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    populate(s.path());
    rustix::fs::chown(
        s.path().join("d"),
        Some(rustix::process::Uid::from_raw(65534)),
        None,
    )
    .unwrap();
    for sub in ["sub dir", "sub dir/deep:er"] {
        std::fs::set_permissions(
            s.path().join("d").join(sub),
            std::fs::Permissions::from_mode(0o777),
        )
        .unwrap();
    }
    std::fs::set_permissions(s.path().join("d"), std::fs::Permissions::from_mode(0o777)).unwrap();
    let before = tree(s.path());
    let b64 = b64(r#"{"op":"delete","path":"d","recursive":true}"#);
    let r = run_as_nobody(s.path(), &[b"--request-b64", b64.as_bytes()]);
    let p = s.path().canonicalize().unwrap();
    assert_result(
        &r,
        &format!(
            r#"{{"error":"permission_denied","detail":"file 1 of 1 (d): {}/d/ro does not let its entries be removed (no write or search permission): nothing was deleted","file":1}}"#,
            p.display()
        ),
        1,
    );
    assert_eq!(tree(s.path()), before);
    let r = run_stdin(
        s.path(),
        &["--stdin"],
        &req(r#"{"op":"delete","path":"d","recursive":true}"#),
    );
    assert_result(&r, r#"{"count":0,"files":1}"#, 0);
    assert_eq!(names(s.path()), ["out", "out/keep"]);
}

/// `--root`: a tree reached through a symlink leaving the root is refused;
/// the symlink itself is removed as a link.
#[test]
fn a_tree_through_a_symlink_leaving_the_root_is_refused() {
    let s = scratch();
    populate(s.path());
    std::fs::create_dir(s.path().join("r")).unwrap();
    std::os::unix::fs::symlink("../d", s.path().join("r/esc")).unwrap();
    let before = tree(s.path());
    let r = run_stdin(
        s.path(),
        &["--root", "r", "--stdin"],
        &req(r#"{"op":"delete","path":"r/esc/sub dir","recursive":true}"#),
    );
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(
        r.stdout.starts_with(r#"__RESULT__{"error":"outside_root""#),
        "{}",
        r.stdout
    );
    assert_eq!(tree(s.path()), before);
    let r = run_stdin(
        s.path(),
        &["--root", "r", "--stdin"],
        &req(r#"{"op":"delete","path":"r/esc","recursive":true}"#),
    );
    assert_result(&r, r#"{"count":0,"files":1}"#, 0);
    assert!(s.path().join("d/-lead").exists());
    assert_eq!(listing(&s.path().join("r")), Vec::<String>::new());
}

/// A name that is not UTF-8, as `path_b64`: made, then deleted with its tree.
#[test]
fn a_non_utf8_directory_by_path_b64() {
    let s = scratch();
    let name = b"caf\xe9";
    let p64 = "Y2Fm6Q==";
    let r = run_stdin(s.path(), &["--stdin"], format!(r#"{{"files":[{{"op":"mkdir","path_b64":"{p64}"}},{{"op":"create","path_b64":"{}","content":"x"}}]}}"#, "Y2Fm6S9m").as_bytes());
    assert_result(&r, r#"{"count":0,"files":2}"#, 0);
    assert!(s
        .path()
        .join(std::ffi::OsStr::from_bytes(name))
        .join("f")
        .exists());
    let r = run_stdin(
        s.path(),
        &["--stdin"],
        format!(r#"{{"op":"delete","path_b64":"{p64}","recursive":true}}"#).as_bytes(),
    );
    assert_result(&r, r#"{"count":0,"files":1}"#, 0);
    assert_eq!(listing(s.path()), Vec::<String>::new());
}

/// `create` with `overwrite:false` is exclusive: two creators racing for one
/// name, many times over, never both win, and the winner's bytes are there.
#[test]
fn racing_exclusive_creates_have_one_winner() {
    let s = scratch();
    for round in 0..300 {
        let name = format!("n{round}");
        let body = |who: &str| format!(r#"{{"op":"create","path":"{name}/f","content":"{who}"}}"#);
        let (a, b) = (body("a"), body("b"));
        let dir = s.path().to_owned();
        let d2 = dir.clone();
        let ta = std::thread::spawn(move || run_stdin(&dir, &["--stdin"], a.as_bytes()));
        let tb = std::thread::spawn(move || run_stdin(&d2, &["--stdin"], b.as_bytes()));
        let (ra, rb) = (ta.join().unwrap(), tb.join().unwrap());
        let mut codes = [ra.code, rb.code];
        codes.sort();
        assert_eq!(codes, [0, 1], "{} / {}", ra.stdout, rb.stdout);
        let (win, lose) = if ra.code == 0 { ("a", &rb) } else { ("b", &ra) };
        assert!(
            lose.stdout
                .starts_with(r#"__RESULT__{"error":"file_exists""#),
            "{}",
            lose.stdout
        );
        assert_eq!(
            std::fs::read_to_string(s.path().join(&name).join("f")).unwrap(),
            win
        );
        assert_eq!(listing(&s.path().join(&name)), ["f"]);
    }
}

/// A mount point inside the tree: refused before anything is removed,
/// naming it; a directory moved to another file system: refused (never
/// copied), rolled back.
#[test]
fn a_tree_stays_on_one_file_system() {
    let s = scratch();
    std::fs::create_dir_all(s.path().join("d/sub/mnt")).unwrap();
    std::fs::write(s.path().join("d/f"), "f\n").unwrap();
    let mnt = s.path().join("d/sub/mnt");
    if !tmpfs(&mnt) {
        return skip("needs root and mount -t tmpfs");
    }
    std::fs::write(mnt.join("inside"), "i\n").unwrap();
    let before = tree(s.path());
    let p = s.path().canonicalize().unwrap();
    let r = run_stdin(
        s.path(),
        &["--stdin"],
        &req(r#"{"op":"delete","path":"d","recursive":true}"#),
    );
    let res = |line: &str| assert_result(&r, line, 2);
    res(&format!(
        r#"{{"error":"invalid_argument","detail":"file 1 of 1 (d): {}/d/sub/mnt is a mount point (another file system): a recursive delete or a directory move stays on one file system; nothing was changed","file":1}}"#,
        p.display()
    ));
    assert_eq!(tree(s.path()), before);
    std::fs::create_dir(s.path().join("mv")).unwrap();
    std::fs::write(s.path().join("mv/g"), "g\n").unwrap();
    let before = tree(s.path());
    let r = run_stdin(
        s.path(),
        &["--stdin"],
        &req(r#"{"op":"move","path":"mv","to":"d/sub/mnt/new/mv"}"#),
    );
    // Rolled back: the directory made on the other file system is gone.
    let after = (tree(s.path()), listing(&mnt));
    umount(&mnt);
    assert_result(
        &r,
        &format!(
            r#"{{"error":"write_failed","detail":"file 1 of 1 (mv): {0}/mv is on another file system (or mount) than {0}/d/sub/mnt/new/mv: a directory is moved only by rename, never copied; nothing was changed","file":1,"rolled_back":true}}"#,
            p.display()
        ),
        1,
    );
    assert_eq!(after, (before, vec!["inside".to_string()]));
}

/// Later ops of the same transaction see a deleted tree as gone: a path
/// under it is missing, and a create there makes the directory anew.
#[test]
fn later_ops_see_a_deleted_tree_as_gone() {
    let s = scratch();
    std::fs::create_dir(s.path().join("d")).unwrap();
    std::fs::write(s.path().join("d/a"), "a\n").unwrap();
    let before = tree(s.path());
    let p = s.path().canonicalize().unwrap();
    let r = run_stdin(
        s.path(),
        &["--stdin"],
        &req(
            r#"{"files":[{"op":"delete","path":"d","recursive":true},{"op":"edit","path":"d/a","edits":[{"old":"a","new":"b"}]}]}"#,
        ),
    );
    assert_result(
        &r,
        &format!(
            r#"{{"error":"file_not_found","detail":"file 2 of 2 (d/a): {}/d/a does not exist","file":2}}"#,
            p.display()
        ),
        1,
    );
    assert_eq!(tree(s.path()), before);
    let ino = inode(&s.path().join("d"));
    let r = run_stdin(
        s.path(),
        &["--stdin"],
        &req(
            r#"{"files":[{"op":"delete","path":"d","recursive":true},{"op":"create","path":"d/a","content":"new"}]}"#,
        ),
    );
    assert_result(&r, r#"{"count":0,"files":2}"#, 0);
    assert_eq!(names(s.path()), ["d", "d/a"]);
    assert_eq!(
        std::fs::read_to_string(s.path().join("d/a")).unwrap(),
        "new"
    );
    assert_ne!(inode(&s.path().join("d")), ino, "a new directory");
}

/// A symlink to the working directory is moved or deleted as a link (the
/// entry named, as `mv` and `rm` do); the working directory itself, named
/// by a path, is refused as ever.
#[test]
fn a_symlink_to_the_working_directory_is_moved_as_a_link() {
    let s = scratch();
    std::fs::create_dir(s.path().join("w")).unwrap();
    std::fs::write(s.path().join("w/f"), "f\n").unwrap();
    std::os::unix::fs::symlink(".", s.path().join("w/here")).unwrap();
    let w = s.path().join("w");
    let p = w.canonicalize().unwrap();
    let before = tree(s.path());
    let r = run_stdin(
        &w,
        &["--stdin"],
        &req(r#"{"op":"move","path":"../w","to":"../w2"}"#),
    );
    assert_result(
        &r,
        &format!(
            r#"{{"error":"invalid_argument","detail":"file 1 of 1 (../w): {} is the working directory or one of its ancestors: it is never deleted or moved","file":1}}"#,
            p.display()
        ),
        2,
    );
    assert_eq!(tree(s.path()), before);
    let r = run_stdin(
        &w,
        &["--stdin"],
        &req(r#"{"op":"move","path":"here","to":"x"}"#),
    );
    assert_result(&r, r#"{"count":0,"files":2}"#, 0);
    assert_eq!(names(s.path()), ["w", "w/f", "w/x"]);
    assert_eq!(std::fs::read_link(w.join("x")).unwrap(), Path::new("."));
    let r = run_stdin(
        &w,
        &["--stdin"],
        &req(r#"{"op":"delete","path":"x","recursive":true}"#),
    );
    assert_result(&r, r#"{"count":0,"files":1}"#, 0);
    assert_eq!(names(s.path()), ["w", "w/f"]);
}

/// Bind-mounts `from` at `at` (root only); false where not allowed.
fn bind(from: &Path, at: &Path) -> bool {
    is_root()
        && std::process::Command::new("mount")
            .arg("--bind")
            .args([from, at])
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
}

/// A bind mount of the same file system (same device) inside the tree, or
/// the tree itself one, is a mount point too: refused before anything is
/// removed. (The device alone let the delete empty what the mount shows:
/// `out`, outside the tree, lost its files.)
#[test]
fn a_bind_mount_of_the_same_file_system_refuses_the_delete() {
    let s = scratch();
    std::fs::create_dir_all(s.path().join("out/keep")).unwrap();
    std::fs::write(s.path().join("out/keep/f"), "k\n").unwrap();
    std::fs::create_dir_all(s.path().join("d/sub/mnt")).unwrap();
    std::fs::create_dir(s.path().join("b")).unwrap();
    let (mnt, b) = (s.path().join("d/sub/mnt"), s.path().join("b"));
    if !bind(&s.path().join("out"), &mnt) {
        return skip("needs root and mount --bind");
    }
    let out = tree(&s.path().join("out"));
    let d = tree(&s.path().join("d"));
    let p = s.path().canonicalize().unwrap();
    let r = run_stdin(
        s.path(),
        &["--stdin"],
        &req(r#"{"op":"delete","path":"d","recursive":true}"#),
    );
    // Unmounted first wherever the mount went (a regression hides it with
    // the tree): a failing run leaves no mount behind.
    let hidden = listing(s.path())
        .into_iter()
        .filter(|n| n.starts_with(".as-edit-"));
    for h in hidden {
        let _ = std::process::Command::new("umount")
            .arg(s.path().join(h).join("sub/mnt"))
            .status();
    }
    let after = (tree(&s.path().join("out")), tree(&s.path().join("d")));
    umount(&mnt);
    assert!(bind(&s.path().join("out"), &b));
    let r2 = run_stdin(
        s.path(),
        &["--stdin"],
        &req(r#"{"op":"delete","path":"b","recursive":true}"#),
    );
    let after2 = tree(&s.path().join("out"));
    umount(&b);
    let line = |n: &str| {
        format!(
            r#"{{"error":"invalid_argument","detail":"file 1 of 1 ({n}): {}/{} is a mount point (another file system): a recursive delete or a directory move stays on one file system; nothing was changed","file":1}}"#,
            p.display(),
            if n == "d" { "d/sub/mnt" } else { n }
        )
    };
    assert_result(&r, &line("d"), 2);
    assert_eq!(after, (out.clone(), d));
    assert_result(&r2, &line("b"), 2);
    assert_eq!(after2, out);
    assert_eq!(listing(s.path()), ["b", "d", "out"]);
}

/// Whether `chattr` works on the scratch file system.
fn chattr(flag: &str, p: &Path) -> bool {
    std::process::Command::new("chattr")
        .arg(flag)
        .arg(p)
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// An immutable file or an append-only directory in the tree cannot be
/// removed: the delete is refused before anything goes (it was hidden,
/// half removed, and answered with `"left"`).
#[test]
fn immutable_or_append_only_entries_refuse_the_delete() {
    let s = scratch();
    std::fs::create_dir_all(s.path().join("d/s")).unwrap();
    std::fs::write(s.path().join("d/s/f"), "1\n").unwrap();
    std::fs::write(s.path().join("d/g"), "2\n").unwrap();
    let f = s.path().join("d/s/f");
    if !is_root() || !chattr("+i", &f) {
        return skip("needs root and chattr");
    }
    let p = s.path().canonicalize().unwrap();
    let del = || {
        run_stdin(
            s.path(),
            &["--stdin"],
            &req(r#"{"op":"delete","path":"d","recursive":true}"#),
        )
    };
    let before = tree(s.path());
    let r = del();
    let after = tree(s.path());
    assert!(chattr("-i", &f));
    let line = |n: &str| {
        format!(
            r#"{{"error":"permission_denied","detail":"file 1 of 1 (d): {}/{n} is immutable or append-only (chattr +i/+a): it cannot be removed; nothing was deleted","file":1}}"#,
            p.display()
        )
    };
    assert_result(&r, &line("d/s/f"), 1);
    assert_eq!(after, before);
    assert!(chattr("+a", &s.path().join("d/s")));
    let r = del();
    let after = tree(s.path());
    assert!(chattr("-a", &s.path().join("d/s")));
    assert_result(&r, &line("d/s"), 1);
    assert_eq!(after, before);
    assert_result(&del(), r#"{"count":0,"files":1}"#, 0);
    assert_eq!(listing(s.path()), Vec::<String>::new());
}

/// A tree 10,000 directories deep (made by descriptor: its paths exceed
/// PATH_MAX) is removed whole: the scan and the removal were recursive
/// and overflowed the stack (an abort: no answer, and after the commit
/// the hidden tree left without one).
#[test]
fn a_very_deep_tree_is_removed() {
    use rustix::fs::{mkdirat, openat, Mode, OFlags};
    let s = scratch();
    std::fs::create_dir(s.path().join("d")).unwrap();
    let flags = OFlags::RDONLY | OFlags::DIRECTORY;
    let mut fd = openat(rustix::fs::CWD, s.path().join("d"), flags, Mode::empty()).unwrap();
    for _ in 0..10_000 {
        mkdirat(&fd, "a", Mode::from_raw_mode(0o755)).unwrap();
        fd = openat(&fd, "a", flags, Mode::empty()).unwrap();
    }
    rustix::fs::openat(
        &fd,
        "f",
        OFlags::CREATE | OFlags::WRONLY,
        Mode::from_raw_mode(0o644),
    )
    .unwrap();
    drop(fd);
    let r = run_stdin(
        s.path(),
        &["--stdin"],
        &req(r#"{"op":"delete","path":"d","recursive":true}"#),
    );
    assert_result(&r, r#"{"count":0,"files":1}"#, 0);
    assert_eq!(listing(s.path()), Vec::<String>::new());
}

/// As another user, a sticky directory's entry owned by someone else (in
/// a directory the caller does not own) cannot be removed: the delete is
/// refused before anything goes (it was hidden, then answered `"left"`
/// with the rest of the tree under the hidden name).
#[test]
fn another_users_entry_in_a_sticky_directory_refuses_the_delete() {
    if !setpriv_available() {
        return skip("needs root and setpriv");
    }
    let s = scratch();
    std::fs::set_permissions(s.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    std::fs::create_dir_all(s.path().join("d/sticky")).unwrap();
    std::fs::write(s.path().join("d/sticky/roots"), "r\n").unwrap();
    std::fs::set_permissions(s.path().join("d"), std::fs::Permissions::from_mode(0o777)).unwrap();
    let sticky = std::fs::Permissions::from_mode(0o1777);
    std::fs::set_permissions(s.path().join("d/sticky"), sticky).unwrap();
    let nobody = Some(rustix::process::Uid::from_raw(65534));
    rustix::fs::chown(s.path().join("d"), nobody, None).unwrap();
    let before = tree(s.path());
    let b64 = b64(r#"{"op":"delete","path":"d","recursive":true}"#);
    let r = run_as_nobody(s.path(), &[b"--request-b64", b64.as_bytes()]);
    let p = s.path().canonicalize().unwrap();
    assert_result(
        &r,
        &format!(
            r#"{{"error":"permission_denied","detail":"file 1 of 1 (d): {}/d/sticky does not let its entries be removed (sticky, and the entry is another user's): nothing was deleted","file":1}}"#,
            p.display()
        ),
        1,
    );
    assert_eq!(tree(s.path()), before);
    // Its own entries go.
    rustix::fs::chown(s.path().join("d/sticky/roots"), nobody, None).unwrap();
    let r = run_as_nobody(s.path(), &[b"--request-b64", b64.as_bytes()]);
    assert_result(&r, r#"{"count":0,"files":1}"#, 0);
    assert_eq!(listing(s.path()), Vec::<String>::new());
}

/// A directory that cannot be made (a mkdir, or a create's missing
/// parent) is worded as that, not as a temp file's rename: nothing is
/// left, and the detail says so.
#[test]
fn a_directory_that_cannot_be_made_says_so() {
    let s = scratch();
    let p = s.path().display();
    let cases = [
        (r#"{"op":"mkdir","path":"m"}"#, "1", "m", "m"),
        (
            r#"{"op":"mkdir","path":"p/q","parents":true}"#,
            "2",
            "p/q",
            "p/q",
        ),
        (
            r#"{"op":"create","path":"n/f","content":"x"}"#,
            "2",
            "n/f",
            "n/f",
        ),
    ];
    for (body, k, shown, path) in cases {
        let mut c = std::process::Command::new(BIN);
        c.arg("--stdin").env("AS_EDIT_TEST_TXN_FAIL", k);
        let r = run_with_stdin(c, s.path(), &req(body));
        let line = format!(
            r#"{{"error":"write_failed","detail":"file 1 of 1 ({shown}): making a directory for {p}/{path}: Input/output error (os error 5); nothing was made","file":1,"rolled_back":true}}"#
        );
        assert_result(&r, &line, 1);
        assert!(names(s.path()).is_empty(), "{body}");
    }
}

/// Unmounts, on drop, every mount under a scratch directory (deepest
/// first, lazily), wherever a regression may have moved it: a failing run
/// leaves no mount behind.
struct Mounts(std::path::PathBuf);

impl Drop for Mounts {
    fn drop(&mut self) {
        let info = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        let mut under: Vec<&str> = info
            .lines()
            .filter_map(|l| l.split(' ').nth(4))
            .filter(|m| Path::new(m).starts_with(&self.0))
            .collect();
        under.sort_by_key(|m| std::cmp::Reverse(m.len()));
        for m in under {
            let _ = std::process::Command::new("umount")
                .args(["-l", m])
                .stderr(std::process::Stdio::null())
                .status();
        }
    }
}

/// A file bind-mounted into the tree (from the same file system: the
/// same device, so only its mount id and `STATX_ATTR_MOUNT_ROOT` tell it;
/// even a file bind-mounted onto itself, the same inode), or a directory
/// bind-mounted deep in it: refused before anything is removed, naming
/// the entry; the tree and what the mount shows byte-identical after.
/// (The scan looked for mounts only on directories: everything else went
/// and the hidden tree was `"left"` holding the mount.)
#[test]
fn a_bind_mounted_file_or_deep_directory_in_the_tree_refuses_the_delete() {
    let s = scratch();
    let p = s.path().canonicalize().unwrap();
    let _mounts = Mounts(p.clone());
    let deep = "d/a/b/c/e/f/g";
    std::fs::create_dir_all(p.join(deep)).unwrap();
    std::fs::create_dir_all(p.join("out/keep")).unwrap();
    std::fs::write(p.join("out/keep/k"), "k\n").unwrap();
    std::fs::write(p.join("outside.txt"), "outside\n").unwrap();
    std::fs::write(p.join("d/top"), "t\n").unwrap();
    std::fs::write(p.join("d/a/b/mnt.txt"), "under the mount\n").unwrap();
    std::fs::write(p.join("d/a/self.txt"), "self\n").unwrap();
    std::fs::create_dir(p.join(format!("{deep}/mnt"))).unwrap();
    let del = || {
        run_stdin(
            &p,
            &["--stdin"],
            &req(r#"{"op":"delete","path":"d","recursive":true}"#),
        )
    };
    let line = |n: &str| {
        format!(
            r#"{{"error":"invalid_argument","detail":"file 1 of 1 (d): {}/{n} is a mount point (another file system): a recursive delete or a directory move stays on one file system; nothing was changed","file":1}}"#,
            p.display()
        )
    };
    let cases = [
        ("outside.txt", "d/a/b/mnt.txt"),
        ("d/a/self.txt", "d/a/self.txt"),
        ("out", &format!("{deep}/mnt")),
    ];
    for (i, (from, at)) in cases.iter().enumerate() {
        if !bind(&p.join(from), &p.join(at)) {
            return skip("needs root and mount --bind");
        }
        let same = |a: &str| std::fs::metadata(p.join(a)).unwrap().dev();
        assert_eq!(same(at), same("d"), "the same file system, one st_dev");
        let before = tree(&p);
        let r = del();
        let after = tree(&p);
        // Unmounted where the entry was: a regression moved it under the
        // hidden name (`Mounts` unmounts it there).
        let at_place = std::process::Command::new("umount")
            .arg(p.join(at))
            .status();
        assert_result(&r, &line(at), 2);
        assert_eq!(after, before, "case {i}: the tree untouched");
        assert!(at_place.unwrap().success(), "umount {at}");
    }
    let kept = [
        ("outside.txt", &b"outside\n"[..]),
        ("d/a/b/mnt.txt", b"under the mount\n"),
        ("d/a/self.txt", b"self\n"),
        ("out/keep/k", b"k\n"),
    ];
    for (n, bytes) in kept {
        assert_eq!(std::fs::read(p.join(n)).unwrap(), bytes, "{n}");
    }
    // Nothing mounted any more: the same delete removes the tree.
    assert_result(&del(), r#"{"count":0,"files":1}"#, 0);
    assert_eq!(listing(&p), ["out", "outside.txt"]);
}

/// A file that is a mount point (bind-mounted) moved or deleted: the
/// kernel refuses to rename it (EBUSY) at the commit, rolled back, and the
/// detail names the entry and the step as they are (it named "the temp
/// file over the target" and, for a move, the destination: there is no
/// temp, and the destination was never the mount).
#[test]
fn a_bind_mounted_file_moved_or_deleted_names_the_entry_not_a_temp() {
    let s = scratch();
    let p = s.path().canonicalize().unwrap();
    let _mounts = Mounts(p.clone());
    std::fs::create_dir(p.join("t")).unwrap();
    std::fs::write(p.join("out.txt"), "out\n").unwrap();
    std::fs::write(p.join("t/f"), "under\n").unwrap();
    if !bind(&p.join("out.txt"), &p.join("t/f")) {
        return skip("needs root and mount --bind");
    }
    let line = format!(
        r#"{{"error":"write_failed","detail":"file 1 of 1 (t/f): renaming the entry (to move or remove it) for {}/t/f: Device or resource busy (os error 16) (it is a mount point, such as a bind-mounted file, and cannot be moved or removed); the file is unchanged","file":1,"rolled_back":true}}"#,
        p.display()
    );
    for op in [
        r#"{"op":"move","path":"t/f","to":"g"}"#,
        r#"{"op":"move","path":"t/f","to":"g","edits":[{"old":"out","new":"in"}]}"#,
        r#"{"op":"delete","path":"t/f"}"#,
    ] {
        let r = run_stdin(&p, &["--stdin"], &req(&format!(r#"{{"files":[{op}]}}"#)));
        assert_result(&r, &line, 1);
        assert_eq!(listing(&p), ["out.txt", "t"], "{op}");
        assert_eq!(listing(&p.join("t")), ["f"], "{op}");
        assert_eq!(std::fs::read(p.join("t/f")).unwrap(), b"out\n", "{op}");
    }
}
