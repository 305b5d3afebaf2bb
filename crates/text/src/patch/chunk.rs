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

/// Where the new lines after a chunk's last old line (of `old` placed)
/// begin, when that line is a context line and `new` lines follow it.
pub(super) fn tail(c: &Chunk, old: usize, new: usize) -> Option<usize> {
    let last = old.checked_sub(1)?;
    let j = c.keep[..new].iter().position(|k| *k == Some(last))?;
    (j + 1 < new).then_some(j + 1)
}
