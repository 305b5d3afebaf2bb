//! Unified diffs for `--report --diff` (pure; no I/O).
//!
//! One edit: [`Builder`] is fed the engine's stream of unchanged text and
//! replacements (OLD → NEW) as it goes, and builds the hunks around each
//! replacement with a few lines of context, in bounded memory: the last
//! lines before a change, the changed lines themselves (each side kept up to
//! `SIDE_KEEP` bytes), and the hunk being built (up to the output cap). No
//! copy of either text is kept, whatever the file size.
//!
//! A batch (later edits may rewrite earlier ones) is diffed by [`unified`]
//! over both whole texts, which the engine keeps only up to a bound.
//!
//! Lines are compared with Myers' algorithm after trimming the common prefix
//! and suffix. Past a step bound the middle is shown as removals then
//! additions: still a correct diff, just not minimal, and the time and
//! memory stay bounded.

/// The diff in the result line is at most this long (cut at a line end).
pub const CAP: usize = 64 * 1024;
/// Lines of context around each change.
pub const CONTEXT: usize = 3;
/// Myers step bound for [`unified`] (whole texts of a batch).
const MAX_EDIT_STEPS: usize = 2000;
/// Myers step bound within one changed region of [`Builder`]: its trace
/// stays under half a MiB.
const BLOCK_EDIT_STEPS: usize = 256;
/// Bytes kept of one line, and of each side of a changed region. A longer
/// line cannot fit in the capped diff, so the rest is never needed.
const SIDE_KEEP: usize = 2 * CAP;

/// The file name for the `---`/`+++` header lines. A name with a control
/// character, `"` or `\\`, or that is not UTF-8, would break the header
/// line (a newline) or be misread, so it is quoted C-style as git does:
/// `"…"` with `\\a \\b \\t \\n \\v \\f \\r \\" \\\\` and every other byte
/// below 0x20, 0x7f and above as a three-digit octal escape (`patch` and
/// `git apply` read it back). Any other name is written as it is.
pub fn quote_name(name: &[u8]) -> String {
    let needs = std::str::from_utf8(name).is_err()
        || name
            .iter()
            .any(|&b| b < 0x20 || b == 0x7f || b == b'"' || b == b'\\');
    if !needs {
        return String::from_utf8_lossy(name).into_owned();
    }
    let mut out = String::with_capacity(name.len() + 2);
    out.push('"');
    for &b in name {
        match b {
            0x07 => out.push_str("\\a"),
            0x08 => out.push_str("\\b"),
            b'\t' => out.push_str("\\t"),
            b'\n' => out.push_str("\\n"),
            0x0b => out.push_str("\\v"),
            0x0c => out.push_str("\\f"),
            b'\r' => out.push_str("\\r"),
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\{b:03o}")),
        }
    }
    out.push('"');
    out
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Same,
    Del,
    Add,
}

/// Splits into lines, each keeping its `\n` (the last may lack one).
fn lines(s: &str) -> Vec<&str> {
    s.split_inclusive('\n').collect()
}

/// The unified diff of `old` → `new` with `context` lines, at most `cap`
/// bytes (cut at a line end). Returns the text and whether it was cut.
/// Only the span from the first to the last differing line (plus context)
/// is split into lines: the line tables grow with that span, not the file.
pub fn unified(old: &str, new: &str, name: &str, context: usize, cap: usize) -> (String, bool) {
    let (o, n) = (old.as_bytes(), new.as_bytes());
    let pre = o.iter().zip(n).take_while(|(x, y)| x == y).count();
    // Back to the start of the first differing line, then `context` more.
    let first = memchr::memrchr(b'\n', &o[..pre]).map_or(0, |p| p + 1);
    let (mut start, mut skipped) = (first, memchr::memchr_iter(b'\n', &o[..first]).count());
    for _ in 0..context {
        if start == 0 {
            break;
        }
        start = memchr::memrchr(b'\n', &o[..start - 1]).map_or(0, |p| p + 1);
        skipped -= 1;
    }
    // The suffix may not reach back into the common leading lines.
    let max_suf = o.len().min(n.len()) - first;
    let suf = o
        .iter()
        .rev()
        .zip(n.iter().rev())
        .take(max_suf)
        .take_while(|(x, y)| x == y)
        .count();
    // The common suffix from a line start in both texts, then `context` more.
    let (mut eo, mut en) = (o.len() - suf, n.len() - suf);
    let at_line_start = |t: &[u8], i: usize| i == first || t[i - 1] == b'\n';
    if !(at_line_start(o, eo) && at_line_start(n, en)) {
        let step = memchr::memchr(b'\n', &o[eo..]).map_or(o.len() - eo, |p| p + 1);
        eo += step;
        en += step;
    }
    for _ in 0..context {
        let step = memchr::memchr(b'\n', &o[eo..]).map_or(o.len() - eo, |p| p + 1);
        eo += step;
        en += step;
    }
    // All cuts are just after a `\n` (or at an end), so on char boundaries.
    unified_span(
        &old[start..eo],
        &new[start..en],
        name,
        context,
        cap,
        skipped as u64,
    )
}

/// A changed span longer than this (in lines, either side) is shown as one
/// hunk, written straight into the capped output: no line tables.
const BIG_SPAN_LINES: usize = 64 * 1024;

/// Iterates the lines of `t`, each with its `\n` (the last may lack one).
fn byte_lines(t: &[u8]) -> impl DoubleEndedIterator<Item = &[u8]> {
    t.split_inclusive(|c| *c == b'\n')
}

/// The diff of a span too long to compare line by line, in constant memory
/// besides the output: the common leading and trailing lines as context
/// (at most `context` after), every other old line removed, every other new
/// line added, as one hunk; written line by line into at most `cap` bytes.
fn one_hunk(
    old: &[u8],
    new: &[u8],
    name: &str,
    context: usize,
    cap: usize,
    offset: u64,
) -> (String, bool) {
    let count = |t: &[u8]| byte_lines(t).count();
    let (na, nb) = (count(old), count(new));
    let pre = byte_lines(old)
        .zip(byte_lines(new))
        .take_while(|(x, y)| x == y)
        .count();
    let suf = byte_lines(old)
        .rev()
        .zip(byte_lines(new).rev())
        .take(na.min(nb) - pre)
        .take_while(|(x, y)| x == y)
        .count();
    if pre == na && pre == nb {
        return (String::new(), false);
    }
    let after = suf.min(context);
    let (ma, mb) = (na - pre - suf, nb - pre - suf);
    let mut out = Vec::new();
    let head = format!(
        "--- {name}\n+++ {name}\n@@ -{} +{} @@\n",
        range(offset, (pre + ma + after) as u64),
        range(offset, (pre + mb + after) as u64)
    );
    let mut fits = push_capped(&mut out, head.as_bytes(), cap);
    let mut piece = Vec::new();
    let shown = byte_lines(old)
        .take(pre)
        .map(|l| (b' ', l))
        .chain(byte_lines(old).skip(pre).take(ma).map(|l| (b'-', l)))
        .chain(byte_lines(new).skip(pre).take(mb).map(|l| (b'+', l)))
        .chain(
            byte_lines(old)
                .skip(pre + ma)
                .take(after)
                .map(|l| (b' ', l)),
        );
    for (mark, line) in shown {
        if !fits {
            break;
        }
        piece.clear();
        piece.push(mark);
        piece.extend_from_slice(line);
        if line.last() != Some(&b'\n') {
            piece.extend_from_slice(b"\n\\ No newline at end of file\n");
        }
        fits = push_capped(&mut out, &piece, cap);
    }
    (into_string(out), !fits)
}

/// [`unified`] of two spans that start at line `offset` (0-based) of both texts.
fn unified_span(
    old: &str,
    new: &str,
    name: &str,
    context: usize,
    cap: usize,
    offset: u64,
) -> (String, bool) {
    let many = |t: &str| memchr::memchr_iter(b'\n', t.as_bytes()).count() > BIG_SPAN_LINES;
    if many(old) || many(new) {
        return one_hunk(old.as_bytes(), new.as_bytes(), name, context, cap, offset);
    }
    let (a, b) = (lines(old), lines(new));
    let script = edit_script(&a, &b, MAX_EDIT_STEPS);
    let mut out = String::new();
    if script.iter().all(|(op, _, _)| *op == Op::Same) {
        return (out, false);
    }
    out.push_str(&format!("--- {name}\n+++ {name}\n"));
    // Group changes into hunks with `context` lines around them.
    let n = script.len();
    let mut i = 0;
    while i < n {
        if script[i].0 == Op::Same {
            i += 1;
            continue;
        }
        let start = i.saturating_sub(context);
        let mut end = i;
        // Extend while the next change is within 2*context same lines.
        loop {
            while end < n && script[end].0 != Op::Same {
                end += 1;
            }
            let mut j = end;
            while j < n && script[j].0 == Op::Same && j - end < 2 * context {
                j += 1;
            }
            if j < n && script[j].0 != Op::Same {
                end = j;
                continue;
            }
            end = (end + context).min(n);
            break;
        }
        let hunk = &script[start..end];
        let (a0, b0) = (hunk[0].1, hunk[0].2);
        let a_len = hunk.iter().filter(|h| h.0 != Op::Add).count();
        let b_len = hunk.iter().filter(|h| h.0 != Op::Del).count();
        out.push_str(&format!(
            "@@ -{} +{} @@\n",
            range(offset + a0 as u64, a_len as u64),
            range(offset + b0 as u64, b_len as u64)
        ));
        for &(op, ai, bi) in hunk {
            let (mark, text) = match op {
                Op::Same => (' ', a[ai]),
                Op::Del => ('-', a[ai]),
                Op::Add => ('+', b[bi]),
            };
            out.push(mark);
            out.push_str(text);
            if !text.ends_with('\n') {
                out.push_str("\n\\ No newline at end of file\n");
            }
        }
        i = end;
        if out.len() > cap {
            break; // the rest would be cut anyway
        }
    }
    let mut capped = Vec::new();
    let cut = !push_capped(&mut capped, out.as_bytes(), cap);
    (into_string(capped), cut)
}

/// Appends the whole lines of `text` that fit within `cap` bytes in total.
/// Returns false when some of `text` was left out. Cutting after a `\n`
/// byte never splits a UTF-8 character.
fn push_capped(out: &mut Vec<u8>, text: &[u8], cap: usize) -> bool {
    if out.len() + text.len() <= cap {
        out.extend_from_slice(text);
        return true;
    }
    let room = cap.saturating_sub(out.len()).min(text.len());
    let keep = memchr::memrchr(b'\n', &text[..room]).map_or(0, |p| p + 1);
    out.extend_from_slice(&text[..keep]);
    false
}

/// Empty, or exactly one line with its `\n`.
fn whole_line_or_empty(b: &[u8]) -> bool {
    match b.split_last() {
        None => true,
        Some((&last, rest)) => last == b'\n' && memchr::memchr(b'\n', rest).is_none(),
    }
}

/// The diff's bytes are cut only after `\n`, so they stay UTF-8; a lossy
/// conversion is only a guard.
fn into_string(b: Vec<u8>) -> String {
    String::from_utf8(b).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// Text kept up to `SIDE_KEEP` bytes (`cut` past that), with the facts the
/// hunks need about the whole of it: its newlines and its last byte.
#[derive(Clone, Default)]
struct Text {
    kept: Vec<u8>,
    cut: bool,
    newlines: u64,
    last: Option<u8>,
}

impl Text {
    fn push(&mut self, b: &[u8]) {
        let Some(&last) = b.last() else { return };
        self.last = Some(last);
        self.newlines += memchr::memchr_iter(b'\n', b).count() as u64;
        if !self.cut {
            let room = SIDE_KEEP - self.kept.len();
            self.kept.extend_from_slice(&b[..b.len().min(room)]);
            self.cut = b.len() > room;
        }
    }
    fn from_line(b: &[u8]) -> Text {
        let mut t = Text::default();
        t.push(b);
        t
    }
    fn is_empty(&self) -> bool {
        self.last.is_none()
    }
    /// Empty, or ending with a complete line.
    fn at_line_start(&self) -> bool {
        matches!(self.last, None | Some(b'\n'))
    }
    fn lines(&self) -> u64 {
        self.newlines + u64::from(!self.at_line_start())
    }
}

/// The hunk being built. Its header needs its line counts, known only when
/// it closes, so its body waits here (kept up to what can still fit).
struct Hunk {
    a_start: u64,
    b_start: u64,
    a_len: u64,
    b_len: u64,
    body: Vec<u8>,
    /// Bytes the body may still take in the output; past them it is not kept.
    room: usize,
    /// Some of the body was not kept: the diff is cut within this hunk.
    full: bool,
    /// Unchanged lines since the last change (up to 2 * CONTEXT + 1).
    trail: Vec<Text>,
}

impl Hunk {
    fn line(&mut self, mark: u8, text: &[u8], cut: bool) {
        if self.full {
            return;
        }
        if cut || self.body.len() > self.room {
            self.full = true;
            return;
        }
        self.body.push(mark);
        self.body.extend_from_slice(text);
        if text.last() != Some(&b'\n') {
            self.body
                .extend_from_slice(b"\n\\ No newline at end of file\n");
        }
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

/// A hunk header range. Unified format: an empty range names the line before it.
fn range(first: u64, len: u64) -> String {
    if len == 0 {
        format!("{first},0")
    } else {
        format!("{},{len}", first + 1)
    }
}

/// (op, index in a, index in b) for every line, in order. For `Add` the a
/// index is the position the insertion happens at; for `Del` likewise for b.
fn edit_script<T: PartialEq>(a: &[T], b: &[T], max_steps: usize) -> Vec<(Op, usize, usize)> {
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..]
        .iter()
        .rev()
        .zip(b[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (am, bm) = (&a[prefix..a.len() - suffix], &b[prefix..b.len() - suffix]);
    let mut script: Vec<(Op, usize, usize)> = (0..prefix).map(|i| (Op::Same, i, i)).collect();
    let middle = myers(am, bm, max_steps).unwrap_or_else(|| {
        let mut m: Vec<Op> = vec![Op::Del; am.len()];
        m.extend(std::iter::repeat_n(Op::Add, bm.len()));
        m
    });
    let (mut ai, mut bi) = (prefix, prefix);
    for op in middle {
        script.push((op, ai, bi));
        match op {
            Op::Same => {
                ai += 1;
                bi += 1;
            }
            Op::Del => ai += 1,
            Op::Add => bi += 1,
        }
    }
    for k in 0..suffix {
        script.push((Op::Same, ai + k, bi + k));
    }
    script
}

/// Myers' greedy shortest edit script; None past `max_steps`.
fn myers<T: PartialEq>(a: &[T], b: &[T], max_steps: usize) -> Option<Vec<Op>> {
    let (n, m) = (a.len() as isize, b.len() as isize);
    let max = ((n + m) as usize).min(max_steps) as isize;
    let off = max + 1;
    let mut v = vec![0isize; 2 * off as usize + 1];
    let mut trace: Vec<Vec<isize>> = Vec::new();
    for d in 0..=max {
        // Keep only the diagonals this step can reach.
        trace.push(v[(off - d) as usize..=(off + d) as usize].to_vec());
        let mut k = -d;
        while k <= d {
            let mut x =
                if k == -d || (k != d && v[(off + k - 1) as usize] < v[(off + k + 1) as usize]) {
                    v[(off + k + 1) as usize]
                } else {
                    v[(off + k - 1) as usize] + 1
                };
            let mut y = x - k;
            while x < n && y < m && a[x as usize] == b[y as usize] {
                x += 1;
                y += 1;
            }
            v[(off + k) as usize] = x;
            if x >= n && y >= m {
                return Some(backtrack(&trace, n, m, d));
            }
            k += 2;
        }
    }
    None
}

/// Walks the trace back from (n, m): each step d is one move (down = Add,
/// right = Del) followed by a snake of equal lines. `trace[d]` is the state
/// before step d, for diagonals -d..=d.
fn backtrack(trace: &[Vec<isize>], n: isize, m: isize, last: isize) -> Vec<Op> {
    let mut ops = Vec::new();
    let (mut x, mut y) = (n, m);
    for d in (1..=last).rev() {
        let v = &trace[d as usize];
        let at = |k: isize| v[(k + d) as usize];
        let k = x - y;
        let down = k == -d || (k != d && at(k - 1) < at(k + 1));
        let prev_k = if down { k + 1 } else { k - 1 };
        let prev_x = at(prev_k);
        let prev_y = prev_x - prev_k;
        // Where the move landed; the snake runs from there to (x, y).
        let (mid_x, mid_y) = if down {
            (prev_x, prev_y + 1)
        } else {
            (prev_x + 1, prev_y)
        };
        while x > mid_x && y > mid_y {
            ops.push(Op::Same);
            x -= 1;
            y -= 1;
        }
        ops.push(if down { Op::Add } else { Op::Del });
        x = prev_x;
        y = prev_y;
    }
    while x > 0 && y > 0 {
        ops.push(Op::Same);
        x -= 1;
        y -= 1;
    }
    ops.reverse();
    ops
}

/// The tests' strict `patch`, shared with the integration tests.
#[cfg(test)]
#[path = "../../tests/support/apply_diff.rs"]
mod apply_diff;

#[cfg(test)]
mod tests {
    use super::*;

    /// break10 finding 4c: a span too long for line tables is written as
    /// one hunk straight into the cap, exactly as the step-bound fallback
    /// of the line diff writes it (same header, same lines, same cut).
    #[test]
    fn one_hunk_is_the_line_diffs_fallback() {
        let mut old = String::from("p1\np2\n");
        let mut new = old.clone();
        for i in 0..3000 {
            old.push_str(&format!("a{i}\n"));
            new.push_str(&format!("b{i}\n"));
        }
        new.push_str("extra\n");
        old.push_str("s1\ns2\ns3\ns4\nlast");
        new.push_str("s1\ns2\ns3\ns4\nlast");
        for cap in [0, 40, 100, 1000, 5000, CAP, usize::MAX] {
            let want = unified_span(&old, &new, "/f", CONTEXT, cap, 7);
            assert!(
                want.0.starts_with("--- /f\n+++ /f\n@@ -8,") || cap < 40,
                "{want:?}"
            );
            assert_eq!(
                one_hunk(old.as_bytes(), new.as_bytes(), "/f", CONTEXT, cap, 7),
                want,
                "cap {cap}"
            );
        }
        // No newline at the end, changed: the marker lines as the line diff writes them.
        let (o, n) = ("x\ny", "x\nz");
        assert_eq!(
            one_hunk(o.as_bytes(), n.as_bytes(), "/f", CONTEXT, CAP, 0),
            unified_span(o, n, "/f", CONTEXT, CAP, 0)
        );
    }

    /// break10 finding 6: names that would break the header are quoted as
    /// git quotes them; ordinary names (UTF-8 included) are unchanged.
    #[test]
    fn header_names_are_quoted_like_git() {
        assert_eq!(quote_name(b"/w/src/app.py"), "/w/src/app.py");
        assert_eq!(quote_name("/w/caf\u{e9} x".as_bytes()), "/w/caf\u{e9} x");
        assert_eq!(quote_name(b"/tmp/nl\nname"), r#""/tmp/nl\nname""#);
        assert_eq!(
            quote_name(b"/a\tb\rc\x07\x08\x0b\x0c\x01\x7f\"q\"\\z"),
            r#""/a\tb\rc\a\b\v\f\001\177\"q\"\\z""#
        );
        // Not UTF-8: the whole name is quoted, every byte >= 0x80 in octal.
        assert_eq!(quote_name(b"/x\xff\xc3\xa9"), r#""/x\377\303\251""#);
    }

    /// Applying the script to `a` must give `b`, and Same lines must match.
    fn check(a: &str, b: &str) {
        let (la, lb) = (lines(a), lines(b));
        let script = edit_script(&la, &lb, MAX_EDIT_STEPS);
        let mut rebuilt = String::new();
        for (op, ai, bi) in script {
            match op {
                Op::Same => {
                    assert_eq!(la[ai], lb[bi]);
                    rebuilt.push_str(la[ai]);
                }
                Op::Add => rebuilt.push_str(lb[bi]),
                Op::Del => {}
            }
        }
        assert_eq!(rebuilt, b);
    }

    #[test]
    fn scripts_rebuild_the_new_text() {
        let cases = [
            ("a\nb\nc\n", "a\nB\nc\n"),
            ("", "x\n"),
            ("x\n", ""),
            ("a\nb\nc\nd\ne\n", "b\nc\nX\ne\nf\n"),
            ("1\n2\n3\n1\n2\n3\n", "3\n1\n2\n1\n2\n"),
            ("no newline", "no newline either"),
        ];
        for (a, b) in cases {
            check(a, b);
            check(b, a);
        }
    }

    #[test]
    fn unified_format() {
        let old = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n";
        let new = "1\n2\n3\n4\nFIVE\n6\n7\n8\n9\n10\n";
        let (d, cut) = unified(old, new, "/f", 3, 65536);
        assert!(!cut);
        assert_eq!(
            d,
            "--- /f\n+++ /f\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+FIVE\n 6\n 7\n 8\n"
        );
        let (d, _) = unified("a", "b", "/f", 3, 65536);
        assert_eq!(d, "--- /f\n+++ /f\n@@ -1,1 +1,1 @@\n-a\n\\ No newline at end of file\n+b\n\\ No newline at end of file\n");
        let (d, cut) = unified(&"x\n".repeat(10), &"y\n".repeat(10), "/f", 3, 40);
        assert!(cut && d.len() <= 40 && d.ends_with('\n'));
        assert_eq!(
            unified("same\n", "same\n", "/f", 3, 100),
            (String::new(), false)
        );
    }

    proptest::proptest! {
        #[test]
        fn any_script_rebuilds(a in proptest::collection::vec(0u8..4, 0..40), b in proptest::collection::vec(0u8..4, 0..40)) {
            let text = |v: &[u8]| v.iter().map(|i| format!("{i}\n")).collect::<String>();
            check(&text(&a), &text(&b));
        }
    }

    use super::apply_diff::apply;

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

    fn piece() -> impl proptest::strategy::Strategy<Value = &'static str> {
        proptest::sample::select(vec![
            "a", "b", "ab", "\n", "\n", "\n\n", "é", "😀", "€ ", "xyz",
        ])
    }

    fn text(max: usize) -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::strategy::Strategy;
        proptest::collection::vec(piece(), 0..max).prop_map(|v| v.concat())
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

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 3000, ..Default::default() })]
        /// Trimming to the changed span gives the same diff as diffing the
        /// whole texts.
        #[test]
        fn span_trimming_changes_nothing(a in text(60), b in text(60), pre in text(30), suf in text(30)) {
            let (old, new) = (format!("{pre}{a}{suf}"), format!("{pre}{b}{suf}"));
            proptest::prop_assert_eq!(
                unified(&old, &new, "/f", CONTEXT, CAP),
                unified_span(&old, &new, "/f", CONTEXT, CAP, 0)
            );
        }
    }

    #[test]
    fn the_issue_case_cuts_on_a_line_not_inside_a_character() {
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

    #[test]
    fn past_the_step_bound_it_is_one_correct_hunk() {
        let a: String = (0..3000).map(|i| format!("{i}\n")).collect();
        let b: String = (0..3000).map(|i| format!("{}\n", i * 7)).collect();
        check(&a, &b);
    }

    #[test]
    fn far_apart_changes_make_two_hunks() {
        let old: String = (1..=30).map(|i| format!("{i}\n")).collect();
        let new = old
            .replace("\n5\n", "\nfive\n")
            .replace("\n25\n", "\ntwenty-five\n");
        let (d, _) = unified(&old, &new, "/f", 3, 65536);
        assert_eq!(d.matches("@@ -").count(), 2, "{d}");
        assert!(
            d.contains("@@ -2,7 +2,7 @@") && d.contains("@@ -22,7 +22,7 @@"),
            "{d}"
        );
    }
}
