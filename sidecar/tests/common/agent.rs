//! The preamble of the agent tests (`tests/agent.rs`, `agent_human.rs`): a sidecar's
//! screencast pane on a page served by a real local upstream, opened the way an agent opens
//! one, beside a terminal a stand-in window shows.

use std::sync::Mutex;

use serde_json::{json, Value};

use super::window::TestWindow;
use super::{Resp, Sidecar};

/// An agent driving browser pane `pane` with `POST /api/control/browser/{verb}`, as `ph
/// browser` does. Keeps every answer's body, so a test can check that no secret ever left
/// the sidecar ([`Agent::said`]). Test files add the verbs they use as their own methods.
pub struct Agent<'a> {
    pub sc: &'a Sidecar,
    pub pane: String,
    said: Mutex<String>,
}

impl<'a> Agent<'a> {
    pub fn new(sc: &'a Sidecar, pane: impl Into<String>) -> Self {
        Agent { sc, pane: pane.into(), said: Mutex::default() }
    }

    /// `verb` with `body` (the pane added), whatever the answer.
    pub async fn call(&self, verb: &str, mut body: Value) -> Resp {
        body["pane"] = self.pane.clone().into();
        let r = self.sc.req("POST", &format!("/api/control/browser/{verb}"), Some(&body)).await;
        self.said.lock().unwrap().push_str(&String::from_utf8_lossy(&r.body));
        r
    }

    /// `verb`'s answer, which must be a 200.
    pub async fn ok(&self, verb: &str, body: Value) -> Value {
        let r = self.call(verb, body.clone()).await;
        assert_eq!(r.status, 200, "{verb} {body}: {}", String::from_utf8_lossy(&r.body));
        r.json()
    }

    /// `verb`'s error object, which must carry `code`.
    pub async fn refused(&self, verb: &str, body: Value, code: &str) -> Value {
        let r = self.call(verb, body.clone()).await;
        assert_eq!(r.code(), code, "{verb} {body}: {}", String::from_utf8_lossy(&r.body));
        r.json()["error"].clone()
    }

    /// Every answer's body so far, in order.
    pub fn said(&self) -> String {
        self.said.lock().unwrap().clone()
    }
}

/// The ref (`e12`) on the first line of outline `text` that contains `needle`; panics naming
/// what is missing.
pub fn ref_on(text: &str, needle: &str) -> String {
    let line = text.lines().find(|l| l.contains(needle)).unwrap_or_else(|| panic!("no {needle:?} in\n{text}"));
    let at = line.find("[ref=").unwrap_or_else(|| panic!("no ref on {line:?}"));
    line[at + 5..].split(']').next().unwrap().to_string()
}

/// A browser pane ready for `ph browser` verbs.
pub struct BrowserPane {
    /// The upstream's origin, `http://127.0.0.1:PORT`.
    pub base: String,
    /// The terminal the window's first pane shows (`sleep 600`), beside which the pane opened.
    pub terminal: String,
    /// The stand-in window: it applied the open and created the pane's real Chromium.
    pub win: TestWindow,
    /// The browser pane's handle (`bN`).
    pub pane: String,
    /// The open's answer (`{"handle","url","mode","reused"}`).
    pub opened: Value,
}

/// Serves `pages` (a real HTTP upstream on loopback, `common::browser::serve`), starts a
/// terminal, attaches a window showing it, and opens `{base}/{first}` beside it with `POST
/// /api/control/browser/open` (a screencast pane, answered once its browser is live).
/// Fails the test if the open is not a 200.
pub async fn browser_pane(sc: &Sidecar, pages: fn(&str) -> Option<String>, first: &str) -> BrowserPane {
    let base = super::browser::serve(pages);
    let terminal = sc.spawn(&["sleep", "600"]).await;
    let win = TestWindow::attach(sc, &terminal).await;
    let body = json!({"target": format!("{base}/{first}"), "near": terminal});
    let r = sc.req("POST", "/api/control/browser/open", Some(&body)).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    let opened = r.json();
    let pane = opened["handle"].as_str().unwrap().to_string();
    BrowserPane { base, terminal, win, pane, opened }
}

/// `tests/fixtures/agent/`.
pub const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/agent");

/// Serves `tests/fixtures/agent/NAME` at `/NAME` (one path segment; nothing else), and the
/// React fixture's bundle (built by [`react_bundle`]) at `/react_controlled.js`.
pub fn fixture_page(path: &str) -> Option<String> {
    let name = path.trim_start_matches('/');
    if name.is_empty() || name.contains("..") || name.contains('/') {
        return None;
    }
    if name == "react_controlled.js" {
        return std::fs::read_to_string(format!("{FIXTURES}/react/dist/react_controlled.js")).ok();
    }
    std::fs::read_to_string(format!("{FIXTURES}/{name}")).ok()
}

/// Bundles the React fixture (`tests/fixtures/agent/react/`: React and react-dom from npm,
/// pinned by its lockfile) with esbuild, running `npm ci` first when its `node_modules` is
/// missing (`cargo xtask test` installs it beforehand). Once per test binary.
pub fn react_bundle() {
    static BUILT: std::sync::OnceLock<()> = std::sync::OnceLock::new();
    BUILT.get_or_init(|| {
        let dir = format!("{FIXTURES}/react");
        let run = |args: &[&str]| {
            let out = std::process::Command::new("npm").args(args).current_dir(&dir).output().expect("npm on PATH");
            assert!(out.status.success(), "npm {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        };
        if !std::path::Path::new(&format!("{dir}/node_modules/.package-lock.json")).exists() {
            run(&["ci", "--no-audit", "--no-fund"]);
        }
        run(&["run", "build"]);
    });
}

/// Saves `text` as the sidecar's config file, as editors do (a temp file renamed over it),
/// and waits until `GET /api/config` shows `[agent.sealed]` as `ok` says (bounded generously).
pub async fn configure_sealed(sc: &Sidecar, text: &str, ok: impl Fn(&Value) -> bool) {
    let dir = sc.home.join(".config/porthole");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(".config.toml.tmp"), text).unwrap();
    std::fs::rename(dir.join(".config.toml.tmp"), dir.join("config.toml")).unwrap();
    for _ in 0..400 {
        if ok(&sc.req("GET", "/api/config", None).await.json()["config"]["agent"]["sealed"]) {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("the config never applied: {text}");
}
