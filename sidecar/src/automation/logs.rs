//! Each tab's console and network, kept from the moment the browser attaches the tab (before
//! its first navigation when Porthole opens it) in bounded rings: `ph browser console` and
//! `ph browser network`.
//!
//! Sources: `Runtime.consoleAPICalled`, `Runtime.exceptionThrown` and `Log.entryAdded` for
//! the console; `Network.requestWillBeSent`, `responseReceived` and `loadingFailed` for the
//! network (chromiumoxide enables the three domains on every page). At most
//! [`MAX_ENTRIES`] of each per tab (the oldest dropped, and counted), each text or URL cut
//! to [`MAX_TEXT_BYTES`]; at most [`MAX_TABS`] tabs are remembered.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use chromiumoxide::cdp::browser_protocol::log::EventEntryAdded;
use chromiumoxide::cdp::browser_protocol::network::{
    EventLoadingFailed, EventLoadingFinished, EventRequestWillBeSent, EventResponseReceived,
};
use chromiumoxide::cdp::js_protocol::runtime::{EventConsoleApiCalled, EventExceptionThrown, RemoteObject};
use chromiumoxide::Page;
use futures_util::StreamExt;
use serde::Serialize;
use serde_json::Value;

use crate::browser::bounded;

/// Entries kept per tab, for the console and for the network each.
pub const MAX_ENTRIES: usize = 500;
/// Longest text (a message, a URL, an error) kept per entry, in bytes.
pub const MAX_TEXT_BYTES: usize = 2048;
/// Tabs whose logs are kept; the least recently attached are forgotten first.
pub const MAX_TABS: usize = 64;

/// A console entry's severity, least to most severe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// `console.debug`, `trace`, verbose log entries.
    Debug,
    /// `console.log`, `info` and the rest.
    Info,
    /// `console.warn`, warnings.
    Warning,
    /// `console.error`, `assert`, uncaught exceptions, failed loads.
    Error,
}

impl Level {
    /// `debug`, `info`, `warning` (or `warn`), `error`.
    pub fn parse(s: &str) -> Option<Level> {
        match s {
            "debug" | "verbose" => Some(Level::Debug),
            "info" | "log" => Some(Level::Info),
            "warning" | "warn" => Some(Level::Warning),
            "error" => Some(Level::Error),
            _ => None,
        }
    }

    fn of_console_call(kind: &str) -> Level {
        match kind {
            "debug" | "trace" => Level::Debug,
            "warning" => Level::Warning,
            "error" | "assert" => Level::Error,
            _ => Level::Info,
        }
    }
}

/// One console entry.
#[derive(Debug, Clone, Serialize)]
pub struct ConsoleEntry {
    /// Its severity.
    pub level: Level,
    /// `console` (a `console.*` call), `exception` (uncaught) or the log entry's source
    /// (`network`, `security`, …).
    pub source: String,
    /// The message; a call's arguments joined by spaces.
    pub text: String,
    /// Where, when known.
    pub url: Option<String>,
    /// The line (1-based), when known.
    pub line: Option<i64>,
    /// When, in ms since the epoch (compared with the document's `performance.timeOrigin`).
    pub time_ms: f64,
}

/// Most headers kept per request and per response (the rest are dropped, and counted).
pub const MAX_HEADERS: usize = 64;

/// One request.
#[derive(Debug, Clone, Serialize)]
pub struct Request {
    /// The CDP request id (for `Network.getResponseBody`).
    #[serde(skip)]
    pub(super) id: String,
    /// Its number in the tab's log, from 1 (kept across the ring's drops): `network --id N`.
    pub n: u64,
    /// `GET`, `POST`, …
    pub method: String,
    /// The URL requested.
    pub url: String,
    /// The resource type, lowercase (`document`, `fetch`, `script`, …).
    pub kind: String,
    /// The response's HTTP status, once one arrived.
    pub status: Option<i64>,
    /// Why it failed (`net::ERR_CONNECTION_REFUSED`), when it did.
    pub error: Option<String>,
    /// What `network --id` and `--har` add (not listed).
    #[serde(skip)]
    pub(super) detail: Detail,
}

/// A request's detail as the protocol gave it: headers (values cut to [`MAX_TEXT_BYTES`], at
/// most [`MAX_HEADERS`]), the response's fields and the timings.
#[derive(Debug, Clone, Default)]
pub(super) struct Detail {
    /// The request's headers, as sent (`Network.Request.headers`).
    pub request_headers: Vec<(String, String)>,
    /// The request has a body (`hasPostData`).
    pub has_post_data: bool,
    /// The response's status text, headers, MIME type, protocol and remote address.
    pub status_text: String,
    /// The response's headers.
    pub response_headers: Vec<(String, String)>,
    /// `text/html`, `application/json`, …
    pub mime: String,
    /// `http/1.1`, `h2`, …
    pub protocol: String,
    /// `Network.ResourceTiming` as JSON (`requestTime` in s; the rest ms after it).
    pub timing: Value,
    /// When it was sent: wall clock, s since the epoch, and the monotonic protocol clock, s.
    pub wall_time: f64,
    /// The protocol clock when it was sent, s.
    pub sent: f64,
    /// The protocol clock when it finished loading or failed, s.
    pub ended: Option<f64>,
    /// Bytes received on the wire (`loadingFinished`'s `encodedDataLength`).
    pub encoded_bytes: Option<f64>,
}

/// A protocol `Headers` object as (name, value) pairs, bounded.
fn header_pairs(v: &Value) -> Vec<(String, String)> {
    let Some(o) = v.as_object() else { return Vec::new() };
    o.iter()
        .take(MAX_HEADERS)
        .map(|(k, v)| (clipped(k), clipped(v.as_str().map_or_else(|| v.to_string(), str::to_string).as_str())))
        .collect()
}

impl Request {
    /// Failed to load, or answered 400 or above.
    pub fn failed(&self) -> bool {
        self.error.is_some() || self.status.is_some_and(|s| s >= 400)
    }
}

#[derive(Default)]
struct TabLog {
    console: VecDeque<ConsoleEntry>,
    console_dropped: u64,
    network: VecDeque<Request>,
    network_dropped: u64,
    /// Requests numbered so far.
    numbered: u64,
    /// Events that arrived before their request (at most [`MAX_EARLY`], oldest dropped).
    early: VecDeque<Late>,
}

#[derive(Default)]
struct Store {
    /// Keys in the order their tabs were attached.
    order: VecDeque<String>,
    tabs: HashMap<String, TabLog>,
}

/// Every tab's logs. Registered as the browser host's [`PageObserver`].
#[derive(Default)]
pub struct Logs {
    store: Arc<Mutex<Store>>,
}

/// What a tab's console holds: the entries and how many older ones were dropped.
pub struct ConsoleView {
    /// Oldest first.
    pub entries: Vec<ConsoleEntry>,
    /// Entries dropped from the ring.
    pub dropped: u64,
}

/// What a tab's network log holds.
pub struct NetworkView {
    /// Oldest first.
    pub requests: Vec<Request>,
    /// Requests dropped from the ring.
    pub dropped: u64,
}

fn key(browser: &str, generation: u64, tab: &str) -> String {
    format!("{browser}/{generation}/{tab}")
}

impl Logs {
    /// The console of a tab (empty for one never attached).
    pub fn console(&self, browser: &str, generation: u64, tab: &str) -> ConsoleView {
        let s = self.store.lock().unwrap_or_else(|p| p.into_inner());
        match s.tabs.get(&key(browser, generation, tab)) {
            Some(t) => {
                // Each source is its own event stream (their relative order is lost): order by time.
                let mut entries: Vec<ConsoleEntry> = t.console.iter().cloned().collect();
                entries.sort_by(|a, b| a.time_ms.total_cmp(&b.time_ms));
                ConsoleView { entries, dropped: t.console_dropped }
            }
            None => ConsoleView { entries: Vec::new(), dropped: 0 },
        }
    }

    /// The network log of a tab.
    pub fn network(&self, browser: &str, generation: u64, tab: &str) -> NetworkView {
        let s = self.store.lock().unwrap_or_else(|p| p.into_inner());
        match s.tabs.get(&key(browser, generation, tab)) {
            Some(t) => NetworkView { requests: t.network.iter().cloned().collect(), dropped: t.network_dropped },
            None => NetworkView { requests: Vec::new(), dropped: 0 },
        }
    }

    /// Request number `n` of a tab, while the ring keeps it.
    pub(super) fn request(&self, browser: &str, generation: u64, tab: &str, n: u64) -> Option<Request> {
        let s = self.store.lock().unwrap_or_else(|p| p.into_inner());
        s.tabs.get(&key(browser, generation, tab))?.network.iter().find(|r| r.n == n).cloned()
    }
}

impl Store {
    fn tab(&mut self, k: &str) -> Option<&mut TabLog> {
        self.tabs.get_mut(k)
    }

    fn open(&mut self, k: String) {
        if self.tabs.contains_key(&k) {
            return;
        }
        while self.order.len() >= MAX_TABS {
            if let Some(old) = self.order.pop_front() {
                self.tabs.remove(&old);
            }
        }
        self.order.push_back(k.clone());
        self.tabs.insert(k, TabLog::default());
    }
}

impl TabLog {
    fn push_console(&mut self, e: ConsoleEntry) {
        if self.console.len() >= MAX_ENTRIES {
            self.console.pop_front();
            self.console_dropped += 1;
        }
        self.console.push_back(e);
    }

    fn push_request(&mut self, mut r: Request) {
        if self.network.len() >= MAX_ENTRIES {
            self.network.pop_front();
            self.network_dropped += 1;
        }
        self.numbered += 1;
        r.n = self.numbered;
        let id = r.id.clone();
        self.network.push_back(r);
        // Its later events that overtook it.
        let early = std::mem::take(&mut self.early);
        self.early = early.into_iter().filter(|e| e.id() != id || !e.apply(self)).collect();
    }

    /// Records a request's later event on it, or keeps the event until the request arrives.
    fn push_late(&mut self, e: Late) {
        if !e.apply(self) {
            if self.early.len() >= MAX_EARLY {
                self.early.pop_front();
            }
            self.early.push_back(e);
        }
    }

    fn request(&mut self, id: &str) -> Option<&mut Request> {
        self.network.iter_mut().rev().find(|r| r.id == id)
    }
}

/// `s` cut to [`MAX_TEXT_BYTES`] on a character boundary, `…` marking the cut.
pub(super) fn clipped(s: &str) -> String {
    if s.len() <= MAX_TEXT_BYTES {
        return s.to_string();
    }
    let mut end = MAX_TEXT_BYTES - '…'.len_utf8();
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// A protocol enum's wire name (`"warning"`, `"Fetch"`).
fn name_of<T: Serialize>(v: &T) -> String {
    serde_json::to_value(v).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
}

/// A console argument as the console shows it: a string as is, a primitive's value, an
/// object's description.
fn arg_text(o: &RemoteObject) -> String {
    match (&o.value, &o.unserializable_value, &o.description) {
        (Some(serde_json::Value::String(s)), _, _) => s.clone(),
        (Some(v), _, _) => v.to_string(),
        (None, Some(u), _) => u.as_ref().to_string(),
        (None, None, Some(d)) => d.clone(),
        _ => name_of(&o.r#type),
    }
}

pub(super) fn from_call(ev: &EventConsoleApiCalled) -> ConsoleEntry {
    let text: Vec<String> = ev.args.iter().map(arg_text).collect();
    let top = ev.stack_trace.as_ref().and_then(|s| s.call_frames.first());
    ConsoleEntry {
        level: Level::of_console_call(&name_of(&ev.r#type)),
        source: "console".into(),
        text: clipped(&text.join(" ")),
        url: top.map(|f| clipped(&f.url)).filter(|u| !u.is_empty()),
        line: top.map(|f| f.line_number + 1),
        time_ms: *ev.timestamp.inner(),
    }
}

pub(super) fn from_exception(ev: &EventExceptionThrown) -> ConsoleEntry {
    let d = &ev.exception_details;
    let what = d.exception.as_ref().and_then(|e| e.description.clone()).unwrap_or_else(|| d.text.clone());
    let first_line = what.lines().next().unwrap_or("").to_string();
    let text = if d.text.is_empty() || first_line.starts_with(&d.text) { what } else { format!("{} {what}", d.text) };
    ConsoleEntry {
        level: Level::Error,
        source: "exception".into(),
        text: clipped(text.lines().next().unwrap_or("")),
        url: d.url.as_deref().map(clipped),
        line: Some(d.line_number + 1),
        time_ms: *ev.timestamp.inner(),
    }
}

fn from_log(ev: &EventEntryAdded) -> ConsoleEntry {
    let e = &ev.entry;
    ConsoleEntry {
        level: Level::parse(&name_of(&e.level)).unwrap_or(Level::Info),
        source: name_of(&e.source),
        text: clipped(&e.text),
        url: e.url.as_deref().map(clipped),
        line: e.line_number.map(|l| l + 1),
        time_ms: *e.timestamp.inner(),
    }
}

impl Logs {
    /// Starts the buffers of `page` (of browser `browser`, launch `generation`) and follows
    /// its console and network events until the page or its buffers go.
    pub(super) fn attached(&self, browser: &str, generation: u64, page: &Page) {
        let k = key(browser, generation, page.target_id().as_ref());
        self.store.lock().unwrap_or_else(|p| p.into_inner()).open(k.clone());
        let store = Arc::downgrade(&self.store);
        let page = page.clone();
        tokio::spawn(async move {
            macro_rules! listen {
                ($t:ty) => {
                    match bounded("listen", page.event_listener::<$t>()).await {
                        Ok(l) => l,
                        Err(_) => return,
                    }
                };
            }
            let mut calls = listen!(EventConsoleApiCalled);
            let mut exceptions = listen!(EventExceptionThrown);
            let mut entries = listen!(EventEntryAdded);
            let mut sent = listen!(EventRequestWillBeSent);
            let mut answered = listen!(EventResponseReceived);
            let mut failed = listen!(EventLoadingFailed);
            let mut finished = listen!(EventLoadingFinished);
            // A request's later events (answered, failed, finished) can be taken before its
            // `requestWillBeSent`: each kind has its own channel, and chromiumoxide drains its
            // listeners' queues in no set order. `biased` with `sent` first makes that rare;
            // those that still overtake it wait in the tab's log ([`TabLog::push_late`]).
            loop {
                tokio::select! {
                    biased;
                    Some(ev) = sent.next() => {
                        let req = serde_json::to_value(&ev.request).unwrap_or_default();
                        let r = Request {
                            id: ev.request_id.as_ref().to_string(),
                            n: 0,
                            method: ev.request.method.clone(),
                            url: clipped(&ev.request.url),
                            kind: ev.r#type.as_ref().map(|t| name_of(t).to_lowercase()).unwrap_or_default(),
                            status: None,
                            error: None,
                            detail: Detail {
                                request_headers: header_pairs(&req["headers"]),
                                has_post_data: req["hasPostData"] == true,
                                wall_time: *ev.wall_time.inner(),
                                sent: *ev.timestamp.inner(),
                                ..Detail::default()
                            },
                        };
                        if !with(&store, &k, |t| t.push_request(r)) { return }
                    }
                    Some(ev) = calls.next() => if !with(&store, &k, |t| t.push_console(from_call(&ev))) { return },
                    Some(ev) = exceptions.next() => if !with(&store, &k, |t| t.push_console(from_exception(&ev))) { return },
                    Some(ev) = entries.next() => if !with(&store, &k, |t| t.push_console(from_log(&ev))) { return },
                    Some(ev) = answered.next() => if !with(&store, &k, |t| t.push_late(Late::Answered(ev))) { return },
                    Some(ev) = failed.next() => if !with(&store, &k, |t| t.push_late(Late::Failed(ev))) { return },
                    Some(ev) = finished.next() => if !with(&store, &k, |t| t.push_late(Late::Finished(ev))) { return },
                    else => return,
                }
            }
        });
    }
}

/// Most events kept per tab while they wait for their request (see [`Late`]).
const MAX_EARLY: usize = 64;

/// A request's event after `requestWillBeSent`.
enum Late {
    Answered(Arc<EventResponseReceived>),
    Failed(Arc<EventLoadingFailed>),
    Finished(Arc<EventLoadingFinished>),
}

impl Late {
    fn id(&self) -> &str {
        match self {
            Late::Answered(e) => e.request_id.as_ref(),
            Late::Failed(e) => e.request_id.as_ref(),
            Late::Finished(e) => e.request_id.as_ref(),
        }
    }

    /// Records it on its request; false when the log has no such request (yet).
    fn apply(&self, t: &mut TabLog) -> bool {
        let Some(r) = t.request(self.id()) else { return false };
        match self {
            Late::Answered(ev) => {
                let resp = serde_json::to_value(&ev.response).unwrap_or_default();
                let text = |k: &str| resp[k].as_str().map(clipped).unwrap_or_default();
                r.status = Some(ev.response.status);
                r.detail.status_text = text("statusText");
                r.detail.response_headers = header_pairs(&resp["headers"]);
                r.detail.mime = text("mimeType");
                r.detail.protocol = text("protocol");
                r.detail.timing = resp["timing"].clone();
            }
            Late::Failed(ev) => {
                r.error = Some(clipped(&ev.error_text));
                r.detail.ended = Some(*ev.timestamp.inner());
            }
            Late::Finished(ev) => {
                r.detail.ended = Some(*ev.timestamp.inner());
                r.detail.encoded_bytes = Some(ev.encoded_data_length);
            }
        }
        true
    }
}

/// Applies `f` to tab `k`'s log; false once the tab is forgotten (the listener then ends).
fn with(store: &std::sync::Weak<Mutex<Store>>, k: &str, f: impl FnOnce(&mut TabLog)) -> bool {
    let Some(store) = store.upgrade() else { return false };
    let mut s = store.lock().unwrap_or_else(|p| p.into_inner());
    match s.tab(k) {
        Some(t) => {
            f(t);
            true
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(text: &str) -> ConsoleEntry {
        ConsoleEntry {
            level: Level::Info,
            source: "console".into(),
            text: text.into(),
            url: None,
            line: None,
            time_ms: 0.0,
        }
    }

    #[test]
    fn rings_are_bounded_and_count_what_they_drop() {
        let mut t = TabLog::default();
        for i in 0..MAX_ENTRIES + 3 {
            t.push_console(entry(&i.to_string()));
        }
        assert_eq!((t.console.len(), t.console_dropped), (MAX_ENTRIES, 3));
        assert_eq!(t.console.front().unwrap().text, "3");
        let long = "é".repeat(MAX_TEXT_BYTES);
        let c = clipped(&long);
        assert!(c.len() <= MAX_TEXT_BYTES && c.ends_with('…'), "{}", c.len());
    }

    fn request(id: &str) -> Request {
        Request {
            id: id.into(),
            n: 0,
            method: "GET".into(),
            url: format!("http://127.0.0.1/{id}"),
            kind: "fetch".into(),
            status: None,
            error: None,
            detail: Detail::default(),
        }
    }

    fn answered(id: &str, status: i64) -> Late {
        let ev = serde_json::json!({
            "requestId": id, "loaderId": "L", "timestamp": 2.0, "type": "Fetch",
            "hasExtraInfo": false,
            "response": {
                "url": format!("http://127.0.0.1/{id}"), "status": status, "statusText": "Not Found",
                "headers": {"content-type": "text/plain"}, "mimeType": "text/plain",
                "connectionReused": false, "connectionId": 1, "encodedDataLength": 0,
                "securityState": "neutral", "charset": ""
            }
        });
        Late::Answered(Arc::new(serde_json::from_value(ev).expect("a responseReceived event")))
    }

    fn failed(id: &str) -> Late {
        let ev = serde_json::json!({
            "requestId": id, "timestamp": 3.0, "type": "Fetch", "errorText": "net::ERR_UNSAFE_PORT"
        });
        Late::Failed(Arc::new(serde_json::from_value(ev).expect("a loadingFailed event")))
    }

    /// The CI failure of `console_and_network_are_kept_from_the_tabs_start`: a 404's
    /// `responseReceived` taken before its `requestWillBeSent` was dropped.
    #[test]
    fn events_that_overtake_their_request_are_kept_for_it() {
        let mut t = TabLog::default();
        t.push_late(answered("a", 404));
        t.push_late(failed("b"));
        t.push_request(request("b"));
        t.push_request(request("a"));
        t.push_request(request("c"));
        t.push_late(answered("c", 200));
        let got: Vec<_> = t.network.iter().map(|r| (r.id.as_str(), r.status, r.error.clone())).collect();
        assert_eq!(
            got,
            [("b", None, Some("net::ERR_UNSAFE_PORT".into())), ("a", Some(404), None), ("c", Some(200), None)]
        );
        assert!(t.early.is_empty());
        assert_eq!(t.network[1].detail.mime, "text/plain");
        // Events whose request never comes are bounded.
        for i in 0..MAX_EARLY + 5 {
            t.push_late(failed(&format!("never{i}")));
        }
        assert_eq!(t.early.len(), MAX_EARLY);
        assert_eq!(t.early.front().unwrap().id(), "never5");
    }

    #[test]
    fn tabs_beyond_the_bound_are_forgotten_oldest_first() {
        let mut s = Store::default();
        for i in 0..MAX_TABS + 1 {
            s.open(format!("b1/1/{i}"));
        }
        assert_eq!(s.tabs.len(), MAX_TABS);
        assert!(s.tab("b1/1/0").is_none() && s.tab(&format!("b1/1/{MAX_TABS}")).is_some());
    }

    #[test]
    fn levels_order_and_parse() {
        assert!(Level::Debug < Level::Info && Level::Warning < Level::Error);
        assert_eq!(Level::parse("warn"), Some(Level::Warning));
        assert_eq!(Level::of_console_call("assert"), Level::Error);
        assert_eq!(Level::parse("loud"), None);
    }
}
