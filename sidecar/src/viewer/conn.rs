//! One viewer socket: the state follower, the frame pump (two-stage paint) and the input
//! worker, joined by channels. Ends when the view hangs up, a send fails, or the browser is
//! relaunched or closed; a pop-out or pop-in keeps it (no frames, inputs ignored while
//! popped out).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket};
use base64::Engine;
use bytes::Bytes;
use chromiumoxide::cdp::browser_protocol::input::{
    DispatchKeyEventParams, DispatchKeyEventType, DispatchMouseEventParams, DispatchMouseEventType, InsertTextParams,
    MouseButton as CdpButton,
};
use chromiumoxide::cdp::browser_protocol::page::{
    CaptureScreenshotFormat, CaptureScreenshotParams, EventScreencastFrame, ScreencastFrameAckParams,
    StartScreencastFormat, StartScreencastParams, StopScreencastParams,
};
use chromiumoxide::Page;
use futures_util::{SinkExt, StreamExt};
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::inputs::InputQueue;
use super::keys::virtual_key_code;
use super::msg::{self, EditOp, Inbound, KeyEvent, MouseButton, MouseEvent};
use super::paint::PaintOrder;
use super::popup::Popups;
use super::{
    CRISP_QUIET_MS, MAX_HELD_INPUT_BYTES, MAX_PENDING_INPUTS, MAX_QUEUED_FRAME_BYTES, PASTE_CHUNK_CHARS,
    PENDING_INPUTS_RESUME,
};
use crate::browser::{bounded, BrowserError, BrowserRef, ViewState};

/// Close code for a protocol violation by the view.
const CLOSE_POLICY: u16 = 1008;
/// Close code when the browser was relaunched or closed.
const CLOSE_GOING_AWAY: u16 = 1001;
/// JPEG quality of screencast frames (0..=100).
const SCREENCAST_QUALITY: i64 = 80;
/// JPEG quality of crisp captures (0..=100).
const CRISP_QUALITY: i64 = 90;

enum Out {
    Text(String),
    Frame(Vec<u8>),
    Close(u16, String),
}

/// What the input worker and the reader tell the frame pump.
enum PumpCtl {
    /// Input reached the page: wait for quiet again before a crisp capture.
    Input,
    /// Take a capture now.
    Repaint,
}

/// Bytes of frames queued to the socket writer and not yet written: the latest-only rule.
#[derive(Clone, Default)]
struct FrameBudget(Arc<AtomicUsize>);

impl FrameBudget {
    /// Counts `n` more bytes unless more than [`MAX_QUEUED_FRAME_BYTES`] already wait;
    /// returns true if and only if they were counted.
    fn take(&self, n: usize) -> bool {
        if self.0.load(Ordering::SeqCst) > MAX_QUEUED_FRAME_BYTES {
            return false;
        }
        self.0.fetch_add(n, Ordering::SeqCst);
        true
    }

    /// `n` counted bytes were written (or will never be).
    fn release(&self, n: usize) {
        self.0.fetch_sub(n, Ordering::SeqCst);
    }
}

#[derive(Clone)]
struct Outbox {
    tx: mpsc::UnboundedSender<Out>,
    budget: FrameBudget,
}

impl Outbox {
    fn text(&self, s: String) {
        let _ = self.tx.send(Out::Text(s));
    }
    fn close(&self, code: u16, reason: &str) {
        let _ = self.tx.send(Out::Close(code, reason.to_string()));
    }
    /// Queues a frame unless more than [`MAX_QUEUED_FRAME_BYTES`] are already waiting;
    /// returns true if and only if it was queued.
    fn frame(&self, f: Vec<u8>) -> bool {
        let n = f.len();
        if !self.budget.take(n) {
            return false;
        }
        if self.tx.send(Out::Frame(f)).is_err() {
            self.budget.release(n);
            return false;
        }
        true
    }
}

/// Serves one viewer socket on `browser` until it ends.
pub async fn serve(ws: WebSocket, browser: BrowserRef) {
    let (mut sink, mut stream) = ws.split();
    let (tx, mut rx) = mpsc::unbounded_channel::<Out>();
    let out = Outbox { tx, budget: FrameBudget::default() };
    let budget = out.budget.clone();
    let mut writer = tokio::spawn(async move {
        while let Some(o) = rx.recv().await {
            let r = match o {
                Out::Text(s) => sink.send(Message::Text(Utf8Bytes::from(s))).await,
                Out::Frame(f) => {
                    let n = f.len();
                    let r = sink.send(Message::Binary(Bytes::from(f))).await;
                    budget.release(n);
                    r
                }
                Out::Close(code, reason) => {
                    let _ = sink.send(Message::Close(Some(CloseFrame { code, reason: Utf8Bytes::from(reason) }))).await;
                    return;
                }
            };
            if r.is_err() {
                return;
            }
        }
    });
    let views = browser.views();
    let (ctl_tx, ctl_rx) = mpsc::unbounded_channel::<PumpCtl>();
    let inputs = Arc::new(InputQueue::new());
    let scroll_out = out.clone();
    let (scroll, scroll_task) = super::scroll::follow(move |m| scroll_out.text(m));
    let tasks = [
        scroll_task,
        tokio::spawn(follow_state(browser.clone(), out.clone(), views)),
        tokio::spawn(pump(browser.clone(), out.clone(), ctl_rx, views, scroll)),
        tokio::spawn(input_worker(browser.clone(), out.clone(), inputs.clone(), ctl_tx.clone())),
        tokio::spawn(follow_agent(browser.clone(), out.clone())),
    ];
    let mut writer_done = false;
    let mut waiting = 0;
    loop {
        // Backpressure: past the high watermark the socket is not read until the inputs
        // drain (the view's sends queue up behind it), except while a dialog is pending: its
        // answer must get through, and the inputs wait for it anyway.
        if waiting > MAX_PENDING_INPUTS {
            let mut st = browser.subscribe();
            tokio::select! {
                _ = inputs.drained_to(PENDING_INPUTS_RESUME) => {}
                _ = st.wait_for(|s| s.dialog.is_some()) => {}
                _ = &mut writer => {
                    writer_done = true;
                    break;
                }
            }
        }
        let m = tokio::select! {
            m = stream.next() => m,
            _ = &mut writer => {
                writer_done = true;
                break;
            }
        };
        let text = match m {
            Some(Ok(Message::Text(t))) => t,
            Some(Ok(Message::Binary(_))) => {
                out.close(CLOSE_POLICY, "binary messages are not accepted");
                break;
            }
            Some(Ok(Message::Close(_))) | None | Some(Err(_)) => break,
            Some(Ok(_)) => continue,
        };
        match msg::parse(text.as_str()) {
            Err(reason) => {
                out.close(CLOSE_POLICY, &truncate(&reason, 120));
                break;
            }
            Ok(Inbound::Repaint) => {
                let _ = ctl_tx.send(PumpCtl::Repaint);
            }
            Ok(Inbound::Sync(vp)) => {
                if !browser.sync_to_pane(vp) {
                    out.text(msg::sync(crate::browser::SyncState::Off));
                }
            }
            // A barrier goes behind the inputs already queued, whatever the page's state
            // (with nothing to dispatch it is answered at once).
            Ok(Inbound::Flush(id)) => {
                waiting = inputs.push(Inbound::Flush(id));
            }
            // The popped-out window takes the user's input itself: a view's is ignored.
            Ok(_) if browser.popped_out() => {}
            // Input to a crashed page is dropped as it arrives, not when the worker reaches
            // it: queued, it would land on the page a Reload brings back (a click nobody aimed
            // at the new page).
            Ok(_) if browser.crashed() => {}
            Ok(Inbound::Dialog { accept, text }) => {
                // Not behind the inputs: the input that opened the dialog (a click whose
                // handler called alert()) waits on the dialog until it is answered.
                let (b, o) = (browser.clone(), out.clone());
                tokio::spawn(async move {
                    if let Err(e) = b.answer_dialog(accept, text).await {
                        o.text(msg::error(&e.to_string()));
                    }
                });
            }
            Ok(input) => {
                // Counted on arrival, before it waits behind other inputs: the human's press
                // ends an agent's action at once (DESIGN §12); the input itself still goes.
                if input.is_human_press() {
                    browser.presence().human_input();
                }
                waiting = inputs.push(input);
                if inputs.held_bytes() > MAX_HELD_INPUT_BYTES {
                    out.close(CLOSE_POLICY, "more than 32 MiB of input held behind a dialog");
                    break;
                }
            }
        }
    }
    // Let a queued close frame go out, bounded.
    if !writer_done {
        let _ = tokio::time::timeout(Duration::from_secs(2), &mut writer).await;
    }
    writer.abort();
    for t in tasks {
        t.abort();
    }
}

fn truncate(s: &str, max: usize) -> String {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_string()
}

/// Sends every state message to a new view, then each one whose content changed. Closes
/// the socket when the browser is relaunched or closed (its view epoch changes).
async fn follow_state(browser: BrowserRef, out: Outbox, views: u64) {
    let mut rx = browser.subscribe();
    let mut last: Option<ViewState> = None;
    loop {
        let st = rx.borrow_and_update().clone();
        if st.views != views {
            out.text(msg::status(false, false, st.viewport, st.popped_out, false));
            out.close(CLOSE_GOING_AWAY, "the browser was relaunched or closed");
            return;
        }
        let prev = last.as_ref();
        let status = |s: &ViewState| (s.connected, s.launching, s.viewport, s.popped_out, s.crashed);
        if prev.map(status) != Some(status(&st)) {
            out.text(msg::status(st.connected, st.launching, st.viewport, st.popped_out, st.crashed));
        }
        if prev.map(|p| (&p.tabs, &p.active)) != Some((&st.tabs, &st.active)) {
            out.text(msg::tabs(&st.tabs, st.active.as_deref()));
        }
        let active = |s: &ViewState| {
            s.active.as_ref().and_then(|a| s.tabs.iter().find(|t| &t.id == a)).map(|t| (t.url.clone(), t.title.clone()))
        };
        let now_url = active(&st);
        if prev.map(active) != Some(now_url.clone()) {
            if let Some((u, t)) = &now_url {
                out.text(msg::url(u, t));
            }
        }
        let load = |s: &ViewState| (s.loading, s.pending_url.clone());
        if prev.map(load) != Some(load(&st)) {
            out.text(msg::loading(st.loading, st.pending_url.as_deref()));
        }
        if prev.map(|p| &p.dialog) != Some(&st.dialog) {
            out.text(msg::dialog(st.dialog.as_ref()));
        }
        if prev.map(|p| p.sync) != Some(st.sync) {
            out.text(msg::sync(st.sync));
        }
        if prev.map(|p| &p.file_chooser) != Some(&st.file_chooser) {
            out.text(msg::file_chooser(st.file_chooser.as_ref()));
        }
        if prev.map(|p| &p.downloads) != Some(&st.downloads) {
            out.text(msg::downloads(&st.downloads));
        }
        if prev.map(|p| p.zoom) != Some(st.zoom) {
            out.text(msg::zoom(st.zoom));
        }
        last = Some(st);
        if rx.changed().await.is_err() {
            return;
        }
    }
}

/// Sends `agent` messages: the action running when the view connects (if any), then every
/// change of the agent's activity on this browser (protocol §8.4).
async fn follow_agent(browser: BrowserRef, out: Outbox) {
    let mut rx = browser.presence().activity();
    let now = browser.presence().current();
    if now.acting {
        out.text(msg::agent(&now));
    }
    while rx.changed().await.is_ok() {
        let a = rx.borrow_and_update().clone();
        out.text(msg::agent(&a));
    }
}

/// The frame pump: a CDP screencast of the active tab (provisional frames), and a crisp
/// capture after [`CRISP_QUIET_MS`] without frames or input. Restarts on a tab switch and
/// on a browser back from a pop-out (a fresh crisp capture first); idle while popped out.
async fn pump(
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

/// Inputs waiting past which typing is sent as text to catch up.
const COALESCE_WHEN_BEHIND: usize = 8;

/// True if and only if a JavaScript dialog is pending on the active tab.
fn dialog_blocks_active(s: &ViewState) -> bool {
    s.dialog.as_ref().is_some_and(|d| s.active.as_deref() == Some(d.tab.as_str()))
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

/// Script: the selected text (a focused text field's selection, else the document's);
/// `cut` also deletes it from an editable field.
fn edit_script(op: EditOp) -> &'static str {
    match op {
        EditOp::SelectAll => {
            r#"(() => { const a = document.activeElement;
  if (a && typeof a.select === 'function' && (a.tagName === 'INPUT' || a.tagName === 'TEXTAREA')) a.select();
  else document.execCommand('selectAll'); return null; })()"#
        }
        EditOp::Copy => {
            r#"(() => { const a = document.activeElement;
  if (a && (a.tagName === 'INPUT' || a.tagName === 'TEXTAREA') && typeof a.selectionStart === 'number')
    return a.value.slice(a.selectionStart, a.selectionEnd);
  return String(getSelection()); })()"#
        }
        EditOp::Cut => {
            r#"(() => { const a = document.activeElement;
  if (a && (a.tagName === 'INPUT' || a.tagName === 'TEXTAREA') && typeof a.selectionStart === 'number') {
    const t = a.value.slice(a.selectionStart, a.selectionEnd);
    if (t && !a.readOnly) document.execCommand('delete');
    return t; }
  const t = String(getSelection());
  if (t && document.activeElement && document.activeElement.isContentEditable) document.execCommand('delete');
  return t; })()"#
        }
    }
}

/// Applies inputs in order, each bounded; tells the pump that input happened.
async fn input_worker(browser: BrowserRef, out: Outbox, inputs: Arc<InputQueue>, ctl: mpsc::UnboundedSender<PumpCtl>) {
    let mut popups = Popups::default();
    let mut state = browser.subscribe();
    loop {
        let input = tokio::select! {
            i = inputs.pop() => i,
            Some(m) = popups.next() => {
                out.text(m);
                continue;
            }
        };
        // Every input before the barrier has been dispatched (or dropped): say so.
        if let Inbound::Flush(id) = input {
            out.text(msg::flushed(id));
            continue;
        }
        // A JavaScript dialog is modal: the page takes no input until it is answered (a
        // dispatch would only wait out the CDP bound and fail). Inputs wait for it, in order.
        if state.wait_for(|s| !dialog_blocks_active(s)).await.is_err() {
            return;
        }
        // A crashed page takes no input (each dispatch would wait out the CDP bound); the
        // view shows it crashed and offers Reload.
        if state.borrow().crashed {
            continue;
        }
        // Behind CDP, typing catches up as text (see `InputQueue::take_text_run`).
        let r = match inputs.take_text_run(&input, COALESCE_WHEN_BEHIND) {
            Some((text, last_move)) => {
                let r = apply(&browser, &out, Inbound::Text(text), &mut popups).await;
                match last_move {
                    Some(m) if r.is_ok() => apply(&browser, &out, m, &mut popups).await,
                    _ => r,
                }
            }
            None => apply(&browser, &out, input, &mut popups).await,
        };
        if let Err(e) = r {
            tracing::debug!("viewer input: {e}");
            if !matches!(e, BrowserError::Busy | BrowserError::Disconnected) {
                out.text(msg::error(&e.to_string()));
            }
        }
        let _ = ctl.send(PumpCtl::Input);
    }
}

async fn apply(browser: &BrowserRef, out: &Outbox, input: Inbound, popups: &mut Popups) -> Result<(), BrowserError> {
    match input {
        Inbound::Mouse { event, x, y, button, clicks, modifiers, delta_x, delta_y } => {
            let page = browser.active_page()?;
            // The `<select>` probe must be in the page before a press can reach a select;
            // after the first press in a tab this costs nothing.
            if event == MouseEvent::Down && button == MouseButton::Left {
                if let Err(e) = popups.ensure(&page).await {
                    tracing::debug!("popup probe: {e}");
                }
            }
            if matches!(event, MouseEvent::Down | MouseEvent::Up) {
                popups.pointer(event == MouseEvent::Down, x, y);
            }
            let kind = match event {
                MouseEvent::Down => DispatchMouseEventType::MousePressed,
                MouseEvent::Up => DispatchMouseEventType::MouseReleased,
                MouseEvent::Move => DispatchMouseEventType::MouseMoved,
                MouseEvent::Wheel => DispatchMouseEventType::MouseWheel,
            };
            let mut p = DispatchMouseEventParams::new(kind, x, y);
            p.modifiers = Some(modifiers);
            p.button = Some(match button {
                MouseButton::None => CdpButton::None,
                MouseButton::Left => CdpButton::Left,
                MouseButton::Middle => CdpButton::Middle,
                MouseButton::Right => CdpButton::Right,
                MouseButton::Back => CdpButton::Back,
                MouseButton::Forward => CdpButton::Forward,
            });
            p.click_count = Some(clicks);
            if event == MouseEvent::Wheel {
                p.delta_x = Some(delta_x);
                p.delta_y = Some(delta_y);
            }
            browser.dispatch_input(bounded("Input.dispatchMouseEvent", page.execute(p))).await?;
        }
        Inbound::Key { event, key, code, text, modifiers } => {
            let page = browser.active_page()?;
            // Enter must be a keyDown carrying "\r", or forms are not submitted.
            let text = if key == "Enter" && modifiers & 0b0111 == 0 { "\r".to_string() } else { text };
            let kind = match event {
                KeyEvent::Down if !text.is_empty() => DispatchKeyEventType::KeyDown,
                KeyEvent::Down => DispatchKeyEventType::RawKeyDown,
                KeyEvent::Up => DispatchKeyEventType::KeyUp,
            };
            let mut p = DispatchKeyEventParams::new(kind);
            p.windows_virtual_key_code = Some(virtual_key_code(&code, &key));
            p.modifiers = Some(modifiers);
            if event == KeyEvent::Down {
                p.unmodified_text = Some(text.clone());
                p.text = Some(text);
            }
            p.key = Some(key);
            p.code = Some(code);
            browser.dispatch_input(bounded("Input.dispatchKeyEvent", page.execute(p))).await?;
        }
        Inbound::Text(text) => {
            let page = browser.active_page()?;
            let chars: Vec<char> = text.chars().collect();
            for chunk in chars.chunks(PASTE_CHUNK_CHARS) {
                let s: String = chunk.iter().collect();
                browser.dispatch_input(bounded("Input.insertText", page.execute(InsertTextParams::new(s)))).await?;
            }
        }
        Inbound::PopupChoice(i) => popups.choose(&browser.active_page()?, i).await?,
        Inbound::PopupValue(v) => popups.set_value(&browser.active_page()?, &v).await?,
        Inbound::Zoom(f) => browser.set_zoom(f).await?,
        Inbound::Inspect { x, y } => out.text(super::inspect::inspect(&browser.active_page()?, x, y).await?),
        Inbound::Find { text, backwards, next } => {
            out.text(super::find::find(&browser.active_page()?, &text, backwards, next).await?)
        }
        Inbound::Edit(op) => {
            let v = browser.eval(edit_script(op).to_string()).await?;
            if op != EditOp::SelectAll {
                out.text(msg::clipboard(v.as_str().unwrap_or("")));
            }
        }
        Inbound::Dialog { .. } | Inbound::Sync(_) | Inbound::Repaint | Inbound::Flush(_) => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outbox() -> (Outbox, mpsc::UnboundedReceiver<Out>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (Outbox { tx, budget: FrameBudget::default() }, rx)
    }

    fn queued_frames(rx: &mut mpsc::UnboundedReceiver<Out>) -> Vec<Vec<u8>> {
        let mut v = Vec::new();
        while let Ok(o) = rx.try_recv() {
            if let Out::Frame(f) = o {
                v.push(f);
            }
        }
        v
    }

    #[test]
    fn a_frame_is_dropped_while_more_than_2_mb_of_frames_wait_and_queued_again_once_written() {
        let (out, mut rx) = outbox();
        // A real frame of 2 MB of JPEG payload: header + 2_000_000 bytes waits unwritten.
        let mut jpeg = vec![0x5A; MAX_QUEUED_FRAME_BYTES];
        jpeg[..2].copy_from_slice(&[0xFF, 0xD8]);
        let big = msg::frame(1, 1280, 800, 1.0, false, &jpeg);
        assert!(big.len() > MAX_QUEUED_FRAME_BYTES);
        assert!(out.frame(big.clone()), "an empty queue takes any frame");
        let small = msg::frame(2, 1280, 800, 1.0, false, &[0xFF, 0xD8, 0xFF, 0xD9]);
        assert!(!out.frame(small.clone()), "dropped while more than 2 MB wait");
        assert_eq!(queued_frames(&mut rx), vec![big.clone()], "the dropped frame was never queued");
        // The writer wrote the big one: the next frame goes.
        out.budget.release(big.len());
        assert!(out.frame(small.clone()));
        assert_eq!(queued_frames(&mut rx), vec![small]);
    }

    #[test]
    fn exactly_2_mb_waiting_does_not_drop_one_byte_more_does() {
        let (out, mut rx) = outbox();
        let f = |n: usize| vec![0u8; n];
        assert!(out.frame(f(MAX_QUEUED_FRAME_BYTES)));
        assert!(out.frame(f(1)), "2 MB waiting is not more than 2 MB");
        assert!(!out.frame(f(1)));
        assert_eq!(queued_frames(&mut rx).len(), 2);
    }

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

    #[test]
    fn a_frame_for_a_closed_socket_is_not_counted() {
        let (out, rx) = outbox();
        drop(rx);
        assert!(!out.frame(vec![0u8; 10]));
        assert!(out.budget.take(0));
        assert_eq!(out.budget.0.load(Ordering::SeqCst), 0);
    }
}
