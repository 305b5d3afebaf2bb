//! V4A patches (`*** Begin Patch` … `*** End Patch`), pure: no I/O.
//!
//! [`parse()`] turns the text into a [`Patch`] (the grammar and its leniencies
//! are in `parse.rs`'s docs); [`locate`] places an Update's chunks in a
//! file's text and writes the new content (grades, uniqueness and where pure
//! additions go are in its docs); [`stream`] gives the same answer in one
//! pass over the file, at every grade, holding only the patch, when no
//! later line overrules a match (its docs), and [`passes`] in passes over
//! the file otherwise, still bounded by the patch. [`compile()`] makes a patch the
//! transaction of `txn` (the binary's path, [`cli`] its inputs, [`codex`]
//! the `apply_patch` mode); [`apply_tree`] runs a whole patch over an
//! in-memory tree, all or nothing, with the same locator (the host's
//! transfer fallback and the differential tests use it).
//!
//! # Where the references differ, and what as-edit does
//!
//! The references are Codex's `apply_patch` (`@openai/codex` on npm) and
//! the Agents SDK's `apply_diff` (`openai-agents` on PyPI);
//! `scripts/patch-diff.sh` runs all three on generated patches and counts
//! each difference below. Each Codex cell was checked against the binary
//! of `@openai/codex` 0.171.0 (its source on GitHub may be newer or older).
//!
//! | case | Codex | Agents SDK | as-edit |
//! | --- | --- | --- | --- |
//! | a chunk matching in several places | the first | the first | `multiple_occurrences` with the lines |
//! | a failure after earlier hunks | earlier hunks stay written | per file | nothing written |
//! | several `@@` lines before a chunk | parse error | each narrows | each narrows (SDK) |
//! | pure addition after `@@ header` | end of file | after the header | after the header (SDK: what the model means) |
//! | pure addition without header | end of file | where the search stands (a first chunk: the start) | end of file (Codex) |
//! | final newline of an updated file | always added | as the input had it | always added (Codex) |
//! | final newline of an added file | added | left off | added (Codex) |
//! | a file ending in an empty line | kept | kept | kept (the patch did not touch it) |
//! | Unicode punctuation grade | yes | no | yes (Codex) |
//! | a loosely matched context line | the file's text | the file's text | the file's text |
//! | `*** End of File` not at the end | not found | found elsewhere | not found (Codex) |
//! | Add File / Move to onto a file | overwrite | n/a | `file_exists` (`apply_patch` mode: overwrite) |
//! | Add File / Move to onto a dangling symlink | its target written through it (the link stays) | n/a | `file_exists` (`apply_patch` mode: as Codex, where the target's directory exists) |
//! | Delete File of a symlink to a directory | fails (checked against `@openai/codex`'s binary) | n/a | removes the link (a delete removes a symlink itself) |
//! | an empty line where the first chunk starts | context | context | context |
//! | an empty line where a later chunk starts (after `*** End of File`) | skipped | refused (`Invalid Line`) | skipped (Codex) |
//! | empty lines ending a chunk | context, retried without one | context | separators (kept before `*** End of File`, when they are all its old lines, or in a chunk of context alone); a chunk that lost them is not retried |
//! | a chunk of empty lines alone (or of context alone) | its first match, moving the search (none: a no-op there) | the same | the same (Codex) |
//! | a chunk's old lines are only a final empty line not found (`+X`, an empty line) | `+X` where the search stands, `*** End of File` or not | at the end (refused with `*** End of File`) | where the search stands (Codex) |
//! | a pure addition at the end, then a chunk adding lines after a last context line that ends the file | the addition first (it places lines between context lines) | the addition where the search stood | the addition first (Codex) |
//! | `Update File` + `Move to` of a symlink | the link removed, its target kept | n/a | refused (`file_not_found`, naming the link and its target; nothing written): a transaction's `move` follows a final symlink and would move the target, a file the patch did not name |
//! | `Update File` of two hard links of one file, one after the other | both names hold the result (written in place) | n/a | refused, naming both paths, nothing written: by rename one name would keep the old text |
//! | `Update File: a` + `Move to: h`, `h` a hard link of `a` | `a` removed, `h` the new content | n/a | `file_exists` (`apply_patch` mode: refused naming both, nothing written): a rename onto another name of the file leaves both |
//! | `Update File: a` + `Move to: l`, `l` a symlink to `a` | the new text written through `l`, then `a` removed (`l` dangles) | n/a | `file_exists` (`apply_patch` mode: refused naming both, nothing written): the destination is the file itself |
//! | a chunk that lost separator empty lines, then a chunk placed where the search stands | after those empty lines | n/a | before them: open |
//! | an `@@` header line's match | first, 4 grades, its trailing blanks dropped | first, exact then trimmed | first, 4 grades, its trailing blanks dropped (Codex) |
//! | a CRLF file | kept CRLF | n/a | LF, the edit contract (`--eol preserve`; `apply_patch` mode: `--preserve-crlf`) |
//! | the mode after `Move to` | a new file's: 0666 less the umask | n/a | the file's own (it is renamed) |
//! | `Move to:` the file's own path | the file is deleted (checked against `@openai/codex`'s binary) | n/a | an update in place |
//!
//! The SDK's `apply_diff` takes one file's diff; the patch-level rows
//! (hunks, Add/Move) are Codex's alone. The patch forms share the
//! transaction's rules but for four (`Txn::patch`): where
//! Codex writes in place and as-edit by rename the answers would differ
//! silently (a symlink's target moved, a hard link keeping the old text),
//! so those patches are refused before anything is written.

mod chunk;
pub mod cli;
pub mod codex;
mod compile;
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

pub use compile::compile;
pub use locate::{Grade, Miss, Placed, Refusal};
pub use parse::{parse, parse_create_diff, parse_update_diff, Chunk, Hunk, ParseError, Patch};

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
