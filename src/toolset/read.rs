//! The `read` tool: a file's text, lines of it (`view_range`), or an image
//! or PDF as a base64 content block, with the reference's limits and texts
//! (module docs of [`crate::toolset`]).

use std::fs::File;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use as_edit_find::block::Blocks;

use super::input::Int;
use super::path::{reason, resolve};

/// Text over this many bytes needs a `view_range`, which is capped at it.
pub const MAX_READ_BYTES: u64 = 110_000;
/// An image's cap: 5 MiB of base64, as raw bytes (`(b64 // 4) * 3`).
pub const MAX_IMAGE_BYTES: u64 = (5 * 1024 * 1024 / 4) * 3;
/// A PDF's cap.
pub const MAX_PDF_BYTES: u64 = 20 * 1024 * 1024;
const CHUNK: usize = 64 * 1024;

/// The media type of an image or PDF by the resolved name's suffix.
fn media_type(target: &Path) -> Option<&'static str> {
    // Python's `suffix`: from the last `.` that is neither the first nor
    // the last character of the name.
    let name = target.file_name()?.to_str()?;
    let dot = name.rfind('.').filter(|&i| i > 0 && i < name.len() - 1)?;
    Some(match name[dot..].to_lowercase().as_str() {
        ".png" => "image/png",
        ".jpg" | ".jpeg" => "image/jpeg",
        ".gif" => "image/gif",
        ".webp" => "image/webp",
        ".pdf" => "application/pdf",
        _ => return None,
    })
}

/// What a read returns.
pub enum Reply {
    /// The file's text (or lines of it).
    Text(String),
    /// An image or PDF: the JSON list of the one content block.
    Blocks(String),
}

/// The tool's answer, or the reference's refusal.
#[cfg_attr(as_edit_small, optimize(size))]
pub fn read(cwd: &Path, fp: &str, range: Option<Vec<Int>>) -> Result<Reply, String> {
    let root = super::root(cwd);
    let target = resolve(&root, fp).map_err(|r| format!("read: {r}"))?;
    // `if view_range and len(view_range) != 2`: an empty list is no range.
    let range = range.filter(|r| !r.is_empty());
    if range.as_ref().is_some_and(|r| r.len() != 2) {
        return Err("read: view_range must be [start_line, end_line]".into());
    }
    let fs_err = |e: std::io::Error| format!("read: {fp}: {}", reason(&e));
    // One descriptor for everything read (`crate::fs::regular`): a FIFO
    // is never waited for, not even one swapped in after the check.
    // A file it may not open is refused where the reference's `open`
    // fails: after the checks of its size and kind.
    let (f, size) = open(&target).map_err(|e| match e {
        Err(e) => fs_err(e),
        Ok(()) => format!("read: {fp}: not a regular file"),
    })?;
    if let Some(media) = media_type(&target) {
        if range.is_some() {
            return Err("read: view_range is not supported for image/PDF files".into());
        }
        let limit = if media == "application/pdf" {
            MAX_PDF_BYTES
        } else {
            MAX_IMAGE_BYTES
        };
        if size > limit {
            return Err(format!(
                "read: {fp} is {size} bytes, exceeds {limit}-byte limit for image/PDF files."
            ));
        }
        let mut data = Vec::new();
        f.map_err(&fs_err)?
            .take(limit + 1)
            .read_to_end(&mut data)
            .map_err(fs_err)?;
        let kind = if media == "application/pdf" {
            "document"
        } else {
            "image"
        };
        return Ok(Reply::Blocks(format!(
            r#"[{{"type":"{kind}","source":{{"type":"base64","media_type":"{media}","data":"{}"}}}}]"#,
            b64(&data)
        )));
    }
    let not_text = || {
        format!("read: {fp}: not valid UTF-8 text (binary files are only supported for image/PDF extensions)")
    };
    if size > MAX_READ_BYTES {
        let Some(r) = range else {
            return Err(format!(
                "read: {fp} is {size} bytes, exceeds {MAX_READ_BYTES}-byte limit. \
                 Use the view_range parameter to read specific line ranges, e.g. view_range: [1, 500]."
            ));
        };
        let f = f.map_err(&fs_err)?;
        let bytes = lines_capped(f, fp, &r[0], &r[1]).map_err(|e| e.unwrap_or_else(&fs_err))?;
        return String::from_utf8(bytes)
            .map(Reply::Text)
            .map_err(|_| not_text());
    }
    let mut data = Vec::with_capacity(size as usize);
    f.map_err(&fs_err)?
        .take(MAX_READ_BYTES + 1)
        .read_to_end(&mut data)
        .map_err(fs_err)?;
    let text = String::from_utf8(data).map_err(|_| not_text())?;
    let Some(r) = range else {
        return Ok(Reply::Text(text));
    };
    let lines: Vec<&str> = text.split('\n').collect();
    let (start, end) = bounds(&r[0], &r[1], lines.len() as i128);
    Ok(Reply::Text(if start < end {
        lines[start..end].join("\n")
    } else {
        String::new()
    }))
}

/// The resolved `target` open for reading ([`crate::fs::regular`]), or
/// why the open failed, and its size; `Err(Ok(()))`: not a regular file.
type Opened = (Result<File, std::io::Error>, u64);

fn open(target: &Path) -> Result<Opened, Result<(), std::io::Error>> {
    use crate::fs::regular::{open_regular, Unopened};
    let name = std::ffi::CString::new(target.as_os_str().as_bytes())
        .map_err(|_| Err(std::io::Error::from_raw_os_error(libc::EINVAL)))?;
    // `target` is resolved (its last name no symlink): one swapped in
    // since is not followed (to a device it would open it).
    match open_regular(rustix::fs::CWD, &name, false) {
        Ok((fd, st)) => Ok((Ok(File::from(fd)), st.st_size as u64)),
        Err(Unopened::Open(e, size)) => Ok((Err(e.into()), size)),
        Err(Unopened::NotRegular(_)) => Err(Ok(())),
        Err(Unopened::Stat(e) | Unopened::Fstat(e)) => Err(Err(e.into())),
    }
}

/// `[max(0, S-1), E or the end)` as indexes into `n` items.
fn bounds(s: &Int, e: &Int, n: i128) -> (usize, usize) {
    let start = (s.value.saturating_sub(1)).clamp(0, n);
    let end = if e.value > 0 { e.value.min(n) } else { n };
    (start as usize, end as usize)
}

/// Lines `[S, E]` of a large file (`read_line_range`): read in 64 KiB
/// blocks ([`as_edit_find::block`]) up to line E only, the selected bytes capped at
/// [`MAX_READ_BYTES`]: `Err(Ok(text))` is the reference's refusal.
fn lines_capped(
    mut f: File,
    fp: &str,
    s: &Int,
    e: &Int,
) -> Result<Vec<u8>, Result<String, std::io::Error>> {
    let start = s.value.saturating_sub(1).max(0);
    let end = if e.value > 0 { e.value } else { i128::MAX };
    let mut out = Vec::new();
    if end <= start {
        return Ok(out);
    }
    let over = || {
        Ok(if end - start == 1 {
            format!(
                "read: line {} of {fp} alone exceeds {MAX_READ_BYTES}-byte limit. \
                 The read tool cannot return part of a line, so view_range cannot narrow this further.",
                start + 1
            )
        } else {
            format!(
                "read: view_range [{}, {}] of {fp} exceeds {MAX_READ_BYTES}-byte limit. \
                 Narrow the view_range to read a smaller portion.",
                s.text, e.text
            )
        })
    };
    // Each 64 KiB read handed back at once (cap 0: its whole lines,
    // then its unfinished line, cut), so memory is the read and `out`.
    let mut buf = Vec::new();
    let mut blocks = Blocks::new(&mut f, &mut buf, CHUNK).cap(0);
    while let Some(b) = blocks.next_block().map_err(Err)? {
        // Lines before this block's first: its line ends so far.
        let mut line = i128::from(b.first_line) - 1;
        let mut chunk = b.bytes;
        while !chunk.is_empty() && line < end {
            let nl = memchr::memchr(b'\n', chunk);
            let piece = &chunk[..nl.unwrap_or(chunk.len())];
            if line >= start {
                out.extend_from_slice(piece);
                if nl.is_some() && line + 1 < end {
                    out.push(b'\n');
                }
                if out.len() as u64 > MAX_READ_BYTES {
                    return Err(over());
                }
            }
            let Some(nl) = nl else { break };
            line += 1;
            chunk = &chunk[nl + 1..];
        }
        if line >= end {
            return Ok(out);
        }
    }
    Ok(out)
}

/// Standard base64 with padding (the helper links no base64 encoder).
pub fn b64(data: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for c in data.chunks(3) {
        let n = (c[0] as u32) << 16
            | (*c.get(1).unwrap_or(&0) as u32) << 8
            | *c.get(2).unwrap_or(&0) as u32;
        for i in 0..4 {
            if i <= c.len() {
                out.push(A[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_the_crate() {
        use base64::Engine;
        for n in 0..40u8 {
            let data: Vec<u8> = (0..n).map(|i| i.wrapping_mul(97).wrapping_add(n)).collect();
            assert_eq!(
                b64(&data),
                base64::engine::general_purpose::STANDARD.encode(&data)
            );
        }
    }

    #[test]
    fn suffixes_as_python_reads_them() {
        assert_eq!(media_type(Path::new("/a/x.PNG")), Some("image/png"));
        assert_eq!(media_type(Path::new("/a/.png")), None);
        assert_eq!(
            media_type(Path::new("/a/x.tar.pdf")),
            Some("application/pdf")
        );
        assert_eq!(media_type(Path::new("/a/x.")), None);
    }
}
