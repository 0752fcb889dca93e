//! Whether a pop-out window can reach a display (DESIGN §4.4, protocol §8.5): the variables
//! being set is not enough, a display named by them may not exist (or may have gone).

use std::ffi::OsString;
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Bound on connecting to a TCP X display, in milliseconds (checked at every pop-out and
/// `GET /api/capabilities`, so it must stay short).
const TCP_CONNECT_BOUND_MS: u64 = 500;

/// X11 TCP displays listen on 6000 + the display number (X(7)).
const X_TCP_BASE: u32 = 6000;

/// Whether a path exists.
type Exists = Box<dyn Fn(&Path) -> bool>;
/// Connects to host and port; the error says why not.
type Connect = Box<dyn Fn(&str, u16) -> Result<(), String>>;

/// How the check reaches the outside world; replaced in unit tests.
pub(crate) struct Probe {
    exists: Exists,
    connect: Connect,
}

impl Probe {
    /// The real file system and network.
    pub(crate) fn system() -> Probe {
        Probe { exists: Box::new(|p| p.exists()), connect: Box::new(tcp_connect) }
    }

    /// A probe where exactly `paths` exist and exactly `ports` answer a connect.
    #[cfg(test)]
    pub(crate) fn fake(paths: &'static [&'static str], ports: &'static [u16]) -> Probe {
        Probe {
            exists: Box::new(move |p| paths.iter().any(|q| Path::new(q) == p)),
            connect: Box::new(
                move |_, port| {
                    if ports.contains(&port) {
                        Ok(())
                    } else {
                        Err("connection refused".into())
                    }
                },
            ),
        }
    }
}

fn tcp_connect(host: &str, port: u16) -> Result<(), String> {
    let addrs: Vec<SocketAddr> =
        (host, port).to_socket_addrs().map_err(|e| format!("cannot resolve {host}: {e}"))?.collect();
    let mut last = format!("{host} has no address");
    for a in addrs {
        match TcpStream::connect_timeout(&a, Duration::from_millis(TCP_CONNECT_BOUND_MS)) {
            Ok(_) => return Ok(()),
            Err(e) => last = e.to_string(),
        }
    }
    Err(last)
}

/// Where an X11 `DISPLAY` value (`[host]:n[.screen]`) is served.
#[derive(Debug, PartialEq)]
enum XServer {
    /// A local display: its socket `/tmp/.X11-unix/X<n>`.
    Local(PathBuf),
    /// A TCP display: host and port (6000 + n).
    Tcp(String, u16),
}

/// Parses a `DISPLAY` value; `None` if it is not of the form `[host]:n[.screen]`.
fn parse_x(display: &str) -> Option<XServer> {
    let (host, rest) = display.rsplit_once(':')?;
    let n: u32 = rest.split('.').next()?.parse().ok()?;
    let host = host.strip_prefix("unix/").unwrap_or(host);
    if host.is_empty() || host == "unix" {
        Some(XServer::Local(PathBuf::from(format!("/tmp/.X11-unix/X{n}"))))
    } else {
        let port = u16::try_from(X_TCP_BASE + n).ok()?;
        Some(XServer::Tcp(host.trim_matches(['[', ']']).to_string(), port))
    }
}

/// Checks that a window can reach a display: `DISPLAY`'s X server (a local display's socket
/// exists, a TCP display answers a connect within 500 ms) or `WAYLAND_DISPLAY`'s socket
/// (`$XDG_RUNTIME_DIR/$WAYLAND_DISPLAY`, or the value itself when absolute) exists. Ok
/// when either is reachable; else a sentence for the user saying why not (X's reason first).
pub(crate) fn check(env: &impl Fn(&str) -> Option<OsString>, probe: &Probe) -> Result<(), String> {
    let get = |k: &str| env(k).map(|v| v.to_string_lossy().into_owned()).filter(|v| !v.is_empty());
    let (x, wayland) = (get("DISPLAY"), get("WAYLAND_DISPLAY"));
    if x.is_none() && wayland.is_none() {
        return Err("No display to open a window on (neither DISPLAY nor WAYLAND_DISPLAY is set)".into());
    }
    let x_reason = x.map(|d| match parse_x(&d) {
        None => Err(format!("Couldn't open a window: DISPLAY={d} is not a display name like :0 or host:0")),
        Some(XServer::Local(sock)) if !(probe.exists)(&sock) => Err(format!(
            "Couldn't open a window on display {d}: no X server is running there ({} does not exist)",
            sock.display()
        )),
        Some(XServer::Tcp(host, port)) => (probe.connect)(&host, port)
            .map_err(|e| format!("Couldn't open a window on display {d}: no X server answers at {host}:{port} ({e})")),
        Some(XServer::Local(_)) => Ok(()),
    });
    let w_reason = wayland.map(|w| {
        let sock = if Path::new(&w).is_absolute() {
            PathBuf::from(&w)
        } else {
            match get("XDG_RUNTIME_DIR") {
                Some(dir) => Path::new(&dir).join(&w),
                None => {
                    return Err(format!("Couldn't open a window on Wayland display {w}: XDG_RUNTIME_DIR is not set"))
                }
            }
        };
        if (probe.exists)(&sock) {
            Ok(())
        } else {
            Err(format!("Couldn't open a window on Wayland display {w}: {} does not exist", sock.display()))
        }
    });
    match (x_reason, w_reason) {
        (Some(Ok(())), _) | (_, Some(Ok(()))) => Ok(()),
        (Some(Err(e)), _) | (None, Some(Err(e))) => Err(e),
        (None, None) => unreachable!("one of them is set"),
    }
}

/// The display a headed Chromium opens its window on, as the user knows it (`DISPLAY`, else
/// `WAYLAND_DISPLAY`); `"?"` when neither is set.
pub(crate) fn name() -> String {
    ["DISPLAY", "WAYLAND_DISPLAY"]
        .iter()
        .find_map(|k| std::env::var(k).ok().filter(|v| !v.is_empty()))
        .unwrap_or_else(|| "?".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_parse_to_a_socket_or_a_port() {
        assert_eq!(parse_x(":0"), Some(XServer::Local("/tmp/.X11-unix/X0".into())));
        assert_eq!(parse_x(":12.0"), Some(XServer::Local("/tmp/.X11-unix/X12".into())));
        assert_eq!(parse_x("unix:3"), Some(XServer::Local("/tmp/.X11-unix/X3".into())));
        assert_eq!(parse_x("localhost:10.0"), Some(XServer::Tcp("localhost".into(), 6010)));
        assert_eq!(parse_x("[::1]:2"), Some(XServer::Tcp("::1".into(), 6002)));
        assert_eq!(parse_x("nonsense"), None);
        assert_eq!(parse_x(":x"), None);
    }

    #[test]
    fn a_tcp_display_must_answer_and_a_wayland_socket_exist() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| OsString::from(v))
        };
        let probe = || Probe::fake(&["/run/user/1/wayland-1"], &[6010]);
        assert!(check(&env(&[("DISPLAY", "localhost:10")]), &probe()).is_ok());
        let e = check(&env(&[("DISPLAY", "localhost:11")]), &probe()).unwrap_err();
        assert!(
            e.starts_with("Couldn't open a window on display localhost:11: no X server answers at localhost:6011"),
            "{e}"
        );
        let wl = env(&[("WAYLAND_DISPLAY", "wayland-2"), ("XDG_RUNTIME_DIR", "/run/user/1")]);
        assert_eq!(
            check(&wl, &probe()).unwrap_err(),
            "Couldn't open a window on Wayland display wayland-2: /run/user/1/wayland-2 does not exist"
        );
        // Either one reachable is enough.
        let both = env(&[("DISPLAY", ":5"), ("WAYLAND_DISPLAY", "wayland-1"), ("XDG_RUNTIME_DIR", "/run/user/1")]);
        assert!(check(&both, &probe()).is_ok());
        assert!(check(&env(&[("DISPLAY", "bad")]), &probe()).unwrap_err().contains("not a display name"));
    }
}
