//! A grant's cookie jar (protocol §6.4): the upstream's `Set-Cookie` never reaches the
//! browser; the proxy keeps those cookies itself, one jar per grant (RFC 6265 storage and
//! matching, the `cookie_store` crate), and adds the matching ones to the requests it sends
//! upstream, as a browser would. Sessions then work in an iframe whose cookies the browser
//! would treat as third-party.

use std::sync::Mutex;

use cookie_store::CookieStore;
use hyper::header::{HeaderMap, HeaderValue, COOKIE, SET_COOKIE};
use url::Url;

/// Returns true if and only if the jar takes part in a request with these headers: always,
/// except for a cross-site request (`Sec-Fetch-Site: cross-site`) that is not a navigation
/// (`Sec-Fetch-Mode: navigate`) with a safe method, the rule browsers apply to `SameSite=Lax`
/// cookies (RFC 6265bis §5.6.7.1), so another site cannot act with the session or plant one.
/// A browser that sends no fetch metadata is not judged.
pub fn jar_applies(method: &hyper::Method, h: &HeaderMap) -> bool {
    let value = |n: &str| h.get(n).and_then(|v| v.to_str().ok()).map(|v| v.trim().to_ascii_lowercase());
    if value("sec-fetch-site").as_deref() != Some("cross-site") {
        return true;
    }
    let safe = matches!(*method, hyper::Method::GET | hyper::Method::HEAD | hyper::Method::OPTIONS);
    safe && value("sec-fetch-mode").as_deref() == Some("navigate")
}

/// One grant's cookies. Lives as long as the grant.
#[derive(Default)]
pub struct Jar(Mutex<CookieStore>);

impl Jar {
    fn lock(&self) -> std::sync::MutexGuard<'_, CookieStore> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Sets `Cookie` in `h` to the jar's unexpired cookies for `url` (longest path first, as
    /// RFC 6265 §5.4 orders them); leaves `h` alone when none match.
    pub fn add_to(&self, h: &mut HeaderMap, url: &Url) {
        let store = self.lock();
        let mut cookies = store.matches(url);
        cookies.sort_by_key(|c| std::cmp::Reverse(String::from(&c.path).len()));
        let line = cookies.iter().map(|c| format!("{}={}", c.name(), c.value())).collect::<Vec<_>>().join("; ");
        if let Ok(v) = HeaderValue::from_str(&line) {
            if !line.is_empty() {
                h.insert(COOKIE, v);
            }
        }
    }

    /// Stores every `Set-Cookie` of a response to a request for `url` (an expired one removes
    /// its cookie; one that does not parse or does not domain-match is ignored).
    pub fn store_from(&self, h: &HeaderMap, url: &Url) {
        let mut store = self.lock();
        for v in h.get_all(SET_COOKIE).iter().filter_map(|v| v.to_str().ok()) {
            let _ = store.parse(v, url);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::Method;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    fn set(jar: &Jar, at: &str, cookies: &[&str]) {
        let mut h = HeaderMap::new();
        for c in cookies {
            h.append(SET_COOKIE, HeaderValue::from_str(c).unwrap());
        }
        jar.store_from(&h, &url(at));
    }

    fn sent(jar: &Jar, to: &str) -> Option<String> {
        let mut h = HeaderMap::new();
        jar.add_to(&mut h, &url(to));
        h.get(COOKIE).map(|v| v.to_str().unwrap().to_string())
    }

    #[test]
    fn cookies_are_stored_matched_and_expired() {
        let jar = Jar::default();
        assert_eq!(sent(&jar, "http://localhost:5173/"), None);
        set(&jar, "http://localhost:5173/login", &["sid=abc; Path=/; HttpOnly", "pref=1; Path=/app", "bad"]);
        assert_eq!(sent(&jar, "http://localhost:5173/").as_deref(), Some("sid=abc"));
        assert_eq!(sent(&jar, "http://localhost:5173/app/x").as_deref(), Some("pref=1; sid=abc"));
        // Secure cookies count on loopback, a secure context as browsers treat it.
        set(&jar, "http://localhost:5173/", &["tok=t; Secure; Path=/s"]);
        assert_eq!(sent(&jar, "http://localhost:5173/s").as_deref(), Some("tok=t; sid=abc"));
        set(&jar, "http://localhost:5173/", &["sid=; Max-Age=0; Path=/"]);
        assert_eq!(sent(&jar, "http://localhost:5173/").as_deref(), None, "logged out");
        // Another host's Domain is refused.
        set(&jar, "http://localhost:5173/", &["x=1; Domain=example.test"]);
        assert_eq!(sent(&jar, "http://localhost:5173/").as_deref(), None);
    }

    #[test]
    fn the_jar_follows_same_site_lax() {
        let h = |pairs: &[(&str, &str)]| {
            let mut m = HeaderMap::new();
            for (k, v) in pairs {
                m.insert(
                    hyper::header::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                    HeaderValue::from_str(v).unwrap(),
                );
            }
            m
        };
        assert!(jar_applies(&Method::POST, &h(&[])));
        assert!(jar_applies(&Method::POST, &h(&[("Sec-Fetch-Site", "same-origin"), ("Sec-Fetch-Mode", "cors")])));
        assert!(jar_applies(&Method::GET, &h(&[("Sec-Fetch-Site", "same-site"), ("Sec-Fetch-Mode", "navigate")])));
        assert!(jar_applies(&Method::GET, &h(&[("Sec-Fetch-Site", "none"), ("Sec-Fetch-Mode", "navigate")])));
        assert!(jar_applies(&Method::GET, &h(&[("Sec-Fetch-Site", "cross-site"), ("Sec-Fetch-Mode", "navigate")])));
        assert!(!jar_applies(&Method::POST, &h(&[("Sec-Fetch-Site", "cross-site"), ("Sec-Fetch-Mode", "navigate")])));
        assert!(!jar_applies(&Method::GET, &h(&[("Sec-Fetch-Site", "cross-site"), ("Sec-Fetch-Mode", "no-cors")])));
        assert!(!jar_applies(&Method::GET, &h(&[("Sec-Fetch-Site", "Cross-Site"), ("Sec-Fetch-Mode", "websocket")])));
    }
}
