//! Drives one yamux session (yamux 0.14, libp2p's) over any tokio byte stream: one task owns
//! the connection and polls it; outbound streams are asked for through a channel.
//!
//! yamux only makes progress while `poll_next_inbound` is polled, so the driver polls it all
//! the time, also on the client side (which never accepts inbound streams: they are dropped).

use std::future::poll_fn;
use std::task::Poll;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{mpsc, oneshot};
use tokio_util::compat::{Compat, FuturesAsyncReadCompatExt, TokioAsyncReadCompatExt};

/// A yamux stream as a tokio `AsyncRead + AsyncWrite`.
pub type MuxStream = Compat<yamux::Stream>;

/// One request for an outbound stream.
pub type OpenRequest = oneshot::Sender<Result<MuxStream, yamux::ConnectionError>>;

/// The yamux configuration both sides use (defaults: 256 KiB window per stream, 512
/// streams).
pub fn config() -> yamux::Config {
    yamux::Config::default()
}

/// Runs the session on `io` in `mode` until it ends: `Ok` when the peer closed it, `Err` when
/// it failed. Each inbound stream goes to `inbound`; each request on `opens` gets a new
/// outbound stream (or the error).
pub async fn drive<T>(
    io: T,
    mode: yamux::Mode,
    mut opens: mpsc::Receiver<OpenRequest>,
    mut inbound: impl FnMut(MuxStream),
) -> Result<(), yamux::ConnectionError>
where
    T: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let mut conn = yamux::Connection::new(io.compat(), config(), mode);
    let mut pending: Option<OpenRequest> = None;
    let mut opens_open = true;
    poll_fn(|cx| loop {
        if pending.is_none() && opens_open {
            match opens.poll_recv(cx) {
                Poll::Ready(Some(tx)) => pending = Some(tx),
                Poll::Ready(None) => opens_open = false,
                Poll::Pending => {}
            }
        }
        if let Some(tx) = pending.take() {
            match conn.poll_new_outbound(cx) {
                Poll::Ready(r) => {
                    let _ = tx.send(r.map(|s| s.compat()));
                    continue;
                }
                Poll::Pending => pending = Some(tx),
            }
        }
        match conn.poll_next_inbound(cx) {
            Poll::Ready(Some(Ok(s))) => inbound(s.compat()),
            Poll::Ready(Some(Err(e))) => return Poll::Ready(Err(e)),
            Poll::Ready(None) => return Poll::Ready(Ok(())),
            Poll::Pending => return Poll::Pending,
        }
    })
    .await
}
