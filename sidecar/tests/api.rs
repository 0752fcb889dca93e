//! HTTP API through the real binary: auth refusals, bad requests, delete, shutdown, web mode,
//! workspace.

mod common;

use common::*;
use serde_json::json;
use std::time::Duration;

#[tokio::test]
async fn health_and_auth_refusals() {
    let sc = Sidecar::start(&[]);
    let ok = sc.req("GET", "/api/health", None).await;
    assert_eq!(ok.status, 200);
    assert_eq!(ok.json()["protocol"], 1);
    assert_eq!(ok.json()["status"], "ok");

    // No token, wrong token.
    let r = sc.raw("GET", "/api/health", &[], b"").await;
    assert_eq!((r.status, r.code()), (401, "unauthorized".to_string()));
    let r = sc.raw("GET", "/api/terminals", &[("Authorization", "Bearer 0000")], b"").await;
    assert_eq!((r.status, r.code()), (401, "unauthorized".to_string()));
    let wrong = format!("Bearer {}", "f".repeat(64));
    let r = sc.raw("GET", "/api/terminals", &[("Authorization", &wrong)], b"").await;
    assert_eq!(r.status, 401);
    let r = sc.raw("POST", "/api/terminals", &[], br#"{"cols":80,"rows":24}"#).await;
    assert_eq!(r.status, 401);

    // Bad Host (DNS rebinding), even with the right token.
    let auth = sc.bearer();
    for host in
        ["evil.example:80".to_string(), format!("evil.example:{}", sc.port), format!("127.0.0.1:{}", sc.port + 1)]
    {
        let r = sc.raw("GET", "/api/health", &[("Host", &host), ("Authorization", &auth)], b"").await;
        assert_eq!((r.status, r.code()), (403, "bad_host".to_string()), "{host}");
    }
    let lh = format!("localhost:{}", sc.port);
    let r = sc.raw("GET", "/api/health", &[("Host", &lh), ("Authorization", &auth)], b"").await;
    assert_eq!(r.status, 200);

    // Bad Origin on a non-GET request and on an upgrade.
    let r =
        sc.raw("POST", "/api/login-codes", &[("Authorization", &auth), ("Origin", "http://evil.example")], b"").await;
    assert_eq!((r.status, r.code()), (403, "bad_origin".to_string()));
    let id = sc.spawn(&["cat"]).await;
    let err = sc.try_ws(&id, &[("Origin", "http://evil.example")]).await.expect_err("refused");
    assert!(err.to_string().contains("403"), "{err}");
    let err = sc.try_ws(&id, &[("Authorization", "Bearer nope")]).await.expect_err("refused");
    assert!(err.to_string().contains("401"), "{err}");
    let err = sc.try_ws(&id, &[("Host", "evil.example")]).await.expect_err("refused");
    assert!(err.to_string().contains("403"), "{err}");
    // The app's own origins are accepted.
    let own = format!("http://127.0.0.1:{}", sc.port);
    for origin in [own.as_str(), "tauri://localhost", "http://tauri.localhost"] {
        assert!(sc.try_ws(&id, &[("Origin", origin)]).await.is_ok(), "{origin}");
    }
}

#[tokio::test]
async fn login_codes_are_one_time_and_set_a_session_cookie() {
    let sc = Sidecar::start(&[]);
    let path = sc.login_url.trim_start_matches(&format!("http://127.0.0.1:{}", sc.port)).to_string();
    let r = sc.raw("GET", &path, &[], b"").await;
    assert_eq!(r.status, 303);
    assert_eq!(r.header("location"), Some("/"));
    let cookie = r.header("set-cookie").expect("cookie").to_string();
    assert!(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict") && cookie.contains("Path=/"));
    let session = cookie.split(';').next().unwrap().to_string();
    assert!(session.starts_with("porthole_session="));

    // The cookie authorizes API calls; the used code is refused.
    let r = sc.raw("GET", "/api/terminals", &[("Cookie", &session)], b"").await;
    assert_eq!(r.status, 200);
    let r = sc.raw("GET", &path, &[], b"").await;
    assert_eq!(r.status, 401);
    let r = sc.raw("GET", "/login?code=00", &[], b"").await;
    assert_eq!(r.status, 401);
    let r = sc.raw("GET", "/api/terminals", &[("Cookie", "porthole_session=00")], b"").await;
    assert_eq!(r.status, 401);

    // A fresh code works once.
    let fresh = sc.req("POST", "/api/login-codes", None).await.json()["url"].as_str().unwrap().to_string();
    let fresh_path = fresh.trim_start_matches(&format!("http://127.0.0.1:{}", sc.port)).to_string();
    assert_eq!(sc.raw("GET", &fresh_path, &[], b"").await.status, 303);
    assert_eq!(sc.raw("GET", &fresh_path, &[], b"").await.status, 401);
}

#[tokio::test]
async fn bad_requests_get_400_codes_and_spawn_nothing() {
    let sc = Sidecar::start(&[]);
    let cases: Vec<(String, u16, &str)> = vec![
        ("{".into(), 400, "bad_json"),
        ("[]".into(), 400, "bad_json"),
        (r#"{"cols":80}"#.into(), 400, "bad_json"),
        (r#"{"cols":80,"rows":24,"shell":"/bin/sh"}"#.into(), 400, "bad_json"),
        (r#"{"cols":"80","rows":24}"#.into(), 400, "bad_json"),
        (r#"{"cols":80,"rows":24,"command":"sh"}"#.into(), 400, "bad_json"),
        (r#"{"cols":0,"rows":24}"#.into(), 400, "bad_request"),
        (r#"{"cols":80,"rows":1001}"#.into(), 400, "bad_request"),
        (r#"{"cols":80,"rows":24,"command":[]}"#.into(), 400, "bad_request"),
        (r#"{"cols":80,"rows":24,"command":["sh\u0000"]}"#.into(), 400, "bad_request"),
        (json!({"cols":80,"rows":24,"command":["x".repeat(5000)]}).to_string(), 400, "bad_request"),
        (json!({"cols":80,"rows":24,"command":vec!["a"; 257]}).to_string(), 400, "bad_request"),
        (r#"{"cols":80,"rows":24,"cwd":"/no/such/dir"}"#.into(), 400, "bad_cwd"),
        (r#"{"cols":80,"rows":24,"cwd":"/etc/hostname"}"#.into(), 400, "bad_cwd"),
        (json!({"cols":80,"rows":24,"command":["x".repeat(300 * 1024)]}).to_string(), 413, "too_large"),
        (r#"{"cols":80,"rows":24,"command":["/no/such/program"]}"#.into(), 500, "spawn_failed"),
    ];
    let auth = sc.bearer();
    for (body, status, code) in cases {
        let headers = [("Authorization", auth.as_str()), ("Content-Type", "application/json")];
        let r = sc.raw("POST", "/api/terminals", &headers, body.as_bytes()).await;
        assert_eq!((r.status, r.code().as_str()), (status, code), "{}", &body[..body.len().min(80)]);
        assert!(r.json()["error"]["message"].is_string());
    }
    let list = sc.req("GET", "/api/terminals", None).await;
    assert_eq!(list.json(), json!({"terminals": []}), "nothing was spawned");

    for path in ["/api/terminals/t999", "/api/terminals/x1", "/api/terminals/t01", "/api/nope"] {
        let r = sc.req("GET", path, None).await;
        assert_eq!((r.status, r.code().as_str()), (404, "not_found"), "{path}");
    }
    let r = sc.req("DELETE", "/api/terminals/t1", None).await;
    assert_eq!(r.status, 404);

    // The socket route: unknown terminal → 404; a plain GET (no upgrade) → 400.
    let r = sc.req("GET", "/api/terminals/t5/socket", None).await;
    assert_eq!((r.status, r.code().as_str()), (404, "not_found"));
    let id = sc.spawn(&["cat"]).await;
    let r = sc.req("GET", &format!("/api/terminals/{id}/socket"), None).await;
    assert_eq!((r.status, r.code().as_str()), (400, "bad_request"));
}

#[tokio::test]
async fn terminals_are_listed_in_creation_order_with_fields() {
    let sc = Sidecar::start(&[]);
    let a = sc.spawn(&["cat"]).await;
    let r = sc.req("POST", "/api/terminals", Some(&json!({"cols":100,"rows":30,"cwd":"/tmp"}))).await;
    assert_eq!(r.status, 201);
    let b = r.json()["id"].as_str().unwrap().to_string();
    assert_ne!(a, b);
    let list = sc.req("GET", "/api/terminals", None).await.json();
    let ts = list["terminals"].as_array().unwrap();
    assert_eq!(ts.len(), 2);
    assert_eq!(ts[0]["id"], a.as_str());
    assert_eq!(ts[1]["id"], b.as_str());
    assert_eq!(ts[1]["cwd"], "/tmp");
    assert_eq!(ts[1]["command"], json!(["-sh"]), "default is the login shell");
    assert_eq!((ts[1]["cols"].as_i64(), ts[1]["rows"].as_i64()), (Some(100), Some(30)));
    for t in ts {
        assert!(t["pid"].as_i64().unwrap() > 1);
        assert_eq!(t["alive"], true);
        assert_eq!(t["exit_code"], serde_json::Value::Null);
    }
    // The environment of protocol §4, and busy/foreground while a program runs.
    let mut ws = sc.ws(&b).await;
    send_input(&mut ws, b"echo \"E:$TERM:$COLORTERM:$TERM_PROGRAM:$PORTHOLE_PANE:\"; sleep 1000\n").await;
    let mut seen = Seen::default();
    read_until(&mut ws, &mut seen, true, |s| contains(&s.bytes, b"E:xterm-256color:truecolor:porthole:")).await;
    assert!(contains(&seen.bytes, format!(":{b}:").as_bytes()));
    let mut busy = false;
    for _ in 0..200 {
        let t = sc.terminal(&b).await;
        if t["busy"] == true && t["foreground"] == "sleep" {
            busy = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(busy, "busy with sleep in the foreground");
    send_input(&mut ws, b"\x03").await;
    let mut idle = false;
    for _ in 0..200 {
        let t = sc.terminal(&b).await;
        if t["busy"] == false && t["foreground"] == "sh" {
            idle = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(idle, "back at the shell");
}

#[tokio::test]
async fn delete_kills_the_process_group() {
    let sc = Sidecar::start(&[]);
    // A grandchild that ignores SIGHUP (so the kernel's hangup alone does not end it), and
    // a background job in its own process group of the same session (job control on).
    let script = "(trap '' HUP; : > ready; exec sleep 1000) & echo GRANDCHILD=$!; \
                  while [ ! -e ready ]; do sleep 0.05; done; \
                  set -m; sleep 1000 & echo BGJOB=$!; echo STARTED; wait";
    let id = sc.spawn(&["sh", "-c", script]).await;
    let mut ws = sc.ws(&id).await;
    let mut seen = Seen::default();
    read_until(&mut ws, &mut seen, true, |s| contains(&s.bytes, b"STARTED")).await;
    let grandchild = number_after(&seen.bytes, "GRANDCHILD=").unwrap();
    let bgjob = number_after(&seen.bytes, "BGJOB=").unwrap();
    let child = sc.terminal(&id).await["pid"].as_i64().unwrap();
    assert!(!pid_gone(grandchild) && !pid_gone(child) && !pid_gone(bgjob));

    let r = sc.req("DELETE", &format!("/api/terminals/{id}"), None).await;
    assert_eq!(r.status, 204);
    // The attached socket gets the exit message and is closed.
    read_until(&mut ws, &mut seen, true, |s| s.closed).await;
    assert!(seen.exit.is_some());
    assert!(wait_pid_gone(grandchild).await, "grandchild sleep {grandchild} survived");
    assert!(wait_pid_gone(bgjob).await, "background job {bgjob} survived");
    assert!(wait_pid_gone(child).await);
    assert_eq!(sc.req("DELETE", &format!("/api/terminals/{id}"), None).await.status, 404);
    assert_eq!(sc.req("GET", &format!("/api/terminals/{id}"), None).await.status, 404);

    // A program that ignores SIGHUP is SIGKILLed after the grace period.
    let id = sc.spawn(&["sh", "-c", "trap '' HUP; echo STUBBORN=$$; while :; do sleep 1; done"]).await;
    let mut ws = sc.ws(&id).await;
    let mut seen = Seen::default();
    read_until(&mut ws, &mut seen, true, |s| contains(&s.bytes, b"STUBBORN=") && contains(&s.bytes, b"\r\n")).await;
    let pid = number_after(&seen.bytes, "STUBBORN=").unwrap();
    assert_eq!(sc.req("DELETE", &format!("/api/terminals/{id}"), None).await.status, 204);
    assert!(wait_pid_gone(pid).await, "SIGHUP-ignoring shell {pid} survived");
}

async fn spawn_with_grandchild(sc: &Sidecar) -> (i64, i64) {
    let id = sc.spawn(&["sh", "-c", "sleep 1000 & echo GC=$!; wait"]).await;
    let mut ws = sc.ws(&id).await;
    let mut seen = Seen::default();
    read_until(&mut ws, &mut seen, true, |s| contains(&s.bytes, b"GC=") && contains(&s.bytes, b"\r\n")).await;
    let gc = number_after(&seen.bytes, "GC=").unwrap();
    (sc.terminal(&id).await["pid"].as_i64().unwrap(), gc)
}

#[tokio::test]
async fn shutdown_endpoint_leaves_no_child_process() {
    let mut sc = Sidecar::start(&[]);
    let (c1, g1) = spawn_with_grandchild(&sc).await;
    let (c2, g2) = spawn_with_grandchild(&sc).await;
    let shell = sc.req("POST", "/api/terminals", Some(&json!({"cols":80,"rows":24}))).await.json();
    let c3 = sc.terminal(shell["id"].as_str().unwrap()).await["pid"].as_i64().unwrap();
    let r = sc.req("POST", "/api/shutdown", None).await;
    assert_eq!(r.status, 202);
    assert_eq!(r.json()["status"], "shutting_down");
    let status = sc.wait_exit();
    assert!(status.success(), "{status:?}");
    for pid in [c1, g1, c2, g2, c3] {
        assert!(wait_pid_gone(pid).await, "pid {pid} outlived the sidecar");
    }
}

#[tokio::test]
async fn shutdown_right_after_a_delete_still_ends_a_process_ignoring_sighup() {
    let mut sc = Sidecar::start(&[]);
    // As a `nohup` server: SIGHUP does nothing, only the SIGKILL 2 s after the delete would.
    let id = sc.spawn(&["sh", "-c", "trap '' HUP; echo STUBBORN=$$; while :; do sleep 1; done"]).await;
    let mut ws = sc.ws(&id).await;
    let mut seen = Seen::default();
    read_until(&mut ws, &mut seen, true, |s| contains(&s.bytes, b"STUBBORN=") && contains(&s.bytes, b"\r\n")).await;
    let pid = number_after(&seen.bytes, "STUBBORN=").unwrap();
    assert_eq!(sc.req("DELETE", &format!("/api/terminals/{id}"), None).await.status, 204);
    assert_eq!(sc.req("POST", "/api/shutdown", None).await.status, 202);
    assert!(sc.wait_exit().success());
    let gone = wait_pid_gone(pid).await;
    if !gone {
        send_signal(pid as u32, 9); // do not leave it behind
    }
    assert!(gone, "pid {pid}, deleted just before the shutdown, outlived the sidecar");
}

#[tokio::test]
async fn sigterm_leaves_no_child_process() {
    let mut sc = Sidecar::start(&[]);
    let (c1, g1) = spawn_with_grandchild(&sc).await;
    send_signal(sc.pid, 15);
    let status = sc.wait_exit();
    assert!(status.success(), "{status:?}");
    for pid in [c1, g1] {
        assert!(wait_pid_gone(pid).await, "pid {pid} outlived the sidecar");
    }
}

#[tokio::test]
async fn workspace_round_trips_with_revisions() {
    let sc = Sidecar::start(&[]);
    let r = sc.req("GET", "/api/workspace", None).await;
    assert_eq!(r.json(), json!({"workspace": null, "revision": 0, "restore": null, "problem": null}));
    let doc = json!({"panes": [{"id": "p1", "kind": "terminal"}], "split": {"dir": "row"}});
    let r = sc.req("PUT", "/api/workspace", Some(&json!({"workspace": doc}))).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json(), json!({"revision": 1}));
    let r = sc.req("GET", "/api/workspace", None).await;
    assert_eq!(r.json(), json!({"workspace": doc, "revision": 1, "restore": null, "problem": null}));
    for bad in [json!({}), json!({"workspace": 1, "extra": 2}), json!([1])] {
        let r = sc.req("PUT", "/api/workspace", Some(&bad)).await;
        assert_eq!((r.status, r.code().as_str()), (400, "bad_json"), "{bad}");
    }
    let big = json!({"workspace": "x".repeat(300 * 1024)});
    let r = sc.req("PUT", "/api/workspace", Some(&big)).await;
    assert_eq!((r.status, r.code().as_str()), (413, "too_large"));
    assert_eq!(sc.req("GET", "/api/workspace", None).await.json()["revision"], 1);
}

#[tokio::test]
async fn web_mode_serves_the_ui_behind_the_cookie() {
    let ui = temp_dir("ui");
    std::fs::write(ui.join("index.html"), "<!doctype html><title>porthole-ui-index</title>").unwrap();
    std::fs::create_dir_all(ui.join("assets")).unwrap();
    std::fs::write(ui.join("assets/app.js"), "console.log('porthole-asset')").unwrap();
    let sc = Sidecar::start(&["--web", "--ui-dir", ui.to_str().unwrap()]);

    let r = sc.raw("GET", "/", &[("Accept", "text/html")], b"").await;
    assert_eq!(r.status, 401);
    assert!(r.header("content-type").unwrap().starts_with("text/html"));
    assert!(String::from_utf8_lossy(&r.body).contains("login"));
    assert_eq!(sc.raw("GET", "/assets/app.js", &[], b"").await.status, 401);
    assert_eq!(sc.raw("GET", "/api/health", &[], b"").await.code(), "unauthorized");

    let path = sc.login_url.trim_start_matches(&format!("http://127.0.0.1:{}", sc.port)).to_string();
    let r = sc.raw("GET", &path, &[], b"").await;
    let session = r.header("set-cookie").unwrap().split(';').next().unwrap().to_string();
    let r = sc.raw("GET", "/", &[("Cookie", &session)], b"").await;
    assert_eq!(r.status, 200);
    assert!(String::from_utf8_lossy(&r.body).contains("porthole-ui-index"));
    let r = sc.raw("GET", "/assets/app.js", &[("Cookie", &session)], b"").await;
    assert_eq!(r.status, 200);
    assert!(String::from_utf8_lossy(&r.body).contains("porthole-asset"));
    let r = sc.raw("GET", "/some/client/route", &[("Cookie", &session)], b"").await;
    assert_eq!(r.status, 200);
    assert!(String::from_utf8_lossy(&r.body).contains("porthole-ui-index"), "index.html fallback");
    let r = sc.raw("GET", "/api/unknown", &[("Cookie", &session)], b"").await;
    assert_eq!((r.status, r.code().as_str()), (404, "not_found"));
    // A missing asset is a 404, never the app's HTML (issue 22 item 2c); only navigations
    // fall back to index.html.
    for (path, headers) in [
        ("/nonexistent.js", vec![]),
        ("/assets/gone.css", vec![("Sec-Fetch-Dest", "style")]),
        ("/some/client/route", vec![("Sec-Fetch-Dest", "script")]),
    ] {
        let mut h = vec![("Cookie", session.as_str())];
        h.extend(headers);
        let r = sc.raw("GET", path, &h, b"").await;
        assert_eq!((r.status, r.code().as_str()), (404, "not_found"), "{path}");
    }
    let r = sc.raw("GET", "/v1.2/route", &[("Cookie", &session), ("Sec-Fetch-Dest", "document")], b"").await;
    assert_eq!(r.status, 200);
    assert!(String::from_utf8_lossy(&r.body).contains("porthole-ui-index"), "a navigation falls back");
    let _ = std::fs::remove_dir_all(&ui);
}

#[tokio::test]
async fn without_web_mode_the_ui_is_not_served() {
    let sc = Sidecar::start(&[]);
    let r = sc.req("GET", "/", None).await;
    assert_eq!((r.status, r.code().as_str()), (404, "not_found"));
}

#[tokio::test]
async fn exit_is_sent_when_a_background_process_holds_the_pty() {
    let sc = Sidecar::start(&[]);
    // The shell exits with 3 while `sleep` (ignoring the kernel's SIGHUP to the foreground
    // group when the session leader exits) keeps the PTY's slave open: no EOF comes.
    // The holder creates `ready` only after its trap is set, and the shell waits for it.
    let script = "(trap '' HUP; : > ready; exec sleep 1000) & echo HOLDER=$!; \
                  while [ ! -e ready ]; do sleep 0.05; done; exit 3";
    let id = sc.spawn(&["sh", "-c", script]).await;
    let mut ws = sc.ws(&id).await;
    let mut seen = Seen::default();
    read_until(&mut ws, &mut seen, true, |s| s.exit.is_some()).await;
    assert_eq!(seen.exit, Some(3));
    let holder = number_after(&seen.bytes, "HOLDER=").unwrap();
    assert!(!pid_gone(holder));
    assert_eq!(sc.req("DELETE", &format!("/api/terminals/{id}"), None).await.status, 204);
    assert!(wait_pid_gone(holder).await, "the holder is killed with the session");
}

#[tokio::test]
async fn terminals_name_the_pane_whose_current_terminal_they_are() {
    let sc = Sidecar::start(&[]);
    let a = sc.spawn(&["cat"]).await;
    assert_eq!(sc.terminal(&a).await["pane"], a.as_str(), "a new pane is named after its terminal");
    // A restart in pane `a` (as "Enter restarts" does): the new terminal runs in pane a now.
    let r = sc.req("POST", "/api/terminals", Some(&json!({"cols":80,"rows":24,"pane":a}))).await;
    assert_eq!(r.status, 201);
    let b = r.json()["id"].as_str().unwrap().to_string();
    assert_eq!(sc.terminal(&b).await["pane"], a.as_str());
    assert_eq!(sc.terminal(&a).await["pane"], serde_json::Value::Null);
    let list = sc.req("GET", "/api/terminals", None).await.json();
    assert_eq!(list["terminals"][1]["pane"], a.as_str());
}

#[tokio::test]
async fn an_exited_terminal_lists_its_survivors_until_deleted() {
    let sc = Sidecar::start(&[]);
    // As after `nohup python3 -m http.server &` and `exit`: the shell exits, a process that
    // ignores SIGHUP keeps running in its session (it creates `ready` once its trap is set).
    // The shell waits for `go` from the test, so it is surely alive when first asked.
    let dir = temp_dir("survivors");
    let d = dir.to_string_lossy();
    let script = format!(
        "(trap '' HUP; : > '{d}/ready'; exec sleep 1000) & echo HOLDER=$!; \
         while [ ! -e '{d}/ready' ] || [ ! -e '{d}/go' ]; do sleep 0.05; done; exit 0"
    );
    let id = sc.spawn(&["sh", "-c", &script]).await;
    assert_eq!(sc.terminal(&id).await["survivors"], json!([]), "none while the child lives");
    std::fs::write(dir.join("go"), "").unwrap();
    let mut ws = sc.ws(&id).await;
    let mut seen = Seen::default();
    read_until(&mut ws, &mut seen, true, |s| s.exit.is_some()).await;
    let holder = number_after(&seen.bytes, "HOLDER=").unwrap();
    let t = sc.terminal(&id).await;
    assert_eq!(t["alive"], false);
    assert_eq!(t["survivors"], json!([{"pid": holder, "name": "sleep"}]));
    let list = sc.req("GET", "/api/terminals", None).await.json();
    assert_eq!(list["terminals"][0]["survivors"], json!([{"pid": holder, "name": "sleep"}]));
    // Nothing kills it until the terminal is deleted.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!pid_gone(holder));
    assert_eq!(sc.req("DELETE", &format!("/api/terminals/{id}"), None).await.status, 204);
    assert!(wait_pid_gone(holder).await, "the survivor is killed with the session");
}

#[tokio::test]
async fn exit_with_parent_shuts_down_when_the_launcher_dies() {
    let mut sc = Sidecar::start_under_shell("--exit-with-parent");
    let (c1, g1) = spawn_with_grandchild(&sc).await;
    let sidecar_pid = i64::from(sc.pid);
    assert_ne!(sc.pid, sc.child.id(), "the shell is the parent");
    // Kill the launcher; the sidecar is re-parented and must shut down cleanly.
    let _ = sc.child.kill();
    let _ = sc.child.wait();
    let sidecar_gone = wait_pid_gone(sidecar_pid).await;
    if !sidecar_gone {
        // Do not leave it behind (it holds the test's stderr open).
        send_signal(sc.pid, 15);
    }
    assert!(sidecar_gone, "the sidecar outlived its launcher");
    for pid in [c1, g1] {
        assert!(wait_pid_gone(pid).await, "pid {pid} outlived the launcher");
    }
}

#[tokio::test]
async fn json_bodies_are_objects_sent_as_application_json() {
    let sc = Sidecar::start(&[]);
    let auth = sc.bearer();
    let body = br#"{"cols":80,"rows":24,"command":["cat"]}"#;
    let post = |ct: Option<&'static str>, body: &'static [u8]| {
        let auth = auth.clone();
        let sc = &sc;
        async move {
            let mut headers = vec![("Authorization", auth.as_str())];
            headers.extend(ct.map(|ct| ("Content-Type", ct)));
            sc.raw("POST", "/api/terminals", &headers, body).await
        }
    };
    // An array of the fields in order is not the object the endpoint takes.
    for arr in [&b"[80,24]"[..], b" [80,24,\"/tmp\"]", b"80", b"\"x\""] {
        let r = post(Some("application/json"), arr).await;
        assert_eq!((r.status, r.code().as_str()), (400, "bad_json"), "{}", String::from_utf8_lossy(arr));
    }
    // A nested object given as an array is refused too (before any browser is launched).
    let r = sc
        .req("POST", "/api/browsers", Some(&json!({"url": "http://127.0.0.1:1/", "viewport": ["fixed", 800, 600, 1]})))
        .await;
    assert_eq!((r.status, r.code().as_str()), (400, "bad_json"));
    // The body must say it is JSON.
    for ct in [None, Some("text/plain"), Some("application/x-www-form-urlencoded"), Some("application/jsonx")] {
        let r = post(ct, body).await;
        assert_eq!((r.status, r.code().as_str()), (415, "bad_content_type"), "{ct:?}");
        assert!(r.json()["error"]["message"].as_str().unwrap().contains("application/json"));
    }
    let r = sc.raw("PUT", "/api/workspace", &[("Authorization", &auth), ("Content-Type", "text/plain")], b"{}").await;
    assert_eq!((r.status, r.code().as_str()), (415, "bad_content_type"));
    let list = sc.req("GET", "/api/terminals", None).await;
    assert_eq!(list.json(), json!({"terminals": []}), "nothing was spawned");
    // Parameters and case do not matter; an empty body needs no type.
    assert_eq!(post(Some("Application/JSON; charset=utf-8"), body).await.status, 201);
    assert_eq!(sc.raw("POST", "/api/login-codes", &[("Authorization", &auth)], b"").await.status, 200);
}

#[tokio::test]
async fn a_method_a_route_does_not_take_gets_405_in_the_json_shape() {
    let sc = Sidecar::start(&[]);
    for (method, path, allow) in
        [("DELETE", "/api/health", "GET"), ("PUT", "/api/terminals", "POST"), ("GET", "/api/shutdown", "POST")]
    {
        let r = sc.req(method, path, None).await;
        assert_eq!((r.status, r.code().as_str()), (405, "method_not_allowed"), "{method} {path}");
        assert!(r.json()["error"]["message"].is_string());
        assert!(r.header("allow").is_some_and(|a| a.contains(allow)), "{method} {path}: {:?}", r.header("allow"));
    }
}

#[tokio::test]
async fn a_doubled_host_or_origin_or_a_target_naming_another_host_is_refused() {
    let sc = Sidecar::start(&[]);
    let (host, auth, own) = (sc.host(), sc.bearer(), format!("http://127.0.0.1:{}", sc.port));
    let get = |target: &str, extra: &str| {
        format!("GET {target} HTTP/1.1\r\nHost: {host}\r\nAuthorization: {auth}\r\n{extra}Connection: close\r\n\r\n")
    };
    let cases = [
        // The first Host is the sidecar's own; the second is not.
        get("/api/health", "Host: evil.example\r\n"),
        get("/api/health", &format!("Host: {host}\r\n")),
        // An absolute-form target names the server in HTTP/1.1, not Host.
        get("http://evil.example/api/health", ""),
        get(&format!("http://localhost:{}/api/health", sc.port), ""),
        format!(
            "POST /api/login-codes HTTP/1.1\r\nHost: {host}\r\nAuthorization: {auth}\r\nOrigin: {own}\r\n\
             Origin: http://evil.example\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        ),
    ];
    for req in &cases {
        let r = sc.raw_bytes(req.as_bytes()).await;
        assert_eq!((r.status, r.code().as_str()), (400, "bad_request"), "{req}");
    }
    // An absolute-form target naming the sidecar itself is served.
    let r = sc.raw_bytes(get(&format!("{own}/api/health"), "").as_bytes()).await;
    assert_eq!(r.status, 200);
}

#[tokio::test]
async fn a_body_over_256_kib_is_refused_on_every_route() {
    let sc = Sidecar::start(&[]);
    let (host, auth) = (sc.host(), sc.bearer());
    // A 10 MB body to a route that takes none: refused on its declared length, unread.
    for (method, path) in [("POST", "/api/login-codes"), ("POST", "/api/shutdown"), ("GET", "/api/health")] {
        let head = format!(
            "{method} {path} HTTP/1.1\r\nHost: {host}\r\nAuthorization: {auth}\r\n\
             Content-Length: 10485760\r\nConnection: close\r\n\r\n"
        );
        let r = sc.raw_bytes(head.as_bytes()).await;
        assert_eq!((r.status, r.code().as_str()), (413, "too_large"), "{method} {path}");
    }
    // The same as a chunked body (no declared length), a little over the bound.
    let mut req = format!(
        "POST /api/login-codes HTTP/1.1\r\nHost: {host}\r\nAuthorization: {auth}\r\n\
         Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    )
    .into_bytes();
    for _ in 0..5 {
        req.extend_from_slice(format!("{:x}\r\n", 64 * 1024).as_bytes());
        req.extend_from_slice(&[b'x'; 64 * 1024]);
        req.extend_from_slice(b"\r\n");
    }
    req.extend_from_slice(b"0\r\n\r\n");
    let r = sc.raw_bytes(&req).await;
    assert_eq!((r.status, r.code().as_str()), (413, "too_large"));
    // A small chunked JSON body still reaches its endpoint whole.
    let body = br#"{"cols":80,"rows":24,"command":["cat"]}"#;
    let req = format!(
        "POST /api/terminals HTTP/1.1\r\nHost: {host}\r\nAuthorization: {auth}\r\nContent-Type: application/json\r\n\
         Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n{:x}\r\n{}\r\n0\r\n\r\n",
        body.len(),
        String::from_utf8_lossy(body)
    );
    assert_eq!(sc.raw_bytes(req.as_bytes()).await.status, 201);
    assert_eq!(sc.req("GET", "/api/health", None).await.status, 200, "the sidecar did not shut down");
}

#[tokio::test]
async fn terminals_are_capped_with_429_and_a_deleted_one_makes_room() {
    let sc = Sidecar::start(&["--max-terminals", "3"]);
    let mut ids = Vec::new();
    for _ in 0..3 {
        ids.push(sc.spawn(&["cat"]).await);
    }
    // An exited terminal still counts until it is deleted.
    let exited = sc.req("POST", "/api/terminals", Some(&json!({"cols":80,"rows":24,"command":["true"]}))).await;
    assert_eq!((exited.status, exited.code().as_str()), (429, "too_many_terminals"));
    assert!(exited.json()["error"]["message"].as_str().unwrap().contains('3'));
    let list = sc.req("GET", "/api/terminals", None).await.json();
    assert_eq!(list["terminals"].as_array().unwrap().len(), 3, "nothing was spawned");
    assert_eq!(sc.req("DELETE", &format!("/api/terminals/{}", ids[0]), None).await.status, 204);
    sc.spawn(&["cat"]).await;
}

/// The names of the sidecar's threads that belong to terminal `id` (`pty-read-t1`, …).
fn terminal_threads(pid: u32, id: &str) -> Vec<String> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return Vec::new() };
    tasks
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
        .map(|c| c.trim().to_string())
        .filter(|c| c.starts_with("pty-") && c.ends_with(&format!("-{id}")))
        .collect()
}

#[tokio::test]
async fn a_deleted_terminal_leaves_no_thread_behind() {
    let sc = Sidecar::start(&[]);
    let id = sc.spawn(&["sh", "-c", "seq 1 50000; echo SEQ-DONE; exec sleep 1000"]).await;
    let mut ws = sc.ws(&id).await;
    let mut seen = Seen::default();
    read_until(&mut ws, &mut seen, true, |s| s.shows(b"SEQ-DONE")).await;
    let mut before = terminal_threads(sc.pid, &id);
    before.sort();
    assert_eq!(before, [format!("pty-read-{id}"), format!("pty-wait-{id}"), format!("pty-write-{id}")]);
    assert_eq!(sc.req("DELETE", &format!("/api/terminals/{id}"), None).await.status, 204);
    read_until(&mut ws, &mut seen, true, |s| s.closed).await;
    // The writer thread ends only once the last handle on the terminal is dropped.
    let start = std::time::Instant::now();
    while !terminal_threads(sc.pid, &id).is_empty() {
        assert!(start.elapsed() < HANG, "still running: {:?}", terminal_threads(sc.pid, &id));
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The sidecar's resident memory in KiB (`VmRSS`).
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[tokio::test]
async fn deleting_terminals_gives_their_memory_back() {
    let sc = Sidecar::start(&[]);
    let start = rss_kib(sc.pid);
    // 12 terminals with ≈ 1.4 MB of output each: scrollback rings and screen histories fill.
    let mut ids = Vec::new();
    for _ in 0..12 {
        ids.push(sc.spawn(&["sh", "-c", "seq 1 200000; echo DONE; exec sleep 1000"]).await);
    }
    for id in &ids {
        let body = json!({"target": id, "until": "text", "regex": "^DONE$", "timeout_ms": 60000});
        assert_eq!(sc.req("POST", "/api/control/wait", Some(&body)).await.status, 200);
    }
    let full = rss_kib(sc.pid);
    assert!(full > start + 12 * 1024, "{start} → {full} KiB: the terminals hold their output");
    for id in &ids {
        assert_eq!(sc.req("DELETE", &format!("/api/terminals/{id}"), None).await.status, 204);
    }
    let begin = std::time::Instant::now();
    while ids.iter().any(|id| !terminal_threads(sc.pid, id).is_empty()) {
        assert!(begin.elapsed() < HANG, "terminal threads still running");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // The last holder of a terminal's state (a request in flight, the screen model) may let
    // go a little after its threads end, on a busy machine: wait for the memory, bounded.
    loop {
        let after = rss_kib(sc.pid);
        if after.saturating_sub(start) < (full - start) / 4 {
            break;
        }
        assert!(begin.elapsed() < HANG, "{start} → {full} → {after} KiB: the memory stayed");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A request with more headers than the server parses gets 431 in the JSON error shape, not
/// an empty body (issue 22 item 2c); the next connection is served as usual.
#[tokio::test]
async fn too_many_request_headers_get_431_in_the_json_shape() {
    let sc = Sidecar::start(&[]);
    let names: Vec<String> = (0..1000).map(|i| format!("X-Filler-{i}")).collect();
    let auth = sc.bearer();
    let mut headers: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), "1")).collect();
    headers.push(("Authorization", &auth));
    let r = sc.raw("GET", "/api/health", &headers, b"").await;
    assert_eq!(r.status, 431);
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(r.code(), "headers_too_large", "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(sc.req("GET", "/api/health", None).await.status, 200);
}
