//! Browser-suite helpers shared by `tests/browser.rs` and `tests/viewer.rs`: a page server
//! the test starts, browser creation, viewer sockets and waits bounded by [`HANG`].

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_tungstenite::tungstenite::Message;

use super::{Sidecar, HANG};

/// A viewer socket (client side).
pub type ViewWs = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// Starts a test page server on its own thread and runtime, answering `GET path` with
/// `pages(path)` as HTML (a path ending `.json` as JSON, `.css` as CSS; 404 for `None`); returns its base URL (`http://127.0.0.1:P`).
pub fn serve(pages: fn(&str) -> Option<String>) -> String {
    serve_raw(move |head| {
        let path = head.split_whitespace().nth(1).unwrap_or("/").split('?').next().unwrap_or("/").to_string();
        let (status, body) = match pages(&path) {
            Some(b) => ("200 OK", b),
            None => ("404 Not Found", "not found".to_string()),
        };
        let ct = match path.rsplit_once('.').map(|(_, x)| x) {
            Some("json") => "application/json",
            Some("css") => "text/css",
            _ => "text/html; charset=utf-8",
        };
        format!(
            "HTTP/1.1 {status}\r\nContent-Type: {ct}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
    })
}

/// Starts a test server on its own thread and runtime that answers each request with
/// `answer(head)`: the whole HTTP/1.1 response for the request's head (request line and
/// headers, at most 8 KiB), the connection closed after it; returns its base URL.
pub fn serve_raw(answer: impl Fn(&str) -> String + Send + Sync + Copy + 'static) -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    l.set_nonblocking(true).unwrap();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async move {
            let l = tokio::net::TcpListener::from_std(l).unwrap();
            loop {
                let Ok((mut s, _)) = l.accept().await else { continue };
                tokio::spawn(async move {
                    let mut buf = vec![0u8; 8192];
                    let mut n = 0;
                    while !buf[..n].windows(4).any(|w| w == b"\r\n\r\n") {
                        match s.read(&mut buf[n..]).await {
                            Ok(0) | Err(_) => return,
                            Ok(k) => n += k,
                        }
                        if n == buf.len() {
                            return;
                        }
                    }
                    let resp = answer(&String::from_utf8_lossy(&buf[..n]));
                    let _ = s.write_all(resp.as_bytes()).await;
                });
            }
        });
    });
    format!("http://127.0.0.1:{port}")
}

/// Creates a browser at `url` with `viewport`; returns its id.
pub async fn create_at(sc: &Sidecar, url: &str, viewport: Value) -> String {
    let r = sc.req("POST", "/api/browsers", Some(&json!({"url": url, "viewport": viewport}))).await;
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    r.json()["id"].as_str().unwrap().to_string()
}

/// A fixed viewport body.
pub fn fixed(w: u32, h: u32, dpr: f64) -> Value {
    json!({"mode":"fixed","width":w,"height":h,"dpr":dpr})
}

/// A single-use viewer grant URL for browser `id`.
pub async fn grant(sc: &Sidecar, id: &str) -> String {
    let r = sc.req("POST", &format!("/api/browsers/{id}/viewer"), None).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    r.json()["url"].as_str().unwrap().to_string()
}

/// Opens a viewer socket at a grant URL.
pub async fn try_connect(url: &str) -> Result<ViewWs, tokio_tungstenite::tungstenite::Error> {
    tokio_tungstenite::connect_async(url).await.map(|(ws, _)| ws)
}

/// A fresh grant, redeemed: a connected viewer socket.
pub async fn view(sc: &Sidecar, id: &str) -> ViewWs {
    let url = grant(sc, id).await;
    try_connect(&url).await.expect("viewer socket")
}

/// Sends one JSON text message.
pub async fn send(ws: &mut ViewWs, v: Value) {
    ws.send(Message::Text(v.to_string().into())).await.unwrap();
}

/// Reads until a text message satisfies `pred`; returns it. Frames are skipped.
pub async fn until_json(ws: &mut ViewWs, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
    let fut = async {
        loop {
            match ws.next().await {
                Some(Ok(Message::Text(t))) => {
                    let v: Value = serde_json::from_str(t.as_str()).unwrap();
                    if pred(&v) {
                        return v;
                    }
                }
                Some(Ok(_)) => {}
                other => panic!("socket ended while waiting for {what}: {other:?}"),
            }
        }
    };
    tokio::time::timeout(HANG, fut).await.unwrap_or_else(|_| panic!("timed out waiting for {what}"))
}

/// Reads until a binary frame arrives; returns it.
pub async fn until_frame(ws: &mut ViewWs) -> Vec<u8> {
    let fut = async {
        loop {
            match ws.next().await {
                Some(Ok(Message::Binary(b))) => return b.to_vec(),
                Some(Ok(_)) => {}
                other => panic!("socket ended while waiting for a frame: {other:?}"),
            }
        }
    };
    tokio::time::timeout(HANG, fut).await.expect("a frame")
}

/// Waits until the socket is closed by the server; returns the close code if one was sent.
pub async fn until_closed(ws: &mut ViewWs) -> Option<u16> {
    let fut = async {
        loop {
            match ws.next().await {
                Some(Ok(Message::Close(f))) => return f.map(|f| u16::from(f.code)),
                Some(Ok(_)) => {}
                None | Some(Err(_)) => return None,
            }
        }
    };
    tokio::time::timeout(HANG, fut).await.expect("the server to close the socket")
}

/// `GET /api/browsers/{id}` (must answer 200).
pub async fn info(sc: &Sidecar, id: &str) -> Value {
    let r = sc.req("GET", &format!("/api/browsers/{id}"), None).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    r.json()
}

/// Polls GET until the active tab's title satisfies `pred`; returns the title.
pub async fn until_title(sc: &Sidecar, id: &str, pred: impl Fn(&str) -> bool) -> String {
    let deadline = tokio::time::Instant::now() + HANG;
    loop {
        let v = info(sc, id).await;
        let t = v["title"].as_str().unwrap_or("").to_string();
        if pred(&t) {
            return t;
        }
        assert!(tokio::time::Instant::now() < deadline, "title never matched; last {t:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Polls GET until the measured viewport is `want` (the renderer applies metrics
/// asynchronously); fails with the last value after the hang bound.
pub async fn until_viewport(sc: &Sidecar, id: &str, want: Value) {
    let deadline = tokio::time::Instant::now() + HANG;
    loop {
        let v = info(sc, id).await["viewport"].clone();
        if v == want {
            return;
        }
        assert!(tokio::time::Instant::now() < deadline, "viewport never became {want}; last {v}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A left press and release at (x, y) CSS px.
pub async fn click(ws: &mut ViewWs, x: f64, y: f64) {
    send(ws, json!({"type":"input_mouse","event":"down","x":x,"y":y,"button":"left","clicks":1})).await;
    send(ws, json!({"type":"input_mouse","event":"up","x":x,"y":y,"button":"left","clicks":1})).await;
}

/// A key down (typing `text`) and its up.
pub async fn key(ws: &mut ViewWs, key: &str, code: &str, text: &str, modifiers: i64) {
    send(ws, json!({"type":"input_keyboard","event":"down","key":key,"code":code,"text":text,"modifiers":modifiers}))
        .await;
    send(ws, json!({"type":"input_keyboard","event":"up","key":key,"code":code,"text":"","modifiers":modifiers})).await;
}

/// `DELETE /api/browsers/{id}` (must answer 204).
pub async fn delete(sc: &Sidecar, id: &str) {
    let r = sc.req("DELETE", &format!("/api/browsers/{id}"), None).await;
    assert_eq!(r.status, 204);
}

/// Chromium's own list of targets (`/json/list` on its DevTools port, read from browser
/// `id`'s profile): what it made of the page, independently of the sidecar.
pub fn chromium_targets(sc: &Sidecar, id: &str) -> Vec<Value> {
    use std::io::{Read, Write};
    let dir = sc.home.join(".local/share/porthole/browsers");
    let profile = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .find(|e| e.file_name().to_string_lossy().ends_with(&format!("-{id}")))
        .unwrap_or_else(|| panic!("no profile of {id} in {}", dir.display()))
        .path();
    let port = std::fs::read_to_string(profile.join("DevToolsActivePort")).unwrap();
    let port = port.lines().next().unwrap().trim().to_string();
    let mut s = std::net::TcpStream::connect(format!("127.0.0.1:{port}")).unwrap();
    s.set_read_timeout(Some(HANG)).unwrap();
    write!(s, "GET /json/list HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n").unwrap();
    // Chromium keeps the connection open: read the head, then Content-Length bytes.
    let mut got = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    loop {
        let n = s.read(&mut buf).unwrap();
        assert!(n > 0, "closed early: {}", String::from_utf8_lossy(&got));
        got.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&got).into_owned();
        let Some(end) = text.find("\r\n\r\n") else { continue };
        let len: usize = text[..end]
            .lines()
            .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().parse().unwrap()))
            .expect(&text);
        if got.len() >= end + 4 + len {
            return serde_json::from_slice(&got[end + 4..end + 4 + len]).unwrap_or_else(|e| panic!("{e}: {text}"));
        }
    }
}
