//! The pure replacement core: no I/O, no allocation proportional to the file.
//!
//! The file's raw bytes are fed in chunks of any size through three stages:
//! strict UTF-8 validation (`utf8.rs`), CRLF/lone-CR → LF normalization
//! (`normalize.rs`), then one matcher per edit (`matcher.rs`; a batch chains
//! them, each edit seeing the previous one's output). This file is the
//! pipeline: [`Engine`] wires the stages, and a batch's `--diff` keeps both
//! texts on the way (`batch_diff.rs`). An [`Edit`] is `edit.rs`.
//! The output is emitted in slices as soon as it is known. [`replace`] runs the
//! same engine over a whole buffer; the host's transfer fallback uses it, so
//! the native helper and the fallback cannot drift.
//!
//! Semantics are those of the python3 script as-edit replaces: decode strictly,
//! normalize content/OLD/NEW, count non-overlapping occurrences left to right
//! (`str.count`), refuse 0, refuse >1 unless replace-all, replace the first (or
//! every) occurrence.

mod batch_diff;
mod edit;
mod gather;
mod matcher;
mod needle;
mod normalize;
mod utf8;

use batch_diff::BatchDiff;
use gather::{Gather, Out};
use matcher::Stages;
use normalize::Normalizer;
use utf8::Utf8Validator;

pub use edit::{Edit, INLINE, OLD_MAX};
pub use needle::Needle;
pub use normalize::normalize_eol;

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

/// A [`Summary`] holds the stats of a batch's first this many edits (and
/// its last one's): the result line and the memory stay bounded however
/// many edits a batch has.
pub const EDITS_MAX: usize = 1000;

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
    /// The stats of the first [`EDITS_MAX`] edits, in order (every edit's,
    /// in a batch no longer than that).
    pub edits: Vec<EditStats>,
    /// The batch has more than [`EDITS_MAX`] edits: `edits` holds the
    /// first ones, `last` the last one's.
    pub last: Option<EditStats>,
    /// Raw bytes read.
    pub input_len: u64,
    /// The unified diff, when asked for with [`Engine::with_diff`].
    pub diff: Option<Diff>,
}

impl Summary {
    /// The last edit's stats (its lines are those of the new content).
    pub fn last_edit(&self) -> Option<&EditStats> {
        self.last.as_ref().or(self.edits.last())
    }
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

/// The streaming engine over the edits it borrows. Feed raw chunks, then
/// `finish`.
pub struct Engine<'a> {
    utf8: Utf8Validator,
    norm: Normalizer,
    stages: Stages<'a>,
    /// Batches only: two buffers the stages pass one chunk through in turn.
    bufs: [Vec<u8>; 2],
    /// The last stage's short pieces, passed on in long slices.
    gather: Gather,
    /// `--diff` of a batch (one edit builds its diff in its matcher).
    batch_diff: Option<BatchDiff>,
    input_len: u64,
}

impl<'a> Engine<'a> {
    /// `track_lines` records the line of every replacement (for `--report`)
    /// of the edits a [`Summary`] reports: the first [`EDITS_MAX`] and the last.
    #[cfg_attr(as_edit_small, optimize(size))] // once a run
    pub fn new(edits: &'a [Edit], track_lines: bool) -> Engine<'a> {
        let n = edits.len();
        Engine {
            utf8: Utf8Validator::default(),
            norm: Normalizer::default(),
            stages: Stages::new(edits, |k| track_lines && (k < EDITS_MAX || k + 1 == n)),
            bufs: [Vec::new(), Vec::new()],
            gather: Gather::default(),
            batch_diff: None,
            input_len: 0,
        }
    }

    /// Also build the unified diff (headed `name`) for [`Summary::diff`].
    /// One edit: from its replacements as they stream by, in bounded memory.
    /// A batch: from both texts, kept up to [`BATCH_DIFF_MAX`] each.
    pub fn with_diff(mut self, name: &str) -> Engine<'a> {
        if self.stages.len() == 1 {
            let b = crate::diff::Builder::new(name, crate::diff::CAP);
            self.stages.set_diff(Box::new(b));
        } else {
            self.batch_diff = Some(BatchDiff::new(name));
        }
        self
    }

    /// True once the outcome is known to be a refusal: the caller may stop
    /// writing output (but must keep feeding to learn the final counts,
    /// except after invalid UTF-8, see [`Engine::invalid_utf8`]).
    pub fn doomed(&self) -> bool {
        self.utf8.failed() || self.stages.doomed()
    }

    /// True once any edit has replaced an occurrence. Until then the output
    /// is exactly the normalized input (what lets the caller defer writing).
    pub fn changed(&self) -> bool {
        self.stages.changed()
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
    // Not inlined: a copy in each of its callers was 5 KiB of the binary.
    #[inline(never)]
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

    /// With one edit whose OLD is long (over 256 KiB: its carried tail,
    /// `len(OLD) - 1`, is at least 256 KiB), the room after that tail (its
    /// slot is a ring of `len(OLD)` plus 1 MiB: the room runs to the ring's
    /// end, then starts again at its front): the caller may read the next
    /// raw bytes straight into it and call [`Engine::filled`] instead of
    /// `feed`, so the text is never copied into the slot. None otherwise.
    pub fn spare(&mut self) -> Option<&mut [u8]> {
        self.stages.spare()
    }

    /// As [`Engine::feed`] of the first `n` bytes of [`Engine::spare`], just
    /// written by the caller (validated, then normalized where they lie).
    #[cfg_attr(as_edit_small, optimize(size))]
    pub fn filled(&mut self, n: usize, out: &mut dyn FnMut(&[u8])) {
        let Engine {
            utf8,
            norm,
            stages,
            gather,
            input_len,
            ..
        } = self;
        let raw = match stages.spare() {
            Some(raw) if !utf8.failed() => &mut raw[..n],
            _ => return,
        };
        *input_len += n as u64;
        utf8.feed(raw);
        if utf8.failed() {
            return;
        }
        let n = norm.squeeze(raw);
        stages.filled(n, &mut gathered(gather, out));
        gather.flush(out);
    }

    /// Ends the input: flushes the held-back output to `out` and returns the
    /// summary, or the refusal (invalid UTF-8, then an empty file, then the
    /// first edit refused, in order). After a refusal the output must be
    /// discarded.
    #[cfg_attr(as_edit_small, optimize(size))] // once a run
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
        if let Some(d) = self.stages.take_diff() {
            let (text, truncated) = d.finish();
            summary.diff = Some(Diff {
                text: Some(text),
                truncated,
            });
        }
        let n = self.stages.len();
        for k in 0..n {
            let stats = self.stages.outcome(k)?;
            summary.count += stats.count;
            if k < EDITS_MAX {
                summary.edits.push(stats);
            } else if k + 1 == n {
                summary.last = Some(stats);
            }
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
    stages: &mut Stages<'_>,
    bufs: &mut [Vec<u8>; 2],
    gather: &mut Gather,
    data: &[u8],
    out: &mut dyn FnMut(&[u8]),
) {
    let n = stages.len();
    if n == 0 {
        return out(data);
    }
    let [cur, next] = bufs;
    let mut off = 0;
    if n > 1 {
        cur.clear();
        off = stages.feed(0, off, data, &mut append(cur));
        for k in 1..n - 1 {
            if cur.is_empty() {
                return; // a matcher holding everything back: nothing flows on
            }
            next.clear();
            off = stages.feed(k, off, cur, &mut append(next));
            std::mem::swap(cur, next);
        }
    }
    let data = if n == 1 { data } else { &cur[..] };
    stages.feed(n - 1, off, data, &mut gathered(gather, out));
    gather.flush(out);
}

/// Flushes the stages in order: each gets what the earlier ones released at
/// their end, then releases its own held-back tail. Linear in the batch size.
fn finish_stages(
    stages: &mut Stages<'_>,
    bufs: &mut [Vec<u8>; 2],
    gather: &mut Gather,
    out: &mut dyn FnMut(&[u8]),
) {
    let n = stages.len();
    if n == 0 {
        return;
    }
    let [cur, next] = bufs;
    cur.clear();
    let mut off = 0;
    for k in 0..n - 1 {
        next.clear();
        {
            let mut push = append(next);
            stages.feed(k, off, cur, &mut push);
            off = stages.finish(k, off, &mut push);
        }
        std::mem::swap(cur, next);
    }
    {
        let mut g = gathered(gather, out);
        stages.feed(n - 1, off, cur, &mut g);
        stages.finish(n - 1, off, &mut g);
    }
    gather.flush(out);
}

/// A stage's output appended to the next one's input.
fn append(v: &mut Vec<u8>) -> Out<'_> {
    Out::Append(v)
}

/// The last stage's output, through the gather.
fn gathered<'a>(gather: &'a mut Gather, out: &'a mut dyn FnMut(&[u8])) -> Out<'a> {
    Out::Gather(gather, out)
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
        let edits = [e("x", "a\nb", true)];
        let mut engine = Engine::new(&edits, true);
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
        let edits = [e("a", "b", true)];
        let mut engine = Engine::new(&edits, true);
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
        let edits = [e("a", "b", true)];
        let mut engine = Engine::new(&edits, true);
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
        let edits = [e("bc", "B", false)];
        let mut eng = Engine::new(&edits, false);
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
        let edits = [at("b", "B", 2)];
        let mut eng = Engine::new(&edits, false);
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
        let edits = [at("a", "z", 1)];
        let mut engine = Engine::new(&edits, false);
        engine.feed(b"b\n", &mut |_| {});
        assert!(engine.doomed());
        let edits = [at("a", "z", 2)];
        let mut engine = Engine::new(&edits, false);
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

    fn chunked(content: &[u8], edits: &[Edit], size: usize) -> Result<(Vec<u8>, u64), Refusal> {
        let mut out = Vec::new();
        let mut engine = Engine::new(edits, false);
        for c in content.chunks(size) {
            engine.feed(c, &mut |b| out.extend_from_slice(b));
        }
        let s = engine.finish(&mut |b| out.extend_from_slice(b));
        s.map(|s| (out, s.count))
    }

    /// OLDs longer than the chunks, periodic and not, at
    /// the start, straddling chunk edges, back to back, after near misses
    /// and at the end: every chunking gives the oracle's exact bytes
    /// (`str::replace`: non-overlapping, left to right), alone and as the
    /// second edit of a batch; `--at-line` picks the one on its line.
    #[test]
    fn long_olds_across_chunk_edges() {
        // 300 bytes: memchr's finder; LONG + 300: the piece search.
        for len in [300, needle::LONG + 300] {
            long_olds_of(len);
        }
    }

    fn long_olds_of(len: usize) {
        let periodic: String = (0..len as u32)
            .map(|i| char::from(b'a' + (i * 7 % 26) as u8))
            .collect();
        let unique = format!("{}!", &periodic[..len - 1]);
        for old in [periodic, unique] {
            let content = format!(
                "{old}-x-{}\n{old}{old}{}{}{old}",
                &old[..len - 1],
                "y".repeat(1000),
                &old[1..]
            );
            let count = content.matches(old.as_str()).count() as u64;
            assert_eq!(count, 4);
            let want = content.replace(old.as_str(), "NEW").into_bytes();
            let all = [e(&old, "NEW", true)];
            let batch = [e("-x-", "-x-", false), e(&old, "NEW", true)];
            let one = [e(&old, "NEW", false)];
            for size in [
                1,
                7,
                64,
                len - 2,
                len - 1,
                len,
                len + 1,
                2 * len - 1,
                2 * len,
                2 * len + 1,
                3 * len - 1,
                1000,
                content.len(),
            ] {
                let c = content.as_bytes();
                assert_eq!(chunked(c, &all, size), Ok((want.clone(), count)), "{size}");
                assert_eq!(
                    chunked(c, &batch, size),
                    Ok((want.clone(), count + 1)),
                    "{size}"
                );
                assert_eq!(
                    chunked(c, &one, size),
                    Err(Refusal::Multiple { edit: 0, count }),
                    "{size}"
                );
                let lines = format!("{old}\n{old}\n{old}");
                let second = format!("{old}\nNEW\n{old}").into_bytes();
                let on_2 = [at(&old, "NEW", 2)];
                assert_eq!(
                    chunked(lines.as_bytes(), &on_2, size),
                    Ok((second, 1)),
                    "{size}"
                );
            }
        }
    }

    /// Feeds `content` as a caller reading into [`Engine::spare`] does, `p`
    /// bytes a read at most (or whole chunks of `p` through `feed` when the
    /// engine has no spare room); the summary's count and the first edit's
    /// lines.
    fn direct(
        content: &[u8],
        edits: &[Edit],
        p: usize,
    ) -> Result<(Vec<u8>, u64, Vec<u64>), Refusal> {
        let mut out = Vec::new();
        let mut engine = Engine::new(edits, true);
        let mut rest = content;
        while !rest.is_empty() {
            let n = match engine.spare() {
                Some(s) => {
                    let n = p.min(s.len()).min(rest.len());
                    s[..n].copy_from_slice(&rest[..n]);
                    engine.filled(n, &mut |b| out.extend_from_slice(b));
                    n
                }
                None => {
                    let n = p.min(rest.len());
                    engine.feed(&rest[..n], &mut |b| out.extend_from_slice(b));
                    n
                }
            };
            rest = &rest[n..];
        }
        let s = engine.finish(&mut |b| out.extend_from_slice(b))?;
        Ok((out, s.count, s.edits[0].lines.clone()))
    }

    /// A long OLD's text read straight into its tail slot: occurrences at the start, straddling the slot's windows and the
    /// carried tail, back to back and at the end, in LF and in CRLF text
    /// (a CRLF split between two reads, a lone CR, a final CR), in reads of
    /// any size: the oracle's exact bytes (`str::replace` of the normalized
    /// text), count and lines; `--at-line`, a refusal's count and invalid
    /// UTF-8's offset as the chunked path has them.
    #[test]
    fn a_long_old_read_into_its_slot() {
        let len = matcher::DIRECT + 300;
        let line = |i: usize| format!("line {i:07} of the long old\n");
        let mut old = String::new();
        for i in 0.. {
            if old.len() >= len {
                break;
            }
            old.push_str(&line(i));
        }
        let keep = old.len() - 1;
        let filler = |n: usize| "f".repeat(n - 1) + "\n";
        // Starts at 0, then at the end of the first window (straddling it),
        // just inside the carried tail, back to back, and at the very end.
        let text = format!(
            "{old}{}{old}{}{old}{old}{}{old}",
            filler(keep - 5),
            filler(keep + 3),
            filler(2 * keep + 7)
        );
        let crlf = text.replace('\n', "\r\n") + "\r";
        let lone = text.replacen("ff", "f\rf", 3);
        let all = [e(&old, "NEW\n", true)];
        for content in [&text, &crlf, &lone] {
            let norm = content.replace("\r\n", "\n").replace('\r', "\n");
            let want = norm.replace(old.as_str(), "NEW\n").into_bytes();
            let lines: Vec<u64> = norm
                .match_indices(old.as_str())
                .scan(0, |shift, (i, _)| {
                    let l = norm[..i].matches('\n').count() as u64 + 1 - *shift;
                    *shift += old.matches('\n').count() as u64 - 1;
                    Some(l)
                })
                .collect();
            assert_eq!(lines.len(), 5);
            let starts: Vec<u64> = norm
                .match_indices(old.as_str())
                .map(|(i, _)| norm[..i].matches('\n').count() as u64 + 1)
                .collect();
            for p in [1, 4093, keep, keep + 1, 2 * keep, usize::MAX] {
                let got = direct(content.as_bytes(), &all, p);
                // Not assert_eq: a failure would print MiBs.
                assert!(got == Ok((want.clone(), 5, lines.clone())), "read {p}");
                let one = [e(&old, "NEW\n", false)];
                let got = direct(content.as_bytes(), &one, p);
                assert_eq!(got, Err(Refusal::Multiple { edit: 0, count: 5 }));
                let on = [at(&old, "X", starts[2])];
                let want = norm.replacen(old.as_str(), "X", 3);
                let want = want.replacen("X", &old, 2).into_bytes();
                let got = direct(content.as_bytes(), &on, p).map(|r| (r.0, r.1));
                assert!(got == Ok((want, 1)), "read {p}");
            }
        }
        let mut bad = text.clone().into_bytes();
        let at_byte = 2 * old.len() + 10;
        bad[at_byte] = 0xff;
        for p in [1, 4093, usize::MAX] {
            let got = direct(&bad, &all, p);
            let offset = at_byte as u64;
            let reason = "invalid start byte";
            assert_eq!(got, Err(Refusal::InvalidUtf8 { offset, reason }));
        }
        // Only a single long OLD has spare room; short OLDs and batches
        // are fed chunks.
        assert!(Engine::new(&all, false).spare().is_some());
        assert!(Engine::new(&[e("ab", "x", false)], false).spare().is_none());
        let two = [e(&old, "x", false), e("ab", "x", false)];
        assert!(Engine::new(&two, false).spare().is_none());
    }

    /// Search work is linear in the input for any OLD: a
    /// 64 KiB OLD over 4 MiB makes the finder see at most twice the input
    /// (and a window), in small chunks as in large, alone or after an edit
    /// that passes it the text in pieces. The old matcher re-searched
    /// the whole carried tail for every chunk (about 17x the input in 4 KiB
    /// chunks).
    #[test]
    fn long_old_search_is_linear_in_the_input() {
        let old = format!("{}!", "q".repeat(64 << 10));
        let content = "q".repeat(4 << 20);
        for edits in [
            vec![e(&old, "x", false)],
            vec![e("qq", "qq", true), e(&old, "x", false)],
        ] {
            for size in [4096, 65536, 1 << 20] {
                needle::SEARCHED.with(|c| c.set(0));
                let r = chunked(content.as_bytes(), &edits, size);
                assert_eq!(
                    r,
                    Err(Refusal::NotFound {
                        edit: edits.len() - 1
                    })
                );
                let searched = needle::SEARCHED.with(|c| c.get());
                // The long OLD's share, plus the input once for an edit before it.
                let n = content.len() as u64;
                let bound = 2 * (n + old.len() as u64) + (edits.len() as u64 - 1) * n;
                assert!(searched <= bound, "chunks of {size}: {searched} > {bound}");
            }
        }
    }

    /// A batch builds a long OLD's finder once, not once per chunk (issue
    /// 23 item 5): building reads all of OLD, so per chunk it made a 16 MiB
    /// OLD after another edit 18.8 s on a 32 MiB file (0.29 s alone). Short
    /// OLDs are still rebuilt per turn: a batch keeps no finder for them.
    #[test]
    fn a_batch_builds_a_long_olds_finder_once() {
        let long = format!("{}!", "q".repeat(matcher::KEEP_FINDER));
        let content = "q".repeat(1 << 20);
        let edits = [e("qq", "qq", true), e(&long, "x", false)];
        for size in [4096, 65536, 1 << 20] {
            needle::BUILT.with(|c| c.set(0));
            let r = chunked(content.as_bytes(), &edits, size);
            assert_eq!(r, Err(Refusal::NotFound { edit: 1 }));
            let built = needle::BUILT.with(|c| c.get());
            let turns = (content.len() / size) as u64 + 1;
            // The long OLD once; "qq" per turn (each chunk, then the end).
            let want = long.len() as u64 + 2 * (turns + 1);
            assert!(built <= want, "chunks of {size}: {built} > {want}");
        }
    }

    /// A long OLD whose rarest byte the text lacks is searched without
    /// OLD's Two-Way factorization is not built from all of a long OLD up
    /// front (`needle.rs`: that alone is 0.15 s of a 48 MiB OLD).
    #[test]
    fn a_long_old_with_a_rare_byte_builds_no_two_way_finder() {
        let old = format!("{}!", "q".repeat(64 << 10));
        let content = "q".repeat(1 << 20);
        needle::BUILT.with(|c| c.set(0));
        let r = chunked(content.as_bytes(), &[e(&old, "x", false)], 65536);
        assert_eq!(r, Err(Refusal::NotFound { edit: 0 }));
        assert_eq!(needle::BUILT.with(|c| c.get()), 32);
    }

    /// What an edit keeps between its turns is 24 bytes
    /// (the old matcher was about 500, with a finder per edit).
    #[test]
    fn an_edits_state_is_compact() {
        assert_eq!(std::mem::size_of::<matcher::State>(), 24);
    }

    /// A summary holds the stats of the first
    /// `EDITS_MAX` edits and the last one's, whatever the batch size.
    #[test]
    fn a_summary_keeps_the_first_edits_and_the_last() {
        let one = EditStats {
            count: 1,
            lines: vec![2],
            lines_truncated: false,
        };
        for (n, last) in [(EDITS_MAX, None), (EDITS_MAX + 5, Some(one.clone()))] {
            let edits = vec![e("a", "a", false); n];
            let mut engine = Engine::new(&edits, true);
            engine.feed(b"x\na\n", &mut |_| {});
            let s = engine.finish(&mut |_| {}).unwrap();
            assert_eq!(s.count, n as u64);
            assert_eq!(s.edits, vec![one.clone(); EDITS_MAX]);
            assert_eq!(s.last, last);
            assert_eq!(s.last_edit(), Some(&one));
        }
    }
}
