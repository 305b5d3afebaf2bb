//! The ignore rules from above a walk's start, as git reads them: in a
//! repository (the nearest directory at or above the start holding a
//! `.git`, directory or file, looked for no higher than `--root`), the
//! `.gitignore` of every directory from the repository's top down to the
//! start's parent, and `.git/info/exclude` (the weakest: any `.gitignore`
//! overrides it). Nothing above `--root` is read: with a root and no
//! repository within it, the `.gitignore` files from the root down to the
//! start's parent are. Without either none is, and `core.excludesFile`
//! never is. A start that these rules ignore (or that
//! lies in an ignored directory) yields nothing, as `git check-ignore`
//! says of every path in it.

use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use rustix::fs::{self as rfs, Mode, OFlags};

use super::gitignore::{self, Rules};

/// What lies above the start.
#[derive(Default)]
pub(super) struct Above {
    /// The start's path relative to the repository's top, with a `/` after
    /// it (empty when the start is the top, or there is no repository).
    pub base: Vec<u8>,
    /// The rules, weakest first: each with the offset in `base` + the
    /// entry's path where the path relative to its directory begins.
    pub rules: Vec<(Rules, usize)>,
    /// The start itself is ignored.
    pub ignored: bool,
}

/// The rules above `abs` (a canonical directory path), within `root`.
pub(super) fn above(abs: &Path, root: Option<&Path>) -> Above {
    let mut out = Above::default();
    let within = |p: &Path| root.is_none_or(|r| p.starts_with(r));
    let repo = abs
        .ancestors()
        .take_while(|p| within(p))
        .find(|p| rfs::lstat(p.join(".git")).is_ok());
    // A repository whose top is above `--root` (or none) starts at the root.
    let Some(top) = repo.or(root) else {
        return out;
    };
    if let Some(r) = read(&top.join(".git/info/exclude")) {
        out.rules.push((r, 0));
    }
    let Ok(rel) = abs.strip_prefix(top) else {
        return out;
    };
    let mut dir = top.to_path_buf();
    for c in rel.components() {
        // The rules so far, of `dir` and above, decide on its child `c`.
        if let Some(r) = read(&dir.join(".gitignore")) {
            out.rules.push((r, out.base.len()));
        }
        out.base.extend_from_slice(c.as_os_str().as_bytes());
        let full = &out.base;
        let stack = out.rules.iter().map(|(r, o)| (r, &full[*o..]));
        if gitignore::decide(stack, true) {
            out.ignored = true;
            return out;
        }
        out.base.push(b'/');
        dir.push(c);
    }
    out
}

/// A rules file by path, if it is a regular file (not followed if a
/// symlink, never blocking on a FIFO) no larger than the walk's bound.
fn read(p: &Path) -> Option<Rules> {
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let fd = rfs::open(p, flags, Mode::empty()).ok()?;
    super::walk::rules_of(fd)
}
