//! The host library's transactions and patches through `LocalShell`: the
//! transfer path's ops, refusals (nothing uploaded), injected write
//! failures (every k: the written files put back, or each file's state
//! said), the native command and result keys (a scripted protocol-3
//! helper), and how a refused chunk reads for a model.

mod common;
use common::*;

use as_edit::host::{
    self, Applied, EditError, FileChange, FileOp, FileState, LocalShell, PatchOp, PatchOpKind,
    Sandbox, State, TxnAt, TxnEdit, Via,
};
use std::collections::BTreeMap;
use std::io;
use std::path::Path;

const MISSING: &str = "/nonexistent/as-edit";

/// Every file under `dir` (relative path → bytes) and every directory.
fn tree(dir: &Path) -> BTreeMap<String, Option<Vec<u8>>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let rel = p.strip_prefix(dir).unwrap().to_string_lossy().into_owned();
            if p.is_dir() {
                out.insert(rel + "/", None);
                stack.push(p);
            } else {
                out.insert(rel, Some(std::fs::read(&p).unwrap()));
            }
        }
    }
    out
}

fn files(v: &[(&str, &str)]) -> BTreeMap<String, Option<Vec<u8>>> {
    v.iter()
        .map(|(k, b)| {
            let dir = k.ends_with('/');
            (k.to_string(), (!dir).then(|| b.as_bytes().to_vec()))
        })
        .collect()
}

fn at(d: &Path, name: &str) -> String {
    d.join(name).to_string_lossy().into_owned()
}

fn edit(path: String, old: &str, new: &str) -> FileOp {
    FileOp::Edit {
        path,
        edits: vec![TxnEdit::new(old, new)],
        expect_sha256: None,
    }
}

/// A `LocalShell` whose writes (uploads and removes, counted together)
/// fail with ENOSPC at the given 1-based numbers, and whose stdin can be
/// switched off.
#[derive(Default)]
struct Flaky {
    inner: LocalShell,
    writes: usize,
    fail: Vec<usize>,
    no_stdin: bool,
}

impl Flaky {
    fn write(&mut self) -> io::Result<()> {
        self.writes += 1;
        match self.fail.contains(&self.writes) {
            true => Err(io::Error::from_raw_os_error(28)),
            false => Ok(()),
        }
    }
}

impl Sandbox for Flaky {
    fn exec(&mut self, c: &[u8], stdin: Option<&[u8]>) -> io::Result<host::ExecOutput> {
        self.inner.exec(c, stdin)
    }
    fn download(&mut self, p: &Path) -> io::Result<Vec<u8>> {
        self.inner.download(p)
    }
    fn upload(&mut self, p: &Path, b: &[u8]) -> io::Result<()> {
        self.write()?;
        self.inner.upload(p, b)
    }
    fn remove(&mut self, p: &Path) -> io::Result<()> {
        self.write()?;
        self.inner.remove(p)
    }
    fn create_dirs(&mut self, d: &Path) -> io::Result<()> {
        self.inner.create_dirs(d)
    }
    fn supports_stdin(&self) -> bool {
        !self.no_stdin
    }
}

fn refusal(e: &EditError) -> (&str, &str, Via, &TxnAt) {
    match e {
        EditError::Failed {
            kind,
            detail,
            via,
            at: Some(at),
            ..
        } => (kind.as_str(), detail.as_deref().unwrap_or(""), *via, at),
        other => panic!("expected a transaction refusal, got {other:?}"),
    }
}

fn sha(b: &[u8]) -> String {
    use sha2::Digest;
    as_edit::hex::encode(&sha2::Sha256::digest(b))
}

fn change(op: &str, path: &str, count: u64, bytes: Option<&[u8]>, lines: &[u64]) -> FileChange {
    FileChange {
        path: path.into(),
        op: op.into(),
        count,
        size: bytes.map(|b| b.len() as u64),
        sha256: bytes.map(sha),
        lines: lines.to_vec(),
        ..FileChange::default()
    }
}

#[test]
fn the_transfer_path_runs_every_op_and_chains_them() {
    let d = scratch();
    let p = d.path();
    write_file(p, "a.txt", b"one\r\ntwo\r\n", 0o644);
    write_file(p, "b.txt", b"x\ny\n", 0o644);
    write_file(p, "gone.txt", b"bye\n", 0o644);
    write_file(p, "m.txt", b"fn old() {}\n", 0o644);
    let ops = vec![
        edit(at(p, "a.txt"), "two", "TWO"),
        FileOp::Insert {
            path: at(p, "a.txt"),
            line: 1,
            text: "one and a half".into(),
        },
        FileOp::Create {
            path: at(p, "new/deep/c.txt"),
            content: "no\r\nnormalization".into(),
            overwrite: false,
            mode: None,
        },
        FileOp::Delete {
            path: at(p, "gone.txt"),
            expect_sha256: Some(sha(b"bye\n")),
        },
        FileOp::Move {
            path: at(p, "m.txt"),
            to: at(p, "moved/m.rs"),
            overwrite: false,
            edits: vec![TxnEdit::new("old", "new")],
            expect_sha256: None,
        },
    ];
    let mut ed = host::Editor::new(LocalShell::new(), MISSING);
    let r = ed.transaction(&ops).unwrap();
    let a = b"one\none and a half\nTWO\n";
    let c = b"no\r\nnormalization";
    let m = b"fn new() {}\n";
    let mut moved = change("move", &at(p, "m.txt"), 1, Some(m), &[1]);
    moved.to = Some(at(p, "moved/m.rs"));
    assert_eq!(
        r,
        Applied {
            count: 2,
            files: 5,
            changes: vec![
                change("edit", &at(p, "a.txt"), 1, Some(b"one\nTWO\n"), &[2]),
                change("insert", &at(p, "a.txt"), 0, Some(a), &[2]),
                change("create", &at(p, "new/deep/c.txt"), 0, Some(c), &[]),
                change("delete", &at(p, "gone.txt"), 0, None, &[]),
                moved,
            ],
            via: Via::Transfer,
        }
    );
    assert_eq!(
        tree(p),
        files(&[
            ("a.txt", "one\none and a half\nTWO\n"),
            ("b.txt", "x\ny\n"),
            ("new/", ""),
            ("new/deep/", ""),
            ("new/deep/c.txt", "no\r\nnormalization"),
            ("moved/", ""),
            ("moved/m.rs", "fn new() {}\n"),
        ])
    );
}

#[test]
fn transfer_refusals_name_the_op_and_upload_nothing() {
    let d = scratch();
    let p = d.path();
    write_file(p, "a.txt", b"a\n", 0o644);
    write_file(p, "b.txt", b"dup dup\nfn  main() {\n    x\n}\n", 0o644);
    std::fs::create_dir(p.join("dir")).unwrap();
    let before = tree(p);
    let first = edit(at(p, "a.txt"), "a", "A");
    let cases: Vec<(FileOp, &str, String)> = vec![
        (
            edit(at(p, "b.txt"), "dup", "x"),
            "multiple_occurrences",
            format!("file 2 ({}): 2 occurrences, starting on lines 1, 1; pass at_line to choose one (where a line holds several, extend OLD instead)", at(p, "b.txt")),
        ),
        (
            edit(at(p, "b.txt"), "fn main() {\n  x\n}", "y"),
            "string_not_found",
            format!("file 2 ({}): string not found; lines 2-4 differ only in whitespace. The file has:\nfn  main() {{\n    x\n}}", at(p, "b.txt")),
        ),
        (
            edit(at(p, "nope.txt"), "a", "b"),
            "file_not_found",
            format!("file 2 ({0}): file not found: {0} does not exist", at(p, "nope.txt")),
        ),
        (
            edit(at(p, "dir"), "a", "b"),
            "file_not_found",
            format!("file 2 ({0}): file not found: {0} is a directory", at(p, "dir")),
        ),
        (
            FileOp::Create {
                path: at(p, "b.txt"),
                content: String::new(),
                overwrite: false,
                mode: None,
            },
            "file_exists",
            format!("file 2 ({0}): file exists: {0} exists (give overwrite: true to replace it)", at(p, "b.txt")),
        ),
        (
            FileOp::Move {
                path: at(p, "a.txt"),
                to: at(p, "b.txt"),
                overwrite: false,
                edits: vec![],
                expect_sha256: None,
            },
            "file_exists",
            format!("file 2 ({}): file exists: {} exists (give overwrite: true to replace it)", at(p, "a.txt"), at(p, "b.txt")),
        ),
        (
            FileOp::Insert {
                path: at(p, "b.txt"),
                line: 5,
                text: "z".into(),
            },
            "line_out_of_range",
            format!("file 2 ({0}): line out of range: line 5 is past the end: {0} has 4 lines", at(p, "b.txt")),
        ),
        (
            FileOp::Delete {
                path: at(p, "b.txt"),
                expect_sha256: Some("0".repeat(64)),
            },
            "conflict",
            format!("file 2 ({0}): conflict: {0} does not have the expected SHA-256 (it has {1})", at(p, "b.txt"),
                sha(b"dup dup\nfn  main() {\n    x\n}\n")),
        ),
        (
            edit(at(p, "b.txt"), "", "x"),
            "invalid_argument",
            format!("file 2 ({}): invalid argument: OLD is empty", at(p, "b.txt")),
        ),
    ];
    for (op, token, shown) in cases {
        let mut ed = host::Editor::new(Flaky::default(), MISSING);
        let e = ed.transaction(&[first.clone(), op]).unwrap_err();
        let (tok, detail, via, where_) = refusal(&e);
        assert_eq!(
            (tok, via, where_.file),
            (token, Via::Transfer, 2),
            "{shown}"
        );
        assert!(detail.starts_with(&format!("file 2 of 2 (")), "{detail}");
        assert_eq!(e.to_string(), shown);
        assert_eq!(ed.sandbox.writes, 0, "{token}: nothing was written");
        assert_eq!(tree(p), before, "{token}");
    }
}
