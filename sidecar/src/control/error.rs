//! The control plane's refusals (protocol §9.3), each with a stable code.

use std::fmt;

/// One pane offered when a target was ambiguous, or one port when a terminal listens on
/// several; sent as the error's `candidates`.
pub type Candidates = Vec<serde_json::Value>;

/// Every way a control verb can be refused. Converted to the HTTP error shape by the API.
#[derive(Debug, Clone, PartialEq)]
pub enum ControlError {
    /// Occurs when `self` is used without a pane token. 400 `no_caller`.
    NoCaller,
    /// Occurs when a value is out of bounds or malformed. 400 `bad_request`.
    BadRequest(String),
    /// Occurs when a `text=` pattern does not compile within its bounds. 400 `bad_regex`.
    BadRegex(String),
    /// Occurs when `send` names a key that does not exist. 400 `bad_key`.
    BadKey(String),
    /// Occurs when the calling process does not run in the pane it would speak for: its
    /// connection is not its own, or it runs under a tmux server whose session is attached
    /// from no Porthole pane or from several (the message names them). 403 `wrong_pane`.
    WrongPane(String),
    /// Occurs when a pane token was revoked (its terminal ended). 401 `unauthorized`.
    Revoked,
    /// Occurs when no pane matches the target. 404 `unknown_target`.
    UnknownTarget(String),
    /// Occurs when several panes match the target. 409 `ambiguous_target`.
    Ambiguous {
        /// The target as given.
        target: String,
        /// The panes it matched.
        candidates: Candidates,
    },
    /// Occurs when a terminal verb names a browser pane. 409 `not_a_terminal`.
    NotATerminal(String),
    /// Occurs when `send` names a terminal whose program ended. 409 `exited`.
    Exited {
        /// The pane.
        handle: String,
        /// Its program's exit code.
        code: i32,
    },
    /// Occurs when `open` names a terminal that listens on no port. 409 `no_port`.
    NoPort(String),
    /// Occurs when `open` names a terminal that listens on several ports. 409 `several_ports`.
    SeveralPorts {
        /// The terminal pane.
        handle: String,
        /// Its ports, `{"port":N}` each.
        candidates: Candidates,
    },
    /// Occurs when the window cannot apply a layout request; nothing was done. 409 `refused`.
    Refused(String),
    /// Occurs when `ph browser` from a terminal with no browser pane of its own names none.
    /// 409 `no_browser_pane`, with the panes it could name.
    NoBrowserPane {
        /// The calling terminal pane.
        caller: String,
        /// The browser panes on the wall, `{"handle","title","url","driver"}` each.
        candidates: Candidates,
    },
    /// Occurs when a mutating `ph browser` verb names a pane another terminal drives
    /// (issue 26). 409 `pane_in_use`.
    PaneInUse {
        /// The browser pane.
        pane: String,
        /// The terminal pane driving it.
        driver: String,
    },
    /// Occurs when a changing verb (or another handoff) names a pane handed to the human
    /// (issue 26). 409 `handed_over`.
    HandedOver {
        /// The browser pane.
        pane: String,
        /// The handoff's reason.
        reason: String,
    },
    /// Occurs when the human declined a handoff. 409 `declined`.
    Declined(String),
    /// Occurs when a layout verb finds no window within the grace. 503 `no_window`.
    NoWindow,
    /// Occurs when `wait` reaches its timeout. 408 `timed_out`.
    TimedOut(String),
    /// Occurs when a window took a request and vanished, and no window shows its effect.
    /// 500 `unverified`.
    Unverified(String),
    /// Occurs when the window's connect to a remote failed (`ph workspace new --ssh`): the
    /// link's own code and status (protocol §11.5), e.g. 409 `host_key`; nothing was made.
    Remote {
        /// The link's status.
        status: u16,
        /// The link's code.
        code: &'static str,
        /// The link's message (with ssh's stderr tail when it adds anything).
        message: String,
    },
}

/// The link's codes a window may pass on for a failed connect (protocol §11.5), with their
/// statuses.
const REMOTE_CODES: [(&str, u16); 8] = [
    ("bad_host", 400),
    ("remote_unreachable", 502),
    ("remote_binary_missing", 502),
    ("remote_platform_unsupported", 409),
    ("host_key", 409),
    ("too_many_remotes", 409),
    ("connect_failed", 502),
    ("remote_refused", 502),
];

impl ControlError {
    /// A window's refusal: one of the link's codes (protocol §11.5) keeps it, any other
    /// (or none) is `refused`.
    pub fn from_window(code: Option<&str>, message: String) -> ControlError {
        match REMOTE_CODES.iter().find(|(c, _)| Some(*c) == code) {
            Some((code, status)) => ControlError::Remote { status: *status, code, message },
            None => ControlError::Refused(message),
        }
    }

    /// The HTTP status (as a number) and the stable code.
    pub fn status_and_code(&self) -> (u16, &'static str) {
        use ControlError as E;
        match self {
            E::NoCaller => (400, "no_caller"),
            E::BadRequest(_) => (400, "bad_request"),
            E::BadRegex(_) => (400, "bad_regex"),
            E::BadKey(_) => (400, "bad_key"),
            E::Revoked => (401, "unauthorized"),
            E::WrongPane(_) => (403, "wrong_pane"),
            E::UnknownTarget(_) => (404, "unknown_target"),
            E::Ambiguous { .. } => (409, "ambiguous_target"),
            E::NotATerminal(_) => (409, "not_a_terminal"),
            E::Exited { .. } => (409, "exited"),
            E::NoPort(_) => (409, "no_port"),
            E::SeveralPorts { .. } => (409, "several_ports"),
            E::Refused(_) => (409, "refused"),
            E::NoBrowserPane { .. } => (409, "no_browser_pane"),
            E::PaneInUse { .. } => (409, "pane_in_use"),
            E::HandedOver { .. } => (409, "handed_over"),
            E::Declined(_) => (409, "declined"),
            E::NoWindow => (503, "no_window"),
            E::TimedOut(_) => (408, "timed_out"),
            E::Unverified(_) => (500, "unverified"),
            E::Remote { status, code, .. } => (*status, code),
        }
    }

    /// The candidates to list, if any.
    pub fn candidates(&self) -> Option<&Candidates> {
        match self {
            ControlError::Ambiguous { candidates, .. }
            | ControlError::SeveralPorts { candidates, .. }
            | ControlError::NoBrowserPane { candidates, .. } => Some(candidates),
            _ => None,
        }
    }
}

fn list(c: &Candidates) -> String {
    c.iter()
        .map(|v| {
            let h = v.get("handle").and_then(|h| h.as_str());
            let t = v.get("title").and_then(|h| h.as_str()).unwrap_or("");
            if let (Some(h), Some(d)) = (h, v.get("driver").and_then(|d| d.as_str())) {
                return format!("{h}, driven by {d}");
            }
            match (h, v.get("port")) {
                (Some(h), _) if t.is_empty() => h.to_string(),
                (Some(h), _) => format!("{h} ({t})"),
                (None, Some(p)) => format!(":{p}"),
                _ => v.to_string(),
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

impl fmt::Display for ControlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use ControlError as E;
        match self {
            E::NoCaller => {
                write!(f, "'self' needs a pane token: run ph inside a Porthole terminal pane, or name a pane")
            }
            E::BadRequest(m)
            | E::BadRegex(m)
            | E::BadKey(m)
            | E::Refused(m)
            | E::TimedOut(m)
            | E::Unverified(m)
            | E::Remote { message: m, .. }
            | E::WrongPane(m) => {
                write!(f, "{m}")
            }
            E::Revoked => write!(f, "the pane token was revoked: its terminal has ended"),
            E::UnknownTarget(t) => write!(f, "no pane matches '{t}' (see 'ph list')"),
            E::Ambiguous { target, candidates } => {
                write!(f, "'{target}' matches several panes: {}; name one by its handle", list(candidates))
            }
            E::NotATerminal(h) => write!(f, "{h} is a browser pane, not a terminal"),
            E::Exited { handle, code } => write!(f, "the program in {handle} has ended (exit code {code})"),
            E::NoPort(h) => write!(f, "no process in {h} listens on a TCP port"),
            E::SeveralPorts { handle, candidates } => {
                write!(f, "{handle} listens on several ports: {}; open one as :PORT", list(candidates))
            }
            E::NoBrowserPane { caller, candidates } if candidates.is_empty() => write!(
                f,
                "{caller} has no browser pane of its own and the wall shows none; open one with 'ph browser open URL'"
            ),
            E::NoBrowserPane { caller, candidates } => write!(
                f,
                "{caller} has no browser pane of its own: open one with 'ph browser open URL', or name one with --pane ({})",
                list(candidates)
            ),
            E::PaneInUse { pane, driver } => write!(
                f,
                "{pane} is driven by {driver}; observe it by name, open your own with 'ph browser open URL', or ask the human to hand it over (pane menu: Let … drive this)"
            ),
            E::HandedOver { pane, reason } => {
                write!(f, "{pane} is handed to the human ({reason:?}); wait for the handoff to end")
            }
            E::Declined(pane) => write!(f, "the human declined the handoff of {pane}; do not try the step yourself"),
            E::NoWindow => write!(
                f,
                "no Porthole window is open to change the layout; open the app (or its web-mode URL) and try again"
            ),
        }
    }
}

impl std::error::Error for ControlError {}
