//! One browser: its lifecycle queue, tabs, dialogs, the one viewport writer, and pop-out
//! (a headed relaunch on the same profile, DESIGN §4.4).
//!
//! Ownership: the `Slot` owns the chromiumoxide `Browser` (and so the Chromium child) while
//! it is live; the handler task only polls the CDP connection. `close` is the one place that
//! ends a process: `Browser::close`, then `wait` (kill past the bound), so no zombie remains.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use chromiumoxide::browser::Browser;
use chromiumoxide::cdp::browser_protocol::browser::{Bounds, GetWindowForTargetParams, SetWindowBoundsParams};
use chromiumoxide::cdp::browser_protocol::emulation::SetDeviceMetricsOverrideParams;
use chromiumoxide::cdp::browser_protocol::network::{Cookie, CookieParam};
use chromiumoxide::cdp::browser_protocol::page::{
    CaptureScreenshotParams, GetNavigationHistoryParams, HandleJavaScriptDialogParams, NavigateToHistoryEntryParams,
};
use chromiumoxide::cdp::browser_protocol::target::{
    CloseTargetParams, EventTargetCreated, EventTargetDestroyed, EventTargetInfoChanged, GetTargetsParams, TargetId,
    TargetInfo,
};
use chromiumoxide::error::CdpError;
use chromiumoxide::Page;
use futures_util::StreamExt;
use serde::Serialize;
use tokio::sync::watch;
use tokio::task::JoinHandle;

mod events;
mod files;
mod force_open;
mod lifecycle;
mod navigation;
mod tabs;
mod viewport;
mod window;
mod zoom;

use viewport::*;

use super::eval::eval_in;
use super::{
    bounded, chrome, BrowserError, Device, Dialog, PageObserver, SyncState, Tab, ViewState, Viewport, ViewportMode,
    CLOSE_BOUND_MS, DEFAULT_VIEWPORT, LAUNCH_BOUND_MS, VIEWPORT_SETTLE_MS,
};

/// Longest wait, once a dialog is answered, for its end to be published (a page that opens
/// an identical dialog at once may hide the end from the watch), in milliseconds.
const DIALOG_END_WAIT_MS: u64 = 2000;
/// How often a viewed browser's active title is re-read, in milliseconds.
const TITLE_POLL_MS: u64 = 250;
/// While popped out or viewed, the browser's cookies are snapshot every this many title polls
/// (1 s): a window the user closes, or a Chromium that crashes, takes its session cookies
/// with it, and the pop-in or Relaunch that follows carries the last snapshot over.
const COOKIE_SNAPSHOT_POLLS: u32 = 4;

/// A shared handle on one browser. Cheap to clone.
#[derive(Clone)]
pub struct BrowserRef(Arc<Slot>);

impl super::shared_login::CookieStore for BrowserRef {
    fn read(&self) -> futures_util::future::BoxFuture<'_, Result<Vec<Cookie>, BrowserError>> {
        Box::pin(self.read_cookies())
    }

    fn write(&self, cookies: Vec<CookieParam>) -> futures_util::future::BoxFuture<'_, Result<(), BrowserError>> {
        Box::pin(self.write_cookies(cookies))
    }
}

pub use files::{download_dir, Download, DownloadState, FileChooser, MAX_CHOOSER_FILES, MAX_UPLOAD_BYTES};
pub use force_open::{ProbeReport, FORCE_OPEN_SCRIPT};
pub use window::ScreenRect;
pub use zoom::ZOOM_RANGE;

/// Where a browser is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Launching,
    Live,
    Disconnected,
    Closed,
}

struct Live {
    browser: tokio::sync::Mutex<Browser>,
    pid: Option<u32>,
    /// `host:port` of Chromium's DevTools endpoint (for [`super::navigate`]).
    devtools: Option<String>,
    tasks: Vec<JoinHandle<()>>,
}

struct Shared {
    phase: Phase,
    live: Option<Arc<Live>>,
    generation: u64,
    pages: HashMap<String, Page>,
    tabs: Vec<Tab>,
    /// Page targets of this launch that Chromium destroyed. Target ids are never reused, and
    /// the three `Target` event streams are separate (their relative order is lost), so a
    /// `targetInfoChanged` handled after the `targetDestroyed` of the same target must not
    /// bring a closed tab back.
    gone: HashSet<String>,
    active: Option<String>,
    last_url: String,
    mode: ViewportMode,
    pane: Option<Viewport>,
    measured: Option<Viewport>,
    dialog: Option<Dialog>,
    sync: SyncState,
    /// The pane's state: popped out to a window (set when a pop-out begins, cleared when the
    /// headless browser of a pop-in is up or a pop-out failed).
    popped_out: bool,
    /// True if and only if the running (or launching) Chromium is headed. Nothing writes
    /// device metrics into a headed browser: its window's size is the user's.
    headed: bool,
    /// The view epoch ([`ViewState::views`]).
    views: u64,
    /// Tabs whose renderer crashed (`Target.targetCrashed`) and has not loaded a page since.
    crashed: HashSet<String>,
    /// Tabs loading a document, with where they are going until it commits (if known).
    loading: HashMap<String, Option<String>>,
    /// Cookies the next launch must carry over: read at a pop-out before the headless
    /// Chromium closed, then the popped-out window's snapshots (see
    /// [`COOKIE_SNAPSHOT_POLLS`]). Kept through failed launches (a fallback or Relaunch sets
    /// them); cleared once a headless launch has set them.
    cookies: Vec<Cookie>,
    /// The file chooser waiting for the user, with its input's node.
    file_chooser: Option<(FileChooser, chromiumoxide::cdp::browser_protocol::dom::BackendNodeId)>,
    /// The last chooser id given out.
    next_chooser: u64,
    /// Downloads of this browser, oldest first (at most [`files::MAX_DOWNLOADS`]).
    downloads: Vec<Download>,
    /// The page zoom factor of every tab (1 = none), applied by device scale (`zoom.rs`).
    zoom: f64,
    /// The device each tab of this launch was last given (absent: the launch's desktop).
    devices: HashMap<String, Device>,
    /// Where the app's window is (screen px), for the next pop-out window to open beside it;
    /// taken by the first fit of that window.
    beside: Option<ScreenRect>,
}

/// A viewport write request for the writer task; `seq` grows by one per request.
#[derive(Debug, Clone, Copy)]
struct VpReq {
    seq: u64,
    vp: Option<Viewport>,
    settle: bool,
}

struct Slot {
    id: String,
    profile: PathBuf,
    /// The lifecycle queue: tokio's mutex is fair, so launches and closes run in arrival order.
    lifecycle: tokio::sync::Mutex<()>,
    /// Set by `close`: a launch still waiting in the queue gives up.
    closing: AtomicBool,
    shared: Mutex<Shared>,
    view: watch::Sender<ViewState>,
    vp_tx: watch::Sender<VpReq>,
    vp_done: watch::Sender<u64>,
    /// Views streaming each tab: Chromium allows one screencast per page, shared by them.
    casting: Mutex<HashMap<String, usize>>,
    /// The emulation gate: held across every `Emulation.setDeviceMetricsOverride` and every
    /// `Page.captureScreenshot` of this browser, so none of them overlap. Chromium's
    /// `captureScreenshot` re-emulates for the capture and, when it completes, restores the
    /// device metrics it saw when it *began* (`PageHandler::ScreenshotCaptured` →
    /// `SetDeviceEmulationParams(original_emulation_params)`): a metrics write landing while
    /// a capture is in flight is silently undone, for good. Under CPU load captures are slow
    /// and this happened (a page stuck at an older fixed size). Two overlapping captures are
    /// as bad (the second one saves the first one's temporary params and restores them).
    /// Input dispatches share the gate (see [`BrowserRef::dispatch_input`]): while a capture
    /// re-emulates, Chromium scales input by the capture's own factor.
    emulation: EmulationGate,
    /// Told of every page this browser attaches ([`PageObserver`]).
    observer: Option<Arc<dyn PageObserver>>,
    /// What an agent does here, and the human's input through views.
    presence: super::Presence,
    /// Force-open's flag and the patch's identifier per tab (`force_open.rs`).
    force_open: force_open::ForceOpen,
    /// The shared login this browser is in; `None`: isolated (its cookies are its own).
    login: Option<Arc<super::shared_login::LoginGroup>>,
    /// The network its Chromium goes through when not this machine's (a remote's).
    route: Option<super::NetworkRoute>,
}

/// `GET /api/browsers/{id}`'s answer.
#[derive(Debug, Clone, Serialize)]
pub struct BrowserInfo {
    /// The browser id.
    pub id: String,
    /// True if and only if Chromium is up and connected.
    pub connected: bool,
    /// The active tab's URL ("" when none).
    pub url: String,
    /// The active tab's title.
    pub title: String,
    /// The active tab's id.
    pub active_tab: Option<String>,
    /// Every tab, in creation order.
    pub tabs: Vec<Tab>,
    /// Measured now in the active page (innerWidth, innerHeight, devicePixelRatio); `null`
    /// when it cannot be measured (disconnected, or a dialog blocks the page).
    pub viewport: Option<Viewport>,
    /// `pane` or `fixed`.
    pub mode: &'static str,
    /// Chromium's process id (`null` when not running).
    pub pid: Option<u32>,
    /// A JavaScript dialog waiting for the user.
    pub dialog: Option<Dialog>,
    /// True if and only if the browser is popped out to a window (DESIGN §4.4).
    pub popped_out: bool,
    /// True if and only if the active tab's renderer crashed and nothing loaded since
    /// (reload or navigate brings the page back).
    pub crashed: bool,
    /// True if and only if its cookies are its own (not in the shared login).
    pub isolated: bool,
    /// The route its traffic goes through when not this machine's network (a remote link
    /// id); absent for a local browser.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remote: Option<String>,
}

impl BrowserRef {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new(
        id: String,
        profile: PathBuf,
        url: String,
        mode: ViewportMode,
        observer: Option<Arc<dyn PageObserver>>,
        force_open: watch::Receiver<bool>,
        login: Option<Arc<super::shared_login::LoginGroup>>,
        route: Option<super::NetworkRoute>,
    ) -> BrowserRef {
        let (view, _) = watch::channel(ViewState {
            connected: false,
            launching: true,
            tabs: Vec::new(),
            active: None,
            viewport: None,
            dialog: None,
            sync: if matches!(mode, ViewportMode::Pane) { SyncState::Applying } else { SyncState::Off },
            generation: 0,
            views: 0,
            popped_out: false,
            crashed: false,
            loading: false,
            pending_url: None,
            file_chooser: None,
            downloads: Vec::new(),
            zoom: 1.0,
        });
        let (vp_tx, vp_rx) = watch::channel(VpReq { seq: 0, vp: None, settle: false });
        let (vp_done, _) = watch::channel(0u64);
        let slot = Arc::new(Slot {
            id,
            profile,
            lifecycle: tokio::sync::Mutex::new(()),
            closing: AtomicBool::new(false),
            shared: Mutex::new(Shared {
                phase: Phase::Launching,
                live: None,
                generation: 0,
                pages: HashMap::new(),
                tabs: Vec::new(),
                gone: HashSet::new(),
                active: None,
                last_url: url,
                mode,
                pane: None,
                measured: None,
                dialog: None,
                sync: if matches!(mode, ViewportMode::Pane) { SyncState::Applying } else { SyncState::Off },
                popped_out: false,
                headed: false,
                views: 0,
                crashed: HashSet::new(),
                loading: HashMap::new(),
                cookies: Vec::new(),
                file_chooser: None,
                next_chooser: 0,
                downloads: Vec::new(),
                zoom: 1.0,
                devices: HashMap::new(),
                beside: None,
            }),
            view,
            vp_tx,
            vp_done,
            casting: Mutex::new(HashMap::new()),
            emulation: EmulationGate::default(),
            observer,
            presence: super::Presence::default(),
            force_open: force_open::ForceOpen::new(force_open),
            login,
            route,
        });
        if let Some(g) = &slot.login {
            let weak = Arc::downgrade(&slot);
            g.join(
                &slot.id,
                Box::new(move || {
                    let b = BrowserRef(weak.upgrade()?);
                    b.is_live().then(|| Box::new(b) as Box<dyn super::shared_login::CookieStore>)
                }),
            );
        }
        tokio::spawn(viewport_writer(Arc::downgrade(&slot), vp_rx));
        BrowserRef(slot)
    }

    fn shared(&self) -> std::sync::MutexGuard<'_, Shared> {
        self.0.shared.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The browser id.
    pub fn id(&self) -> &str {
        &self.0.id
    }

    /// True if and only if this browser shares the login of the others (not isolated).
    pub fn shares_login(&self) -> bool {
        self.0.login.is_some()
    }

    /// Leaves the shared login without closing (a create that was refused before launching).
    pub(super) fn forget_login(&self) {
        if let Some(g) = &self.0.login {
            g.leave(&self.0.id);
        }
    }

    /// True if and only if its Chromium is up.
    pub(super) fn is_live(&self) -> bool {
        let s = self.shared();
        s.phase == Phase::Live && s.live.is_some()
    }

    /// Schedules a shared-login sync from this browser (none when isolated).
    fn login_changed_soon(&self) {
        if let Some(g) = &self.0.login {
            g.sync_soon(&self.0.id);
        }
    }

    /// Brings every cookie the other browsers of the shared login have into this one, before
    /// a navigation or a new tab (none when isolated).
    async fn login_flush(&self) {
        if let Some(g) = &self.0.login {
            g.flush(Some(&self.0.id)).await;
        }
    }

    /// A receiver of every state change (the current state is already marked unseen... the
    /// caller reads it with `borrow_and_update`).
    pub fn subscribe(&self) -> watch::Receiver<ViewState> {
        self.0.view.subscribe()
    }

    /// Rebuilds the published state from `Shared`; sends only when it changed.
    fn publish(&self) {
        let st = {
            let s = self.shared();
            ViewState {
                connected: s.phase == Phase::Live,
                launching: s.phase == Phase::Launching,
                tabs: s.tabs.clone(),
                active: s.active.clone(),
                viewport: s.measured,
                dialog: s.dialog.clone(),
                sync: s.sync,
                generation: s.generation,
                views: s.views,
                popped_out: s.popped_out,
                crashed: active_crashed(&s),
                loading: s.active.as_ref().is_some_and(|a| s.loading.contains_key(a)),
                pending_url: s.active.as_ref().and_then(|a| s.loading.get(a).cloned().flatten()),
                file_chooser: s.file_chooser.as_ref().map(|(c, _)| c.clone()),
                downloads: s.downloads.clone(),
                zoom: s.zoom,
            }
        };
        self.0.view.send_if_modified(|old| {
            if *old == st {
                false
            } else {
                *old = st;
                true
            }
        });
    }

    /// The agent's activity here and the human's input through views ([`super::Presence`]).
    pub fn presence(&self) -> &super::Presence {
        &self.0.presence
    }

    /// The active tab's page, if the browser is live.
    pub fn active_page(&self) -> Result<Page, BrowserError> {
        let s = self.shared();
        match s.phase {
            Phase::Live => {}
            Phase::Launching => return Err(BrowserError::Busy),
            Phase::Disconnected => return Err(BrowserError::Disconnected),
            Phase::Closed => return Err(BrowserError::Closed),
        }
        s.active
            .as_ref()
            .and_then(|a| s.pages.get(a))
            .cloned()
            .ok_or_else(|| BrowserError::Cdp("the active tab is not attached yet".into()))
    }

    /// Counts one more view streaming `tab`; true if and only if it is the first (the caller
    /// then (re)starts the screencast).
    pub fn cast_begin(&self, tab: &str) -> bool {
        let mut c = self.0.casting.lock().unwrap_or_else(|p| p.into_inner());
        let n = c.entry(tab.to_string()).or_insert(0);
        *n += 1;
        *n == 1
    }

    /// True if and only if at least one view streams `tab`.
    pub fn is_cast(&self, tab: &str) -> bool {
        self.0.casting.lock().unwrap_or_else(|p| p.into_inner()).contains_key(tab)
    }

    /// Counts one view fewer streaming `tab`; true if and only if it was the last (the caller
    /// then stops the screencast).
    pub fn cast_end(&self, tab: &str) -> bool {
        let mut c = self.0.casting.lock().unwrap_or_else(|p| p.into_inner());
        match c.get_mut(tab) {
            Some(n) if *n > 1 => {
                *n -= 1;
                false
            }
            Some(_) => {
                c.remove(tab);
                true
            }
            None => true,
        }
    }

    /// The generation of the current launch (changes at every launch and close).
    pub fn generation(&self) -> u64 {
        self.shared().generation
    }

    /// The view epoch: changes at every relaunch and close (views end), not at a pop-out or
    /// pop-in (views stay, streaming nothing while popped out).
    pub fn views(&self) -> u64 {
        self.shared().views
    }

    /// True if and only if the browser is popped out to a window.
    pub fn popped_out(&self) -> bool {
        self.shared().popped_out
    }

    /// True if and only if the active tab's renderer crashed and nothing loaded since (the
    /// `crashed` of [`ViewState`], read now rather than from a subscription).
    pub fn crashed(&self) -> bool {
        active_crashed(&self.shared())
    }

    /// Answers the pending dialog as the user chose (`accept`, and a prompt's text).
    pub async fn answer_dialog(&self, accept: bool, text: Option<String>) -> Result<(), BrowserError> {
        self.active_page()?;
        let (page, dialog) = {
            let s = self.shared();
            let Some(d) = &s.dialog else { return Err(BrowserError::BadRequest("no dialog is open".into())) };
            (s.pages.get(&d.tab).cloned(), d.clone())
        };
        let Some(page) = page else { return Err(BrowserError::BadRequest("no dialog is open".into())) };
        let mut p = HandleJavaScriptDialogParams::new(accept);
        p.prompt_text = text;
        let mut view = self.subscribe();
        bounded("Page.handleJavaScriptDialog", page.execute(p)).await?;
        // The page's event task publishes the dialog's end (`Page.javascriptDialogClosed`,
        // which may come after this answer): waited for, so the next verb does not find it
        // still pending.
        let closed = view.wait_for(|v| v.dialog.as_ref() != Some(&dialog));
        if tokio::time::timeout(Duration::from_millis(DIALOG_END_WAIT_MS), closed).await.is_err() {
            tracing::debug!("the dialog's end was not published within {DIALOG_END_WAIT_MS} ms");
        }
        Ok(())
    }

    /// The current state, with the viewport measured now.
    pub async fn info(&self) -> BrowserInfo {
        // A dialog blocks the page's scripts: measuring would only wait out the CDP bound.
        let blocked = dialog_blocks(&self.shared());
        let measured = if blocked {
            None
        } else {
            self.measure().await.map_err(|e| tracing::debug!(browser = %self.0.id, "viewport not measured: {e}")).ok()
        };
        let s = self.shared();
        let active = s.active.as_ref().and_then(|a| s.tabs.iter().find(|t| &t.id == a));
        BrowserInfo {
            id: self.0.id.clone(),
            connected: s.phase == Phase::Live,
            url: active.map(|t| t.url.clone()).unwrap_or_default(),
            title: active.map(|t| t.title.clone()).unwrap_or_default(),
            active_tab: s.active.clone(),
            tabs: s.tabs.clone(),
            viewport: measured,
            mode: if matches!(s.mode, ViewportMode::Pane) { "pane" } else { "fixed" },
            pid: s.live.as_ref().and_then(|l| l.pid).filter(|_| s.phase == Phase::Live),
            dialog: s.dialog.clone(),
            popped_out: s.popped_out,
            crashed: active_crashed(&s),
            isolated: self.0.login.is_none(),
            remote: self.0.route.as_ref().map(|r| r.name.clone()),
        }
    }

    /// Evaluates a fixed, host-owned expression in the active page and returns its JSON value.
    pub(crate) async fn eval(&self, expression: String) -> Result<serde_json::Value, BrowserError> {
        let page = self.active_page()?;
        eval_in(&page, expression).await
    }
}

/// True if and only if a dialog blocks the active page's scripts, or its renderer crashed
/// (measuring would only wait out the CDP bound).
fn dialog_blocks(s: &Shared) -> bool {
    s.dialog.as_ref().is_some_and(|d| s.active.as_ref() == Some(&d.tab)) || active_crashed(s)
}

/// True if and only if the active tab's renderer crashed and nothing loaded in it since.
fn active_crashed(s: &Shared) -> bool {
    s.active.as_ref().is_some_and(|a| s.crashed.contains(a))
}

fn s_is_blank(url: &str) -> bool {
    url.is_empty() || url == "about:blank" || url.starts_with("chrome://newtab")
}

fn is_http(url: &str) -> bool {
    url.starts_with("http://") || url.starts_with("https://")
}

#[cfg(test)]
mod tests {
    use super::super::shared_login::cookie_param;
    use super::window::{place_beside, window_bounds, ScreenRect};
    use super::*;

    /// Chromium's emulation state as `captureScreenshot` treats it: a capture saves the
    /// metrics it begins with, emulates its own, and restores the saved ones when it ends.
    #[derive(Default)]
    struct FakeEmulation(Mutex<u32>);

    impl FakeEmulation {
        fn get(&self) -> u32 {
            *self.0.lock().unwrap()
        }
        fn set(&self, v: u32) {
            *self.0.lock().unwrap() = v;
        }
        async fn capture(&self) {
            let saved = self.get();
            self.set(u32::MAX);
            for _ in 0..10 {
                tokio::task::yield_now().await;
            }
            self.set(saved);
        }
        async fn write(&self, v: u32) {
            tokio::task::yield_now().await;
            self.set(v);
        }
    }

    fn cookie(name: &str, session: bool, expires: f64) -> Cookie {
        use chromiumoxide::cdp::browser_protocol::network::{CookiePriority, CookieSourceScheme};
        Cookie::builder()
            .name(name)
            .value("v")
            .domain("127.0.0.1")
            .path("/")
            .expires(expires)
            .size(2)
            .http_only(true)
            .secure(false)
            .session(session)
            .priority(CookiePriority::Medium)
            .source_scheme(CookieSourceScheme::NonSecure)
            .source_port(8000)
            .build()
            .unwrap()
    }

    #[test]
    fn a_window_gets_its_frame_added_and_stays_on_the_screen() {
        let vp = |width, height| Viewport { width, height, dpr: 1.0 };
        let screen = [0, 0, 1600, 1000];
        // 900×700 wanted, the window at 900×700 outer measures 900×557 inner: 143 px of frame.
        assert_eq!(window_bounds([0, 0, 900, 700], (900, 557), vp(900, 700), screen), [0, 0, 900, 843]);
        // 1440×900 wanted: 1043 px tall does not fit a 1000 px screen; clamped (inner 857).
        assert_eq!(window_bounds([0, 0, 1440, 900], (1440, 757), vp(1440, 900), screen), [0, 0, 1440, 1000]);
        // Moved back onto the screen when it would stick out at the right or bottom.
        assert_eq!(window_bounds([500, 400, 900, 700], (900, 557), vp(900, 700), screen), [500, 157, 900, 843]);
        assert_eq!(window_bounds([-50, -20, 300, 300], (300, 300), vp(300, 300), screen), [0, 0, 300, 300]);
    }

    #[test]
    fn a_pop_out_window_opens_beside_the_app_where_the_screen_has_room() {
        let screen = [0, 0, 1600, 1000];
        let app = |x, y, width, height| ScreenRect { x, y, width, height };
        // Room on the right: there, at the app's top.
        assert_eq!(place_beside([0, 0, 700, 600], app(0, 50, 800, 900), screen), [800, 50, 700, 600]);
        // None on the right, room on the left: its right edge on the app's left edge.
        assert_eq!(place_beside([0, 0, 700, 600], app(900, 50, 700, 900), screen), [200, 50, 700, 600]);
        // Room on neither side: against the edge with more room; a top that would stick out moves up.
        assert_eq!(place_beside([0, 0, 900, 600], app(400, 700, 1000, 300), screen), [0, 400, 900, 600]);
        assert_eq!(place_beside([0, 0, 900, 600], app(200, 0, 1000, 300), screen), [700, 0, 900, 600]);
        // A second monitor to the left (negative coordinates) is screen too when available says so.
        assert_eq!(
            place_beside([0, 0, 500, 400], app(-1200, 0, 1000, 800), [-1600, 0, 3200, 1000]),
            [-200, 0, 500, 400]
        );
    }

    #[test]
    fn a_carried_cookie_keeps_its_fields_and_a_session_cookie_stays_one() {
        let p = cookie_param(&cookie("sid", true, -1.0));
        assert_eq!((p.name.as_str(), p.value.as_str()), ("sid", "v"));
        assert_eq!((p.url.as_deref(), p.domain.as_deref()), (Some("http://127.0.0.1/"), None), "host-only stays so");
        assert_eq!(p.path.as_deref(), Some("/"));
        assert_eq!((p.http_only, p.secure, p.source_port), (Some(true), Some(false), Some(8000)));
        assert!(p.expires.is_none(), "a session cookie gets no expiry");
        let p = cookie_param(&cookie("keep", false, 2_000_000_000.0));
        assert_eq!(p.expires.map(|e| *e.inner()), Some(2_000_000_000.0));
        let mut wide = cookie("wide", false, 2_000_000_000.0);
        wide.domain = ".example.test".into();
        let p = cookie_param(&wide);
        assert_eq!((p.url, p.domain.as_deref()), (None, Some(".example.test")), "a domain cookie keeps its domain");
    }

    #[tokio::test]
    async fn a_viewport_write_is_never_undone_by_a_capture_in_flight() {
        let chromium = Arc::new(FakeEmulation::default());
        let gate = Arc::new(EmulationGate::default());
        chromium.set(390);
        // A capture begins (at 390), then writes arrive while it is in flight: the last
        // write wins, whatever the interleaving.
        let mut tasks = Vec::new();
        for i in 0..4u32 {
            let (c, g) = (chromium.clone(), gate.clone());
            tasks.push(tokio::spawn(async move { g.run(c.capture()).await }));
            let (c, g) = (chromium.clone(), gate.clone());
            let v = 640 + i;
            tasks.push(tokio::spawn(async move { g.run(c.write(v)).await }));
            tokio::task::yield_now().await;
        }
        for t in tasks {
            t.await.unwrap();
        }
        assert_eq!(chromium.get(), 643);
    }
}
