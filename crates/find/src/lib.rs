//! The pure find layer of as-edit: what a path or a line is matched
//! against, and nothing else. The helper binary (the `as-edit` crate)
//! walks the tree, opens the files and writes the answers of its `glob`
//! and `grep` ops and of `--toolset`'s glob and grep; this crate decides
//! which names match and which lines of the bytes it is handed match.
//!
//! - [`pattern`]: git's wildmatch (`*`, `?`, `[…]`, `**`), matched by
//!   bytes or by UTF-8 characters;
//! - [`glob`]: the ops' `glob` patterns, ripgrep's dialect (`{a,b}`
//!   alternation, a pattern without `/` matching the name at any depth);
//! - [`gitignore`]: the rules of one `.gitignore`, parsed into one byte
//!   buffer and matched by kind, and the decision of a stack of them;
//! - [`grep`]: the search of one block of whole lines, a literal or a
//!   regex (ripgrep's dialect), the regex run only on lines holding its
//!   required literal (a `memmem` prefilter); each matching line is handed
//!   to the caller's sink, a closure that may stop the search;
//! - [`block`]: a reader's bytes in blocks of whole lines, each numbered
//!   by its first line, growing to the longest line or cut at a cap (the
//!   toolset's `grep` and `read`; why the `grep` and `read` ops keep
//!   their own reading is said there);
//! - [`bom`]: byte-order marks and UTF-16, read as ripgrep reads them;
//! - [`read`]: the `read` op's answer from bytes read for it (the line
//!   pager, a page resumed at `next`'s offset, a file after its mark),
//!   the helper's from the file and the host library's from downloaded
//!   bytes alike.
//!
//! # What it may depend on
//!
//! `std`, `memchr` (the prefilter, the line ends), `regex` (with the
//! helper's features: no `perf`), `sha2` (a read's `sha256`) and the wire
//! crate (`as-edit-wire`: the read request and its result line, pure):
//! no system-call crate (`rustix`, `libc`,
//! `memmap2`), and `cargo tree -e normal -p as-edit-find` shows it. It
//! opens nothing: the walk, the opening of ignore files and of searched
//! files (descriptor-relative, `O_NOFOLLOW`) are the helper's, and what a
//! refusal of the searches becomes on the result line (tokens, exit
//! codes) is the helper's too, so their errors are plain text ([`pattern::PatternError`],
//! [`grep::Search::new`]'s `String`) the helper wraps. Its readers read only
//! what they are handed: [`bom::Source`] an already open file (generic over
//! `Read + Seek + FileExt`, so Unix only); [`block::Blocks`] any
//! `std::io::Read`; [`read`] a
//! `pread`-like function it is handed. Nothing here depends on the helper.
//!
//! # Why written here, not taken from ripgrep's crates
//!
//! The glob engine ([`pattern`]: git's wildmatch; [`glob`]), the ignore
//! rules ([`gitignore`]; the helper's `src/tools/ignores.rs` and
//! `ignore_up.rs` read the files), the walk (the helper's `walk.rs`,
//! `walk_fd.rs`) and the search around the regex ([`grep`], [`bom`]; the
//! helper's `grep_op.rs`, `grep_long.rs`; the regex itself is the `regex`
//! crate's) do what `globset`, `ignore` and `grep-searcher` do for
//! ripgrep, whose answers the toolset's are compared with. They are
//! written here, not taken from those crates (nor `globset` for the globs
//! alone, nor `regex` for the literal search), for their cost and for
//! promises a path-based walk cannot keep (the walk's are kept by the
//! helper, which owns the file system; this crate's part is what they
//! match and search):
//!
//! - **Size.** A small program that walks a tree, matches a glob and
//!   searches each file with `regex::bytes` (this crate's `regex`
//!   features), built as `scripts/build-static.sh` builds the binary
//!   (x86_64 musl, std from source, opt-level s, fat LTO, panic=abort,
//!   stripped): 489,664 bytes walking with `std::fs` and matching a
//!   suffix; 956,672 with `ignore` 0.4.35's walk and `globset` 0.4.22,
//!   +467,008 (456 KiB, where the shipped binary has 181,776 bytes left
//!   under its 1.5 MiB budget); 1,251,552 searching with `grep-searcher`
//!   0.1.17 and `grep-regex` 0.1.14 instead, +761,888; all three
//!   1,382,688, +893,024. Of the 467,008, about 323,584 is
//!   `regex-automata`'s `perf` engines (lazy DFA, one-pass, literal
//!   prefilters: `regex` with `perf` alone is 813,248), which those crates
//!   turn on for every user of `regex` and this workspace leaves off
//!   (the helper's Cargo.toml); `grep-regex` turns on every Unicode table too, and
//!   `grep-searcher` depends on `encoding_rs` and `memmap2`
//!   (`scripts/bench/README.md`, "Ripgrep's crates").
//! - **Memory.** `ignore` keeps each rule as strings (its text, its glob,
//!   its file's path) and matches those that are not a literal, prefix,
//!   suffix or extension through one compiled regex set (`globset`): rg
//!   13 holds 197,936 KiB for a 1 MiB `.gitignore` (about 65,000 rules)
//!   over 3,000 files, where this walk holds 6,500 KiB (a file's rules
//!   one byte buffer and a 12-byte record each, matched by kind:
//!   `scripts/bench/README.md`, "Large ignore files").
//! - **No symlink followed, even one swapped in.** `ignore` (through
//!   `walkdir`, and its parallel walk alike) opens each directory by its
//!   whole path (`fs::read_dir`) and each ignore file with `File::open`,
//!   every component resolved again: a directory swapped for a symlink
//!   after it was listed is followed out of the tree. This walk opens
//!   every directory, and the ignore files in it, with `openat(parent,
//!   name, O_NOFOLLOW)` from its parent's descriptor (the helper's
//!   `walk_fd.rs`), so a
//!   swap never leads out of the start or `--root`.
//! - **Pseudo file systems** (proc, sysfs, devtmpfs, …: the helper's
//!   `pseudo.rs`) are
//!   not entered, and the answer counts them (`pseudo_not_entered`);
//!   `ignore`'s one built-in choice is `same_file_system`, which stops at
//!   every mount.
//! - **Bytewise order**, so pages join (`offset`, `next`): `ignore`'s
//!   parallel walk has no order, and its `sort_by_file_name` (sequential
//!   walk only) sorts names, so `a/x` comes before `a-b`; here a
//!   directory's name sorts with a `/` appended, as whole paths sort.
//! - **Any descriptor limit.** The walk holds a descriptor per level;
//!   when an `openat` fails with EMFILE or ENFILE it closes upper levels'
//!   and reopens them by name, checked by device and inode (`walk_fd.rs`),
//!   down to six descriptors in all. `walkdir` keeps at most ten
//!   directories open by default, reading the rest of an older one into
//!   memory, and does not react to EMFILE: that directory is an error.
//! - **Long lines.** `grep-searcher`'s buffer grows to the longest line
//!   (with a heap limit, such a line is an error); here a line over 1 MiB
//!   is searched in windows (the helper's `grep_long.rs`, with
//!   [`grep::Search::literal_in`]) and context lines are kept short, so a
//!   50 MB line costs about the 1 MiB block (but for the regex cases
//!   under Bounds in the helper's `tools` module doc).
//!
//! # Examples
//!
//! A glob, as the `glob` and `grep` ops match it against a path relative
//! to their `path`: without `/` it matches the name at any depth; braces
//! expand:
//!
//! ```
//! use as_edit_find::glob::Glob;
//!
//! let g = Glob::new("*.{rs,toml}")?;
//! assert!(g.matches(b"Cargo.toml"));
//! assert!(g.matches(b"src/tools/glob.rs"));
//! assert!(!g.matches(b"README.md"));
//!
//! let anchored = Glob::new("src/*.rs")?;
//! assert!(anchored.matches(b"src/lib.rs"));
//! assert!(!anchored.matches(b"src/tools/glob.rs"));
//! assert!(Glob::new("../x").is_err());
//! # Ok::<(), String>(())
//! ```
//!
//! One `.gitignore`'s rules, asked about paths relative to its directory;
//! the last matching line decides, and a deeper file is asked before a
//! shallower one:
//!
//! ```
//! use as_edit_find::gitignore::{decide, Rules};
//!
//! let root = Rules::parse(b"target/\n*.log\n!keep.log\n");
//! assert_eq!(root.decide(b"target", true), Some(true));
//! assert_eq!(root.decide(b"target", false), None); // a file: `/` is for directories
//! assert_eq!(root.decide(b"a/b/x.log", false), Some(true));
//! assert_eq!(root.decide(b"keep.log", false), Some(false));
//!
//! let sub = Rules::parse(b"keep.log\n");
//! // sub/keep.log: `sub/.gitignore` (deepest, last) ignores it again.
//! let stack = [(&root, &b"sub/keep.log"[..]), (&sub, &b"keep.log"[..])];
//! assert!(decide(stack.into_iter(), false));
//! ```
//!
//! A search over a block of whole lines, each match handed to the sink
//! (its start and end in the block, without the `\n`); the sink returns
//! `false` to stop. The regex here runs only on the lines holding its
//! required literal, `_mut(`:
//!
//! ```
//! use as_edit_find::grep::Search;
//!
//! let text = "fn get_mut(x)\nfn get(x)\nlet f = a_mut(\n";
//! let search = Search::new(r"fn \w+_mut\(", true, false)?;
//! let mut found = Vec::new();
//! search.lines(text.as_bytes(), &mut Vec::new(), |start, end| {
//!     found.push(&text[start..end]);
//!     true
//! });
//! assert_eq!(found, ["fn get_mut(x)"]);
//!
//! // A literal, case-insensitive, stopped after the first line.
//! let search = Search::new("GET", false, true)?;
//! let mut first = None;
//! search.lines(text.as_bytes(), &mut Vec::new(), |start, end| {
//!     first = Some(&text[start..end]);
//!     false
//! });
//! assert_eq!(first, Some("fn get_mut(x)"));
//! assert!(Search::new("a\nb", false, false).is_err());
//! # Ok::<(), String>(())
//! ```
//!
//! A UTF-16LE file's bytes, transcoded as ripgrep searches them:
//!
//! ```
//! use as_edit_find::bom::{Bom, Utf16};
//!
//! let raw = b"\xff\xfeh\x00\xe9\x00\n\x00";
//! let bom = Bom::sniff(raw);
//! assert_eq!(bom, Some(Bom::Utf16Le));
//! let mut text = Vec::new();
//! let mut dec = Utf16::after_mark(false);
//! dec.feed(&raw[bom.unwrap().bytes()..], &mut text);
//! dec.finish(&mut text);
//! assert_eq!(text, "h\u{e9}\n".as_bytes());
//! ```

#![warn(missing_docs)]

pub mod block;
pub mod bom;
pub mod gitignore;
pub mod glob;
pub mod grep;
pub mod pattern;
pub mod read;
