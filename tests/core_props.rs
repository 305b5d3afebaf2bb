//! The streaming core against a naive whole-string reference of the status
//! quo's semantics, over random text rich in CR, LF, CRLF, multi-byte
//! characters and near-matches, fed in random chunk sizes.

use as_edit::engine::{Edit, Engine, Refusal};
use proptest::prelude::*;

#[path = "support/apply_diff.rs"]
mod apply_diff;

/// The python3 script, transliterated: decode strictly, normalize, count
/// (non-overlapping, left to right), refuse 0 / >1, replace.
fn reference(
    content: &[u8],
    edits: &[(String, String, bool)],
) -> Result<(Vec<u8>, u64, Vec<u64>), Refusal> {
    let text = match std::str::from_utf8(content) {
        Ok(t) => t,
        Err(e) => {
            let offset = e.valid_up_to() as u64;
            let reason = match e.error_len() {
                None => "unexpected end of data",
                Some(_) if content[e.valid_up_to()] >= 0x80 && content[e.valid_up_to()] < 0xC2 => {
                    "invalid start byte"
                }
                Some(_) if content[e.valid_up_to()] > 0xF4 => "invalid start byte",
                Some(_) => "invalid continuation byte",
            };
            return Err(Refusal::InvalidUtf8 { offset, reason });
        }
    };
    if content.is_empty() {
        return Err(Refusal::Empty);
    }
    let norm = |s: &str| s.replace("\r\n", "\n").replace('\r', "\n");
    let mut s = norm(text);
    let mut total = 0;
    let mut lines = Vec::new();
    for (i, (old, new, all)) in edits.iter().enumerate() {
        let (old, new) = (norm(old), norm(new));
        let count = s.matches(old.as_str()).count() as u64;
        if count == 0 {
            return Err(Refusal::NotFound { edit: i });
        }
        if count > 1 && !all {
            return Err(Refusal::Multiple { edit: i, count });
        }
        // Lines (1-based, in this edit's output) where replacements start.
        lines.clear();
        let mut out = String::new();
        let mut last = 0;
        for (k, (at, _)) in s.match_indices(old.as_str()).enumerate() {
            if k > 0 && !all {
                break;
            }
            out.push_str(&s[last..at]);
            lines.push(out.matches('\n').count() as u64 + 1);
            out.push_str(&new);
            last = at + old.len();
        }
        out.push_str(&s[last..]);
        assert_eq!(
            out,
            if *all {
                s.replace(&old, &new)
            } else {
                s.replacen(&old, &new, 1)
            }
        );
        s = out;
        total += count;
    }
    Ok((s.into_bytes(), total, lines))
}

fn streamed(
    content: &[u8],
    edits: &[Edit],
    sizes: &[usize],
) -> Result<(Vec<u8>, u64, Vec<u64>), Refusal> {
    let mut engine = Engine::new(edits, true);
    let mut out = Vec::new();
    let mut rest = content;
    let mut i = 0;
    while !rest.is_empty() {
        let n = sizes[i % sizes.len()].clamp(1, rest.len());
        engine.feed(&rest[..n], &mut |b| out.extend_from_slice(b));
        rest = &rest[n..];
        i += 1;
    }
    let s = engine.finish(&mut |b| out.extend_from_slice(b))?;
    let lines = s.edits.last().map(|e| e.lines.clone()).unwrap_or_default();
    Ok((out, s.count, lines))
}

fn piece() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "a", "b", "ab", "aa", "\r", "\n", "\r\n", "é", "😀", "€", " ", "x\r", "\ra",
    ])
}

fn text(max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(piece(), 0..max).prop_map(|v| v.concat())
}

/// Raw file bytes: mostly valid text, sometimes with a stray invalid byte or
/// a truncated sequence.
fn content() -> impl Strategy<Value = Vec<u8>> {
    (
        text(60),
        prop::option::weighted(
            0.15,
            (
                any::<prop::sample::Index>(),
                prop::sample::select(vec![
                    &[0xffu8][..],
                    &[0xe2, 0x82][..],
                    &[0xc3][..],
                    &[0x80][..],
                ]),
            ),
        ),
    )
        .prop_map(|(t, bad)| {
            let mut b = t.into_bytes();
            if let Some((at, junk)) = bad {
                let i = at.index(b.len() + 1);
                b.splice(i..i, junk.iter().copied());
            }
            b
        })
}

fn edit() -> impl Strategy<Value = (String, String, bool)> {
    (
        text(4).prop_filter("OLD non-empty", |s| !s.is_empty()),
        text(4),
        any::<bool>(),
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn single_edit_matches_reference(content in content(), e in edit(), sizes in prop::collection::vec(1usize..9, 1..6)) {
        let edits = [Edit::new(&e.0, &e.1, e.2).unwrap()];
        prop_assert_eq!(streamed(&content, &edits, &sizes), reference(&content, &[e]));
    }

    #[test]
    fn batch_matches_reference(content in content(), es in prop::collection::vec(edit(), 1..4), sizes in prop::collection::vec(1usize..9, 1..6)) {
        let edits: Vec<Edit> = es.iter().map(|e| Edit::new(&e.0, &e.1, e.2).unwrap()).collect();
        prop_assert_eq!(streamed(&content, &edits, &sizes), reference(&content, &es));
    }

    #[test]
    fn old_taken_from_content_usually_matches(t in text(80), start in any::<prop::sample::Index>(), len in 1usize..12, all in any::<bool>(), new in text(5), sizes in prop::collection::vec(1usize..40, 1..4)) {
        // Near-matches and real matches: OLD cut from the content itself.
        let chars: Vec<char> = t.chars().collect();
        prop_assume!(!chars.is_empty());
        let s = start.index(chars.len());
        let old: String = chars[s..(s + len).min(chars.len())].iter().collect();
        let e = (old, new, all);
        let edits = [Edit::new(&e.0, &e.1, e.2).unwrap()];
        prop_assert_eq!(streamed(t.as_bytes(), &edits, &sizes), reference(t.as_bytes(), &[e]));
    }

    /// `--diff` from the engine (streamed from the replacements for one
    /// edit, from both texts for a batch) is a unified diff that, applied to
    /// the normalized old text, gives exactly the new text.
    #[test]
    fn engine_diffs_apply(t in text(80), picks in prop::collection::vec((any::<prop::sample::Index>(), 1usize..8, text(5), any::<bool>()), 1..3),
                          sizes in prop::collection::vec(1usize..40, 1..4)) {
        let chars: Vec<char> = t.chars().collect();
        prop_assume!(!chars.is_empty());
        let edits: Vec<Edit> = picks.iter().map(|(at, len, new, all)| {
            let s = at.index(chars.len());
            let old: String = chars[s..(s + len).min(chars.len())].iter().collect();
            Edit::new(&old, new, *all).unwrap()
        }).collect();
        let mut engine = Engine::new(&edits, true).with_diff("/f");
        let mut out = Vec::new();
        let mut rest = t.as_bytes();
        let mut i = 0;
        while !rest.is_empty() {
            let n = sizes[i % sizes.len()].clamp(1, rest.len());
            engine.feed(&rest[..n], &mut |b| out.extend_from_slice(b));
            rest = &rest[n..];
            i += 1;
        }
        let Ok(s) = engine.finish(&mut |b| out.extend_from_slice(b)) else {
            return Ok(()); // refused: no diff to check
        };
        let d = s.diff.expect("asked for a diff");
        prop_assert!(!d.truncated);
        let text = d.text.expect("small texts have a diff");
        let old = String::from_utf8(as_edit::engine::normalize_eol(t.as_bytes())).unwrap();
        let new = String::from_utf8(out).unwrap();
        prop_assert_eq!(apply_diff::apply(&old, &text), Some(new.clone()), "diff:\n{}", text);
        prop_assert_eq!(text.is_empty(), old == new);
    }

    #[test]
    fn whole_buffer_replace_is_the_engine(content in content(), e in edit()) {
        let edits = [Edit::new(&e.0, &e.1, e.2).unwrap()];
        let whole = as_edit::engine::replace(&content, &edits).map(|(b, s)| (b, s.count));
        let r = reference(&content, &[e]).map(|(b, c, _)| (b, c));
        prop_assert_eq!(whole, r);
    }
}

#[test]
fn large_chunks_with_long_needles() {
    // Needles longer than the chunks, straddling many boundaries.
    let unit = "ab\r\né😀".repeat(50);
    let content = format!("{unit}NEEDLE{unit}").repeat(3);
    let old = format!("{}NEEDLE", &unit[unit.len() - 30..]);
    let e = (old, "X".to_owned(), true);
    let edits = [Edit::new(&e.0, &e.1, e.2).unwrap()];
    for size in [1, 2, 3, 7, 64, 1000, 100_000] {
        assert_eq!(
            streamed(content.as_bytes(), &edits, &[size]),
            reference(content.as_bytes(), std::slice::from_ref(&e)),
            "chunk {size}"
        );
    }
}

/// One edit for the `--at-line` reference: OLD, NEW, replace-all, at_line.
type AtEdit = (String, String, bool, Option<u64>);

/// `--at-line` by brute force over whole strings: list every occurrence
/// (non-overlapping, left to right) with the line it starts on, then pick.
fn at_line_reference(content: &str, edits: &[AtEdit]) -> Result<(String, u64), Refusal> {
    let norm = |s: &str| s.replace("\r\n", "\n").replace('\r', "\n");
    let mut s = norm(content);
    if content.is_empty() {
        return Err(Refusal::Empty);
    }
    let mut total = 0;
    for (i, (old, new, all, at)) in edits.iter().enumerate() {
        let (old, new) = (norm(old), norm(new));
        let occ: Vec<(usize, u64)> = s
            .match_indices(old.as_str())
            .map(|(at, _)| (at, s[..at].matches('\n').count() as u64 + 1))
            .collect();
        if occ.is_empty() {
            return Err(Refusal::NotFound { edit: i });
        }
        let chosen: Vec<usize> = match at {
            None if occ.len() > 1 && !all => {
                return Err(Refusal::Multiple {
                    edit: i,
                    count: occ.len() as u64,
                })
            }
            None => occ.iter().map(|o| o.0).collect(),
            Some(line) => {
                let on: Vec<usize> = occ.iter().filter(|o| o.1 == *line).map(|o| o.0).collect();
                match on.len() {
                    0 => {
                        return Err(Refusal::NotAtLine {
                            edit: i,
                            line: *line,
                            count: occ.len() as u64,
                            starts: occ.iter().take(20).map(|o| o.1).collect(),
                        })
                    }
                    1 => on,
                    n => {
                        return Err(Refusal::MultipleAtLine {
                            edit: i,
                            line: *line,
                            count: n as u64,
                        })
                    }
                }
            }
        };
        let mut out = String::new();
        let mut last = 0;
        for at in &chosen {
            out.push_str(&s[last..*at]);
            out.push_str(&new);
            last = at + old.len();
        }
        out.push_str(&s[last..]);
        total += chosen.len() as u64;
        s = out;
    }
    Ok((s, total))
}

fn at_edit() -> impl Strategy<Value = AtEdit> {
    (
        text(4).prop_filter("OLD non-empty", |s| !s.is_empty()),
        text(4),
        any::<bool>(),
        prop::option::weighted(0.7, 1u64..8),
    )
        .prop_map(|(o, n, all, at)| (o, n, all && at.is_none(), at))
}

fn build(es: &[AtEdit]) -> Vec<Edit> {
    es.iter()
        .map(|e| {
            let edit = Edit::new(&e.0, &e.1, e.2).unwrap();
            match e.3 {
                Some(l) => edit.with_at_line(l).unwrap(),
                None => edit,
            }
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn at_line_matches_brute_force(t in text(80), es in prop::collection::vec(at_edit(), 1..4), sizes in prop::collection::vec(1usize..9, 1..6)) {
        let edits = build(&es);
        let got = streamed(t.as_bytes(), &edits, &sizes).map(|(b, c, _)| (String::from_utf8(b).unwrap(), c));
        prop_assert_eq!(got, at_line_reference(&t, &es));
    }

    #[test]
    fn at_line_with_old_cut_from_content(t in text(80), start in any::<prop::sample::Index>(), len in 1usize..6, line in 1u64..6, new in text(4), sizes in prop::collection::vec(1usize..40, 1..4)) {
        // OLD taken from the text itself, so occurrences (often several) exist.
        let chars: Vec<char> = t.chars().collect();
        prop_assume!(!chars.is_empty());
        let s = start.index(chars.len());
        let old: String = chars[s..(s + len).min(chars.len())].iter().collect();
        let es = [(old, new, false, Some(line))];
        let edits = build(&es);
        let got = streamed(t.as_bytes(), &edits, &sizes).map(|(b, c, _)| (String::from_utf8(b).unwrap(), c));
        prop_assert_eq!(got, at_line_reference(&t, &es));
    }
}
