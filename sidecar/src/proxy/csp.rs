//! The page's Content Security Policy, kept and made to work through the proxy (protocol §6.4):
//! its source lists are given the proxy's origins wherever they name the upstream's own, its
//! `frame-ancestors` is left to the proxy's one framing policy, and only what the shim needs
//! is added (a nonce for its inline script, the cookie path for its `document.cookie`). A page
//! that breaks its own policy fails as it would in a browser.

/// What a policy is rewritten for (one response).
#[derive(Debug, Clone)]
pub struct CspContext {
    /// The upstream's own origins (`Upstream::own_origins`, `http://…`).
    pub upstream_origins: Vec<String>,
    /// The grant's origins (`http://127.0.0.1:P`, `http://localhost:P`).
    pub proxy_origins: [String; 2],
    /// The nonce the shim's `<script>` carries in this response (base64 characters).
    pub nonce: String,
    /// The path the shim's `document.cookie` asks (`SCRIPT_COOKIE_PATH`).
    pub cookie_path: &'static str,
}

/// Directives whose value is a source list that may name the upstream.
const SOURCE_LISTS: [&str; 16] = [
    "default-src",
    "script-src",
    "script-src-elem",
    "script-src-attr",
    "style-src",
    "style-src-elem",
    "style-src-attr",
    "img-src",
    "font-src",
    "connect-src",
    "media-src",
    "object-src",
    "frame-src",
    "child-src",
    "worker-src",
    "manifest-src",
];

/// Rewrites one `Content-Security-Policy` (or `…-Report-Only`, or a `<meta>` policy) value,
/// which may hold several policies separated by `,`. Per policy: `frame-ancestors` is dropped
/// (the proxy's own framing policy is the one that holds in the frame); every source that
/// names one of the upstream's own origins (`http://localhost:5173`, `localhost:5173`,
/// `ws://localhost:5173`, with or without a path) is followed by the same source on each
/// proxy origin; the directive that governs inline scripts (`script-src-elem`, else
/// `script-src`, else `default-src`) gets `'nonce-N'` unless it allows `'unsafe-inline'`
/// without any nonce or hash (a nonce would switch `'unsafe-inline'` off); the directive that
/// governs `fetch`/XHR (`connect-src`, else `default-src`) gets the proxy origin's cookie path.
/// A policy left empty is dropped; returns `None` when none is left.
pub fn rewrite_csp(value: &str, cx: &CspContext) -> Option<String> {
    let policies: Vec<String> = value.split(',').filter_map(|p| rewrite_policy(p, cx)).collect();
    (!policies.is_empty()).then(|| policies.join(", "))
}

fn rewrite_policy(policy: &str, cx: &CspContext) -> Option<String> {
    let mut directives: Vec<(String, Vec<String>)> = Vec::new();
    for d in policy.split(';') {
        let mut words = d.split_ascii_whitespace();
        let Some(name) = words.next() else { continue };
        let name = name.to_ascii_lowercase();
        // A repeated directive is ignored by browsers (CSP3 §2.2.1): only the first counts.
        if name == "frame-ancestors" || directives.iter().any(|(n, _)| *n == name) {
            continue;
        }
        let mut values: Vec<String> = Vec::new();
        for w in words {
            values.push(w.to_string());
            if SOURCE_LISTS.contains(&name.as_str()) {
                values.extend(on_proxy(w, cx));
            }
        }
        directives.push((name, values));
    }
    let present: Vec<String> = directives.iter().map(|(d, _)| d.clone()).collect();
    let has = |n: &str| present.iter().any(|d| d == n);
    let scripts = ["script-src-elem", "script-src", "default-src"].into_iter().find(|n| has(n));
    if let Some(n) = scripts {
        let list = &mut directives.iter_mut().find(|(d, _)| d == n).expect("found above").1;
        let lower: Vec<String> = list.iter().map(|v| v.to_ascii_lowercase()).collect();
        let unsafe_inline = lower.iter().any(|v| v == "'unsafe-inline'");
        let nonce_or_hash = lower.iter().any(|v| v.starts_with("'nonce-") || v.starts_with("'sha"));
        if !unsafe_inline || nonce_or_hash {
            if lower.len() == 1 && lower[0] == "'none'" {
                list.clear();
            }
            list.push(format!("'nonce-{}'", cx.nonce));
        }
    }
    if let Some(n) = ["connect-src", "default-src"].into_iter().find(|n| has(n)) {
        let list = &mut directives.iter_mut().find(|(d, _)| d == n).expect("found above").1;
        if list.len() == 1 && list[0].eq_ignore_ascii_case("'none'") {
            list.clear();
        }
        list.push(format!("{}{}", cx.proxy_origins[0], cx.cookie_path));
    }
    if directives.is_empty() {
        return None;
    }
    let out: Vec<String> =
        directives.into_iter().map(|(n, v)| if v.is_empty() { n } else { format!("{n} {}", v.join(" ")) }).collect();
    Some(out.join("; "))
}

/// The same source on each proxy origin, when `source` names one of the upstream's own
/// origins (its `http`/`ws` scheme kept, or none); else nothing.
fn on_proxy(source: &str, cx: &CspContext) -> Vec<String> {
    let lower = source.to_ascii_lowercase();
    let (scheme, rest) = match lower.split_once("://") {
        Some((s @ ("http" | "ws"), r)) => (Some(s), r),
        Some(_) => return Vec::new(),
        None => (None, lower.as_str()),
    };
    for own in &cx.upstream_origins {
        let host = own.trim_start_matches("http://");
        let Some(tail) = rest.strip_prefix(host) else { continue };
        if !(tail.is_empty() || tail.starts_with('/')) {
            continue;
        }
        // The path as the page wrote it (case kept).
        let path = &source[source.len() - tail.len()..];
        return cx
            .proxy_origins
            .iter()
            .map(|p| {
                let p = p.trim_start_matches("http://");
                match scheme {
                    Some(s) => format!("{s}://{p}{path}"),
                    None => format!("{p}{path}"),
                }
            })
            .collect();
    }
    Vec::new()
}

/// A fresh nonce for one response's shim: 128 random bits, base64 (RFC 4648) as CSP wants
/// (`'nonce-…'`); `None` only if the system's random source fails.
pub fn new_nonce() -> Option<String> {
    const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut b = [0u8; 18];
    getrandom::fill(&mut b).ok()?;
    let mut s = String::with_capacity(24);
    for c in b.chunks(3) {
        let n = (u32::from(c[0]) << 16) | (u32::from(c[1]) << 8) | u32::from(c[2]);
        for i in (0..4).rev() {
            s.push(B64[((n >> (6 * i)) & 63) as usize] as char);
        }
    }
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cx(up: &[String]) -> CspContext {
        CspContext {
            upstream_origins: up.to_vec(),
            proxy_origins: ["http://127.0.0.1:41000".into(), "http://localhost:41000".into()],
            nonce: "N0nce".into(),
            cookie_path: "/__porthole/cookie",
        }
    }

    #[test]
    fn policies_are_kept_and_made_to_work_through_the_proxy() {
        let up = vec!["http://localhost:5173".to_string(), "http://127.0.0.1:5173".to_string()];
        let c = cx(&up);
        let check = |input: &str, want: Option<&str>| assert_eq!(rewrite_csp(input, &c).as_deref(), want, "{input}");
        check(
            "default-src 'self'; frame-ancestors 'none'",
            Some("default-src 'self' 'nonce-N0nce' http://127.0.0.1:41000/__porthole/cookie"),
        );
        check(
            "script-src 'self' http://localhost:5173/js/; connect-src ws://LOCALHOST:5173 'self'",
            Some(
                "script-src 'self' http://localhost:5173/js/ http://127.0.0.1:41000/js/ http://localhost:41000/js/ 'nonce-N0nce'; \
                 connect-src ws://LOCALHOST:5173 ws://127.0.0.1:41000 ws://localhost:41000 'self' http://127.0.0.1:41000/__porthole/cookie",
            ),
        );
        // 'unsafe-inline' alone: a nonce would switch it off, and the shim runs anyway.
        check("script-src 'self' 'unsafe-inline'", Some("script-src 'self' 'unsafe-inline'"));
        check("script-src 'unsafe-inline' 'nonce-abc'", Some("script-src 'unsafe-inline' 'nonce-abc' 'nonce-N0nce'"));
        check("script-src 'none'", Some("script-src 'nonce-N0nce'"));
        check(
            "img-src 127.0.0.1:5173 localhost:51730",
            Some("img-src 127.0.0.1:5173 127.0.0.1:41000 localhost:41000 localhost:51730"),
        );
        check("frame-ancestors 'none'", None);
        check("img-src 'none', frame-ancestors 'self'", Some("img-src 'none'"));
        check(
            "upgrade-insecure-requests; script-src 'self'; script-src *",
            Some("upgrade-insecure-requests; script-src 'self' 'nonce-N0nce'"),
        );
    }

    #[test]
    fn nonces_are_fresh_base64() {
        let (a, b) = (new_nonce().unwrap(), new_nonce().unwrap());
        assert_ne!(a, b);
        assert_eq!(a.len(), 24);
        assert!(a.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'+' || c == b'/'));
    }
}
