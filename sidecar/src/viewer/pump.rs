//! The frame pump of one viewer socket: a CDP screencast of the active tab (provisional
//! frames) and a crisp capture once the page is quiet (two-stage paint, DESIGN §7), sized
//! for the view in CSS px; restarted on a tab switch or a navigation that swaps renderers.

use std::time::Duration;

use base64::Engine;
use bytes::Bytes;
use chromiumoxide::cdp::browser_protocol::page::{
    CaptureScreenshotFormat, CaptureScreenshotParams, EventScreencastFrame, ScreencastFrameAckParams,
    StartScreencastFormat, StartScreencastParams, StopScreencastParams,
};
use chromiumoxide::Page;
use futures_util::StreamExt;
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::msg;
use super::outbox::Outbox;
use super::paint::PaintOrder;
use super::CRISP_QUIET_MS;
use crate::browser::{bounded, BrowserRef, ViewState};

/// JPEG quality of screencast frames (0..=100).
const SCREENCAST_QUALITY: i64 = 80;
/// JPEG quality of crisp captures (0..=100).
const CRISP_QUALITY: i64 = 90;

/// What the input worker and the reader tell the frame pump.
pub(super) enum PumpCtl {
    /// Input reached the page: wait for quiet again before a crisp capture.
    Input,
    /// Take a capture now.
    Repaint,
}

/// The frame pump: a CDP screencast of the active tab (provisional frames), and a crisp
/// capture after [`CRISP_QUIET_MS`] without frames or input. Restarts on a tab switch and
/// on a browser back from a pop-out (a fresh crisp capture first); idle while popped out.
pub(super) async fn pump(
    browser: BrowserRef,
    out: Outbox,
    mut ctl: mpsc::UnboundedReceiver<PumpCtl>,
    views: u64,
    scroll: super::scroll::ScrollPoke,
) {
    let mut state = browser.subscribe();
    let mut frame_id: u32 = 0;
    loop {
        let (active, connected) = {
            let s = state.borrow_and_update();
            if s.views != views {
                return;
            }
            (s.active.clone(), s.connected && !s.popped_out)
        };
        let page = if connected { browser.active_page().ok() } else { None };
        let Some(page) = page else {
            // Wait for the browser to come back or a tab to be attached.
            tokio::select! {
                r = state.changed() => if r.is_err() { return },
                c = ctl.recv() => if c.is_none() { return },
            }
            continue;
        };
        let cast = CastGuard::begin(&browser, &page);
        scroll.page(&page);
        let ended =
            run_page(&browser, &page, &out, &mut ctl, &mut state, &mut frame_id, &active, cast.first, &scroll).await;
        // Awaited here, so a restart on the same tab starts only after this stop.
        cast.end().await;
        if ended {
            return;
        }
    }
}

/// One view counted as streaming a tab. Dropping it (also when the pump task is aborted
/// because its socket went away) uncounts the view and, for the last one, stops Chromium's
/// screencast, so the count never outlives its views.
struct CastGuard {
    browser: BrowserRef,
    page: Page,
    tab: String,
    /// The first view of this tab: it (re)starts the screencast.
    first: bool,
    /// Already uncounted by [`CastGuard::end`].
    ended: bool,
}

impl CastGuard {
    fn begin(browser: &BrowserRef, page: &Page) -> Self {
        let tab = page.target_id().as_ref().to_string();
        let first = browser.cast_begin(&tab);
        CastGuard { browser: browser.clone(), page: page.clone(), tab, first, ended: false }
    }

    /// Uncounts the view and, for the last one, stops the screencast before returning.
    async fn end(mut self) {
        self.ended = true;
        if self.browser.cast_end(&self.tab) {
            let _ = bounded("Page.stopScreencast", self.page.execute(StopScreencastParams::default())).await;
        }
    }
}

impl Drop for CastGuard {
    fn drop(&mut self) {
        if self.ended || !self.browser.cast_end(&self.tab) {
            return;
        }
        // Only an aborted pump gets here. Drop cannot await, so the stop is sent without
        // waiting; with no runtime left the sidecar is shutting down anyway.
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            let (browser, page, tab) = (self.browser.clone(), self.page.clone(), self.tab.clone());
            rt.spawn(async move {
                // A view that began meanwhile (an app reload reconnects at once) owns the
                // screencast now: stopping it would leave that view without frames.
                if !browser.is_cast(&tab) {
                    let _ = bounded("Page.stopScreencast", page.execute(StopScreencastParams::default())).await;
                }
            });
        }
    }
}

/// Streams one page until the active tab changes (false) or the socket/browser ends (true).
#[allow(clippy::too_many_arguments)]
async fn run_page(
    browser: &BrowserRef,
    page: &Page,
    out: &Outbox,
    ctl: &mut mpsc::UnboundedReceiver<PumpCtl>,
    state: &mut tokio::sync::watch::Receiver<ViewState>,
    frame_id: &mut u32,
    active: &Option<String>,
    first: bool,
    scroll: &super::scroll::ScrollPoke,
) -> bool {
    let Ok(mut frames) = bounded("listen", page.event_listener::<EventScreencastFrame>()).await else {
        // Wait for a change rather than spin.
        return state.changed().await.is_err();
    };
    let mut start = StartScreencastParams::default();
    start.format = Some(StartScreencastFormat::Jpeg);
    start.quality = Some(SCREENCAST_QUALITY);
    start.every_nth_frame = Some(1);
    // Chromium runs one screencast per page, shared by every view of it. The first view
    // (re)starts it: one left over by a view that is still shutting down is restarted.
    if let Err(e) = bounded("Page.startScreencast", page.execute(start.clone())).await {
        if first {
            let _ = bounded("Page.stopScreencast", page.execute(StopScreencastParams::default())).await;
            if let Err(e) = bounded("Page.startScreencast", page.execute(start)).await {
                tracing::debug!("start screencast: {e}");
            }
        } else {
            tracing::debug!("start screencast (shared): {e}");
        }
    }
    let (start_url, start_crashed) = {
        let s = state.borrow();
        (active_url(&s), s.crashed)
    };
    let b64 = base64::engine::general_purpose::STANDARD;
    let mut last: Option<Bytes> = None;
    // A new view (or a new tab) gets a capture at once: a static page sends no frames.
    let mut quiet_at: Option<Instant> = Some(Instant::now());
    let mut capture: Option<std::pin::Pin<Box<dyn std::future::Future<Output = Option<Vec<u8>>> + Send>>> = None;
    let mut order = PaintOrder::default();
    let mut capture_ended: Option<Instant> = None;
    // The viewport the last frame was shown at: a frame at a new one (even an echo, dropped
    // below) arms one crisp capture, or a static page would keep showing the old size.
    let mut shown_vp = browser.last_measured();
    // The viewport measured when the capture in flight began: a capture that straddles a
    // viewport change may hold the old size, so it is not sent as the new one.
    let mut capture_vp = shown_vp;
    loop {
        let quiet = quiet_at.unwrap_or_else(|| Instant::now() + Duration::from_secs(3600));
        tokio::select! {
            ev = frames.next() => {
                let Some(ev) = ev else { return state.changed().await.is_err() };
                // Every frame is acknowledged, dropped or not, or delivery stops.
                let p = page.clone();
                let sid = ev.session_id;
                tokio::spawn(async move {
                    let _ = bounded("Page.screencastFrameAck", p.execute(ScreencastFrameAckParams::new(sid))).await;
                });
                // A capture's re-emulation paints the page at its own scale: those frames
                // (and the identical one its restore paints) are not the page changing.
                let recent = capture.is_some() || capture_ended.is_some_and(|t| t.elapsed() < ECHO_WINDOW);
                let size = (ev.metadata.device_width, ev.metadata.device_height);
                let vp_now = browser.last_measured();
                let new_vp = vp_now.map(|v| (v.width, v.height, v.dpr.to_bits())) != shown_vp.map(|v| (v.width, v.height, v.dpr.to_bits()));
                if new_vp {
                    shown_vp = vp_now;
                    if capture.is_none() {
                        quiet_at = Some(Instant::now() + Duration::from_millis(CRISP_QUIET_MS));
                    }
                }
                if recent && is_capture_echo(size, vp_now) {
                    continue;
                }
                scroll.frame(page, ev.metadata.scroll_offset_x, ev.metadata.scroll_offset_y);
                let Ok(jpeg) = b64.decode(AsRef::<str>::as_ref(&ev.data)) else { continue };
                if last.as_deref() == Some(&jpeg[..]) {
                    continue;
                }
                let measured = browser.last_measured();
                let dpr = measured.map(|v| v.dpr).unwrap_or(1.0);
                // Ids count frames sent: a dropped frame does not use one.
                let next = frame_id.wrapping_add(1);
                let (w, h) = frame_css_size(ev.metadata.device_width, ev.metadata.device_height, measured);
                let f = msg::frame(next, w, h, dpr, false, &jpeg);
                if out.frame(f) {
                    *frame_id = next;
                    order.provisional_sent();
                }
                last = Some(Bytes::from(jpeg));
                quiet_at = Some(Instant::now() + Duration::from_millis(CRISP_QUIET_MS));
            }
            _ = tokio::time::sleep_until(quiet), if quiet_at.is_some() && capture.is_none() => {
                quiet_at = None;
                order.capture_begins();
                capture_vp = browser.last_measured();
                let p = page.clone();
                let b = browser.clone();
                capture = Some(Box::pin(async move {
                    let mut c = CaptureScreenshotParams::default();
                    c.format = Some(CaptureScreenshotFormat::Jpeg);
                    c.quality = Some(CRISP_QUALITY);
                    c.from_surface = Some(true);
                    // Through the browser's emulation gate: a capture in flight would undo
                    // a viewport write (Chromium restores the metrics it began with).
                    let data = b.capture(&p, c).await.ok()?;
                    base64::engine::general_purpose::STANDARD.decode(data).ok()
                }));
            }
            r = async { capture.as_mut().expect("guarded").await }, if capture.is_some() => {
                capture = None;
                capture_ended = Some(Instant::now());
                // A provisional frame sent since the capture began is newer: keep it, and
                // capture again once things are quiet.
                if !order.capture_ends() {
                    quiet_at = Some(Instant::now() + Duration::from_millis(CRISP_QUIET_MS));
                    continue;
                }
                let vp = browser.last_measured();
                if vp != capture_vp {
                    quiet_at = Some(Instant::now() + Duration::from_millis(CRISP_QUIET_MS));
                    continue;
                }
                if let Some(jpeg) = r {
                    let (w, h, dpr) = vp.map(|v| (v.width, v.height, v.dpr)).unwrap_or((0, 0, 1.0));
                    let next = frame_id.wrapping_add(1);
                    if out.frame(msg::frame(next, w, h, dpr, true, &jpeg)) {
                        *frame_id = next;
                    } else {
                        quiet_at = Some(Instant::now() + Duration::from_millis(CRISP_QUIET_MS));
                    }
                }
            }
            c = ctl.recv() => match c {
                None => return true,
                Some(PumpCtl::Input) => {
                    quiet_at = Some(Instant::now() + Duration::from_millis(CRISP_QUIET_MS));
                }
                Some(PumpCtl::Repaint) => {
                    quiet_at = Some(Instant::now());
                }
            },
            r = state.changed() => {
                if r.is_err() {
                    return true;
                }
                let s = state.borrow();
                if s.generation != browser.generation() || &s.active != active || !s.connected || s.popped_out {
                    return false;
                }
                // A navigation may swap the page's renderer, which ends its screencast:
                // restart it on every commit of the active tab.
                let url = active_url(&s);
                if url != start_url || s.crashed != start_crashed {
                    return false;
                }
                // A viewport change is a repaint, and the view must get a frame at the new
                // size even when every frame Chromium sends for it is dropped (a capture's
                // echo) or none comes (a static page): a crisp capture once things are quiet.
                let vp = browser.last_measured();
                if vp != shown_vp {
                    shown_vp = vp;
                    if capture.is_none() {
                        quiet_at = Some(Instant::now() + Duration::from_millis(CRISP_QUIET_MS));
                    }
                }
            }
        }
    }
}

/// How long after a crisp capture ends its echo frames may still arrive (seen: 300 ms at
/// DPR 3 under load, out of order with the restore's frame).
const ECHO_WINDOW: Duration = Duration::from_millis(1000);

/// True if and only if a screencast frame of `size` (its metadata's device width and height,
/// in DIP) is an echo of a crisp capture of `viewport`: `Page.captureScreenshot` re-emulates
/// an emulated page at scale DPR ÷ the window's DPR (1 headless) while it runs, and the
/// screencast paints that (a 1600×1200 picture of an 800×600 page at DPR 2). Sent to the
/// view it would flash a zoomed page; counted as activity it would arm the next capture,
/// whose echo arms the next: captures without end.
fn is_capture_echo(size: (f64, f64), viewport: Option<crate::browser::Viewport>) -> bool {
    viewport.is_some_and(|v| in_device_px(size, v))
}

/// True if and only if a frame of `size` is viewport `v` in device pixels (CSS px × DPR, to
/// within a pixel of rounding) at a DPR other than 1. The one rule both readings of a frame's
/// size rest on: a capture's echo ([`is_capture_echo`], right after a capture) and a frame
/// Chromium sized in device pixels ([`frame_css_size`], any other time).
fn in_device_px(size: (f64, f64), v: crate::browser::Viewport) -> bool {
    let device = |css: u32, got: f64| (got - css as f64 * v.dpr).abs() <= 1.0;
    (v.dpr - 1.0).abs() >= 1e-6 && device(v.width, size.0) && device(v.height, size.1)
}

/// A screencast frame's size for its header, in CSS px. Chromium gives it in CSS px, or (at
/// an emulated DPR other than 1, seen at DPR 2 from the first frame until a capture) in
/// pixels of the emulated device, CSS px × DPR: the size that is the measured viewport's
/// times its DPR is that viewport's. The view maps its input and the agent's marks through
/// this size, so a device size would put them at DPR × the place.
fn frame_css_size(width: f64, height: f64, measured: Option<crate::browser::Viewport>) -> (u32, u32) {
    match measured {
        Some(m) if in_device_px((width, height), m) => (m.width, m.height),
        _ => (width.round() as u32, height.round() as u32),
    }
}

fn active_url(s: &ViewState) -> Option<String> {
    s.active.as_ref().and_then(|a| s.tabs.iter().find(|t| &t.id == a)).map(|t| t.url.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_at_the_viewport_times_its_dpr_is_a_capture_echo() {
        let vp = |width, height, dpr| Some(crate::browser::Viewport { width, height, dpr });
        assert!(is_capture_echo((1600.0, 1200.0), vp(800, 600, 2.0)));
        assert!(is_capture_echo((1000.0, 750.0), vp(800, 600, 1.25)));
        assert!(is_capture_echo((2400.0, 1800.0), vp(800, 600, 3.0)));
        assert!(!is_capture_echo((800.0, 600.0), vp(800, 600, 2.0)), "the page itself");
        assert!(!is_capture_echo((800.0, 600.0), vp(800, 600, 1.0)), "no re-emulation at DPR 1");
        assert!(!is_capture_echo((1600.0, 1200.0), None));
    }
    #[test]
    fn a_frame_sized_in_device_pixels_is_given_its_css_size() {
        let vp = |width, height, dpr| Some(crate::browser::Viewport { width, height, dpr });
        assert_eq!(frame_css_size(1600.0, 1200.0, vp(800, 600, 2.0)), (800, 600));
        assert_eq!(frame_css_size(800.0, 600.0, vp(800, 600, 2.0)), (800, 600), "already CSS px");
        assert_eq!(frame_css_size(1280.0, 800.0, vp(1280, 800, 1.0)), (1280, 800));
        assert_eq!(frame_css_size(1000.0, 700.0, vp(800, 600, 2.0)), (1000, 700), "another size: as given");
        assert_eq!(frame_css_size(1499.6, 1050.4, None), (1500, 1050));
    }
}
