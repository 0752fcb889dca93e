//! Browser host: Chromium over CDP (chromiumoxide), one per browser pane (DESIGN §4.2):
//! headless for screencasts, headed while popped out to a window (DESIGN §4.4).
//!
//! Architecture Invariant: `browser` knows nothing of HTTP or WebSockets. It owns every
//! Chromium process, its lifecycle queue, its tabs and its viewport; viewers read its state
//! through a watch channel ([`ViewState`]) and reach pages only through [`BrowserRef`].

pub mod cdp_counts;
mod chrome;
mod display;
mod eval;
mod navigate;
mod orphans;
mod presence;
pub(crate) mod session;
mod shared_login;
mod slot;

pub(crate) use eval::{eval_in, eval_in_isolated_world, isolated_world};
pub(crate) use navigate::exchange_each;
pub use presence::{Activity, Point, Presence, Rect};
pub use slot::{
    download_dir, BrowserInfo, BrowserRef, Download, DownloadState, FileChooser, ProbeReport, ScreenRect,
    FORCE_OPEN_SCRIPT, MAX_CHOOSER_FILES, MAX_UPLOAD_BYTES, ZOOM_RANGE,
};

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use serde::Serialize;

use crate::constants::{
    DEFAULT_VIEWPORT_DPR, DEFAULT_VIEWPORT_HEIGHT_CSS_PX, DEFAULT_VIEWPORT_WIDTH_CSS_PX, MAX_VIEWPORT_CSS_PX,
    MAX_VIEWPORT_DPR, MIN_VIEWPORT_CSS_PX, MIN_VIEWPORT_DPR,
};

/// Bound on any one CDP call, in milliseconds.
pub const CDP_CALL_BOUND_MS: u64 = 10_000;
/// Bound on launching Chromium (queueing excluded), in milliseconds.
pub const LAUNCH_BOUND_MS: u64 = 30_000;
/// Bound on closing one browser (close, then wait for the process), in milliseconds.
pub const CLOSE_BOUND_MS: u64 = 10_000;
/// Settle delay between the last pane size a view sent and the viewport write, in ms.
pub const VIEWPORT_SETTLE_MS: u64 = 200;
/// The default viewport (protocol §8.2; `constants.rs`): a new browser's fixed size when the
/// create names none, and a pane-mode browser's size until a view has sent the pane's size.
pub const DEFAULT_VIEWPORT: Viewport = Viewport {
    width: DEFAULT_VIEWPORT_WIDTH_CSS_PX,
    height: DEFAULT_VIEWPORT_HEIGHT_CSS_PX,
    dpr: DEFAULT_VIEWPORT_DPR,
};
/// Allowed viewport width and height, in CSS pixels.
pub const VIEWPORT_CSS_RANGE: std::ops::RangeInclusive<u32> = MIN_VIEWPORT_CSS_PX..=MAX_VIEWPORT_CSS_PX;
/// Allowed device pixel ratio.
pub const VIEWPORT_DPR_RANGE: std::ops::RangeInclusive<f64> = MIN_VIEWPORT_DPR..=MAX_VIEWPORT_DPR;
/// Longest URL accepted, in bytes.
pub const MAX_URL_BYTES: usize = 8 * 1024;

/// A viewport: `width`×`height` in CSS pixels at `dpr` device pixels per CSS pixel.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Viewport {
    /// Width in CSS pixels.
    pub width: u32,
    /// Height in CSS pixels.
    pub height: u32,
    /// Device pixels per CSS pixel.
    pub dpr: f64,
}

impl Viewport {
    /// Checks the bounds of [`VIEWPORT_CSS_RANGE`] and [`VIEWPORT_DPR_RANGE`]; outside them,
    /// [`BrowserError::BadRequest`] naming the bound (400 `bad_request` over HTTP).
    pub fn checked(width: i64, height: i64, dpr: f64) -> Result<Viewport, BrowserError> {
        let r = VIEWPORT_CSS_RANGE;
        let ok = |v: i64| v >= *r.start() as i64 && v <= *r.end() as i64;
        if !ok(width) || !ok(height) {
            return Err(BrowserError::BadRequest(format!(
                "width and height must be in {MIN_VIEWPORT_CSS_PX}..={MAX_VIEWPORT_CSS_PX}, got {width}×{height}"
            )));
        }
        if !dpr.is_finite() || !VIEWPORT_DPR_RANGE.contains(&dpr) {
            return Err(BrowserError::BadRequest(format!(
                "dpr must be in {MIN_VIEWPORT_DPR}..={MAX_VIEWPORT_DPR}, got {dpr}"
            )));
        }
        Ok(Viewport { width: width as u32, height: height as u32, dpr })
    }
}

/// How a browser's viewport is chosen.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ViewportMode {
    /// "Resize with pane": the size a view sends over its viewer socket (`sync`).
    Pane,
    /// A fixed size, for the device given.
    Fixed(Viewport, Device),
}

/// The device a fixed viewport emulates (issue 22 item 6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Device {
    /// A mouse (a fine pointer that hovers, the launch's default) and the desktop user agent.
    #[default]
    Desktop,
    /// A phone: touch (a coarse pointer, no hover, `maxTouchPoints` > 0, mouse input sent as
    /// touch) and Chromium's Android user agent. The metrics stay non-`mobile` (no meta
    /// viewport layout): frames and input map through the CSS size written, as for a desktop.
    Phone,
}

/// One tab (a CDP page target).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Tab {
    /// The CDP target id.
    pub id: String,
    /// The tab's committed URL.
    pub url: String,
    /// The tab's title ("" until the page sets one).
    pub title: String,
}

/// A JavaScript dialog waiting for the user.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Dialog {
    /// The tab that opened it.
    pub tab: String,
    /// `alert`, `confirm`, `prompt` or `beforeunload`.
    pub kind: String,
    /// The dialog's message.
    pub message: String,
    /// A prompt's default text (`null` for other kinds).
    pub default_prompt: Option<String>,
}

/// Resize-with-pane progress, reported to views as `sync`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SyncState {
    /// Fixed mode: sizes sent by views are ignored.
    Off,
    /// Pane mode; a size is waiting for its settle delay or being written.
    Applying,
    /// Pane mode; the last size sent has been written and measured.
    Synced,
}

/// What every view of a browser shows; published on every change.
#[derive(Debug, Clone, PartialEq)]
pub struct ViewState {
    /// True if and only if Chromium is up and its CDP connection is alive.
    pub connected: bool,
    /// True if and only if a launch, relaunch, pop-out or pop-in is under way (or a popped-out
    /// window's end is being judged): not connected, but not stopped either.
    pub launching: bool,
    /// Tabs in creation order.
    pub tabs: Vec<Tab>,
    /// The active tab's id.
    pub active: Option<String>,
    /// The viewport last measured in the active page.
    pub viewport: Option<Viewport>,
    /// A dialog waiting for the user, if any.
    pub dialog: Option<Dialog>,
    /// Resize-with-pane progress.
    pub sync: SyncState,
    /// Grows by one at every launch and close.
    pub generation: u64,
    /// Grows by one at every relaunch and close, but not at a pop-out or pop-in: a view ends
    /// when it changes.
    pub views: u64,
    /// True if and only if the browser is popped out to a window (or is being popped out,
    /// or popped back in): views stream no frames and their input is ignored.
    pub popped_out: bool,
    /// True if and only if the active tab's renderer crashed (out of memory, killed) and
    /// nothing has loaded in it since: the browser is up, the page is gone.
    pub crashed: bool,
    /// The active tab is loading a document (`Page.frameStartedLoading` of its main frame
    /// until `frameStoppedLoading`, or a navigation asked for and not yet started).
    pub loading: bool,
    /// Where the active tab is going while it loads and has not committed yet (asked for
    /// with navigate, or a link the page followed); `None` when not known or committed.
    pub pending_url: Option<String>,
    /// A page's file input waiting for the user's files (headless only).
    pub file_chooser: Option<FileChooser>,
    /// This browser's downloads, oldest first.
    pub downloads: Vec<Download>,
    /// The page zoom factor (1 = none).
    pub zoom: f64,
}

/// Errors of browser operations.
#[derive(Debug)]
pub enum BrowserError {
    /// Occurs when no Chromium executable can be found; the message names what to install.
    NoChromium(String),
    /// Occurs when Chromium fails to start or connect within the launch bound.
    Launch(String),
    /// Occurs when a launch was superseded by a close of the same browser.
    Closed,
    /// Occurs when an operation reaches a browser that is being launched or closed.
    Busy,
    /// Occurs when Chromium has gone (crashed or killed); `relaunch` brings it back.
    Disconnected,
    /// Occurs when a tab id or history entry does not exist.
    BadRequest(String),
    /// Occurs when a CDP call fails.
    Cdp(String),
    /// Occurs when a CDP call does not answer within its bound; names the call.
    Timeout(&'static str),
    /// Occurs when the sidecar is shutting down.
    ShuttingDown,
    /// Occurs when a pop-out is asked for and no window can be shown; the message says why.
    NoDisplay(String),
    /// Occurs when a browser is popped out and the operation needs it in its pane
    /// (pop-out again, a viewport write).
    PoppedOut,
    /// Occurs when a pop-in is asked for a browser that is not popped out.
    NotPoppedOut,
    /// Occurs when a browser is asked for with a kept profile a live browser already has (in
    /// this sidecar, or in another running one: then its pid is named).
    ProfileInUse(String),
}

impl std::fmt::Display for BrowserError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BrowserError::NoChromium(m) | BrowserError::Launch(m) | BrowserError::NoDisplay(m) => f.write_str(m),
            BrowserError::Closed => f.write_str("the browser was closed before its launch began"),
            BrowserError::Busy => f.write_str("the browser is being launched or closed"),
            BrowserError::Disconnected => f.write_str("the browser has gone; relaunch it"),
            BrowserError::BadRequest(m) => f.write_str(m),
            BrowserError::Cdp(m) => write!(f, "cdp call failed: {m}"),
            BrowserError::Timeout(call) => write!(f, "cdp call {call} did not answer within 10 s"),
            BrowserError::ShuttingDown => f.write_str("the sidecar is shutting down"),
            BrowserError::PoppedOut => f.write_str("the browser is popped out to a window"),
            BrowserError::NotPoppedOut => f.write_str("the browser is not popped out"),
            BrowserError::ProfileInUse(k) => write!(f, "another browser is using profile {k}"),
        }
    }
}

impl std::error::Error for BrowserError {}

/// Bound on a snapshot's reads of a whole page (the outline walk, the DOM snapshot), in ms:
/// a page of tens of thousands of elements on a busy machine takes longer than one
/// ordinary call's [`CDP_CALL_BOUND_MS`].
pub const PAGE_READ_BOUND_MS: u64 = 30_000;

/// Runs a CDP future bounded by [`CDP_CALL_BOUND_MS`]; `call` names it in errors.
pub(crate) async fn bounded<T, E: std::fmt::Display>(
    call: &'static str,
    fut: impl std::future::Future<Output = Result<T, E>>,
) -> Result<T, BrowserError> {
    bounded_for(call, CDP_CALL_BOUND_MS, fut).await
}

/// Runs a CDP future bounded by `ms` milliseconds; `call` names it in errors.
pub(crate) async fn bounded_for<T, E: std::fmt::Display>(
    call: &'static str,
    ms: u64,
    fut: impl std::future::Future<Output = Result<T, E>>,
) -> Result<T, BrowserError> {
    match tokio::time::timeout(Duration::from_millis(ms), fut).await {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(BrowserError::Cdp(format!("{call}: {e}"))),
        Err(_) => Err(BrowserError::Timeout(call)),
    }
}

/// Whether browsers can be popped out to windows, and if not, why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PopoutCapability {
    /// True if and only if a pop-out can show a window.
    pub available: bool,
    /// Why not, in a sentence for the user; `null` when available.
    pub reason: Option<String>,
}

/// Reads the pop-out capability from the sidecar's environment, now (a display may go away:
/// every pop-out checks again): on Linux a window needs a display that can be reached (see
/// [`display::check`]); everywhere it needs a Chromium. Runs on a blocking thread: a TCP
/// display's connect may take up to its bound.
pub async fn popout_capability() -> PopoutCapability {
    let check =
        || popout_capability_from(|k| std::env::var_os(k), display::Probe::system(), chrome::find_chromium().err());
    tokio::task::spawn_blocking(check).await.unwrap_or_else(|e| PopoutCapability {
        available: false,
        reason: Some(format!("Couldn't check the display: {e}")),
    })
}

fn popout_capability_from(
    env: impl Fn(&str) -> Option<std::ffi::OsString>,
    probe: display::Probe,
    no_chromium: Option<BrowserError>,
) -> PopoutCapability {
    let reason = if cfg!(target_os = "linux") { display::check(&env, &probe).err() } else { None };
    let reason = reason.or_else(|| no_chromium.map(|e| e.to_string()));
    PopoutCapability { available: reason.is_none(), reason }
}

/// Checks a URL the user gave: http or https, at most [`MAX_URL_BYTES`]; else
/// [`BrowserError::BadRequest`] saying which rule it broke.
pub fn check_url(url: &str) -> Result<String, BrowserError> {
    if url.len() > MAX_URL_BYTES {
        return Err(BrowserError::BadRequest(format!("url is over {MAX_URL_BYTES} bytes")));
    }
    let lower = url.get(..8).unwrap_or(url).to_ascii_lowercase();
    let rest = if lower.starts_with("http://") {
        &url[7..]
    } else if lower.starts_with("https://") {
        &url[8..]
    } else {
        return Err(BrowserError::BadRequest("url must start with http:// or https://".into()));
    };
    if rest.is_empty() || rest.starts_with('/') || url.chars().any(|c| c.is_control() || c == ' ') {
        return Err(BrowserError::BadRequest(
            "url must name a host and contain no spaces or control characters".into(),
        ));
    }
    Ok(url.to_string())
}

/// Told of every page a browser attaches (its first tab at each launch, and each tab a page
/// opens), before the page navigates when Porthole opens it. What it follows on the page is
/// its own (agent browsing's console and network buffers); it must not block.
pub trait PageObserver: Send + Sync {
    /// `page` of browser `browser` (launch `generation`) is attached; `view` is the browser's
    /// published state (its tabs, downloads, connection), to follow what concerns the page.
    fn attached(
        &self,
        browser: &str,
        generation: u64,
        page: &chromiumoxide::Page,
        view: tokio::sync::watch::Receiver<ViewState>,
    );

    /// Scripts to run at the start of every document of every page (the main frame and its
    /// same-process frames, before the page's own scripts), each in a named isolated world
    /// the page cannot see. Installed before Porthole first navigates a page it opens, and
    /// into the current document of a page the browser opened on its own. Default: none.
    fn document_start(&self) -> &'static [DocumentStartScript] {
        &[]
    }
}

/// A script a [`PageObserver`] runs at the start of every document
/// (`Page.addScriptToEvaluateOnNewDocument` with `worldName`).
#[derive(Debug, Clone, Copy)]
pub struct DocumentStartScript {
    /// The isolated world it runs in (Chromium keeps one per name and frame, so later reads
    /// in that world see what it left).
    pub world: &'static str,
    /// The script's source.
    pub source: &'static str,
}

/// A kept profile's directory name is this prefix and its key (never `<pid>-<id>`, so the
/// orphan reaper leaves it alone).
pub const KEPT_PROFILE_PREFIX: &str = "keep-";

/// Returns true if and only if `dir` is a kept profile's directory.
fn is_kept(dir: &std::path::Path) -> bool {
    dir.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with(KEPT_PROFILE_PREFIX))
}

/// Checks a kept profile's key (`POST /api/browsers` `profile`): 1 to 64 ASCII letters,
/// digits, `_` and `-` (it names a directory); else [`BrowserError::BadRequest`].
pub fn check_profile_key(key: &str) -> Result<&str, BrowserError> {
    let ok =
        !key.is_empty() && key.len() <= 64 && key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if ok {
        Ok(key)
    } else {
        Err(BrowserError::BadRequest("profile must be 1..=64 ASCII letters, digits, _ and -".into()))
    }
}

/// A browser's network when it is not this machine's (a remote's, protocol §8, §11): its
/// Chromium is launched with `proxy_server` as its proxy for everything, loopback included.
/// `keep` is held as long as the browser lives (the proxy's listener: dropping it stops it).
pub struct NetworkRoute {
    /// The route's name, reported as the browser's `remote` (a link id, `r1`).
    pub name: String,
    /// Chromium's `--proxy-server` value (`socks5://127.0.0.1:P`).
    pub proxy_server: String,
    /// What serves `proxy_server`; dropped with the browser.
    pub keep: Box<dyn std::any::Any + Send + Sync>,
}

/// Every browser of this sidecar, by id (`b1`, `b2`, …; never reused in a sidecar's life).
pub struct Host {
    slots: Mutex<HashMap<String, BrowserRef>>,
    next: AtomicU64,
    root: PathBuf,
    shutting_down: AtomicBool,
    observer: Option<std::sync::Arc<dyn PageObserver>>,
    /// Whether a `profile` key gives a kept profile (`[session] restore`); when false the key
    /// is ignored and every browser's profile is its own, removed with it.
    keep_profiles: bool,
    /// Force-open armed (`agent.sealed.force_open`, issue 24): every browser follows it.
    force_open: tokio::sync::watch::Sender<bool>,
    /// Held while a change of `force_open` is brought to every tab, so a caller that finds
    /// the value already set returns only once the tabs follow it.
    force_open_sync: tokio::sync::Mutex<()>,
    /// The login (cookies) every browser that is not isolated shares (`shared_login.rs`).
    login: std::sync::Arc<shared_login::LoginGroup>,
}

impl Default for Host {
    fn default() -> Self {
        Self::new()
    }
}

impl Host {
    /// A host whose profiles live under the app data dir (`$XDG_DATA_HOME/porthole/browsers`).
    pub fn new() -> Host {
        Host {
            slots: Mutex::new(HashMap::new()),
            next: AtomicU64::new(1),
            root: chrome::profiles_root(),
            shutting_down: AtomicBool::new(false),
            observer: None,
            keep_profiles: true,
            force_open: tokio::sync::watch::channel(false).0,
            force_open_sync: tokio::sync::Mutex::new(()),
            login: std::sync::Arc::new(shared_login::LoginGroup::default()),
        }
    }

    /// Arms (`true`) or disarms force-open in every browser, present and future: the patch is
    /// added to, or removed from, each tab for its next documents (`slot/force_open.rs`);
    /// returns once every live tab has it or not (a tab that fails is logged). Idempotent:
    /// the same value again does nothing.
    pub async fn set_force_open(&self, armed: bool) {
        let _sync = self.force_open_sync.lock().await;
        if !self.force_open.send_if_modified(|v| std::mem::replace(v, armed) != armed) {
            return;
        }
        let all: Vec<BrowserRef> = self.slots().values().cloned().collect();
        futures_util::future::join_all(all.iter().map(|s| s.sync_force_open_all())).await;
    }

    /// True if and only if force-open is armed.
    pub fn force_open(&self) -> bool {
        *self.force_open.borrow()
    }

    /// Ends the Chromium processes, and removes the profiles, that a sidecar which died
    /// without shutting down left under this host's profiles root (never those of a sidecar
    /// that runs); returns how many profiles were left. Blocking (see `orphans.rs`).
    pub fn reap_orphans(&self) -> usize {
        orphans::reap(&self.root)
    }

    /// This host with kept profiles on (the default) or off (`[session] restore = false`: a
    /// `profile` key is then ignored, so no profile outlives its browser).
    pub fn keeping_profiles(self, keep: bool) -> Host {
        Host { keep_profiles: keep, ..self }
    }

    /// A host whose browsers tell `observer` of every page they attach.
    pub fn observed(observer: std::sync::Arc<dyn PageObserver>) -> Host {
        Host { observer: Some(observer), ..Host::new() }
    }

    fn slots(&self) -> std::sync::MutexGuard<'_, HashMap<String, BrowserRef>> {
        self.slots.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Launches a browser at `url` and returns its id once Chromium is up and the first tab
    /// exists (the page may still be loading), then opens `tabs` after it, in order, and makes
    /// tab `active` (0-based over `url` and `tabs`; out of range: the last opened) the active
    /// one. `profile`: a kept profile's key ([`check_profile_key`]): its directory,
    /// `<profiles root>/keep-<key>`, outlives the sidecar (not removed at shutdown, nor reaped
    /// as an orphan; removed when the browser is deleted); `None`: a profile for this browser
    /// only (also when kept profiles are off, [`Host::keeping_profiles`]). Nothing is left
    /// behind on failure (a kept profile's directory stays).
    /// `isolated`: its cookies are its own; else it shares the login of every other browser
    /// that is not isolated (`shared_login.rs`: cookies set anywhere reach it, and its own
    /// reach them).
    /// `route`: its Chromium's traffic goes through that proxy (a remote's network), and it is
    /// isolated whatever `isolated` says.
    /// Errors: [`BrowserError::ProfileInUse`] when a live browser has that profile.
    #[allow(clippy::too_many_arguments)]
    pub async fn create(
        &self,
        url: String,
        mode: ViewportMode,
        profile: Option<&str>,
        isolated: bool,
        tabs: Vec<String>,
        active: Option<usize>,
        route: Option<NetworkRoute>,
    ) -> Result<String, BrowserError> {
        if self.shutting_down.load(Ordering::SeqCst) {
            return Err(BrowserError::ShuttingDown);
        }
        let n = self.next.fetch_add(1, Ordering::SeqCst);
        let id = format!("b{n}");
        let profile = profile.filter(|_| self.keep_profiles);
        let dir = match profile {
            Some(key) => self.root.join(format!("{KEPT_PROFILE_PREFIX}{key}")),
            None => self.root.join(format!("{}-{id}", std::process::id())),
        };
        // A routed browser's cookies are the remote's pages': never in the shared login.
        let login = (!isolated && route.is_none()).then(|| self.login.clone());
        let slot = BrowserRef::new(
            id.clone(),
            dir.clone(),
            url,
            mode,
            self.observer.clone(),
            self.force_open.subscribe(),
            login,
            route,
        );
        {
            let mut slots = self.slots();
            if slots.values().any(|s| s.profile_dir() == dir) {
                slot.forget_login();
                return Err(BrowserError::ProfileInUse(profile.unwrap_or_default().to_string()));
            }
            slots.insert(id.clone(), slot.clone());
        }
        if let Some(key) = profile {
            let claimed = tokio::task::spawn_blocking({
                let dir = dir.clone();
                move || orphans::claim_kept(&dir)
            })
            .await;
            let refused = match claimed {
                Ok(Ok(())) => None,
                Ok(Err(owner)) => Some(BrowserError::ProfileInUse(format!("{key} (held by sidecar {owner})"))),
                Err(e) => Some(BrowserError::Launch(format!("claiming kept profile {key:?}: {e}"))),
            };
            if let Some(e) = refused {
                self.slots().remove(&id);
                slot.forget_login();
                return Err(e);
            }
        }
        let opened = async {
            slot.launch().await?;
            let mut ids = vec![slot.info().await.active_tab.unwrap_or_default()];
            for t in tabs {
                ids.push(slot.new_tab(t).await?);
            }
            if let Some(tab) = active.and_then(|i| ids.get(i)).filter(|_| ids.len() > 1) {
                slot.select_tab(tab).await?;
            }
            Ok::<(), BrowserError>(())
        };
        match opened.await {
            Ok(()) => Ok(id),
            Err(e) => {
                self.slots().remove(&id);
                slot.close_with(profile.is_some()).await;
                Err(e)
            }
        }
    }

    /// The ids of every browser this host holds, in creation order (`b1`, `b2`, …).
    pub fn ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = self.slots().keys().cloned().collect();
        ids.sort_by_key(|id| id[1..].parse::<u64>().unwrap_or(u64::MAX));
        ids
    }

    /// The browser with this id.
    pub fn get(&self, id: &str) -> Option<BrowserRef> {
        self.slots().get(id).cloned()
    }

    /// Closes a browser (after any launch already running) and forgets it; false if unknown.
    pub async fn delete(&self, id: &str) -> bool {
        let Some(slot) = self.slots().remove(id) else { return false };
        slot.close().await;
        true
    }

    /// Closes every browser (close, then wait for each process; killed past the bound) and
    /// refuses new ones. Idempotent.
    pub async fn shutdown(&self) {
        self.shutting_down.store(true, Ordering::SeqCst);
        let all: Vec<BrowserRef> = self.slots().drain().map(|(_, s)| s).collect();
        futures_util::future::join_all(all.iter().map(|s| s.close_with(is_kept(s.profile_dir())))).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_must_be_http_or_https_and_bounded() {
        assert!(check_url("http://127.0.0.1:8000/x").is_ok());
        assert!(check_url("HTTPS://example.com").is_ok());
        for bad in [
            "file:///etc/passwd",
            "javascript:alert(1)",
            "http://",
            "ftp://x",
            "http:///x",
            "http://a b",
            "chrome://settings",
            "",
        ] {
            assert!(check_url(bad).is_err(), "{bad}");
        }
        let long = format!("http://a/{}", "x".repeat(MAX_URL_BYTES));
        assert!(check_url(&long).is_err());
    }

    #[test]
    fn popout_needs_a_reachable_display_and_chromium() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| std::ffi::OsString::from(v))
        };
        let probe = || display::Probe::fake(&["/tmp/.X11-unix/X3", "/run/user/7/wayland-0"], &[]);
        let none = popout_capability_from(env(&[]), probe(), None);
        assert!(!none.available);
        assert_eq!(
            none.reason.as_deref(),
            Some("No display to open a window on (neither DISPLAY nor WAYLAND_DISPLAY is set)")
        );
        assert!(!popout_capability_from(env(&[("DISPLAY", "")]), probe(), None).available);
        assert!(popout_capability_from(env(&[("DISPLAY", ":3")]), probe(), None).available);
        let gone = popout_capability_from(env(&[("DISPLAY", ":99")]), probe(), None);
        assert_eq!(
            gone.reason.as_deref(),
            Some("Couldn't open a window on display :99: no X server is running there (/tmp/.X11-unix/X99 does not exist)")
        );
        let wl = env(&[("WAYLAND_DISPLAY", "wayland-0"), ("XDG_RUNTIME_DIR", "/run/user/7")]);
        assert!(popout_capability_from(wl, probe(), None).available);
        let no_chrome = popout_capability_from(
            env(&[("DISPLAY", ":3")]),
            probe(),
            Some(BrowserError::NoChromium("no Chromium found".into())),
        );
        assert_eq!(no_chrome, PopoutCapability { available: false, reason: Some("no Chromium found".into()) });
    }

    #[test]
    fn viewport_bounds() {
        assert!(Viewport::checked(100, 7680, 0.5).is_ok());
        assert!(Viewport::checked(1280, 800, 4.0).is_ok());
        assert!(Viewport::checked(99, 800, 1.0).is_err());
        assert!(Viewport::checked(1280, 7681, 1.0).is_err());
        assert!(Viewport::checked(1280, 800, 4.1).is_err());
        assert!(Viewport::checked(1280, 800, f64::NAN).is_err());
    }
}
