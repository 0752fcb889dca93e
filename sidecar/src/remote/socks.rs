//! A local SOCKS5 listener whose every CONNECT is a `tcp` stream of a link (protocol §8,
//! §11): a remote browser's Chromium is launched with it as its proxy (loopback included), so
//! `localhost:3000` in its pages is the remote's and the laptop's own loopback is never
//! reached. RFC 1928, CONNECT only, no authentication (method 0x00), on 127.0.0.1 only.
//! A host name is passed through as the stream header's host: it is resolved on the remote.
//!
//! Bounded: at most [`MAX_CONNS`] connections at once (later ones wait in the listener's
//! queue), each handshake done within [`HANDSHAKE_BOUND`], a domain name at most 255 bytes
//! (the protocol's own bound).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::{Arc, Weak};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;

use super::frame::Target;
use super::link::{Link, LinkError};

/// Most connections served at once by one listener.
pub const MAX_CONNS: usize = 256;
/// A client must have asked for its CONNECT within this long after connecting.
pub const HANDSHAKE_BOUND: Duration = Duration::from_secs(10);

/// RFC 1928 §6 reply codes used here.
const REP_OK: u8 = 0x00;
const REP_FAILURE: u8 = 0x01;
const REP_NOT_ALLOWED: u8 = 0x02;
const REP_HOST_UNREACHABLE: u8 = 0x04;
const REP_REFUSED: u8 = 0x05;
const REP_COMMAND: u8 = 0x07;
const REP_ADDRESS_TYPE: u8 = 0x08;

/// One listener on 127.0.0.1 (an ephemeral port) for one link. Dropping it stops accepting
/// and ends the connections it serves.
pub struct SocksServer {
    port: u16,
    task: tokio::task::JoinHandle<()>,
}

impl SocksServer {
    /// Binds 127.0.0.1:0 and serves CONNECTs through `link` (held weakly: a removed link
    /// answers "general failure"). Must run inside a tokio runtime.
    pub async fn start(link: Weak<Link>) -> std::io::Result<SocksServer> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
        let port = listener.local_addr()?.port();
        let task = tokio::spawn(accept_loop(listener, link));
        Ok(SocksServer { port, task })
    }

    /// The listener's port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Chromium's `--proxy-server` value for this listener: `socks5://127.0.0.1:P`.
    pub fn proxy_server(&self) -> String {
        format!("socks5://127.0.0.1:{}", self.port)
    }
}

impl Drop for SocksServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn accept_loop(listener: TcpListener, link: Weak<Link>) {
    let slots = Arc::new(Semaphore::new(MAX_CONNS));
    let mut conns = tokio::task::JoinSet::new();
    loop {
        let Ok(permit) = slots.clone().acquire_owned().await else { return };
        let Ok((stream, _)) = listener.accept().await else { continue };
        let link = link.clone();
        // Reap finished connections so the set does not grow without bound.
        while conns.try_join_next().is_some() {}
        conns.spawn(async move {
            let _permit = permit;
            serve(stream, link).await;
        });
    }
}

/// Serves one client: the handshake, the CONNECT, then the splice.
async fn serve(mut client: TcpStream, link: Weak<Link>) {
    let _ = client.set_nodelay(true);
    let target = match tokio::time::timeout(HANDSHAKE_BOUND, handshake(&mut client)).await {
        Ok(Ok(t)) => t,
        Ok(Err(rep)) => {
            if let Some(rep) = rep {
                let _ = reply(&mut client, rep).await;
            }
            return;
        }
        Err(_) => return,
    };
    let Some(link) = link.upgrade() else {
        let _ = reply(&mut client, REP_FAILURE).await;
        return;
    };
    let mut up = match link.open(&target).await {
        Ok(s) => s,
        Err(e) => {
            tracing::debug!(?target, "socks connect through the link failed: {e}");
            let rep = match e {
                LinkError::Refused { code, .. } if code == "connect_failed" => REP_REFUSED,
                LinkError::Refused { .. } => REP_HOST_UNREACHABLE,
                _ => REP_FAILURE,
            };
            let _ = reply(&mut client, rep).await;
            return;
        }
    };
    drop(link);
    if reply(&mut client, REP_OK).await.is_err() {
        return;
    }
    let _ = tokio::io::copy_bidirectional(&mut client, &mut up).await;
}

/// Reads the greeting and the request; the target, or the reply code to refuse with (`None`:
/// close without a reply, the client spoke something else).
async fn handshake<S: AsyncRead + AsyncWrite + Unpin>(s: &mut S) -> Result<Target, Option<u8>> {
    let mut head = [0u8; 2];
    s.read_exact(&mut head).await.map_err(|_| None)?;
    if head[0] != 5 {
        return Err(None);
    }
    let mut methods = vec![0u8; head[1] as usize];
    s.read_exact(&mut methods).await.map_err(|_| None)?;
    if !methods.contains(&0x00) {
        let _ = s.write_all(&[5, 0xFF]).await;
        return Err(None);
    }
    s.write_all(&[5, 0x00]).await.map_err(|_| None)?;
    let mut req = [0u8; 4];
    s.read_exact(&mut req).await.map_err(|_| None)?;
    if req[0] != 5 {
        return Err(None);
    }
    let host = match req[3] {
        1 => {
            let mut a = [0u8; 4];
            s.read_exact(&mut a).await.map_err(|_| None)?;
            Ipv4Addr::from(a).to_string()
        }
        4 => {
            let mut a = [0u8; 16];
            s.read_exact(&mut a).await.map_err(|_| None)?;
            Ipv6Addr::from(a).to_string()
        }
        3 => {
            let mut n = [0u8; 1];
            s.read_exact(&mut n).await.map_err(|_| None)?;
            let mut name = vec![0u8; n[0] as usize];
            s.read_exact(&mut name).await.map_err(|_| None)?;
            String::from_utf8(name).map_err(|_| Some(REP_HOST_UNREACHABLE))?
        }
        _ => return Err(Some(REP_ADDRESS_TYPE)),
    };
    let mut port = [0u8; 2];
    s.read_exact(&mut port).await.map_err(|_| None)?;
    let port = u16::from_be_bytes(port);
    if req[1] != 1 {
        return Err(Some(REP_COMMAND));
    }
    // Link-local and cloud-metadata addresses are refused as the iframe proxy refuses them.
    if host.parse::<IpAddr>().is_ok_and(crate::address::is_blocked_ip) {
        return Err(Some(REP_NOT_ALLOWED));
    }
    // The stream header's own rules (no spaces, no leading '-', port 1..): checked here so a
    // bad name is refused before anything is opened.
    Target::parse(&format!("tcp {host} {port}")).map_err(|_| Some(REP_HOST_UNREACHABLE))
}

async fn reply<S: AsyncWrite + Unpin>(s: &mut S, rep: u8) -> std::io::Result<()> {
    s.write_all(&[5, rep, 0, 1, 0, 0, 0, 0, 0, 0]).await?;
    s.flush().await
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn run(client_bytes: &[u8]) -> (Result<Target, Option<u8>>, Vec<u8>) {
        let (mut a, mut b) = tokio::io::duplex(1024);
        a.write_all(client_bytes).await.unwrap();
        let r = handshake(&mut b).await;
        drop(b);
        let mut out = Vec::new();
        a.read_to_end(&mut out).await.unwrap();
        (r, out)
    }

    #[tokio::test]
    async fn connect_requests_become_tcp_targets() {
        let (r, out) =
            run(&[5, 1, 0, 5, 1, 0, 3, 9, b'l', b'o', b'c', b'a', b'l', b'h', b'o', b's', b't', 0x0B, 0xB8]).await;
        assert_eq!(r.unwrap(), Target::Tcp { host: "localhost".into(), port: 3000 });
        assert_eq!(out, [5, 0]);
        let (r, _) = run(&[5, 1, 0, 5, 1, 0, 1, 127, 0, 0, 1, 0, 80]).await;
        assert_eq!(r.unwrap(), Target::Tcp { host: "127.0.0.1".into(), port: 80 });
        let mut v6 = vec![5, 1, 0, 5, 1, 0, 4];
        v6.extend(Ipv6Addr::LOCALHOST.octets());
        v6.extend([0, 81]);
        assert_eq!(run(&v6).await.0.unwrap(), Target::Tcp { host: "::1".into(), port: 81 });
    }

    #[tokio::test]
    async fn everything_else_is_refused() {
        // Only "no authentication" offered is accepted.
        let (r, out) = run(&[5, 1, 2]).await;
        assert_eq!((r.unwrap_err(), out), (None, vec![5, 0xFF]));
        // BIND, UDP ASSOCIATE.
        assert_eq!(run(&[5, 1, 0, 5, 2, 0, 1, 127, 0, 0, 1, 0, 80]).await.0.unwrap_err(), Some(REP_COMMAND));
        assert_eq!(run(&[5, 1, 0, 5, 3, 0, 1, 127, 0, 0, 1, 0, 80]).await.0.unwrap_err(), Some(REP_COMMAND));
        // Cloud metadata, port 0, a name the header refuses, SOCKS4.
        assert_eq!(run(&[5, 1, 0, 5, 1, 0, 1, 169, 254, 169, 254, 0, 80]).await.0.unwrap_err(), Some(REP_NOT_ALLOWED));
        assert_eq!(run(&[5, 1, 0, 5, 1, 0, 1, 127, 0, 0, 1, 0, 0]).await.0.unwrap_err(), Some(REP_HOST_UNREACHABLE));
        assert_eq!(
            run(&[5, 1, 0, 5, 1, 0, 3, 3, b'a', b' ', b'b', 0, 80]).await.0.unwrap_err(),
            Some(REP_HOST_UNREACHABLE)
        );
        assert_eq!(run(&[4, 1, 0, 80, 127, 0, 0, 1, 0]).await.0.unwrap_err(), None);
    }
}
