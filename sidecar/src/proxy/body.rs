//! Response bodies: the upstream's body under the socket idle bound, and the instrumented
//! document body (content codings undone, encoding sniffed, shim injected), streamed by a task
//! that reads from the upstream only as fast as the browser reads.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures_util::TryStreamExt;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyDataStream, BodyExt, Full};
use hyper::body::{Body, Frame, Incoming, SizeHint};
use tokio::io::AsyncReadExt;
use tokio::sync::mpsc;
use tokio::time::{Instant, Sleep};
use tokio_util::io::StreamReader;

use super::charset::{sniff, Sniffed, PRESCAN_WAIT_MS};
use super::decode::{decoder, Coding};
use super::html::{Instrumenter, Markup};
use super::ActiveGuard;

/// Any error a body may end with (it aborts the response).
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;
/// Every response body the proxy sends.
pub type ProxyBody = BoxBody<Bytes, BoxError>;

/// How much of a decoded body is read (and rewritten) at a time, in bytes.
const READ_CHUNK_BYTES: usize = 16 * 1024;
/// Rewritten chunks waiting for the browser, at most: with [`READ_CHUNK_BYTES`], what bounds
/// the memory one instrumented body holds beyond the codec's window.
const CHANNEL_CHUNKS: usize = 8;

/// A body of exactly these bytes.
pub fn full(s: impl Into<Bytes>) -> ProxyBody {
    Full::new(s.into()).map_err(|never| match never {}).boxed()
}

/// A body with no bytes.
pub fn empty() -> ProxyBody {
    full(Bytes::new())
}

/// How a document body is instrumented.
pub struct Plan {
    /// Its content codings, in the order they were applied (undone before rewriting).
    pub codings: Vec<Coding>,
    /// HTML or XHTML, and the `Content-Type` charset.
    pub markup: Markup,
    /// The `<script>` element to inject.
    pub shim: String,
    /// How `<meta http-equiv=content-security-policy>` policies are rewritten (`None`: left
    /// exactly as they are).
    pub meta_csp: Option<std::sync::Arc<super::csp::CspContext>>,
}

/// Streams `body` rewritten as `plan` says, from its own task. The first bytes wait until
/// their encoding is known ([`sniff`]: at most 1024 bytes or [`PRESCAN_WAIT_MS`]); a body that
/// is not ASCII-compatible then passes through decoded but otherwise untouched. An upstream
/// error, a corrupt coding or a rewriter error ends the body with an error, which aborts the
/// response (its head is already sent).
pub fn instrumented(body: IdleBody, plan: Plan, guard: ActiveGuard) -> ProxyBody {
    let (tx, rx) = mpsc::channel::<Result<Bytes, BoxError>>(CHANNEL_CHUNKS);
    tokio::spawn(async move {
        if let Err(e) = rewrite(body, plan, &tx).await {
            let _ = tx.send(Err(e)).await;
        }
    });
    ChannelBody { rx, _guard: guard }.boxed()
}

/// Returns when the body has been sent, or as soon as the browser is gone.
async fn rewrite(body: IdleBody, plan: Plan, tx: &mpsc::Sender<Result<Bytes, BoxError>>) -> Result<(), BoxError> {
    let raw = StreamReader::new(BodyDataStream::new(body).map_err(std::io::Error::other));
    let mut reader = decoder(raw, &plan.codings).await?;
    let mut buf = vec![0u8; READ_CHUNK_BYTES];
    let mut pending = Vec::new();
    let mut ended = false;
    let deadline = Instant::now() + Duration::from_millis(PRESCAN_WAIT_MS);
    let sniffed = loop {
        let complete = ended || Instant::now() >= deadline;
        match sniff(&pending, plan.markup.charset, plan.markup.xhtml, complete) {
            Sniffed::NeedMore => {}
            known => break known,
        }
        if let Ok(n) = tokio::time::timeout_at(deadline, reader.read(&mut buf)).await {
            match n? {
                0 => ended = true,
                n => pending.extend_from_slice(&buf[..n]),
            }
        }
    };
    let mut rewriter = sniffed.ascii_compatible().then(|| Instrumenter::new(plan.shim, plan.markup, plan.meta_csp));
    loop {
        let out = match rewriter.as_mut() {
            Some(r) => r.write(&pending)?,
            None => std::mem::take(&mut pending),
        };
        if !out.is_empty() && tx.send(Ok(Bytes::from(out))).await.is_err() {
            return Ok(());
        }
        if ended {
            break;
        }
        let n = reader.read(&mut buf).await?;
        ended = n == 0;
        pending.clear();
        pending.extend_from_slice(&buf[..n]);
    }
    if let Some(r) = rewriter {
        let out = r.end()?;
        if !out.is_empty() {
            let _ = tx.send(Ok(Bytes::from(out))).await;
        }
    }
    Ok(())
}

/// A body fed by a task.
struct ChannelBody {
    rx: mpsc::Receiver<Result<Bytes, BoxError>>,
    _guard: ActiveGuard,
}

impl Body for ChannelBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        self.get_mut().rx.poll_recv(cx).map(|o| o.map(|r| r.map(Frame::data)))
    }
}

/// The upstream's body with the socket idle bound: no frame for `idle` → an error, which
/// aborts the response (its head is already sent). Holds the grant's guard if given.
pub struct IdleBody {
    inner: Incoming,
    idle: Duration,
    sleep: Pin<Box<Sleep>>,
    guard: Option<ActiveGuard>,
}

impl IdleBody {
    /// `inner` under the bound `idle` (per frame; the first counts from now).
    pub fn new(inner: Incoming, idle: Duration) -> Self {
        IdleBody { inner, idle, sleep: Box::pin(tokio::time::sleep(idle)), guard: None }
    }

    /// Holds `g` (the grant stays in use) until the body is dropped.
    pub fn with_guard(mut self, g: ActiveGuard) -> Self {
        self.guard = Some(g);
        self
    }
}

impl Body for IdleBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = self.get_mut();
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(r) => {
                this.sleep.as_mut().reset(Instant::now() + this.idle);
                Poll::Ready(r.map(|r| r.map_err(|e| Box::new(e) as BoxError)))
            }
            Poll::Pending => match this.sleep.as_mut().poll(cx) {
                Poll::Ready(()) => Poll::Ready(Some(Err("upstream sent nothing within the idle bound".into()))),
                Poll::Pending => Poll::Pending,
            },
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
