//! Small helpers: running commands, the error type, a JSON string field reader.

use std::path::Path;
use std::process::{Command, Stdio};

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
    let status = cmd
        .stdin(Stdio::null())
        .status()
        .map_err(|e| Failed(format!("failed to start `{shown}`: {e}")))?;
    if status.success() {
        Ok(())
    } else {
        Err(Failed(format!("`{shown}` exited with {status}")))
    }
}

/// Runs `cmd` and returns true if and only if it started and exited with 0.
/// Output is discarded.
pub fn succeeds(cmd: &mut Command) -> bool {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
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
    let rest = rest
        .trim_start()
        .strip_prefix(':')?
        .trim_start()
        .strip_prefix('"')?;
    Some(rest[..rest.find('"')?].replace("\\/", "/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn login_url_is_read_from_the_ready_line() {
        let line = r#"{"url":"http://127.0.0.1:41234/","token":"ab","login_url":"http://127.0.0.1:41234/login?code=cd","pid":1,"protocol":1}"#;
        assert_eq!(
            json_string_field(line, "login_url").as_deref(),
            Some("http://127.0.0.1:41234/login?code=cd")
        );
        assert_eq!(json_string_field(line, "nope"), None);
    }
}
