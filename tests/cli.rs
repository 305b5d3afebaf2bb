//! The cases a scenario folder (tests/scenarios, run by tests/scenarios.rs
//! and scripts/conformance.sh) cannot express, each saying why: a socket,
//! dropping privileges, strace, version strings, inputs of hundreds of KiB,
//! bounds rather than exact lines. Each asserts the exact result line, exit
//! code, file bytes and what is left in the directory where it can.

mod common;
use common::*;

use std::path::Path;
use std::process::Command;

use sha2::Digest;

fn sha(b: &[u8]) -> String {
    sha2::Sha256::digest(b)
        .iter()
        .map(|x| format!("{x:02x}"))
        .collect()
}

fn run(dir: &Path, args: &[&str]) -> Run {
    let a: Vec<&[u8]> = args.iter().map(|s| s.as_bytes()).collect();
    run_argv(dir, &a)
}

#[test]
fn unix_socket_is_refused() {
    // A folder cannot hold a socket, and busybox cannot make one.
    let d = scratch();
    let p = d.path().join("sock");
    let _l = std::os::unix::net::UnixListener::bind(&p).unwrap();
    let (o, n) = (b64("x"), b64("y"));
    let before = listing(d.path());
    for run in [run_sh, run_argv] {
        let r = run(
            d.path(),
            &[
                b"--",
                p.as_os_str().as_encoded_bytes(),
                o.as_bytes(),
                n.as_bytes(),
            ],
        );
        assert_result(
            &r,
            &format!(
                r#"{{"error":"file_not_found","detail":"{} is a socket, not a regular file"}}"#,
                p.display()
            ),
            1,
        );
    }
    assert_eq!(listing(d.path()), before);
}

#[test]
fn read_only_directory_as_non_root_is_write_failed() {
    // Dropping privileges: root in the conformance chroot cannot.
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
fn version_and_help_are_for_humans() {
    // Prefixes: the version and target vary (conformance.sh checks its
    // own exact --version line).
    let d = scratch();
    let r = run_argv(d.path(), &[b"--version"]);
    assert_eq!(r.code, 0);
    let arch = std::env::consts::ARCH;
    assert!(
        r.stdout.starts_with(&format!(
            "as-edit {} (protocol 4; {arch}-unknown-linux-",
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
fn diff_is_capped_at_64_kib_at_a_line_end() {
    // A bound, not an exact line, on a 200 KiB input (the exact diff of a
    // small edit is scenario 066).
    let d = scratch();
    let big: String = (0..20_000).map(|i| format!("row {i}\n")).collect();
    write_file(d.path(), "big", big.as_bytes(), 0o644);
    let r = run(
        d.path(),
        &[
            "--report",
            "--diff",
            "big",
            &b64("row"),
            &b64("ROW"),
            "true",
        ],
    );
    assert_eq!(r.code, 0);
    let v: serde_json::Value =
        serde_json::from_str(r.stdout.strip_prefix("__RESULT__").unwrap()).unwrap();
    let diff = v["diff"].as_str().unwrap();
    assert!(diff.len() <= 64 * 1024 && diff.len() > 60 * 1024 && diff.ends_with('\n'));
    assert_eq!(v["diff_truncated"], true);
    assert_eq!(v["count"], 20_000);
}

#[test]
fn stdin_carries_edits_beyond_the_argv_limit() {
    // 400 KiB of request and 200 KiB files: too large to keep as folders.
    // Flags with --stdin and bad requests are scenarios 068-076.
    let d = scratch();
    let old = "o".repeat(200 * 1024);
    let new = "n".repeat(200 * 1024);
    let p = write_file(d.path(), "f", format!("<{old}>").as_bytes(), 0o644);
    let req =
        serde_json::json!({"path": "f", "edits": [{"old": old, "new": new, "replace_all": false}]});
    let r = run_stdin(d.path(), &["--stdin"], req.to_string().as_bytes());
    assert_result(&r, r#"{"count":1}"#, 0);
    assert_eq!(std::fs::read(&p).unwrap(), format!("<{new}>").into_bytes());
    assert_eq!(listing(d.path()), vec!["f"]);
}

#[test]
fn fsync_flushes_the_file_before_the_rename_and_the_directory_after_and_without_it_writes_out() {
    // Syscalls, seen with strace.
    if Command::new("strace").arg("-V").output().is_err() {
        return skip("strace is not installed (scripts/test.sh installs it as root)");
    }
    let d = scratch();
    write_file(d.path(), "f", b"abc", 0o640);
    let trace = d.path().join("trace");
    let calls = |extra: &[&str]| {
        let mut args = vec![
            "-f",
            "-qq",
            "-e",
            "trace=fsync,fdatasync,sync_file_range,rename,renameat,renameat2",
            // The rename is made by a child (src/fs/window.rs): -f follows
            // it, and its exit signal is not a call.
            "-e",
            "signal=none",
            "-o",
        ];
        let t = trace.to_str().unwrap().to_owned();
        args.push(&t);
        args.push(BIN);
        args.extend_from_slice(extra);
        let (o, n) = (b64("b"), b64("B"));
        let (o2, n2) = (b64("B"), b64("b"));
        let edit: Vec<&str> = if std::fs::read(d.path().join("f")).unwrap() == b"abc" {
            vec!["f", &o, &n]
        } else {
            vec!["f", &o2, &n2]
        };
        let out = Command::new("strace")
            .args(&args)
            .args(&edit)
            .current_dir(d.path())
            .output()
            .unwrap();
        assert!(String::from_utf8_lossy(&out.stdout).starts_with("__RESULT__{\"count\":1}"));
        let text = std::fs::read_to_string(&trace).unwrap();
        std::fs::remove_file(&trace).unwrap();
        text.lines()
            .filter_map(|l| {
                l.split('(')
                    .next()
                    .and_then(|s| s.split_whitespace().last())
                    .map(str::to_owned)
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(
        calls(&["--fsync"]),
        vec!["fsync", "renameat", "fsync"],
        "file, rename, directory"
    );
    // Without it the data is still written out before the rename (no
    // flush): a power cut must not find the target empty (scripts/power-cut.sh).
    assert_eq!(
        calls(&[]),
        vec!["sync_file_range", "renameat"],
        "written out, no fsync unless asked"
    );
}

#[test]
fn hashes_cover_the_whole_file_even_past_invalid_utf8() {
    // 600 KiB, past the first read chunk (the empty-file run is scenario 084).
    let d = scratch();
    let mut bytes = b"ok \xff ".to_vec();
    bytes.extend(std::iter::repeat_n(b'x', 600 * 1024)); // past the first read chunk
    let p = write_file(d.path(), "f", &bytes, 0o644);
    let dir = d.path().display();
    // The expected hash is right: the refusal is about the content, not a conflict.
    let r = run(
        d.path(),
        &[
            "--report",
            "--expect-sha256",
            &sha(&bytes),
            "f",
            &b64("ok"),
            &b64("no"),
        ],
    );
    assert_result(
        &r,
        &format!(
            r#"{{"error":"read_failed","detail":"{dir}/f is not valid UTF-8: invalid start byte at byte offset 3","path":"{dir}/f","size":{},"sha256":"{}"}}"#,
            bytes.len(),
            sha(&bytes)
        ),
        1,
    );
    assert_eq!(std::fs::read(&p).unwrap(), bytes);
}

/// A result line that cannot be written keeps the outcome's exit code
/// (crates/wire/src/protocol.rs's docs): 0 and the new content for an edit, 1 and the
/// old bytes for a refusal, nothing on stderr. A folder cannot give the
/// binary a full device, a pipe nobody reads or a closed stdout.
#[test]
fn an_unwritable_result_line_keeps_the_outcomes_exit_code() {
    use std::process::Stdio;
    for way in ["/dev/full", "broken pipe", "closed"] {
        for (old, code, after) in [("one", 0, "1\n"), ("nope", 1, "one\n")] {
            let d = scratch();
            let a = write_file(d.path(), "a.txt", b"one\n", 0o644);
            let args = ["--", "a.txt", &b64(old), &b64("1")];
            let mut cmd = match way {
                "closed" => {
                    let mut c = Command::new("sh");
                    c.args(["-c", "exec \"$0\" \"$@\" >&-", BIN]).args(args);
                    c
                }
                _ => {
                    let mut c = Command::new(BIN);
                    c.args(args);
                    c
                }
            };
            cmd.current_dir(d.path()).stderr(Stdio::piped());
            match way {
                "/dev/full" => {
                    let full = std::fs::OpenOptions::new().write(true).open(way).unwrap();
                    cmd.stdout(full);
                }
                "broken pipe" => {
                    cmd.stdout(broken_pipe());
                }
                _ => {}
            }
            let o = cmd.output().unwrap();
            let seen = (o.status.code(), String::from_utf8(o.stderr).unwrap());
            assert_eq!(seen, (Some(code), String::new()), "{way}, {old}");
            assert_eq!(std::fs::read_to_string(&a).unwrap(), after, "{way}, {old}");
            assert_eq!(listing(d.path()), ["a.txt"], "{way}, {old}");
        }
    }
}

#[test]
fn a_long_request_grows_in_place_on_huge_pages() {
    // A 12 MiB request (a long OLD) read from a pipe: its buffer and the
    // OLD's copies are blocks of 4 MiB or more, advised to take 2 MiB pages
    // (src/main.rs), the advice over each block's whole mapping, so that
    // growing it stays one mremap: advice over part of the mapping split
    // it, every growth past 4 MiB failed (EFAULT) and was copied instead.
    if Command::new("strace").arg("-V").output().is_err() {
        return skip("strace is not installed (scripts/test.sh installs it as root)");
    }
    let d = scratch();
    write_file(d.path(), "f", b"hello\n", 0o644);
    let old = "the line a model sent back, long\n".repeat(12 << 20 >> 5);
    let req = serde_json::json!({"path": "f", "edits": [{"old": old, "new": "x"}]});
    let trace = d.path().join("trace");
    // The advice is musl's (src/main.rs): the test binary's when this is a
    // musl build, the static release binary's when scripts/test.sh names it.
    let mut bins = vec![(BIN.to_owned(), cfg!(target_env = "musl"))];
    bins.extend(std::env::var("AS_EDIT_STATIC_BIN").ok().map(|b| (b, true)));
    if !bins.iter().any(|b| b.1) {
        skip("no musl binary: AS_EDIT_STATIC_BIN is not set (scripts/test.sh sets it); only the growth is checked");
    }
    for (bin, musl) in bins {
        let mut c = Command::new("strace");
        c.args(["-qq", "-e", "trace=madvise,mremap", "-o"]);
        c.arg(&trace).arg(&bin).arg("--stdin");
        let r = run_with_stdin(c, d.path(), req.to_string().as_bytes());
        assert_result(&r, r#"{"error":"string_not_found"}"#, 1);
        let text = std::fs::read_to_string(&trace).unwrap();
        let calls = |name: &'static str| text.lines().filter(move |l| l.starts_with(name));
        assert!(calls("mremap(").count() >= 3, "{bin}: {text}");
        assert!(
            calls("mremap(").all(|l| !l.contains("= -1")),
            "{bin}: {text}"
        );
        // The advice starts where a growing block's mapping starts.
        let grown: Vec<&str> = calls("mremap(")
            .filter_map(|l| l.strip_prefix("mremap(")?.split(',').next())
            .collect();
        let advised = calls("madvise(")
            .filter(|l| l.contains("MADV_HUGEPAGE") && l.ends_with("= 0"))
            .filter_map(|l| l.strip_prefix("madvise(")?.split(',').next());
        // (The engine's own advice of a long OLD's slot is another block.)
        let on_grown = advised.filter(|a| grown.contains(a)).count();
        assert_eq!(on_grown > 0, musl, "{bin}: {text}");
        assert_eq!(std::fs::read(d.path().join("f")).unwrap(), b"hello\n");
    }
}

/// `--report` of a single edit names a file that is not UTF-8 by
/// `path_b64` (its lossy text names another file), on success and refusal.
#[test]
fn report_names_a_non_utf8_file_by_path_b64() {
    use base64::Engine as _;
    use std::os::unix::ffi::OsStrExt;
    let d = scratch();
    let name = std::ffi::OsStr::from_bytes(b"\xff.txt");
    std::fs::write(d.path().join(name), "hello\n").unwrap();
    let full = d.path().canonicalize().unwrap().join(name);
    let coded = base64::engine::general_purpose::STANDARD.encode(full.as_os_str().as_bytes());
    let (o, n) = (b64("hello"), b64("bye"));
    let args: [&[u8]; 6] = [
        b"--report",
        b"--",
        b"\xff.txt",
        o.as_bytes(),
        n.as_bytes(),
        b"false",
    ];
    let r = run_argv(d.path(), &args);
    assert_eq!(
        r.stdout,
        format!(
            "__RESULT__{{\"count\":1,\"path_b64\":\"{coded}\",\"size\":4,\"sha256\":\"{}\",\"lines\":[1]}}\n",
            sha(b"bye\n")
        )
    );
    let r = run_argv(d.path(), &args);
    assert_eq!(
        r.stdout,
        format!(
            "__RESULT__{{\"error\":\"string_not_found\",\"path_b64\":\"{coded}\",\"size\":4,\"sha256\":\"{}\"}}\n",
            sha(b"bye\n")
        )
    );
    assert_eq!(std::fs::read(d.path().join(name)).unwrap(), b"bye\n");
}
