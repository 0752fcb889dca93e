//! Sealed content verbs of `ph browser` (issue 24, protocol §9.7): the policy as agents read
//! it (never write it: there is no write route here) and the per-tab counts of CDP work.

use axum::extract::State;
use axum::{Extension, Json};
use serde::Deserialize;
use serde_json::{json, Value};

use super::body::JsonBody;
use super::browser_pane::{browser_of, browser_to_drive, with_pane};
use super::error::ApiError;
use super::state::AppState;
use crate::automation::sealed::{Policy, WalkRequest};
use crate::control::Caller;

/// The sealed-content policy in force: the configuration's `[agent.sealed]` under the
/// environment's kill switch.
pub fn policy_of(st: &AppState) -> Policy {
    Policy::current(&st.settings.current().config.agent.sealed)
}

/// `GET /api/control/browser/policy` → `{"policy":{every [agent.sealed] key,
/// "effective_enabled", "env":{"name","switch"}}}`. Readable with a pane token; read-only.
pub async fn policy(State(st): State<AppState>) -> Json<Value> {
    Json(json!({"policy": policy_of(&st).to_json()}))
}

/// Body of `POST /api/control/browser/stats`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StatsReq {
    #[serde(default)]
    pane: Option<String>,
}

/// `POST /api/control/browser/stats` → `{"pane","tab","counts":{"ax_reads","pierce_reads",
/// "sealed_scans","cache_hits","focus_walk_steps"}}` of the pane's active tab.
pub async fn stats(
    State(st): State<AppState>,
    Extension(caller): Extension<Caller>,
    JsonBody(req): JsonBody<StatsReq>,
) -> Result<Json<Value>, ApiError> {
    let (h, b) = browser_of(&st, caller, req.pane.as_deref())?;
    Ok(with_pane(st.automation.stats(&b)?, h, &b))
}

/// Body of `POST /api/control/browser/focus_walk`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FocusWalkReq {
    #[serde(default)]
    pane: Option<String>,
    #[serde(rename = "ref")]
    r#ref: String,
    #[serde(default)]
    max_steps: Option<u32>,
    #[serde(default)]
    back: bool,
    #[serde(default = "yes")]
    restore: bool,
}

fn yes() -> bool {
    true
}

/// `POST /api/control/browser/focus_walk` with `{"ref","max_steps"?,"back"?,"restore"?}` →
/// the steps, where focus landed and why the walk stopped (protocol §9.7,
/// `Automation::focus_walk`). Refused as the policy says.
pub async fn focus_walk(
    State(st): State<AppState>,
    Extension(caller): Extension<Caller>,
    JsonBody(req): JsonBody<FocusWalkReq>,
) -> Result<Json<Value>, ApiError> {
    let (h, b) = browser_to_drive(&st, caller, req.pane.as_deref())?;
    let walk = WalkRequest { max_steps: req.max_steps, back: req.back, restore: req.restore };
    Ok(with_pane(st.automation.focus_walk(&b, &req.r#ref, walk, &policy_of(&st)).await?, h, &b))
}

/// Adds the sealed controls of `b`'s active tab to snapshot answer `out`: `"sealed"` (see
/// `Automation::sealed_controls`) and its lines after the outline's text.
pub(super) async fn add_sealed(
    st: &AppState,
    b: &crate::browser::BrowserRef,
    policy: &Policy,
    out: &mut Value,
) -> Result<(), ApiError> {
    let mut sealed = st.automation.sealed_controls(b, policy).await?;
    let lines = sealed["text"].take();
    let text = out["text"].as_str().unwrap_or("").to_string();
    out["text"] = format!(
        "{text}sealed controls (closed shadow roots; act with their sN token):\n{}",
        lines.as_str().unwrap_or("")
    )
    .into();
    if let Some(o) = sealed.as_object_mut() {
        o.remove("text");
    }
    out["sealed"] = sealed;
    Ok(())
}
