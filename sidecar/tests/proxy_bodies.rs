//! What the iframe proxy does to response bodies, through the real binary (protocol §6.5):
//! bytes kept exactly whatever the encoding and wherever it is declared, only document loads
//! instrumented, compressed documents decoded and served identity, in bounded memory. Each
//! test starts its own upstream on 127.0.0.1: a hand-written HTTP/1.1 server, so every byte
//! it sends is under the test's control.

mod common;

use std::sync::Arc;
use std::time::Duration;

use async_compression::tokio::write::{BrotliEncoder, DeflateEncoder, GzipEncoder, ZlibEncoder, ZstdEncoder};
use common::*;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const APP: &str = "http://127.0.0.1:4000";

/// What the upstream answers: `Content-Type`, any other header lines (`Name: value\r\n`), the
/// body, and where (if anywhere) to pause 200 ms mid-body.
struct Reply {
    content_type: &'static str,
    extra: String,
    body: Vec<u8>,
    pause_at: Option<usize>,
}

fn reply(content_type: &'static str, body: &[u8]) -> Reply {
    Reply { content_type, extra: String::new(), body: body.to_vec(), pause_at: None }
}

type Route = Arc<dyn Fn(&str) -> Reply + Send + Sync>;

/// Starts an upstream answering every request with `route(path)` (`Content-Length`, then
/// `Connection: close`); returns its port.
async fn upstream(route: Route) -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = l.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = l.accept().await {
            let route = route.clone();
            tokio::spawn(async move {
                let Some(buf) = common::request_head(&mut s).await else { return };
                let path = String::from_utf8_lossy(&buf).split(' ').nth(1).unwrap_or("/").to_string();
                let r = route(&path);
                let head = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: {}\r\n{}Content-Length: {}\r\nConnection: close\r\n\r\n",
                    r.content_type,
                    r.extra,
                    r.body.len()
                );
                let _ = s.write_all(head.as_bytes()).await;
                let (first, rest) = r.body.split_at(r.pause_at.unwrap_or(r.body.len()));
                let _ = s.write_all(first).await;
                if !rest.is_empty() {
                    let _ = s.flush().await;
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    let _ = s.write_all(rest).await;
                }
                let _ = s.shutdown().await;
            });
        }
    });
    port
}

/// A grant for `http://127.0.0.1:{up}/` with an embedder chain; returns its proxy port.
async fn grant_port(sc: &Sidecar, up: u16) -> u16 {
    let r = sc
        .req("POST", "/api/proxy/grants", Some(&json!({"url": format!("http://127.0.0.1:{up}/"), "embedders": [APP]})))
        .await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    r.json()["origin"].as_str().unwrap().trim_start_matches("http://127.0.0.1:").parse().unwrap()
}

/// A GET through the proxy with these headers (and `Connection: close`).
async fn get(port: u16, path: &str, headers: &[(&str, &str)]) -> Resp {
    let mut s = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let mut req = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n");
    for (k, v) in headers {
        req += &format!("{k}: {v}\r\n");
    }
    req += "Connection: close\r\n\r\n";
    s.write_all(req.as_bytes()).await.unwrap();
    let mut buf = Vec::new();
    tokio::time::timeout(HANG, s.read_to_end(&mut buf)).await.expect("response").unwrap();
    parse_response(&buf)
}

/// The shim's start: its `<script>` carries this response's CSP nonce (protocol §6.4).
const SHIM_START: &[u8] = b"<script nonce=\"";
const SHIM_END: &[u8] = b"})();</script>";

/// `b` with every byte outside printable ASCII escaped and the shim shortened to `SHIM`, for
/// readable failures.
fn shown(b: &[u8]) -> String {
    let Some(at) = find(b, SHIM_START) else { return b.escape_ascii().to_string() };
    let end = find(&b[at..], SHIM_END).map_or(b.len(), |e| at + e + SHIM_END.len());
    format!("{}SHIM{}", b[..at].escape_ascii(), shown(&b[end..]))
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// The body without the injected shim, and where the shim was (`None`: not injected). Fails
/// if there is more than one.
fn without_shim(body: &[u8]) -> (Vec<u8>, Option<usize>) {
    let Some(at) = find(body, SHIM_START) else { return (body.to_vec(), None) };
    let end = at + find(&body[at..], SHIM_END).expect("the shim's end") + SHIM_END.len();
    let rest = [&body[..at], &body[end..]].concat();
    assert!(find(&rest, SHIM_START).is_none(), "one shim only: {}", String::from_utf8_lossy(body));
    (rest, Some(at))
}

/// (what, Content-Type, body): pages whose bytes must come back exactly, plus the shim.
fn pages() -> Vec<(&'static str, &'static str, Vec<u8>)> {
    let mut long_head = b"<!doctype html><html><head><title>x</title>".to_vec();
    long_head.extend(b"<!-- padding -->".repeat(70));
    long_head.extend(b"<meta charset=windows-1252></head><body>Caf\xE9 \x81\x8D\x8F\x90\x9D \xFF</body></html>");
    vec![
        (
            "latin-1 declared by meta only",
            "text/html",
            b"<!doctype html><meta charset=\"iso-8859-1\"><title>Caf\xE9</title><p>Caf\xE9</p>".to_vec(),
        ),
        ("latin-1 declared nowhere", "text/html", b"<!doctype html><title>Caf\xE9</title><p>Caf\xE9</p>".to_vec()),
        (
            // 日本 表 ソ, and NEC-selected IBM 0xED40, which an encoder writes back as 0xFA5C.
            "Shift_JIS declared by meta",
            "text/html",
            b"<!doctype html><meta charset=\"shift_jis\"><title>\x93\xfa\x96\x7b</title><p>\x95\x5c \x83\x5c \xed\x40</p>"
                .to_vec(),
        ),
        (
            "EUC-JP declared by http-equiv",
            "text/html",
            b"<html><head><meta http-equiv=\"Content-Type\" content=\"text/html; charset=euc-jp\"><title>\xc6\xfc\xcb\xdc</title></head><body>\xa4\xa2</body></html>"
                .to_vec(),
        ),
        ("meta charset past the first 1024 bytes", "text/html", long_head),
        (
            "windows-1252 bytes a real code page leaves unmapped",
            "text/html; charset=windows-1252",
            b"<head></head><p>\x81\x8D\x8F\x90\x9D</p>".to_vec(),
        ),
        (
            "invalid UTF-8 in a UTF-8 page",
            "text/html; charset=utf-8",
            b"<head><title>\xFF\xFE\xC3</title></head><body>\xE2\x82</body>".to_vec(),
        ),
        (
            "a UTF-8 byte-order mark wins over a UTF-16 label",
            "text/html; charset=utf-16le",
            b"\xEF\xBB\xBF<head><title>Caf\xC3\xA9</title></head>".to_vec(),
        ),
        (
            "a UTF-16 meta charset means UTF-8",
            "text/html",
            b"<meta charset=utf-16><head><title>Caf\xC3\xA9</title></head>".to_vec(),
        ),
    ]
}

#[tokio::test]
async fn non_ascii_bodies_are_byte_identical_apart_from_the_shim() {
    let sc = Sidecar::start(&[]);
    let all = Arc::new(pages());
    let served = all.clone();
    let up = upstream(Arc::new(move |path: &str| {
        let i: usize = path.trim_start_matches('/').parse().unwrap();
        reply(served[i].1, &served[i].2)
    }))
    .await;
    let port = grant_port(&sc, up).await;
    for (i, (what, ct, body)) in all.iter().enumerate() {
        let r = get(port, &format!("/{i}"), &[("Sec-Fetch-Dest", "iframe")]).await;
        assert_eq!(r.status, 200, "{what}");
        assert_eq!(r.header("content-type"), Some(*ct), "{what}: Content-Type kept exactly");
        let (rest, at) = without_shim(&r.body);
        assert!(at.is_some(), "{what}: instrumented: {}", shown(&r.body));
        assert_eq!(shown(&rest), shown(body), "{what}: every other byte kept");
    }
}

#[tokio::test]
async fn bodies_that_are_not_ascii_compatible_pass_through_untouched() {
    let sc = Sidecar::start(&[]);
    // ISO-2022-JP: 日本 is ESC $ B, 0x46 0x7C 0x4B 0x5C, ESC ( B; its two-byte codes may
    // contain `<` (0x3C), so an HTML tokenizer must never see it as ASCII.
    let jis =
        b"<!doctype html><meta charset=iso-2022-jp><title>\x1b$BF|K\\\x1b(B</title><p>\x1b$B<<\x1b(B</p>".to_vec();
    let cases: Vec<(&str, &'static str, Vec<u8>, Option<usize>)> = vec![
        ("ISO-2022-JP declared by meta", "text/html", jis.clone(), None),
        ("ISO-2022-JP declared by meta after a pause", "text/html", jis, Some(20)),
        ("UTF-16 declared by Content-Type", "text/html; charset=utf-16", b"<\0h\0e\0a\0d\0>\0".to_vec(), None),
        ("UTF-16 byte-order mark", "text/html", b"\xff\xfe<\0h\0e\0a\0d\0>\0".to_vec(), None),
        ("UTF-16BE byte-order mark", "text/html; charset=utf-8", b"\xfe\xff\0<\0h\0e\0a\0d\0>".to_vec(), None),
    ];
    let all = Arc::new(cases);
    let served = all.clone();
    let up = upstream(Arc::new(move |path: &str| {
        let i: usize = path.trim_start_matches('/').parse().unwrap();
        Reply { pause_at: served[i].3, ..reply(served[i].1, &served[i].2) }
    }))
    .await;
    let port = grant_port(&sc, up).await;
    for (i, (what, _, body, _)) in all.iter().enumerate() {
        let r = get(port, &format!("/{i}"), &[]).await;
        assert_eq!(shown(&r.body), shown(body), "{what}: untouched");
    }
}

#[tokio::test]
async fn only_document_loads_are_instrumented() {
    let sc = Sidecar::start(&[]);
    let frag: &[u8] = b"<li>a</li><li>b</li>";
    let up = upstream(Arc::new(move |_: &str| reply("text/html; charset=utf-8", frag))).await;
    let port = grant_port(&sc, up).await;
    for dest in [None, Some("document"), Some("iframe"), Some("frame")] {
        let headers: Vec<(&str, &str)> = dest.map(|d| ("Sec-Fetch-Dest", d)).into_iter().collect();
        let r = get(port, "/frag.html", &headers).await;
        let (rest, at) = without_shim(&r.body);
        assert!(at.is_some(), "{dest:?}: a document load is instrumented");
        assert_eq!(shown(&rest), shown(frag));
    }
    // fetch()/XHR (htmx, Turbo partials), and anything else that is not a document.
    for dest in ["empty", "script", "style"] {
        let r = get(port, "/frag.html", &[("Sec-Fetch-Dest", dest)]).await;
        assert_eq!(shown(&r.body), shown(frag), "{dest}: untouched");
        assert_eq!(r.header("content-length"), Some("20"), "{dest}: length kept");
    }
}

/// Compresses `data` with one HTTP content coding.
async fn compress(coding: &str, data: &[u8]) -> Vec<u8> {
    async fn run<W: tokio::io::AsyncWrite + Unpin>(mut w: W, data: &[u8]) -> W {
        w.write_all(data).await.unwrap();
        w.shutdown().await.unwrap();
        w
    }
    match coding {
        "gzip" | "x-gzip" => run(GzipEncoder::new(Vec::new()), data).await.into_inner(),
        "deflate" => run(ZlibEncoder::new(Vec::new()), data).await.into_inner(),
        "raw-deflate" => run(DeflateEncoder::new(Vec::new()), data).await.into_inner(),
        "br" => run(BrotliEncoder::new(Vec::new()), data).await.into_inner(),
        "zstd" => run(ZstdEncoder::new(Vec::new()), data).await.into_inner(),
        other => panic!("no encoder for {other}"),
    }
}

const PAGE: &[u8] = b"<!doctype html><html><head><title>Caf\xE9</title></head><body>compressed</body></html>";

#[tokio::test]
async fn compressed_documents_are_decoded_instrumented_and_served_identity() {
    let sc = Sidecar::start(&[]);
    // (Content-Encoding sent, the body): the upstream compresses whatever Accept-Encoding says.
    let gzip_then_br = compress("br", &compress("gzip", PAGE).await).await;
    let mut cases: Vec<(&str, Vec<u8>)> = Vec::new();
    for coding in ["gzip", "x-gzip", "deflate", "br", "zstd"] {
        cases.push((coding, compress(coding, PAGE).await));
    }
    cases.push(("deflate", compress("raw-deflate", PAGE).await));
    cases.push(("gzip, br", gzip_then_br));
    cases.push(("identity, gzip", compress("gzip", PAGE).await));
    let all = Arc::new(cases);
    let served = all.clone();
    let up = upstream(Arc::new(move |path: &str| {
        let route = path.trim_start_matches('/');
        let (i, ct) = match route.split_once('.') {
            Some((i, "js")) => (i, "text/javascript"),
            _ => (route, "text/html"),
        };
        let (coding, body) = &served[i.parse::<usize>().unwrap()];
        Reply { extra: format!("Content-Encoding: {coding}\r\nVary: Accept-Encoding\r\n"), ..reply(ct, body) }
    }))
    .await;
    let port = grant_port(&sc, up).await;
    for (i, (coding, body)) in all.iter().enumerate() {
        let r = get(port, &format!("/{i}"), &[("Sec-Fetch-Dest", "document"), ("Accept-Encoding", "gzip, br")]).await;
        assert_eq!(r.status, 200, "{coding}");
        assert_eq!(r.header("content-encoding"), None, "{coding}: served identity");
        assert_eq!(r.header("content-length"), None, "{coding}: the upstream's length no longer applies");
        let (rest, at) = without_shim(&r.body);
        assert!(at.is_some(), "{coding}: instrumented: {}", shown(&r.body));
        assert_eq!(shown(&rest), shown(PAGE), "{coding}: decoded exactly");

        // Not a document, or not HTML: passed on as the upstream sent it.
        for (path, dest) in
            [(format!("/{i}"), "empty"), (format!("/{i}.js"), "script"), (format!("/{i}.js"), "document")]
        {
            let r = get(port, &path, &[("Sec-Fetch-Dest", dest)]).await;
            assert_eq!(r.header("content-encoding"), Some(*coding), "{coding} {path} {dest}");
            assert_eq!(shown(&r.body), shown(body), "{coding} {path} {dest}: untouched");
        }
    }
}

#[tokio::test]
async fn unknown_or_corrupt_codings_are_never_instrumented() {
    let sc = Sidecar::start(&[]);
    let up = upstream(Arc::new(|path: &str| match path {
        "/compress" => {
            Reply { extra: "Content-Encoding: compress\r\n".into(), ..reply("text/html", b"\x1f\x9d<head>") }
        }
        _ => Reply {
            extra: "Content-Encoding: gzip\r\n".into(),
            ..reply("text/html", b"\x1f\x8b\x08\x00<head></head>\x00\x01\x02\xff\xfe\x00")
        },
    }))
    .await;
    let port = grant_port(&sc, up).await;
    let r = get(port, "/compress", &[]).await;
    assert_eq!(r.header("content-encoding"), Some("compress"), "a coding the proxy cannot decode is left alone");
    assert_eq!(r.body, b"\x1f\x9d<head>");
    // Corrupt gzip: the response is cut off (no last chunk), as the browser itself would fail
    // to decode it.
    let mut s = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    s.write_all(format!("GET /corrupt HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let mut raw = Vec::new();
    let _ = tokio::time::timeout(HANG, s.read_to_end(&mut raw)).await.expect("the response ends");
    let text = String::from_utf8_lossy(&raw).to_string();
    assert!(text.starts_with("HTTP/1.1 200 ") && !text.ends_with("0\r\n\r\n"), "{text}");
}

/// The sidecar's resident memory, in KiB.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[tokio::test]
async fn a_decompression_bomb_is_decoded_as_the_browser_reads() {
    let sc = Sidecar::start(&[]);
    // 256 MiB of text inflated from about 250 KiB of gzip.
    const INFLATED: usize = 256 << 20;
    let mut enc = GzipEncoder::with_quality(Vec::new(), async_compression::Level::Fastest);
    enc.write_all(b"<!doctype html><html><head><title>bomb</title></head><body>").await.unwrap();
    let spaces = vec![b' '; 1 << 20];
    for _ in 0..INFLATED >> 20 {
        enc.write_all(&spaces).await.unwrap();
    }
    enc.shutdown().await.unwrap();
    let bomb = Arc::new(enc.into_inner());
    let sent = bomb.clone();
    let up = upstream(Arc::new(move |_: &str| Reply {
        extra: "Content-Encoding: gzip\r\n".into(),
        ..reply("text/html", &sent)
    }))
    .await;
    let port = grant_port(&sc, up).await;
    let before = rss_kib(sc.pid);
    let mut s = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    s.write_all(format!("GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let mut raw = Vec::new();
    let mut b = [0u8; 65536];
    while !contains(&raw, b"</head>") || raw.len() < 1 << 20 {
        let n = tokio::time::timeout(HANG, s.read(&mut b)).await.expect("the page starts").unwrap();
        assert!(n > 0, "the response ended early: {}", shown(&raw[..raw.len().min(300)]));
        raw.extend_from_slice(&b[..n]);
    }
    assert!(contains(&raw, b"__porthole_shim"), "decoded and instrumented");
    // The upstream has sent everything; the browser reads no more for a while.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let grown = rss_kib(sc.pid).saturating_sub(before);
    assert!(grown < 64 << 10, "the sidecar grew by {grown} KiB for an unread 256 MiB body");
}
