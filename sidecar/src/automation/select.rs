//! `select REF VALUE`: chooses an option of a `<select>` with trusted keyboard input. A
//! native select's popup is never in screencast frames, so the select is focused and
//! `ArrowDown`/`ArrowUp` are pressed until the option is selected (the keys a user presses
//! on a closed select; the page gets its `input` and `change` events from Chromium), then
//! the value is read back. No script sets `selected`.

use chromiumoxide::Page;
use serde::Deserialize;
use serde_json::{json, Value};

use super::act::{input, key_events, with_dialog};
use super::cdp::{call, call_on};
use super::error::AutomationError;
use super::keys;
use super::node::{state, Node};
use crate::browser::{BrowserError, BrowserRef};

const OPTIONS_JS: &str = r#"function(){
  if (this.tagName !== 'SELECT') return null;
  return {multiple: this.multiple, selected: this.selectedIndex,
    options: Array.from(this.options).map(o => ({value: o.value, label: (o.label || o.text).trim(),
      disabled: o.disabled || (o.parentElement.tagName === 'OPTGROUP' && o.parentElement.disabled)}))};
}"#;

#[derive(Debug, Deserialize)]
struct Options {
    multiple: bool,
    selected: i64,
    options: Vec<Opt>,
}

#[derive(Debug, Deserialize)]
struct Opt {
    value: String,
    label: String,
    disabled: bool,
}

async fn options(page: &Page, node: &Node) -> Result<Options, AutomationError> {
    let v = call_on(page, &node.object, OPTIONS_JS, vec![]).await?;
    if v.is_null() {
        return Err(AutomationError::BadRequest(format!("{} is not a <select>", node.name)));
    }
    serde_json::from_value(v).map_err(|e| AutomationError::Browser(BrowserError::Cdp(format!("options: {e}"))))
}

/// Selects the option whose value (else label) is `want` → `{"value","label","changed",
/// "dialog"}`. Refused: not a select (`bad_request`), a multiple-choice select (not yet),
/// an unknown or disabled option (`bad_request`), a disabled select (`element_disabled`);
/// `mismatch` when the keys did not reach it.
pub async fn select(browser: &BrowserRef, page: &Page, node: &Node, want: &str) -> Result<Value, AutomationError> {
    let o = options(page, node).await?;
    if o.multiple {
        return Err(AutomationError::BadRequest(format!(
            "{} is a multiple-choice select, which select does not drive yet",
            node.name
        )));
    }
    let target = o
        .options
        .iter()
        .position(|x| x.value == want)
        .or_else(|| o.options.iter().position(|x| x.label == want))
        .ok_or_else(|| {
            let all: Vec<String> = o.options.iter().map(|x| format!("{:?}", x.label)).collect();
            AutomationError::BadRequest(format!("{} has no option {want:?}; it has {}", node.name, all.join(", ")))
        })?;
    let opt = &o.options[target];
    if opt.disabled {
        return Err(AutomationError::BadRequest(format!("option {:?} of {} is disabled", opt.label, node.name)));
    }
    let answer = |changed: bool| json!({"value": opt.value, "label": opt.label, "changed": changed});
    if o.selected == target as i64 {
        return Ok(with_dialog(answer(false), browser, false));
    }
    if state(page, node).await?.disabled {
        return Err(AutomationError::Disabled(node.name.clone()));
    }
    call(page, "DOM.focus", json!({"backendNodeId": node.backend})).await?;
    let mut now = o.selected;
    for _ in 0..=o.options.len() {
        let key = if now < target as i64 { "ArrowDown" } else { "ArrowUp" };
        if input(browser, page, key_events(&keys::parse(key).expect("an arrow is a key"))).await? {
            return Ok(with_dialog(answer(true), browser, true));
        }
        let after = options(page, node).await?.selected;
        if after == target as i64 {
            return Ok(with_dialog(answer(true), browser, false));
        }
        if after == now {
            break;
        }
        now = after;
    }
    let shown = o.options.get(now as usize).map(|x| x.label.clone());
    Err(AutomationError::Mismatch {
        message: format!("pressed arrows on {} but it shows {:?}, not {:?}", node.name, shown, opt.label),
        observed: json!({"label": shown}),
    })
}
