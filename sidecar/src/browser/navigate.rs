//! Commands on a DevTools connection of their own (`ws://127.0.0.1:PORT/devtools/page/<target
//! id>`, CDP "HTTP endpoints"), beside chromiumoxide's.
//!
//! - `Page.navigate` and `Page.reload`: chromiumoxide routes every `Page.navigate` through its
//!   navigation tracker, which answers only once the new document has *loaded* and runs one
//!   navigation per page at a time. A page whose load never finishes (a hanging subresource,
//!   a dev server compiling for a minute) would then make `navigate` fail after the CDP bound
//!   and hold every later navigation of that tab behind it. Chromium itself answers
//!   `Page.navigate` when the navigation has started (committed, or failed with
//!   `errorText`), which is what protocol.md §8.2 promises.
//! - The snapshot's reads of the tab's own process ([`exchange_each`]): its walks and its
//!   `DOMSnapshot.captureSnapshot` back to back, answered as text the caller parses typed
//!   (4 MB on a 20,000-element page, too big for a `serde_json::Value` to be cheap).

use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::Message;

/// The `host:port` of a browser's DevTools endpoint, from its browser WebSocket URL
/// (`ws://127.0.0.1:PORT/devtools/browser/<id>`); `None` if that is not a loopback ws URL.
pub fn devtools_host(browser_ws: &str) -> Option<String> {
    let u = url::Url::parse(browser_ws).ok()?;
    let host = u.host_str()?;
    if u.scheme() != "ws" || !(host == "127.0.0.1" || host == "localhost" || host == "[::1]") {
        return None;
    }
    Some(format!("{host}:{}", u.port()?))
}

/// Sends `Page.navigate {url}` to page target `target` through `devtools` (`host:port`)
/// and waits for Chromium's answer: `Ok(None)` once the navigation has started,
/// `Ok(Some(error_text))` when Chromium reports it failed (the tab then shows its error
/// page), `Err` with a message when the endpoint cannot be reached or answers an error.
/// Unbounded: the caller bounds it.
pub async fn navigate(devtools: &str, target: &str, url: &str) -> Result<Option<String>, String> {
    let r = call_once(devtools, target, "Page.navigate", json!({ "url": url })).await?;
    Ok(r.get("errorText").and_then(Value::as_str).map(str::to_string))
}

/// Sends `Page.reload` to page target `target` through `devtools` and waits for Chromium's
/// answer. Also the way a tab whose renderer crashed is loaded again: chromiumoxide drops a
/// command sent on such a tab's session while it reattaches (`oneshot canceled`).
/// Unbounded: the caller bounds it.
pub async fn reload(devtools: &str, target: &str) -> Result<(), String> {
    call_once(devtools, target, "Page.reload", json!({})).await.map(drop)
}

/// Connection attempts to a page's DevTools endpoint before giving up: 5 s in all, since on
/// a loaded machine a crashed tab's endpoint refused for over a second (CI: five attempts
/// 200 ms apart were not enough).
const CONNECT_ATTEMPTS: u32 = 20;
/// Pause between two connection attempts, in milliseconds.
const CONNECT_RETRY_MS: u64 = 250;

/// One command on a DevTools connection of its own to page target `target`; its `result`,
/// or the error's message.
async fn call_once(devtools: &str, target: &str, method: &str, params: Value) -> Result<Value, String> {
    let text = exchange(devtools, target, method, params).await?;
    let mut v: Value = serde_json::from_str(&text).map_err(|e| format!("{method}: {e}"))?;
    if let Some(err) = v.get("error") {
        return Err(err.get("message").and_then(Value::as_str).unwrap_or("error").to_string());
    }
    Ok(v.get_mut("result").map(Value::take).unwrap_or(Value::Null))
}

/// Sends one command to page target `target` through `devtools` (`host:port`) on a
/// connection of its own ([`exchange_each`] of one call), and returns Chromium's answer as
/// the text of the whole message (`{"id":1,"result":…}` or `{"id":1,"error":{…}}`).
async fn exchange(devtools: &str, target: &str, method: &str, params: Value) -> Result<String, String> {
    let mut answer = String::new();
    exchange_each(devtools, target, vec![(method, params)], |_, text| answer = text).await?;
    Ok(answer)
}

/// Sends `calls` (method, params) to page target `target` through `devtools` (`host:port`)
/// on a connection of its own, all at once: Chromium runs a session's commands in the order
/// sent, so the renderer does them back to back with no round trip between. Hands each
/// call's answer to `on_answer(index in calls, text)` as it arrives (a caller can start on
/// the first while Chromium works on the next), as the text of its whole message
/// (`{"id":N,"result":…}` or `{"id":N,"error":{…}}`), for the caller to parse. The
/// connection enables no domain, so it carries no events; a message that is one
/// (`{"method":…`) is skipped all the same. Errors: a bad target id, the endpoint refusing
/// [`CONNECT_ATTEMPTS`] times, the connection closing before every call answered.
/// Unbounded: the caller bounds it.
pub(crate) async fn exchange_each(
    devtools: &str,
    target: &str,
    calls: Vec<(&str, Value)>,
    mut on_answer: impl FnMut(usize, String),
) -> Result<(), String> {
    // Target ids are upper-case hex; anything else is not ours to put in a URL.
    if target.is_empty() || !target.chars().all(|c| c.is_ascii_alphanumeric()) {
        return Err(format!("bad target id {target:?}"));
    }
    let endpoint = format!("ws://{devtools}/devtools/page/{target}");
    // Right after a renderer crash the target's endpoint can refuse the handshake for a
    // moment while Chromium swaps the tab's renderer host. Nothing has been sent yet, so the
    // connection is tried again (the caller's bound still holds).
    let mut attempt = 0;
    let config =
        WebSocketConfig::default().max_message_size(Some(MAX_ANSWER_BYTES)).max_frame_size(Some(MAX_ANSWER_BYTES));
    let mut ws = loop {
        attempt += 1;
        match tokio_tungstenite::connect_async_with_config(endpoint.as_str(), Some(config), true).await {
            Ok((ws, _)) => break ws,
            Err(e) if attempt >= CONNECT_ATTEMPTS => return Err(format!("{endpoint}: {e}")),
            Err(e) => {
                tracing::debug!("{endpoint}: {e}; connecting again");
                tokio::time::sleep(std::time::Duration::from_millis(CONNECT_RETRY_MS)).await;
            }
        }
    };
    let names: Vec<String> = calls.iter().map(|(m, _)| m.to_string()).collect();
    for (i, (method, params)) in calls.into_iter().enumerate() {
        let call = json!({"id": i + 1, "method": method, "params": params});
        ws.send(Message::text(call.to_string())).await.map_err(|e| e.to_string())?;
    }
    let mut answered = vec![false; names.len()];
    let mut left = names.len();
    while left > 0 {
        let Some(msg) = ws.next().await else { break };
        let text = match msg.map_err(|e| e.to_string())? {
            Message::Text(t) => t,
            Message::Close(_) => break,
            _ => continue,
        };
        if text.as_str().starts_with("{\"method\":") {
            continue; // an event
        }
        let Some(i) = answer_id(text.as_str()).and_then(|id| id.checked_sub(1)) else { continue };
        if answered.get(i) == Some(&false) {
            answered[i] = true;
            left -= 1;
            on_answer(i, text.as_str().to_string());
        }
    }
    let _ = ws.close(None).await;
    match answered.iter().position(|a| !a) {
        Some(i) => Err(format!("the DevTools connection closed before {} answered", names[i])),
        None => Ok(()),
    }
}

/// The `id` of an answer message: read from the `{"id":N,` Chromium starts it with, else
/// parsed (the rest of the message skipped, not built).
fn answer_id(text: &str) -> Option<usize> {
    if let Some(rest) = text.strip_prefix("{\"id\":") {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && rest[digits..].starts_with([',', '}']) {
            return rest[..digits].parse().ok();
        }
    }
    #[derive(serde::Deserialize)]
    struct Id {
        id: Option<usize>,
    }
    serde_json::from_str::<Id>(text).ok()?.id
}

/// Largest answer [`exchange_each`] takes, in bytes (Chromium's own limit on a DevTools message
/// is 256 MiB; a DOM snapshot of 80,000 elements is about 17 MB).
const MAX_ANSWER_BYTES: usize = 256 << 20;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answers_id_is_read_from_its_start_or_parsed() {
        assert_eq!(answer_id(r#"{"id":12,"result":{}}"#), Some(12));
        assert_eq!(answer_id(r#"{"result":{},"id":3}"#), Some(3));
        assert_eq!(answer_id(r#"{"id":x}"#), None);
        assert_eq!(answer_id(r#"{"method":"Page.loadEventFired","params":{}}"#), None);
    }

    #[test]
    fn devtools_host_is_read_from_a_loopback_browser_url_only() {
        assert_eq!(devtools_host("ws://127.0.0.1:39013/devtools/browser/7c1e-ab").as_deref(), Some("127.0.0.1:39013"));
        assert_eq!(devtools_host("ws://example.com:9222/devtools/browser/x"), None);
        assert_eq!(devtools_host("http://127.0.0.1:9222/"), None);
        assert_eq!(devtools_host("not a url"), None);
    }
}
