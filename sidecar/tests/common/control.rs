//! The control plane as a test drives it: terminals started over the API, verbs posted to
//! `/api/control/*`, a line typed into a terminal and its screen awaited.

use serde_json::{json, Value};

use super::{Resp, Sidecar};

/// Creates a terminal (120×40, the default login shell) and returns its id.
pub async fn shell(sc: &Sidecar) -> String {
    let r = sc.req("POST", "/api/terminals", Some(&json!({"cols": 120, "rows": 40}))).await;
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    r.json()["id"].as_str().unwrap().to_string()
}

/// `POST /api/control/{verb}` with `body`.
pub async fn control(sc: &Sidecar, verb: &str, body: Value) -> Resp {
    sc.req("POST", &format!("/api/control/{verb}"), Some(&body)).await
}

/// Types `line` into terminal `t` and waits (bounded generously: a busy machine is no
/// failure) until its screen shows a line matching `until`; returns the screen with up to 400
/// lines of its history.
pub async fn run_in(sc: &Sidecar, t: &str, line: &str, until: &str) -> String {
    let r = control(sc, "send", json!({"target": t, "text": line, "keys": ["enter"]})).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    let r = control(sc, "wait", json!({"target": t, "until": "text", "regex": until, "timeout_ms": 90000})).await;
    let screen = control(sc, "read", json!({"target": t, "scrollback": 400})).await.json();
    assert_eq!(r.status, 200, "waiting for {until:?} in {t}: {}\nscreen: {screen:#}", String::from_utf8_lossy(&r.body));
    screen["lines"].as_array().unwrap().iter().map(|l| l.as_str().unwrap().to_string()).collect::<Vec<_>>().join("\n")
}

/// Runs the real `ph` with the sidecar's token (no pane of its own: `--pane` names one) →
/// (exit code, stdout, stderr); -1 when a signal ended it.
pub fn ph(sc: &Sidecar, args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ph"))
        .args(args)
        .env("PORTHOLE_URL", format!("http://127.0.0.1:{}/", sc.port))
        .env("PORTHOLE_TOKEN", &sc.token)
        .output()
        .unwrap();
    let s = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().unwrap_or(-1), s(&out.stdout), s(&out.stderr))
}
