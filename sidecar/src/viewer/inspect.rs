//! What is under a point of the page, for the pane's context menu (issue #11 item 8): the
//! link (`a[href]`) and the image (`img`) there, looked up in a host-owned isolated world
//! (the page's scripts can neither see nor fake it), through same-origin iframes.

use chromiumoxide::Page;
use serde_json::{json, Value};

use crate::browser::{eval_in_isolated_world, BrowserError, MAX_URL_BYTES};

/// The isolated world the lookup runs in.
const WORLD: &str = "porthole-inspect";

/// Script: the link and image at top-viewport CSS point (x, y).
fn script(x: f64, y: f64) -> String {
    format!(
        r#"(() => {{
  let x = {x}, y = {y}, ox = 0, oy = 0;
  let el = document.elementFromPoint(x, y);
  while (el && el.tagName === 'IFRAME') {{
    let d = null;
    try {{ d = el.contentDocument; }} catch (_) {{}}
    if (!d) break;
    const r = el.getBoundingClientRect();
    ox += r.left + el.clientLeft; oy += r.top + el.clientTop;
    el = d.elementFromPoint(x - ox, y - oy);
  }}
  const a = el && el.closest ? el.closest('a[href]') : null;
  const img = el && el.closest ? el.closest('img') : null;
  const r = img ? img.getBoundingClientRect() : null;
  return {{ link: a ? String(a.href) : null,
    image: r ? {{ x: r.left + ox, y: r.top + oy, width: r.width, height: r.height }} : null }};
}})()"#
    )
}

/// The `inspect` answer for point (x, y) of `page` (top-viewport CSS px): `link` (an
/// absolute URL, `null` when none or over 8 KiB) and `image` (its box in top-viewport CSS
/// px, or `null`).
pub(super) async fn inspect(page: &Page, x: f64, y: f64) -> Result<String, BrowserError> {
    let v = eval_in_isolated_world(page, WORLD, script(x, y)).await?;
    Ok(message(x, y, &v))
}

/// `{"type":"inspect","x","y","link","image"}` from the script's answer, each field checked.
fn message(x: f64, y: f64, v: &Value) -> String {
    let link = v["link"].as_str().filter(|l| l.len() <= MAX_URL_BYTES);
    let num = |k: &str| v["image"][k].as_f64().filter(|n| n.is_finite());
    let image = match (num("x"), num("y"), num("width"), num("height")) {
        (Some(x), Some(y), Some(w), Some(h)) if w > 0.0 && h > 0.0 => json!({"x": x, "y": y, "width": w, "height": h}),
        _ => Value::Null,
    };
    json!({"type": "inspect", "x": x, "y": y, "link": link, "image": image}).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_checked() {
        let m: Value = serde_json::from_str(&message(
            1.0,
            2.0,
            &json!({"link": "http://a/", "image": {"x": 3, "y": 4, "width": 10, "height": 0}}),
        ))
        .unwrap();
        assert_eq!(m, json!({"type":"inspect","x":1.0,"y":2.0,"link":"http://a/","image":null}));
        let long = "x".repeat(MAX_URL_BYTES + 1);
        let m: Value = serde_json::from_str(&message(0.0, 0.0, &json!({"link": long, "image": null}))).unwrap();
        assert!(m["link"].is_null());
    }
}
