//! Every op that reads a file opens it one way (`fs::regular`): without
//! waiting (`O_NONBLOCK`), its type checked on the descriptor. A FIFO
//! with no writer, one swapped in between the type check and the open
//! (the test builds' `AS_EDIT_TEST_SWAP_BEFORE_OPEN` hook renames it over
//! the name there), and `/proc/kmsg` with nothing to read are answered at
//! once. Each run is bounded: should the binary block, it is killed and
//! the test fails instead of hanging.

mod common;
use common::*;

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const TOOLSET: [&str; 2] = ["--toolset", "agent_toolset_20260401"];

/// Long enough for a loaded machine, short of a hang.
const BOUND: Duration = Duration::from_secs(20);

/// Runs the binary in `dir` with `args`, `input` on stdin and `env` set,
/// waiting at most [`BOUND`] for it to exit: a run still going then is
/// killed and fails the test (the bug blocks in `open` or `read`).
fn bounded(dir: &Path, args: &[&str], input: &str, env: &[(&str, &Path)]) -> Run {
    let mut c = Command::new(BIN);
    c.args(args).current_dir(dir);
    for (k, v) in env {
        c.env(k, v);
    }
    let mut child = c
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawns");
    let mut pipe = child.stdin.take().expect("piped");
    pipe.write_all(input.as_bytes()).expect("request written");
    drop(pipe);
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            let _ = r.read_to_end(&mut v);
            v
        })
    };
    let out = drain(Box::new(child.stdout.take().expect("piped")));
    let err = drain(Box::new(child.stderr.take().expect("piped")));
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("waits") {
            break s;
        }
        if start.elapsed() > BOUND {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{args:?} {input}: no answer in {BOUND:?} (blocked), killed");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Run {
        stdout: String::from_utf8(out.join().expect("stdout")).expect("UTF-8"),
        stderr: String::from_utf8_lossy(&err.join().expect("stderr")).into_owned(),
        code: status.code().expect("exited, not killed"),
    }
}

fn mkfifo(p: &Path) {
    use std::os::unix::ffi::OsStrExt;
    rustix::fs::mknodat(
        rustix::fs::CWD,
        p.as_os_str().as_bytes(),
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o644),
        0,
    )
    .expect("mkfifo");
}

fn toolset(dir: &Path, name: &str, input: serde_json::Value, env: &[(&str, &Path)]) -> Run {
    let req = serde_json::json!({"name": name, "input": input}).to_string();
    bounded(dir, &TOOLSET, &req, env)
}

/// A FIFO with no writer, named: the reference's text at once.
#[test]
fn a_fifo_with_no_writer_is_refused_at_once() {
    let s = scratch();
    mkfifo(&s.path().join("p"));
    for range in [None, Some(serde_json::json!([1, 2]))] {
        let mut input = serde_json::json!({"file_path": "p"});
        if let Some(r) = range {
            input["view_range"] = r;
        }
        let r = toolset(s.path(), "read", input, &[]);
        assert_eq!(
            (r.stdout.as_str(), r.code),
            ("read: p: not a regular file", 1)
        );
    }
    let r = toolset(
        s.path(),
        "grep",
        serde_json::json!({"pattern": "x", "path": "p"}),
        &[],
    );
    assert_eq!(
        (r.stdout.as_str(), r.code),
        ("grep: p: not a regular file", 1)
    );
}

/// A FIFO renamed over the file between the type check and the open: the
/// open does not wait for a writer, and the descriptor's type refuses it,
/// in the toolset's `read` (which blocked in `open`) and `grep`, and in
/// protocol 4's `read`. The swap happened: the name holds the FIFO after.
#[test]
fn a_fifo_swapped_in_after_the_check_is_refused_at_once() {
    let fifo = |ft: &std::fs::FileType| std::os::unix::fs::FileTypeExt::is_fifo(ft);
    swapped_in_after_the_check(mkfifo, fifo, "FIFO");
}

/// `/proc/kmsg` (a regular file by its type) with nothing to read yet
/// answers at once: the toolset's `read` blocked in `read(2)` forever.
/// Root only; what it answers depends on whether the kernel has messages
/// waiting (their text) or not (`EAGAIN`'s text).
#[test]
fn proc_kmsg_answers_at_once() {
    let readable = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
        .open("/proc/kmsg");
    if let Err(e) = readable {
        return skip(&format!(
            "/proc/kmsg cannot be opened here ({e}): needs root"
        ));
    }
    for input in [
        serde_json::json!({"file_path": "kmsg"}),
        serde_json::json!({"file_path": "kmsg", "view_range": [1, 1]}),
    ] {
        let r = toolset(Path::new("/proc"), "read", input, &[]);
        let waiting =
            (r.stdout.as_str(), r.code) == ("read: kmsg: resource temporarily unavailable", 1);
        assert!(waiting || r.code == 0, "{r:?}");
    }
}

use std::os::unix::fs::OpenOptionsExt;

/// Unmounts `at` on drop, so a failing run leaves no mount behind.
struct Unmount(std::path::PathBuf);

impl Drop for Unmount {
    fn drop(&mut self) {
        let _ = Command::new("umount")
            .arg("-l")
            .arg(&self.0)
            .stderr(Stdio::null())
            .status();
    }
}

/// A device bind-mounted onto a file of a searched tree is listed as a
/// regular file (`readdir` gives the type of the name under the mount):
/// the toolset's `grep` of the directory skips it, as protocol 4's does,
/// and never opens it. (It opened `/dev/zero` and read it for ever, its
/// buffer growing while no line ended.) Root only (`mount --bind`).
#[test]
fn a_device_bind_mounted_into_a_searched_tree_is_skipped() {
    let s = scratch();
    let d = s.path();
    std::fs::create_dir(d.join("t")).unwrap();
    std::fs::write(d.join("t/a"), "hello\n").unwrap();
    std::fs::write(d.join("t/z"), "hello too\n").unwrap();
    let mounted = is_root()
        && Command::new("mount")
            .args(["--bind", "/dev/zero"])
            .arg(d.join("t/z"))
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
    if !mounted {
        return skip("needs root and mount --bind");
    }
    let _unmount = Unmount(d.join("t/z"));
    let r = toolset(
        d,
        "grep",
        serde_json::json!({"pattern": "hello", "path": "t"}),
        &[],
    );
    // The reference names a file by its absolute path.
    let hit = format!("{}/t/a:1:hello\n", d.canonicalize().unwrap().display());
    assert_eq!((r.stdout, r.code), (hit, 0), "{}", r.stderr);
    let r = bounded(
        d,
        &["--stdin"],
        r#"{"op":"grep","pattern":"hello","path":"t"}"#,
        &[],
    );
    let line = r#"{"matches":[{"path":"t/a","line":1,"text":"hello"}],"files_searched":1,"skipped_binary":0,"truncated":false}"#;
    assert_eq!((r.stdout, r.code), (format!("__RESULT__{line}\n"), 0));
}

/// A symlink renamed over the (already resolved) file between the type
/// check and the open is not followed: the toolset's `read` and `grep`
/// and protocol 4's `read` say it is not a regular file. (The toolset
/// followed it: to a dangling target it answered "no such file or
/// directory", to `/dev/tty` it opened the device; protocol 4's said "too
/// many levels of symbolic links".)
#[test]
fn a_symlink_swapped_in_after_the_check_is_not_followed() {
    let link = |p: &Path| std::os::unix::fs::symlink("nowhere", p).unwrap();
    swapped_in_after_the_check(link, std::fs::FileType::is_symlink, "symlink");
}

/// `make` puts an entry of the kind `is` tells (`kind` in protocol 4's
/// words) at a name the test hook renames over `f` between the type check
/// and the open: the toolset's `read` (with and without a range) and
/// `grep` and protocol 4's `read` refuse it at once, and the swap happened.
fn swapped_in_after_the_check(
    make: impl Fn(&Path),
    is: impl Fn(&std::fs::FileType) -> bool,
    kind: &str,
) {
    let s = scratch();
    let d = s.path();
    let swap = d.join("swap");
    let fresh = || {
        std::fs::write(d.join("f"), "x\n").unwrap();
        make(&swap);
    };
    let after = |r: &Run, text: &str, code: i32| {
        assert_eq!((r.stdout.as_str(), r.code), (text, code), "{}", r.stderr);
        let ft = std::fs::symlink_metadata(d.join("f")).unwrap().file_type();
        assert!(is(&ft), "swapped");
        assert_eq!(listing(d), ["f"]);
        std::fs::remove_file(d.join("f")).unwrap();
    };
    let env: &[(&str, &Path)] = &[("AS_EDIT_TEST_SWAP_BEFORE_OPEN", &swap)];
    for range in [None, Some(serde_json::json!([1, 1]))] {
        fresh();
        let mut input = serde_json::json!({"file_path": "f"});
        if let Some(r) = range {
            input["view_range"] = r;
        }
        let r = toolset(d, "read", input, env);
        after(&r, "read: f: not a regular file", 1);
    }
    fresh();
    let input = serde_json::json!({"pattern": "x", "path": "f"});
    let r = toolset(d, "grep", input, env);
    after(&r, "grep: f: not a regular file", 1);
    fresh();
    let r = bounded(d, &["--stdin"], r#"{"op":"read","path":"f"}"#, env);
    let line =
        format!(r#"{{"error":"file_not_found","detail":"f is a {kind}, not a regular file"}}"#);
    after(&r, &format!("__RESULT__{line}\n"), 1);
}
