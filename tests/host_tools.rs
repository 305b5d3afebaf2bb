//! The host library's toolset through `LocalShell`: the
//! typed answers of `stat`, `list`, `read`, `glob`, `grep` over awkward
//! names, `read`'s transfer fallback against the helper over the same
//! files (identical answers), `read_all`, the writes natively and without
//! the helper, and the ops that need the helper refusing clearly.

mod common;
use common::*;

use as_edit_host::{
    self as host, Applied, DeleteRequest, EditError, EntryType, FileChange, FileEntry, GlobRequest,
    GrepFile, GrepLine, GrepOutput, GrepRequest, ListEntry, ListRequest, LocalShell, MkdirRequest,
    MoveRequest, Next, RawReadRequest, ReadRequest, Sort, StatRequest, TextPage, Via, WriteRequest,
};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

const MISSING: &str = "/nonexistent/as-edit";

fn editor(helper: &str) -> host::Editor<LocalShell> {
    host::Editor::new(LocalShell::new(), helper)
}

fn token(e: &EditError) -> (String, Option<String>, Via) {
    match e {
        EditError::Failed {
            kind, detail, via, ..
        } => (kind.as_str().to_owned(), detail.clone(), *via),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

fn bytes_path(dir: &Path, name: &[u8]) -> PathBuf {
    dir.join(OsStr::from_bytes(name))
}

fn mtime_ns(p: &Path) -> u64 {
    let m = std::fs::symlink_metadata(p).unwrap();
    m.mtime() as u64 * 1_000_000_000 + m.mtime_nsec() as u64
}

/// The awkward names: `:`, a newline, spaces, a leading `-`, a tab, not
/// UTF-8, a dotfile; the one at index i holds `i needle\n`.
const NAMES: &[&[u8]] = &[
    b"a:b",
    b"new\nline",
    b"with space",
    b"-lead",
    b"tab\there",
    b"\xff\xfe.txt",
    b".hidden",
];

fn awkward_tree() -> tempfile::TempDir {
    let d = scratch();
    for (i, n) in NAMES.iter().enumerate() {
        std::fs::write(bytes_path(d.path(), n), format!("{i} needle\n")).unwrap();
    }
    d
}

fn sorted_names() -> Vec<&'static [u8]> {
    let mut v = NAMES.to_vec();
    v.sort();
    v
}

#[test]
fn stat_list_glob_grep_answer_exact_typed_names() {
    let d = awkward_tree();
    let mut ed = editor(BIN);
    // stat: request order, lossless names, lstat's fields; a missing path.
    let mut paths: Vec<PathBuf> = NAMES.iter().map(|n| bytes_path(d.path(), n)).collect();
    paths.push(d.path().join("nothing"));
    let st = ed.stat(&StatRequest::new(paths.clone())).unwrap();
    assert!(!st.truncated && st.next.is_none());
    assert_eq!(st.entries.len(), NAMES.len() + 1);
    for (e, p) in st.entries.iter().zip(&paths[..NAMES.len()]) {
        let m = std::fs::metadata(p).unwrap();
        assert_eq!(&e.path, p);
        assert_eq!(e.kind, EntryType::File);
        assert_eq!(e.size, Some(m.len()));
        assert_eq!(e.mtime_ns, Some(mtime_ns(p)));
        assert_eq!(e.mode, Some(m.mode() & 0o7777));
        assert_eq!((e.target.as_ref(), e.resolved), (None, None));
    }
    let last = st.entries.last().unwrap();
    assert_eq!(
        (&last.path, last.kind, last.size),
        (&paths[NAMES.len()], EntryType::Missing, None)
    );

    // list: bytewise order; hidden:false leaves out and counts the dotfile.
    let l = ed.list(&ListRequest::new(d.path())).unwrap();
    let want: Vec<ListEntry> = sorted_names()
        .into_iter()
        .map(|n| {
            let p = bytes_path(d.path(), n);
            ListEntry {
                size: std::fs::metadata(&p).unwrap().len(),
                mtime_ns: mtime_ns(&p),
                kind: EntryType::File,
                path: p,
            }
        })
        .collect();
    assert_eq!(l.entries, want);
    assert_eq!(
        (l.total, l.truncated, l.next, l.hidden_count),
        (7, false, None, None)
    );
    let l = ed.list(&ListRequest::new(d.path()).hidden(false)).unwrap();
    assert_eq!((l.total, l.hidden_count), (6, Some(1)));
    assert!(l.entries.iter().all(|e| e.path != d.path().join(".hidden")));
    // A page: limit 2, then `next`.
    let l = ed.list(&ListRequest::new(d.path()).limit(2u64)).unwrap();
    assert_eq!((l.entries.len(), l.truncated), (2, true));
    assert_eq!(
        l.next,
        Some(Next {
            offset: Some(2),
            ..Next::default()
        })
    );
    let l2 = ed.list(&ListRequest::new(d.path()).offset(2u64)).unwrap();
    assert_eq!(l2.entries, want[2..]);

    // glob: relative to `path`, each name lossless.
    let g = ed.glob(&GlobRequest::new("*").path(d.path())).unwrap();
    let files: Vec<FileEntry> = want
        .iter()
        .map(|e| FileEntry {
            path: e.path.clone(),
            size: e.size,
            mtime_ns: e.mtime_ns,
        })
        .collect();
    assert_eq!((g.entries, g.total, g.truncated), (files.clone(), 7, false));
    let g = ed
        .glob(&GlobRequest::new("*:*").path(d.path()).sort(Sort::Mtime))
        .unwrap();
    let ab: Vec<FileEntry> = files
        .iter()
        .filter(|f| f.path.ends_with("a:b"))
        .cloned()
        .collect();
    assert_eq!(g.entries, ab, "only a:b");

    // grep: every match, path then line order, names intact.
    let gr = ed.grep(&GrepRequest::new("needle").path(d.path())).unwrap();
    let lines: Vec<GrepLine> = sorted_names()
        .into_iter()
        .map(|n| GrepLine {
            path: bytes_path(d.path(), n),
            line: 1,
            text: format!("{} needle", NAMES.iter().position(|m| *m == n).unwrap()),
            cut: false,
            context: false,
        })
        .collect();
    assert_eq!(gr.matches, lines);
    assert_eq!(
        (gr.files_searched, gr.skipped_binary, gr.truncated),
        (7, 0, false)
    );
    let gr = ed
        .grep(
            &GrepRequest::new("NEEDLE")
                .path(d.path())
                .ignore_case(true)
                .glob("-*")
                .output(GrepOutput::Count),
        )
        .unwrap();
    assert_eq!(
        gr.files,
        vec![GrepFile {
            path: d.path().join("-lead"),
            count: Some(1)
        }]
    );
}

/// Files for the read parity: CRLF, a lone CR, not UTF-8, a NUL, empty,
/// no final newline, long lines, non-ASCII, a split-able multi-byte run.
fn read_tree() -> (tempfile::TempDir, Vec<PathBuf>) {
    let d = scratch();
    let long: String = (0..400).map(|i| format!("line {i} é\t\"x\"\n")).collect();
    let wide = "€😀\u{1}\n".repeat(300);
    let late = [b"fine\n".repeat(20_000).as_slice(), b"\xc3("].concat();
    let files: &[(&str, &[u8])] = &[
        ("crlf", b"one\r\ntwo\r\nthree\r\n"),
        ("lone-cr", b"a\rb\rc"),
        ("mixed", b"a\r\nb\nc\rd\n\n"),
        ("latin1", b"ok\ncaf\xe9\n"),
        ("nul", b"a\nb\0c\n"),
        ("empty", b""),
        ("no-final", b"x\ny"),
        ("long", long.as_bytes()),
        ("wide", wide.as_bytes()),
        ("late-bad", &late),
    ];
    let paths = files
        .iter()
        .map(|(n, b)| write_file(d.path(), n, b, 0o644))
        .collect();
    (d, paths)
}

fn text_requests(p: &Path) -> Vec<ReadRequest> {
    let r = || ReadRequest::new(p);
    vec![
        r(),
        r().start(2u64),
        r().start(2u64).limit(1u64),
        r().start(3u64).limit(2u64),
        r().start(1000u64),
        r().start(1000u64).limit(5u64),
        r().numbers(true),
        r().numbers(true).start(2u64).max_columns(3u64),
        r().max_columns(1u64),
        r().max_bytes(1024u64),
        r().max_bytes(1024u64).numbers(true).start(7u64),
        r().limit(0u64),
        r().start(0u64),
    ]
}

fn raw_requests(p: &Path) -> Vec<RawReadRequest> {
    let r = || RawReadRequest::new(p);
    vec![
        r(),
        r().offset(1u64),
        r().offset(2u64).length(3u64),
        r().offset(1_000_000u64),
        r().length(0u64),
        r().max_bytes(1024u64),
        r().max_bytes(1024u64).offset(700u64).length(2000u64),
    ]
}

/// A result with `via` set aside (the one field the paths differ in by
/// design), errors as their token and detail.
fn same<T: PartialEq + std::fmt::Debug>(
    native: Result<T, EditError>,
    transfer: Result<T, EditError>,
    what: &str,
) {
    match (native, transfer) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "{what}"),
        (Err(a), Err(b)) => {
            let (ta, da, va) = token(&a);
            let (tb, db, vb) = token(&b);
            assert_eq!((ta, da), (tb, db), "{what}");
            assert_eq!((va, vb), (Via::Native, Via::Transfer), "{what}");
        }
        (a, b) => panic!("{what}: native {a:?}, transfer {b:?}"),
    }
}

#[test]
fn reads_through_the_fallback_answer_as_the_helper_does() {
    let (d, paths) = read_tree();
    let mut native = editor(BIN);
    let mut transfer = editor(MISSING);
    let mut not_text = 0;
    for p in &paths {
        for req in text_requests(p) {
            let a = native.read(&req).map(|t| {
                assert_eq!(t.via, Via::Native);
                TextPage {
                    via: Via::Transfer,
                    ..t
                }
            });
            let b = transfer.read(&req);
            if let Ok(t) = &b {
                assert_eq!(t.via, Via::Transfer);
            }
            not_text += usize::from(matches!(&b, Err(e) if e.token() == Some("not_text")));
            same(a, b, &format!("{req:?}"));
        }
        for req in raw_requests(p) {
            let a = native.read_bytes(&req).map(|t| host::BytesPage {
                via: Via::Transfer,
                ..t
            });
            same(a, transfer.read_bytes(&req), &format!("{req:?}"));
        }
    }
    assert!(not_text >= 3, "latin1, nul, late-bad were read as text");
    // A missing file, a directory: the same tokens and words.
    for p in [d.path().join("none"), d.path().to_path_buf()] {
        same(
            native.read(&ReadRequest::new(&p)),
            transfer.read(&ReadRequest::new(&p)),
            &p.display().to_string(),
        );
    }
    // A bad request is refused by the same parser, before any download.
    same(
        native.read(&ReadRequest::new(&paths[0]).max_bytes(5u64)),
        transfer.read(&ReadRequest::new(&paths[0]).max_bytes(5u64)),
        "max_bytes 5",
    );
}

#[test]
fn read_all_follows_next_within_its_bound() {
    let d = scratch();
    let body: String = (1..=400).map(|i| format!("line {i} é\r\n")).collect();
    let p = write_file(d.path(), "long", body.as_bytes(), 0o644);
    let lines: Vec<&str> = body.split_inclusive("\r\n").collect();
    for helper in [BIN, MISSING] {
        let mut ed = editor(helper);
        let via = if helper == BIN {
            Via::Native
        } else {
            Via::Transfer
        };
        // Pages of at most 1024 bytes: many requests, one whole text.
        let small = ReadRequest::new(&p).max_bytes(1024u64);
        assert!(
            ed.read(&small).unwrap().truncated,
            "one page is not the file"
        );
        let all = ed.read_all(&small, 1 << 20).unwrap();
        let whole = ed.read(&ReadRequest::new(&p)).unwrap();
        assert_eq!(all, whole, "{helper}");
        assert_eq!(
            (all.end, all.eof, all.lines, all.via),
            (400, true, Some(400), via)
        );
        // A range: lines 5 to 304, whatever the pages.
        let r = ed
            .read_all(&small.clone().start(5u64).limit(300u64), 1 << 20)
            .unwrap();
        assert_eq!(r.text, lines[4..304].concat());
        assert_eq!(
            (r.start, r.end, r.eof, r.truncated, r.next),
            (5, 304, false, false, None)
        );
        // Bounded: whole lines within 2000 bytes, and the `next` that continues.
        let cut = ed.read_all(&small, 2000).unwrap();
        let k = cut.end as usize;
        assert_eq!(cut.text, lines[..k].concat());
        assert!(cut.text.len() <= 2000 && cut.text.len() + lines[k].len() > 2000 - 1024);
        assert_eq!((cut.truncated, cut.eof), (true, false));
        // `offset`: where line `start` begins (and its `check`), so the next
        // page is read from there.
        let n = cut.next.unwrap();
        assert_eq!(
            (n.start, n.offset, n.length),
            (Some(cut.end + 1), Some(cut.text.len() as u64), None)
        );
        let mut cont = small.clone().start(cut.end + 1);
        cont = cont.offset(n.offset.unwrap()).check(n.check.unwrap());
        let rest = ed.read_all(&cont, 1 << 20).unwrap();
        assert_eq!(cut.text.clone() + &rest.text, body);
        // Without the hint, the same.
        let plain = ed
            .read_all(&small.clone().start(cut.end + 1), 1 << 20)
            .unwrap();
        assert_eq!(plain, rest);
        // A bound below one page's text: nothing, and where to go on.
        let none = ed.read_all(&ReadRequest::new(&p), 5).unwrap();
        assert_eq!(
            (none.text.as_str(), none.end, none.truncated),
            ("", 0, true)
        );
        assert_eq!(none.next.unwrap().start, Some(1));
    }
}

/// `LocalShell`, counting its downloads.
struct Counting {
    inner: LocalShell,
    downloads: usize,
}

impl host::Sandbox for Counting {
    fn exec(&mut self, c: &[u8], s: Option<&[u8]>) -> std::io::Result<host::ExecOutput> {
        self.inner.exec(c, s)
    }
    fn download(&mut self, p: &Path) -> std::io::Result<Vec<u8>> {
        self.downloads += 1;
        self.inner.download(p)
    }
    fn upload(&mut self, p: &Path, b: &[u8]) -> std::io::Result<()> {
        self.inner.upload(p, b)
    }
}

#[test]
fn read_all_without_the_helper_downloads_the_file_once() {
    let d = scratch();
    let body: String = (1..=400).map(|i| format!("line {i}\n")).collect();
    let p = write_file(d.path(), "long", body.as_bytes(), 0o644);
    let sb = Counting {
        inner: LocalShell::new(),
        downloads: 0,
    };
    let mut ed = host::Editor::new(sb, MISSING);
    let small = ReadRequest::new(&p).max_bytes(1024u64);
    let all = ed.read_all(&small, 1 << 20).unwrap();
    assert_eq!((all.text.as_str(), all.via), (body.as_str(), Via::Transfer));
    // Pages of 1024 bytes: main downloaded the 3,292-byte file once a page.
    assert_eq!(ed.sandbox.downloads, 1);
    // Each call is its own snapshot; a single page is one download too.
    ed.read_all(&small, 1 << 20).unwrap();
    ed.read(&small).unwrap();
    assert_eq!(ed.sandbox.downloads, 3);
}

fn at(d: &Path, name: &str) -> String {
    d.join(name).to_str().unwrap().to_owned()
}

/// The writes of files, natively and without the helper: the same
/// answers (but `via`) and the same files left.
#[test]
fn file_writes_natively_and_through_the_fallback() {
    let mut answers: Vec<Vec<Applied>> = Vec::new();
    for helper in [BIN, MISSING] {
        let d = scratch();
        let mut ed = editor(helper);
        let via = if helper == BIN {
            Via::Native
        } else {
            Via::Transfer
        };
        let mut got = Vec::new();
        let f = at(d.path(), "sub dir/-a:b\nc");
        got.push(
            ed.write(&WriteRequest::new(&f, "one\n").mode(0o600))
                .unwrap(),
        );
        assert_eq!(std::fs::read(&f).unwrap(), b"one\n");
        assert_eq!(std::fs::metadata(&f).unwrap().mode() & 0o777, 0o600);
        // Create-exclusive by default: refused, the file as it was.
        let e = ed.write(&WriteRequest::new(&f, "two\n")).unwrap_err();
        assert_eq!(e.token(), Some("file_exists"), "{helper}");
        got.push(
            ed.write(&WriteRequest::new(&f, "two\n").overwrite(true))
                .unwrap(),
        );
        assert_eq!(std::fs::read(&f).unwrap(), b"two\n");
        // mv makes the destination's parents; refuses an existing one.
        let g = at(d.path(), "x/y/moved");
        got.push(ed.mv(&MoveRequest::new(&f, &g)).unwrap());
        assert!(!Path::new(&f).exists());
        assert_eq!(std::fs::read(&g).unwrap(), b"two\n");
        std::fs::write(d.path().join("other"), "o").unwrap();
        let e = ed
            .mv(&MoveRequest::new(at(d.path(), "other"), &g))
            .unwrap_err();
        assert_eq!(e.token(), Some("file_exists"));
        got.push(
            ed.mv(&MoveRequest::new(at(d.path(), "other"), &g).overwrite(true))
                .unwrap(),
        );
        assert_eq!(std::fs::read(&g).unwrap(), b"o");
        got.push(ed.delete(&DeleteRequest::new(&g)).unwrap());
        assert!(!Path::new(&g).exists());
        let e = ed.delete(&DeleteRequest::new(&g)).unwrap_err();
        assert_eq!(e.token(), Some("file_not_found"));
        for a in &got {
            assert_eq!(a.via, via);
        }
        answers.push(
            got.into_iter()
                .map(|a| Applied {
                    via: Via::Native,
                    changes: a
                        .changes
                        .into_iter()
                        .map(|c| FileChange {
                            path: c
                                .path
                                .to_str()
                                .unwrap()
                                .replace(d.path().to_str().unwrap(), "D")
                                .into(),
                            to: c.to.map(|t| {
                                t.to_str()
                                    .unwrap()
                                    .replace(d.path().to_str().unwrap(), "D")
                                    .into()
                            }),
                            ..c
                        })
                        .collect(),
                    ..a
                })
                .collect(),
        );
        let left: Vec<_> = std::fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left.len(), 2, "sub dir and x stay: {left:?}");
    }
    assert_eq!(answers[0], answers[1]);
}

/// Without the helper, the ops with no exact fallback say so, and
/// change nothing; `mkdir` goes through the backend.
#[test]
fn without_the_helper_the_walks_need_it_and_mkdir_falls_back() {
    let d = awkward_tree();
    let mut ed = editor(MISSING);
    let required = |r: Result<(), EditError>, op: &str| match r {
        Err(EditError::HelperRequired { op: o, why }) => {
            assert_eq!(o, op);
            assert!(!why.is_empty());
        }
        other => panic!("{op}: {other:?}"),
    };
    required(ed.stat(&StatRequest::new([d.path()])).map(drop), "stat");
    required(ed.list(&ListRequest::new(d.path())).map(drop), "list");
    required(
        ed.glob(&GlobRequest::new("*").path(d.path())).map(drop),
        "glob",
    );
    required(
        ed.grep(&GrepRequest::new("x").path(d.path())).map(drop),
        "grep",
    );
    let sub = at(d.path(), "sub");
    std::fs::create_dir(&sub).unwrap();
    std::fs::write(d.path().join("sub/f"), "f").unwrap();
    required(
        ed.delete(&DeleteRequest::new(&sub).recursive(true))
            .map(drop),
        "recursive delete",
    );
    assert_eq!(std::fs::read(d.path().join("sub/f")).unwrap(), b"f");
    // A directory as the source of a move, or as its existing destination.
    let to = at(d.path(), "elsewhere");
    required(
        ed.mv(&MoveRequest::new(&sub, &to)).map(drop),
        "directory move",
    );
    let onto = MoveRequest::new(at(d.path(), "a:b"), &sub).overwrite(true);
    required(ed.mv(&onto).map(drop), "directory move");
    assert!(!Path::new(&to).exists() && d.path().join("a:b").exists());
    assert_eq!(std::fs::read(d.path().join("sub/f")).unwrap(), b"f");
    let e = ed.stat(&StatRequest::new([d.path()])).unwrap_err();
    assert_eq!(
        e.to_string(),
        "stat needs the as-edit helper (protocol 4) in the sandbox: POSIX has no stat(1), and ls -l gives no nanoseconds"
    );
    // mkdir: one level, then -p; an existing one, a missing parent.
    let m = at(d.path(), "m");
    let a = ed.mkdir(&MkdirRequest::new(&m)).unwrap();
    assert_eq!(a.via, Via::Transfer);
    assert_eq!(
        a.changes,
        vec![FileChange {
            path: m.clone().into(),
            op: "mkdir".into(),
            ..FileChange::default()
        }]
    );
    assert!(Path::new(&m).is_dir());
    let e = ed.mkdir(&MkdirRequest::new(&m)).unwrap_err();
    assert_eq!(token(&e).0, "file_exists");
    let deep = at(d.path(), "p/q/r");
    let e = ed.mkdir(&MkdirRequest::new(&deep)).unwrap_err();
    assert_eq!(token(&e).0, "file_not_found");
    assert!(!d.path().join("p").exists());
    ed.mkdir(&MkdirRequest::new(&deep).parents(true)).unwrap();
    ed.mkdir(&MkdirRequest::new(&deep).parents(true)).unwrap();
    assert!(Path::new(&deep).is_dir());
    let e = ed
        .mkdir(&MkdirRequest::new(at(d.path(), "a:b")).parents(true))
        .unwrap_err();
    assert_eq!(token(&e).0, "file_exists");
}

/// The example's toolset subcommands over the awkward tree, natively
/// and without the helper: exact output lines.
#[test]
fn the_example_runs_the_toolset() {
    let example = Path::new(BIN).parent().unwrap().join("examples/host");
    if !example.exists() {
        return skip("the host example is not built (cargo test builds it by default)");
    }
    let d = awkward_tree();
    let dir = d.path().to_str().unwrap().to_owned();
    let run = |helper: &str, args: &[&str]| {
        let o = std::process::Command::new(&example)
            .args(args)
            .env("AS_EDIT_HELPER", helper)
            .output()
            .unwrap();
        let out = String::from_utf8(o.stdout).unwrap().replace(&dir, "D");
        (out, o.status.code().unwrap())
    };
    let ls = "file 9 \"D/-lead\"\nfile 9 \"D/.hidden\"\nfile 9 \"D/a:b\"\n\
              file 9 \"D/new\\nline\"\nfile 9 \"D/tab\\there\"\nfile 9 \"D/with space\"\n\
              file 9 \"D/\\xFF\\xFE.txt\"\ntotal 7\n";
    assert_eq!(run(BIN, &["ls", &dir]), (ls.to_owned(), 0));
    let grep = run(BIN, &["grep", "-i", "NEEDLE", &format!("{dir}/new\nline")]);
    assert_eq!(grep, ("\"D/new\\nline\":1:1 needle\n".to_owned(), 0));
    let glob = run(BIN, &["glob", "*:*", &dir]);
    assert_eq!(glob, ("9 \"D/a:b\"\ntotal 1\n".to_owned(), 0));
    let f = format!("{dir}/-lead");
    let (out, code) = run(BIN, &["read", &f]);
    assert_eq!(code, 0);
    assert!(
        out.starts_with("3 needle\n-- lines 1-1 of 1, sha256 "),
        "{out}"
    );
    assert!(out.ends_with(" (native)\n"));
    let (fell, code) = run(MISSING, &["read", &f]);
    assert_eq!(
        (fell.replace("(fallback: transfer)", "(native)"), code),
        (out, 0)
    );
    assert_eq!(
        run(MISSING, &["stat", &f]),
        (
            "stat needs the as-edit helper (protocol 4) in the sandbox: \
             POSIX has no stat(1), and ls -l gives no nanoseconds\n"
                .to_owned(),
            1
        )
    );
    let w = format!("{dir}/sub/new file");
    assert_eq!(
        run(MISSING, &["write", &w, "hi\n"]),
        (
            "applied 0 in 1 files (fallback: transfer)\ncreate D/sub/new file (0)\n".to_owned(),
            0
        )
    );
    let to = format!("{dir}/moved:here");
    assert_eq!(
        run(BIN, &["mv", &w, &to]),
        (
            "applied 0 in 2 files (native)\nmove D/sub/new file -> D/moved:here (0)\n".to_owned(),
            0
        )
    );
    assert_eq!(
        run(BIN, &["rm", &to]),
        (
            "applied 0 in 1 files (native)\ndelete D/moved:here (0)\n".to_owned(),
            0
        )
    );
    assert!(!Path::new(&to).exists() && !Path::new(&w).exists());
}

/// `mkdir` without the helper gives the helper's answers: made or not
/// (`files`), the same tokens and words, the same directories left.
#[test]
fn mkdir_by_the_backend_answers_as_the_helper_does() {
    let cases: &[(&str, bool)] = &[
        ("a", false),
        ("a", false),
        ("a", true),
        ("b/c/-d e", true),
        ("x/y", false),
        ("f/y", false),
        ("f/y", true),
        ("f", true),
        ("f", false),
        ("new\nline:dir", false),
    ];
    let mut runs = Vec::new();
    for helper in [BIN, MISSING] {
        let d = scratch();
        std::fs::write(d.path().join("f"), "f").unwrap();
        let mut ed = editor(helper);
        let norm = |s: String| s.replace(d.path().to_str().unwrap(), "D");
        let got: Vec<_> = cases
            .iter()
            .map(|(p, parents)| {
                let req = MkdirRequest::new(at(d.path(), p)).parents(*parents);
                match ed.mkdir(&req) {
                    Ok(a) => Ok((
                        a.count,
                        a.files,
                        norm(a.changes[0].path.to_str().unwrap().to_owned()),
                        a.changes[0].op.clone(),
                    )),
                    Err(e) => Err((e.token().unwrap().to_owned(), norm(e.to_string()))),
                }
            })
            .collect();
        let mut dirs: Vec<String> = Vec::new();
        let mut stack = vec![d.path().to_path_buf()];
        while let Some(p) = stack.pop() {
            for e in std::fs::read_dir(&p).unwrap() {
                let e = e.unwrap().path();
                dirs.push(norm(e.to_str().unwrap().to_owned()));
                if e.is_dir() {
                    stack.push(e);
                }
            }
        }
        dirs.sort();
        runs.push((got, dirs));
    }
    assert_eq!(runs[0], runs[1]);
    assert_eq!(
        runs[0].1,
        [
            "D/a",
            "D/b",
            "D/b/c",
            "D/b/c/-d e",
            "D/f",
            "D/new\nline:dir"
        ]
    );
    let files: Vec<_> = runs[0]
        .0
        .iter()
        .map(|r| r.as_ref().map(|a| a.1).map_err(|e| e.0.clone()))
        .collect();
    let exists = Err("file_exists".to_owned());
    let gone = Err("file_not_found".to_owned());
    assert_eq!(
        files,
        [
            Ok(1),
            exists.clone(),
            Ok(0),
            Ok(1),
            gone.clone(),
            gone.clone(),
            gone,
            exists.clone(),
            exists,
            Ok(1)
        ]
    );
}

/// The directory ops natively: a recursive delete of a tree of awkward
/// names, a directory's move (never into an existing directory), and
/// a transaction holding a `mkdir` without the helper.
#[test]
fn directory_writes_natively() {
    let d = awkward_tree();
    let mut ed = editor(BIN);
    let tree = at(d.path(), "t");
    ed.mkdir(&MkdirRequest::new(format!("{tree}/in/deep")).parents(true))
        .unwrap();
    std::fs::write(d.path().join("t/in/a:b"), "x").unwrap();
    std::os::unix::fs::symlink(d.path().join("a:b"), d.path().join("t/link")).unwrap();
    // Moved as a whole, parents made; not into an existing directory.
    let to = at(d.path(), "m/n");
    let a = ed.mv(&MoveRequest::new(&tree, &to)).unwrap();
    assert_eq!((a.via, a.changes[0].op.as_str()), (Via::Native, "move"));
    assert_eq!(std::fs::read(d.path().join("m/n/in/a:b")).unwrap(), b"x");
    ed.mkdir(&MkdirRequest::new(&tree)).unwrap();
    let e = ed.mv(&MoveRequest::new(&to, &tree)).unwrap_err();
    assert_eq!(e.token(), Some("file_exists"));
    assert!(!d.path().join("t/n").exists());
    // Without `recursive` a directory is refused; with it, gone, and the
    // link's target stays.
    let e = ed.delete(&DeleteRequest::new(&to)).unwrap_err();
    assert_eq!(e.token(), Some("file_not_found"));
    let a = ed.delete(&DeleteRequest::new(&to).recursive(true)).unwrap();
    assert_eq!((a.via, a.changes[0].op.as_str()), (Via::Native, "delete"));
    assert!(!Path::new(&to).exists());
    assert_eq!(std::fs::read(d.path().join("a:b")).unwrap(), b"0 needle\n");
    // Only the helper's: a transaction with a mkdir, without it.
    let e = editor(MISSING)
        .transaction(&[host::FileOp::Mkdir {
            path: at(d.path(), "z").into(),
            parents: false,
        }])
        .unwrap_err();
    assert!(
        matches!(&e, EditError::HelperRequired { op, .. } if op == "mkdir"),
        "{e:?}"
    );
    assert!(!d.path().join("z").exists());
}

/// Names that are not UTF-8 (Latin-1 `café`): written, made, moved,
/// edited in a transaction and deleted under exactly their bytes (sent as
/// `path_b64`/`to_b64`). Without the helper, the transaction's transfer
/// path, which keeps names as text, refuses them and writes nothing;
/// `mkdir` by the backend takes the bytes as they are.
#[test]
fn names_that_are_not_utf8_are_written_losslessly() {
    let d = scratch();
    let name = |n: &[u8]| bytes_path(d.path(), n);
    let names = |p: &Path| -> Vec<Vec<u8>> {
        let mut v: Vec<_> = (std::fs::read_dir(p).unwrap())
            .map(|e| e.unwrap().file_name().as_bytes().to_vec())
            .collect();
        v.sort();
        v
    };
    let mut ed = editor(BIN);
    let f = name(b"caf\xe9.txt");
    let a = ed.write(&WriteRequest::new(&f, "one\n")).unwrap();
    assert_eq!((a.via, a.changes[0].op.as_str()), (Via::Native, "create"));
    assert_eq!(std::fs::read(&f).unwrap(), b"one\n");
    let dir = name(b"r\xe9p");
    ed.mkdir(&MkdirRequest::new(&dir)).unwrap();
    assert!(dir.is_dir());
    let g = dir.join(OsStr::from_bytes(b"\xe9t\xe9"));
    ed.mv(&MoveRequest::new(&f, &g)).unwrap();
    assert_eq!(names(d.path()), [b"r\xe9p".to_vec()]);
    assert_eq!(names(&dir), [b"\xe9t\xe9".to_vec()]);
    let edit = host::FileOp::Edit {
        path: g.clone(),
        edits: vec![host::TxnEdit::new("one", "two")],
        expect_sha256: None,
    };
    assert_eq!(ed.transaction(&[edit]).unwrap().count, 1);
    assert_eq!(std::fs::read(&g).unwrap(), b"two\n");
    ed.delete(&DeleteRequest::new(&g)).unwrap();
    assert!(names(&dir).is_empty());

    let mut fb = editor(MISSING);
    let h = name(b"\xe9crit");
    match fb.write(&WriteRequest::new(&h, "x")) {
        Err(EditError::HelperRequired { op, .. }) => assert_eq!(op, "a name that is not UTF-8"),
        other => panic!("{other:?}"),
    }
    let e = fb.mv(&MoveRequest::new(&dir, name(b"x"))).unwrap_err();
    assert!(matches!(e, EditError::HelperRequired { .. }), "{e:?}");
    assert_eq!(names(d.path()), [b"r\xe9p".to_vec()]);
    let a = fb.mkdir(&MkdirRequest::new(name(b"d\xe9"))).unwrap();
    assert_eq!(a.via, Via::Transfer);
    assert_eq!(names(d.path()), [b"d\xe9".to_vec(), b"r\xe9p".to_vec()]);
}

/// Without the helper, a `read` of a FIFO is refused in the helper's
/// words, without waiting for a writer (it hung: the download opened it).
#[test]
fn a_fifo_read_through_the_fallback_is_refused_without_blocking() {
    let d = scratch();
    let p = d.path().join("p");
    let c = std::ffi::CString::new(p.as_os_str().as_bytes()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    let (tx, rx) = std::sync::mpsc::channel();
    let asked = p.clone();
    std::thread::spawn(move || {
        let r = editor(MISSING).read(&ReadRequest::new(&asked));
        tx.send(r.map(|_| ()).map_err(|e| token(&e))).unwrap();
    });
    let r = (rx.recv_timeout(std::time::Duration::from_secs(20)))
        .expect("the read answers without waiting for a writer");
    let want = format!("{} is a FIFO, not a regular file", p.display());
    assert_eq!(r, Err(("file_not_found".into(), Some(want), Via::Transfer)));
    assert!(std::fs::symlink_metadata(&p).unwrap().file_type().is_fifo());
}

/// A report names the file the op wrote, byte for byte: a name that is
/// not UTF-8 comes as `path_b64`/`to_b64` and is decoded to its bytes.
/// It came as its lossy text, the very `path` of another existing file
/// (`caf\u{FFFD}.txt` beside `caf\xe9.txt`), so a host could not tell
/// which of the two was written.
#[test]
fn a_report_names_a_file_that_is_not_utf8_by_its_bytes() {
    let d = scratch();
    let latin = bytes_path(d.path(), b"caf\xe9.txt");
    let lossy = d.path().join("caf\u{FFFD}.txt");
    std::fs::write(&lossy, "other\n").unwrap();
    // The helper's own line: `path_b64`, no `path`.
    let b64 = |p: &Path| {
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD.encode(p.as_os_str().as_bytes())
    };
    let req = format!(
        r#"{{"op":"create","path_b64":"{}","content":"x\n"}}"#,
        b64(&latin)
    );
    let out = std::process::Command::new(BIN)
        .args(["--report", "--request-b64", &{
            use base64::Engine as _;
            base64::engine::general_purpose::STANDARD.encode(&req)
        }])
        .output()
        .unwrap();
    let line = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        line,
        format!(
            "__RESULT__{{\"count\":0,\"files\":1,\"changes\":[{{\"path_b64\":\"{}\",\"op\":\"create\",\"count\":0,\"size\":2,\"sha256\":\"{}\"}}]}}\n",
            b64(&latin),
            "73cb3858a687a8494ca3323053016282f3dad39d42cf62ca4e79dda2aac7d9ac"
        )
    );
    std::fs::remove_file(&latin).unwrap();
    // Through the host library: the bytes, never the other file's name.
    let mut ed = editor(BIN);
    let a = ed.write(&WriteRequest::new(&latin, "x\n")).unwrap();
    assert_eq!(a.changes[0].path, latin);
    let moved = bytes_path(d.path(), b"\xe9t\xe9");
    let a = ed.mv(&MoveRequest::new(&latin, &moved)).unwrap();
    assert_eq!(
        (a.changes[0].path.as_path(), a.changes[0].to.as_deref()),
        (latin.as_path(), Some(moved.as_path()))
    );
    assert_eq!(std::fs::read(&lossy).unwrap(), b"other\n");
    // A UTF-8 name is `path`, as before.
    let plain = d.path().join("é\n\"q\".txt");
    let a = ed.write(&WriteRequest::new(&plain, "y\n")).unwrap();
    assert_eq!(a.changes[0].path, plain);
    assert_eq!(std::fs::read(&lossy).unwrap(), b"other\n");
}
