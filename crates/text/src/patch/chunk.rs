//! One chunk of an Update, as the grammar reads it and every locator
//! places it, with what its lines alone say about its placement: pure.

/// One chunk of an Update: where it starts, what it replaces, with what.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Chunk {
    /// The non-empty `@@` headers, in the order they narrow the search.
    pub headers: Vec<String>,
    /// Context and `-` lines: what the file must contain.
    pub old: Vec<String>,
    /// Context and `+` lines: what replaces `old`.
    pub new: Vec<String>,
    /// Per line of `new`: its index in `old` when it is a context line, which
    /// keeps the file's text, matched maybe loosely (as Codex does).
    pub keep: Vec<Option<usize>>,
    /// `*** End of File` followed: `old` must end the file.
    pub eof: bool,
    /// Empty lines ending it were dropped: Codex's one retry drops one.
    pub separated: bool,
    /// 1-based line of the patch text where the chunk starts.
    pub line: usize,
}

/// A chunk of context lines alone (a chunk of empty lines is one) changes
/// nothing wherever it matches, so it takes its first match, as a header
/// does (Codex's, as for any chunk): it only moves the search.
pub(super) fn noop(c: &Chunk) -> bool {
    c.old.len() == c.new.len() && (c.keep.iter().enumerate()).all(|(j, k)| *k == Some(j))
}

/// A pure addition with no `@@` header, or with `*** End of File`, goes at
/// the end of the file, as with Codex (one after a header goes right after
/// it; one whose only old line was a final empty one, where the search
/// stands): every locator asks this one question.
pub(super) fn at_end(c: &Chunk) -> bool {
    c.old.is_empty() && (c.headers.is_empty() || c.eof)
}

/// The old line new line `j` keeps, of the first `old` placed: a context
/// line writes the file's text there (matched maybe loosely, as Codex
/// does), every writer of the new text alike.
pub(super) fn keeps(c: &Chunk, j: usize, old: usize) -> Option<usize> {
    c.keep.get(j).copied().flatten().filter(|&k| k < old)
}

/// The longest line the chunks compare (old lines and headers), in bytes:
/// a longer line of the file matches none exactly.
pub(super) fn widest(chunks: &[Chunk]) -> usize {
    (chunks.iter())
        .flat_map(|c| c.old.iter().chain(&c.headers))
        .map(|l| l.len())
        .max()
        .unwrap_or(0)
}

/// Where the new lines after a chunk's last old line (of `old` placed)
/// begin, when that line is a context line and `new` lines follow it.
pub(super) fn tail(c: &Chunk, old: usize, new: usize) -> Option<usize> {
    let last = old.checked_sub(1)?;
    let j = c.keep[..new].iter().position(|k| *k == Some(last))?;
    (j + 1 < new).then_some(j + 1)
}
