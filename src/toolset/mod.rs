//! Anthropic's `agent_toolset_20260401` file tools as one invocation each:
//! `as-edit --toolset agent_toolset_20260401` reads
//! `{"name": TOOL, "input": INPUT}` — the tool-use block's name and input
//! as the model sent them — on stdin, or as `--request-b64 B64`, and prints
//! exactly the text the reference function returns for the same tree, exit
//! 0; where the reference raises, the text a tool runner sends for it (the
//! `ToolError`'s message; `repr()` of any other exception, e.g.
//! `ValueError('Invalid arguments for function read')`), exit 1, so a host
//! sets `is_error`. An image or PDF read prints the reference's content
//! block as a JSON list, exit 3 ([`EXIT_BLOCKS`]): a text read of a file
//! that starts with `[{` prints the same bytes, so only the status tells
//! the host to send `json.loads(stdout)` as the tool result's content. A
//! request that is not `{"name","input"}` JSON, or names another tool, is
//! exit 2 with a line saying why (the reference has no text for it); so
//! is a request on stdin over 64 MiB ([`MAX_STDIN`]), refused whole.
//! Nothing but the text is printed: no result line, no newline of our
//! own.
//!
//! The invocation is one [`crate::dispatch::Request::Toolset`]: the
//! dispatcher's argv intake reads it (first, as `--toolset` takes no
//! other flag), [`answer`] runs it. Python hosts get the five tools as
//! the SDK's `BetaAsyncFunctionTool`s over `docker exec` in
//! `examples/anthropic_toolset.py` (exit 1 raised as `ToolError`, exit 3
//! `json.loads`ed).
//!
//! # The reference, pinned
//!
//! PyPI `anthropic` 2.17.0, `anthropic.lib.tools.agent_toolset`
//! (`beta_agent_toolset_20260401(AgentToolContext(workdir=W))`), run by
//! Python 3.11 with Debian 12's ripgrep 13 on `PATH`; W is our working
//! directory. (2.17.0 is what `pip install
//! anthropic` gave on 2026-12-05, and its texts differ: 2.10.0 quotes a
//! refused path with Python's `repr` (`path 'P' is outside …`), caps a
//! whole-file read at 262,144 bytes instead of 110,000, and has no
//! `N replacements would make P S bytes` refusal.) Its texts, tool by
//! tool (P is the path as the model wrote it):
//!
//! - **Arguments** are validated by pydantic (`validate_call`, lax mode)
//!   before anything runs: an unknown or missing field, or a value of the
//!   wrong type, is `ValueError('Invalid arguments for function T')`; an
//!   input that is not an object is `TypeError('Input must be a
//!   dictionary, got list')` (Python's type name). Strings must be JSON
//!   strings; an int is a JSON integer, a float with no fraction, a bool,
//!   or a string holding one (`" 7 "`, `"+1"`, `"1_0"`, `"1.00"`); a bool
//!   is a JSON bool, 0 or 1, or one of `0 off f false n no 1 on t true y
//!   yes` in any case ([`input`]).
//! - **Paths** ([`path`]): P is joined to W, `.` and `..` collapsed
//!   lexically, then every symlink followed (the leaf too, even dangling;
//!   missing trailing components kept); outside W is `T: path "P" is
//!   outside the session's working directory`; a loop is `T: path "P": too
//!   many levels of symbolic links`; a NUL is `T: embedded null byte`.
//!   The resolved path is what the tool works on. File-system errors read
//!   `T: P: no such file or directory` (not a directory, is a directory,
//!   permission denied, file already exists, or `strerror` in lower case).
//! - **read** `{file_path, view_range?}` ([`read`]): a `view_range` that is
//!   not empty and not two numbers: `read: view_range must be [start_line,
//!   end_line]`; not a regular file (a FIFO is never opened; one swapped
//!   in after that check is opened without waiting and refused on its
//!   descriptor: `crate::fs::regular`): `read: P: not a regular file`; a
//!   file with nothing to read yet (`/proc/kmsg`) is never waited for
//!   either: `read: P: resource temporarily unavailable`; `.png .jpg .jpeg .gif .webp` (any case, of the
//!   resolved name) are an `image` block, `.pdf` a `document` block, printed
//!   as the JSON list of that one block (`view_range` with them is refused;
//!   over 3,932,160 bytes for an image or 20 MiB for a PDF: `read: P is N
//!   bytes, exceeds L-byte limit for image/PDF files.`). Text: a file over
//!   110,000 bytes needs a `view_range` (`read: P is N bytes, exceeds
//!   110000-byte limit. Use the view_range parameter …`), and then the
//!   selected lines are capped at 110,000 bytes (`read: view_range [S, E]
//!   of P exceeds …` / `read: line N of P alone exceeds …`); not UTF-8:
//!   `read: P: not valid UTF-8 text (binary files are only supported for
//!   image/PDF extensions)` (the whole file is checked, or only the
//!   selected lines of a large one). No `view_range` (or `[]`): the file's
//!   text as it is. `[S, E]`: the text split at `\n`, items `max(0, S-1)`
//!   up to `E` (to the end when `E ≤ 0`), joined with `\n` — `\r` kept,
//!   no numbers.
//! - **write** `{file_path, content}`: missing parents made; `wrote N bytes
//!   to P` with N the *characters* of `content`.
//! - **edit** `{file_path, old_string, new_string, replace_all?}`: the file
//!   as exact UTF-8 text (no CRLF normalizing, unlike as-edit's own edits),
//!   at most 262,144 bytes; N = occurrences of `old_string` (Python's
//!   `str.count`: an empty one occurs at every character boundary): `edit:
//!   old_string not found in P`, `edit: old_string appears N times in P
//!   (must be unique)` unless `replace_all`, `edit: N replacements would
//!   make P S bytes, exceeds 262144-byte limit.`; else `edited P (N
//!   replacement(s))` (1 without `replace_all`).
//! - **glob** `{pattern, path?}` ([`glob`]): Python 3.11's
//!   `pathlib.Path.glob` under W or the resolved `path`: `*`, `?`, `[…]`
//!   (fnmatch's rules, `[!…]` negates) within a component, matching
//!   dotfiles and newlines; `**` alone is any number of directories (never
//!   through a symlink), and a final `**` (or a final `/`) yields
//!   directories; braces are literal. Matches whose resolved path leaves
//!   the search root are dropped; the rest sorted newest first (by
//!   `st_mtime` through links, 0 when that fails; ties keep the walk's
//!   order), at most 200, as absolute paths, one a line; none: `no
//!   matches`. Refused: an absolute pattern, a `..` component, an empty
//!   pattern, `**` inside a component.
//! - **grep** `{pattern, path?}` ([`grep`]): what the reference prints
//!   running rg 13.0.0 (Debian 12's): ROOT is the resolved `path` (a
//!   falsy one: W), and the text is what `rg --no-config -n --no-heading
//!   -e PATTERN -- ROOT` prints on stdout, decoded as UTF-8 (an invalid
//!   sequence one U+FFFD); exit 1 of rg is `no matches`; any other failure
//!   is `grep: rg failed: ` and rg's whole stderr (`regex parse error:\n
//!   x{\n     ^\nerror: unclosed counted repetition\n`; `the literal
//!   '"\n"' is not allowed in a regex` and its advice, also for a `\n`
//!   escape outside a class or alone in one (`[^\n]` is taken); `ROOT/missing: No such file or directory (os error 2)` for a
//!   missing path, also when other files matched). Over 102,400
//!   characters the text is cut there and `\n[output truncated at 102400
//!   bytes]` appended. An ignore file the walker leaves unread (over 1 MiB,
//!   or past the 8 MiB of rules held for one path: `src/tools/ignores.rs`;
//!   rg reads any) is said in a last line, `[ignore file P … not read, its
//!   rules not applied]`. Lines: `ABS:N:LINE\n` (the line as stored, a `\r`
//!   kept), or `N:LINE\n` when ROOT is a file. The walk: hidden names
//!   skipped below ROOT (ROOT itself may be hidden) unless an ignore rule
//!   whitelists them, `.rgignore` over `.ignore` over `.gitignore`, the
//!   last only inside a git repository (a `.git` in the directory or
//!   above) and weakest of all that repository's `.git/info/exclude`,
//!   parent directories' ignore files too, `node_modules`
//!   searched, symlinks not followed, FIFOs skipped; a file with a NUL
//!   byte skipped in the walk (even its matches before the NUL), and a
//!   named one printed as the single line `binary file matches (found
//!   "\0" byte around offset N)` when its first 64 KiB hold a NUL and a
//!   line matches. A file with a byte-order mark is read as rg reads it
//!   (`crates/find/src/bom.rs`): a UTF-8 BOM dropped, UTF-16 with a BOM transcoded
//!   to UTF-8, a U+FEFF right after its mark dropped too (the text
//!   searched, checked for NUL — `N` is an offset in it — and printed).
//!   `read`, as the reference's, decodes the bytes as UTF-8 only: a
//!   UTF-8 BOM is the text's first character (U+FEFF), a UTF-16 file is
//!   not UTF-8. A pattern with a NUL is Python's `ValueError('embedded
//!   null byte')`; a FIFO named is `grep: P: not a regular file` (the
//!   reference blocks on it). **Order**: rg's parallel walk gives no fixed
//!   file order; as-edit prints files in bytewise order of their paths
//!   (the walker's), lines in file order. Regex: rg's, the `regex`
//!   crate's Unicode dialect matching bytes (`\w \d \s \b`, `\p{…}`,
//!   Unicode case folding, class set operations; `.` never an invalid
//!   byte); a pattern rg 13 refuses is its text byte for byte: the
//!   pattern, a caret line under the fault, the reason, and for
//!   look-around or back-references the PCRE2 advice ([`regex_error`]).
//! - **The walks and `src/tools/walk.rs`.** grep's walk *is* the shared
//!   walker (its `rg` option, `src/tools/ignores.rs`). glob's is not:
//!   pathlib's `*` and exact components list every entry type (directories,
//!   symlinks followed, FIFOs) in readdir order, and `**` yields the
//!   directories themselves before their contents; the walker yields only
//!   regular files, in sorted order, never through a symlink, so glob keeps
//!   its own small `os.scandir`-shaped selectors ([`glob`]).

//! # Better than the reference, with the same text
//!
//! - write and edit replace the file atomically (a temp renamed over it,
//!   mode and owner kept, the target `flock`ed as every as-edit edit), where
//!   the reference truncates it in place; a new file is linked in with no
//!   check-then-create window;
//! - a FIFO given to write is refused (`write: P: not a regular file`)
//!   where the reference's `open` blocks until a reader comes;
//! - read streams a large file's range in 64 KiB blocks and stops at its
//!   end; edit and read load at most their byte limits.
//!
//! # Differences (and why)
//!
//! - A JSON string holding a lone surrogate (`"\udce9"`) is refused (exit
//!   2); the reference's file calls turn U+DC80–U+DCFF back into the byte
//!   they escape (Python's surrogateescape). A model never receives one:
//!   every result carries U+FFFD for such bytes.
//! - A float over 2^63 written with a fraction or exponent (`1e300`) is
//!   taken as a (huge) line number; pydantic refuses it. JSON does not say
//!   whether `1e20` was an integer, and integers that large are valid.
//! - An `OSError` other than the ignored ones inside a glob walk (a name
//!   too long) is reported by the reference as Python's `[Errno N] …`
//!   text with a host path; here the entry is skipped, but for want of
//!   descriptors (under four: glob holds one directory open at a time)
//!   the walk stops with `[Errno 24] Too many open files: 'P'`.
//! - grep does not read the global `core.excludesFile` (rg does; the
//!   differential pins an empty HOME) nor the `info/exclude` of a worktree
//!   whose `.git` is a file, skips a directory it cannot open where rg reports it (exit 2: `rg
//!   failed`; but one it could not open for want of descriptors, below
//!   the six the walk needs, is reported as rg would: `P: Too many open
//!   files (os error 24)`), and stops reading files once its output passes the cut (an
//!   unreadable file after that is not reported); a walked file whose
//!   first NUL lies past rg's first read (64 KiB or more) is skipped whole
//!   where rg prints the lines before it and a `WARNING: stopped searching
//!   binary file after match` line.
//! - An ignore rule holding `**` ignores a file whose path holds a newline
//!   here; rg's globset turns `**` into a regex `.*` that does not cross a
//!   newline, so rg may search such a file (`**` alone and `/**` leave a
//!   top-level `new\nline.txt` searched, rg 13 checked). Names with
//!   newlines under such rules are rare enough that the walker keeps one
//!   meaning of `**` for its three flavours.
//! - Ignore files, where rg's `ignore` crate departs from git's rules (the
//!   walker keeps git's): rg trims every trailing whitespace character of
//!   a rule (a tab too), reads `{a,b}` as alternatives, and drops a whole
//!   ignore file that is not UTF-8; here only spaces are trimmed, braces
//!   are literal, and the UTF-8 lines of such a file still count; a
//!   reversed range (`[z-a]`) matches its start, as in git, where rg
//!   drops the rule with a warning; an anchored rule's literal start is
//!   compared first, then the rest (git's `match_pathname`: `a**/**`
//!   ignores `a`), where rg's globset reads the `**` as a plain `*`.
//! - A named file whose first NUL lies past the first 64 KiB: rg prints
//!   the lines of the blocks it read before the NUL, then `binary file
//!   matches (found "\0" byte around offset N)`; here every matching line
//!   is printed (the NUL is looked for in the first 64 KiB only).
//! - The regex crate is newer than rg 13's: a pattern compiled past 10 MiB
//!   is refused (`a{1000}{1000}`; rg 13's bound is 100 MiB, and its text
//!   says so), a class that can match nothing (`[^\x00-\x{10FFFF}]`) is
//!   taken where rg 13 refuses it, and `\p{…}` follows a newer Unicode
//!   (characters assigned since match their new classes). What the newer
//!   syntax adds (`\<`, `\>`, `\b{start}`, `(?<name>…)`, `(?R)`, escaped
//!   punctuation such as `\/`, a non-ASCII literal with Unicode off as in
//!   `(?-u)é` or `(?-u)\x{e9}`) is refused in rg 13's words.
//! - `\p{…}` of a boolean property (`\p{Alphabetic}`), an age or a
//!   segmentation class is refused (`Unicode property not found`): the
//!   static binary leaves those tables out (160 KiB; README Performance).
//!   General categories, scripts and `\w \d \s \b` are all there.
//! - A name that is not UTF-8 is matched by glob as Python's surrogate
//!   escapes are (each such byte its own character); a class range that
//!   spans U+DC80–U+DCFF would match them there, not here.
//!
//! # The differential (scripts/toolset-diff.sh)
//!
//! Generated trees (spaces, `:`, tabs, newlines, leading `-`, dotfiles,
//! brackets, braces, non-ASCII; CRLF, empty, NUL, invalid UTF-8, files
//! around the 110,000 and 262,144-byte limits, long lines, images; links
//! inside, outside, dangling, looping; FIFOs; `.git`, `.gitignore`,
//! `.ignore`) and generated inputs (ranges, coerced and wrong types,
//! missing and extra fields, escaping and odd paths, fnmatch corner cases,
//! Unicode classes and case folding, patterns rg refuses)
//! are given to the reference and to as-edit on the same tree at the same
//! path; texts, exit status and the whole tree afterwards must agree. The
//! documented reasons a case may differ (each counted by name):
//! `surrogate-in-input` (above); `fifo-blocks-reference` (write or grep
//! naming a FIFO: the reference would block, as-edit must answer `…: not
//! a regular file`, exit 1); `mtime-tie-order` (glob: only lines of equal
//! mtimes trade places); `directory-order` (grep over a directory: equal
//! as sorted lines); `grep-cut-order` (over 100 KiB: cut at the same
//! length with the same notice, every kept line one of rg's);
//! `regex-property-not-built` (`\p{…}` of a boolean property, an age or
//! a segmentation class: refused here, below); `binary-late-nul` (rg
//! printed its `WARNING: stopped searching binary file` line: a NUL past
//! its first read); `newline-name-globstar` (the texts differ only in lines of files
//! whose paths hold a newline, as-edit's among rg's, and an ignore rule
//! holds `**`: above).

pub mod glob;
pub mod grep;
pub mod input;
pub mod path;
pub mod read;
pub mod regex_error;
pub mod write;

use std::path::PathBuf;

use input::{Args, Outcome};

/// The only toolset this module answers for.
pub const TOOLSET: &str = "agent_toolset_20260401";

/// The exit status of an image or PDF read: stdout is the JSON list of
/// the content block, which no text answer (exit 0) can be told from.
pub const EXIT_BLOCKS: i32 = 3;

/// What to print and the exit status: 0 a text, 1 the reference raised
/// (`is_error`), 2 not a tool call, [`EXIT_BLOCKS`] content blocks.
pub type Answer = (String, i32);

/// Runs one `{"name","input"}` request in the working directory.
#[cfg_attr(as_edit_small, optimize(size))]
pub fn run(json: &[u8]) -> Answer {
    let (name, args) = match input::parse(json) {
        Ok(p) => p,
        Err(Outcome::Refused(text)) => return (text, 1),
        Err(Outcome::Invalid(text)) => return (text, 2),
    };
    let cwd = match std::env::current_dir() {
        Ok(d) => d,
        Err(e) => return (format!("as-edit: the working directory: {e}\n"), 2),
    };
    let answer = match (name.as_str(), args) {
        ("read", Args::Read { file_path, range }) => match read::read(&cwd, &file_path, range) {
            Ok(read::Reply::Blocks(json)) => return (json, EXIT_BLOCKS),
            Ok(read::Reply::Text(t)) => Ok(t),
            Err(e) => Err(e),
        },
        ("write", Args::Write { file_path, content }) => write::write(&cwd, &file_path, &content),
        ("edit", Args::Edit(e)) => write::edit(&cwd, &e),
        ("glob", Args::Glob { pattern, path }) => glob::glob(&cwd, &pattern, path.as_deref()),
        ("grep", Args::Grep { pattern, path }) => grep::grep(&cwd, &pattern, path.as_deref()),
        _ => unreachable!("input::parse pairs each name with its arguments"),
    };
    match answer {
        Ok(text) => (text, 0),
        Err(text) => (text, 1),
    }
}

/// The most bytes a request on stdin may have: 64 MiB.
pub const MAX_STDIN: usize = 64 << 20;

/// A toolset invocation as read from argv (and stdin): the request, or
/// why the arguments are not one (exit 2, no result line).
#[derive(Debug)]
pub enum Call {
    /// The `{"name","input"}` bytes.
    Json(Vec<u8>),
    /// The usage error's text.
    Usage(String),
}

/// Answers a [`Call`] (the dispatcher's arm).
pub fn answer(call: &Call) -> Answer {
    match call {
        Call::Json(j) => run(j),
        Call::Usage(why) => (format!("as-edit --toolset: {why}\n"), 2),
    }
}

/// The working directory as the reference resolves it (`Path.resolve()`).
pub(crate) fn root(cwd: &std::path::Path) -> PathBuf {
    std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_owned())
}
