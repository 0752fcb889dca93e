//! The config file through the real sidecar (docs/config.md, protocol §4 `GET /api/config`):
//! a file saved by rename is reloaded, unknown keys are listed, an invalid file keeps the last
//! good config with its line and column, and `shell.integration = false` reaches new shells.

mod common;

use std::time::Duration;

use common::{read_until, send_input, Seen, Sidecar};
use serde_json::{json, Value};

/// Saves `text` as editors do: a temp file renamed over `config.toml`.
fn save(sc: &Sidecar, text: &str) {
    let dir = sc.home.join(".config/porthole");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(".config.toml.tmp"), text).unwrap();
    std::fs::rename(dir.join(".config.toml.tmp"), dir.join("config.toml")).unwrap();
}

/// Polls `GET /api/config` until `ok` holds (bounded generously: a slow machine is no failure).
async fn config_until(sc: &Sidecar, ok: impl Fn(&Value) -> bool) -> Value {
    for _ in 0..400 {
        let r = sc.req("GET", "/api/config", None).await;
        assert_eq!(r.status, 200);
        let v = r.json();
        if ok(&v) {
            return v;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("GET /api/config never matched");
}

#[tokio::test]
async fn a_saved_config_reloads_and_an_invalid_one_keeps_the_last_good() {
    let sc = Sidecar::start_with_env(&[], &[("SHELL", "/usr/bin/bash")]);
    let v = config_until(&sc, |_| true).await;
    let file = sc.home.join(".config/porthole/config.toml");
    assert_eq!(v["file"], file.to_string_lossy().as_ref());
    assert_eq!(v["config"]["font"]["size"], 13.0);
    assert_eq!(v["config"]["keys"]["bindings"]["split-right"], "%");
    assert_eq!(v["error"], Value::Null);

    save(&sc, "[shell]\nintegration = false\n[font]\nsize = 15\nbogus = 1\n");
    let v = config_until(&sc, |v| v["config"]["font"]["size"] == 15.0).await;
    assert_eq!(v["unknown_keys"], json!(["font.bogus"]));
    assert_eq!(v["config"]["shell"]["integration"], false);

    save(&sc, "[shell]\nintegration = false\n[font]\nsize = 99\n");
    let v = config_until(&sc, |v| !v["error"].is_null()).await;
    assert_eq!(v["config"]["font"]["size"], 15.0, "the last good config stays: {v}");
    assert_eq!(v["error"]["line"], 4, "{v}");
    assert_eq!(v["error"]["column"], 8, "{v}");
    assert!(v["error"]["message"].as_str().unwrap().contains("font.size must be 6..=72"), "{v}");

    // A new terminal's shell sees the switch and reports no cwd.
    let cwd = sc.home.to_string_lossy().to_string();
    let r = sc.req("POST", "/api/terminals", Some(&json!({"cols": 100, "rows": 30, "cwd": cwd}))).await;
    assert_eq!(r.status, 201);
    let id = r.json()["id"].as_str().unwrap().to_string();
    let mut ws = sc.ws(&id).await;
    let mut seen = Seen::default();
    send_input(&mut ws, b"cd /tmp; echo \"[switch=${PORTHOLE_SHELL_INTEGRATION}]\"\r").await;
    read_until(&mut ws, &mut seen, true, |s| String::from_utf8_lossy(&s.bytes).contains("[switch=0]")).await;
    let shells: Vec<&Value> = seen.controls.iter().map(|(_, v)| v).filter(|v| v["type"] == "shell").collect();
    assert!(shells.iter().all(|v| v["cwd"].is_null() && v["integration"] != true), "{shells:?}");
    let t = sc.terminal(&id).await;
    assert_ne!(t["shell"]["cwd"], "/tmp", "{t}");
}

#[test]
fn print_default_config_prints_the_commented_default_file() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_porthole-sidecar"))
        .arg("--print-default-config")
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("# Porthole configuration"), "{text}");
    assert!(text.contains("\n[font]\n") && text.contains("size = 13"), "{text}");
}

/// A shell that cannot run is refused at load with its key and why, at its line, and the last
/// good config stays; so is a key bound twice, at the offending line, not 1:1 (issue 22
/// item 2b).
#[tokio::test]
async fn a_shell_that_cannot_run_and_a_key_bound_twice_are_refused_at_their_line() {
    let sc = Sidecar::start(&[]);
    save(&sc, "[font]\nsize = 15\n");
    config_until(&sc, |v| v["config"]["font"]["size"] == 15.0).await;
    let mut revision = 0;
    for (text, line, column, words) in [
        ("[font]\nsize = 16\n\n[shell]\nprogram = \"/nonexistent/zsh\"\n", 5, 11, "\"/nonexistent/zsh\" cannot run: no such file"),
        ("[shell]\nprogram = \"/etc/passwd\"\n", 2, 11, "shell.program \"/etc/passwd\" cannot run: not executable"),
        ("[keys.bindings]\nsplit-right = \"s\"\nzoom = \"x\"\n", 3, 8, "close and zoom are both bound to \"x\""),
        (
            "[[browser.viewports]]\nname = \"Big\"\nwidth = 2000\nheight = 1000\n\n[[browser.viewports]]\nname = \"Big\"\nwidth = 900\nheight = 900\n",
            7,
            8,
            "\"Big\" is named twice",
        ),
    ] {
        save(&sc, text);
        let v = config_until(&sc, |v| v["revision"].as_u64().unwrap() > revision && !v["error"].is_null()).await;
        revision = v["revision"].as_u64().unwrap();
        assert_eq!(v["config"]["font"]["size"], 15.0, "the last good config stays: {v}");
        assert_eq!(v["config"]["shell"]["program"], "", "{v}");
        assert_eq!((v["error"]["line"].as_u64(), v["error"]["column"].as_u64()), (Some(line), Some(column)), "{text:?}: {v}");
        assert!(v["error"]["message"].as_str().unwrap().contains(words), "{text:?}: {v}");
    }
    save(&sc, "[shell]\nprogram = \"/usr/bin/bash\"\n");
    let v = config_until(&sc, |v| v["error"].is_null()).await;
    assert_eq!(v["config"]["shell"]["program"], "/usr/bin/bash", "{v}");
}
