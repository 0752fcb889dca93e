//! Unix process plumbing for PTY children: signals, reaping, `/proc` lookups, `poll(2)`.
//!
//! Every kill here targets only pids this process spawned (or members of their sessions) and
//! refuses pid 0, 1 and negative pids (design §6).

use std::ffi::CStr;
use std::os::unix::io::RawFd;
use std::time::Duration;

/// Sends `sig` to the process group `pgid` (`kill(-pgid, sig)`) and to every other process
/// whose session id is `pgid` (background jobs of a shell live in their own groups but in its
/// session). Refuses `pgid <= 1` and never signals this process. Errors (ESRCH: nothing
/// left) are ignored: the call is idempotent.
pub(crate) fn signal_session(pgid: i32, sig: i32) {
    if pgid <= 1 {
        return;
    }
    // SAFETY: kill(2) with a negative pid < -1 targets exactly that process group.
    unsafe {
        libc::kill(-pgid, sig);
    }
    let me = std::process::id() as i32;
    for pid in session_members(pgid) {
        if pid > 1 && pid != me {
            // SAFETY: pid > 1 names one process in the child's session.
            unsafe {
                libc::kill(pid, sig);
            }
        }
    }
}

/// Hands the memory the allocator holds free back to the OS (glibc's `malloc_trim(0)`): a
/// deleted terminal's scrollback and screen model otherwise stay in the process's heap (glibc
/// keeps freed chunks for reuse). A no-op with other C libraries.
pub(crate) fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim(3) has no preconditions; it only returns free pages.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Returns true if and only if some live (non-zombie) process is in the process group or the
/// session `pgid`.
pub(crate) fn session_alive(pgid: i32) -> bool {
    if pgid <= 1 {
        return false;
    }
    !session_members(pgid).is_empty()
}

/// Pids of the live (non-zombie) processes whose process group or session id is `sid`,
/// read from `/proc/<pid>/stat`. Unreadable entries are skipped.
pub(crate) fn session_members(sid: i32) -> Vec<i32> {
    let mut out = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else { return out };
    for entry in dir.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|s| s.parse::<i32>().ok()) else { continue };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { continue };
        if let Some((state, pgrp, session)) = parse_stat(&stat) {
            if state != 'Z' && (pgrp == sid || session == sid) {
                out.push(pid);
            }
        }
    }
    out
}

/// Parses `state`, `pgrp` and `session` out of a `/proc/<pid>/stat` line. The command name
/// (field 2) may contain spaces and parentheses, so fields are counted after the last `)`.
fn parse_stat(stat: &str) -> Option<(char, i32, i32)> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_ascii_whitespace();
    let state = fields.next()?.chars().next()?;
    let _ppid = fields.next()?;
    let pgrp = fields.next()?.parse().ok()?;
    let session = fields.next()?.parse().ok()?;
    Some((state, pgrp, session))
}

/// The command name of `pid` (`/proc/<pid>/comm`, trailing newline removed), or `None` when
/// it cannot be read.
pub(crate) fn process_name(pid: i32) -> Option<String> {
    if pid <= 0 {
        return None;
    }
    let s = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
    Some(s.trim_end_matches('\n').to_string())
}

/// The current working directory of `pid` (`readlink /proc/<pid>/cwd`), or `None` when it
/// cannot be read (another user's process, gone, or not Linux).
pub(crate) fn process_cwd(pid: i32) -> Option<String> {
    if pid <= 0 {
        return None;
    }
    let p = std::fs::read_link(format!("/proc/{pid}/cwd")).ok()?;
    p.to_str().map(str::to_string)
}

/// Blocks until the child `pid` exits and reaps it (`waitpid(2)`). Returns the exit status,
/// or `128 + S` for a child killed by signal S. Returns `None` if waitpid fails (the child
/// was already reaped elsewhere).
pub(crate) fn wait_child(pid: i32) -> Option<i32> {
    if pid <= 1 {
        return None;
    }
    loop {
        let mut status: libc::c_int = 0;
        // SAFETY: status is a valid out-pointer; pid > 1 is our own child.
        let r = unsafe { libc::waitpid(pid, &mut status, 0) };
        if r == pid {
            if libc::WIFEXITED(status) {
                return Some(libc::WEXITSTATUS(status));
            }
            if libc::WIFSIGNALED(status) {
                return Some(128 + libc::WTERMSIG(status));
            }
            continue; // stopped/continued: keep waiting
        }
        let err = std::io::Error::last_os_error();
        if err.kind() == std::io::ErrorKind::Interrupted {
            continue;
        }
        tracing::warn!(pid, "waitpid failed: {err}");
        return None;
    }
}

/// Waits up to `timeout` for `fd` to become readable (or hung up). Returns true if and only
/// if a read would not block. Sub-millisecond timeouts are honoured (`ppoll(2)`).
pub(crate) fn wait_readable(fd: RawFd, timeout: Duration) -> bool {
    let mut pfd = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
    let ts =
        libc::timespec { tv_sec: timeout.as_secs() as libc::time_t, tv_nsec: timeout.subsec_nanos() as libc::c_long };
    loop {
        // SAFETY: one valid pollfd, a valid timespec, no signal mask change.
        let r = unsafe { libc::ppoll(&mut pfd, 1, &ts, std::ptr::null()) };
        if r < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
            continue;
        }
        return r > 0;
    }
}

/// The user's shell: `$SHELL` if it names an executable, else the password database entry,
/// else `/bin/sh`.
pub(crate) fn user_shell() -> String {
    if let Ok(shell) = std::env::var("SHELL") {
        if is_executable(&shell) {
            return shell;
        }
    }
    if let Some(shell) = passwd_field(|pw| pw.pw_shell) {
        if is_executable(&shell) {
            return shell;
        }
    }
    "/bin/sh".to_string()
}

/// The user's home directory: `$HOME`, else the password database entry, else `/`.
pub(crate) fn home_dir() -> String {
    match std::env::var("HOME") {
        Ok(h) if !h.is_empty() => h,
        _ => passwd_field(|pw| pw.pw_dir).unwrap_or_else(|| "/".to_string()),
    }
}

fn is_executable(path: &str) -> bool {
    let Ok(c) = std::ffi::CString::new(path) else { return false };
    // SAFETY: c is a valid NUL-terminated string.
    unsafe { libc::access(c.as_ptr(), libc::X_OK) == 0 }
}

/// Reads one string field of the current user's password database entry (`getpwuid_r`).
fn passwd_field(field: impl Fn(&libc::passwd) -> *mut libc::c_char) -> Option<String> {
    let mut pw: libc::passwd = unsafe { std::mem::zeroed() };
    let mut buf = vec![0 as libc::c_char; 16 * 1024];
    let mut result: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: all pointers are valid for the given sizes; result is checked before use.
    let rc = unsafe { libc::getpwuid_r(libc::getuid(), &mut pw, buf.as_mut_ptr(), buf.len(), &mut result) };
    if rc != 0 || result.is_null() {
        return None;
    }
    let p = field(&pw);
    if p.is_null() {
        return None;
    }
    // SAFETY: p points into buf, NUL-terminated by getpwuid_r.
    let s = unsafe { CStr::from_ptr(p) }.to_str().ok()?.to_string();
    (!s.is_empty()).then_some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_stat_handles_parentheses_in_names() {
        let line = "1234 (we (ird) name) S 1 1234 1234 34816 1234 4194304 0 0";
        assert_eq!(parse_stat(line), Some(('S', 1234, 1234)));
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn signal_session_refuses_pid_0_and_1() {
        // Must be no-ops (and must not kill the test runner).
        signal_session(0, 0);
        signal_session(1, 0);
        signal_session(-1, 0);
        assert!(!session_alive(1));
        assert!(!session_alive(0));
    }

    #[test]
    fn process_name_reads_own_comm() {
        assert!(process_name(std::process::id() as i32).is_some());
        assert_eq!(process_name(0), None);
    }
}
