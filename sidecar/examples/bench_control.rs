//! Control-plane round trips (protocol §9) and reading a long terminal.
//!
//! Run: `cargo xtask bench control`. Prints plain `name value` lines:
//! - `control.health_p50_ms`/`_p99_ms`: `GET /api/health` over a fresh connection, the
//!   baseline for the two below (same client, same run);
//! - `control.list_http_p50_ms`/`_p99_ms`, `control.read_http_p50_ms`/`_p99_ms`:
//!   `GET /api/control/panes` and `POST /api/control/read` (80×24) over a fresh connection;
//! - `control.list_ratio`, `control.read_ratio`: p50 ÷ the health p50;
//! - `control.ph_list_p50_ms`/`_p99_ms`, `control.ph_read_p50_ms`/`_p99_ms`: the real `ph`
//!   process, start to exit, as a script sees it (target p99 < 20 ms);
//! - `control.read_10k_p50_ms`, `control.read_10k_lines`, `control.read_10k_bytes`:
//!   `read --scrollback 10000` of a terminal that printed 10,000 lines (the model keeps 2,000).
//!
//! PTY throughput with the screen model on is `cargo xtask bench pty` (the model is always
//! on). Environment: `BENCH_CONTROL_N` (HTTP round trips, default 500), `BENCH_CONTROL_PH`
//! (`ph` runs, default 100).

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use common::{binary, env_usize, percentile, start_sidecar, Sidecar};
use serde_json::json;

async fn times(n: usize, mut f: impl AsyncFnMut()) -> Vec<f64> {
    let mut v = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        f().await;
        v.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    v.sort_by(f64::total_cmp);
    v
}

fn print(name: &str, v: &[f64]) -> f64 {
    let p50 = percentile(v, 50.0);
    println!("control.{name}_p50_ms {p50:.3}");
    println!("control.{name}_p99_ms {:.3}", percentile(v, 99.0));
    p50
}

async fn wait_text(sc: &Sidecar, t: &str, regex: &str) {
    let (status, body) = sc
        .request(
            "POST",
            "/api/control/wait",
            Some(json!({"target": t, "until": "text", "regex": regex, "timeout_ms": 60000})),
        )
        .await;
    assert_eq!(status, 200, "{body}");
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let home = std::env::temp_dir().join(format!("porthole-bench-control-{}", std::process::id()));
    std::fs::create_dir_all(&home).unwrap();
    let sc = start_sidecar(&home);
    let ph = binary("ph");
    let n = env_usize("BENCH_CONTROL_N", 500);
    let runs = env_usize("BENCH_CONTROL_PH", 100);

    let t = sc.req("POST", "/api/terminals", Some(json!({"cols": 80, "rows": 24, "command": ["sh"]}))).await;
    let t = t["id"].as_str().unwrap().to_string();
    sc.req("POST", "/api/control/send", Some(json!({"target": t, "text": "echo ready", "keys": ["enter"]}))).await;
    wait_text(&sc, &t, "^ready$").await;

    let health = times(n, async || assert_eq!(sc.request("GET", "/api/health", None).await.0, 200)).await;
    let list = times(n, async || assert_eq!(sc.request("GET", "/api/control/panes", None).await.0, 200)).await;
    let body = json!({"target": t});
    let read =
        times(n, async || assert_eq!(sc.request("POST", "/api/control/read", Some(body.clone())).await.0, 200)).await;
    let h = print("health", &health);
    let l = print("list_http", &list);
    let r = print("read_http", &read);
    println!("control.list_ratio {:.2}", l / h);
    println!("control.read_ratio {:.2}", r / h);

    let url = format!("http://127.0.0.1:{}/", sc.port);
    let run_ph = |args: &[&str]| {
        let out =
            Command::new(&ph).args(args).env("PORTHOLE_URL", &url).env("PORTHOLE_TOKEN", &sc.token).output().unwrap();
        assert!(out.status.success(), "ph {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    };
    let ph_list = times(runs, async || run_ph(&["list"])).await;
    let ph_read = times(runs, async || run_ph(&["read", &t])).await;
    print("ph_list", &ph_list);
    print("ph_read", &ph_read);

    sc.req("POST", "/api/control/send", Some(json!({"target": t, "text": "seq 1 10000", "keys": ["enter"]}))).await;
    wait_text(&sc, &t, "^10000$").await;
    // The model may still be behind the last batch's neighbours: let it settle.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let body = json!({"target": t, "scrollback": 10000});
    let mut last = serde_json::Value::Null;
    let long = times(20, async || {
        let (status, v) = sc.request("POST", "/api/control/read", Some(body.clone())).await;
        assert_eq!(status, 200);
        last = v;
    })
    .await;
    println!("control.read_10k_p50_ms {:.3}", percentile(&long, 50.0));
    println!("control.read_10k_lines {}", last["lines"].as_array().map_or(0, Vec::len));
    println!("control.read_10k_bytes {}", last.to_string().len());
    drop(sc);
    let _ = std::fs::remove_dir_all(&home);
}
