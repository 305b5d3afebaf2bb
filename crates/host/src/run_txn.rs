//! [`Editor`]'s calls for several files: a transaction of [`FileOp`]s, a
//! V4A patch, an `apply_patch_call`'s operations. Each runs natively in
//! one exec when the helper has protocol 3, else (helper missing, older,
//! `write_failed` with nothing changed, or a request over the command
//! bound on a backend without stdin) through the transfer path with the
//! same pure code, which is **not atomic across files** (see
//! [`write_back`](super::write_back)).

use std::io;

use super::patch_transfer::{operations_patch, parse_patch, transfer_patch};
use super::transfer::{keep_helper_detail, not_sendable};
use super::txn::{self, Applied, FileOp, Outcome, PatchOp, Request, TXN_PROTOCOL};
use super::txn_transfer::transfer_ops;
use super::{EditError, Editor, Sandbox, Via};

impl<S: Sandbox> Editor<S> {
    /// Runs `ops` as one transaction: all or nothing natively; on the
    /// transfer path every new content is computed and every refusal
    /// found before anything is uploaded, and a failed upload puts back
    /// what was already written (the error's [`TxnAt`](super::TxnAt) says
    /// which files are in which state when that fails too).
    pub fn transaction(&mut self, ops: &[FileOp]) -> Result<Applied, EditError> {
        let req = Request::Files(ops);
        self.native_or(&req, |sb| transfer_ops(sb, ops))
    }

    /// Applies a V4A patch (`*** Begin Patch` … `*** End Patch`) as one
    /// transaction; the transfer path parses and places it with the
    /// helper's own parser and locator.
    pub fn apply_patch(&mut self, text: &str) -> Result<Applied, EditError> {
        let req = Request::Patch(text);
        self.native_or(&req, |sb| transfer_patch(sb, parse_patch(text)?))
    }

    /// Applies the operations of a Responses API `apply_patch_call`
    /// (`create_file`/`update_file`/`delete_file` with their diffs) as one
    /// transaction.
    pub fn apply_operations(&mut self, ops: &[PatchOp]) -> Result<Applied, EditError> {
        let req = Request::Operations(ops);
        self.native_or(&req, |sb| transfer_patch(sb, operations_patch(ops)?))
    }

    pub(super) fn native_or(
        &mut self,
        req: &Request,
        transfer: impl FnOnce(&mut S) -> Result<Applied, EditError>,
    ) -> Result<Applied, EditError> {
        let cmd = txn::command(&self.helper, req, self.sandbox.supports_stdin(), self.limit)?;
        let mut helper_said = None;
        if let Some((cmd, stdin)) = cmd {
            if self.helper_protocol().is_some_and(|p| p >= TXN_PROTOCOL) {
                match self.sandbox.exec(&cmd, stdin.as_deref()) {
                    Err(e) if e.kind() == io::ErrorKind::NotConnected => {
                        return Err(EditError::Backend(e))
                    }
                    Err(e) if e.kind() == io::ErrorKind::InvalidInput => {
                        return Err(not_sendable(&e, Via::Native))
                    }
                    // The transfer path may still work, or says why not.
                    Err(_) => {}
                    Ok(out) => match txn::outcome(&out.output, out.exit_code, req) {
                        Outcome::Applied(a) => return Ok(a),
                        Outcome::Final(e) => return Err(e),
                        Outcome::WriteFailed(d) => helper_said = Some(d),
                        Outcome::Unavailable => self.protocol = None,
                    },
                }
            }
        }
        keep_helper_detail(transfer(&mut self.sandbox), helper_said)
    }
}
