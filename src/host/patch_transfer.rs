//! The transfer path of a V4A patch (or an `apply_patch_call`'s
//! operations): the same pure parser and locator as the helper
//! ([`crate::patch`]). Every file a hunk names is downloaded, the whole
//! patch runs over the texts in memory ([`crate::patch::apply_tree`], all
//! or nothing), and only then are the changed files written back
//! ([`write_back`](super::write_back), not atomic across files).

use std::collections::BTreeMap;

use super::txn::{Applied, FileChange, PatchOp, PatchOpKind};
use super::txn_transfer::{refuse, Files};
use super::write_back;
use super::{EditError, Sandbox, Token, Via};
use crate::engine::{self, Edit};
use crate::patch::{self, Hunk, Miss, Patch, TreeError};
use crate::protocol::{refusal_failure, ErrorKind, Failure};

/// `invalid_patch`: the text does not parse (a model wrote it).
fn invalid_patch(detail: String) -> EditError {
    EditError::Failed {
        kind: Token::Unknown("invalid_patch".into()),
        detail: Some(detail),
        count: None,
        via: Via::Transfer,
        hints: None,
        indent: None,
        at: None,
    }
}

/// Parses a patch for the transfer path.
pub(crate) fn parse_patch(text: &str) -> Result<Patch, EditError> {
    patch::parse(text)
        .map_err(|e| invalid_patch(format!("line {}: expected {}", e.line, e.expected)))
}

/// An `apply_patch_call`'s operations as one patch.
pub(crate) fn operations_patch(ops: &[PatchOp]) -> Result<Patch, EditError> {
    let mut hunks = Vec::with_capacity(ops.len());
    for (i, op) in ops.iter().enumerate() {
        let diff = op.diff.as_deref().unwrap_or("");
        let bad = |e: patch::ParseError| {
            invalid_patch(format!(
                "operation {} ({}): diff line {}: expected {}",
                i + 1,
                op.path,
                e.line,
                e.expected
            ))
        };
        let path = op.path.clone();
        hunks.push(match op.kind {
            PatchOpKind::CreateFile => Hunk::Add {
                path,
                content: patch::parse_create_diff(diff).map_err(bad)?,
            },
            PatchOpKind::UpdateFile => Hunk::Update {
                path,
                move_to: op.move_to.clone(),
                chunks: patch::parse_update_diff(diff).map_err(bad)?,
            },
            PatchOpKind::DeleteFile => Hunk::Delete { path },
        });
    }
    Ok(Patch { hunks })
}

fn hunk_path(h: &Hunk) -> &str {
    match h {
        Hunk::Add { path, .. } | Hunk::Delete { path } | Hunk::Update { path, .. } => path,
    }
}

/// Runs `patch` on the transfer path (see the module doc).
pub(crate) fn transfer_patch<S: Sandbox + ?Sized>(
    sb: &mut S,
    p: &Patch,
) -> Result<Applied, EditError> {
    let n = p.hunks.len();
    let mut named: Vec<(&str, u64)> = Vec::new();
    for (k, h) in p.hunks.iter().enumerate() {
        named.push((hunk_path(h), k as u64 + 1));
        if let Hunk::Update {
            move_to: Some(to), ..
        } = h
        {
            named.push((to, k as u64 + 1));
        }
    }
    let mut sorted: Vec<&str> = named.iter().map(|(p, _)| *p).collect();
    sorted.sort_unstable();
    sorted.dedup();
    let _held: Vec<_> = sorted
        .iter()
        .map(|p| super::transfer::lock(std::path::Path::new(p)))
        .collect();
    let mut files = Files::new(sb, n);
    let mut before = BTreeMap::new();
    for &(path, file) in &named {
        let i = files.get(path, file)?;
        let Some(bytes) = files.current(i) else {
            continue;
        };
        let text = match engine::replace(bytes, &[]) {
            Ok((out, _)) => String::from_utf8(out).expect("the engine checked UTF-8"),
            Err(engine::Refusal::Empty) => String::new(),
            Err(r) => return Err(files.refuse(refusal_failure(r, 1, path), file, path)),
        };
        before.insert(path.to_owned(), text);
    }
    let mut tree = before.clone();
    let applied =
        patch::apply_tree(&mut tree, p, false, false).map_err(|e| tree_refusal(e, &before, n))?;
    // Each path's last hunk, for a write-back failure's `file`.
    let last = |path: &str| {
        named
            .iter()
            .filter(|(p, _)| *p == path)
            .map(|(_, f)| *f)
            .max()
            .unwrap_or(1)
    };
    let mut count = 0;
    let changes = applied
        .iter()
        .map(|c| {
            let (op, path, to, placed) = match c {
                patch::Change::Added(p) => ("create", p, None, &[][..]),
                patch::Change::Deleted(p) => ("delete", p, None, &[][..]),
                patch::Change::Updated { path, to, placed } => (
                    if to.is_some() { "move" } else { "edit" },
                    path,
                    to.clone(),
                    &placed[..],
                ),
            };
            count += placed.len() as u64;
            let now = tree.get(to.as_ref().unwrap_or(path));
            FileChange {
                path: path.clone(),
                op: op.into(),
                to,
                count: placed.len() as u64,
                size: now.filter(|_| op != "delete").map(|t| t.len() as u64),
                sha256: now
                    .filter(|_| op != "delete")
                    .map(|t| crate::hex::encode(&<sha2::Sha256 as sha2::Digest>::digest(t))),
                lines: placed.iter().map(|pl| pl.line as u64).collect(),
                grade: placed
                    .iter()
                    .map(|pl| pl.grade)
                    .max()
                    .map(|g| g.name().into()),
            }
        })
        .collect();
    let mut writes = Vec::new();
    for (path, original) in files.originals() {
        let new = tree.get(&path).map(|t| t.as_bytes().to_vec());
        // An updated file is written even when its text is unchanged but
        // its bytes were CRLF: the helper writes it LF too.
        let touched = applied.iter().any(|c| match c {
            patch::Change::Updated { path: p, .. } => *p == path,
            _ => false,
        });
        if new != original && (touched || before.get(&path) != tree.get(&path)) {
            writes.push(write_back::Write {
                file: last(&path),
                path,
                original,
                new,
            });
        }
    }
    write_back::write_all(sb, &writes, n)?;
    // A move's two paths are one file.
    let written = |p: &str| writes.iter().any(|w| w.path == p);
    let moves = applied
        .iter()
        .filter(|c| match c {
            patch::Change::Updated {
                path, to: Some(to), ..
            } => written(path) && written(to),
            _ => false,
        })
        .count();
    Ok(Applied {
        count,
        files: (writes.len() - moves) as u64,
        changes,
        via: Via::Transfer,
    })
}

/// A refused patch, worded as the helper words it.
fn tree_refusal(e: TreeError, before: &BTreeMap<String, String>, n: usize) -> EditError {
    let (hunk, path, f, chunk) = match e {
        TreeError::Exists { hunk, path } => {
            let d = format!(
                "{path} exists; to replace it use Update File, or Delete File then Add File"
            );
            (hunk, path, Failure::new(ErrorKind::FileExists, d), None)
        }
        TreeError::Missing { hunk, path } => {
            let d = format!("{path} does not exist");
            (hunk, path, Failure::new(ErrorKind::FileNotFound, d), None)
        }
        TreeError::Chunk {
            hunk,
            path,
            refusal,
        } => {
            let c = refusal.chunk as u64 + 1;
            let f = match refusal.miss {
                Miss::Multiple { lines, grade } => {
                    let lines: Vec<u64> = lines.iter().map(|&l| l as u64).collect();
                    let mut f = Failure::new(
                        ErrorKind::MultipleOccurrences,
                        format!(
                            "chunk {c}: the context occurs {} times ({} match); add an @@ line naming the enclosing function, or more context",
                            lines.len(),
                            grade.name()
                        ),
                    );
                    f.count = Some(lines.len() as u64);
                    f.hints = Some(crate::hints::multiple_keys(
                        lines.clone(),
                        lines.len() as u64,
                    ));
                    f
                }
                Miss::NotFound { old } => {
                    let mut f = Failure::new(
                        ErrorKind::StringNotFound,
                        format!("chunk {c}: the context and removed lines were not found"),
                    );
                    let text = before.get(&path).map(String::as_str).unwrap_or("");
                    f.hints = Edit::new(&old, "", false).ok().and_then(|edit| {
                        crate::hints::hint_keys_for_bytes(
                            text.as_bytes(),
                            &edit,
                            &engine::Refusal::NotFound { edit: 0 },
                        )
                    });
                    f
                }
                Miss::HeaderNotFound { header } => Failure::new(
                    ErrorKind::StringNotFound,
                    format!("chunk {c}: the @@ line {header:?} was not found"),
                ),
            };
            (hunk, path, f, Some(c))
        }
    };
    let mut e = refuse(f, hunk as u64 + 1, n, &path);
    if let EditError::Failed { at: Some(at), .. } = &mut e {
        at.chunk = chunk;
    }
    e
}
