//! Command-line options of `porthole-sidecar` (protocol §1).

use std::path::PathBuf;

/// Parsed command line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Options {
    /// Port to bind on 127.0.0.1; 0 lets the OS choose.
    pub port: u16,
    /// Web mode: also serve the built UI at `/`.
    pub web: bool,
    /// Where the built UI lives; `None`: see [`default_ui_dir`].
    pub ui_dir: Option<PathBuf>,
    /// Append logs to this file as well as stderr.
    pub log_file: Option<PathBuf>,
    /// Shut down (as on SIGTERM) once the parent process is gone.
    pub exit_with_parent: bool,
    /// Most terminals open at once (running, or exited and not deleted), 1..=4096;
    /// `None`: [`DEFAULT_MAX_TERMINALS`].
    pub max_terminals: Option<usize>,
    /// Print the commented default `config.toml` and exit (`--print-default-config`).
    pub print_default_config: bool,
    /// Run as the attach relay on a remote machine (`--remote-attach`, protocol §11.1).
    pub remote_attach: bool,
    /// Run as the remote daemon (`--remote-daemon`, protocol §11.2).
    pub remote_daemon: bool,
    /// `ssh -F PATH` for remote links (`--ssh-config`; else `$PORTHOLE_SSH_CONFIG`).
    pub ssh_config: Option<PathBuf>,
}

/// Most terminals open at once unless `--max-terminals` says otherwise.
pub const DEFAULT_MAX_TERMINALS: usize = 256;
/// Largest `--max-terminals` accepted (each terminal runs four threads).
pub const MAX_MAX_TERMINALS: usize = 4096;

impl Options {
    /// The limit on open terminals: `--max-terminals`, else [`DEFAULT_MAX_TERMINALS`].
    pub fn max_terminals(&self) -> usize {
        self.max_terminals.unwrap_or(DEFAULT_MAX_TERMINALS)
    }
}

/// Usage text printed for `--help` and on errors.
pub const USAGE: &str = "usage: porthole-sidecar [--port N] [--web] [--ui-dir DIR] \
                         [--log-file PATH] [--exit-with-parent] [--max-terminals N] \
                         [--print-default-config] [--ssh-config PATH] \
                         | --remote-attach | --remote-daemon";

/// Why the command line was not accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CliError {
    /// Occurs when `--help` or `-h` is given: print [`USAGE`] and exit successfully.
    Help,
    /// Occurs when an argument is unknown, lacks its value, or has a bad value (the message
    /// names it).
    Usage(String),
}

impl std::fmt::Display for CliError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CliError::Help => f.write_str(USAGE),
            CliError::Usage(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for CliError {}

/// Parses arguments (without the program name). Accepts `--flag value` and `--flag=value`.
pub fn parse<I: IntoIterator<Item = String>>(args: I) -> Result<Options, CliError> {
    parse_inner(args).map_err(|m| if m == "help" { CliError::Help } else { CliError::Usage(m) })
}

fn parse_inner<I: IntoIterator<Item = String>>(args: I) -> Result<Options, String> {
    let mut o = Options::default();
    let mut it = args.into_iter();
    while let Some(arg) = it.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
            _ => (arg.clone(), None),
        };
        let mut value = |name: &str| -> Result<String, String> {
            inline.clone().or_else(|| it.next()).ok_or_else(|| format!("{name} needs a value"))
        };
        match flag.as_str() {
            "--port" => {
                let v = value("--port")?;
                o.port = v.parse().map_err(|_| format!("--port must be 0..=65535, got {v:?}"))?;
            }
            "--web" if inline.is_none() => o.web = true,
            "--exit-with-parent" if inline.is_none() => o.exit_with_parent = true,
            "--print-default-config" if inline.is_none() => o.print_default_config = true,
            "--remote-attach" if inline.is_none() => o.remote_attach = true,
            "--remote-daemon" if inline.is_none() => o.remote_daemon = true,
            "--ssh-config" => o.ssh_config = Some(PathBuf::from(value("--ssh-config")?)),
            "--ui-dir" => o.ui_dir = Some(PathBuf::from(value("--ui-dir")?)),
            "--log-file" => o.log_file = Some(PathBuf::from(value("--log-file")?)),
            "--max-terminals" => {
                let v = value("--max-terminals")?;
                let n = v.parse().ok().filter(|n| (1..=MAX_MAX_TERMINALS).contains(n));
                o.max_terminals =
                    Some(n.ok_or_else(|| format!("--max-terminals must be 1..={MAX_MAX_TERMINALS}, got {v:?}"))?);
            }
            "--help" | "-h" => return Err("help".into()),
            _ => return Err(format!("unknown argument {arg:?}")),
        }
    }
    Ok(o)
}

/// The UI directory when `--ui-dir` is not given: `$PORTHOLE_UI_DIR`, else `ui/` beside the
/// executable if it exists, else `../../ui/dist` relative to the executable (a dev checkout:
/// `target/<profile>/porthole-sidecar`).
pub fn default_ui_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("PORTHOLE_UI_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(d);
    }
    let exe_dir =
        std::env::current_exe().ok().and_then(|p| p.parent().map(PathBuf::from)).unwrap_or_else(|| PathBuf::from("."));
    let beside = exe_dir.join("ui");
    if beside.is_dir() {
        return beside;
    }
    exe_dir.join("../../ui/dist")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(args: &[&str]) -> Result<Options, CliError> {
        parse(args.iter().map(|s| s.to_string()))
    }

    #[test]
    fn parses_flags_in_both_spellings() {
        assert_eq!(p(&[]).unwrap(), Options::default());
        let o = p(&["--port", "8080", "--web", "--ui-dir", "/x", "--log-file=/l", "--exit-with-parent"]).unwrap();
        assert!(o.exit_with_parent);
        assert!(p(&["--print-default-config"]).unwrap().print_default_config);
        assert!(p(&["--remote-attach"]).unwrap().remote_attach);
        assert!(p(&["--remote-daemon"]).unwrap().remote_daemon);
        assert_eq!(p(&["--ssh-config=/c"]).unwrap().ssh_config, Some(PathBuf::from("/c")));
        assert_eq!(o.port, 8080);
        assert!(o.web);
        assert_eq!(o.ui_dir, Some(PathBuf::from("/x")));
        assert_eq!(o.log_file, Some(PathBuf::from("/l")));
        assert_eq!(p(&["--port=0"]).unwrap().port, 0);
        assert_eq!(p(&[]).unwrap().max_terminals(), DEFAULT_MAX_TERMINALS);
        assert_eq!(p(&["--max-terminals", "3"]).unwrap().max_terminals(), 3);
        assert_eq!(p(&["--max-terminals=4096"]).unwrap().max_terminals(), 4096);
    }

    #[test]
    fn refuses_bad_arguments() {
        for bad in [
            &["--port"][..],
            &["--port", "70000"],
            &["--port", "x"],
            &["--nope"],
            &["web"],
            &["--web=1"],
            &["--max-terminals", "0"],
            &["--max-terminals", "4097"],
            &["--max-terminals", "-1"],
        ] {
            assert!(p(bad).is_err(), "{bad:?}");
        }
        assert_eq!(p(&["--help"]), Err(CliError::Help));
        assert!(matches!(p(&["--nope"]), Err(CliError::Usage(m)) if m.contains("--nope")));
    }
}
