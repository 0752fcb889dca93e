//! Remote workspaces (protocol §11) against a real remote: OpenSSH's `sshd` in a private
//! network namespace (`common::sshd`), the system `ssh`, the real relay and daemon (this
//! build's `porthole-sidecar`, as `PORTHOLE_REMOTE_BIN`), real PTYs. No mocks.

mod common;

use std::time::{Duration, Instant};

use common::remote::{wait_remote, ws_at};
use common::sshd::{TestSshd, HOST_ALIAS, PORT, REMOTE_HOSTNAME};
use common::*;
use serde_json::{json, Value};
use sidecar::remote::{Link, LinkOptions, SshHost, Target};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const BIN: &str = env!("CARGO_BIN_EXE_porthole-sidecar");

/// A local sidecar whose links use `config` and run this build's binary on the remote.
fn local_sidecar(config: &std::path::Path, remote_bin: &str) -> Sidecar {
    Sidecar::start_with_env(
        &[],
        &[("PORTHOLE_SSH_CONFIG", config.to_str().unwrap()), ("PORTHOLE_REMOTE_BIN", remote_bin)],
    )
}

/// Connects `r1` to the test remote (201).
async fn connect(sc: &Sidecar) -> Value {
    let r = sc.req("POST", "/api/remotes", Some(&json!({"host": HOST_ALIAS}))).await;
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    let v = r.json();
    assert_eq!(v["id"], "r1");
    assert_eq!(v["state"], "connected");
    v
}

/// Creates a terminal running `sh` on the remote through the forward; its id.
async fn remote_sh(sc: &Sidecar) -> String {
    let body = json!({"cols": 80, "rows": 24, "command": ["sh"]});
    let r = sc.req("POST", "/api/remotes/r1/api/terminals", Some(&body)).await;
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    r.json()["id"].as_str().unwrap().to_string()
}

/// Attaches to remote terminal `id` through the forward, runs `hostname` there and checks it
/// is the namespace's; the socket, still attached.
async fn says_the_remote_hostname(sc: &Sidecar, id: &str) -> Ws {
    let mut ws = ws_at(sc, &format!("/api/remotes/r1/api/terminals/{id}/socket")).await;
    let mut seen = Seen::default();
    send_input(&mut ws, b"hostname; echo HOST-$((40+2))\r").await;
    read_until(&mut ws, &mut seen, true, |s| contains(&s.bytes, b"HOST-42\r\n")).await;
    assert!(
        contains(&seen.bytes, format!("{REMOTE_HOSTNAME}\r\n").as_bytes()),
        "{:?}",
        String::from_utf8_lossy(&seen.bytes)
    );
    ws
}

/// The ids of the processes whose parent is `ppid` and whose name is `comm`.
fn children_named(ppid: u32, comm: &str) -> Vec<i32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else { continue };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { continue };
        let Some((head, rest)) = stat.rsplit_once(')') else { continue };
        let name = head.split_once('(').map(|(_, n)| n).unwrap_or("");
        let parent: u32 = rest.split_whitespace().nth(1).and_then(|p| p.parse().ok()).unwrap_or(0);
        if parent == ppid && name == comm {
            out.push(pid);
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_host_is_refused_and_nothing_is_spawned() {
    let sc = Sidecar::start_with_env(&[], &[("PORTHOLE_REMOTE_BIN", BIN)]);
    for host in ["-oProxyCommand=x", "a b", "h;rm", "", "h:0"] {
        let r = sc.req("POST", "/api/remotes", Some(&json!({ "host": host }))).await;
        assert_eq!((r.status, r.code().as_str()), (400, "bad_host"), "{host:?}: {}", String::from_utf8_lossy(&r.body));
    }
    assert!(children_named(sc.pid, "ssh").is_empty(), "an ssh was spawned");
    let r = sc.req("GET", "/api/remotes", None).await;
    assert_eq!(r.json()["remotes"], json!([]));
    assert_eq!(sc.req("GET", "/api/remotes/r1/api/health", None).await.status, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_host_key_is_refused_and_nothing_connects() {
    let remote = TestSshd::start(&[]);
    let sc = local_sidecar(&remote.ssh_config_unknown_key, BIN);
    let r = sc.req("POST", "/api/remotes", Some(&json!({"host": HOST_ALIAS}))).await;
    assert_eq!((r.status, r.code().as_str()), (409, "host_key"), "{}", String::from_utf8_lossy(&r.body));
    let stderr = r.json()["error"]["stderr"].as_str().unwrap_or("").to_string();
    assert!(stderr.contains("Host key verification failed"), "{stderr}");
    assert_eq!(sc.req("GET", "/api/remotes", None).await.json()["remotes"], json!([]));
    assert!(!remote.run_dir().join("daemon.pid").exists(), "a daemon was started");
    assert!(children_named(sc.pid, "ssh").is_empty(), "ssh left running");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_remote_binary_is_named() {
    let remote = TestSshd::start(&[]);
    let sc = local_sidecar(&remote.ssh_config, "/nonexistent/porthole-sidecar");
    let r = sc.req("POST", "/api/remotes", Some(&json!({"host": HOST_ALIAS}))).await;
    assert_eq!((r.status, r.code().as_str()), (502, "remote_binary_missing"), "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(sc.req("GET", "/api/remotes", None).await.json()["remotes"], json!([]));
}

/// A local sidecar whose links use `config` and install this build's binary where the
/// remote lacks it (no `$PORTHOLE_REMOTE_BIN`).
fn installing_sidecar(config: &std::path::Path) -> Sidecar {
    Sidecar::start_with_env(&[], &[("PORTHOLE_SSH_CONFIG", config.to_str().unwrap())])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_without_the_binary_gets_this_one_installed_and_checked() {
    let remote = TestSshd::start(&[]);
    let sc = installing_sidecar(&remote.ssh_config);
    let installed =
        remote.dir.join(format!("home/.local/share/porthole/bin/{}/porthole-sidecar", env!("CARGO_PKG_VERSION")));
    assert!(!installed.exists());
    connect(&sc).await;
    // The same bytes, executable, and no temporary file left beside it.
    let (ours, theirs) = (std::fs::read(BIN).unwrap(), std::fs::read(&installed).expect("installed"));
    assert!(ours == theirs, "the installed binary differs ({} vs {} bytes)", ours.len(), theirs.len());
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::metadata(&installed).unwrap().permissions().mode() & 0o777, 0o755);
    let left: Vec<_> =
        std::fs::read_dir(installed.parent().unwrap()).unwrap().flatten().map(|e| e.file_name()).collect();
    assert_eq!(left, [std::ffi::OsString::from("porthole-sidecar")], "{left:?}");
    // It is what runs there: a terminal answers from the namespace.
    let id = remote_sh(&sc).await;
    says_the_remote_hostname(&sc, &id).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_of_another_platform_is_refused_by_name_and_nothing_is_copied() {
    let fake = temp_dir("fake-uname");
    std::fs::write(fake.join("uname"), "#!/bin/sh\necho Darwin arm64\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(fake.join("uname"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("PATH={}:/usr/local/bin:/usr/bin:/bin", fake.display());
    let (k, v) = path.split_once('=').unwrap();
    let remote = TestSshd::start(&[(k, v)]);
    let sc = installing_sidecar(&remote.ssh_config);
    let r = sc.req("POST", "/api/remotes", Some(&json!({"host": HOST_ALIAS}))).await;
    assert_eq!(
        (r.status, r.code().as_str()),
        (409, "remote_platform_unsupported"),
        "{}",
        String::from_utf8_lossy(&r.body)
    );
    let msg = r.json()["error"]["message"].as_str().unwrap().to_string();
    assert!(msg.contains("Darwin arm64"), "names the platform: {msg}");
    assert!(!remote.dir.join("home/.local/share/porthole").exists(), "something was copied");
    assert_eq!(sc.req("GET", "/api/remotes", None).await.json()["remotes"], json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_terminal_runs_in_the_namespace_and_its_ports_only_through_the_tunnel() {
    let remote = TestSshd::start(&[]);
    let sc = local_sidecar(&remote.ssh_config, BIN);
    let v = connect(&sc).await;
    assert_eq!(v["remote"]["os"], "linux");
    assert_eq!(v["remote"]["arch"], std::env::consts::ARCH);
    assert_eq!(v["remote"]["protocol"], 1);
    assert!(v["remote"].get("token").is_none(), "the remote token is never shown: {v}");
    assert_eq!(v["remote"]["daemon_pid"].as_i64(), remote.daemon_pid().map(i64::from));
    // The remote has no TCP listener of ours: the namespace listens on sshd's port only.
    let ns_tcp = |sshd: &TestSshd| {
        let holder = sshd.holder_pid();
        std::fs::read_to_string(format!("/proc/{holder}/net/tcp")).unwrap()
    };
    let listening: Vec<String> = ns_tcp(&remote)
        .lines()
        .skip(1)
        .filter(|l| l.split_whitespace().nth(3) == Some("0A"))
        .map(|l| l.split_whitespace().nth(1).unwrap().to_string())
        .collect();
    assert_eq!(listening, [format!("0100007F:{PORT:04X}")]);

    let id = remote_sh(&sc).await;
    // The local Origin (allowed here) is not passed on: the daemon would refuse any Origin.
    let origin = format!("http://127.0.0.1:{}", sc.port);
    let auth = sc.bearer();
    let headers = [("Authorization", auth.as_str()), ("Content-Type", "application/json"), ("Origin", origin.as_str())];
    let body = json!({"cols": 80, "rows": 24, "command": ["true"]}).to_string();
    let r = sc.raw("POST", "/api/remotes/r1/api/terminals", &headers, body.as_bytes()).await;
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    let r = sc.req("GET", &format!("/api/remotes/r1/api/terminals/{id}?unused=1"), None).await;
    assert_eq!((r.status, r.json()["id"].as_str()), (200, Some(id.as_str())));
    let mut ws = says_the_remote_hostname(&sc, &id).await;
    let mut seen = Seen::default();

    // A server the remote shell starts on its 127.0.0.1.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    send_input(
        &mut ws,
        format!(
            "cd /tmp && echo tunnel-page > porthole-{port}.txt && python3 -m http.server {port} --bind 127.0.0.1\r"
        )
        .as_bytes(),
    )
    .await;
    read_until(&mut ws, &mut seen, true, |s| contains(&s.bytes, b"Serving HTTP")).await;
    assert!(TcpStream::connect(("127.0.0.1", port)).await.is_err(), "the remote's port is reachable locally");
    let opts = LinkOptions {
        ssh: "ssh".into(),
        ssh_config: Some(remote.ssh_config.clone()),
        remote_bin: BIN.into(),
        install: None,
    };
    let link = Link::connect(SshHost::parse(HOST_ALIAS).unwrap(), opts).await.expect("a second link");
    let mut s = link.open(&Target::Tcp { host: "127.0.0.1".into(), port }).await.expect("tcp stream");
    s.write_all(format!("GET /porthole-{port}.txt HTTP/1.0\r\nHost: localhost\r\n\r\n").as_bytes()).await.unwrap();
    let mut page = Vec::new();
    tokio::time::timeout(HANG, s.read_to_end(&mut page)).await.expect("page").unwrap();
    let page = String::from_utf8_lossy(&page);
    assert!(page.starts_with("HTTP/1.0 200") && page.contains("tunnel-page"), "{page}");
    // A port nobody listens on is refused with the relay's code.
    let closed = Target::Tcp { host: "127.0.0.1".into(), port: 1 };
    assert!(
        matches!(link.open(&closed).await, Err(sidecar::remote::LinkError::Refused { code, .. }) if code == "connect_failed")
    );
    link.close();
    send_input(&mut ws, b"\x03").await;
    // The link measures its round trip (every 5 s).
    let v = wait_remote(&sc, "measured", |v| v["rtt_ms"].as_f64().is_some()).await;
    println!("round trip through the tunnel: {} ms", v["rtt_ms"]);
    let _ = std::fs::remove_file(format!("/tmp/porthole-{port}.txt"));
}

/// The visible tail of `bytes` (what a terminal shows at the end) as lines.
fn tail_lines(bytes: &[u8], n: usize) -> Vec<String> {
    let text = String::from_utf8_lossy(&bytes[bytes.len().saturating_sub(n * 10)..]).to_string();
    text.split("\r\n").map(|l| l.to_string()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_ssh_reconnects_and_the_remote_shell_and_its_output_survive() {
    let remote = TestSshd::start(&[]);
    let sc = local_sidecar(&remote.ssh_config, BIN);
    let first = connect(&sc).await;
    let id = remote_sh(&sc).await;
    let mut ws = ws_at(&sc, &format!("/api/remotes/r1/api/terminals/{id}/socket")).await;
    let mut seen = Seen::default();
    send_input(&mut ws, b"seq 1 2000000; echo SEQ-DONE\r").await;
    read_until(&mut ws, &mut seen, false, |s| contains(&s.bytes, b"\r\n1\r\n2\r\n")).await;
    let ssh_pid = first["ssh_pid"].as_i64().expect("ssh_pid");
    let killed = Instant::now();
    send_signal(ssh_pid as u32, 9);
    assert!(!contains(&seen.bytes, b"\r\n2000000\r\n"), "seq was over before the kill");
    // The forwarded socket ends with the link.
    read_until(&mut ws, &mut seen, false, |s| s.closed).await;
    let v = wait_remote(&sc, "connected again", |v| {
        v["state"] == "connected" && v["ssh_pid"].as_i64().is_some_and(|p| p != ssh_pid)
    })
    .await;
    let took = killed.elapsed();
    println!("reconnect after a killed ssh: {} ms", took.as_millis());
    assert_eq!(v["reconnects"], 1, "{v}");
    assert_eq!(v["remote"]["daemon_pid"], first["remote"]["daemon_pid"], "the same daemon");
    // seq finishes on the remote; the terminal and its shell are still there.
    let body = json!({"target": id, "until": "text", "regex": "^SEQ-DONE$", "timeout_ms": 60000});
    let r = sc.req("POST", "/api/remotes/r1/api/control/wait", Some(&body)).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    let mut ws = ws_at(&sc, &format!("/api/remotes/r1/api/terminals/{id}/socket")).await;
    let mut replay = Seen::default();
    read_until(&mut ws, &mut replay, true, |s| contains(&s.bytes, b"SEQ-DONE\r\n")).await;
    assert_eq!(replay.controls[0].1["type"], "replay", "{:?}", replay.controls);
    let lines = tail_lines(&replay.bytes[..replay.bytes.len()], 2000);
    let done = lines.iter().rposition(|l| l == "SEQ-DONE").expect("SEQ-DONE in the replay");
    let numbers: Vec<u64> = lines[done.saturating_sub(1000)..done].iter().map(|l| l.parse().unwrap_or(0)).collect();
    let want: Vec<u64> = (2_000_000 - numbers.len() as u64 + 1..=2_000_000).collect();
    assert!(numbers.len() >= 500, "too short a tail: {}", numbers.len());
    assert_eq!(numbers, want, "the tail is not contiguous up to 2000000");
    send_input(&mut ws, b"echo ALIVE-$((40+2))\r").await;
    read_until(&mut ws, &mut replay, true, |s| contains(&s.bytes, b"ALIVE-42")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_link_that_cannot_reconnect_answers_at_once_and_reconnects_when_asked() {
    let mut remote = TestSshd::start(&[]);
    let sc = local_sidecar(&remote.ssh_config, BIN);
    let first = connect(&sc).await;
    let daemon = first["remote"]["daemon_pid"].as_i64().unwrap();
    // No new ssh connection can be made; the running one is killed.
    remote.stop_listener();
    send_signal(first["ssh_pid"].as_i64().unwrap() as u32, 9);
    let v = wait_remote(&sc, "reconnecting", |v| v["state"] == "reconnecting" && v["last_error"].is_string()).await;
    assert!(v["ssh_pid"].is_null() && v["rtt_ms"].is_null(), "{v}");
    // A forward is refused at once, not held until the link is back.
    let r = sc.req("GET", "/api/remotes/r1/api/terminals", None).await;
    assert_eq!((r.status, r.code().as_str()), (503, "remote_disconnected"), "{}", String::from_utf8_lossy(&r.body));
    // Back: the reconnect button tries at once (the backoff may be long by now).
    remote.restart_listener();
    let r = sc.req("POST", "/api/remotes/r1/reconnect", None).await;
    assert_eq!(r.status, 200);
    let v = wait_remote(&sc, "connected", |v| v["state"] == "connected").await;
    assert_eq!(v["remote"]["daemon_pid"], daemon, "the same daemon");
    let r = sc.req("GET", "/api/remotes/r1/api/terminals", None).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    // DELETE ?hangup=1 drops the link and ends the daemon now.
    let r = sc.req("DELETE", "/api/remotes/r1?hangup=1", None).await;
    assert_eq!(r.status, 204);
    assert!(wait_pid_gone(daemon).await, "the daemon outlived the hangup");
    assert_eq!(sc.req("GET", "/api/remotes", None).await.json()["remotes"], json!([]));
    assert_eq!(sc.req("GET", "/api/remotes/r1", None).await.status, 404);
}

/// A raw HTTP/1.1 request to the daemon's Unix socket; status and body.
async fn daemon_req(sock: &std::path::Path, head: &str, body: &str) -> (u16, Value) {
    let mut s = tokio::net::UnixStream::connect(sock).await.unwrap();
    let req = format!("{head}Content-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len());
    s.write_all(req.as_bytes()).await.unwrap();
    let mut buf = Vec::new();
    tokio::time::timeout(HANG, s.read_to_end(&mut buf)).await.expect("daemon answer").unwrap();
    let r = parse_response(&buf);
    (r.status, serde_json::from_slice(&r.body).unwrap_or(Value::Null))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_daemon_nobody_attaches_to_hangs_up_after_its_grace() {
    let home = temp_dir("daemon");
    let mut daemon = std::process::Command::new(BIN)
        .arg("--remote-daemon")
        .env("HOME", &home)
        .env("XDG_RUNTIME_DIR", home.join("run"))
        .env("XDG_STATE_HOME", home.join("state"))
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_DATA_HOME", home.join("data"))
        .env("SHELL", "/bin/sh")
        .env("PORTHOLE_REMOTE_GRACE_S", "2")
        .env("PORTHOLE_LOG", "warn")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let run = home.join("run/porthole-remote");
    let start = Instant::now();
    while !(run.join("api.sock").exists() && run.join("token").exists()) {
        assert!(start.elapsed() < HANG, "the daemon did not start");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    use std::os::unix::fs::PermissionsExt;
    for f in ["api.sock", "token"] {
        let mode = std::fs::metadata(run.join(f)).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{f}");
    }
    let token = std::fs::read_to_string(run.join("token")).unwrap();
    let auth = format!("Authorization: Bearer {}\r\n", token.trim());
    let sock = run.join("api.sock");
    // Only `Host: localhost`, only without an Origin, only with the token.
    let (st, _) = daemon_req(&sock, &format!("GET /api/health HTTP/1.1\r\nHost: 127.0.0.1:80\r\n{auth}"), "").await;
    assert_eq!(st, 403);
    let origin = "Origin: http://localhost\r\n";
    let (st, _) =
        daemon_req(&sock, &format!("GET /api/health HTTP/1.1\r\nHost: localhost\r\n{origin}{auth}"), "").await;
    assert_eq!(st, 403);
    let (st, _) = daemon_req(&sock, "GET /api/health HTTP/1.1\r\nHost: localhost\r\n", "").await;
    assert_eq!(st, 401);
    let json_head =
        format!("POST /api/terminals HTTP/1.1\r\nHost: localhost\r\n{auth}Content-Type: application/json\r\n");
    let (st, t) = daemon_req(&sock, &json_head, r#"{"cols":80,"rows":24,"command":["sh"]}"#).await;
    assert_eq!(st, 201, "{t}");
    let id = t["id"].as_str().unwrap().to_string();
    let (_, t) = daemon_req(&sock, &format!("GET /api/terminals/{id} HTTP/1.1\r\nHost: localhost\r\n{auth}"), "").await;
    let shell = t["pid"].as_i64().expect("the shell's pid");
    // Nobody attaches: it exits by itself, its shell with it, its files removed.
    let start = Instant::now();
    let status = loop {
        if let Some(s) = daemon.try_wait().unwrap() {
            break s;
        }
        assert!(start.elapsed() < HANG, "the daemon outlived its grace");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(status.success(), "{status}");
    assert!(wait_pid_gone(shell).await, "the shell outlived the daemon");
    assert!(!sock.exists() && !run.join("token").exists());
    let mut out = String::new();
    std::io::Read::read_to_string(&mut daemon.stdout.take().unwrap(), &mut out).unwrap();
    assert_eq!(out, "", "the daemon printed on stdout");
    let _ = std::fs::remove_dir_all(&home);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_daemon_killed_outright_is_replaced_on_the_next_attach() {
    let remote = TestSshd::start(&[]);
    let sc = local_sidecar(&remote.ssh_config, BIN);
    let first = connect(&sc).await;
    let old = first["remote"]["daemon_pid"].as_i64().unwrap();
    // SIGKILL: its socket, token and pid files stay behind, stale.
    send_signal(old as u32, 9);
    assert!(wait_pid_gone(old).await);
    assert!(remote.run_dir().join("token").exists(), "the stale files are the point of this test");
    // The relay notices the daemon gone and exits; the link reconnects and a new daemon starts.
    let v = wait_remote(&sc, "connected to a new daemon", |v| {
        v["state"] == "connected" && v["remote"]["daemon_pid"].as_i64().is_some_and(|p| p != old)
    })
    .await;
    assert_eq!(v["remote"]["daemon_pid"].as_i64(), remote.daemon_pid().map(i64::from));
    // The forward uses the new daemon's token.
    let r = sc.req("GET", "/api/remotes/r1/api/terminals", None).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
}
