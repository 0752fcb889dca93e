//! Upstream sockets that acknowledge at once what they receive. An upstream that writes a
//! response in two small writes (head, then body) with Nagle's algorithm on (Python's
//! `http.server`, wsgiref and the dev servers built on them) holds the second write until the
//! first is acknowledged; on a kept-alive connection Linux delays that ACK (up to 40 ms, its
//! "pingpong" heuristic, because the proxy sends nothing back), so every pooled request would
//! stall that long. A new connection does not stall: it starts in quick-ack mode. Linux's
//! `TCP_QUICKACK` does not stick, so it is set again before every read. Elsewhere this is a
//! plain `TcpStream`.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

/// A `TcpStream` that asks for quick ACKs before each read (see the module doc).
pub struct QuickAck(pub TcpStream);

#[cfg(target_os = "linux")]
fn quickack(s: &TcpStream) {
    // Best effort: a failure only costs the delayed ACK.
    let _ = socket2::SockRef::from(s).set_tcp_quickack(true);
}

#[cfg(not(target_os = "linux"))]
fn quickack(_: &TcpStream) {}

impl AsyncRead for QuickAck {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        quickack(&this.0);
        Pin::new(&mut this.0).poll_read(cx, buf)
    }
}

impl AsyncWrite for QuickAck {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().0).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().0).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.0.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_shutdown(cx)
    }
}
