//! The streaming diff of one edit: [`Builder`], fed by the engine, builds
//! the hunks around each replacement in bounded memory.

use super::hunk::{Hunk, Text};
use super::lines::{edit_script, Op};
use super::{into_string, push_capped, range, CONTEXT};

/// Myers step bound within one changed region of [`Builder`]: its trace
/// stays under half a MiB.
const BLOCK_EDIT_STEPS: usize = 256;

/// Empty, or exactly one line with its `\n`.
fn whole_line_or_empty(b: &[u8]) -> bool {
    match b.split_last() {
        None => true,
        Some((&last, rest)) => last == b'\n' && memchr::memchr(b'\n', rest).is_none(),
    }
}

/// Builds the unified diff of one edit from the engine's stream: `same` for
/// text both versions share, `change` for each replacement, then `finish`.
/// Memory is bounded (see the module doc) whatever the file size.
pub struct Builder {
    name: String,
    cap: usize,
    out: Vec<u8>,
    started: bool,
    /// The output is final (it was cut); the rest of the stream is ignored.
    done: bool,
    /// The current line, the same in both versions (outside a changed region).
    shared: Text,
    /// A changed region: its lines in the old and in the new version. It
    /// ends where both are at a line start.
    block: Option<(Text, Text)>,
    /// Complete lines of the old and the new version passed so far.
    a_no: u64,
    b_no: u64,
    /// The last unchanged lines, for the context before the next change.
    lead: std::collections::VecDeque<Text>,
    hunk: Option<Hunk>,
    /// The buffers of the last block counted by `count_block`, reused for
    /// the next one: dense replacements past the cap allocate nothing.
    spare: (Vec<u8>, Vec<u8>),
}

impl Builder {
    /// `name` heads the diff (`--- name`, `+++ name`); `cap` bounds its size.
    #[cfg_attr(as_edit_small, optimize(size))]
    pub fn new(name: &str, cap: usize) -> Builder {
        Builder {
            name: name.to_owned(),
            cap,
            out: Vec::new(),
            started: false,
            done: false,
            shared: Text::default(),
            block: None,
            a_no: 0,
            b_no: 0,
            lead: Default::default(),
            hunk: None,
            spare: Default::default(),
        }
    }

    /// Text that is in both versions.
    #[cfg_attr(as_edit_small, optimize(size))]
    pub fn same(&mut self, mut seg: &[u8]) {
        if self.done || seg.is_empty() {
            return;
        }
        if let Some((a, b)) = self.block.as_mut() {
            let Some(i) = memchr::memchr(b'\n', seg) else {
                a.push(seg);
                b.push(seg);
                return;
            };
            a.push(&seg[..=i]);
            b.push(&seg[..=i]);
            seg = &seg[i + 1..];
            self.close_block();
        }
        while !seg.is_empty() && !self.done {
            if self.hunk.is_none() {
                self.skip_ahead(&mut seg);
            } else if self.hunk_full() && self.shared.is_empty() {
                // Nothing more of the hunk is shown: its whole unchanged
                // lines are only counted (each may still close it).
                let Some(i) = memchr::memchr(b'\n', seg) else {
                    self.shared.push(seg);
                    return;
                };
                self.same_line(Text::default());
                seg = &seg[i + 1..];
                continue;
            }
            let Some(i) = memchr::memchr(b'\n', seg) else {
                self.shared.push(seg);
                return;
            };
            self.shared.push(&seg[..=i]);
            let line = std::mem::take(&mut self.shared);
            self.same_line(line);
            seg = &seg[i + 1..];
        }
    }

    /// Outside a hunk only the last CONTEXT lines before a change matter:
    /// count the lines before them without keeping them.
    #[cfg_attr(as_edit_small, optimize(size))]
    fn skip_ahead(&mut self, seg: &mut &[u8]) {
        let Some(p) = memchr::memrchr_iter(b'\n', seg).nth(CONTEXT) else {
            return;
        };
        let n = memchr::memchr_iter(b'\n', &seg[..=p]).count() as u64;
        self.a_no += n;
        self.b_no += n;
        self.shared = Text::default();
        self.lead.clear();
        *seg = &seg[p + 1..];
    }

    /// One replacement: `old` in the old version became `new`.
    #[cfg_attr(as_edit_small, optimize(size))]
    pub fn change(&mut self, old: &[u8], new: &[u8]) {
        if self.done {
            return;
        }
        if self.block.is_none()
            && self.shared.is_empty()
            && self.hunk_full()
            && whole_line_or_empty(old)
            && whole_line_or_empty(new)
        {
            // The replacement is a block by itself, of at most one line a
            // side: count it as `count_block` would, without buffering it.
            self.count_line_pair(old, new);
            return;
        }
        let shared = &mut self.shared;
        let spare = &mut self.spare;
        let (a, b) = self.block.get_or_insert_with(|| {
            if shared.is_empty() {
                let kept = |v: &mut Vec<u8>| Text {
                    kept: std::mem::take(v),
                    ..Text::default()
                };
                return (kept(&mut spare.0), kept(&mut spare.1));
            }
            let s = std::mem::take(shared);
            (s.clone(), s)
        });
        a.push(old);
        b.push(new);
        if a.at_line_start() && b.at_line_start() {
            self.close_block();
        }
    }

    /// The diff, and whether it was cut at the cap.
    #[cfg_attr(as_edit_small, optimize(size))]
    pub fn finish(mut self) -> (String, bool) {
        if !self.done {
            if self.block.is_some() {
                self.close_block();
            } else if !self.shared.is_empty() {
                let line = std::mem::take(&mut self.shared);
                self.same_line(line);
            }
            self.close_hunk();
        }
        (into_string(self.out), self.done)
    }

    #[cfg_attr(as_edit_small, optimize(size))]
    fn same_line(&mut self, line: Text) {
        if self.done {
            return;
        }
        self.a_no += 1;
        self.b_no += 1;
        match self.hunk.as_mut() {
            None => {
                if self.lead.len() == CONTEXT {
                    self.lead.pop_front();
                }
                self.lead.push_back(line);
            }
            Some(h) => {
                h.trail.push(line);
                if h.trail.len() > 2 * CONTEXT {
                    self.close_hunk();
                }
            }
        }
    }

    /// A removed (`-`) or added (`+`) line; `cut` when it was not kept whole.
    #[cfg_attr(as_edit_small, optimize(size))]
    fn change_line(&mut self, mark: u8, text: &[u8], cut: bool) {
        if self.done {
            return;
        }
        let h = match self.hunk.as_mut() {
            Some(h) => {
                for t in std::mem::take(&mut h.trail) {
                    h.line(b' ', &t.kept, t.cut);
                    h.a_len += 1;
                    h.b_len += 1;
                }
                h
            }
            None => {
                let lead = self.lead.len() as u64;
                let mut h = Hunk {
                    a_start: self.a_no - lead,
                    b_start: self.b_no - lead,
                    a_len: lead,
                    b_len: lead,
                    body: Vec::new(),
                    room: self.cap.saturating_sub(self.out.len()),
                    full: false,
                    trail: Vec::new(),
                };
                for t in self.lead.drain(..) {
                    h.line(b' ', &t.kept, t.cut);
                }
                self.hunk.insert(h)
            }
        };
        h.line(mark, text, cut);
        if mark == b'-' {
            h.a_len += 1;
            self.a_no += 1;
        } else {
            h.b_len += 1;
            self.b_no += 1;
        }
    }

    /// Every line of a changed region's side, as removed or added. Lines past
    /// what was kept are only counted (the diff is cut before them).
    #[cfg_attr(as_edit_small, optimize(size))]
    fn change_side(&mut self, mark: u8, side: &Text) {
        let mut shown = 0;
        for piece in side.kept.split_inclusive(|b| *b == b'\n') {
            let whole = piece.last() == Some(&b'\n') || !side.cut;
            self.change_line(mark, piece, !whole);
            shown += 1;
        }
        let rest = side.lines() - shown;
        if let (Some(h), true) = (self.hunk.as_mut(), rest > 0) {
            h.full = true;
            if mark == b'-' {
                h.a_len += rest;
                self.a_no += rest;
            } else {
                h.b_len += rest;
                self.b_no += rest;
            }
        }
    }

    #[cfg_attr(as_edit_small, optimize(size))]
    fn close_block(&mut self) {
        let Some((a, b)) = self.block.take() else {
            return;
        };
        if self.hunk_full() && !a.cut && !b.cut && self.count_block(&a, &b) {
            let (mut x, mut y) = (a.kept, b.kept);
            x.clear();
            y.clear();
            self.spare = (x, y);
            return;
        }
        if a.cut || b.cut {
            // Too long to compare line by line (and to show whole).
            self.change_side(b'-', &a);
            self.change_side(b'+', &b);
            return;
        }
        let la: Vec<&[u8]> = a.kept.split_inclusive(|c| *c == b'\n').collect();
        let lb: Vec<&[u8]> = b.kept.split_inclusive(|c| *c == b'\n').collect();
        for (op, ai, bi) in edit_script(&la, &lb, BLOCK_EDIT_STEPS) {
            match op {
                Op::Same => self.same_line(Text::from_line(la[ai])),
                Op::Del => self.change_line(b'-', la[ai], false),
                Op::Add => self.change_line(b'+', lb[bi], false),
            }
        }
    }

    /// The hunk being built can show no more: only its header's line counts
    /// (and where it closes) are still to be learned.
    fn hunk_full(&self) -> bool {
        self.hunk.as_ref().is_some_and(|h| h.full)
    }

    /// `close_block` once the hunk is full, without line tables or Myers:
    /// the block's common leading and trailing lines are unchanged lines
    /// (as the edit script makes them), and between them the middle's
    /// lines are counted. The middle starts and ends with a change, so an
    /// unchanged run inside it is shorter than both sides; when one side
    /// has at most `2 * CONTEXT` lines no run there can close the hunk, and
    /// the counts are exactly those of the full script. Returns false (do
    /// the full work) otherwise.
    #[cfg_attr(as_edit_small, optimize(size))]
    fn count_block(&mut self, a: &Text, b: &Text) -> bool {
        if whole_line_or_empty(&a.kept) && whole_line_or_empty(&b.kept) {
            self.count_line_pair(&a.kept, &b.kept);
            return true;
        }
        let lines = |t: &Text| t.kept.split_inclusive(|c| *c == b'\n').count();
        let (na, nb) = (lines(a), lines(b));
        let la = || a.kept.split_inclusive(|c| *c == b'\n');
        let lb = || b.kept.split_inclusive(|c| *c == b'\n');
        let prefix = la().zip(lb()).take_while(|(x, y)| x == y).count();
        let suffix = la()
            .rev()
            .zip(lb().rev())
            .take(na.min(nb) - prefix)
            .take_while(|(x, y)| x == y)
            .count();
        let (ma, mb) = (na - prefix - suffix, nb - prefix - suffix);
        if ma.min(mb) > 2 * CONTEXT {
            return false;
        }
        for _ in 0..prefix {
            self.same_line(Text::default());
        }
        if ma + mb > 0 {
            let Some(h) = self.hunk.as_mut().filter(|_| !self.done) else {
                return true;
            };
            // As change_line does: the unchanged lines since the last
            // change join the hunk, then the middle's lines.
            let trail = std::mem::take(&mut h.trail).len() as u64;
            h.a_len += trail + ma as u64;
            h.b_len += trail + mb as u64;
            self.a_no += ma as u64;
            self.b_no += mb as u64;
        }
        for _ in 0..suffix {
            self.same_line(Text::default());
        }
        true
    }

    /// `count_block` of a block of at most one whole line a side.
    #[cfg_attr(as_edit_small, optimize(size))]
    fn count_line_pair(&mut self, old: &[u8], new: &[u8]) {
        if old == new {
            if !old.is_empty() {
                self.same_line(Text::default());
            }
        } else if let Some(h) = self.hunk.as_mut().filter(|_| !self.done) {
            let (ma, mb) = (u64::from(!old.is_empty()), u64::from(!new.is_empty()));
            let trail = std::mem::take(&mut h.trail).len() as u64;
            h.a_len += trail + ma;
            h.b_len += trail + mb;
            self.a_no += ma;
            self.b_no += mb;
        }
    }

    #[cfg_attr(as_edit_small, optimize(size))]
    fn close_hunk(&mut self) {
        let Some(mut h) = self.hunk.take() else {
            return;
        };
        let trail = std::mem::take(&mut h.trail);
        let shown = trail.len().min(CONTEXT);
        for t in &trail[..shown] {
            h.line(b' ', &t.kept, t.cut);
            h.a_len += 1;
            h.b_len += 1;
        }
        // The last lines of a long unchanged run lead into the next hunk.
        let from = trail.len().saturating_sub(CONTEXT).max(shown);
        self.lead = trail.into_iter().skip(from).collect();
        let header = format!(
            "@@ -{} +{} @@\n",
            range(h.a_start, h.a_len),
            range(h.b_start, h.b_len)
        );
        let mut fits = true;
        if !self.started {
            self.started = true;
            let names = format!("--- {0}\n+++ {0}\n", self.name);
            fits = push_capped(&mut self.out, names.as_bytes(), self.cap);
        }
        fits = fits
            && push_capped(&mut self.out, header.as_bytes(), self.cap)
            && push_capped(&mut self.out, &h.body, self.cap)
            && !h.full;
        if !fits {
            // Cut: nothing after this point can be shown; free what is held.
            self.done = true;
            self.block = None;
            self.lead.clear();
            self.shared = Text::default();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::apply_diff::apply;
    use crate::diff::tests::text;
    use crate::diff::{unified, CAP};

    /// Drives a [`Builder`] the way the engine does: unchanged text in
    /// pieces of the given sizes, then each replacement (first, or all).
    fn built(
        old: &str,
        from: &str,
        to: &str,
        all: bool,
        sizes: &[usize],
        cap: usize,
    ) -> (String, bool) {
        let mut b = Builder::new("/f", cap);
        let mut k = 0;
        let mut same = |b: &mut Builder, mut t: &[u8]| {
            while !t.is_empty() {
                let n = sizes[k % sizes.len()].clamp(1, t.len());
                b.same(&t[..n]);
                t = &t[n..];
                k += 1;
            }
        };
        let mut last = 0;
        for (at, _) in old
            .match_indices(from)
            .take(if all { usize::MAX } else { 1 })
        {
            same(&mut b, &old.as_bytes()[last..at]);
            b.change(from.as_bytes(), to.as_bytes());
            last = at + from.len();
        }
        same(&mut b, &old.as_bytes()[last..]);
        b.finish()
    }

    fn replaced(old: &str, from: &str, to: &str, all: bool) -> String {
        if all {
            old.replace(from, to)
        } else {
            old.replacen(from, to, 1)
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 2000, ..Default::default() })]

        /// The streamed diff of one edit (first or every occurrence) applies
        /// to the old text and gives the new one, whatever the pieces.
        #[test]
        fn built_diffs_apply(old in text(120), start in 0usize..400, len in 1usize..12, to in text(8), all in proptest::bool::ANY,
                             sizes in proptest::collection::vec(1usize..30, 1..4)) {
            let chars: Vec<char> = old.chars().collect();
            proptest::prop_assume!(!chars.is_empty());
            let s = start % chars.len();
            let from: String = chars[s..(s + len).min(chars.len())].iter().collect();
            let new = replaced(&old, &from, &to, all);
            let (d, cut) = built(&old, &from, &to, all, &sizes, CAP);
            proptest::prop_assert!(!cut);
            proptest::prop_assert_eq!(apply(&old, &d), Some(new.clone()), "diff:\n{}", d);
            // No change, no diff; a change, a diff.
            proptest::prop_assert_eq!(d.is_empty(), old == new);
        }

        /// Cut at every cap: exactly the uncut diff up to its last line end
        /// within the cap (so valid UTF-8, never mid-character), and
        /// flagged as cut whenever something was left out.
        #[test]
        fn cut_at_every_cap_is_a_line_prefix(old in text(60), start in 0usize..200, len in 1usize..6, to in text(6), all in proptest::bool::ANY) {
            let chars: Vec<char> = old.chars().collect();
            proptest::prop_assume!(!chars.is_empty());
            let s = start % chars.len();
            let from: String = chars[s..(s + len).min(chars.len())].iter().collect();
            let new = replaced(&old, &from, &to, all);
            let (whole, _) = built(&old, &from, &to, all, &[7], CAP);
            let (whole_u, _) = unified(&old, &new, "/f", CONTEXT, CAP);
            for cap in 0..=whole.len().max(whole_u.len()) + 1 {
                for (got, full) in [
                    (built(&old, &from, &to, all, &[7], cap), &whole),
                    (unified(&old, &new, "/f", CONTEXT, cap), &whole_u),
                ] {
                    let keep = if cap >= full.len() {
                        full.len()
                    } else {
                        full.as_bytes()[..cap].iter().rposition(|b| *b == b'\n').map_or(0, |p| p + 1)
                    };
                    proptest::prop_assert_eq!(&got.0, &full[..keep], "cap {}", cap);
                    proptest::prop_assert_eq!(got.1, keep < full.len(), "cap {}", cap);
                }
            }
        }
    }

    #[test]
    fn cuts_on_a_line_not_inside_a_two_byte_character() {
        let old = "MARK\n";
        let to = format!("a\n{}", format!("{}\n", "é".repeat(40)).repeat(1000));
        let (d, cut) = built(old, "MARK", &to, false, &[1000], CAP);
        assert!(cut && d.len() <= CAP && d.ends_with('\n'));
        assert!(
            d.starts_with("--- /f\n+++ /f\n@@ -1,1 +1,1002 @@\n-MARK\n+a\n+éé"),
            "{}",
            &d[..80]
        );
        let (u, cut) = unified(old, &old.replace("MARK", &to), "/f", CONTEXT, CAP);
        assert!(cut);
        assert!(u == d, "{}", &u[..80]);
    }

    #[test]
    fn builder_examples() {
        let old: String = (1..=30).map(|i| format!("{i}\n")).collect();
        // Far-apart replacements (5, 15, 25): one hunk each, as `diff -u` makes them.
        let (d, _) = built(&old, "5\n", "five\n", true, &[4], CAP);
        assert_eq!(
            d,
            "--- /f\n+++ /f\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n@@ -12,7 +12,7 @@\n 12\n 13\n 14\n-15\n+1five\n 16\n 17\n 18\n@@ -22,7 +22,7 @@\n 22\n 23\n 24\n-25\n+2five\n 26\n 27\n 28\n"
        );
        // Close ones merge; context inside OLD/NEW is shown as context.
        let (d, _) = built(&old, "10\n11\n", "10\nX\n", false, &[3], CAP);
        assert_eq!(
            d,
            "--- /f\n+++ /f\n@@ -8,7 +8,7 @@\n 8\n 9\n 10\n-11\n+X\n 12\n 13\n 14\n"
        );
        // Mid-line, and the last line without a newline.
        let (d, _) = built("ab\ncd", "d", "D", false, &[1], CAP);
        assert_eq!(d, "--- /f\n+++ /f\n@@ -1,2 +1,2 @@\n ab\n-cd\n\\ No newline at end of file\n+cD\n\\ No newline at end of file\n");
        let (d, _) = built("ab\ncd", "d", "d\n", false, &[1], CAP);
        assert_eq!(
            d,
            "--- /f\n+++ /f\n@@ -1,2 +1,2 @@\n ab\n-cd\n\\ No newline at end of file\n+cd\n"
        );
        // Deleting a whole line.
        let (d, _) = built("a\nb\nc\n", "b\n", "", false, &[2], CAP);
        assert_eq!(d, "--- /f\n+++ /f\n@@ -1,3 +1,2 @@\n a\n-b\n c\n");
    }
}
