//! The terminal WebSocket (protocol §5): replay header and scrollback, live output, the
//! answerer state, catch-ups, input, resize, ack.

use std::sync::Arc;

use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket, WebSocketUpgrade};
use axum::extract::{Path, State};
use axum::response::Response;
use bytes::Bytes;
use futures_util::stream::{SplitSink, SplitStream, StreamExt};
use futures_util::SinkExt;
use serde::Deserialize;

use super::error::ApiError;
use super::state::AppState;
use super::terminals::{cells, lookup, ShellJson};
use crate::constants::{MAX_ACK_BYTES, MAX_WS_MESSAGE_BYTES, REPLAY_CHUNK_BYTES};
use crate::pty::{Attention, CatchUp, ClientHandle, Event, ShellInfo, Terminal};

/// WebSocket close code for a protocol violation by the client (RFC 6455 "policy").
const CLOSE_POLICY: u16 = 1008;
/// WebSocket close code for a normal close (the terminal was deleted).
const CLOSE_NORMAL: u16 = 1000;
/// Output messages written before one flush, when several are already queued.
const MAX_FEED_MESSAGES: usize = 16;
/// WebSocket close code when the server cannot go on (RFC 6455 "internal error").
const CLOSE_INTERNAL: u16 = 1011;

/// A control message from the client, as received.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase", deny_unknown_fields)]
pub enum ClientControl {
    /// `{"type":"resize","cols":C,"rows":R}`, both 1..=1000.
    Resize {
        /// Columns.
        cols: i64,
        /// Rows.
        rows: i64,
    },
    /// `{"type":"ack","bytes":N}`, N in 1..=2^32.
    Ack {
        /// Bytes of output processed since the previous ack.
        bytes: u64,
    },
}

/// A validated control message.
#[derive(Debug, PartialEq, Eq)]
pub enum Control {
    /// Set the window size to `cols`×`rows`.
    Resize(u16, u16),
    /// Acknowledge this many bytes (1..=2^32).
    Ack(u64),
    /// A `type` this sidecar does not know (a newer UI's): ignored, so newer UIs can talk to
    /// older sidecars (protocol §5; issue 22 item 2c). Its other fields are not read.
    Ignored,
}

/// The `type` tags of [`ClientControl`].
const KNOWN_TYPES: &[&str] = &["resize", "ack"];

/// Parses and bounds-checks a text message; the error is the close reason. A JSON object
/// whose `type` is a string this sidecar does not know is [`Control::Ignored`]; anything
/// else malformed (not an object, no string `type`, a known type with bad fields) is an error.
fn parse_control(text: &str) -> Result<Control, String> {
    #[derive(Deserialize)]
    struct Tag<'a> {
        #[serde(rename = "type", borrow)]
        kind: std::borrow::Cow<'a, str>,
    }
    let tag: Tag = serde_json::from_str(text).map_err(|e| format!("bad control message: {e}"))?;
    if !KNOWN_TYPES.contains(&tag.kind.as_ref()) {
        return Ok(Control::Ignored);
    }
    let c: ClientControl = serde_json::from_str(text).map_err(|e| format!("bad control message: {e}"))?;
    match c {
        ClientControl::Resize { cols, rows } => {
            let cols = cells("cols", cols).map_err(|_| format!("cols must be in 1..=1000, got {cols}"))?;
            let rows = cells("rows", rows).map_err(|_| format!("rows must be in 1..=1000, got {rows}"))?;
            Ok(Control::Resize(cols, rows))
        }
        ClientControl::Ack { bytes } if (1..=MAX_ACK_BYTES).contains(&bytes) => Ok(Control::Ack(bytes)),
        ClientControl::Ack { bytes } => Err(format!("ack bytes must be in 1..=2^32, got {bytes}")),
    }
}

/// `GET /api/terminals/{id}/socket`: 404 for an unknown terminal, 400 if not an upgrade;
/// otherwise negotiates and hands the socket to [`serve_socket`].
pub async fn upgrade(
    State(st): State<AppState>,
    Path(id): Path<String>,
    ws: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Result<Response, ApiError> {
    let term = lookup(&st, &id)?;
    let ws = ws.map_err(|e| ApiError::BadRequest(e.body_text()))?;
    Ok(ws
        .max_message_size(MAX_WS_MESSAGE_BYTES)
        .max_frame_size(MAX_WS_MESSAGE_BYTES)
        .on_upgrade(move |socket| serve_socket(socket, term)))
}

fn exit_message(code: i32) -> Message {
    Message::Text(Utf8Bytes::from(format!(r#"{{"type":"exit","code":{code}}}"#)))
}

/// `{"type":"replay","bytes":N}`: the first message on every connection; exactly `N` bytes of
/// binary payload that follow are scrollback replay (protocol §5).
fn replay_message(bytes: usize) -> Message {
    Message::Text(Utf8Bytes::from(format!(r#"{{"type":"replay","bytes":{bytes}}}"#)))
}

/// `{"type":"catchup","bytes":N,"lines":L,"skipped":S}`: the next `N` bytes of binary
/// payload are a catch-up state (protocol §5.4), after `L` lines (`S` bytes) went by.
fn catch_up_message(c: &CatchUp, bytes: usize) -> Message {
    Message::Text(Utf8Bytes::from(format!(
        r#"{{"type":"catchup","bytes":{bytes},"lines":{},"skipped":{}}}"#,
        c.lines, c.skipped_bytes
    )))
}

/// `{"type":"answerer","answers":B}`: whether this client answers terminal queries in the
/// live output that follows (protocol §5.2).
fn answerer_message(answers: bool) -> Message {
    Message::Text(Utf8Bytes::from(format!(r#"{{"type":"answerer","answers":{answers}}}"#)))
}

/// `{"type":"shell",…}`: the shell's state (protocol §5.3), the `shell` object of a `Terminal`.
fn shell_message(s: &ShellInfo) -> Message {
    let mut v = serde_json::to_value(ShellJson::new(s)).unwrap_or_default();
    v["type"] = "shell".into();
    Message::Text(Utf8Bytes::from(v.to_string()))
}

/// `{"type":"attention","kind":…}` (protocol §5.3).
fn attention_message(a: &Attention) -> Message {
    let v = match a {
        Attention::Bell => serde_json::json!({"type": "attention", "kind": "bell"}),
        Attention::Notify { title, body } => {
            serde_json::json!({"type": "attention", "kind": "notify", "title": title, "body": body})
        }
        Attention::CommandDone { command, exit, duration_ms } => serde_json::json!({
            "type": "attention", "kind": "command_done", "command": command, "exit": exit, "duration_ms": duration_ms
        }),
    };
    Message::Text(Utf8Bytes::from(v.to_string()))
}

fn close_message(code: u16, reason: &str) -> Message {
    // A close reason is at most 123 bytes; cut at a char boundary.
    let mut end = reason.len().min(123);
    while !reason.is_char_boundary(end) {
        end -= 1;
    }
    Message::Close(Some(CloseFrame { code, reason: Utf8Bytes::from(&reason[..end]) }))
}

type Sink = SplitSink<WebSocket, Message>;

/// One client connection: replay header, answerer state, replay, then pump events out and
/// input/control in until either side ends. A failed send is a disconnect. Dropping the
/// attachment detaches the client.
async fn serve_socket(socket: WebSocket, term: Arc<Terminal>) {
    let att = term.attach();
    let (mut tx, mut rx) = socket.split();
    if tx.feed(replay_message(att.replay.len())).await.is_err() || tx.feed(answerer_message(att.answers)).await.is_err()
    {
        return;
    }
    for chunk in att.replay.chunks(REPLAY_CHUNK_BYTES) {
        if tx.feed(Message::Binary(Bytes::copy_from_slice(chunk))).await.is_err() {
            return;
        }
    }
    if att.shell != ShellInfo::default() && tx.feed(shell_message(&att.shell)).await.is_err() {
        return;
    }
    if let Some(code) = att.exited {
        if tx.feed(exit_message(code)).await.is_err() {
            return;
        }
    }
    if tx.flush().await.is_err() {
        return;
    }
    if att.closed {
        let _ = tx.send(close_message(CLOSE_NORMAL, "terminal deleted")).await;
        return;
    }
    let (handle, mut events) = (att.handle, att.events);
    pump(&mut tx, &mut rx, &term, &handle, &mut events).await;
    drop(handle);
}

/// Pumps events out and input/control in until the client or the terminal ends the
/// connection (sending the close frame, if any, itself), or the events end: only a detach
/// ends them while the handle is held.
async fn pump(
    tx: &mut Sink,
    rx: &mut SplitStream<WebSocket>,
    term: &Terminal,
    handle: &ClientHandle,
    events: &mut tokio::sync::mpsc::UnboundedReceiver<Event>,
) {
    loop {
        tokio::select! {
            ev = events.recv() => {
                // The handle is held, so the events never end.
                let Some(ev) = ev else { return };
                if !send_events(tx, ev, events).await {
                    return;
                }
            }
            msg = rx.next() => {
                let Some(Ok(msg)) = msg else { break };
                match msg {
                    Message::Binary(data) => {
                        // Typing (or answering) makes this client the answerer.
                        handle.note_input();
                        if term.write_input(data.to_vec()).await.is_err() {
                            let _ = tx.send(close_message(CLOSE_NORMAL, "terminal closed")).await;
                            break;
                        }
                    }
                    Message::Text(text) => {
                        let result = parse_control(text.as_str()).and_then(|c| match c {
                            Control::Resize(cols, rows) => {
                                term.resize(cols, rows).map_err(|e| e.to_string())
                            }
                            Control::Ack(n) => handle.ack(n).map_err(|e| e.to_string()).map(|job| {
                                // Fell behind and drew what it had: its catch-up is made
                                // off the async threads (the model parses) and queued in order.
                                if let Some(job) = job {
                                    tokio::task::spawn_blocking(move || job.run());
                                }
                            }),
                            Control::Ignored => Ok(()),
                        });
                        if let Err(reason) = result {
                            tracing::debug!(id = %term.id(), "closing socket: {reason}");
                            let _ = tx.send(close_message(CLOSE_POLICY, &reason)).await;
                            break;
                        }
                    }
                    Message::Close(_) => break,
                    Message::Ping(_) | Message::Pong(_) => {}
                }
            }
        }
    }
}

/// Sends `first` and whatever output is already queued behind it (up to a few messages)
/// with one flush. Returns false if the client is gone or the socket must close.
async fn send_events(tx: &mut Sink, first: Event, events: &mut tokio::sync::mpsc::UnboundedReceiver<Event>) -> bool {
    let mut next = Some(first);
    let mut fed = 0;
    while let Some(ev) = next.take() {
        let msg = match ev {
            Event::Output(b) => Message::Binary(b),
            Event::Exit(code) => exit_message(code),
            Event::Answerer(answers) => answerer_message(answers),
            Event::Shell(s) => shell_message(&s),
            Event::Attention(a) => attention_message(&a),
            Event::CatchUp(c) => {
                if !send_catch_up(tx, &c).await {
                    return false;
                }
                fed += 1;
                next = events.try_recv().ok();
                continue;
            }
            Event::Closed => {
                let _ = tx.send(close_message(CLOSE_NORMAL, "terminal deleted")).await;
                return false;
            }
        };
        if tx.feed(msg).await.is_err() {
            return false;
        }
        fed += 1;
        if fed < MAX_FEED_MESSAGES {
            next = events.try_recv().ok();
        }
    }
    tx.flush().await.is_ok()
}

/// Sends a catch-up's header and state (waiting for the state to be made). Returns false if
/// the client is gone, or if the state was never made (the socket is then closed: the
/// client reattaches and gets the whole replay).
async fn send_catch_up(tx: &mut Sink, c: &CatchUp) -> bool {
    let state = loop {
        let ready = c.ready.notified();
        if let Some(s) = c.state.get() {
            break s;
        }
        if tokio::time::timeout(std::time::Duration::from_secs(CATCH_UP_WAIT_S), ready).await.is_err() {
            let _ = tx.send(close_message(CLOSE_INTERNAL, "catch-up state not made; reattach")).await;
            return false;
        }
    };
    if tx.feed(catch_up_message(c, state.len())).await.is_err() {
        return false;
    }
    for chunk in state.chunks(REPLAY_CHUNK_BYTES) {
        if tx.feed(Message::Binary(Bytes::copy_from_slice(chunk))).await.is_err() {
            return false;
        }
    }
    true
}

/// How long a socket waits for a catch-up state to be made, in seconds (parsing the 4 MiB
/// ring takes well under one; a stuck maker must not hold the socket forever).
const CATCH_UP_WAIT_S: u64 = 30;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_messages_parse_and_bound() {
        let ok = [
            (r#"{"type":"resize","cols":80,"rows":24}"#, Control::Resize(80, 24)),
            (r#"{"type":"ack","bytes":65536}"#, Control::Ack(65536)),
            (r#"{"type":"ack","bytes":4294967296}"#, Control::Ack(1 << 32)),
            (r#"{"type":"nope"}"#, Control::Ignored),
            (r#"{"type":"paste_v2","text":"x","n":[1]}"#, Control::Ignored),
        ];
        for (s, want) in ok {
            assert_eq!(parse_control(s), Ok(want), "{s}");
        }
        let bad = [
            r#"{"type":"resize","cols":0,"rows":24}"#,
            r#"{"type":"resize","cols":80,"rows":1001}"#,
            r#"{"type":"resize","cols":80}"#,
            r#"{"type":"resize","cols":80,"rows":24,"x":1}"#,
            r#"{"type":"ack","bytes":0}"#,
            r#"{"type":"ack","bytes":4294967297}"#,
            r#"{"type":"ack","bytes":-1}"#,
            r#"{"cols":1,"rows":1}"#,
            r#"{"type":5}"#,
            r#"["resize",1,1]"#,
            "not json",
        ];
        for s in bad {
            assert!(parse_control(s).is_err(), "{s}");
        }
    }
}
