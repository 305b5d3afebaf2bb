//! The pure patch applier (`as_edit::patch`): property tests, and the
//! test-only driver of the differential harness (scripts/patch-diff.py).

use std::collections::BTreeMap;
use std::path::Path;

use as_edit::patch::{apply_tree, parse, Change, TreeError};
use proptest::prelude::*;

type Tree = BTreeMap<String, String>;

/// Code-like lines with repeats, so that chunks are sometimes ambiguous.
fn line() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("}".to_owned()),
        Just("    return None".to_owned()),
        Just(String::new()),
        (0..4usize, "[a-c]{1,2}", 0..3u8)
            .prop_map(|(ind, name, v)| format!("{}let {name} = f({v});", "    ".repeat(ind))),
    ]
}

fn file() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec(line(), 0..12)
}

fn text(lines: &[String]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

/// One Update chunk taken from `lines` at `at`: `ctx` lines of context on
/// each side, `del` lines removed, `add` inserted.
fn chunk_text(lines: &[String], at: usize, del: usize, ctx: usize, add: &[String]) -> String {
    let (a, b) = (at.saturating_sub(ctx), (at + del + ctx).min(lines.len()));
    let mut s = String::from("@@\n");
    for (i, l) in lines.iter().enumerate().take(b).skip(a) {
        let tag = if i >= at && i < at + del { '-' } else { ' ' };
        s.push_str(&format!("{tag}{l}\n"));
        if i + 1 == at + del {
            add.iter().for_each(|x| s.push_str(&format!("+{x}\n")));
        }
    }
    if del == 0 {
        add.iter().for_each(|x| s.push_str(&format!("+{x}\n")));
    }
    s
}

/// A random patch over files "f0".."fN": an exact Update per file, plus
/// an Add and a Delete.
fn case() -> impl Strategy<Value = (Tree, String)> {
    (
        prop::collection::vec(
            (
                file(),
                0..12usize,
                0..3usize,
                0..3usize,
                prop::collection::vec(line(), 0..3),
            ),
            1..4,
        ),
        file(),
        any::<bool>(),
    )
        .prop_map(|(files, added, delete_last)| {
            let mut tree = Tree::new();
            let mut p = String::from("*** Begin Patch\n");
            let n = files.len();
            for (i, (lines, at, del, ctx, add)) in files.into_iter().enumerate() {
                let name = format!("f{i}");
                tree.insert(name.clone(), text(&lines));
                if delete_last && i + 1 == n {
                    p.push_str(&format!("*** Delete File: {name}\n"));
                    continue;
                }
                let at = at.min(lines.len());
                let del = del.min(lines.len() - at);
                if del + add.len() == 0 {
                    continue;
                }
                // A chunk whose new side is empty reverses to a context-free
                // addition, which goes at the end of the file: keep one line
                // of context so the reverse is placed where this one was.
                let ctx = if add.is_empty() { ctx.max(1) } else { ctx };
                p.push_str(&format!("*** Update File: {name}\n"));
                p.push_str(&chunk_text(&lines, at, del, ctx, &add));
            }
            p.push_str("*** Add File: new\n");
            added.iter().for_each(|l| p.push_str(&format!("+{l}\n")));
            p.push_str("*** End Patch\n");
            (tree, p)
        })
}

/// The reverse patch: `+` and `-` swapped in every Update's lines, Add
/// and Delete exchanged (a Delete's Add carries the deleted content).
fn reverse(text: &str, before: &Tree) -> String {
    let mut p = String::new();
    let mut in_add = false;
    for l in text.lines() {
        if let Some(path) = l.strip_prefix("*** Add File: ") {
            p.push_str(&format!("*** Delete File: {path}\n"));
            in_add = true;
            continue;
        }
        if in_add && l.starts_with('+') {
            continue;
        }
        in_add = false;
        if let Some(path) = l.strip_prefix("*** Delete File: ") {
            p.push_str(&format!("*** Add File: {path}\n"));
            before[path]
                .lines()
                .for_each(|l| p.push_str(&format!("+{l}\n")));
        } else if let Some(rest) = l.strip_prefix('+') {
            p.push_str(&format!("-{rest}\n"));
        } else if let Some(rest) = l.strip_prefix('-') {
            p.push_str(&format!("+{rest}\n"));
        } else {
            p.push_str(&format!("{l}\n"));
        }
    }
    p
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// A refused patch leaves the tree as it was; an accepted one changes
    /// only the files it names.
    #[test]
    fn refused_changes_nothing((tree, text) in case()) {
        let patch = parse(&text).unwrap();
        let mut t = tree.clone();
        match apply_tree(&mut t, &patch, false, false) {
            Err(_) => prop_assert_eq!(&t, &tree),
            Ok(changes) => {
                for (k, v) in &tree {
                    let named = changes.iter().any(|c| match c {
                        Change::Added(p) | Change::Deleted(p) => p == k,
                        Change::Updated { path, .. } => path == k,
                    });
                    if !named {
                        prop_assert_eq!(t.get(k), Some(v));
                    }
                }
            }
        }
    }

    /// The reverse of an accepted patch, when it is accepted, restores the
    /// tree.
    #[test]
    fn reverse_restores((tree, text) in case()) {
        let patch = parse(&text).unwrap();
        let mut t = tree.clone();
        if apply_tree(&mut t, &patch, true, false).is_err() {
            return Ok(());
        }
        let back = parse(&reverse(&text, &tree)).unwrap();
        let mut u = t.clone();
        match apply_tree(&mut u, &back, true, false) {
            Ok(_) => prop_assert_eq!(&u, &tree, "patch:\n{}\nreverse:\n{}", text, reverse(&text, &tree)),
            Err(TreeError::Chunk { .. }) => {}
            Err(e) => prop_assert!(false, "reverse refused unexpectedly: {:?}", e),
        }
    }

    /// Arbitrary text never panics the parser, nor a parsed patch the
    /// applier.
    #[test]
    fn never_panics(text in "(\\*\\*\\* (Begin Patch|End Patch|Add File: a|Update File: a|Delete File: a|Move to: b|End of File)|@@ ?[a-c ]{0,3}|[ +\\-][a-c ]{0,3}| *|<<'EOF'|EOF)(\r?\n(\\*\\*\\* (Begin Patch|End Patch|Add File: a|Update File: a|Delete File: a|Move to: b|End of File)|@@ ?[a-c ]{0,3}|[ +\\-][a-c ]{0,3}| *)){0,12}", body in "[a-c \n]{0,30}") {
        if let Ok(p) = parse(&text) {
            let mut t = Tree::from([("a".to_owned(), body)]);
            let _ = apply_tree(&mut t, &p, false, false);
        }
    }
}

/// The differential harness's driver (scripts/patch-diff.py runs it):
/// for every case folder under $AS_EDIT_PATCH_CASES, applies `patch.txt`
/// to `before/` and writes `ours/` and `ours.txt`. Ignored by default: it
/// has nothing to do without the harness's folders.
#[test]
#[ignore = "driver for scripts/patch-diff.py"]
fn patch_diff_driver() {
    let root = std::env::var("AS_EDIT_PATCH_CASES").expect("AS_EDIT_PATCH_CASES");
    let mut n = 0;
    for case in std::fs::read_dir(&root).unwrap() {
        let dir = case.unwrap().path();
        let mut tree = Tree::new();
        read_tree(&dir.join("before"), "", &mut tree);
        let text = std::fs::read_to_string(dir.join("patch.txt")).unwrap();
        let outcome = match parse(&text) {
            Err(e) => format!("invalid_patch {e}"),
            Ok(p) => match apply_tree(&mut tree, &p, false, false) {
                Ok(changes) => format!("ok {changes:?}"),
                Err(e) => format!("refused {e:?}"),
            },
        };
        for (path, content) in &tree {
            let f = dir.join("ours").join(path);
            std::fs::create_dir_all(f.parent().unwrap()).unwrap();
            std::fs::write(f, content).unwrap();
        }
        std::fs::create_dir_all(dir.join("ours")).unwrap();
        std::fs::write(dir.join("ours.txt"), outcome).unwrap();
        n += 1;
    }
    println!("driver: {n} cases");
}

fn read_tree(dir: &Path, prefix: &str, tree: &mut Tree) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries {
        let e = e.unwrap();
        let name = format!("{prefix}{}", e.file_name().to_str().unwrap());
        if e.file_type().unwrap().is_dir() {
            read_tree(&e.path(), &format!("{name}/"), tree);
        } else {
            tree.insert(name, std::fs::read_to_string(e.path()).unwrap());
        }
    }
}
