//! `set REF VALUE` (issue 25 item 5): a value for the inputs that take no free text (`date`,
//! `time`, `datetime-local`, `month`, `week`, `range`, `color`), given as a user gives it, then
//! read back. Values are the HTML spelling of each type (HTML §4.10.5.1: `2026-12-07`, `14:30`,
//! `2026-12-07T14:30`, `2026-12`, `2026-W49`, a number, `#rrggbb`).
//!
//! - Date and time fields are edited with trusted keys, field by field, in the order the
//!   page's locale shows them (`Intl.DateTimeFormat` in the page): digits for numbers (each
//!   two-digit field moves on by itself once full; a year field is left with ArrowRight), the
//!   month's name where the locale spells it (`month` inputs), `A`/`P` for a 12-hour clock's
//!   period. Typing starts in the first field (ArrowLeft to it); digits replace what a field
//!   shows.
//! - A range takes Home then ArrowRight (or End then ArrowLeft) one step at a time, at most
//!   [`MAX_RANGE_STEPS`].
//! - A colour input takes no keys (its picker is a native popup the screencast never shows):
//!   its value is set as the picker does, with `input` and `change` events, and the answer
//!   says `"scripted":true`.
//!
//! The value is then read back; anything else is `mismatch` with what the field shows (a
//! page that refused the value, as a controlled picker refusing a past date does).

use serde_json::{json, Value};

use super::act::{input, key_events};
use super::error::AutomationError;
use super::keys;
use super::node::Node;
use crate::browser::session::{call, call_on};
use crate::browser::{BrowserError, BrowserRef};

/// Most arrow-key steps a range is moved by.
pub const MAX_RANGE_STEPS: u64 = 1_000;

/// The element's type and, for date and time types, the order of its fields in the page's
/// locale: `{type, disabled, readonly, value, min, max, step, order:[…], hour12, months:[…]}`.
const INFO_JS: &str = r#"function() {
  const el = this;
  const type = el.localName === 'input' ? (el.getAttribute('type') || 'text').toLowerCase() : el.localName;
  const out = { type, disabled: !!el.disabled, readonly: !!el.readOnly, value: String(el.value ?? ''),
    min: el.min ?? '', max: el.max ?? '', step: el.step ?? '' };
  const lang = navigator.language;
  const parts = (o) => new Intl.DateTimeFormat(lang, o).formatToParts(new Date(2001, 1, 3, 14, 5, 6)).map(p => p.type).filter(t => t !== 'literal');
  out.date = parts({ year: 'numeric', month: '2-digit', day: '2-digit' });
  out.month = parts({ year: 'numeric', month: 'long' });
  const t = new Intl.DateTimeFormat(lang, { hour: 'numeric', minute: '2-digit' });
  out.hour12 = !!t.resolvedOptions().hour12;
  out.time = t.formatToParts(new Date(2001, 1, 3, 14, 5, 6)).map(p => p.type).filter(x => x !== 'literal');
  out.months = Array.from({ length: 12 }, (_, i) => new Intl.DateTimeFormat(lang, { month: 'long' }).format(new Date(2001, i, 1)));
  return out;
}"#;

const VALUE_JS: &str = "function(){ return String(this.value ?? '') }";

/// Sets a colour input's value as its picker does (with its `input` and `change` events).
const COLOR_JS: &str = r#"function(v) {
  this.value = v;
  this.dispatchEvent(new Event('input', { bubbles: true }));
  this.dispatchEvent(new Event('change', { bubbles: true }));
  return String(this.value);
}"#;

/// One key press (a name `keys::parse` knows, or one character) as CDP input steps.
fn press(k: &str) -> Vec<(&'static str, Value)> {
    key_events(&keys::parse(k).expect("a key Porthole names"))
}

/// Digits as key presses.
fn digits(s: &str) -> Vec<(&'static str, Value)> {
    s.chars().flat_map(|c| press(&c.to_string())).collect()
}

/// Checks `value` against its type's HTML spelling; the fields as (kind, text) in value order.
fn fields(kind: &str, value: &str) -> Result<Vec<(&'static str, String)>, AutomationError> {
    let bad = || AutomationError::BadRequest(format!("{value:?} is not a {kind} value ({})", example(kind)));
    let num = |s: &str, n: usize| (s.len() == n && s.bytes().all(|b| b.is_ascii_digit())).then(|| s.to_string());
    let date = |s: &str| -> Option<Vec<(&'static str, String)>> {
        let p: Vec<&str> = s.split('-').collect();
        let [y, m, d] = p.as_slice() else { return None };
        Some(vec![("year", num(y, 4)?), ("month", num(m, 2)?), ("day", num(d, 2)?)])
    };
    let time = |s: &str| -> Option<Vec<(&'static str, String)>> {
        let p: Vec<&str> = s.split(':').collect();
        let mut out = vec![("hour", num(p.first()?, 2)?), ("minute", num(p.get(1)?, 2)?)];
        match p.len() {
            2 => {}
            3 => out.push(("second", num(p[2], 2)?)),
            _ => return None,
        }
        Some(out)
    };
    let f = match kind {
        "date" => date(value),
        "time" => time(value),
        "datetime-local" => value.split_once('T').and_then(|(d, t)| Some([date(d)?, time(t)?].concat())),
        "month" => value.split_once('-').and_then(|(y, m)| Some(vec![("year", num(y, 4)?), ("month", num(m, 2)?)])),
        "week" => value.split_once("-W").and_then(|(y, w)| Some(vec![("year", num(y, 4)?), ("week", num(w, 2)?)])),
        _ => None,
    };
    f.ok_or_else(bad)
}

fn example(kind: &str) -> &'static str {
    match kind {
        "date" => "YYYY-MM-DD",
        "time" => "HH:MM or HH:MM:SS, 24-hour",
        "datetime-local" => "YYYY-MM-DDTHH:MM",
        "month" => "YYYY-MM",
        "week" => "YYYY-Www",
        "range" => "a number",
        "color" => "#rrggbb",
        _ => "",
    }
}

/// The key presses that type `fields` into a date or time input whose locale shows them in
/// `info`'s order, starting in its first field: each field typed, then ArrowRight where the
/// field does not move on by itself (a year; a month typed by name).
fn typing(kind: &str, fields: &[(&'static str, String)], info: &Value) -> Vec<(&'static str, Value)> {
    let names = |k: &str| -> Vec<String> {
        info[k].as_array().into_iter().flatten().filter_map(|v| v.as_str().map(str::to_string)).collect()
    };
    let get = |k: &str| fields.iter().find(|(n, _)| *n == k).map(|(_, v)| v.clone());
    let hour12 = info["hour12"] == true;
    let time_order = || {
        let mut o: Vec<String> = names("time").into_iter().filter(|t| t == "hour" || t == "minute").collect();
        if get("second").is_some() {
            o.push("second".into());
        }
        if hour12 {
            o.push("dayPeriod".into());
        }
        o
    };
    let order: Vec<String> = match kind {
        "date" => names("date"),
        "time" => time_order(),
        "datetime-local" => [names("date"), time_order()].concat(),
        "month" => names("month"),
        // Chromium shows "Week 49, 2026" in every locale.
        "week" => vec!["week".into(), "year".into()],
        _ => Vec::new(),
    };
    let last = order.len().saturating_sub(1);
    let mut steps = Vec::new();
    for (i, f) in order.iter().enumerate() {
        let (keys, moves_on) = match f.as_str() {
            "year" => (digits(&get("year").unwrap_or_default()), false),
            "month" if kind == "month" => {
                let m: usize = get("month").and_then(|m| m.parse().ok()).unwrap_or(1);
                let name = info["months"][m.saturating_sub(1)].as_str().unwrap_or("").to_string();
                (name.chars().flat_map(|c| press(&c.to_string())).collect(), false)
            }
            "hour" if hour12 => {
                let h: u32 = get("hour").and_then(|h| h.parse().ok()).unwrap_or(0);
                let h12 = if h % 12 == 0 { 12 } else { h % 12 };
                (digits(&format!("{h12:02}")), true)
            }
            "dayPeriod" => {
                let h: u32 = get("hour").and_then(|h| h.parse().ok()).unwrap_or(0);
                (press(if h < 12 { "a" } else { "p" }), false)
            }
            k => (digits(&get(k).unwrap_or_default()), true),
        };
        steps.extend(keys);
        if i < last && !moves_on {
            steps.extend(press("ArrowRight"));
        }
    }
    steps
}

/// `set`: gives `node` (an input of a type above) `value` as a user would, reads it back →
/// `{"value","scripted"?}`; `mismatch` when the field shows something else; `bad_request` for
/// another kind of element or a value not in its type's spelling; `element_disabled`.
pub async fn set(b: &BrowserRef, node: &Node, value: &str) -> Result<Value, AutomationError> {
    let info = call_on(&node.session, &node.object, INFO_JS, vec![]).await?;
    let kind = info["type"].as_str().unwrap_or("").to_string();
    if info["disabled"] == true || info["readonly"] == true {
        return Err(AutomationError::Disabled(node.name.clone()));
    }
    let focus = || async {
        call(&node.session, "DOM.focus", json!({"backendNodeId": node.backend})).await.map_err(|e| match e {
            BrowserError::Cdp(_) => AutomationError::NotVisible(node.name.clone()),
            e => e.into(),
        })
    };
    let mut out = json!({});
    match kind.as_str() {
        "date" | "time" | "datetime-local" | "month" | "week" => {
            let f = fields(&kind, value)?;
            focus().await?;
            // From its first field (focus may be on a later one): digits typed into a field
            // replace what it shows.
            let n = match kind.as_str() {
                "datetime-local" => 7,
                "date" | "time" => 4,
                _ => 2,
            };
            let mut steps = Vec::new();
            for _ in 0..n {
                steps.extend(press("ArrowLeft"));
            }
            steps.extend(typing(&kind, &f, &info));
            input(b, node.session.clone(), steps).await?;
        }
        "range" => {
            let num = |k: &str, d: f64| info[k].as_str().and_then(|s| s.parse::<f64>().ok()).unwrap_or(d);
            let want: f64 = value
                .parse()
                .map_err(|_| AutomationError::BadRequest(format!("{value:?} is not a number for a range")))?;
            let (min, max) = (num("min", 0.0), num("max", 100.0));
            let step = num("step", 1.0);
            let step = if step > 0.0 { step } else { 1.0 };
            if !(min..=max).contains(&want) {
                return Err(AutomationError::BadRequest(format!("{want} is outside the range's {min}..={max}")));
            }
            let from_min = ((want - min) / step).round() as u64;
            let from_max = ((max - want) / step).round() as u64;
            let (start, arrow, n) =
                if from_min <= from_max { ("Home", "ArrowRight", from_min) } else { ("End", "ArrowLeft", from_max) };
            if n > MAX_RANGE_STEPS {
                return Err(AutomationError::BadRequest(format!(
                    "{value} is {n} steps from the range's end, more than {MAX_RANGE_STEPS}"
                )));
            }
            focus().await?;
            let mut steps = press(start);
            for _ in 0..n {
                steps.extend(press(arrow));
            }
            input(b, node.session.clone(), steps).await?;
        }
        "color" => {
            let ok = value.len() == 7
                && value.starts_with('#')
                && value[1..].bytes().all(|c| c.is_ascii_hexdigit());
            if !ok {
                return Err(AutomationError::BadRequest(format!("{value:?} is not a colour ({})", example("color"))));
            }
            focus().await?;
            call_on(&node.session, &node.object, COLOR_JS, vec![json!({"value": value.to_ascii_lowercase()})]).await?;
            out["scripted"] = true.into();
        }
        other => {
            return Err(AutomationError::BadRequest(format!(
                "{} is {}, not a date, time, datetime-local, month, week, range or color input (fill takes text; select takes options)",
                node.name,
                if other.is_empty() { "no input".to_string() } else { format!("a {other}") }
            )))
        }
    }
    let got = call_on(&node.session, &node.object, VALUE_JS, vec![]).await?;
    let got = got.as_str().unwrap_or("").to_string();
    let want = if kind == "color" { value.to_ascii_lowercase() } else { value.to_string() };
    let same = match kind.as_str() {
        "range" => got.parse::<f64>().ok().zip(want.parse::<f64>().ok()).is_some_and(|(a, b)| (a - b).abs() < 1e-9),
        _ => got == want,
    };
    if !same {
        return Err(AutomationError::Mismatch {
            message: format!("{} shows {got:?} after the set, not {want:?}: the page changed or refused it", node.name),
            observed: json!({"value": got}),
        });
    }
    out["value"] = got.into();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_checked_against_their_types_spelling() {
        assert_eq!(
            fields("date", "2026-12-07").unwrap(),
            [("year", "2026".into()), ("month", "12".into()), ("day", "07".into())]
        );
        assert_eq!(fields("time", "14:30").unwrap().len(), 2);
        assert_eq!(fields("time", "14:30:05").unwrap().len(), 3);
        assert_eq!(fields("datetime-local", "2026-12-07T09:05").unwrap().len(), 5);
        assert_eq!(fields("week", "2026-W49").unwrap(), [("year", "2026".into()), ("week", "49".into())]);
        for (k, v) in
            [("date", "2026-1-07"), ("date", "07/12/2026"), ("time", "2pm"), ("month", "2026"), ("week", "2026-49")]
        {
            assert!(fields(k, v).is_err(), "{k} {v}");
        }
    }

    #[test]
    fn a_us_date_is_typed_month_day_year_and_a_12_hour_time_gets_its_period() {
        let info = json!({"date": ["month", "day", "year"], "time": ["hour", "minute", "dayPeriod"], "hour12": true});
        let keys = |steps: Vec<(&'static str, Value)>| -> String {
            steps
                .iter()
                .filter(|(_, p)| p["type"] != "keyUp")
                .map(|(_, p)| {
                    let k = p["key"].as_str().unwrap_or("");
                    if k.len() == 1 {
                        k.to_string()
                    } else {
                        format!("<{k}>")
                    }
                })
                .collect()
        };
        assert_eq!(keys(typing("date", &fields("date", "2026-12-07").unwrap(), &info)), "12072026");
        assert_eq!(keys(typing("time", &fields("time", "14:30").unwrap(), &info)), "0230p");
        let iso = json!({"date": ["year", "month", "day"], "time": ["hour", "minute"], "hour12": false});
        assert_eq!(keys(typing("date", &fields("date", "2026-12-07").unwrap(), &iso)), "2026<ArrowRight>1207");
    }
}
