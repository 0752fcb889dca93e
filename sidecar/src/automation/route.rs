//! `ph browser route` and `offline` (issue 25 item 6): mocking, blocking and cutting off a
//! tab's requests, for debugging how a page takes a failing API.
//!
//! Routes are per tab (browser, launch generation, target): `Fetch.enable` with one
//! `urlPattern` per route pauses only the matching requests (request stage), and one
//! listener per tab answers each pause: the newest route whose glob matches fulfils it
//! (`Fetch.fulfillRequest`), fails it (`Fetch.failRequest`, `BlockedByClient`), and a pause
//! no route matches any more (removed meanwhile) continues untouched. A tab's routes go with
//! it (its listener ends with its event stream and forgets them) and with a relaunch (a new
//! generation). Out-of-process frames are their own targets: their requests are not routed.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use base64::Engine;
use chromiumoxide::cdp::browser_protocol::fetch::EventRequestPaused;
use chromiumoxide::Page;
use futures_util::StreamExt;
use serde::Serialize;
use serde_json::{json, Value};

use super::AutomationError;
use crate::browser::bounded;
use crate::browser::session::call;

/// Most routes per tab.
pub const MAX_ROUTES: usize = 32;
/// Largest mocked body, in bytes.
pub const MAX_ROUTE_BODY_BYTES: usize = 1024 * 1024;
/// Most headers one mocked answer sets.
pub const MAX_ROUTE_HEADERS: usize = 32;
/// Longest pattern, in bytes.
pub const MAX_PATTERN_BYTES: usize = 2048;

/// What a route does with a matching request.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "lowercase", tag = "kind")]
pub enum Answer {
    /// Answer it with this status, headers and body (never reaching the server).
    Fulfill {
        /// HTTP status, 100..=599.
        status: u16,
        /// Response headers, in order.
        headers: Vec<(String, String)>,
        /// The body's bytes.
        #[serde(skip)]
        body: Vec<u8>,
        /// Its length, for the list.
        bytes: usize,
    },
    /// Fail it as a blocked request (`net::ERR_BLOCKED_BY_CLIENT`).
    Abort,
}

/// One route of a tab.
#[derive(Debug, Clone, Serialize)]
pub struct Route {
    /// The URL glob (`*` any run of characters, the rest literal).
    pub pattern: String,
    /// What it does.
    pub answer: Answer,
    /// Requests it answered so far.
    pub hits: u64,
}

#[derive(Default)]
struct TabRoutes {
    routes: Vec<Route>,
    /// The tab's pause listener runs.
    listening: bool,
    /// `offline on` holds.
    offline: bool,
}

/// Every tab's routes.
#[derive(Default)]
pub struct Routes {
    tabs: Arc<Mutex<HashMap<String, TabRoutes>>>,
}

/// `url` matches glob `pattern`: `*` any run (also empty), every other character itself.
pub fn glob_match(pattern: &str, url: &str) -> bool {
    let (p, u) = (pattern.as_bytes(), url.as_bytes());
    let (mut i, mut j, mut star, mut mark) = (0, 0, None, 0);
    while j < u.len() {
        if i < p.len() && p[i] == b'*' {
            star = Some(i);
            mark = j;
            i += 1;
        } else if i < p.len() && p[i] == u[j] {
            i += 1;
            j += 1;
        } else if let Some(s) = star {
            i = s + 1;
            mark += 1;
            j = mark;
        } else {
            return false;
        }
    }
    p[i..].iter().all(|c| *c == b'*')
}

/// The pattern as CDP's `urlPattern` reads it (`*` and `?` wildcards, `\` escapes): our `?`
/// and `\` are literal.
fn cdp_pattern(p: &str) -> String {
    p.replace('\\', "\\\\").replace('?', "\\?")
}

fn key(browser: &str, generation: u64, tab: &str) -> String {
    format!("{browser}/{generation}/{tab}")
}

impl Routes {
    fn patterns(&self, k: &str) -> Vec<Value> {
        let tabs = self.tabs.lock().unwrap_or_else(|p| p.into_inner());
        tabs.get(k)
            .map(|t| {
                t.routes
                    .iter()
                    .map(|r| json!({"urlPattern": cdp_pattern(&r.pattern), "requestStage": "Request"}))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Pauses what the tab's routes match (or nothing, once it has none).
    async fn apply(&self, page: &Page, k: &str) -> Result<(), AutomationError> {
        let patterns = self.patterns(k);
        if patterns.is_empty() {
            call(page, "Fetch.disable", json!({})).await?;
        } else {
            call(page, "Fetch.enable", json!({"patterns": patterns})).await?;
        }
        Ok(())
    }

    /// Starts the tab's pause listener unless it runs.
    async fn listen(&self, page: &Page, k: &str) -> Result<(), AutomationError> {
        {
            let tabs = self.tabs.lock().unwrap_or_else(|p| p.into_inner());
            if tabs.get(k).is_some_and(|t| t.listening) {
                return Ok(());
            }
        }
        let mut paused = bounded("listen", page.event_listener::<EventRequestPaused>()).await?;
        self.tabs.lock().unwrap_or_else(|p| p.into_inner()).entry(k.to_string()).or_default().listening = true;
        let store: Weak<Mutex<HashMap<String, TabRoutes>>> = Arc::downgrade(&self.tabs);
        let (page, k) = (page.clone(), k.to_string());
        tokio::spawn(async move {
            while let Some(ev) = paused.next().await {
                let Some(store) = store.upgrade() else { return };
                let answer = {
                    let mut tabs = store.lock().unwrap_or_else(|p| p.into_inner());
                    let route = tabs
                        .get_mut(&k)
                        .and_then(|t| t.routes.iter_mut().rev().find(|r| glob_match(&r.pattern, &ev.request.url)));
                    route.map(|r| {
                        r.hits += 1;
                        r.answer.clone()
                    })
                };
                let id = ev.request_id.as_ref().to_string();
                let r = match answer {
                    Some(Answer::Fulfill { status, headers, body, .. }) => {
                        let headers: Vec<Value> = headers.iter().map(|(n, v)| json!({"name": n, "value": v})).collect();
                        let body = base64::engine::general_purpose::STANDARD.encode(&body);
                        call(
                            &page,
                            "Fetch.fulfillRequest",
                            json!({"requestId": id, "responseCode": status, "responseHeaders": headers, "body": body}),
                        )
                        .await
                    }
                    Some(Answer::Abort) => {
                        call(&page, "Fetch.failRequest", json!({"requestId": id, "errorReason": "BlockedByClient"}))
                            .await
                    }
                    None => call(&page, "Fetch.continueRequest", json!({"requestId": id})).await,
                };
                if let Err(e) = r {
                    tracing::debug!("route: answering a paused request: {e}");
                }
            }
            // The tab is gone: its routes with it.
            if let Some(store) = store.upgrade() {
                store.lock().unwrap_or_else(|p| p.into_inner()).remove(&k);
            }
        });
        Ok(())
    }

    /// Adds (or replaces, same pattern) a route of the tab → its routes.
    pub async fn add(
        &self,
        page: &Page,
        browser: &str,
        generation: u64,
        pattern: &str,
        answer: Answer,
    ) -> Result<Vec<Route>, AutomationError> {
        if pattern.is_empty() || pattern.len() > MAX_PATTERN_BYTES {
            return Err(AutomationError::BadRequest(format!("the pattern must be 1..={MAX_PATTERN_BYTES} bytes")));
        }
        let k = key(browser, generation, page.target_id().as_ref());
        self.listen(page, &k).await?;
        {
            let mut tabs = self.tabs.lock().unwrap_or_else(|p| p.into_inner());
            let t = tabs.entry(k.clone()).or_default();
            t.routes.retain(|r| r.pattern != pattern);
            if t.routes.len() >= MAX_ROUTES {
                return Err(AutomationError::BadRequest(format!(
                    "the tab has {MAX_ROUTES} routes, the most it may have ('route PATTERN --off' removes one)"
                )));
            }
            t.routes.push(Route { pattern: pattern.to_string(), answer, hits: 0 });
        }
        self.apply(page, &k).await?;
        Ok(self.list(browser, generation, page.target_id().as_ref()))
    }

    /// Removes the tab's route of `pattern` (`None`: all) → whether one was, and its routes.
    pub async fn remove(
        &self,
        page: &Page,
        browser: &str,
        generation: u64,
        pattern: Option<&str>,
    ) -> Result<(usize, Vec<Route>), AutomationError> {
        let k = key(browser, generation, page.target_id().as_ref());
        let removed = {
            let mut tabs = self.tabs.lock().unwrap_or_else(|p| p.into_inner());
            match tabs.get_mut(&k) {
                Some(t) => {
                    let before = t.routes.len();
                    t.routes.retain(|r| pattern.is_some_and(|p| r.pattern != p));
                    before - t.routes.len()
                }
                None => 0,
            }
        };
        if removed > 0 {
            self.apply(page, &k).await?;
        }
        Ok((removed, self.list(browser, generation, page.target_id().as_ref())))
    }

    /// The tab's routes, oldest first (the newest matching one answers).
    pub fn list(&self, browser: &str, generation: u64, tab: &str) -> Vec<Route> {
        let tabs = self.tabs.lock().unwrap_or_else(|p| p.into_inner());
        tabs.get(&key(browser, generation, tab)).map(|t| t.routes.clone()).unwrap_or_default()
    }

    /// Whether `offline on` holds for the tab.
    pub fn offline(&self, browser: &str, generation: u64, tab: &str) -> bool {
        let tabs = self.tabs.lock().unwrap_or_else(|p| p.into_inner());
        tabs.get(&key(browser, generation, tab)).is_some_and(|t| t.offline)
    }

    /// `offline on|off` for the tab (`Network.emulateNetworkConditions`): every request of it
    /// fails with `net::ERR_INTERNET_DISCONNECTED` while on.
    pub async fn set_offline(
        &self,
        page: &Page,
        browser: &str,
        generation: u64,
        on: bool,
    ) -> Result<(), AutomationError> {
        call(
            page,
            "Network.emulateNetworkConditions",
            json!({"offline": on, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1}),
        )
        .await?;
        let k = key(browser, generation, page.target_id().as_ref());
        // The entry goes with the tab through its pause listener; start one so it does.
        self.listen(page, &k).await?;
        self.tabs.lock().unwrap_or_else(|p| p.into_inner()).entry(k).or_default().offline = on;
        Ok(())
    }
}

/// Parses `K:V` header arguments, bounded.
pub fn parse_headers(hs: &[String]) -> Result<Vec<(String, String)>, AutomationError> {
    if hs.len() > MAX_ROUTE_HEADERS {
        return Err(AutomationError::BadRequest(format!("at most {MAX_ROUTE_HEADERS} headers")));
    }
    hs.iter()
        .map(|h| match h.split_once(':') {
            Some((k, v)) if !k.trim().is_empty() && !k.contains(char::is_whitespace) => {
                Ok((k.trim().to_string(), v.trim().to_string()))
            }
            _ => Err(AutomationError::BadRequest(format!(
                "{h:?} is no header (K:V, e.g. Content-Type:application/json)"
            ))),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_any_run_and_the_rest_literally() {
        assert!(glob_match("*/api/orders*", "http://127.0.0.1:8/api/orders.json"));
        assert!(glob_match("http://a/*.json", "http://a/x/y.json"));
        assert!(!glob_match("http://a/*.json", "http://a/x/y.jsonp"));
        assert!(glob_match("*", ""));
        assert!(glob_match("http://a/?x=1", "http://a/?x=1") && !glob_match("http://a/?x=1", "http://a/bx=1"));
        assert_eq!(cdp_pattern("*/a?b"), "*/a\\?b");
    }

    #[test]
    fn headers_are_k_colon_v() {
        assert_eq!(parse_headers(&["Content-Type: application/json".into()]).unwrap()[0].1, "application/json");
        assert!(parse_headers(&["novalue".into()]).is_err());
        assert!(parse_headers(&vec!["a:b".to_string(); MAX_ROUTE_HEADERS + 1]).is_err());
    }
}
