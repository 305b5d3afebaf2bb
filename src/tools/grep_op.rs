#![doc = include_str!("grep_op.md")]

use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::io::Errno;

use super::bom::Source;
use super::find::{open_start, shown, Start};
use super::glob::Glob;
use super::grep::Search;
pub use super::grep_long::BLOCK;
use super::grep_long::{self, columns, line_end, Owed, Tuning};
use super::walk;
use crate::protocol::{ErrorKind, Failure};
pub use as_edit_wire::tools::{GrepRequest, Grepped, Line, LineRef, Output};

/// A NUL byte in this many first bytes makes a file binary.
pub const BINARY_PREFIX: usize = 8192;

/// Runs `grep` for a page of `max_bytes`: the search stops, as `limit`
/// stops it, once the entries found cannot all fit it (more could only
/// be cut off the page).
pub fn grep(req: &GrepRequest, root: Option<&Path>, max_bytes: u64) -> Result<Grepped, Failure> {
    grep_tuned(req, root, max_bytes, Tuning::default()).map(|(g, _)| g)
}

/// [`grep`] with `content`'s lines given to `sink` as they are found,
/// in the answer's order, not kept as [`Line`]s.
pub fn grep_into(
    req: &GrepRequest,
    root: Option<&Path>,
    max_bytes: u64,
    sink: &mut dyn FnMut(&LineRef<'_>),
) -> Result<Grepped, Failure> {
    search(req, root, max_bytes, Tuning::default(), Some(sink)).map(|(g, _)| g)
}

/// [`grep`] with the buffer's sizes, answering the block's and the
/// lowered chunk's final sizes (for tests).
#[doc(hidden)]
pub fn grep_tuned(
    req: &GrepRequest,
    root: Option<&Path>,
    max_bytes: u64,
    tuning: Tuning,
) -> Result<(Grepped, usize), Failure> {
    search(req, root, max_bytes, tuning, None)
}

fn search(
    req: &GrepRequest,
    root: Option<&Path>,
    max_bytes: u64,
    tuning: Tuning,
    sink: Option<&mut dyn FnMut(&LineRef<'_>)>,
) -> Result<(Grepped, usize), Failure> {
    let bad = |e| Failure::new(ErrorKind::InvalidArgument, e);
    let search = Search::new(&req.pattern, req.regex, req.ignore_case).map_err(bad)?;
    let glob = req
        .glob
        .as_deref()
        .map(Glob::new)
        .transpose()
        .map_err(bad)?;
    let p = req.path.as_deref().map_or(PathBuf::from("."), |b| {
        PathBuf::from(std::ffi::OsStr::from_bytes(b))
    });
    let mut run = Run {
        req,
        search: &search,
        sink,
        out: Grepped::default(),
        seen: 0,
        held: 0,
        max_bytes,
        buf: Vec::new(),
        scratch: Vec::new(),
        tuning,
    };
    match open_start(&p, root, true)? {
        Start::File(fd) => {
            let path = req.path.clone().unwrap_or_default();
            run.file(fd, &path);
        }
        Start::Dir(dir) => {
            let base = req.path.as_deref();
            let o = walk::walk(dir, req.walk, |mut f| {
                if glob.as_ref().is_some_and(|g| !g.matches(f.rel)) {
                    return true;
                }
                // A regular file (`fs::regular`): a device or a FIFO
                // mounted or swapped in since it was listed is never
                // opened nor waited for.
                use crate::fs::regular::Unopened;
                let fd = match f.open_regular() {
                    Ok((fd, _)) => fd,
                    // Gone, or a symlink or not a file now: skipped.
                    Err(
                        Unopened::Stat(Errno::NOENT)
                        | Unopened::Open(Errno::NOENT | Errno::LOOP, _),
                    )
                    | Err(Unopened::NotRegular(_)) => return true,
                    Err(_) => {
                        // Not searched: said, so no match is silently lost.
                        run.out.unreadable += 1;
                        return true;
                    }
                };
                run.file(fd, &shown(base, f.rel))
            });
            super::find::refuse_skip(&o, base)?;
            run.out.truncated |= o.truncated;
            run.out.walk_cut = o.truncated;
            run.out.unreadable += o.unreadable;
            run.out.pseudo = o.pseudo;
        }
    }
    Ok((run.out, run.buf.len() + run.scratch.capacity()))
}

struct Run<'a, 's> {
    req: &'a GrepRequest,
    search: &'a Search,
    /// Where `content`'s lines go as found (`None`: kept in `out.lines`).
    sink: Option<&'s mut dyn FnMut(&LineRef<'_>)>,
    out: Grepped,
    /// Matches (content) or files (files, count) found so far, skipped included.
    seen: u64,
    /// Bytes the entries kept take at least on the answer's line (their
    /// path and text, unescaped, and the fields' names): past
    /// `max_bytes`, the page is full.
    held: u64,
    max_bytes: u64,
    buf: Vec<u8>,
    scratch: Vec<u8>,
    tuning: Tuning,
}

impl Run<'_, '_> {
    /// Whether the next match (or file) is shown, skipped (`offset`), or
    /// one past `limit` (`None`: the search stops, truncated).
    fn take(&mut self) -> Option<bool> {
        self.seen += 1;
        let full = self.held > self.max_bytes;
        if full || self.seen > self.req.offset.saturating_add(self.req.limit) {
            self.out.truncated = true;
            self.out.more = true;
            return None;
        }
        Some(self.seen > self.req.offset)
    }

    /// A line of the answer: given to the sink, or kept.
    fn line(&mut self, path: &[u8], no: u64, text: &[u8], context: bool, short: bool) {
        let (text, cut) = columns(text, self.req.max_columns);
        // A stub cut at `max_columns` shows what its line shows.
        let short = short && !cut;
        let shown = grep_long::shown(text.len(), short, self.max_bytes);
        // `{"path":"","line":N,"text":""}`: 28 bytes and the digits.
        self.held = self.held.saturating_add(shown + path.len() as u64 + 28);
        if let Some(sink) = &mut self.sink {
            let text = &text;
            return sink(&LineRef {
                path,
                line: no,
                text,
                cut,
                context,
                short,
            });
        }
        self.out.lines.push(Line {
            path: path.to_vec(),
            line: no,
            text,
            cut,
            context,
            short,
        });
    }

    /// Passes the after-context owed by the last match up to `upto` (a
    /// line start, or the searched part's end): each line shown if that
    /// match was, at most `after` of them.
    fn owed(&mut self, at: &mut Owed, (buf, short): (&[u8], &[usize]), path: &[u8], upto: usize) {
        while at.after > 0 && at.shown_to < upto {
            let e = line_end(buf, at.shown_to, upto);
            if at.show {
                let s = short.binary_search(&at.shown_to).is_ok();
                self.line(path, at.line, &buf[at.shown_to..e], true, s);
            }
            at.shown_to = (e + 1).min(upto);
            at.line += 1;
            at.after -= 1;
        }
    }

    /// Searches one open file; `false` stops the walk.
    fn file(&mut self, fd: OwnedFd, path: &[u8]) -> bool {
        let mut f = Source::new(std::fs::File::from(fd));
        // Reused across files, never cleared: bytes are only read past `len`.
        let mut buf = std::mem::take(&mut self.buf);
        if buf.len() < self.tuning.block {
            buf.resize(self.tuning.block, 0);
        }
        let go = self.file_blocks(&mut f, &mut buf, path);
        self.buf = buf;
        go
    }

    fn file_blocks(&mut self, f: &mut Source, buf: &mut Vec<u8>, path: &[u8]) -> bool {
        let ctx = self.req.context as usize;
        let content = self.req.output == Output::Content;
        let mut len = 0; // bytes in buf
        let mut from = 0; // first unsearched byte
        let mut eof = false;
        let mut first = true;
        // (position, its line number): line numbers are counted lazily.
        let mut anchor = (0usize, 1u64);
        let mut ctx_at = Owed {
            shown_to: 0,
            line: 1,
            after: 0,
            show: false,
        };
        let mut count = 0u64;
        // The match of the stub at `from` that stands for a long line.
        let mut forced = None;
        let (max_columns, max_bytes) = (self.req.max_columns, self.max_bytes);
        let keep = if content {
            grep_long::keep(max_columns, max_bytes)
        } else {
            0
        };
        // The stubs in `buf` shorter than their lines, by their starts.
        let mut short: Vec<usize> = Vec::new();
        loop {
            // Fill: to a block's end, or at least one whole line past `from`.
            if !eof {
                // A failed read: searched as far as read, said to be unreadable.
                let bad;
                (len, eof, bad) = grep_long::read_full(f, buf, len);
                self.out.unreadable += u64::from(bad);
            }
            if first {
                first = false;
                if memchr::memchr(0, &buf[..len.min(BINARY_PREFIX)]).is_some() {
                    self.out.skipped_binary += 1;
                    return true;
                }
                self.out.files_searched += 1;
            }
            let end = if eof {
                len
            } else {
                match memchr::memrchr(b'\n', &buf[from..len]) {
                    Some(i) => from + i + 1,
                    // A line longer than the block: searched in windows from
                    // the cap, the block grown only to what they need.
                    None => {
                        let t = self.tuning;
                        if let Some(n) =
                            grep_long::grown(self.search, t, buf.len(), (from, len), keep)
                        {
                            buf.resize(n, 0);
                            continue;
                        }
                        let s = (self.search, &mut self.scratch);
                        let l = grep_long::line(f, buf, (from, len), keep, s.0, s.1);
                        (len, eof, forced) = (l.len, l.eof, Some(l.matched));
                        if l.short {
                            short.push(from);
                        }
                        self.out.unreadable += u64::from(l.unreadable);
                        continue;
                    }
                }
            };
            let mut stop = false;
            let mut hits: Vec<(usize, usize)> = Vec::new();
            let search = self.search;
            let mut s0 = from;
            if let Some(m) = forced.take() {
                let e = line_end(buf, from, end);
                if m {
                    hits.push((from, e));
                }
                s0 = (e + 1).min(end);
            }
            search.lines(&buf[s0..end], &mut self.scratch, |a, b| {
                hits.push((s0 + a, s0 + b));
                true
            });
            for (ls, le) in hits {
                count += 1;
                if !content {
                    continue;
                }
                let no = anchor.1 + memchr::memchr_iter(b'\n', &buf[anchor.0..ls]).count() as u64;
                anchor = (ls, no);
                // The last match's after-context up to this one, shown or not (a page cut
                // by `limit` keeps it), counted before `take` weighs the page: blocks'
                // ends do not move the stop.
                self.owed(&mut ctx_at, (buf, &short), path, ls);
                let take = self.take();
                let Some(show) = take else {
                    stop = true;
                    break;
                };
                // Before-context: up to `ctx` lines, none shown already
                // (`shown_to` is a line start, so the walk back stops on one).
                let (mut b, mut k) = (ls, 0u64);
                while show && k < ctx as u64 && b > ctx_at.shown_to {
                    b = memchr::memrchr(b'\n', &buf[..b - 1]).map_or(0, |i| i + 1);
                    k += 1;
                }
                let mut no_b = no - k;
                while b < ls {
                    let e = line_end(buf, b, end);
                    let s = short.binary_search(&b).is_ok();
                    self.line(path, no_b, &buf[b..e], true, s);
                    b = e + 1;
                    no_b += 1;
                }
                if show {
                    let s = short.binary_search(&ls).is_ok();
                    self.line(path, no, &buf[ls..le], false, s);
                }
                // A match left out by `offset` still owns its after-context
                // (passed over unshown), so the next page's first match does
                // not show those lines again as its before-context.
                ctx_at = Owed {
                    shown_to: (le + 1).min(end),
                    line: no + 1,
                    after: ctx,
                    show,
                };
            }
            if stop {
                return false;
            }
            if content {
                self.owed(&mut ctx_at, (buf, &short), path, end);
            }
            if eof {
                break;
            }
            // Keep the last `ctx` lines before `end` for the next block's
            // before-context (as their stubs: `grep_long::carry`), and the
            // partial line after it. `files` and `count` show no context.
            let mut cut = end;
            for _ in 0..if content { ctx } else { 0 } {
                if cut == 0 {
                    break;
                }
                cut = memchr::memrchr(b'\n', &buf[..cut - 1]).map_or(0, |i| i + 1);
            }
            if anchor.0 <= cut {
                // Lines are numbered for `content` only.
                let lines = || memchr::memchr_iter(b'\n', &buf[anchor.0..cut]).count();
                anchor = (cut, anchor.1 + if content { lines() as u64 } else { 0 });
            }
            if ctx_at.shown_to < cut {
                ctx_at.shown_to = cut;
                ctx_at.line = anchor.1;
            }
            let marks = [anchor.0, ctx_at.shown_to, end];
            let sizes = grep_long::Sizes {
                keep,
                max_columns,
                max_bytes,
            };
            let ([a, s, e], n) = grep_long::carry(buf, (cut, end, len), sizes, marks, &mut short);
            (anchor.0, ctx_at.shown_to, from, len) = (a, s, e, n);
        }
        if count == 0 || content {
            return true;
        }
        match self.take() {
            None => false,
            Some(show) => {
                if show {
                    // `{"path":"","count":N}`: 20 bytes and the digits.
                    self.held += path.len() as u64 + 20;
                    self.out.files.push((path.to_vec(), count));
                }
                true
            }
        }
    }
}
