//! Request bodies (protocol §3): `JsonBody<T>` and `OptionalJsonBody<T>`, bounded, typed JSON
//! objects sent as `application/json`, whose failures map onto [`ApiError`]; and the
//! middleware that refuses an oversized body on any route before it is read.

use axum::body::{Body, Bytes};
use axum::extract::{FromRequest, Request};
use axum::http::{header, HeaderMap, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http_body_util::{BodyExt, LengthLimitError, Limited};
use serde::de::DeserializeOwned;
use serde::Deserialize;

use super::error::ApiError;
use crate::browser::MAX_UPLOAD_BYTES;
use crate::constants::MAX_BODY_BYTES;

/// A request body parsed as `T`. The size bound is the router's `DefaultBodyLimit`
/// (256 KiB): over it → 413 `too_large`; a body without `Content-Type: application/json` →
/// 415 `bad_content_type`; not a JSON object, bad syntax, types or unknown fields (with
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

/// Like [`JsonBody`], for endpoints whose body may be left out: an empty body is `None`
/// (whatever its `Content-Type`); anything else must be a JSON object parsing as `T` (same
/// bounds and errors).
pub struct OptionalJsonBody<T>(pub Option<T>);

impl<S, T> FromRequest<S> for OptionalJsonBody<T>
where
    S: Send + Sync,
    T: DeserializeOwned,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        let json = is_json(req.headers());
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
        if !json {
            return Err(ApiError::BadContentType);
        }
        if bytes.iter().find(|b| !b" \t\r\n".contains(b)) != Some(&b'{') {
            return Err(ApiError::BadJson("the body must be a JSON object".into()));
        }
        serde_json::from_slice(&bytes).map(|t| OptionalJsonBody(Some(t))).map_err(|e| ApiError::BadJson(e.to_string()))
    }
}

/// True if and only if `Content-Type` is `application/json` (any case, parameters such as
/// `charset=utf-8` allowed).
fn is_json(headers: &HeaderMap) -> bool {
    let Some(v) = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()) else { return false };
    v.split(';').next().is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"))
}

/// For `#[serde(default, deserialize_with = "optional_object")]` on a field of a derived
/// type: `null` or a JSON object only. (A derived type also takes an array of its fields in
/// order, `[80,24]`, which the protocol does not; [`JsonBody`] checks the top level.)
pub fn optional_object<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: DeserializeOwned,
{
    match Option::<serde_json::Map<String, serde_json::Value>>::deserialize(d)? {
        None => Ok(None),
        Some(m) => T::deserialize(serde_json::Value::Object(m)).map(Some).map_err(serde::de::Error::custom),
    }
}

/// Middleware: a body over 256 KiB → 413 `too_large` on every route, whether or not the
/// route reads bodies (one that takes none would otherwise answer as if there were none). A
/// declared `Content-Length` is judged before anything is read; a chunked body is read here,
/// up to the bound, and handed on whole.
pub async fn refuse_oversized(req: Request, next: Next) -> Response {
    let max = body_limit(req.uri().path());
    let headers = req.headers();
    let declared = headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if declared.is_some_and(|n| n > max as u64) {
        return ApiError::TooLarge.into_response();
    }
    if declared.is_some() || !headers.contains_key(header::TRANSFER_ENCODING) {
        return next.run(req).await;
    }
    let (parts, body) = req.into_parts();
    match Limited::new(body, max).collect().await {
        Ok(whole) => next.run(Request::from_parts(parts, Body::from(whole.to_bytes()))).await,
        Err(e) if e.is::<LengthLimitError>() => ApiError::TooLarge.into_response(),
        Err(e) => ApiError::BadRequest(format!("the body could not be read: {e}")).into_response(),
    }
}

/// The body bound of a request path: [`MAX_UPLOAD_BYTES`] for a file chooser's upload
/// (`/api/browsers/{id}/file-chooser/{chooser}/files`), [`MAX_BODY_BYTES`] for the rest.
pub fn body_limit(path: &str) -> usize {
    let parts: Vec<&str> = path.split('/').collect();
    match parts.as_slice() {
        ["", "api", "browsers", _, "file-chooser", _, "files"] => MAX_UPLOAD_BYTES,
        _ => MAX_BODY_BYTES,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[test]
    fn only_a_file_chooser_upload_gets_the_larger_bound() {
        assert_eq!(body_limit("/api/browsers/b1/file-chooser/3/files"), MAX_UPLOAD_BYTES);
        assert_eq!(body_limit("/api/browsers/b1/file-chooser/3"), MAX_BODY_BYTES);
        assert_eq!(body_limit("/api/browsers/b1/file-chooser/3/files/x"), MAX_BODY_BYTES);
        assert_eq!(body_limit("/api/terminals"), MAX_BODY_BYTES);
    }

    #[test]
    fn json_content_types() {
        let check = |v: Option<&str>, want: bool| {
            let mut h = HeaderMap::new();
            if let Some(v) = v {
                h.insert(header::CONTENT_TYPE, HeaderValue::from_str(v).unwrap());
            }
            assert_eq!(is_json(&h), want, "{v:?}");
        };
        check(Some("application/json"), true);
        check(Some("Application/JSON; charset=utf-8"), true);
        check(Some(" application/json ;charset=UTF-8"), true);
        check(None, false);
        check(Some("text/plain"), false);
        check(Some("application/json-patch+json"), false);
        check(Some("application/x-www-form-urlencoded"), false);
        check(Some(""), false);
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Inner {
        a: i64,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Outer {
        #[serde(default, deserialize_with = "optional_object")]
        inner: Option<Inner>,
    }

    #[test]
    fn nested_structs_are_objects_or_null_only() {
        let parse = |s: &str| serde_json::from_str::<Outer>(s).map(|o| o.inner);
        assert_eq!(parse(r#"{"inner":{"a":1}}"#).unwrap(), Some(Inner { a: 1 }));
        assert_eq!(parse(r#"{"inner":null}"#).unwrap(), None);
        assert_eq!(parse(r#"{}"#).unwrap(), None);
        assert!(parse(r#"{"inner":[1]}"#).is_err());
        assert!(parse(r#"{"inner":{"a":1,"b":2}}"#).is_err());
        // What the helper is for: a derived struct alone takes an array.
        assert!(serde_json::from_str::<Inner>("[1]").is_ok());
    }
}
