//! Remote workspaces over HTTP (protocol §11.5): the links (`/api/remotes…`) and the forward
//! of the remote daemon's API through a link (`/api/remotes/{id}/api/{*rest}`), WebSocket
//! upgrades included.

use axum::body::Body;
use axum::extract::{Path, Query, Request, State};
use axum::http::{header, HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use hyper_util::rt::TokioIo;
use serde::Deserialize;
use serde_json::{json, Value};

use super::body::JsonBody;
use super::error::ApiError;
use super::state::AppState;
use crate::remote::{Link, LinkError, Target};

/// `POST /api/remotes`'s body.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateRemote {
    /// An ssh config alias or `[user@]host[:port]`.
    host: String,
}

fn describe(id: &str, link: &Link) -> Value {
    let s = link.status();
    json!({
        "id": id,
        "host": s.host,
        "state": s.state,
        "since": s.since,
        "rtt_ms": s.rtt_ms,
        "ssh_pid": s.ssh_pid,
        "remote": s.remote,
        "last_error": s.last_error,
        "reconnects": s.reconnects,
    })
}

/// `POST /api/remotes`: connects (201 once the first connect succeeded).
pub async fn create(State(st): State<AppState>, JsonBody(b): JsonBody<CreateRemote>) -> Result<Response, ApiError> {
    let (id, link) = st.remotes.add(&b.host).await?;
    Ok((StatusCode::CREATED, Json(describe(&id, &link))).into_response())
}

/// `GET /api/remotes`.
pub async fn list(State(st): State<AppState>) -> Json<Value> {
    let all: Vec<Value> = st.remotes.list().iter().map(|(id, l)| describe(id, l)).collect();
    Json(json!({ "remotes": all }))
}

/// `GET /api/remotes/{id}`.
pub async fn get_one(State(st): State<AppState>, Path(id): Path<String>) -> Result<Json<Value>, ApiError> {
    let link = st.remotes.get(&id).ok_or(ApiError::NotFound("remote"))?;
    Ok(Json(describe(&id, &link)))
}

/// `POST /api/remotes/{id}/reconnect`: a reconnecting or lost link tries again now.
pub async fn reconnect(State(st): State<AppState>, Path(id): Path<String>) -> Result<Json<Value>, ApiError> {
    let link = st.remotes.get(&id).ok_or(ApiError::NotFound("remote"))?;
    link.reconnect_now();
    Ok(Json(describe(&id, &link)))
}

/// `DELETE /api/remotes/{id}`'s query.
#[derive(Deserialize)]
pub struct DeleteQuery {
    /// `1`: ask the remote daemon to shut down now (else it lives out its grace).
    hangup: Option<String>,
}

/// `DELETE /api/remotes/{id}[?hangup=1]`: 204.
pub async fn delete(
    State(st): State<AppState>,
    Path(id): Path<String>,
    Query(q): Query<DeleteQuery>,
) -> Result<StatusCode, ApiError> {
    let link = st.remotes.remove(&id).ok_or(ApiError::NotFound("remote"))?;
    if q.hangup.as_deref() == Some("1") {
        // Best effort: a link that is not connected cannot carry it.
        if let Err(e) = link.hangup().await {
            tracing::info!("hangup of {id} not delivered: {e}");
        }
    }
    link.close();
    Ok(StatusCode::NO_CONTENT)
}

/// Hop-by-hop fields, never forwarded (except `Connection`/`Upgrade` of an upgrade).
const HOP: &[&str] = &["connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade"];

/// `ANY /api/remotes/{id}/api/{*rest}`: the request, as `/api/{rest}?{query}` with `Host:
/// localhost` and the remote token (the local `Cookie`, `Origin` and `Authorization`
/// removed), on a new `api` stream; the answer comes back as is. A WebSocket upgrade is
/// forwarded and the two upgraded connections spliced. 503 `remote_disconnected` at once
/// when the link is not connected.
pub async fn forward(
    State(st): State<AppState>,
    Path((id, _rest)): Path<(String, String)>,
    req: Request,
) -> Result<Response, ApiError> {
    let link = st.remotes.get(&id).ok_or(ApiError::NotFound("remote"))?;
    let (mut parts, body) = req.into_parts();
    // The raw path (still percent-encoded), from the `/api/` after the id on.
    let prefix = format!("/api/remotes/{id}");
    let rest =
        parts.uri.path().strip_prefix(&prefix).filter(|r| r.starts_with("/api/")).ok_or(ApiError::NotFound("route"))?;
    let target = match parts.uri.query() {
        Some(q) => format!("{rest}?{q}"),
        None => rest.to_string(),
    };
    let upgrade = parts.headers.get(header::UPGRADE).is_some();
    let downstream = parts.extensions.remove::<hyper::upgrade::OnUpgrade>();
    let (stream, token) = link.open_with_token(&Target::Api).await?;
    let mut out = axum::http::Request::builder().method(parts.method.clone()).uri(target);
    for (k, v) in parts.headers.iter() {
        let name = k.as_str();
        let hop = HOP.contains(&name) && !(upgrade && (name == "connection" || name == "upgrade"));
        if hop || k == header::HOST || k == header::COOKIE || k == header::ORIGIN || k == header::AUTHORIZATION {
            continue;
        }
        out = out.header(k, v);
    }
    let bearer = HeaderValue::from_str(&format!("Bearer {token}")).map_err(|e| ApiError::Internal(e.to_string()))?;
    out = out.header(header::HOST, "localhost").header(header::AUTHORIZATION, bearer);
    let upstream_req = out.body(body).map_err(|e| ApiError::BadRequest(e.to_string()))?;
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|_| ApiError::Remote(LinkError::Disconnected))?;
    tokio::spawn(async move {
        if let Err(e) = conn.with_upgrades().await {
            tracing::debug!("forwarded connection: {e}");
        }
    });
    let mut resp = sender.send_request(upstream_req).await.map_err(|_| ApiError::Remote(LinkError::Disconnected))?;
    if resp.status() == StatusCode::SWITCHING_PROTOCOLS {
        let Some(downstream) = downstream else {
            return Err(ApiError::BadRequest("this connection cannot be upgraded".into()));
        };
        let upstream = hyper::upgrade::on(&mut resp);
        tokio::spawn(async move {
            let (Ok(down), Ok(up)) = (downstream.await, upstream.await) else { return };
            let (mut down, mut up) = (TokioIo::new(down), TokioIo::new(up));
            let _ = tokio::io::copy_bidirectional(&mut down, &mut up).await;
        });
        let mut r = Response::new(Body::empty());
        *r.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
        *r.headers_mut() = resp.headers().clone();
        return Ok(r);
    }
    let (mut rp, body) = resp.into_parts();
    for h in HOP {
        rp.headers.remove(HeaderName::from_static(h));
    }
    Ok(Response::from_parts(rp, Body::new(body)))
}
