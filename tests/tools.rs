//! The toolset's read-side ops through the real binary, where a
//! scenario folder cannot say it: `stat` and `list` answer mtimes (and
//! directory sizes) that differ on every run and file system, so these
//! tests compare each entry with the file's own `lstat` instead; and the
//! properties over generated trees, files and `max_bytes`.

mod common;

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{symlink, MetadataExt};
use std::path::Path;

use base64::Engine as _;
use common::{run_stdin, scratch};
use proptest::prelude::*;
use serde_json::Value;

/// Runs `req` on `--stdin` in `dir`: the answer, checked to be one line
/// of valid JSON within `max` bytes, and the exit code.
fn ask(dir: &Path, args: &[&str], req: &str, max: usize) -> (Value, i32) {
    let mut a = args.to_vec();
    a.push("--stdin");
    let r = run_stdin(dir, &a, req.as_bytes());
    assert_eq!(r.stderr, "");
    assert!(
        r.stdout.len() <= max,
        "{} > {max}: {}",
        r.stdout.len(),
        r.stdout
    );
    assert!(r.stdout.is_ascii() && r.stdout.ends_with('\n'));
    assert_eq!(r.stdout.matches('\n').count(), 1);
    let json = r.stdout.strip_prefix("__RESULT__").expect("a result line");
    (serde_json::from_str(json).expect("valid JSON"), r.code)
}

/// An entry's name as bytes, from `path` or `path_b64`.
fn name(e: &Value) -> Vec<u8> {
    match (&e["path"], &e["path_b64"]) {
        (Value::String(p), Value::Null) => p.as_bytes().to_vec(),
        (Value::Null, Value::String(b)) => {
            base64::engine::general_purpose::STANDARD.decode(b).unwrap()
        }
        other => panic!("one of path and path_b64: {other:?}"),
    }
}

fn kind(m: &std::fs::Metadata) -> &'static str {
    let t = m.file_type();
    if t.is_symlink() {
        "symlink"
    } else if t.is_dir() {
        "dir"
    } else if t.is_file() {
        "file"
    } else {
        "other"
    }
}

/// Checks an entry against the `lstat` of the name it carries.
fn matches_lstat(dir: &Path, e: &Value) {
    let n = name(e);
    let m = std::fs::symlink_metadata(dir.join(OsStr::from_bytes(&n))).unwrap();
    assert_eq!(e["type"], kind(&m), "{e}");
    assert_eq!(e["size"], m.size(), "{e}");
    let ns = m.mtime() as i128 * 1_000_000_000 + m.mtime_nsec() as i128;
    assert_eq!(e["mtime_ns"].as_i64().unwrap() as i128, ns, "{e}");
}

/// A tree with every awkward kind of name and file.
fn awkward_tree(d: &Path) {
    let t = d.join("t");
    std::fs::create_dir_all(t.join("sub/deeper")).unwrap();
    for n in [
        &b".dot"[..],
        b"a:b",
        b"tab\there",
        b"new\nline",
        b"sp ace",
        b"-dash",
        b"caf\xe9",
        b"empty",
    ] {
        let body: &[u8] = if n == b"empty" { b"" } else { b"x\r\ny\r\n" };
        std::fs::write(t.join(OsStr::from_bytes(n)), body).unwrap();
    }
    std::fs::write(t.join("sub/deeper/f"), b"deep").unwrap();
    std::fs::write(t.join("sub/.hidden"), b"h").unwrap();
    symlink("sub", t.join("dirlink")).unwrap();
    symlink("loop", t.join("loop")).unwrap();
    symlink("nowhere", t.join("dangling")).unwrap();
    rustix::fs::mknodat(
        rustix::fs::CWD,
        t.join("fifo"),
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o644),
        0,
    )
    .unwrap();
}

#[test]
fn list_answers_every_entry_sorted_bytewise_from_lstat_never_through_a_link() {
    let d = scratch();
    awkward_tree(d.path());
    let (v, code) = ask(
        d.path(),
        &[],
        r#"{"op":"list","path":"t","depth":3}"#,
        262_144,
    );
    assert_eq!(code, 0, "{v}");
    let entries = v["entries"].as_array().unwrap();
    let names: Vec<Vec<u8>> = entries.iter().map(name).collect();
    let mut want: Vec<Vec<u8>> = [
        &b".dot"[..],
        b"a:b",
        b"tab\there",
        b"new\nline",
        b"sp ace",
        b"-dash",
        b"caf\xe9",
        b"empty",
        b"sub",
        b"sub/deeper",
        b"sub/deeper/f",
        b"sub/.hidden",
        b"dirlink",
        b"loop",
        b"dangling",
        b"fifo",
    ]
    .iter()
    .map(|n| [&b"t/"[..], n].concat())
    .collect();
    want.sort();
    assert_eq!(names, want);
    assert_eq!(v["total"], 16);
    assert_eq!(v["truncated"], false);
    for e in entries {
        matches_lstat(d.path(), e);
    }
    // The Latin-1 name is lossless: path_b64, not a replacement character.
    assert!(entries.iter().any(|e| e["path_b64"] == "dC9jYWbp"));
    // depth 1: no entry below t's own; hidden:false leaves out dotfiles
    // and counts them.
    let (v, _) = ask(
        d.path(),
        &[],
        r#"{"op":"list","path":"t/","hidden":false}"#,
        262_144,
    );
    let names: Vec<Vec<u8>> = v["entries"].as_array().unwrap().iter().map(name).collect();
    assert!(names
        .iter()
        .all(|n| n.starts_with(b"t/") && !n[2..].contains(&b'/')));
    assert!(!names.contains(&b"t/.dot".to_vec()));
    assert_eq!(
        (v["total"].as_u64(), v["hidden_count"].as_u64()),
        (Some(12), Some(1))
    );
    // A symlink to a directory named directly is followed.
    let (v, _) = ask(
        d.path(),
        &[],
        r#"{"op":"list","path":"t/dirlink"}"#,
        262_144,
    );
    let names: Vec<Vec<u8>> = v["entries"].as_array().unwrap().iter().map(name).collect();
    assert_eq!(
        names,
        [b"t/dirlink/.hidden".to_vec(), b"t/dirlink/deeper".to_vec()]
    );
}

#[test]
fn stat_answers_lstat_in_request_order_with_link_targets() {
    let d = scratch();
    awkward_tree(d.path());
    let req = r#"{"op":"stat","paths":["t/dirlink","t/dangling","t/loop","t/fifo","t/empty","t","nope",{"path_b64":"dC9jYWbp"}]}"#;
    let (v, code) = ask(d.path(), &[], req, 262_144);
    assert_eq!(code, 0, "{v}");
    let e = v["entries"].as_array().unwrap();
    assert_eq!(e.len(), 8);
    for x in e.iter().filter(|x| x["type"] != "missing") {
        matches_lstat(d.path(), x);
        let m = std::fs::symlink_metadata(d.path().join(OsStr::from_bytes(&name(x)))).unwrap();
        assert_eq!(x["mode"], format!("{:04o}", m.mode() & 0o7777));
    }
    assert_eq!(
        (&e[0]["target"], &e[0]["resolved"]),
        (&"sub".into(), &"dir".into())
    );
    // What the link leads to: stat, not lstat, of it.
    let to = std::fs::metadata(d.path().join("t/dirlink")).unwrap();
    assert_eq!(
        (&e[0]["resolved_size"], &e[0]["resolved_mtime_ns"]),
        (
            &to.size().into(),
            &((to.mtime() as i128 * 1_000_000_000 + to.mtime_nsec() as i128) as u64).into()
        )
    );
    assert_eq!(
        (&e[1]["target"], &e[1]["resolved"]),
        (&"nowhere".into(), &"missing".into())
    );
    assert_eq!(e[1].get("resolved_size"), None);
    assert_eq!(
        (&e[2]["target"], &e[2]["resolved"]),
        (&"loop".into(), &"missing".into())
    );
    assert_eq!(e[3]["type"], "other");
    assert_eq!((&e[4]["type"], &e[4]["size"]), (&"file".into(), &0.into()));
    assert_eq!(e[5]["type"], "dir");
    assert_eq!(e[6], serde_json::json!({"path":"nope","type":"missing"}));
    assert_eq!(e[7]["path_b64"], "dC9jYWbp");
}

#[test]
fn root_confines_list_and_stat_and_may_itself_be_listed() {
    let d = scratch();
    awkward_tree(d.path());
    symlink("..", d.path().join("t/sub/up")).unwrap();
    let root = d.path().join("t").to_str().unwrap().to_owned();
    let (v, code) = ask(
        d.path(),
        &["--root", &root],
        r#"{"op":"list","path":"t"}"#,
        262_144,
    );
    assert_eq!((code, v["total"].as_u64()), (0, Some(13)), "{v}");
    let (v, code) = ask(
        d.path(),
        &["--root", &root],
        r#"{"op":"list","path":"."}"#,
        262_144,
    );
    assert_eq!((code, &v["error"]), (1, &"outside_root".into()), "{v}");
    // A link out of the root: listed as a link, resolved as outside.
    symlink("/etc", d.path().join("t/out")).unwrap();
    let (v, code) = ask(
        d.path(),
        &["--root", &root],
        r#"{"op":"stat","paths":["t/out","t/sub/up"]}"#,
        262_144,
    );
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["entries"][0]["resolved"], "outside_root");
    // Nothing is said of what lies outside.
    assert_eq!(v["entries"][0].get("resolved_size"), None);
    assert_eq!(v["entries"][1]["resolved"], "dir");
    let (v, code) = ask(
        d.path(),
        &["--root", &root],
        r#"{"op":"list","path":"t/out"}"#,
        262_144,
    );
    assert_eq!((code, &v["error"]), (1, &"outside_root".into()), "{v}");
    let (v, code) = ask(
        d.path(),
        &["--root", &root],
        r#"{"op":"read","path":"t/out/passwd"}"#,
        262_144,
    );
    assert_eq!((code, &v["error"]), (1, &"outside_root".into()), "{v}");
}

/// A FIFO is never opened: a read that opened it would block forever (no
/// writer), so the answer at all is the proof; `stat` and `list` too.
#[test]
fn a_fifo_never_hangs_any_op() {
    let d = scratch();
    awkward_tree(d.path());
    for req in [
        r#"{"op":"read","path":"t/fifo"}"#,
        r#"{"op":"read","path":"t/fifo","raw":true}"#,
        r#"{"op":"stat","paths":["t/fifo"]}"#,
        r#"{"op":"list","path":"t/fifo"}"#,
    ] {
        let (v, _) = ask(d.path(), &[], req, 262_144);
        assert!(
            v["error"] == "file_not_found" || v["entries"][0]["type"] == "other",
            "{v}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Pages of a list, each within a random `max_bytes` (tiny ones
    /// included) and `limit`, followed by `next`, answer every entry exactly
    /// once, in order.
    #[test]
    fn following_next_lists_every_entry_once(
        names in proptest::collection::btree_set("[a-z\u{e9}\t:\n -]{1,40}", 1..60),
        max in 1024usize..3000,
        limit in 1u64..40,
    ) {
        let d = scratch();
        let t = d.path().join("t");
        std::fs::create_dir(&t).unwrap();
        for n in &names {
            std::fs::write(t.join(n), b"").unwrap();
        }
        let mut got = Vec::new();
        let mut offset = 0;
        loop {
            let req = format!(r#"{{"op":"list","path":"t","max_bytes":{max},"limit":{limit},"offset":{offset}}}"#);
            let (v, code) = ask(d.path(), &[], &req, max);
            prop_assert_eq!(code, 0);
            let e = v["entries"].as_array().unwrap();
            prop_assert!(!e.is_empty() || names.is_empty());
            got.extend(e.iter().map(name));
            if v["truncated"] == false {
                break;
            }
            offset = v["next"]["offset"].as_u64().unwrap();
            prop_assert_eq!(offset as usize, got.len());
        }
        let want: Vec<Vec<u8>> = names.iter().map(|n| format!("t/{n}").into_bytes()).collect();
        let set: BTreeSet<_> = got.iter().collect();
        prop_assert_eq!(set.len(), got.len(), "no entry twice");
        prop_assert_eq!(got, want);
    }

    /// Pages of a read followed by `next` concatenate to the file; each
    /// line within `max_bytes`.
    #[test]
    fn following_next_reads_the_whole_file(
        lines in proptest::collection::vec("[a-z\u{e9}\u{1F600}\t\"\\\\]{0,60}(\n|\r\n|\r)", 0..80),
        max in 1024usize..2500,
    ) {
        let file = lines.concat();
        // A lone CR is text, so CR-ended lines join into one line; one
        // that cannot fit a page is refused (another test's case): the
        // escaped length of the longest line, with room for the answer's
        // other fields, must fit `max`.
        let escaped = |c: char| match c {
            '"' | '\\' | '\t' | '\n' | '\r' => 2,
            c if c.is_ascii() => 1,
            c if c.len_utf16() == 2 => 12,
            _ => 6,
        };
        let longest = file.split_inclusive('\n').map(|l| l.chars().map(escaped).sum::<usize>()).max();
        prop_assume!(longest.unwrap_or(0) + 300 <= max);
        let d = scratch();
        std::fs::write(d.path().join("f"), &file).unwrap();
        let mut got = String::new();
        let mut start = 1;
        loop {
            let req = format!(r#"{{"op":"read","path":"f","max_bytes":{max},"start":{start}}}"#);
            let (v, code) = ask(d.path(), &[], &req, max);
            prop_assert_eq!(code, 0);
            prop_assert!(v["cut_lines"].is_null());
            got += v["text"].as_str().unwrap();
            if v["eof"] == true {
                use sha2::Digest;
                let sha = as_edit::hex::encode(&sha2::Sha256::digest(file.as_bytes()));
                prop_assert_eq!(v["sha256"].as_str(), Some(sha.as_str()));
                break;
            }
            prop_assert_eq!(v["truncated"].clone(), Value::Bool(true));
            start = v["next"]["start"].as_u64().unwrap();
        }
        prop_assert_eq!(got, file);
    }

    /// Raw pages followed by `next` are the file's bytes.
    #[test]
    fn following_next_downloads_every_byte(
        bytes in proptest::collection::vec(any::<u8>(), 0..6000),
        max in 1024usize..2000,
    ) {
        let d = scratch();
        std::fs::write(d.path().join("f"), &bytes).unwrap();
        let mut got = Vec::new();
        let mut offset = 0;
        loop {
            let req = format!(r#"{{"op":"read","path":"f","raw":true,"max_bytes":{max},"offset":{offset}}}"#);
            let (v, code) = ask(d.path(), &[], &req, max);
            prop_assert_eq!(code, 0);
            got.extend(base64::engine::general_purpose::STANDARD.decode(v["b64"].as_str().unwrap()).unwrap());
            if v["eof"] == true {
                break;
            }
            offset = v["next"]["offset"].as_u64().unwrap();
            prop_assert_eq!(offset as usize, got.len());
        }
        prop_assert_eq!(got, bytes);
    }
}

/// `.git`, `.hg` and `.svn` are listed but not entered unless `vcs:true`;
/// a proc mount is listed but never entered.
#[test]
fn list_does_not_enter_vcs_directories_or_proc() {
    let d = scratch();
    for v in [".git", ".hg", ".svn", "src"] {
        std::fs::create_dir(d.path().join(v)).unwrap();
        std::fs::write(d.path().join(v).join("f"), b"x").unwrap();
    }
    let names = |req: &str| -> Vec<String> {
        let (v, code) = ask(d.path(), &[], req, 262_144);
        assert_eq!(code, 0, "{v}");
        v["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["path"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(
        names(r#"{"op":"list","path":".","depth":2}"#),
        ["./.git", "./.hg", "./.svn", "./src", "./src/f"]
    );
    assert_eq!(
        names(r#"{"op":"list","path":".","depth":2,"vcs":true}"#).len(),
        8
    );
    if Path::new("/proc/self").exists() {
        let (v, _) = ask(
            d.path(),
            &[],
            r#"{"op":"list","path":"/","depth":3,"limit":100000,"max_bytes":8388608}"#,
            8 << 20,
        );
        let all: Vec<&str> = v["entries"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|e| e["path"].as_str())
            .collect();
        assert!(all.contains(&"/proc"), "{all:?}");
        assert!(
            !all.iter().any(|p| p.starts_with("/proc/")),
            "entered /proc"
        );
    }
}

/// A walk started on a pseudo file system says it did not enter it
/// (`"pseudo_not_entered"`): grep and glob of `/proc` answered nothing
/// with no sign the tree was not walked, as if it
/// were empty.
#[test]
fn a_walk_of_proc_says_it_did_not_enter_it() {
    if !Path::new("/proc/self").exists() {
        eprintln!("skipped: no /proc mounted here");
        return;
    }
    let d = scratch();
    let line = |req: &str| {
        let r = run_stdin(d.path(), &["--stdin"], req.as_bytes());
        (r.stdout, r.code)
    };
    assert_eq!(
        line(r#"{"op":"grep","pattern":"x","path":"/proc"}"#),
        (
            "__RESULT__{\"matches\":[],\"files_searched\":0,\"skipped_binary\":0,\"pseudo_not_entered\":1,\"truncated\":false}\n".to_owned(),
            0
        )
    );
    assert_eq!(
        line(r#"{"op":"glob","pattern":"*","path":"/proc"}"#),
        (
            "__RESULT__{\"entries\":[],\"total\":0,\"pseudo_not_entered\":1,\"truncated\":false}\n"
                .to_owned(),
            0
        )
    );
    let (v, code) = ask(
        d.path(),
        &[],
        r#"{"op":"list","path":"/","depth":2,"limit":100000,"max_bytes":8388608}"#,
        8 << 20,
    );
    assert_eq!(code, 0);
    assert!(v["pseudo_not_entered"].as_u64().unwrap() >= 1, "{v}");
    let (v, _) = ask(d.path(), &[], r#"{"op":"list","path":"."}"#, 262_144);
    assert_eq!(v.get("pseudo_not_entered"), None, "{v}");
}

/// A grep hit's line number, read back with `read`, is the hit's line:
/// both end lines at LF only (a lone CR is text, as in ripgrep), on files
/// with lone CRs, CRLFs and both (`read` once ended a line at a lone CR,
/// so it read another line).
#[test]
fn read_after_grep_reads_the_hits_line() {
    let d = scratch();
    let files: [&[u8]; 4] = [
        b"a\rb\nneedle 1\rx\nc\r\nneedle 2\r\n\rneedle 3\r",
        b"x\r\ny\r\nneedle 4\r\nz",
        b"\r\r\rneedle 5\n\r\nneedle 6",
        b"needle 7\r\rneedle 8\n",
    ];
    for (i, f) in files.iter().enumerate() {
        std::fs::write(d.path().join(format!("f{i}")), f).unwrap();
    }
    let (v, code) = ask(
        d.path(),
        &[],
        r#"{"op":"grep","pattern":"needle"}"#,
        1 << 20,
    );
    assert_eq!(code, 0);
    let hits = v["matches"].as_array().unwrap();
    assert_eq!(hits.len(), 7, "{v}");
    for h in hits {
        let (path, line) = (h["path"].as_str().unwrap(), h["line"].as_u64().unwrap());
        let req = format!(r#"{{"op":"read","path":"{path}","start":{line},"limit":1}}"#);
        let (r, code) = ask(d.path(), &[], &req, 1 << 20);
        assert_eq!(code, 0);
        let text = r["text"].as_str().unwrap();
        // The read keeps the line's ending; grep's text is the line without its LF.
        assert_eq!(
            text.strip_suffix('\n').unwrap_or(text),
            h["text"].as_str().unwrap(),
            "{path}:{line}"
        );
    }
}
