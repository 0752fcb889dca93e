//! The viewport: the mode, the one serialized writer of device metrics, the emulation gate
//! every metrics write and screenshot capture goes through, and measuring.

use chromiumoxide::cdp::browser_protocol::browser::GetVersionParams;
use chromiumoxide::cdp::browser_protocol::emulation::{
    SetEmitTouchEventsForMouseConfiguration, SetEmitTouchEventsForMouseParams, SetTouchEmulationEnabledParams,
    SetUserAgentOverrideParams,
};

use super::*;

impl BrowserRef {
    /// The device currently wanted: a fixed viewport's, else a desktop.
    pub(super) fn wanted_device(&self) -> Device {
        match self.shared().mode {
            ViewportMode::Fixed(_, d) => d,
            ViewportMode::Pane => Device::Desktop,
        }
    }

    /// Writes device metrics `vp` (already zoomed) for `device` into `page`; the caller holds
    /// the emulation gate. When the tab's device changes, also
    /// its input devices and user agent: touch emulation (Blink then reports a coarse pointer
    /// without hover instead of the launch's mouse, `chrome.rs`), mouse input emitted as
    /// touch, and the Android agent; back to a desktop, all three are turned off (an empty
    /// agent clears the override: the launch's `--user-agent` applies again). Chromium then
    /// restores pointer and hover from the embedder's preferences (none, headless), not from
    /// `--blink-settings`: such a tab reports no pointer and no hover until a relaunch
    /// (pinned by `tests/viewer.rs::a_phone_viewport_is_touch_…`).
    async fn write_metrics(&self, page: &Page, vp: Viewport, device: Device) -> Result<(), BrowserError> {
        let phone = device == Device::Phone;
        let p = SetDeviceMetricsOverrideParams::new(vp.width as i64, vp.height as i64, vp.dpr, false);
        bounded("Emulation.setDeviceMetricsOverride", page.execute(p)).await?;
        let tab = page.target_id().as_ref().to_string();
        if self.shared().devices.get(&tab).copied().unwrap_or_default() == device {
            return Ok(());
        }
        let mut touch = SetTouchEmulationEnabledParams::new(phone);
        touch.max_touch_points = phone.then_some(MAX_TOUCH_POINTS);
        bounded("Emulation.setTouchEmulationEnabled", page.execute(touch)).await?;
        let mut mouse = SetEmitTouchEventsForMouseParams::new(phone);
        mouse.configuration = phone.then_some(SetEmitTouchEventsForMouseConfiguration::Mobile);
        bounded("Emulation.setEmitTouchEventsForMouse", page.execute(mouse)).await?;
        let agent = if phone {
            let v = bounded("Browser.getVersion", page.execute(GetVersionParams::default())).await?;
            chrome::mobile_user_agent(&v.result.product)
                .ok_or_else(|| BrowserError::Cdp(format!("no version in {:?}", v.result.product)))?
        } else {
            String::new()
        };
        bounded("Emulation.setUserAgentOverride", page.execute(SetUserAgentOverrideParams::new(agent))).await?;
        self.shared().devices.insert(tab, device);
        Ok(())
    }

    /// The viewport currently wanted: the fixed size, else the pane's last size, else the
    /// default.
    pub(super) fn wanted_viewport(&self) -> Viewport {
        let s = self.shared();
        match s.mode {
            ViewportMode::Fixed(v, _) => v,
            ViewportMode::Pane => s.pane.unwrap_or(DEFAULT_VIEWPORT),
        }
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
                ViewportMode::Fixed(v, _) => {
                    s.sync = SyncState::Off;
                    Some(v)
                }
                ViewportMode::Pane => {
                    // With no pane size known yet, it stays applying until a view sends one.
                    s.sync = SyncState::Applying;
                    s.pane
                }
            }
        };
        self.publish();
        let Some(vp) = vp else { return Ok(()) };
        self.write_now(vp).await
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

    /// Asks the viewport writer for `vp` at once (no settle delay) and waits until it is
    /// written. Errors: `Timeout` when the write does not finish within the CDP bound (+1 s).
    pub(super) async fn write_now(&self, vp: Viewport) -> Result<(), BrowserError> {
        let seq = self.request_write(Some(vp), false);
        let mut done = self.0.vp_done.subscribe();
        let bound = Duration::from_millis(super::super::CDP_CALL_BOUND_MS + 1000);
        if tokio::time::timeout(bound, done.wait_for(|d| *d >= seq)).await.is_ok() {
            Ok(())
        } else {
            Err(BrowserError::Timeout("Emulation.setDeviceMetricsOverride"))
        }
    }

    pub(super) fn request_write(&self, vp: Option<Viewport>, settle: bool) -> u64 {
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

    /// Writes the device metrics `vp` (already zoomed, see [`Self::emulated`]) into `page`
    /// through the emulation gate (never while a capture of this browser is in flight).
    pub(super) async fn apply_metrics(&self, page: &Page, vp: Viewport) -> Result<(), BrowserError> {
        if self.shared().headed {
            return Ok(());
        }
        let device = self.wanted_device();
        self.0.emulation.run(self.write_metrics(page, vp, device)).await
    }

    /// Writes the viewport wanted *now* into `page` (read under the gate, so a mode change
    /// that a writer is about to apply is never overtaken by an older wanted size).
    pub(super) async fn apply_wanted(&self, page: &Page) -> Result<(), BrowserError> {
        if self.shared().headed {
            return Ok(());
        }
        self.0
            .emulation
            .run(async {
                let vp = self.emulated(self.wanted_viewport());
                self.write_metrics(page, vp, self.wanted_device()).await
            })
            .await
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
            let r =
                me.0.emulation
                    .run(async {
                        // A renderer that dies during the capture never answers it: the gate
                        // (and every input behind it) must not wait out the CDP bound.
                        let mut view = me.subscribe();
                        let call = bounded("Page.captureScreenshot", page.execute(params));
                        let r = tokio::select! {
                            r = call => r,
                            _ = view.wait_for(|st| st.crashed) => {
                                return Err(BrowserError::Cdp("Page.captureScreenshot: the renderer crashed".into()));
                            }
                        };
                        // The capture restores the page's metrics as it answers, but the renderer
                        // takes them up on its own time, and input reaching it first is mapped
                        // through the capture's scale. A round trip through the page's main
                        // thread (short-bounded: a dialog may block it) lets the restore land.
                        let barrier = eval_in(&page, "0".into());
                        let _ = tokio::time::timeout(Duration::from_millis(RESTORE_BARRIER_MS), barrier).await;
                        r
                    })
                    .await?;
            Ok(AsRef::<str>::as_ref(&r.result.data).to_string())
        });
        call.await.map_err(|e| BrowserError::Cdp(format!("Page.captureScreenshot: {e}")))?
    }

    /// Runs an input dispatch (`Input.*`) through the emulation gate, shared: never while a
    /// capture is in flight. `Page.captureScreenshot` of an emulated page re-emulates it at
    /// `scale` = emulated DPR ÷ the window's DPR while it runs, and Chromium maps input
    /// through that scale: a click at (400,300) at DPR 2 landed at (200,150) (issue #11). A
    /// dispatch answered after the capture's response lands right: the restore comes first.
    pub async fn dispatch_input<T>(&self, call: impl std::future::Future<Output = T>) -> T {
        self.0.emulation.share(call).await
    }

    pub(super) async fn measure_and_publish(&self, page: &Page) {
        if let Ok(v) = measure_page(page).await {
            self.shared().measured = Some(v);
            self.publish();
        }
    }

    /// The measured viewport last published.
    pub fn last_measured(&self) -> Option<Viewport> {
        self.shared().measured
    }
}

/// Touch points a phone reports (`navigator.maxTouchPoints`), as Chrome's device mode does.
const MAX_TOUCH_POINTS: i64 = 5;

/// Longest wait, after a capture, for the page's main thread to take up the restored metrics.
const RESTORE_BARRIER_MS: u64 = 500;

/// Serializes the CDP calls that change a page's device metrics: every
/// `Emulation.setDeviceMetricsOverride` and every `Page.captureScreenshot` (which re-emulates
/// for the capture and restores, on completion, the metrics it saw when it began). Runs one
/// such call at a time, whole, in arrival order (tokio's lock is fair). Input dispatches
/// share it: any number at once, never while a capture or a write runs.
#[derive(Default)]
pub(super) struct EmulationGate(tokio::sync::RwLock<()>);

impl EmulationGate {
    /// Runs `call` once no other call of the gate is in flight; the next waits until it ends.
    pub(super) async fn run<T>(&self, call: impl std::future::Future<Output = T>) -> T {
        let _turn = self.0.write().await;
        call.await
    }

    /// Runs `call` once no exclusive call (capture, metrics write) is in flight or waiting
    /// before it; other shared calls may run alongside.
    pub(super) async fn share<T>(&self, call: impl std::future::Future<Output = T>) -> T {
        let _turn = self.0.read().await;
        call.await
    }
}

pub(super) async fn measure_page(page: &Page) -> Result<Viewport, BrowserError> {
    Ok(measure_with_title(page).await?.0)
}

/// Measures the page's viewport and reads its title in one evaluation.
pub(super) async fn measure_with_title(page: &Page) -> Result<(Viewport, String), BrowserError> {
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
pub(super) async fn viewport_writer(slot: Weak<Slot>, mut rx: watch::Receiver<VpReq>) {
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
            let vp = me.emulated(vp);
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

/// True if and only if `a` and `b` are the same size and DPR. The DPR to within 1e-3: Blink
/// keeps a zoomed one (2 × 1.1) as a 32-bit float, so the page does not report the f64 written.
pub(super) fn same_size(a: &Viewport, b: &Viewport) -> bool {
    a.width == b.width && a.height == b.height && (a.dpr - b.dpr).abs() < 1e-3
}
