//! The deferred temp: a refusal creates no temp and writes
//! nothing; a success writes exactly the new bytes whichever way the
//! identical prefix is brought over (`copy_file_range`, each of its
//! fallbacks, short copies, the re-normalizing replay, the named temp).
//!
//! The files span several 256 KiB read chunks so that the prefix before the
//! first change is non-empty and matches can straddle chunk boundaries.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};

use common::*;

const CHUNK: usize = 256 * 1024;

/// The test hooks every success must survive: none, each errno the copy
/// falls back on, copies in short odd pieces, and the named temp.
const HOOKS: &[(&str, &str)] = &[
    ("", ""),
    ("AS_EDIT_TEST_NO_COPY_RANGE", "EXDEV"),
    ("AS_EDIT_TEST_NO_COPY_RANGE", "ENOSYS"),
    ("AS_EDIT_TEST_NO_COPY_RANGE", "EPERM"),
    ("AS_EDIT_TEST_NO_COPY_RANGE", "EINVAL"),
    ("AS_EDIT_TEST_NO_COPY_RANGE", "EOPNOTSUPP"),
    ("AS_EDIT_TEST_NO_COPY_RANGE", "EBADF"),
    ("AS_EDIT_TEST_COPY_RANGE_PIECE", "4093"),
    ("AS_EDIT_TEST_NO_TMPFILE", "1"),
];

fn run(dir: &Path, hook: (&str, &str), args: &[&str]) -> Run {
    let mut cmd = Command::new(BIN);
    cmd.args(args).current_dir(dir).stdin(Stdio::null());
    if !hook.0.is_empty() {
        cmd.env(hook.0, hook.1);
    }
    cmd.output().unwrap().into()
}

/// Ordinary source text of `len` bytes with `eol` line ends.
fn text(len: usize, eol: &str) -> Vec<u8> {
    let line = format!("    let value = compute(alpha, beta); // text{eol}");
    line.as_bytes().iter().copied().cycle().take(len).collect()
}

/// The contract's replacement, written out independently of the engine:
/// normalize CRLF then CR, replace the first (or every) occurrence.
fn expected(content: &[u8], old: &str, new: &str, all: bool) -> Vec<u8> {
    let s = String::from_utf8(content.to_vec())
        .unwrap()
        .replace("\r\n", "\n")
        .replace('\r', "\n");
    assert!(s.contains(old), "test input holds OLD");
    if all {
        s.replace(old, new).into_bytes()
    } else {
        s.replacen(old, new, 1).into_bytes()
    }
}

/// `expected` written back with CRLF line ends (`--eol preserve` of a CRLF file).
fn expected_crlf(content: &[u8], old: &str, new: &str) -> Vec<u8> {
    let lf = String::from_utf8(expected(content, old, new, false)).unwrap();
    lf.replace('\n', "\r\n").into_bytes()
}

/// `edits_exactly` for one OLD/NEW pair (every occurrence with `all`),
/// wanting the bytes `expected` gives for it.
fn replaces_exactly(content: &[u8], old: &str, new: &str, all: bool) {
    let (o, n) = (b64(old), b64(new));
    let args: &[&str] = if all {
        &["--replace-all", "--", &o, &n]
    } else {
        &["--", &o, &n]
    };
    edits_exactly(content, args, &expected(content, old, new, all));
}

/// `text` with `needle` spliced in at each offset (the offsets ascending).
fn with_needles(mut base: Vec<u8>, needle: &str, at: &[usize]) -> Vec<u8> {
    for &i in at.iter().rev() {
        base.splice(i..i, needle.bytes());
    }
    base
}

/// One success under every hook: exact bytes, a new inode, nothing left.
fn edits_exactly(content: &[u8], args: &[&str], want: &[u8]) {
    for &hook in HOOKS {
        let d = scratch();
        let p = write_file(d.path(), "f", content, 0o640);
        let ino = inode(&p);
        let mut argv = args.to_vec();
        argv.insert(argv.iter().position(|a| *a == "--").unwrap() + 1, "f");
        let r = run(d.path(), hook, &argv);
        assert_eq!(r.code, 0, "{hook:?}: {}", r.stdout);
        assert_eq!(r.stderr, "");
        let got = std::fs::read(&p).unwrap();
        assert!(
            got == want,
            "{hook:?}: bytes differ (len {} vs {})",
            got.len(),
            want.len()
        );
        assert_ne!(inode(&p), ino, "{hook:?}");
        assert_eq!(mode(&p), 0o640, "{hook:?}");
        assert_eq!(listing(d.path()), vec!["f"], "{hook:?}");
    }
}

/// One refusal under every hook: the exact line (`{dir}` stands for the
/// scratch directory), same bytes and inode, nothing left.
fn refuses(content: &[u8], args: &[&str], line: &str) {
    for &hook in HOOKS {
        let d = scratch();
        let p = write_file(d.path(), "f", content, 0o640);
        let ino = inode(&p);
        let mut argv = args.to_vec();
        argv.insert(argv.iter().position(|a| *a == "--").unwrap() + 1, "f");
        let r = run(d.path(), hook, &argv);
        let dir = std::fs::canonicalize(d.path()).unwrap();
        assert_result(&r, &line.replace("{dir}", dir.to_str().unwrap()), 1);
        assert!(
            std::fs::read(&p).unwrap() == content,
            "{hook:?}: bytes changed"
        );
        assert_eq!(inode(&p), ino, "{hook:?}");
        assert_eq!(listing(d.path()), vec!["f"], "{hook:?}");
    }
}

#[test]
fn lf_matches_at_start_middle_end_and_across_chunk_boundaries() {
    let needle = "NEEDLE_xyz";
    let len = 4 * CHUNK + 1000;
    for at in [
        0,
        CHUNK / 2,
        CHUNK - 3,                // straddles the first boundary
        2 * CHUNK - needle.len(), // ends exactly at the second
        2 * CHUNK,                // starts exactly at it
        len - 10,
    ] {
        let content = with_needles(text(len, "\n"), needle, &[at]);
        replaces_exactly(&content, needle, "replaced!", false);
    }
    // At the very end, with no line end after it.
    let mut content = text(3 * CHUNK, "\n");
    content.extend_from_slice(needle.as_bytes());
    replaces_exactly(&content, needle, "", false);
}

#[test]
fn crlf_files_replay_the_normalized_prefix() {
    let needle = "NEEDLE_xyz";
    // Below the replay bound (the whole prefix re-normalized) and above it
    // (the temp made early, then written through); a CRLF split across a
    // chunk boundary and a lone CR on the way.
    for len in [3 * CHUNK, 7 * CHUNK] {
        let mut base = text(len, "\r\n");
        base[CHUNK - 1] = b'\r';
        base[CHUNK] = b'\n';
        base[CHUNK + 100] = b'\r';
        for at in [CHUNK / 2, len - 20] {
            let content = with_needles(base.clone(), needle, &[at]);
            replaces_exactly(&content, needle, "N2", false);
        }
    }
}

#[test]
fn eol_preserve_writes_the_crlf_prefix_again() {
    let needle = "NEEDLE_xyz";
    for len in [3 * CHUNK, 7 * CHUNK] {
        let content = with_needles(text(len, "\r\n"), needle, &[len - 30]);
        let want = expected_crlf(&content, needle, "two\nlines");
        let (o, n) = (b64(needle), b64("two\nlines"));
        edits_exactly(&content, &["--eol", "preserve", "--", &o, &n], &want);
    }
}

#[test]
fn a_batch_and_a_replace_all_write_exact_bytes() {
    let len = 4 * CHUNK;
    let content = with_needles(text(len, "\n"), "ALPHA", &[CHUNK + 7]);
    let content = with_needles(content, "OMEGA", &[3 * CHUNK + 11]);
    let step = expected(&content, "ALPHA", "a", false);
    let want = expected(&step, "OMEGA", "o-o", false);
    let args = [
        "--",
        &b64("ALPHA"),
        &b64("a"),
        "false",
        &b64("OMEGA"),
        &b64("o-o"),
        "false",
    ];
    edits_exactly(&content, &args, &want);

    // Every "beta" (one per line) through the whole file.
    let content = text(len, "\n");
    replaces_exactly(&content, "beta", "BETA!", true);
}

#[test]
fn a_first_chunk_of_expanding_replacements_stays_bounded_and_exact() {
    // Each byte becomes eight: the first feed's output passes the retained
    // bound, so the temp is made mid-feed.
    let content = vec![b'a'; CHUNK + 5];
    replaces_exactly(&content, "a", "bbbbbbbb", true);
}

/// With one edit the output before the first change is counted, not kept
/// (the engine marks the change). Whether the counted part of the current
/// read held a CR is known only at the end of that read: a CR before or
/// after the first match in the same chunk, or none, each must give exact
/// bytes, also when the kept output passes its bound in the middle of the
/// read (an expanding replace-all) and the temp is made there.
#[test]
fn the_counted_prefix_in_the_chunk_of_the_first_change_is_exact() {
    let filler = "    let value = compute(alpha, gamma); // text\n";
    let base: Vec<u8> = filler.bytes().cycle().take(3 * CHUNK).collect();
    let needle = "NEEDLE";
    let first = CHUNK + 40_000;
    // Needles every 100 bytes from `first` on, for the replace-all cases.
    let dense: Vec<usize> = (0..4000).map(|k| first + k * 100).collect();
    for cr in [None, Some(CHUNK + 1000), Some(first + 5), Some(100)] {
        let mut one = with_needles(base.clone(), needle, &[first]);
        let mut all = with_needles(base.clone(), needle, &dense);
        if let Some(at) = cr {
            // A lone CR (becomes LF): raw bytes and output differ from here.
            let at = if at == first + 5 {
                first + needle.len() + 5
            } else {
                at
            };
            one[at] = b'\r';
            all[at + if at > first { 100 } else { 0 }] = b'\r';
        }
        replaces_exactly(&one, needle, "N2", false);
        // 4000 x 200 bytes: past the kept bound within the read.
        let long = "L".repeat(200);
        replaces_exactly(&all, needle, &long, true);
    }
    // The first change made only at the end: a trailing CR that becomes
    // the LF completing OLD.
    let mut content = base.clone();
    content.extend_from_slice(b"END\r");
    replaces_exactly(&content, "END\n", "FIN\n", false);
    // --eol preserve: the counted prefix is CRLF output.
    let crlf: Vec<u8> = "    let value = compute(alpha, gamma); // text\r\n"
        .bytes()
        .cycle()
        .take(3 * CHUNK)
        .collect();
    let content = with_needles(crlf, needle, &[first]);
    let want = expected_crlf(&content, needle, "a\nb");
    edits_exactly(
        &content,
        &["--eol", "preserve", "--", &b64(needle), &b64("a\nb")],
        &want,
    );
}

#[test]
fn refusals_leave_the_same_inode_and_nothing_else() {
    let len = 4 * CHUNK;
    let lf = text(len, "\n");
    refuses(
        &lf,
        &["--", &b64("absent"), &b64("x")],
        r#"{"error":"string_not_found"}"#,
    );
    // The first occurrence is replaced before the second is met, chunks later.
    let two = with_needles(lf.clone(), "TWICE", &[100, 3 * CHUNK]);
    refuses(
        &two,
        &["--", &b64("TWICE"), &b64("x")],
        r#"{"error":"multiple_occurrences","count":2}"#,
    );
    // A change, then invalid UTF-8 two chunks later.
    let mut bad = with_needles(lf.clone(), "ONCE", &[10]);
    bad[2 * CHUNK + 1] = 0xff;
    refuses(
        &bad,
        &["--", &b64("ONCE"), &b64("x")],
        &format!(
            r#"{{"error":"read_failed","detail":"{{dir}}/f is not valid UTF-8: invalid start byte at byte offset {}"}}"#,
            2 * CHUNK + 1
        ),
    );
    // A batch whose second edit is missing, after the first changed the output.
    let once = with_needles(text(len, "\r\n"), "ONCE", &[CHUNK + 3]);
    refuses(
        &once,
        &[
            "--",
            &b64("ONCE"),
            &b64("x"),
            "false",
            &b64("absent"),
            &b64("y"),
            "false",
        ],
        r#"{"error":"string_not_found","detail":"edit 2 of 2: OLD not found"}"#,
    );
}

/// The syscalls an edit made, by `strace -f` (installed as the README says).
fn traced(dir: &Path, args: &[&str], env: Option<(&str, &str)>) -> String {
    let log = dir.join("..").join(format!(
        "strace-{}.log",
        dir.file_name().unwrap().to_string_lossy()
    ));
    let mut cmd = Command::new("strace");
    cmd.args([
        "-f",
        "-qq",
        "-e",
        "trace=openat,write,writev,pwrite64,pwritev,copy_file_range,linkat",
    ])
    .arg("-o")
    .arg(&log)
    .arg(BIN)
    .args(args)
    .current_dir(dir)
    .stdin(Stdio::null());
    if let Some((k, v)) = env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("strace runs (Debian package strace)");
    assert!(!out.stdout.is_empty(), "the binary ran under strace");
    let s = std::fs::read_to_string(&log).unwrap();
    std::fs::remove_file(&log).unwrap();
    s
}

/// No temp opened or named, no copy, and no write but the result line on fd 1.
fn assert_wrote_nothing(trace: &str) {
    for l in trace.lines() {
        assert!(!l.contains("O_TMPFILE"), "a temp was opened: {l}");
        assert!(!l.contains("O_CREAT"), "a file was created: {l}");
        assert!(!l.contains("copy_file_range("), "a copy was made: {l}");
        assert!(!l.contains("linkat("), "a name was made: {l}");
        assert!(!l.contains("pwrite64("), "a write was made: {l}");
        assert!(!l.contains("writev("), "a write was made: {l}");
        if let Some(i) = l.find("write(") {
            assert!(l[i..].starts_with("write(1, \"__RESULT__"), "a write: {l}");
        }
    }
}

#[test]
fn a_refused_edit_of_a_large_file_opens_no_temp_and_writes_nothing() {
    let d = scratch();
    let content = with_needles(text(8 * CHUNK, "\n"), "TWICE", &[1000, 2000]);
    write_file(d.path(), "f", &content, 0o644);
    let cases: [(&str, Option<(&str, &str)>); 3] = [
        ("absent", None),
        ("absent", Some(("AS_EDIT_TEST_NO_TMPFILE", "1"))),
        // Both occurrences in the first chunk: certain before any write.
        ("TWICE", None),
    ];
    for (old, env) in cases {
        let t = traced(d.path(), &["--", "f", &b64(old), &b64("x")], env);
        assert!(t.contains("__RESULT__{\\\"error\\\""), "{old}: {t}");
        assert_wrote_nothing(&t);
    }
    // The control: the same trace of a success shows the temp and the
    // in-kernel copy of the prefix, so the checks above can fail.
    let t = traced(d.path(), &["--", "f", &b64("absent"), &b64("x")], None);
    assert_wrote_nothing(&t);
    let content = with_needles(text(8 * CHUNK, "\n"), "ONCE", &[5 * CHUNK]);
    write_file(d.path(), "f", &content, 0o644);
    let t = traced(d.path(), &["--", "f", &b64("ONCE"), &b64("x")], None);
    assert!(t.contains("O_TMPFILE"), "{t}");
    assert!(t.contains("copy_file_range("), "{t}");
    assert_eq!(
        std::fs::read(d.path().join("f")).unwrap(),
        expected(&content, "ONCE", "x", false)
    );
    // And the fallback hook really takes the buffered path.
    write_file(d.path(), "f", &content, 0o644);
    let hook = Some(("AS_EDIT_TEST_NO_COPY_RANGE", "EPERM"));
    let t = traced(d.path(), &["--", "f", &b64("ONCE"), &b64("x")], hook);
    assert!(
        t.contains("O_TMPFILE") && !t.contains("copy_file_range("),
        "{t}"
    );
    assert_eq!(
        std::fs::read(d.path().join("f")).unwrap(),
        expected(&content, "ONCE", "x", false)
    );
}

/// `--eol preserve` re-expands LF to CRLF in pieces, and a line end at a
/// piece's edge gives an empty piece: it must not pass for the engine's
/// change marker (an empty slice), or the pending sink keeps what it should
/// only count. Here the second read is lone CRs, whose CRLF output is just
/// over the kept bound: kept, it makes a temp before any change; counted,
/// the refusal (the whole output under the replay bound) writes nothing.
#[test]
fn an_eol_preserve_refusal_counts_its_crlf_output_and_writes_nothing() {
    let mut content = b"\r\n".repeat(CHUNK / 2 - 1);
    content.extend_from_slice(b"a\r");
    content.extend_from_slice(&b"\r".repeat(CHUNK - 1));
    content.push(b'x');
    // CRLF endings outnumber the lone CRs: the file is written back as CRLF.
    content.extend_from_slice(&b"\r\n".repeat(CHUNK / 2 + 3));
    let old = b64("absent-absent-absent-absent-ab");
    let args = ["--eol", "preserve", "--", &old, &b64("x")];
    refuses(&content, &args, r#"{"error":"string_not_found"}"#);
    let d = scratch();
    write_file(d.path(), "f", &content, 0o644);
    let t = traced(
        d.path(),
        &["--eol", "preserve", "--", "f", &old, &b64("x")],
        None,
    );
    assert!(t.contains("__RESULT__{\\\"error\\\""), "{t}");
    assert_wrote_nothing(&t);
    // The control: the same file with OLD present is written back as CRLF.
    let content = with_needles(content, "ONCE", &[CHUNK + 5]);
    let want = expected_crlf(&content, "ONCE", "x");
    edits_exactly(
        &content,
        &["--eol", "preserve", "--", &b64("ONCE"), &b64("x")],
        &want,
    );
}

#[test]
fn dry_run_never_makes_a_temp() {
    let d = scratch();
    let content = with_needles(text(4 * CHUNK, "\n"), "ONCE", &[3 * CHUNK]);
    let p = write_file(d.path(), "f", &content, 0o644);
    let t = traced(
        d.path(),
        &["--dry-run", "--", "f", &b64("ONCE"), &b64("x")],
        None,
    );
    assert!(t.contains("__RESULT__{\\\"count\\\":1}"), "{t}");
    assert_wrote_nothing(&t);
    assert_eq!(std::fs::read(&p).unwrap(), content);
}

#[test]
fn the_report_hashes_all_of_the_new_content() {
    use sha2::{Digest, Sha256};
    let d = scratch();
    let content = with_needles(text(3 * CHUNK, "\r\n"), "ONCE", &[2 * CHUNK]);
    let p = write_file(d.path(), "f", &content, 0o644);
    let r = run(
        d.path(),
        ("", ""),
        &["--report", "--", "f", &b64("ONCE"), &b64("x")],
    );
    let new = std::fs::read(&p).unwrap();
    assert_eq!(new, expected(&content, "ONCE", "x", false));
    let sha: String = Sha256::digest(&new)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert!(
        r.stdout
            .contains(&format!(r#""size":{},"sha256":"{sha}""#, new.len())),
        "{}",
        r.stdout
    );
}

/// A refusal found after the first change (a second occurrence chunks
/// later) made the temp and wrote what followed the first, but copies no
/// prefix: the raw prefix is copied in only once the edit has succeeded
/// (it cost a `copy_file_range` of the whole prefix, thrown away: 0.6 s for
/// 224 MiB on ext4). The file is left as it was.
#[test]
fn a_late_second_occurrence_copies_no_prefix() {
    let d = scratch();
    let content = with_needles(text(8 * CHUNK, "\n"), "TWICE", &[5 * CHUNK, 7 * CHUNK]);
    for (env, tmp) in [
        (None, "O_TMPFILE"),
        (Some(("AS_EDIT_TEST_NO_TMPFILE", "1")), "O_CREAT"),
    ] {
        write_file(d.path(), "f", &content, 0o644);
        let t = traced(d.path(), &["--", "f", &b64("TWICE"), &b64("x")], env);
        // strace cuts strings at 32 bytes: the whole line is checked below.
        assert!(t.contains(r#"__RESULT__{\"error\":\"multiple_occ"#), "{t}");
        assert!(t.contains(tmp), "the first change made the temp: {t}");
        assert!(!t.contains("copy_file_range("), "a prefix was copied: {t}");
        assert!(!t.contains("pwrite64("), "a prefix was written: {t}");
        assert_eq!(std::fs::read(d.path().join("f")).unwrap(), content);
        assert_eq!(listing(d.path()), ["f"]);
        let r = run(
            d.path(),
            env.unwrap_or(("", "")),
            &["--", "f", &b64("TWICE"), &b64("x")],
        );
        assert_result(&r, r#"{"error":"multiple_occurrences","count":2}"#, 1);
    }
}

/// A long raw prefix is copied in 8 MiB pieces, each piece's write-back
/// started as soon as it is copied, so the device writes it while the next
/// piece copies (one copy of the whole prefix, then one
/// wait for all of it, cost the large edit 7-13% of its time); the last
/// piece's is the whole temp's, written back and waited for once, last,
/// before its name.
#[test]
fn a_long_prefix_is_copied_in_pieces_each_written_back_at_once() {
    if Command::new("strace").arg("-V").output().is_err() {
        return skip("strace is not installed (scripts/test.sh installs it as root)");
    }
    const PIECE: u64 = 8 << 20;
    let d = scratch();
    let content = with_needles(text((20 << 20) + CHUNK, "\n"), "ONCE", &[(20 << 20) + 100]);
    write_file(d.path(), "f", &content, 0o644);
    let log = d.path().join("..").join(format!(
        "strace-{}.log",
        d.path().file_name().unwrap().to_string_lossy()
    ));
    let out = Command::new("strace")
        .args(["-qq", "-e", "trace=copy_file_range,sync_file_range", "-o"])
        .arg(&log)
        .args([BIN, "--", "f", &b64("ONCE"), &b64("x")])
        .current_dir(d.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.stdout, b"__RESULT__{\"count\":1}\n");
    let trace = std::fs::read_to_string(&log).unwrap();
    std::fs::remove_file(&log).unwrap();
    assert_eq!(
        std::fs::read(d.path().join("f")).unwrap(),
        expected(&content, "ONCE", "x", false)
    );
    // The calls only (strace also notes the commit child's SIGCHLD).
    let lines: Vec<&str> = trace
        .lines()
        .filter(|l| l.starts_with("copy_file_range(") || l.starts_with("sync_file_range("))
        .collect();
    let (last, pairs) = lines.split_last().unwrap();
    assert!(
        last.starts_with("sync_file_range(")
            && last.ends_with(
                ", 0, 0, SYNC_FILE_RANGE_WAIT_BEFORE|SYNC_FILE_RANGE_WRITE|SYNC_FILE_RANGE_WAIT_AFTER) = 0"
            ),
        "the whole temp is written back and waited for last: {trace}"
    );
    let (final_copy, pairs) = pairs.split_last().unwrap();
    assert_eq!(
        pairs.len() % 2,
        0,
        "each copy followed by its write-back: {trace}"
    );
    let mut copied = 0u64;
    for pair in pairs.chunks(2) {
        // copy_file_range(4, [OFF], 6, [OFF], LEN, 0) = LEN
        let c = pair[0];
        let (args, n) = c
            .strip_prefix("copy_file_range(")
            .unwrap()
            .split_once(") = ")
            .unwrap();
        let n: u64 = n.parse().unwrap();
        let a: Vec<&str> = args.split(", ").collect();
        assert_eq!(a[1], format!("[{copied}]"), "{c}");
        assert!(n == a[4].parse::<u64>().unwrap() && n <= PIECE, "{c}");
        assert_eq!(
            pair[1],
            format!(
                "sync_file_range({}, {copied}, {n}, SYNC_FILE_RANGE_WRITE) = 0",
                a[2]
            ),
            "the piece's write-back, right after its copy: {trace}"
        );
        copied += n;
    }
    assert!(
        final_copy.starts_with("copy_file_range(")
            && final_copy.contains(&format!(", [{copied}], ")),
        "the last piece, its write-back left to the wait: {trace}"
    );
    assert!(pairs.len() == 4 && copied == 2 * PIECE, "{trace}");
}
