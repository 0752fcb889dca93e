//! Page load of 300 ES modules, direct vs through the iframe proxy, in headless Chromium.
//!
//! Run: `cargo xtask bench proxy` (or `cargo run --release -p sidecar --example bench_proxy`).
//! Starts a local static server (a page whose module imports `BENCH_MODULES` = 300 modules,
//! every response `Cache-Control: no-store`), the real `porthole-sidecar`, and Debian's
//! `/usr/bin/chromium` (`BENCH_CHROMIUM` to override) driven over the DevTools protocol. Each
//! round loads the page directly and through a proxy grant (alternating which goes first), the
//! browser cache disabled; the time is the page's own `performance.now()` when the last module
//! has run. Prints plain `name value` lines:
//!
//! - `proxy.direct_ms`, `proxy.proxied_ms`: medians over `BENCH_ROUNDS` (11) rounds;
//! - `proxy.ratio`: proxied ÷ direct (target ≤ 1.15).

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use bytes::Bytes;
use common::{env_usize, http, loopback_port, median, start_sidecar};
use futures_util::{SinkExt, StreamExt};
use http_body_util::Full;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use serde_json::{json, Value};
use tokio::net::{TcpListener, TcpStream};
use tokio_tungstenite::tungstenite::Message;

/// The static site: `/` (HTML), `/main.js` (imports every module), `/m/N.js`.
fn site(path: &str, modules: usize) -> Option<(&'static str, String)> {
    if path == "/" {
        return Some((
            "text/html; charset=utf-8",
            "<!doctype html><html><head><meta charset=utf-8><title>bench</title>\
             <script type=module src=\"/main.js\"></script></head><body><p>bench</p></body></html>"
                .into(),
        ));
    }
    if path == "/main.js" {
        let mut s = String::new();
        for i in 0..modules {
            s += &format!("import {{ v{i} }} from \"/m/{i}.js\";\n");
        }
        s += "let sum = 0;\n";
        for i in 0..modules {
            s += &format!("sum += v{i}.length;\n");
        }
        s += "window.__sum = sum;\nwindow.__done = performance.now();\n";
        return Some(("text/javascript", s));
    }
    let n: usize = path.strip_prefix("/m/")?.strip_suffix(".js")?.parse().ok()?;
    if n >= modules {
        return None;
    }
    // About 1 KiB per module, like a small source file.
    let filler = format!("// module {n}: {}\n", "x".repeat(64)).repeat(14);
    Some(("text/javascript", format!("{filler}export const v{n} = \"{n}\";\n")))
}

async fn static_server(modules: usize) -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = l.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((s, _)) = l.accept().await {
            let _ = s.set_nodelay(true);
            tokio::spawn(async move {
                let svc = service_fn(move |req: Request<hyper::body::Incoming>| async move {
                    let r = match site(req.uri().path(), modules) {
                        Some((ct, body)) => Response::builder()
                            .header("content-type", ct)
                            .header("cache-control", "no-store")
                            .body(Full::new(Bytes::from(body))),
                        None => Response::builder().status(404).body(Full::new(Bytes::new())),
                    };
                    Ok::<_, std::convert::Infallible>(r.unwrap())
                });
                let _ = hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(s), svc).await;
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

struct Cdp {
    ws: tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<TcpStream>>,
    next: u64,
}

impl Cdp {
    async fn call(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = self.next;
        let msg = json!({"id": id, "method": method, "params": params}).to_string();
        self.ws.send(Message::Text(msg.into())).await.unwrap();
        loop {
            let m = tokio::time::timeout(Duration::from_secs(30), self.ws.next())
                .await
                .unwrap_or_else(|_| panic!("CDP {method}: no answer in 30 s"))
                .expect("CDP socket closed")
                .expect("CDP socket error");
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

    /// Loads `url` after a blank page; returns the page's `performance.now()` when its last
    /// module ran (milliseconds since the navigation started).
    async fn load(&mut self, url: &str) -> f64 {
        self.call("Page.navigate", json!({"url": "about:blank"})).await;
        while self.eval("location.href").await != "about:blank" {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        self.call("Page.navigate", json!({"url": url})).await;
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        loop {
            let v = self.eval("(location.href.startsWith('http') && window.__done) || 0").await;
            if let Some(ms) = v.as_f64().filter(|ms| *ms > 0.0) {
                return ms;
            }
            assert!(std::time::Instant::now() < deadline, "{url} did not finish loading");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

#[tokio::main]
async fn main() {
    let rounds = env_usize("BENCH_ROUNDS", 11);
    let modules = env_usize("BENCH_MODULES", 300);
    let chromium = std::env::var("BENCH_CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    let site_port = static_server(modules).await;
    let direct_url = format!("http://127.0.0.1:{site_port}/");

    // The sidecar and a grant (with an embedder chain, so the page is instrumented).
    let home = std::env::temp_dir().join(format!("porthole-bench-proxy-{}", std::process::id()));
    std::fs::create_dir_all(&home).unwrap();
    let sc = start_sidecar(&home);
    let body = json!({"url": direct_url, "embedders": [format!("http://127.0.0.1:{}", sc.port)]});
    let (status, grant) = sc.request("POST", "/api/proxy/grants", Some(body)).await;
    assert_eq!(status, 200, "grant refused: {grant}");
    let proxied_url = grant["url"].as_str().unwrap().to_string();
    let proxy_port = loopback_port(grant["origin"].as_str().unwrap());
    let page = http(proxy_port, "GET", "/", &[], "").await.body;
    assert!(page.contains("__porthole_shim"), "the proxied page is not instrumented: {page}");

    // Headless Chromium over the DevTools protocol.
    let profile = home.join("chromium");
    let mut chrome = Command::new(&chromium)
        .args(["--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check"])
        .arg("--remote-debugging-port=0")
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("about:blank")
        .env("HOME", &home)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("start {chromium}: {e}"));
    let stderr = chrome.stderr.take().unwrap();
    let _chrome = Killed(chrome);
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
    let devtools_port: u16 =
        browser_ws.trim_start_matches("ws://127.0.0.1:").split('/').next().unwrap().parse().unwrap();
    let page_ws = loop {
        let list = http(devtools_port, "GET", "/json/list", &[], "").await.body;
        let list: Value = serde_json::from_str(&list).unwrap_or(Value::Null);
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
    cdp.call("Page.enable", json!({})).await;
    cdp.call("Network.enable", json!({})).await;
    cdp.call("Network.setCacheDisabled", json!({"cacheDisabled": true})).await;

    // Warm-up (connections, compile caches) once each, then alternating rounds.
    cdp.load(&direct_url).await;
    cdp.load(&proxied_url).await;
    let (mut direct, mut proxied) = (Vec::new(), Vec::new());
    for r in 0..rounds {
        if r % 2 == 0 {
            direct.push(cdp.load(&direct_url).await);
            proxied.push(cdp.load(&proxied_url).await);
        } else {
            proxied.push(cdp.load(&proxied_url).await);
            direct.push(cdp.load(&direct_url).await);
        }
        eprintln!("round {r}: direct {:.1} ms, proxied {:.1} ms", direct[r], proxied[r]);
    }
    let sum = cdp.eval("window.__sum").await;
    assert!(sum.as_f64().unwrap_or(0.0) > 0.0, "modules did not run: {sum}");
    let d = median(&mut direct);
    let p = median(&mut proxied);
    println!("proxy.modules {modules}");
    println!("proxy.rounds {rounds}");
    println!("proxy.direct_ms {d:.1}");
    println!("proxy.proxied_ms {p:.1}");
    println!("proxy.ratio {:.3}", p / d);
    drop(cdp);
    let _ = std::fs::remove_dir_all(&home);
}
