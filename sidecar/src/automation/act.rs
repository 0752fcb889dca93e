//! Actions with trusted CDP input (`Input.dispatchMouseEvent`, `Input.dispatchKeyEvent`,
//! `Input.insertText`) at the element's visible point, after refusing what a user could not
//! do, and verified after where the page can tell (DESIGN §12). Never a DOM `.click()`.

use chromiumoxide::Page;
use serde_json::{json, Value};

use super::cdp::{call, call_on};
use super::error::AutomationError;
use super::keys::{self, KeyPress};
use super::node::{check_not_covered, state, visible_point, Node};
use crate::browser::{BrowserError, BrowserRef};

/// Longest text `fill` takes, in bytes.
pub const MAX_FILL_BYTES: usize = 64 * 1024;
/// Longest text `type` takes, in characters (each is a key press).
pub const MAX_TYPE_CHARS: usize = 4096;

/// What to do.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// A left click (move, press, release).
    Click,
    /// Two clicks, the second with click count 2.
    DblClick,
    /// Move the mouse onto it.
    Hover,
    /// Focus it (`DOM.focus`).
    Focus,
    /// Click it unless it already is in this state; verify after.
    Check(bool),
    /// Replace its value: focus, select all, `Input.insertText`; read back.
    Fill(String),
    /// Key presses for each character, at the end of what is there.
    Type(String),
    /// One key press (on the focused element, or on the ref after focusing it).
    Press(KeyPress),
}

impl Action {
    /// The verb's name.
    pub fn name(&self) -> &'static str {
        match self {
            Action::Click => "click",
            Action::DblClick => "dblclick",
            Action::Hover => "hover",
            Action::Focus => "focus",
            Action::Check(true) => "check",
            Action::Check(false) => "uncheck",
            Action::Fill(_) => "fill",
            Action::Type(_) => "type",
            Action::Press(_) => "press",
        }
    }
}

/// Runs `steps` (CDP input calls, in order) unless a JavaScript dialog opens in `page`'s tab
/// meanwhile: Chromium answers an input event only once its handlers have run, and a dialog
/// holds them. Returns true if a dialog opened (the remaining steps are not sent).
///
/// Cut short (a CDP error, or the action dropped because the human took over), a button or
/// key pressed and not yet released is released, so Chromium is not left holding it; not
/// when a dialog holds the press.
pub(super) async fn input(
    browser: &BrowserRef,
    page: &Page,
    steps: Vec<(&'static str, Value)>,
) -> Result<bool, BrowserError> {
    let tab = page.target_id().as_ref().to_string();
    let mut view = browser.subscribe();
    let opened = view.wait_for(|s| s.dialog.as_ref().is_some_and(|d| d.tab == tab));
    let mut held = Held { page: page.clone(), release: None };
    let send = async {
        for (method, params) in steps {
            let release = release_of(method, &params);
            let ends_hold = matches!(params["type"].as_str(), Some("mouseReleased" | "keyUp"));
            if release.is_some() {
                held.release = release;
            }
            call(page, method, params).await?;
            if ends_hold {
                held.release = None;
            }
        }
        Ok::<(), BrowserError>(())
    };
    let r = tokio::select! {
        r = send => r.map(|()| false),
        _ = opened => Ok(true),
    };
    if matches!(r, Ok(true)) {
        // The dialog holds the press: a release sent now would land once it is answered
        // and make a click nobody asked for (a user's release goes to the dialog).
        held.release = None;
    }
    r
}

/// The release of a press step (`mousePressed` → `mouseReleased`, a key down → `keyUp`).
fn release_of(method: &'static str, params: &Value) -> Option<(&'static str, Value)> {
    let mut p = params.clone();
    match params["type"].as_str()? {
        "mousePressed" => p["type"] = "mouseReleased".into(),
        "keyDown" | "rawKeyDown" => {
            p["type"] = "keyUp".into();
            if let Some(o) = p.as_object_mut() {
                o.remove("text");
                o.remove("unmodifiedText");
            }
        }
        _ => return None,
    }
    Some((method, p))
}

/// A press sent without its release yet: released when dropped (the input was cut short).
struct Held {
    page: Page,
    release: Option<(&'static str, Value)>,
}

impl Drop for Held {
    fn drop(&mut self) {
        let Some((method, params)) = self.release.take() else { return };
        // Drop cannot await: sent on its own, bounded like every call.
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            let page = self.page.clone();
            rt.spawn(async move {
                let _ = call(&page, method, params).await;
            });
        }
    }
}

fn mouse(kind: &str, x: f64, y: f64, clicks: i64) -> (&'static str, Value) {
    let mut p = json!({"type": kind, "x": x, "y": y, "modifiers": 0});
    if kind != "mouseMoved" {
        p["button"] = "left".into();
        p["clickCount"] = clicks.into();
    }
    ("Input.dispatchMouseEvent", p)
}

pub(super) fn key_events(k: &KeyPress) -> Vec<(&'static str, Value)> {
    let down = if k.text.is_empty() { "rawKeyDown" } else { "keyDown" };
    vec![
        (
            "Input.dispatchKeyEvent",
            json!({"type": down, "key": k.key, "code": k.code, "text": k.text, "unmodifiedText": k.text,
                   "windowsVirtualKeyCode": k.vk, "modifiers": k.modifiers}),
        ),
        (
            "Input.dispatchKeyEvent",
            json!({"type": "keyUp", "key": k.key, "code": k.code, "windowsVirtualKeyCode": k.vk, "modifiers": k.modifiers}),
        ),
    ]
}

const VALUE_JS: &str = "function(){return this.isContentEditable ? this.innerText : String(this.value ?? '')}";
const SELECT_ALL_JS: &str = "function(){ if (typeof this.select === 'function') { this.select(); return; } const r = document.createRange(); r.selectNodeContents(this); const s = getSelection(); s.removeAllRanges(); s.addRange(r); }";

/// Performs `action` on `node` (or, for `press` without a ref, on the focused element) and
/// returns the answer's fields: `dialog` (a dialog the action opened, or null), `point`,
/// and per action `changed` (check), `value` or `length` (fill, type: a secret field's
/// length only).
pub async fn perform(
    browser: &BrowserRef,
    page: &Page,
    node: Option<&Node>,
    action: &Action,
) -> Result<Value, AutomationError> {
    let Some(node) = node else {
        let Action::Press(k) = action else {
            return Err(AutomationError::BadRequest("this action needs a ref".into()));
        };
        let dialog = input(browser, page, key_events(k)).await?;
        return Ok(json!({"dialog": dialog_of(browser, dialog)}));
    };
    let st = state(page, node).await?;
    if st.disabled {
        return Err(AutomationError::Disabled(node.name.clone()));
    }
    match action {
        Action::Fill(_) | Action::Type(_) if !st.editable => {
            return Err(AutomationError::NotEditable(node.name.clone()))
        }
        Action::Check(_) if st.checked.is_none() => {
            return Err(AutomationError::BadRequest(format!("{} is not a checkbox, radio or switch", node.name)))
        }
        _ => {}
    }
    let mut out = json!({});
    let dialog = match action {
        Action::Focus | Action::Fill(_) | Action::Type(_) | Action::Press(_) => {
            call(page, "DOM.focus", json!({"backendNodeId": node.backend})).await.map_err(|e| match e {
                BrowserError::Cdp(_) => AutomationError::NotVisible(node.name.clone()),
                e => e.into(),
            })?;
            show_box(browser, page, node).await;
            match action {
                Action::Fill(text) => {
                    call_on(page, &node.object, SELECT_ALL_JS, vec![]).await?;
                    let steps = if text.is_empty() {
                        key_events(&keys::parse("Delete").expect("Delete is a key"))
                    } else {
                        vec![("Input.insertText", json!({"text": text}))]
                    };
                    let d = input(browser, page, steps).await?;
                    if !d {
                        verify_value(page, node, text, st.secret, &mut out).await?;
                    }
                    d
                }
                Action::Type(text) => {
                    let steps = text.chars().flat_map(|c| key_events(&keys::for_char(c))).collect();
                    let d = input(browser, page, steps).await?;
                    if !d {
                        let v = call_on(page, &node.object, VALUE_JS, vec![]).await?;
                        let v = v.as_str().unwrap_or("");
                        if st.secret {
                            out["length"] = v.chars().count().into();
                        } else {
                            out["value"] = v.into();
                        }
                    }
                    d
                }
                Action::Press(k) => input(browser, page, key_events(k)).await?,
                _ => false,
            }
        }
        Action::Click | Action::DblClick | Action::Hover | Action::Check(_) => {
            let (x, y) = visible_point(page, node).await?;
            check_not_covered(page, node, x, y).await?;
            browser.presence().mark_point(crate::browser::Point { x, y });
            out["point"] = json!({"x": x, "y": y});
            let mut steps = vec![mouse("mouseMoved", x, y, 0)];
            match action {
                Action::Hover => {}
                Action::DblClick => {
                    steps.extend([mouse("mousePressed", x, y, 1), mouse("mouseReleased", x, y, 1)]);
                    steps.extend([mouse("mousePressed", x, y, 2), mouse("mouseReleased", x, y, 2)]);
                }
                Action::Check(want) if st.checked == Some(*want) => {
                    out["changed"] = false.into();
                    return Ok(with_dialog(out, browser, false));
                }
                _ => steps.extend([mouse("mousePressed", x, y, 1), mouse("mouseReleased", x, y, 1)]),
            }
            let d = input(browser, page, steps).await?;
            if let (Action::Check(want), false) = (action, d) {
                let now = state(page, node).await?.checked;
                if now != Some(*want) {
                    return Err(AutomationError::Mismatch {
                        message: format!(
                            "clicked {} but it is still {}",
                            node.name,
                            if now == Some(true) { "checked" } else { "unchecked" }
                        ),
                        observed: json!({"checked": now}),
                    });
                }
                out["changed"] = true.into();
            }
            d
        }
    };
    Ok(with_dialog(out, browser, dialog))
}

/// Shows the views the box of the element keyboard input goes to (its visible part, in
/// top-level viewport CSS px); nothing when it has none.
async fn show_box(browser: &BrowserRef, page: &Page, node: &Node) {
    if let Ok(r) = call_on(page, &node.object, super::scroll::VISIBLE_RECT_JS, vec![]).await {
        super::turn::mark_from(browser, &json!({"rect": r}));
    }
}

/// Reads the field back after a fill: `mismatch` (with what it shows; a secret field's
/// length only) when it is not `want`.
async fn verify_value(
    page: &Page,
    node: &Node,
    want: &str,
    secret: bool,
    out: &mut Value,
) -> Result<(), AutomationError> {
    let v = call_on(page, &node.object, VALUE_JS, vec![]).await?;
    let got = v.as_str().unwrap_or("");
    let observed = if secret { json!({"length": got.chars().count()}) } else { json!({"value": got}) };
    if got != want {
        let message = if secret {
            format!(
                "{} holds {} characters after the fill, not {}: the page changed or refused it",
                node.name,
                got.chars().count(),
                want.chars().count()
            )
        } else {
            format!("{} shows {:?} after the fill, not {:?}: the page changed or refused it", node.name, got, want)
        };
        return Err(AutomationError::Mismatch { message, observed });
    }
    for (k, v) in observed.as_object().cloned().unwrap_or_default() {
        out[k] = v;
    }
    Ok(())
}

fn dialog_of(browser: &BrowserRef, opened: bool) -> Value {
    if !opened {
        return Value::Null;
    }
    json!(browser.subscribe().borrow().dialog)
}

pub(super) fn with_dialog(mut out: Value, browser: &BrowserRef, opened: bool) -> Value {
    out["dialog"] = dialog_of(browser, opened);
    out
}
