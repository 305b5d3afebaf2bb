//! Helpers shared by the integration tests: run the real binary the way a
//! host does (through `sh -c` with POSIX quoting, or as plain argv) and look
//! at what it left behind.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use base64::Engine as _;

pub const BIN: &str = env!("CARGO_BIN_EXE_as-edit");

// Files the tests execute are written from a child process (the module doc
// says why): the same helpers the unit tests use.
#[allow(unused_imports)] // not every test binary runs what it writes
pub use as_edit_host::testing::{write_executable, write_from_child};

pub fn b64(s: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(s.as_bytes())
}

/// POSIX single-quote quoting, as the host library does it (its own tests
/// check that a shlex-style split reverses it).
pub use as_edit_host::command::sh_quote;

/// The command line a host sends: `'BIN' -- 'PATH' 'OLD' 'NEW' 'ALL'`.
pub fn host_command(bin: &str, args: &[&[u8]]) -> Vec<u8> {
    let mut cmd = sh_quote(bin.as_bytes());
    for a in args {
        cmd.push(b' ');
        cmd.extend_from_slice(&sh_quote(a));
    }
    cmd
}

#[derive(Debug)]
pub struct Run {
    pub stdout: String,
    pub stderr: String,
    pub code: i32,
}

impl From<Output> for Run {
    fn from(o: Output) -> Run {
        Run {
            stdout: String::from_utf8(o.stdout).expect("stdout is UTF-8"),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
            code: o.status.code().expect("exited, not killed"),
        }
    }
}

/// An edit of `count` replacements the helper made in the sandbox.
pub fn native(count: u64) -> as_edit_host::Edited {
    as_edit_host::Edited {
        count,
        via: as_edit_host::Via::Native,
    }
}

/// An edit of `count` replacements made through the transfer fallback.
pub fn transfer(count: u64) -> as_edit_host::Edited {
    as_edit_host::Edited {
        count,
        via: as_edit_host::Via::Transfer,
    }
}

/// Runs through `sh -c` in `dir`, exactly as a host sends it.
pub fn run_sh(dir: &Path, args: &[&[u8]]) -> Run {
    let cmd = host_command(BIN, args);
    Command::new("sh")
        .arg("-c")
        .arg(OsStr::from_bytes(&cmd))
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("sh runs")
        .into()
}

/// Runs with a plain argv (runtimes that exec without a shell).
pub fn run_argv(dir: &Path, args: &[&[u8]]) -> Run {
    Command::new(BIN)
        .args(args.iter().map(|a| OsStr::from_bytes(a)))
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("binary runs")
        .into()
}

/// Asserts the one-line contract: exactly the expected line, nothing on stderr.
pub fn assert_result(r: &Run, line: &str, code: i32) {
    assert_eq!(
        r.stdout,
        format!("__RESULT__{line}\n"),
        "stdout (stderr: {:?})",
        r.stderr
    );
    assert_eq!(r.stderr, "", "stderr must stay empty");
    assert_eq!(r.code, code, "exit code for {line}");
}

/// Names in a directory, sorted (to prove no temp was left behind).
pub fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// A refusal changed nothing: `p` holds exactly `bytes`, on the same inode.
pub fn assert_unchanged(p: &Path, bytes: &[u8], ino: u64) {
    assert_eq!(
        (std::fs::read(p).unwrap(), inode(p)),
        (bytes.to_vec(), ino),
        "{} is unchanged",
        p.display()
    );
}

/// The result line for a file the caller may not write: `dir/name`.
pub fn no_write_permission(dir: &Path, name: &str) -> String {
    format!(
        r#"{{"error":"permission_denied","detail":"no write permission on {}/{name}"}}"#,
        dir.display()
    )
}

pub fn inode(p: &Path) -> u64 {
    std::fs::symlink_metadata(p).unwrap().ino()
}

pub fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().mode() & 0o7777
}

/// A scratch directory world-searchable, so dropped-privilege cases can use it.
pub fn scratch() -> tempfile::TempDir {
    let d = tempfile::Builder::new()
        .prefix("as-edit-test")
        .tempdir()
        .unwrap();
    std::fs::set_permissions(
        d.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    d
}

pub fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// `setpriv` to drop to nobody, when we are root and it exists, and
/// nobody can reach the scratch directories and run the binary (a clone
/// under a directory nobody cannot search: [`nobody_bin`]); otherwise the
/// reason is printed.
pub fn setpriv_available() -> bool {
    let setpriv = is_root()
        && Command::new("setpriv")
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
    if setpriv && !nobody_reaches(&std::env::temp_dir()) {
        skip(&format!(
            "user nobody cannot search the way to the scratch directories ({}): set TMPDIR to one it can",
            std::env::temp_dir().display()
        ));
        return false;
    }
    setpriv && nobody_bin_checked().is_some()
}

/// Whether user nobody (uid 65534, no groups) may search every directory
/// on the way to `p`, `p` itself included when a directory.
pub fn nobody_reaches(p: &Path) -> bool {
    let Ok(p) = p.canonicalize() else {
        return false;
    };
    p.ancestors().all(|a| match std::fs::metadata(a) {
        Ok(m) if m.is_dir() => match m.uid() {
            65534 => m.mode() & 0o100 != 0,
            _ => m.mode() & 0o001 != 0,
        },
        Ok(_) => true,
        Err(_) => false,
    })
}

/// The binary's copy for nobody (its directory removed at exit).
static NOBODY_BIN: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();

extern "C" fn remove_nobody_bin() {
    if let Some(Some(p)) = NOBODY_BIN.get() {
        let _ = std::fs::remove_dir_all(Path::new(p).parent().expect("in a directory"));
    }
}

fn nobody_bin_checked() -> Option<&'static str> {
    if nobody_reaches(Path::new(BIN)) && std::fs::metadata(BIN).is_ok_and(|m| m.mode() & 0o001 != 0)
    {
        return Some(BIN);
    }
    let dir = NOBODY_BIN.get_or_init(|| {
        // The clone (and its target directory) is where nobody cannot
        // search: the binary is copied under the scratch directories'
        // parent, by a child process (no write descriptor of it open here
        // when it is run: ETXTBSY), and removed when this process exits.
        let d = tempfile::Builder::new()
            .prefix("as-edit-nobody-bin")
            .tempdir()
            .ok()?
            .keep();
        let _ = std::fs::set_permissions(&d, std::os::unix::fs::PermissionsExt::from_mode(0o755));
        // SAFETY: registers a plain function, run once at exit.
        unsafe { libc::atexit(remove_nobody_bin) };
        let copied = Command::new("cp")
            .arg(BIN)
            .arg(d.join("as-edit"))
            .status()
            .is_ok_and(|s| s.success());
        if !copied {
            let _ = std::fs::remove_dir_all(&d);
            return None;
        }
        d.join("as-edit").to_str().map(str::to_owned)
    });
    match dir {
        Some(bin) => Some(bin.as_str()),
        None => {
            skip(&format!(
                "user nobody cannot run {BIN} and it could not be copied where it can"
            ));
            None
        }
    }
}

/// The binary's path as nobody may run it: [`BIN`], or its copy in a
/// directory nobody can search when the clone is under one it cannot.
/// Only after [`setpriv_available`] said yes.
pub fn nobody_bin() -> &'static str {
    nobody_bin_checked().expect("setpriv_available checked it")
}

/// Runs the binary as uid/gid 65534 with a plain argv.
pub fn run_as_nobody(dir: &Path, args: &[&[u8]]) -> Run {
    Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(nobody_bin())
        .args(args.iter().map(|a| OsStr::from_bytes(a)))
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("setpriv runs")
        .into()
}

/// A file written with given bytes and mode; returns its path. One with an
/// execute bit is written by a child process ([`write_from_child`]): it may
/// be run next.
pub fn write_file(dir: &Path, name: impl AsRef<Path>, bytes: &[u8], mode: u32) -> PathBuf {
    let p = dir.join(name);
    if mode & 0o111 != 0 {
        write_from_child(&p, bytes);
    } else {
        std::fs::write(&p, bytes).unwrap();
    }
    std::fs::set_permissions(&p, std::os::unix::fs::PermissionsExt::from_mode(mode)).unwrap();
    p
}

/// Prints why a case is skipped (a skip without a reason is a defect).
/// Written to the stderr handle directly: the test harness captures
/// `eprintln!` of passing tests, and this must reach the CI log.
pub fn skip(why: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "SKIPPED: {why}");
}

/// Runs `cmd` in `dir` with `input` on its standard input, fed from a thread
/// while the output drains (so neither side can block on a full pipe).
pub fn run_with_stdin(mut cmd: Command, dir: &Path, input: &[u8]) -> Run {
    use std::io::Write;
    let mut child = cmd
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawns");
    let mut pipe = child.stdin.take().expect("stdin is piped");
    let input = input.to_vec();
    // A child that exits early closes the pipe: not the test's error.
    let writer = std::thread::spawn(move || {
        let _ = pipe.write_all(&input);
    });
    let out = child.wait_with_output().expect("runs");
    writer.join().expect("writer thread");
    out.into()
}

/// Runs the real binary with `args` and `input` on standard input.
pub fn run_stdin(dir: &Path, args: &[&str], input: &[u8]) -> Run {
    let mut c = Command::new(BIN);
    c.args(args);
    run_with_stdin(c, dir, input)
}

/// The write end of a pipe whose read end is closed: writing to it fails
/// with EPIPE (a host that stopped reading).
pub fn broken_pipe() -> std::fs::File {
    use std::os::fd::FromRawFd;
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills both descriptors; each is owned exactly once below.
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    unsafe {
        drop(std::os::fd::OwnedFd::from_raw_fd(fds[0]));
        std::fs::File::from_raw_fd(fds[1])
    }
}

/// Mounts a tmpfs at `at` (root only); false where that is not allowed.
pub fn tmpfs(at: &std::path::Path) -> bool {
    is_root()
        && std::process::Command::new("mount")
            .args(["-t", "tmpfs", "none"])
            .arg(at)
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
}

/// Unmounts `at`, failing the test if that fails.
pub fn umount(at: &std::path::Path) {
    let ok = std::process::Command::new("umount").arg(at).status();
    assert!(ok.unwrap().success(), "umount {}", at.display());
}
