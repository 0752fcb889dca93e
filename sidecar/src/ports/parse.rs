//! Pure parsers for the `/proc` formats the scan reads: `/proc/net/tcp` and `/proc/net/tcp6`
//! rows, `/proc/<pid>/stat`, and `socket:[inode]` fd link targets. No I/O here, so the
//! tests run on any platform.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// The `st` column value of a socket in the TCP LISTEN state (`TCP_LISTEN` = 10).
const TCP_LISTEN_STATE_HEX: &str = "0A";

/// One listening socket from a `/proc/net/tcp{,6}` table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NetListener {
    /// The socket's inode (what `/proc/<pid>/fd/N` links to as `socket:[inode]`).
    pub inode: u64,
    /// The bound address, IPv4-mapped IPv6 addresses already turned into IPv4.
    pub addr: IpAddr,
    /// The bound TCP port (host order).
    pub port: u16,
}

/// Occurs when a table row is not in the kernel's format; carries what was wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BadRow(pub String);

/// Parses one data row of `/proc/net/tcp` (`v6 = false`) or `/proc/net/tcp6` (`v6 = true`).
/// Returns `Ok(None)` for a socket that is not in the LISTEN state, `Ok(Some(_))` for a
/// listener, whatever its address (filtering is [`serves_localhost`]'s job).
///
/// The kernel prints each address as native-endian 32-bit words in hex (`%08X`), so
/// `0100007F` is 127.0.0.1 on a little-endian machine; the port is host order.
pub(crate) fn parse_net_row(line: &str, v6: bool) -> Result<Option<NetListener>, BadRow> {
    let cols: Vec<&str> = line.split_ascii_whitespace().collect();
    if cols.len() < 10 {
        return Err(BadRow(format!("expected at least 10 columns, got {}", cols.len())));
    }
    if !cols[3].eq_ignore_ascii_case(TCP_LISTEN_STATE_HEX) {
        if u8::from_str_radix(cols[3], 16).is_err() {
            return Err(BadRow(format!("bad state {:?}", cols[3])));
        }
        return Ok(None);
    }
    let (addr_hex, port_hex) =
        cols[1].split_once(':').ok_or_else(|| BadRow(format!("bad local address {:?}", cols[1])))?;
    let port = u16::from_str_radix(port_hex, 16).map_err(|_| BadRow(format!("bad port {port_hex:?}")))?;
    let addr = if v6 { parse_v6(addr_hex)? } else { IpAddr::V4(parse_v4(addr_hex)?) };
    let inode = cols[9].parse::<u64>().map_err(|_| BadRow(format!("bad inode {:?}", cols[9])))?;
    Ok(Some(NetListener { inode, addr: canonical(addr), port }))
}

/// Parses a whole table (header line first). Returns every LISTEN row, or the first bad row
/// with its line number.
pub(crate) fn parse_net_table(text: &str, v6: bool) -> Result<Vec<NetListener>, BadRow> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate().skip(1) {
        if line.trim().is_empty() {
            continue;
        }
        match parse_net_row(line, v6) {
            Ok(Some(l)) => out.push(l),
            Ok(None) => {}
            Err(BadRow(why)) => return Err(BadRow(format!("line {}: {why}", i + 1))),
        }
    }
    Ok(out)
}

fn word(hex: &str) -> Result<[u8; 4], BadRow> {
    if hex.len() != 8 {
        return Err(BadRow(format!("bad address word {hex:?}")));
    }
    u32::from_str_radix(hex, 16).map(u32::to_ne_bytes).map_err(|_| BadRow(format!("bad address word {hex:?}")))
}

fn parse_v4(hex: &str) -> Result<Ipv4Addr, BadRow> {
    Ok(Ipv4Addr::from(word(hex)?))
}

fn parse_v6(hex: &str) -> Result<IpAddr, BadRow> {
    if hex.len() != 32 || !hex.is_ascii() {
        return Err(BadRow(format!("bad IPv6 address {hex:?}")));
    }
    let mut bytes = [0u8; 16];
    for i in 0..4 {
        bytes[i * 4..i * 4 + 4].copy_from_slice(&word(&hex[i * 8..i * 8 + 8])?);
    }
    Ok(IpAddr::V6(Ipv6Addr::from(bytes)))
}

/// An IPv4-mapped IPv6 address (`::ffff:a.b.c.d`) as the IPv4 address it serves; anything
/// else unchanged.
fn canonical(addr: IpAddr) -> IpAddr {
    match addr {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(v6),
        },
        v4 => v4,
    }
}

/// True if and only if a listener bound to `addr` is offered: loopback (127.0.0.0/8, ::1)
/// or any-interface (0.0.0.0, ::). A specific non-loopback bind is not (design §5).
pub(crate) fn serves_localhost(addr: IpAddr) -> bool {
    addr.is_loopback() || addr.is_unspecified()
}

/// The fields of `/proc/<pid>/stat` the scan needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stat {
    /// Process state letter (`R`, `S`, `Z`, …).
    pub state: char,
    /// Parent pid.
    pub ppid: i32,
    /// Session id.
    pub session: i32,
}

/// Parses `state`, `ppid` and `session` out of a `/proc/<pid>/stat` line. The command name
/// (field 2) may contain spaces and parentheses, so fields are counted after the last `)`.
pub(crate) fn parse_stat(stat: &str) -> Option<Stat> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut f = rest.split_ascii_whitespace();
    let state = f.next()?.chars().next()?;
    let ppid = f.next()?.parse().ok()?;
    let _pgrp = f.next()?;
    let session = f.next()?.parse().ok()?;
    Some(Stat { state, ppid, session })
}

/// The inode of an fd link target `socket:[12345]`, or `None` for any other target.
pub(crate) fn socket_inode(target: &str) -> Option<u64> {
    target.strip_prefix("socket:[")?.strip_suffix(']')?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(local: &str, st: &str, inode: &str) -> String {
        format!("   0: {local} 00000000:0000 {st} 00000000:00000000 00:00000000 00000000  1000        0 {inode} 1 0000000000000000 100 0 0 10 0")
    }

    fn row6(local: &str, st: &str, inode: &str) -> String {
        format!("   0: {local} 00000000000000000000000000000000:0000 {st} 00000000:00000000 00:00000000 00000000  1000        0 {inode} 1 0000000000000000 100 0 0 10 0")
    }

    // The fixtures are what a little-endian kernel prints.
    #[cfg(target_endian = "little")]
    #[test]
    fn net_rows_table() {
        type Want = Result<Option<(&'static str, u16, u64)>, ()>;
        let cases: Vec<(String, bool, Want)> = vec![
            (row("0100007F:1F90", "0A", "111"), false, Ok(Some(("127.0.0.1", 8080, 111)))),
            (row("00000000:0050", "0A", "112"), false, Ok(Some(("0.0.0.0", 80, 112)))),
            (row("0200007F:0050", "0A", "113"), false, Ok(Some(("127.0.0.2", 80, 113)))),
            (row("0F02000A:0016", "0A", "114"), false, Ok(Some(("10.0.2.15", 22, 114)))),
            // Established, TIME_WAIT, CLOSE: ignored.
            (row("0100007F:1F90", "01", "115"), false, Ok(None)),
            (row("0100007F:1F90", "06", "0"), false, Ok(None)),
            (row("0100007F:1F90", "07", "116"), false, Ok(None)),
            (row6("00000000000000000000000000000000:1F40", "0A", "201"), true, Ok(Some(("::", 8000, 201)))),
            (row6("00000000000000000000000001000000:1F41", "0A", "202"), true, Ok(Some(("::1", 8001, 202)))),
            // IPv4-mapped ::ffff:127.0.0.1 and ::ffff:0.0.0.0 become IPv4.
            (row6("0000000000000000FFFF00000100007F:1F42", "0A", "203"), true, Ok(Some(("127.0.0.1", 8002, 203)))),
            (row6("0000000000000000FFFF000000000000:1F43", "0A", "204"), true, Ok(Some(("0.0.0.0", 8003, 204)))),
            // fe80::1 (link-local) parses; filtering is separate.
            (row6("000080FE000000000000000001000000:1F44", "0A", "205"), true, Ok(Some(("fe80::1", 8004, 205)))),
            (row6("00000000000000000000000001000000:1F41", "01", "206"), true, Ok(None)),
            // Malformed.
            ("   0: 0100007F:1F90 00000000:0000 0A".to_string(), false, Err(())),
            (row("0100007F1F90", "0A", "1"), false, Err(())),
            (row("0100007F:XYZ", "0A", "1"), false, Err(())),
            (row("0100007F:1F90", "0A", "x"), false, Err(())),
            (row("0100007F:1F90", "QQ", "1"), false, Err(())),
            (row6("0100:1F90", "0A", "1"), true, Err(())),
        ];
        for (line, v6, want) in cases {
            let got =
                parse_net_row(&line, v6).map(|o| o.map(|l| (l.addr.to_string(), l.port, l.inode))).map_err(|_| ());
            let want = want.map(|o| o.map(|(a, p, i)| (a.to_string(), p, i)));
            assert_eq!(got, want, "{line}");
        }
    }

    #[test]
    fn serves_localhost_table() {
        let cases = [
            ("127.0.0.1", true),
            ("127.0.0.2", true),
            ("0.0.0.0", true),
            ("::", true),
            ("::1", true),
            ("10.0.2.15", false),
            ("192.168.1.4", false),
            ("fe80::1", false),
            ("2001:db8::1", false),
        ];
        for (a, want) in cases {
            assert_eq!(serves_localhost(a.parse().unwrap()), want, "{a}");
        }
    }

    #[cfg(target_endian = "little")]
    #[test]
    fn net_table_skips_header_and_reports_line_of_a_bad_row() {
        let header = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode";
        let good = format!("{header}\n{}\n{}\n", row("0100007F:1F90", "0A", "7"), row("0100007F:1F91", "01", "8"));
        let got = parse_net_table(&good, false).unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!((got[0].port, got[0].inode), (8080, 7));
        assert_eq!(parse_net_table(header, false).unwrap(), vec![]);
        let bad = format!("{header}\n{}\ngarbage\n", row("0100007F:1F90", "0A", "7"));
        let err = parse_net_table(&bad, false).unwrap_err();
        assert!(err.0.starts_with("line 3:"), "{err:?}");
    }

    #[test]
    fn stat_with_spaces_and_parens_in_name() {
        let s = "4242 (my (weird) prog) S 4000 4242 4100 34816 4242 4194560 1 0 0 0";
        assert_eq!(parse_stat(s), Some(Stat { state: 'S', ppid: 4000, session: 4100 }));
        assert_eq!(parse_stat("1 (init"), None);
        assert_eq!(parse_stat("1 (x) Z"), None);
    }

    #[test]
    fn socket_inode_table() {
        assert_eq!(socket_inode("socket:[12345]"), Some(12345));
        assert_eq!(socket_inode("pipe:[12345]"), None);
        assert_eq!(socket_inode("/dev/pts/3"), None);
        assert_eq!(socket_inode("socket:[]"), None);
        assert_eq!(socket_inode("socket:[12"), None);
    }
}
