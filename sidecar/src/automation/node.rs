//! From a ref to a live node, or a refusal: is the ref's document, frame, tab and Chromium
//! still there, and the node in its document (else `stale_ref` with the reason)? Then what a
//! user could do with it: its visible point after scrolling it into view, what covers that
//! point, whether it is disabled or editable.

use chromiumoxide::Page;
use serde_json::{json, Value};

use super::error::{AutomationError, StaleReason};
use super::frames::{hit_test, Rect};
use super::refs::{without_fragment, Minted};
use super::snapshot::frames;
use super::walk::WORLD;
use crate::browser::session::Session;
use crate::browser::session::{call, call_on};
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
    /// The session of its frame's process (the tab's, or an out-of-process frame's): where
    /// `backend` and `object` mean this node.
    pub session: Session,
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
/// checks gives the most telling reason: relaunch, tab, frame, document, node. A node of an
/// out-of-process frame is reached through a child session on each frame target on the way
/// ([`Minted::targets`]); a frame whose owner is gone is `frame_detached`.
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
    let mut session = Session::from(page);
    for target in &minted.targets {
        let Some(owner) = session.frame_owner(target).await? else { return Err(stale(StaleReason::FrameDetached)) };
        session = match session.attach(target, owner).await {
            Ok(s) => s,
            Err(BrowserError::Cdp(_)) => return Err(stale(StaleReason::FrameDetached)),
            Err(e) => return Err(e.into()),
        };
    }
    let tree = frames(&call(&session, "Page.getFrameTree", json!({})).await?);
    let Some(frame) = tree.iter().find(|f| f.id == key.frame) else {
        return Err(stale(StaleReason::FrameDetached));
    };
    if frame.loader != key.loader {
        let same_url = without_fragment(&frame.url) == without_fragment(&minted.url);
        return Err(stale(if same_url { StaleReason::DocumentReplaced } else { StaleReason::Navigated }));
    }
    let object = match call(&session, "DOM.resolveNode", json!({"backendNodeId": key.backend})).await {
        Ok(v) => v["object"]["objectId"].as_str().map(str::to_string),
        Err(BrowserError::Cdp(_)) => None,
        Err(e) => return Err(e.into()),
    };
    let Some(object) = object else { return Err(stale(StaleReason::NodeRemoved)) };
    if call_on(&session, &object, "function(){return this.isConnected}", vec![]).await? != Value::Bool(true) {
        return Err(stale(StaleReason::NodeRemoved));
    }
    Ok(Node { name: name.to_string(), backend: key.backend, object, frame: key.frame.clone(), session })
}

/// The element-state read: `secret.js` (secrecy follows the field, and is remembered in
/// Porthole's isolated world, where this runs), then the state itself.
const STATE_JS: &str = concat!(
    "function () {\n",
    include_str!("secret.js"),
    "\nreturn (",
    r#"function(){
  const el = this.nodeType === 1 ? this : this.parentElement;
  if (!el) return {disabled:false, editable:false, secret:false, checked:null};
  const tag = el.tagName.toLowerCase();
  const type = (el.getAttribute('type') || '').toLowerCase();
  const texty = ['', 'text', 'search', 'email', 'url', 'tel', 'password', 'number'];
  const disabled = el.matches(':disabled') || !!el.closest('[aria-disabled="true"]') || !!el.closest('[inert]');
  const editable = ((tag === 'input' && texty.includes(type)) || tag === 'textarea') ? !el.readOnly && !el.disabled : el.isContentEditable;
  const secret = secretField(el);
  let checked = null;
  if (tag === 'input' && (type === 'checkbox' || type === 'radio')) checked = el.checked;
  else if (['checkbox', 'radio', 'switch'].includes(el.getAttribute('role'))) checked = el.getAttribute('aria-checked') === 'true';
  return {disabled, editable, secret, checked};
}"#,
    ").call(this);\n}"
);

/// Reads the element's state ([`ElementState`]), in Porthole's isolated world of its frame
/// (where the snapshot's walk remembered which fields were passwords).
pub async fn state(node: &Node) -> Result<ElementState, AutomationError> {
    let w = call(&node.session, "Page.createIsolatedWorld", json!({"frameId": node.frame, "worldName": WORLD})).await?;
    let resolved = call(
        &node.session,
        "DOM.resolveNode",
        json!({"backendNodeId": node.backend, "executionContextId": w["executionContextId"]}),
    )
    .await?;
    let Some(object) = resolved["object"]["objectId"].as_str() else {
        return Err(AutomationError::StaleRef { r#ref: node.name.clone(), reason: StaleReason::NodeRemoved });
    };
    let v = call_on(&node.session, object, STATE_JS, vec![]).await?;
    Ok(ElementState {
        disabled: v["disabled"].as_bool().unwrap_or(false),
        editable: v["editable"].as_bool().unwrap_or(false),
        secret: v["secret"].as_bool().unwrap_or(false),
        checked: v["checked"].as_bool(),
    })
}

/// Scrolls the node into view and returns its visible point in top-level viewport CSS px:
/// the center of the first of its content quads that is still visible once clipped to its
/// frame's viewport and, for an out-of-process frame, to each frame owner's shown content box
/// on the way up ([`Session::to_top`]). `element_not_visible` when none is (hidden,
/// zero-size, clipped away).
pub async fn visible_point(node: &Node) -> Result<(f64, f64), AutomationError> {
    let hidden = || AutomationError::NotVisible(node.name.clone());
    let s = &node.session;
    let style = call_on(
        s,
        &node.object,
        "function(){const e=this.nodeType===1?this:this.parentElement;const s=getComputedStyle(e);return s.visibility==='visible'&&Number(s.opacity)>0}",
        vec![],
    )
    .await?;
    if style != Value::Bool(true) {
        return Err(hidden());
    }
    // Fails for a node with no layout object (display: none). Scrolls the frames above an
    // out-of-process frame too: Chromium passes the scroll up across processes.
    if call(s, "DOM.scrollIntoViewIfNeeded", json!({"backendNodeId": node.backend})).await.is_err() {
        return Err(hidden());
    }
    let quads = match call(s, "DOM.getContentQuads", json!({"backendNodeId": node.backend})).await {
        Ok(v) => v["quads"].as_array().cloned().unwrap_or_default(),
        Err(_) => return Err(hidden()),
    };
    let (vw, vh, _, _) = s.viewport().await?;
    let viewport = Rect { x: 0.0, y: 0.0, width: vw, height: vh };
    for q in quads {
        let p: Vec<f64> = q.as_array().into_iter().flatten().filter_map(Value::as_f64).collect();
        if p.len() != 8 {
            continue;
        }
        let xs = [p[0], p[2], p[4], p[6]];
        let ys = [p[1], p[3], p[5], p[7]];
        let (x0, x1) = (xs.iter().cloned().fold(f64::MAX, f64::min), xs.iter().cloned().fold(f64::MIN, f64::max));
        let (y0, y1) = (ys.iter().cloned().fold(f64::MAX, f64::min), ys.iter().cloned().fold(f64::MIN, f64::max));
        let Some(r) = (Rect { x: x0, y: y0, width: x1 - x0, height: y1 - y0 }).clip(viewport) else { continue };
        if let Some(r) = s.to_top(r).await? {
            return Ok((r.x + r.width / 2.0, r.y + r.height / 2.0));
        }
    }
    Err(hidden())
}

/// Called on the element with the hit node: `null` when the hit is the element, inside it
/// or one of its labels; else the covering element (the outermost dialog around the hit that
/// does not hold the element, else the nearest ancestor with an id, else the hit's element; a
/// backdrop holding one dialog gives that dialog), or a string when it has none.
const COVER_JS: &str = r#"function(h){
  for (let n = h; n; n = n.parentNode || n.host) { if (n === this) return null; }
  if (this.labels && Array.from(this.labels).some(l => l === h || l.contains(h))) return null;
  const e = h.nodeType === 1 ? h : h.parentElement;
  if (!e) return 'a node';
  const inner = n => n && n !== document.body && n !== document.documentElement;
  const dialog = n => n.tagName === 'DIALOG' || ['dialog', 'alertdialog'].includes(n.getAttribute('role'));
  let d = null;
  for (let n = e; inner(n); n = n.parentElement) {
    if (n.contains(this)) break;
    if (dialog(n)) d = n;
  }
  if (!d) {
    d = e;
    for (let n = e; inner(n); n = n.parentElement) {
      if (n.contains(this)) break;
      if (n.id) { d = n; break; }
    }
    const q = Array.from(d.querySelectorAll('dialog,[role=dialog],[role=alertdialog]')).filter(x => !x.contains(this));
    if (q.length === 1 && !d.contains(this)) d = q[0];
  }
  return d;
}"#;

/// Called on the covering element: its tag, `#id` or first class, and its first 40
/// characters of text (`div#overlay "Cookie banner"`).
const LABEL_JS: &str = r#"function(){
  const d = this;
  const txt = (d.innerText || d.textContent || '').trim().replace(/\s+/g, ' ');
  const t = txt.length > 40 ? txt.slice(0, 39) + '\u2026' : txt;
  const name = d.tagName.toLowerCase() + (d.id ? '#' + d.id : (d.classList.length ? '.' + d.classList[0] : ''));
  return t ? name + ' ' + JSON.stringify(t) : name;
}"#;

/// What covers an element: said by tag, id and text (`by`), and, when it is in the element's
/// own document, its node there (`backend`), for [`super::Automation`] to name it as the
/// snapshot does and give its controls' refs.
#[derive(Debug, Clone, PartialEq)]
pub struct Cover {
    /// `div#overlay "Cookie banner"`, `a node`, `an element of another frame`.
    pub by: String,
    /// The covering element's frame and `backendNodeId`, when it is of the element's frame.
    pub node: Option<(String, i64)>,
}

/// Hit-tests top-level point `(x, y)`: `element_occluded` naming the covering element unless
/// the node (or something inside it, or one of its labels) is on top there. For a node of an
/// out-of-process frame, each frame owner on the way must be on top in its parent first.
pub async fn check_not_covered(node: &Node, x: f64, y: f64) -> Result<(), AutomationError> {
    let occluded = |c: Cover| AutomationError::Occluded {
        r#ref: node.name.clone(),
        by: c.by,
        cover: c.node,
        controls: Vec::new(),
    };
    let (x, y) = match node.session.hit_down(x, y).await? {
        Ok(p) => p,
        Err(c) => {
            let owner = call(&c.session, "DOM.resolveNode", json!({"backendNodeId": c.owner})).await?;
            let owner = owner["object"]["objectId"].as_str().unwrap_or("").to_string();
            // A frame owner covered in its parent's process: said by its text only.
            return match covering(&c.session, &owner, c.hit, None).await? {
                None => Ok(()),
                Some(by) => Err(occluded(by)),
            };
        }
    };
    let Some(hit) = hit_test(&node.session, x, y).await? else { return Ok(()) };
    if hit == node.backend {
        return Ok(());
    }
    match covering(&node.session, &node.object, hit, Some(&node.frame)).await? {
        None => Ok(()),
        Some(by) => Err(occluded(by)),
    }
}

/// What node `hit` is, when it covers the element `object` (both of `session`): `None` when
/// it is the element, inside it, or one of its labels. With `frame` (the element's frame),
/// the covering element's node too when it is of that document.
async fn covering(
    session: &Session,
    object: &str,
    hit: i64,
    frame: Option<&str>,
) -> Result<Option<Cover>, AutomationError> {
    let by = |s: &str| Ok(Some(Cover { by: s.to_string(), node: None }));
    let hit_obj = call(session, "DOM.resolveNode", json!({"backendNodeId": hit})).await?;
    let Some(hit_obj) = hit_obj["object"]["objectId"].as_str() else { return Ok(None) };
    let params = json!({"objectId": object, "functionDeclaration": COVER_JS,
                        "arguments": [{"objectId": hit_obj}], "returnByValue": false});
    let r = match call(session, "Runtime.callFunctionOn", params).await {
        Ok(r) if r.get("exceptionDetails").is_none() => r,
        // The hit is in another frame's context.
        Ok(_) | Err(BrowserError::Cdp(_)) => return by("an element of another frame"),
        Err(e) => return Err(e.into()),
    };
    let Some(cover) = r["result"]["objectId"].as_str() else {
        return match r["result"]["value"].as_str() {
            Some(s) => by(s),
            None => Ok(None),
        };
    };
    let label = match call_on(session, cover, LABEL_JS, vec![]).await {
        Ok(v) => v.as_str().unwrap_or("another element").to_string(),
        Err(BrowserError::Cdp(_)) => "another element".to_string(),
        Err(e) => return Err(e.into()),
    };
    let node = match frame {
        Some(f) => match call(session, "DOM.describeNode", json!({"objectId": cover})).await {
            Ok(d) => d["node"]["backendNodeId"].as_i64().map(|b| (f.to_string(), b)),
            Err(BrowserError::Cdp(_)) => None,
            Err(e) => return Err(e.into()),
        },
        None => None,
    };
    Ok(Some(Cover { by: label, node }))
}
