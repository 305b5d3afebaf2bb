//! Several files in one call, all or nothing (issue 19).
//!
//! # The request
//!
//! `--stdin` (or `--request-b64 B64`, the same JSON in argv for exec APIs
//! without stdin) takes, besides the single-file `{"path","edits"}`,
//! `{"files":[OP,...]}`: 1 to [`MAX_OPS`] (256) ops, applied in order
//! (the descriptors 256 files need: `nofile`).
//!
//! | op | fields | does |
//! | --- | --- | --- |
//! | `edit` | `path`, `edits` (as the single-file request, `at_line` included), `expect_sha256`? | replaces in the file |
//! | `insert` | `path`, `line`, `text` | inserts `text` as whole lines after line `line` (0: before the first; a final newline is added if missing) |
//! | `create` | `path`, `content`, `overwrite`? (false), `mode`? ("0644") | a new file with exactly `content`; missing parents made (0755 before the umask) |
//! | `delete` | `path`, `expect_sha256`? | removes the entry (a symlink itself, not its target) |
//! | `move` | `path`, `to`, `overwrite`? (false), `edits`?, `expect_sha256`? | renames, editing on the way; missing parents made; across file systems a copy and a delete |
//!
//! A name that is not UTF-8 is given as `path_b64` (and `to_b64`), the
//! standard base64 of its bytes, in place of `path` (`to`); giving both is
//! `invalid_argument`. One op alone at the top level (`{"op":"create",…}`)
//! is a transaction of one (`parse_op`), refused as `{"files":[OP]}` is.
//!
//! An unknown field, a field of another op, an unknown op, an empty list
//! or more than 256 ops is `invalid_argument` (exit 2). `--expect-sha256`
//! is per op here (the flag is refused). Every other flag applies to every
//! file: `--dry-run`, `--report`, `--diff`, `--hints`, `--fsync`, `--eol`,
//! `--lock-timeout` (over the whole lock acquisition), `--root` (every path,
//! move targets and created parents included).
//!
//! Ops on the same file chain: each sees what the previous left. Two paths
//! to one inode (a symlink, a hard link) are one file: its ops chain and it
//! is locked once; it is committed under the name its first op used (a
//! replaced file's other hard links keep the old inode, as with a
//! single-file edit). A path an earlier op vacated is missing, a path an
//! earlier create made exists; a hard link of a file an earlier op deleted
//! is refused (`file_not_found`: its other name still holds it on disk),
//! and so is a delete or move through (or a move onto) another hard link of
//! a file an earlier op names (it would remove or move the name that op
//! used), and a path ending in `/`, `/.` or `/..` (it names a directory).
//! A `move` follows a final symlink (it moves the file); a `delete` does
//! not. Moves that swap names (a→tmp, b→a, tmp→b) are not ordered for:
//! the second rename finds its name taken and the transaction rolls back.
//!
//! # Tokens and result keys
//!
//! - `line_out_of_range` (exit 1): an `insert` after a line past the last;
//!   the detail says how many lines the file has.
//! - `file_exists` (exit 1): a `create` or `move` onto an existing path
//!   without `overwrite` (or one that appeared during the commit).
//!
//! Success: `{"count":N,"files":K}`: N the replacements of every `edit`
//! and `move`; K the distinct paths whose entry the transaction changed:
//! made, removed, or given a new file (new content, or a file moved over
//! it). A move counts its source and its target; a path made and removed
//! again, or a file moved away and back unedited, does not count; a path
//! counts once however many ops name it. A rewrite to the same bytes
//! counts (the file is replaced). `--report` adds `"changes"`, one object
//! per op in request order: `path` (resolved), `op`, `to` (a move),
//! `count`, and for content ops `size`, `sha256`, `lines` (an insert: the
//! first inserted line), `edits` (a batch); `--diff` adds each change's
//! `diff` under one 64 KiB budget shared by all (`diff_truncated` on those
//! left out). `dry_run: true` with `--dry-run --report`; `durable: false`
//! when a `--fsync` flush after the commit failed.
//!
//! A refusal: the failing op's token and keys as a single-file refusal has
//! them (`count`, `hints`, `lines`), `"file": i` (1-based op index), and a
//! detail starting `file i of n (P): `; a patch refusal adds `"chunk"`. A
//! failure in the commit phase adds `"rolled_back": true`: every file has
//! its old bytes, mode, owner and xattrs, and the original inode. When an
//! undo step itself fails: `internal_error` with `"partial": [{"path",
//! "state": "old"|"new"}, ...]` listing every file.
//!
//! # All or nothing
//!
//! 1. **Plan** (`plan`): every path resolved and confined, the model of
//!    where each file ends; nothing opened for writing.
//! 2. **Lock** (`lock`): every existing file opened read-only and
//!    `flock`ed in one canonical order, by the (device, inode) its name
//!    holds, within one `--lock-timeout` (`busy` past it), so transactions
//!    over overlapping files in any order, through any of their hard
//!    links, cannot deadlock; a name found holding another inode (a commit
//!    replaced it) starts the round again, sorted anew. A create takes no
//!    lock (nothing exists): its `RENAME_NOREPLACE` commit refuses a
//!    racing creator (`file_exists`, rolled back). The content is read
//!    only once locked. The descriptors this holds, and the bound they
//!    make: `nofile`.
//! 3. **Prepare** (`prepare::stage`): each file's ops run through the same
//!    engine and `fs::prepare` as a single-file edit, into unnamed
//!    `O_TMPFILE` temps beside where the file ends; every `expect_sha256`
//!    checked. A refusal or error here changes nothing and leaves nothing.
//!    `--dry-run` stops here. `edit` and `insert` stream (an insert with
//!    `--diff` holds both texts); a patch's transform holds one file's text.
//! 4. **Commit** (`commit`): files in order of their last op; before each,
//!    the stale check of a single-file edit. An edit's temp is swapped
//!    with the original by `renameat2(RENAME_EXCHANGE)`, so the original
//!    stays under the temp's hidden name; a deleted or moved-away original
//!    is renamed to a hidden name; creates and moves take their name with
//!    `RENAME_NOREPLACE` (`link` + `unlink` where the file system lacks
//!    it); without `RENAME_EXCHANGE` (`EINVAL`) the original is hard-linked
//!    to a hidden name first. Every step logs its inverse; a failure undoes
//!    the log newest first (directories made are removed). The original
//!    inode survives a rollback on every path here; only on a file system
//!    with neither `RENAME_EXCHANGE` nor hard links does the commit fail
//!    before touching that file (`write_failed`, rolled back). Once all is
//!    committed, the hidden names are removed. The log lives in `undo`,
//!    where the panic hook and the out-of-memory exit reach it: a panic
//!    (or a failed allocation) inside the commit is undone there too,
//!    newest first and without allocating; its `internal_error` detail
//!    ends `(in the commit phase: rolled back, every file is old)`, or
//!    says that it could not be fully undone and the hidden names stay.
//!
//! # The crash window
//!
//! A SIGKILL or power cut during the commit phase may leave the set mixed
//! (each file old or new, never torn) and hidden names
//! `.as-edit-<16 hex>.tmp` in the files' directories, each holding an
//! original (or a not yet committed new content). Outside the commit
//! phase nothing is ever left behind. The window, from the first commit
//! syscall (naming the first temp) to the last (removing the last hidden
//! name), measured with `perf trace -e renameat2,linkat,unlinkat,mkdirat`
//! on the static binary, ext4, a loaded 2-core machine, 21 runs each, one
//! small edit per file: 10 files median 1.27 ms (min 1.13, max 6.38);
//! 100 files median 31.65 ms (min 18.89, max 59.66) (each final temp is
//! written back in the prepare phase, on ext4 and btrfs; before that:
//! 7.24 and 39.80 ms). Three syscalls per
//! edited file lie in it (link, exchange, unlink), plus the stale check and
//! the metadata copy of each.

mod commit;
mod count;
mod flush;
mod insert;
mod lock;
mod nofile;
pub mod op;
mod parse;
mod plan;
mod prepare;
mod undo;
mod writer;

pub use undo::undo_on_exit;

pub use insert::insert;

use serde::Serialize;

pub use op::{
    Change, Op, OpKind, OpRefusal, Source, Transform, TransformFn, Transformed, Txn, MAX_OPS,
};
pub use parse::{is_op, parse, parse_op, parse_request, Parsed};

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
    pub partial: Option<Vec<(String, bool)>>,
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
        let f = crate::fs::resource::out_of_descriptors(&e, nofile::bound);
        TxnError::fail(op, f.unwrap_or_else(|| Failure::from(e)))
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
        Ok((files, durable, plan_paths)) => {
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
                        .map(|(path, new)| Partial {
                            path: path.clone(),
                            state: if *new { "new" } else { "old" },
                        })
                        .collect()
                }),
            };
            (crate::protocol::render_json(&line), f.kind.exit_code())
        }
    }
}

/// A refusal's words for the `file i of n (P): ` detail: its own detail,
/// else the token's meaning (a single-file refusal may have none).
#[cfg_attr(as_edit_small, optimize(size))]
pub(crate) fn detail_of(f: &Failure) -> String {
    use crate::protocol::ErrorKind;
    match (&f.detail, f.kind) {
        (Some(d), _) => d.clone(),
        (None, ErrorKind::StringNotFound) => "OLD not found".into(),
        (None, ErrorKind::Empty) => "the file is empty".into(),
        (None, ErrorKind::MultipleOccurrences) => {
            format!("OLD occurs {} times", f.count.unwrap_or(0))
        }
        (None, k) => k.token().replace('_', " "),
    }
}

type Paths = Vec<(std::path::PathBuf, Option<std::path::PathBuf>)>;

#[cold] // off the single-file path: LLVM optimizes it for size
#[cfg_attr(as_edit_small, optimize(size))]
fn run_inner(
    txn: &Txn,
    reports: &mut [Option<Report>],
    counts: &mut [u64],
) -> Result<(usize, bool, Paths), TxnError> {
    let plan = plan::plan(txn)?;
    let locked = lock::lock_all(txn, &plan)?;
    let mut temps = Vec::with_capacity(plan.files.len());
    for (f, file) in plan.files.iter().enumerate() {
        let t = prepare::stage(txn, &plan, f, file, locked[f].as_ref(), reports, counts)?;
        if let (Some(t), false) = (&t, txn.options.fsync || txn.options.dry_run) {
            crate::fs::temp::start_writeback(t.file());
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
                    prepare::first_op(&plan, f),
                    FsError::Write { path, step, errno },
                )
            })?;
        }
    }
    let changed = plan.changed_paths(|f| temps[f].is_some());
    let durable = match txn.options.dry_run {
        true => true,
        false => {
            let done = (counts.iter().sum(), changed);
            commit::commit(txn, &plan, &locked, &mut temps, done)?
        }
    };
    drop(temps);
    // Originals are freed at their last close, which can wait for the device.
    crate::fs::release::close_all(locked.into_iter().flatten().map(|l| l.fd).collect());
    Ok((changed, durable, plan.resolved))
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
            ChangeEntry {
                path: display_path(&from),
                op: match op.kind {
                    OpKind::Edit { .. } => "edit",
                    OpKind::Insert { .. } => "insert",
                    OpKind::Create { .. } => "create",
                    OpKind::Delete { .. } => "delete",
                    OpKind::Move { .. } => "move",
                },
                to: to.map(|t| display_path(&t)),
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

/// File `f`'s path for `partial`: where it was, else where it was to be.
fn file_path(plan: &plan::Plan, f: usize) -> String {
    let file = &plan.files[f];
    match (&file.orig, &file.end) {
        (Some(o), _) => crate::protocol::display_path(&o.0.path),
        (None, plan::End::At(d)) => crate::protocol::display_path(&d.t.path),
        _ => String::new(),
    }
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
}

/// One op under `--report`'s `changes` (the fields of [`Report`] a
/// change has, spelled out: `flatten` costs binary size).
#[derive(Serialize)]
struct ChangeEntry {
    path: String,
    op: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    to: Option<String>,
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
    path: String,
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
