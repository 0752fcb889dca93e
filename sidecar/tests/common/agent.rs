//! The preamble of the agent tests (`tests/agent.rs`, `agent_human.rs`): a sidecar's
//! screencast pane on a page served by a real local upstream, opened the way an agent opens
//! one, beside a terminal a stand-in window shows.

use serde_json::{json, Value};

use super::window::TestWindow;
use super::Sidecar;

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
