//! The host a link connects to, parsed and bounded before it ever reaches `ssh`'s argv.

/// An ssh destination: an ssh config alias or `[user@]host[:port]`. At most 255 bytes, no
/// leading `-` (it would be an ssh option), no whitespace or control characters, only
/// `[A-Za-z0-9._@:%-]` and `[`/`]` around an IPv6 literal. A trailing `:PORT` (1..=65535)
/// becomes `ssh -p PORT`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SshHost {
    /// What was given, as given (shown in the API).
    pub spec: String,
    /// The destination argument for ssh (`[user@]host`).
    pub destination: String,
    /// The port, when given.
    pub port: Option<u16>,
}

impl SshHost {
    /// Parses `spec`; the error says what is wrong (API: 400 `bad_host`).
    pub fn parse(spec: &str) -> Result<SshHost, String> {
        if spec.is_empty() || spec.len() > 255 {
            return Err("host must be 1..=255 bytes".into());
        }
        if spec.starts_with('-') {
            return Err("host may not start with '-'".into());
        }
        if let Some(c) = spec
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '@' | ':' | '%' | '-' | '[' | ']')))
        {
            return Err(format!("host may not contain {c:?}"));
        }
        let (user, rest) = match spec.rsplit_once('@') {
            Some((u, r)) if !u.is_empty() && !u.contains('@') && !u.starts_with('-') => (Some(u), r),
            Some(_) => return Err("bad user in host".into()),
            None => (None, spec),
        };
        let (name, port) = if let Some(v6) = rest.strip_prefix('[') {
            let (addr, after) = v6.split_once(']').ok_or("unclosed '[' in host")?;
            match after {
                "" => (addr.to_string(), None),
                p => (addr.to_string(), Some(p.strip_prefix(':').ok_or("bad port")?)),
            }
        } else {
            match rest.split_once(':') {
                Some((n, p)) if !p.contains(':') => (n.to_string(), Some(p)),
                Some(_) => (rest.to_string(), None),
                None => (rest.to_string(), None),
            }
        };
        if name.is_empty() || name.starts_with('-') || name.contains('[') || name.contains(']') {
            return Err("bad host name".into());
        }
        let port = match port {
            None => None,
            Some(p) => Some(
                p.parse::<u16>()
                    .ok()
                    .filter(|p| *p > 0)
                    .filter(|_| p.bytes().all(|b| b.is_ascii_digit()))
                    .ok_or_else(|| format!("bad port {p:?}"))?,
            ),
        };
        let destination = match user {
            Some(u) => format!("{u}@{name}"),
            None => name,
        };
        Ok(SshHost { spec: spec.to_string(), destination, port })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_parsed_and_injection_is_refused() {
        let h = SshHost::parse("me@dev.example:2222").unwrap();
        assert_eq!((h.destination.as_str(), h.port), ("me@dev.example", Some(2222)));
        let h = SshHost::parse("porthole-test").unwrap();
        assert_eq!((h.destination.as_str(), h.port), ("porthole-test", None));
        let h = SshHost::parse("[::1]:22").unwrap();
        assert_eq!((h.destination.as_str(), h.port), ("::1", Some(22)));
        assert_eq!(SshHost::parse("fe80::1").unwrap().port, None);
        for bad in [
            "",
            "-oProxyCommand=x",
            "a b",
            "a\nb",
            "a;b",
            "me@-oX",
            "h:0",
            "h:70000",
            "h:+1",
            "@h",
            "a@b@c",
            "$(x)",
            "h'",
            &"h".repeat(256),
        ] {
            assert!(SshHost::parse(bad).is_err(), "{bad:?}");
        }
    }
}
