//! The stream header of the tunnel (protocol §11.3): each stream the local side opens begins
//! with one line naming its target, and the attach relay answers one line before splicing.
//!
//! ```text
//! local → remote:  "api\n"  |  "tcp <host> <port>\n"        (≤ 512 bytes with the newline)
//! remote → local:  "ok\n"   |  "err <code> <message>\n"      (≤ 512 bytes with the newline)
//! ```

use std::io;

use tokio::io::{AsyncRead, AsyncReadExt};

/// Longest header or reply line, newline included, in bytes.
pub const MAX_LINE: usize = 512;

/// What a stream of the tunnel connects to on the remote machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// The remote daemon's API (its Unix socket `<run>/api.sock`).
    Api,
    /// A TCP connection made from the remote machine to `host:port` (a name or an address
    /// literal, 1..=253 bytes of `[A-Za-z0-9.:-]`, or `[v6]`; port 1..=65535).
    Tcp {
        /// Host name or address as the remote resolves it.
        host: String,
        /// TCP port, 1..=65535.
        port: u16,
    },
}

/// Why a header line was refused (the relay answers `err bad_header <this>`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadHeader(pub String);

impl std::fmt::Display for BadHeader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn host_ok(host: &str) -> bool {
    let inner = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host);
    !inner.is_empty()
        && host.len() <= 253
        && !inner.starts_with('-')
        && inner.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-' || b == b':')
}

impl Target {
    /// The header line for this target, newline included.
    pub fn header(&self) -> String {
        match self {
            Target::Api => "api\n".to_string(),
            Target::Tcp { host, port } => format!("tcp {host} {port}\n"),
        }
    }

    /// Parses one header line (without its newline).
    pub fn parse(line: &str) -> Result<Target, BadHeader> {
        let mut words = line.split(' ');
        match (words.next(), words.next(), words.next(), words.next()) {
            (Some("api"), None, None, None) => Ok(Target::Api),
            (Some("tcp"), Some(host), Some(port), None) => {
                if !host_ok(host) {
                    return Err(BadHeader(format!("bad host {host:?}")));
                }
                let port = port
                    .parse::<u16>()
                    .ok()
                    .filter(|p| *p > 0 && !port.starts_with('+'))
                    .ok_or_else(|| BadHeader(format!("bad port {port:?}")))?;
                let host = host.trim_start_matches('[').trim_end_matches(']').to_string();
                Ok(Target::Tcp { host, port })
            }
            _ => Err(BadHeader(format!("unknown header {:?}", line.chars().take(64).collect::<String>()))),
        }
    }
}

/// The relay's answer to a header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// Connected: the stream is spliced from the next byte on.
    Ok,
    /// Refused or failed (`bad_header`, `connect_failed`); the stream is closed after it.
    Err {
        /// Stable code, one word.
        code: String,
        /// Human text (one line).
        message: String,
    },
}

impl Reply {
    /// The reply line, newline included, cut to [`MAX_LINE`].
    pub fn line(&self) -> String {
        match self {
            Reply::Ok => "ok\n".to_string(),
            Reply::Err { code, message } => {
                let message: String = message.chars().filter(|c| !c.is_control()).collect();
                let mut l = format!("err {code} {message}");
                while l.len() > MAX_LINE - 1 {
                    l.pop();
                }
                l + "\n"
            }
        }
    }

    /// Parses one reply line (without its newline).
    pub fn parse(line: &str) -> Reply {
        if line == "ok" {
            return Reply::Ok;
        }
        let rest = line.strip_prefix("err ").unwrap_or(line);
        let (code, message) = rest.split_once(' ').unwrap_or((rest, ""));
        Reply::Err { code: code.to_string(), message: message.to_string() }
    }
}

/// Reads one line of at most [`MAX_LINE`] bytes (newline included) byte by byte, so nothing
/// after it is consumed. `Ok(None)`: the stream ended first. An over-long or non-UTF-8 line is
/// an `InvalidData` error.
pub async fn read_line<R: AsyncRead + Unpin>(r: &mut R) -> io::Result<Option<String>> {
    let mut buf = Vec::with_capacity(64);
    loop {
        let mut b = [0u8; 1];
        if r.read(&mut b).await? == 0 {
            return Ok(None);
        }
        if b[0] == b'\n' {
            return String::from_utf8(buf)
                .map(Some)
                .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "not UTF-8"));
        }
        buf.push(b[0]);
        if buf.len() >= MAX_LINE {
            return Err(io::Error::new(io::ErrorKind::InvalidData, "line over 512 bytes"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_round_trip_and_anything_else_is_refused() {
        for t in [Target::Api, Target::Tcp { host: "127.0.0.1".into(), port: 8000 }] {
            assert_eq!(Target::parse(t.header().trim_end()).unwrap(), t);
        }
        assert_eq!(Target::parse("tcp [::1] 80").unwrap(), Target::Tcp { host: "::1".into(), port: 80 });
        for bad in [
            "",
            "api ",
            "API",
            "tcp 127.0.0.1",
            "tcp 127.0.0.1 0",
            "tcp 127.0.0.1 65536",
            "tcp 127.0.0.1 +80",
            "tcp -oX 80",
            "tcp a/b 80",
            "tcp  80",
            "tcp h 80 x",
            "unix /tmp/x",
        ] {
            assert!(Target::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn replies_round_trip_and_are_bounded() {
        assert_eq!(Reply::parse(Reply::Ok.line().trim_end()), Reply::Ok);
        let e = Reply::Err { code: "connect_failed".into(), message: "refused\nx".into() };
        assert_eq!(
            Reply::parse(e.line().trim_end()),
            Reply::Err { code: "connect_failed".into(), message: "refusedx".into() }
        );
        let long = Reply::Err { code: "c".into(), message: "m".repeat(2000) };
        assert_eq!(long.line().len(), MAX_LINE);
    }

    #[tokio::test]
    async fn read_line_stops_at_the_newline_and_the_bound() {
        let mut r: &[u8] = b"api\nrest";
        assert_eq!(read_line(&mut r).await.unwrap().as_deref(), Some("api"));
        assert_eq!(r, b"rest");
        let long = vec![b'a'; 600];
        assert!(read_line(&mut &long[..]).await.is_err());
        assert_eq!(read_line(&mut &b"ab"[..]).await.unwrap(), None);
    }
}
