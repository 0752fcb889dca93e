//! Small helpers: running commands, the error type, a JSON string field reader.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

/// A failed step, with a message for the user (empty: already reported).
#[derive(Debug)]
pub struct Failed(pub String);

/// `cargo` (the one that runs xtask) with the repo root as working directory.
pub fn cargo(root: &Path) -> Command {
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cmd.current_dir(root);
    cmd
}

/// Runs `cmd` to completion with stdin closed and stdout/stderr inherited; fails
/// on a non-zero exit or when it cannot be started.
pub fn run(cmd: &mut Command) -> Result<(), Failed> {
    let shown = describe(cmd);
    println!("$ {shown}");
    let status = cmd.stdin(Stdio::null()).status().map_err(|e| Failed(format!("failed to start `{shown}`: {e}")))?;
    if status.success() {
        Ok(())
    } else {
        Err(Failed(format!("`{shown}` exited with {status}")))
    }
}

/// How many of a suite's last output lines are kept to explain its failure.
const KEPT_LINES: usize = 400;

/// Runs `cmd` like [`run`], echoing its stdout and stderr live, and on failure returns,
/// with the error, the lines of its output that name what failed (test names, panics,
/// assertion messages), at most `max` of them, so the final summary can say why a suite
/// failed even when only the tail of a long log is read.
pub fn run_explained(cmd: &mut Command, max: usize) -> Result<(), (Failed, Vec<String>)> {
    let shown = describe(cmd);
    println!("$ {shown}");
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| (Failed(format!("failed to start `{shown}`: {e}")), Vec::new()))?;
    let kept = Arc::new(Mutex::new(VecDeque::with_capacity(KEPT_LINES)));
    let out = echo(child.stdout.take().expect("piped"), false, kept.clone());
    let err = echo(child.stderr.take().expect("piped"), true, kept.clone());
    let status = child.wait();
    let _ = out.join();
    let _ = err.join();
    let status = status.map_err(|e| (Failed(format!("`{shown}`: {e}")), Vec::new()))?;
    if status.success() {
        return Ok(());
    }
    let kept = kept.lock().expect("echo threads have ended");
    Err((Failed(format!("`{shown}` exited with {status}")), failure_lines(kept.iter().map(String::as_str), max)))
}

/// Copies `from` to our stdout (or stderr) line by line, keeping the last lines.
fn echo(
    from: impl Read + Send + 'static,
    to_stderr: bool,
    kept: Arc<Mutex<VecDeque<String>>>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let mut reader = BufReader::new(from);
        let mut line = Vec::new();
        while reader.read_until(b'\n', &mut line).map(|n| n > 0).unwrap_or(false) {
            if to_stderr {
                let _ = std::io::stderr().write_all(&line);
            } else {
                let _ = std::io::stdout().write_all(&line);
            }
            let text = String::from_utf8_lossy(&line).trim_end().to_string();
            line.clear();
            let mut kept = kept.lock().expect("no panics while holding it");
            if kept.len() == KEPT_LINES {
                kept.pop_front();
            }
            kept.push_back(text);
        }
    })
}

/// The lines of a failed suite's output that say what failed: cargo's `test … FAILED`
/// and `panicked at`, Playwright's `✘`/`[chromium] ›` lines and `Error:`s, `FAIL` from
/// Vitest and the desktop smoke. ANSI escapes are stripped; repeats are dropped; at most
/// `max` lines, the first ones found.
pub fn failure_lines<'a>(lines: impl Iterator<Item = &'a str>, max: usize) -> Vec<String> {
    const MARKS: [&str; 10] = [
        "FAILED",
        "panicked at",
        "✘",
        "[chromium] ›",
        "Error:",
        "FAIL ",
        "failed:",
        "Timed out",
        "assertion",
        "Diff in ",
    ];
    let mut found: Vec<String> = Vec::new();
    for line in lines {
        let plain = strip_ansi(line);
        let plain = plain.trim();
        if plain.is_empty() || !MARKS.iter().any(|m| plain.contains(m)) {
            continue;
        }
        let mut short: String = plain.chars().take(200).collect();
        if short.len() < plain.len() {
            short.push('…');
        }
        if !found.contains(&short) {
            found.push(short);
        }
        if found.len() == max {
            break;
        }
    }
    found
}

fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // CSI: ESC [ params final-byte (0x40..=0x7e).
            if chars.next() == Some('[') {
                for c in chars.by_ref() {
                    if ('\u{40}'..='\u{7e}').contains(&c) {
                        break;
                    }
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Runs `cmd` and returns true if and only if it started and exited with 0.
/// Output is discarded.
pub fn succeeds(cmd: &mut Command) -> bool {
    cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null()).status().map(|s| s.success()).unwrap_or(false)
}

pub fn describe(cmd: &Command) -> String {
    let mut parts = vec![cmd.get_program().to_string_lossy().into_owned()];
    parts.extend(cmd.get_args().map(|a| a.to_string_lossy().into_owned()));
    let line = parts.join(" ");
    match cmd.get_current_dir() {
        Some(dir) => format!("(cd {} && {line})", dir.display()),
        None => line,
    }
}

/// The value of a top-level string field in a one-line JSON object, for the
/// sidecar's ready line. Handles no escapes beyond `\/`; URLs need none.
pub fn json_string_field(json: &str, field: &str) -> Option<String> {
    let key = format!("\"{field}\"");
    let rest = &json[json.find(&key)? + key.len()..];
    let rest = rest.trim_start().strip_prefix(':')?.trim_start().strip_prefix('"')?;
    Some(rest[..rest.find('"')?].replace("\\/", "/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn login_url_is_read_from_the_ready_line() {
        let line = r#"{"url":"http://127.0.0.1:41234/","token":"ab","login_url":"http://127.0.0.1:41234/login?code=cd","pid":1,"protocol":1}"#;
        assert_eq!(json_string_field(line, "login_url").as_deref(), Some("http://127.0.0.1:41234/login?code=cd"));
        assert_eq!(json_string_field(line, "nope"), None);
    }

    #[test]
    fn failure_lines_name_the_failed_tests_once_without_colour() {
        let log = [
            "running 3 tests",
            "test api::ok ... ok",
            "test browser::tabs ... FAILED",
            "thread 'browser::tabs' panicked at sidecar/tests/browser.rs:10:5:",
            "  \u{1b}[31m✘\u{1b}[39m  3 [chromium] › specs/ports.spec.ts:29:1 › a port (12.0s)",
            "  \u{1b}[31m✘\u{1b}[39m  3 [chromium] › specs/ports.spec.ts:29:1 › a port (12.0s)",
            "    Error: expect(locator).toBeVisible() failed",
            "test result: ok. 2 passed",
        ];
        let found = failure_lines(log.iter().copied(), 12);
        assert_eq!(
            found,
            vec![
                "test browser::tabs ... FAILED",
                "thread 'browser::tabs' panicked at sidecar/tests/browser.rs:10:5:",
                "✘  3 [chromium] › specs/ports.spec.ts:29:1 › a port (12.0s)",
                "Error: expect(locator).toBeVisible() failed",
            ]
        );
        assert_eq!(failure_lines(log.iter().copied(), 1).len(), 1);
    }
}
