//! `JsonBody<T>` (and `OptionalJsonBody<T>`): a bounded, typed JSON body whose failures map
//! onto [`ApiError`].

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::StatusCode;
use serde::de::DeserializeOwned;

use super::error::ApiError;

/// A request body parsed as `T`. The size bound is the router's `DefaultBodyLimit`
/// (256 KiB): over it → 413 `too_large`; bad syntax, types or unknown fields (with
/// `deny_unknown_fields` on `T`) → 400 `bad_json`.
pub struct JsonBody<T>(pub T);

impl<S, T> FromRequest<S> for JsonBody<T>
where
    S: Send + Sync,
    T: DeserializeOwned,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        match OptionalJsonBody::from_request(req, state).await? {
            OptionalJsonBody(Some(t)) => Ok(JsonBody(t)),
            OptionalJsonBody(None) => Err(ApiError::BadJson("the body is empty: a JSON value is required".into())),
        }
    }
}

/// Like [`JsonBody`], for endpoints whose body may be left out: an empty body is `None`;
/// anything else must parse as `T` (same bounds and errors).
pub struct OptionalJsonBody<T>(pub Option<T>);

impl<S, T> FromRequest<S> for OptionalJsonBody<T>
where
    S: Send + Sync,
    T: DeserializeOwned,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        let bytes = Bytes::from_request(req, state).await.map_err(|e| {
            if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
                ApiError::TooLarge
            } else {
                ApiError::BadRequest(e.body_text())
            }
        })?;
        if bytes.is_empty() {
            return Ok(OptionalJsonBody(None));
        }
        serde_json::from_slice(&bytes).map(|t| OptionalJsonBody(Some(t))).map_err(|e| ApiError::BadJson(e.to_string()))
    }
}
