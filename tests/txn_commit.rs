//! A transaction's commit across bind mounts, files whose inode flags keep
//! their name, the modes of what it makes, and the descriptors it holds. Each case asserts the exact
//! result line (or the `apply_patch` mode's output), the bytes, modes and
//! inodes, and what is left in the directory.

mod common;

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;

/// The binary (or its `apply_patch` link) under `umask`, in `dir`, with
/// `input` on stdin.
fn run_umask(bin: &Path, dir: &Path, umask: u32, args: &[&str], input: &[u8]) -> Run {
    let mut c = Command::new(bin);
    c.args(args);
    // SAFETY: umask is async-signal-safe and touches only the child.
    unsafe {
        c.pre_exec(move || {
            libc::umask(umask as libc::mode_t);
            Ok(())
        });
    }
    run_with_stdin(c, dir, input)
}

/// `BIN` linked as `apply_patch` in a directory of its own.
fn apply_patch_link() -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let link = d.path().join("apply_patch");
    std::os::unix::fs::symlink(BIN, &link).unwrap();
    (d, link)
}

// ------------------------------------------------------------ item 10

/// A create with `overwrite` and an explicit `mode` over an existing 0600
/// file left it 0600, exit 0, nothing said. The mode is applied (before
/// the umask, as for a new file); without one the replaced file keeps its
/// own mode, and a new file gets 0644 before the umask.
#[test]
fn an_explicit_mode_applies_to_the_file_a_create_replaces() {
    let d = scratch();
    let p = write_file(d.path(), "f", b"old\n", 0o600);
    let bin = Path::new(BIN);
    let req = |body: &str| format!(r#"{{"files":[{body}]}}"#);
    let ok = "__RESULT__{\"count\":0,\"files\":1}\n";
    let cases: [(&str, u32, u32); 5] = [
        // (the op, the umask, the mode after)
        (
            r#"{"op":"create","path":"f","content":"a\n","overwrite":true,"mode":"0755"}"#,
            0o022,
            0o755,
        ),
        (
            r#"{"op":"create","path":"f","content":"b\n","overwrite":true}"#,
            0o022,
            0o755,
        ),
        (
            r#"{"op":"create","path":"f","content":"c\n","overwrite":true,"mode":"0777"}"#,
            0o027,
            0o750,
        ),
        (
            r#"{"op":"create","path":"f","content":"d\n","overwrite":true,"mode":"0600"}"#,
            0o022,
            0o600,
        ),
        (
            r#"{"op":"create","path":"f","content":"e\n","overwrite":true}"#,
            0o000,
            0o600,
        ),
    ];
    for (k, (op, umask, want)) in cases.iter().enumerate() {
        let r = run_umask(bin, d.path(), *umask, &["--stdin"], req(op).as_bytes());
        assert_eq!((r.stdout.as_str(), r.code), (ok, 0), "{op}: {}", r.stderr);
        let content = format!("{}\n", ["a", "b", "c", "d", "e"][k]);
        assert_eq!(std::fs::read(&p).unwrap(), content.as_bytes(), "{op}");
        assert_eq!(mode(&p), *want, "{op} under umask {umask:o}");
        assert_eq!(listing(d.path()), vec!["f"]);
    }
    // Chained in one transaction: a later create without a mode keeps the
    // earlier one's.
    let body = r#"{"op":"create","path":"f","content":"x\n","overwrite":true,"mode":"0640"},{"op":"create","path":"f","content":"y\n","overwrite":true}"#;
    let r = run_umask(bin, d.path(), 0o022, &["--stdin"], req(body).as_bytes());
    assert_result(&r, r#"{"count":0,"files":1}"#, 0);
    assert_eq!(
        (std::fs::read(&p).unwrap(), mode(&p)),
        (b"y\n".to_vec(), 0o640)
    );
    // New files: the mode given, else 0644, both before the umask; the
    // directories made: 0755 before it.
    let body = r#"{"op":"create","path":"n/g","content":"g\n","mode":"0640"},{"op":"create","path":"h","content":"h\n"}"#;
    let r = run_umask(bin, d.path(), 0o002, &["--stdin"], req(body).as_bytes());
    assert_result(&r, r#"{"count":0,"files":2}"#, 0);
    assert_eq!(mode(&d.path().join("n/g")), 0o640);
    assert_eq!(mode(&d.path().join("h")), 0o644);
    assert_eq!(mode(&d.path().join("n")), 0o755);
    // Dry run: nothing is made or changed.
    let body = r#"{"op":"create","path":"f","content":"z\n","overwrite":true,"mode":"0700"}"#;
    let r = run_umask(
        bin,
        d.path(),
        0o022,
        &["--stdin", "--dry-run"],
        req(body).as_bytes(),
    );
    assert_result(&r, r#"{"count":0,"files":1}"#, 0);
    assert_eq!(
        (std::fs::read(&p).unwrap(), mode(&p)),
        (b"y\n".to_vec(), 0o640)
    );
    assert_eq!(listing(d.path()), vec!["f", "h", "n"]);
}

// ------------------------------------------------------------ item 11

/// The `apply_patch` mode gave added files and directories 0644/0755
/// whatever the umask; Codex's binary gives 0666/0777 less the umask
/// (checked against `@openai/codex`'s under umask 022, 002 and 000). A
/// file Add File replaces keeps its mode (as Codex's), and `--patch` keeps
/// the request's rule (0644/0755 before the umask).
#[test]
fn the_apply_patch_mode_follows_the_umask_for_what_it_adds() {
    let (_l, link) = apply_patch_link();
    let patch = "*** Begin Patch\n*** Add File: n/m/new.txt\n+hi\n*** Add File: top.txt\n+x\n*** Add File: old.txt\n+o\n*** End Patch\n";
    for (umask, file, dir) in [
        (0o022, 0o644, 0o755),
        (0o002, 0o664, 0o775),
        (0o000, 0o666, 0o777),
        (0o077, 0o600, 0o700),
    ] {
        let d = tempfile::tempdir().unwrap();
        let w = d.path();
        let old = write_file(w, "old.txt", b"before\n", 0o600);
        let r = run_umask(&link, w, umask, &[patch], b"");
        assert_eq!(
            (r.stdout.as_str(), r.stderr.as_str(), r.code),
            (
                "Success. Updated the following files:\nA n/m/new.txt\nA top.txt\nA old.txt\n",
                "",
                0
            ),
            "umask {umask:o}"
        );
        let modes = [
            mode(&w.join("n")),
            mode(&w.join("n/m")),
            mode(&w.join("n/m/new.txt")),
            mode(&w.join("top.txt")),
            mode(&old),
        ];
        assert_eq!(modes, [dir, dir, file, file, 0o600], "umask {umask:o}");
        assert_eq!(std::fs::read(&old).unwrap(), b"o\n");
        assert_eq!(listing(w), vec!["n", "old.txt", "top.txt"]);
    }
    // `--patch`: the request's rule, under the same umask.
    let d = tempfile::tempdir().unwrap();
    let r = run_umask(
        Path::new(BIN),
        d.path(),
        0o000,
        &["--patch"],
        patch.as_bytes(),
    );
    assert_result(&r, r#"{"count":0,"files":3}"#, 0);
    let w = d.path();
    assert_eq!(
        [
            mode(&w.join("n")),
            mode(&w.join("n/m/new.txt")),
            mode(&w.join("top.txt"))
        ],
        [0o755, 0o644, 0o644]
    );
}

// ------------------------------------------------------------ item 9

/// A scratch directory on the real disk (tmpfs may lack inode flags).
fn scratch_on_disk() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("as-edit-flags")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap()
}

/// Clears inode flags on drop, so a failed assertion cannot leave an
/// undeletable file behind.
struct Flagged(PathBuf);

impl Drop for Flagged {
    fn drop(&mut self) {
        if let Ok(f) = std::fs::File::open(&self.0) {
            let _ = rustix::fs::ioctl_setflags(&f, rustix::fs::IFlags::empty());
        }
    }
}

/// Sets `flag` on `p`; false (the reason printed) where that cannot be done.
fn set_flag(p: &Path, flag: rustix::fs::IFlags) -> bool {
    if !is_root() {
        skip("chattr +i/+a needs CAP_LINUX_IMMUTABLE (root)");
        return false;
    }
    let f = std::fs::File::open(p).unwrap();
    let before = match rustix::fs::ioctl_getflags(&f) {
        Ok(b) => b,
        Err(e) => {
            skip(&format!("this file system has no inode flags: {e}"));
            return false;
        }
    };
    if let Err(e) = rustix::fs::ioctl_setflags(&f, before | flag) {
        skip(&format!("this file system refuses {flag:?}: {e}"));
        return false;
    }
    true
}

/// Deleting or moving a `chattr +i`/`+a` file (and a patch's Delete File
/// or Move to) failed inside the commit: `write_failed`, rolled back,
/// which sends hosts to the transfer fallback. Refused before the commit,
/// `permission_denied` naming the flag, as an edit of it is.
fn flagged_file_keeps_its_name(flag: rustix::fs::IFlags, words: &str) {
    let d = scratch_on_disk();
    let w = d.path();
    let p = write_file(w, "f", b"abc\n", 0o644);
    let other = write_file(w, "o", b"o\n", 0o644);
    if !set_flag(&p, flag) {
        return;
    }
    let _guard = Flagged(p.clone());
    let (ino, oino) = (inode(&p), inode(&other));
    let line = |n: usize, i: usize, op: &str| {
        format!(
            r#"{{"error":"permission_denied","detail":"file {i} of {n} ({op}): {}/f is {words}","file":{i}}}"#,
            w.display()
        )
    };
    let files = |ops: &str| format!(r#"{{"files":[{ops}]}}"#);
    let edit_o = r#"{"op":"edit","path":"o","edits":[{"old":"o","new":"p"}]}"#;
    let cases: Vec<(Vec<&str>, String, String)> = vec![
        (
            vec!["--stdin"],
            files(r#"{"op":"delete","path":"f"}"#),
            line(1, 1, "f"),
        ),
        (
            vec!["--stdin"],
            files(r#"{"op":"move","path":"f","to":"g"}"#),
            line(1, 1, "f"),
        ),
        (
            vec!["--stdin"],
            files(r#"{"op":"move","path":"f","to":"sub/g"}"#),
            line(1, 1, "f"),
        ),
        // Replaced by a move onto it.
        (
            vec!["--stdin"],
            files(r#"{"op":"move","path":"o","to":"f","overwrite":true}"#),
            line(1, 1, "o"),
        ),
        (
            vec!["--stdin", "--dry-run"],
            files(&format!(r#"{edit_o},{{"op":"delete","path":"f"}}"#)),
            line(2, 2, "f"),
        ),
        (
            vec!["--patch"],
            "*** Begin Patch\n*** Update File: o\n@@\n-o\n+p\n*** Delete File: f\n*** End Patch\n"
                .into(),
            line(2, 2, "f"),
        ),
    ];
    for (args, input, want) in cases {
        let r = run_stdin(w, &args, input.as_bytes());
        assert_result(&r, &want, 1);
        assert_unchanged(&p, b"abc\n", ino);
        assert_unchanged(&other, b"o\n", oino);
        assert_eq!(listing(w), vec!["f", "o"], "{input}");
    }
}

#[test]
fn deleting_or_moving_an_immutable_file_is_permission_denied() {
    flagged_file_keeps_its_name(
        rustix::fs::IFlags::IMMUTABLE,
        "immutable (chattr +i): it cannot be written, replaced or removed until the flag is cleared",
    );
}

#[test]
fn deleting_or_moving_an_append_only_file_is_permission_denied() {
    flagged_file_keeps_its_name(
        rustix::fs::IFlags::APPEND,
        "append-only (chattr +a): it can only be appended to, not rewritten, replaced or removed",
    );
}

// ------------------------------------------------------------ item 5

/// A plain move between two bind mounts of one file system (one st_dev)
/// failed `write_failed` EXDEV, rolled back, naming a temp that did not
/// exist: the copy was chosen by comparing device numbers. The rename's
/// EXDEV chooses it now: the file arrives with its bytes and mode, the
/// source name is gone, nothing else is left; a move with overwrite onto
/// an existing file across the mounts too.
#[test]
fn a_plain_move_between_bind_mounts_of_one_file_system_is_copied() {
    if !is_root() {
        return skip("mount --bind in a new mount namespace needs root");
    }
    let d = scratch();
    let w = d.path();
    for s in ["a", "b"] {
        std::fs::create_dir(w.join(s)).unwrap();
    }
    write_file(&w.join("a"), "f", b"x\n", 0o640);
    write_file(&w.join("a"), "g", b"y\n", 0o600);
    write_file(&w.join("b"), "g", b"old\n", 0o644);
    let req = r#"{"files":[{"op":"move","path":"a/f","to":"b/sub/f"},{"op":"move","path":"a/g","to":"b/g","overwrite":true}]}"#;
    let script = format!("mount --bind a a && mount --bind b b && exec {BIN} --stdin");
    let mut c = Command::new("unshare");
    c.args(["--mount", "sh", "-c", &script]);
    let r = run_with_stdin(c, w, req.as_bytes());
    if r.code != 0 && r.stderr.contains("unshare") || r.stderr.contains("mount:") {
        return skip(&format!(
            "no mount namespace or bind mount here: {}",
            r.stderr
        ));
    }
    assert_result(&r, r#"{"count":0,"files":4}"#, 0);
    assert_eq!(listing(&w.join("a")), Vec::<String>::new());
    assert_eq!(listing(&w.join("b")), vec!["g", "sub"]);
    assert_eq!(listing(&w.join("b/sub")), vec!["f"]);
    let (f, g) = (w.join("b/sub/f"), w.join("b/g"));
    assert_eq!(
        (std::fs::read(&f).unwrap(), mode(&f)),
        (b"x\n".to_vec(), 0o640)
    );
    assert_eq!(
        (std::fs::read(&g).unwrap(), mode(&g)),
        (b"y\n".to_vec(), 0o600)
    );
}

// ------------------------------------------------------------ items 14, 15

/// `n` files `f0.txt`… holding "a\nb\n" in `dir`, and a patch changing
/// each one's `b` to `c`.
fn many(dir: &Path, n: usize) -> String {
    let mut p = String::from("*** Begin Patch\n");
    for i in 0..n {
        std::fs::write(dir.join(format!("f{i}.txt")), "a\nb\n").unwrap();
        p.push_str(&format!("*** Update File: f{i}.txt\n@@\n a\n-b\n+c\n"));
    }
    p + "*** End Patch\n"
}

/// `cmd` under RLIMIT_NOFILE `n` (soft and hard).
fn nofile(cmd: &mut Command, n: u64) {
    // SAFETY: setrlimit only touches the child.
    unsafe {
        cmd.pre_exec(move || {
            let lim = libc::rlimit {
                rlim_cur: n,
                rlim_max: n,
            };
            match libc::setrlimit(libc::RLIMIT_NOFILE, &lim) {
                0 => Ok(()),
                _ => Err(std::io::Error::last_os_error()),
            }
        });
    }
}

/// Item 14, the issue's reproduction: under `ulimit -n 1024` a 600-file
/// patch in the `apply_patch` mode failed EMFILE ("retry") holding two
/// descriptors per file; Codex applies it. Each file now holds one (its
/// lock, then its temp), so it applies; and 256 files through `--patch`
/// and a `{"files"}` request apply under 270.
#[test]
fn six_hundred_files_apply_under_a_limit_of_1024() {
    let (_l, link) = apply_patch_link();
    let d = tempfile::tempdir().unwrap();
    let patch = many(d.path(), 600);
    let mut c = Command::new(&link);
    c.arg(&patch);
    nofile(&mut c, 1024);
    let r = run_with_stdin(c, d.path(), b"");
    let mut out = String::from("Success. Updated the following files:\n");
    for i in 0..600 {
        out.push_str(&format!("M f{i}.txt\n"));
    }
    assert_eq!(
        (r.stdout.as_str(), r.stderr.as_str(), r.code),
        (out.as_str(), "", 0)
    );
    for i in 0..600 {
        assert_eq!(
            std::fs::read(d.path().join(format!("f{i}.txt"))).unwrap(),
            b"a\nc\n"
        );
    }
    assert_eq!(listing(d.path()).len(), 600, "nothing else left");

    let d = tempfile::tempdir().unwrap();
    let patch = many(d.path(), 256);
    let mut c = Command::new(BIN);
    c.arg("--patch");
    nofile(&mut c, 270);
    let r = run_with_stdin(c, d.path(), patch.as_bytes());
    assert_result(&r, r#"{"count":256,"files":256}"#, 0);
    let ops: Vec<String> = (0..256)
        .map(|i| format!(r#"{{"op":"edit","path":"f{i}.txt","edits":[{{"old":"c","new":"d"}}]}}"#))
        .collect();
    let mut c = Command::new(BIN);
    c.arg("--stdin");
    nofile(&mut c, 270);
    let r = run_with_stdin(
        c,
        d.path(),
        format!(r#"{{"files":[{}]}}"#, ops.join(",")).as_bytes(),
    );
    assert_result(&r, r#"{"count":256,"files":256}"#, 0);
    assert_eq!(std::fs::read(d.path().join("f255.txt")).unwrap(), b"a\nd\n");
    assert_eq!(listing(d.path()).len(), 256, "nothing else left");
}

/// Item 15: a patch out of descriptors said "retry" (its temp's EMFILE
/// skipped the transaction's mapping); it gives the bound a `{"files"}`
/// request gives, in both modes, and changes nothing.
#[test]
fn a_patch_out_of_descriptors_gives_the_transaction_bound() {
    let tail = ": Too many open files (os error 24): a transaction holds, until its commit, a descriptor per file (its lock, then its new content), one per directory and per directory it creates, and RLIMIT_NOFILE allows 100 (hard limit 100); nothing was changed: send fewer files per request, or raise the hard limit (ulimit -Hn)";
    let d = tempfile::tempdir().unwrap();
    let w = d.path();
    let patch = many(w, 250);
    let mut c = Command::new(BIN);
    c.arg("--patch");
    nofile(&mut c, 100);
    let r = run_with_stdin(c, w, patch.as_bytes());
    assert_eq!((r.code, r.stderr.as_str()), (1, ""));
    let v: serde_json::Value =
        serde_json::from_str(r.stdout.strip_prefix("__RESULT__").unwrap().trim_end()).unwrap();
    assert_eq!(v["error"], "write_failed");
    let detail = v["detail"].as_str().unwrap();
    assert!(
        detail.starts_with("file ") && detail.ends_with(tail),
        "{detail}"
    );
    let (_l, link) = apply_patch_link();
    let mut c = Command::new(&link);
    c.arg(&patch);
    nofile(&mut c, 100);
    let r = run_with_stdin(c, w, b"");
    assert_eq!((r.stdout.as_str(), r.code), ("", 1));
    let no = "\nNo files were modified (the patch applies all or nothing).\n";
    assert!(r.stderr.starts_with("write_failed: file "), "{}", r.stderr);
    assert!(r.stderr.ends_with(&format!("{tail}{no}")), "{}", r.stderr);
    for i in 0..250 {
        assert_eq!(
            std::fs::read(w.join(format!("f{i}.txt"))).unwrap(),
            b"a\nb\n"
        );
    }
    assert_eq!(listing(w).len(), 250, "nothing else left");
}

/// Item 14's stale check: a file released after staging (a transaction
/// the limit would not let hold two descriptors per file) and changed
/// before the commit, in place or replaced, is refused at its commit
/// (`conflict`) and every file keeps its bytes; without the change, the
/// same transaction commits.
#[test]
fn a_released_original_changed_before_the_commit_is_a_conflict() {
    for how in ["append", "replace"] {
        let d = tempfile::tempdir().unwrap();
        let w = d.path();
        let n = 40;
        let ops: Vec<String> = (0..n)
            .map(|i| {
                std::fs::write(w.join(format!("f{i}")), "a\n").unwrap();
                format!(r#"{{"op":"edit","path":"f{i}","edits":[{{"old":"a","new":"b"}}]}}"#)
            })
            .collect();
        let req = format!(r#"{{"files":[{}]}}"#, ops.join(","));
        let fifo = w.join("pause");
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
        )
        .unwrap();
        let mut c = Command::new(BIN);
        c.arg("--stdin").env("AS_EDIT_TEST_TXN_PAUSE", &fifo);
        // 40 files, two descriptors each, do not fit in 64: released.
        nofile(&mut c, 64);
        let dir = w.to_owned();
        let changer = std::thread::spawn(move || {
            // The FIFO opens once the binary waits on it, every file staged
            // (a binary that exits before never makes the test hang).
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
            let mut pause = loop {
                use std::os::unix::fs::OpenOptionsExt;
                let o = std::fs::OpenOptions::new()
                    .write(true)
                    .custom_flags(libc::O_NONBLOCK)
                    .open(dir.join("pause"));
                match o {
                    Ok(f) => break Some(f),
                    Err(_) if std::time::Instant::now() > deadline => break None,
                    Err(_) => std::thread::sleep(std::time::Duration::from_millis(10)),
                }
            };
            let p = dir.join("f7");
            match how {
                "append" => {
                    use std::io::Write;
                    let mut f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
                    f.write_all(b"z\n").unwrap();
                }
                _ => {
                    std::fs::write(dir.join("new"), "a\n").unwrap();
                    std::fs::rename(dir.join("new"), &p).unwrap();
                }
            }
            if let Some(f) = pause.as_mut() {
                use std::io::Write;
                let _ = f.write_all(b"x");
            }
        });
        let r = run_with_stdin(c, w, req.as_bytes());
        changer.join().unwrap();
        let p = w.join("f7");
        assert_result(
            &r,
            &format!(
                r#"{{"error":"conflict","detail":"file 8 of {n} (f7): {} was changed by another writer while it was being edited; nothing was written","file":8}}"#,
                p.display()
            ),
            1,
        );
        let want: &[u8] = if how == "append" { b"a\nz\n" } else { b"a\n" };
        assert_eq!(std::fs::read(&p).unwrap(), want);
        for i in (0..n).filter(|i| *i != 7) {
            assert_eq!(
                std::fs::read(w.join(format!("f{i}"))).unwrap(),
                b"a\n",
                "f{i}"
            );
        }
        assert_eq!(listing(w).len(), n + 1, "{how}: nothing else left");
    }
}

/// Item 14's released originals and the lock order (found by the helper
/// that tried to break the commit): a transaction that released `e`
/// once staged, and still holds `d` (deleted: no temp, never released),
/// waited at its commit for `e`'s lock held by a writer that took `e` (the
/// lower inode) and waits for `d`: a cycle that only `--lock-timeout`
/// ended, both stalled 10 s and the writer answered `busy`. The relock no
/// longer waits: the transaction is `busy` at once with nothing changed,
/// and the writer commits.
#[test]
fn a_released_original_is_relocked_without_waiting_in_a_cycle() {
    use std::io::Write;
    use std::os::unix::fs::MetadataExt;
    use std::process::Stdio;
    use std::time::{Duration, Instant};
    let d = tempfile::tempdir().unwrap();
    let w = d.path();
    std::fs::write(w.join("p"), "p\n").unwrap();
    std::fs::write(w.join("q"), "q\n").unwrap();
    let ino = |n: &str| std::fs::metadata(w.join(n)).unwrap().ino();
    // `e`: the lower inode, which the writer locks first.
    let (e, dl) = if ino("p") < ino("q") {
        ("p", "q")
    } else {
        ("q", "p")
    };
    let n = 40;
    let mut ops = vec![
        format!(r#"{{"op":"delete","path":"{dl}"}}"#),
        format!(r#"{{"op":"edit","path":"{e}","edits":[{{"old":"{e}","new":"E1"}}]}}"#),
    ];
    for i in 0..n {
        std::fs::write(w.join(format!("g{i}")), "x\n").unwrap();
        ops.push(format!(
            r#"{{"op":"edit","path":"g{i}","edits":[{{"old":"x","new":"y"}}]}}"#
        ));
    }
    let t1_req = format!(r#"{{"files":[{}]}}"#, ops.join(","));
    let t2_req = format!(
        r#"{{"files":[{{"op":"edit","path":"{e}","edits":[{{"old":"{e}","new":"E2"}}]}},{{"op":"edit","path":"{dl}","edits":[{{"old":"{dl}","new":"D2"}}]}}]}}"#
    );
    let fifo = w.join("pause");
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
    )
    .unwrap();
    let spawn = |c: &mut Command, req: &str| {
        let mut ch = c
            .current_dir(w)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        ch.stdin.take().unwrap().write_all(req.as_bytes()).unwrap();
        ch
    };
    let mut c1 = Command::new(BIN);
    c1.args(["--stdin", "--lock-timeout", "10"])
        .env("AS_EDIT_TEST_TXN_PAUSE", &fifo);
    // 42 files, two descriptors each, do not fit in 64: released.
    nofile(&mut c1, 64);
    let t1 = spawn(&mut c1, &t1_req);
    // The FIFO opens once the transaction waits on it, every file staged.
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut pause = loop {
        use std::os::unix::fs::OpenOptionsExt;
        let o = std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&fifo);
        match o {
            Ok(f) => break f,
            Err(_) if Instant::now() > deadline => panic!("the transaction never paused"),
            Err(_) => std::thread::sleep(Duration::from_millis(10)),
        }
    };
    let mut c2 = Command::new(BIN);
    c2.args(["--stdin", "--lock-timeout", "10"]);
    let t2 = spawn(&mut c2, &t2_req);
    // The writer takes `e` and waits for `d`.
    std::thread::sleep(Duration::from_millis(1500));
    let start = Instant::now();
    pause.write_all(b"x").unwrap();
    let (o1, o2) = (
        t1.wait_with_output().unwrap(),
        t2.wait_with_output().unwrap(),
    );
    let took = start.elapsed();
    let (s1, s2) = (
        String::from_utf8_lossy(&o1.stdout),
        String::from_utf8_lossy(&o2.stdout),
    );
    assert_eq!(
        (s1.as_ref(), o1.status.code(), s2.as_ref(), o2.status.code()),
        (
            format!(
                "__RESULT__{{\"error\":\"busy\",\"detail\":\"file 2 of {} ({e}): another edit holds the lock on {} (waited 0.0 s); the file is unchanged\",\"file\":2}}\n",
                n + 2,
                w.join(e).display()
            )
            .as_str(),
            Some(1),
            "__RESULT__{\"count\":2,\"files\":2}\n",
            Some(0)
        )
    );
    assert!(took < Duration::from_secs(5), "stalled {took:?}");
    assert_eq!(std::fs::read(w.join(e)).unwrap(), b"E2\n");
    assert_eq!(std::fs::read(w.join(dl)).unwrap(), b"D2\n");
    for i in 0..n {
        assert_eq!(std::fs::read(w.join(format!("g{i}"))).unwrap(), b"x\n");
    }
    assert_eq!(listing(w).len(), n + 3, "nothing else left");
}

/// Item 9 at a move's destination (found by the helper that tried to
/// break the commit): a plain move into an immutable directory, or
/// over a name in an append-only one, failed inside the commit
/// (`write_failed` "renaming the temp file", a temp a plain move does not
/// have, rolled back). Refused before the commit, naming the flag, as a
/// create or an edited move into it is; a move that adds a name to an
/// append-only directory still commits.
#[test]
fn a_plain_move_into_a_flagged_directory_is_refused_before_the_commit() {
    use rustix::fs::IFlags;
    use std::os::unix::fs::MetadataExt;
    for (flag, over, words) in [
        (
            IFlags::IMMUTABLE,
            false,
            "is immutable (chattr +i): no name in it can be created, replaced or removed",
        ),
        (
            IFlags::APPEND,
            true,
            "is append-only (chattr +a): names in it can be added but not replaced or removed",
        ),
    ] {
        let d = scratch_on_disk();
        let w = d.path();
        std::fs::create_dir(w.join("dst")).unwrap();
        let f = write_file(w, "f", b"f\n", 0o644);
        if over {
            write_file(&w.join("dst"), "f", b"old\n", 0o644);
        }
        let dst = w.join("dst");
        let _clear = Flagged(dst.clone());
        if !set_flag(&dst, flag) {
            return;
        }
        let ino = std::fs::metadata(&f).unwrap().ino();
        let req =
            format!(r#"{{"files":[{{"op":"move","path":"f","to":"dst/f","overwrite":{over}}}]}}"#);
        let r = run_umask(Path::new(BIN), w, 0o022, &["--stdin"], req.as_bytes());
        let r0 = r.stdout.clone();
        // The detail's words come from the single-file edit's DirFlag.
        assert!(
            r0.starts_with("__RESULT__{\"error\":\"write_failed\",\"detail\":\"file 1 of 1 (f): ")
                && r0.contains(words)
                && !r0.contains("rolled_back")
                && r.code == 1,
            "{flag:?}: {r0}"
        );
        assert_eq!(std::fs::read(&f).unwrap(), b"f\n");
        assert_eq!(std::fs::metadata(&f).unwrap().ino(), ino);
        assert_eq!(listing(w), ["dst", "f"]);
        let want: &[&str] = if over { &["f"] } else { &[] };
        assert_eq!(listing(&dst), want);
        if over {
            assert_eq!(std::fs::read(dst.join("f")).unwrap(), b"old\n");
        }
    }
    // Adding a name to an append-only directory is allowed.
    let d = scratch_on_disk();
    let w = d.path();
    std::fs::create_dir(w.join("dst")).unwrap();
    let f = write_file(w, "f", b"f\n", 0o644);
    let ino = std::fs::metadata(&f).unwrap().ino();
    let dst = w.join("dst");
    let _clear = Flagged(dst.clone());
    if !set_flag(&dst, IFlags::APPEND) {
        return;
    }
    let req = r#"{"files":[{"op":"move","path":"f","to":"dst/f"}]}"#;
    let r = run_umask(Path::new(BIN), w, 0o022, &["--stdin"], req.as_bytes());
    assert_result(&r, r#"{"count":0,"files":2}"#, 0);
    assert_eq!(std::fs::metadata(dst.join("f")).unwrap().ino(), ino);
    assert_eq!(listing(w), ["dst"]);
}
