//! `/api/control/browser/find` and `/text` (protocol §9.7): reading a browser pane's page
//! without its whole outline.

use axum::extract::State;
use axum::{Extension, Json};
use serde::Deserialize;
use serde_json::Value;

use super::body::JsonBody;
use super::browser_pane::{browser_of, with_pane};
use super::error::ApiError;
use super::state::AppState;
use crate::automation::{Find, DEFAULT_FIND_LIMIT, DEFAULT_TEXT_BYTES, FIND_LIMIT_RANGE, MAX_BYTES_RANGE};
use crate::control::Caller;

/// Longest `text`, `role` or `name` `find` takes, in bytes.
const MAX_FIND_BYTES: usize = 1024;

/// Body of `POST /api/control/browser/find`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FindReq {
    #[serde(default)]
    pane: Option<String>,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    role: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    limit: Option<usize>,
}

/// `POST /api/control/browser/find` `{"text"?,"role"?,"name"?,"limit"?}` → `{"text",
/// "matches":[{"line","ref","locator"}],"total","url","tab"}`: the elements and texts that
/// match, in document order, at most `limit` (default 20, 1..=500).
pub async fn find(
    State(st): State<AppState>,
    Extension(caller): Extension<Caller>,
    JsonBody(req): JsonBody<FindReq>,
) -> Result<Json<Value>, ApiError> {
    let nonempty = |v: Option<String>| v.filter(|s| !s.trim().is_empty());
    let q = Find { text: nonempty(req.text), role: nonempty(req.role), name: nonempty(req.name) };
    if q.text.is_none() && q.role.is_none() {
        return Err(ApiError::BadRequest("find takes a text, or a role (and a name)".into()));
    }
    if q.name.is_some() && q.role.is_none() {
        return Err(ApiError::BadRequest("name goes with role; without one, give the text".into()));
    }
    if [&q.text, &q.role, &q.name].iter().any(|v| v.as_ref().is_some_and(|s| s.len() > MAX_FIND_BYTES)) {
        return Err(ApiError::BadRequest(format!("text, role and name are at most {MAX_FIND_BYTES} bytes")));
    }
    let limit = req.limit.unwrap_or(DEFAULT_FIND_LIMIT);
    if !FIND_LIMIT_RANGE.contains(&limit) {
        return Err(ApiError::BadRequest(format!(
            "limit must be {}..={}, got {limit}",
            FIND_LIMIT_RANGE.start(),
            FIND_LIMIT_RANGE.end()
        )));
    }
    let (h, b) = browser_of(&st, caller, req.pane.as_deref())?;
    Ok(with_pane(st.automation.find(&b, &q, limit).await?, h, &b))
}

/// Body of `POST /api/control/browser/text`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TextReq {
    #[serde(default)]
    pane: Option<String>,
    #[serde(default, rename = "ref")]
    r#ref: Option<String>,
    #[serde(default)]
    max_bytes: Option<usize>,
}

/// `POST /api/control/browser/text` `{"ref"?,"max_bytes"?}` → `{"text","bytes","cut":
/// {"bytes","furniture_bytes","reason"}|null,"url","tab","root"}`: the readable text of the
/// page or of element `ref` (default budget 16384 bytes, 1024..=1048576).
pub async fn text(
    State(st): State<AppState>,
    Extension(caller): Extension<Caller>,
    JsonBody(req): JsonBody<TextReq>,
) -> Result<Json<Value>, ApiError> {
    let max = req.max_bytes.unwrap_or(DEFAULT_TEXT_BYTES);
    if !MAX_BYTES_RANGE.contains(&max) {
        return Err(ApiError::BadRequest(format!(
            "max_bytes must be {}..={}, got {max}",
            MAX_BYTES_RANGE.start(),
            MAX_BYTES_RANGE.end()
        )));
    }
    let (h, b) = browser_of(&st, caller, req.pane.as_deref())?;
    Ok(with_pane(st.automation.text(&b, req.r#ref.as_deref(), max).await?, h, &b))
}
