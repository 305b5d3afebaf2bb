//! How a refusal with hints reads for a model: what `Display for
//! EditError` writes when hints came back, and the indentation difference
//! in words.

use super::{RefusalHints, Token, TxnAt};
use as_edit_wire::protocol::ErrorKind;

/// `lines 40-44`, or `line 40`.
fn span(h: &as_edit_text::hints::Hint) -> String {
    if h.end_line > h.line {
        format!("lines {}-{}", h.line, h.end_line)
    } else {
        format!("line {}", h.line)
    }
}

/// `lines 40-44 differ`, or `line 40 differs`.
fn span_differs(h: &as_edit_text::hints::Hint) -> String {
    let verb = if h.end_line > h.line {
        "differ"
    } else {
        "differs"
    };
    format!("{} {verb}", span(h))
}

/// Words for a model: what to send next. False when there is nothing to say
/// beyond the plain refusal (no hints found), so the caller writes that.
pub(super) fn render_hints(
    f: &mut std::fmt::Formatter<'_>,
    kind: &Token,
    count: Option<u64>,
    h: &RefusalHints,
    indent: Option<&str>,
) -> Result<bool, std::fmt::Error> {
    use as_edit_text::hints::Kind;
    match kind {
        Token::Known(ErrorKind::MultipleOccurrences) if !h.lines.is_empty() => {
            const SHOWN: usize = 20;
            let n = count.unwrap_or(h.lines.len() as u64);
            let list: Vec<String> = h.lines.iter().take(SHOWN).map(u64::to_string).collect();
            let more = if n as usize > list.len() {
                format!(" (the first {} of {n})", list.len())
            } else {
                String::new()
            };
            let shared = h.lines.windows(2).any(|w| w[0] == w[1]);
            write!(
                f,
                "{n} occurrences, starting on lines {}{more}; pass at_line to choose one{}",
                list.join(", "),
                if shared {
                    " (where a line holds several, extend OLD instead)"
                } else {
                    ""
                }
            )?;
            Ok(true)
        }
        Token::Known(ErrorKind::StringNotFound) if !h.hints.is_empty() => {
            let best = &h.hints[0];
            let at = span(best);
            let differ = span_differs(best);
            let why = match best.kind {
                Kind::AlreadyApplied => {
                    format!("the edit appears to be applied already ({at})")
                }
                Kind::TrailingWhitespace => {
                    format!("{differ} only in trailing whitespace")
                }
                Kind::Indentation => match indent {
                    Some(i) => format!("{differ} only in indentation ({i})"),
                    None => format!("{differ} only in indentation"),
                },
                Kind::Tabs => format!("{differ} only in tabs versus spaces"),
                Kind::Whitespace => format!("{differ} only in whitespace"),
                Kind::UnicodePunctuation => format!(
                    "{differ} only in Unicode punctuation (curly quotes, dashes, special spaces)"
                ),
                Kind::Escapes => format!(
                    "OLD holds literal escapes (\\n, \\t, \\\", \\\\); unescaped, it is on {at}"
                ),
                Kind::Similar => format!(
                    "the most similar text is on {at} (similarity {})",
                    best.score
                ),
            };
            write!(f, "string not found; {why}")?;
            if best.kind != Kind::AlreadyApplied {
                let text = best.text.strip_suffix('\n').unwrap_or(&best.text);
                let cut = if best.text_truncated { "\n[…]" } else { "" };
                write!(f, ". The file has:\n{text}{cut}")?;
            }
            let others: Vec<String> = h.hints[1..]
                .iter()
                .map(|o| format!("{} ({})", span(o), o.kind.token()))
                .collect();
            if !others.is_empty() {
                write!(f, "\nother candidates: {}", others.join(", "))?;
            }
            if h.truncated {
                write!(f, "\n(only part of the file was searched)")?;
            }
            Ok(true)
        }
        _ => Ok(false),
    }
}

/// How OLD's leading whitespace differs from the file's, in words, for the
/// best hint when it is `indentation`: `4 spaces more in the file`.
pub(super) fn indent_words(old: &str, h: Option<&RefusalHints>) -> Option<String> {
    let best = h?.hints.first()?;
    if best.kind != as_edit_text::hints::Kind::Indentation {
        return None;
    }
    let lead = |l: &str| l.len() - l.trim_start_matches([' ', '\t']).len();
    // The first line of OLD may start after the indentation: prefer a later
    // non-blank line.
    let pairs: Vec<(&str, &str)> = old
        .split('\n')
        .zip(best.text.split('\n'))
        .filter(|(o, t)| !o.trim().is_empty() && !t.trim().is_empty())
        .collect();
    let (o, t) = pairs.get(1).or(pairs.first())?;
    let (lo, lt) = (&o[..lead(o)], &t[..lead(t)]);
    let (diff, more) = match (lt.strip_prefix(lo), lo.strip_prefix(lt)) {
        (Some(d), _) if !d.is_empty() => (d, "more"),
        (_, Some(d)) if !d.is_empty() => (d, "fewer"),
        _ => return None,
    };
    let what = match (
        diff.bytes().all(|b| b == b' '),
        diff.bytes().all(|b| b == b'\t'),
    ) {
        (true, _) => format!(
            "{} space{}",
            diff.len(),
            if diff.len() == 1 { "" } else { "s" }
        ),
        (_, true) => format!(
            "{} tab{}",
            diff.len(),
            if diff.len() == 1 { "" } else { "s" }
        ),
        _ => format!("{diff:?}"),
    };
    Some(format!("{what} {more} in the file"))
}

/// `line 40`, `lines 40 and 97`, `lines 3, 8 and 12`.
fn line_list(lines: &[u64]) -> String {
    let words: Vec<String> = lines.iter().map(u64::to_string).collect();
    match words.as_slice() {
        [one] => format!("line {one}"),
        [rest @ .., last] => format!("lines {} and {last}", rest.join(", ")),
        [] => String::new(),
    }
}

/// A transaction's or patch's refusal: `file 2 (src/app.py), chunk 3: `,
/// then, for an ambiguous chunk, what to do about it (true: all said).
pub(super) fn render_at(
    f: &mut std::fmt::Formatter<'_>,
    kind: &Token,
    hints: Option<&RefusalHints>,
    at: &TxnAt,
) -> Result<bool, std::fmt::Error> {
    write!(f, "file {}", at.file)?;
    if let Some(p) = &at.path {
        write!(f, " ({p})")?;
    }
    if let Some(c) = at.chunk {
        write!(f, ", chunk {c}")?;
    }
    write!(f, ": ")?;
    match (kind, at.chunk, hints) {
        (Token::Known(ErrorKind::MultipleOccurrences), Some(_), Some(h)) if !h.lines.is_empty() => {
            write!(
                f,
                "the context occurs at {}{}; add an @@ line naming the enclosing function, or more context lines",
                line_list(&h.lines),
                if h.lines_truncated { " and more" } else { "" }
            )?;
            Ok(true)
        }
        _ => Ok(false),
    }
}

/// The detail without the `file i of n (P): ` (and `chunk c: `) that
/// [`render_at`] already wrote; None when only the token's words remain.
pub(super) fn unprefixed<'a>(
    detail: &'a str,
    at: &TxnAt,
    kind: &Token,
    count: Option<u64>,
) -> Option<&'a str> {
    let mut d = detail;
    if d.starts_with(&format!("file {} of ", at.file)) {
        if let Some(p) = &at.path {
            if let Some(i) = d.find(&format!("({p}): ")) {
                d = &d[i + p.len() + 4..];
            }
        }
    }
    if let Some(c) = at.chunk {
        d = d.strip_prefix(&format!("chunk {c}: ")).unwrap_or(d);
    }
    (d != default_words(kind, count)).then_some(d)
}

/// The helper's detail for a transaction refusal that has none of its own.
pub(super) fn default_words(kind: &Token, count: Option<u64>) -> String {
    match kind {
        Token::Known(ErrorKind::MultipleOccurrences) => {
            format!("OLD occurs {} times", count.unwrap_or(0))
        }
        Token::Known(ErrorKind::StringNotFound) => "OLD not found".into(),
        Token::Known(ErrorKind::Empty) => "the file is empty".into(),
        k => k.as_str().replace('_', " "),
    }
}

/// What a failed transaction left: rolled back, or each file's state.
pub(super) fn render_left(f: &mut std::fmt::Formatter<'_>, at: Option<&TxnAt>) -> std::fmt::Result {
    let Some(at) = at else { return Ok(()) };
    if at.rolled_back {
        write!(f, "\n(rolled back: every file has its original content)")?;
    }
    if !at.partial.is_empty() {
        let list: Vec<String> = at
            .partial
            .iter()
            .map(|p| format!("{} ({})", p.path.display(), p.state.as_str()))
            .collect();
        write!(f, "\nfiles left: {}", list.join(", "))?;
    }
    Ok(())
}
