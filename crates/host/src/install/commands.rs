//! The data commands of an install through a shell: the transfer with the
//! fewest commands for the tools the probe found, each command within the
//! limit, the last one verifying the temp and moving it into place; and the
//! cleanup after a failed step.

use std::io::Write as _;

use base64::Engine as _;

use super::printf::printf_chunks;
use super::{version_command, Encoding, Gunzip, Tools, Transfer};
use crate::command::sh_quote;

/// The ordered commands that install `binary` at `dest` with what `tools`
/// offers, choosing the transfer with the fewest commands (then the fewest
/// bytes). Each command must exit 0; the last one finishes the install and
/// prints the installed helper's `--version`.
pub fn install_commands(
    binary: &[u8],
    dest: &str,
    tools: Tools,
    limit: usize,
    nonce: &str,
) -> (Transfer, Vec<Vec<u8>>) {
    let mut options = vec![Transfer {
        encoding: Encoding::Printf,
        gunzip: None,
    }];
    if tools.base64 {
        options.push(Transfer {
            encoding: Encoding::Base64,
            gunzip: None,
        });
    }
    let compressed = tools.gunzip.map(|_| gzip(binary));
    if let Some(g) = tools.gunzip {
        options.push(Transfer {
            encoding: Encoding::Printf,
            gunzip: Some(g),
        });
        if tools.base64 {
            options.push(Transfer {
                encoding: Encoding::Base64,
                gunzip: Some(g),
            });
        }
    }
    options
        .into_iter()
        .map(|t| {
            let payload = match (t.gunzip, &compressed) {
                (Some(_), Some(c)) => c.as_slice(),
                _ => binary,
            };
            (t, transfer_commands(payload, dest, t, limit, nonce))
        })
        .min_by_key(|(_, cmds)| (cmds.len(), cmds.iter().map(Vec::len).sum::<usize>()))
        .expect("printf is always an option")
}

/// `payload` (the binary, or its gzip stream) sent with `t`.
fn transfer_commands(
    payload: &[u8],
    dest: &str,
    t: Transfer,
    limit: usize,
    nonce: &str,
) -> Vec<Vec<u8>> {
    let part = sh_quote(part_path(dest, nonce).as_bytes());
    let gz = sh_quote(format!("{}.gz", part_path(dest, nonce)).as_bytes());
    // Where the data commands write: the compressed stream gets its own temp.
    let target = if t.gunzip.is_some() { &gz } else { &part };
    let mut finish = Vec::new();
    if let Some(g) = t.gunzip {
        finish.extend_from_slice(match g {
            Gunzip::Gzip => b" && gzip -dc < ".as_slice(),
            Gunzip::Zcat => b" && zcat < ".as_slice(),
        });
        finish.extend_from_slice(&[gz.as_slice(), b" > ", &part, b" && rm -f ", &gz].concat());
    }
    // The new helper answers `--version` from its temp before it replaces
    // anything: a payload that arrived damaged (a decompressor exiting 0
    // with wrong bytes, a truncated upload) leaves a working helper at DEST
    // in place. The pattern is `is_helper_version`'s test, in sh.
    finish.extend_from_slice(&[b" && chmod 755 ".as_slice(), &part, b" && v=$("].concat());
    finish.extend_from_slice(&version_command(&part_path(dest, nonce)));
    write!(
        finish,
        ") && case \"$v\" in \"as-edit \"*\"(protocol {};\"*) ;; \
         *) printf 'not the helper: %s\\n' \"$v\"; false ;; esac && mv -f ",
        as_edit_wire::protocol::PROTOCOL_VERSION
    )
    .expect("writing to a Vec");
    finish.extend_from_slice(&part);
    finish.push(b' ');
    finish.extend_from_slice(&sh_quote(dest.as_bytes()));
    finish.extend_from_slice(b" && ");
    finish.extend_from_slice(&version_command(dest));
    let (open, close): (&[u8], &[u8]) = match t.encoding {
        Encoding::Printf => (b"printf '", b"'"),
        Encoding::Base64 => (b"printf '%s' '", b"' | base64 -d"),
    };
    // The longest fixed part a command can carry: the last one's.
    let overhead = UMASK.len() + open.len() + close.len() + 4 + target.len() + finish.len();
    assert!(limit >= overhead + 64, "command limit too small to install");
    let room = limit - overhead;
    let bodies: Vec<Vec<u8>> = match t.encoding {
        Encoding::Printf => printf_chunks(payload, room),
        // Whole 3-byte groups per command, so each chunk decodes alone.
        Encoding::Base64 => payload
            .chunks(room / 4 * 3)
            .map(|p| {
                base64::engine::general_purpose::STANDARD
                    .encode(p)
                    .into_bytes()
            })
            .collect(),
    };
    let bodies = if bodies.is_empty() {
        vec![Vec::new()]
    } else {
        bodies
    };
    let n = bodies.len();
    bodies
        .into_iter()
        .enumerate()
        .map(|(i, body)| {
            let mut c = Vec::with_capacity(limit);
            // The first creates the temp; the last may create the
            // decompressed one: both under a known umask.
            if i == 0 || (i == n - 1 && t.gunzip.is_some()) {
                c.extend_from_slice(UMASK);
            }
            c.extend_from_slice(open);
            c.extend_from_slice(&body);
            c.extend_from_slice(close);
            c.extend_from_slice(if i == 0 { b" > " } else { b" >> " });
            c.extend_from_slice(target);
            if i == n - 1 {
                c.extend_from_slice(&finish);
            }
            debug_assert!(c.len() <= limit);
            c
        })
        .collect()
}

const UMASK: &[u8] = b"umask 022 && ";

fn part_path(dest: &str, nonce: &str) -> String {
    format!("{dest}.part-{nonce}")
}

/// The host side compresses; the sandbox only decompresses. Best level: the
/// bytes cross a slow exec API, the compression runs once on the host.
pub(super) fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    e.write_all(bytes).expect("writing to a Vec");
    e.finish().expect("writing to a Vec")
}

/// Removes the temps of a failed install (best-effort).
pub fn cleanup_command(dest: &str, nonce: &str) -> Vec<u8> {
    let part = part_path(dest, nonce);
    let mut c = b"rm -f ".to_vec();
    c.extend_from_slice(&sh_quote(part.as_bytes()));
    c.push(b' ');
    c.extend_from_slice(&sh_quote(format!("{part}.gz").as_bytes()));
    c
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::install::tests::all;

    #[test]
    fn every_command_is_within_the_bound_and_ascii() {
        let bin: Vec<u8> = (0..=255u8).cycle().take(300_000).collect();
        for tools in [
            all(false, None),
            all(true, None),
            all(false, Some(Gunzip::Gzip)),
            all(true, Some(Gunzip::Zcat)),
        ] {
            let (_, cmds) = install_commands(&bin, "/opt/as-edit", tools, 16 * 1024, "n1");
            assert!(cmds.iter().all(|c| c.len() <= 16 * 1024), "{tools:?}");
            assert!(
                cmds.iter().flatten().all(|&b| (b' '..=b'~').contains(&b)),
                "{tools:?}"
            );
            assert!(cmds[0].starts_with(b"umask 022 && printf '"), "{tools:?}");
            assert!(cmds
                .last()
                .unwrap()
                .ends_with(b" && '/opt/as-edit' '--version'"));
        }
    }

    #[test]
    fn the_cheapest_transfer_is_chosen() {
        // Compressible: gzip wins; base64 beats printf on binary bytes.
        let bin: Vec<u8> = (0..=255u8).cycle().take(300_000).collect();
        let pick = |tools| install_commands(&bin, "/d", tools, 112 * 1024, "n").0;
        assert_eq!(pick(all(false, None)).encoding, Encoding::Printf);
        assert_eq!(
            pick(all(true, None)),
            Transfer {
                encoding: Encoding::Base64,
                gunzip: None
            }
        );
        assert_eq!(
            pick(all(true, Some(Gunzip::Gzip))).gunzip,
            Some(Gunzip::Gzip)
        );
        // Printable text is sent raw by printf: cheaper than base64.
        let text = b"plain text, no escapes needed ".repeat(10_000);
        let (t, cmds) = install_commands(&text, "/d", all(true, None), 112 * 1024, "n");
        assert_eq!(t.encoding, Encoding::Printf);
        assert!(cmds.iter().map(Vec::len).sum::<usize>() < text.len() + 1000);
    }

    #[test]
    fn the_temp_answers_version_before_it_replaces_anything() {
        let (_, cmds) = install_commands(b"x", "/d", all(true, Some(Gunzip::Zcat)), 4096, "n");
        let last = String::from_utf8(cmds.last().unwrap().clone()).unwrap();
        let check = last.find("v=$('/d.part-n' '--version')").unwrap();
        let mv = last.find("mv -f '/d.part-n' '/d'").unwrap();
        assert!(check < mv, "{last}");
        assert!(
            last.contains("\"as-edit \"*\"(protocol 4;\"*) ;;"),
            "{last}"
        );
        // A temp that answers anything else fails the step before the mv.
        let sh = |v: &str| {
            let snippet = &last[last.find("case").unwrap()..mv];
            std::process::Command::new("sh")
                .arg("-c")
                .arg(format!("v='{v}'; {snippet} echo moved"))
                .output()
                .unwrap()
        };
        let good = sh("as-edit 0.1.0 (protocol 4; x86_64-unknown-linux-musl)");
        assert_eq!(good.stdout, b"moved\n");
        let old = sh("as-edit 0.0.9 (protocol 1; x)");
        assert_eq!(
            (old.status.code(), old.stdout),
            (
                Some(1),
                b"not the helper: as-edit 0.0.9 (protocol 1; x)\n".to_vec()
            )
        );
        let empty = sh("");
        assert_eq!(empty.stdout, b"not the helper: \n");
    }
}
