//! The host library's toolset (issue 34 item 9) through `LocalShell`: the
//! typed answers of `stat`, `list`, `read`, `glob`, `grep` over awkward
//! names, `read`'s transfer fallback against the helper over the same
//! files (identical answers), `read_all`, the writes natively and without
//! the helper, and the ops that need the helper refusing clearly.

mod common;
use common::*;

use as_edit::host::{
    self, Applied, DeleteRequest, EditError, EntryType, FileChange, FileEntry, GlobRequest,
    GrepFile, GrepLine, GrepOutput, GrepRequest, ListEntry, ListRequest, LocalShell,
    MkdirRequest, MoveRequest, Next, RawReadRequest, ReadRequest, Sort, StatRequest, TextPage,
    Via, WriteRequest,
};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
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
    assert_eq!((&last.path, last.kind, last.size), (&paths[NAMES.len()], EntryType::Missing, None));

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
    assert_eq!((l.total, l.truncated, l.next, l.hidden_count), (7, false, None, None));
    let l = ed.list(&ListRequest::new(d.path()).hidden(false)).unwrap();
    assert_eq!((l.total, l.hidden_count), (6, Some(1)));
    assert!(l.entries.iter().all(|e| e.path != d.path().join(".hidden")));
    // A page: limit 2, then `next`.
    let l = ed.list(&ListRequest::new(d.path()).limit(2u64)).unwrap();
    assert_eq!((l.entries.len(), l.truncated), (2, true));
    assert_eq!(l.next, Some(Next { offset: Some(2), ..Next::default() }));
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
    let ab: Vec<FileEntry> = files.iter().filter(|f| f.path.ends_with("a:b")).cloned().collect();
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
    assert_eq!((gr.files_searched, gr.skipped_binary, gr.truncated), (7, 0, false));
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
