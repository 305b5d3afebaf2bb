//! What an install over exec costs: `Editor::ensure_helper` into a chroot
//! (a busybox root), counting every exec it makes, the probe included, and
//! the bytes of every command. Used by `scripts/bench.sh --install`.
//!
//! `cargo run --example install_cost -- ROOT BINARY [QEMU]`: installs BINARY
//! at /opt/as-edit inside ROOT and prints `transfer=… execs=N bytes=M`.
//! QEMU (a path inside ROOT, e.g. /opt/qemu-aarch64-static) runs the
//! helper's `--version` for a foreign architecture, as a native sandbox would
//! run it directly; the counts are of the commands the Editor sent.

use std::path::{Path, PathBuf};

use as_edit_host::{self as host, ExecOutput, LocalShell, Sandbox};

struct Counting {
    inner: LocalShell,
    qemu: Option<String>,
    commands: Vec<Vec<u8>>,
}

const HELPER: &str = "/opt/as-edit";

impl Sandbox for Counting {
    fn exec(&mut self, c: &[u8], stdin: Option<&[u8]>) -> std::io::Result<ExecOutput> {
        self.commands.push(c.to_vec());
        let run = match &self.qemu {
            Some(q) => with_qemu(c, q),
            None => c.to_vec(),
        };
        self.inner.exec(&run, stdin)
    }
    fn download(&mut self, p: &Path) -> std::io::Result<Vec<u8>> {
        self.inner.download(p)
    }
    fn upload(&mut self, p: &Path, b: &[u8]) -> std::io::Result<()> {
        self.inner.upload(p, b)
    }
}

/// `c` with QEMU put before every `'/opt/as-edit…' '--version'`: the
/// helper's check and the temp's check before the mv.
fn with_qemu(c: &[u8], qemu: &str) -> Vec<u8> {
    let start = format!("'{HELPER}");
    let mut out = Vec::with_capacity(c.len() + 64);
    let mut i = 0;
    while i < c.len() {
        if c[i..].starts_with(start.as_bytes()) {
            let close = c[i + 1..]
                .iter()
                .position(|&b| b == b'\'')
                .map(|p| i + 2 + p);
            if matches!(close, Some(e) if c[e..].starts_with(b" '--version'")) {
                out.extend_from_slice(qemu.as_bytes());
                out.push(b' ');
            }
        }
        out.push(c[i]);
        i += 1;
    }
    out
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (root, binary) = match args.as_slice() {
        [r, b] | [r, b, _] => (PathBuf::from(r), std::fs::read(b).expect("reading BINARY")),
        _ => {
            eprintln!("usage: install_cost ROOT BINARY [QEMU]");
            std::process::exit(2);
        }
    };
    let sandbox = Counting {
        inner: LocalShell {
            chroot: Some(root.clone()),
        },
        qemu: args.get(2).cloned(),
        commands: Vec::new(),
    };
    let mut ed = host::Editor::new(sandbox, HELPER);
    match ed.ensure_helper(&binary) {
        Ok(true) => {}
        Ok(false) => panic!("a helper was already installed in {}", root.display()),
        Err(e) => panic!("install failed: {e}"),
    }
    let installed = std::fs::read(root.join("opt/as-edit")).expect("reading the installed helper");
    assert!(installed == binary, "the installed bytes differ");
    let cmds = &ed.sandbox.commands;
    let has = |n: &[u8]| cmds[1..].iter().any(|c| c.windows(n.len()).any(|w| w == n));
    let transfer = match (has(b"gzip -dc <") || has(b"zcat <"), has(b"| base64 -d")) {
        (true, true) => "gzip+base64",
        (true, false) => "gzip+printf",
        (false, true) => "base64",
        (false, false) => "printf",
    };
    println!(
        "transfer={transfer} execs={} bytes={}",
        cmds.len(),
        cmds.iter().map(Vec::len).sum::<usize>()
    );
}
