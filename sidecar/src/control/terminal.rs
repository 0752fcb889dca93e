//! The terminal verbs the sidecar answers alone (protocol §9.5): sending text and keys to a
//! pane's PTY, waiting on its screen, and the title `ph list` shows. No window is involved.

use std::time::Duration;

use super::error::ControlError;
use super::handle::Handle;
use super::keys::{key_bytes, CursorKeys};
use crate::pty::{Terminal, TerminalInfo};

/// Largest `text` accepted by `send`, in bytes.
pub const MAX_SEND_TEXT_BYTES: usize = 128 * 1024;
/// Most keys in one `send`.
pub const MAX_SEND_KEYS: usize = 64;
/// Most history lines `read` returns.
pub const MAX_READ_SCROLLBACK: usize = 10_000;
/// Longest `wait` (also the bound of `ph browser wait`), in milliseconds.
pub const MAX_WAIT_MS: u64 = 600_000;
/// `wait`'s timeout when none is given, in milliseconds.
pub const DEFAULT_WAIT_MS: u64 = 30_000;
/// `wait --until quiet`'s quiet time when none is given, in milliseconds.
pub const DEFAULT_QUIET_MS: u64 = 500;
/// Longest `text=` pattern, in bytes.
pub const MAX_REGEX_BYTES: usize = 1024;
/// The bound on a compiled pattern's program and DFA, in bytes.
const REGEX_SIZE_LIMIT: usize = 1 << 20;
/// Input is written to the PTY in pieces of at most this many bytes (the socket's message cap).
const SEND_CHUNK_BYTES: usize = 64 * 1024;

/// Compiles a `text=` pattern within its bounds (1..=[`MAX_REGEX_BYTES`] bytes, program
/// and DFA at most 1 MiB each), so a small pattern with a huge program is refused rather
/// than compiled for minutes.
///
/// Errors: `bad_regex`.
pub fn compile_regex(p: &str) -> Result<regex::Regex, ControlError> {
    if p.is_empty() || p.len() > MAX_REGEX_BYTES {
        return Err(ControlError::BadRegex(format!(
            "the pattern must be 1..={MAX_REGEX_BYTES} bytes, got {}",
            p.len()
        )));
    }
    regex::RegexBuilder::new(p)
        .size_limit(REGEX_SIZE_LIMIT)
        .dfa_size_limit(REGEX_SIZE_LIMIT)
        .build()
        .map_err(|e| ControlError::BadRegex(format!("bad pattern: {e}")))
}

/// A duration in milliseconds named `name`, `default` when absent, within
/// 1..=[`MAX_WAIT_MS`].
///
/// Errors: `bad_request` naming the field.
pub fn wait_ms(name: &str, v: Option<u64>, default: u64) -> Result<Duration, ControlError> {
    let v = v.unwrap_or(default);
    if v == 0 || v > MAX_WAIT_MS {
        return Err(ControlError::BadRequest(format!("{name} must be 1..={MAX_WAIT_MS}, got {v}")));
    }
    Ok(Duration::from_millis(v))
}

/// What `wait` waits for.
#[derive(Debug)]
pub enum Until {
    /// No output for this long.
    Quiet(Duration),
    /// The program's end.
    Exit,
    /// A screen row matching the pattern.
    Text(regex::Regex),
}

impl Until {
    /// Builds the condition from `wait`'s fields (protocol §9.5): `until` is `quiet`, `exit`
    /// or `text`; `quiet_ms` goes only with `quiet` (default 500), `regex` only with `text`.
    ///
    /// Errors: `bad_request` for a wrong word or a field with the wrong condition;
    /// `bad_regex` for a pattern out of bounds.
    pub fn parse(until: &str, quiet_ms: Option<u64>, regex: Option<&str>) -> Result<Until, ControlError> {
        let u = match until {
            "quiet" => Until::Quiet(wait_ms("quiet_ms", quiet_ms, DEFAULT_QUIET_MS)?),
            "exit" => Until::Exit,
            "text" => Until::Text(compile_regex(regex.unwrap_or(""))?),
            u => return Err(ControlError::BadRequest(format!("until must be quiet, exit or text, got {u:?}"))),
        };
        if !matches!(u, Until::Text(_)) && regex.is_some() {
            return Err(ControlError::BadRequest("regex goes with until=text".into()));
        }
        if !matches!(u, Until::Quiet(_)) && quiet_ms.is_some() {
            return Err(ControlError::BadRequest("quiet_ms goes with until=quiet".into()));
        }
        Ok(u)
    }
}

/// What a `wait` saw.
#[derive(Debug, Clone, PartialEq)]
pub enum Waited {
    /// The program ended with this code.
    Exit(i32),
    /// This screen row matched.
    Text(String),
    /// The terminal was quiet long enough.
    Quiet,
}

/// Waits on `term` (pane `handle`) until `until` holds or `timeout` passes. Output only
/// moves a quiet wait's end later, so it sleeps to the earliest possible end.
///
/// Errors: `timed_out` naming the pane and the timeout.
pub async fn wait(term: &Terminal, handle: Handle, until: &Until, timeout: Duration) -> Result<Waited, ControlError> {
    let deadline = tokio::time::Instant::now() + timeout;
    let mut changes = term.changes();
    let timed_out = || ControlError::TimedOut(format!("{handle}: nothing matched within {} ms", timeout.as_millis()));
    loop {
        changes.mark_unchanged();
        match until {
            Until::Exit => {
                if let Some(code) = term.exit_code() {
                    return Ok(Waited::Exit(code));
                }
            }
            Until::Text(re) => {
                if let Some(line) = term.screen_rows().into_iter().find(|l| re.is_match(l)) {
                    return Ok(Waited::Text(line));
                }
            }
            Until::Quiet(quiet) => {
                let since = term.last_output().elapsed();
                if since >= *quiet {
                    return Ok(Waited::Quiet);
                }
                let wake = tokio::time::Instant::now() + (*quiet - since);
                if wake > deadline {
                    tokio::time::sleep_until(deadline).await;
                    return Err(timed_out());
                }
                tokio::time::sleep_until(wake).await;
                continue;
            }
        }
        match tokio::time::timeout_at(deadline, changes.changed()).await {
            Ok(Ok(())) => {}
            // The terminal went away: its final state was checked above; check once more.
            Ok(Err(_)) => {
                if let (Until::Exit, Some(code)) = (until, term.exit_code()) {
                    return Ok(Waited::Exit(code));
                }
                tokio::time::sleep_until(deadline).await;
                return Err(timed_out());
            }
            Err(_) => return Err(timed_out()),
        }
    }
}

/// What `send` writes: text, then named keys, within their bounds.
#[derive(Debug, Clone)]
pub struct Input {
    text: String,
    keys: Vec<String>,
}

impl Input {
    /// Bounds `send`'s fields.
    ///
    /// Errors: `bad_request` for text over [`MAX_SEND_TEXT_BYTES`], more than
    /// [`MAX_SEND_KEYS`] keys, or nothing to send.
    pub fn new(text: String, keys: Vec<String>) -> Result<Input, ControlError> {
        if text.len() > MAX_SEND_TEXT_BYTES {
            return Err(ControlError::BadRequest(format!(
                "text is {} bytes, at most {MAX_SEND_TEXT_BYTES}",
                text.len()
            )));
        }
        if keys.len() > MAX_SEND_KEYS {
            return Err(ControlError::BadRequest(format!("{} keys, at most {MAX_SEND_KEYS}", keys.len())));
        }
        if text.is_empty() && keys.is_empty() {
            return Err(ControlError::BadRequest("nothing to send: give text or keys".into()));
        }
        Ok(Input { text, keys })
    }
}

/// Sends `input` to `term`'s PTY (pane `handle`) and returns the number of bytes written.
/// Every key is checked before anything is written: a bad key sends nothing.
///
/// Errors: `bad_key`; `exited` when the program ended (before or while writing).
pub async fn send(term: &Terminal, handle: Handle, input: Input) -> Result<usize, ControlError> {
    if let Some(code) = term.exit_code() {
        return Err(ControlError::Exited { handle: handle.to_string(), code });
    }
    let mode = if term.application_cursor() { CursorKeys::Application } else { CursorKeys::Normal };
    let mut bytes = input.text.into_bytes();
    for k in &input.keys {
        bytes.extend(key_bytes(k, mode)?);
    }
    let n = bytes.len();
    for chunk in bytes.chunks(SEND_CHUNK_BYTES) {
        term.write_input(chunk.to_vec())
            .await
            .map_err(|_| ControlError::Exited { handle: handle.to_string(), code: term.exit_code().unwrap_or(-1) })?;
    }
    Ok(n)
}

/// The title `ph list` shows for a terminal pane: what its header shows (the UI's
/// `paneLabel`, DESIGN §13), so `ph list` and the wall agree. While the shell integration
/// reports a command running: its command line (else the foreground program); a shell
/// without integration running another program in the foreground: that program's name;
/// otherwise `reported`, the window's title for it (OSC title, else its command), else the
/// foreground program's name, else the command it was started with.
pub fn terminal_title(info: &TerminalInfo, reported: &str) -> String {
    let fallback = || {
        if reported.is_empty() {
            info.foreground.clone().unwrap_or_else(|| info.command.join(" "))
        } else {
            reported.to_string()
        }
    };
    if !info.alive {
        return fallback();
    }
    if let Some(running) = &info.shell.running {
        return running.command.clone().or_else(|| info.foreground.clone()).unwrap_or_else(fallback);
    }
    match (&info.foreground, info.shell.integration, info.busy) {
        (Some(fg), false, true) => fg.clone(),
        _ => fallback(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regexes_are_bounded() {
        assert!(compile_regex("ok$").is_ok());
        assert_eq!(compile_regex("").unwrap_err().status_and_code().1, "bad_regex");
        assert_eq!(compile_regex("(").unwrap_err().status_and_code().1, "bad_regex");
        assert_eq!(compile_regex(&"a".repeat(MAX_REGEX_BYTES + 1)).unwrap_err().status_and_code().1, "bad_regex");
        // A small pattern whose program is huge is refused, not compiled for minutes.
        assert_eq!(compile_regex(r"\w{1000}{1000}").unwrap_err().status_and_code().1, "bad_regex");
    }

    #[test]
    fn wait_conditions_take_only_their_own_fields() {
        let code = |r: Result<Until, ControlError>| r.map(|_| ()).map_err(|e| e.status_and_code().1);
        assert!(matches!(Until::parse("quiet", None, None), Ok(Until::Quiet(d)) if d.as_millis() == 500));
        assert!(matches!(Until::parse("exit", None, None), Ok(Until::Exit)));
        assert!(matches!(Until::parse("text", None, Some("x")), Ok(Until::Text(_))));
        assert_eq!(code(Until::parse("text", None, None)), Err("bad_regex"));
        assert_eq!(code(Until::parse("exit", None, Some("x"))), Err("bad_request"));
        assert_eq!(code(Until::parse("text", Some(5), Some("x"))), Err("bad_request"));
        assert_eq!(code(Until::parse("quiet", Some(0), None)), Err("bad_request"));
        assert_eq!(code(Until::parse("later", None, None)), Err("bad_request"));
    }
}
