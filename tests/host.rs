//! The host library end to end through `LocalShell`: every outcome, the
//! fallback's parity with the helper, noisy outputs, and installing the
//! helper over exec into a busybox-only root.

mod common;
use common::*;

use as_edit::protocol::ErrorKind;
use as_edit_host::{
    self as host, EditError, EditRequest, Edited, HelperOutcome, LocalShell, Sandbox, Token, Via,
};
use proptest::prelude::*;
use std::path::{Path, PathBuf};

fn editor(helper: &str) -> host::Editor<LocalShell> {
    host::Editor::new(LocalShell::new(), helper)
}

fn refused_kind(e: &EditError) -> (&str, Via) {
    match e {
        EditError::Failed { kind, via, .. } => (kind.as_str(), *via),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn native_edit_and_every_refusal() {
    let d = scratch();
    let p = write_file(d.path(), "f.txt", b"a\r\nb b\n", 0o640);
    let mut ed = editor(BIN);
    assert_eq!(
        ed.edit(&EditRequest::new(&p, "a\n", "A\n", false)).unwrap(),
        native(1)
    );
    assert_eq!(std::fs::read(&p).unwrap(), b"A\nb b\n");
    let e = ed.edit(&EditRequest::new(&p, "b", "c", false)).unwrap_err();
    assert!(matches!(&e, EditError::Failed { count: Some(2), .. }));
    assert_eq!(refused_kind(&e), ("multiple_occurrences", Via::Native));
    // The helper (protocol 2) was asked for hints: the occurrence lines.
    assert_eq!(
        e.to_string(),
        "2 occurrences, starting on lines 2, 2; pass at_line to choose one \
         (where a line holds several, extend OLD instead)"
    );
    let e = ed
        .edit(&EditRequest::new(&p, "zz", "c", false))
        .unwrap_err();
    assert_eq!(refused_kind(&e), ("string_not_found", Via::Native));
    assert_eq!(e.to_string(), "string not found");
    let e = ed
        .edit(&EditRequest::new(d.path().join("nope"), "a", "b", false))
        .unwrap_err();
    assert_eq!(refused_kind(&e), ("file_not_found", Via::Native));
    let e = ed.edit(&EditRequest::new(&p, "", "b", false)).unwrap_err();
    assert_eq!(refused_kind(&e), ("invalid_argument", Via::Native));
    std::fs::write(&p, b"").unwrap();
    let e = ed.edit(&EditRequest::new(&p, "a", "b", false)).unwrap_err();
    assert_eq!(refused_kind(&e), ("empty", Via::Native));
    std::fs::write(&p, b"\xff").unwrap();
    let e = ed.edit(&EditRequest::new(&p, "a", "b", false)).unwrap_err();
    assert_eq!(refused_kind(&e), ("read_failed", Via::Native));
    assert_eq!(listing(d.path()), vec!["f.txt"]);
}

#[test]
fn missing_or_non_executable_helper_falls_back_to_transfer() {
    let d = scratch();
    let p = write_file(d.path(), "f.txt", b"x\r\ny\n", 0o644);
    let not_exec = write_file(d.path(), "not-exec", b"#!/bin/sh\n", 0o644);
    for helper in ["/nonexistent/as-edit", not_exec.to_str().unwrap()] {
        std::fs::write(&p, b"x\r\ny\n").unwrap();
        let mut ed = editor(helper);
        assert_eq!(
            ed.edit(&EditRequest::new(&p, "x\n", "z\n", false)).unwrap(),
            transfer(1),
            "helper {helper}"
        );
        assert_eq!(
            std::fs::read(&p).unwrap(),
            b"z\ny\n",
            "same normalization as the helper"
        );
        // Refusals on the transfer path carry the same tokens.
        let e = ed.edit(&EditRequest::new(&p, "q", "r", false)).unwrap_err();
        assert_eq!(refused_kind(&e), ("string_not_found", Via::Transfer));
    }
}

#[test]
fn write_failed_falls_back_and_other_refusals_do_not() {
    if !setpriv_available() {
        return skip("needs root and setpriv for a directory the helper cannot write");
    }
    // A sandbox whose exec runs as nobody (the helper cannot create its temp
    // in a root-owned directory) while the transfer path can write the file.
    struct AsNobody(LocalShell);
    impl Sandbox for AsNobody {
        fn exec(
            &mut self,
            command: &[u8],
            stdin: Option<&[u8]>,
        ) -> std::io::Result<host::ExecOutput> {
            let mut c = b"setpriv --reuid=65534 --regid=65534 --clear-groups -- sh -c ".to_vec();
            c.extend_from_slice(&host::command::sh_quote(command));
            self.0.exec(&c, stdin)
        }
        fn download(&mut self, p: &Path) -> std::io::Result<Vec<u8>> {
            self.0.download(p)
        }
        fn upload(&mut self, p: &Path, b: &[u8]) -> std::io::Result<()> {
            self.0.upload(p, b)
        }
    }
    let d = scratch();
    let p = write_file(d.path(), "f.txt", b"old", 0o666);
    let mut ed = host::Editor::new(AsNobody(LocalShell::new()), nobody_bin());
    assert_eq!(
        ed.edit(&EditRequest::new(&p, "old", "new", false)).unwrap(),
        transfer(1)
    );
    assert_eq!(std::fs::read(&p).unwrap(), b"new");
    let e = ed
        .edit(&EditRequest::new(&p, "absent", "x", false))
        .unwrap_err();
    assert_eq!(refused_kind(&e), ("string_not_found", Via::Native));
}

#[test]
fn oversized_edits_go_through_stdin_or_transfer() {
    let d = scratch();
    let old = "o".repeat(200 * 1024);
    let content = format!("head\n{old}\ntail\n");
    let p = write_file(d.path(), "big.txt", content.as_bytes(), 0o644);
    // LocalShell has stdin: the helper edits natively with --stdin.
    let mut ed = editor(BIN);
    assert_eq!(
        ed.edit(&EditRequest::new(&p, old.as_str(), "N", false))
            .unwrap(),
        native(1)
    );
    assert_eq!(std::fs::read(&p).unwrap(), b"head\nN\ntail\n");
    // Without stdin, nothing is sent to the helper: the transfer path edits.
    struct NoStdin(LocalShell, usize);
    impl Sandbox for NoStdin {
        fn exec(&mut self, c: &[u8], s: Option<&[u8]>) -> std::io::Result<host::ExecOutput> {
            self.1 += 1;
            self.0.exec(c, s)
        }
        fn download(&mut self, p: &Path) -> std::io::Result<Vec<u8>> {
            self.0.download(p)
        }
        fn upload(&mut self, p: &Path, b: &[u8]) -> std::io::Result<()> {
            self.0.upload(p, b)
        }
    }
    std::fs::write(&p, content.as_bytes()).unwrap();
    let mut ed = host::Editor::new(NoStdin(LocalShell::new(), 0), BIN);
    assert_eq!(
        ed.edit(&EditRequest::new(&p, old.as_str(), "N", false))
            .unwrap(),
        transfer(1)
    );
    assert_eq!(ed.sandbox.1, 0, "no command was sent");
    let err = host::command::shell_command(
        BIN,
        &EditRequest::new(&p, old.as_str(), "N", false),
        112 * 1024,
    )
    .unwrap_err();
    assert!(err.size > 200 * 1024 && err.limit == 112 * 1024);
}

#[test]
fn noisy_backend_outputs() {
    let cases: &[(&[u8], Option<i32>, HelperOutcome)] = &[
        (
            b"Last login: today\n. /etc/profile: ok\n__RESULT__{\"count\":1}\n",
            Some(0),
            HelperOutcome::Edited { count: 1 },
        ),
        (
            b"__RESULT__{\"count\":1}\r\n\r\n[stderr] bash: warning: setlocale\r\n",
            Some(0),
            HelperOutcome::Edited { count: 1 },
        ),
        (
            b"echo __RESULT__{\"count\":7}\n__RESULT__{\"error\":\"string_not_found\"}\n",
            Some(1),
            HelperOutcome::Failed {
                kind: Token::Known(ErrorKind::StringNotFound),
                detail: None,
                count: None,
                hints: None,
            },
        ),
        (
            b"\n[stderr] sh: 1: /opt/as-edit: not found\n",
            Some(127),
            HelperOutcome::HelperUnavailable,
        ),
        (
            b"sh: /opt/as-edit: cannot execute binary file: Exec format error\n",
            Some(126),
            HelperOutcome::HelperUnavailable,
        ),
        (
            b"Killed\n",
            Some(137),
            HelperOutcome::Unexpected {
                exit_code: Some(137),
                excerpt: "Killed".into(),
            },
        ),
    ];
    for (out, code, want) in cases {
        assert_eq!(
            &host::parse_output(out, *code),
            want,
            "{}",
            String::from_utf8_lossy(out)
        );
    }
}

fn native_vs_transfer(
    content: &[u8],
    old: &str,
    new: &str,
    all: bool,
    at_line: Option<u64>,
) -> Result<(), TestCaseError> {
    let d = scratch();
    let a = write_file(d.path(), "native", content, 0o644);
    let b = write_file(d.path(), "transfer", content, 0o644);
    let req = |p: &Path| {
        let r = EditRequest::new(p, old, new, all);
        match at_line {
            Some(l) => r.at_line(l),
            None => r,
        }
    };
    let mut ed = editor(BIN);
    let native = ed.edit(&req(&a));
    // Protocol 2 or later: hints were asked for.
    prop_assert!(ed.helper_protocol() >= Some(2), "hints were asked for");
    let transfer = host::transfer_edit(&mut LocalShell::new(), &req(&b));
    // Token, count, the parsed hints and the words a model reads: the
    // helper's --hints and the fallback's own must agree exactly.
    type Summary = Result<u64, (String, Option<u64>, Option<host::RefusalHints>, String)>;
    let summary = |r: &Result<Edited, EditError>, p: &Path| -> Summary {
        match r {
            Ok(e) => Ok(e.count),
            Err(
                e @ EditError::Failed {
                    kind, count, hints, ..
                },
            ) => Err((
                kind.as_str().to_owned(),
                *count,
                hints.as_deref().cloned(),
                // An invalid request is worded for its form (the helper's
                // argv names `--at-line`, the fallback the field `at_line`).
                if kind.as_str() == "invalid_argument" {
                    String::new()
                } else {
                    e.to_string().replace(p.to_str().unwrap(), "<P>")
                },
            )),
            Err(e) => panic!("{e}"),
        }
    };
    let (n, t) = (summary(&native, &a), summary(&transfer, &b));
    // --at-line refusals name the lines in their detail and carry no hints.
    if let (Err((token, _, hints, _)), None) = (&n, at_line) {
        if token == "string_not_found" || token == "multiple_occurrences" {
            prop_assert!(hints.is_some(), "the helper answered with hints");
        }
    }
    prop_assert_eq!(n, t);
    prop_assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]
    #[test]
    fn native_and_transfer_agree(
        content in prop::collection::vec(prop::sample::select(vec!["a", "b", "ab", " ", "\t", "  ab\n", "\tab\n", "ab  \n", "a  b\n", "\r\n", "\r", "\n", "é", "😀", "\u{2019}"]), 0..24).prop_map(|v| v.concat()),
        old in prop::collection::vec(prop::sample::select(vec!["a", "b", "ab", "ab\n", " ", "\t", "\r", "\n", "é", "'", "\\n"]), 1..5).prop_map(|v| v.concat()),
        new in prop::collection::vec(prop::sample::select(vec!["x", "\r\n", "😀", "a"]), 0..3).prop_map(|v| v.concat()),
        all in any::<bool>(),
        at_line in prop::option::of(1u64..5),
        bad in any::<bool>(),
    ) {
        let mut bytes = content.into_bytes();
        if bad { bytes.push(0xff); }
        native_vs_transfer(&bytes, &old, &new, all, at_line)?;
    }
}

/// A throw-away root with only a static busybox: the image of a sandbox with
/// nothing but `sh` and the `tools` named.
fn busybox_root(tools: &[&str]) -> Option<tempfile::TempDir> {
    if !is_root() {
        skip("chroot needs root");
        return None;
    }
    if !Path::new("/bin/busybox").exists() {
        skip("busybox-static is not installed (scripts/test.sh installs it)");
        return None;
    }
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(root.path().join("bin")).unwrap();
    std::fs::create_dir_all(root.path().join("opt")).unwrap();
    std::fs::create_dir_all(root.path().join("work")).unwrap();
    // Copied by a child process: had this process held the file open for
    // writing, a thread forking meanwhile could keep that descriptor until
    // its exec, and running busybox would fail with ETXTBSY.
    let cp = std::process::Command::new("cp")
        .arg("/bin/busybox")
        .arg(root.path().join("bin/busybox"))
        .status()
        .unwrap();
    assert!(cp.success());
    for t in ["sh"].iter().chain(tools) {
        std::os::unix::fs::symlink("busybox", root.path().join("bin").join(t)).unwrap();
    }
    Some(root)
}

/// The minimal tools every shell install needs besides `sh`.
const BASIC: [&str; 4] = ["chmod", "mv", "rm", "cat"];

fn static_binary() -> Option<PathBuf> {
    match std::env::var_os("AS_EDIT_STATIC_BIN") {
        Some(p) => Some(PathBuf::from(p)),
        None => {
            skip("AS_EDIT_STATIC_BIN is not set (scripts/test.sh builds the static binary and sets it)");
            None
        }
    }
}

/// A sandbox that records every command, and can refuse the `fail_at`-th
/// (0-based) without running it, as a backend failing mid-install would, or
/// run commands with one text replaced (`rewrite`, to inject a failing step).
/// `error_at` makes the backend itself fail that exec (a timeout).
struct Recording<S> {
    inner: S,
    commands: Vec<Vec<u8>>,
    fail_at: Option<usize>,
    error_at: Option<usize>,
    rewrite: Option<(&'static [u8], &'static [u8])>,
}

impl Recording<LocalShell> {
    /// Records every command run in the chroot `root`, refusing and
    /// rewriting none.
    fn in_root(root: &Path) -> Self {
        Recording {
            inner: LocalShell {
                chroot: Some(root.to_path_buf()),
            },
            commands: Vec::new(),
            fail_at: None,
            error_at: None,
            rewrite: None,
        }
    }
}

impl<S: Sandbox> Sandbox for Recording<S> {
    fn exec(&mut self, c: &[u8], s: Option<&[u8]>) -> std::io::Result<host::ExecOutput> {
        self.commands.push(c.to_vec());
        if self.fail_at == Some(self.commands.len() - 1) {
            return Ok(host::ExecOutput {
                exit_code: Some(1),
                output: b"injected failure".to_vec(),
            });
        }
        if self.error_at == Some(self.commands.len() - 1) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "injected timeout",
            ));
        }
        match self.rewrite {
            Some((from, to)) if contains(c, from) => {
                let at = c.windows(from.len()).position(|w| w == from).unwrap();
                let changed = [&c[..at], to, &c[at + from.len()..]].concat();
                self.inner.exec(&changed, s)
            }
            _ => self.inner.exec(c, s),
        }
    }
    fn download(&mut self, p: &Path) -> std::io::Result<Vec<u8>> {
        self.inner.download(p)
    }
    fn upload(&mut self, p: &Path, b: &[u8]) -> std::io::Result<()> {
        self.inner.upload(p, b)
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// Which transfer an install's commands used, read from their text.
fn transfer_of(commands: &[Vec<u8>]) -> &'static str {
    let any = |n: &[u8]| commands.iter().any(|c| contains(c, n));
    match (any(b"| base64 -d"), any(b"gzip -dc <"), any(b"zcat <")) {
        (false, false, false) => "printf",
        (true, false, false) => "base64",
        (true, true, false) => "gzip+base64",
        (false, true, false) => "gzip+printf",
        (false, false, true) => "zcat+printf",
        other => panic!("unexpected mix {other:?}"),
    }
}

#[test]
fn install_over_exec_into_a_busybox_root_then_edit() {
    let Some(bin) = static_binary() else { return };
    let binary = std::fs::read(&bin).unwrap();
    let limit = host::DEFAULT_COMMAND_LIMIT;
    for (extra, want) in [
        (&[][..], "printf"),
        (&["base64"][..], "base64"),
        (&["base64", "gzip"][..], "gzip+base64"),
        (&["gzip"][..], "gzip+printf"),
        (&["zcat"][..], "zcat+printf"),
    ] {
        let tools: Vec<&str> = BASIC.iter().chain(extra).copied().collect();
        let Some(root) = busybox_root(&tools) else {
            return;
        };
        let shell = Recording::in_root(root.path());
        let mut ed = host::Editor::new(shell, "/opt/as-edit");
        assert!(ed.ensure_helper(&binary).unwrap(), "installed ({want})");
        let cmds = std::mem::take(&mut ed.sandbox.commands);
        assert_eq!(transfer_of(&cmds[1..]), want);
        // Every exec the Editor made: the probe, then the transfer's commands.
        let tools =
            host::install::parse_probe(&ed.sandbox.inner.exec(&cmds[0], None).unwrap().output);
        let (_, planned) =
            host::install::install_commands(&binary, "/opt/as-edit", tools, limit, "x");
        assert_eq!(cmds.len(), 1 + planned.len(), "{want}");
        assert!(cmds.iter().all(|c| c.len() <= limit), "{want}");
        assert_eq!(
            std::fs::read(root.path().join("opt/as-edit")).unwrap(),
            binary,
            "{want}"
        );
        assert_eq!(mode(&root.path().join("opt/as-edit")), 0o755);
        assert_eq!(
            listing(&root.path().join("opt")),
            vec!["as-edit"],
            "no partial file left ({want})"
        );
        assert!(
            !ed.ensure_helper(&binary).unwrap(),
            "already there: not installed again"
        );
        assert_eq!(ed.sandbox.commands.len(), 1, "one exec when installed");
        std::fs::write(root.path().join("work/f.txt"), b"a\r\nb\r\n").unwrap();
        assert_eq!(
            ed.edit(&EditRequest::new("/work/f.txt", "b\n", "B\n", false))
                .unwrap(),
            native(1)
        );
        assert_eq!(
            std::fs::read(root.path().join("work/f.txt")).unwrap(),
            b"a\nB\n"
        );
        assert!(
            !root.path().join("usr/bin/python3").exists()
                && !root.path().join("bin/python3").exists()
        );
    }
}

#[test]
fn a_failed_install_leaves_nothing_behind() {
    // A backend failing at the second data command (a partial temp, plain or
    // compressed, exists), or a last step failing after the decompression
    // (busybox sh runs `mv` as a built-in applet, so a failure is injected
    // into the command instead): the destination stays absent and no temp
    // is left.
    let Some(bin) = static_binary() else { return };
    let binary = std::fs::read(&bin).unwrap();
    let sabotage: (&[u8], &[u8]) = (b" && chmod 755 ", b" && false && chmod 755 ");
    for (extra, fail_at, rewrite) in [
        (&[][..], Some(2), None),
        (&["base64", "gzip"][..], Some(2), None),
        (&["base64", "gzip"][..], None, Some(sabotage)),
        (&["base64"][..], None, Some(sabotage)),
    ] {
        let tools: Vec<&str> = BASIC.iter().chain(extra).copied().collect();
        let Some(root) = busybox_root(&tools) else {
            return;
        };
        let mut ed = host::Editor::new(
            Recording {
                fail_at,
                rewrite,
                ..Recording::in_root(root.path())
            },
            "/opt/as-edit",
        )
        // Small commands: several data commands whatever the binary's size,
        // so the injected failure is a middle one.
        .with_command_limit(32 * 1024);
        let e = ed.ensure_helper(&binary).unwrap_err();
        let why = if fail_at.is_some() {
            "a step exited Some(1): injected failure"
        } else {
            "the last step (verify, move into place, run --version) exited Some(1)"
        };
        assert!(
            matches!(&e, EditError::Install(m) if m.starts_with(why)),
            "{e:?}"
        );
        assert!(
            contains(
                ed.sandbox.commands.last().unwrap(),
                b"rm -f '/opt/as-edit.part-"
            ),
            "cleanup ran last"
        );
        assert_eq!(
            listing(&root.path().join("opt")),
            Vec::<String>::new(),
            "{extra:?} fail_at {fail_at:?}"
        );
    }
}

/// A stand-in helper: a script answering `--version` like the helper, its
/// version line at the end after `len` bytes of comments, so any truncation
/// leaves a program that exits 0 and prints nothing.
fn script_helper(len: usize) -> Vec<u8> {
    let mut v = b"#!/bin/sh\n".to_vec();
    while v.len() < len {
        v.extend_from_slice(b"# padding that a truncated copy ends inside of\n");
    }
    let line = format!(
        "echo 'as-edit 9.9.9 (protocol {}; test)'\n",
        as_edit::protocol::PROTOCOL_VERSION
    );
    v.extend_from_slice(line.as_bytes());
    v
}

#[test]
fn a_damaged_payload_never_replaces_a_working_helper() {
    // A zcat that exits 0 with wrong bytes (the first 100,000): the temp
    // fails its --version check and the protocol-1 helper already at DEST
    // stays, byte for byte; no temp is left. With a sound zcat the same
    // payload installs (it is a helper; only the damage stopped it).
    let old_helper = b"#!/bin/sh\necho 'as-edit 0.0.9 (protocol 1; old)'\n";
    let mut payloads = vec![("script", script_helper(300_000))];
    if let Some(bin) = static_binary() {
        payloads.push(("static binary", std::fs::read(bin).unwrap()));
    }
    for (what, payload) in payloads {
        let Some(root) = busybox_root(&BASIC) else {
            return;
        };
        let zcat = root.path().join("bin/zcat");
        write_executable(&zcat, b"#!/bin/sh\nbusybox zcat | busybox head -c 100000\n");
        let dest = root.path().join("opt/as-edit");
        write_executable(&dest, old_helper);
        let mut ed = host::Editor::new(Recording::in_root(root.path()), "/opt/as-edit");
        let e = ed.ensure_helper(&payload).unwrap_err();
        // The script exits 0 printing nothing (the sh check refuses it); the
        // truncated ELF crashes (its exit status refuses it).
        let why = if what == "script" {
            "the last step (verify, move into place, run --version) exited Some(1): not the helper:"
        } else {
            "the last step (verify, move into place, run --version) exited Some("
        };
        assert!(
            matches!(&e, EditError::Install(m) if m.starts_with(why) && !m.contains("Some(0)")),
            "{what}: {e:?}"
        );
        assert_eq!(transfer_of(&ed.sandbox.commands[1..]), "zcat+printf");
        assert_eq!(std::fs::read(&dest).unwrap(), old_helper, "{what}");
        assert_eq!(listing(&root.path().join("opt")), vec!["as-edit"], "{what}");
        // The control: a zcat that works installs the same payload.
        std::fs::remove_file(&zcat).unwrap();
        std::os::unix::fs::symlink("busybox", &zcat).unwrap();
        if what == "script" {
            assert!(ed.ensure_helper(&payload).unwrap(), "{what}");
            assert_eq!(std::fs::read(&dest).unwrap(), payload, "{what}");
            assert_eq!(listing(&root.path().join("opt")), vec!["as-edit"]);
        }
    }
}

#[test]
fn a_backend_failing_mid_install_leaves_no_temp() {
    // The backend's exec itself fails (a timeout) at the second data
    // command or the last one: the error is the backend's, and the cleanup
    // still runs, so neither the temp nor its .gz stays. Incompressible
    // bytes: several commands on every transfer.
    let mut x = 1u32;
    let payload: Vec<u8> = (0..100_000)
        .map(|_| {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            (x >> 24) as u8
        })
        .collect();
    for (extra, error_at) in [
        (&[][..], 2),
        (&["base64", "gzip"][..], 2),
        (&["base64", "gzip"][..], usize::MAX),
    ] {
        let tools: Vec<&str> = BASIC.iter().chain(extra).copied().collect();
        let Some(root) = busybox_root(&tools) else {
            return;
        };
        let planned = {
            let mut sh = LocalShell {
                chroot: Some(root.path().to_path_buf()),
            };
            let probe = sh
                .exec(&host::install::probe_command("/opt/as-edit"), None)
                .unwrap();
            let tools = host::install::parse_probe(&probe.output);
            host::install::install_commands(&payload, "/opt/as-edit", tools, 8 * 1024, "x")
                .1
                .len()
        };
        assert!(planned >= 3, "{extra:?}: {planned} commands");
        // usize::MAX: the last data command (index `planned`, after the probe).
        let error_at = error_at.min(planned);
        let mut ed = host::Editor::new(
            Recording {
                error_at: Some(error_at),
                ..Recording::in_root(root.path())
            },
            "/opt/as-edit",
        )
        .with_command_limit(8 * 1024);
        let e = ed.ensure_helper(&payload).unwrap_err();
        assert!(
            matches!(&e, EditError::Backend(io) if io.kind() == std::io::ErrorKind::TimedOut),
            "{e:?}"
        );
        assert_eq!(ed.sandbox.commands.len(), error_at + 2, "{extra:?}");
        assert!(contains(
            ed.sandbox.commands.last().unwrap(),
            b"rm -f '/opt/as-edit.part-"
        ));
        assert_eq!(
            listing(&root.path().join("opt")),
            Vec::<String>::new(),
            "{extra:?} error_at {error_at}"
        );
    }
}

/// LocalShell with the commands' PATH limited to `dir`: the image of a
/// sandbox whose shell (dash, no applets) lacks some tools.
struct WithPath {
    inner: LocalShell,
    dir: PathBuf,
    commands: usize,
}

impl Sandbox for WithPath {
    fn exec(&mut self, c: &[u8], s: Option<&[u8]>) -> std::io::Result<host::ExecOutput> {
        self.commands += 1;
        let prefix = format!("PATH='{}'; ", self.dir.display());
        self.inner.exec(&[prefix.as_bytes(), c].concat(), s)
    }
    fn download(&mut self, p: &Path) -> std::io::Result<Vec<u8>> {
        self.inner.download(p)
    }
    fn upload(&mut self, p: &Path, b: &[u8]) -> std::io::Result<()> {
        self.inner.upload(p, b)
    }
}

#[test]
fn a_sandbox_without_mv_or_rm_is_refused_before_anything_is_written() {
    let d = scratch();
    let tools = d.path().join("tools");
    std::fs::create_dir(&tools).unwrap();
    for t in ["chmod", "cat", "base64", "gzip"] {
        let at = ["/bin", "/usr/bin"]
            .iter()
            .map(|b| Path::new(b).join(t))
            .find(|p| p.exists())
            .unwrap();
        std::os::unix::fs::symlink(at, tools.join(t)).unwrap();
    }
    let opt = d.path().join("opt");
    std::fs::create_dir(&opt).unwrap();
    let dest = opt.join("as-edit");
    let mut ed = host::Editor::new(
        WithPath {
            inner: LocalShell::new(),
            dir: tools,
            commands: 0,
        },
        dest.to_str().unwrap(),
    );
    let e = ed.ensure_helper(&script_helper(1000)).unwrap_err();
    assert!(
        matches!(&e, EditError::Install(m)
            if m == "the sandbox has no mv, rm: cannot install over exec (nothing was written)"),
        "{e:?}"
    );
    assert_eq!(ed.sandbox.commands, 1, "the probe only");
    assert_eq!(listing(&opt), Vec::<String>::new());
}

#[test]
fn the_example_edits_natively_and_through_the_fallback() {
    // cargo test builds examples beside the binary: target/<profile>/examples/host.
    let example = Path::new(BIN).parent().unwrap().join("examples/host");
    if !example.exists() {
        return skip("the host example is not built (cargo test builds it by default)");
    }
    let d = scratch();
    let p = write_file(d.path(), "f.txt", b"a b a\n", 0o644);
    let run = |helper: Option<&str>, args: &[&str]| {
        let mut c = std::process::Command::new(&example);
        c.arg(&p).args(args);
        match helper {
            Some(h) => c.env("AS_EDIT_HELPER", h),
            None => c.env("AS_EDIT_HELPER", BIN),
        };
        let o = c.output().unwrap();
        (
            String::from_utf8(o.stdout).unwrap(),
            o.status.code().unwrap(),
        )
    };
    assert_eq!(
        run(None, &["a", "c"]),
        (
            "2 occurrences, starting on lines 1, 1; pass at_line to choose one \
             (where a line holds several, extend OLD instead)\n"
                .into(),
            1
        )
    );
    assert_eq!(
        run(None, &["a", "c", "--all"]),
        ("edited 2 (native)\n".into(), 0)
    );
    assert_eq!(
        run(Some("/nonexistent"), &["b", "B"]),
        ("edited 1 (fallback: transfer)\n".into(), 0)
    );
    assert_eq!(run(None, &["zzz", "q"]), ("string not found\n".into(), 1));
    assert_eq!(std::fs::read(&p).unwrap(), b"c B c\n");
}

/// Bytes that stress the printf format: every ordered pair of byte values
/// (so each escape is followed by every possible digit), runs of '-' that
/// chunk boundaries split, '%', '\\', quotes and NUL; behind a script
/// header that answers `--version` as the helper does, so the install's
/// check before the `mv` passes and the bytes land at the destination.
fn nasty_payload() -> Vec<u8> {
    let mut v = format!(
        "#!/bin/sh\necho 'as-edit 9.9.9 (protocol {}; test)'\nexit 0\n",
        as_edit::protocol::PROTOCOL_VERSION
    )
    .into_bytes();
    v.extend_from_slice(b"-x%s\\'\0");
    for a in 0..=255u8 {
        for b in 0..=255u8 {
            v.extend_from_slice(&[a, b]);
        }
    }
    for _ in 0..3000 {
        v.extend_from_slice(b"-0\x00-7%\\");
    }
    v
}

/// Runs an install's commands in `sh`; the bytes at `dest_on_host` must be
/// `payload` exactly, mode 755, with nothing else left in `dir_on_host`.
fn install_and_compare(
    sh: &mut LocalShell,
    payload: &[u8],
    dest: &str,
    dest_on_host: &Path,
    tools: host::install::Tools,
    want: host::install::Transfer,
) {
    // A small bound: many chunks, so many boundaries.
    let (t, cmds) = host::install::install_commands(payload, dest, tools, 8 * 1024, "t");
    assert_eq!(t, want, "{tools:?}");
    for (i, c) in cmds.iter().enumerate() {
        let o = sh.exec(c, None).unwrap();
        assert_eq!(
            o.exit_code,
            Some(0),
            "{t:?} step {i}: {}",
            String::from_utf8_lossy(&o.output)
        );
    }
    let got = std::fs::read(dest_on_host).unwrap();
    if got != payload {
        let at = got.iter().zip(payload).position(|(a, b)| a != b);
        panic!(
            "{t:?}: {} bytes installed, {} sent, first difference at {at:?}",
            got.len(),
            payload.len()
        );
    }
    assert_eq!(mode(dest_on_host), 0o755);
    assert_eq!(
        listing(dest_on_host.parent().unwrap()),
        vec![dest_on_host
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .to_owned()],
        "{t:?}"
    );
}

fn every_transfer() -> Vec<(host::install::Tools, host::install::Transfer)> {
    use host::install::{Encoding::*, Gunzip::*, Tools, Transfer};
    let tools = |base64, gunzip| Tools { base64, gunzip };
    let tr = |encoding, gunzip| Transfer { encoding, gunzip };
    vec![
        (tools(false, None), tr(Printf, None)),
        (tools(true, None), tr(Base64, None)),
        (tools(true, Some(Gzip)), tr(Base64, Some(Gzip))),
        (tools(false, Some(Gzip)), tr(Printf, Some(Gzip))),
        (tools(false, Some(Zcat)), tr(Printf, Some(Zcat))),
    ]
}

#[test]
fn every_transfer_carries_any_bytes_under_dash_and_busybox() {
    // Debian's /bin/sh is dash (a chunk starting with '-' was once taken for
    // a printf option there); busybox sh and its printf, base64, gzip, zcat
    // are what minimal images have.
    let payload = nasty_payload();
    for (tools, want) in every_transfer() {
        let d = scratch();
        let dest = d.path().join("helper");
        let mut sh = LocalShell::new();
        install_and_compare(
            &mut sh,
            &payload,
            dest.to_str().unwrap(),
            &dest,
            tools,
            want,
        );
    }
    for (tools, want) in every_transfer() {
        let Some(root) = busybox_root(&["chmod", "mv", "rm", "base64", "gzip", "zcat"]) else {
            return;
        };
        let mut sh = LocalShell {
            chroot: Some(root.path().to_path_buf()),
        };
        let on_host = root.path().join("opt/h");
        install_and_compare(&mut sh, &payload, "/opt/h", &on_host, tools, want);
    }
}

#[test]
fn the_system_sh_installs_a_helper_that_runs() {
    // The real binary through dash, each transfer, verified by --version as
    // the last command does.
    let real = std::fs::read(BIN).unwrap();
    for (tools, _) in every_transfer() {
        let d = scratch();
        let dest = d.path().join("helper");
        let (t, cmds) = host::install::install_commands(
            &real,
            dest.to_str().unwrap(),
            tools,
            host::DEFAULT_COMMAND_LIMIT,
            "t",
        );
        let mut sh = LocalShell::new();
        let mut out = host::ExecOutput::default();
        for c in &cmds {
            out = sh.exec(c, None).unwrap();
            assert_eq!(
                out.exit_code,
                Some(0),
                "{t:?}: {}",
                String::from_utf8_lossy(&out.output)
            );
        }
        assert!(host::install::is_helper_version(&out.output), "{t:?}");
        assert_eq!(std::fs::read(&dest).unwrap(), real);
        assert_eq!(listing(d.path()), vec!["helper"]);
    }
}

// What a model reads from EditError's Display, through the real helper
// (protocol 2, so the Editor asked for hints), and at_line end to end.
#[test]
fn refusals_are_worded_for_a_model_and_at_line_picks_one() {
    let d = scratch();
    let p = write_file(
        d.path(),
        "f.py",
        b"def f():\n    if x:\n        go()\n    return 2\n",
        0o644,
    );
    let mut ed = editor(BIN);
    let e = ed
        .edit(&EditRequest::new(&p, "if x:\n    go()\n", "if y:\n", false))
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "string not found; lines 2-3 differ only in indentation (4 spaces more in the file). \
         The file has:\n    if x:\n        go()"
    );
    let e = ed
        .edit(&EditRequest::new(&p, "return 1", "return 2", false))
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "string not found; the edit appears to be applied already (line 4)"
    );
    std::fs::write(&p, b"a = 1\nb\na = 1\nc\na = 1\n").unwrap();
    let e = ed
        .edit(&EditRequest::new(&p, "a = 1", "a = 2", false))
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "3 occurrences, starting on lines 1, 3, 5; pass at_line to choose one"
    );
    match &e {
        EditError::Failed { hints, .. } => assert_eq!(hints.as_ref().unwrap().lines, [1, 3, 5]),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        ed.edit(&EditRequest::new(&p, "a = 1", "a = 2", false).at_line(3))
            .unwrap(),
        native(1)
    );
    assert_eq!(std::fs::read(&p).unwrap(), b"a = 1\nb\na = 2\nc\na = 1\n");
    assert_eq!(listing(d.path()), vec!["f.py"]);
}

// A helper that reports protocol 1 never gets --hints, and a request with
// at_line (which it cannot do) goes to the transfer path.
#[test]
fn an_older_helper_never_gets_the_new_flags() {
    let d = scratch();
    let log = d.path().join("argv.log");
    let fake = write_file(
        d.path(),
        "old-helper",
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '{}'\n\
             [ \"$1\" = --version ] && {{ echo 'as-edit 0.1.0 (protocol 1; x86_64-unknown-linux-musl)'; exit 0; }}\n\
             echo '__RESULT__{{\"error\":\"string_not_found\"}}'; exit 1\n",
            log.display()
        )
        .as_bytes(),
        0o755,
    );
    let p = write_file(d.path(), "f.txt", b"x\ny\nx\n", 0o644);
    let mut ed = editor(fake.to_str().unwrap());
    let e = ed
        .edit(&EditRequest::new(&p, "zz", "q", false))
        .unwrap_err();
    assert_eq!(refused_kind(&e), ("string_not_found", Via::Native));
    assert_eq!(e.to_string(), "string not found");
    assert_eq!(ed.helper_protocol(), Some(1));
    assert_eq!(
        ed.edit(&EditRequest::new(&p, "x", "X", false).at_line(3))
            .unwrap(),
        transfer(1)
    );
    assert_eq!(std::fs::read(&p).unwrap(), b"x\ny\nX\n");
    let calls = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = calls.lines().collect();
    assert_eq!(lines.len(), 2, "one probe, one edit: {calls}");
    assert_eq!(lines[0], "--version");
    assert!(lines[1].starts_with("-- "), "no --hints: {calls}");
}

/// `LocalShell` with a transfer path that misbehaves on purpose: the next
/// `fail_uploads` uploads fail with ENOSPC, after writing half the bytes in
/// place when `damage` (as `docker cp` does on a full disk: it unlinks the
/// file, then writes); `meddle` is written over its path right after the
/// first download (another writer, between the download and the upload).
#[derive(Default)]
struct Flaky {
    fail_uploads: usize,
    damage: bool,
    meddle: Option<(PathBuf, Vec<u8>)>,
    uploads: usize,
}

impl Sandbox for Flaky {
    fn exec(&mut self, command: &[u8], stdin: Option<&[u8]>) -> std::io::Result<host::ExecOutput> {
        LocalShell::new().exec(command, stdin)
    }
    fn download(&mut self, p: &Path) -> std::io::Result<Vec<u8>> {
        let got = LocalShell::new().download(p);
        if let Some((path, bytes)) = self.meddle.take() {
            std::fs::write(path, bytes).unwrap();
        }
        got
    }
    fn upload(&mut self, p: &Path, b: &[u8]) -> std::io::Result<()> {
        self.uploads += 1;
        if self.fail_uploads > 0 {
            self.fail_uploads -= 1;
            if self.damage {
                std::fs::write(p, &b[..b.len() / 2]).unwrap();
            }
            return Err(std::io::Error::from_raw_os_error(28));
        }
        LocalShell::new().upload(p, b)
    }
}

fn transfer_detail(r: Result<Edited, EditError>) -> (String, String) {
    match r {
        Err(EditError::Failed {
            kind,
            detail,
            via: Via::Transfer,
            ..
        }) => (kind.as_str().to_owned(), detail.unwrap_or_default()),
        other => panic!("expected a transfer refusal, got {other:?}"),
    }
}

#[test]
fn a_failed_upload_never_leaves_a_damaged_file_behind_write_failed() {
    let d = scratch();
    let original = b"line one\nline two\nline three\n".repeat(100);
    let p = write_file(d.path(), "f.txt", &original, 0o644);
    let req = EditRequest::new(&p, "line two", "LINE 2", true);
    // Failed before writing: write_failed, nothing to restore.
    let mut sb = Flaky {
        fail_uploads: 1,
        ..Flaky::default()
    };
    let (tok, detail) = transfer_detail(host::transfer_edit(&mut sb, &req));
    assert_eq!(tok, "write_failed");
    assert_eq!(detail, "uploading: No space left on device (os error 28)");
    assert_eq!(std::fs::read(&p).unwrap(), original);
    assert_eq!(sb.uploads, 1);
    // Failed after cutting the file: the original is put back, and said so.
    let mut sb = Flaky {
        fail_uploads: 1,
        damage: true,
        ..Flaky::default()
    };
    let (tok, detail) = transfer_detail(host::transfer_edit(&mut sb, &req));
    assert_eq!(tok, "write_failed");
    assert_eq!(
        detail,
        "uploading: No space left on device (os error 28) (original restored)"
    );
    assert_eq!(std::fs::read(&p).unwrap(), original);
    assert_eq!(sb.uploads, 2);
    // The restore fails too: never a refusal (which promises an untouched
    // file), but a backend error saying the file may be damaged.
    let mut sb = Flaky {
        fail_uploads: 2,
        damage: true,
        ..Flaky::default()
    };
    match host::transfer_edit(&mut sb, &req) {
        Err(EditError::Backend(e)) => assert_eq!(
            e.to_string(),
            format!(
                "uploading {} failed (No space left on device (os error 28)), and restoring the original failed too (No space left on device (os error 28)): the file may be damaged",
                p.display()
            )
        ),
        other => panic!("expected a backend error, got {other:?}"),
    }
    assert_eq!(listing(d.path()), vec!["f.txt"]);
}

#[test]
fn a_file_changed_during_a_transfer_edit_is_a_conflict_not_a_lost_update() {
    let d = scratch();
    let p = write_file(d.path(), "f.txt", b"a b\n", 0o644);
    let mut sb = Flaky {
        meddle: Some((p.clone(), b"a b c\n".to_vec())),
        ..Flaky::default()
    };
    let (tok, detail) = transfer_detail(host::transfer_edit(
        &mut sb,
        &EditRequest::new(&p, "a", "A", false),
    ));
    assert_eq!(tok, "conflict");
    assert_eq!(
        detail,
        format!(
            "{} changed while the transfer edit ran; nothing written",
            p.display()
        )
    );
    assert_eq!(std::fs::read(&p).unwrap(), b"a b c\n");
    assert_eq!(sb.uploads, 0);
}

#[test]
fn concurrent_transfer_edits_from_one_process_lose_nothing() {
    let d = scratch();
    let threads = 8;
    let rounds = 10;
    let text: String = (0..threads).map(|t| format!("t{t}=0;\n")).collect();
    let p = write_file(d.path(), "f.txt", text.as_bytes(), 0o644);
    std::thread::scope(|s| {
        for t in 0..threads {
            let p = &p;
            s.spawn(move || {
                for r in 0..rounds {
                    let req = EditRequest::new(
                        p,
                        format!("t{t}={r};"),
                        format!("t{t}={};", r + 1),
                        false,
                    );
                    assert_eq!(
                        host::transfer_edit(&mut LocalShell::new(), &req).unwrap(),
                        transfer(1)
                    );
                }
            });
        }
    });
    let want: String = (0..threads).map(|t| format!("t{t}={rounds};\n")).collect();
    assert_eq!(String::from_utf8(std::fs::read(&p).unwrap()).unwrap(), want);
}

#[test]
fn a_transfer_refusal_after_the_helpers_write_failed_keeps_the_helpers_detail() {
    // The helper refuses (its line, canned here); the transfer path then
    // fails on its own: the caller sees both reasons.
    struct Canned;
    impl Sandbox for Canned {
        fn exec(&mut self, _: &[u8], _: Option<&[u8]>) -> std::io::Result<host::ExecOutput> {
            Ok(host::ExecOutput {
                exit_code: Some(1),
                output: b"__RESULT__{\"error\":\"write_failed\",\"detail\":\"cannot create a temp in /w: Permission denied\"}\n".to_vec(),
            })
        }
        fn download(&mut self, p: &Path) -> std::io::Result<Vec<u8>> {
            LocalShell::new().download(p)
        }
        fn upload(&mut self, _: &Path, _: &[u8]) -> std::io::Result<()> {
            Err(std::io::Error::from_raw_os_error(30))
        }
    }
    let d = scratch();
    let p = write_file(d.path(), "f.txt", b"a\n", 0o644);
    let mut ed = host::Editor::new(Canned, BIN);
    let (tok, detail) = transfer_detail(ed.edit(&EditRequest::new(&p, "a", "b", false)));
    assert_eq!(tok, "write_failed");
    assert_eq!(
        detail,
        "uploading: Read-only file system (os error 30); the helper answered write_failed: cannot create a temp in /w: Permission denied"
    );
    let (tok, detail) = transfer_detail(ed.edit(&EditRequest::new(&p, "zz", "b", false)));
    assert_eq!(tok, "string_not_found");
    assert_eq!(
        detail,
        "the helper answered write_failed: cannot create a temp in /w: Permission denied"
    );
    assert_eq!(std::fs::read(&p).unwrap(), b"a\n");
}

// ------------------------------------------------------------ ETXTBSY

/// Writes and runs a script `rounds` times with `write` while two
/// threads spawn processes without pause; returns the ETXTBSY count.
fn busy_runs(rounds: usize, write: fn(&Path, &[u8])) -> usize {
    use std::process::Command;
    use std::sync::atomic::{AtomicBool, Ordering};
    let dir = tempfile::tempdir().unwrap();
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                while !stop.load(Ordering::Relaxed) {
                    let _ = Command::new("true").status();
                }
            });
        }
        let mut busy = 0;
        for i in 0..rounds {
            let p = dir.path().join(format!("run-{i}"));
            write(&p, b"#!/bin/sh\nexit 7\n");
            match Command::new(&p).status() {
                Ok(st) => assert_eq!(st.code(), Some(7)),
                Err(e) if e.raw_os_error() == Some(26) => busy += 1,
                Err(e) => panic!("{e}"),
            }
        }
        stop.store(true, Ordering::Relaxed);
        busy
    })
}

#[test]
fn what_a_child_wrote_runs_while_other_threads_fork() {
    // Written in this process, about 1 run in 150 here fails so (1 to 3
    // of 300 in each of six tries); from a child, none of 1,800.
    assert_eq!(busy_runs(300, write_executable), 0);
}
