//! What `ph open`, `ph browser open/navigate` and project layouts may open: the text a user
//! typed turned into an http(s) URL (DESIGN §4), or a typed refusal.

use std::fmt;

use crate::address::{check_host, BlockedAddress};

/// Longest URL a verb takes, in bytes.
pub const MAX_URL_BYTES: usize = 8192;

/// Why a typed URL cannot be opened.
#[derive(Debug, Clone, PartialEq)]
pub enum UrlError {
    /// Occurs when the text is over [`MAX_URL_BYTES`]. 400 `bad_request`.
    TooLong,
    /// Occurs when the text does not parse as a URL (the parser's reason). 400 `bad_request`.
    NotAUrl {
        /// The text as given.
        text: String,
        /// The URL parser's reason.
        reason: String,
    },
    /// Occurs when the scheme is neither http nor https. 400 `bad_request`.
    Scheme(String),
    /// Occurs when the URL names no host. 400 `bad_request`.
    NoHost(String),
    /// Occurs when the host is a link-local or cloud-metadata address (`address.rs`). 403
    /// `blocked_address`.
    Blocked(BlockedAddress),
}

impl fmt::Display for UrlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UrlError::TooLong => write!(f, "the URL is over {MAX_URL_BYTES} bytes"),
            UrlError::NotAUrl { text, reason } => write!(f, "{text:?} is not a URL: {reason}"),
            UrlError::Scheme(s) => write!(f, "only http and https can be opened, not {s}:"),
            UrlError::NoHost(text) => write!(f, "{text:?} has no host"),
            UrlError::Blocked(b) => write!(f, "{b}"),
        }
    }
}

impl std::error::Error for UrlError {}

/// Turns what the user typed into an http(s) URL: with no scheme, a loopback host
/// (`localhost`, `*.localhost`, `127.0.0.1`, `[::1]`) means http and any other host https
/// (DESIGN §4); other schemes, hostless URLs and blocked addresses are refused.
pub fn normalize_url(s: &str) -> Result<url::Url, UrlError> {
    if s.len() > MAX_URL_BYTES {
        return Err(UrlError::TooLong);
    }
    let with_scheme = if s.contains("://") {
        s.to_string()
    } else {
        let host = s.split(['/', '?', '#']).next().unwrap_or("");
        let name = host.rsplit_once(':').map_or(host, |(h, _)| h).to_ascii_lowercase();
        let loopback = name == "localhost" || name == "127.0.0.1" || name == "[::1]" || name.ends_with(".localhost");
        format!("{}://{s}", if loopback { "http" } else { "https" })
    };
    let u =
        url::Url::parse(&with_scheme).map_err(|e| UrlError::NotAUrl { text: s.to_string(), reason: e.to_string() })?;
    if u.scheme() != "http" && u.scheme() != "https" {
        return Err(UrlError::Scheme(u.scheme().to_string()));
    }
    if u.host().is_none() {
        return Err(UrlError::NoHost(s.to_string()));
    }
    check_host(&u).map_err(UrlError::Blocked)?;
    Ok(u)
}

/// `http://localhost:PORT/`, the URL a port (`:PORT`, or a terminal's one listening port)
/// opens.
pub fn localhost_url(port: u16) -> Result<url::Url, UrlError> {
    normalize_url(&format!("http://localhost:{port}/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_normalized_as_the_url_field_does() {
        let n = |s: &str| normalize_url(s).map(|u| u.to_string());
        assert_eq!(n("localhost:5173"), Ok("http://localhost:5173/".into()));
        assert_eq!(n("127.0.0.1:8000/x"), Ok("http://127.0.0.1:8000/x".into()));
        assert_eq!(n("example.com"), Ok("https://example.com/".into()));
        assert_eq!(n("http://localhost:1/"), Ok("http://localhost:1/".into()));
        assert!(matches!(n("file:///etc/passwd"), Err(UrlError::Scheme(_))));
        assert!(matches!(n("javascript://x"), Err(UrlError::Scheme(_))));
        assert!(matches!(n("http://169.254.169.254/"), Err(UrlError::Blocked(_))));
        assert_eq!(n(&"a".repeat(MAX_URL_BYTES + 1)), Err(UrlError::TooLong));
    }
}
