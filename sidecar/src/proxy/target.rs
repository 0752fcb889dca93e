//! What a grant may front: the upstream URL check (scheme, blocked address literals) and the
//! embedder chain check.

use url::{Host, Url};

use super::ProxyError;
use crate::address::check_host;

/// Most embedder origins accepted in one chain (a deeper chain is treated as no chain).
pub const MAX_EMBEDDERS: usize = 16;

/// A parsed, accepted upstream: what the proxy dials and how it names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Upstream {
    /// `http://host[:port]`, the origin the user named (host lower-cased, IPv4 canonical).
    pub origin: String,
    /// The `Host` header sent upstream: host as the user named it, plus the port when it was
    /// given explicitly (the same string the browser would send).
    pub host_header: String,
    /// What to dial: a name (resolved at dial time, every address tried; a `localhost` name
    /// is dialled at 127.0.0.1 then ::1 without the resolver) or an address.
    pub dial_host: String,
    /// TCP port to dial.
    pub port: u16,
    /// True if and only if the host is a loopback literal or `localhost` (error pages call it
    /// "the dev server").
    pub loopback: bool,
}

impl Upstream {
    /// The origins a page may use to name this upstream directly, bypassing the proxy (the
    /// shim reports failed loads from them, protocol §6.5 `blocked`): its own origin and, for a
    /// loopback upstream, the same port on `localhost`, `127.0.0.1` and `[::1]` (a dev server
    /// answers on all of them, and a page often names a different one than the user typed).
    pub fn own_origins(&self) -> Vec<String> {
        let mut out = vec![self.origin.clone()];
        if self.loopback {
            let port = if self.port == 80 { String::new() } else { format!(":{}", self.port) };
            for host in ["localhost", "127.0.0.1", "[::1]"] {
                let o = format!("http://{host}{port}");
                if !out.contains(&o) {
                    out.push(o);
                }
            }
        }
        out
    }
}

/// Parses the URL a grant is asked for. Returns the upstream and the URL's path + query
/// (`/path?q`, fragment dropped).
///
/// Refusals: unparseable → `BadUrl`; `https:` → `HttpsRefused`; any other scheme →
/// `BadScheme`; a link-local or cloud-metadata address literal (in any spelling the URL
/// parser canonicalizes: decimal, octal, hex, short IPv4 forms, IPv6 embedding such an IPv4
/// address) or a cloud metadata host name → `BlockedAddress`. Names are not resolved here
/// (what they resolve to is checked when the proxy dials).
pub fn parse_upstream(raw: &str) -> Result<(Upstream, String), ProxyError> {
    let url = Url::parse(raw.trim()).map_err(|e| ProxyError::BadUrl(format!("{raw:?} is not a URL: {e}")))?;
    match url.scheme() {
        "http" => {}
        "https" => return Err(ProxyError::HttpsRefused(raw.to_string())),
        other => return Err(ProxyError::BadScheme(other.to_string())),
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(ProxyError::BadUrl("a URL with credentials cannot be framed".into()));
    }
    let host = url.host().ok_or_else(|| ProxyError::BadUrl(format!("{raw:?} has no host")))?;
    let port = url.port_or_known_default().unwrap_or(80);
    check_host(&url).map_err(ProxyError::BlockedAddress)?;
    let (dial_host, loopback) = match &host {
        Host::Domain(d) => {
            let d = d.trim_end_matches('.');
            (d.to_string(), is_localhost_name(d))
        }
        Host::Ipv4(a) => (a.to_string(), a.is_loopback()),
        Host::Ipv6(a) => (a.to_string(), a.is_loopback() || a.to_ipv4_mapped().is_some_and(|v| v.is_loopback())),
    };
    let host_str = url.host_str().unwrap_or_default();
    let host_header = match url.port() {
        Some(p) => format!("{host_str}:{p}"),
        None => host_str.to_string(),
    };
    let origin = format!("http://{host_header}");
    let mut path = url.path().to_string();
    if let Some(q) = url.query() {
        path.push('?');
        path.push_str(q);
    }
    Ok((Upstream { origin, host_header, dial_host, port, loopback }, path))
}

/// Returns true if and only if `name` is `localhost` or ends in `.localhost` (any case): names
/// browsers answer with the loopback addresses themselves, never asking DNS (WHATWG URL
/// "host is local"; RFC 6761 §6.3).
pub(crate) fn is_localhost_name(name: &str) -> bool {
    let n = name.trim_end_matches('.').to_ascii_lowercase();
    n == "localhost" || n.ends_with(".localhost")
}

/// Validates the embedder chain all-or-nothing: every entry must be a plain `http`, `https`
/// or `tauri` origin (no credentials, path, query or fragment); one bad entry (unparseable,
/// opaque `null`, another scheme), an empty list or more than [`MAX_EMBEDDERS`] entries gives
/// `None`, meaning no chain. Returns the entries serialized as origins, duplicates removed,
/// order kept (the first is the app's own origin).
pub fn validate_chain(entries: &[String]) -> Option<Vec<String>> {
    if entries.is_empty() || entries.len() > MAX_EMBEDDERS {
        return None;
    }
    let mut out: Vec<String> = Vec::new();
    for e in entries {
        let o = origin_of(e)?;
        if !out.contains(&o) {
            out.push(o);
        }
    }
    Some(out)
}

fn origin_of(entry: &str) -> Option<String> {
    let url = Url::parse(entry).ok()?;
    let scheme = url.scheme();
    if !matches!(scheme, "http" | "https" | "tauri") {
        return None;
    }
    if !url.username().is_empty() || url.password().is_some() || url.query().is_some() || url.fragment().is_some() {
        return None;
    }
    if !(url.path() == "/" || url.path().is_empty()) {
        return None;
    }
    let host = url.host_str()?;
    if host.is_empty() {
        return None;
    }
    Some(match url.port() {
        Some(p) => format!("{scheme}://{host}:{p}"),
        None => format!("{scheme}://{host}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocked_address_spellings_are_refused() {
        for url in [
            "http://169.254.169.254/latest/meta-data",
            "http://2852039166/",
            "http://0251.0376.0251.0376/",
            "http://0xa9fea9fe/",
            "http://0xA9.0xFE.0xA9.0xFE/",
            "http://169.254.43518/",
            "http://169.16689662/",
            "http://[::ffff:169.254.169.254]/",
            "http://[::ffff:a9fe:a9fe]/",
            "http://[fe80::1]/",
            "http://[FE80::1]:8080/",
            "http://[febf::1]/",
            "http://[fd00:ec2::254]/",
            "http://100.100.100.200/",
            "http://169.254.0.1:5173/",
            "http://169.254.169.254./",
        ] {
            match parse_upstream(url) {
                Err(ProxyError::BlockedAddress(_)) => {}
                other => panic!("{url}: expected blocked_address, got {other:?}"),
            }
        }
    }

    #[test]
    fn ordinary_addresses_are_allowed() {
        for (url, origin, host, loopback) in [
            ("http://127.0.0.1:8000/", "http://127.0.0.1:8000", "127.0.0.1:8000", true),
            ("http://10.0.0.5/x", "http://10.0.0.5", "10.0.0.5", false),
            ("http://192.168.1.2:3000", "http://192.168.1.2:3000", "192.168.1.2:3000", false),
            ("http://[::1]:5173/", "http://[::1]:5173", "[::1]:5173", true),
            ("http://localhost:5173/path?q=1", "http://localhost:5173", "localhost:5173", true),
            ("http://LocalHost:5173/", "http://localhost:5173", "localhost:5173", true),
            ("http://example.test/", "http://example.test", "example.test", false),
            ("http://169.255.0.1/", "http://169.255.0.1", "169.255.0.1", false),
            ("http://[fec0::1]/", "http://[fec0::1]", "[fec0::1]", false),
        ] {
            let (u, _) = parse_upstream(url).unwrap_or_else(|e| panic!("{url}: {e}"));
            assert_eq!((u.origin.as_str(), u.host_header.as_str(), u.loopback), (origin, host, loopback), "{url}");
        }
    }

    #[test]
    fn own_origins_name_a_loopback_upstream_by_every_loopback_host() {
        let own = |url: &str| parse_upstream(url).unwrap().0.own_origins();
        assert_eq!(
            own("http://localhost:5173/x"),
            ["http://localhost:5173", "http://127.0.0.1:5173", "http://[::1]:5173"]
        );
        assert_eq!(
            own("http://127.0.0.1:8000"),
            ["http://127.0.0.1:8000", "http://localhost:8000", "http://[::1]:8000"]
        );
        assert_eq!(own("http://127.0.0.1:80/"), ["http://127.0.0.1", "http://localhost", "http://[::1]"]);
        assert_eq!(own("http://example.test:3000/"), ["http://example.test:3000"]);
    }

    #[test]
    fn path_and_query_are_kept_and_ipv6_is_dialled_bare() {
        let (u, p) = parse_upstream("http://localhost:5173/a/b?token=x%20y&z#frag").unwrap();
        assert_eq!(p, "/a/b?token=x%20y&z");
        assert_eq!((u.dial_host.as_str(), u.port), ("localhost", 5173));
        let (u, p) = parse_upstream("http://[::1]:8000").unwrap();
        assert_eq!((u.dial_host.as_str(), u.port, p.as_str()), ("::1", 8000, "/"));
        let (u, _) = parse_upstream("http://example.test").unwrap();
        assert_eq!(u.port, 80);
    }

    #[test]
    fn schemes_are_refused_with_their_codes() {
        for (url, code) in [
            ("https://example.com/", "https_refused"),
            ("HTTPS://localhost:5173/", "https_refused"),
            ("ftp://example.com/", "bad_scheme"),
            ("file:///etc/passwd", "bad_scheme"),
            ("javascript:alert(1)", "bad_scheme"),
            ("data:text/html,hi", "bad_scheme"),
            ("not a url", "bad_url"),
            ("localhost:5173", "bad_scheme"),
            ("", "bad_url"),
            ("http://user:pw@localhost:1/", "bad_url"),
        ] {
            let e = parse_upstream(url).expect_err(url);
            assert_eq!(e.code(), code, "{url}: {e}");
        }
    }

    #[test]
    fn embedder_chain_is_all_or_nothing() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let ok = validate_chain(&s(&["http://127.0.0.1:4000", "tauri://localhost", "https://tauri.localhost"]));
        assert_eq!(ok, Some(s(&["http://127.0.0.1:4000", "tauri://localhost", "https://tauri.localhost"])));
        assert_eq!(
            validate_chain(&s(&["http://127.0.0.1:4000/", "http://127.0.0.1:4000"])),
            Some(s(&["http://127.0.0.1:4000"]))
        );
        for bad in [
            vec!["http://127.0.0.1:4000", "null"],
            vec!["null"],
            vec!["http://127.0.0.1:4000", "not a url"],
            vec!["file:///x"],
            vec!["http://127.0.0.1:4000/path"],
            vec!["http://a.test?x"],
            vec!["http://u@a.test"],
            vec!["vscode-webview://abc", "http://127.0.0.1:1"],
            vec!["http://a.test 'unsafe-inline'"],
            vec![],
        ] {
            assert_eq!(validate_chain(&s(&bad)), None, "{bad:?}");
        }
        assert_eq!(validate_chain(&vec!["http://a.test".to_string(); MAX_EMBEDDERS + 1]), None);
    }
}
