//! A line longer than [`Tuning::cap`] searched in windows, in bounded
//! memory (`grep_op.rs` calls it when the read block holds the start of
//! a line that long and no `\n`).
//!
//! The line is read through the block in windows, each sharing the
//! literal's length - 1 bytes with the next so that no occurrence is
//! split unseen: a literal search (`ignore_case` included) matches the
//! line if a window holds the literal; a regex with a required literal
//! ([`super::grep`]) cannot match a line whose windows never hold it. Only a
//! regex that may match (its literal seen) needs the whole line: it is
//! read again from the file at the line's start, held, and the regex run
//! on it. A regex without a required literal is not searched here at
//! all: the block grows until the line fits, as for a short line.
//!
//! What the answer needs of the line stays in the block: its first bytes
//! (`keep`: `max_columns` × 4 + 4 bytes for `content`, enough for its
//! first `max_columns` characters and the sign that more follow, none
//! for `files` and `count`), then its `\n`. `grep_op.rs` treats that stub
//! as the line, with the match found here, so context, line numbers and
//! the cut at `max_columns` are what the whole line would give. The same
//! stub stands for each context line carried from one block to the next
//! ([`carry`]), so the block holds the carried lines' stubs, the kept
//! bytes, the overlap and a window ([`room`]), whatever the lines' lengths.

use std::io::Read;

use super::bom::Source;
use super::grep::Search;

/// The read block.
pub const BLOCK: usize = 256 * 1024;

/// The sizes of `grep`'s buffer: lowered by tests to reach the windowed
/// path with small files.
#[derive(Clone, Copy, Debug)]
pub struct Tuning {
    /// The read block a file starts with.
    pub block: usize,
    /// A line at least this long without its `\n` in the block is
    /// searched in windows (when the search allows it).
    pub cap: usize,
}

impl Default for Tuning {
    fn default() -> Tuning {
        Tuning {
            block: BLOCK,
            cap: 1024 * 1024,
        }
    }
}

/// What became of the long line.
pub struct Long {
    /// Bytes in the block now: the stub replaced the line, the bytes
    /// read past its `\n` follow it.
    pub len: usize,
    /// The file's end was reached.
    pub eof: bool,
    /// The line matches.
    pub matched: bool,
    /// A read failed (the line searched as far as read).
    pub unreadable: bool,
    /// The stub is shorter than the line.
    pub short: bool,
}

/// The bytes of a line kept for `content`: its first `max_columns`
/// characters take at most 4 bytes each, and 4 more bytes hold at least
/// one character more, so [`columns`] cuts the stub
/// exactly where it cuts the line.
pub fn keep_for(max_columns: u64) -> usize {
    usize::try_from(max_columns.saturating_mul(4).saturating_add(4)).unwrap_or(usize::MAX)
}

/// `text` as a string (invalid UTF-8 as U+FFFD), cut at `max` characters.
pub fn columns(text: &[u8], max: u64) -> (String, bool) {
    let s = String::from_utf8_lossy(text);
    match s.char_indices().nth(max.min(usize::MAX as u64) as usize) {
        Some((i, _)) => (s[..i].to_string(), true),
        None => (s.into_owned(), false),
    }
}

/// What the block grows to before the line starting at `from` is
/// searched (`buf[from..len]` read, no `\n` in it), or `None` when it is
/// searched here now: a search that cannot use windows doubles the block
/// until the line fits; one that can, until `cap` bytes of the line are
/// read, then to what [`room`] needs, never to the line's size.
pub fn grown(
    search: &Search,
    t: Tuning,
    block: usize,
    (from, len): (usize, usize),
    keep: usize,
) -> Option<usize> {
    let double = block.saturating_mul(2);
    if !search.windowed() {
        Some(double)
    } else if len - from < t.cap {
        Some(double.min(from.saturating_add(t.cap)).max(block + 1))
    } else {
        let room = room(search, from, keep);
        (block < room).then(|| room.min(double))
    }
}

/// The block the line starting at `from` is searched in here: the bytes
/// before it (the carried context stubs), the kept bytes, the overlap and
/// as much again for the windows.
pub fn room(search: &Search, from: usize, keep: usize) -> usize {
    from.saturating_add(keep)
        .saturating_add(search.overlap())
        .saturating_add(1)
        .saturating_mul(2)
}

/// What a stub keeps (`grep_op.rs` decides it per file).
#[derive(Clone, Copy, Debug)]
pub struct Sizes {
    /// The bytes kept of a line: [`keep_for`]`(max_columns)`, at most
    /// `max_bytes` + 4 (see [`keep`]); 0 for `files` and `count`.
    pub keep: usize,
    /// `max_columns`.
    pub max_columns: u64,
    /// `max_bytes`.
    pub max_bytes: u64,
}

/// The bytes kept of a long line for `content`: [`keep_for`], but never
/// more than `max_bytes` + 4. A stub of `max_bytes` + 4 bytes that is
/// not cut at `max_columns` shows at least `max_bytes` + 1 bytes of text
/// (U+FFFD is longer than the bytes it stands for), and so does its
/// whole line (the stub's characters but its last, at most 3 bytes of
/// an unfinished one, and more): no page holds either, so the page is
/// cut or refused where it would be, only the number a refusal needs is
/// unknown (`grep_answer.rs` says "more than").
pub fn keep(max_columns: u64, max_bytes: u64) -> usize {
    let cap = usize::try_from(max_bytes.saturating_add(4)).unwrap_or(usize::MAX);
    keep_for(max_columns).min(cap)
}

/// The bytes a line's text counts for on a page (`grep_op.rs`'s `held`):
/// a text kept short (and not cut at `max_columns`) stands for more than
/// `max_bytes`.
pub fn shown(text: usize, short: bool, max_bytes: u64) -> u64 {
    if short {
        max_bytes.saturating_add(1).max(text as u64)
    } else {
        text as u64
    }
}

/// Moves the carried lines `buf[cut..end]` (whole lines, each ending with
/// its `\n`) and the partial line `buf[end..len]` to the block's start,
/// each carried line as its stub: its first `keep` bytes and its `\n`, so
/// that it is shown, cut and numbered as the whole line would be. Going
/// back from the last, once the lines after one show more than
/// `max_bytes` of text, it keeps none of its bytes: a match's
/// before-context is a run of lines ending at it, so no page holds one
/// that reaches that line. `short` holds the starts of the stubs shorter
/// than their line (sorted): updated to where they are now. Answers
/// where each of `marks` (line starts in `cut..=end`) is now, and the
/// bytes in the block.
pub fn carry<const N: usize>(
    buf: &mut [u8],
    (cut, end, len): (usize, usize, usize),
    sizes: Sizes,
    mut marks: [usize; N],
    short: &mut Vec<usize>,
) -> ([usize; N], usize) {
    // Each carried line (start, `\n`), the last first, with its kept bytes
    // and whether they are fewer than its own.
    let mut lines = Vec::new();
    let mut shown = 0u64; // the text of the lines after, at least
    let mut e = end;
    while e > cut {
        let r = memchr::memrchr(b'\n', &buf[cut..e - 1]).map_or(cut, |i| cut + i + 1);
        let was = short.binary_search(&r).is_ok();
        let whole = e - 1 - r;
        let n = if shown > sizes.max_bytes {
            0
        } else {
            sizes.keep.min(whole)
        };
        let is_short = was || n < whole;
        if shown <= sizes.max_bytes {
            let (text, at_cols) = columns(&buf[r..r + n], sizes.max_columns);
            let bytes = if is_short && !at_cols {
                sizes.max_bytes.saturating_add(1)
            } else {
                text.len() as u64
            };
            shown = shown.saturating_add(bytes);
        }
        lines.push((r, n, is_short));
        e = r;
    }
    short.clear();
    let mut w = 0;
    let mut moved = [false; N];
    let mut place = |r: usize, w: usize| {
        for (m, done) in marks.iter_mut().zip(&mut moved) {
            if !*done && *m == r {
                (*m, *done) = (w, true);
            }
        }
    };
    for &(r, n, is_short) in lines.iter().rev() {
        place(r, w);
        buf.copy_within(r..r + n, w);
        buf[w + n] = b'\n';
        if is_short {
            short.push(w);
        }
        w += n + 1;
    }
    place(end, w);
    debug_assert!(moved.iter().all(|&d| d), "a mark not at a line start");
    buf.copy_within(end..len, w);
    (marks, w + len - end)
}

/// Reads `f` into `buf[at..]` until it is full or the file ends: the
/// bytes in `buf` now, whether the file ended, and whether a read failed
/// (the file is taken to end there).
pub fn read_full(f: &mut Source, buf: &mut [u8], mut at: usize) -> (usize, bool, bool) {
    while at < buf.len() {
        match f.read(&mut buf[at..]) {
            Ok(0) => return (at, true, false),
            Ok(n) => at += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return (at, true, true),
        }
    }
    (at, false, false)
}

/// Searches the line starting at `buf[from]`, of which `buf[from..len]`
/// is read (no `\n` in it), reading the rest of it from `f` through the
/// block, whose size does not change; see the module docs.
pub fn line(
    f: &mut Source,
    buf: &mut [u8],
    (from, len): (usize, usize),
    keep: usize,
    search: &Search,
    scratch: &mut Vec<u8>,
) -> Long {
    let ov = search.overlap();
    let mut unreadable = false;
    // Where the line starts in the file, to read it again for a regex.
    let start = if search.needs_line() {
        f.line_start(&buf[from..len])
    } else {
        None
    };
    let (mut win, mut fresh, mut fill) = (from, from, len);
    let (mut found, mut eof) = (false, false);
    let mut line_len = 0u64;
    let (e, newline) = loop {
        let nl = memchr::memchr(b'\n', &buf[fresh..fill]).map(|i| fresh + i);
        let wend = nl.unwrap_or(fill);
        line_len += (wend - fresh) as u64;
        if !found && search.literal_in(&buf[win..wend], scratch) {
            found = true;
        }
        if nl.is_some() || eof {
            break (wend, nl.is_some());
        }
        // Keep the line's first `keep` bytes and the window's last `ov`.
        let base = from + keep;
        let tail = ov.min(wend - win);
        buf.copy_within(wend - tail..wend, base);
        win = base;
        fresh = base + tail;
        let bad;
        (fill, eof, bad) = read_full(f, buf, fresh);
        unreadable |= bad;
    };
    let matched = found
        && match start {
            None if search.needs_line() => {
                unreadable = true;
                false
            }
            None => true,
            Some(at) => {
                // The regex must see the whole line: it is held here.
                let mut whole = vec![0; line_len as usize];
                match f.read_line_at(&mut whole, at) {
                    Ok(()) => search.line_matches(&whole),
                    Err(_) => {
                        unreadable = true;
                        false
                    }
                }
            }
        };
    // The stub: the kept bytes (the whole line if shorter), its `\n`,
    // then what was read past it.
    let mut n = from + keep.min(e - from);
    if newline {
        buf[n] = b'\n';
        buf.copy_within(e + 1..fill, n + 1);
        n += 1 + (fill - e - 1);
    }
    Long {
        len: n,
        eof,
        matched,
        unreadable,
        short: line_len > keep as u64,
    }
}

/// Where a file's context stands: lines before `shown_to` (a line start,
/// numbered `line`) are shown or never will be; `after` lines are still
/// owed to the last match, shown if `show`.
pub struct Owed {
    /// A line start: the lines before it are done with.
    pub shown_to: usize,
    /// `shown_to`'s line number.
    pub line: u64,
    /// After-context lines still owed.
    pub after: usize,
    /// They are shown.
    pub show: bool,
}

/// The end of the line starting at `at` (its `\n`, or `end`).
pub fn line_end(buf: &[u8], at: usize, end: usize) -> usize {
    memchr::memchr(b'\n', &buf[at..end]).map_or(end, |i| at + i)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::grep_op::{grep_tuned, GrepRequest, Grepped, Output, BLOCK};
    use proptest::prelude::*;
    use proptest::test_runner::TestCaseError;
    use std::path::Path;

    fn req(path: &Path, pat: &str, regex: bool, ic: bool, output: Output) -> GrepRequest {
        GrepRequest {
            pattern: pat.into(),
            regex,
            ignore_case: ic,
            path: Some(path.as_os_str().as_encoded_bytes().to_vec()),
            glob: None,
            output,
            context: 0,
            offset: 0,
            limit: 1000,
            max_columns: 500,
            walk: Default::default(),
        }
    }

    #[test]
    fn a_20_mb_line_keeps_the_block_at_the_cap() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("one");
        let mut text = "ab".repeat(10_000_000);
        text.push_str("NEEDLE\nnext NEEDLE\n");
        std::fs::write(&p, &text).unwrap();
        let t = Tuning::default();
        for (pat, regex, ic, output) in [
            ("NEEDLE", false, false, Output::Content),
            ("needle", false, true, Output::Count),
            (r"b\w*EDLE$", true, false, Output::Content),
            ("zzz", false, false, Output::Files),
        ] {
            let r = req(&p, pat, regex, ic, output);
            let (g, block) = grep_tuned(&r, None, 1 << 20, t).unwrap();
            // int's code doubled the block to 32 MiB to hold the line.
            assert!(block <= (1 << 20) + BLOCK, "{pat}: block {block}");
            if pat == "zzz" {
                assert!(g.files.is_empty());
            } else if output == Output::Content {
                let l = &g.lines[0];
                assert_eq!((l.line, l.text.len(), l.cut), (1, 500, true));
                assert_eq!(l.text, "ab".repeat(250));
                if !regex {
                    let l = &g.lines[1];
                    assert_eq!((l.line, l.text.as_str()), (2, "next NEEDLE"));
                }
                assert_eq!(g.lines.len(), if regex { 1 } else { 2 });
            } else {
                assert_eq!(g.files, [(r.path.clone().unwrap(), 2)]);
            }
        }
        // A regex without a required literal must see the line: it grows.
        let r = req(&p, r"^[ab]+[N]", true, false, Output::Count);
        let (g, block) = grep_tuned(&r, None, 1 << 20, t).unwrap();
        assert_eq!(g.files.len(), 1);
        assert!(block > 20_000_000, "{block}");
    }

    #[test]
    fn long_context_lines_are_carried_as_their_stubs() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("many");
        let line = |i: usize, len: usize, mid: &str| {
            let head = format!("{i:02}-");
            let mut l = head.clone() + &"x".repeat(len - head.len() - mid.len() - 1);
            l.insert_str(len / 2, mid);
            l + "\n"
        };
        let big = 1536 * 1024; // 1.5 MiB
        let mut text = String::new();
        for i in 0..40 {
            text += &line(i, big, if i == 35 { "NEEDLE" } else { "" });
        }
        std::fs::write(&p, &text).unwrap();
        let t = Tuning::default();
        // What the block and the lowered chunk may reach (main: 64 MiB).
        let bound = (1 << 20) + BLOCK;
        for (pat, ic, context) in [
            ("zzz", false, 30),
            ("NEEDLE", false, 30),
            ("needle", true, 30),
            ("needle", true, 5),
        ] {
            let mut r = req(&p, pat, false, ic, Output::Content);
            r.context = context;
            let (g, held) = grep_tuned(&r, None, 1 << 20, t).unwrap();
            assert!(held <= bound, "{pat} {context}: {held}");
            let got: Vec<_> = g.lines.iter().map(|l| (l.line, l.context, l.cut)).collect();
            if pat == "zzz" {
                assert!(got.is_empty());
                continue;
            }
            let want: Vec<_> = (35 - context.min(35)..40)
                .map(|i| (i + 1, i != 35, true))
                .collect();
            assert_eq!(got, want, "{pat} {context}");
            for l in &g.lines {
                assert_eq!(l.text, line(l.line as usize - 1, big, "")[..500]);
            }
        }
        // `files` and `count` carry no context.
        let mut r = req(&p, "NEEDLE", false, false, Output::Count);
        r.context = 30;
        let (g, held) = grep_tuned(&r, None, 1 << 20, t).unwrap();
        assert!(held <= bound, "{held}");
        assert_eq!(g.files, [(r.path.clone().unwrap(), 1)]);
    }

    #[test]
    fn context_with_a_huge_max_columns_keeps_about_max_bytes() {
        // 30 lines of 3 MB, the last one a match: int kept each carried
        // line whole (`max_columns` 10^8 keeps 400 MB), its block ~180 MB.
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("thirty");
        let big = 3_000_000;
        let mut text = Vec::with_capacity(30 * big);
        for i in 0..30 {
            let mut l = vec![b'x'; big - 1];
            l[..3].copy_from_slice(format!("{i:02}-").as_bytes());
            if i == 29 {
                l[big / 2..big / 2 + 6].copy_from_slice(b"NEEDLE");
            }
            text.extend_from_slice(&l);
            text.push(b'\n');
        }
        std::fs::write(&p, &text).unwrap();
        drop(text);
        let max_bytes = 262_144;
        for pat in ["zzz", "NEEDLE"] {
            let mut r = req(&p, pat, false, false, Output::Content);
            (r.context, r.max_columns) = (30, 100_000_000);
            let (g, held) = grep_tuned(&r, None, max_bytes, Tuning::default()).unwrap();
            assert!(held <= 2 << 20, "{pat}: {held}");
            if pat == "zzz" {
                assert!(g.lines.is_empty());
                continue;
            }
            // The match and its before-context, each too long for a page.
            let got: Vec<_> = g
                .lines
                .iter()
                .map(|l| (l.line, l.context, l.short))
                .collect();
            let want: Vec<_> = (1..=30).map(|i| (i, i != 30, true)).collect();
            assert_eq!(got, want);
            let l = &g.lines[29];
            assert_eq!(l.text.len(), max_bytes as usize + 4);
            assert_eq!(l.text[..3], *"29-");
            // Those after the first line over `max_bytes` keep none of it.
            assert_eq!(g.lines[28].text.len(), max_bytes as usize + 4);
            assert!(g.lines[..28].iter().all(|l| l.text.is_empty()));
        }
    }

    #[test]
    fn a_refused_line_kept_short_needs_more_than_max_bytes() {
        use crate::tools::grep_answer::grep;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        // Over the cap: windowed, kept short. Under it: held whole.
        for (len, says) in [
            (2_000_000, "more than 262144".to_string()),
            // int's exact need: the page, the path and the line's text.
            (300_000, (300_149 + p.as_os_str().len()).to_string()),
        ] {
            let mut text = "NEEDLE".to_string() + &"y".repeat(len - 6);
            text.push('\n');
            std::fs::write(&p, &text).unwrap();
            let mut r = req(&p, "NEEDLE", false, false, Output::Content);
            r.max_columns = 100_000_000;
            let e = grep(&r, None, 262_144).unwrap_err();
            let want = format!(
                "\"max_bytes\" 262144 cannot hold one entry of this answer: it needs {says}"
            );
            assert_eq!(e.detail.as_deref(), Some(want.as_str()), "{len}");
        }
    }

    const CHARS: &[&str] = &[
        "a",
        "b",
        "A",
        "é",
        "€",
        "😀",
        "\r",
        "x",
        "ab",
        "xxxxxxxxxxxxxxxx",
    ];
    const PATTERNS: &[(&str, bool)] = &[
        ("ab", false),
        ("aba", false),
        ("é€", false),
        ("😀a", false),
        ("a", false),
        ("", false),
        ("b\r", false),
        ("Ab€", false),
        (r"b\w*a", true),
        (r"^ab", true),
        (r"a.é", true),
        (r"€\r$", true),
        (r"[ab]+x", true),
    ];

    fn file() -> impl Strategy<Value = Vec<u8>> {
        // Lines of 0 to 240 bytes, around the lowered caps (16 to
        // 55) and longer than the kept bytes (8 to 28): context lines
        // carried as stubs, and long lines windowed.
        let line = prop::collection::vec(prop::sample::select(CHARS), 0..60);
        (prop::collection::vec(line, 1..12), any::<bool>()).prop_map(|(ls, nl)| {
            let mut out: Vec<u8> = ls
                .iter()
                .map(|l| l.concat())
                .collect::<Vec<_>>()
                .join("\n")
                .into();
            if nl {
                out.push(b'\n');
            }
            out
        })
    }

    /// `b` answers as the whole-block answer `a`, but for the lines it
    /// kept short of their text (`keep`, `carry`): each in a group whose
    /// text in `a` is over `max_bytes`, and a refusal of such a group says
    /// "more than" where `a` names its exact need.
    fn same_answer(
        r: &GrepRequest,
        a: &Grepped,
        b: &Grepped,
        max_bytes: u64,
    ) -> Result<(), TestCaseError> {
        use crate::tools::grep_answer::{render, tests::groups};
        let n = |g: &Grepped| {
            let n = (g.files_searched, g.skipped_binary, g.unreadable);
            (g.files.clone(), n, g.truncated, g.more, g.lines.len())
        };
        prop_assert_eq!(n(a), n(b));
        for range in groups(&a.lines, r.context) {
            let text: usize = a.lines[range.clone()].iter().map(|l| l.text.len()).sum();
            for (x, y) in a.lines[range.clone()].iter().zip(&b.lines[range]) {
                prop_assert!(!x.short);
                if y.short {
                    prop_assert!(text as u64 > max_bytes, "{:?} {:?}", x, y);
                    prop_assert_eq!((&x.path, x.line, x.context), (&y.path, y.line, y.context));
                } else {
                    prop_assert_eq!(x, y);
                }
            }
        }
        let said = |g| render(r, g, max_bytes).map_err(|e| e.detail.unwrap_or_default());
        let (ra, rb) = (said(a), said(b));
        if ra != rb {
            let head = format!("\"max_bytes\" {max_bytes} cannot hold one entry of this answer");
            let needs = ra.as_ref().unwrap_err().strip_prefix(&head).unwrap();
            let needs: u64 = needs.strip_prefix(": it needs ").unwrap().parse().unwrap();
            prop_assert!(needs > max_bytes);
            prop_assert_eq!(rb, Err(format!("{head}: it needs more than {max_bytes}")));
            prop_assert!(b.lines.iter().any(|l| l.short));
        }
        Ok(())
    }

    /// A UTF-16 file with a BOM, its lines longer than the cap: searched
    /// in windows of the transcoded text, a regex's candidate line read
    /// again from the raw offset its text gives (pairs, lone surrogates
    /// and accents before it), each line numbered and shown as rg shows it.
    #[test]
    fn utf16_long_lines_are_searched_in_windows_and_read_again() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("wide");
        // A U+FEFF after the mark is dropped: line 1, read again, starts after it.
        let mut units: Vec<u16> = vec![0xfeff];
        for i in 0..12u32 {
            units.extend(format!("{i}:\u{e9}\u{1d11e}").encode_utf16());
            units.extend([0xd800, u16::from(b' ')]);
            units.extend("ab".repeat(3000 + 500 * i as usize).encode_utf16());
            let tail = if i % 3 == 0 {
                format!("NEEDLE {i}")
            } else {
                format!("NEEDLE x{i}")
            };
            units.extend(tail.encode_utf16());
            units.push(u16::from(b'\n'));
        }
        for be in [false, true] {
            let mut raw = if be {
                vec![0xfe, 0xff]
            } else {
                vec![0xff, 0xfe]
            };
            for u in &units {
                raw.extend(if be { u.to_be_bytes() } else { u.to_le_bytes() });
            }
            std::fs::write(&p, &raw).unwrap();
            let t = Tuning {
                block: 1024,
                cap: 2048,
            };
            // Anchored at both ends: a line read again from a wrong offset fails it.
            let mut r = req(&p, r"^\d+:é.*NEEDLE \d+$", true, false, Output::Content);
            r.max_columns = 6;
            let (g, block) = grep_tuned(&r, None, 1 << 20, t).unwrap();
            assert!(block < 64 * 1024, "{block}");
            let got: Vec<_> = g
                .lines
                .iter()
                .map(|l| (l.line, l.text.as_str(), l.cut))
                .collect();
            let want: Vec<_> = [
                (1, "0:\u{e9}\u{1d11e}\u{fffd} "),
                (4, "3:\u{e9}\u{1d11e}\u{fffd} "),
            ]
            .into_iter()
            .chain([
                (7, "6:\u{e9}\u{1d11e}\u{fffd} "),
                (10, "9:\u{e9}\u{1d11e}\u{fffd} "),
            ])
            .map(|(n, s)| (n, s, true))
            .collect();
            assert_eq!(got, want, "be {be}");
            let mut r = req(&p, "NEEDLE x", false, false, Output::Count);
            r.max_columns = 6;
            let (g, _) = grep_tuned(&r, None, 1 << 20, t).unwrap();
            assert_eq!(g.files, [(r.path.clone().unwrap(), 8)]);
        }
    }

    #[test]
    fn context_kept_short_refuses_as_whole_lines_but_for_the_number() {
        // Five 101-byte lines before a match, `context` 5: carried in
        // 32-byte blocks, the first keeps none of its bytes (the four
        // after it show 404 > 400).
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        let mut text = String::new();
        for i in 0..5 {
            text += &format!("{i}{}\n", "e".repeat(100));
        }
        text += "NEEDLE\n";
        std::fs::write(&p, &text).unwrap();
        let mut r = req(&p, "NEEDLE", false, false, Output::Content);
        (r.context, r.max_columns) = (5, 300);
        for max_bytes in [400, 1 << 20] {
            let one = Tuning {
                block: text.len() + 1,
                cap: usize::MAX,
            };
            let (a, _) = grep_tuned(&r, None, max_bytes, one).unwrap();
            let small = Tuning {
                block: 32,
                cap: usize::MAX,
            };
            let (b, _) = grep_tuned(&r, None, max_bytes, small).unwrap();
            let shorts = b.lines.iter().filter(|l| l.short).count();
            assert_eq!(shorts, if max_bytes == 400 { 1 } else { 0 }, "{max_bytes}");
            same_answer(&r, &a, &b, max_bytes).unwrap();
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(600))]
        /// The windowed path, and the context carried as stubs, answer
        /// what one block holding the whole file answers (`same_answer`:
        /// where `max_bytes` keeps lines short, only that it cannot say
        /// how much a refused group needs).
        #[test]
        fn windows_answer_as_whole_lines(
            text in file(),
            pat in prop::sample::select(PATTERNS),
            ic in any::<bool>(),
            out in prop::sample::select(&[Output::Content, Output::Files, Output::Count][..]),
            context in 0u64..6,
            offset in 0u64..3,
            limit in 1u64..5,
            max_columns in prop_oneof![1u64..6, 20u64..300],
            max_bytes in prop::sample::select(&[150u64, 250, 400, 1 << 20][..]),
            (block, cap) in (1usize..5, 0usize..40).prop_map(|(b, c)| (b * 8, 16 + c)),
        ) {
            let dir = tempfile::tempdir().unwrap();
            let p = dir.path().join("f");
            std::fs::write(&p, &text).unwrap();
            let mut r = req(&p, pat.0, pat.1, ic, out);
            (r.context, r.offset, r.limit, r.max_columns) = (context, offset, limit, max_columns);
            let one = Tuning { block: text.len() + 1, cap: usize::MAX };
            let (a, _) = grep_tuned(&r, None, max_bytes, one).unwrap();
            let carried = Tuning { block, cap: usize::MAX };
            let (b, _) = grep_tuned(&r, None, max_bytes, carried).unwrap();
            same_answer(&r, &a, &b, max_bytes)?;
            let (c, _) = grep_tuned(&r, None, max_bytes, Tuning { block, cap }).unwrap();
            same_answer(&r, &a, &c, max_bytes)?;
            if keep_for(max_columns) <= keep(max_columns, max_bytes) {
                // The cap does not bite on one line: only the context's
                // sum can keep lines short.
                prop_assert!(b.lines.iter().chain(&c.lines).all(|l| !l.short) || context > 0);
            }
        }
    }
}
