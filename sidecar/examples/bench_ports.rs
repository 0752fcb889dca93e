//! Port scan latency with a busy wall: how long `GET /api/terminals/{id}/ports` takes.
//!
//! Run: `cargo xtask bench ports` (or `cargo run --release -p sidecar --example
//! bench_ports`). Starts the real `porthole-sidecar`, opens `BENCH_PORTS_PANES` terminals
//! (default 50): every other one runs a small Python listener (`python3 -m http.server 0
//! --bind 127.0.0.1`), the rest `sleep 600`. Then, for one listener pane, prints plain
//! `name value` lines:
//! - `ports.http_p50_ms`, `ports.http_p95_ms`: the whole request through the sidecar
//!   (HTTP on loopback, auth, the scan, JSON), `BENCH_PORTS_SCANS` times (default 200), one
//!   at a time;
//! - `ports.scan_p50_ms`, `ports.scan_p95_ms`: `sidecar::ports::Ports::scan` in this
//!   process for the same pane's pid (the `/proc` walk alone);
//! - `ports.idle_http_p50_ms`: the request for a `sleep` pane (no sockets to match);
//! - `ports.processes`: how many processes `/proc` listed (the scan reads every `stat`).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use sidecar::ports::{Ports, Root};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

struct Sidecar {
    child: std::process::Child,
    port: u16,
    token: String,
}

impl Sidecar {
    fn start(home: &Path) -> Sidecar {
        let exe = sidecar_binary();
        let mut child = Command::new(&exe)
            .env("HOME", home)
            .env("PORTHOLE_LOG", "warn")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("start {}: {e}", exe.display()));
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        let url = v["url"].as_str().unwrap();
        let port = url.trim_start_matches("http://127.0.0.1:").trim_end_matches('/').parse().unwrap();
        Sidecar { child, port, token: v["token"].as_str().unwrap().to_string() }
    }

    /// One request; returns (status, JSON body).
    async fn request(&self, method: &str, path: &str, body: Option<&serde_json::Value>) -> (u16, serde_json::Value) {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).await.unwrap();
        s.set_nodelay(true).unwrap();
        let body = body.map(|b| b.to_string()).unwrap_or_default();
        let req = format!(
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAuthorization: Bearer {}\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            self.port,
            self.token,
            body.len()
        );
        s.write_all(req.as_bytes()).await.unwrap();
        let mut out = Vec::new();
        s.read_to_end(&mut out).await.unwrap();
        let text = String::from_utf8_lossy(&out);
        let status = text.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
        let body = text.split("\r\n\r\n").nth(1).unwrap_or("");
        (status, serde_json::from_str(body).unwrap_or(serde_json::Value::Null))
    }
}

impl Drop for Sidecar {
    fn drop(&mut self) {
        // SIGTERM so the sidecar kills its terminals' process groups; SIGKILL as a fallback.
        // SAFETY: kill(2) on the pid of the child this example spawned (> 1).
        unsafe {
            libc::kill(self.child.id() as i32, libc::SIGTERM);
        }
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(8) {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The `porthole-sidecar` of this example's profile, (re)built first under `cargo run`.
fn sidecar_binary() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().and_then(Path::parent).unwrap().to_path_buf();
    let bin = dir.join("porthole-sidecar");
    if !bin.exists() || std::env::var_os("CARGO").is_some() {
        let mut c = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
        c.args(["build", "-p", "sidecar", "--bin", "porthole-sidecar"]);
        if dir.ends_with("release") {
            c.arg("--release");
        }
        assert!(c.status().unwrap().success(), "building porthole-sidecar failed");
    }
    bin
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    let panes = env_usize("BENCH_PORTS_PANES", 50).max(2);
    let scans = env_usize("BENCH_PORTS_SCANS", 200).max(1);
    let home = std::env::temp_dir().join(format!("porthole-bench-ports-{}", std::process::id()));
    std::fs::create_dir_all(&home).unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let sc = Sidecar::start(&home);

    rt.block_on(async {
        let mut ids = Vec::new();
        for i in 0..panes {
            let command: Vec<&str> = if i % 2 == 0 {
                vec!["python3", "-m", "http.server", "0", "--bind", "127.0.0.1"]
            } else {
                vec!["sleep", "600"]
            };
            let body = serde_json::json!({"cols": 80, "rows": 24, "command": command});
            let (status, v) = sc.request("POST", "/api/terminals", Some(&body)).await;
            assert_eq!(status, 201, "spawn failed: {v}");
            ids.push(v["id"].as_str().unwrap().to_string());
        }
        // Wait until every listener pane reports its port (Python startup on a small box).
        let listeners: Vec<&String> = ids.iter().step_by(2).collect();
        let start = Instant::now();
        for id in &listeners {
            loop {
                let (status, v) = sc.request("GET", &format!("/api/terminals/{id}/ports"), None).await;
                assert_eq!(status, 200, "{v}");
                if v["ports"].as_array().is_some_and(|p| !p.is_empty()) {
                    break;
                }
                assert!(start.elapsed() < Duration::from_secs(120), "pane {id} never listened");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
        let target = listeners[listeners.len() / 2].clone();
        let idle = ids[1].clone();
        let path = format!("/api/terminals/{target}/ports");

        let mut http = Vec::with_capacity(scans);
        for _ in 0..scans {
            let t = Instant::now();
            let (status, _) = sc.request("GET", &path, None).await;
            http.push(ms(t.elapsed()));
            assert_eq!(status, 200);
        }
        let mut idle_http = Vec::with_capacity(scans);
        for _ in 0..scans {
            let t = Instant::now();
            let (status, _) = sc.request("GET", &format!("/api/terminals/{idle}/ports"), None).await;
            idle_http.push(ms(t.elapsed()));
            assert_eq!(status, 200);
        }

        let (_, info) = sc.request("GET", &format!("/api/terminals/{target}"), None).await;
        let pid = info["pid"].as_i64().unwrap() as i32;
        let ports = Ports::new();
        let mut direct = Vec::with_capacity(scans);
        for _ in 0..scans {
            let t = Instant::now();
            let found = ports.scan(Root { pid, tree: true }).await.unwrap();
            direct.push(ms(t.elapsed()));
            assert_eq!(found.len(), 1);
        }

        for v in [&mut http, &mut idle_http, &mut direct] {
            v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        }
        let processes = std::fs::read_dir("/proc")
            .map(|d| d.flatten().filter(|e| e.file_name().to_str().is_some_and(|s| s.parse::<u32>().is_ok())).count())
            .unwrap_or(0);
        println!("ports.panes {panes}");
        println!("ports.scans {scans}");
        println!("ports.processes {processes}");
        println!("ports.http_p50_ms {:.3}", percentile(&http, 0.50));
        println!("ports.http_p95_ms {:.3}", percentile(&http, 0.95));
        println!("ports.scan_p50_ms {:.3}", percentile(&direct, 0.50));
        println!("ports.scan_p95_ms {:.3}", percentile(&direct, 0.95));
        println!("ports.idle_http_p50_ms {:.3}", percentile(&idle_http, 0.50));
    });
    drop(sc);
    let _ = std::fs::remove_dir_all(&home);
}
