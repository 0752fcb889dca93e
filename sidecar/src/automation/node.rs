//! From a ref to a live node, or a refusal: is the ref's document, frame, tab and Chromium
//! still there, and the node in its document (else `stale_ref` with the reason)? Then what a
//! user could do with it: its visible point after scrolling it into view, what covers that
//! point, whether it is disabled or editable.

use chromiumoxide::Page;
use serde_json::{json, Value};

use super::cdp::{call, call_on};
use super::error::{AutomationError, StaleReason};
use super::refs::{without_fragment, Minted};
use super::snapshot::frames;
use crate::browser::{BrowserError, BrowserRef};

/// A ref resolved to a node that is still in its document.
#[derive(Debug, Clone)]
pub struct Node {
    /// The ref as written (`e3`).
    pub name: String,
    /// The node's `backendNodeId`.
    pub backend: i64,
    /// A `Runtime.RemoteObjectId` for it in its frame's context.
    pub object: String,
    /// The id of the frame whose document holds it.
    pub frame: String,
}

/// What the page says about an element before it is acted on.
#[derive(Debug, Clone, PartialEq)]
pub struct ElementState {
    /// Disabled (`:disabled`, `aria-disabled`) or inert.
    pub disabled: bool,
    /// Takes text (text-like input, textarea, contenteditable; not read-only).
    pub editable: bool,
    /// A password or payment-card field.
    pub secret: bool,
    /// A checkbox, radio or switch, and whether it is checked.
    pub checked: Option<bool>,
}

/// Checks that `minted` still names a node and resolves it (DESIGN §12). The order of the
/// checks gives the most telling reason: relaunch, tab, frame, document, node.
pub async fn resolve(browser: &BrowserRef, page: &Page, name: &str, minted: &Minted) -> Result<Node, AutomationError> {
    let stale = |reason| AutomationError::StaleRef { r#ref: name.to_string(), reason };
    let key = &minted.key;
    if browser.generation() != key.generation {
        return Err(stale(StaleReason::Relaunched));
    }
    let view = browser.subscribe().borrow().clone();
    if !view.tabs.iter().any(|t| t.id == key.tab) {
        return Err(stale(StaleReason::TabClosed));
    }
    if view.active.as_deref() != Some(key.tab.as_str()) {
        return Err(AutomationError::NotActiveTab(name.to_string()));
    }
    let tree = frames(&call(page, "Page.getFrameTree", json!({})).await?);
    let Some(frame) = tree.iter().find(|f| f.id == key.frame) else {
        return Err(stale(StaleReason::FrameDetached));
    };
    if frame.loader != key.loader {
        let same_url = without_fragment(&frame.url) == without_fragment(&minted.url);
        return Err(stale(if same_url { StaleReason::DocumentReplaced } else { StaleReason::Navigated }));
    }
    let object = match call(page, "DOM.resolveNode", json!({"backendNodeId": key.backend})).await {
        Ok(v) => v["object"]["objectId"].as_str().map(str::to_string),
        Err(BrowserError::Cdp(_)) => None,
        Err(e) => return Err(e.into()),
    };
    let Some(object) = object else { return Err(stale(StaleReason::NodeRemoved)) };
    if call_on(page, &object, "function(){return this.isConnected}", vec![]).await? != Value::Bool(true) {
        return Err(stale(StaleReason::NodeRemoved));
    }
    Ok(Node { name: name.to_string(), backend: key.backend, object, frame: key.frame.clone() })
}

const STATE_JS: &str = r#"function(){
  const el = this.nodeType === 1 ? this : this.parentElement;
  if (!el) return {disabled:false, editable:false, secret:false, checked:null};
  const tag = el.tagName.toLowerCase();
  const type = (el.getAttribute('type') || '').toLowerCase();
  const texty = ['', 'text', 'search', 'email', 'url', 'tel', 'password', 'number'];
  const disabled = el.matches(':disabled') || !!el.closest('[aria-disabled="true"]') || !!el.closest('[inert]');
  const editable = ((tag === 'input' && texty.includes(type)) || tag === 'textarea') ? !el.readOnly && !el.disabled : el.isContentEditable;
  const ac = (el.getAttribute('autocomplete') || '').toLowerCase();
  const secret = type === 'password' || ac.split(/\s+/).some(t => t.startsWith('cc-'));
  let checked = null;
  if (tag === 'input' && (type === 'checkbox' || type === 'radio')) checked = el.checked;
  else if (['checkbox', 'radio', 'switch'].includes(el.getAttribute('role'))) checked = el.getAttribute('aria-checked') === 'true';
  return {disabled, editable, secret, checked};
}"#;

/// Reads the element's state ([`ElementState`]).
pub async fn state(page: &Page, node: &Node) -> Result<ElementState, AutomationError> {
    let v = call_on(page, &node.object, STATE_JS, vec![]).await?;
    Ok(ElementState {
        disabled: v["disabled"].as_bool().unwrap_or(false),
        editable: v["editable"].as_bool().unwrap_or(false),
        secret: v["secret"].as_bool().unwrap_or(false),
        checked: v["checked"].as_bool(),
    })
}

/// Scrolls the node into view and returns its visible point in top-level viewport CSS px:
/// the center of the first of its content quads that is still visible once clipped to the
/// viewport. `element_not_visible` when none is (hidden, zero-size, clipped away).
pub async fn visible_point(page: &Page, node: &Node) -> Result<(f64, f64), AutomationError> {
    let hidden = || AutomationError::NotVisible(node.name.clone());
    let style = call_on(
        page,
        &node.object,
        "function(){const e=this.nodeType===1?this:this.parentElement;const s=getComputedStyle(e);return s.visibility==='visible'&&Number(s.opacity)>0}",
        vec![],
    )
    .await?;
    if style != Value::Bool(true) {
        return Err(hidden());
    }
    // Fails for a node with no layout object (display: none).
    if call(page, "DOM.scrollIntoViewIfNeeded", json!({"backendNodeId": node.backend})).await.is_err() {
        return Err(hidden());
    }
    let quads = match call(page, "DOM.getContentQuads", json!({"backendNodeId": node.backend})).await {
        Ok(v) => v["quads"].as_array().cloned().unwrap_or_default(),
        Err(_) => return Err(hidden()),
    };
    let m = call(page, "Page.getLayoutMetrics", json!({})).await?;
    let vw = m["cssLayoutViewport"]["clientWidth"].as_f64().unwrap_or(0.0);
    let vh = m["cssLayoutViewport"]["clientHeight"].as_f64().unwrap_or(0.0);
    for q in quads {
        let p: Vec<f64> = q.as_array().into_iter().flatten().filter_map(Value::as_f64).collect();
        if p.len() != 8 {
            continue;
        }
        let xs = [p[0], p[2], p[4], p[6]];
        let ys = [p[1], p[3], p[5], p[7]];
        let (x0, x1) =
            (xs.iter().cloned().fold(f64::MAX, f64::min).max(0.0), xs.iter().cloned().fold(f64::MIN, f64::max).min(vw));
        let (y0, y1) =
            (ys.iter().cloned().fold(f64::MAX, f64::min).max(0.0), ys.iter().cloned().fold(f64::MIN, f64::max).min(vh));
        if x1 - x0 >= 1.0 && y1 - y0 >= 1.0 {
            return Ok(((x0 + x1) / 2.0, (y0 + y1) / 2.0));
        }
    }
    Err(hidden())
}

const COVER_JS: &str = r#"function(h){
  for (let n = h; n; n = n.parentNode || n.host) { if (n === this) return null; }
  if (this.labels && Array.from(this.labels).some(l => l === h || l.contains(h))) return null;
  const e = h.nodeType === 1 ? h : h.parentElement;
  if (!e) return 'a node';
  let d = e;
  for (let n = e; n && n !== document.body && n !== document.documentElement; n = n.parentElement) {
    if (n.contains(this)) break;
    if (n.id) { d = n; break; }
  }
  const txt = (d.innerText || d.textContent || '').trim().replace(/\s+/g, ' ');
  const t = txt.length > 40 ? txt.slice(0, 39) + '\u2026' : txt;
  const name = d.tagName.toLowerCase() + (d.id ? '#' + d.id : (d.classList.length ? '.' + d.classList[0] : ''));
  return t ? name + ' ' + JSON.stringify(t) : name;
}"#;

/// Hit-tests `(x, y)`: `element_occluded` naming the covering element unless the node (or
/// something inside it, or one of its labels) is on top there.
pub async fn check_not_covered(page: &Page, node: &Node, x: f64, y: f64) -> Result<(), AutomationError> {
    let hit = call(
        page,
        "DOM.getNodeForLocation",
        json!({"x": x.floor() as i64, "y": y.floor() as i64, "includeUserAgentShadowDOM": false, "ignorePointerEventsNone": false}),
    )
    .await?;
    let Some(hit_backend) = hit["backendNodeId"].as_i64() else { return Ok(()) };
    if hit_backend == node.backend {
        return Ok(());
    }
    let hit_obj = call(page, "DOM.resolveNode", json!({"backendNodeId": hit_backend})).await?;
    let Some(hit_obj) = hit_obj["object"]["objectId"].as_str() else { return Ok(()) };
    let by = match call_on(page, &node.object, COVER_JS, vec![json!({"objectId": hit_obj})]).await {
        Ok(Value::Null) => return Ok(()),
        Ok(v) => v.as_str().unwrap_or("another element").to_string(),
        // The hit is in another frame's context.
        Err(BrowserError::Cdp(_)) => "an element of another frame".to_string(),
        Err(e) => return Err(e.into()),
    };
    Err(AutomationError::Occluded { r#ref: node.name.clone(), by })
}
