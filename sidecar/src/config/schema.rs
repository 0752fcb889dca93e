//! The configuration's typed values and their bounds, parsed from TOML text.
//!
//! Every value is checked while it is deserialized (`try_from`), so a value out of bounds is
//! refused with the span of that value, like a syntax error. Keys serde does not know are
//! ignored by the typed pass and listed by [`unknown_keys`] instead.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The whole configuration (docs/config.md). `Default` is the built-in configuration, which
/// `default.toml` spells out.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Config {
    /// Terminal colours.
    pub theme: Theme,
    /// Terminal font.
    pub font: Font,
    /// Terminal cursor.
    pub cursor: Cursor,
    /// Terminal buffer.
    pub terminal: TerminalSection,
    /// The prefix key and what each key after it does.
    pub keys: Keys,
    /// The shell new terminals start.
    pub shell: Shell,
    /// Browser panes.
    pub browser: Browser,
    /// Desktop notifications.
    pub notifications: Notifications,
    /// Session restore.
    pub session: SessionSection,
    /// What an agent driving a browser pane may do.
    pub agent: Agent,
    /// Remote workspaces (read by the remote daemon, `porthole-sidecar --remote-daemon`).
    pub remote: RemoteSection,
}

/// `[theme]`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Theme {
    /// Light, dark, or the desktop's preference.
    pub mode: ThemeMode,
    /// Colour overrides by xterm.js theme slot (snake_case), applied over the mode's theme.
    pub colors: Colors,
}

/// `theme.mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ThemeMode {
    /// Follow `prefers-color-scheme`.
    #[default]
    System,
    /// Always the light theme.
    Light,
    /// Always the dark theme.
    Dark,
}

/// The terminal theme slots `theme.colors` may override (xterm.js `ITheme` names in
/// snake_case).
pub const COLOR_SLOTS: &[&str] = &[
    "background",
    "foreground",
    "cursor",
    "cursor_accent",
    "selection_background",
    "black",
    "red",
    "green",
    "yellow",
    "blue",
    "magenta",
    "cyan",
    "white",
    "bright_black",
    "bright_red",
    "bright_green",
    "bright_yellow",
    "bright_blue",
    "bright_magenta",
    "bright_cyan",
    "bright_white",
];

/// Slot → colour; names not in [`COLOR_SLOTS`] are dropped (and warned of as unknown keys).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(try_from = "BTreeMap<String, Rgb>")]
pub struct Colors(pub BTreeMap<String, Rgb>);

impl TryFrom<BTreeMap<String, Rgb>> for Colors {
    type Error = String;
    fn try_from(mut m: BTreeMap<String, Rgb>) -> Result<Self, String> {
        m.retain(|k, _| COLOR_SLOTS.contains(&k.as_str()));
        Ok(Colors(m))
    }
}

/// A colour written `#RRGGBB` (six hex digits; stored lowercase).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Rgb(String);

impl TryFrom<String> for Rgb {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        let ok = s.len() == 7 && s.starts_with('#') && s[1..].bytes().all(|b| b.is_ascii_hexdigit());
        if ok {
            Ok(Rgb(s.to_ascii_lowercase()))
        } else {
            Err(format!("a colour must be \"#RRGGBB\", got {s:?}"))
        }
    }
}

impl From<Rgb> for String {
    fn from(c: Rgb) -> String {
        c.0
    }
}

/// `[font]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Font {
    /// CSS `font-family` list, 1..=512 bytes.
    pub family: FontFamily,
    /// Font size in CSS pixels, 6..=72.
    pub size: FontSize,
    /// Line height as a multiple of the font size, 1.0..=3.0.
    pub line_height: LineHeight,
}

impl Default for Font {
    fn default() -> Self {
        Font {
            family: FontFamily(
                r#""JetBrains Mono", "Fira Code", "Cascadia Mono", "DejaVu Sans Mono", Menlo, Consolas, monospace"#
                    .into(),
            ),
            size: FontSize(13.0),
            line_height: LineHeight(1.15),
        }
    }
}

/// Defines a bounded newtype deserialized through `try_from`, so a value out of bounds is a
/// parse error at that value's span.
macro_rules! bounded {
    ($(#[$doc:meta])* $name:ident($ty:ty) from $from:literal, $lo:expr, $hi:expr, $what:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Serialize, Deserialize)]
        #[serde(try_from = $from)]
        pub struct $name(pub $ty);
        impl $name {
            /// Smallest accepted value.
            pub const MIN: $ty = $lo;
            /// Largest accepted value.
            pub const MAX: $ty = $hi;
        }
        impl TryFrom<$ty> for $name {
            type Error = String;
            fn try_from(v: $ty) -> Result<Self, String> {
                if (Self::MIN..=Self::MAX).contains(&v) {
                    Ok($name(v))
                } else {
                    Err(format!("{} must be {}..={}, got {}", $what, Self::MIN, Self::MAX, v))
                }
            }
        }
    };
}

bounded!(
    /// Font size in CSS pixels.
    FontSize(f64) from "f64", 6.0, 72.0, "font.size"
);
bounded!(
    /// Line height as a multiple of the font size.
    LineHeight(f64) from "f64", 1.0, 3.0, "font.line_height"
);
bounded!(
    /// Lines of scrollback per terminal pane.
    Scrollback(u32) from "u32", 0, 1_000_000, "terminal.scrollback_lines"
);
bounded!(
    /// A viewport side in CSS pixels (protocol §8.2's bounds).
    ViewportPx(u32) from "u32", crate::constants::MIN_VIEWPORT_CSS_PX, crate::constants::MAX_VIEWPORT_CSS_PX, "a viewport side"
);
bounded!(
    /// A device pixel ratio (protocol §8.2's bounds).
    Dpr(f64) from "f64", crate::constants::MIN_VIEWPORT_DPR, crate::constants::MAX_VIEWPORT_DPR, "dpr"
);

mod agent;
mod browser;
mod shell;
pub use agent::{
    Agent, CropMaxSide, EnvSwitch, FocusWalkSteps, MaxControls, MaxFrames, ScansPerMinute, Sealed, SEALED_ENV,
};
pub use browser::{builtin_viewports, merge_presets, Browser, RenderMode, Viewport, Viewports};
pub use shell::{Shell, ShellArgs, ShellProgram};

/// A CSS font-family list, 1..=512 bytes, without control characters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "String")]
pub struct FontFamily(pub String);

impl TryFrom<String> for FontFamily {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        if s.trim().is_empty() || s.len() > 512 || s.chars().any(char::is_control) {
            return Err("font.family must be 1..=512 bytes of text without control characters".into());
        }
        Ok(FontFamily(s))
    }
}

/// `[cursor]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Cursor {
    /// The cursor's shape.
    pub style: CursorStyle,
    /// Whether it blinks.
    pub blink: bool,
}

impl Default for Cursor {
    fn default() -> Self {
        Cursor { style: CursorStyle::Block, blink: true }
    }
}

/// `cursor.style` (xterm.js `cursorStyle`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[allow(missing_docs)]
pub enum CursorStyle {
    #[default]
    Block,
    Underline,
    Bar,
}

/// `[terminal]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TerminalSection {
    /// Lines each terminal pane keeps above its screen.
    pub scrollback_lines: Scrollback,
    /// Which xterm.js renderer draws terminals (issue 27).
    pub renderer: TerminalRenderer,
}

impl Default for TerminalSection {
    fn default() -> Self {
        TerminalSection { scrollback_lines: Scrollback(10_000), renderer: TerminalRenderer::Auto }
    }
}

/// `terminal.renderer`: `auto` (WebGL where the GPU draws it, the DOM renderer with a
/// software GL such as SwiftShader or llvmpipe, and in WebKitGTK), `webgl` or `dom`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TerminalRenderer {
    /// Chosen by the UI for the machine it runs on.
    #[default]
    Auto,
    /// xterm.js's WebGL renderer.
    Webgl,
    /// xterm.js's DOM renderer.
    Dom,
}

impl TerminalRenderer {
    /// The file's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            TerminalRenderer::Auto => "auto",
            TerminalRenderer::Webgl => "webgl",
            TerminalRenderer::Dom => "dom",
        }
    }
}

/// The prefix actions that can be bound (the UI's `keys/prefix.ts` `Action`s, kebab-case).
pub const ACTIONS: &[(&str, &str)] = &[
    ("split-right", "%"),
    ("split-down", "\""),
    ("focus-left", "ArrowLeft"),
    ("focus-right", "ArrowRight"),
    ("focus-up", "ArrowUp"),
    ("focus-down", "ArrowDown"),
    ("focus-next", "o"),
    ("close", "x"),
    ("zoom", "z"),
    ("minimize", "m"),
    ("swap-prev", "{"),
    ("swap-next", "}"),
    ("open-browser", "b"),
    ("context-menu", ">"),
    ("next-attention", "a"),
    ("prompt-prev", "["),
    ("prompt-next", "]"),
    ("new-workspace", "c"),
    ("next-workspace", "n"),
    ("prev-workspace", "p"),
    ("rename-workspace", ","),
    ("close-workspace", "&"),
    ("break-pane", "!"),
    ("workspace-1", "1"),
    ("workspace-2", "2"),
    ("workspace-3", "3"),
    ("workspace-4", "4"),
    ("workspace-5", "5"),
    ("workspace-6", "6"),
    ("workspace-7", "7"),
    ("workspace-8", "8"),
    ("workspace-9", "9"),
    ("workspace-0", "0"),
];

/// Key names (`KeyboardEvent.key`) a binding may use besides a single character.
pub const NAMED_KEYS: &[&str] = &[
    "ArrowLeft",
    "ArrowRight",
    "ArrowUp",
    "ArrowDown",
    "Tab",
    "Enter",
    "Space",
    "Backspace",
    "Home",
    "End",
    "PageUp",
    "PageDown",
];

/// `[keys]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Keys {
    /// The prefix: Ctrl plus one letter.
    pub prefix: Prefix,
    /// Action name → the key after the prefix; every action of [`ACTIONS`] is present after
    /// parsing (missing ones keep their default key), and no two share a key (checked by
    /// [`located_error`], which `config::parse` runs first).
    pub bindings: Bindings,
}

impl Default for Keys {
    fn default() -> Self {
        Keys { prefix: Prefix("C-b".into()), bindings: Bindings::default() }
    }
}

/// The prefix key written `C-<letter>` (`C-a` ..= `C-z`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String")]
pub struct Prefix(pub String);

impl Prefix {
    /// The letter pressed with Ctrl (`'a'..='z'`; validated on parse).
    pub fn letter(&self) -> char {
        self.0.chars().nth(2).unwrap_or('b')
    }
}

impl TryFrom<String> for Prefix {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        match s.strip_prefix("C-") {
            Some(l) if l.len() == 1 && l.as_bytes()[0].is_ascii_lowercase() => Ok(Prefix(s)),
            _ => Err(format!("keys.prefix must be Ctrl plus a letter, \"C-a\"..\"C-z\", got {s:?}")),
        }
    }
}

/// Action name → key, complete (duplicate keys are refused by [`located_error`], with the
/// offending line).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "BTreeMap<String, String>")]
pub struct Bindings(pub BTreeMap<String, String>);

impl Default for Bindings {
    fn default() -> Self {
        Bindings(ACTIONS.iter().map(|(a, k)| (a.to_string(), k.to_string())).collect())
    }
}

impl TryFrom<BTreeMap<String, String>> for Bindings {
    type Error = String;
    /// Overlays `given` on the defaults; names not in [`ACTIONS`] are left to the unknown-key
    /// warning. A key is one character (not a control character) or one of [`NAMED_KEYS`].
    fn try_from(given: BTreeMap<String, String>) -> Result<Self, String> {
        let mut out = Bindings::default().0;
        for (action, key) in given {
            if !out.contains_key(&action) {
                continue;
            }
            if let Some(e) = binding_error(&action, &key) {
                return Err(e);
            }
            out.insert(action, key);
        }
        Ok(Bindings(out))
    }
}

/// Why `key` cannot be bound to `action`, if so: a key is one character (not a control
/// character) or one of [`NAMED_KEYS`].
fn binding_error(action: &str, key: &str) -> Option<String> {
    let one_char = key.chars().count() == 1 && !key.chars().any(char::is_control);
    (!one_char && !NAMED_KEYS.contains(&key)).then(|| {
        format!("keys.bindings.{action} must be one character or a key name ({}), got {key:?}", NAMED_KEYS.join(", "))
    })
}

/// Errors in a table whose entries are checked together (a key bound twice or to a bad key
/// name, a viewport named twice), found with the text's spans so they point at the offending
/// entry rather than at the whole table (issue 22 item 2b: they were reported at 1:1). `None` when there is none, or when the text does
/// not have the expected types (the typed pass reports that). Returns the byte offset of the
/// offending value and the message.
pub fn located_error(text: &str) -> Option<(usize, String)> {
    #[derive(Deserialize, Default)]
    #[serde(default)]
    struct Located {
        keys: LocatedKeys,
        browser: LocatedBrowser,
    }
    #[derive(Deserialize, Default)]
    #[serde(default)]
    struct LocatedKeys {
        bindings: BTreeMap<String, toml::Spanned<String>>,
    }
    #[derive(Deserialize, Default)]
    #[serde(default)]
    struct LocatedBrowser {
        viewports: Vec<LocatedViewport>,
    }
    #[derive(Deserialize)]
    struct LocatedViewport {
        name: toml::Spanned<String>,
    }
    let located: Located = toml::from_str(text).ok()?;
    let mut found: Vec<(usize, String)> = Vec::new();
    // Bindings: the defaults overlaid with the file's; of the actions sharing a key, the one
    // given last in the file is the offending one (a default cannot be).
    let given = &located.keys.bindings;
    let mut by_key: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for (action, default) in ACTIONS {
        let key = given.get(*action).map_or(*default, |k| k.get_ref().as_str());
        by_key.entry(key.to_string()).or_default().push(action);
    }
    for (action, key) in given.iter().filter(|(a, _)| ACTIONS.iter().any(|(n, _)| n == a)) {
        if let Some(e) = binding_error(action, key.get_ref()) {
            found.push((key.span().start, e));
        }
    }
    for (key, actions) in by_key.iter().filter(|(_, a)| a.len() > 1) {
        let Some((at, offender)) = actions.iter().filter_map(|a| given.get(*a).map(|k| (k.span().start, *a))).max()
        else {
            continue;
        };
        let mut pair: Vec<&str> = vec![offender, actions.iter().find(|a| **a != offender).copied().unwrap_or(offender)];
        pair.sort_unstable();
        found.push((at, format!("keys.bindings: {} and {} are both bound to {key:?}", pair[0], pair[1])));
    }
    let names = &located.browser.viewports;
    for (i, v) in names.iter().enumerate() {
        if names[..i].iter().any(|w| w.name.get_ref() == v.name.get_ref()) {
            found.push((v.name.span().start, format!("browser.viewports: {:?} is named twice", v.name.get_ref())));
            break;
        }
    }
    found.into_iter().min()
}

/// `[notifications]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Notifications {
    /// Desktop notifications for attention in an unfocused window.
    pub desktop: bool,
}

impl Default for Notifications {
    fn default() -> Self {
        Notifications { desktop: true }
    }
}

/// `[session]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SessionSection {
    /// Restore the last session's wall at start (read once, at start; saving goes on
    /// either way).
    pub restore: bool,
}

impl Default for SessionSection {
    fn default() -> Self {
        SessionSection { restore: true }
    }
}

bounded!(
    /// How long a remote daemon lives with no attach relay connected, in seconds (1 s..=30 days).
    GraceSecs(u64) from "u64", 1, 30 * 24 * 3600, "remote.grace"
);

/// `[remote]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RemoteSection {
    /// Seconds a remote daemon keeps running (terminals included) while no attach relay holds
    /// its link socket; then it shuts down as on SIGTERM. Read at the daemon's start.
    pub grace: GraceSecs,
}

impl Default for RemoteSection {
    fn default() -> Self {
        RemoteSection { grace: GraceSecs(43_200) }
    }
}

/// Every key the file may hold, dotted (an array of tables is checked as one value by the
/// typed pass); a last segment `#` stands for any of [`COLOR_SLOTS`], `@` for any action of
/// [`ACTIONS`].
const KNOWN: &[&str] = &[
    "theme.mode",
    "theme.colors.#",
    "font.family",
    "font.size",
    "font.line_height",
    "cursor.style",
    "cursor.blink",
    "terminal.scrollback_lines",
    "terminal.renderer",
    "keys.prefix",
    "keys.bindings.@",
    "shell.program",
    "shell.args",
    "shell.integration",
    "browser.default_mode",
    "browser.viewports",
    "notifications.desktop",
    "session.restore",
    "remote.grace",
    "agent.show_secrets",
    "agent.sealed.enabled",
    "agent.sealed.discovery",
    "agent.sealed.signatures",
    "agent.sealed.focus_walk",
    "agent.sealed.focus_walk_max_steps",
    "agent.sealed.focus_walk_restore",
    "agent.sealed.part_highlight",
    "agent.sealed.force_open",
    "agent.sealed.max_frames",
    "agent.sealed.max_controls",
    "agent.sealed.crop_max_side",
    "agent.sealed.scans_per_minute",
];

/// The dotted paths of keys in `table` that Porthole does not know, sorted by path
/// (`keys.bindings.<name>` is known only for the names of [`ACTIONS`], `theme.colors.<name>`
/// only for [`COLOR_SLOTS`]).
pub fn unknown_keys(table: &toml::Table) -> Vec<String> {
    let mut out = Vec::new();
    walk(table, "", &mut out);
    out
}

fn walk(table: &toml::Table, prefix: &str, out: &mut Vec<String>) {
    for (k, v) in table {
        let path = format!("{prefix}{k}");
        let known = KNOWN.iter().any(|p| {
            p == &path
                || p.strip_suffix(".#").is_some_and(|t| {
                    path.strip_prefix(t).and_then(|r| r.strip_prefix('.')).is_some_and(|a| COLOR_SLOTS.contains(&a))
                })
                || p.strip_suffix(".@").is_some_and(|t| {
                    path.strip_prefix(t)
                        .and_then(|r| r.strip_prefix('.'))
                        .is_some_and(|a| ACTIONS.iter().any(|(n, _)| *n == a))
                })
        });
        if known {
            continue;
        }
        let is_table_prefix = KNOWN.iter().any(|p| p.starts_with(&format!("{path}.")));
        match v {
            toml::Value::Table(t) if is_table_prefix => walk(t, &format!("{path}."), out),
            _ => out.push(path),
        }
    }
}
