//! The reference's path policy (`resolve_path`, `_canonicalize`): a path
//! joined to the workspace root, `.` and `..` collapsed lexically, every
//! symlink followed (the leaf too, even a dangling one, by hand), missing
//! trailing components kept as spelled; then it must lie within the root.
//! And its `OSError` wording (`_fs_reason`).

use std::ffi::OsStr;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

/// The reference's hop bound for dangling links followed by hand.
const MAX_SYMLINK_HOPS: usize = 40;

/// Why a path was refused: the text after `T: ` (`path "P" is outside …`).
pub type Refusal = String;

/// `P` resolved within `root` (the canonical workspace), as
/// `resolve_path` does, or the text after `T: `.
#[cfg_attr(as_edit_small, optimize(size))]
pub fn resolve(root: &Path, p: &str) -> Result<PathBuf, Refusal> {
    if p.contains('\0') {
        // os.lstat's ValueError, which the tools print bare.
        return Err("embedded null byte".into());
    }
    let full = if p.starts_with('/') {
        PathBuf::from(p)
    } else {
        root.join(p)
    };
    let full = canonicalize(&full).map_err(|e| format!("path \"{p}\": {}", reason(&e)))?;
    if full.starts_with(root) {
        Ok(full)
    } else {
        Err(format!(
            "path \"{p}\" is outside the session's working directory"
        ))
    }
}

/// `os.path.normpath` of an absolute path: `.` dropped, `..` removes the
/// component before it (lexically; `/..` is `/`).
pub fn normpath(p: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for c in p.components() {
        match c {
            Component::Normal(n) => out.push(n),
            Component::ParentDir => {
                out.pop();
            }
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    out
}

fn missing(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ENOENT) | Some(libc::ENOTDIR))
}

/// `_canonicalize`: the path with every symlink followed, or the error
/// that stopped it; trailing components that do not exist are kept.
#[cfg_attr(as_edit_small, optimize(size))]
pub fn canonicalize(path: &Path) -> io::Result<PathBuf> {
    let mut prefix = normpath(path);
    let mut tail: Vec<PathBuf> = Vec::new();
    let mut hops = 0;
    loop {
        let unresolved = match std::fs::canonicalize(&prefix) {
            Ok(p) => {
                let mut p = p;
                for t in tail.iter().rev() {
                    p.push(t);
                }
                return Ok(p);
            }
            Err(e) if missing(&e) => e,
            Err(e) => return Err(e),
        };
        match std::fs::symlink_metadata(&prefix) {
            Err(e) => {
                let Some(parent) = prefix.parent().filter(|_| missing(&e)) else {
                    return Err(e);
                };
                let parent = parent.to_owned();
                tail.push(prefix.file_name().map(PathBuf::from).unwrap_or_default());
                prefix = parent;
                continue;
            }
            Ok(m) if !m.file_type().is_symlink() => return Err(unresolved),
            Ok(_) => {}
        }
        hops += 1;
        if hops > MAX_SYMLINK_HOPS {
            return Err(io::Error::from_raw_os_error(libc::ELOOP));
        }
        let parent = std::fs::canonicalize(prefix.parent().unwrap_or(Path::new("/")))?;
        let target = std::fs::read_link(&prefix)?;
        let mut next = parent.join(target);
        for t in tail.drain(..).rev() {
            next.push(t);
        }
        prefix = normpath(&next);
    }
}

/// `_fs_reason`: the phrase the model sees for a file-system error.
pub fn reason(e: &io::Error) -> String {
    match e.raw_os_error() {
        Some(libc::ENOENT) => "no such file or directory".into(),
        Some(libc::ENOTDIR) => "not a directory".into(),
        Some(libc::EISDIR) => "is a directory".into(),
        Some(libc::EACCES) | Some(libc::EPERM) => "permission denied".into(),
        Some(libc::EEXIST) => "file already exists".into(),
        Some(libc::ELOOP) => "too many levels of symbolic links".into(),
        // strerror, as Python's `e.strerror`, lower-cased: glibc's words
        // (the reference's Python), which the static binary's musl words
        // otherwise (`Filename too long`, `I/O error`, `Resource busy`).
        Some(n) => match GLIBC.iter().find(|&&(e, _)| e == n) {
            Some((_, text)) => (*text).into(),
            None => {
                let s = io::Error::from_raw_os_error(n).to_string();
                let s = s.split(" (os error").next().unwrap_or(&s);
                s.to_lowercase()
            }
        },
        None => "i/o error".into(),
    }
}

/// glibc's `strerror` (lower-cased) for the errors a file tool can meet.
const GLIBC: [(i32, &str); 20] = [
    (libc::ENAMETOOLONG, "file name too long"),
    (libc::EIO, "input/output error"),
    (libc::EBUSY, "device or resource busy"),
    (libc::EXDEV, "invalid cross-device link"),
    (libc::ENOMEM, "cannot allocate memory"),
    (libc::EMFILE, "too many open files"),
    (libc::ENFILE, "too many open files in system"),
    (libc::EDQUOT, "disk quota exceeded"),
    (libc::EOVERFLOW, "value too large for defined data type"),
    (libc::EOPNOTSUPP, "operation not supported"),
    (libc::ENOSPC, "no space left on device"),
    (libc::EROFS, "read-only file system"),
    (libc::ETXTBSY, "text file busy"),
    (libc::EFBIG, "file too large"),
    (libc::EDEADLK, "resource deadlock avoided"),
    (libc::ETIMEDOUT, "connection timed out"),
    (libc::ENOTTY, "inappropriate ioctl for device"),
    (libc::ESPIPE, "illegal seek"),
    (libc::ENXIO, "no such device or address"),
    (libc::ENOTEMPTY, "directory not empty"),
];

/// A name as Python's `os.fsdecode` then the runner's `well_formed` show
/// it: valid UTF-8 as it is, each byte of an invalid sequence one U+FFFD.
pub fn display(name: &OsStr) -> String {
    let mut out = String::new();
    let mut b = name.as_bytes();
    loop {
        match std::str::from_utf8(b) {
            Ok(s) => {
                out.push_str(s);
                return out;
            }
            Err(e) => {
                let (ok, bad) = b.split_at(e.valid_up_to());
                out.push_str(std::str::from_utf8(ok).expect("checked"));
                let n = e.error_len().unwrap_or(bad.len());
                out.extend(std::iter::repeat_n('\u{FFFD}', n));
                b = &bad[n..];
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normpath_is_lexical() {
        assert_eq!(normpath(Path::new("/a/./b/../c")), Path::new("/a/c"));
        assert_eq!(normpath(Path::new("/../x")), Path::new("/x"));
        assert_eq!(normpath(Path::new("//a//b/")), Path::new("/a/b"));
    }

    /// The reference's words, whatever libc the binary links (musl says
    /// `filename too long`: `cargo test --target x86_64-unknown-linux-musl`).
    #[test]
    fn errors_read_as_glibcs_strerror() {
        let r = |n| reason(&io::Error::from_raw_os_error(n));
        assert_eq!(r(libc::ENAMETOOLONG), "file name too long");
        assert_eq!(r(libc::EIO), "input/output error");
        assert_eq!(r(libc::EBUSY), "device or resource busy");
        assert_eq!(r(libc::EXDEV), "invalid cross-device link");
        assert_eq!(r(libc::EMFILE), "too many open files");
        assert_eq!(r(libc::EDQUOT), "disk quota exceeded");
        assert_eq!(r(libc::EOPNOTSUPP), "operation not supported");
        assert_eq!(r(libc::EINVAL), "invalid argument");
    }

    #[test]
    fn invalid_utf8_shows_one_replacement_per_byte() {
        let s = display(OsStr::from_bytes(b"a\xf0\x9f\x98b\xffc"));
        assert_eq!(s, "a\u{FFFD}\u{FFFD}\u{FFFD}b\u{FFFD}c");
    }
}
