//! A small HTTP/1.1 client for the control plane: one request per connection, to the
//! loopback sidecar named by `PORTHOLE_URL`, with the pane token.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Request;

/// Where and how to reach the sidecar.
pub struct Endpoint {
    /// `127.0.0.1:PORT` or `localhost:PORT`.
    pub authority: String,
    /// The pane token (never printed).
    pub token: String,
}

/// What can go wrong before an answer arrives.
#[derive(Debug)]
pub enum ClientError {
    /// Occurs when `PORTHOLE_URL` or `PORTHOLE_TOKEN` is missing or empty (named): not inside
    /// a Porthole pane, or an MCP client that started `ph mcp` with a bare environment.
    NotInside(Vec<&'static str>),
    /// Occurs when `PORTHOLE_URL` is not a loopback http URL (the token is never sent elsewhere).
    BadUrl(String),
    /// Occurs when the sidecar cannot be reached or the exchange fails.
    Io(String),
    /// Occurs when no answer arrives in time.
    Timeout,
}

impl std::fmt::Display for ClientError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClientError::NotInside(missing) => write!(
                f,
                "not inside a Porthole pane: {} {} not set; run ph in a Porthole terminal (an MCP client must pass \
                 PORTHOLE_URL and PORTHOLE_TOKEN to `ph mcp` in its env)",
                missing.join(" and "),
                if missing.len() > 1 { "are" } else { "is" }
            ),
            ClientError::BadUrl(u) => {
                write!(f, "PORTHOLE_URL {u:?} is not http://127.0.0.1:PORT/; refusing to send the token there")
            }
            ClientError::Io(m) => write!(f, "cannot reach Porthole: {m}"),
            ClientError::Timeout => write!(f, "Porthole did not answer in time"),
        }
    }
}

impl Endpoint {
    /// Reads `PORTHOLE_URL` and `PORTHOLE_TOKEN`.
    pub fn from_env() -> Result<Endpoint, ClientError> {
        let url = std::env::var("PORTHOLE_URL").ok().filter(|v| !v.is_empty());
        let token = std::env::var("PORTHOLE_TOKEN").ok().filter(|v| !v.is_empty());
        let (Some(url), Some(token)) = (&url, &token) else {
            let missing = [("PORTHOLE_URL", url.is_none()), ("PORTHOLE_TOKEN", token.is_none())];
            return Err(ClientError::NotInside(missing.iter().filter(|m| m.1).map(|m| m.0).collect()));
        };
        let (url, token) = (url.clone(), token.clone());
        let authority = parse_loopback_url(&url).ok_or_else(|| ClientError::BadUrl(url.clone()))?;
        Ok(Endpoint { authority, token })
    }
}

/// `http://127.0.0.1:PORT/` (or `localhost`) → `127.0.0.1:PORT`; anything else → `None`.
pub fn parse_loopback_url(url: &str) -> Option<String> {
    let rest = url.strip_prefix("http://")?;
    let authority = rest.split('/').next()?;
    let (host, port) = authority.rsplit_once(':')?;
    let port: u16 = port.parse().ok().filter(|p| *p > 0)?;
    match host {
        "127.0.0.1" | "localhost" => Some(format!("{host}:{port}")),
        _ => None,
    }
}

/// One answer: HTTP status and the JSON body (`Null` for an empty one).
pub struct Answer {
    /// HTTP status code.
    pub status: u16,
    /// The parsed body.
    pub body: serde_json::Value,
}

/// Sends `method path` with an optional JSON body; waits at most `timeout` for the answer.
pub fn call(
    ep: &Endpoint,
    method: &str,
    path: &str,
    body: Option<&serde_json::Value>,
    timeout: Duration,
) -> Result<Answer, ClientError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| ClientError::Io(format!("runtime: {e}")))?;
    rt.block_on(async { tokio::time::timeout(timeout, exchange(ep, method, path, body)).await })
        .map_err(|_| ClientError::Timeout)?
}

async fn exchange(
    ep: &Endpoint,
    method: &str,
    path: &str,
    body: Option<&serde_json::Value>,
) -> Result<Answer, ClientError> {
    let stream = tokio::net::TcpStream::connect(&ep.authority)
        .await
        .map_err(|e| ClientError::Io(format!("connect {}: {e}", ep.authority)))?;
    let io = hyper_util::rt::TokioIo::new(stream);
    let (mut sender, conn) =
        hyper::client::conn::http1::handshake(io).await.map_err(|e| ClientError::Io(e.to_string()))?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    let payload = body.map(|b| b.to_string()).unwrap_or_default();
    let mut req = Request::builder()
        .method(method)
        .uri(path)
        .header("host", &ep.authority)
        .header("authorization", format!("Bearer {}", ep.token))
        // Which process asks: the sidecar checks it owns this connection and answers as the
        // pane it runs in (protocol §9.1).
        .header("x-porthole-pid", std::process::id().to_string());
    if body.is_some() {
        req = req.header("content-type", "application/json");
    }
    let req = req.body(Full::new(Bytes::from(payload))).map_err(|e| ClientError::Io(e.to_string()))?;
    let resp = sender.send_request(req).await.map_err(|e| ClientError::Io(e.to_string()))?;
    let status = resp.status().as_u16();
    let bytes = resp.into_body().collect().await.map_err(|e| ClientError::Io(e.to_string()))?.to_bytes();
    let body = if bytes.is_empty() {
        serde_json::Value::Null
    } else {
        serde_json::from_slice(&bytes).map_err(|e| ClientError::Io(format!("the answer is not JSON: {e}")))?
    };
    Ok(Answer { status, body })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_http_urls_get_the_token() {
        assert_eq!(parse_loopback_url("http://127.0.0.1:4000/").as_deref(), Some("127.0.0.1:4000"));
        assert_eq!(parse_loopback_url("http://localhost:4000").as_deref(), Some("localhost:4000"));
        for bad in
            ["https://127.0.0.1:4000/", "http://evil.com:4000/", "http://127.0.0.1/", "http://127.0.0.1:0/", "ftp://x"]
        {
            assert!(parse_loopback_url(bad).is_none(), "{bad}");
        }
    }
}
