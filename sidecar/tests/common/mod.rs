//! Test harness: start the real `porthole-sidecar` binary on an ephemeral port and talk to it
//! over plain HTTP/1.1 (a tiny client, so every header is under the test's control) and
//! WebSocket (tokio-tungstenite).
#![allow(dead_code)]

pub mod agent;
pub mod browser;
pub mod control;
pub mod mcp;
pub mod remote;
pub mod sshd;
pub mod window;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;

/// Generous bound on any single wait, only to turn a hang into a failure.
pub const HANG: Duration = Duration::from_secs(60);

pub type Ws = WebSocketStream<TcpStream>;

/// A fresh, empty temp directory (HOME for the sidecar and its shells).
pub fn temp_dir(tag: &str) -> PathBuf {
    static N: AtomicU32 = AtomicU32::new(0);
    let d = std::env::temp_dir().join(format!(
        "porthole-test-{}-{}-{}",
        std::process::id(),
        tag,
        N.fetch_add(1, Ordering::SeqCst)
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A running sidecar. Killed (SIGKILL) on drop if still running.
pub struct Sidecar {
    pub child: Child,
    pub port: u16,
    pub token: String,
    pub login_url: String,
    pub pid: u32,
    pub home: PathBuf,
}

pub struct Resp {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Resp {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not json ({e}): {}", String::from_utf8_lossy(&self.body)))
    }
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
    pub fn code(&self) -> String {
        self.json()["error"]["code"].as_str().unwrap_or("").to_string()
    }
}

impl Sidecar {
    pub fn start(args: &[&str]) -> Sidecar {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_porthole-sidecar"));
        cmd.args(args);
        Self::start_with(cmd)
    }

    /// Starts the sidecar with extra environment variables (e.g. the proxy's test-only
    /// timing overrides).
    pub fn start_with_env(args: &[&str], env: &[(&str, &str)]) -> Sidecar {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_porthole-sidecar"));
        cmd.args(args);
        for (k, v) in env {
            cmd.env(k, v);
        }
        Self::start_with(cmd)
    }

    /// Starts the sidecar with `set` added to and `unset` removed from its environment.
    pub fn start_with_env_changes(args: &[&str], set: &[(&str, &str)], unset: &[&str]) -> Sidecar {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_porthole-sidecar"));
        cmd.args(args);
        for (k, v) in set {
            cmd.env(k, v);
        }
        for k in unset {
            cmd.env_remove(k);
        }
        Self::start_with(cmd)
    }

    /// Starts the sidecar through a `sh` that stays its parent; `child` is then that shell.
    pub fn start_under_shell(args: &str) -> Sidecar {
        let mut cmd = Command::new("sh");
        cmd.arg("-c").arg(format!("\"{}\" {args} & wait", env!("CARGO_BIN_EXE_porthole-sidecar")));
        Self::start_with(cmd)
    }

    fn start_with(mut cmd: Command) -> Sidecar {
        let home = temp_dir("home");
        // A caller's own SHELL wins over the tests' default `sh`.
        if !cmd.get_envs().any(|(k, _)| k == "SHELL") {
            cmd.env("SHELL", "/bin/sh");
        }
        // The XDG directories live in the fresh HOME, so nothing lands in the developer's own
        // (a session file, a config); a caller's own wins (a restart test shares a state
        // directory between two sidecars).
        for (var, sub) in [
            ("XDG_DATA_HOME", ".local/share"),
            ("XDG_CONFIG_HOME", ".config"),
            ("XDG_CACHE_HOME", ".cache"),
            ("XDG_STATE_HOME", ".local/state"),
        ] {
            if !cmd.get_envs().any(|(k, _)| k == var) {
                cmd.env(var, home.join(sub));
            }
        }
        // A caller's own log level wins over the tests' default.
        if !cmd.get_envs().any(|(k, _)| k == "PORTHOLE_LOG") {
            cmd.env("PORTHOLE_LOG", std::env::var("PORTHOLE_TEST_LOG").unwrap_or_else(|_| "warn".into()));
        }
        let mut child = cmd
            .env("HOME", &home)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start porthole-sidecar");
        let mut line = String::new();
        let mut out = BufReader::new(child.stdout.take().unwrap());
        out.read_line(&mut line).expect("ready line");
        // Keep reading stdout in the background to prove nothing else is printed there.
        std::thread::spawn(move || {
            let mut rest = String::new();
            let _ = std::io::Read::read_to_string(&mut out, &mut rest);
            assert!(rest.is_empty(), "sidecar printed more on stdout: {rest:?}");
        });
        let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("ready line {line:?}: {e}"));
        let url = v["url"].as_str().unwrap().to_string();
        let port: u16 = url.trim_start_matches("http://127.0.0.1:").trim_end_matches('/').parse().unwrap();
        assert_eq!(v["protocol"], 1);
        let token = v["token"].as_str().unwrap().to_string();
        assert_eq!(token.len(), 64);
        assert!(token.bytes().all(|b| b.is_ascii_hexdigit()));
        Sidecar {
            pid: v["pid"].as_u64().unwrap() as u32,
            login_url: v["login_url"].as_str().unwrap().to_string(),
            child,
            port,
            token,
            home,
        }
    }

    pub fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    pub fn bearer(&self) -> String {
        format!("Bearer {}", self.token)
    }

    /// Raw request with exactly the given headers (plus Host unless given, and
    /// Content-Length / Connection: close).
    pub async fn raw(&self, method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Resp {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).await.unwrap();
        let mut req = format!("{method} {path} HTTP/1.1\r\n");
        if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
            req += &format!("Host: {}\r\n", self.host());
        }
        for (k, v) in headers {
            req += &format!("{k}: {v}\r\n");
        }
        req += &format!("Content-Length: {}\r\nConnection: close\r\n\r\n", body.len());
        s.write_all(req.as_bytes()).await.unwrap();
        // The server may answer (e.g. 413) before reading the whole body.
        let _ = s.write_all(body).await;
        let mut buf = Vec::new();
        tokio::time::timeout(HANG, s.read_to_end(&mut buf)).await.expect("http response").ok();
        parse_response(&buf)
    }

    /// Sends `request` (the whole HTTP/1.1 request, exactly as given) and reads the answer
    /// until the connection closes or the answer's `Content-Length` bytes of body have come
    /// (the server need not read the whole request first).
    pub async fn raw_bytes(&self, request: &[u8]) -> Resp {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).await.unwrap();
        let _ = s.write_all(request).await;
        let mut buf = Vec::new();
        let mut chunk = [0u8; 16384];
        tokio::time::timeout(HANG, async {
            loop {
                match s.read(&mut chunk).await {
                    Ok(0) | Err(_) => return,
                    Ok(n) => buf.extend_from_slice(&chunk[..n]),
                }
                let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else { continue };
                let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
                let len = head.lines().find_map(|l| l.strip_prefix("content-length:")?.trim().parse::<usize>().ok());
                if len.is_some_and(|len| buf.len() >= end + 4 + len) {
                    return;
                }
            }
        })
        .await
        .expect("http response");
        parse_response(&buf)
    }

    /// Authorized request with an optional JSON body.
    pub async fn req(&self, method: &str, path: &str, body: Option<&Value>) -> Resp {
        let b = body.map(|b| b.to_string()).unwrap_or_default();
        let auth = self.bearer();
        self.raw(method, path, &[("Authorization", &auth), ("Content-Type", "application/json")], b.as_bytes()).await
    }

    /// Creates a terminal running `command` (80×24, cwd = HOME) and returns its id.
    pub async fn spawn(&self, command: &[&str]) -> String {
        let r =
            self.req("POST", "/api/terminals", Some(&serde_json::json!({"cols":80,"rows":24,"command":command}))).await;
        assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
        r.json()["id"].as_str().unwrap().to_string()
    }

    pub async fn terminal(&self, id: &str) -> Value {
        let r = self.req("GET", &format!("/api/terminals/{id}"), None).await;
        assert_eq!(r.status, 200);
        r.json()
    }

    /// Opens the terminal socket with the bearer token and `extra` headers.
    pub async fn try_ws(&self, id: &str, extra: &[(&str, &str)]) -> Result<Ws, tokio_tungstenite::tungstenite::Error> {
        let url = format!("ws://127.0.0.1:{}/api/terminals/{id}/socket", self.port);
        let mut req = url.into_client_request().unwrap();
        let h = req.headers_mut();
        let mut with_auth = true;
        for (k, v) in extra {
            if k.eq_ignore_ascii_case("authorization") {
                with_auth = false;
            }
            h.insert(
                tokio_tungstenite::tungstenite::http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                HeaderValue::from_str(v).unwrap(),
            );
        }
        if with_auth {
            h.insert("authorization", HeaderValue::from_str(&self.bearer()).unwrap());
        }
        let stream = TcpStream::connect(("127.0.0.1", self.port)).await.unwrap();
        let (ws, _) = tokio_tungstenite::client_async(req, stream).await?;
        Ok(ws)
    }

    pub async fn ws(&self, id: &str) -> Ws {
        self.try_ws(id, &[]).await.expect("websocket")
    }

    /// Waits (bounded) for the process to exit; returns its status.
    pub fn wait_exit(&mut self) -> std::process::ExitStatus {
        let start = Instant::now();
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                return s;
            }
            assert!(start.elapsed() < HANG, "sidecar did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

extern "C" {
    #[link_name = "kill"]
    fn libc_kill(pid: i32, sig: i32) -> i32;
}

/// Sends `sig` to one process (a pid this test started).
pub fn send_signal(pid: u32, sig: i32) {
    assert!(pid > 1);
    // SAFETY: kill(2) on a positive pid we spawned.
    unsafe {
        libc_kill(pid as i32, sig);
    }
}

impl Drop for Sidecar {
    fn drop(&mut self) {
        // SIGTERM first so the sidecar kills its terminals (no stray test processes), then
        // SIGKILL if it has not exited within 10 s.
        if let Ok(None) = self.child.try_wait() {
            send_signal(self.child.id(), 15);
            let start = Instant::now();
            while start.elapsed() < Duration::from_secs(10) {
                if let Ok(Some(_)) = self.child.try_wait() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.home);
    }
}

pub fn parse_response(buf: &[u8]) -> Resp {
    let end = buf.windows(4).position(|w| w == b"\r\n\r\n").expect("header end");
    let head = String::from_utf8_lossy(&buf[..end]).to_string();
    let mut lines = head.split("\r\n");
    let status: u16 = lines.next().unwrap().split(' ').nth(1).unwrap().parse().unwrap();
    let headers: Vec<(String, String)> =
        lines.filter_map(|l| l.split_once(':')).map(|(k, v)| (k.trim().to_string(), v.trim().to_string())).collect();
    let mut body = buf[end + 4..].to_vec();
    let chunked = headers.iter().any(|(k, v)| k.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked"));
    if chunked {
        let mut out = Vec::new();
        let mut rest = &body[..];
        loop {
            let nl = rest.windows(2).position(|w| w == b"\r\n").unwrap();
            let n = usize::from_str_radix(std::str::from_utf8(&rest[..nl]).unwrap().trim(), 16).unwrap();
            if n == 0 {
                break;
            }
            out.extend_from_slice(&rest[nl + 2..nl + 2 + n]);
            rest = &rest[nl + 2 + n + 2..];
        }
        body = out;
    }
    Resp { status, headers, body }
}

/// What a client saw on a terminal socket.
#[derive(Default, Debug)]
pub struct Seen {
    pub bytes: Vec<u8>,
    pub exit: Option<i64>,
    pub closed: bool,
    /// The close frame's code, if one came.
    pub close_code: Option<u16>,
    /// Control messages other than `exit` (`replay`, `answerer`, `shell`, `attention`, `catchup`), each with the
    /// number of output bytes that had arrived before it.
    pub controls: Vec<(usize, Value)>,
    /// Catch-ups (protocol §5.4): the number of output bytes that had arrived before each, and its state's bytes
    /// (not in `bytes`).
    pub catch_ups: Vec<(usize, Vec<u8>)>,
    /// Bytes of the catch-up state being received still to come.
    pub state_left: usize,
}

impl Seen {
    /// True if `needle` is in the output bytes or in a whole catch-up state (where output
    /// that went by while this client was behind shows up).
    pub fn shows(&self, needle: &[u8]) -> bool {
        let whole = self.catch_ups.len() - usize::from(self.state_left > 0);
        contains(&self.bytes, needle) || self.catch_ups[..whole].iter().any(|(_, st)| contains(st, needle))
    }

    /// What this client drew: its output bytes with each catch-up state at its place, fed to
    /// a terminal of `cols`×`rows` that keeps `history` lines of scrollback.
    pub fn drawn(&self, cols: u16, rows: u16, history: usize) -> vt100::Parser {
        let mut p = vt100::Parser::new(
            std::num::NonZeroU16::new(rows).unwrap(),
            std::num::NonZeroU16::new(cols).unwrap(),
            history,
        );
        let mut at = 0;
        for (pos, state) in &self.catch_ups {
            p.process(&self.bytes[at..*pos]);
            p.process(state);
            at = *pos;
        }
        p.process(&self.bytes[at..]);
        p
    }

    /// The `answers` values of the `answerer` messages seen so far, in order.
    pub fn answerer(&self) -> Vec<bool> {
        self.controls
            .iter()
            .filter(|(_, v)| v["type"] == "answerer")
            .map(|(_, v)| v["answers"].as_bool().unwrap())
            .collect()
    }
}

/// Reads messages until `done(&seen)` holds, acking every binary message if `ack`.
pub async fn read_until(ws: &mut Ws, seen: &mut Seen, ack: bool, done: impl Fn(&Seen) -> bool) {
    tokio::time::timeout(HANG, async {
        while !done(seen) {
            match ws.next().await {
                Some(Ok(Message::Binary(b))) => {
                    let state = b.len().min(seen.state_left);
                    if state > 0 {
                        seen.state_left -= state;
                        seen.catch_ups
                            .last_mut()
                            .expect("a catch-up header came first")
                            .1
                            .extend_from_slice(&b[..state]);
                    }
                    seen.bytes.extend_from_slice(&b[state..]);
                    if ack {
                        send_ack(ws, b.len()).await;
                    }
                }
                Some(Ok(Message::Text(t))) => {
                    let v: Value = serde_json::from_str(&t).unwrap();
                    if v["type"] == "catchup" {
                        assert_eq!(seen.state_left, 0, "a catch-up header inside a state");
                        seen.state_left = v["bytes"].as_u64().unwrap() as usize;
                        seen.catch_ups.push((seen.bytes.len(), Vec::new()));
                    }
                    if ["replay", "answerer", "shell", "attention", "catchup"]
                        .contains(&v["type"].as_str().unwrap_or(""))
                    {
                        seen.controls.push((seen.bytes.len(), v));
                        continue;
                    }
                    assert_eq!(v["type"], "exit", "unexpected control {t}");
                    assert!(seen.exit.is_none(), "exit sent twice");
                    seen.exit = Some(v["code"].as_i64().unwrap());
                }
                Some(Ok(Message::Close(frame))) => {
                    seen.closed = true;
                    seen.close_code = frame.map(|f| u16::from(f.code));
                    return;
                }
                None | Some(Err(_)) => {
                    seen.closed = true;
                    return;
                }
                Some(Ok(_)) => {}
            }
        }
    })
    .await
    .unwrap_or_else(|_| {
        panic!(
            "timed out; saw {} bytes, tail {:?}, exit {:?}",
            seen.bytes.len(),
            String::from_utf8_lossy(&seen.bytes[seen.bytes.len().saturating_sub(300)..]),
            seen.exit
        )
    });
}

pub async fn send_ack(ws: &mut Ws, n: usize) {
    let _ = ws.send(Message::Text(format!(r#"{{"type":"ack","bytes":{n}}}"#).into())).await;
}

pub async fn send_input(ws: &mut Ws, data: &[u8]) {
    ws.send(Message::Binary(data.to_vec().into())).await.unwrap();
}

pub async fn send_text(ws: &mut Ws, text: &str) {
    ws.send(Message::Text(text.to_string().into())).await.unwrap();
}

/// Reads an HTTP request head (through its blank line) from `s`, for the test upstreams;
/// `None` if the client closed first or the read failed. Anything read past the head stays in
/// the returned bytes.
pub async fn request_head(s: &mut TcpStream) -> Option<Vec<u8>> {
    let mut buf = Vec::new();
    let mut b = [0u8; 4096];
    while !contains(&buf, b"\r\n\r\n") {
        match s.read(&mut b).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => buf.extend_from_slice(&b[..n]),
        }
    }
    Some(buf)
}

pub fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// True if and only if `pid` no longer exists or is a zombie.
pub fn pid_gone(pid: i64) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(s) => s.rsplit(')').next().map(|r| r.trim_start().starts_with('Z')).unwrap_or(true),
    }
}

/// Polls (bounded) until `pid_gone(pid)`.
pub async fn wait_pid_gone(pid: i64) -> bool {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(15) {
        if pid_gone(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

/// Parses the first decimal number that follows `marker` in `bytes`.
pub fn number_after(bytes: &[u8], marker: &str) -> Option<i64> {
    let s = String::from_utf8_lossy(bytes);
    let i = s.find(marker)? + marker.len();
    let digits: String = s[i..].chars().take_while(|c| c.is_ascii_digit()).collect();
    digits.parse().ok()
}
