//! V4A patches (`*** Begin Patch` … `*** End Patch`), pure: no I/O.
//!
//! [`parse()`] turns the text into a [`Patch`] (the grammar and its leniencies
//! are in `parse.rs`'s docs); [`locate`] places an Update's chunks in a
//! file's text and writes the new content (grades, uniqueness and where pure
//! additions go are in its docs); [`stream`] gives the same answer in one
//! pass over the file, at every grade, holding only the patch, when no
//! later line overrules a match (its docs), and [`passes`] in passes over
//! the file otherwise, still bounded by the patch; both read the text
//! through a [`Source`] the caller provides. [`apply_tree`] runs a whole
//! patch over an in-memory tree, all or nothing, with the same locator
//! (the host's transfer fallback and the differential tests use it). The
//! helper (`as-edit`'s `patch` module) makes a patch a transaction, reads
//! its inputs and runs the `apply_patch` mode; where as-edit's answers
//! differ from Codex's and the Agents SDK's is tabled there.
//!
//! # One answer, three ways to reach it
//!
//! Every placement is [`locate`]'s: the others are proved against it
//! (their tests compare text, lines and grades on generated cases), and
//! what a chunk means is asked of one function each in `chunk.rs`: whether
//! a pure addition goes at the end, which old line a context line keeps,
//! how long a line can match (and of [`Grade`]: the grades in order, the
//! loosest allowed). [`locate`] and [`passes`] share one
//! placement loop (`locate::place`), which runs each search where it
//! finds it: in the held lines, or in a pass over the file. [`stream`]
//! keeps its own, as it must: it places while the lines go by, with no
//! search to call and nothing to go back to. Three remain because each
//! buys what the others cannot, measured on a 77.7 MiB file of 2.7 M
//! lines (the release profile, fat LTO; a harness reading the file in
//! 64 KiB pieces; the median of 3 runs of GNU time on 2 cores with a load
//! average of 7 from other builds, so CPU times are rough):
//!
//! | | one exact chunk | 8 chunks (headers, context) |
//! | --- | --- | --- |
//! | [`locate`] (the text held) | 121 MiB peak RSS, 0.13 s CPU | 135 MiB, 0.24 s |
//! | [`stream`] (one read) | 1.9 MiB, 0.23 s | 1.9 MiB, 0.28 s |
//! | [`passes`] (2 reads; 3 with its count) | 2.0 MiB, 0.31 s | 2.1 MiB, 0.70 s |
//!
//! - [`locate`] holds the text and its lines (1.6 to 1.7 times this file):
//!   the host's transfer fallback has the text in memory already, and it
//!   is the oracle of the other two.
//! - [`stream`] is the binary's first try: memory bounded by the patch,
//!   and one read, so the output is written as the file is read and no
//!   second read can disagree with the first; it gives up (`None`) when a
//!   later line could overrule a placement.
//! - [`passes`] answers what the one pass cannot prove (a refusal and its
//!   lines, a loose match overruled, the retry, `--diff`) in memory still
//!   bounded by the patch, at the cost of a read per pass.
//!
//! # Examples
//!
//! Parse a patch; an Update File's chunks are its old and new lines:
//!
//! ```
//! use as_edit_text::patch::{parse, Hunk};
//!
//! let patch = parse("*** Begin Patch\n*** Update File: a.py\n@@ def f():\n-    return 1\n+    return 2\n*** End Patch")?;
//! let Hunk::Update { path, move_to, chunks } = &patch.hunks[0] else { unreachable!() };
//! assert_eq!((path.as_str(), move_to), ("a.py", &None));
//! assert_eq!(chunks[0].headers, ["def f():"]);
//! assert_eq!(chunks[0].old, ["    return 1"]);
//! assert_eq!(chunks[0].new, ["    return 2"]);
//! # Ok::<(), as_edit_text::patch::ParseError>(())
//! ```
//!
//! Locate a chunk in a file's text and write the new text: after its
//! header, a whitespace-loose match is taken at its grade; two places at
//! the first grade that matches are refused with their lines:
//!
//! ```
//! use as_edit_text::patch::{locate, parse_update_diff, Grade, Miss, Placed};
//!
//! let text = "def f():\n    return 1\ndef g():\n    return 1\n";
//! let chunks = parse_update_diff("@@ def g():\n-  return 1\n+    return 2\n")?;
//! let (new, placed) = locate::apply(text, &chunks, false).expect("placed");
//! assert_eq!(new, "def f():\n    return 1\ndef g():\n    return 2\n");
//! assert_eq!(placed, [Placed { grade: Grade::Whitespace, line: 4 }]);
//!
//! let chunks = parse_update_diff("-    return 1\n+    return 2\n")?;
//! let refused = locate::apply(text, &chunks, false).unwrap_err();
//! assert_eq!(refused.miss, Miss::Multiple { lines: vec![2, 4], grade: Grade::Exact });
//! # Ok::<(), as_edit_text::patch::ParseError>(())
//! ```

mod chunk;
mod feed;
mod find;
pub mod locate;
mod matches;
pub mod parse;
pub mod passes;
mod rewrite;
pub mod stream;
mod table;
mod watch;

use std::collections::BTreeMap;

pub use locate::{Grade, Miss, Placed, Refusal};
pub use parse::{parse, parse_create_diff, parse_update_diff, Chunk, Hunk, ParseError, Patch};

/// What feeds [`stream::run`] and [`passes::resolve`] the old text: it
/// calls its argument with each piece (strict UTF-8, LF-normalized); false
/// when it could not read it all (the caller knows why).
pub type Source<'a> = dyn FnMut(&mut dyn FnMut(&[u8])) -> bool + 'a;

/// What a patch did to one file, in hunk order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    /// Created (or, with `overwrite`, replaced) by `*** Add File`.
    Added(String),
    /// Removed by `*** Delete File`.
    Deleted(String),
    /// Updated (at `to` when it moved), with each chunk's placement.
    Updated {
        /// The path updated.
        path: String,
        /// The destination of `*** Move to`.
        to: Option<String>,
        /// Per chunk.
        placed: Vec<Placed>,
    },
}

/// Why [`apply_tree`] refused: the hunk (0-based) and its path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TreeError {
    /// Add File or Move to onto an existing file (without `overwrite`).
    Exists {
        /// 0-based hunk index.
        hunk: usize,
        /// The existing path.
        path: String,
    },
    /// Update or Delete of a file that is not there.
    Missing {
        /// 0-based hunk index.
        hunk: usize,
        /// The missing path.
        path: String,
    },
    /// A chunk could not be placed.
    Chunk {
        /// 0-based hunk index.
        hunk: usize,
        /// The updated path.
        path: String,
        /// Which chunk, and why.
        refusal: Refusal,
    },
}

/// Applies `patch` to `files` (path → LF text), all or nothing: on an error
/// `files` is unchanged. Hunks apply in order, each seeing the previous
/// ones' results. `overwrite` lets Add File and Move to replace an existing
/// file (Codex's behaviour, the `apply_patch` mode); `strict` allows exact
/// matches only.
#[cfg_attr(as_edit_small, optimize(size))]
pub fn apply_tree(
    files: &mut BTreeMap<String, String>,
    patch: &Patch,
    strict: bool,
    overwrite: bool,
) -> Result<Vec<Change>, TreeError> {
    let mut tree = files.clone();
    let mut changes = Vec::new();
    for (hunk, h) in patch.hunks.iter().enumerate() {
        let exists = |path: &String| TreeError::Exists {
            hunk,
            path: path.clone(),
        };
        let missing = |path: &String| TreeError::Missing {
            hunk,
            path: path.clone(),
        };
        match h {
            Hunk::Add { path, content } => {
                if !overwrite && tree.contains_key(path) {
                    return Err(exists(path));
                }
                tree.insert(path.clone(), content.clone());
                changes.push(Change::Added(path.clone()));
            }
            Hunk::Delete { path } => {
                tree.remove(path).ok_or_else(|| missing(path))?;
                changes.push(Change::Deleted(path.clone()));
            }
            Hunk::Update {
                path,
                move_to,
                chunks,
            } => {
                let text = tree.get(path).ok_or_else(|| missing(path))?;
                let to = move_to.as_ref().filter(|t| *t != path);
                if let Some(to) = to.filter(|to| !overwrite && tree.contains_key(*to)) {
                    return Err(exists(to));
                }
                let (new, placed) =
                    locate::apply(text, chunks, strict).map_err(|refusal| TreeError::Chunk {
                        hunk,
                        path: path.clone(),
                        refusal,
                    })?;
                if to.is_some() {
                    tree.remove(path);
                }
                tree.insert(to.unwrap_or(path).clone(), new);
                changes.push(Change::Updated {
                    path: path.clone(),
                    to: to.cloned(),
                    placed,
                });
            }
        }
    }
    *files = tree;
    Ok(changes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(v: &[(&str, &str)]) -> BTreeMap<String, String> {
        v.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn run(
        files: &[(&str, &str)],
        patch: &str,
        overwrite: bool,
    ) -> (BTreeMap<String, String>, Result<Vec<Change>, TreeError>) {
        let mut t = tree(files);
        let r = apply_tree(&mut t, &parse(patch).unwrap(), false, overwrite);
        (t, r)
    }

    #[test]
    fn add_delete_update_and_move_in_order() {
        let (t, r) = run(
            &[("a", "1\n2\n"), ("b", "x\n")],
            "*** Begin Patch\n*** Add File: n\n+hi\n*** Delete File: b\n*** Update File: a\n*** Move to: d/a\n@@\n-2\n+two\n*** End Patch",
            false,
        );
        assert_eq!(t, tree(&[("d/a", "1\ntwo\n"), ("n", "hi\n")]));
        assert_eq!(
            r.unwrap(),
            vec![
                Change::Added("n".into()),
                Change::Deleted("b".into()),
                Change::Updated {
                    path: "a".into(),
                    to: Some("d/a".into()),
                    placed: vec![Placed {
                        grade: Grade::Exact,
                        line: 2
                    }]
                }
            ]
        );
    }

    #[test]
    fn hunks_chain_on_one_file() {
        let (t, r) = run(
            &[("a", "1\n")],
            "*** Begin Patch\n*** Update File: a\n-1\n+2\n*** Update File: a\n-2\n+3\n*** Delete File: a\n*** Add File: a\n+4\n*** End Patch",
            false,
        );
        assert!(r.is_ok());
        assert_eq!(t, tree(&[("a", "4\n")]));
    }

    #[test]
    fn refusals_change_nothing() {
        let before = [("a", "1\n"), ("b", "2\n")];
        let cases = [
            (
                "*** Add File: a\n+x",
                TreeError::Exists {
                    hunk: 1,
                    path: "a".into(),
                },
            ),
            (
                "*** Update File: b\n*** Move to: a\n-2",
                TreeError::Exists {
                    hunk: 1,
                    path: "a".into(),
                },
            ),
            (
                "*** Delete File: zz",
                TreeError::Missing {
                    hunk: 1,
                    path: "zz".into(),
                },
            ),
            (
                "*** Update File: zz\n-1",
                TreeError::Missing {
                    hunk: 1,
                    path: "zz".into(),
                },
            ),
            (
                "*** Update File: b\n-9",
                TreeError::Chunk {
                    hunk: 1,
                    path: "b".into(),
                    refusal: Refusal {
                        chunk: 0,
                        miss: Miss::NotFound { old: "9".into() },
                    },
                },
            ),
        ];
        for (second, want) in cases {
            let patch =
                format!("*** Begin Patch\n*** Update File: b\n-2\n+3\n{second}\n*** End Patch");
            let (t, r) = run(&before, &patch, false);
            assert_eq!(r.unwrap_err(), want, "{second}");
            assert_eq!(t, tree(&before), "{second}");
        }
    }

    #[test]
    fn overwrite_lets_add_and_move_replace() {
        let (t, r) = run(
            &[("a", "1\n"), ("b", "2\n"), ("c", "3\n")],
            "*** Begin Patch\n*** Add File: a\n+new\n*** Update File: b\n*** Move to: c\n-2\n+two\n*** End Patch",
            true,
        );
        assert!(r.is_ok());
        assert_eq!(t, tree(&[("a", "new\n"), ("c", "two\n")]));
        // Moving onto itself is an update.
        let (t, _) = run(
            &[("a", "1\n")],
            "*** Begin Patch\n*** Update File: a\n*** Move to: a\n-1\n+2\n*** End Patch",
            false,
        );
        assert_eq!(t, tree(&[("a", "2\n")]));
    }
}
