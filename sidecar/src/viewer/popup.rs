//! Native popups without a round trip per click: `<select>` lists and the pickers of
//! `<input type=date|time|datetime-local|month|week|color>`. Headless Chromium opens them as
//! separate widgets that never appear in frames and take no input from `Input.*`, so the
//! pane draws its own and the host applies the choice.
//!
//! A host-owned probe runs in an isolated world (`porthole`) of every document of a tab: a
//! capture-phase `mousedown` listener that, for a single-choice `<select>`, prevents the
//! native popup, and a capture-phase `click` listener that does the same for a picker input
//! (Chromium opens those on the click's default action). Either focuses the element and
//! reports its box through a CDP binding. The report becomes the view's `popup` message;
//! `popup_choice` / `popup_value` run in the reporting world.
//!
//! Frames: a same-process iframe is a frame of the tab's own target and gets the probe with
//! it. A cross-site iframe is an out-of-process frame (site isolation stays on, `chrome.rs`)
//! with a target of its own: the view attaches a child session to each one of its tab
//! (`browser/session.rs`, as agent browsing does) and installs the probe there too. A frame's
//! box is in its own viewport's coordinates (its scroll included), and a cross-origin parent
//! cannot be read from inside: the host maps it with the press it dispatched itself (top
//! viewport point − the event's client point = the frame's viewport origin), which holds at
//! any nesting depth and any device pixel ratio (both are CSS px).
//!
//! The probe is installed once per tab on the tab's own session (the first view to press in
//! it installs it; later views find it there). Out-of-process frames are looked up at each
//! left press (one `Target.getTargets`); only a frame not seen before costs more calls.

use std::collections::{HashMap, HashSet};

use chromiumoxide::cdp::browser_protocol::page::AddScriptToEvaluateOnNewDocumentParams;
use chromiumoxide::cdp::js_protocol::runtime::{AddBindingParams, EventBindingCalled};
use chromiumoxide::listeners::EventStream;
use chromiumoxide::Page;
use futures_util::StreamExt;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use tokio::sync::mpsc;

use crate::browser::session::Session;
use crate::browser::{bounded, isolated_world, BrowserError};

/// The isolated world the probe lives in; the page's own scripts cannot see it.
const WORLD: &str = "porthole";
/// The binding the probe calls with a JSON report.
const BINDING: &str = "__portholePopupOpened";
/// Largest report accepted from a probe, in bytes (a `<select>` of thousands of options).
const MAX_REPORT_BYTES: usize = 1 << 20;
/// Largest `popup_value`, in bytes (the longest valid value is a datetime-local with ms).
pub const MAX_POPUP_VALUE_BYTES: usize = 64;
/// Most out-of-process frames of one tab a view probes; frames past it open native popups
/// the pane cannot show (logged).
const MAX_PROBED_FRAMES: usize = 32;
/// Reports from out-of-process frames waiting to be read, past which one is dropped (a
/// human presses one select at a time).
const FRAME_REPORTS_QUEUED: usize = 16;

/// The probe. Idempotent per world (a second run does nothing). Coordinates are CSS px of
/// the reporting frame's viewport, with the event's client point to map them by.
const PROBE: &str = r#"(() => {
  if (globalThis.__portholeProbe) return;
  globalThis.__portholeProbe = true;
  const PICKERS = ['date', 'time', 'datetime-local', 'month', 'week', 'color'];
  const report = (el, e, fields) => {
    globalThis.__portholePopupTarget = el;
    el.focus();
    const r = el.getBoundingClientRect();
    globalThis.__portholePopupOpened(JSON.stringify(Object.assign({ x: r.left, y: r.top,
      width: r.width, height: r.height, client_x: e.clientX, client_y: e.clientY }, fields)));
  };
  addEventListener('mousedown', (e) => {
    if (e.button !== 0 || !e.isTrusted) return;
    const t = e.target;
    const s = t && t.closest ? t.closest('select') : null;
    if (!s || s.disabled || s.multiple || s.size > 1) return;
    e.preventDefault();
    report(s, e, { kind: 'select', selected: s.selectedIndex,
      options: Array.from(s.options).map(o => ({ label: o.label || o.text, value: o.value, disabled: o.disabled })) });
  }, true);
  addEventListener('click', (e) => {
    if (e.button !== 0 || !e.isTrusted) return;
    const t = e.target;
    if (!t || t.tagName !== 'INPUT' || !PICKERS.includes(t.type) || t.disabled || t.readOnly) return;
    e.preventDefault();
    report(t, e, { kind: 'input', input_type: t.type, value: t.value, min: t.min, max: t.max, step: t.step });
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

/// The type of a picker input.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum InputType {
    /// `YYYY-MM-DD`.
    Date,
    /// `HH:MM[:SS[.mmm]]`.
    Time,
    /// `YYYY-MM-DDTHH:MM[:SS[.mmm]]`.
    DatetimeLocal,
    /// `YYYY-MM`.
    Month,
    /// `YYYY-Www`.
    Week,
    /// `#rrggbb`.
    Color,
}

impl InputType {
    /// True if and only if `v` is a value of this type as HTML defines it (the empty string
    /// clears any type but `color`, which always has a value).
    fn accepts(self, v: &str) -> bool {
        let re = match self {
            InputType::Date => r"^(\d{4,6}-\d{2}-\d{2})?$",
            InputType::Time => r"^(\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?)?$",
            InputType::DatetimeLocal => r"^(\d{4,6}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?)?$",
            InputType::Month => r"^(\d{4,6}-\d{2})?$",
            InputType::Week => r"^(\d{4,6}-W\d{2})?$",
            InputType::Color => r"^#[0-9a-f]{6}$",
        };
        v.len() <= MAX_POPUP_VALUE_BYTES && regex::Regex::new(re).is_ok_and(|r| r.is_match(v))
    }
}

/// What the probe reports: the element's box in CSS px of its frame's viewport, the client
/// point of the event that opened it, and what to draw.
#[derive(Debug, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
enum Report {
    Select {
        x: f64,
        y: f64,
        width: f64,
        height: f64,
        client_x: f64,
        client_y: f64,
        /// The selected index (−1 for none).
        selected: i64,
        options: Vec<SelectOption>,
    },
    Input {
        x: f64,
        y: f64,
        width: f64,
        height: f64,
        client_x: f64,
        client_y: f64,
        input_type: InputType,
        value: String,
        min: String,
        max: String,
        step: String,
    },
}

/// Parses a probe's report into the `popup` message, its box moved into the top viewport by
/// `(dx, dy)` (the reporting frame's offset); `None` (logged) for anything else. Also
/// returns the picker type of an input popup.
fn popup_message(payload: &str, point: (f64, f64)) -> Option<(String, Option<InputType>)> {
    if payload.len() > MAX_REPORT_BYTES {
        tracing::debug!("popup report over {MAX_REPORT_BYTES} bytes ignored");
        return None;
    }
    let report: Report = match serde_json::from_str(payload) {
        Ok(r) => r,
        Err(e) => {
            tracing::debug!("bad popup report: {e}");
            return None;
        }
    };
    let (x, y, width, height, cx, cy) = match &report {
        Report::Select { x, y, width, height, client_x, client_y, .. }
        | Report::Input { x, y, width, height, client_x, client_y, .. } => {
            (*x, *y, *width, *height, *client_x, *client_y)
        }
    };
    if ![x, y, width, height, cx, cy].iter().all(|v| v.is_finite()) {
        return None;
    }
    let (dx, dy) = (point.0 - cx, point.1 - cy);
    let (x, y) = (x + dx, y + dy);
    let m = match report {
        Report::Select { selected, options, .. } => (
            serde_json::json!({"type": "popup", "kind": "select", "x": x, "y": y, "width": width, "height": height,
                "selected": selected, "options": options}),
            None,
        ),
        Report::Input { input_type, value, min, max, step, .. } => {
            let clip = |s: String| if s.len() > MAX_POPUP_VALUE_BYTES { String::new() } else { s };
            (
                serde_json::json!({"type": "popup", "kind": "input", "x": x, "y": y, "width": width, "height": height,
                    "input_type": input_type, "value": clip(value), "min": clip(min), "max": clip(max), "step": clip(step)}),
                Some(input_type),
            )
        }
    };
    Some((m.0.to_string(), m.1))
}

/// Script: pick option `i` of the reported `<select>` firing `input` then `change` once, as a
/// real choice does (nothing fires when it is already selected). False when it is gone or the
/// option is missing or disabled.
fn choose_script(i: usize) -> String {
    format!(
        r#"(() => {{
  const s = globalThis.__portholePopupTarget;
  if (!s || !s.isConnected || s.tagName !== 'SELECT' || {i} >= s.options.length || s.options[{i}].disabled) return false;
  if (s.selectedIndex !== {i}) {{
    s.selectedIndex = {i};
    s.dispatchEvent(new Event('input', {{ bubbles: true }}));
    s.dispatchEvent(new Event('change', {{ bubbles: true }}));
  }}
  return true;
}})()"#
    )
}

/// Script: set the reported picker input (still of type `ty`) to `value` (checked by the
/// caller) firing `input` then `change` once, as the native picker does; nothing fires when
/// the value is unchanged. False when it is gone or changed type.
fn value_script(ty: InputType, value: &str) -> String {
    let ty = serde_json::to_string(&ty).unwrap_or_default();
    let v = serde_json::to_string(value).unwrap_or_default();
    format!(
        r#"(() => {{
  const t = globalThis.__portholePopupTarget;
  if (!t || !t.isConnected || t.tagName !== 'INPUT' || t.type !== {ty}) return false;
  if (t.value !== {v}) {{
    t.value = {v};
    t.dispatchEvent(new Event('input', {{ bubbles: true }}));
    t.dispatchEvent(new Event('change', {{ bubbles: true }}));
  }}
  return true;
}})()"#
    )
}

/// One view's side of the popups: the tab it watches for reports, the out-of-process frames
/// of that tab it probes, where its last press and release went, and where the last report
/// came from. Owned by the view's input worker.
pub(super) struct Popups {
    /// The tab whose reports `events` carries, and its own session.
    tab: Option<String>,
    top: Option<Session>,
    events: Option<EventStream<EventBindingCalled>>,
    /// The tab's out-of-process frames probed by this view, by target id.
    frames: HashMap<String, Session>,
    /// Every frame target of the browser at the last look (a change means a new look).
    seen: HashSet<String>,
    /// Reports of the probed frames: (frame target, `Runtime.bindingCalled` params).
    frame_tx: mpsc::Sender<(String, Value)>,
    frame_rx: mpsc::Receiver<(String, Value)>,
    /// Where the last press and the last release were dispatched (top viewport CSS px).
    down: (f64, f64),
    up: (f64, f64),
    /// Where the last popup came from.
    open: Option<Open>,
}

/// The origin of the last popup: its tab, the session and execution context (the probe's
/// world) of its frame, and the picker type of an input popup.
struct Open {
    tab: String,
    session: Session,
    ctx: i64,
    ty: Option<InputType>,
}

impl Default for Popups {
    fn default() -> Self {
        let (frame_tx, frame_rx) = mpsc::channel(FRAME_REPORTS_QUEUED);
        Popups {
            tab: None,
            top: None,
            events: None,
            frames: HashMap::new(),
            seen: HashSet::new(),
            frame_tx,
            frame_rx,
            down: (0.0, 0.0),
            up: (0.0, 0.0),
            open: None,
        }
    }
}

impl Popups {
    /// Records a press (`down`) or release dispatched at (x, y): a report of the event maps
    /// its frame's coordinates with it.
    pub(super) fn pointer(&mut self, down: bool, x: f64, y: f64) {
        if down {
            self.down = (x, y);
        } else {
            self.up = (x, y);
        }
    }

    /// Makes sure `page` and each of its out-of-process frames run the probe and this view
    /// hears their reports. Costs one CDP call when nothing changed since the last press in
    /// this tab (and installs on the tab only if no view did before).
    pub(super) async fn ensure(&mut self, page: &Page) -> Result<(), BrowserError> {
        let tab = page.target_id().as_ref().to_string();
        if self.tab.as_deref() != Some(tab.as_str()) || self.events.is_none() {
            self.frames.clear();
            self.seen.clear();
            self.ensure_tab(page).await?;
            self.tab = Some(tab);
            self.top = Some(Session::from(page));
        }
        self.ensure_frames(page).await
    }

    /// The probe on the tab's own session (its main frame and same-process frames).
    async fn ensure_tab(&mut self, page: &Page) -> Result<(), BrowserError> {
        // Listen before anything can report.
        let events = bounded("listen", page.event_listener::<EventBindingCalled>()).await?;
        let mut b = AddBindingParams::new(BINDING);
        b.execution_context_name = Some(WORLD.into());
        bounded("Runtime.addBinding", page.execute(b)).await?;
        let ctx = isolated_world(page, WORLD).await?;
        let present = eval_in_world(&Session::from(page), ctx, "!!globalThis.__portholeProbe".into()).await?;
        if present != Value::Bool(true) {
            // New documents of every frame get it; the current ones get it now (the main
            // frame here; frames already loaded get it at their next document).
            let mut s = AddScriptToEvaluateOnNewDocumentParams::new(PROBE);
            s.world_name = Some(WORLD.into());
            s.run_immediately = Some(true);
            bounded("Page.addScriptToEvaluateOnNewDocument", page.execute(s)).await?;
            eval_in_world(&Session::from(page), ctx, PROBE.into()).await?;
        }
        self.events = Some(events);
        Ok(())
    }

    /// The probe in every out-of-process frame of the tab not probed yet: the browser's frame
    /// targets whose parent frame is rendered by the tab or by a frame already probed
    /// (nesting at any depth), each attached from the session that shows it.
    async fn ensure_frames(&mut self, page: &Page) -> Result<(), BrowserError> {
        let top = Session::from(page);
        let list = top.call("Target.getTargets", json!({})).await?;
        let targets: Vec<(String, String)> = list["targetInfos"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|t| t["type"] == "iframe")
            .filter_map(|t| Some((t["targetId"].as_str()?.to_string(), t["parentFrameId"].as_str()?.to_string())))
            .collect();
        let seen: HashSet<String> = targets.iter().map(|(t, _)| t.clone()).collect();
        if seen == self.seen {
            return Ok(());
        }
        self.frames.retain(|t, _| seen.contains(t));
        // Which session renders each frame of the tab.
        let mut renders: HashMap<String, Session> = HashMap::new();
        for s in std::iter::once(top.clone()).chain(self.frames.values().cloned()) {
            for f in s.frame_ids().await.unwrap_or_default() {
                renders.insert(f, s.clone());
            }
        }
        loop {
            let next = targets
                .iter()
                .find(|(t, parent)| !self.frames.contains_key(t) && renders.contains_key(parent))
                .cloned();
            let Some((target, parent)) = next else { break };
            if self.frames.len() >= MAX_PROBED_FRAMES {
                tracing::debug!("popup probe: more than {MAX_PROBED_FRAMES} out-of-process frames");
                break;
            }
            let via = renders[&parent].clone();
            match self.probe_frame(&via, &target).await {
                Ok(s) => {
                    for f in s.frame_ids().await.unwrap_or_default() {
                        renders.insert(f, s.clone());
                    }
                    self.frames.insert(target, s);
                }
                Err(e) => {
                    // Gone meanwhile, or not loaded yet: looked at again at the next press.
                    tracing::debug!("popup probe in frame {target}: {e}");
                    self.seen.clear();
                    return Ok(());
                }
            }
        }
        self.seen = seen;
        Ok(())
    }

    /// Attaches to out-of-process frame `target` (shown by `via`) and installs the probe
    /// there: bindings need the Runtime domain, scripts for new documents the Page domain;
    /// `runImmediately` puts it in the documents already loaded (same-process subframes too).
    async fn probe_frame(&self, via: &Session, target: &str) -> Result<Session, BrowserError> {
        let owner =
            via.frame_owner(target).await?.ok_or_else(|| BrowserError::Cdp(format!("frame {target} has no owner")))?;
        let s = via.attach(target, owner).await?;
        s.subscribe("Runtime.bindingCalled", self.frame_tx.clone());
        s.call("Runtime.enable", json!({})).await?;
        s.call("Page.enable", json!({})).await?;
        s.call("Runtime.addBinding", json!({"name": BINDING, "executionContextName": WORLD})).await?;
        s.call(
            "Page.addScriptToEvaluateOnNewDocument",
            json!({"source": PROBE, "worldName": WORLD, "runImmediately": true}),
        )
        .await?;
        Ok(s)
    }

    /// The next report as a `popup` message; pending forever while nothing is watched.
    pub(super) async fn next(&mut self) -> Option<String> {
        loop {
            let (session, name, payload, ctx) = tokio::select! {
                ev = async {
                    match self.events.as_mut() {
                        Some(events) => events.next().await,
                        None => std::future::pending().await,
                    }
                } => {
                    let Some(ev) = ev else {
                        // The tab's session ended.
                        self.events = None;
                        self.tab = None;
                        self.top = None;
                        continue;
                    };
                    let Some(top) = self.top.clone() else { continue };
                    (top, ev.name.clone(), ev.payload.clone(), *ev.execution_context_id.inner())
                }
                Some((target, params)) = self.frame_rx.recv() => {
                    let Some(s) = self.frames.get(&target) else { continue };
                    let name = params["name"].as_str().unwrap_or_default().to_string();
                    let payload = params["payload"].as_str().unwrap_or_default().to_string();
                    let Some(ctx) = params["executionContextId"].as_i64() else { continue };
                    (s.clone(), name, payload, ctx)
                }
            };
            if name != BINDING {
                continue;
            }
            // A select reports on the press, a picker input on the click (the release).
            let point = if payload.contains(r#""kind":"input""#) { self.up } else { self.down };
            let Some((m, ty)) = popup_message(&payload, point) else {
                continue;
            };
            self.open = self.tab.clone().map(|tab| Open { tab, session, ctx, ty });
            return Some(m);
        }
    }

    /// The session and world of the last popup if it is in `page` (the active tab) and of
    /// the wanted kind; else the stale-popup error.
    fn world(&self, page: &Page, input: bool) -> Result<(Session, i64, Option<InputType>), BrowserError> {
        let Some(o) = &self.open else { return Err(stale()) };
        if page.target_id().as_ref() != o.tab || o.ty.is_some() != input {
            return Err(stale());
        }
        Ok((o.session.clone(), o.ctx, o.ty))
    }

    /// Applies `popup_choice` `i` to the last reported `<select>` in `page` (the active tab).
    pub(super) async fn choose(&self, page: &Page, i: usize) -> Result<(), BrowserError> {
        let (session, ctx, _) = self.world(page, false)?;
        run_applied(&session, ctx, choose_script(i)).await
    }

    /// Applies `popup_value` to the last reported picker input in `page` (the active tab).
    /// Errors: `BadRequest` for a value its type does not accept, or a stale popup.
    pub(super) async fn set_value(&self, page: &Page, value: &str) -> Result<(), BrowserError> {
        let (session, ctx, ty) = self.world(page, true)?;
        let ty = ty.expect("an input popup has a type");
        if !ty.accepts(value) {
            return Err(BrowserError::BadRequest(format!("{value:?} is not a valid {ty:?} value")));
        }
        run_applied(&session, ctx, value_script(ty, value)).await
    }
}

/// The error for a choice that no longer applies.
fn stale() -> BrowserError {
    BrowserError::BadRequest("the popup is stale or the choice does not exist".into())
}

/// Runs a choice script that answers true when it applied; anything else is a stale popup.
async fn run_applied(session: &Session, ctx: i64, script: String) -> Result<(), BrowserError> {
    // A navigation destroyed the world: the evaluation fails, which is a stale popup too.
    let v = eval_in_world(session, ctx, script).await.map_err(|_| stale())?;
    if v != Value::Bool(true) {
        return Err(stale());
    }
    Ok(())
}

/// Evaluates a host-owned `expression` in the execution context `ctx` of `session` (by value).
async fn eval_in_world(session: &Session, ctx: i64, expression: String) -> Result<Value, BrowserError> {
    let r = session
        .call("Runtime.evaluate", json!({"expression": expression, "contextId": ctx, "returnByValue": true}))
        .await?;
    if let Some(ex) = r.get("exceptionDetails") {
        return Err(BrowserError::Cdp(format!("evaluation threw: {}", ex["text"].as_str().unwrap_or("?"))));
    }
    Ok(r["result"]["value"].clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_becomes_the_popup_message_moved_by_the_frame_offset_and_anything_else_is_ignored() {
        let ok = r#"{"kind":"select","x":20,"y":20.5,"width":200,"height":30,"client_x":30,"client_y":25,"selected":0,
            "options":[{"label":"Alpha","value":"a","disabled":false}]}"#;
        // Pressed at (130, 75) in the top viewport, (30, 25) in the frame: the frame is at (100, 50).
        let (m, ty) = popup_message(ok, (130.0, 75.0)).unwrap();
        assert_eq!(ty, None);
        let m: serde_json::Value = serde_json::from_str(&m).unwrap();
        assert_eq!(
            m,
            serde_json::json!({"type":"popup","kind":"select","x":120.0,"y":70.5,"width":200.0,"height":30.0,
                "selected":0,"options":[{"label":"Alpha","value":"a","disabled":false}]})
        );
        let date = r#"{"kind":"input","x":0,"y":0,"width":100,"height":20,"client_x":5,"client_y":5,
            "input_type":"datetime-local","value":"","min":"2020-01-01T00:00","max":"","step":""}"#;
        let (m, ty) = popup_message(date, (5.0, 5.0)).unwrap();
        assert_eq!(ty, Some(InputType::DatetimeLocal));
        let m: serde_json::Value = serde_json::from_str(&m).unwrap();
        assert_eq!(m["input_type"], "datetime-local");
        assert_eq!(m["min"], "2020-01-01T00:00");
        for bad in [
            "not json",
            r#"{"kind":"select","x":1,"y":1,"width":1,"height":1,"client_x":0,"client_y":0,"selected":0}"#,
            r#"{"kind":"select","x":1,"y":1,"width":1,"height":1,"client_x":0,"client_y":0,"selected":0,"options":[],"extra":1}"#,
            r#"{"kind":"select","x":"1","y":1,"width":1,"height":1,"client_x":0,"client_y":0,"selected":0,"options":[]}"#,
            r#"{"kind":"input","x":1,"y":1,"width":1,"height":1,"client_x":0,"client_y":0,"input_type":"text","value":"","min":"","max":"","step":""}"#,
        ] {
            assert_eq!(popup_message(bad, (0.0, 0.0)), None, "{bad}");
        }
        let huge = format!(
            r#"{{"kind":"select","x":1,"y":1,"width":1,"height":1,"client_x":0,"client_y":0,"selected":0,"options":[],"pad":"{}"}}"#,
            "x".repeat(MAX_REPORT_BYTES)
        );
        assert_eq!(popup_message(&huge, (0.0, 0.0)), None);
    }

    #[test]
    fn picker_values_are_checked_by_type() {
        use InputType::*;
        for (ty, ok, bad) in [
            (Date, "2026-12-01", "2026-12-1"),
            (Time, "13:45", "1:45"),
            (Time, "13:45:10.5", "13:45:10.5555"),
            (DatetimeLocal, "2026-12-01T13:45", "2026-12-01 13:45"),
            (Month, "2026-12", "2026-12-01"),
            (Week, "2026-W49", "2026-49"),
            (Color, "#12ab00", "red"),
        ] {
            assert!(ty.accepts(ok), "{ty:?} {ok}");
            assert!(!ty.accepts(bad), "{ty:?} {bad}");
        }
        assert!(Date.accepts(""), "clearing a date");
        assert!(!Color.accepts(""), "a colour always has a value");
        assert!(!Date.accepts("2026-12-01\"); alert(1); (\""));
    }
}
