//! The typed words of the layout verbs: how a browser pane renders, how `open` shows a URL,
//! which side a new pane goes on, and what `ph pane` does. Each is parsed once, where a
//! request or a window's report enters, and spelled back only on the wire.

use std::fmt;

/// How a browser pane renders (protocol §10 `mode`), as a window reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PaneMode {
    /// Framed through the proxy.
    Iframe,
    /// A screencast of a headless Chromium the sidecar runs.
    Screencast,
    /// That Chromium in a window of its own.
    Popout,
}

impl PaneMode {
    /// The protocol's name: `iframe`, `screencast`, `popout`.
    pub fn as_str(self) -> &'static str {
        match self {
            PaneMode::Iframe => "iframe",
            PaneMode::Screencast => "screencast",
            PaneMode::Popout => "popout",
        }
    }

    /// Parses the protocol's name; `None` for anything else.
    pub fn parse(s: &str) -> Option<PaneMode> {
        match s {
            "iframe" => Some(PaneMode::Iframe),
            "screencast" => Some(PaneMode::Screencast),
            "popout" => Some(PaneMode::Popout),
            _ => None,
        }
    }

    /// True if and only if a Chromium of the sidecar's renders the pane (screencast or
    /// popped out): what `ph browser` can drive, and what `open` treats as one mode when it
    /// looks for a pane to reuse.
    pub fn has_chromium(self) -> bool {
        self != PaneMode::Iframe
    }
}

impl fmt::Display for PaneMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How `open` shows a URL (protocol §9.6 `mode`): in a pane, or in the system browser.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenMode {
    /// In a browser pane rendering this way.
    Pane(PaneMode),
    /// Handed to the OS opener by the window; no pane.
    System,
}

impl OpenMode {
    /// Parses `iframe`, `screencast`, `popout` or `system`.
    ///
    /// Errors: `bad_request` naming the four.
    pub fn parse(s: &str) -> Result<OpenMode, super::ControlError> {
        match s {
            "system" => Ok(OpenMode::System),
            m => PaneMode::parse(m).map(OpenMode::Pane).ok_or_else(|| {
                super::ControlError::BadRequest(format!("mode must be iframe, screencast, popout or system, got {m:?}"))
            }),
        }
    }

    /// The protocol's name.
    pub fn as_str(self) -> &'static str {
        match self {
            OpenMode::Pane(m) => m.as_str(),
            OpenMode::System => "system",
        }
    }

    /// The mode `open` uses when none is asked for: a screencast for https (an embedded pane
    /// cannot show it), else an iframe.
    pub fn default_for(url: &url::Url) -> OpenMode {
        OpenMode::Pane(if url.scheme() == "https" { PaneMode::Screencast } else { PaneMode::Iframe })
    }
}

/// The side of the near pane a new pane goes on (protocol §9.6 `side`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// Beside it, to the right.
    Right,
    /// Below it.
    Down,
}

impl Side {
    /// Parses `right` or `down`.
    ///
    /// Errors: `bad_request`.
    pub fn parse(s: &str) -> Result<Side, super::ControlError> {
        match s {
            "right" => Ok(Side::Right),
            "down" => Ok(Side::Down),
            o => Err(super::ControlError::BadRequest(format!("side must be right or down, got {o:?}"))),
        }
    }

    /// The protocol's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Side::Right => "right",
            Side::Down => "down",
        }
    }
}

/// What `ph pane` asks the window to do with a pane (protocol §9.6 `action`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum PaneAction {
    Focus,
    Zoom,
    Unzoom,
    Minimize,
    Restore,
    Close,
}

impl PaneAction {
    /// Parses the protocol's name.
    ///
    /// Errors: `bad_request` naming the six.
    pub fn parse(s: &str) -> Result<PaneAction, super::ControlError> {
        Ok(match s {
            "focus" => PaneAction::Focus,
            "zoom" => PaneAction::Zoom,
            "unzoom" => PaneAction::Unzoom,
            "minimize" => PaneAction::Minimize,
            "restore" => PaneAction::Restore,
            "close" => PaneAction::Close,
            a => {
                return Err(super::ControlError::BadRequest(format!(
                    "action must be focus, zoom, unzoom, minimize, restore or close, got {a:?}"
                )))
            }
        })
    }

    /// The protocol's name.
    pub fn as_str(self) -> &'static str {
        match self {
            PaneAction::Focus => "focus",
            PaneAction::Zoom => "zoom",
            PaneAction::Unzoom => "unzoom",
            PaneAction::Minimize => "minimize",
            PaneAction::Restore => "restore",
            PaneAction::Close => "close",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_sides_and_actions_parse_their_protocol_names_only() {
        for m in [PaneMode::Iframe, PaneMode::Screencast, PaneMode::Popout] {
            assert_eq!(PaneMode::parse(m.as_str()), Some(m));
            assert_eq!(OpenMode::parse(m.as_str()), Ok(OpenMode::Pane(m)));
        }
        assert_eq!(OpenMode::parse("system"), Ok(OpenMode::System));
        assert_eq!(PaneMode::parse("system"), None, "a window never reports a system pane");
        assert_eq!(OpenMode::parse("tv").unwrap_err().status_and_code().1, "bad_request");
        assert_eq!(Side::parse("down"), Ok(Side::Down));
        assert!(Side::parse("left").is_err());
        assert_eq!(PaneAction::parse("unzoom"), Ok(PaneAction::Unzoom));
        assert!(PaneAction::parse("explode").is_err());
        let u = |s: &str| url::Url::parse(s).unwrap();
        assert_eq!(OpenMode::default_for(&u("https://a.test/")), OpenMode::Pane(PaneMode::Screencast));
        assert_eq!(OpenMode::default_for(&u("http://localhost:1/")), OpenMode::Pane(PaneMode::Iframe));
    }
}
