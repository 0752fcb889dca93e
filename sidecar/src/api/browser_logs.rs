//! `/api/control/browser/console` and `/network` (protocol §9.7): what the active tab's page
//! logged and loaded, from the rings the `automation` module keeps per tab.

use axum::extract::State;
use axum::{Extension, Json};
use serde::Deserialize;
use serde_json::Value;

use super::body::JsonBody;
use super::browser_pane::{browser_of, with_pane};
use super::error::ApiError;
use super::state::AppState;
use crate::automation::Level;
use crate::control::Caller;

/// Body of `POST /api/control/browser/console`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConsoleReq {
    #[serde(default)]
    pane: Option<String>,
    #[serde(default)]
    level: Option<String>,
    #[serde(default)]
    since_navigation: bool,
}

/// `POST /api/control/browser/console` → `{"tab","entries":[{"level","source","text","url",
/// "line","time_ms"}],"dropped"}`.
pub async fn console(
    State(st): State<AppState>,
    Extension(caller): Extension<Caller>,
    JsonBody(req): JsonBody<ConsoleReq>,
) -> Result<Json<Value>, ApiError> {
    let min = match req.level.as_deref() {
        None => Level::Debug,
        Some(l) => {
            Level::parse(l).ok_or_else(|| ApiError::BadRequest("level must be debug, info, warning or error".into()))?
        }
    };
    let (h, b) = browser_of(&st, caller, req.pane.as_deref())?;
    Ok(with_pane(st.automation.console(&b, min, req.since_navigation).await?, h, &b))
}

/// Body of `POST /api/control/browser/network`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetworkReq {
    #[serde(default)]
    pane: Option<String>,
    #[serde(default)]
    failed: bool,
}

/// `POST /api/control/browser/network` → `{"tab","requests":[{"method","url","kind",
/// "status","error"}],"dropped"}`.
pub async fn network(
    State(st): State<AppState>,
    Extension(caller): Extension<Caller>,
    JsonBody(req): JsonBody<NetworkReq>,
) -> Result<Json<Value>, ApiError> {
    let (h, b) = browser_of(&st, caller, req.pane.as_deref())?;
    Ok(with_pane(st.automation.network(&b, req.failed).await?, h, &b))
}
