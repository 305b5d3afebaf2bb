//! The `write` and `edit` tools: the reference's texts, with as-edit's
//! writes underneath: the new content goes to a temp in the target's
//! directory, renamed over the `flock`ed file (its mode, owner and
//! extended attributes kept, a change by another writer meanwhile refused)
//! or, for a new file, renamed in with `RENAME_NOREPLACE` (a file that
//! appears meanwhile is then replaced as an existing one is). A failure
//! leaves the file as it was and no temp behind.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::rc::Rc;

use rustix::fs::{self as rfs, Mode, OFlags, RenameFlags};
use rustix::io::Errno;

use super::input::Edit;
use super::path::{reason, resolve};
use crate::fs::lock::open_locked;
use crate::fs::meta::check_writable;
use crate::fs::temp::{settle, Temp};
use crate::fs::{FileKind, FsError, NotFoundKind, Target, WriteStep};
use crate::request::DEFAULT_LOCK_TIMEOUT;

/// `edit` loads the whole file: larger ones are refused.
pub const MAX_EDIT_BYTES: u64 = 256 * 1024;

/// `write {file_path, content}`.
#[cfg_attr(as_edit_small, optimize(size))]
pub fn write(cwd: &Path, fp: &str, content: &str) -> Result<String, String> {
    let target = resolve(&super::root(cwd), fp).map_err(|r| format!("write: {r}"))?;
    put(&target, content.as_bytes(), None).map_err(|r| format!("write: {fp}: {r}"))?;
    Ok(format!("wrote {} bytes to {fp}", content.chars().count()))
}

/// `edit {file_path, old_string, new_string, replace_all}`.
#[cfg_attr(as_edit_small, optimize(size))]
pub fn edit(cwd: &Path, e: &Edit) -> Result<String, String> {
    let fp = e.file_path.as_str();
    let target = resolve(&super::root(cwd), fp).map_err(|r| format!("edit: {r}"))?;
    let st = std::fs::metadata(&target).map_err(|err| format!("edit: {fp}: {}", reason(&err)))?;
    if !st.file_type().is_file() {
        return Err(format!("edit: {fp}: not a regular file"));
    }
    let too_large = |size: u64| {
        format!(
            "edit: {fp} is {size} bytes, exceeds {MAX_EDIT_BYTES}-byte limit. \
             The edit tool loads the whole file and cannot modify a file this large."
        )
    };
    if st.size() > MAX_EDIT_BYTES {
        return Err(too_large(st.size()));
    }
    let fail = |r: String| format!("edit: {fp}: {r}");
    let t = target_of(&target).map_err(|err| fail(reason(&err)))?;
    // The content is read under the lock the replacement is made under,
    // so no other as-edit write lands in between.
    let (file, lst) = open_locked(&t, DEFAULT_LOCK_TIMEOUT).map_err(|err| fail(fs_reason(err)))?;
    if lst.st_size as u64 > MAX_EDIT_BYTES {
        return Err(too_large(lst.st_size as u64));
    }
    // The reference opens the file for writing: one this user may not
    // write is refused, not replaced through its writable directory.
    check_writable(&t, &file, &lst).map_err(|err| fail(fs_reason(err)))?;
    let bytes = read_all(&file, lst.st_size as usize).map_err(|err| fail(reason(&err.into())))?;
    let text = String::from_utf8(bytes)
        .map_err(|_| format!("edit: {fp}: not valid UTF-8 text (cannot edit binary files)"))?;
    let (old, new) = (e.old_string.as_str(), e.new_string.as_str());
    let count = text.matches(old).count();
    if count == 0 {
        return Err(format!("edit: old_string not found in {fp}"));
    }
    if !e.replace_all && count > 1 {
        return Err(format!(
            "edit: old_string appears {count} times in {fp} (must be unique)"
        ));
    }
    if count > 1 {
        let size = text.len() as i128 + count as i128 * (new.len() as i128 - old.len() as i128);
        if size > MAX_EDIT_BYTES as i128 {
            return Err(format!(
                "edit: {count} replacements would make {fp} {size} bytes, exceeds {MAX_EDIT_BYTES}-byte limit."
            ));
        }
    }
    let updated = if e.replace_all {
        text.replace(old, new)
    } else {
        text.replacen(old, new, 1)
    };
    replace(&t, &file, &lst, updated.as_bytes()).map_err(|err| fail(fs_reason(err)))?;
    Ok(format!(
        "edited {fp} ({} replacement(s))",
        if e.replace_all { count } else { 1 }
    ))
}

/// The content of the locked file (at most one byte past the limit).
fn read_all(file: &OwnedFd, size: usize) -> Result<Vec<u8>, Errno> {
    let mut out = vec![0; size.min(MAX_EDIT_BYTES as usize) + 1];
    let mut at = 0;
    while at < out.len() {
        match rustix::io::pread(file, &mut out[at..], at as u64) {
            Ok(0) => break,
            Ok(n) => at += n,
            Err(Errno::INTR) => {}
            Err(e) => return Err(e),
        }
    }
    out.truncate(at);
    Ok(out)
}

/// The target's directory (opened `O_PATH`) and name; the path is canonical.
fn target_of(path: &Path) -> io::Result<Target> {
    let parent = path.parent().unwrap_or(Path::new("/"));
    let name = path.file_name().unwrap_or_default();
    let dir = rfs::open(
        parent,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    Ok(Target {
        dir: Rc::new(dir),
        name: CString::new(name.as_bytes())
            .map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?,
        path: path.to_owned(),
    })
}

/// Makes the missing parents (`Path.mkdir(parents=True, exist_ok=True)`),
/// then writes `content` as the file at the canonical `target`.
fn put(target: &Path, content: &[u8], _: Option<()>) -> Result<(), String> {
    if let Some(parent) = target.parent() {
        mkdirs(parent).map_err(|e| reason(&e))?;
    }
    let t = target_of(target).map_err(|e| reason(&e))?;
    for _ in 0..8 {
        match std::fs::symlink_metadata(target) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => match create(&t, content) {
                Err(Errno::EXIST) => continue, // made meanwhile: replace it
                r => return r.map_err(|e| reason(&e.into())),
            },
            Err(e) => return Err(reason(&e)),
            Ok(m) if m.is_dir() => return Err(reason(&Errno::ISDIR.into())),
            Ok(m) if !m.is_file() => return Err("not a regular file".into()),
            Ok(_) => {}
        }
        let (file, st) = match open_locked(&t, DEFAULT_LOCK_TIMEOUT) {
            Err(FsError::NotFound {
                kind: NotFoundKind::Other(Errno::NOENT),
                ..
            }) => continue, // removed meanwhile: create it
            r => r.map_err(fs_reason)?,
        };
        check_writable(&t, &file, &st).map_err(fs_reason)?;
        return replace(&t, &file, &st, content).map_err(fs_reason);
    }
    Err("the path kept changing".into())
}

/// `mkdir -p` as pathlib does it: an existing directory is fine, an
/// existing file is `file already exists`.
fn mkdirs(dir: &Path) -> io::Result<()> {
    match std::fs::create_dir(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            let Some(parent) = dir.parent() else {
                return Err(e);
            };
            mkdirs(parent)?;
            match std::fs::create_dir(dir) {
                Err(_) if dir.is_dir() => Ok(()),
                r => r,
            }
        }
        Err(_) if dir.is_dir() => Ok(()),
        Err(e) => Err(e),
    }
}

/// The new file: a temp with the mode `open()` would give it (0666 less
/// the umask), renamed in only where the name is still free.
fn create(t: &Target, content: &[u8]) -> Result<(), Errno> {
    let mut temp = Temp::create(t)?;
    write_all(temp.fd(), content)?;
    let umask = rustix::process::umask(Mode::empty());
    rustix::process::umask(umask);
    rfs::fchmod(temp.fd(), Mode::from_raw_mode(0o666) & !umask)?;
    settle(temp.file(), false)?;
    let name = temp.named(false)?.clone();
    rfs::renameat_with(
        &*t.dir,
        name.as_c_str(),
        &*t.dir,
        t.name.as_c_str(),
        RenameFlags::NOREPLACE,
    )?;
    temp.renamed();
    Ok(())
}

/// The locked existing file replaced by `content`.
fn replace(t: &Target, file: &OwnedFd, st: &rfs::Stat, content: &[u8]) -> Result<(), FsError> {
    let failed = |step, errno| FsError::Write {
        path: t.path.clone(),
        step,
        errno,
    };
    let temp = Temp::create(t).map_err(|e| failed(WriteStep::CreateTemp, e))?;
    write_all(temp.fd(), content).map_err(|e| failed(WriteStep::WriteTemp, e))?;
    temp.commit(t, file, st, None).map(|_| ())
}

fn write_all(fd: impl AsFd, mut b: &[u8]) -> Result<(), Errno> {
    while !b.is_empty() {
        match rustix::io::write(&fd, b) {
            Ok(n) => b = &b[n..],
            Err(Errno::INTR) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// An as-edit write failure in the reference's words where it has them.
fn fs_reason(e: FsError) -> String {
    let errno = |n: Errno| reason(&io::Error::from(n));
    match e {
        FsError::NotFound { kind, .. } => match kind {
            NotFoundKind::Other(n) => errno(n),
            NotFoundKind::NotRegular(FileKind::Directory) => errno(Errno::ISDIR),
            NotFoundKind::NotRegular(_) => "not a regular file".into(),
            _ => errno(Errno::NOENT),
        },
        FsError::Open { errno: n, .. }
        | FsError::Read { errno: n, .. }
        | FsError::Stat { errno: n, .. }
        | FsError::Lock { errno: n, .. }
        | FsError::Write { errno: n, .. } => errno(n),
        FsError::NoWritePermission { .. }
        | FsError::FileFlag { .. }
        | FsError::DirFlag { .. }
        | FsError::StickyDir { .. } => errno(Errno::ACCESS),
        FsError::ReadOnlyFs { .. } => errno(Errno::ROFS),
        other => crate::protocol::Failure::from(other)
            .detail
            .unwrap_or_else(|| "the write failed".into()),
    }
}
