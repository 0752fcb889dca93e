//! Ports and previews of a remote (protocol §6, §8, §11; issue 28 item 4) against a real
//! remote: OpenSSH's `sshd` in a private network namespace (`common::sshd`), this build's
//! `porthole-sidecar` as the remote daemon, real PTYs and real `python3` servers started in a
//! remote terminal. The same port number is served on the laptop by a different server the
//! test starts, so every body says which side answered.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::remote::{wait_remote, ws_at};
use common::sshd::{TestSshd, HOST_ALIAS};
use common::*;
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::Message;

const BIN: &str = env!("CARGO_BIN_EXE_porthole-sidecar");
const APP: &str = "http://127.0.0.1:4000";
const LAPTOP_PAGE: &str = "served-by-the-laptop";

fn local_sidecar(config: &std::path::Path) -> Sidecar {
    Sidecar::start_with_env(
        &[],
        &[
            ("PORTHOLE_SSH_CONFIG", config.to_str().unwrap()),
            ("PORTHOLE_REMOTE_BIN", BIN),
            ("PORTHOLE_PROXY_IDLE_MS", "5000"),
        ],
    )
}

async fn connect(sc: &Sidecar) -> Value {
    let r = sc.req("POST", "/api/remotes", Some(&json!({"host": HOST_ALIAS}))).await;
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    r.json()
}

/// A laptop-side HTTP server on 127.0.0.1 (a free port): every request gets [`LAPTOP_PAGE`]
/// (also its title). Its port and how many requests it has had.
async fn laptop_server() -> (u16, Arc<AtomicUsize>) {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = l.local_addr().unwrap().port();
    let hits = Arc::new(AtomicUsize::new(0));
    let counted = hits.clone();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = l.accept().await {
            let counted = counted.clone();
            tokio::spawn(async move {
                if request_head(&mut s).await.is_none() {
                    return;
                }
                counted.fetch_add(1, Ordering::SeqCst);
                let page = format!("<title>{LAPTOP_PAGE}</title>{LAPTOP_PAGE}");
                let resp = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{page}",
                    page.len()
                );
                let _ = s.write_all(resp.as_bytes()).await;
            });
        }
    });
    (port, hits)
}

/// A port free on the laptop now (nothing is left listening on it here).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// `GET path` on the proxy port `port` (one connection); `None` when nothing answered.
async fn http(port: u16, path: &str) -> Option<Resp> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).await.ok()?;
    let req = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
    s.write_all(req.as_bytes()).await.unwrap();
    let mut buf = Vec::new();
    tokio::time::timeout(HANG, s.read_to_end(&mut buf)).await.expect("http response").ok();
    (!buf.is_empty()).then(|| parse_response(&buf))
}

/// A grant for `url` (through `remote` when set); its JSON and proxy port.
async fn grant(sc: &Sidecar, url: &str, remote: Option<&str>) -> (Value, u16) {
    let mut body = json!({"url": url, "embedders": [APP]});
    if let Some(r) = remote {
        body["remote"] = json!(r);
    }
    let r = sc.req("POST", "/api/proxy/grants", Some(&body)).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    let v = r.json();
    let port = v["origin"].as_str().unwrap().trim_start_matches("http://127.0.0.1:").parse().unwrap();
    (v, port)
}

/// A remote terminal running `sh` in `dir`, with `http.server` on `http_port` and the
/// WebSocket echo on `ws_port` started in it (both on the remote's 127.0.0.1); its id and
/// socket.
async fn remote_servers(sc: &Sidecar, dir: &std::path::Path, http_port: u16, ws_port: u16) -> (String, Ws) {
    let body = json!({"cols": 200, "rows": 24, "command": ["sh"], "cwd": dir});
    let r = sc.req("POST", "/api/remotes/r1/api/terminals", Some(&body)).await;
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    let id = r.json()["id"].as_str().unwrap().to_string();
    let mut ws = ws_at(sc, &format!("/api/remotes/r1/api/terminals/{id}/socket")).await;
    let mut seen = Seen::default();
    let echo = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/ws_echo.py");
    let line = format!(
        "cd {} && python3 {echo} {ws_port} & python3 -m http.server {http_port} --bind 127.0.0.1\r",
        dir.display()
    );
    send_input(&mut ws, line.as_bytes()).await;
    read_until(&mut ws, &mut seen, true, |s| contains(&s.bytes, b"Serving HTTP") && contains(&s.bytes, b"WS-READY"))
        .await;
    (id, ws)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_port_is_listed_and_framed_through_the_tunnel_websockets_included() {
    let mut remote = TestSshd::start(&[]);
    let sc = local_sidecar(&remote.ssh_config);
    let first = connect(&sc).await;
    let dir = temp_dir("remote-previews");
    std::fs::write(dir.join("remote-side-marker.txt"), "x").unwrap();
    // The same port number on both sides: the laptop's answers LAPTOP_PAGE.
    let (port, _) = laptop_server().await;
    let ws_port = free_port();
    let (id, _term) = remote_servers(&sc, &dir, port, ws_port).await;

    // 1. The remote terminal's ports, through the forward (the remote daemon's own scan).
    let start = Instant::now();
    loop {
        let r = sc.req("GET", &format!("/api/remotes/r1/api/terminals/{id}/ports"), None).await;
        assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
        let ports: Vec<u64> = r.json()["ports"].as_array().unwrap().iter().filter_map(|p| p["port"].as_u64()).collect();
        if ports.contains(&u64::from(port)) {
            break;
        }
        assert!(start.elapsed() < HANG, "port {port} never listed: {ports:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // 2. An iframe grant with the link: the remote's listing, never the laptop's page.
    let url = format!("http://localhost:{port}/");
    let (v, proxy) = grant(&sc, &url, Some("r1")).await;
    assert_eq!(v["remote"], "r1", "{v}");
    let r = http(proxy, "/").await.expect("an answer");
    let body = String::from_utf8_lossy(&r.body).to_string();
    assert_eq!(r.status, 200, "{body}");
    assert!(body.contains("remote-side-marker.txt") && !body.contains(LAPTOP_PAGE), "{body}");
    // The same origin without the link is another grant, and the laptop's server.
    let (local, local_proxy) = grant(&sc, &url, None).await;
    assert_ne!(local["grant"], v["grant"]);
    assert!(local.get("remote").is_none(), "{local}");
    let r = http(local_proxy, "/").await.expect("an answer");
    assert!(String::from_utf8_lossy(&r.body).contains(LAPTOP_PAGE));
    // Asking again finds the same remote grant; an unknown link is 404.
    assert_eq!(grant(&sc, &url, Some("r1")).await.0["grant"], v["grant"]);
    let r = sc.req("POST", "/api/proxy/grants", Some(&json!({"url": url, "remote": "r9"}))).await;
    assert_eq!(r.status, 404, "{}", String::from_utf8_lossy(&r.body));

    // 3. A WebSocket (HMR) through the remote grant reaches the remote's echo server.
    let (_, ws_proxy) = grant(&sc, &format!("http://localhost:{ws_port}/"), Some("r1")).await;
    let own = format!("http://127.0.0.1:{ws_proxy}");
    let mut req = format!("ws://127.0.0.1:{ws_proxy}/hmr").into_client_request().unwrap();
    req.headers_mut().insert("origin", HeaderValue::from_str(&own).unwrap());
    let stream = TcpStream::connect(("127.0.0.1", ws_proxy)).await.unwrap();
    let (mut ws, _) = tokio_tungstenite::client_async(req, stream).await.expect("upgrade through the remote grant");
    for i in 0..3 {
        ws.send(Message::Text(format!("ping {i}").into())).await.unwrap();
        let m = tokio::time::timeout(HANG, ws.next()).await.expect("echo").unwrap().unwrap();
        assert_eq!(m.into_text().unwrap().as_str(), format!("remote-echo:ping {i}"));
    }
    drop(ws);

    // 4. The link down: the proxy's normal upstream error page, at once (not a hang).
    remote.stop_listener();
    send_signal(first["ssh_pid"].as_i64().unwrap() as u32, 9);
    wait_remote(&sc, "reconnecting", |v| v["state"] == "reconnecting").await;
    let asked = Instant::now();
    let r = http(proxy, "/").await.expect("an answer");
    let body = String::from_utf8_lossy(&r.body).to_string();
    assert_eq!(r.status, 502, "{body}");
    assert!(body.contains("couldn't connect to the dev server") && !body.contains(LAPTOP_PAGE), "{body}");
    assert!(asked.elapsed() < Duration::from_secs(3), "the error took {:?}", asked.elapsed());
    // Back: the same grant reaches the same remote server (it outlived the link).
    remote.restart_listener();
    assert_eq!(sc.req("POST", "/api/remotes/r1/reconnect", None).await.status, 200);
    wait_remote(&sc, "connected", |v| v["state"] == "connected").await;
    let r = http(proxy, "/").await.expect("an answer");
    assert!(String::from_utf8_lossy(&r.body).contains("remote-side-marker.txt"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The browser's `GET` answer.
async fn browser_info(sc: &Sidecar, id: &str) -> Value {
    let r = sc.req("GET", &format!("/api/browsers/{id}"), None).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    r.json()
}

/// Polls the browser (bounded) until its active tab's title satisfies `done`; the answer.
async fn until_title(sc: &Sidecar, id: &str, what: &str, done: impl Fn(&str) -> bool) -> Value {
    let start = Instant::now();
    loop {
        let v = browser_info(sc, id).await;
        if done(v["title"].as_str().unwrap_or("")) {
            return v;
        }
        assert!(start.elapsed() < HANG, "the page never became {what}: {v}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn navigate(sc: &Sidecar, id: &str, url: &str) {
    let r = sc.req("POST", &format!("/api/browsers/{id}/navigate"), Some(&json!({ "url": url }))).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_browser_loads_the_remotes_localhost_and_never_the_laptops() {
    let remote = TestSshd::start(&[]);
    let sc = local_sidecar(&remote.ssh_config);
    connect(&sc).await;
    let dir = temp_dir("remote-browser");
    // Port `port`: served on both sides (the laptop's counts its requests); `laptop_only`:
    // served on the laptop alone.
    let (port, laptop_hits) = laptop_server().await;
    let (laptop_only, laptop_only_hits) = laptop_server().await;
    let (_id, _term) = remote_servers(&sc, &dir, port, free_port()).await;

    let listing = "Directory listing for /";
    let body = json!({"url": format!("http://localhost:{port}/"), "remote": "r1"});
    let r = sc.req("POST", "/api/browsers", Some(&body)).await;
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    let id = r.json()["id"].as_str().unwrap().to_string();
    let v = until_title(&sc, &id, "the remote's listing", |t| t == listing).await;
    assert_eq!((v["remote"].as_str(), v["isolated"].as_bool()), (Some("r1"), Some(true)), "{v}");

    // A port only the laptop serves: the page fails (the tunnel's connect is refused on the
    // remote); the laptop's server is never asked.
    navigate(&sc, &id, &format!("http://localhost:{laptop_only}/")).await;
    let v = until_title(&sc, &id, "something else", |t| t != listing).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let v2 = browser_info(&sc, &id).await;
    assert!(v2["title"] != LAPTOP_PAGE && v["title"] != LAPTOP_PAGE, "{v2}");

    // An address literal goes through the tunnel too.
    navigate(&sc, &id, &format!("http://127.0.0.1:{port}/")).await;
    until_title(&sc, &id, "the remote's listing again", |t| t == listing).await;
    navigate(&sc, &id, &format!("http://127.0.0.1:{laptop_only}/")).await;
    until_title(&sc, &id, "something else again", |t| t != listing).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    // A relaunch (as pop-out and pop-in do) keeps the route.
    let again = json!({ "url": format!("http://localhost:{port}/") });
    let r = sc.req("POST", &format!("/api/browsers/{id}/relaunch"), Some(&again)).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    until_title(&sc, &id, "the remote's listing after a relaunch", |t| t == listing).await;
    assert_eq!(laptop_hits.load(Ordering::SeqCst), 0, "the remote browser reached the laptop's server");
    assert_eq!(laptop_only_hits.load(Ordering::SeqCst), 0, "the remote browser reached the laptop's server");

    // A kept profile is refused for a remote browser; an unknown link is 404.
    let body = json!({"url": "http://localhost:1/", "remote": "r1", "profile": "k"});
    assert_eq!(sc.req("POST", "/api/browsers", Some(&body)).await.status, 400);
    let body = json!({"url": "http://localhost:1/", "remote": "r9"});
    assert_eq!(sc.req("POST", "/api/browsers", Some(&body)).await.status, 404);
    assert_eq!(sc.req("DELETE", &format!("/api/browsers/{id}"), None).await.status, 204);
    let _ = std::fs::remove_dir_all(&dir);
}
