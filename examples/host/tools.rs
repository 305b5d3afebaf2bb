//! The example's toolset subcommands (the module doc of `host.rs` lists
//! them): parse the words, call the `Editor`, print one line per entry.

use std::process::ExitCode;

use as_edit_host::{
    DeleteRequest, EditError, Editor, GlobRequest, GrepRequest, ListRequest, MkdirRequest,
    MoveRequest, ReadRequest, Sandbox, StatRequest, WriteRequest,
};

use super::{report_applied, via_words};

const TOOLS: &[&str] = &[
    "stat", "ls", "read", "glob", "grep", "write", "rm", "mv", "mkdir",
];

/// Whether the words name a tool.
pub(crate) fn is_tool(words: &[String]) -> bool {
    words.first().is_some_and(|w| TOOLS.contains(&w.as_str()))
}

fn failed(e: EditError) -> ExitCode {
    println!("{e}");
    ExitCode::from(1)
}

fn usage() -> ExitCode {
    eprintln!("{}", super::USAGE);
    ExitCode::from(2)
}

fn number(s: &str) -> Option<u64> {
    s.parse().ok()
}

/// Runs the tool the words name.
pub(crate) fn run<S: Sandbox>(ed: &mut Editor<S>, words: &[String]) -> ExitCode {
    let flag = |f: &str| words.iter().any(|w| w == f);
    let pos: Vec<&str> = (words[1..].iter())
        .map(String::as_str)
        .filter(|w| !matches!(*w, "-r" | "-p" | "-i" | "--regex" | "--overwrite"))
        .collect();
    match (words[0].as_str(), pos.as_slice()) {
        ("stat", paths) if !paths.is_empty() => match ed.stat(&StatRequest::new(paths.to_vec())) {
            Ok(s) => {
                for e in s.entries {
                    let kind = format!("{:?}", e.kind).to_lowercase();
                    let (size, mtime) = (e.size.unwrap_or(0), e.mtime_ns.unwrap_or(0));
                    let mode = e.mode.map_or("-".into(), |m| format!("{m:04o}"));
                    print!("{kind} {size} {mode} {mtime} {:?}", e.path);
                    if let (Some(t), Some(r)) = (e.target, e.resolved) {
                        print!(" -> {t:?} ({})", format!("{r:?}").to_lowercase());
                    }
                    println!();
                }
                ExitCode::SUCCESS
            }
            Err(e) => failed(e),
        },
        ("ls", [dir, rest @ ..]) if rest.len() <= 1 => {
            let mut req = ListRequest::new(dir);
            if let Some(d) = rest.first() {
                let Some(d) = number(d) else { return usage() };
                req = req.depth(d);
            }
            match ed.list(&req) {
                Ok(l) => {
                    for e in &l.entries {
                        let kind = format!("{:?}", e.kind).to_lowercase();
                        println!("{kind} {} {:?}", e.size, e.path);
                    }
                    println!("total {}", l.total);
                    ExitCode::SUCCESS
                }
                Err(e) => failed(e),
            }
        }
        ("read", [file, rest @ ..]) if rest.len() <= 2 => {
            let mut req = ReadRequest::new(file);
            let nums: Option<Vec<u64>> = rest.iter().map(|n| number(n)).collect();
            let Some(nums) = nums else { return usage() };
            if let Some(s) = nums.first() {
                req = req.start(*s);
            }
            if let Some(l) = nums.get(1) {
                req = req.limit(*l);
            }
            match ed.read_all(&req, 16 << 20) {
                Ok(t) => {
                    print!("{}", t.text);
                    let of = t.lines.map_or(String::new(), |n| format!(" of {n}"));
                    let sha = t.sha256.map_or(String::new(), |h| format!(", sha256 {h}"));
                    let more = if t.truncated { ", truncated" } else { "" };
                    let via = via_words(t.via);
                    println!("-- lines {}-{}{of}{sha}{more} ({via})", t.start, t.end);
                    ExitCode::SUCCESS
                }
                Err(e) => failed(e),
            }
        }
        ("glob", [pattern, rest @ ..]) if rest.len() <= 1 => {
            let mut req = GlobRequest::new(*pattern);
            if let Some(d) = rest.first() {
                req = req.path(d);
            }
            match ed.glob(&req) {
                Ok(f) => {
                    for e in &f.entries {
                        println!("{} {:?}", e.size, e.path);
                    }
                    println!("total {}", f.total);
                    ExitCode::SUCCESS
                }
                Err(e) => failed(e),
            }
        }
        ("grep", [pattern, rest @ ..]) if rest.len() <= 1 => {
            let mut req = GrepRequest::new(*pattern)
                .regex(flag("--regex"))
                .ignore_case(flag("-i"));
            if let Some(d) = rest.first() {
                req = req.path(d);
            }
            match ed.grep(&req) {
                Ok(g) => {
                    for m in &g.matches {
                        println!("{:?}:{}:{}", m.path, m.line, m.text);
                    }
                    ExitCode::SUCCESS
                }
                Err(e) => failed(e),
            }
        }
        ("write", [file, text]) => {
            let req = WriteRequest::new(*file, *text).overwrite(flag("--overwrite"));
            report_applied(ed.write(&req))
        }
        ("rm", [path]) => {
            report_applied(ed.delete(&DeleteRequest::new(*path).recursive(flag("-r"))))
        }
        ("mv", [from, to]) => {
            let req = MoveRequest::new(*from, *to).overwrite(flag("--overwrite"));
            report_applied(ed.mv(&req))
        }
        ("mkdir", [dir]) => report_applied(ed.mkdir(&MkdirRequest::new(*dir).parents(flag("-p")))),
        _ => usage(),
    }
}
