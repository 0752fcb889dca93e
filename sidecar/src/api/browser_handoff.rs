//! `ph browser handoff` (issue 26 item 3, protocol §9.7): the agent hands one step in its
//! browser pane to the human and waits for "Done, hand back", "Decline" or its timeout;
//! the human answers with `POST /api/handoffs/{pane}` (app only: the pane's buttons).

use std::time::Duration;

use axum::extract::{Path, State};
use axum::{Extension, Json};
use serde::Deserialize;
use serde_json::{json, Value};

use super::body::JsonBody;
use super::browser_pane::{browser_to_drive, with_pane};
use super::error::ApiError;
use super::state::AppState;
use crate::browser::BrowserRef;
use crate::control::{Answer, Caller, ControlError, Handle, PaneKind, DEFAULT_HANDOFF_S, MAX_HANDOFF_S};

/// Body of `POST /api/control/browser/handoff`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HandoffReq {
    #[serde(default)]
    pane: Option<String>,
    reason: String,
    #[serde(default)]
    timeout_s: Option<u64>,
}

/// What the agent may know of a pane: its tabs' URLs and titles, and which is active.
/// How long a hand back waits for a navigation still loading to commit, in milliseconds.
const SETTLE_AFTER_HANDBACK_MS: u64 = 5_000;

fn seen(b: &BrowserRef) -> Value {
    let v = b.subscribe().borrow().clone();
    let active = v.tabs.iter().find(|t| Some(&t.id) == v.active.as_ref());
    json!({
        "url": active.map(|t| t.url.clone()),
        "title": active.map(|t| t.title.clone()),
        "tabs": v.tabs.iter().map(|t| json!({"url": t.url, "title": t.title})).collect::<Vec<_>>(),
    })
}

/// `POST /api/control/browser/handoff` with `{"reason","timeout_s"?}` → once the human
/// hands back: `{"handed_back":true,"before","after","changed":[…]}` (`url`, `title`,
/// `tabs`: what differs). `409 declined` when the human declines, `408 timed_out` past
/// `timeout_s` (default 300, at most 3600); refused as any changing verb first
/// (`pane_in_use`, `handed_over`). The pane is free again however the call ends.
pub async fn handoff(
    State(st): State<AppState>,
    Extension(caller): Extension<Caller>,
    JsonBody(req): JsonBody<HandoffReq>,
) -> Result<Json<Value>, ApiError> {
    let secs = req.timeout_s.unwrap_or(DEFAULT_HANDOFF_S);
    if !(1..=MAX_HANDOFF_S).contains(&secs) {
        return Err(ApiError::BadRequest(format!("timeout_s must be 1..={MAX_HANDOFF_S}, got {secs}")));
    }
    let (h, b) = browser_to_drive(&st, caller, req.pane.as_deref())?;
    let rx = st.control.handoffs.begin(h, &req.reason, caller.0)?;
    // Ends the handoff whatever happens to this call (answered, timed out, or dropped).
    struct Ends<'a>(&'a AppState, Handle);
    impl Drop for Ends<'_> {
        fn drop(&mut self) {
            self.0.control.handoffs.end(self.1);
        }
    }
    let _ends = Ends(&st, h);
    let before = seen(&b);
    let answer = match tokio::time::timeout(Duration::from_secs(secs), rx).await {
        Ok(Ok(a)) => a,
        Ok(Err(_)) => return Err(ControlError::Unverified("the handoff ended without an answer".into()).into()),
        Err(_) => {
            return Err(ControlError::TimedOut(format!("the human did not hand {h} back within {secs} s")).into());
        }
    };
    if answer == Answer::Declined {
        return Err(ControlError::Declined(h.to_string()).into());
    }
    // The human may hand back while a navigation they started is still loading: what
    // changed is read once it has committed (bounded: a page that never loads is read as is).
    let mut view = b.subscribe();
    let _ = tokio::time::timeout(Duration::from_millis(SETTLE_AFTER_HANDBACK_MS), view.wait_for(|v| !v.loading)).await;
    let after = seen(&b);
    let changed: Vec<&str> = ["url", "title", "tabs"].into_iter().filter(|k| before[*k] != after[*k]).collect();
    Ok(with_pane(json!({"handed_back": true, "before": before, "after": after, "changed": changed}), h, &b))
}

/// Body of `POST /api/handoffs/{pane}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnswerReq {
    answer: String,
}

/// `POST /api/handoffs/{pane}` with `{"answer":"done"|"decline"}` (app only): the human's
/// answer to the pane's handoff → `{"pane","answer"}`; `404 unknown_target` when none is
/// pending.
pub async fn answer(
    State(st): State<AppState>,
    Path(pane): Path<String>,
    JsonBody(req): JsonBody<AnswerReq>,
) -> Result<Json<Value>, ApiError> {
    let h = match pane.parse::<Handle>() {
        Ok(h) if h.kind == PaneKind::Browser => h,
        _ => return Err(ApiError::BadRequest("the pane is a browser pane handle (b3)".into())),
    };
    let a = match req.answer.as_str() {
        "done" => Answer::Done,
        "decline" => Answer::Declined,
        _ => return Err(ApiError::BadRequest("answer must be done or decline".into())),
    };
    st.control.handoffs.answer(h, a)?;
    Ok(Json(json!({"pane": h.to_string(), "answer": req.answer})))
}
