//! The toolset's read-side ops (protocol 4): `stat`, `list`, `read`,
//! `glob`, `grep`.
//!
//! Each is one JSON object with `"op"` at the top level, on `--stdin` or
//! as `--request-b64 B64`; the answer is the one `__RESULT__{json}` line
//! (exit 0, or a refusal's token and exit code as for edits). `--root`
//! confines every path as it confines edits (`outside_root`); the edit
//! flags (`--dry-run`, `--report`, `--diff`, `--hints`, `--fsync`, `--eol`,
//! `--expect-sha256`) are `invalid_argument` with these ops.
//!
//! # Requests
//!
//! Fields not listed for an op, unknown fields, wrong types, and numbers
//! that are negative, fractional or out of the stated range are
//! `invalid_argument` with a detail naming the field. Every op takes
//! `max_bytes` (below). A path is `"path"` (a string) or `"path_b64"` (the
//! base64 of its bytes, for names that are not UTF-8): [`name`].
//!
//! | op | fields (default) |
//! | --- | --- |
//! | `stat` | `paths` (1 to 256; each a string or `{"path_b64"}`), `offset` (0) |
//! | `list` | `path`, `depth` (1; 1 to 64), `hidden` (true), `vcs` (false), `gitignore` (false), `offset` (0), `limit` (1000; 1 to 100,000) |
//! | `read` | `path`, `start` (1), `limit` (none), `numbers` (false), `max_columns` (none), `offset` and `check` (both or neither: a page's `next`, `resume.rs`) |
//! | `read`, raw | `path`, `raw: true`, `offset` (0), `length` (as much as fits) |
//! | `glob` | `pattern`, `path` (`.`), `sort` (`"path"`; or `"mtime"`), `offset` (0), `limit` (1000; 1 to 100,000), `hidden` (true), `vcs` (false), `gitignore` (false) |
//! | `grep` | `pattern`, `regex` (false), `path` (`.`), `glob`, `ignore_case` (false), `output` (`"content"`; `"files"`, `"count"`), `context` (0; to 1000), `offset` (0), `limit` (1000; 1 to 100,000), `max_columns` (500), `hidden`, `vcs`, `gitignore` |
//!
//! `null` for an optional field is taken as absent (its default), as the
//! transaction ops take it.
//!
//! A transaction op alone at the top level (`{"op":"create",…}`) is a
//! transaction of one (`txn`), answered as `{"files":[OP]}` would be.
//!
//! # Answers
//!
//! - `stat` (`stat.rs`): `{"entries":[{"path","type","size","mtime_ns","mode"}],"truncated"}`
//!   in request order, from `lstat` (nothing is opened); a symlink adds
//!   `target` and `resolved`; a missing path is `{"path","type":"missing"}`;
//!   a path that cannot be looked at (outside `--root`, a name too long)
//!   is `{"path","error":TOKEN,"detail"}`, the other entries answered still.
//! - `list` (`list.rs`): `{"entries":[{"path","type","size","mtime_ns"}],"total","truncated"}`,
//!   sorted bytewise by path, plus `hidden_count` with `hidden:false`;
//!   exact at any size (no cap but the walk's bound).
//! - `read` (`read.rs`): `{"text","start","end","eof"}` plus `lines` and
//!   `sha256` when the read reached the end, and `bom` for a file with a
//!   byte-order mark (the find crate's `read/read_bom.rs`); raw: `{"b64","offset","size","eof"}`.
//! - `glob` (`find.rs`): `{"entries":[{"path","size","mtime_ns"}],"total","truncated"}`;
//!   the pattern: [`glob`] and [`pattern`]; the walk (shared with
//!   `grep`: no symlinks followed, loops, VCS directories, `.gitignore`,
//!   pseudo file systems, its bounds): `walk.rs` and [`gitignore`]
//!   (`ignores.rs` adds ripgrep's filters for `--toolset`'s grep).
//! - `grep` (`grep_op.rs`, the search in [`grep`], the line in `grep_answer.rs`): `{"matches":[{"path","line","text"}]}`
//!   (`content`), or `{"files":[{"path","count"}]}` (`files` and `count`),
//!   each with
//!   `"files_searched"`, `"skipped_binary"` and `"truncated"`.
//!
//! `list`, `glob` and `grep` add `"unreadable":N` (absent when 0): the
//! directories the walk could not read (not entered) and, for `grep`, the
//! files it could not open or read to their end, so what they hold is
//! never silently missing from the answer. A low descriptor limit is not
//! a reason: the walk closes and reopens its levels' descriptors to fit
//! any limit of six or more (stdin, stdout, stderr and three:
//! `walk_fd.rs`; seven with `--root`, whose descriptor the op holds);
//! below that, what it could not open counts here. And
//! `"pseudo_not_entered":N`
//! (absent when 0): the pseudo file systems (proc, sysfs, devtmpfs, …) the
//! walk did not enter, the start's own included, so `grep` or `glob` of
//! `/proc` answers no matches *and* says it did not look.
//!
//! With `gitignore:true` an ignore file is never skipped silently: one
//! over 1 MiB, or one whose rules would take those held at once for the
//! walk's path over 8 MiB (`ignores.rs`), makes the op answer
//! `read_failed` naming it (ask again without `gitignore`, or below it).
//!
//! Types: `file`, `dir`, `symlink`, `other` (FIFO, socket, device),
//! `missing`. `mtime_ns` is nanoseconds since the epoch, written exactly:
//! today's values pass 2^53, so a JavaScript host's `JSON.parse` rounds
//! them to about 256 ns (compare them as text, or parse with BigInt, when
//! that matters); `mode` the 12 permission bits in octal (`"0644"`).
//!
//! Paths in `list`, `glob` and `grep` answers follow one rule: the op's
//! `path` as given, then `/` (unless it ends in one), then the path below
//! it; `glob` and `grep` without `path` answer the path below the working
//! directory alone.
//!
//! # Bounds
//!
//! No result line exceeds `max_bytes` (default 262,144; 1,024 to 8 MiB),
//! measured on the line as written, `__RESULT__` and `\n` included
//! ([`answer`]). An answer that would is cut after a whole entry or line:
//! `"truncated":true` and `"next"`, the request fields that continue it
//! (`offset` for `stat`, `list`, `glob` and `grep`, `start` with the
//! byte hint `offset` and its `check` for a text read, `offset` for a raw
//! one); pages followed through `next` join to
//! the unpaged answer (`grep_answer.rs`: grep's context lines go with
//! their match). An entry (a text read's first line, grep's match with its
//! context) too long to fit even alone is `invalid_argument` naming the
//! size it needs.
//! `truncated` speaks of pages only: a walk (`list`, `glob`, `grep`)
//! stopped by its own bound (2,000,000 directory entries, 64 MiB of
//! pending names, 256 levels: `walk.rs`) adds `"walk_limit":true`, with `total` and the counts of
//! what it walked; no page reaches the rest.
//!
//! Memory (peak RSS of the static binary, measured in
//! `scripts/bench/README.md`): about 1 to 2 MiB for the binary and its
//! buffers (64 KiB to 256 KiB read chunks); a walk's pending names, every
//! name of each directory on its path (kept for the bytewise sort: a
//! name's length and 8 to 12 bytes), are a few KiB in most trees but
//! 53.5 MiB of peak RSS for one directory of 200,000 names of 246 bytes,
//! and at most 64 MiB (`walk.rs`; past it the walk stops: `walk_limit`;
//! 68.7 MiB for 300,000 such names); plus the
//! answer, held once: the result line (at most `max_bytes`) is
//! what each op writes into as it reads — a text read escapes its lines
//! straight into it ([`lines`]), a raw read encodes 64 KiB chunks into
//! it, `list` pushes each entry, `grep` renders each line as it finds it
//! (`grep_answer.rs`; the search stops once the entries found cannot all
//! fit the page: `grep_op.rs`) — and no copy of the page is kept beside
//! it. So about `max_bytes` + 2 MiB: 2.4 MiB at most measured at the
//! default `max_bytes`; at 8 MiB (static binary, KiB) a text read 9,200, a
//! raw read 9,150, a `content` grep 9,470, a list 10,170-10,320. `glob` holds besides its `offset` + `limit` matches
//! (to sort them) before its page (`find.rs`). `grep`'s read block doubles until a
//! line fits up to 1 MiB; a longer line is searched in windows of it
//! (`grep_long.rs`), and the `context` lines carried from block to block
//! are kept as their first `max_columns` × 4 + 4 bytes: a file that is one
//! 50 MB line, or 40 lines of 1.5 MiB with `context` 30, costs about the
//! 1 MiB block (`ignore_case`: plus one 64 KiB lowered chunk), where
//! holding whole lines would take 68 and 66 MiB (the bound: `grep_op.md`).
//! The exception: a regex without a required literal over a line longer
//! than 1 MiB holds the line, and so does one whose required literal the
//! line holds (to run the regex on it), beside the answer (a 4.4 MB line
//! at `max_bytes` 8 MiB: 17.8 MB). A text read escapes a line before it
//! knows whether the line fits, so a page cut or refused at `max_bytes`
//! touches up to `max_bytes` of the result line, whatever it keeps. A
//! grep with a `max_columns` over about `max_bytes` / 4 and lines over
//! 1 MiB holds up to about 4 × `max_bytes` (`grep_op.md`).
//!
//! # Tokens
//!
//! - `file_not_found`: a missing path, a `list` of something that is not a
//!   directory, a `read` of something that is not a regular file (a FIFO
//!   or device is never opened); the detail says which.
//! - `not_text` (exit 1, new in protocol 4): a text `read` met a NUL byte
//!   or invalid UTF-8 in the part of the file it read (from byte 0, or
//!   from `next`'s `offset`; the last page checks the whole file); the
//!   detail names the byte offset. Ask again with `"raw":true`.
//! - `outside_root`, `read_failed` (an unreadable file or directory, the
//!   `path` of `list`, `read`, `glob` and `grep` alike),
//!   `invalid_argument`, as for edits.
//!
//! # Why written here, not taken from ripgrep's crates
//!
//! The glob engine, the ignore rules' matching and the search are the
//! find crate's (`crates/find`, re-exported here as [`pattern`], [`glob`],
//! [`gitignore`], [`grep`] and, with the reader over the op's file,
//! [`bom`]); its crate doc gives the measured reasons (size, memory) and
//! the promises ripgrep's path-based walk cannot keep, which the walk
//! here (`walk.rs`, `walk_fd.rs`, `pseudo.rs`) keeps.
//!
//! # Adding an op
//!
//! Its fields in the wire crate's `tools/parse.rs` (`Raw`), its allowed
//! fields and checks in [`parse()`], a variant of [`Op`] (both the wire
//! crate's, `as_edit_wire::tools`), its arm in [`run`], and its own file.

use std::os::fd::OwnedFd;
use std::path::PathBuf;

use as_edit_find::read::line_and_code;

use crate::protocol::Failure;

pub mod find;
mod find_answer;
mod grep_answer;
pub mod grep_long;
pub mod grep_op;
mod ignore_up;
pub mod ignores;
mod list;
mod place;
mod pseudo;
mod read;
mod stat;
pub mod walk;
mod walk_fd;

// The pure find layer (crates/find), under the paths it always had here.
pub use as_edit_find::{gitignore, glob, grep, pattern};

/// Files that start with a byte-order mark, read as ripgrep reads them:
/// the decoder and the reader are the find crate's
/// ([`as_edit_find::bom`]); here [`Source`](bom::Source) is that reader
/// over the op's open file.
pub mod bom {
    pub use as_edit_find::bom::{utf16_len, Bom, Utf16, CHUNK};

    /// A file's bytes as rg searches them ([`as_edit_find::bom::Source`]),
    /// the file opened by the op (`grep_op.rs`, the toolset's `grep`).
    pub type Source = as_edit_find::bom::Source<std::fs::File>;
}

/// The read pager (the find crate's), under the path it always had here.
pub use as_edit_find::read::lines;
/// Answers a `read` from bytes in memory (the find crate's).
pub use as_edit_find::read::on_bytes as run_on_bytes;

// The requests, their parser and the answer writer (crates/wire), under
// the paths they always had here.
pub(crate) use as_edit_wire::tools::OpName;
pub use as_edit_wire::tools::{answer, name};
pub use as_edit_wire::tools::{
    parse, probe, List, Op, Raw64, Read, Request, MAX_DEPTH, MAX_LIST_LIMIT, MAX_NUMBER,
    MAX_STAT_PATHS,
};

pub(crate) use as_edit_wire::tools::invalid;

/// `--root`, opened once for the request.
pub(crate) type Root = (PathBuf, OwnedFd);

/// Answers a read-side op: its result line and exit code.
#[cfg_attr(as_edit_small, optimize(size))]
pub fn run(req: &Request) -> (String, i32) {
    line_and_code(answer(req))
}

/// The op's answer line, or its refusal. A function, not a closure in
/// [`run`]: a closure does not take its parent's `optimize(size)`, and
/// every op's code is inlined here.
#[cfg_attr(as_edit_small, optimize(size))]
fn answer(req: &Request) -> Result<String, Failure> {
    let root = match &req.root {
        Some(r) => Some(crate::fs::resolve::open_root(r).map_err(Failure::from)?),
        None => None,
    };
    let root = root.as_ref();
    match &req.op {
        Op::Stat { paths, offset } => stat::run(paths, *offset, root, req.max_bytes),
        Op::List(l) => list::run(l, root, req.max_bytes),
        Op::Read(r) => read::run(r, root, req.max_bytes),
        Op::Raw(r) => read::raw(r, root, req.max_bytes),
        Op::Glob(g) => find_answer::glob(g, req.root.as_deref(), req.max_bytes),
        Op::Grep(g) => grep_answer::grep(g, req.root.as_deref(), req.max_bytes),
    }
}
