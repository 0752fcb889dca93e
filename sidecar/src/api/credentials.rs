//! The secrets of one sidecar launch (protocol §2): the API token, one-time login codes and
//! session cookies. A leaf of `api/`: the state holds it and the auth guard asks it, so
//! neither imports the other for it.

use std::collections::VecDeque;
use std::sync::Mutex;

use axum::http::{header, HeaderMap};

use crate::constants::{MAX_LOGIN_CODES, MAX_SESSIONS};
use crate::secret::random_hex_256;

/// Name of the browser session cookie.
pub const SESSION_COOKIE: &str = "porthole_session";

/// Secrets of one sidecar launch: the API token, outstanding one-time login codes and live
/// session cookies. All are 256-bit values from the OS CSPRNG, hex-encoded (64 chars).
pub struct Auth {
    token: String,
    codes: Mutex<VecDeque<String>>,
    sessions: Mutex<VecDeque<String>>,
}

/// Compares two byte strings in time independent of where they differ.
fn ct_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

impl Auth {
    /// Draws a fresh token. Errors only if the OS CSPRNG fails.
    pub fn new() -> Result<Self, getrandom::Error> {
        Ok(Auth { token: random_hex_256()?, codes: Mutex::new(VecDeque::new()), sessions: Mutex::new(VecDeque::new()) })
    }

    /// The per-launch API token (64 hex chars).
    pub fn token(&self) -> &str {
        &self.token
    }

    /// Issues a one-time login code; at most 64 are outstanding (the oldest is dropped).
    pub fn new_login_code(&self) -> Result<String, getrandom::Error> {
        let code = random_hex_256()?;
        let mut codes = self.codes.lock().unwrap_or_else(|p| p.into_inner());
        if codes.len() >= MAX_LOGIN_CODES {
            codes.pop_front();
        }
        codes.push_back(code.clone());
        Ok(code)
    }

    /// Consumes `code` and returns a new session value, or `None` if the code is unknown or
    /// already used.
    pub fn redeem(&self, code: &str) -> Option<String> {
        {
            let mut codes = self.codes.lock().unwrap_or_else(|p| p.into_inner());
            let pos = codes.iter().position(|c| ct_eq(c.as_bytes(), code.as_bytes()))?;
            codes.remove(pos);
        }
        let session = random_hex_256().ok()?;
        let mut sessions = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
        if sessions.len() >= MAX_SESSIONS {
            sessions.pop_front();
        }
        sessions.push_back(session.clone());
        Some(session)
    }

    /// True if and only if the headers carry `Authorization: Bearer <token>` or a live
    /// session cookie.
    pub fn is_authorized(&self, headers: &HeaderMap) -> bool {
        if let Some(v) = headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()) {
            if let Some(t) = v.strip_prefix("Bearer ") {
                if ct_eq(t.trim().as_bytes(), self.token.as_bytes()) {
                    return true;
                }
            }
        }
        let sessions = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
        headers
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .filter_map(|kv| kv.trim().strip_prefix(SESSION_COOKIE)?.strip_prefix('='))
            .any(|v| sessions.iter().any(|s| ct_eq(s.as_bytes(), v.as_bytes())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn hv(s: &str) -> HeaderValue {
        HeaderValue::from_str(s).unwrap()
    }

    #[test]
    fn bearer_and_cookie_auth() {
        let a = Auth::new().unwrap();
        assert_eq!(a.token().len(), 64);
        let mut h = HeaderMap::new();
        assert!(!a.is_authorized(&h));
        h.insert(header::AUTHORIZATION, hv(&format!("Bearer {}", a.token())));
        assert!(a.is_authorized(&h));
        h.insert(header::AUTHORIZATION, hv("Bearer 00"));
        assert!(!a.is_authorized(&h));
        let code = a.new_login_code().unwrap();
        let session = a.redeem(&code).expect("fresh code works");
        assert!(a.redeem(&code).is_none(), "a used code is refused");
        let mut h = HeaderMap::new();
        h.insert(header::COOKIE, hv(&format!("a=b; {SESSION_COOKIE}={session}")));
        assert!(a.is_authorized(&h));
        h.insert(header::COOKIE, hv(&format!("{SESSION_COOKIE}={}", a.token())));
        assert!(!a.is_authorized(&h), "the token is not a session");
    }

    #[test]
    fn login_codes_are_capped_oldest_dropped() {
        let a = Auth::new().unwrap();
        let first = a.new_login_code().unwrap();
        for _ in 0..MAX_LOGIN_CODES {
            a.new_login_code().unwrap();
        }
        assert!(a.redeem(&first).is_none());
    }
}
