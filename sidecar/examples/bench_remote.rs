//! Remote workspaces (issue 28): a remote pane against plain `ssh -tt` to the same sshd, in the
//! same run. The remote is the tests' (`sidecar/tests/common/sshd.rs`): OpenSSH's sshd in a
//! private network namespace on this machine, so both paths cross the same loopback and the
//! ratios are what Porthole adds. Needs root (namespaces). Prints plain `name value` lines:
//! - `remote.echo_p50_ms`, `remote.echo_p99_ms`: one byte to a raw-mode `cat` in a remote pane
//!   (the local sidecar's terminal socket, forwarded through the tunnel to the remote daemon's
//!   PTY) until its echo comes back; `remote.ssh_echo_p50_ms`, `…_p99_ms`: the same through
//!   `ssh -tt`; `remote.echo_ratio`: p50 remote ÷ ssh (target ≤ 1.1);
//! - `remote.cat_s`, `remote.ssh_cat_s`: 20 MB of 80-column lines printed on the remote until
//!   all of it arrived (the pane acks as it reads, as the UI does); `remote.cat_ratio`:
//!   throughput remote ÷ ssh (target ≥ 0.9);
//! - `remote.reconnect_ms`: the link's ssh killed → the link connected again (median of
//!   `BENCH_REMOTE_DROPS`, default 3; target ≤ 2000 on loopback).
//!
//! Run: `cargo xtask bench remote`. Environment: `BENCH_REMOTE_KEYS` (default 300),
//! `BENCH_REMOTE_MB` (default 20), `BENCH_REMOTE_ROUNDS` for the cat runs (default 3, medians).
//! The 300-module page through the tunnel vs direct waits for previews through the tunnel.

mod common;

/// The tests' remote (its parent must offer `temp_dir`, `send_signal` and `pid_gone`, below).
#[path = "../tests/common/sshd.rs"]
#[allow(dead_code)]
mod sshd;

/// A fresh directory under the system temp dir.
fn temp_dir(tag: &str) -> std::path::PathBuf {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    let d = std::env::temp_dir().join(format!(
        "porthole-bench-{}-{tag}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// kill(2).
fn send_signal(pid: u32, sig: i32) {
    assert!(pid > 1);
    // SAFETY: kill(2) on a positive pid this bench started (through the harness).
    unsafe { libc::kill(pid as i32, sig) };
}

/// True once `pid` is gone or a zombie.
fn pid_gone(pid: i64) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(s) => s.rsplit(')').next().map(|r| r.trim_start().starts_with('Z')).unwrap_or(true),
    }
}

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{env_usize, median, percentile, sidecar_binary, start_sidecar, Sidecar};
use futures_util::{SinkExt, StreamExt};
use sidecar::constants::ACK_CHUNK_BYTES;
use sshd::{TestSshd, HOST_ALIAS};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::Message;

type Ws = tokio_tungstenite::WebSocketStream<TcpStream>;

/// The raw-mode echo program, the same on both paths.
const ECHO: &str = "stty raw -echo; echo READY; exec cat";

/// A remote terminal running `sh -c script` through the forward; its id.
async fn remote_terminal(sc: &Sidecar, script: &str) -> String {
    let body = serde_json::json!({"cols": 80, "rows": 24, "command": ["sh", "-c", script]});
    let (st, v) = sc.request("POST", "/api/remotes/r1/api/terminals", Some(body)).await;
    assert_eq!(st, 201, "remote terminal: {v}");
    v["id"].as_str().unwrap().to_string()
}

async fn remote_socket(sc: &Sidecar, id: &str) -> Ws {
    let url = format!("ws://127.0.0.1:{}/api/remotes/r1/api/terminals/{id}/socket", sc.port);
    let mut req = url.into_client_request().unwrap();
    req.headers_mut().insert("authorization", HeaderValue::from_str(&format!("Bearer {}", sc.token)).unwrap());
    let stream = TcpStream::connect(("127.0.0.1", sc.port)).await.unwrap();
    stream.set_nodelay(true).unwrap();
    tokio_tungstenite::client_async(req, stream).await.unwrap().0
}

/// Keystroke echo through a remote pane, in ms per key.
async fn pane_echo(sc: &Sidecar, keys: usize) -> Vec<f64> {
    let id = remote_terminal(sc, ECHO).await;
    let mut ws = remote_socket(sc, &id).await;
    let mut seen = Vec::new();
    while !seen.windows(5).any(|w| w == b"READY") {
        if let Some(Ok(Message::Binary(b))) = ws.next().await {
            seen.extend_from_slice(&b);
        }
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    let (mut samples, mut unacked) = (Vec::with_capacity(keys), 0usize);
    for i in 0..keys {
        let key = b'a' + (i % 26) as u8;
        let t0 = Instant::now();
        ws.send(Message::Binary(vec![key].into())).await.unwrap();
        loop {
            match ws.next().await {
                Some(Ok(Message::Binary(b))) => {
                    unacked += b.len();
                    if b.contains(&key) {
                        break;
                    }
                }
                Some(Ok(_)) => {}
                other => panic!("remote socket ended: {other:?}"),
            }
        }
        samples.push(t0.elapsed().as_secs_f64() * 1000.0);
        if unacked >= 1024 {
            ws.send(Message::Text(format!(r#"{{"type":"ack","bytes":{unacked}}}"#).into())).await.unwrap();
            unacked = 0;
        }
    }
    samples
}

/// `ssh -tt` to the test remote running `script`, stdin and stdout piped.
fn ssh_tt(remote: &TestSshd, script: &str) -> std::process::Child {
    Command::new("ssh")
        .arg("-tt")
        .arg("-F")
        .arg(&remote.ssh_config)
        .arg(HOST_ALIAS)
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("ssh")
}

/// Keystroke echo through plain `ssh -tt`, in ms per key. Blocking.
fn ssh_echo(remote: &TestSshd, keys: usize) -> Vec<f64> {
    let mut child = ssh_tt(remote, ECHO);
    let (mut input, mut output) = (child.stdin.take().unwrap(), child.stdout.take().unwrap());
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    while !seen.windows(5).any(|w| w == b"READY") {
        let n = output.read(&mut buf).unwrap();
        assert!(n > 0, "ssh ended before READY");
        seen.extend_from_slice(&buf[..n]);
    }
    std::thread::sleep(Duration::from_millis(100));
    let mut samples = Vec::with_capacity(keys);
    for i in 0..keys {
        let key = b'a' + (i % 26) as u8;
        let t0 = Instant::now();
        input.write_all(&[key]).unwrap();
        input.flush().unwrap();
        loop {
            let n = output.read(&mut buf).unwrap();
            assert!(n > 0, "ssh ended");
            if buf[..n].contains(&key) {
                break;
            }
        }
        samples.push(t0.elapsed().as_secs_f64() * 1000.0);
    }
    let _ = child.kill();
    let _ = child.wait();
    samples
}

/// The flood both paths print: `mb` MB of 80-column lines, generated on the remote.
fn flood_script(mb: usize) -> String {
    format!("yes {} | head -c {}", "a".repeat(79), mb * 1_000_000)
}

/// The flood through a remote pane (acking as it reads; a catch-up's skipped bytes count as
/// arrived) → seconds.
async fn pane_cat(sc: &Sidecar, mb: usize) -> f64 {
    let id = remote_terminal(sc, &format!("read go; {}", flood_script(mb))).await;
    let mut ws = remote_socket(sc, &id).await;
    ws.send(Message::Binary(b"\n".to_vec().into())).await.unwrap();
    let start = Instant::now();
    let (mut total, mut unacked, mut state_left) = (0usize, 0usize, 0usize);
    loop {
        match ws.next().await {
            Some(Ok(Message::Binary(b))) => {
                let state = b.len().min(state_left);
                state_left -= state;
                total += b.len() - state;
                unacked += b.len();
                if unacked as u64 >= ACK_CHUNK_BYTES {
                    ws.send(Message::Text(format!(r#"{{"type":"ack","bytes":{unacked}}}"#).into())).await.unwrap();
                    unacked = 0;
                }
            }
            Some(Ok(Message::Text(t))) if t.contains("\"exit\"") => break,
            Some(Ok(Message::Text(t))) if t.contains("\"catchup\"") => {
                let v: serde_json::Value = serde_json::from_str(&t).unwrap();
                total += v["skipped"].as_u64().unwrap() as usize;
                state_left = v["bytes"].as_u64().unwrap() as usize;
            }
            Some(Ok(_)) => {}
            other => panic!("remote socket ended: {other:?}"),
        }
    }
    let secs = start.elapsed().as_secs_f64();
    // A PTY turns each "\n" into "\r\n": at least the flood's bytes arrived.
    assert!(total >= mb * 1_000_000, "the pane got {total} bytes of {} MB", mb);
    secs
}

/// The flood through `ssh -tt` until EOF → seconds. Blocking.
fn ssh_cat(remote: &TestSshd, mb: usize) -> f64 {
    let mut child = ssh_tt(remote, &format!("read go; {}", flood_script(mb)));
    let (mut input, mut output) = (child.stdin.take().unwrap(), child.stdout.take().unwrap());
    input.write_all(b"\n").unwrap();
    let start = Instant::now();
    let mut buf = vec![0u8; 64 * 1024];
    let mut total = 0usize;
    loop {
        match output.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => total += n,
        }
    }
    let secs = start.elapsed().as_secs_f64();
    let _ = child.wait();
    assert!(total >= mb * 1_000_000, "ssh got {total} bytes of {mb} MB");
    secs
}

/// Kills the link's ssh and times until the link is connected again, in ms.
async fn reconnect(sc: &Sidecar) -> f64 {
    let v = sc.req("GET", "/api/remotes/r1", None).await;
    let ssh = v["ssh_pid"].as_u64().expect("ssh_pid") as u32;
    let before = v["reconnects"].as_u64().unwrap_or(0);
    let t0 = Instant::now();
    send_signal(ssh, 9);
    loop {
        let v = sc.req("GET", "/api/remotes/r1", None).await;
        if v["state"] == "connected" && v["reconnects"].as_u64().unwrap_or(0) > before {
            return t0.elapsed().as_secs_f64() * 1000.0;
        }
        assert!(t0.elapsed() < Duration::from_secs(60), "the link never came back: {v}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[tokio::main]
async fn main() {
    let keys = env_usize("BENCH_REMOTE_KEYS", 300);
    let mb = env_usize("BENCH_REMOTE_MB", 20);
    let rounds = env_usize("BENCH_REMOTE_ROUNDS", 3);
    let drops = env_usize("BENCH_REMOTE_DROPS", 3);
    let remote = TestSshd::start(&[]);
    // The local sidecar inherits these: its links use the test remote's ssh config, and the
    // remote runs this very binary (the same machine).
    // SAFETY: set before any other thread of this process reads the environment.
    unsafe {
        std::env::set_var("PORTHOLE_SSH_CONFIG", &remote.ssh_config);
        std::env::set_var("PORTHOLE_REMOTE_BIN", sidecar_binary());
    }
    let home = temp_dir("home");
    let sc = start_sidecar(&home);
    let (st, v) = sc.request("POST", "/api/remotes", Some(serde_json::json!({"host": HOST_ALIAS}))).await;
    assert_eq!(st, 201, "connect: {v}");

    let mut pane = pane_echo(&sc, keys).await;
    let r = &remote;
    let mut ssh = std::thread::scope(|s| s.spawn(|| ssh_echo(r, keys)).join().unwrap());
    pane.sort_by(f64::total_cmp);
    ssh.sort_by(f64::total_cmp);
    let (p50, s50) = (percentile(&pane, 0.5), percentile(&ssh, 0.5));
    println!("remote.echo_p50_ms {p50:.3}");
    println!("remote.echo_p99_ms {:.3}", percentile(&pane, 0.99));
    println!("remote.ssh_echo_p50_ms {s50:.3}");
    println!("remote.ssh_echo_p99_ms {:.3}", percentile(&ssh, 0.99));
    println!("remote.echo_ratio {:.3}", p50 / s50);

    let (mut pane_s, mut ssh_s) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        pane_s.push(pane_cat(&sc, mb).await);
        ssh_s.push(std::thread::scope(|s| s.spawn(|| ssh_cat(r, mb)).join().unwrap()));
    }
    let (pc, sc_s) = (median(&mut pane_s), median(&mut ssh_s));
    println!("remote.cat_s {pc:.3}");
    println!("remote.ssh_cat_s {sc_s:.3}");
    println!("remote.cat_ratio {:.3}", sc_s / pc);

    let mut times = Vec::new();
    for _ in 0..drops {
        times.push(reconnect(&sc).await);
    }
    println!("remote.reconnect_ms {:.0}", median(&mut times));
    drop(sc);
    drop(remote);
    let _ = std::fs::remove_dir_all(home);
}
