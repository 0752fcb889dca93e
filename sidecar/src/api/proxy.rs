//! `/api/proxy/grants`: ask the `proxy` module for a grant, list them, revoke one
//! (protocol §6). The request is rebuilt field by field before it reaches the proxy.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use serde::Deserialize;

use super::body::JsonBody;
use super::error::ApiError;
use super::state::AppState;
use crate::proxy::GrantInfo;

/// Longest URL accepted, in bytes.
const MAX_URL_BYTES: usize = 8192;

/// `POST /api/proxy/grants` body.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateGrant {
    /// The upstream URL to frame.
    url: String,
    /// The app's `location.origin` followed by `location.ancestorOrigins`.
    #[serde(default)]
    embedders: Vec<String>,
}

/// `POST /api/proxy/grants` → 200 the grant.
pub async fn create(
    State(state): State<AppState>,
    JsonBody(body): JsonBody<CreateGrant>,
) -> Result<Json<GrantInfo>, ApiError> {
    if body.url.len() > MAX_URL_BYTES {
        return Err(ApiError::BadRequest(format!("url must be at most {MAX_URL_BYTES} bytes")));
    }
    Ok(Json(state.proxy.grant(&body.url, &body.embedders).await?))
}

/// `GET /api/proxy/grants` → 200 `{"grants":[…]}`.
pub async fn list(State(state): State<AppState>) -> Json<serde_json::Value> {
    Json(serde_json::json!({ "grants": state.proxy.list() }))
}

/// `DELETE /api/proxy/grants/{grant}` → 204, or 404.
pub async fn revoke(State(state): State<AppState>, Path(grant): Path<String>) -> Result<StatusCode, ApiError> {
    if state.proxy.revoke(&grant) {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::NotFound("grant"))
    }
}
