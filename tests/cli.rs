//! The built binary, invoked as a host invokes it: through `sh -c` with POSIX
//! single-quote quoting, and as a plain argv. Every case asserts the exact
//! result line, exit code, file bytes, and what is left in the directory.

mod common;
use common::*;

use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Runs one edit both ways (sh -c and argv) on fresh copies of the file and
/// asserts both give `line`/`code` and leave `after` bytes.
/// `edit` is (OLD, NEW, REPLACE_ALL), `expect` is (line, exit code, bytes after).
fn both_ways(
    name: &str,
    before: &[u8],
    edit: (&str, &str, Option<&str>),
    expect: (&str, i32, &[u8]),
) {
    let ((old, new, all), (line, code, after)) = (edit, expect);
    for via_sh in [true, false] {
        let d = scratch();
        let p = write_file(d.path(), name, before, 0o644);
        let ino = inode(&p);
        let (o, n) = (b64(old), b64(new));
        let mut args: Vec<&[u8]> = vec![b"--", name.as_bytes(), o.as_bytes(), n.as_bytes()];
        if let Some(a) = all {
            args.push(a.as_bytes());
        }
        let r = if via_sh {
            run_sh(d.path(), &args)
        } else {
            run_argv(d.path(), &args)
        };
        let dir = d.path().display().to_string();
        assert_result(&r, &line.replace("{DIR}", &dir), code);
        assert_eq!(
            std::fs::read(&p).unwrap(),
            after,
            "bytes after (sh: {via_sh})"
        );
        assert_eq!(
            listing(d.path()),
            vec![name.to_owned()],
            "no temp left behind"
        );
        if code != 0 {
            assert_eq!(inode(&p), ino, "a refused edit keeps the inode");
        } else {
            assert_eq!(mode(&p), 0o644);
        }
    }
}

#[test]
fn edits_once_exit_0() {
    both_ways(
        "f.txt",
        b"hello world\n",
        ("world", "there", None),
        (r#"{"count":1}"#, 0, b"hello there\n"),
    );
}

#[test]
fn replace_all_counts() {
    both_ways(
        "f.txt",
        b"a-a-a",
        ("a", "bb", Some("true")),
        (r#"{"count":3}"#, 0, b"bb-bb-bb"),
    );
}

#[test]
fn explicit_false_is_exact_once() {
    both_ways(
        "f.txt",
        b"one two",
        ("two", "2", Some("false")),
        (r#"{"count":1}"#, 0, b"one 2"),
    );
}

#[test]
fn string_not_found_exit_1() {
    both_ways(
        "f.txt",
        b"abc\n",
        ("zzz", "y", None),
        (r#"{"error":"string_not_found"}"#, 1, b"abc\n"),
    );
}

#[test]
fn multiple_occurrences_exit_1_with_count() {
    both_ways(
        "f.txt",
        b"aaaaa",
        ("aa", "b", None),
        (r#"{"error":"multiple_occurrences","count":2}"#, 1, b"aaaaa"),
    );
}

#[test]
fn empty_file_exit_1() {
    both_ways(
        "f.txt",
        b"",
        ("a", "b", None),
        (r#"{"error":"empty"}"#, 1, b""),
    );
}

#[test]
fn invalid_utf8_is_read_failed_with_offset() {
    both_ways(
        "f.txt",
        b"ok\n\xff\xfe",
        ("ok", "no", None),
        (
            r#"{"error":"read_failed","detail":"{DIR}/f.txt is not valid UTF-8: invalid start byte at byte offset 3"}"#,
            1,
            b"ok\n\xff\xfe",
        ),
    )
}

#[test]
fn delete_with_empty_new() {
    both_ways(
        "f.txt",
        b"keep DROP keep",
        (" DROP", "", None),
        (r#"{"count":1}"#, 0, b"keep keep"),
    );
}

#[test]
fn special_characters_in_old_and_new() {
    let nasty = "it's \"quoted\" \\ $(rm -rf /) `id` $HOME\n'\n";
    both_ways(
        "f.txt",
        format!("<{nasty}>").as_bytes(),
        (nasty, "€ ' \" ` $(x)\n", None),
        (r#"{"count":1}"#, 0, "<€ ' \" ` $(x)\n>".as_bytes()),
    );
}

#[test]
fn params_ending_in_newline() {
    both_ways(
        "f.txt",
        b"a\nb\nc\n",
        ("b\n", "B\n\n", None),
        (r#"{"count":1}"#, 0, b"a\nB\n\nc\n"),
    );
}

#[test]
fn forty_kib_old_and_new() {
    let old: String = (0..40 * 1024)
        .map(|i| char::from(b'a' + (i % 26) as u8))
        .collect();
    let new = old.to_uppercase();
    let before = format!("head\n{old}\ntail\n");
    let after = format!("head\n{new}\ntail\n");
    both_ways(
        "big.txt",
        before.as_bytes(),
        (&old, &new, None),
        (r#"{"count":1}"#, 0, after.as_bytes()),
    );
}

#[test]
fn crlf_file_with_lf_pattern_is_written_lf() {
    both_ways(
        "f.txt",
        b"one\r\ntwo\r\nthree\r\n",
        ("two\nthree", "2\n3", None),
        (r#"{"count":1}"#, 0, b"one\n2\n3\n"),
    );
}

#[test]
fn more_than_one_guard_on_crlf_content() {
    both_ways(
        "f.txt",
        b"x\r\nx\r\n",
        ("x\n", "y", None),
        (
            r#"{"error":"multiple_occurrences","count":2}"#,
            1,
            b"x\r\nx\r\n",
        ),
    );
}

#[test]
fn lone_cr_becomes_lf() {
    both_ways(
        "f.txt",
        b"a\rb\rc",
        ("b\n", "B\n", None),
        (r#"{"count":1}"#, 0, b"a\nB\nc"),
    );
}

#[test]
fn bom_and_emoji_are_content() {
    both_ways(
        "f.txt",
        "\u{feff}hi 😀\n".as_bytes(),
        ("😀", "🎉", None),
        (r#"{"count":1}"#, 0, "\u{feff}hi 🎉\n".as_bytes()),
    );
}

#[test]
fn nul_bytes_and_no_final_newline() {
    both_ways(
        "f.txt",
        b"a\0b\nlast",
        ("last", "end", None),
        (r#"{"count":1}"#, 0, b"a\0b\nend"),
    );
}

#[test]
fn path_with_single_quote_beside_a_decoy() {
    let d = scratch();
    let target = write_file(d.path(), "it's a file.txt", b"target\n", 0o644);
    let decoy = write_file(d.path(), "its a file.txt", b"target\n", 0o644);
    let (o, n) = (b64("target"), b64("edited"));
    let r = run_sh(
        d.path(),
        &[
            b"--",
            b"it's a file.txt",
            o.as_bytes(),
            n.as_bytes(),
            b"false",
        ],
    );
    assert_result(&r, r#"{"count":1}"#, 0);
    assert_eq!(std::fs::read(&target).unwrap(), b"edited\n");
    assert_eq!(std::fs::read(&decoy).unwrap(), b"target\n");
}

#[test]
fn path_with_backticks_and_command_substitution() {
    let d = scratch();
    let name = "`touch pwned`$(touch pwned2).txt";
    let p = write_file(d.path(), name, b"x\n", 0o644);
    let (o, n) = (b64("x"), b64("y"));
    let r = run_sh(
        d.path(),
        &[b"--", name.as_bytes(), o.as_bytes(), n.as_bytes()],
    );
    assert_result(&r, r#"{"count":1}"#, 0);
    assert_eq!(std::fs::read(&p).unwrap(), b"y\n");
    assert_eq!(
        listing(d.path()),
        vec![name.to_owned()],
        "nothing was executed"
    );
}

#[test]
fn path_with_newline_and_heredoc_delimiter_line() {
    let d = scratch();
    let name = "a\nPYEOF\nDELIM\n.txt";
    let p = write_file(d.path(), name, b"x\n", 0o644);
    let (o, n) = (b64("x"), b64("y"));
    for run in [run_sh, run_argv] {
        std::fs::write(&p, b"x\n").unwrap();
        let r = run(
            d.path(),
            &[b"--", name.as_bytes(), o.as_bytes(), n.as_bytes()],
        );
        assert_result(&r, r#"{"count":1}"#, 0);
        assert_eq!(std::fs::read(&p).unwrap(), b"y\n");
    }
}

#[test]
fn path_starting_with_dash_after_double_dash() {
    let d = scratch();
    let p = write_file(d.path(), "-rf", b"x\n", 0o644);
    let (o, n) = (b64("x"), b64("y"));
    let r = run_sh(d.path(), &[b"--", b"-rf", o.as_bytes(), n.as_bytes()]);
    assert_result(&r, r#"{"count":1}"#, 0);
    assert_eq!(std::fs::read(&p).unwrap(), b"y\n");
    // Without `--` it is an unknown option, and nothing is touched.
    let r = run_argv(d.path(), &[b"-rf", o.as_bytes(), n.as_bytes()]);
    assert_result(
        &r,
        r#"{"error":"invalid_argument","detail":"unknown option \"-rf\"; put `--` before a PATH that starts with '-'"}"#,
        2,
    );
    assert_eq!(std::fs::read(&p).unwrap(), b"y\n");
}

#[test]
fn non_utf8_path() {
    let d = scratch();
    let name = std::ffi::OsStr::from_bytes(b"caf\xe9.txt");
    let p = d.path().join(name);
    std::fs::write(&p, b"x\n").unwrap();
    let (o, n) = (b64("x"), b64("y"));
    let r = run_sh(
        d.path(),
        &[b"--", name.as_bytes(), o.as_bytes(), n.as_bytes()],
    );
    assert_result(&r, r#"{"count":1}"#, 0);
    assert_eq!(std::fs::read(&p).unwrap(), b"y\n");
    // In a detail, the path is rendered lossily but keeps the line ASCII.
    let r = run_argv(d.path(), &[name.as_bytes(), o.as_bytes(), n.as_bytes()]);
    let dir = d.path().display();
    assert_result(&r, r#"{"error":"string_not_found"}"#, 1);
    std::fs::write(&p, b"\xff").unwrap();
    let r = run_argv(d.path(), &[name.as_bytes(), o.as_bytes(), n.as_bytes()]);
    assert_result(
        &r,
        &format!(
            r#"{{"error":"read_failed","detail":"{dir}/caf\ufffd.txt is not valid UTF-8: invalid start byte at byte offset 0"}}"#
        ),
        1,
    );
}

#[test]
fn relative_symlink_into_another_directory_is_written_through() {
    let d = scratch();
    std::fs::create_dir(d.path().join("real")).unwrap();
    std::fs::create_dir(d.path().join("links")).unwrap();
    let target = write_file(&d.path().join("real"), "t.txt", b"old\n", 0o600);
    std::os::unix::fs::symlink("../real/t.txt", d.path().join("links/l.txt")).unwrap();
    let (o, n) = (b64("old"), b64("new"));
    let r = run_sh(
        d.path(),
        &[b"--", b"links/l.txt", o.as_bytes(), n.as_bytes()],
    );
    assert_result(&r, r#"{"count":1}"#, 0);
    assert_eq!(std::fs::read(&target).unwrap(), b"new\n");
    assert_eq!(mode(&target), 0o600);
    let link = std::fs::symlink_metadata(d.path().join("links/l.txt")).unwrap();
    assert!(
        link.file_type().is_symlink(),
        "the link itself is preserved"
    );
    assert_eq!(
        std::fs::read_link(d.path().join("links/l.txt")).unwrap(),
        Path::new("../real/t.txt")
    );
    assert_eq!(listing(&d.path().join("real")), vec!["t.txt"]);
    assert_eq!(listing(&d.path().join("links")), vec!["l.txt"]);
}

#[test]
fn mode_bits_all_twelve_are_kept() {
    let d = scratch();
    let p = write_file(d.path(), "f", b"x", 0o644);
    std::fs::set_permissions(&p, std::os::unix::fs::PermissionsExt::from_mode(0o7751)).unwrap();
    let (o, n) = (b64("x"), b64("y"));
    let r = run_argv(d.path(), &[b"f", o.as_bytes(), n.as_bytes()]);
    assert_result(&r, r#"{"count":1}"#, 0);
    assert_eq!(mode(&p), 0o7751);
}

fn refuse_special(path: &Path, cwd: &Path, detail: &str) {
    let (o, n) = (b64("x"), b64("y"));
    let before = listing(cwd);
    for run in [run_sh, run_argv] {
        let r = run(
            cwd,
            &[
                b"--",
                path.as_os_str().as_bytes(),
                o.as_bytes(),
                n.as_bytes(),
            ],
        );
        assert_result(
            &r,
            &format!(r#"{{"error":"file_not_found","detail":"{detail}"}}"#),
            1,
        );
    }
    assert_eq!(listing(cwd), before);
}

#[test]
fn fifo_is_refused_without_blocking() {
    let d = scratch();
    let p = d.path().join("fifo");
    assert!(std::process::Command::new("mkfifo")
        .arg(&p)
        .status()
        .unwrap()
        .success());
    refuse_special(
        &p,
        d.path(),
        &format!("{} is a FIFO, not a regular file", p.display()),
    );
}

#[test]
fn dev_null_is_refused() {
    let d = scratch();
    refuse_special(
        Path::new("/dev/null"),
        d.path(),
        "/dev/null is a character device, not a regular file",
    );
}

#[test]
fn directory_is_refused() {
    let d = scratch();
    std::fs::create_dir(d.path().join("sub")).unwrap();
    refuse_special(
        &d.path().join("sub"),
        d.path(),
        &format!(
            "{}/sub is a directory, not a regular file",
            d.path().display()
        ),
    );
}

#[test]
fn missing_and_dangling_are_refused() {
    let d = scratch();
    refuse_special(Path::new("nope.txt"), d.path(), "nope.txt does not exist");
    std::os::unix::fs::symlink("nowhere", d.path().join("dangling")).unwrap();
    refuse_special(
        Path::new("dangling"),
        d.path(),
        "dangling is a dangling symlink",
    );
}

#[test]
fn unix_socket_is_refused() {
    let d = scratch();
    let p = d.path().join("sock");
    let _l = std::os::unix::net::UnixListener::bind(&p).unwrap();
    refuse_special(
        &p,
        d.path(),
        &format!("{} is a socket, not a regular file", p.display()),
    );
}

#[test]
fn read_only_directory_as_non_root_is_write_failed() {
    if !setpriv_available() {
        return skip("needs root and setpriv to drop to an unprivileged user");
    }
    let d = scratch();
    let sub = d.path().join("ro");
    std::fs::create_dir(&sub).unwrap();
    let p = write_file(&sub, "f.txt", b"abc\n", 0o666);
    std::fs::set_permissions(&sub, std::os::unix::fs::PermissionsExt::from_mode(0o555)).unwrap();
    let ino = inode(&p);
    let (o, n) = (b64("abc"), b64("xyz"));
    let r = run_as_nobody(&sub, &[b"f.txt", o.as_bytes(), n.as_bytes()]);
    assert_result(
        &r,
        &format!(
            r#"{{"error":"write_failed","detail":"creating a temp file beside it for {}: Permission denied (os error 13) (the directory is not writable); the file is unchanged"}}"#,
            p.display()
        ),
        1,
    );
    assert_eq!(std::fs::read(&p).unwrap(), b"abc\n");
    assert_eq!(inode(&p), ino);
    assert_eq!(listing(&sub), vec!["f.txt"]);
    // A refusal still wins over the unwritable directory.
    let o = b64("nope");
    let r = run_as_nobody(&sub, &[b"f.txt", o.as_bytes(), n.as_bytes()]);
    assert_result(&r, r#"{"error":"string_not_found"}"#, 1);
}

#[test]
fn invalid_arguments_exit_2_and_touch_nothing() {
    let d = scratch();
    let p = write_file(d.path(), "f", b"abc", 0o644);
    let ino = inode(&p);
    let ok = b64("abc");
    let cases: &[(&[&[u8]], &str)] = &[
        (&[b"f", b"YWJj!", b""], "OLD_B64 is not valid base64 (Invalid symbol 33, offset 4.)"),
        (&[b"f", b"YWJ", b""], "OLD_B64 is not valid base64 (Invalid padding)"),
        (&[b"f", b"YW=j", b""], "OLD_B64 is not valid base64 (Invalid symbol 61, offset 2.)"),
        (&[b"f", b"YWJj", b"/w=="], "NEW_B64 does not decode to UTF-8 (bad byte at offset 0)"),
        (&[b"f", b"", b""], "OLD is empty"),
        (&[b"f", ok.as_bytes(), b"", b"yes"], "REPLACE_ALL must be exactly true or false, got \\\"yes\\\""),
        (&[b"f", ok.as_bytes(), b"", b"True"], "REPLACE_ALL must be exactly true or false, got \\\"True\\\""),
        (&[b"f", ok.as_bytes()], "2 positional arguments: expected PATH OLD_B64 NEW_B64 [true|false], or PATH followed by OLD NEW true|false triples"),
        (&[b"f", ok.as_bytes(), b"", b"true", b"x"], "5 positional arguments: expected PATH OLD_B64 NEW_B64 [true|false], or PATH followed by OLD NEW true|false triples"),
        (&[], "missing arguments: expected PATH OLD_B64 NEW_B64 [true|false], or PATH followed by OLD NEW true|false triples"),
        (&[b"--bogus", b"f", ok.as_bytes(), b""], "unknown option \\\"--bogus\\\"; put `--` before a PATH that starts with '-'"),
        (&[b"--", b"", ok.as_bytes(), b""], "PATH is empty"),
        (&[b"--replace-all", b"f", ok.as_bytes(), b"", b"false"], "--replace-all contradicts REPLACE_ALL=false"),
    ];
    for (args, detail) in cases {
        let r = run_argv(d.path(), args);
        assert_result(
            &r,
            &format!(r#"{{"error":"invalid_argument","detail":"{detail}"}}"#),
            2,
        );
        assert_eq!(std::fs::read(&p).unwrap(), b"abc");
        assert_eq!(inode(&p), ino);
        assert_eq!(listing(d.path()), vec!["f"]);
    }
}

#[test]
fn replace_all_flag_form() {
    let d = scratch();
    let p = write_file(d.path(), "f", b"x x", 0o644);
    let (o, n) = (b64("x"), b64("y"));
    let r = run_argv(
        d.path(),
        &[b"--replace-all", b"--", b"f", o.as_bytes(), n.as_bytes()],
    );
    assert_result(&r, r#"{"count":2}"#, 0);
    assert_eq!(std::fs::read(&p).unwrap(), b"y y");
}

#[test]
fn version_and_help_are_for_humans() {
    let d = scratch();
    let r = run_argv(d.path(), &[b"--version"]);
    assert_eq!(r.code, 0);
    let arch = std::env::consts::ARCH;
    assert!(
        r.stdout.starts_with(&format!(
            "as-edit {} (protocol 1; {arch}-unknown-linux-",
            env!("CARGO_PKG_VERSION")
        )),
        "{}",
        r.stdout
    );
    assert!(!r.stdout.contains("__RESULT__"));
    let r = run_argv(d.path(), &[b"--help"]);
    assert_eq!(r.code, 0);
    assert!(
        r.stdout.starts_with("as-edit: edit one file atomically"),
        "{}",
        r.stdout
    );
}

#[test]
fn never_exits_126_or_127() {
    // Sanity over the whole matrix above is implicit; here the worst inputs.
    let d = scratch();
    for args in [
        &[b"\xff".as_slice()][..],
        &[b"--lock-timeout"],
        &[b"--root"],
    ] {
        let r = run_argv(d.path(), args);
        assert!(r.code != 126 && r.code != 127);
        assert!(
            r.stdout
                .starts_with("__RESULT__{\"error\":\"invalid_argument\""),
            "{}",
            r.stdout
        );
    }
}
