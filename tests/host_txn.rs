//! The host library's transactions and patches through `LocalShell`: the
//! transfer path's ops, refusals (nothing uploaded), injected write
//! failures (every k: the written files put back, or each file's state
//! said), the native command and result keys (a scripted protocol-3
//! helper), and how a refused chunk reads for a model.

mod common;
use common::*;

use as_edit_host::{
    self as host, Applied, EditError, FileChange, FileOp, FileState, LocalShell, PatchOp,
    PatchOpKind, Sandbox, State, TxnAt, TxnEdit, Via,
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
        path: path.into(),
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
    commands: Vec<Vec<u8>>,
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
        self.commands.push(c.to_vec());
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
    fn make_dir(&mut self, d: &Path) -> io::Result<()> {
        self.inner.make_dir(d)
    }
    fn remove_dir(&mut self, d: &Path) -> io::Result<()> {
        self.inner.remove_dir(d)
    }
    fn set_mode(&mut self, p: &Path, mode: u32) -> io::Result<()> {
        self.inner.set_mode(p, mode)
    }
    fn resolve_dir(&mut self, d: &Path) -> io::Result<std::path::PathBuf> {
        self.inner.resolve_dir(d)
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
            path: at(p, "a.txt").into(),
            line: 1,
            text: "one and a half".into(),
        },
        FileOp::Create {
            path: at(p, "new/deep/c.txt").into(),
            content: "no\r\nnormalization".into(),
            overwrite: false,
            mode: None,
        },
        FileOp::Delete {
            path: at(p, "gone.txt").into(),
            recursive: false,
            expect_sha256: Some(sha(b"bye\n")),
        },
        FileOp::Move {
            path: at(p, "m.txt").into(),
            to: at(p, "moved/m.rs").into(),
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
    moved.to = Some(at(p, "moved/m.rs").into());
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
            format!("file 2 ({0}): file not found: {0} is a directory, not a regular file", at(p, "dir")),
        ),
        (
            FileOp::Create {
                path: at(p, "b.txt").into(),
                content: String::new(),
                overwrite: false,
                mode: None,
            },
            "file_exists",
            format!("file 2 ({0}): file exists: {0} exists; give \"overwrite\": true to replace it", at(p, "b.txt")),
        ),
        (
            FileOp::Move {
                path: at(p, "a.txt").into(),
                to: at(p, "b.txt").into(),
                overwrite: false,
                edits: vec![],
                expect_sha256: None,
            },
            "file_exists",
            format!("file 2 ({}): file exists: {} exists; give \"overwrite\": true to replace it", at(p, "a.txt"), at(p, "b.txt")),
        ),
        (
            FileOp::Insert {
                path: at(p, "b.txt").into(),
                line: 5,
                text: "z".into(),
            },
            "line_out_of_range",
            format!("file 2 ({0}): line out of range: line 5 is past the end: {0} has 4 lines", at(p, "b.txt")),
        ),
        (
            FileOp::Delete {
                path: at(p, "b.txt").into(),
                recursive: false,
                expect_sha256: Some("0".repeat(64)),
            },
            "conflict",
            format!("file 2 ({0}): conflict: {0} changed since it was read: its SHA-256 is {1}", at(p, "b.txt"),
                sha(b"dup dup\nfn  main() {\n    x\n}\n")),
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
        assert!(detail.starts_with("file 2 of 2 ("), "{detail}");
        assert_eq!(e.to_string(), shown);
        assert_eq!(ed.sandbox.writes, 0, "{token}: nothing was written");
        assert_eq!(tree(p), before, "{token}");
    }
}

/// Three files that exist (edit, delete, move onto a new name) and one
/// created: four writes (three uploads, then the delete and the move's
/// removal of its old name).
fn four_write_ops(p: &Path) -> Vec<FileOp> {
    vec![
        edit(at(p, "a.txt"), "a", "A"),
        FileOp::Delete {
            path: at(p, "b.txt").into(),
            recursive: false,
            expect_sha256: None,
        },
        FileOp::Create {
            path: at(p, "c.txt").into(),
            content: "c\n".into(),
            overwrite: false,
            mode: None,
        },
        FileOp::Move {
            path: at(p, "d.txt").into(),
            to: at(p, "e.txt").into(),
            overwrite: false,
            edits: vec![],
            expect_sha256: None,
        },
    ]
}

fn four_files(p: &Path) {
    for n in ["a", "b", "d"] {
        write_file(p, format!("{n}.txt"), format!("{n}\n").as_bytes(), 0o644);
    }
}

#[test]
fn a_failed_write_at_every_step_puts_back_what_was_written() {
    // Writes: a (upload), c (upload), e (upload), b (remove), d (remove).
    for k in 1..=5 {
        let d = scratch();
        let p = d.path();
        four_files(p);
        let before = tree(p);
        let mut ed = host::Editor::new(
            Flaky {
                fail: vec![k],
                ..Flaky::default()
            },
            MISSING,
        );
        let e = ed.transaction(&four_write_ops(p)).unwrap_err();
        let (tok, detail, via, where_) = refusal(&e);
        assert_eq!((tok, via), ("write_failed", Via::Transfer), "k={k}");
        let failed = ["a.txt", "c.txt", "e.txt", "b.txt", "d.txt"][k - 1];
        let file = [1, 3, 4, 2, 4][k - 1];
        let verb = if k <= 3 { "uploading" } else { "removing" };
        let restored = if k > 1 {
            "; the files already written were restored"
        } else {
            ""
        };
        assert_eq!(
            detail,
            format!(
                "file {file} of 4 ({0}): {verb} {0}: No space left on device (os error 28){restored}",
                at(p, failed)
            )
        );
        assert_eq!(
            where_,
            &TxnAt {
                file,
                path: Some(at(p, failed)),
                chunk: None,
                rolled_back: k > 1,
                partial: vec![],
            },
            "k={k}"
        );
        assert_eq!(
            tree(p),
            before,
            "k={k}: every file as it was, nothing added"
        );
        // k - 1 writes done, the failed one, and one undo per done write.
        assert_eq!(ed.sandbox.writes, 2 * (k - 1) + 1, "k={k}");
    }
}

#[test]
fn a_failed_undo_says_which_file_is_old_and_which_new() {
    let d = scratch();
    let p = d.path();
    four_files(p);
    // The third write (e.txt) fails, and so does the first undo (of c.txt,
    // the newest written): c.txt stays new, a.txt is put back.
    let mut ed = host::Editor::new(
        Flaky {
            fail: vec![3, 4],
            ..Flaky::default()
        },
        MISSING,
    );
    let e = ed.transaction(&four_write_ops(p)).unwrap_err();
    let (tok, detail, _, where_) = refusal(&e);
    assert_eq!(tok, "internal_error");
    assert_eq!(
        detail,
        format!(
            "file 4 of 4 ({0}): uploading {0}: No space left on device (os error 28); restoring the files already written failed; restoring {1}: No space left on device (os error 28)",
            at(p, "e.txt"),
            at(p, "c.txt")
        )
    );
    let st = |n: &str, state| FileState {
        path: at(p, n).into(),
        state,
    };
    assert!(!where_.rolled_back);
    assert_eq!(
        where_.partial,
        vec![
            st("a.txt", State::Old),
            st("b.txt", State::Old),
            st("c.txt", State::New),
            st("d.txt", State::Old),
            st("e.txt", State::Old),
        ]
    );
    assert!(e.to_string().ends_with(&format!(
        "\nfiles left: {} (old), {} (old), {} (new), {} (old), {} (old)",
        at(p, "a.txt"),
        at(p, "b.txt"),
        at(p, "c.txt"),
        at(p, "d.txt"),
        at(p, "e.txt")
    )));
    assert_eq!(
        tree(p),
        files(&[
            ("a.txt", "a\n"),
            ("b.txt", "b\n"),
            ("c.txt", "c\n"),
            ("d.txt", "d\n")
        ])
    );
}

/// Another writer rewrites d.txt, or removes it, after the first write:
/// `conflict`, saying which happened, and the rest put back.
#[test]
fn a_file_changed_before_its_upload_is_a_conflict_and_the_rest_is_put_back() {
    /// Rewrites (or removes: None) d.txt behind the transaction's back
    /// after the first write.
    struct Meddler(Flaky, std::path::PathBuf, Option<&'static [u8]>);
    impl Sandbox for Meddler {
        fn exec(&mut self, c: &[u8], s: Option<&[u8]>) -> io::Result<host::ExecOutput> {
            self.0.exec(c, s)
        }
        fn download(&mut self, p: &Path) -> io::Result<Vec<u8>> {
            self.0.download(p)
        }
        fn upload(&mut self, p: &Path, b: &[u8]) -> io::Result<()> {
            self.0.upload(p, b)?;
            if self.0.writes == 1 {
                match self.2 {
                    Some(b) => std::fs::write(&self.1, b)?,
                    None => std::fs::remove_file(&self.1)?,
                }
            }
            Ok(())
        }
        fn remove(&mut self, p: &Path) -> io::Result<()> {
            self.0.remove(p)
        }
    }
    for (meddle, said) in [
        (Some(&b"someone else\n"[..]), "changed"),
        (None, "was removed"),
    ] {
        let d = scratch();
        let p = d.path();
        four_files(p);
        let mut ed = host::Editor::new(Meddler(Flaky::default(), p.join("d.txt"), meddle), MISSING);
        let e = ed.transaction(&four_write_ops(p)).unwrap_err();
        let (tok, detail, _, where_) = refusal(&e);
        assert_eq!(tok, "conflict");
        assert_eq!(
            detail,
            format!(
                "file 4 of 4 ({0}): {0} {said} while the transfer ran; the files already written were restored",
                at(p, "d.txt")
            )
        );
        assert!(where_.rolled_back);
        let mut want = vec![("a.txt", "a\n"), ("b.txt", "b\n")];
        if meddle.is_some() {
            want.push(("d.txt", "someone else\n"));
        }
        assert_eq!(tree(p), files(&want));
    }
}

fn app_py(p: &Path) -> String {
    // `return x` at lines 3 and 7: a chunk with that context alone is ambiguous.
    write_file(
        p,
        "app.py",
        b"def f(x):\r\n    x += 1\r\n    return x\r\n\r\ndef g(x):\r\n    x += 1\r\n    return x\r\n",
        0o644,
    );
    at(p, "app.py")
}

#[test]
fn a_patch_adds_updates_moves_and_deletes_alike_natively_and_by_transfer() {
    let setup = |p: &Path| {
        app_py(p);
        write_file(p, "old.txt", b"bye\n", 0o644);
        write_file(p, "m.txt", b"1\n2\n", 0o644);
    };
    let patch = |p: &Path| {
        format!(
            "*** Begin Patch\n*** Add File: {new}\n+hello\n*** Update File: {app}\n@@ def g(x):\n-    x += 1\n+    x += 2\n*** Delete File: {old}\n*** Update File: {m}\n*** Move to: {to}\n@@\n 1\n-2\n+two\n*** End Patch\n",
            new = at(p, "sub/new.txt"),
            app = at(p, "app.py"),
            old = at(p, "old.txt"),
            m = at(p, "m.txt"),
            to = at(p, "moved.txt"),
        )
    };
    let [native, transfer] = both(&setup, &|ed, p| {
        let mut r = ed.apply_patch(&patch(p)).unwrap();
        assert_eq!((r.count, r.files), (2, 5));
        let grades: Vec<Vec<String>> = r
            .changes
            .iter_mut()
            .map(|c| std::mem::take(&mut c.grades))
            .collect();
        // The transfer path reports each chunk's grade (`"match"`); the
        // helper's `--report` has lost the key since txn c80adc6 (its
        // changes entry no longer carries a transform's notes): compared
        // apart until it is back.
        let exact = || vec!["exact".to_owned()];
        if r.via == Via::Transfer {
            assert_eq!(grades, vec![vec![], exact(), vec![], exact()]);
        }
        let ops: Vec<(&str, u64, Vec<u64>)> = r
            .changes
            .iter()
            .map(|c| (c.op.as_str(), c.count, c.lines.clone()))
            .collect();
        assert_eq!(
            ops,
            vec![
                ("create", 0, vec![]),
                ("edit", 1, vec![6]),
                ("delete", 0, vec![]),
                ("move", 1, vec![1]),
            ]
        );
        Ok(r)
    });
    assert_eq!(native, transfer);
    assert_eq!(
        native.2,
        files(&[
            (
                "app.py",
                "def f(x):\n    x += 1\n    return x\n\ndef g(x):\n    x += 2\n    return x\n"
            ),
            ("moved.txt", "1\ntwo\n"),
            ("sub/", ""),
            ("sub/new.txt", "hello\n"),
        ])
    );
    // The operations form of an apply_patch_call: the same machinery.
    let ops = |p: &Path| {
        vec![
            PatchOp {
                kind: PatchOpKind::UpdateFile,
                path: at(p, "app.py"),
                diff: Some(" def f(x):\n-    x += 1\n+    x -= 1\n".into()),
                move_to: None,
            },
            PatchOp {
                kind: PatchOpKind::CreateFile,
                path: at(p, "made.txt"),
                diff: Some("+a\n+b\n".into()),
                move_to: None,
            },
            PatchOp {
                kind: PatchOpKind::DeleteFile,
                path: at(p, "m.txt"),
                diff: None,
                move_to: None,
            },
        ]
    };
    // Without the grades, as above.
    let [native, transfer] = both(&setup, &|ed, p| {
        let mut r = ed.apply_operations(&ops(p))?;
        r.changes.iter_mut().for_each(|c| c.grades.clear());
        Ok(r)
    });
    assert_eq!(native, transfer);
    assert_eq!(
        native.2,
        files(&[
            (
                "app.py",
                "def f(x):\n    x -= 1\n    return x\n\ndef g(x):\n    x += 1\n    return x\n"
            ),
            ("made.txt", "a\nb\n"),
            ("old.txt", "bye\n"),
        ])
    );
}

#[test]
fn a_refused_chunk_reads_for_the_model_alike_natively_and_by_transfer() {
    let setup = |p: &Path| {
        app_py(p);
        write_file(p, "b.txt", b"b\n", 0o644);
    };
    let upd = |p: &Path, body: &str| {
        format!(
            "*** Begin Patch\n*** Update File: {}\n-b\n+B\n*** Update File: {}\n{body}*** End Patch",
            at(p, "b.txt"),
            at(p, "app.py")
        )
    };
    type Patch = Box<dyn Fn(&Path) -> String>;
    let cases: Vec<(Patch, &str)> = vec![
        (
            Box::new(move |p| upd(p, "@@\n def f(x):\n@@\n-    return x\n+    return -x\n")),
            "file 2 (@/app.py), chunk 2: the context occurs at lines 3 and 7; add an @@ line naming the enclosing function, or more context lines",
        ),
        (
            Box::new(move |p| upd(p, "@@ def g(x):\n-    return x\n+    return -x\n@@\n-nope\n+x\n")),
            "file 2 (@/app.py), chunk 2: string not found; the edit appears to be applied already (line 1)\nchunk 2 (patch line 9): its context and '-' lines are not in the file after the previous chunk",
        ),
        (
            Box::new(move |p| upd(p, "@@\n-def  g(x):\n+def h(x):\n")),
            "file 2 (@/app.py), chunk 1: string not found; line 5 differs only in whitespace. The file has:\ndef g(x):\nother candidates: line 1 (similar)\nchunk 1 (patch line 6): its context and '-' lines are not in the file",
        ),
        (
            Box::new(|p| format!("*** Begin Patch\n*** Add File: {}\n+x\n*** End Patch", at(p, "b.txt"))),
            "file 1 (@/b.txt): file exists: @/b.txt exists; use Update File to change it, or Delete File then Add File to replace it",
        ),
        (
            Box::new(|_| "*** Begin Patch\n*** End Patch".into()),
            "invalid patch: line 2: expected a hunk ('*** Add File: PATH', '*** Delete File: PATH' or '*** Update File: PATH'): the patch is empty",
        ),
    ];
    for (patch, shown) in cases {
        let [native, transfer] = both(&setup, &|ed, p| ed.apply_patch(&patch(p)));
        assert_eq!(native, transfer);
        assert_eq!(native.1, shown);
        assert_eq!(native.2, {
            let d = scratch();
            setup(d.path());
            tree(d.path())
        });
    }
}

/// Runs `ops` natively (the real helper, protocol 3) in one copy of a
/// tree and through the transfer path in another; returns both results
/// (with each copy's directory shown as `@`) and both trees.
type Tree = BTreeMap<String, Option<Vec<u8>>>;

fn native_and_transfer(
    setup: &dyn Fn(&Path),
    ops: &dyn Fn(&Path) -> Vec<FileOp>,
) -> [(String, String, Tree); 2] {
    both(setup, &|ed, p| ed.transaction(&ops(p)))
}

type Call<'a> = dyn Fn(&mut host::Editor<LocalShell>, &Path) -> Result<Applied, EditError> + 'a;

/// [`native_and_transfer`] for any call of the editor.
fn both(setup: &dyn Fn(&Path), call: &Call<'_>) -> [(String, String, Tree); 2] {
    [BIN, MISSING].map(|helper| {
        let d = scratch();
        let p = d.path().canonicalize().unwrap();
        setup(&p);
        let mut ed = host::Editor::new(LocalShell::new(), helper);
        let r = call(&mut ed, &p);
        let want = if helper == BIN {
            Via::Native
        } else {
            Via::Transfer
        };
        let via = match &r {
            Ok(a) => a.via,
            Err(EditError::Failed { via, .. }) => *via,
            Err(e) => panic!("{e:?}"),
        };
        assert_eq!(via, want, "{r:?}");
        let shown = r.as_ref().map_or_else(|e| e.to_string(), |_| String::new());
        let r = match r {
            Ok(a) => format!(
                "{:?}",
                Applied {
                    via: Via::Native,
                    ..a
                }
            ),
            Err(EditError::Failed {
                kind,
                detail,
                count,
                hints,
                at,
                ..
            }) => format!("{kind:?} {detail:?} {count:?} {hints:?} {at:?}"),
            Err(e) => panic!("{e:?}"),
        };
        let dir = p.to_string_lossy().into_owned();
        (r.replace(&dir, "@"), shown.replace(&dir, "@"), tree(&p))
    })
}

#[test]
fn native_and_transfer_give_the_same_results_and_trees() {
    let base = |p: &Path| {
        four_files(p);
        write_file(p, "crlf.txt", b"one\r\ntwo\r\n", 0o644);
        write_file(p, "dup.txt", b"dup dup\nfn  main() {\n    x\n}\n", 0o644);
        std::fs::create_dir(p.join("dir")).unwrap();
    };
    type Ops = Box<dyn Fn(&Path) -> Vec<FileOp>>;
    let one = |f: fn(&Path) -> FileOp| -> Ops {
        Box::new(move |p: &Path| vec![edit(at(p, "a.txt"), "a", "A"), f(p)])
    };
    let cases: Vec<Ops> = vec![
        Box::new(four_write_ops),
        Box::new(|p: &Path| {
            vec![
                edit(at(p, "crlf.txt"), "two", "TWO"),
                FileOp::Insert {
                    path: at(p, "crlf.txt").into(),
                    line: 2,
                    text: "three".into(),
                },
                FileOp::Create {
                    path: at(p, "new/deep/c.txt").into(),
                    content: "no\r\nnormalization".into(),
                    overwrite: false,
                    mode: None,
                },
                FileOp::Create {
                    path: at(p, "a.txt").into(),
                    content: "replaced".into(),
                    overwrite: true,
                    mode: None,
                },
                FileOp::Move {
                    path: at(p, "d.txt").into(),
                    to: at(p, "b.txt").into(),
                    overwrite: true,
                    edits: vec![TxnEdit::new("d", "D")],
                    expect_sha256: Some(sha(b"d\n")),
                },
            ]
        }),
        one(|p| edit(at(p, "dup.txt"), "dup", "x")),
        one(|p| edit(at(p, "dup.txt"), "fn main() {\n  x\n}", "y")),
        one(|p| edit(at(p, "nope.txt"), "a", "b")),
        one(|p| edit(at(p, "dir"), "a", "b")),
        one(|p| edit(at(p, "dup.txt"), "", "b")),
        one(|p| FileOp::Create {
            path: at(p, "b.txt").into(),
            content: String::new(),
            overwrite: false,
            mode: None,
        }),
        one(|p| FileOp::Move {
            path: at(p, "b.txt").into(),
            to: at(p, "d.txt").into(),
            overwrite: false,
            edits: vec![],
            expect_sha256: None,
        }),
        one(|p| FileOp::Insert {
            path: at(p, "dup.txt").into(),
            line: 5,
            text: "z".into(),
        }),
        one(|p| FileOp::Delete {
            path: at(p, "dup.txt").into(),
            recursive: false,
            expect_sha256: Some("0".repeat(64)),
        }),
        one(|p| FileOp::Delete {
            path: at(p, "nope.txt").into(),
            recursive: false,
            expect_sha256: None,
        }),
        // Existence is planned for every op before any content is read.
        Box::new(|p: &Path| {
            vec![
                edit(at(p, "dup.txt"), "zzz", "y"),
                FileOp::Create {
                    path: at(p, "b.txt").into(),
                    content: String::new(),
                    overwrite: false,
                    mode: None,
                },
            ]
        }),
    ];
    for (i, ops) in cases.iter().enumerate() {
        let [native, transfer] = native_and_transfer(&base, ops.as_ref());
        assert_eq!(native.0, transfer.0, "case {i}: results");
        assert_eq!(native.1, transfer.1, "case {i}: the words for the model");
        assert_eq!(native.2, transfer.2, "case {i}: trees");
    }
}

#[test]
fn without_stdin_the_request_travels_in_argv_and_over_the_bound_by_transfer() {
    let ops = |p: &Path| {
        vec![
            edit(at(p, "a.txt"), "a", "A"),
            edit(at(p, "b.txt"), "b", "B"),
        ]
    };
    for (no_stdin, limit, via, flag) in [
        (false, 200, Via::Native, "'--stdin'"),
        (true, 100_000, Via::Native, "'--request-b64' '"),
        (true, 200, Via::Transfer, ""),
    ] {
        let d = scratch();
        let p = d.path();
        four_files(p);
        let sb = Flaky {
            no_stdin,
            ..Flaky::default()
        };
        let mut ed = host::Editor::new(sb, BIN).with_command_limit(limit);
        let r = ed.transaction(&ops(p)).unwrap();
        assert_eq!((r.count, r.files, r.via), (2, 2, via), "{flag}");
        assert_eq!(std::fs::read(p.join("a.txt")).unwrap(), b"A\n");
        assert_eq!(std::fs::read(p.join("b.txt")).unwrap(), b"B\n");
        let sent: Vec<String> = ed
            .sandbox
            .commands
            .iter()
            .map(|c| String::from_utf8_lossy(c).into_owned())
            .collect();
        match via {
            // The version probe, then one exec carrying the whole request.
            Via::Native => {
                assert_eq!(sent.len(), 2, "{sent:?}");
                assert!(sent[1].starts_with(&format!("'{BIN}' '--report' '--hints' {flag}")));
            }
            // Too long for one command: nothing sent but nothing probed.
            Via::Transfer => assert!(sent.is_empty(), "{sent:?}"),
        }
    }
}

/// A helper script that answers `--version` with protocol 3 and anything
/// else with the result line in `answer`.
fn scripted_helper(d: &Path, answer: &str) -> String {
    std::fs::write(d.join("answer"), answer).unwrap();
    let script = format!(
        "#!/bin/sh\ncase \"$1\" in --version) echo 'as-edit 0.1.0 (protocol 3; test)'; exit 0;; esac\ncat {}\nexit 1\n",
        d.join("answer").display()
    );
    let p = write_file(d, "helper", script.as_bytes(), 0o755);
    p.to_string_lossy().into_owned()
}

#[test]
fn the_helpers_transaction_keys_are_typed_and_a_chunk_is_worded_for_the_model() {
    let d = scratch();
    let helper = scripted_helper(
        d.path(),
        r#"__RESULT__{"error":"multiple_occurrences","count":2,"detail":"file 2 of 2 (src/app.py): chunk 3: the context occurs 2 times","lines":[40,97],"file":2,"chunk":3}"#,
    );
    let mut ed = host::Editor::new(LocalShell::new(), helper);
    let patch = "*** Begin Patch\n*** Delete File: x\n*** Update File: src/app.py\n@@\n-a\n+b\n*** End Patch";
    let e = ed.apply_patch(patch).unwrap_err();
    let (tok, _, via, where_) = refusal(&e);
    assert_eq!((tok, via), ("multiple_occurrences", Via::Native));
    assert_eq!(
        where_,
        &TxnAt {
            file: 2,
            path: Some("src/app.py".into()),
            chunk: Some(3),
            ..TxnAt::default()
        }
    );
    assert_eq!(
        e.to_string(),
        "file 2 (src/app.py), chunk 3: the context occurs at lines 40 and 97; add an @@ line naming the enclosing function, or more context lines"
    );
    // An undo that failed: every file's state.
    let helper = scripted_helper(
        d.path(),
        r#"__RESULT__{"error":"internal_error","detail":"file 1 of 2 (a): undoing: EIO","file":1,"partial":[{"path":"/w/a","state":"new"},{"path":"/w/b","state":"old"}]}"#,
    );
    let mut ed = host::Editor::new(LocalShell::new(), helper);
    let e = ed
        .transaction(&[edit("a".into(), "x", "y"), edit("b".into(), "x", "y")])
        .unwrap_err();
    let (tok, _, _, where_) = refusal(&e);
    assert_eq!(tok, "internal_error");
    assert_eq!(
        where_.partial,
        vec![
            FileState {
                path: "/w/a".into(),
                state: State::New
            },
            FileState {
                path: "/w/b".into(),
                state: State::Old
            }
        ]
    );
    assert_eq!(
        e.to_string(),
        "file 1 (a): internal error: undoing: EIO\nfiles left: /w/a (new), /w/b (old)"
    );
}

#[test]
fn the_example_runs_a_files_request_and_a_patch() {
    // cargo test builds examples beside the binary: target/<profile>/examples/host.
    let example = Path::new(BIN).parent().unwrap().join("examples/host");
    if !example.exists() {
        return skip("the host example is not built (cargo test builds it by default)");
    }
    for (helper, via) in [(BIN, "native"), (MISSING, "fallback: transfer")] {
        let d = scratch();
        let p = d.path().canonicalize().unwrap();
        four_files(&p);
        let req = serde_json::json!({"files": [
            {"op": "edit", "path": at(&p, "a.txt"), "edits": [{"old": "a", "new": "A"}]},
            {"op": "move", "path": at(&p, "b.txt"), "to": at(&p, "sub/b.txt")},
            {"op": "create", "path": at(&p, "c.txt"), "content": "c\n", "mode": "0600"},
        ]});
        std::fs::write(p.join("req.json"), req.to_string()).unwrap();
        let patch = format!(
            "*** Begin Patch\n*** Update File: {}\n-d\n+D\n*** Delete File: {}\n*** End Patch\n",
            at(&p, "d.txt"),
            at(&p, "c.txt")
        );
        std::fs::write(p.join("p.patch"), patch).unwrap();
        let run = |args: &[&str]| {
            let o = std::process::Command::new(&example)
                .args(args)
                .env("AS_EDIT_HELPER", helper)
                .current_dir(&p)
                .output()
                .unwrap();
            (
                String::from_utf8(o.stdout)
                    .unwrap()
                    .replace(&at(&p, ""), "@"),
                o.status.code().unwrap(),
            )
        };
        assert_eq!(
            run(&["--files", "req.json"]),
            (
                format!("applied 1 in 4 files ({via})\nedit @a.txt (1)\nmove @b.txt -> @sub/b.txt (0)\ncreate @c.txt (0)\n"),
                0
            )
        );
        {
            assert_eq!(
                run(&["--patch", "p.patch"]),
                (
                    format!("applied 1 in 2 files ({via})\nedit @d.txt (1)\ndelete @c.txt (0)\n"),
                    0
                )
            );
            assert_eq!(std::fs::read(p.join("d.txt")).unwrap(), b"D\n");
            assert!(!p.join("c.txt").exists());
        }
        assert_eq!(std::fs::read(p.join("a.txt")).unwrap(), b"A\n");
        assert_eq!(std::fs::read(p.join("sub/b.txt")).unwrap(), b"b\n");
        assert_eq!(
            run(&["--files", "p.patch"]).1,
            2,
            "not JSON: an invocation error"
        );
    }
}

#[test]
fn a_helper_older_than_protocol_3_is_never_sent_a_transaction() {
    let d = scratch();
    let p = d.path();
    four_files(p);
    let script = "#!/bin/sh\ncase \"$1\" in --version) echo 'as-edit 0.1.0 (protocol 2; test)'; exit 0;; esac\necho called >&2\nexit 3\n";
    let helper = write_file(p, "old-helper", script.as_bytes(), 0o755);
    let mut ed = host::Editor::new(Flaky::default(), helper.to_string_lossy());
    let r = ed.transaction(&[edit(at(p, "a.txt"), "a", "A")]).unwrap();
    assert_eq!((r.count, r.files, r.via), (1, 1, Via::Transfer));
    let r = ed
        .apply_patch(&format!(
            "*** Begin Patch\n*** Update File: {}\n-b\n+B\n*** End Patch",
            at(p, "b.txt")
        ))
        .unwrap();
    assert_eq!((r.count, r.files, r.via), (1, 1, Via::Transfer));
    // One probe, cached; the helper itself never ran a request.
    assert_eq!(
        ed.sandbox.commands,
        vec![format!("'{}' '--version'", helper.display()).into_bytes()]
    );
    assert_eq!(std::fs::read(p.join("a.txt")).unwrap(), b"A\n");
    assert_eq!(std::fs::read(p.join("b.txt")).unwrap(), b"B\n");
}

/// `files` is the distinct paths whose entry changed (src/txn/txn.md),
/// natively and by transfer alike, for chains of hunks on one file and for
/// the `{"files"}` ops that spell them: a move's two paths count, a path
/// made and removed again does not (the transfer path counted files, the
/// helper something in between).
#[test]
fn chains_count_the_same_paths_natively_and_by_transfer() {
    let setup = |p: &Path| write_file(p, "a.txt", b"one\ntwo\n", 0o644);
    let patch = |body: &str| format!("*** Begin Patch\n{body}*** End Patch\n");
    let cases: Vec<(String, u64)> = vec![
        (
            patch("*** Update File: {d}a.txt\n*** Move to: {d}b.txt\n@@\n-one\n+1\n*** Update File: {d}b.txt\n@@\n-two\n+2\n"),
            2,
        ),
        (
            patch("*** Update File: {d}a.txt\n*** Move to: {d}b.txt\n@@\n-one\n+1\n*** Update File: {d}b.txt\n*** Move to: {d}c.txt\n@@\n-1\n+uno\n"),
            2,
        ),
        (
            patch("*** Add File: {d}n.txt\n+draft\n*** Update File: {d}n.txt\n@@\n-draft\n+final\n"),
            1,
        ),
        (
            patch("*** Add File: {d}n.txt\n+draft\n*** Delete File: {d}n.txt\n*** Update File: {d}a.txt\n@@\n-one\n+1\n"),
            1,
        ),
    ];
    for (text, want) in cases {
        let [native, transfer] = both(&|p| drop(setup(p)), &|ed, p| {
            let r = ed.apply_patch(&text.replace("{d}", &at(p, "")));
            assert_eq!(r.as_ref().map(|a| a.files).ok(), Some(want), "{text}");
            r
        });
        assert_eq!(native, transfer, "{text}");
    }
    let move_chain = |p: &Path| {
        vec![
            FileOp::Move {
                path: at(p, "a.txt").into(),
                to: at(p, "b.txt").into(),
                overwrite: false,
                edits: vec![],
                expect_sha256: None,
            },
            FileOp::Move {
                path: at(p, "b.txt").into(),
                to: at(p, "c.txt").into(),
                overwrite: false,
                edits: vec![],
                expect_sha256: None,
            },
        ]
    };
    let [native, transfer] = both(&|p| drop(setup(p)), &|ed, p| {
        let r = ed.transaction(&move_chain(p));
        assert_eq!(r.as_ref().map(|a| a.files).ok(), Some(2));
        r
    });
    assert_eq!(native, transfer);
}

/// Every entry under `dir` with its mode: relative path → (bytes, or None
/// for a directory, and the permission bits).
fn tree_modes(dir: &Path) -> BTreeMap<String, (Option<Vec<u8>>, u32)> {
    use std::os::unix::fs::PermissionsExt;
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let m = std::fs::symlink_metadata(&p).unwrap();
            let rel = p.strip_prefix(dir).unwrap().to_string_lossy().into_owned();
            let mode = m.permissions().mode() & 0o7777;
            if m.is_dir() {
                out.insert(rel + "/", (None, mode));
                stack.push(p);
            } else if m.file_type().is_symlink() {
                let t = std::fs::read_link(&p).unwrap();
                out.insert(rel, (Some(t.into_os_string().into_encoded_bytes()), 0));
            } else {
                out.insert(rel, (Some(std::fs::read(&p).unwrap()), mode));
            }
        }
    }
    out
}

fn create(path: String, content: &str, mode: Option<u32>) -> FileOp {
    FileOp::Create {
        path: path.into(),
        content: content.into(),
        overwrite: false,
        mode,
    }
}

/// The transfer path's creates get their mode (0644 by default), less the
/// umask, as the helper's do; a created file moved on keeps it; a file a
/// create overwrites gets the mode the create gives (it once kept its
/// own), and keeps its own when none is given. The upload's mode
/// was all they got (0644 whatever was asked).
#[test]
fn a_create_gets_its_mode_alike_natively_and_by_transfer() {
    let setup = |p: &Path| {
        write_file(p, "kept.txt", b"old\n", 0o640);
    };
    let ops = |p: &Path| {
        vec![
            create(at(p, "run.sh"), "#!/bin/sh\n", Some(0o755)),
            create(at(p, "plain.txt"), "p\n", None),
            create(at(p, "secret/key"), "k\n", Some(0o600)),
            FileOp::Move {
                path: at(p, "secret/key").into(),
                to: at(p, "moved/key").into(),
                overwrite: false,
                edits: vec![],
                expect_sha256: None,
            },
            FileOp::Create {
                path: at(p, "kept.txt").into(),
                content: "new\n".into(),
                overwrite: true,
                mode: Some(0o777),
            },
        ]
    };
    let run = |helper: &str| {
        let d = scratch();
        let p = d.path().canonicalize().unwrap();
        setup(&p);
        let r = host::Editor::new(LocalShell::new(), helper).transaction(&ops(&p));
        (r.map(|a| a.via).unwrap(), tree_modes(&p))
    };
    let (native, transfer) = (run(BIN), run(MISSING));
    assert_eq!((native.0, transfer.0), (Via::Native, Via::Transfer));
    assert_eq!(transfer.1, native.1);
    // SAFETY: umask(2) twice, to read it back unchanged.
    let mask = unsafe {
        let m = libc::umask(0o022);
        libc::umask(m);
        m
    } as u32;
    let mode = |n: &str| transfer.1[n].1;
    assert_eq!(mode("run.sh"), 0o755 & !mask);
    assert_eq!(mode("moved/key"), 0o600 & !mask);
    assert_eq!(mode("plain.txt"), 0o644 & !mask);
    assert_eq!(mode("kept.txt"), 0o777 & !mask);
}

/// A backend that cannot set modes: the default mode is what its upload
/// gives, so a default create goes on; another mode fails the write, and
/// the file is removed again.
#[test]
fn a_backend_without_set_mode_refuses_a_create_with_another_mode() {
    struct NoMode(LocalShell);
    impl Sandbox for NoMode {
        fn exec(&mut self, c: &[u8], s: Option<&[u8]>) -> io::Result<host::ExecOutput> {
            self.0.exec(c, s)
        }
        fn download(&mut self, p: &Path) -> io::Result<Vec<u8>> {
            self.0.download(p)
        }
        fn upload(&mut self, p: &Path, b: &[u8]) -> io::Result<()> {
            self.0.upload(p, b)
        }
        fn remove(&mut self, p: &Path) -> io::Result<()> {
            self.0.remove(p)
        }
    }
    let d = scratch();
    let p = d.path();
    let mut ed = host::Editor::new(NoMode(LocalShell::new()), MISSING);
    let a = ed
        .transaction(&[create(at(p, "a.txt"), "a\n", None)])
        .unwrap();
    assert_eq!((a.via, a.files), (Via::Transfer, 1));
    let e = ed
        .transaction(&[create(at(p, "run.sh"), "x\n", Some(0o755))])
        .unwrap_err();
    let (tok, detail, _, _) = refusal(&e);
    assert_eq!(tok, "write_failed");
    assert_eq!(
        detail,
        format!(
            "file 1 of 1 ({0}): uploading {0}: uploaded, but setting its mode 0755 failed: this backend cannot set a file's mode; the files already written were restored",
            at(p, "run.sh")
        )
    );
    assert_eq!(tree(p), files(&[("a.txt", "a\n")]));
}

/// After a failed write the transfer path removes the directories it made
/// for creates and moves (deepest first), and only those: a directory that
/// was there stays, empty as it was. They were all left behind.
#[test]
fn a_rollback_removes_exactly_the_directories_the_transfer_made() {
    let ops = |p: &Path| {
        vec![
            create(at(p, "new/deep/er/c.txt"), "c\n", None),
            create(at(p, "empty/x.txt"), "x\n", None),
            FileOp::Move {
                path: at(p, "d.txt").into(),
                to: at(p, "new/other/e.txt").into(),
                overwrite: false,
                edits: vec![],
                expect_sha256: None,
            },
            edit(at(p, "a.txt"), "a", "A"),
        ]
    };
    // Writes: c (upload), x (upload), e (upload), a (upload), d (remove).
    for k in 1..=5 {
        let d = scratch();
        let p = d.path();
        four_files(p);
        std::fs::create_dir(p.join("empty")).unwrap();
        let before = tree(p);
        let mut ed = host::Editor::new(
            Flaky {
                fail: vec![k],
                ..Flaky::default()
            },
            MISSING,
        );
        let e = ed.transaction(&ops(p)).unwrap_err();
        let (tok, detail, _, _) = refusal(&e);
        assert_eq!(tok, "write_failed", "k={k}: {detail}");
        assert!(
            !detail.contains("directories it made were left"),
            "{detail}"
        );
        assert_eq!(tree(p), before, "k={k}: every file and directory as it was");
    }
}

/// Two spellings of one file (`./`, `//`, `dir/..`, a symlinked directory)
/// are one file on the transfer path, as they are to the helper: the ops
/// chain. They were separate files (the second edit did not see the first).
#[test]
fn spellings_of_one_file_chain_alike_natively_and_by_transfer() {
    let setup = |p: &Path| {
        write_file(p, "a.txt", b"one\n", 0o644);
        std::fs::create_dir(p.join("dir")).unwrap();
        write_file(p, "dir/b.txt", b"two\n", 0o644);
        std::os::unix::fs::symlink("dir", p.join("link")).unwrap();
    };
    let ops = |p: &Path| {
        let s = |rel: &str| format!("{}/{rel}", p.display());
        vec![
            edit(s("a.txt"), "one", "ONE"),
            edit(s("./a.txt"), "ONE", "1"),
            edit(s("dir//../a.txt"), "1", "uno"),
            edit(s("dir/b.txt"), "two", "TWO"),
            edit(s("link/b.txt"), "TWO", "2"),
            FileOp::Insert {
                path: s("link/./b.txt").into(),
                line: 1,
                text: "dos".into(),
            },
        ]
    };
    let [native, transfer] = native_and_transfer(&setup, &ops);
    assert_eq!(transfer.0, native.0, "results");
    assert_eq!(transfer.2, native.2, "trees");
    assert_eq!(native.2["a.txt"], Some(b"uno\n".to_vec()));
    assert_eq!(native.2["dir/b.txt"], Some(b"2\ndos\n".to_vec()));
}

/// A create under a regular file (`f.txt/x`) is `file_not_found` on both
/// paths, nothing written. The transfer path said `read_failed`.
#[test]
fn a_create_under_a_file_is_file_not_found_alike_natively_and_by_transfer() {
    let setup = |p: &Path| {
        write_file(p, "f.txt", b"f\n", 0o644);
        write_file(p, "a.txt", b"a\n", 0o644);
    };
    let ops = |p: &Path| {
        vec![
            edit(at(p, "a.txt"), "a", "A"),
            create(at(p, "f.txt/x"), "x\n", None),
        ]
    };
    let [native, transfer] = native_and_transfer(&setup, &ops);
    assert!(native.0.starts_with("Known(FileNotFound)"), "{}", native.0);
    assert_eq!(
        transfer.0,
        "Known(FileNotFound) Some(\"file 2 of 2 (@/f.txt/x): @/f.txt/x: Not a directory (os error 20)\") \
         None None Some(TxnAt { file: 2, path: Some(\"@/f.txt/x\"), chunk: None, rolled_back: false, partial: [] })"
    );
    assert_eq!(transfer.2, native.2, "trees");
    assert_eq!(native.2, files(&[("a.txt", "a\n"), ("f.txt", "f\n")]));
}

/// A host-side op's mode is 3 or 4 octal digits, as the helper's parser
/// takes it: a sign is no digit. `+64` was read as 0o64.
#[test]
fn a_file_ops_mode_takes_the_helpers_octal_digits_only() {
    let mode = |m: &str| {
        serde_json::from_value::<FileOp>(serde_json::json!(
            {"op": "create", "path": "x", "content": "", "mode": m}
        ))
        .map(|op| match op {
            FileOp::Create { mode, .. } => mode,
            _ => unreachable!(),
        })
        .map_err(|e| e.to_string())
    };
    assert_eq!(mode("0644"), Ok(Some(0o644)));
    assert_eq!(mode("644"), Ok(Some(0o644)));
    assert_eq!(mode("7777"), Ok(Some(0o7777)));
    for bad in ["+64", "+644", "07777", "abc", "8888", "64", " 644"] {
        assert_eq!(
            mode(bad),
            Err(format!("mode takes 3 or 4 octal digits, got {bad:?}")),
            "{bad}"
        );
    }
}

/// A `..` after a directory that does not exist names nothing, as the
/// helper walks it: `new/sub/../x` is `file_not_found`, nothing written.
/// The transfer path made `new/sub` and wrote `new/x` a second time (two
/// keys for one file), over the first create.
#[test]
fn a_dotdot_after_a_missing_directory_is_file_not_found_alike() {
    let ops = |p: &Path| {
        vec![
            create(at(p, "new/x"), "x\n", None),
            create(at(p, "new/sub/../x"), "y\n", None),
        ]
    };
    let [native, transfer] = native_and_transfer(&|_: &Path| {}, &ops);
    assert_eq!(
        native.0,
        "Known(FileNotFound) Some(\"file 2 of 2 (@/new/sub/../x): @/new/sub/../x does not exist\") \
         None None Some(TxnAt { file: 2, path: Some(\"@/new/sub/../x\"), chunk: None, rolled_back: false, partial: [] })"
    );
    assert_eq!(transfer.0, native.0, "results");
    assert_eq!(transfer.2, native.2, "trees");
    assert_eq!(native.2, files(&[]));
}

/// A file deleted and created again with the same bytes is a new file
/// with the create's mode, and counted as a changed path, on both paths.
/// The transfer path wrote it (mode and all) but said `"files":0`.
#[test]
fn a_file_deleted_and_created_again_alike_is_one_changed_file_alike() {
    let setup = |p: &Path| {
        write_file(p, "k.txt", b"k\n", 0o600);
    };
    let ops = |p: &Path| {
        vec![
            FileOp::Delete {
                path: at(p, "k.txt").into(),
                recursive: false,
                expect_sha256: None,
            },
            create(at(p, "k.txt"), "k\n", Some(0o640)),
        ]
    };
    let [native, transfer] = native_and_transfer(&setup, &ops);
    assert!(
        native.0.starts_with("Applied { count: 0, files: 1,"),
        "{}",
        native.0
    );
    assert_eq!(transfer.0, native.0, "results");
    let run = |helper: &str| {
        let d = scratch();
        let p = d.path().canonicalize().unwrap();
        setup(&p);
        let r = host::Editor::new(LocalShell::new(), helper).transaction(&ops(&p));
        (r.map(|a| a.via).unwrap(), tree_modes(&p))
    };
    let (n, t) = (run(BIN), run(MISSING));
    assert_eq!((n.0, t.0), (Via::Native, Via::Transfer));
    assert_eq!(t.1, n.1, "bytes and modes");
}

/// A backend whose upload keeps a file's mode only when its last download
/// was that file, and gives 0644 otherwise (docker's `cp`, which takes
/// the mode and owner from the last download's archive header).
struct LastMeta {
    inner: Flaky,
    last: Option<std::path::PathBuf>,
}

impl Sandbox for LastMeta {
    fn exec(&mut self, c: &[u8], stdin: Option<&[u8]>) -> io::Result<host::ExecOutput> {
        self.inner.exec(c, stdin)
    }
    fn download(&mut self, p: &Path) -> io::Result<Vec<u8>> {
        self.last = Some(p.to_path_buf());
        self.inner.download(p)
    }
    fn upload(&mut self, p: &Path, b: &[u8]) -> io::Result<()> {
        use std::os::unix::fs::PermissionsExt;
        self.inner.upload(p, b)?;
        if self.last.as_deref() != Some(p) {
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o644))?;
        }
        Ok(())
    }
    fn remove(&mut self, p: &Path) -> io::Result<()> {
        self.inner.remove(p)
    }
}

/// A rollback re-uploads each original right after downloading it, so a
/// backend like docker restores its mode (and owner) too. The original
/// came back with the bytes but 0644: its upload followed another file's
/// download.
#[test]
fn a_rollback_restores_each_original_with_its_mode() {
    let d = scratch();
    let p = d.path();
    write_file(p, "a.txt", b"a\n", 0o600);
    write_file(p, "b.txt", b"b\n", 0o640);
    let before = tree_modes(p);
    let mut ed = host::Editor::new(
        LastMeta {
            inner: Flaky {
                fail: vec![2],
                ..Flaky::default()
            },
            last: None,
        },
        MISSING,
    );
    let e = ed
        .transaction(&[
            edit(at(p, "a.txt"), "a", "A"),
            edit(at(p, "b.txt"), "b", "B"),
        ])
        .unwrap_err();
    let (tok, detail, _, at) = refusal(&e);
    assert_eq!((tok, at.rolled_back), ("write_failed", true), "{detail}");
    assert_eq!(tree_modes(p), before);
}

/// Two spellings of a file in a directory that does not exist yet (one
/// through a symlinked directory's `..`, one through `dir/..`) are one file, as
/// to the helper: the second create is `file_exists`. They were two
/// files on the transfer path: both created, the second over the first.
#[test]
fn spellings_of_a_file_in_a_missing_directory_are_one_file_alike() {
    let setup = |p: &Path| {
        std::fs::create_dir(p.join("dir")).unwrap();
        std::fs::create_dir_all(p.join("deep/er")).unwrap();
        std::os::unix::fs::symlink("deep/er", p.join("link")).unwrap();
    };
    for second in ["dir/../new/x", "link/../../new/x"] {
        let ops = |p: &Path| {
            vec![
                create(at(p, "new/x"), "x\n", None),
                create(at(p, second), "y\n", None),
            ]
        };
        let [native, transfer] = native_and_transfer(&setup, &ops);
        assert!(native.0.starts_with("Known(FileExists)"), "{}", native.0);
        assert_eq!(transfer.0, native.0, "{second}: results");
        assert_eq!(transfer.2, native.2, "{second}: trees");
    }
}

/// A create in a directory it makes is reported at its resolved path on
/// both paths (`dir/../new/./x` is `new/x`). The transfer path reported
/// the path as written there: only existing directories were resolved.
#[test]
fn a_create_in_a_new_directory_is_reported_resolved_alike() {
    let setup = |p: &Path| {
        std::fs::create_dir(p.join("dir")).unwrap();
    };
    let ops = |p: &Path| {
        vec![
            create(at(p, "dir/../new/./x"), "x\n", None),
            create(at(p, "dir/../dir/y"), "y\n", None),
            create(at(p, "new2/sub/z"), "z\n", None),
        ]
    };
    let [native, transfer] = native_and_transfer(&setup, &ops);
    assert!(native.0.contains("path: \"@/new/x\""), "{}", native.0);
    assert_eq!(transfer.0, native.0);
    assert_eq!(transfer.2, native.2);
}
