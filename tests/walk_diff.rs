//! A differential on the Rust standard library's source (`rustup component
//! add rust-src`): `glob` against `rg --files -g` and `grep` against `rg`
//! (Debian `ripgrep`), every file (`--hidden --no-ignore`, as the ops'
//! defaults). Skips, saying why, when rg or rust-src is missing.
//!
//! Known differences, left out of the comparison: ripgrep stops reading a
//! file at a NUL anywhere (the ops look at the first 8 KiB): the patterns
//! here are chosen so that it cannot matter.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use as_edit::tools::find::{self, GlobRequest};
use as_edit::tools::grep_op::{self, GrepRequest, Output};
use as_edit::tools::walk::Options;

fn setup() -> Option<PathBuf> {
    if Command::new("rg").arg("--version").output().is_err() {
        eprintln!("skipped: rg (Debian ripgrep) is not installed");
        return None;
    }
    let sysroot = Command::new("rustc")
        .args(["--print", "sysroot"])
        .output()
        .ok()?;
    let root = PathBuf::from(String::from_utf8(sysroot.stdout).ok()?.trim())
        .join("lib/rustlib/src/rust/library");
    if !root.is_dir() {
        eprintln!(
            "skipped: no rust-src at {} (rustup component add rust-src)",
            root.display()
        );
        return None;
    }
    Some(root)
}

fn rg(dir: &Path, args: &[&str]) -> Vec<u8> {
    let o = Command::new("rg")
        .args(["--hidden", "--no-ignore", "--no-config"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    o.stdout
}

fn opts() -> Options {
    Options {
        hidden: true,
        ..Options::default()
    }
}

#[test]
fn glob_lists_what_rg_files_lists() {
    let Some(root) = setup() else { return };
    for g in [
        "*.rs",
        "core/src/**/*.rs",
        "*.{md,toml}",
        "alloc/**",
        "[a-c]*.rs",
        "**/tests/*.rs",
        "std/src/*/mod.rs",
        "*_[!a-m]*.rs",
        "?????.rs",
    ] {
        let req = GlobRequest {
            pattern: g.into(),
            path: Some(root.to_str().unwrap().as_bytes().to_vec()),
            by_mtime: false,
            offset: 0,
            limit: 100_000,
            walk: opts(),
        };
        let base = format!("{}/", root.to_str().unwrap());
        let got: Vec<String> = find::glob(&req, None)
            .unwrap()
            .entries
            .iter()
            .map(|e| String::from_utf8(e.path.clone()).unwrap())
            .map(|p| p.strip_prefix(&base).unwrap().to_owned())
            .collect();
        let out = rg(&root, &["--files", "--sort", "path", "-g", g]);
        let mut want: Vec<String> = String::from_utf8(out)
            .unwrap()
            .lines()
            .map(String::from)
            .collect();
        want.sort();
        assert!(!want.is_empty(), "{g}: rg found nothing");
        assert_eq!(got.len(), want.len(), "{g}");
        assert!(got == want, "{g}: the lists differ");
    }
}

#[test]
fn grep_finds_what_rg_finds() {
    let Some(root) = setup() else { return };
    for (pat, regex, ic) in [
        ("fn get_mut(", false, false),
        ("unsafe impl", false, false),
        (r"fn \w+_mut\(", true, false),
        (r"^\s*#\[inline\]$", true, false),
        ("todo:", false, true),
        (r"impl<T: \?Sized> Drop", true, false),
    ] {
        let req = GrepRequest {
            pattern: pat.into(),
            regex,
            ignore_case: ic,
            path: Some(root.to_str().unwrap().as_bytes().to_vec()),
            glob: None,
            output: Output::Content,
            context: 0,
            offset: 0,
            limit: 100_000,
            max_columns: 1_000_000,
            walk: opts(),
        };
        let g = grep_op::grep(&req, None, u64::MAX).unwrap();
        assert!(!g.truncated);
        let got: BTreeSet<String> = g
            .lines
            .iter()
            .map(|l| format!("{}:{}:{}", String::from_utf8_lossy(&l.path), l.line, l.text))
            .collect();
        let mut args = vec!["-n", "--with-filename", "--no-heading", "--color", "never"];
        if !regex {
            args.push("-F");
        }
        if ic {
            args.push("-i");
        }
        args.extend(["-e", pat, root.to_str().unwrap()]);
        let out = rg(&root, &args);
        let want: BTreeSet<String> = String::from_utf8_lossy(&out)
            .lines()
            .map(String::from)
            .collect();
        assert!(want.len() > 3, "{pat}: rg found {} lines", want.len());
        let missing: Vec<_> = want.difference(&got).take(3).collect();
        let extra: Vec<_> = got.difference(&want).take(3).collect();
        assert!(
            missing.is_empty() && extra.is_empty(),
            "{pat}: missing {missing:?}, extra {extra:?}"
        );
    }
}
