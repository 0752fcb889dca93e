//! The injected shim, run for real: an app page on one loopback origin frames a proxied page
//! (with a nested same-grant frame) in headless Chromium (`/usr/bin/chromium`, or
//! `PORTHOLE_TEST_CHROMIUM`), driven over the DevTools protocol. Checks the messages the app
//! receives (kinds, origin, `loaded`, relays from the nested frame) and that the shim obeys the
//! app's history and reload messages.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::*;
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_tungstenite::tungstenite::Message;

const PAGE: &str = r##"<!doctype html><html><head><title>Shim Test</title></head><body>
<a id=blank href="/other?x=1" target="_blank">b</a>
<a id=dl href="/file" target="_blank" download>d</a>
<a id=self href="#h" target="_self">s</a>
<iframe id=nested src="/nested"></iframe>
<script>
document.addEventListener('click', function (e) { e.preventDefault(); });
window.addEventListener('load', function () { setTimeout(function () {
  document.body.dispatchEvent(new PointerEvent('pointerdown', {bubbles: true}));
  document.getElementById('dl').click();
  document.getElementById('self').click();
  document.getElementById('blank').click();
  window.__open = window.open('/popup');
  history.pushState({}, '', '/pushed');
}, 300); });
</script></body></html>"##;

const NESTED: &str = r#"<!doctype html><title>nested</title><body><script>
window.addEventListener('load', function () { setTimeout(function () {
  window.open('/from-nested');
  document.body.dispatchEvent(new PointerEvent('pointerdown', {bubbles: true}));
}, 100); });
</script></body>"#;

/// A tiny HTTP/1.1 server answering every request with `route(path)` as HTML.
async fn html_server(route: Arc<dyn Fn(&str) -> String + Send + Sync>) -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = l.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = l.accept().await {
            let route = route.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut b = [0u8; 4096];
                while !contains(&buf, b"\r\n\r\n") {
                    match s.read(&mut b).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buf.extend_from_slice(&b[..n]),
                    }
                }
                let head = String::from_utf8_lossy(&buf).to_string();
                let path = head.split(' ').nth(1).unwrap_or("/").to_string();
                let body = route(&path);
                let resp = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nCache-Control: no-store\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = s.write_all(resp.as_bytes()).await;
                let _ = s.shutdown().await;
            });
        }
    });
    port
}

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// GET on Chromium's DevTools HTTP endpoint (it keeps connections open: read Content-Length).
async fn devtools_get(port: u16, path: &str) -> String {
    let mut s = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    s.write_all(format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n").as_bytes()).await.unwrap();
    let mut buf = Vec::new();
    let mut chunk = [0u8; 16384];
    loop {
        let n = tokio::time::timeout(HANG, s.read(&mut chunk)).await.expect("devtools read").unwrap_or(0);
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
        let text = String::from_utf8_lossy(&buf).to_string();
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let len = head.lines().find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.trim().eq_ignore_ascii_case("content-length").then(|| v.trim().parse::<usize>().ok()).flatten()
            });
            if len.is_some_and(|len| body.len() >= len) {
                return body.to_string();
            }
        }
    }
    String::from_utf8_lossy(&buf).split_once("\r\n\r\n").map(|(_, b)| b.to_string()).unwrap_or_default()
}

struct Cdp {
    ws: tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<TcpStream>>,
    next: u64,
}

impl Cdp {
    async fn call(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = self.next;
        self.ws
            .send(Message::Text(json!({"id": id, "method": method, "params": params}).to_string().into()))
            .await
            .unwrap();
        loop {
            let m = tokio::time::timeout(HANG, self.ws.next())
                .await
                .expect("CDP answer")
                .expect("CDP open")
                .expect("CDP ok");
            if let Message::Text(t) = m {
                let v: Value = serde_json::from_str(&t).unwrap();
                if v["id"] == id {
                    assert!(v.get("error").is_none(), "CDP {method}: {v}");
                    return v["result"].clone();
                }
            }
        }
    }

    async fn eval(&mut self, expr: &str) -> Value {
        self.call("Runtime.evaluate", json!({"expression": expr, "returnByValue": true})).await["result"]["value"]
            .clone()
    }

    /// The app's received messages, polled until `done` holds (bounded).
    async fn msgs_until(&mut self, what: &str, done: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        let start = Instant::now();
        loop {
            let v = self.eval("JSON.stringify(window.msgs || [])").await;
            let msgs: Vec<Value> = serde_json::from_str(v.as_str().unwrap_or("[]")).unwrap();
            if done(&msgs) {
                return msgs;
            }
            assert!(start.elapsed() < Duration::from_secs(30), "{what}: timed out; messages so far: {msgs:#?}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

fn kind(m: &Value) -> &str {
    m["data"]["kind"].as_str().unwrap_or("")
}

#[tokio::test]
async fn shim_messages_in_chromium() {
    let sc = Sidecar::start(&[]);
    let upstream =
        html_server(Arc::new(
            |path: &str| if path.starts_with("/nested") { NESTED.to_string() } else { PAGE.to_string() },
        ))
        .await;
    let frame_url: Arc<Mutex<String>> = Arc::default();
    let fu = frame_url.clone();
    let app_port = html_server(Arc::new(move |_: &str| {
        format!(
            "<!doctype html><title>app</title><script>window.msgs=[];addEventListener('message',function(e){{msgs.push({{origin:e.origin,data:e.data}})}});</script>\
             <iframe sandbox=\"allow-scripts allow-same-origin allow-forms allow-popups allow-modals allow-downloads\" src=\"{}\" width=600 height=400></iframe>",
            fu.lock().unwrap()
        )
    }))
    .await;
    let app = format!("http://127.0.0.1:{app_port}");
    let r = sc
        .req(
            "POST",
            "/api/proxy/grants",
            Some(&json!({"url": format!("http://127.0.0.1:{upstream}/page"), "embedders": [app]})),
        )
        .await;
    assert_eq!(r.status, 200);
    let g = r.json();
    let proxy = g["origin"].as_str().unwrap().to_string();
    *frame_url.lock().unwrap() = g["url"].as_str().unwrap().to_string();

    let chromium = std::env::var("PORTHOLE_TEST_CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    let home = temp_dir("chromium");
    let mut child = Command::new(&chromium)
        .args([
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--no-default-browser-check",
            "--remote-debugging-port=0",
        ])
        .arg(format!("--user-data-dir={}", home.join("profile").display()))
        .arg("about:blank")
        .env("HOME", &home)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("start {chromium}: {e}"));
    let stderr = child.stderr.take().unwrap();
    let _chrome = Killed(child);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut tx = Some(tx);
        for l in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(rest) = l.strip_prefix("DevTools listening on ") {
                if let Some(tx) = tx.take() {
                    let _ = tx.send(rest.trim().to_string());
                }
            }
        }
    });
    let browser_ws = rx.recv_timeout(Duration::from_secs(30)).expect("Chromium's DevTools line");
    let devtools: u16 = browser_ws.trim_start_matches("ws://127.0.0.1:").split('/').next().unwrap().parse().unwrap();
    let page_ws = loop {
        let list: Value = serde_json::from_str(&devtools_get(devtools, "/json/list").await).unwrap_or(Value::Null);
        if let Some(ws) = list
            .as_array()
            .and_then(|a| a.iter().find(|t| t["type"] == "page"))
            .and_then(|t| t["webSocketDebuggerUrl"].as_str())
        {
            break ws.to_string();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let (ws, _) = tokio_tungstenite::connect_async(page_ws.as_str()).await.expect("CDP page socket");
    let mut cdp = Cdp { ws, next: 0 };
    cdp.call("Page.navigate", json!({"url": format!("{app}/app.html")})).await;

    let wants_all = |m: &[Value]| {
        let has = |k: &str, url: &str| {
            m.iter().any(|x| kind(x) == k && x["data"]["url"].as_str().is_some_and(|u| u.ends_with(url)))
        };
        has("location", "/page")
            && has("location", "/pushed")
            && has("open-window", "/other?x=1")
            && has("open-window", "/popup")
            && has("open-window", "/from-nested")
            && m.iter().filter(|x| kind(x) == "pointerdown").count() >= 2
    };
    let msgs = cdp.msgs_until("shim reports", wants_all).await;
    for m in &msgs {
        assert_eq!(m["origin"], proxy.as_str(), "every message comes from the proxy origin: {m}");
        assert_eq!((m["data"]["porthole"].as_str(), m["data"]["v"].as_i64()), (Some("shim"), Some(1)), "{m}");
        assert!(["location", "pointerdown", "open-window"].contains(&kind(m)), "{m}");
        if kind(m) == "location" {
            let url = m["data"]["url"].as_str().unwrap();
            assert!(
                url == format!("{proxy}/page") || url == format!("{proxy}/pushed"),
                "only the top document reports: {m}"
            );
            assert_eq!(m["data"]["title"], "Shim Test");
            let loaded = m["data"]["loaded"].as_bool().unwrap();
            assert_eq!(loaded, url.ends_with("/page"), "loaded only on the document's own load: {m}");
        }
        if kind(m) == "open-window" {
            let url = m["data"]["url"].as_str().unwrap();
            assert!(url.starts_with(&proxy) && !url.ends_with("/file"), "absolute, no download links: {m}");
            assert!(!url.contains("#h"), "_self is not a new window: {m}");
        }
    }
    assert_eq!(cdp.eval("document.querySelector('iframe').contentWindow.length").await, 1);

    // The app drives history and reload.
    let n = msgs.len();
    let post =
        |msg: &str| format!("document.querySelector('iframe').contentWindow.postMessage({msg}, {proxy:?}); true");
    cdp.eval(&post("{porthole:'app',v:1,kind:'history',delta:-1}")).await;
    let msgs = cdp
        .msgs_until("history back", |m| {
            m[n..].iter().any(|x| {
                kind(x) == "location" && x["data"]["url"] == format!("{proxy}/page") && x["data"]["loaded"] == false
            })
        })
        .await;
    let n = msgs.len();
    // A message from the right window but with a wrong shape is ignored; reload works.
    cdp.eval(&post("{porthole:'app',v:1,kind:'history',delta:5}")).await;
    cdp.eval(&post("{porthole:'app',v:1,kind:'reload'}")).await;
    cdp.msgs_until("reload", |m| m[n..].iter().any(|x| kind(x) == "location" && x["data"]["loaded"] == true)).await;

    // A foreign frame (opaque origin, not the parent) cannot drive the shim.
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let n = cdp.msgs_until("settled", |_| true).await.len();
    let foreign = "<script>parent.frames[0].postMessage({porthole:'app',v:1,kind:'reload'},'*')</script>";
    cdp.eval(&format!(
        "var f=document.createElement('iframe'); f.src='data:text/html,'+encodeURIComponent({foreign:?}); document.body.appendChild(f); true"
    ))
    .await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let msgs = cdp.msgs_until("after the foreign message", |_| true).await;
    assert!(
        !msgs[n..].iter().any(|x| kind(x) == "location" && x["data"]["loaded"] == true),
        "a foreign reload request was obeyed: {:#?}",
        &msgs[n..]
    );
    let _ = std::fs::remove_dir_all(&home);
}
