//! `/api/control/browser/upload` and `/drag` (protocol §9.7): files for a file input, and a
//! drag from one element to another. The files are checked here, on the sidecar, before the
//! page sees them.

use axum::extract::State;
use axum::{Extension, Json};
use serde::Deserialize;
use serde_json::Value;

use super::body::JsonBody;
use super::browser_pane::{browser_to_drive, with_pane};
use super::error::ApiError;
use super::state::AppState;
use crate::automation::{UploadFile, MAX_UPLOAD_FILES};
use crate::control::Caller;

/// Body of `POST /api/control/browser/upload`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UploadReq {
    #[serde(default)]
    pane: Option<String>,
    #[serde(rename = "ref")]
    r#ref: String,
    files: Vec<String>,
}

/// `POST /api/control/browser/upload` `{"ref","files":[ABSOLUTE_PATH…]}` → `{"ref","files":
/// [{"name","size"}],"dialog"}`. 1..=64 paths, each an absolute path to a regular file this
/// process can read (else `400 bad_request` naming it), no path twice.
pub async fn upload(
    State(st): State<AppState>,
    Extension(caller): Extension<Caller>,
    JsonBody(req): JsonBody<UploadReq>,
) -> Result<Json<Value>, ApiError> {
    if req.files.is_empty() || req.files.len() > MAX_UPLOAD_FILES {
        return Err(ApiError::BadRequest(format!("upload takes 1..={MAX_UPLOAD_FILES} files")));
    }
    let files = req.files.iter().map(|f| UploadFile::check(f)).collect::<Result<Vec<_>, _>>()?;
    if let Some(f) = files.iter().enumerate().find(|(i, f)| files[..*i].iter().any(|g| g.path == f.path)) {
        return Err(ApiError::BadRequest(format!("{:?} is given twice", f.1.path)));
    }
    let (h, b) = browser_to_drive(&st, caller, req.pane.as_deref())?;
    Ok(with_pane(st.automation.upload(&b, &req.r#ref, &files).await?, h, &b))
}

/// Body of `POST /api/control/browser/drag`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DragReq {
    #[serde(default)]
    pane: Option<String>,
    #[serde(rename = "ref")]
    r#ref: String,
    to: String,
}

/// `POST /api/control/browser/drag` `{"ref","to"}` → `{"ref","target","from","to","kind",
/// "dialog"}`; the same ref twice is `400 bad_request`.
pub async fn drag(
    State(st): State<AppState>,
    Extension(caller): Extension<Caller>,
    JsonBody(req): JsonBody<DragReq>,
) -> Result<Json<Value>, ApiError> {
    if req.r#ref == req.to {
        return Err(ApiError::BadRequest("drag needs two different elements".into()));
    }
    let (h, b) = browser_to_drive(&st, caller, req.pane.as_deref())?;
    Ok(with_pane(st.automation.drag(&b, &req.r#ref, &req.to).await?, h, &b))
}
