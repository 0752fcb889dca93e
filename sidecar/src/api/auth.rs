//! Authentication and request checks (protocol §2): Host, bearer token or session cookie,
//! Origin. One middleware applies them to every route in that order.

use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};

use axum::extract::{ConnectInfo, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{Html, IntoResponse, Response};

use super::conn::Peer;
use super::error::ApiError;
use super::state::AppState;
use crate::control::{owns_connection, place, Caller, ControlError, Handle, Place, TokenCheck};
use crate::pty::TerminalId;

/// True if and only if `host` is `127.0.0.1:PORT` or `localhost:PORT` (case-insensitive
/// name) for this sidecar's `port`.
pub fn host_ok(host: Option<&HeaderValue>, port: u16) -> bool {
    let Some(h) = host.and_then(|h| h.to_str().ok()) else { return false };
    let Some((name, p)) = h.rsplit_once(':') else { return false };
    p == port.to_string() && (name == "127.0.0.1" || name.eq_ignore_ascii_case("localhost"))
}

/// True if and only if `origin` is absent or one of the app's own origins:
/// `http://127.0.0.1:PORT`, `http://localhost:PORT`, `tauri://localhost`,
/// `http://tauri.localhost`, `https://tauri.localhost`.
pub fn origin_ok(origin: Option<&HeaderValue>, port: u16) -> bool {
    let Some(o) = origin else { return true };
    let Ok(o) = o.to_str() else { return false };
    o == format!("http://127.0.0.1:{port}")
        || o == format!("http://localhost:{port}")
        || o == "tauri://localhost"
        || o == "http://tauri.localhost"
        || o == "https://tauri.localhost"
}

/// True if and only if the request asks for a WebSocket upgrade.
fn is_upgrade(headers: &HeaderMap) -> bool {
    headers.get(header::UPGRADE).and_then(|v| v.to_str().ok()).is_some_and(|v| v.eq_ignore_ascii_case("websocket"))
}

const LOGIN_HTML: &str =
    "<!doctype html><html><head><meta charset=\"utf-8\"><title>Porthole: not logged in</title></head>\
<body style=\"font-family:system-ui,sans-serif;max-width:40em;margin:4em auto;color-scheme:light dark\">\
<h1>Porthole: not logged in</h1>\
<p>This Porthole sidecar only serves browsers that opened a one-time login link.</p>\
<p>Open the <code>login_url</code> that <code>porthole-sidecar --web</code> printed when it started \
(its first line of output). A link works once; ask for another with \
<code>POST /api/login-codes</code> using the token.</p></body></html>";

/// The short HTML page a browser gets when it is not logged in (401).
pub fn login_page() -> Response {
    (StatusCode::UNAUTHORIZED, Html(LOGIN_HTML)).into_response()
}

/// Why a request's Host or Origin cannot be judged at all (400 `bad_request`): a header given
/// twice (which one would count?), or an absolute-form request target (`GET http://host/…`,
/// whose authority, not `Host`, names the server in HTTP/1.1) that disagrees with `Host`.
/// `None` if and only if there is exactly one of each (or no Origin) and the target is a path
/// or names the same `http` authority as `Host`.
pub fn ambiguous_target(req: &Request) -> Option<String> {
    let headers = req.headers();
    for name in [header::HOST, header::ORIGIN] {
        if headers.get_all(&name).iter().nth(1).is_some() {
            return Some(format!("more than one {name} header"));
        }
    }
    let uri = req.uri();
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("");
    match (uri.scheme_str(), uri.authority()) {
        (None, None) => None,
        (Some("http"), Some(a)) if a.as_str().eq_ignore_ascii_case(host) => None,
        _ => Some(format!("the request target {uri} does not name the Host {host:?}")),
    }
}

/// The pane a control request holding a pane token speaks for (protocol §9.1): the pane its
/// process runs in, when `ph` names its process (`pid`: `X-Porthole-Pid`) and that process
/// owns this connection (from `peer`, the client's address; else `wrong_pane`); the token's pane (`token_pane`, `None` if revoked) when the
/// process runs in no pane's process tree, or when no process is named (an older `ph`).
/// Under a tmux server the process runs in the pane the tmux client of its session runs in;
/// a session attached from several panes, or from none, is refused with `wrong_pane`.
async fn caller_pane(
    st: &AppState,
    pid: Option<HeaderValue>,
    peer: Option<SocketAddr>,
    token_pane: Option<Handle>,
) -> Result<Handle, ControlError> {
    let by_token = token_pane.ok_or(ControlError::Revoked);
    let Some(pid) = pid else { return by_token };
    let pid = pid
        .to_str()
        .ok()
        .and_then(|p| p.parse::<i32>().ok())
        .filter(|p| *p > 1)
        .ok_or_else(|| ControlError::BadRequest("X-Porthole-Pid must be a process id".into()))?;
    // Without the connection's address (a router served without it) nothing can be checked.
    let Some(SocketAddr::V4(peer)) = peer else { return by_token };
    let local = SocketAddrV4::new(Ipv4Addr::LOCALHOST, st.config.port);
    let terminals: Vec<(i32, TerminalId)> =
        st.terminals.list().iter().filter(|t| t.exit_code().is_none()).map(|t| (t.pid(), t.id())).collect();
    let pids: Vec<i32> = terminals.iter().map(|(p, _)| *p).collect();
    // Outer `None`: nothing to tell by (no /proc); inner `None`: not this process's connection.
    let found = tokio::task::spawn_blocking(move || match owns_connection(pid, peer, local)? {
        true => Some(Some(place(pid, &pids))),
        false => Some(None),
    })
    .await
    .map_err(|e| ControlError::Unverified(format!("finding the caller's pane: {e}")))?;
    let Some(found) = found else { return by_token };
    let pane_of = |pid: i32| terminals.iter().find(|(p, _)| *p == pid).and_then(|(_, t)| st.control.pane_of(*t));
    let named = |pids: &[i32]| pids.iter().filter_map(|p| pane_of(*p)).map(|h| h.to_string()).collect::<Vec<_>>();
    let theirs = token_pane.map_or_else(|| "a pane that has ended".to_string(), |h| h.to_string());
    match found {
        None => Err(ControlError::WrongPane(format!("this connection is not process {pid}'s"))),
        Some(Place::Terminal(p)) => pane_of(p).map_or(by_token, Ok),
        Some(Place::Elsewhere) => by_token,
        Some(Place::Tmux(p)) if p.is_empty() => Err(ControlError::WrongPane(format!(
            "ph runs in a tmux session attached from no Porthole pane (its environment names {theirs}, where the tmux server started); attach it from a pane, or name the pane"
        ))),
        Some(Place::Tmux(p)) => Err(ControlError::WrongPane(format!(
            "ph runs in a tmux session attached from several panes ({}); detach all but one, or name the pane",
            named(&p).join(", ")
        ))),
    }
}

/// Middleware: Host (exactly one, agreeing with an absolute-form target), then auth (except
/// `GET /login`), then Origin (at most one) on upgrades and non-GET requests. In web mode an
/// unauthenticated browser GET outside `/api/` gets [`login_page`].
pub async fn guard(State(st): State<AppState>, req: Request, next: Next) -> Response {
    let port = st.config.port;
    if let Some(why) = ambiguous_target(&req) {
        return ApiError::BadRequest(why).into_response();
    }
    let headers = req.headers();
    let daemon = st.config.remote_daemon;
    let host_fine = match daemon {
        // The remote daemon (protocol §11.2) is reached over its Unix socket only.
        true => headers.get(header::HOST).is_some_and(|h| h.as_bytes() == b"localhost"),
        false => host_ok(headers.get(header::HOST), port),
    };
    if !host_fine {
        return ApiError::BadHost.into_response();
    }
    let path = req.uri().path().to_string();
    let is_get = req.method() == Method::GET || req.method() == Method::HEAD;
    let is_login = path == "/login" && is_get;
    // A viewer socket is authorized by its single-use grant instead (protocol §8.4).
    let is_viewer = path.starts_with("/viewer/") && is_get;
    // A pane token (protocol §9.1) reaches the control verbs and nothing else.
    let pane_token = bearer(headers)
        .map(|b| st.control.tokens.check(b, |t| st.terminals.get(t).is_some_and(|term| term.exit_code().is_none())));
    let caller = match pane_token {
        Some(check @ (TokenCheck::Live(_) | TokenCheck::Revoked)) if path.starts_with("/api/control/") => {
            let token_pane = match check {
                TokenCheck::Live(c) => Some(c.pane),
                _ => None,
            };
            let pid = req.headers().get("x-porthole-pid").cloned();
            let peer = req.extensions().get::<ConnectInfo<Peer>>().map(|ConnectInfo(Peer(a))| *a);
            match caller_pane(&st, pid, peer, token_pane).await {
                Ok(pane) => Some(pane),
                Err(e) => return ApiError::Control(e).into_response(),
            }
        }
        Some(TokenCheck::Revoked) => return ApiError::Control(ControlError::Revoked).into_response(),
        Some(TokenCheck::Live(_)) => return ApiError::Unauthorized.into_response(),
        _ => None,
    };
    if caller.is_none() && !is_login && !is_viewer && !st.auth.is_authorized(headers) {
        if st.config.web && is_get && !path.starts_with("/api/") && path != "/api" {
            return login_page();
        }
        return ApiError::Unauthorized.into_response();
    }
    let origin_fine = match daemon {
        true => headers.get(header::ORIGIN).is_none(),
        false => origin_ok(headers.get(header::ORIGIN), port),
    };
    if (is_upgrade(headers) || !is_get || daemon) && !origin_fine {
        return ApiError::BadOrigin.into_response();
    }
    let mut req = req;
    req.extensions_mut().insert(Caller(caller));
    next.run(req).await
}

/// The value of `Authorization: Bearer <value>`, if present.
fn bearer(headers: &HeaderMap) -> Option<&str> {
    let v = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    Some(v.strip_prefix("Bearer ")?.trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hv(s: &str) -> HeaderValue {
        HeaderValue::from_str(s).unwrap()
    }

    #[test]
    fn host_check_accepts_only_own_loopback_port() {
        assert!(host_ok(Some(&hv("127.0.0.1:4000")), 4000));
        assert!(host_ok(Some(&hv("localhost:4000")), 4000));
        assert!(host_ok(Some(&hv("LocalHost:4000")), 4000));
        for bad in [
            "127.0.0.1:4001",
            "127.0.0.1",
            "localhost",
            "evil.com:4000",
            "127.0.0.2:4000",
            "[::1]:4000",
            "localhost.evil.com:4000",
            "127.0.0.1:4000:4000",
            "0.0.0.0:4000",
            "",
        ] {
            assert!(!host_ok(Some(&hv(bad)), 4000), "{bad}");
        }
        assert!(!host_ok(None, 4000));
    }

    #[test]
    fn a_doubled_host_or_origin_or_a_target_naming_another_host_is_ambiguous() {
        let req = |target: &str, headers: &[(&str, &str)]| {
            let mut b = Request::builder().uri(target);
            for (k, v) in headers {
                b = b.header(*k, *v);
            }
            b.body(axum::body::Body::empty()).unwrap()
        };
        let host = ("Host", "127.0.0.1:4000");
        let fine = [
            req("/api/health", &[host]),
            req("/api/health", &[host, ("Origin", "tauri://localhost")]),
            req("http://127.0.0.1:4000/api/health", &[host]),
            req("http://LOCALHOST:4000/x", &[("Host", "localhost:4000")]),
        ];
        for r in fine {
            assert_eq!(ambiguous_target(&r), None, "{:?}", r.uri());
        }
        let bad = [
            req("/api/health", &[host, ("Host", "evil.example:4000")]),
            req("/api/health", &[host, ("Origin", "http://127.0.0.1:4000"), ("Origin", "http://evil.example")]),
            req("http://evil.example/api/health", &[host]),
            req("http://127.0.0.1:4001/api/health", &[host]),
            req("https://127.0.0.1:4000/api/health", &[host]),
            req("http://localhost:4000/api/health", &[host]),
        ];
        for r in bad {
            assert!(ambiguous_target(&r).is_some(), "{:?} {:?}", r.uri(), r.headers());
        }
    }

    #[test]
    fn origin_check_accepts_app_origins_and_absent() {
        assert!(origin_ok(None, 5));
        for ok in [
            "http://127.0.0.1:5",
            "http://localhost:5",
            "tauri://localhost",
            "http://tauri.localhost",
            "https://tauri.localhost",
        ] {
            assert!(origin_ok(Some(&hv(ok)), 5), "{ok}");
        }
        for bad in [
            "http://127.0.0.1:6",
            "https://127.0.0.1:5",
            "http://evil.com",
            "null",
            "tauri://evil",
            "http://localhost:5/",
            "http://tauri.localhost.evil.com",
            "",
        ] {
            assert!(!origin_ok(Some(&hv(bad)), 5), "{bad}");
        }
    }
}
