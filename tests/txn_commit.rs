//! Issue 33 items 5, 9, 10, 11, 14 and 15: a transaction's commit across
//! bind mounts, files whose inode flags keep their name, the modes of what
//! it makes, and the descriptors it holds. Each case asserts the exact
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
