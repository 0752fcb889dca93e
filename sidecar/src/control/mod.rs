//! The control plane (protocol §9, §10): pane handles and tokens, the attached windows and
//! what they report, target resolution, key names, the terminal verbs (`terminal.rs`), the
//! layout verbs' decisions and relaying them (`layout.rs`), and what may be opened
//! (`url.rs`, `mode.rs`). `api/control.rs` only parses requests and renders answers.
//!
//! Architecture Invariant: this module owns pane handles, pane tokens and the windows'
//! reports; it knows nothing of HTTP (the `api` module parses requests and calls it), and
//! it never changes the layout itself: the window that answers does (DESIGN §11).

mod caller;
mod drivers;
mod error;
mod handle;
mod handoff;
mod keys;
mod layout;
mod mode;
mod process;
mod report;
mod target_url;
mod terminal;
mod tokens;
mod windows;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

pub use caller::Caller;
pub use drivers::Drivers;
pub use error::{Candidates, ControlError};
pub use handle::{loopback_port, Handle, PaneKind, Target, MAX_TARGET_BYTES};
pub use handoff::{Answer, Handoffs, Shown as ShownHandoff, DEFAULT_HANDOFF_S, MAX_HANDOFF_S, MAX_REASON_CHARS};
pub use keys::{key_bytes, CursorKeys, MAX_KEY_BYTES};
pub use layout::{split_size, Nearby, NewWorkspace, Opened, WORKSPACE_REMOTE_TOTAL};
pub use mode::{OpenMode, PaneAction, PaneMode, Side};
pub use process::{owns_connection, place, Place, TMUX_ASK_MS};
pub use report::{BadUiMessage, UiPane, WindowState, MAX_UI_MESSAGE_BYTES};
pub use target_url::{localhost_url, normalize_url, UrlError, MAX_URL_BYTES};
pub use terminal::{
    compile_regex, send, terminal_title, wait, wait_ms, Input, Until, Waited, DEFAULT_WAIT_MS, MAX_READ_SCROLLBACK,
    MAX_REGEX_BYTES, MAX_SEND_KEYS, MAX_SEND_TEXT_BYTES, MAX_WAIT_MS,
};
pub use tokens::{PaneCaller, TokenCheck, Tokens};
pub use windows::{Reply, Windows, RELAY_TOTAL, WINDOW_GRACE};

use crate::pty::TerminalId;

/// The control plane's state. One per sidecar, shared behind an `Arc`.
pub struct Control {
    /// Pane tokens.
    pub tokens: Tokens,
    /// Attached windows and their reports.
    pub windows: Windows,
    /// The terminal each terminal pane runs now (a restart moves a handle to a new terminal).
    pane_terminals: Mutex<HashMap<Handle, TerminalId>>,
    /// Each terminal's own browser pane and each browser pane's driver (issue 26).
    pub drivers: Drivers,
    /// Browser panes handed to the human (issue 26).
    pub handoffs: Handoffs,
    /// The directory holding `ph` (the sidecar's own), prepended to every terminal's `PATH`.
    bin_dir: Option<PathBuf>,
}

impl Control {
    /// A control plane whose terminals find `ph` in `bin_dir`.
    pub fn new(bin_dir: Option<PathBuf>) -> Arc<Self> {
        Arc::new(Control {
            tokens: Tokens::default(),
            windows: Windows::default(),
            pane_terminals: Mutex::new(HashMap::new()),
            drivers: Drivers::default(),
            handoffs: Handoffs::default(),
            bin_dir,
        })
    }

    fn panes(&self) -> MutexGuard<'_, HashMap<Handle, TerminalId>> {
        self.pane_terminals.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The directory holding `ph`, if known.
    pub fn bin_dir(&self) -> Option<&Path> {
        self.bin_dir.as_deref()
    }

    /// The control variables for terminal `terminal` of pane `pane` (protocol §9.1): mints
    /// its pane token and records that the pane runs this terminal now. `PATH` is the
    /// sidecar's own with the `ph` directory first.
    pub fn terminal_env(
        &self,
        pane: Handle,
        terminal: TerminalId,
        base_url: &str,
    ) -> Result<Vec<(String, String)>, getrandom::Error> {
        let token = self.tokens.mint(pane, terminal)?;
        self.panes().insert(pane, terminal);
        let mut env = vec![
            ("PORTHOLE_PANE".to_string(), pane.to_string()),
            ("PORTHOLE_URL".to_string(), base_url.to_string()),
            ("PORTHOLE_TOKEN".to_string(), token),
        ];
        if let Some(dir) = &self.bin_dir {
            let old = std::env::var("PATH").unwrap_or_default();
            let dir = dir.to_string_lossy();
            let path = if old.is_empty() { dir.to_string() } else { format!("{dir}:{old}") };
            env.push(("PATH".to_string(), path));
            env.push(("PORTHOLE_BIN_DIR".to_string(), dir.to_string()));
        }
        Ok(env)
    }

    /// Remembers that `caller` opened (or was given, reused) browser pane `browser`
    /// ([`Drivers::opened`]).
    pub fn note_opened(&self, caller: Handle, browser: Handle) {
        self.drivers.opened(caller, browser);
    }

    /// The browser pane `ph browser` acts on when no pane is named (DESIGN §12, issue 26):
    /// the calling terminal's own (the one it opened last, or was handed) while the wall
    /// still shows it; a terminal with none is refused `no_browser_pane` with the panes it
    /// could name, never given another terminal's. With no caller (the app's token): the
    /// only browser pane, else `ambiguous_target` or `unknown_target`.
    pub fn default_browser(&self, caller: Option<Handle>) -> Result<Resolved, ControlError> {
        let (state, _) = self.windows.state();
        let Some(caller) = caller else {
            let hits: Vec<&UiPane> =
                state.panes.iter().filter(|p| p.kind == PaneKind::Browser && p.handle.is_some()).collect();
            return one(hits, "the browser pane", self);
        };
        if let Some(p) = self.drivers.own(caller).and_then(|h| state.by_handle(h)) {
            return Ok(Resolved::from_ui(p, self));
        }
        Err(ControlError::NoBrowserPane {
            caller: caller.to_string(),
            candidates: state
                .panes
                .iter()
                .filter(|p| p.kind == PaneKind::Browser)
                .filter_map(|p| p.handle)
                .map(|h| {
                    serde_json::json!({"handle": h.to_string(),
                                       "driver": self.drivers.driver(h).map(|d| d.to_string())})
                })
                .collect(),
        })
    }

    /// The terminal pane `pane` runs now, if it ran one in this sidecar.
    pub fn terminal_of(&self, pane: Handle) -> Option<TerminalId> {
        self.panes().get(&pane).copied()
    }

    /// The pane handle whose current terminal is `terminal`.
    pub fn pane_of(&self, terminal: TerminalId) -> Option<Handle> {
        self.panes().iter().find(|(_, t)| **t == terminal).map(|(h, _)| *h)
    }

    /// True if and only if `pane` is a terminal handle this sidecar has given out (so a
    /// restart may reuse it).
    pub fn known_terminal_pane(&self, pane: Handle) -> bool {
        pane.kind == PaneKind::Terminal && self.panes().contains_key(&pane)
    }

    /// Resolves `target` against the answering window's report (protocol §9.2). `caller` is
    /// the pane token's pane, if any. Terminal handles also resolve with no report at all
    /// (no window ever attached), from the panes this sidecar started.
    pub fn resolve(&self, target: &Target, caller: Option<Handle>) -> Result<Resolved, ControlError> {
        let (state, _) = self.windows.state();
        let by_handle = |h: Handle, name: &str| -> Result<Resolved, ControlError> {
            if let Some(p) = state.by_handle(h) {
                return Ok(Resolved::from_ui(p, self));
            }
            match (h.kind, self.terminal_of(h)) {
                (PaneKind::Terminal, Some(t)) => {
                    Ok(Resolved { handle: h, kind: PaneKind::Terminal, terminal: Some(t), ui: None })
                }
                _ => Err(ControlError::UnknownTarget(name.to_string())),
            }
        };
        match target {
            Target::Handle(h) => by_handle(*h, &h.to_string()),
            Target::Caller => by_handle(caller.ok_or(ControlError::NoCaller)?, "self"),
            Target::Focused => {
                let f = state.focused.as_deref();
                let p = state.panes.iter().find(|p| Some(p.id.as_str()) == f && p.handle.is_some());
                p.map(|p| Resolved::from_ui(p, self)).ok_or_else(|| ControlError::UnknownTarget("focused".into()))
            }
            Target::Port(port) => {
                let hits: Vec<&UiPane> = state
                    .panes
                    .iter()
                    .filter(|p| p.handle.is_some() && p.url.as_deref().and_then(loopback_port) == Some(*port))
                    .collect();
                one(hits, &format!(":{port}"), self)
            }
            Target::Title(text) => {
                let needle = text.to_lowercase();
                let hits: Vec<&UiPane> = state
                    .panes
                    .iter()
                    .filter(|p| p.handle.is_some() && p.title.to_lowercase().contains(&needle))
                    .collect();
                one(hits, &format!("title:{text}"), self)
            }
        }
    }
}

fn one(hits: Vec<&UiPane>, name: &str, c: &Control) -> Result<Resolved, ControlError> {
    match hits.as_slice() {
        [] => Err(ControlError::UnknownTarget(name.to_string())),
        [p] => Ok(Resolved::from_ui(p, c)),
        many => Err(ControlError::Ambiguous {
            target: name.to_string(),
            candidates: many
                .iter()
                .map(|p| serde_json::json!({"handle": p.handle.map(|h| h.to_string()), "title": p.title, "url": p.url}))
                .collect(),
        }),
    }
}

/// A target resolved to one pane.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolved {
    /// The pane's handle.
    pub handle: Handle,
    /// Terminal or browser.
    pub kind: PaneKind,
    /// The terminal it runs now (terminal panes).
    pub terminal: Option<TerminalId>,
    /// The answering window's report of it, when it has one.
    pub ui: Option<UiPane>,
}

impl Resolved {
    fn from_ui(p: &UiPane, c: &Control) -> Self {
        let handle = p.handle.expect("only panes with a handle are resolved");
        // The sidecar knows a restarted pane's newest terminal before the window reports it.
        let terminal = c.terminal_of(handle).or(p.terminal);
        Resolved { handle, kind: p.kind, terminal, ui: Some(p.clone()) }
    }

    /// The sidecar browser id (`bN`) behind a browser pane `ph browser` can drive: a
    /// screencast or popped-out pane the window shows and reports a browser for.
    ///
    /// Errors: [`NotDrivable`], saying why (a terminal pane, not shown, an iframe pane, no
    /// browser yet).
    pub fn browser_id(&self) -> Result<&str, NotDrivable> {
        let h = self.handle;
        if self.kind != PaneKind::Browser {
            return Err(NotDrivable::Terminal(h));
        }
        let ui = self.ui.as_ref().ok_or(NotDrivable::NotShown(h))?;
        if ui.mode == Some(PaneMode::Iframe) {
            return Err(NotDrivable::Iframe { handle: h, url: ui.url.clone() });
        }
        ui.browser.as_deref().ok_or(NotDrivable::NoBrowserYet(h))
    }

    /// The terminal, or `not_a_terminal` for a browser pane.
    pub fn terminal(&self) -> Result<TerminalId, ControlError> {
        match (self.kind, self.terminal) {
            (PaneKind::Terminal, Some(t)) => Ok(t),
            (PaneKind::Terminal, None) => Err(ControlError::Refused(format!("{} has no terminal yet", self.handle))),
            (PaneKind::Browser, _) => Err(ControlError::NotATerminal(self.handle.to_string())),
        }
    }
}

/// Why `ph browser` cannot drive a pane. The API answers it as `not_automatable` (protocol
/// §9.7), with this text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotDrivable {
    /// Occurs when the pane is a terminal pane.
    Terminal(Handle),
    /// Occurs when the answering window does not show the pane.
    NotShown(Handle),
    /// Occurs when the pane is framed through the proxy: no Chromium of the sidecar's.
    Iframe {
        /// The pane.
        handle: Handle,
        /// The URL it shows, to name in the advice.
        url: Option<String>,
    },
    /// Occurs when the window has not reported the pane's browser yet.
    NoBrowserYet(Handle),
}

impl std::fmt::Display for NotDrivable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotDrivable::Terminal(h) => write!(f, "{h} is a terminal pane, not a browser pane"),
            NotDrivable::NotShown(h) => write!(f, "{h} is not on the window's wall"),
            NotDrivable::Iframe { handle, url } => write!(
                f,
                "{handle} is an iframe pane, which has no Chromium to drive; open it as a screencast: 'ph open {} --mode screencast'",
                url.as_deref().unwrap_or("URL")
            ),
            NotDrivable::NoBrowserYet(h) => write!(f, "{h} has no browser yet; try again in a moment"),
        }
    }
}

impl std::error::Error for NotDrivable {}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(c: &Control, panes: serde_json::Value, focused: &str) {
        let (id, _rx) = c.windows.attach();
        let msg = serde_json::json!({"type":"state","active":true,"focused":focused,"panes":panes});
        c.windows.on_message(id, &msg.to_string()).unwrap();
    }

    fn pane(id: &str, handle: &str, kind: &str, title: &str, url: Option<&str>) -> serde_json::Value {
        let terminal = if kind == "terminal" { Some(handle) } else { None };
        serde_json::json!({"id":id,"handle":handle,"kind":kind,"terminal":terminal,"title":title,"url":url,"mode":url.map(|_| "iframe"),"minimized":false})
    }

    fn code(r: Result<Resolved, ControlError>) -> String {
        match r {
            Ok(r) => r.handle.to_string(),
            Err(e) => e.status_and_code().1.to_string(),
        }
    }

    #[test]
    fn targets_resolve_against_the_answering_windows_report() {
        let c = Control::new(None);
        report(
            &c,
            serde_json::json!([
                pane("p1", "t1", "terminal", "bash", None),
                pane("p2", "t2", "terminal", "npm run dev", None),
                pane("p3", "b1", "browser", "Vite App", Some("http://localhost:5173/")),
                pane("p4", "b2", "browser", "Docs", Some("http://127.0.0.1:8000/a")),
                pane("p5", "b3", "browser", "Docs too", Some("http://example.com:8000/")),
            ]),
            "p2",
        );
        let t1: Handle = "t1".parse().unwrap();
        let r = |s: &str, caller: Option<Handle>| code(c.resolve(&Target::parse(s).unwrap(), caller));
        assert_eq!(r("t1", None), "t1");
        assert_eq!(r("self", Some(t1)), "t1");
        assert_eq!(r("self", None), "no_caller");
        assert_eq!(r("focused", None), "t2");
        assert_eq!(r(":5173", None), "b1");
        assert_eq!(r(":8000", None), "b2", "example.com is not loopback");
        assert_eq!(r(":9999", None), "unknown_target");
        assert_eq!(r("title:VITE", None), "b1");
        assert_eq!(r("title:docs", None), "ambiguous_target");
        assert_eq!(r("b9", None), "unknown_target");
        let e = c.resolve(&Target::parse("title:docs").unwrap(), None).unwrap_err();
        assert_eq!(e.candidates().unwrap().len(), 2);
        assert!(e.to_string().contains("b2 (Docs)"), "{e}");
    }

    #[test]
    fn ph_browser_defaults_to_the_callers_own_pane_and_never_to_another_terminals() {
        let c = Control::new(None);
        let t1: Handle = "t1".parse().unwrap();
        let t2: Handle = "t2".parse().unwrap();
        report(&c, serde_json::json!([pane("p1", "t1", "terminal", "bash", None)]), "p1");
        assert_eq!(code(c.default_browser(Some(t1))), "no_browser_pane");
        assert_eq!(code(c.default_browser(None)), "unknown_target");
        report(
            &c,
            serde_json::json!([
                pane("p1", "t1", "terminal", "bash", None),
                pane("p2", "b1", "browser", "A", Some("http://localhost:1/")),
            ]),
            "p1",
        );
        c.note_opened(t2, "b1".parse().unwrap());
        let e = c.default_browser(Some(t1)).unwrap_err();
        assert_eq!(e.status_and_code().1, "no_browser_pane", "the only pane is t2's, not t1's");
        assert!(e.to_string().contains("--pane (b1, driven by t2)"), "{e}");
        assert_eq!(code(c.default_browser(None)), "b1", "the app: the only one");
        assert_eq!(code(c.default_browser(Some(t2))), "b1", "t2's own");
        c.note_opened(t1, "b9".parse().unwrap());
        assert_eq!(code(c.default_browser(Some(t1))), "no_browser_pane", "a pane no longer shown does not count");
    }

    #[test]
    fn terminal_handles_resolve_without_any_window_and_follow_restarts() {
        let c = Control::new(Some("/opt/ph".into()));
        let h: Handle = "t1".parse().unwrap();
        let env = c.terminal_env(h, "t1".parse().unwrap(), "http://127.0.0.1:1/").unwrap();
        let get = |k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone()).unwrap();
        assert_eq!(get("PORTHOLE_PANE"), "t1");
        assert_eq!(get("PORTHOLE_TOKEN").len(), 64);
        assert!(get("PATH").starts_with("/opt/ph:"));
        let r = c.resolve(&Target::Handle(h), None).unwrap();
        assert_eq!(r.terminal.unwrap().to_string(), "t1");
        c.terminal_env(h, "t7".parse().unwrap(), "http://127.0.0.1:1/").unwrap();
        let r = c.resolve(&Target::Caller, Some(h)).unwrap();
        assert_eq!(r.terminal.unwrap().to_string(), "t7", "the pane's newest terminal");
        assert!(c.known_terminal_pane(h));
        assert!(!c.known_terminal_pane("t2".parse().unwrap()));
    }
}
