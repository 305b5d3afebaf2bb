//! Running the container CLI: the commands `exec` and `inspect` are built
//! from, the run itself (stdin fed while the output drains), and what its
//! failures mean (the container's state, `docker exec`'s own set-up
//! errors).

use std::io::{self, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use super::Docker;

impl Docker {
    pub(super) fn cli(&self) -> Command {
        let mut c = Command::new(&self.program);
        c.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        c
    }

    pub(super) fn exec_prefix(&self, stdin: bool) -> Command {
        let mut c = self.cli();
        c.arg("exec");
        if stdin {
            c.arg("-i");
        }
        if let Some(u) = &self.user {
            c.args(["--user", u]);
        }
        if let Some(d) = &self.workdir {
            c.args(["--workdir", d]);
        }
        c.arg(&self.container);
        c
    }

    /// Runs the CLI; a binary that cannot be spawned is `NotConnected`.
    pub(super) fn run(
        &self,
        mut c: Command,
        stdin: Option<&[u8]>,
    ) -> io::Result<std::process::Output> {
        if stdin.is_some() {
            c.stdin(Stdio::piped());
        }
        let mut child = c.spawn().map_err(|e| {
            let what = Path::new(&self.program).display();
            let msg = if e.kind() == io::ErrorKind::NotFound {
                format!("the container CLI `{what}` was not found on PATH (install docker.io, or name another CLI such as podman)")
            } else {
                format!("cannot run the container CLI `{what}`: {e}")
            };
            io::Error::new(io::ErrorKind::NotConnected, msg)
        })?;
        // Feed stdin from a thread while the output is drained, so neither
        // side can block the other on a full pipe; scoped, so the bytes are
        // borrowed rather than copied (the file's size once more).
        let pipe = child.stdin.take();
        std::thread::scope(|s| {
            if let (Some(data), Some(mut pipe)) = (stdin, pipe) {
                s.spawn(move || {
                    let _ = pipe.write_all(data);
                });
            }
            child.wait_with_output()
        })
    }

    /// `Running` or why not: no such container, or stopped.
    pub(super) fn state(&self) -> io::Result<()> {
        let mut c = self.cli();
        c.args([
            "inspect",
            "--type",
            "container",
            "--format",
            "{{.State.Status}}",
        ])
        .arg(&self.container);
        let out = self.run(c, None)?;
        let status = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr).trim().to_owned();
            let msg = if err.to_ascii_lowercase().contains("no such") {
                format!("no such container: {}", self.container)
            } else {
                // The daemon is down, say: the CLI's words say it best.
                format!("cannot inspect container {}: {err}", self.container)
            };
            return Err(io::Error::new(io::ErrorKind::NotConnected, msg));
        }
        if status != "running" {
            return Err(io::Error::new(
                io::ErrorKind::NotConnected,
                format!(
                    "container {} is not running (status: {status})",
                    self.container
                ),
            ));
        }
        Ok(())
    }

    /// `TOOL ARGS… PATH` as root (the rights `docker cp` has), argv only
    /// (no shell needed); an image without the tool is `Unsupported`.
    pub(super) fn root_tool(&self, tool: &[&str], path: &Path) -> io::Result<()> {
        let abs = self.absolute(path)?;
        self.target(&abs)?;
        let mut c = self.cli();
        c.args(["exec", "--user", "0", &self.container])
            .args(tool)
            .arg(&abs);
        let out = self.run(c, None)?;
        match out.status.code() {
            Some(0) => Ok(()),
            Some(126 | 127) if exec_setup_error(&out).is_none() => Err(io::Error::new(
                io::ErrorKind::Unsupported,
                format!("the container has no usable {}", tool[0]),
            )),
            _ => {
                self.state()?;
                let said = String::from_utf8_lossy(&out.stderr).trim().to_owned();
                let kind = super::super::command::said_kind(said.as_bytes());
                Err(io::Error::new(kind, format!("{}: {said}", tool[0])))
            }
        }
    }
}

/// `docker exec` exits 126 both for "cannot execute" and when it cannot set
/// the process up at all: an unknown `--user`, a `--workdir` that does not
/// exist. The latter is no missing helper: falling back would send the edit
/// through `docker cp`, which runs as root, so it is `NotConnected` (the
/// Editor returns it as a backend error, with no transfer attempt).
pub(super) fn exec_setup_error(out: &std::process::Output) -> Option<io::Error> {
    if out.status.code() != Some(126)
        || memchr::memmem::find(
            &out.stdout,
            as_edit_wire::protocol::RESULT_PREFIX.as_bytes(),
        )
        .is_some()
    {
        return None;
    }
    // The daemon's words arrive on stdout (docker) or stderr (podman).
    let text = [&out.stdout[..], &out.stderr[..]].concat();
    let text = String::from_utf8_lossy(&text);
    let lower = text.to_ascii_lowercase();
    [
        "unable to find user",
        "no matching entries in passwd",
        "chdir to cwd",
    ]
    .iter()
    .any(|w| lower.contains(w))
    .then(|| {
        io::Error::new(
            io::ErrorKind::NotConnected,
            format!(
                "docker exec cannot start a process as configured (--user, --workdir): {}",
                text.trim()
            ),
        )
    })
}
