//! V4A patches for the binary: [`compile()`] makes a patch the
//! transaction of `txn` (the binary's path), [`cli`] reads its inputs
//! (`--patch`, `--patch-b64`, `{"patch"}`, `{"operations"}`) and [`codex`]
//! runs the `apply_patch` mode. The grammar and the locator are pure and
//! live in the text crate (`as_edit_text::patch`, no I/O possible):
//! [`parse()`] turns the text into a [`Patch`], [`locate`] places an
//! Update's chunks in a file's text, [`stream`] and [`passes`] give its
//! answer over a file read through a [`Source`], [`apply_tree`] runs a
//! whole patch over an in-memory tree; they are re-exported here under
//! the paths they always had.
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

pub mod cli;
pub mod codex;

pub use as_edit_text::patch::{
    apply_tree, locate, parse, parse_create_diff, parse_update_diff, passes, stream, Change, Chunk,
    Grade, Hunk, Miss, ParseError, Patch, Placed, Refusal, Source, TreeError,
};
/// A parsed patch as a transaction (the wire crate's: the host library
/// compiles patches with it too).
pub use as_edit_wire::patch::compile;
