//! `.gitignore` parsing on arbitrary bytes: no panic, and every rule set
//! answers for any path, as a directory or not.
#![no_main]

use as_edit::tools::gitignore::Rules;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // Before the first NUL: the file; after it, paths to decide.
    let mut parts = data.split(|&b| b == 0);
    let Some(text) = parts.next() else { return };
    let rules = Rules::parse(text);
    for path in parts {
        let _ = rules.decide(path, false);
        let _ = rules.decide(path, true);
    }
});
