//! Who drives which browser pane (issue 26): `GET /api/drivers` and the human's handover,
//! `PUT /api/drivers` (the pane menu's "Let t3 drive this"). App only: a pane token never
//! reaches here (the guard admits pane tokens to `/api/control/` only), so no terminal can
//! take another's pane.

use axum::extract::State;
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};

use super::body::JsonBody;
use super::error::ApiError;
use super::state::AppState;
use crate::control::{ControlError, Handle, PaneKind};

/// `GET /api/drivers` → `{"drivers":{"b1":"t3",…}}`: each driven browser pane's terminal.
pub async fn list(State(st): State<AppState>) -> Json<Value> {
    Json(json!({"drivers": *st.control.drivers.subscribe().borrow()}))
}

/// Body of `PUT /api/drivers`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HandOver {
    pane: String,
    terminal: String,
}

/// `PUT /api/drivers` with `{"pane":"bN","terminal":"tM"}`: the human hands browser pane
/// `bN` to terminal `tM` → `{"drivers":{…}}` after it. `bN` must be a browser pane on the
/// wall and `tM` a terminal pane this sidecar runs; else `400 bad_request` or
/// `404 unknown_target`.
pub async fn hand_over(State(st): State<AppState>, JsonBody(req): JsonBody<HandOver>) -> Result<Json<Value>, ApiError> {
    let parse = |s: &str, kind: PaneKind| -> Result<Handle, ApiError> {
        match s.parse::<Handle>() {
            Ok(h) if h.kind == kind => Ok(h),
            _ => Err(ApiError::BadRequest(format!(
                "{:?} is not a {} handle",
                s.chars().take(32).collect::<String>(),
                if kind == PaneKind::Browser { "browser pane" } else { "terminal pane" }
            ))),
        }
    };
    let pane = parse(&req.pane, PaneKind::Browser)?;
    let terminal = parse(&req.terminal, PaneKind::Terminal)?;
    let (state, _) = st.control.windows.state();
    if state.by_handle(pane).is_none() {
        return Err(ControlError::UnknownTarget(pane.to_string()).into());
    }
    if !st.control.known_terminal_pane(terminal) {
        return Err(ControlError::UnknownTarget(terminal.to_string()).into());
    }
    st.control.drivers.hand_over(pane, terminal);
    Ok(list(State(st)).await)
}
