//! The single-file `--stdin` request read without serde, when it has the
//! plain shape: a long OLD's string is checked once and decoded in place,
//! into the front of the request's own buffer, which then becomes OLD
//! (serde_json scans a 48 MiB OLD twice, copies it into its scratch run by
//! run, then it is copied again to be LF-normalized: about 100 ms and 100
//! MB of fresh pages of the request's 141 ms).
//!
//! Accepted, with JSON whitespace (space, tab, LF, CR) around any token:
//!
//! ```text
//! request = "{" member ("," member)* "}"        (each key at most once)
//! member  = "\"path\"" ":" string | "\"edits\"" ":" edits
//!         | "\"expect_sha256\"" ":" (string | "null")
//! edits   = "[" "]" | "[" edit ("," edit)* "]"  (at most MAX_EDITS)
//! edit    = "{" field ("," field)* "}"           (each key at most once)
//! field   = "\"old\"" ":" string | "\"new\"" ":" string
//!         | "\"replace_all\"" ":" ("true" | "false")
//!         | "\"at_line\"" ":" (digits | "null")  (no leading 0, < 2^64)
//! ```
//!
//! `path`, `edits`, `old` and `new` are required; a key is plain (no
//! escape). A string is RFC 8259's: no raw control character, the escapes
//! `\" \\ \/ \b \f \n \r \t \uXXXX`, a surrogate only as a high-low pair.
//! The text is UTF-8. Anything else (or any doubt) returns the buffer
//! untouched and serde_json reads it, so every refusal keeps its words;
//! what is accepted is what serde reads too, to the same request (the
//! tests compare both on generated and mutated requests).

use memchr::memchr;

use super::stdin::{build, EditList, StdinRequest};
use crate::engine::normalize_eol;
use crate::protocol::Failure;
use crate::request::{EditOptions, Request};

/// More edits go to serde, which builds each as it is read: the spans
/// here would cost a batch's memory for no gain (its strings are short).
const MAX_EDITS: usize = 64;

/// A string's raw text, between its quotes.
#[derive(Clone, Copy)]
struct Span(usize, usize);

struct EditSpans {
    old: Span,
    new: Span,
    replace_all: bool,
    at_line: Option<u64>,
}

/// The request, or the buffer back, untouched, when it is not of the
/// shape above.
#[cfg_attr(as_edit_small, optimize(size))]
#[inline(never)]
pub fn parse_fast(
    json: Vec<u8>,
    options: &EditOptions,
) -> Result<Result<Request, Failure>, Vec<u8>> {
    let mut p = Parser {
        b: &json,
        i: 0,
        high: 0,
    };
    let Some((path, edits, sha)) = p.request() else {
        return Err(json);
    };
    // Every byte past 0x7f lies in a string, and the scan saw it: an
    // ASCII request (the usual one) is valid UTF-8 without another pass.
    if p.high != 0 && std::str::from_utf8(&json).is_err() {
        return Err(json);
    }
    // Owned copies of every string but the longest, before the buffer is
    // written: the path first, the one that can still say no.
    let Ok(path) = String::from_utf8(decoded(&json, path)) else {
        return Err(json);
    };
    let sha = sha.map(|s| String::from_utf8(decoded(&json, s)));
    let Ok(expect_sha256) = sha.transpose() else {
        return Err(json);
    };
    // Every string but the longest decoded into its own buffer; the
    // longest in place, into the front of the request's.
    let spans: Vec<Span> = edits.iter().flat_map(|e| [e.old, e.new]).collect();
    let mut long = 0;
    for (k, s) in spans.iter().enumerate() {
        if s.1 - s.0 > spans[long].1 - spans[long].0 {
            long = k;
        }
    }
    let mut texts = Vec::with_capacity(spans.len());
    for (k, &s) in spans.iter().enumerate() {
        texts.push(match k == long {
            true => Vec::new(),
            false => normalize_eol(&decoded(&json, s)),
        });
    }
    if let Some(&s) = spans.get(long) {
        let mut json = json;
        let (n, cr) = unescape(&mut json, s.0, s.1, 0);
        json.truncate(n);
        // Raw control bytes are not JSON: a CR can only come from an
        // escape, and with none the pass over the text is spared.
        if cr {
            squeeze_cr(&mut json);
        }
        texts[long] = json;
    }
    let mut list = EditList::default();
    let mut texts = texts.into_iter();
    for e in &edits {
        let (Some(old), Some(new)) = (texts.next(), texts.next()) else {
            break;
        };
        list.push(old, &new, e.replace_all, e.at_line);
    }
    let req = StdinRequest {
        path,
        edits: list,
        expect_sha256,
    };
    Ok(build(req, options.clone()))
}

type Parsed = (Span, Vec<EditSpans>, Option<Span>);

struct Parser<'a> {
    b: &'a [u8],
    i: usize,
    /// Not 0 once a string held a byte past 0x7f (or may have).
    high: u32,
}

impl Parser<'_> {
    #[inline(never)]
    #[cfg_attr(as_edit_small, optimize(size))]
    fn request(&mut self) -> Option<Parsed> {
        let (mut path, mut edits, mut sha) = (None, None, None);
        self.object(|p, key| match key {
            b"path" => once(&mut path, p.string()?),
            b"edits" => once(&mut edits, p.edits()?),
            b"expect_sha256" => once(&mut sha, p.null_or(Parser::string)?),
            _ => None,
        })?;
        self.ws();
        (self.i == self.b.len()).then_some(())?;
        Some((path?, edits?, sha.flatten()))
    }

    #[inline(never)]
    #[cfg_attr(as_edit_small, optimize(size))]
    fn edits(&mut self) -> Option<Vec<EditSpans>> {
        self.eat(b'[')?;
        let mut list = Vec::new();
        if self.eat(b']').is_some() {
            return Some(list);
        }
        loop {
            (list.len() < MAX_EDITS).then_some(())?;
            list.push(self.edit()?);
            if self.eat(b',').is_none() {
                self.eat(b']')?;
                return Some(list);
            }
        }
    }

    #[inline(never)]
    #[cfg_attr(as_edit_small, optimize(size))]
    fn edit(&mut self) -> Option<EditSpans> {
        let (mut old, mut new, mut all, mut line) = (None, None, None, None);
        self.object(|p, key| match key {
            b"old" => once(&mut old, p.string()?),
            b"new" => once(&mut new, p.string()?),
            b"replace_all" => once(&mut all, p.flag()?),
            b"at_line" => once(&mut line, p.null_or(Parser::number)?),
            _ => None,
        })?;
        Some(EditSpans {
            old: old?,
            new: new?,
            replace_all: all.unwrap_or(false),
            at_line: line.flatten(),
        })
    }

    /// `{ key : value, ... }`, each value read by `member`.
    #[cfg_attr(as_edit_small, optimize(size))]
    fn object(&mut self, mut member: impl FnMut(&mut Self, &[u8]) -> Option<()>) -> Option<()> {
        self.eat(b'{')?;
        loop {
            let key = self.string()?;
            // A key with an escape is left to serde.
            let key = &self.b[key.0..key.1];
            memchr(b'\\', key).is_none().then_some(())?;
            self.eat(b':')?;
            member(self, key)?;
            if self.eat(b',').is_none() {
                return self.eat(b'}');
            }
        }
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.b.get(self.i) {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) -> Option<()> {
        self.ws();
        (self.b.get(self.i) == Some(&c)).then(|| self.i += 1)
    }

    fn word(&mut self, w: &[u8]) -> bool {
        self.ws();
        let hit = self.b[self.i..].starts_with(w);
        if hit {
            self.i += w.len();
        }
        hit
    }

    #[cfg_attr(as_edit_small, optimize(size))]
    fn null_or<T>(&mut self, f: impl FnOnce(&mut Self) -> Option<T>) -> Option<Option<T>> {
        match self.word(b"null") {
            true => Some(None),
            false => f(self).map(Some),
        }
    }

    #[cfg_attr(as_edit_small, optimize(size))]
    fn flag(&mut self) -> Option<bool> {
        if self.word(b"true") {
            return Some(true);
        }
        self.word(b"false").then_some(false)
    }

    /// A JSON integer that fits a u64 (a sign, a fraction or an exponent
    /// is serde's to refuse or read).
    #[cfg_attr(as_edit_small, optimize(size))]
    fn number(&mut self) -> Option<u64> {
        self.ws();
        let digits = self.b[self.i..].iter().take_while(|c| c.is_ascii_digit());
        let n = digits.count();
        let text = &self.b[self.i..self.i + n];
        if n == 0 || (n > 1 && text[0] == b'0') {
            return None;
        }
        self.i += n;
        if let Some(b'.' | b'e' | b'E') = self.b.get(self.i) {
            return None;
        }
        text.iter().try_fold(0u64, |v, &d| {
            v.checked_mul(10)?.checked_add((d - b'0') as u64)
        })
    }

    /// A string's span, its escapes and characters checked. Not inlined
    /// into `parse_fast`, whose code is built for size: this loop is not.
    #[inline(never)]
    fn string(&mut self) -> Option<Span> {
        self.eat(b'"')?;
        let (b, start) = (self.b, self.i);
        let mut i = start;
        loop {
            i += plain(&b[i..], &mut self.high);
            match *b.get(i)? {
                b'"' => {
                    self.i = i + 1;
                    return Some(Span(start, i));
                }
                b'\\' => i += 1 + escape(&b[i + 1..])?,
                _ => return None, // a raw control byte
            }
        }
    }
}

/// Bit i is set when byte i is `"`, `\\` or a control byte; and in the
/// second mask, when it is past 0x7f.
#[inline(always)]
fn specials(c: &[u8; 16]) -> (u32, u32) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE2 is part of x86_64; the load reads the 16 bytes of `c`.
    unsafe {
        use std::arch::x86_64::*;
        let x = _mm_loadu_si128(c.as_ptr().cast());
        let quote = _mm_cmpeq_epi8(x, _mm_set1_epi8(b'"' as i8));
        let backslash = _mm_cmpeq_epi8(x, _mm_set1_epi8(b'\\' as i8));
        // Unsigned x <= 0x1f: min(x, 0x1f) == x.
        let ctl = _mm_cmpeq_epi8(_mm_min_epu8(x, _mm_set1_epi8(0x1f)), x);
        let m = _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(quote, backslash), ctl));
        (m as u32, _mm_movemask_epi8(x) as u32)
    }
    #[cfg(not(target_arch = "x86_64"))]
    c.iter().enumerate().fold((0, 0), |(m, h), (i, &b)| {
        let s = b == b'"' || b == b'\\' || b < 0x20;
        (m | (s as u32) << i, h | ((b >> 7) as u32) << i)
    })
}

/// How many bytes of `b` come before its first special byte (all of them
/// if there is none): 16 at a time; `high` gets the bytes past 0x7f seen.
#[inline(always)]
fn plain(b: &[u8], high: &mut u32) -> usize {
    let mut k = 0;
    while let Some(c) = b.get(k..k + 16) {
        let (m, h) = specials(c.try_into().unwrap_or(&[0; 16]));
        *high |= h;
        if m != 0 {
            return k + m.trailing_zeros() as usize;
        }
        k += 16;
    }
    *high |= b[k..].iter().any(|&c| c > 0x7f) as u32;
    let rest = b[k..]
        .iter()
        .position(|&c| c == b'"' || c == b'\\' || c < 0x20);
    k + rest.unwrap_or(b.len() - k)
}

/// Sets a key's value, which must not have been set.
fn once<T>(slot: &mut Option<T>, v: T) -> Option<()> {
    slot.is_none().then(|| *slot = Some(v))
}

/// The length of the escape after a backslash, if serde_json decodes it
/// to a valid string: a high surrogate only with a low one after it.
fn escape(b: &[u8]) -> Option<usize> {
    match *b.first()? {
        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => Some(1),
        b'u' => match hex4(&b[1..])? {
            0xD800..=0xDBFF => {
                (b.get(5..7)? == b"\\u").then_some(())?;
                (0xDC00..=0xDFFF).contains(&hex4(&b[7..])?).then_some(11)
            }
            0xDC00..=0xDFFF => None,
            _ => Some(5),
        },
        _ => None,
    }
}

fn hex4(b: &[u8]) -> Option<u32> {
    b.get(..4)?
        .iter()
        .try_fold(0, |v, &c| Some(v << 4 | (c as char).to_digit(16)?))
}

/// A checked string's text, decoded into a new buffer.
fn decoded(json: &[u8], s: Span) -> Vec<u8> {
    let mut v = json[s.0..s.1].to_vec();
    let (n, _) = unescape(&mut v, 0, s.1 - s.0, 0);
    v.truncate(n);
    v
}

/// Decodes the checked string `b[r..end]` to `b[w..]` (`w <= r`: every
/// escape is longer than what it decodes to, so no byte is written before
/// it has been read); returns where the text ends, and whether an escape
/// decoded to a CR (`\r`, `\u000d`). The runs between
/// escapes are moved 16 bytes at a time as they are scanned: a line's
/// `\n` comes every few dozen bytes, and a `memmove` per run (musl's,
/// byte by byte when the copies overlap) cost more than the scan.
#[inline(never)]
fn unescape(b: &mut [u8], mut r: usize, end: usize, mut w: usize) -> (usize, bool) {
    let mut cr = false;
    loop {
        // A checked string's only special byte is an escape's backslash.
        while let Some(c) = b[..end].get(r..r + 16) {
            let c: [u8; 16] = c.try_into().unwrap_or([0; 16]);
            let (m, _) = specials(&c);
            if m != 0 {
                // The bytes before the escape go one by one (below): a
                // 16-byte store could overwrite bytes still to read.
                break;
            }
            b[w..w + 16].copy_from_slice(&c);
            (r, w) = (r + 16, w + 16);
        }
        while r < end && b[r] != b'\\' {
            b[w] = b[r];
            (r, w) = (r + 1, w + 1);
        }
        if r == end {
            return (w, cr);
        }
        let e = b[r + 1];
        r += 2;
        cr |= e == b'r';
        if e != b'u' {
            b[w] = match e {
                b'b' => 0x08,
                b'f' => 0x0c,
                b'n' => b'\n',
                b'r' => b'\r',
                b't' => b'\t',
                e => e,
            };
            w += 1;
            continue;
        }
        let mut c = hex4(&b[r..]).unwrap_or(0);
        r += 4;
        cr |= c == 0x0d;
        if (0xD800..0xDC00).contains(&c) {
            let lo = hex4(&b[r + 2..]).unwrap_or(0xDC00);
            c = 0x10000 + ((c - 0xD800) << 10) + (lo - 0xDC00);
            r += 6;
        }
        let mut utf8 = [0; 4];
        // Byte by byte: a slice copy of 1 to 4 bytes is a `memcpy` call.
        for &x in char::from_u32(c)
            .unwrap_or('\u{fffd}')
            .encode_utf8(&mut utf8)
            .as_bytes()
        {
            b[w] = x;
            w += 1;
        }
    }
}

/// `normalize_eol` in place: CRLF and a lone CR become LF.
fn squeeze_cr(v: &mut Vec<u8>) {
    let Some(mut r) = memchr(b'\r', v) else {
        return;
    };
    let mut w = r;
    while r < v.len() {
        let k = memchr(b'\r', &v[r..]).unwrap_or(v.len() - r);
        v.copy_within(r..r + k, w);
        w += k;
        r += k;
        if r < v.len() {
            v[w] = b'\n';
            w += 1;
            r += 1 + (v.get(r + 1) == Some(&b'\n')) as usize;
        }
    }
    v.truncate(w);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::parse_single;

    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
        fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
            from[self.below(from.len())]
        }
    }

    /// Pieces of a string's raw text: valid and invalid escapes, raw
    /// UTF-8, raw control bytes, quotes left open.
    const PIECES: &[&str] = &[
        "a",
        "line",
        " ",
        "\\n",
        "\\r\\n",
        "\\r",
        "\\t",
        "\\\"",
        "\\\\",
        "\\/",
        "\\b",
        "\\f",
        "\\u00e9",
        "\\u00E9",
        "\\u0000",
        "\\u000d",
        "\\uD83D\\uDE00",
        "\\ud83d\\ude00",
        "é",
        "😀",
        "\u{7f}",
        "x\r\ny",
        "\\uD800",
        "\\uDC00",
        "\\uD800\\u0041",
        "\\uD800x",
        "\\x",
        "\\u12",
        "\\u12G4",
        "\u{1}",
        "\t",
        "\\",
        "\"",
    ];
    const WS: &[&str] = &["", "", "", " ", "\t", "\n", "\r", "  \n "];

    fn string(r: &mut Rng, pieces: usize) -> String {
        let mut s = String::from("\"");
        let n = r.below(pieces);
        for _ in 0..n {
            // Mostly valid pieces, so that many requests are accepted.
            let p = match r.below(16) {
                0 => r.pick(PIECES),
                _ => r.pick(&PIECES[..21]),
            };
            s.push_str(p);
        }
        s + "\""
    }

    fn value(r: &mut Rng, key: &str) -> String {
        let ws = r.pick(WS);
        let v = match (key, r.below(24)) {
            (_, 0) => r
                .pick(&["null", "1", "true", "[]", "{}", "\"x\""])
                .to_string(),
            ("replace_all", 1) => r.pick(&["tru", "falsey", "0", "truefalse"]).into(),
            ("replace_all", _) => r.pick(&["true", "false"]).into(),
            ("at_line", 2..=9) => "null".into(),
            ("at_line", _) => r
                .pick(&[
                    "0",
                    "7",
                    "12",
                    "007",
                    "-1",
                    "-0",
                    "1.5",
                    "1e2",
                    "3E1",
                    "null",
                    "18446744073709551615",
                    "18446744073709551616",
                    "99999999999999999999",
                ])
                .into(),
            ("edits", _) => {
                let n = r.below(4);
                let edits: Vec<String> = (0..n).map(|_| edit(r)).collect();
                format!(
                    "[{}{}]",
                    edits.join(","),
                    r.pick(&["", "", "", "", "", "", "", ",", " "])
                )
            }
            ("expect_sha256", 1) => "null".into(),
            ("expect_sha256", 2) => format!("\"{}\"", "ab".repeat(32)),
            ("path", 1) => "\"\"".into(),
            _ => {
                let pieces = [8, 40][r.below(2)];
                string(r, pieces)
            }
        };
        format!("{ws}{v}{ws}")
    }

    fn object(r: &mut Rng, required: &[&str], optional: &[&str]) -> String {
        let mut keys: Vec<&str> = required.to_vec();
        for k in optional {
            if r.below(2) == 0 {
                keys.push(k);
            }
        }
        match r.below(40) {
            0 => keys.push("unknown"),
            1 => keys.push(required[0]),
            2 => {
                keys.remove(0);
            }
            _ => {}
        }
        for i in (1..keys.len()).rev() {
            keys.swap(i, r.below(i + 1));
        }
        let members: Vec<String> = keys
            .iter()
            .map(|k| {
                let key = match (r.below(60), *k) {
                    (0, "path") => "p\\u0061th",
                    (1, k) => &k[1..],
                    _ => k,
                };
                let ws = r.pick(WS);
                format!("{ws}\"{key}\"{ws}:{}", value(r, k))
            })
            .collect();
        format!("{{{}}}", members.join(","))
    }

    fn edit(r: &mut Rng) -> String {
        match r.below(20) {
            0 => "[\"a\",\"b\"]".into(),
            _ => object(r, &["old", "new"], &["replace_all", "at_line"]),
        }
    }

    fn request(r: &mut Rng) -> Vec<u8> {
        let ws = r.pick(WS);
        let o = object(r, &["path", "edits"], &["expect_sha256"]);
        let tail = match r.below(16) {
            0 => r.pick(&[" x", "}", "{}", "\0"]),
            _ => "",
        };
        format!("{ws}{o}{ws}{tail}").into_bytes()
    }

    fn mutate(r: &mut Rng, mut b: Vec<u8>) -> Vec<u8> {
        const BYTES: &[u8] = b"{}[]\",:\\ u0aAn\x01\xff\xc3";
        for _ in 0..1 + r.below(3) {
            let at = r.below(b.len() + 1);
            match r.below(3) {
                0 if at < b.len() => {
                    b.remove(at);
                }
                1 if at < b.len() => b[at] = BYTES[r.below(BYTES.len())],
                _ => b.insert(at, BYTES[r.below(BYTES.len())]),
            }
        }
        b
    }

    fn options(r: &mut Rng) -> EditOptions {
        EditOptions {
            expect_sha256: (r.below(4) == 0).then_some([7; 32]),
            ..EditOptions::default()
        }
    }

    /// Whenever the fast path accepts, serde reads the same request (or
    /// the same refusal); when it does not, it hands the bytes back as
    /// they were. Returns whether it accepted.
    fn agree(json: &[u8], o: &EditOptions) -> bool {
        match parse_fast(json.to_vec(), o) {
            Ok(fast) => {
                let serde = parse_single(json, o);
                assert_eq!(serde, Some(fast), "{}", json.escape_ascii());
                true
            }
            Err(back) => {
                assert_eq!(back, json);
                false
            }
        }
    }

    #[test]
    fn what_the_fast_path_accepts_serde_reads_the_same() {
        let runs: usize = std::env::var("FAST_JSON_RUNS").map_or(20_000, |v| v.parse().unwrap());
        let mut r = Rng(0x9e37_79b9_7f4a_7c15);
        let (mut accepted, mut built) = (0, 0);
        for _ in 0..runs {
            let json = request(&mut r);
            let o = options(&mut r);
            if agree(&json, &o) {
                accepted += 1;
                built += matches!(parse_single(&json, &o), Some(Ok(_))) as usize;
            }
            agree(&mutate(&mut r, json), &o);
        }
        // The generator reaches the fast path, and its requests too.
        assert!(accepted > runs / 10, "{accepted} of {runs}");
        assert!(built > runs / 50, "{built} of {runs}");
        eprintln!("accepted {accepted}, built {built} of {runs}");
    }

    #[test]
    fn every_prefix_of_tricky_requests_agrees() {
        // Each with whether the fast path takes it.
        let cases: &[(&[u8], bool)] = &[
            (br#" {"edits":[{"at_line":12,"new":"\u00e9\r\n","old":"a\\b\"c\/\b\f\n\r\t\uD83D\uDE00x\r"}],"expect_sha256":null,"path":"f\u0041"} "#, true),
            (br#"{"path":"f","edits":[{"old":"a","new":"b","replace_all":true},{"old":"\uD800\u0041","new":""}]}"#, false),
            (br#"{"path":"f","edits":[{"old":"a","new":"b","at_line":007}],"expect_sha256":"ab"}"#, false),
            (br#"{"path":"f","edits":[{"old":"x\u000D\u000Ay\rz","new":"b","at_line":18446744073709551615}],"expect_sha256":"ab"}"#, true),
            ("{\"path\":\"é😀\",\"edits\":[{\"old\":\"\u{7f}\",\"new\":\"\\ud83d\\ude00\"}]}".as_bytes(), true),
        ];
        let o = EditOptions::default();
        for &(json, takes) in cases {
            assert_eq!(agree(json, &o), takes, "{}", json.escape_ascii());
            for end in 0..json.len() {
                agree(&json[..end], &o);
            }
        }
    }

    #[test]
    fn the_longest_string_is_decoded_in_place_as_serde_decodes_it() {
        let line = "    let value = compute(alpha, beta); // \\\"text\\\"\\r\\n\\u00e9\\t";
        // Escapes 0 to 40 bytes apart, each kind in turn: the runs before
        // them end at every place in a 16-byte block, with the text written
        // 0 to hundreds of bytes behind.
        let kinds = ["\\n", "\\r", "\\u00e9", "\\\\", "\\uD83D\\uDE00", "\\u000d"];
        let spaced: String = (0..600)
            .map(|i| "b".repeat(i * 7 % 41) + kinds[i % kinds.len()])
            .collect();
        for (old, new) in [
            (line.repeat(500), "x".into()),
            ("y".into(), line.repeat(300)),
            (spaced.clone(), "x".into()),
            (format!("{}{spaced}", "c".repeat(40)), "x".into()),
        ] {
            let json = format!(
                r#"{{"path":"f","edits":[{{"old":"a","new":"{new}"}},{{"old":"{old}","new":"{new}","at_line":2}}]}}"#
            );
            assert!(agree(json.as_bytes(), &EditOptions::default()));
        }
    }
}
