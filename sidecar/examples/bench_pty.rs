//! PTY throughput and keystroke latency, direct vs through the sidecar.
//!
//! Run: `cargo run --release -p sidecar --example bench_pty`. Prints plain `name value` lines:
//! - `pty.direct_mb_s`: `cat` of a 200 MB file read straight from a portable-pty master;
//! - `pty.sidecar_mb_s`: the same through the real `porthole-sidecar` binary and its
//!   WebSocket, acking as it reads (protocol §5.1): bytes received plus the bytes a catch-up
//!   said went by (§5.4), until the exit;
//! - `pty.ratio`: sidecar ÷ direct (target ≥ 0.8);
//! - `pty.echo_p50_ms`, `pty.echo_p99_ms`: one byte sent over the WebSocket to a raw-mode
//!   `cat` and its echo received, over 1000 keystrokes (target p99 < 5 ms);
//! - `pty.ctrl_c_ms`: Ctrl-C after a flood (issue #12, report 11): an interactive `sh` runs
//!   `yes` for 10 s into a client that draws at 1.5 MB/s (xterm.js's pace in the field: 2 MiB
//!   in 1.3–2.1 s) and acks each message once drawn, as the UI does; then `^C`, and the time
//!   until the shell's next prompt is drawn (median of 3 runs; target < 500 ms);
//!   `pty.ctrl_c_queued_kb`: what was drawn between the `^C` and the prompt (median).
//!
//! The two throughput runs alternate `BENCH_PTY_ROUNDS` times (default 3) and the medians are
//! printed. Environment: `BENCH_PTY_MB` overrides the file size (default 200),
//! `BENCH_PTY_KEYS` the keystroke count (default 1000), `BENCH_PTY_FLOOD_S` the flood's
//! seconds (default 10), `BENCH_PTY_DRAW_KB_S` the drawing pace in kB/s (default 1500),
//! `BENCH_PTY_CTRL_C_ROUNDS` the Ctrl-C runs (default 3).

mod common;

use std::io::{Read, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use common::{cpu_seconds, env_usize, median, percentile, start_sidecar, Sidecar};
use futures_util::{SinkExt, StreamExt};
use portable_pty::{CommandBuilder, PtySize};
use sidecar::constants::ACK_CHUNK_BYTES;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::Message;

const MB: f64 = 1_000_000.0;

/// Writes `bytes` of printable text (80-column lines of a rolling alphabet) to `path`.
fn make_file(path: &Path, bytes: usize) {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut line = [0u8; 80];
    let mut written = 0;
    let mut k = 0u8;
    while written < bytes {
        for (i, b) in line.iter_mut().enumerate().take(79) {
            *b = b'!' + ((i as u8 + k) % 90);
        }
        line[79] = b'\n';
        let n = line.len().min(bytes - written);
        f.write_all(&line[..n]).unwrap();
        written += n;
        k = k.wrapping_add(1);
    }
    f.flush().unwrap();
}

/// (a) `cat FILE` on a PTY read directly from the master. Returns (bytes read, seconds).
fn direct(file: &Path) -> (usize, f64) {
    let pair = portable_pty::native_pty_system()
        .openpty(PtySize { rows: 50, cols: 200, pixel_width: 0, pixel_height: 0 })
        .unwrap();
    let mut reader = pair.master.try_clone_reader().unwrap();
    let _writer = pair.master.take_writer().unwrap(); // kept alive: dropping it sends EOF
    let mut cmd = CommandBuilder::new("cat");
    cmd.arg(file);
    let start = Instant::now();
    let mut child = pair.slave.spawn_command(cmd).unwrap();
    drop(pair.slave);
    let mut buf = vec![0u8; 64 * 1024];
    let mut total = 0;
    loop {
        match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => total += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break, // EIO after the child exits = EOF
        }
    }
    let secs = start.elapsed().as_secs_f64();
    let _ = child.wait();
    (total, secs)
}

/// Opens a 200×50 terminal running `command`; returns its id.
async fn spawn_terminal(sc: &Sidecar, command: &[&str]) -> String {
    let v = sc.req("POST", "/api/terminals", Some(serde_json::json!({"cols":200,"rows":50,"command":command}))).await;
    v["id"].as_str().unwrap_or_else(|| panic!("spawn failed: {v}")).to_string()
}

/// The terminal's WebSocket (protocol §5), Nagle off.
async fn terminal_socket(sc: &Sidecar, id: &str) -> tokio_tungstenite::WebSocketStream<TcpStream> {
    let mut req = format!("ws://127.0.0.1:{}/api/terminals/{id}/socket", sc.port).into_client_request().unwrap();
    req.headers_mut().insert("authorization", HeaderValue::from_str(&format!("Bearer {}", sc.token)).unwrap());
    let stream = TcpStream::connect(("127.0.0.1", sc.port)).await.unwrap();
    stream.set_nodelay(true).unwrap();
    tokio_tungstenite::client_async(req, stream).await.unwrap().0
}

/// (b) `cat FILE` through the sidecar's WebSocket, acking each message. Returns (bytes, s).
async fn through_sidecar(sc: &Sidecar, file: &Path, expect: usize) -> (usize, f64) {
    // Wait for a newline on stdin so the socket is attached before output starts.
    let script = format!("read go; exec cat '{}'", file.display());
    let id = spawn_terminal(sc, &["sh", "-c", &script]).await;
    let mut ws = terminal_socket(sc, &id).await;
    ws.send(Message::Binary(b"\n".to_vec().into())).await.unwrap();
    let start = Instant::now();
    let mut total = 0usize;
    let mut unacked = 0usize;
    let mut state_left = 0usize;
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
            other => panic!("socket ended: {other:?}"),
        }
    }
    let secs = start.elapsed().as_secs_f64();
    // The echoed newline ("\r\n") precedes the file's bytes.
    assert!(total >= expect, "got {total} bytes, expected at least {expect}");
    (total, secs)
}

/// (c) Keystroke echo: one byte to a raw-mode `cat`, time until it comes back.
async fn echo_latency(sc: &Sidecar, keys: usize) -> Vec<f64> {
    let id = spawn_terminal(sc, &["sh", "-c", "stty raw -echo; echo READY; exec cat"]).await;
    let mut ws = terminal_socket(sc, &id).await;
    let mut seen = Vec::new();
    while !seen.windows(5).any(|w| w == b"READY") {
        if let Some(Ok(Message::Binary(b))) = ws.next().await {
            seen.extend_from_slice(&b);
        }
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    let mut samples = Vec::with_capacity(keys);
    let mut acked = 0usize;
    for i in 0..keys {
        let key = b'a' + (i % 26) as u8;
        let t0 = Instant::now();
        ws.send(Message::Binary(vec![key].into())).await.unwrap();
        loop {
            match ws.next().await {
                Some(Ok(Message::Binary(b))) => {
                    acked += b.len();
                    if b.contains(&key) {
                        break;
                    }
                }
                Some(Ok(_)) => {}
                other => panic!("socket ended: {other:?}"),
            }
        }
        samples.push(t0.elapsed().as_secs_f64() * 1000.0);
        if acked >= 1024 {
            ws.send(Message::Text(format!(r#"{{"type":"ack","bytes":{acked}}}"#).into())).await.unwrap();
            acked = 0;
        }
    }
    samples
}

/// Sends `{"type":"ack","bytes":n}`.
async fn ack(ws: &mut tokio_tungstenite::WebSocketStream<TcpStream>, n: usize) {
    ws.send(Message::Text(format!(r#"{{"type":"ack","bytes":{n}}}"#).into())).await.unwrap();
}

/// The prompt of the shell in [`ctrl_c_latency`].
/// The prompt as the shell prints it, and what is looked for: without the trailing blank, which
/// a catch-up state (§5.4) draws as a cursor move.
const PS1: &str = "FLOOD-PROMPT$ ";
const PROMPT: &[u8] = b"FLOOD-PROMPT$";

/// (d) Ctrl-C after a flood: `yes` in an interactive `sh` for `flood`, read by a client that
/// draws `draw_bytes_s` bytes per second (it reads the next message only once it has drawn
/// the last, and acks each message once drawn: the UI's `term.write` callback), then `^C`.
/// Returns (ms from sending `^C` to drawing the prompt, bytes drawn in between).
async fn ctrl_c_latency(sc: &Sidecar, flood: Duration, draw_bytes_s: f64) -> (f64, usize) {
    let script = format!("export PS1='{PS1}'; exec sh -i");
    let id = spawn_terminal(sc, &["sh", "-c", &script]).await;
    let mut ws = terminal_socket(sc, &id).await;
    let mut tail: Vec<u8> = Vec::new();
    // Each phase ends once the prompt has been drawn: the first one, then the one after ^C.
    let mut phase = 0;
    let (mut flood_start, mut ctrl_c_at) = (None::<Instant>, None::<Instant>);
    let mut drawn_after = 0usize;
    let mut drawn_until = Instant::now();
    loop {
        if let (Some(start), None) = (flood_start, ctrl_c_at) {
            if start.elapsed() >= flood {
                ws.send(Message::Binary(b"\x03".to_vec().into())).await.unwrap();
                ctrl_c_at = Some(Instant::now());
                tail.clear();
            }
        }
        let b = match ws.next().await {
            Some(Ok(Message::Binary(b))) => b,
            Some(Ok(_)) => continue,
            other => panic!("socket ended: {other:?}"),
        };
        drawn_until = drawn_until.max(Instant::now()) + Duration::from_secs_f64(b.len() as f64 / draw_bytes_s);
        tokio::time::sleep_until(drawn_until.into()).await;
        ack(&mut ws, b.len()).await;
        if ctrl_c_at.is_some() {
            drawn_after += b.len();
        }
        tail.extend_from_slice(&b);
        let found = tail.windows(PROMPT.len()).any(|w| w == PROMPT);
        tail.drain(..tail.len().saturating_sub(PROMPT.len()));
        if !found {
            continue;
        }
        tail.clear();
        phase += 1;
        match (phase, ctrl_c_at) {
            (1, _) => {
                ws.send(Message::Binary(b"yes\n".to_vec().into())).await.unwrap();
                flood_start = Some(Instant::now());
            }
            (_, Some(at)) => {
                let ms = at.elapsed().as_secs_f64() * 1000.0;
                sc.req("DELETE", &format!("/api/terminals/{id}"), None).await;
                return (ms, drawn_after);
            }
            _ => {}
        }
    }
}

fn main() {
    let mb = env_usize("BENCH_PTY_MB", 200);
    let keys = env_usize("BENCH_PTY_KEYS", 1000);
    let rounds = env_usize("BENCH_PTY_ROUNDS", 3).max(1);
    let flood = Duration::from_secs(env_usize("BENCH_PTY_FLOOD_S", 10) as u64);
    let draw_bytes_s = env_usize("BENCH_PTY_DRAW_KB_S", 1500).max(1) as f64 * 1000.0;
    let ctrl_c_rounds = env_usize("BENCH_PTY_CTRL_C_ROUNDS", 3).max(1);
    let dir = std::env::temp_dir().join(format!("porthole-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("payload.txt");
    let size = mb * 1_000_000;
    make_file(&file, size);

    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let sc = start_sidecar(&dir);
    // Alternate the two measurements and report medians, so that load from other processes
    // on a small machine skews both alike.
    let (mut a_runs, mut b_runs) = (Vec::new(), Vec::new());
    let (mut cpu_secs, mut wall_secs) = (0.0, 0.0);
    for _ in 0..rounds {
        let (a_bytes, a_secs) = direct(&file);
        a_runs.push(a_bytes as f64 / MB / a_secs);
        let cpu0 = cpu_seconds(sc.pid);
        let (b_bytes, b_secs) = rt.block_on(through_sidecar(&sc, &file, size));
        cpu_secs += cpu_seconds(sc.pid) - cpu0;
        wall_secs += b_secs;
        b_runs.push(b_bytes as f64 / MB / b_secs);
    }
    let (a, b) = (median(&mut a_runs), median(&mut b_runs));
    println!("pty.rounds {rounds}");
    println!("pty.direct_mb_s {a:.1}");
    println!("pty.sidecar_mb_s {b:.1}");
    println!("pty.ratio {:.2}", b / a);
    println!("pty.sidecar_cpu_pct {:.0}", 100.0 * cpu_secs / wall_secs);
    let mut lat = rt.block_on(echo_latency(&sc, keys));
    lat.sort_by(|x, y| x.partial_cmp(y).unwrap());
    println!("pty.echo_p50_ms {:.3}", percentile(&lat, 0.50));
    println!("pty.echo_p99_ms {:.3}", percentile(&lat, 0.99));
    let (mut ms, mut queued) = (Vec::new(), Vec::new());
    for _ in 0..ctrl_c_rounds {
        let (m, q) = rt.block_on(ctrl_c_latency(&sc, flood, draw_bytes_s));
        ms.push(m);
        queued.push(q as f64 / 1024.0);
    }
    drop(sc);
    println!("pty.ctrl_c_draw_kb_s {:.0}", draw_bytes_s / 1000.0);
    println!("pty.ctrl_c_ms {:.0}", median(&mut ms));
    println!("pty.ctrl_c_queued_kb {:.0}", median(&mut queued));
    let _ = std::fs::remove_dir_all(&dir);
}
