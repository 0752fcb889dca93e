//! A browser's life: launch, relaunch, pop-out and pop-in (a headed relaunch on the same
//! profile, DESIGN §4.4), a window the user closed, a lost CDP connection, and the end of the
//! process. Everything here runs in the slot's lifecycle queue.

use super::window::{fit_bounds, ScreenRect};
use super::*;

impl BrowserRef {
    /// Launches Chromium (queued behind any launch or close already running) at the slot's
    /// last URL. Returns once the first tab exists and has its viewport; the page may still
    /// be loading.
    pub(in crate::browser) async fn launch(&self) -> Result<(), BrowserError> {
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
    /// Errors: `NoDisplay` when [`super::super::popout_capability`] says no (checked now: a display
    /// may go away), `PoppedOut` if it already is, `Closed` when a close overtook it, launch
    /// and CDP errors. A failed headed launch falls back to headless in the pane with the
    /// cookies read; if that fails too the browser is left disconnected, not popped out, and
    /// Relaunch carries the cookies.
    ///
    /// `beside`: where the app's window is (screen px); the window opens beside it where the
    /// screen has room ([`super::window::place_beside`]).
    pub async fn pop_out(&self, beside: Option<ScreenRect>) -> Result<(), BrowserError> {
        let cap = super::super::popout_capability().await;
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
            // A zoomed page measures the size ÷ the zoom: the window gets the pane's size.
            let unzoomed = (s.zoom - 1.0).abs() < 1e-9;
            s.measured.filter(|_| s.phase == Phase::Live && unzoomed).unwrap_or_else(|| match s.mode {
                ViewportMode::Fixed(v, _) => v,
                ViewportMode::Pane => s.pane.unwrap_or(DEFAULT_VIEWPORT),
            })
        };
        {
            let mut s = self.shared();
            s.popped_out = true;
            s.beside = beside;
        }
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

    /// Sets `cookies` in the running Chromium (`Storage.setCookies`); `Disconnected` when it
    /// is not running.
    pub(in crate::browser) async fn write_cookies(&self, cookies: Vec<CookieParam>) -> Result<(), BrowserError> {
        let live = {
            let s = self.shared();
            s.live.clone().filter(|_| s.phase == Phase::Live)
        };
        let Some(live) = live else { return Err(BrowserError::Disconnected) };
        let b = live.browser.lock().await;
        bounded("Storage.setCookies", b.set_cookies(cookies)).await.map(|_| ())
    }

    /// Reads every cookie of the running Chromium; none when it is not running.
    pub(in crate::browser) async fn read_cookies(&self) -> Result<Vec<Cookie>, BrowserError> {
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
    pub(super) async fn return_headless_locked(&self, fresh: bool) -> Result<(), BrowserError> {
        let read = if fresh { self.read_cookies().await.ok().filter(|c| !c.is_empty()) } else { None };
        let cookies = read.unwrap_or_else(|| self.shared().cookies.clone());
        {
            let mut s = self.shared();
            if let (ViewportMode::Fixed(old, device), Some(win)) = (s.mode, s.measured) {
                let clamp = |v: u32| {
                    v.clamp(*super::super::VIEWPORT_CSS_RANGE.start(), *super::super::VIEWPORT_CSS_RANGE.end())
                };
                s.mode = ViewportMode::Fixed(
                    Viewport { width: clamp(win.width), height: clamp(win.height), dpr: old.dpr },
                    device,
                );
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
    pub(super) fn fail_launch(&self, unpop: bool) {
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
    pub(super) async fn fit_window(&self, want: Viewport) {
        let Ok(page) = self.active_page() else { return };
        let (live, beside) = {
            let mut s = self.shared();
            (s.live.clone(), s.beside.take())
        };
        if let Some(live) = live {
            if let Err(e) = fit_bounds(&live.browser, &page, want, beside).await {
                tracing::debug!(browser = %self.0.id, "fit window: {e}");
            }
        }
        self.measure_and_publish(&page).await;
    }

    /// Queues [`Self::window_gone`] for launch `generation` (every page closed) in a task of
    /// its own.
    pub(super) fn queue_window_gone(&self, generation: u64) {
        let me = self.clone();
        tokio::spawn(async move { me.window_gone(generation, false).await });
    }

    /// The popped-out window of launch `generation` went away on its own: every page target
    /// closed (`exited` false), or the CDP connection ended (`exited` true). Decided in the
    /// lifecycle queue: pages all closed, or a process that exited with status 0, is the user
    /// closing the window → pop-in at the window's last URL and size; any other exit is a
    /// crash → disconnected (the view offers Relaunch, which relaunches headed).
    pub(super) async fn window_gone(&self, generation: u64, exited: bool) {
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
    pub(in crate::browser) async fn close(&self) {
        self.close_with(false).await;
    }

    /// Closes the browser as [`Self::close`] does; its profile directory is removed unless
    /// `keep_profile` (a kept profile at shutdown, for the next start).
    pub(in crate::browser) async fn close_with(&self, keep_profile: bool) {
        self.0.closing.store(true, Ordering::SeqCst);
        if let Some(g) = &self.0.login {
            g.leave(&self.0.id);
        }
        let _turn = self.0.lifecycle.lock().await;
        self.stop_locked(Phase::Closed, true).await;
        if !keep_profile {
            let _ = std::fs::remove_dir_all(&self.0.profile);
        }
    }

    /// The browser's profile directory.
    pub(in crate::browser) fn profile_dir(&self) -> &std::path::Path {
        &self.0.profile
    }

    /// Launches Chromium at the last URL: headless when `window` is `None`, else headed, a
    /// pop-out window given that inner size (CSS px) by [`Self::fit_window`] on every headed
    /// launch. `cookies` are set with `Storage.setCookies` before the navigation; a headless
    /// launch that set them clears the carried-over cookies.
    pub(super) async fn launch_locked(
        &self,
        window: Option<Viewport>,
        cookies: Vec<Cookie>,
    ) -> Result<(), BrowserError> {
        let headed = window.is_some();
        let generation = {
            let mut s = self.shared();
            s.phase = Phase::Launching;
            s.generation += 1;
            s.gone.clear();
            s.headed = headed;
            // A chooser of the old Chromium can no longer be answered; its tabs are gone.
            s.file_chooser = None;
            s.devices.clear();
            s.generation
        };
        self.publish();
        let url = self.shared().last_url.clone();
        let size = window.map(|w| (w.width, w.height));
        // A routed (remote) browser relaunches (pop-out, pop-in) through the same proxy.
        let proxy = self.0.route.as_ref().map(|r| r.proxy_server.as_str());
        let (mut browser, mut handler) =
            chrome::launch(&self.0.profile, Duration::from_millis(LAUNCH_BOUND_MS), size, proxy).await?;
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
                    Err(CdpError::InvalidMessage(raw, e)) => match chrome::invalid_message(&raw) {
                        Ok(why) => tracing::debug!("cdp event chromiumoxide cannot parse, dropped: {why}"),
                        Err(method) => tracing::warn!("cdp message chromiumoxide cannot parse, dropped: {method}: {e}"),
                    },
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
        let devtools = super::super::navigate::devtools_host(browser.websocket_address());
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
        // The shared login's cookies first: the first page is loaded logged in.
        let cookies = match &self.0.login {
            Some(g) => g.for_launch(&self.0.id, cookies).await,
            None => cookies,
        };
        if !cookies.is_empty() {
            let params: Vec<CookieParam> = cookies.iter().map(super::super::shared_login::cookie_param).collect();
            if let Err(e) = bounded("Storage.setCookies", browser.set_cookies(params)).await {
                handler_task.abort();
                follow.abort();
                end_browser(&mut browser).await;
                return Err(e);
            }
        }
        // Downloads of a headless browser go to the user's download directory (a headed
        // window has its own download shelf).
        let downloads = if headed { None } else { self.follow_downloads(&browser, generation).await.ok() };
        if let Err(e) = self.prepare_page(&first).await {
            handler_task.abort();
            follow.abort();
            end_browser(&mut browser).await;
            return Err(e);
        }
        let _ = self.apply_wanted(&first).await;
        self.watch_page(&first, generation);
        // Before the initial navigation below, so force-open covers the first document.
        if let Err(e) = self.sync_force_open(&first).await {
            tracing::warn!(browser = self.id(), "force-open in the first tab: {e}");
        }
        let first_id_for_nav = first_id.clone();
        let closed_while_launching = {
            let mut s = self.shared();
            // The user may close a new window before the launch is live: that is a close of
            // the window (popped back in below), not a tab to bring back.
            let closed = s.gone.contains(&first_id);
            s.pages.insert(first_id.clone(), first.clone());
            if !closed && !s.tabs.iter().any(|t| t.id == first_id) {
                s.tabs.push(Tab { id: first_id.clone(), url: "about:blank".into(), title: String::new() });
            }
            s.active = Some(first_id);
            s.live = Some(Arc::new(Live {
                browser: tokio::sync::Mutex::new(browser),
                pid,
                devtools: devtools.clone(),
                tasks: [handler_task, follow, tokio::spawn(poll_title(Arc::downgrade(&self.0), generation))]
                    .into_iter()
                    .chain(downloads)
                    .collect(),
            }));
            s.phase = Phase::Live;
            if !headed {
                s.cookies.clear();
            }
            headed && window_closed(&s)
        };
        if closed_while_launching {
            self.queue_window_gone(generation);
        }
        // What its profile had that the group lacks (a kept profile's login) goes to the group.
        self.login_changed_soon();
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
            match bounded("Page.navigate", super::super::navigate::navigate(&devtools, &target, &url)).await {
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
    pub(super) async fn stop_locked(&self, phase: Phase, end_views: bool) {
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
            s.crashed.clear();
            s.loading.clear();
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
    pub(super) fn on_disconnected(&self, generation: u64) {
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
}

/// While anyone views the browser or it is popped out, refreshes the active tab's title and
/// viewport (a popped-out window's inner size) every [`TITLE_POLL_MS`]: CDP reports titles
/// only at commit, so one a script sets is polled. The cookies of a headed window or a viewed
/// browser are snapshot every [`COOKIE_SNAPSHOT_POLLS`] polls (carried over by a relaunch).
pub(super) async fn poll_title(slot: Weak<Slot>, generation: u64) {
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
        // The other tabs' titles, once a second (the strip shows them).
        if me.0.view.receiver_count() > 0 && live && n.is_multiple_of(COOKIE_SNAPSHOT_POLLS) {
            me.refresh_other_titles().await;
        }
        // Viewed headless browsers too: a crash loses the session cookies Chromium keeps in
        // memory only, and Relaunch carries this snapshot over.
        let viewed = me.0.view.receiver_count() > 0;
        // A script's `document.cookie` comes with no response to notice it by.
        if (headed || viewed) && live && n.is_multiple_of(COOKIE_SNAPSHOT_POLLS) {
            me.login_changed_soon();
        }
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

/// True if and only if a popped-out window's every tab has closed (the user closed it).
pub(super) fn window_closed(s: &Shared) -> bool {
    s.tabs.is_empty() && !s.gone.is_empty()
}

// Closing a browser takes 3.5 s at most, so the kill comes inside the sidecar's shutdown
// bound (`SHUTDOWN_BOUND_MS`) and no Chromium outlives the sidecar.
/// Longest wait for `Browser.close` to be answered, in milliseconds.
const CLOSE_ANSWER_MS: u64 = 1_500;
/// Longest wait for the process to exit after the close before it is killed, in ms.
const EXIT_AFTER_CLOSE_MS: u64 = 1_500;
/// Longest wait for a killed process to be reaped, in milliseconds.
const REAP_MS: u64 = 500;

/// Closes a browser (`Browser.close`), then waits for its process; kills it past
/// [`EXIT_AFTER_CLOSE_MS`].
pub(super) async fn end_browser(b: &mut Browser) {
    let _ = tokio::time::timeout(Duration::from_millis(CLOSE_ANSWER_MS), b.close()).await;
    if tokio::time::timeout(Duration::from_millis(EXIT_AFTER_CLOSE_MS), b.wait()).await.is_err() {
        let _ = b.kill().await;
        let _ = tokio::time::timeout(Duration::from_millis(REAP_MS), b.wait()).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_browser_is_killed_inside_the_shutdown_bound() {
        // Terminals and browsers end at once after the session save (at most 1 s).
        let budget = crate::constants::SHUTDOWN_BOUND_MS - crate::session::SHUTDOWN_SAVE_MS;
        assert!(CLOSE_ANSWER_MS + EXIT_AFTER_CLOSE_MS + REAP_MS <= budget);
    }
}
