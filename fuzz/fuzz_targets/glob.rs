//! The glob parser and matcher on arbitrary input: no panic, a pattern
//! either compiles or is refused with a reason, and a compiled pattern
//! answers for any path (invalid UTF-8 included) in time linear in it.
#![no_main]

use as_edit::tools::glob::Glob;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // The first line is the pattern, the rest paths to match.
    let mut parts = data.split(|&b| b == b'\n');
    let Some(p) = parts.next() else { return };
    let Ok(p) = std::str::from_utf8(p) else { return };
    match Glob::new(p) {
        Ok(g) => {
            for path in parts {
                let _ = g.matches(path);
            }
        }
        Err(e) => assert!(!e.is_empty()),
    }
});
