//! The toolset's typed requests: builders with the protocol's defaults
//! (a field left alone is not sent, so the helper's default holds), and
//! names sent losslessly (`path`, or `path_b64` when not UTF-8). The wire
//! formats are `src/tools/mod.rs`'s.

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use serde_json::{json, Map, Value};

/// `"key":"…"` for a UTF-8 name, else `"key_b64":"…"` (lossless).
pub(crate) fn put_path(obj: &mut Map<String, Value>, key: &str, p: &Path) {
    match p.to_str() {
        Some(s) => obj.insert(key.into(), s.into()),
        None => obj.insert(format!("{key}_b64"), b64(p.as_os_str().as_bytes()).into()),
    };
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn put<T: Into<Value>>(obj: &mut Map<String, Value>, key: &str, v: Option<T>) {
    if let Some(v) = v {
        obj.insert(key.into(), v.into());
    }
}

macro_rules! setters {
    ($($(#[$doc:meta])* $name:ident: $t:ty),* $(,)?) => {$(
        $(#[$doc])*
        pub fn $name(mut self, v: impl Into<$t>) -> Self {
            self.$name = Some(v.into());
            self
        }
    )*};
}

/// `stat` of up to 256 paths (`lstat`: a symlink is not followed).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StatRequest {
    /// The paths, answered in this order.
    pub paths: Vec<PathBuf>,
    /// The first path answered (a page's `next`).
    pub offset: Option<u64>,
    /// The result line's bound (default 262,144).
    pub max_bytes: Option<u64>,
}

impl StatRequest {
    /// A `stat` of `paths`.
    pub fn new<P: Into<PathBuf>>(paths: impl IntoIterator<Item = P>) -> Self {
        StatRequest {
            paths: paths.into_iter().map(Into::into).collect(),
            ..Self::default()
        }
    }
    setters! {
        /// Start at this path (`next.offset`).
        offset: u64,
        /// Bound the result line.
        max_bytes: u64,
    }
    pub(crate) fn json(&self) -> Value {
        let paths: Vec<Value> = (self.paths.iter())
            .map(|p| match p.to_str() {
                Some(s) => s.into(),
                None => json!({"path_b64": b64(p.as_os_str().as_bytes())}),
            })
            .collect();
        let mut o = Map::new();
        o.insert("op".into(), "stat".into());
        o.insert("paths".into(), paths.into());
        put(&mut o, "offset", self.offset);
        put(&mut o, "max_bytes", self.max_bytes);
        o.into()
    }
}

/// Declares a request struct with its path-like fields, its optional
/// fields (sent only when set) and the `json` that spells it on the wire.
macro_rules! request {
    ($(#[$doc:meta])* $name:ident, $op:literal, [$($(#[$pd:meta])* $p:ident: $pt:ty),*],
     [$($(#[$od:meta])* $o:ident: $ot:ty),*], $($extra:tt)*) => {
        $(#[$doc])*
        #[derive(Clone, Debug, Default, PartialEq, Eq)]
        pub struct $name {
            $($(#[$pd])* pub $p: $pt,)*
            $($(#[$od])* pub $o: Option<$ot>,)*
            /// The result line's bound (default 262,144).
            pub max_bytes: Option<u64>,
        }
        impl $name {
            setters! { $($(#[$od])* $o: $ot,)* /// Bound the result line.
                max_bytes: u64 }
            pub(crate) fn json(&self) -> Value {
                let mut o = Map::new();
                o.insert("op".into(), $op.into());
                $(self.$p.put(&mut o, stringify!($p));)*
                $(put(&mut o, stringify!($o), self.$o.clone());)*
                put(&mut o, "max_bytes", self.max_bytes);
                $($extra)*(&mut o, self);
                o.into()
            }
        }
    };
}

/// A request field that is a path (`path`/`path_b64`) or a plain string.
trait Field {
    fn put(&self, o: &mut Map<String, Value>, key: &str);
}
impl Field for PathBuf {
    fn put(&self, o: &mut Map<String, Value>, key: &str) {
        put_path(o, key, self)
    }
}
impl Field for Option<PathBuf> {
    fn put(&self, o: &mut Map<String, Value>, key: &str) {
        if let Some(p) = self {
            put_path(o, key, p)
        }
    }
}
impl Field for String {
    fn put(&self, o: &mut Map<String, Value>, key: &str) {
        o.insert(key.into(), self.clone().into());
    }
}

fn nothing<T>(_: &mut Map<String, Value>, _: &T) {}

request!(
    /// `list` of a directory's entries, sorted bytewise by path.
    ListRequest, "list", [/// The directory.
        path: PathBuf],
    [/// Levels to descend (1).
        depth: u64, /// List names starting with `.` (true).
        hidden: bool, /// Enter `.git`, `.hg`, `.svn` (false).
        vcs: bool, /// The first entry answered (0).
        offset: u64, /// The most entries (1000).
        limit: u64],
    nothing
);

request!(
    /// A text `read`: lines `start`… of a UTF-8 file.
    ReadRequest, "read", [/// The file.
        path: PathBuf],
    [/// The first line, 1-based (1).
        start: u64, /// The most lines (no limit).
        limit: u64, /// `cat -n` numbers (false).
        numbers: bool, /// Cut longer lines at this many characters (none).
        max_columns: u64, /// A page's `next.offset`: where line `start` begins.
        offset: u64, /// A page's `next.check`, with `offset`.
        check: u64],
    nothing
);

request!(
    /// A raw `read`: a byte range of any file, as bytes.
    RawReadRequest, "read", [/// The file.
        path: PathBuf],
    [/// The first byte (0).
        offset: u64, /// The most bytes (as many as fit).
        length: u64],
    (|o: &mut Map<String, Value>, _: &RawReadRequest| { o.insert("raw".into(), true.into()); })
);

request!(
    /// `glob`: regular files under `path` matching a pattern.
    GlobRequest, "glob", [/// ripgrep's glob syntax.
        pattern: String, /// Where to look (the working directory).
        path: Option<PathBuf>],
    [/// `"path"` or `"mtime"` (newest first) (`"path"`).
        sort: Sort, /// The first entry answered (0).
        offset: u64, /// The most entries (1000).
        limit: u64, /// Match names starting with `.` (true).
        hidden: bool, /// Enter `.git`, `.hg`, `.svn` (false).
        vcs: bool, /// Honour `.gitignore` files (false).
        gitignore: bool],
    nothing
);

request!(
    /// `grep`: a literal (or, with `regex`, a regular expression) search.
    GrepRequest, "grep", [/// The text or expression.
        pattern: String, /// A file or directory (the working directory).
        path: Option<PathBuf>],
    [/// ripgrep's regex dialect (false: literal).
        regex: bool, /// Only files whose path matches this glob.
        glob: String, /// Case-insensitive (false).
        ignore_case: bool, /// `"content"`, `"files"` or `"count"` (`"content"`).
        output: GrepOutput, /// Lines of context around each match (0).
        context: u64, /// The first match (or file) answered (0).
        offset: u64, /// The most matches (or files) (1000).
        limit: u64, /// Cut line text at this many characters (500).
        max_columns: u64, /// Search names starting with `.` (true).
        hidden: bool, /// Enter `.git`, `.hg`, `.svn` (false).
        vcs: bool, /// Honour `.gitignore` files (false).
        gitignore: bool],
    nothing
);

impl ListRequest {
    /// A `list` of `path`'s own entries.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        ListRequest {
            path: path.into(),
            ..Self::default()
        }
    }
}

impl ReadRequest {
    /// A read of the whole text file (within the result line's bound).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        ReadRequest {
            path: path.into(),
            ..Self::default()
        }
    }
}

impl RawReadRequest {
    /// A raw read from byte 0.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        RawReadRequest {
            path: path.into(),
            ..Self::default()
        }
    }
}

impl GlobRequest {
    /// A `glob` of `pattern` under the working directory.
    pub fn new(pattern: impl Into<String>) -> Self {
        GlobRequest {
            pattern: pattern.into(),
            ..Self::default()
        }
    }
    /// Look under `path` instead of the working directory.
    pub fn path(mut self, path: impl Into<PathBuf>) -> Self {
        self.path = Some(path.into());
        self
    }
}

impl GrepRequest {
    /// A literal search for `pattern` under the working directory.
    pub fn new(pattern: impl Into<String>) -> Self {
        GrepRequest {
            pattern: pattern.into(),
            ..Self::default()
        }
    }
    /// Search `path` (a file or a directory) instead.
    pub fn path(mut self, path: impl Into<PathBuf>) -> Self {
        self.path = Some(path.into());
        self
    }
}

/// `glob`'s order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sort {
    /// Bytewise by path.
    Path,
    /// Newest first.
    Mtime,
}

impl From<Sort> for Value {
    fn from(s: Sort) -> Value {
        match s {
            Sort::Path => "path",
            Sort::Mtime => "mtime",
        }
        .into()
    }
}

/// What `grep` answers with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GrepOutput {
    /// The matching lines (and context).
    Content,
    /// The files with a match.
    Files,
    /// The files with their counts.
    Count,
}

impl From<GrepOutput> for Value {
    fn from(o: GrepOutput) -> Value {
        match o {
            GrepOutput::Content => "content",
            GrepOutput::Files => "files",
            GrepOutput::Count => "count",
        }
        .into()
    }
}

/// `write`: the transaction's `create` (missing parents are made).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriteRequest {
    /// The file.
    pub path: PathBuf,
    /// Its new content, exactly.
    pub content: String,
    /// Replace an existing file (false: `file_exists`, create-exclusive).
    pub overwrite: bool,
    /// Permission bits before the umask (default 0644).
    pub mode: Option<u32>,
}

impl WriteRequest {
    /// A new file `path` holding `content`.
    pub fn new(path: impl Into<PathBuf>, content: impl Into<String>) -> Self {
        WriteRequest {
            path: path.into(),
            content: content.into(),
            overwrite: false,
            mode: None,
        }
    }
    /// Replace an existing file.
    pub fn overwrite(mut self, yes: bool) -> Self {
        self.overwrite = yes;
        self
    }
    /// The new file's permission bits (before the umask).
    pub fn mode(mut self, mode: u32) -> Self {
        self.mode = Some(mode);
        self
    }
}

/// `delete`: a file, or with `recursive` a directory tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeleteRequest {
    /// The file or directory.
    pub path: PathBuf,
    /// Remove a directory and everything under it (the helper only).
    pub recursive: bool,
}

impl DeleteRequest {
    /// A delete of the file `path`.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        DeleteRequest {
            path: path.into(),
            recursive: false,
        }
    }
    /// Remove a directory tree.
    pub fn recursive(mut self, yes: bool) -> Self {
        self.recursive = yes;
        self
    }
}

/// `mv`: the transaction's `move` (missing parents of `to` are made; an
/// existing `to` is `file_exists` unless `overwrite`, never moved *into*).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MoveRequest {
    /// What moves.
    pub from: PathBuf,
    /// Its new path.
    pub to: PathBuf,
    /// Replace an existing `to`.
    pub overwrite: bool,
}

impl MoveRequest {
    /// A move of `from` to `to`.
    pub fn new(from: impl Into<PathBuf>, to: impl Into<PathBuf>) -> Self {
        MoveRequest {
            from: from.into(),
            to: to.into(),
            overwrite: false,
        }
    }
    /// Replace an existing `to`.
    pub fn overwrite(mut self, yes: bool) -> Self {
        self.overwrite = yes;
        self
    }
}

/// `mkdir`: one directory, or with `parents` its missing parents too (an
/// existing directory is then success, as `mkdir -p`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MkdirRequest {
    /// The directory.
    pub path: PathBuf,
    /// `mkdir -p`.
    pub parents: bool,
}

impl MkdirRequest {
    /// A `mkdir` of exactly `path`.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        MkdirRequest {
            path: path.into(),
            parents: false,
        }
    }
    /// Make missing parents; an existing directory is fine.
    pub fn parents(mut self, yes: bool) -> Self {
        self.parents = yes;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only the fields set are sent (the helper's defaults hold), names
    /// that are not UTF-8 go as `path_b64`, and the helper's own parser
    /// takes every request.
    #[test]
    fn requests_are_the_helpers_json() {
        let odd = PathBuf::from(std::ffi::OsStr::from_bytes(b"d/\xff"));
        let cases: Vec<(Value, &str)> = vec![
            (
                StatRequest::new(["a:b", "c"]).offset(1u64).json(),
                r#"{"offset":1,"op":"stat","paths":["a:b","c"]}"#,
            ),
            (
                StatRequest::new([odd.clone()]).json(),
                r#"{"op":"stat","paths":[{"path_b64":"ZC//"}]}"#,
            ),
            (ListRequest::new("d").json(), r#"{"op":"list","path":"d"}"#),
            (
                ListRequest::new(&odd).depth(2u64).hidden(false).json(),
                r#"{"depth":2,"hidden":false,"op":"list","path_b64":"ZC//"}"#,
            ),
            (
                ReadRequest::new("f")
                    .start(3u64)
                    .limit(2u64)
                    .numbers(true)
                    .max_bytes(2048u64)
                    .json(),
                r#"{"limit":2,"max_bytes":2048,"numbers":true,"op":"read","path":"f","start":3}"#,
            ),
            (
                RawReadRequest::new("f").offset(5u64).json(),
                r#"{"offset":5,"op":"read","path":"f","raw":true}"#,
            ),
            (
                GlobRequest::new("**/*.rs").sort(Sort::Mtime).json(),
                r#"{"op":"glob","pattern":"**/*.rs","sort":"mtime"}"#,
            ),
            (
                GrepRequest::new("x")
                    .path("src")
                    .regex(true)
                    .output(GrepOutput::Count)
                    .glob("*.rs")
                    .context(1u64)
                    .json(),
                r#"{"context":1,"glob":"*.rs","op":"grep","output":"count","path":"src","pattern":"x","regex":true}"#,
            ),
        ];
        for (v, want) in cases {
            let text = serde_json::to_string(&v).unwrap();
            assert_eq!(text, want);
            let opts = as_edit_wire::request::EditOptions::default();
            as_edit_wire::tools::parse(text.as_bytes(), &opts).unwrap();
        }
    }
}
