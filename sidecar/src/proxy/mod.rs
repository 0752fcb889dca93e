//! The iframe rewriting proxy: one loopback listener per grant (upstream origin), header
//! rules, HTML shim injection, WebSocket pass-through, error pages (docs/protocol.md §6).
//!
//! Architecture Invariant: `proxy` knows nothing of panes, PTYs or the API's auth; it is
//! handed a URL and an embedder chain and hands back a grant.

mod body;
mod charset;
mod cookies;
mod csp;
mod decode;
mod html;
mod quickack;
mod rules;
mod server;
mod target;
mod upstream;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::net::TcpListener;
use tokio::sync::watch;

pub use cookies::jar_file;
pub use cookies::SCRIPT_COOKIE_PATH;
pub use target::{parse_upstream, validate_chain, Upstream};

/// A byte stream to an upstream: a TCP connection, or a stream another transport opened.
pub trait UpstreamStream: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin + 'static {}
impl<T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin + 'static> UpstreamStream for T {}

/// What a [`Dialer`] returns: the stream, or one readable line saying why there is none.
pub type DialFuture =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<Box<dyn UpstreamStream>, String>> + Send>>;

/// Opens a connection to `(host, port)` by a route other than this machine's own network
/// (the host is the one the user named, resolved wherever the route ends).
pub type Dialer = Arc<dyn Fn(String, u16) -> DialFuture + Send + Sync>;

/// A grant's upstream route when it is not this machine: a name (shown as the grant's
/// `remote`, and part of the grant's identity: the same origin by two routes is two grants)
/// and the dialer every upstream connection of the grant is opened with. The proxy knows
/// nothing else of it (protocol §6, §11).
#[derive(Clone)]
pub struct Route {
    /// The route's name (a remote link id, `r1`).
    pub name: String,
    /// Opens each upstream connection.
    pub dial: Dialer,
}

/// Quiet time after a change to a kept jar before it is written, in milliseconds.
pub const JAR_SAVE_DEBOUNCE_MS: u64 = 250;
/// The directory, under the state directory, where grants' cookie jars are kept.
pub const JAR_DIR_NAME: &str = "cookies";

/// A grant dies after this long with no request and no open connection (sliding).
pub const GRANT_IDLE_TTL_MS: u64 = 5 * 60 * 1000;
/// At most this many grants live at once.
pub const MAX_GRANTS: usize = 32;
/// An upstream that sends no bytes for this long is answered with "didn't respond".
pub const UPSTREAM_IDLE_MS: u64 = 30_000;

/// Test-only: overrides [`GRANT_IDLE_TTL_MS`] (milliseconds). Not for production use.
pub const ENV_TEST_GRANT_TTL_MS: &str = "PORTHOLE_PROXY_GRANT_TTL_MS";
/// Test-only: overrides [`UPSTREAM_IDLE_MS`] (milliseconds). Not for production use.
pub const ENV_TEST_IDLE_MS: &str = "PORTHOLE_PROXY_IDLE_MS";

/// The proxy's timing and size limits.
#[derive(Debug, Clone)]
pub struct ProxyConfig {
    /// Sliding idle lifetime of a grant.
    pub grant_ttl: Duration,
    /// Upstream socket idle bound (connect, response head, each body read).
    pub upstream_idle: Duration,
    /// Maximum number of live grants.
    pub max_grants: usize,
    /// The configuration in force, for the prefix key the shim guards in framed pages
    /// (`None`: the built-in Ctrl-b).
    pub settings: Option<tokio::sync::watch::Receiver<crate::config::Snapshot>>,
    /// Where grants' cookie jars are kept across restarts, one file per upstream origin
    /// ([`jar_file`]); `None`: each jar lives and dies with its grant.
    pub jar_dir: Option<std::path::PathBuf>,
}

impl Default for ProxyConfig {
    fn default() -> Self {
        ProxyConfig {
            grant_ttl: Duration::from_millis(GRANT_IDLE_TTL_MS),
            upstream_idle: Duration::from_millis(UPSTREAM_IDLE_MS),
            max_grants: MAX_GRANTS,
            settings: None,
            jar_dir: None,
        }
    }
}

impl ProxyConfig {
    /// The letter of the app's prefix key (Ctrl plus it) as the configuration has it now.
    pub fn prefix_letter(&self) -> char {
        self.settings.as_ref().map_or('b', |s| s.borrow().config.keys.prefix.letter())
    }

    /// The defaults, with the test-only environment overrides applied when set to a positive
    /// number of milliseconds.
    pub fn from_env() -> Self {
        let mut c = ProxyConfig::default();
        let ms = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<u64>().ok()).filter(|v| *v > 0);
        if let Some(v) = ms(ENV_TEST_GRANT_TTL_MS) {
            c.grant_ttl = Duration::from_millis(v);
        }
        if let Some(v) = ms(ENV_TEST_IDLE_MS) {
            c.upstream_idle = Duration::from_millis(v);
        }
        c
    }
}

/// Why a grant was refused.
#[derive(Debug)]
pub enum ProxyError {
    /// Occurs when the URL does not parse or has no host or carries credentials.
    BadUrl(String),
    /// Occurs when the scheme is neither http nor https.
    BadScheme(String),
    /// Occurs when the URL is `https:` (the proxy cannot instrument TLS).
    HttpsRefused(String),
    /// Occurs when the host is a link-local or cloud-metadata address literal, or a cloud
    /// metadata host name.
    BlockedAddress(crate::address::BlockedAddress),
    /// Occurs when [`MAX_GRANTS`] grants are already live.
    TooManyGrants(usize),
    /// Occurs when binding the grant's loopback listener fails.
    Bind(std::io::Error),
}

impl ProxyError {
    /// The stable error code (docs/protocol.md §6).
    pub fn code(&self) -> &'static str {
        match self {
            ProxyError::BadUrl(_) => "bad_url",
            ProxyError::BadScheme(_) => "bad_scheme",
            ProxyError::HttpsRefused(_) => "https_refused",
            ProxyError::BlockedAddress(_) => "blocked_address",
            ProxyError::TooManyGrants(_) => "too_many_grants",
            ProxyError::Bind(_) => "internal",
        }
    }
}

impl std::fmt::Display for ProxyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProxyError::BadUrl(m) => write!(f, "{m}"),
            ProxyError::BadScheme(s) => write!(f, "only http:// pages can be framed, not {s}:"),
            ProxyError::HttpsRefused(u) => {
                write!(f, "https pages cannot be framed through the proxy; open {u} as a screencast instead")
            }
            ProxyError::BlockedAddress(a) => write!(f, "{a}"),
            ProxyError::TooManyGrants(n) => {
                write!(f, "{n} proxied origins are already open; close a browser pane first")
            }
            ProxyError::Bind(e) => write!(f, "failed to bind a proxy listener on 127.0.0.1: {e}"),
        }
    }
}

impl std::error::Error for ProxyError {}

/// One live grant as reported to the API.
#[derive(Debug, Clone, serde::Serialize)]
pub struct GrantInfo {
    /// The grant id (`g1`, `g2`, …; never reused within a sidecar's life).
    pub grant: String,
    /// The proxy's origin, `http://127.0.0.1:P`.
    pub origin: String,
    /// The upstream origin the grant fronts.
    pub upstream: String,
    /// The route the upstream is reached by when it is not this machine (a remote link id).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remote: Option<String>,
    /// The URL to frame (only set on creation).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

/// One grant's shared state; the listener and every connection task hold an `Arc` of it.
pub(crate) struct Grant {
    pub(crate) id: String,
    pub(crate) port: u16,
    pub(crate) upstream: Upstream,
    /// Where the upstream is dialled when not on this machine.
    pub(crate) route: Option<Route>,
    pub(crate) origins: rules::ProxyOrigins,
    /// The validated embedder chain (`None`: no chain; framing headers left alone, no shim).
    pub(crate) chain: Mutex<Option<Vec<String>>>,
    pub(crate) last_used: Mutex<Instant>,
    /// In-flight requests (until their body ends) and open upgraded tunnels.
    pub(crate) active: AtomicUsize,
    pub(crate) closed: watch::Sender<bool>,
    pub(crate) config: ProxyConfig,
    /// Kept-alive connections to the upstream.
    pub(crate) pool: upstream::Pool,
    /// The upstream's cookies, kept from the browser.
    pub(crate) jar: cookies::Jar,
    /// Wakes the task that writes a kept jar.
    jar_notify: tokio::sync::Notify,
}

impl Grant {
    /// Closes the listener, its connections and the upstream pool, and writes a kept jar
    /// that changed (blocking, one small file). Idempotent.
    fn close(&self) {
        self.closed.send_replace(true);
        self.pool.close();
        self.jar.save(&self.upstream.origin);
    }

    /// Says the jar may have changed: a kept jar that did is written soon after.
    pub(crate) fn jar_changed(&self) {
        if self.jar.is_dirty() {
            self.jar_notify.notify_one();
        }
    }

    /// Writes a kept jar [`JAR_SAVE_DEBOUNCE_MS`] after each change, until the grant closes
    /// (its last change is written by [`Grant::close`]).
    async fn save_jar_changes(self: Arc<Self>) {
        let mut closed = self.closed.subscribe();
        loop {
            tokio::select! {
                _ = self.jar_notify.notified() => {}
                _ = closed.wait_for(|c| *c) => return,
            }
            tokio::time::sleep(Duration::from_millis(JAR_SAVE_DEBOUNCE_MS)).await;
            let g = self.clone();
            let _ = tokio::task::spawn_blocking(move || g.jar.save(&g.upstream.origin)).await;
        }
    }

    pub(crate) fn touch(&self) {
        *self.last_used.lock().unwrap_or_else(|p| p.into_inner()) = Instant::now();
    }

    fn route_name(&self) -> Option<&str> {
        self.route.as_ref().map(|r| r.name.as_str())
    }

    fn idle_for(&self) -> Duration {
        self.last_used.lock().unwrap_or_else(|p| p.into_inner()).elapsed()
    }

    fn info(&self) -> GrantInfo {
        GrantInfo {
            grant: self.id.clone(),
            origin: self.origins.canonical.clone(),
            upstream: self.upstream.origin.clone(),
            remote: self.route_name().map(str::to_string),
            url: None,
        }
    }
}

/// Holds a grant "in use": counted in `active` until dropped; the drop refreshes the TTL. A
/// passive guard (for a caller that named itself foreign) neither counts nor refreshes.
pub(crate) struct ActiveGuard(Option<Arc<Grant>>);

impl ActiveGuard {
    pub(crate) fn new(g: &Arc<Grant>) -> Self {
        g.active.fetch_add(1, Ordering::SeqCst);
        g.touch();
        ActiveGuard(Some(g.clone()))
    }

    pub(crate) fn passive() -> Self {
        ActiveGuard(None)
    }
}

impl Drop for ActiveGuard {
    fn drop(&mut self) {
        if let Some(g) = self.0.take() {
            g.touch();
            g.active.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// Every live grant. Cheap to share (`Arc` inside the API state).
pub struct Proxy {
    config: ProxyConfig,
    grants: Mutex<BTreeMap<String, Arc<Grant>>>,
    next_id: AtomicU64,
    reaper_started: std::sync::Once,
}

impl Proxy {
    /// An empty proxy with these limits. The expiry task starts with the first grant (so this
    /// may be called outside a runtime).
    pub fn new(config: ProxyConfig) -> Arc<Self> {
        Arc::new(Proxy {
            config,
            grants: Mutex::new(BTreeMap::new()),
            next_id: AtomicU64::new(1),
            reaper_started: std::sync::Once::new(),
        })
    }

    /// Returns the grant for `url`'s origin, creating one (and its listener) when none lives;
    /// an existing grant takes the new chain. `embedders` is validated all-or-nothing
    /// ([`validate_chain`]). Must run inside a tokio runtime.
    pub async fn grant(self: &Arc<Self>, url: &str, embedders: &[String]) -> Result<GrantInfo, ProxyError> {
        self.grant_via(url, embedders, None).await
    }

    /// As [`Proxy::grant`], with the upstream reached by `route` (`None`: this machine). A
    /// grant is found again by origin and route name; a routed grant keeps no cookie jar on
    /// disk (jar files are named by origin, and the remote's `localhost` is not this one's).
    pub async fn grant_via(
        self: &Arc<Self>,
        url: &str,
        embedders: &[String],
        route: Option<Route>,
    ) -> Result<GrantInfo, ProxyError> {
        let (upstream, path) = parse_upstream(url)?;
        let route_name = route.as_ref().map(|r| r.name.clone());
        let same = |g: &Grant| g.upstream.origin == upstream.origin && g.route_name() == route_name.as_deref();
        let chain = validate_chain(embedders);
        self.start_reaper();
        {
            let grants = self.lock();
            if let Some(g) = grants.values().find(|g| same(g) && !*g.closed.borrow()) {
                *g.chain.lock().unwrap_or_else(|p| p.into_inner()) = chain;
                g.touch();
                let mut info = g.info();
                info.url = Some(format!("{}{path}", g.origins.canonical));
                return Ok(info);
            }
            if grants.len() >= self.config.max_grants {
                return Err(ProxyError::TooManyGrants(grants.len()));
            }
        }
        let listener = TcpListener::bind(("127.0.0.1", 0)).await.map_err(ProxyError::Bind)?;
        let port = listener.local_addr().map_err(ProxyError::Bind)?.port();
        // A kept jar is read before the grants are locked (a small file, at most
        // `MAX_JAR_FILE_BYTES`).
        let jar = match &self.config.jar_dir {
            Some(dir) if route.is_none() => cookies::Jar::load(jar_file(dir, &upstream.origin), &upstream.origin),
            _ => cookies::Jar::default(),
        };
        let mut grants = self.lock();
        // Another request may have raced us to the same origin or the cap while we bound.
        if let Some(g) = grants.values().find(|g| same(g)) {
            *g.chain.lock().unwrap_or_else(|p| p.into_inner()) = chain;
            g.touch();
            let mut info = g.info();
            info.url = Some(format!("{}{path}", g.origins.canonical));
            return Ok(info);
        }
        if grants.len() >= self.config.max_grants {
            return Err(ProxyError::TooManyGrants(grants.len()));
        }
        let id = format!("g{}", self.next_id.fetch_add(1, Ordering::SeqCst));
        let (closed, _) = watch::channel(false);
        let grant = Arc::new(Grant {
            id: id.clone(),
            port,
            upstream,
            route,
            origins: rules::ProxyOrigins::new(port),
            chain: Mutex::new(chain),
            last_used: Mutex::new(Instant::now()),
            active: AtomicUsize::new(0),
            closed,
            config: self.config.clone(),
            pool: upstream::Pool::default(),
            jar,
            jar_notify: tokio::sync::Notify::new(),
        });
        grants.insert(id, grant.clone());
        drop(grants);
        tokio::spawn(server::serve(listener, grant.clone()));
        if self.config.jar_dir.is_some() && grant.route.is_none() {
            tokio::spawn(grant.clone().save_jar_changes());
        }
        tracing::info!(grant = %grant.id, port, upstream = %grant.upstream.origin, remote = ?grant.route_name(), "proxy grant created");
        let mut info = grant.info();
        info.url = Some(format!("{}{path}", grant.origins.canonical));
        Ok(info)
    }

    /// Every live grant, in id order.
    pub fn list(&self) -> Vec<GrantInfo> {
        let mut v: Vec<(u64, GrantInfo)> =
            self.lock().values().map(|g| (g.id[1..].parse().unwrap_or(0), g.info())).collect();
        v.sort_by_key(|(n, _)| *n);
        v.into_iter().map(|(_, i)| i).collect()
    }

    /// Closes a grant's listener and its connections at once. Returns true if and only if it
    /// was live (a second call returns false).
    pub fn revoke(&self, id: &str) -> bool {
        let g = self.lock().remove(id);
        match g {
            Some(g) => {
                g.close();
                tracing::info!(grant = %g.id, "proxy grant revoked");
                true
            }
            None => false,
        }
    }

    /// Closes every grant (shutdown).
    pub fn close_all(&self) {
        let all: Vec<_> = std::mem::take(&mut *self.lock()).into_values().collect();
        for g in all {
            g.close();
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Arc<Grant>>> {
        self.grants.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn start_reaper(self: &Arc<Self>) {
        let weak = Arc::downgrade(self);
        let tick = (self.config.grant_ttl / 5).clamp(Duration::from_millis(20), Duration::from_secs(5));
        self.reaper_started.call_once(|| {
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(tick).await;
                    let Some(p) = weak.upgrade() else { return };
                    p.expire_idle();
                }
            });
        });
    }

    /// Closes every grant idle for longer than the TTL with nothing in flight, and the pooled
    /// upstream connections idle for too long ([`upstream::POOL_IDLE_MS`]).
    fn expire_idle(&self) {
        let ttl = self.config.grant_ttl;
        let expired: Vec<Arc<Grant>> = {
            let mut grants = self.lock();
            grants.values().for_each(|g| g.pool.prune());
            let ids: Vec<String> = grants
                .values()
                .filter(|g| g.active.load(Ordering::SeqCst) == 0 && g.idle_for() > ttl)
                .map(|g| g.id.clone())
                .collect();
            ids.iter().filter_map(|id| grants.remove(id)).collect()
        };
        for g in expired {
            g.close();
            tracing::info!(grant = %g.id, "proxy grant expired");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_match_the_design_numbers() {
        // DESIGN §7: proxy grant idle TTL / cap / upstream idle = 5 min / 32 / 30 s.
        assert_eq!((GRANT_IDLE_TTL_MS, MAX_GRANTS, UPSTREAM_IDLE_MS), (300_000, 32, 30_000));
        let c = ProxyConfig::default();
        assert_eq!(
            (c.grant_ttl, c.max_grants, c.upstream_idle),
            (Duration::from_secs(300), 32, Duration::from_secs(30))
        );
    }

    #[test]
    fn error_codes_are_stable() {
        for (e, code) in [
            (ProxyError::BadUrl("x".into()), "bad_url"),
            (ProxyError::BadScheme("ftp".into()), "bad_scheme"),
            (ProxyError::HttpsRefused("https://a.test/".into()), "https_refused"),
            (
                ProxyError::BlockedAddress(crate::address::BlockedAddress::Ip("169.254.169.254".parse().unwrap())),
                "blocked_address",
            ),
            (ProxyError::TooManyGrants(32), "too_many_grants"),
        ] {
            assert_eq!(e.code(), code);
        }
        assert!(ProxyError::HttpsRefused("https://a.test/".into()).to_string().contains("screencast"));
    }
}
