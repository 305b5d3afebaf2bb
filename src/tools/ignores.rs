//! The ignore files of one directory and how a stack of them decides, in
//! the walk's two flavours ([`super::walk::Options`]):
//!
//! - **gitignore** (`"gitignore":true` of the protocol-4 ops): `.gitignore`
//!   files only, everywhere below the start; the deepest file with a
//!   matching rule decides ([`super::gitignore::decide`]).
//! - **rg** (ripgrep 13's default filters, for the `--toolset` grep):
//!   `.rgignore`, `.ignore` and `.gitignore`, in that precedence: a
//!   `.rgignore` rule in any directory of the stack beats any `.ignore`
//!   rule, which beats any `.gitignore` rule; within one kind the deepest
//!   file with a match decides. `.gitignore` counts only in a git
//!   repository, a directory holding a `.git` entry (file or directory) at
//!   or above the entry, and only the files from the entry up to the
//!   nearest such directory (ripgrep's `require_git` and `saw_git`). The
//!   directories above the walk's start count too (ripgrep reads its
//!   parents' ignore files): [`ancestors`] reads them. The nearest
//!   repository root's `.git/info/exclude` counts after all of that
//!   stack's `.gitignore` files (ripgrep's `git_exclude`, weaker than any
//!   `.gitignore`; an outer repository's is not read, a `.git` file of a
//!   worktree gives none).
//!
//! Not read (ripgrep does): the global `core.excludesFile` (the reference
//! runs with an empty `HOME`).
//!
//! **Bounds.** An ignore file over [`MAX_IGNORE`] bytes is not read, nor
//! one whose rules would take the rules held at once for the walk's
//! current path (the start's parents and every directory from the start
//! down to the one being read) over [`MAX_HELD`] bytes as
//! [`Rules::held`] counts them (about the files' size plus 16 bytes a
//! rule). Never silently: the walk names the first such file and counts
//! them ([`Skip`]); the protocol ops refuse (`read_failed`, naming it), the
//! toolset's grep says it under its output.

use std::os::fd::{AsFd, BorrowedFd};
use std::path::Path;

use rustix::fs::{self as rfs, FileType, Mode, OFlags};

use super::gitignore::Rules;

/// An ignore file larger than this is not read (and said: [`Skip`]).
pub const MAX_IGNORE: u64 = 1 << 20;
/// The rules held at once for a walk's current path, at most
/// ([`Rules::held`] bytes): past it an ignore file is not read (and said).
pub const MAX_HELD: usize = 8 << 20;

/// The first ignore file a walk did not read, and how many it did not.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skip {
    /// Its path: relative to the walk's start below it, absolute above.
    pub path: Vec<u8>,
    /// Its size in bytes.
    pub size: u64,
    /// Ignore files not read in all.
    pub count: u64,
}

impl Skip {
    /// Notes one more file not read (the first is the one named).
    pub fn note(skip: &mut Option<Skip>, path: Vec<u8>, size: u64) {
        match skip {
            Some(s) => s.count += 1,
            None => {
                *skip = Some(Skip {
                    path,
                    size,
                    count: 1,
                })
            }
        }
    }

    /// Why it was not read, after its path.
    pub fn why(&self) -> String {
        let why = if self.size > MAX_IGNORE {
            format!(
                "is {} bytes, over the {MAX_IGNORE} an ignore file may hold",
                self.size
            )
        } else {
            format!(
                "({} bytes) would take the ignore rules held for one path over {MAX_HELD} bytes",
                self.size
            )
        };
        let more = match self.count {
            1 => String::new(),
            n => format!(" ({} ignore files not read in all)", n),
        };
        why + &more
    }
}

/// Which ignore-file names a directory holds (seen while reading it).
#[derive(Clone, Copy, Debug, Default)]
pub struct Seen {
    /// `.gitignore`.
    pub gitignore: bool,
    /// `.ignore`.
    pub ignore: bool,
    /// `.rgignore`.
    pub rgignore: bool,
    /// `.git` (a repository's root).
    pub git: bool,
}

impl Seen {
    /// Notes `name` if it is one of the names above.
    pub fn note(&mut self, name: &[u8]) {
        match name {
            b".gitignore" => self.gitignore = true,
            b".ignore" => self.ignore = true,
            b".rgignore" => self.rgignore = true,
            b".git" => self.git = true,
            _ => {}
        }
    }
}

/// The rules of one directory.
#[derive(Debug, Default)]
pub struct Ignores {
    rg: Option<Rules>,
    ignore: Option<Rules>,
    git: Option<Rules>,
    /// `.git/info/exclude`, read only in rg mode where `.git` is.
    exclude: Option<Rules>,
    has_git: bool,
}

impl Ignores {
    /// Reads the files `seen` in `dir`: `.gitignore` only, or with `rg`
    /// all three and the `.git` mark, holding at most `room` bytes of
    /// rules. `None` when nothing applies. A file not read (over
    /// [`MAX_IGNORE`], or past `room`) is pushed on `skipped` with its size.
    pub fn read(
        dir: BorrowedFd<'_>,
        seen: Seen,
        rg: bool,
        mut room: usize,
        skipped: &mut Vec<(&'static str, u64)>,
    ) -> Option<Ignores> {
        let mut get = |yes: bool, name: &'static std::ffi::CStr| {
            let shown = name.to_str().unwrap_or_default();
            match yes.then(|| read_rules(dir, name))? {
                Ok(r) if r.held() <= room => {
                    room -= r.held();
                    Some(r.rules)
                }
                Ok(r) => {
                    skipped.push((shown, r.size));
                    None
                }
                Err(Some(size)) => {
                    skipped.push((shown, size));
                    None
                }
                Err(None) => None,
            }
        };
        let ig = Ignores {
            git: get(seen.gitignore, c".gitignore"),
            rg: get(rg && seen.rgignore, c".rgignore"),
            ignore: get(rg && seen.ignore, c".ignore"),
            exclude: get(rg && seen.git, c".git/info/exclude"),
            has_git: rg && seen.git,
        };
        let any = ig.git.is_some() || ig.rg.is_some() || ig.ignore.is_some() || ig.has_git;
        any.then_some(ig)
    }

    /// The bytes its rules hold ([`Rules::held`]).
    pub fn held(&self) -> usize {
        let all = [&self.rg, &self.ignore, &self.git, &self.exclude];
        all.iter()
            .filter_map(|r| r.as_ref())
            .map(|r| r.held())
            .sum()
    }

    /// `.gitignore` rules alone (the walk's `gitignore` flavour, read from
    /// above the start: [`super::ignore_up`]).
    pub(super) fn git_only(r: Rules) -> Ignores {
        Ignores {
            git: Some(r),
            ..Ignores::default()
        }
    }
}

/// The decision for an entry of a stack of directories, outermost first,
/// each with the entry's path relative to it: `Some(true)` ignored,
/// `Some(false)` whitelisted (a `!` rule; in rg mode this also shows a
/// hidden name), `None` no rule matched.
pub fn decide(levels: &[(&Ignores, &[u8])], is_dir: bool, rg: bool) -> Option<bool> {
    let first = |pick: fn(&Ignores) -> Option<&Rules>| {
        levels
            .iter()
            .rev()
            .find_map(|(ig, rel)| pick(ig)?.decide(rel, is_dir))
    };
    if !rg {
        return first(|i| i.git.as_ref());
    }
    if let Some(d) = first(|i| i.rg.as_ref()).or_else(|| first(|i| i.ignore.as_ref())) {
        return Some(d);
    }
    // Only up to (and with) the nearest repository root.
    let root = levels.iter().rposition(|(ig, _)| ig.has_git)?;
    let (top, rel) = levels[root];
    levels[root..]
        .iter()
        .rev()
        .find_map(|(ig, rel)| ig.git.as_ref()?.decide(rel, is_dir))
        .or_else(|| top.exclude.as_ref()?.decide(rel, is_dir))
}

/// The ignore files of the directories above `start` (an absolute, canonical
/// directory), outermost first, each with the path from it down to `start`
/// (ending in `/`): what ripgrep reads of its parents, within
/// [`MAX_HELD`]; the files not read are noted in `skip`, by absolute path.
pub fn ancestors(start: &Path, skip: &mut Option<Skip>) -> Vec<(Ignores, Vec<u8>)> {
    use std::os::unix::ffi::OsStrExt;
    let mut out = Vec::new();
    let mut dir = start.parent();
    let mut held = 0;
    while let Some(d) = dir {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        if let Ok(fd) = rfs::open(d, flags, Mode::empty()) {
            let mut seen = Seen::default();
            for n in [".gitignore", ".ignore", ".rgignore", ".git"] {
                if rfs::statat(&fd, n, rfs::AtFlags::SYMLINK_NOFOLLOW).is_ok() {
                    seen.note(n.as_bytes());
                }
            }
            let mut skipped = Vec::new();
            let ig = Ignores::read(fd.as_fd(), seen, true, MAX_HELD - held, &mut skipped);
            for (name, size) in skipped {
                Skip::note(skip, d.join(name).as_os_str().as_bytes().to_vec(), size);
            }
            if let Some(ig) = ig {
                held += ig.held();
                let below = start.strip_prefix(d).unwrap_or(start);
                let mut rel = below.as_os_str().as_bytes().to_vec();
                rel.push(b'/');
                out.push((ig, rel));
            }
        }
        dir = d.parent();
    }
    out.reverse();
    out
}

/// The file `name` in `dir`, if it is a readable regular file (its last
/// component not followed if a symlink, never blocking on a FIFO).
fn read_rules(dir: BorrowedFd<'_>, name: &std::ffi::CStr) -> Result<Sized, Option<u64>> {
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    rules_of(rfs::openat(dir, name, flags, Mode::empty()).map_err(|_| None)?)
}

/// Rules read, with the size of their file.
pub(super) struct Sized {
    pub rules: Rules,
    pub size: u64,
}

impl Sized {
    fn held(&self) -> usize {
        self.rules.held()
    }
}

/// The rules of the open file `fd`, if it is a regular file holding some:
/// `Err(Some(size))` when it is larger than [`MAX_IGNORE`] (not read),
/// `Err(None)` when it is not a regular file, holds no rule or cannot be
/// read (as if absent, as git and ripgrep take it).
pub(super) fn rules_of(fd: rustix::fd::OwnedFd) -> Result<Sized, Option<u64>> {
    use std::io::Read;
    let st = rfs::fstat(&fd).map_err(|_| None)?;
    if !FileType::from_raw_mode(st.st_mode).is_file() {
        return Err(None);
    }
    let size = st.st_size as u64;
    if size > MAX_IGNORE {
        return Err(Some(size));
    }
    let mut text = Vec::new();
    // At most one byte past the bound: a file grown since fstat is not read.
    let read = std::fs::File::from(fd)
        .take(MAX_IGNORE + 1)
        .read_to_end(&mut text);
    read.map_err(|_| None)?;
    if text.len() as u64 > MAX_IGNORE {
        return Err(Some(text.len() as u64));
    }
    let rules = Rules::parse(&text);
    match rules.is_empty() {
        true => Err(None),
        false => Ok(Sized { rules, size }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ig(git: &str, ignore: &str, rg: &str, has_git: bool) -> Ignores {
        let r = |t: &str| (!t.is_empty()).then(|| Rules::parse(t.as_bytes()));
        Ignores {
            git: r(git),
            ignore: r(ignore),
            rg: r(rg),
            exclude: None,
            has_git,
        }
    }

    #[test]
    fn the_nearest_repository_exclude_counts_after_every_gitignore() {
        let mut top = ig("", "", "", true);
        top.exclude = Some(Rules::parse(b"*.log\n"));
        let sub = ig("!a.log\n", "", "", false);
        let levels = [(&top, &b"sub/a.log"[..]), (&sub, &b"a.log"[..])];
        assert_eq!(decide(&levels, false, true), Some(false));
        let levels = [(&top, &b"sub/b.log"[..])];
        assert_eq!(decide(&levels, false, true), Some(true));
        // A nested repository hides the outer one's exclude.
        let inner = ig("", "", "", true);
        let levels = [(&top, &b"r/b.log"[..]), (&inner, &b"b.log"[..])];
        assert_eq!(decide(&levels, false, true), None);
        // Not in the gitignore flavour.
        assert_eq!(decide(&[(&top, &b"b.log"[..])], false, false), None);
    }

    #[test]
    fn rgignore_beats_ignore_beats_gitignore_at_any_depth() {
        let top = ig("", "", "!a.txt\n", true);
        let sub = ig("a.txt\n", "a.txt\n", "", false);
        let levels = [(&top, &b"sub/a.txt"[..]), (&sub, &b"a.txt"[..])];
        assert_eq!(decide(&levels, false, true), Some(false));
        // Within one kind the deepest file with a match decides.
        let top = ig("", "!a.txt\n", "", true);
        let levels = [(&top, &b"sub/a.txt"[..]), (&sub, &b"a.txt"[..])];
        assert_eq!(decide(&levels, false, true), Some(true));
        let sub = ig("a.txt\n", "", "", false);
        let levels = [(&top, &b"sub/a.txt"[..]), (&sub, &b"a.txt"[..])];
        assert_eq!(decide(&levels, false, true), Some(false));
        // The gitignore flavour reads only .gitignore, deepest first.
        assert_eq!(decide(&levels, false, false), Some(true));
    }

    #[test]
    fn gitignore_counts_only_up_to_the_repository_root() {
        let above = ig("*.txt\n", "", "", false);
        let repo = ig("", "", "", true);
        let levels = [(&above, &b"r/a.txt"[..]), (&repo, &b"a.txt"[..])];
        assert_eq!(decide(&levels, false, true), None);
        let no_repo = ig("*.txt\n", "", "", false);
        assert_eq!(decide(&[(&no_repo, &b"a.txt"[..])], false, true), None);
        let repo = ig("*.txt\n", "", "", true);
        assert_eq!(decide(&[(&repo, &b"a.txt"[..])], false, true), Some(true));
    }
}
