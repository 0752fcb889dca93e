//! `GET /api/terminals/{id}/ports`: the pane's listening ports (protocol §7), from the
//! `ports` module.

use axum::extract::{Path, State};
use axum::Json;
use serde::Serialize;

use super::error::ApiError;
use super::state::AppState;
use super::terminals::lookup;
use crate::ports::{Listener, Root};

/// One port as sent on the wire.
#[derive(Debug, Serialize)]
pub struct PortJson {
    port: u16,
    address: String,
    pid: i32,
    process: String,
}

impl PortJson {
    /// The port number.
    pub fn port(&self) -> u16 {
        self.port
    }
}

impl From<&Listener> for PortJson {
    fn from(l: &Listener) -> Self {
        PortJson { port: l.port, address: l.address.to_string(), pid: l.pid, process: l.process.clone() }
    }
}

/// `GET /api/terminals/{id}/ports` → `200 {"ports":[…]}`, 404, or 500 `scan_failed` /
/// 501 `unsupported`.
pub async fn list(State(st): State<AppState>, Path(id): Path<String>) -> Result<Json<serde_json::Value>, ApiError> {
    let term = lookup(&st, &id)?;
    let root = Root { pid: term.pid(), tree: !term.reaped() };
    let ports = st.ports.scan(root).await?;
    let ports: Vec<PortJson> = ports.iter().map(PortJson::from).collect();
    Ok(Json(serde_json::json!({ "ports": ports })))
}
