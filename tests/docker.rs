//! Conformance of the host library against a real Docker engine, through
//! `host::docker`. Needs images and a running daemon, so every test is
//! ignored by default; `scripts/docker-test.sh` builds the images, starts
//! the engine if needed and runs them with `--ignored`, passing the image
//! names in the environment.
#![cfg(feature = "docker")]

mod common;
use common::{native, transfer};

use std::path::Path;
use std::process::{Command, Stdio};

use as_edit_host::command::{argv, join_quoted};
use as_edit_host::docker::Docker;
use as_edit_host::{
    parse_output, EditError, EditRequest, Edited, Editor, HelperOutcome, Sandbox, Via,
};

const WHY: &str = "needs a Docker engine and test images: run scripts/docker-test.sh";
const HELPER: &str = "/opt/as-edit/as-edit";

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("{name} is not set: {WHY}"))
}

fn docker(args: &[&str]) -> std::process::Output {
    let out = Command::new("docker")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("docker runs");
    out
}

fn docker_ok(args: &[&str]) -> String {
    let out = docker(args);
    assert!(
        out.status.success(),
        "docker {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// A labelled container removed on drop (the script's trap removes any
/// left by a crash, by the same label).
struct Container(String);

impl Container {
    /// `docker run -d` of `image` with `opts`, kept alive by `sleep`.
    fn start(image_var: &str, opts: &[&str], sleep: &str) -> Container {
        let image = env(image_var);
        let label = env("AS_EDIT_DOCKER_LABEL");
        let mut args = vec![
            "run",
            "-d",
            "--pull=never",
            "--network",
            "none",
            "--label",
            &label,
        ];
        args.extend_from_slice(opts);
        args.extend_from_slice(&[&image, sleep, "3600"]);
        Container(docker_ok(&args))
    }

    fn scratch(opts: &[&str]) -> Container {
        Container::start("AS_EDIT_DOCKER_IMAGE_SCRATCH", opts, "/pause/sleep")
    }

    fn busybox(var: &str, opts: &[&str]) -> Container {
        Container::start(var, opts, "sleep")
    }

    fn sandbox(&self) -> Docker {
        Docker::new(self.0.clone())
    }

    /// `sh -c` as root, for setting up fixtures in busybox containers.
    fn root_sh(&self, script: &str) -> String {
        docker_ok(&["exec", "--user", "0", &self.0, "sh", "-c", script])
    }
}

impl Drop for Container {
    fn drop(&mut self) {
        let _ = docker(&["rm", "-f", &self.0]);
    }
}

fn req(path: &str, old: &str, new: &str) -> EditRequest {
    EditRequest::new(path, old, new, false)
}

/// (token, via, count) of a refusal; panics on anything else.
fn refusal(r: Result<Edited, EditError>) -> (String, Via, Option<u64>, String) {
    match r {
        Err(EditError::Failed {
            kind,
            via,
            count,
            detail,
            ..
        }) => (
            kind.as_str().to_owned(),
            via,
            count,
            detail.unwrap_or_default(),
        ),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

/// Runs the helper with extra flags before `--`, returning the parsed outcome.
fn raw(sb: &mut Docker, flags: &[&str], r: &EditRequest) -> HelperOutcome {
    let mut a = argv(HELPER, r);
    for (i, f) in flags.iter().enumerate() {
        a.insert(1 + i, (*f).into());
    }
    let o = sb.exec(&join_quoted(&a), None).expect("exec");
    parse_output(&o.output, o.exit_code)
}

fn refused_token(o: HelperOutcome) -> String {
    match o {
        HelperOutcome::Failed { kind, .. } => kind.as_str().to_owned(),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

/// `(mode, uid, gid)` of a file as the daemon sees it.
fn meta(c: &Container, path: &str) -> (u32, u64, u64) {
    let out = docker(&["cp", &format!("{}:{path}", c.0), "-"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut ar = tar::Archive::new(out.stdout.as_slice());
    let e = ar.entries().unwrap().next().unwrap().unwrap();
    let h = e.header();
    (
        h.mode().unwrap() & 0o7777,
        h.uid().unwrap(),
        h.gid().unwrap(),
    )
}

#[test]
#[ignore = "needs a Docker engine and test images: run scripts/docker-test.sh"]
fn scratch_argv_form_every_outcome() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bound.txt"), "bind mounted\n").unwrap();
    std::fs::create_dir(dir.path().join("shared")).unwrap();
    std::fs::write(dir.path().join("shared/locked.txt"), "locked\n").unwrap();
    let bind = format!("{}:/work/bound.txt", dir.path().join("bound.txt").display());
    let shared = format!("{}:/work/shared", dir.path().join("shared").display());
    let c = Container::start(
        "AS_EDIT_DOCKER_IMAGE_SCRATCH_HELPER",
        &["-v", &bind, "-v", &shared],
        "/pause/sleep",
    );
    let mut sb = c.sandbox();
    assert!(!sb.has_shell(), "scratch has no sh");
    let seed = |sb: &mut Docker, p: &str, b: &[u8]| sb.upload(Path::new(p), b).unwrap();
    seed(&mut sb, "/work/a.txt", b"hello world\r\nsecond line\n");
    seed(&mut sb, "/work/bad.txt", b"ab\xffcd");
    seed(&mut sb, "/work/empty.txt", b"");
    seed(&mut sb, "/work/two.txt", b"x x\n");
    let mut ed = Editor::new(sb.clone(), HELPER);

    assert_eq!(
        ed.edit(&req("/work/a.txt", "world", "there")).unwrap(),
        native(1)
    );
    assert_eq!(
        sb.download(Path::new("/work/a.txt")).unwrap(),
        b"hello there\nsecond line\n"
    );
    let (t, via, _, d) = refusal(ed.edit(&req("/work/missing.txt", "a", "b")));
    assert_eq!((t.as_str(), via), ("file_not_found", Via::Native), "{d}");
    let (t, via, _, d) = refusal(ed.edit(&req("/work/bad.txt", "a", "b")));
    assert_eq!((t.as_str(), via), ("read_failed", Via::Native));
    assert!(d.contains("offset 2"), "{d}");
    let (t, via, _, _) = refusal(ed.edit(&req("/work/empty.txt", "a", "b")));
    assert_eq!((t.as_str(), via), ("empty", Via::Native));
    let (t, via, _, _) = refusal(ed.edit(&req("/work/a.txt", "absent", "b")));
    assert_eq!((t.as_str(), via), ("string_not_found", Via::Native));
    let (t, via, count, _) = refusal(ed.edit(&req("/work/two.txt", "x", "y")));
    assert_eq!(
        (t.as_str(), via, count),
        ("multiple_occurrences", Via::Native, Some(2))
    );
    let (t, via, _, _) = refusal(ed.edit(&req("/work/two.txt", "", "y")));
    assert_eq!((t.as_str(), via), ("invalid_argument", Via::Native));
    assert_eq!(
        ed.edit(&EditRequest::new("/work/two.txt", "x", "y", true))
            .unwrap(),
        native(2)
    );
    assert_eq!(sb.download(Path::new("/work/two.txt")).unwrap(), b"y y\n");

    // permission_denied: a root-owned 0644 file, exec'd as another user.
    let mut as_user = c.sandbox().user("1000:1000");
    let r = req("/work/a.txt", "there", "again");
    assert_eq!(
        refused_token(raw(&mut as_user, &[], &r)),
        "permission_denied"
    );
    // outside_root and conflict, through the same argv form.
    assert_eq!(
        refused_token(raw(&mut sb, &["--root", "/work/shared"], &r)),
        "outside_root"
    );
    let zeros = "0".repeat(64);
    assert_eq!(
        refused_token(raw(&mut sb, &["--expect-sha256", &zeros], &r)),
        "conflict"
    );
    // busy: the host holds the lock of a bind-mounted file.
    let locked = dir.path().join("shared/locked.txt");
    let mut holder = Command::new("flock")
        .arg("-x")
        .arg(&locked)
        .arg("cat")
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait for the condition (the lock is held), not for a time.
    while Command::new("flock")
        .arg("-n")
        .arg(&locked)
        .arg("true")
        .status()
        .unwrap()
        .success()
    {
        std::thread::yield_now();
    }
    let r_lock = req("/work/shared/locked.txt", "locked", "free");
    assert_eq!(
        refused_token(raw(&mut sb, &["--lock-timeout", "0"], &r_lock)),
        "busy"
    );
    drop(holder.stdin.take());
    holder.wait().unwrap();
    assert_eq!(ed.edit(&r_lock).unwrap(), native(1));
    assert_eq!(std::fs::read(&locked).unwrap(), b"free\n");

    // write_failed natively (a bind-mounted single file cannot be renamed
    // over); the fallback's docker cp cannot replace it either (EBUSY), so
    // the outcome is write_failed through the transfer path, file intact.
    let rb = req("/work/bound.txt", "mounted", "edited");
    match raw(&mut sb, &[], &rb) {
        HelperOutcome::Failed { kind, detail, .. } => {
            assert_eq!(kind.as_str(), "write_failed");
            assert!(detail.unwrap_or_default().contains("mount point"));
        }
        other => panic!("expected write_failed, got {other:?}"),
    }
    assert_eq!(
        std::fs::read(dir.path().join("bound.txt")).unwrap(),
        b"bind mounted\n"
    );
    let (t, via, _, d) = refusal(ed.edit(&rb));
    assert_eq!((t.as_str(), via), ("write_failed", Via::Transfer), "{d}");
    assert!(d.contains("device or resource busy"), "{d}");
    assert_eq!(
        std::fs::read(dir.path().join("bound.txt")).unwrap(),
        b"bind mounted\n"
    );
    assert_eq!(
        sb.download(Path::new("/work/a.txt")).unwrap(),
        b"hello there\nsecond line\n"
    );
}

#[test]
#[ignore = "needs a Docker engine and test images: run scripts/docker-test.sh"]
fn scratch_without_helper_falls_back_then_installs_by_docker_cp() {
    let c = Container::scratch(&[]);
    let mut sb = c.sandbox();
    assert!(!sb.has_shell());
    // A file with its own mode and owner: the transfer path keeps both.
    let tar = {
        let mut b = tar::Builder::new(Vec::new());
        let mut h = tar::Header::new_gnu();
        h.set_mode(0o640);
        h.set_uid(1234);
        h.set_gid(5678);
        h.set_size(6);
        b.append_data(&mut h, "f.txt", &b"a\r\nb c"[..]).unwrap();
        b.into_inner().unwrap()
    };
    let mut cp = Command::new("docker")
        .args(["cp", "-", &format!("{}:/work", c.0)])
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut cp.stdin.take().unwrap(), &tar).unwrap();
    assert!(cp.wait().unwrap().success());

    let mut ed = Editor::new(sb.clone(), HELPER);
    assert_eq!(ed.edit(&req("/work/f.txt", "b", "B")).unwrap(), transfer(1));
    assert_eq!(sb.download(Path::new("/work/f.txt")).unwrap(), b"a\nB c");
    assert_eq!(meta(&c, "/work/f.txt"), (0o640, 1234, 5678));
    // Relative paths resolve against the work directory, as exec does.
    let mut rel = Editor::new(c.sandbox().workdir("/work"), HELPER);
    assert_eq!(rel.edit(&req("f.txt", "a", "A")).unwrap(), transfer(1));
    assert_eq!(sb.download(Path::new("/work/f.txt")).unwrap(), b"A\nB c");
    // Without .workdir(): the image's WORKDIR (/work), as exec uses it.
    let mut rel = Editor::new(c.sandbox(), HELPER);
    assert_eq!(rel.edit(&req("f.txt", "A", "a")).unwrap(), transfer(1));
    assert_eq!(sb.download(Path::new("/work/f.txt")).unwrap(), b"a\nB c");
    assert_eq!(rel.edit(&req("f.txt", "a", "A")).unwrap(), transfer(1));
    let (t, via, _, _) = refusal(ed.edit(&req("/work/f.txt", "zzz", "y")));
    assert_eq!((t.as_str(), via), ("string_not_found", Via::Transfer));
    let (t, via, _, _) = refusal(ed.edit(&req("/work/none.txt", "a", "y")));
    assert_eq!((t.as_str(), via), ("file_not_found", Via::Transfer));
    let (t, via, _, _) = refusal(ed.edit(&req("/work", "a", "y")));
    assert_eq!((t.as_str(), via), ("file_not_found", Via::Transfer));

    // Install by docker cp into directories that do not exist yet, then
    // the same edit runs natively.
    let bin = std::fs::read(env("AS_EDIT_STATIC_BIN")).unwrap();
    sb.install_helper(&bin, HELPER).unwrap();
    assert_eq!(meta(&c, HELPER), (0o755, 0, 0));
    assert_eq!(meta(&c, "/opt"), (0o755, 0, 0));
    assert_eq!(
        ed.edit(&req("/work/f.txt", "B c", "done")).unwrap(),
        native(1)
    );
    assert_eq!(sb.download(Path::new("/work/f.txt")).unwrap(), b"A\ndone");
    assert_eq!(meta(&c, "/work/f.txt"), (0o640, 1234, 5678));
}

#[test]
#[ignore = "needs a Docker engine and test images: run scripts/docker-test.sh"]
fn busybox_shell_form_install_stdin_and_concurrency() {
    let c = Container::busybox("AS_EDIT_DOCKER_IMAGE_BUSYBOX", &[]);
    c.root_sh("mkdir -p /work && printf 'v = 1\\n' > \"/work/it's \\$(x).txt\"");
    let mut sb = c.sandbox();
    assert!(sb.has_shell());
    let mut ed = Editor::new(sb.clone(), HELPER);
    let quoted = "/work/it's $(x).txt";
    // No helper yet: sh answers 127, the transfer path edits.
    assert_eq!(ed.edit(&req(quoted, "1", "2")).unwrap(), transfer(1));
    let bin = std::fs::read(env("AS_EDIT_STATIC_BIN")).unwrap();
    // ensure_helper writes its temp beside the destination: the directory
    // must exist.
    let mkdir = ed.sandbox.exec(b"mkdir -p /opt/as-edit", None).unwrap();
    assert_eq!(mkdir.exit_code, Some(0));
    assert!(ed.ensure_helper(&bin).unwrap(), "installed over exec");
    assert!(!ed.ensure_helper(&bin).unwrap(), "already there");
    assert_eq!(
        c.root_sh("stat -c '%a %u' /opt/as-edit/as-edit; ls -A /opt/as-edit"),
        "755 0\nas-edit"
    );
    assert_eq!(ed.edit(&req(quoted, "2", "3")).unwrap(), native(1));
    assert_eq!(sb.download(Path::new(quoted)).unwrap(), b"v = 3\n");

    // Over the argv bound: --stdin carries it.
    let big_old = "o".repeat(200 * 1024);
    let big_new = "n".repeat(200 * 1024);
    sb.upload(
        Path::new("/work/big.txt"),
        format!("<{big_old}>\n").as_bytes(),
    )
    .unwrap();
    assert_eq!(
        ed.edit(&req("/work/big.txt", &big_old, &big_new)).unwrap(),
        native(1)
    );
    assert_eq!(
        sb.download(Path::new("/work/big.txt")).unwrap(),
        format!("<{big_new}>\n").into_bytes()
    );

    // 16 concurrent edits of one file from 16 host threads: none lost.
    let body: String = (0..16).map(|i| format!("slot {i} open\n")).collect();
    sb.upload(Path::new("/work/many.txt"), body.as_bytes())
        .unwrap();
    let threads: Vec<_> = (0..16)
        .map(|i| {
            let sb = sb.clone();
            std::thread::spawn(move || {
                Editor::new(sb, HELPER).edit(&req(
                    "/work/many.txt",
                    &format!("slot {i} open"),
                    &format!("slot {i} done"),
                ))
            })
        })
        .collect();
    for t in threads {
        assert_eq!(t.join().unwrap().unwrap(), native(1));
    }
    let want: String = (0..16).map(|i| format!("slot {i} done\n")).collect();
    assert_eq!(
        sb.download(Path::new("/work/many.txt")).unwrap(),
        want.into_bytes()
    );
    assert_eq!(c.root_sh("ls -A /work"), "big.txt\nit's $(x).txt\nmany.txt");
}

#[test]
#[ignore = "needs a Docker engine and test images: run scripts/docker-test.sh"]
fn busybox_as_user_1000() {
    let c = Container::busybox(
        "AS_EDIT_DOCKER_IMAGE_BUSYBOX_HELPER",
        &["--user", "1000:1000"],
    );
    c.root_sh(
        "mkdir -p /work/own /work/rootdir && printf 'mine\\n' > /work/own/f.txt && \
         printf 'root\\n' > /work/root.txt && printf 'in root dir\\n' > /work/rootdir/f.txt && \
         chown -R 1000:1000 /work/own && chown 1000:1000 /work/rootdir/f.txt && chmod 1777 /work",
    );
    let sb = c.sandbox().user("1000:1000");
    let mut ed = Editor::new(sb.clone(), HELPER);
    assert_eq!(
        ed.edit(&req("/work/own/f.txt", "mine", "edited")).unwrap(),
        native(1)
    );
    assert_eq!(
        c.root_sh("cat /work/own/f.txt; stat -c '%u:%g %a' /work/own/f.txt"),
        "edited\n1000:1000 644"
    );
    let (t, via, _, _) = refusal(ed.edit(&req("/work/root.txt", "root", "x")));
    assert_eq!((t.as_str(), via), ("permission_denied", Via::Native));
    assert_eq!(
        c.root_sh("cat /work/root.txt; stat -c '%u:%g' /work/root.txt"),
        "root\n0:0"
    );
    // Root-owned directory, own file: the helper cannot create its temp
    // (write_failed, file untouched), so the Editor falls back to the
    // transfer path, which writes the file in place through docker cp
    // (with the daemon's rights), keeping its owner and mode.
    let r = req("/work/rootdir/f.txt", "in root dir", "edited");
    let mut probe = sb.clone();
    assert_eq!(refused_token(raw(&mut probe, &[], &r)), "write_failed");
    assert_eq!(
        c.root_sh("cat /work/rootdir/f.txt; ls -A /work/rootdir"),
        "in root dir\nf.txt"
    );
    assert_eq!(ed.edit(&r).unwrap(), transfer(1));
    assert_eq!(
        c.root_sh(
            "cat /work/rootdir/f.txt; stat -c '%u:%g %a' /work/rootdir/f.txt; ls -A /work/rootdir"
        ),
        "edited\n1000:1000 644\nf.txt"
    );
}

#[test]
#[ignore = "needs a Docker engine and test images: run scripts/docker-test.sh"]
fn an_unknown_user_or_workdir_is_a_backend_error_not_a_root_fallback() {
    let c = Container::busybox("AS_EDIT_DOCKER_IMAGE_BUSYBOX_HELPER", &[]);
    c.root_sh("mkdir -p /work && printf 'secret\\n' > /work/root.txt && chmod 600 /work/root.txt");
    let r = req("/work/root.txt", "secret", "pwned");
    for sb in [c.sandbox().user("nosuch"), c.sandbox().workdir("/nope")] {
        match Editor::new(sb, HELPER).edit(&r) {
            Err(EditError::Backend(e)) => assert!(
                e.to_string()
                    .starts_with("docker exec cannot start a process as configured"),
                "{e}"
            ),
            other => panic!("expected a backend error, got {other:?}"),
        }
    }
    assert_eq!(
        c.root_sh("cat /work/root.txt; stat -c '%u %a' /work/root.txt"),
        "secret\n0 600"
    );
}

#[test]
#[ignore = "needs a Docker engine and test images: run scripts/docker-test.sh"]
fn the_transfer_path_refuses_files_under_a_tmpfs_mount() {
    // No helper: every edit goes to the transfer path, whose docker cp
    // would see the image's /etc under the tmpfs, not the mount.
    let c = Container::busybox(
        "AS_EDIT_DOCKER_IMAGE_BUSYBOX",
        &["--tmpfs", "/etc", "--tmpfs", "/work"],
    );
    c.root_sh("printf 'in tmpfs\\n' > /etc/as-edit-test.txt && printf 'w\\n' > /work/t.txt");
    let mut ed = Editor::new(c.sandbox(), HELPER);
    for (path, mount) in [("/etc/as-edit-test.txt", "/etc"), ("/work/t.txt", "/work")] {
        let (t, via, _, d) = refusal(ed.edit(&req(path, "t", "T")));
        assert_eq!((t.as_str(), via), ("read_failed", Via::Transfer), "{d}");
        assert!(
            d.contains(&format!(
                "under the container's tmpfs mount {mount}, which docker cp cannot reach"
            )),
            "{d}"
        );
    }
    assert_eq!(
        c.root_sh("cat /etc/as-edit-test.txt /work/t.txt; ls -A /work; ls -A /etc | grep as-edit"),
        "in tmpfs\nw\nt.txt\nas-edit-test.txt"
    );
    // The image's copy beneath the mount is untouched too.
    let tar = docker(&["cp", &format!("{}:/etc/as-edit-test.txt", c.0), "-"]).stdout;
    let mut ar = tar::Archive::new(tar.as_slice());
    let mut e = ar.entries().unwrap().next().unwrap().unwrap();
    let mut got = String::new();
    std::io::Read::read_to_string(&mut e, &mut got).unwrap();
    assert_eq!(got, "read only\n");
}

/// A 1 MiB tmpfs on the host, unmounted on drop (after the container that
/// binds it is gone: declare it first).
struct HostTmpfs(tempfile::TempDir);

impl HostTmpfs {
    fn new() -> HostTmpfs {
        let d = tempfile::tempdir().unwrap();
        let st = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=1m", "tmpfs"])
            .arg(d.path())
            .status()
            .unwrap();
        assert!(st.success(), "mount -t tmpfs (needs root)");
        HostTmpfs(d)
    }
}

impl Drop for HostTmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.0.path()).status();
    }
}

#[test]
#[ignore = "needs a Docker engine and test images: run scripts/docker-test.sh"]
fn a_full_disk_during_the_fallback_upload_leaves_the_file_as_it_was() {
    use std::os::unix::fs::MetadataExt;
    let fs = HostTmpfs::new();
    let f = fs.0.path().join("f.txt");
    let body = "line\n".repeat(300 * 1024 / 5);
    std::fs::write(&f, &body).unwrap();
    std::fs::write(fs.0.path().join("filler"), vec![0u8; 600 * 1024]).unwrap();
    let ino = std::fs::metadata(&f).unwrap().ino();
    let bind = format!("{}:/work", fs.0.path().display());
    // No helper in this image: the transfer path does the edit.
    let c = Container::busybox("AS_EDIT_DOCKER_IMAGE_BUSYBOX", &["-v", &bind]);
    let mut ed = Editor::new(c.sandbox(), HELPER);
    let r = EditRequest::new("/work/f.txt", "line", "LINE", true);
    let (t, via, _, d) = refusal(ed.edit(&r));
    assert_eq!((t.as_str(), via), ("write_failed", Via::Transfer), "{d}");
    assert!(!d.contains("restored"), "{d}");
    // Untouched: same bytes, same inode (the new content went to a temp,
    // which is gone).
    assert_eq!(std::fs::read_to_string(&f).unwrap(), body);
    assert_eq!(std::fs::metadata(&f).unwrap().ino(), ino);
    let mut names: Vec<_> = std::fs::read_dir(fs.0.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["f.txt", "filler"]);
    // With room, the same edit lands by rename: a new inode, mode kept.
    std::fs::remove_file(fs.0.path().join("filler")).unwrap();
    assert_eq!(ed.edit(&r).unwrap(), transfer(body.len() as u64 / 5));
    assert_eq!(
        std::fs::read_to_string(&f).unwrap(),
        body.replace("line", "LINE")
    );
    assert_ne!(std::fs::metadata(&f).unwrap().ino(), ino);
    assert_eq!(std::fs::metadata(&f).unwrap().mode() & 0o7777, 0o644);
    assert_eq!(std::fs::read_dir(fs.0.path()).unwrap().count(), 1);
    drop(c);
}

#[test]
#[ignore = "needs a Docker engine and test images: run scripts/docker-test.sh"]
fn read_only_root_with_tmpfs_workdir() {
    let c = Container::busybox(
        "AS_EDIT_DOCKER_IMAGE_BUSYBOX_HELPER",
        &["--read-only", "--tmpfs", "/work"],
    );
    c.root_sh("printf 'tmp 1\\n' > /work/t.txt");
    let sb = c.sandbox();
    let mut ed = Editor::new(sb.clone(), HELPER);
    assert_eq!(ed.edit(&req("/work/t.txt", "1", "2")).unwrap(), native(1));
    assert_eq!(c.root_sh("cat /work/t.txt; ls -A /work"), "tmp 2\nt.txt");
    // On the read-only root: the helper cannot write, the fallback's
    // docker cp is refused by the daemon; the file is unchanged.
    let before = c.root_sh("cat /etc/as-edit-test.txt; stat -c '%i %Y' /etc/as-edit-test.txt");
    let mut probe = sb.clone();
    let r = req("/etc/as-edit-test.txt", "read", "write");
    assert_eq!(refused_token(raw(&mut probe, &[], &r)), "write_failed");
    let (t, via, _, d) = refusal(ed.edit(&r));
    assert_eq!((t.as_str(), via), ("write_failed", Via::Transfer), "{d}");
    assert!(d.contains("read-only"), "{d}");
    assert_eq!(
        c.root_sh("cat /etc/as-edit-test.txt; stat -c '%i %Y' /etc/as-edit-test.txt"),
        before
    );
    assert!(before.starts_with("read only\n"), "{before}");
    assert_eq!(c.root_sh("ls -A /etc | grep -c as-edit"), "1");
}

#[test]
#[ignore = "needs a Docker engine and test images: run scripts/docker-test.sh"]
fn unreachable_sandboxes_are_distinct_backend_errors() {
    let backend = |r: Result<Edited, EditError>| match r {
        Err(EditError::Backend(e)) => e.to_string(),
        other => panic!("expected a backend error, got {other:?}"),
    };
    let r = req("/work/f.txt", "a", "b");
    let msg = backend(Editor::new(Docker::new("as-edit-no-such-container"), HELPER).edit(&r));
    assert!(
        msg.starts_with("no such container: as-edit-no-such-container"),
        "{msg}"
    );
    let msg =
        backend(Editor::new(Docker::new("x").program("/nonexistent/docker"), HELPER).edit(&r));
    assert!(
        msg.starts_with("the container CLI `/nonexistent/docker` was not found"),
        "{msg}"
    );
    let c = Container::busybox("AS_EDIT_DOCKER_IMAGE_BUSYBOX", &[]);
    docker_ok(&["stop", "-t", "0", &c.0]);
    let msg = backend(Editor::new(c.sandbox(), HELPER).edit(&r));
    assert_eq!(
        msg,
        format!("container {} is not running (status: exited)", c.0)
    );
    let e = c.sandbox().install_helper(b"x", HELPER).unwrap_err();
    assert!(e.to_string().contains("is not running"), "{e}");
}

/// Transactions and patches in containers: natively (busybox with the
/// helper: `--stdin`), through the transfer path (busybox without it:
/// `rm` and `mkdir -p` by `docker exec`), and where the image has neither
/// (scratch): a write fails (no directory for the move's target, no `rm`
/// for the delete) and what was uploaded is put back (`write_failed`,
/// rolled back), every file as it was.
#[test]
#[ignore = "needs a Docker engine and test images: run scripts/docker-test.sh"]
fn transactions_and_patches_natively_by_transfer_and_without_rm() {
    use as_edit_host::{FileOp, TxnEdit};
    let ops = || {
        vec![
            FileOp::Edit {
                path: "/work/a.txt".into(),
                edits: vec![TxnEdit::new("a", "A")],
                expect_sha256: None,
            },
            FileOp::Move {
                path: "/work/b.txt".into(),
                to: "/work/new/b.txt".into(),
                overwrite: false,
                edits: vec![],
                expect_sha256: None,
            },
            FileOp::Delete {
                path: "/work/gone.txt".into(),
                recursive: false,
                expect_sha256: None,
            },
        ]
    };
    let seed = |sb: &mut Docker| {
        for (p, b) in [
            ("/work/a.txt", "a\n"),
            ("/work/b.txt", "b\n"),
            ("/work/gone.txt", "x\n"),
        ] {
            sb.upload(Path::new(p), b.as_bytes()).unwrap();
        }
    };
    let read = |sb: &mut Docker, p: &str| sb.download(Path::new(p)).ok();
    for (image, via) in [
        ("AS_EDIT_DOCKER_IMAGE_BUSYBOX_HELPER", Via::Native),
        ("AS_EDIT_DOCKER_IMAGE_BUSYBOX", Via::Transfer),
    ] {
        let c = Container::busybox(image, &[]);
        c.root_sh("mkdir -p /work");
        let mut sb = c.sandbox();
        seed(&mut sb);
        let mut ed = Editor::new(sb.clone(), HELPER);
        let r = ed.transaction(&ops()).unwrap();
        assert_eq!((r.count, r.files, r.via), (1, 4, via), "{image}");
        assert_eq!(read(&mut sb, "/work/a.txt"), Some(b"A\n".to_vec()));
        assert_eq!(read(&mut sb, "/work/new/b.txt"), Some(b"b\n".to_vec()));
        assert_eq!(read(&mut sb, "/work/b.txt"), None);
        assert_eq!(read(&mut sb, "/work/gone.txt"), None);
        let patch = "*** Begin Patch\n*** Update File: /work/a.txt\n-A\n+AA\n*** Add File: /work/c/c.txt\n+c\n*** End Patch";
        let r = ed.apply_patch(patch).unwrap();
        assert_eq!((r.count, r.files, r.via), (1, 2, via), "{image}");
        assert_eq!(read(&mut sb, "/work/a.txt"), Some(b"AA\n".to_vec()));
        assert_eq!(read(&mut sb, "/work/c/c.txt"), Some(b"c\n".to_vec()));
    }
    let dir = tempfile::tempdir().unwrap();
    let work = format!("{}:/work", dir.path().display());
    let c = Container::scratch(&["-v", &work]);
    let mut sb = c.sandbox();
    seed(&mut sb);
    let mut ed = Editor::new(sb.clone(), HELPER);
    match ed.transaction(&ops()) {
        Err(EditError::Failed {
            kind,
            via: Via::Transfer,
            at: Some(at),
            ..
        }) => {
            assert_eq!(kind.as_str(), "write_failed");
            assert!(at.rolled_back && at.partial.is_empty(), "{at:?}");
        }
        other => panic!("expected write_failed, got {other:?}"),
    }
    assert_eq!(read(&mut sb, "/work/a.txt"), Some(b"a\n".to_vec()));
    assert_eq!(read(&mut sb, "/work/b.txt"), Some(b"b\n".to_vec()));
    assert_eq!(read(&mut sb, "/work/gone.txt"), Some(b"x\n".to_vec()));
    assert_eq!(read(&mut sb, "/work/new/b.txt"), None);
}

#[test]
#[ignore = "needs a Docker engine and test images: run scripts/docker-test.sh"]
fn the_toolset_natively_and_by_transfer() {
    use as_edit_host::{
        EntryType, GlobRequest, GrepRequest, ListRequest, MkdirRequest, ReadRequest, StatRequest,
        TextPage, WriteRequest,
    };
    let names = ["a:b", "new\nline", "with space", "-lead", ".hidden"];
    let mut pages: Vec<Vec<Result<TextPage, String>>> = Vec::new();
    for (image, via) in [
        ("AS_EDIT_DOCKER_IMAGE_BUSYBOX_HELPER", Via::Native),
        ("AS_EDIT_DOCKER_IMAGE_BUSYBOX", Via::Transfer),
    ] {
        let c = Container::busybox(image, &[]);
        c.root_sh("mkdir -p /work/t && chmod 777 /work /work/t");
        let mut sb = c.sandbox();
        for (i, n) in names.iter().enumerate() {
            let p = format!("/work/t/{n}");
            sb.upload(Path::new(&p), format!("{i} needle\r\nx").as_bytes())
                .unwrap();
        }
        let mut ed = Editor::new(sb.clone(), HELPER);
        let reads = [
            ReadRequest::new("/work/t/a:b"),
            ReadRequest::new("/work/t/new\nline").start(2u64),
            ReadRequest::new("/work/t/-lead").numbers(true),
            ReadRequest::new("/work/t/none"),
        ];
        pages.push(
            reads
                .iter()
                .map(|r| {
                    ed.read(r)
                        .map(|p| {
                            assert_eq!(p.via, via, "{image}");
                            TextPage {
                                via: Via::Native,
                                ..p
                            }
                        })
                        .map_err(|e| e.to_string())
                })
                .collect(),
        );
        let w = ed
            .write(&WriteRequest::new("/work/t/sub/w", "w\n"))
            .unwrap();
        assert_eq!(w.via, via);
        assert_eq!(sb.download(Path::new("/work/t/sub/w")).unwrap(), b"w\n");
        if via == Via::Transfer {
            let e = ed.list(&ListRequest::new("/work/t")).unwrap_err();
            assert!(matches!(e, EditError::HelperRequired { .. }), "{e:?}");
            let m = ed
                .mkdir(&MkdirRequest::new("/work/t/m/n").parents(true))
                .unwrap();
            assert_eq!(m.via, Via::Transfer);
            assert_eq!(c.root_sh("test -d /work/t/m/n && echo yes"), "yes");
            continue;
        }
        let l = ed.list(&ListRequest::new("/work/t")).unwrap();
        let got: Vec<(String, EntryType)> = (l.entries.iter())
            .map(|e| (e.path.to_str().unwrap().to_owned(), e.kind))
            .collect();
        let mut want: Vec<(String, EntryType)> = names
            .iter()
            .map(|n| (format!("/work/t/{n}"), EntryType::File))
            .collect();
        want.push(("/work/t/sub".into(), EntryType::Dir));
        want.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(got, want);
        let s = ed.stat(&StatRequest::new(["/work/t/a:b"])).unwrap();
        assert_eq!(
            (s.entries[0].kind, s.entries[0].size),
            (EntryType::File, Some(11))
        );
        let g = ed.glob(&GlobRequest::new("*:*").path("/work/t")).unwrap();
        assert_eq!(g.entries.len(), 1);
        assert_eq!(g.entries[0].path, Path::new("/work/t/a:b"));
        let m = ed
            .grep(&GrepRequest::new("needle").path("/work/t"))
            .unwrap();
        let lines: Vec<(String, u64, String)> = (m.matches.iter())
            .map(|l| (l.path.to_str().unwrap().to_owned(), l.line, l.text.clone()))
            .collect();
        let mut want: Vec<(String, u64, String)> = (names.iter().enumerate())
            // A CRLF line's text keeps its CR, as rg prints it.
            .map(|(i, n)| (format!("/work/t/{n}"), 1, format!("{i} needle\r")))
            .collect();
        want.sort();
        assert_eq!(lines, want);
    }
    assert_eq!(pages[0], pages[1], "the fallback reads as the helper does");
}
