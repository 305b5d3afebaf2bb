//! The agent-sandbox backend against a loopback server implementing the
//! runtime's three endpoints with the upstream semantics: `/execute` splits
//! the command like shlex and runs it with no shell, answering `exit_code` 1
//! with a message when it cannot run; uploads are confined to the base
//! directory (403 otherwise); downloads answer 404 for missing files.
#![cfg(feature = "agent-sandbox")]

mod common;
use common::*;

use as_edit_host::agent_sandbox::AgentSandbox;
use as_edit_host::{EditRequest, Editor, Sandbox};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};

/// POSIX-shell-like word splitting, as Python's `shlex.split` does it.
fn shlex_split(s: &str) -> Option<Vec<String>> {
    let (mut out, mut cur, mut in_word) = (Vec::new(), String::new(), false);
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' => {
                if in_word {
                    out.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '\'' => break,
                        ch => cur.push(ch),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => cur.push(chars.next()?),
                        ch => cur.push(ch),
                    }
                }
            }
            '\\' => {
                in_word = true;
                cur.push(chars.next()?);
            }
            ch => {
                in_word = true;
                cur.push(ch);
            }
        }
    }
    if in_word {
        out.push(cur);
    }
    Some(out)
}

fn percent_decode(s: &str) -> Vec<u8> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let Ok(v) =
                u8::from_str_radix(std::str::from_utf8(&b[i + 1..i + 3]).unwrap_or("zz"), 16)
            {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    out
}

/// Resolves `rel` under `base`, refusing escapes (by `..` or by symlink).
fn confine(base: &Path, rel: &[u8]) -> Option<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    let p = base.join(std::ffi::OsStr::from_bytes(rel));
    let parent = p.parent()?.canonicalize().ok()?;
    if !parent.starts_with(base) {
        return None;
    }
    Some(parent.join(p.file_name()?))
}

fn respond(s: &mut TcpStream, status: &str, ctype: &str, body: &[u8]) {
    let head = format!("HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", body.len());
    let _ = s.write_all(head.as_bytes());
    let _ = s.write_all(body);
}

fn handle(mut s: TcpStream, base: &Path) {
    let mut r = BufReader::new(s.try_clone().unwrap());
    let mut line = String::new();
    r.read_line(&mut line).unwrap();
    let mut parts = line.split_whitespace();
    let (method, target) = (
        parts.next().unwrap_or("").to_owned(),
        parts.next().unwrap_or("").to_owned(),
    );
    let (mut len, mut ctype) = (0usize, String::new());
    loop {
        let mut h = String::new();
        r.read_line(&mut h).unwrap();
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        let (k, v) = h.split_once(':').unwrap();
        match k.to_ascii_lowercase().as_str() {
            "content-length" => len = v.trim().parse().unwrap(),
            "content-type" => ctype = v.trim().to_owned(),
            _ => {}
        }
    }
    let mut body = vec![0; len];
    r.read_exact(&mut body).unwrap();
    match (method.as_str(), target.as_str()) {
        ("POST", "/execute") => {
            let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
            let cmd = v["command"].as_str().unwrap_or("");
            let answer = match shlex_split(cmd).filter(|a| !a.is_empty()) {
                None => {
                    serde_json::json!({"stdout": "", "stderr": "cannot split the command", "exit_code": 1})
                }
                Some(argv) => {
                    let ran = std::process::Command::new(&argv[0])
                        .args(&argv[1..])
                        .current_dir(base)
                        .stdin(std::process::Stdio::null())
                        .stdout(std::process::Stdio::piped())
                        .stderr(std::process::Stdio::piped())
                        .spawn()
                        .and_then(|c| c.wait_with_output());
                    match ran {
                        Ok(o) => serde_json::json!({
                            "stdout": String::from_utf8_lossy(&o.stdout),
                            "stderr": String::from_utf8_lossy(&o.stderr),
                            "exit_code": o.status.code().unwrap_or(1),
                        }),
                        Err(e) => {
                            serde_json::json!({"stdout": "", "stderr": format!("failed to run {}: {e}", argv[0]), "exit_code": 1})
                        }
                    }
                }
            };
            respond(
                &mut s,
                "200 OK",
                "application/json",
                answer.to_string().as_bytes(),
            );
        }
        ("POST", "/upload") => {
            let boundary = ctype.split("boundary=").nth(1).unwrap_or("").to_owned();
            let text = body.as_slice();
            let head_end = memchr::memmem::find(text, b"\r\n\r\n").unwrap() + 4;
            let head = String::from_utf8_lossy(&text[..head_end]).into_owned();
            let tail = format!("\r\n--{boundary}--");
            let data_end = memchr::memmem::rfind(text, tail.as_bytes()).unwrap();
            let name = head
                .split("filename=\"")
                .nth(1)
                .and_then(|r| r.split('"').next())
                .unwrap_or("")
                .to_owned();
            assert!(head.contains("name=\"file\""), "the field is named file");
            match confine(base, name.as_bytes()) {
                Some(p) => {
                    // The helper is uploaded, then executed: written by a
                    // child, so no descriptor of it is left here for a
                    // concurrent fork to carry (ETXTBSY).
                    write_from_child(&p, &text[head_end..data_end]);
                    respond(&mut s, "200 OK", "application/json", b"{\"ok\":true}");
                }
                None => respond(
                    &mut s,
                    "403 Forbidden",
                    "text/plain",
                    b"outside the base directory",
                ),
            }
        }
        ("GET", t) if t.starts_with("/download/") => {
            let rel = percent_decode(&t["/download/".len()..]);
            match confine(base, &rel).and_then(|p| std::fs::read(p).ok()) {
                Some(bytes) => respond(&mut s, "200 OK", "application/octet-stream", &bytes),
                None => respond(&mut s, "404 Not Found", "text/plain", b"not found"),
            }
        }
        _ => respond(&mut s, "404 Not Found", "text/plain", b"no such endpoint"),
    }
}

/// Starts the runtime on a loopback port; it serves until the test ends.
fn runtime(base: PathBuf) -> String {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    std::thread::spawn(move || {
        for s in l.incoming().flatten() {
            handle(s, &base);
        }
    });
    url
}

fn setup() -> (tempfile::TempDir, PathBuf, AgentSandbox) {
    let d = scratch();
    let base = d.path().canonicalize().unwrap();
    let url = runtime(base.clone());
    (d, base.clone(), AgentSandbox::new(url, base))
}

#[test]
fn installs_by_upload_and_chmod_then_edits_natively() {
    let (_d, base, sb) = setup();
    let helper = base.join("as-edit");
    let mut ed = Editor::new(sb, helper.to_str().unwrap());
    assert!(ed.ensure_helper(&std::fs::read(BIN).unwrap()).unwrap());
    assert_eq!(mode(&helper), 0o755);
    assert!(
        !ed.ensure_helper(&std::fs::read(BIN).unwrap()).unwrap(),
        "second time: already there"
    );
    let f = write_file(&base, "it's a file.txt", b"one\r\ntwo\r\n", 0o640);
    assert_eq!(
        ed.edit(&EditRequest::new(&f, "two\n", "2\n", false))
            .unwrap(),
        native(1)
    );
    assert_eq!(std::fs::read(&f).unwrap(), b"one\n2\n");
    assert_eq!(mode(&f), 0o640, "the native path keeps the mode");
    let e = ed
        .edit(&EditRequest::new(&f, "absent", "x", false))
        .unwrap_err();
    assert_eq!(e.token(), Some("string_not_found"));
}

#[test]
fn missing_helper_falls_back_through_download_and_upload() {
    let (_d, base, sb) = setup();
    let f = write_file(&base, "sub dir file.txt", b"a\r\nb\n", 0o644);
    let mut ed = Editor::new(sb, base.join("missing-helper").to_str().unwrap());
    // The runtime cannot run it: exit_code 1 and a message, no result line.
    let out = ed
        .sandbox
        .exec(b"'/nonexistent/as-edit' '--version'", None)
        .unwrap();
    assert_eq!(out.exit_code, Some(1));
    assert_eq!(
        ed.edit(&EditRequest::new(&f, "a\n", "A\n", false)).unwrap(),
        transfer(1)
    );
    assert_eq!(std::fs::read(&f).unwrap(), b"A\nb\n");
    let e = ed
        .edit(&EditRequest::new(base.join("nope.txt"), "a", "b", false))
        .unwrap_err();
    assert_eq!(e.token(), Some("file_not_found"));
}

#[test]
fn the_file_api_is_confined_to_the_base_directory() {
    let (_d, base, mut sb) = setup();
    let e = sb.download(Path::new("/etc/hostname")).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::PermissionDenied);
    let e = sb.upload(&base.join("../escape.txt"), b"x").unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::PermissionDenied);
    assert!(!base.parent().unwrap().join("escape.txt").exists());
    // A symlink inside the base pointing out: the server refuses with 403.
    std::os::unix::fs::symlink("/tmp", base.join("out")).unwrap();
    let e = sb.upload(&base.join("out/x.txt"), b"x").unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::PermissionDenied, "{e}");
    // Binary payloads round-trip, including bytes that look like a boundary.
    let payload: Vec<u8> = (0..=255u8)
        .cycle()
        .take(70_000)
        .chain(b"\r\n--as-edit-".iter().copied())
        .collect();
    sb.upload(&base.join("bin.dat"), &payload).unwrap();
    assert_eq!(sb.download(&base.join("bin.dat")).unwrap(), payload);
    assert!(
        matches!(sb.exec(b"x", Some(b"in")), Err(e) if e.kind() == std::io::ErrorKind::Unsupported)
    );
}

/// A transaction and a patch over the runtime's API: natively (argv only:
/// `--request-b64`, `--patch-b64`) once the helper is installed, and
/// through the transfer path without it, where delete, move and created
/// parents go through `/execute` (`rm`, `mkdir -p`, no shell).
#[test]
fn transactions_and_patches_run_natively_in_argv_and_by_transfer() {
    use as_edit_host::{FileOp, TxnEdit, Via};
    for native in [true, false] {
        let (_d, base, sb) = setup();
        let helper = base.join(if native { "as-edit" } else { "missing" });
        let mut ed = Editor::new(sb, helper.to_str().unwrap());
        if native {
            assert!(ed.ensure_helper(&std::fs::read(BIN).unwrap()).unwrap());
        }
        let via = if native { Via::Native } else { Via::Transfer };
        let p = |n: &str| base.join(n).to_string_lossy().into_owned();
        write_file(&base, "a.txt", b"a\r\n", 0o644);
        write_file(&base, "b.txt", b"b\n", 0o644);
        write_file(&base, "gone.txt", b"x\n", 0o644);
        let ops = vec![
            FileOp::Edit {
                path: p("a.txt").into(),
                edits: vec![TxnEdit::new("a", "A")],
                expect_sha256: None,
            },
            FileOp::Move {
                path: p("b.txt").into(),
                to: p("new dir/b.txt").into(),
                overwrite: false,
                edits: vec![],
                expect_sha256: None,
            },
            FileOp::Delete {
                path: p("gone.txt").into(),
                recursive: false,
                expect_sha256: None,
            },
        ];
        let r = ed.transaction(&ops).unwrap();
        assert_eq!((r.count, r.files, r.via), (1, 4, via));
        assert_eq!(std::fs::read(base.join("a.txt")).unwrap(), b"A\n");
        assert_eq!(std::fs::read(base.join("new dir/b.txt")).unwrap(), b"b\n");
        assert!(!base.join("b.txt").exists() && !base.join("gone.txt").exists());
        let patch = format!(
            "*** Begin Patch\n*** Update File: {}\n-A\n+AA\n*** Add File: {}\n+c\n*** End Patch",
            p("a.txt"),
            p("c/c.txt")
        );
        let r = ed.apply_patch(&patch).unwrap();
        assert_eq!((r.count, r.files, r.via), (1, 2, via));
        assert_eq!(std::fs::read(base.join("a.txt")).unwrap(), b"AA\n");
        assert_eq!(std::fs::read(base.join("c/c.txt")).unwrap(), b"c\n");
        // A refusal: nothing changes, on either path. Existence is
        // checked for every file before any content, as the helper plans.
        let e = ed.apply_patch(&patch).unwrap_err();
        assert_eq!(e.token(), Some("file_exists"), "{e}");
        assert_eq!(std::fs::read(base.join("a.txt")).unwrap(), b"AA\n");
    }
}
