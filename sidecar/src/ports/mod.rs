//! Listening TCP ports of a pane's processes (design §5): which loopback or any-interface
//! sockets the pane's process tree listens on.
//!
//! Architecture Invariant: this module knows nothing of HTTP, panes or terminals. Callers
//! hand it a [`Root`] (a pid and whether its tree is still there); it hands back
//! [`Listener`]s. One scan per root is in flight at a time; concurrent callers share it.
//!
//! Which processes count (the deliberate choice design §8 asks for): the root and all its
//! descendants by parent pid, **plus** every process still in the root's session (a child
//! that double-forked to daemonize is re-parented to init but keeps the session; the
//! sidecar's `DELETE` kills it too, so it is the pane's). A process that double-forked *and*
//! called `setsid(2)` has cut both ties and is not counted.
//!
//! Platforms: Linux reads `/proc` for processes and asks netlink `sock_diag` for listening
//! sockets (`linux.rs`, `diag.rs`; the `/proc/net/tcp{,6}` tables when netlink is refused);
//! elsewhere every scan fails with
//! [`ScanError::Unsupported`] (`unsupported.rs`). The choice is made once, at the `mod`
//! declarations below.

// Pure and tested everywhere; only the Linux scan uses them today.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub(crate) mod parse;
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
mod tree;

#[cfg(target_os = "linux")]
mod diag;
#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
use linux as sys;

#[cfg(not(target_os = "linux"))]
mod unsupported;
#[cfg(not(target_os = "linux"))]
use unsupported as sys;

use std::collections::HashMap;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::watch;

/// Whose ports to scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Root {
    /// The pane's child pid: the session leader, so also the session id.
    pub pid: i32,
    /// True while the child has not been reaped, so `pid` still names it and its
    /// descendants count; false once it was reaped (only its lingering session counts:
    /// the pid may have been reused).
    pub tree: bool,
}

/// One listening socket the pane offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listener {
    /// TCP port (1..=65535).
    pub port: u16,
    /// The bound address: 127.0.0.0/8, 0.0.0.0, `::` or `::1` (an IPv4-mapped bind is
    /// reported as its IPv4 address).
    pub address: IpAddr,
    /// The holder nearest the root (a socket shared by a parent and its child is reported
    /// once, for the parent).
    pub pid: i32,
    /// The holder's command name (`/proc/<pid>/comm`); empty if it exited mid-scan.
    pub process: String,
}

/// Why a scan produced no list. A scan that finds nothing is `Ok(vec![])`, not an error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScanError {
    /// Occurs when a file the whole scan depends on (`/proc/net/tcp`, `/proc`) cannot be
    /// read. A single process's unreadable `fd` directory is skipped instead.
    Read {
        /// The path that failed.
        path: String,
        /// The OS error.
        error: String,
    },
    /// Occurs when `/proc/net/tcp{,6}` is not in the format the kernel documents.
    Format {
        /// The table.
        path: String,
        /// Which line and what was wrong.
        detail: String,
    },
    /// Occurs when the scan task ended without a result (it panicked).
    Aborted,
    /// Occurs on a platform without a port scan; carries the OS name.
    Unsupported(&'static str),
}

impl std::fmt::Display for ScanError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ScanError::Read { path, error } => write!(f, "failed to read {path}: {error}"),
            ScanError::Format { path, detail } => write!(f, "unexpected format in {path}: {detail}"),
            ScanError::Aborted => write!(f, "port scan ended without a result"),
            ScanError::Unsupported(os) => write!(f, "port scanning is not supported on {os} yet"),
        }
    }
}

impl std::error::Error for ScanError {}

type ScanResult = Result<Arc<Vec<Listener>>, ScanError>;
type ScanFn = dyn Fn(&Path, Root) -> Result<Vec<Listener>, ScanError> + Send + Sync;

/// The port scanner. Cheap to share (`Arc`); holds only the scans in flight.
pub struct Ports {
    proc_root: PathBuf,
    scan_fn: Box<ScanFn>,
    inflight: Mutex<HashMap<Root, watch::Receiver<Option<ScanResult>>>>,
    started: AtomicU64,
}

impl Ports {
    /// A scanner over the real `/proc`.
    pub fn new() -> Arc<Ports> {
        Ports::with(PathBuf::from("/proc"), Box::new(sys::scan))
    }

    fn with(proc_root: PathBuf, scan_fn: Box<ScanFn>) -> Arc<Ports> {
        Arc::new(Ports { proc_root, scan_fn, inflight: Mutex::new(HashMap::new()), started: AtomicU64::new(0) })
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<Root, watch::Receiver<Option<ScanResult>>>> {
        self.inflight.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Number of scans started so far (for tests and the benchmark).
    pub fn scans_started(&self) -> u64 {
        self.started.load(Ordering::Relaxed)
    }

    /// The listeners of `root`'s processes, sorted by port then address.
    ///
    /// If a scan of the same root is in flight, waits for it and returns its result (every
    /// waiter gets the same `Arc`); otherwise starts one on the blocking pool. A call that
    /// arrives after a scan finished starts a fresh one: results are never cached. Dropping
    /// the future does not cancel the scan others wait on.
    pub async fn scan(self: &Arc<Self>, root: Root) -> ScanResult {
        let mut rx = {
            let mut map = self.lock();
            match map.get(&root) {
                Some(rx) => rx.clone(),
                None => {
                    let (tx, rx) = watch::channel(None);
                    map.insert(root, rx.clone());
                    self.started.fetch_add(1, Ordering::Relaxed);
                    let me = self.clone();
                    tokio::task::spawn_blocking(move || {
                        // Removes the entry even if the scan panics, so the next call
                        // starts afresh instead of waiting on a dead channel.
                        let guard = Done { ports: &me, root };
                        let result = (me.scan_fn)(&me.proc_root, root).map(Arc::new);
                        drop(guard);
                        let _ = tx.send(Some(result));
                    });
                    rx
                }
            }
        };
        let result = match rx.wait_for(Option::is_some).await {
            Ok(v) => v.clone().unwrap_or(Err(ScanError::Aborted)),
            Err(_) => Err(ScanError::Aborted),
        };
        result
    }
}

struct Done<'a> {
    ports: &'a Ports,
    root: Root,
}

impl Drop for Done<'_> {
    fn drop(&mut self) {
        self.ports.lock().remove(&self.root);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Barrier;

    fn listener(port: u16) -> Listener {
        Listener { port, address: "127.0.0.1".parse().unwrap(), pid: 1, process: "x".into() }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_scans_of_one_root_share_one_scan() {
        let gate = Arc::new(Barrier::new(2));
        let g = gate.clone();
        let ports = Ports::with(
            PathBuf::from("/nonexistent"),
            Box::new(move |_, _| {
                g.wait(); // held until both callers are waiting
                Ok(vec![listener(8000)])
            }),
        );
        let root = Root { pid: 42, tree: true };
        let (a, b) = (ports.clone(), ports.clone());
        let ta = tokio::spawn(async move { a.scan(root).await });
        let tb = tokio::spawn(async move { b.scan(root).await });
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        gate.wait();
        let (ra, rb) = (ta.await.unwrap().unwrap(), tb.await.unwrap().unwrap());
        assert!(Arc::ptr_eq(&ra, &rb));
        assert_eq!(ports.scans_started(), 1);
        // A later call starts a new scan (no caching).
        let g2 = gate.clone();
        let later = tokio::task::spawn_blocking(move || g2.wait());
        assert_eq!(ports.scan(root).await.unwrap().len(), 1);
        later.await.unwrap();
        assert_eq!(ports.scans_started(), 2);
    }

    #[tokio::test]
    async fn different_roots_scan_separately_and_errors_are_shared_not_cached() {
        let ports = Ports::with(
            PathBuf::from("/nonexistent"),
            Box::new(|_, root| if root.pid == 1 { Err(ScanError::Aborted) } else { Ok(vec![]) }),
        );
        assert_eq!(ports.scan(Root { pid: 1, tree: true }).await, Err(ScanError::Aborted));
        assert_eq!(ports.scan(Root { pid: 2, tree: true }).await.unwrap().len(), 0);
        assert_eq!(ports.scans_started(), 2);
        assert!(ports.lock().is_empty());
    }

    #[tokio::test]
    async fn a_panicking_scan_is_aborted_and_the_next_call_starts_afresh() {
        let ports = Ports::with(PathBuf::from("/nonexistent"), Box::new(|_, _| panic!("boom")));
        let root = Root { pid: 3, tree: true };
        assert_eq!(ports.scan(root).await, Err(ScanError::Aborted));
        assert!(ports.lock().is_empty());
        assert_eq!(ports.scan(root).await, Err(ScanError::Aborted));
        assert_eq!(ports.scans_started(), 2);
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn real_proc_scan_of_this_process_finds_its_listener() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let me = std::process::id() as i32;
        let got = Ports::new().scan(Root { pid: me, tree: true }).await.unwrap();
        assert!(got.iter().any(|x| x.port == port && x.pid == me), "{got:?}");
    }
}
