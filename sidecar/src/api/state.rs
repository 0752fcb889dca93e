//! Shared server state: one `Clone` struct of `Arc`s handed to every handler.

use std::path::PathBuf;
use std::sync::Arc;

use tokio::sync::Notify;
use tower_http::services::{ServeDir, ServeFile};

use super::credentials::Auth;
use crate::automation::sealed::Policy;
use crate::automation::Automation;
use crate::browser::Host;
use crate::config::Settings;
use crate::control::Control;
use crate::ports::Ports;
use crate::project::Projects;
use crate::proxy::{Proxy, ProxyConfig};
use crate::pty::Registry;
use crate::remote::{LinkOptions, Remotes};
use crate::session::Session;
use crate::viewer::Grants;

/// Fixed facts about this server.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// The bound loopback port.
    pub port: u16,
    /// Web mode: serve the UI at `/`.
    pub web: bool,
    /// Where the built UI lives (used in web mode).
    pub ui_dir: PathBuf,
    /// Most terminals open at once (`--max-terminals`).
    pub max_terminals: usize,
    /// The directory holding `config.toml` (the `config` module watches it).
    pub config_dir: PathBuf,
    /// The directory for state kept across runs (project trust, the session file); `None`: no home directory.
    pub state_dir: Option<PathBuf>,
    /// The remote daemon (`--remote-daemon`): served on a Unix socket, `Host: localhost` only,
    /// no Origin, no `PORTHOLE_URL` in its panes (protocol §11.2).
    pub remote_daemon: bool,
    /// `ssh -F PATH` for remote links (`--ssh-config`).
    pub ssh_config: Option<PathBuf>,
}

impl ServerConfig {
    /// `http://127.0.0.1:PORT/`.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/", self.port)
    }
}

/// Everything handlers share.
#[derive(Clone)]
pub struct AppState {
    /// Fixed server facts.
    pub config: Arc<ServerConfig>,
    /// Token, login codes, sessions.
    pub auth: Arc<Auth>,
    /// Every terminal (owned by the `pty` module).
    pub terminals: Arc<Registry>,
    /// Every browser (owned by the `browser` module).
    pub browsers: Arc<Host>,
    /// Outstanding viewer grants.
    pub viewer_grants: Arc<Grants>,
    /// The UI's workspace document and the session file (owned by the `session` module).
    pub session: Arc<Session>,
    /// Notified once to start the shutdown.
    pub shutdown: Arc<Notify>,
    /// The port scanner (owned by the `ports` module).
    pub ports: Arc<Ports>,
    /// Iframe proxy grants (owned by the `proxy` module).
    pub proxy: Arc<Proxy>,
    /// Pane handles, pane tokens and attached windows (owned by the `control` module).
    pub control: Arc<Control>,
    /// Refs and actions of `ph browser` (owned by the `automation` module).
    pub automation: Arc<Automation>,
    /// The user's configuration in force (owned by the `config` module).
    pub settings: Arc<Settings>,
    /// Project files and their trust (owned by the `project` module).
    pub projects: Arc<Projects>,
    /// The built UI's files (web mode); a missing one is a 404, not `index.html`.
    pub ui: Arc<ServeDir>,
    /// The UI's `index.html`, the answer to a navigation to a client-side route.
    pub ui_index: Arc<ServeFile>,
    /// Links to remote machines (owned by the `remote` module).
    pub remotes: Arc<Remotes>,
}

impl AppState {
    /// Builds the state for a server on `config.port`, starts watching `config.toml`, opens
    /// the saved session (restoring it unless `[session] restore` is off) and starts saving
    /// it. Must run inside a tokio runtime.
    pub fn new(config: ServerConfig, auth: Auth) -> Self {
        let automation = Automation::new();
        let ui = ServeDir::new(&config.ui_dir);
        let ui_index = ServeFile::new(config.ui_dir.join("index.html"));
        let terminals = Arc::new(Registry::new(config.max_terminals));
        let settings = Settings::start(&config.config_dir);
        let session = Session::open(config.state_dir.as_deref(), settings.current().config.session.restore, &terminals);
        session.start_saver(terminals.clone());
        // Grants' cookie jars are kept across restarts with the session (`[session] restore`,
        // read once at start like the session itself).
        let restore = settings.current().config.session.restore;
        let jar_dir = config.state_dir.as_ref().filter(|_| restore).map(|d| d.join(crate::proxy::JAR_DIR_NAME));
        let proxy_config = ProxyConfig { settings: Some(settings.subscribe()), jar_dir, ..ProxyConfig::from_env() };
        let link_options = LinkOptions::from_env(config.ssh_config.clone());
        let st = AppState {
            settings,
            session,
            projects: Projects::new(config.state_dir.as_deref()),
            config: Arc::new(config),
            auth: Arc::new(auth),
            terminals,
            browsers: Arc::new(Host::observed(automation.page_observer()).keeping_profiles(restore)),
            viewer_grants: Arc::new(Grants::new()),
            shutdown: Arc::new(Notify::new()),
            ui: Arc::new(ui),
            ui_index: Arc::new(ui_index),
            remotes: Arc::new(Remotes::new(link_options)),
            automation,
            ports: Ports::new(),
            proxy: Proxy::new(proxy_config),
            control: Control::new(std::env::current_exe().ok().and_then(|e| e.parent().map(|d| d.to_path_buf()))),
        };
        follow_force_open(&st);
        st
    }
}

/// Keeps the browser host's force-open in line with the configuration in force
/// (`agent.sealed.force_open` under the master switch and `PORTHOLE_AGENT_SEALED`): now, and
/// after every reload of the file, for as long as the settings live.
fn follow_force_open(st: &AppState) {
    let mut rx = st.settings.subscribe();
    let host = st.browsers.clone();
    tokio::spawn(async move {
        loop {
            let armed = Policy::current(&rx.borrow_and_update().config.agent.sealed).force_open_armed();
            host.set_force_open(armed).await;
            if rx.changed().await.is_err() {
                return;
            }
        }
    });
}
