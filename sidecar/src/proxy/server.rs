//! One grant's listener: the Host gate, forwarding to the upstream (pooled connections,
//! [`super::upstream`]), the response body plan (instrumented documents, everything else
//! streamed as it came, [`super::body`]), WebSocket tunnels and the error pages.

use std::convert::Infallible;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::header::{self, HeaderValue};
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpStream};

use super::body::{empty, full, instrumented, IdleBody, Plan, ProxyBody};
use super::cookies::{jar_applies, MAX_SCRIPT_COOKIE_BYTES, SCRIPT_COOKIE_PATH};
use super::csp::{new_nonce, CspContext};
use super::decode::codings;
use super::html::{markup, shim_script, with_nonce};
use super::rules::{frame_ancestors, is_document_load, is_upgrade, rewrite_request, rewrite_response};
use super::upstream::{send, UpstreamError};
use super::{ActiveGuard, Grant, Upstream, UPSTREAM_IDLE_MS};

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
    if req.uri().path() == SCRIPT_COOKIE_PATH {
        let r = script_cookie(req, &grant).await;
        drop(guard);
        return Ok(r);
    }
    let chain = grant.chain.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let idle = grant.config.upstream_idle;
    let upstream = &grant.upstream;
    let upgrade = is_upgrade(req.headers());
    let document = is_document_load(req.headers());
    let client_upgrade = if upgrade { Some(hyper::upgrade::on(&mut req)) } else { None };
    let (mut parts, body) = req.into_parts();
    let head_request = parts.method == Method::HEAD;
    // The grant's cookie jar stands in for the browser's (the URL it files cookies under).
    let jar_url = jar_applies(&parts.method, &parts.headers).then(|| parts.uri.path_and_query()).flatten();
    let jar_url = jar_url.and_then(|p| url::Url::parse(&format!("{}{p}", upstream.origin)).ok());
    rewrite_request(&mut parts.headers, &grant.origins, &upstream.origin, &upstream.host_header, upgrade);
    if let Some(url) = &jar_url {
        grant.jar.add_to(&mut parts.headers, url);
    }
    let path = parts.uri.path_and_query().map(|p| p.as_str().to_string()).unwrap_or_else(|| "/".into());
    parts.uri = match path.parse() {
        Ok(u) => u,
        Err(_) => return Ok(error_page(ErrorKind::Connect, upstream, chain.as_deref(), grant.config.prefix_letter())),
    };
    parts.version = hyper::Version::HTTP_11;
    let up_req = Request::from_parts(parts, body.boxed());

    // Upgrades get a connection of their own; everything else may reuse a pooled one.
    let mut resp = match send(&grant.pool, upstream, grant.route.as_ref(), up_req, idle, !upgrade).await {
        Ok(r) => r,
        Err(e) => {
            tracing::debug!(grant = %grant.id, "upstream {}: {e}", upstream.origin);
            let kind = match e {
                UpstreamError::Connect(_) => ErrorKind::Connect,
                UpstreamError::Blocked(ip) => ErrorKind::Blocked(ip),
                UpstreamError::Timeout => ErrorKind::Timeout,
            };
            return Ok(error_page(kind, upstream, chain.as_deref(), grant.config.prefix_letter()));
        }
    };
    if let Some(url) = &jar_url {
        grant.jar.store_from(resp.headers(), url);
        grant.jar_changed();
    }
    // The page's CSP is kept and given this response's shim nonce (`csp.rs`). A predictable
    // nonce would weaken the page's own policy: no random source, no response.
    let Some(nonce) = new_nonce() else {
        let mut r = Response::new(full("failed to read the system's random source\n"));
        *r.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
        return Ok(r);
    };
    let csp = Arc::new(CspContext {
        upstream_origins: upstream.own_origins(),
        proxy_origins: [grant.origins.canonical.clone(), grant.origins.localhost.clone()],
        nonce,
        cookie_path: SCRIPT_COOKIE_PATH,
    });

    if let (Some(client_upgrade), StatusCode::SWITCHING_PROTOCOLS) = (client_upgrade, resp.status()) {
        let upstream_upgrade = hyper::upgrade::on(&mut resp);
        let (mut parts, _) = resp.into_parts();
        rewrite_response(&mut parts.headers, &grant.origins, &upstream.own_origins(), chain.as_deref(), true, &csp);
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
    let rules =
        rewrite_response(&mut parts.headers, &grant.origins, &upstream.own_origins(), chain.as_deref(), false, &csp);
    // Only a document load of markup whose codings the proxy can undo is instrumented, and only
    // with a chain (protocol §6.5); it is then served identity, whatever its length becomes.
    let app = chain.as_ref().and_then(|c| c.first()).filter(|_| document);
    let plan = app.and_then(|app| {
        let markup = markup(&parts.headers)?;
        let codings = codings(&parts.headers)?;
        let shim = shim_script(app, &upstream.own_origins(), markup.xhtml, grant.config.prefix_letter());
        let shim = with_nonce(&shim, &csp.nonce);
        Some(Plan { codings, markup, shim, meta_csp: (!rules.preserve_csp).then(|| csp.clone()) })
    });
    if plan.is_some() {
        parts.headers.remove(header::CONTENT_LENGTH);
        parts.headers.remove(header::CONTENT_ENCODING);
    }
    let no_body = head_request || parts.status == StatusCode::NO_CONTENT || parts.status == StatusCode::NOT_MODIFIED;
    let body = IdleBody::new(body, idle);
    let body = match plan {
        Some(plan) if !no_body => instrumented(body, plan, guard),
        _ => body.with_guard(guard).boxed(),
    };
    Ok(Response::from_parts(parts, body))
}

/// A JSON error (protocol §3 shape) from the proxy itself.
fn json_error(status: StatusCode, code: &str, message: &str) -> Response<ProxyBody> {
    let body = serde_json::json!({"error": {"code": code, "message": message}}).to_string();
    let mut r = Response::new(full(body));
    *r.status_mut() = status;
    r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    r.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

/// `GET|POST /__porthole/cookie?p=<document path>` (protocol §6.4): the shim's
/// `document.cookie`. GET answers the jar's script-visible cookies for the document
/// ([`super::cookies::Jar::script_view`], `text/plain`); POST stores its body, one cookie
/// string of at most [`MAX_SCRIPT_COOKIE_BYTES`] UTF-8 bytes, as a script's write
/// ([`super::cookies::Jar::set_from_script`]) → `204`. Only the page itself may ask: the
/// request must carry `X-Porthole-Cookie: 1` (a header no cross-origin page can send without
/// a CORS preflight, which is never granted) and, when the browser says, come from the same
/// origin (`Sec-Fetch-Site: same-origin`; an `Origin`, when sent, one of the grant's own).
/// Refusals: `403 forbidden`, `405 method_not_allowed`, `400 bad_request` (no `p`, or a `p`
/// not starting with `/`), `413 too_large`, `400 bad_cookie` (not UTF-8).
async fn script_cookie(req: Request<Incoming>, grant: &Grant) -> Response<ProxyBody> {
    let h = req.headers();
    let text = |n: &str| h.get(n).and_then(|v| v.to_str().ok()).map(str::trim);
    let same_origin = text("sec-fetch-site").is_none_or(|v| v.eq_ignore_ascii_case("same-origin"));
    let own_origin = text("origin").is_none_or(|o| grant.origins.is_own(o));
    if text("x-porthole-cookie") != Some("1") || !same_origin || !own_origin {
        return json_error(StatusCode::FORBIDDEN, "forbidden", "only the framed page's own script may use its cookies");
    }
    let path = req
        .uri()
        .query()
        .and_then(|q| url::form_urlencoded::parse(q.as_bytes()).find(|(k, _)| k == "p").map(|(_, v)| v.into_owned()))
        .filter(|p| p.starts_with('/'));
    let Some(path) = path else {
        return json_error(StatusCode::BAD_REQUEST, "bad_request", "p must be the document's path, starting with /");
    };
    let Ok(url) = url::Url::parse(&format!("{}{path}", grant.upstream.origin)) else {
        return json_error(StatusCode::BAD_REQUEST, "bad_request", "p is not a path");
    };
    match *req.method() {
        Method::GET => {
            let mut r = Response::new(full(grant.jar.script_view(&url)));
            r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
            r.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
            r
        }
        Method::POST => {
            let body = match http_body_util::Limited::new(req.into_body(), MAX_SCRIPT_COOKIE_BYTES).collect().await {
                Ok(b) => b,
                Err(e) if e.is::<http_body_util::LengthLimitError>() => {
                    return json_error(
                        StatusCode::PAYLOAD_TOO_LARGE,
                        "too_large",
                        &format!("a cookie string is at most {MAX_SCRIPT_COOKIE_BYTES} bytes"),
                    );
                }
                Err(_) => return json_error(StatusCode::BAD_REQUEST, "bad_request", "the body ended early"),
            };
            let Ok(line) = String::from_utf8(body.to_bytes().to_vec()) else {
                return json_error(StatusCode::BAD_REQUEST, "bad_cookie", "a cookie string is UTF-8 text");
            };
            grant.jar.set_from_script(&line, &url);
            grant.jar_changed();
            let mut r = Response::new(empty());
            *r.status_mut() = StatusCode::NO_CONTENT;
            r
        }
        _ => json_error(StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed", "GET or POST"),
    }
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
    /// Every address the upstream's name resolves to is link-local or cloud metadata (this
    /// one first), so nothing was dialled: 502 "refused to connect".
    Blocked(IpAddr),
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// The Porthole error page for `kind`, in the system colour scheme, naming the upstream (a
/// loopback upstream is "the dev server"). Carries the shim and the framing policy when a
/// chain is known, so the app sees the page load and can reload it.
fn error_page(kind: ErrorKind, upstream: &Upstream, chain: Option<&[String]>, prefix: char) -> Response<ProxyBody> {
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
        ErrorKind::Blocked(ip) => (
            StatusCode::BAD_GATEWAY,
            format!("Porthole refused to connect to {who}"),
            format!(
                "<code>{}</code> resolves to <code>{ip}</code>, a link-local or cloud-metadata address. \
                 Porthole never connects to those.",
                escape(&upstream.host_header)
            ),
        ),
    };
    let shim = chain
        .and_then(|c| c.first())
        .map(|app| shim_script(app, &upstream.own_origins(), false, prefix))
        .unwrap_or_default();
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
        let c = error_page(ErrorKind::Connect, &lo, None, 'b');
        let t = error_page(ErrorKind::Timeout, &lan, None, 'b');
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
