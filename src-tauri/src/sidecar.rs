//! The `porthole-sidecar` child process: spawn, ready line, stderr tail, shutdown.
//!
//! Ownership: `Sidecar` owns the child. The sidecar runs in its own process group
//! (its pid is the group id), so shutdown can sweep anything it left in that group.
//! Shells live in their own sessions and are the sidecar's to kill (see
//! docs/protocol.md §1); this module only ever signals the sidecar's group.

use std::collections::VecDeque;
use std::fmt;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Deserialize;

use crate::{http, process};

/// Lines of the sidecar's stderr kept for the failure page.
const STDERR_TAIL_LINES: usize = 40;

/// The one line of JSON the sidecar prints on stdout when it is ready
/// (docs/protocol.md §1). Unknown fields are ignored.
#[derive(Clone, Debug, Deserialize)]
pub struct Ready {
    /// Base URL of every endpoint, e.g. `http://127.0.0.1:41234/`.
    pub url: String,
    /// The per-launch API token (hex), sent as `Authorization: Bearer`.
    pub token: String,
    /// A one-time login URL: opening it sets the session cookie and redirects to `/`.
    pub login_url: String,
}

/// Why the sidecar could not be started. Each variant names what to do in `hint`.
#[derive(Debug)]
pub enum StartError {
    /// Occurs when the built UI (`index.html`) is not in the resolved UI directory.
    UiMissing(PathBuf),
    /// Occurs when `porthole-sidecar` is in none of the places the layout looks at
    /// (`layout::resolve`); holds those paths.
    NotFound(Vec<PathBuf>),
    /// Occurs when spawning the sidecar fails for another reason.
    Spawn(PathBuf, std::io::Error),
    /// Occurs when the sidecar exits before printing its ready line.
    Exited(String),
    /// Occurs when no ready line arrives in time.
    Timeout(Duration),
    /// Occurs when the first stdout line is not the ready JSON.
    BadReadyLine(String),
    /// Occurs when the webview cannot be pointed at the login URL.
    Navigate(String),
    /// Occurs when the sidecar exits on its own after it was ready.
    Crashed(String),
}

impl fmt::Display for StartError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StartError::UiMissing(dir) => {
                write!(f, "the built UI was not found: {} has no index.html", dir.display())
            }
            StartError::NotFound(paths) => {
                let paths: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
                write!(f, "porthole-sidecar was not found at {}", paths.join(" or "))
            }
            StartError::Spawn(path, e) => {
                write!(f, "failed to spawn {}: {e}", path.display())
            }
            StartError::Exited(status) => {
                write!(f, "porthole-sidecar exited ({status}) before it was ready")
            }
            StartError::Timeout(d) => {
                write!(f, "porthole-sidecar did not report ready within {} s", d.as_secs())
            }
            StartError::BadReadyLine(line) => {
                write!(f, "porthole-sidecar printed an unexpected ready line: {line:?}")
            }
            StartError::Navigate(e) => write!(f, "failed to open the sidecar's UI: {e}"),
            StartError::Crashed(status) => {
                write!(f, "porthole-sidecar exited unexpectedly ({status}); its terminals are gone")
            }
        }
    }
}

impl StartError {
    /// What the user can do about it, for the failure page.
    pub fn hint(&self) -> String {
        match self {
            StartError::UiMissing(_) => "Build the UI (`npm ci && npm run build` in ui/, or \
                `cargo xtask run`), or point PORTHOLE_UI_DIR at a built UI."
                .into(),
            StartError::NotFound(_) | StartError::Spawn(..) => "Build it with \
                `cargo build -p sidecar` (or use `cargo xtask run`); it must sit in the \
                same directory as the porthole executable, or in ../lib/porthole/ from it \
                (the installed package's layout). Reinstalling the package restores it."
                .into(),
            StartError::Exited(_) | StartError::BadReadyLine(_) | StartError::Timeout(_) => {
                "The sidecar's last log lines are below.".into()
            }
            StartError::Crashed(_) => "Restart Porthole. The sidecar's last log lines are below.".into(),
            StartError::Navigate(_) => String::new(),
        }
    }
}

/// A running sidecar. Dropping it does not stop the process: call [`Sidecar::shutdown`].
pub struct Sidecar {
    child: Mutex<Child>,
    pid: u32,
    ready_rx: Mutex<Option<mpsc::Receiver<Result<Ready, StartError>>>>,
    ready: Mutex<Option<Ready>>,
    stderr_tail: Arc<Mutex<VecDeque<String>>>,
}

impl Sidecar {
    /// Spawns `program --web --ui-dir ui_dir` in a new process group with piped stdout
    /// and stderr. Does not wait for the ready line: see [`Sidecar::wait_ready`].
    ///
    /// `--web` because the webview loads the UI from the sidecar (same origin, cookie
    /// auth), exactly like a browser in web mode; the sidecar still binds loopback only.
    pub fn spawn(program: &Path, ui_dir: &Path) -> Result<Sidecar, StartError> {
        if !program.is_file() {
            return Err(StartError::NotFound(vec![program.to_path_buf()]));
        }
        let ui_dir = ui_dir.canonicalize().unwrap_or_else(|_| ui_dir.to_path_buf());
        let mut cmd = Command::new(program);
        cmd.arg("--web")
            .arg("--ui-dir")
            .arg(&ui_dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        process::own_group(&mut cmd);
        let mut child = cmd.spawn().map_err(|e| StartError::Spawn(program.to_path_buf(), e))?;
        let pid = child.id();

        let stderr_tail = Arc::new(Mutex::new(VecDeque::new()));
        let stderr = child.stderr.take().expect("stderr is piped");
        let tail = stderr_tail.clone();
        std::thread::Builder::new()
            .name("sidecar-stderr".into())
            .spawn(move || forward_stderr(stderr, &tail))
            .expect("failed to spawn a thread");

        let (tx, rx) = mpsc::channel();
        let stdout = child.stdout.take().expect("stdout is piped");
        std::thread::Builder::new()
            .name("sidecar-stdout".into())
            .spawn(move || read_ready_line(stdout, tx))
            .expect("failed to spawn a thread");

        Ok(Sidecar {
            child: Mutex::new(child),
            pid,
            ready_rx: Mutex::new(Some(rx)),
            ready: Mutex::new(None),
            stderr_tail,
        })
    }

    /// Blocks until the ready line arrives, the sidecar exits, or `timeout` passes.
    /// Call it once; a second call returns the first call's ready line or an error.
    pub fn wait_ready(&self, timeout: Duration) -> Result<Ready, StartError> {
        let rx = self.ready_rx.lock().unwrap().take();
        let Some(rx) = rx else {
            return self.ready.lock().unwrap().clone().ok_or(StartError::Exited("not ready".into()));
        };
        let result = match rx.recv_timeout(timeout) {
            Ok(Ok(ready)) => Ok(ready),
            Ok(Err(StartError::Exited(_))) | Err(mpsc::RecvTimeoutError::Disconnected) => {
                Err(StartError::Exited(self.exit_status_after_eof()))
            }
            Ok(Err(e)) => Err(e),
            Err(mpsc::RecvTimeoutError::Timeout) => Err(StartError::Timeout(timeout)),
        };
        if let Ok(ready) = &result {
            *self.ready.lock().unwrap() = Some(ready.clone());
        }
        result
    }

    /// After stdout hit EOF: the exit status, waiting briefly for the process to end.
    fn exit_status_after_eof(&self) -> String {
        let deadline = Instant::now() + Duration::from_secs(2);
        loop {
            if let Some(status) = process::exited(self.pid) {
                return status;
            }
            if Instant::now() >= deadline {
                return "closed its stdout".into();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// `Some(description)` if and only if the sidecar process has exited (it is not
    /// reaped here; [`Sidecar::shutdown`] does that).
    pub fn exit_status(&self) -> Option<String> {
        process::exited(self.pid)
    }

    /// The last lines the sidecar wrote to stderr, joined with newlines.
    pub fn stderr_tail(&self) -> String {
        let tail = self.stderr_tail.lock().unwrap();
        tail.iter().map(String::as_str).collect::<Vec<_>>().join("\n")
    }

    /// The foreground program names of busy terminals (docs/protocol.md §4,
    /// `GET /api/terminals`), or `None` when the sidecar is not ready or cannot say.
    pub fn busy_terminals(&self) -> Option<Vec<String>> {
        let ready = self.ready.lock().unwrap().clone()?;
        #[derive(Deserialize)]
        struct Terminals {
            terminals: Vec<Terminal>,
        }
        #[derive(Deserialize)]
        struct Terminal {
            #[serde(default)]
            alive: bool,
            #[serde(default)]
            busy: bool,
            foreground: Option<String>,
        }
        let body = match http::request(&ready.url, "GET", "/api/terminals", &ready.token) {
            Ok((200, body)) => body,
            Ok((status, _)) => {
                eprintln!("porthole: GET /api/terminals answered {status}");
                return None;
            }
            Err(e) => {
                eprintln!("porthole: GET /api/terminals failed: {e}");
                return None;
            }
        };
        let list: Terminals =
            serde_json::from_slice(&body).map_err(|e| eprintln!("porthole: bad /api/terminals body: {e}")).ok()?;
        Some(
            list.terminals
                .into_iter()
                .filter(|t| t.alive && t.busy)
                .map(|t| t.foreground.unwrap_or_else(|| "a program".into()))
                .collect(),
        )
    }

    /// Asks the sidecar to shut down (`POST /api/shutdown`, or SIGTERM when it never
    /// became ready), waits up to `grace` for it to exit, then kills its process
    /// group and reaps it. Blocks for at most about `grace` plus 3 s.
    pub fn shutdown(&self, grace: Duration) {
        let mut child = self.child.lock().unwrap();
        if process::exited(self.pid).is_none() {
            let ready = self.ready.lock().unwrap().clone();
            let asked = match ready {
                Some(ready) => match http::request(&ready.url, "POST", "/api/shutdown", &ready.token) {
                    Ok((202, _)) => true,
                    Ok((status, _)) => {
                        eprintln!("porthole: POST /api/shutdown answered {status}");
                        false
                    }
                    Err(e) => {
                        eprintln!("porthole: POST /api/shutdown failed: {e}");
                        false
                    }
                },
                None => false,
            };
            if !asked {
                process::signal_group(self.pid, process::Signal::Term);
            }
            let deadline = Instant::now() + grace;
            while process::exited(self.pid).is_none() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(25));
            }
            if process::exited(self.pid).is_none() {
                eprintln!("porthole: sidecar did not exit within {grace:?}; killing its group");
            }
        }
        // The sidecar is now a zombie or still running: either way its pid (and so
        // its group id) cannot have been reused yet, so sweeping the group is safe.
        process::signal_group(self.pid, process::Signal::Kill);
        match child.wait() {
            Ok(status) => eprintln!("porthole: sidecar exited ({status})"),
            Err(e) => eprintln!("porthole: waitpid(sidecar) failed: {e}"),
        }
    }
}

/// Forwards the sidecar's stderr to ours and keeps the last lines.
fn forward_stderr(stderr: impl Read, tail: &Mutex<VecDeque<String>>) {
    for line in BufReader::new(stderr).lines() {
        let Ok(line) = line else { break };
        eprintln!("{line}");
        let mut tail = tail.lock().unwrap();
        if tail.len() == STDERR_TAIL_LINES {
            tail.pop_front();
        }
        tail.push_back(line);
    }
}

/// Reads the first stdout line, sends the parsed result, then drains stdout until EOF
/// (the sidecar promises to print nothing else, but a full pipe must never block it).
fn read_ready_line(stdout: impl Read, tx: mpsc::Sender<Result<Ready, StartError>>) {
    let mut reader = BufReader::new(stdout);
    let mut line = String::new();
    let result = match reader.read_line(&mut line) {
        Ok(0) | Err(_) => Err(StartError::Exited(String::new())),
        Ok(_) => parse_ready_line(line.trim()),
    };
    let _ = tx.send(result);
    let _ = std::io::copy(&mut reader, &mut std::io::sink());
}

fn parse_ready_line(line: &str) -> Result<Ready, StartError> {
    let ready: Ready = serde_json::from_str(line).map_err(|_| StartError::BadReadyLine(line.to_string()))?;
    let loopback = |u: &str| u.starts_with("http://127.0.0.1:");
    if !loopback(&ready.url) || !loopback(&ready.login_url) || ready.token.is_empty() {
        return Err(StartError::BadReadyLine(line.to_string()));
    }
    Ok(ready)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ready_line_from_the_protocol_example_parses() {
        let line = r#"{"url":"http://127.0.0.1:41234/","token":"ab","login_url":"http://127.0.0.1:41234/login?code=cd","pid":1234,"protocol":1}"#;
        let ready = parse_ready_line(line).unwrap();
        assert_eq!(ready.url, "http://127.0.0.1:41234/");
        assert_eq!(ready.token, "ab");
        assert_eq!(ready.login_url, "http://127.0.0.1:41234/login?code=cd");
    }

    #[test]
    fn ready_line_must_point_at_loopback() {
        let line =
            r#"{"url":"http://example.com/","token":"ab","login_url":"http://example.com/login","pid":1,"protocol":1}"#;
        assert!(matches!(parse_ready_line(line), Err(StartError::BadReadyLine(_))));
        assert!(matches!(parse_ready_line("listening"), Err(StartError::BadReadyLine(_))));
    }
}
