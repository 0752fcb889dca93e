//! `ph mcp` driven as an MCP client does: the real binary, JSON-RPC one message a line on
//! its stdin and stdout (`tests/mcp.rs`, `tests/sealed.rs`).

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{json, Value};

use super::{Sidecar, HANG};

/// A running `ph mcp`: requests in on stdin, one answer a line on stdout.
pub struct Mcp {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<String>,
    next: u64,
}

impl Mcp {
    pub fn start(port: u16, token: &str) -> Mcp {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_ph"));
        cmd.env("PORTHOLE_URL", format!("http://127.0.0.1:{port}/")).env("PORTHOLE_TOKEN", token);
        Mcp::spawn(cmd)
    }

    /// `ph mcp` started as an MCP client that passes a bare environment would (the Python
    /// SDK's default keeps only `HOME`, `PATH`, `SHELL`, `TERM`, `USER` and `LOGNAME`).
    pub fn start_bare() -> Mcp {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_ph"));
        cmd.env_clear().env("PATH", std::env::var("PATH").unwrap_or_default()).env("TERM", "dumb");
        Mcp::spawn(cmd)
    }

    pub fn spawn(mut cmd: Command) -> Mcp {
        let mut child = cmd.arg("mcp").stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        let out = BufReader::new(child.stdout.take().unwrap());
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for l in out.lines().map_while(Result::ok) {
                let _ = tx.send(l);
            }
        });
        Mcp { child, stdin, lines, next: 1 }
    }

    pub fn send(&mut self, msg: Value) {
        writeln!(self.stdin, "{msg}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Sends a request and returns its `result` (or `error`), skipping notifications.
    pub fn ask(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let line = self.lines.recv_timeout(HANG).unwrap_or_else(|_| panic!("no answer to {method}"));
            let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
            if v["id"] == id {
                return if v["error"].is_object() { json!({"rpc_error": v["error"]}) } else { v["result"].clone() };
            }
        }
    }

    /// `tools/call` → (is_error, text, structured content).
    pub fn call(&mut self, tool: &str, args: Value) -> (bool, String, Value) {
        let r = self.ask("tools/call", json!({"name": tool, "arguments": args}));
        let text = r["content"][0]["text"].as_str().unwrap_or_else(|| panic!("{tool}: {r}")).to_string();
        (r["isError"] == true, text, r["structuredContent"].clone())
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Completes the MCP handshake.
pub fn initialize(mcp: &mut Mcp) {
    let init = mcp.ask(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}),
    );
    assert_eq!(init["serverInfo"]["name"], "porthole-ph", "{init}");
    mcp.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
}

/// Starts a terminal that hands its pane token out (`sh` after writing it to a file) and
/// returns its handle and that token: `ph mcp` with it acts as that pane does.
pub async fn pane_with_token(sc: &Sidecar) -> (String, String) {
    let tok = sc.home.join(format!("tok-{}", std::process::id()));
    let _ = std::fs::remove_file(&tok);
    let t = sc.spawn(&["sh", "-c", &format!("printf %s \"$PORTHOLE_TOKEN\" > {}; exec sh", tok.display())]).await;
    let deadline = tokio::time::Instant::now() + HANG;
    let token = loop {
        match std::fs::read_to_string(&tok) {
            Ok(t) if t.len() == 64 => break t,
            _ => assert!(tokio::time::Instant::now() < deadline, "no token"),
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    (t, token)
}
