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
use chromiumoxide::cdp::browser_protocol::network::{Cookie, CookieParam, TimeSinceEpoch};
use chromiumoxide::cdp::browser_protocol::page::{
    CaptureScreenshotParams, GetNavigationHistoryParams, HandleJavaScriptDialogParams, NavigateToHistoryEntryParams,
    ReloadParams,
};
use chromiumoxide::cdp::browser_protocol::target::{
    CloseTargetParams, EventTargetCreated, EventTargetDestroyed, EventTargetInfoChanged, GetTargetsParams, TargetId,
    TargetInfo,
};
use chromiumoxide::cdp::js_protocol::runtime::EvaluateParams;
use chromiumoxide::error::CdpError;
use chromiumoxide::Page;
use futures_util::StreamExt;
use serde::Serialize;
use tokio::sync::watch;
use tokio::task::JoinHandle;

mod events;
mod tabs;

use super::{
    bounded, chrome, BrowserError, Dialog, PageObserver, SyncState, Tab, ViewState, Viewport, ViewportMode,
    CLOSE_BOUND_MS, DEFAULT_VIEWPORT, LAUNCH_BOUND_MS, VIEWPORT_SETTLE_MS,
};

/// How often a viewed browser's active title is re-read, in milliseconds.
const TITLE_POLL_MS: u64 = 250;
/// While popped out or viewed, the browser's cookies are snapshot every this many title polls
/// (1 s): a window the user closes, or a Chromium that crashes, takes its session cookies
/// with it, and the pop-in or Relaunch that follows carries the last snapshot over.
const COOKIE_SNAPSHOT_POLLS: u32 = 4;

/// Serializes the CDP calls that change a page's device metrics: every
/// `Emulation.setDeviceMetricsOverride` and every `Page.captureScreenshot` (which re-emulates
/// for the capture and restores, on completion, the metrics it saw when it began). Runs one
/// such call at a time, whole, in arrival order (tokio's mutex is fair).
#[derive(Default)]
struct EmulationGate(tokio::sync::Mutex<()>);

impl EmulationGate {
    /// Runs `call` once no other call of the gate is in flight; the next waits until it ends.
    async fn run<T>(&self, call: impl std::future::Future<Output = T>) -> T {
        let _turn = self.0.lock().await;
        call.await
    }
}

/// A shared handle on one browser. Cheap to clone.
#[derive(Clone)]
pub struct BrowserRef(Arc<Slot>);

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
    /// Cookies the next launch must carry over: read at a pop-out before the headless
    /// Chromium closed, then the popped-out window's snapshots (see
    /// [`COOKIE_SNAPSHOT_POLLS`]). Kept through failed launches (a fallback or Relaunch sets
    /// them); cleared once a headless launch has set them.
    cookies: Vec<Cookie>,
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
    emulation: EmulationGate,
    /// Told of every page this browser attaches ([`PageObserver`]).
    observer: Option<Arc<dyn PageObserver>>,
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
}

impl BrowserRef {
    pub(super) fn new(
        id: String,
        profile: PathBuf,
        url: String,
        mode: ViewportMode,
        observer: Option<Arc<dyn PageObserver>>,
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
                cookies: Vec::new(),
            }),
            view,
            vp_tx,
            vp_done,
            casting: Mutex::new(HashMap::new()),
            emulation: EmulationGate::default(),
            observer,
        });
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

    /// The viewport currently wanted: the fixed size, else the pane's last size, else the
    /// default.
    fn wanted_viewport(&self) -> Viewport {
        let s = self.shared();
        match s.mode {
            ViewportMode::Fixed(v) => v,
            ViewportMode::Pane => s.pane.unwrap_or(DEFAULT_VIEWPORT),
        }
    }

    // ---- lifecycle ----

    /// Launches Chromium (queued behind any launch or close already running) at the slot's
    /// last URL. Returns once the first tab exists and has its viewport; the page may still
    /// be loading.
    pub(super) async fn launch(&self) -> Result<(), BrowserError> {
        let _turn = self.0.lifecycle.lock().await;
        if self.0.closing.load(Ordering::SeqCst) {
            return Err(BrowserError::Closed);
        }
        self.launch_locked(None, Vec::new()).await
    }

    /// Closes the running Chromium (if any) and launches a new one on the same profile at
    /// `url` (already checked by the caller) or else the last URL of the active tab, headed if
    /// the browser is popped out. Views of the old one end. A failed launch leaves the browser
    /// disconnected (relaunch again).
    pub async fn relaunch(&self, url: Option<String>) -> Result<(), BrowserError> {
        let _turn = self.0.lifecycle.lock().await;
        if self.0.closing.load(Ordering::SeqCst) {
            return Err(BrowserError::Closed);
        }
        self.stop_locked(Phase::Launching, true).await;
        // Going somewhere else: the new Chromium's first navigation goes there (a navigate
        // after this returns could race the launch's own).
        if let Some(url) = url {
            self.shared().last_url = url;
        }
        // A popped-out window comes back at its last inner size.
        let (window, cookies) = {
            let s = self.shared();
            (s.popped_out.then(|| s.measured.unwrap_or_else(|| self.wanted_viewport())), s.cookies.clone())
        };
        let r = self.launch_locked(window, cookies).await;
        if r.is_err() {
            self.fail_launch(false);
        }
        r
    }

    /// Pops the browser out (DESIGN §4.4): in the lifecycle queue, reads every cookie of the
    /// running Chromium (`Storage.getCookies`; session cookies are never written to disk),
    /// closes it, relaunches it headed on the same profile with a window whose inner size is
    /// the current viewport, sets the cookies (`Storage.setCookies`) and then navigates to the
    /// active tab's last http(s) URL. Returns once the window's Chromium is up. Views stay
    /// open and stream nothing until the browser is popped back in.
    ///
    /// Errors: `NoDisplay` when [`super::popout_capability`] says no (checked now: a display
    /// may go away), `PoppedOut` if it already is, `Closed` when a close overtook it, launch
    /// and CDP errors. A failed headed launch falls back to headless in the pane with the
    /// cookies read; if that fails too the browser is left disconnected, not popped out, and
    /// Relaunch carries the cookies.
    pub async fn pop_out(&self) -> Result<(), BrowserError> {
        let cap = super::popout_capability().await;
        if !cap.available {
            return Err(BrowserError::NoDisplay(cap.reason.unwrap_or_default()));
        }
        let _turn = self.0.lifecycle.lock().await;
        if self.0.closing.load(Ordering::SeqCst) {
            return Err(BrowserError::Closed);
        }
        if self.shared().popped_out {
            return Err(BrowserError::PoppedOut);
        }
        let cookies = self.read_cookies().await?;
        let size = {
            let s = self.shared();
            s.measured.filter(|_| s.phase == Phase::Live).unwrap_or_else(|| match s.mode {
                ViewportMode::Fixed(v) => v,
                ViewportMode::Pane => s.pane.unwrap_or(DEFAULT_VIEWPORT),
            })
        };
        self.shared().popped_out = true;
        self.stop_locked(Phase::Launching, false).await;
        self.shared().cookies = cookies.clone();
        let Err(e) = self.launch_locked(Some(size), cookies.clone()).await else { return Ok(()) };
        tracing::warn!(browser = %self.0.id, "pop-out failed, back to the pane: {e}");
        self.shared().popped_out = false;
        if let Err(e2) = self.launch_locked(None, cookies).await {
            tracing::warn!(browser = %self.0.id, "headless fallback after a failed pop-out: {e2}");
            self.fail_launch(false);
        }
        Err(e)
    }

    /// Pops the browser back in: in the lifecycle queue, reads the window's cookies (or, if its
    /// Chromium has gone, the last snapshot), closes it and relaunches headless on the same
    /// profile at the window's last http(s) URL with the cookies set before navigating. In
    /// fixed mode the fixed viewport becomes the window's last inner size at the same DPR; in
    /// pane mode the pane keeps driving it. Returns once the headless Chromium is up; views
    /// then get `popped_out:false` and frames again.
    ///
    /// Errors: `NotPoppedOut`, `Closed` when a close overtook it, launch errors (the browser is
    /// then left disconnected and not popped out).
    pub async fn pop_in(&self) -> Result<(), BrowserError> {
        let _turn = self.0.lifecycle.lock().await;
        if self.0.closing.load(Ordering::SeqCst) {
            return Err(BrowserError::Closed);
        }
        if !self.shared().popped_out {
            return Err(BrowserError::NotPoppedOut);
        }
        // A dialog waiting in the window blocks its scripts: the last polled size is used.
        let measurable = {
            let s = self.shared();
            s.phase == Phase::Live && !dialog_blocks(&s)
        };
        if measurable {
            let _ = self.measure().await;
        }
        self.return_headless_locked(true).await
    }

    /// Reads every cookie of the running Chromium; none when it is not running.
    async fn read_cookies(&self) -> Result<Vec<Cookie>, BrowserError> {
        let live = {
            let s = self.shared();
            s.live.clone().filter(|_| s.phase == Phase::Live)
        };
        let Some(live) = live else { return Ok(Vec::new()) };
        let b = live.browser.lock().await;
        bounded("Storage.getCookies", b.get_cookies()).await
    }

    /// The pop-in itself (lifecycle queue held): cookies (read now if `fresh`, else or when
    /// that fails the last snapshot), viewport, stop, headless launch.
    async fn return_headless_locked(&self, fresh: bool) -> Result<(), BrowserError> {
        let read = if fresh { self.read_cookies().await.ok().filter(|c| !c.is_empty()) } else { None };
        let cookies = read.unwrap_or_else(|| self.shared().cookies.clone());
        {
            let mut s = self.shared();
            if let (ViewportMode::Fixed(old), Some(win)) = (s.mode, s.measured) {
                let clamp = |v: u32| v.clamp(*super::VIEWPORT_CSS_RANGE.start(), *super::VIEWPORT_CSS_RANGE.end());
                s.mode =
                    ViewportMode::Fixed(Viewport { width: clamp(win.width), height: clamp(win.height), dpr: old.dpr });
            }
        }
        self.stop_locked(Phase::Launching, false).await;
        let r = self.launch_locked(None, cookies).await;
        match r {
            Ok(()) => {
                self.shared().popped_out = false;
                self.publish();
                Ok(())
            }
            Err(e) => {
                self.fail_launch(true);
                Err(e)
            }
        }
    }

    /// After a failed launch: the browser is disconnected (relaunch offered); a pop-out or
    /// pop-in that failed leaves it in its pane (`unpop`).
    fn fail_launch(&self, unpop: bool) {
        {
            let mut s = self.shared();
            s.phase = Phase::Disconnected;
            if unpop {
                s.popped_out = false;
            }
        }
        self.publish();
    }

    /// Gives the popped-out window the inner size `want` (CSS px), then measures and
    /// publishes: `--window-size` sets the outer size, so the frame the page measures (outer
    /// minus inner) is added to the window's bounds (`Browser.getWindowForTarget`,
    /// `Browser.setWindowBounds`), clamped to the screen's available size
    /// (`screen.availWidth`×`availHeight`; the inner size is then smaller than `want`) and
    /// moved onto the screen if it would stick out. Best effort: a window manager may refuse;
    /// failures are logged.
    async fn fit_window(&self, want: Viewport) {
        let Ok(page) = self.active_page() else { return };
        let live = self.shared().live.clone();
        if let Some(live) = live {
            if let Err(e) = fit_bounds(&live.browser, &page, want).await {
                tracing::debug!(browser = %self.0.id, "fit window: {e}");
            }
        }
        self.measure_and_publish(&page).await;
    }

    /// The popped-out window of launch `generation` went away on its own: every page target
    /// closed (`exited` false), or the CDP connection ended (`exited` true). Decided in the
    /// lifecycle queue: pages all closed, or a process that exited with status 0, is the user
    /// closing the window → pop-in at the window's last URL and size; any other exit is a
    /// crash → disconnected (the view offers Relaunch, which relaunches headed).
    async fn window_gone(&self, generation: u64, exited: bool) {
        let _turn = self.0.lifecycle.lock().await;
        let live = {
            let s = self.shared();
            if self.0.closing.load(Ordering::SeqCst) || s.generation != generation || !s.popped_out {
                return;
            }
            s.live.clone()
        };
        if exited {
            let closed = window_closed(&self.shared());
            let clean = match &live {
                Some(live) => {
                    let mut b = live.browser.lock().await;
                    let bound = Duration::from_millis(CLOSE_BOUND_MS);
                    matches!(tokio::time::timeout(bound, b.wait()).await, Ok(Ok(Some(st))) if st.success())
                }
                None => false,
            };
            if !closed && !clean {
                tracing::info!(browser = %self.0.id, "popped-out chromium crashed");
                self.shared().phase = Phase::Disconnected;
                self.publish();
                if let Some(live) = live {
                    let mut b = live.browser.lock().await;
                    end_browser(&mut b).await;
                }
                return;
            }
        }
        tracing::info!(browser = %self.0.id, "popped-out window closed; popping back in");
        // A closing window's cookie store is unreliable (session cookies go as it shuts
        // down): the snapshot taken while it was open is carried over.
        if let Err(e) = self.return_headless_locked(false).await {
            tracing::warn!(browser = %self.0.id, "pop-in after the window closed: {e}");
        }
    }

    /// Closes the browser: a launch not yet begun is superseded; one running finishes first
    /// and is then closed. Idempotent.
    pub(super) async fn close(&self) {
        self.0.closing.store(true, Ordering::SeqCst);
        let _turn = self.0.lifecycle.lock().await;
        self.stop_locked(Phase::Closed, true).await;
        let _ = std::fs::remove_dir_all(&self.0.profile);
    }

    /// Launches Chromium at the last URL: headless when `window` is `None`, else headed, a
    /// pop-out window given that inner size (CSS px) by [`Self::fit_window`] on every headed
    /// launch. `cookies` are set with `Storage.setCookies` before the navigation; a headless
    /// launch that set them clears the carried-over cookies.
    async fn launch_locked(&self, window: Option<Viewport>, cookies: Vec<Cookie>) -> Result<(), BrowserError> {
        let headed = window.is_some();
        let generation = {
            let mut s = self.shared();
            s.phase = Phase::Launching;
            s.generation += 1;
            s.gone.clear();
            s.headed = headed;
            s.generation
        };
        self.publish();
        let url = self.shared().last_url.clone();
        let size = window.map(|w| (w.width, w.height));
        let (mut browser, mut handler) =
            chrome::launch(&self.0.profile, Duration::from_millis(LAUNCH_BOUND_MS), size).await?;
        let pid = browser.get_mut_child().and_then(|c| c.as_mut_inner().id());
        let weak = Arc::downgrade(&self.0);
        // The handler must be polled continuously; one bad message never stops it (newer
        // Chromium sends events chromiumoxide cannot parse). It ends when the socket does.
        let handler_task = tokio::spawn(async move {
            while let Some(r) = handler.next().await {
                match r {
                    Ok(()) => {}
                    Err(CdpError::Ws(e)) => {
                        tracing::debug!("cdp socket ended: {e}");
                        break;
                    }
                    Err(e) => tracing::debug!("cdp handler: {e}"),
                }
            }
            if let Some(slot) = weak.upgrade() {
                BrowserRef(slot).on_disconnected(generation);
            }
        });
        let first = match bounded("Target.createTarget", browser.new_page("about:blank")).await {
            Ok(p) => p,
            Err(e) => {
                handler_task.abort();
                end_browser(&mut browser).await;
                return Err(e);
            }
        };
        let first_id = first.target_id().as_ref().to_string();
        let devtools = super::navigate::devtools_host(browser.websocket_address());
        {
            let mut s = self.shared();
            s.tabs.push(Tab { id: first_id.clone(), url: "about:blank".into(), title: String::new() });
        }
        // Tabs are our first page and pages opened by our tabs; anything else (a blank tab
        // Chromium opens on its own, possibly late) is closed and never listed.
        let follow = match self.follow_targets(&browser, generation).await {
            Ok(t) => t,
            Err(e) => {
                handler_task.abort();
                end_browser(&mut browser).await;
                return Err(e);
            }
        };
        // Close the blank tab Chromium may have opened on its own.
        if let Ok(t) = bounded("Target.getTargets", browser.execute(GetTargetsParams::default())).await {
            for info in &t.result.target_infos {
                if info.r#type == "page" && info.target_id.as_ref() != first_id {
                    let _ =
                        bounded("Target.closeTarget", browser.execute(CloseTargetParams::new(info.target_id.clone())))
                            .await;
                }
            }
        }
        if !cookies.is_empty() {
            let params: Vec<CookieParam> = cookies.iter().map(cookie_param).collect();
            if let Err(e) = bounded("Storage.setCookies", browser.set_cookies(params)).await {
                handler_task.abort();
                follow.abort();
                end_browser(&mut browser).await;
                return Err(e);
            }
        }
        let _ = self.apply_wanted(&first).await;
        self.watch_page(&first, generation);
        let first_id_for_nav = first_id.clone();
        {
            let mut s = self.shared();
            s.pages.insert(first_id.clone(), first.clone());
            if !s.tabs.iter().any(|t| t.id == first_id) {
                s.tabs.push(Tab { id: first_id.clone(), url: "about:blank".into(), title: String::new() });
            }
            s.active = Some(first_id);
            s.live = Some(Arc::new(Live {
                browser: tokio::sync::Mutex::new(browser),
                pid,
                devtools: devtools.clone(),
                tasks: vec![handler_task, follow, tokio::spawn(poll_title(Arc::downgrade(&self.0), generation))],
            }));
            s.phase = Phase::Live;
            if !headed {
                s.cookies.clear();
            }
        }
        match window {
            Some(want) => self.fit_window(want).await,
            None => self.measure_and_publish(&first).await,
        }
        // Navigate without waiting (see navigate.rs for why not through chromiumoxide).
        let target = first_id_for_nav;
        tokio::spawn(async move {
            let Some(devtools) = devtools else {
                return tracing::warn!("initial navigation: no DevTools endpoint known");
            };
            match bounded("Page.navigate", super::navigate::navigate(&devtools, &target, &url)).await {
                Ok(None) => {}
                Ok(Some(e)) => tracing::debug!("initial navigation error page: {e}"),
                Err(e) => tracing::debug!("initial navigation: {e}"),
            }
        });
        Ok(())
    }

    /// Ends the running Chromium (close, then wait; killed past the bound) and leaves the
    /// slot in `phase` with no tabs. Views end if `end_views` (a relaunch or close; not a
    /// pop-out or pop-in).
    async fn stop_locked(&self, phase: Phase, end_views: bool) {
        let live = {
            let mut s = self.shared();
            s.phase = phase;
            s.generation += 1;
            if end_views {
                s.views += 1;
            }
            s.pages.clear();
            s.tabs.clear();
            s.gone.clear();
            s.active = None;
            s.dialog = None;
            s.live.take()
        };
        self.publish();
        if let Some(live) = live {
            let mut b = live.browser.lock().await;
            end_browser(&mut b).await;
            for t in &live.tasks {
                t.abort();
            }
        }
    }

    /// Called when the CDP connection of launch `generation` ends on its own. A popped-out
    /// window's end is judged in [`Self::window_gone`] (a close, or a crash).
    fn on_disconnected(&self, generation: u64) {
        let live = {
            let mut s = self.shared();
            if s.generation != generation || s.phase != Phase::Live {
                return;
            }
            if s.popped_out && s.headed {
                // Busy until judged: every tab already closed means `window_gone` is queued.
                s.phase = Phase::Launching;
                s.pages.clear();
                s.dialog = None;
                let closed = window_closed(&s);
                drop(s);
                self.publish();
                if !closed {
                    let me = self.clone();
                    tokio::spawn(async move { me.window_gone(generation, true).await });
                }
                return;
            }
            tracing::info!(browser = %self.0.id, "chromium disconnected");
            s.phase = Phase::Disconnected;
            s.pages.clear();
            s.dialog = None;
            s.live.clone()
        };
        self.publish();
        // Reap the process so that it leaves no zombie.
        if let Some(live) = live {
            tokio::spawn(async move {
                let mut b = live.browser.lock().await;
                end_browser(&mut b).await;
            });
        }
    }

    async fn follow_targets(&self, browser: &Browser, generation: u64) -> Result<JoinHandle<()>, BrowserError> {
        let mut created = bounded("listen", browser.event_listener::<EventTargetCreated>()).await?;
        let mut changed = bounded("listen", browser.event_listener::<EventTargetInfoChanged>()).await?;
        let mut destroyed = bounded("listen", browser.event_listener::<EventTargetDestroyed>()).await?;
        let weak = Arc::downgrade(&self.0);
        Ok(tokio::spawn(async move {
            loop {
                tokio::select! {
                    Some(ev) = created.next() => {
                        let Some(slot) = weak.upgrade() else { return };
                        BrowserRef(slot).on_target(&ev.target_info, generation, true);
                    }
                    Some(ev) = changed.next() => {
                        let Some(slot) = weak.upgrade() else { return };
                        BrowserRef(slot).on_target(&ev.target_info, generation, false);
                    }
                    Some(ev) = destroyed.next() => {
                        let Some(slot) = weak.upgrade() else { return };
                        BrowserRef(slot).on_target_gone(ev.target_id.as_ref(), generation);
                    }
                    else => return,
                }
            }
        }))
    }

    fn on_target(&self, info: &TargetInfo, generation: u64, created: bool) {
        if info.r#type != "page" {
            return;
        }
        let id = info.target_id.as_ref().to_string();
        let attach = {
            let mut s = self.shared();
            if s.generation != generation || s.gone.contains(&id) {
                return;
            }
            let is_new = !s.tabs.iter().any(|t| t.id == id);
            let opened_by_ours = info.opener_id.as_ref().is_some_and(|o| s.tabs.iter().any(|t| t.id == o.as_ref()));
            // In a popped-out window every page the user opens (Ctrl+T) is a tab too.
            let users = s.headed && s.phase == Phase::Live;
            if is_new && !opened_by_ours && !users {
                drop(s);
                if created && s_is_blank(&info.url) {
                    let me = self.clone();
                    let target = info.target_id.clone();
                    tokio::spawn(async move { me.close_stray(target).await });
                }
                return;
            }
            if is_new {
                s.tabs.push(Tab { id: id.clone(), url: info.url.clone(), title: info.title.clone() });
            } else if let Some(t) = s.tabs.iter_mut().find(|t| t.id == id) {
                t.url = info.url.clone();
                t.title = info.title.clone();
            }
            if s.active.as_deref() == Some(&id) && is_http(&info.url) {
                s.last_url = info.url.clone();
            }
            is_new && !s.pages.contains_key(&id) && s.phase == Phase::Live
        };
        self.publish();
        if attach {
            let me = self.clone();
            let target = info.target_id.clone();
            tokio::spawn(async move { me.attach_opened(target, generation).await });
        }
    }

    /// Closes a page target that is not a tab (a blank page Chromium opened on its own).
    async fn close_stray(&self, target: TargetId) {
        let live = self.shared().live.clone();
        let Some(live) = live else { return };
        let b = live.browser.lock().await;
        let _ = bounded("Target.closeTarget", b.execute(CloseTargetParams::new(target))).await;
    }

    /// A page opened by one of ours (window.open, target=_blank) becomes a tab and the active
    /// one, with the browser's viewport.
    async fn attach_opened(&self, target: TargetId, generation: u64) {
        let live = self.shared().live.clone();
        let Some(live) = live else { return };
        let mut page = None;
        for _ in 0..50 {
            let got = {
                let b = live.browser.lock().await;
                tokio::time::timeout(Duration::from_secs(2), b.get_page(target.clone())).await
            };
            if let Ok(Ok(p)) = got {
                page = Some(p);
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let Some(page) = page else {
            tracing::debug!("could not attach to opened tab {}", target.as_ref());
            return;
        };
        let _ = self.apply_wanted(&page).await;
        self.watch_page(&page, generation);
        let id = target.as_ref().to_string();
        {
            let mut s = self.shared();
            if s.generation != generation || !s.tabs.iter().any(|t| t.id == id) {
                return;
            }
            s.pages.insert(id.clone(), page.clone());
            s.active = Some(id);
        }
        self.measure_and_publish(&page).await;
    }

    fn on_target_gone(&self, id: &str, generation: u64) {
        let new_active = {
            let mut s = self.shared();
            if s.generation != generation {
                return;
            }
            s.gone.insert(id.to_string());
            let had = s.tabs.iter().any(|t| t.id == id);
            s.tabs.retain(|t| t.id != id);
            if had && s.tabs.is_empty() && s.headed && s.popped_out && s.phase == Phase::Live {
                // The user closed the window (its last page): pop back in.
                s.pages.clear();
                s.active = None;
                drop(s);
                self.publish();
                let me = self.clone();
                tokio::spawn(async move { me.window_gone(generation, false).await });
                return;
            }
            s.pages.remove(id);
            if s.dialog.as_ref().is_some_and(|d| d.tab == id) {
                s.dialog = None;
            }
            if s.active.as_deref() == Some(id) {
                s.active = s.tabs.iter().rev().find(|t| s.pages.contains_key(&t.id)).map(|t| t.id.clone());
                s.active.as_ref().and_then(|a| s.pages.get(a)).cloned()
            } else {
                None
            }
        };
        self.publish();
        if let Some(page) = new_active {
            let me = self.clone();
            tokio::spawn(async move {
                let _ = me.apply_wanted(&page).await;
                me.measure_and_publish(&page).await;
            });
        }
    }

    // ---- operations ----

    /// Navigates the active tab; returns once Chromium has started the navigation, or once
    /// the page's beforeunload dialog holds it (the user's answer decides).
    pub async fn navigate(&self, url: String) -> Result<(), BrowserError> {
        let page = self.active_page()?;
        let devtools = {
            let s = self.shared();
            s.live.as_ref().and_then(|l| l.devtools.clone())
        }
        .ok_or_else(|| BrowserError::Cdp("Page.navigate: no DevTools endpoint known".into()))?;
        let target = page.target_id().as_ref().to_string();
        // Not page.execute: chromiumoxide would answer only after the load (see navigate.rs).
        let call = super::navigate::navigate(&devtools, &target, &url);
        let r = self.unless_held(&page, bounded("Page.navigate", call)).await?;
        if let Some(e) = r.flatten() {
            tracing::debug!("navigation error page: {e}");
        }
        Ok(())
    }

    /// Awaits a command that leaves `page`'s document; `None` once the page's beforeunload
    /// dialog holds it instead (Chromium answers such a command only after the user does,
    /// which may be later than the CDP bound).
    async fn unless_held<T>(
        &self,
        page: &Page,
        call: impl std::future::Future<Output = Result<T, BrowserError>>,
    ) -> Result<Option<T>, BrowserError> {
        let tab = page.target_id().as_ref().to_string();
        // Watch before sending the command that opens the dialog.
        let mut view = self.subscribe();
        let held = view.wait_for(|st| st.dialog.as_ref().is_some_and(|d| d.tab == tab && d.kind == "beforeunload"));
        tokio::select! {
            r = call => r.map(Some),
            _ = held => Ok(None),
        }
    }

    /// Goes `delta` (−1 back, +1 forward) in the active tab's history.
    pub async fn history(&self, delta: i64) -> Result<(), BrowserError> {
        let page = self.active_page()?;
        let h = bounded("Page.getNavigationHistory", page.execute(GetNavigationHistoryParams::default())).await?;
        let idx = h.result.current_index + delta;
        let Some(entry) = usize::try_from(idx).ok().and_then(|i| h.result.entries.get(i)) else {
            return Err(BrowserError::BadRequest("no history entry in that direction".into()));
        };
        let go = bounded("Page.navigateToHistoryEntry", page.execute(NavigateToHistoryEntryParams::new(entry.id)));
        self.unless_held(&page, go).await?;
        Ok(())
    }

    /// Reloads the active tab (answers once a beforeunload dialog holds it, as `navigate`).
    pub async fn reload(&self) -> Result<(), BrowserError> {
        let page = self.active_page()?;
        self.unless_held(&page, bounded("Page.reload", page.execute(ReloadParams::default()))).await?;
        Ok(())
    }

    /// Answers the pending dialog as the user chose (`accept`, and a prompt's text).
    pub async fn answer_dialog(&self, accept: bool, text: Option<String>) -> Result<(), BrowserError> {
        self.active_page()?;
        let page = {
            let s = self.shared();
            let Some(d) = &s.dialog else { return Err(BrowserError::BadRequest("no dialog is open".into())) };
            s.pages.get(&d.tab).cloned()
        };
        let Some(page) = page else { return Err(BrowserError::BadRequest("no dialog is open".into())) };
        let mut p = HandleJavaScriptDialogParams::new(accept);
        p.prompt_text = text;
        bounded("Page.handleJavaScriptDialog", page.execute(p)).await?;
        Ok(())
    }

    /// Sets the viewport mode. Fixed: written at once; returns once written and measured.
    /// Pane: the next size a view sends is written after the settle delay.
    pub async fn set_viewport(&self, mode: ViewportMode) -> Result<(), BrowserError> {
        self.active_page()?;
        let vp = {
            let mut s = self.shared();
            if s.popped_out {
                // The window's size is the user's; a pop-in fixes the viewport from it.
                return Err(BrowserError::PoppedOut);
            }
            s.mode = mode;
            match mode {
                ViewportMode::Fixed(v) => {
                    s.sync = SyncState::Off;
                    Some(v)
                }
                ViewportMode::Pane => {
                    s.sync = if s.pane.is_some() { SyncState::Applying } else { SyncState::Applying };
                    s.pane
                }
            }
        };
        self.publish();
        let Some(vp) = vp else { return Ok(()) };
        let seq = self.request_write(Some(vp), false);
        let mut done = self.0.vp_done.subscribe();
        let bound = Duration::from_millis(super::CDP_CALL_BOUND_MS + 1000);
        let written = tokio::time::timeout(bound, done.wait_for(|d| *d >= seq)).await.is_ok();
        if written {
            Ok(())
        } else {
            Err(BrowserError::Timeout("Emulation.setDeviceMetricsOverride"))
        }
    }

    /// A view's pane size while "Resize with pane" is on; returns false (and writes nothing)
    /// in fixed mode. The write happens after [`VIEWPORT_SETTLE_MS`] without a newer size.
    /// While popped out the size is kept for the pop-in and nothing is written.
    pub fn sync_to_pane(&self, vp: Viewport) -> bool {
        {
            let mut s = self.shared();
            if !matches!(s.mode, ViewportMode::Pane) {
                return false;
            }
            s.pane = Some(vp);
            if s.popped_out {
                return true;
            }
            s.sync = SyncState::Applying;
        }
        self.publish();
        self.request_write(Some(vp), true);
        true
    }

    fn request_write(&self, vp: Option<Viewport>, settle: bool) -> u64 {
        let mut seq = 0;
        self.0.vp_tx.send_modify(|r| {
            r.seq += 1;
            r.vp = vp;
            r.settle = settle;
            seq = r.seq;
        });
        seq
    }

    /// Measures the active page's viewport now (innerWidth, innerHeight, devicePixelRatio),
    /// and refreshes its title (CDP reports a title only at commit, not when a script sets it).
    pub async fn measure(&self) -> Result<Viewport, BrowserError> {
        let page = self.active_page()?;
        let (vp, title) = measure_with_title(&page).await?;
        let tab = page.target_id().as_ref().to_string();
        {
            let mut s = self.shared();
            if let Some(t) = s.tabs.iter_mut().find(|t| t.id == tab) {
                t.title = title;
            }
            s.measured = Some(vp);
        }
        self.publish();
        Ok(vp)
    }

    /// Writes `vp` into `page` through the emulation gate (never while a capture of this
    /// browser is in flight).
    async fn apply_metrics(&self, page: &Page, vp: Viewport) -> Result<(), BrowserError> {
        if self.shared().headed {
            return Ok(());
        }
        let p = SetDeviceMetricsOverrideParams::new(vp.width as i64, vp.height as i64, vp.dpr, false);
        self.0.emulation.run(bounded("Emulation.setDeviceMetricsOverride", page.execute(p))).await?;
        Ok(())
    }

    /// Writes the viewport wanted *now* into `page` (read under the gate, so a mode change
    /// that a writer is about to apply is never overtaken by an older wanted size).
    async fn apply_wanted(&self, page: &Page) -> Result<(), BrowserError> {
        if self.shared().headed {
            return Ok(());
        }
        self.0
            .emulation
            .run(async {
                let vp = self.wanted_viewport();
                let p = SetDeviceMetricsOverrideParams::new(vp.width as i64, vp.height as i64, vp.dpr, false);
                bounded("Emulation.setDeviceMetricsOverride", page.execute(p)).await
            })
            .await?;
        Ok(())
    }

    /// `Page.captureScreenshot` of `page` through the emulation gate: captures of one browser
    /// never overlap each other or a viewport write (see `Slot::emulation`). Returns the
    /// image bytes (base64 as CDP sends them). The call runs in its own task, so a caller
    /// that stops waiting (a view that switched tabs or hung up) does not release the gate
    /// while Chromium still holds the capture and its pending restore.
    pub async fn capture(&self, page: &Page, params: CaptureScreenshotParams) -> Result<String, BrowserError> {
        let me = self.clone();
        let page = page.clone();
        let call = tokio::spawn(async move {
            let r = me.0.emulation.run(bounded("Page.captureScreenshot", page.execute(params))).await?;
            Ok(AsRef::<str>::as_ref(&r.result.data).to_string())
        });
        call.await.map_err(|e| BrowserError::Cdp(format!("Page.captureScreenshot: {e}")))?
    }

    async fn measure_and_publish(&self, page: &Page) {
        if let Ok(v) = measure_page(page).await {
            self.shared().measured = Some(v);
            self.publish();
        }
    }

    /// The measured viewport last published.
    pub fn last_measured(&self) -> Option<Viewport> {
        self.shared().measured
    }

    /// The current state, with the viewport measured now.
    pub async fn info(&self) -> BrowserInfo {
        // A dialog blocks the page's scripts: measuring would only wait out the CDP bound.
        let blocked = dialog_blocks(&self.shared());
        let measured = if blocked { None } else { self.measure().await.ok() };
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
        }
    }

    /// Evaluates a fixed, host-owned expression in the active page and returns its JSON value.
    pub(crate) async fn eval(&self, expression: String) -> Result<serde_json::Value, BrowserError> {
        let page = self.active_page()?;
        eval_in(&page, expression).await
    }
}

/// Evaluates `expression` in `page` (by value, awaiting a promise).
pub(crate) async fn eval_in(page: &Page, expression: String) -> Result<serde_json::Value, BrowserError> {
    let mut p = EvaluateParams::new(expression);
    p.return_by_value = Some(true);
    p.await_promise = Some(true);
    let r = bounded("Runtime.evaluate", page.execute(p)).await?;
    if let Some(ex) = &r.result.exception_details {
        return Err(BrowserError::Cdp(format!("evaluation threw: {}", ex.text)));
    }
    Ok(r.result.result.value.clone().unwrap_or(serde_json::Value::Null))
}

/// The window bounds of [`BrowserRef::fit_window`]: outer size = `want` + the window's frame,
/// clamped to the screen's available area.
async fn fit_bounds(browser: &tokio::sync::Mutex<Browser>, page: &Page, want: Viewport) -> Result<(), BrowserError> {
    let inner = measure_page(page).await?;
    let v = eval_in(page, "[screen.availLeft, screen.availTop, screen.availWidth, screen.availHeight]".into()).await?;
    let avail: Vec<i64> = v.as_array().map(|a| a.iter().filter_map(|x| x.as_i64()).collect()).unwrap_or_default();
    let [al, at, aw, ah] = avail[..] else { return Err(BrowserError::Cdp(format!("screen size: {v}"))) };
    let b = browser.lock().await;
    let get = GetWindowForTargetParams { target_id: Some(page.target_id().clone()) };
    let win = bounded("Browser.getWindowForTarget", b.execute(get)).await?.result;
    let (Some(w), Some(h)) = (win.bounds.width, win.bounds.height) else { return Ok(()) };
    let now = [win.bounds.left.unwrap_or(al), win.bounds.top.unwrap_or(at), w, h];
    let [tl, tt, tw, th] = window_bounds(now, (inner.width, inner.height), want, [al, at, aw, ah]);
    if [tl, tt, tw, th] == now {
        return Ok(());
    }
    let bounds = Bounds { width: Some(tw), height: Some(th), left: Some(tl), top: Some(tt), ..Default::default() };
    bounded("Browser.setWindowBounds", b.execute(SetWindowBoundsParams::new(win.window_id, bounds))).await?;
    Ok(())
}

/// The bounds `[left, top, width, height]` (screen px) that give a window now at `now`, whose
/// page measures `inner`, the inner size `want`: its frame (outer minus inner) added, then
/// clamped to the available screen area `avail` (`[availLeft, availTop, availWidth,
/// availHeight]`) and moved so that it does not stick out. At least 100×100.
fn window_bounds(now: [i64; 4], inner: (u32, u32), want: Viewport, avail: [i64; 4]) -> [i64; 4] {
    let [left, top, w, h] = now;
    let [al, at, aw, ah] = avail;
    let (fw, fh) = (w - inner.0 as i64, h - inner.1 as i64);
    let tw = (want.width as i64 + fw).clamp(100, aw.max(100));
    let th = (want.height as i64 + fh).clamp(100, ah.max(100));
    [left.min(al + aw - tw).max(al), top.min(at + ah - th).max(at), tw, th]
}

async fn measure_page(page: &Page) -> Result<Viewport, BrowserError> {
    Ok(measure_with_title(page).await?.0)
}

/// Measures the page's viewport and reads its title in one evaluation.
async fn measure_with_title(page: &Page) -> Result<(Viewport, String), BrowserError> {
    let v = eval_in(page, "[innerWidth, innerHeight, devicePixelRatio, document.title]".into()).await?;
    let a = v.as_array().filter(|a| a.len() == 4).ok_or_else(|| BrowserError::Cdp("bad measurement".into()))?;
    Ok((
        Viewport {
            width: a[0].as_u64().unwrap_or(0) as u32,
            height: a[1].as_u64().unwrap_or(0) as u32,
            dpr: a[2].as_f64().unwrap_or(0.0),
        },
        a[3].as_str().unwrap_or("").to_string(),
    ))
}

/// The one viewport writer of a browser: serialized, coalesced to the latest request, with
/// the settle delay for pane sizes. Ends when the slot is dropped.
async fn viewport_writer(slot: Weak<Slot>, mut rx: watch::Receiver<VpReq>) {
    loop {
        if rx.changed().await.is_err() {
            return;
        }
        let mut req = *rx.borrow_and_update();
        if req.settle {
            loop {
                match tokio::time::timeout(Duration::from_millis(VIEWPORT_SETTLE_MS), rx.changed()).await {
                    Ok(Ok(())) => {
                        req = *rx.borrow_and_update();
                        if !req.settle {
                            break;
                        }
                    }
                    Ok(Err(_)) => return,
                    Err(_) => break,
                }
            }
        }
        let Some(slot) = slot.upgrade() else { return };
        let me = BrowserRef(slot);
        // A headed window's size is the user's: nothing is written into it.
        let headed = me.shared().headed;
        if let (Some(vp), Ok(page), false) = (req.vp, me.active_page(), headed) {
            if let Err(e) = me.apply_metrics(&page, vp).await {
                tracing::debug!("viewport write: {e}");
            }
            // The renderer picks the new metrics up asynchronously: judge the write by what
            // the page measures, re-measuring briefly until it shows the size written.
            let mut measured = measure_page(&page).await;
            for _ in 0..20 {
                if measured.as_ref().is_ok_and(|m| same_size(m, &vp)) {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
                measured = measure_page(&page).await;
            }
            if let Ok(m) = measured {
                let mut s = me.shared();
                s.measured = Some(m);
                if matches!(s.mode, ViewportMode::Pane) && rx.borrow().seq == req.seq {
                    s.sync = SyncState::Synced;
                }
            }
            me.publish();
        }
        me.0.vp_done.send_replace(req.seq);
    }
}

/// While anyone views the browser or it is popped out, refreshes the active tab's title and
/// viewport (a popped-out window's inner size) every [`TITLE_POLL_MS`]: CDP reports titles
/// only at commit, so one a script sets is polled. The cookies of a headed window or a viewed
/// browser are snapshot every [`COOKIE_SNAPSHOT_POLLS`] polls (carried over by a relaunch).
async fn poll_title(slot: Weak<Slot>, generation: u64) {
    let mut n: u32 = 0;
    loop {
        tokio::time::sleep(Duration::from_millis(TITLE_POLL_MS)).await;
        let Some(slot) = slot.upgrade() else { return };
        let me = BrowserRef(slot);
        let (headed, live, blocked) = {
            let s = me.shared();
            if s.generation != generation {
                return;
            }
            (s.headed && s.popped_out, s.phase == Phase::Live, dialog_blocks(&s))
        };
        // A dialog blocks the page's scripts: measuring would only wait out the CDP bound.
        if (me.0.view.receiver_count() > 0 || headed) && !blocked {
            let _ = me.measure().await;
        }
        n = n.wrapping_add(1);
        // Viewed headless browsers too: a crash loses the session cookies Chromium keeps in
        // memory only, and Relaunch carries this snapshot over.
        let viewed = me.0.view.receiver_count() > 0;
        if (headed || viewed) && live && n.is_multiple_of(COOKIE_SNAPSHOT_POLLS) {
            if let Ok(c) = me.read_cookies().await {
                // A read that overlapped the window closing may miss the session cookies
                // Chromium drops as it shuts down: kept only if the browser still has tabs.
                let mut s = me.shared();
                if s.generation == generation && s.phase == Phase::Live && !s.tabs.is_empty() {
                    s.cookies = c;
                }
            }
        }
    }
}

/// True if and only if a dialog blocks the active page's scripts (measuring would only wait
/// out the CDP bound).
fn dialog_blocks(s: &Shared) -> bool {
    s.dialog.as_ref().is_some_and(|d| s.active.as_ref() == Some(&d.tab))
}

/// True if and only if a popped-out window's every tab has closed (the user closed it).
fn window_closed(s: &Shared) -> bool {
    s.tabs.is_empty() && !s.gone.is_empty()
}

/// A cookie read with `Storage.getCookies` as `Storage.setCookies` takes it back: every
/// field kept; a session cookie (no expiry) stays a session cookie.
fn cookie_param(c: &Cookie) -> CookieParam {
    let mut p = CookieParam::new(c.name.clone(), c.value.clone());
    p.domain = Some(c.domain.clone());
    p.path = Some(c.path.clone());
    p.secure = Some(c.secure);
    p.http_only = Some(c.http_only);
    p.same_site = c.same_site.clone();
    p.expires = if c.session { None } else { Some(TimeSinceEpoch::new(c.expires)) };
    p.priority = Some(c.priority.clone());
    p.source_scheme = Some(c.source_scheme.clone());
    p.source_port = Some(c.source_port);
    p.partition_key = c.partition_key.clone();
    p
}

/// Closes a browser then waits for its process; kills it past [`CLOSE_BOUND_MS`].
async fn end_browser(b: &mut Browser) {
    let half = Duration::from_millis(CLOSE_BOUND_MS / 2);
    let _ = tokio::time::timeout(half, b.close()).await;
    match tokio::time::timeout(half, b.wait()).await {
        Ok(_) => {}
        Err(_) => {
            let _ = b.kill().await;
            let _ = tokio::time::timeout(half, b.wait()).await;
        }
    }
}

fn s_is_blank(url: &str) -> bool {
    url.is_empty() || url == "about:blank" || url.starts_with("chrome://newtab")
}

fn same_size(a: &Viewport, b: &Viewport) -> bool {
    a.width == b.width && a.height == b.height && (a.dpr - b.dpr).abs() < 1e-6
}

fn is_http(url: &str) -> bool {
    url.starts_with("http://") || url.starts_with("https://")
}

#[cfg(test)]
mod tests {
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
    fn a_carried_cookie_keeps_its_fields_and_a_session_cookie_stays_one() {
        let p = cookie_param(&cookie("sid", true, -1.0));
        assert_eq!((p.name.as_str(), p.value.as_str()), ("sid", "v"));
        assert_eq!((p.domain.as_deref(), p.path.as_deref()), (Some("127.0.0.1"), Some("/")));
        assert_eq!((p.http_only, p.secure, p.source_port), (Some(true), Some(false), Some(8000)));
        assert!(p.expires.is_none(), "a session cookie gets no expiry");
        let p = cookie_param(&cookie("keep", false, 2_000_000_000.0));
        assert_eq!(p.expires.map(|e| *e.inner()), Some(2_000_000_000.0));
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
