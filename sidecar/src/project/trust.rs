//! Which project files the human trusted, by path and content hash (DESIGN §14).
//!
//! **Architecture Invariant:** this is the only reader and writer of the trust file. It is
//! granted only through the window's own API (`POST /api/project/trust`, which pane tokens
//! cannot reach), so an agent in a pane can never trust a file itself. A file whose bytes
//! changed has another hash and is untrusted again.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use serde::{Deserialize, Serialize};

/// The trust file's name inside the state directory.
pub const FILE_NAME: &str = "trusted-projects.json";
/// Most entries kept; granting one more forgets the oldest.
pub const MAX_ENTRIES: usize = 1024;
/// Largest trust file read, in bytes.
const MAX_FILE_BYTES: u64 = 1 << 20;

/// One trusted file version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// The project file's absolute path.
    pub path: PathBuf,
    /// SHA-256 of its bytes when trusted, lowercase hex.
    pub sha256: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Stored {
    version: u32,
    trusted: Vec<Entry>,
}

/// The trust store: the entries in memory, written through to `<state dir>/trusted-projects.json`.
pub struct Trust {
    file: Option<PathBuf>,
    entries: Mutex<Vec<Entry>>,
}

impl Trust {
    /// Reads the store in `dir` (`None`: no state directory, trust lasts for this run only).
    /// A missing file is an empty store; an unreadable or corrupt one is logged and set
    /// aside (renamed `.corrupt`), so nothing is trusted by accident.
    pub fn open(dir: Option<&Path>) -> Trust {
        let file = dir.map(|d| d.join(FILE_NAME));
        let entries = file.as_deref().map(read).unwrap_or_default();
        Trust { file, entries: Mutex::new(entries) }
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Entry>> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// True if and only if the human trusted `path` with exactly these bytes (`sha256`).
    pub fn is_trusted(&self, path: &Path, sha256: &str) -> bool {
        self.lock().iter().any(|e| e.path == path && e.sha256 == sha256)
    }

    /// Records that the human trusts `path` with the bytes hashing to `sha256` (older
    /// versions of the same file are forgotten) and writes the store atomically.
    pub fn grant(&self, path: &Path, sha256: &str) -> std::io::Result<()> {
        let mut entries = self.lock();
        entries.retain(|e| e.path != path);
        entries.push(Entry { path: path.to_path_buf(), sha256: sha256.to_string() });
        let over = entries.len().saturating_sub(MAX_ENTRIES);
        entries.drain(..over);
        match &self.file {
            Some(f) => write_atomically(f, &Stored { version: 1, trusted: entries.clone() }),
            None => Ok(()),
        }
    }
}

fn read(file: &Path) -> Vec<Entry> {
    let bytes = match std::fs::metadata(file) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Vec::new(),
        Ok(m) if m.len() > MAX_FILE_BYTES => Err(format!("larger than {MAX_FILE_BYTES} bytes")),
        _ => std::fs::read(file).map_err(|e| e.to_string()),
    };
    let parsed = bytes.and_then(|b| serde_json::from_slice::<Stored>(&b).map_err(|e| e.to_string()));
    match parsed {
        Ok(s) if s.version == 1 => s.trusted.into_iter().take(MAX_ENTRIES).collect(),
        other => {
            let why = other.err().unwrap_or_else(|| "unknown version".into());
            let aside = file.with_extension("json.corrupt");
            let _ = std::fs::rename(file, &aside);
            tracing::warn!(file = %file.display(), aside = %aside.display(), "the project trust file is unusable ({why}); nothing is trusted");
            Vec::new()
        }
    }
}

/// Writes `v` as JSON over `file` through the state directory's atomic writer
/// ([`crate::state_file::write_atomic`]: temp file, fsync, rename, mode 0600).
fn write_atomically(file: &Path, v: &Stored) -> std::io::Result<()> {
    let text = serde_json::to_vec_pretty(v).map_err(std::io::Error::other)?;
    crate::state_file::write_atomic(file, &text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir() -> PathBuf {
        let d = std::env::temp_dir().join(format!(
            "porthole-trust-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn trust_is_by_path_and_hash_and_survives_a_restart() {
        let dir = temp_dir();
        let f = Path::new("/p/.porthole.toml");
        let t = Trust::open(Some(&dir));
        assert!(!t.is_trusted(f, "aa"));
        t.grant(f, "aa").unwrap();
        assert!(t.is_trusted(f, "aa"));
        assert!(!t.is_trusted(f, "bb"), "changed bytes ask again");
        assert!(!t.is_trusted(Path::new("/q/.porthole.toml"), "aa"), "another file with the same bytes asks");
        let again = Trust::open(Some(&dir));
        assert!(again.is_trusted(f, "aa"), "written to the state dir");
        again.grant(f, "bb").unwrap();
        assert!(!again.is_trusted(f, "aa") && again.is_trusted(f, "bb"), "a new version replaces the old");
        let names: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, [std::ffi::OsString::from(FILE_NAME)], "no temporary file is left");
    }

    #[test]
    fn a_corrupt_store_trusts_nothing_and_is_set_aside() {
        let dir = temp_dir();
        std::fs::write(dir.join(FILE_NAME), b"{\"version\":1,\"trusted\":[").unwrap();
        let t = Trust::open(Some(&dir));
        assert!(!t.is_trusted(Path::new("/p/.porthole.toml"), "aa"));
        assert!(dir.join("trusted-projects.json.corrupt").exists());
    }
}
