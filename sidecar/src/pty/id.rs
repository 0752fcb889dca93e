//! Terminal ids: `t` followed by 1 to 18 decimal digits, never reused in a sidecar's life.

use std::fmt;
use std::str::FromStr;

/// A terminal's id, rendered as `t<N>` (`^t[0-9]{1,18}$`, no leading zeros).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TerminalId(pub(crate) u64);

impl fmt::Display for TerminalId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "t{}", self.0)
    }
}

/// Occurs when a string is not a canonical terminal id.
#[derive(Debug, PartialEq, Eq)]
pub struct BadTerminalId;

impl fmt::Display for BadTerminalId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "terminal ids match ^t[0-9]{{1,18}}$")
    }
}

impl std::error::Error for BadTerminalId {}

impl FromStr for TerminalId {
    type Err = BadTerminalId;

    /// Accepts exactly the canonical form `t<N>`: 1 to 18 ASCII digits, no sign, no leading
    /// zero (so every id has one spelling).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let digits = s.strip_prefix('t').ok_or(BadTerminalId)?;
        if digits.is_empty()
            || digits.len() > 18
            || !digits.bytes().all(|b| b.is_ascii_digit())
            || (digits.len() > 1 && digits.starts_with('0'))
        {
            return Err(BadTerminalId);
        }
        digits.parse().map(TerminalId).map_err(|_| BadTerminalId)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn id_parsing_accepts_only_canonical_ids() {
        let ok = [("t1", 1), ("t0", 0), ("t42", 42), ("t999999999999999999", 999_999_999_999_999_999)];
        for (s, n) in ok {
            assert_eq!(s.parse::<TerminalId>(), Ok(TerminalId(n)), "{s}");
            assert_eq!(TerminalId(n).to_string(), s);
        }
        let bad = [
            "",
            "t",
            "1",
            "T1",
            "t-1",
            "t+1",
            "t01",
            "t1 ",
            " t1",
            "t1x",
            "tt1",
            "t١",
            "t1000000000000000000",
            "t1/socket",
            "t%31",
        ];
        for s in bad {
            assert_eq!(s.parse::<TerminalId>(), Err(BadTerminalId), "{s:?}");
        }
    }
}
