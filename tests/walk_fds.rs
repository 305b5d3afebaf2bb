//! Walks under a low descriptor limit (`RLIMIT_NOFILE`; nsjail's default
//! is 32): the walker closes the descriptors of upper levels and reopens
//! them by name (`src/tools/walk_fd.rs`), so a
//! tree far deeper than the limit is walked whole — every answer the same
//! as without a limit, byte for byte — and below the least a walk needs,
//! the answer says what it could not read, never silently short.

mod common;

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;

use common::{run_with_stdin, scratch, BIN};

/// Levels of the deep chain (`t/d/d/…`).
const DEEP: usize = 120;

/// A tree 120 levels deep and wide: at each level two files, a side
/// directory with a file, and, at the top, four more chains 40 deep;
/// `.gitignore` and `.ignore` files on the way, so that ignore files are
/// read while descriptors are short.
fn tree(root: &Path) {
    let t = root.join("t");
    let mut p = t.clone();
    for i in 0..DEEP {
        std::fs::create_dir_all(p.join("side")).unwrap();
        std::fs::write(p.join("f0.txt"), format!("hello {i}\n")).unwrap();
        std::fs::write(p.join("f1.txt"), format!("hello again {i}\n")).unwrap();
        std::fs::write(p.join("side/s.txt"), "hello side\n").unwrap();
        match i {
            30 => std::fs::write(p.join(".gitignore"), "f1.txt\n").unwrap(),
            60 => std::fs::write(p.join(".gitignore"), "!f1.txt\nf0.txt\n").unwrap(),
            90 => std::fs::write(p.join(".ignore"), "side/\n").unwrap(),
            _ => {}
        }
        p.push("d");
    }
    for w in 0..4 {
        let mut p = t.join(format!("w{w}"));
        for i in 0..40 {
            std::fs::create_dir_all(&p).unwrap();
            std::fs::write(p.join("x.txt"), format!("hello w{w} {i}\n")).unwrap();
            p.push("e");
        }
    }
}

/// The binary's answer to `input` (`args` before it), under a limit of
/// `nofile` descriptors (`None`: the inherited one).
fn answer(dir: &Path, args: &[&str], input: &str, nofile: Option<u64>) -> String {
    let mut c = Command::new(BIN);
    c.args(args);
    if let Some(n) = nofile {
        // SAFETY: setrlimit is one system call, safe between fork and exec.
        unsafe {
            c.pre_exec(move || {
                let lim = libc::rlimit {
                    rlim_cur: n,
                    rlim_max: n,
                };
                match libc::setrlimit(libc::RLIMIT_NOFILE, &lim) {
                    0 => Ok(()),
                    _ => Err(std::io::Error::last_os_error()),
                }
            });
        }
    }
    let r = run_with_stdin(c, dir, input.as_bytes());
    format!("{}\n{}{}", r.code, r.stdout, r.stderr)
}

const PROTOCOL: &[&str] = &["--stdin"];
const TOOLSET: &[&str] = &["--toolset", "agent_toolset_20260401"];

/// `t/d/d/…/NAME` at `level` (0: `t/NAME`).
fn at(level: usize, name: &str) -> String {
    format!("t/{}{name}", "d/".repeat(level))
}

/// Every request, its arguments, and a path its whole answer holds.
fn requests() -> Vec<(&'static [&'static str], &'static str, String)> {
    let last = DEEP - 1;
    vec![
        (
            PROTOCOL,
            r#"{"op":"glob","pattern":"**/*.txt","path":"t","limit":100000}"#,
            at(last, "f0.txt"),
        ),
        (
            PROTOCOL,
            r#"{"op":"glob","pattern":"**/*.txt","path":"t","limit":100000,"gitignore":true}"#,
            at(last, "f1.txt"),
        ),
        (
            PROTOCOL,
            r#"{"op":"grep","pattern":"hello","path":"t","limit":100000,"max_bytes":8388608}"#,
            at(last, "f0.txt"),
        ),
        (
            PROTOCOL,
            r#"{"op":"grep","pattern":"again","path":"t","output":"count","limit":100000,"gitignore":true}"#,
            at(last, "f1.txt"),
        ),
        (
            PROTOCOL,
            r#"{"op":"list","path":"t","depth":64,"limit":100000,"max_bytes":8388608}"#,
            at(63, "f0.txt"),
        ),
        (
            PROTOCOL,
            r#"{"op":"list","path":"t","depth":64,"limit":100000,"gitignore":true,"max_bytes":8388608}"#,
            at(63, "f1.txt"),
        ),
        (
            TOOLSET,
            r#"{"name":"grep","input":{"pattern":"hello (1|w)","path":"t"}}"#,
            "hello w3 39".into(),
        ),
        (
            TOOLSET,
            r#"{"name":"glob","input":{"pattern":"**/*.txt","path":"t"}}"#,
            "/t/w3/e/e/e/e/e/e/e/e/e/e/e/e/e/e/e/e/e/e/e/e/e/e/e/e/e/e/e/e/e/e/e/e/e/e/e/e/e/e/x.txt".into(),
        ),
        (
            TOOLSET,
            r#"{"name":"glob","input":{"pattern":"**/d/f?.txt","path":"t"}}"#,
            at(last, "f0.txt"),
        ),
    ]
}

/// At most 2,000 bytes of `s`, for a failure's message.
fn cut(s: &str) -> &str {
    let mut n = s.len().min(2000);
    while !s.is_char_boundary(n) {
        n -= 1;
    }
    &s[..n]
}

/// 48, 32 and down to 6 descriptors (stdin, stdout, stderr, the start,
/// the current level and one more): every answer is the unlimited one.
#[test]
fn a_tree_deeper_than_the_descriptor_limit_is_walked_whole() {
    let d = scratch();
    tree(d.path());
    for (args, req, holds) in requests() {
        let full = answer(d.path(), args, req, None);
        assert!(full.starts_with("0\n"), "{req}: {}", cut(&full));
        assert!(!full.contains("unreadable"), "{req}: {}", cut(&full));
        assert!(
            full.contains(&holds),
            "{req}: {holds} not in {}",
            cut(&full)
        );
        for n in [48, 32, 16, 8, 7, 6] {
            let got = answer(d.path(), args, req, Some(n));
            assert!(got == full, "{req} at {n} descriptors:\n{}", cut(&got));
        }
    }
}

/// Below the least the walk needs, what it could not read is said:
/// `unreadable` in protocol 4's answers, rg's `Too many open files` in the
/// toolset's grep and Python's `OSError` text in its glob.
#[test]
fn below_the_least_a_walk_needs_the_answer_says_so() {
    let d = scratch();
    tree(d.path());
    for (args, req, _) in requests() {
        let full = answer(d.path(), args, req, None);
        for n in [5, 4] {
            let got = answer(d.path(), args, req, Some(n));
            let said = got.contains("\"unreadable\":")
                || got.contains("Too many open files")
                || got.contains("Error 24"); // the dynamic loader's, in a debug build
            assert!(
                got == full || said,
                "{req} at {n} descriptors:\n{}",
                cut(&got)
            );
        }
    }
}

/// With `--root`, whose descriptor the op holds, one more: 7.
#[test]
fn under_a_root_the_walk_needs_one_descriptor_more() {
    let d = scratch();
    tree(d.path());
    let root = d.path().to_str().unwrap();
    let args: &[&str] = &["--root", root, "--stdin"];
    for (kind, req, holds) in requests() {
        if kind != PROTOCOL {
            continue;
        }
        let full = answer(d.path(), args, req, None);
        assert!(
            full.contains(&holds),
            "{req}: {holds} not in {}",
            cut(&full)
        );
        for n in [32, 8, 7] {
            let got = answer(d.path(), args, req, Some(n));
            assert!(got == full, "{req} at {n} descriptors:\n{}", cut(&got));
        }
    }
}
