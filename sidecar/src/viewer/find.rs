//! Find in page for a screencast pane's find bar (issue #22 item 9; protocol §8.4 `find`):
//! `find.js` in a host-owned isolated world of the active tab's main frame.

use chromiumoxide::Page;
use serde_json::{json, Value};

use crate::browser::{eval_in_isolated_world, BrowserError};

/// The isolated world find runs in (its highlights and active match live there).
const WORLD: &str = "porthole-find";
/// Largest text searched for, in bytes.
pub const MAX_FIND_BYTES: usize = 1024;

/// Searches `text` in `page` (`next`: move to the next match, or the previous one when
/// `backwards`; "" clears the highlights) → the `find` message:
/// `{"type":"find","text","index","count","capped"}` (`index` 1-based, 0 when nothing matched).
pub(super) async fn find(page: &Page, text: &str, backwards: bool, next: bool) -> Result<String, BrowserError> {
    let call = format!("({})({},{backwards},{next})", include_str!("find.js"), Value::from(text));
    let v = eval_in_isolated_world(page, WORLD, call).await?;
    Ok(message(text, &v))
}

/// The message for the script's answer `v`, each field checked (a count over 1000 cannot come
/// from the script; anything malformed reads as no match).
fn message(text: &str, v: &Value) -> String {
    let count = v["count"].as_u64().filter(|c| *c <= 1000).unwrap_or(0);
    let index = v["index"].as_u64().filter(|i| *i <= count).unwrap_or(0);
    let capped = v["capped"].as_bool().unwrap_or(false);
    json!({"type": "find", "text": text, "index": index, "count": count, "capped": capped}).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_checked() {
        let m: Value = serde_json::from_str(&message("a", &json!({"index": 2, "count": 3, "capped": false}))).unwrap();
        assert_eq!(m, json!({"type":"find","text":"a","index":2,"count":3,"capped":false}));
        let m: Value = serde_json::from_str(&message("a", &json!({"index": 4, "count": 3}))).unwrap();
        assert_eq!(m["index"], 0);
        let m: Value = serde_json::from_str(&message("a", &json!(null))).unwrap();
        assert_eq!((m["index"].as_u64(), m["count"].as_u64()), (Some(0), Some(0)));
    }
}
