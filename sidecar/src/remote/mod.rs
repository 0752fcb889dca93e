//! Remote workspaces (protocol §11): a second `porthole-sidecar` on another machine, reached
//! through the system's `ssh`, its API multiplexed (yamux) over ssh's stdio.
//!
//! Remote side: [`relay`] (`--remote-attach`, the only command ssh runs: starts the daemon if
//! needed, prints the hello line, serves the yamux session) and [`daemon`] (the pieces of
//! `--remote-daemon` that know nothing of HTTP: the run directory, its files, the grace timer;
//! `crate::run_remote_daemon` serves the API on its Unix socket). Local side: [`link`] (one
//! ssh per host, the reconnect loop) and [`Remotes`] (the links by id, owned by the API's
//! state), and [`socks`] (a remote browser's SOCKS5 listener, each CONNECT a `tcp` stream of
//! the link). [`frame`] is the stream header both sides speak; [`mux`] drives a yamux session.
//!
//! Architecture Invariant: nothing here names `api`; the HTTP forward lives in
//! `api/remotes.rs`.

pub mod daemon;
pub mod frame;
pub mod host;
pub mod install;
pub mod link;
pub mod mux;
pub mod relay;
pub mod remotes;
pub mod socks;

pub use frame::Target;
pub use host::SshHost;
pub use link::{Hello, Link, LinkError, LinkOptions, LinkState, LinkStatus};
pub use remotes::Remotes;

use std::path::PathBuf;

/// The remote daemon's run directory: `$XDG_RUNTIME_DIR/porthole-remote` when
/// `XDG_RUNTIME_DIR` is set, else `$XDG_STATE_HOME/porthole/remote` (default
/// `~/.local/state/porthole/remote`). `None`: none of those variables is set.
pub fn run_dir() -> Option<PathBuf> {
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(rt) = var("XDG_RUNTIME_DIR") {
        return Some(rt.join("porthole-remote"));
    }
    let state = var("XDG_STATE_HOME").or_else(|| var("HOME").map(|h| h.join(".local/state")))?;
    Some(state.join("porthole/remote"))
}

/// Creates `dir` (and its parents) with mode 0700 and sets 0700 on `dir` itself.
pub fn create_private_dir(dir: &std::path::Path) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
}
