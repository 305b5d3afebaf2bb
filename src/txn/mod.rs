#![doc = include_str!("txn.md")]

mod commit;
mod count;
mod flush;
mod insert;
mod lock;
mod nofile;
mod plan;
mod prepare;
mod read;
mod undo;
mod writer;

pub(crate) use nofile::failure;
pub use undo::undo_on_exit;

pub use as_edit_wire::txn::insert::insert;

use serde::Serialize;

// The request's types are the wire's (crates/wire), under their old path.
pub use as_edit_wire::txn::op;
pub use as_edit_wire::txn::{detail_of, is_op, parse, parse_op, parse_request, Parsed};
pub use op::{
    Change, NewModes, Op, OpKind, OpRefusal, Source, Transform, TransformFn, Transformed, Txn,
    MAX_OPS,
};

use crate::fs::FsError;
use crate::protocol::{display_path, Failure, Report};

/// Why a transaction changed nothing (or, with `partial`, not everything
/// back): the failing op and its refusal.
#[derive(Debug)]
pub struct TxnError {
    /// The op, 0-based (`"file"` is 1-based).
    pub op: usize,
    /// Its token, count, detail and hints.
    pub failure: Box<Failure>,
    /// A patch chunk, 1-based.
    pub chunk: Option<u64>,
    /// Failed in the commit phase and was undone.
    pub rolled_back: bool,
    /// An undo failed: every file and whether it is new (`true`) or old.
    pub partial: Option<Vec<(std::path::PathBuf, bool)>>,
}

impl TxnError {
    #[cfg_attr(as_edit_small, optimize(size))]
    pub(crate) fn fail(op: usize, failure: Failure) -> TxnError {
        TxnError {
            op,
            failure: Box::new(failure),
            chunk: None,
            rolled_back: false,
            partial: None,
        }
    }
    #[cfg_attr(as_edit_small, optimize(size))]
    pub(crate) fn of(op: usize, e: FsError) -> TxnError {
        TxnError::fail(op, failure(e))
    }
    pub(crate) fn at(mut self, op: usize) -> TxnError {
        self.op = op;
        self
    }
}

/// What a transaction did: the result line and the exit code.
#[cold] // off the single-file path: LLVM optimizes it for size
#[cfg_attr(as_edit_small, optimize(size))]
pub fn run(txn: &Txn) -> (String, i32) {
    crate::fs::meta::forget_euid();
    nofile::raise();
    let mut reports: Vec<Option<Report>> = txn
        .ops
        .iter()
        .map(|_| txn.options.report.then(Report::default))
        .collect();
    let mut counts = vec![0u64; txn.ops.len()];
    match run_inner(txn, &mut reports, &mut counts) {
        Ok((files, durable, plan_paths, left)) => {
            let count = counts.iter().sum();
            let changes = txn
                .options
                .report
                .then(|| changes(txn, reports, &counts, plan_paths));
            let line = Success {
                count,
                files,
                changes,
                dry_run: (txn.options.dry_run && txn.options.report).then_some(true),
                durable: (!durable).then_some(false),
                left: names(&left, false),
                left_b64: names(&left, true),
            };
            (
                crate::protocol::render_json(&line),
                crate::protocol::EXIT_EDITED,
            )
        }
        Err(e) => {
            let n = txn.ops.len();
            let path = txn
                .ops
                .get(e.op)
                .map(|o| display_path(&o.path))
                .unwrap_or_default();
            let f = &e.failure;
            let detail = detail_of(f);
            let line = Refused {
                error: f.kind.token(),
                count: f.count,
                detail: format!("file {} of {n} ({path}): {detail}", e.op + 1),
                hints: f.hints.as_ref().and_then(|h| h.hints.as_ref()),
                hints_truncated: f.hints.as_ref().and_then(|h| h.hints_truncated),
                lines: f.hints.as_ref().and_then(|h| h.lines.as_ref()),
                lines_truncated: f.hints.as_ref().and_then(|h| h.lines_truncated),
                file: e.op + 1,
                chunk: e.chunk,
                rolled_back: e.rolled_back.then_some(true),
                partial: e.partial.as_ref().map(|p| {
                    p.iter()
                        .map(|(path, new)| {
                            let (path, path_b64) = spell(path);
                            Partial {
                                path,
                                path_b64,
                                state: if *new { "new" } else { "old" },
                            }
                        })
                        .collect()
                }),
            };
            (crate::protocol::render_json(&line), f.kind.exit_code())
        }
    }
}

type Paths = Vec<(std::path::PathBuf, Option<std::path::PathBuf>)>;

#[cold] // off the single-file path: LLVM optimizes it for size
#[cfg_attr(as_edit_small, optimize(size))]
fn run_inner(
    txn: &Txn,
    reports: &mut [Option<Report>],
    counts: &mut [u64],
) -> Result<(usize, bool, Paths, Vec<std::path::PathBuf>), TxnError> {
    let plan = plan::plan(txn)?;
    let mut locked = lock::lock_all(txn, &plan)?;
    let tight = nofile::tight(&plan);
    let mut temps = Vec::with_capacity(plan.files.len());
    for (f, file) in plan.files.iter().enumerate() {
        let t = prepare::stage(txn, &plan, f, file, locked[f].as_ref(), reports, counts)?;
        if let (Some(t), false) = (&t, txn.options.fsync || txn.options.dry_run) {
            crate::fs::temp::start_writeback(t.file());
        }
        // Staged: the temp is its descriptor, the original relocked later (`nofile`).
        if let (Some(l), Some(_), true) = (locked[f].as_mut(), &t, tight) {
            l.fd = None;
        }
        temps.push(t);
    }
    // Every temp written back before the commit window (`fs::temp::settle`:
    // a power cut on XFS could find a target empty), started as each was
    // staged so the writes overlap; an error refuses before any commit.
    for (f, file) in plan.files.iter().enumerate() {
        if let (Some(t), false) = (&temps[f], txn.options.fsync || txn.options.dry_run) {
            crate::fs::temp::settle(t.file(), false).map_err(|errno| {
                let path = prepare::temp_dir(file).path.clone();
                let step = crate::fs::WriteStep::Flush;
                TxnError::of(
                    lock::first_op(&plan, f),
                    FsError::Write { path, step, errno },
                )
            })?;
        }
    }
    let changed = plan.changed_paths(|f| temps[f].is_some());
    let (durable, left) = match txn.options.dry_run {
        true => (true, Vec::new()),
        false => {
            let done = (counts.iter().sum(), changed);
            commit::commit(txn, &plan, &locked, &mut temps, done)?
        }
    };
    drop(temps);
    // Originals are freed at their last close, which can wait for the device.
    crate::fs::release::close_all(locked.into_iter().flatten().filter_map(|l| l.fd).collect());
    Ok((changed, durable, plan.resolved, left))
}

#[cfg_attr(as_edit_small, optimize(size))]
fn changes(
    txn: &Txn,
    reports: Vec<Option<Report>>,
    counts: &[u64],
    paths: Paths,
) -> Vec<ChangeEntry> {
    let mut budget = crate::diff::CAP;
    txn.ops
        .iter()
        .zip(reports)
        .zip(counts)
        .zip(paths)
        .map(|(((op, r), count), (from, to))| {
            let mut r = r.unwrap_or_default();
            if let Some(d) = &r.diff {
                if d.len() > budget {
                    r.diff = None;
                    r.diff_truncated = Some(true);
                } else {
                    budget -= d.len();
                }
            }
            let ((path, path_b64), (to, to_b64)) = (spell(&from), spell_opt(to.as_deref()));
            ChangeEntry {
                path,
                path_b64,
                op: match op.kind {
                    OpKind::Edit { .. } => "edit",
                    OpKind::Insert { .. } => "insert",
                    OpKind::Create { .. } => "create",
                    OpKind::Delete { .. } => "delete",
                    OpKind::Move { .. } => "move",
                    OpKind::Mkdir { .. } => "mkdir",
                },
                to,
                to_b64,
                count: *count,
                size: r.size,
                sha256: r.sha256,
                lines: r.lines,
                lines_truncated: r.lines_truncated,
                grades: r.grades,
                edits: r.edits,
                diff: r.diff,
                diff_truncated: r.diff_truncated,
            }
        })
        .collect()
}

/// A name as `changes` spells it: `path` when UTF-8, else `path_b64`
/// (the bytes' base64), so a report never names another file.
fn spell(p: &std::path::Path) -> (Option<String>, Option<String>) {
    use std::os::unix::ffi::OsStrExt;
    match p.to_str() {
        Some(s) => (Some(s.to_owned()), None),
        None => (
            None,
            Some(crate::args::b64::encode(p.as_os_str().as_bytes())),
        ),
    }
}

fn spell_opt(p: Option<&std::path::Path>) -> (Option<String>, Option<String>) {
    p.map_or((None, None), spell)
}

/// File `f`'s path for `partial`: where it was, else where it was to be.
fn file_path(plan: &plan::Plan, f: usize) -> std::path::PathBuf {
    let file = &plan.files[f];
    match (&file.orig, &file.end) {
        (Some(o), _) => o.0.path.clone(),
        (None, plan::End::At(d)) => d.t.path.clone(),
        _ => std::path::PathBuf::new(),
    }
}

/// `left`'s names spelled as text (`b64: false`) or, those that are not
/// UTF-8, as base64 (`left_b64`); `None` when there are none.
fn names(left: &[std::path::PathBuf], b64: bool) -> Option<Vec<String>> {
    let v: Vec<String> = left
        .iter()
        .filter_map(|p| if b64 { spell(p).1 } else { spell(p).0 })
        .collect();
    (!v.is_empty()).then_some(v)
}

#[derive(Serialize)]
struct Success {
    count: u64,
    files: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    changes: Option<Vec<ChangeEntry>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dry_run: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    durable: Option<bool>,
    /// Deleted trees whose removal failed part way: their hidden names
    /// (in `left_b64`, as base64, those that are not UTF-8).
    #[serde(skip_serializing_if = "Option::is_none")]
    left: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    left_b64: Option<Vec<String>>,
}

/// One op under `--report`'s `changes` (the fields of [`Report`] a
/// change has, spelled out: `flatten` costs binary size).
#[derive(Serialize)]
struct ChangeEntry {
    #[serde(skip_serializing_if = "Option::is_none")]
    path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    path_b64: Option<String>,
    op: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    to: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    to_b64: Option<String>,
    count: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    size: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sha256: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    lines: Option<Vec<u64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    lines_truncated: Option<bool>,
    /// A patch's Update: each chunk's grade.
    #[serde(rename = "match", skip_serializing_if = "Option::is_none")]
    grades: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    edits: Option<Vec<crate::protocol::EditReport>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    diff: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    diff_truncated: Option<bool>,
}

#[derive(Serialize)]
struct Refused<'a> {
    error: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    count: Option<u64>,
    detail: String,
    // `--hints` keys, spelled out (`flatten` costs binary size).
    #[serde(skip_serializing_if = "Option::is_none")]
    hints: Option<&'a Vec<crate::hints::Hint>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    hints_truncated: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    lines: Option<&'a Vec<u64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    lines_truncated: Option<bool>,
    file: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    chunk: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    rolled_back: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    partial: Option<Vec<Partial>>,
}

#[derive(Serialize)]
struct Partial {
    #[serde(skip_serializing_if = "Option::is_none")]
    path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    path_b64: Option<String>,
    state: &'static str,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::ErrorKind;

    /// A transform from a function returning the new text whole.
    fn transform(f: impl Fn(&str) -> Result<(String, Transformed), OpRefusal> + 'static) -> Change {
        let apply = move |old: &str, out: &mut dyn FnMut(&str)| {
            f(old).map(|(text, t)| {
                out(&text);
                t
            })
        };
        Change::Transform(Transform {
            apply: Box::new(apply),
        })
    }

    /// The patch compiler's entry point: a Transform on an edit and on a
    /// move; a refusal's `chunk` reaches the result line beside `file`.
    #[test]
    fn transforms_apply_and_refusals_carry_their_chunk() {
        let d = tempfile::tempdir().unwrap();
        let a = d.path().join("a.txt");
        std::fs::write(&a, "one\r\ntwo\n").unwrap();
        let upper = transform(|old| {
            assert_eq!(old, "one\ntwo\n", "the text is LF-normalized");
            let t = Transformed {
                count: 2,
                lines: vec![1],
                notes: vec![],
            };
            Ok((old.to_uppercase(), t))
        });
        let moved = d.path().join("sub/b.txt");
        let txn = Txn {
            ops: vec![
                Op {
                    path: a.clone(),
                    kind: OpKind::Edit {
                        change: upper,
                        expect_sha256: None,
                    },
                },
                Op {
                    path: a.clone(),
                    kind: OpKind::Move {
                        to: moved.clone(),
                        overwrite: false,
                        change: Some(transform(|old| {
                            let t = Transformed {
                                count: 1,
                                ..Default::default()
                            };
                            Ok((format!("{old}THREE\n"), t))
                        })),
                        expect_sha256: None,
                    },
                },
            ],
            options: Default::default(),
            new_modes: NewModes::REQUEST,
            patch: false,
        };
        assert_eq!(
            run(&txn),
            ("__RESULT__{\"count\":3,\"files\":2}\n".to_owned(), 0)
        );
        assert_eq!(
            std::fs::read_to_string(&moved).unwrap(),
            "ONE\nTWO\nTHREE\n"
        );
        assert!(!a.exists());

        let refused = Txn {
            ops: vec![Op {
                path: moved.clone(),
                kind: OpKind::Edit {
                    change: transform(|_| {
                        Err(OpRefusal {
                            failure: Failure::new(
                                ErrorKind::StringNotFound,
                                "chunk 2 does not match",
                            ),
                            chunk: Some(2),
                        })
                    }),
                    expect_sha256: None,
                },
            }],
            options: Default::default(),
            new_modes: NewModes::REQUEST,
            patch: false,
        };
        let p = moved.display();
        assert_eq!(
            run(&refused),
            (
                format!("__RESULT__{{\"error\":\"string_not_found\",\"detail\":\"file 1 of 1 ({p}): chunk 2 does not match\",\"file\":1,\"chunk\":2}}\n"),
                1
            )
        );
        assert_eq!(
            std::fs::read_to_string(&moved).unwrap(),
            "ONE\nTWO\nTHREE\n"
        );
    }
}
