//! `host FILE OLD NEW [--all]`: edits FILE through the host library with a
//! local shell, using the helper from `AS_EDIT_HELPER` (default: the freshly
//! built binary beside this example, else `as-edit` on PATH). Falls back to
//! the transfer path when the helper is missing.

use std::process::ExitCode;

use as_edit::host::{EditRequest, Editor, LocalShell, Via};

fn default_helper() -> String {
    // target/<profile>/examples/host → target/<profile>/as-edit
    std::env::current_exe()
        .ok()
        .and_then(|p| Some(p.parent()?.parent()?.join("as-edit")))
        .filter(|p| p.exists())
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|| "as-edit".to_owned())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let all = args.iter().any(|a| a == "--all");
    let pos: Vec<&String> = args.iter().filter(|a| *a != "--all").collect();
    let [file, old, new] = pos.as_slice() else {
        eprintln!("usage: host FILE OLD NEW [--all]");
        return ExitCode::from(2);
    };
    let helper = std::env::var("AS_EDIT_HELPER").unwrap_or_else(|_| default_helper());
    let mut editor = Editor::new(LocalShell::new(), helper);
    match editor.edit(&EditRequest::new(
        file.as_str(),
        old.as_str(),
        new.as_str(),
        all,
    )) {
        Ok(e) => {
            let via = match e.via {
                Via::Native => "native",
                Via::Transfer => "fallback: transfer",
            };
            println!("edited {} ({via})", e.count);
            ExitCode::SUCCESS
        }
        Err(e) => {
            println!("{e}");
            ExitCode::from(1)
        }
    }
}
