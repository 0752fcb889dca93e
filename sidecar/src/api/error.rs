//! The one HTTP error type: a stable `code`, a human `message` (protocol §3).

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;

use crate::ports::ScanError;
use crate::proxy::ProxyError;
use crate::pty::PtyError;

/// Every error an endpoint can return. Converted to
/// `{"error":{"code":…,"message":…}}` with the status from protocol §3.
#[derive(Debug)]
pub enum ApiError {
    /// Occurs when the body is not the JSON the endpoint takes (syntax, types, unknown or
    /// missing fields). 400 `bad_json`.
    BadJson(String),
    /// Occurs when a value is out of bounds. 400 `bad_request`.
    BadRequest(String),
    /// Occurs when `cwd` is not an existing absolute directory. 400 `bad_cwd`.
    BadCwd(String),
    /// Occurs when no valid token, session cookie or login code was presented. 401.
    Unauthorized,
    /// Occurs when the `Host` header does not name this sidecar. 403 `bad_host`.
    BadHost,
    /// Occurs when an upgrade or a non-GET request carries a foreign `Origin`. 403.
    BadOrigin,
    /// Occurs when the named thing (`"terminal"`, `"browser"`, `"grant"`, `"route"`) does
    /// not exist. 404 `not_found`, message "no such <thing>".
    NotFound(&'static str),
    /// Occurs when a body is over 256 KiB. 413 `too_large`.
    TooLarge,
    /// Occurs when a JSON endpoint gets a body whose `Content-Type` is not
    /// `application/json`. 415 `bad_content_type`.
    BadContentType,
    /// Occurs when the route exists but not for this method. 405 `method_not_allowed` (the
    /// router adds `Allow`).
    MethodNotAllowed,
    /// Occurs when the PTY or the program could not be started. 500 `spawn_failed`.
    SpawnFailed(String),
    /// Occurs when as many terminals as `--max-terminals` allows are open. 429
    /// `too_many_terminals`; the message names the limit.
    TooManyTerminals(String),
    /// Occurs when a browser operation fails (protocol §8.3 lists the codes).
    Browser(crate::browser::BrowserError),
    /// Occurs when 1024 viewer grants are already outstanding. 429 `too_many_grants`.
    TooManyViewerGrants,
    /// Occurs when a browser URL names a link-local or cloud-metadata address literal. 403
    /// `blocked_address` (protocol §8.2), as for proxy grants.
    BlockedAddress(crate::address::BlockedAddress),
    /// Occurs when a proxy grant is refused: 400 `bad_url`/`bad_scheme`/`https_refused`,
    /// 403 `blocked_address`, 429 `too_many_grants` (protocol §6).
    Proxy(ProxyError),
    /// Occurs when a port scan fails: 500 `scan_failed` (the message says what could not
    /// be read), or 501 `unsupported` on a platform without a scan (protocol §7).
    Ports(ScanError),
    /// Occurs when a control verb is refused (protocol §9.3 lists the codes).
    Control(crate::control::ControlError),
    /// Occurs when a `ph browser` verb is refused (protocol §9.7 lists the codes). Never
    /// holds a browser error: those are [`ApiError::Browser`].
    Automation(crate::automation::AutomationError),
    /// Occurs when a project layout cannot be started or a project file trusted (protocol
    /// §9.8 lists the codes).
    Project(crate::project::ProjectError),
    /// Occurs when a config write is refused (protocol §4 `PATCH /api/config/agent-sealed`):
    /// 400 `bad_request`, 409 `locked_by_environment` or `config_invalid`, 500 `internal`.
    Config(crate::config::WriteError),
    /// Occurs when a remote link or a stream through it fails (protocol §11.5): 400
    /// `bad_host`, 502 `remote_unreachable` / `remote_binary_missing` / `connect_failed` /
    /// `remote_refused`, 409 `host_key` / `too_many_remotes` / `remote_platform_unsupported`,
    /// 503 `remote_disconnected`. The
    /// ssh errors carry ssh's stderr tail in `error.stderr`.
    Remote(crate::remote::LinkError),
    /// Occurs on anything else; the detail is logged, never sent. 500 `internal`.
    Internal(String),
}

impl ApiError {
    /// The HTTP status and the stable code.
    pub fn status_and_code(&self) -> (StatusCode, &'static str) {
        match self {
            ApiError::BadJson(_) => (StatusCode::BAD_REQUEST, "bad_json"),
            ApiError::BadRequest(_) => (StatusCode::BAD_REQUEST, "bad_request"),
            ApiError::BadCwd(_) => (StatusCode::BAD_REQUEST, "bad_cwd"),
            ApiError::Unauthorized => (StatusCode::UNAUTHORIZED, "unauthorized"),
            ApiError::BadHost => (StatusCode::FORBIDDEN, "bad_host"),
            ApiError::BadOrigin => (StatusCode::FORBIDDEN, "bad_origin"),
            ApiError::NotFound(_) => (StatusCode::NOT_FOUND, "not_found"),
            ApiError::TooLarge => (StatusCode::PAYLOAD_TOO_LARGE, "too_large"),
            ApiError::BadContentType => (StatusCode::UNSUPPORTED_MEDIA_TYPE, "bad_content_type"),
            ApiError::MethodNotAllowed => (StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed"),
            ApiError::SpawnFailed(_) => (StatusCode::INTERNAL_SERVER_ERROR, "spawn_failed"),
            ApiError::TooManyTerminals(_) => (StatusCode::TOO_MANY_REQUESTS, "too_many_terminals"),
            ApiError::BlockedAddress(_) => (StatusCode::FORBIDDEN, "blocked_address"),
            ApiError::Proxy(e) => match e {
                ProxyError::BadUrl(_) | ProxyError::BadScheme(_) | ProxyError::HttpsRefused(_) => {
                    (StatusCode::BAD_REQUEST, e.code())
                }
                ProxyError::BlockedAddress(_) => (StatusCode::FORBIDDEN, e.code()),
                ProxyError::TooManyGrants(_) => (StatusCode::TOO_MANY_REQUESTS, e.code()),
                ProxyError::Bind(_) => (StatusCode::INTERNAL_SERVER_ERROR, "internal"),
            },
            ApiError::Ports(ScanError::Unsupported(_)) => (StatusCode::NOT_IMPLEMENTED, "unsupported"),
            ApiError::Ports(_) => (StatusCode::INTERNAL_SERVER_ERROR, "scan_failed"),
            ApiError::Internal(_) => (StatusCode::INTERNAL_SERVER_ERROR, "internal"),
            ApiError::Remote(e) => {
                use crate::remote::LinkError as L;
                match e {
                    L::BadHost(_) => (StatusCode::BAD_REQUEST, "bad_host"),
                    L::Unreachable(_) => (StatusCode::BAD_GATEWAY, "remote_unreachable"),
                    L::BinaryMissing(_) => (StatusCode::BAD_GATEWAY, "remote_binary_missing"),
                    L::HostKey(_) => (StatusCode::CONFLICT, "host_key"),
                    L::TooMany => (StatusCode::CONFLICT, "too_many_remotes"),
                    L::Unsupported(_) => (StatusCode::CONFLICT, "remote_platform_unsupported"),
                    L::Disconnected => (StatusCode::SERVICE_UNAVAILABLE, "remote_disconnected"),
                    L::Refused { code, .. } if code == "connect_failed" => (StatusCode::BAD_GATEWAY, "connect_failed"),
                    L::Refused { .. } => (StatusCode::BAD_GATEWAY, "remote_refused"),
                }
            }
            ApiError::Config(e) => {
                use crate::config::WriteError as W;
                match e {
                    W::Invalid(_) => (StatusCode::BAD_REQUEST, "bad_request"),
                    W::LockedByEnvironment => (StatusCode::CONFLICT, "locked_by_environment"),
                    W::FileInvalid(_) => (StatusCode::CONFLICT, "config_invalid"),
                    W::Io(_) => (StatusCode::INTERNAL_SERVER_ERROR, "internal"),
                }
            }
            ApiError::Control(e) => {
                let (status, code) = e.status_and_code();
                (StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR), code)
            }
            ApiError::Automation(e) => {
                let (status, code) = e.status_and_code().unwrap_or((500, "internal"));
                (StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR), code)
            }
            ApiError::TooManyViewerGrants => (StatusCode::TOO_MANY_REQUESTS, "too_many_grants"),
            ApiError::Project(e) => {
                let (status, code) = e.status_and_code();
                (StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR), code)
            }
            ApiError::Browser(e) => {
                use crate::browser::BrowserError as B;
                match e {
                    B::NoChromium(_) => (StatusCode::SERVICE_UNAVAILABLE, "no_chromium"),
                    B::Launch(_) => (StatusCode::INTERNAL_SERVER_ERROR, "launch_failed"),
                    B::Closed => (StatusCode::CONFLICT, "closed"),
                    B::Busy => (StatusCode::CONFLICT, "busy"),
                    B::Disconnected => (StatusCode::CONFLICT, "disconnected"),
                    B::BadRequest(_) => (StatusCode::BAD_REQUEST, "bad_request"),
                    B::Cdp(_) => (StatusCode::BAD_GATEWAY, "cdp_failed"),
                    B::Timeout(_) => (StatusCode::GATEWAY_TIMEOUT, "cdp_timeout"),
                    B::ShuttingDown => (StatusCode::SERVICE_UNAVAILABLE, "shutting_down"),
                    B::NoDisplay(_) => (StatusCode::CONFLICT, "no_display"),
                    B::PoppedOut => (StatusCode::CONFLICT, "popped_out"),
                    B::NotPoppedOut => (StatusCode::CONFLICT, "not_popped_out"),
                    B::ProfileInUse(_) => (StatusCode::CONFLICT, "profile_in_use"),
                }
            }
        }
    }

    fn message(&self) -> String {
        match self {
            ApiError::BadJson(m) | ApiError::BadRequest(m) | ApiError::BadCwd(m) => m.clone(),
            ApiError::SpawnFailed(m) | ApiError::TooManyTerminals(m) => m.clone(),
            ApiError::Proxy(ProxyError::Bind(_)) => "internal error (see the sidecar's log)".into(),
            ApiError::Proxy(e) => e.to_string(),
            ApiError::BlockedAddress(e) => e.to_string(),
            ApiError::Ports(e) => e.to_string(),
            ApiError::Unauthorized => "a valid token, session cookie or login code is required".into(),
            ApiError::BadHost => "the Host header must name this sidecar's loopback address".into(),
            ApiError::BadOrigin => "this Origin may not use the sidecar".into(),
            ApiError::NotFound(what) => format!("no such {what}"),
            ApiError::TooLarge => "the body is over 256 KiB".into(),
            ApiError::BadContentType => "a JSON body needs Content-Type: application/json".into(),
            ApiError::MethodNotAllowed => "this route does not take that method (see Allow)".into(),
            ApiError::Internal(_) => "internal error (see the sidecar's log)".into(),
            ApiError::Config(crate::config::WriteError::Io(_)) => "internal error (see the sidecar's log)".into(),
            ApiError::Config(e) => e.to_string(),
            ApiError::TooManyViewerGrants => "1024 viewer grants are outstanding; use or let some expire".into(),
            ApiError::Browser(e) => e.to_string(),
            ApiError::Control(e) => e.to_string(),
            ApiError::Automation(e) => e.to_string(),
            ApiError::Project(e) => e.to_string(),
            ApiError::Remote(e) => e.to_string(),
        }
    }
}

impl From<crate::control::ControlError> for ApiError {
    fn from(e: crate::control::ControlError) -> Self {
        ApiError::Control(e)
    }
}

impl From<crate::automation::AutomationError> for ApiError {
    fn from(e: crate::automation::AutomationError) -> Self {
        match e {
            crate::automation::AutomationError::Browser(b) => ApiError::Browser(b),
            other => ApiError::Automation(other),
        }
    }
}

impl From<crate::project::ProjectError> for ApiError {
    fn from(e: crate::project::ProjectError) -> Self {
        ApiError::Project(e)
    }
}

impl From<ProxyError> for ApiError {
    fn from(e: ProxyError) -> Self {
        ApiError::Proxy(e)
    }
}

impl From<crate::control::UrlError> for ApiError {
    /// A blocked address keeps its own code (403 `blocked_address`); every other refusal is
    /// 400 `bad_request`.
    fn from(e: crate::control::UrlError) -> Self {
        match e {
            crate::control::UrlError::Blocked(b) => ApiError::BlockedAddress(b),
            other => ApiError::BadRequest(other.to_string()),
        }
    }
}

impl From<crate::remote::LinkError> for ApiError {
    fn from(e: crate::remote::LinkError) -> Self {
        ApiError::Remote(e)
    }
}

impl From<ScanError> for ApiError {
    fn from(e: ScanError) -> Self {
        ApiError::Ports(e)
    }
}

impl From<PtyError> for ApiError {
    fn from(e: PtyError) -> Self {
        match e {
            PtyError::Open(_) | PtyError::Spawn { .. } => ApiError::SpawnFailed(e.to_string()),
            PtyError::TooMany { .. } => ApiError::TooManyTerminals(e.to_string()),
            other => ApiError::Internal(other.to_string()),
        }
    }
}

impl From<crate::browser::BrowserError> for ApiError {
    fn from(e: crate::browser::BrowserError) -> Self {
        ApiError::Browser(e)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, code) = self.status_and_code();
        match &self {
            ApiError::Internal(detail) => tracing::error!(code, "{detail}"),
            ApiError::SpawnFailed(detail) => tracing::warn!(code, "{detail}"),
            ApiError::Browser(e) => tracing::warn!(code, "{e}"),
            ApiError::Proxy(e @ ProxyError::Bind(_)) => tracing::error!(code, "{e}"),
            ApiError::Ports(e) => tracing::warn!(code, "{e}"),
            ApiError::Config(e @ crate::config::WriteError::Io(_)) => tracing::error!(code, "{e}"),
            ApiError::Project(e @ crate::project::ProjectError::Store(_)) => tracing::error!(code, "{e}"),
            _ => tracing::debug!(code, status = status.as_u16(), "request refused"),
        }
        let mut body = serde_json::json!({"error": {"code": code, "message": self.message()}});
        if let ApiError::Control(e) = &self {
            if let Some(c) = e.candidates() {
                body["error"]["candidates"] = serde_json::Value::Array(c.clone());
            }
        }
        if let ApiError::Automation(e) = &self {
            for (k, v) in e.details() {
                body["error"][k] = v;
            }
        }
        if let ApiError::Project(e) = &self {
            for (k, v) in e.details() {
                body["error"][k] = v;
            }
        }
        if let ApiError::Remote(
            crate::remote::LinkError::Unreachable(t)
            | crate::remote::LinkError::BinaryMissing(t)
            | crate::remote::LinkError::HostKey(t),
        ) = &self
        {
            body["error"]["stderr"] = serde_json::Value::String(t.clone());
        }
        (status, Json(body)).into_response()
    }
}
