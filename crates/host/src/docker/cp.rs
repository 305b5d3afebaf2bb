//! The `docker cp` side of the backend: where a path lands in the
//! container (its workdir, its tmpfs mounts), the tar streams, and what the
//! CLI's words on failure mean.

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};

use super::Docker;

/// Read from `docker inspect` once per [`Docker`], for `docker cp`.
#[derive(Clone, Debug)]
pub(super) struct Layout {
    /// `Config.WorkingDir`: where exec runs when no `--workdir` is given.
    pub(super) workdir: String,
    /// Where tmpfs mounts are (`--tmpfs`, `--mount type=tmpfs`): `docker cp`
    /// sees the image's directory under them, not the mount.
    pub(super) tmpfs: Vec<PathBuf>,
}

impl Docker {
    pub(super) fn layout(&self) -> io::Result<&Layout> {
        if let Some(l) = self.layout.get() {
            return Ok(l);
        }
        let mut c = self.cli();
        c.args([
            "inspect",
            "--type",
            "container",
            "--format",
            "{{println .Config.WorkingDir}}{{range $k, $v := .HostConfig.Tmpfs}}{{println $k}}{{end}}\
             {{range .Mounts}}{{if eq .Type \"tmpfs\"}}{{println .Destination}}{{end}}{{end}}",
        ])
        .arg(&self.container);
        let out = self.run(c, None)?;
        if !out.status.success() {
            // Not cached: the container may be gone, and state() says so.
            self.state()?;
            return Err(io::Error::other(format!(
                "cannot inspect container {}: {}",
                self.container,
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        let text = String::from_utf8_lossy(&out.stdout);
        let mut lines = text.lines();
        let workdir = lines.next().unwrap_or("").trim().to_owned();
        let tmpfs = lines
            .map(str::trim)
            .filter(|l| l.starts_with('/'))
            .map(PathBuf::from)
            .collect();
        Ok(self.layout.get_or_init(|| Layout { workdir, tmpfs }))
    }

    /// `docker cp` takes relative paths from the container's `/`; exec
    /// resolves them against `--workdir`, else the image's `WORKDIR`: use
    /// the same directory.
    pub(super) fn absolute(&self, path: &Path) -> io::Result<PathBuf> {
        if path.is_absolute() {
            return Ok(path.to_path_buf());
        }
        let dir = match &self.workdir {
            Some(d) => d.as_str(),
            None => self.layout()?.workdir.as_str(),
        };
        Ok(Path::new("/").join(dir).join(path))
    }

    /// `CONTAINER:PATH` for `docker cp`, refusing a path under a tmpfs
    /// mount: `docker cp` would read or write the image's copy hidden
    /// under it. Judged on the path's text (`.` and `..` folded), so a
    /// symlink into such a mount is not seen.
    pub(super) fn cp_target(&self, path: &Path) -> io::Result<OsString> {
        use std::path::Component;
        let abs = self.absolute(path)?;
        // A path the engine cannot carry is refused before any inspect.
        let target = self.target(&abs)?;
        let mut plain = PathBuf::from("/");
        for c in abs.components() {
            match c {
                Component::ParentDir => {
                    plain.pop();
                }
                Component::Normal(n) => plain.push(n),
                _ => {}
            }
        }
        if let Some(m) = self.layout()?.tmpfs.iter().find(|m| plain.starts_with(m)) {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                format!(
                    "{} is under the container's tmpfs mount {}, which docker cp cannot reach (it sees the image's directory beneath)",
                    path.display(),
                    m.display()
                ),
            ));
        }
        Ok(target)
    }

    /// `sh -c SCRIPT` as root (the rights `docker cp` has), for the
    /// upload's rename; a CLI or container failure is `NotConnected`.
    pub(super) fn root_sh(&self, script: &str) -> io::Result<std::process::Output> {
        let mut c = self.cli();
        c.args(["exec", "--user", "0", &self.container, "sh", "-c", script]);
        let out = self.run(c, None)?;
        if !out.status.success() {
            self.state()?;
        }
        Ok(out)
    }

    pub(super) fn cp_in(&self, dir: &Path, tar: &[u8]) -> io::Result<()> {
        let mut c = self.cli();
        // No -a: from a stream, the daemon keeps the headers' owners as
        // they are; -a would map them to the container's --user, through
        // a passwd lookup that fails for numeric users.
        c.args(["cp", "-"]).arg(self.cp_target(dir)?);
        let out = self.run(c, Some(tar))?;
        if out.status.success() {
            return Ok(());
        }
        self.state()?;
        Err(cp_error(&out.stderr))
    }

    /// `CONTAINER:PATH`, refusing paths the engine's JSON would mangle.
    pub(super) fn target(&self, path: &Path) -> io::Result<OsString> {
        let p = path.to_str().ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "the engine's API takes UTF-8 paths only",
            )
        })?;
        Ok(OsString::from(format!("{}:{p}", self.container)))
    }
}

pub(super) fn cp_error(stderr: &[u8]) -> io::Error {
    let msg = String::from_utf8_lossy(stderr).trim().to_owned();
    let lower = msg.to_ascii_lowercase();
    // "must be a directory": docker's words for a missing destination
    // directory when the source is a stream; "no such container:path":
    // the 20.10 CLI's (Debian's docker.io) for a missing source.
    let kind = if lower.contains("could not find the file")
        || lower.contains("no such file or directory")
        || lower.contains("must be a directory")
        || lower.contains("no such container:path")
    {
        io::ErrorKind::NotFound
    } else if lower.contains("read-only") || lower.contains("permission denied") {
        io::ErrorKind::PermissionDenied
    } else {
        io::ErrorKind::Other
    };
    io::Error::new(kind, format!("docker cp: {msg}"))
}

pub(super) fn append(
    ar: &mut tar::Builder<Vec<u8>>,
    path: &Path,
    kind: tar::EntryType,
    mode: u32,
    (uid, gid): (u64, u64),
    data: &[u8],
) -> io::Result<()> {
    let mut h = tar::Header::new_gnu();
    h.set_entry_type(kind);
    h.set_mode(mode);
    h.set_uid(uid);
    h.set_gid(gid);
    h.set_size(data.len() as u64);
    h.set_mtime(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0),
    );
    ar.append_data(&mut h, path, data)
}
