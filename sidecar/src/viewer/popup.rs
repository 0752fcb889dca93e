//! `<select>` popups without a round trip per click. A host-owned probe runs in an isolated
//! world (`porthole`) of every document of a tab: a capture-phase `mousedown` listener that,
//! for a single-choice `<select>`, prevents the native popup (it would never appear in
//! frames), focuses the element and reports its box and options through a CDP binding. The
//! report becomes the view's `popup` message; `popup_choice` runs in the reporting world.
//!
//! The probe is installed once per tab (the first view to press in it installs it; later
//! views find it there), so a click costs no extra CDP call.

use chromiumoxide::cdp::browser_protocol::page::{AddScriptToEvaluateOnNewDocumentParams, CreateIsolatedWorldParams};
use chromiumoxide::cdp::js_protocol::runtime::{
    AddBindingParams, EvaluateParams, EventBindingCalled, ExecutionContextId,
};
use chromiumoxide::listeners::EventStream;
use chromiumoxide::Page;
use futures_util::StreamExt;
use serde::{Deserialize, Serialize};

use crate::browser::{bounded, BrowserError};

/// The isolated world the probe lives in; the page's own scripts cannot see it.
const WORLD: &str = "porthole";
/// The binding the probe calls with a JSON report.
const BINDING: &str = "__portholeSelectOpened";
/// Largest report accepted from a probe, in bytes (a `<select>` of thousands of options).
const MAX_REPORT_BYTES: usize = 1 << 20;

/// The probe. Idempotent per world (a second run does nothing). Coordinates are CSS px of the
/// top page's viewport: an iframe's offset (box plus border) is added per same-origin level.
const PROBE: &str = r#"(() => {
  if (globalThis.__portholeProbe) return;
  globalThis.__portholeProbe = true;
  addEventListener('mousedown', (e) => {
    if (e.button !== 0 || !e.isTrusted) return;
    const t = e.target;
    const s = t && t.closest ? t.closest('select') : null;
    if (!s || s.disabled || s.multiple || s.size > 1) return;
    e.preventDefault();
    globalThis.__portholeSelect = s;
    s.focus();
    const r = s.getBoundingClientRect();
    let x = r.left, y = r.top, w = window;
    try {
      while (w.frameElement) {
        const f = w.frameElement, fr = f.getBoundingClientRect();
        x += fr.left + f.clientLeft; y += fr.top + f.clientTop; w = w.parent;
      }
    } catch (_) {}
    globalThis.__portholeSelectOpened(JSON.stringify({ x, y, width: r.width, height: r.height,
      selected: s.selectedIndex,
      options: Array.from(s.options).map(o => ({ label: o.label || o.text, value: o.value, disabled: o.disabled })) }));
  }, true);
})()"#;

/// One option of a reported `<select>`.
#[derive(Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
struct SelectOption {
    label: String,
    value: String,
    disabled: bool,
}

/// What the probe reports: the element's box in CSS px of the page viewport, its options and
/// the selected index (−1 for none).
#[derive(Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
struct SelectReport {
    x: f64,
    y: f64,
    width: f64,
    height: f64,
    selected: i64,
    options: Vec<SelectOption>,
}

/// The outbound `popup` message.
#[derive(Serialize)]
struct PopupMessage<'a> {
    r#type: &'static str,
    kind: &'static str,
    #[serde(flatten)]
    report: &'a SelectReport,
}

/// Parses a probe's report into the `popup` message; `None` (logged) for anything else.
fn popup_message(payload: &str) -> Option<String> {
    if payload.len() > MAX_REPORT_BYTES {
        tracing::debug!("select report over {MAX_REPORT_BYTES} bytes ignored");
        return None;
    }
    let report: SelectReport = match serde_json::from_str(payload) {
        Ok(r) => r,
        Err(e) => {
            tracing::debug!("bad select report: {e}");
            return None;
        }
    };
    let finite = [report.x, report.y, report.width, report.height].iter().all(|v| v.is_finite());
    if !finite {
        return None;
    }
    serde_json::to_string(&PopupMessage { r#type: "popup", kind: "select", report: &report }).ok()
}

/// Script: pick option `i` of the reported `<select>` firing `input` then `change` once, as a
/// real choice does (nothing fires when it is already selected). False when it is gone or the
/// option is missing or disabled.
fn choose_script(i: usize) -> String {
    format!(
        r#"(() => {{
  const s = globalThis.__portholeSelect;
  if (!s || !s.isConnected || {i} >= s.options.length || s.options[{i}].disabled) return false;
  if (s.selectedIndex !== {i}) {{
    s.selectedIndex = {i};
    s.dispatchEvent(new Event('input', {{ bubbles: true }}));
    s.dispatchEvent(new Event('change', {{ bubbles: true }}));
  }}
  return true;
}})()"#
    )
}

/// One view's side of the popups: the tab it watches for reports and the world of the last
/// report. Owned by the view's input worker.
#[derive(Default)]
pub(super) struct Popups {
    /// The tab whose reports `events` carries.
    tab: Option<String>,
    events: Option<EventStream<EventBindingCalled>>,
    /// Where the last popup came from: (tab, the probe's execution context).
    open: Option<(String, ExecutionContextId)>,
}

impl Popups {
    /// Makes sure `page` runs the probe and this view hears its reports. Costs CDP calls only
    /// the first time per tab for this view (and installs only if no view did before).
    pub(super) async fn ensure(&mut self, page: &Page) -> Result<(), BrowserError> {
        let tab = page.target_id().as_ref().to_string();
        if self.tab.as_deref() == Some(tab.as_str()) && self.events.is_some() {
            return Ok(());
        }
        // Listen before anything can report.
        let events = bounded("listen", page.event_listener::<EventBindingCalled>()).await?;
        let mut b = AddBindingParams::new(BINDING);
        b.execution_context_name = Some(WORLD.into());
        bounded("Runtime.addBinding", page.execute(b)).await?;
        let frame = bounded("mainframe", page.mainframe())
            .await?
            .ok_or_else(|| BrowserError::Cdp("the tab has no main frame".into()))?;
        let mut w = CreateIsolatedWorldParams::new(frame);
        w.world_name = Some(WORLD.into());
        let ctx = bounded("Page.createIsolatedWorld", page.execute(w)).await?.result.execution_context_id;
        let present = eval_in_world(page, ctx, "!!globalThis.__portholeProbe".into()).await?;
        if present != serde_json::Value::Bool(true) {
            // New documents of every frame get it; the current ones get it now.
            let mut s = AddScriptToEvaluateOnNewDocumentParams::new(PROBE);
            s.world_name = Some(WORLD.into());
            s.run_immediately = Some(true);
            bounded("Page.addScriptToEvaluateOnNewDocument", page.execute(s)).await?;
            eval_in_world(page, ctx, PROBE.into()).await?;
        }
        self.tab = Some(tab);
        self.events = Some(events);
        Ok(())
    }

    /// The next report as a `popup` message; pending forever while nothing is watched.
    pub(super) async fn next(&mut self) -> Option<String> {
        loop {
            let Some(events) = self.events.as_mut() else {
                return std::future::pending().await;
            };
            let Some(ev) = events.next().await else {
                // The tab's session ended.
                self.events = None;
                self.tab = None;
                continue;
            };
            if ev.name != BINDING {
                continue;
            }
            let Some(m) = popup_message(&ev.payload) else {
                continue;
            };
            self.open = self.tab.clone().map(|t| (t, ev.execution_context_id));
            return Some(m);
        }
    }

    /// Applies `popup_choice` `i` to the last reported `<select>` in `page` (the active tab).
    pub(super) async fn choose(&self, page: &Page, i: usize) -> Result<(), BrowserError> {
        let stale = || BrowserError::BadRequest("the popup is stale or the option does not exist".into());
        let Some((tab, ctx)) = &self.open else {
            return Err(stale());
        };
        if page.target_id().as_ref() != tab {
            return Err(stale());
        }
        // A navigation destroyed the world: the evaluation fails, which is a stale popup too.
        let v = eval_in_world(page, *ctx, choose_script(i)).await.map_err(|_| stale())?;
        if v != serde_json::Value::Bool(true) {
            return Err(stale());
        }
        Ok(())
    }
}

/// Evaluates a host-owned `expression` in the execution context `ctx` (by value).
async fn eval_in_world(
    page: &Page,
    ctx: ExecutionContextId,
    expression: String,
) -> Result<serde_json::Value, BrowserError> {
    let mut p = EvaluateParams::new(expression);
    p.context_id = Some(ctx);
    p.return_by_value = Some(true);
    let r = bounded("Runtime.evaluate", page.execute(p)).await?;
    if let Some(ex) = &r.result.exception_details {
        return Err(BrowserError::Cdp(format!("evaluation threw: {}", ex.text)));
    }
    Ok(r.result.result.value.clone().unwrap_or(serde_json::Value::Null))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_becomes_the_popup_message_and_anything_else_is_ignored() {
        let ok = r#"{"x":20,"y":20.5,"width":200,"height":30,"selected":0,
            "options":[{"label":"Alpha","value":"a","disabled":false}]}"#;
        let m: serde_json::Value = serde_json::from_str(&popup_message(ok).unwrap()).unwrap();
        assert_eq!(
            m,
            serde_json::json!({"type":"popup","kind":"select","x":20.0,"y":20.5,"width":200.0,"height":30.0,
                "selected":0,"options":[{"label":"Alpha","value":"a","disabled":false}]})
        );
        for bad in [
            "not json",
            r#"{"x":1,"y":1,"width":1,"height":1,"selected":0}"#,
            r#"{"x":1,"y":1,"width":1,"height":1,"selected":0,"options":[],"extra":1}"#,
            r#"{"x":"1","y":1,"width":1,"height":1,"selected":0,"options":[]}"#,
        ] {
            assert_eq!(popup_message(bad), None, "{bad}");
        }
        let huge = format!(
            r#"{{"x":1,"y":1,"width":1,"height":1,"selected":0,"options":[],"pad":"{}"}}"#,
            "x".repeat(MAX_REPORT_BYTES)
        );
        assert_eq!(popup_message(&huge), None);
    }
}
