//! `/api/control/*` (protocol §9): the verbs `ph` uses, as thin HTTP handlers. Each
//! rebuilds its request field by field into typed, bounded values, calls the `control`
//! module (which decides and relays), and renders its answer as JSON.

use std::collections::BTreeSet;

use axum::extract::{Query, State};
use axum::{Extension, Json};
use serde::Deserialize;
use serde_json::{json, Value};

use super::body::JsonBody;
use super::error::ApiError;
use super::panes::{ensure_pane, nearby, open_parsed, scan, split_beside, terminal_of};
use super::ports::PortJson;
use super::state::AppState;
use crate::control::{
    terminal_title, wait_ms, Caller, Handle, Input, OpenMode, PaneAction, PaneKind, PaneMode, Resolved, Side, Target,
    UiPane, Until, Waited, DEFAULT_WAIT_MS, MAX_READ_SCROLLBACK,
};
use crate::ports::Root;
use crate::pty::TerminalId;

fn target_or_self(t: Option<String>) -> Result<Target, ApiError> {
    Ok(Target::parse(t.as_deref().unwrap_or("self"))?)
}

fn resolve(st: &AppState, caller: Caller, target: &Target) -> Result<Resolved, ApiError> {
    Ok(st.control.resolve(target, caller.0)?)
}

/// A `side` field parsed.
fn side(s: Option<String>) -> Result<Option<Side>, ApiError> {
    Ok(s.as_deref().map(Side::parse).transpose()?)
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
        "mode": ui.and_then(|p| p.mode).map(PaneMode::as_str),
        "minimized": ui.is_some_and(|p| p.minimized),
        "workspace": ui.and_then(|p| p.workspace),
        "focused": focused,
        "shown": true,
        // The terminal driving a browser pane (issue 26), if any.
        "driver": st.control.drivers.driver(handle).map(|d| d.to_string()),
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
    let input = Input::new(req.text.unwrap_or_default(), req.keys)?;
    let r = resolve(&st, caller, &target_or_self(req.target)?)?;
    let term = terminal_of(&st, &r)?;
    let n = crate::control::send(&term, r.handle, input).await?;
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

/// `POST /api/control/wait` → what was waited for, or `408 timed_out`.
pub async fn wait(
    State(st): State<AppState>,
    Extension(caller): Extension<Caller>,
    JsonBody(req): JsonBody<WaitReq>,
) -> Result<Json<Value>, ApiError> {
    let timeout = wait_ms("timeout_ms", req.timeout_ms, DEFAULT_WAIT_MS)?;
    let until = Until::parse(&req.until, req.quiet_ms, req.regex.as_deref())?;
    let r = resolve(&st, caller, &target_or_self(req.target)?)?;
    let term = terminal_of(&st, &r)?;
    let handle = r.handle.to_string();
    Ok(Json(match crate::control::wait(&term, r.handle, &until, timeout).await? {
        Waited::Exit(code) => json!({"handle": handle, "until": "exit", "exit_code": code}),
        Waited::Text(line) => json!({"handle": handle, "until": "text", "line": line}),
        Waited::Quiet => json!({"handle": handle, "until": "quiet"}),
    }))
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

/// `POST /api/control/split` → `{"handle":"tN"}`: starts the terminal, then asks the window to
/// place it; refused → the terminal is deleted.
pub async fn split(
    State(st): State<AppState>,
    Extension(caller): Extension<Caller>,
    JsonBody(req): JsonBody<SplitReq>,
) -> Result<Json<Value>, ApiError> {
    let side = side(req.side)?;
    let near = nearby(req.near)?;
    let balance = near.is_none() && side.is_none();
    let near = st.control.near_pane(caller, near)?;
    let handle = split_beside(&st, &near, side, balance, req.cwd, req.command).await?;
    Ok(Json(json!({"handle": handle.to_string()})))
}

/// `POST /api/control/ensure` → `{"handle","reused"}`: the live pane started with exactly
/// this command in this directory, else a new one beside `near`.
pub async fn ensure(
    State(st): State<AppState>,
    Extension(caller): Extension<Caller>,
    JsonBody(req): JsonBody<EnsureReq>,
) -> Result<Json<Value>, ApiError> {
    let side = side(req.side)?;
    let near = nearby(req.near)?;
    let (handle, reused) = ensure_pane(&st, caller, near, side, req.cwd, req.command).await?;
    Ok(Json(json!({"handle": handle.to_string(), "reused": reused})))
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

/// `POST /api/control/open` → `{"handle","url","mode","reused"}` (protocol §9.6).
pub async fn open(
    State(st): State<AppState>,
    Extension(caller): Extension<Caller>,
    JsonBody(req): JsonBody<OpenReq>,
) -> Result<Json<Value>, ApiError> {
    let mode = req.mode.as_deref().map(OpenMode::parse).transpose()?;
    open_parsed(&st, caller, &req.target, mode, req.near, true, false).await.map(Json)
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

/// `POST /api/control/pane` → `{"handle"}` once the window applied the action.
pub async fn pane(
    State(st): State<AppState>,
    Extension(caller): Extension<Caller>,
    JsonBody(req): JsonBody<PaneReq>,
) -> Result<Json<Value>, ApiError> {
    let action = PaneAction::parse(&req.action)?;
    let r = resolve(&st, caller, &target_or_self(req.target)?)?;
    st.control.act_on_pane(&r, action).await?;
    Ok(Json(json!({"handle": r.handle.to_string()})))
}

// ---- workspace new

/// The longest workspace name `ph workspace new --name` takes, in characters.
pub const MAX_WORKSPACE_NAME_CHARS: usize = 64;

/// Body of `POST /api/control/workspace`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkspaceReq {
    #[serde(default)]
    host: Option<String>,
    #[serde(default)]
    name: Option<String>,
}

/// `POST /api/control/workspace` → `{"workspace":N|null,"name":…,"host":…,"pane":"tN"|null}`:
/// a new workspace in the answering window, remote on `host` (connected as the window's
/// dialog connects; its failure is the link's code, nothing made), else local (protocol §9.6).
pub async fn workspace(
    State(st): State<AppState>,
    JsonBody(req): JsonBody<WorkspaceReq>,
) -> Result<Json<Value>, ApiError> {
    let host = match req.host {
        Some(h) => Some(
            crate::remote::SshHost::parse(&h)
                .map_err(|m| crate::control::ControlError::Remote { status: 400, code: "bad_host", message: m })?
                .spec,
        ),
        None => None,
    };
    let name = match req.name {
        Some(n) => {
            let n = n.trim().to_string();
            if n.is_empty() || n.chars().count() > MAX_WORKSPACE_NAME_CHARS || n.chars().any(char::is_control) {
                return Err(ApiError::BadRequest(format!(
                    "name must be 1..={MAX_WORKSPACE_NAME_CHARS} characters, none of them control characters"
                )));
            }
            Some(n)
        }
        None => None,
    };
    let made = st.control.new_workspace(host.as_deref(), name.as_deref()).await?;
    Ok(Json(json!({
        "workspace": made.number,
        "name": name.or_else(|| host.clone()),
        "host": host,
        "pane": made.pane.map(|h| h.to_string()),
    })))
}
