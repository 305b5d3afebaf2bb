//! A parsed V4A patch (the text crate's [`as_edit_text::patch`]) as a
//! transaction (a [`Txn`]): Add File → create,
//! Delete File → delete, Update File → an edit by a [`Transform`] (the
//! chunk locator), with Move to → a move carrying it. Pure: the transform
//! is a function of the old text, so the host fallback can run it too.
//! Its one-pass form (`stream.rs`, every grade) is what the binary tries
//! first: when it proves its answer the file is never held; otherwise its
//! form in passes over the file (`passes.rs`) gives this locator's answer
//! in memory bounded by the patch (`--hints`: 10 MiB of text).
//!
//! Refusals: a chunk not found is `string_not_found` (with `--hints`, the
//! hint finder's candidates for its old lines, or for the `@@` line that
//! was not found); several places at the first grade that matched is
//! `multiple_occurrences` with `count` and `lines` always (they are what a
//! model needs to fix it); both carry `"chunk"` (1-based).

use std::path::PathBuf;

use crate::protocol::{ErrorKind, Failure, HintKeys};
use crate::request::EditOptions;
use as_edit_text::patch::locate::{self, Miss, Placed};
use as_edit_text::patch::{passes, stream, Chunk, Hunk, Patch};

/// The candidate lines a refusal's detail names (`lines` holds up to
/// [`as_edit_text::hints::OCCURRENCE_LINES_MAX`]).
const DETAIL_LINES: usize = 10;
use crate::txn::{Change, Op, OpKind, OpRefusal, Transform, TransformFn, Transformed, Txn};

/// The transaction of `patch`. `strict`: exact matches only
/// (`--patch-strict`); `overwrite`: Add File and Move to replace existing
/// files (the `apply_patch` mode, as Codex does).
#[cfg_attr(as_edit_small, optimize(size))]
pub fn compile(patch: Patch, options: EditOptions, strict: bool, overwrite: bool) -> Txn {
    let hints = options.hints;
    let ops = patch
        .hunks
        .into_iter()
        .map(|h| match h {
            Hunk::Add { path, content } => Op {
                path: path.into(),
                kind: OpKind::Create {
                    content,
                    overwrite,
                    mode: None,
                },
            },
            Hunk::Delete { path } => Op {
                path: path.into(),
                kind: OpKind::Delete {
                    expect_sha256: None,
                    recursive: false,
                },
            },
            Hunk::Update {
                path,
                move_to,
                chunks,
            } => {
                let change = transform(chunks, strict, hints);
                let kind = match move_to {
                    Some(to) if to != path => OpKind::Move {
                        to: PathBuf::from(to),
                        overwrite,
                        change: Some(change),
                        expect_sha256: None,
                    },
                    _ => OpKind::Edit {
                        change,
                        expect_sha256: None,
                    },
                };
                Op {
                    path: path.into(),
                    kind,
                }
            }
        })
        .collect();
    Txn {
        ops,
        options,
        new_modes: crate::txn::NewModes::REQUEST,
        patch: true,
    }
}

fn transform(chunks: Vec<Chunk>, strict: bool, hints: bool) -> Change {
    let apply = Box::new(Chunks {
        chunks,
        strict,
        hints,
    });
    Change::Transform(Transform { apply })
}

/// An Update's chunks as a transform.
struct Chunks {
    chunks: Vec<Chunk>,
    strict: bool,
    hints: bool,
}

impl TransformFn for Chunks {
    fn apply(&self, old: &str, out: &mut dyn FnMut(&str)) -> Result<Transformed, OpRefusal> {
        apply(old, &self.chunks, self.strict, self.hints, out)
    }

    fn passes(
        &self,
        source: &mut crate::txn::Source<'_>,
        out: &mut dyn FnMut(&[u8]),
        diff: Option<&mut as_edit_text::diff::Builder>,
    ) -> Option<Result<Transformed, OpRefusal>> {
        Some(passed(self, source, out, diff))
    }

    fn stream(
        &self,
        source: &mut crate::txn::Source<'_>,
        out: &mut dyn FnMut(&[u8]),
    ) -> Option<Transformed> {
        streamed(&self.chunks, self.strict, source, out)
    }
}

/// The one pass's answer as the transform's.
#[inline(never)]
#[cfg_attr(as_edit_small, optimize(size))]
fn streamed(
    chunks: &[Chunk],
    strict: bool,
    source: &mut crate::txn::Source<'_>,
    out: &mut dyn FnMut(&[u8]),
) -> Option<Transformed> {
    let placed = stream::run(chunks, strict, source, out)?;
    Some(Transformed {
        count: chunks.len() as u64,
        notes: (placed.iter())
            .map(|p| ("match", p.1.name().into()))
            .collect(),
        lines: placed.into_iter().map(|p| p.0).collect(),
    })
}

/// The passes' answer as the transform's: a source that fails is `Err`
/// with no failure (the caller has it), a refusal's hints see at most
/// [`as_edit_text::hints::TEXT_MAX`] bytes of the text (`hints_truncated`).
#[inline(never)]
#[cfg_attr(as_edit_small, optimize(size))]
fn passed(
    c: &Chunks,
    source: &mut crate::txn::Source<'_>,
    out: &mut dyn FnMut(&[u8]),
    diff: Option<&mut as_edit_text::diff::Builder>,
) -> Result<Transformed, OpRefusal> {
    use passes::Failed;
    match passes::resolve(&c.chunks, c.strict, source, out, diff) {
        Ok(r) => Ok(Transformed {
            count: c.chunks.len() as u64,
            lines: r.starts.into_iter().map(|l| l as u64).collect(),
            notes: (r.placed.iter())
                .map(|p| ("match", p.grade.name().to_owned()))
                .collect(),
        }),
        Err(Failed::Refused(r, count)) => {
            let mut seen = || {
                let mut text = Vec::new();
                let mut over = false;
                let fed = source(&mut |b| {
                    let take = b.len().min(as_edit_text::hints::TEXT_MAX - text.len());
                    text.extend_from_slice(&b[..take]);
                    over |= take < b.len();
                });
                if over {
                    let end = memchr::memrchr(b'\n', &text).map_or(0, |i| i + 1);
                    text.truncate(end);
                }
                let text = String::from_utf8(text).unwrap_or_default();
                (std::borrow::Cow::Owned(text), fed && !over)
            };
            Err(refusal(&mut seen, &c.chunks, r, count, c.hints))
        }
        Err(Failed::Source) => Err(OpRefusal {
            failure: Failure::new(ErrorKind::ReadFailed, String::new()),
            chunk: None,
        }),
    }
}

#[inline(never)] // not into the closure, which is compiled for speed
#[cfg_attr(as_edit_small, optimize(size))]
fn apply(
    old: &str,
    chunks: &[Chunk],
    strict: bool,
    hints: bool,
    out: &mut dyn FnMut(&str),
) -> Result<Transformed, OpRefusal> {
    let lines = locate::lines(old);
    let plan = locate::locate(&lines, chunks, strict).map_err(|r| {
        let count = match &r.miss {
            Miss::Multiple { lines, .. } => lines.len(),
            _ => 0,
        };
        refusal(&mut || (old.into(), true), chunks, r, count, hints)
    })?;
    let starts = locate::write(&lines, chunks, &plan, out);
    Ok(Transformed {
        count: chunks.len() as u64,
        lines: starts.into_iter().map(|l| l as u64).collect(),
        notes: plan
            .placed
            .iter()
            .map(|p: &Placed| ("match", p.grade.name().to_owned()))
            .collect(),
    })
}

#[cfg_attr(as_edit_small, optimize(size))]
fn refusal<'t>(
    seen: &mut dyn FnMut() -> (std::borrow::Cow<'t, str>, bool),
    chunks: &[Chunk],
    r: locate::Refusal,
    count: usize,
    hints: bool,
) -> OpRefusal {
    let c = &chunks[r.chunk];
    let at = format!("chunk {} (patch line {})", r.chunk + 1, c.line);
    let after = if r.chunk > 0 {
        " after the previous chunk"
    } else {
        ""
    };
    let mut finder = |old: &str, new: &str| {
        let (text, whole) = seen();
        let found = as_edit_text::hints::find(&text, old, new, whole);
        HintKeys {
            hints: Some(found.hints),
            hints_truncated: found.truncated.then_some(true),
            ..HintKeys::default()
        }
    };
    let failure = match r.miss {
        Miss::NotFound { old } => Failure {
            hints: (hints && !old.is_empty()).then(|| finder(&old, &c.new.join("\n"))),
            ..Failure::new(
                ErrorKind::StringNotFound,
                format!("{at}: its context and '-' lines are not in the file{after}"),
            )
        },
        Miss::HeaderNotFound { header } => Failure {
            hints: hints.then(|| finder(&header, &header)),
            ..Failure::new(
                ErrorKind::StringNotFound,
                format!("{at}: the line '@@ {header}' names is not in the file{after}"),
            )
        },
        Miss::Multiple { lines, grade } => {
            // Bounded as a single edit's are: a chunk of a repeated line
            // once listed every one of 199,000 lines, twice (2.7 MB).
            let mut list: Vec<String> = lines
                .iter()
                .take(DETAIL_LINES)
                .map(|l| l.to_string())
                .collect();
            if count > DETAIL_LINES {
                list.push(format!("… ({count} in all)"));
            }
            let how = match grade {
                locate::Grade::Exact => String::new(),
                g => format!(" (matching {})", g.name().replace('_', " ")),
            };
            Failure {
                count: Some(count as u64),
                hints: Some(as_edit_text::hints::multiple_keys(
                    lines.iter().take(as_edit_text::hints::OCCURRENCE_LINES_MAX).map(|&l| l as u64).collect(),
                    count as u64,
                )),
                ..Failure::new(
                    ErrorKind::MultipleOccurrences,
                    format!(
                        "{at}: its context occurs at lines {}{how}; add an @@ line naming the enclosing function or class, or more context",
                        list.join(", ")
                    ),
                )
            }
        }
    };
    OpRefusal {
        failure,
        chunk: Some(r.chunk as u64 + 1),
    }
}
