//! The comparison point: Playwright MCP (`@playwright/mcp`, pinned in `package.json` beside
//! this file) on `/usr/bin/chromium`, headless, driven over stdio by rmcp's MCP client as an
//! agent's host would. Never downloads a browser.

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{json, Map, Value};
use tokio::net::unix::pipe;

use crate::porthole::VIEWPORT;
use crate::truth::Act;
use crate::{Driver, Outcome};

/// Where `package.json` and `node_modules` are.
const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/bench_agent");

/// A running Playwright MCP server and our client session with it; the server is killed on
/// drop.
pub struct Playwright {
    client: RunningService<RoleClient, ()>,
    child: std::process::Child,
    /// The version `package.json` pins (as installed).
    pub version: String,
    /// Its working directory, where it writes the files its answers link to.
    home: PathBuf,
}

/// Installs the pinned package with `npm ci` when `node_modules` lacks it (browser download
/// off); returns the path of its `cli.js`, or why it cannot.
fn install() -> Result<PathBuf, String> {
    let cli = Path::new(DIR).join("node_modules/@playwright/mcp/cli.js");
    if !cli.exists() {
        eprintln!("bench agent: installing @playwright/mcp (npm ci in {DIR})");
        let st = std::process::Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund"])
            .current_dir(DIR)
            .env("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")
            .status()
            .map_err(|e| format!("npm: {e}"))?;
        if !st.success() || !cli.exists() {
            return Err(format!("npm ci in {DIR} failed ({st})"));
        }
    }
    Ok(cli)
}

impl Playwright {
    /// Starts `@playwright/mcp` (working directory `home`, where it writes its files) and
    /// initializes an MCP session with it; `Err` says why it could not.
    pub async fn start(home: &Path) -> Result<Playwright, String> {
        let cli = install()?;
        let pkg: Value = serde_json::from_str(
            &std::fs::read_to_string(Path::new(DIR).join("node_modules/@playwright/mcp/package.json"))
                .map_err(|e| e.to_string())?,
        )
        .map_err(|e| e.to_string())?;
        std::fs::create_dir_all(home).map_err(|e| e.to_string())?;
        let mut cmd = std::process::Command::new("node");
        cmd.arg(&cli)
            .args(["--executable-path", "/usr/bin/chromium", "--headless", "--isolated"])
            .arg("--viewport-size")
            .arg(format!("{}x{}", VIEWPORT.0, VIEWPORT.1))
            .arg("--output-dir")
            .arg(home.join("out"))
            .current_dir(home)
            .env("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")
            .env("HOME", home)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        // As Porthole does: Chromium's sandbox cannot start as root.
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            cmd.arg("--no-sandbox");
        }
        let mut child = cmd.spawn().map_err(|e| format!("node {}: {e}", cli.display()))?;
        // Its stdio pipes as tokio pipe ends (nonblocking, registered with the runtime).
        let stdout = pipe::Receiver::from_owned_fd(OwnedFd::from(child.stdout.take().unwrap()))
            .map_err(|e| format!("stdout pipe: {e}"))?;
        let stdin = pipe::Sender::from_owned_fd(OwnedFd::from(child.stdin.take().unwrap()))
            .map_err(|e| format!("stdin pipe: {e}"))?;
        let client = ().serve((stdout, stdin)).await.map_err(|e| format!("MCP initialize: {e}"))?;
        let version = pkg["version"].as_str().unwrap_or("?").to_string();
        Ok(Playwright { client, child, version, home: home.to_path_buf() })
    }

    /// Its working directory (the files its answers link to are relative to it).
    pub fn home(&self) -> &Path {
        &self.home
    }

    /// Calls tool `name`; returns (is the answer an error, its text parts joined).
    pub async fn tool(&self, name: &'static str, args: Value) -> (bool, String) {
        let Value::Object(args) = args else { panic!("tool arguments must be an object") };
        let params = CallToolRequestParams::new(name).with_arguments(args);
        let r = match self.client.call_tool(params).await {
            Ok(r) => r,
            Err(e) => return (true, format!("MCP error: {e}")),
        };
        let v = serde_json::to_value(&r).unwrap_or(Value::Null);
        let text: String = v["content"]
            .as_array()
            .map(|c| c.iter().filter_map(|p| p["text"].as_str()).collect::<Vec<_>>().join("\n"))
            .unwrap_or_default();
        // Playwright MCP marks a failed tool with isError and a `### Error` section.
        let error = r.is_error == Some(true) || text.starts_with("### Error") || text.contains("\n### Error");
        (error, text)
    }

    /// The YAML outline of a `browser_snapshot` answer: inline between "```yaml" and
    /// "```", else in the file it links to (`[Snapshot](path.yml)`, relative to `home`).
    fn outline(&self, text: &str) -> String {
        if let Some(start) = text.find("```yaml\n") {
            let body = &text[start + 8..];
            return body[..body.find("\n```").unwrap_or(body.len())].to_string();
        }
        let link = text.split("](").nth(1).and_then(|l| l.split(')').next()).filter(|l| l.ends_with(".yml"));
        let path = link.unwrap_or_else(|| panic!("no snapshot in {text}"));
        std::fs::read_to_string(self.home.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    async fn ok(&self, name: &'static str, args: Value) -> String {
        let (error, text) = self.tool(name, args.clone()).await;
        assert!(!error, "{name} {args}: {text}");
        text
    }
}

impl Drop for Playwright {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Driver for Playwright {
    const INTERACTIVE: bool = false;

    async fn open(&mut self, url: &str) {
        // browser_navigate returns once the page has loaded.
        self.ok("browser_navigate", json!({"url": url})).await;
    }

    /// Playwright MCP has one kind of snapshot: `interactive` is ignored.
    async fn snapshot(&mut self, _interactive: bool) -> String {
        let text = self.ok("browser_snapshot", json!({})).await;
        self.outline(&text)
    }

    async fn act(&mut self, act: Act, r: &str, text: Option<&str>) -> Outcome {
        let mut args = Map::new();
        args.insert("element".into(), "the element".into());
        args.insert("target".into(), r.into());
        let name = match act {
            // No check tool: a click is how an agent checks a box with it.
            Act::Click | Act::Check => "browser_click",
            Act::Fill => {
                args.insert("text".into(), text.unwrap_or("").into());
                "browser_type"
            }
            Act::Select => {
                args.insert("values".into(), json!([text.unwrap_or("")]));
                "browser_select_option"
            }
        };
        let (error, text) = self.tool(name, Value::Object(args)).await;
        if !error {
            return Outcome::Done;
        }
        let first = text.lines().find(|l| !l.starts_with('#') && !l.trim().is_empty()).unwrap_or("").to_string();
        Outcome::Refused { code: "error".into(), detail: first.chars().take(160).collect() }
    }

    async fn eval(&mut self, js: &str) {
        self.ok("browser_evaluate", json!({"function": format!("() => {{ {js}; }}")})).await;
    }

    /// Playwright MCP has no reload tool: the same URL again is a new document too.
    async fn reload(&mut self) {
        let url = self.ok("browser_evaluate", json!({"function": "() => location.href"})).await;
        let url = url
            .lines()
            .find_map(|l| l.trim().strip_prefix('"').and_then(|l| l.strip_suffix('"')))
            .unwrap_or_else(|| panic!("no URL in {url}"))
            .to_string();
        self.ok("browser_navigate", json!({"url": url})).await;
    }

    async fn wait_text(&mut self, t: &str) {
        self.ok("browser_wait_for", json!({"text": t})).await;
    }
}
