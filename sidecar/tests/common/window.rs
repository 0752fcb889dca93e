//! A stand-in window on the UI channel (protocol §10), shared by `tests/control.rs` and
//! `tests/agent.rs`: it reports its panes and applies relayed requests as the UI would (a
//! split adds a terminal pane; an open adds a browser pane, and for a screencast creates its
//! real browser with `POST /api/browsers` (isolated when asked) and reports that id; close removes the pane and
//! deletes its terminal).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::Message;

use super::{parse_response, Resp, Sidecar, Ws, HANG};

/// The window: its panes (as reported) and the task serving its socket.
pub struct TestWindow {
    pub panes: Arc<Mutex<Vec<Value>>>,
    /// Messages of other types than `handles` and `request` (e.g. `project_trust`), in order.
    pub told: Arc<Mutex<Vec<Value>>>,
    task: tokio::task::JoinHandle<()>,
}

impl TestWindow {
    /// Attaches a window whose first pane shows terminal `first`.
    pub async fn attach(sc: &Sidecar, first: &str) -> TestWindow {
        let url = format!("ws://127.0.0.1:{}/api/ui/socket", sc.port);
        let mut req = url.into_client_request().unwrap();
        req.headers_mut().insert("authorization", HeaderValue::from_str(&sc.bearer()).unwrap());
        let stream = tokio::net::TcpStream::connect(("127.0.0.1", sc.port)).await.unwrap();
        let (ws, _) = tokio_tungstenite::client_async(req, stream).await.expect("ui socket");
        let panes = Arc::new(Mutex::new(vec![terminal_pane("p1", first)]));
        let (port, token) = (sc.port, sc.token.clone());
        let (p, told) = (panes.clone(), Arc::new(Mutex::new(Vec::new())));
        let t = told.clone();
        let task = tokio::spawn(async move { window_loop(ws, p, t, port, token).await });
        TestWindow { panes, told, task }
    }

    /// The handles of the panes reported.
    pub fn handles(&self) -> Vec<String> {
        self.panes.lock().unwrap().iter().filter_map(|p| p["handle"].as_str().map(String::from)).collect()
    }

    /// The sidecar browser id the pane with this handle reports.
    pub fn browser_of(&self, handle: &str) -> Option<String> {
        let panes = self.panes.lock().unwrap();
        panes.iter().find(|p| p["handle"] == handle).and_then(|p| p["browser"].as_str().map(String::from))
    }
}

impl Drop for TestWindow {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A terminal pane's report.
pub fn terminal_pane(id: &str, terminal: &str) -> Value {
    json!({"id": id, "handle": terminal, "kind": "terminal", "terminal": terminal, "title": "", "url": null, "mode": null, "minimized": false})
}

async fn window_loop(
    mut ws: Ws,
    panes: Arc<Mutex<Vec<Value>>>,
    told: Arc<Mutex<Vec<Value>>>,
    port: u16,
    token: String,
) {
    let state =
        |panes: &Vec<Value>| json!({"type": "state", "active": true, "focused": "p1", "panes": panes}).to_string();
    let first = state(&panes.lock().unwrap());
    ws.send(Message::Text(first.into())).await.unwrap();
    let mut next = 2;
    while let Some(Ok(Message::Text(t))) = ws.next().await {
        let m: Value = serde_json::from_str(t.as_str()).unwrap();
        let reply = match m["type"].as_str() {
            Some("handles") => {
                let assign: BTreeMap<String, String> = serde_json::from_value(m["assign"].clone()).unwrap();
                for p in panes.lock().unwrap().iter_mut() {
                    if let Some(h) = assign.get(p["id"].as_str().unwrap()) {
                        p["handle"] = h.clone().into();
                    }
                }
                None
            }
            Some("request") => {
                let id = format!("p{next}");
                next += 1;
                // A screencast pane starts its browser first, as ScreencastRuntime does.
                let browser = match (m["verb"].as_str(), m["mode"].as_str()) {
                    (Some("open"), Some("screencast" | "popout")) => {
                        let isolated = m["isolated"].as_bool().unwrap_or(false);
                        let body = json!({"url": m["url"], "isolated": isolated});
                        let r = call(port, &token, "POST", "/api/browsers", &body).await;
                        assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
                        r.json()["id"].clone()
                    }
                    _ => Value::Null,
                };
                let mut ps = panes.lock().unwrap();
                let pane_id = match m["verb"].as_str().unwrap() {
                    "split" => {
                        ps.push(terminal_pane(&id, m["terminal"].as_str().unwrap()));
                        id
                    }
                    "open" => {
                        ps.push(json!({"id": id, "handle": m["handle"], "kind": "browser", "terminal": null,
                            "title": "", "url": m["url"], "mode": m["mode"], "minimized": false, "browser": browser}));
                        id
                    }
                    "pane" => {
                        let target = m["pane"].as_str().unwrap().to_string();
                        if m["action"] == "close" {
                            let gone: Vec<Value> = ps.iter().filter(|p| p["id"] == target.as_str()).cloned().collect();
                            ps.retain(|p| p["id"] != target.as_str());
                            for g in gone {
                                if let Some(t) = g["terminal"].as_str() {
                                    delete_terminal(port, &token, t);
                                }
                            }
                        }
                        target
                    }
                    v => panic!("unknown verb {v}"),
                };
                Some(json!({"type": "reply", "id": m["id"], "ok": true, "pane": pane_id}))
            }
            _ => {
                told.lock().unwrap().push(m);
                None
            }
        };
        let report = state(&panes.lock().unwrap());
        ws.send(Message::Text(report.into())).await.unwrap();
        if let Some(r) = reply {
            ws.send(Message::Text(r.to_string().into())).await.unwrap();
        }
    }
}

/// An authorized JSON request from inside the window loop (which has no `Sidecar`).
async fn call(port: u16, token: &str, method: &str, path: &str, body: &Value) -> Resp {
    let body = body.to_string();
    let mut s = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).await.unwrap();
    let mut buf = Vec::new();
    tokio::time::timeout(HANG, s.read_to_end(&mut buf)).await.expect("http response").unwrap();
    parse_response(&buf)
}

/// `DELETE /api/terminals/{id}` over a blocking socket (the window loop is not async-aware of the harness).
fn delete_terminal(port: u16, token: &str, id: &str) {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    let req = format!(
        "DELETE /api/terminals/{id} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    );
    s.write_all(req.as_bytes()).unwrap();
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
}
