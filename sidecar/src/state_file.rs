//! State files written whole or not at all: a temp file in the same directory (mode 0600),
//! fsync, rename, fsync of the directory. A leaf, so every owner of a file under the state
//! and data directories (the session, the project trust store, the proxy's cookie jars)
//! writes the same way without depending on one another.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// The temp file a write of `file` goes through: `<name>.tmp-<pid>`, in the same directory
/// (a rename is atomic only within one file system).
pub fn temp_path(file: &Path) -> PathBuf {
    let name = file.file_name().and_then(|n| n.to_str()).unwrap_or("session.json");
    file.with_file_name(format!("{name}.tmp-{}", std::process::id()))
}

/// Replaces `file` with `bytes` atomically: the directory is created (mode 0700) if
/// missing, the bytes go to [`temp_path`] (mode 0600: scrollback can hold secrets), are
/// fsynced, renamed over `file`, and the directory is fsynced so the rename itself is
/// durable. On error the temp file is removed and `file` is untouched.
pub fn write_atomic(file: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = file.parent().ok_or_else(|| std::io::Error::other("a state file needs a directory"))?;
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    let tmp = temp_path(file);
    let written = (|| {
        let mut f = OpenOptions::new().write(true).create(true).truncate(true).mode(0o600).open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, file)
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    // The rename is in the directory's data: without this a power cut may lose it.
    File::open(dir)?.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(d: &Path) -> Vec<String> {
        let mut v: Vec<String> =
            std::fs::read_dir(d).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        v.sort();
        v
    }

    #[test]
    fn write_goes_through_a_temp_file_and_leaves_none_behind() {
        let d = std::env::temp_dir().join(format!("porthole-state-file-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        let file = d.join("state/session.json");
        write_atomic(&file, b"one").unwrap();
        write_atomic(&file, b"two").unwrap();
        assert_eq!(std::fs::read(&file).unwrap(), b"two");
        assert_eq!(names(&d.join("state")), ["session.json"]);
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o600);
        // A temp file in the way (a directory, so the write fails): the old file stays whole.
        std::fs::create_dir(temp_path(&file)).unwrap();
        assert!(write_atomic(&file, b"three").is_err());
        assert_eq!(std::fs::read(&file).unwrap(), b"two");
        let _ = std::fs::remove_dir_all(&d);
    }
}
