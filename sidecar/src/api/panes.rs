//! Starting and placing panes for the control verbs and `ph up`: the glue between starting
//! a terminal (`terminals.rs`, which needs the spawn settings) and the control plane's layout
//! decisions (`control::layout`), and reading a pane's terminal and ports. Not a handler
//! file: `control.rs`, `project.rs` and `browser_control.rs` call it.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::{json, Value};

use super::error::ApiError;
use super::ports::PortJson;
use super::state::AppState;
use super::terminals::{spawn_terminal, validate_create, CreateTerminal};
use crate::control::{
    localhost_url, normalize_url, split_size, Caller, ControlError, Handle, Nearby, OpenMode, Opened, PaneKind,
    Resolved, Side, Target,
};
use crate::ports::Root;
use crate::pty::Terminal;

/// A `near` field parsed into a target.
pub(super) fn nearby(near: Option<String>) -> Result<Option<Nearby>, ApiError> {
    Ok(near.map(|n| Target::parse(&n)).transpose()?.map(Nearby::Target))
}

/// The live terminal of a resolved pane (refusing browser panes and vanished terminals).
pub(super) fn terminal_of(st: &AppState, r: &Resolved) -> Result<Arc<Terminal>, ApiError> {
    let id = r.terminal()?;
    st.terminals.get(id).ok_or_else(|| ControlError::UnknownTarget(r.handle.to_string()).into())
}

pub(super) async fn scan(st: &AppState, term: &Terminal) -> Result<Vec<PortJson>, ApiError> {
    let root = Root { pid: term.pid(), tree: !term.reaped() };
    Ok(st.ports.scan(root).await?.iter().map(PortJson::from).collect())
}

/// Starts the terminal (half of `near`'s along the split), then has the control plane place
/// it (`Control::place_split`); nothing half-done: a terminal no window shows is hung up.
pub(super) async fn split_beside(
    st: &AppState,
    near: &Resolved,
    side: Option<Side>,
    balance: bool,
    cwd: Option<String>,
    command: Option<Vec<String>>,
) -> Result<Handle, ApiError> {
    let near_term = near.terminal.and_then(|t| st.terminals.get(t));
    let cwd = cwd.or_else(|| near_term.as_ref().map(|t| t.current_cwd()));
    let (cols, rows) = split_size(near_term.as_ref().map(|t| t.info()).as_ref(), side);
    let spec = validate_create(CreateTerminal { cols: cols.into(), rows: rows.into(), cwd, command, pane: None })?;
    let term = spawn_terminal(st, spec, None).await?;
    let tid = term.id();
    let handle = Handle::of_terminal(tid);
    if let Err(e) = st.control.place_split(near.handle, side, balance, tid, handle).await {
        st.terminals.delete(tid);
        return Err(e.into());
    }
    Ok(handle)
}

/// Ensure semantics (`ph ensure`, `ph up`): the pane `Control::find_ensured` finds and
/// `true`, else a new pane beside `near` and `false`. The command and cwd are validated
/// exactly as a split would, before looking for a match.
pub(super) async fn ensure_pane(
    st: &AppState,
    caller: Caller,
    near: Option<Nearby>,
    side: Option<Side>,
    cwd: String,
    command: Vec<String>,
) -> Result<(Handle, bool), ApiError> {
    let spec = validate_create(CreateTerminal {
        cols: 80,
        rows: 24,
        cwd: Some(cwd.clone()),
        command: Some(command.clone()),
        pane: None,
    })?;
    if let Some(handle) = st.control.find_ensured(&st.terminals.list(), &spec.cwd, &command) {
        return Ok((handle, true));
    }
    let balance = near.is_none() && side.is_none();
    let near = st.control.near_pane(caller, near)?;
    let handle = split_beside(st, &near, side, balance, Some(cwd), Some(command)).await?;
    Ok((handle, false))
}

/// `open` once its mode is parsed (also `ph browser open`, always a screencast).
pub(super) async fn open_parsed(
    st: &AppState,
    caller: Caller,
    target: &str,
    mode: Option<OpenMode>,
    near: Option<String>,
    reuse: bool,
    isolated: bool,
) -> Result<Value, ApiError> {
    let url = open_target_url(st, caller, target.trim()).await?;
    let near = nearby(near)?;
    Ok(opened_json(st.control.open_url(caller, &url, mode, near, reuse, isolated).await?))
}

/// The `open` answer.
pub(super) fn opened_json(o: Opened) -> Value {
    json!({"handle": o.handle.map(|h| h.to_string()), "url": o.url, "mode": o.mode, "reused": o.reused})
}

/// The URL `open`'s target names: `:PORT`, a pane (a browser's URL, a terminal's one
/// listening port), or a URL as typed.
pub(super) async fn open_target_url(st: &AppState, caller: Caller, t: &str) -> Result<url::Url, ApiError> {
    let url = if let Some(port) = t.strip_prefix(':') {
        match port.parse::<u16>() {
            Ok(p) if p > 0 && !port.starts_with('+') => localhost_url(p)?,
            _ => return Err(ApiError::BadRequest(format!("{t:?} is not a port"))),
        }
    } else if let Ok(target) = Target::parse(t).and_then(|t| match t {
        Target::Handle(_) | Target::Caller | Target::Focused | Target::Title(_) => Ok(t),
        _ => Err(ControlError::BadRequest(String::new())),
    }) {
        let r = st.control.resolve(&target, caller.0)?;
        match r.kind {
            PaneKind::Browser => {
                let url = r.ui.as_ref().and_then(|p| p.url.clone()).unwrap_or_default();
                normalize_url(&url)?
            }
            PaneKind::Terminal => {
                let term = terminal_of(st, &r)?;
                let rows = scan(st, &term).await?;
                let ports: BTreeSet<u16> = rows.iter().map(|p| p.port()).collect();
                match ports.len() {
                    0 => return Err(ControlError::NoPort(r.handle.to_string()).into()),
                    1 => localhost_url(ports.first().copied().unwrap_or(0))?,
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
