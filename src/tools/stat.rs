//! `stat`: `{"op":"stat","paths":[P,…]}` (1 to 256 paths, each a string
//! or `{"path_b64"}`; `offset` skips the first ones, as `next` asks).
//!
//! Answer: `{"entries":[E,…],"truncated":bool}` in request order, `E` =
//! `{"path","type","size","mtime_ns","mode"}` from `lstat` of the path
//! itself (its directory resolved and confined by `--root`, its last name
//! not followed); `type` is `file`, `dir`, `symlink` or `other`. A symlink
//! adds `"target"` (its text; `"target_b64"` when that is not UTF-8) and
//! `"resolved"`: the type it leads to, `"missing"` when dangling or a loop,
//! `"outside_root"` when it leads out of `--root`; when it leads to
//! something, also `"resolved_size"` and `"resolved_mtime_ns"` of that (what
//! `stat` rather than `lstat` says: a host listing a link as its target, as
//! Java's `Files.size` does, needs no second request). A path that does not
//! exist (or whose directory does not) is `{"path","type":"missing"}`: an
//! `exists` is a `stat`. A path ending in `/` or `/.` names a directory,
//! as for `lstat(2)`: a symlink is followed (within `--root`) to the
//! directory it leads to; a dangling one is `missing`; a file there (or a
//! symlink to one; `f/..` too) is the entry's error `file_not_found`, "a component of
//! the path is not a directory" (ENOTDIR, as every op says of such a path). Nothing is opened but directories on the way, so
//! a FIFO or device cannot hang or wake.
//!
//! A path that cannot be looked at is answered alone, the others still
//! are: `{"path","error":TOKEN,"detail"}`, TOKEN what an edit of that path
//! would be refused with (`outside_root` for one leading out of `--root`,
//! `read_failed` for an `lstat` or `readlink` that failed, a name too long
//! say; the detail says why). Only a malformed request (`invalid_argument`) refuses the
//! batch.
//!
//! Cut by `max_bytes` after a whole entry: `"truncated":true,
//! "next":{"offset":K}`, K the index of the first path not answered.

use std::path::{Path, PathBuf};

use rustix::fs::{FileType, Stat};
use rustix::io::Errno;

use super::answer::{next, Page};
use super::{invalid, name, place, Root};
use crate::fs::resolve::fails_within;
use crate::protocol::{display_path, ErrorKind, Failure};

pub(super) fn run(
    paths: &[PathBuf],
    offset: u64,
    root: Option<&Root>,
    max_bytes: u64,
) -> Result<String, Failure> {
    let mut page = Page::new(max_bytes, "", "entries");
    let reserve = next(Some(&[("offset", paths.len() as u64)])).len();
    let mut at = offset as usize;
    while let Some(p) = paths.get(at) {
        let e = entry(p, root).unwrap_or_else(|f| refused(p, &f));
        if !page.push(&e, reserve) {
            if page.kept() == 0 {
                return Err(too_small(max_bytes, page.needs(e.len(), reserve)));
            }
            return Ok(page.finish(&next(Some(&[("offset", at as u64)]))));
        }
        at += 1;
    }
    Ok(page.finish(&next(None)))
}

/// The refusal of an entry that does not fit even alone.
pub(super) fn too_small(max_bytes: u64, needs: usize) -> Failure {
    invalid(format!(
        "max_bytes {max_bytes} is too small for the next entry: its answer needs {needs} bytes"
    ))
}

/// The entry of a path that could not be looked at: `{"path","error",
/// "detail"}`, the error the token an edit of it would get.
fn refused(path: &Path, f: &Failure) -> String {
    let mut out = String::from("{");
    name::path_field(&mut out, "path", path);
    out.push_str(&format!(",\"error\":\"{}\"", f.kind.token()));
    if let Some(d) = &f.detail {
        out.push_str(",\"detail\":");
        super::answer::push_str(&mut out, d);
    }
    out.push('}');
    out
}

/// One entry, rendered.
fn entry(path: &Path, root: Option<&Root>) -> Result<String, Failure> {
    let mut out = String::from("{");
    name::path_field(&mut out, "path", path);
    let Some((dir, n)) = place::entry(path, root)? else {
        if dotdot_after_a_non_directory(path) {
            return Err(Failure::from(crate::fs::FsError::NotFound {
                path: path.to_owned(),
                kind: crate::fs::NotFoundKind::NotADirectory,
            }));
        }
        out.push_str(",\"type\":\"missing\"}");
        return Ok(out);
    };
    let st = match place::lstat(&dir, &n) {
        Ok(st) => st,
        Err(Errno::NOENT | Errno::NOTDIR) => {
            out.push_str(",\"type\":\"missing\"}");
            return Ok(out);
        }
        Err(e) => {
            return Err(Failure::new(
                ErrorKind::ReadFailed,
                format!("stat {}: {e}", display_path(path)),
            ))
        }
    };
    let mut t = FileType::from_raw_mode(st.st_mode);
    let mut st = st;
    if names_a_dir(path) && t != FileType::Directory {
        // `P/` (or `P/.`) names a directory, as `lstat(2)` and `test -e`
        // take it: through a symlink to one, else nothing.
        match (t, place::dir(path, root)) {
            (FileType::Symlink, Ok(fd)) => {
                st = rustix::fs::fstat(&fd).map_err(|e| {
                    Failure::new(
                        ErrorKind::ReadFailed,
                        format!("stat {}: {e}", display_path(path)),
                    )
                })?;
                t = FileType::Directory;
            }
            (FileType::Symlink, Err(f)) if f.kind != ErrorKind::FileNotFound => return Err(f),
            // A dangling symlink: nothing there.
            (FileType::Symlink, _) if !leads_to_a_non_directory(path) => {
                out.push_str(",\"type\":\"missing\"}");
                return Ok(out);
            }
            // A file (or a symlink to one): `lstat(2)` says ENOTDIR, as
            // every other op does for the path.
            _ => {
                return Err(Failure::from(crate::fs::FsError::NotFound {
                    path: path.to_owned(),
                    kind: crate::fs::NotFoundKind::NotADirectory,
                }))
            }
        }
    }
    fields(&mut out, t, &st);
    out.push_str(&format!(",\"mode\":\"{:04o}\"", st.st_mode & 0o7777));
    if t == FileType::Symlink {
        let target = rustix::fs::readlinkat(&dir, n.as_c_str(), Vec::new()).map_err(|e| {
            Failure::new(
                ErrorKind::ReadFailed,
                format!("reading the symlink {}: {e}", display_path(path)),
            )
        })?;
        out.push(',');
        name::field(&mut out, "target", target.as_bytes());
        let (kind, to) = resolved(path, root);
        out.push_str(&format!(",\"resolved\":\"{kind}\""));
        if let Some(to) = to {
            out.push_str(&format!(
                ",\"resolved_size\":{},\"resolved_mtime_ns\":{}",
                to.st_size,
                place::mtime_ns(&to)
            ));
        }
    }
    out.push('}');
    Ok(out)
}

/// Whether `path` (ending in `/`: a symlink not leading to a directory)
/// leads to something that is not a directory (ENOTDIR, not ENOENT).
fn leads_to_a_non_directory(path: &Path) -> bool {
    std::fs::metadata(path).is_err_and(|e| e.raw_os_error() == Some(libc::ENOTDIR))
}

/// Whether `path` is `P/..` (or `P/../`, `P/../.`) where `P` is a file
/// or a symlink to one: it names a directory as `P/` does, ENOTDIR.
fn dotdot_after_a_non_directory(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let mut b = path.as_os_str().as_bytes();
    while let Some(s) = b.strip_suffix(b"/").or_else(|| b.strip_suffix(b"/.")) {
        b = s;
    }
    let Some(p) = b.strip_suffix(b"/..").filter(|p| !p.is_empty()) else {
        return false;
    };
    std::fs::metadata(std::ffi::OsStr::from_bytes(p)).is_ok_and(|m| !m.is_dir())
}

/// Whether `path` ends in `/` or `/.`, which `Path::components` drops
/// but which make it name a directory only.
fn names_a_dir(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let b = path.as_os_str().as_bytes();
    b.ends_with(b"/") || b.ends_with(b"/.")
}

/// `,"type":…,"size":…,"mtime_ns":…`, as `list` writes them too.
pub(super) fn fields(out: &mut String, t: FileType, st: &Stat) {
    out.push_str(&format!(
        ",\"type\":\"{}\",\"size\":{},\"mtime_ns\":{}",
        place::type_name(t),
        st.st_size,
        place::mtime_ns(st)
    ));
}

/// What a symlink at `path` leads to, with its `stat` when it leads to
/// something. With `--root`, the whole path is resolved and must stay
/// within it; what lies outside is not looked at.
fn resolved(path: &Path, root: Option<&Root>) -> (&'static str, Option<Stat>) {
    match std::fs::canonicalize(path) {
        Ok(abs) => match root {
            Some((r, _)) if !abs.starts_with(r) => ("outside_root", None),
            _ => match rustix::fs::lstat(&abs) {
                Ok(st) => (
                    place::type_name(FileType::from_raw_mode(st.st_mode)),
                    Some(st),
                ),
                Err(_) => ("missing", None),
            },
        },
        Err(_) => match root {
            Some((r, _)) if !fails_within(path, r) => ("outside_root", None),
            _ => ("missing", None),
        },
    }
}
