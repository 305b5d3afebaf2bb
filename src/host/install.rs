#![doc = include_str!("install.md")]

use std::ffi::OsString;
use std::io::Write as _;
use std::path::Path;

use base64::Engine as _;

use super::command::{join_quoted, sh_quote};
use super::{EditError, Sandbox};

/// How the bytes travel inside the commands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    /// `printf '\177ELF…' >> TMP`: shell builtins only.
    Printf,
    /// `printf '%s' 'f0VMRg…' | base64 -d >> TMP`: needs `base64 -d`.
    Base64,
}

/// A decompressor the sandbox has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gunzip {
    /// `gzip -dc`
    Gzip,
    /// `zcat` (busybox can have it without a `gzip` applet)
    Zcat,
}

/// What the sandbox offers for an install, as the probe found it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tools {
    /// `base64 -d` works.
    pub base64: bool,
    /// A gzip decompressor that works, if any.
    pub gunzip: Option<Gunzip>,
}

/// The transfer [`install_commands`] chose.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transfer {
    /// How the bytes are written into the commands.
    pub encoding: Encoding,
    /// Some: the bytes sent are a gzip stream of the binary.
    pub gunzip: Option<Gunzip>,
}

const PROBE_BASE64: &str = "as-edit-probe: base64";
const PROBE_GZIP: &str = "as-edit-probe: gzip";
const PROBE_ZCAT: &str = "as-edit-probe: zcat";

/// Makes sure a working helper is at `dest` in `sandbox`, installing
/// `binary` there if not, with commands of at most `limit` bytes. Returns
/// true when it installed. Through a shell: one probe ([`probe_command`]),
/// then the commands of [`install_commands`] (the last one verifies), and
/// [`cleanup_command`] after a failed step. Without a shell: upload, then
/// `chmod 755` and `DEST --version` through exec.
pub fn run<S: Sandbox + ?Sized>(
    sandbox: &mut S,
    dest: &str,
    binary: &[u8],
    limit: usize,
) -> Result<bool, EditError> {
    let shell = sandbox.has_shell();
    let probe_cmd = if shell {
        probe_command(dest)
    } else {
        version_command(dest)
    };
    let probe = sandbox.exec(&probe_cmd, None);
    if matches!(&probe, Ok(o) if o.exit_code == Some(0) && is_helper_version(&o.output)) {
        return Ok(false);
    }
    if shell {
        // Nothing is written before the probe has answered and shown the
        // tools every install and its cleanup need.
        let out = probe.map_err(EditError::Backend)?.output;
        let missing = missing_basics(&out);
        if !missing.is_empty() {
            return Err(EditError::Install(format!(
                "the sandbox has no {}: cannot install over exec (nothing was written)",
                missing.join(", ")
            )));
        }
        let tools = parse_probe(&out);
        let nonce = crate::hex::random();
        let (_, cmds) = install_commands(binary, dest, tools, limit, &nonce);
        let last = cmds.len() - 1;
        for (i, c) in cmds.iter().enumerate() {
            let failure = match sandbox.exec(c, None) {
                Ok(o) if o.exit_code == Some(0) && (i < last || is_helper_version(&o.output)) => {
                    continue
                }
                // A backend failure (a timeout, a lost connection) leaves
                // a temp just as a failed command does.
                Err(e) => EditError::Backend(e),
                Ok(o) => EditError::Install(format!(
                    "{} exited {:?}: {}",
                    if i < last {
                        "a step"
                    } else {
                        "the last step (verify, move into place, run --version)"
                    },
                    o.exit_code,
                    String::from_utf8_lossy(&o.output).trim()
                )),
            };
            // After the last step's mv the temps are gone already;
            // removing them again is harmless.
            let _ = sandbox.exec(&cleanup_command(dest, &nonce), None);
            return Err(failure);
        }
    } else {
        // No shell (argv exec): upload the bytes, then chmod through exec.
        sandbox
            .upload(Path::new(dest), binary)
            .map_err(EditError::Backend)?;
        let chmod = join_quoted(&["chmod".into(), "755".into(), dest.to_owned().into()]);
        let o = sandbox.exec(&chmod, None).map_err(EditError::Backend)?;
        if o.exit_code != Some(0) {
            return Err(EditError::Install(format!(
                "chmod exited {:?}: {}",
                o.exit_code,
                String::from_utf8_lossy(&o.output).trim()
            )));
        }
        verify(sandbox, &version_command(dest))?;
    }
    Ok(true)
}

fn verify<S: Sandbox + ?Sized>(sandbox: &mut S, cmd: &[u8]) -> Result<(), EditError> {
    let o = sandbox.exec(cmd, None).map_err(EditError::Backend)?;
    if o.exit_code == Some(0) && is_helper_version(&o.output) {
        Ok(())
    } else {
        Err(EditError::Install(format!(
            "the installed helper does not run (exit {:?}): {}",
            o.exit_code,
            String::from_utf8_lossy(&o.output).trim()
        )))
    }
}

/// The first command of an install through a shell: `DEST --version`, then
/// the tool probes, exiting with the version check's status (so the output
/// and exit code answer "is a working helper there?" as
/// [`version_command`] alone would). No redirections: minimal images may
/// have no /dev/null. The probe markers travel encoded, so an error message
/// echoing the command cannot fake them.
pub fn probe_command(dest: &str) -> Vec<u8> {
    let mut c = version_command(dest);
    c.extend_from_slice(b"; s=$?; printf '%s' '");
    c.extend_from_slice(
        base64::engine::general_purpose::STANDARD
            .encode(PROBE_BASE64)
            .as_bytes(),
    );
    c.extend_from_slice(b"' | base64 -d; echo; printf '");
    printf_format(&gzip(PROBE_GZIP.as_bytes()), &mut c);
    c.extend_from_slice(b"' | gzip -dc; echo; printf '");
    printf_format(&gzip(PROBE_ZCAT.as_bytes()), &mut c);
    c.extend_from_slice(b"' | zcat; echo; ");
    // `command -v` is what the shell itself would run (busybox sh finds its
    // applets without links); `\72` keeps the marker out of the command's
    // text.
    c.extend_from_slice(b"for t in ");
    c.extend_from_slice(BASICS.join(" ").as_bytes());
    c.extend_from_slice(
        b"; do command -v $t && printf 'as-edit-probe\\72 has %s\\n' $t; done; exit $s",
    );
    c
}

/// What the install commands and their cleanup run besides shell builtins
/// and the transfer's decoder.
const BASICS: [&str; 3] = ["chmod", "mv", "rm"];

/// Which of `chmod`, `mv`, `rm` the output of [`probe_command`] did not
/// find: without them an install could not finish or clean up after itself.
pub fn missing_basics(output: &[u8]) -> Vec<&'static str> {
    let s = String::from_utf8_lossy(output);
    BASICS
        .into_iter()
        .filter(|t| {
            let marker = format!("as-edit-probe: has {t}");
            !s.lines().any(|l| l.trim_end() == marker)
        })
        .collect()
}

/// Reads the tool probes' answers from the output of [`probe_command`].
pub fn parse_probe(output: &[u8]) -> Tools {
    let s = String::from_utf8_lossy(output);
    let has = |marker: &str| s.lines().any(|l| l.trim_end() == marker);
    Tools {
        base64: has(PROBE_BASE64),
        gunzip: if has(PROBE_GZIP) {
            Some(Gunzip::Gzip)
        } else if has(PROBE_ZCAT) {
            Some(Gunzip::Zcat)
        } else {
            None
        },
    }
}

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
        crate::protocol::PROTOCOL_VERSION
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
fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    e.write_all(bytes).expect("writing to a Vec");
    e.finish().expect("writing to a Vec")
}

/// `'DEST' --version`.
pub fn version_command(dest: &str) -> Vec<u8> {
    join_quoted(&[OsString::from(dest), OsString::from("--version")])
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

/// Does `--version` output name a working helper?
pub fn is_helper_version(output: &[u8]) -> bool {
    let s = String::from_utf8_lossy(output);
    s.lines().any(|l| {
        l.starts_with("as-edit ")
            && l.contains(&format!("(protocol {};", crate::protocol::PROTOCOL_VERSION))
    })
}

/// `bytes` as the inside of a single-quoted printf format that prints them.
fn printf_format(bytes: &[u8], out: &mut Vec<u8>) {
    for (i, &b) in bytes.iter().enumerate() {
        printf_piece(b, bytes.get(i + 1).copied(), i == 0, out);
    }
}

/// Splits `bytes` into printf formats of at most `room` characters each.
fn printf_chunks(bytes: &[u8], room: usize) -> Vec<Vec<u8>> {
    let mut chunks = Vec::new();
    let mut chunk = Vec::with_capacity(room);
    let mut piece = Vec::with_capacity(4);
    for (i, &b) in bytes.iter().enumerate() {
        let next = bytes.get(i + 1).copied();
        piece.clear();
        printf_piece(b, next, chunk.is_empty(), &mut piece);
        if chunk.len() + piece.len() > room {
            chunks.push(std::mem::replace(&mut chunk, Vec::with_capacity(room)));
            piece.clear();
            printf_piece(b, next, true, &mut piece);
        }
        chunk.extend_from_slice(&piece);
    }
    if !chunk.is_empty() {
        chunks.push(chunk);
    }
    chunks
}

/// One byte inside a single-quoted printf format. Printable ASCII stays
/// literal except `'` (it would end the quoting), `\` and `%` (printf
/// syntax: `\\`, `%%`), and a `-` that starts the format (dash's printf
/// takes it for an option, and `printf --` is not portable). Everything
/// else is an octal escape of one to three digits: three only when the next
/// byte is a literal octal digit that would extend the escape.
fn printf_piece(b: u8, next: Option<u8>, first: bool, out: &mut Vec<u8>) {
    match b {
        b'\\' => out.extend_from_slice(b"\\\\"),
        b'%' => out.extend_from_slice(b"%%"),
        b' '..=b'~' if b != b'\'' && !(b == b'-' && first) => out.push(b),
        _ => {
            let width = if matches!(next, Some(b'0'..=b'7')) {
                3
            } else {
                1
            };
            write!(out, "\\{b:0width$o}").expect("writing to a Vec");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(base64: bool, gunzip: Option<Gunzip>) -> Tools {
        Tools { base64, gunzip }
    }

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
    fn escapes() {
        let esc = |b: u8, next: Option<u8>, first: bool| {
            let mut v = Vec::new();
            printf_piece(b, next, first, &mut v);
            String::from_utf8(v).unwrap()
        };
        assert_eq!(esc(b'%', None, false), "%%");
        assert_eq!(esc(b'\\', None, false), "\\\\");
        assert_eq!(esc(b'\'', Some(b'a'), false), "\\47");
        assert_eq!(esc(0, Some(b'8'), false), "\\0");
        assert_eq!(esc(0, Some(b'7'), false), "\\000");
        assert_eq!(esc(0o377, None, false), "\\377");
        assert_eq!(esc(b'7', None, false), "7");
        assert_eq!(esc(b'-', None, true), "\\55");
        // "\550" would be one byte: a digit after the escape widens it.
        assert_eq!(esc(b'-', Some(b'0'), true), "\\055");
        assert_eq!(esc(b'-', None, false), "-");
        assert_eq!(esc(b'\n', None, false), "\\12");
        // A chunk boundary re-escapes a leading '-'.
        let chunks = printf_chunks(b"abc-d", 3);
        assert_eq!(
            chunks,
            vec![b"abc".to_vec(), b"\\55".to_vec(), b"d".to_vec()]
        );
    }

    #[test]
    fn the_temp_answers_version_before_it_replaces_anything() {
        let (_, cmds) = install_commands(b"x", "/d", all(true, Some(Gunzip::Zcat)), 4096, "n");
        let last = String::from_utf8(cmds.last().unwrap().clone()).unwrap();
        let check = last.find("v=$('/d.part-n' '--version')").unwrap();
        let mv = last.find("mv -f '/d.part-n' '/d'").unwrap();
        assert!(check < mv, "{last}");
        let p = crate::protocol::PROTOCOL_VERSION;
        assert!(
            last.contains(&format!("\"as-edit \"*\"(protocol {p};\"*) ;;")),
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
        let good = sh(&format!(
            "as-edit 0.1.0 (protocol {p}; x86_64-unknown-linux-musl)"
        ));
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

    #[test]
    fn missing_basics_are_named() {
        let probe = String::from_utf8(probe_command("/d")).unwrap();
        assert!(!probe.contains("as-edit-probe: has"), "{probe}");
        assert_eq!(
            missing_basics(b"/bin/chmod\nas-edit-probe: has chmod\nas-edit-probe: has rm\n"),
            vec!["mv"]
        );
        assert_eq!(missing_basics(b""), vec!["chmod", "mv", "rm"]);
    }

    #[test]
    fn probe_answers() {
        let t = parse_probe(b"sh: /d: not found\nas-edit-probe: base64\n\nas-edit-probe: zcat\r\n");
        assert_eq!(t, all(true, Some(Gunzip::Zcat)));
        assert_eq!(
            parse_probe(b"as-edit 0.1.0 (protocol 1; x)\n\n\n\n"),
            all(false, None)
        );
    }
}
