//! Pane handles (`t3`, `b2`) and targets (`self`, `focused`, `:PORT`, `title:TEXT`):
//! protocol §9.2.

use std::fmt;
use std::str::FromStr;

use super::error::ControlError;
use crate::pty::TerminalId;

/// Longest target string accepted, in bytes.
pub const MAX_TARGET_BYTES: usize = 256;

/// What kind of pane a handle names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PaneKind {
    /// A terminal pane (`tN`).
    Terminal,
    /// A browser pane (`bN`), any render mode.
    Browser,
}

/// A pane's handle: stable for the pane's life, never reused while the sidecar runs.
/// Terminal panes are `tN` (N the first terminal id the pane ran), browser panes `bN`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Handle {
    /// The kind, which is the handle's letter.
    pub kind: PaneKind,
    /// The number after the letter (≥ 1).
    pub n: u64,
}

impl Handle {
    /// The terminal pane handle of a pane that started with terminal `id`.
    pub fn of_terminal(id: TerminalId) -> Self {
        Handle { kind: PaneKind::Terminal, n: id.0 }
    }
}

impl fmt::Display for Handle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = match self.kind {
            PaneKind::Terminal => 't',
            PaneKind::Browser => 'b',
        };
        write!(f, "{c}{}", self.n)
    }
}

impl FromStr for Handle {
    type Err = ();

    /// Parses `^[tb][1-9][0-9]{0,17}$` (canonical: no sign, no leading zero).
    fn from_str(s: &str) -> Result<Self, ()> {
        let kind = match s.as_bytes().first() {
            Some(b't') => PaneKind::Terminal,
            Some(b'b') => PaneKind::Browser,
            _ => return Err(()),
        };
        let digits = &s[1..];
        if digits.is_empty()
            || digits.len() > 18
            || digits.starts_with('0')
            || !digits.bytes().all(|b| b.is_ascii_digit())
        {
            return Err(());
        }
        Ok(Handle { kind, n: digits.parse().map_err(|_| ())? })
    }
}

impl serde::Serialize for Handle {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// A parsed target (protocol §9.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A handle.
    Handle(Handle),
    /// The calling pane.
    Caller,
    /// The pane focused in the answering window.
    Focused,
    /// The browser pane showing this loopback port.
    Port(u16),
    /// The pane whose title contains this text (case-insensitive).
    Title(String),
}

impl Target {
    /// Parses a target string, refusing empty, over-long and unknown forms.
    pub fn parse(s: &str) -> Result<Target, ControlError> {
        if s.is_empty() || s.len() > MAX_TARGET_BYTES {
            return Err(ControlError::BadRequest(format!(
                "a target must be 1..={MAX_TARGET_BYTES} bytes, got {}",
                s.len()
            )));
        }
        if s == "self" {
            return Ok(Target::Caller);
        }
        if s == "focused" {
            return Ok(Target::Focused);
        }
        if let Some(p) = s.strip_prefix(':') {
            return match p.parse::<u16>() {
                Ok(port) if port > 0 && !p.starts_with('+') => Ok(Target::Port(port)),
                _ => Err(ControlError::BadRequest(format!("'{s}' is not a port (:1..:65535)"))),
            };
        }
        if let Some(t) = s.strip_prefix("title:") {
            if t.is_empty() {
                return Err(ControlError::BadRequest("title: needs some text".into()));
            }
            return Ok(Target::Title(t.to_string()));
        }
        s.parse::<Handle>().map(Target::Handle).map_err(|_| {
            ControlError::BadRequest(format!(
                "'{s}' is not a target: use a handle (t3, b2), self, focused, :PORT or title:TEXT"
            ))
        })
    }
}

/// The loopback port a browser URL shows, if its host is `localhost`, `127.0.0.1` or `[::1]`.
pub fn loopback_port(url: &str) -> Option<u16> {
    let u = url::Url::parse(url).ok()?;
    if u.scheme() != "http" && u.scheme() != "https" {
        return None;
    }
    let loopback = match u.host()? {
        url::Host::Domain(d) => d.eq_ignore_ascii_case("localhost"),
        url::Host::Ipv4(a) => a == std::net::Ipv4Addr::LOCALHOST,
        url::Host::Ipv6(a) => a == std::net::Ipv6Addr::LOCALHOST,
    };
    if loopback {
        u.port_or_known_default()
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_round_trip_and_refuse_non_canonical_forms() {
        for ok in ["t1", "b2", "t999999999999999999"] {
            assert_eq!(ok.parse::<Handle>().unwrap().to_string(), ok);
        }
        for bad in ["", "t", "x1", "t0", "t01", "t+1", "T1", "t1 ", "b-1", "t1000000000000000000"] {
            assert!(bad.parse::<Handle>().is_err(), "{bad}");
        }
    }

    #[test]
    fn targets_parse_table() {
        let h = |s: &str| Target::Handle(s.parse().unwrap());
        let cases: Vec<(&str, Result<Target, &str>)> = vec![
            ("t3", Ok(h("t3"))),
            ("self", Ok(Target::Caller)),
            ("focused", Ok(Target::Focused)),
            (":8000", Ok(Target::Port(8000))),
            ("title:vite", Ok(Target::Title("vite".into()))),
            (":0", Err("bad_request")),
            (":70000", Err("bad_request")),
            (":+80", Err("bad_request")),
            ("title:", Err("bad_request")),
            ("", Err("bad_request")),
            ("pane3", Err("bad_request")),
        ];
        for (s, want) in cases {
            let got = Target::parse(s).map_err(|e| e.status_and_code().1);
            assert_eq!(got, want, "{s}");
        }
        assert!(Target::parse(&"t".repeat(MAX_TARGET_BYTES + 1)).is_err());
    }

    #[test]
    fn loopback_ports_of_urls() {
        assert_eq!(loopback_port("http://localhost:8000/x"), Some(8000));
        assert_eq!(loopback_port("http://127.0.0.1:5173"), Some(5173));
        assert_eq!(loopback_port("http://[::1]:3000/"), Some(3000));
        assert_eq!(loopback_port("http://LOCALHOST/"), Some(80));
        assert_eq!(loopback_port("http://example.com:8000/"), None);
        assert_eq!(loopback_port("http://127.0.0.2:8000/"), None);
        assert_eq!(loopback_port("file:///x"), None);
    }
}
