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
//! says of every path in it. A file not read for the bounds of
//! [`super::ignores`] is noted (by absolute path) in [`Above::skip`].

use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use rustix::fs::{self as rfs, Mode, OFlags};

use super::ignores::{self, Ignores, Skip, MAX_HELD};

/// What lies above the start.
#[derive(Default)]
pub(super) struct Above {
    /// The start's path relative to the repository's top, with a `/` after
    /// it (empty when the start is the top, or there is no repository).
    pub base: Vec<u8>,
    /// The rules, weakest first: each with the offset in `base` + the
    /// entry's path where the path relative to its directory begins.
    pub rules: Vec<(Ignores, usize)>,
    /// The start itself is ignored.
    pub ignored: bool,
    /// The ignore files not read.
    pub skip: Option<Skip>,
}

impl Above {
    /// The ignore files of the start's parents given as ripgrep reads them
    /// (outermost first, each with its path down to the start ending in
    /// `/`: [`ignores::ancestors`]): every such path is a suffix of the
    /// outermost one, so it is the base and each file an offset in it.
    pub(super) fn of_outer(outer: Vec<(Ignores, Vec<u8>)>) -> Above {
        let base = outer.first().map(|o| o.1.clone()).unwrap_or_default();
        let rules = (outer.into_iter())
            .map(|(r, rel)| (r, base.len() - rel.len()))
            .collect();
        Above {
            base,
            rules,
            ..Above::default()
        }
    }

    /// The bytes of rules held ([`super::gitignore::Rules::held`]).
    pub(super) fn held(&self) -> usize {
        self.rules.iter().map(|(r, _)| r.held()).sum()
    }

    /// Reads the rules file `p` into `rules` (with `offset`), within
    /// [`MAX_HELD`]; one not read is noted in `skip`.
    fn read(&mut self, p: &Path, offset: usize) {
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
        let Ok(fd) = rfs::open(p, flags, Mode::empty()) else {
            return;
        };
        match ignores::rules_of(fd) {
            Ok(r) if self.held() + r.rules.held() <= MAX_HELD => {
                self.rules.push((Ignores::git_only(r.rules), offset));
            }
            Ok(r) => Skip::note(&mut self.skip, p.as_os_str().as_bytes().to_vec(), r.size),
            Err(Some(size)) => Skip::note(&mut self.skip, p.as_os_str().as_bytes().to_vec(), size),
            Err(None) => {}
        }
    }
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
    out.read(&top.join(".git/info/exclude"), 0);
    let Ok(rel) = abs.strip_prefix(top) else {
        return out;
    };
    let mut dir = top.to_path_buf();
    for c in rel.components() {
        // The rules so far, of `dir` and above, decide on its child `c`.
        let offset = out.base.len();
        out.read(&dir.join(".gitignore"), offset);
        out.base.extend_from_slice(c.as_os_str().as_bytes());
        let full = &out.base;
        let levels: Vec<_> = out.rules.iter().map(|(r, o)| (r, &full[*o..])).collect();
        if ignores::decide(&levels, true, false) == Some(true) {
            out.ignored = true;
            return out;
        }
        out.base.push(b'/');
        dir.push(c);
    }
    out
}
