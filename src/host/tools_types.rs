//! The toolset's typed requests (builders with the protocol's defaults:
//! a field left alone is not sent, so the helper's default holds) and
//! typed answers (names decoded losslessly from `path` or `path_b64`).
//! The wire formats are `src/tools/mod.rs`'s.

use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use base64::Engine as _;
use serde::Deserialize;
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
        max_columns: u64],
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

/// What an entry is (`lstat`'s type; `Missing` for `stat` of nothing).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EntryType {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link.
    Symlink,
    /// A FIFO, socket or device.
    Other,
    /// Nothing there (or, for a symlink's `resolved`, a dangling link).
    Missing,
    /// A symlink's `resolved` only: it leads out of `--root`.
    OutsideRoot,
}

/// A page's continuation: the request fields to set and send again.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct Next {
    /// `offset` (stat, list, glob, grep, raw read).
    pub offset: Option<u64>,
    /// `start` (text read).
    pub start: Option<u64>,
    /// `length` (raw read: what is left of it).
    pub length: Option<u64>,
}

/// Rewrites every `"K"` (a string) or `"K_b64"` of a name key (`path`,
/// `target`) in `v` as `"K"`: the name's bytes, an array, which
/// [`de_path`] reads. So a name is lossless whichever way it came.
pub(crate) fn bytes_names(v: &mut Value) -> Result<(), String> {
    match v {
        Value::Array(a) => a.iter_mut().try_for_each(bytes_names),
        Value::Object(o) => {
            for key in ["path", "target"] {
                let b = match (o.remove(key), o.remove(&format!("{key}_b64"))) {
                    (Some(Value::String(s)), None) => s.into_bytes(),
                    (None, Some(Value::String(b))) => base64::engine::general_purpose::STANDARD
                        .decode(b)
                        .map_err(|e| format!("\"{key}_b64\" is not base64: {e}"))?,
                    (None, None) => continue,
                    _ => return Err(format!("\"{key}\" is neither a string nor base64")),
                };
                o.insert(key.into(), b.into());
            }
            o.values_mut().try_for_each(bytes_names)
        }
        _ => Ok(()),
    }
}

fn de_path<'de, D: serde::Deserializer<'de>>(d: D) -> Result<PathBuf, D::Error> {
    Ok(PathBuf::from(OsString::from_vec(Vec::<u8>::deserialize(d)?)))
}

fn de_opt_path<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<PathBuf>, D::Error> {
    de_path(d).map(Some)
}

fn de_mode<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    let s = String::deserialize(d)?;
    u32::from_str_radix(&s, 8)
        .map(Some)
        .map_err(|_| serde::de::Error::custom(format!("mode {s:?} is not octal")))
}

fn de_b64<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
    let s = String::deserialize(d)?;
    (base64::engine::general_purpose::STANDARD.decode(s)).map_err(serde::de::Error::custom)
}

fn native() -> super::Via {
    super::Via::Native
}

/// One `stat` answer.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct StatEntry {
    /// The path as asked.
    #[serde(deserialize_with = "de_path")]
    pub path: PathBuf,
    /// What it is (`Missing` when nothing is there).
    #[serde(rename = "type")]
    pub kind: EntryType,
    /// Bytes (none when missing).
    pub size: Option<u64>,
    /// Modified, nanoseconds since the epoch (none when missing).
    pub mtime_ns: Option<u64>,
    /// The 12 permission bits (none when missing).
    #[serde(default, deserialize_with = "de_mode")]
    pub mode: Option<u32>,
    /// A symlink's text.
    #[serde(default, deserialize_with = "de_opt_path")]
    pub target: Option<PathBuf>,
    /// What a symlink leads to.
    pub resolved: Option<EntryType>,
}

/// A `stat` page.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct Stats {
    /// In request order, from the request's `offset`.
    pub entries: Vec<StatEntry>,
    /// Cut by `max_bytes`: `next` continues it.
    #[serde(default)]
    pub truncated: bool,
    /// The fields that continue a cut page.
    pub next: Option<Next>,
}

/// One `list` entry.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct ListEntry {
    /// The listed path joined with the entry's relative path.
    #[serde(deserialize_with = "de_path")]
    pub path: PathBuf,
    /// What it is.
    #[serde(rename = "type")]
    pub kind: EntryType,
    /// Bytes.
    pub size: u64,
    /// Modified, nanoseconds since the epoch.
    pub mtime_ns: u64,
}

/// A `list` page.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct Listing {
    /// Sorted bytewise by path.
    pub entries: Vec<ListEntry>,
    /// Every entry the walk found.
    pub total: u64,
    /// Names left out by `hidden:false`.
    pub hidden_count: Option<u64>,
    /// Directories that could not be read (listed, not entered).
    #[serde(default)]
    pub unreadable: u64,
    /// The walk's own bound stopped it: `total` is a lower bound.
    #[serde(default)]
    pub walk_truncated: bool,
    /// Cut by `limit` or `max_bytes`: `next` continues it.
    #[serde(default)]
    pub truncated: bool,
    /// The fields that continue a cut page.
    pub next: Option<Next>,
}

/// A text `read` page.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct TextPage {
    /// The lines as in the file (numbered if asked; cut lines cut).
    pub text: String,
    /// The first line asked for.
    pub start: u64,
    /// The last line given (`start - 1` if none).
    pub end: u64,
    /// The page reaches the end of the file.
    pub eof: bool,
    /// With `eof`: the file's line count.
    pub lines: Option<u64>,
    /// With `eof`: the whole file's SHA-256 (hex), for `expect_sha256`.
    pub sha256: Option<String>,
    /// Lines cut by `max_columns` or by the bound.
    #[serde(default)]
    pub cut_lines: Vec<u64>,
    /// Cut by `max_bytes`: `next` continues it.
    #[serde(default)]
    pub truncated: bool,
    /// The fields that continue a cut page.
    pub next: Option<Next>,
    /// Which path answered.
    #[serde(skip, default = "native")]
    pub via: super::Via,
}

/// A raw `read` page.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct BytesPage {
    /// The bytes.
    #[serde(rename = "b64", deserialize_with = "de_b64")]
    pub bytes: Vec<u8>,
    /// Where they start.
    pub offset: u64,
    /// The file's size.
    pub size: u64,
    /// They reach the end of the file.
    pub eof: bool,
    /// Cut by `max_bytes`: `next` continues it.
    #[serde(default)]
    pub truncated: bool,
    /// The fields that continue a cut page.
    pub next: Option<Next>,
    /// Which path answered.
    #[serde(skip, default = "native")]
    pub via: super::Via,
}

/// One `glob` match.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct FileEntry {
    /// The file's path.
    #[serde(deserialize_with = "de_path")]
    pub path: PathBuf,
    /// Bytes.
    pub size: u64,
    /// Modified, nanoseconds since the epoch.
    pub mtime_ns: u64,
}

/// A `glob` page.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct Found {
    /// In the requested order.
    pub entries: Vec<FileEntry>,
    /// Every match.
    pub total: u64,
    /// Cut by `limit`, `max_bytes` or the walk's bound.
    #[serde(default)]
    pub truncated: bool,
    /// The fields that continue a cut page (none when the walk was cut).
    pub next: Option<Next>,
}

/// One `grep` line (`content`).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct GrepLine {
    /// The file.
    #[serde(deserialize_with = "de_path")]
    pub path: PathBuf,
    /// 1-based.
    pub line: u64,
    /// The line's text (cut at `max_columns`).
    pub text: String,
    /// The text was cut.
    #[serde(default)]
    pub cut: bool,
    /// A context line, not a match.
    #[serde(default)]
    pub context: bool,
}

/// One `grep` file (`files`, `count`).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct GrepFile {
    /// The file.
    #[serde(deserialize_with = "de_path")]
    pub path: PathBuf,
    /// Matching lines (`count` only).
    pub count: Option<u64>,
}

/// A `grep` page.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct Grepped {
    /// `content`: matches and context, in path then line order.
    #[serde(default)]
    pub matches: Vec<GrepLine>,
    /// `files` and `count`: in path order.
    #[serde(default)]
    pub files: Vec<GrepFile>,
    /// Files read.
    pub files_searched: u64,
    /// Files left out as binary (a NUL in the first 8 KiB).
    pub skipped_binary: u64,
    /// Cut by `limit`, `max_bytes` or the walk's bound.
    #[serde(default)]
    pub truncated: bool,
    /// The fields that continue a cut page.
    pub next: Option<Next>,
}
