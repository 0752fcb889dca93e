//! Porthole's side: the real sidecar, a stand-in UI window (protocol §10) that creates the
//! screencast pane's browser as the UI does, and the browser verbs over HTTP as `ph` sends
//! them (`/api/control/browser/*`, protocol §9.7).

use std::sync::Mutex;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::Message;

use crate::common::{http, start_sidecar, Sidecar};
use crate::truth::Act;
use crate::{Driver, Outcome};

/// The viewport both tools get (CSS px).
pub const VIEWPORT: (u32, u32) = (1280, 720);

/// Porthole driven over its HTTP API; the sidecar stops on drop.
pub struct Porthole {
    sc: Sidecar,
    pane: String,
    window: tokio::task::JoinHandle<()>,
    /// The last snapshot's `cut` (what the byte bound left out), as JSON.
    cut: Option<String>,
}

impl Porthole {
    /// Starts the sidecar in `home`, attaches a window with one terminal pane, and opens a
    /// screencast browser pane at `url` beside it (`ph browser open`).
    pub async fn start(home: &std::path::Path, url: &str) -> Porthole {
        // The sealed case scans one fresh document per sample: a budget of 120 scans a minute
        // (the most allowed; the default is 6) keeps `rate_limited` out of its timings.
        let config = home.join(".config/porthole");
        std::fs::create_dir_all(&config).unwrap();
        std::fs::write(config.join("config.toml"), "[agent.sealed]\nscans_per_minute = 120\n").unwrap();
        let sc = start_sidecar(home);
        let t = sc.req("POST", "/api/terminals", Some(json!({"cols": 80, "rows": 24, "command": ["sh"]}))).await;
        let terminal = t["id"].as_str().unwrap_or_else(|| panic!("no terminal: {t}")).to_string();
        let window = tokio::spawn(window(sc.port, sc.token.clone(), terminal.clone()));
        // The window must have reported its panes before `open` can place one beside them.
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        let pane = loop {
            let (status, r) =
                sc.request("POST", "/api/control/browser/open", Some(json!({"target": url, "near": terminal}))).await;
            if status == 200 {
                break r["handle"].as_str().unwrap().to_string();
            }
            assert!(tokio::time::Instant::now() < deadline, "browser/open: {status} {r}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        let p = Porthole { sc, pane, window, cut: None };
        let (_, policy) = p.sc.request("GET", "/api/control/browser/policy", None).await;
        assert_eq!(policy["policy"]["scans_per_minute"], 120, "the bench's config.toml was not read: {policy}");
        p
    }

    /// What the real `ph` needs to drive this pane: the sidecar's URL, a token, the pane's
    /// handle (`--pane`).
    pub fn ph_env(&self) -> (String, String, String) {
        (format!("http://127.0.0.1:{}/", self.sc.port), self.sc.token.clone(), self.pane.clone())
    }

    /// `snapshot --sealed` (full outline): the whole answer.
    pub async fn sealed(&mut self) -> Value {
        self.ok("snapshot", json!({"sealed": true})).await
    }

    /// The per-tab CDP counts (`ph browser stats`).
    pub async fn stats(&self) -> Value {
        self.ok("stats", json!({})).await
    }

    /// The value of `js` evaluated in the page.
    pub async fn eval_value(&self, js: &str) -> Value {
        self.ok("eval", json!({"js": js, "allow_eval": true})).await["value"].clone()
    }

    async fn call(&self, verb: &str, mut body: Value) -> (u16, Value) {
        body["pane"] = self.pane.clone().into();
        self.sc.request("POST", &format!("/api/control/browser/{verb}"), Some(body)).await
    }

    async fn ok(&self, verb: &str, body: Value) -> Value {
        let (status, r) = self.call(verb, body.clone()).await;
        assert_eq!(status, 200, "{verb} {body}: {r}");
        r
    }

    /// The `snapshot` answer (`text`, `cut`, …); keeps its `cut`.
    async fn snapshot_answer(&mut self, interactive: bool) -> Value {
        let s = self.ok("snapshot", json!({"interactive": interactive})).await;
        self.cut = (!s["cut"].is_null()).then(|| s["cut"].to_string());
        s
    }
}

impl Drop for Porthole {
    fn drop(&mut self) {
        self.window.abort();
    }
}

impl Driver for Porthole {
    const INTERACTIVE: bool = true;

    async fn open(&mut self, url: &str) {
        self.ok("navigate", json!({"url": url})).await;
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        loop {
            let (status, s) = self.call("snapshot", json!({"interactive": true})).await;
            if status == 200 && s["url"].as_str() == Some(url) {
                break;
            }
            assert!(tokio::time::Instant::now() < deadline, "{url} never loaded: {s}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        self.ok("wait", json!({"load": true, "timeout_ms": 20000})).await;
    }

    async fn snapshot(&mut self, interactive: bool) -> String {
        self.snapshot_answer(interactive).await["text"].as_str().unwrap().to_string()
    }

    fn last_cut(&self) -> Option<String> {
        self.cut.clone()
    }

    async fn act(&mut self, act: Act, r: &str, text: Option<&str>) -> Outcome {
        let (verb, body) = match act {
            Act::Click => ("act", json!({"action": "click", "ref": r})),
            Act::Check => ("act", json!({"action": "check", "ref": r})),
            Act::Fill => ("act", json!({"action": "fill", "ref": r, "text": text.unwrap_or("")})),
            Act::Select => ("select", json!({"ref": r, "values": [text.unwrap_or("")]})),
        };
        let (status, v) = self.call(verb, body).await;
        if status == 200 {
            return Outcome::Done;
        }
        let e = &v["error"];
        let code = e["code"].as_str().unwrap_or("?").to_string();
        let detail = e["reason"].as_str().map(String::from).unwrap_or_else(|| e["message"].to_string());
        Outcome::Refused { code, detail }
    }

    async fn eval(&mut self, js: &str) {
        self.ok("eval", json!({"js": js, "allow_eval": true})).await;
    }

    async fn reload(&mut self) {
        // `reload` answers once started: wait for the new document, marked by a global the
        // old one had, to be gone and loaded.
        self.eval("window.__benchOld = true").await;
        self.ok("history", json!({"action": "reload"})).await;
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        loop {
            let (status, v) = self
                .call(
                    "eval",
                    json!({"js": "window.__benchOld === undefined && document.readyState === 'complete'", "allow_eval": true}),
                )
                .await;
            if status == 200 && v["value"] == true {
                break;
            }
            assert!(tokio::time::Instant::now() < deadline, "reload never finished: {v}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    async fn wait_text(&mut self, t: &str) {
        self.ok("wait", json!({"text": t, "timeout_ms": 20000})).await;
    }
}

/// The stand-in window: reports one terminal pane, and applies `open` requests as the UI
/// does (a screencast pane creates its browser with `POST /api/browsers`, then reports its
/// id). Runs until aborted or the socket ends.
async fn window(port: u16, token: String, terminal: String) {
    let auth = format!("Bearer {token}");
    let mut req = format!("ws://127.0.0.1:{port}/api/ui/socket").into_client_request().unwrap();
    req.headers_mut().insert("authorization", HeaderValue::from_str(&auth).unwrap());
    let (mut ws, _) = tokio_tungstenite::connect_async(req).await.expect("ui socket");
    let panes = Mutex::new(vec![json!({"id": "p1", "handle": terminal, "kind": "terminal", "terminal": terminal,
        "title": "", "url": null, "mode": null, "minimized": false})]);
    let state = |p: &Vec<Value>| json!({"type": "state", "active": true, "focused": "p1", "panes": p}).to_string();
    let first = state(&panes.lock().unwrap());
    ws.send(Message::Text(first.into())).await.unwrap();
    while let Some(Ok(Message::Text(t))) = ws.next().await {
        let m: Value = serde_json::from_str(t.as_str()).unwrap();
        let reply = match (m["type"].as_str(), m["verb"].as_str()) {
            (Some("handles"), _) => {
                for p in panes.lock().unwrap().iter_mut() {
                    if let Some(h) = m["assign"][p["id"].as_str().unwrap()].as_str() {
                        p["handle"] = h.into();
                    }
                }
                None
            }
            (Some("request"), Some("open")) => {
                let viewport = json!({"mode": "fixed", "width": VIEWPORT.0, "height": VIEWPORT.1, "dpr": 1});
                let body = json!({"url": m["url"], "viewport": viewport}).to_string();
                let headers = [("Authorization", auth.as_str()), ("Content-Type", "application/json")];
                let r = http(port, "POST", "/api/browsers", &headers, &body).await;
                let (status, b) = (r.status, serde_json::from_str::<Value>(&r.body).unwrap_or(Value::Null));
                assert_eq!(status, 201, "create browser: {b}");
                let mut p = panes.lock().unwrap();
                let id = format!("p{}", p.len() + 1);
                p.push(json!({"id": id, "handle": m["handle"], "kind": "browser", "terminal": null, "title": "",
                    "url": m["url"], "mode": m["mode"], "minimized": false, "browser": b["id"]}));
                Some(json!({"type": "reply", "id": m["id"], "ok": true, "pane": id}))
            }
            (Some("request"), _) => {
                Some(json!({"type": "reply", "id": m["id"], "ok": false, "code": "refused", "message": "bench window"}))
            }
            _ => None,
        };
        let report = state(&panes.lock().unwrap());
        if ws.send(Message::Text(report.into())).await.is_err() {
            return;
        }
        if let Some(r) = reply {
            if ws.send(Message::Text(r.to_string().into())).await.is_err() {
                return;
            }
        }
    }
}
