//! The Linux scan: `/proc/net/tcp{,6}` for listening sockets, `/proc/<pid>/stat` for the
//! process tree, `/proc/<pid>/fd` for which process holds which socket.

use std::collections::HashMap;
use std::io::ErrorKind;
use std::net::IpAddr;
use std::path::Path;

use super::parse::{self, NetListener};
use super::{diag, tree};
use super::{Listener, Root, ScanError};

/// Where the listening sockets come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Source {
    /// `sock_diag` netlink (fast), falling back to the `/proc/net` tables if refused.
    Live,
    /// Only `<proc_root>/net/tcp{,6}` (tests point `proc_root` at a fake tree).
    #[cfg_attr(not(test), allow(dead_code))]
    Tables,
}

/// Scans the pane rooted at `root` in the real `/proc`. Blocking.
pub(crate) fn scan(proc_root: &Path, root: Root) -> Result<Vec<Listener>, ScanError> {
    scan_with(proc_root, root, Source::Live)
}

/// Scans the pane rooted at `root` under `proc_root`. Blocking.
///
/// Order: the process tree, then the socket inodes its members hold (an unreadable
/// `fd` directory skips that process), and only if there are any, the listening sockets
/// (so a pane that holds no socket costs no socket-table walk). Only sockets in the
/// sidecar's own network namespace are seen (`/proc/net` is `/proc/self/net`; netlink is
/// per namespace): a pane in another namespace serves nothing the sidecar's loopback
/// could reach anyway.
pub(crate) fn scan_with(proc_root: &Path, root: Root, source: Source) -> Result<Vec<Listener>, ScanError> {
    let dir = std::fs::read_dir(proc_root)
        .map_err(|e| ScanError::Read { path: proc_root.display().to_string(), error: e.to_string() })?;
    let mut procs = Vec::new();
    for entry in dir.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else { continue };
        // A process may exit mid-scan: unreadable entries are skipped.
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else { continue };
        if let Some(st) = parse::parse_stat(&stat) {
            procs.push((pid, st));
        }
    }

    // socket inode → (depth, pid) of its holder nearest the root, then the lowest pid.
    let mut held: HashMap<u64, (u32, i32)> = HashMap::new();
    for (pid, depth) in tree::members(root, &procs) {
        let fd_dir = proc_root.join(pid.to_string()).join("fd");
        let fds = match std::fs::read_dir(&fd_dir) {
            Ok(d) => d,
            Err(e) => {
                // Another user's process (setuid), or it just exited: skip it, not the scan.
                tracing::debug!(pid, error = %e, "ports: skipping unreadable fd directory");
                continue;
            }
        };
        for fd in fds.flatten() {
            let Ok(target) = std::fs::read_link(fd.path()) else { continue };
            let Some(inode) = target.to_str().and_then(parse::socket_inode) else { continue };
            let slot = held.entry(inode).or_insert((depth, pid));
            if (depth, pid) < *slot {
                *slot = (depth, pid);
            }
        }
    }
    if held.is_empty() {
        return Ok(Vec::new());
    }

    let listening = match source {
        Source::Tables => tables(proc_root)?,
        Source::Live => match diag::listeners() {
            Ok(l) => l,
            Err(e) => {
                tracing::debug!(error = %e, "ports: sock_diag unavailable, reading /proc/net/tcp{{,6}}");
                tables(proc_root)?
            }
        },
    };

    // (port, address) → (depth, pid): one row per bind, the holder nearest the root.
    let mut found: HashMap<(u16, IpAddr), (u32, i32)> = HashMap::new();
    for l in listening.into_iter().filter(|l| parse::serves_localhost(l.addr)) {
        if let Some(&holder) = held.get(&l.inode) {
            let slot = found.entry((l.port, l.addr)).or_insert(holder);
            if holder < *slot {
                *slot = holder;
            }
        }
    }

    let mut out: Vec<Listener> = found
        .into_iter()
        .map(|((port, address), (_, pid))| Listener { port, address, pid, process: process_name(proc_root, pid) })
        .collect();
    out.sort_by(|a, b| (a.port, a.address).cmp(&(b.port, b.address)));
    Ok(out)
}

/// Every LISTEN socket in `<proc_root>/net/tcp` and `tcp6` (a missing `tcp6` means IPv6 is
/// disabled: no rows).
fn tables(proc_root: &Path) -> Result<Vec<NetListener>, ScanError> {
    let mut out = Vec::new();
    for (file, v6) in [("net/tcp", false), ("net/tcp6", true)] {
        let path = proc_root.join(file);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if v6 && e.kind() == ErrorKind::NotFound => continue,
            Err(e) => return Err(ScanError::Read { path: path.display().to_string(), error: e.to_string() }),
        };
        out.extend(
            parse::parse_net_table(&text, v6)
                .map_err(|bad| ScanError::Format { path: path.display().to_string(), detail: bad.0 })?,
        );
    }
    Ok(out)
}

/// `/proc/<pid>/comm` without its newline; empty when the process is already gone.
fn process_name(proc_root: &Path, pid: i32) -> String {
    std::fs::read_to_string(proc_root.join(pid.to_string()).join("comm"))
        .map(|s| s.trim_end_matches('\n').to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;
    use std::path::PathBuf;

    const HEADER: &str =
        "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n";

    fn row(local: &str, inode: u64) -> String {
        format!("   0: {local} 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 {inode} 1 0 100 0 0 10 0\n")
    }

    struct FakeProc(PathBuf);

    impl FakeProc {
        fn new(tag: &str) -> FakeProc {
            let d = std::env::temp_dir().join(format!("porthole-fakeproc-{}-{tag}", std::process::id()));
            let _ = std::fs::remove_dir_all(&d);
            std::fs::create_dir_all(d.join("net")).unwrap();
            FakeProc(d)
        }
        fn net(&self, tcp: &str, tcp6: Option<&str>) {
            std::fs::write(self.0.join("net/tcp"), format!("{HEADER}{tcp}")).unwrap();
            if let Some(t6) = tcp6 {
                std::fs::write(self.0.join("net/tcp6"), format!("{HEADER}{t6}")).unwrap();
            }
        }
        fn proc(&self, pid: i32, ppid: i32, sid: i32, name: &str, sockets: &[u64]) {
            let d = self.0.join(pid.to_string());
            std::fs::create_dir_all(d.join("fd")).unwrap();
            std::fs::write(d.join("stat"), format!("{pid} ({name}) S {ppid} {sid} {sid} 0 0")).unwrap();
            std::fs::write(d.join("comm"), format!("{name}\n")).unwrap();
            symlink("/dev/null", d.join("fd/0")).unwrap();
            for (i, s) in sockets.iter().enumerate() {
                symlink(format!("socket:[{s}]"), d.join(format!("fd/{}", i + 3))).unwrap();
            }
        }
    }

    impl Drop for FakeProc {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn rows(v: &[Listener]) -> Vec<(u16, String, i32, String)> {
        v.iter().map(|l| (l.port, l.address.to_string(), l.pid, l.process.clone())).collect()
    }

    #[cfg(target_endian = "little")]
    #[test]
    fn scan_finds_tree_sockets_dedupes_and_filters_addresses() {
        let fp = FakeProc::new("tree");
        fp.net(
            &[
                row("0100007F:1F90", 11), // 127.0.0.1:8080, held by parent and child
                row("00000000:1F91", 12), // 0.0.0.0:8081
                row("0F02000A:1F92", 13), // 10.0.2.15:8082: specific non-loopback, not offered
                row("0100007F:2000", 14), // another pane's
            ]
            .concat(),
            Some(
                &[row("00000000000000000000000000000000:1F91", 21), row("00000000000000000000000001000000:1F93", 22)]
                    .concat(),
            ),
        );
        fp.proc(1, 0, 1, "init", &[]);
        fp.proc(100, 50, 100, "bash", &[]);
        fp.proc(101, 100, 100, "node", &[11, 12]);
        fp.proc(102, 101, 100, "node worker", &[11, 21, 13]);
        fp.proc(103, 1, 100, "daemon", &[22]); // double-forked, same session
        fp.proc(200, 50, 200, "bash", &[14]);
        let got = scan_with(&fp.0, Root { pid: 100, tree: true }, Source::Tables).unwrap();
        assert_eq!(
            rows(&got),
            vec![
                (8080, "127.0.0.1".into(), 101, "node".into()),
                (8081, "0.0.0.0".into(), 101, "node".into()),
                (8081, "::".into(), 102, "node worker".into()),
                (8083, "::1".into(), 103, "daemon".into()),
            ]
        );
    }

    #[cfg(target_endian = "little")]
    #[test]
    fn unreadable_fd_dir_skips_that_process_only() {
        let fp = FakeProc::new("unreadable");
        fp.net(&[row("0100007F:1F90", 11), row("0100007F:1F91", 12)].concat(), None);
        fp.proc(100, 50, 100, "sh", &[]);
        fp.proc(101, 100, 100, "a", &[11]);
        fp.proc(102, 100, 100, "b", &[12]);
        // Make 101's fd "directory" unreadable as a directory (works even as root).
        std::fs::remove_dir_all(fp.0.join("101/fd")).unwrap();
        std::fs::write(fp.0.join("101/fd"), "").unwrap();
        let got = scan_with(&fp.0, Root { pid: 100, tree: true }, Source::Tables).unwrap();
        assert_eq!(rows(&got), vec![(8081, "127.0.0.1".into(), 102, "b".into())]);
    }

    #[test]
    fn unreadable_or_malformed_net_table_fails_the_scan() {
        let fp = FakeProc::new("fail");
        fp.proc(1, 0, 1, "init", &[5]);
        // No net/tcp at all.
        let e = scan_with(&fp.0, Root { pid: 1, tree: true }, Source::Tables).unwrap_err();
        assert!(matches!(e, ScanError::Read { .. }), "{e}");
        std::fs::write(fp.0.join("net/tcp"), format!("{HEADER}not a row\n")).unwrap();
        let e = scan_with(&fp.0, Root { pid: 1, tree: true }, Source::Tables).unwrap_err();
        assert!(matches!(e, ScanError::Format { .. }), "{e}");
        assert!(e.to_string().contains("line 2"), "{e}");
    }

    #[test]
    fn no_listeners_is_an_empty_list() {
        let fp = FakeProc::new("empty");
        fp.net("", Some(""));
        fp.proc(1, 0, 1, "init", &[5]);
        assert_eq!(scan_with(&fp.0, Root { pid: 1, tree: true }, Source::Tables).unwrap(), vec![]);
        // A pane holding no socket never reads the socket tables (absent here).
        let bare = FakeProc::new("bare");
        bare.proc(1, 0, 1, "init", &[]);
        assert_eq!(scan_with(&bare.0, Root { pid: 1, tree: true }, Source::Tables).unwrap(), vec![]);
    }
}
