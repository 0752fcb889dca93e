//! The project file's typed values and their bounds (docs/config.md "Project file").
//!
//! Unlike `config.toml`, unknown keys are refused: this file starts commands, and a typo
//! (`comand`, `prot`) must not silently start something else or nothing. Every value is
//! checked while it is deserialized, so an error carries the span of the offending value.

use serde::{Deserialize, Serialize};

use crate::config::Viewports;
use crate::constants::{MAX_COMMAND_ITEMS, MAX_COMMAND_ITEM_BYTES};

/// Most layouts in one file.
pub const MAX_LAYOUTS: usize = 32;
/// Most panes, and most browsers, in one layout.
pub const MAX_LAYOUT_ITEMS: usize = 16;
/// Longest layout name, in bytes.
pub const MAX_NAME_BYTES: usize = 64;
/// Longest `cwd` or browser `path`, in bytes.
pub const MAX_PATH_BYTES: usize = 4096;

/// A whole `.porthole.toml`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ProjectFile {
    /// `[[viewports]]`: presets over the user's and the built-in ones (same bounds as
    /// `browser.viewports` in config.toml).
    pub viewports: Viewports,
    /// `[[layouts]]`, in file order (the first is the default unless one is named `default`).
    pub layouts: Layouts,
}

/// `[[layouts]]`: at most [`MAX_LAYOUTS`], names unique.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(try_from = "Vec<Layout>")]
pub struct Layouts(pub Vec<Layout>);

impl TryFrom<Vec<Layout>> for Layouts {
    type Error = String;
    fn try_from(v: Vec<Layout>) -> Result<Self, String> {
        if v.len() > MAX_LAYOUTS {
            return Err(format!("at most {MAX_LAYOUTS} layouts, got {}", v.len()));
        }
        for (i, l) in v.iter().enumerate() {
            if v[..i].iter().any(|o| o.name == l.name) {
                return Err(format!("the layout {:?} is named twice", l.name.0));
            }
        }
        Ok(Layouts(v))
    }
}

/// One named layout: terminal panes to start, then browser panes to open.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Layout {
    /// Its name (`ph up NAME`, the menu's "Start layout ▸ NAME").
    pub name: LayoutName,
    /// Terminal panes, in order, at most [`MAX_LAYOUT_ITEMS`].
    #[serde(default)]
    pub panes: Items<PaneSpec>,
    /// Browser panes, in order, at most [`MAX_LAYOUT_ITEMS`].
    #[serde(default)]
    pub browsers: Items<BrowserSpec>,
}

/// A layout name: 1..=64 bytes of letters, digits, `-`, `_` and `.`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String")]
pub struct LayoutName(pub String);

impl TryFrom<String> for LayoutName {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        let ok = !s.is_empty()
            && s.len() <= MAX_NAME_BYTES
            && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.');
        if ok {
            Ok(LayoutName(s))
        } else {
            Err(format!("a layout name is 1..={MAX_NAME_BYTES} letters, digits, '-', '_' or '.', got {s:?}"))
        }
    }
}

/// A bounded list of layout items.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "Vec<T>")]
pub struct Items<T>(pub Vec<T>);

impl<T> Default for Items<T> {
    fn default() -> Self {
        Items(Vec::new())
    }
}

impl<T> TryFrom<Vec<T>> for Items<T> {
    type Error = String;
    fn try_from(v: Vec<T>) -> Result<Self, String> {
        if v.len() > MAX_LAYOUT_ITEMS {
            return Err(format!("at most {MAX_LAYOUT_ITEMS} panes and {MAX_LAYOUT_ITEMS} browsers per layout"));
        }
        Ok(Items(v))
    }
}

/// `[[layouts.panes]]`: a terminal pane running `command` in `cwd`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PaneSpec {
    /// The program and its arguments.
    pub command: Command,
    /// Its directory, relative to the project file's directory (default: that directory).
    #[serde(default)]
    pub cwd: Option<RelDir>,
    /// Where it goes beside the previous pane of the layout (the first: beside the pane the
    /// layout was started from); default: the wall's placement rule.
    #[serde(default)]
    pub split: Option<Side>,
}

/// `split`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[allow(missing_docs)]
pub enum Side {
    Right,
    Down,
}

impl Side {
    /// The protocol's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Side::Right => "right",
            Side::Down => "down",
        }
    }
}

/// A command: an argument vector, or a string run by `/bin/sh -c` (so `"npm run dev"` and
/// `"make -C web watch | tee log"` both work). Same bounds as `POST /api/terminals`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "CommandRaw")]
pub struct Command(pub Vec<String>);

/// A command as written.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum CommandRaw {
    /// `command = "npm run dev"`.
    Line(String),
    /// `command = ["npm", "run", "dev"]`.
    Argv(Vec<String>),
}

impl TryFrom<CommandRaw> for Command {
    type Error = String;
    fn try_from(raw: CommandRaw) -> Result<Self, String> {
        let argv = match raw {
            CommandRaw::Line(s) if s.trim().is_empty() => return Err("command is empty".into()),
            CommandRaw::Line(s) => vec!["/bin/sh".to_string(), "-c".to_string(), s],
            CommandRaw::Argv(v) => v,
        };
        if argv.is_empty() || argv.len() > MAX_COMMAND_ITEMS || argv[0].is_empty() {
            return Err(format!("command must have 1..={MAX_COMMAND_ITEMS} items and a program"));
        }
        if argv.iter().any(|a| a.len() > MAX_COMMAND_ITEM_BYTES || a.contains('\0')) {
            return Err(format!("each command item is at most {MAX_COMMAND_ITEM_BYTES} bytes, without NUL"));
        }
        Ok(Command(argv))
    }
}

/// A directory relative to the project file: not absolute, at most 4 KiB, without NUL.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String")]
pub struct RelDir(pub String);

impl TryFrom<String> for RelDir {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        if s.starts_with('/') || s.len() > MAX_PATH_BYTES || s.contains('\0') {
            return Err(format!("cwd is a directory relative to the project file, got {s:?}"));
        }
        Ok(RelDir(s))
    }
}

/// `[[layouts.browsers]]`: a browser pane at `http://localhost:PORT/PATH`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BrowserSpec {
    /// The loopback port.
    pub port: Port,
    /// The path (with query) to open; default `/`.
    #[serde(default)]
    pub path: Option<UrlPath>,
    /// How to show it (default: `browser.default_mode` of config.toml).
    #[serde(default)]
    pub mode: Option<BrowserMode>,
}

/// A TCP port, 1..=65535.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "i64")]
pub struct Port(pub u16);

impl TryFrom<i64> for Port {
    type Error = String;
    fn try_from(v: i64) -> Result<Self, String> {
        match u16::try_from(v) {
            Ok(p) if p > 0 => Ok(Port(p)),
            _ => Err(format!("port must be 1..=65535, got {v}")),
        }
    }
}

/// A URL path starting with `/`, at most 4 KiB, printable ASCII.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String")]
pub struct UrlPath(pub String);

impl TryFrom<String> for UrlPath {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        if !s.starts_with('/')
            || s.starts_with("//")
            || s.len() > MAX_PATH_BYTES
            || !s.bytes().all(|b| b.is_ascii_graphic())
        {
            return Err(format!("path must start with one '/' and be printable ASCII, got {s:?}"));
        }
        Ok(UrlPath(s))
    }
}

/// A layout browser's render mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[allow(missing_docs)]
pub enum BrowserMode {
    Iframe,
    Screencast,
    Popout,
}

impl BrowserMode {
    /// The protocol's name.
    pub fn as_str(self) -> &'static str {
        match self {
            BrowserMode::Iframe => "iframe",
            BrowserMode::Screencast => "screencast",
            BrowserMode::Popout => "popout",
        }
    }
}
