//! The bash init file that makes a login shell keep the `ph` directory first on `PATH`
//! (protocol §9.1).
//!
//! A login bash reads `/etc/profile`, and Debian's resets `PATH` outright, so a `PATH`
//! prepended in the environment is lost. Bash is therefore started as
//! `bash --init-file FILE`: FILE runs what a login shell would, then prepends
//! `$PORTHOLE_BIN_DIR` again (the approach VS Code's shell integration takes).

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::PathBuf;
use std::sync::OnceLock;

/// The environment variable naming the directory to put first on `PATH`.
pub const BIN_DIR_VAR: &str = "PORTHOLE_BIN_DIR";

const BASH_INIT: &str = r#"# Porthole: what a login bash runs, then Porthole's own PATH entry (protocol §9.1).
if [ -r /etc/profile ]; then . /etc/profile; fi
if [ -r "$HOME/.bash_profile" ]; then . "$HOME/.bash_profile"
elif [ -r "$HOME/.bash_login" ]; then . "$HOME/.bash_login"
elif [ -r "$HOME/.profile" ]; then . "$HOME/.profile"
fi
if [ -n "${PORTHOLE_BIN_DIR:-}" ]; then
  case "$PATH" in
    "$PORTHOLE_BIN_DIR":*) ;;
    *) PATH="$PORTHOLE_BIN_DIR:$PATH"; export PATH ;;
  esac
fi
"#;

/// The init file's path, written once per sidecar into a directory only this user can
/// enter (`$XDG_RUNTIME_DIR/porthole`, else `$TMPDIR/porthole-<uid>`). `None` if it cannot
/// be written safely (the shell then starts as a plain login shell, and says nothing: the
/// `PATH` in its environment may still survive its profile).
pub fn bash_login_init() -> Option<PathBuf> {
    static PATH: OnceLock<Option<PathBuf>> = OnceLock::new();
    PATH.get_or_init(|| match write_init() {
        Ok(p) => Some(p),
        Err(e) => {
            tracing::warn!("cannot write the bash init file: {e}");
            None
        }
    })
    .clone()
}

fn write_init() -> std::io::Result<PathBuf> {
    // SAFETY: getuid cannot fail.
    let uid = unsafe { libc::getuid() };
    let dir = match std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) {
        Some(d) => PathBuf::from(d).join("porthole"),
        None => std::env::temp_dir().join(format!("porthole-{uid}")),
    };
    match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    // In a shared /tmp the directory must be ours and private, not a link planted by another user.
    let meta = std::fs::symlink_metadata(&dir)?;
    if !meta.is_dir() || meta.uid() != uid || meta.mode() & 0o077 != 0 {
        return Err(std::io::Error::other(format!("{} is not a private directory of ours", dir.display())));
    }
    let path = dir.join("bash-init-1.sh");
    if std::fs::read_to_string(&path).is_ok_and(|s| s == BASH_INIT) {
        return Ok(path);
    }
    let tmp = dir.join(format!("bash-init-1.sh.{}", std::process::id()));
    let mut f = std::fs::OpenOptions::new().write(true).create(true).truncate(true).mode(0o600).open(&tmp)?;
    f.write_all(BASH_INIT.as_bytes())?;
    drop(f);
    std::fs::rename(&tmp, &path)?;
    Ok(path)
}
