//! The V4A patch grammar: text → [`Patch`], pure (no I/O).
//!
//! V4A is the patch format of OpenAI's `apply_patch` tool (GPT-5 models,
//! Codex, the Agents SDK). As accepted here, line by line (a line ends at
//! LF, CRLF or a lone CR; "trimmed" means Unicode whitespace removed at both
//! ends):
//!
//! ```text
//! patch   := [heredoc] "*** Begin Patch" hunk+ "*** End Patch" [heredoc-end]
//! hunk    := add | delete | update            (blank lines between hunks are skipped)
//! add     := "*** Add File:" PATH  ("+" TEXT)*
//! delete  := "*** Delete File:" PATH
//! update  := "*** Update File:" PATH ["*** Move to:" PATH] chunk+
//! chunk   := ("@@" [HEADER])* body ["*** End of File"]
//! body    := (" " TEXT | "-" TEXT | "+" TEXT | EMPTY)+
//! ```
//!
//! - Markers (`*** …` lines, `EOF`) are matched trimmed, so whitespace around
//!   them is accepted; a PATH is the trimmed rest of its marker line and must
//!   not be empty. Blank lines before `*** Begin Patch` and after
//!   `*** End Patch` are ignored, and so is a byte-order mark starting the
//!   text (an editor's, invisible in the error that would name it). Inside
//!   a chunk a line starting with a space is context, whatever follows
//!   (`  *** End of File` too), as in Codex.
//! - Heredoc wrapper: a first line `<<EOF`, `<<'EOF'` or `<<"EOF"` and a last
//!   line `EOF` around the patch (models that call the tool through an exec
//!   API without a shell leave them in) are dropped.
//! - An Add File's content is its `+` lines, each followed by a newline (no
//!   lines: an empty file).
//! - Every chunk but the first of an Update must start with `@@`; the first
//!   may start directly with body lines. Several `@@ HEADER` lines in a row
//!   each narrow where the chunk starts (`@@ class A` then `@@ def m`): the
//!   locator finds each in turn. `@@` alone (or with only whitespace) narrows
//!   nothing. The header: the text after `@@ ` (or `@@`), end-trimmed (Codex).
//! - Body: ` ` context (in old and new), `-` old only, `+` new only; an empty
//!   line (no prefix) is empty context, as models write blank lines (first
//!   in the first chunk too: Codex skips them only before a later one), but
//!   ending a chunk not closed by `*** End of File` empty lines separate
//!   chunks, dropped unless they are its only old lines or it is context
//!   alone (Codex keeps them, retrying once without one: [`Chunk::separated`]);
//!   a chunk of them alone changes nothing. Any other first character ends it.
//! - `*** End of File` after a body: the chunk's old lines must end the file.
//! - An empty patch (no hunk) and an Update with no chunk are errors, as in
//!   Codex, so a model learns that nothing happened.
//!
//! Every error is a [`ParseError`]: the 1-based line number in the text as
//! given (the heredoc line counts) and what was expected there.

use std::fmt;

use super::chunk::noop;
pub use super::chunk::Chunk;

/// A parsed patch: its file hunks in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Patch {
    /// The hunks, in the order they apply.
    pub hunks: Vec<Hunk>,
}

/// One file's hunk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Hunk {
    /// `*** Add File:` with the full content (each line ends in `\n`).
    Add {
        /// The path as written.
        path: String,
        /// The new file's content.
        content: String,
    },
    /// `*** Delete File:`.
    Delete {
        /// The path as written.
        path: String,
    },
    /// `*** Update File:` (and `*** Move to:`) with its chunks.
    Update {
        /// The path as written.
        path: String,
        /// Where the updated file goes, if it moves.
        move_to: Option<String>,
        /// The chunks, in file order.
        chunks: Vec<Chunk>,
    },
}

/// `invalid_patch`: where the text stopped following the grammar.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// 1-based line number in the patch text.
    pub line: usize,
    /// What was expected there (and what was found).
    pub expected: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.expected)
    }
}

const BEGIN: &str = "*** Begin Patch";
const END: &str = "*** End Patch";
const EOF_MARK: &str = "*** End of File";

/// Parses a whole patch (`*** Begin Patch` … `*** End Patch`).
#[cfg_attr(as_edit_small, optimize(size))]
pub fn parse(text: &str) -> Result<Patch, ParseError> {
    let lines = split_lines(text.strip_prefix('\u{feff}').unwrap_or(text));
    let (mut lo, mut hi) = trim_blank(&lines, 0, lines.len());
    if hi - lo >= 2
        && matches!(lines[lo].trim(), "<<EOF" | "<<'EOF'" | "<<\"EOF\"")
        && lines[hi - 1].trim() == "EOF"
    {
        (lo, hi) = trim_blank(&lines, lo + 1, hi - 1);
    }
    if lo == hi {
        return Err(err(lo, format!("expected '{BEGIN}': the text is blank")));
    }
    if lines[lo].trim() != BEGIN {
        return Err(err(lo, format!("expected '{BEGIN}'{}", found(&lines, lo))));
    }
    if hi - lo < 2 || lines[hi - 1].trim() != END {
        return Err(err(hi - 1, format!("expected '{END}' as the last line")));
    }
    let mut p = Lines {
        lines: &lines,
        i: lo + 1,
        end: hi - 1,
    };
    let mut hunks = Vec::new();
    loop {
        p.skip_blank();
        if p.i == p.end {
            break;
        }
        hunks.push(p.hunk()?);
    }
    if hunks.is_empty() {
        return Err(err(
            lo + 1,
            "expected a hunk ('*** Add File: PATH', '*** Delete File: PATH' or '*** Update File: PATH'): the patch is empty".into(),
        ));
    }
    Ok(Patch { hunks })
}

/// Parses the chunks of one file without the file markers: the `diff` of an
/// `update_file` operation (Responses API, Agents SDK's `apply_diff`).
#[cfg_attr(as_edit_small, optimize(size))]
pub fn parse_update_diff(diff: &str) -> Result<Vec<Chunk>, ParseError> {
    let lines = split_lines(diff);
    let (lo, hi) = trim_blank(&lines, 0, lines.len());
    let mut p = Lines {
        lines: &lines,
        i: lo,
        end: hi,
    };
    let chunks = p.chunks()?;
    if chunks.is_empty() || p.i != p.end {
        return Err(err(p.i, format!("expected a chunk{}", found(&lines, p.i))));
    }
    Ok(chunks)
}

/// Parses the `diff` of a `create_file` operation: `+` lines only.
#[cfg_attr(as_edit_small, optimize(size))]
pub fn parse_create_diff(diff: &str) -> Result<String, ParseError> {
    let lines = split_lines(diff);
    let (lo, hi) = trim_blank(&lines, 0, lines.len());
    let mut p = Lines {
        lines: &lines,
        i: lo,
        end: hi,
    };
    let content = p.add_lines();
    if p.i != p.end {
        return Err(err(
            p.i,
            format!("expected a '+' line{}", found(&lines, p.i)),
        ));
    }
    Ok(content)
}

/// Splits at LF, CRLF and lone CR (the edit contract's end-of-line rule).
#[cfg_attr(as_edit_small, optimize(size))]
fn split_lines(text: &str) -> Vec<&str> {
    let b = text.as_bytes();
    let (mut v, mut start, mut i) = (Vec::new(), 0, 0);
    while i < b.len() {
        if b[i] == b'\n' || b[i] == b'\r' {
            v.push(&text[start..i]);
            i += if b[i] == b'\r' && b.get(i + 1) == Some(&b'\n') {
                2
            } else {
                1
            };
            start = i;
        } else {
            i += 1;
        }
    }
    v.push(&text[start..]);
    v
}

/// The range without blank lines at either end (all blank: empty at `lo`).
#[cfg_attr(as_edit_small, optimize(size))]
fn trim_blank(lines: &[&str], start: usize, mut hi: usize) -> (usize, usize) {
    let mut lo = start;
    while lo < hi && lines[lo].trim().is_empty() {
        lo += 1;
    }
    while hi > lo && lines[hi - 1].trim().is_empty() {
        hi -= 1;
    }
    if lo == hi {
        return (start, start);
    }
    (lo, hi)
}

fn err(index: usize, expected: String) -> ParseError {
    ParseError {
        line: index + 1,
        expected,
    }
}

fn found(lines: &[&str], i: usize) -> String {
    match lines.get(i) {
        Some(l) => format!(", found '{}'", l.chars().take(80).collect::<String>()),
        None => ", found the end of the text".into(),
    }
}

/// The rest of `line` after `marker` (matched trimmed), trimmed.
fn marker<'a>(line: &'a str, marker: &str) -> Option<&'a str> {
    line.trim().strip_prefix(marker).map(str::trim)
}

struct Lines<'a, 't> {
    lines: &'a [&'t str],
    i: usize,
    end: usize,
}

impl Lines<'_, '_> {
    fn skip_blank(&mut self) {
        while self.i < self.end && self.lines[self.i].trim().is_empty() {
            self.i += 1;
        }
    }

    fn path(&self, rest: &str) -> Result<String, ParseError> {
        match rest {
            "" => Err(err(self.i, "expected a path after the marker".into())),
            // No file name holds one (it was a panic making the C string).
            p if p.contains('\0') => Err(err(self.i, "the path contains a NUL character".into())),
            p => Ok(p.to_owned()),
        }
    }

    #[cfg_attr(as_edit_small, optimize(size))]
    fn hunk(&mut self) -> Result<Hunk, ParseError> {
        let line = self.lines[self.i];
        if let Some(rest) = marker(line, "*** Add File:") {
            let path = self.path(rest)?;
            self.i += 1;
            return Ok(Hunk::Add {
                path,
                content: self.add_lines(),
            });
        }
        if let Some(rest) = marker(line, "*** Delete File:") {
            let path = self.path(rest)?;
            self.i += 1;
            return Ok(Hunk::Delete { path });
        }
        let Some(rest) = marker(line, "*** Update File:") else {
            if line.trim() == END {
                // A second patch or a stray end: saying "expected ... or End Patch" here would contradict itself.
                return Err(err(
                    self.i,
                    format!("expected '{END}' only as the last line (one patch per call)"),
                ));
            }
            return Err(err(
                self.i,
                format!("expected '*** Add File: PATH', '*** Delete File: PATH', '*** Update File: PATH' or '{END}'{}", found(self.lines, self.i)),
            ));
        };
        let (path, at) = (self.path(rest)?, self.i);
        self.i += 1;
        let mut move_to = None;
        if let Some(rest) = self.lines[..self.end]
            .get(self.i)
            .and_then(|l| marker(l, "*** Move to:"))
        {
            move_to = Some(self.path(rest)?);
            self.i += 1;
            if self.lines[..self.end]
                .get(self.i)
                .and_then(|l| marker(l, "*** Move to:"))
                .is_some()
            {
                return Err(err(
                    self.i,
                    "expected one '*** Move to:' per '*** Update File:', found a second".into(),
                ));
            }
        }
        let chunks = self.chunks()?;
        if chunks.is_empty() {
            return Err(err(
                at,
                format!("expected at least one chunk ('@@' or ' ', '-', '+' lines) after '*** Update File: {path}'"),
            ));
        }
        Ok(Hunk::Update {
            path,
            move_to,
            chunks,
        })
    }

    #[cfg_attr(as_edit_small, optimize(size))]
    fn add_lines(&mut self) -> String {
        let mut content = String::new();
        while let Some(text) = self.lines[..self.end]
            .get(self.i)
            .and_then(|l| l.strip_prefix('+'))
        {
            content.push_str(text);
            content.push('\n');
            self.i += 1;
        }
        content
    }

    /// Chunks up to the next `***` marker line (or the end).
    #[cfg_attr(as_edit_small, optimize(size))]
    fn chunks(&mut self) -> Result<Vec<Chunk>, ParseError> {
        let mut chunks = Vec::new();
        loop {
            if !chunks.is_empty() {
                self.skip_blank(); // before the first chunk: its context (Codex)
            }
            if self.i == self.end || self.lines[self.i].starts_with('*') {
                return Ok(chunks);
            }
            let mut chunk = Chunk {
                line: self.i + 1,
                ..Chunk::default()
            };
            let mut headed = false;
            while let Some(h) = self.lines[..self.end]
                .get(self.i)
                .and_then(|l| l.strip_prefix("@@"))
            {
                let h = h.strip_prefix(' ').unwrap_or(h).trim_end();
                if !h.is_empty() {
                    chunk.headers.push(h.to_owned());
                }
                headed = true;
                self.i += 1;
            }
            if !headed && !chunks.is_empty() {
                return Err(err(
                    self.i,
                    format!(
                        "expected '@@' to start the next chunk{}",
                        found(self.lines, self.i)
                    ),
                ));
            }
            self.body(&mut chunk)?;
            chunks.push(chunk);
        }
    }

    #[cfg_attr(as_edit_small, optimize(size))]
    fn body(&mut self, c: &mut Chunk) -> Result<(), ParseError> {
        let (start, mut blank_run) = (self.i, 0);
        while self.i < self.end {
            let line = self.lines[self.i];
            if line.starts_with('*') && line.trim() == EOF_MARK {
                if self.i == start {
                    break;
                }
                // Empty lines before it are the file's last lines.
                (c.eof, blank_run, self.i) = (true, 0, self.i + 1);
                break;
            }
            let (tag, text) = match line.chars().next() {
                None => (' ', ""),
                Some(t @ (' ' | '-' | '+')) => (t, &line[1..]),
                Some(_) => break,
            };
            blank_run = if line.is_empty() { blank_run + 1 } else { 0 };
            if tag != '-' {
                c.keep.push((tag == ' ').then_some(c.old.len()));
                c.new.push(text.to_owned());
            }
            if tag != '+' {
                c.old.push(text.to_owned());
            }
            self.i += 1;
        }
        // Trailing empty lines separate chunks (module docs), but are context
        // when they are all its old lines (else nothing or an addition at the
        // end) or it is context alone (its first match is Codex's with them).
        if c.old.len() == blank_run || noop(c) {
            blank_run = 0;
        }
        c.separated = blank_run > 0;
        c.old.truncate(c.old.len() - blank_run);
        c.new.truncate(c.new.len() - blank_run);
        c.keep.truncate(c.new.len());
        if c.old.is_empty() && c.new.is_empty() {
            return Err(err(
                self.i,
                format!(
                    "expected a chunk line starting with ' ', '-' or '+'{}",
                    found(self.lines, self.i)
                ),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    /// A chunk from its old and new lines; equal lines pair up in order
    /// as context (enough for the chunks written here).
    fn chunk(headers: &[&str], old: &[&str], new: &[&str], eof: bool, line: usize) -> Chunk {
        let (mut i, mut keep) = (0, Vec::new());
        for (j, n) in new.iter().enumerate() {
            while i < old.len() && old[i] != *n && !new[j..].contains(&old[i]) {
                i += 1;
            }
            let ctx = i < old.len() && old[i] == *n;
            keep.push(ctx.then_some(i));
            i += usize::from(ctx);
        }
        Chunk {
            headers: s(headers),
            old: s(old),
            new: s(new),
            keep,
            eof,
            separated: false,
            line,
        }
    }

    fn update(path: &str, chunks: Vec<Chunk>) -> Hunk {
        Hunk::Update {
            path: path.into(),
            move_to: None,
            chunks,
        }
    }

    fn one(text: &str) -> Hunk {
        let p = parse(text).unwrap();
        assert_eq!(p.hunks.len(), 1, "{p:?}");
        p.hunks.into_iter().next().unwrap()
    }

    fn fails(text: &str, line: usize, expected: &str) {
        let e = parse(text).unwrap_err();
        assert_eq!(e.line, line, "{e}");
        assert!(e.expected.contains(expected), "{e}");
    }

    #[test]
    fn all_three_hunks_and_a_move() {
        let p = parse(
            "*** Begin Patch\n*** Add File: a/new.txt\n+one\n+\n+two\n*** Delete File: gone.txt\n\
             *** Update File: src/x.py\n*** Move to: src/y.py\n@@ def f():\n-    pass\n+    return 1\n*** End Patch\n",
        )
        .unwrap();
        assert_eq!(
            p.hunks,
            vec![
                Hunk::Add {
                    path: "a/new.txt".into(),
                    content: "one\n\ntwo\n".into()
                },
                Hunk::Delete {
                    path: "gone.txt".into()
                },
                Hunk::Update {
                    path: "src/x.py".into(),
                    move_to: Some("src/y.py".into()),
                    chunks: vec![chunk(
                        &["def f():"],
                        &["    pass"],
                        &["    return 1"],
                        false,
                        9
                    )],
                },
            ]
        );
    }

    #[test]
    fn empty_add_is_an_empty_file() {
        let h = one("*** Begin Patch\n*** Add File: e\n*** End Patch");
        assert_eq!(
            h,
            Hunk::Add {
                path: "e".into(),
                content: String::new()
            }
        );
    }

    #[test]
    fn whitespace_around_markers_and_paths() {
        let h = one(
            "  *** Begin Patch  \n\t*** Update File:   f.txt  \n@@\n-a\n+b\n   *** End Patch\t\n\n",
        );
        assert_eq!(
            h,
            update("f.txt", vec![chunk(&[], &["a"], &["b"], false, 3)])
        );
    }

    #[test]
    fn heredoc_wrappers_are_dropped() {
        for open in ["<<EOF", "<<'EOF'", "<<\"EOF\""] {
            let h = one(&format!(
                "{open}\n*** Begin Patch\n*** Delete File: d\n*** End Patch\nEOF\n"
            ));
            assert_eq!(h, Hunk::Delete { path: "d".into() });
        }
        // Without its closing EOF the wrapper is not one: line 1 is not Begin.
        fails(
            "<<'EOF'\n*** Begin Patch\n*** Delete File: d\n*** End Patch\n",
            1,
            "'*** Begin Patch'",
        );
    }

    #[test]
    fn crlf_and_lone_cr_split_lines() {
        let h = one("*** Begin Patch\r\n*** Update File: f\r\n@@\r\n-a\r+b\r\n*** End Patch\r\n");
        assert_eq!(h, update("f", vec![chunk(&[], &["a"], &["b"], false, 3)]));
    }

    #[test]
    fn first_chunk_without_header_then_headed_chunks_with_blank_lines_between() {
        let h = one(
            "*** Begin Patch\n*** Update File: f\n ctx\n-a\n+b\n\n\n@@ fn g()\n-c\n+d\n\n@@\n-e\n*** End Patch",
        );
        assert_eq!(
            h,
            update(
                "f",
                vec![
                    Chunk {
                        separated: true,
                        ..chunk(&[], &["ctx", "a"], &["ctx", "b"], false, 3)
                    },
                    Chunk {
                        separated: true,
                        ..chunk(&["fn g()"], &["c"], &["d"], false, 8)
                    },
                    chunk(&[], &["e"], &[], false, 12),
                ]
            )
        );
    }

    /// A chunk of context alone keeps the empty lines ending it as
    /// context (it takes its first match, which Codex takes with them),
    /// and a chunk whose ending empty lines were dropped is marked, so no
    /// retry drops another (Codex's one retry is spent on them).
    #[test]
    fn empty_lines_ending_a_chunk_of_context_alone_are_context() {
        let h = one("*** Begin Patch\n*** Update File: f\n b\n\n@@\n-x\n*** End Patch");
        let Hunk::Update { chunks, .. } = h else {
            panic!("an update")
        };
        let mut ctx = chunk(&[], &["b", ""], &["b", ""], false, 3);
        ctx.keep = vec![Some(0), Some(1)];
        assert_eq!(chunks, [ctx, chunk(&[], &["x"], &[], false, 5)]);
        let h = one("*** Begin Patch\n*** Update File: f\n x\n \n+Y\n\n@@\n+Z\n*** End Patch");
        let Hunk::Update { chunks, .. } = h else {
            panic!("an update")
        };
        let mut want = chunk(&[], &["x", ""], &["x", "", "Y"], false, 3);
        (want.keep, want.separated) = (vec![Some(0), Some(1), None], true);
        assert_eq!(chunks[0], want);
    }

    #[test]
    fn stacked_headers_narrow_in_order_and_bare_ones_are_dropped() {
        let h = one("*** Begin Patch\n*** Update File: f\n@@ class A\n@@\n@@     def m(self):\n-x\n+y\n*** End Patch");
        assert_eq!(
            h,
            update(
                "f",
                vec![chunk(
                    &["class A", "    def m(self):"],
                    &["x"],
                    &["y"],
                    false,
                    3
                )]
            )
        );
        // "@@" followed directly by text, and a header of only spaces.
        let h = one("*** Begin Patch\n*** Update File: f\n@@fn a\n@@   \n-x\n*** End Patch");
        assert_eq!(
            h,
            update("f", vec![chunk(&["fn a"], &["x"], &[], false, 3)])
        );
    }

    #[test]
    fn empty_lines_inside_a_chunk_are_context() {
        let h = one("*** Begin Patch\n*** Update File: f\n@@\n a\n\n-b\n+c\n \n*** End Patch");
        assert_eq!(
            h,
            update(
                "f",
                vec![chunk(
                    &[],
                    &["a", "", "b", ""],
                    &["a", "", "c", ""],
                    false,
                    3
                )]
            )
        );
    }

    #[test]
    fn trailing_empty_lines_stay_when_they_are_the_only_old_lines() {
        let h = one("*** Begin Patch\n*** Update File: f\n@@\n+x\n\n@@\n-y\n*** End Patch");
        assert_eq!(
            h,
            update(
                "f",
                vec![
                    chunk(&[], &[""], &["x", ""], false, 3),
                    chunk(&[], &["y"], &[], false, 6)
                ]
            )
        );
    }

    /// A chunk of empty lines alone, before the end, the next `@@` or the
    /// next hunk, is context that changes nothing (Codex applies it), not
    /// `invalid_patch`.
    #[test]
    fn a_chunk_of_empty_lines_alone_is_context() {
        let h = one("*** Begin Patch\n*** Update File: f\n@@\n-a\n@@\n\n*** End Patch");
        let want = vec![
            chunk(&[], &["a"], &[], false, 3),
            chunk(&[], &[""], &[""], false, 5),
        ];
        assert_eq!(h, update("f", want));
        let p = parse("*** Begin Patch\n*** Update File: f\n@@ h\n\n\n@@\n-a\n*** Delete File: g\n*** End Patch");
        let Hunk::Update { chunks, .. } = &p.unwrap().hunks[0] else {
            panic!("an update")
        };
        let want = chunk(&["h"], &["", ""], &["", ""], false, 3);
        assert_eq!(chunks[..], [want, chunk(&[], &["a"], &[], false, 6)]);
        let p =
            parse("*** Begin Patch\n*** Update File: f\n@@\n\n*** Delete File: f\n*** End Patch");
        let h = &p.unwrap().hunks[0];
        assert_eq!(h, &update("f", vec![chunk(&[], &[""], &[""], false, 3)]));
    }

    /// Empty lines starting the first chunk are its context, as Codex
    /// takes them (it skips blank lines only before a later chunk), so
    /// `+X` after them is not an addition at the end.
    #[test]
    fn empty_lines_starting_the_first_chunk_are_context() {
        let h = one("*** Begin Patch\n*** Update File: f\n\n+X\n*** End Patch");
        assert_eq!(
            h,
            update("f", vec![chunk(&[], &[""], &["", "X"], false, 3)])
        );
        let h = one("*** Begin Patch\n*** Update File: f\n*** Move to: g\n\n\n-a\n*** End Patch");
        let Hunk::Update { chunks, .. } = h else {
            panic!("an update")
        };
        assert_eq!(chunks, [chunk(&[], &["", "", "a"], &["", ""], false, 4)]);
        // After End of File they separate the next chunk.
        let h = one(
            "*** Begin Patch\n*** Update File: f\n-a\n*** End of File\n\n@@\n-b\n*** End Patch",
        );
        let want = vec![
            chunk(&[], &["a"], &[], true, 3),
            chunk(&[], &["b"], &[], false, 6),
        ];
        assert_eq!(h, update("f", want));
    }

    #[test]
    fn end_of_file_marker() {
        let h = one(
            "*** Begin Patch\n*** Update File: f\n@@\n last\n+tail\n*** End of File\n*** End Patch",
        );
        assert_eq!(
            h,
            update("f", vec![chunk(&[], &["last"], &["last", "tail"], true, 3)])
        );
        // Empty lines before the marker are context: the file's last lines.
        let h = one("*** Begin Patch\n*** Update File: f\n x\n\n*** End of File\n*** End Patch");
        assert_eq!(
            h,
            update("f", vec![chunk(&[], &["x", ""], &["x", ""], true, 3)])
        );
        let h = one(
            "*** Begin Patch\n*** Update File: f\n-z\n*** End of File  \n@@ h\n+q\n*** End Patch",
        );
        assert_eq!(
            h,
            update(
                "f",
                vec![
                    chunk(&[], &["z"], &[], true, 3),
                    chunk(&["h"], &[], &["q"], false, 5)
                ]
            )
        );
    }

    #[test]
    fn hunk_after_an_update_ends_its_chunks() {
        let p = parse(
            "*** Begin Patch\n*** Update File: f\n@@\n+x\n*** Add File: g\n+y\n*** End Patch",
        )
        .unwrap();
        assert_eq!(p.hunks.len(), 2);
        assert_eq!(
            p.hunks[1],
            Hunk::Add {
                path: "g".into(),
                content: "y\n".into()
            }
        );
    }

    #[test]
    fn errors_name_the_line_and_what_was_expected() {
        fails("", 1, "expected '*** Begin Patch': the text is blank");
        fails("\n \n", 1, "expected '*** Begin Patch': the text is blank");
        fails(
            "hello\n*** End Patch",
            1,
            "expected '*** Begin Patch', found 'hello'",
        );
        fails(
            "*** Begin Patch\n*** Delete File: a",
            2,
            "'*** End Patch' as the last line",
        );
        fails("*** Begin Patch", 1, "'*** End Patch' as the last line");
        fails("*** Begin Patch\n*** End Patch", 2, "the patch is empty");
        fails(
            "*** Begin Patch\n\n*** Frobnicate: x\n*** End Patch",
            3,
            "found '*** Frobnicate: x'",
        );
        fails(
            "*** Begin Patch\n*** Update File: f\n*** End Patch",
            2,
            "at least one chunk",
        );
        fails(
            "*** Begin Patch\n*** Update File: f\n*** Move to: g\n*** End Patch",
            2,
            "at least one chunk",
        );
        fails(
            "*** Begin Patch\n*** Add File:   \n+x\n*** End Patch",
            2,
            "a path",
        );
        fails(
            "*** Begin Patch\n*** Update File: f\n@@\n-a\nbad\n*** End Patch",
            5,
            "'@@' to start the next chunk, found 'bad'",
        );
        fails(
            "*** Begin Patch\n*** Update File: f\nbad\n*** End Patch",
            3,
            "starting with ' ', '-' or '+', found 'bad'",
        );
        fails(
            "*** Begin Patch\n*** Update File: f\n@@ h\n*** End of File\n*** End Patch",
            4,
            "starting with ' ', '-' or '+'",
        );
        // An Add File line without '+' is not content: the next hunk is expected.
        fails(
            "*** Begin Patch\n*** Add File: a\n+x\ny\n*** End Patch",
            4,
            "found 'y'",
        );
        // The heredoc line counts in line numbers.
        fails(
            "<<EOF\n*** Begin Patch\n*** Nope\n*** End Patch\nEOF",
            3,
            "found '*** Nope'",
        );
    }

    #[test]
    fn operation_diffs() {
        assert_eq!(
            parse_update_diff("@@ def f():\n-    a\n+    b\n").unwrap(),
            vec![chunk(&["def f():"], &["    a"], &["    b"], false, 1)]
        );
        assert_eq!(
            parse_update_diff(" x\n+y").unwrap(),
            vec![chunk(&[], &["x"], &["x", "y"], false, 1)]
        );
        assert_eq!(parse_update_diff("").unwrap_err().line, 1);
        assert!(parse_update_diff("@@\n-a\n*** Add File: x\n")
            .unwrap_err()
            .expected
            .contains("found '*** Add File: x'"));
        assert_eq!(parse_create_diff("+a\n+b\n").unwrap(), "a\nb\n");
        assert_eq!(parse_create_diff("").unwrap(), "");
        assert_eq!(
            parse_create_diff("+a\nb").unwrap_err(),
            err(1, "expected a '+' line, found 'b'".into())
        );
    }

    #[test]
    fn a_stray_end_patch_or_second_move_is_named_at_its_line() {
        fails(
            "*** Begin Patch\n*** End Patch\n*** Begin Patch\n*** End Patch",
            2,
            "only as the last line",
        );
        fails(
            "*** Begin Patch\n*** Update File: f\n@@\n-a\n*** End Patch\n*** End Patch",
            5,
            "only as the last line",
        );
        fails(
            "*** Begin Patch\n*** Update File: f\n*** Move to: g\n*** Move to: h\n@@\n a\n*** End Patch",
            4,
            "found a second",
        );
    }

    #[test]
    fn a_byte_order_mark_before_the_patch_is_dropped() {
        assert_eq!(
            one("\u{feff}*** Begin Patch\n*** Delete File: d\n*** End Patch"),
            Hunk::Delete { path: "d".into() }
        );
    }

    #[test]
    fn long_found_text_is_cut() {
        let e = parse(&format!("{}\n*** End Patch", "x".repeat(500))).unwrap_err();
        assert_eq!(
            e.expected,
            format!("expected '*** Begin Patch', found '{}'", "x".repeat(80))
        );
    }
}
