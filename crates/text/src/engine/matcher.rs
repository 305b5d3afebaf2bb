//! The edits over a stream: the third stage of the engine, one per edit.
//!
//! "Input" is the text an edit sees (the normalized file, or in a batch the
//! previous edit's output); "output" is what it passes on.
//!
//! Memory: what an edit keeps between its turns is a [`State`] (24 bytes)
//! and its carried tail in one shared arena; the rest (the `--report` lines,
//! the `--at-line` bookkeeping, the `--diff` builder) is boxed and exists
//! only for the edits that use it. A short OLD's finder is built for each
//! turn and dropped after it, so a batch of N edits holds N states, not N
//! finders; an OLD of [`KEEP_FINDER`] bytes or more keeps its finder for
//! the run (as one edit does), since building one reads all of OLD.
//!
//! Time: linear in the input for any OLD. An edit carries the input that
//! could still start an occurrence (at most `len(OLD) - 1` bytes, `keep`)
//! and resolves those starts only on a window at least twice what it
//! re-scans: tail plus `2 * keep` new bytes, or with chunks shorter than
//! OLD a tail topped up to `2 * keep` (its arena slot). Each start is then
//! scanned about twice at most (re-scanning the whole tail per chunk made a
//! 48 MiB OLD over 256 MiB 4.9 s, not 0.06 s). The search is `needle.rs`.
//! A single edit with an OLD of [`DIRECT`] bytes or more is read into its
//! slot by the caller (`Engine::spare`), not copied there, and the slot is
//! a ring (`ring.rs`): nothing is carried. The scans are `turn.rs`.

mod ring;
mod turn;

use super::gather::Out;
use super::needle::Needle;
use super::{Edit, EditStats, Refusal, AT_LINE_STARTS_MAX};
use turn::Turn;

/// In a batch, an edit whose OLD is at least this long keeps its finder for
/// the whole run. Building one costs about 4 ns a byte of OLD (memchr's
/// Two-Way factorization), once per turn, that is per chunk: a 16 MiB OLD
/// after another edit took 18.8 s on a 32 MiB file (0.29 s alone). Below
/// this length a rebuild costs a few microseconds against a chunk's search,
/// and a kept finder (304 bytes with its index) would weigh a third of OLD.
pub(super) const KEEP_FINDER: usize = 1024;

/// A single edit whose OLD is at least this long is fed in place: the
/// caller reads into its slot (`Engine::spare`). Below it a chunk is
/// searched where it was read, and the slot's reads would be short.
pub(super) const DIRECT: usize = 256 * 1024;

/// What one edit keeps between its turns.
#[derive(Default)]
pub(super) struct State {
    /// Occurrences found so far (non-overlapping, left to right), replaced
    /// or not: one without replace-all past the first, and ones off the
    /// `--at-line` target, count too. Final only after `finish`.
    count: u64,
    /// Line tracking, `--at-line`, `--diff`: only for edits that use them.
    extra: Option<Box<Extra>>,
    /// Bytes of the carried tail (in the edit's arena slot): fed, but
    /// neither emitted nor part of a handled occurrence. Every occurrence
    /// starting before it has been counted and handled.
    tail_len: u32,
    /// An occurrence was replaced (emitted as NEW): from then on the output
    /// differs from the input (what `Engine::changed` reports). Just before
    /// the first NEW, `out(&[])` marks the point.
    replaced: bool,
}

#[derive(Default)]
struct Extra {
    /// `--report`: record `lines` and count `newlines`.
    track_lines: bool,
    /// LF bytes emitted so far (when `track_lines`): the next emitted byte
    /// lands on line `newlines + 1`.
    newlines: u64,
    /// The 1-based output lines where the first [`super::LINES_MAX`] replacements
    /// start (when `track_lines`).
    lines: Vec<u64>,
    /// `--diff` of a single edit: fed the unchanged text and each
    /// replacement; dropped once a second occurrence without replace-all
    /// dooms the edit (the diff of a refused edit is never shown).
    diff: Option<Box<crate::diff::Builder>>,
    /// `--at-line` (the fields below are used only then): LF bytes of the
    /// input consumed so far (scanned past, OLD's own included; not the
    /// tail).
    in_newlines: u64,
    /// LF bytes in OLD, added to `in_newlines` per occurrence.
    old_newlines: u64,
    /// Occurrences starting on the target line so far: the first is
    /// replaced, a second makes the edit `MultipleAtLine`.
    on_line: u64,
    /// Input start lines of the first [`AT_LINE_STARTS_MAX`] occurrences,
    /// for a `NotAtLine` refusal.
    starts: Vec<u64>,
}

/// The edits of one run, their states and their tails.
pub(super) struct Stages<'a> {
    edits: &'a [Edit],
    states: Vec<State>,
    /// Edit k's tail slot is `2 * keep(k)` bytes at the sum of the earlier
    /// slots (callers walk the edits in order and carry the offset).
    tails: Vec<u8>,
    /// The finders kept for the whole run, by edit: a single edit's, and
    /// in a batch those of OLDs of [`KEEP_FINDER`] bytes or more.
    finders: Vec<(usize, Needle<'a>)>,
    /// A single edit of [`DIRECT`] bytes or more read into its slot
    /// (`Engine::spare`): the slot is this ring until fed otherwise.
    ring: Option<ring::Ring>,
}

/// `len(OLD) - 1`: how much input an edit may have to carry.
fn keep(e: &Edit) -> usize {
    e.old_text().len() - 1
}

impl<'a> Stages<'a> {
    /// `track(k)`: whether edit k records its replacement lines.
    pub(super) fn new(edits: &'a [Edit], track: impl Fn(usize) -> bool) -> Stages<'a> {
        let states = edits
            .iter()
            .enumerate()
            .map(|(k, e)| {
                let track_lines = track(k);
                let extra = (track_lines || e.at_line().is_some()).then(|| {
                    Box::new(Extra {
                        track_lines,
                        old_newlines: memchr::memchr_iter(b'\n', e.old_text()).count() as u64,
                        ..Extra::default()
                    })
                });
                State {
                    extra,
                    ..State::default()
                }
            })
            .collect();
        let slots: usize = edits.iter().map(|e| 2 * keep(e)).sum();
        Stages {
            edits,
            states,
            // Zeroed: the pages of a large arena are only touched as tails fill.
            tails: vec![0; slots],
            finders: edits
                .iter()
                .enumerate()
                .filter(|(_, e)| edits.len() == 1 || e.old_text().len() >= KEEP_FINDER)
                .map(|(k, e)| (k, Needle::new(e.old_text())))
                .collect(),
            ring: ring::Ring::new(edits),
        }
    }

    pub(super) fn len(&self) -> usize {
        self.edits.len()
    }

    /// Gives the first edit a `--diff` builder.
    pub(super) fn set_diff(&mut self, d: Box<crate::diff::Builder>) {
        if let Some(s) = self.states.first_mut() {
            s.extra.get_or_insert_with(Box::default).diff = Some(d);
        }
    }

    pub(super) fn take_diff(&mut self) -> Option<Box<crate::diff::Builder>> {
        self.states.first_mut()?.extra.as_mut()?.diff.take()
    }

    pub(super) fn doomed(&self) -> bool {
        self.edits
            .iter()
            .zip(&self.states)
            .any(|(e, s)| doomed(e, s))
    }

    pub(super) fn changed(&self) -> bool {
        self.states.iter().any(|s| s.replaced)
    }

    /// Feeds edit `k`, whose slot starts at `off`; returns the next edit's
    /// slot offset.
    pub(super) fn feed(&mut self, k: usize, off: usize, data: &[u8], out: &mut Out<'_>) -> usize {
        if data.is_empty() {
            return off + 2 * keep(&self.edits[k]);
        }
        self.linear();
        self.turn(k, off, out, |t, slot, out| t.feed(slot, data, out))
    }

    /// A single edit with an OLD of [`DIRECT`] bytes or more: the room in
    /// its slot after the carried tail, for the caller to fill (see
    /// `Engine::spare`).
    #[cfg_attr(as_edit_small, optimize(size))]
    pub(super) fn spare(&mut self) -> Option<&mut [u8]> {
        let k = keep(self.edits.first()?);
        if self.edits.len() > 1 || k < DIRECT {
            return None;
        }
        if let Some(r) = &self.ring {
            return Some(r.spare(&mut self.tails));
        }
        Some(&mut self.tails[self.states[0].tail_len as usize..2 * k])
    }

    /// The first `n` bytes of [`Stages::spare`] are the single edit's next input.
    #[cfg_attr(as_edit_small, optimize(size))]
    pub(super) fn filled(&mut self, n: usize, out: &mut Out<'_>) {
        if self.ring.is_some() {
            return self.ring_filled(n, out);
        }
        let st = &mut self.states[0];
        let t = st.tail_len as usize + n;
        let edit = &self.edits[0];
        let slot = &mut self.tails[..2 * keep(edit)];
        // A single edit keeps its finder.
        let finder = &mut self.finders[0].1;
        Turn { finder, edit, st }.hold(slot, t, out);
    }

    /// Ends edit `k`'s input: its tail is scanned a last time and emitted.
    pub(super) fn finish(&mut self, k: usize, off: usize, out: &mut Out<'_>) -> usize {
        if self.ring.is_some() {
            self.ring_finish(out);
        }
        if self.states[k].tail_len == 0 {
            return off + 2 * keep(&self.edits[k]);
        }
        self.turn(k, off, out, |t, slot, out| {
            let n = t.st.tail_len as usize;
            t.st.tail_len = 0;
            t.scan(&slot[..n], n, out);
        })
    }

    fn turn(
        &mut self,
        k: usize,
        off: usize,
        out: &mut Out<'_>,
        f: impl FnOnce(&mut Turn<'_, 'a>, &mut [u8], &mut Out<'_>),
    ) -> usize {
        let edit = &self.edits[k];
        let end = off + 2 * keep(edit);
        let slot = &mut self.tails[off..end];
        let mut own;
        let finder = match self.finders.binary_search_by_key(&k, |f| f.0) {
            Ok(i) => &mut self.finders[i].1,
            Err(_) => {
                own = Needle::new(edit.old_text());
                &mut own
            }
        };
        let mut t = Turn {
            finder,
            edit,
            st: &mut self.states[k],
        };
        f(&mut t, slot, out);
        end
    }

    /// Edit `k`'s result once the input has been fed and finished.
    pub(super) fn outcome(&mut self, k: usize) -> Result<EditStats, Refusal> {
        let e = &self.edits[k];
        let st = std::mem::take(&mut self.states[k]);
        let count = st.count;
        if count == 0 {
            return Err(Refusal::NotFound { edit: k });
        }
        let x = st.extra.map(|b| *b).unwrap_or_default();
        if let Some(line) = e.at_line() {
            return match x.on_line {
                0 => Err(Refusal::NotAtLine {
                    edit: k,
                    line,
                    count,
                    starts: x.starts,
                }),
                1 => Ok(EditStats {
                    count: 1,
                    lines_truncated: false,
                    lines: x.lines,
                }),
                count => Err(Refusal::MultipleAtLine {
                    edit: k,
                    line,
                    count,
                }),
            };
        }
        if count > 1 && !e.replace_all() {
            return Err(Refusal::Multiple { edit: k, count });
        }
        Ok(EditStats {
            count,
            lines_truncated: x.track_lines && x.lines.len() as u64 != count,
            lines: x.lines,
        })
    }
}

fn doomed(e: &Edit, s: &State) -> bool {
    match (e.at_line(), &s.extra) {
        // Refused once two occurrences start on the line, or once the
        // consumed input has passed the line without one starting there.
        (Some(l), Some(x)) => x.on_line > 1 || (x.on_line == 0 && x.in_newlines >= l),
        _ => !e.replace_all() && s.count > 1,
    }
}
