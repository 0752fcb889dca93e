//! The session file on disk: reading it (a bad one is moved aside, never fatal) and
//! replacing it atomically (a temp file in the same directory, fsync, rename, fsync of the
//! directory), so a crash or a kill mid-write leaves the old file or the new one, whole.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use super::{Problem, SessionFile, MAX_FILE_BYTES};

/// What was found at the session file's path.
pub(super) enum Loaded {
    /// No file (a first start, or one after the file was deleted).
    Missing,
    /// A file that parsed and passed every bound.
    Found(SessionFile),
    /// A file that could not be used: it was moved aside (when that worked) and here is why.
    Bad(Problem),
}

/// Reads `file`. A file that cannot be read, is larger than [`MAX_FILE_BYTES`], does not
/// parse or breaks a bound is renamed to `<name>.corrupt-<unix seconds>` beside it (so the
/// next start does not trip on it again and the user can still look at it) and reported.
pub(super) fn load(file: &Path) -> Loaded {
    let read = || -> Result<SessionFile, String> {
        let mut f = match File::open(file) {
            Ok(f) => f,
            Err(e) => return Err(format!("cannot read the file: {e}")),
        };
        let mut bytes = Vec::new();
        // One byte past the bound tells "too large" from "exactly at the bound".
        (&mut f).take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes).map_err(|e| format!("cannot read the file: {e}"))?;
        if bytes.len() as u64 > MAX_FILE_BYTES {
            return Err(format!("larger than {MAX_FILE_BYTES} bytes"));
        }
        let parsed: SessionFile = serde_json::from_slice(&bytes).map_err(|e| format!("not a session file: {e}"))?;
        parsed.check()?;
        Ok(parsed)
    };
    match std::fs::symlink_metadata(file) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Loaded::Missing,
        _ => {}
    }
    match read() {
        Ok(parsed) => Loaded::Found(parsed),
        Err(message) => {
            let moved_to = match move_aside(file) {
                Ok(to) => Some(to),
                Err(e) => {
                    tracing::warn!(file = %file.display(), "cannot move the bad session file aside: {e}");
                    None
                }
            };
            tracing::warn!(file = %file.display(), moved_to = ?moved_to, "session file not restored: {message}");
            Loaded::Bad(Problem { file: file.to_path_buf(), moved_to, message })
        }
    }
}

/// Renames `file` to `<name>.corrupt-<unix seconds>` (then `-2`, `-3`… if taken).
fn move_aside(file: &Path) -> std::io::Result<PathBuf> {
    let secs = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let name = file.file_name().and_then(|n| n.to_str()).unwrap_or("session.json");
    for n in 1..100u32 {
        let aside = if n == 1 { format!("{name}.corrupt-{secs}") } else { format!("{name}.corrupt-{secs}-{n}") };
        let to = file.with_file_name(aside);
        if std::fs::symlink_metadata(&to).is_ok() {
            continue;
        }
        std::fs::rename(file, &to)?;
        return Ok(to);
    }
    Err(std::io::Error::other("every corrupt-<time> name is taken"))
}

/// Removes temp files beside `file` left by a sidecar that died mid-write (`<name>.tmp-<pid>`
/// whose process is gone); a live process's temp file is its write under way.
pub(super) fn remove_stale_temps(file: &Path) {
    let (Some(dir), Some(name)) = (file.parent(), file.file_name().and_then(|n| n.to_str())) else { return };
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let prefix = format!("{name}.tmp-");
    for entry in entries.flatten() {
        let entry_name = entry.file_name();
        let Some(pid) = entry_name.to_str().and_then(|n| n.strip_prefix(&prefix)).and_then(|p| p.parse::<i32>().ok())
        else {
            continue;
        };
        if !process_alive(pid) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// True if and only if a process `pid` exists (`kill(pid, 0)` does not fail with ESRCH).
fn process_alive(pid: i32) -> bool {
    if pid <= 0 {
        return false;
    }
    // SAFETY: signal 0 only checks that the process exists.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("porthole-session-file-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn names(d: &Path) -> Vec<String> {
        let mut v: Vec<String> =
            std::fs::read_dir(d).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        v.sort();
        v
    }

    #[test]
    fn stale_temps_of_dead_processes_are_removed() {
        let d = dir("stale");
        let file = d.join("session.json");
        // pid 0 is never a process; our own pid is alive.
        std::fs::write(d.join("session.json.tmp-0"), b"x").unwrap();
        std::fs::write(crate::state_file::temp_path(&file), b"x").unwrap();
        std::fs::write(d.join("other.tmp-0"), b"x").unwrap();
        remove_stale_temps(&file);
        let mine = crate::state_file::temp_path(&file).file_name().unwrap().to_str().unwrap().to_string();
        let mut want = vec!["other.tmp-0".to_string(), mine];
        want.sort();
        assert_eq!(names(&d), want);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_bad_file_is_moved_aside_and_reported() {
        let d = dir("bad");
        let file = d.join("session.json");
        assert!(matches!(load(&file), Loaded::Missing));
        std::fs::write(&file, b"{\"format\":1,\"saved_at\":1,\"workspace\":{\"ver").unwrap();
        let Loaded::Bad(p) = load(&file) else { panic!("a truncated file loaded") };
        assert!(p.message.contains("not a session file"), "{}", p.message);
        let moved = p.moved_to.expect("moved aside");
        assert!(moved.file_name().unwrap().to_str().unwrap().starts_with("session.json.corrupt-"), "{moved:?}");
        assert!(moved.is_file() && !file.exists());
        // A second bad file in the same second gets its own name.
        std::fs::write(&file, b"[]").unwrap();
        let Loaded::Bad(p2) = load(&file) else { panic!("an array loaded") };
        assert_ne!(p2.moved_to.unwrap(), moved);
        let _ = std::fs::remove_dir_all(&d);
    }
}
