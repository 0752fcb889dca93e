//! Project files over HTTP (protocol §9.8): `ph up` starts a layout with ensure semantics,
//! the window reads a terminal's project (its context menu) and grants trust (its prompt).
//!
//! Trust is granted only on `/api/project/trust`, outside `/api/control/`: pane tokens
//! cannot reach it (auth guard), so an agent in a pane can never trust a file itself.

use std::path::PathBuf;
use std::time::Duration;

use axum::extract::{Query, State};
use axum::{Extension, Json};
use serde::Deserialize;
use serde_json::{json, Value};

use super::body::JsonBody;
use super::error::ApiError;
use super::panes::{ensure_pane, opened_json};
use super::state::AppState;
use super::terminals::lookup;
use crate::config::{builtin_viewports, merge_presets, RenderMode, Viewport};
use crate::control::{normalize_url, Caller, ControlError, Nearby, OpenMode, PaneMode, Side, Target};
use crate::project::{Project, ProjectError};

/// How long `up` waits, in all, for its browsers' ports to listen before opening them anyway.
pub const PORT_WAIT: Duration = Duration::from_secs(20);
const PORT_POLL: Duration = Duration::from_millis(200);
/// Longest layout name accepted in a request, in bytes.
const MAX_LAYOUT_BYTES: usize = 64;

/// Body of `POST /api/control/up`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UpReq {
    #[serde(default)]
    layout: Option<String>,
    #[serde(default)]
    near: Option<String>,
    #[serde(default)]
    cwd: Option<String>,
}

/// The message that makes the answering window ask the human to trust `p` (protocol §10
/// `project_trust`): the file, its hash, and what each layout would start.
fn trust_prompt(p: &Project, layout: Option<&str>) -> Value {
    json!({
        "type": "project_trust",
        "file": p.file,
        "sha256": p.sha256,
        "layout": layout,
        "layouts": p.plans(),
    })
}

/// `POST /api/control/up` → `{"file","layout","panes":[…],"browsers":[…]}`: starts the named
/// layout (default: `default`, else the first) of the project file nearest `cwd` (default: the
/// cwd of the calling pane, or of `near`). Terminal panes already running a layout command in its cwd are
/// reused; the rest are started. Untrusted → `409 untrusted_project`, nothing started, and
/// the window shows the trust prompt.
pub async fn up(
    State(st): State<AppState>,
    Extension(caller): Extension<Caller>,
    JsonBody(req): JsonBody<UpReq>,
) -> Result<Json<Value>, ApiError> {
    if req.layout.as_ref().is_some_and(|l| l.is_empty() || l.len() > MAX_LAYOUT_BYTES) {
        return Err(ApiError::BadRequest(format!("layout must be 1..={MAX_LAYOUT_BYTES} bytes")));
    }
    let target = match req.near {
        Some(n) => Target::parse(&n)?,
        None if caller.0.is_some() => Target::Caller,
        None => Target::Focused,
    };
    let anchor = st.control.resolve(&target, caller.0)?;
    let term =
        st.terminals.get(anchor.terminal()?).ok_or_else(|| ControlError::UnknownTarget(anchor.handle.to_string()))?;
    // `ph` sends its own directory: a `cd` just before it is not reported by the shell yet.
    let cwd = match req.cwd {
        Some(c) if c.len() > 4096 || !PathBuf::from(&c).is_absolute() || !PathBuf::from(&c).is_dir() => {
            return Err(ApiError::BadCwd(format!("cwd {c:?} is not an existing absolute directory")))
        }
        Some(c) => PathBuf::from(c),
        None => PathBuf::from(term.current_cwd()),
    };
    let project = st.projects.for_cwd(&cwd)?;
    let layout = project.layout(req.layout.as_deref())?;
    if !st.projects.is_trusted(&project) {
        let asked = st.control.windows.tell(&trust_prompt(&project, Some(&layout.name.0)));
        return Err(
            ProjectError::Untrusted { file: project.file.clone(), sha256: project.sha256.clone(), asked }.into()
        );
    }
    let plan = project.plan(layout);
    let default_mode = match st.settings.current().config.browser.default_mode {
        RenderMode::Iframe => PaneMode::Iframe,
        RenderMode::Screencast => PaneMode::Screencast,
    };
    let mut near = anchor;
    let mut panes = Vec::new();
    for p in &plan.panes {
        let cwd = p.cwd.to_string_lossy().into_owned();
        let (handle, reused) = {
            let side = p.split.map(Side::parse).transpose()?;
            ensure_pane(&st, caller, Some(Nearby::Pane(near.clone())), side, cwd.clone(), p.command.clone()).await?
        };
        panes.push(json!({"handle": handle.to_string(), "command": p.command, "cwd": cwd, "reused": reused}));
        near = st.control.resolve(&Target::Handle(handle), caller.0)?;
    }
    let deadline = tokio::time::Instant::now() + PORT_WAIT;
    let mut browsers = Vec::new();
    for b in &plan.browsers {
        let listening = wait_listening(b.port, deadline).await;
        // The plan spells its modes as the protocol does; they are parsed here, once.
        let mode = match b.mode {
            None => default_mode,
            Some(m) => PaneMode::parse(m).ok_or_else(|| ApiError::Internal(format!("plan mode {m:?}")))?,
        };
        let mode = OpenMode::Pane(mode);
        let near = Some(Nearby::Pane(near.clone()));
        let mut v =
            opened_json(st.control.open_url(caller, &normalize_url(&b.url)?, Some(mode), near, true, false).await?);
        v["listening"] = listening.into();
        browsers.push(v);
    }
    Ok(Json(json!({"file": project.file, "layout": plan.layout, "panes": panes, "browsers": browsers})))
}

/// Waits until something accepts a connection on `localhost:port` or `deadline` passes.
async fn wait_listening(port: u16, deadline: tokio::time::Instant) -> bool {
    loop {
        let attempt = tokio::time::timeout_at(deadline, tokio::net::TcpStream::connect(("localhost", port))).await;
        match attempt {
            Ok(Ok(_)) => return true,
            Err(_) => return false,
            Ok(Err(_)) => {}
        }
        if tokio::time::Instant::now() + PORT_POLL > deadline {
            return false;
        }
        tokio::time::sleep(PORT_POLL).await;
    }
}

/// Query of `GET /api/project`: one of `terminal` and `port`.
#[derive(Debug, Deserialize)]
pub struct ProjectQuery {
    #[serde(default)]
    terminal: Option<String>,
    #[serde(default)]
    port: Option<u16>,
}

/// The directory whose project applies: terminal `terminal`'s current one, or that of the
/// first live terminal whose processes listen on `port` (a browser pane showing a dev server
/// belongs to the project of the terminal running it). `None`: no terminal listens there.
async fn project_dir(st: &AppState, q: ProjectQuery) -> Result<Option<PathBuf>, ApiError> {
    match (q.terminal, q.port) {
        (Some(t), None) => Ok(Some(PathBuf::from(lookup(st, &t)?.current_cwd()))),
        (None, Some(port)) if port > 0 => {
            for term in st.terminals.list() {
                if term.exit_code().is_some() {
                    continue;
                }
                let root = crate::ports::Root { pid: term.pid(), tree: !term.reaped() };
                // A terminal whose scan fails (a process gone meanwhile) just does not match.
                if st.ports.scan(root).await.is_ok_and(|rows| rows.iter().any(|r| r.port == port)) {
                    return Ok(Some(PathBuf::from(term.current_cwd())));
                }
            }
            Ok(None)
        }
        _ => Err(ApiError::BadRequest("give one of terminal=tN and port=1..65535".into())),
    }
}

/// `GET /api/project?terminal=tN` (or `?port=N`: the terminal listening on that port) → the
/// project file nearest that terminal's cwd: `{"file": null}` when there is none, else
/// `{"file","sha256","trusted","layouts","viewports"}` (`layouts`: each layout's plan;
/// `viewports`: the presets in force for its panes, built-in then user then project). A file
/// that does not parse is `400 bad_project` with its line and column.
pub async fn get(State(st): State<AppState>, Query(q): Query<ProjectQuery>) -> Result<Json<Value>, ApiError> {
    let Some(cwd) = project_dir(&st, q).await? else { return Ok(Json(json!({"file": null}))) };
    let project = match st.projects.for_cwd(&cwd) {
        Ok(p) => p,
        Err(ProjectError::NotFound(_)) => return Ok(Json(json!({"file": null}))),
        Err(e) => return Err(e.into()),
    };
    let user: Vec<Viewport> = st.settings.current().config.browser.viewports.0.clone();
    let viewports = merge_presets(&builtin_viewports(), &user, &project.parsed.viewports.0);
    Ok(Json(json!({
        "file": project.file,
        "sha256": project.sha256,
        "trusted": st.projects.is_trusted(&project),
        "layouts": project.plans(),
        "viewports": viewports,
    })))
}

/// Body of `POST /api/project/trust`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrustReq {
    file: String,
    sha256: String,
}

/// `POST /api/project/trust` `{"file","sha256"}` → `{"file","sha256","trusted":true}`: the
/// human trusts this version of the file (as the prompt showed it). `409 project_changed`
/// when the file's bytes no longer hash to `sha256`. Never reachable with a pane token.
pub async fn trust(
    State(st): State<AppState>,
    Extension(caller): Extension<Caller>,
    JsonBody(req): JsonBody<TrustReq>,
) -> Result<Json<Value>, ApiError> {
    if caller.0.is_some() {
        // The auth guard already keeps pane tokens off this route; say so twice.
        return Err(ApiError::Unauthorized);
    }
    let file = PathBuf::from(&req.file);
    let named_right = file.is_absolute()
        && req.file.len() <= 4096
        && file.file_name().is_some_and(|n| n == crate::project::FILE_NAME);
    if !named_right {
        return Err(ApiError::BadRequest(format!("file must be an absolute path to a {}", crate::project::FILE_NAME)));
    }
    if req.sha256.len() != 64 || !req.sha256.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
        return Err(ApiError::BadRequest("sha256 must be 64 lowercase hex digits".into()));
    }
    let p = st.projects.grant(&file, &req.sha256)?;
    tracing::info!(file = %p.file.display(), "project file trusted");
    Ok(Json(json!({"file": p.file, "sha256": p.sha256, "trusted": true})))
}
