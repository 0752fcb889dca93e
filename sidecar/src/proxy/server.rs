//! One grant's listener: the Host gate, forwarding to the upstream (one upstream connection
//! per request), body streaming with the idle bound, HTML instrumentation, WebSocket tunnels
//! and the error pages.

use std::convert::Infallible;
use std::future::Future;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper::header::{self, HeaderValue};
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::time::{Instant, Sleep};

use super::html::{has_utf16_bom, instrumentable, shim_script, Instrumenter, Markup};
use super::rules::{frame_ancestors, is_upgrade, rewrite_request, rewrite_response};
use super::target::is_localhost_name;
use super::{ActiveGuard, Grant, Upstream, UPSTREAM_IDLE_MS};

type BoxError = Box<dyn std::error::Error + Send + Sync>;
/// Every response body the proxy sends.
type ProxyBody = BoxBody<Bytes, BoxError>;

/// Accepts connections until the grant closes; then the listener is dropped (the port
/// refuses connections) and every connection task ends.
pub(crate) async fn serve(listener: TcpListener, grant: Arc<Grant>) {
    let mut closed = grant.closed.subscribe();
    loop {
        tokio::select! {
            r = listener.accept() => match r {
                Ok((stream, _)) => {
                    tokio::spawn(connection(stream, grant.clone()));
                }
                Err(e) => {
                    tracing::warn!(grant = %grant.id, "accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
            _ = until_closed(&mut closed) => break,
        }
    }
}

async fn connection(stream: TcpStream, grant: Arc<Grant>) {
    let _ = stream.set_nodelay(true);
    let g = grant.clone();
    let svc = service_fn(move |req| handle(req, g.clone()));
    let conn = hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), svc).with_upgrades();
    let mut closed = grant.closed.subscribe();
    tokio::select! {
        r = conn => if let Err(e) = r { tracing::debug!(grant = %grant.id, "connection ended: {e}") },
        _ = until_closed(&mut closed) => {}
    }
}

/// Resolves once the grant is closed (or its sender is gone).
async fn until_closed(rx: &mut tokio::sync::watch::Receiver<bool>) {
    let closed = rx.wait_for(|c| *c).await.is_ok();
    let _ = closed;
}

/// Returns true if and only if `host` is `127.0.0.1:PORT` or `localhost:PORT`.
fn host_ok(host: Option<&HeaderValue>, port: u16) -> bool {
    let Some(h) = host.and_then(|h| h.to_str().ok()) else { return false };
    let Some((name, p)) = h.rsplit_once(':') else { return false };
    p == port.to_string() && (name == "127.0.0.1" || name.eq_ignore_ascii_case("localhost"))
}

async fn handle(mut req: Request<Incoming>, grant: Arc<Grant>) -> Result<Response<ProxyBody>, Infallible> {
    if !host_ok(req.headers().get(header::HOST), grant.port) {
        // No guard, no touch: a stranger cannot keep the grant alive.
        let mut r = Response::new(full(format!(
            "misdirected request: this proxy answers only to 127.0.0.1:{0} and localhost:{0}\n",
            grant.port
        )));
        *r.status_mut() = StatusCode::MISDIRECTED_REQUEST;
        r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
        return Ok(r);
    }
    // A caller whose Origin names another site is served but never keeps the grant alive
    // (an absent or opaque `null` Origin does).
    let foreign = req
        .headers()
        .get(header::ORIGIN)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|o| o != "null" && !grant.origins.is_own(o));
    let guard = if foreign { ActiveGuard::passive() } else { ActiveGuard::new(&grant) };
    let chain = grant.chain.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let idle = grant.config.upstream_idle;
    let upstream = &grant.upstream;
    let upgrade = is_upgrade(req.headers());
    let client_upgrade = if upgrade { Some(hyper::upgrade::on(&mut req)) } else { None };
    let (mut parts, body) = req.into_parts();
    let head_request = parts.method == Method::HEAD;
    rewrite_request(&mut parts.headers, &grant.origins, &upstream.origin, &upstream.host_header, upgrade);
    let path = parts.uri.path_and_query().map(|p| p.as_str().to_string()).unwrap_or_else(|| "/".into());
    parts.uri = match path.parse() {
        Ok(u) => u,
        Err(_) => return Ok(error_page(ErrorKind::Connect, upstream, chain.as_deref())),
    };
    parts.version = hyper::Version::HTTP_11;
    let up_req = Request::from_parts(parts, body);

    // A connection that is not established within the idle bound is a connect failure
    // ("couldn't connect"): "didn't respond" needs an accepted connection.
    let stream = match tokio::time::timeout(idle, dial(upstream)).await {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => {
            tracing::debug!(grant = %grant.id, "connect {}: {e}", upstream.origin);
            return Ok(error_page(ErrorKind::Connect, upstream, chain.as_deref()));
        }
        Err(_) => {
            tracing::debug!(grant = %grant.id, "connect {}: no connection within {idle:?}", upstream.origin);
            return Ok(error_page(ErrorKind::Connect, upstream, chain.as_deref()));
        }
    };
    let _ = stream.set_nodelay(true);
    let (mut sender, conn) = match hyper::client::conn::http1::handshake::<_, Incoming>(TokioIo::new(stream)).await {
        Ok(x) => x,
        Err(_) => return Ok(error_page(ErrorKind::Connect, upstream, chain.as_deref())),
    };
    tokio::spawn(async move {
        let _ = conn.with_upgrades().await;
    });
    let mut resp = match tokio::time::timeout(idle, sender.send_request(up_req)).await {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => {
            tracing::debug!(grant = %grant.id, "upstream {}: {e}", upstream.origin);
            return Ok(error_page(ErrorKind::Connect, upstream, chain.as_deref()));
        }
        Err(_) => return Ok(error_page(ErrorKind::Timeout, upstream, chain.as_deref())),
    };

    if let (Some(client_upgrade), StatusCode::SWITCHING_PROTOCOLS) = (client_upgrade, resp.status()) {
        let upstream_upgrade = hyper::upgrade::on(&mut resp);
        let (mut parts, _) = resp.into_parts();
        rewrite_response(&mut parts.headers, &grant.origins, &upstream.origin, chain.as_deref(), true);
        let mut closed = grant.closed.subscribe();
        tokio::spawn(async move {
            let _guard = guard;
            let (Ok(client), Ok(up)) = (client_upgrade.await, upstream_upgrade.await) else { return };
            let (mut client, mut up) = (TokioIo::new(client), TokioIo::new(up));
            tokio::select! {
                _ = tokio::io::copy_bidirectional(&mut client, &mut up) => {}
                _ = until_closed(&mut closed) => {}
            }
        });
        return Ok(Response::from_parts(parts, empty()));
    }

    let (mut parts, body) = resp.into_parts();
    let plan = rewrite_response(&mut parts.headers, &grant.origins, &upstream.origin, chain.as_deref(), false);
    let no_body = head_request || parts.status == StatusCode::NO_CONTENT || parts.status == StatusCode::NOT_MODIFIED;
    let markup = match (&chain, no_body) {
        (Some(_), false) => instrumentable(&parts.headers),
        _ => None,
    };
    let body = match (markup, chain) {
        (Some(markup), Some(chain)) => {
            parts.headers.remove(header::CONTENT_LENGTH);
            let shim = shim_script(chain.first().map(String::as_str).unwrap_or_default(), markup.xhtml);
            instrumented(IdleBody::new(body, idle), shim, markup, plan.preserve_csp, guard)
        }
        _ => IdleBody::new(body, idle).with_guard(guard).boxed(),
    };
    Ok(Response::from_parts(parts, body))
}

/// Connects to the upstream by the host the user named (DESIGN §8). A `localhost` name is
/// dialled at 127.0.0.1, then ::1, as browsers do without asking the resolver (some dev
/// servers bind `::1` only, and `/etc/hosts` often maps `localhost` to 127.0.0.1 alone);
/// any other name is resolved and every address tried in turn. Returns the first connection
/// made, or the last error.
async fn dial(upstream: &Upstream) -> std::io::Result<TcpStream> {
    if !is_localhost_name(&upstream.dial_host) {
        return TcpStream::connect((upstream.dial_host.as_str(), upstream.port)).await;
    }
    let v4 = TcpStream::connect((Ipv4Addr::LOCALHOST, upstream.port)).await;
    match v4 {
        Ok(s) => Ok(s),
        Err(e4) => TcpStream::connect((Ipv6Addr::LOCALHOST, upstream.port)).await.map_err(|e6| {
            std::io::Error::new(e6.kind(), format!("127.0.0.1:{0}: {e4}; [::1]:{0}: {e6}", upstream.port))
        }),
    }
}

/// Streams `body` through the HTML instrumenter in its own task, unless it starts with a
/// UTF-16 byte-order mark (then it passes through untouched).
fn instrumented(
    mut body: IdleBody,
    shim: String,
    markup: Markup,
    keep_meta_csp: bool,
    guard: ActiveGuard,
) -> ProxyBody {
    let (tx, rx) = mpsc::channel::<Result<Bytes, BoxError>>(8);
    tokio::spawn(async move {
        // Peek at least two bytes for the byte-order mark.
        let mut first = Vec::new();
        let mut ended = false;
        while first.len() < 2 {
            match body.frame().await {
                Some(Ok(f)) => {
                    if let Ok(d) = f.into_data() {
                        first.extend_from_slice(&d);
                    }
                }
                Some(Err(e)) => {
                    let _ = tx.send(Err(e)).await;
                    return;
                }
                None => {
                    ended = true;
                    break;
                }
            }
        }
        let mut rewriter =
            if has_utf16_bom(&first) { None } else { Some(Instrumenter::new(shim, markup, keep_meta_csp)) };
        let mut chunk = first;
        loop {
            let out = match rewriter.as_mut() {
                Some(r) => match r.write(&chunk) {
                    Ok(o) => o,
                    Err(e) => {
                        let _ = tx.send(Err(Box::new(e))).await;
                        return;
                    }
                },
                None => chunk,
            };
            if !out.is_empty() && tx.send(Ok(Bytes::from(out))).await.is_err() {
                return;
            }
            if ended {
                break;
            }
            chunk = match body.frame().await {
                Some(Ok(f)) => match f.into_data() {
                    Ok(d) => d.to_vec(),
                    Err(_) => Vec::new(),
                },
                Some(Err(e)) => {
                    let _ = tx.send(Err(e)).await;
                    return;
                }
                None => {
                    ended = true;
                    Vec::new()
                }
            };
            if ended {
                break;
            }
        }
        if let Some(r) = rewriter {
            match r.end() {
                Ok(o) if !o.is_empty() => {
                    let _ = tx.send(Ok(Bytes::from(o))).await;
                }
                Ok(_) => {}
                Err(e) => {
                    let _ = tx.send(Err(Box::new(e))).await;
                }
            }
        }
    });
    ChannelBody { rx, _guard: guard }.boxed()
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
struct IdleBody {
    inner: Incoming,
    idle: Duration,
    sleep: Pin<Box<Sleep>>,
    guard: Option<ActiveGuard>,
}

impl IdleBody {
    fn new(inner: Incoming, idle: Duration) -> Self {
        IdleBody { inner, idle, sleep: Box::pin(tokio::time::sleep(idle)), guard: None }
    }

    fn with_guard(mut self, g: ActiveGuard) -> Self {
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

fn full(s: impl Into<Bytes>) -> ProxyBody {
    Full::new(s.into()).map_err(|never| match never {}).boxed()
}

fn empty() -> ProxyBody {
    full(Bytes::new())
}

/// Which error page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ErrorKind {
    /// No connection could be made within the idle bound (refused, unreachable, or no
    /// answer to the connect), or the upstream dropped it without answering: 502
    /// "couldn't connect".
    Connect,
    /// The upstream accepted the connection, then sent no response head for the idle bound:
    /// 504 "didn't respond".
    Timeout,
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// The Porthole error page for `kind`, in the system colour scheme, naming the upstream (a
/// loopback upstream is "the dev server"). Carries the shim and the framing policy when a
/// chain is known, so the app sees the page load and can reload it.
fn error_page(kind: ErrorKind, upstream: &Upstream, chain: Option<&[String]>) -> Response<ProxyBody> {
    let who = if upstream.loopback { "the dev server" } else { "the server" };
    let origin = escape(&upstream.origin);
    let secs = UPSTREAM_IDLE_MS / 1000;
    let (status, title, detail) = match kind {
        ErrorKind::Connect => (
            StatusCode::BAD_GATEWAY,
            format!("Porthole couldn't connect to {who}"),
            format!("Nothing accepted a connection at <code>{origin}</code>. Is {who} running?"),
        ),
        ErrorKind::Timeout => (
            StatusCode::GATEWAY_TIMEOUT,
            format!("{} didn't respond", capitalize(who)),
            format!("<code>{origin}</code> accepted the connection but sent nothing for {secs} seconds."),
        ),
    };
    let shim = chain.and_then(|c| c.first()).map(|app| shim_script(app, false)).unwrap_or_default();
    let page = format!(
        "<!doctype html><html><head><meta charset=utf-8><meta name=color-scheme content=\"light dark\">\
<title>{title}</title><style>:root{{color-scheme:light dark}}body{{font:15px/1.5 system-ui,sans-serif;margin:0;padding:15vh 2em;\
background:#fafafa;color:#222}}h1{{font-size:20px;font-weight:600}}code{{font-size:14px}}p{{color:#555}}\
@media (prefers-color-scheme: dark){{body{{background:#1e1e1e;color:#ddd}}p{{color:#aaa}}}}</style>{shim}</head>\
<body><h1>{title}</h1><p>{detail}</p><p>Reload the pane to try again.</p></body></html>"
    );
    let mut r = Response::new(full(page));
    *r.status_mut() = status;
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if let Some(chain) = chain {
        if let Ok(v) = HeaderValue::from_str(&frame_ancestors(chain)) {
            h.insert(header::CONTENT_SECURITY_POLICY, v);
        }
    }
    r
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_gate() {
        let ok = |h: &str| host_ok(Some(&HeaderValue::from_str(h).unwrap()), 41000);
        assert!(ok("127.0.0.1:41000"));
        assert!(ok("localhost:41000"));
        assert!(ok("LOCALHOST:41000"));
        for bad in [
            "127.0.0.1:41001",
            "127.0.0.1",
            "evil.test:41000",
            "localhost.evil.test:41000",
            "[::1]:41000",
            "127.0.0.2:41000",
            "",
        ] {
            assert!(!ok(bad), "{bad}");
        }
        assert!(!host_ok(None, 41000));
    }

    #[test]
    fn error_pages_are_distinct_and_name_the_upstream() {
        let (lo, _) = super::super::parse_upstream("http://localhost:5173/").unwrap();
        let (lan, _) = super::super::parse_upstream("http://10.0.0.5:8080/").unwrap();
        let c = error_page(ErrorKind::Connect, &lo, None);
        let t = error_page(ErrorKind::Timeout, &lan, None);
        assert_eq!(c.status(), 502);
        assert_eq!(t.status(), 504);
        let body = |r: Response<ProxyBody>| {
            let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
            let b = rt.block_on(r.into_body().collect()).unwrap().to_bytes();
            String::from_utf8(b.to_vec()).unwrap()
        };
        let c = body(c);
        let t = body(t);
        assert!(c.contains("couldn't connect to the dev server") && c.contains("http://localhost:5173"), "{c}");
        assert!(t.contains("The server didn't respond") && t.contains("http://10.0.0.5:8080"), "{t}");
        assert!(t.contains("nothing for 30 seconds"), "{t}");
        assert!(c.contains("prefers-color-scheme: dark") && t.contains("prefers-color-scheme: dark"));
    }
}
