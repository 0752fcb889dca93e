//! The control plane end to end (protocol §9, §10): the real `ph` running inside a real
//! pane of the real sidecar, with a test window on the UI channel standing in for the UI.

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use common::control::{control, ph, run_in, shell};
use common::window::TestWindow;
use common::{Sidecar, HANG};
use serde_json::json;

/// A sidecar whose default shell is a login bash (what a user on Debian gets).
fn bash_sidecar() -> Sidecar {
    Sidecar::start_with_env(&[], &[("SHELL", "/bin/bash")])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ph_in_a_pane_splits_sends_waits_and_reads() {
    let sc = bash_sidecar();
    let t1 = shell(&sc).await;
    let win = TestWindow::attach(&sc, &t1).await;
    // PATH survives the login profile (Debian's /etc/profile resets it) and the token works.
    let out = run_in(&sc, &t1, r#"echo "where=$(command -v ph)"; echo "pane=$PORTHOLE_PANE""#, "^pane=").await;
    let bin_dir = std::path::Path::new(env!("CARGO_BIN_EXE_ph")).parent().unwrap().to_string_lossy().to_string();
    assert!(out.contains(&format!("where={bin_dir}/ph")), "{out}");
    assert!(out.contains(&format!("pane={t1}")), "{out}");

    let script = r#"h=$(ph split -- bash); echo "split=$h rc=$?"; ph send "$h" --text 'echo o""k' --key enter; ph wait "$h" --until 'text=^ok$' --timeout 30; echo "wait rc=$?"; ph read "$h" | grep -c '^ok$' | sed 's/^/count=/'"#;
    let out = run_in(&sc, &t1, script, "^count=").await;
    assert!(out.contains("wait rc=0"), "{out}");
    assert!(out.contains("count=1"), "{out}");
    let split = out.lines().find_map(|l| l.strip_prefix("split=")).unwrap();
    let h = split.split(' ').next().unwrap().to_string();
    assert!(split.ends_with("rc=0"), "{out}");
    assert!(win.handles().contains(&h), "the window got the new pane: {:?}", win.handles());
    // The new pane's screen, read from outside too, shows the command and its output.
    let screen = control(&sc, "read", json!({"target": h})).await.json();
    let lines: Vec<&str> = screen["lines"].as_array().unwrap().iter().map(|l| l.as_str().unwrap()).collect();
    assert!(lines.contains(&"ok"), "{lines:?}");
    assert_eq!(screen["cols"], 60, "half the caller's 120 columns");

    // list shows both panes with their handles and cwd; json for programs.
    let out = run_in(&sc, &t1, "ph list --json | python3 -c 'import json,sys; d=json.load(sys.stdin); print(\"list=\" + \",\".join(p[\"handle\"] for p in d[\"panes\"]), d[\"caller\"])'", r"^list=\S+ \S+$").await;
    assert!(out.contains(&format!("list={t1},{h} {t1}")), "{out}");

    // wait --until exit reports the code, and a failed program is exit 5.
    let out = run_in(
        &sc,
        &t1,
        r#"e=$(ph split -- sh -c 'exit 3'); ph wait "$e" --until exit; echo "exit rc=$?""#,
        "^exit rc=",
    )
    .await;
    assert!(out.contains("exited 3") && out.contains("exit rc=5"), "{out}");

    // send to an exited terminal is refused (2), an unknown pane is a usage error (1).
    let out =
        run_in(&sc, &t1, r#"ph send "$e" --text x; echo "send rc=$?"; ph read t999; echo "read rc=$?""#, "^read rc=")
            .await;
    assert!(out.contains("send rc=2") && out.contains("[exited]"), "{out}");
    assert!(out.contains("read rc=1") && out.contains("[unknown_target]"), "{out}");

    // wait times out with exit 4.
    let out =
        run_in(&sc, &t1, r#"ph wait "$h" --until 'text=never' --timeout 0.5; echo "timeout rc=$?""#, "^timeout rc=")
            .await;
    assert!(out.contains("timeout rc=4") && out.contains("[timed_out]"), "{out}");

    // close removes the pane and hangs its terminal up.
    let out = run_in(&sc, &t1, r#"ph close "$h"; echo "close rc=$?""#, "^close rc=").await;
    assert!(out.contains("close rc=0"), "{out}");
    assert!(!win.handles().contains(&h));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ensure_reuses_the_pane_running_that_command_in_that_directory() {
    let sc = bash_sidecar();
    let t1 = shell(&sc).await;
    let _win = TestWindow::attach(&sc, &t1).await;
    let out = run_in(
        &sc,
        &t1,
        r#"a=$(ph ensure --cwd /tmp -- sleep 1000); b=$(ph ensure --cwd /tmp -- sleep 1000); c=$(ph ensure --cwd / -- sleep 1000); echo "ens=$a|$b|$c""#,
        "^ens=",
    )
    .await;
    let line = out.lines().find_map(|l| l.strip_prefix("ens=")).unwrap();
    let parts: Vec<&str> = line.split('|').collect();
    assert!(parts[0].ends_with("(new)") && parts[1].ends_with("(reused)") && parts[2].ends_with("(new)"), "{out}");
    assert_eq!(parts[0].split(' ').next(), parts[1].split(' ').next(), "same pane");
    assert_ne!(parts[0].split(' ').next(), parts[2].split(' ').next(), "another directory is another pane");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_targets_a_port_and_the_pane_listening_on_it() {
    let sc = bash_sidecar();
    let t1 = shell(&sc).await;
    let win = TestWindow::attach(&sc, &t1).await;
    let out = run_in(
        &sc,
        &t1,
        r#"s=$(ph split -- python3 -m http.server 0 --bind 127.0.0.1); ph wait "$s" --until 'text=Serving HTTP' >/dev/null; ph open "$s"; echo "open1 rc=$?"; ph open "$s"; echo "open2 rc=$?"; ph open self; echo "open3 rc=$?""#,
        "^open3 rc=",
    )
    .await;
    assert!(out.contains("open1 rc=0") && out.contains("(iframe)"), "{out}");
    assert!(out.contains("open2 rc=0") && out.contains("(iframe, reused)"), "{out}");
    assert!(out.contains("open3 rc=2") && out.contains("[no_port]"), "{out}");
    let browsers: Vec<String> = win.handles().into_iter().filter(|h| h.starts_with('b')).collect();
    assert_eq!(browsers.len(), 1, "{:?}", win.handles());
    // :PORT resolves to that browser pane.
    let port =
        out.lines().find_map(|l| l.split("http://localhost:").nth(1)).unwrap().split('/').next().unwrap().to_string();
    let r = control(&sc, "read", json!({"target": format!(":{port}")})).await;
    assert_eq!(r.code(), "not_a_terminal", "{}", String::from_utf8_lossy(&r.body));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pane_tokens_reach_only_the_control_verbs_and_die_with_their_terminal() {
    let sc = bash_sidecar();
    let t1 = shell(&sc).await;
    let tok_file = sc.home.join("tok");
    run_in(&sc, &t1, &format!(r#"printf %s "$PORTHOLE_TOKEN" > {}; echo saved"#, tok_file.display()), "^saved$").await;
    let token = std::fs::read_to_string(&tok_file).unwrap();
    assert_eq!(token.len(), 64);
    assert_ne!(token, sc.token, "never the master token");
    let bearer = format!("Bearer {token}");
    let with = |method: &'static str, path: &'static str| {
        let bearer = bearer.clone();
        let sc = &sc;
        async move { sc.raw(method, path, &[("Authorization", &bearer), ("Content-Type", "application/json")], b"{}").await }
    };
    assert_eq!(with("GET", "/api/control/panes").await.status, 200);
    for (m, p) in [
        ("POST", "/api/shutdown"),
        ("POST", "/api/login-codes"),
        ("GET", "/api/workspace"),
        ("POST", "/api/terminals"),
        ("GET", "/api/terminals"),
        ("POST", "/api/proxy/grants"),
        ("GET", "/api/ui/socket"),
    ] {
        let r = with(m, p).await;
        assert_eq!(r.status, 401, "{m} {p}: {}", String::from_utf8_lossy(&r.body));
    }
    assert_eq!(sc.req("GET", "/api/health", None).await.status, 200, "still running");
    // The token is never shown.
    let listed = sc.req("GET", "/api/control/panes", None).await;
    assert!(!String::from_utf8_lossy(&listed.body).contains(&token));
    // The terminal ends: its token is revoked, and says so (not "wrong").
    assert_eq!(sc.req("DELETE", &format!("/api/terminals/{t1}"), None).await.status, 204);
    let r = with("GET", "/api/control/panes").await;
    assert_eq!(r.status, 401);
    assert!(r.json()["error"]["message"].as_str().unwrap().contains("revoked"), "{}", String::from_utf8_lossy(&r.body));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn layout_verbs_without_a_window_are_refused_with_no_window() {
    let sc = bash_sidecar();
    let t1 = shell(&sc).await;
    let start = Instant::now();
    let out = run_in(
        &sc,
        &t1,
        r#"ph split -- bash; echo "split rc=$?"; ph read self | head -c 0; echo "read rc=$?""#,
        "^read rc=",
    )
    .await;
    assert!(out.contains("split rc=2") && out.contains("[no_window]"), "{out}");
    assert!(out.contains("read rc=0"), "terminal verbs need no window: {out}");
    assert!(start.elapsed() >= Duration::from_secs(3), "the grace for a reload was waited");
    // Nothing was left: only the caller's terminal runs.
    let terms = sc.req("GET", "/api/terminals", None).await.json();
    assert_eq!(terms["terminals"].as_array().unwrap().len(), 1, "{terms}");
}

#[test]
fn outside_porthole_ph_says_so_and_exits_1() {
    let out = Command::new(env!("CARGO_BIN_EXE_ph"))
        .args(["list"])
        .env_remove("PORTHOLE_URL")
        .env_remove("PORTHOLE_TOKEN")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not inside a Porthole pane"));
    // A wrong token is not "not found": it is refused as unauthorized.
    let sc = Sidecar::start(&[]);
    let out = Command::new(env!("CARGO_BIN_EXE_ph"))
        .args(["read", "t1"])
        .env("PORTHOLE_URL", format!("http://127.0.0.1:{}/", sc.port))
        .env("PORTHOLE_TOKEN", "0".repeat(64))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("[unauthorized]"), "{out:?}");
    let _ = HANG;
}

/// `ph wait --until exit` exits 5 when the program failed, so `ph wait … && deploy` stops
/// there; 0 when it succeeded (docs/cli.md "Exit codes").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_until_exit_fails_when_the_program_failed() {
    let sc = Sidecar::start(&[]);
    let failed = sc.spawn(&["sh", "-c", "exit 7"]).await;
    let fine = sc.spawn(&["sh", "-c", "exit 0"]).await;
    let (code, out, err) = ph(&sc, &["wait", &failed, "--until", "exit", "--timeout", "60"]);
    assert_eq!((code, out.as_str()), (5, "exited 7\n"), "{err}");
    let (code, out, err) = ph(&sc, &["--json", "wait", &failed, "--until", "exit", "--timeout", "60"]);
    assert_eq!(code, 5, "{out}{err}");
    assert!(out.contains("\"exit_code\":7"), "{out}");
    let (code, out, err) = ph(&sc, &["wait", &fine, "--until", "exit", "--timeout", "60"]);
    assert_eq!((code, out.as_str()), (0, "exited 0\n"), "{err}");
}

/// Every verb ends quietly on a stdout whose reader has gone (`ph read … | head -1`): no
/// panic, nothing on stderr, the verb's own exit code.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_stdout_ends_every_verb_quietly() {
    let sc = Sidecar::start(&[]);
    let t = sc.spawn(&["sh", "-c", "seq 1 3000; exec sleep 600"]).await;
    let r = control(&sc, "wait", json!({"target": t, "until": "text", "regex": "^3000$", "timeout_ms": 90000})).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    let verbs: [&[&str]; 8] = [
        &["skill"],
        &["completions", "bash"],
        &["config", "default"],
        &["list"],
        &["--json", "list"],
        &["read", &t, "--scrollback", "2000"],
        &["wait", &t, "--until", "text=^3000$"],
        &["ports", &t],
    ];
    for args in verbs {
        // The reader is closed before `ph` writes anything: its first write meets EPIPE.
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = Command::new(env!("CARGO_BIN_EXE_ph"))
            .args(args)
            .env("PORTHOLE_URL", format!("http://127.0.0.1:{}/", sc.port))
            .env("PORTHOLE_TOKEN", &sc.token)
            .stdout(writer)
            .stderr(std::process::Stdio::piped())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "ph {args:?}: {err}");
        assert!(err.is_empty(), "ph {args:?} said: {err}");
    }
}

/// Outside a pane (or under an MCP client that passes a bare environment), `ph` names the
/// variable that is missing.
#[test]
fn a_missing_variable_is_named() {
    let run = |url: Option<&str>, token: Option<&str>| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_ph"));
        c.arg("list").env_remove("PORTHOLE_URL").env_remove("PORTHOLE_TOKEN");
        if let Some(u) = url {
            c.env("PORTHOLE_URL", u);
        }
        if let Some(t) = token {
            c.env("PORTHOLE_TOKEN", t);
        }
        let out = c.output().unwrap();
        assert_eq!(out.status.code(), Some(1));
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let err = run(Some("http://127.0.0.1:9/"), None);
    assert!(err.contains("PORTHOLE_TOKEN is not set") && !err.contains("PORTHOLE_URL is"), "{err}");
    let err = run(None, Some("x"));
    assert!(err.contains("PORTHOLE_URL is not set"), "{err}");
    let err = run(None, None);
    assert!(err.contains("PORTHOLE_URL and PORTHOLE_TOKEN are not set"), "{err}");
    assert!(err.contains("not inside a Porthole pane"), "{err}");
}

/// `ph list` names a terminal pane as its header does: while the shell integration reports
/// a command running, its command line (`sleep 300`), not the shell nor the program's name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_shows_the_running_command_as_the_header_does() {
    let sc = bash_sidecar();
    let t1 = shell(&sc).await;
    let _win = TestWindow::attach(&sc, &t1).await;
    let r = control(&sc, "send", json!({"target": t1, "text": "sleep 300", "keys": ["enter"]})).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    // The integration's report is the event waited on (bounded only as a hang guard).
    let deadline = Instant::now() + HANG;
    loop {
        let t = sc.terminal(&t1).await;
        if t["shell"]["running"]["command"] == "sleep 300" {
            break;
        }
        assert!(Instant::now() < deadline, "the shell never reported sleep running: {t}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (code, out, err) = ph(&sc, &["list"]);
    assert_eq!(code, 0, "{err}");
    let row = out.lines().find(|l| l.starts_with(&t1)).unwrap_or_else(|| panic!("{out}"));
    assert!(row.contains("sleep 300"), "{out}");
    let panes = sc.req("GET", "/api/control/panes", None).await.json();
    assert_eq!(panes["panes"][0]["title"], "sleep 300", "{panes}");
}

/// The tmux server of a test, ended on drop.
struct TmuxServer(std::path::PathBuf);

impl TmuxServer {
    fn clients(&self) -> usize {
        let out = Command::new("/usr/bin/tmux").env("TMUX_TMPDIR", &self.0).args(["list-clients"]).output();
        out.map(|o| String::from_utf8_lossy(&o.stdout).lines().count()).unwrap_or(0)
    }
}

impl Drop for TmuxServer {
    fn drop(&mut self) {
        let _ = Command::new("/usr/bin/tmux").env("TMUX_TMPDIR", &self.0).arg("kill-server").output();
    }
}

/// Waits (bounded generously) for `file` to exist, then reads `data`.
async fn file_after(file: &std::path::Path, data: &std::path::Path) -> String {
    let start = Instant::now();
    while !file.exists() {
        assert!(start.elapsed() < HANG, "{} never appeared", file.display());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    std::fs::read_to_string(data).unwrap()
}

/// `ph` inside tmux inside a pane (issue 22 item 12). A tmux server started in pane A gives a
/// session created later from pane B A's environment (its `PORTHOLE_PANE` and token); `ph` in
/// that session still answers as B, the pane whose PTY the tmux client runs on, and keeps
/// working once A's terminal (and so the token it holds) has ended; attached from two panes,
/// it is refused as ambiguous. The login shell tmux starts finds `ph` through the one
/// `~/.profile` line docs/cli.md gives.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ph_inside_tmux_answers_as_the_pane_the_tmux_client_runs_in() {
    assert!(std::path::Path::new("/usr/bin/tmux").exists(), "tmux is missing: `cargo xtask test` installs it");
    let sockets = common::temp_dir("tmux");
    let server = TmuxServer(sockets.clone());
    let sc = Sidecar::start_with_env(&[], &[("SHELL", "/bin/bash"), ("TMUX_TMPDIR", sockets.to_str().unwrap())]);
    std::fs::write(sc.home.join(".profile"), "[ -n \"$PORTHOLE_BIN_DIR\" ] && PATH=\"$PORTHOLE_BIN_DIR:$PATH\"\n")
        .unwrap();
    let a = shell(&sc).await;
    let b = shell(&sc).await;
    let out = run_in(&sc, &a, "tmux -f /dev/null new-session -d -s from_a; echo \"started=$?\"", "^started=").await;
    assert!(out.contains("started=0"), "{out}");
    let r = control(
        &sc,
        "send",
        json!({"target": b, "text": "tmux -f /dev/null new-session -s from_b", "keys": ["enter"]}),
    )
    .await;
    assert_eq!(r.status, 200);
    let start = Instant::now();
    while server.clients() == 0 {
        assert!(start.elapsed() < HANG, "the tmux client never attached");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let home = sc.home.to_string_lossy().to_string();
    for (round, note) in [(1, "with A alive"), (2, "after A ended")] {
        let line = format!(
            "echo \"pane=$PORTHOLE_PANE\" > {home}/env{round}; ph list --json > {home}/list{round}; echo $? > {home}/rc{round}"
        );
        let r = control(&sc, "send", json!({"target": b, "text": line, "keys": ["enter"]})).await;
        assert_eq!(r.status, 200);
        let rc = file_after(&sc.home.join(format!("rc{round}")), &sc.home.join(format!("rc{round}"))).await;
        let env = std::fs::read_to_string(sc.home.join(format!("env{round}"))).unwrap();
        assert_eq!(env.trim(), format!("pane={a}"), "the session has A's environment, as tmux gives it");
        let list = std::fs::read_to_string(sc.home.join(format!("list{round}"))).unwrap();
        assert_eq!(rc.trim(), "0", "{note}: {list}");
        let v: serde_json::Value = serde_json::from_str(&list).unwrap();
        assert_eq!(v["caller"], b.as_str(), "{note}: ph answers as B, not as A: {v}");
        if round == 1 {
            assert_eq!(sc.req("DELETE", &format!("/api/terminals/{a}"), None).await.status, 204);
        }
    }
    // The session attached from a second pane too: which pane asks is ambiguous, so refused.
    let c = shell(&sc).await;
    let r = control(&sc, "send", json!({"target": c, "text": "tmux attach -t from_b", "keys": ["enter"]})).await;
    assert_eq!(r.status, 200);
    let start = Instant::now();
    while server.clients() < 2 {
        assert!(start.elapsed() < HANG, "the second tmux client never attached");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let line = format!("ph list > {home}/list3 2> {home}/err3; echo $? > {home}/rc3");
    let r = control(&sc, "send", json!({"target": b, "text": line, "keys": ["enter"]})).await;
    assert_eq!(r.status, 200);
    let rc = file_after(&sc.home.join("rc3"), &sc.home.join("rc3")).await;
    let err = std::fs::read_to_string(sc.home.join("err3")).unwrap();
    assert_eq!(rc.trim(), "2", "{err}");
    assert!(err.contains("[wrong_pane]") && err.contains(&b) && err.contains(&c), "{err}");
    drop(server);
}

/// A pane token does not let a process speak for another process's pane: the process `ph`
/// names (`X-Porthole-Pid`) must hold the connection (issue 22 item 12's security rule); a
/// process in no pane (this test) speaks for its token's pane, as before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_process_cannot_claim_the_pane_of_another_process() {
    let sc = bash_sidecar();
    let a = shell(&sc).await;
    let b = shell(&sc).await;
    let out = run_in(&sc, &a, r#"echo "tok=$PORTHOLE_TOKEN""#, "^tok=").await;
    let token = out.lines().find_map(|l| l.strip_prefix("tok=")).unwrap().trim().to_string();
    let out = run_in(&sc, &b, r#"echo "pid=$$""#, "^pid=").await;
    let pid_b = out.lines().find_map(|l| l.strip_prefix("pid=")).unwrap().trim().to_string();
    let auth = format!("Bearer {token}");
    let r = sc.raw("GET", "/api/control/panes", &[("Authorization", &auth), ("X-Porthole-Pid", &pid_b)], b"").await;
    assert_eq!((r.status, r.code().as_str()), (403, "wrong_pane"), "{}", String::from_utf8_lossy(&r.body));
    let me = std::process::id().to_string();
    let r = sc.raw("GET", "/api/control/panes", &[("Authorization", &auth), ("X-Porthole-Pid", &me)], b"").await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["caller"], a.as_str());
}
