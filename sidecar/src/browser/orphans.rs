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
    // A kept profile outlives its sidecar; only a Chromium its dead owner left on it is ended.
    let stale_kept: Vec<PathBuf> = std::fs::read_dir(root)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with(super::KEPT_PROFILE_PREFIX))
        .map(|e| e.path())
        .filter(|dir| kept_owner(dir).is_some_and(|pid| !runs_as(pid, me.as_deref())))
        .collect();
    if orphans.is_empty() && stale_kept.is_empty() {
        return 0;
    }
    let browsers = chromium_browsers();
    for dir in &stale_kept {
        // Checked again under the claim lock: a browser created meanwhile (a restored pane,
        // right after start) may have claimed the profile and be launching on it.
        let _claims = KEPT_CLAIMS.lock().unwrap_or_else(|p| p.into_inner());
        if kept_owner(dir).is_some_and(|pid| !runs_as(pid, me.as_deref())) {
            end_chromium_on(dir, &browsers);
            let _ = std::fs::remove_file(dir.join(KEPT_OWNER_FILE));
        }
    }
    for dir in &orphans {
        end_chromium_on(dir, &browsers);
        if let Err(e) = std::fs::remove_dir_all(dir) {
            tracing::debug!(profile = %dir.display(), "removing an orphaned profile: {e}");
        }
    }
    orphans.len()
}

/// Ends the Chromium browser processes (of `browsers`) whose profile is `dir`: SIGTERM first
/// (Chromium then shuts down cleanly and writes its cookies out: a kept profile's logins
/// survive), SIGKILL for any still there after [`GONE_WAIT`], then waits (as long again) for
/// them to be gone.
fn end_chromium_on(dir: &Path, browsers: &[(u32, PathBuf)]) {
    let pids: Vec<u32> = browsers.iter().filter(|(_, d)| d == dir).map(|(p, _)| *p).collect();
    let alive =
        |pids: &[u32]| pids.iter().copied().filter(|p| Path::new(&format!("/proc/{p}")).exists()).collect::<Vec<_>>();
    for signal in [libc::SIGTERM, libc::SIGKILL] {
        let left = alive(&pids);
        for pid in &left {
            tracing::info!(pid, signal, profile = %dir.display(), "ending a Chromium left by a sidecar that is gone");
            // SAFETY: kill(2) has no memory preconditions; the pid was read from /proc now.
            unsafe { libc::kill(*pid as libc::pid_t, signal) };
        }
        let started = Instant::now();
        while !alive(&left).is_empty() && started.elapsed() < GONE_WAIT {
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// The file in a kept profile (`keep-<key>`) naming the sidecar whose browser runs on it:
/// its pid, in decimal. Kept profiles are named by key, not by owner, so this is how a
/// Chromium left on one by a sidecar that died is told from one another sidecar runs.
pub const KEPT_OWNER_FILE: &str = "porthole-owner";

/// Held while a kept profile's owner is checked and changed, so the start-up reap never ends
/// the Chromium of a browser that claimed the profile after the reap first looked.
static KEPT_CLAIMS: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The pid a kept profile's owner file names, if any.
fn kept_owner(dir: &Path) -> Option<u32> {
    std::fs::read_to_string(dir.join(KEPT_OWNER_FILE)).ok()?.trim().parse().ok()
}

/// Claims kept profile `dir` for this sidecar before a browser is launched on it: refused
/// with the owner's pid when another running sidecar holds it; a Chromium that a sidecar
/// which is gone left on it is ended first (two browsers on one profile would corrupt it).
/// Then records this sidecar as the owner. Blocking (reads `/proc`); Linux only, elsewhere
/// it only records the owner.
pub fn claim_kept(dir: &Path) -> Result<(), u32> {
    let _claims = KEPT_CLAIMS.lock().unwrap_or_else(|p| p.into_inner());
    let me = std::env::current_exe().ok().and_then(|p| p.file_name().map(|n| n.to_os_string()));
    let mine = std::process::id();
    if cfg!(target_os = "linux") {
        match kept_owner(dir) {
            Some(pid) if pid != mine && runs_as(pid, me.as_deref()) => return Err(pid),
            _ => end_chromium_on(dir, &chromium_browsers()),
        }
    }
    if let Err(e) =
        std::fs::create_dir_all(dir).and_then(|()| std::fs::write(dir.join(KEPT_OWNER_FILE), mine.to_string()))
    {
        tracing::warn!(profile = %dir.display(), "recording the kept profile's owner: {e}");
    }
    Ok(())
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
