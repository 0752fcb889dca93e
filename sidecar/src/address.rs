//! Address literals no URL handed to the sidecar may name: link-local and cloud-metadata
//! addresses (DESIGN §4.1). One check shared by the proxy's grants and the browser API, so a
//! spelling refused by one is refused by the other.
//!
//! The host is canonicalized by the WHATWG URL parser (the `url` crate, as Chromium does):
//! decimal, octal, hex and short IPv4 forms all become one `Ipv4Addr` before the check. Names
//! are not resolved: this checks the literal only.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use url::{Host, Url};

/// Cloud metadata addresses outside 169.254.0.0/16 (Alibaba Cloud's IPv4, AWS's IPv6).
const METADATA_V4: [Ipv4Addr; 1] = [Ipv4Addr::new(100, 100, 100, 200)];
const METADATA_V6: [Ipv6Addr; 1] = [Ipv6Addr::new(0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x0254)];

/// Returns true if and only if `ip` is link-local (169.254.0.0/16, fe80::/10) or a cloud
/// metadata address, also when written as IPv4-mapped or IPv4-compatible IPv6.
pub fn is_blocked_ip(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.octets()[..2] == [169, 254] || METADATA_V4.contains(&v4),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_blocked_ip(IpAddr::V4(v4));
            }
            let seg = v6.segments();
            // IPv4-compatible (deprecated ::a.b.c.d) spellings of a blocked IPv4 address.
            if seg[..6] == [0; 6] && is_blocked_ip(IpAddr::V4(Ipv4Addr::from(((seg[6] as u32) << 16) | seg[7] as u32)))
            {
                return true;
            }
            (seg[0] & 0xffc0) == 0xfe80 || METADATA_V6.contains(&v6)
        }
    }
}

/// Occurs when a URL's host is a link-local or cloud-metadata address literal; carries the
/// canonical address. Its API code is `blocked_address` (403).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockedAddress(pub IpAddr);

impl std::fmt::Display for BlockedAddress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} is a link-local or cloud-metadata address", self.0)
    }
}

impl std::error::Error for BlockedAddress {}

/// Refuses `url` if its host is a blocked address ([`is_blocked_ip`]). `url` must come from
/// [`Url::parse`] (its host is then canonical); a domain that is an address with a trailing
/// dot (`169.254.169.254.`) counts as that address.
pub fn check_host(url: &Url) -> Result<(), BlockedAddress> {
    let ip = match url.host() {
        None => return Ok(()),
        Some(Host::Domain(d)) => match d.trim_end_matches('.').parse::<IpAddr>() {
            Ok(ip) => ip,
            Err(_) => return Ok(()),
        },
        Some(Host::Ipv4(a)) => IpAddr::V4(a),
        Some(Host::Ipv6(a)) => IpAddr::V6(a),
    };
    if is_blocked_ip(ip) {
        Err(BlockedAddress(ip))
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
            assert_eq!(check_host(&u), Err(BlockedAddress(ip.parse().unwrap())), "{url}");
        }
        for url in
            ["http://127.0.0.1:8000/", "http://10.0.0.5/", "http://[::1]/", "http://localhost/", "https://a.test/"]
        {
            assert_eq!(check_host(&Url::parse(url).unwrap()), Ok(()), "{url}");
        }
    }
}
