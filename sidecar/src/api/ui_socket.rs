//! The UI channel (protocol §10): `GET /api/ui/socket`, one per window; the `control`
//! module owns what the window reports and what is relayed to it.

use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade};
use axum::extract::State;
use axum::response::Response;
use futures_util::{SinkExt, StreamExt};

use super::error::ApiError;
use super::state::AppState;
use crate::config::Snapshot;
use crate::control::{Control, MAX_UI_MESSAGE_BYTES};
use std::sync::Arc;
use tokio::sync::watch;

/// WebSocket close code for a protocol violation (RFC 6455 "policy").
const CLOSE_POLICY: u16 = 1008;

/// `GET /api/ui/socket`: 400 if not an upgrade; otherwise negotiates and hands the socket to
/// [`serve`].
pub async fn upgrade(
    State(st): State<AppState>,
    ws: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Result<Response, ApiError> {
    let ws = ws.map_err(|e| ApiError::BadRequest(e.body_text()))?;
    let control = st.control.clone();
    let settings = st.settings.subscribe();
    Ok(ws
        .max_message_size(MAX_UI_MESSAGE_BYTES)
        .max_frame_size(MAX_UI_MESSAGE_BYTES)
        .on_upgrade(move |socket| serve(socket, control, settings)))
}

/// One window's connection: attach, send the configuration, forward relayed requests and
/// each configuration change out, feed reports in, detach on any end (a failed send is a
/// disconnect).
async fn serve(socket: WebSocket, control: Arc<Control>, mut settings: watch::Receiver<Snapshot>) {
    let (id, mut outbox) = control.windows.attach();
    let (mut tx, mut rx) = socket.split();
    settings.mark_changed();
    let mut drivers = control.drivers.subscribe();
    let mut handoffs = control.handoffs.subscribe();
    drivers.mark_changed();
    loop {
        tokio::select! {
            changed = async { tokio::select! { c = drivers.changed() => c, c = handoffs.changed() => c } } => {
                if changed.is_err() {
                    break;
                }
                let msg = serde_json::json!({
                    "type": "drivers",
                    "drivers": *drivers.borrow_and_update(),
                    "handoffs": *handoffs.borrow_and_update(),
                })
                .to_string();
                if tx.send(Message::Text(msg.into())).await.is_err() {
                    break;
                }
            }
            changed = settings.changed() => {
                if changed.is_err() {
                    break;
                }
                let msg = config_message(&settings.borrow_and_update());
                if tx.send(Message::Text(msg.into())).await.is_err() {
                    break;
                }
            }
            out = outbox.recv() => {
                let Some(text) = out else { break };
                if tx.send(Message::Text(text.into())).await.is_err() {
                    break;
                }
            }
            msg = rx.next() => {
                match msg {
                    Some(Ok(Message::Text(t))) => {
                        if let Err(reason) = control.windows.on_message(id, t.as_str()) {
                            tracing::debug!(window = id, "ui channel closed: {reason}");
                            let reason: String = reason.to_string().chars().take(120).collect();
                            let frame = CloseFrame { code: CLOSE_POLICY, reason: reason.into() };
                            let _ = tx.send(Message::Close(Some(frame))).await;
                            break;
                        }
                    }
                    Some(Ok(Message::Binary(_))) => {
                        let frame = CloseFrame { code: CLOSE_POLICY, reason: "the UI channel carries text only".into() };
                        let _ = tx.send(Message::Close(Some(frame))).await;
                        break;
                    }
                    Some(Ok(Message::Close(_))) | None | Some(Err(_)) => break,
                    Some(Ok(_)) => {}
                }
            }
        }
    }
    control.windows.detach(id);
}

/// `{"type":"config",…Snapshot}` (protocol §10).
fn config_message(snap: &Snapshot) -> String {
    let mut v = serde_json::to_value(snap).unwrap_or_default();
    if let Some(o) = v.as_object_mut() {
        o.insert("type".into(), "config".into());
    }
    v.to_string()
}
