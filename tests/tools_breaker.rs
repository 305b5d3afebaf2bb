//! Defects found by trying to break the read-side toolset, where a
//! scenario folder cannot hold the case: answers with mtimes, and files
//! whose size is not what `fstat` says (/proc).

mod common;

use std::os::unix::fs::{symlink, MetadataExt};
use std::path::Path;

use base64::Engine as _;
use common::{run_stdin, scratch};
use serde_json::Value;

fn ask(dir: &Path, req: &str) -> (Value, i32) {
    let r = run_stdin(dir, &["--stdin"], req.as_bytes());
    assert_eq!(r.stderr, "");
    assert_eq!(r.stdout.matches('\n').count(), 1, "{}", r.stdout);
    let json = r.stdout.strip_prefix("__RESULT__").expect("a result line");
    (serde_json::from_str(json).expect("valid JSON"), r.code)
}

/// A raw read's bytes never pass the `size` it answers, and `eof` says
/// they reached it: /proc files have an `st_size` of 0 but bytes, as a
/// file growing while it is read has more bytes than its `fstat` said.
/// Main answered /proc/self/status's bytes with `"size":0`.
#[test]
fn raw_read_size_agrees_with_the_bytes_of_a_proc_file() {
    let d = scratch();
    for req in [
        r#"{"op":"read","path":"/proc/self/status","raw":true}"#,
        r#"{"op":"read","path":"/proc/self/status","raw":true,"length":5}"#,
        r#"{"op":"read","path":"/proc/self/status","raw":true,"offset":3,"length":100000}"#,
        r#"{"op":"read","path":"/proc/self/status","raw":true,"offset":1000000}"#,
    ] {
        let (v, code) = ask(d.path(), req);
        assert_eq!(code, 0, "{req}: {v}");
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(v["b64"].as_str().unwrap())
            .unwrap();
        let end = v["offset"].as_u64().unwrap() + bytes.len() as u64;
        let size = v["size"].as_u64().unwrap();
        let eof = v["eof"].as_bool().unwrap();
        assert!(end <= size || bytes.is_empty(), "{req}: {v}");
        assert_eq!(eof, end >= size, "{req}: {v}");
        if req.contains("\"length\":5") {
            assert_eq!(bytes, b"Name:");
            assert!(!eof && size > 5, "{req}: {v}");
        } else if req.contains("1000000") {
            assert!(bytes.is_empty() && eof, "{req}: {v}");
        } else {
            assert!(bytes.len() > 50 && eof, "{req}: {v}");
        }
    }
}

/// `stat` of `L/`, `L` a symlink to a directory, answers the directory
/// (as `lstat("L/")` does: the slash follows the link); `LF/`, a link to
/// a file, is the entry's ENOTDIR error (scenario 770). Main answered the
/// symlink itself.
#[test]
fn stat_with_a_trailing_slash_follows_a_link_to_a_directory() {
    let d = scratch();
    std::fs::create_dir(d.path().join("sub")).unwrap();
    std::fs::write(d.path().join("sub/f"), "x\n").unwrap();
    symlink("sub", d.path().join("l")).unwrap();
    symlink("sub/f", d.path().join("lf")).unwrap();
    let (v, code) = ask(d.path(), r#"{"op":"stat","paths":["l/","l/.","lf/","l"]}"#);
    assert_eq!(code, 0, "{v}");
    let m = std::fs::metadata(d.path().join("sub")).unwrap();
    let mtime = m.mtime() as i128 * 1_000_000_000 + m.mtime_nsec() as i128;
    for (i, p) in ["l/", "l/."].iter().enumerate() {
        let e = &v["entries"][i];
        assert_eq!(e["path"], *p);
        assert_eq!(e["type"], "dir", "{e}");
        assert_eq!(e["size"].as_u64(), Some(m.size()));
        assert_eq!(e["mtime_ns"].to_string(), mtime.to_string());
        assert_eq!(e["mode"], format!("{:04o}", m.mode() & 0o7777));
        assert!(e.get("target").is_none(), "{e}");
    }
    assert_eq!(
        v["entries"][2],
        serde_json::json!({"path": "lf/", "error": "file_not_found", "detail": "lf/: a component of the path is not a directory"})
    );
    assert_eq!(v["entries"][3]["type"], "symlink");
    assert_eq!(v["entries"][3]["target"], "sub");
}

/// Runs `req` as uid 65534 (`--request-b64`: `setpriv` gives no stdin).
fn ask_as_nobody(dir: &Path, req: &str) -> (Value, i32) {
    let b64 = base64::engine::general_purpose::STANDARD.encode(req);
    let r = common::run_as_nobody(dir, &[b"--request-b64", b64.as_bytes()]);
    assert_eq!(r.stderr, "");
    let json = r.stdout.strip_prefix("__RESULT__").expect("a result line");
    (serde_json::from_str(json).expect("valid JSON"), r.code)
}

/// A file or directory `grep` cannot read is counted in `"unreadable"`
/// (main searched the rest and said nothing: an agent was told a file
/// with a match had none), `glob` counts the directories it could not
/// enter, and a `path` that cannot be opened is `read_failed`, as `list`
/// and `read` answer it (main: `file_not_found`, as if it did not exist).
#[test]
fn grep_and_glob_say_what_they_could_not_read() {
    use std::os::unix::fs::PermissionsExt;
    if !common::setpriv_available() {
        return common::skip("needs root and setpriv to drop to an unprivileged user");
    }
    let d = scratch();
    let p = d.path();
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::create_dir(p.join("ok")).unwrap();
    std::fs::create_dir(p.join("closed")).unwrap();
    for f in ["ok/f", "closed/g", "secret"] {
        std::fs::write(p.join(f), "needle\n").unwrap();
    }
    for (f, mode) in [("secret", 0o000), ("closed", 0o000)] {
        std::fs::set_permissions(p.join(f), std::fs::Permissions::from_mode(mode)).unwrap();
    }
    let (v, code) = ask_as_nobody(p, r#"{"op":"grep","pattern":"needle"}"#);
    assert_eq!(code, 0, "{v}");
    assert_eq!(
        v.to_string(),
        r#"{"files_searched":1,"matches":[{"line":1,"path":"ok/f","text":"needle"}],"skipped_binary":0,"truncated":false,"unreadable":2}"#
    );
    let (v, _) = ask_as_nobody(p, r#"{"op":"grep","pattern":"needle","output":"files"}"#);
    assert_eq!(v["unreadable"], 2, "{v}");
    let (v, code) = ask_as_nobody(p, r#"{"op":"glob","pattern":"**"}"#);
    assert_eq!(code, 0, "{v}");
    let paths: Vec<&str> = v["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["ok/f", "secret"]);
    assert_eq!(
        (&v["total"], &v["unreadable"]),
        (&2.into(), &1.into()),
        "{v}"
    );
    let (v, _) = ask_as_nobody(p, r#"{"op":"grep","pattern":"needle","path":"ok"}"#);
    assert!(v.get("unreadable").is_none(), "absent when 0: {v}");
    for (req, what) in [
        (
            r#"{"op":"grep","pattern":"needle","path":"secret"}"#,
            "secret",
        ),
        (
            r#"{"op":"grep","pattern":"needle","path":"closed"}"#,
            "closed",
        ),
        (r#"{"op":"glob","pattern":"*","path":"closed"}"#, "closed"),
    ] {
        let (v, code) = ask_as_nobody(p, req);
        assert_eq!(code, 1, "{req}: {v}");
        assert_eq!(v["error"], "read_failed", "{req}: {v}");
        let detail = v["detail"].as_str().unwrap();
        assert!(
            detail.contains(what) && detail.contains("Permission denied"),
            "{req}: {v}"
        );
    }
}
