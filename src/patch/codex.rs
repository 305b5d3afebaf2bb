//! The `apply_patch` mode: the binary invoked under that name (a symlink or
//! a copy, as Codex-style prompts call it from a shell) answers like
//! Codex's `apply_patch` CLI: the patch as the one argument (after an
//! optional `--preserve-crlf`, which keeps CRLF files CRLF) or on stdin;
//! `Success. Updated the following files:` then `A`/`M`/`D` lines on
//! stdout and exit 0; errors on stderr with exit 1 (2 for a usage error).
//! Add File and Move to overwrite, as Codex's do (onto a symlink, dangling
//! too, they write its target through it, as Codex's binary does; after a
//! Delete File of the link, Add File makes a regular file in its place and
//! Update File finds nothing, as Codex's). Added files and the
//! directories made for them follow the umask alone, as Codex's (std's
//! `fs::write` and `create_dir_all`): 0666 and 0777 before it (0644 and
//! 0755 under umask 022, 0664 and 0775 under 002); a file Add File
//! replaces keeps its mode, as Codex's (it writes in place). A `{"files"}`
//! request and `--patch` give 0644 (or a create's `mode`) and 0755 before
//! the umask (`txn::NewModes`). Unlike Codex it is all or
//! nothing and refuses an ambiguous chunk. `AS_EDIT_ROOT` confines paths as
//! in the normal mode.
//!
//! A standard output that cannot be written (a full device, a broken pipe)
//! makes the exit 1 with nothing more on stderr, though the patch is
//! applied, as Codex's binary does (checked against `@openai/codex`'s: its
//! success text's write fails its run); a closed descriptor is not an error
//! for either (Rust's stdout ignores `EBADF`), so that exit stays 0.

use std::ffi::{OsStr, OsString};
use std::io::Read;

use super::{compile, parse, Hunk};
use crate::request::{EditOptions, Eol};

/// Whether `argv0` names the `apply_patch` mode (`apply_patch`, or
/// `applypatch` as Codex also accepts).
pub fn invoked_as(argv0: Option<&OsStr>) -> bool {
    let name = argv0.map(std::path::Path::new).and_then(|p| p.file_name());
    matches!(
        name.and_then(OsStr::to_str),
        Some("apply_patch" | "applypatch")
    )
}

/// What the mode's arguments (and stdin, when no argument is the patch)
/// ask for: the patch text and its options, or the text for stderr and the
/// exit code of a usage or reading error (nothing on stdout).
pub type Invocation = Result<(String, EditOptions), (String, i32)>;

/// Reads the mode's arguments, and stdin when the patch is not one of them.
#[cfg_attr(as_edit_small, optimize(size))]
pub fn read(args: &[OsString], root: Option<OsString>, stdin: &mut dyn Read) -> Invocation {
    let usage = || {
        Err((
            "Usage: apply_patch 'PATCH'\n       echo 'PATCH' | apply_patch\n".into(),
            2,
        ))
    };
    let mut options = EditOptions {
        root: root.map(Into::into),
        ..EditOptions::default()
    };
    let mut args = args;
    if args.first().is_some_and(|a| a == "--preserve-crlf") {
        options.eol = Eol::Preserve;
        args = &args[1..];
    }
    let text = match args {
        [] => {
            let mut t = String::new();
            if stdin.read_to_string(&mut t).is_err() {
                return Err((
                    "Error: Failed to read PATCH from stdin as UTF-8.\n".into(),
                    1,
                ));
            }
            if t.is_empty() {
                return usage();
            }
            t
        }
        [a] => match a.to_str() {
            Some(s) => s.to_owned(),
            None => {
                return Err((
                    "Error: apply_patch requires a UTF-8 PATCH argument.\n".into(),
                    1,
                ))
            }
        },
        _ => {
            return Err((
                "Error: apply_patch accepts exactly one argument.\n".into(),
                2,
            ))
        }
    };
    Ok((text, options))
}

/// Applies a patch read by [`read`]: (stdout, stderr, exit code).
#[cfg_attr(as_edit_small, optimize(size))]
pub fn apply(text: &str, options: EditOptions) -> (String, String, i32) {
    let patch = match parse(text) {
        Ok(p) => p,
        Err(e) => return (String::new(), format!("Invalid patch: {e}\n"), 1),
    };
    let mut summary = ([String::new(), String::new(), String::new()], String::new());
    for h in &patch.hunks {
        let (i, path) = match h {
            Hunk::Add { path, .. } => (0, path),
            Hunk::Update { path, move_to, .. } => (1, move_to.as_ref().unwrap_or(path)),
            Hunk::Delete { path } => (2, path),
        };
        summary.0[i].push_str(&format!("{} {path}\n", ["A", "M", "D"][i]));
    }
    let mut txn = compile(patch, options, false, true);
    txn.new_modes = crate::txn::NewModes::CODEX;
    let (line, code) = crate::txn::run(&txn);
    if code == 0 {
        summary.1 = "Success. Updated the following files:\n".into();
        summary.1.extend(summary.0);
        return (summary.1, String::new(), 0);
    }
    #[derive(serde::Deserialize)]
    struct Refused {
        error: String,
        detail: Option<String>,
    }
    let why = line
        .strip_prefix(crate::protocol::RESULT_PREFIX)
        .and_then(|j| serde_json::from_str::<Refused>(j.trim_end()).ok())
        .map_or(line.clone(), |r| {
            format!("{}: {}", r.error, r.detail.unwrap_or_default())
        });
    (
        String::new(),
        format!("{why}\nNo files were modified (the patch applies all or nothing).\n"),
        1,
    )
}
