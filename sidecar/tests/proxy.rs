//! The iframe proxy through the real binary: grant API, header rules, HTML instrumentation,
//! error pages, WebSocket pass-through, Host gate, TTL and cap (protocol §6). Each test starts
//! its own upstream on 127.0.0.1 (a hand-written HTTP/1.1 server, so every byte is under the
//! test's control, and a tokio-tungstenite WebSocket echo server).

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::Message;

const APP: &str = "http://127.0.0.1:4000";

/// One request as the upstream saw it.
#[derive(Debug, Clone)]
struct Seen {
    path: String,
    headers: Vec<(String, String)>,
}

impl Seen {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

type Log = Arc<Mutex<Vec<Seen>>>;

const PAGE: &str = "<!doctype html><html><head><title>t</title></head><body>hi</body></html>";

/// Starts the test upstream; returns its port and the log of requests it saw.
async fn upstream() -> (u16, Log) {
    upstream_on("127.0.0.1:0").await
}

/// As [`upstream`], bound to `addr`.
async fn upstream_on(addr: &str) -> (u16, Log) {
    let l = TcpListener::bind(addr).await.unwrap();
    let port = l.local_addr().unwrap().port();
    let log: Log = Arc::default();
    let log2 = log.clone();
    tokio::spawn(async move {
        loop {
            let Ok((s, _)) = l.accept().await else { return };
            tokio::spawn(serve_one(s, port, log2.clone()));
        }
    });
    (port, log)
}

async fn serve_one(mut s: TcpStream, port: u16, log: Log) {
    let Some(buf) = common::request_head(&mut s).await else { return };
    let head = String::from_utf8_lossy(&buf).to_string();
    let mut lines = head.split("\r\n");
    let path = lines.next().unwrap().split(' ').nth(1).unwrap().to_string();
    let headers: Vec<(String, String)> = lines
        .take_while(|l| !l.is_empty())
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    log.lock().unwrap().push(Seen { path: path.clone(), headers });
    let route = path.split('?').next().unwrap().to_string();
    let html = |extra: &str, body: &str| {
        format!("HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n{extra}Content-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len())
    };
    let resp: Vec<u8> = match route.as_str() {
        "/framed" => html(
            "X-Frame-Options: DENY\r\nContent-Security-Policy: frame-ancestors 'none'\r\nSet-Cookie: sid=1; Path=/\r\nSet-Cookie: b=2\r\n",
            PAGE,
        )
        .into(),
        "/preserve" => html(
            "Content-Security-Policy: script-src 'self'\r\nX-Porthole-Preserve-CSP: 1\r\n",
            "<head><meta http-equiv=\"Content-Security-Policy\" content=\"img-src 'none'\"></head>",
        )
        .into(),
        "/meta-csp" => html("", "<head><meta http-equiv=\"Content-Security-Policy\" content=\"img-src 'none'\"></head>").into(),
        "/redirect" => format!(
            "HTTP/1.1 302 Found\r\nLocation: http://localhost:{port}/next?a=1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        )
        .into(),
        // The other loopback spellings of the same port (issue 22 item 4).
        "/redirect-v4" | "/redirect-v6" => format!(
            "HTTP/1.1 302 Found\r\nLocation: http://{}:{port}/landed\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            if route == "/redirect-v4" { "127.0.0.1" } else { "[::1]" }
        )
        .into(),
        "/utf16" => {
            let mut r = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 16\r\nConnection: close\r\n\r\n".to_vec();
            r.extend_from_slice(b"\xff\xfe<\x00h\x00e\x00a\x00d\x00>\x00<\x00");
            r
        }
        "/chunked" => {
            let parts = ["<!doctype html><html><he", "ad><title>chunky</title></he", "ad><body>", "streamed</body></html>"];
            let mut r = String::from("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n");
            s.write_all(r.as_bytes()).await.ok();
            r.clear();
            for p in parts {
                let c = format!("{:x}\r\n{p}\r\n", p.len());
                if s.write_all(c.as_bytes()).await.is_err() {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(30)).await;
            }
            b"0\r\n\r\n".to_vec()
        }
        "/script" => b"HTTP/1.1 200 OK\r\nContent-Type: text/javascript\r\nContent-Length: 2\r\nConnection: close\r\n\r\n;;".to_vec(),
        "/idle" => {
            tokio::time::sleep(Duration::from_secs(120)).await;
            return;
        }
        _ => html("", PAGE).into(),
    };
    let _ = s.write_all(&resp).await;
    let _ = s.shutdown().await;
}

/// A raw HTTP/1.1 request to `port` with exactly these headers (plus `Host:
/// 127.0.0.1:port` unless given, and `Connection: close`).
async fn http(port: u16, path: &str, headers: &[(&str, &str)]) -> Resp {
    try_http(port, path, headers).await.expect("connect to the proxy")
}

/// As [`http`]; `None` if the port refuses the connection or closes it without a word (an
/// expired grant).
async fn try_http(port: u16, path: &str, headers: &[(&str, &str)]) -> Option<Resp> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).await.ok()?;
    let mut req = format!("GET {path} HTTP/1.1\r\n");
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        req += &format!("Host: 127.0.0.1:{port}\r\n");
    }
    for (k, v) in headers {
        req += &format!("{k}: {v}\r\n");
    }
    req += "Connection: close\r\n\r\n";
    s.write_all(req.as_bytes()).await.unwrap();
    let mut buf = Vec::new();
    tokio::time::timeout(HANG, s.read_to_end(&mut buf)).await.expect("http response").ok();
    // Nothing at all: the grant closed while the request was in flight.
    (!buf.is_empty()).then(|| parse_response(&buf))
}

/// Reads one request head from `s`; returns its path.
async fn read_head(s: &mut TcpStream) -> String {
    let mut buf = Vec::new();
    let mut b = [0u8; 4096];
    while !contains(&buf, b"\r\n\r\n") {
        let n = tokio::time::timeout(HANG, s.read(&mut b)).await.expect("request head").unwrap();
        assert!(n > 0, "client closed before sending a request");
        buf.extend_from_slice(&b[..n]);
    }
    String::from_utf8_lossy(&buf).split(' ').nth(1).unwrap().to_string()
}

/// The payload of the complete chunks at the start of a chunked body (`raw` may end mid-chunk).
fn dechunk_prefix(mut raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(nl) = raw.windows(2).position(|w| w == b"\r\n") {
        let Ok(n) = usize::from_str_radix(std::str::from_utf8(&raw[..nl]).unwrap().trim(), 16) else { break };
        if n == 0 || raw.len() < nl + 2 + n + 2 {
            break;
        }
        out.extend_from_slice(&raw[nl + 2..nl + 2 + n]);
        raw = &raw[nl + 2 + n + 2..];
    }
    out
}

fn all(r: &Resp, name: &str) -> Vec<String> {
    r.headers.iter().filter(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.clone()).collect()
}

/// Asks for a grant; returns (status, body).
async fn grant(sc: &Sidecar, url: &str, embedders: &[&str]) -> (u16, Value) {
    let r = sc.req("POST", "/api/proxy/grants", Some(&json!({"url": url, "embedders": embedders}))).await;
    (r.status, r.json())
}

/// A grant that must succeed; returns its proxy port.
async fn grant_port(sc: &Sidecar, url: &str) -> u16 {
    let (st, v) = grant(sc, url, &[APP]).await;
    assert_eq!(st, 200, "{v}");
    v["origin"].as_str().unwrap().trim_start_matches("http://127.0.0.1:").parse().unwrap()
}

fn shim_count(body: &[u8]) -> usize {
    String::from_utf8_lossy(body).matches("__porthole_shim=1").count()
}

#[tokio::test]
async fn grant_api_refusals_reuse_and_revoke() {
    let sc = Sidecar::start(&[]);
    for (url, status, code) in [
        ("https://example.com/", 400, "https_refused"),
        ("ftp://example.com/", 400, "bad_scheme"),
        ("javascript:alert(1)", 400, "bad_scheme"),
        ("not a url", 400, "bad_url"),
        ("http://169.254.169.254/latest", 403, "blocked_address"),
        ("http://2852039166/", 403, "blocked_address"),
        ("http://0251.0376.0251.0376/", 403, "blocked_address"),
        ("http://0xa9fea9fe/", 403, "blocked_address"),
        ("http://169.254.43518/", 403, "blocked_address"),
        ("http://[::ffff:169.254.169.254]/", 403, "blocked_address"),
        ("http://[fe80::1]/", 403, "blocked_address"),
        ("http://[fd00:ec2::254]/", 403, "blocked_address"),
        ("http://100.100.100.200/", 403, "blocked_address"),
    ] {
        let (st, v) = grant(&sc, url, &[APP]).await;
        assert_eq!((st, v["error"]["code"].as_str().unwrap()), (status, code), "{url}: {v}");
    }
    let (_, v) = grant(&sc, "https://example.com/", &[]).await;
    assert!(v["error"]["message"].as_str().unwrap().contains("screencast"), "{v}");
    let r = sc
        .raw("POST", "/api/proxy/grants", &[("Content-Type", "application/json")], br#"{"url":"http://localhost:1/"}"#)
        .await;
    assert_eq!(r.status, 401, "the grant API needs auth");

    let (up, _) = upstream().await;
    let (st, a) = grant(&sc, &format!("http://localhost:{up}/a?x=1#frag"), &[APP]).await;
    assert_eq!(st, 200, "{a}");
    let origin = a["origin"].as_str().unwrap().to_string();
    assert!(origin.starts_with("http://127.0.0.1:"));
    assert_eq!(a["url"], format!("{origin}/a?x=1"));
    assert_eq!(a["upstream"], format!("http://localhost:{up}"));
    assert_eq!(a["grant"], "g1");
    let (_, b) = grant(&sc, &format!("http://localhost:{up}/b"), &[]).await;
    assert_eq!(
        (b["grant"].clone(), b["origin"].clone()),
        (a["grant"].clone(), a["origin"].clone()),
        "same upstream, same grant"
    );
    assert_eq!(b["url"], format!("{origin}/b"));
    let (_, c) = grant(&sc, &format!("http://127.0.0.1:{up}/"), &[]).await;
    assert_ne!(c["grant"], a["grant"], "a different spelling of the host is a different origin");

    let list = sc.req("GET", "/api/proxy/grants", None).await.json();
    assert_eq!(list["grants"].as_array().unwrap().len(), 2, "{list}");
    let port: u16 = origin.trim_start_matches("http://127.0.0.1:").parse().unwrap();
    assert_eq!(http(port, "/", &[]).await.status, 200);
    assert_eq!(sc.req("DELETE", "/api/proxy/grants/g1", None).await.status, 204);
    assert_eq!(sc.req("DELETE", "/api/proxy/grants/g1", None).await.status, 404);
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(TcpStream::connect(("127.0.0.1", port)).await.is_err(), "revoked grant's listener is closed");
}

#[tokio::test]
async fn framing_headers_cookies_origin_and_shim() {
    let sc = Sidecar::start(&[]);
    let (up, log) = upstream().await;
    let port = grant_port(&sc, &format!("http://localhost:{up}/")).await;
    let own = format!("http://127.0.0.1:{port}");
    let referer = format!("{own}/from?q=2");
    let r = http(
        port,
        "/framed?token=a%20b&x",
        &[
            ("Cookie", "sid=secret"),
            ("Origin", &own),
            ("Referer", &referer),
            ("Accept-Encoding", "gzip"),
            ("Sec-Fetch-Dest", "iframe"),
        ],
    )
    .await;
    assert_eq!(r.status, 200);
    assert!(all(&r, "x-frame-options").is_empty());
    assert_eq!(all(&r, "content-security-policy"), [format!("frame-ancestors 'self' {APP}")]);
    assert!(all(&r, "set-cookie").is_empty());
    assert!(all(&r, "vary").iter().any(|v| v.contains("Sec-Fetch-Dest")));
    assert!(all(&r, "content-length").is_empty(), "body changed, length removed");
    assert_eq!(all(&r, "content-type"), ["text/html; charset=utf-8"]);
    let body = String::from_utf8(r.body.clone()).unwrap();
    assert_eq!(shim_count(&r.body), 1, "{body}");
    let shim_at = body.find("<script nonce=\"").unwrap();
    let shim = &body[shim_at..];
    let nonce_end = shim.find("\">").unwrap();
    assert_eq!(nonce_end, "<script nonce=\"".len() + 24, "a 128-bit base64 nonce: {shim}");
    assert!(shim[nonce_end + 2..].starts_with("(function(){var A=\"http://127.0.0.1:4000\""), "{body}");
    assert!(body.find("</head>").unwrap() > shim_at && body.find("<title>").unwrap() < shim_at);

    let seen = log.lock().unwrap().last().cloned().unwrap();
    assert_eq!(seen.path, "/framed?token=a%20b&x", "query passed through untouched");
    assert_eq!(seen.header("host"), Some(format!("localhost:{up}").as_str()));
    assert_eq!(seen.header("origin"), Some(format!("http://localhost:{up}").as_str()));
    assert_eq!(seen.header("referer"), Some(format!("http://localhost:{up}/from?q=2").as_str()));
    assert_eq!(seen.header("cookie"), None);
    assert_eq!(seen.header("accept-encoding"), None);

    // A foreign Origin is forwarded untouched; an absent one stays absent.
    http(port, "/", &[("Origin", "http://evil.test")]).await;
    assert_eq!(log.lock().unwrap().last().unwrap().header("origin"), Some("http://evil.test"));
    http(port, "/", &[]).await;
    assert_eq!(log.lock().unwrap().last().unwrap().header("origin"), None);

    // Redirect to the upstream's own absolute origin stays inside the proxy.
    let r = http(port, "/redirect", &[]).await;
    assert_eq!(r.status, 302);
    assert_eq!(r.header("location"), Some(format!("{own}/next?a=1").as_str()));
    // So does one to another loopback spelling of the same port (the same dev server).
    for path in ["/redirect-v4", "/redirect-v6"] {
        assert_eq!(http(port, path, &[]).await.header("location"), Some(format!("{own}/landed").as_str()), "{path}");
    }

    // Meta CSP kept, given the shim's nonce only where it governs scripts (issue 22 item 4);
    // kept verbatim (with the header policies) when the upstream opts in.
    let r = http(port, "/meta-csp", &[]).await;
    let body = String::from_utf8_lossy(&r.body).to_string();
    assert!(body.contains("<meta http-equiv=\"Content-Security-Policy\" content=\"img-src 'none'\">"), "{body}");
    let r = http(port, "/preserve", &[]).await;
    assert!(String::from_utf8_lossy(&r.body).contains("http-equiv"));
    assert_eq!(
        all(&r, "content-security-policy"),
        ["script-src 'self'".to_string(), format!("frame-ancestors 'self' {APP}")]
    );
    assert!(all(&r, "x-porthole-preserve-csp").is_empty());

    // An upgrade the upstream refuses: an ordinary response, Set-Cookie still dropped.
    let r = http(
        port,
        "/framed",
        &[
            ("Connection", "Upgrade"),
            ("Upgrade", "websocket"),
            ("Sec-WebSocket-Version", "13"),
            ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="),
        ],
    )
    .await;
    assert_eq!(r.status, 200);
    assert!(all(&r, "set-cookie").is_empty());
}

#[tokio::test]
async fn ipv6_literal_upstream_is_dialled() {
    let sc = Sidecar::start(&[]);
    let Ok(probe) = std::net::TcpListener::bind("[::1]:0") else {
        eprintln!("no IPv6 loopback here; nothing to check");
        return;
    };
    drop(probe);
    let (up, log) = upstream_on("[::1]:0").await;
    let port = grant_port(&sc, &format!("http://[::1]:{up}/")).await;
    let r = http(port, "/", &[]).await;
    assert_eq!(r.status, 200);
    assert_eq!(log.lock().unwrap().last().unwrap().header("host"), Some(format!("[::1]:{up}").as_str()));
}

#[tokio::test]
async fn no_chain_keeps_framing_headers_and_injects_nothing() {
    let sc = Sidecar::start(&[]);
    let (up, _) = upstream().await;
    let (st, v) = grant(&sc, &format!("http://127.0.0.1:{up}/"), &[APP, "null"]).await;
    assert_eq!(st, 200);
    let port: u16 = v["origin"].as_str().unwrap().trim_start_matches("http://127.0.0.1:").parse().unwrap();
    let r = http(port, "/framed", &[]).await;
    assert_eq!(all(&r, "x-frame-options"), ["DENY"]);
    assert_eq!(all(&r, "content-security-policy"), ["frame-ancestors 'none'"]);
    assert!(all(&r, "set-cookie").is_empty());
    assert_eq!(r.body, PAGE.as_bytes());
}

/// Compressed and non-ASCII bodies in detail: `tests/proxy_bodies.rs`.
#[tokio::test]
async fn utf16_passes_through_and_accept_encoding_rules() {
    let sc = Sidecar::start(&[]);
    let (up, log) = upstream().await;
    let port = grant_port(&sc, &format!("http://127.0.0.1:{up}/")).await;
    http(port, "/", &[("Accept-Encoding", "gzip, br"), ("Sec-Fetch-Dest", "document")]).await;
    assert_eq!(log.lock().unwrap().last().unwrap().header("accept-encoding"), None, "removed on document loads");
    http(port, "/script", &[("Accept-Encoding", "gzip, br"), ("Sec-Fetch-Dest", "script")]).await;
    assert_eq!(log.lock().unwrap().last().unwrap().header("accept-encoding"), Some("gzip, br"), "kept on subresources");
    let r = http(port, "/utf16", &[]).await;
    assert_eq!(r.body, b"\xff\xfe<\x00h\x00e\x00a\x00d\x00>\x00<\x00", "UTF-16 (BOM) untouched");
    let r = http(port, "/script", &[]).await;
    assert_eq!(r.body, b";;");
}

#[tokio::test]
async fn chunked_html_is_instrumented_while_streaming() {
    let sc = Sidecar::start(&[]);
    // The upstream sends the head and the page up to `<body>`, then holds the rest until the
    // test has read the instrumented first part through the proxy: the proxy cannot be
    // buffering the whole body.
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let up = l.local_addr().unwrap().port();
    let (release, held) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        let (mut s, _) = l.accept().await.unwrap();
        read_head(&mut s).await;
        let mut first = String::from(
            "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
        );
        for p in ["<!doctype html><html><he", "ad><title>chunky</title></he", "ad><body>"] {
            first += &format!("{:x}\r\n{p}\r\n", p.len());
        }
        s.write_all(first.as_bytes()).await.unwrap();
        if held.await.is_err() {
            return;
        }
        let rest = "streamed</body></html>";
        let _ = s.write_all(format!("{:x}\r\n{rest}\r\n0\r\n\r\n", rest.len()).as_bytes()).await;
        let _ = s.shutdown().await;
    });
    let port = grant_port(&sc, &format!("http://127.0.0.1:{up}/")).await;
    let mut s = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    s.write_all(format!("GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let mut raw = Vec::new();
    let mut b = [0u8; 4096];
    let first_part = tokio::time::timeout(HANG, async {
        loop {
            let n = s.read(&mut b).await.unwrap();
            assert!(n > 0, "the proxy ended the response early: {}", String::from_utf8_lossy(&raw));
            raw.extend_from_slice(&b[..n]);
            if let Some(end) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
                let body = String::from_utf8(dechunk_prefix(&raw[end + 4..])).unwrap();
                if body.contains("</head>") {
                    return body;
                }
            }
        }
    })
    .await
    .expect("the instrumented head arrives while the upstream holds the rest");
    assert!(first_part.starts_with("<!doctype html><html><head><title>chunky</title><script nonce="), "{first_part}");
    assert!(!first_part.contains("streamed"));
    release.send(()).unwrap();
    tokio::time::timeout(HANG, s.read_to_end(&mut raw)).await.expect("the rest").unwrap();
    let r = parse_response(&raw);
    assert_eq!(r.status, 200);
    let body = String::from_utf8(r.body.clone()).unwrap();
    assert_eq!(shim_count(&r.body), 1, "{body}");
    assert!(body.starts_with("<!doctype html><html><head><title>chunky</title><script nonce="), "{body}");
    assert!(body.ends_with("</script></head><body>streamed</body></html>"), "{body}");
}

#[tokio::test]
async fn error_pages_couldnt_connect_and_didnt_respond() {
    let sc = Sidecar::start_with_env(&[], &[("PORTHOLE_PROXY_IDLE_MS", "600")]);
    let dead = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let port = grant_port(&sc, &format!("http://localhost:{dead}/")).await;
    let r = http(port, "/", &[]).await;
    assert_eq!(r.status, 502);
    let body = String::from_utf8_lossy(&r.body).to_string();
    assert!(body.contains("couldn't connect to the dev server"), "{body}");
    assert!(body.contains(&format!("http://localhost:{dead}")));
    assert!(body.contains("prefers-color-scheme"));

    let (up, _) = upstream().await;
    let port = grant_port(&sc, &format!("http://127.0.0.1:{up}/")).await;
    let start = std::time::Instant::now();
    let r = http(port, "/idle", &[]).await;
    assert_eq!(r.status, 504);
    assert!(start.elapsed() >= Duration::from_millis(500), "{:?}", start.elapsed());
    let body = String::from_utf8_lossy(&r.body).to_string();
    assert!(body.contains("didn't respond") && !body.contains("couldn't connect"), "{body}");

    // A connect that never completes (the upstream's accept queue is full, so its SYNs are
    // dropped) is a connect failure, not "didn't respond": nothing was ever accepted.
    let full = tokio::net::TcpSocket::new_v4().unwrap();
    full.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let full = full.listen(0).unwrap();
    let up = full.local_addr().unwrap().port();
    let queued = std::net::TcpStream::connect(("127.0.0.1", up)).unwrap();
    let stuck: Vec<_> = (0..3).map(|_| tokio::spawn(TcpStream::connect(("127.0.0.1", up)))).collect();
    let port = grant_port(&sc, &format!("http://127.0.0.1:{up}/")).await;
    let r = http(port, "/", &[]).await;
    assert_eq!(r.status, 502);
    let body = String::from_utf8_lossy(&r.body).to_string();
    assert!(body.contains("couldn't connect to the dev server") && !body.contains("didn't respond"), "{body}");
    stuck.iter().for_each(|t| t.abort());
    drop((queued, full));
}

#[tokio::test]
async fn a_body_that_stalls_after_its_head_is_cut_off() {
    let sc = Sidecar::start_with_env(&[], &[("PORTHOLE_PROXY_IDLE_MS", "600")]);
    // Head and part of the body, then nothing (for far longer than HANG): once for a body
    // passed through (Content-Length), once for an instrumented HTML body (chunked).
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let up = l.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = l.accept().await {
            tokio::spawn(async move {
                let path = read_head(&mut s).await;
                let ct = if path == "/html" { "text/html" } else { "text/plain" };
                let head = format!("HTTP/1.1 200 OK\r\nContent-Type: {ct}\r\nContent-Length: 1000\r\n\r\n");
                s.write_all(head.as_bytes()).await.unwrap();
                s.write_all(b"<!doctype html><html><head></head><body>first part").await.unwrap();
                tokio::time::sleep(Duration::from_secs(300)).await;
                drop(s);
            });
        }
    });
    let port = grant_port(&sc, &format!("http://127.0.0.1:{up}/")).await;
    for path in ["/plain", "/html"] {
        let mut s = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        let req = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
        s.write_all(req.as_bytes()).await.unwrap();
        let mut raw = Vec::new();
        // Ends (EOF or reset) well before HANG: the proxy aborts the stalled body.
        let _ = tokio::time::timeout(HANG, s.read_to_end(&mut raw)).await.expect("the stalled body is cut off");
        let text = String::from_utf8_lossy(&raw).to_string();
        assert!(text.starts_with("HTTP/1.1 200 "), "{path}: the head was already sent: {text}");
        assert!(text.contains("first part"), "{path}: what arrived was passed on: {text}");
        let (_, body) = text.split_once("\r\n\r\n").unwrap();
        if path == "/plain" {
            assert!(body.len() < 1000, "{path}: the body is short of its Content-Length: {text}");
        } else {
            assert!(text.to_ascii_lowercase().contains("transfer-encoding: chunked"), "{text}");
            assert!(!body.ends_with("0\r\n\r\n"), "{path}: no final chunk: a cut-off, not an end: {text}");
            assert_eq!(shim_count(body.as_bytes()), 1, "{text}");
        }
    }
}

#[tokio::test]
async fn localhost_reaches_a_server_bound_to_ipv6_loopback_only() {
    let Ok(probe) = std::net::TcpListener::bind("[::1]:0") else {
        eprintln!("no IPv6 loopback here; nothing to check");
        return;
    };
    drop(probe);
    let sc = Sidecar::start(&[]);
    let (up, log) = upstream_on("[::1]:0").await;
    assert!(std::net::TcpStream::connect(("127.0.0.1", up)).is_err(), "nothing on 127.0.0.1:{up}");
    let port = grant_port(&sc, &format!("http://localhost:{up}/")).await;
    let r = http(port, "/", &[]).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(shim_count(&r.body), 1);
    assert_eq!(log.lock().unwrap().last().unwrap().header("host"), Some(format!("localhost:{up}").as_str()));
}

#[tokio::test]
#[allow(clippy::result_large_err)] // tungstenite's handshake callback type
async fn websocket_echo_keeps_grant_alive_and_drops_cookies() {
    let sc = Sidecar::start_with_env(&[], &[("PORTHOLE_PROXY_GRANT_TTL_MS", "800")]);
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let up = l.local_addr().unwrap().port();
    // (path, cookie, origin, host) of each handshake.
    type Handshake = (String, Option<String>, Option<String>, Option<String>);
    let seen: Arc<Mutex<Vec<Handshake>>> = Arc::default();
    let seen2 = seen.clone();
    tokio::spawn(async move {
        while let Ok((s, _)) = l.accept().await {
            let seen = seen2.clone();
            tokio::spawn(async move {
                let cb =
                    |req: &tokio_tungstenite::tungstenite::handshake::server::Request,
                     mut resp: tokio_tungstenite::tungstenite::handshake::server::Response| {
                        let h = |n: &str| req.headers().get(n).map(|v| v.to_str().unwrap().to_string());
                        seen.lock().unwrap().push((req.uri().to_string(), h("cookie"), h("origin"), h("host")));
                        resp.headers_mut().insert("set-cookie", HeaderValue::from_static("ws=1"));
                        Ok(resp)
                    };
                let Ok(mut ws) = tokio_tungstenite::accept_hdr_async(s, cb).await else { return };
                while let Some(Ok(m)) = ws.next().await {
                    if (m.is_text() || m.is_binary()) && ws.send(m).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    let port = grant_port(&sc, &format!("http://localhost:{up}/")).await;
    let own = format!("http://127.0.0.1:{port}");
    let mut req = format!("ws://127.0.0.1:{port}/hmr?token=abc").into_client_request().unwrap();
    req.headers_mut().insert("cookie", HeaderValue::from_static("sid=secret"));
    req.headers_mut().insert("origin", HeaderValue::from_str(&own).unwrap());
    let stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let (mut ws, resp) = tokio_tungstenite::client_async(req, stream).await.expect("upgrade through the proxy");
    assert!(resp.headers().get("set-cookie").is_none(), "Set-Cookie dropped on the handshake");
    ws.send(Message::Text("ping 1".into())).await.unwrap();
    let m = tokio::time::timeout(HANG, ws.next()).await.unwrap().unwrap().unwrap();
    assert_eq!(m.into_text().unwrap().as_str(), "ping 1");
    {
        let s = seen.lock().unwrap();
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].0, "/hmr?token=abc");
        assert_eq!(s[0].1, None, "Cookie dropped on the handshake");
        assert_eq!(s[0].2.as_deref(), Some(format!("http://localhost:{up}").as_str()));
        assert_eq!(s[0].3.as_deref(), Some(format!("localhost:{up}").as_str()));
    }
    // An open socket keeps the grant alive well past its (test) TTL.
    tokio::time::sleep(Duration::from_millis(2000)).await;
    ws.send(Message::Text("ping 2".into())).await.unwrap();
    let m = tokio::time::timeout(HANG, ws.next()).await.unwrap().unwrap().unwrap();
    assert_eq!(m.into_text().unwrap().as_str(), "ping 2");
    assert_eq!(sc.req("GET", "/api/proxy/grants", None).await.json()["grants"].as_array().unwrap().len(), 1);
    // Closed: the grant expires.
    ws.close(None).await.ok();
    drop(ws);
    let mut gone = false;
    for _ in 0..100 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        if sc.req("GET", "/api/proxy/grants", None).await.json()["grants"].as_array().unwrap().is_empty() {
            gone = true;
            break;
        }
    }
    assert!(gone, "grant expired once the socket closed");
    assert!(TcpStream::connect(("127.0.0.1", port)).await.is_err(), "expired grant's listener is closed");
}

#[tokio::test]
async fn host_mismatch_is_refused_and_does_not_refresh_the_ttl() {
    let sc = Sidecar::start_with_env(&[], &[("PORTHOLE_PROXY_GRANT_TTL_MS", "1000")]);
    let (up, log) = upstream().await;
    let port = grant_port(&sc, &format!("http://127.0.0.1:{up}/")).await;
    let grants = || async { sc.req("GET", "/api/proxy/grants", None).await.json()["grants"].as_array().unwrap().len() };
    // Accepted and refused requests differ only by their Host header (no Origin, same path).
    let good_host = format!("localhost:{port}");
    for _ in 0..8 {
        assert_eq!(http(port, "/", &[("Host", &good_host)]).await.status, 200);
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert_eq!(grants().await, 1, "refreshed by accepted requests past the TTL");
    let before = log.lock().unwrap().len();
    let bad_hosts = [
        "evil.test".to_string(),
        format!("evil.test:{port}"),
        format!("127.0.0.1:{}", port.wrapping_add(1)),
        format!("[::1]:{port}"),
    ];
    let mut refused = 0;
    let mut expired = false;
    'rounds: for _ in 0..40 {
        for host in &bad_hosts {
            let Some(r) = try_http(port, "/", &[("Host", host)]).await else {
                expired = true;
                break 'rounds;
            };
            assert_eq!(r.status, 421, "{host}");
            refused += 1;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(expired, "the grant expired although refused requests kept coming");
    assert!(refused > 0);
    assert_eq!(grants().await, 0);
    assert_eq!(log.lock().unwrap().len(), before, "refused requests never reached the upstream");
}

/// The UI keeps an open pane's grant alive by asking for it again (protocol §6.3): a repeat
/// request returns the same grant and restarts its idle timer, with no proxied request at all.
#[tokio::test]
async fn a_repeat_grant_request_keeps_the_same_grant_alive() {
    let sc = Sidecar::start_with_env(&[], &[("PORTHOLE_PROXY_GRANT_TTL_MS", "1000")]);
    let (up, log) = upstream().await;
    let url = format!("http://127.0.0.1:{up}/");
    let port = grant_port(&sc, &url).await;
    for _ in 0..8 {
        tokio::time::sleep(Duration::from_millis(250)).await;
        assert_eq!(grant_port(&sc, &url).await, port, "the same grant while it lives");
    }
    // 2 s past its first request, with a 1 s TTL: alive only because it was asked for again.
    assert_eq!(http(port, "/", &[]).await.status, 200);
    assert_eq!(log.lock().unwrap().len(), 1, "kept alive with no proxied request");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
        assert!(tokio::time::Instant::now() < deadline, "the grant never expired once nobody asked");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn a_foreign_origin_is_served_but_does_not_refresh_the_ttl() {
    let sc = Sidecar::start_with_env(&[], &[("PORTHOLE_PROXY_GRANT_TTL_MS", "1000")]);
    let (up, log) = upstream().await;
    let port = grant_port(&sc, &format!("http://127.0.0.1:{up}/")).await;
    // These requests differ from the accepted ones above only by their Origin header.
    let mut served = 0;
    let mut expired = false;
    for _ in 0..80 {
        let Some(r) = try_http(port, "/", &[("Origin", "http://evil.test")]).await else {
            expired = true;
            break;
        };
        assert_eq!(r.status, 200);
        served += 1;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(expired, "the grant expired although foreign callers kept coming");
    assert!(served > 0);
    assert_eq!(log.lock().unwrap().len(), served, "foreign callers were served");
}

#[tokio::test]
async fn grant_cap_refuses_the_33rd() {
    let sc = Sidecar::start(&[]);
    for n in 1..=32u16 {
        let (st, v) = grant(&sc, &format!("http://127.0.0.1:{}/", 20000 + n), &[APP]).await;
        assert_eq!(st, 200, "{n}: {v}");
    }
    let (st, v) = grant(&sc, "http://127.0.0.1:19999/", &[APP]).await;
    assert_eq!((st, v["error"]["code"].as_str().unwrap()), (429, "too_many_grants"), "{v}");
    let (st, _) = grant(&sc, "http://127.0.0.1:20001/other", &[APP]).await;
    assert_eq!(st, 200, "an existing grant is still reused at the cap");
    assert_eq!(sc.req("DELETE", "/api/proxy/grants/g5", None).await.status, 204);
    let (st, _) = grant(&sc, "http://127.0.0.1:19999/", &[APP]).await;
    assert_eq!(st, 200, "room again after a revoke");
}

#[tokio::test]
async fn metadata_names_and_embedded_ipv4_literals_are_refused() {
    let sc = Sidecar::start(&[]);
    for url in [
        // NAT64 (RFC 6052 well-known and RFC 8215 local-use prefixes), 6to4, SIIT.
        "http://[64:ff9b::169.254.169.254]/",
        "http://[64:ff9b::a9fe:a9fe]/",
        "http://[64:ff9b:1::a9fe:a9fe]/",
        "http://[64:ff9b:1:a9fe:a9:fe00::]/",
        "http://[2002:a9fe:a9fe::1]/",
        "http://[::ffff:0:169.254.169.254]/",
        "http://[::ffff:0:a9fe:a9fe]/",
        "http://[64:ff9b::100.100.100.200]/",
        // Cloud metadata names.
        "http://metadata.google.internal/computeMetadata/v1/",
        "http://metadata.google.internal./",
        "http://METADATA.Google.Internal:80/",
        "http://metadata/",
        "http://metadata./",
        "http://instance-data/latest/meta-data/",
        "http://instance-data./",
    ] {
        let (st, v) = grant(&sc, url, &[APP]).await;
        assert_eq!((st, v["error"]["code"].as_str()), (403, Some("blocked_address")), "{url}: {v}");
    }
    for url in ["http://[64:ff9b::a00:5]/", "http://[2002:a00:5::1]/", "http://metadata.example.test/"] {
        let (st, v) = grant(&sc, url, &[APP]).await;
        assert_eq!(st, 200, "{url}: {v}");
    }
}

/// Set (to `1`) only in the child processes [`in_private_netns`] starts.
const IN_NETNS: &str = "PORTHOLE_TEST_IN_NETNS";

/// Runs the ignored test `inner` of this file in a child process with its own network
/// namespace (only `lo`, which also carries 169.254.169.254 and fe80::1, so nothing can leave
/// the machine whatever the proxy does, and TCP counters of its own) and its own `/etc/hosts`
/// (`hosts`). Fails, with the child's output, unless `inner` passed.
fn in_private_netns(inner: &str, hosts: &str) {
    let dir = temp_dir("netns");
    let hosts_file = dir.join("hosts");
    std::fs::write(&hosts_file, hosts).unwrap();
    let script = "ip link set lo up && ip addr add 169.254.169.254/32 dev lo && ip -6 addr add fe80::1/128 dev lo \
                  && mount --bind \"$0\" /etc/hosts && exec \"$1\" --exact \"$2\" --include-ignored --nocapture";
    let out = std::process::Command::new("unshare")
        .args(["--net", "--mount", "sh", "-c", script])
        .arg(&hosts_file)
        .arg(std::env::current_exe().unwrap())
        .arg(inner)
        .env(IN_NETNS, "1")
        .output()
        .expect("run unshare");
    let _ = std::fs::remove_dir_all(&dir);
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success() && text.contains("1 passed"), "{text}");
}

#[test]
fn names_resolving_to_link_local_are_never_dialled() {
    in_private_netns(
        "resolved_link_local_inside_a_private_netns",
        "127.0.0.1 localhost\n::1 localhost\n127.0.0.1 ok.test\n169.254.169.254 meta.test\nfe80::1 fe.test\n\
         169.254.169.254 mixed.test\n127.0.0.1 mixed.test\n",
    );
}

#[tokio::test]
#[ignore = "runs only inside names_resolving_to_link_local_are_never_dialled's namespaces"]
async fn resolved_link_local_inside_a_private_netns() {
    if std::env::var(IN_NETNS).as_deref() != Ok("1") {
        return;
    }
    let sc = Sidecar::start(&[]);
    // The same upstream answers on 127.0.0.1 and, on the same port, 169.254.169.254.
    let (up, log) = upstream().await;
    let meta = TcpListener::bind(("169.254.169.254", up)).await.expect("169.254.169.254 on lo");
    let dialled = Arc::new(Mutex::new(0usize));
    let d = dialled.clone();
    tokio::spawn(async move {
        while let Ok((s, _)) = meta.accept().await {
            *d.lock().unwrap() += 1;
            drop(s);
        }
    });
    let port = grant_port(&sc, &format!("http://ok.test:{up}/")).await;
    assert_eq!(http(port, "/", &[]).await.status, 200, "a name resolving to loopback is dialled");
    let port = grant_port(&sc, &format!("http://mixed.test:{up}/")).await;
    assert_eq!(http(port, "/", &[]).await.status, 200, "the loopback answer of a mixed name is dialled");
    let served = log.lock().unwrap().len();
    for name in ["meta.test", "fe.test"] {
        let port = grant_port(&sc, &format!("http://{name}:{up}/")).await;
        let r = http(port, "/", &[]).await;
        let body = String::from_utf8_lossy(&r.body).to_string();
        assert_eq!(r.status, 502, "{name}: {body}");
        assert!(body.contains("link-local or cloud-metadata address"), "{name}: {body}");
        assert!(body.contains(name), "{name}: the page names the host: {body}");
    }
    assert_eq!(*dialled.lock().unwrap(), 0, "169.254.169.254 was never connected to");
    assert_eq!(log.lock().unwrap().len(), served);
}

/// A keep-alive upstream that counts the connections it accepts and closes one idle for
/// `idle_close` (as Node's `keepAliveTimeout` does), or right after each response when
/// `close_after_each` (without saying so: no `Connection: close`). With `split`, it writes each
/// response's head and body in two writes with Nagle's algorithm on, as Python's `http.server`
/// does.
async fn keepalive_upstream(idle_close: Duration, close_after_each: bool, split: bool) -> (u16, Arc<Mutex<usize>>) {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = l.local_addr().unwrap().port();
    let accepted = Arc::new(Mutex::new(0usize));
    let a = accepted.clone();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = l.accept().await {
            *a.lock().unwrap() += 1;
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut b = [0u8; 4096];
                loop {
                    while !contains(&buf, b"\r\n\r\n") {
                        match tokio::time::timeout(idle_close, s.read(&mut b)).await {
                            Ok(Ok(n)) if n > 0 => buf.extend_from_slice(&b[..n]),
                            _ => return,
                        }
                    }
                    let end = buf.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
                    buf.drain(..end);
                    let body = "<!doctype html><title>kept</title>";
                    let head =
                        format!("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\r\n", body.len());
                    let sent = if split {
                        s.write_all(head.as_bytes()).await.is_ok() && s.write_all(body.as_bytes()).await.is_ok()
                    } else {
                        s.write_all(format!("{head}{body}").as_bytes()).await.is_ok()
                    };
                    if !sent || close_after_each {
                        return;
                    }
                }
            });
        }
    });
    (port, accepted)
}

#[tokio::test]
async fn upstream_connections_are_pooled_per_grant() {
    let sc = Sidecar::start(&[]);
    let (up, accepted) = keepalive_upstream(Duration::from_millis(400), false, false).await;
    let port = grant_port(&sc, &format!("http://127.0.0.1:{up}/")).await;
    for i in 0..10 {
        let path = if i % 2 == 0 { "/" } else { "/script.js" };
        let r = http(port, path, &[("Sec-Fetch-Dest", "script")]).await;
        assert_eq!(r.status, 200);
    }
    assert_eq!(*accepted.lock().unwrap(), 1, "ten requests in turn, one upstream connection");
    // The upstream closed the idle connection: the next request gets a fresh one.
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert_eq!(http(port, "/", &[]).await.status, 200);
    assert_eq!(*accepted.lock().unwrap(), 2);
    // Requests in parallel each get a connection; they are pooled for the next ones.
    let many: Vec<_> = (0..4).map(|_| tokio::spawn(async move { http(port, "/", &[]).await.status })).collect();
    for t in many {
        assert_eq!(t.await.unwrap(), 200);
    }
    let after_burst = *accepted.lock().unwrap();
    for _ in 0..4 {
        assert_eq!(http(port, "/", &[]).await.status, 200);
    }
    assert_eq!(*accepted.lock().unwrap(), after_burst, "the burst's connections were reused");
}

#[tokio::test]
async fn a_pooled_connection_the_upstream_dropped_is_retried_on_a_fresh_one() {
    let sc = Sidecar::start(&[]);
    let (up, accepted) = keepalive_upstream(Duration::from_secs(30), true, false).await;
    let port = grant_port(&sc, &format!("http://127.0.0.1:{up}/")).await;
    for i in 0..20 {
        let r = http(port, "/", &[]).await;
        assert_eq!(r.status, 200, "request {i}: {}", String::from_utf8_lossy(&r.body));
    }
    assert_eq!(*accepted.lock().unwrap(), 20);
}

/// Each request's path and `Cookie`, as an upstream saw them.
type CookieLog = Arc<Mutex<Vec<(String, Option<String>)>>>;

/// An upstream with a login session: `/login` sets `sid` (and a path-scoped cookie), `/me`
/// answers 200 with the session it was sent or 401, `/logout` expires it, `/ws` accepts a
/// WebSocket handshake.
async fn session_upstream() -> (u16, CookieLog) {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = l.local_addr().unwrap().port();
    let log: CookieLog = Arc::default();
    let log2 = log.clone();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = l.accept().await {
            let log = log2.clone();
            tokio::spawn(async move {
                let Some(buf) = common::request_head(&mut s).await else { return };
                let head = String::from_utf8_lossy(&buf).to_string();
                let path = head.split(' ').nth(1).unwrap().to_string();
                let header = |name: &str| {
                    head.lines().find_map(|l| {
                        let (k, v) = l.split_once(':')?;
                        k.trim().eq_ignore_ascii_case(name).then(|| v.trim().to_string())
                    })
                };
                let cookie = header("cookie");
                log.lock().unwrap().push((path.clone(), cookie.clone()));
                let sid = cookie.as_deref().and_then(|c| c.split("; ").find_map(|kv| kv.strip_prefix("sid=")));
                let resp = match (path.as_str(), sid) {
                    ("/ws", _) => {
                        let key = header("sec-websocket-key").unwrap_or_default();
                        let accept = tokio_tungstenite::tungstenite::handshake::derive_accept_key(key.as_bytes());
                        format!("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {accept}\r\nSet-Cookie: ws=1\r\n\r\n")
                    }
                    ("/login", _) => "HTTP/1.1 303 See Other\r\nLocation: /me\r\nSet-Cookie: sid=s3cret; Path=/; HttpOnly; SameSite=Lax\r\nSet-Cookie: cart=2; Path=/shop\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_string(),
                    ("/logout", _) => "HTTP/1.1 200 OK\r\nSet-Cookie: sid=; Path=/; Max-Age=0\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_string(),
                    (_, Some(sid)) => format!("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\nhello {sid}", sid.len() + 6),
                    _ => "HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_string(),
                };
                let _ = s.write_all(resp.as_bytes()).await;
                if path == "/ws" {
                    tokio::time::sleep(Duration::from_millis(500)).await;
                }
            });
        }
    });
    (port, log)
}

#[tokio::test]
async fn a_session_lives_in_the_grants_cookie_jar() {
    let sc = Sidecar::start(&[]);
    let (up, log) = session_upstream().await;
    let port = grant_port(&sc, &format!("http://localhost:{up}/")).await;
    let last_cookie = || log.lock().unwrap().last().unwrap().1.clone();
    assert_eq!(http(port, "/me", &[]).await.status, 401);
    let r = http(port, "/login", &[("Sec-Fetch-Site", "same-origin"), ("Sec-Fetch-Mode", "navigate")]).await;
    assert_eq!(r.status, 303);
    assert!(all(&r, "set-cookie").is_empty(), "the browser never sees the session");
    // The browser's own Cookie is still dropped; the jar's is sent instead.
    let r = http(port, "/me", &[("Cookie", "sid=forged")]).await;
    assert_eq!((r.status, String::from_utf8_lossy(&r.body).to_string()), (200, "hello s3cret".to_string()));
    assert_eq!(last_cookie().as_deref(), Some("sid=s3cret"));
    http(port, "/shop/cart", &[]).await;
    assert_eq!(last_cookie().as_deref(), Some("cart=2; sid=s3cret"), "path-scoped cookies, longest path first");
    // A WebSocket handshake carries the session; its own Set-Cookie is kept from the browser.
    let req = format!("ws://127.0.0.1:{port}/ws").into_client_request().unwrap();
    let stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let (_ws, resp) = tokio_tungstenite::client_async(req, stream).await.expect("upgrade through the proxy");
    assert!(resp.headers().get("set-cookie").is_none());
    assert_eq!(last_cookie().as_deref(), Some("sid=s3cret"), "the handshake had the session");
    // Another site can navigate to the page with the session, but not fetch or post with it.
    let cross = [("Sec-Fetch-Site", "cross-site"), ("Sec-Fetch-Mode", "navigate")];
    assert_eq!(http(port, "/me", &cross).await.status, 200);
    let cross = [("Sec-Fetch-Site", "cross-site"), ("Sec-Fetch-Mode", "cors")];
    assert_eq!(http(port, "/me", &cross).await.status, 401);
    assert_eq!(last_cookie(), None);
    // Another grant (another upstream origin) has a jar of its own.
    let other = grant_port(&sc, &format!("http://127.0.0.1:{up}/")).await;
    assert_eq!(http(other, "/me", &[]).await.status, 401);
    // Logging out expires it.
    http(port, "/logout", &[]).await;
    assert_eq!(http(port, "/me", &[]).await.status, 401);
}

/// A request to a proxy port with a body: the parsed response.
async fn http_body(port: u16, method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Resp {
    let mut s = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let mut req = format!("{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: {}\r\n", body.len());
    for (k, v) in headers {
        req += &format!("{k}: {v}\r\n");
    }
    req += "Connection: close\r\n\r\n";
    s.write_all(req.as_bytes()).await.unwrap();
    s.write_all(body).await.unwrap();
    let mut buf = Vec::new();
    tokio::time::timeout(HANG, s.read_to_end(&mut buf)).await.expect("http response").unwrap();
    parse_response(&buf)
}

/// The shim's `document.cookie` endpoint (protocol §6.4): the page's script reads the jar's
/// script-visible cookies and writes its own, which the upstream then gets; HttpOnly cookies
/// are neither shown nor overwritten; only the page's own origin may ask; nothing of it
/// reaches the upstream.
#[tokio::test]
async fn the_pages_script_reads_and_writes_the_jar_but_not_its_httponly_cookies() {
    let sc = Sidecar::start(&[]);
    let (up, log) = session_upstream().await;
    let port = grant_port(&sc, &format!("http://localhost:{up}/")).await;
    let last_cookie = || log.lock().unwrap().last().unwrap().1.clone();
    http(port, "/login", &[]).await;
    let page = [("X-Porthole-Cookie", "1"), ("Sec-Fetch-Site", "same-origin")];
    let read = |p: &'static str| async move {
        let r = http_body(port, "GET", &format!("/__porthole/cookie?p={p}"), &page, b"").await;
        assert_eq!(r.status, 200);
        String::from_utf8(r.body).unwrap()
    };
    assert_eq!(read("/").await, "", "the HttpOnly session is not the script's");
    assert_eq!(read("/shop/x").await, "cart=2");
    for line in ["theme=dark; Path=/", "sid=evil; Path=/", "sneaky=1; Path=/; HttpOnly"] {
        let r = http_body(port, "POST", "/__porthole/cookie?p=/", &page, line.as_bytes()).await;
        assert_eq!(r.status, 204, "{line}");
    }
    assert_eq!(read("/").await, "theme=dark");
    http(port, "/me", &[]).await;
    let mut sent: Vec<String> = last_cookie().unwrap().split("; ").map(str::to_string).collect();
    sent.sort();
    assert_eq!(sent, ["sid=s3cret", "theme=dark"], "the upstream gets the page's cookie");
    assert!(log.lock().unwrap().iter().all(|(p, _)| !p.starts_with("/__porthole")), "never forwarded");
    // Only the page itself: the header is required, another site is refused.
    for (headers, what) in [
        (&[("Sec-Fetch-Site", "same-origin")][..], "no X-Porthole-Cookie"),
        (&[("X-Porthole-Cookie", "1"), ("Sec-Fetch-Site", "cross-site")][..], "cross-site"),
        (&[("X-Porthole-Cookie", "1"), ("Origin", "http://evil.test")][..], "foreign Origin"),
    ] {
        let r = http_body(port, "POST", "/__porthole/cookie?p=/", headers, b"x=1").await;
        assert_eq!((r.status, r.json()["error"]["code"].as_str()), (403, Some("forbidden")), "{what}");
    }
    let r = http_body(port, "GET", "/__porthole/cookie", &page, b"").await;
    assert_eq!(r.status, 400, "no document path");
    let big = vec![b'a'; 9000];
    assert_eq!(http_body(port, "POST", "/__porthole/cookie?p=/", &page, &big).await.status, 413);
    assert_eq!(read("/").await, "theme=dark");
}

/// `TcpExt: DelayedACKs` of this network namespace: ACKs the kernel sent only when its
/// delayed-ACK timer fired.
fn delayed_acks() -> u64 {
    let netstat = std::fs::read_to_string("/proc/net/netstat").unwrap();
    let mut lines = netstat.lines().filter(|l| l.starts_with("TcpExt:"));
    let (names, values) = (lines.next().unwrap(), lines.next().unwrap());
    let i = names.split_whitespace().position(|n| n == "DelayedACKs").unwrap();
    values.split_whitespace().nth(i).unwrap().parse().unwrap()
}

/// Counted, not timed: each response an upstream writes in two writes with Nagle on waits
/// for the proxy's ACK of the first; a pooled connection must not make it wait for the
/// delayed-ACK timer.
#[test]
fn pooled_connections_acknowledge_at_once() {
    in_private_netns("split_writes_inside_a_private_netns", "127.0.0.1 localhost\n");
}

#[tokio::test]
#[ignore = "runs only inside pooled_connections_acknowledge_at_once's namespaces"]
async fn split_writes_inside_a_private_netns() {
    if std::env::var(IN_NETNS).as_deref() != Ok("1") {
        return;
    }
    let sc = Sidecar::start(&[]);
    let (up, accepted) = keepalive_upstream(Duration::from_secs(30), false, true).await;
    let port = grant_port(&sc, &format!("http://127.0.0.1:{up}/")).await;
    assert_eq!(http(port, "/", &[]).await.status, 200);
    let before = delayed_acks();
    for _ in 0..20 {
        assert_eq!(http(port, "/", &[("Sec-Fetch-Dest", "script")]).await.status, 200);
    }
    let delayed = delayed_acks() - before;
    assert_eq!(*accepted.lock().unwrap(), 1, "one pooled connection");
    assert!(delayed < 10, "{delayed} delayed-ACK timeouts for 20 requests");
}
