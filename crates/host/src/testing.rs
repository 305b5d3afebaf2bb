//! Test-only: writing a file that the test then executes (a fake container
//! CLI, a stand-in helper, a sandbox's tool). Shared by the unit tests and,
//! with the `testing` feature, by the helper's `tests/common`.
//!
//! Why a child process writes it: the kernel refuses to execute a file that
//! any process holds open for writing (ETXTBSY, "Text file busy"). Had this
//! process written it, a thread forking at that moment (every test spawns
//! processes, in parallel) would carry a copy of the write descriptor until
//! its child's own exec. O_CLOEXEC, which std sets, closes it only then, and
//! closing or renaming our copy changes nothing: the inode stays open for
//! writing. A retry of the spawn would cover our own `Command`s but not an
//! exec done further down (a `sh -c` that runs the helper, the agent
//! runtime's exec), which reports exit 126 like any other failure. A
//! descriptor opened by a child ends with that child, which is waited for.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// Writes `bytes` to `path` (created or truncated, as `std::fs::write`
/// does) from a child process, and waits for it to exit.
pub fn write_from_child(path: &Path, bytes: &[u8]) {
    let mut child = Command::new("sh")
        .args(["-c", "cat > \"$1\"", "sh"])
        .arg(path)
        .stdin(Stdio::piped())
        .spawn()
        .expect("sh runs");
    // Fed while cat drains; dropped (closed) before the wait.
    child
        .stdin
        .take()
        .expect("piped")
        .write_all(bytes)
        .expect("cat reads its stdin");
    let status = child.wait().expect("sh exits");
    assert!(status.success(), "writing {}: {status}", path.display());
}

/// [`write_from_child`], then mode 0755 (a chmod opens nothing).
pub fn write_executable(path: &Path, bytes: &[u8]) {
    use std::os::unix::fs::PermissionsExt;
    write_from_child(path, bytes);
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}
