//! `ph mcp` end to end: the real `ph mcp` spoken to over its stdin/stdout (JSON-RPC, one
//! message a line), with a pane's token for a real sidecar, a test window, and a real
//! Chromium behind a screencast pane showing a page this test serves.

mod common;

use std::time::Duration;

use common::mcp::{initialize, pane_with_token, Mcp};
use common::window::TestWindow;
use common::{Sidecar, HANG};
use serde_json::json;

fn pages(path: &str) -> Option<String> {
    (path == "/hello.html").then(|| "<!doctype html><title>Hello</title><button>Press me</button>".to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ph_mcp_serves_the_verbs_as_tools() {
    let sc = Sidecar::start(&[]);
    let base = common::browser::serve(pages);
    let (t1, token) = pane_with_token(&sc).await;
    let _win = TestWindow::attach(&sc, &t1).await;
    let mut mcp = tokio::task::block_in_place(|| Mcp::start(sc.port, &token));

    tokio::task::block_in_place(|| {
        let init = mcp.ask(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}),
        );
        assert_eq!(init["serverInfo"]["name"], "porthole-ph", "{init}");
        assert!(init["capabilities"]["tools"].is_object(), "{init}");
        assert!(init["instructions"].as_str().unwrap().contains("stale_ref"), "the guide is the instructions");
        mcp.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));

        let list = mcp.ask("tools/list", json!({}));
        let tools = list["tools"].as_array().unwrap_or_else(|| panic!("{list}"));
        let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
        for n in [
            "list",
            "send",
            "read",
            "wait",
            "browser_open",
            "browser_snapshot",
            "browser_click",
            "browser_upload",
            "browser_drag",
        ] {
            assert!(names.contains(&n), "{n} in {names:?}");
        }
        let upload = tools.iter().find(|t| t["name"] == "browser_upload").unwrap();
        assert_eq!(upload["inputSchema"]["required"], json!(["ref", "file"]), "{upload}");
        assert_eq!(upload["inputSchema"]["properties"]["file"]["type"], "array", "{upload}");
        let drag = tools.iter().find(|t| t["name"] == "browser_drag").unwrap();
        assert_eq!(drag["inputSchema"]["required"], json!(["ref", "to"]), "{drag}");
        assert!(!names.contains(&"mcp") && !names.contains(&"completions"), "{names:?}");
        let send = tools.iter().find(|t| t["name"] == "send").unwrap();
        assert_eq!(send["inputSchema"]["required"], json!(["pane"]), "{send}");
        assert!(send["inputSchema"]["properties"]["stdin"].is_null(), "stdin is the MCP channel: {send}");

        // Terminal verbs: the same text `ph` prints.
        let (err, text, _) = mcp.call("send", json!({"pane": t1, "text": "echo mcp-$((40+2))", "key": ["enter"]}));
        assert!(!err, "{text}");
        let (err, text, _) = mcp.call("wait", json!({"pane": t1, "until": "text=^mcp-42$", "timeout": "20"}));
        assert_eq!((err, text.as_str()), (false, "mcp-42\n"));
        let (err, text, _) = mcp.call("read", json!({"pane": "self"}));
        assert!(!err && text.lines().any(|l| l == "mcp-42"), "{text}");
        let (err, text, _) = mcp.call("list", json!({}));
        assert!(!err && text.starts_with("HANDLE") && text.contains(&t1) && text.contains("self"), "{text}");

        // A browser verb: open a screencast pane (the caller's default from now on), snapshot.
        let (err, b, _) = mcp.call("browser_open", json!({"target": format!("{base}/hello.html")}));
        assert!(!err && b.starts_with('b'), "{b}");
        let deadline = std::time::Instant::now() + HANG;
        loop {
            let (err, text, _) = mcp.call("browser_snapshot", json!({"interactive": true}));
            assert!(!err, "{text}");
            if text.contains("button \"Press me\" [ref=e") {
                assert!(text.starts_with(&format!("page {base}/hello.html \"Hello\" · tab 1/1")), "{text}");
                break;
            }
            assert!(std::time::Instant::now() < deadline, "never loaded: {text}");
            std::thread::sleep(Duration::from_millis(200));
        }

        // snapshot --ref and wait --ref-state are tool parameters too.
        let wait = tools.iter().find(|t| t["name"] == "browser_wait").unwrap();
        assert!(wait["inputSchema"]["properties"]["ref_state"].is_object(), "{wait}");
        let (_, text, _) = mcp.call("browser_snapshot", json!({"interactive": true}));
        let press = text.lines().find(|l| l.contains("Press me")).unwrap();
        let r = &press[press.find("[ref=").unwrap() + 5..press.rfind(']').unwrap()];
        let (err, one, _) = mcp.call("browser_snapshot", json!({"ref": r}));
        assert!(!err && one.lines().nth(1) == Some(press) && one.lines().count() == 2, "{one}");
        let (err, text, _) = mcp.call("browser_wait", json!({"ref_state": format!("{r}=visible"), "timeout": "5"}));
        assert!(!err && text.starts_with("ok after "), "{text}");
        let (err, text, sc_) = mcp.call("browser_wait", json!({"ref_state": format!("{r}=checked"), "timeout": "1"}));
        assert!(err && text.ends_with("[bad_request]"), "{text}");
        assert_eq!(sc_["code"], "bad_request");

        // A screenshot is image content, scaled to at most 1568 px on its long side; with
        // `output` the original goes to that file too; `annotate` adds the legend.
        let (err, text, _) = mcp.call("browser_viewport", json!({"width": "2000", "height": "1000"}));
        assert!(!err, "{text}");
        let out = common::temp_dir("mcp-shot").join("original.png");
        let r = mcp.ask(
            "tools/call",
            json!({"name": "browser_screenshot", "arguments": {"annotate": true, "output": out.to_string_lossy()}}),
        );
        assert_eq!(
            (r["content"][0]["type"].as_str(), r["content"][0]["mimeType"].as_str()),
            (Some("image"), Some("image/png")),
            "{r}"
        );
        let png = base64::Engine::decode(
            &base64::engine::general_purpose::STANDARD,
            r["content"][0]["data"].as_str().unwrap(),
        )
        .unwrap();
        let side = |png: &[u8], at: usize| u32::from_be_bytes(png[at..at + 4].try_into().unwrap());
        assert_eq!((side(&png, 16), side(&png, 20)), (1568, 784), "scaled to 1568 px on the long side");
        let text = r["content"][1]["text"].as_str().unwrap();
        assert!(
            text.starts_with("1568×784 px (scaled to at most 1568 px") && text.contains(" button \"Press me\""),
            "{text}"
        );
        assert!(text.contains(&format!("original: {}", out.display())), "{text}");
        let original = std::fs::read(&out).unwrap();
        assert_eq!((side(&original, 16), side(&original, 20)), (2000, 1000), "the original, unscaled");

        // Refusals are tool errors carrying the stable code.
        let (err, text, sc_) = mcp.call("browser_click", json!({"ref": "e9999"}));
        assert!(err, "{text}");
        assert!(text.ends_with("[unknown_ref]"), "{text}");
        assert_eq!(sc_, json!({"code": "unknown_ref", "exit": 1}));
        let (err, text, sc_) = mcp.call("read", json!({"pane": "t999"}));
        assert!(err && text.ends_with("[unknown_target]"), "{text}");
        assert_eq!(sc_["code"], "unknown_target");
        let (err, text, sc_) = mcp.call("browser_fill", json!({"ref": "e1"}));
        assert!(err && text.contains("TEXT"), "a missing argument is clap's usage error: {text}");
        assert_eq!(sc_["code"], "usage");
        let unknown = mcp.ask("tools/call", json!({"name": "nope", "arguments": {}}));
        assert!(unknown["rpc_error"].is_object(), "{unknown}");
    });
}

/// A bare environment lists the tools, and every call says which variable is missing; a
/// failed program awaited with `wait --until exit` is a tool error (`program_failed`, exit 5).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bare_environment_is_named_and_a_failed_program_is_an_error() {
    tokio::task::block_in_place(|| {
        let mut bare = Mcp::start_bare();
        initialize(&mut bare);
        let list = bare.ask("tools/list", json!({}));
        let names: Vec<&str> = list["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
        assert!(names.contains(&"browser_scroll_to") && !names.contains(&"browser_scroll-to"), "{names:?}");
        let (err, text, meta) = bare.call("list", json!({}));
        assert!(err, "{text}");
        assert!(text.contains("PORTHOLE_URL and PORTHOLE_TOKEN are not set"), "{text}");
        assert_eq!(meta, json!({"code": "usage", "exit": 1}));
    });
    let sc = Sidecar::start(&[]);
    let failed = sc.spawn(&["sh", "-c", "exit 7"]).await;
    let mut mcp = tokio::task::block_in_place(|| Mcp::start(sc.port, &sc.token));
    tokio::task::block_in_place(|| {
        initialize(&mut mcp);
        let (err, text, meta) = mcp.call("wait", json!({"pane": failed, "until": "exit", "timeout": "60"}));
        assert_eq!((err, text.as_str()), (true, "exited 7"), "{meta}");
        assert_eq!(meta, json!({"code": "program_failed", "exit": 5}));
    });
}
