//! The command line (clap): verbs, flags and their help (docs/cli.md mirrors it).

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

/// The verbs.
#[derive(Debug, Subcommand)]
pub enum Cmd {
    /// List the panes: handle, kind, title, cwd or URL, mode, state.
    List {
        /// Also list each terminal's listening ports.
        #[arg(long)]
        ports: bool,
    },
    /// Open a new terminal pane beside this one (or --near PANE) and print its handle.
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
    /// pane beside this one. Reuses a pane already showing it. The focus stays.
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
    /// Print a completion script: `ph completions bash > ~/.local/share/bash-completion/completions/ph`.
    Completions {
        /// bash, zsh, fish, elvish or powershell.
        shell: clap_complete::Shell,
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
}
