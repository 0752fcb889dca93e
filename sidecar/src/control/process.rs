//! Which pane a local process runs in, read from `/proc` (Linux; elsewhere nothing is
//! found): the caller of a control verb is the pane its process runs in, not only the pane
//! its token names (issue 22 item 12: inside tmux, the environment, token included, is that
//! of whichever pane started the tmux server).
//!
//! A process runs in a terminal when it, or an ancestor, is the terminal's child (a session
//! leader) or in its session. A process under a tmux server runs in the panes whose PTYs
//! the tmux *clients* attached to its tmux session run on: the server is asked (its own
//! binary, if a root-owned one, on the socket named by the process's `TMUX`, which must be a
//! socket that very server listens on).
//!
//! Nothing here trusts the caller: the process is the one owning the connection's socket
//! ([`owns_connection`]), and its ancestry and environment are read from the kernel.

use std::collections::BTreeSet;
use std::io::Read;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::ports::parse::{parse_stat, socket_inode};

/// How long a question to a tmux server may take before it is given up, in milliseconds.
pub const TMUX_ASK_MS: u64 = 2_000;

/// Most ancestors walked up from a process (a loop guard; real chains are short).
const MAX_DEPTH: usize = 64;

/// Where a process runs, as far as the kernel (and a tmux server above it) tells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// In the terminal whose child has this pid (directly, or through the one tmux client
    /// attached to its tmux session).
    Terminal(i32),
    /// Under a tmux server whose session is attached from several terminals (their child
    /// pids), or from none of ours (empty).
    Tmux(Vec<i32>),
    /// In none of the terminals (a daemon, another program's terminal).
    Elsewhere,
}

/// Whether process `pid` holds the IPv4 TCP socket connected from `peer` (the client's end)
/// to `local` (ours): the socket's inode, from `/proc/net/tcp`, is one of its open files.
/// `None` when there is no `/proc/net/tcp` to tell (not Linux).
pub fn owns_connection(pid: i32, peer: SocketAddrV4, local: SocketAddrV4) -> Option<bool> {
    let table = std::fs::read_to_string("/proc/net/tcp").ok()?;
    let Some(inode) = table.lines().skip(1).find_map(|row| connection_inode(row, peer, local)) else {
        return Some(false);
    };
    Some(holds_socket(pid, inode))
}

/// True if and only if one of process `pid`'s open files is the socket of inode `inode`.
fn holds_socket(pid: i32, inode: u64) -> bool {
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else { return false };
    fds.filter_map(|fd| std::fs::read_link(fd.ok()?.path()).ok())
        .any(|target| target.to_str().and_then(socket_inode) == Some(inode))
}

/// The inode of `row` of `/proc/net/tcp` if its local address is `from` and its remote one `to`.
fn connection_inode(row: &str, from: SocketAddrV4, to: SocketAddrV4) -> Option<u64> {
    let mut f = row.split_ascii_whitespace();
    let (_sl, local, remote) = (f.next()?, f.next()?, f.next()?);
    if hex_addr(local)? != from || hex_addr(remote)? != to {
        return None;
    }
    // st, tx_queue:rx_queue, tr:tm->when, retrnsmt, uid, timeout, then the inode.
    f.nth(6)?.parse().ok()
}

/// `0100007F:1F90` (the address as the kernel's host-order word of the network bytes) →
/// `127.0.0.1:8080`.
fn hex_addr(s: &str) -> Option<SocketAddrV4> {
    let (ip, port) = s.split_once(':')?;
    let ip = u32::from_str_radix(ip, 16).ok()?;
    Some(SocketAddrV4::new(Ipv4Addr::from(ip.to_ne_bytes()), u16::from_str_radix(port, 16).ok()?))
}

/// One process of a chain: its pid and session id.
#[derive(Debug, Clone, Copy)]
struct Proc {
    pid: i32,
    session: i32,
}

/// `pid` and its ancestors, nearest first (at most [`MAX_DEPTH`]), as far as `/proc` shows.
fn chain(pid: i32) -> Vec<Proc> {
    let mut out = Vec::new();
    let mut pid = pid;
    while pid > 1 && out.len() < MAX_DEPTH {
        let Some(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok().and_then(|s| parse_stat(&s)) else {
            break;
        };
        out.push(Proc { pid, session: stat.session });
        pid = stat.ppid;
    }
    out
}

/// The terminal (its child's pid, among `terminals`) that `chain` runs in directly.
fn direct(chain: &[Proc], terminals: &[i32]) -> Option<i32> {
    chain.iter().find_map(|p| terminals.iter().copied().find(|&t| p.pid == t || p.session == t))
}

/// Where process `pid` runs, given the child pids of the live terminals. Blocking: reads
/// `/proc` and may ask a tmux server (bounded by [`TMUX_ASK_MS`] per question).
pub fn place(pid: i32, terminals: &[i32]) -> Place {
    let chain = chain(pid);
    if let Some(t) = direct(&chain, terminals) {
        return Place::Terminal(t);
    }
    let Some(server) = chain.iter().skip(1).find(|p| is_tmux(p.pid)) else { return Place::Elsewhere };
    let mut attached: BTreeSet<i32> = BTreeSet::new();
    for client in tmux_clients(pid, server.pid, &chain).unwrap_or_default() {
        if let Some(t) = direct(&self::chain(client), terminals) {
            attached.insert(t);
        }
    }
    match attached.len() {
        1 => Place::Terminal(attached.into_iter().next().unwrap_or_default()),
        _ => Place::Tmux(attached.into_iter().collect()),
    }
}

/// True if and only if `pid` runs the tmux binary (by the file name of its executable).
fn is_tmux(pid: i32) -> bool {
    std::fs::read_link(format!("/proc/{pid}/exe")).is_ok_and(|e| e.file_name().is_some_and(|n| n == "tmux"))
}

/// The executable of tmux server `server`, if it is a system binary (owned by root, writable
/// by no one else): the sidecar runs it, so a program merely named `tmux` is not believed.
fn system_tmux(server: i32) -> Option<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let exe = std::fs::read_link(format!("/proc/{server}/exe")).ok()?;
    let meta = std::fs::metadata(&exe).ok()?;
    (meta.uid() == 0 && meta.mode() & 0o022 == 0).then_some(exe)
}

/// True if and only if process `server` holds the listening unix socket bound at `path` (so
/// a `TMUX` naming another socket, or a fake server on it, is not asked).
fn serves_socket(server: i32, path: &Path) -> bool {
    let Ok(table) = std::fs::read_to_string("/proc/net/unix") else { return false };
    // Num RefCount Protocol Flags Type St Inode Path
    let inode = table.lines().skip(1).find_map(|row| {
        let f: Vec<&str> = row.split_ascii_whitespace().collect();
        (f.len() >= 8 && Path::new(f[7]) == path).then(|| f[6].parse::<u64>().ok()).flatten()
    });
    inode.is_some_and(|inode| holds_socket(server, inode))
}

/// The pids of the tmux clients attached to the session of process `pid` (whose ancestors
/// are `chain`), asked of tmux server `server`. `None` if the process's `TMUX` does not name
/// that server (a socket it listens on) or the server does not answer.
fn tmux_clients(pid: i32, server: i32, chain: &[Proc]) -> Option<Vec<i32>> {
    let environ = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    let tmux = environ.split(|b| *b == 0).find_map(|v| v.strip_prefix(b"TMUX="))?;
    let tmux = std::str::from_utf8(tmux).ok()?;
    // `TMUX` is `socket,server pid,session index`.
    let mut parts = tmux.rsplitn(3, ',');
    let (_session, named, socket) = (parts.next()?, parts.next()?, parts.next()?);
    if named.parse::<i32>().ok()? != server || !serves_socket(server, Path::new(socket)) {
        return None;
    }
    let exe = system_tmux(server)?;
    let panes = ask_tmux(&exe, Path::new(socket), &["list-panes", "-a", "-F", "#{pane_pid} #{session_id}"])?;
    let session = panes.lines().find_map(|l| {
        let (p, s) = l.split_once(' ')?;
        let p: i32 = p.parse().ok()?;
        chain.iter().any(|c| c.pid == p).then(|| s.to_string())
    })?;
    let clients = ask_tmux(&exe, Path::new(socket), &["list-clients", "-F", "#{client_pid} #{session_id}"])?;
    Some(
        clients
            .lines()
            .filter_map(|l| {
                let (p, s) = l.split_once(' ')?;
                (s == session).then(|| p.parse().ok()).flatten()
            })
            .collect(),
    )
}

/// Runs `exe -S socket args…` and returns its standard output, or `None` if it fails or
/// takes longer than [`TMUX_ASK_MS`] (then it is killed).
fn ask_tmux(exe: &Path, socket: &Path, args: &[&str]) -> Option<String> {
    let mut child = Command::new(exe)
        .arg("-S")
        .arg(socket)
        .args(args)
        .env_remove("TMUX")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let deadline = Instant::now() + Duration::from_millis(TMUX_ASK_MS);
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    };
    let mut out = String::new();
    // Its answer is a few lines: it fits the pipe, so it was all written before the exit.
    child.stdout.take()?.take(1 << 20).read_to_string(&mut out).ok()?;
    status.success().then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_connection_is_found_by_both_its_ends() {
        let row = "   3: 0100007F:A1B2 0100007F:1F90 01 00000000:00000000 00:00000000 00000000     0        0 424242 1 0000000000000000 20 4 30 10 -1";
        let from = SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0xA1B2);
        let to = SocketAddrV4::new(Ipv4Addr::LOCALHOST, 8080);
        assert_eq!(connection_inode(row, from, to), Some(424242));
        assert_eq!(connection_inode(row, to, from), None, "the other direction is another socket");
    }

    #[test]
    fn this_process_owns_its_own_connection_and_not_another() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (_server, _) = listener.accept().unwrap();
        let v4 = |a: std::net::SocketAddr| match a {
            std::net::SocketAddr::V4(a) => a,
            _ => unreachable!(),
        };
        let (peer, local) = (v4(client.local_addr().unwrap()), v4(listener.local_addr().unwrap()));
        assert_eq!(owns_connection(std::process::id() as i32, peer, local), Some(true));
        assert_eq!(owns_connection(1, peer, local), Some(false), "init holds no such socket");
    }
}
