//! The API's connections: hyper answers a request it cannot parse by itself (400, 414, or 431
//! for header fields over its bounds: more than 100 of them, or a head over its buffer) with
//! an empty body, before any handler runs. [`Listener`] wraps each connection so that answer
//! goes out in the JSON error shape of protocol §3 instead (issue 22 item 2c: 1,000 request
//! headers got a bare 431).
//!
//! hyper gives no hook for it (`Server::on_error` writes the head itself), so the rewrite sits
//! on the bytes: a write that is exactly such an automatic head (status 400/414/431,
//! `connection: close`, `content-length: 0`, no `content-type`) is replaced. The API's own
//! answers never match (every error it sends has a JSON body).

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};

/// The API's listener: a [`TcpListener`] whose connections are [`JsonParseErrors`].
pub struct Listener(pub TcpListener);

impl axum::serve::Listener for Listener {
    type Io = JsonParseErrors<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            match self.0.accept().await {
                Ok((s, addr)) => return (JsonParseErrors::new(s), addr),
                // A connection reset before it was accepted, or out of file descriptors:
                // log it, and back off a little so a persistent error does not spin.
                Err(e) => {
                    tracing::debug!("accept: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.0.local_addr()
    }
}

/// The remote daemon's listener (protocol §11.2): a Unix socket whose connections are
/// [`JsonParseErrors`] too. Served without a [`Peer`] (there is no TCP address to tell by).
pub struct UnixListener(pub tokio::net::UnixListener);

impl axum::serve::Listener for UnixListener {
    type Io = JsonParseErrors<tokio::net::UnixStream>;
    type Addr = tokio::net::unix::SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            match self.0.accept().await {
                Ok((s, addr)) => return (JsonParseErrors::new(s), addr),
                Err(e) => {
                    tracing::debug!("accept: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.0.local_addr()
    }
}

/// The client's address of a connection (`ConnectInfo<Peer>` in a handler).
#[derive(Debug, Clone, Copy)]
pub struct Peer(pub SocketAddr);

impl axum::extract::connect_info::Connected<axum::serve::IncomingStream<'_, Listener>> for Peer {
    fn connect_info(stream: axum::serve::IncomingStream<'_, Listener>) -> Peer {
        Peer(*stream.remote_addr())
    }
}

/// A connection whose automatic parse-error answers are rewritten (module doc). Reads pass
/// through untouched.
pub struct JsonParseErrors<S> {
    inner: S,
    /// A replacement being written: its bytes, how many are written, and the length of the
    /// caller's buffer it stands for (reported as written once it is all out).
    pending: Option<(Vec<u8>, usize, usize)>,
}

impl<S> JsonParseErrors<S> {
    /// Wraps `inner`.
    pub fn new(inner: S) -> Self {
        JsonParseErrors { inner, pending: None }
    }
}

/// The JSON answer standing for `head`, if `head` is exactly one of hyper's automatic
/// parse-error heads.
fn replacement(head: &[u8]) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(head).ok()?.strip_suffix("\r\n\r\n")?;
    let mut lines = text.split("\r\n");
    let status = lines.next()?;
    let (code, message) = match status {
        "HTTP/1.1 431 Request Header Fields Too Large" => (
            "headers_too_large",
            "the request's header fields are over the bounds (at most 100 fields, about 400 KiB in all)",
        ),
        "HTTP/1.1 414 URI Too Long" => ("uri_too_long", "the request target is too long"),
        "HTTP/1.1 400 Bad Request" => ("bad_request", "the request is not valid HTTP/1.1"),
        _ => return None,
    };
    let mut date = None;
    let (mut close, mut empty) = (false, false);
    for line in lines {
        let (name, value) = line.split_once(": ")?;
        match name.to_ascii_lowercase().as_str() {
            "connection" if value == "close" => close = true,
            "content-length" if value == "0" => empty = true,
            "date" => date = Some(value),
            _ => return None,
        }
    }
    if !(close && empty) {
        return None;
    }
    let body = serde_json::json!({"error": {"code": code, "message": message}}).to_string();
    let date = date.map(|d| format!("date: {d}\r\n")).unwrap_or_default();
    Some(
        format!(
            "{status}\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: {}\r\n{date}\r\n{body}",
            body.len()
        )
        .into_bytes(),
    )
}

impl<S: AsyncWrite + Unpin> JsonParseErrors<S> {
    /// Writes what is left of a replacement; `Ready(Ok(Some(n)))` once it is all out (`n`:
    /// the caller's bytes it stands for), `Ready(Ok(None))` when there is none.
    fn drain(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<Option<usize>>> {
        while let Some((bytes, written, _)) = self.pending.as_mut() {
            if *written == bytes.len() {
                let (_, _, stands_for) = self.pending.take().unwrap_or_default();
                return Poll::Ready(Ok(Some(stands_for)));
            }
            let n = ready!(Pin::new(&mut self.inner).poll_write(cx, &bytes[*written..]))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            *written += n;
        }
        Poll::Ready(Ok(None))
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for JsonParseErrors<S> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for JsonParseErrors<S> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        // A caller that got Pending writes the same buffer again: the replacement goes on.
        if self.pending.is_none() {
            match replacement(buf) {
                Some(bytes) => self.pending = Some((bytes, 0, buf.len())),
                None => return Pin::new(&mut self.inner).poll_write(cx, buf),
            }
        }
        match ready!(self.drain(cx))? {
            Some(n) => Poll::Ready(Ok(n)),
            None => Pin::new(&mut self.inner).poll_write(cx, buf),
        }
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.drain(cx))?;
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.drain(cx))?;
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    // Not vectored, so hyper hands each head over as one contiguous buffer.
    fn is_write_vectored(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_hypers_automatic_heads_are_replaced() {
        let auto = b"HTTP/1.1 431 Request Header Fields Too Large\r\nconnection: close\r\ncontent-length: 0\r\ndate: Sun, 06 Dec 2026 04:02:08 GMT\r\n\r\n";
        let out = String::from_utf8(replacement(auto).unwrap()).unwrap();
        let (head, body) = out.split_once("\r\n\r\n").unwrap();
        assert!(head.starts_with("HTTP/1.1 431 ") && head.contains("content-type: application/json"), "{head}");
        assert!(head.contains(&format!("content-length: {}", body.len())), "{head}");
        let v: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(v["error"]["code"], "headers_too_large");
        let bad = b"HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\ndate: x\r\n\r\n";
        assert!(replacement(bad).is_some());
        for theirs in [
            &b"HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"[..],
            b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: 0\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 0\r\n\r\n",
            b"HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n{}",
        ] {
            assert!(replacement(theirs).is_none(), "{}", String::from_utf8_lossy(theirs));
        }
    }
}
