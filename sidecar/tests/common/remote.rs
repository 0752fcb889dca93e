//! What the remote workspace tests (`remote.rs`, `remote_previews.rs`) share: the forwarded
//! WebSocket and the wait for a link's state.

use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;

use super::{Sidecar, Ws, HANG};

/// Opens a WebSocket at `path` on the local sidecar (bearer token).
pub async fn ws_at(sc: &Sidecar, path: &str) -> Ws {
    let mut req = format!("ws://127.0.0.1:{}{path}", sc.port).into_client_request().unwrap();
    req.headers_mut().insert("authorization", HeaderValue::from_str(&sc.bearer()).unwrap());
    let stream = TcpStream::connect(("127.0.0.1", sc.port)).await.unwrap();
    tokio_tungstenite::client_async(req, stream).await.expect("forwarded websocket").0
}

/// Polls `GET /api/remotes/r1` (bounded by HANG) until `done` holds; the last answer.
pub async fn wait_remote(sc: &Sidecar, what: &str, done: impl Fn(&Value) -> bool) -> Value {
    let start = Instant::now();
    loop {
        let v = sc.req("GET", "/api/remotes/r1", None).await.json();
        if done(&v) {
            return v;
        }
        assert!(start.elapsed() < HANG, "the link never became {what}: {v}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
