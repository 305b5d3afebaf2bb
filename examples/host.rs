//! `host FILE OLD NEW [--all]`: edits FILE through the host library with a
//! local shell, using the helper from `AS_EDIT_HELPER` (default: the freshly
//! built binary beside this example, else `as-edit` on PATH). Falls back to
//! the transfer path when the helper is missing.
//!
//! `host --docker CONTAINER [--user U] [--install] FILE OLD NEW [--all]`
//! (feature `docker`): the same inside a running container, with the helper
//! at `/opt/as-edit/as-edit` there (`AS_EDIT_HELPER` overrides the
//! in-container path). `--install` first puts the static binary
//! (`AS_EDIT_STATIC_BIN`, default `dist/as-edit-<version>-x86_64-unknown-linux-musl`)
//! at that path: over exec when the container has a shell, by `docker cp`
//! otherwise.
//!
//! `host [--docker …] TOOL ARGS…`: the file toolset, natively, else by
//! the fallback the library documents per op (`read`, `write`, `rm`,
//! `mv` of files, `mkdir` without the helper; the others say it is
//! required). Names print as Rust string literals (`"a:b"`, `"new\nline"`,
//! `"\xFF"`), so any name reads back unambiguously:
//!
//! - `stat PATH…`: `TYPE SIZE MODE MTIME_NS NAME` per path (`-> TARGET (TYPE)` for a link);
//! - `ls DIR [DEPTH]`: `TYPE SIZE NAME` per entry, then `total N`;
//! - `read FILE [START [LIMIT]]`: the lines as they are, then
//!   `-- lines S-E of N, sha256 H (VIA)` (all pages, up to 16 MiB);
//! - `glob PATTERN [DIR]`: `SIZE NAME` per file, then `total N`;
//! - `grep [-i] [--regex] PATTERN [DIR]`: `NAME:LINE:TEXT` per match;
//! - `write FILE TEXT [--overwrite]`, `rm PATH [-r]`,
//!   `mv FROM TO [--overwrite]`, `mkdir DIR [-p]`: as `--files` prints.
//!
//! A first word naming a tool is the tool: edit a file named so as `./read`.
//!
//! `host [--docker …] --files REQUEST.json`: the transaction in REQUEST.json
//! (`{"files":[OP,…]}` as the helper takes it, or an `apply_patch_call`'s
//! `{"operations":[…]}`), all or nothing. `host [--docker …] --patch FILE`:
//! the V4A patch in FILE. Both print `applied COUNT in FILES files (VIA)`
//! and one line per op.

use std::process::ExitCode;

use as_edit_host::{
    Applied, EditError, EditRequest, Edited, Editor, FileOp, LocalShell, PatchOp, Sandbox, Via,
};

#[path = "host/tools.rs"]
mod tools;

const USAGE: &str = "usage: host [--docker CONTAINER [--user U] [--install]] \
                     (FILE OLD NEW [--all] | --files REQUEST.json | --patch FILE | TOOL ARGS…)\n\
                     tools: stat PATH… | ls DIR [DEPTH] | read FILE [START [LIMIT]] | glob PATTERN [DIR]\n       \
                     | grep [-i] [--regex] PATTERN [DIR] | write FILE TEXT [--overwrite] | rm PATH [-r]\n       \
                     | mv FROM TO [--overwrite] | mkdir DIR [-p]";

fn default_helper() -> String {
    // target/<profile>/examples/host → target/<profile>/as-edit
    std::env::current_exe()
        .ok()
        .and_then(|p| Some(p.parent()?.parent()?.join("as-edit")))
        .filter(|p| p.exists())
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|| "as-edit".to_owned())
}

struct Args {
    docker: Option<String>,
    user: Option<String>,
    install: bool,
    all: bool,
    files: Option<String>,
    patch: Option<String>,
    pos: Vec<String>,
}

/// What to run: one edit, a transaction, or a patch.
enum Job {
    Edit(EditRequest),
    Files(Vec<FileOp>),
    Operations(Vec<PatchOp>),
    Patch(String),
    Tool(Vec<String>),
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct RequestFile {
    files: Option<Vec<FileOp>>,
    operations: Option<Vec<PatchOp>>,
}

fn job(args: &Args) -> Result<Job, String> {
    if tools::is_tool(&args.pos) {
        return Ok(Job::Tool(args.pos.clone()));
    }
    let read = |p: &str| std::fs::read_to_string(p).map_err(|e| format!("{p}: {e}"));
    if let Some(p) = &args.patch {
        return Ok(Job::Patch(read(p)?));
    }
    if let Some(p) = &args.files {
        let r: RequestFile = serde_json::from_str(&read(p)?).map_err(|e| format!("{p}: {e}"))?;
        return match (r.files, r.operations) {
            (Some(f), None) => Ok(Job::Files(f)),
            (None, Some(o)) => Ok(Job::Operations(o)),
            _ => Err(format!("{p}: give \"files\" or \"operations\"")),
        };
    }
    let [file, old, new] = args.pos.as_slice() else {
        unreachable!("parse checks three positionals")
    };
    Ok(Job::Edit(EditRequest::new(
        file.as_str(),
        old.as_str(),
        new.as_str(),
        args.all,
    )))
}

fn run<S: Sandbox>(editor: &mut Editor<S>, job: &Job) -> ExitCode {
    match job {
        Job::Edit(req) => report(editor.edit(req)),
        Job::Files(ops) => report_applied(editor.transaction(ops)),
        Job::Operations(ops) => report_applied(editor.apply_operations(ops)),
        Job::Patch(text) => report_applied(editor.apply_patch(text)),
        Job::Tool(words) => tools::run(editor, words),
    }
}

pub(crate) fn via_words(via: Via) -> &'static str {
    match via {
        Via::Native => "native",
        Via::Transfer => "fallback: transfer",
    }
}

pub(crate) fn report_applied(r: Result<Applied, EditError>) -> ExitCode {
    match r {
        Ok(a) => {
            println!(
                "applied {} in {} files ({})",
                a.count,
                a.files,
                via_words(a.via)
            );
            for c in &a.changes {
                let to =
                    c.to.as_ref()
                        .map(|t| format!(" -> {}", t.display()))
                        .unwrap_or_default();
                println!("{} {}{to} ({})", c.op, c.path.display(), c.count);
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            println!("{e}");
            ExitCode::from(1)
        }
    }
}

fn parse(mut it: impl Iterator<Item = String>) -> Option<Args> {
    let mut a = Args {
        docker: None,
        user: None,
        install: false,
        all: false,
        files: None,
        patch: None,
        pos: Vec::new(),
    };
    while let Some(s) = it.next() {
        match s.as_str() {
            "--all" => a.all = true,
            "--install" => a.install = true,
            "--docker" => a.docker = Some(it.next()?),
            "--user" => a.user = Some(it.next()?),
            "--files" => a.files = Some(it.next()?),
            "--patch" => a.patch = Some(it.next()?),
            _ => a.pos.push(s),
        }
    }
    let what = match (&a.files, &a.patch) {
        (None, None) if tools::is_tool(&a.pos) => !a.all,
        (None, None) => a.pos.len() == 3,
        (Some(_), None) | (None, Some(_)) => a.pos.is_empty() && !a.all,
        _ => false,
    };
    (what && (a.docker.is_some() || (a.user.is_none() && !a.install))).then_some(a)
}

fn report(r: Result<Edited, EditError>) -> ExitCode {
    match r {
        Ok(e) => {
            println!("edited {} ({})", e.count, via_words(e.via));
            ExitCode::SUCCESS
        }
        Err(e) => {
            println!("{e}");
            ExitCode::from(1)
        }
    }
}

fn main() -> ExitCode {
    let Some(args) = parse(std::env::args().skip(1)) else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    let job = match job(&args) {
        Ok(j) => j,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    match &args.docker {
        None => {
            let helper = std::env::var("AS_EDIT_HELPER").unwrap_or_else(|_| default_helper());
            run(&mut Editor::new(LocalShell::new(), helper), &job)
        }
        Some(container) => docker(container, &args, &job),
    }
}

#[cfg(feature = "docker")]
fn docker(container: &str, args: &Args, job: &Job) -> ExitCode {
    use as_edit_host::docker::Docker;

    let helper =
        std::env::var("AS_EDIT_HELPER").unwrap_or_else(|_| "/opt/as-edit/as-edit".to_owned());
    let mut sandbox = Docker::new(container);
    if let Some(u) = &args.user {
        sandbox = sandbox.user(u.as_str());
    }
    let mut editor = Editor::new(sandbox, helper.clone());
    if args.install {
        let path = std::env::var("AS_EDIT_STATIC_BIN").unwrap_or_else(|_| {
            format!(
                "{}/dist/as-edit-{}-x86_64-unknown-linux-musl",
                env!("CARGO_MANIFEST_DIR"),
                env!("CARGO_PKG_VERSION")
            )
        });
        let bin = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("{path}: {e} (run scripts/build-static.sh x86_64-unknown-linux-musl)");
                return ExitCode::from(2);
            }
        };
        // Installed as root (the edit runs as --user): /opt is root's.
        let mut root = Editor::new(Docker::new(container).user("0"), helper.clone());
        let installed = if root.sandbox.has_shell() {
            // ensure_helper writes beside the destination: make its directory.
            let dir = std::path::Path::new(&helper)
                .parent()
                .unwrap_or("/".as_ref());
            let mkdir = as_edit_host::command::join_quoted(&[
                "mkdir".into(),
                "-p".into(),
                dir.as_os_str().to_owned(),
            ]);
            // A shell without coreutils (no mkdir, hence likely no chmod
            // or mv either): install by docker cp instead.
            match root.sandbox.exec(&mkdir, None) {
                Ok(o) if o.exit_code == Some(0) => root.ensure_helper(&bin).map(|_| ()),
                Ok(_) => root.sandbox.install_helper(&bin, &helper),
                Err(e) => Err(EditError::Backend(e)),
            }
        } else {
            root.sandbox.install_helper(&bin, &helper)
        };
        if let Err(e) = installed {
            println!("{e}");
            return ExitCode::from(1);
        }
    }
    run(&mut editor, job)
}

#[cfg(not(feature = "docker"))]
fn docker(_: &str, _: &Args, _: &Job) -> ExitCode {
    eprintln!("built without the docker feature: cargo run --example host --features docker -- --docker …");
    ExitCode::from(2)
}
