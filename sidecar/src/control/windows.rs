//! Attached windows (the UI channel, protocol §10): which one answers, the report each
//! keeps, browser handles, and relaying layout requests to the answering window. What a
//! report may say, and its parsing, is `report.rs`.
//!
//! The answering window is the one that attached, or said it was focused or used, last.
//! Its latest report is also kept after it detaches, so `list` and target resolution work
//! without a window.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::Instant;

use super::error::ControlError;
use super::handle::{Handle, PaneKind};
use super::report::{parse_message, BadUiMessage, Inbound, WindowState};

/// How long a layout verb waits for a window to (re)attach: a reload takes about a second.
pub const WINDOW_GRACE: Duration = Duration::from_secs(3);
/// The bound on one relayed request, retries included.
pub const RELAY_TOTAL: Duration = Duration::from_secs(15);
/// A window's answer to a request.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// Applied; the new or acted-on pane's UI id.
    Ok(String),
    /// Refused, with the window's code (when it gave one) and reason.
    Refused(Option<String>, String),
}

struct Win {
    tx: mpsc::UnboundedSender<String>,
    state: Option<WindowState>,
    /// `Inner::stamp` when it attached or was last active; the highest answers.
    active: u64,
}

#[derive(Default)]
struct Inner {
    windows: BTreeMap<u64, Win>,
    next_window: u64,
    stamp: u64,
    /// The answering window's latest report, kept after it goes.
    last_state: WindowState,
    pending: HashMap<u64, (u64, oneshot::Sender<Reply>)>,
    next_request: u64,
    /// Handles given to browser panes, by UI id.
    browser_handles: HashMap<String, Handle>,
    next_browser: u64,
}

impl Inner {
    fn answerer(&self) -> Option<u64> {
        self.windows.iter().max_by_key(|(_, w)| w.active).map(|(id, _)| *id)
    }

    /// Keeps `last_state` equal to the answering window's report.
    fn follow_answerer(&mut self) {
        if let Some(s) = self.answerer().and_then(|id| self.windows.get(&id)).and_then(|w| w.state.clone()) {
            self.last_state = s;
        }
    }
}

/// Every attached window. Owned by [`super::Control`].
pub struct Windows {
    inner: Mutex<Inner>,
    /// Bumped on every attach, detach, report and activity: relays wait on it.
    changed: watch::Sender<u64>,
}

impl Default for Windows {
    fn default() -> Self {
        Windows { inner: Mutex::new(Inner::default()), changed: watch::channel(0).0 }
    }
}

impl Windows {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn bump(&self) {
        self.changed.send_modify(|n| *n += 1);
    }

    /// Attaches a window: it becomes the answering one. Returns its id and the messages to
    /// send it.
    pub fn attach(&self) -> (u64, mpsc::UnboundedReceiver<String>) {
        let (tx, rx) = mpsc::unbounded_channel();
        let id = {
            let mut inner = self.lock();
            inner.next_window += 1;
            inner.stamp += 1;
            let (id, active) = (inner.next_window, inner.stamp);
            inner.windows.insert(id, Win { tx, state: None, active });
            id
        };
        self.bump();
        (id, rx)
    }

    /// Detaches window `id`: its unanswered requests see the window go (the relay then waits
    /// for another). Idempotent.
    pub fn detach(&self, id: u64) {
        {
            let mut inner = self.lock();
            inner.windows.remove(&id);
            inner.pending.retain(|_, (w, _)| *w != id);
            inner.follow_answerer();
        }
        self.bump();
    }

    /// Handles one text message from window `id`. An error is the reason to close its socket
    /// (1008); nothing of the message was applied then.
    pub fn on_message(&self, id: u64, text: &str) -> Result<(), BadUiMessage> {
        let Some(msg) = parse_message(text)? else { return Ok(()) };
        match msg {
            Inbound::State { active, state } => self.apply_state(id, state, active),
            Inbound::Active => {
                let mut inner = self.lock();
                inner.stamp += 1;
                let stamp = inner.stamp;
                if let Some(w) = inner.windows.get_mut(&id) {
                    w.active = stamp;
                }
                inner.follow_answerer();
            }
            Inbound::Reply { id: rid, ok, pane, message, code } => {
                let mut inner = self.lock();
                if inner.pending.get(&rid).is_some_and(|(w, _)| *w == id) {
                    let (_, tx) = inner.pending.remove(&rid).expect("checked above");
                    let reply = if ok {
                        Reply::Ok(pane.unwrap_or_default())
                    } else {
                        let m = message.unwrap_or_else(|| "the window refused".into());
                        Reply::Refused(code, m.chars().take(1024).collect())
                    };
                    let _ = tx.send(reply);
                }
            }
        }
        self.bump();
        Ok(())
    }

    /// Stores a report, giving handles to browser panes reported without one (and telling
    /// the window).
    fn apply_state(&self, id: u64, mut state: WindowState, active: bool) {
        let mut inner = self.lock();
        let mut assigned = serde_json::Map::new();
        for p in state.panes.iter_mut() {
            if p.kind != PaneKind::Browser {
                continue;
            }
            match p.handle {
                Some(h) => {
                    inner.browser_handles.entry(p.id.clone()).or_insert(h);
                    inner.next_browser = inner.next_browser.max(h.n);
                }
                None => {
                    let h = match inner.browser_handles.get(&p.id) {
                        Some(h) => *h,
                        None => {
                            inner.next_browser += 1;
                            let h = Handle { kind: PaneKind::Browser, n: inner.next_browser };
                            inner.browser_handles.insert(p.id.clone(), h);
                            h
                        }
                    };
                    p.handle = Some(h);
                    assigned.insert(p.id.clone(), serde_json::Value::String(h.to_string()));
                }
            }
        }
        if active {
            inner.stamp += 1;
        }
        let stamp = inner.stamp;
        if let Some(w) = inner.windows.get_mut(&id) {
            w.state = Some(state);
            if active {
                w.active = stamp;
            }
            if !assigned.is_empty() {
                let msg = serde_json::json!({"type": "handles", "assign": assigned});
                let _ = w.tx.send(msg.to_string());
            }
        }
        inner.follow_answerer();
    }

    /// Sends `msg` (a JSON object with its `type`; protocol §10) to the answering window
    /// without waiting for an answer. Returns whether a window took it.
    pub fn tell(&self, msg: &serde_json::Value) -> bool {
        let inner = self.lock();
        let Some(w) = inner.answerer().and_then(|id| inner.windows.get(&id)) else { return false };
        w.tx.send(msg.to_string()).is_ok()
    }

    /// A fresh browser handle, for a pane the sidecar asks a window to open.
    pub fn new_browser_handle(&self) -> Handle {
        let mut inner = self.lock();
        inner.next_browser += 1;
        Handle { kind: PaneKind::Browser, n: inner.next_browser }
    }

    /// The answering window's latest report (or the last one kept), and whether a window is
    /// attached now.
    pub fn state(&self) -> (WindowState, bool) {
        let inner = self.lock();
        (inner.last_state.clone(), !inner.windows.is_empty())
    }

    /// The answering window and its report, once it has reported.
    fn answering(&self) -> Option<(u64, WindowState)> {
        let inner = self.lock();
        let id = inner.answerer()?;
        Some((id, inner.windows.get(&id)?.state.clone()?))
    }

    /// Waits at most `within` until the answering window's report (or the last one kept)
    /// gives `f` something; `None` when it never did.
    pub async fn wait_report<T>(&self, within: Duration, f: impl Fn(&WindowState) -> Option<T>) -> Option<T> {
        let until = Instant::now() + within;
        let mut rx = self.changed.subscribe();
        loop {
            if let Some(v) = f(&self.state().0) {
                return Some(v);
            }
            match tokio::time::timeout_at(until, rx.changed()).await {
                Ok(Ok(())) => continue,
                _ => return None,
            }
        }
    }

    /// Waits until an answering window has reported, or `until`.
    async fn wait_answering(&self, until: Instant) -> Option<(u64, WindowState)> {
        let mut rx = self.changed.subscribe();
        loop {
            if let Some(a) = self.answering() {
                return Some(a);
            }
            match tokio::time::timeout_at(until, rx.changed()).await {
                Ok(Ok(())) => continue,
                _ => return None,
            }
        }
    }

    /// Relays one layout request to the answering window (protocol §9.6) and returns the
    /// acted-on pane's UI id. `build` makes the request (without `type`/`id`) from the
    /// window's report (it may refuse); `effect` tells whether a window's report already
    /// shows the change (after the window that took the request went away).
    ///
    /// Errors: `no_window` when no window reports within [`WINDOW_GRACE`]; `refused` with
    /// the window's reason; `unverified` when the window vanished and no later window shows
    /// the effect, or nothing answered within [`RELAY_TOTAL`].
    pub async fn relay(
        &self,
        build: impl Fn(&WindowState) -> Result<serde_json::Value, ControlError>,
        effect: impl Fn(&WindowState) -> Option<String>,
    ) -> Result<String, ControlError> {
        self.relay_within(RELAY_TOTAL, build, effect).await
    }

    /// [`Windows::relay`] bounded by `total` instead of [`RELAY_TOTAL`] (a request whose
    /// window work has a bound of its own: `workspace` connecting a remote).
    ///
    /// Errors: as [`Windows::relay`]; a refusal whose code the window gave is
    /// [`ControlError::from_window`]'s.
    pub async fn relay_within(
        &self,
        total: Duration,
        build: impl Fn(&WindowState) -> Result<serde_json::Value, ControlError>,
        effect: impl Fn(&WindowState) -> Option<String>,
    ) -> Result<String, ControlError> {
        let deadline = Instant::now() + total;
        let mut delivered = false;
        loop {
            let until = (Instant::now() + WINDOW_GRACE).min(deadline);
            let Some((win, state)) = self.wait_answering(until).await else {
                return Err(if delivered {
                    ControlError::Unverified(
                        "the window went away before answering, and no window shows the change; check with 'ph list'"
                            .into(),
                    )
                } else {
                    ControlError::NoWindow
                });
            };
            if delivered {
                if let Some(pane) = effect(&state) {
                    return Ok(pane);
                }
            }
            let mut msg = build(&state)?;
            let (tx, rx) = oneshot::channel();
            let sent = {
                let mut inner = self.lock();
                inner.next_request += 1;
                let rid = inner.next_request;
                msg["type"] = "request".into();
                msg["id"] = rid.into();
                let ok = inner.windows.get(&win).is_some_and(|w| w.tx.send(msg.to_string()).is_ok());
                if ok {
                    inner.pending.insert(rid, (win, tx));
                }
                ok.then_some(rid)
            };
            let Some(rid) = sent else { continue };
            delivered = true;
            match tokio::time::timeout_at(deadline, rx).await {
                Ok(Ok(Reply::Ok(pane))) => return Ok(pane),
                Ok(Ok(Reply::Refused(code, m))) => return Err(ControlError::from_window(code.as_deref(), m)),
                Ok(Err(_)) => continue, // the window went away: wait for the next one
                Err(_) => {
                    self.lock().pending.remove(&rid);
                    return Err(ControlError::Unverified(format!(
                        "the window did not answer within {} s; check with 'ph list'",
                        total.as_secs()
                    )));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state_msg(active: bool, panes: &str) -> String {
        format!(r#"{{"type":"state","active":{active},"focused":"p1","panes":[{panes}]}}"#)
    }

    const TERM: &str = r#"{"id":"p1","handle":"t1","kind":"terminal","terminal":"t1","title":"bash","url":null,"mode":null,"minimized":false}"#;
    const BROWSER: &str = r#"{"id":"p2","handle":null,"kind":"browser","terminal":null,"title":"","url":"http://localhost:8000/","mode":"iframe","minimized":false}"#;

    #[test]
    fn browser_panes_get_a_handle_once_and_the_window_is_told() {
        let w = Windows::default();
        let (id, mut rx) = w.attach();
        w.on_message(id, &state_msg(true, &format!("{TERM},{BROWSER}"))).unwrap();
        let told: serde_json::Value = serde_json::from_str(&rx.try_recv().unwrap()).unwrap();
        assert_eq!(told, serde_json::json!({"type":"handles","assign":{"p2":"b1"}}));
        // Reported again without the handle (the window had not applied it yet): same handle.
        w.on_message(id, &state_msg(true, &format!("{TERM},{BROWSER}"))).unwrap();
        let again: serde_json::Value = serde_json::from_str(&rx.try_recv().unwrap()).unwrap();
        assert_eq!(again["assign"]["p2"], "b1");
        let (s, attached) = w.state();
        assert!(attached);
        assert_eq!(s.panes[1].handle.unwrap().to_string(), "b1");
        assert_eq!(w.new_browser_handle().to_string(), "b2", "never reused");
    }

    #[test]
    fn malformed_reports_are_refused_whole() {
        let w = Windows::default();
        let (id, _rx) = w.attach();
        for bad in [
            "not json".to_string(),
            state_msg(true, r#"{"id":"p1","handle":"b1","kind":"terminal","terminal":null,"url":null,"mode":null}"#),
            state_msg(true, r#"{"id":"p1","handle":null,"kind":"fridge","terminal":null,"url":null,"mode":null}"#),
            state_msg(true, r#"{"id":"p1","handle":null,"kind":"browser","terminal":null,"url":null,"mode":"tv"}"#),
            state_msg(true, r#"{"id":"","handle":null,"kind":"browser","terminal":null,"url":null,"mode":null}"#),
            state_msg(
                true,
                r#"{"id":"p1","handle":null,"kind":"browser","terminal":null,"url":null,"mode":null,"workspace":0}"#,
            ),
            state_msg(
                true,
                r#"{"id":"p1","handle":null,"kind":"browser","terminal":null,"url":null,"mode":null,"workspace":1001}"#,
            ),
            state_msg(
                true,
                r#"{"id":"p1","handle":null,"kind":"browser","terminal":null,"url":null,"mode":null,"workspace":"2"}"#,
            ),
            state_msg(
                true,
                r#"{"id":"p1","handle":null,"kind":"browser","terminal":null,"url":null,"mode":"screencast","browser":"x1"}"#,
            ),
            state_msg(
                true,
                r#"{"id":"p1","handle":null,"kind":"browser","terminal":null,"url":null,"mode":"screencast","browser":"b"}"#,
            ),
            state_msg(
                true,
                r#"{"id":"p1","handle":"t1","kind":"terminal","terminal":null,"url":null,"mode":null,"browser":"b1"}"#,
            ),
        ] {
            assert!(w.on_message(id, &bad).is_err(), "{bad}");
        }
        assert!(w.state().0.panes.is_empty());
        assert!(w.on_message(id, r#"{"type":"future_thing","x":1}"#).is_ok(), "unknown types are ignored");
        let ok = r#"{"id":"p1","handle":null,"kind":"browser","terminal":null,"url":null,"mode":"screencast","browser":"b12"}"#;
        w.on_message(id, &state_msg(true, ok)).unwrap();
        assert_eq!(w.state().0.panes[0].browser.as_deref(), Some("b12"));
    }

    #[test]
    fn the_last_active_window_answers_and_its_report_is_kept() {
        let w = Windows::default();
        let (a, _ra) = w.attach();
        w.on_message(a, &state_msg(false, TERM)).unwrap();
        let (b, _rb) = w.attach();
        w.on_message(b, &state_msg(false, "")).unwrap();
        assert!(w.state().0.panes.is_empty(), "b attached last: it answers");
        w.on_message(a, r#"{"type":"active"}"#).unwrap();
        assert_eq!(w.state().0.panes.len(), 1, "a was used last");
        w.detach(b);
        w.detach(a);
        let (s, attached) = w.state();
        assert!(!attached);
        assert_eq!(s.panes.len(), 1, "kept after the window went");
    }

    #[test]
    fn tell_goes_to_the_answering_window_only() {
        let w = Windows::default();
        assert!(!w.tell(&serde_json::json!({"type":"project_trust"})), "no window: nobody told");
        let (a, mut rx_a) = w.attach();
        let (b, mut rx_b) = w.attach();
        w.on_message(a, &state_msg(true, TERM)).unwrap();
        w.on_message(b, &state_msg(false, TERM)).unwrap();
        w.on_message(a, r#"{"type":"active"}"#).unwrap();
        while rx_a.try_recv().is_ok() {}
        while rx_b.try_recv().is_ok() {}
        assert!(w.tell(&serde_json::json!({"type":"project_trust","file":"/p/.porthole.toml"})));
        let told: serde_json::Value = serde_json::from_str(&rx_a.try_recv().unwrap()).unwrap();
        assert_eq!(told["file"], "/p/.porthole.toml");
        assert!(rx_b.try_recv().is_err(), "the other window is not asked");
    }

    #[tokio::test]
    async fn relay_delivers_and_returns_the_reply() {
        let w = std::sync::Arc::new(Windows::default());
        let (id, mut rx) = w.attach();
        w.on_message(id, &state_msg(true, TERM)).unwrap();
        let w2 = w.clone();
        let ui = tokio::spawn(async move {
            let req: serde_json::Value = serde_json::from_str(&rx.recv().await.unwrap()).unwrap();
            assert_eq!(req["type"], "request");
            assert_eq!(req["verb"], "pane");
            let reply =
                serde_json::json!({"type":"reply","id":req["id"],"ok":false,"code":"refused","message":"too small"});
            w2.on_message(id, &reply.to_string()).unwrap();
        });
        let r = w.relay(|_| Ok(serde_json::json!({"verb":"pane"})), |_| None).await;
        assert_eq!(r, Err(ControlError::Refused("too small".into())));
        ui.await.unwrap();
    }

    #[tokio::test]
    async fn a_refusal_with_a_links_code_keeps_it_and_any_other_code_is_refused() {
        let w = std::sync::Arc::new(Windows::default());
        let (id, mut rx) = w.attach();
        w.on_message(id, &state_msg(true, TERM)).unwrap();
        let w2 = w.clone();
        let ui = tokio::spawn(async move {
            for code in ["host_key", "made_up"] {
                let req: serde_json::Value = serde_json::from_str(&rx.recv().await.unwrap()).unwrap();
                let reply = serde_json::json!({"type":"reply","id":req["id"],"ok":false,"code":code,"message":"no"});
                w2.on_message(id, &reply.to_string()).unwrap();
            }
        });
        let ask = || w.relay_within(Duration::from_secs(5), |_| Ok(serde_json::json!({"verb":"workspace"})), |_| None);
        let e = ask().await.unwrap_err();
        assert_eq!(e, ControlError::Remote { status: 409, code: "host_key", message: "no".into() });
        assert_eq!(e.status_and_code(), (409, "host_key"));
        assert_eq!(ask().await, Err(ControlError::Refused("no".into())));
        ui.await.unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn relay_without_a_window_is_no_window_after_the_grace() {
        let w = Windows::default();
        let r = w.relay(|_| Ok(serde_json::json!({"verb":"pane"})), |_| None).await;
        assert_eq!(r, Err(ControlError::NoWindow));
    }

    #[tokio::test]
    async fn relay_survives_a_reload_by_checking_the_new_windows_report() {
        let w = std::sync::Arc::new(Windows::default());
        let (a, mut ra) = w.attach();
        w.on_message(a, &state_msg(true, "")).unwrap();
        let w2 = w.clone();
        let ui = tokio::spawn(async move {
            let _req = ra.recv().await.unwrap();
            // The window reloads before answering; the new one already shows the pane.
            w2.detach(a);
            let (b, _rb) = w2.attach();
            w2.on_message(b, &state_msg(true, TERM)).unwrap();
            _rb
        });
        let r = w
            .relay(
                |_| Ok(serde_json::json!({"verb":"split"})),
                |s| {
                    s.panes
                        .iter()
                        .find(|p| p.terminal.map(|t| t.to_string()) == Some("t1".into()))
                        .map(|p| p.id.clone())
                },
            )
            .await;
        assert_eq!(r, Ok("p1".into()));
        drop(ui.await.unwrap());
    }
}
