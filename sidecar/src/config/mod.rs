//! The user's configuration file (DESIGN §14, docs/config.md): where it lives, parsing it
//! into bounded typed values, watching it for changes, and writing `[agent.sealed]` from the
//! app (`write.rs`).
//!
//! **Architecture Invariant:** this module is the only reader and writer of `config.toml`. Everyone
//! else reads the current [`Snapshot`] from [`Settings`], which always holds the last good
//! configuration (the built-in one until a file parses) and, beside it, the error that keeps
//! a newer file from applying.

mod schema;
mod watch;
mod write;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;

pub use schema::{
    builtin_viewports, merge_presets, Agent, Bindings, Browser, Colors, Config, CropMaxSide, Cursor, CursorStyle, Dpr,
    EnvSwitch, FocusWalkSteps, Font, FontFamily, FontSize, Keys, LineHeight, MaxControls, MaxFrames, Notifications,
    Prefix, RenderMode, Rgb, ScansPerMinute, Scrollback, Sealed, SessionSection, Shell, ShellArgs, ShellProgram,
    TerminalRenderer, TerminalSection, Theme, ThemeMode, Viewport, ViewportPx, Viewports, ACTIONS, COLOR_SLOTS,
    NAMED_KEYS, SEALED_ENV,
};
pub use watch::{Settings, DEBOUNCE_MS};
pub use write::{
    apply_patch, write_sealed, write_show_secrets, write_terminal_renderer, Kind, SealedPatch, SealedValue, WriteError,
    SEALED_KEYS,
};

/// The commented default file (`porthole-sidecar --print-default-config`); it parses to
/// [`Config::default`] with no warnings (pinned by a test).
pub const DEFAULT_FILE: &str = include_str!("default.toml");

/// Largest config file read, in bytes.
pub const MAX_FILE_BYTES: u64 = 1 << 20;

/// The file's name inside the config directory.
pub const FILE_NAME: &str = "config.toml";

/// Why a config file was not applied.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ConfigError {
    /// The file.
    pub file: PathBuf,
    /// 1-based line of the offending text, when the parser gave a span.
    pub line: Option<usize>,
    /// 1-based column (in characters) of the offending text, when the parser gave a span.
    pub column: Option<usize>,
    /// The parser's message (or the OS error of reading the file).
    pub message: String,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let (Some(l), Some(c)) = (self.line, self.column) {
            write!(f, ":{l}:{c}")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for ConfigError {}

/// A file that parsed: its configuration and the unknown keys it holds (dotted paths).
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    /// The configuration (defaults for every key not given).
    pub config: Config,
    /// Keys Porthole does not know, ignored.
    pub unknown: Vec<String>,
}

/// The config directory: the platform's (`directories`: `$XDG_CONFIG_HOME/porthole` on
/// Linux), or `None` when no home directory is known.
pub fn default_dir() -> Option<PathBuf> {
    directories::ProjectDirs::from("", "", "porthole").map(|d| d.config_dir().to_path_buf())
}

/// Parses `text` (the contents of `file`, named in errors). Syntax errors, values out of
/// bounds and conflicts between entries (a key bound twice, a viewport named twice: at the
/// second one) carry the line and column of the offending text; unknown keys do not fail.
pub fn parse(file: &Path, text: &str) -> Result<Parsed, ConfigError> {
    let err = |e: toml::de::Error| toml_error(file, text, e);
    let table: toml::Table = toml::from_str(text).map_err(err)?;
    if let Some((offset, message)) = schema::located_error(text) {
        let (line, column) = line_col(text, offset);
        return Err(ConfigError { file: file.to_path_buf(), line: Some(line), column: Some(column), message });
    }
    let config: Config = toml::from_str(text).map_err(err)?;
    Ok(Parsed { config, unknown: schema::unknown_keys(&table) })
}

/// A TOML error in `text` (the contents of `file`) as a [`ConfigError`] with the line and
/// column of its span (also used for `.porthole.toml`).
pub fn toml_error(file: &Path, text: &str, e: toml::de::Error) -> ConfigError {
    let (line, column) = match e.span() {
        Some(span) => {
            let (l, c) = line_col(text, span.start);
            (Some(l), Some(c))
        }
        None => (None, None),
    };
    ConfigError { file: file.to_path_buf(), line, column, message: e.message().trim().to_string() }
}

/// Reads and parses the file at `path`; a missing file is the built-in configuration.
pub fn load(path: &Path) -> Result<Parsed, ConfigError> {
    let io = |e: std::io::Error| ConfigError {
        file: path.to_path_buf(),
        line: None,
        column: None,
        message: format!("cannot read the file: {e}"),
    };
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Parsed { config: Config::default(), unknown: Vec::new() })
        }
        Err(e) => return Err(io(e)),
    };
    if meta.len() > MAX_FILE_BYTES {
        return Err(io(std::io::Error::other(format!("larger than {MAX_FILE_BYTES} bytes"))));
    }
    let text = std::fs::read_to_string(path).map_err(io)?;
    parse(path, &text)
}

/// 1-based line and column (in characters) of byte `offset` in `text`.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    (line, col)
}

/// What the UI is told (protocol §10 `config`, `GET /api/config`); serialized with
/// `presets` added (see [`Snapshot::presets`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    /// The file watched.
    pub file: PathBuf,
    /// +1 each time the snapshot changes; starts at 1.
    pub revision: u64,
    /// The configuration in force: the last file that parsed, else the built-in one.
    pub config: Arc<Config>,
    /// Why the file as it is now is not applied; `None` when it is.
    pub error: Option<ConfigError>,
    /// Unknown keys of the configuration in force, as dotted paths.
    pub unknown_keys: Vec<String>,
}

impl Snapshot {
    /// The viewport presets the Display menu offers outside a project: the built-in ones,
    /// then `browser.viewports` (one named like a built-in replaces it). One owner: the UI
    /// shows this list and keeps none of its own.
    pub fn presets(&self) -> Vec<Viewport> {
        merge_presets(&builtin_viewports(), &self.config.browser.viewports.0, &[])
    }
}

impl Serialize for Snapshot {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("Snapshot", 7)?;
        st.serialize_field("file", &self.file)?;
        st.serialize_field("revision", &self.revision)?;
        st.serialize_field("config", &*self.config)?;
        st.serialize_field("error", &self.error)?;
        st.serialize_field("unknown_keys", &self.unknown_keys)?;
        st.serialize_field("presets", &self.presets())?;
        // Sections the environment overrides, so the UI shows them locked (docs/config.md).
        let locks: Vec<&str> = if EnvSwitch::from_env().kills() { vec!["agent.sealed"] } else { Vec::new() };
        st.serialize_field("env_locks", &locks)?;
        st.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(text: &str) -> Result<Parsed, ConfigError> {
        parse(Path::new("/c/config.toml"), text)
    }

    #[test]
    fn the_answer_lists_the_presets_built_in_then_the_users_replacing_by_name() {
        let parsed = p("[[browser.viewports]]\nname = \"Phone\"\nwidth = 400\nheight = 700\ndpr = 2\n\n[[browser.viewports]]\nname = \"Kiosk\"\nwidth = 1080\nheight = 1920\n").unwrap();
        let snap = Snapshot {
            file: "/c/config.toml".into(),
            revision: 1,
            config: Arc::new(parsed.config),
            error: None,
            unknown_keys: Vec::new(),
        };
        let v = serde_json::to_value(&snap).unwrap();
        let presets: Vec<String> = v["presets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| format!("{} {}x{}@{}", p["name"].as_str().unwrap(), p["width"], p["height"], p["dpr"]))
            .collect();
        assert_eq!(
            presets,
            [
                "Desktop 1440x900@1.0",
                "Laptop 1280x800@1.0",
                "Tablet 820x1180@2.0",
                "Phone 400x700@2.0",
                "Kiosk 1080x1920@1.0"
            ]
        );
        assert_eq!(v["revision"], 1);
        assert!(v["config"]["browser"]["viewports"].is_array(), "the config itself is unchanged: {v}");
    }

    #[test]
    fn default_file_is_the_builtin_config_without_warnings() {
        let parsed = p(DEFAULT_FILE).unwrap();
        assert_eq!(parsed.config, Config::default());
        assert!(parsed.unknown.is_empty(), "{:?}", parsed.unknown);
        assert_eq!(p("").unwrap().config, Config::default());
    }

    #[test]
    fn parse_errors_carry_line_and_column() {
        let e = p("[font]\nsize = 14\nfamily = \"x\n").unwrap_err();
        assert_eq!((e.line, e.column), (Some(3), Some(12)), "{e}");
        assert!(e.to_string().starts_with("/c/config.toml:3:12: "), "{e}");
        let e = p("[font]\nsize = \"big\"\n").unwrap_err();
        assert_eq!((e.line, e.column), (Some(2), Some(8)), "{e}");
    }

    #[test]
    fn bounds_are_refused_at_the_value() {
        for (text, line, col, words) in [
            ("[font]\nsize = 200\n", 2, 8, "font.size must be 6..=72"),
            ("[font]\nline_height = 0.5\n", 2, 15, "font.line_height"),
            ("[terminal]\nscrollback_lines = 2000000\n", 2, 20, "scrollback_lines"),
            ("[keys]\nprefix = \"C-B\"\n", 2, 10, "keys.prefix"),
            ("[keys.bindings]\nzoom = \"x\"\n", 2, 8, "close and zoom are both bound"),
            ("[keys]\nprefix = \"C-a\"\n[keys.bindings]\nclose = \"q\"\nzoom = \"q\"\n", 5, 8, "close and zoom are both bound"),
            ("[[browser.viewports]]\nname = \"A\"\nwidth = 500\nheight = 500\n[[browser.viewports]]\nname = \"A\"\nwidth = 600\nheight = 600\n", 6, 8, "named twice"),
            ("[shell]\nprogram = \"/nonexistent/zsh\"\n", 2, 11, "no such file"),
            ("[shell]\nprogram = \"/etc/passwd\"\n", 2, 11, "not executable"),
            ("[shell]\nprogram = \"/etc\"\n", 2, 11, "not a regular file"),
            ("[keys.bindings]\nzoom = \"F12x\"\n", 2, 8, "keys.bindings.zoom"),
            ("[[browser.viewports]]\nname = \"\"\nwidth = 500\nheight = 500\n", 2, 8, "name must be"),
            ("[theme.colors]\nred = \"red\"\n", 2, 7, "#RRGGBB"),
            ("[theme]\nmode = \"blue\"\n", 2, 8, "blue"),
            ("[cursor]\nstyle = \"box\"\n", 2, 9, "box"),
            ("[shell]\nprogram = \"bash\"\n", 2, 11, "absolute path"),
            ("[[browser.viewports]]\nname = \"A\"\nwidth = 50\nheight = 500\n", 3, 9, "viewport side"),
            ("[agent.sealed]\nmax_frames = 0\n", 2, 14, "agent.sealed.max_frames must be 1..=64"),
            ("[agent.sealed]\nenabled = true\nscans_per_minute = 500\n", 3, 20, "agent.sealed.scans_per_minute must be 1..=120"),
            ("[agent.sealed]\nfocus_walk_max_steps = 65\n", 2, 24, "focus_walk_max_steps"),
            ("[agent.sealed]\nmax_controls = 2001\n", 2, 16, "max_controls"),
            ("[agent.sealed]\ncrop_max_side = 63\n", 2, 17, "crop_max_side"),
            ("[agent.sealed]\nforce_open = \"yes\"\n", 2, 14, "bool"),
        ] {
            let e = p(text).unwrap_err();
            assert!(e.message.contains(words), "{text:?}: {e}");
            assert_eq!(e.line, Some(line), "{text:?}: {e}");
            assert_eq!(e.column, Some(col), "{text:?}: {e}");
        }
    }

    #[test]
    fn unknown_keys_warn_and_do_not_fail() {
        let parsed = p("colour = 1\n[font]\nsize = 15\nweight = 3\n[theme.colors]\nred = \"#FF0000\"\nrde = \"#ff0000\"\n[keys.bindings]\nzoom = \"Z\"\nteleport = \"t\"\n[extra]\na = 1\n").unwrap();
        assert_eq!(parsed.config.font.size, FontSize(15.0));
        assert_eq!(parsed.config.keys.bindings.0["zoom"], "Z");
        assert_eq!(parsed.config.keys.bindings.0["close"], "x", "unbound actions keep their key");
        assert_eq!(parsed.config.theme.colors.0.get("red").map(|c| String::from(c.clone())), Some("#ff0000".into()));
        assert_eq!(parsed.unknown, ["colour", "extra", "font.weight", "keys.bindings.teleport", "theme.colors.rde"]);
    }

    #[test]
    fn missing_file_is_the_builtin_config() {
        let parsed = load(Path::new("/nonexistent/porthole/config.toml")).unwrap();
        assert_eq!(parsed.config, Config::default());
    }
}
