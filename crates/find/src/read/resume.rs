//! A text read's `next` that resumes at a byte offset, so following
//! `next` through a file reads each byte about once (not every page the
//! bytes before it).
//!
//! A truncated text page answers `"next":{"start":S,"offset":B,"check":C}`:
//! B the byte offset where line S starts, C ([`check`]) a number derived
//! from S, B and the (at most [`BEFORE`]) bytes before B. A request with
//! `offset` and `check` (both or neither; the wire crate's `tools/parse.rs`) is read from byte B,
//! lines numbered from S, only after [`trust`] has re-read the bytes
//! before B: they must end in an LF and give C again. Anything else — an
//! `offset` or `start` changed by hand, B past the end, a file changed
//! before B since the page that gave it — and the hint is ignored: the
//! page is read from byte 0, exact, as without it (never wrong lines,
//! only the old cost). What the check cannot see is an edit before B that
//! keeps the [`BEFORE`] bytes before B and moves lines (the page's line
//! numbers would then be off, as they would be for any line range of a
//! file changed between two reads); the last page sees it: see below.
//! C guards against mistakes, not against a host that means it: it has
//! no secret (the helper keeps no state between calls), so a caller that
//! computes [`check`] itself for another line's offset gets that line's
//! page numbered from its `start` — on an intermediate page; the last
//! page still counts the lines before B and answers exactly.
//!
//! The last page (the one reaching the end) still answers `lines` and
//! `sha256` of the whole file and `not_text` for any byte of it: [`whole`]
//! reads the file once from byte 0, hashing it, checking the bytes before
//! B as text and counting their lines (S − 1), and the page's own bytes
//! against the page's hash. Should any of that disagree (the file changed
//! between pages), the page is read again from byte 0, exact. So a read
//! followed to its end costs the file's size about twice: once over the
//! pages, once on the last one.

use memchr::memchr;
use sha2::{Digest, Sha256};

use as_edit_wire::protocol::Failure;

/// `pread(2)`: bytes at an offset into the buffer, 0 at the end.
pub type Pread<'a> = dyn FnMut(&mut [u8], u64) -> Result<usize, Failure> + 'a;

/// Bytes before the offset that [`check`] covers.
pub const BEFORE: usize = 64;

/// `check`'s digits: always this many (the page's budget counts them).
pub const CHECK_DIGITS: usize = 16;

/// The `check` of a resume at line `start`, byte `at`, `before` the bytes
/// before it: a 16-digit number below 2^53 (exact in every JSON reader).
pub fn check(start: u64, at: u64, before: &[u8]) -> u64 {
    let mut h = Sha256::new();
    h.update(b"as-edit read next\0");
    h.update(start.to_le_bytes());
    h.update(at.to_le_bytes());
    h.update(before);
    let d = h.finalize();
    let x = u64::from_le_bytes(d[..8].try_into().expect("8 bytes"));
    1_000_000_000_000_000 + x % 8_000_000_000_000_000
}

/// `pread` until `buf` is full or the file ends: the bytes read.
pub fn read_at(pread: &mut Pread<'_>, buf: &mut [u8], at: u64) -> Result<usize, Failure> {
    let mut got = 0;
    while got < buf.len() {
        match pread(&mut buf[got..], at + got as u64)? {
            0 => break,
            n => got += n,
        }
    }
    Ok(got)
}

/// The bytes before `at` that [`check`] covers.
fn before(pread: &mut Pread<'_>, at: u64) -> Result<Option<Vec<u8>>, Failure> {
    let n = at.min(BEFORE as u64) as usize;
    let mut buf = vec![0u8; n];
    let got = read_at(pread, &mut buf, at - n as u64)?;
    Ok((got == n).then_some(buf))
}

/// The `check` for a `next` at line `start`, byte `at` of the file.
pub fn next_check(pread: &mut Pread<'_>, start: u64, at: u64) -> Result<u64, Failure> {
    let b = before(pread, at)?.unwrap_or_default();
    Ok(check(start, at, &b))
}

/// Whether a page may be read from byte `at` as line `start`: `at` is 0
/// with `start` 1, or the bytes before it end in an LF and give `given`.
pub fn trust(pread: &mut Pread<'_>, start: u64, at: u64, given: u64) -> Result<bool, Failure> {
    if at == 0 {
        return Ok(start == 1);
    }
    Ok(match before(pread, at)? {
        Some(b) => b.last() == Some(&b'\n') && check(start, at, &b) == given,
        None => false,
    })
}

/// The whole file's SHA-256 for a page read from byte `at` (> 0) to the
/// end at `end`, with `lines_before` lines before `at` and `page_hash`
/// the hash of its bytes: None if the file does not agree (the bytes
/// before `at` are not that many lines of text, or the page's bytes
/// changed), and the caller reads the page again from byte 0.
pub fn whole(
    pread: &mut Pread<'_>,
    at: u64,
    end: u64,
    lines_before: u64,
    page_hash: [u8; 32],
) -> Result<Option<[u8; 32]>, Failure> {
    const CHUNK: usize = 64 << 10;
    let (mut all, mut page) = (Sha256::new(), Sha256::new());
    let mut buf = vec![0u8; CHUNK];
    let (mut pos, mut keep, mut lines) = (0u64, 0usize, 0u64);
    while pos < end {
        let want = (CHUNK - keep).min((end - pos) as usize);
        let n = read_at(pread, &mut buf[keep..keep + want], pos)?;
        if n == 0 {
            return Ok(None); // shorter than the page saw
        }
        let got = &buf[keep..keep + n];
        all.update(got);
        let pre = at.saturating_sub(pos).min(n as u64) as usize;
        page.update(&got[pre..]);
        lines += memchr::memchr_iter(b'\n', &got[..pre]).count() as u64;
        // The bytes before `at`, a character split at the chunk's edge
        // carried to the next.
        let text = &buf[..keep + pre];
        if memchr(0, text).is_some() {
            return Ok(None);
        }
        keep = match std::str::from_utf8(text) {
            Ok(_) => 0,
            Err(e) if e.error_len().is_none() => {
                let v = e.valid_up_to();
                let k = text.len() - v;
                buf.copy_within(v..v + k, 0);
                k
            }
            Err(_) => return Ok(None),
        };
        pos += n as u64;
    }
    let agree =
        keep == 0 && lines == lines_before && <[u8; 32]>::from(page.finalize()) == page_hash;
    Ok(agree.then(|| all.finalize().into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pread_of(file: &[u8]) -> impl FnMut(&mut [u8], u64) -> Result<usize, Failure> + '_ {
        move |buf, at| {
            let from = (at as usize).min(file.len());
            let n = buf.len().min(file.len() - from);
            buf[..n].copy_from_slice(&file[from..from + n]);
            Ok(n)
        }
    }

    use super::super::text_answer;
    use as_edit_wire::tools::Read;
    use proptest::prelude::*;
    use serde_json::Value;

    fn ask(start: u64, resume: Option<(u64, u64)>) -> Read {
        Read {
            path: "f".into(),
            start,
            limit: None,
            numbers: false,
            max_columns: None,
            resume,
        }
    }

    /// One page's answer, parsed, and the bytes it read.
    fn page(file: &[u8], req: &Read, max_bytes: u64) -> (Value, u64) {
        let mut read = 0u64;
        let mut inner = pread_of(file);
        let mut counted = |buf: &mut [u8], at: u64| {
            let n = inner(buf, at)?;
            read += n as u64;
            Ok(n)
        };
        let line = text_answer(req, max_bytes, &mut counted).expect("a page");
        let json = line.strip_prefix("__RESULT__").expect("a result line");
        (serde_json::from_str(json).expect("JSON"), read)
    }

    /// Follows `next` from line 1: the pages' texts joined, the last
    /// page, and the bytes each page read.
    fn follow(file: &[u8], max_bytes: u64) -> (String, Value, Vec<u64>) {
        let (mut text, mut reads) = (String::new(), Vec::new());
        let mut req = ask(1, None);
        loop {
            let (v, n) = page(file, &req, max_bytes);
            reads.push(n);
            text += v["text"].as_str().unwrap();
            let Some(next) = v.get("next") else {
                return (text, v, reads);
            };
            let num = |k: &str| next[k].as_u64().unwrap();
            req = ask(num("start"), Some((num("offset"), num("check"))));
        }
    }

    /// Lines of 0 to 199 characters, some not ASCII, some CRLF.
    fn file(lines: usize) -> Vec<u8> {
        let mut f = Vec::new();
        for i in 0..lines {
            let body = "é-x".repeat(i * 7 % 67);
            let end = if i % 5 == 0 { "\r\n" } else { "\n" };
            f.extend_from_slice(format!("{i} {body}{end}").as_bytes());
        }
        f
    }

    /// A file with a byte-order mark followed through `next`: the pages'
    /// texts joined are its text after the mark (UTF-16 transcoded, across
    /// the transcoder's chunks), each page says the mark, the last one
    /// gives the text's line count and the file's own SHA-256.
    #[test]
    fn following_next_through_a_file_with_a_bom_gives_its_text() {
        let text = String::from_utf8(file(3000)).unwrap() + "last \u{1d11e}";
        let mut u8_file = b"\xef\xbb\xbf".to_vec();
        u8_file.extend_from_slice(text.as_bytes());
        let utf16 = |be: bool| {
            let mut f = if be {
                vec![0xfe, 0xff]
            } else {
                vec![0xff, 0xfe]
            };
            for u in text.encode_utf16() {
                f.extend(if be { u.to_be_bytes() } else { u.to_le_bytes() });
            }
            f
        };
        for (f, bom) in [
            (u8_file, "utf-8"),
            (utf16(false), "utf-16le"),
            (utf16(true), "utf-16be"),
        ] {
            let (got, last, reads) = follow(&f, 16 << 10);
            assert_eq!(got, text, "{bom}");
            assert!(reads.len() > 20, "{bom}: {} pages", reads.len());
            let sha: [u8; 32] = Sha256::digest(&f).into();
            assert_eq!(last["sha256"], as_edit_wire::hex::encode(&sha), "{bom}");
            assert_eq!(last["lines"], 3001, "{bom}");
            assert_eq!(last["bom"], bom);
            let (first, _) = page(&f, &ask(1, None), 16 << 10);
            assert_eq!(first["bom"], bom);
        }
    }

    /// Each page reads about its own bytes (the page, one chunk more, the
    /// check's bytes), the last one the file once more: linear. Before
    /// `offset`, page k read the k pages before it too.
    #[test]
    fn following_next_reads_each_page_once_and_the_file_once_more() {
        let f = file(6000); // about 1.2 MB
        let size = f.len() as u64;
        let max = 16 << 10;
        let (text, last, reads) = follow(&f, max);
        assert_eq!(text.as_bytes(), &f[..]);
        let sha: [u8; 32] = Sha256::digest(&f).into();
        assert_eq!(last["sha256"], as_edit_wire::hex::encode(&sha));
        assert_eq!(last["lines"], 6000);
        assert!(reads.len() > 60, "{} pages", reads.len());
        // The page's bytes, one read past them (a chunk: `max_bytes` here),
        // the check's bytes twice.
        let per_page = 2 * max + 2 * BEFORE as u64;
        for (k, &n) in reads[..reads.len() - 1].iter().enumerate() {
            assert!(n <= per_page, "page {k} read {n} bytes");
        }
        assert!(*reads.last().unwrap() <= size + per_page);
        let pages = reads.len() as u64;
        assert!(reads.iter().sum::<u64>() <= 2 * size + pages * (max + 2 * BEFORE as u64));
    }

    /// A hint that does not hold is ignored: the page is the one `start`
    /// alone gives, read from byte 0.
    #[test]
    fn a_wrong_offset_or_check_or_a_changed_file_reads_from_the_start() {
        let f = file(300);
        let max = 4096;
        // The sixth page: the bytes before it are five pages.
        let mut first = page(&f, &ask(1, None), max).0;
        for _ in 0..4 {
            let n = &first["next"];
            let num = |k: &str| n[k].as_u64().unwrap();
            first = page(
                &f,
                &ask(num("start"), Some((num("offset"), num("check")))),
                max,
            )
            .0;
        }
        let next = &first["next"];
        let (s, at, c) = (
            next["start"].as_u64().unwrap(),
            next["offset"].as_u64().unwrap(),
            next["check"].as_u64().unwrap(),
        );
        let (want, full) = page(&f, &ask(s, None), max);
        let (got, n) = page(&f, &ask(s, Some((at, c))), max);
        assert_eq!(got, want);
        assert!(n < full / 2, "the hint is used: {n} against {full}");
        // Another line's start, a byte off, another check, another start.
        let other = f.iter().position(|&b| b == b'\n').unwrap() as u64 + 1;
        for hint in [
            (other, c),
            (at + 1, c),
            (at - 1, c),
            (at, c ^ 1),
            (u64::MAX >> 11, c),
        ] {
            assert_eq!(page(&f, &ask(s, Some(hint)), max).0, want, "{hint:?}");
        }
        assert_eq!(
            page(&f, &ask(s + 1, Some((at, c))), max).0,
            page(&f, &ask(s + 1, None), max).0
        );
        // The file changed before the offset (a line inserted): line `s` of
        // the new file, not the bytes at `at`.
        let mut g = b"new\n".to_vec();
        g.extend_from_slice(&f);
        assert_eq!(
            page(&g, &ask(s, Some((at, c))), max).0,
            page(&g, &ask(s, None), max).0
        );
    }

    /// The last page re-checks what the hint skipped: a file changed
    /// before the offset in a way the check cannot see (the bytes before
    /// it kept) still gets its exact `lines`, `sha256` and `not_text`.
    #[test]
    fn the_last_page_is_exact_for_the_whole_file() {
        let f = b"aaaa\nbbbb\ncccc\ndddd\n";
        // A first line of 100 bytes: a change in it is out of the check's reach.
        let mut long = vec![b'x'; 100];
        long.push(b'\n');
        long.extend_from_slice(f);
        let at = 101 + 10;
        let before = &long[at - BEFORE..at];
        let c2 = check(4, at as u64, before);
        assert_eq!(
            page(&long, &ask(4, Some((at as u64, c2))), 1024).0,
            exact_at(&long, 4)
        );
        // "xx…x\n" becomes "x\nx…x\n" (the 64 bytes before the offset
        // kept): one line more before it, so line 4 is not at `at` any more.
        let mut moved = long.clone();
        moved[1] = b'\n';
        assert_eq!(&moved[at - BEFORE..at], before);
        assert_eq!(
            page(&moved, &ask(4, Some((at as u64, c2))), 1024).0,
            exact_at(&moved, 4)
        );
        // A NUL before the offset: `not_text` as without the hint.
        let mut nul = long.clone();
        nul[3] = 0;
        let mut pr = pread_of(&nul);
        let e = text_answer(&ask(4, Some((at as u64, c2))), 1024, &mut pr).unwrap_err();
        assert_eq!(e.kind, as_edit_wire::protocol::ErrorKind::NotText);
        assert!(e.detail.unwrap().contains("byte offset 3"));
    }

    /// The check has no secret (module docs): one computed by the caller
    /// for another line's offset is trusted on an intermediate page, but
    /// the last page counts the lines before the offset and is exact.
    #[test]
    fn a_check_the_caller_computed_moves_only_an_intermediate_page() {
        let f: Vec<u8> = (1..=9)
            .flat_map(|i| format!("l{i}\n").into_bytes())
            .collect();
        // Line 7's offset (18) claimed as line 2's.
        let forged = check(2, 18, &f[..18]);
        let mid = Read {
            limit: Some(1),
            ..ask(2, Some((18, forged)))
        };
        assert_eq!(page(&f, &mid, 1024).0["text"], "l7\n");
        assert_eq!(
            page(&f, &ask(2, Some((18, forged))), 1024).0,
            exact_at(&f, 2)
        );
    }

    fn exact_at(f: &[u8], start: u64) -> Value {
        page(f, &ask(start, None), 1024).0
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Pages followed through `next` join to the file, and the last
        /// one's `lines` and `sha256` are the unpaged read's.
        #[test]
        fn pages_followed_join_to_the_unpaged_read(
            parts in proptest::collection::vec((0usize..120, 0u8..4), 0..80),
            max in 1200u64..4000,
        ) {
            let mut f = Vec::new();
            for (n, kind) in parts {
                f.extend_from_slice(["a", "é", "b", "\t"][n % 4].repeat(n).as_bytes());
                f.extend_from_slice(["\n", "\r\n", "\rz\n", "é\n"][kind as usize].as_bytes());
            }
            let (whole, _) = page(&f, &ask(1, None), 1 << 23);
            let (text, last, _) = follow(&f, max);
            prop_assert_eq!(text.as_str(), whole["text"].as_str().unwrap());
            prop_assert_eq!(&last["lines"], &whole["lines"]);
            prop_assert_eq!(&last["sha256"], &whole["sha256"]);
        }
    }

    #[test]
    fn check_has_sixteen_digits_below_2_53_and_binds_every_part() {
        let c = check(3, 10, b"abc\n");
        assert_eq!(c.to_string().len(), CHECK_DIGITS);
        assert!(c < 1 << 53);
        assert_ne!(c, check(4, 10, b"abc\n"));
        assert_ne!(c, check(3, 11, b"abc\n"));
        assert_ne!(c, check(3, 10, b"abd\n"));
    }

    #[test]
    fn trust_wants_a_line_start_and_the_check_of_the_bytes_before() {
        let f = b"one\ntwo\nthree\n";
        let mut p = pread_of(f);
        let c = next_check(&mut p, 2, 4).unwrap();
        assert!(trust(&mut p, 2, 4, c).unwrap());
        assert!(!trust(&mut p, 3, 4, c).unwrap(), "another start");
        assert!(!trust(&mut p, 2, 4, c + 1).unwrap(), "another check");
        let mid = next_check(&mut p, 2, 5).unwrap();
        assert!(!trust(&mut p, 2, 5, mid).unwrap(), "not after an LF");
        assert!(!trust(&mut p, 2, 99, c).unwrap(), "past the end");
        assert!(trust(&mut p, 1, 0, 0).unwrap());
        assert!(!trust(&mut p, 2, 0, 0).unwrap());
        // The file changed before the offset: the check no longer holds.
        let g = b"ONE\ntwo\nthree\n";
        assert!(!trust(&mut pread_of(g), 2, 4, c).unwrap());
    }

    #[test]
    fn whole_hashes_the_file_and_checks_what_is_before() {
        let f = "é\nb\nc\n".as_bytes();
        let at = 3; // "é\n" is 3 bytes: line 2 starts there
        let page: [u8; 32] = Sha256::digest(&f[at as usize..]).into();
        let sha: [u8; 32] = Sha256::digest(f).into();
        let n = f.len() as u64;
        assert_eq!(whole(&mut pread_of(f), at, n, 1, page).unwrap(), Some(sha));
        // Wrong line count, wrong page bytes, not text before: None.
        assert_eq!(whole(&mut pread_of(f), at, n, 2, page).unwrap(), None);
        assert_eq!(whole(&mut pread_of(f), at, n, 1, sha).unwrap(), None);
        let bad = b"\xff\nb\nc\n";
        let page: [u8; 32] = Sha256::digest(&bad[2..]).into();
        assert_eq!(whole(&mut pread_of(bad), 2, 6, 1, page).unwrap(), None);
    }
}
