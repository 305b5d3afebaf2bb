//! The library entry point (`as_edit::run`) in a process whose effective
//! uid changes between calls (a root service that drops to a user for
//! some requests, `seteuid`): each call must decide by the euid it runs
//! under. Round seven asked the euid once per process and kept it, so an
//! edit as root after one as nobody gave the file to root (the owner copy
//! is root's alone) and a sticky refusal after one as root lost its cause.
//! One test, alone in its binary: `seteuid` changes every thread.

use std::ffi::OsString;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

use base64::Engine as _;

fn b64(s: &str) -> OsString {
    base64::engine::general_purpose::STANDARD.encode(s).into()
}

fn edit(path: &Path, old: &str, new: &str) -> (String, i32) {
    let args = vec!["--".into(), path.into(), b64(old), b64(new)];
    let r = as_edit::run(&args, None, &mut std::io::empty());
    (r.stdout, r.exit_code)
}

fn seteuid(uid: u32) {
    // SAFETY: plain syscalls; the real and saved uids stay 0, so the
    // second call can return to root.
    assert_eq!(unsafe { libc::setegid(uid) }, 0);
    assert_eq!(unsafe { libc::seteuid(uid) }, 0);
}

fn write(p: &Path, s: &str, uid: u32, mode: u32) {
    std::fs::write(p, s).unwrap();
    std::os::unix::fs::chown(p, Some(uid), Some(uid)).unwrap();
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[test]
fn each_call_decides_by_the_euid_it_runs_under() {
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: needs root (seteuid)");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o1777)).unwrap();
    let (mine, theirs, users) = (
        d.path().join("mine"),
        d.path().join("theirs"),
        d.path().join("u"),
    );
    write(&mine, "a\n", 65534, 0o644);
    write(&theirs, "a\n", 0, 0o666);
    write(&users, "a\n", 1000, 0o644);

    let sticky = format!(
        "__RESULT__{{\"error\":\"write_failed\",\"detail\":\"{} cannot be replaced by rename: its directory {} is sticky and neither the file nor the directory belongs to this user, so only an in-place write can change it; the file is unchanged\"}}\n",
        theirs.display(),
        d.path().display()
    );
    let owner_kept = |new: &str| {
        assert_eq!(
            edit(&users, "a", new),
            ("__RESULT__{\"count\":1}\n".into(), 0)
        );
        let m = std::fs::metadata(&users).unwrap();
        assert_eq!((m.uid(), m.gid(), m.mode() & 0o7777), (1000, 1000, 0o644));
        assert_eq!(std::fs::read_to_string(&users).unwrap(), format!("{new}\n"));
        write(&users, "a\n", 1000, 0o644);
    };
    // Root: the owner is copied (uid 1000 keeps its file).
    owner_kept("b");
    // Then nobody: its own file in the sticky directory is edited; root's
    // there may not be renamed over, and the refusal says why.
    seteuid(65534);
    let ours = edit(&mine, "a", "b");
    let refused = edit(&theirs, "a", "b");
    seteuid(0);
    assert_eq!(ours, ("__RESULT__{\"count\":1}\n".into(), 0));
    assert_eq!(refused, (sticky, 1));
    assert_eq!(std::fs::read_to_string(&theirs).unwrap(), "a\n");
    // Root again, after nobody: still root's owner copy.
    owner_kept("c");
    let mut names: Vec<_> = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["mine", "theirs", "u"]);
}
