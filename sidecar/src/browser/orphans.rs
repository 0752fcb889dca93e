//! What a sidecar that died without shutting down (SIGKILL, a crash) left behind: its
//! Chromium processes, which nothing ends (a headless one never exits by itself, nor does a
//! popped-out one once its window is closed), and their profile directories.
//!
//! A profile directory is `<profiles root>/<sidecar pid>-<browser id>` (see `Host`),
//! so its owner is known by name: when no `porthole-sidecar` runs under that pid, the
//! directory is an orphan. Its Chromium (the browser process, the one without `--type=`,
//! whose `--user-data-dir` is that directory) is killed and the directory removed. A
//! directory whose owner runs (another window of the app) is never touched.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Longest wait for a killed Chromium to be gone before its profile is removed.
const GONE_WAIT: Duration = Duration::from_secs(2);

/// Ends every orphaned Chromium under `root` and removes the orphaned profile directories;
/// returns how many directories were orphans. Linux only (it reads `/proc`); elsewhere it
/// does nothing. Blocking: run it off the async runtime.
pub fn reap(root: &Path) -> usize {
    if !cfg!(target_os = "linux") {
        return 0;
    }
    let Ok(entries) = std::fs::read_dir(root) else { return 0 };
    let me = std::env::current_exe().ok().and_then(|p| p.file_name().map(|n| n.to_os_string()));
    let orphans: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter(|e| match owner_pid(&e.file_name().to_string_lossy()) {
            Some(pid) => !runs_as(pid, me.as_deref()),
            None => false,
        })
        .map(|e| e.path())
        .collect();
    if orphans.is_empty() {
        return 0;
    }
    let browsers = chromium_browsers();
    for dir in &orphans {
        let pids: Vec<u32> = browsers.iter().filter(|(_, d)| d == dir).map(|(p, _)| *p).collect();
        for pid in &pids {
            tracing::info!(pid, profile = %dir.display(), "ending a Chromium left by a sidecar that is gone");
            // SAFETY: kill(2) has no memory preconditions; the pid was read from /proc now.
            unsafe { libc::kill(*pid as libc::pid_t, libc::SIGKILL) };
        }
        let started = Instant::now();
        while pids.iter().any(|p| Path::new(&format!("/proc/{p}")).exists()) && started.elapsed() < GONE_WAIT {
            std::thread::sleep(Duration::from_millis(50));
        }
        if let Err(e) = std::fs::remove_dir_all(dir) {
            tracing::debug!(profile = %dir.display(), "removing an orphaned profile: {e}");
        }
    }
    orphans.len()
}

/// The sidecar pid in a profile directory's name (`<pid>-<browser id>`).
fn owner_pid(name: &str) -> Option<u32> {
    let (pid, id) = name.split_once('-')?;
    (!id.is_empty()).then_some(())?;
    pid.parse().ok()
}

/// True if process `pid` runs and its executable has the file name `exe` (this sidecar's).
/// An unknown own name counts every running process as a sidecar: nothing is reaped.
fn runs_as(pid: u32, exe: Option<&std::ffi::OsStr>) -> bool {
    match std::fs::read_link(format!("/proc/{pid}/exe")) {
        // A binary replaced while it runs (a rebuild, a package upgrade) reads "… (deleted)".
        Ok(path) => exe.is_none_or(|exe| {
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            name.strip_suffix(" (deleted)").unwrap_or(&name) == exe.to_string_lossy()
        }),
        // Gone; or not ours to read (another user's process under a reused pid): not a
        // sidecar of this user.
        Err(_) => false,
    }
}

/// Every Chromium browser process (no `--type=`) with a `--user-data-dir`: (pid, directory).
fn chromium_browsers() -> Vec<(u32, PathBuf)> {
    let Ok(procs) = std::fs::read_dir("/proc") else { return Vec::new() };
    procs
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
            let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
            if args.iter().any(|a| a.starts_with(b"--type=")) {
                return None;
            }
            let dir = args.iter().find_map(|a| a.strip_prefix(b"--user-data-dir="))?;
            Some((pid, PathBuf::from(String::from_utf8_lossy(dir).into_owned())))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_profile_is_named_by_its_sidecars_pid() {
        assert_eq!(owner_pid("4242-b1"), Some(4242));
        assert_eq!(owner_pid("4242-"), None);
        assert_eq!(owner_pid("b1"), None);
        assert_eq!(owner_pid("x-b1"), None);
        // A kept profile (`keep-<key>`) is no sidecar's: never reaped.
        assert_eq!(owner_pid(&format!("{}p3", super::super::KEPT_PROFILE_PREFIX)), None);
    }

    #[test]
    fn a_running_process_counts_only_under_its_own_name() {
        let me = std::env::current_exe().unwrap();
        let name = me.file_name().unwrap();
        assert!(runs_as(std::process::id(), Some(name)));
        assert!(!runs_as(std::process::id(), Some(std::ffi::OsStr::new("porthole-sidecar-not"))));
        assert!(runs_as(std::process::id(), None), "an unknown own name reaps nothing");
        assert!(!runs_as(u32::MAX - 1, Some(name)), "a pid that does not run");
    }
}
