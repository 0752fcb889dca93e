//! What a window may say on the UI channel (protocol §10) and its parsing: each report of
//! its panes is rebuilt field by field into bounded, typed values ([`UiPane`],
//! [`WindowState`]) before the windows' state sees it. A bad message is refused whole.

use std::fmt;

use serde::Deserialize;

use super::handle::{Handle, PaneKind};
use super::mode::PaneMode;
use crate::pty::TerminalId;

/// Most panes one window may report.
pub const MAX_UI_PANES: usize = 256;
/// Longest string field in a report, in bytes.
pub const MAX_UI_STRING_BYTES: usize = 8 * 1024;
/// Largest inbound UI-channel message, in bytes.
pub const MAX_UI_MESSAGE_BYTES: usize = 256 * 1024;

/// One pane as a window reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct UiPane {
    /// The UI's own id for the pane (`p3`); only meaningful to that window.
    pub id: String,
    /// The pane's handle; `None` for a terminal pane whose first terminal does not exist yet.
    pub handle: Option<Handle>,
    /// Terminal or browser.
    pub kind: PaneKind,
    /// The terminal it shows (terminal panes).
    pub terminal: Option<TerminalId>,
    /// Its title as the header shows it.
    pub title: String,
    /// Browser panes: the URL shown.
    pub url: Option<String>,
    /// Browser panes: how it renders.
    pub mode: Option<PaneMode>,
    /// On the baseboard.
    pub minimized: bool,
    /// The number of the workspace the pane is in (its place in the window's strip, from 1;
    /// DESIGN §14); `None` from a window that reports none.
    pub workspace: Option<u16>,
    /// Screencast and popped-out panes: the sidecar's browser id (`b7`, protocol §8), once
    /// the pane has one.
    pub browser: Option<String>,
}

/// A window's report: its panes in creation order and the focused one.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WindowState {
    /// Every pane, creation order.
    pub panes: Vec<UiPane>,
    /// The UI id of the focused pane.
    pub focused: Option<String>,
}

impl WindowState {
    /// The pane with this handle.
    pub fn by_handle(&self, h: Handle) -> Option<&UiPane> {
        self.panes.iter().find(|p| p.handle == Some(h))
    }
}

/// Why a window's message was refused; the socket is then closed (1008) with this reason,
/// and nothing of the message was applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BadUiMessage {
    /// Occurs when the message is over [`MAX_UI_MESSAGE_BYTES`].
    TooLarge,
    /// Occurs when the text is not JSON (the parser's reason).
    Json(String),
    /// Occurs when a known message type has the wrong shape (the parser's reason).
    Shape(String),
    /// Occurs when a report lists more than [`MAX_UI_PANES`] panes.
    TooManyPanes,
    /// Occurs when a field is out of bounds or malformed (which, and why).
    Field(String),
}

impl fmt::Display for BadUiMessage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BadUiMessage::TooLarge => write!(f, "message over {MAX_UI_MESSAGE_BYTES} bytes"),
            BadUiMessage::Json(e) => write!(f, "bad JSON: {e}"),
            BadUiMessage::Shape(e) => write!(f, "bad message: {e}"),
            BadUiMessage::TooManyPanes => write!(f, "more than {MAX_UI_PANES} panes"),
            BadUiMessage::Field(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for BadUiMessage {}

/// A window's message, parsed and bounded.
#[derive(Debug)]
pub(super) enum Inbound {
    /// Its report; `active`: it also says the window was used.
    State { active: bool, state: WindowState },
    /// The window was focused or used.
    Active,
    /// The answer to request `id`.
    Reply { id: u64, ok: bool, pane: Option<String>, message: Option<String>, code: Option<String> },
}

/// Parses one text message; `None` for a type this sidecar does not know (ignored, protocol
/// §10).
pub(super) fn parse_message(text: &str) -> Result<Option<Inbound>, BadUiMessage> {
    if text.len() > MAX_UI_MESSAGE_BYTES {
        return Err(BadUiMessage::TooLarge);
    }
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| BadUiMessage::Json(e.to_string()))?;
    let known = matches!(v.get("type").and_then(|t| t.as_str()), Some("state" | "active" | "reply"));
    if !known {
        return Ok(None);
    }
    let msg: RawInbound = serde_json::from_value(v).map_err(|e| BadUiMessage::Shape(e.to_string()))?;
    Ok(Some(match msg {
        RawInbound::State { active, focused, panes } => {
            if panes.len() > MAX_UI_PANES {
                return Err(BadUiMessage::TooManyPanes);
            }
            let panes =
                panes.into_iter().map(parse_pane).collect::<Result<Vec<_>, _>>().map_err(BadUiMessage::Field)?;
            if let Some(f) = &focused {
                bounded("focused", f).map_err(BadUiMessage::Field)?;
            }
            Inbound::State { active, state: WindowState { panes, focused } }
        }
        RawInbound::Active => Inbound::Active,
        RawInbound::Reply { id, ok, pane, message, code } => Inbound::Reply { id, ok, pane, message, code },
    }))
}

/// A message from a window as it arrives (protocol §10).
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum RawInbound {
    State {
        #[serde(default)]
        active: bool,
        focused: Option<String>,
        panes: Vec<RawPane>,
    },
    Active,
    Reply {
        id: u64,
        ok: bool,
        #[serde(default)]
        pane: Option<String>,
        #[serde(default)]
        message: Option<String>,
        #[serde(default)]
        code: Option<String>,
    },
}

#[derive(Debug, Deserialize)]
struct RawPane {
    id: String,
    handle: Option<String>,
    kind: String,
    terminal: Option<String>,
    #[serde(default)]
    title: String,
    url: Option<String>,
    mode: Option<String>,
    #[serde(default)]
    minimized: bool,
    #[serde(default)]
    workspace: Option<u16>,
    #[serde(default)]
    browser: Option<String>,
}

/// The highest workspace number a window may report.
const MAX_WORKSPACE: u16 = 1000;

/// True if and only if `s` is a sidecar browser id: `^b[0-9]{1,18}$`.
fn is_browser_id(s: &str) -> bool {
    let digits = s.strip_prefix('b').unwrap_or("");
    !digits.is_empty() && digits.len() <= 18 && digits.bytes().all(|b| b.is_ascii_digit())
}

fn bounded(name: &str, s: &str) -> Result<(), String> {
    if s.len() > MAX_UI_STRING_BYTES {
        return Err(format!("{name} is over {MAX_UI_STRING_BYTES} bytes"));
    }
    Ok(())
}

fn parse_pane(p: RawPane) -> Result<UiPane, String> {
    for (n, v) in [("id", Some(&p.id)), ("title", Some(&p.title)), ("url", p.url.as_ref()), ("mode", p.mode.as_ref())] {
        if let Some(v) = v {
            bounded(n, v)?;
        }
    }
    if p.id.is_empty() {
        return Err("a pane id is empty".into());
    }
    let kind = match p.kind.as_str() {
        "terminal" => PaneKind::Terminal,
        "browser" => PaneKind::Browser,
        k => return Err(format!("unknown pane kind {k:?}")),
    };
    let handle = match p.handle {
        None => None,
        Some(h) => {
            let h: Handle = h.parse().map_err(|_| format!("bad handle {h:?}"))?;
            if h.kind != kind {
                return Err(format!("handle {h} does not name a {} pane", p.kind));
            }
            Some(h)
        }
    };
    let terminal = match p.terminal {
        None => None,
        Some(t) => Some(t.parse::<TerminalId>().map_err(|_| format!("bad terminal id {t:?}"))?),
    };
    let mode = match &p.mode {
        None => None,
        Some(m) => Some(PaneMode::parse(m).ok_or_else(|| format!("unknown mode {m:?}"))?),
    };
    if p.workspace.is_some_and(|w| w == 0 || w > MAX_WORKSPACE) {
        return Err(format!("workspace number out of 1..={MAX_WORKSPACE}"));
    }
    if let Some(b) = &p.browser {
        if kind != PaneKind::Browser || !is_browser_id(b) {
            return Err(format!("bad browser id {:?}", b.chars().take(32).collect::<String>()));
        }
    }
    Ok(UiPane {
        id: p.id,
        handle,
        kind,
        terminal,
        title: p.title,
        url: p.url,
        mode,
        minimized: p.minimized,
        workspace: p.workspace,
        browser: p.browser,
    })
}
