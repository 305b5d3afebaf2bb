//! Installing the helper into a sandbox over exec alone.
//!
//! For a sandbox with nothing but a POSIX `sh`: the bytes travel as `printf`
//! format strings with octal escapes (printf is a builtin; no base64 or
//! coreutils needed), appended to a temp beside the destination, then
//! `chmod 755` and `mv` into place, then `DEST --version` verifies. When a
//! probe finds `base64 -d`, base64 chunks take about a third as many round
//! trips. Every command stays within the command bound.

use std::ffi::OsString;

use base64::Engine as _;

use super::command::{join_quoted, sh_quote};

/// How the bytes travel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    /// `printf '\177ELF…' >> TMP`: shell builtins only.
    Printf,
    /// `printf '%s' 'f0VMRg…' | base64 -d >> TMP`: needs `base64 -d`.
    Base64,
}

/// The command that tells whether `base64 -d` works: prints `as-edit` if so.
/// No redirections: minimal images may have no /dev/null.
pub const BASE64_PROBE: &[u8] = b"printf '%s' 'YXMtZWRpdA==' | base64 -d";
pub const BASE64_PROBE_ANSWER: &[u8] = b"as-edit";

/// The ordered commands that install `binary` at `dest`. Each must exit 0;
/// the last one prints the installed helper's `--version`.
pub fn install_commands(
    binary: &[u8],
    dest: &str,
    encoding: Encoding,
    limit: usize,
    nonce: &str,
) -> Vec<Vec<u8>> {
    let tmp = format!("{dest}.part-{nonce}");
    let qtmp = sh_quote(tmp.as_bytes());
    let mut cmds = Vec::new();
    let mut first = b"umask 022 && : > ".to_vec();
    first.extend_from_slice(&qtmp);
    cmds.push(first);
    // Room for the fixed parts of one append command.
    let overhead = 64 + qtmp.len();
    assert!(limit > overhead + 64, "command limit too small to install");
    let budget = limit - overhead;
    match encoding {
        Encoding::Printf => {
            let mut chunk = Vec::with_capacity(budget);
            for &b in binary {
                let piece = printf_escape(b);
                if chunk.len() + piece.len() > budget {
                    cmds.push(printf_append(&chunk, &qtmp));
                    chunk.clear();
                }
                chunk.extend_from_slice(&piece);
            }
            if !chunk.is_empty() {
                cmds.push(printf_append(&chunk, &qtmp));
            }
        }
        Encoding::Base64 => {
            // Whole 3-byte groups per command, so each chunk decodes alone.
            let per = budget / 4 * 3;
            for part in binary.chunks(per.max(3)) {
                let mut c = b"printf '%s' '".to_vec();
                c.extend_from_slice(
                    base64::engine::general_purpose::STANDARD
                        .encode(part)
                        .as_bytes(),
                );
                c.extend_from_slice(b"' | base64 -d >> ");
                c.extend_from_slice(&qtmp);
                cmds.push(c);
            }
        }
    }
    let mut fin = b"chmod 755 ".to_vec();
    fin.extend_from_slice(&qtmp);
    fin.extend_from_slice(b" && mv -f ");
    fin.extend_from_slice(&qtmp);
    fin.push(b' ');
    fin.extend_from_slice(&sh_quote(dest.as_bytes()));
    cmds.push(fin);
    cmds.push(version_command(dest));
    cmds
}

/// `'DEST' --version`.
pub fn version_command(dest: &str) -> Vec<u8> {
    join_quoted(&[OsString::from(dest), OsString::from("--version")])
}

/// Removes a half-written temp after a failed install (best-effort).
pub fn cleanup_command(dest: &str, nonce: &str) -> Vec<u8> {
    let mut c = b"rm -f ".to_vec();
    c.extend_from_slice(&sh_quote(format!("{dest}.part-{nonce}").as_bytes()));
    c
}

/// Does `--version` output name a working helper?
pub fn is_helper_version(output: &[u8]) -> bool {
    let s = String::from_utf8_lossy(output);
    s.lines().any(|l| {
        l.starts_with("as-edit ")
            && l.contains(&format!("(protocol {};", crate::protocol::PROTOCOL_VERSION))
    })
}

/// One byte inside a single-quoted printf format: safe ASCII stays literal;
/// `'`, `\`, `%`, `-` and everything else become three-digit octal escapes
/// (three digits, so a following literal digit cannot extend the escape).
/// `-` is escaped because a chunk starting with it reads as an option to
/// dash's printf, and `printf --` is not portable.
fn printf_escape(b: u8) -> Vec<u8> {
    if b.is_ascii_alphanumeric() || b"_.,:/+=@^~ ".contains(&b) {
        vec![b]
    } else {
        format!("\\{b:03o}").into_bytes()
    }
}

fn printf_append(chunk: &[u8], qtmp: &[u8]) -> Vec<u8> {
    let mut c = b"printf '".to_vec();
    c.extend_from_slice(chunk);
    c.extend_from_slice(b"' >> ");
    c.extend_from_slice(qtmp);
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_command_is_within_the_bound() {
        let bin: Vec<u8> = (0..=255u8).cycle().take(300_000).collect();
        for enc in [Encoding::Printf, Encoding::Base64] {
            let cmds = install_commands(&bin, "/opt/as-edit", enc, 16 * 1024, "n1");
            assert!(cmds.iter().all(|c| c.len() <= 16 * 1024), "{enc:?}");
            assert_eq!(cmds.last().unwrap(), b"'/opt/as-edit' '--version'");
        }
        let p = install_commands(&bin, "/d", Encoding::Printf, 112 * 1024, "n").len();
        let b = install_commands(&bin, "/d", Encoding::Base64, 112 * 1024, "n").len();
        // Data commands only (3 are fixed): ~3.2 vs 1.33 characters a byte.
        assert!(
            (p - 3) >= 2 * (b - 3),
            "base64 takes far fewer round trips: {b} vs {p}"
        );
    }

    #[test]
    fn escapes() {
        assert_eq!(printf_escape(b'%'), b"\\045");
        assert_eq!(printf_escape(b'\''), b"\\047");
        assert_eq!(printf_escape(0), b"\\000");
        assert_eq!(printf_escape(b'7'), b"7");
        assert_eq!(printf_escape(b'-'), b"\\055");
    }
}
