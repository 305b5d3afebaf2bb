//! The file toolset through the [`Editor`]: `stat`, `list`, `read`,
//! `glob`, `grep` (the helper's protocol-4 read-side ops, typed in
//! `tools_request`/`tools_answer`) and the writes `write`, `delete`, `mv`, `mkdir` (the
//! transaction's `create`, `delete`, `move` and `mkdir`).
//!
//! A read-side request is the helper's JSON, sent as `--request-b64`
//! through the transaction's command builder (on stdin only when it would
//! not fit the command bound). Without a helper of protocol 4 (missing,
//! older, or unavailable when asked), each op falls back as follows
//! (`tools_transfer`):
//!
//! | op | fallback |
//! | --- | --- |
//! | `read`, raw `read` | download, then the helper's own reader ([`as_edit_find::read::on_bytes`]): the same answer, line for line; but the whole file is downloaded, even for lines 1–10 ([`Sandbox::download`] has no range), and [`LocalShell`](super::LocalShell) refuses a FIFO or a device before opening it for reading |
//! | `write`, `delete`, `mv` of a file | the transaction's transfer path (download, upload, [`Sandbox::remove`]); a name that is not UTF-8 needs the helper (the transfer path keeps names as text) |
//! | `mkdir` | [`Sandbox::make_dir`], then [`Sandbox::create_dirs`] with `parents`: the helper's answers (`tools_transfer`) |
//! | `stat`, `list`, `glob`, `grep`, recursive `delete`, `mv` of a directory | none: [`EditError::HelperRequired`] |
//!
//! Why no shell fallback for the rest: POSIX gives no exact form. `stat`
//! is not a POSIX command and `ls -l` has no nanoseconds; `find` has no
//! `-printf` (GNU only), so no type, size or mtime per name; `grep -n`'s
//! `path:line:` is ambiguous for names holding `:` or a newline, and
//! neither has ripgrep's glob and regex dialect or the binary-file rule;
//! `rm -R` has no one-file-system option, and `mv` of a directory onto
//! one moves it *into* it. An approximate answer an agent cannot tell from
//! an exact one is worse than a clear refusal.
//!
//! [`Editor::read_all`] follows `next` until the range (or the file) is
//! read, within a bound the caller gives; without the helper it downloads
//! the file once and reads every page from that copy (one snapshot, not
//! one download a page).

use std::io;

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::command::body_command;
use super::error::helper_required;
use super::tools_answer::{
    bytes_names, said, BytesPage, Found, Grepped, Listing, Next, Said, Stats, TextPage,
};
use super::tools_request::*;
use super::tools_transfer;
use super::transfer::not_sendable;
use super::txn::{Applied, FileOp};
use super::txn_transfer::transfer_ops;
use super::{EditError, Editor, Sandbox, Token, Via};
use as_edit_wire::protocol::ErrorKind;

/// The protocol that has the toolset ops.
pub const TOOLS_PROTOCOL: u32 = 4;

/// The typed answer, names decoded to bytes.
pub(crate) fn decode<T: DeserializeOwned>(mut v: Value) -> Result<T, EditError> {
    let bad = |e: String| EditError::Unexpected {
        exit_code: Some(0),
        excerpt: format!("the answer is not understood: {e}"),
    };
    bytes_names(&mut v).map_err(bad)?;
    serde_json::from_value(v).map_err(|e| bad(e.to_string()))
}

impl<S: Sandbox> Editor<S> {
    /// `stat` of up to 256 paths (helper only).
    pub fn stat(&mut self, req: &StatRequest) -> Result<Stats, EditError> {
        self.helper_only("stat", &req.json())
    }

    /// `list` of a directory (helper only).
    pub fn list(&mut self, req: &ListRequest) -> Result<Listing, EditError> {
        self.helper_only("list", &req.json())
    }

    /// `glob` (helper only).
    pub fn glob(&mut self, req: &GlobRequest) -> Result<Found, EditError> {
        self.helper_only("glob", &req.json())
    }

    /// `grep` (helper only).
    pub fn grep(&mut self, req: &GrepRequest) -> Result<Grepped, EditError> {
        self.helper_only("grep", &req.json())
    }

    /// One page of a text `read`; without the helper, the file is
    /// downloaded and read by the helper's own code (same answer).
    pub fn read(&mut self, req: &ReadRequest) -> Result<TextPage, EditError> {
        let (v, via) = self.read_any(&req.json(), &mut None)?;
        decode(v).map(|p| TextPage { via, ..p })
    }

    /// One page of a raw `read` (bytes of any file), as [`Editor::read`].
    pub fn read_bytes(&mut self, req: &RawReadRequest) -> Result<BytesPage, EditError> {
        let (v, via) = self.read_any(&req.json(), &mut None)?;
        decode(v).map(|p| BytesPage { via, ..p })
    }

    /// A text `read` that follows `next` until the range (`start`,
    /// `limit`) or the file is read, keeping at most `max_text` bytes of
    /// text: a page that would pass it is not asked for (or not kept),
    /// and the answer then says `truncated` with the `next` to continue.
    /// One page's fields otherwise: `end`, `eof`, `lines`, `sha256` of
    /// the last page, `cut_lines` of all.
    pub fn read_all(&mut self, req: &ReadRequest, max_text: usize) -> Result<TextPage, EditError> {
        use as_edit_wire::tools::answer::{DEFAULT_MAX_BYTES, MIN_MAX_BYTES};
        let mut req = req.clone();
        let cap = req.max_bytes.unwrap_or(DEFAULT_MAX_BYTES);
        let mut all: Option<TextPage> = None;
        // The transfer fallback's download, shared by the pages.
        let mut copy: Option<Vec<u8>> = None;
        loop {
            let have = all.as_ref().map_or(0, |a| a.text.len());
            // The raw text never takes more than its escaped form on the
            // line: a page of `room` line bytes holds at most `room` of text.
            let room = max_text.saturating_sub(have) as u64;
            req.max_bytes = Some(room.clamp(MIN_MAX_BYTES, cap.max(MIN_MAX_BYTES)));
            let (v, via) = self.read_any(&req.json(), &mut copy)?;
            let page = decode(v).map(|p| TextPage { via, ..p })?;
            let asked = page.start;
            if have + page.text.len() > max_text {
                let mut a = all.unwrap_or_else(|| empty_page(asked, page.via));
                a.truncated = true;
                a.next = Some(Next {
                    start: Some(asked),
                    offset: req.offset,
                    check: req.check,
                    ..Next::default()
                });
                return Ok(a);
            }
            let a = match all.take() {
                None => page,
                Some(mut a) => {
                    a.text.push_str(&page.text);
                    a.cut_lines.extend(&page.cut_lines);
                    (a.end, a.eof, a.lines, a.sha256) =
                        (page.end, page.eof, page.lines, page.sha256);
                    (a.truncated, a.next, a.via) = (page.truncated, page.next, page.via);
                    a
                }
            };
            // What is left of `limit`, from the page's `next`.
            let given = (a.end + 1).saturating_sub(asked);
            req.limit = req.limit.map(|l| l.saturating_sub(given));
            let next = a.next.filter(|n| n.start.is_some_and(|s| s > asked));
            match next {
                // `offset` and `check` too: the next page reads from there.
                Some(n) if a.truncated && req.limit != Some(0) => {
                    (req.start, req.offset, req.check) = (n.start, n.offset, n.check)
                }
                _ => return Ok(a),
            }
            all = Some(a);
        }
    }

    /// `write`: the transaction's `create` (native, else the transfer path).
    pub fn write(&mut self, req: &WriteRequest) -> Result<Applied, EditError> {
        self.transaction(&[FileOp::Create {
            path: req.path.clone(),
            content: req.content.clone(),
            overwrite: req.overwrite,
            mode: req.mode,
        }])
    }

    /// `delete`: the transaction's `delete`; `recursive` needs the helper.
    pub fn delete(&mut self, req: &DeleteRequest) -> Result<Applied, EditError> {
        self.transaction(&[FileOp::Delete {
            path: req.path.clone(),
            recursive: req.recursive,
            expect_sha256: None,
        }])
    }

    /// `mv`: the transaction's `move`; a directory needs the helper.
    pub fn mv(&mut self, req: &MoveRequest) -> Result<Applied, EditError> {
        let op = [FileOp::Move {
            path: req.from.clone(),
            to: req.to.clone(),
            overwrite: req.overwrite,
            edits: Vec::new(),
            expect_sha256: None,
        }];
        let r = super::txn::Request::Files(&op);
        self.native_or(&r, |sb| match transfer_ops(sb, &op) {
            // The transfer path moves files by download and upload: a
            // directory (as the source, or an existing destination) is
            // the helper's (its own refusal's words, `tree.rs`).
            Err(EditError::Failed {
                kind: Token::Known(ErrorKind::FileNotFound),
                detail: Some(d),
                ..
            }) if d.ends_with("is a directory, not a regular file") => {
                Err(helper_required("directory move"))
            }
            r => r,
        })
    }

    /// `mkdir`: the helper's, else [`Sandbox::make_dir`] (or
    /// [`Sandbox::create_dirs`] with `parents`).
    pub fn mkdir(&mut self, req: &MkdirRequest) -> Result<Applied, EditError> {
        let op = [FileOp::Mkdir {
            path: req.path.clone(),
            parents: req.parents,
        }];
        if self.helper_protocol().is_some_and(|p| p >= TOOLS_PROTOCOL) {
            let r = super::txn::Request::Files(&op);
            return self.native_or(&r, |sb| tools_transfer::mkdir(sb, req));
        }
        tools_transfer::mkdir(&mut self.sandbox, req)
    }

    /// Sends `body` to a helper of protocol 4: its answer, or
    /// `Unavailable` (no such helper, or it could not be run).
    fn ask_helper(&mut self, body: &Value) -> Result<Said, EditError> {
        if self.helper_protocol().is_none_or(|p| p < TOOLS_PROTOCOL) {
            return Ok(Said::Unavailable);
        }
        let body = serde_json::to_vec(body).expect("a JSON value serializes");
        let forms = ("--stdin", "--request-b64");
        let cmd = body_command(&self.helper, &[], forms, &body, false, self.limit);
        let stdin = self.sandbox.supports_stdin();
        let Some((cmd, input)) = cmd
            .or_else(|| stdin.then(|| body_command(&self.helper, &[], forms, &body, true, 0))?)
        else {
            let e = io::Error::other(
                "the request is over the command bound and the backend has no stdin",
            );
            return Err(not_sendable(&e, Via::Native));
        };
        match self.sandbox.exec(&cmd, input.as_deref()) {
            Err(e) if e.kind() == io::ErrorKind::NotConnected => Err(EditError::Backend(e)),
            Err(e) if e.kind() == io::ErrorKind::InvalidInput => Err(not_sendable(&e, Via::Native)),
            Err(_) => Ok(Said::Unavailable),
            Ok(out) => {
                let s = said(&out.output, out.exit_code, Via::Native)?;
                if matches!(s, Said::Unavailable) {
                    self.protocol = None;
                }
                Ok(s)
            }
        }
    }

    fn helper_only<T: DeserializeOwned>(&mut self, op: &str, body: &Value) -> Result<T, EditError> {
        match self.ask_helper(body)? {
            Said::Answer(v) => decode(v),
            Said::Unavailable => Err(helper_required(op)),
        }
    }

    /// A read by the helper, or else over the download (`copy`: the file
    /// downloaded by an earlier page of the same read, kept there).
    fn read_any(
        &mut self,
        body: &Value,
        copy: &mut Option<Vec<u8>>,
    ) -> Result<(Value, Via), EditError> {
        match self.ask_helper(body)? {
            Said::Answer(v) => Ok((v, Via::Native)),
            Said::Unavailable => {
                tools_transfer::read(&mut self.sandbox, body, copy).map(|v| (v, Via::Transfer))
            }
        }
    }
}

/// A `read_all` page holding nothing yet, at line `start`.
fn empty_page(start: u64, via: Via) -> TextPage {
    TextPage {
        text: String::new(),
        start,
        end: start - 1,
        eof: false,
        lines: None,
        sha256: None,
        cut_lines: Vec::new(),
        truncated: false,
        next: None,
        via,
    }
}
