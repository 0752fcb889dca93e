//! Session restore (DESIGN §14, protocol §4 `GET /api/workspace`) with the real sidecar, real
//! bash on real PTYs: a document put, the sidecar stopped with SIGTERM, a new sidecar on the
//! same state directory gives back the document and each terminal's cwd, command and output
//! tail; the file is written through a temp file; a truncated file is moved aside and
//! reported; `[session] restore = false` restores nothing and still saves.

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::{read_until, send_input, temp_dir, Seen, Sidecar, Ws, HANG};
use serde_json::{json, Value};

const BASH: &str = "/bin/bash";

fn start(state: &Path, extra: &[(&str, &str)]) -> Sidecar {
    let mut env = vec![("SHELL", BASH), ("XDG_STATE_HOME", state.to_str().unwrap())];
    env.extend_from_slice(extra);
    Sidecar::start_with_env(&[], &env)
}

fn session_file(state: &Path) -> PathBuf {
    state.join("porthole/session.json")
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|d| d.map(|e| e.unwrap().file_name().into_string().unwrap()).collect())
        .unwrap_or_default();
    v.sort();
    v
}

fn shell_reports(seen: &Seen) -> impl Iterator<Item = &Value> {
    seen.controls.iter().map(|(_, v)| v).filter(|v| v["type"] == "shell")
}

/// A bash login shell in `cwd`, once its first prompt reported a cwd.
async fn bash(sc: &Sidecar, cwd: &Path) -> (String, Ws, Seen) {
    let r = sc.req("POST", "/api/terminals", Some(&json!({"cols": 100, "rows": 30, "cwd": cwd}))).await;
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    let id = r.json()["id"].as_str().unwrap().to_string();
    let mut ws = sc.ws(&id).await;
    let mut seen = Seen::default();
    read_until(&mut ws, &mut seen, true, |s| shell_reports(s).any(|v| v["cwd"].is_string())).await;
    (id, ws, seen)
}

/// Types `line` + Enter and reads until `done`.
async fn run(ws: &mut Ws, seen: &mut Seen, line: &str, done: impl Fn(&Seen) -> bool) {
    send_input(ws, format!("{line}\r").as_bytes()).await;
    read_until(ws, seen, true, done).await;
}

fn stop_with_sigterm(sc: &mut Sidecar) {
    common::send_signal(sc.pid, 15);
    let status = sc.wait_exit();
    assert!(status.success(), "SIGTERM is a graceful exit: {status}");
}

/// Polls `done` every 50 ms, up to the hang bound.
async fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < HANG, "{what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn saved(state: &Path) -> Option<Value> {
    serde_json::from_slice(&std::fs::read(session_file(state)).ok()?).ok()
}

#[tokio::test]
async fn a_restarted_sidecar_gives_back_the_document_and_each_terminals_cwd_command_and_output() {
    let state = temp_dir("state");
    let mut sc = start(&state, &[]);
    let r = sc.req("GET", "/api/workspace", None).await.json();
    assert_eq!(r, json!({"workspace": null, "revision": 0, "restore": null, "problem": null}));

    let (t1, mut ws1, mut seen1) = bash(&sc, &sc.home).await;
    run(&mut ws1, &mut seen1, "cd /tmp", |s| shell_reports(s).any(|v| v["cwd"] == "/tmp")).await;
    run(&mut ws1, &mut seen1, "echo MARK-$((6*7))-é", |s| String::from_utf8_lossy(&s.bytes).contains("MARK-42-é"))
        .await;
    let (t2, mut ws2, mut seen2) = bash(&sc, &sc.home).await;
    run(&mut ws2, &mut seen2, "sleep 300", |s| shell_reports(s).any(|v| v["running"]["command"] == "sleep 300")).await;

    // A document of a later version, terminals nested deeper: only `terminalId` members count.
    let doc = json!({
        "version": 9,
        "walls": [{"panes": {"p1": {"terminalId": t1, "title": "a"}}},
                  {"panes": {"p2": {"terminalId": t2}, "p3": {"kind": "browser", "url": "http://127.0.0.1:9/"}}}],
        "note": "terminalId t77 in a string is not a reference",
    });
    let r = sc.req("PUT", "/api/workspace", Some(&json!({"workspace": doc}))).await;
    assert_eq!(r.status, 200);
    stop_with_sigterm(&mut sc);

    // Written through a temp file renamed over it: nothing else is left in the directory.
    assert_eq!(names(&state.join("porthole")), ["session.json"]);
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(session_file(&state)).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "scrollback can hold secrets");

    let sc2 = start(&state, &[]);
    let r = sc2.req("GET", "/api/workspace", None).await.json();
    assert_eq!(r["workspace"], doc);
    assert_eq!(r["revision"], 0);
    assert!(r["problem"].is_null(), "{r}");
    let restore = &r["restore"];
    let saved_at = restore["saved_at"].as_u64().unwrap();
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as u64;
    assert!(saved_at <= now && now - saved_at < 600_000, "{saved_at} vs {now}");
    let terms = restore["terminals"].as_object().unwrap();
    assert_eq!(terms.len(), 2, "exactly the referenced terminals: {restore}");
    let a = &terms[&t1];
    assert_eq!(a["cwd"], "/tmp", "{a}");
    assert_eq!(a["command"], json!(["-bash"]), "{a}");
    assert!(a["running"].is_null(), "{a}");
    let text = a["scrollback"].as_str().unwrap();
    assert!(text.contains("\nMARK-42-é"), "the output, as text: {text:?}");
    assert!(!text.contains('\x1b'), "no escape sequences: {text:?}");
    let b = &terms[&t2];
    assert_eq!(b["cwd"], sc.home.canonicalize().unwrap().to_str().unwrap(), "{b}");
    assert_eq!(b["running"], "sleep 300", "{b}");
    assert!(b["scrollback"].as_str().unwrap().contains("sleep 300"), "{b}");

    // A new terminal is never taken for an old one: its id is past every restored one.
    let (t3, _ws3, _) = bash(&sc2, &sc2.home).await;
    let n = |t: &str| t[1..].parse::<u64>().unwrap();
    assert!(n(&t3) > n(&t1).max(n(&t2)), "{t3} after {t1}, {t2}");

    // Saved after a PUT too (debounced), not only at shutdown: a SIGKILL then loses nothing.
    let doc2 = json!({"version": 9, "walls": [{"panes": {"p4": {"terminalId": t3}}}]});
    let r = sc2.req("PUT", "/api/workspace", Some(&json!({"workspace": doc2}))).await;
    assert_eq!(r.json()["revision"], 1);
    eventually("the PUT is saved", || saved(&state).is_some_and(|v| v["workspace"] == doc2)).await;
    let v = saved(&state).unwrap();
    assert_eq!(v["terminals"].as_object().unwrap().keys().collect::<Vec<_>>(), [&t3], "{v}");
    assert_eq!(names(&state.join("porthole")), ["session.json"]);

    // A document put as null is saved as null, and the next start restores nothing.
    let mut sc2 = sc2;
    sc2.req("PUT", "/api/workspace", Some(&json!({"workspace": null}))).await;
    stop_with_sigterm(&mut sc2);
    assert!(saved(&state).unwrap()["workspace"].is_null());
    let sc3 = start(&state, &[]);
    let r = sc3.req("GET", "/api/workspace", None).await.json();
    assert_eq!(r, json!({"workspace": null, "revision": 0, "restore": null, "problem": null}));
    let _ = std::fs::remove_dir_all(&state);
}

#[tokio::test]
async fn a_truncated_session_file_is_moved_aside_and_reported() {
    let state = temp_dir("state");
    let dir = state.join("porthole");
    std::fs::create_dir_all(&dir).unwrap();
    let whole =
        json!({"format": 1, "saved_at": 1, "workspace": {"version": 1, "panes": {}}, "terminals": {}}).to_string();
    std::fs::write(session_file(&state), &whole.as_bytes()[..whole.len() / 2]).unwrap();

    let sc = start(&state, &[]);
    let r = sc.req("GET", "/api/workspace", None).await.json();
    assert!(r["workspace"].is_null() && r["restore"].is_null(), "a fresh wall: {r}");
    let p = &r["problem"];
    assert_eq!(p["file"], session_file(&state).to_str().unwrap(), "{p}");
    assert!(p["message"].as_str().unwrap().contains("EOF"), "the parser's message: {p}");
    let moved = PathBuf::from(p["moved_to"].as_str().unwrap());
    assert_eq!(moved.parent().unwrap(), dir);
    assert!(moved.file_name().unwrap().to_str().unwrap().starts_with("session.json.corrupt-"), "{p}");
    assert_eq!(std::fs::read(&moved).unwrap(), &whole.as_bytes()[..whole.len() / 2], "kept as it was");
    assert!(!session_file(&state).exists());
    // The sidecar serves on: a terminal starts.
    let id = sc.spawn(&["/bin/sh", "-c", "exit 0"]).await;
    assert_eq!(id, "t1");
    let _ = std::fs::remove_dir_all(&state);
}

#[tokio::test]
async fn with_restore_off_nothing_is_read_and_the_session_is_still_saved() {
    let state = temp_dir("state");
    let config = temp_dir("config");
    std::fs::create_dir_all(config.join("porthole")).unwrap();
    std::fs::write(config.join("porthole/config.toml"), "[session]\nrestore = false\n").unwrap();
    std::fs::create_dir_all(state.join("porthole")).unwrap();
    std::fs::write(session_file(&state), b"{not json").unwrap();

    let env = [("XDG_CONFIG_HOME", config.to_str().unwrap())];
    let mut sc = start(&state, &env);
    let r = sc.req("GET", "/api/workspace", None).await.json();
    assert_eq!(r, json!({"workspace": null, "revision": 0, "restore": null, "problem": null}));
    assert_eq!(names(&state.join("porthole")), ["session.json"], "the file is not even read");
    let cfg = sc.req("GET", "/api/config", None).await.json();
    assert_eq!(cfg["config"]["session"]["restore"], false, "{cfg}");

    let doc = json!({"version": 1, "panes": {}});
    sc.req("PUT", "/api/workspace", Some(&json!({"workspace": doc}))).await;
    stop_with_sigterm(&mut sc);
    assert_eq!(saved(&state).unwrap()["workspace"], doc, "saving goes on");
    let _ = std::fs::remove_dir_all(&state);
    let _ = std::fs::remove_dir_all(&config);
}

/// The refresh (every `SAVE_REFRESH_MS`; shortened here by the test-only override): a `cd`
/// changes no document, yet it reaches the file and survives a crash (SIGKILL: no save at
/// shutdown); refreshes while no record changed write nothing.
#[tokio::test]
async fn a_cd_reaches_the_file_by_the_refresh_and_survives_a_crash() {
    use std::os::unix::fs::MetadataExt;
    let state = temp_dir("state");
    let mut sc = start(&state, &[("PORTHOLE_SESSION_REFRESH_MS", "200")]);
    let (t1, mut ws1, mut seen1) = bash(&sc, &sc.home).await;
    let doc = json!({"version": 1, "panes": {"p1": {"terminalId": t1}}});
    sc.req("PUT", "/api/workspace", Some(&json!({"workspace": doc}))).await;
    eventually("the PUT is saved", || saved(&state).is_some_and(|v| v["workspace"] == doc)).await;
    let home = sc.home.canonicalize().unwrap();
    assert_eq!(saved(&state).unwrap()["terminals"][&t1]["cwd"], home.to_str().unwrap());

    // Quiet: several refresh intervals pass and the file is not written again (each write
    // renames a new file over it, a new inode).
    let written = || std::fs::metadata(session_file(&state)).map(|m| (m.ino(), m.mtime_nsec(), m.mtime())).unwrap();
    let before = written();
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    assert_eq!(written(), before, "a refresh with no record changed wrote the file");

    run(&mut ws1, &mut seen1, "cd /tmp", |s| shell_reports(s).any(|v| v["cwd"] == "/tmp")).await;
    eventually("the refresh saves the new cwd", || saved(&state).is_some_and(|v| v["terminals"][&t1]["cwd"] == "/tmp"))
        .await;
    assert_eq!(saved(&state).unwrap()["workspace"], doc, "the document is kept as it was");

    common::send_signal(sc.pid, 9);
    let _ = sc.wait_exit();
    let sc2 = start(&state, &[]);
    let r = sc2.req("GET", "/api/workspace", None).await.json();
    assert_eq!(r["workspace"], doc);
    assert_eq!(r["restore"]["terminals"][&t1]["cwd"], "/tmp", "{r}");
    let _ = std::fs::remove_dir_all(&state);
}

/// A dev server with a login: `/login` sets an HttpOnly session cookie (no expiry: a session
/// cookie, as Express and PHP set by default) and a persistent one; `/me` answers `200 hello
/// <sid>` with the session, `401` without.
async fn login_server() -> u16 {
    use tokio::io::AsyncWriteExt;
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = l.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = l.accept().await {
            tokio::spawn(async move {
                let Some(buf) = common::request_head(&mut s).await else { return };
                let head = String::from_utf8_lossy(&buf).to_string();
                let path = head.split(' ').nth(1).unwrap_or("/").to_string();
                let cookie = head
                    .lines()
                    .find_map(|l| {
                        l.split_once(':')
                            .filter(|(k, _)| k.eq_ignore_ascii_case("cookie"))
                            .map(|(_, v)| v.trim().to_string())
                    })
                    .unwrap_or_default();
                let sid = cookie.split("; ").find_map(|kv| kv.strip_prefix("sid=")).map(str::to_string);
                let resp = match (path.as_str(), sid) {
                    ("/login", _) => "HTTP/1.1 204 No Content\r\nSet-Cookie: sid=s3cret; Path=/; HttpOnly\r\nSet-Cookie: remember=1; Path=/; Max-Age=86400\r\nConnection: close\r\n\r\n".to_string(),
                    (_, Some(sid)) => format!("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\nhello {sid}", sid.len() + 6),
                    _ => "HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_string(),
                };
                let _ = s.write_all(resp.as_bytes()).await;
                let _ = s.shutdown().await;
            });
        }
    });
    port
}

/// A proxy grant for `url`; the port of its listener.
async fn proxy_port(sc: &Sidecar, url: &str) -> u16 {
    let r =
        sc.req("POST", "/api/proxy/grants", Some(&json!({"url": url, "embedders": ["http://127.0.0.1:4000"]}))).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    r.json()["origin"].as_str().unwrap().trim_start_matches("http://127.0.0.1:").parse().unwrap()
}

/// `GET path` on a proxy port: (status, body).
async fn proxied(port: u16, path: &str) -> (u16, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut s = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let req = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
    s.write_all(req.as_bytes()).await.unwrap();
    let mut buf = Vec::new();
    tokio::time::timeout(HANG, s.read_to_end(&mut buf)).await.expect("proxy response").unwrap();
    let r = common::parse_response(&buf);
    (r.status, String::from_utf8_lossy(&r.body).to_string())
}

/// Issue 22 item 5: a grant's cookie jar outlives the sidecar (written soon after it changes,
/// atomically and 0600, so even a crash keeps it), and the next sidecar's grant for the same
/// upstream origin gets it back, session cookies included; another origin's grant does not.
/// With `[session] restore = false` no jar is read (nor written).
#[tokio::test]
async fn a_grants_cookie_jar_survives_a_restart() {
    use std::os::unix::fs::PermissionsExt;
    let state = temp_dir("state");
    let up = login_server().await;
    let url = format!("http://localhost:{up}/");
    let jars = state.join("porthole/cookies");

    let mut sc = start(&state, &[]);
    let port = proxy_port(&sc, &url).await;
    assert_eq!(proxied(port, "/me").await.0, 401);
    assert_eq!(proxied(port, "/login").await.0, 204);
    assert_eq!(proxied(port, "/me").await, (200, "hello s3cret".to_string()));
    eventually("the jar is written", || names(&jars).len() == 1).await;
    let file = jars.join(&names(&jars)[0]);
    assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o600);
    // A crash: nothing is saved at shutdown, the jar written after the change is what is kept.
    common::send_signal(sc.pid, 9);
    sc.wait_exit();

    let mut sc = start(&state, &[]);
    let port = proxy_port(&sc, &url).await;
    assert_eq!(proxied(port, "/me").await, (200, "hello s3cret".to_string()), "still logged in");
    let other = proxy_port(&sc, &format!("http://127.0.0.1:{up}/")).await;
    assert_eq!(proxied(other, "/me").await.0, 401, "another origin, another jar");
    stop_with_sigterm(&mut sc);

    let config = temp_dir("config");
    std::fs::create_dir_all(config.join("porthole")).unwrap();
    std::fs::write(config.join("porthole/config.toml"), "[session]\nrestore = false\n").unwrap();
    let mut sc = start(&state, &[("XDG_CONFIG_HOME", config.to_str().unwrap())]);
    let port = proxy_port(&sc, &url).await;
    assert_eq!(proxied(port, "/me").await.0, 401, "restore off: a fresh jar");
    stop_with_sigterm(&mut sc);
    let _ = std::fs::remove_dir_all(&state);
    let _ = std::fs::remove_dir_all(&config);
}
