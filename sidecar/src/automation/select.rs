//! `select REF VALUE…`: chooses options of a `<select>` with trusted input, then reads the
//! selection back. A single-choice select's popup is never in screencast frames, so the
//! select is focused and `ArrowDown`/`ArrowUp` are pressed until the option is selected (the
//! keys a user presses on a closed select; the page gets its `input` and `change` events
//! from Chromium). A multiple-choice select is a list drawn in the page: its options are
//! clicked, the first plainly, the others with Ctrl. No script sets `selected`.

use chromiumoxide::Page;
use serde::Deserialize;
use serde_json::{json, Value};

use super::act::{input, key_events, with_dialog};
use super::error::AutomationError;
use super::frames::Rect;
use super::keys;
use super::node::{check_not_covered, state, Node};
use crate::browser::session::{call, call_on};
use crate::browser::{BrowserError, BrowserRef};

const OPTIONS_JS: &str = r#"function(){
  if (this.tagName !== 'SELECT') return null;
  return {multiple: this.multiple, selected: this.selectedIndex,
    chosen: Array.from(this.options).flatMap((o, i) => o.selected ? [i] : []),
    options: Array.from(this.options).map(o => ({value: o.value, label: (o.label || o.text).trim(),
      disabled: o.disabled || (o.parentElement.tagName === 'OPTGROUP' && o.parentElement.disabled)}))};
}"#;

#[derive(Debug, Deserialize)]
struct Options {
    multiple: bool,
    selected: i64,
    chosen: Vec<usize>,
    options: Vec<Opt>,
}

#[derive(Debug, Deserialize)]
struct Opt {
    value: String,
    label: String,
    disabled: bool,
}

async fn options(node: &Node) -> Result<Options, AutomationError> {
    let v = call_on(&node.session, &node.object, OPTIONS_JS, vec![]).await?;
    if v.is_null() {
        return Err(AutomationError::BadRequest(format!("{} is not a <select>", node.name)));
    }
    serde_json::from_value(v).map_err(|e| AutomationError::Browser(BrowserError::Cdp(format!("options: {e}"))))
}

/// The index of the option whose value (else label) is `want`: `bad_request` naming the
/// options when there is none, or when it is disabled.
fn index_of(o: &Options, node: &Node, want: &str) -> Result<usize, AutomationError> {
    let i = o
        .options
        .iter()
        .position(|x| x.value == want)
        .or_else(|| o.options.iter().position(|x| x.label == want))
        .ok_or_else(|| {
        let all: Vec<String> = o.options.iter().map(|x| format!("{:?}", x.label)).collect();
        AutomationError::BadRequest(format!("{} has no option {want:?}; it has {}", node.name, all.join(", ")))
    })?;
    if o.options[i].disabled {
        return Err(AutomationError::BadRequest(format!(
            "option {:?} of {} is disabled",
            o.options[i].label, node.name
        )));
    }
    Ok(i)
}

/// Selects the options whose value (else label) are `wants` (one for a single-choice
/// select) → `{"value","label","changed","dialog"}` (`values`, `labels` for a multiple
/// one). Refused: not a select, an unknown or disabled option, several values for a
/// single-choice select (`bad_request`), a disabled select (`element_disabled`);
/// `mismatch` when the input did not get there.
pub async fn select(
    browser: &BrowserRef,
    page: &Page,
    node: &Node,
    wants: &[String],
) -> Result<Value, AutomationError> {
    let o = options(node).await?;
    let mut targets = wants.iter().map(|w| index_of(&o, node, w)).collect::<Result<Vec<_>, _>>()?;
    if o.multiple {
        targets.sort_unstable();
        targets.dedup();
        return select_many(browser, page, node, &o, &targets).await;
    }
    let [target] = targets[..] else {
        return Err(AutomationError::BadRequest(format!("{} takes one value (it is not multiple)", node.name)));
    };
    let opt = &o.options[target];
    let answer = |changed: bool| json!({"value": opt.value, "label": opt.label, "changed": changed});
    if o.selected == target as i64 {
        return Ok(with_dialog(answer(false), browser, false));
    }
    if state(node).await?.disabled {
        return Err(AutomationError::Disabled(node.name.clone()));
    }
    call(&node.session, "DOM.focus", json!({"backendNodeId": node.backend})).await?;
    let mut now = o.selected;
    for _ in 0..=o.options.len() {
        let key = if now < target as i64 { "ArrowDown" } else { "ArrowUp" };
        if input(browser, page, key_events(&keys::parse(key).expect("an arrow is a key"))).await? {
            return Ok(with_dialog(answer(true), browser, true));
        }
        let after = options(node).await?.selected;
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

/// The center of option `i` of the select, scrolled into view, in top-level viewport CSS px.
async fn option_point(node: &Node, i: usize) -> Result<(f64, f64), AutomationError> {
    let hidden = || AutomationError::NotVisible(format!("{} option {}", node.name, i + 1));
    let r = call(
        &node.session,
        "Runtime.callFunctionOn",
        json!({"objectId": node.object, "functionDeclaration": "function(i){return this.options[i]}",
               "arguments": [{"value": i}], "returnByValue": false}),
    )
    .await?;
    let object = r["result"]["objectId"].as_str().ok_or_else(hidden)?.to_string();
    call(&node.session, "DOM.scrollIntoViewIfNeeded", json!({"objectId": object})).await.map_err(|_| hidden())?;
    let quads = call(&node.session, "DOM.getContentQuads", json!({"objectId": object})).await.map_err(|_| hidden())?;
    let q: Vec<f64> = quads["quads"][0].as_array().into_iter().flatten().filter_map(Value::as_f64).collect();
    if q.len() != 8 {
        return Err(hidden());
    }
    let (x, y) = ((q[0] + q[2] + q[4] + q[6]) / 4.0, (q[1] + q[3] + q[5] + q[7]) / 4.0);
    let r = node.session.to_top(Rect { x: x - 0.5, y: y - 0.5, width: 1.0, height: 1.0 }).await?.ok_or_else(hidden)?;
    Ok((r.x + 0.5, r.y + 0.5))
}

/// A multiple-choice select: a plain click on the first option wanted, Ctrl+clicks on the
/// others, then the selection read back.
async fn select_many(
    browser: &BrowserRef,
    page: &Page,
    node: &Node,
    o: &Options,
    targets: &[usize],
) -> Result<Value, AutomationError> {
    let pick =
        |key: fn(&Opt) -> &String| -> Vec<String> { targets.iter().map(|i| key(&o.options[*i]).clone()).collect() };
    let answer =
        |changed: bool| json!({"values": pick(|x| &x.value), "labels": pick(|x| &x.label), "changed": changed});
    if o.chosen == targets {
        return Ok(with_dialog(answer(false), browser, false));
    }
    if state(node).await?.disabled {
        return Err(AutomationError::Disabled(node.name.clone()));
    }
    for (n, i) in targets.iter().enumerate() {
        let (x, y) = option_point(node, *i).await?;
        check_not_covered(node, x, y).await?;
        let modifiers = if n == 0 { 0 } else { 2 };
        let press = |kind: &str| {
            (
                "Input.dispatchMouseEvent",
                json!({"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1, "modifiers": modifiers}),
            )
        };
        let steps = vec![
            ("Input.dispatchMouseEvent", json!({"type": "mouseMoved", "x": x, "y": y, "modifiers": modifiers})),
            press("mousePressed"),
            press("mouseReleased"),
        ];
        if input(browser, page, steps).await? {
            return Ok(with_dialog(answer(true), browser, true));
        }
    }
    let now = options(node).await?.chosen;
    if now != targets {
        let shown: Vec<String> = now.iter().filter_map(|i| o.options.get(*i)).map(|x| x.label.clone()).collect();
        return Err(AutomationError::Mismatch {
            message: format!("clicked the options of {} but it shows {shown:?} selected", node.name),
            observed: json!({"labels": shown}),
        });
    }
    Ok(with_dialog(answer(true), browser, false))
}
