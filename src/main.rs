//! Thin entry point: parse, run, print the one result line, exit with the
//! contract's code.

use std::io::Write;

fn main() {
    // Whatever happens, the host gets a result line. Only the final rename
    // commits, so after a panic the target is untouched.
    std::panic::set_hook(Box::new(|info| {
        as_edit::fs::remove_registered_temp();
        let detail = match info.payload().downcast_ref::<&str>() {
            Some(s) => (*s).to_owned(),
            None => info
                .payload()
                .downcast_ref::<String>()
                .cloned()
                .unwrap_or_else(|| "panic".to_owned()),
        };
        let f =
            as_edit::protocol::Failure::new(as_edit::protocol::ErrorKind::InternalError, detail);
        let _ = std::io::stdout().write_all(as_edit::protocol::failure_line(&f, None).as_bytes());
        std::process::exit(as_edit::protocol::EXIT_NOT_EDITED);
    }));
    let args: Vec<_> = std::env::args_os().skip(1).collect();
    let env_root = std::env::var_os("AS_EDIT_ROOT");
    let response = as_edit::run(&args, env_root, &mut std::io::stdin().lock());
    // A closed stdout must not turn into a panic: the exit code still tells.
    let _ = std::io::stdout()
        .lock()
        .write_all(response.stdout.as_bytes());
    std::process::exit(response.exit_code);
}
