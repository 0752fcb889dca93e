//! The injected shim, run for real: an app page on one loopback origin frames a proxied page
//! (with a nested same-grant frame) in headless Chromium (`/usr/bin/chromium`, or
//! `PORTHOLE_TEST_CHROMIUM`), driven over the DevTools protocol. Checks the messages the app
//! receives (kinds, origin, `loaded`, relays from the nested frame, `navigating` while a page is
//! left) and that the shim obeys the app's history and reload messages.

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
use tokio::sync::Notify;
use tokio_tungstenite::tungstenite::Message;

const PAGE: &str = r##"<!doctype html><html><head><title>Shim Test</title></head><body>
<a id=blank href="/other?x=1" target="_blank">b</a>
<a id=dl href="/file" target="_blank" download>d</a>
<a id=self href="#h" target="_self">s</a>
<a id=prevented href="/prevented" target="_blank">p</a>
<a id=handled href="/handled-link" target="_blank">h</a>
<a id=ctrl href="/ctrl">c</a>
<a id=middle href="/middle">m</a>
<iframe id=nested src="/nested"></iframe>
<script>
document.getElementById('dl').addEventListener('click', function (e) { e.preventDefault(); });
document.getElementById('self').addEventListener('click', function (e) { e.preventDefault(); });
document.getElementById('prevented').addEventListener('click', function (e) { e.preventDefault(); });
// The page opens the window itself: the app must be asked once, not twice.
document.getElementById('handled').addEventListener('click', function (e) { e.preventDefault(); window.open('/handled'); });
window.addEventListener('load', function () { setTimeout(function () {
  document.body.dispatchEvent(new PointerEvent('pointerdown', {bubbles: true}));
  document.getElementById('dl').click();
  document.getElementById('self').click();
  document.getElementById('prevented').click();
  document.getElementById('handled').click();
  document.getElementById('ctrl').dispatchEvent(new MouseEvent('click', {bubbles: true, cancelable: true, ctrlKey: true}));
  document.getElementById('middle').dispatchEvent(new MouseEvent('auxclick', {bubbles: true, cancelable: true, button: 1}));
  document.getElementById('blank').click();
  window.__open = window.open('/popup');
  history.pushState({}, '', '/pushed');
}, 300); });
</script></body></html>"##;

/// Served as `application/xhtml+xml`: an XML parse error would stop the shim from running.
const XHTML: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<html xmlns="http://www.w3.org/1999/xhtml"><head><title>XHTML Test</title></head><body><p>x &amp; y</p></body></html>"#;

/// Links, `window.open` and forms aimed at named frames, unknown names and `_blank`. The
/// POST form goes last (its submission replaces this page), once both named frames loaded.
const TARGETS: &str = r##"<!doctype html><html><head><title>Targets</title></head><body>
<a id=named href="/inner-next" target="inner">n</a>
<a id=blank href="/b1" target="_blank">b</a>
<a id=fresh href="/b2" target="fresh">f</a>
<iframe name=inner src="/inner"></iframe><iframe name=inner2 src="/inner"></iframe>
<form id=get action="/search" method=get target=_blank><input name=q value="a b"><input name=action value=x></form>
<form id=post action="/posted" method=post target=_blank><input name=q value=1></form>
<script>
var seen = {};
window.innerLoaded = function (p) {
  seen[p] = 1;
  if (seen['/inner-next'] && seen['/inner-open']) document.getElementById('post').requestSubmit();
};
window.addEventListener('load', function () { setTimeout(function () {
  document.getElementById('named').click();
  window.open('/inner-open', 'inner2');
  document.getElementById('blank').click();
  document.getElementById('fresh').click();
  window.open('/b3', 'nosuchframe');
  document.getElementById('get').requestSubmit();
}, 300); });
</script></body></html>"##;

const NESTED: &str = r#"<!doctype html><title>nested</title><body><script>
window.addEventListener('load', function () { setTimeout(function () {
  window.open('/from-nested');
  document.body.dispatchEvent(new PointerEvent('pointerdown', {bubbles: true}));
}, 100); });
</script></body>"#;

/// Requests a test server saw, as `METHOD path`.
type Log = Arc<Mutex<Vec<String>>>;

/// A tiny HTTP/1.1 server answering every request with `route(path)`: as XHTML
/// (`application/xhtml+xml`) when the path ends in `.xhtml`, else as HTML. Reads a request
/// body (Content-Length) before answering and logs every request.
async fn html_server(route: Arc<dyn Fn(&str) -> String + Send + Sync>) -> (u16, Log) {
    html_server_held(route, Arc::new(Notify::new())).await
}

/// [`html_server`], but a request for a path starting with `/held` is answered only once
/// `release` is notified (so a test can observe a navigation while it is under way).
async fn html_server_held(route: Arc<dyn Fn(&str) -> String + Send + Sync>, release: Arc<Notify>) -> (u16, Log) {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = l.local_addr().unwrap().port();
    let log: Log = Arc::default();
    let log2 = log.clone();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = l.accept().await {
            let route = route.clone();
            let log = log2.clone();
            let release = release.clone();
            tokio::spawn(async move {
                let Some(buf) = common::request_head(&mut s).await else { return };
                let end = buf.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
                let head = String::from_utf8_lossy(&buf[..end]).to_string();
                let mut words = head.split(' ');
                let method = words.next().unwrap_or("GET").to_string();
                let path = words.next().unwrap_or("/").to_string();
                let len = head.lines().find_map(|l| {
                    let (k, v) = l.split_once(':')?;
                    k.trim().eq_ignore_ascii_case("content-length").then(|| v.trim().parse::<usize>().ok()).flatten()
                });
                let mut have = buf.len() - end;
                let mut b = [0u8; 4096];
                while have < len.unwrap_or(0) {
                    match s.read(&mut b).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => have += n,
                    }
                }
                log.lock().unwrap().push(format!("{method} {path}"));
                if path.starts_with("/held") {
                    release.notified().await;
                }
                let body = route(&path);
                let ct = if path.split('?').next().unwrap().ends_with(".xhtml") {
                    "application/xhtml+xml"
                } else {
                    "text/html; charset=utf-8"
                };
                let resp = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: {ct}\r\nCache-Control: no-store\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = s.write_all(resp.as_bytes()).await;
                let _ = s.shutdown().await;
            });
        }
    });
    (port, log)
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

/// Headless Chromium on an empty profile, and a CDP connection to its page. Killed on drop
/// of the first value; the caller removes the returned home directory.
async fn chromium() -> (Killed, Cdp, std::path::PathBuf) {
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
    let chrome = Killed(child);
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
    (chrome, Cdp { ws, next: 0 }, home)
}

fn kind(m: &Value) -> &str {
    m["data"]["kind"].as_str().unwrap_or("")
}

/// The app page: it records every message it gets in `window.msgs` and frames `src` in the
/// sandbox the app uses.
/// The app page on an origin of its own, framing a grant of `upstream` (a URL) made for it:
/// the app's origin and the grant.
async fn frame_in_app(sc: &Sidecar, upstream: &str) -> (String, Value) {
    let frame_url: Arc<Mutex<String>> = Arc::default();
    let fu = frame_url.clone();
    let (app_port, _) = html_server(Arc::new(move |_: &str| app_page(&fu.lock().unwrap()))).await;
    let app = format!("http://127.0.0.1:{app_port}");
    let g = grant(sc, upstream, &app).await;
    *frame_url.lock().unwrap() = g["url"].as_str().unwrap().to_string();
    (app, g)
}

fn app_page(src: &str) -> String {
    format!(
        "<!doctype html><title>app</title><script>window.msgs=[];addEventListener('message',function(e){{msgs.push({{origin:e.origin,data:e.data}})}});</script>\
         <iframe sandbox=\"allow-scripts allow-same-origin allow-forms allow-popups allow-modals allow-downloads\" src=\"{src}\" width=600 height=400></iframe>"
    )
}

/// A proxy grant for `url` embedded by `app` (must succeed); its JSON.
async fn grant(sc: &Sidecar, url: &str, app: &str) -> Value {
    let r = sc.req("POST", "/api/proxy/grants", Some(&json!({"url": url, "embedders": [app]}))).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    r.json()
}

#[tokio::test]
async fn shim_messages_in_chromium() {
    let sc = Sidecar::start(&[]);
    let (upstream, _) =
        html_server(Arc::new(
            |path: &str| if path.starts_with("/nested") { NESTED.to_string() } else { PAGE.to_string() },
        ))
        .await;
    let (app, g) = frame_in_app(&sc, &format!("http://127.0.0.1:{upstream}/page")).await;
    let proxy = g["origin"].as_str().unwrap().to_string();

    let (_chrome, mut cdp, home) = chromium().await;
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
            && has("open-window", "/handled")
            && has("open-window", "/ctrl")
            && has("open-window", "/middle")
            && m.iter().filter(|x| kind(x) == "pointerdown").count() >= 2
    };
    let msgs = cdp.msgs_until("shim reports", wants_all).await;
    let opened = |end: &str| {
        msgs.iter()
            .filter(|x| kind(x) == "open-window" && x["data"]["url"].as_str().is_some_and(|u| u.ends_with(end)))
            .count()
    };
    assert_eq!(opened("/handled"), 1, "a page that opens the window itself asks once");
    assert_eq!(opened("/handled-link") + opened("/prevented"), 0, "a click the page cancelled opens nothing");
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

/// Clicks that start no cross-document navigation (a fragment, a download, one the page's
/// `navigate` handler cancels, one it intercepts), then a link to a page the server holds.
/// Without the Navigation API (WebKitGTK; hidden in a test) only the fragment link stays.
const LEAVING: &str = r##"<!doctype html><html><head><title>Leaving</title></head><body>
<a id=frag href="#f">f</a><a id=dl href="/file" download>d</a>
<a id=cancel href="/cancelled">c</a><a id=spa href="/spa">s</a><a id=slow href="/held">h</a>
<script>
document.title = window.navigation ? 'Navigation API' : 'No Navigation API';
if (window.navigation) navigation.addEventListener('navigate', function (e) {
  var p = new URL(e.destination.url).pathname;
  if (p === '/cancelled') e.preventDefault();
  if (p === '/spa') e.intercept({handler: function () { return Promise.resolve(); }});
});
window.addEventListener('load', function () { setTimeout(function () {
  (window.navigation ? ['frag', 'dl', 'cancel', 'spa'] : ['frag']).forEach(function (id) { document.getElementById(id).click(); });
  setTimeout(function () { document.getElementById('slow').click(); }, 0);
}, 100); });
</script></body></html>"##;

#[tokio::test]
async fn navigating_is_posted_when_the_page_is_being_left() {
    navigating_before_the_next_page(false).await;
}

#[tokio::test]
async fn navigating_falls_back_to_beforeunload_without_the_navigation_api() {
    navigating_before_the_next_page(true).await;
}

/// A link to a held page posts exactly one `navigating`, before the next page's `location`;
/// `no_navigation_api`: every document runs with `window.navigation` hidden (as in WebKitGTK).
async fn navigating_before_the_next_page(no_navigation_api: bool) {
    let sc = Sidecar::start(&[]);
    let release = Arc::new(Notify::new());
    let (upstream, _) = html_server_held(
        Arc::new(|path: &str| {
            if path.starts_with("/held") {
                "<!doctype html><title>Next</title><p>next".to_string()
            } else {
                LEAVING.to_string()
            }
        }),
        release.clone(),
    )
    .await;
    let frame_url: Arc<Mutex<String>> = Arc::default();
    let fu = frame_url.clone();
    let (app_port, _) = html_server(Arc::new(move |_: &str| {
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
    let proxy = r.json()["origin"].as_str().unwrap().to_string();
    *frame_url.lock().unwrap() = r.json()["url"].as_str().unwrap().to_string();

    let (_chrome, mut cdp, home) = chromium().await;
    if no_navigation_api {
        let hide = "Object.defineProperty(window, 'navigation', {value: undefined, configurable: true})";
        cdp.call("Page.enable", json!({})).await;
        cdp.call("Page.addScriptToEvaluateOnNewDocument", json!({"source": hide})).await;
    }
    cdp.call("Page.navigate", json!({"url": format!("{app}/app.html")})).await;
    // The page's title says whether it saw the Navigation API.
    let first = cdp.msgs_until("the frame's first report", |m| m.iter().any(|x| kind(x) == "location")).await;
    let title = first.iter().find(|x| kind(x) == "location").unwrap()["data"]["title"].clone();
    assert_eq!(title, if no_navigation_api { "No Navigation API" } else { "Navigation API" });
    // While the server holds the next page, the page being left says so.
    cdp.msgs_until("navigating", |m| m.iter().any(|x| kind(x) == "navigating")).await;
    release.notify_one();
    let msgs = cdp
        .msgs_until("the next page's location", |m| {
            m.iter().any(|x| kind(x) == "location" && x["data"]["url"] == format!("{proxy}/held"))
        })
        .await;
    let nav: Vec<usize> = (0..msgs.len()).filter(|&i| kind(&msgs[i]) == "navigating").collect();
    let next = msgs.iter().position(|x| x["data"]["url"] == format!("{proxy}/held")).unwrap();
    assert_eq!(nav.len(), 1, "only the navigation that left the page: {msgs:#?}");
    assert!(nav[0] < next, "navigating comes before the next page's location: {msgs:#?}");
    assert_eq!(msgs[nav[0]]["origin"], proxy.as_str());
    assert_eq!(msgs[nav[0]]["data"], json!({"porthole": "shim", "v": 1, "kind": "navigating"}));
    let _ = std::fs::remove_dir_all(&home);
}

#[tokio::test]
async fn xhtml_named_frames_and_forms_in_chromium() {
    let sc = Sidecar::start(&[]);
    let (upstream, seen) = html_server(Arc::new(|path: &str| match path {
        p if p.ends_with(".xhtml") => XHTML.to_string(),
        "/targets" => TARGETS.to_string(),
        "/inner-next" | "/inner-open" => {
            "<!doctype html><title>inner</title><script>onload=function(){parent.innerLoaded(location.pathname)}</script>"
                .to_string()
        }
        "/posted" => "<!doctype html><html><head><title>Posted</title></head><body>posted</body></html>".to_string(),
        _ => "<!doctype html><title>other</title>".to_string(),
    }))
    .await;
    let proxy: Arc<Mutex<String>> = Arc::default();
    let p2 = proxy.clone();
    // `/app?P` frames the proxied `/P`.
    let (app_port, _) = html_server(Arc::new(move |path: &str| {
        app_page(&format!(
            "{}/{}",
            p2.lock().unwrap(),
            path.split_once('?').map(|(_, framed)| framed).unwrap_or_default()
        ))
    }))
    .await;
    let app = format!("http://127.0.0.1:{app_port}");
    let origin =
        grant(&sc, &format!("http://127.0.0.1:{upstream}/"), &app).await["origin"].as_str().unwrap().to_string();
    *proxy.lock().unwrap() = origin.clone();
    let (_chrome, mut cdp, home) = chromium().await;

    // An XHTML page parses with the shim in it, and the shim runs.
    cdp.call("Page.navigate", json!({"url": format!("{app}/app?page.xhtml")})).await;
    let msgs = cdp
        .msgs_until("the XHTML page's load report", |m| {
            m.iter().any(|x| kind(x) == "location" && x["data"]["loaded"] == true)
        })
        .await;
    let loaded = msgs.iter().find(|x| kind(x) == "location").unwrap();
    assert_eq!(loaded["data"]["url"], format!("{origin}/page.xhtml"), "{msgs:#?}");
    assert_eq!(loaded["data"]["title"], "XHTML Test", "{msgs:#?}");

    // Named frames in reach load in place; _blank, unknown names and a GET form ask the app;
    // a POST form aimed at a new window is submitted in its own frame.
    cdp.call("Page.navigate", json!({"url": format!("{app}/app?targets")})).await;
    let opened = |m: &[Value], path: &str| {
        m.iter().any(|x| kind(x) == "open-window" && x["data"]["url"] == format!("{origin}{path}"))
    };
    let msgs = cdp
        .msgs_until("links, window.open and forms", |m| {
            opened(m, "/b1")
                && opened(m, "/b2")
                && opened(m, "/b3")
                && opened(m, "/search?q=a+b&action=x")
                && m.iter().any(|x| {
                    kind(x) == "location"
                        && x["data"]["url"] == format!("{origin}/posted")
                        && x["data"]["loaded"] == true
                })
        })
        .await;
    for m in &msgs {
        if kind(m) == "open-window" {
            let url = m["data"]["url"].as_str().unwrap();
            assert!(
                ["/b1", "/b2", "/b3", "/search?q=a+b&action=x"].iter().any(|p| url == format!("{origin}{p}")),
                "{m}"
            );
        }
    }
    let log = seen.lock().unwrap().clone();
    for want in ["GET /inner-next", "GET /inner-open", "POST /posted"] {
        assert!(log.iter().any(|l| l == want), "{want} missing from {log:?}");
    }
    for never in ["/b1", "/b2", "/b3", "/search"] {
        assert!(!log.iter().any(|l| l.contains(never)), "{never} was loaded in a real popup: {log:?}");
    }
    let _ = std::fs::remove_dir_all(&home);
}

/// A latin-1 page that declares its charset only in a meta tag, the same page gzipped, and an
/// HTML fragment the page fetches; the upstream gzips `/gz` whatever Accept-Encoding says.
async fn bodies_server() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = l.local_addr().unwrap().port();
    let page: &[u8] = b"<!doctype html><meta charset=\"iso-8859-1\"><title>Caf\xE9</title><p id=p>Caf\xE9</p>";
    let mut gz = async_compression::tokio::write::GzipEncoder::new(Vec::new());
    gz.write_all(page).await.unwrap();
    gz.shutdown().await.unwrap();
    let gz = Arc::new(gz.into_inner());
    tokio::spawn(async move {
        while let Ok((mut s, _)) = l.accept().await {
            let gz = gz.clone();
            tokio::spawn(async move {
                let Some(buf) = common::request_head(&mut s).await else { return };
                let path = String::from_utf8_lossy(&buf).split(' ').nth(1).unwrap_or("/").to_string();
                let (extra, body): (&str, &[u8]) = match path.as_str() {
                    "/frag.html" => ("", b"<li>a</li><li>b</li>"),
                    "/gz" => ("Content-Encoding: gzip\r\n", &gz),
                    _ => ("", page),
                };
                let head = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n{extra}Cache-Control: no-store\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let _ = s.write_all(head.as_bytes()).await;
                let _ = s.write_all(body).await;
                let _ = s.shutdown().await;
            });
        }
    });
    port
}

/// Chromium loads proxied pages top-level and reads what it got.
#[tokio::test]
async fn encodings_compression_and_fetched_html_in_chromium() {
    let sc = Sidecar::start(&[]);
    let up = bodies_server().await;
    let g = grant(&sc, &format!("http://127.0.0.1:{up}/page"), "http://127.0.0.1:4000").await;
    let origin = g["origin"].as_str().unwrap().to_string();
    let (_chrome, mut cdp, home) = chromium().await;
    let load = |path: &str| format!("{origin}{path}");
    let has_shim = "[...document.scripts].some(s => s.textContent.includes('__porthole_shim'))";
    for path in ["/page", "/gz"] {
        cdp.call("Page.navigate", json!({"url": load(path)})).await;
        let start = Instant::now();
        while cdp.eval("location.href + ' ' + document.readyState").await != format!("{} complete", load(path)) {
            assert!(start.elapsed() < Duration::from_secs(30), "{path} never loaded");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(cdp.eval("document.characterSet").await, "windows-1252", "{path}");
        assert_eq!(cdp.eval("document.title + ' ' + document.getElementById('p').textContent").await, "Café Café");
        assert_eq!(cdp.eval(has_shim).await, true, "{path}: instrumented");
    }
    let fetched = cdp
        .call(
            "Runtime.evaluate",
            json!({"expression": "fetch('/frag.html').then(r => r.text())", "awaitPromise": true, "returnByValue": true}),
        )
        .await;
    assert_eq!(fetched["result"]["value"], "<li>a</li><li>b</li>", "fetched HTML is not instrumented");
    let _ = std::fs::remove_dir_all(&home);
}

/// An SPA that changes its title after `pushState` and then alone; loads from the upstream's
/// own origins (`__UP__`: its port) that CORS blocks in the frame (a module script named by
/// `localhost`, a `fetch` by `127.0.0.1`, an XHR), a relative fetch and an aborted one, which
/// are not reported; and a key log the page posts to the app (not a shim message).
const FIELDS: &str = r##"<!doctype html><html><head><title>Fields</title></head><body><input id=i>
<script>
addEventListener('keydown', function (e) { parent.postMessage({page: 'keydown', key: e.key}, '*'); });
window.addEventListener('load', function () { setTimeout(function () {
  history.pushState({}, '', '/spa');
  document.title = 'After push';
  setTimeout(function () {
    document.title = 'Title only';
    fetch('/relative').catch(function () {});
    fetch('http://127.0.0.1:__UP__/data').catch(function () {});
    var c = new AbortController();
    fetch('http://127.0.0.1:__UP__/aborted', {signal: c.signal}).catch(function () {});
    c.abort();
    var s = document.createElement('script'); s.type = 'module'; s.src = 'http://localhost:__UP__/x.js';
    document.head.appendChild(s);
    var x = new XMLHttpRequest(); x.open('GET', 'http://localhost:__UP__/xhr'); x.send();
  }, 50);
}, 100); });
</script></body></html>"##;

/// The FIELDS page on an upstream of its own, framed through a proxy grant by an app page on
/// another server: (the upstream's port, the app's origin, the proxy's origin).
async fn fields_in_app(sc: &Sidecar) -> (u16, String, String) {
    let up_port: Arc<Mutex<u16>> = Arc::default();
    let up = up_port.clone();
    let (upstream, _) =
        html_server(Arc::new(move |_: &str| FIELDS.replace("__UP__", &up.lock().unwrap().to_string()))).await;
    *up_port.lock().unwrap() = upstream;
    let (app, g) = frame_in_app(&sc, &format!("http://127.0.0.1:{upstream}/page")).await;
    let proxy = g["origin"].as_str().unwrap().to_string();
    (upstream, app, proxy)
}

/// `title`, `blocked` and `key` (protocol §6.5): what the app receives, and what the page
/// does not (the prefix and the key after it).
#[tokio::test]
async fn title_blocked_and_key_messages_in_chromium() {
    let sc = Sidecar::start(&[]);
    let (upstream, app, proxy) = fields_in_app(&sc).await;

    let (_chrome, mut cdp, home) = chromium().await;
    cdp.call("Page.navigate", json!({"url": format!("{app}/app.html")})).await;
    let blocked = |m: &[Value], via: &str, url: &str| {
        m.iter().any(|x| kind(x) == "blocked" && x["data"]["via"] == via && x["data"]["url"] == url)
    };
    let (f, l) = (format!("http://127.0.0.1:{upstream}/data"), format!("http://localhost:{upstream}"));
    let msgs = cdp
        .msgs_until("title and blocked reports", |m| {
            m.iter().any(|x| kind(x) == "title" && x["data"]["title"] == "Title only")
                && blocked(m, "fetch", &f)
                && blocked(m, "script", &format!("{l}/x.js"))
                && blocked(m, "xhr", &format!("{l}/xhr"))
        })
        .await;
    let shim: Vec<&Value> = msgs.iter().filter(|x| x["data"]["porthole"] == "shim").collect();
    let titles: Vec<&Value> = shim.iter().filter(|x| kind(x) == "title").map(|x| &x["data"]).collect();
    assert_eq!(
        titles,
        [
            &json!({"porthole": "shim", "v": 1, "kind": "title", "title": "After push"}),
            &json!({"porthole": "shim", "v": 1, "kind": "title", "title": "Title only"}),
        ],
        "one report per change, none before the first location: {msgs:#?}"
    );
    let push = shim.iter().position(|x| x["data"]["url"] == format!("{proxy}/spa")).expect("pushState's location");
    let after = shim.iter().position(|x| x["data"]["title"] == "After push" && kind(x) == "title").unwrap();
    assert!(push < after, "the title set after pushState follows its location: {msgs:#?}");
    assert_eq!(
        shim.iter().filter(|x| kind(x) == "blocked").count(),
        3,
        "relative and aborted fetches are not reported: {msgs:#?}"
    );
    for m in &shim {
        assert_eq!(m["origin"], proxy.as_str(), "{m}");
    }

    // Keys: a click puts the keyboard in the page's input; Ctrl-b and % go to the app, not the
    // page; x goes to the page; Ctrl-b twice goes to the app twice, and the second to the page.
    click_into_frame(&mut cdp).await;
    let n = msgs.len();
    let ctrl_b = key("b", "KeyB", 66, 2, "");
    let press = [
        ctrl_b.clone(),
        key("%", "Digit5", 53, 8, "%"),
        key("x", "KeyX", 88, 0, "x"),
        ctrl_b.clone(),
        ctrl_b,
        key("y", "KeyY", 89, 0, "y"),
    ];
    press_keys(&mut cdp, &press).await;
    let msgs = cdp
        .msgs_until("the page's y", |m| {
            m[n..].iter().any(|x| x["data"]["page"] == "keydown" && x["data"]["key"] == "y")
        })
        .await;
    let keys: Vec<&Value> = msgs[n..].iter().filter(|x| kind(x) == "key").map(|x| &x["data"]).collect();
    let b = json!({"porthole": "shim", "v": 1, "kind": "key", "key": "b", "ctrl": true, "alt": false, "meta": false, "shift": false});
    let pct = json!({"porthole": "shim", "v": 1, "kind": "key", "key": "%", "ctrl": false, "alt": false, "meta": false, "shift": true});
    assert_eq!(keys, [&b, &pct, &b, &b], "{msgs:#?}");
    let page_keys: Vec<&Value> =
        msgs[n..].iter().filter(|x| x["data"]["page"] == "keydown").map(|x| &x["data"]["key"]).collect();
    assert_eq!(
        page_keys,
        [&json!("x"), &json!("b"), &json!("y")],
        "the page saw the ordinary keys and the second prefix: {msgs:#?}"
    );
    let _ = std::fs::remove_dir_all(&home);
}

/// A CDP key event for `key` (`modifiers`: CDP's bit set, 2 = Ctrl, 8 = Shift).
fn key(key: &str, code: &str, vk: u32, modifiers: u32, text: &str) -> Value {
    json!({"key": key, "code": code, "windowsVirtualKeyCode": vk, "modifiers": modifiers, "text": text})
}

/// Presses and releases each key of `keys` ([`key`]) in order, as trusted input.
async fn press_keys(cdp: &mut Cdp, keys: &[Value]) {
    for k in keys {
        let mut down = k.clone();
        down["type"] = json!(if k["text"] == "" { "rawKeyDown" } else { "keyDown" });
        cdp.call("Input.dispatchKeyEvent", down).await;
        let mut upk = k.clone();
        upk["type"] = json!("keyUp");
        upk.as_object_mut().unwrap().remove("text");
        cdp.call("Input.dispatchKeyEvent", upk).await;
    }
}

/// Clicks the framed page's input (top left of the app page's iframe), giving it the keyboard.
async fn click_into_frame(cdp: &mut Cdp) {
    let at: Value = cdp
        .eval("(function(){var r=document.querySelector('iframe').getBoundingClientRect();return [r.left,r.top]})()")
        .await;
    let (x, y) = (at[0].as_f64().unwrap() + 20.0, at[1].as_f64().unwrap() + 18.0);
    for t in ["mousePressed", "mouseReleased"] {
        cdp.call("Input.dispatchMouseEvent", json!({"type": t, "x": x, "y": y, "button": "left", "clickCount": 1}))
            .await;
    }
}

/// A prefix rebound in `config.toml` (`[keys] prefix = "C-a"`) is the one a framed page guards,
/// from its load; the app's `prefix` message changes it live; Ctrl-b is then the page's own.
#[tokio::test]
async fn a_rebound_prefix_is_the_one_framed_pages_forward() {
    let sc = Sidecar::start(&[]);
    let dir = sc.home.join(".config/porthole");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(".config.toml.tmp"), "[keys]\nprefix = \"C-a\"\n").unwrap();
    std::fs::rename(dir.join(".config.toml.tmp"), dir.join("config.toml")).unwrap();
    let mut rebound = false;
    for _ in 0..400 {
        if sc.req("GET", "/api/config", None).await.json()["config"]["keys"]["prefix"] == "C-a" {
            rebound = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(rebound, "config.toml's prefix never applied");
    let (_, app, proxy) = fields_in_app(&sc).await;
    let (_chrome, mut cdp, home) = chromium().await;
    cdp.call("Page.navigate", json!({"url": format!("{app}/app.html")})).await;
    cdp.msgs_until("the page's location", |m| m.iter().any(|x| kind(x) == "location")).await;
    click_into_frame(&mut cdp).await;
    let shim_key = |k: &str| json!({"porthole": "shim", "v": 1, "kind": "key", "key": k, "ctrl": true, "alt": false, "meta": false, "shift": false});
    let plain = |k: &str| json!({"porthole": "shim", "v": 1, "kind": "key", "key": k, "ctrl": false, "alt": false, "meta": false, "shift": false});

    // Ctrl-a and x go to the app; Ctrl-b is the page's.
    let y = key("y", "KeyY", 89, 0, "y");
    key_round(
        &mut cdp,
        vec![key("a", "KeyA", 65, 2, ""), key("x", "KeyX", 88, 0, "x"), key("b", "KeyB", 66, 2, ""), y.clone()],
        vec![shim_key("a"), plain("x")],
        vec![json!("b"), json!("y")],
    )
    .await;
    // The app rebinds to Ctrl-q while the page stays loaded.
    let set = format!(
        "document.querySelector('iframe').contentWindow.postMessage({{porthole:'app',v:1,kind:'prefix',letter:'q'}}, {})",
        serde_json::to_string(&proxy).unwrap()
    );
    cdp.eval(&set).await;
    key_round(
        &mut cdp,
        vec![key("a", "KeyA", 65, 2, ""), key("q", "KeyQ", 81, 2, ""), key("z", "KeyZ", 90, 0, "z"), y],
        vec![shim_key("q"), plain("z")],
        vec![json!("a"), json!("y")],
    )
    .await;
    let _ = std::fs::remove_dir_all(&home);
}

/// Presses `press` (ending with a plain y the page must see) and checks what the app got
/// (`key` messages, in order) and what the page's own keydowns were.
async fn key_round(cdp: &mut Cdp, press: Vec<Value>, to_app: Vec<Value>, to_page: Vec<Value>) {
    let n = cdp.msgs_until("any", |_| true).await.len();
    press_keys(cdp, &press).await;
    let msgs = cdp
        .msgs_until("the page's y", |m| {
            m[n..].iter().any(|x| x["data"]["page"] == "keydown" && x["data"]["key"] == "y")
        })
        .await;
    let keys: Vec<Value> = msgs[n..].iter().filter(|x| kind(x) == "key").map(|x| x["data"].clone()).collect();
    let page: Vec<Value> =
        msgs[n..].iter().filter(|x| x["data"]["page"] == "keydown").map(|x| x["data"]["key"].clone()).collect();
    assert_eq!(keys, to_app, "{msgs:#?}");
    assert_eq!(page, to_page, "{msgs:#?}");
}

/// A page whose server sets a script-visible CSRF cookie and an HttpOnly session; its script
/// reads `document.cookie`, sets a cookie of its own, tries to overwrite the session and to
/// set an HttpOnly one, then fetches `/echo` (which answers the `Cookie` it got) and posts
/// what it saw to the app.
const COOKIE_PAGE: &str = r#"<!doctype html><html><head><title>cookies</title></head><body><script>
var first = document.cookie;
document.cookie = "theme=dark; path=/";
document.cookie = "sid=evil; path=/";
document.cookie = "sneaky=1; path=/; HttpOnly";
var after = document.cookie;
fetch('/echo').then(function (r) { return r.text(); }).then(function (echo) {
  parent.postMessage({page: 'cookies', first: first, after: after, echo: echo}, '*');
});
</script></body></html>"#;

/// Serves [`COOKIE_PAGE`] at `/page` (with its `Set-Cookie`s) and the `Cookie` it got at `/echo`.
async fn cookie_server() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = l.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = l.accept().await {
            tokio::spawn(async move {
                let Some(buf) = common::request_head(&mut s).await else { return };
                let head = String::from_utf8_lossy(&buf).to_string();
                let path = head.split(' ').nth(1).unwrap_or("/").to_string();
                let cookie = head
                    .lines()
                    .find_map(|l| {
                        l.split_once(':')
                            .filter(|(k, _)| k.eq_ignore_ascii_case("cookie"))
                            .map(|(_, v)| v.trim().to_string())
                    })
                    .unwrap_or_default();
                let (extra, ct, body) = if path == "/echo" {
                    (String::new(), "text/plain", cookie)
                } else {
                    (
                        "Set-Cookie: csrftoken=tok123; Path=/\r\nSet-Cookie: sid=s3cret; Path=/; HttpOnly\r\n"
                            .to_string(),
                        "text/html; charset=utf-8",
                        COOKIE_PAGE.to_string(),
                    )
                };
                let resp = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: {ct}\r\n{extra}Cache-Control: no-store\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = s.write_all(resp.as_bytes()).await;
                let _ = s.shutdown().await;
            });
        }
    });
    port
}

/// Issue 22 item 3: the framed page's `document.cookie` is the grant's jar: it reads the
/// server's script-visible cookies (not the HttpOnly session), and what it writes reaches the
/// server; it cannot overwrite or create an HttpOnly cookie.
#[tokio::test]
async fn document_cookie_is_the_grants_jar_in_chromium() {
    let sc = Sidecar::start(&[]);
    let upstream = cookie_server().await;
    let (app, _) = frame_in_app(&sc, &format!("http://localhost:{upstream}/page")).await;

    let (_chrome, mut cdp, home) = chromium().await;
    cdp.call("Page.navigate", json!({"url": format!("{app}/app.html")})).await;
    let msgs = cdp.msgs_until("the page's cookie report", |m| m.iter().any(|x| x["data"]["page"] == "cookies")).await;
    let seen = &msgs.iter().find(|x| x["data"]["page"] == "cookies").unwrap()["data"];
    assert_eq!(seen["first"], "csrftoken=tok123", "the server's script-visible cookie, not the HttpOnly one");
    let mut after: Vec<&str> = seen["after"].as_str().unwrap().split("; ").collect();
    after.sort();
    assert_eq!(after, ["csrftoken=tok123", "theme=dark"], "the page's own write, and no HttpOnly one");
    let mut echo: Vec<&str> = seen["echo"].as_str().unwrap().split("; ").collect();
    echo.sort();
    assert_eq!(echo, ["csrftoken=tok123", "sid=s3cret", "theme=dark"], "the server sees the page's cookie too");
    // The browser itself holds none of them (the jar does).
    let jar = cdp.call("Network.getAllCookies", json!({})).await;
    assert_eq!(jar["cookies"], json!([]), "{jar}");
    let _ = std::fs::remove_dir_all(&home);
}

/// A page under `Content-Security-Policy: default-src 'self'`: its external script (allowed)
/// reports whether its inline script (not allowed: no nonce) ran and what `document.cookie`
/// reads; a `<meta>` policy forbids images from anywhere.
const CSP_PAGE: &str = r#"<!doctype html><html><head><title>csp</title>
<meta http-equiv="Content-Security-Policy" content="img-src 'none'">
<script>window.inlineRan = true;</script></head>
<body><img id=i src="/pixel.png"><script src="/report.js"></script></body></html>"#;

const CSP_REPORT_JS: &str = r#"document.cookie = "seen=1; path=/";
window.addEventListener('load', function () {
  parent.postMessage({page: 'csp', inline: window.inlineRan === true, cookie: document.cookie,
    img: document.getElementById('i').naturalWidth}, '*');
});"#;

/// Serves [`CSP_PAGE`] with its policy header, its script and a 1×1 image.
async fn csp_server() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = l.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = l.accept().await {
            tokio::spawn(async move {
                let Some(buf) = common::request_head(&mut s).await else { return };
                let path = String::from_utf8_lossy(&buf).split(' ').nth(1).unwrap_or("/").to_string();
                // A GIF89a 1×1.
                let gif: &[u8] = b"GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff!\xf9\x04\x01\x00\x00\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;";
                let (ct, extra, body): (&str, &str, &[u8]) = match path.as_str() {
                    "/report.js" => ("text/javascript", "", CSP_REPORT_JS.as_bytes()),
                    "/pixel.png" => ("image/gif", "", gif),
                    _ => (
                        "text/html; charset=utf-8",
                        "Content-Security-Policy: default-src 'self'\r\n",
                        CSP_PAGE.as_bytes(),
                    ),
                };
                let head = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: {ct}\r\n{extra}Cache-Control: no-store\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let _ = s.write_all(head.as_bytes()).await;
                let _ = s.write_all(body).await;
                let _ = s.shutdown().await;
            });
        }
    });
    port
}

/// Issue 22 item 4: the page's CSP (header and `<meta>`) holds in the frame as it would in a
/// browser (its inline script without a nonce is refused, its meta policy blocks the image),
/// while the shim still runs (its `location` arrives) and `document.cookie` still works.
#[tokio::test]
async fn the_pages_csp_holds_and_the_shim_still_runs_in_chromium() {
    let sc = Sidecar::start(&[]);
    let upstream = csp_server().await;
    let (app, _) = frame_in_app(&sc, &format!("http://127.0.0.1:{upstream}/page")).await;

    let (_chrome, mut cdp, home) = chromium().await;
    cdp.call("Page.navigate", json!({"url": format!("{app}/app.html")})).await;
    let msgs = cdp
        .msgs_until("the page's report and the shim's location", |m| {
            m.iter().any(|x| x["data"]["page"] == "csp") && m.iter().any(|x| kind(x) == "location")
        })
        .await;
    let seen = &msgs.iter().find(|x| x["data"]["page"] == "csp").unwrap()["data"];
    assert_eq!(seen["inline"], false, "the page's own policy refuses its inline script: {seen}");
    assert_eq!(seen["img"], 0, "the meta policy refuses the image: {seen}");
    assert_eq!(seen["cookie"], "seen=1", "the shim's cookie path is allowed: {seen}");
    let _ = std::fs::remove_dir_all(&home);
}
