//! What the benches share: the real `porthole-sidecar` (started, asked, stopped), a headless
//! Chromium of their own, a small HTTP/1.1 client, statistics and CPU time. Each `bench_*.rs`
//! has `mod common;`.

// Each bench uses a subset of these helpers.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Launches the Chromium `b` describes: Debian's `/usr/bin/chromium` (or `PORTHOLE_CHROME`),
/// without the sandbox when running as root; returns it with the task that drives its CDP
/// connection.
pub async fn launch_browser(
    mut b: chromiumoxide::browser::BrowserConfigBuilder,
) -> (chromiumoxide::Browser, tokio::task::JoinHandle<()>) {
    use futures_util::StreamExt;
    if unsafe { libc::geteuid() } == 0 {
        b = b.no_sandbox();
    }
    if let Ok(p) = std::env::var("PORTHOLE_CHROME") {
        b = b.chrome_executable(p);
    } else if Path::new("/usr/bin/chromium").exists() {
        b = b.chrome_executable("/usr/bin/chromium");
    }
    let (browser, mut handler) = chromiumoxide::Browser::launch(b.build().unwrap()).await.expect("launch chromium");
    let h = tokio::spawn(async move { while handler.next().await.is_some() {} });
    (browser, h)
}

/// The environment variable `name` as a `usize`, or `default` when unset or not a number.
pub fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// The `porthole-sidecar` of this example's profile (`target/<profile>/`). Under `cargo run`
/// (`$CARGO` set) it is (re)built first, so a bench never measures a stale binary.
pub fn sidecar_binary() -> PathBuf {
    binary("porthole-sidecar")
}

/// The sidecar crate's binary `name` of this example's profile, (re)built first under
/// `cargo run` like [`sidecar_binary`].
pub fn binary(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().and_then(Path::parent).unwrap().to_path_buf();
    let bin = dir.join(name);
    if !bin.exists() || std::env::var_os("CARGO").is_some() {
        let mut c = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
        c.args(["build", "-p", "sidecar", "--bin", name]);
        if dir.ends_with("release") {
            c.arg("--release");
        }
        assert!(c.status().unwrap().success(), "building {name} failed");
    }
    bin
}

/// A running `porthole-sidecar`, stopped on drop: SIGTERM (it then kills its terminals'
/// process groups and closes its Chromiums), up to 8 s to exit, then SIGKILL.
pub struct Sidecar {
    child: Child,
    /// The API's loopback port.
    pub port: u16,
    /// The per-launch token (`Authorization: Bearer`).
    pub token: String,
    /// The sidecar's process id.
    pub pid: u32,
}

/// Starts the sidecar with `HOME` (`XDG_DATA_HOME` = `home/data`, `XDG_CONFIG_HOME` =
/// `home/.config`) inside `home`, so a bench touches nothing of the user's, and
/// `--exit-with-parent`, so a bench that panics leaves no sidecar behind; blocks until its
/// ready line (stdout) is read.
pub fn start_sidecar(home: &Path) -> Sidecar {
    start_sidecar_with(home, &[])
}

/// [`start_sidecar`] with extra arguments (e.g. `--web --ui-dir DIR` to serve the UI).
pub fn start_sidecar_with(home: &Path, args: &[&str]) -> Sidecar {
    let exe = sidecar_binary();
    let mut child = Command::new(&exe)
        .arg("--exit-with-parent")
        .args(args)
        .env("HOME", home)
        .env("XDG_DATA_HOME", home.join("data"))
        // Set, not inherited: a bench reads no config.toml of the user's.
        .env("XDG_CONFIG_HOME", home.join(".config"))
        // `PORTHOLE_LOG=debug cargo xtask bench …` shows the sidecar's own log.
        .env("PORTHOLE_LOG", std::env::var("PORTHOLE_LOG").unwrap_or_else(|_| "warn".into()))
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|e| panic!("start {}: {e}", exe.display()));
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("ready line {line:?}: {e}"));
    let port = loopback_port(v["url"].as_str().unwrap());
    let pid = child.id();
    Sidecar { child, port, token: v["token"].as_str().unwrap().to_string(), pid }
}

impl Sidecar {
    /// One API call with the token, `body` sent as JSON; returns (status, JSON body, or
    /// `Null` when the body is not JSON).
    pub async fn request(&self, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        let body = body.map(|b| b.to_string()).unwrap_or_default();
        let auth = format!("Bearer {}", self.token);
        let reply =
            http(self.port, method, path, &[("Authorization", &auth), ("Content-Type", "application/json")], &body)
                .await;
        (reply.status, serde_json::from_str(&reply.body).unwrap_or(Value::Null))
    }

    /// [`Sidecar::request`] for callers that check the answer through its body.
    pub async fn req(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        self.request(method, path, body).await.1
    }
}

impl Drop for Sidecar {
    fn drop(&mut self) {
        // SAFETY: kill(2) on the pid of the child this process spawned (> 1).
        unsafe {
            libc::kill(self.pid as i32, libc::SIGTERM);
        }
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(8) {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The port of a `http://127.0.0.1:PORT[/...]` URL.
pub fn loopback_port(url: &str) -> u16 {
    let rest = url.strip_prefix("http://127.0.0.1:").unwrap_or_else(|| panic!("not a loopback URL: {url}"));
    rest.split('/').next().unwrap().parse().unwrap_or_else(|e| panic!("port of {url}: {e}"))
}

/// An HTTP/1.1 answer: the status code (0 when the status line is unreadable) and the body.
pub struct Reply {
    pub status: u16,
    pub body: String,
}

/// One HTTP/1.1 request to `127.0.0.1:port` (`Connection: close`, `Nagle` off). Reads until
/// the connection closes or `Content-Length` bytes of body have come (Chromium's DevTools
/// server keeps the connection open); each read is bounded to 30 s.
pub async fn http(port: u16, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Reply {
    let mut s = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    s.set_nodelay(true).unwrap();
    let mut req = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        req += &format!("{k}: {v}\r\n");
    }
    req += "\r\n";
    req += body;
    s.write_all(req.as_bytes()).await.unwrap();
    let mut buf = Vec::new();
    let mut chunk = [0u8; 16384];
    loop {
        let n =
            tokio::time::timeout(Duration::from_secs(30), s.read(&mut chunk)).await.expect("http read").unwrap_or(0);
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
        let text = String::from_utf8_lossy(&buf);
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let len = head.lines().find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.trim().eq_ignore_ascii_case("content-length").then(|| v.trim().parse::<usize>().ok()).flatten()
            });
            if len.is_some_and(|len| body.len() >= len) {
                break;
            }
        }
    }
    let text = String::from_utf8_lossy(&buf);
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    Reply { status, body: body.to_string() }
}

/// The value at fraction `p` (0.0 to 1.0) of `sorted` (ascending), nearest rank; NaN when
/// `sorted` is empty.
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// The median of `v` (sorted in place): the middle value, or the mean of the two middle
/// ones for an even count.
pub fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// User + system CPU seconds used so far by process `pid` (`/proc/<pid>/stat`); 0 when it
/// cannot be read.
pub fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let rest = stat.rsplit(')').next().unwrap_or("");
    let f: Vec<&str> = rest.split_whitespace().collect();
    // Fields after the name: state is index 0, utime 11, stime 12 (in clock ticks).
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    (ticks(11) + ticks(12)) / hz
}
