//! `ph`: Porthole's in-pane CLI (docs/cli.md). It reaches the sidecar named by
//! `PORTHOLE_URL` with the pane token `PORTHOLE_TOKEN` and drives the control plane
//! (docs/protocol.md §9).
//!
//! Exit codes: 0 done, 1 usage or unknown target (or not inside Porthole), 2 refused
//! (nothing done), 3 acted but not verified, 4 timed out, 5 the program `wait --until exit`
//! waited for failed.
//!
//! A closed stdout (`ph read t3 | head -1`) ends `ph` quietly, as Unix tools do: what is
//! left to print is dropped and the verb's own exit code stands (Rust ignores SIGPIPE, so a
//! write gets EPIPE, which `print!` would turn into a panic).

mod cli;
mod client;
mod mcp;
mod output;
mod skill;
mod verbs;

use std::io::{Read, Write};
use std::process::ExitCode;
use std::time::Duration;

use clap::{CommandFactory, Parser};
use serde_json::{json, Value};

use cli::{BrowserCmd, Cli, Cmd, ConfigCmd, DialogAnswer, GetWhat, OnOff, Place, TabAction, Until, WorkspaceCmd};
use client::{Answer, ClientError, Endpoint};

/// Exit codes (docs/cli.md "Exit codes").
mod exit {
    pub const OK: u8 = 0;
    pub const USAGE: u8 = 1;
    pub const REFUSED: u8 = 2;
    pub const UNVERIFIED: u8 = 3;
    pub const TIMED_OUT: u8 = 4;
    /// `wait --until exit`: the program ended with a status other than 0 (or by a signal).
    pub const PROGRAM_FAILED: u8 = 5;
}

/// How long `ph` waits for an answer to anything but `wait` (a relayed request is bounded
/// by 15 s on the sidecar).
const CALL_TIMEOUT: Duration = Duration::from_secs(30);
/// How long `ph up` waits: each pane it starts is one relayed request (15 s bound each), and
/// its browsers wait up to 20 s for their ports.
/// How long `ph workspace new --ssh` waits: the sidecar's bound on the connect
/// (`control::WORKSPACE_REMOTE_TOTAL`, 350 s) and a little more.
const WORKSPACE_REMOTE_TIMEOUT: Duration = Duration::from_secs(360);
const UP_TIMEOUT: Duration = Duration::from_secs(300);
/// How long one `events --follow` poll waits for new events, in milliseconds: between polls
/// `ph` checks that its reader is still there.
const FOLLOW_POLL_MS: u64 = 2_000;
/// Largest `--stdin` input, in bytes (the sidecar's `send` bound).
const MAX_STDIN_BYTES: usize = 128 * 1024;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { exit::USAGE } else { exit::OK };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    match &cli.cmd {
        Cmd::Completions { shell } => {
            let mut script = Vec::new();
            clap_complete::generate(*shell, &mut Cli::command(), "ph", &mut script);
            emit(&mut std::io::stdout(), &script);
            return ExitCode::SUCCESS;
        }
        Cmd::Skill => {
            emit(&mut std::io::stdout(), skill::GUIDE.as_bytes());
            return ExitCode::SUCCESS;
        }
        Cmd::Mcp => return ExitCode::from(mcp::serve()),
        Cmd::Config { cmd: ConfigCmd::Default } => {
            emit(&mut std::io::stdout(), sidecar::config::DEFAULT_FILE.as_bytes());
            return ExitCode::SUCCESS;
        }
        _ => {}
    }
    if let Cmd::Browser { pane, cmd: BrowserCmd::Events { follow: true, since } } = &cli.cmd {
        return ExitCode::from(follow_events(pane.as_deref(), since.unwrap_or(0), cli.json));
    }
    let out = execute(&cli);
    emit(&mut std::io::stdout(), out.stdout.as_bytes());
    emit(&mut std::io::stderr(), out.stderr.as_bytes());
    ExitCode::from(out.exit)
}

/// Writes `bytes` to `to` and flushes; a reader that went away (EPIPE) or any other write
/// error drops the rest quietly: there is no one left to tell, and the exit code still says
/// how the verb went.
fn emit(to: &mut impl Write, bytes: &[u8]) {
    let _ = to.write_all(bytes).and_then(|()| to.flush());
}

/// `events --follow`: prints the tab's events after `since` as they come (one long poll after
/// another, the tab fixed by the first answer) until interrupted, the tab or sidecar goes
/// (its error printed, its exit code), or stdout's reader goes (exit 0, quietly: `| head`).
fn follow_events(pane: Option<&str>, mut since: u64, json_lines: bool) -> u8 {
    let ep = match Endpoint::from_env() {
        Ok(ep) => ep,
        Err(e) => {
            emit(&mut std::io::stderr(), format!("ph: {e}\n").as_bytes());
            return exit::USAGE;
        }
    };
    let mut tab: Option<String> = None;
    let mut stdout = std::io::stdout();
    loop {
        if reader_gone() {
            return exit::OK;
        }
        let body = json!({"pane": pane, "since": since, "tab": tab, "wait_ms": FOLLOW_POLL_MS});
        let a = match client::call(&ep, "POST", "/api/control/browser/events", Some(&body), CALL_TIMEOUT) {
            Ok(a) => a,
            Err(e) => {
                emit(&mut std::io::stderr(), format!("ph: {e}\n").as_bytes());
                return exit::REFUSED;
            }
        };
        if !(200..300).contains(&a.status) {
            let code = a.body["error"]["code"].as_str().unwrap_or("internal").to_string();
            let message = a.body["error"]["message"].as_str().unwrap_or("the sidecar gave no reason");
            emit(&mut std::io::stderr(), format!("ph: {message} [{code}]\n").as_bytes());
            return exit_for(&code);
        }
        tab = a.body["tab"].as_str().map(str::to_string);
        let text = if json_lines {
            a.body["events"].as_array().into_iter().flatten().map(|e| format!("{e}\n")).collect()
        } else {
            output::events(&a.body)
        };
        if stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush()).is_err() {
            return exit::OK;
        }
        since = a.body["last"].as_u64().unwrap_or(since).max(since);
    }
}

/// True once stdout is a pipe or socket whose reader has gone (poll says POLLERR/POLLHUP):
/// a follower with nothing new to print learns it without writing.
fn reader_gone() -> bool {
    let mut p = libc::pollfd { fd: 1, events: 0, revents: 0 };
    // SAFETY: one valid pollfd, a zero timeout.
    let n = unsafe { libc::poll(&mut p, 1, 0) };
    n > 0 && p.revents & (libc::POLLERR | libc::POLLHUP) != 0
}

/// What running one verb produced: the exit code, the text for stdout and stderr, and the
/// stable error code of a refusal. `ph` prints it; `ph mcp` returns it as the tool's result.
pub struct Outcome {
    /// The exit code (docs/cli.md "Exit codes").
    pub exit: u8,
    /// What goes to stdout.
    pub stdout: String,
    /// What goes to stderr (`ph: … [code]`).
    pub stderr: String,
    /// The sidecar's error code, or `usage`/`unreachable`/`timed_out` for what went wrong
    /// before an answer.
    pub code: Option<String>,
}

impl Outcome {
    fn ok(stdout: String) -> Outcome {
        Outcome { exit: exit::OK, stdout, stderr: String::new(), code: None }
    }

    fn failed(exit: u8, code: &str, message: &str) -> Outcome {
        Outcome { exit, stdout: String::new(), stderr: format!("ph: {message}\n"), code: Some(code.to_string()) }
    }
}

/// Runs a parsed verb against the sidecar named by the environment (one HTTP request).
pub fn execute(cli: &Cli) -> Outcome {
    match Endpoint::from_env() {
        Ok(ep) => run(cli, &ep),
        Err(e) => Outcome::failed(exit::USAGE, "usage", &e.to_string()),
    }
}

/// The request a command makes: method, path, body, and how long to wait for the answer.
fn request(cmd: &Cmd) -> Result<(&'static str, String, Option<Value>, Duration), String> {
    let post = |path: &str, body: Value| Ok(("POST", path.to_string(), Some(body), CALL_TIMEOUT));
    match cmd {
        Cmd::List { ports } => {
            Ok(("GET", format!("/api/control/panes{}", if *ports { "?ports=1" } else { "" }), None, CALL_TIMEOUT))
        }
        Cmd::Split { place, command } => {
            let command = if command.is_empty() { None } else { Some(command) };
            post("/api/control/split", placed(place, json!({"command": command})))
        }
        Cmd::Ensure { place, command } => post("/api/control/ensure", placed(place, json!({"command": command}))),
        Cmd::Open { target, mode, near } => {
            post("/api/control/open", json!({"target": target, "mode": mode.map(|m| m.as_str()), "near": near}))
        }
        Cmd::Send { pane, text, keys, stdin } => {
            let mut all = text.clone().unwrap_or_default();
            if *stdin {
                let mut buf = Vec::new();
                std::io::stdin()
                    .take(MAX_STDIN_BYTES as u64 + 1)
                    .read_to_end(&mut buf)
                    .map_err(|e| format!("reading stdin: {e}"))?;
                if buf.len() > MAX_STDIN_BYTES {
                    return Err(format!("stdin is over {MAX_STDIN_BYTES} bytes; send it in parts"));
                }
                all.push_str(&String::from_utf8(buf).map_err(|_| "stdin is not UTF-8 text".to_string())?);
            }
            post("/api/control/send", json!({"target": pane, "text": all, "keys": keys}))
        }
        Cmd::Read { pane, scrollback } => post("/api/control/read", json!({"target": pane, "scrollback": scrollback})),
        Cmd::Wait { pane, until, timeout } => {
            let ms = (timeout * 1000.0).round() as u64;
            let mut body = json!({"target": pane, "timeout_ms": ms});
            match until {
                Until::Quiet(q) => {
                    body["until"] = "quiet".into();
                    if let Some(q) = q {
                        body["quiet_ms"] = (*q).into();
                    }
                }
                Until::Exit => body["until"] = "exit".into(),
                Until::Text(re) => {
                    body["until"] = "text".into();
                    body["regex"] = re.clone().into();
                }
            }
            Ok(("POST", "/api/control/wait".into(), Some(body), Duration::from_millis(ms) + CALL_TIMEOUT))
        }
        Cmd::Ports { pane } => post("/api/control/ports", json!({"target": pane})),
        Cmd::Focus { pane } => post("/api/control/pane", json!({"target": pane, "action": "focus"})),
        Cmd::Zoom { pane } => post("/api/control/pane", json!({"target": pane, "action": "zoom"})),
        Cmd::Unzoom { pane } => post("/api/control/pane", json!({"target": pane, "action": "unzoom"})),
        Cmd::Minimize { pane } => post("/api/control/pane", json!({"target": pane, "action": "minimize"})),
        Cmd::Restore { pane } => post("/api/control/pane", json!({"target": pane, "action": "restore"})),
        Cmd::Close { pane } => post("/api/control/pane", json!({"target": pane, "action": "close"})),
        Cmd::Browser { pane, cmd } => browser_request(pane.as_deref(), cmd),
        Cmd::Workspace { cmd: WorkspaceCmd::New { ssh, name } } => {
            // A remote's connect has its own bound (the sidecar's); a local one the relay's.
            let timeout = if ssh.is_some() { WORKSPACE_REMOTE_TIMEOUT } else { CALL_TIMEOUT };
            Ok(("POST", "/api/control/workspace".into(), Some(json!({"host": ssh, "name": name})), timeout))
        }
        Cmd::Up { name, near } => Ok((
            "POST",
            "/api/control/up".into(),
            Some(json!({"layout": name, "near": near, "cwd": if near.is_none() {
                std::env::current_dir().ok().map(|d| d.to_string_lossy().into_owned())
            } else {
                None
            }})),
            UP_TIMEOUT,
        )),
        Cmd::Completions { .. } | Cmd::Skill | Cmd::Mcp | Cmd::Config { .. } => {
            Err("this verb needs no sidecar".into())
        }
    }
}

/// `body` with the placement fields of `split`/`ensure`: near, side, and the working
/// directory (relative to ours; default: ours).
fn placed(place: &Place, mut body: Value) -> Value {
    let here = std::env::current_dir().ok();
    let cwd = match (&place.cwd, &here) {
        (Some(d), Some(h)) => Some(h.join(d)),
        (Some(d), None) => Some(std::path::PathBuf::from(d)),
        (None, h) => h.clone(),
    };
    body["near"] = json!(place.near);
    body["side"] = json!(place.side());
    body["cwd"] = json!(cwd.map(|c| c.to_string_lossy().into_owned()));
    body
}

/// The request of a `ph browser` verb (protocol §9.7).
fn browser_request(
    pane: Option<&str>,
    cmd: &BrowserCmd,
) -> Result<(&'static str, String, Option<Value>, Duration), String> {
    let post = |verb: &str, mut body: Value| {
        if verb != "open" {
            body["pane"] = json!(pane);
        }
        Ok(("POST", format!("/api/control/browser/{verb}"), Some(body), CALL_TIMEOUT))
    };
    let act = |action: &str, r: &str| post("act", json!({"action": action, "ref": r}));
    match cmd {
        BrowserCmd::Open { target, near, new, isolated } => {
            post("open", json!({"target": target, "near": near, "new": new, "isolated": isolated}))
        }
        BrowserCmd::Snapshot { interactive, target, max_bytes, sealed, from, query, diff } => post(
            "snapshot",
            json!({"interactive": interactive, "ref": target, "max_bytes": max_bytes, "sealed": sealed,
                   "from": from, "query": query, "diff": diff}),
        ),
        BrowserCmd::Find { text, role, name, limit } => {
            post("find", json!({"text": text, "role": role, "name": name, "limit": limit}))
        }
        BrowserCmd::Text { target, max_bytes } => post("text", json!({"ref": target, "max_bytes": max_bytes})),
        BrowserCmd::Click { target, button } => {
            post("act", json!({"action": "click", "ref": target, "button": button}))
        }
        BrowserCmd::Dblclick { target } => act("dblclick", target),
        BrowserCmd::Hover { target } => act("hover", target),
        BrowserCmd::Focus { target } => act("focus", target),
        BrowserCmd::Check { target } => act("check", target),
        BrowserCmd::Uncheck { target } => act("uncheck", target),
        BrowserCmd::Fill { target, text } => post("act", json!({"action": "fill", "ref": target, "text": text})),
        BrowserCmd::Type { target, text } => post("act", json!({"action": "type", "ref": target, "text": text})),
        BrowserCmd::Press { key, target } => post("act", json!({"action": "press", "ref": target, "key": key})),
        BrowserCmd::Wait { text, gone, url, load, ref_state, event, timeout } => {
            let ms = (timeout * 1000.0).round() as u64;
            let mut body =
                json!({"text": text, "gone": gone, "url": url, "load": load, "event": event, "timeout_ms": ms});
            if let Some(rs) = ref_state {
                body["ref"] = json!(rs.r#ref);
                body["state"] = json!(rs.state);
            }
            body["pane"] = json!(pane);
            Ok(("POST", "/api/control/browser/wait".into(), Some(body), Duration::from_millis(ms) + CALL_TIMEOUT))
        }
        BrowserCmd::Get { what, target } => {
            let what = match what {
                GetWhat::Text => "text",
                GetWhat::Value => "value",
            };
            post("get", json!({"what": what, "ref": target}))
        }
        BrowserCmd::Screenshot { target, full, parts, annotate, .. } => {
            post("screenshot", json!({"ref": target, "full": full, "parts": parts, "annotate": annotate}))
        }
        BrowserCmd::Navigate { url } => post("navigate", json!({"url": url})),
        BrowserCmd::Back => post("history", json!({"action": "back"})),
        BrowserCmd::Forward => post("history", json!({"action": "forward"})),
        BrowserCmd::Reload => post("history", json!({"action": "reload"})),
        BrowserCmd::Tabs { action, tab } => match action {
            None => post("tabs", json!({})),
            Some(TabAction::New) => post("tabs", json!({"action": "new", "url": tab})),
            Some(TabAction::Select) => post("tabs", json!({"action": "select", "tab": tab})),
            Some(TabAction::Close) => post("tabs", json!({"action": "close", "tab": tab})),
        },
        BrowserCmd::Select { target, values } => post("select", json!({"ref": target, "values": values})),
        BrowserCmd::Set { target, value } => post("set", json!({"ref": target, "value": value})),
        BrowserCmd::Scroll { to, target } => post("scroll", json!({"to": to, "ref": target})),
        BrowserCmd::ScrollTo { target } => post("scroll_to", json!({"ref": target})),
        BrowserCmd::Upload { target, files } => {
            // The sidecar checks the files; it needs them absolute (its directory is not ours).
            let files = files
                .iter()
                .map(|f| std::path::absolute(f).map(|p| p.to_string_lossy().into_owned()))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| format!("a file path: {e}"))?;
            post("upload", json!({"ref": target, "files": files}))
        }
        BrowserCmd::Drag { target, to } => post("drag", json!({"ref": target, "to": to})),
        BrowserCmd::Viewport { width, height, dpr } => {
            post("viewport", json!({"width": width, "height": height, "dpr": dpr}))
        }
        BrowserCmd::Dialog { answer, text } => {
            let action = match answer {
                DialogAnswer::Accept => "accept",
                DialogAnswer::Dismiss => "dismiss",
            };
            post("dialog", json!({"action": action, "text": text}))
        }
        BrowserCmd::Console { level, since_navigation } => {
            post("console", json!({"level": level, "since_navigation": since_navigation}))
        }
        BrowserCmd::Network { failed, id, har } => {
            post("network", json!({"failed": failed, "id": id, "har": har.is_some()}))
        }
        BrowserCmd::Route { pattern, status, body_file, headers, abort, off, list } => {
            use base64::Engine;
            let body = match body_file {
                Some(f) => {
                    let bytes = std::fs::read(f).map_err(|e| format!("reading {}: {e}", f.display()))?;
                    if bytes.len() > sidecar::automation::MAX_ROUTE_BODY_BYTES {
                        return Err(format!(
                            "{} is over {} bytes",
                            f.display(),
                            sidecar::automation::MAX_ROUTE_BODY_BYTES
                        ));
                    }
                    Some(base64::engine::general_purpose::STANDARD.encode(bytes))
                }
                None => None,
            };
            post(
                "route",
                json!({"pattern": pattern, "status": status, "body_base64": body, "headers": headers,
                       "abort": abort, "off": off, "list": list}),
            )
        }
        BrowserCmd::Offline { state } => post("offline", json!({"on": *state == OnOff::On})),
        // One call; with --follow a long poll (the first new events, or none after a while):
        // `ph` itself loops ([`follow_events`]), a tool returns what one poll got.
        BrowserCmd::Events { follow, since } => {
            let wait = if *follow { FOLLOW_POLL_MS } else { 0 };
            post("events", json!({"since": since.unwrap_or(0), "wait_ms": wait}))
        }
        BrowserCmd::Downloads => post("downloads", json!({})),
        BrowserCmd::Eval { js, allow_eval } => post("eval", json!({"js": js, "allow_eval": allow_eval})),
        BrowserCmd::Policy => Ok(("GET", "/api/control/browser/policy".into(), None, CALL_TIMEOUT)),
        BrowserCmd::Stats => post("stats", json!({})),
        BrowserCmd::Handoff { reason, timeout } => {
            let secs = timeout.unwrap_or(300);
            let body = json!({"reason": reason, "timeout_s": secs, "pane": pane});
            Ok(("POST", "/api/control/browser/handoff".into(), Some(body), Duration::from_secs(secs) + CALL_TIMEOUT))
        }
        BrowserCmd::FocusWalk { target, max_steps, back, no_restore } => {
            post("focus_walk", json!({"ref": target, "max_steps": max_steps, "back": back, "restore": !no_restore}))
        }
    }
}

/// Writes a screenshot's PNG to `out` (default: a new file in the temp directory) and
/// returns the path.
fn save_png(v: &Value, out: Option<&std::path::Path>) -> Result<std::path::PathBuf, String> {
    use base64::Engine;
    let png = base64::engine::general_purpose::STANDARD
        .decode(v["png"].as_str().unwrap_or(""))
        .map_err(|e| format!("the screenshot is not base64: {e}"))?;
    let path = match out {
        Some(p) => p.to_path_buf(),
        None => {
            let ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis());
            std::env::temp_dir().join(format!("ph-screenshot-{}-{ms}.png", std::process::id()))
        }
    };
    std::fs::write(&path, png).map_err(|e| format!("writing {}: {e}", path.display()))?;
    Ok(path)
}

/// Longest side of a screenshot returned over MCP, in pixels (what vision models take whole).
pub const MCP_IMAGE_MAX_SIDE: u32 = 1568;

/// `browser screenshot` for `ph mcp`: the PNG (base64) scaled so that its long side is at most
/// [`MCP_IMAGE_MAX_SIDE`], and the text (the legend, the size; with `--output`, the original's
/// path, captured once more unscaled). Any other verb: `None`.
pub fn screenshot_image(cli: &Cli) -> Option<(Outcome, Option<String>)> {
    let Cmd::Browser { cmd: BrowserCmd::Screenshot { output, .. }, .. } = &cli.cmd else { return None };
    let ep = match Endpoint::from_env() {
        Ok(ep) => ep,
        Err(e) => return Some((Outcome::failed(exit::USAGE, "usage", &e.to_string()), None)),
    };
    let (method, path, body, timeout) = match request(&cli.cmd) {
        Ok(r) => r,
        Err(m) => return Some((Outcome::failed(exit::USAGE, "usage", &m), None)),
    };
    let mut scaled = body.clone().unwrap_or_default();
    scaled["max_side"] = MCP_IMAGE_MAX_SIDE.into();
    let a = match client::call(&ep, method, &path, Some(&scaled), timeout) {
        Ok(a) if (200..300).contains(&a.status) => a,
        Ok(a) => return Some((report(cli, a), None)),
        Err(_) => return Some((run(cli, &ep), None)),
    };
    let png = a.body["png"].as_str().unwrap_or("").to_string();
    let (w, h) = png_size(&png).unwrap_or((0, 0));
    let mut text = format!("{w}×{h} px (scaled to at most {MCP_IMAGE_MAX_SIDE} px on the long side)\n");
    text.push_str(a.body["legend"].as_str().unwrap_or(""));
    if output.is_some() {
        // The original, unscaled, to the file asked for.
        let o = run(cli, &ep);
        if o.exit != exit::OK {
            return Some((o, None));
        }
        text.push_str(&format!("original: {}", o.stdout.lines().next().unwrap_or("")));
        text.push('\n');
    }
    Some((Outcome::ok(text), Some(png)))
}

/// A base64 PNG's width and height (its IHDR).
fn png_size(b64: &str) -> Option<(u32, u32)> {
    use base64::Engine;
    // The first 32 base64 characters hold the 24 bytes up to the height.
    let head = base64::engine::general_purpose::STANDARD.decode(b64.get(..32)?).ok()?;
    let n = |i: usize| Some(u32::from_be_bytes(head.get(i..i + 4)?.try_into().ok()?));
    (head.get(12..16)? == b"IHDR").then_some(())?;
    Some((n(16)?, n(20)?))
}

fn run(cli: &Cli, ep: &Endpoint) -> Outcome {
    let (method, path, body, timeout) = match request(&cli.cmd) {
        Ok(r) => r,
        Err(m) => return Outcome::failed(exit::USAGE, "usage", &m),
    };
    match client::call(ep, method, &path, body.as_ref(), timeout) {
        Ok(a) => report(cli, a),
        Err(e) => {
            let (exit, code) = match e {
                ClientError::Timeout => (exit::TIMED_OUT, "timed_out"),
                ClientError::NotInside(_) | ClientError::BadUrl(_) => (exit::USAGE, "usage"),
                ClientError::Io(_) => (exit::REFUSED, "unreachable"),
            };
            Outcome::failed(exit, code, &e.to_string())
        }
    }
}

/// The answer as text (JSON with `--json`) and its exit code.
fn report(cli: &Cli, a: Answer) -> Outcome {
    if (200..300).contains(&a.status) {
        if let Cmd::Browser { cmd: BrowserCmd::Screenshot { output, .. }, .. } = &cli.cmd {
            return match save_png(&a.body, output.as_deref()) {
                Ok(path) if cli.json => Outcome::ok(format!(
                    "{}\n",
                    json!({"path": path, "bytes": a.body["bytes"], "pane": a.body["pane"], "parts": a.body["parts"],
                           "boxes": a.body["boxes"], "unboxed": a.body["unboxed"]})
                )),
                Ok(path) => Outcome::ok(format!("{}\n{}", path.display(), a.body["legend"].as_str().unwrap_or(""))),
                Err(m) => Outcome::failed(exit::REFUSED, "write_failed", &m),
            };
        }
        if let Cmd::Browser { cmd: BrowserCmd::Network { har: Some(file), .. }, .. } = &cli.cmd {
            let text = serde_json::to_string_pretty(&a.body["har"]).unwrap_or_default();
            return match std::fs::write(file, text) {
                Ok(()) if cli.json => Outcome::ok(format!(
                    "{}\n",
                    json!({"path": file, "entries": a.body["entries"], "dropped": a.body["dropped"], "pane": a.body["pane"]})
                )),
                Ok(()) => Outcome::ok(format!("{} ({} requests)\n", file.display(), a.body["entries"])),
                Err(e) => Outcome::failed(exit::REFUSED, "write_failed", &format!("writing {}: {e}", file.display())),
            };
        }
        let mut out =
            if cli.json { Outcome::ok(format!("{}\n", a.body)) } else { Outcome::ok(output::text(&cli.cmd, &a.body)) };
        if !cli.json {
            // What the browser's watchdog found since the last answer (said once).
            for line in a.body["watchdog"].as_array().into_iter().flatten().filter_map(Value::as_str) {
                out.stdout.push_str(&format!("watchdog: {line}\n"));
            }
        }
        // `ph wait … --until exit && deploy` must not go on after a failure.
        if a.body["until"] == "exit" && a.body["exit_code"] != 0 {
            out.exit = exit::PROGRAM_FAILED;
            out.code = Some("program_failed".into());
        }
        return out;
    }
    let code = a.body["error"]["code"].as_str().unwrap_or("internal").to_string();
    let message = a.body["error"]["message"].as_str().unwrap_or("the sidecar gave no reason").to_string();
    let mut out = Outcome::failed(exit_for(&code), &code, &format!("{message} [{code}]"));
    if cli.json {
        out.stdout = format!("{}\n", a.body);
        out.stderr.clear();
    }
    out
}

/// The exit code for an error code (docs/cli.md).
fn exit_for(code: &str) -> u8 {
    match code {
        "unknown_target" | "bad_request" | "bad_json" | "bad_regex" | "bad_key" | "bad_cwd" | "no_caller"
        | "no_project" | "bad_project" | "unknown_layout" => exit::USAGE,
        "unknown_ref" => exit::USAGE,
        "timed_out" => exit::TIMED_OUT,
        "unverified" | "mismatch" | "unknown_outcome" | "user_interrupted" => exit::UNVERIFIED,
        _ => exit::REFUSED,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_follow_the_error_codes() {
        assert_eq!(exit_for("unknown_target"), exit::USAGE);
        assert_eq!(exit_for("no_window"), exit::REFUSED);
        assert_eq!(exit_for("ambiguous_target"), exit::REFUSED);
        assert_eq!(exit_for("unauthorized"), exit::REFUSED);
        assert_eq!(exit_for("unverified"), exit::UNVERIFIED);
        assert_eq!(exit_for("mismatch"), exit::UNVERIFIED);
        assert_eq!(exit_for("unknown_outcome"), exit::UNVERIFIED);
        assert_eq!(exit_for("user_interrupted"), exit::UNVERIFIED);
        assert_eq!(exit_for("tab_busy"), exit::REFUSED);
        for sealed in ["agent_disabled", "sealed_disabled", "frames_limit", "rate_limited"] {
            assert_eq!(exit_for(sealed), exit::REFUSED, "{sealed}");
        }
        assert_eq!(exit_for("stale_ref"), exit::REFUSED);
        assert_eq!(exit_for("dialog_pending"), exit::REFUSED);
        assert_eq!(exit_for("unknown_ref"), exit::USAGE);
        assert_eq!(exit_for("timed_out"), exit::TIMED_OUT);
        assert_eq!(exit_for("untrusted_project"), exit::REFUSED);
        assert_eq!(exit_for("no_project"), exit::USAGE);
        assert_eq!(exit_for("bad_project"), exit::USAGE);
        assert_eq!(exit_for("unknown_layout"), exit::USAGE);
    }

    #[test]
    fn a_png_says_its_size() {
        use base64::Engine;
        let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
        png.extend_from_slice(&1568u32.to_be_bytes());
        png.extend_from_slice(&882u32.to_be_bytes());
        png.extend_from_slice(&[8, 6, 0, 0, 0]);
        let b64 = base64::engine::general_purpose::STANDARD.encode(&png);
        assert_eq!(png_size(&b64), Some((1568, 882)));
        assert_eq!(png_size("bm90IGEgcG5n"), None);
    }

    #[test]
    fn the_cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }
}
