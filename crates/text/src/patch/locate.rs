//! Where each chunk of an Update goes, and the new content: pure (no I/O).
//!
//! The caller passes the file's text already checked as UTF-8 and with
//! CRLF/CR normalized to LF (the edit contract). Its lines are the text split
//! at LF, without the empty piece after a final newline.
//!
//! Chunks are placed in order; each searches only the part of the file still
//! open to it: after the previous chunk's old lines, then after each of its
//! `@@` header lines in turn (a header is the first line at or after that
//! point that matches it, at the first grade where one does). The chunk's
//! old lines are matched by [`Grade`]s in order; at the first grade with a
//! match there must be exactly one: several refuse with [`Miss::Multiple`]
//! and their lines (the reference appliers take the first; a model fixes
//! the refusal by adding an `@@` header or context), none at any grade is
//! [`Miss::NotFound`]; a chunk that changes nothing (context alone, as a
//! chunk of empty lines is) takes its first match instead, as a header
//! does: it only moves the search. `*** End of File` allows only a match
//! that ends the file. When a chunk is not found and its old lines end in
//! an empty line, it is retried without that line (and without a final
//! empty new line), as Codex does: an empty context line written for the
//! final newline. Not when the parser dropped empty lines ending the chunk
//! as separators: Codex's one retry drops one of those.
//!
//! A pure addition (no old lines) goes right after its last `@@` header, or,
//! with no header (or with `*** End of File`), at the end of the file; one
//! whose only old line was that final empty line goes where the search
//! stands, `*** End of File` or not (Codex's place).
//! Codex puts it at the end of the file even after a header, the Agents SDK
//! at the current position (the start of the file for a first chunk).
//! Where several meet, they go in chunk order; the lines a chunk adds after
//! its last old line, when that is a context line ending the file, go after
//! the additions of earlier chunks at the end (Codex writes a chunk's lines
//! between its context lines, so they meet there).
//!
//! The new content is every line followed by `\n`: an updated file always
//! ends with a newline, as with Codex (a last empty line stays, as there).
//!
//! Searching is `find.rs`'s: a scan while that is cheap, then an index of
//! the lines per grade, so that many chunks cost about the file's size, not
//! chunks times lines, with the same placements.
//!
//! Memory: [`locate`] holds the file's lines as slices of the caller's text
//! (the text itself plus 16 bytes per line, and 4 more per grade indexed),
//! and [`write()`] streams the new content to a sink without building it:
//! about 1.25 times the file for 64-byte lines. The binary never runs it:
//! `stream.rs`'s one pass, and when that cannot prove its answer (a
//! refusal, a loose match overruled later, the retry, `--diff`, more than
//! 64 loose chunks) `passes.rs`, give its answer in memory bounded by the
//! patch, and in time about the file's lines plus the patch's: a line is
//! compared only with the chunks and headers whose anchor (their rarest
//! line) it can match (`table.rs`) and those under way (a chunk whose
//! every line the file repeats still costs those lines times its length). The host's transfer fallback runs this, on
//! the text it downloaded; it is the oracle of both.

use super::chunk::{at_end, keeps, noop, Chunk};
use super::find::Finder;
pub use super::find::Grade;
use super::rewrite::Splice;

/// Where one chunk went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placed {
    /// The grade its old lines matched at (a pure addition: exact).
    pub grade: Grade,
    /// 1-based line of the original file where its old lines start (a pure
    /// addition: the line it is inserted before, one past the last for the
    /// end of the file).
    pub line: usize,
}

/// Why a chunk cannot be placed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Miss {
    /// The old lines occur nowhere open to the chunk, at any grade; `old`
    /// is them joined by `\n`, for the hint finder.
    NotFound {
        /// The chunk's old lines, joined.
        old: String,
    },
    /// An `@@` header line occurs nowhere open to the chunk.
    HeaderNotFound {
        /// The header as written.
        header: String,
    },
    /// At the first grade that matched, several places did.
    Multiple {
        /// Their 1-based start lines.
        lines: Vec<usize>,
        /// The grade they matched at.
        grade: Grade,
    },
}

/// A refused Update: which chunk and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// 0-based index of the chunk.
    pub chunk: usize,
    /// Why.
    pub miss: Miss,
}

/// Every chunk placed: what [`write()`] needs, and what to report.
#[derive(Clone, Debug)]
pub struct Plan {
    splices: Vec<Splice>,
    /// Per chunk, in chunk order.
    pub placed: Vec<Placed>,
}

/// The lines of an LF text, without the empty piece after a final newline.
pub fn lines(text: &str) -> Vec<&str> {
    let mut v: Vec<&str> = text.split('\n').collect();
    if v.last() == Some(&"") {
        v.pop();
    }
    v
}

/// Places every chunk (module docs); `strict` allows exact matches only
/// (`--patch-strict`).
#[cfg_attr(as_edit_small, optimize(size))]
pub fn locate(lines: &[&str], chunks: &[Chunk], strict: bool) -> Result<Plan, Refusal> {
    locate_with(&mut Finder::new(lines), chunks, strict)
}

#[cfg_attr(as_edit_small, optimize(size))]
fn locate_with(f: &mut Finder<'_>, chunks: &[Chunk], strict: bool) -> Result<Plan, Refusal> {
    let grades = if strict {
        &Grade::ALL[..1]
    } else {
        &Grade::ALL[..]
    };
    let len = f.len();
    let search = &mut |ci: usize, s: Search, cursor: usize| {
        let c: &Chunk = &chunks[ci];
        let limit = if noop(c) { 1 } else { usize::MAX };
        let (pat, eof, limit) = match s {
            Search::Header(h) => (std::slice::from_ref(&c.headers[h]), false, 1),
            Search::Old => (&c.old[..], c.eof, limit),
            Search::Retry => (&c.old[..c.old.len() - 1], c.eof, limit),
        };
        // A pure addition has nothing to find.
        let hit = match pat.is_empty() {
            true => None,
            false => f.find(pat, cursor, eof, grades, limit),
        };
        Ok(hit.map(|(grade, hits)| (grade, hits.len(), hits)))
    };
    let (mut splices, placed) = place(chunks, len, search, |r, _| r)?;
    // Pure additions at the end of the file may precede later chunks.
    Splice::sort(&mut splices, chunks, len);
    Ok(Plan { splices, placed })
}

/// One search of the placement loop ([`place`]), of one chunk.
#[derive(Clone, Copy, Debug)]
pub(super) enum Search {
    /// Its `@@` header of this index: the first match decides.
    Header(usize),
    /// Its old lines.
    Old,
    /// Its old lines without their final empty one (the retry).
    Retry,
}

/// What a search found: the grade it matched at (the first grade with a
/// match), how many places matched at it, and their 0-based start lines
/// (the first ones, at least the first).
pub(super) type Hit = (Grade, usize, Vec<usize>);

/// Places every chunk in order (module docs) with `search(chunk, what,
/// cursor)`: the loop of the locator and of the passes (`passes.rs`),
/// which search in their own ways. A pure addition that goes at the end
/// of the file is placed at `end`; `refuse` makes the error of a refusal
/// (with the complete count of a [`Miss::Multiple`]'s places, 0 for the
/// other misses). The splices are in chunk order, not yet sorted.
#[cfg_attr(as_edit_small, optimize(size))]
pub(super) fn place<E>(
    chunks: &[Chunk],
    end: usize,
    search: &mut dyn FnMut(usize, Search, usize) -> Result<Option<Hit>, E>,
    refuse: fn(Refusal, usize) -> E,
) -> Result<(Vec<Splice>, Vec<Placed>), E> {
    let (mut splices, mut placed, mut cursor) = (Vec::new(), Vec::new(), 0);
    for (ci, c) in chunks.iter().enumerate() {
        let refused = |miss| refuse(Refusal { chunk: ci, miss }, 0);
        for (h, header) in c.headers.iter().enumerate() {
            match search(ci, Search::Header(h), cursor)? {
                Some((_, _, hits)) => cursor = hits[0] + 1,
                None => {
                    return Err(refused(Miss::HeaderNotFound {
                        header: header.clone(),
                    }))
                }
            }
        }
        let (mut old, mut new) = (&c.old[..], c.new.len());
        let mut hit = None;
        if !old.is_empty() {
            hit = search(ci, Search::Old, cursor)?;
            if hit.is_none() && !c.separated && old.last().is_some_and(|l| l.is_empty()) {
                old = &old[..old.len() - 1];
                if c.new.last().is_some_and(|l| l.is_empty()) {
                    new -= 1;
                }
                hit = search(ci, Search::Retry, cursor)?;
            }
        }
        let (grade, at) = if old.is_empty() {
            // At the end (`at_end`), or here: after its header, or where
            // its only old line, a final empty one, was not found.
            (Grade::Exact, if at_end(c) { end } else { cursor })
        } else {
            match hit {
                None => {
                    return Err(refused(Miss::NotFound {
                        old: c.old.join("\n"),
                    }))
                }
                // A chunk that changes nothing takes its first match.
                Some((grade, count, hits)) if count > 1 && !noop(c) => {
                    let lines = hits.iter().map(|i| i + 1).collect();
                    let miss = Miss::Multiple { lines, grade };
                    return Err(refuse(Refusal { chunk: ci, miss }, count));
                }
                Some((grade, _, hits)) => {
                    cursor = hits[0] + old.len();
                    (grade, hits[0])
                }
            }
        };
        splices.push(Splice {
            at,
            old: old.len(),
            chunk: ci,
            new,
            from: 0,
        });
        placed.push(Placed {
            grade,
            line: at.wrapping_add(1),
        });
    }
    Ok((splices, placed))
}

/// Streams the new content: every line, each followed by `\n`. Returns
/// each chunk's 1-based start line in the new content.
#[cfg_attr(as_edit_small, optimize(size))]
pub fn write(
    lines: &[&str],
    chunks: &[Chunk],
    plan: &Plan,
    out: &mut dyn FnMut(&str),
) -> Vec<usize> {
    let mut line = |l: &str| {
        out(l);
        out("\n");
    };
    let (mut pos, mut grown, mut starts) = (0, 0isize, vec![0; chunks.len()]);
    for s in &plan.splices {
        lines[pos..s.at].iter().for_each(|l| line(l));
        let c = &chunks[s.chunk];
        // Lines written so far: the original ones before `at`, grown by
        // the earlier splices.
        if s.from == 0 {
            starts[s.chunk] = (s.at as isize + grown) as usize + 1;
        }
        grown += (s.new - s.from) as isize - s.old as isize;
        for (j, l) in c.new[..s.new].iter().enumerate().skip(s.from) {
            match keeps(c, j, s.old) {
                Some(k) => line(lines[s.at + k]),
                None => line(l),
            }
        }
        pos = s.at + s.old;
    }
    lines[pos..].iter().for_each(|l| line(l));
    starts
}

/// [`locate`] then [`write()`] into a string: the new content and placements.
pub fn apply(text: &str, chunks: &[Chunk], strict: bool) -> Result<(String, Vec<Placed>), Refusal> {
    let lines = lines(text);
    let plan = locate(&lines, chunks, strict)?;
    let mut s = String::with_capacity(text.len() + 64);
    write(&lines, chunks, &plan, &mut |t| s.push_str(t));
    Ok((s, plan.placed))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(headers: &[&str], old: &[&str], new: &[&str], eof: bool) -> Chunk {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect();
        // Every old line removed, every new one added: no context.
        Chunk {
            headers: s(headers),
            old: s(old),
            new: s(new),
            keep: vec![None; new.len()],
            eof,
            separated: false,
            line: 1,
        }
    }

    fn ok(text: &str, chunks: &[Chunk]) -> (String, Vec<(Grade, usize)>) {
        let (s, p) = apply(text, chunks, false).unwrap();
        (s, p.iter().map(|p| (p.grade, p.line)).collect())
    }

    fn no(text: &str, chunks: &[Chunk], strict: bool) -> Refusal {
        apply(text, chunks, strict).unwrap_err()
    }

    #[test]
    fn exact_replacement_and_final_newline_added() {
        assert_eq!(
            ok("a\nb\nc\n", &[c(&[], &["b"], &["B"], false)]),
            ("a\nB\nc\n".into(), vec![(Grade::Exact, 2)])
        );
        assert_eq!(
            ok("a\nb\nc", &[c(&[], &["b"], &["B"], false)]).0,
            "a\nB\nc\n"
        );
        // Trailing blank lines are kept (Codex drops one).
        assert_eq!(ok("a\n\n", &[c(&[], &["a"], &["b"], false)]).0, "b\n\n");
        assert_eq!(ok("a\n", &[c(&[], &["a"], &[], false)]).0, "");
    }

    #[test]
    fn each_grade_in_order() {
        let t = "if x:   \n    y = “q” — z\n";
        assert_eq!(
            ok(t, &[c(&[], &["if x:"], &["if w:"], false)]).1,
            vec![(Grade::TrailingWhitespace, 1)]
        );
        assert_eq!(
            ok(t, &[c(&[], &["  if x:"], &["w"], false)]).1,
            vec![(Grade::Whitespace, 1)]
        );
        let (s, p) = ok(t, &[c(&[], &["y = \"q\" - z"], &["y = 1"], false)]);
        assert_eq!(
            (s.as_str(), p),
            ("if x:   \ny = 1\n", vec![(Grade::Punctuation, 2)])
        );
        // Non-breaking and other Unicode spaces inside a line.
        assert_eq!(
            ok("a\u{a0}b\u{3000}c\n", &[c(&[], &["a b c"], &["d"], false)]).1,
            vec![(Grade::Punctuation, 1)]
        );
        // An exact match wins over an earlier looser one.
        assert_eq!(
            ok("x \nx\n", &[c(&[], &["x"], &["y"], false)]),
            ("x \ny\n".into(), vec![(Grade::Exact, 2)])
        );
    }

    #[test]
    fn strict_mode_is_exact_only() {
        let t = "if x:   \n";
        assert_eq!(
            no(t, &[c(&[], &["if x:"], &["w"], false)], true),
            Refusal {
                chunk: 0,
                miss: Miss::NotFound {
                    old: "if x:".into()
                }
            }
        );
        assert_eq!(
            apply(t, &[c(&[], &["if x:   "], &["w"], false)], true)
                .unwrap()
                .0,
            "w\n"
        );
        let t = "fn a\nfn b \n";
        assert_eq!(
            no(t, &[c(&["fn b"], &["x"], &[], false)], true).miss,
            Miss::HeaderNotFound {
                header: "fn b".into()
            }
        );
    }

    #[test]
    fn several_matches_at_the_first_grade_refuse_with_their_lines() {
        let t = "x\ny\nx\ny\n";
        assert_eq!(
            no(t, &[c(&[], &["x"], &["z"], false)], false),
            Refusal {
                chunk: 0,
                miss: Miss::Multiple {
                    lines: vec![1, 3],
                    grade: Grade::Exact
                }
            }
        );
        // Overlapping candidates count too.
        assert_eq!(
            no("a\na\na\n", &[c(&[], &["a", "a"], &[], false)], false).miss,
            Miss::Multiple {
                lines: vec![1, 2],
                grade: Grade::Exact
            }
        );
        // Looser grade: both trailing-space variants.
        assert_eq!(
            no("x \nx\t\n", &[c(&[], &["x"], &[], false)], false).miss,
            Miss::Multiple {
                lines: vec![1, 2],
                grade: Grade::TrailingWhitespace
            }
        );
        // More context makes it unique.
        assert_eq!(
            ok(t, &[c(&[], &["y", "x"], &["y", "z"], false)]).0,
            "x\ny\nz\ny\n"
        );
    }

    #[test]
    fn a_header_narrows_and_stacked_headers_narrow_in_turn() {
        let t = "class A\n  def m\n    x\nclass B\n  def m\n    x\n";
        assert_eq!(
            no(t, &[c(&[], &["    x"], &["    y"], false)], false).miss,
            Miss::Multiple {
                lines: vec![3, 6],
                grade: Grade::Exact
            }
        );
        assert_eq!(
            ok(t, &[c(&["class B"], &["    x"], &["    y"], false)]),
            (
                "class A\n  def m\n    x\nclass B\n  def m\n    y\n".into(),
                vec![(Grade::Exact, 6)]
            )
        );
        assert_eq!(
            ok(
                t,
                &[c(&["class B", "def m"], &["    x"], &["    y"], false)]
            )
            .1,
            vec![(Grade::Exact, 6)]
        );
        // A header takes its first occurrence; uniqueness is the chunk's.
        assert_eq!(
            no(t, &[c(&["def m"], &["    x"], &["    y"], false)], false).miss,
            Miss::Multiple {
                lines: vec![3, 6],
                grade: Grade::Exact
            }
        );
        assert_eq!(
            no(t, &[c(&["class C"], &["x"], &[], false)], false),
            Refusal {
                chunk: 0,
                miss: Miss::HeaderNotFound {
                    header: "class C".into()
                }
            }
        );
        // Headers are searched after the previous chunk.
        let r = no(
            t,
            &[
                c(&["class B"], &["    x"], &["y"], false),
                c(&["class A"], &["x"], &[], false),
            ],
            false,
        );
        assert_eq!(r.chunk, 1);
    }

    #[test]
    fn later_chunks_search_after_earlier_ones() {
        let t = "a\nx\nb\nx\n";
        let (s, p) = ok(
            t,
            &[
                c(&[], &["a"], &["A"], false),
                c(&[], &["b"], &["B"], false),
                c(&[], &["x"], &["X"], false),
            ],
        );
        assert_eq!((s.as_str(), p[2]), ("A\nx\nB\nX\n", (Grade::Exact, 4)));
        assert_eq!(
            no(
                t,
                &[c(&[], &["b"], &["B"], false), c(&[], &["a"], &["A"], false)],
                false
            ),
            Refusal {
                chunk: 1,
                miss: Miss::NotFound { old: "a".into() }
            }
        );
    }

    #[test]
    fn pure_additions_go_after_the_header_or_at_the_end() {
        let t = "a\ndef f():\nb\n";
        assert_eq!(
            ok(t, &[c(&["def f():"], &[], &["  new"], false)]),
            ("a\ndef f():\n  new\nb\n".into(), vec![(Grade::Exact, 3)])
        );
        assert_eq!(
            ok(t, &[c(&[], &[], &["tail"], false)]),
            ("a\ndef f():\nb\ntail\n".into(), vec![(Grade::Exact, 4)])
        );
        assert_eq!(ok("a", &[c(&[], &[], &["tail"], false)]).0, "a\ntail\n");
        assert_eq!(ok("", &[c(&[], &[], &["only"], false)]).0, "only\n");
        assert_eq!(
            ok(t, &[c(&["a"], &[], &["t"], true)]).0,
            "a\ndef f():\nb\nt\n"
        );
        // An end-of-file addition before a later chunk still lands at the end.
        assert_eq!(
            ok(
                t,
                &[c(&[], &[], &["t"], false), c(&[], &["a"], &["A"], false)]
            )
            .0,
            "A\ndef f():\nb\nt\n"
        );
    }

    #[test]
    fn an_addition_whose_only_old_line_is_empty() {
        // The empty line is context when the file has it where the search
        // stands, and must be unique like any context.
        assert_eq!(
            ok("a\n\nb\n", &[c(&[], &[""], &["x", ""], false)]).0,
            "a\nx\n\nb\n"
        );
        assert_eq!(
            no("\na\n\n", &[c(&[], &[""], &["x", ""], false)], false).miss,
            Miss::Multiple {
                lines: vec![1, 3],
                grade: Grade::Exact
            }
        );
        // Without one, the retry leaves an addition placed at the search point.
        assert_eq!(
            ok(
                "a\nb\n",
                &[
                    c(&[], &["a"], &["A"], false),
                    c(&[], &[""], &["x", ""], false)
                ]
            )
            .0,
            "A\nx\nb\n"
        );
    }

    /// `+X`, an empty line, `*** End of File` on a file
    /// not ending in an empty line: retried without it, the addition stays
    /// where the search stands, as Codex puts it (not at the end).
    #[test]
    fn an_end_of_file_addition_retried_stays_where_the_search_stands() {
        let mut x = c(&[], &[""], &["X", ""], true);
        x.keep = vec![None, Some(0)];
        assert_eq!(ok("a\nb\n", &[x.clone()]).0, "X\na\nb\n");
        let a = c(&[], &["a"], &["A"], false);
        assert_eq!(ok("a\nb\n", &[a, x.clone()]).0, "A\nX\nb\n");
        // Where the file ends in the empty line, it is matched there.
        assert_eq!(ok("a\n\n", &[x]).0, "a\nX\n\n");
    }

    /// A chunk that changes nothing (a chunk of empty
    /// lines alone, context alone) takes its first match, as Codex does,
    /// however many follow: it moves the search, or, not found, stays.
    #[test]
    fn a_chunk_that_changes_nothing_takes_its_first_match() {
        let mut blank = c(&[], &[""], &[""], false);
        blank.keep = vec![Some(0)];
        let b = c(&[], &["b"], &["B"], false);
        let t = "a\n\nb\n\nc\n";
        let (s, p) = ok(t, &[blank.clone(), b.clone()]);
        assert_eq!((s.as_str(), p[0]), ("a\n\nB\n\nc\n", (Grade::Exact, 2)));
        // The search moved past the empty line: "a" is before it.
        let a = c(&[], &["a"], &["A"], false);
        let r = no(t, &[blank.clone(), a.clone()], false);
        assert_eq!(r.miss, Miss::NotFound { old: "a".into() });
        // Not there: a no-op where the search stands.
        assert_eq!(ok("a\nb\n", &[a, blank.clone(), b]).0, "A\nB\n");
        // Loosely: the first at the first grade that matches.
        assert_eq!(
            ok("x\n \n\t\n", &[blank]).1,
            vec![(Grade::TrailingWhitespace, 2)]
        );
        // Context alone, not empty, likewise.
        let mut ctx = c(&[], &["b"], &["b"], false);
        ctx.keep = vec![Some(0)];
        assert_eq!(ok("a\nb\nb\n", &[ctx]).1, vec![(Grade::Exact, 2)]);
    }

    /// An addition at the end, then a chunk whose last
    /// old line is a context line ending the file and which adds lines
    /// after it: Codex places those after the addition (it splits a chunk
    /// at its context lines and sorts additions at one line in chunk
    /// order), not before it.
    #[test]
    fn lines_added_after_a_final_context_line_follow_earlier_additions_at_the_end() {
        let end = c(&[], &[], &["END"], false);
        let mut after = c(&[], &["c"], &["c", "after-c"], false);
        after.keep = vec![Some(0), None];
        let (s, p) = ok("a\nb\nc\n", &[end.clone(), after.clone()]);
        assert_eq!(s, "a\nb\nc\nEND\nafter-c\n");
        assert_eq!(p, vec![(Grade::Exact, 4), (Grade::Exact, 3)]);
        // Not the last line: all of the chunk comes first.
        assert_eq!(
            ok("a\nc\nd\n", &[end.clone(), after.clone()]).0,
            "a\nc\nafter-c\nd\nEND\n"
        );
        // A last line removed, not kept: the chunk's lines come first.
        let gone = c(&[], &["c"], &["x"], false);
        assert_eq!(ok("a\nc\n", &[end.clone(), gone]).0, "a\nx\nEND\n");
        // Additions of later chunks follow, in chunk order.
        let more = c(&[], &[], &["MORE"], false);
        let (s, _) = ok("c\n", &[end, after, more]);
        assert_eq!(s, "c\nEND\nafter-c\nMORE\n");
    }

    #[test]
    fn end_of_file_requires_the_last_lines() {
        let t = "x\ny\nx\n";
        assert_eq!(
            ok(t, &[c(&[], &["x"], &["z"], true)]),
            ("x\ny\nz\n".into(), vec![(Grade::Exact, 3)])
        );
        assert_eq!(
            no(t, &[c(&[], &["y"], &["z"], true)], false).miss,
            Miss::NotFound { old: "y".into() }
        );
        assert_eq!(
            no("a\n", &[c(&[], &["a", "b"], &[], true)], false).miss,
            Miss::NotFound { old: "a\nb".into() }
        );
    }

    #[test]
    fn a_final_empty_context_line_is_retried_without() {
        let (s, _) = ok("a\nb\n", &[c(&[], &["b", ""], &["c", ""], false)]);
        assert_eq!(s, "a\nc\n");
        // When the file has the empty line it is matched as written.
        assert_eq!(
            ok("b\n\nz\n", &[c(&[], &["b", ""], &["c", ""], false)]).0,
            "c\n\nz\n"
        );
    }

    #[test]
    fn not_found_carries_the_old_lines_for_hints() {
        assert_eq!(
            no("a\n", &[c(&[], &["q", "r"], &[], false)], false),
            Refusal {
                chunk: 0,
                miss: Miss::NotFound { old: "q\nr".into() }
            }
        );
        assert_eq!(
            no("", &[c(&[], &["q"], &[], false)], false).miss,
            Miss::NotFound { old: "q".into() }
        );
    }

    #[test]
    fn write_streams_the_same_bytes_as_apply() {
        let t = "1\n2\n3\n4\n";
        let chunks = [
            c(&[], &["2"], &["two", "deux"], false),
            c(&[], &["4"], &[], true),
        ];
        let ls = lines(t);
        let plan = locate(&ls, &chunks, false).unwrap();
        let mut pieces = Vec::new();
        let starts = write(&ls, &chunks, &plan, &mut |p| pieces.push(p.to_owned()));
        assert_eq!(starts, [2, 5]);
        assert_eq!(pieces.concat(), "1\ntwo\ndeux\n3\n");
        assert_eq!(apply(t, &chunks, false).unwrap().0, pieces.concat());
    }

    #[test]
    fn context_lines_keep_the_file_text_at_a_loose_grade() {
        let chunks =
            crate::patch::parse_update_diff("@@\n  if x:\n-   y = “1”\n+    y = 2\n  z\n").unwrap();
        let t = "if x:\t\n    y = \"1\"\n\tz\n";
        assert_eq!(
            ok(t, &chunks),
            (
                "if x:\t\n    y = 2\n\tz\n".into(),
                vec![(Grade::Punctuation, 1)]
            )
        );
        // Exact: the same either way.
        let chunks = crate::patch::parse_update_diff(" a\n-b\n+c\n a\n").unwrap();
        assert_eq!(ok("a\nb\na\n", &chunks).0, "a\nc\na\n");
    }

    /// 2,000 chunks on a 20,000-line file: the scan of the old locator
    /// checked every later start for each chunk's uniqueness (about
    /// 20,000,000 starts here, 9.8 s for 20,000 chunks on 200,000 lines);
    /// the index keeps the work near the file's size, with the same result.
    #[test]
    fn many_chunks_cost_work_near_the_file_size() {
        let n = 20_000;
        let text: String = (0..n)
            .map(|i| match i % 10 {
                0 => format!("fn f{i}() {{\n"),
                _ => format!("    let v{i} = {};\n", i % 7),
            })
            .collect();
        let ls = lines(&text);
        let chunks: Vec<Chunk> = (0..n / 10)
            .map(|k| {
                let (a, b) = (ls[10 * k + 4], ls[10 * k + 5]);
                Chunk {
                    headers: vec![ls[10 * k].to_owned()],
                    old: vec![a.to_owned(), b.to_owned()],
                    new: vec![a.to_owned(), b.replace("let", "let mut")],
                    keep: vec![Some(0), None],
                    eof: false,
                    separated: false,
                    line: 1,
                }
            })
            .collect();
        let mut f = Finder::new(&ls);
        let plan = locate_with(&mut f, &chunks, false).unwrap();
        assert!(f.work <= 5 * n, "{} starts checked for {n} lines", f.work);
        // The scan, unbounded, places every chunk at the same line.
        let mut scan = Finder::with_budget(&ls, usize::MAX);
        let want = locate_with(&mut scan, &chunks, false).unwrap();
        assert!(scan.work > 100 * n, "{}", scan.work);
        assert_eq!(plan.placed, want.placed);
        assert_eq!(
            plan.placed[1999],
            Placed {
                grade: Grade::Exact,
                line: 19_995
            }
        );
    }

    #[test]
    fn grade_names() {
        let names: Vec<_> = Grade::ALL.iter().map(|g| g.name()).collect();
        assert_eq!(
            names,
            ["exact", "trailing_whitespace", "whitespace", "punctuation"]
        );
    }
}
