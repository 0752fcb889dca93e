//! `/api/proxy/grants`: ask the `proxy` module for a grant, list them, revoke one
//! (protocol §6). The request is rebuilt field by field before it reaches the proxy.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use serde::Deserialize;

use super::body::JsonBody;
use super::error::ApiError;
use super::state::AppState;
use std::sync::Arc;

use crate::proxy::{Dialer, GrantInfo, Route, UpstreamStream};
use crate::remote::{Link, Target};

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
    /// A remote link id (`r1`): the upstream is dialled on that remote, through the link
    /// (protocol §6, §11). Absent: on this machine.
    #[serde(default)]
    remote: Option<String>,
}

/// `POST /api/proxy/grants` → 200 the grant.
pub async fn create(
    State(state): State<AppState>,
    JsonBody(body): JsonBody<CreateGrant>,
) -> Result<Json<GrantInfo>, ApiError> {
    if body.url.len() > MAX_URL_BYTES {
        return Err(ApiError::BadRequest(format!("url must be at most {MAX_URL_BYTES} bytes")));
    }
    let route = match body.remote {
        None => None,
        Some(id) => {
            let link = state.remotes.get(&id).ok_or(ApiError::NotFound("remote"))?;
            Some(Route { dial: link_dialer(&id, &link), name: id })
        }
    };
    Ok(Json(state.proxy.grant_via(&body.url, &body.embedders, route).await?))
}

/// A dialer that opens each upstream connection as a `tcp` stream of `link` (the host
/// resolved and dialled on the remote). It holds the link weakly: a removed link, or one not
/// connected, fails at once, and the proxy answers with its upstream error page.
fn link_dialer(id: &str, link: &Arc<Link>) -> Dialer {
    let (id, link) = (id.to_string(), Arc::downgrade(link));
    Arc::new(move |host: String, port: u16| {
        let (id, link) = (id.clone(), link.clone());
        Box::pin(async move {
            let link = link.upgrade().ok_or_else(|| format!("remote {id} was removed"))?;
            match link.open(&Target::Tcp { host, port }).await {
                Ok(s) => Ok(Box::new(s) as Box<dyn UpstreamStream>),
                Err(e) => Err(format!("through remote {id}: {e}")),
            }
        })
    })
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
