//! `/api/control/browser/console`, `/network`, `/route`, `/offline`, `/events` and
//! `/downloads` (protocol §9.7): what the active tab's page logged, loaded and went through,
//! from the rings the `automation` module keeps per tab, the requests it mocks, blocks or
//! cuts off, and the browser's downloads.

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
    #[serde(default)]
    id: Option<u64>,
    #[serde(default)]
    har: bool,
}

/// `POST /api/control/browser/network` → `{"tab","requests":[{"n","method","url","kind",
/// "status","error"}],"dropped"}`; with `id`, that request in full
/// ([`crate::automation::Automation::network_entry`]); with `har`, `{"tab","entries",
/// "dropped","har"}`. Credentials show only when the human set `[agent] show_secrets`.
pub async fn network(
    State(st): State<AppState>,
    Extension(caller): Extension<Caller>,
    JsonBody(req): JsonBody<NetworkReq>,
) -> Result<Json<Value>, ApiError> {
    if req.id.is_some() && (req.har || req.failed) {
        return Err(ApiError::BadRequest("id goes alone (not with har or failed)".into()));
    }
    let (h, b) = browser_of(&st, caller, req.pane.as_deref())?;
    let show_secrets = st.settings.current().config.agent.show_secrets;
    let out = match (req.id, req.har) {
        (Some(n), _) => st.automation.network_entry(&b, n, show_secrets).await?,
        (None, true) => st.automation.network_har(&b, show_secrets).await?,
        (None, false) => st.automation.network(&b, req.failed).await?,
    };
    Ok(with_pane(out, h, &b))
}

/// Body of `POST /api/control/browser/route`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RouteReq {
    #[serde(default)]
    pane: Option<String>,
    #[serde(default)]
    pattern: Option<String>,
    #[serde(default)]
    status: Option<u16>,
    #[serde(default)]
    headers: Vec<String>,
    #[serde(default)]
    body_base64: Option<String>,
    #[serde(default)]
    abort: bool,
    #[serde(default)]
    off: bool,
    #[serde(default)]
    list: bool,
}

/// `POST /api/control/browser/route` → `{"tab","routes":[{"pattern","answer","hits"}],
/// "offline","removed"?}` (exactly one of `status`, `abort`, `off`, `list`; `off` without a
/// pattern removes them all).
pub async fn route(
    State(st): State<AppState>,
    Extension(caller): Extension<Caller>,
    JsonBody(req): JsonBody<RouteReq>,
) -> Result<Json<Value>, ApiError> {
    use crate::automation::RouteOp;
    let ops = [req.status.is_some(), req.abort, req.off, req.list].iter().filter(|x| **x).count();
    if ops != 1 {
        return Err(ApiError::BadRequest("give exactly one of status, abort, off or list".into()));
    }
    if req.status.is_none() && (req.body_base64.is_some() || !req.headers.is_empty()) {
        return Err(ApiError::BadRequest("a body and headers go with status".into()));
    }
    let op = if let Some(status) = req.status {
        use base64::Engine;
        let body = match &req.body_base64 {
            Some(b) => base64::engine::general_purpose::STANDARD
                .decode(b)
                .map_err(|e| ApiError::BadRequest(format!("body_base64 is not base64: {e}")))?,
            None => Vec::new(),
        };
        RouteOp::Fulfill { status, headers: req.headers, body }
    } else if req.abort {
        RouteOp::Abort
    } else if req.off {
        RouteOp::Off
    } else {
        RouteOp::List
    };
    let (h, b) = browser_of(&st, caller, req.pane.as_deref())?;
    Ok(with_pane(st.automation.route(&b, req.pattern.as_deref(), op).await?, h, &b))
}

/// Body of `POST /api/control/browser/offline`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OfflineReq {
    #[serde(default)]
    pane: Option<String>,
    on: bool,
}

/// `POST /api/control/browser/offline` `{"on"}` → `{"tab","offline"}`.
pub async fn offline(
    State(st): State<AppState>,
    Extension(caller): Extension<Caller>,
    JsonBody(req): JsonBody<OfflineReq>,
) -> Result<Json<Value>, ApiError> {
    let (h, b) = browser_of(&st, caller, req.pane.as_deref())?;
    Ok(with_pane(st.automation.offline(&b, req.on).await?, h, &b))
}

/// Longest long poll of `events` (`wait_ms`), in milliseconds: below `ph`'s call bound.
pub const MAX_EVENTS_WAIT_MS: u64 = 20_000;

/// Body of `POST /api/control/browser/events`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EventsReq {
    #[serde(default)]
    pane: Option<String>,
    /// Only events after this seq (default 0: all kept).
    #[serde(default)]
    since: u64,
    /// The tab (its id, as an earlier answer gave it); default the active tab.
    #[serde(default)]
    tab: Option<String>,
    /// With none yet after `since`, wait up to this long for one (0..=20,000; default 0).
    #[serde(default)]
    wait_ms: Option<u64>,
}

/// `POST /api/control/browser/events` → `{"tab","tab_index","events":[{"seq","time_ms","kind",
/// "detail","data"}],"last","dropped":{"first","last"}|null}`.
pub async fn events(
    State(st): State<AppState>,
    Extension(caller): Extension<Caller>,
    JsonBody(req): JsonBody<EventsReq>,
) -> Result<Json<Value>, ApiError> {
    let ms = req.wait_ms.unwrap_or(0);
    if ms > MAX_EVENTS_WAIT_MS {
        return Err(ApiError::BadRequest(format!("wait_ms must be 0..={MAX_EVENTS_WAIT_MS}, got {ms}")));
    }
    let wait = std::time::Duration::from_millis(ms);
    let (h, b) = browser_of(&st, caller, req.pane.as_deref())?;
    Ok(with_pane(st.automation.events(&b, req.tab.as_deref(), req.since, wait).await?, h, &b))
}

/// Body of `POST /api/control/browser/downloads`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DownloadsReq {
    #[serde(default)]
    pane: Option<String>,
}

/// `POST /api/control/browser/downloads` → `{"downloads":[{"id","name","url","received",
/// "total","state","path","error"}],"dir"}`.
pub async fn downloads(
    State(st): State<AppState>,
    Extension(caller): Extension<Caller>,
    JsonBody(req): JsonBody<DownloadsReq>,
) -> Result<Json<Value>, ApiError> {
    let (h, b) = browser_of(&st, caller, req.pane.as_deref())?;
    Ok(with_pane(st.automation.downloads(&b), h, &b))
}
