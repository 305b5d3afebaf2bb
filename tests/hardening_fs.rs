//! Regression tests for the file-system layer's hardening: `--fsync`
//! never fails an applied edit, container seccomp profiles (EPERM/ENOSYS for newer
//! syscalls) do not break edits, file capabilities are not carried to new
//! content, and refusals name their real cause (sticky directory, immutable
//! or append-only target). Each case asserts the exact result line, the
//! exact bytes, the inode where nothing may change, and the directory listing.

mod common;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};

use common::*;

fn chown(p: &Path, uid: u32, gid: u32) {
    std::os::unix::fs::chown(p, Some(uid), Some(gid)).unwrap();
}

fn chmod(p: &Path, m: u32) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
}

/// Gives directory `d` and its file `p` to nobody, `d` writable and
/// searchable but not readable (0333).
fn nobody_write_only(d: &Path, p: &Path) {
    chown(p, 65534, 65534);
    chown(d, 65534, 65534);
    chmod(d, 0o333);
}

fn run_env(dir: &Path, env: (&str, &str), args: &[&str]) -> Run {
    Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .env(env.0, env.1)
        .stdin(Stdio::null())
        .output()
        .unwrap()
        .into()
}

fn sha(b: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(b)
        .iter()
        .map(|x| format!("{x:02x}"))
        .collect()
}

/// The refusal for `dir/f` when `dir` refuses the rename, for the reason `why`.
fn rename_refused(dir: &Path, why: &str) -> String {
    format!(
        r#"{{"error":"write_failed","detail":"{0}/f cannot be replaced by rename: its directory {0} is {why}; the file is unchanged"}}"#,
        dir.display()
    )
}

/// The refusal for `dir/f` carrying an inode flag described by `words`.
fn flag_refused(dir: &Path, words: &str) -> String {
    format!(
        r#"{{"error":"permission_denied","detail":"{}/f is {words}"}}"#,
        dir.display()
    )
}

const STICKY_WORDS: &str = "sticky and neither the file nor the directory belongs to this user, so only an in-place write can change it";

const IMMUTABLE_WORDS: &str =
    "immutable (chattr +i): it cannot be written, replaced or removed until the flag is cleared";

const DIR_APPEND_WORDS: &str =
    "append-only (chattr +a): names in it can be added but not replaced or removed";

// ------------------------------------------------------------ 1. --fsync

/// The issue's repro: a directory the caller may write and search but not
/// read cannot be opened for its fsync. The edit is still made, durably
/// (syncfs after the rename), and reported as the success it is.
#[test]
fn fsync_in_a_write_only_directory_edits_and_reports_success() {
    if !setpriv_available() {
        return skip("needs root and setpriv to drop to nobody");
    }
    let base = scratch();
    let d = base.path().join("d");
    std::fs::create_dir(&d).unwrap();
    let p = write_file(&d, "f", b"foo\n", 0o644);
    nobody_write_only(&d, &p);
    let (o, n) = (b64("foo"), b64("foo bar"));
    let r = run_as_nobody(&d, &[b"--fsync", b"--", b"f", o.as_bytes(), n.as_bytes()]);
    assert_result(&r, r#"{"count":1}"#, 0);
    assert_eq!(std::fs::read(&p).unwrap(), b"foo bar\n");
    assert_eq!(listing(&d), vec!["f"]);
    // With --report: the flush succeeded, so no "durable":false.
    let (o, n) = (b64("foo bar"), b64("baz"));
    let r = run_as_nobody(
        &d,
        &[
            b"--fsync",
            b"--report",
            b"--",
            b"f",
            o.as_bytes(),
            n.as_bytes(),
        ],
    );
    assert_result(
        &r,
        &format!(
            r#"{{"count":1,"path":"{}/f","size":4,"sha256":"{}","lines":[1]}}"#,
            d.display(),
            sha(b"baz\n")
        ),
        0,
    );
    assert_eq!(std::fs::read(&p).unwrap(), b"baz\n");
    assert_eq!(listing(&d), vec!["f"]);
    assert_eq!(std::fs::metadata(&p).unwrap().uid(), 65534);
}

/// With strace: the unreadable directory is flushed by syncfs after the
/// rename (fsync of the file before it, as always).
#[test]
fn fsync_in_a_write_only_directory_flushes_the_file_system_after_the_rename() {
    if !setpriv_available() {
        return skip("needs root and setpriv to drop to nobody");
    }
    if Command::new("strace").arg("-V").output().is_err() {
        return skip("strace is not installed (scripts/test.sh installs it as root)");
    }
    let base = scratch();
    let d = base.path().join("d");
    std::fs::create_dir(&d).unwrap();
    let p = write_file(&d, "f", b"foo\n", 0o644);
    nobody_write_only(&d, &p);
    let trace = base.path().join("trace");
    let out = Command::new("strace")
        .args([
            "-f",
            "-qq",
            "-e",
            "trace=fsync,syncfs,renameat,renameat2",
            // The rename is a child's (src/fs/window.rs); its exit
            // signal is not a call.
            "-e",
            "signal=none",
            "-o",
        ])
        .arg(&trace)
        .args([
            "setpriv",
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "--",
        ])
        .args([nobody_bin(), "--fsync", "--", "f", &b64("foo"), &b64("bar")])
        .current_dir(&d)
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "__RESULT__{\"count\":1}\n"
    );
    let text = std::fs::read_to_string(&trace).unwrap();
    let calls: Vec<&str> = text
        .lines()
        .filter_map(|l| {
            l.split('(')
                .next()
                .and_then(|s| s.split_whitespace().last())
        })
        .collect();
    assert_eq!(calls, vec!["fsync", "renameat", "syncfs"], "{text}");
    assert!(
        text.lines().all(|l| l.ends_with("= 0")),
        "every call succeeded: {text}"
    );
    assert_eq!(std::fs::read(&p).unwrap(), b"bar\n");
    assert_eq!(listing(&d), vec!["f"]);
}

/// A flush that fails after the rename (EIO, or the EINVAL some FUSE, 9p and
/// overlay setups give for a directory) cannot undo the edit: success, exit
/// 0, the default line unchanged, and "durable":false under --report.
#[test]
fn a_directory_flush_failing_after_the_rename_is_success_not_durable() {
    for errno in ["EINVAL", "EIO"] {
        let d = scratch();
        let p = write_file(d.path(), "f", b"abc\n", 0o640);
        let hook = ("AS_EDIT_TEST_DIR_FSYNC_ERRNO", errno);
        let r = run_env(
            d.path(),
            hook,
            &["--fsync", "--", "f", &b64("b"), &b64("B")],
        );
        assert_result(&r, r#"{"count":1}"#, 0);
        assert_eq!(std::fs::read(&p).unwrap(), b"aBc\n", "{errno}");
        let r = run_env(
            d.path(),
            hook,
            &["--fsync", "--report", "--", "f", &b64("B"), &b64("x")],
        );
        assert_result(
            &r,
            &format!(
                r#"{{"count":1,"path":"{}/f","size":4,"sha256":"{}","lines":[1],"durable":false}}"#,
                d.path().display(),
                sha(b"axc\n")
            ),
            0,
        );
        assert_eq!(std::fs::read(&p).unwrap(), b"axc\n", "{errno}");
        assert_eq!(mode(&p), 0o640);
        assert_eq!(listing(d.path()), vec!["f"], "{errno}");
        // Without --fsync the hook has nothing to fail: no durable key.
        let r = run_env(
            d.path(),
            hook,
            &["--report", "--", "f", &b64("x"), &b64("y")],
        );
        assert!(!r.stdout.contains("durable"), "{}", r.stdout);
    }
}

/// break10 finding 2: where neither link of the unnamed temp works, its
/// content is copied into a named temp, and that copy is the file renamed
/// over the target: with --fsync it must be flushed before the rename (seen
/// with `strace -y`, which shows the path behind each fd).
#[test]
fn fsync_flushes_the_named_copy_when_the_temp_cannot_be_linked() {
    if Command::new("strace").arg("-V").output().is_err() {
        return skip("strace is not installed (scripts/test.sh installs it as root)");
    }
    let d = scratch();
    let p = write_file(d.path(), "f", b"abc\n", 0o640);
    let log = d.path().join("..").join(format!(
        "strace-fsync-{}.log",
        d.path().file_name().unwrap().to_string_lossy()
    ));
    let out = Command::new("strace")
        .args([
            "-f",
            "-qq",
            "-y",
            "-e",
            "trace=fsync,rename,renameat,renameat2",
            // The rename is a child's (src/fs/window.rs); its exit
            // signal is not a call.
            "-e",
            "signal=none",
            "-o",
        ])
        .arg(&log)
        .args([BIN, "--fsync", "--", "f", &b64("b"), &b64("B")])
        .current_dir(d.path())
        .env("AS_EDIT_TEST_NO_LINK", "1")
        .stdin(Stdio::null())
        .output()
        .expect("strace runs");
    let r: Run = out.into();
    assert_result(&r, r#"{"count":1}"#, 0);
    assert_eq!(std::fs::read(&p).unwrap(), b"aBc\n");
    assert_eq!(mode(&p), 0o640);
    assert_eq!(listing(d.path()), vec!["f"]);
    let trace = std::fs::read_to_string(&log).unwrap();
    std::fs::remove_file(&log).unwrap();
    let lines: Vec<&str> = trace.lines().collect();
    let renamed = lines
        .iter()
        .position(|l| l.contains("rename") && l.contains(".as-edit-"))
        .unwrap_or_else(|| panic!("a rename of the named temp in:\n{trace}"));
    // The name renamed over the target is the one flushed before it.
    let name_at = lines[renamed].find(".as-edit-").unwrap();
    let name = &lines[renamed][name_at..name_at + ".as-edit-".len() + 16];
    assert!(
        lines[..renamed]
            .iter()
            .any(|l| l.starts_with(|c: char| c.is_ascii_digit())
                && l.contains("fsync(")
                && l.contains(name)
                && l.ends_with("= 0")),
        "fsync of {name} before its rename in:\n{trace}"
    );
}

/// break10 finding 3: a write that fails (here: nobody owns the file, but
/// the directory is 0555) commits nothing, so `--report` describes the file
/// as it is: its size and digest, no `lines`, no `diff` of content that was
/// never written.
#[test]
fn report_after_write_failed_describes_the_current_file() {
    if !setpriv_available() {
        return skip("needs root and setpriv to drop to nobody");
    }
    let d = scratch();
    let rd = d.path().join("rd");
    std::fs::create_dir(&rd).unwrap();
    let p = write_file(&rd, "f", b"one\ntwo\n", 0o644);
    chown(&p, 65534, 65534);
    chmod(&rd, 0o555);
    let ino = inode(&p);
    let (o, n) = (b64("two"), b64("2"));
    for extra in [
        &[&b"--report"[..]][..],
        &[&b"--report"[..], &b"--diff"[..]][..],
    ] {
        let mut args: Vec<&[u8]> = extra.to_vec();
        args.extend([&b"--"[..], b"f", o.as_bytes(), n.as_bytes()]);
        let r = run_as_nobody(&rd, &args);
        let dir = rd.display();
        assert_result(
            &r,
            &format!(
                r#"{{"error":"write_failed","detail":"creating a temp file beside it for {dir}/f: Permission denied (os error 13) (the directory is not writable); the file is unchanged","path":"{dir}/f","size":8,"sha256":"{}"}}"#,
                sha(b"one\ntwo\n")
            ),
            1,
        );
        assert_unchanged(&p, b"one\ntwo\n", ino);
        assert_eq!(listing(&rd), vec!["f"]);
    }
}

// ------------------------------------------------------------ 3. seccomp

/// The filters use the syscall numbers and audit architecture of the two
/// architectures as-edit ships for; elsewhere these tests are not built.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
mod seccomp {
    use super::*;

    /// The audit architecture the filter checks first: a filter for the wrong
    /// architecture would check the wrong syscall numbers.
    #[cfg(target_arch = "x86_64")]
    const AUDIT_ARCH: u32 = 0xC000_003E;
    #[cfg(target_arch = "aarch64")]
    const AUDIT_ARCH: u32 = 0xC000_00B7;

    /// One filtered syscall: `nr` answers `errno` when argument `arg` has any of
    /// the `mask` bits (low 32 bits), or always without `arg`.
    #[derive(Clone, Copy, Debug)]
    struct Rule {
        nr: libc::c_long,
        arg: Option<(u32, u32)>,
        errno: i32,
    }

    fn stmt(code: u32, k: u32) -> libc::sock_filter {
        libc::sock_filter {
            code: code as u16,
            jt: 0,
            jf: 0,
            k,
        }
    }

    fn jump(code: u32, k: u32, jt: u8, jf: u8) -> libc::sock_filter {
        libc::sock_filter {
            code: code as u16,
            jt,
            jf,
            k,
        }
    }

    /// A classic-BPF seccomp program for one rule; any other architecture kills
    /// the process (so a wrong assumption fails loudly, never passes).
    fn program(rule: Rule) -> Vec<libc::sock_filter> {
        use libc::{BPF_ABS, BPF_JEQ, BPF_JMP, BPF_JSET, BPF_K, BPF_LD, BPF_RET, BPF_W};
        let errno = libc::SECCOMP_RET_ERRNO | (rule.errno as u32 & libc::SECCOMP_RET_DATA);
        let allow = libc::SECCOMP_RET_ALLOW;
        let mut p = vec![
            stmt(BPF_LD | BPF_W | BPF_ABS, 4), // seccomp_data.arch
            jump(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH, 1, 0),
            stmt(BPF_RET | BPF_K, libc::SECCOMP_RET_KILL_PROCESS),
            stmt(BPF_LD | BPF_W | BPF_ABS, 0), // seccomp_data.nr
        ];
        match rule.arg {
            None => {
                p.push(jump(BPF_JMP | BPF_JEQ | BPF_K, rule.nr as u32, 0, 1));
                p.push(stmt(BPF_RET | BPF_K, errno));
                p.push(stmt(BPF_RET | BPF_K, allow));
            }
            Some((idx, mask)) => {
                p.push(jump(BPF_JMP | BPF_JEQ | BPF_K, rule.nr as u32, 0, 3));
                // seccomp_data.args[idx], low half (both architectures are little-endian).
                p.push(stmt(BPF_LD | BPF_W | BPF_ABS, 16 + 8 * idx));
                p.push(jump(BPF_JMP | BPF_JSET | BPF_K, mask, 0, 1));
                p.push(stmt(BPF_RET | BPF_K, errno));
                p.push(stmt(BPF_RET | BPF_K, allow));
            }
        }
        p
    }

    /// Installs the filters in the child, after fork and before exec. Failure to
    /// install makes the spawn fail, so the test fails rather than passing
    /// without a filter.
    fn under_filters(cmd: &mut Command, rules: &[Rule]) {
        let progs: Vec<Vec<libc::sock_filter>> = rules.iter().map(|r| program(*r)).collect();
        // SAFETY: the closure only makes raw syscalls on memory prepared before
        // the fork (no allocation, no locks).
        unsafe {
            cmd.pre_exec(move || {
                if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                for p in &progs {
                    let fprog = libc::sock_fprog {
                        len: p.len() as u16,
                        filter: p.as_ptr() as *mut libc::sock_filter,
                    };
                    let r = libc::syscall(
                        libc::SYS_seccomp,
                        libc::SECCOMP_SET_MODE_FILTER,
                        0,
                        &fprog as *const libc::sock_fprog,
                    );
                    if r != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                Ok(())
            });
        }
    }

    /// Runs the binary (as nobody when asked) under the filters.
    fn run_filtered(dir: &Path, rules: &[Rule], nobody: bool, args: &[&str]) -> Run {
        let mut cmd = if nobody {
            let mut c = Command::new("setpriv");
            c.args([
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
                "--",
                nobody_bin(),
            ]);
            c
        } else {
            Command::new(BIN)
        };
        cmd.args(args).current_dir(dir).stdin(Stdio::null());
        under_filters(&mut cmd, rules);
        cmd.output()
            .expect("the seccomp filter installs and the binary runs")
            .into()
    }

    /// Proves a filter bites: the syscall it names, made under it in a forked
    /// child, gets the errno (a filter that allowed everything would let the
    /// tests below pass on any code). The child makes raw syscalls only.
    fn assert_filter_bites(rule: Rule, probe: &dyn Fn() -> libc::c_long) {
        let p = program(rule);
        let fprog = libc::sock_fprog {
            len: p.len() as u16,
            filter: p.as_ptr() as *mut libc::sock_filter,
        };
        // SAFETY: the child only makes raw syscalls on memory prepared before the
        // fork, then _exits.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0);
        if pid == 0 {
            unsafe {
                if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
                    || libc::syscall(
                        libc::SYS_seccomp,
                        libc::SECCOMP_SET_MODE_FILTER,
                        0,
                        &fprog as *const libc::sock_fprog,
                    ) != 0
                {
                    libc::_exit(100);
                }
                let r = probe();
                let e = *libc::__errno_location();
                libc::_exit(if r == -1 && e == rule.errno { 0 } else { 101 });
            }
        }
        let mut status = 0;
        assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
        assert!(
            libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
            "the filter {rule:?} answers its errno (child status {status:#x})"
        );
    }

    const FACCESSAT2: libc::c_long = libc::SYS_faccessat2;
    const FACCESSAT: libc::c_long = libc::SYS_faccessat;
    const OPENAT: libc::c_long = libc::SYS_openat;
    const LINKAT: libc::c_long = libc::SYS_linkat;
    const OPENAT2: libc::c_long = libc::SYS_openat2;
    const STATX: libc::c_long = libc::SYS_statx;
    const COPY_FILE_RANGE: libc::c_long = libc::SYS_copy_file_range;
    const WRITEV: libc::c_long = libc::SYS_writev;
    const NEWFSTATAT: libc::c_long = libc::SYS_newfstatat;
    const FSTAT: libc::c_long = libc::SYS_fstat;
    /// `O_TMPFILE` without its `O_DIRECTORY` part: the bit only it sets.
    const O_TMPFILE_BIT: u32 = (libc::O_TMPFILE & !libc::O_DIRECTORY) as u32;

    fn rule(nr: libc::c_long, errno: i32) -> Rule {
        Rule {
            nr,
            arg: None,
            errno,
        }
    }

    /// An edit under the filters gives `{"count":1}`, exactly the new bytes and
    /// nothing else in the directory.
    fn edits_under(rules: &[Rule], extra: &[&str]) {
        let d = scratch();
        let p = write_file(d.path(), "f", b"one\ntwo\n", 0o644);
        let (o, n) = (b64("two"), b64("2"));
        let mut args: Vec<&str> = extra.to_vec();
        args.extend(["--", "f", &o, &n]);
        let r = run_filtered(d.path(), rules, false, &args);
        assert_result(&r, r#"{"count":1}"#, 0);
        assert_eq!(std::fs::read(&p).unwrap(), b"one\n2\n", "{rules:?}");
        assert_eq!(mode(&p), 0o644);
        assert_eq!(listing(d.path()), vec!["f"], "{rules:?}");
    }

    #[test]
    fn the_test_filters_answer_their_errno() {
        let cpath = c"/";
        for errno in [libc::EPERM, libc::ENOSYS] {
            assert_filter_bites(rule(FACCESSAT2, errno), &|| unsafe {
                libc::syscall(FACCESSAT2, libc::AT_FDCWD, cpath.as_ptr(), libc::W_OK, 0)
            });
            assert_filter_bites(rule(FACCESSAT, errno), &|| unsafe {
                libc::syscall(FACCESSAT, libc::AT_FDCWD, cpath.as_ptr(), libc::W_OK)
            });
            assert_filter_bites(rule(OPENAT2, errno), &|| unsafe {
                libc::syscall(OPENAT2, libc::AT_FDCWD, cpath.as_ptr(), 0usize, 0usize)
            });
            assert_filter_bites(rule(STATX, errno), &|| unsafe {
                libc::syscall(STATX, libc::AT_FDCWD, cpath.as_ptr(), 0, 0, 0usize)
            });
            assert_filter_bites(rule(COPY_FILE_RANGE, errno), &|| unsafe {
                libc::syscall(COPY_FILE_RANGE, 0, 0usize, 1, 0usize, 1usize, 0)
            });
            assert_filter_bites(rule(LINKAT, errno), &|| unsafe {
                libc::syscall(LINKAT, 0, c"".as_ptr(), libc::AT_FDCWD, c"/x".as_ptr(), 0)
            });
            assert_filter_bites(rule(WRITEV, errno), &|| unsafe {
                libc::syscall(WRITEV, 1, 0usize, 0)
            });
            assert_filter_bites(
                Rule {
                    nr: LINKAT,
                    arg: Some((4, libc::AT_EMPTY_PATH as u32)),
                    errno,
                },
                &|| unsafe {
                    libc::syscall(
                        LINKAT,
                        0,
                        c"".as_ptr(),
                        libc::AT_FDCWD,
                        c"/x".as_ptr(),
                        libc::AT_EMPTY_PATH,
                    )
                },
            );
            assert_filter_bites(
                Rule {
                    nr: OPENAT,
                    arg: Some((2, O_TMPFILE_BIT)),
                    errno,
                },
                &|| unsafe {
                    libc::syscall(
                        OPENAT,
                        libc::AT_FDCWD,
                        c"/tmp".as_ptr(),
                        libc::O_TMPFILE | libc::O_RDWR,
                        0o600,
                    )
                },
            );
        }
    }

    #[test]
    fn faccessat2_refused_by_a_seccomp_profile_still_edits() {
        for errno in [libc::EPERM, libc::ENOSYS] {
            edits_under(&[rule(FACCESSAT2, errno)], &[]);
        }
    }

    #[test]
    fn without_any_access_syscall_the_mode_bits_decide() {
        for errno in [libc::EPERM, libc::ENOSYS] {
            edits_under(&[rule(FACCESSAT2, errno), rule(FACCESSAT, errno)], &[]);
        }
    }

    /// The fallbacks must still refuse what the caller may not write, and allow
    /// what it may, for an unprivileged user.
    #[test]
    fn the_access_fallbacks_still_refuse_a_read_only_file() {
        if !setpriv_available() {
            return skip("needs root and setpriv to drop to nobody");
        }
        let filters: [&[Rule]; 4] = [
            &[rule(FACCESSAT2, libc::EPERM)],
            &[rule(FACCESSAT2, libc::ENOSYS)],
            &[rule(FACCESSAT2, libc::EPERM), rule(FACCESSAT, libc::EPERM)],
            &[
                rule(FACCESSAT2, libc::ENOSYS),
                rule(FACCESSAT, libc::ENOSYS),
            ],
        ];
        for rules in filters {
            let d = scratch();
            chown(d.path(), 65534, 65534);
            let p = write_file(d.path(), "f", b"abc", 0o444);
            chown(&p, 65534, 65534);
            let ino = inode(&p);
            let (o, n) = (b64("abc"), b64("xyz"));
            let r = run_filtered(d.path(), rules, true, &["--", "f", &o, &n]);
            assert_result(&r, &no_write_permission(d.path(), "f"), 1);
            assert_unchanged(&p, b"abc", ino);
            assert_eq!(listing(d.path()), vec!["f"]);
            // Writable by its owner through the group or owner bits: edited.
            chmod(&p, 0o644);
            let r = run_filtered(d.path(), rules, true, &["--", "f", &o, &n]);
            assert_result(&r, r#"{"count":1}"#, 0);
            assert_eq!(std::fs::read(&p).unwrap(), b"xyz", "{rules:?}");
            assert_eq!(listing(d.path()), vec!["f"]);
            // Someone else's file writable only by its owner: refused.
            let q = write_file(d.path(), "g", b"abc", 0o644);
            let ino = inode(&q);
            let r = run_filtered(d.path(), rules, true, &["--", "g", &o, &n]);
            assert_result(&r, &no_write_permission(d.path(), "g"), 1);
            assert_unchanged(&q, b"abc", ino);
            assert_eq!(listing(d.path()), vec!["f", "g"]);
        }
    }

    #[test]
    fn o_tmpfile_refused_by_a_seccomp_profile_uses_a_named_temp() {
        for errno in [libc::EPERM, libc::ENOSYS] {
            let r = Rule {
                nr: OPENAT,
                arg: Some((2, O_TMPFILE_BIT)),
                errno,
            };
            edits_under(&[r], &[]);
            edits_under(&[r], &["--fsync"]);
        }
    }

    /// The deferred temp brings the unchanged prefix over with
    /// `copy_file_range`; refused, it copies through a buffer. The prefix
    /// spans several read chunks, so the copy really happens.
    #[test]
    fn copy_file_range_refused_by_a_seccomp_profile_still_edits() {
        let line = b"some ordinary line of text\n";
        let mut content: Vec<u8> = line.iter().copied().cycle().take(900 * 1024).collect();
        content.extend_from_slice(b"the end\n");
        let mut want = content.clone();
        want.truncate(want.len() - 4);
        want.extend_from_slice(b"END\n");
        for errno in [libc::EPERM, libc::ENOSYS] {
            let d = scratch();
            let p = write_file(d.path(), "f", &content, 0o644);
            let r = run_filtered(
                d.path(),
                &[rule(COPY_FILE_RANGE, errno)],
                false,
                &["--", "f", &b64("end\n"), &b64("END\n")],
            );
            assert_result(&r, r#"{"count":1}"#, 0);
            assert!(std::fs::read(&p).unwrap() == want, "errno {errno}");
            assert_eq!(listing(d.path()), vec!["f"]);
        }
    }

    /// A dense replace-all writes its gathered output after the buffered
    /// rest in one `writev` (src/fs/sink.rs); refused, plain writes do the
    /// same. Lines of 64 bytes growing by 2: each 256 KiB read gives one
    /// gathered 256 KiB slice and an 8 KiB rest, so `writev` is reached
    /// (an errno it does not fall back on proves it: the edit fails).
    #[test]
    fn writev_refused_by_a_seccomp_profile_still_edits() {
        let line = b"    let value = compute(alpha, beta); // tok and some more text\n";
        assert_eq!(line.len(), 64);
        let content: Vec<u8> = line.iter().copied().cycle().take(1 << 20).collect();
        let want = String::from_utf8(content.clone())
            .unwrap()
            .replace("tok", "TOKEN")
            .into_bytes();
        let args = ["--", "f", &b64("tok"), &b64("TOKEN"), "true"];
        for errno in [libc::EPERM, libc::ENOSYS, libc::EIO] {
            let d = scratch();
            let p = write_file(d.path(), "f", &content, 0o644);
            let r = run_filtered(d.path(), &[rule(WRITEV, errno)], false, &args);
            if errno == libc::EIO {
                assert_eq!(r.code, 1, "{}", r.stdout);
                let line = r.stdout.trim_end();
                assert!(
                    line.starts_with(
                        r#"__RESULT__{"error":"write_failed","detail":"writing the temp file for "#
                    ) && line.ends_with(
                        r#"/f: Input/output error (os error 5); the file is unchanged"}"#
                    ),
                    "{line}"
                );
                assert!(std::fs::read(&p).unwrap() == content);
            } else {
                assert_result(&r, &format!(r#"{{"count":{}}}"#, (1 << 20) / 64), 0);
                assert!(std::fs::read(&p).unwrap() == want, "errno {errno}");
            }
            assert_eq!(listing(d.path()), vec!["f"]);
        }
    }

    #[test]
    fn linkat_refused_by_a_seccomp_profile_still_commits() {
        for errno in [libc::EPERM, libc::ENOSYS] {
            // AT_EMPTY_PATH only: the /proc link is used.
            edits_under(
                &[Rule {
                    nr: LINKAT,
                    arg: Some((4, libc::AT_EMPTY_PATH as u32)),
                    errno,
                }],
                &[],
            );
            // Every linkat: the content is copied into a named temp.
            edits_under(&[rule(LINKAT, errno)], &[]);
        }
    }

    #[test]
    fn openat2_refused_by_a_seccomp_profile_still_confines() {
        for errno in [libc::EPERM, libc::ENOSYS] {
            let d = scratch();
            let root = d.path().to_str().unwrap().to_owned();
            edits_under(&[rule(OPENAT2, errno)], &["--root", "/"]);
            // And an escape is still refused.
            let sub = d.path().join("ws");
            std::fs::create_dir(&sub).unwrap();
            let p = write_file(d.path(), "outside", b"secret", 0o644);
            let r = run_filtered(
                &sub,
                &[rule(OPENAT2, errno)],
                false,
                &[
                    "--root",
                    sub.to_str().unwrap(),
                    "--",
                    "../outside",
                    &b64("secret"),
                    &b64("x"),
                ],
            );
            assert_result(
                &r,
                &format!(
                    r#"{{"error":"outside_root","detail":"../outside resolves outside the root {root}/ws"}}"#
                ),
                1,
            );
            assert_eq!(std::fs::read(&p).unwrap(), b"secret");
        }
    }

    /// break11b: the `--hints` re-read prefaults its buffer with
    /// madvise(MADV_POPULATE_WRITE) (src/fs/hints.rs); a profile that refuses
    /// madvise (or a kernel before 5.14: EINVAL) changes neither the answer
    /// nor the file, and leaves no temp.
    #[test]
    fn madvise_refused_by_a_seccomp_profile_still_hints() {
        for errno in [libc::EPERM, libc::ENOSYS, libc::EINVAL] {
            let r = rule(libc::SYS_madvise, errno);
            assert_filter_bites(r, &|| unsafe {
                libc::syscall(libc::SYS_madvise, 0usize, 4096usize, libc::MADV_NORMAL)
            });
            let d = scratch();
            // Big enough that the prefault names whole pages (strace shows
            // the call when unfiltered).
            let body: String = (0..1000).map(|i| format!("value_{i} = {i};\n")).collect();
            let p = write_file(d.path(), "f", body.as_bytes(), 0o644);
            let (o, n) = (b64("value_500 =  500;"), b64("Q"));
            let out = run_filtered(d.path(), &[r], false, &["--hints", "--", "f", &o, &n]);
            assert_result(
                &out,
                r#"{"error":"string_not_found","hints":[{"line":501,"end_line":501,"kind":"whitespace","score":1.0,"text":"value_500 = 500;"}]}"#,
                1,
            );
            assert_eq!(std::fs::read(&p).unwrap(), body.as_bytes(), "{r:?}");
            assert_eq!(listing(d.path()), vec!["f"], "{r:?}");
        }
    }

    #[test]
    fn statx_refused_by_a_seccomp_profile_changes_nothing() {
        for errno in [libc::EPERM, libc::ENOSYS] {
            edits_under(&[rule(STATX, errno)], &["--fsync"]);
            // The not-found details look at the path with lstat (std uses statx).
            let d = scratch();
            std::os::unix::fs::symlink("nowhere", d.path().join("l")).unwrap();
            let r = run_filtered(
                d.path(),
                &[rule(STATX, errno)],
                false,
                &["--", "l", "YQ==", "Yg=="],
            );
            assert_result(
                &r,
                r#"{"error":"file_not_found","detail":"l is a dangling symlink"}"#,
                1,
            );
        }
    }

    /// break10 findings 1 and 7: with the inode-flags ioctl refused by a
    /// filter, the flags come from `statx`: an append-only directory is
    /// `write_failed` naming it with no temp left, an immutable target
    /// `permission_denied` naming the flag.
    #[test]
    fn flags_are_read_by_statx_when_the_ioctl_is_refused() {
        let Some((_base, d, p)) = flagged_dir(rustix::fs::IFlags::APPEND, |_, _| {}) else {
            return;
        };
        let _guard = Flagged(d.clone());
        let ino = inode(&p);
        let (o, n) = (b64("abc"), b64("xyz"));
        let r = run_filtered(
            &d,
            &[rule(libc::SYS_ioctl, libc::EPERM)],
            false,
            &["--", "f", &o, &n],
        );
        assert_result(&r, &rename_refused(&d, DIR_APPEND_WORDS), 1);
        assert_unchanged(&p, b"abc\n", ino);
        assert_eq!(listing(&d), vec!["f"]);

        let Some((t, p)) = flagged_file(rustix::fs::IFlags::IMMUTABLE) else {
            return;
        };
        let _guard = Flagged(p.clone());
        let ino = inode(&p);
        let r = run_filtered(
            t.path(),
            &[rule(libc::SYS_ioctl, libc::EPERM)],
            false,
            &["--", "f", &o, &n],
        );
        assert_result(&r, &flag_refused(t.path(), IMMUTABLE_WORDS), 1);
        assert_unchanged(&p, b"abc\n", ino);
        assert_eq!(listing(t.path()), vec!["f"]);
    }

    /// The inode-flags ioctl refused (EPERM from a filter, ENOTTY where a file
    /// system has none): no flags are known, and the edit proceeds. Likewise
    /// capget (the capability check for the sticky-directory prediction).
    #[test]
    fn the_inode_flags_ioctl_or_capget_refused_changes_nothing() {
        for errno in [libc::EPERM, libc::ENOTTY] {
            edits_under(&[rule(libc::SYS_ioctl, errno)], &[]);
        }
        for errno in [libc::EPERM, libc::ENOSYS] {
            edits_under(&[rule(libc::SYS_capget, errno)], &["--fsync"]);
        }
    }

    /// The syscall opening a path with `flags` set, as rustix's `open`
    /// makes it: `open` on x86_64, `openat(AT_FDCWD, …)` on aarch64.
    fn open_with(flags: i32) -> Rule {
        #[cfg(target_arch = "x86_64")]
        let (nr, arg) = (libc::SYS_open, 1);
        #[cfg(target_arch = "aarch64")]
        let (nr, arg) = (OPENAT, 2);
        Rule {
            nr,
            arg: Some((arg, flags as u32)),
            errno: 0,
        }
    }

    /// Running out of descriptors or memory is one answer
    /// wherever it strikes, `write_failed` naming the step and ending in
    /// `retry`, never a statement about the file (the old code said
    /// `file_not_found` for the directory's open and the lock's stat,
    /// `read_failed` for the file's open, fstat and read, and went on
    /// unlocked when `flock` had no memory). Each rule makes exactly one
    /// step fail; the loader and std's start-up (which open, read and stat
    /// with other flags and descriptors) pass. The retry, as the detail
    /// says, then edits.
    #[test]
    fn no_descriptor_or_memory_is_write_failed_wherever_it_strikes() {
        let with = |r: Rule, errno| Rule { errno, ..r };
        for errno in [libc::EMFILE, libc::ENFILE, libc::ENOMEM] {
            let why = match errno {
                libc::EMFILE => {
                    "no free file descriptor: the process's RLIMIT_NOFILE, ulimit -n, is used up"
                }
                libc::ENFILE => "no free file descriptor: the system's open-file table is full",
                _ => "out of memory",
            };
            let words = std::io::Error::from_raw_os_error(errno).to_string();
            let d = scratch();
            let dir = d.path().display().to_string();
            let steps: Vec<(Rule, Vec<&str>, String)> = vec![
                (open_with(libc::O_PATH), vec![], format!("resolving {dir}")),
                (
                    with(rule(OPENAT2, 0), errno),
                    vec!["--root", d.path().to_str().unwrap()],
                    format!("resolving {dir}"),
                ),
                (
                    Rule {
                        nr: NEWFSTATAT,
                        arg: Some((3, libc::AT_SYMLINK_NOFOLLOW as u32)),
                        errno: 0,
                    },
                    vec![],
                    format!("resolving {dir}/f"),
                ),
                (
                    Rule {
                        nr: OPENAT,
                        arg: Some((2, libc::O_NONBLOCK as u32)),
                        errno: 0,
                    },
                    vec![],
                    format!("opening {dir}/f"),
                ),
                (
                    rule(FSTAT, 0),
                    vec![],
                    format!("reading the metadata of {dir}/f"),
                ),
                (rule(libc::SYS_flock, 0), vec![], format!("locking {dir}/f")),
                (
                    // The target is descriptor 4 (its directory is 3); the
                    // loader and std read descriptor 3.
                    Rule {
                        nr: libc::SYS_read,
                        arg: Some((0, 4)),
                        errno: 0,
                    },
                    vec![],
                    format!("reading {dir}/f"),
                ),
                (
                    Rule {
                        nr: OPENAT,
                        arg: Some((2, O_TMPFILE_BIT)),
                        errno: 0,
                    },
                    vec![],
                    format!("creating a temp file beside it for {dir}/f"),
                ),
            ];
            let p = write_file(d.path(), "f", b"hello\n", 0o644);
            for (r, extra, step) in steps {
                let ino = inode(&p);
                let mut args = extra.clone();
                let (o, n) = (b64("hello"), b64("bye"));
                args.extend(["--", "f", &o, &n]);
                let out = run_filtered(d.path(), &[with(r, errno)], false, &args);
                assert_result(
                    &out,
                    &format!(
                        r#"{{"error":"write_failed","detail":"{step}: {words} ({why}); the file is unchanged, retry"}}"#
                    ),
                    1,
                );
                assert_unchanged(&p, b"hello\n", ino);
                assert_eq!(listing(d.path()), vec!["f"], "{step}");
                // The retry the detail asks for.
                let again = run_filtered(d.path(), &[], false, &args);
                assert_result(&again, r#"{"count":1}"#, 0);
                assert_eq!(std::fs::read(&p).unwrap(), b"bye\n");
                std::fs::write(&p, b"hello\n").unwrap();
            }
        }
    }

    /// The default ACL under a filter: a profile refusing `fremovexattr`
    /// does not fail an edit that has no inherited ACL to remove (the
    /// temp's ACL is read first), and where there is one to remove the edit
    /// is `write_failed`, unchanged, with no temp left, rather than a file
    /// that grants what the original did not. A profile refusing that read
    /// (`fgetxattr`) gets the removal anyway.
    #[test]
    fn fremovexattr_refused_fails_only_where_an_inherited_acl_remains() {
        for errno in [libc::EPERM, libc::ENOSYS] {
            edits_under(&[rule(libc::SYS_fremovexattr, errno)], &[]);
            let Some((d, p)) = dir_with_default_acl() else {
                return;
            };
            let ino = inode(&p);
            let r = run_filtered(
                d.path(),
                &[rule(libc::SYS_fremovexattr, errno)],
                false,
                &["--", "dir/f", &b64("hello"), &b64("bye")],
            );
            let words = std::io::Error::from_raw_os_error(errno).to_string();
            let detail = match errno {
                libc::EPERM => format!("{words} (refused by the file system or a security policy, not by the directory's permissions)"),
                _ => words,
            };
            assert_result(
                &r,
                &format!(
                    r#"{{"error":"write_failed","detail":"removing the ACL the temp file inherited for {}/dir/f: {detail}; the file is unchanged"}}"#,
                    d.path().display()
                ),
                1,
            );
            assert_unchanged(&p, b"hello\n", ino);
            assert_eq!(listing(&d.path().join("dir")), vec!["f"]);
            // The read refused instead: the inherited ACL is removed unasked.
            edits_under(&[rule(libc::SYS_fgetxattr, errno)], &[]);
            let r = run_filtered(
                d.path(),
                &[rule(libc::SYS_fgetxattr, errno)],
                false,
                &["--", "dir/f", &b64("hello"), &b64("bye")],
            );
            assert_result(&r, r#"{"count":1}"#, 0);
            assert_eq!((access_acl(&p), mode(&p)), (None, 0o600));
        }
    }
}

// ------------------------------------------------------------ file capabilities

#[test]
fn file_capabilities_are_not_carried_to_the_new_content() {
    if !is_root() {
        return skip("setting security.capability needs CAP_SETFCAP (root)");
    }
    let d = scratch();
    let p = write_file(d.path(), "tool", b"v1", 0o755);
    // VFS_CAP_REVISION_2 with the effective bit; permitted = CAP_NET_BIND_SERVICE.
    let mut cap = Vec::new();
    for w in [0x0200_0001u32, 1 << 10, 0, 0, 0] {
        cap.extend_from_slice(&w.to_le_bytes());
    }
    let flags = rustix::fs::XattrFlags::empty();
    if let Err(e) = rustix::fs::setxattr(&p, "security.capability", &cap, flags) {
        return skip(&format!(
            "this file system refuses security.capability: {e}"
        ));
    }
    if let Err(e) = rustix::fs::setxattr(&p, "user.keep", b"yes", flags) {
        return skip(&format!("this file system refuses user xattrs: {e}"));
    }
    let mut buf = [0u8; 64];
    let n = rustix::fs::getxattr(&p, "security.capability", &mut buf[..]).unwrap();
    assert_eq!(&buf[..n], &cap[..], "the capability is set before the edit");
    let r = run_argv(
        d.path(),
        &[b"--", b"tool", b64("v1").as_bytes(), b64("v2").as_bytes()],
    );
    assert_result(&r, r#"{"count":1}"#, 0);
    assert_eq!(std::fs::read(&p).unwrap(), b"v2");
    assert_eq!(mode(&p), 0o755);
    assert_eq!(
        rustix::fs::getxattr(&p, "security.capability", &mut buf[..]),
        Err(rustix::io::Errno::NODATA),
        "the capability is dropped"
    );
    let n = rustix::fs::getxattr(&p, "user.keep", &mut buf[..]).unwrap();
    assert_eq!(&buf[..n], b"yes", "other xattrs are kept");
    assert_eq!(listing(d.path()), vec!["tool"]);
}

// ------------------------------------------------------------ misleading details

#[test]
fn a_sticky_directory_refusing_the_rename_is_named() {
    if !setpriv_available() {
        return skip("needs root and setpriv to drop to nobody");
    }
    let base = scratch();
    let d = base.path().join("shared");
    std::fs::create_dir(&d).unwrap();
    chmod(&d, 0o1777);
    let p = write_file(&d, "f", b"abc", 0o666);
    let ino = inode(&p);
    let (o, n) = (b64("abc"), b64("xyz"));
    let r = run_as_nobody(&d, &[b"--", b"f", o.as_bytes(), n.as_bytes()]);
    assert_result(&r, &rename_refused(&d, STICKY_WORDS), 1);
    assert_unchanged(&p, b"abc", ino);
    assert_eq!(mode(&p), 0o666);
    assert_eq!(listing(&d), vec!["f"]);
    // The owner of the file may rename in the sticky directory: edited.
    chown(&p, 65534, 65534);
    let r = run_as_nobody(&d, &[b"--", b"f", o.as_bytes(), n.as_bytes()]);
    assert_result(&r, r#"{"count":1}"#, 0);
    assert_eq!(std::fs::read(&p).unwrap(), b"xyz");
    assert_eq!(listing(&d), vec!["f"]);
}

/// Root without CAP_FOWNER (a runtime that dropped it) is bound by the sticky
/// bit too: the same refusal, decided from the effective capabilities.
#[test]
fn a_sticky_directory_binds_root_without_cap_fowner() {
    if !setpriv_available() {
        return skip("needs root and setpriv to drop CAP_FOWNER");
    }
    let base = scratch();
    let d = base.path().join("shared");
    std::fs::create_dir(&d).unwrap();
    chown(&d, 65534, 65534);
    chmod(&d, 0o1777);
    let p = write_file(&d, "f", b"abc", 0o666);
    chown(&p, 65533, 65533);
    let ino = inode(&p);
    for hook in ["AS_EDIT_TEST_UNUSED", "AS_EDIT_TEST_NO_TMPFILE"] {
        let r: Run = Command::new("setpriv")
            .args([
                "--bounding-set=-fowner",
                "--",
                BIN,
                "--",
                "f",
                &b64("abc"),
                &b64("x"),
            ])
            .current_dir(&d)
            .env(hook, "1")
            .output()
            .unwrap()
            .into();
        assert_result(&r, &rename_refused(&d, STICKY_WORDS), 1);
        assert_unchanged(&p, b"abc", ino);
        assert_eq!(listing(&d), vec!["f"], "{hook}");
    }
    // With CAP_FOWNER, root edits (and keeps the owner).
    let r = run_argv(
        &d,
        &[b"--", b"f", b64("abc").as_bytes(), b64("x").as_bytes()],
    );
    assert_result(&r, r#"{"count":1}"#, 0);
    assert_eq!(std::fs::read(&p).unwrap(), b"x");
    assert_eq!(std::fs::metadata(&p).unwrap().uid(), 65533);
    assert_eq!(listing(&d), vec!["f"]);
}

/// A scratch directory on the real disk (tmpfs may lack inode flags).
/// Under the target directory (tmpfs may lack inode flags), unless user
/// nobody cannot search the way there (a clone under a directory it
/// cannot): then under the scratch directories' parent, as `scratch`.
fn scratch_on_disk() -> tempfile::TempDir {
    let target = env!("CARGO_TARGET_TMPDIR");
    let d = match nobody_reaches(Path::new(target)) {
        true => tempfile::Builder::new()
            .prefix("as-edit-flags")
            .tempdir_in(target),
        false => tempfile::Builder::new().prefix("as-edit-flags").tempdir(),
    }
    .unwrap();
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    d
}

/// Clears inode flags on drop, so a failed assertion cannot leave an
/// undeletable file behind.
struct Flagged(std::path::PathBuf);

impl Drop for Flagged {
    fn drop(&mut self) {
        if let Ok(f) = std::fs::File::open(&self.0) {
            let _ = rustix::fs::ioctl_setflags(&f, rustix::fs::IFlags::empty());
        }
    }
}

/// A file `f` = "abc\n" on the real disk (tmpfs may lack inode flags) with
/// `flag` set; `None` (the reason printed) where that cannot be done here.
fn flagged_file(flag: rustix::fs::IFlags) -> Option<(tempfile::TempDir, std::path::PathBuf)> {
    if !is_root() {
        skip("chattr +i/+a needs CAP_LINUX_IMMUTABLE (root)");
        return None;
    }
    let d = scratch_on_disk();
    let p = write_file(d.path(), "f", b"abc\n", 0o644);
    let f = std::fs::File::open(&p).unwrap();
    let before = match rustix::fs::ioctl_getflags(&f) {
        Ok(b) => b,
        Err(e) => {
            skip(&format!("this file system has no inode flags: {e}"));
            return None;
        }
    };
    if let Err(e) = rustix::fs::ioctl_setflags(&f, before | flag) {
        skip(&format!("this file system refuses {flag:?}: {e}"));
        return None;
    }
    Some((d, p))
}

fn refused_for_inode_flag(flag: rustix::fs::IFlags, words: &str) {
    let Some((d, p)) = flagged_file(flag) else {
        return;
    };
    let _guard = Flagged(p.clone());
    let ino = inode(&p);
    for extra in [&[][..], &["--fsync"][..], &["--dry-run"][..]] {
        let mut args: Vec<&[u8]> = extra.iter().map(|s| s.as_bytes()).collect();
        let (o, n) = (b64("abc"), b64("xyz"));
        args.extend([&b"--"[..], b"f", o.as_bytes(), n.as_bytes()]);
        let r = run_argv(d.path(), &args);
        assert_result(&r, &flag_refused(d.path(), words), 1);
        assert_unchanged(&p, b"abc\n", ino);
        assert_eq!(listing(d.path()), vec!["f"]);
    }
}

#[test]
fn an_immutable_target_is_permission_denied_naming_the_flag() {
    refused_for_inode_flag(rustix::fs::IFlags::IMMUTABLE, IMMUTABLE_WORDS);
}

#[test]
fn an_append_only_target_is_permission_denied_naming_the_flag() {
    refused_for_inode_flag(
        rustix::fs::IFlags::APPEND,
        "append-only (chattr +a): it can only be appended to, not rewritten, replaced or removed",
    );
}

/// A directory `d` on the real disk (tmpfs may lack inode flags) holding
/// `f` = "abc\n", with `flag` set on `d`; `None` (the reason printed) where
/// that cannot be done here.
fn flagged_dir(
    flag: rustix::fs::IFlags,
    prepare: impl FnOnce(&Path, &Path),
) -> Option<(tempfile::TempDir, std::path::PathBuf, std::path::PathBuf)> {
    if !is_root() {
        skip("chattr +i/+a needs CAP_LINUX_IMMUTABLE (root)");
        return None;
    }
    let base = scratch_on_disk();
    let d = base.path().join("d");
    std::fs::create_dir(&d).unwrap();
    let p = write_file(&d, "f", b"abc\n", 0o644);
    // Before the flag: an append-only inode refuses chown and chmod.
    prepare(&d, &p);
    let dir = std::fs::File::open(&d).unwrap();
    let before = match rustix::fs::ioctl_getflags(&dir) {
        Ok(b) => b,
        Err(e) => {
            skip(&format!("this file system has no inode flags: {e}"));
            return None;
        }
    };
    if let Err(e) = rustix::fs::ioctl_setflags(&dir, before | flag) {
        skip(&format!(
            "this file system refuses {flag:?} on a directory: {e}"
        ));
        return None;
    }
    Some((base, d, p))
}

/// break10 finding 1: nobody in an append-only directory it may write and
/// search but not read (0333) cannot read the flags with the ioctl, so they
/// come from `statx` on the `O_PATH` descriptor: refused before any temp
/// exists, instead of a temp the append-only directory then keeps forever.
#[test]
fn an_append_only_directory_nobody_cannot_read_is_named_and_keeps_no_temp() {
    if !setpriv_available() {
        return skip("needs root and setpriv to drop to nobody");
    }
    let Some((_base, d, p)) = flagged_dir(rustix::fs::IFlags::APPEND, nobody_write_only) else {
        return;
    };
    let _guard = Flagged(d.clone());
    let ino = inode(&p);
    let (o, n) = (b64("abc"), b64("xyz"));
    for extra in [&[][..], &[&b"--fsync"[..]][..]] {
        let mut args: Vec<&[u8]> = extra.to_vec();
        args.extend([&b"--"[..], b"f", o.as_bytes(), n.as_bytes()]);
        let r = run_as_nobody(&d, &args);
        assert_result(&r, &rename_refused(&d, DIR_APPEND_WORDS), 1);
        assert_unchanged(&p, b"abc\n", ino);
        assert_eq!(listing(&d), vec!["f"]);
    }
}

/// An append-only or immutable directory refuses the rename, but the file in
/// it can still be written in place: `write_failed` naming the directory.
fn refused_for_dir_flag(flag: rustix::fs::IFlags, words: &str) {
    let Some((_base, d, p)) = flagged_dir(flag, |_, _| {}) else {
        return;
    };
    let _guard = Flagged(d.clone());
    let ino = inode(&p);
    let (o, n) = (b64("abc"), b64("xyz"));
    for extra in [&[][..], &["--fsync"][..]] {
        let mut args: Vec<&[u8]> = extra.iter().map(|s| s.as_bytes()).collect();
        args.extend([&b"--"[..], b"f", o.as_bytes(), n.as_bytes()]);
        let r = run_argv(&d, &args);
        assert_result(&r, &rename_refused(&d, words), 1);
        assert_unchanged(&p, b"abc\n", ino);
        assert_eq!(listing(&d), vec!["f"]);
    }
    // A dry run writes nothing, so the directory does not refuse it.
    let r = run_argv(&d, &[b"--dry-run", b"--", b"f", o.as_bytes(), n.as_bytes()]);
    assert_result(&r, r#"{"count":1}"#, 0);
    assert_unchanged(&p, b"abc\n", ino);
}

#[test]
fn an_immutable_directory_is_write_failed_naming_it() {
    refused_for_dir_flag(
        rustix::fs::IFlags::IMMUTABLE,
        "immutable (chattr +i): no name in it can be created, replaced or removed",
    );
}

#[test]
fn an_append_only_directory_is_write_failed_naming_it() {
    refused_for_dir_flag(rustix::fs::IFlags::APPEND, DIR_APPEND_WORDS);
}

/// break-perf19: a transaction's create, or edited move, into an
/// append-only directory named its temp there at the commit, could not
/// rename it to the new name, and could not remove it either: the temp
/// (and a directory it made) stayed, `rolled_back` claimed, or an
/// `internal_error` with a partial state. Refused before any temp exists,
/// naming the directory, as an edit in place there is; a plain move (one
/// rename, a name added) still goes in, and an immutable directory is
/// named the same way.
fn txn_into_flagged_dir(flag: rustix::fs::IFlags, words: &str) {
    let Some((base, d, _)) = flagged_dir(flag, |_, _| {}) else {
        return;
    };
    let _guard = Flagged(d.clone());
    let b = base.path();
    let x = write_file(b, "x", b"x\n", 0o644);
    let ino = inode(&x);
    let refused = |op: &str, name: &str| {
        format!(
            r#"{{"error":"write_failed","detail":"file 1 of 1 ({op}): {0}/{name} cannot be replaced by rename: its directory {0} is {words}; the file is unchanged","file":1}}"#,
            d.display()
        )
    };
    for (req, op, name) in [
        (r#"{"op":"create","path":"d/c","content":"c"}"#, "d/c", "c"),
        (
            r#"{"op":"create","path":"d/n/m/c","content":"c"}"#,
            "d/n/m/c",
            "n",
        ),
        (
            r#"{"op":"move","path":"x","to":"d/x","edits":[{"old":"x","new":"y"}]}"#,
            "x",
            "x",
        ),
        (
            r#"{"op":"move","path":"x","to":"d/n/x","edits":[{"old":"x","new":"y"}]}"#,
            "x",
            "n",
        ),
    ] {
        for extra in [&[][..], &["--dry-run"][..], &["--fsync", "--report"][..]] {
            let mut args = extra.to_vec();
            args.push("--stdin");
            let r = run_stdin(b, &args, format!(r#"{{"files":[{req}]}}"#).as_bytes());
            assert_result(&r, &refused(op, name), 1);
            assert_unchanged(&x, b"x\n", ino);
            assert_eq!(listing(&d), vec!["f"], "{req} {extra:?}");
            assert_eq!(listing(b), vec!["d", "x"], "{req} {extra:?}");
        }
    }
    if flag == rustix::fs::IFlags::APPEND {
        let req = br#"{"files":[{"op":"move","path":"x","to":"d/x"}]}"#;
        let r = run_stdin(b, &["--stdin"], req);
        assert_result(&r, r#"{"count":0,"files":2}"#, 0);
        assert_eq!(listing(&d), vec!["f", "x"]);
        assert_eq!(inode(&d.join("x")), ino);
    }
}

#[test]
fn a_transaction_into_an_append_only_directory_keeps_no_temp() {
    txn_into_flagged_dir(rustix::fs::IFlags::APPEND, DIR_APPEND_WORDS);
}

#[test]
fn a_transaction_into_an_immutable_directory_keeps_no_temp() {
    txn_into_flagged_dir(
        rustix::fs::IFlags::IMMUTABLE,
        "immutable (chattr +i): no name in it can be created, replaced or removed",
    );
}

// ------------------------------------------------------------ --root, setgid, ACLs, limits

/// PATH naming the `--root` directory itself (however it
/// is spelled) edited `DIR/DIR`'s name: the target's parent lay outside
/// the root and the beneath-lookup fell back to the root. The root is a
/// directory, `file_not_found`, and nothing in it changes; a file whose
/// parent is the root is still edited.
#[test]
fn the_root_itself_is_never_a_target() {
    let base = scratch();
    let b = base.path();
    let app = b.join("app");
    std::fs::create_dir(&app).unwrap();
    let p = write_file(&app, "app", b"hello\n", 0o644);
    std::os::unix::fs::symlink("app", b.join("lnk")).unwrap();
    std::fs::create_dir(app.join("sub")).unwrap();
    let ino = inode(&p);
    let (o, n) = (b64("hello"), b64("bye"));
    let abs = app.to_str().unwrap().to_owned();
    let lnk = b.join("lnk").to_str().unwrap().to_owned();
    let refused = format!(
        r#"{{"error":"file_not_found","detail":"{abs} is a directory, not a regular file"}}"#
    );
    let slash = format!("{abs}/");
    let cases: Vec<(&Path, Vec<&str>)> = vec![
        (b, vec!["--root", &abs, "--", &abs]),
        (b, vec!["--root", &slash, "--", &slash]),
        (b, vec!["--root", &abs, "--", "app/."]),
        (b, vec!["--root", &abs, "--", "app/sub/.."]),
        (b, vec!["--root", &abs, "--", "lnk"]),
        (b, vec!["--root", &lnk, "--", &lnk]),
        (b, vec!["--report", "--root", &abs, "--", &abs]),
        (b, vec!["--dry-run", "--root", &abs, "--", &abs]),
        (&app, vec!["--root", ".", "--", "."]),
        (&app, vec!["--root", ".", "--", "./"]),
        (&app, vec!["--root", ".", "--", &slash]),
    ];
    for (cwd, mut args) in cases {
        args.extend([o.as_str(), n.as_str()]);
        let a: Vec<&[u8]> = args.iter().map(|s| s.as_bytes()).collect();
        let r = run_argv(cwd, &a);
        assert_result(&r, &refused, 1);
        assert_unchanged(&p, b"hello\n", ino);
        assert_eq!(listing(&app), vec!["app", "sub"], "{args:?}");
    }
    // AS_EDIT_ROOT is the same root.
    let r = run_env(&app, ("AS_EDIT_ROOT", "."), &["--", ".", &o, &n]);
    assert_result(&r, &refused, 1);
    assert_unchanged(&p, b"hello\n", ino);
    // `/` as root and path: a directory too.
    let r = run_argv(
        b,
        &[b"--root", b"/", b"--", b"/", o.as_bytes(), n.as_bytes()],
    );
    assert_result(
        &r,
        r#"{"error":"file_not_found","detail":"/ is a directory, not a regular file"}"#,
        1,
    );
    // A root that is not a directory is an invalid invocation, whatever PATH.
    let file = p.to_str().unwrap();
    for path in [file, "lnk"] {
        let r = run_argv(
            b,
            &[
                b"--root",
                file.as_bytes(),
                b"--",
                path.as_bytes(),
                o.as_bytes(),
                n.as_bytes(),
            ],
        );
        assert_result(
            &r,
            &format!(
                r#"{{"error":"invalid_argument","detail":"--root {file}: Not a directory (os error 20)"}}"#
            ),
            2,
        );
    }
    assert_unchanged(&p, b"hello\n", ino);
    // The control: the file whose parent is the root is looked up in it.
    let r = run_argv(
        &app,
        &[b"--root", b".", b"--", b"app", o.as_bytes(), n.as_bytes()],
    );
    assert_result(&r, r#"{"count":1}"#, 0);
    assert_eq!(std::fs::read(&p).unwrap(), b"bye\n");
    assert_eq!(listing(&app), vec!["app", "sub"]);
}

/// Runs the binary as `uid`:`gid` with exactly the supplementary `groups`.
fn run_as(uid: u32, gid: u32, groups: &[u32], dir: &Path, args: &[&str]) -> Run {
    let mut c = Command::new("setpriv");
    c.arg(format!("--reuid={uid}"))
        .arg(format!("--regid={gid}"));
    if groups.is_empty() {
        c.arg("--clear-groups");
    } else {
        let g: Vec<String> = groups.iter().map(|g| g.to_string()).collect();
        c.arg(format!("--groups={}", g.join(",")));
    }
    c.arg("--")
        .arg(nobody_bin())
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("setpriv runs")
        .into()
}

fn owner_group_mode(p: &Path) -> (u32, u32, u32) {
    let m = std::fs::metadata(p).unwrap();
    (m.uid(), m.gid(), m.mode() & 0o7777)
}

/// In a setgid directory
/// (`1000:2000`, 2777) the temp starts in the directory's group; the old
/// code skipped the `fchown` because the file's group was the caller's
/// egid, and `fchmod` then dropped setgid (`1000:2000`, 0755). The group
/// is kept whenever the caller belongs to it (egid or supplementary), and
/// with it all 12 mode bits; a group the caller is not in cannot be kept,
/// and the kernel drops setgid, as for any chmod.
#[test]
fn a_setgid_directory_keeps_a_non_root_callers_group_and_setgid_bit() {
    if !setpriv_available() {
        return skip("needs root and setpriv to run as uid 1000");
    }
    let base = scratch();
    let d = base.path().join("dir");
    std::fs::create_dir(&d).unwrap();
    chown(&d, 1000, 2000);
    chmod(&d, 0o2777);
    let (o, n) = (b64("hello"), b64("bye"));
    // (file group, file mode, caller's supplementary groups, expected after)
    type Case<'a> = (u32, u32, &'a [u32], (u32, u32, u32));
    let cases: [Case; 4] = [
        (1000, 0o2755, &[], (1000, 1000, 0o2755)),
        (1000, 0o6750, &[], (1000, 1000, 0o6750)),
        (3000, 0o2775, &[3000], (1000, 3000, 0o2775)),
        (4000, 0o2777, &[], (1000, 2000, 0o0777)),
    ];
    for (gid, m, groups, after) in cases {
        let p = write_file(&d, "f", b"hello\n", 0o644);
        chown(&p, 1000, gid);
        chmod(&p, m);
        let r = run_as(1000, 1000, groups, &d, &["--", "f", &o, &n]);
        assert_result(&r, r#"{"count":1}"#, 0);
        assert_eq!(std::fs::read(&p).unwrap(), b"bye\n");
        assert_eq!(owner_group_mode(&p), after, "group {gid} mode {m:o}");
        assert_eq!(listing(&d), vec!["f"]);
    }
}

/// A directory with the default ACL `u:1001:rwx` holding `f` (mode 0600,
/// no ACL of its own), or `None` (skip printed) where ACLs cannot be set.
fn dir_with_default_acl() -> Option<(tempfile::TempDir, std::path::PathBuf)> {
    let base = scratch();
    let d = base.path().join("dir");
    std::fs::create_dir(&d).unwrap();
    chmod(&d, 0o777);
    let p = write_file(&d, "f", b"hello\n", 0o600);
    let set = Command::new("setfacl")
        .args(["-d", "-m", "u:1001:rwx"])
        .arg(&d)
        .output();
    if !matches!(set, Ok(o) if o.status.success()) {
        skip("setfacl is missing or this file system has no ACLs (scripts/test.sh installs acl)");
        return None;
    }
    Some((base, p))
}

/// The raw access ACL of `p`, `None` when it has none.
fn access_acl(p: &Path) -> Option<Vec<u8>> {
    let mut buf = vec![0u8; 4096];
    rustix::fs::getxattr(p, "system.posix_acl_access", &mut buf[..])
        .ok()
        .map(|n| buf[..n].to_vec())
}

fn getfacl(p: &Path) -> String {
    let o = Command::new("getfacl").arg("-cp").arg(p).output().unwrap();
    String::from_utf8(o.stdout).unwrap()
}

/// The directory's default ACL became the temp's access
/// ACL and was kept on a file that had none (`user:1001:rwx`, masked to
/// `---` by mode 0600 until a `chmod g+rw` grants it). The new content
/// carries exactly the original's ACL state: none when it had none, its
/// own (not the inherited one) when it had one; through the unnamed temp,
/// the named one, and the copy into a named temp alike, as root and not.
#[test]
fn a_directorys_default_acl_is_not_added_to_a_file_without_one() {
    let temps = [
        None,
        Some("AS_EDIT_TEST_NO_TMPFILE"),
        Some("AS_EDIT_TEST_NO_LINK"),
    ];
    for temp in temps {
        let Some((base, p)) = dir_with_default_acl() else {
            return;
        };
        let d = p.parent().unwrap();
        assert_eq!(access_acl(&p), None);
        let env = (temp.unwrap_or("AS_EDIT_TEST_NONE"), "1");
        let r = run_env(d, env, &["--", "f", &b64("hello"), &b64("bye")]);
        assert_result(&r, r#"{"count":1}"#, 0);
        assert_eq!(std::fs::read(&p).unwrap(), b"bye\n");
        assert_eq!((access_acl(&p), mode(&p)), (None, 0o600), "{temp:?}");
        chmod(&p, 0o660);
        assert_eq!(getfacl(&p), "user::rw-\ngroup::rw-\nother::---\n\n");
        // A file with an ACL of its own keeps exactly that one.
        let st = Command::new("setfacl")
            .args(["-m", "u:1002:r"])
            .arg(&p)
            .status()
            .unwrap();
        assert!(st.success());
        let own = access_acl(&p).expect("an ACL was set");
        let r = run_env(d, env, &["--", "f", &b64("bye"), &b64("hi")]);
        assert_result(&r, r#"{"count":1}"#, 0);
        assert_eq!(std::fs::read(&p).unwrap(), b"hi\n");
        assert_eq!(access_acl(&p), Some(own), "{temp:?}");
        assert_eq!(listing(d), vec!["f"]);
        drop(base);
    }
    if !setpriv_available() {
        return skip("needs root and setpriv for the non-root case");
    }
    let Some((_base, p)) = dir_with_default_acl() else {
        return;
    };
    chown(&p, 65534, 65534);
    let r = run_as_nobody(
        p.parent().unwrap(),
        &[b"--", b"f", b64("hello").as_bytes(), b64("bye").as_bytes()],
    );
    assert_result(&r, r#"{"count":1}"#, 0);
    assert_eq!(
        (access_acl(&p), owner_group_mode(&p)),
        (None, (65534, 65534, 0o600))
    );
}

/// Runs the binary in `dir` with RLIMIT_NOFILE set to `n`, either by the
/// test hook (after the dynamic loader, which itself needs a descriptor:
/// the static binary under `ulimit -n n`) or by `setrlimit` before exec.
fn run_nofile(dir: &Path, n: u64, hook: bool, env: Option<&str>, args: &[&str]) -> Run {
    let mut c = Command::new(BIN);
    c.args(args).current_dir(dir).stdin(Stdio::null());
    if let Some(e) = env {
        c.env(e, "1");
    }
    if hook {
        c.env("AS_EDIT_TEST_NOFILE", n.to_string());
    } else {
        // SAFETY: one raw syscall on a value on the stack, after fork.
        unsafe {
            c.pre_exec(move || {
                let lim = libc::rlimit {
                    rlim_cur: n,
                    rlim_max: n,
                };
                if libc::setrlimit(libc::RLIMIT_NOFILE, &lim) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    c.output().expect("the binary runs").into()
}

/// Descriptor limits: `ulimit -n 3` was
/// `file_not_found`, 4 `read_failed`, 5-6 `write_failed`. At every limit
/// from 3 to 8, with the options and temp paths that use more descriptors,
/// the edit either succeeds exactly or is `write_failed` naming the step,
/// EMFILE and `retry`, with the file unchanged and nothing left; the
/// static binary's view (the hook) and a real limit set before exec agree;
/// the retry the detail asks for (with descriptors free) edits; and the
/// highest limit edits in every combination.
#[test]
fn no_free_descriptor_is_write_failed_at_every_limit() {
    let d = scratch();
    let dir = d.path().display().to_string();
    let p = write_file(d.path(), "f", b"hello\n", 0o644);
    let (o, n) = (b64("hello"), b64("bye"));
    let root = d.path().to_str().unwrap().to_owned();
    let suffix = "Too many open files (os error 24) (no free file descriptor: the process's RLIMIT_NOFILE, ulimit -n, is used up); the file is unchanged, retry";
    let steps = [
        format!("resolving {dir}: "),
        format!("opening the root {dir}: "),
        format!("opening {dir}/f: "),
        format!("creating a temp file beside it for {dir}/f: "),
        format!("naming the temp file for {dir}/f: "),
    ];
    // The issue's three limits, exactly.
    for (lim, step) in [(3, &steps[0]), (4, &steps[2]), (5, &steps[3])] {
        let r = run_nofile(d.path(), lim, true, None, &["--", "f", &o, &n]);
        assert_result(
            &r,
            &format!(r#"{{"error":"write_failed","detail":"{step}{suffix}"}}"#),
            1,
        );
    }
    let option_sets: [&[&str]; 5] = [
        &[],
        &["--fsync", "--report"],
        &["--root", &root],
        &["--eol", "preserve", "--hints"],
        &["--dry-run"],
    ];
    for opts in option_sets {
        for temp in [
            None,
            Some("AS_EDIT_TEST_NO_TMPFILE"),
            Some("AS_EDIT_TEST_NO_LINK"),
        ] {
            let mut args: Vec<&str> = opts.to_vec();
            args.extend(["--", "f", &o, &n]);
            let mut failed = 0;
            for lim in 3..=8u64 {
                let ino = inode(&p);
                let r = run_nofile(d.path(), lim, true, temp, &args);
                let ctx = format!("ulimit -n {lim} {args:?} {temp:?}: {}", r.stdout);
                assert_eq!(r.stderr, "", "{ctx}");
                let line = r.stdout.strip_prefix("__RESULT__").expect(&ctx);
                if r.code == 0 {
                    assert!(line.starts_with(r#"{"count":1"#), "{ctx}");
                    std::fs::write(&p, b"hello\n").unwrap();
                } else {
                    assert_eq!(r.code, 1, "{ctx}");
                    assert!(lim < 8, "the highest limit edits: {ctx}");
                    failed += 1;
                    let detail = line
                        .strip_prefix(r#"{"error":"write_failed","detail":""#)
                        .and_then(|l| l.split_once('"'))
                        .map(|(d, _)| d)
                        .expect(&ctx);
                    assert!(
                        steps.iter().any(|s| detail.starts_with(s.as_str()))
                            && detail.ends_with(suffix),
                        "{ctx}"
                    );
                    assert_unchanged(&p, b"hello\n", ino);
                    assert_eq!(listing(d.path()), vec!["f"], "{ctx}");
                }
                // A real limit, set before exec, answers the same (the
                // loader needs a descriptor, so from 4 up).
                if lim >= 4 {
                    let real = run_nofile(d.path(), lim, false, temp, &args);
                    assert_eq!(
                        (real.stdout, real.code),
                        (r.stdout.clone(), r.code),
                        "real {ctx}"
                    );
                    std::fs::write(&p, b"hello\n").unwrap();
                    assert_eq!(listing(d.path()), vec!["f"], "real {ctx}");
                }
            }
            assert!(failed >= 1, "{args:?} {temp:?}: no limit failed");
            // The retry with descriptors free, as the detail says, edits.
            let r = run_nofile(d.path(), 1024, true, temp, &args);
            assert!(
                r.stdout.starts_with("__RESULT__{\"count\":1"),
                "{}",
                r.stdout
            );
            std::fs::write(&p, b"hello\n").unwrap();
        }
    }
}

/// Runs the binary as root with `drop` (e.g. `-fowner`) removed from its
/// capability bounding set, so it is not in effect after exec.
fn run_root_without(drop: &str, dir: &Path, args: &[&str]) -> Run {
    Command::new("setpriv")
        .args(["--inh-caps=-all", &format!("--bounding-set={drop}"), "--"])
        .arg(BIN)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("setpriv runs")
        .into()
}

/// Root with some capabilities dropped, as
/// container profiles do. Without CAP_FOWNER the old code chowned the temp
/// to the owner first, then could not chmod it: every file came out 0600.
/// Without CAP_CHOWN the owner cannot be kept, and the old code still set
/// the mode: a setuid program of uid 1000 came out setuid root. Now the
/// permission bits are set while the temp is still the caller's, and
/// setuid (setgid) is kept only with the owner (group), as `cp -p` does.
#[test]
fn root_without_fowner_or_chown_keeps_the_mode_and_never_a_foreign_setuid() {
    if !setpriv_available() {
        return skip("needs root and setpriv to drop capabilities");
    }
    let base = scratch();
    let d = base.path();
    let (o, n) = (b64("hello"), b64("bye"));
    // (dropped, file owner:group, mode, expected owner, group, mode after)
    type Case<'a> = (&'a str, (u32, u32), u32, (u32, u32, u32));
    let cases: [Case; 6] = [
        ("-fowner", (1000, 2000), 0o644, (1000, 2000, 0o644)),
        ("-fowner", (1000, 2000), 0o755, (1000, 2000, 0o755)),
        ("-chown", (1000, 2000), 0o6755, (0, 0, 0o755)),
        ("-chown", (1000, 0), 0o6755, (0, 0, 0o2755)),
        ("-chown", (1000, 2000), 0o1644, (0, 0, 0o1644)),
        ("-fsetid", (0, 2000), 0o4755, (0, 2000, 0o4755)),
    ];
    for (drop, (uid, gid), m, after) in cases {
        let p = write_file(d, "f", b"hello\n", 0o644);
        chown(&p, uid, gid);
        chmod(&p, m);
        let r = run_root_without(drop, d, &["--", "f", &o, &n]);
        assert_result(&r, r#"{"count":1}"#, 0);
        assert_eq!(std::fs::read(&p).unwrap(), b"bye\n");
        assert_eq!(owner_group_mode(&p), after, "{drop} {uid}:{gid} {m:o}");
        assert_eq!(listing(d), vec!["f"]);
    }
    // In a setgid directory the temp starts in its group (2000): the
    // refused owner must not take the permitted group (root's 0) with it.
    let sd = d.join("sg");
    std::fs::create_dir(&sd).unwrap();
    chown(&sd, 1000, 2000);
    chmod(&sd, 0o2777);
    let p = write_file(&sd, "f", b"hello\n", 0o644);
    chown(&p, 1000, 0);
    chmod(&p, 0o6755);
    let r = run_root_without("-chown", &sd, &["--", "f", &o, &n]);
    assert_result(&r, r#"{"count":1}"#, 0);
    assert_eq!(std::fs::read(&p).unwrap(), b"bye\n");
    assert_eq!(owner_group_mode(&p), (0, 0, 0o2755));
    assert_eq!(listing(&sd), vec!["f"]);
}

/// The last look at the target's name before
/// the rename (`newfstatat(dir, "f")`) running out of memory or descriptors
/// was answered `conflict`, "changed by another writer", which is false.
/// `strace` injects the errno into exactly that call (the last stat of the
/// name, found by a first traced run).
#[test]
fn no_memory_at_the_last_look_before_the_rename_is_write_failed() {
    if Command::new("strace").arg("-V").output().is_err() {
        return skip("strace is missing (scripts/test.sh installs it)");
    }
    let d = scratch();
    let dir = d.path().display().to_string();
    let log = d.path().join("..").join(format!(
        "strace-{}.log",
        d.path().file_name().unwrap().to_string_lossy()
    ));
    let (o, n) = (b64("hello"), b64("bye"));
    let args = ["--", "f", &o, &n];
    let p = write_file(d.path(), "f", b"hello\n", 0o644);
    let traced = Command::new("strace")
        .args(["-f", "-qq", "-e", "trace=newfstatat", "-o"])
        .arg(&log)
        .arg(BIN)
        .args(args)
        .current_dir(d.path())
        .output()
        .expect("strace runs");
    assert_eq!(traced.stdout, b"__RESULT__{\"count\":1}\n");
    std::fs::write(&p, b"hello\n").unwrap();
    let trace = std::fs::read_to_string(&log).unwrap();
    std::fs::remove_file(&log).unwrap();
    // The re-check is the edit's last stat of "f" (strace counts from 1).
    let calls: Vec<&str> = trace
        .lines()
        .filter(|l| l.contains("newfstatat("))
        .collect();
    let when = calls.iter().rposition(|l| l.contains("\"f\"")).unwrap() + 1;
    for (errno, words) in [
        ("ENOMEM", "Cannot allocate memory (os error 12) (out of memory)"),
        ("EMFILE", "Too many open files (os error 24) (no free file descriptor: the process's RLIMIT_NOFILE, ulimit -n, is used up)"),
    ] {
        let ino = inode(&p);
        let out: Run = Command::new("strace")
            .args(["-f", "-qq", "-o", "/dev/null", "-e"])
            .arg(format!("inject=newfstatat:error={errno}:when={when}"))
            .arg(BIN)
            .args(args)
            .current_dir(d.path())
            .stdin(Stdio::null())
            .output()
            .unwrap()
            .into();
        assert_result(
            &out,
            &format!(
                r#"{{"error":"write_failed","detail":"re-checking the file for {dir}/f: {words}; the file is unchanged, retry"}}"#
            ),
            1,
        );
        assert_unchanged(&p, b"hello\n", ino);
        assert_eq!(listing(d.path()), vec!["f"]);
    }
}
