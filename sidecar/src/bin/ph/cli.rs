//! The command line (clap): verbs, flags and their help (docs/cli.md mirrors it).
//!
//! About 600 lines, knowingly: one declarative table of every verb and flag, whose doc
//! comments are the `--help` text and the MCP tools' descriptions; split by verb it would
//! scatter what `docs/cli.md` mirrors in one place.

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Drive the Porthole wall from inside a pane: split it, start and read terminals, open
/// ports in browser panes. Targets: a handle (t3, b2), self, focused, :PORT, title:TEXT.
///
/// Exit codes: 0 done, 1 usage or unknown target, 2 refused (nothing done), 3 acted but not
/// verified, 4 timed out.
#[derive(Debug, Parser)]
#[command(name = "ph", version, propagate_version = true)]
pub struct Cli {
    /// Print the sidecar's JSON answer (for programs) instead of text.
    #[arg(long, global = true)]
    pub json: bool,
    #[command(subcommand)]
    pub cmd: Cmd,
}

/// A browser pane's render mode, or the system browser.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Mode {
    /// Embedded through the rewriting proxy (http only).
    Iframe,
    /// A live screencast of a headless Chromium.
    Screencast,
    /// A real Chromium window.
    Popout,
    /// The system's default browser.
    System,
}

impl Mode {
    /// The protocol's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Iframe => "iframe",
            Mode::Screencast => "screencast",
            Mode::Popout => "popout",
            Mode::System => "system",
        }
    }
}

/// What `wait` waits for.
#[derive(Debug, Clone, PartialEq)]
pub enum Until {
    /// No output for this many ms (default 500).
    Quiet(Option<u64>),
    /// The program exits.
    Exit,
    /// A screen line matches this regular expression.
    Text(String),
}

fn parse_until(s: &str) -> Result<Until, String> {
    if s == "quiet" {
        return Ok(Until::Quiet(None));
    }
    if let Some(ms) = s.strip_prefix("quiet=") {
        let ms: u64 = ms.parse().map_err(|_| format!("quiet=MS needs milliseconds, got {ms:?}"))?;
        return Ok(Until::Quiet(Some(ms)));
    }
    if s == "exit" {
        return Ok(Until::Exit);
    }
    if let Some(re) = s.strip_prefix("text=") {
        return Ok(Until::Text(re.to_string()));
    }
    Err(format!("expected quiet, quiet=MS, exit or text=REGEX, got {s:?}"))
}

/// `wait --ref-state`'s value: a ref and the state to wait for.
#[derive(Debug, Clone, PartialEq)]
pub struct RefStateArg {
    /// The ref (e3).
    pub r#ref: String,
    /// The state's name (checked by the sidecar).
    pub state: String,
}

fn parse_ref_state(s: &str) -> Result<RefStateArg, String> {
    match s.split_once('=') {
        Some((r, state)) if !r.is_empty() && !state.is_empty() => {
            Ok(RefStateArg { r#ref: r.to_string(), state: state.to_string() })
        }
        _ => Err(format!("expected REF=STATE (e3=visible), got {s:?}")),
    }
}

fn parse_timeout(s: &str) -> Result<f64, String> {
    let v: f64 = s.parse().map_err(|_| format!("{s:?} is not a number of seconds"))?;
    if !(0.001..=600.0).contains(&v) {
        return Err("the timeout must be 0.001..=600 seconds".into());
    }
    Ok(v)
}

/// Where and in which directory a new terminal pane starts (`split`, `ensure`).
#[derive(Debug, Args)]
pub struct Place {
    /// Put the new pane to the right.
    #[arg(long, conflicts_with = "down")]
    pub right: bool,
    /// Put the new pane below.
    #[arg(long)]
    pub down: bool,
    /// The pane to split (default: this one).
    #[arg(long, value_name = "PANE")]
    pub near: Option<String>,
    /// Working directory (default: this shell's).
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<String>,
}

impl Place {
    /// `right`, `down`, or `None` (the sidecar picks by the pane's shape).
    pub fn side(&self) -> Option<&'static str> {
        match (self.right, self.down) {
            (true, _) => Some("right"),
            (_, true) => Some("down"),
            _ => None,
        }
    }
}

/// `ph workspace` verbs.
#[derive(Debug, Subcommand)]
pub enum WorkspaceCmd {
    /// Make a new workspace with one terminal pane in the Porthole window and show it; print
    /// its number and the pane's handle.
    ///
    /// With --ssh HOST, a remote workspace on HOST (an ssh config alias or
    /// user@host[:port]), connected exactly as "New remote workspace…" connects: this waits
    /// for the connect (its own bound), and a failed one exits 2 with the link's code
    /// (host_key, remote_unreachable, remote_platform_unsupported, …) and makes nothing.
    New {
        /// Connect to this ssh host (an ssh config alias or user@host[:port]).
        #[arg(long, value_name = "HOST")]
        ssh: Option<String>,
        /// The workspace's name (default: the host for a remote, else the pane's label).
        #[arg(long, value_name = "NAME")]
        name: Option<String>,
    },
}

/// The verbs.
#[derive(Debug, Subcommand)]
pub enum Cmd {
    /// List the panes: handle, kind, title, cwd or URL, mode, state.
    List {
        /// Also list each terminal's listening ports.
        #[arg(long)]
        ports: bool,
    },
    /// Open a new terminal pane beside --near PANE (or, with neither --near nor a side, beside
    /// the wall's largest pane) and print its handle.
    ///
    /// Without a command it runs your login shell. The focus stays where it is.
    Split {
        #[command(flatten)]
        place: Place,
        /// The program and its arguments, after `--`.
        #[arg(last = true, value_name = "CMD")]
        command: Vec<String>,
    },
    /// Print the handle of the live pane already running CMD in DIR, else start it in a new
    /// pane ("start the dev server unless it runs").
    ///
    /// Only panes started with exactly this command line (by ph split/ensure or the API)
    /// count, not commands typed into a shell.
    Ensure {
        #[command(flatten)]
        place: Place,
        /// The program and its arguments, after `--`.
        #[arg(last = true, required = true, value_name = "CMD")]
        command: Vec<String>,
    },
    /// Open a URL, a loopback :PORT, or a terminal pane's one listening port in a browser
    /// pane beside --near PANE (else beside the wall's largest pane). Reuses a pane already
    /// showing it. The focus stays.
    Open {
        /// http(s) URL, localhost:PORT, :PORT, or a terminal pane (t3) listening on one port.
        target: String,
        /// How to show it (default: iframe for http, screencast for https).
        #[arg(long, value_enum)]
        mode: Option<Mode>,
        /// The pane to open beside (default: this one).
        #[arg(long, value_name = "PANE")]
        near: Option<String>,
    },
    /// Start a layout of the project file (.porthole.toml) nearest this pane's directory:
    /// reuse the panes already running its commands, start the rest, open its browsers.
    ///
    /// Without NAME: the layout named "default", else the first. A file the human has not
    /// trusted yet starts nothing: exit 2 [untrusted_project], and the Porthole window asks
    /// the human to trust it (only the human can); run this again after.
    Up {
        /// The layout's name.
        name: Option<String>,
        /// The pane whose directory finds the project file, and beside which panes start
        /// (default: this one).
        #[arg(long, value_name = "PANE")]
        near: Option<String>,
    },
    /// Type text and keys into a terminal pane.
    ///
    /// Keys: enter, tab, shift+tab, esc, backspace, delete, space, up, down, left, right,
    /// home, end, pageup, pagedown, insert, f1..f12, and ctrl+/alt+/shift+ combinations such
    /// as ctrl+c, alt+x, ctrl+left. Text goes first, then the keys in order.
    Send {
        /// The terminal pane.
        pane: String,
        /// Text to type as is.
        #[arg(long, value_name = "T")]
        text: Option<String>,
        /// A key to press after the text (repeatable).
        #[arg(long = "key", value_name = "K")]
        keys: Vec<String>,
        /// Also type what arrives on standard input (after --text).
        #[arg(long)]
        stdin: bool,
    },
    /// Print a terminal pane's screen as text (what the human sees), optionally with
    /// history above it.
    Read {
        /// The terminal pane.
        pane: String,
        /// Also print up to N lines of history above the screen (at most 10000; 2000 are kept).
        #[arg(long, value_name = "N", default_value_t = 0)]
        scrollback: u64,
    },
    /// Wait until a terminal pane is quiet, its program exits, or a screen line matches.
    ///
    /// Exit 4 when the timeout passes; with --until exit, prints the exit code.
    Wait {
        /// The terminal pane.
        pane: String,
        /// quiet[=MS] (no output for MS ms, default 500), exit, or text=REGEX.
        #[arg(long, value_parser = parse_until, value_name = "WHAT")]
        until: Until,
        /// Give up after S seconds (default 30, at most 600).
        #[arg(long, value_parser = parse_timeout, default_value = "30", value_name = "S")]
        timeout: f64,
    },
    /// List the TCP ports a terminal pane's processes listen on.
    Ports {
        /// The terminal pane.
        pane: String,
    },
    /// Focus a pane (restoring it if minimized).
    Focus {
        /// The pane.
        pane: String,
    },
    /// Zoom a pane to fill the wall.
    Zoom {
        /// The pane.
        pane: String,
    },
    /// Undo a zoom.
    Unzoom {
        /// The pane.
        pane: String,
    },
    /// Minimize a pane to the baseboard.
    Minimize {
        /// The pane.
        pane: String,
    },
    /// Bring a minimized pane back where it was.
    Restore {
        /// The pane.
        pane: String,
    },
    /// Close a pane (a terminal pane's programs are hung up).
    Close {
        /// The pane.
        pane: String,
    },
    /// Observe and drive a browser pane's own Chromium (a screencast or popped-out pane)
    /// while the human watches: snapshot with refs, click, fill, wait, screenshot.
    ///
    /// Without --pane: the browser pane this terminal opened last, else the only one.
    Browser {
        /// The browser pane (a handle, :PORT, title:TEXT, focused).
        #[arg(long, global = true, value_name = "PANE")]
        pane: Option<String>,
        #[command(subcommand)]
        cmd: BrowserCmd,
    },
    /// Workspaces (the tabs of the window's strip).
    Workspace {
        #[command(subcommand)]
        cmd: WorkspaceCmd,
    },
    /// Print a concise guide for coding agents: the verbs, targets, refs, refusals, exit
    /// codes and the rules an agent keeps.
    Skill,
    /// Serve these verbs as MCP tools over stdin/stdout (for an agent's MCP config:
    /// {"command":"ph","args":["mcp"]}).
    Mcp,
    /// Porthole's configuration file (config.toml).
    Config {
        #[command(subcommand)]
        cmd: ConfigCmd,
    },
    /// Print a completion script: `ph completions bash > ~/.local/share/bash-completion/completions/ph`.
    Completions {
        /// bash, zsh, fish, elvish or powershell.
        shell: clap_complete::Shell,
    },
}

/// `ph config` verbs.
#[derive(Debug, Subcommand)]
pub enum ConfigCmd {
    /// Print the commented default config.toml (the same text as
    /// `porthole-sidecar --print-default-config`).
    Default,
}

/// What `ph browser get` reads.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum GetWhat {
    /// The element's rendered text.
    Text,
    /// A field's value (never a password or payment field's).
    Value,
}

/// What `ph browser tabs` does to a tab.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum TabAction {
    /// Open a URL in a new tab, which becomes the active one.
    New,
    /// Make it the active tab.
    Select,
    /// Close it.
    Close,
}

/// `offline on|off`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OnOff {
    /// Offline.
    On,
    /// Back online.
    Off,
}

/// How `ph browser dialog` answers.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum DialogAnswer {
    /// OK (with --text for a prompt).
    Accept,
    /// Cancel.
    Dismiss,
}

/// The verbs of `ph browser`.
#[derive(Debug, Subcommand)]
pub enum BrowserCmd {
    /// Open a URL or :PORT (path, query and fragment as given) in this terminal's own
    /// browser pane, or in a new screencast pane beside --near PANE (else beside the wall's
    /// largest pane) when it has none, and print its handle; later verbs act on it by
    /// default. Another terminal's pane is never reused.
    Open {
        /// http(s) URL, localhost:PORT, :PORT, or a terminal pane listening on one port.
        target: String,
        /// The pane to open beside (default: this one).
        #[arg(long, value_name = "PANE")]
        near: Option<String>,
        /// A new pane even when this terminal has one (it becomes the default).
        #[arg(long)]
        new: bool,
        /// A new pane whose browser keeps its own cookies (other panes share one login).
        #[arg(long)]
        isolated: bool,
    },
    /// Print the page as an outline of roles, names and states, with refs (e1, e2, …) on
    /// what can be acted on; cross-site frames and open shadow roots in place.
    Snapshot {
        /// Only the controls, one per line.
        #[arg(short, long)]
        interactive: bool,
        /// Only this element and what is inside it.
        #[arg(long = "ref", value_name = "REF")]
        target: Option<String>,
        /// The outline's budget in bytes (default 16384, 1024..=1048576).
        #[arg(long, value_name = "N")]
        max_bytes: Option<usize>,
        /// Continue a cut snapshot from its cursor (same options).
        #[arg(long, value_name = "CURSOR")]
        from: Option<String>,
        /// Only matching lines, with their ancestors: role=R,name~=TEXT (name=N exact).
        #[arg(long, value_name = "Q")]
        query: Option<String>,
        /// Only what changed since your last snapshot of this document.
        #[arg(long, conflicts_with_all = ["from", "query", "target"])]
        diff: bool,
        /// Also list the controls inside closed shadow roots (role, name, states, rect and a
        /// token sN that click, fill, type… take; never a value), as the policy allows.
        #[arg(long)]
        sealed: bool,
    },
    /// Find elements and texts by text (case-insensitive), or by role and name, in page
    /// order: refs where actionable, else the whole text and where it is.
    #[command(group(clap::ArgGroup::new("what").required(true).args(["text", "role"])))]
    Find {
        /// Text in the element's name or the text's own words.
        text: Option<String>,
        /// The role (button, link, heading, text…).
        #[arg(long, value_name = "R")]
        role: Option<String>,
        /// Part of the name (with --role).
        #[arg(long, value_name = "N", requires = "role")]
        name: Option<String>,
        /// Most matches printed (default 20, 1..=500).
        #[arg(long, value_name = "N")]
        limit: Option<usize>,
    },
    /// Print the readable text of the page (main content first, navigation last) or of an
    /// element, links and controls inline with their refs.
    Text {
        /// Only this element.
        #[arg(long = "ref", value_name = "REF")]
        target: Option<String>,
        /// The budget in bytes (default 16384, 1024..=1048576).
        #[arg(long, value_name = "N")]
        max_bytes: Option<usize>,
    },
    /// Click an element (trusted input at its visible point).
    Click {
        /// A ref from the last snapshot (e3).
        #[arg(value_name = "REF")]
        target: String,
        /// `right`: a right click (the page's context menu).
        #[arg(long, value_name = "left|right", value_parser = ["left", "right"])]
        button: Option<String>,
    },
    /// Double-click an element.
    Dblclick {
        /// A ref from the last snapshot.
        #[arg(value_name = "REF")]
        target: String,
    },
    /// Move the mouse onto an element.
    Hover {
        /// A ref from the last snapshot.
        #[arg(value_name = "REF")]
        target: String,
    },
    /// Focus an element.
    Focus {
        /// A ref from the last snapshot.
        #[arg(value_name = "REF")]
        target: String,
    },
    /// Check a checkbox, radio or switch (nothing if it is checked); verified after.
    Check {
        /// A ref from the last snapshot.
        #[arg(value_name = "REF")]
        target: String,
    },
    /// Uncheck a checkbox or switch (nothing if it is not checked); verified after.
    Uncheck {
        /// A ref from the last snapshot.
        #[arg(value_name = "REF")]
        target: String,
    },
    /// Replace a field's value with TEXT, then read it back (exit 3 if the page changed it).
    Fill {
        /// A ref from the last snapshot.
        #[arg(value_name = "REF")]
        target: String,
        /// The new value.
        text: String,
    },
    /// Type TEXT key by key at the end of a field.
    Type {
        /// A ref from the last snapshot.
        #[arg(value_name = "REF")]
        target: String,
        /// The text to type.
        text: String,
    },
    /// Press a key (Enter, Tab, Escape, ArrowDown, a, Control+a, Shift+Tab) on the focused
    /// element, or on --ref after focusing it.
    Press {
        /// The key.
        key: String,
        /// Focus this ref first.
        #[arg(long = "ref", value_name = "REF")]
        target: Option<String>,
    },
    /// Wait until the page shows (or no longer shows) a text, its URL matches, it has
    /// loaded, an element is in a state, or the tab's next event of a kind. Exit 4 when the
    /// timeout passes; exit 2 (stale_ref) when the element's ref goes stale meanwhile.
    #[command(group(clap::ArgGroup::new("what").required(true).args(["text", "gone", "url", "load", "ref_state", "event"])))]
    Wait {
        /// The page's text contains T.
        #[arg(long, value_name = "T")]
        text: Option<String>,
        /// The page's text no longer contains T.
        #[arg(long, value_name = "T")]
        gone: Option<String>,
        /// The URL matches this regular expression.
        #[arg(long, value_name = "PATTERN")]
        url: Option<String>,
        /// The page has loaded (document.readyState is complete).
        #[arg(long)]
        load: bool,
        /// REF=STATE: the element is visible, hidden, enabled, disabled, checked, unchecked,
        /// editable or focused.
        #[arg(long, value_parser = parse_ref_state, value_name = "REF=STATE")]
        ref_state: Option<RefStateArg>,
        /// The next event of this kind after the call (see events); prints it.
        #[arg(long, value_name = "KIND", value_parser = sidecar::automation::EVENT_KINDS.to_vec())]
        event: Option<String>,
        /// Give up after S seconds (default 30, at most 600).
        #[arg(long, value_parser = parse_timeout, default_value = "30", value_name = "S")]
        timeout: f64,
    },
    /// Print an element's text, or a field's value (never a password's).
    Get {
        /// text or value.
        #[arg(value_enum)]
        what: GetWhat,
        /// A ref from the last snapshot.
        #[arg(value_name = "REF")]
        target: String,
    },
    /// Save a PNG of the viewport (or one element, or the whole page) and print its path.
    /// Over MCP: an image, scaled to at most 1568 px on its long side (--output also
    /// writes the original).
    Screenshot {
        /// Only this element.
        #[arg(long = "ref", value_name = "REF", conflicts_with = "full")]
        target: Option<String>,
        /// The whole page, not just the viewport.
        #[arg(long)]
        full: bool,
        /// Outline closed components' exported parts for this capture (the page can see
        /// the added style while it lasts), as the policy allows.
        #[arg(long)]
        parts: bool,
        /// Number boxes on the refs on screen and print their legend ([3] e12 button "Save").
        #[arg(long, conflicts_with_all = ["target", "full", "parts"])]
        annotate: bool,
        /// Write it here (default: a new file in the temp directory).
        #[arg(short, long, value_name = "FILE")]
        output: Option<std::path::PathBuf>,
    },
    /// Go to a URL in the active tab.
    Navigate {
        /// http(s) URL or localhost:PORT.
        url: String,
    },
    /// Go back in the active tab's history.
    Back,
    /// Go forward in the active tab's history.
    Forward,
    /// Reload the active tab.
    Reload,
    /// List the tabs (* marks the active one) and a pending dialog; or open URL in a new
    /// tab, make a tab the active one, or close it (TAB: its number in the list, or its id).
    Tabs {
        /// new, select or close (none: list).
        #[arg(value_enum, requires = "tab")]
        action: Option<TabAction>,
        /// The tab (1, 2, … as listed, or its id); for new, the URL.
        #[arg(value_name = "TAB|URL")]
        tab: Option<String>,
    },
    /// Choose options of a <select> by value or label with trusted input (arrow keys for a
    /// single choice, whose popup is never drawn in the pane; clicks, Ctrl+clicks for a
    /// multiple one), then read the selection back.
    Select {
        /// A ref from the last snapshot.
        #[arg(value_name = "REF")]
        target: String,
        /// The options' values or labels (one for a single-choice select).
        #[arg(required = true, value_name = "VALUE")]
        values: Vec<String>,
    },
    /// Set a date, time, datetime-local, month, week, range or color input to VALUE (as HTML
    /// spells it: 2026-12-07, 14:30, 2026-12-07T14:30, 2026-12, 2026-W49, 50, #ff8800)
    /// with trusted keys, then read it back.
    Set {
        /// A ref from the last snapshot.
        #[arg(value_name = "REF")]
        target: String,
        /// The value.
        value: String,
    },
    /// Scroll the page (or the element under --ref) with the mouse wheel: up, down (most of
    /// a screen), top, bottom, or PX CSS pixels (negative: up).
    Scroll {
        /// up, down, top, bottom or PX.
        #[arg(allow_negative_numbers = true, value_name = "WHERE")]
        to: String,
        /// Scroll what is under this element (its scroller first).
        #[arg(long = "ref", value_name = "REF")]
        target: Option<String>,
    },
    /// Scroll an element and every scrolling ancestor until it shows, and print the part of
    /// it still visible (viewport CSS px).
    ScrollTo {
        /// A ref from the last snapshot.
        #[arg(value_name = "REF")]
        target: String,
    },
    /// Give files to a file input (or the <label> of one) as the file chooser would, then
    /// read its files back. Several files only for an input with the multiple attribute.
    Upload {
        /// A ref from the last snapshot: the file input or its label.
        #[arg(value_name = "REF")]
        target: String,
        /// The files (relative to this directory), 1 to 64.
        #[arg(required = true, num_args = 1..=64, value_name = "FILE")]
        files: Vec<std::path::PathBuf>,
    },
    /// Drag one element onto another with the mouse (trusted input from the first one's
    /// visible point to the second one's): HTML5 drag and drop and pointer-event dragging.
    Drag {
        /// The element to drag: a ref from the last snapshot.
        #[arg(value_name = "REF")]
        target: String,
        /// The element to drop it on.
        #[arg(value_name = "TO")]
        to: String,
    },
    /// Set the page's viewport to W×H CSS pixels (fixed; the pane scales it).
    Viewport {
        /// Width in CSS px (100..=7680).
        width: u32,
        /// Height in CSS px (100..=7680).
        height: u32,
        /// Device pixel ratio (0.5..=4, default 1).
        #[arg(long, value_name = "D")]
        dpr: Option<f64>,
    },
    /// Answer the pending JavaScript dialog.
    Dialog {
        /// accept or dismiss.
        #[arg(value_enum)]
        answer: DialogAnswer,
        /// A prompt's text (with accept).
        #[arg(long, value_name = "T")]
        text: Option<String>,
    },
    /// Print what the active tab's page logged (console calls, uncaught exceptions, browser
    /// messages such as failed loads), oldest first, kept since the tab opened.
    Console {
        /// Only this level and above: debug, info, warning, error.
        #[arg(long, value_name = "L", value_parser = ["debug", "info", "warning", "error"])]
        level: Option<String>,
        /// Only since the current document started (its last navigation or reload).
        #[arg(long)]
        since_navigation: bool,
    },
    /// Print the active tab's requests ([N] method, status or error, URL, type), oldest
    /// first; --id N: one in full (headers, timing, bodies up to 64 KiB; credentials
    /// redacted); --har FILE: all as HAR 1.2.
    Network {
        /// Only the requests that failed or were answered 400 or above.
        #[arg(long, conflicts_with_all = ["id", "har"])]
        failed: bool,
        /// Request N of the list, in full.
        #[arg(long, value_name = "N", conflicts_with = "har")]
        id: Option<u64>,
        /// Write the kept requests as HAR 1.2 to FILE.
        #[arg(long, value_name = "FILE")]
        har: Option<std::path::PathBuf>,
    },
    /// Mock or block the active tab's requests whose URL matches PATTERN (glob: * any run):
    /// answer them with --status S [--body-file F] [--header K:V]…, fail them (--abort),
    /// or remove the route (--off; without PATTERN: all). --list lists them. At most 32;
    /// they go with the tab.
    #[command(group(clap::ArgGroup::new("how").required(true).args(["status", "abort", "off", "list"])))]
    Route {
        /// The URL glob (*/api/orders*).
        #[arg(value_name = "PATTERN", required_unless_present_any = ["off", "list"])]
        pattern: Option<String>,
        /// Answer with this HTTP status (100..=599).
        #[arg(long, value_name = "S", value_parser = clap::value_parser!(u16).range(100..=599))]
        status: Option<u16>,
        /// The answer's body, from this file (at most 1 MiB).
        #[arg(long, value_name = "F", conflicts_with_all = ["abort", "off", "list"])]
        body_file: Option<std::path::PathBuf>,
        /// An answer header (repeatable).
        #[arg(long = "header", value_name = "K:V", conflicts_with_all = ["abort", "off", "list"])]
        headers: Vec<String>,
        /// Fail them (net::ERR_BLOCKED_BY_CLIENT).
        #[arg(long)]
        abort: bool,
        /// Remove the route of PATTERN (all without one).
        #[arg(long)]
        off: bool,
        /// List the tab's routes and their hits.
        #[arg(long, conflicts_with = "pattern")]
        list: bool,
    },
    /// Cut the active tab off the network (its requests fail) or put it back.
    Offline {
        /// on or off.
        #[arg(value_enum, value_name = "STATE")]
        state: OnOff,
    },
    /// Print the active tab's events since it opened, oldest first, as SEQ KIND DETAIL
    /// (navigation, load, tab, dialog, download, console_error, request_failed, crash,
    /// disconnect, stalled_navigation, unresponsive, not_painting).
    Events {
        /// Keep printing new events until interrupted.
        #[arg(long)]
        follow: bool,
        /// Only the events after this seq.
        #[arg(long, value_name = "N")]
        since: Option<u64>,
    },
    /// List this browser's downloads (name, state, bytes, and the file's path once done).
    Downloads,
    /// Print the human's sealed-content policy ([agent.sealed]: what an agent may do with
    /// closed shadow roots). Read-only: only the human changes it (Settings, config.toml).
    Policy,
    /// Walk focus through a closed shadow host with trusted Tab (Shift+Tab with --back), one
    /// step about every 120 ms, reading what got focus after each: role, name, rect and an sN
    /// token inside the host. Stops at the step limit or when focus leaves the host; press
    /// then acts on what it left focused. Moves focus (VISIBLE), as the policy allows.
    FocusWalk {
        /// The host's ref from the last snapshot (its line says [closed shadow root]).
        #[arg(value_name = "HOST")]
        target: String,
        /// Most steps (default and bound: agent.sealed.focus_walk_max_steps).
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=64))]
        max_steps: Option<u32>,
        /// Shift+Tab from just after the host.
        #[arg(long)]
        back: bool,
        /// Leave focus where it is when focus never entered the host.
        #[arg(long)]
        no_restore: bool,
    },
    /// Hand one step to the human (a 2FA code, a CAPTCHA, a payment, a consent screen) and
    /// wait: the pane shows REASON with "Done, hand back" and "Decline"; prints what changed
    /// (URL, title, tabs), never what the human typed. Exit 2 if declined, 4 on timeout.
    Handoff {
        /// What the human should do, in a sentence (1..=200 characters).
        #[arg(long, value_name = "TEXT")]
        reason: String,
        /// Give up after S seconds (default 300, at most 3600).
        #[arg(long, value_name = "S", value_parser = clap::value_parser!(u64).range(1..=3600))]
        timeout: Option<u64>,
    },
    /// Print the CDP work counted on the active tab (accessibility reads, shadow-piercing
    /// reads, sealed scans, cache hits, focus-walk steps).
    Stats,
    /// Evaluate JavaScript in the page and print its JSON value (only with --allow-eval).
    Eval {
        /// The expression.
        js: String,
        /// Allow it, for this call only.
        #[arg(long)]
        allow_eval: bool,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn until_values() {
        assert_eq!(parse_until("quiet"), Ok(Until::Quiet(None)));
        assert_eq!(parse_until("quiet=250"), Ok(Until::Quiet(Some(250))));
        assert_eq!(parse_until("exit"), Ok(Until::Exit));
        assert_eq!(parse_until("text=ok$"), Ok(Until::Text("ok$".into())));
        assert_eq!(parse_until("text=a=b"), Ok(Until::Text("a=b".into())));
        assert!(parse_until("quiet=x").is_err());
        assert!(parse_until("done").is_err());
    }

    #[test]
    fn workspace_new_takes_an_ssh_host_and_a_name() {
        match Cli::try_parse_from(["ph", "workspace", "new", "--ssh", "me@box:2222", "--name", "box"]).unwrap().cmd {
            Cmd::Workspace { cmd: WorkspaceCmd::New { ssh, name } } => {
                assert_eq!((ssh.as_deref(), name.as_deref()), (Some("me@box:2222"), Some("box")));
            }
            other => panic!("{other:?}"),
        }
        assert!(Cli::try_parse_from(["ph", "workspace", "new"]).is_ok());
        assert!(Cli::try_parse_from(["ph", "workspace"]).is_err(), "a verb is needed");
    }

    #[test]
    fn split_takes_a_command_after_the_double_dash() {
        let c = Cli::try_parse_from(["ph", "split", "--down", "--", "python3", "-m", "http.server", "--bind", "::"])
            .unwrap();
        match c.cmd {
            Cmd::Split { place, command } => {
                assert_eq!(place.side(), Some("down"));
                assert_eq!(command, ["python3", "-m", "http.server", "--bind", "::"]);
            }
            other => panic!("{other:?}"),
        }
        assert!(Cli::try_parse_from(["ph", "ensure"]).is_err(), "ensure needs a command");
        assert!(Cli::try_parse_from(["ph", "split", "--right", "--down"]).is_err());
        assert!(Cli::try_parse_from(["ph", "wait", "t1", "--until", "exit", "--timeout", "601"]).is_err());
    }

    #[test]
    fn browser_verbs_take_the_pane_anywhere_and_wait_needs_one_condition() {
        let c = Cli::try_parse_from(["ph", "browser", "fill", "e2", "hello", "--pane", "b3"]).unwrap();
        match c.cmd {
            Cmd::Browser { pane, cmd: BrowserCmd::Fill { target, text } } => {
                assert_eq!((pane.as_deref(), target.as_str(), text.as_str()), (Some("b3"), "e2", "hello"));
            }
            other => panic!("{other:?}"),
        }
        assert!(Cli::try_parse_from(["ph", "browser", "wait"]).is_err());
        assert!(Cli::try_parse_from(["ph", "browser", "wait", "--text", "a", "--load"]).is_err());
        assert!(Cli::try_parse_from(["ph", "browser", "snapshot", "-i"]).is_ok());
        assert!(Cli::try_parse_from(["ph", "browser", "snapshot", "-i", "--ref", "e4"]).is_ok());
        let p = |args: &[&str]| Cli::try_parse_from([&["ph", "browser"][..], args].concat());
        assert!(p(&["snapshot", "--from", "0a1b2c3d.40", "-i"]).is_ok());
        assert!(p(&["snapshot", "--query", "role=button,name~=save"]).is_ok());
        assert!(p(&["snapshot", "--diff", "--from", "0a1b2c3d.40"]).is_err(), "a diff is of the whole page");
        assert!(p(&["find"]).is_err(), "find needs a text or a role");
        assert!(p(&["find", "Pricing", "--limit", "5"]).is_ok());
        assert!(p(&["find", "--role", "link", "--name", "Pricing"]).is_ok());
        assert!(p(&["find", "--name", "Pricing"]).is_err(), "--name goes with --role");
        assert!(p(&["text", "--ref", "e3", "--max-bytes", "4096"]).is_ok());
        match Cli::try_parse_from(["ph", "browser", "wait", "--ref-state", "e3=checked"]).unwrap().cmd {
            Cmd::Browser { cmd: BrowserCmd::Wait { ref_state: Some(rs), .. }, .. } => {
                assert_eq!((rs.r#ref.as_str(), rs.state.as_str()), ("e3", "checked"));
            }
            other => panic!("{other:?}"),
        }
        assert!(Cli::try_parse_from(["ph", "browser", "wait", "--ref-state", "e3"]).is_err(), "needs =STATE");
        assert!(Cli::try_parse_from(["ph", "browser", "wait", "--ref-state", "e3=visible", "--load"]).is_err());
        assert!(Cli::try_parse_from(["ph", "browser", "screenshot", "--ref", "e1", "--full"]).is_err());
        assert!(Cli::try_parse_from(["ph", "browser", "scroll", "-200", "--ref", "e3"]).is_ok(), "negative PX");
        assert!(Cli::try_parse_from(["ph", "browser", "tabs", "close"]).is_err(), "close needs a tab");
        assert!(Cli::try_parse_from(["ph", "browser", "select", "e1"]).is_err(), "select needs a value");
        assert!(Cli::try_parse_from(["ph", "browser", "upload", "e1"]).is_err(), "upload needs a file");
        assert!(Cli::try_parse_from(["ph", "browser", "upload", "e1", "a", "b"]).is_ok());
        assert!(Cli::try_parse_from(["ph", "browser", "drag", "e1"]).is_err(), "drag needs a target");
        assert!(p(&["route", "*/api/*", "--status", "500", "--header", "A:b", "--header", "C:d"]).is_ok());
        assert!(p(&["route", "*/api/*"]).is_err(), "a route says what it does");
        assert!(p(&["route", "--status", "500"]).is_err(), "a mock needs a pattern");
        assert!(p(&["route", "*/api/*", "--status", "700"]).is_err());
        assert!(p(&["route", "*/api/*", "--abort", "--off"]).is_err());
        assert!(p(&["route", "--off"]).is_ok() && p(&["route", "--list"]).is_ok());
        assert!(p(&["route", "*/x", "--abort", "--header", "A:b"]).is_err(), "headers go with --status");
        assert!(p(&["screenshot", "--annotate"]).is_ok() && p(&["screenshot", "--annotate", "--full"]).is_err());
        assert!(p(&["offline", "on"]).is_ok() && p(&["offline", "maybe"]).is_err());
        assert!(p(&["network", "--id", "3", "--har", "x.har"]).is_err());
        assert!(p(&["events", "--follow", "--since", "4"]).is_ok());
        assert!(p(&["wait", "--event", "download", "--timeout", "5"]).is_ok());
        assert!(p(&["wait", "--event", "downloads"]).is_err(), "an event kind");
        assert!(p(&["wait", "--event", "tab", "--load"]).is_err(), "one condition");
        assert!(p(&["downloads"]).is_ok());
    }
}
