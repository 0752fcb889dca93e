//! Evidence after an action (issue 25 item 3): what an action observably caused, so the agent
//! learns it without another snapshot. Before the input, [`Before::take`] notes the tab set,
//! the URL, the downloads, the focused element, the acted element's state and the tab's
//! frames, and starts a counter in every frame of the tab (at most [`MAX_CHILD_SESSIONS`]
//! child frames besides the main one): a `MutationObserver` in Porthole's isolated world of
//! each frame's document, same-process frames through the tab's session, out-of-process
//! (cross-site) ones through a child [`Session`] on their target. It counts nodes added and
//! removed, and *changes*: attributes that can change what is shown ([`SHOWN_ATTRIBUTES`])
//! and text (`characterData`) whose value differs from the one before the action (a class
//! added and taken off again is no change). After the input and a settle window,
//! [`Before::after`] says what differs:
//! - `navigation`: a navigation started or committed (to where), or the main frame's
//!   document was replaced (a form posted to the same URL);
//! - `tabs`: tabs the action opened (their numbers and URLs);
//! - `download`: a download began (its file name);
//! - `focus`: the focus moved (role-like tag and name of the new focused element, or `null`);
//! - `element`: the acted element's state keys that changed, each `[before, after]`
//!   (`checked`, `expanded`, `selected`, `disabled`, `value`; a secret field's value is
//!   `"[changed]"`), or `"removed"` when it left the page;
//! - `page`: `{added, removed, changed, kinds?}` in the main frame's document: nodes added
//!   and removed, changes, and which (`kinds`: attribute names and `text`);
//! - `frames`: each child frame (any depth) that changed, `{url, …}` with one of
//!   `navigated: true` (its document was replaced: a form post, a navigation inside it; `url`
//!   is the new one), `navigating: true` (it began to navigate; the new document is not
//!   there yet), `appeared: true`, `gone: true`, or its counts as in `page`;
//! - `nothing`: true when none of these changed.
//!
//! Invariant: a frame whose counter is gone (its document was replaced) or that appeared or
//! went away is a change, never `nothing`; a focus ring, a hover style or an attribute set to
//! the value it had is none. A dialog the action opened is reported by the action itself
//! (`dialog`). The same action on the same ref that changed nothing three times in a row gets
//! a `hint` ([`Loops`]).

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::time::Duration;

use chromiumoxide::Page;
use futures_util::future::join_all;
use serde_json::{json, Value};

use super::frames::MAX_CHILD_SESSIONS;
use super::node::Node;
use super::snapshot::frames;
use crate::browser::session::{call_on, Session};
use crate::browser::BrowserRef;

/// How long after the last input the page is left to react before the evidence is read, in
/// milliseconds: a click's handlers, a fetch answered from a local server, a re-render.
pub const SETTLE_MS: u64 = 150;
/// Longest the settle window grows while the page is still changing (mutations keep coming,
/// or a child frame began to navigate and its new document is not there yet), in
/// milliseconds.
pub const SETTLE_MAX_MS: u64 = 600;
/// How many times in a row the same action on the same ref may change nothing before the
/// answer says the agent is looping.
pub const LOOP_AFTER: u32 = 3;
/// The attributes whose change can change what is shown; changes of others (an `id`, a
/// `data-` key) are not counted.
pub const SHOWN_ATTRIBUTES: &[&str] =
    &["hidden", "style", "class", "open", "aria-hidden", "aria-expanded", "inert", "disabled"];

/// The isolated world the mutation counters live in (the page cannot see or reset them).
const WORLD: &str = "porthole-evidence";
/// Most elements and text nodes one frame's counter remembers the value before the action
/// of; past it each further change is counted as it comes.
const MAX_TRACKED: usize = 10_000;
/// Bound on each CDP call that reads a child frame's counter, in milliseconds (a busy
/// cross-site frame does not hold the answer up for the whole CDP bound).
const FRAME_READ_BOUND_MS: u64 = 2_000;
/// Longest frame URL an evidence entry carries, in characters.
const MAX_URL_CHARS: usize = 200;

/// Called with `(mode, main, attributes, max)` in a frame's isolated world. The first call in
/// a document starts its counter (a `MutationObserver` over nodes added and removed, the
/// `attributes` and text, and a `beforeunload` listener); `mode` `"reset"` sets it to zero
/// and arms it, `"read"` reads it, `"done"` reads it and disarms it (what it remembers is let
/// go). Answers `{added, removed, changed, kinds, records, leaving, fresh, focus}`: nodes
/// added and removed since the reset; `changed`, the attributes (per element) and text nodes
/// whose value now differs from the one before their first change (an empty class or style
/// is none, a class a set of tokens), and `kinds` their names (`text` for text); `records`, every mutation seen (for the settle window); `leaving`, the
/// document began to unload; `fresh`, the counter was started by a read (this document came
/// after the reset: the frame's document was replaced); `focus`, with `main`, the focused
/// element (through open shadow roots) as `kind "name"`, or null (none, or the body).
const COUNT_JS: &str = r#"function (mode, main, attributes, max) {
  const g = globalThis;
  if (!g.__phEvidence) {
    const c = g.__phEvidence = { added: 0, removed: 0, records: 0, more: 0, leaving: false, armed: mode !== 'done',
                                 fresh: mode !== 'reset', attrs: new Map(), texts: new Map() };
    const room = () => c.attrs.size + c.texts.size < max;
    new MutationObserver((rs) => {
      if (!c.armed) return;
      for (const r of rs) {
        c.records++;
        if (r.type === 'childList') { c.added += r.addedNodes.length; c.removed += r.removedNodes.length; }
        else if (r.type === 'characterData') {
          if (c.texts.has(r.target)) continue;
          if (room()) c.texts.set(r.target, r.oldValue); else c.more++;
        } else {
          let m = c.attrs.get(r.target);
          if (m && m.has(r.attributeName)) continue;
          if (!m) {
            if (!room()) { c.more++; continue; }
            m = new Map();
            c.attrs.set(r.target, m);
          }
          m.set(r.attributeName, r.oldValue);
        }
      }
    }).observe(document, { childList: true, subtree: true, characterData: true, characterDataOldValue: true,
                           attributes: true, attributeOldValue: true, attributeFilter: attributes });
    addEventListener('beforeunload', () => { c.leaving = true; });
  }
  const c = g.__phEvidence;
  if (mode === 'reset') {
    c.added = 0; c.removed = 0; c.records = 0; c.more = 0; c.leaving = false; c.armed = true; c.fresh = false;
    c.attrs.clear(); c.texts.clear();
  }
  // An empty class or style is none; a class is a set of tokens.
  const norm = (name, v) => name === 'class' ? (v || '').split(/\s+/).filter(Boolean).sort().join(' ')
    : name === 'style' ? (v || '').trim() : v;
  let changed = c.more;
  const kinds = new Set();
  for (const [el, m] of c.attrs) {
    if (!el.isConnected) continue;
    for (const [name, old] of m) if (norm(name, el.getAttribute(name)) !== norm(name, old)) { changed++; kinds.add(name); }
  }
  for (const [t, old] of c.texts) if (t.isConnected && t.data !== old) { changed++; kinds.add('text'); }
  if (mode === 'done') { c.armed = false; c.attrs.clear(); c.texts.clear(); }
  let focus = null;
  let a = main ? document.activeElement : null;
  while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
  if (a && a !== document.body && a !== document.documentElement) {
    const typed = a.tagName === 'INPUT' || a.tagName === 'TEXTAREA';
    const name = (a.getAttribute('aria-label') || (a.labels && a.labels[0] && a.labels[0].textContent) || a.getAttribute('placeholder') || a.getAttribute('title') || (typed ? '' : a.textContent) || '').replace(/\s+/g, ' ').trim().slice(0, 80);
    const kind = a.getAttribute('role') || (a.tagName === 'INPUT' ? 'input[' + (a.type || 'text') + ']' : a.tagName.toLowerCase());
    focus = kind + (name ? ' "' + name + '"' : '');
  }
  return { added: c.added, removed: c.removed, changed, kinds: [...kinds].sort(), records: c.records,
           leaving: c.leaving, fresh: c.fresh, focus };
}"#;

/// Runs [`COUNT_JS`] in `mode` in frame `frame`'s isolated world of `session` (the tab's own
/// session for its main frame, `main`: the focus is read too); `None` when the frame cannot
/// be read (going away, busy past [`FRAME_READ_BOUND_MS`] for a child frame).
async fn count(session: &Session, frame: &str, mode: &str, main: bool) -> Option<Value> {
    let bound = if main { crate::browser::CDP_CALL_BOUND_MS } else { FRAME_READ_BOUND_MS };
    let read = async {
        let w = session
            .call_within("Page.createIsolatedWorld", json!({"frameId": frame, "worldName": WORLD}), bound)
            .await?;
        let params = json!({
            "functionDeclaration": COUNT_JS,
            "executionContextId": w["executionContextId"],
            "arguments": [{"value": mode}, {"value": main}, {"value": SHOWN_ATTRIBUTES}, {"value": MAX_TRACKED}],
            "returnByValue": true,
        });
        session.call_within("Runtime.callFunctionOn", params, bound).await
    };
    match read.await {
        Ok(r) if r.get("exceptionDetails").is_none() => Some(r["result"]["value"].clone()),
        Ok(r) => {
            tracing::debug!("evidence: the counter of frame {frame} threw: {}", r["exceptionDetails"]);
            None
        }
        Err(e) => {
            tracing::debug!("evidence: frame {frame}: {e}");
            None
        }
    }
}

/// One frame of the tab: its id, its document's loader id (when a frame tree named it), its
/// URL, which of the evidence's sessions renders it (`None`: an out-of-process frame not
/// attached to, known from its target only), and whether it is an out-of-process frame's
/// own (a target).
#[derive(Debug, Clone)]
struct Seen {
    id: String,
    loader: Option<String>,
    url: String,
    session: Option<usize>,
    target: bool,
}

/// The frames the evidence's session `i` renders (`Page.getFrameTree`: its own frame first,
/// then its same-process frames), `None` when it cannot be read.
async fn tree(s: &Session, i: usize) -> Option<Vec<Seen>> {
    let bound = if i == 0 { crate::browser::CDP_CALL_BOUND_MS } else { FRAME_READ_BOUND_MS };
    match s.call_within("Page.getFrameTree", json!({}), bound).await {
        Ok(t) => Some(
            frames(&t)
                .into_iter()
                .enumerate()
                .map(|(k, f)| Seen {
                    id: f.id,
                    loader: Some(f.loader),
                    url: f.url,
                    session: Some(i),
                    target: k == 0 && i > 0,
                })
                .collect(),
        ),
        Err(e) => {
            tracing::debug!("evidence: the frames of session {i}: {e}");
            None
        }
    }
}

/// The browser's out-of-process frame targets (`Target.getTargets`): `(target, the frame
/// that shows it, URL)`; a target's id is its frame's. `None` when they cannot be read.
async fn frame_targets(top: &Session) -> Option<Vec<(String, String, String)>> {
    let list = match top.call("Target.getTargets", json!({})).await {
        Ok(l) => l,
        Err(e) => {
            tracing::debug!("evidence: the frame targets: {e}");
            return None;
        }
    };
    let s = |v: &Value| v.as_str().map(str::to_string);
    Some(
        list["targetInfos"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|t| t["type"] == "iframe")
            .filter_map(|t| Some((s(&t["targetId"])?, s(&t["parentFrameId"])?, s(&t["url"]).unwrap_or_default())))
            .collect(),
    )
}

/// Adds to `seen` the frame targets under a frame it holds (at any depth) that it does not
/// hold yet, as frames known from their target only.
fn add_targets(seen: &mut Vec<Seen>, targets: &[(String, String, String)]) {
    loop {
        let ids: HashSet<&str> = seen.iter().map(|f| f.id.as_str()).collect();
        let more: Vec<Seen> = targets
            .iter()
            .filter(|(t, parent, _)| !ids.contains(t.as_str()) && ids.contains(parent.as_str()))
            .map(|(t, _, url)| Seen { id: t.clone(), loader: None, url: url.clone(), session: None, target: true })
            .collect();
        if more.is_empty() {
            return;
        }
        seen.extend(more);
    }
}

/// What one look at the tab's frames found: the frames, whether each session's frame tree
/// was read, whether the frame targets were.
struct Survey {
    frames: Vec<Seen>,
    trees: Vec<bool>,
    targets: bool,
}

impl Survey {
    /// True when this look would have seen frame `f` had it been there.
    fn would_see(&self, f: &Seen) -> bool {
        f.session.is_some_and(|s| self.trees.get(s) == Some(&true)) || (f.target && self.targets)
    }
}

/// The tab's frames, reached from its own session the way a snapshot reaches them: the tab's
/// process's frames, then each out-of-process frame under a frame already reached, through a
/// child session attached to its target (at most [`MAX_CHILD_SESSIONS`]; past them a frame
/// is known from its target only). Returns the sessions, the tab's own first.
async fn reach(page: &Page) -> (Vec<Session>, Survey) {
    let top = Session::from(page);
    let first = tree(&top, 0).await;
    let mut sv = Survey { trees: vec![first.is_some()], frames: first.unwrap_or_default(), targets: false };
    let mut sessions = vec![top];
    let Some(targets) = frame_targets(&sessions[0]).await else { return (sessions, sv) };
    sv.targets = true;
    let mut tried = HashSet::new();
    while sessions.len() <= MAX_CHILD_SESSIONS {
        let next = targets.iter().find_map(|(t, parent, _)| {
            if tried.contains(t) || sv.frames.iter().any(|f| &f.id == t) {
                return None;
            }
            Some((t.clone(), sv.frames.iter().find(|f| &f.id == parent)?.session?))
        });
        let Some((target, via)) = next else { break };
        tried.insert(target.clone());
        let owner = match sessions[via].frame_owner(&target).await {
            Ok(Some(o)) => o,
            _ => continue,
        };
        // Gone meanwhile, or not loaded yet: known from its target only.
        let child = match sessions[via].attach(&target, owner).await {
            Ok(s) => s,
            Err(e) => {
                tracing::debug!("evidence: attach to frame {target}: {e}");
                continue;
            }
        };
        let i = sessions.len();
        sessions.push(child);
        let frames = tree(&sessions[i], i).await;
        sv.trees.push(frames.is_some());
        sv.frames.extend(frames.unwrap_or_default());
    }
    add_targets(&mut sv.frames, &targets);
    (sessions, sv)
}

/// The tab's frames now, through the `sessions` [`reach`] attached (no new ones: a frame
/// that appeared since is known from its target).
async fn survey(sessions: &[Session]) -> Survey {
    let trees = join_all(sessions.iter().enumerate().map(|(i, s)| tree(s, i))).await;
    let mut sv = Survey { trees: trees.iter().map(Option::is_some).collect(), frames: Vec::new(), targets: false };
    sv.frames = trees.into_iter().flatten().flatten().collect();
    if let Some(targets) = frame_targets(&sessions[0]).await {
        sv.targets = true;
        add_targets(&mut sv.frames, &targets);
    }
    sv
}

/// A count read's `{added, removed, changed, kinds?}`, `None` when it counted nothing.
fn counts(r: &Value) -> Option<Value> {
    let n = |k: &str| r[k].as_u64().unwrap_or(0);
    let (added, removed, changed) = (n("added"), n("removed"), n("changed"));
    if added + removed + changed == 0 {
        return None;
    }
    let mut v = json!({"added": added, "removed": removed, "changed": changed});
    if r["kinds"].as_array().is_some_and(|k| !k.is_empty()) {
        v["kinds"] = r["kinds"].clone();
    }
    Some(v)
}

/// `url`, at most [`MAX_URL_CHARS`] characters (`…` ending a shortened one).
fn short(url: &str) -> String {
    match url.char_indices().nth(MAX_URL_CHARS) {
        Some((at, _)) => format!("{}…", &url[..at]),
        None => url.to_string(),
    }
}

/// The acted element's state, as `{connected, checked, expanded, selected, pressed, disabled,
/// value, secret, focused}` (absent keys: not applicable).
const ELEMENT_JS: &str = r#"function() {
  const el = this, out = { connected: el.isConnected };
  if (!el.isConnected) return out;
  const aria = (k) => { const v = el.getAttribute(k); return v === null ? undefined : v; };
  if (el.type === 'checkbox' || el.type === 'radio') out.checked = el.checked;
  else if (aria('aria-checked') !== undefined) out.checked = aria('aria-checked');
  if (aria('aria-expanded') !== undefined) out.expanded = aria('aria-expanded');
  if (el.tagName === 'OPTION') out.selected = el.selected;
  else if (aria('aria-selected') !== undefined) out.selected = aria('aria-selected');
  if (aria('aria-pressed') !== undefined) out.pressed = aria('aria-pressed');
  out.disabled = !!el.disabled || el.getAttribute('aria-disabled') === 'true';
  if ('value' in el && typeof el.value === 'string') out.value = el.value.slice(0, 200);
  else if (el.isContentEditable) out.value = (el.textContent || '').slice(0, 200);
  const root = el.getRootNode();
  out.focused = !!root && root.activeElement === el;
  const ac = (el.getAttribute('autocomplete') || '').toLowerCase();
  out.secret = el.type === 'password' || /one-time-code|password|^cc-/.test(ac);
  return out;
}"#;

/// What the page was before an action.
pub struct Before {
    tabs: Vec<String>,
    url: String,
    downloads: usize,
    focus: Value,
    element: Option<Value>,
    /// The sessions the frames are read through, the tab's own first.
    sessions: Vec<Session>,
    /// The tab's frames, the main frame first (when the tab's frame tree was read).
    frames: Survey,
    /// The frames whose counter started (indexes into `frames`), the main frame first when
    /// it is one of them.
    counted: Vec<usize>,
}

/// The view's active tab URL.
fn active_url(view: &crate::browser::ViewState) -> String {
    view.tabs.iter().find(|t| Some(&t.id) == view.active.as_ref()).map(|t| t.url.clone()).unwrap_or_default()
}

impl Before {
    /// Notes the page before an action on `node` (or the focused element when `None`),
    /// reaches the tab's frames and starts counting mutations in each. A page that cannot be
    /// read (a dialog, a crashed renderer) gives what the browser knows; the rest is compared
    /// as unknown.
    pub async fn take(b: &BrowserRef, page: &Page, node: Option<&Node>) -> Before {
        let view = b.subscribe().borrow().clone();
        let (sessions, frames) = reach(page).await;
        let counted: Vec<usize> = frames
            .frames
            .iter()
            .enumerate()
            .filter(|(_, f)| f.session.is_some())
            .map(|(i, _)| i)
            .take(1 + MAX_CHILD_SESSIONS)
            .collect();
        let mut before = Before {
            tabs: view.tabs.iter().map(|t| t.id.clone()).collect(),
            url: active_url(&view),
            downloads: view.downloads.len(),
            focus: Value::Null,
            element: None,
            sessions,
            frames,
            counted,
        };
        let reads = before.read("reset").await;
        if before.counted.first() == Some(&0) {
            before.focus = reads[0].as_ref().map(|r| r["focus"].clone()).unwrap_or(Value::Null);
        }
        // A frame whose counter did not start is compared by its document only.
        before.counted = before.counted.iter().zip(&reads).filter(|(_, r)| r.is_some()).map(|(i, _)| *i).collect();
        before.element = match node {
            Some(n) => call_on(&n.session, &n.object, ELEMENT_JS, vec![]).await.ok(),
            None => None,
        };
        before
    }

    /// Reads every counted frame's counter in `mode` (at once), in the order of `counted`.
    async fn read(&self, mode: &str) -> Vec<Option<Value>> {
        join_all(self.counted.iter().map(|&i| {
            let f = &self.frames.frames[i];
            count(&self.sessions[f.session.unwrap_or(0)], &f.id, mode, i == 0)
        }))
        .await
    }

    /// True when nothing moved between two reads: the same frames read, no new mutation, no
    /// document replaced, and no child frame on its way to another document.
    fn quiet(&self, a: &[Option<Value>], b: &[Option<Value>]) -> bool {
        let key =
            |r: &Option<Value>| r.as_ref().map(|r| (r["records"].clone(), r["fresh"].clone(), r["leaving"].clone()));
        let leaving = self
            .counted
            .iter()
            .zip(b)
            .any(|(&i, r)| i > 0 && r.as_ref().is_some_and(|r| r["leaving"] == true && r["fresh"] != true));
        !leaving && a.iter().map(key).eq(b.iter().map(key))
    }

    /// Lets each counter forget what it remembered (awaited, so that it cannot disarm the
    /// counter the next action arms).
    async fn release(&self) {
        self.read("done").await;
    }

    /// The child frames that changed between the start and `now` (module doc, `frames`), in
    /// the tab's order, then the frames that appeared.
    fn frames_changed(&self, reads: &[Option<Value>], now: &Survey) -> Vec<Value> {
        let read: HashMap<usize, &Value> =
            self.counted.iter().zip(reads).filter_map(|(&i, r)| Some((i, r.as_ref()?))).collect();
        let now_by: HashMap<&str, &Seen> = now.frames.iter().map(|f| (f.id.as_str(), f)).collect();
        let mut out = Vec::new();
        let main = self.frames.frames.first().map(|f| f.id.as_str());
        for (i, f) in self.frames.frames.iter().enumerate().skip(1) {
            let r = read.get(&i);
            let Some(n) = now_by.get(f.id.as_str()) else {
                if now.would_see(f) {
                    out.push(json!({"url": short(&f.url), "gone": true}));
                }
                continue;
            };
            let replaced = r.is_some_and(|r| r["fresh"] == true)
                || match (&f.loader, &n.loader) {
                    (Some(a), Some(b)) => a != b,
                    _ => f.url != n.url,
                };
            if replaced {
                out.push(json!({"url": short(&n.url), "navigated": true}));
            } else if r.is_some_and(|r| r["leaving"] == true) {
                out.push(json!({"url": short(&f.url), "navigating": true}));
            } else if let Some(mut c) = r.and_then(|r| counts(r)) {
                c["url"] = short(&f.url).into();
                out.push(c);
            }
        }
        let before: HashSet<&str> = self.frames.frames.iter().map(|f| f.id.as_str()).collect();
        for n in &now.frames {
            // Seen now by a look that would have seen it at the start.
            if Some(n.id.as_str()) != main && !before.contains(n.id.as_str()) && self.frames.would_see(n) {
                out.push(json!({"url": short(&n.url), "appeared": true}));
            }
        }
        out
    }

    /// Waits out the settle window ([`SETTLE_MS`], longer while mutations keep coming or a
    /// child frame is on its way to another document, at most [`SETTLE_MAX_MS`]) and says
    /// what the action caused (the module's keys).
    pub async fn after(self, b: &BrowserRef, node: Option<&Node>) -> Value {
        let started = tokio::time::Instant::now();
        tokio::time::sleep(Duration::from_millis(SETTLE_MS)).await;
        let mut reads = self.read("read").await;
        while started.elapsed() < Duration::from_millis(SETTLE_MAX_MS) {
            tokio::time::sleep(Duration::from_millis(SETTLE_MS / 2)).await;
            let again = self.read("read").await;
            let quiet = self.quiet(&reads, &again);
            reads = again;
            if quiet {
                break;
            }
        }
        let (now, ()) = tokio::join!(survey(&self.sessions), self.release());
        let main_counted = self.counted.first() == Some(&0);
        let read = if main_counted { reads[0].clone().unwrap_or(Value::Null) } else { Value::Null };
        let view = b.subscribe().borrow().clone();
        let mut out = json!({});
        let url = active_url(&view);
        // The main frame's document replaced with no navigation the browser still shows (a
        // form posted to the same URL, answered within the window).
        let main_now = self.frames.frames.first().and_then(|m| now.frames.iter().find(|f| f.id == m.id));
        let replaced = read["fresh"] == true
            || self
                .frames
                .frames
                .first()
                .zip(main_now)
                .is_some_and(|(m, n)| m.loader.is_some() && n.loader != m.loader);
        let navigation = if let Some(pending) = view.pending_url.clone().filter(|_| view.loading) {
            Some(pending)
        } else if url != self.url && view.active.is_some() && self.tabs.contains(view.active.as_ref().unwrap()) {
            Some(url.clone())
        } else if view.loading {
            Some(String::new())
        } else if replaced {
            Some(main_now.map(|n| n.url.clone()).unwrap_or(url.clone()))
        } else {
            None
        };
        if let Some(to) = navigation {
            out["navigation"] = json!({"to": if to.is_empty() { Value::Null } else { to.into() }});
        }
        let new: Vec<Value> = view
            .tabs
            .iter()
            .enumerate()
            .filter(|(_, t)| !self.tabs.contains(&t.id))
            .map(|(i, t)| json!({"tab": i + 1, "url": t.url}))
            .collect();
        if !new.is_empty() {
            out["tabs"] = new.into();
        }
        if let Some(d) = view.downloads.get(self.downloads) {
            out["download"] = json!({"name": d.name});
        }
        // A navigation took the page away: focus and mutations describe another document.
        if out.get("navigation").is_none() && read.is_object() {
            let mut element_now = Value::Null;
            if let (Some(n), Some(_)) = (node, &self.element) {
                element_now = call_on(&n.session, &n.object, ELEMENT_JS, vec![]).await.unwrap_or(Value::Null);
            }
            // The acted element taking the focus (a click on a button focuses it) is no move.
            if read["focus"] != self.focus && element_now["focused"] != true {
                out["focus"] = read["focus"].clone();
            }
            if let Some(c) = counts(&read) {
                out["page"] = c;
            }
            if let Some(ch) = self.element.as_ref().and_then(|before| element_changes(before, &element_now)) {
                out["element"] = ch;
            }
        }
        // A navigation took the frames away with the page.
        if out.get("navigation").is_none() {
            let changed = self.frames_changed(&reads, &now);
            if !changed.is_empty() {
                out["frames"] = changed.into();
            }
        }
        let nothing = out.as_object().is_some_and(|o| o.is_empty());
        out["nothing"] = nothing.into();
        out
    }
}

/// The state keys that differ between `before` and `now` (each `[before, after]`), `"removed"`
/// when the element left the page, `None` when nothing changed or `now` could not be read.
fn element_changes(before: &Value, now: &Value) -> Option<Value> {
    if now.is_null() {
        return None;
    }
    if now["connected"] == false && before["connected"] == true {
        return Some("removed".into());
    }
    let secret = before["secret"] == true || now["secret"] == true;
    let mut ch = serde_json::Map::new();
    for k in ["checked", "expanded", "selected", "pressed", "disabled", "value"] {
        let (a, b) = (&before[k], &now[k]);
        if a != b {
            let pair = if k == "value" && secret { json!("[changed]") } else { json!([a, b]) };
            ch.insert(k.into(), pair);
        }
    }
    (!ch.is_empty()).then_some(Value::Object(ch))
}

/// Counts, per (browser, tab), how many times in a row the same action on the same ref
/// changed nothing.
#[derive(Default)]
pub struct Loops(Mutex<HashMap<(String, String), (String, u32)>>);

impl Loops {
    /// Notes `action` (its verb and ref, e.g. `click e3`) on `tab` of `browser` with its
    /// evidence, and returns a hint once it changed nothing [`LOOP_AFTER`] times in a row.
    pub fn note(&self, browser: &str, tab: &str, action: &str, evidence: &Value) -> Option<String> {
        let mut all = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let k = (browser.to_string(), tab.to_string());
        if evidence["nothing"] != true {
            all.remove(&k);
            return None;
        }
        let e = all.entry(k).or_insert_with(|| (action.to_string(), 0));
        if e.0 != action {
            *e = (action.to_string(), 0);
        }
        e.1 += 1;
        (e.1 >= LOOP_AFTER).then(|| {
            format!(
                "`{action}` changed nothing {} times in a row: the page may need something else first (take a snapshot, look for a dialog, an overlay or a disabled state)",
                e.1
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn element_changes_name_each_key_and_hide_a_secret_value() {
        let before = json!({"connected": true, "checked": false, "value": "a", "secret": false, "disabled": false});
        let now = json!({"connected": true, "checked": true, "value": "ab", "secret": false, "disabled": false});
        assert_eq!(element_changes(&before, &now), Some(json!({"checked": [false, true], "value": ["a", "ab"]})));
        let secret = json!({"connected": true, "value": "hunter2", "secret": true, "disabled": false});
        let now = json!({"connected": true, "value": "hunter22", "secret": true, "disabled": false});
        assert_eq!(
            element_changes(&json!({"connected": true, "value": "", "secret": true, "disabled": false}), &secret),
            Some(json!({"value": "[changed]"}))
        );
        assert_eq!(element_changes(&secret, &now), Some(json!({"value": "[changed]"})));
        assert_eq!(element_changes(&before, &json!({"connected": false})), Some(json!("removed")));
        assert_eq!(element_changes(&before, &before), None);
    }

    #[test]
    fn frames_known_from_targets_are_added_at_any_depth_and_counts_say_only_a_change() {
        let f = |id: &str, session| Seen {
            id: id.into(),
            loader: Some("L".into()),
            url: "u".into(),
            session,
            target: false,
        };
        let mut seen = vec![f("main", Some(0))];
        let t = |id: &str, parent: &str| (id.to_string(), parent.to_string(), format!("http://{id}/"));
        // A frame of another tab stays out; a frame in a cross-site frame comes after it.
        add_targets(&mut seen, &[t("inner", "outer"), t("outer", "main"), t("other", "tab2")]);
        let ids: Vec<&str> = seen.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["main", "outer", "inner"]);
        assert!(seen[1].target && seen[1].loader.is_none() && seen[1].session.is_none());
        let sv = Survey { frames: seen, trees: vec![true], targets: false };
        assert!(sv.would_see(&f("x", Some(0))) && !sv.would_see(&sv.frames[1]), "targets unread: unknown");

        assert_eq!(counts(&json!({"added": 0, "removed": 0, "changed": 0, "kinds": []})), None);
        assert_eq!(
            counts(&json!({"added": 0, "removed": 0, "changed": 2, "kinds": ["class", "text"], "records": 5})),
            Some(json!({"added": 0, "removed": 0, "changed": 2, "kinds": ["class", "text"]}))
        );
        assert_eq!(counts(&json!({"added": 1, "removed": 0, "changed": 0, "kinds": []})).unwrap().get("kinds"), None);
        assert_eq!(short(&"é".repeat(MAX_URL_CHARS)), "é".repeat(MAX_URL_CHARS));
        assert_eq!(short(&"é".repeat(MAX_URL_CHARS + 1)), format!("{}…", "é".repeat(MAX_URL_CHARS)));
    }

    #[test]
    fn the_third_action_in_a_row_that_changed_nothing_gets_a_hint() {
        let l = Loops::default();
        let nothing = json!({"nothing": true});
        assert!(l.note("b1", "t", "click e3", &nothing).is_none());
        assert!(l.note("b1", "t", "click e3", &nothing).is_none());
        assert!(l.note("b1", "t", "click e3", &nothing).unwrap().contains("3 times"));
        // Another action, or a change, starts the count again.
        assert!(l.note("b1", "t", "click e4", &nothing).is_none());
        assert!(l.note("b1", "t", "click e4", &json!({"nothing": false})).is_none());
        assert!(l.note("b1", "t", "click e4", &nothing).is_none());
    }
}
