//! Ports through the real binary: real PTYs running real `python3 -m http.server`s, asked
//! over `GET /api/terminals/{id}/ports`.

mod common;

use std::time::{Duration, Instant};

use common::*;
use serde_json::Value;

/// Starts `command` in a new terminal and waits for http.server's "Serving HTTP on … port N"
/// line; returns the terminal id, its socket (kept open) and N.
async fn serve(sc: &Sidecar, command: &[&str]) -> (String, Ws, u16) {
    let id = sc.spawn(command).await;
    let mut ws = sc.ws(&id).await;
    let mut seen = Seen::default();
    read_until(&mut ws, &mut seen, true, |s| {
        let text = String::from_utf8_lossy(&s.bytes);
        text.contains("Serving HTTP on") && text.contains(") ...") || s.exit.is_some()
    })
    .await;
    let text = String::from_utf8_lossy(&seen.bytes).to_string();
    let port = number_after(&seen.bytes, " port ").unwrap_or_else(|| panic!("no port in {text:?}"));
    (id, ws, port as u16)
}

async fn ports(sc: &Sidecar, id: &str) -> Vec<Value> {
    let r = sc.req("GET", &format!("/api/terminals/{id}/ports"), None).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    r.json()["ports"].as_array().expect("ports array").clone()
}

fn port_numbers(list: &[Value]) -> Vec<u16> {
    list.iter().map(|p| p["port"].as_u64().unwrap() as u16).collect()
}

const PY: &str = "python3 -m http.server 0";

#[tokio::test]
async fn each_pane_lists_its_own_servers_ipv4_ipv6_and_grandchildren() {
    let sc = Sidecar::start(&[]);
    let a = serve(&sc, &["python3", "-m", "http.server", "0", "--bind", "127.0.0.1"]).await;
    let b = serve(&sc, &["python3", "-m", "http.server", "0", "--bind", "::"]).await;
    // Two shells deep; the trailing `; true` keeps each sh from exec'ing its last command.
    let inner = format!("{PY} --bind 127.0.0.1; true");
    let outer = format!("sh -c '{inner}'; true");
    let c = serve(&sc, &["sh", "-c", &outer]).await;
    let idle = sc.spawn(&["sh"]).await;

    let la = ports(&sc, &a.0).await;
    let lb = ports(&sc, &b.0).await;
    let lc = ports(&sc, &c.0).await;
    assert_eq!(port_numbers(&la), vec![a.2], "{la:?}");
    assert_eq!(port_numbers(&lb), vec![b.2], "{lb:?}");
    assert_eq!(port_numbers(&lc), vec![c.2], "{lc:?}");
    assert_eq!(ports(&sc, &idle).await, Vec::<Value>::new(), "a fresh shell listens on nothing");

    assert_eq!(la[0]["address"], "127.0.0.1");
    assert_eq!(lb[0]["address"], "::");
    let a_pid = sc.terminal(&a.0).await["pid"].as_i64().unwrap();
    assert_eq!(la[0]["pid"].as_i64().unwrap(), a_pid);
    assert!(la[0]["process"].as_str().unwrap().starts_with("python"), "{la:?}");
    // The grandchild holds the socket, not the pane's own child.
    let c_pid = sc.terminal(&c.0).await["pid"].as_i64().unwrap();
    assert_ne!(lc[0]["pid"].as_i64().unwrap(), c_pid);
    assert!(lc[0]["process"].as_str().unwrap().starts_with("python"), "{lc:?}");
}

/// The first non-loopback IPv4 address of this machine (`hostname -I`), if any.
fn non_loopback_ipv4() -> Option<String> {
    let out = std::process::Command::new("hostname").arg("-I").output().ok()?;
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .filter_map(|a| a.parse::<std::net::Ipv4Addr>().ok())
        .find(|a| !a.is_loopback() && !a.is_unspecified())
        .map(|a| a.to_string())
}

#[tokio::test]
async fn a_specific_non_loopback_bind_is_not_offered() {
    let Some(addr) = non_loopback_ipv4() else {
        println!("skipped: this machine has no non-loopback IPv4 address (hostname -I)");
        return;
    };
    let sc = Sidecar::start(&[]);
    let (id, _ws, port) = serve(&sc, &["python3", "-m", "http.server", "0", "--bind", &addr]).await;
    let list = ports(&sc, &id).await;
    assert!(!port_numbers(&list).contains(&port), "{addr}:{port} offered: {list:?}");
}

#[tokio::test]
async fn port_disappears_after_ctrl_c() {
    let sc = Sidecar::start(&[]);
    // A shell runs the server, so the pane outlives it. Ctrl-C signals the whole foreground
    // group; `trap : INT` keeps sh alive (a handler, unlike an ignore, is reset by exec, so
    // python still gets SIGINT).
    let script = format!("trap : INT; {PY} --bind 127.0.0.1; exec cat");
    let (id, mut ws, port) = serve(&sc, &["sh", "-c", &script]).await;
    assert_eq!(port_numbers(&ports(&sc, &id).await), vec![port]);
    send_input(&mut ws, b"\x03").await;
    let start = Instant::now();
    loop {
        let list = ports(&sc, &id).await;
        if list.is_empty() {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(15), "port still listed: {list:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(sc.terminal(&id).await["alive"], true, "the pane's program still runs");
}

#[tokio::test]
async fn concurrent_requests_during_a_scan_both_succeed() {
    let sc = Sidecar::start(&[]);
    let (id, _ws, port) = serve(&sc, &["python3", "-m", "http.server", "0", "--bind", "127.0.0.1"]).await;
    let path = format!("/api/terminals/{id}/ports");
    for _ in 0..5 {
        let (r1, r2, r3) =
            tokio::join!(sc.req("GET", &path, None), sc.req("GET", &path, None), sc.req("GET", &path, None));
        for r in [r1, r2, r3] {
            assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
            assert_eq!(port_numbers(r.json()["ports"].as_array().unwrap()), vec![port]);
        }
    }
}

#[tokio::test]
async fn unknown_terminal_is_not_found_and_an_exited_pane_has_no_ports() {
    let sc = Sidecar::start(&[]);
    let r = sc.req("GET", "/api/terminals/t999/ports", None).await;
    assert_eq!((r.status, r.code().as_str()), (404, "not_found"));
    let r = sc.req("GET", "/api/terminals/nope/ports", None).await;
    assert_eq!(r.status, 404);
    let id = sc.spawn(&["true"]).await;
    let start = Instant::now();
    while sc.terminal(&id).await["alive"] == true {
        assert!(start.elapsed() < HANG);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(ports(&sc, &id).await, Vec::<Value>::new());
    // Without the token: refused like every route.
    let r = sc.raw("GET", &format!("/api/terminals/{id}/ports"), &[], b"").await;
    assert_eq!(r.status, 401);
}
