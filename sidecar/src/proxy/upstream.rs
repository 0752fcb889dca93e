//! Talking to a grant's upstream: dialling by the host the user named (never an address
//! [`crate::address::is_blocked_ip`] refuses, whatever the resolver answers) and an HTTP/1.1
//! keep-alive pool per grant, so a page's hundreds of module requests do not each pay for a
//! new upstream connection.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Empty};
use hyper::body::{Body, Incoming};
use hyper::client::conn::http1::SendRequest;
use hyper::{Method, Request, Response};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use tokio::time::Instant;

use super::quickack::QuickAck;
use super::target::is_localhost_name;
use super::{Route, Upstream, UpstreamStream};
use crate::address::is_blocked_ip;

/// A request body on its way upstream.
pub type UpBody = BoxBody<Bytes, hyper::Error>;

/// At most this many connections are kept per grant (a browser opens six per origin).
pub const POOL_MAX_CONNS: usize = 8;
/// A pooled connection not handed a request for this long is closed, in milliseconds.
pub const POOL_IDLE_MS: u64 = 30_000;

/// Why no response came from the upstream.
#[derive(Debug)]
pub enum UpstreamError {
    /// Occurs when no connection could be made within the idle bound (refused, unreachable,
    /// no answer), or the upstream dropped the connection without answering.
    Connect(String),
    /// Occurs when every address the upstream's name resolves to is link-local or cloud
    /// metadata: nothing was dialled. Carries the first such address.
    Blocked(IpAddr),
    /// Occurs when the connection was made but no response head came within the idle bound.
    Timeout,
}

impl std::fmt::Display for UpstreamError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UpstreamError::Connect(m) => write!(f, "{m}"),
            UpstreamError::Blocked(ip) => write!(f, "resolves to {ip}, a link-local or cloud-metadata address"),
            UpstreamError::Timeout => write!(f, "no response head within the idle bound"),
        }
    }
}

/// One grant's kept-alive upstream connections, most recently used last: each with the time
/// it was last handed a request. A connection whose response is still being read stays here,
/// not ready; it becomes ready (hyper's `is_ready`) once that response has been read to the
/// end, with no task of ours in between. Dropping a sender closes its connection once its
/// response in flight is done.
#[derive(Default)]
pub struct Pool {
    conns: Mutex<Vec<(SendRequest<UpBody>, Instant)>>,
    closed: AtomicBool,
}

impl Pool {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(SendRequest<UpBody>, Instant)>> {
        self.conns.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Closes every pooled connection (those in use once their response is done), and pools
    /// none from now on. Idempotent.
    pub fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        self.lock().clear();
    }

    /// Drops the connections the upstream closed and those unused for [`POOL_IDLE_MS`].
    pub fn prune(&self) {
        let bound = Duration::from_millis(POOL_IDLE_MS);
        self.lock().retain(|(s, since)| !s.is_closed() && since.elapsed() < bound);
    }

    /// The most recently used connection that is ready for a request, taken out of the pool.
    fn take(&self) -> Option<SendRequest<UpBody>> {
        self.prune();
        let mut conns = self.lock();
        let i = conns.iter().rposition(|(s, _)| s.is_ready())?;
        Some(conns.remove(i).0)
    }

    /// Keeps `s`, just handed a request, for a later one; the oldest connection makes room.
    fn keep(&self, s: SendRequest<UpBody>) {
        if self.closed.load(Ordering::SeqCst) {
            return;
        }
        let mut conns = self.lock();
        if conns.len() >= POOL_MAX_CONNS {
            conns.remove(0);
        }
        conns.push((s, Instant::now()));
    }
}

/// Sends `req` to `upstream` and returns its response head, each step bounded by `idle`.
/// A new connection is made with `route`'s dialer when there is one (a remote's network),
/// else on this machine ([`dial`]); a dialer's error is [`UpstreamError::Connect`].
///
/// With `pooled`, the request goes on a ready pooled connection when there is one, and the
/// connection is kept in `pool` for a later request (ready again once this response has been
/// read to the end); a pooled connection the upstream had already closed is replaced by a new
/// one when the request can be sent again (it never left, or it has no body and a method that
/// may be repeated). Without `pooled` (a protocol upgrade), a new connection serves this
/// request alone.
pub async fn send(
    pool: &Pool,
    upstream: &Upstream,
    route: Option<&Route>,
    req: Request<UpBody>,
    idle: Duration,
    pooled: bool,
) -> Result<Response<Incoming>, UpstreamError> {
    let replay = replayable(&req);
    if pooled {
        if let Some(mut s) = pool.take() {
            match tokio::time::timeout(idle, s.try_send_request(req)).await {
                Ok(Ok(resp)) => {
                    pool.keep(s);
                    return Ok(resp);
                }
                Ok(Err(mut e)) => match e.take_message().or_else(|| replay.as_ref().map(rebuild)) {
                    Some(again) => return fresh(pool, upstream, route, again, idle, pooled).await,
                    None => return Err(UpstreamError::Connect(e.into_error().to_string())),
                },
                Err(_) => return Err(UpstreamError::Timeout),
            }
        }
    }
    fresh(pool, upstream, route, req, idle, pooled).await
}

/// Sends `req` on a new connection.
async fn fresh(
    pool: &Pool,
    upstream: &Upstream,
    route: Option<&Route>,
    req: Request<UpBody>,
    idle: Duration,
    pooled: bool,
) -> Result<Response<Incoming>, UpstreamError> {
    let connect = async {
        match route {
            None => {
                let stream = dial(upstream).await?;
                let _ = stream.set_nodelay(true);
                Ok(Box::new(QuickAck(stream)) as Box<dyn UpstreamStream>)
            }
            Some(r) => (r.dial)(upstream.dial_host.clone(), upstream.port).await.map_err(UpstreamError::Connect),
        }
    };
    let stream = match tokio::time::timeout(idle, connect).await {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => return Err(e),
        Err(_) => return Err(UpstreamError::Connect(format!("no connection within {idle:?}"))),
    };
    let (mut s, conn) = hyper::client::conn::http1::handshake::<_, UpBody>(TokioIo::new(stream))
        .await
        .map_err(|e| UpstreamError::Connect(e.to_string()))?;
    tokio::spawn(async move {
        let _ = conn.with_upgrades().await;
    });
    match tokio::time::timeout(idle, s.send_request(req)).await {
        Ok(Ok(resp)) => {
            if pooled {
                pool.keep(s);
            }
            Ok(resp)
        }
        Ok(Err(e)) => Err(UpstreamError::Connect(e.to_string())),
        Err(_) => Err(UpstreamError::Timeout),
    }
}

/// What is needed to send `req` again: its head, when it has no body and a method that is safe
/// to repeat (RFC 9110 §9.2.2: idempotent).
fn replayable(req: &Request<UpBody>) -> Option<Request<()>> {
    let idempotent = matches!(*req.method(), Method::GET | Method::HEAD | Method::OPTIONS | Method::TRACE);
    if !idempotent || !req.body().is_end_stream() {
        return None;
    }
    let mut head = Request::new(());
    *head.method_mut() = req.method().clone();
    *head.uri_mut() = req.uri().clone();
    *head.version_mut() = req.version();
    *head.headers_mut() = req.headers().clone();
    Some(head)
}

fn rebuild(head: &Request<()>) -> Request<UpBody> {
    let mut r = Request::new(Empty::<Bytes>::new().map_err(|never| match never {}).boxed());
    *r.method_mut() = head.method().clone();
    *r.uri_mut() = head.uri().clone();
    *r.version_mut() = head.version();
    *r.headers_mut() = head.headers().clone();
    r
}

/// Connects to the upstream by the host the user named (DESIGN §8). A `localhost` name is
/// dialled at 127.0.0.1, then ::1, as browsers do without asking the resolver (some dev
/// servers bind `::1` only, and `/etc/hosts` often maps `localhost` to 127.0.0.1 alone);
/// any other name is resolved and every address that [`is_blocked_ip`] allows is tried in
/// turn. Returns the first connection made, or why there is none.
async fn dial(upstream: &Upstream) -> Result<TcpStream, UpstreamError> {
    let port = upstream.port;
    let addrs: Vec<SocketAddr> = if is_localhost_name(&upstream.dial_host) {
        vec![(Ipv4Addr::LOCALHOST, port).into(), (Ipv6Addr::LOCALHOST, port).into()]
    } else {
        tokio::net::lookup_host((upstream.dial_host.as_str(), port))
            .await
            .map_err(|e| UpstreamError::Connect(format!("{}: {e}", upstream.dial_host)))?
            .collect()
    };
    let (blocked, allowed): (Vec<SocketAddr>, Vec<SocketAddr>) = addrs.into_iter().partition(|a| is_blocked_ip(a.ip()));
    if allowed.is_empty() {
        return Err(match blocked.first() {
            Some(a) => UpstreamError::Blocked(a.ip()),
            None => UpstreamError::Connect(format!("{} resolves to no address", upstream.dial_host)),
        });
    }
    let mut errors = Vec::new();
    for a in allowed {
        match TcpStream::connect(a).await {
            Ok(s) => return Ok(s),
            Err(e) => errors.push(format!("{a}: {e}")),
        }
    }
    Err(UpstreamError::Connect(errors.join("; ")))
}
