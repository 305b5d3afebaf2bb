//! The output side of the stream: the core's LF-normalized output, re-expanded
//! to CRLF when `--eol preserve` asks for it, hashed for `--report`, and
//! written to the temp — which is created only once the output differs
//! from the input.
//!
//! Until an edit replaces something, the output is exactly the (normalized)
//! input, so nothing needs writing: the sink is *pending*. With one edit the
//! engine marks the first change (`out(&[])`, see `Engine::feed`), so the
//! output before it is only counted, never kept; in a batch the current
//! feed's output is kept until the feed ends, and dropped and counted while
//! nothing changed. On the first change it
//! *materializes*: creates the temp, brings the prefix over from the source
//! (re-reading and re-normalizing it; or, when it is the raw input byte for
//! byte, leaving a hole of its length that `complete` fills in the kernel
//! by `copy_file_range` once the edit has succeeded, starting each 8 MiB
//! piece's write-back as it is copied), writes the retained
//! output and from then on writes through. A refusal (`string_not_found`,
//! say) therefore writes nothing, and no temp ever exists; one found after
//! the first change (`multiple_occurrences`) leaves a raw prefix uncopied.

use std::os::fd::{AsFd, OwnedFd};

use rustix::io::Errno;
use sha2::{Digest, Sha256};

use super::error::{ConflictWhat, FsError, WriteStep};
use super::replay::{copy_raw, replay, write_two, Short};
use super::temp::Temp;
use super::{Target, CHUNK};
use crate::engine::Engine;
use crate::eol::{expand_crlf, EolCounter};

/// Output kept for one feed before materializing anyway: a first chunk full
/// of expanding replacements must not grow memory.
const RETAIN_MAX: usize = 2 * CHUNK;

/// Slices at least this long are written as they are, not copied into the
/// write buffer: the engine passes its output on in long slices (gathered
/// short pieces, unchanged stretches); only the pieces of CRLF output are
/// short.
const DIRECT: usize = 16 * 1024;

/// The longest prefix kept pending when it must be re-normalized to be
/// brought over (a CR was fed, or CRLF is written): past it the temp is
/// made and written through, as if nothing were deferred. Re-reading and
/// re-normalizing costs about what writing does, so on a large CRLF file a
/// success would pay twice for the prefix; below it a refusal writes nothing
/// and a success pays a bounded replay.
const REPLAY_MAX: u64 = 4 * CHUNK as u64;

/// Where output goes.
enum Mode {
    /// No temp yet; output so far equals the input (see the module note).
    Pending,
    /// Written through to the temp.
    Writing,
    /// Not written: `--dry-run`, a certain refusal, or a failure already met.
    Off,
}

/// Collects output and writes it to the temp in large pieces; remembers the
/// first failure instead of returning it (the refusal, if any, still wins).
pub(super) struct Sink<'a, 's> {
    target: &'a Target,
    /// The file being edited, read again for the identical prefix.
    source: &'s OwnedFd,
    mode: Mode,
    temp: Option<Temp<'a>>,
    /// Pending: this feed's output since it is kept (see `keep`).
    buf: Vec<u8>,
    /// Writing: the write buffer, `CHUNK` long once writing starts, filled
    /// up to `fill` by short copies (`bytes::copy`: the pieces of a dense
    /// replace-all are short).
    wbuf: Vec<u8>,
    fill: usize,
    /// Pending: output bytes of earlier feeds known equal to the input's
    /// (normalized and, for CRLF output, re-expanded) prefix, and not kept.
    identical: u64,
    /// The raw prefix still to be copied in (`materialize`, `complete`).
    deferred: u64,
    /// Pending: this feed's output counted, not kept, before `keep` (it
    /// extends `identical`; whether it holds a CR is known only once the
    /// feed ends).
    identical_now: u64,
    /// Pending: output is kept in `buf`, not counted: from the engine's
    /// change marker on, or from the start of every feed when the engine
    /// does not mark changes (a batch).
    keep: bool,
    /// Pending: `identical` is the raw input byte for byte (no CR was fed
    /// and the output is LF), so the kernel can copy it.
    raw_prefix: bool,
    error: Option<FsError>,
    crlf: bool,
    hash: Option<Sha256>,
    /// Bytes of output, whether written or not.
    pub(super) size: u64,
}

impl<'a, 's> Sink<'a, 's> {
    /// `crlf`: write LF as CRLF; `hash`: digest the output for `--report`;
    /// `write`: false for `--dry-run` (nothing is ever written); `marked`:
    /// the engine marks its first change (`Engine::marks_changes`).
    pub(super) fn new(
        target: &'a Target,
        source: &'s OwnedFd,
        crlf: bool,
        hash: bool,
        write: bool,
        marked: bool,
    ) -> Sink<'a, 's> {
        Sink {
            target,
            source,
            mode: if write { Mode::Pending } else { Mode::Off },
            temp: None,
            buf: crate::spare::small(crate::spare::Small::Pending),
            wbuf: Vec::new(),
            fill: 0,
            identical: 0,
            deferred: 0,
            identical_now: 0,
            keep: !marked,
            raw_prefix: !crlf,
            error: None,
            crlf,
            hash: hash.then(Sha256::new),
            size: 0,
        }
    }

    /// Output from the engine.
    pub(super) fn push(&mut self, b: &[u8]) {
        // An empty slice is the engine's change marker: passed on as it is.
        // `expand_crlf` gives empty pieces too (at a line end on a piece's
        // edge): those are not the marker, and are dropped.
        if self.crlf && !b.is_empty() {
            expand_crlf(b, &mut |p| {
                if !p.is_empty() {
                    self.put(p)
                }
            });
        } else {
            self.put(b);
        }
    }

    /// Between feeds: a refusal that is certain stops all writing; while
    /// nothing changed, this feed's output joins the identical prefix; on
    /// the first change, the temp is made.
    pub(super) fn fed(&mut self, engine: &Engine) {
        if engine.doomed() {
            self.mode = Mode::Off;
            self.buf = Vec::new();
        } else if let Mode::Pending = self.mode {
            // Everything fed so far is known now: whether a CR was among it.
            self.raw_prefix = !self.crlf && !engine.saw_cr();
            self.identical += std::mem::take(&mut self.identical_now);
            if engine.changed() {
                self.materialize();
            } else {
                self.identical += self.buf.len() as u64;
                self.buf.clear();
                self.keep = !engine.marks_changes();
                if !self.raw_prefix && self.identical > REPLAY_MAX {
                    self.materialize();
                }
            }
        }
    }

    /// The edit succeeded: make sure the temp holds everything (after the
    /// engine's `finish`, which may release a last replacement).
    pub(super) fn complete(&mut self) {
        if let Mode::Pending = self.mode {
            // `finish` releases held-back input, no new raw bytes: the
            // last `fed` knew about every CR.
            self.identical += std::mem::take(&mut self.identical_now);
            self.materialize();
        }
        self.flush();
        let prefix = std::mem::take(&mut self.deferred);
        if let (Mode::Writing, Some(temp), true) = (&self.mode, &self.temp, prefix > 0) {
            let copied = copy_raw(self.source.as_fd(), temp.fd(), prefix);
            self.copied(copied);
        }
    }

    /// The digest of all output, once it is complete.
    pub(super) fn digest(&mut self) -> Option<[u8; 32]> {
        self.hash.take().map(|h| h.finalize().into())
    }

    /// The temp holding the new content, or the first failure met.
    pub(super) fn into_temp(mut self) -> Result<Temp<'a>, FsError> {
        crate::spare::give_chunk(std::mem::take(&mut self.wbuf));
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.temp.take().ok_or(FsError::Write {
            path: self.target.path.clone(),
            step: WriteStep::CreateTemp,
            errno: Errno::INVAL,
        })
    }

    #[inline]
    fn put(&mut self, b: &[u8]) {
        if b.is_empty() {
            // The engine's change marker (see `Engine::feed`).
            self.keep = true;
            return;
        }
        self.size += b.len() as u64;
        if let Some(h) = self.hash.as_mut() {
            h.update(b);
        }
        match self.mode {
            Mode::Off => {}
            Mode::Pending if !self.keep => self.identical_now += b.len() as u64,
            Mode::Pending => {
                self.buf.extend_from_slice(b);
                if self.buf.len() > RETAIN_MAX {
                    if self.identical_now > 0 {
                        // Counted output of this feed may hold normalized
                        // CRs (unknown until it ends): re-normalize it all.
                        self.raw_prefix = false;
                        self.identical += std::mem::take(&mut self.identical_now);
                    }
                    self.materialize();
                }
            }
            Mode::Writing => self.write_buffered(b),
        }
    }

    fn write_buffered(&mut self, b: &[u8]) {
        if b.len() >= DIRECT {
            // Long slices go straight through, no copy: in one `writev`
            // with what is buffered.
            return self.flush_with(b);
        }
        if self.fill + b.len() > CHUNK {
            self.flush();
            if !matches!(self.mode, Mode::Writing) {
                return; // the flush failed: nothing more is written
            }
        }
        crate::bytes::copy(&mut self.wbuf[self.fill..self.fill + b.len()], b);
        self.fill += b.len();
    }

    pub(super) fn flush(&mut self) {
        self.flush_with(&[]);
    }

    /// Writes what is buffered, then `tail`.
    #[inline(never)] // off the per-piece path: once per CHUNK or long slice
    fn flush_with(&mut self, tail: &[u8]) {
        if let Mode::Writing = self.mode {
            let wbuf = std::mem::take(&mut self.wbuf);
            self.write(&wbuf[..self.fill], tail);
            self.fill = 0;
            if let Mode::Writing = self.mode {
                self.wbuf = wbuf; // kept unless the write failed
            }
        }
    }

    fn write(&mut self, head: &[u8], tail: &[u8]) {
        let Some(temp) = self.temp.as_ref() else {
            return;
        };
        if let Err(e) = write_two(temp.fd(), head, tail) {
            self.fail(WriteStep::WriteTemp, e);
        }
    }

    fn fail(&mut self, step: WriteStep, errno: Errno) {
        self.fail_with(FsError::Write {
            path: self.target.path.clone(),
            step,
            errno,
        });
    }

    fn fail_with(&mut self, e: FsError) {
        self.mode = Mode::Off;
        self.buf = Vec::new();
        self.wbuf = Vec::new();
        self.fill = 0;
        self.error.get_or_insert(e);
    }

    /// Creates the temp, brings the identical prefix over, writes what this
    /// feed retained, and switches to writing through.
    #[cold]
    #[inline(never)]
    fn materialize(&mut self) {
        let temp = match Temp::create(self.target) {
            Ok(t) => t,
            Err(e) => return self.fail(WriteStep::CreateTemp, e),
        };
        let fd = temp.fd();
        // A raw prefix is copied once the edit has succeeded (`complete`):
        // the rest is written after a hole of its length, so a refusal met
        // later (a second occurrence near the end) copies nothing.
        let copied = if self.raw_prefix {
            self.deferred = self.identical;
            rustix::fs::seek(fd, rustix::fs::SeekFrom::Start(self.identical))
                .map(drop)
                .map_err(Short::Write)
        } else {
            replay(self.source.as_fd(), fd, self.identical, self.crlf)
        };
        self.temp = Some(temp);
        if !self.copied(copied) {
            return;
        }
        self.mode = Mode::Writing;
        let retained = std::mem::take(&mut self.buf);
        self.wbuf = crate::spare::chunk();
        if !retained.is_empty() {
            self.write(&[], &retained);
        }
        crate::spare::give_small(crate::spare::Small::Pending, retained);
    }
}

impl Sink<'_, '_> {
    /// Takes the outcome of bringing the prefix over: false (and the sink
    /// failed) when it fell short.
    #[cold]
    fn copied(&mut self, r: Result<(), Short>) -> bool {
        let e = match r {
            Ok(()) => return true,
            Err(Short::Write(e)) => FsError::Write {
                path: self.target.path.clone(),
                step: WriteStep::WriteTemp,
                errno: e,
            },
            Err(Short::Read(errno)) => FsError::Read {
                path: Some(self.target.path.clone()),
                errno,
            },
            // The source no longer has the prefix it had: a writer that
            // ignores the lock truncated or rewrote it meanwhile.
            Err(Short::Changed) => FsError::Conflict {
                path: self.target.path.clone(),
                what: ConflictWhat::ChangedWhileEditing,
            },
        };
        self.fail_with(e);
        false
    }
}

/// `--eol preserve`: is the file's dominant line ending CRLF? (A pre-pass;
/// only paid for when asked.)
pub(crate) fn dominant_is_crlf(file: &OwnedFd) -> Result<bool, FsError> {
    let mut counter = EolCounter::default();
    let mut buf = crate::spare::chunk();
    let mut off = 0u64;
    loop {
        match rustix::io::pread(file, &mut buf[..], off) {
            Ok(0) => break,
            Ok(n) => {
                counter.feed(&buf[..n]);
                off += n as u64;
            }
            Err(Errno::INTR) => {}
            Err(errno) => return Err(FsError::Read { path: None, errno }),
        }
    }
    crate::spare::give_chunk(buf);
    Ok(counter.finish().dominant_is_crlf())
}
