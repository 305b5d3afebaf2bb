//! The prepare phase, once every file is locked (`lock`): every file's
//! new content in an unnamed temp beside where it ends, its ops chained
//! (each reads the previous one's temp). Any refusal or error here changes
//! nothing: the temps are unnamed and vanish with their descriptors.

use std::os::fd::OwnedFd;

use rustix::fs::{self as rfs, Mode};
use rustix::io::Errno;
use sha2::{Digest, Sha256};

use crate::fs::temp::Temp;
use crate::fs::{ConflictWhat, FsError, InodeFlag, Target, WriteStep};
use crate::protocol::{Failure, Report};
use crate::request::Eol;

use super::lock::{first_op, Locked};
use super::op::{Change, OpKind, Txn};
use super::plan::{End, File, Plan};
use super::read::{read_each, read_norm};
use super::writer::{write_all, write_temp, TempWriter};
use super::TxnError;

/// A failed rename of a moved original away, as the write failure it is.
pub(super) fn hide_err(plan: &Plan, f: usize, errno: Errno) -> TxnError {
    let path = plan.files[f]
        .orig
        .as_ref()
        .expect("an original")
        .0
        .path
        .clone();
    TxnError::of(
        first_op(plan, f),
        FsError::Write {
            path,
            step: WriteStep::Rename,
            errno,
        },
    )
}

/// Where file `f`'s temp is made: beside where it ends.
pub(super) fn temp_dir(file: &File) -> &Target {
    match &file.end {
        End::At(d) => &d.t,
        _ => match (&file.orig, &file.unborn) {
            (Some(o), _) => &o.0,
            (None, Some(t)) => t,
            (None, None) => unreachable!("a file is somewhere"),
        },
    }
}

/// Runs file `f`'s content ops in order, each from the previous result,
/// and checks every `expect_sha256`. Fills the `--report` change of each
/// op. Returns the temp with the final content (none when no op changes
/// the content and the file need not be copied).
#[cold] // off the single-file path: LLVM optimizes it for size
#[cfg_attr(as_edit_small, optimize(size))]
pub(super) fn stage<'a>(
    txn: &Txn,
    plan: &Plan,
    f: usize,
    file: &'a File,
    locked: Option<&Locked>,
    reports: &mut [Option<Report>],
    counts: &mut [u64],
) -> Result<Option<Temp<'a>>, TxnError> {
    let opts = &txn.options;
    let at = temp_dir(file);
    if let End::At(d) = &file.end {
        // A temp where the file ends (a create, an edited or copied move)
        // is named in that directory and renamed from that name at the
        // commit: an append-only or immutable one lets no name go, and the
        // temp (and any directory made) stayed. Refused before any temp
        // exists, as an edit in place is (`lock`).
        // A plain move renames the original there: an immutable directory
        // takes no name, an append-only one lets none it holds be replaced
        // (it failed inside the commit, rolled back).
        let dev = rfs::fstat(&d.t.dir).ok().map(|s| s.st_dev);
        // (A symlink is renamed, or made again there across mounts.)
        let temp =
            !file.steps.is_empty() || (!file.is_link() && locked.map(|l| l.st.st_dev) != dev);
        if let Some(flag) = crate::fs::meta::dir_flag(&d.t) {
            let plain = flag == InodeFlag::Immutable || d.replaces.is_some();
            if temp || plain {
                // The directory that has the flag, then the name in it.
                let path = d.t.path.ancestors().nth(d.missing.len());
                let path = path.unwrap_or(&d.t.path).to_owned();
                return Err(TxnError::of(file.last, FsError::DirFlag { path, flag }));
            }
        }
    }
    let orig = locked.and_then(|l| l.fd.as_ref());
    let crlf = match orig {
        Some(fd) if opts.eol == Eol::Preserve => {
            crate::fs::sink::dominant_is_crlf(fd).map_err(|e| TxnError::of(first_op(plan, f), e))?
        }
        _ => false,
    };
    let mut cur: Option<Temp<'a>> = None;
    // Ops that keep the content still check their expect_sha256.
    for (i, op) in txn.ops.iter().enumerate() {
        if plan.file_of[i] != f || file.steps.contains(&i) {
            continue;
        }
        let expect = match &op.kind {
            OpKind::Delete { expect_sha256, .. } | OpKind::Move { expect_sha256, .. } => {
                expect_sha256
            }
            _ => &None,
        };
        if let (Some(want), Some(fd)) = (expect, orig) {
            check_sha(fd, want, &op.path).map_err(|e| TxnError::of(i, e))?;
        }
    }
    for &i in &file.steps {
        let op = &txn.ops[i];
        let src = cur.as_ref().map(|t| t.file()).or(orig);
        let err = |e| TxnError::of(i, e);
        let (change, expect) = match &op.kind {
            OpKind::Edit {
                change,
                expect_sha256,
            } => (Some(change), *expect_sha256),
            OpKind::Move {
                change,
                expect_sha256,
                ..
            } => (change.as_ref(), *expect_sha256),
            _ => (None, None),
        };
        let next = match (&op.kind, change) {
            (_, Some(Change::Edits(edits))) => {
                let src = src.expect("an edit has a source");
                // A chained temp was just written: read it from the start.
                rfs::seek(src, rustix::fs::SeekFrom::Start(0)).map_err(|errno| {
                    err(FsError::Read {
                        path: Some(op.path.clone()),
                        errno,
                    })
                })?;
                let mut o = opts.clone();
                o.expect_sha256 = expect;
                o.dry_run = false;
                // A read of the source names it, not the move's destination.
                let source = |e| match (e, &file.orig) {
                    (FsError::Read { errno, .. }, Some((t, _, _))) => FsError::Read {
                        path: Some(t.path.clone()),
                        errno,
                    },
                    (e, _) => e,
                };
                let p = crate::fs::prepare(at, src, edits, &o, crlf, &mut reports[i])
                    .map_err(|e| err(source(e)))?;
                counts[i] = p.count;
                p.temp
            }
            (OpKind::Create { content, .. }, _) => {
                Some(write_temp(at, content.as_bytes(), false, &mut reports[i]).map_err(err)?)
            }
            (kind, change) => {
                let src = src.expect("a transform has a source");
                if let Some(want) = &expect {
                    check_sha(src, want, &op.path).map_err(err)?;
                }
                if let (OpKind::Insert { line, text }, false) = (kind, opts.diff) {
                    let fail = |r: super::op::OpRefusal| TxnError::fail(i, r.failure);
                    let t = super::insert::stream(
                        at,
                        src,
                        *line,
                        text,
                        &op.path,
                        crlf,
                        &mut reports[i],
                    );
                    if let Some(r) = reports[i].as_mut() {
                        r.lines = Some(vec![line + 1]);
                    }
                    cur = Some(t.map_err(fail)?);
                    continue;
                }
                let (t, count) = transformed(at, src, op, change, opts, crlf, &mut reports[i])
                    .map_err(|r| TxnError {
                        chunk: r.chunk,
                        ..TxnError::fail(i, r.failure)
                    })?;
                counts[i] = count;
                Some(t)
            }
        };
        cur = next;
    }
    // A move to another device: a copy, committed like a create, made here
    // before the commit window; another mount of the same device (a bind
    // mount) is found by the rename's EXDEV and copied then (`commit`).
    if cur.is_none() {
        if let (End::At(d), Some(fd)) = (&file.end, orig) {
            let src_dev = locked.map(|l| l.st.st_dev);
            let dst_dev = rfs::fstat(&d.t.dir).ok().map(|s| s.st_dev);
            if src_dev != dst_dev {
                let op = file.last;
                cur = Some(copy_temp(at, fd).map_err(|e| TxnError::of(op, e))?);
            }
        }
    }
    Ok(cur)
}

/// An insert (with `--diff`) or a transform of `src` into a new temp
/// beside `at`, and its count; its `--report` keys into `report`. A
/// transform with a one-pass form streams and holds nothing proportional
/// to the file when the pass proves its answer; otherwise (and for
/// `--diff`, which needs both texts) the old text is held whole and the
/// new one still goes to the temp as it is made.
#[allow(clippy::too_many_arguments)]
#[cfg_attr(as_edit_small, optimize(size))]
fn transformed<'a>(
    at: &'a Target,
    src: &OwnedFd,
    op: &super::op::Op,
    change: Option<&Change>,
    opts: &crate::request::EditOptions,
    crlf: bool,
    report: &mut Option<Report>,
) -> Result<(Temp<'a>, u64), super::op::OpRefusal> {
    let hash = report.is_some();
    // Nothing is written before the pass's first change (its mark).
    let mut w = TempWriter::deferred(at, crlf, hash);
    let mut out = match (change, opts.diff) {
        (Some(Change::Transform(t)), false) => {
            let source = &mut |each: &mut dyn FnMut(&[u8])| fed(src, &op.path, each);
            let out = &mut |b: &[u8]| match b.is_empty() {
                true => w.change(src),
                false => w.put(b),
            };
            let r = t.apply.stream(source, out);
            if r.is_some() {
                w.change(src); // proved, and never changed: the text itself
            }
            r
        }
        _ => None,
    };
    if out.is_none() {
        // Not proved: what was written is dropped with its temp.
        w = TempWriter::new(at, crlf, hash);
        out = passes(at, src, op, change, opts, &mut w, report)?;
    }
    if out.is_none() {
        let old = read_text(src, &op.path)?;
        let mut new = String::new();
        // One body, called through `dyn` only.
        let sink: &mut dyn FnMut(&str) =
            &mut |s| put_text(&mut w, opts.diff.then_some(&mut new), s);
        let t = match (&op.kind, change) {
            (OpKind::Insert { line, text }, _) => {
                let t = super::insert(&old, *line, text, &op.path)?;
                sink(&t);
                super::op::Transformed {
                    lines: vec![line + 1],
                    ..Default::default()
                }
            }
            (_, Some(Change::Transform(t))) => t.apply.apply(&old, sink)?,
            _ => unreachable!("steps change content"),
        };
        if let (Some(r), true) = (report.as_mut(), opts.diff) {
            let name = crate::diff::quote_name(at_name(at));
            let (d, cut) = crate::diff::unified(&old, &new, &name, 3, crate::diff::CAP);
            r.diff = Some(d);
            r.diff_truncated = cut.then_some(true);
        }
        out = Some(t);
    }
    let out = out.expect("transformed");
    if let Some(r) = report.as_mut() {
        r.lines = Some(out.lines);
        let grades = out.notes.into_iter().filter(|n| n.0 == "match");
        r.grades = Some(grades.map(|n| n.1).collect()).filter(|g: &Vec<_>| !g.is_empty());
    }
    Ok((w.finish(report).map_err(super::failure)?, out.count))
}

/// A transform's passes over the file (`TransformFn::passes`), in memory
/// bounded independently of its size, the diff (`--diff`) streamed;
/// `None` when it has none.
#[cfg_attr(as_edit_small, optimize(size))]
fn passes(
    at: &Target,
    src: &OwnedFd,
    op: &super::op::Op,
    change: Option<&Change>,
    opts: &crate::request::EditOptions,
    w: &mut TempWriter<'_>,
    report: &mut Option<Report>,
) -> Result<Option<super::op::Transformed>, super::op::OpRefusal> {
    let Some(Change::Transform(t)) = change else {
        return Ok(None);
    };
    let mut failed = None;
    let source = &mut |each: &mut dyn FnMut(&[u8])| match read_norm(src, &op.path, each) {
        Ok(()) => true,
        Err(f) => {
            failed.get_or_insert(f);
            false
        }
    };
    let want = opts.diff && report.is_some();
    let name = crate::diff::quote_name(at_name(at));
    let mut diff = want.then(|| crate::diff::Builder::new(&name, crate::diff::CAP));
    let r = t.apply.passes(source, &mut |b| w.put(b), diff.as_mut());
    if let Some(f) = failed {
        return Err(f.into());
    }
    let Some(r) = r else { return Ok(None) };
    let r = r?;
    if let (Some(rep), Some(d)) = (report.as_mut(), diff) {
        let (d, cut) = d.finish();
        rep.diff = Some(d);
        rep.diff_truncated = cut.then_some(true);
    }
    Ok(Some(r))
}

fn at_name(t: &Target) -> &[u8] {
    use std::os::unix::ffi::OsStrExt;
    t.path.as_os_str().as_bytes()
}

#[cfg_attr(as_edit_small, optimize(size))]
fn check_sha(fd: &OwnedFd, want: &[u8; 32], path: &std::path::Path) -> Result<(), FsError> {
    let mut h = Sha256::new();
    read_each(fd, &mut |b| h.update(b)).map_err(|errno| FsError::Read {
        path: Some(path.to_owned()),
        errno,
    })?;
    let got: [u8; 32] = h.finalize().into();
    if got != *want {
        let what = ConflictWhat::Sha256(got);
        return Err(FsError::Conflict {
            path: path.to_owned(),
            what,
        });
    }
    Ok(())
}

/// Whether [`read_norm`] fed the whole text (out of the closures that
/// call it, each of which has two bodies).
#[inline(never)]
#[cfg_attr(as_edit_small, optimize(size))]
fn fed(fd: &OwnedFd, path: &std::path::Path, each: &mut dyn FnMut(&[u8])) -> bool {
    read_norm(fd, path, each).is_ok()
}

/// `s` into the temp, and into `keep` (`--diff`).
#[inline(never)]
#[cfg_attr(as_edit_small, optimize(size))]
fn put_text(w: &mut TempWriter<'_>, keep: Option<&mut String>, s: &str) {
    if let Some(k) = keep {
        k.push_str(s);
    }
    w.put(s.as_bytes());
}

/// The whole text, as [`read_norm`] gives it, in one buffer of the file's
/// size (not the raw bytes and a normalized copy both at once).
#[cfg_attr(as_edit_small, optimize(size))]
fn read_text(fd: &OwnedFd, path: &std::path::Path) -> Result<String, Failure> {
    let mut text = Vec::with_capacity(rfs::fstat(fd).map_or(0, |s| s.st_size as usize));
    read_norm(fd, path, &mut |o| text.extend_from_slice(o))?;
    Ok(String::from_utf8(text).expect("validated"))
}

/// The file copied as it is into a temp beside `at` (a move across file
/// systems).
#[cfg_attr(as_edit_small, optimize(size))]
pub(super) fn copy_temp<'a>(at: &'a Target, fd: &OwnedFd) -> Result<Temp<'a>, FsError> {
    let failed = |step, errno| FsError::Write {
        path: at.path.clone(),
        step,
        errno,
    };
    let temp = Temp::create(at).map_err(|e| failed(WriteStep::CreateTemp, e))?;
    let mut r = Ok(());
    read_each(fd, &mut |b| {
        if r.is_ok() {
            r = write_all(temp.file(), b);
        }
    })
    .map_err(|errno| FsError::Read { path: None, errno })?;
    r.map_err(|e| failed(WriteStep::WriteTemp, e))?;
    let _ = rfs::fchmod(temp.file(), Mode::from_raw_mode(0o600));
    Ok(temp)
}
