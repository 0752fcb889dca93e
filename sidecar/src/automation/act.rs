//! Actions with trusted CDP input (`Input.dispatchMouseEvent`, `Input.dispatchKeyEvent`,
//! `Input.insertText`) at the element's visible point, after refusing what a user could not
//! do, and verified after where the page can tell (DESIGN §12). Never a DOM `.click()`.

use chromiumoxide::Page;
use serde_json::{json, Value};

use super::error::{AutomationError, Interruption};
use super::keys::{self, KeyPress};
use super::node::{check_not_covered, state, visible_point, Node};
use super::outcome::{what_happened, Watch};
use crate::browser::session::Session;
use crate::browser::session::{call, call_on};
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
    /// A right click (move, right press, right release): the page's `contextmenu`.
    RightClick,
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
            Action::RightClick => "right-click",
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

/// Runs `steps` (CDP calls, in order, on `session`: the page for input, a frame's session
/// for a call about one of its nodes) unless a JavaScript dialog opens in the tab
/// meanwhile: Chromium answers an input event only once its handlers have run, and a dialog
/// holds them. Returns true if a dialog opened (the remaining steps are not sent).
///
/// Cut short (a CDP error, or the action dropped because the human took over), a button or
/// key these steps pressed and did not yet release is released, so Chromium is not left
/// holding it; not when a dialog holds the press.
pub(super) async fn input(
    browser: &BrowserRef,
    session: impl Into<Session>,
    steps: Vec<(&'static str, Value)>,
) -> Result<bool, BrowserError> {
    let session: Session = session.into();
    let tab = session.page().target_id().as_ref().to_string();
    let mut view = browser.subscribe();
    let opened = view.wait_for(|s| s.dialog.as_ref().is_some_and(|d| d.tab == tab));
    let mut held = Held { session: session.clone(), release: None };
    let send = async {
        for (method, params) in steps {
            let release = release_of(method, &params);
            let ends_hold = matches!(params["type"].as_str(), Some("mouseReleased" | "keyUp"));
            if release.is_some() {
                held.release = release;
            }
            // Never during a crisp capture of a view (it maps input through its own scale).
            browser.dispatch_input(call(&session, method, params)).await?;
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
    if r.is_ok() {
        // Every step sent: a press left open is the caller's (a drag releases it in a later
        // call). Or a dialog holds the press: a release sent now would land once it is
        // answered and make a click nobody asked for (a user's release goes to the dialog).
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
    session: Session,
    release: Option<(&'static str, Value)>,
}

impl Drop for Held {
    fn drop(&mut self) {
        let Some((method, params)) = self.release.take() else { return };
        // Drop cannot await: sent on its own, bounded like every call.
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            let session = self.session.clone();
            rt.spawn(async move {
                let _ = call(&session, method, params).await;
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
    let st = state(node).await?;
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
            call(&node.session, "DOM.focus", json!({"backendNodeId": node.backend})).await.map_err(|e| match e {
                BrowserError::Cdp(_) => AutomationError::NotVisible(node.name.clone()),
                e => e.into(),
            })?;
            show_box(browser, node).await;
            match action {
                Action::Fill(text) => {
                    let mut watch = Watch::start(page, node).await?;
                    call_on(&node.session, &node.object, SELECT_ALL_JS, vec![]).await?;
                    let steps = if text.is_empty() {
                        key_events(&keys::parse("Delete").expect("Delete is a key"))
                    } else {
                        vec![("Input.insertText", json!({"text": text}))]
                    };
                    let d = input(browser, page, steps).await?;
                    if !d {
                        if let Some(why) = watch.changed(node).await? {
                            return Err(AutomationError::UnknownOutcome {
                                message: format!(
                                    "inserted the text into {}, {}: its value was not read back",
                                    node.name,
                                    what_happened(why, &node.name)
                                ),
                                reason: why,
                                delivered: json!({"length": text.chars().count()}),
                            });
                        }
                        verify_value(node, text, st.secret, &mut out).await?;
                    }
                    d
                }
                Action::Type(text) => type_text(browser, page, node, text, st.secret, &mut out).await?,
                Action::Press(k) => input(browser, page, key_events(k)).await?,
                _ => false,
            }
        }
        Action::Click | Action::DblClick | Action::RightClick | Action::Hover | Action::Check(_) => {
            let (x, y) = visible_point(node).await?;
            check_not_covered(node, x, y).await?;
            browser.presence().mark_point(crate::browser::Point { x, y });
            out["point"] = json!({"x": x, "y": y});
            // Groups of input, watched between them: a navigation begun by one stops the rest.
            let mut groups = vec![vec![mouse("mouseMoved", x, y, 0)]];
            match action {
                Action::Hover => {}
                Action::RightClick => {
                    let right = |kind| {
                        let (m, mut p) = mouse(kind, x, y, 1);
                        p["button"] = "right".into();
                        (m, p)
                    };
                    groups.push(vec![right("mousePressed"), right("mouseReleased")]);
                }
                Action::DblClick => {
                    groups.push(vec![mouse("mousePressed", x, y, 1), mouse("mouseReleased", x, y, 1)]);
                    groups.push(vec![mouse("mousePressed", x, y, 2), mouse("mouseReleased", x, y, 2)]);
                }
                Action::Check(want) if st.checked == Some(*want) => {
                    out["changed"] = false.into();
                    return Ok(with_dialog(out, browser, false));
                }
                _ => groups.push(vec![mouse("mousePressed", x, y, 1), mouse("mouseReleased", x, y, 1)]),
            }
            let mut watch = Watch::start(page, node).await?;
            let total = groups.len();
            let mut d = false;
            for (i, g) in groups.into_iter().enumerate() {
                d = input(browser, page, g).await?;
                if d {
                    break;
                }
                // After the last group a navigation is the click's outcome, unless there is
                // a state to read back.
                let last = i + 1 == total;
                if last && !matches!(action, Action::Check(_)) {
                    break;
                }
                if let Some(why) = watch.changed(node).await? {
                    let what = if last {
                        format!(
                            "clicked {}, {}: its state was not read back",
                            node.name,
                            what_happened(why, &node.name)
                        )
                    } else {
                        let kind = if i == 0 { "moved onto" } else { "clicked" };
                        format!(
                            "{kind} {}, {}: the rest of the {} was not sent",
                            node.name,
                            what_happened(why, &node.name),
                            action.name()
                        )
                    };
                    return Err(AutomationError::UnknownOutcome {
                        message: what,
                        reason: why,
                        delivered: json!({"steps": i + 1, "of": total}),
                    });
                }
            }
            if let (Action::Check(want), false) = (action, d) {
                let now = state(node).await?.checked;
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
async fn show_box(browser: &BrowserRef, node: &Node) {
    if let Ok(r) = call_on(&node.session, &node.object, super::scroll::VISIBLE_RECT_JS, vec![]).await {
        super::turn::mark_from(browser, &json!({"rect": r}));
    }
}

/// Puts the caret at the end of a field's text (`type` types after what is there).
const CARET_TO_END_JS: &str = r#"function(){
  const d = this.ownerDocument;
  if (this.isContentEditable) {
    const r = d.createRange(); r.selectNodeContents(this); r.collapse(false);
    const s = d.defaultView.getSelection(); s.removeAllRanges(); s.addRange(r);
    return;
  }
  try { const n = String(this.value ?? '').length; this.setSelectionRange(n, n); } catch (e) { /* email, number: no caret API */ }
}"#;

/// What a field should show after `typed` is typed at the end of `before`: Enter adds a
/// line in a textarea or contenteditable, nothing in an input.
fn typed_value(before: &str, typed: &str, multiline: bool) -> String {
    let keep = typed.chars().filter(|c| multiline || (*c != '\n' && *c != '\r'));
    before.chars().chain(keep.map(|c| if c == '\r' { '\n' } else { c })).collect()
}

/// `type`: one key press per character at the end of the field, watched after each (a
/// navigation or the focus moving stops the rest: `unknown_outcome` with what was sent),
/// then the value read back: it must be what was there plus what was typed, else
/// `mismatch` (a secret field: lengths only); `"navigated":true` instead when the last key
/// began a navigation (nothing left to read). Returns whether a dialog opened (the rest
/// is not sent).
async fn type_text(
    browser: &BrowserRef,
    page: &Page,
    node: &Node,
    text: &str,
    secret: bool,
    out: &mut Value,
) -> Result<bool, AutomationError> {
    let mut watch = Watch::start(page, node).await?;
    call_on(&node.session, &node.object, CARET_TO_END_JS, vec![]).await?;
    let before = call_on(&node.session, &node.object, VALUE_JS, vec![]).await?.as_str().unwrap_or("").to_string();
    let multiline = call_on(
        &node.session,
        &node.object,
        "function(){return this.tagName === 'TEXTAREA' || this.isContentEditable}",
        vec![],
    )
    .await?
        == Value::Bool(true);
    watch.expect_focus(node).await?;
    let chars: Vec<char> = text.chars().collect();
    for (i, c) in chars.iter().enumerate() {
        if input(browser, page, key_events(&keys::for_char(*c))).await? {
            out["delivered"] = json!({"keys": i + 1, "of": chars.len()});
            return Ok(true);
        }
        let why = watch.changed(node).await?;
        if i + 1 == chars.len() {
            // Every key was sent: a navigation the last one began (Enter submitting a form)
            // is its outcome, and the value can no longer be read; focus moving on after the
            // last key (a one-character box) leaves the value to verify.
            if why == Some(Interruption::Navigated) {
                out["navigated"] = true.into();
                return Ok(false);
            }
            break;
        }
        if let Some(why) = why {
            let sent: String = chars[..=i].iter().collect();
            let mut delivered = json!({"keys": i + 1, "of": chars.len()});
            let shown = if secret { String::new() } else { format!(" ({sent:?})") };
            if !secret {
                delivered["text"] = sent.clone().into();
            }
            return Err(AutomationError::UnknownOutcome {
                message: format!(
                    "typed {} of {} characters into {}{shown}, {}: the other {} were not sent",
                    i + 1,
                    chars.len(),
                    node.name,
                    what_happened(why, &node.name),
                    chars.len() - i - 1
                ),
                reason: why,
                delivered,
            });
        }
    }
    let got = call_on(&node.session, &node.object, VALUE_JS, vec![]).await?.as_str().unwrap_or("").to_string();
    let want = typed_value(&before, text, multiline);
    // innerText of a contenteditable ends lines its own way: trailing newlines do not count.
    let same = if multiline { got.trim_end_matches('\n') == want.trim_end_matches('\n') } else { got == want };
    let observed = if secret { json!({"length": got.chars().count()}) } else { json!({"value": got}) };
    if !same {
        let message = if secret {
            format!(
                "typed {} characters into {} but it holds {}, not {}: the page changed or refused keys",
                chars.len(),
                node.name,
                got.chars().count(),
                want.chars().count()
            )
        } else {
            format!(
                "typed {text:?} into {} but it shows {got:?}, not {want:?}: the page changed or refused keys",
                node.name
            )
        };
        return Err(AutomationError::Mismatch { message, observed });
    }
    for (k, v) in observed.as_object().cloned().unwrap_or_default() {
        out[k] = v;
    }
    Ok(false)
}

/// Reads the field back after a fill: `mismatch` (with what it shows; a secret field's
/// length only) when it is not `want`.
async fn verify_value(node: &Node, want: &str, secret: bool, out: &mut Value) -> Result<(), AutomationError> {
    let v = call_on(&node.session, &node.object, VALUE_JS, vec![]).await?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_text_lands_after_what_was_there() {
        assert_eq!(typed_value("ab", "cd", false), "abcd");
        assert_eq!(typed_value("", "a\nb", false), "ab", "Enter adds no line to an input");
        assert_eq!(typed_value("x", "a\r\nb", true), "xa\n\nb");
    }
}
