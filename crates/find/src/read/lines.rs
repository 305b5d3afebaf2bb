#![doc = include_str!("lines.md")]

use memchr::memchr;
use sha2::{Digest, Sha256};

use as_edit_wire::tools::answer::{char_len, push_char};

/// What a text read asks for.
#[derive(Clone, Copy, Debug)]
pub struct Ask {
    /// The first line (1-based).
    pub start: u64,
    /// The most lines.
    pub limit: Option<u64>,
    /// `cat -n`: each line prefixed with its number in 6 columns and a tab.
    pub numbers: bool,
    /// Lines longer than this many characters are cut here.
    pub max_columns: Option<u64>,
    /// Bytes the answer's parts that vary may take: the escaped text,
    /// `"end"`'s digits, `"eof"`'s word, `lines` and `sha256` (at the
    /// end), `cut_lines` and `next` (see [`tail`]).
    pub budget: usize,
}

/// The page: what the answer says.
#[derive(Debug, PartialEq, Eq)]
pub struct Page {
    /// The lines kept, as in the file (numbered if asked), cut lines cut
    /// (from [`Lines::escaped`]: the line given, then the lines' escapes).
    pub text: String,
    /// The last line kept (`start - 1` if none).
    pub end: u64,
    /// Whether the page reaches the end of the file.
    pub eof: bool,
    /// With `eof`: the file's line count and SHA-256.
    pub whole: Option<(u64, [u8; 32])>,
    /// Lines cut by `max_columns` or by the budget.
    pub cut_lines: Vec<u64>,
    /// Cut by the budget: more lines follow that did not fit.
    pub truncated: bool,
    /// The page's first line does not fit even alone: the budget it needs.
    pub too_long: Option<usize>,
    /// With `truncated`: the byte offset where line `end + 1` starts.
    pub next_at: u64,
    /// The bytes consumed: the file's size when `eof`.
    pub consumed_to: u64,
}

/// A text read that met a NUL or invalid UTF-8 at this byte offset.
#[derive(Debug, PartialEq, Eq)]
pub struct NotText {
    /// The byte offset in the file.
    pub offset: u64,
    /// `a NUL byte`, or what the invalid UTF-8 is.
    pub what: &'static str,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum State {
    Reading,
    Done { eof: bool, full: bool },
}

/// The reader's state between chunks.
pub struct Lines {
    ask: Ask,
    state: State,
    /// The line being read (1-based).
    line: u64,
    /// Bytes consumed so far (from the file's start).
    offset: u64,
    /// Where the current line starts (a byte offset in the file).
    line_at: u64,
    hash: Sha256,
    text: String,
    /// Appends a character to the text: as it is, or escaped (JSON).
    put: fn(&mut String, char),
    used: usize,
    kept: u64,
    cut: Vec<u64>,
    // The current line.
    line_start: usize,
    used_at_start: usize,
    begun: bool,
    has_bytes: bool,
    cols: u64,
    cut_cols: bool,
    over: bool,
    /// What `cut_lines` takes on the line (0 while empty).
    cut_cost: usize,
    cut_at_start: usize,
    too_long: Option<usize>,
}

fn digits(n: u64) -> usize {
    n.checked_ilog10().map_or(1, |d| d as usize + 1)
}

/// What the answer's varying fields take besides the text when its last
/// line is `end`: `last`, the file ends there (`eof`, `lines`, `sha256`);
/// else `next` (the byte offset of line E+1), a `next` follows
/// (`"truncated":true,"next":{"start":E+1,"offset":B,"check":C}`, C's
/// `resume::CHECK_DIGITS` digits).
pub fn tail(end: u64, last: bool, next: Option<u64>) -> usize {
    let fields = if last {
        "true,\"lines\":,\"sha256\":\"\"".len() + digits(end) + 64
    } else if let Some(at) = next {
        "false,\"truncated\":true,\"next\":{\"start\":,\"offset\":,\"check\":}".len()
            + digits(end + 1)
            + digits(at)
            + super::resume::CHECK_DIGITS
    } else {
        "false".len()
    };
    digits(end) + fields
}

impl Lines {
    /// A reader for `ask`.
    pub fn new(ask: Ask) -> Lines {
        Lines::resume(ask, 0)
    }

    /// A reader for `ask` fed from byte `offset` of the file, where line
    /// `ask.start` begins (the caller made sure of it): nothing before it
    /// is read, so the page's hash (in [`Page::whole`]) is of the bytes
    /// from `offset`, its line count right if the offset was.
    pub fn resume(ask: Ask, offset: u64) -> Lines {
        Lines::escaped(ask, offset, String::new(), false)
    }

    /// [`Lines::resume`] writing the text into `line` (what precedes
    /// it there stays), each character as it is or, with `escape`, as an
    /// ASCII JSON string literal's body writes it ([`push_char`]): a read
    /// builds its result line in place, the text never held twice.
    pub fn escaped(ask: Ask, offset: u64, line: String, escape: bool) -> Lines {
        let line_start = line.len();
        Lines {
            ask,
            state: State::Reading,
            line: if offset == 0 { 1 } else { ask.start },
            offset,
            line_at: offset,
            hash: Sha256::new(),
            text: line,
            put: if escape { push_char } else { String::push },
            used: 0,
            kept: 0,
            cut: Vec::new(),
            line_start,
            used_at_start: 0,
            begun: false,
            has_bytes: false,
            cols: 0,
            cut_cols: false,
            over: false,
            cut_cost: 0,
            cut_at_start: 0,
            too_long: None,
        }
    }

    /// Whether the page is complete: feed no more.
    pub fn done(&self) -> bool {
        matches!(self.state, State::Done { .. })
    }

    /// Reads from `buf` (what follows the bytes consumed so far); `eof`:
    /// nothing follows `buf`. Returns how many bytes it consumed: the
    /// caller keeps the rest and feeds it again with what follows (a
    /// character or a CR split at the chunk's edge), unless [`Lines::done`].
    pub fn feed(&mut self, buf: &[u8], eof: bool) -> Result<usize, NotText> {
        let mut i = 0;
        while self.state == State::Reading && i < buf.len() {
            if !self.in_range() {
                i += self.skip(buf, i)?;
                if i == buf.len() {
                    break;
                }
            }
            let rest = &buf[i..];
            let term = memchr(b'\n', rest);
            let mut seg = &rest[..term.unwrap_or(rest.len())];
            // A CR before the LF is the ending's; one at the chunk's edge
            // may be (kept for the next feed); at the file's end, text.
            if seg.last() == Some(&b'\r') && (term.is_some() || !eof) {
                seg = &seg[..seg.len() - 1];
            }
            let text = match std::str::from_utf8(seg) {
                Ok(s) => s,
                Err(e) if e.error_len().is_none() && term.is_none() && !eof => {
                    std::str::from_utf8(&seg[..e.valid_up_to()]).expect("valid up to here")
                }
                Err(e) => {
                    let at = memchr(0, &seg[..e.valid_up_to()]);
                    return Err(match at {
                        Some(k) => self.not_text(i + k, "a NUL byte"),
                        None => self.not_text(i + e.valid_up_to(), "invalid UTF-8"),
                    });
                }
            };
            if let Some(k) = memchr(0, text.as_bytes()) {
                return Err(self.not_text(i + k, "a NUL byte"));
            }
            let n = text.len();
            self.content(text);
            i += n;
            if self.state != State::Reading {
                break; // the line did not fit: the page ends before it
            }
            let Some(t) = term.filter(|_| n == seg.len()) else {
                break; // more is needed (or this was the end)
            };
            if t + 1 == rest.len() && !eof {
                // Whether the file ends with this line decides the
                // answer's tail: known with the next feed.
                break;
            }
            let term_bytes = &rest[n..=t];
            i += term_bytes.len();
            self.end_line(term_bytes, eof && i == buf.len(), self.offset + i as u64);
        }
        self.hash.update(&buf[..i]);
        self.offset += i as u64;
        if eof && i == buf.len() && self.state == State::Reading {
            if self.has_bytes {
                self.end_line(b"", true, self.offset);
            }
            if self.state == State::Reading {
                self.state = State::Done {
                    eof: true,
                    full: false,
                };
            }
        }
        Ok(i)
    }

    /// Lines before `start` from `buf[i..]`, whole lines at once (one UTF-8 check and
    /// one NUL search over them all, not one per line: a `next` followed
    /// through a file rescans what the pages before read). Returns the
    /// bytes consumed: up to the last LF that still ends a line before
    /// `start` and has a byte after it (the per-line path decides the
    /// rest, the file's end included).
    fn skip(&mut self, buf: &[u8], i: usize) -> Result<usize, NotText> {
        let rest = &buf[i..];
        let want = self.ask.start - self.line;
        let mut k = 0;
        let mut upto = 0;
        for t in memchr::memchr_iter(b'\n', rest) {
            if k == want || t + 1 == rest.len() {
                break;
            }
            k += 1;
            upto = t + 1;
        }
        if k == 0 {
            return Ok(0);
        }
        let region = &rest[..upto];
        // It ends with an LF: any UTF-8 error is an invalid byte, and the
        // first fault in file order is the one named, as line by line.
        let valid = match std::str::from_utf8(region) {
            Ok(_) => region.len(),
            Err(e) => e.valid_up_to(),
        };
        if let Some(z) = memchr(0, &region[..valid]) {
            return Err(self.not_text(i + z, "a NUL byte"));
        }
        if valid < region.len() {
            return Err(self.not_text(i + valid, "invalid UTF-8"));
        }
        // The hash and the offset take these bytes with the rest of `buf`.
        self.line += k;
        self.line_at = self.offset + (i + upto) as u64;
        self.has_bytes = false;
        Ok(upto)
    }

    fn not_text(&self, at: usize, what: &'static str) -> NotText {
        NotText {
            offset: self.offset + at as u64,
            what,
        }
    }

    fn in_range(&self) -> bool {
        self.line >= self.ask.start
    }

    fn begin(&mut self) {
        if self.begun {
            return;
        }
        self.begun = true;
        if self.ask.numbers && self.in_range() {
            let prefix = format!("{:>6}\t", self.line);
            // Digits are one byte each, the tab two (`\t`).
            let cost = prefix.len() + 1;
            self.used += cost;
            if self.early_over() {
                return self.overflow();
            }
            self.push(&prefix);
        }
    }

    /// Appends `s` to the text, escaped if asked.
    fn push(&mut self, s: &str) {
        s.chars().for_each(|c| (self.put)(&mut self.text, c));
    }

    /// A line's text (no terminator).
    fn content(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        self.has_bytes = true;
        if !self.in_range() {
            return;
        }
        self.begin();
        for c in text.chars() {
            if self.cut_cols || (self.over && self.kept > 0) {
                return;
            }
            // A character starts: it may be the one past the cut.
            if Some(self.cols) == self.ask.max_columns {
                self.cut_cols = true;
                return;
            }
            self.used += char_len(c);
            self.cols += 1;
            if !self.over && self.early_over() {
                self.overflow();
            }
            if !self.over {
                (self.put)(&mut self.text, c);
            }
        }
    }

    /// Whether the current line cannot fit whatever the tail: the page
    /// need not read the rest of it (the smallest tail is a `limit`'s).
    fn early_over(&self) -> bool {
        self.used + self.cut_cost + tail(self.line, false, None) > self.ask.budget
    }

    /// The current line does not fit: the page ends before it, at once
    /// (nothing more of it is read), unless it is the page's first line,
    /// whose cost is still counted to its end (kept out of the text) for
    /// the refusal's figure.
    fn overflow(&mut self) {
        self.over = true;
        if self.kept > 0 {
            self.stop_before();
        }
    }

    fn stop_before(&mut self) {
        self.text.truncate(self.line_start);
        self.used = self.used_at_start;
        self.cut_cost = self.cut_at_start;
        self.state = State::Done {
            eof: false,
            full: true,
        };
    }

    /// The current line ends with `term` (empty: at the end of the
    /// file); `last`: nothing follows it; `next_at`: where the next starts.
    fn end_line(&mut self, term: &[u8], last: bool, next_at: u64) {
        if self.in_range() {
            self.begin();
            self.used += 2 * term.len();
            if self.cut_cols {
                // `,"cut_lines":[` and `]` with the first entry, a comma with each other.
                let first = if self.cut.is_empty() { 14 } else { 0 };
                self.cut_cost += first + 1 + digits(self.line);
            }
            let at_limit = Some(self.kept + 1) == self.ask.limit;
            let end = self.line;
            let next = (!at_limit).then_some(next_at);
            let fits =
                !self.over && self.used + self.cut_cost + tail(end, last, next) <= self.ask.budget;
            if !fits {
                if self.kept == 0 {
                    // Alone too long: refused, naming what it needs.
                    let need = self.used + self.cut_cost + tail(end, last, next);
                    self.too_long = Some(need);
                    self.text.truncate(self.line_start);
                    self.state = State::Done {
                        eof: false,
                        full: true,
                    };
                    return;
                }
                return self.stop_before();
            }
            // A terminator is ASCII (`\n`, `\r\n`), checked with the line.
            self.push(std::str::from_utf8(term).expect("ASCII"));
            if self.cut_cols {
                self.cut.push(self.line);
            }
            self.kept += 1;
            if at_limit || last {
                self.state = State::Done {
                    eof: last,
                    full: false,
                };
            }
        } else if last {
            self.state = State::Done {
                eof: true,
                full: false,
            };
        }
        self.line += 1;
        self.line_at = next_at;
        self.line_start = self.text.len();
        self.used_at_start = self.used;
        self.cut_at_start = self.cut_cost;
        self.begun = false;
        self.has_bytes = false;
        self.cols = 0;
        self.cut_cols = false;
        self.over = false;
    }

    /// The page; call once [`Lines::done`].
    pub fn finish(self) -> Page {
        let State::Done { eof, full } = self.state else {
            panic!("finish before done");
        };
        let end = self.ask.start - 1 + self.kept;
        Page {
            text: self.text,
            end,
            eof,
            whole: eof.then(|| (self.line - 1, self.hash.finalize().into())),
            cut_lines: self.cut,
            truncated: full && !eof,
            too_long: self.too_long,
            next_at: self.line_at,
            consumed_to: self.offset,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ask(start: u64, limit: Option<u64>) -> Ask {
        Ask {
            start,
            limit,
            numbers: false,
            max_columns: None,
            budget: 1 << 20,
        }
    }

    /// Feeds `file` in chunks of `step` bytes as `read.rs` does: the
    /// unconsumed rest first, then the next chunk.
    fn read(file: &[u8], a: Ask, step: usize) -> Result<(Page, usize), NotText> {
        let mut l = Lines::new(a);
        let mut buf = Vec::new();
        let mut at = 0;
        while !l.done() {
            let end = (at + step).min(file.len());
            buf.extend_from_slice(&file[at..end]);
            at = end;
            let n = l.feed(&buf, at == file.len())?;
            buf.drain(..n);
        }
        Ok((l.finish(), at))
    }

    #[test]
    fn ranges_eof_and_the_whole_file() {
        // A lone CR is text (as in ripgrep): three lines.
        let f = b"a\nb\r\nc\rd";
        let (p, _) = read(f, ask(2, Some(1)), 3).unwrap();
        assert_eq!(p.text, "b\r\n");
        assert_eq!((p.end, p.eof, p.whole.is_some()), (2, false, false));
        let (p, _) = read(f, ask(3, None), 3).unwrap();
        assert_eq!(p.text, "c\rd");
        assert_eq!((p.end, p.eof), (3, true));
        let sha: [u8; 32] = Sha256::digest(f).into();
        assert_eq!(p.whole, Some((3, sha)));
        // A CR at a chunk's edge, then at the file's end.
        for step in 1..6 {
            let (p, _) = read(b"x\ry\r", ask(1, None), step).unwrap();
            assert_eq!(
                (p.text.as_str(), p.end, p.whole.map(|w| w.0)),
                ("x\ry\r", 1, Some(1))
            );
        }
        // The limit ends the page at the file's end: eof all the same.
        let (p, _) = read(f, ask(1, Some(3)), 100).unwrap();
        assert_eq!((p.end, p.eof, p.whole.map(|w| w.0)), (3, true, Some(3)));
        let (p, _) = read(b"", ask(1, None), 1).unwrap();
        assert_eq!(
            (p.text.as_str(), p.end, p.eof, p.whole.map(|w| w.0)),
            ("", 0, true, Some(0))
        );
        let (p, _) = read(b"x\n", ask(5, None), 1).unwrap();
        assert_eq!(
            (p.text.as_str(), p.end, p.eof, p.whole.map(|w| w.0)),
            ("", 4, true, Some(1))
        );
    }

    #[test]
    fn numbers_and_columns() {
        let a = Ask {
            numbers: true,
            max_columns: Some(2),
            ..ask(9, None)
        };
        let f = "1\n2\n3\n4\n5\n6\n7\n8\nnine\n10\n\u{e9}\u{e9}\u{e9}\n".as_bytes();
        let (p, _) = read(f, a, 2).unwrap();
        assert_eq!(p.text, "     9\tni\n    10\t10\n    11\t\u{e9}\u{e9}\n");
        assert_eq!(p.cut_lines, [9, 11]);
        // A CRLF's CR is the ending's, not a column; a lone CR is one.
        let a = Ask {
            max_columns: Some(2),
            ..ask(1, None)
        };
        let (p, _) = read(b"ab\r\na\rb\r\n", a, 3).unwrap();
        assert_eq!(
            (p.text.as_str(), &p.cut_lines[..]),
            ("ab\r\na\r\r\n", &[2][..])
        );
    }

    #[test]
    fn not_text_names_the_offset_and_an_edge_is_not_invalid() {
        let f = "ab\n\u{e9}\u{20ac}\n".as_bytes();
        for step in 1..f.len() + 1 {
            let (p, _) = read(f, ask(1, None), step).unwrap();
            assert_eq!(p.text.as_bytes(), f);
        }
        assert_eq!(
            read(b"ab\nc\0", ask(1, None), 2).unwrap_err(),
            NotText {
                offset: 4,
                what: "a NUL byte"
            }
        );
        assert_eq!(
            read(b"ab\n\xe9x", ask(1, None), 100).unwrap_err(),
            NotText {
                offset: 3,
                what: "invalid UTF-8"
            }
        );
        assert_eq!(
            read(b"ab\n\xe2\x82", ask(1, None), 1).unwrap_err(),
            NotText {
                offset: 3,
                what: "invalid UTF-8"
            }
        );
        // Past line E nothing is checked.
        let (p, _) = read(b"ok\n\0\0", ask(1, Some(1)), 100).unwrap();
        assert_eq!((p.text.as_str(), p.eof), ("ok\n", false));
    }

    #[test]
    fn a_line_is_kept_iff_the_answer_with_it_fits() {
        let f = b"ab\ncd\nef\n";
        let with = |budget| Ask {
            budget,
            ..ask(1, None)
        };
        // "ab\n" costs 4 escaped, "cd\n" 4 more: two lines and a `next`.
        let two = 8 + tail(2, false, Some(6));
        for step in [1, 2, 100] {
            let (p, _) = read(f, with(two), step).unwrap();
            assert_eq!(
                (p.text.as_str(), p.end, p.truncated, p.eof),
                ("ab\ncd\n", 2, true, false)
            );
            let (p, _) = read(f, with(two - 1), step).unwrap();
            assert_eq!((p.text.as_str(), p.end, p.truncated), ("ab\n", 1, true));
            // The whole file: the eof tail (lines, sha256), no next.
            let all = 12 + tail(3, true, None);
            let (p, _) = read(f, with(all), step).unwrap();
            assert_eq!((p.end, p.truncated, p.eof), (3, false, true));
            let (p, _) = read(f, with(all - 1), step).unwrap();
            assert_eq!((p.end, p.truncated, p.eof), (2, true, false));
            // `limit` ending the page: no next, so a shorter tail.
            let one = |budget| Ask {
                limit: Some(1),
                ..with(budget)
            };
            let (p, _) = read(f, one(4 + tail(1, false, None)), step).unwrap();
            assert_eq!((p.end, p.truncated, p.eof), (1, false, false));
            let (p, _) = read(f, one(3 + tail(1, false, None)), step).unwrap();
            assert_eq!((p.end, p.too_long), (0, Some(4 + tail(1, false, None))));
        }
    }

    #[test]
    fn a_first_line_too_long_alone_is_measured_or_cut_at_max_columns() {
        let f = b"abcdefghijkl\nx\n";
        let (p, _) = read(
            f,
            Ask {
                budget: 30,
                ..ask(1, None)
            },
            5,
        )
        .unwrap();
        assert_eq!(p.too_long, Some(14 + tail(1, false, Some(13))));
        assert_eq!((p.text.as_str(), p.end), ("", 0));
        // Cut at 3 columns it fits: `,"cut_lines":[1]` is 16 bytes.
        let a = Ask {
            budget: 5 + 16 + tail(1, false, Some(13)),
            max_columns: Some(3),
            ..ask(1, None)
        };
        let (p, _) = read(f, a, 5).unwrap();
        assert_eq!(
            (p.text.as_str(), p.end, p.truncated, &p.cut_lines[..]),
            ("abc\n", 1, true, &[1][..])
        );
        assert_eq!(p.too_long, None);
    }

    /// A huge file: lines 1 to 10 read the first chunk and no more.
    #[test]
    fn a_short_range_of_a_huge_file_reads_one_chunk() {
        let line = b"0123456789abcdef0123456789abcdef\n";
        let chunk: Vec<u8> = line.iter().copied().cycle().take(64 << 10).collect();
        let mut l = Lines::new(ask(1, Some(10)));
        let mut read = 0usize;
        let mut buf = Vec::new();
        // 1 GiB of such lines, offered a chunk at a time.
        while !l.done() && read < 1 << 30 {
            buf.extend_from_slice(&chunk);
            read += chunk.len();
            let n = l.feed(&buf, false).unwrap();
            buf.drain(..n);
        }
        let p = l.finish();
        assert_eq!(read, 64 << 10);
        assert_eq!((p.end, p.eof, p.text.len()), (10, false, 10 * line.len()));
    }

    proptest! {
        /// Pages that follow each other (start = end + 1) concatenate to the
        /// file, whatever the chunks, budget and limit; the last says eof.
        #[test]
        fn pages_concatenated_are_the_file(
            parts in proptest::collection::vec((
                "[a-z\u{e9}\u{1F600}\t\"]{0,12}",
                prop_oneof![Just("\n"), Just("\r\n"), Just("\r")],
            ), 0..40),
            last in "[a-z\u{e9}]{0,3}",
            step in 1usize..20,
            budget in 300usize..600,
            limit in proptest::option::of(1u64..6),
        ) {
            // A lone CR is text, so parts may join into one long line: the
            // budget grows by the longest line at its widest escape (6 bytes
            // a byte), so that none needs cutting and each page progresses.
            let mut file: Vec<u8> = Vec::new();
            for (text, end) in &parts {
                file.extend_from_slice(text.as_bytes());
                file.extend_from_slice(end.as_bytes());
            }
            file.extend_from_slice(last.as_bytes());
            let longest = file.split(|&b| b == b'\n').map(<[u8]>::len).max().unwrap_or(0);
            let budget = budget + 6 * longest;
            let mut got = Vec::new();
            let mut start = 1;
            loop {
                let (p, _) = read(&file, Ask { budget, ..ask(start, limit) }, step).unwrap();
                prop_assert!(p.cut_lines.is_empty());
                got.extend_from_slice(p.text.as_bytes());
                if p.eof {
                    let sha: [u8; 32] = Sha256::digest(&file).into();
                    prop_assert_eq!(p.whole.map(|w| w.1), Some(sha));
                    break;
                }
                prop_assert!(p.end >= start, "progress");
                start = p.end + 1;
            }
            prop_assert_eq!(got, file);
        }

        /// Lines before `start` are checked in bulk: the fault named is the
        /// first in the file (a NUL or invalid UTF-8, as line by line), and
        /// a `start` past the end still counts every line and hashes the
        /// whole file, whatever the chunks.
        #[test]
        fn skipped_lines_name_the_first_fault_and_count_all(
            parts in proptest::collection::vec((
                "[a-z\u{e9}]{0,6}",
                prop_oneof![Just(&b""[..]), Just(&b"\0"[..]), Just(&b"\xff"[..]), Just(&b"\xe9"[..])],
                prop_oneof![Just("\n"), Just("\r\n"), Just("\r")],
            ), 0..30),
            step in 1usize..20,
            start in 1u64..40,
        ) {
            let mut file: Vec<u8> = Vec::new();
            for (text, bad, end) in &parts {
                file.extend_from_slice(text.as_bytes());
                if file.len() % 3 == 0 {
                    file.extend_from_slice(bad);
                }
                file.extend_from_slice(end.as_bytes());
            }
            let valid = std::str::from_utf8(&file).map_or_else(|e| e.valid_up_to(), |_| file.len());
            let fault = match memchr(0, &file[..valid]) {
                Some(z) => Some((z as u64, "a NUL byte")),
                None if valid < file.len() => Some((valid as u64, "invalid UTF-8")),
                None => None,
            };
            let lines = file.split(|&b| b == b'\n').count() as u64
                - u64::from(file.is_empty() || file.ends_with(b"\n"));
            match (read(&file, ask(start.max(lines + 1), None), step), fault) {
                (Err(e), Some((at, what))) => {
                    prop_assert_eq!(e, NotText { offset: at, what });
                }
                (Ok((p, _)), None) => {
                    prop_assert!(p.eof);
                    let sha: [u8; 32] = Sha256::digest(&file).into();
                    prop_assert_eq!(p.whole, Some((lines, sha)));
                }
                (got, want) => prop_assert!(false, "{:?} vs {:?}", got.map(|g| g.0), want),
            }
        }
    }
}
