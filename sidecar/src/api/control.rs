//! `/api/control/*` (protocol §9): the verbs `ph` uses. Each handler rebuilds its request
//! field by field into bounded values, resolves targets through the `control` module, and
//! answers alone (terminal verbs) or through the answering window (layout verbs).

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Duration;

use axum::extract::{Query, State};
use axum::{Extension, Json};
use serde::Deserialize;
use serde_json::{json, Value};

use super::body::JsonBody;
use super::error::ApiError;
use super::ports::PortJson;
use super::state::AppState;
use super::terminals::{spawn_terminal, validate_create, CreateTerminal};
use crate::control::{key_bytes, ControlError, CursorKeys, Handle, PaneKind, Resolved, Target, UiPane, WindowState};
use crate::ports::Root;
use crate::pty::{Terminal, TerminalId};

/// Largest `text` accepted by `send`, in bytes.
pub const MAX_SEND_TEXT_BYTES: usize = 128 * 1024;
/// Most keys in one `send`.
pub const MAX_SEND_KEYS: usize = 64;
/// Most history lines `read` returns.
pub const MAX_READ_SCROLLBACK: usize = 10_000;
/// Longest `wait` (and the default), in milliseconds.
pub const MAX_WAIT_MS: u64 = 600_000;
const DEFAULT_WAIT_MS: u64 = 30_000;
const DEFAULT_QUIET_MS: u64 = 500;
/// Longest `text=` pattern, in bytes, and the compiled program's size bound.
pub const MAX_REGEX_BYTES: usize = 1024;
const REGEX_SIZE_LIMIT: usize = 1 << 20;
/// Input is written to the PTY in pieces of at most this many bytes (the socket's message cap).
const SEND_CHUNK_BYTES: usize = 64 * 1024;

/// The calling pane, put on the request by the auth guard (`None`: master token or cookie).
#[derive(Debug, Clone, Copy)]
pub struct Caller(pub Option<Handle>);

fn target_or_self(t: Option<String>) -> Result<Target, ApiError> {
    Ok(Target::parse(t.as_deref().unwrap_or("self"))?)
}

fn resolve(st: &AppState, caller: Caller, target: &Target) -> Result<Resolved, ApiError> {
    Ok(st.control.resolve(target, caller.0)?)
}

/// The live terminal of a resolved pane (refusing browser panes and vanished terminals).
fn terminal_of(st: &AppState, r: &Resolved) -> Result<std::sync::Arc<Terminal>, ApiError> {
    let id = r.terminal()?;
    st.terminals.get(id).ok_or_else(|| ControlError::UnknownTarget(r.handle.to_string()).into())
}

// ---- list

/// Query of `GET /api/control/panes`.
#[derive(Debug, Deserialize)]
pub struct PanesQuery {
    /// `1` to scan each terminal's listening ports.
    #[serde(default)]
    ports: Option<String>,
}

/// `GET /api/control/panes[?ports=1]` → the panes of the answering window (protocol §9.4).
pub async fn panes(
    State(st): State<AppState>,
    Extension(caller): Extension<Caller>,
    Query(q): Query<PanesQuery>,
) -> Result<Json<Value>, ApiError> {
    let with_ports = match q.ports.as_deref() {
        None | Some("0") => false,
        Some("1") => true,
        Some(v) => return Err(ApiError::BadRequest(format!("ports must be 0 or 1, got {v:?}"))),
    };
    let (state, window) = st.control.windows.state();
    let mut out = Vec::new();
    let mut shown: BTreeSet<TerminalId> = BTreeSet::new();
    for p in state.panes.iter() {
        let Some(handle) = p.handle else { continue };
        let focused = state.focused.as_deref() == Some(p.id.as_str());
        let terminal = if p.kind == PaneKind::Terminal { st.control.terminal_of(handle).or(p.terminal) } else { None };
        if let Some(t) = terminal {
            shown.insert(t);
        }
        out.push(pane_json(&st, handle, Some(p), terminal, focused, with_ports).await);
    }
    // Terminals this sidecar runs that no window shows (none attached yet, or orphaned).
    for term in st.terminals.list() {
        if shown.contains(&term.id()) {
            continue;
        }
        let handle = st.control.pane_of(term.id()).unwrap_or(Handle::of_terminal(term.id()));
        let mut v = pane_json(&st, handle, None, Some(term.id()), false, with_ports).await;
        v["shown"] = false.into();
        out.push(v);
    }
    let focused = state
        .panes
        .iter()
        .find(|p| state.focused.as_deref() == Some(p.id.as_str()))
        .and_then(|p| p.handle)
        .map(|h| h.to_string());
    Ok(Json(json!({
        "panes": out,
        "focused": focused,
        "window": window,
        "caller": caller.0.map(|h| h.to_string()),
    })))
}

async fn pane_json(
    st: &AppState,
    handle: Handle,
    ui: Option<&UiPane>,
    terminal: Option<TerminalId>,
    focused: bool,
    with_ports: bool,
) -> Value {
    let mut v = json!({
        "handle": handle.to_string(),
        "kind": match handle.kind { PaneKind::Terminal => "terminal", PaneKind::Browser => "browser" },
        "title": ui.map(|p| p.title.clone()).unwrap_or_default(),
        "cwd": null, "command": null, "alive": null, "exit_code": null, "foreground": null,
        "url": ui.and_then(|p| p.url.clone()),
        "mode": ui.and_then(|p| p.mode.clone()),
        "minimized": ui.is_some_and(|p| p.minimized),
        "workspace": ui.and_then(|p| p.workspace),
        "focused": focused,
        "shown": true,
    });
    if let Some(term) = terminal.and_then(|t| st.terminals.get(t)) {
        let info = term.info();
        v["cwd"] = term.current_cwd().into();
        v["title"] = terminal_title(&info, v["title"].as_str().unwrap_or("")).into();
        v["command"] = json!(info.command);
        v["alive"] = info.alive.into();
        v["exit_code"] = json!(info.exit_code);
        v["foreground"] = json!(info.foreground);
        if with_ports {
            let root = Root { pid: term.pid(), tree: !term.reaped() };
            v["ports"] = match st.ports.scan(root).await {
                Ok(ports) => json!(ports.iter().map(PortJson::from).collect::<Vec<_>>()),
                Err(_) => Value::Null,
            };
        }
    }
    v
}

/// The title `ph list` shows for a terminal pane: what its header shows (the UI's
/// `paneLabel`, DESIGN §13), so `ph list` and the wall agree. While the shell integration
/// reports a command running: its command line (else the foreground program); a shell
/// without integration running another program in the foreground: that program's name;
/// otherwise `reported`, the window's title for it (OSC title, else its command), else the
/// foreground program's name, else the command it was started with.
fn terminal_title(info: &crate::pty::TerminalInfo, reported: &str) -> String {
    let fallback = || {
        if reported.is_empty() {
            info.foreground.clone().unwrap_or_else(|| info.command.join(" "))
        } else {
            reported.to_string()
        }
    };
    if !info.alive {
        return fallback();
    }
    if let Some(running) = &info.shell.running {
        return running.command.clone().or_else(|| info.foreground.clone()).unwrap_or_else(fallback);
    }
    match (&info.foreground, info.shell.integration, info.busy) {
        (Some(fg), false, true) => fg.clone(),
        _ => fallback(),
    }
}

// ---- send

/// Body of `POST /api/control/send`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SendReq {
    #[serde(default)]
    target: Option<String>,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    keys: Vec<String>,
}

/// `POST /api/control/send` → `{"handle","bytes"}`: text, then each key, to the PTY.
pub async fn send(
    State(st): State<AppState>,
    Extension(caller): Extension<Caller>,
    JsonBody(req): JsonBody<SendReq>,
) -> Result<Json<Value>, ApiError> {
    let text = req.text.unwrap_or_default();
    if text.len() > MAX_SEND_TEXT_BYTES {
        return Err(ApiError::BadRequest(format!("text is {} bytes, at most {MAX_SEND_TEXT_BYTES}", text.len())));
    }
    if req.keys.len() > MAX_SEND_KEYS {
        return Err(ApiError::BadRequest(format!("{} keys, at most {MAX_SEND_KEYS}", req.keys.len())));
    }
    if text.is_empty() && req.keys.is_empty() {
        return Err(ApiError::BadRequest("nothing to send: give text or keys".into()));
    }
    let r = resolve(&st, caller, &target_or_self(req.target)?)?;
    let term = terminal_of(&st, &r)?;
    if let Some(code) = term.exit_code() {
        return Err(ControlError::Exited { handle: r.handle.to_string(), code }.into());
    }
    let mode = if term.application_cursor() { CursorKeys::Application } else { CursorKeys::Normal };
    // Every key is checked before anything is written: a bad key sends nothing.
    let mut bytes = text.into_bytes();
    for k in &req.keys {
        bytes.extend(key_bytes(k, mode)?);
    }
    let n = bytes.len();
    for chunk in bytes.chunks(SEND_CHUNK_BYTES) {
        term.write_input(chunk.to_vec())
            .await
            .map_err(|_| ControlError::Exited { handle: r.handle.to_string(), code: term.exit_code().unwrap_or(-1) })?;
    }
    Ok(Json(json!({"handle": r.handle.to_string(), "bytes": n})))
}

// ---- read

/// Body of `POST /api/control/read`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReadReq {
    #[serde(default)]
    target: Option<String>,
    #[serde(default)]
    scrollback: Option<u64>,
}

/// `POST /api/control/read` → the screen as text (protocol §9.5).
pub async fn read(
    State(st): State<AppState>,
    Extension(caller): Extension<Caller>,
    JsonBody(req): JsonBody<ReadReq>,
) -> Result<Json<Value>, ApiError> {
    let n = req.scrollback.unwrap_or(0);
    if n > MAX_READ_SCROLLBACK as u64 {
        return Err(ApiError::BadRequest(format!("scrollback must be 0..={MAX_READ_SCROLLBACK}, got {n}")));
    }
    let r = resolve(&st, caller, &target_or_self(req.target)?)?;
    let term = terminal_of(&st, &r)?;
    let t = term.screen_text(n as usize);
    Ok(Json(json!({
        "handle": r.handle.to_string(),
        "cols": t.cols,
        "rows": t.rows,
        "cursor": {"row": t.cursor_row, "col": t.cursor_col},
        "lines": t.lines,
        "scrollback": t.scrollback,
        "alternate": t.alternate,
    })))
}

// ---- wait

/// Body of `POST /api/control/wait`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WaitReq {
    #[serde(default)]
    target: Option<String>,
    until: String,
    #[serde(default)]
    quiet_ms: Option<u64>,
    #[serde(default)]
    regex: Option<String>,
    #[serde(default)]
    timeout_ms: Option<u64>,
}

enum Until {
    Quiet(Duration),
    Exit,
    Text(regex::Regex),
}

fn ms_in_range(name: &str, v: Option<u64>, default: u64) -> Result<Duration, ApiError> {
    let v = v.unwrap_or(default);
    if v == 0 || v > MAX_WAIT_MS {
        return Err(ApiError::BadRequest(format!("{name} must be 1..={MAX_WAIT_MS}, got {v}")));
    }
    Ok(Duration::from_millis(v))
}

/// Compiles a `text=` pattern within its bounds (length, program size).
pub fn compile_regex(p: &str) -> Result<regex::Regex, ControlError> {
    if p.is_empty() || p.len() > MAX_REGEX_BYTES {
        return Err(ControlError::BadRegex(format!(
            "the pattern must be 1..={MAX_REGEX_BYTES} bytes, got {}",
            p.len()
        )));
    }
    regex::RegexBuilder::new(p)
        .size_limit(REGEX_SIZE_LIMIT)
        .dfa_size_limit(REGEX_SIZE_LIMIT)
        .build()
        .map_err(|e| ControlError::BadRegex(format!("bad pattern: {e}")))
}

/// `POST /api/control/wait` → what was waited for, or `408 timed_out`.
pub async fn wait(
    State(st): State<AppState>,
    Extension(caller): Extension<Caller>,
    JsonBody(req): JsonBody<WaitReq>,
) -> Result<Json<Value>, ApiError> {
    let timeout = ms_in_range("timeout_ms", req.timeout_ms, DEFAULT_WAIT_MS)?;
    let until = match req.until.as_str() {
        "quiet" => Until::Quiet(ms_in_range("quiet_ms", req.quiet_ms, DEFAULT_QUIET_MS)?),
        "exit" => Until::Exit,
        "text" => Until::Text(compile_regex(req.regex.as_deref().unwrap_or(""))?),
        u => return Err(ApiError::BadRequest(format!("until must be quiet, exit or text, got {u:?}"))),
    };
    if !matches!(until, Until::Text(_)) && req.regex.is_some() {
        return Err(ApiError::BadRequest("regex goes with until=text".into()));
    }
    if !matches!(until, Until::Quiet(_)) && req.quiet_ms.is_some() {
        return Err(ApiError::BadRequest("quiet_ms goes with until=quiet".into()));
    }
    let r = resolve(&st, caller, &target_or_self(req.target)?)?;
    let term = terminal_of(&st, &r)?;
    let handle = r.handle.to_string();
    let deadline = tokio::time::Instant::now() + timeout;
    let mut changes = term.changes();
    let timed_out = || {
        ApiError::from(ControlError::TimedOut(format!("{handle}: nothing matched within {} ms", timeout.as_millis())))
    };
    loop {
        changes.mark_unchanged();
        match &until {
            Until::Exit => {
                if let Some(code) = term.exit_code() {
                    return Ok(Json(json!({"handle": handle, "until": "exit", "exit_code": code})));
                }
            }
            Until::Text(re) => {
                if let Some(line) = term.screen_rows().into_iter().find(|l| re.is_match(l)) {
                    return Ok(Json(json!({"handle": handle, "until": "text", "line": line})));
                }
            }
            Until::Quiet(quiet) => {
                let since = term.last_output().elapsed();
                if since >= *quiet {
                    return Ok(Json(json!({"handle": handle, "until": "quiet"})));
                }
                // Output only moves the deadline later: sleep to the earliest possible end.
                let wake = tokio::time::Instant::now() + (*quiet - since);
                if wake > deadline {
                    tokio::time::sleep_until(deadline).await;
                    return Err(timed_out());
                }
                tokio::time::sleep_until(wake).await;
                continue;
            }
        }
        match tokio::time::timeout_at(deadline, changes.changed()).await {
            Ok(Ok(())) => {}
            // The terminal went away: its final state was checked above; check once more.
            Ok(Err(_)) => {
                if let (Until::Exit, Some(code)) = (&until, term.exit_code()) {
                    return Ok(Json(json!({"handle": handle, "until": "exit", "exit_code": code})));
                }
                tokio::time::sleep_until(deadline).await;
                return Err(timed_out());
            }
            Err(_) => return Err(timed_out()),
        }
    }
}

// ---- ports

/// Body of `POST /api/control/ports`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PortsReq {
    #[serde(default)]
    target: Option<String>,
}

/// `POST /api/control/ports` → the terminal's listening ports (protocol §7 rows).
pub async fn ports(
    State(st): State<AppState>,
    Extension(caller): Extension<Caller>,
    JsonBody(req): JsonBody<PortsReq>,
) -> Result<Json<Value>, ApiError> {
    let r = resolve(&st, caller, &target_or_self(req.target)?)?;
    let term = terminal_of(&st, &r)?;
    let rows = scan(&st, &term).await?;
    Ok(Json(json!({"handle": r.handle.to_string(), "ports": rows})))
}

async fn scan(st: &AppState, term: &Terminal) -> Result<Vec<PortJson>, ApiError> {
    let root = Root { pid: term.pid(), tree: !term.reaped() };
    Ok(st.ports.scan(root).await?.iter().map(PortJson::from).collect())
}

// ---- split and ensure

/// Body of `POST /api/control/split`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SplitReq {
    #[serde(default)]
    near: Option<String>,
    #[serde(default)]
    side: Option<String>,
    #[serde(default)]
    cwd: Option<String>,
    #[serde(default)]
    command: Option<Vec<String>>,
}

/// Body of `POST /api/control/ensure`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnsureReq {
    cwd: String,
    command: Vec<String>,
    #[serde(default)]
    near: Option<String>,
    #[serde(default)]
    side: Option<String>,
}

fn parse_side(s: Option<String>) -> Result<Option<&'static str>, ApiError> {
    match s.as_deref() {
        None => Ok(None),
        Some("right") => Ok(Some("right")),
        Some("down") => Ok(Some("down")),
        Some(o) => Err(ApiError::BadRequest(format!("side must be right or down, got {o:?}"))),
    }
}

/// The pane a new pane goes beside: `near`, else the caller, else the focused pane.
fn near_pane(st: &AppState, caller: Caller, near: Option<String>) -> Result<Resolved, ApiError> {
    let target = match near {
        Some(n) => Target::parse(&n)?,
        None if caller.0.is_some() => Target::Caller,
        None => Target::Focused,
    };
    resolve(st, caller, &target)
}

/// The UI id of `h` in a window's report, or `refused`.
fn ui_id(state: &WindowState, h: Handle) -> Result<String, ControlError> {
    state
        .by_handle(h)
        .map(|p| p.id.clone())
        .ok_or_else(|| ControlError::Refused(format!("{h} is not on the window's wall")))
}

/// `POST /api/control/split` → `{"handle":"tN"}`: starts the terminal, then asks the window to
/// place it; refused → the terminal is deleted.
pub async fn split(
    State(st): State<AppState>,
    Extension(caller): Extension<Caller>,
    JsonBody(req): JsonBody<SplitReq>,
) -> Result<Json<Value>, ApiError> {
    let side = parse_side(req.side)?;
    let balance = req.near.is_none() && side.is_none();
    let near = near_pane(&st, caller, req.near)?;
    let handle = split_beside(&st, &near, side, balance, req.cwd, req.command).await?;
    Ok(Json(json!({"handle": handle.to_string()})))
}

/// Starts the terminal, then asks the window to place it beside `near` on `side`, or, with
/// `balance` (the caller named neither a pane nor a side), where the wall has most room
/// (protocol §9.6).
async fn split_beside(
    st: &AppState,
    near: &Resolved,
    side: Option<&'static str>,
    balance: bool,
    cwd: Option<String>,
    command: Option<Vec<String>>,
) -> Result<Handle, ApiError> {
    let near_term = near.terminal.and_then(|t| st.terminals.get(t));
    let cwd = cwd.or_else(|| near_term.as_ref().map(|t| t.current_cwd()));
    // Half the near terminal along the split, so the program starts near its final size.
    let (cols, rows) = near_term.as_ref().map(|t| t.info()).map_or((80, 24), |i| match side {
        Some("down") => (i.cols, (i.rows / 2).max(2)),
        _ => ((i.cols / 2).max(10), i.rows),
    });
    let spec = validate_create(CreateTerminal { cols: cols.into(), rows: rows.into(), cwd, command, pane: None })?;
    let term = spawn_terminal(st, spec, None).await?;
    let tid = term.id();
    let handle = Handle::of_terminal(tid);
    let near_handle = near.handle;
    let result = st
        .control
        .windows
        .relay(
            |s| {
                Ok(json!({
                    "verb": "split",
                    "near": ui_id(s, near_handle)?,
                    "side": side,
                    "balance": balance,
                    "terminal": tid.to_string(),
                }))
            },
            |s| s.panes.iter().find(|p| p.terminal == Some(tid) || p.handle == Some(handle)).map(|p| p.id.clone()),
        )
        .await;
    if let Err(e) = result {
        // Nothing half-done: the terminal no window shows is hung up and forgotten.
        st.terminals.delete(tid);
        return Err(e.into());
    }
    Ok(handle)
}

/// `POST /api/control/ensure` → `{"handle","reused"}`: the live pane started with exactly
/// this command in this directory, else a new one beside `near`.
pub async fn ensure(
    State(st): State<AppState>,
    Extension(caller): Extension<Caller>,
    JsonBody(req): JsonBody<EnsureReq>,
) -> Result<Json<Value>, ApiError> {
    let side = parse_side(req.side)?;
    let (handle, reused) = ensure_pane(&st, caller, req.near.map(Nearby::Target), side, req.cwd, req.command).await?;
    Ok(Json(json!({"handle": handle.to_string(), "reused": reused})))
}

/// The pane a new pane goes beside: a target as given (resolved only when a pane must be
/// started), or a pane already resolved.
pub(super) enum Nearby {
    /// As given by the caller.
    Target(String),
    /// Already resolved.
    Pane(Resolved),
}

/// Ensure semantics (`ph ensure`, `ph up`): the live pane started with exactly `command` in
/// `cwd` (shown by the window, when one reported) and `true`, else a new pane beside `near`
/// and `false`.
pub(super) async fn ensure_pane(
    st: &AppState,
    caller: Caller,
    near: Option<Nearby>,
    side: Option<&'static str>,
    cwd: String,
    command: Vec<String>,
) -> Result<(Handle, bool), ApiError> {
    // Validate exactly as a split would, before looking for a match.
    let spec = validate_create(CreateTerminal {
        cols: 80,
        rows: 24,
        cwd: Some(cwd.clone()),
        command: Some(command.clone()),
        pane: None,
    })?;
    let want_cwd = std::fs::canonicalize(&spec.cwd).unwrap_or_else(|_| spec.cwd.clone());
    let (state, _) = st.control.windows.state();
    for term in st.terminals.list() {
        let info = term.info();
        if !info.alive || info.command != command {
            continue;
        }
        let have = std::fs::canonicalize(PathBuf::from(&info.cwd)).unwrap_or_else(|_| PathBuf::from(&info.cwd));
        if have != want_cwd {
            continue;
        }
        let Some(handle) = st.control.pane_of(term.id()) else { continue };
        // A window that reported must show the pane; with no report at all, the sidecar's word stands.
        if !state.panes.is_empty() && state.by_handle(handle).is_none() {
            continue;
        }
        return Ok((handle, true));
    }
    let balance = near.is_none() && side.is_none();
    let near = match near {
        Some(Nearby::Pane(r)) => r,
        Some(Nearby::Target(t)) => near_pane(st, caller, Some(t))?,
        None => near_pane(st, caller, None)?,
    };
    let handle = split_beside(st, &near, side, balance, Some(cwd), Some(command)).await?;
    Ok((handle, false))
}

// ---- open

/// Body of `POST /api/control/open`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpenReq {
    pub(super) target: String,
    #[serde(default)]
    pub(super) mode: Option<String>,
    #[serde(default)]
    pub(super) near: Option<String>,
}

/// Longest URL `open` takes, in bytes.
const MAX_URL_BYTES: usize = 8192;

/// Turns what the user typed into an http(s) URL (DESIGN §4: bare loopback means http, other
/// bare hosts https; other schemes refused).
pub fn normalize_url(s: &str) -> Result<url::Url, ApiError> {
    if s.len() > MAX_URL_BYTES {
        return Err(ApiError::BadRequest(format!("the URL is over {MAX_URL_BYTES} bytes")));
    }
    let with_scheme = if s.contains("://") {
        s.to_string()
    } else {
        let host = s.split(['/', '?', '#']).next().unwrap_or("");
        let name = host.rsplit_once(':').map_or(host, |(h, _)| h).to_ascii_lowercase();
        let loopback = name == "localhost" || name == "127.0.0.1" || name == "[::1]" || name.ends_with(".localhost");
        format!("{}://{s}", if loopback { "http" } else { "https" })
    };
    let u = url::Url::parse(&with_scheme).map_err(|e| ApiError::BadRequest(format!("{s:?} is not a URL: {e}")))?;
    if u.scheme() != "http" && u.scheme() != "https" {
        return Err(ApiError::BadRequest(format!("only http and https can be opened, not {}:", u.scheme())));
    }
    if u.host().is_none() {
        return Err(ApiError::BadRequest(format!("{s:?} has no host")));
    }
    crate::address::check_host(&u).map_err(ApiError::BlockedAddress)?;
    Ok(u)
}

/// `POST /api/control/open` → `{"handle","url","mode","reused"}` (protocol §9.6).
pub async fn open(
    State(st): State<AppState>,
    Extension(caller): Extension<Caller>,
    JsonBody(req): JsonBody<OpenReq>,
) -> Result<Json<Value>, ApiError> {
    let mode = match req.mode.as_deref() {
        None => None,
        Some(m @ ("iframe" | "screencast" | "popout" | "system")) => Some(m.to_string()),
        Some(m) => {
            return Err(ApiError::BadRequest(format!("mode must be iframe, screencast, popout or system, got {m:?}")))
        }
    };
    let t = req.target.trim();
    let url = open_target_url(&st, caller, t).await?;
    open_url(&st, caller, url, mode, req.near.map(Nearby::Target)).await.map(Json)
}

/// The URL `open`'s target names: `:PORT`, a pane (a browser's URL, a terminal's one
/// listening port), or a URL as typed.
async fn open_target_url(st: &AppState, caller: Caller, t: &str) -> Result<url::Url, ApiError> {
    let url = if let Some(port) = t.strip_prefix(':') {
        match port.parse::<u16>() {
            Ok(p) if p > 0 && !port.starts_with('+') => normalize_url(&format!("http://localhost:{p}/"))?,
            _ => return Err(ApiError::BadRequest(format!("{t:?} is not a port"))),
        }
    } else if let Ok(target) = Target::parse(t).and_then(|t| match t {
        Target::Handle(_) | Target::Caller | Target::Focused | Target::Title(_) => Ok(t),
        _ => Err(ControlError::BadRequest(String::new())),
    }) {
        let r = resolve(&st, caller, &target)?;
        match r.kind {
            PaneKind::Browser => {
                let url = r.ui.as_ref().and_then(|p| p.url.clone()).unwrap_or_default();
                normalize_url(&url)?
            }
            PaneKind::Terminal => {
                let term = terminal_of(&st, &r)?;
                let rows = scan(&st, &term).await?;
                let ports: BTreeSet<u16> = rows.iter().map(|p| p.port()).collect();
                match ports.len() {
                    0 => return Err(ControlError::NoPort(r.handle.to_string()).into()),
                    1 => normalize_url(&format!("http://localhost:{}/", ports.first().copied().unwrap_or(0)))?,
                    _ => {
                        return Err(ControlError::SeveralPorts {
                            handle: r.handle.to_string(),
                            candidates: ports.iter().map(|p| json!({"port": p})).collect(),
                        }
                        .into())
                    }
                }
            }
        }
    } else {
        normalize_url(t)?
    };
    Ok(url)
}

/// Opens `url` in `mode` (default: iframe for http, screencast for https) beside `near`, or
/// reuses the pane already showing its origin in that mode → the `open` answer.
pub(super) async fn open_url(
    st: &AppState,
    caller: Caller,
    url: url::Url,
    mode: Option<String>,
    near: Option<Nearby>,
) -> Result<Value, ApiError> {
    let resolve_near = |near: Option<Nearby>| match near {
        Some(Nearby::Pane(r)) => Ok(r),
        Some(Nearby::Target(t)) => near_pane(st, caller, Some(t)),
        None => near_pane(st, caller, None),
    };
    let https = url.scheme() == "https";
    let mode = mode.unwrap_or_else(|| if https { "screencast".into() } else { "iframe".into() });
    if mode == "iframe" && https {
        return Err(ControlError::Refused(format!(
            "{url} is https, which an embedded pane cannot show; use --mode screencast"
        ))
        .into());
    }
    let url_s = url.to_string();
    if mode == "system" {
        let near = resolve_near(near).ok().map(|r| r.handle);
        st.control
            .windows
            .relay(
                |s| {
                    let near = near.and_then(|h| s.by_handle(h)).map(|p| p.id.clone());
                    Ok(json!({"verb": "open", "near": near, "url": url_s, "mode": "system", "handle": null}))
                },
                |_| None,
            )
            .await?;
        return Ok(json!({"handle": null, "url": url_s, "mode": "system", "reused": false}));
    }
    // Reuse the pane already showing this origin in this mode (a popped-out one counts as a screencast).
    let (state, _) = st.control.windows.state();
    let same_mode = |m: &str| m == mode || (mode != "iframe" && m != "iframe");
    if let Some(p) = state.panes.iter().find(|p| {
        p.kind == PaneKind::Browser
            && p.mode.as_deref().is_some_and(same_mode)
            && p.url.as_deref().and_then(|u| url::Url::parse(u).ok()).is_some_and(|u| u.origin() == url.origin())
    }) {
        let handle = p.handle.ok_or_else(|| ControlError::Refused("that pane has no handle yet".into()))?;
        if p.minimized {
            relay_pane(st, handle, "restore").await?;
        }
        if let Some(c) = caller.0 {
            st.control.note_opened(c, handle);
        }
        return Ok(json!({"handle": handle.to_string(), "url": p.url, "mode": p.mode, "reused": true}));
    }
    // No pane named: the window places it where the wall has most room (protocol §9.6).
    let balance = near.is_none();
    let near = resolve_near(near)?.handle;
    let handle = st.control.windows.new_browser_handle();
    st.control
        .windows
        .relay(
            |s| {
                Ok(json!({
                    "verb": "open",
                    "near": ui_id(s, near)?,
                    "balance": balance,
                    "url": url_s,
                    "mode": mode,
                    "handle": handle.to_string(),
                }))
            },
            |s| s.by_handle(handle).map(|p| p.id.clone()),
        )
        .await?;
    if let Some(c) = caller.0 {
        st.control.note_opened(c, handle);
    }
    Ok(json!({"handle": handle.to_string(), "url": url_s, "mode": mode, "reused": false}))
}

// ---- focus, zoom, minimize, restore, close

/// Body of `POST /api/control/pane`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PaneReq {
    #[serde(default)]
    target: Option<String>,
    action: String,
}

async fn relay_pane(st: &AppState, h: Handle, action: &'static str) -> Result<(), ApiError> {
    st.control
        .windows
        .relay(
            |s| Ok(json!({"verb": "pane", "pane": ui_id(s, h)?, "action": action})),
            |s| match action {
                "close" => s.by_handle(h).is_none().then(String::new),
                _ => None,
            },
        )
        .await?;
    Ok(())
}

/// `POST /api/control/pane` → `{"handle"}` once the window applied the action.
pub async fn pane(
    State(st): State<AppState>,
    Extension(caller): Extension<Caller>,
    JsonBody(req): JsonBody<PaneReq>,
) -> Result<Json<Value>, ApiError> {
    let action = match req.action.as_str() {
        "focus" => "focus",
        "zoom" => "zoom",
        "unzoom" => "unzoom",
        "minimize" => "minimize",
        "restore" => "restore",
        "close" => "close",
        a => {
            return Err(ApiError::BadRequest(format!(
                "action must be focus, zoom, unzoom, minimize, restore or close, got {a:?}"
            )))
        }
    };
    let r = resolve(&st, caller, &target_or_self(req.target)?)?;
    if r.ui.is_none() {
        // A terminal no window shows: only the window can act on panes.
        let (_, window) = st.control.windows.state();
        if !window {
            return Err(ControlError::NoWindow.into());
        }
        return Err(ControlError::Refused(format!("{} is not on the window's wall", r.handle)).into());
    }
    relay_pane(&st, r.handle, action).await?;
    Ok(Json(json!({"handle": r.handle.to_string()})))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_normalized_as_the_url_field_does() {
        let n = |s: &str| normalize_url(s).map(|u| u.to_string()).map_err(|e| e.status_and_code().1);
        assert_eq!(n("localhost:5173"), Ok("http://localhost:5173/".into()));
        assert_eq!(n("127.0.0.1:8000/x"), Ok("http://127.0.0.1:8000/x".into()));
        assert_eq!(n("example.com"), Ok("https://example.com/".into()));
        assert_eq!(n("http://localhost:1/"), Ok("http://localhost:1/".into()));
        assert_eq!(n("file:///etc/passwd"), Err("bad_request"));
        assert_eq!(n("javascript://x"), Err("bad_request"));
        assert_eq!(n("http://169.254.169.254/"), Err("blocked_address"));
    }

    #[test]
    fn regexes_are_bounded() {
        assert!(compile_regex("ok$").is_ok());
        assert_eq!(compile_regex("").unwrap_err().status_and_code().1, "bad_regex");
        assert_eq!(compile_regex("(").unwrap_err().status_and_code().1, "bad_regex");
        assert_eq!(compile_regex(&"a".repeat(MAX_REGEX_BYTES + 1)).unwrap_err().status_and_code().1, "bad_regex");
        // A small pattern whose program is huge is refused, not compiled for minutes.
        assert_eq!(compile_regex(r"\w{1000}{1000}").unwrap_err().status_and_code().1, "bad_regex");
    }
}
