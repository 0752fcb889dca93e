//! Watching the config file: the directory is watched (editors save by writing a temp file
//! and renaming it over the old one, which a watch on the file itself would lose), events
//! for the file are debounced, and the file is reloaded.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use notify::{RecursiveMode, Watcher};
use tokio::sync::watch;

use super::{load, Config, ConfigError, Snapshot, FILE_NAME};

/// Quiet time after the last change to the file before it is read (editors write in steps).
pub const DEBOUNCE_MS: u64 = 150;

/// The configuration in force and its watchers. Cheap to share behind an `Arc`; the watcher
/// stops when the last `Arc` is dropped.
pub struct Settings {
    tx: watch::Sender<Snapshot>,
    file: PathBuf,
    /// Keeps the OS watch alive; `None` when watching failed (the file is read once).
    _watcher: Mutex<Option<notify::RecommendedWatcher>>,
}

impl Settings {
    /// Loads `dir/config.toml` (creating `dir` if missing, so it can be watched) and starts
    /// watching it. Must run inside a tokio runtime. A file that does not parse leaves the
    /// built-in configuration in force with the error beside it; a directory that cannot be
    /// watched is logged and the file is read once.
    pub fn start(dir: &Path) -> Arc<Settings> {
        let file = dir.join(FILE_NAME);
        let mut first = Snapshot {
            file: file.clone(),
            revision: 1,
            config: Arc::new(Config::default()),
            error: None,
            unknown_keys: Vec::new(),
        };
        apply(&mut first, load(&file));
        first.revision = 1;
        let (tx, _) = watch::channel(first);
        let (events, mut rx) = tokio::sync::mpsc::unbounded_channel::<()>();
        let name = std::ffi::OsString::from(FILE_NAME);
        let watcher = std::fs::create_dir_all(dir)
            .map_err(notify::Error::io)
            .and_then(|()| {
                let mut w = notify::recommended_watcher(move |res: notify::Result<notify::Event>| match res {
                    Ok(ev) if ev.paths.iter().any(|p| p.file_name() == Some(name.as_os_str())) => {
                        let _ = events.send(());
                    }
                    Ok(_) => {}
                    Err(e) => tracing::warn!("config watch: {e}"),
                })?;
                w.watch(dir, RecursiveMode::NonRecursive)?;
                Ok(w)
            })
            .map_err(|e| tracing::warn!(dir = %dir.display(), "cannot watch the config directory: {e}"))
            .ok();
        let settings = Arc::new(Settings { tx, file, _watcher: Mutex::new(watcher) });
        let weak = Arc::downgrade(&settings);
        tokio::spawn(async move {
            while rx.recv().await.is_some() {
                // Debounce: wait until the file has been quiet for DEBOUNCE_MS.
                loop {
                    match tokio::time::timeout(Duration::from_millis(DEBOUNCE_MS), rx.recv()).await {
                        Ok(Some(())) => continue,
                        Ok(None) => return,
                        Err(_) => break,
                    }
                }
                let Some(s) = weak.upgrade() else { return };
                s.reload();
            }
        });
        settings
    }

    /// Reads the file again and publishes the result if anything changed. Idempotent.
    pub fn reload(&self) {
        let result = {
            let file = self.file.clone();
            load(&file)
        };
        self.tx.send_if_modified(|snap| {
            let before = snap.clone();
            apply(snap, result);
            let changed = *snap != before;
            if changed {
                snap.revision = before.revision + 1;
                match &snap.error {
                    Some(e) => tracing::warn!("config not applied: {e}"),
                    None => tracing::info!(file = %snap.file.display(), "config applied"),
                }
            }
            changed
        });
    }

    /// The snapshot in force now.
    pub fn current(&self) -> Snapshot {
        self.tx.borrow().clone()
    }

    /// A receiver that sees every later snapshot (the current one marked as seen).
    pub fn subscribe(&self) -> watch::Receiver<Snapshot> {
        self.tx.subscribe()
    }

    /// The file watched.
    pub fn file(&self) -> &Path {
        &self.file
    }
}

/// Applies a load result: a parse replaces the configuration and clears the error; an error
/// keeps the configuration and records the error.
fn apply(snap: &mut Snapshot, result: Result<super::Parsed, ConfigError>) {
    match result {
        Ok(p) => {
            for key in &p.unknown {
                if !snap.unknown_keys.contains(key) {
                    tracing::warn!(file = %snap.file.display(), "unknown config key {key} ignored");
                }
            }
            if *snap.config != p.config {
                snap.config = Arc::new(p.config);
            }
            snap.unknown_keys = p.unknown;
            snap.error = None;
        }
        Err(e) => snap.error = Some(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("porthole-config-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    /// Waits (bounded generously) for a snapshot matching `ok`.
    async fn until(rx: &mut watch::Receiver<Snapshot>, ok: impl Fn(&Snapshot) -> bool) -> Snapshot {
        let wait = rx.wait_for(|s| ok(s));
        tokio::time::timeout(Duration::from_secs(20), wait).await.expect("no such snapshot in 20 s").unwrap().clone()
    }

    #[tokio::test]
    async fn a_rename_save_reloads_and_an_invalid_file_keeps_the_last_good_config() {
        let dir = temp_dir("rename");
        std::fs::write(dir.join(FILE_NAME), "[font]\nsize = 14\n").unwrap();
        let s = Settings::start(&dir);
        assert_eq!(s.current().config.font.size.0, 14.0);
        let mut rx = s.subscribe();

        // Save as editors do: a temp file renamed over the old one.
        let tmp = dir.join(".config.toml.swp");
        std::fs::write(&tmp, "[font]\nsize = 20\n").unwrap();
        std::fs::rename(&tmp, dir.join(FILE_NAME)).unwrap();
        let snap = until(&mut rx, |s| s.config.font.size.0 == 20.0).await;
        assert!(snap.error.is_none());

        std::fs::write(&tmp, "[font]\nsize = 21\nfamily = \n").unwrap();
        std::fs::rename(&tmp, dir.join(FILE_NAME)).unwrap();
        let snap = until(&mut rx, |s| s.error.is_some()).await;
        assert_eq!(snap.config.font.size.0, 20.0, "the last good config stays");
        assert_eq!(snap.error.as_ref().unwrap().line, Some(3));

        std::fs::write(dir.join(FILE_NAME), "[font]\nsize = 22\nnope = 1\n").unwrap();
        let snap = until(&mut rx, |s| s.error.is_none()).await;
        assert_eq!(snap.config.font.size.0, 22.0);
        assert_eq!(snap.unknown_keys, ["font.nope"]);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
