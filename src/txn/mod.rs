//! Several files in one call, all or nothing (issue 19): the request
//! `{"files":[OP,...]}`, its operations ([`op`]) and the machinery that
//! prepares every file before committing any.
//!
//! Reference (README.md has the short form):
//!
//! (filled in below as the machinery lands)

mod commit;
pub mod op;
mod parse;
mod plan;
mod prepare;

use serde::Serialize;

pub use op::{Change, Op, OpKind, OpRefusal, Transform, TransformFn, Transformed, Txn, MAX_OPS};
pub use parse::parse;

use crate::fs::FsError;
use crate::protocol::{display_path, Failure, HintKeys, Report};

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
    pub(crate) fn fail(op: usize, failure: Failure) -> TxnError {
        TxnError {
            op,
            failure: Box::new(failure),
            chunk: None,
            rolled_back: false,
            partial: None,
        }
    }
    pub(crate) fn of(op: usize, e: FsError) -> TxnError {
        TxnError::fail(op, Failure::from(e))
    }
    pub(crate) fn at(mut self, op: usize) -> TxnError {
        self.op = op;
        self
    }
}

/// What a transaction did: the result line and the exit code.
pub fn run(txn: &Txn) -> (String, i32) {
    raise_nofile();
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
            let detail = match &f.detail {
                Some(d) => d.clone(),
                None => match f.kind {
                    crate::protocol::ErrorKind::StringNotFound => "OLD not found".into(),
                    crate::protocol::ErrorKind::Empty => "the file is empty".into(),
                    crate::protocol::ErrorKind::MultipleOccurrences => {
                        format!("OLD occurs {} times", f.count.unwrap_or(0))
                    }
                    k => k.token().replace('_', " "),
                },
            };
            let line = Refused {
                error: f.kind.token(),
                count: f.count,
                detail: format!("file {} of {n} ({path}): {detail}", e.op + 1),
                hints: f.hints.as_ref(),
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

type Paths = Vec<(std::path::PathBuf, Option<std::path::PathBuf>)>;

fn run_inner(
    txn: &Txn,
    reports: &mut [Option<Report>],
    counts: &mut [u64],
) -> Result<(usize, bool, Paths), TxnError> {
    let plan = plan::plan(txn)?;
    let locked = prepare::lock_all(txn, &plan)?;
    let mut temps = Vec::with_capacity(plan.files.len());
    for (f, file) in plan.files.iter().enumerate() {
        temps.push(prepare::stage(
            txn,
            &plan,
            f,
            file,
            locked[f].as_ref(),
            reports,
            counts,
        )?);
    }
    let changed = plan
        .files
        .iter()
        .zip(&temps)
        .filter(|(file, t)| t.is_some() || !matches!(file.end, plan::End::InPlace))
        .filter(|(file, _)| file.orig.is_some() || !matches!(file.end, plan::End::Gone))
        .count();
    let durable = match txn.options.dry_run {
        true => true,
        false => commit::commit(txn, &plan, &locked, &mut temps)?,
    };
    drop(temps);
    Ok((changed, durable, plan.resolved))
}

/// Descriptors: a file holds up to four while the transaction runs.
fn raise_nofile() {
    use rustix::process::{getrlimit, setrlimit, Resource};
    let mut l = getrlimit(Resource::Nofile);
    if l.current < l.maximum {
        l.current = l.maximum;
        let _ = setrlimit(Resource::Nofile, l);
    }
}

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
            r.path = None;
            r.dry_run = None;
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
                rest: r,
            }
        })
        .collect()
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

#[derive(Serialize)]
struct ChangeEntry {
    path: String,
    op: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    to: Option<String>,
    count: u64,
    #[serde(flatten)]
    rest: Report,
}

#[derive(Serialize)]
struct Refused<'a> {
    error: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    count: Option<u64>,
    detail: String,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    hints: Option<&'a HintKeys>,
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
