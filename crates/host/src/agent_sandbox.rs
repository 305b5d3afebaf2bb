//! A [`Sandbox`] over the Kubernetes agent-sandbox runtime's HTTP API:
//! `POST /execute` `{"command"}` → `{"stdout","stderr","exit_code"}`;
//! `POST /upload` multipart, field `file`, its filename the path relative to
//! the runtime's base directory; `GET /download/{url-encoded path}`.
//!
//! The upstream example runtime runs the command with `shlex.split` and no
//! shell, so this backend reports `has_shell() == false`: edits use the
//! quoted argv form (which shlex reverses), and the helper is installed by
//! upload plus `chmod 755` through `/execute` (upload cannot set the mode).

use std::io::{self, Read};
use std::path::{Component, Path, PathBuf};

use super::{ExecOutput, Sandbox};

/// One sandbox of the runtime, reached at its base URL.
pub struct AgentSandbox {
    base_url: String,
    base_dir: PathBuf,
    agent: ureq::Agent,
}

impl AgentSandbox {
    /// `base_url` like `http://10.0.0.5:8888`; `base_dir` is the directory
    /// the runtime's file API is rooted at, as seen by `/execute` (for
    /// example `/app` upstream, `/workspace` in a conforming image).
    pub fn new(base_url: impl Into<String>, base_dir: impl Into<PathBuf>) -> Self {
        AgentSandbox {
            base_url: base_url.into().trim_end_matches('/').to_owned(),
            base_dir: base_dir.into(),
            agent: ureq::AgentBuilder::new()
                .timeout(std::time::Duration::from_secs(120))
                .build(),
        }
    }

    /// The path relative to the file API root; refuses anything outside it
    /// before a request is made.
    fn relative(&self, path: &Path) -> io::Result<String> {
        let rel = path.strip_prefix(&self.base_dir).map_err(|_| {
            io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "{} is outside the file API root {}",
                    path.display(),
                    self.base_dir.display()
                ),
            )
        })?;
        if rel.components().any(|c| !matches!(c, Component::Normal(_))) {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!("{} leaves the file API root", path.display()),
            ));
        }
        rel.to_str().map(str::to_owned).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "the file API takes UTF-8 paths only",
            )
        })
    }
}

fn http_error(e: ureq::Error) -> io::Error {
    match e {
        ureq::Error::Status(code, resp) => {
            let body = resp.into_string().unwrap_or_default();
            let kind = match code {
                404 => io::ErrorKind::NotFound,
                401 | 403 => io::ErrorKind::PermissionDenied,
                _ => io::ErrorKind::Other,
            };
            io::Error::new(kind, format!("HTTP {code}: {}", body.trim()))
        }
        ureq::Error::Transport(t) => io::Error::other(t.to_string()),
    }
}

/// Percent-encodes all but unreserved characters and `/`.
fn url_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

impl Sandbox for AgentSandbox {
    fn exec(&mut self, command: &[u8], stdin: Option<&[u8]>) -> io::Result<ExecOutput> {
        if stdin.is_some() {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "/execute takes no standard input",
            ));
        }
        let command = std::str::from_utf8(command).map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "/execute takes UTF-8 commands only",
            )
        })?;
        let body = serde_json::json!({ "command": command }).to_string();
        let resp = self
            .agent
            .post(&format!("{}/execute", self.base_url))
            .set("Content-Type", "application/json")
            .send_string(&body)
            .map_err(http_error)?;
        let mut text = String::new();
        resp.into_reader().read_to_string(&mut text)?;
        let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("/execute answered non-JSON: {e}"),
            )
        })?;
        let field = |k: &str| {
            v.get(k)
                .and_then(|s| s.as_str())
                .unwrap_or("")
                .as_bytes()
                .to_vec()
        };
        let mut output = field("stdout");
        output.extend_from_slice(&field("stderr"));
        Ok(ExecOutput {
            exit_code: v
                .get("exit_code")
                .and_then(|c| c.as_i64())
                .map(|c| c as i32),
            output,
        })
    }

    fn download(&mut self, path: &Path) -> io::Result<Vec<u8>> {
        let rel = self.relative(path)?;
        let resp = self
            .agent
            .get(&format!("{}/download/{}", self.base_url, url_encode(&rel)))
            .call()
            .map_err(http_error)?;
        let mut bytes = Vec::new();
        resp.into_reader().read_to_end(&mut bytes)?;
        Ok(bytes)
    }

    fn upload(&mut self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        let rel = self.relative(path)?;
        if rel.contains(['"', '\r', '\n']) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a multipart filename cannot hold quotes or line breaks",
            ));
        }
        // A random boundary that provably does not occur in the payload.
        let boundary = loop {
            let b = format!("as-edit-{}{}", crate::random::hex(), crate::random::hex());
            if memchr::memmem::find(bytes, b.as_bytes()).is_none() {
                break b;
            }
        };
        let mut body = Vec::with_capacity(bytes.len() + 256);
        body.extend_from_slice(
            format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{rel}\"\r\n\
                 Content-Type: application/octet-stream\r\n\r\n"
            )
            .as_bytes(),
        );
        body.extend_from_slice(bytes);
        body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
        self.agent
            .post(&format!("{}/upload", self.base_url))
            .set(
                "Content-Type",
                &format!("multipart/form-data; boundary={boundary}"),
            )
            .send_bytes(&body)
            .map_err(http_error)?;
        Ok(())
    }

    fn has_shell(&self) -> bool {
        false
    }

    fn remove(&mut self, path: &Path) -> io::Result<()> {
        self.tool(&["rm", "--"], path)
    }

    fn create_dirs(&mut self, dir: &Path) -> io::Result<()> {
        self.tool(&["mkdir", "-p", "--"], dir)
    }

    fn make_dir(&mut self, dir: &Path) -> io::Result<()> {
        self.tool(&["mkdir", "--"], dir)
    }

    fn remove_dir(&mut self, dir: &Path) -> io::Result<()> {
        self.tool(&["rmdir", "--"], dir)
    }

    /// The runtime's umask cannot be asked without a shell: 022, the
    /// usual one (the helper's own create applies the real one).
    fn set_mode(&mut self, path: &Path, mode: u32) -> io::Result<()> {
        self.tool(&["chmod", &format!("{:o}", mode & !0o022), "--"], path)
    }

    fn resolve_dir(&mut self, dir: &Path) -> io::Result<PathBuf> {
        self.relative(dir)?;
        let cmd = super::command::realpath_command(dir);
        super::command::realpath_of(self.exec(&cmd, None))
    }
}

impl AgentSandbox {
    /// The file API has no delete or mkdir: `TOOL ARGS… PATH` through
    /// `/execute` (argv, as shlex splits it), confined to the file API
    /// root like uploads; an image without the tool is `Unsupported`.
    fn tool(&mut self, tool: &[&str], path: &Path) -> io::Result<()> {
        self.relative(path)?;
        let mut argv: Vec<std::ffi::OsString> = tool.iter().map(Into::into).collect();
        argv.push(path.into());
        let out = self.exec(&super::command::join_quoted(&argv), None)?;
        match out.exit_code {
            Some(0) => Ok(()),
            Some(126 | 127) => Err(io::Error::new(
                io::ErrorKind::Unsupported,
                format!("the sandbox has no usable {}", tool[0]),
            )),
            c => Err(io::Error::new(
                super::command::said_kind(&out.output),
                format!(
                    "{} exited {c:?}: {}",
                    tool[0],
                    String::from_utf8_lossy(&out.output).trim()
                ),
            )),
        }
    }
}
