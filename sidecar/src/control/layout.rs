//! The layout verbs' decisions (protocol §9.6): which pane a new pane goes beside, whether
//! `open` reuses a pane or asks for a new one, which running terminal `ensure` reuses, and
//! the requests relayed to the answering window. Starting a terminal is the caller's (it
//! needs the spawn settings); everything else about placing panes is here.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use super::caller::Caller;
use super::error::ControlError;
use super::handle::{Handle, PaneKind, Target};
use super::mode::{OpenMode, PaneAction, PaneMode, Side};
use super::report::WindowState;
use super::{Control, Resolved};
use crate::pty::{Terminal, TerminalId, TerminalInfo};

/// The pane a new pane goes beside: a target as given (resolved only when a pane must be
/// started), or a pane already resolved.
#[derive(Debug, Clone)]
pub enum Nearby {
    /// As given by the caller.
    Target(Target),
    /// Already resolved.
    Pane(Resolved),
}

/// What `open` did (protocol §9.6's answer).
#[derive(Debug, Clone, PartialEq)]
pub struct Opened {
    /// The browser pane; `None` for the system browser.
    pub handle: Option<Handle>,
    /// The URL it shows (a reused pane's as its window reports it).
    pub url: Option<String>,
    /// How it renders (a reused pane's as its window reports it).
    pub mode: Option<&'static str>,
    /// True if and only if an existing pane was reused.
    pub reused: bool,
}

/// The bound on `ph workspace new --ssh`'s request: the link's own bounds (protocol §11.4 and
/// §11.6: the 10 s hello, an install's 20 s probe and 300 s copy, the hello again), and a
/// little for the window.
pub const WORKSPACE_REMOTE_TOTAL: Duration = Duration::from_secs(350);
/// How long a new local workspace's pane may take to report its terminal's handle.
const HANDLE_WAIT: Duration = Duration::from_secs(10);

/// What `ph workspace new` made (protocol §9.6's answer).
#[derive(Debug, Clone, PartialEq)]
pub struct NewWorkspace {
    /// Its number in the window's strip (from 1), when the window reports it.
    pub number: Option<u16>,
    /// Its first pane's handle; `None` for a remote pane (its terminal is the remote's).
    pub pane: Option<Handle>,
}

/// The UI id of `h` in a window's report, or `refused`.
fn ui_id(state: &WindowState, h: Handle) -> Result<String, ControlError> {
    state
        .by_handle(h)
        .map(|p| p.id.clone())
        .ok_or_else(|| ControlError::Refused(format!("{h} is not on the window's wall")))
}

/// The size a terminal split beside `near` starts at: half of it along the split (so the
/// program starts near its final size), or 80×24 beside a pane that runs no terminal.
pub fn split_size(near: Option<&TerminalInfo>, side: Option<Side>) -> (u16, u16) {
    near.map_or((80, 24), |i| match side {
        Some(Side::Down) => (i.cols, (i.rows / 2).max(2)),
        _ => ((i.cols / 2).max(10), i.rows),
    })
}

impl Control {
    /// The pane a new pane goes beside: `near`, else the caller, else the focused pane.
    ///
    /// Errors: as [`Control::resolve`].
    pub fn near_pane(&self, caller: Caller, near: Option<Nearby>) -> Result<Resolved, ControlError> {
        let target = match near {
            Some(Nearby::Pane(r)) => return Ok(r),
            Some(Nearby::Target(t)) => t,
            None if caller.0.is_some() => Target::Caller,
            None => Target::Focused,
        };
        self.resolve(&target, caller.0)
    }

    /// The live terminal pane `ensure` reuses: one started with exactly `command` in `cwd`
    /// (compared canonicalized), which the answering window shows when a window reported at
    /// all (with no report, the sidecar's word stands).
    pub fn find_ensured(&self, terminals: &[Arc<Terminal>], cwd: &Path, command: &[String]) -> Option<Handle> {
        let want = std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf());
        let (state, _) = self.windows.state();
        terminals.iter().find_map(|term| {
            let info = term.info();
            if !info.alive || info.command != command {
                return None;
            }
            let have = std::fs::canonicalize(PathBuf::from(&info.cwd)).unwrap_or_else(|_| PathBuf::from(&info.cwd));
            if have != want {
                return None;
            }
            let handle = self.pane_of(term.id())?;
            (state.panes.is_empty() || state.by_handle(handle).is_some()).then_some(handle)
        })
    }

    /// Asks the answering window to place terminal `terminal` (pane `handle`) beside `near`
    /// on `side`, or, with `balance` (the caller named neither a pane nor a side), where the
    /// wall has most room (protocol §9.6). The caller deletes the terminal on an error.
    ///
    /// Errors: as [`super::Windows::relay`]; `refused` when `near` is not on the wall.
    pub async fn place_split(
        &self,
        near: Handle,
        side: Option<Side>,
        balance: bool,
        terminal: TerminalId,
        handle: Handle,
    ) -> Result<(), ControlError> {
        self.windows
            .relay(
                |s| {
                    Ok(json!({
                        "verb": "split",
                        "near": ui_id(s, near)?,
                        "side": side.map(Side::as_str),
                        "balance": balance,
                        "terminal": terminal.to_string(),
                    }))
                },
                |s| {
                    s.panes
                        .iter()
                        .find(|p| p.terminal == Some(terminal) || p.handle == Some(handle))
                        .map(|p| p.id.clone())
                },
            )
            .await?;
        Ok(())
    }

    /// `ph workspace new`: asks the answering window for a new workspace named `name` (none:
    /// the window's default; a remote one is named after its host) with one terminal pane,
    /// on `host` (already checked as a link's host, protocol §11.4) exactly as its "New remote
    /// workspace…" dialog connects, or local. Waits for the window's outcome, bounded by
    /// [`WORKSPACE_REMOTE_TOTAL`] for a remote (the connect's own bound), else
    /// [`super::RELAY_TOTAL`]; then (local) for the pane's terminal handle.
    ///
    /// Errors: a failed connect is [`ControlError::Remote`] with the link's code (nothing is
    /// made); else as [`super::Windows::relay`].
    pub async fn new_workspace(&self, host: Option<&str>, name: Option<&str>) -> Result<NewWorkspace, ControlError> {
        let total = if host.is_some() { WORKSPACE_REMOTE_TOTAL } else { super::RELAY_TOTAL };
        let pane = self
            .windows
            .relay_within(total, |_| Ok(json!({"verb": "workspace", "host": host, "name": name})), |_| None)
            .await?;
        let remote = host.is_some();
        let found = self
            .windows
            .wait_report(if remote { Duration::ZERO } else { HANDLE_WAIT }, |s| {
                let p = s.panes.iter().find(|p| p.id == pane)?;
                (remote || p.handle.is_some()).then_some(NewWorkspace { number: p.workspace, pane: p.handle })
            })
            .await;
        match found {
            Some(w) => Ok(w),
            None if remote => Ok(NewWorkspace { number: None, pane: None }),
            None => Err(ControlError::Unverified(format!(
                "the window made the workspace, but its pane {pane} reported no terminal within {} s; check with 'ph list'",
                HANDLE_WAIT.as_secs()
            ))),
        }
    }

    /// Asks the answering window to apply `action` to pane `h`; done once it answers (a
    /// close also counts as done once a report no longer shows the pane).
    ///
    /// Errors: as [`super::Windows::relay`].
    pub async fn relay_pane(&self, h: Handle, action: PaneAction) -> Result<(), ControlError> {
        self.windows
            .relay(
                |s| Ok(json!({"verb": "pane", "pane": ui_id(s, h)?, "action": action.as_str()})),
                |s| match action {
                    PaneAction::Close => s.by_handle(h).is_none().then(String::new),
                    _ => None,
                },
            )
            .await?;
        Ok(())
    }

    /// `ph pane`: applies `action` to the resolved pane `r` through the window.
    ///
    /// Errors: `no_window` for a terminal no window shows while none is attached, `refused`
    /// when one is attached but does not show it; else as [`Control::relay_pane`].
    pub async fn act_on_pane(&self, r: &Resolved, action: PaneAction) -> Result<(), ControlError> {
        if r.ui.is_none() {
            // A terminal no window shows: only the window can act on panes.
            let (_, window) = self.windows.state();
            if !window {
                return Err(ControlError::NoWindow);
            }
            return Err(ControlError::Refused(format!("{} is not on the window's wall", r.handle)));
        }
        self.relay_pane(r.handle, action).await
    }

    /// Opens `url` in `mode` (default: [`OpenMode::default_for`]) beside `near`, or, with
    /// `reuse`, reuses the pane already showing its origin in that mode (a popped-out pane
    /// counts as a screencast, and a minimized one is restored). The caller's last-opened
    /// browser pane is noted for `ph browser`. `isolated`: a new screencast pane whose browser
    /// keeps cookies of its own (never a reused pane).
    ///
    /// Errors: `refused` for https in an iframe (which cannot show it); else as
    /// [`Control::near_pane`] and [`super::Windows::relay`].
    pub async fn open_url(
        &self,
        caller: Caller,
        url: &url::Url,
        mode: Option<OpenMode>,
        near: Option<Nearby>,
        reuse: bool,
        isolated: bool,
    ) -> Result<Opened, ControlError> {
        let reuse = reuse && !isolated;
        let mode = mode.unwrap_or_else(|| OpenMode::default_for(url));
        if mode == OpenMode::Pane(PaneMode::Iframe) && url.scheme() == "https" {
            return Err(ControlError::Refused(format!(
                "{url} is https, which an embedded pane cannot show; use --mode screencast"
            )));
        }
        let url_s = url.to_string();
        let pane_mode = match mode {
            OpenMode::System => {
                let near = self.near_pane(caller, near).ok().map(|r| r.handle);
                self.windows
                    .relay(
                        |s| {
                            let near = near.and_then(|h| s.by_handle(h)).map(|p| p.id.clone());
                            Ok(json!({"verb": "open", "near": near, "url": url_s, "mode": "system", "handle": null}))
                        },
                        |_| None,
                    )
                    .await?;
                return Ok(Opened { handle: None, url: Some(url_s), mode: Some("system"), reused: false });
            }
            OpenMode::Pane(m) => m,
        };
        let (state, _) = self.windows.state();
        let same_mode = |m: PaneMode| m == pane_mode || (m.has_chromium() && pane_mode.has_chromium());
        if let Some(p) = state.panes.iter().filter(|_| reuse).find(|p| {
            p.kind == PaneKind::Browser
                && p.mode.is_some_and(same_mode)
                && p.url.as_deref().and_then(|u| url::Url::parse(u).ok()).is_some_and(|u| u.origin() == url.origin())
        }) {
            let handle = p.handle.ok_or_else(|| ControlError::Refused("that pane has no handle yet".into()))?;
            if p.minimized {
                self.relay_pane(handle, PaneAction::Restore).await?;
            }
            if let Some(c) = caller.0 {
                self.note_opened(c, handle);
            }
            return Ok(Opened {
                handle: Some(handle),
                url: p.url.clone(),
                mode: p.mode.map(PaneMode::as_str),
                reused: true,
            });
        }
        // No pane named: the window places it where the wall has most room (protocol §9.6).
        let balance = near.is_none();
        let near = self.near_pane(caller, near)?.handle;
        let handle = self.windows.new_browser_handle();
        self.windows
            .relay(
                |s| {
                    Ok(json!({
                        "verb": "open",
                        "near": ui_id(s, near)?,
                        "balance": balance,
                        "url": url_s,
                        "mode": pane_mode.as_str(),
                        "handle": handle.to_string(),
                        "isolated": isolated,
                    }))
                },
                |s| s.by_handle(handle).map(|p| p.id.clone()),
            )
            .await?;
        if let Some(c) = caller.0 {
            self.note_opened(c, handle);
        }
        Ok(Opened { handle: Some(handle), url: Some(url_s), mode: Some(pane_mode.as_str()), reused: false })
    }
}
