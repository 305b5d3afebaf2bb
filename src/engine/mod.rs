//! The pure replacement core: no I/O, no allocation proportional to the file.
//!
//! The file's raw bytes are fed in chunks of any size through three stages:
//! strict UTF-8 validation (`utf8.rs`), CRLF/lone-CR → LF normalization
//! (`normalize.rs`), then one matcher per edit (`matcher.rs`; a batch chains
//! them, each edit seeing the previous one's output). This file is the
//! pipeline: [`Engine`] wires the stages, and a batch's `--diff` keeps both
//! texts on the way (`batch_diff.rs`).
//! The output is emitted in slices as soon as it is known. [`replace`] runs the
//! same engine over a whole buffer; the host's transfer fallback uses it, so
//! the native helper and the fallback cannot drift.
//!
//! Semantics are those of the python3 script as-edit replaces: decode strictly,
//! normalize content/OLD/NEW, count non-overlapping occurrences left to right
//! (`str.count`), refuse 0, refuse >1 unless replace-all, replace the first (or
//! every) occurrence.

mod batch_diff;
mod gather;
mod matcher;
mod normalize;
mod utf8;

use batch_diff::BatchDiff;
use gather::Gather;
use matcher::Matcher;
use normalize::Normalizer;
use utf8::Utf8Validator;

pub use normalize::normalize_eol;

/// One replacement, with OLD and NEW already decoded and LF-normalized.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edit {
    old: Vec<u8>,
    new: Vec<u8>,
    replace_all: bool,
    /// `--at-line`: replace only the occurrence that starts on this 1-based
    /// line of the text the edit sees.
    at_line: Option<u64>,
}

impl Edit {
    /// Builds an edit from text; CRLF and lone CR become LF in both strings.
    /// OLD must not be empty (it would match everywhere).
    pub fn new(old: &str, new: &str, replace_all: bool) -> Result<Edit, &'static str> {
        if old.is_empty() {
            return Err("OLD is empty");
        }
        Ok(Edit {
            old: normalize_eol(old.as_bytes()),
            new: normalize_eol(new.as_bytes()),
            replace_all,
            at_line: None,
        })
    }

    /// Restricts the edit to the one occurrence (as counted: non-overlapping,
    /// left to right) that starts on 1-based line `line` of the text this
    /// edit sees (in a batch: after the earlier edits).
    pub fn with_at_line(mut self, line: u64) -> Result<Edit, &'static str> {
        if self.replace_all {
            return Err("at_line conflicts with replace-all");
        }
        if line == 0 {
            return Err("at_line must be at least 1 (lines are 1-based)");
        }
        self.at_line = Some(line);
        Ok(self)
    }

    /// OLD, LF-normalized: the text to find.
    pub fn old_text(&self) -> &[u8] {
        &self.old
    }
    /// NEW, LF-normalized: the text that replaces it.
    pub fn new_text(&self) -> &[u8] {
        &self.new
    }
    /// Whether every occurrence is replaced (else exactly one must exist).
    pub fn replace_all(&self) -> bool {
        self.replace_all
    }
    /// The `--at-line` restriction, if any (see [`Edit::with_at_line`]).
    pub fn at_line(&self) -> Option<u64> {
        self.at_line
    }
}

/// Why an edit was refused. Nothing may be written for any of these.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The file has zero bytes.
    Empty,
    /// The file is not valid UTF-8; `offset` is the raw byte offset of the first bad sequence.
    InvalidUtf8 {
        /// Raw byte offset of the first bad sequence.
        offset: u64,
        /// What is wrong there, in Python's words (`invalid start byte`, …).
        reason: &'static str,
    },
    /// Edit `edit` (0-based) found no occurrence.
    NotFound {
        /// The edit, 0-based (in a batch, its position).
        edit: usize,
    },
    /// Edit `edit` found `count` > 1 occurrences without replace-all.
    Multiple {
        /// The edit, 0-based (in a batch, its position).
        edit: usize,
        /// Occurrences found.
        count: u64,
    },
    /// Edit `edit` (with `at_line`) has `count` ≥ 1 occurrences, none
    /// starting on `line`; `starts` holds the lines where the first
    /// [`AT_LINE_STARTS_MAX`] of them start.
    NotAtLine {
        /// The edit, 0-based (in a batch, its position).
        edit: usize,
        /// The requested 1-based line.
        line: u64,
        /// Occurrences anywhere in the text.
        count: u64,
        /// Start lines of the first occurrences.
        starts: Vec<u64>,
    },
    /// Edit `edit` (with `at_line`) has `count` > 1 occurrences starting on `line`.
    MultipleAtLine {
        /// The edit, 0-based (in a batch, its position).
        edit: usize,
        /// The requested 1-based line.
        line: u64,
        /// Occurrences starting on it.
        count: u64,
    },
}

/// `--report` keeps the lines of the first this many replacements of each
/// edit: a replace-all of millions must not grow memory or the result line.
pub const LINES_MAX: usize = 1000;

/// How many occurrence start lines a [`Refusal::NotAtLine`] carries.
pub const AT_LINE_STARTS_MAX: usize = 20;

/// What one edit did: its count and the 1-based lines (in its own output)
/// where its first [`LINES_MAX`] replacements start (only when line tracking
/// was asked for); `lines_truncated` when there were more.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EditStats {
    /// Replacements made.
    pub count: u64,
    /// 1-based output lines where the first replacements start.
    pub lines: Vec<u64>,
    /// More replacements than `lines` lists.
    pub lines_truncated: bool,
}

/// The outcome of a successful run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Total replacements over all edits.
    pub count: u64,
    /// Each edit's stats, in order.
    pub edits: Vec<EditStats>,
    /// Raw bytes read.
    pub input_len: u64,
    /// The unified diff, when asked for with [`Engine::with_diff`].
    pub diff: Option<Diff>,
}

/// A unified diff of the LF-normalized old text and the new text.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Diff {
    /// None when a batch's texts exceed [`BATCH_DIFF_MAX`].
    pub text: Option<String>,
    /// Cut at [`crate::diff::CAP`], or left out.
    pub truncated: bool,
}

/// A batch's diff needs both whole texts (later edits may rewrite earlier
/// ones), kept in memory up to this size each; past it there is no diff.
pub const BATCH_DIFF_MAX: usize = 4 << 20;

/// Replaces in a whole buffer: the same engine as the streaming path.
pub fn replace(content: &[u8], edits: &[Edit]) -> Result<(Vec<u8>, Summary), Refusal> {
    let mut out = Vec::with_capacity(content.len());
    let mut engine = Engine::new(edits, false);
    engine.feed(content, &mut |b| out.extend_from_slice(b));
    let summary = engine.finish(&mut |b| out.extend_from_slice(b))?;
    Ok((out, summary))
}

/// The streaming engine. Feed raw chunks, then `finish`.
pub struct Engine {
    utf8: Utf8Validator,
    norm: Normalizer,
    stages: Vec<Matcher>,
    /// Batches only: two buffers the stages pass one chunk through in turn.
    bufs: [Vec<u8>; 2],
    /// The last stage's short pieces, passed on in long slices.
    gather: Gather,
    /// `--diff` of a batch (one edit builds its diff in its matcher).
    batch_diff: Option<BatchDiff>,
    input_len: u64,
}

impl Engine {
    /// `track_lines` records the line of every replacement (for `--report`).
    pub fn new(edits: &[Edit], track_lines: bool) -> Engine {
        Engine {
            utf8: Utf8Validator::default(),
            norm: Normalizer::default(),
            stages: edits.iter().map(|e| Matcher::new(e, track_lines)).collect(),
            bufs: [Vec::new(), Vec::new()],
            gather: Gather::default(),
            batch_diff: None,
            input_len: 0,
        }
    }

    /// Also build the unified diff (headed `name`) for [`Summary::diff`].
    /// One edit: from its replacements as they stream by, in bounded memory.
    /// A batch: from both texts, kept up to [`BATCH_DIFF_MAX`] each.
    pub fn with_diff(mut self, name: &str) -> Engine {
        match self.stages.as_mut_slice() {
            [one] => one.diff = Some(Box::new(crate::diff::Builder::new(name, crate::diff::CAP))),
            _ => self.batch_diff = Some(BatchDiff::new(name)),
        }
        self
    }

    /// True once the outcome is known to be a refusal: the caller may stop
    /// writing output (but must keep feeding to learn the final counts,
    /// except after invalid UTF-8, see [`Engine::invalid_utf8`]).
    pub fn doomed(&self) -> bool {
        self.utf8.failed() || self.stages.iter().any(|s| s.doomed())
    }

    /// True once any edit has replaced an occurrence. Until then the output
    /// is exactly the normalized input (what lets the caller defer writing).
    pub fn changed(&self) -> bool {
        self.stages.iter().any(|s| s.replaced)
    }

    /// Whether `out(&[])` marks the first change (see [`Engine::feed`]):
    /// with one edit. In a batch a later edit cannot tell where an earlier
    /// one's change lies in its own output.
    pub fn marks_changes(&self) -> bool {
        self.stages.len() == 1
    }

    /// True once a CR was fed: until then normalizing changed nothing, and
    /// the output so far is byte for byte the raw input.
    pub fn saw_cr(&self) -> bool {
        self.norm.saw_cr
    }

    /// True once invalid UTF-8 was seen: the outcome is final, reading can stop.
    pub fn invalid_utf8(&self) -> bool {
        self.utf8.failed()
    }

    /// Feeds the next raw chunk (any size, split anywhere); output known so
    /// far goes to `out` in slices. Nothing more is processed after invalid
    /// UTF-8.
    ///
    /// With one edit ([`Engine::marks_changes`]), `out(&[])` is called once,
    /// just before the first output that differs from the input (the first
    /// NEW; here or in [`Engine::finish`]): a caller that defers writing
    /// counts the output before it instead of keeping it. Callers that
    /// append slices need not care (an empty slice appends nothing).
    pub fn feed(&mut self, chunk: &[u8], out: &mut dyn FnMut(&[u8])) {
        if self.utf8.failed() {
            return;
        }
        self.input_len += chunk.len() as u64;
        self.utf8.feed(chunk);
        if self.utf8.failed() {
            return;
        }
        let Engine {
            norm,
            stages,
            bufs,
            gather,
            batch_diff,
            ..
        } = self;
        match batch_diff {
            None => norm.feed(chunk, &mut |b| feed_stages(stages, bufs, gather, b, out)),
            Some(d) => norm.feed(chunk, &mut |b| {
                d.keep(false, b);
                feed_stages(stages, bufs, gather, b, &mut |o| {
                    d.keep(true, o);
                    out(o)
                })
            }),
        }
    }

    /// Ends the input: flushes the held-back output to `out` and returns the
    /// summary, or the refusal (invalid UTF-8, then an empty file, then the
    /// first edit refused, in order). After a refusal the output must be
    /// discarded.
    pub fn finish(mut self, out: &mut dyn FnMut(&[u8])) -> Result<Summary, Refusal> {
        if let Some((offset, reason)) = self.utf8.finish() {
            return Err(Refusal::InvalidUtf8 { offset, reason });
        }
        if self.input_len == 0 {
            return Err(Refusal::Empty);
        }
        let Engine {
            norm,
            stages,
            bufs,
            gather,
            batch_diff,
            ..
        } = &mut self;
        match batch_diff {
            None => {
                norm.finish(&mut |b| feed_stages(stages, bufs, gather, b, out));
                finish_stages(stages, bufs, gather, out);
            }
            Some(d) => {
                norm.finish(&mut |b| {
                    d.keep(false, b);
                    feed_stages(stages, bufs, gather, b, &mut |o| {
                        d.keep(true, o);
                        out(o)
                    })
                });
                finish_stages(stages, bufs, gather, &mut |o| {
                    d.keep(true, o);
                    out(o)
                });
            }
        }
        let mut summary = Summary {
            input_len: self.input_len,
            diff: self.batch_diff.take().map(BatchDiff::finish),
            ..Summary::default()
        };
        for (i, mut s) in self.stages.into_iter().enumerate() {
            if let Some(d) = s.diff.take() {
                let (text, truncated) = d.finish();
                summary.diff = Some(Diff {
                    text: Some(text),
                    truncated,
                });
            }
            let stats = s.outcome(i)?;
            summary.count += stats.count;
            summary.edits.push(stats);
        }
        Ok(summary)
    }
}

/// Passes `data` through every stage in turn. A loop, not a recursion: a
/// batch of 100,000 edits must not need 100,000 stack frames. The last
/// stage's output is gathered (`gather.rs`) and all of it passed on before
/// returning; a batch passes the chunk between two reused buffers, so memory
/// is one chunk's text per step, whatever the batch size.
fn feed_stages(
    stages: &mut [Matcher],
    bufs: &mut [Vec<u8>; 2],
    gather: &mut Gather,
    data: &[u8],
    out: &mut dyn FnMut(&[u8]),
) {
    let Some((last, init)) = stages.split_last_mut() else {
        return out(data);
    };
    let [cur, next] = bufs;
    if let Some((first, middle)) = init.split_first_mut() {
        cur.clear();
        first.feed(data, &mut append(cur));
        for s in middle {
            if cur.is_empty() {
                return; // a matcher holding everything back: nothing flows on
            }
            next.clear();
            s.feed(cur, &mut append(next));
            std::mem::swap(cur, next);
        }
    }
    let data = if init.is_empty() { data } else { &cur[..] };
    last.feed(data, &mut gathered(gather, out));
    gather.flush(out);
}

/// Flushes the stages in order: each gets what the earlier ones released at
/// their end, then releases its own held-back tail. Linear in the batch size.
fn finish_stages(
    stages: &mut [Matcher],
    bufs: &mut [Vec<u8>; 2],
    gather: &mut Gather,
    out: &mut dyn FnMut(&[u8]),
) {
    let Some((last, init)) = stages.split_last_mut() else {
        return;
    };
    let [cur, next] = bufs;
    cur.clear();
    for s in init {
        next.clear();
        {
            let mut push = append(next);
            s.feed(cur, &mut push);
            s.finish(&mut push);
        }
        std::mem::swap(cur, next);
    }
    {
        let mut g = gathered(gather, out);
        last.feed(cur, &mut g);
        last.finish(&mut g);
    }
    gather.flush(out);
}

/// A stage's output appended to the next one's input (one closure type, so
/// the matcher is compiled once for it).
fn append(v: &mut Vec<u8>) -> impl FnMut(&[u8]) + '_ {
    |b| v.extend_from_slice(b)
}

/// The last stage's output, through the gather (inlined into the matcher's
/// loop: no dynamic call per piece).
fn gathered<'a>(gather: &'a mut Gather, out: &'a mut dyn FnMut(&[u8])) -> impl FnMut(&[u8]) + 'a {
    |b| gather.put(b, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(old: &str, new: &str, all: bool) -> Edit {
        Edit::new(old, new, all).unwrap()
    }

    fn run(content: &[u8], edits: &[Edit]) -> Result<(Vec<u8>, u64), Refusal> {
        replace(content, edits).map(|(b, s)| (b, s.count))
    }

    #[test]
    fn single_replacement() {
        assert_eq!(
            run(b"hello world", &[e("world", "there", false)]),
            Ok((b"hello there".to_vec(), 1))
        );
    }

    #[test]
    fn non_overlapping_count_like_python() {
        assert_eq!(
            run(b"aaaaa", &[e("aa", "b", false)]),
            Err(Refusal::Multiple { edit: 0, count: 2 })
        );
        assert_eq!(
            run(b"aaaaa", &[e("aa", "b", true)]),
            Ok((b"bba".to_vec(), 2))
        );
    }

    #[test]
    fn refusals() {
        assert_eq!(run(b"", &[e("a", "b", false)]), Err(Refusal::Empty));
        assert_eq!(
            run(b"abc", &[e("x", "y", false)]),
            Err(Refusal::NotFound { edit: 0 })
        );
        assert_eq!(
            run(b"ab\xffc", &[e("a", "b", false)]),
            Err(Refusal::InvalidUtf8 {
                offset: 2,
                reason: "invalid start byte"
            })
        );
        assert_eq!(
            run(b"ab\xe2\x82", &[e("a", "b", false)]),
            Err(Refusal::InvalidUtf8 {
                offset: 2,
                reason: "unexpected end of data"
            })
        );
        assert_eq!(
            run(b"a\xe2\x41", &[e("a", "b", false)]),
            Err(Refusal::InvalidUtf8 {
                offset: 1,
                reason: "invalid continuation byte"
            })
        );
    }

    #[test]
    fn crlf_and_lone_cr_normalize_everywhere() {
        assert_eq!(
            run(b"a\r\nb\rc\n", &[e("a\nb", "x\r\ny", false)]),
            Ok((b"x\ny\nc\n".to_vec(), 1))
        );
        // The >1 guard still fires on CRLF content.
        assert_eq!(
            run(b"x\r\nx\r\n", &[e("x\n", "y", false)]),
            Err(Refusal::Multiple { edit: 0, count: 2 })
        );
        // \r\r\n is a lone CR then a CRLF: two newlines.
        assert_eq!(
            run(b"a\r\r\nb", &[e("a\n\nb", "ok", false)]),
            Ok((b"ok".to_vec(), 1))
        );
    }

    #[test]
    fn bom_and_nul_are_content() {
        assert_eq!(
            run("\u{feff}x\0y".as_bytes(), &[e("x\0", "😀", false)]),
            Ok(("\u{feff}😀y".as_bytes().to_vec(), 1))
        );
    }

    #[test]
    fn empty_new_deletes() {
        assert_eq!(
            run(b"keep drop keep", &[e(" drop", "", false)]),
            Ok((b"keep keep".to_vec(), 1))
        );
    }

    #[test]
    fn empty_old_rejected() {
        assert!(Edit::new("", "x", false).is_err());
    }

    #[test]
    fn batch_applies_in_order_and_reports_first_failure() {
        let edits = [e("a", "b", false), e("b", "c", true)];
        assert_eq!(run(b"a b", &edits), Ok((b"c c".to_vec(), 3)));
        let edits = [e("a", "b", false), e("zz", "c", false), e("q", "r", false)];
        assert_eq!(run(b"a", &edits), Err(Refusal::NotFound { edit: 1 }));
    }

    #[test]
    fn split_sequences_and_crs_across_chunks() {
        let content = "é\r\n€😀\rtail".as_bytes();
        let edits = [e("€😀\n", "X", false)];
        let whole = run(content, &edits).unwrap();
        for size in 1..content.len() {
            let mut out = Vec::new();
            let mut engine = Engine::new(&edits, false);
            for c in content.chunks(size) {
                engine.feed(c, &mut |b| out.extend_from_slice(b));
            }
            let s = engine.finish(&mut |b| out.extend_from_slice(b)).unwrap();
            assert_eq!((out, s.count), whole, "chunk size {size}");
        }
    }

    #[test]
    fn lines_are_those_of_the_output() {
        let mut engine = Engine::new(&[e("x", "a\nb", true)], true);
        let mut out = Vec::new();
        engine.feed(b"x\nx\n\nx", &mut |b| out.extend_from_slice(b));
        let s = engine.finish(&mut |b| out.extend_from_slice(b)).unwrap();
        assert_eq!(out, b"a\nb\na\nb\n\na\nb");
        assert_eq!(s.edits[0].lines, vec![1, 3, 6]);
    }

    /// A long batch (a chain where each edit rewrites the previous one's
    /// replacement, mixed with independent ones) equals applying the edits
    /// one at a time, in any chunking, and runs on a 256 KiB stack (the old
    /// recursive chain needed a frame per edit).
    #[test]
    fn long_batch_equals_edits_one_by_one() {
        let content = "v0\nkeep\r\nw0 w0\n".repeat(3);
        let mut edits = Vec::new();
        for i in 0..5000 {
            edits.push(e(&format!("v{i}\n"), &format!("v{}\n", i + 1), true));
            if i % 500 == 0 {
                edits.push(e(&format!("w{i}"), &format!("w{}", i + 500), true));
            }
        }
        let mut one_by_one = content.as_bytes().to_vec();
        let mut total = 0;
        for ed in &edits {
            let (next, c) = run(&one_by_one, std::slice::from_ref(ed)).unwrap();
            one_by_one = next;
            total += c;
        }
        assert_eq!(
            one_by_one,
            "v5000\nkeep\nw5000 w5000\n".repeat(3).into_bytes()
        );
        let small_stack = std::thread::Builder::new().stack_size(256 * 1024);
        let streamed = small_stack
            .spawn(move || {
                [1, 2, 5, 64, content.len()].map(|size| {
                    let mut out = Vec::new();
                    let mut engine = Engine::new(&edits, false);
                    for c in content.as_bytes().chunks(size) {
                        engine.feed(c, &mut |b| out.extend_from_slice(b));
                    }
                    let s = engine.finish(&mut |b| out.extend_from_slice(b)).unwrap();
                    (out, s.count)
                })
            })
            .unwrap()
            .join()
            .unwrap();
        for (out, count) in streamed {
            assert_eq!((&out, count), (&one_by_one, total));
        }
    }

    #[test]
    fn lines_stop_at_the_cap() {
        let mut engine = Engine::new(&[e("a", "b", true)], true);
        let mut out = Vec::new();
        engine.feed(&b"a\n".repeat(LINES_MAX + 5), &mut |b| {
            out.extend_from_slice(b)
        });
        let s = engine.finish(&mut |b| out.extend_from_slice(b)).unwrap();
        assert_eq!(out, b"b\n".repeat(LINES_MAX + 5));
        assert_eq!(s.count, LINES_MAX as u64 + 5);
        assert_eq!(s.edits[0].lines, (1..=LINES_MAX as u64).collect::<Vec<_>>());
        assert!(s.edits[0].lines_truncated);
        // Exactly at the cap: complete, not truncated.
        let mut engine = Engine::new(&[e("a", "b", true)], true);
        engine.feed(&b"a\n".repeat(LINES_MAX), &mut |_| {});
        let s = engine.finish(&mut |_| {}).unwrap();
        assert_eq!(
            (s.edits[0].lines.len(), s.edits[0].lines_truncated),
            (LINES_MAX, false)
        );
    }

    /// What the filesystem layer defers on: no change until a replacement is
    /// emitted (a kept occurrence under --at-line, or one met after the
    /// only allowed one, is no change), and whether a CR was fed.
    #[test]
    fn changed_and_saw_cr() {
        let mut eng = Engine::new(&[e("bc", "B", false)], false);
        eng.feed(b"aaa\n", &mut |_| {});
        assert!(!eng.changed() && !eng.saw_cr());
        eng.feed(b"x\r\nb", &mut |_| {});
        assert!(eng.saw_cr());
        assert!(
            !eng.changed(),
            "a match held in the tail is not emitted yet"
        );
        eng.feed(b"c", &mut |_| {});
        assert!(eng.changed());
        let mut eng = Engine::new(&[at("b", "B", 2)], false);
        eng.feed(b"b\n", &mut |_| {});
        assert!(!eng.changed());
    }

    fn at(old: &str, new: &str, line: u64) -> Edit {
        e(old, new, false).with_at_line(line).unwrap()
    }

    #[test]
    fn at_line_picks_the_occurrence_on_that_line() {
        let text = b"x = 1\ny = x\r\nx = x\n";
        assert_eq!(
            run(text, &[at("x = ", "z = ", 3)]),
            Ok((b"x = 1\ny = x\nz = x\n".to_vec(), 1))
        );
        // A multi-line OLD starting on line 2 (lines are those of the input).
        assert_eq!(
            run(b"a\nb\na\nb\n", &[at("a\nb", "c", 3)]),
            Ok((b"a\nb\nc\n".to_vec(), 1))
        );
        // Every chunking gives the same answer.
        let edits = [at("ab", "X", 3)];
        let content = b"ab\r\nab ab\nab";
        let whole = run(content, &edits);
        assert_eq!(whole, Ok((b"ab\nab ab\nX".to_vec(), 1)));
        for size in 1..content.len() {
            let mut out = Vec::new();
            let mut engine = Engine::new(&edits, false);
            for c in content.chunks(size) {
                engine.feed(c, &mut |b| out.extend_from_slice(b));
            }
            let s = engine
                .finish(&mut |b| out.extend_from_slice(b))
                .map(|s| (out, s.count));
            assert_eq!(s, whole, "chunk size {size}");
        }
    }

    #[test]
    fn at_line_refusals() {
        assert_eq!(
            run(b"a\nb a\nc\na", &[at("a", "z", 3)]),
            Err(Refusal::NotAtLine {
                edit: 0,
                line: 3,
                count: 3,
                starts: vec![1, 2, 4]
            })
        );
        assert_eq!(
            run(b"a\naa\n", &[at("a", "z", 2)]),
            Err(Refusal::MultipleAtLine {
                edit: 0,
                line: 2,
                count: 2
            })
        );
        // No occurrence at all stays the plain refusal.
        assert_eq!(
            run(b"abc", &[at("x", "z", 1)]),
            Err(Refusal::NotFound { edit: 0 })
        );
        // Only the first 20 start lines are carried.
        let many = "q\n".repeat(30);
        match run(many.as_bytes(), &[at("q", "z", 31)]) {
            Err(Refusal::NotAtLine { count, starts, .. }) => {
                assert_eq!(count, 30);
                assert_eq!(starts, (1..=20).collect::<Vec<u64>>());
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn at_line_is_doomed_once_the_line_has_passed() {
        let mut engine = Engine::new(&[at("a", "z", 1)], false);
        engine.feed(b"b\n", &mut |_| {});
        assert!(engine.doomed());
        let mut engine = Engine::new(&[at("a", "z", 2)], false);
        engine.feed(b"a\na", &mut |_| {});
        assert!(
            !engine.doomed(),
            "several occurrences are fine with at_line"
        );
    }

    #[test]
    fn at_line_in_a_batch_counts_lines_of_the_previous_output() {
        // Edit 1 joins lines 1 and 2, so the second "b" moves to line 2.
        let edits = [e("a\n", "a ", false), at("b", "c", 2)];
        assert_eq!(run(b"a\nb\nb\n", &edits), Ok((b"a b\nc\n".to_vec(), 2)));
    }

    #[test]
    fn at_line_rejects_replace_all_and_zero() {
        assert!(e("a", "b", true).with_at_line(1).is_err());
        assert!(e("a", "b", false).with_at_line(0).is_err());
        assert_eq!(at("a", "b", 4).at_line(), Some(4));
    }
}
