//! Porthole sidecar: owns every PTY and serves the UI's HTTP/WebSocket API on loopback.
//!
//! Entry point: [`run`] (used by the `porthole-sidecar` binary). See `docs/protocol.md`.

#![warn(missing_docs)]

pub mod address;
pub mod api;
pub mod automation;
pub mod browser;
pub mod cli;
pub mod config;
pub mod constants;
pub mod control;
pub mod logging;
pub mod ports;
pub mod project;
pub mod proxy;
pub mod pty;
pub mod remote;
pub mod secret;
pub mod session;
pub mod state_file;
pub mod viewer;

use std::future::IntoFuture;
use std::io::Write;
use std::time::Duration;

use tokio::net::{TcpListener, UnixListener};
use tokio::signal::unix::{signal, SignalKind};

use api::{AppState, Auth, ServerConfig};
use constants::{PROTOCOL_VERSION, SHUTDOWN_BOUND_MS};

/// Errors that stop the sidecar before or while serving.
#[derive(Debug)]
pub enum SidecarError {
    /// Occurs when binding `127.0.0.1:PORT` or reading the bound address fails.
    Bind(std::io::Error),
    /// Occurs when the OS CSPRNG cannot produce the token.
    Random(getrandom::Error),
    /// Occurs when installing the SIGTERM/SIGINT handlers fails.
    Signals(std::io::Error),
    /// Occurs when the HTTP server stops with an error.
    Serve(std::io::Error),
    /// Occurs when the remote daemon cannot set up its run directory, socket or files.
    Remote(std::io::Error),
}

impl std::fmt::Display for SidecarError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SidecarError::Bind(e) => write!(f, "failed to bind 127.0.0.1: {e}"),
            SidecarError::Random(e) => write!(f, "getrandom failed: {e}"),
            SidecarError::Signals(e) => write!(f, "failed to install signal handlers: {e}"),
            SidecarError::Serve(e) => write!(f, "server failed: {e}"),
            SidecarError::Remote(e) => write!(f, "remote daemon: {e}"),
        }
    }
}

impl std::error::Error for SidecarError {}

/// Binds `127.0.0.1:opts.port`, prints the ready line on stdout, serves until SIGTERM,
/// SIGINT or `POST /api/shutdown`, then saves the session and hangs up and kills every
/// terminal (all bounded to 4.5 s) and returns. Must run inside a tokio runtime.
pub async fn run(opts: cli::Options) -> Result<(), SidecarError> {
    let sigterm = signal(SignalKind::terminate()).map_err(SidecarError::Signals)?;
    let sigint = signal(SignalKind::interrupt()).map_err(SidecarError::Signals)?;
    let listener = TcpListener::bind(("127.0.0.1", opts.port)).await.map_err(SidecarError::Bind)?;
    let port = listener.local_addr().map_err(SidecarError::Bind)?.port();
    let config = ServerConfig {
        port,
        web: opts.web,
        ui_dir: opts.ui_dir.clone().unwrap_or_else(cli::default_ui_dir),
        max_terminals: opts.max_terminals(),
        // No home directory at all: a directory that cannot exist, so the built-in config applies.
        config_dir: config::default_dir().unwrap_or_else(|| std::path::PathBuf::from("/nonexistent/porthole")),
        state_dir: project::default_state_dir(),
        remote_daemon: false,
        ssh_config: opts.ssh_config.clone(),
    };
    if config.web && !config.ui_dir.join("index.html").is_file() {
        tracing::warn!(dir = %config.ui_dir.display(), "web mode: no index.html in the UI directory");
    }
    let auth = Auth::new().map_err(SidecarError::Random)?;
    let login_code = auth.new_login_code().map_err(SidecarError::Random)?;
    let state = AppState::new(config, auth);
    let base = state.config.base_url();
    let ready = serde_json::json!({
        "url": base,
        "token": state.auth.token(),
        "login_url": format!("{base}login?code={login_code}"),
        "pid": std::process::id(),
        "protocol": PROTOCOL_VERSION,
    });
    {
        let mut out = std::io::stdout().lock();
        // If stdout is gone there is nobody to tell; keep serving regardless.
        let _ = writeln!(out, "{ready}");
        let _ = out.flush();
    }
    tracing::info!(%base, web = state.config.web, "sidecar ready");
    // What a sidecar that died without shutting down left: its Chromium and profiles.
    let browsers = state.browsers.clone();
    tokio::task::spawn_blocking(move || browsers.reap_orphans());

    serve(state, Bound::Tcp(listener), std::future::pending(), opts.exit_with_parent, (sigterm, sigint)).await
}

/// What the API is served on.
enum Bound {
    /// `127.0.0.1:PORT` (the local sidecar).
    Tcp(TcpListener),
    /// `<run>/api.sock` (the remote daemon).
    Unix(UnixListener),
}

type Signals = (tokio::signal::unix::Signal, tokio::signal::unix::Signal);

/// Serves `state`'s API on `bound` until SIGTERM, SIGINT, `POST /api/shutdown`, `stop_when`
/// (the remote daemon's grace) or the parent's exit (`exit_with_parent`), then shuts down
/// within the 4.5 s bound (session saved, terminals and browsers ended, remote links closed).
async fn serve(
    state: AppState,
    bound: Bound,
    stop_when: impl std::future::Future<Output = ()>,
    exit_with_parent: bool,
    (mut sigterm, mut sigint): Signals,
) -> Result<(), SidecarError> {
    let app = api::router(state.clone());
    // Stopped gracefully, not dropped: an answer being written when the shutdown begins
    // (the 202 of `POST /api/shutdown` itself) still reaches its client.
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let graceful = async move {
        let mut stopped = stopped;
        let _ = stopped.wait_for(|s| *s).await;
    };
    let mut server = match bound {
        Bound::Tcp(listener) => tokio::spawn(
            axum::serve(api::conn::Listener(listener), app.into_make_service_with_connect_info::<api::conn::Peer>())
                .with_graceful_shutdown(graceful)
                .into_future(),
        ),
        Bound::Unix(listener) => tokio::spawn(
            axum::serve(api::conn::UnixListener(listener), app.into_make_service())
                .with_graceful_shutdown(graceful)
                .into_future(),
        ),
    };
    let orphaned = parent_gone(exit_with_parent);
    let mut served = false;
    tokio::select! {
        _ = orphaned => tracing::info!("parent process gone"),
        r = &mut server => {
            served = true;
            match r {
                Ok(r) => r.map_err(SidecarError::Serve)?,
                // Its panic is reported; the terminals and browsers are still ended below.
                Err(e) => tracing::error!("the HTTP server task failed: {e}"),
            }
        }
        _ = state.shutdown.notified() => tracing::info!("shutdown requested"),
        _ = sigterm.recv() => tracing::info!("SIGTERM"),
        _ = sigint.recv() => tracing::info!("SIGINT"),
        _ = stop_when => tracing::info!("grace period over: nobody attached"),
    }
    let _ = stop.send(true);
    state.proxy.close_all();
    state.remotes.close_all();
    // The session is saved while its terminals still run (their cwd is read from them), and
    // inside the bound: a hung disk must not keep the children alive (the terminals' SIGKILL
    // still comes before the bound, pinned in session::tests).
    let (session, reg) = (state.session.clone(), state.terminals.clone());
    let saving = state.session.clone();
    let bound = Duration::from_millis(SHUTDOWN_BOUND_MS);
    let started = std::time::Instant::now();
    let save = tokio::task::spawn_blocking(move || session.save_at_shutdown(&reg));
    if tokio::time::timeout(Duration::from_millis(session::SHUTDOWN_SAVE_MS), save).await.is_err() {
        tracing::warn!("saving the session took too long; shutting down without waiting");
        saving.abandon_shutdown_save();
    }
    let reg = state.terminals.clone();
    let browsers = state.browsers.clone();
    let bound = bound.saturating_sub(started.elapsed());
    // Browsers and terminals close at once, under the one bound.
    let both = async move { tokio::join!(browsers.shutdown(), tokio::task::spawn_blocking(move || reg.shutdown())) };
    if tokio::time::timeout(bound, both).await.is_err() {
        tracing::warn!("shutdown bound reached; exiting anyway");
    }
    // Requests in flight finish (within what is left of the bound, at most 500 ms: a
    // client that never reads its answer does not hold the exit).
    let rest =
        Duration::from_millis(SHUTDOWN_BOUND_MS).saturating_sub(started.elapsed()).min(Duration::from_millis(500));
    if !served && tokio::time::timeout(rest, server).await.is_err() {
        tracing::debug!("connections still open at exit");
    }
    tracing::info!("sidecar stopped");
    Ok(())
}

/// `porthole-sidecar --remote-daemon` (protocol §11.2): the sidecar of a remote machine. Serves
/// the same API on `<run>/api.sock` (0600; no TCP listener), writes `<run>/token` (0600) and
/// `<run>/daemon.pid`, prints nothing on stdout, and shuts down as on SIGTERM once no attach
/// relay has held `<run>/link.sock` for the grace period (`[remote] grace`,
/// `$PORTHOLE_REMOTE_GRACE_S`). Removes its files at exit.
pub async fn run_remote_daemon(opts: cli::Options) -> Result<(), SidecarError> {
    let signals = (
        signal(SignalKind::terminate()).map_err(SidecarError::Signals)?,
        signal(SignalKind::interrupt()).map_err(SidecarError::Signals)?,
    );
    let run = remote::daemon::RunDir::open().map_err(SidecarError::Remote)?;
    let config = ServerConfig {
        port: 0,
        web: false,
        ui_dir: std::path::PathBuf::from("/nonexistent/porthole-ui"),
        max_terminals: opts.max_terminals(),
        config_dir: config::default_dir().unwrap_or_else(|| std::path::PathBuf::from("/nonexistent/porthole")),
        // Its own session file: a machine that is both local and remote keeps two.
        state_dir: project::default_state_dir().map(|d| d.join("remote-daemon")),
        remote_daemon: true,
        ssh_config: None,
    };
    let auth = Auth::new().map_err(SidecarError::Random)?;
    let state = AppState::new(config, auth);
    remote::daemon::write_private(&run.token(), state.auth.token()).map_err(SidecarError::Remote)?;
    remote::daemon::write_private(&run.pid(), &std::process::id().to_string()).map_err(SidecarError::Remote)?;
    let grace = remote::daemon::grace_period(state.settings.current().config.remote.grace.0);
    let grace = remote::daemon::Grace::listen(&run, grace).map_err(SidecarError::Remote)?;
    // Bound last: once it accepts, the token, the pid file and link.sock are this daemon's.
    let sock = run.api_sock();
    let _ = std::fs::remove_file(&sock);
    let listener = UnixListener::bind(&sock).map_err(SidecarError::Bind)?;
    remote::daemon::make_private(&sock).map_err(SidecarError::Remote)?;
    tracing::info!(dir = %run.0.display(), "remote daemon ready");
    let r = serve(state, Bound::Unix(listener), grace.expired(), false, signals).await;
    run.remove_daemon_files();
    r
}

/// Resolves once this process has been re-parented (its launcher exited), checking every
/// 500 ms; never resolves when `enabled` is false. Uses `getppid(2)`, which follows the
/// parent *process* (unlike `PR_SET_PDEATHSIG`, which fires when the spawning thread exits).
async fn parent_gone(enabled: bool) {
    if !enabled {
        return std::future::pending().await;
    }
    // SAFETY: getppid has no preconditions.
    let original = unsafe { libc::getppid() };
    loop {
        tokio::time::sleep(Duration::from_millis(500)).await;
        // SAFETY: as above.
        if unsafe { libc::getppid() } != original {
            return;
        }
    }
}
