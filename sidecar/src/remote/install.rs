//! Installing Porthole's own `porthole-sidecar` on a remote that lacks it (protocol §11.6):
//! the remote's platform is asked first (`uname -sm`), a platform this binary is not built
//! for is refused by name, and the binary that runs here is copied there through ssh,
//! checked against its SHA-256 and moved into place atomically. Only the user's HOME on the
//! remote is written; no root is needed.

use std::path::{Path, PathBuf};
use std::time::Duration;

use std::io::Write;
use std::process::{Command, Stdio};

use sha2::{Digest, Sha256};

/// Why [`install`] did not install.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InstallError {
    /// Occurs when the remote is a platform this binary is not built for (names it).
    Unsupported(String),
    /// Occurs when ssh, the probe, the copy or the checksum failed (why, with ssh's stderr).
    Failed(String),
}

/// How to reach the remote: the ssh program and its arguments up to and including `--`
/// (the remote command line is appended), and the binary's path relative to the remote HOME.
#[derive(Debug, Clone)]
pub struct Target {
    /// The ssh client.
    pub ssh: PathBuf,
    /// ssh's arguments before the remote command line (options, destination, `--`).
    pub args: Vec<String>,
    /// Where the binary goes, relative to the remote HOME.
    pub remote_bin: String,
}

/// The remote binary, relative to the remote HOME, when `$PORTHOLE_REMOTE_BIN` is not set:
/// one directory per version, so a newer local Porthole installs its own beside the old.
pub fn default_remote_bin() -> String {
    format!(".local/share/porthole/bin/{}/porthole-sidecar", env!("CARGO_PKG_VERSION"))
}

/// How long the platform probe may take.
const PROBE_BOUND: Duration = Duration::from_secs(20);
/// How long the copy may take (a debug build is a few hundred MB).
const COPY_BOUND: Duration = Duration::from_secs(300);

/// The platform `uname -sm` printed, in Rust's names (`std::env::consts::{OS, ARCH}`):
/// `Linux x86_64` → (`linux`, `x86_64`), `Darwin arm64` → (`macos`, `aarch64`). `None` when
/// it is not two words.
pub fn platform_of(uname: &str) -> Option<(String, String)> {
    let mut words = uname.split_whitespace();
    let (sys, machine) = (words.next()?, words.next()?);
    if words.next().is_some() {
        return None;
    }
    let os = match sys.to_ascii_lowercase().as_str() {
        "darwin" => "macos".to_string(),
        other => other.to_string(),
    };
    let arch = match machine {
        "arm64" => "aarch64".to_string(),
        "amd64" => "x86_64".to_string(),
        other => other.to_string(),
    };
    Some((os, arch))
}

/// Runs `remote` (one shell command line) on `host` through ssh with `input` on its stdin →
/// (exit code, stdout, stderr). Bounded by `bound`: ssh is killed past it. Blocking: run it
/// off the async runtime.
fn ssh_run(
    to: &Target,
    remote: &str,
    input: Option<Vec<u8>>,
    bound: Duration,
) -> Result<(Option<i32>, String, String), InstallError> {
    let mut child = Command::new(&to.ssh)
        .args(&to.args)
        .arg(remote)
        .stdin(if input.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| InstallError::Failed(format!("cannot run ssh: {e}")))?;
    let pid = child.id();
    if let (Some(bytes), Some(mut stdin)) = (input, child.stdin.take()) {
        // A remote that stops reading (a failed mkdir) closes the pipe: its exit says why.
        std::thread::spawn(move || {
            let _ = stdin.write_all(&bytes);
        });
    }
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let out = match rx.recv_timeout(bound) {
        Ok(r) => r.map_err(|e| InstallError::Failed(format!("ssh: {e}")))?,
        Err(_) => {
            // SAFETY: kill(2) on our own unreaped child's pid.
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
            return Err(InstallError::Failed(format!("ssh did not finish `{remote}` within {} s", bound.as_secs())));
        }
    };
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    Ok((out.status.code(), text(&out.stdout), text(&out.stderr)))
}

/// The shell script that receives the binary on stdin: written beside `bin` under a
/// temporary name, checked against `sha256`, made executable and renamed over `bin` (one
/// rename: a concurrent attach sees the old file or the new, never half of one).
fn receive_script(bin: &str, sha256: &str) -> String {
    let q = |s: &str| format!("'{}'", s.replace('\'', r"'\''"));
    format!(
        "set -e; b=\"$HOME\"/{bin}; d=$(dirname \"$b\"); mkdir -p \"$d\"; t=\"$d/.porthole-sidecar.$$\"; \
         cat > \"$t\"; s=$(sha256sum \"$t\" | cut -d' ' -f1); \
         if [ \"$s\" != {sum} ]; then rm -f \"$t\"; echo \"checksum mismatch: $s\" >&2; exit 3; fi; \
         chmod 755 \"$t\"; mv -f \"$t\" \"$b\"",
        bin = q(bin),
        sum = q(sha256)
    )
}

/// Installs `local` (this machine's `porthole-sidecar`) at `to.remote_bin` (relative to the
/// remote HOME). Errors: [`InstallError::Unsupported`] naming the remote's platform when it is
/// not this binary's (nothing is copied); [`InstallError::Failed`] when ssh, the copy or the
/// checksum fails (the remote keeps no partial file).
pub async fn install(to: &Target, local: &Path) -> Result<(), InstallError> {
    let (to, local) = (to.clone(), local.to_path_buf());
    tokio::task::spawn_blocking(move || install_blocking(&to, &local))
        .await
        .map_err(|e| InstallError::Failed(format!("the install task failed: {e}")))?
}

fn install_blocking(to: &Target, local: &Path) -> Result<(), InstallError> {
    let (code, out, err) = ssh_run(to, "uname -sm", None, PROBE_BOUND)?;
    if code != Some(0) {
        return Err(InstallError::Failed(format!("`uname -sm` on the remote failed: {}", err.trim())));
    }
    let said = out.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").trim().to_string();
    let (os, arch) =
        platform_of(&said).ok_or_else(|| InstallError::Failed(format!("`uname -sm` on the remote said {said:?}")))?;
    if os != std::env::consts::OS || arch != std::env::consts::ARCH {
        return Err(InstallError::Unsupported(format!(
            "{said} ({os} {arch}): this Porthole has a porthole-sidecar for {} {} only",
            std::env::consts::OS,
            std::env::consts::ARCH
        )));
    }
    let bytes = std::fs::read(local).map_err(|e| InstallError::Failed(format!("reading {}: {e}", local.display())))?;
    let sum = Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect::<String>();
    let script = receive_script(&to.remote_bin, &sum);
    let (code, _, err) = ssh_run(to, &format!("sh -c {}", shell_word(&script)), Some(bytes), COPY_BOUND)?;
    if code != Some(0) {
        return Err(InstallError::Failed(format!("installing porthole-sidecar on the remote failed: {}", err.trim())));
    }
    tracing::info!(bin = %to.remote_bin, "installed porthole-sidecar on the remote");
    Ok(())
}

/// `s` as one word for the remote shell (single quotes).
fn shell_word(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// This running executable: what [`install`] copies.
pub fn this_binary() -> Option<PathBuf> {
    std::env::current_exe().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uname_names_map_to_rust_s() {
        assert_eq!(platform_of("Linux x86_64"), Some(("linux".into(), "x86_64".into())));
        assert_eq!(platform_of("Linux aarch64\n"), Some(("linux".into(), "aarch64".into())));
        assert_eq!(platform_of("Darwin arm64"), Some(("macos".into(), "aarch64".into())));
        assert_eq!(platform_of("FreeBSD amd64"), Some(("freebsd".into(), "x86_64".into())));
        assert_eq!(platform_of("Linux"), None);
        assert_eq!(platform_of("a b c"), None);
    }

    #[test]
    fn the_receiving_script_quotes_the_path_and_checks_before_it_moves() {
        let s = receive_script(".local/it's/porthole-sidecar", "ab12");
        assert!(s.contains(r#"b="$HOME"/'.local/it'\''s/porthole-sidecar'"#), "{s}");
        let check = s.find("sha256sum").unwrap();
        assert!(check < s.find("mv -f").unwrap() && s.contains("!= 'ab12'"), "{s}");
    }
}
