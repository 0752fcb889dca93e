//! `JsonBody<T>`: a bounded, typed JSON body whose failures map onto [`ApiError`].

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
        let bytes = Bytes::from_request(req, state).await.map_err(|e| {
            if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
                ApiError::TooLarge
            } else {
                ApiError::BadRequest(e.body_text())
            }
        })?;
        serde_json::from_slice(&bytes).map(JsonBody).map_err(|e| ApiError::BadJson(e.to_string()))
    }
}
