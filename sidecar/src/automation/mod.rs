//! Agent browsing (DESIGN §12, protocol §9.7): `ph browser …` observes and drives a browser
//! pane's own Chromium while the human watches.
//!
//! Architecture Invariant: `automation` borrows pages from the `browser` module's
//! [`BrowserRef`] (the active page, its dialogs, navigation, captures) and never owns a
//! Chromium, a tab or a viewport. It owns refs ([`refs`]), observation ([`snapshot`]) and
//! actions ([`act`]). Every action is trusted CDP input at the element's visible point;
//! nothing falls back to something weaker (a DOM `.click()`, a guessed element for a stale
//! ref), and a pending JavaScript dialog is never answered but by the `dialog` verb. Like
//! `browser`, it knows nothing of HTTP.

mod act;
mod annotate;
mod combobox;
mod dom;
mod drag;
mod error;
mod events;
mod evidence;
mod frames;
mod hooks;
mod keys;
mod logs;
mod net;
mod node;
mod outcome;
mod read;
mod ref_state;
mod refs;
mod route;
mod scroll;
pub mod sealed;
mod select;
mod set;
mod snapshot;
mod turn;
mod upload;
mod walk;
mod watchdog;

pub use crate::constants::TURN_WAIT_MS;
pub use act::{Action, MAX_FILL_BYTES, MAX_TYPE_CHARS};
pub use annotate::{legend, Boxed, BOX_BORDER_PX, BOX_RGB, MAX_BOXES};
pub use error::{a_or_an, AutomationError, Interruption, StaleReason};
/// Parses a key name for `press` (`Enter`, `Control+a`, `Shift+Tab`; docs/cli.md) → the
/// key, or `bad_request` saying what is wrong with it.
pub fn parse_key(spec: &str) -> Result<keys::KeyPress, AutomationError> {
    keys::parse(spec).map_err(AutomationError::BadRequest)
}
pub use events::{take_notes as take_watchdog_notes, Event, KINDS as EVENT_KINDS, MAX_EVENTS};
pub use logs::Level;
pub use read::{Find, Query, DEFAULT_FIND_LIMIT, DEFAULT_TEXT_BYTES, FIND_LIMIT_RANGE};
pub use ref_state::{RefState, REF_STATES};
pub use route::{MAX_ROUTES, MAX_ROUTE_BODY_BYTES};
pub use scroll::Scroll;
pub use snapshot::{DEFAULT_MAX_BYTES, MAX_BYTES_RANGE, MAX_NAME_CHARS};
pub use upload::{UploadFile, MAX_UPLOAD_FILES};

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine;
use chromiumoxide::cdp::browser_protocol::page::{CaptureScreenshotFormat, CaptureScreenshotParams, Viewport};
use chromiumoxide::Page;
use serde_json::{json, Value};

use crate::browser::session::{call, call_on, Session};
use crate::browser::{BrowserRef, PageObserver};
use refs::{parse_ref, without_fragment, Minted, NodeKey, Refs};

/// How often `wait` checks its condition, in milliseconds.
pub const WAIT_POLL_MS: u64 = 100;
/// Longest text `get text` and `eval` return, in bytes.
pub const MAX_READ_BYTES: usize = 64 * 1024;

/// What `wait` waits for.
#[derive(Debug, Clone)]
pub enum WaitFor {
    /// The page's text (`document.body.innerText`) contains this.
    Text(String),
    /// The page's text no longer contains this.
    Gone(String),
    /// The active tab's URL matches this regular expression.
    Url(regex::Regex),
    /// `document.readyState` is `complete`.
    Load,
    /// The element with this ref is in this state (the ref is checked at every poll: a stale
    /// ref ends the wait with `stale_ref`).
    RefState(String, RefState),
}

/// What `get` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Read {
    /// The element's rendered text (`innerText`).
    Text,
    /// A field's value (refused for password and payment fields).
    Value,
}

/// Most whole-page outlines kept for `snapshot --diff` (one per caller, browser and tab);
/// past it all are forgotten (the next `--diff` of each says there was no earlier one).
const MAX_KEPT_OUTLINES: usize = 64;

/// The options of `snapshot`.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    /// Only the controls, unindented (`-i`).
    pub interactive: bool,
    /// The outline's budget in bytes.
    pub max_bytes: usize,
    /// Only this element and what it holds (`--ref`).
    pub root: Option<String>,
    /// Continue from this cursor (`--from`), given by a cut snapshot with the same options.
    pub from: Option<String>,
    /// Only the lines matching, with their ancestors (`--query`).
    pub query: Option<Query>,
    /// Only what changed since this caller's last whole-page snapshot of the document.
    pub diff: bool,
    /// Who asks (the calling pane, or the human's token): `--diff` is per caller.
    pub caller: String,
}

/// Agent browsing's state: refs per browser, and one mutating action at a time per tab
/// ([`turn`]). One per sidecar, shared behind an `Arc`.
#[derive(Default)]
pub struct Automation {
    refs: Mutex<HashMap<String, Refs>>,
    /// The last whole-page outline per caller, browser and tab: (main document's loader id,
    /// its lines), for `snapshot --diff`.
    last: Mutex<HashMap<String, (String, Vec<read::Shown>)>>,
    turns: turn::Turns,
    logs: Arc<logs::Logs>,
    events: Arc<events::Events>,
    sealed: Mutex<sealed::Store>,
    /// Actions that changed nothing, in a row, per tab (the loop hint of `evidence`).
    loops: evidence::Loops,
    routes: route::Routes,
    watchdog: watchdog::Watchdog,
}

/// What `route` does.
#[derive(Debug, Clone)]
pub enum RouteOp {
    /// Answer the matching requests with this status, headers (`K:V`) and body.
    Fulfill {
        /// HTTP status, 100..=599.
        status: u16,
        /// `K:V` headers.
        headers: Vec<String>,
        /// The body's bytes (at most [`MAX_ROUTE_BODY_BYTES`]).
        body: Vec<u8>,
    },
    /// Fail the matching requests (`net::ERR_BLOCKED_BY_CLIENT`).
    Abort,
    /// Remove the route of this pattern.
    Off,
    /// Only list.
    List,
}

fn no_dialog(b: &BrowserRef) -> Result<(), AutomationError> {
    match b.subscribe().borrow().dialog.clone() {
        Some(d) => Err(AutomationError::DialogPending(d)),
        None => Ok(()),
    }
}

/// The active page, refusing while a dialog is pending.
fn page(b: &BrowserRef) -> Result<Page, AutomationError> {
    no_dialog(b)?;
    Ok(b.active_page()?)
}

impl Automation {
    /// A fresh state.
    pub fn new() -> Arc<Automation> {
        Arc::new(Automation::default())
    }

    /// What the browser host tells of every page it attaches: the console and network
    /// buffers start there.
    pub fn page_observer(&self) -> Arc<dyn PageObserver> {
        Arc::new(hooks::PageHooks { logs: self.logs.clone(), events: self.events.clone() })
    }

    /// `console [--level L] [--since-navigation]`: the active tab's console entries at
    /// level `min` or above (oldest first), only those since its document started
    /// (`performance.timeOrigin`) with `since_navigation` → `{"tab","entries","dropped"}`.
    pub async fn console(&self, b: &BrowserRef, min: Level, since_navigation: bool) -> Result<Value, AutomationError> {
        let page = page(b)?;
        let tab = page.target_id().as_ref().to_string();
        let origin = match since_navigation {
            true => crate::browser::eval_in(&page, "performance.timeOrigin".into()).await?.as_f64(),
            false => None,
        };
        let view = self.logs.console(b.id(), b.generation(), &tab);
        let entries: Vec<_> =
            view.entries.into_iter().filter(|e| e.level >= min && origin.is_none_or(|o| e.time_ms >= o)).collect();
        Ok(json!({"tab": tab, "entries": entries, "dropped": view.dropped}))
    }

    /// `network [--failed]`: the active tab's requests (oldest first), only those that
    /// failed or were answered 400 or above with `failed` → `{"tab","requests","dropped"}`.
    pub async fn network(&self, b: &BrowserRef, failed: bool) -> Result<Value, AutomationError> {
        let page = page(b)?;
        let tab = page.target_id().as_ref().to_string();
        let view = self.logs.network(b.id(), b.generation(), &tab);
        let requests: Vec<_> = view.requests.into_iter().filter(|r| !failed || r.failed()).collect();
        Ok(json!({"tab": tab, "requests": requests, "dropped": view.dropped}))
    }

    /// `network --id N`: request `n` of the active tab in full (see [`net::detail`]); one the
    /// ring no longer keeps (or never had) is `bad_request`. Credentials show only with
    /// `show_secrets` (the human's `[agent] show_secrets`).
    pub async fn network_entry(&self, b: &BrowserRef, n: u64, show_secrets: bool) -> Result<Value, AutomationError> {
        let page = page(b)?;
        let tab = page.target_id().as_ref().to_string();
        let Some(r) = self.logs.request(b.id(), b.generation(), &tab, n) else {
            let view = self.logs.network(b.id(), b.generation(), &tab);
            let kept = match (view.requests.first(), view.requests.last()) {
                (Some(a), Some(z)) => format!("the tab keeps {}..={}", a.n, z.n),
                _ => "the tab has no requests".to_string(),
            };
            return Err(AutomationError::BadRequest(format!("no request {n} ({kept})")));
        };
        let mut out = net::detail(&page, &r, show_secrets).await;
        out["tab"] = tab.into();
        Ok(out)
    }

    /// `network --har`: the active tab's kept requests as HAR 1.2 (see [`net::har`]) →
    /// `{"tab","har","entries","dropped"}`.
    pub async fn network_har(&self, b: &BrowserRef, show_secrets: bool) -> Result<Value, AutomationError> {
        let page = page(b)?;
        let tab = page.target_id().as_ref().to_string();
        let view = self.logs.network(b.id(), b.generation(), &tab);
        let har = net::har(&page, &view.requests, show_secrets).await;
        Ok(json!({"tab": tab, "entries": view.requests.len(), "dropped": view.dropped, "har": har}))
    }

    /// `route PATTERN --status S … | --abort | --off` and `route --list` on the active tab
    /// (see [`route`]) → `{"tab","routes":[{"pattern","answer":{"kind",…},"hits"}],
    /// "offline","removed"?}`. More than [`MAX_ROUTES`], a body over
    /// [`MAX_ROUTE_BODY_BYTES`] or a status outside 100..=599 is `bad_request`.
    pub async fn route(&self, b: &BrowserRef, pattern: Option<&str>, op: RouteOp) -> Result<Value, AutomationError> {
        let page = page(b)?;
        let tab = page.target_id().as_ref().to_string();
        let need = || AutomationError::BadRequest("route needs a PATTERN (a URL glob, * any run)".into());
        let mut out = json!({});
        let routes = match op {
            RouteOp::List => self.routes.list(b.id(), b.generation(), &tab),
            RouteOp::Off => {
                let (n, routes) = self.routes.remove(&page, b.id(), b.generation(), pattern).await?;
                out["removed"] = n.into();
                routes
            }
            RouteOp::Abort => {
                self.routes.add(&page, b.id(), b.generation(), pattern.ok_or_else(need)?, route::Answer::Abort).await?
            }
            RouteOp::Fulfill { status, headers, body } => {
                if !(100..=599).contains(&status) {
                    return Err(AutomationError::BadRequest("the status must be 100..=599".into()));
                }
                if body.len() > MAX_ROUTE_BODY_BYTES {
                    return Err(AutomationError::BadRequest(format!("the body is over {MAX_ROUTE_BODY_BYTES} bytes")));
                }
                let headers = route::parse_headers(&headers)?;
                let answer = route::Answer::Fulfill { status, headers, bytes: body.len(), body };
                self.routes.add(&page, b.id(), b.generation(), pattern.ok_or_else(need)?, answer).await?
            }
        };
        out["tab"] = tab.clone().into();
        out["routes"] = json!(routes);
        out["offline"] = self.routes.offline(b.id(), b.generation(), &tab).into();
        Ok(out)
    }

    /// `offline on|off` on the active tab → `{"tab","offline"}`.
    pub async fn offline(&self, b: &BrowserRef, on: bool) -> Result<Value, AutomationError> {
        let page = page(b)?;
        self.routes.set_offline(&page, b.id(), b.generation(), on).await?;
        Ok(json!({"tab": page.target_id().as_ref(), "offline": on}))
    }

    /// `events [--since N]`: tab `tab`'s events (default: the active tab's) after seq `since`,
    /// oldest first; with `wait` and none yet, waits up to `wait` for one (a long poll, for
    /// `--follow`) → `{"tab","tab_index","events":[{"seq","time_ms","kind","detail","data"}],
    /// "last","dropped":{"first","last"}|null}`. Readable while a dialog is pending.
    pub async fn events(
        &self,
        b: &BrowserRef,
        tab: Option<&str>,
        since: u64,
        wait: Duration,
    ) -> Result<Value, AutomationError> {
        // The browser's published state, not the page: a crashed tab or a lost Chromium still
        // has its log to read.
        let view = b.subscribe().borrow().clone();
        let tab = match tab.map(str::to_string).or(view.active.clone()) {
            Some(t) => t,
            None => b.active_page()?.target_id().as_ref().to_string(),
        };
        let index = view.tabs.iter().position(|t| t.id == tab).map(|i| i + 1);
        let v = self.events.after(b.id(), b.generation(), &tab, since, wait).await;
        let dropped = v.dropped.map(|(first, last)| json!({"first": first, "last": last}));
        Ok(json!({"tab": tab, "tab_index": index, "events": v.events, "last": v.last, "dropped": dropped}))
    }

    /// `wait --event KIND`: the active tab's next event of `kind` (one of [`EVENT_KINDS`],
    /// checked by the caller) logged after this call → `{"event","waited_ms"}`; `timed_out`
    /// after `timeout`.
    pub async fn wait_event(&self, b: &BrowserRef, kind: &str, timeout: Duration) -> Result<Value, AutomationError> {
        let start = std::time::Instant::now();
        let tab = b.active_page()?.target_id().as_ref().to_string();
        let since = self.events.last(b.id(), b.generation(), &tab);
        match self.events.next_of(b.id(), b.generation(), &tab, kind, since, timeout).await {
            Some(e) => Ok(json!({"event": e, "waited_ms": start.elapsed().as_millis() as u64})),
            None => Err(AutomationError::TimedOut(format!("no {kind} event within {} ms", timeout.as_millis()))),
        }
    }

    /// `downloads`: this browser's downloads, oldest first (see `browser::Download`), and
    /// the directory finished ones are saved to → `{"downloads","dir"}`.
    pub fn downloads(&self, b: &BrowserRef) -> Value {
        let downloads = b.subscribe().borrow().downloads.clone();
        json!({"downloads": downloads, "dir": crate::browser::download_dir()})
    }

    fn minted(&self, browser: &str, r: &str) -> Result<Minted, AutomationError> {
        let unknown = || AutomationError::UnknownRef(r.chars().take(32).collect());
        let n = parse_ref(r).ok_or_else(unknown)?;
        let refs = self.refs.lock().unwrap_or_else(|p| p.into_inner());
        refs.get(browser).and_then(|r| r.get(n)).cloned().ok_or_else(unknown)
    }

    /// Runs `f` as the mutating verb `verb` on `b`'s active tab: after the one before it
    /// (at most [`TURN_WAIT_MS`], else `tab_busy`), shown to the pane's views while it runs,
    /// and ended with `user_interrupted` by a human press in one of them ([`turn`]).
    pub async fn mutate<T>(
        &self,
        b: &BrowserRef,
        verb: &str,
        f: impl Future<Output = Result<T, AutomationError>>,
    ) -> Result<T, AutomationError> {
        // The watchdog's check runs beside the verb (its answer waits for both), so a page
        // that answers and paints costs the verb no extra round trip.
        let (_, r) = tokio::join!(self.watchdog.check(&self.events, b), self.turns.run(b, verb, f));
        match r {
            Err(e @ AutomationError::Occluded { cover: Some(_), .. }) => Err(self.name_cover(b, e).await),
            r => r,
        }
    }

    /// An `element_occluded` whose covering element is of the element's frame, named as the
    /// snapshot names it (`dialog "Cookie consent"`, when it has a role and a name) and with
    /// up to [`error::MAX_COVER_CONTROLS`] refs of the controls inside it, minted as a
    /// snapshot mints them. The page is read once more for it; when it cannot be, the error
    /// is as it was.
    async fn name_cover(&self, b: &BrowserRef, e: AutomationError) -> AutomationError {
        let AutomationError::Occluded { r#ref, by, cover: Some((frame, backend)), .. } = e else { return e };
        let unnamed = |by| AutomationError::Occluded { r#ref: r#ref.clone(), by, cover: None, controls: Vec::new() };
        let Ok(page) = page(b) else { return unnamed(by) };
        let Ok(c) = snapshot::capture(&page, false, b.devtools().ok().as_deref()).await else { return unnamed(by) };
        let tab = page.target_id().as_ref().to_string();
        let named = {
            let mut all = self.refs.lock().unwrap_or_else(|p| p.into_inner());
            let refs = all.entry(b.id().to_string()).or_default();
            let mut mint = minter(refs, b.generation(), &tab, &c.frames);
            snapshot::cover_of(&c, &frame, backend, error::MAX_COVER_CONTROLS, &mut mint)
        };
        match named {
            Some((name, controls)) => {
                AutomationError::Occluded { r#ref, by: name.unwrap_or(by), cover: None, controls }
            }
            None => unnamed(by),
        }
    }

    /// `stats`: the active tab's counted CDP work since it was first seen (ax reads, pierce
    /// reads, sealed scans, cache hits, focus-walk steps) → `{"tab","counts":{…}}`.
    pub fn stats(&self, b: &BrowserRef) -> Result<Value, AutomationError> {
        let page = b.active_page()?;
        let tab = page.target_id().as_ref().to_string();
        Ok(json!({"tab": tab, "counts": crate::browser::cdp_counts::of(&tab)}))
    }

    /// Reads the active page's outline (of the whole page, or of the element `root` and what
    /// is inside it), minting refs for every actionable element. A stale `root` is
    /// `stale_ref`; one that is not rendered is `element_not_visible`.
    async fn read_lines(
        &self,
        b: &BrowserRef,
        root: Option<&str>,
        signatures: bool,
    ) -> Result<(String, snapshot::Captured, Vec<snapshot::Line>), AutomationError> {
        let page = page(b)?;
        let generation = b.generation();
        let tab = page.target_id().as_ref().to_string();
        let root = match root {
            Some(r) => {
                let minted = self.minted(b.id(), r)?;
                node::resolve(b, &page, r, &minted).await?;
                Some((r, minted.key))
            }
            None => None,
        };
        let started = std::time::Instant::now();
        let c = snapshot::capture(&page, signatures, b.devtools().ok().as_deref()).await?;
        let captured = started.elapsed();
        let lines = {
            let mut all = self.refs.lock().unwrap_or_else(|p| p.into_inner());
            let refs = all.entry(b.id().to_string()).or_default();
            let mut mint = minter(refs, generation, &tab, &c.frames);
            match &root {
                None => snapshot::outline(&c, &mut mint),
                Some((r, key)) => snapshot::outline_of(&c, &key.frame, key.backend, &mut mint)
                    .ok_or_else(|| AutomationError::NotVisible(r.to_string()))?,
            }
        };
        tracing::debug!(
            "snapshot: captured in {} ms, outlined in {} ms ({} lines)",
            captured.as_millis(),
            (started.elapsed() - captured).as_millis(),
            lines.len()
        );
        Ok((tab, c, lines))
    }

    /// `snapshot`: the header and the outline (see [`Snapshot`] for its options) within
    /// `o.max_bytes`, refs minted for every actionable element (shown or cut). → `{"url",
    /// "title","tab","tabs","dialog","text","refs","root","shortened","cursor","diff",
    /// "matched","cut":{"lines","refs","reason","cursor"}|null}`. A stale `root` is
    /// `stale_ref`; one that is not rendered is `element_not_visible`; a cursor of another
    /// document (or other options) is `stale_cursor`. Closed hosts carry their component
    /// signature when `policy` allows it ([`sealed::Policy::signatures`]).
    pub async fn snapshot(
        &self,
        b: &BrowserRef,
        o: &Snapshot,
        policy: &sealed::Policy,
    ) -> Result<Value, AutomationError> {
        let (tab, c, mut lines) = self.read_lines(b, o.root.as_deref(), policy.signatures()).await?;
        let main = c.frames.first();
        let loader = main.map(|f| f.loader.clone()).unwrap_or_default();
        // The lines a cursor counts depend on the document and on these options.
        let shape = format!("{}|{:?}|{:?}", o.interactive, o.query, o.root);
        let rev = read::revision(&tab, &loader, &shape);
        // `--diff` compares whole-page outlines of one document, per caller.
        let diff_key = format!("{}|{}|{}", o.caller, b.id(), tab);
        let mut diff = Value::Null;
        if o.root.is_none() && o.query.is_none() {
            let now = read::shown(&lines);
            let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
            if o.diff {
                diff = match last.get(&diff_key).filter(|(l, _)| *l == loader) {
                    Some((_, before)) => {
                        let (text, added, removed, changed) = read::diff(before, &now);
                        json!({"text": text, "added": added, "removed": removed, "changed": changed})
                    }
                    None => json!({"earlier": false}),
                };
            }
            if last.len() >= MAX_KEPT_OUTLINES && !last.contains_key(&diff_key) {
                last.clear();
            }
            last.insert(diff_key, (loader.clone(), now));
        }
        let mut matched = Value::Null;
        if let Some(q) = &o.query {
            let (kept, n) = q.filter(&lines);
            lines = kept;
            matched = n.into();
        }
        let from = match o.from.as_deref() {
            None => 0,
            Some(cur) => read::parse_cursor(cur, &rev).map_err(|other| match other {
                true => AutomationError::StaleCursor(cur.chars().take(32).collect()),
                false => AutomationError::BadRequest(format!(
                    "{:?} is no cursor (a cursor is what a cut snapshot prints, e.g. 1a2b3c4d.120)",
                    cur.chars().take(32).collect::<String>()
                )),
            })?,
        };
        let r = if diff["text"].is_string() {
            // Only what changed is printed: within the budget, never continued by cursor.
            let t = diff["text"].as_str().unwrap_or("");
            let mut end = t.len().min(o.max_bytes);
            while !t.is_char_boundary(end) {
                end -= 1;
            }
            let cut = t[end..].lines().count();
            snapshot::Rendered { text: t[..end].to_string(), cut_lines: cut, cut_refs: 0, shortened: 0, next: None }
        } else {
            snapshot::render(&lines, o.interactive, o.max_bytes, from.min(lines.len()))
        };
        let mut text = r.text;
        if from > 0 && from < lines.len() && !text.is_empty() {
            // A page that starts deep in the tree says where it is.
            let at = read::context(&lines, from);
            let under = if at.is_empty() { String::new() } else { format!(", inside {at}") };
            text.insert_str(0, &format!("(continued at line {from}{under})\n"));
        }
        let sealed_hosts = lines.iter().filter(|l| l.text.contains(snapshot::SEALED_MARK)).count();
        if sealed_hosts > 0 {
            text.push_str(snapshot::SEALED_HINT);
            text.push('\n');
        }
        if r.shortened > 0 {
            text.push_str(&format!(
                "({} texts over {} characters end in \"…\": 'ph browser find TEXT' or 'ph browser text [--ref R]' read them whole)\n",
                r.shortened,
                snapshot::MAX_NAME_CHARS
            ));
        }
        let view = b.subscribe().borrow().clone();
        let index = view.tabs.iter().position(|t| t.id == tab).map_or(0, |i| i + 1);
        let cursor = r.next.map(|n| read::cursor(&rev, n));
        let cut = (r.cut_lines > 0).then(|| {
            json!({"lines": r.cut_lines, "refs": r.cut_refs, "cursor": cursor,
                   "reason": format!("the outline is over the {}-byte budget", o.max_bytes)})
        });
        Ok(json!({
            "url": main.map(|f| f.url.clone()),
            "title": c.title(),
            "tab": tab,
            "tab_index": index,
            "tabs": view.tabs.len(),
            "dialog": view.dialog,
            "text": text,
            "refs": lines.iter().filter(|l| l.has_ref).count(),
            "sealed_hosts": sealed_hosts,
            "root": o.root,
            "shortened": r.shortened,
            "from": o.from,
            "matched": matched,
            "diff": diff,
            "cut": cut,
        }))
    }

    /// `find TEXT | --role R [--name N]`: the outline's lines that match, in document order,
    /// at most `limit` (see [`read::find`]) → `{"url","tab","text","matches","total"}`.
    pub async fn find(&self, b: &BrowserRef, q: &read::Find, limit: usize) -> Result<Value, AutomationError> {
        let (tab, c, lines) = self.read_lines(b, None, false).await?;
        let mut out = read::find(&lines, q, limit);
        out["url"] = json!(c.frames.first().map(|f| f.url.clone()));
        out["tab"] = tab.into();
        Ok(out)
    }

    /// `text [--ref R]`: the readable text of the page or of element `root`, within
    /// `max_bytes` (see [`read::text`]) → `{"url","tab","root","text","bytes","cut"}`.
    pub async fn text(&self, b: &BrowserRef, root: Option<&str>, max_bytes: usize) -> Result<Value, AutomationError> {
        let (tab, c, lines) = self.read_lines(b, root, false).await?;
        let mut out = read::text(&lines, max_bytes);
        out["url"] = json!(c.frames.first().map(|f| f.url.clone()));
        out["tab"] = tab.into();
        out["root"] = json!(root);
        Ok(out)
    }

    /// Performs `action` on ref `r` (`press` may go without one). → `{"ref","action",
    /// "dialog",…}` (see [`act::perform`]). A mutating verb ([`Automation::mutate`]).
    pub async fn act(&self, b: &BrowserRef, r: Option<&str>, action: &Action) -> Result<Value, AutomationError> {
        self.mutate(b, action.name(), async {
            let page = page(b)?;
            let node = match r {
                Some(r) => {
                    let minted = self.minted(b.id(), r)?;
                    Some(node::resolve(b, &page, r, &minted).await?)
                }
                None => None,
            };
            let before = evidence::Before::take(b, &page, node.as_ref()).await;
            let mut out = act::perform(b, &page, node.as_ref(), action).await?;
            out["ref"] = json!(r);
            out["action"] = action.name().into();
            let what = format!("{} {}", action.name(), r.unwrap_or(""));
            self.add_evidence(b, &page, node.as_ref(), before, what.trim(), &mut out).await;
            Ok(out)
        })
        .await
    }

    /// Adds to an action's answer `out` what it observably caused (`evidence`, see
    /// [`evidence`]) and, when the same action changed nothing [`evidence::LOOP_AFTER`] times
    /// in a row, a `hint`. Nothing is read while a dialog holds the page (its scripts are
    /// stopped): the answer's `dialog` says what happened; nor after an action that sent no
    /// input because the element already was as asked (`"changed":false`).
    async fn add_evidence(
        &self,
        b: &BrowserRef,
        page: &Page,
        node: Option<&node::Node>,
        before: evidence::Before,
        what: &str,
        out: &mut Value,
    ) {
        if out["dialog"].is_object() || b.subscribe().borrow().dialog.is_some() {
            return;
        }
        // Already so (a checked checkbox, a select showing the value): nothing was sent.
        if out["changed"] == false {
            return;
        }
        let ev = before.after(b, node).await;
        if let Some(h) = self.loops.note(b.id(), page.target_id().as_ref(), what, &ev) {
            out["hint"] = h.into();
        }
        out["evidence"] = ev;
    }

    /// Resolves `r` to a live node of the active page and runs `f` on it, as the mutating
    /// verb `verb` ([`Automation::mutate`]).
    async fn on_ref_as<T>(
        &self,
        b: &BrowserRef,
        verb: &str,
        r: &str,
        f: impl AsyncFnOnce(&Page, &node::Node) -> Result<T, AutomationError>,
    ) -> Result<T, AutomationError> {
        self.mutate(b, verb, async {
            let page = page(b)?;
            let minted = self.minted(b.id(), r)?;
            let node = node::resolve(b, &page, r, &minted).await?;
            f(&page, &node).await
        })
        .await
    }

    /// `select REF VALUE…`: the options chosen with trusted input → `{"ref","value","label",
    /// "changed","dialog"}` (see [`select::select`]).
    pub async fn select(&self, b: &BrowserRef, r: &str, values: &[String]) -> Result<Value, AutomationError> {
        let mut out = self
            .on_ref_as(b, "select", r, async |page, node| {
                let before = evidence::Before::take(b, page, Some(node)).await;
                let mut out = match combobox::select_custom(b, page, node, values).await? {
                    Some(custom) => custom,
                    None => select::select(b, page, node, values).await?,
                };
                turn::mark_from(b, &out);
                self.add_evidence(b, page, Some(node), before, &format!("select {r}"), &mut out).await;
                Ok(out)
            })
            .await?;
        out["ref"] = r.into();
        Ok(out)
    }

    /// `set REF VALUE`: a date, time, datetime-local, month, week, range or colour input given
    /// `value` as a user gives it, read back → `{"ref","value","scripted"?,"evidence"}` (see
    /// [`set::set`]).
    pub async fn set(&self, b: &BrowserRef, r: &str, value: &str) -> Result<Value, AutomationError> {
        let mut out = self
            .on_ref_as(b, "set", r, async |page, node| {
                let before = evidence::Before::take(b, page, Some(node)).await;
                let mut out = set::set(b, node, value).await?;
                self.add_evidence(b, page, Some(node), before, &format!("set {r}"), &mut out).await;
                Ok(out)
            })
            .await?;
        out["ref"] = r.into();
        Ok(out)
    }

    /// `upload REF FILE…`: the files set on the file input (or its label) → `{"ref","files",
    /// "dialog"}` (see [`upload::upload`]).
    pub async fn upload(&self, b: &BrowserRef, r: &str, files: &[UploadFile]) -> Result<Value, AutomationError> {
        let mut out = self
            .on_ref_as(b, "upload", r, async |page, node| {
                let before = evidence::Before::take(b, page, Some(node)).await;
                let mut out = upload::upload(b, node, files).await?;
                self.add_evidence(b, page, Some(node), before, &format!("upload {r}"), &mut out).await;
                Ok(out)
            })
            .await?;
        out["ref"] = r.into();
        Ok(out)
    }

    /// `drag REF REF`: trusted mouse input from `from` to `to` (HTML5 drags handed back by
    /// Chromium and dropped with drag events) → `{"ref","target","from","to","kind","dialog"}` (see
    /// [`drag::drag`]).
    pub async fn drag(&self, b: &BrowserRef, from: &str, to: &str) -> Result<Value, AutomationError> {
        let mut out = self
            .on_ref_as(b, "drag", from, async |page, source| {
                let minted = self.minted(b.id(), to)?;
                let target = node::resolve(b, page, to, &minted).await?;
                let before = evidence::Before::take(b, page, Some(source)).await;
                let mut out = drag::drag(b, page, source, &target).await?;
                self.add_evidence(b, page, Some(source), before, &format!("drag {from} {to}"), &mut out).await;
                Ok(out)
            })
            .await?;
        out["ref"] = from.into();
        out["target"] = to.into();
        Ok(out)
    }

    /// `scroll [--ref R] up|down|top|bottom|PX`: one trusted wheel event → `{"point","delta"}`.
    pub async fn scroll(&self, b: &BrowserRef, r: Option<&str>, how: Scroll) -> Result<Value, AutomationError> {
        let shown = |out: Value| {
            turn::mark_from(b, &out);
            Ok(out)
        };
        match r {
            Some(r) => {
                self.on_ref_as(b, "scroll", r, async |page, node| shown(scroll::scroll(page, Some(node), how).await?))
                    .await
            }
            None => self.mutate(b, "scroll", async { shown(scroll::scroll(&page(b)?, None, how).await?) }).await,
        }
    }

    /// `scroll-to REF` → `{"ref","rect"}`: the visible part of its border box in top-level
    /// viewport CSS px, after scrolling it and its ancestors.
    pub async fn scroll_to(&self, b: &BrowserRef, r: &str) -> Result<Value, AutomationError> {
        let mut out = self
            .on_ref_as(b, "scroll-to", r, async |_, node| {
                let out = scroll::scroll_to(node).await?;
                turn::mark_from(b, &out);
                Ok(out)
            })
            .await?;
        out["ref"] = r.into();
        Ok(out)
    }

    /// `get text|value REF` → `{"ref","text"}` or `{"ref","value"}`.
    pub async fn get(&self, b: &BrowserRef, what: Read, r: &str) -> Result<Value, AutomationError> {
        let page = page(b)?;
        let minted = self.minted(b.id(), r)?;
        let node = node::resolve(b, &page, r, &minted).await?;
        if what == Read::Value && node::state(&node).await?.secret {
            return Err(AutomationError::SecretValue(r.to_string()));
        }
        let f = match what {
            Read::Text => "function(){return String(this.innerText ?? this.textContent ?? '')}",
            Read::Value => "function(){return this.isContentEditable ? this.innerText : String(this.value ?? '')}",
        };
        let v = call_on(&node.session, &node.object, f, vec![]).await?;
        let key = if what == Read::Text { "text" } else { "value" };
        Ok(json!({"ref": r, key: clip_bytes(v.as_str().unwrap_or(""), MAX_READ_BYTES)}))
    }

    /// `wait`: checks at once and every [`WAIT_POLL_MS`] until the condition holds →
    /// `{"waited_ms"}`; `timed_out` after `timeout`; `dialog_pending` as soon as a dialog is;
    /// `stale_ref` as soon as a waited-for ref is (nothing is guessed in its place).
    pub async fn wait(&self, b: &BrowserRef, what: &WaitFor, timeout: Duration) -> Result<Value, AutomationError> {
        let start = tokio::time::Instant::now();
        loop {
            let page = page(b)?;
            let holds = match what {
                WaitFor::Url(re) => {
                    let view = b.subscribe().borrow().clone();
                    let url = view.tabs.iter().find(|t| Some(&t.id) == view.active.as_ref()).map(|t| t.url.clone());
                    url.is_some_and(|u| re.is_match(&u))
                }
                WaitFor::Load => {
                    crate::browser::eval_in(&page, "document.readyState".into()).await.ok() == Some(json!("complete"))
                }
                WaitFor::Text(t) | WaitFor::Gone(t) => {
                    let expr = format!(
                        "(() => {{ const b = document.body; return !!b && b.innerText.includes({}); }})()",
                        serde_json::to_string(t).unwrap_or_default()
                    );
                    // A page between documents has no body yet: not there.
                    let found = crate::browser::eval_in(&page, expr).await.ok() == Some(Value::Bool(true));
                    found == matches!(what, WaitFor::Text(_))
                }
                WaitFor::RefState(r, state) => {
                    let minted = self.minted(b.id(), r)?;
                    let node = node::resolve(b, &page, r, &minted).await?;
                    ref_state::holds(&node, *state).await?
                }
            };
            if holds {
                return Ok(json!({"waited_ms": start.elapsed().as_millis() as u64}));
            }
            if start.elapsed() >= timeout {
                return Err(AutomationError::TimedOut(format!(
                    "the condition did not hold within {} ms",
                    timeout.as_millis()
                )));
            }
            tokio::time::sleep(Duration::from_millis(WAIT_POLL_MS)).await;
        }
    }

    /// `screenshot [--ref R] [--full]` → PNG bytes: the viewport, the ref's border box
    /// (scrolled into view), or the whole page. Refused with `dialog_pending` while a dialog
    /// is pending: a page paused by a dialog paints no frame, so Chromium's capture would only
    /// wait out the CDP bound.
    pub async fn screenshot(&self, b: &BrowserRef, r: Option<&str>, full: bool) -> Result<Vec<u8>, AutomationError> {
        self.screenshot_scaled(b, r, full, None).await
    }

    /// [`Automation::screenshot`], scaled down (never up) so that the picture's longer side
    /// is at most `max_side` device pixels (`Page.captureScreenshot`'s clip scale).
    pub async fn screenshot_scaled(
        &self,
        b: &BrowserRef,
        r: Option<&str>,
        full: bool,
        max_side: Option<u32>,
    ) -> Result<Vec<u8>, AutomationError> {
        let page = page(b)?;
        let mut p = CaptureScreenshotParams::builder().format(CaptureScreenshotFormat::Png).build();
        if let Some(r) = r {
            let minted = self.minted(b.id(), r)?;
            let node = node::resolve(b, &page, r, &minted).await?;
            node::visible_point(&node).await?;
            let rect = call_on(
                &node.session,
                &node.object,
                "function(){const r=this.getBoundingClientRect();return {x:r.left,y:r.top,width:r.width,height:r.height}}",
                vec![],
            )
            .await?;
            // In the top-level viewport (an out-of-process frame's part that shows), then in
            // the page's coordinates.
            let shown = match frames::Rect::from_json(&rect) {
                Some(r) => node.session.to_top(r).await?,
                None => None,
            };
            if let Some(r) = shown {
                let (_, _, sx, sy) = Session::from(&page).viewport().await?;
                p.clip = Some(Viewport { x: r.x + sx, y: r.y + sy, width: r.width, height: r.height, scale: 1.0 });
            }
        } else if full {
            let m = call(&page, "Page.getLayoutMetrics", json!({})).await?;
            let w = m["cssContentSize"]["width"].as_f64().unwrap_or(0.0);
            let h = m["cssContentSize"]["height"].as_f64().unwrap_or(0.0);
            if w >= 1.0 && h >= 1.0 {
                p.clip = Some(Viewport { x: 0.0, y: 0.0, width: w, height: h.min(16_384.0), scale: 1.0 });
                p.capture_beyond_viewport = Some(true);
            }
        }
        if let Some(max) = max_side {
            let dpr = crate::browser::eval_in(&page, "devicePixelRatio".into()).await?.as_f64().unwrap_or(1.0);
            let clip = match p.clip.take() {
                Some(c) => c,
                None => {
                    let (w, h, sx, sy) = Session::from(&page).viewport().await?;
                    Viewport { x: sx, y: sy, width: w, height: h, scale: 1.0 }
                }
            };
            let long = clip.width.max(clip.height) * dpr;
            let scale = if long > f64::from(max) { f64::from(max) / long } else { 1.0 };
            // Only a scaled picture needs the clip: the viewport's default capture is the same.
            if scale < 1.0 || p.capture_beyond_viewport.is_some() || r.is_some() {
                p.clip = Some(Viewport { scale, ..clip });
            }
        }
        let data = b.capture(&page, p).await?;
        base64::engine::general_purpose::STANDARD
            .decode(data)
            .map_err(|e| AutomationError::Browser(crate::browser::BrowserError::Cdp(format!("screenshot: {e}"))))
    }

    /// `navigate URL` (checked by the caller) → the dialog the page opened instead of
    /// leaving (a `beforeunload` asking to leave; never answered here), or null.
    pub async fn navigate(&self, b: &BrowserRef, url: String) -> Result<Value, AutomationError> {
        no_dialog(b)?;
        self.mutate(b, "navigate", async { Ok(b.navigate(url).await?) }).await?;
        Ok(json!(b.subscribe().borrow().dialog))
    }

    /// `back` (−1) and `forward` (+1) → the dialog opened instead, or null.
    pub async fn history(&self, b: &BrowserRef, delta: i64) -> Result<Value, AutomationError> {
        no_dialog(b)?;
        let verb = if delta < 0 { "back" } else { "forward" };
        self.mutate(b, verb, async { Ok(b.history(delta).await?) }).await?;
        Ok(json!(b.subscribe().borrow().dialog))
    }

    /// `reload` → the dialog opened instead, or null.
    pub async fn reload(&self, b: &BrowserRef) -> Result<Value, AutomationError> {
        no_dialog(b)?;
        self.mutate(b, "reload", async { Ok(b.reload().await?) }).await?;
        Ok(json!(b.subscribe().borrow().dialog))
    }

    /// `dialog accept [--text T]|dismiss`: answers the pending dialog → `{"dialog"}` (the one
    /// answered).
    pub async fn dialog(&self, b: &BrowserRef, accept: bool, text: Option<String>) -> Result<Value, AutomationError> {
        let d = b.subscribe().borrow().dialog.clone();
        let Some(d) = d else { return Err(AutomationError::BadRequest("no dialog is open".into())) };
        b.answer_dialog(accept, text).await?;
        Ok(json!({"dialog": d, "accepted": accept}))
    }

    /// `eval JS` (the caller checked `--allow-eval`) → `{"value"}`, its JSON value, over
    /// [`MAX_READ_BYTES`] refused.
    pub async fn eval(&self, b: &BrowserRef, js: String) -> Result<Value, AutomationError> {
        let page = page(b)?;
        // It may change the page: a mutating verb.
        let v = self.mutate(b, "eval", async { Ok(crate::browser::eval_in(&page, js).await?) }).await?;
        if v.to_string().len() > MAX_READ_BYTES {
            return Err(AutomationError::BadRequest(format!("the value is over {MAX_READ_BYTES} bytes of JSON")));
        }
        Ok(json!({"value": v}))
    }
}

/// How a read of the page mints refs: `(frame id, backendNodeId)` → the ref number of that
/// node of `frames` (the same node, the same number), or `None` for a frame not read.
fn minter<'a>(
    refs: &'a mut Refs,
    generation: u64,
    tab: &'a str,
    frames: &'a [snapshot::Frame],
) -> impl FnMut(&str, i64) -> Option<u64> + 'a {
    move |frame: &str, backend| {
        let f = frames.iter().find(|f| f.id == frame)?;
        let key = NodeKey { generation, tab: tab.to_string(), frame: f.id.clone(), loader: f.loader.clone(), backend };
        Some(refs.mint(key, without_fragment(&f.url), &f.targets))
    }
}

/// `s` cut to at most `max` bytes on a character boundary.
fn clip_bytes(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}
