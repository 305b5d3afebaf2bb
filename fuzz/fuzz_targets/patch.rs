//! The V4A parser and the chunk locator on arbitrary text: neither may
//! panic, a refused patch leaves the tree unchanged, and an updated file
//! ends with a newline.
#![no_main]

use std::collections::BTreeMap;

use as_edit::patch::{apply_tree, parse, parse_create_diff, parse_update_diff, Change};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // Layout: [split, flags] then UTF-8: file text, NUL, patch text.
    let Some((&[split, flags], rest)) = data.split_first_chunk::<2>() else {
        return;
    };
    let Ok(s) = std::str::from_utf8(rest) else { return };
    let (file, text) = s.split_once('\0').unwrap_or(("", s));
    let _ = parse_update_diff(text);
    let _ = parse_create_diff(text);
    let Ok(patch) = parse(text) else { return };
    let mut tree = BTreeMap::new();
    // One or two files, so that hunks meet existing and missing paths.
    for (i, part) in file.split('\u{1}').take(1 + (split as usize & 1)).enumerate() {
        tree.insert(if i == 0 { "a".to_owned() } else { "b".to_owned() }, part.replace('\r', "\n"));
    }
    let before = tree.clone();
    match apply_tree(&mut tree, &patch, flags & 1 == 1, flags & 2 == 2) {
        Err(_) => assert_eq!(tree, before),
        Ok(changes) => {
            for c in changes {
                let path = match c {
                    Change::Added(p) => p,
                    Change::Updated { path, to, .. } => to.unwrap_or(path),
                    Change::Deleted(_) => continue,
                };
                // A later Delete may have removed it.
                if let Some(t) = tree.get(&path) {
                    assert!(t.is_empty() || t.ends_with('\n'), "{path}: {t:?}");
                }
            }
        }
    }
});
