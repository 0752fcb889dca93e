//! How a login shell starts in a Porthole terminal: Porthole's `PATH` entry kept first
//! (protocol §9.1) and shell integration injected for bash, zsh and fish (DESIGN §13,
//! protocol §5.3), always after the user's own startup files and never instead of them.
//!
//! The scripts live in `assets/shell/` and are compiled in; at first use they are written to a
//! directory only this user can enter (`$XDG_RUNTIME_DIR/porthole/shell-<hash>`, else
//! `$TMPDIR/porthole-<uid>/shell-<hash>`), named by their content so two sidecar versions
//! never share one.
//! - bash: `bash --init-file bash-init.sh` (interactive, not login). The file runs what a
//!   login bash runs (Debian's `/etc/profile` resets `PATH`, which is why a `PATH` in the
//!   environment alone is lost), puts the `ph` directory back first, then sources
//!   `bash-integration.sh`.
//! - zsh: a login zsh with `ZDOTDIR` pointing at `zsh/`, whose files each source the user's
//!   file of the same name from their own `ZDOTDIR` (`PORTHOLE_USER_ZDOTDIR`) or `$HOME`;
//!   `.zshrc` then adds the integration and hands `ZDOTDIR` back.
//! - fish: a login fish with the directory first in `XDG_DATA_DIRS`, so fish reads
//!   `fish/vendor_conf.d/porthole.fish`.
//!
//! `PORTHOLE_SHELL_INTEGRATION=0` in the sidecar's environment (inherited by every shell)
//! turns the integration off; the `PATH` entry stays.

use std::hash::{Hash, Hasher};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use portable_pty::CommandBuilder;

/// The environment variable naming the directory to put first on `PATH`.
pub const BIN_DIR_VAR: &str = "PORTHOLE_BIN_DIR";

/// The scripts, by path relative to the scripts directory.
const SCRIPTS: &[(&str, &str)] = &[
    ("bash-init.sh", include_str!("../../../assets/shell/bash-init.sh")),
    ("bash-integration.sh", include_str!("../../../assets/shell/bash-integration.sh")),
    ("zsh/.zshenv", include_str!("../../../assets/shell/zsh/.zshenv")),
    ("zsh/.zprofile", include_str!("../../../assets/shell/zsh/.zprofile")),
    ("zsh/.zshrc", include_str!("../../../assets/shell/zsh/.zshrc")),
    ("zsh/porthole.zsh", include_str!("../../../assets/shell/zsh/porthole.zsh")),
    ("fish/vendor_conf.d/porthole.fish", include_str!("../../../assets/shell/fish/vendor_conf.d/porthole.fish")),
];

/// A shell Porthole knows how to start with its scripts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// GNU bash.
    Bash,
    /// zsh.
    Zsh,
    /// fish.
    Fish,
}

impl Kind {
    /// The kind of the shell at `path`, by its file name.
    pub fn of(path: &str) -> Option<Kind> {
        match path.rsplit('/').next().unwrap_or(path) {
            "bash" => Some(Kind::Bash),
            "zsh" => Some(Kind::Zsh),
            "fish" => Some(Kind::Fish),
            _ => None,
        }
    }
}

/// The command that starts `shell` (a path) of `kind` with Porthole's scripts, or `None`
/// when the scripts cannot be written safely (the caller then starts a plain login shell:
/// no integration, and a `PATH` entry only if the profile keeps it). `XDG_DATA_DIRS` and
/// `ZDOTDIR` are read from the sidecar's own environment (what the shell would inherit).
pub fn command(shell: &str, kind: Kind) -> Option<CommandBuilder> {
    let dir = scripts_dir()?;
    let mut b = CommandBuilder::new(shell);
    match kind {
        Kind::Bash => {
            b.arg("--init-file");
            b.arg(dir.join("bash-init.sh"));
        }
        Kind::Zsh => {
            b.arg("-l");
            if let Some(user) = std::env::var_os("ZDOTDIR").filter(|d| !d.is_empty()) {
                b.env("PORTHOLE_USER_ZDOTDIR", user);
            }
            b.env("ZDOTDIR", dir.join("zsh"));
        }
        Kind::Fish => {
            b.arg("-l");
            let rest = std::env::var("XDG_DATA_DIRS")
                .ok()
                .filter(|d| !d.is_empty())
                .unwrap_or_else(|| "/usr/local/share:/usr/share".into());
            b.env("XDG_DATA_DIRS", format!("{}:{rest}", dir.display()));
        }
    }
    Some(b)
}

/// The scripts directory, written once per sidecar. `None` if it cannot be written safely.
fn scripts_dir() -> Option<PathBuf> {
    static DIR: OnceLock<Option<PathBuf>> = OnceLock::new();
    DIR.get_or_init(|| match write_scripts() {
        Ok(p) => Some(p),
        Err(e) => {
            tracing::warn!("cannot write the shell scripts: {e}");
            None
        }
    })
    .clone()
}

fn write_scripts() -> std::io::Result<PathBuf> {
    // SAFETY: getuid cannot fail.
    let uid = unsafe { libc::getuid() };
    let base = match std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) {
        Some(d) => PathBuf::from(d).join("porthole"),
        None => std::env::temp_dir().join(format!("porthole-{uid}")),
    };
    private_dir(&base, uid)?;
    let mut h = std::collections::hash_map::DefaultHasher::new();
    SCRIPTS.hash(&mut h);
    let dir = base.join(format!("shell-{:016x}", h.finish()));
    private_dir(&dir, uid)?;
    for (rel, text) in SCRIPTS {
        let path = dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::DirBuilder::new().recursive(true).mode(0o700).create(parent)?;
        }
        write_if_changed(&path, text)?;
    }
    Ok(dir)
}

/// Creates `dir` (mode 0700) unless it exists, then checks that it is a directory of ours
/// that no one else can enter: in a shared /tmp it could be a link planted by another user.
fn private_dir(dir: &Path, uid: u32) -> std::io::Result<()> {
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    let meta = std::fs::symlink_metadata(dir)?;
    if !meta.is_dir() || meta.uid() != uid || meta.mode() & 0o077 != 0 {
        return Err(std::io::Error::other(format!("{} is not a private directory of ours", dir.display())));
    }
    Ok(())
}

/// Writes `text` to `path` atomically (temp file + rename) unless it already holds it.
fn write_if_changed(path: &Path, text: &str) -> std::io::Result<()> {
    if std::fs::read_to_string(path).is_ok_and(|s| s == text) {
        return Ok(());
    }
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".{}", std::process::id()));
    let mut f = std::fs::OpenOptions::new().write(true).create(true).truncate(true).mode(0o600).open(&tmp)?;
    f.write_all(text.as_bytes())?;
    drop(f);
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shells_are_known_by_file_name() {
        assert_eq!(Kind::of("/usr/bin/bash"), Some(Kind::Bash));
        assert_eq!(Kind::of("zsh"), Some(Kind::Zsh));
        assert_eq!(Kind::of("/usr/local/bin/fish"), Some(Kind::Fish));
        assert_eq!(Kind::of("/bin/dash"), None);
        assert_eq!(Kind::of("/opt/bashful"), None);
    }
}
