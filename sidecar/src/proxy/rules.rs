//! The header rules (docs/protocol.md "Proxy", header table): pure functions on header maps.

use hyper::header::{self, HeaderMap, HeaderName, HeaderValue};

use super::csp::{rewrite_csp, CspContext};

/// The response header by which an upstream opts into keeping its CSP (consumed).
pub const PRESERVE_CSP_HEADER: &str = "x-porthole-preserve-csp";

/// Hop-by-hop headers (RFC 7230 §6.1 plus the legacy `keep-alive`/`proxy-connection`).
const HOP_BY_HOP: [&str; 9] = [
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
];

/// `Sec-Fetch-Dest` values that mean a document load (an absent header counts too).
const DOCUMENT_DESTS: [&str; 5] = ["document", "iframe", "frame", "embed", "object"];

/// The two origins by which a browser may name one grant.
#[derive(Debug, Clone)]
pub struct ProxyOrigins {
    /// `http://127.0.0.1:P` (what the grant API hands out).
    pub canonical: String,
    /// `http://localhost:P`.
    pub localhost: String,
}

impl ProxyOrigins {
    /// Both origins of the grant listening on `port`.
    pub fn new(port: u16) -> Self {
        ProxyOrigins { canonical: format!("http://127.0.0.1:{port}"), localhost: format!("http://localhost:{port}") }
    }

    /// Returns true if and only if `origin` is exactly one of the grant's own origins.
    pub fn is_own(&self, origin: &str) -> bool {
        origin == self.canonical || origin.eq_ignore_ascii_case(&self.localhost)
    }

    /// If `url` starts with one of the grant's origins followed by `/`, `?`, `#` or nothing,
    /// returns the rest.
    fn strip<'a>(&self, url: &'a str) -> Option<&'a str> {
        for o in [&self.canonical, &self.localhost] {
            if url.len() >= o.len() && url.is_char_boundary(o.len()) && url[..o.len()].eq_ignore_ascii_case(o) {
                let rest = &url[o.len()..];
                if rest.is_empty() || rest.starts_with(['/', '?', '#']) {
                    return Some(rest);
                }
            }
        }
        None
    }
}

/// Returns true if and only if the request is a document load: `Sec-Fetch-Dest` absent or
/// one of document, iframe, frame, embed, object.
pub fn is_document_load(h: &HeaderMap) -> bool {
    match h.get("sec-fetch-dest").and_then(|v| v.to_str().ok()) {
        None => true,
        Some(d) => DOCUMENT_DESTS.iter().any(|x| d.trim().eq_ignore_ascii_case(x)),
    }
}

/// Returns true if and only if the request asks for a protocol upgrade (`Connection:
/// upgrade` and an `Upgrade` header).
pub fn is_upgrade(h: &HeaderMap) -> bool {
    h.contains_key(header::UPGRADE) && connection_tokens(h).iter().any(|t| t == "upgrade")
}

fn connection_tokens(h: &HeaderMap) -> Vec<String> {
    h.get_all(header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|t| t.trim().to_ascii_lowercase())
        .filter(|t| !t.is_empty())
        .collect()
}

/// Removes hop-by-hop headers and every header named in `Connection`.
fn strip_hop_by_hop(h: &mut HeaderMap) {
    for t in connection_tokens(h) {
        if let Ok(name) = HeaderName::from_bytes(t.as_bytes()) {
            h.remove(name);
        }
    }
    for n in HOP_BY_HOP {
        h.remove(n);
    }
}

/// Rewrites a browser request's headers for the upstream, in place. `upgrade` keeps the
/// `Connection: upgrade` / `Upgrade` pair of a WebSocket handshake.
pub fn rewrite_request(
    h: &mut HeaderMap,
    own: &ProxyOrigins,
    upstream_origin: &str,
    upstream_host: &str,
    upgrade: bool,
) {
    let upgrade_value = h.get(header::UPGRADE).cloned();
    let document = is_document_load(h);
    strip_hop_by_hop(h);
    if upgrade {
        if let Some(u) = upgrade_value {
            h.insert(header::CONNECTION, HeaderValue::from_static("upgrade"));
            h.insert(header::UPGRADE, u);
        }
    }
    if let Ok(v) = HeaderValue::from_str(upstream_host) {
        h.insert(header::HOST, v);
    }
    h.remove(header::COOKIE);
    let origin_is_own = h.get(header::ORIGIN).and_then(|v| v.to_str().ok()).is_some_and(|o| own.is_own(o));
    if origin_is_own {
        if let Ok(v) = HeaderValue::from_str(upstream_origin) {
            h.insert(header::ORIGIN, v);
        }
    }
    if let Some(rest) = h.get(header::REFERER).and_then(|v| v.to_str().ok()).and_then(|r| own.strip(r)) {
        if let Ok(v) = HeaderValue::from_str(&format!("{upstream_origin}{rest}")) {
            h.insert(header::REFERER, v);
        }
    }
    if document {
        h.remove(header::ACCEPT_ENCODING);
    }
}

/// What the response rules decided beyond the headers themselves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResponsePlan {
    /// The upstream opted into keeping its CSP (headers and meta policies).
    pub preserve_csp: bool,
}

/// Rewrites an upstream response's headers for the browser, in place. `upstream_origins` are
/// the upstream's own origins (`Upstream::own_origins`: its origin first, then, for a
/// loopback upstream, the other loopback spellings of its port): a `Location` on any of them
/// is turned into the proxy's, so a redirect stays inside the proxy. `chain` is the
/// validated embedder chain (`None`: framing headers are left as they are). `upgrade` keeps
/// the `Connection`/`Upgrade` pair of a `101` answer.
pub fn rewrite_response(
    h: &mut HeaderMap,
    own: &ProxyOrigins,
    upstream_origins: &[String],
    chain: Option<&[String]>,
    upgrade: bool,
    csp: &CspContext,
) -> ResponsePlan {
    let upgrade_value = h.get(header::UPGRADE).cloned();
    strip_hop_by_hop(h);
    if upgrade {
        if let Some(u) = upgrade_value {
            h.insert(header::CONNECTION, HeaderValue::from_static("upgrade"));
            h.insert(header::UPGRADE, u);
        }
    }
    h.remove(header::SET_COOKIE);
    let preserve_csp =
        h.get_all(PRESERVE_CSP_HEADER).iter().any(|v| v.to_str().map(|s| s.trim() == "1").unwrap_or(false));
    h.remove(PRESERVE_CSP_HEADER);
    if let Some(chain) = chain {
        h.remove(header::X_FRAME_OPTIONS);
        if !preserve_csp {
            // The page's policies are kept, made to work through the proxy (`csp.rs`).
            for name in [header::CONTENT_SECURITY_POLICY, header::CONTENT_SECURITY_POLICY_REPORT_ONLY] {
                let values: Vec<String> =
                    h.get_all(&name).iter().filter_map(|v| v.to_str().ok()).map(str::to_string).collect();
                h.remove(&name);
                for v in values.iter().filter_map(|v| rewrite_csp(v, csp)) {
                    if let Ok(v) = HeaderValue::from_str(&v) {
                        h.append(&name, v);
                    }
                }
            }
        }
        if let Ok(v) = HeaderValue::from_str(&frame_ancestors(chain)) {
            h.append(header::CONTENT_SECURITY_POLICY, v);
        }
    }
    if let Some(loc) = h.get(header::LOCATION).and_then(|v| v.to_str().ok()) {
        if let Some(rest) = upstream_origins.iter().find_map(|o| strip_origin(loc, o)) {
            if let Ok(v) = HeaderValue::from_str(&format!("{}{rest}", own.canonical)) {
                h.insert(header::LOCATION, v);
            }
        }
    }
    h.append(header::VARY, HeaderValue::from_static("Sec-Fetch-Dest"));
    ResponsePlan { preserve_csp }
}

/// The one framing policy: `frame-ancestors 'self' <chain…>`.
pub fn frame_ancestors(chain: &[String]) -> String {
    let mut s = String::from("frame-ancestors 'self'");
    for o in chain {
        s.push(' ');
        s.push_str(o);
    }
    s
}

fn strip_origin<'a>(url: &'a str, origin: &str) -> Option<&'a str> {
    if url.len() >= origin.len()
        && url.is_char_boundary(origin.len())
        && url[..origin.len()].eq_ignore_ascii_case(origin)
    {
        let rest = &url[origin.len()..];
        if rest.is_empty() || rest.starts_with(['/', '?', '#']) {
            return Some(if rest.is_empty() { "/" } else { rest });
        }
    }
    // `http://host:80/…` names the same origin as `http://host/…`.
    if !origin[7..].contains(':') || origin.ends_with(']') {
        return strip_origin(url, &format!("{origin}:80")).filter(|_| !url.is_empty());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const UP: &str = "http://localhost:5173";
    const UP_HOST: &str = "localhost:5173";

    /// (input headers, header to check, its values after the rewrite)
    type Case<'a> = (&'a [(&'a str, &'a str)], &'a str, &'a [&'a str]);

    fn own() -> ProxyOrigins {
        ProxyOrigins::new(41000)
    }

    fn csp() -> CspContext {
        CspContext {
            upstream_origins: vec![UP.into()],
            proxy_origins: ["http://127.0.0.1:41000".into(), "http://localhost:41000".into()],
            nonce: "N".into(),
            cookie_path: "/__porthole/cookie",
        }
    }

    fn map(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(HeaderName::from_bytes(k.as_bytes()).unwrap(), HeaderValue::from_str(v).unwrap());
        }
        h
    }

    fn all(h: &HeaderMap, name: &str) -> Vec<String> {
        h.get_all(name).iter().map(|v| v.to_str().unwrap().to_string()).collect()
    }

    #[test]
    fn request_rules() {
        let cases: &[Case] = &[
            (&[("Host", "127.0.0.1:41000")], "host", &[UP_HOST]),
            (&[("Origin", "http://127.0.0.1:41000")], "origin", &[UP]),
            (&[("Origin", "http://localhost:41000")], "origin", &[UP]),
            (&[("Origin", "http://127.0.0.1:41001")], "origin", &["http://127.0.0.1:41001"]),
            (&[("Origin", "null")], "origin", &["null"]),
            (&[("Origin", "http://127.0.0.1:41000/")], "origin", &["http://127.0.0.1:41000/"]),
            (&[], "origin", &[]),
            (&[("Referer", "http://127.0.0.1:41000/a/b?q=1")], "referer", &["http://localhost:5173/a/b?q=1"]),
            (&[("Referer", "http://127.0.0.1:41000")], "referer", &["http://localhost:5173"]),
            (&[("Referer", "http://127.0.0.1:410001/x")], "referer", &["http://127.0.0.1:410001/x"]),
            (&[("Referer", "http://other.test/x")], "referer", &["http://other.test/x"]),
            (&[("Cookie", "a=1")], "cookie", &[]),
            (&[("Accept-Encoding", "gzip")], "accept-encoding", &[]),
            (&[("Accept-Encoding", "gzip"), ("Sec-Fetch-Dest", "document")], "accept-encoding", &[]),
            (&[("Accept-Encoding", "gzip"), ("Sec-Fetch-Dest", "iframe")], "accept-encoding", &[]),
            (&[("Accept-Encoding", "gzip"), ("Sec-Fetch-Dest", "Frame")], "accept-encoding", &[]),
            (&[("Accept-Encoding", "gzip"), ("Sec-Fetch-Dest", "embed")], "accept-encoding", &[]),
            (&[("Accept-Encoding", "gzip"), ("Sec-Fetch-Dest", "object")], "accept-encoding", &[]),
            (&[("Accept-Encoding", "gzip"), ("Sec-Fetch-Dest", "script")], "accept-encoding", &["gzip"]),
            (&[("Accept-Encoding", "br"), ("Sec-Fetch-Dest", "empty")], "accept-encoding", &["br"]),
            (&[("Connection", "keep-alive, x-secret"), ("X-Secret", "1")], "x-secret", &[]),
            (&[("Connection", "keep-alive")], "connection", &[]),
            (&[("Keep-Alive", "timeout=5")], "keep-alive", &[]),
            (&[("TE", "trailers")], "te", &[]),
            (&[("Proxy-Authorization", "x")], "proxy-authorization", &[]),
            (&[("Accept", "text/html")], "accept", &["text/html"]),
        ];
        for (input, name, want) in cases {
            let mut h = map(input);
            rewrite_request(&mut h, &own(), UP, UP_HOST, false);
            assert_eq!(all(&h, name), want.iter().map(|s| s.to_string()).collect::<Vec<_>>(), "{input:?} → {name}");
        }
    }

    #[test]
    fn upgrade_requests_keep_upgrade_and_drop_cookie() {
        let mut h =
            map(&[("Connection", "Upgrade"), ("Upgrade", "websocket"), ("Cookie", "a=1"), ("Sec-WebSocket-Key", "k")]);
        assert!(is_upgrade(&h));
        rewrite_request(&mut h, &own(), UP, UP_HOST, true);
        assert_eq!(all(&h, "connection"), ["upgrade"]);
        assert_eq!(all(&h, "upgrade"), ["websocket"]);
        assert_eq!(all(&h, "sec-websocket-key"), ["k"]);
        assert!(h.get("cookie").is_none());
        assert!(!is_upgrade(&map(&[("Upgrade", "websocket")])));
    }

    #[test]
    fn response_rules() {
        let chain = vec!["http://127.0.0.1:4000".to_string(), "tauri://localhost".to_string()];
        let fa = "frame-ancestors 'self' http://127.0.0.1:4000 tauri://localhost";
        let cases: &[Case] = &[
            (&[("Set-Cookie", "a=1"), ("Set-Cookie", "b=2")], "set-cookie", &[]),
            (&[("X-Frame-Options", "DENY")], "x-frame-options", &[]),
            (&[("Content-Security-Policy", "frame-ancestors 'none'")], "content-security-policy", &[fa]),
            // The page's policy is kept (its frame-ancestors is the proxy's), made to work
            // through the proxy (csp.rs), beside the one framing policy.
            (
                &[
                    ("Content-Security-Policy", "default-src 'self'"),
                    ("Content-Security-Policy", "frame-ancestors 'none'"),
                ],
                "content-security-policy",
                &["default-src 'self' 'nonce-N' http://127.0.0.1:41000/__porthole/cookie", fa],
            ),
            (
                &[("Content-Security-Policy-Report-Only", "default-src 'none'")],
                "content-security-policy-report-only",
                &["default-src 'nonce-N' http://127.0.0.1:41000/__porthole/cookie"],
            ),
            (&[], "content-security-policy", &[fa]),
            (
                &[("Content-Security-Policy", "script-src 'self'"), ("X-Porthole-Preserve-CSP", "1")],
                "content-security-policy",
                &["script-src 'self'", fa],
            ),
            (
                &[("Content-Security-Policy-Report-Only", "img-src 'none'"), ("X-Porthole-Preserve-CSP", "1")],
                "content-security-policy-report-only",
                &["img-src 'none'"],
            ),
            (&[("X-Porthole-Preserve-CSP", "1")], "x-porthole-preserve-csp", &[]),
            (
                &[("X-Porthole-Preserve-CSP", "0"), ("Content-Security-Policy", "a")],
                "content-security-policy",
                &["a", fa],
            ),
            (&[("Location", "http://localhost:5173/next?x=1")], "location", &["http://127.0.0.1:41000/next?x=1"]),
            (&[("Location", "http://LOCALHOST:5173")], "location", &["http://127.0.0.1:41000/"]),
            (&[("Location", "/relative")], "location", &["/relative"]),
            (&[("Location", "http://localhost:51730/x")], "location", &["http://localhost:51730/x"]),
            (&[("Location", "http://elsewhere.test/")], "location", &["http://elsewhere.test/"]),
            (&[], "vary", &["Sec-Fetch-Dest"]),
            (&[("Vary", "Accept-Encoding")], "vary", &["Accept-Encoding", "Sec-Fetch-Dest"]),
            (&[("Connection", "close, x-hop"), ("X-Hop", "1")], "x-hop", &[]),
            (&[("Transfer-Encoding", "chunked")], "transfer-encoding", &[]),
            (&[("Keep-Alive", "timeout=5")], "keep-alive", &[]),
            (&[("Trailer", "x")], "trailer", &[]),
            (&[("Content-Type", "text/html; charset=ISO-8859-1")], "content-type", &["text/html; charset=ISO-8859-1"]),
        ];
        for (input, name, want) in cases {
            let mut h = map(input);
            rewrite_response(&mut h, &own(), &[UP.into()], Some(&chain), false, &csp());
            assert_eq!(all(&h, name), want.iter().map(|s| s.to_string()).collect::<Vec<_>>(), "{input:?} → {name}");
        }
    }

    #[test]
    fn without_a_chain_framing_headers_are_kept() {
        let mut h = map(&[
            ("X-Frame-Options", "DENY"),
            ("Content-Security-Policy", "frame-ancestors 'none'"),
            ("Set-Cookie", "a=1"),
        ]);
        let plan = rewrite_response(&mut h, &own(), &[UP.into()], None, false, &csp());
        assert!(!plan.preserve_csp);
        assert_eq!(all(&h, "x-frame-options"), ["DENY"]);
        assert_eq!(all(&h, "content-security-policy"), ["frame-ancestors 'none'"]);
        assert!(h.get("set-cookie").is_none());
    }

    #[test]
    fn upgrade_responses_keep_upgrade_and_drop_set_cookie() {
        let mut h = map(&[
            ("Connection", "Upgrade"),
            ("Upgrade", "websocket"),
            ("Set-Cookie", "a=1"),
            ("Sec-WebSocket-Accept", "x"),
        ]);
        rewrite_response(&mut h, &own(), &[UP.into()], Some(&["http://a.test".to_string()]), true, &csp());
        assert_eq!(all(&h, "upgrade"), ["websocket"]);
        assert_eq!(all(&h, "sec-websocket-accept"), ["x"]);
        assert!(h.get("set-cookie").is_none());
    }

    #[test]
    fn location_on_default_port_origin() {
        let own = own();
        let mut h = map(&[("Location", "http://example.test:80/a")]);
        rewrite_response(&mut h, &own, &["http://example.test".into()], None, false, &csp());
        assert_eq!(all(&h, "location"), ["http://127.0.0.1:41000/a"]);
        let mut h = map(&[("Location", "http://example.test/a")]);
        rewrite_response(&mut h, &own, &["http://example.test".into()], None, false, &csp());
        assert_eq!(all(&h, "location"), ["http://127.0.0.1:41000/a"]);
    }
}
