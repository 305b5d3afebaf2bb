//! The `grep` tool: what the reference prints when it runs Debian 12's
//! ripgrep 13 as `rg --no-config -n --no-heading -e PATTERN -- ROOT`
//! (module docs of [`super`] list the texts; this file says how they are
//! made).
//!
//! - ROOT a directory: [`crate::tools::walk`] with `rg` set (ripgrep's
//!   default filters, [`crate::tools::ignores`]; the parents' ignore files
//!   read first), each regular file searched in 64 KiB blocks of whole
//!   lines ([`as_edit_find::block`], growing to the longest line as
//!   rg's buffer does) by [`crate::tools::grep::Search`], read through
//!   [`crate::tools::bom::Source`] (a BOM as rg reads it: a UTF-8 one
//!   dropped, UTF-16 transcoded). Files come in bytewise path
//!   order (rg's come in its threads' order, which no one can repeat). A
//!   file with a NUL byte anywhere is skipped whole, its matches before
//!   the NUL too (rg skips it when the NUL is in its first read, at least
//!   64 KiB; past that rg prints the earlier blocks' lines and a `WARNING:
//!   stopped searching binary file after match` line, which this does
//!   not).
//! - ROOT a regular file: its lines as `N:LINE`; when its first 64 KiB
//!   hold a NUL (rg maps a file it is named and checks that much) and any
//!   line matches, the one line `binary file matches (found "\0" byte
//!   around offset N)`.
//! - Output past [`OUTPUT_LIMIT`] characters (after decoding, invalid
//!   UTF-8 one U+FFFD per maximal invalid sequence as Python's `replace`)
//!   is cut there with the reference's notice; the walk stops once that
//!   much is certain. Memory: one block, the output up to the cut.
//! - The regex is rg's: the `regex` crate's Unicode dialect, matching
//!   bytes ([`crate::tools::grep`]); a pattern rg 13 refuses is printed
//!   as rg prints it ([`super::regex_error`]).

use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use as_edit_find::block::Blocks;
use rustix::fs::{self as rfs, Mode, OFlags};

use super::path::resolve;
use crate::tools::bom::Source;
use crate::tools::grep::Search;
use crate::tools::{ignores, walk};

/// The reference's cut, in characters.
pub const OUTPUT_LIMIT: usize = 100 * 1024;
/// The block read at once (and the part of a named file checked for NUL).
const BLOCK: usize = 64 * 1024;

/// rg's refusal of a pattern that could match a line terminator.
const NEWLINE: &str = "the literal '\"\\n\"' is not allowed in a regex\n\nConsider enabling \
multiline mode with the --multiline flag (or -U for short).\nWhen multiline mode is enabled, \
new line characters can be matched.\n";

/// The tool's text, or the reference's refusal.
#[cfg_attr(as_edit_small, optimize(size))]
pub fn grep(cwd: &Path, pattern: &str, path: Option<&str>) -> Result<String, String> {
    let root = match path {
        Some(p) if !p.is_empty() => {
            resolve(&super::root(cwd), p).map_err(|r| format!("grep: {r}"))?
        }
        _ => super::root(cwd),
    };
    if pattern.contains('\0') {
        // subprocess's check of the argv, not a ToolError.
        return Err("ValueError('embedded null byte')".into());
    }
    let re = crate::tools::grep::compile(pattern, false);
    if let Some(text) = super::regex_error::refusal(pattern, re.as_ref().err()) {
        return Err(format!("grep: rg failed: {text}"));
    }
    if matches_newline(pattern) {
        return Err(format!("grep: rg failed: {NEWLINE}"));
    }
    let search = Search::with(pattern, re.ok(), false);
    let shown = root.as_os_str().as_bytes();
    let meta = match std::fs::metadata(&root) {
        Ok(m) => m,
        Err(e) => return Err(format!("grep: rg failed: {}", rg_error(shown, &e))),
    };
    let mut out = Out::default();
    let mut skip = None;
    if meta.is_dir() {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let dir = rfs::open(&root, flags, Mode::empty())
            .map_err(|e| format!("grep: rg failed: {}", rg_error(shown, &e.into())))?;
        let opts = walk::Options {
            rg: true,
            ..walk::Options::default()
        };
        let mut prefix = shown.to_vec();
        prefix.push(b'/');
        let mut block = Vec::new();
        let outer = ignores::ancestors(&root, &mut skip);
        let o = walk::walk_with(dir, opts, outer, |mut f| {
            // Listed as a regular file, but a device or a FIFO mounted
            // or swapped in since is skipped, never opened nor waited for.
            use crate::fs::regular::Unopened;
            let mut name = prefix.clone();
            name.extend_from_slice(f.rel);
            match f.open_regular() {
                Ok((fd, _)) => out.walked(&search, fd, &name, &mut block),
                Err(Unopened::NotRegular(_)) => {}
                Err(Unopened::Stat(e) | Unopened::Open(e, _) | Unopened::Fstat(e)) => {
                    out.errors.push(rg_error(&name, &e.into()))
                }
            }
            !out.full()
        });
        if let Some(s) = o.ignore_skip {
            let n = s.count;
            ignores::Skip::note(&mut skip, [&prefix[..], &s.path].concat(), s.size);
            skip.iter_mut().for_each(|k| k.count += n - 1);
        }
        if let Some(rel) = o.short {
            // Not even the walk's least descriptors: said as rg says it.
            let mut name = shown.to_vec();
            if !rel.is_empty() {
                name.push(b'/');
                name.extend_from_slice(&rel);
            }
            out.errors
                .push(rg_error(&name, &rustix::io::Errno::MFILE.into()));
        }
    } else {
        // A FIFO would block rg (and the reference) forever: never waited
        // for, not even one swapped in after the check (`fs::regular`).
        use crate::fs::regular::{open_regular, Unopened};
        let name = std::ffi::CString::new(shown).map_err(|_| "grep: embedded null byte")?;
        // `root` is resolved: a symlink swapped in since is not followed.
        match open_regular(rfs::CWD, &name, false) {
            Ok((fd, _)) => out.named(&search, fd, shown),
            Err(Unopened::NotRegular(_)) => {
                return Err(format!("grep: {}: not a regular file", path.unwrap_or("")))
            }
            Err(Unopened::Stat(e) | Unopened::Open(e, _) | Unopened::Fstat(e)) => {
                out.errors.push(rg_error(shown, &e.into()))
            }
        }
    }
    if !out.errors.is_empty() {
        // rg exits 2 after any error, whatever it printed.
        return Err(format!("grep: rg failed: {}", out.errors.concat()));
    }
    let text = if out.text.is_empty() {
        "no matches".to_string()
    } else {
        let text = String::from_utf8_lossy(&out.text);
        match text.char_indices().nth(OUTPUT_LIMIT) {
            Some((at, _)) => format!(
                "{}\n[output truncated at {OUTPUT_LIMIT} bytes]",
                &text[..at]
            ),
            None => text.into_owned(),
        }
    };
    // An ignore file left unread (its bounds: tools/ignores.rs), said.
    Ok(match skip {
        None => text,
        Some(s) => {
            let p = String::from_utf8_lossy(&s.path);
            let sep = if text.ends_with('\n') { "" } else { "\n" };
            format!(
                "{text}{sep}[ignore file {p} {}: not read, its rules not applied]",
                s.why()
            )
        }
    })
}

/// Whether the pattern holds a literal `\n`, which rg refuses: a newline,
/// or its `\n`, `\x0A`, `\x{A}` escape, outside a class or as a class's
/// only member (`[\n]`). A class with other members is not refused: rg
/// takes the line terminator out of it (`[^\n]`, `[a\n]`, checked with rg
/// 13). The pattern has already been parsed.
fn matches_newline(p: &str) -> bool {
    let b = p.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\n' => return true,
            b'\\' => {
                if newline_escape(&b[i..]).is_some() {
                    return true;
                }
                i += 1;
            }
            b'[' => {
                let (end, only_newlines) = class(&b[i..]);
                if only_newlines {
                    return true;
                }
                i += end;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    false
}

/// The length of a `\n`, `\x0A`, `\x{A}`, `\x{0A}` escape at the start
/// of `b`, if one is there.
fn newline_escape(b: &[u8]) -> Option<usize> {
    let rest = b.strip_prefix(b"\\")?;
    if rest.first() == Some(&b'n') {
        return Some(2);
    }
    let hex = rest.strip_prefix(b"x")?;
    let lower = hex[..hex.len().min(5)].to_ascii_lowercase();
    [&b"0a"[..], b"{a}", b"{0a}"]
        .iter()
        .find(|h| lower.starts_with(h))
        .map(|h| 2 + h.len())
}

/// The class starting at `b[0] == b'['`: its length, and whether it is a
/// plain class whose members are all newlines. A nested class or an
/// unclosed one (refused already) ends the reading.
fn class(b: &[u8]) -> (usize, bool) {
    let mut i = 1;
    let negated = b.get(i) == Some(&b'^');
    if negated {
        i += 1;
    }
    // A `]` first is a member.
    let first = i;
    let mut only = true;
    while i < b.len() {
        match b[i] {
            b']' if i > first => return (i + 1, only && !negated && i > first),
            b'\n' => i += 1,
            b'\\' => match newline_escape(&b[i..]) {
                Some(n) => i += n,
                None => {
                    only = false;
                    i += 2;
                }
            },
            b'[' => return (i, false),
            _ => {
                only = false;
                i += 1;
            }
        }
    }
    (b.len(), false)
}

/// rg's text for an I/O error on a path: `P: Message (os error N)`.
fn rg_error(path: &[u8], e: &std::io::Error) -> String {
    format!("{}: {e}\n", String::from_utf8_lossy(path))
}

/// The output so far (bytes, as rg writes them) and the errors.
#[derive(Default)]
struct Out {
    text: Vec<u8>,
    errors: Vec<String>,
}

impl Out {
    /// More than [`OUTPUT_LIMIT`] characters for certain (a character is
    /// at most 4 bytes, an invalid byte one U+FFFD).
    fn full(&self) -> bool {
        self.text.len() > 4 * OUTPUT_LIMIT + 4
    }

    /// A file met in the walk: its lines with `name:` before them, all or
    /// none (a NUL anywhere drops them).
    fn walked(&mut self, s: &Search, fd: OwnedFd, name: &[u8], block: &mut Vec<u8>) {
        let mark = self.text.len();
        let mut f = Source::new(std::fs::File::from(fd));
        match each_block(&mut f, block, |buf, first_line| {
            if memchr::memchr(0, buf).is_some() {
                return Err(());
            }
            lines(s, buf, first_line, |no, line| {
                if self.text.len() - mark <= 4 * OUTPUT_LIMIT + 4 {
                    self.text.extend_from_slice(name);
                    self.text.push(b':');
                    push_line(&mut self.text, no, line);
                }
            });
            Ok(())
        }) {
            Ok(Ok(())) => {}
            Ok(Err(())) => self.text.truncate(mark),
            Err(e) => {
                self.text.truncate(mark);
                self.errors.push(rg_error(name, &e));
            }
        }
    }

    /// The file rg was named: `N:LINE` lines, or the binary notice.
    fn named(&mut self, s: &Search, fd: OwnedFd, name: &[u8]) {
        let mut f = Source::new(std::fs::File::from(fd));
        let (mut nul, mut offset, mut hit) = (None, 0usize, false);
        let mut block = Vec::new();
        let r = each_block(&mut f, &mut block, |buf, first_line| {
            if offset < BLOCK && nul.is_none() {
                let head = &buf[..buf.len().min(BLOCK - offset)];
                nul = memchr::memchr(0, head).map(|i| offset + i);
            }
            offset += buf.len();
            lines(s, buf, first_line, |no, line| {
                hit = true;
                if self.text.len() <= 4 * OUTPUT_LIMIT + 4 {
                    push_line(&mut self.text, no, line);
                }
            });
            match (hit, nul) {
                (true, Some(n)) => Err(n),
                _ => Ok(()),
            }
        });
        match r {
            Ok(Err(n)) => {
                self.text.clear();
                self.text.extend_from_slice(
                    format!("binary file matches (found \"\\0\" byte around offset {n})\n")
                        .as_bytes(),
                );
            }
            Ok(Ok(())) => {}
            Err(e) => self.errors.push(rg_error(name, &e)),
        }
    }
}

fn push_line(text: &mut Vec<u8>, no: u64, line: &[u8]) {
    text.extend_from_slice(no.to_string().as_bytes());
    text.push(b':');
    text.extend_from_slice(line);
    text.push(b'\n');
}

/// Calls `hit(line number, line)` for each matching line of `buf` (whole
/// lines, the first numbered `first`).
fn lines(s: &Search, buf: &[u8], first: u64, mut hit: impl FnMut(u64, &[u8])) {
    let (mut no, mut counted) = (first, 0);
    s.lines(buf, &mut Vec::new(), |a, b| {
        no += memchr::memchr_iter(b'\n', &buf[counted..a]).count() as u64;
        counted = a;
        hit(no, &buf[a..b]);
        true
    });
}

/// Feeds `f` the file in blocks of whole lines (one 64 KiB read a
/// refill, a line longer than that growing the block without bound:
/// [`as_edit_find::block`]), each with the number of its first line;
/// stops at the first `Err` of `f`, which it returns inside `Ok`.
fn each_block<E>(
    file: &mut Source,
    buf: &mut Vec<u8>,
    mut f: impl FnMut(&[u8], u64) -> Result<(), E>,
) -> std::io::Result<Result<(), E>> {
    let mut blocks = Blocks::new(file, buf, BLOCK);
    while let Some(b) = blocks.next_block()? {
        if let Err(e) = f(b.bytes, b.first_line) {
            return Ok(Err(e));
        }
    }
    Ok(Ok(()))
}
