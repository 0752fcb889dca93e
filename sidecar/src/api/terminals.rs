//! `/api/terminals` handlers: create, list, get, delete.

use std::path::PathBuf;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::Json;
use serde::{Deserialize, Serialize};

use super::body::JsonBody;
use super::error::ApiError;
use super::state::AppState;
use crate::constants::{MAX_COMMAND_ITEMS, MAX_COMMAND_ITEM_BYTES, MAX_TERMINAL_CELLS, MIN_TERMINAL_CELLS};
use crate::control::Handle;
use crate::pty::{self, ShellInfo, SpawnSpec, Terminal, TerminalId, TerminalInfo};
use std::sync::Arc;

/// Body of `POST /api/terminals` as received; validated by [`validate_create`].
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateTerminal {
    /// Width in columns, 1..=1000.
    pub cols: i64,
    /// Height in lines, 1..=1000.
    pub rows: i64,
    /// Absolute path of an existing directory; default: the user's home.
    #[serde(default)]
    pub cwd: Option<String>,
    /// `argv`: 1..=256 items, each ≤ 4096 bytes, no NUL; default: the login shell.
    #[serde(default)]
    pub command: Option<Vec<String>>,
    /// The terminal pane this terminal is restarted in (`tN`, a handle already given out);
    /// default: a new pane whose handle is the new terminal's id (protocol §4, §9.2).
    #[serde(default)]
    pub pane: Option<String>,
}

/// `Terminal` as sent on the wire (protocol §4).
#[derive(Debug, Serialize)]
pub struct TerminalJson {
    id: String,
    pid: i32,
    cwd: String,
    command: Vec<String>,
    cols: u16,
    rows: u16,
    alive: bool,
    exit_code: Option<i32>,
    busy: bool,
    foreground: Option<String>,
    survivors: Vec<SurvivorJson>,
    pane: Option<String>,
    cwd_now: Option<String>,
    shell: ShellJson,
}

/// `shell` of a `Terminal` and the `shell` socket message (protocol §5.3): what the shell's
/// integration reported.
#[derive(Debug, Serialize)]
pub struct ShellJson {
    cwd: Option<String>,
    integration: bool,
    running: Option<RunningJson>,
    last_exit: Option<i32>,
}

/// A command running now: its command line when the shell sent it, and for how long, in ms.
#[derive(Debug, Serialize)]
pub struct RunningJson {
    command: Option<String>,
    ms: u64,
}

impl ShellJson {
    /// The wire form of `s`.
    pub fn new(s: &ShellInfo) -> Self {
        ShellJson {
            cwd: s.cwd.clone(),
            integration: s.integration,
            running: s
                .running
                .as_ref()
                .map(|r| RunningJson { command: r.command.clone(), ms: r.started.elapsed().as_millis() as u64 }),
            last_exit: s.last_exit,
        }
    }
}

/// One entry of `survivors` (protocol §4): a process still running in an exited terminal's session.
#[derive(Debug, Serialize)]
pub struct SurvivorJson {
    pid: i32,
    name: String,
}

impl TerminalJson {
    /// The wire form of `i`; `pane` is the handle of the pane whose current terminal it is.
    fn new(i: TerminalInfo, st: &AppState) -> Self {
        TerminalJson {
            pane: st.control.pane_of(i.id).map(|h| h.to_string()),
            id: i.id.to_string(),
            pid: i.pid,
            cwd: i.cwd,
            command: i.command,
            cols: i.cols,
            rows: i.rows,
            alive: i.alive,
            exit_code: i.exit_code,
            busy: i.busy,
            foreground: i.foreground,
            survivors: i.survivors.into_iter().map(|s| SurvivorJson { pid: s.pid, name: s.name }).collect(),
            cwd_now: i.cwd_now,
            shell: ShellJson::new(&i.shell),
        }
    }
}

/// Checks that a column/row count is in 1..=1000 and narrows it.
pub fn cells(name: &str, v: i64) -> Result<u16, ApiError> {
    let range = i64::from(MIN_TERMINAL_CELLS)..=i64::from(MAX_TERMINAL_CELLS);
    if range.contains(&v) {
        Ok(v as u16)
    } else {
        Err(ApiError::BadRequest(format!("{name} must be in {MIN_TERMINAL_CELLS}..={MAX_TERMINAL_CELLS}, got {v}")))
    }
}

/// Rebuilds a create request field by field into a [`SpawnSpec`], or the first violation.
pub fn validate_create(req: CreateTerminal) -> Result<SpawnSpec, ApiError> {
    let cols = cells("cols", req.cols)?;
    let rows = cells("rows", req.rows)?;
    let command = match req.command {
        None => None,
        Some(argv) => {
            if argv.is_empty() || argv.len() > MAX_COMMAND_ITEMS {
                return Err(ApiError::BadRequest(format!(
                    "command must have 1..={MAX_COMMAND_ITEMS} items, got {}",
                    argv.len()
                )));
            }
            for (i, a) in argv.iter().enumerate() {
                if a.len() > MAX_COMMAND_ITEM_BYTES {
                    return Err(ApiError::BadRequest(format!(
                        "command[{i}] is {} bytes, at most {MAX_COMMAND_ITEM_BYTES} allowed",
                        a.len()
                    )));
                }
                if a.contains('\0') {
                    return Err(ApiError::BadRequest(format!("command[{i}] contains NUL")));
                }
            }
            if argv[0].is_empty() {
                return Err(ApiError::BadRequest("command[0] is empty".into()));
            }
            Some(argv)
        }
    };
    let cwd = match req.cwd {
        None => PathBuf::from(pty::home_dir()),
        Some(c) => {
            let p = PathBuf::from(&c);
            if c.contains('\0') || !p.is_absolute() || !p.is_dir() {
                return Err(ApiError::BadCwd(format!("cwd {c:?} is not an existing absolute directory")));
            }
            p
        }
    };
    Ok(SpawnSpec { cols, rows, cwd, command, shell: Default::default() })
}

/// The most paths one `resolve` request may ask about.
const MAX_RESOLVE_PATHS: usize = 64;
/// The longest path `resolve` accepts, in bytes (Linux's `PATH_MAX`).
const MAX_RESOLVE_PATH_BYTES: usize = 4096;

/// `POST /api/terminals/{id}/resolve` body: paths seen in the terminal's output.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResolveRequest {
    /// 1..=64 paths, each 1..=4096 bytes without NUL; relative ones are read from the
    /// terminal's working directory now, `~/…` from the user's home.
    pub paths: Vec<String>,
}

/// One answer of `resolve`: the canonical absolute path and whether it is a file or a
/// directory, or `null`s when nothing is there (or it cannot be read).
#[derive(Debug, Serialize)]
pub struct Resolved {
    path: String,
    resolved: Option<String>,
    kind: Option<&'static str>,
}

/// `POST /api/terminals/{id}/resolve` → `200 {"paths":[Resolved…]}` in request order
/// (protocol §4): which of the paths printed in a terminal exist, for its `path:line` links.
pub async fn resolve(
    State(st): State<AppState>,
    Path(id): Path<String>,
    JsonBody(req): JsonBody<ResolveRequest>,
) -> Result<impl IntoResponse, ApiError> {
    let term = lookup(&st, &id)?;
    if req.paths.is_empty() || req.paths.len() > MAX_RESOLVE_PATHS {
        return Err(ApiError::BadRequest(format!("paths: 1..={MAX_RESOLVE_PATHS} items, got {}", req.paths.len())));
    }
    for (i, p) in req.paths.iter().enumerate() {
        if p.is_empty() || p.len() > MAX_RESOLVE_PATH_BYTES || p.contains('\0') {
            return Err(ApiError::BadRequest(format!("paths[{i}]: 1..={MAX_RESOLVE_PATH_BYTES} bytes without NUL")));
        }
    }
    let cwd = PathBuf::from(term.current_cwd());
    let out = tokio::task::spawn_blocking(move || {
        req.paths
            .into_iter()
            .map(|p| {
                // `~/…` is the user's home, as a shell would read it.
                let full = match p.strip_prefix("~/") {
                    Some(rest) => PathBuf::from(pty::home_dir()).join(rest),
                    None => cwd.join(&p),
                };
                let found = std::fs::canonicalize(&full).ok().and_then(|c| {
                    let meta = std::fs::metadata(&c).ok()?;
                    let kind = if meta.is_dir() {
                        "dir"
                    } else if meta.is_file() {
                        "file"
                    } else {
                        return None;
                    };
                    Some((c.to_string_lossy().into_owned(), kind))
                });
                Resolved { path: p, resolved: found.as_ref().map(|f| f.0.clone()), kind: found.map(|f| f.1) }
            })
            .collect::<Vec<_>>()
    })
    .await
    .map_err(|e| ApiError::Internal(format!("resolve: {e}")))?;
    Ok(Json(serde_json::json!({"paths": out})))
}

/// Parses a path id; an id that is not canonical is simply not found.
pub fn lookup(st: &AppState, id: &str) -> Result<std::sync::Arc<Terminal>, ApiError> {
    let id: TerminalId = id.parse().map_err(|_| ApiError::NotFound("terminal"))?;
    st.terminals.get(id).ok_or(ApiError::NotFound("terminal"))
}

/// `POST /api/terminals` → `201 {"id":"tN"}`.
pub async fn create(
    State(st): State<AppState>,
    JsonBody(req): JsonBody<CreateTerminal>,
) -> Result<impl IntoResponse, ApiError> {
    let pane = match req.pane.as_deref() {
        None => None,
        Some(p) => {
            let h: Handle =
                p.parse().map_err(|_| ApiError::BadRequest(format!("pane {p:?} is not a terminal pane handle")))?;
            if !st.control.known_terminal_pane(h) {
                return Err(ApiError::BadRequest(format!("pane {p} is not a terminal pane of this sidecar")));
            }
            Some(h)
        }
    };
    let spec = validate_create(req)?;
    let term = spawn_terminal(&st, spec, pane).await?;
    Ok((StatusCode::CREATED, Json(serde_json::json!({"id": term.id().to_string()}))))
}

/// Spawns a terminal for pane `pane` (default: a new pane named after the terminal) with the
/// control variables of protocol §9.1 in its environment.
/// The shell and the shell-integration switch come from the configuration in force.
pub async fn spawn_terminal(
    st: &AppState,
    mut spec: SpawnSpec,
    pane: Option<Handle>,
) -> Result<Arc<Terminal>, ApiError> {
    // A remote daemon's panes get an empty PORTHOLE_URL (it has no TCP listener; protocol §11.2).
    let base = if st.config.remote_daemon { String::new() } else { st.config.base_url() };
    let (reg, control) = (st.terminals.clone(), st.control.clone());
    let shell = st.settings.current().config.shell.clone();
    spec.shell = pty::ShellChoice { program: Some(shell.program.0).filter(|p| !p.is_empty()), args: shell.args.0 };
    let integration = shell.integration;
    let env_failed = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let failed = env_failed.clone();
    let term = tokio::task::spawn_blocking(move || {
        reg.spawn(spec, |id| {
            let pane = pane.unwrap_or(Handle::of_terminal(id));
            let mut env = control.terminal_env(pane, id, &base).unwrap_or_else(|e| {
                tracing::error!("no pane token: {e}");
                failed.store(true, std::sync::atomic::Ordering::SeqCst);
                Vec::new()
            });
            if !integration {
                // Read by Porthole's shell scripts (pty/shell.rs).
                env.push((pty::INTEGRATION_VAR.to_string(), "0".to_string()));
            }
            env
        })
    })
    .await
    .map_err(|e| ApiError::Internal(format!("spawn task failed: {e}")))??;
    if env_failed.load(std::sync::atomic::Ordering::SeqCst) {
        // Never run a pane without its variables: it would look like one outside Porthole.
        st.terminals.delete(term.id());
        return Err(ApiError::Internal("the OS CSPRNG failed to make a pane token".into()));
    }
    Ok(term)
}

/// `GET /api/terminals` → `200 {"terminals":[Terminal…]}` in creation order.
pub async fn list(State(st): State<AppState>) -> Json<serde_json::Value> {
    let terms: Vec<TerminalJson> = st.terminals.list().iter().map(|t| TerminalJson::new(t.info(), &st)).collect();
    Json(serde_json::json!({ "terminals": terms }))
}

/// `GET /api/terminals/{id}` → `200 Terminal` or 404.
pub async fn get_one(State(st): State<AppState>, Path(id): Path<String>) -> Result<Json<TerminalJson>, ApiError> {
    Ok(Json(TerminalJson::new(lookup(&st, &id)?.info(), &st)))
}

/// `DELETE /api/terminals/{id}` → 204, or 404 if unknown.
pub async fn delete(State(st): State<AppState>, Path(id): Path<String>) -> Result<StatusCode, ApiError> {
    let id: TerminalId = id.parse().map_err(|_| ApiError::NotFound("terminal"))?;
    if st.terminals.delete(id) {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::NotFound("terminal"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(cols: i64, rows: i64, cwd: Option<&str>, command: Option<Vec<&str>>) -> CreateTerminal {
        CreateTerminal {
            cols,
            rows,
            cwd: cwd.map(Into::into),
            command: command.map(|c| c.into_iter().map(Into::into).collect()),
            pane: None,
        }
    }

    fn code(r: Result<SpawnSpec, ApiError>) -> &'static str {
        match r {
            Ok(_) => "ok",
            Err(e) => e.status_and_code().1,
        }
    }

    #[test]
    fn create_validation_table() {
        let long = "x".repeat(MAX_COMMAND_ITEM_BYTES + 1);
        let many = vec!["a"; MAX_COMMAND_ITEMS + 1];
        let cases: Vec<(CreateTerminal, &str)> = vec![
            (req(80, 24, None, None), "ok"),
            (req(1, 1, Some("/"), Some(vec!["sh"])), "ok"),
            (req(1000, 1000, Some("/tmp"), None), "ok"),
            (req(0, 24, None, None), "bad_request"),
            (req(80, 1001, None, None), "bad_request"),
            (req(-1, 24, None, None), "bad_request"),
            (req(80, 24, None, Some(vec![])), "bad_request"),
            (req(80, 24, None, Some(vec![""])), "bad_request"),
            (req(80, 24, None, Some(vec!["a\0b"])), "bad_request"),
            (req(80, 24, None, Some(vec![long.as_str()])), "bad_request"),
            (req(80, 24, None, Some(many)), "bad_request"),
            (req(80, 24, Some("/definitely/not/here"), None), "bad_cwd"),
            (req(80, 24, Some("relative"), None), "bad_cwd"),
            (req(80, 24, Some("/etc/passwd"), None), "bad_cwd"),
        ];
        for (r, want) in cases {
            let dbg = format!("{r:?}");
            assert_eq!(code(validate_create(r)), want, "{dbg}");
        }
    }

    #[test]
    fn create_body_refuses_unknown_fields() {
        let bad: Result<CreateTerminal, _> = serde_json::from_str(r#"{"cols":1,"rows":1,"x":1}"#);
        assert!(bad.is_err());
        let bad: Result<CreateTerminal, _> = serde_json::from_str(r#"{"cols":1.5,"rows":1}"#);
        assert!(bad.is_err());
        let ok: Result<CreateTerminal, _> = serde_json::from_str(r#"{"cols":1,"rows":1,"cwd":null}"#);
        assert!(ok.is_ok());
    }
}
