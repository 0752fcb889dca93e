//! `Page.navigate` and `Page.reload` on a DevTools connection of their own.
//!
//! chromiumoxide routes every `Page.navigate` through its navigation tracker, which answers
//! only once the new document has *loaded* and runs one navigation per page at a time. A
//! page whose load never finishes (a hanging subresource, a dev server compiling for a
//! minute) would then make `navigate` fail after the CDP bound and hold every later
//! navigation of that tab behind it. Chromium itself answers `Page.navigate` when the
//! navigation has started (committed, or failed with `errorText`), which is what
//! protocol.md §8.2 promises, so the command goes to the page's own DevTools endpoint
//! (`ws://127.0.0.1:PORT/devtools/page/<target id>`, CDP "HTTP endpoints") instead.

use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
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
    // Target ids are upper-case hex; anything else is not ours to put in a URL.
    if target.is_empty() || !target.chars().all(|c| c.is_ascii_alphanumeric()) {
        return Err(format!("bad target id {target:?}"));
    }
    let endpoint = format!("ws://{devtools}/devtools/page/{target}");
    // Right after a renderer crash the target's endpoint can refuse the handshake for a
    // moment while Chromium swaps the tab's renderer host. Nothing has been sent yet, so the
    // connection is tried again (the caller's bound still holds).
    let mut attempt = 0;
    let mut ws = loop {
        attempt += 1;
        match tokio_tungstenite::connect_async(endpoint.as_str()).await {
            Ok((ws, _)) => break ws,
            Err(e) if attempt >= CONNECT_ATTEMPTS => return Err(format!("{endpoint}: {e}")),
            Err(e) => {
                tracing::debug!("{endpoint}: {e}; connecting again");
                tokio::time::sleep(std::time::Duration::from_millis(CONNECT_RETRY_MS)).await;
            }
        }
    };
    let call = json!({"id": 1, "method": method, "params": params});
    ws.send(Message::text(call.to_string())).await.map_err(|e| e.to_string())?;
    while let Some(msg) = ws.next().await {
        let text = match msg.map_err(|e| e.to_string())? {
            Message::Text(t) => t,
            Message::Close(_) => break,
            _ => continue,
        };
        let Ok(mut v) = serde_json::from_str::<Value>(text.as_str()) else { continue };
        if v.get("id").and_then(Value::as_u64) != Some(1) {
            continue; // an event (none are enabled on this connection, but be safe)
        }
        let _ = ws.close(None).await;
        if let Some(err) = v.get("error") {
            return Err(err.get("message").and_then(Value::as_str).unwrap_or("error").to_string());
        }
        return Ok(v.get_mut("result").map(Value::take).unwrap_or(Value::Null));
    }
    Err(format!("the DevTools connection closed before {method} answered"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devtools_host_is_read_from_a_loopback_browser_url_only() {
        assert_eq!(devtools_host("ws://127.0.0.1:39013/devtools/browser/7c1e-ab").as_deref(), Some("127.0.0.1:39013"));
        assert_eq!(devtools_host("ws://example.com:9222/devtools/browser/x"), None);
        assert_eq!(devtools_host("http://127.0.0.1:9222/"), None);
        assert_eq!(devtools_host("not a url"), None);
    }
}
