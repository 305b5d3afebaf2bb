//! A SIGKILL inside the commit window: between the
//! temp's link and its rename, made to wait there on a FIFO (test builds:
//! AS_EDIT_TEST_WINDOW_FIFO). The two calls are made by a child that a kill
//! of as-edit's pid or of its process group does not stop, so the edit
//! completes and nothing is left; made inline (as before, and as where
//! `clone` is refused: AS_EDIT_TEST_NO_CLONE) the same kill leaves the name.
//! Also: the parallel close of a transaction's originals under valgrind.

mod common;

use std::ffi::CString;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{b64, listing, BIN};

/// Waits for `cond`, polling; the bound is generous (a loaded machine),
/// and only a hang reaches it.
fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(2));
    }
}

fn hidden(dir: &Path) -> Vec<String> {
    listing(dir)
        .into_iter()
        .filter(|n| n.starts_with(".as-edit-") && n.ends_with(".tmp"))
        .collect()
}

/// Starts an edit of `dir/f` that stops between link and rename, kills it
/// (`group`: its process group) once the hidden name is there, then lets
/// whatever survived go on. Returns the exit signal.
fn kill_in_window(dir: &Path, group: bool, inline: bool) -> Option<i32> {
    std::fs::write(dir.join("f"), "hello\n").unwrap();
    let fifo = dir.join("window.fifo");
    let c = CString::new(fifo.as_os_str().as_bytes()).unwrap();
    // SAFETY: a C string we own.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
    // Held open for reading and writing: the child's open for reading
    // never waits, and the byte written below is there whenever it reads.
    let mut w = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&fifo)
        .unwrap();
    let mut cmd = Command::new(BIN);
    cmd.current_dir(dir)
        .args(["--", "f", &b64("hello"), &b64("bye")])
        .env("AS_EDIT_TEST_WINDOW_FIFO", &fifo)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0);
    if inline {
        cmd.env("AS_EDIT_TEST_NO_CLONE", "1");
    }
    let mut p = cmd.spawn().unwrap();
    wait_for("the hidden name of the linked temp", || {
        !hidden(dir).is_empty()
    });
    let pid = p.id() as i32;
    // SAFETY: signals to the process (group) we started.
    let r = unsafe {
        if group {
            libc::killpg(pid, libc::SIGKILL)
        } else {
            libc::kill(pid, libc::SIGKILL)
        }
    };
    assert_eq!(r, 0, "kill");
    let status = p.wait().unwrap();
    // Lets the child, if one survived, go on to its rename.
    w.write_all(b"x").unwrap();
    std::fs::remove_file(&fifo).unwrap();
    status.signal()
}

#[test]
fn a_sigkill_to_the_pid_or_its_group_in_the_commit_window_leaves_nothing() {
    for group in [false, true] {
        let d = common::scratch();
        let sig = kill_in_window(d.path(), group, false);
        assert_eq!(sig, Some(libc::SIGKILL), "as-edit itself was killed");
        // The child finishes the rename after its parent's death.
        wait_for("the child's rename", || hidden(d.path()).is_empty());
        assert_eq!(listing(d.path()), ["f"], "group kill: {group}");
        assert_eq!(
            std::fs::read_to_string(d.path().join("f")).unwrap(),
            "bye\n"
        );
    }
}

#[test]
fn the_same_kill_with_the_calls_made_inline_leaves_the_name() {
    // What the commit did before the child, and still does where clone is
    // refused: the kill lands between link and rename.
    let d = common::scratch();
    let sig = kill_in_window(d.path(), false, true);
    assert_eq!(sig, Some(libc::SIGKILL));
    let left = hidden(d.path());
    assert_eq!(left.len(), 1, "the linked temp's name is left: {left:?}");
    assert_eq!(
        std::fs::read_to_string(d.path().join("f")).unwrap(),
        "hello\n"
    );
    assert_eq!(
        std::fs::read_to_string(d.path().join(&left[0])).unwrap(),
        "bye\n",
        "the name holds the complete new content"
    );
}

/// Valgrind ends the whole process at a `clone` that is neither a thread's
/// nor a fork's, as the parallel close's workers are (src/fs/release.rs):
/// a transaction of two files or more committed, then died before its
/// result line. Under valgrind the originals are closed inline.
#[test]
fn a_transaction_under_valgrind_prints_its_result() {
    if Command::new("valgrind").arg("--version").output().is_err() {
        eprintln!("SKIPPED: valgrind is not installed (scripts/test.sh installs it)");
        return;
    }
    let d = common::scratch();
    let req = hello_files(d.path(), 3);
    let mut c = Command::new("valgrind");
    c.args(["-q", "--child-silent-after-fork=yes", BIN, "--stdin"]);
    let out = fed(c, d.path(), &req);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "__RESULT__{\"count\":3,\"files\":3}\n",
        "valgrind said: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(0));
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_all_bye(d.path(), 3);
}

/// The child killed on its own between its link and its rename (its own
/// pid: as-edit lives on): its report says "linked" with no errno, which
/// was read as a rename that failed with errno 0 (a panic in test builds,
/// `write_failed` "os error 0" in release ones, and, killed inside a
/// rename that had completed, "the file is unchanged" over a changed
/// file). It is a child that ended without a report: as-edit looks, finds
/// the name, and makes the rename itself.
#[test]
fn the_child_killed_alone_after_its_link_is_finished_by_as_edit() {
    let d = common::scratch();
    let dir = d.path();
    std::fs::write(dir.join("f"), "hello\n").unwrap();
    let fifo = dir.join("window.fifo");
    let c = CString::new(fifo.as_os_str().as_bytes()).unwrap();
    // SAFETY: a C string we own.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
    // Held open: the child's open for reading never waits; nothing is
    // written, so it stays in its read until killed.
    let _hold = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&fifo)
        .unwrap();
    let mut p = Command::new(BIN)
        .current_dir(dir)
        .args(["--", "f", &b64("hello"), &b64("bye")])
        .env("AS_EDIT_TEST_WINDOW_FIFO", &fifo)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for("the hidden name of the linked temp", || {
        !hidden(dir).is_empty()
    });
    let children = format!("/proc/{0}/task/{0}/children", p.id());
    let Ok(list) = std::fs::read_to_string(&children) else {
        p.kill().unwrap();
        p.wait().unwrap();
        eprintln!("SKIPPED: {children} is unreadable (a kernel without CONFIG_PROC_CHILDREN)");
        return;
    };
    let child: i32 = list.trim().parse().expect("exactly one child");
    // SAFETY: a signal to the child of the process we started.
    assert_eq!(unsafe { libc::kill(child, libc::SIGKILL) }, 0, "kill");
    let out = p.wait_with_output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "__RESULT__{\"count\":1}\n"
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(0));
    std::fs::remove_file(&fifo).unwrap();
    assert_eq!(listing(dir), ["f"]);
    assert_eq!(std::fs::read_to_string(dir.join("f")).unwrap(), "bye\n");
}

/// The originals are closed here while closes are quick, and by workers
/// from the first slow one (src/fs/release.rs). `AS_EDIT_TEST_SLOW_CLOSE`
/// takes every close for slow: workers are made (strace sees their
/// `clone`), and the transaction's answer and files are as without them.
#[test]
fn slow_closes_hand_the_rest_to_workers() {
    if Command::new("strace").arg("-V").output().is_err() {
        eprintln!("SKIPPED: strace is not installed (scripts/test.sh installs it)");
        return;
    }
    let d = common::scratch();
    let req = hello_files(d.path(), 20);
    let trace = tempfile::NamedTempFile::new().unwrap();
    let mut c = Command::new("strace");
    c.args(["-f", "-qq", "-e", "trace=clone", "-o"])
        .arg(trace.path());
    c.args([BIN, "--stdin"]).env("AS_EDIT_TEST_SLOW_CLOSE", "1");
    let out = fed(c, d.path(), &req);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "__RESULT__{\"count\":20,\"files\":20}\n"
    );
    assert_eq!(out.status.code(), Some(0));
    assert_all_bye(d.path(), 20);
    let trace = std::fs::read_to_string(trace.path()).unwrap();
    let workers = trace.lines().filter(|l| l.contains("CLONE_FILES")).count();
    // 19 left after the first close, two a worker (16 at most).
    assert_eq!(workers, 10, "{trace}");
}

/// `n` files `f00`.. holding `hello\n`, and the transaction editing each
/// to `bye`.
fn hello_files(dir: &Path, n: usize) -> String {
    let ops: Vec<String> = (0..n)
        .map(|i| {
            std::fs::write(dir.join(format!("f{i:02}")), "hello\n").unwrap();
            format!(r#"{{"op":"edit","path":"f{i:02}","edits":[{{"old":"hello","new":"bye"}}]}}"#)
        })
        .collect();
    format!(r#"{{"files":[{}]}}"#, ops.join(","))
}

/// The directory holds just `f00`.. `n` files, each `bye\n`.
fn assert_all_bye(dir: &Path, n: usize) {
    let names: Vec<String> = (0..n).map(|i| format!("f{i:02}")).collect();
    assert_eq!(listing(dir), names);
    for f in &names {
        assert_eq!(std::fs::read_to_string(dir.join(f)).unwrap(), "bye\n");
    }
}

/// Runs `c` in `dir` with `req` on its stdin.
fn fed(mut c: Command, dir: &Path, req: &str) -> std::process::Output {
    c.current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut p = c.spawn().unwrap();
    p.stdin.take().unwrap().write_all(req.as_bytes()).unwrap();
    p.wait_with_output().unwrap()
}

/// Every replaced original is closed exactly once, by us or by a worker,
/// and no close fails: transactions of 2, 3, 17 and 40 files, every close
/// taken for slow (`AS_EDIT_TEST_SLOW_CLOSE`) and not (strace's own cost
/// may make some slow), as `strace -f -y` sees the `openat` and `close`
/// calls (the workers share the descriptor table: numbers are global).
#[test]
fn every_original_is_closed_once() {
    if Command::new("strace").arg("-V").output().is_err() {
        eprintln!("SKIPPED: strace is not installed (scripts/test.sh installs it)");
        return;
    }
    for n in [2, 3, 17, 40] {
        for slow in [false, true] {
            let d = common::scratch();
            let names: Vec<String> = (0..n).map(|i| format!("f{i:02}")).collect();
            let req = hello_files(d.path(), n);
            let trace = tempfile::NamedTempFile::new().unwrap();
            let mut cmd = Command::new("strace");
            cmd.args(["-f", "-qq", "-y", "-e", "trace=openat,close", "-o"])
                .arg(trace.path())
                .args([BIN, "--stdin"])
                .current_dir(d.path())
                .stdin(Stdio::piped())
                .stdout(Stdio::piped());
            if slow {
                cmd.env("AS_EDIT_TEST_SLOW_CLOSE", "1");
            }
            let mut p = cmd.spawn().unwrap();
            p.stdin.take().unwrap().write_all(req.as_bytes()).unwrap();
            let out = p.wait_with_output().unwrap();
            let want = format!("__RESULT__{{\"count\":{n},\"files\":{n}}}\n");
            assert_eq!(String::from_utf8_lossy(&out.stdout), want);
            assert_all_bye(d.path(), n);
            let trace = std::fs::read_to_string(trace.path()).unwrap();
            let mut open = std::collections::HashMap::new();
            let mut closed = std::collections::BTreeMap::new();
            for l in trace.lines() {
                // strace pads the pid to five columns: "123  openat(".
                let call = l.split_once(' ').map_or("", |(_, c)| c.trim_start());
                if let Some(rest) = call.strip_prefix("openat(") {
                    let name = rest.split('"').nth(1).unwrap_or("");
                    let fd = rest.rsplit_once(") = ").map(|(_, r)| r.split('<').next());
                    if let (true, Some(Some(fd))) = (names.iter().any(|x| x == name), fd) {
                        assert!(
                            open.insert(fd.to_owned(), name.to_owned()).is_none(),
                            "{trace}"
                        );
                    }
                } else if let Some(rest) = call.strip_prefix("close(") {
                    let fd = rest.split(['<', ')']).next().unwrap();
                    if let Some(name) = open.remove(fd) {
                        *closed.entry(name).or_insert(0) += 1;
                    }
                }
            }
            assert!(!trace.contains("EBADF"), "{trace}");
            assert!(open.is_empty(), "left open {open:?} (n {n}, slow {slow})");
            let once: Vec<(String, i32)> = names.iter().map(|x| (x.clone(), 1)).collect();
            assert_eq!(
                closed.into_iter().collect::<Vec<_>>(),
                once,
                "n {n}, slow {slow}"
            );
        }
    }
}
