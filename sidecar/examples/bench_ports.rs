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

mod common;

use std::time::{Duration, Instant};

use common::{env_usize, percentile, start_sidecar};
use serde_json::json;
use sidecar::ports::{Ports, Root};

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    let panes = env_usize("BENCH_PORTS_PANES", 50).max(2);
    let scans = env_usize("BENCH_PORTS_SCANS", 200).max(1);
    let home = std::env::temp_dir().join(format!("porthole-bench-ports-{}", std::process::id()));
    std::fs::create_dir_all(&home).unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let sc = start_sidecar(&home);

    rt.block_on(async {
        let mut ids = Vec::new();
        for i in 0..panes {
            let command: Vec<&str> = if i % 2 == 0 {
                vec!["python3", "-m", "http.server", "0", "--bind", "127.0.0.1"]
            } else {
                vec!["sleep", "600"]
            };
            let body = json!({"cols": 80, "rows": 24, "command": command});
            let (status, v) = sc.request("POST", "/api/terminals", Some(body)).await;
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
