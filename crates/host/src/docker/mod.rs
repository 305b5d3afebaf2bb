//! A [`Sandbox`] over the docker CLI (or any CLI that takes the same
//! `exec` and `cp` arguments, such as podman).
//!
#![doc = include_str!("docker.md")]

use std::cell::OnceCell;
use std::ffi::{OsStr, OsString};
use std::io;
use std::path::{Path, PathBuf};

mod cli;
mod cp;

use super::command::split_quoted;
use super::{EditError, ExecOutput, Sandbox};
use cli::exec_setup_error;
use cp::{append, cp_error, Layout};

/// One running container, reached through the docker CLI.
#[derive(Clone, Debug)]
pub struct Docker {
    program: OsString,
    container: String,
    user: Option<String>,
    workdir: Option<String>,
    shell: OnceCell<bool>,
    /// What `docker cp` needs to know of the container, read once.
    layout: OnceCell<Layout>,
    /// Mode, uid and gid of the last file downloaded, for its upload.
    last_meta: Option<(PathBuf, u32, u64, u64)>,
}

impl Docker {
    /// The container's name or id; the CLI is `docker` on PATH.
    pub fn new(container: impl Into<String>) -> Self {
        Docker {
            program: OsString::from("docker"),
            container: container.into(),
            user: None,
            workdir: None,
            shell: OnceCell::new(),
            layout: OnceCell::new(),
            last_meta: None,
        }
    }

    /// Another CLI with docker's `exec`/`cp`/`inspect` arguments (`podman`).
    pub fn program(mut self, program: impl Into<OsString>) -> Self {
        self.program = program.into();
        self
    }

    /// `--user` for every exec (`docker cp` ignores it: see the module doc).
    pub fn user(mut self, user: impl Into<String>) -> Self {
        self.user = Some(user.into());
        self
    }

    /// `--workdir` for every exec (relative edit paths resolve against it).
    pub fn workdir(mut self, dir: impl Into<String>) -> Self {
        self.workdir = Some(dir.into());
        self
    }

    /// Skips the probe: the caller knows whether the container has `sh`.
    pub fn with_shell(self, shell: bool) -> Self {
        let _ = self.shell.set(shell);
        self
    }

    /// The container's name or id, as given.
    pub fn container(&self) -> &str {
        &self.container
    }

    /// Checks that the CLI runs and the container exists and is running,
    /// with the same messages the other calls give.
    pub fn check(&self) -> Result<(), EditError> {
        self.state().map_err(EditError::Backend)
    }

    /// Installs `binary` at `dest` by `docker cp` (mode 0755, owner root),
    /// creating missing parent directories (0755), then runs `dest
    /// --version`. For containers without a shell, where
    /// `Editor::ensure_helper` would need a `chmod` binary. Existing
    /// directories are left as they are.
    pub fn install_helper(&mut self, binary: &[u8], dest: &str) -> Result<(), EditError> {
        let dest = Path::new(dest);
        use std::path::Component;
        let plain = dest.is_absolute()
            && dest
                .components()
                .all(|c| matches!(c, Component::RootDir | Component::Normal(_)));
        let name = dest.file_name().filter(|_| plain).ok_or_else(|| {
            EditError::Install(format!(
                "{} is not an absolute file path without . or ..",
                dest.display()
            ))
        })?;
        // Extract into the deepest existing ancestor: a tar directory entry
        // for an existing directory would reset its mode (think /tmp).
        let mut base = dest.parent().unwrap_or(Path::new("/")).to_path_buf();
        let mut missing: Vec<OsString> = Vec::new();
        loop {
            let mut rel = PathBuf::new();
            let mut ar = tar::Builder::new(Vec::new());
            for d in missing.iter().rev() {
                rel.push(d);
                append(&mut ar, &rel, tar::EntryType::Directory, 0o755, (0, 0), &[])
                    .map_err(EditError::Backend)?;
            }
            rel.push(name);
            append(
                &mut ar,
                &rel,
                tar::EntryType::Regular,
                0o755,
                (0, 0),
                binary,
            )
            .map_err(EditError::Backend)?;
            let tar = ar.into_inner().map_err(EditError::Backend)?;
            match self.cp_in(&base, &tar) {
                Ok(()) => break,
                Err(e) if e.kind() == io::ErrorKind::NotFound && base.parent().is_some() => {
                    missing.push(base.file_name().expect("not the root").to_owned());
                    base.pop();
                }
                Err(e) if e.kind() == io::ErrorKind::NotConnected => {
                    return Err(EditError::Backend(e))
                }
                Err(e) => return Err(EditError::Install(e.to_string())),
            }
        }
        let dest = dest
            .to_str()
            .ok_or_else(|| EditError::Install("non-UTF-8 path".into()))?;
        let o = self
            .exec(&super::install::version_command(dest), None)
            .map_err(EditError::Backend)?;
        if o.exit_code == Some(0) && super::install::is_helper_version(&o.output) {
            Ok(())
        } else {
            Err(EditError::Install(format!(
                "the copied helper does not run (exit {:?}): {}",
                o.exit_code,
                String::from_utf8_lossy(&o.output).trim()
            )))
        }
    }
}

impl Sandbox for Docker {
    fn exec(&mut self, command: &[u8], stdin: Option<&[u8]>) -> io::Result<ExecOutput> {
        if std::str::from_utf8(command).is_err() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "the engine's API takes UTF-8 commands only",
            ));
        }
        use std::os::unix::ffi::OsStrExt;
        let mut c = self.exec_prefix(stdin.is_some());
        if self.has_shell() {
            c.args(["sh", "-c"]).arg(OsStr::from_bytes(command));
        } else {
            let argv = split_quoted(command)
                .filter(|a| !a.is_empty())
                .ok_or_else(|| {
                    io::Error::new(
                        io::ErrorKind::InvalidInput,
                        "the command does not split into argv",
                    )
                })?;
            c.args(argv);
        }
        let out = self.run(c, stdin)?;
        if let Some(e) = exec_setup_error(&out) {
            return Err(e);
        }
        // The CLI's own failures (no container, stopped, no daemon) exit 1
        // (docker) or 125 (podman), a container stopped mid-command 137 or
        // another signal's code; a command can exit so too, so when no
        // result line came, the container's state decides.
        let code = out.status.code();
        if code != Some(0)
            && memchr::memmem::find(
                &out.stdout,
                as_edit_wire::protocol::RESULT_PREFIX.as_bytes(),
            )
            .is_none()
        {
            self.state()?;
        }
        let mut output = out.stdout;
        output.extend_from_slice(&out.stderr);
        Ok(ExecOutput {
            exit_code: code,
            output,
        })
    }

    fn download(&mut self, path: &Path) -> io::Result<Vec<u8>> {
        let mut c = self.cli();
        // -L: read the file a symlink points to, as the helper would.
        c.args(["cp", "-L"]).arg(self.cp_target(path)?).arg("-");
        let out = self.run(c, None)?;
        if !out.status.success() {
            self.state()?;
            return Err(cp_error(&out.stderr));
        }
        let mut ar = tar::Archive::new(out.stdout.as_slice());
        let entry = ar.entries()?.next().ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                "docker cp sent an empty archive",
            )
        })??;
        let h = entry.header();
        if h.entry_type() != tar::EntryType::Regular {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!(
                    "{} is not a regular file ({:?})",
                    path.display(),
                    h.entry_type()
                ),
            ));
        }
        let meta = (path.to_path_buf(), h.mode()?, h.uid()?, h.gid()?);
        // The file's bytes lie in the archive as they are: cut them out of
        // the CLI's output in place instead of copying them out.
        let (start, size) = (entry.raw_file_position() as usize, entry.size() as usize);
        let mut bytes = out.stdout;
        if start.checked_add(size).is_none_or(|end| end > bytes.len()) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "docker cp sent a truncated archive",
            ));
        }
        bytes.truncate(start + size);
        bytes.drain(..start);
        self.last_meta = Some(meta);
        Ok(bytes)
    }

    fn upload(&mut self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        // The file itself may be a tmpfs mount point's name: check it, not
        // only the directory the archive is extracted into.
        self.cp_target(path)?;
        let (dir, name) = match (path.parent(), path.file_name()) {
            (Some(d), Some(n)) => (
                if d.as_os_str().is_empty() {
                    Path::new(".")
                } else {
                    d
                },
                n,
            ),
            _ => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("{} names no file", path.display()),
                ))
            }
        };
        let (mode, uid, gid) = match &self.last_meta {
            Some((p, m, u, g)) if p == path => (m & 0o7777, *u, *g),
            _ => (0o644, 0, 0),
        };
        let tar_of = |name: &OsStr| -> io::Result<Vec<u8>> {
            let mut ar = tar::Builder::new(Vec::with_capacity(bytes.len() + 1024));
            append(
                &mut ar,
                Path::new(name),
                tar::EntryType::Regular,
                mode,
                (uid, gid),
                bytes,
            )?;
            ar.into_inner()
        };
        if self.has_shell() {
            // docker cp unlinks the target, then writes: a full disk leaves
            // half a file. With a shell, write a temp beside it and rename
            // it over the target, as the helper does; the target is then
            // the old or the new file, never a mix. As root, like docker
            // cp itself. Where the rename cannot work (a bind-mounted
            // single file: EBUSY; no mv), the temp goes and the write falls
            // back to docker cp in place.
            let temp_name = format!(".as-edit-{}.tmp", crate::random::hex());
            let temp = self.absolute(dir)?.join(&temp_name);
            let target = self.absolute(path)?;
            let quoted = |p: &Path| {
                use std::os::unix::ffi::OsStrExt;
                String::from_utf8_lossy(&super::command::sh_quote(p.as_os_str().as_bytes()))
                    .into_owned()
            };
            let (t, p) = (quoted(&temp), quoted(&target));
            if let Err(e) = self.cp_in(dir, &tar_of(OsStr::new(&temp_name))?) {
                let _ = self.root_sh(&format!("rm -f -- {t}"));
                return Err(e);
            }
            match self.root_sh(&format!("mv -f -- {t} {p}")) {
                Ok(o) if o.status.success() => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::NotConnected => return Err(e),
                _ => {
                    let _ = self.root_sh(&format!("rm -f -- {t}"));
                }
            }
        }
        self.cp_in(dir, &tar_of(name)?)
    }

    fn remove(&mut self, path: &Path) -> io::Result<()> {
        self.root_tool(&["rm", "--"], path)
    }

    fn create_dirs(&mut self, dir: &Path) -> io::Result<()> {
        self.root_tool(&["mkdir", "-p", "--"], dir)
    }

    fn make_dir(&mut self, dir: &Path) -> io::Result<()> {
        self.root_tool(&["mkdir", "--"], dir)
    }

    fn remove_dir(&mut self, dir: &Path) -> io::Result<()> {
        self.root_tool(&["rmdir", "--"], dir)
    }

    /// As root, like the upload that made the file; the umask is
    /// `docker exec`'s, 022 (runc's default: exec cannot be given another).
    fn set_mode(&mut self, path: &Path, mode: u32) -> io::Result<()> {
        self.root_tool(&["chmod", &format!("{:o}", mode & !0o022), "--"], path)
    }

    /// As the configured user, in the workdir, as the helper would see it.
    fn resolve_dir(&mut self, dir: &Path) -> io::Result<PathBuf> {
        let cmd = super::command::realpath_command(dir);
        super::command::realpath_of(self.exec(&cmd, None))
    }

    fn has_shell(&self) -> bool {
        if let Some(&s) = self.shell.get() {
            return s;
        }
        let mut c = self.exec_prefix(false);
        c.args(["sh", "-c", "true"]);
        let out = self.run(c, None);
        match out
            .as_ref()
            .map(|o| (o.status.code(), exec_setup_error(o).is_some()))
        {
            Ok((Some(0), _)) => *self.shell.get_or_init(|| true),
            // 126 from docker's own set-up (unknown user, missing work
            // directory) says nothing about sh: not cached, and the exec
            // that follows reports it.
            Ok((Some(126), false)) | Ok((Some(127), false)) => *self.shell.get_or_init(|| false),
            // The CLI or the container failed: assume a shell and let the
            // next call report the failure; probe again then.
            _ => true,
        }
    }

    fn supports_stdin(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::write_executable;
    use crate::EditRequest;

    /// `res` is an `invalid_argument` failure with exactly `want` as its
    /// detail, reported through `want_via`.
    fn assert_invalid_argument<T: std::fmt::Debug>(
        res: Result<T, EditError>,
        want: &str,
        want_via: crate::Via,
    ) {
        match res {
            Err(EditError::Failed {
                kind, detail, via, ..
            }) => {
                assert_eq!(kind.as_str(), "invalid_argument");
                assert_eq!(detail.as_deref(), Some(want));
                assert_eq!(via, want_via);
            }
            other => panic!("expected invalid_argument, got {other:?}"),
        }
    }

    #[test]
    fn cp_errors_are_classified_by_the_engines_words() {
        let kind = |m: &str| cp_error(m.as_bytes()).kind();
        assert_eq!(
            kind("Error response from daemon: Could not find the file /w/x in container c"),
            io::ErrorKind::NotFound
        );
        assert_eq!(
            kind("destination \"c:/opt/as-edit\" must be a directory"),
            io::ErrorKind::NotFound
        );
        assert_eq!(
            kind("Error response from daemon: container rootfs is marked read-only"),
            io::ErrorKind::PermissionDenied
        );
        assert_eq!(
            kind("Error: No such container:path: c:/work/none.txt"),
            io::ErrorKind::NotFound
        );
        assert_eq!(kind("Error: something else"), io::ErrorKind::Other);
        assert_eq!(cp_error(b"Error: x\n").to_string(), "docker cp: Error: x");
    }

    #[test]
    fn relative_paths_resolve_against_the_workdir_as_exec_does() {
        let dir = tempfile::tempdir().unwrap();
        // The image's WORKDIR, as `docker exec` uses it when no --workdir
        // is given; an image without one says "".
        for (said, want) in [("/srv/app", "/srv/app/f.txt"), ("", "/f.txt")] {
            let inspect =
                format!("case \"$*\" in *WorkingDir*) echo '{said}' ;; *) echo running ;; esac");
            let d = Docker::new("c").program(fake_cli(dir.path(), &inspect, "exit 99"));
            assert_eq!(d.absolute(Path::new("f.txt")).unwrap(), Path::new(want));
            assert_eq!(d.absolute(Path::new("/a/b")).unwrap(), Path::new("/a/b"));
        }
        let d = Docker::new("c").program("/nonexistent/docker-cli");
        let d = d.workdir("/work");
        assert_eq!(
            d.absolute(Path::new("sub/f.txt")).unwrap(),
            Path::new("/work/sub/f.txt")
        );
        assert_eq!(
            d.target(Path::new("/work/f")).unwrap(),
            OsString::from("c:/work/f")
        );
        use std::os::unix::ffi::OsStrExt;
        let bad = d
            .target(Path::new(OsStr::from_bytes(b"/w/\xff")))
            .unwrap_err();
        assert_eq!(bad.kind(), io::ErrorKind::InvalidInput);
    }

    #[test]
    fn docker_cp_refuses_paths_under_a_tmpfs_mount() {
        let dir = tempfile::tempdir().unwrap();
        // WorkingDir, then the tmpfs mounts (--tmpfs, then --mount type=tmpfs).
        let inspect =
            "case \"$*\" in *Tmpfs*) printf '/work\\n/work\\n/etc\\n/run/x\\n' ;; *) echo running ;; esac";
        let mut d = Docker::new("c").program(fake_cli(dir.path(), inspect, "exit 99"));
        for p in ["/etc/passwd", "/etc", "/work/../etc/x", "/run/x/y"] {
            let e = d.download(Path::new(p)).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::Unsupported, "{p}: {e}");
            assert!(e.to_string().contains("tmpfs mount /"), "{p}: {e}");
            let e = d.upload(Path::new(p), b"x").unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::Unsupported, "{p}: {e}");
        }
        assert_eq!(
            d.download(Path::new("ssl/f")).unwrap_err().to_string(),
            "ssl/f is under the container's tmpfs mount /work, which docker cp cannot reach (it sees the image's directory beneath)"
        );
        // Beside a mount, not under it: docker cp runs (and the stand-in fails).
        for p in ["/etcetera/f", "/run/xy"] {
            let e = d.download(Path::new(p)).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::Other, "{p}: {e}");
        }
    }

    #[test]
    fn download_cuts_the_file_out_of_the_archive_in_place() {
        let dir = tempfile::tempdir().unwrap();
        // A long name (a GNU long-name entry before the file's header) and
        // content of a size that needs padding.
        let name = format!("{}.txt", "n".repeat(150));
        let body: Vec<u8> = (0..70_001u32).map(|i| (i % 251) as u8).collect();
        let mut ar = tar::Builder::new(Vec::new());
        append(
            &mut ar,
            Path::new(&name),
            tar::EntryType::Regular,
            0o640,
            (7, 8),
            &body,
        )
        .unwrap();
        let tar_path = dir.path().join("a.tar");
        std::fs::write(&tar_path, ar.into_inner().unwrap()).unwrap();
        let cli = dir.path().join("cli");
        write_executable(
            &cli,
            format!(
                "#!/bin/sh\ncase \"$1\" in cp) cat '{}' ;; *) exit 99 ;; esac\n",
                tar_path.display()
            )
            .as_bytes(),
        );
        let mut d = Docker::new("c").program(&cli);
        // Absolute paths under no tmpfs: the layout is known, no inspect.
        let _ = d.layout.set(Layout {
            workdir: "/".into(),
            tmpfs: vec![],
        });
        let p = Path::new("/w").join(&name);
        assert_eq!(d.download(&p).unwrap(), body);
        assert_eq!(d.last_meta, Some((p, 0o640, 7, 8)));
    }

    #[test]
    fn directories_modes_and_realpath_run_as_exec_with_their_errors_classified() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("argv");
        let exec = format!(
            "echo \"$*\" >> '{}'; case \"$*\" in \
             *'mkdir -- /w/a') echo \"mkdir: can't create directory '/w/a': File exists\" >&2; exit 1 ;; \
             *'mkdir -- /w/n/x') echo \"mkdir: can't create directory '/w/n/x': No such file or directory\" >&2; exit 1 ;; \
             *realpath*) echo /real/w ;; esac",
            log.display()
        );
        let cli = fake_cli(dir.path(), "echo running", &exec);
        let mut d = Docker::new("c").program(cli).with_shell(true);
        let _ = d.layout.set(Layout {
            workdir: "/".into(),
            tmpfs: vec![],
        });
        let kind = |r: io::Result<()>| r.unwrap_err().kind();
        assert_eq!(
            kind(d.make_dir(Path::new("/w/a"))),
            io::ErrorKind::AlreadyExists
        );
        assert_eq!(
            kind(d.make_dir(Path::new("/w/n/x"))),
            io::ErrorKind::NotFound
        );
        d.make_dir(Path::new("/w/b")).unwrap();
        d.remove_dir(Path::new("/w/b")).unwrap();
        d.set_mode(Path::new("/w/f"), 0o4775).unwrap();
        assert_eq!(d.resolve_dir(Path::new("w")).unwrap(), Path::new("/real/w"));
        assert_eq!(
            std::fs::read_to_string(&log).unwrap(),
            "exec --user 0 c mkdir -- /w/a\nexec --user 0 c mkdir -- /w/n/x\n\
             exec --user 0 c mkdir -- /w/b\nexec --user 0 c rmdir -- /w/b\n\
             exec --user 0 c chmod 4755 -- /w/f\nexec c sh -c 'realpath' './w'\n"
        );
    }

    /// Busybox's realpath (Alpine's) takes `--` for a path and exits 1:
    /// the command has none, and `./` keeps a directory named `-e` from
    /// being an option. It ran `realpath -- DIR`, which failed there for
    /// every directory; an empty answer was taken for a path.
    #[test]
    fn resolve_dir_runs_busybox_realpath_and_a_dash_name_is_no_option() {
        let Some(bb) = ["/usr/bin/busybox", "/bin/busybox"]
            .into_iter()
            .find(|p| Path::new(p).exists())
        else {
            return; // no busybox here: nothing to run
        };
        let dir = tempfile::tempdir().unwrap();
        let (bin, w) = (dir.path().join("bin"), dir.path().join("w"));
        std::fs::create_dir(&bin).unwrap();
        std::os::unix::fs::symlink(bb, bin.join("realpath")).unwrap();
        for sub in ["-e", "a b'$c"] {
            std::fs::create_dir_all(w.join(sub)).unwrap();
        }
        let exec = format!(
            "shift 4; cd '{}' && PATH='{}':\"$PATH\" sh -c \"$1\"",
            w.display(),
            bin.display()
        );
        let cli = fake_cli(dir.path(), "echo running", &exec);
        let mut d = Docker::new("c").program(cli).with_shell(true);
        let real = w.canonicalize().unwrap();
        for sub in ["-e", "a b'$c"] {
            assert_eq!(d.resolve_dir(Path::new(sub)).unwrap(), real.join(sub));
        }
        assert_eq!(d.resolve_dir(&real.join("-e")).unwrap(), real.join("-e"));
        let cli = fake_cli(dir.path(), "echo running", "echo");
        let mut d = Docker::new("c").program(cli).with_shell(true);
        assert!(d.resolve_dir(Path::new("w")).is_err());
    }

    #[test]
    fn a_missing_cli_is_not_connected_with_its_name() {
        let mut d = Docker::new("c").program("/nonexistent/docker-cli");
        let e = d.exec(b"true", None).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotConnected);
        assert!(
            e.to_string()
                .starts_with("the container CLI `/nonexistent/docker-cli` was not found"),
            "{e}"
        );
        let e = d.download(Path::new("/f")).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotConnected);
        let e = d.exec(b"'/opt/x' '\xff'", None).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
        for bad in ["opt/x", "/opt/../x", "/"] {
            let e = d.install_helper(b"", bad).unwrap_err().to_string();
            assert!(e.contains("not an absolute file path"), "{bad}: {e}");
        }
    }

    /// A stand-in CLI: `inspect` prints STATUS (or fails with INSPECT_ERR),
    /// `exec` fails as the real CLI does for that state.
    fn fake_cli(dir: &Path, inspect: &str, exec: &str) -> PathBuf {
        // A new file each time: never exec a file just rewritten.
        let p = dir.join(format!("fake-docker-{}", crate::random::hex()));
        write_executable(
            &p,
            format!(
                "#!/bin/sh\ncase \"$1\" in\n  inspect) {inspect} ;;\n  exec) {exec} ;;\n  *) exit 99 ;;\nesac\n"
            )
            .as_bytes(),
        );
        p
    }

    #[test]
    fn cli_failures_are_explained_by_the_containers_state() {
        let dir = tempfile::tempdir().unwrap();
        let cases = [
            (
                "echo 'Error: No such object: c' >&2; exit 1",
                "echo 'Error response from daemon: No such container: c' >&2; exit 1",
                Some("no such container: c".to_owned()),
            ),
            (
                "echo exited",
                "echo 'Error response from daemon: Container c is not running' >&2; exit 1",
                Some("container c is not running (status: exited)".to_owned()),
            ),
            (
                "echo 'Cannot connect to the Docker daemon at unix:///x. Is the docker daemon running?' >&2; exit 1",
                "echo 'Cannot connect to the Docker daemon at unix:///x. Is the docker daemon running?' >&2; exit 1",
                Some("cannot inspect container c: Cannot connect to the Docker daemon at unix:///x. Is the docker daemon running?".to_owned()),
            ),
            // Stopped while the command ran (docker kill, docker stop).
            ("echo exited", "exit 137", Some("container c is not running (status: exited)".to_owned())),
            // Running: a command's own exit 1 is its output, not an error.
            ("echo running", "echo 'chmod: x: No such file' >&2; exit 1", None),
        ];
        for (inspect, exec, want) in cases {
            let cli = fake_cli(dir.path(), inspect, exec);
            let mut d = Docker::new("c").program(cli).with_shell(true);
            match (d.exec(b"'chmod' '755' 'x'", None), want) {
                (Err(e), Some(w)) => {
                    assert_eq!(e.kind(), io::ErrorKind::NotConnected);
                    assert_eq!(e.to_string(), w);
                }
                (Ok(o), None) => {
                    assert_eq!(o.exit_code, Some(1));
                    assert_eq!(o.output, b"chmod: x: No such file\n");
                }
                (got, want) => panic!("{exec}: got {got:?}, want {want:?}"),
            }
        }
        // A helper's refusal (exit 1 with its result line) costs no inspect.
        let cli = fake_cli(
            dir.path(),
            "exit 99",
            "echo '__RESULT__{\"error\":\"empty\"}'; exit 1",
        );
        let o = Docker::new("c")
            .program(cli)
            .with_shell(true)
            .exec(b"x", None)
            .unwrap();
        assert_eq!(o.output, b"__RESULT__{\"error\":\"empty\"}\n");
    }

    #[test]
    fn exec_setup_errors_are_backend_errors_and_never_reach_the_root_fallback() {
        let dir = tempfile::tempdir().unwrap();
        // docker's words (on stdout, exit 126) for an unknown user and a
        // missing work directory; `cp` (the fallback, run as root) exits 99.
        for said in [
            "unable to find user nosuch: no matching entries in passwd file",
            "OCI runtime exec failed: exec failed: unable to start container process: chdir to cwd (/nope) set in config.json failed: no such file or directory: unknown",
        ] {
            let cli = fake_cli(dir.path(), "echo running", &format!("echo '{said}'; exit 126"));
            let d = Docker::new("c").program(cli);
            assert!(d.has_shell(), "{said}: a set-up failure is no proof of a missing sh");
            assert_eq!(d.shell.get(), None, "{said}: not cached");
            let r = EditRequest::new("/w/root.txt", "secret", "pwned", false);
            match crate::Editor::new(d, "/opt/as-edit/as-edit").edit(&r) {
                Err(EditError::Backend(e)) => {
                    assert_eq!(e.kind(), io::ErrorKind::NotConnected);
                    assert_eq!(
                        e.to_string(),
                        format!("docker exec cannot start a process as configured (--user, --workdir): {}", said)
                    );
                }
                other => panic!("{said}: expected a backend error, got {other:?}"),
            }
        }
        // A real "cannot execute" (no sh in the image) is still cached.
        let cli = fake_cli(
            dir.path(),
            "echo running",
            "echo 'OCI runtime exec failed: exec failed: unable to start container process: exec: \"sh\": executable file not found in $PATH: unknown'; exit 126",
        );
        let d = Docker::new("c").program(cli);
        assert!(!d.has_shell());
        assert_eq!(d.shell.get(), Some(&false));
    }

    #[test]
    fn a_non_utf8_path_is_invalid_argument_without_a_transfer_attempt() {
        use std::os::unix::ffi::OsStrExt;
        let dir = tempfile::tempdir().unwrap();
        // Any CLI call would print this and exit 99.
        let cli = fake_cli(
            dir.path(),
            "echo called >&2; exit 99",
            "echo called; exit 99",
        );
        let r = EditRequest::new(
            Path::new(OsStr::from_bytes(b"/w/\xff.txt")),
            "a",
            "b",
            false,
        );
        let mut ed = crate::Editor::new(
            Docker::new("c").program(cli).with_shell(true),
            "/opt/as-edit/as-edit",
        );
        assert_invalid_argument(
            ed.edit(&r),
            "the engine's API takes UTF-8 commands only",
            crate::Via::Native,
        );
        assert_invalid_argument(
            crate::transfer_edit(&mut ed.sandbox, &r),
            "the engine's API takes UTF-8 paths only",
            crate::Via::Transfer,
        );
    }

    #[test]
    fn the_editor_reports_an_unreachable_sandbox_without_a_transfer_attempt() {
        let d = Docker::new("c").program("/nonexistent/docker-cli");
        let r = crate::EditRequest::new("/w/f", "a", "b", false);
        match crate::Editor::new(d, "/opt/as-edit/as-edit").edit(&r) {
            Err(EditError::Backend(e)) => {
                assert!(e.to_string().contains("was not found on PATH"), "{e}")
            }
            other => panic!("expected a backend error, got {other:?}"),
        }
    }
}
