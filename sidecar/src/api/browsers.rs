//! Browser endpoints (protocol §8): create, operate, inspect, delete, viewer grants, and the
//! viewer socket's upgrade.

use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::WebSocketUpgrade;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use serde_json::json;

use super::body::{JsonBody, OptionalJsonBody};
use super::error::ApiError;
use super::state::AppState;
use crate::browser::{
    check_url, BrowserRef, Device, NetworkRoute, ScreenRect, Viewport, ViewportMode, DEFAULT_VIEWPORT,
};
use crate::secret::random_hex_256;
use crate::viewer::{self, MAX_VIEWER_MESSAGE_BYTES};

/// `{"mode":"pane"}` or `{"mode":"fixed","width":W,"height":H,"dpr":D}`.
#[derive(Debug, Deserialize)]
#[serde(tag = "mode", rename_all = "lowercase", deny_unknown_fields)]
pub enum ViewportBody {
    /// Resize with pane.
    Pane {},
    /// A fixed size.
    Fixed {
        /// CSS px, in [`crate::browser::VIEWPORT_CSS_RANGE`].
        width: i64,
        /// CSS px, in [`crate::browser::VIEWPORT_CSS_RANGE`].
        height: i64,
        /// In [`crate::browser::VIEWPORT_DPR_RANGE`].
        dpr: f64,
        /// True for a phone (touch, mobile user agent; §8.2); default false.
        #[serde(default)]
        mobile: bool,
    },
}

impl ViewportBody {
    fn mode(&self) -> Result<ViewportMode, ApiError> {
        Ok(match self {
            ViewportBody::Pane {} => ViewportMode::Pane,
            ViewportBody::Fixed { width, height, dpr, mobile } => ViewportMode::Fixed(
                Viewport::checked(*width, *height, *dpr)?,
                if *mobile { Device::Phone } else { Device::Desktop },
            ),
        })
    }
}

/// `POST /api/browsers` body.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateBody {
    url: String,
    #[serde(default, deserialize_with = "super::body::optional_object")]
    viewport: Option<ViewportBody>,
    /// A kept profile's key (`crate::browser::check_profile_key`).
    #[serde(default)]
    profile: Option<String>,
    /// Cookies of its own: not in the shared login (issue 26 item 2).
    #[serde(default)]
    isolated: bool,
    /// Further tabs, opened after `url` in order (at most [`MAX_CREATE_TABS`]).
    #[serde(default)]
    tabs: Vec<String>,
    /// The active tab, 0-based over `url` and `tabs`.
    #[serde(default)]
    active: Option<usize>,
    /// A remote link id (`r1`): its Chromium's traffic goes through that link (a SOCKS5
    /// listener of its own, loopback included), with a profile of its own; protocol §8, §11.
    #[serde(default)]
    remote: Option<String>,
}

/// Most further tabs `POST /api/browsers` opens.
pub const MAX_CREATE_TABS: usize = 32;

/// `{"url":…}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UrlBody {
    url: String,
}

/// `{"delta":-1|1}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HistoryBody {
    delta: i64,
}

/// `{"tab":…}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TabBody {
    tab: String,
}

fn lookup(st: &AppState, id: &str) -> Result<BrowserRef, ApiError> {
    st.browsers.get(id).ok_or(ApiError::NotFound("browser"))
}

/// A browser URL: http(s), bounded ([`check_url`]), and not naming a link-local or metadata
/// address in any spelling (the proxy's check, [`crate::address::check_host`]).
fn url_of(u: &str) -> Result<String, ApiError> {
    let u = check_url(u)?;
    let parsed = url::Url::parse(&u).map_err(|e| ApiError::BadRequest(format!("{u:?} is not a URL: {e}")))?;
    crate::address::check_host(&parsed).map_err(ApiError::BlockedAddress)?;
    Ok(u)
}

fn tab_of(t: &str) -> Result<&str, ApiError> {
    if t.is_empty() || t.len() > 64 || !t.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return Err(ApiError::BadRequest("tab must be 1..=64 ASCII letters and digits".into()));
    }
    Ok(t)
}

/// `GET /api/browsers` → `200 {"browsers":[{"id"}…]}`: every browser the sidecar holds, in
/// id order (a screencast pane's outlives its page; a window or a test finds them here).
pub async fn list(State(st): State<AppState>) -> Json<serde_json::Value> {
    let ids = st.browsers.ids();
    Json(json!({"browsers": ids.iter().map(|id| json!({"id": id})).collect::<Vec<_>>()}))
}

/// `POST /api/browsers` → `201 {"id"}` once Chromium is up (not when the page has loaded).
pub async fn create(State(st): State<AppState>, JsonBody(b): JsonBody<CreateBody>) -> Result<Response, ApiError> {
    let url = url_of(&b.url)?;
    let mode = match &b.viewport {
        Some(v) => v.mode()?,
        None => ViewportMode::Fixed(DEFAULT_VIEWPORT, Device::Desktop),
    };
    if b.tabs.len() > MAX_CREATE_TABS {
        return Err(ApiError::BadRequest(format!("at most {MAX_CREATE_TABS} tabs")));
    }
    let tabs = b.tabs.iter().map(|t| url_of(t)).collect::<Result<Vec<_>, _>>()?;
    let profile = b.profile.as_deref().map(crate::browser::check_profile_key).transpose()?;
    let route = match &b.remote {
        None => None,
        Some(id) => {
            if profile.is_some() {
                return Err(ApiError::BadRequest("a remote browser has a profile of its own: no profile key".into()));
            }
            let link = st.remotes.get(id).ok_or(ApiError::NotFound("remote"))?;
            let socks = crate::remote::socks::SocksServer::start(std::sync::Arc::downgrade(&link))
                .await
                .map_err(|e| ApiError::Internal(format!("binding the remote browser's SOCKS5 listener: {e}")))?;
            Some(NetworkRoute { name: id.clone(), proxy_server: socks.proxy_server(), keep: Box::new(socks) })
        }
    };
    let id = st.browsers.create(url, mode, profile, b.isolated, tabs, b.active, route).await?;
    Ok((StatusCode::CREATED, Json(json!({"id": id}))).into_response())
}

/// `GET /api/browsers/{id}`.
pub async fn get_one(State(st): State<AppState>, Path(id): Path<String>) -> Result<Response, ApiError> {
    let b = lookup(&st, &id)?;
    Ok(Json(b.info().await).into_response())
}

/// `DELETE /api/browsers/{id}` → 204 once Chromium has exited.
pub async fn delete(State(st): State<AppState>, Path(id): Path<String>) -> Result<StatusCode, ApiError> {
    st.viewer_grants.revoke_browser(&id);
    if st.browsers.delete(&id).await {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::NotFound("browser"))
    }
}

fn ok() -> Response {
    Json(json!({"ok": true})).into_response()
}

/// `POST /api/browsers/{id}/navigate`.
pub async fn navigate(
    State(st): State<AppState>,
    Path(id): Path<String>,
    JsonBody(b): JsonBody<UrlBody>,
) -> Result<Response, ApiError> {
    let url = url_of(&b.url)?;
    lookup(&st, &id)?.navigate(url).await?;
    Ok(ok())
}

/// `POST /api/browsers/{id}/history`.
pub async fn history(
    State(st): State<AppState>,
    Path(id): Path<String>,
    JsonBody(b): JsonBody<HistoryBody>,
) -> Result<Response, ApiError> {
    if b.delta != -1 && b.delta != 1 {
        return Err(ApiError::BadRequest(format!("delta must be -1 or 1, got {}", b.delta)));
    }
    lookup(&st, &id)?.history(b.delta).await?;
    Ok(ok())
}

/// `POST /api/browsers/{id}/reload`.
pub async fn reload(State(st): State<AppState>, Path(id): Path<String>) -> Result<Response, ApiError> {
    lookup(&st, &id)?.reload().await?;
    Ok(ok())
}

/// `POST /api/browsers/{id}/sealed-probe`: the closed-root probe run in the active tab's
/// current document, as a page script would run it (protocol §8.1; issue 24 force-open).
pub async fn sealed_probe(
    State(st): State<AppState>,
    Path(id): Path<String>,
) -> Result<axum::Json<crate::browser::ProbeReport>, ApiError> {
    Ok(axum::Json(lookup(&st, &id)?.sealed_probe().await?))
}

/// `POST /api/browsers/{id}/unload`: asks every tab's page to leave (its `beforeunload`),
/// closing the tabs one by one; `{"closed":true}` once none is left, `{"closed":false}` once
/// a `beforeunload` dialog holds a tab (the user answers it over the viewer socket).
pub async fn unload(State(st): State<AppState>, Path(id): Path<String>) -> Result<Response, ApiError> {
    let closed = lookup(&st, &id)?.unload().await?;
    Ok(axum::Json(serde_json::json!({ "closed": closed })).into_response())
}

/// `POST /api/browsers/{id}/viewport`: returns the viewport measured after the write
/// (fixed mode), or the current one (pane mode).
pub async fn viewport(
    State(st): State<AppState>,
    Path(id): Path<String>,
    JsonBody(b): JsonBody<ViewportBody>,
) -> Result<Response, ApiError> {
    let mode = b.mode()?;
    let br = lookup(&st, &id)?;
    br.set_viewport(mode).await?;
    let measured = br.measure().await.ok();
    Ok(Json(json!({"viewport": measured})).into_response())
}

/// `POST /api/browsers/{id}/tabs/select`.
pub async fn select_tab(
    State(st): State<AppState>,
    Path(id): Path<String>,
    JsonBody(b): JsonBody<TabBody>,
) -> Result<Response, ApiError> {
    let tab = tab_of(&b.tab)?;
    lookup(&st, &id)?.select_tab(tab).await?;
    Ok(ok())
}

/// `POST /api/browsers/{id}/tabs/close`.
pub async fn close_tab(
    State(st): State<AppState>,
    Path(id): Path<String>,
    JsonBody(b): JsonBody<TabBody>,
) -> Result<Response, ApiError> {
    let tab = tab_of(&b.tab)?;
    lookup(&st, &id)?.close_tab(tab).await?;
    Ok(ok())
}

/// `POST /api/browsers/{id}/relaunch`, body optional `{"url":…}`: a new Chromium on the same
/// profile at `url` (checked as for navigate), else at the last URL.
pub async fn relaunch(
    State(st): State<AppState>,
    Path(id): Path<String>,
    OptionalJsonBody(b): OptionalJsonBody<UrlBody>,
) -> Result<Response, ApiError> {
    let url = b.map(|b| url_of(&b.url)).transpose()?;
    lookup(&st, &id)?.relaunch(url).await?;
    Ok(ok())
}

/// `POST /api/browsers/{id}/popout`: relaunched headed in a window on the same profile, at
/// the active URL with every cookie carried over; `200` once the window's Chromium is up.
///
/// Body (optional): `{"beside":{"x","y","width","height"}}`, the app's window in screen px
/// (|x|, |y| ≤ 100000; width and height 1..=100000): the window opens beside it.
pub async fn pop_out(
    State(st): State<AppState>,
    Path(id): Path<String>,
    OptionalJsonBody(b): OptionalJsonBody<PopoutBody>,
) -> Result<Response, ApiError> {
    let beside = b.and_then(|b| b.beside).map(screen_rect).transpose()?;
    lookup(&st, &id)?.pop_out(beside).await?;
    Ok(ok())
}

/// `POST /api/browsers/{id}/popout`'s body.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PopoutBody {
    #[serde(default)]
    beside: Option<RectBody>,
}

/// A screen rectangle as sent (bounds checked by [`screen_rect`]).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RectBody {
    x: i64,
    y: i64,
    width: i64,
    height: i64,
}

fn screen_rect(r: RectBody) -> Result<ScreenRect, ApiError> {
    const MAX: i64 = 100_000;
    if r.x.abs() > MAX || r.y.abs() > MAX || !(1..=MAX).contains(&r.width) || !(1..=MAX).contains(&r.height) {
        return Err(ApiError::BadRequest(
            "beside: x and y must be within ±100000 and width and height in 1..=100000 (screen px)".into(),
        ));
    }
    Ok(ScreenRect { x: r.x, y: r.y, width: r.width, height: r.height })
}

/// `POST /api/browsers/{id}/popin`: back to headless at the window's last URL and size;
/// `200` once the headless Chromium is up.
pub async fn pop_in(State(st): State<AppState>, Path(id): Path<String>) -> Result<Response, ApiError> {
    lookup(&st, &id)?.pop_in().await?;
    Ok(ok())
}

/// `{"paths":[…]}`: the files the user picked (absolute paths); `[]` cancels.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChooserBody {
    paths: Vec<String>,
}

/// `?name=…` of an upload.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UploadQuery {
    name: String,
}

fn chooser_of(c: &str) -> Result<u64, ApiError> {
    c.parse::<u64>()
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| ApiError::BadRequest("chooser must be a positive integer".into()))
}

/// `POST /api/browsers/{id}/file-chooser/{chooser}` `{"paths":[…]}`: sets the picked files
/// on the page's file input (at most 64, one for a single-file input; each an absolute path
/// to a regular file); `[]` cancels the chooser.
pub async fn answer_file_chooser(
    State(st): State<AppState>,
    Path((id, chooser)): Path<(String, String)>,
    JsonBody(b): JsonBody<ChooserBody>,
) -> Result<Response, ApiError> {
    let chooser = chooser_of(&chooser)?;
    if b.paths.len() > crate::browser::MAX_CHOOSER_FILES || b.paths.iter().any(|p| p.is_empty() || p.len() > 4096) {
        return Err(ApiError::BadRequest("paths must be at most 64 paths of 1..=4096 bytes".into()));
    }
    let paths = b.paths.into_iter().map(std::path::PathBuf::from).collect();
    lookup(&st, &id)?.answer_file_chooser(chooser, paths).await?;
    Ok(ok())
}

/// `POST /api/browsers/{id}/file-chooser/{chooser}/files?name=N` with the file's bytes as the
/// body (any content type, at most 64 MiB): keeps it for the chooser (web mode, where the
/// view has bytes, not paths) → `{"path":P}` to name in the answer.
pub async fn upload_file(
    State(st): State<AppState>,
    Path((id, chooser)): Path<(String, String)>,
    axum::extract::Query(q): axum::extract::Query<UploadQuery>,
    body: axum::body::Bytes,
) -> Result<Response, ApiError> {
    let chooser = chooser_of(&chooser)?;
    if q.name.is_empty() || q.name.len() > 1024 {
        return Err(ApiError::BadRequest("name must be 1..=1024 bytes".into()));
    }
    let path = lookup(&st, &id)?.stage_upload(chooser, &q.name, &body)?;
    Ok(Json(json!({"path": path.to_string_lossy()})).into_response())
}

/// `GET /api/capabilities` → `{"popout":{"available":bool,"reason":S|null}}`.
pub async fn capabilities() -> Response {
    Json(json!({"popout": crate::browser::popout_capability().await})).into_response()
}

/// `POST /api/browsers/{id}/viewer` → `{"url":"ws://127.0.0.1:P/viewer/<grant>"}`.
pub async fn grant(State(st): State<AppState>, Path(id): Path<String>) -> Result<Response, ApiError> {
    lookup(&st, &id)?;
    let token = random_hex_256().map_err(|e| ApiError::Internal(format!("getrandom: {e}")))?;
    st.viewer_grants.issue(&id, token.clone()).map_err(|_| ApiError::TooManyViewerGrants)?;
    let url = format!("ws://127.0.0.1:{}/viewer/{token}", st.config.port);
    Ok(Json(json!({"url": url})).into_response())
}

/// `GET /viewer/{grant}` (WebSocket): a plain request is refused (the grant stays unused);
/// an upgrade redeems the grant.
pub async fn upgrade(
    State(st): State<AppState>,
    Path(token): Path<String>,
    ws: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Result<Response, ApiError> {
    let ws = ws.map_err(|_| ApiError::BadRequest("a viewer socket needs a WebSocket upgrade".into()))?;
    let Some(id) = st.viewer_grants.redeem(&token) else { return Err(ApiError::Unauthorized) };
    let b = lookup(&st, &id)?;
    Ok(ws
        .max_message_size(MAX_VIEWER_MESSAGE_BYTES)
        .max_frame_size(MAX_VIEWER_MESSAGE_BYTES)
        .on_upgrade(move |socket| viewer::serve(socket, b)))
}
