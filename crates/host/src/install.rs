#![doc = include_str!("install.md")]

use std::ffi::OsString;
use std::path::Path;

use base64::Engine as _;

mod commands;
mod printf;

use super::command::join_quoted;
use super::{EditError, Sandbox};
use commands::gzip;
pub use commands::{cleanup_command, install_commands};
use printf::printf_format;

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
        let nonce = crate::random::hex();
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

/// `'DEST' --version`.
pub fn version_command(dest: &str) -> Vec<u8> {
    join_quoted(&[OsString::from(dest), OsString::from("--version")])
}

/// Does `--version` output name a working helper?
pub fn is_helper_version(output: &[u8]) -> bool {
    let s = String::from_utf8_lossy(output);
    s.lines().any(|l| {
        l.starts_with("as-edit ")
            && l.contains(&format!(
                "(protocol {};",
                as_edit_wire::protocol::PROTOCOL_VERSION
            ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn all(base64: bool, gunzip: Option<Gunzip>) -> Tools {
        Tools { base64, gunzip }
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
