//! Evidence after an action (issue 25 item 3): what an action observably caused, so the agent
//! learns it without another snapshot. Before the input, [`Before::take`] notes the tab set,
//! the URL, the downloads, the focused element, the acted element's state, and starts counting
//! DOM mutations (a `MutationObserver` in Porthole's isolated world of the tab's main frame);
//! after it and a settle window, [`Before::after`] says what differs:
//! - `navigation`: a navigation started or committed (to where);
//! - `tabs`: tabs the action opened (their numbers and URLs);
//! - `download`: a download began (its file name);
//! - `focus`: the focus moved (role-like tag and name of the new focused element, or `null`);
//! - `element`: the acted element's state keys that changed, each `[before, after]`
//!   (`checked`, `expanded`, `selected`, `disabled`, `value`; a secret field's value is
//!   `"[changed]"`), or `"removed"` when it left the page;
//! - `page`: nodes added and removed in the page's main document;
//! - `nothing`: true when none of these changed.
//!
//! A dialog the action opened is reported by the action itself (`dialog`). The same action on
//! the same ref that changed nothing three times in a row gets a `hint` ([`Loops`]).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use chromiumoxide::Page;
use serde_json::{json, Value};

use super::node::Node;
use crate::browser::session::call_on;
use crate::browser::{eval_in_isolated_world, BrowserRef};

/// How long after the last input the page is left to react before the evidence is read, in
/// milliseconds: a click's handlers, a fetch answered from a local server, a re-render.
pub const SETTLE_MS: u64 = 150;
/// Longest the settle window grows while the page is still changing (mutations keep coming),
/// in milliseconds.
pub const SETTLE_MAX_MS: u64 = 600;
/// How many times in a row the same action on the same ref may change nothing before the
/// answer says the agent is looping.
pub const LOOP_AFTER: u32 = 3;

/// The isolated world the mutation counter lives in (the page cannot see or reset it).
const WORLD: &str = "porthole-evidence";

/// Called with `reset`: starts the counter (once per document) and, when `reset`, sets it to
/// zero; answers `{added, removed, focus}`: nodes added and removed since the reset, and the
/// focused element (through open shadow roots) as `kind "name"`, or null (none, or the body).
const COUNT_JS: &str = r#"(reset) => {
  const g = globalThis;
  if (!g.__phEvidence) {
    g.__phEvidence = { added: 0, removed: 0 };
    new MutationObserver((rs) => {
      for (const r of rs) { g.__phEvidence.added += r.addedNodes.length; g.__phEvidence.removed += r.removedNodes.length; }
    }).observe(document, { childList: true, subtree: true });
  }
  if (reset) { g.__phEvidence.added = 0; g.__phEvidence.removed = 0; }
  let a = document.activeElement;
  while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
  let focus = null;
  if (a && a !== document.body && a !== document.documentElement) {
    const typed = a.tagName === 'INPUT' || a.tagName === 'TEXTAREA';
    const name = (a.getAttribute('aria-label') || (a.labels && a.labels[0] && a.labels[0].textContent) || a.getAttribute('placeholder') || a.getAttribute('title') || (typed ? '' : a.textContent) || '').replace(/\s+/g, ' ').trim().slice(0, 80);
    const kind = a.getAttribute('role') || (a.tagName === 'INPUT' ? 'input[' + (a.type || 'text') + ']' : a.tagName.toLowerCase());
    focus = kind + (name ? ' "' + name + '"' : '');
  }
  return { added: g.__phEvidence.added, removed: g.__phEvidence.removed, focus };
}"#;

/// Runs [`COUNT_JS`] in the tab's main frame, in Porthole's isolated world.
async fn count(page: &Page, reset: bool) -> Value {
    eval_in_isolated_world(page, WORLD, format!("({COUNT_JS})({reset})")).await.unwrap_or(Value::Null)
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
}

/// The view's active tab URL.
fn active_url(view: &crate::browser::ViewState) -> String {
    view.tabs.iter().find(|t| Some(&t.id) == view.active.as_ref()).map(|t| t.url.clone()).unwrap_or_default()
}

impl Before {
    /// Notes the page before an action on `node` (or the focused element when `None`) and
    /// starts counting mutations. A page that cannot be read (a dialog, a crashed renderer)
    /// gives what the browser knows; the rest is compared as unknown.
    pub async fn take(b: &BrowserRef, page: &Page, node: Option<&Node>) -> Before {
        let view = b.subscribe().borrow().clone();
        let focus = count(page, true).await["focus"].clone();
        let element = match node {
            Some(n) => call_on(&n.session, &n.object, ELEMENT_JS, vec![]).await.ok(),
            None => None,
        };
        Before {
            tabs: view.tabs.iter().map(|t| t.id.clone()).collect(),
            url: active_url(&view),
            downloads: view.downloads.len(),
            focus,
            element,
        }
    }

    /// Waits out the settle window ([`SETTLE_MS`], longer while mutations keep coming, at most
    /// [`SETTLE_MAX_MS`]) and says what the action caused (the module's keys).
    pub async fn after(self, b: &BrowserRef, page: &Page, node: Option<&Node>) -> Value {
        let started = tokio::time::Instant::now();
        tokio::time::sleep(Duration::from_millis(SETTLE_MS)).await;
        let mut read = count(page, false).await;
        while started.elapsed() < Duration::from_millis(SETTLE_MAX_MS) {
            tokio::time::sleep(Duration::from_millis(SETTLE_MS / 2)).await;
            let again = count(page, false).await;
            let quiet = again["added"] == read["added"] && again["removed"] == read["removed"];
            read = again;
            if quiet {
                break;
            }
        }
        let view = b.subscribe().borrow().clone();
        let mut out = json!({});
        let url = active_url(&view);
        let navigation = if let Some(pending) = view.pending_url.clone().filter(|_| view.loading) {
            Some(pending)
        } else if url != self.url && view.active.is_some() && self.tabs.contains(view.active.as_ref().unwrap()) {
            Some(url.clone())
        } else if view.loading {
            Some(String::new())
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
            let (a, r) = (read["added"].as_u64().unwrap_or(0), read["removed"].as_u64().unwrap_or(0));
            if a + r > 0 {
                out["page"] = json!({"added": a, "removed": r});
            }
            if let Some(ch) = self.element.as_ref().and_then(|before| element_changes(before, &element_now)) {
                out["element"] = ch;
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
