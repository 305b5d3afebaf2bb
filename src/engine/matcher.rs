//! One edit over a stream: the third stage of the engine, one per edit.

use memchr::memmem::Finder;

use super::{Edit, EditStats, Refusal, AT_LINE_STARTS_MAX, LINES_MAX};

/// One edit over a stream: finds non-overlapping occurrences left to right,
/// carrying at most `len(old) - 1` unresolved bytes between chunks.
///
/// "Input" is the text this edit sees (the normalized file, or in a batch
/// the previous edit's output); "output" is what it passes on.
pub(super) struct Matcher {
    /// Searches for OLD (LF-normalized, never empty).
    finder: Finder<'static>,
    /// NEW, emitted for each replaced occurrence (moved out of `self` for
    /// the length of one `emit`, which needs `&mut self`).
    new: Vec<u8>,
    replace_all: bool,
    /// `len(OLD)`, at least 1.
    m: usize,
    /// The end of the input that could still be the start of an occurrence
    /// completed by the next chunk: fed, but neither emitted nor part of a
    /// handled occurrence. Between calls `tail.len() <= m - 1`; every
    /// occurrence starting before it has been counted and handled.
    /// `finish` scans it one last time and emits it.
    tail: Vec<u8>,
    /// Occurrences found so far (non-overlapping, left to right), replaced
    /// or not: one without replace-all past the first, and ones off the
    /// `--at-line` target, count too. Counted when the finder reaches them,
    /// so it is final only after `finish`.
    count: u64,
    /// An occurrence was replaced (emitted as NEW): from then on the output
    /// differs from the input (what `Engine::changed` reports). Just before
    /// the first NEW, `out(&[])` marks the point.
    pub(super) replaced: bool,
    /// `--report`: record `lines` and count `newlines`.
    track_lines: bool,
    /// LF bytes emitted to the output so far, counted only when
    /// `track_lines`: the next emitted byte lands on line `newlines + 1`.
    newlines: u64,
    /// The 1-based output lines where replacements start, recorded as each
    /// replacement is emitted, only when `track_lines`, at most
    /// [`LINES_MAX`] (`count` says how many there were).
    lines: Vec<u64>,
    /// `--diff` of a single edit: fed the unchanged text and each
    /// replacement; dropped once a second occurrence without replace-all
    /// dooms the edit (the diff of a refused edit is never shown).
    pub(super) diff: Option<Box<crate::diff::Builder>>,
    /// `--at-line`: the 1-based input line the one replaced occurrence must
    /// start on. All the fields below are kept only when it is set.
    at_line: Option<u64>,
    /// LF bytes of the input consumed so far (scanned past, OLD's own
    /// included; not yet the `tail`): an occurrence found next starts on
    /// line `in_newlines + 1 + LFs between the consumed end and it`.
    in_newlines: u64,
    /// LF bytes in OLD, added to `in_newlines` per occurrence.
    old_newlines: u64,
    /// Occurrences starting on the `at_line` target so far: the first is
    /// replaced, a second makes the edit `MultipleAtLine`.
    on_line: u64,
    /// Input start lines of the first [`AT_LINE_STARTS_MAX`] occurrences,
    /// for a `NotAtLine` refusal.
    starts: Vec<u64>,
}

impl Matcher {
    pub(super) fn new(e: &Edit, track_lines: bool) -> Matcher {
        Matcher {
            finder: Finder::new(&e.old).into_owned(),
            new: e.new.clone(),
            replace_all: e.replace_all,
            m: e.old.len(),
            tail: Vec::with_capacity(2 * e.old.len()),
            count: 0,
            replaced: false,
            track_lines,
            newlines: 0,
            lines: Vec::new(),
            diff: None,
            at_line: e.at_line,
            in_newlines: 0,
            old_newlines: memchr::memchr_iter(b'\n', &e.old).count() as u64,
            on_line: 0,
            starts: Vec::new(),
        }
    }

    pub(super) fn doomed(&self) -> bool {
        match self.at_line {
            // Refused once two occurrences start on the line, or once the
            // consumed input has passed the line without one starting there.
            Some(l) => self.on_line > 1 || (self.on_line == 0 && self.in_newlines >= l),
            None => !self.replace_all && self.count > 1,
        }
    }

    /// The edit's result once the input has been fed and finished.
    pub(super) fn outcome(self, edit: usize) -> Result<EditStats, Refusal> {
        if self.count == 0 {
            return Err(Refusal::NotFound { edit });
        }
        if let Some(line) = self.at_line {
            return match self.on_line {
                0 => Err(Refusal::NotAtLine {
                    edit,
                    line,
                    count: self.count,
                    starts: self.starts,
                }),
                1 => Ok(EditStats {
                    count: 1,
                    lines_truncated: false,
                    lines: self.lines,
                }),
                count => Err(Refusal::MultipleAtLine { edit, line, count }),
            };
        }
        if self.count > 1 && !self.replace_all {
            return Err(Refusal::Multiple {
                edit,
                count: self.count,
            });
        }
        Ok(EditStats {
            count: self.count,
            lines_truncated: self.track_lines && self.lines.len() as u64 != self.count,
            lines: self.lines,
        })
    }

    /// Whether the occurrence just counted (the `count`-th) is replaced.
    /// Records its input line first when `at_line` is set.
    fn take_occurrence(&mut self, before: &[u8]) -> bool {
        let Some(target) = self.at_line else {
            return self.replace_all || self.count == 1;
        };
        self.in_newlines += memchr::memchr_iter(b'\n', before).count() as u64;
        let line = self.in_newlines + 1;
        self.in_newlines += self.old_newlines;
        if self.starts.len() < AT_LINE_STARTS_MAX {
            self.starts.push(line);
        }
        if line != target {
            return false;
        }
        self.on_line += 1;
        self.on_line == 1
    }

    pub(super) fn feed<F: FnMut(&[u8])>(&mut self, data: &[u8], out: &mut F) {
        if data.is_empty() {
            return;
        }
        if self.tail.is_empty() {
            let limit = data.len().saturating_sub(self.m - 1);
            let pos = self.scan(data, limit, out);
            self.tail.extend_from_slice(&data[pos.max(limit)..]);
            return;
        }
        // The tail may start a match that ends in `data`: resolve it on a
        // small joined window, then search `data` in place.
        let take = data.len().min(self.m - 1);
        let mut joined = std::mem::take(&mut self.tail);
        let tail_len = joined.len();
        joined.extend_from_slice(&data[..take]);
        if take == data.len() {
            let limit = joined.len().saturating_sub(self.m - 1);
            let pos = self.scan(&joined, limit, out);
            let start = pos.max(limit);
            joined.drain(..start);
            self.tail = joined;
            return;
        }
        let pos = self.scan(&joined, tail_len, out);
        joined.clear();
        self.tail = joined; // keep the allocation
        let rest = &data[pos - tail_len..];
        let limit = rest.len().saturating_sub(self.m - 1);
        let pos = self.scan(rest, limit, out);
        self.tail.extend_from_slice(&rest[pos.max(limit)..]);
    }

    pub(super) fn finish<F: FnMut(&[u8])>(&mut self, out: &mut F) {
        let tail = std::mem::take(&mut self.tail);
        self.scan(&tail, tail.len(), out);
    }

    /// Handles every match in `buf` that starts before `limit`, emitting
    /// everything before it and the replacement; emits unmatched bytes up to
    /// `limit`. Returns how far `buf` has been consumed.
    fn scan<F: FnMut(&[u8])>(&mut self, buf: &[u8], limit: usize, out: &mut F) -> usize {
        let mut pos = 0;
        while pos < limit {
            let Some(i) = self.finder.find(&buf[pos..]).map(|i| i + pos) else {
                break;
            };
            if i >= limit {
                break;
            }
            self.same(&buf[pos..i], out);
            self.count += 1;
            if self.take_occurrence(&buf[pos..i]) {
                if !self.replaced {
                    // The marker `Engine::feed` documents: the output
                    // differs from the input from here on.
                    out(&[]);
                }
                self.replaced = true;
                if self.track_lines && self.lines.len() < LINES_MAX {
                    self.lines.push(self.newlines + 1);
                }
                if let Some(d) = self.diff.as_mut() {
                    d.change(&buf[i..i + self.m], &self.new);
                }
                let new = std::mem::take(&mut self.new);
                self.emit(&new, out);
                self.new = new;
            } else if self.at_line.is_some() {
                // With `at_line`, an occurrence on another line is kept
                // as it is: unchanged text for the diff too.
                self.same(&buf[i..i + self.m], out);
            } else {
                // A second match without replace-all: the edit is
                // refused, the output (and its diff) no longer matters.
                self.diff = None;
                self.emit(&buf[i..i + self.m], out);
            }
            pos = i + self.m;
        }
        if pos < limit {
            if self.at_line.is_some() {
                self.in_newlines += memchr::memchr_iter(b'\n', &buf[pos..limit]).count() as u64;
            }
            self.same(&buf[pos..limit], out);
            pos = limit;
        }
        pos
    }

    /// Unchanged text.
    fn same<F: FnMut(&[u8])>(&mut self, b: &[u8], out: &mut F) {
        if let Some(d) = self.diff.as_mut() {
            d.same(b);
        }
        self.emit(b, out);
    }

    fn emit<F: FnMut(&[u8])>(&mut self, b: &[u8], out: &mut F) {
        if b.is_empty() {
            return;
        }
        if self.track_lines {
            self.newlines += memchr::memchr_iter(b'\n', b).count() as u64;
        }
        out(b);
    }
}
