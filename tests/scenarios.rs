//! The scenario tables: every folder under `tests/scenarios/` (format in
//! `tests/scenarios/README.md`) runs through the real binary, through `sh -c`
//! as a host sends it and as a plain argv, and must give exactly the
//! expected stdout, an empty stderr, the expected exit code, and exactly the
//! expected directory tree (names, kinds, bytes, modes, link targets).
//! Entries whose content did not change keep their inode; a regular file
//! whose content changed has a new one (it was replaced by rename, never
//! written in place). `scripts/conformance.sh` runs the same folders in a
//! busybox-only root, so the two runs cannot drift apart.

mod common;
use common::*;

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use base64::Engine as _;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/scenarios");

#[derive(Clone, Copy, Debug, PartialEq)]
enum Way {
    Sh,
    Argv,
}

/// One folder, parsed.
struct Scenario {
    name: String,
    dir: PathBuf,
    exit: i32,
    ways: Vec<Way>,
    /// (encoded path, mode) from `mode:` lines.
    modes: Vec<(String, u32)>,
    fifos: Vec<String>,
    dirs: Vec<String>,
}

fn fail<T>(msg: impl Into<String>) -> Result<T, String> {
    Err(msg.into())
}

/// `%XX` → the byte; every other byte stands for itself.
fn decode_name(name: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(name.len());
    let mut i = 0;
    while i < name.len() {
        if name[i] == b'%' {
            let hex = name
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok());
            match hex {
                Some(b) => out.push(b),
                None => {
                    return fail(format!(
                        "bad %XX escape in {:?}",
                        String::from_utf8_lossy(name)
                    ))
                }
            }
            i += 3;
        } else {
            out.push(name[i]);
            i += 1;
        }
    }
    Ok(out)
}

/// An encoded relative path (`a/b%0Ac`) → the real relative path.
fn decode_path(p: &str) -> Result<PathBuf, String> {
    let mut out = PathBuf::new();
    for part in p.split('/') {
        out.push(OsStr::from_bytes(&decode_name(part.as_bytes())?));
    }
    Ok(out)
}

fn parse(dir: &Path) -> Result<Scenario, String> {
    let name = dir.file_name().unwrap().to_string_lossy().into_owned();
    let case = std::fs::read_to_string(dir.join("case")).map_err(|e| format!("case: {e}"))?;
    let mut s = Scenario {
        name,
        dir: dir.to_owned(),
        exit: -1,
        ways: vec![Way::Sh, Way::Argv],
        modes: vec![],
        fifos: vec![],
        dirs: vec![],
    };
    for line in case.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((key, value)) = line.split_once(':') else {
            return fail(format!("case: no `key:` in {line:?}"));
        };
        let value = value.trim();
        match key {
            "exit" => {
                s.exit = value
                    .parse()
                    .map_err(|_| format!("case: bad exit {value:?}"))?
            }
            "ways" => {
                s.ways = value
                    .split_whitespace()
                    .map(|w| match w {
                        "sh" => Ok(Way::Sh),
                        "argv" => Ok(Way::Argv),
                        _ => fail(format!("case: unknown way {w:?}")),
                    })
                    .collect::<Result<_, _>>()?
            }
            "mode" => {
                let (p, m) = value
                    .rsplit_once(' ')
                    .ok_or_else(|| format!("case: mode needs PATH OCTAL: {value:?}"))?;
                let m = u32::from_str_radix(m, 8).map_err(|_| format!("case: bad mode {m:?}"))?;
                s.modes.push((p.to_owned(), m));
            }
            "fifo" => s.fifos.push(value.to_owned()),
            "dir" => s.dirs.push(value.to_owned()),
            _ => return fail(format!("case: unknown key {key:?}")),
        }
    }
    if s.exit < 0 {
        return fail("case: no `exit:` line");
    }
    if s.ways.is_empty() {
        return fail("case: `ways:` names no way");
    }
    Ok(s)
}

/// Expands `{DIR}`, `{b64:NAME}` and `{file:NAME}` (NAME a file in the
/// scenario folder); any other `{` is literal.
fn expand(text: &[u8], scen: &Path, dir: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.iter().position(|&b| b == b'{') {
        out.extend_from_slice(&rest[..open]);
        rest = &rest[open + 1..];
        let tok = rest
            .iter()
            .position(|&b| b == b'}')
            .map(|close| &rest[..close]);
        let val = match tok {
            Some(b"DIR") => dir.to_vec(),
            Some(t) if t.starts_with(b"b64:") => {
                let bytes = read_aux(scen, &t[4..])?;
                base64::engine::general_purpose::STANDARD
                    .encode(bytes)
                    .into_bytes()
            }
            Some(t) if t.starts_with(b"file:") => read_aux(scen, &t[5..])?,
            _ => {
                out.push(b'{');
                continue;
            }
        };
        out.extend_from_slice(&val);
        rest = &rest[tok.unwrap().len() + 1..];
    }
    out.extend_from_slice(rest);
    Ok(out)
}

fn read_aux(scen: &Path, name: &[u8]) -> Result<Vec<u8>, String> {
    let p = scen.join(OsStr::from_bytes(name));
    std::fs::read(&p).map_err(|e| format!("{}: {e}", p.display()))
}

fn args(s: &Scenario, dir: &[u8]) -> Result<Vec<Vec<u8>>, String> {
    let text = std::fs::read(s.dir.join("args")).map_err(|e| format!("args: {e}"))?;
    if !text.is_empty() && !text.ends_with(b"\n") {
        return fail("args: the last line must end in a newline");
    }
    text.split(|&b| b == b'\n')
        .take(text.iter().filter(|&&b| b == b'\n').count())
        .map(|line| expand(line, &s.dir, dir))
        .collect()
}

/// Copies `tree` (a `before/` or `after/` folder, names `%XX`-encoded) into
/// `into`, then applies the case's modes, FIFOs and empty directories.
fn materialize(s: &Scenario, tree: &Path, into: &Path) -> Result<(), String> {
    fn copy(from: &Path, to: &Path) -> Result<(), String> {
        let mut names: Vec<_> = std::fs::read_dir(from)
            .map_err(|e| format!("{}: {e}", from.display()))?
            .map(|e| e.unwrap().file_name())
            .collect();
        names.sort();
        for n in names {
            let src = from.join(&n);
            let dst = to.join(OsStr::from_bytes(&decode_name(n.as_bytes())?));
            let t = std::fs::symlink_metadata(&src).unwrap().file_type();
            if t.is_symlink() {
                std::os::unix::fs::symlink(std::fs::read_link(&src).unwrap(), &dst).unwrap();
            } else if t.is_dir() {
                std::fs::create_dir(&dst).unwrap();
                std::fs::set_permissions(&dst, PermissionsExt::from_mode(0o755)).unwrap();
                copy(&src, &dst)?;
            } else {
                std::fs::write(&dst, std::fs::read(&src).unwrap()).unwrap();
                std::fs::set_permissions(&dst, PermissionsExt::from_mode(0o644)).unwrap();
            }
        }
        Ok(())
    }
    if tree.exists() {
        copy(tree, into)?;
    }
    for d in &s.dirs {
        let p = into.join(decode_path(d)?);
        std::fs::create_dir(&p).map_err(|e| format!("dir {d}: {e}"))?;
        std::fs::set_permissions(&p, PermissionsExt::from_mode(0o755)).unwrap();
    }
    for f in &s.fifos {
        let p = into.join(decode_path(f)?);
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &p,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o644),
            0,
        )
        .map_err(|e| format!("fifo {f}: {e}"))?;
        std::fs::set_permissions(&p, PermissionsExt::from_mode(0o644)).unwrap();
    }
    for (p, m) in &s.modes {
        let p = into.join(decode_path(p)?);
        std::fs::set_permissions(&p, PermissionsExt::from_mode(*m))
            .map_err(|e| format!("mode {}: {e}", p.display()))?;
    }
    Ok(())
}

#[derive(Debug, PartialEq, Clone)]
enum Kind {
    File(Vec<u8>),
    Dir,
    Link(PathBuf),
    Fifo,
    Other,
}

/// Every entry under `dir`: relative path → (kind with content, mode, inode).
fn snapshot(dir: &Path) -> BTreeMap<Vec<u8>, (Kind, u32, u64)> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<Vec<u8>, (Kind, u32, u64)>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            let m = std::fs::symlink_metadata(&p).unwrap();
            let t = m.file_type();
            let kind = if t.is_symlink() {
                Kind::Link(std::fs::read_link(&p).unwrap())
            } else if t.is_dir() {
                Kind::Dir
            } else if t.is_file() {
                Kind::File(std::fs::read(&p).unwrap())
            } else if std::os::unix::fs::FileTypeExt::is_fifo(&t) {
                Kind::Fifo
            } else {
                Kind::Other
            };
            let mode = if t.is_symlink() { 0 } else { m.mode() & 0o7777 };
            let rel = p
                .strip_prefix(root)
                .unwrap()
                .as_os_str()
                .as_bytes()
                .to_vec();
            out.insert(rel, (kind.clone(), mode, m.ino()));
            if kind == Kind::Dir {
                walk(root, &p, out);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

fn show(k: &[u8]) -> String {
    String::from_utf8_lossy(k).escape_debug().to_string()
}

fn run(s: &Scenario, way: Way, dir: &Path, argv: &[Vec<u8>]) -> std::process::Output {
    let mut c = match way {
        Way::Sh => {
            let refs: Vec<&[u8]> = argv.iter().map(|a| a.as_slice()).collect();
            let mut c = Command::new("sh");
            c.arg("-c")
                .arg(OsStr::from_bytes(&host_command(BIN, &refs)));
            c
        }
        Way::Argv => {
            let mut c = Command::new(BIN);
            c.args(argv.iter().map(|a| OsStr::from_bytes(a)));
            c
        }
    };
    let stdin = match std::fs::File::open(s.dir.join("stdin")) {
        Ok(f) => Stdio::from(f),
        Err(_) => Stdio::null(),
    };
    c.current_dir(dir)
        .stdin(stdin)
        .output()
        .expect("the command runs")
}

fn check(s: &Scenario, way: Way) -> Result<(), String> {
    let work = scratch();
    let expect = scratch();
    let dir_bytes = work.path().as_os_str().as_bytes();
    let (before_tree, after_tree) = (s.dir.join("before"), s.dir.join("after"));
    materialize(s, &before_tree, work.path())?;
    let expected_tree = if after_tree.exists() {
        &after_tree
    } else {
        &before_tree
    };
    materialize(s, expected_tree, expect.path())?;
    let argv = args(s, dir_bytes)?;
    let expected = expand(
        &std::fs::read(s.dir.join("expected")).map_err(|e| format!("expected: {e}"))?,
        &s.dir,
        dir_bytes,
    )?;
    let before = snapshot(work.path());
    let out = run(s, way, work.path(), &argv);
    if out.stdout != expected {
        return fail(format!(
            "stdout {:?}, want {:?} (stderr {:?})",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&expected),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    if !out.stderr.is_empty() {
        return fail(format!("stderr {:?}", String::from_utf8_lossy(&out.stderr)));
    }
    if out.status.code() != Some(s.exit) {
        return fail(format!("exit {:?}, want {}", out.status.code(), s.exit));
    }
    let got = snapshot(work.path());
    let want = snapshot(expect.path());
    let strip = |m: &BTreeMap<Vec<u8>, (Kind, u32, u64)>| {
        m.iter()
            .map(|(k, (kind, mode, _))| (k.clone(), (kind.clone(), *mode)))
            .collect::<BTreeMap<_, _>>()
    };
    let (got_t, want_t) = (strip(&got), strip(&want));
    if got_t != want_t {
        let names = |m: &BTreeMap<Vec<u8>, _>| m.keys().map(|k| show(k)).collect::<Vec<_>>();
        let diff: Vec<String> = got_t
            .iter()
            .filter(|(k, v)| want_t.get(*k) != Some(v))
            .map(|(k, (kind, mode))| {
                let what = match kind {
                    Kind::File(b) => format!("file {:?}", String::from_utf8_lossy(b)),
                    other => format!("{other:?}"),
                };
                format!("{} is {what} mode {mode:o}", show(k))
            })
            .collect();
        return fail(format!(
            "directory: got {:?}, want {:?}; differing: {diff:?}",
            names(&got_t),
            names(&want_t)
        ));
    }
    for (k, (kind, _, ino)) in &before {
        // Gone (a transaction's delete or move): the tree check covered it.
        let Some((kind_after, _, ino_after)) = got.get(k) else {
            continue;
        };
        if kind == kind_after && ino != ino_after {
            return fail(format!("{} is unchanged but has a new inode", show(k)));
        }
        if matches!(kind, Kind::File(_)) && kind != kind_after && ino == ino_after {
            return fail(format!(
                "{} changed in place (same inode): not replaced by rename",
                show(k)
            ));
        }
    }
    Ok(())
}

fn scenarios() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(ROOT)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    v.sort();
    v
}

#[test]
fn every_scenario_through_the_real_binary() {
    let dirs = scenarios();
    let mut failures = Vec::new();
    let mut runs = 0;
    for d in &dirs {
        let s = match parse(d) {
            Ok(s) => s,
            Err(e) => {
                failures.push(format!("{}: {e}", d.display()));
                continue;
            }
        };
        for &way in &s.ways {
            runs += 1;
            if let Err(e) = check(&s, way) {
                failures.push(format!("{} [{way:?}]: {e}", s.name));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {runs} runs failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(dirs.len() >= 84, "scenarios went missing: {}", dirs.len());
}

#[test]
fn scenario_folders_are_well_formed() {
    // A typo in a folder must not turn a case into one that checks nothing.
    let mut numbers = std::collections::BTreeSet::new();
    for d in scenarios() {
        let name = d.file_name().unwrap().to_str().unwrap().to_owned();
        let (num, rest) = name.split_at(3);
        assert!(
            num.bytes().all(|b| b.is_ascii_digit()) && rest.starts_with('-') && rest.len() > 1,
            "{name}: folders are named NNN-name"
        );
        assert!(numbers.insert(num.to_owned()), "{name}: number used twice");
        let s = parse(&d).unwrap_or_else(|e| panic!("{name}: {e}"));
        let args_text = std::fs::read(d.join("args")).unwrap();
        for entry in std::fs::read_dir(&d).unwrap() {
            let f = entry.unwrap().file_name();
            let f = f.to_str().unwrap();
            let referenced = args_text
                .windows(f.len() + 2)
                .any(|w| w[1..=f.len()] == *f.as_bytes() && w[0] == b':' && w[f.len() + 1] == b'}');
            assert!(
                ["case", "args", "expected", "stdin", "before", "after"].contains(&f) || referenced,
                "{name}: {f} is neither part of the format nor referenced by args"
            );
        }
        let expected = std::fs::read(d.join("expected")).unwrap();
        assert!(
            expected.starts_with(b"__RESULT__")
                && expected.ends_with(b"\n")
                && expected.iter().filter(|&&b| b == b'\n').count() == 1,
            "{name}: expected is one __RESULT__ line"
        );
        assert!(s.exit <= 2, "{name}: exit codes are 0, 1 or 2");
    }
    assert!(!numbers.is_empty());
}
