//! The human's side of sealed content (issue 24) through the real sidecar: the app writes
//! `[agent.sealed]` (`PATCH /api/config/agent-sealed`, protocol §4) keeping the file's
//! comments, a pane token and out-of-range values are refused, `PORTHOLE_AGENT_SEALED=off`
//! locks it; force-open (real Chromium) makes a page's closed roots open from the next
//! document and not before, and turning it off restores them at the next document.

mod common;

use common::browser::{create_at, fixed, serve, until_title};
use common::control::{run_in, shell};
use common::Sidecar;
use serde_json::{json, Value};

/// `PATCH /api/config/agent-sealed` with the app's token.
async fn patch(sc: &Sidecar, body: Value) -> common::Resp {
    sc.req("PATCH", "/api/config/agent-sealed", Some(&body)).await
}

fn config_file(sc: &Sidecar) -> std::path::PathBuf {
    sc.home.join(".config/porthole/config.toml")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_app_writes_the_policy_in_place_and_a_pane_token_or_a_bad_value_is_refused() {
    let sc = Sidecar::start_with_env_changes(&[], &[("SHELL", "/bin/bash")], &["PORTHOLE_AGENT_SEALED"]);
    let file = config_file(&sc);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let before = "# mine\n[font]\nsize = 14 # big enough\n\n[agent.sealed]\n# the master\nenabled = true # keep on\n";
    std::fs::write(&file, before).unwrap();
    sc.req("GET", "/api/config", None).await; // the sidecar is up and has read it

    let r = patch(&sc, json!({"force_open": true, "max_frames": 8})).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    let v = r.json();
    assert_eq!(v["config"]["agent"]["sealed"]["force_open"], true, "the answer is the applied snapshot: {v}");
    assert_eq!(v["config"]["agent"]["sealed"]["max_frames"], 8, "{v}");
    assert_eq!(v["config"]["font"]["size"], 14.0, "{v}");
    let text = std::fs::read_to_string(&file).unwrap();
    assert_eq!(
        text,
        "# mine\n[font]\nsize = 14 # big enough\n\n[agent.sealed]\n# the master\nenabled = true # keep on\nforce_open = true\nmax_frames = 8\n"
    );

    // Out of range, unknown, wrong kind: refused, the file untouched.
    for (body, words) in [
        (json!({"max_frames": 65}), "agent.sealed.max_frames must be an integer in 1..=64"),
        (json!({"scans_per_minute": 0}), "1..=120"),
        (json!({"crop_max_side": 9000}), "64..=4096"),
        (json!({"force_open": "yes"}), "true or false"),
        (json!({"forceOpen": true}), "no key"),
        (json!({}), "names no key"),
    ] {
        let r = patch(&sc, body.clone()).await;
        assert_eq!((r.status, r.code()), (400, "bad_request".to_string()), "{body}");
        assert!(r.json()["error"]["message"].as_str().unwrap().contains(words), "{body}: {}", r.json());
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);

    // A pane's token (what `ph` in a terminal holds) may never write it.
    let t = shell(&sc).await;
    let tok_file = sc.home.join("tok");
    run_in(&sc, &t, &format!(r#"printf %s "$PORTHOLE_TOKEN" > {}; echo saved"#, tok_file.display()), "^saved$").await;
    let token = std::fs::read_to_string(&tok_file).unwrap();
    assert_eq!(token.len(), 64);
    let bearer = format!("Bearer {token}");
    let r = sc
        .raw(
            "PATCH",
            "/api/config/agent-sealed",
            &[("Authorization", &bearer), ("Content-Type", "application/json")],
            br#"{"force_open":false}"#,
        )
        .await;
    assert_eq!((r.status, r.code()), (401, "unauthorized".to_string()), "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text, "a pane token changed nothing");
    // Nor may it show itself the credentials in network details (`[agent] show_secrets`).
    let r = sc
        .raw(
            "PATCH",
            "/api/config/agent",
            &[("Authorization", &bearer), ("Content-Type", "application/json")],
            br#"{"show_secrets":true}"#,
        )
        .await;
    assert_eq!((r.status, r.code()), (401, "unauthorized".to_string()), "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text, "a pane token changed nothing");

    // A file the user broke is not written over.
    std::fs::write(&file, "[font]\nsize = \n").unwrap();
    let r = patch(&sc, json!({"enabled": false})).await;
    assert_eq!((r.status, r.code()), (409, "config_invalid".to_string()), "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "[font]\nsize = \n");
}

#[tokio::test]
async fn the_environment_kill_switch_locks_the_policy() {
    let sc = Sidecar::start_with_env(&[], &[("PORTHOLE_AGENT_SEALED", "off")]);
    let v = sc.req("GET", "/api/config", None).await.json();
    assert_eq!(v["env_locks"], json!(["agent.sealed"]), "{v}");
    let r = patch(&sc, json!({"force_open": true})).await;
    assert_eq!(
        (r.status, r.code()),
        (409, "locked_by_environment".to_string()),
        "{}",
        String::from_utf8_lossy(&r.body)
    );
    assert!(!config_file(&sc).exists(), "nothing written");
}

/// A page that runs the closed-root probe a page script would, and shows the result as its
/// title (`sealed` or `open`, with the query to tell documents apart).
fn probe_page(path: &str) -> Option<String> {
    (path == "/probe").then(|| {
        "<!doctype html><title>probing</title><script>\
         const h = document.createElement('div'); h.attachShadow({mode: 'closed'});\
         document.title = (h.shadowRoot === null ? 'sealed ' : 'open ') + location.search;\
         </script>"
            .to_string()
    })
}

/// `POST /api/browsers/{id}/sealed-probe` (must answer 200).
async fn probe(sc: &Sidecar, id: &str) -> Value {
    let r = sc.req("POST", &format!("/api/browsers/{id}/sealed-probe"), None).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    r.json()
}

/// Navigates browser `id` and waits (bounded) for the probe page's title of that document.
async fn visit(sc: &Sidecar, id: &str, base: &str, n: u32) -> String {
    let url = format!("{base}/probe?{n}");
    let r = sc.req("POST", &format!("/api/browsers/{id}/navigate"), Some(&json!({"url": url}))).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    until_title(sc, id, |t| t.ends_with(&format!("?{n}"))).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn force_open_opens_closed_roots_from_the_next_document_and_off_restores_them_at_the_next() {
    let sc = Sidecar::start_with_env_changes(&[], &[], &["PORTHOLE_AGENT_SEALED"]);
    let base = serve(probe_page);
    let id = create_at(&sc, &format!("{base}/probe?1"), fixed(800, 600, 1.0)).await;
    assert_eq!(until_title(&sc, &id, |t| t.ends_with("?1")).await, "sealed ?1");
    let p = probe(&sc, &id).await;
    assert_eq!(
        (p["armed"].clone(), p["shadow_root_null"].clone(), p["native_source"].clone()),
        (json!(false), json!(true), json!(true)),
        "{p}"
    );

    let r = patch(&sc, json!({"force_open": true})).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    // The document already loaded is not touched: only the next ones.
    let p = probe(&sc, &id).await;
    assert_eq!(
        (p["armed"].clone(), p["shadow_root_null"].clone(), p["patched"].clone()),
        (json!(true), json!(true), json!(false)),
        "{p}"
    );
    assert_eq!(visit(&sc, &id, &base, 2).await, "open ?2", "the page's own probe sees its closed root open");
    let p = probe(&sc, &id).await;
    assert_eq!(
        (p["shadow_root_null"].clone(), p["native_source"].clone(), p["patched"].clone()),
        (json!(false), json!(false), json!(true)),
        "{p}"
    );
    assert_eq!(p["root_mode"], "open", "{p}");
    assert!(p["source"].as_str().unwrap().contains("mode: 'open'"), "honest: no toString forgery: {p}");

    assert_eq!(visit(&sc, &id, &base, 3).await, "open ?3", "every later document too");

    let r = patch(&sc, json!({"force_open": false})).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    let p = probe(&sc, &id).await;
    assert_eq!(
        (p["armed"].clone(), p["patched"].clone()),
        (json!(false), json!(true)),
        "the current document stays patched: {p}"
    );
    assert_eq!(visit(&sc, &id, &base, 4).await, "sealed ?4", "off restores closed roots at the next document");
    let p = probe(&sc, &id).await;
    assert_eq!((p["shadow_root_null"].clone(), p["native_source"].clone()), (json!(true), json!(true)), "{p}");
}

/// Saves `text` as the config file the way editors do (a temp file renamed over it) and
/// waits (bounded) until `GET /api/config` shows `agent.sealed.force_open` as `armed`.
async fn save_config(sc: &Sidecar, text: &str, armed: bool) {
    let file = config_file(sc);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let tmp = file.with_file_name(".config.toml.tmp");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, &file).unwrap();
    let deadline = tokio::time::Instant::now() + common::HANG;
    while sc.req("GET", "/api/config", None).await.json()["config"]["agent"]["sealed"]["force_open"] != armed {
        assert!(tokio::time::Instant::now() < deadline, "the config never applied: {text}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// Force-open follows the file as the user edits it (the hot reload, not the app's write):
/// armed in the file before the browser starts, its first document is opened; turned off in
/// the file, a later document is sealed again; the master switch off disarms it too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn force_open_follows_the_file_on_every_reload_under_the_master_switch() {
    let sc = Sidecar::start_with_env_changes(&[], &[], &["PORTHOLE_AGENT_SEALED"]);
    save_config(&sc, "[agent.sealed]\nforce_open = true\n", true).await;
    let base = serve(probe_page);
    let id = create_at(&sc, &format!("{base}/probe?1"), fixed(800, 600, 1.0)).await;
    assert_eq!(until_title(&sc, &id, |t| t.ends_with("?1")).await, "open ?1", "the first document is covered");

    // Off in the file: a later document is sealed, and every one after it.
    save_config(&sc, "[agent.sealed]\nforce_open = false\n", false).await;
    let mut n = 1;
    n = visit_until(&sc, &id, &base, n, "sealed").await;
    assert_eq!(visit(&sc, &id, &base, n + 1).await, format!("sealed ?{}", n + 1), "and stays so");

    // Armed again, then the master switch off with force_open still on: disarmed.
    save_config(&sc, "[agent.sealed]\nforce_open = true\n", true).await;
    n = visit_until(&sc, &id, &base, n + 1, "open").await;
    save_config(&sc, "[agent.sealed]\nenabled = false\nforce_open = true\n", true).await;
    n = visit_until(&sc, &id, &base, n, "sealed").await;
    assert_eq!(probe(&sc, &id).await["armed"], false);
    assert_eq!(visit(&sc, &id, &base, n + 1).await, format!("sealed ?{}", n + 1));
}

/// Loads documents `?n+1`, `?n+2`… until one's probe says `want` (`open` or `sealed`),
/// bounded by `HANG`; returns its number. A reload reaches the browsers shortly after the
/// config snapshot shows it, so the first document may still be the old way.
async fn visit_until(sc: &Sidecar, id: &str, base: &str, mut n: u32, want: &str) -> u32 {
    let deadline = tokio::time::Instant::now() + common::HANG;
    loop {
        n += 1;
        if visit(sc, id, base, n).await == format!("{want} ?{n}") {
            return n;
        }
        assert!(tokio::time::Instant::now() < deadline, "documents never became {want}");
    }
}
