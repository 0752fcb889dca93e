//! Viewer sockets (DESIGN §4.3): single-use grants, and per view a WebSocket carrying
//! screencast frames out and native input in.
//!
//! Architecture Invariant: a view reaches a browser only through [`crate::browser::BrowserRef`]
//! operations and host-owned scripts; nothing a view sends reaches CDP without being rebuilt
//! field by field ([`msg::parse`]).

mod conn;
mod find;
mod inputs;
mod inspect;
pub(crate) mod keys;
pub mod msg;
mod paint;
pub(crate) mod popup;
mod scroll;

pub use conn::serve;

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long a viewer grant stays valid, in milliseconds.
pub const VIEWER_GRANT_TTL_MS: u64 = 60_000;
/// Most viewer grants outstanding at once; one more is refused.
pub const MAX_VIEWER_GRANTS: usize = 1024;
/// Largest inbound viewer message, in bytes; a larger one closes the socket.
pub const MAX_VIEWER_MESSAGE_BYTES: usize = 64 * 1024;
/// A provisional frame is dropped while more than this many frame bytes wait to be sent.
pub const MAX_QUEUED_FRAME_BYTES: usize = 2_000_000;
/// While more than this many inputs wait on CDP the socket is not read (backpressure).
pub const MAX_PENDING_INPUTS: usize = 256;
/// …and reading resumes once at most this many wait.
pub const PENDING_INPUTS_RESUME: usize = 128;
/// Text bytes of inputs held behind a pending dialog (the socket is still read so that the
/// answer gets through) past which the view is cut off (1008): no human types that much.
pub const MAX_HELD_INPUT_BYTES: usize = 32 * 1024 * 1024;
/// Quiet time after the last provisional frame or input before a crisp capture, in ms.
pub const CRISP_QUIET_MS: u64 = 250;
/// A paste is inserted in chunks of at most this many characters.
pub const PASTE_CHUNK_CHARS: usize = 8192;
/// Environment variable overriding [`VIEWER_GRANT_TTL_MS`]. **Test-only**: lets the test
/// suite see a grant expire without waiting a minute.
pub const GRANT_TTL_ENV: &str = "PORTHOLE_TEST_VIEWER_GRANT_TTL_MS";

/// Occurs when [`MAX_VIEWER_GRANTS`] unexpired grants are already outstanding.
#[derive(Debug, PartialEq, Eq)]
pub struct TooManyGrants;

/// Outstanding single-use viewer grants: token → (browser id, expiry).
pub struct Grants {
    map: Mutex<HashMap<String, (String, Instant)>>,
    ttl: Duration,
}

impl Default for Grants {
    fn default() -> Self {
        Self::new()
    }
}

impl Grants {
    /// Grants with the TTL of [`VIEWER_GRANT_TTL_MS`] (or [`GRANT_TTL_ENV`] when set).
    pub fn new() -> Grants {
        let ms = std::env::var(GRANT_TTL_ENV).ok().and_then(|v| v.parse().ok()).unwrap_or(VIEWER_GRANT_TTL_MS);
        Grants::with_ttl(Duration::from_millis(ms))
    }

    /// Grants valid for `ttl`.
    pub fn with_ttl(ttl: Duration) -> Grants {
        Grants { map: Mutex::new(HashMap::new()), ttl }
    }

    /// Issues a grant `token` for `browser` (the token is 256 random bits, hex). Expired
    /// grants are forgotten first; [`TooManyGrants`] when the cap is reached.
    pub fn issue(&self, browser: &str, token: String) -> Result<(), TooManyGrants> {
        let now = Instant::now();
        let mut m = self.map.lock().unwrap_or_else(|p| p.into_inner());
        m.retain(|_, (_, exp)| *exp > now);
        if m.len() >= MAX_VIEWER_GRANTS {
            return Err(TooManyGrants);
        }
        m.insert(token, (browser.to_string(), now + self.ttl));
        Ok(())
    }

    /// Redeems a grant: returns its browser id if and only if the token was issued, has not
    /// expired and was not redeemed before. A grant works once.
    pub fn redeem(&self, token: &str) -> Option<String> {
        let mut m = self.map.lock().unwrap_or_else(|p| p.into_inner());
        let (browser, exp) = m.remove(token)?;
        (exp > Instant::now()).then_some(browser)
    }

    /// Forgets every grant for `browser` (it was closed).
    pub fn revoke_browser(&self, browser: &str) {
        let mut m = self.map.lock().unwrap_or_else(|p| p.into_inner());
        m.retain(|_, (b, _)| b != browser);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grants_are_single_use_expire_and_are_capped() {
        let g = Grants::with_ttl(Duration::from_secs(60));
        g.issue("b1", "t".into()).unwrap();
        assert_eq!(g.redeem("t").as_deref(), Some("b1"));
        assert_eq!(g.redeem("t"), None);
        for i in 0..MAX_VIEWER_GRANTS {
            g.issue("b1", format!("k{i}")).unwrap();
        }
        assert_eq!(g.issue("b1", "one-more".into()), Err(TooManyGrants));
        let g = Grants::with_ttl(Duration::from_millis(0));
        g.issue("b1", "t".into()).unwrap();
        assert_eq!(g.redeem("t"), None);
    }
}
