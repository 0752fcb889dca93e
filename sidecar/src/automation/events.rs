//! Each tab's event log (issue 25 items 4 and 8): `ph browser events`, `wait --event` and the
//! watchdog. A bounded ring per tab, numbered from the tab's start, fed from two places:
//!
//! - the page's own CDP events (one listener task per attached page): its main frame's
//!   navigations and loads, its dialogs, console errors and uncaught exceptions, failed
//!   requests and answers of 400 and above, and the watchdog's `stalled_navigation`;
//! - the browser's published [`ViewState`] (one watcher task per browser launch): tabs
//!   opened, closed and made active, downloads (followed by `browser::slot::files`, not here),
//!   a crashed renderer and a lost Chromium. These concern the whole browser, so each is
//!   written to every open tab's log (a popup's `tab` event is then in the opener's log and in
//!   the popup's own).
//!
//! At most [`MAX_EVENTS`] per tab (the oldest dropped and counted), each detail cut to
//! [`super::logs::MAX_TEXT_BYTES`]; at most [`super::logs::MAX_TABS`] tabs are remembered.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use chromiumoxide::cdp::browser_protocol::network::{
    EventLoadingFailed, EventRequestWillBeSent, EventResponseReceived, ResourceType,
};
use chromiumoxide::cdp::browser_protocol::page::{
    EventDomContentEventFired, EventJavascriptDialogClosed, EventJavascriptDialogOpening, EventLoadEventFired,
};
use chromiumoxide::cdp::js_protocol::runtime::{EventConsoleApiCalled, EventExceptionThrown};
use chromiumoxide::Page;
use futures_util::StreamExt;
use serde::Serialize;
use serde_json::{json, Value};
use tokio::sync::watch;

use super::logs::{clipped, from_call, from_exception, Level, MAX_TABS};
use crate::browser::{bounded, DownloadState, ViewState};

/// Events kept per tab.
pub const MAX_EVENTS: usize = 1000;
/// A navigation with no `DOMContentLoaded` this long after it started is reported as
/// `stalled_navigation`, in milliseconds.
pub const STALL_MS: u64 = 30_000;
/// Test-only: overrides [`STALL_MS`] (a test cannot wait 30 s for a stall).
pub const ENV_TEST_STALL_MS: &str = "PORTHOLE_STALL_MS";
/// A running download's progress is logged at most this often, in milliseconds.
pub const PROGRESS_EVERY_MS: u64 = 1000;
/// How long the `unresponsive` check waits for the page's renderer, in milliseconds.
pub const RESPONSIVE_MS: u64 = 2000;
/// Every event kind, as `wait --event` takes them.
pub const KINDS: &[&str] = &[
    "navigation",
    "load",
    "tab",
    "dialog",
    "download",
    "console_error",
    "request_failed",
    "crash",
    "disconnect",
    "stalled_navigation",
    "unresponsive",
    "not_painting",
];

/// One event of a tab.
#[derive(Debug, Clone, Serialize)]
pub struct Event {
    /// Its number in the tab's log: 1 for the tab's first, one more for each next.
    pub seq: u64,
    /// When it was logged, in ms since the epoch.
    pub time_ms: u64,
    /// One of [`KINDS`].
    pub kind: &'static str,
    /// What happened, in one line (`to http://…`, `started report.csv`, …).
    pub detail: String,
    /// The same, typed (`url`, `tab`, `name`, `path`, `status`, …; `{}` when nothing more).
    pub data: Value,
}

#[derive(Default)]
struct TabEvents {
    ring: VecDeque<Event>,
    /// The seq the next event gets, less one.
    last: u64,
    dropped: u64,
}

impl TabEvents {
    fn push(&mut self, kind: &'static str, detail: &str, data: Value) -> u64 {
        if self.ring.len() >= MAX_EVENTS {
            self.ring.pop_front();
            self.dropped += 1;
        }
        self.last += 1;
        let time_ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis());
        self.ring.push_back(Event { seq: self.last, time_ms: time_ms as u64, kind, detail: clipped(detail), data });
        self.last
    }
}

#[derive(Default)]
struct Store {
    /// Keys in the order their tabs were first seen.
    order: VecDeque<String>,
    tabs: HashMap<String, TabEvents>,
}

/// Watchdog lines not yet said in a verb's answer, per browser id (process-wide: the API
/// adds them to whatever verb answers next, [`take_notes`]).
static NOTES: std::sync::LazyLock<Mutex<HashMap<String, Vec<String>>>> = std::sync::LazyLock::new(Mutex::default);

/// Most watchdog lines kept per browser until a verb says them.
const MAX_NOTES: usize = 8;

/// The watchdog lines of browser `browser` not yet said (each is said once).
pub fn take_notes(browser: &str) -> Vec<String> {
    NOTES.lock().unwrap_or_else(|p| p.into_inner()).remove(browser).unwrap_or_default()
}

impl Store {
    fn open(&mut self, k: &str) -> &mut TabEvents {
        if !self.tabs.contains_key(k) {
            while self.order.len() >= MAX_TABS {
                if let Some(old) = self.order.pop_front() {
                    self.tabs.remove(&old);
                }
            }
            self.order.push_back(k.to_string());
        }
        self.tabs.entry(k.to_string()).or_default()
    }
}

/// Every tab's events.
pub struct Events {
    store: Arc<Mutex<Store>>,
    /// Bumped at every event: waiters wake and look.
    bell: watch::Sender<u64>,
    /// The browser launches (`browser/generation`) whose view is watched.
    watched: Arc<Mutex<HashSet<String>>>,
}

impl Default for Events {
    fn default() -> Self {
        Events { store: Arc::default(), bell: watch::channel(0).0, watched: Arc::default() }
    }
}

fn key(browser: &str, generation: u64, tab: &str) -> String {
    format!("{browser}/{generation}/{tab}")
}

/// What a tab's log holds after a seq.
pub struct View {
    /// Oldest first.
    pub events: Vec<Event>,
    /// The seq of the tab's latest event (0 for none yet).
    pub last: u64,
    /// The seqs asked for but dropped from the ring: `(first, last)`.
    pub dropped: Option<(u64, u64)>,
}

/// Where events are written: the store and the bell, held weakly by the tasks that feed it
/// (they end once the sidecar's state is gone).
#[derive(Clone)]
struct Sink {
    store: Weak<Mutex<Store>>,
    bell: watch::Sender<u64>,
}

impl Sink {
    /// Logs an event in tab `k`; false once the store is gone.
    fn push(&self, k: &str, kind: &'static str, detail: &str, data: Value) -> bool {
        let Some(store) = self.store.upgrade() else { return false };
        store.lock().unwrap_or_else(|p| p.into_inner()).open(k).push(kind, detail, data);
        self.bell.send_modify(|n| *n += 1);
        true
    }

    /// Logs an event in every tab of `keys`.
    fn push_all(&self, keys: &[String], kind: &'static str, detail: &str, data: Value) -> bool {
        let Some(store) = self.store.upgrade() else { return false };
        {
            let mut s = store.lock().unwrap_or_else(|p| p.into_inner());
            for k in keys {
                s.open(k).push(kind, detail, data.clone());
            }
        }
        self.bell.send_modify(|n| *n += 1);
        true
    }

    /// Keeps a watchdog line for browser `browser`'s next verb answer.
    fn note(&self, browser: &str, line: String) {
        let mut n = NOTES.lock().unwrap_or_else(|p| p.into_inner());
        let v = n.entry(browser.to_string()).or_default();
        if v.len() < MAX_NOTES {
            v.push(line);
        }
    }
}

/// The stall bound: [`STALL_MS`], or the test-only [`ENV_TEST_STALL_MS`].
fn stall_bound() -> Duration {
    let ms = std::env::var(ENV_TEST_STALL_MS).ok().and_then(|v| v.parse().ok()).unwrap_or(STALL_MS);
    Duration::from_millis(ms.max(1))
}

impl Events {
    fn sink(&self) -> Sink {
        Sink { store: Arc::downgrade(&self.store), bell: self.bell.clone() }
    }

    /// Tab `tab`'s events after seq `since`, waiting up to `wait` for one when there is none
    /// yet (a long poll).
    pub async fn after(&self, browser: &str, generation: u64, tab: &str, since: u64, wait: Duration) -> View {
        let k = key(browser, generation, tab);
        let deadline = tokio::time::Instant::now() + wait;
        let mut rx = self.bell.subscribe();
        loop {
            rx.borrow_and_update();
            let v = {
                let s = self.store.lock().unwrap_or_else(|p| p.into_inner());
                match s.tabs.get(&k) {
                    None => View { events: Vec::new(), last: 0, dropped: None },
                    Some(t) => {
                        let first = t.ring.front().map_or(t.last + 1, |e| e.seq);
                        let dropped = (since + 1 < first).then(|| (since + 1, first - 1));
                        let events = t.ring.iter().filter(|e| e.seq > since).cloned().collect();
                        View { events, last: t.last, dropped }
                    }
                }
            };
            if !v.events.is_empty() || v.dropped.is_some() {
                return v;
            }
            if tokio::time::timeout_at(deadline, rx.changed()).await.is_err() {
                return v;
            }
        }
    }

    /// The latest seq of tab `tab` (0 for none).
    pub fn last(&self, browser: &str, generation: u64, tab: &str) -> u64 {
        let s = self.store.lock().unwrap_or_else(|p| p.into_inner());
        s.tabs.get(&key(browser, generation, tab)).map_or(0, |t| t.last)
    }

    /// The first event of `kind` in tab `tab` after seq `since`, waiting up to `wait`.
    pub async fn next_of(
        &self,
        browser: &str,
        generation: u64,
        tab: &str,
        kind: &str,
        since: u64,
        wait: Duration,
    ) -> Option<Event> {
        let k = key(browser, generation, tab);
        let deadline = tokio::time::Instant::now() + wait;
        let mut rx = self.bell.subscribe();
        loop {
            rx.borrow_and_update();
            {
                let s = self.store.lock().unwrap_or_else(|p| p.into_inner());
                let found = s.tabs.get(&k).and_then(|t| t.ring.iter().find(|e| e.seq > since && e.kind == kind));
                if let Some(e) = found {
                    return Some(e.clone());
                }
            }
            if tokio::time::timeout_at(deadline, rx.changed()).await.is_err() {
                return None;
            }
        }
    }

    /// Logs the watchdog's `unresponsive` in tab `tab` (its renderer did not answer a trivial
    /// evaluation within [`RESPONSIVE_MS`]).
    pub fn unresponsive(&self, browser: &str, generation: u64, tab: &str) {
        let line = format!("the page did not answer within {} ms (its renderer may be busy or hung)", RESPONSIVE_MS);
        let sink = self.sink();
        sink.push(&key(browser, generation, tab), "unresponsive", &line, json!({"ms": RESPONSIVE_MS}));
        sink.note(browser, format!("unresponsive: {line}"));
    }

    /// Logs the watchdog's `not_painting` in tab `tab` (it answered, but no animation frame
    /// came within [`RESPONSIVE_MS`]).
    pub fn not_painting(&self, browser: &str, generation: u64, tab: &str) {
        let line = format!(
            "the page answers but painted no frame within {} ms (its rendering is blocked, or its window is hidden): \
             what a screenshot shows may be stale",
            RESPONSIVE_MS
        );
        let sink = self.sink();
        sink.push(&key(browser, generation, tab), "not_painting", &line, json!({"ms": RESPONSIVE_MS}));
        sink.note(browser, format!("not_painting: {line}"));
    }

    /// Starts tab `page`'s log (of browser `browser`, launch `generation`), follows its
    /// events, and watches the browser's `view` once per launch.
    pub(super) fn attached(&self, browser: &str, generation: u64, page: &Page, view: watch::Receiver<ViewState>) {
        let tab = page.target_id().as_ref().to_string();
        let k = key(browser, generation, &tab);
        self.store.lock().unwrap_or_else(|p| p.into_inner()).open(&k);
        let launch = format!("{browser}/{generation}");
        if self.watched.lock().unwrap_or_else(|p| p.into_inner()).insert(launch.clone()) {
            tokio::spawn(watch_view(
                self.sink(),
                Arc::downgrade(&self.watched),
                browser.to_string(),
                launch,
                generation,
                view,
            ));
        }
        tokio::spawn(follow_page(self.sink(), browser.to_string(), k, tab, page.clone()));
    }
}

/// Most request URLs remembered per page to name a failed one (all forgotten past it).
const MAX_URLS: usize = 1024;

/// Follows one page's events into its log until the page or the store goes.
async fn follow_page(sink: Sink, browser: String, k: String, tab: String, page: Page) {
    macro_rules! listen {
        ($t:ty) => {
            match bounded("listen", page.event_listener::<$t>()).await {
                Ok(l) => l,
                Err(_) => return,
            }
        };
    }
    let mut sent = listen!(EventRequestWillBeSent);
    let mut answered = listen!(EventResponseReceived);
    let mut failed = listen!(EventLoadingFailed);
    let mut dcl = listen!(EventDomContentEventFired);
    let mut loaded = listen!(EventLoadEventFired);
    let mut calls = listen!(EventConsoleApiCalled);
    let mut exceptions = listen!(EventExceptionThrown);
    let mut opened = listen!(EventJavascriptDialogOpening);
    let mut closed = listen!(EventJavascriptDialogClosed);
    let bound = stall_bound();
    let mut urls: HashMap<String, String> = HashMap::new();
    // The navigation waiting for its DOMContentLoaded: (its seq, its URL, when it stalls,
    // its document request's id).
    let mut pending: Option<(u64, String, tokio::time::Instant, String)> = None;
    let far = tokio::time::Instant::now() + Duration::from_secs(86_400 * 365);
    loop {
        let stall_at = pending.as_ref().map_or(far, |p| p.2);
        // `biased`, `sent` first: a request's later events (and the document's
        // DOMContentLoaded) are then taken after it whenever both are queued.
        let alive = tokio::select! {
            biased;
            Some(ev) = sent.next() => {
                if urls.len() >= MAX_URLS { urls.clear(); }
                urls.insert(ev.request_id.as_ref().to_string(), ev.request.url.clone());
                let main = ev.r#type == Some(ResourceType::Document)
                    && ev.frame_id.as_ref().is_some_and(|f| f.as_ref() == tab)
                    && ev.loader_id.as_ref() == ev.request_id.as_ref();
                if main {
                    let url = clipped(&ev.request.url);
                    let seq = push_seq(&sink, &k, "navigation", &format!("to {url}"), json!({"url": url}));
                    match seq {
                        Some(seq) => {
                            let at = tokio::time::Instant::now() + bound;
                            pending = Some((seq, url, at, ev.request_id.as_ref().to_string()));
                            true
                        }
                        None => false,
                    }
                } else { true }
            }
            Some(ev) = answered.next() => {
                let status = ev.response.status;
                if status >= 400 {
                    let url = clipped(&ev.response.url);
                    sink.push(&k, "request_failed", &format!("{status} {url}"), json!({"url": url, "status": status}))
                } else { true }
            }
            Some(ev) = failed.next() => {
                // A navigation whose document request ended so (a download, an error) will
                // not load, and is not stalled either.
                if pending.as_ref().is_some_and(|p| p.3 == ev.request_id.as_ref()) {
                    pending = None;
                }
                // A cancelled load (a download, a navigation replaced by another) is no failure.
                if ev.canceled == Some(true) { true } else {
                    let url = clipped(urls.get(ev.request_id.as_ref()).map_or("", String::as_str));
                    let e = clipped(&ev.error_text);
                    sink.push(&k, "request_failed", &format!("{e} {url}"), json!({"url": url, "error": e}))
                }
            }
            Some(_) = dcl.next() => {
                let url = pending.take().map(|p| p.1);
                sink.push(&k, "load", "DOMContentLoaded", json!({"event": "DOMContentLoaded", "url": url}))
            }
            Some(_) = loaded.next() => sink.push(&k, "load", "load", json!({"event": "load"})),
            Some(ev) = calls.next() => {
                let e = from_call(&ev);
                if e.level == Level::Error {
                    sink.push(&k, "console_error", &e.text, json!({"source": "console", "url": e.url, "line": e.line}))
                } else { true }
            }
            Some(ev) = exceptions.next() => {
                let e = from_exception(&ev);
                sink.push(&k, "console_error", &format!("uncaught {}", e.text), json!({"source": "exception", "url": e.url, "line": e.line}))
            }
            Some(ev) = opened.next() => {
                let kind = serde_json::to_value(&ev.r#type).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
                let msg = clipped(&ev.message);
                sink.push(&k, "dialog", &format!("opened {kind}: {msg}"), json!({"state": "opened", "kind": kind, "message": msg}))
            }
            Some(ev) = closed.next() => {
                let how = if ev.result { "accepted" } else { "dismissed" };
                sink.push(&k, "dialog", &format!("closed ({how})"), json!({"state": "closed", "accepted": ev.result}))
            }
            _ = tokio::time::sleep_until(stall_at), if pending.is_some() => {
                let Some((seq, url, _, _)) = pending.take() else { continue };
                let ms = bound.as_millis() as u64;
                let line = format!("navigation {seq} to {url} has not loaded after {ms} ms");
                sink.note(&browser, format!("stalled_navigation: {line}"));
                sink.push(&k, "stalled_navigation", &line, json!({"navigation": seq, "url": url, "ms": ms}))
            }
            else => return,
        };
        if !alive {
            return;
        }
    }
}

/// [`Sink::push`], returning the event's seq.
fn push_seq(sink: &Sink, k: &str, kind: &'static str, detail: &str, data: Value) -> Option<u64> {
    let store = sink.store.upgrade()?;
    let seq = store.lock().unwrap_or_else(|p| p.into_inner()).open(k).push(kind, detail, data);
    sink.bell.send_modify(|n| *n += 1);
    Some(seq)
}

/// Follows one browser launch's published state: tabs, downloads, crash and disconnect,
/// written to every open tab's log, until the launch ends.
async fn watch_view(
    sink: Sink,
    watched: Weak<Mutex<HashSet<String>>>,
    browser: String,
    launch: String,
    generation: u64,
    mut view: watch::Receiver<ViewState>,
) {
    let mut prev = view.borrow_and_update().clone();
    let mut progressed: HashMap<String, Instant> = HashMap::new();
    let keys = |v: &ViewState| -> Vec<String> { v.tabs.iter().map(|t| key(&browser, generation, &t.id)).collect() };
    loop {
        let gone = view.changed().await.is_err();
        let now = if gone { None } else { Some(view.borrow_and_update().clone()) };
        let now = now.filter(|n| n.generation == generation);
        let Some(now) = now else {
            // The launch is over (closed, relaunched or the browser removed).
            if prev.connected {
                sink.push_all(&keys(&prev), "disconnect", "Chromium is gone", json!({}));
            }
            break;
        };
        let all = keys(&now);
        let mut ok = true;
        // A launch's first tab is no news: only tabs opened beside others are.
        for (i, t) in now.tabs.iter().enumerate().filter(|_| !prev.tabs.is_empty()) {
            if !prev.tabs.iter().any(|p| p.id == t.id) {
                let url = clipped(&t.url);
                let line = format!("opened tab {} {url}", i + 1);
                ok &= sink.push_all(&all, "tab", &line, json!({"state": "opened", "tab": i + 1, "url": url}));
            }
        }
        for (i, t) in prev.tabs.iter().enumerate() {
            if !now.tabs.iter().any(|n| n.id == t.id) {
                let line = format!("closed tab {}", i + 1);
                ok &= sink.push_all(&all, "tab", &line, json!({"state": "closed", "tab": i + 1}));
            }
        }
        if now.active != prev.active && prev.active.is_some() {
            if let Some(i) = now.active.as_ref().and_then(|a| now.tabs.iter().position(|t| &t.id == a)) {
                let line = format!("tab {} is active", i + 1);
                ok &= sink.push_all(&all, "tab", &line, json!({"state": "active", "tab": i + 1}));
            }
        }
        if now.crashed && !prev.crashed {
            let i = now.active.as_ref().and_then(|a| now.tabs.iter().position(|t| &t.id == a)).map_or(0, |i| i + 1);
            ok &= sink.push_all(&all, "crash", &format!("the renderer of tab {i} crashed"), json!({"tab": i}));
        }
        for d in &now.downloads {
            let before = prev.downloads.iter().find(|p| p.id == d.id);
            let name = clipped(&d.name);
            let data = |state: &str| {
                json!({"state": state, "id": d.id, "name": name, "received": d.received, "total": d.total,
                       "path": d.path, "error": d.error})
            };
            let started = before.is_none();
            if started {
                ok &= sink.push_all(&all, "download", &format!("started {name}"), data("started"));
            }
            let changed = before.is_none_or(|b| b.state != d.state);
            match d.state {
                DownloadState::Completed if changed => {
                    let path = d.path.as_deref().unwrap_or("");
                    ok &= sink.push_all(&all, "download", &format!("done {name} {path}"), data("done"));
                    progressed.remove(&d.id);
                }
                DownloadState::Failed | DownloadState::Canceled if changed => {
                    let why = match d.state {
                        DownloadState::Canceled => "canceled".to_string(),
                        _ => d.error.clone().unwrap_or_else(|| "failed".into()),
                    };
                    ok &= sink.push_all(&all, "download", &format!("failed {name}: {why}"), data("failed"));
                    progressed.remove(&d.id);
                }
                DownloadState::InProgress if !started && before.is_some_and(|b| b.received != d.received) => {
                    let due =
                        progressed.get(&d.id).is_none_or(|t| t.elapsed() >= Duration::from_millis(PROGRESS_EVERY_MS));
                    if due {
                        progressed.insert(d.id.clone(), Instant::now());
                        let of = if d.total > 0 { format!(" of {}", d.total) } else { String::new() };
                        let line = format!("{name} {} bytes{of}", d.received);
                        ok &= sink.push_all(&all, "download", &line, data("progress"));
                    }
                }
                _ => {}
            }
        }
        if prev.connected && !now.connected && !now.launching {
            ok &= sink.push_all(&all, "disconnect", "Chromium is gone", json!({}));
        }
        prev = now;
        if !ok {
            break;
        }
    }
    if let Some(w) = watched.upgrade() {
        w.lock().unwrap_or_else(|p| p.into_inner()).remove(&launch);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_is_bounded_numbered_and_counts_what_it_drops() {
        let mut t = TabEvents::default();
        for i in 0..MAX_EVENTS + 5 {
            t.push("load", &i.to_string(), json!({}));
        }
        assert_eq!((t.ring.len(), t.dropped, t.last), (MAX_EVENTS, 5, (MAX_EVENTS + 5) as u64));
        assert_eq!(t.ring.front().unwrap().seq, 6);
    }

    fn view(tabs: &[&str], active: &str, downloads: Vec<crate::browser::Download>) -> ViewState {
        ViewState {
            connected: true,
            launching: false,
            tabs: tabs
                .iter()
                .map(|t| crate::browser::Tab { id: t.to_string(), url: format!("http://x/{t}"), title: String::new() })
                .collect(),
            active: Some(active.to_string()),
            viewport: None,
            dialog: None,
            sync: crate::browser::SyncState::Off,
            generation: 1,
            views: 1,
            popped_out: false,
            crashed: false,
            loading: false,
            pending_url: None,
            file_chooser: None,
            downloads,
            zoom: 1.0,
        }
    }

    fn download(state: DownloadState, received: u64) -> crate::browser::Download {
        crate::browser::Download {
            id: "g1".into(),
            name: "a.csv".into(),
            url: "http://x/a.csv".into(),
            received,
            total: 100,
            state,
            path: (state == DownloadState::Completed).then(|| "/d/a.csv".into()),
            error: None,
        }
    }

    /// The view watcher: a launch's first tab is no event; a popup, a switch, a download's
    /// start, throttled progress and end, and the browser's end are, in every tab's log.
    #[tokio::test]
    async fn the_view_watcher_logs_tabs_downloads_and_the_end() {
        let ev = Events::default();
        let (tx, rx) = watch::channel(view(&[], "t1", vec![]));
        let task = tokio::spawn(watch_view(ev.sink(), Arc::downgrade(&ev.watched), "b".into(), "b/1".into(), 1, rx));
        let step = |v: ViewState| {
            tx.send(v).unwrap();
        };
        // A current-thread runtime: a few yields let the watcher take each state before the
        // next (a watch channel keeps only the latest).
        let settle = async || {
            for _ in 0..20 {
                tokio::task::yield_now().await;
            }
        };
        step(view(&["t1"], "t1", vec![]));
        settle().await;
        assert_eq!(ev.last("b", 1, "t1"), 0, "the first tab is no news");
        step(view(&["t1", "t2"], "t2", vec![]));
        settle().await;
        step(view(&["t1", "t2"], "t2", vec![download(DownloadState::InProgress, 0)]));
        settle().await;
        step(view(&["t1", "t2"], "t2", vec![download(DownloadState::InProgress, 10)]));
        settle().await;
        step(view(&["t1", "t2"], "t2", vec![download(DownloadState::InProgress, 20)]));
        settle().await;
        step(view(&["t1", "t2"], "t2", vec![download(DownloadState::Completed, 100)]));
        settle().await;
        drop(tx);
        task.await.unwrap();
        let t1 = ev.after("b", 1, "t1", 0, Duration::ZERO).await;
        let lines: Vec<String> = t1.events.iter().map(|e| format!("{} {}", e.kind, e.detail)).collect();
        assert_eq!(
            lines,
            [
                "tab opened tab 2 http://x/t2",
                "tab tab 2 is active",
                "download started a.csv",
                "download a.csv 10 bytes of 100",
                "download done a.csv /d/a.csv",
                "disconnect Chromium is gone",
            ],
            "progress at most every {PROGRESS_EVERY_MS} ms"
        );
        let t2 = ev.after("b", 1, "t2", 0, Duration::ZERO).await;
        assert_eq!(t2.events.len(), lines.len(), "browser events go to every tab");
        assert!(ev.watched.lock().unwrap().is_empty(), "the launch is no longer watched");
    }

    #[tokio::test]
    async fn after_says_the_dropped_range_and_waits_for_new_ones() {
        let ev = Events::default();
        let sink = ev.sink();
        for _ in 0..MAX_EVENTS + 10 {
            sink.push("b/1/t", "load", "load", json!({}));
        }
        let v = ev.after("b", 1, "t", 3, Duration::ZERO).await;
        assert_eq!(v.dropped, Some((4, 10)));
        assert_eq!(v.events.first().map(|e| e.seq), Some(11));
        let last = v.last;
        let v = ev.after("b", 1, "t", last, Duration::ZERO).await;
        assert!(v.events.is_empty() && v.dropped.is_none());
        let waiter = ev.after("b", 1, "t", last, Duration::from_secs(60));
        let (v, _) = tokio::join!(waiter, async {
            tokio::task::yield_now().await;
            sink.push("b/1/t", "tab", "opened tab 2", json!({}));
        });
        assert_eq!(v.events.len(), 1);
        assert_eq!(v.events[0].kind, "tab");
    }
}
