//! One viewer socket: the reader (backpressure, dispatch of the view's messages), the
//! writer, the state and agent followers, the frame pump (`pump.rs`) and the input worker
//! (`dispatch.rs`), joined by channels. Ends when the view hangs up, a send fails, or the browser is
//! relaunched or closed; a pop-out or pop-in keeps it (no frames, inputs ignored while
//! popped out).

use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket};
use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use tokio::sync::mpsc;

use super::dispatch::input_worker;
use super::inputs::InputQueue;
use super::msg::{self, Inbound};
use super::outbox::{FrameBudget, Out, Outbox};
use super::pump::{pump, PumpCtl};
use super::{MAX_HELD_INPUT_BYTES, MAX_PENDING_INPUTS, PENDING_INPUTS_RESUME};
use crate::browser::{BrowserRef, ViewState};

/// Close code for a protocol violation by the view.
const CLOSE_POLICY: u16 = 1008;
/// Close code when the browser was relaunched or closed.
const CLOSE_GOING_AWAY: u16 = 1001;

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
                tracing::debug!(code = reason.code(), "viewer message refused: {reason}");
                out.close(CLOSE_POLICY, &truncate(&reason.to_string(), 120));
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
