//! A grant's cookie jar (protocol §6.4): the upstream's `Set-Cookie` never reaches the
//! browser; the proxy keeps those cookies itself, one jar per grant (RFC 6265 storage and
//! matching, the `cookie_store` crate), and adds the matching ones to the requests it sends
//! upstream, as a browser would. Sessions then work in an iframe whose cookies the browser
//! would treat as third-party. The page's own script sees the same jar through the shim's
//! `document.cookie` ([`Jar::script_view`], [`Jar::set_from_script`]: HttpOnly cookies kept
//! from it), and a jar may be kept on disk across restarts ([`Jar::load`], [`Jar::save`]).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

/// The path, on every grant's origin, by which the shim's `document.cookie` reads and writes
/// the grant's jar (protocol §6.4 "Cookie jar"); never forwarded upstream.
pub const SCRIPT_COOKIE_PATH: &str = "/__porthole/cookie";

use cookie_store::{CookieDomain, CookieExpiration, CookieStore};
use hyper::header::{HeaderMap, HeaderValue, COOKIE, SET_COOKIE};
use serde::{Deserialize, Serialize};
use url::Url;

/// Longest cookie string a page's script may write at once, in bytes (RFC 6265 §6.1 asks a
/// browser for at least 4096 bytes per cookie, name, value and attributes together).
pub const MAX_SCRIPT_COOKIE_BYTES: usize = 8 * 1024;
/// Largest jar file read or written, in bytes (a larger one is left alone, and reported).
pub const MAX_JAR_FILE_BYTES: u64 = 1 << 20;
/// The jar file's format number (`format`); another number is not read.
pub const JAR_FORMAT: u32 = 1;

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

/// One grant's cookies. Lives as long as the grant, and on disk beyond it when the grant was
/// given a file ([`Jar::load`]).
#[derive(Default)]
pub struct Jar {
    store: Mutex<CookieStore>,
    /// Where the jar is kept across restarts (`None`: memory only, `[session] restore = false`).
    file: Option<PathBuf>,
    /// Set by every change not yet written to `file`.
    dirty: AtomicBool,
}

/// One cookie as kept on disk (the jar file's `cookies`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SavedCookie {
    name: String,
    value: String,
    /// The host it was set by (`host_only`) or the `Domain` it names.
    domain: String,
    host_only: bool,
    path: String,
    secure: bool,
    http_only: bool,
    /// `Strict`, `Lax` or `None` when the cookie named one.
    same_site: Option<String>,
    /// When it expires, in seconds since the Unix epoch (`None`: a session cookie, kept as
    /// a browser restoring its session keeps them).
    expires: Option<i64>,
}

/// The jar file (`format` 1).
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct JarFile {
    format: u32,
    /// The upstream origin whose cookies these are (a file under another name is not read).
    upstream: String,
    cookies: Vec<SavedCookie>,
}

/// The file a jar for `upstream_origin` is kept in under `dir`: `jar-<origin>.json`, the
/// origin with every byte but ASCII letters, digits, `.` and `-` written `_xx` (hex), so
/// distinct origins never share a file.
pub fn jar_file(dir: &Path, upstream_origin: &str) -> PathBuf {
    let mut name = String::from("jar-");
    for b in upstream_origin.bytes() {
        if b.is_ascii_alphanumeric() || b == b'.' || b == b'-' {
            name.push(b as char);
        } else {
            name.push_str(&format!("_{b:02x}"));
        }
    }
    dir.join(name + ".json")
}

fn now_secs() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0)
}

impl Jar {
    fn lock(&self) -> std::sync::MutexGuard<'_, CookieStore> {
        self.store.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The jar kept in `file` for `upstream_origin`: the file's unexpired cookies when it
    /// exists and is a jar file of that origin, else an empty jar (a file that cannot be used
    /// is logged and left where it is; the next [`Jar::save`] replaces it). Blocking (reads at
    /// most [`MAX_JAR_FILE_BYTES`]).
    pub fn load(file: PathBuf, upstream_origin: &str) -> Jar {
        let jar = Jar { file: Some(file.clone()), ..Jar::default() };
        let read = || -> Result<Option<JarFile>, String> {
            let meta = match std::fs::metadata(&file) {
                Ok(m) => m,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
                Err(e) => return Err(format!("stat: {e}")),
            };
            if meta.len() > MAX_JAR_FILE_BYTES {
                return Err(format!("larger than {MAX_JAR_FILE_BYTES} bytes"));
            }
            let bytes = std::fs::read(&file).map_err(|e| format!("read: {e}"))?;
            let f: JarFile = serde_json::from_slice(&bytes).map_err(|e| format!("not a jar file: {e}"))?;
            if f.format != JAR_FORMAT || f.upstream != upstream_origin {
                return Err(format!(
                    "format {} for {:?}, not {JAR_FORMAT} for {upstream_origin:?}",
                    f.format, f.upstream
                ));
            }
            Ok(Some(f))
        };
        match read() {
            Ok(None) => {}
            Ok(Some(f)) => {
                let mut store = jar.lock();
                let now = now_secs();
                for c in f.cookies {
                    let Some(line) = c.set_cookie_line(now) else { continue };
                    let Ok(url) = Url::parse(&format!("{upstream_origin}{}", c.path)) else { continue };
                    let _ = store.parse(&line, &url);
                }
            }
            Err(e) => tracing::warn!(file = %file.display(), "cookie jar not restored: {e}"),
        }
        jar
    }

    /// Writes the jar to its file (atomically, mode 0600) if it changed since the last write;
    /// does nothing for a memory-only jar. Expired cookies are left out. Blocking; a failure
    /// is logged (the jar stays dirty, so the next call tries again).
    pub fn save(&self, upstream_origin: &str) {
        let Some(file) = &self.file else { return };
        if !self.dirty.swap(false, Ordering::SeqCst) {
            return;
        }
        let cookies: Vec<SavedCookie> = self.lock().iter_unexpired().map(SavedCookie::from_stored).collect();
        let doc = JarFile { format: JAR_FORMAT, upstream: upstream_origin.to_string(), cookies };
        let bytes = match serde_json::to_vec(&doc) {
            Ok(b) if (b.len() as u64) <= MAX_JAR_FILE_BYTES => b,
            Ok(b) => {
                tracing::warn!(file = %file.display(), bytes = b.len(), "cookie jar too large to keep; not written");
                return;
            }
            Err(e) => {
                tracing::warn!("cookie jar not serialized: {e}");
                return;
            }
        };
        if let Err(e) = crate::state_file::write_atomic(file, &bytes) {
            self.dirty.store(true, Ordering::SeqCst);
            tracing::warn!(file = %file.display(), "failed to write the cookie jar: {e}");
        }
    }

    /// Returns true if and only if the jar changed since it was last written to its file.
    pub fn is_dirty(&self) -> bool {
        self.file.is_some() && self.dirty.load(Ordering::SeqCst)
    }

    /// What `document.cookie` reads in a document at `url`: the jar's unexpired cookies
    /// matching it that are not HttpOnly (RFC 6265 §5.4 with a "non-HTTP" API), `name=value`
    /// joined with `; `, longest path first; empty when none.
    pub fn script_view(&self, url: &Url) -> String {
        let store = self.lock();
        let mut cookies: Vec<_> = store.matches(url).into_iter().filter(|c| !c.http_only().unwrap_or(false)).collect();
        cookies.sort_by_key(|c| std::cmp::Reverse(String::from(&c.path).len()));
        cookies.iter().map(|c| format!("{}={}", c.name(), c.value())).collect::<Vec<_>>().join("; ")
    }

    /// Stores a cookie string written by a page's script (`document.cookie = line`) in a
    /// document at `url`, as a browser's "non-HTTP" API does (RFC 6265 §5.3): a cookie with
    /// `HttpOnly` is ignored, and so is one that would replace an HttpOnly cookie. Returns
    /// true if and only if the jar took it (stored, replaced or expired a cookie).
    pub fn set_from_script(&self, line: &str, url: &Url) -> bool {
        // cookie_store applies the non-HTTP rules to a request URL whose scheme is not http;
        // the host (with its port) and the path are what domain and default-path come from.
        let authority = &url[url::Position::BeforeHost..url::Position::AfterPort];
        let Ok(script_url) = Url::parse(&format!("porthole-script://{authority}{}", url.path())) else { return false };
        let ok = self.lock().parse(line, &script_url).is_ok();
        if ok {
            self.dirty.store(true, Ordering::SeqCst);
        }
        ok
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
            if store.parse(v, url).is_ok() {
                self.dirty.store(true, Ordering::SeqCst);
            }
        }
    }
}

impl SavedCookie {
    fn from_stored(c: &cookie_store::Cookie<'static>) -> SavedCookie {
        let (domain, host_only) = match &c.domain {
            CookieDomain::HostOnly(d) => (d.clone(), true),
            CookieDomain::Suffix(d) => (d.clone(), false),
            _ => (String::new(), true),
        };
        SavedCookie {
            name: c.name().to_string(),
            value: c.value().to_string(),
            domain,
            host_only,
            path: String::from(&c.path),
            secure: c.secure().unwrap_or(false),
            http_only: c.http_only().unwrap_or(false),
            same_site: c.same_site().map(|s| s.to_string()),
            expires: match &c.expires {
                CookieExpiration::AtUtc(t) => Some(t.unix_timestamp()),
                CookieExpiration::SessionEnd => None,
            },
        }
    }

    /// The `Set-Cookie` line that stores this cookie again at `now` (seconds since the epoch;
    /// its expiry as a `Max-Age` from then); `None` when it has expired since.
    fn set_cookie_line(&self, now: i64) -> Option<String> {
        let mut line = format!("{}={}; Path={}", self.name, self.value, self.path);
        if !self.host_only {
            line += &format!("; Domain={}", self.domain);
        }
        if self.secure {
            line += "; Secure";
        }
        if self.http_only {
            line += "; HttpOnly";
        }
        if let Some(s) = &self.same_site {
            line += &format!("; SameSite={s}");
        }
        if let Some(at) = self.expires {
            if at <= now {
                return None;
            }
            line += &format!("; Max-Age={}", at - now);
        }
        Some(line)
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
    fn scripts_see_and_set_all_but_httponly_cookies() {
        let jar = Jar::default();
        set(&jar, "http://127.0.0.1:5173/", &["sid=abc; Path=/; HttpOnly", "csrftoken=t; Path=/"]);
        assert_eq!(jar.script_view(&url("http://127.0.0.1:5173/a")), "csrftoken=t");
        assert!(jar.set_from_script("theme=dark", &url("http://127.0.0.1:5173/app/page")));
        assert_eq!(
            jar.script_view(&url("http://127.0.0.1:5173/app/x")),
            "theme=dark; csrftoken=t",
            "default path /app"
        );
        assert_eq!(jar.script_view(&url("http://127.0.0.1:5173/")), "csrftoken=t");
        assert!(!jar.set_from_script("sid=evil; Path=/", &url("http://127.0.0.1:5173/")), "an HttpOnly cookie stays");
        assert!(
            !jar.set_from_script("new=1; HttpOnly", &url("http://127.0.0.1:5173/")),
            "a script sets no HttpOnly cookie"
        );
        assert_eq!(sent(&jar, "http://127.0.0.1:5173/app/").as_deref().map(|s| s.contains("sid=abc")), Some(true));
        assert!(jar.set_from_script("csrftoken=; Max-Age=0; Path=/", &url("http://127.0.0.1:5173/")));
        assert_eq!(jar.script_view(&url("http://127.0.0.1:5173/")), "", "a script may expire its own");
    }

    #[test]
    fn a_kept_jar_is_written_0600_and_read_back_with_its_session_cookies() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("porthole-jar-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let origin = "http://localhost:5173";
        let file = jar_file(&dir, origin);
        assert_eq!(file.file_name().unwrap(), "jar-http_3a_2f_2flocalhost_3a5173.json");
        let jar = Jar::load(file.clone(), origin);
        assert!(!jar.is_dirty());
        set(
            &jar,
            "http://localhost:5173/",
            &["sid=abc; Path=/; HttpOnly", "keep=1; Max-Age=600; Path=/a", "gone=1; Max-Age=0"],
        );
        assert!(jar.is_dirty());
        jar.save(origin);
        assert!(!jar.is_dirty());
        assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o600);
        let back = Jar::load(file.clone(), origin);
        assert_eq!(sent(&back, "http://localhost:5173/a/b").as_deref(), Some("keep=1; sid=abc"));
        assert_eq!(back.script_view(&url("http://localhost:5173/")), "", "still HttpOnly");
        // Another origin's file is not read as this one's.
        assert_eq!(sent(&Jar::load(file.clone(), "http://localhost:5174"), "http://localhost:5173/").as_deref(), None);
        std::fs::write(&file, b"{not json").unwrap();
        assert_eq!(sent(&Jar::load(file, origin), "http://localhost:5173/"), None);
        let _ = std::fs::remove_dir_all(&dir);
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
