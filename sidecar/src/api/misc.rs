//! Small endpoints: health, login codes, login, workspace, shutdown, UI and 405 fallbacks.

use axum::body::Body;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, Request, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};

use super::auth::login_page;
use super::body::JsonBody;
use super::credentials::SESSION_COOKIE;
use super::error::ApiError;
use super::state::AppState;
use crate::constants::PROTOCOL_VERSION;

/// `GET /api/health` → `{"status":"ok","version":…,"protocol":1}`.
pub async fn health() -> Json<Value> {
    Json(json!({"status": "ok", "version": env!("CARGO_PKG_VERSION"), "protocol": PROTOCOL_VERSION}))
}

/// `GET /api/config` → the configuration snapshot (protocol §4 `GET /api/config`).
pub async fn config(State(st): State<AppState>) -> Json<crate::config::Snapshot> {
    Json(st.settings.current())
}

/// `PATCH /api/config/agent-sealed` with `{"<key>": value, …}` (protocol §4): writes those
/// keys of `[agent.sealed]` into the file in place, applies it at once, and answers the new
/// snapshot. Only the app may call it: a pane token never reaches here (the guard admits
/// pane tokens to `/api/control/` only).
pub async fn patch_agent_sealed(
    State(st): State<AppState>,
    JsonBody(body): JsonBody<serde_json::Map<String, Value>>,
) -> Result<Json<crate::config::Snapshot>, ApiError> {
    let patch = crate::config::SealedPatch::parse(&body).map_err(ApiError::Config)?;
    let snap = write_config(&st, move |file| crate::config::write_sealed(file, &patch)).await?;
    // The settings' follower arms or disarms force-open too; done here as well so that the
    // answer means the browsers follow it already (the same value again does nothing).
    let armed = crate::automation::sealed::Policy::current(&snap.config.agent.sealed).force_open_armed();
    st.browsers.set_force_open(armed).await;
    Ok(snap)
}

/// `PATCH /api/config/terminal` `{"renderer":"auto"|"webgl"|"dom"}` → the snapshot after
/// the write (issue 27: the pane menu's renderer choice): `terminal.renderer` written into
/// the config file in place (comments and other keys kept), then reloaded. Another key or
/// value → 400 `bad_request`; a file that does not parse → 409 `config_invalid`.
pub async fn patch_terminal(
    State(st): State<AppState>,
    JsonBody(body): JsonBody<serde_json::Map<String, Value>>,
) -> Result<Json<crate::config::Snapshot>, ApiError> {
    let bad = || ApiError::BadRequest("the body must be {\"renderer\": \"auto\" | \"webgl\" | \"dom\"}".into());
    if body.len() != 1 {
        return Err(bad());
    }
    let renderer = match body.get("renderer").and_then(Value::as_str) {
        Some("auto") => crate::config::TerminalRenderer::Auto,
        Some("webgl") => crate::config::TerminalRenderer::Webgl,
        Some("dom") => crate::config::TerminalRenderer::Dom,
        _ => return Err(bad()),
    };
    write_config(&st, move |file| crate::config::write_terminal_renderer(file, renderer)).await
}

/// Runs `write` on the config file off the runtime, then reloads it → the snapshot in force
/// after the write (the watcher would apply it too, after its debounce; the answer must show
/// it now). Errors: the write's, as `ApiError::Config`.
async fn write_config(
    st: &AppState,
    write: impl FnOnce(&std::path::Path) -> Result<(), crate::config::WriteError> + Send + 'static,
) -> Result<Json<crate::config::Snapshot>, ApiError> {
    let settings = st.settings.clone();
    tokio::task::spawn_blocking(move || {
        write(settings.file())?;
        settings.reload();
        Ok(settings.current())
    })
    .await
    .map_err(|e| ApiError::Internal(format!("config write task: {e}")))?
    .map_err(ApiError::Config)
    .map(Json)
}

/// `PATCH /api/config/agent` `{"show_secrets": bool}` → the snapshot after the write (issue
/// 25: the Settings panel's "Show credentials in network details"): `agent.show_secrets`
/// written into the config file in place, then reloaded. Another key or value → 400
/// `bad_request`; a file that does not parse → 409 `config_invalid`. Only the app may call it
/// (a pane token never reaches here): an agent cannot grant itself the secrets.
pub async fn patch_agent(
    State(st): State<AppState>,
    JsonBody(body): JsonBody<serde_json::Map<String, Value>>,
) -> Result<Json<crate::config::Snapshot>, ApiError> {
    let show = match (body.len(), body.get("show_secrets")) {
        (1, Some(Value::Bool(b))) => *b,
        _ => return Err(ApiError::BadRequest("the body must be {\"show_secrets\": true | false}".into())),
    };
    write_config(&st, move |file| crate::config::write_show_secrets(file, show)).await
}

/// `POST /api/login-codes` → `{"url":"…/login?code=…"}` (a fresh one-time login URL).
pub async fn login_codes(State(st): State<AppState>) -> Result<Json<Value>, ApiError> {
    let code = st.auth.new_login_code().map_err(|e| ApiError::Internal(format!("getrandom: {e}")))?;
    Ok(Json(json!({"url": format!("{}login?code={code}", st.config.base_url())})))
}

/// Query of `GET /login`.
#[derive(Debug, Deserialize)]
pub struct LoginQuery {
    /// The one-time login code.
    #[serde(default)]
    code: Option<String>,
    /// A remote host to open at once (`porthole --ssh HOST`): kept as `/?ssh=HOST`, where the
    /// UI opens "New remote workspace…" connecting to it (and checks it).
    #[serde(default)]
    ssh: Option<String>,
}

/// `GET /login?code=…[&ssh=HOST]`: a valid unused code → 303 to `/` (`/?ssh=HOST`, HOST
/// percent-encoded, at most 1024 bytes kept) with the session cookie; anything else → 401
/// with the explanatory HTML page.
pub async fn login(State(st): State<AppState>, q: Result<Query<LoginQuery>, QueryRejection>) -> Response {
    let (code, ssh) = q.ok().map(|Query(q)| (q.code.unwrap_or_default(), q.ssh)).unwrap_or_default();
    let location = match ssh.filter(|h| !h.is_empty() && h.len() <= 1024) {
        Some(h) => {
            format!("/?{}", url::form_urlencoded::Serializer::new(String::new()).append_pair("ssh", &h).finish())
        }
        None => "/".to_string(),
    };
    match st.auth.redeem(&code) {
        Some(session) => Response::builder()
            .status(StatusCode::SEE_OTHER)
            .header(header::LOCATION, location)
            .header(header::SET_COOKIE, format!("{SESSION_COOKIE}={session}; HttpOnly; SameSite=Strict; Path=/"))
            .body(Body::empty())
            .unwrap_or_else(|_| ApiError::Internal("building login response".into()).into_response()),
        None => login_page(),
    }
}

/// `GET /api/workspace` → `{"workspace":<value or null>,"revision":N,"restore":…,"problem":…}`
/// (protocol §4).
pub async fn get_workspace(State(st): State<AppState>) -> Json<crate::session::View> {
    Json(st.session.view())
}

/// `PUT /api/workspace` body `{"workspace":<value>}` → `{"revision":N}`.
pub async fn put_workspace(
    State(st): State<AppState>,
    JsonBody(raw): JsonBody<Value>,
) -> Result<Json<Value>, ApiError> {
    // A missing field and `null` must be told apart, so check the object's keys by hand.
    let Value::Object(mut obj) = raw else {
        return Err(ApiError::BadJson("body must be an object {\"workspace\":…}".into()));
    };
    let doc = obj.remove("workspace").ok_or_else(|| ApiError::BadJson("missing field `workspace`".into()))?;
    if let Some(k) = obj.keys().next() {
        return Err(ApiError::BadJson(format!("unknown field `{k}`, expected `workspace`")));
    }
    let revision = st.session.put(if doc.is_null() { None } else { Some(doc) });
    Ok(Json(json!({"revision": revision})))
}

/// `POST /api/shutdown` → `202 {"status":"shutting_down"}`, then the shutdown of §1.
pub async fn shutdown(State(st): State<AppState>) -> impl IntoResponse {
    st.shutdown.notify_one();
    (StatusCode::ACCEPTED, Json(json!({"status": "shutting_down"})))
}

/// A route that exists, asked with a method it does not take → 405 `method_not_allowed`.
pub async fn method_not_allowed() -> ApiError {
    ApiError::MethodNotAllowed
}

/// Anything unrouted: in web mode, outside `/api/`, the built UI's file at that path; a
/// missing file is `index.html` for a navigation (a client-side route, see [`is_navigation`])
/// and 404 `not_found` for anything else (a missing asset); without web mode, 404 `not_found`.
pub async fn fallback(State(st): State<AppState>, req: Request) -> Response {
    let path = req.uri().path();
    if !st.config.web || path == "/api" || path.starts_with("/api/") {
        return ApiError::NotFound("route").into_response();
    }
    let navigation = is_navigation(&req);
    let parts = (req.method().clone(), req.uri().clone(), req.headers().clone());
    let mut ui = (*st.ui).clone();
    let resp = match ui.try_call(req).await {
        Ok(resp) => resp.map(Body::new),
        Err(e) => return ApiError::Internal(format!("serving the UI: {e}")).into_response(),
    };
    if resp.status() != StatusCode::NOT_FOUND {
        return resp;
    }
    if !navigation {
        return ApiError::NotFound("file").into_response();
    }
    let mut index = Request::new(Body::empty());
    (*index.method_mut(), *index.uri_mut(), *index.headers_mut()) = parts;
    let mut file = (*st.ui_index).clone();
    match file.try_call(index).await {
        Ok(resp) => resp.map(Body::new),
        Err(e) => ApiError::Internal(format!("serving the UI: {e}")).into_response(),
    }
}

/// True if and only if `req` is a navigation, which a client-side route answers with
/// `index.html` (protocol §4, "The UI in web mode"): `Sec-Fetch-Dest: document` when the
/// client sends that header (every current browser does); without it, a path whose last
/// segment has no file extension (`/a/b`, not `/x.js`).
pub fn is_navigation(req: &Request) -> bool {
    if let Some(dest) = req.headers().get("sec-fetch-dest") {
        return dest.as_bytes() == b"document";
    }
    let last = req.uri().path().rsplit('/').next().unwrap_or("");
    !last.contains('.')
}
