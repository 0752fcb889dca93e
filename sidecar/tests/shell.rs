//! Shell integration (DESIGN §13, protocol §4.3) with the real bash, zsh and fish on real
//! PTYs: the reported cwd, the running command, exit statuses, attention events, and a
//! user prompt that already emits OSC 133 not getting a second set of marks.

mod common;

use common::{read_until, send_input, Seen, Sidecar, Ws};
use serde_json::{json, Value};

/// The shell at `path`; the README's test command installs zsh and fish.
fn shell(path: &str) -> &str {
    assert!(std::path::Path::new(path).exists(), "{path} is missing: `cargo xtask test` installs it");
    path
}

async fn login_terminal(sc: &Sidecar) -> (String, Ws) {
    let cwd = sc.home.to_string_lossy().to_string();
    let r = sc.req("POST", "/api/terminals", Some(&json!({"cols": 100, "rows": 30, "cwd": cwd}))).await;
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    let id = r.json()["id"].as_str().unwrap().to_string();
    let ws = sc.ws(&id).await;
    (id, ws)
}

fn shells_seen(seen: &Seen) -> Vec<&Value> {
    seen.controls.iter().map(|(_, v)| v).filter(|v| v["type"] == "shell").collect()
}

fn count(hay: &[u8], needle: &[u8]) -> usize {
    hay.windows(needle.len()).filter(|w| *w == needle).count()
}

/// Types `line` + Enter, then reads until a `shell` message satisfies `pred`.
async fn run_until(ws: &mut Ws, seen: &mut Seen, line: &str, pred: impl Fn(&Value) -> bool) -> Value {
    let before = shells_seen(seen).len();
    send_input(ws, format!("{line}\r").as_bytes()).await;
    read_until(ws, seen, true, |s| shells_seen(s)[before..].iter().any(|v| pred(v))).await;
    shells_seen(seen)[before..].iter().find(|v| pred(v)).map(|v| (*v).clone()).unwrap()
}

async fn reports_cwd_command_and_status(path: &str) {
    let sc = Sidecar::start_with_env(&[], &[("SHELL", shell(path))]);
    let (id, mut ws) = login_terminal(&sc).await;
    let mut seen = Seen::default();
    // The first prompt reports the starting directory.
    let home = sc.home.canonicalize().unwrap().to_string_lossy().to_string();
    read_until(&mut ws, &mut seen, true, |s| shells_seen(s).iter().any(|v| v["cwd"] == home.as_str())).await;

    let v = run_until(&mut ws, &mut seen, "cd /tmp", |v| v["cwd"] == "/tmp").await;
    assert_eq!(v["integration"], true, "{v}");
    let t = sc.terminal(&id).await;
    assert_eq!(t["shell"]["cwd"], "/tmp", "{t}");
    assert_eq!(t["cwd_now"], "/tmp", "{t}");

    let v = run_until(&mut ws, &mut seen, "sleep 2", |v| !v["running"].is_null()).await;
    assert_eq!(v["running"]["command"], "sleep 2", "{v}");
    let t = sc.terminal(&id).await;
    assert_eq!(t["shell"]["running"]["command"], "sleep 2", "the API shows it while it runs: {t}");
    read_until(&mut ws, &mut seen, true, |s| shells_seen(s).last().is_some_and(|v| v["running"].is_null())).await;
    assert_eq!(shells_seen(&seen).last().unwrap()["last_exit"], 0);

    let v = run_until(&mut ws, &mut seen, "false", |v| v["last_exit"] == 1 && v["running"].is_null()).await;
    assert_eq!(v["cwd"], "/tmp");

    // Attention: a bell, and OSC 777 notify after the rate limit's second.
    send_input(&mut ws, b"printf '\\a'\r").await;
    read_until(&mut ws, &mut seen, true, |s| s.controls.iter().any(|(_, v)| v["kind"] == "bell")).await;
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    send_input(&mut ws, b"printf '\\e]777;notify;Build;done\\a'\r").await;
    read_until(&mut ws, &mut seen, true, |s| s.controls.iter().any(|(_, v)| v["kind"] == "notify")).await;
    let n = seen.controls.iter().map(|(_, v)| v).find(|v| v["kind"] == "notify").unwrap();
    assert_eq!((n["title"].as_str(), n["body"].as_str()), (Some("Build"), Some("done")), "{n}");

    // Exactly one prompt mark per prompt and one end mark per command: six prompts (the
    // first and one after each of the five commands).
    read_until(&mut ws, &mut seen, true, |s| count(&s.bytes, b"\x1b]133;A") >= 6).await;
    let (prompts, ends) = (count(&seen.bytes, b"\x1b]133;A"), count(&seen.bytes, b"\x1b]133;D"));
    assert_eq!((prompts, ends), (6, 5), "{:?}", String::from_utf8_lossy(&seen.bytes));

    // A new client gets the state at once, before any new output.
    let mut ws2 = sc.ws(&id).await;
    let mut seen2 = Seen::default();
    read_until(&mut ws2, &mut seen2, true, |s| !shells_seen(s).is_empty()).await;
    assert_eq!(shells_seen(&seen2)[0]["cwd"], "/tmp");
}

#[tokio::test]
async fn bash_reports_cwd_command_and_status() {
    reports_cwd_command_and_status("/usr/bin/bash").await;
}

#[tokio::test]
async fn zsh_reports_cwd_command_and_status() {
    reports_cwd_command_and_status("/usr/bin/zsh").await;
}

#[tokio::test]
async fn fish_reports_cwd_command_and_status() {
    reports_cwd_command_and_status("/usr/bin/fish").await;
}

/// The user's own prompt already emits OSC 133 (as VS Code's script or a theme does): one
/// prompt mark per prompt, theirs.
async fn own_marks_are_not_doubled(path: &str, rc: &str, text: &str) {
    let sc = Sidecar::start_with_env(&[], &[("SHELL", shell(path))]);
    let file = sc.home.join(rc);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, text).unwrap();
    let (_id, mut ws) = login_terminal(&sc).await;
    let mut seen = Seen::default();
    read_until(&mut ws, &mut seen, true, |s| count(&s.bytes, b"mine>") >= 1).await;
    for i in 0..3 {
        send_input(&mut ws, format!("echo step{i}\r").as_bytes()).await;
        read_until(&mut ws, &mut seen, true, |s| count(&s.bytes, b"mine>") >= i + 2).await;
    }
    let prompts = count(&seen.bytes, b"mine>");
    assert_eq!(prompts, 4);
    assert_eq!(count(&seen.bytes, b"\x1b]133;A"), prompts, "{:?}", String::from_utf8_lossy(&seen.bytes));
    assert_eq!(count(&seen.bytes, b"\x1b]133;C"), 0, "their prompt sends no C: neither may we");
}

#[tokio::test]
async fn a_bash_prompt_with_its_own_marks_is_not_doubled() {
    own_marks_are_not_doubled("/usr/bin/bash", ".profile", "PS1='\\[\\e]133;A\\a\\]mine> '\n").await;
}

#[tokio::test]
async fn a_zsh_prompt_with_its_own_marks_is_not_doubled() {
    own_marks_are_not_doubled("/usr/bin/zsh", ".zshrc", "PS1=$'%{\\e]133;A\\a%}mine> '\n").await;
}

#[tokio::test]
async fn a_fish_prompt_with_its_own_marks_is_not_doubled() {
    own_marks_are_not_doubled(
        "/usr/bin/fish",
        ".config/fish/config.fish",
        "function fish_prompt\n    printf '\\e]133;A\\amine> '\nend\n",
    )
    .await;
}

/// `POST /api/terminals/{id}/resolve`: paths as printed, read from the terminal's cwd now.
#[tokio::test]
async fn printed_paths_resolve_against_the_terminal_cwd() {
    let sc = Sidecar::start_with_env(&[], &[("SHELL", shell("/usr/bin/bash"))]);
    let dir = common::temp_dir("resolve");
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("src/main.rs"), "fn main() {}\n").unwrap();
    std::fs::write(sc.home.join("notes.txt"), "n\n").unwrap();
    let (id, mut ws) = login_terminal(&sc).await;
    let mut seen = Seen::default();
    let want = dir.canonicalize().unwrap().to_string_lossy().to_string();
    run_until(&mut ws, &mut seen, &format!("cd '{want}'"), |v| v["cwd"] == want.as_str()).await;
    let r = sc
        .req(
            "POST",
            &format!("/api/terminals/{id}/resolve"),
            Some(&json!({"paths": ["src/main.rs", "src", "nope.rs", "~/notes.txt"]})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    let home = sc.home.canonicalize().unwrap();
    assert_eq!(
        r.json()["paths"],
        json!([
            {"path": "src/main.rs", "resolved": format!("{want}/src/main.rs"), "kind": "file"},
            {"path": "src", "resolved": format!("{want}/src"), "kind": "dir"},
            {"path": "nope.rs", "resolved": null, "kind": null},
            {"path": "~/notes.txt", "resolved": home.join("notes.txt").to_string_lossy(), "kind": "file"},
        ])
    );
    for bad in
        [json!({"paths": []}), json!({"paths": ["a\u{0}b"]}), json!({"paths": vec!["x"; 65]}), json!({"path": "x"})]
    {
        let r = sc.req("POST", &format!("/api/terminals/{id}/resolve"), Some(&bad)).await;
        assert_eq!(r.status, 400, "{bad}");
    }
    let r = sc.req("POST", "/api/terminals/t999/resolve", Some(&json!({"paths": ["x"]}))).await;
    assert_eq!(r.status, 404);
}

/// Marks printed by a function the prompt calls (`PS1='\[$(__m A)\]…'`) are the prompt's own
/// too: judged by what the prompt emits, not by its text (issue 22 item 2b).
#[tokio::test]
async fn a_bash_prompt_whose_function_prints_marks_is_not_doubled() {
    own_marks_are_not_doubled(
        "/usr/bin/bash",
        ".profile",
        "__m() { printf '\\e]133;%s\\a' \"$1\"; }\nPS1='\\[$(__m A)\\]mine> \\[$(__m B)\\]'\n",
    )
    .await;
}

/// The same in zsh, with `prompt_subst`: judged by the prompt's full expansion.
#[tokio::test]
async fn a_zsh_prompt_whose_function_prints_marks_is_not_doubled() {
    own_marks_are_not_doubled(
        "/usr/bin/zsh",
        ".zshrc",
        "setopt prompt_subst\n__m() { printf '\\e]133;%s\\a' \"$1\"; }\nPS1='%{$(__m A)%}mine> %{$(__m B)%}'\n",
    )
    .await;
}
