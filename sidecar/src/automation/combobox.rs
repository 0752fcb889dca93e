//! `select REF NAME` on a custom ARIA combobox or listbox (issue 25 item 5; WAI-ARIA 1.2
//! `combobox`, `listbox`, `option`, and the APG's combobox pattern): the options are the
//! page's own elements, so they are chosen as a user does, by clicks. A combobox is opened
//! with a click (unless `aria-expanded` is already true), its listbox found (`aria-controls`,
//! `aria-owns`, else the one visible `listbox` that appeared), the option whose accessible
//! name is NAME clicked; a listbox's option is clicked directly. Then the choice is read back:
//! the option is `aria-selected`, or the combobox shows NAME (its value or its text).

use std::time::Duration;

use chromiumoxide::Page;
use serde_json::{json, Value};

use super::act::{perform, Action};
use super::error::AutomationError;
use super::node::Node;
use crate::browser::session::{call, call_on};
use crate::browser::BrowserRef;

/// How long a combobox's listbox is waited for after the click that opens it, in ms.
const OPEN_WAIT_MS: u64 = 2_000;
/// How long the choice is waited for after the option's click (a page may close the list and
/// re-render before it shows the choice), in milliseconds.
const CHOSEN_WAIT_MS: u64 = 1_000;

/// What the element is: `{"kind": "select"|"combobox"|"listbox"|null, "expanded", "shown"}`.
const KIND_JS: &str = r#"function() {
  if (this.tagName === 'SELECT') return { kind: 'select' };
  const role = (this.getAttribute('role') || '').trim().split(/\s+/)[0];
  const popup = (this.getAttribute('aria-haspopup') || '').toLowerCase();
  const kind = role === 'combobox' || (popup === 'listbox' && (this.tagName === 'BUTTON' || role === 'button')) ? 'combobox'
    : role === 'listbox' ? 'listbox' : null;
  return { kind, expanded: this.getAttribute('aria-expanded') === 'true' };
}"#;

/// The listbox of a combobox (`this`), or of itself for a listbox: by `aria-controls` or
/// `aria-owns`, else the only visible `[role=listbox]` of its document (through open shadow
/// roots); `null` while none shows. Visible: a box of positive size, not `visibility: hidden`.
const LISTBOX_JS: &str = r#"function() {
  const vis = (e) => { const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0 && getComputedStyle(e).visibility !== 'hidden'; };
  if ((this.getAttribute('role') || '').split(/\s+/)[0] === 'listbox') return this;
  const root = this.getRootNode();
  for (const attr of ['aria-controls', 'aria-owns']) {
    for (const id of (this.getAttribute(attr) || '').split(/\s+/).filter(Boolean)) {
      const e = root.getElementById ? root.getElementById(id) : document.getElementById(id);
      if (e && vis(e)) return (e.getAttribute('role') || '') === 'listbox' ? e : (e.querySelector('[role=listbox]') || e);
    }
  }
  const all = [];
  const walk = (r) => { for (const e of r.querySelectorAll('*')) { if (e.getAttribute('role') === 'listbox' && vis(e)) all.push(e); if (e.shadowRoot) walk(e.shadowRoot); } };
  walk(document);
  return all.length === 1 ? all[0] : null;
}"#;

/// The options of a listbox (`this`): `[{name, disabled, selected}]`, each `name` its
/// `aria-label` or text, whitespace collapsed.
const OPTIONS_JS: &str = r#"function() {
  return Array.from(this.querySelectorAll('[role=option]')).map(o => ({
    name: (o.getAttribute('aria-label') || o.textContent || '').replace(/\s+/g, ' ').trim(),
    disabled: o.getAttribute('aria-disabled') === 'true',
    selected: o.getAttribute('aria-selected') === 'true' }));
}"#;

/// Option `i` of a listbox (`this`), as an object.
const OPTION_JS: &str = "function(i) { return this.querySelectorAll('[role=option]')[i]; }";

/// What a combobox (`this`) shows: its value (an input) or its text.
const SHOWN_JS: &str = r#"function() {
  const v = ('value' in this && typeof this.value === 'string') ? this.value : (this.textContent || '');
  return v.replace(/\s+/g, ' ').trim();
}"#;

/// `select` on an element that is not a `<select>`: `Some(answer)` for a custom combobox or
/// listbox (`{"value","label","changed","custom":true}`), `None` for anything else (the
/// caller refuses it as before). One NAME only; an unknown or disabled option is
/// `bad_request` naming the options (the list is closed again with Escape), `mismatch` when
/// the click did not choose it.
pub async fn select_custom(
    b: &BrowserRef,
    page: &Page,
    node: &Node,
    wants: &[String],
) -> Result<Option<Value>, AutomationError> {
    let info = call_on(&node.session, &node.object, KIND_JS, vec![]).await?;
    let kind = match info["kind"].as_str() {
        Some(k @ ("combobox" | "listbox")) => k.to_string(),
        _ => return Ok(None),
    };
    let [want] = wants else {
        return Err(AutomationError::BadRequest(format!("{} is a custom {kind}: select takes one name", node.name)));
    };
    if kind == "combobox" && info["expanded"] != true {
        perform(b, page, Some(node), &Action::Click).await?;
    }
    let list = {
        let deadline = tokio::time::Instant::now() + Duration::from_millis(OPEN_WAIT_MS);
        loop {
            if let Some(l) = object_of(node, &node.object, LISTBOX_JS, vec![]).await? {
                break l;
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(AutomationError::Mismatch {
                    message: format!("clicked {} but no listbox showed within {OPEN_WAIT_MS} ms", node.name),
                    observed: json!({"expanded": false}),
                });
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    let options = call_on(&node.session, &list, OPTIONS_JS, vec![]).await?;
    let names: Vec<&str> = options.as_array().into_iter().flatten().filter_map(|o| o["name"].as_str()).collect();
    let i = names.iter().position(|n| n == want).or_else(|| names.iter().position(|n| n.eq_ignore_ascii_case(want)));
    let close = async {
        if kind == "combobox" {
            let _ = perform(b, page, None, &Action::Press(super::keys::parse("Escape").expect("a key"))).await;
        }
    };
    let Some(i) = i else {
        close.await;
        let some: Vec<String> = names.iter().take(20).map(|n| format!("{n:?}")).collect();
        let more = names.len().saturating_sub(20);
        return Err(AutomationError::BadRequest(format!(
            "{} has no option {want:?}; it has {}{}",
            node.name,
            some.join(", "),
            if more > 0 { format!(" and {more} more") } else { String::new() }
        )));
    };
    if options[i]["disabled"] == true {
        close.await;
        return Err(AutomationError::BadRequest(format!("option {:?} of {} is disabled", names[i], node.name)));
    }
    let label = names[i].to_string();
    let answer = |changed: bool| json!({"value": label, "label": label, "changed": changed, "custom": true});
    if kind == "listbox" && options[i]["selected"] == true {
        return Ok(Some(answer(false)));
    }
    let object = object_of(node, &list, OPTION_JS, vec![json!({"value": i})])
        .await?
        .ok_or_else(|| AutomationError::NotVisible(format!("option {label:?} of {}", node.name)))?;
    let described = call(&node.session, "DOM.describeNode", json!({"objectId": object})).await?;
    let option = Node {
        name: format!("option {label:?} of {}", node.name),
        backend: described["node"]["backendNodeId"].as_i64().unwrap_or_default(),
        object: object.clone(),
        frame: node.frame.clone(),
        session: node.session.clone(),
    };
    let out = perform(b, page, Some(&option), &Action::Click).await?;
    if out["dialog"].is_object() {
        let mut a = answer(true);
        a["dialog"] = out["dialog"].clone();
        return Ok(Some(a));
    }
    // Chosen: the option says so, or the combobox shows it.
    let deadline = tokio::time::Instant::now() + Duration::from_millis(CHOSEN_WAIT_MS);
    loop {
        let selected = call_on(
            &node.session,
            &object,
            "function(){ return this.isConnected && this.getAttribute('aria-selected') === 'true' }",
            vec![],
        )
        .await
        .unwrap_or(Value::Bool(false))
            == true;
        let shown = call_on(&node.session, &node.object, SHOWN_JS, vec![]).await?;
        let shows = shown.as_str().is_some_and(|s| s == label || (kind == "combobox" && s.contains(label.as_str())));
        if (kind == "combobox" && shows) || selected {
            let mut a = answer(true);
            a["dialog"] = Value::Null;
            return Ok(Some(a));
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(AutomationError::Mismatch {
                message: format!("clicked option {label:?} of {} but it shows {shown}", node.name),
                observed: json!({"label": shown}),
            });
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Calls `function` on `object` (of `node`'s session) and returns the object it answers
/// (`None` for null).
async fn object_of(
    node: &Node,
    object: &str,
    function: &str,
    args: Vec<Value>,
) -> Result<Option<String>, AutomationError> {
    let r = call(
        &node.session,
        "Runtime.callFunctionOn",
        json!({"objectId": object, "functionDeclaration": function, "arguments": args, "returnByValue": false}),
    )
    .await?;
    Ok(r["result"]["objectId"].as_str().map(str::to_string))
}
