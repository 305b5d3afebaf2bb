//! [`LocalShell`]: a [`Sandbox`] on this machine, for tests, the example and
//! the install benchmark (optionally inside a chroot holding a minimal image).

use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use super::{ExecOutput, Sandbox};

/// A download of something that is not a regular file (a FIFO, a
/// device), refused before reading: the helper's words, "is a FIFO".
#[derive(Debug)]
pub(crate) struct NotRegular(pub(crate) &'static str);

impl std::fmt::Display for NotRegular {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}, not a regular file", self.0)
    }
}

impl std::error::Error for NotRegular {}

/// Runs commands with the local `sh -c`; files are plain reads and writes.
/// (Optionally inside `chroot ROOT`, for tests of minimal images.)
#[derive(Clone, Debug, Default)]
pub struct LocalShell {
    /// Run commands as `chroot ROOT /bin/sh -c CMD`; files map under ROOT.
    pub chroot: Option<std::path::PathBuf>,
}

impl LocalShell {
    /// Commands run with this machine's `sh -c`, files at their own paths.
    pub fn new() -> Self {
        LocalShell::default()
    }

    fn host_path(&self, p: &Path) -> std::path::PathBuf {
        match &self.chroot {
            Some(root) => root.join(p.strip_prefix("/").unwrap_or(p)),
            None => p.to_path_buf(),
        }
    }
}

impl Sandbox for LocalShell {
    fn exec(&mut self, command: &[u8], stdin: Option<&[u8]>) -> io::Result<ExecOutput> {
        use std::io::Write;
        use std::process::{Command, Stdio};
        let cmd = std::ffi::OsStr::from_bytes(command);
        let mut c = match &self.chroot {
            Some(root) => {
                let mut c = Command::new("chroot");
                c.arg(root).args(["/bin/sh", "-c"]).arg(cmd);
                c
            }
            None => {
                let mut c = Command::new("sh");
                c.arg("-c").arg(cmd);
                c
            }
        };
        c.stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
        let mut child = c.spawn()?;
        // Feed stdin from a thread while the output is drained, so neither
        // side can block the other on a full pipe.
        let writer = match (stdin, child.stdin.take()) {
            (Some(data), Some(mut pipe)) => {
                let data = data.to_vec();
                // A child that exits early closes the pipe: not our error.
                Some(std::thread::spawn(move || {
                    let _ = pipe.write_all(&data);
                }))
            }
            _ => None,
        };
        let out = child.wait_with_output()?;
        if let Some(w) = writer {
            let _ = w.join();
        }
        let mut merged = out.stdout;
        merged.extend_from_slice(&out.stderr);
        Ok(ExecOutput {
            exit_code: out.status.code(),
            output: merged,
        })
    }

    fn download(&mut self, path: &Path) -> io::Result<Vec<u8>> {
        use std::io::Read;
        use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
        // O_NONBLOCK: opening a FIFO waits for a writer, forever; a
        // directory reads as EISDIR, as before.
        let mut f = (std::fs::OpenOptions::new().read(true))
            .custom_flags(libc::O_NONBLOCK)
            .open(self.host_path(path))?;
        let t = f.metadata()?.file_type();
        let what = match () {
            _ if t.is_file() || t.is_dir() => None,
            _ if t.is_fifo() => Some("a FIFO"),
            _ if t.is_socket() => Some("a socket"),
            _ if t.is_char_device() => Some("a character device"),
            _ if t.is_block_device() => Some("a block device"),
            _ => Some("of an unknown type"),
        };
        if let Some(what) = what {
            return Err(io::Error::other(NotRegular(what)));
        }
        let mut out = Vec::new();
        f.read_to_end(&mut out)?;
        Ok(out)
    }

    fn upload(&mut self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        std::fs::write(self.host_path(path), bytes)
    }

    fn supports_stdin(&self) -> bool {
        true
    }

    fn remove(&mut self, path: &Path) -> io::Result<()> {
        let p = self.host_path(path);
        // remove_file says EPERM for a directory: say EISDIR.
        if std::fs::symlink_metadata(&p)?.is_dir() {
            return Err(io::Error::from_raw_os_error(libc::EISDIR));
        }
        std::fs::remove_file(p)
    }

    fn create_dirs(&mut self, dir: &Path) -> io::Result<()> {
        std::fs::create_dir_all(self.host_path(dir))
    }

    fn make_dir(&mut self, dir: &Path) -> io::Result<()> {
        std::fs::create_dir(self.host_path(dir))
    }

    fn remove_dir(&mut self, dir: &Path) -> io::Result<()> {
        std::fs::remove_dir(self.host_path(dir))
    }

    fn set_mode(&mut self, path: &Path, mode: u32) -> io::Result<()> {
        use std::os::unix::fs::PermissionsExt;
        let mode = mode & !umask();
        std::fs::set_permissions(self.host_path(path), std::fs::Permissions::from_mode(mode))
    }

    fn resolve_dir(&mut self, dir: &Path) -> io::Result<PathBuf> {
        if self.chroot.is_none() {
            return std::fs::canonicalize(dir);
        }
        // The chroot's symlinks would resolve on this machine, where an
        // absolute one points elsewhere: the shell in the chroot says.
        let cmd = super::command::realpath_command(dir);
        super::command::realpath_of(self.exec(&cmd, None))
    }
}

/// This process's umask, as the kernel reports it (`Umask:` in
/// /proc/self/status; reading it with umask(2) would change it for every
/// thread meanwhile); 022 where that line is missing.
fn umask() -> u32 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    (status.lines())
        .find_map(|l| l.strip_prefix("Umask:"))
        .and_then(|m| u32::from_str_radix(m.trim(), 8).ok())
        .unwrap_or(0o022)
}
