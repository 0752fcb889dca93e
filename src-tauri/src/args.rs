//! The desktop command line: `porthole [--ssh HOST]`. HOST is checked here (the rule of a
//! remote link's host, protocol §11.4, as the UI's `HOST_RE` and the sidecar check it again)
//! so a bad one is refused at once, before any window; the UI then opens "New remote
//! workspace…" connecting to it (the login URL carries it as `ssh=HOST`).

/// What the command line asks for.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Args {
    /// `--ssh HOST`: a remote workspace to open once the UI is up.
    pub ssh: Option<String>,
}

/// Whether `host` is an ssh config alias or `[user@]host[:port]` as a link takes it: 1..=255
/// bytes, no leading `-`, only `[A-Za-z0-9._@:%-]` and `[`/`]`.
pub fn valid_host(host: &str) -> bool {
    (1..=255).contains(&host.len())
        && !host.starts_with('-')
        && host.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '@' | ':' | '%' | '-' | '[' | ']'))
}

/// Parses the arguments after the program's name. Other arguments are left alone (as
/// before); `--ssh` without a value, given twice, or with a bad host is an error that says
/// what to give.
pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Args, String> {
    let mut out = Args::default();
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        let value = if a == "--ssh" {
            it.next().ok_or("--ssh needs a host: porthole --ssh HOST (an ssh config alias or user@host[:port])")?
        } else if let Some(v) = a.strip_prefix("--ssh=") {
            v.to_string()
        } else {
            continue;
        };
        if out.ssh.is_some() {
            return Err("--ssh is given twice; give one host".into());
        }
        if !valid_host(&value) {
            return Err(format!(
                "--ssh {value:?} is not a host: give an ssh config alias or user@host[:port] (letters, digits, . _ @ : % - and [ ] around an IPv6 address; at most 255 bytes; not starting with -)"
            ));
        }
        out.ssh = Some(value);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(args: &[&str]) -> Result<Args, String> {
        parse(args.iter().map(|s| s.to_string()))
    }

    #[test]
    fn ssh_takes_a_host_in_either_form_and_refuses_bad_ones() {
        assert_eq!(p(&[]), Ok(Args { ssh: None }));
        assert_eq!(p(&["--ssh", "me@box:2222"]).unwrap().ssh.as_deref(), Some("me@box:2222"));
        assert_eq!(p(&["--ssh=porthole-test"]).unwrap().ssh.as_deref(), Some("porthole-test"));
        assert_eq!(p(&["--ssh", "[::1]:22"]).unwrap().ssh.as_deref(), Some("[::1]:22"));
        assert!(p(&["--ssh"]).unwrap_err().contains("needs a host"));
        assert!(p(&["--ssh", "-oProxyCommand=x"]).is_err(), "an ssh option is no host");
        assert!(p(&["--ssh", "a b"]).is_err());
        assert!(p(&["--ssh", "a;rm"]).is_err());
        assert!(p(&["--ssh", ""]).is_err());
        assert!(p(&["--ssh", &"a".repeat(256)]).is_err());
        assert!(p(&["--ssh", "a", "--ssh", "b"]).unwrap_err().contains("twice"));
        assert_eq!(p(&["--other"]), Ok(Args { ssh: None }), "other arguments are left alone");
    }
}
