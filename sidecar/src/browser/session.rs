//! CDP sessions per frame process, shared by agent browsing (`automation`) and the viewer's
//! popup probe (`viewer/popup.rs`): raw JSON calls on a tab's own page session, and child
//! sessions on out-of-process (cross-site) iframe targets (DESIGN §12: "attach to their
//! targets").
//!
//! chromiumoxide's typed structs refuse a whole answer when Chromium sends a value they do not
//! know (a new AX property name, say), so calls here read answers as JSON.
//!
//! chromiumoxide sends commands only on a page's own session (it auto-attaches frame targets
//! flat for itself but offers no way to send on those sessions), so a child session is attached
//! through the page's session without `flatten` (`Target.attachToTarget`): its commands go out
//! as `Target.sendMessageToTarget`, its answers and events come back as
//! `Target.receivedMessageFromTarget` events on the page's session. One task per child session
//! reads them continuously: answers go to the call that waits for them, events to the
//! subscribers of their method ([`Session::subscribe`]), anything else is dropped, so nothing
//! piles up however long the session lives. A child session lives as long as its [`Session`]
//! clones and is detached when the last one drops.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chromiumoxide::cdp::browser_protocol::target::EventReceivedMessageFromTarget;
use chromiumoxide::listeners::EventStream;
use chromiumoxide::types::{Command, Method, MethodId};
use chromiumoxide::Page;
use futures_util::StreamExt;
use serde_json::{json, Value};
use tokio::sync::{mpsc, oneshot};

use super::{bounded, bounded_for, BrowserError, CDP_CALL_BOUND_MS};

/// One CDP command: `method` with `params`, answered with the JSON result.
#[derive(Debug, Clone)]
struct Raw {
    method: &'static str,
    params: Value,
}

impl serde::Serialize for Raw {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.params.serialize(s)
    }
}

impl Method for Raw {
    fn identifier(&self) -> MethodId {
        self.method.into()
    }
}

impl Command for Raw {
    type Response = Value;
}

/// Calls `method` with `params` on `page`'s own session, bounded like every CDP call (10 s,
/// `cdp_timeout` naming the method).
pub async fn page_call(page: &Page, method: &'static str, params: Value) -> Result<Value, BrowserError> {
    super::cdp_counts::note_command(page.target_id().as_ref(), method, &params);
    raw_page_call(page, method, params).await
}

/// [`page_call`] without counting (the caller counted the command it carries).
async fn raw_page_call(page: &Page, method: &'static str, params: Value) -> Result<Value, BrowserError> {
    raw_page_call_within(page, method, params, CDP_CALL_BOUND_MS).await
}

/// [`raw_page_call`] bounded by `ms` milliseconds.
async fn raw_page_call_within(
    page: &Page,
    method: &'static str,
    params: Value,
    ms: u64,
) -> Result<Value, BrowserError> {
    let r = bounded_for(method, ms, page.execute(Raw { method, params })).await?;
    Ok(r.result)
}

/// Calls `method` with `params` on a session: a page (its own session) or a [`Session`] (a
/// frame process's), bounded the same way.
pub async fn call(session: impl Into<Session>, method: &'static str, params: Value) -> Result<Value, BrowserError> {
    session.into().call(method, params).await
}

/// Calls `function` (JavaScript source of a function) with `this` = the object `object_id`
/// (an object of `session`) and `args` (each `{"value":…}` or `{"objectId":…}`); returns its
/// value by value.
pub async fn call_on(
    session: impl Into<Session>,
    object_id: &str,
    function: &str,
    args: Vec<Value>,
) -> Result<Value, BrowserError> {
    let r = call(
        session,
        "Runtime.callFunctionOn",
        json!({
            "objectId": object_id,
            "functionDeclaration": function,
            "arguments": args,
            "returnByValue": true,
            "awaitPromise": true,
        }),
    )
    .await?;
    if let Some(ex) = r.get("exceptionDetails") {
        let text = ex["exception"]["description"].as_str().or(ex["text"].as_str()).unwrap_or("an exception");
        return Err(BrowserError::Cdp(format!("Runtime.callFunctionOn threw: {text}")));
    }
    Ok(r["result"]["value"].clone())
}

/// Where CDP commands about a node or frame go: the tab's page session, or a child session
/// on an out-of-process frame. Cheap to clone.
#[derive(Clone)]
pub struct Session {
    page: Page,
    child: Option<Arc<Child>>,
}

/// A child session: its id, the frame target it is attached to, the frame owner (`<iframe>`
/// element, a `backendNodeId` of the parent session) that shows it, and the routes of what
/// comes back on it.
struct Child {
    id: String,
    target: String,
    parent: Session,
    owner: i64,
    routes: Arc<Routes>,
    next: AtomicU64,
    reader: tokio::task::JoinHandle<()>,
}

/// Where a child session's messages go: calls waiting by command id, and event subscribers
/// (method, sender tagged with the session's target).
#[derive(Default)]
struct Routes {
    answers: Mutex<HashMap<u64, oneshot::Sender<Value>>>,
    events: Mutex<Vec<(&'static str, mpsc::Sender<(String, Value)>)>>,
}

impl Routes {
    fn answers(&self) -> std::sync::MutexGuard<'_, HashMap<u64, oneshot::Sender<Value>>> {
        self.answers.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn events(&self) -> std::sync::MutexGuard<'_, Vec<(&'static str, mpsc::Sender<(String, Value)>)>> {
        self.events.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        self.reader.abort();
        let (page, id) = (self.parent.page.clone(), self.id.clone());
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move {
                // A frame that went away took its session with it.
                if let Err(e) = page_call(&page, "Target.detachFromTarget", json!({"sessionId": id})).await {
                    tracing::debug!("detach from frame session: {e}");
                }
            });
        }
    }
}

/// Reads the page session's `Target.receivedMessageFromTarget` events for child session `id`
/// until the page's session ends: answers to their calls, events to their subscribers. At the
/// end every waiting call and subscriber is let go (they see the session ended).
async fn route(
    mut messages: EventStream<EventReceivedMessageFromTarget>,
    id: String,
    target: String,
    routes: Arc<Routes>,
) {
    while let Some(ev) = messages.next().await {
        if ev.session_id.as_ref() != id {
            continue;
        }
        let Ok(mut v) = serde_json::from_str::<Value>(&ev.message) else { continue };
        if let Some(n) = v["id"].as_u64() {
            if let Some(tx) = routes.answers().remove(&n) {
                let _ = tx.send(v);
            }
            continue;
        }
        let Some(method) = v["method"].as_str().map(str::to_string) else { continue };
        let mut subs = routes.events();
        subs.retain(|(_, tx)| !tx.is_closed());
        for (want, tx) in subs.iter() {
            if *want == method && tx.try_send((target.clone(), v["params"].take())).is_err() {
                tracing::debug!("{method} of frame {target} dropped: its subscriber is behind");
            }
        }
    }
    routes.answers().clear();
    routes.events().clear();
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session").field("targets", &self.targets()).finish()
    }
}

impl From<&Page> for Session {
    fn from(page: &Page) -> Session {
        Session { page: page.clone(), child: None }
    }
}

impl From<&Session> for Session {
    fn from(s: &Session) -> Session {
        s.clone()
    }
}

impl Session {
    /// The tab's page (whose session carries a child session's messages).
    pub fn page(&self) -> &Page {
        &self.page
    }

    /// The session above this one and the frame owner (a `backendNodeId` there) that shows
    /// this session's frame; `None` for the tab's own session.
    pub fn owner(&self) -> Option<(&Session, i64)> {
        self.child.as_ref().map(|c| (&c.parent, c.owner))
    }

    /// The out-of-process frame targets from the tab down to this session, outermost first
    /// (empty for the tab's own session).
    pub fn targets(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut s = self;
        while let Some(c) = &s.child {
            out.push(c.target.clone());
            s = &c.parent;
        }
        out.reverse();
        out
    }

    /// Sends `method` with `params` on this session → the JSON result, bounded like every CDP
    /// call (`cdp_timeout` naming the method).
    pub async fn call(&self, method: &'static str, params: Value) -> Result<Value, BrowserError> {
        self.call_within(method, params, CDP_CALL_BOUND_MS).await
    }

    /// [`Session::call`] bounded by `ms` milliseconds instead (a whole page's read,
    /// [`super::PAGE_READ_BOUND_MS`]).
    pub async fn call_within(&self, method: &'static str, params: Value, ms: u64) -> Result<Value, BrowserError> {
        // Counted for the tab, whichever frame process's session carries it.
        super::cdp_counts::note_command(self.page.target_id().as_ref(), method, &params);
        let Some(c) = &self.child else { return raw_page_call_within(&self.page, method, params, ms).await };
        let id = c.next.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        c.routes.answers().insert(id, tx);
        let message = json!({"id": id, "method": method, "params": params}).to_string();
        if let Err(e) =
            raw_page_call(&self.page, "Target.sendMessageToTarget", json!({"sessionId": c.id, "message": message}))
                .await
        {
            c.routes.answers().remove(&id);
            return Err(e);
        }
        let mut v = match tokio::time::timeout(Duration::from_millis(ms), rx).await {
            Ok(Ok(v)) => v,
            Ok(Err(_)) => return Err(BrowserError::Cdp(format!("{method}: the page's session ended"))),
            Err(_) => {
                c.routes.answers().remove(&id);
                return Err(BrowserError::Timeout(method));
            }
        };
        if let Some(e) = v.get("error") {
            return Err(BrowserError::Cdp(format!("{method}: {}", e["message"].as_str().unwrap_or("failed"))));
        }
        // Taken, not copied: a DOM snapshot answer is megabytes.
        Ok(v["result"].take())
    }

    /// Sends this child session's events named `method` (their params, tagged with the
    /// session's target) to `tx` while it is open; an event that finds `tx` full is dropped
    /// (logged). The tab's own session has no such route (chromiumoxide's typed listeners
    /// serve it): false there.
    pub fn subscribe(&self, method: &'static str, tx: mpsc::Sender<(String, Value)>) -> bool {
        let Some(c) = &self.child else { return false };
        c.routes.events().push((method, tx));
        true
    }

    /// Attaches a child session to the out-of-process frame `target` whose owner element is
    /// `owner` (a `backendNodeId` of this session).
    pub async fn attach(&self, target: &str, owner: i64) -> Result<Session, BrowserError> {
        // Listening before the first message is sent, so no answer is missed.
        let messages =
            bounded("Target.receivedMessageFromTarget", self.page.event_listener::<EventReceivedMessageFromTarget>())
                .await?;
        let r = page_call(&self.page, "Target.attachToTarget", json!({"targetId": target, "flatten": false})).await?;
        let id = r["sessionId"]
            .as_str()
            .ok_or_else(|| BrowserError::Cdp("Target.attachToTarget: no sessionId".into()))?
            .to_string();
        let routes = Arc::new(Routes::default());
        let reader = tokio::spawn(route(messages, id.clone(), target.to_string(), routes.clone()));
        let child = Child {
            id,
            target: target.to_string(),
            parent: self.clone(),
            owner,
            routes,
            next: AtomicU64::new(1),
            reader,
        };
        Ok(Session { page: self.page.clone(), child: Some(Arc::new(child)) })
    }

    /// The frame owner of frame `frame` (a child frame of this session's process), as a
    /// `backendNodeId` of this session; `None` when it is not there.
    pub async fn frame_owner(&self, frame: &str) -> Result<Option<i64>, BrowserError> {
        match self.call("DOM.getFrameOwner", json!({"frameId": frame})).await {
            Ok(v) => Ok(v["backendNodeId"].as_i64()),
            Err(BrowserError::Cdp(_)) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The ids of the frames this session's process renders (`Page.getFrameTree`): its own
    /// frame and every same-process frame under it, not the out-of-process ones.
    pub async fn frame_ids(&self) -> Result<Vec<String>, BrowserError> {
        fn walk(t: &Value, out: &mut Vec<String>) {
            if let Some(id) = t["frame"]["id"].as_str() {
                out.push(id.to_string());
            }
            for c in t["childFrames"].as_array().into_iter().flatten() {
                walk(c, out);
            }
        }
        let mut out = Vec::new();
        walk(&self.call("Page.getFrameTree", json!({})).await?["frameTree"], &mut out);
        Ok(out)
    }

    /// This session's viewport (its frame's, for a child session) in its own CSS px, and its
    /// scroll offset: `(width, height, scroll x, scroll y)`.
    pub async fn viewport(&self) -> Result<(f64, f64, f64, f64), BrowserError> {
        let m = self.call("Page.getLayoutMetrics", json!({})).await?;
        let v = &m["cssLayoutViewport"];
        let n = |k: &str| v[k].as_f64().unwrap_or(0.0);
        Ok((n("clientWidth"), n("clientHeight"), n("pageX"), n("pageY")))
    }
}
