//! One edit's turn over its input: the search's matches counted, replaced
//! or kept, and the text between them emitted (`matcher.rs` holds the
//! states and the carried tails; `ring.rs` a single long OLD's ring).

use super::super::gather::Out;
use super::super::needle::Needle;
use super::super::{Edit, LINES_MAX};
use super::{keep, State, AT_LINE_STARTS_MAX};

/// One edit during one turn: its finder, its OLD and NEW, its state.
pub(super) struct Turn<'t, 'a> {
    pub(super) finder: &'t mut Needle<'a>,
    pub(super) edit: &'t Edit,
    pub(super) st: &'t mut State,
}

impl Turn<'_, '_> {
    /// Takes `data`; `slot` is the edit's tail slot (`2 * keep` bytes).
    pub(super) fn feed(&mut self, slot: &mut [u8], mut data: &[u8], out: &mut Out<'_>) {
        let keep = keep(self.edit);
        while !data.is_empty() {
            let t = self.st.tail_len as usize;
            if t == 0 {
                // Search `data` in place; carry what could still start one.
                let limit = data.len().saturating_sub(keep);
                let pos = self.scan(data, limit, out);
                let rest = &data[pos..];
                slot[..rest.len()].copy_from_slice(rest);
                self.st.tail_len = rest.len() as u32;
                return;
            }
            if t <= keep && t + data.len() >= 3 * keep {
                // The tail's starts on a small joined window (tail plus
                // `keep` bytes, at most the slot), then `data` in place:
                // the scans cover at most twice what they resolve.
                slot[t..t + keep].copy_from_slice(&data[..keep]);
                let pos = self.scan(&slot[..t + keep], t, out);
                self.st.tail_len = 0;
                data = &data[pos - t..];
                continue;
            }
            // Too little new input to pay for re-scanning the tail: top it
            // up to the slot, then resolve its first `keep` starts.
            let take = data.len().min(2 * keep - t);
            slot[t..t + take].copy_from_slice(&data[..take]);
            data = &data[take..];
            self.hold(slot, t + take, out);
        }
    }

    /// The tail is `t` bytes of the slot: once it fills the slot, its first
    /// `keep` starts are resolved and the rest is carried to the front.
    pub(super) fn hold(&mut self, slot: &mut [u8], t: usize, out: &mut Out<'_>) {
        let keep = slot.len() / 2;
        if t < 2 * keep {
            self.st.tail_len = t as u32;
            return;
        }
        let pos = self.scan(slot, keep, out);
        slot.copy_within(pos.., 0);
        self.st.tail_len = (2 * keep - pos) as u32;
    }

    /// Handles every match in `buf` that starts before `limit`, emitting
    /// everything before it and the replacement; emits unmatched bytes up to
    /// `limit`. Returns how far `buf` has been consumed (at least `limit`).
    pub(super) fn scan(&mut self, buf: &[u8], limit: usize, out: &mut Out<'_>) -> usize {
        let m = self.edit.old_text().len();
        let mut pos = 0;
        while pos < limit {
            let found = self.finder.find(&buf[pos..]).map(|i| i + pos);
            #[cfg(test)]
            super::super::needle::SEARCHED.with(|c| {
                // What the search had to see: up to the match's end, or all.
                let end = found.map_or(buf.len(), |i| (i + m).min(buf.len()));
                c.set(c.get() + (end - pos) as u64)
            });
            let Some(i) = found else {
                break;
            };
            if i >= limit {
                break;
            }
            self.same(&buf[pos..i], out);
            self.occurrence(&buf[pos..i], out);
            pos = i + m;
        }
        if pos < limit {
            self.skip(&buf[pos..limit], out);
            pos = limit;
        }
        pos
    }

    /// As [`Turn::scan`] over a ring's text (`ring.rs`): the `len` bytes
    /// at `head` of a ring of `size` bytes followed by its mirror. Returns
    /// how far the text has been consumed, and false when the search fell
    /// back to Two-Way, which needs the text in one piece (then only the
    /// matches found before are consumed, the text after them is not).
    pub(super) fn scan_ring(
        &mut self,
        ring: &[u8],
        (size, head, len): (usize, usize, usize),
        limit: usize,
        out: &mut Out<'_>,
    ) -> (usize, bool) {
        let m = self.edit.old_text().len();
        let mut pos = 0;
        while pos < limit {
            let at = (head + pos) % size;
            let Ok(found) = self
                .finder
                .find_ring(ring, size, at, len - pos, limit - pos)
            else {
                return (pos, false);
            };
            let Some(i) = found else {
                break;
            };
            let (a, b) = cyclic(ring, size, at, i);
            self.skip(a, out);
            self.same(b, out);
            self.occurrence(b, out);
            pos += i + m;
        }
        if pos < limit {
            let (a, b) = cyclic(ring, size, (head + pos) % size, limit - pos);
            self.skip(a, out);
            self.skip(b, out);
            pos = limit;
        }
        (pos, true)
    }

    /// Unmatched text passed: its line ends counted for `--at-line`, then
    /// emitted unchanged.
    fn skip(&mut self, b: &[u8], out: &mut Out<'_>) {
        if let (Some(_), Some(x)) = (self.edit.at_line(), self.st.extra.as_mut()) {
            x.in_newlines += memchr::memchr_iter(b'\n', b).count() as u64;
        }
        self.same(b, out);
    }

    /// An occurrence of OLD after `before`, the unmatched text just emitted
    /// (line ends before it already counted for `--at-line`): counted, then
    /// replaced, or emitted as it is (its bytes are OLD's).
    // Inlined: with two callers (`scan`, `scan_ring`) it was left out of
    // line, a call and its spills per occurrence of a dense replace-all
    // (callgrind's `many` 3,824,522 -> 4,068,104 a MiB); inlined into both
    // the binary's size is unchanged (522,736) and `many` is 3,824,582.
    #[inline(always)]
    fn occurrence(&mut self, before: &[u8], out: &mut Out<'_>) {
        self.st.count += 1;
        if self.take_occurrence(before) {
            if !self.st.replaced {
                // The marker `Engine::feed` documents: the output
                // differs from the input from here on.
                out.put(&[]);
            }
            self.st.replaced = true;
            let new = self.edit.new_text();
            if let Some(x) = self.st.extra.as_mut() {
                if x.track_lines && x.lines.len() < LINES_MAX {
                    x.lines.push(x.newlines + 1);
                }
                if let Some(d) = x.diff.as_mut() {
                    d.change(self.edit.old_text(), new);
                }
            }
            self.emit(new, out);
        } else if self.edit.at_line().is_some() {
            // With `at_line`, an occurrence on another line is kept
            // as it is: unchanged text for the diff too.
            let edit = self.edit;
            self.same(edit.old_text(), out);
        } else {
            // A second match without replace-all: the edit is
            // refused, the output (and its diff) no longer matters.
            if let Some(x) = self.st.extra.as_mut() {
                x.diff = None;
            }
            let edit = self.edit;
            self.emit(edit.old_text(), out);
        }
    }

    /// Whether the occurrence just counted (the `count`-th) is replaced.
    /// Records its input line first when `at_line` is set.
    fn take_occurrence(&mut self, before: &[u8]) -> bool {
        let (Some(target), Some(x)) = (self.edit.at_line(), self.st.extra.as_mut()) else {
            return self.edit.replace_all() || self.st.count == 1;
        };
        x.in_newlines += memchr::memchr_iter(b'\n', before).count() as u64;
        let line = x.in_newlines + 1;
        x.in_newlines += x.old_newlines;
        if x.starts.len() < AT_LINE_STARTS_MAX {
            x.starts.push(line);
        }
        if line != target {
            return false;
        }
        x.on_line += 1;
        x.on_line == 1
    }

    /// Unchanged text.
    fn same(&mut self, b: &[u8], out: &mut Out<'_>) {
        if let Some(d) = self.st.extra.as_mut().and_then(|x| x.diff.as_mut()) {
            d.same(b);
        }
        self.emit(b, out);
    }

    fn emit(&mut self, b: &[u8], out: &mut Out<'_>) {
        if b.is_empty() {
            return;
        }
        if let Some(x) = self.st.extra.as_mut() {
            if x.track_lines {
                x.newlines += memchr::memchr_iter(b'\n', b).count() as u64;
            }
        }
        out.put(b);
    }
}

/// The `n` bytes at `at` of a ring of `size` bytes, in one or two slices.
pub(super) fn cyclic(ring: &[u8], size: usize, at: usize, n: usize) -> (&[u8], &[u8]) {
    let first = n.min(size - at);
    (&ring[at..at + first], &ring[..n - first])
}
