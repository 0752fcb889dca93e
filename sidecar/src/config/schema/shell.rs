//! `[shell]`: the program a terminal pane runs, checked when the file is loaded.

use serde::{Deserialize, Serialize};

/// `[shell]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Shell {
    /// The shell's path; empty: `$SHELL`, else the password database's.
    pub program: ShellProgram,
    /// Extra arguments, at most 32 of at most 4 KiB each.
    pub args: ShellArgs,
    /// Inject shell integration (DESIGN §13); false sets `PORTHOLE_SHELL_INTEGRATION=0`.
    pub integration: bool,
}

impl Default for Shell {
    fn default() -> Self {
        Shell { program: ShellProgram(String::new()), args: ShellArgs(Vec::new()), integration: true }
    }
}

/// `shell.program`: empty, or an absolute path of at most 4 KiB without NUL naming a regular
/// file this user may execute, checked when the file is loaded (issue 22 item 2b: a missing
/// program failed every new pane, and `/etc/passwd` started something else). A program
/// removed after the load still fails at spawn, with the OS error.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String")]
pub struct ShellProgram(pub String);

impl TryFrom<String> for ShellProgram {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        if s.is_empty() {
            return Ok(ShellProgram(s));
        }
        if !(s.starts_with('/') && s.len() <= 4096 && !s.contains('\0')) {
            return Err(format!("shell.program must be \"\" or an absolute path, got {s:?}"));
        }
        match runnable(&s) {
            Ok(()) => Ok(ShellProgram(s)),
            Err(why) => Err(format!("shell.program {s:?} cannot run: {why}")),
        }
    }
}

/// Why the program at `path` (absolute, without NUL) cannot be executed by this user, if so:
/// it must be a regular file (after symlinks) with execute permission (`access(X_OK)`).
fn runnable(path: &str) -> Result<(), String> {
    let meta = std::fs::metadata(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => "no such file".to_string(),
        _ => e.to_string(),
    })?;
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    let c = std::ffi::CString::new(path).map_err(|_| "contains NUL".to_string())?;
    // SAFETY: `c` is a valid NUL-terminated string for the duration of the call.
    if unsafe { libc::access(c.as_ptr(), libc::X_OK) } != 0 {
        return Err("not executable".into());
    }
    Ok(())
}

/// `shell.args`: at most 32 arguments of at most 4 KiB, without NUL.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "Vec<String>")]
pub struct ShellArgs(pub Vec<String>);

impl TryFrom<Vec<String>> for ShellArgs {
    type Error = String;
    fn try_from(v: Vec<String>) -> Result<Self, String> {
        if v.len() > 32 || v.iter().any(|a| a.len() > 4096 || a.contains('\0')) {
            return Err("shell.args takes at most 32 arguments of at most 4096 bytes, without NUL".into());
        }
        Ok(ShellArgs(v))
    }
}
