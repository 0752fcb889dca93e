//! Hosts no URL handed to the sidecar may name: link-local and cloud-metadata addresses, and
//! the cloud metadata host names (DESIGN §4.1). One check shared by the proxy's grants and the
//! browser API, so a spelling refused by one is refused by the other; the proxy also applies
//! [`is_blocked_ip`] to what a name resolves to when it dials (`proxy/upstream.rs`).
//!
//! The host is canonicalized by the WHATWG URL parser (the `url` crate, as Chromium does):
//! decimal, octal, hex and short IPv4 forms all become one `Ipv4Addr` before the check, and an
//! IPv6 address is also checked for every IPv4 address it embeds. [`check_host`] resolves no
//! name.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use url::{Host, Url};

/// Cloud metadata addresses outside 169.254.0.0/16 (Alibaba Cloud's IPv4, AWS's IPv6).
const METADATA_V4: [Ipv4Addr; 1] = [Ipv4Addr::new(100, 100, 100, 200)];
const METADATA_V6: [Ipv6Addr; 1] = [Ipv6Addr::new(0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x0254)];

/// Cloud metadata host names (Google Cloud's two, AWS's `instance-data`), matched without
/// regard to case or a trailing dot.
const METADATA_NAMES: [&str; 3] = ["metadata.google.internal", "metadata", "instance-data"];

/// Returns true if and only if `ip` is link-local (169.254.0.0/16, fe80::/10) or a cloud
/// metadata address, or an IPv6 address embedding such an IPv4 address ([`embedded_v4`]).
pub fn is_blocked_ip(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.octets()[..2] == [169, 254] || METADATA_V4.contains(&v4),
        IpAddr::V6(v6) => {
            embedded_v4(v6).into_iter().any(|v4| is_blocked_ip(IpAddr::V4(v4)))
                || (v6.segments()[0] & 0xffc0) == 0xfe80
                || METADATA_V6.contains(&v6)
        }
    }
}

/// The IPv4 addresses an IPv6 address can stand for: IPv4-mapped `::ffff:0:0/96`,
/// IPv4-compatible `::/96`, SIIT's IPv4-translated `::ffff:0:0:0/96` (RFC 2765), 6to4
/// `2002::/16` (RFC 3056), NAT64's well-known `64:ff9b::/96` (RFC 6052), and inside the
/// local-use `64:ff9b:1::/48` (RFC 8215) every position RFC 6052 §2.2 allows a network to
/// choose (prefix lengths 48, 56, 64 and 96; byte 8 is skipped).
fn embedded_v4(v6: Ipv6Addr) -> Vec<Ipv4Addr> {
    let s = v6.segments();
    let o = v6.octets();
    let at = |i: [usize; 4]| Ipv4Addr::new(o[i[0]], o[i[1]], o[i[2]], o[i[3]]);
    let last = at([12, 13, 14, 15]);
    match s {
        [0, 0, 0, 0, 0, 0xffff | 0, ..] | [0, 0, 0, 0, 0xffff, 0, ..] | [0x64, 0xff9b, 0, 0, 0, 0, ..] => vec![last],
        [0x2002, ..] => vec![at([2, 3, 4, 5])],
        [0x64, 0xff9b, 1, ..] => vec![at([6, 7, 9, 10]), at([7, 9, 10, 11]), at([9, 10, 11, 12]), last],
        _ => Vec::new(),
    }
}

/// Occurs when a URL's host is a link-local or cloud-metadata address literal, or a cloud
/// metadata host name. Its API code is `blocked_address` (403).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BlockedAddress {
    /// The canonical address.
    Ip(IpAddr),
    /// The host name as the URL spelled it (lower-cased by the URL parser).
    Name(String),
}

impl std::fmt::Display for BlockedAddress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BlockedAddress::Ip(ip) => write!(f, "{ip} is a link-local or cloud-metadata address"),
            BlockedAddress::Name(n) => write!(f, "{n} is a cloud-metadata host name"),
        }
    }
}

impl std::error::Error for BlockedAddress {}

/// Refuses `url` if its host is a blocked address ([`is_blocked_ip`]) or a cloud metadata
/// host name. `url` must come from [`Url::parse`] (its host is then canonical); a domain that
/// is an address with a trailing dot (`169.254.169.254.`) counts as that address.
pub fn check_host(url: &Url) -> Result<(), BlockedAddress> {
    let ip = match url.host() {
        None => return Ok(()),
        Some(Host::Domain(d)) => {
            let bare = d.trim_end_matches('.');
            if METADATA_NAMES.iter().any(|m| bare.eq_ignore_ascii_case(m)) {
                return Err(BlockedAddress::Name(d.to_string()));
            }
            match bare.parse::<IpAddr>() {
                Ok(ip) => ip,
                Err(_) => return Ok(()),
            }
        }
        Some(Host::Ipv4(a)) => IpAddr::V4(a),
        Some(Host::Ipv6(a)) => IpAddr::V6(a),
    };
    if is_blocked_ip(ip) {
        Err(BlockedAddress::Ip(ip))
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_host_canonicalizes_every_spelling() {
        for (url, ip) in [
            ("http://169.254.169.254/latest/meta-data", "169.254.169.254"),
            ("http://2852039166/", "169.254.169.254"),
            ("http://0251.0376.0251.0376/", "169.254.169.254"),
            ("https://0xa9fea9fe/", "169.254.169.254"),
            ("http://169.254.43518/", "169.254.169.254"),
            ("http://169.254.169.254./", "169.254.169.254"),
            ("http://[::ffff:169.254.169.254]/", "::ffff:169.254.169.254"),
            ("http://[fe80::1]:8080/", "fe80::1"),
            ("http://100.100.100.200/", "100.100.100.200"),
        ] {
            let u = Url::parse(url).unwrap();
            assert_eq!(check_host(&u), Err(BlockedAddress::Ip(ip.parse().unwrap())), "{url}");
        }
        for url in
            ["http://127.0.0.1:8000/", "http://10.0.0.5/", "http://[::1]/", "http://localhost/", "https://a.test/"]
        {
            assert_eq!(check_host(&Url::parse(url).unwrap()), Ok(()), "{url}");
        }
    }

    #[test]
    fn ipv6_embedding_a_blocked_ipv4_address_is_blocked() {
        for ip in [
            "64:ff9b::a9fe:a9fe",         // NAT64 well-known prefix (RFC 6052)
            "64:ff9b::6464:64c8",         // … of 100.100.100.200
            "64:ff9b:1:a9fe:a9:fe00::",   // local-use NAT64 (RFC 8215), prefix length 48
            "64:ff9b:1:a9:fe:a9fe::",     // … 56
            "64:ff9b:1:0:a9:fea9:fe00:0", // … 64
            "64:ff9b:1::a9fe:a9fe",       // … 96
            "2002:a9fe:a9fe::1",          // 6to4
            "::ffff:0:a9fe:a9fe",         // SIIT IPv4-translated
            "::ffff:a9fe:a9fe",           // IPv4-mapped
            "::a9fe:a9fe",                // IPv4-compatible
            "fe80::1",
            "fd00:ec2::254",
        ] {
            assert!(is_blocked_ip(ip.parse().unwrap()), "{ip}");
        }
        for ip in
            ["64:ff9b::a00:5", "64:ff9b:1::a00:5", "2002:a00:5::1", "::ffff:0:a00:5", "::1", "2001:db8::a9fe:a9fe"]
        {
            assert!(!is_blocked_ip(ip.parse().unwrap()), "{ip}");
        }
    }

    #[test]
    fn metadata_host_names_are_blocked() {
        for (url, name) in [
            ("http://metadata.google.internal/computeMetadata/v1/", "metadata.google.internal"),
            ("http://METADATA.Google.Internal./", "metadata.google.internal."),
            ("http://metadata/", "metadata"),
            ("http://metadata./", "metadata."),
            ("http://instance-data/latest/meta-data/", "instance-data"),
            ("https://instance-data.:8080/", "instance-data."),
        ] {
            let e = check_host(&Url::parse(url).unwrap()).unwrap_err();
            assert_eq!(e, BlockedAddress::Name(name.into()), "{url}");
            assert_eq!(e.to_string(), format!("{name} is a cloud-metadata host name"));
        }
        for url in ["http://metadata.example.test/", "http://instance-data.example.test/", "http://metadata2/"] {
            assert_eq!(check_host(&Url::parse(url).unwrap()), Ok(()), "{url}");
        }
    }
}
