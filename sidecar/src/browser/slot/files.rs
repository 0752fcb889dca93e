//! Files in and out of a headless browser (issue #11 item 7): a page's file chooser is
//! intercepted and shown to the user (views get it as `file_chooser`), whose answer sets the
//! files on the input; downloads go to the user's download directory and are reported to
//! views (`downloads`). A popped-out (headed) browser has its own dialogs and download
//! shelf: nothing is intercepted there.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use chromiumoxide::cdp::browser_protocol::browser::{
    DownloadProgressState, EventDownloadProgress, EventDownloadWillBegin, SetDownloadBehaviorBehavior,
    SetDownloadBehaviorParams,
};
use chromiumoxide::cdp::browser_protocol::dom::{BackendNodeId, ResolveNodeParams, SetFileInputFilesParams};
use chromiumoxide::cdp::browser_protocol::page::{
    EventFileChooserOpened, FileChooserOpenedMode, SetInterceptFileChooserDialogParams,
};
use chromiumoxide::cdp::js_protocol::runtime::CallFunctionOnParams;

use super::super::{bounded, BrowserError};
use super::*;

/// Most files one chooser answer may carry.
pub const MAX_CHOOSER_FILES: usize = 64;
/// Largest file uploaded for a chooser, in bytes (the view sends the bytes; web mode).
pub const MAX_UPLOAD_BYTES: usize = 64 * 1024 * 1024;
/// Downloads remembered per browser (older finished ones are forgotten first).
pub const MAX_DOWNLOADS: usize = 20;
/// Progress of a running download is published at most this often, in milliseconds.
const PROGRESS_EVERY_MS: u64 = 250;
/// Longest `accept` attribute reported, in bytes (longer: reported as "", accept anything).
const MAX_ACCEPT_BYTES: usize = 1024;

/// A page's file input waiting for the user's files.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FileChooser {
    /// Grows by one per chooser of this browser; an answer names it.
    pub id: u64,
    /// The tab whose page opened it.
    pub tab: String,
    /// True if and only if the input takes several files (`multiple`).
    pub multiple: bool,
    /// The input's `accept` attribute as the page wrote it ("" for any file).
    pub accept: String,
}

/// Where a download is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DownloadState {
    /// Bytes are arriving.
    InProgress,
    /// Saved at `path`.
    Completed,
    /// Cancelled by the page or Chromium.
    Canceled,
    /// Chromium finished it but it could not be moved into the download directory.
    Failed,
}

/// One download of this browser.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Download {
    /// Chromium's download id.
    pub id: String,
    /// The file name (the page's suggestion; the saved name may add " (n)").
    pub name: String,
    /// The URL it came from.
    pub url: String,
    /// Bytes received so far.
    pub received: u64,
    /// Total bytes (0 when unknown).
    pub total: u64,
    /// Where it is.
    pub state: DownloadState,
    /// Where it was saved (completed ones), else `null`.
    pub path: Option<String>,
    /// Why it failed, else `null`.
    pub error: Option<String>,
}

/// The user's download directory: `$XDG_DOWNLOAD_DIR` when set to an absolute path, else
/// the platform's (`directories`: the XDG user-dirs entry on Linux), else `~/Downloads`.
pub fn download_dir() -> PathBuf {
    if let Some(p) = std::env::var_os("XDG_DOWNLOAD_DIR").map(PathBuf::from).filter(|p| p.is_absolute()) {
        return p;
    }
    if let Some(d) = directories::UserDirs::new() {
        return d.download_dir().map(Path::to_path_buf).unwrap_or_else(|| d.home_dir().join("Downloads"));
    }
    std::env::temp_dir().join("Downloads")
}

/// A file name safe to create in a directory: the last path component of `name` with
/// control characters dropped, at most 200 bytes; "download" when nothing is left.
pub fn safe_name(name: &str) -> String {
    let last = name.rsplit(['/', '\\']).next().unwrap_or("");
    let mut s: String = last.chars().filter(|c| !c.is_control()).collect();
    while s.len() > 200 {
        s.pop();
    }
    let s = s.trim().trim_start_matches('.').to_string();
    if s.is_empty() {
        "download".into()
    } else {
        s
    }
}

/// `dir/name`, or `dir/stem (n).ext` with the smallest n ≥ 1 that does not exist yet.
pub fn unique_path(dir: &Path, name: &str) -> PathBuf {
    let first = dir.join(name);
    if !first.exists() {
        return first;
    }
    let (stem, ext) = match name.rfind('.') {
        Some(i) if i > 0 => (&name[..i], &name[i..]),
        _ => (name, ""),
    };
    (1..).map(|n| dir.join(format!("{stem} ({n}){ext}"))).find(|p| !p.exists()).expect("some name is free")
}

impl BrowserRef {
    /// Intercepts `page`'s file chooser (headless only) and publishes each one it opens.
    pub(super) fn follow_file_chooser(&self, page: &Page, generation: u64) {
        if self.shared().headed {
            return;
        }
        let me = self.clone();
        let page = page.clone();
        let tab = page.target_id().as_ref().to_string();
        tokio::spawn(async move {
            // Listen before enabling: nothing opened in between is missed.
            let Ok(mut opened) = bounded("listen", page.event_listener::<EventFileChooserOpened>()).await else {
                return;
            };
            if let Err(e) = bounded(
                "Page.setInterceptFileChooserDialog",
                page.execute(SetInterceptFileChooserDialogParams::new(true)),
            )
            .await
            {
                tracing::debug!("file chooser interception: {e}");
                return;
            }
            while let Some(ev) = opened.next().await {
                let Some(node) = ev.backend_node_id else { continue };
                let accept = accept_of(&page, node).await;
                {
                    let mut s = me.shared();
                    if s.generation != generation {
                        return;
                    }
                    s.next_chooser += 1;
                    let id = s.next_chooser;
                    let multiple = ev.mode == FileChooserOpenedMode::SelectMultiple;
                    s.file_chooser = Some((FileChooser { id, tab: tab.clone(), multiple, accept }, node));
                }
                me.publish();
            }
        });
    }

    /// Answers file chooser `chooser`: sets `files` (regular files, absolute paths) on its
    /// input, or cancels it when `files` is empty (the input keeps what it had).
    /// Errors: `BadRequest` when no such chooser is pending, for more than one file for a
    /// single-file input, over [`MAX_CHOOSER_FILES`], or a path that is not a regular file.
    pub async fn answer_file_chooser(&self, chooser: u64, files: Vec<PathBuf>) -> Result<(), BrowserError> {
        let (pending, page) = {
            let s = self.shared();
            let Some((c, node)) = s.file_chooser.clone().filter(|(c, _)| c.id == chooser) else {
                return Err(BrowserError::BadRequest(format!("no file chooser {chooser} is waiting")));
            };
            let page = s.pages.get(&c.tab).cloned();
            ((c, node), page)
        };
        let (c, node) = pending;
        if files.len() > MAX_CHOOSER_FILES || (!c.multiple && files.len() > 1) {
            return Err(BrowserError::BadRequest(format!(
                "this input takes {} file(s), got {}",
                if c.multiple { MAX_CHOOSER_FILES } else { 1 },
                files.len()
            )));
        }
        for f in &files {
            if !f.is_absolute() || !std::fs::metadata(f).map(|m| m.is_file()).unwrap_or(false) {
                return Err(BrowserError::BadRequest(format!("{} is not a readable file", f.display())));
            }
        }
        {
            let mut s = self.shared();
            if s.file_chooser.as_ref().is_some_and(|(p, _)| p.id == chooser) {
                s.file_chooser = None;
            }
        }
        self.publish();
        if files.is_empty() {
            return Ok(());
        }
        let Some(page) = page else { return Err(BrowserError::BadRequest("the tab of that chooser is gone".into())) };
        let mut p = SetFileInputFilesParams::new(files.iter().map(|f| f.to_string_lossy().into_owned()).collect());
        p.backend_node_id = Some(node);
        bounded("DOM.setFileInputFiles", page.execute(p)).await?;
        Ok(())
    }

    /// Saves the bytes of one file the user picked (web mode) for chooser `chooser` under
    /// the profile (`uploads/<chooser>/<name>`, unique) and returns its path for
    /// [`BrowserRef::answer_file_chooser`]. Errors: `BadRequest` when no such chooser is
    /// waiting or the file cannot be written.
    pub fn stage_upload(&self, chooser: u64, name: &str, bytes: &[u8]) -> Result<PathBuf, BrowserError> {
        if !self.shared().file_chooser.as_ref().is_some_and(|(c, _)| c.id == chooser) {
            return Err(BrowserError::BadRequest(format!("no file chooser {chooser} is waiting")));
        }
        let dir = self.0.profile.join("uploads").join(chooser.to_string());
        std::fs::create_dir_all(&dir)
            .map_err(|e| BrowserError::BadRequest(format!("create {}: {e}", dir.display())))?;
        let path = unique_path(&dir, &safe_name(name));
        std::fs::write(&path, bytes).map_err(|e| BrowserError::BadRequest(format!("write {}: {e}", path.display())))?;
        Ok(path)
    }

    /// Sends downloads of this (headless) launch to a staging directory in the profile and
    /// follows them: each finished one moves into [`download_dir`] under a unique name.
    pub(super) async fn follow_downloads(
        &self,
        browser: &Browser,
        generation: u64,
    ) -> Result<JoinHandle<()>, BrowserError> {
        let mut begin = bounded("listen", browser.event_listener::<EventDownloadWillBegin>()).await?;
        let mut progress = bounded("listen", browser.event_listener::<EventDownloadProgress>()).await?;
        let staging = self.0.profile.join("downloads");
        std::fs::create_dir_all(&staging)
            .map_err(|e| BrowserError::Launch(format!("create {}: {e}", staging.display())))?;
        let mut p = SetDownloadBehaviorParams::new(SetDownloadBehaviorBehavior::AllowAndName);
        p.download_path = Some(staging.to_string_lossy().into_owned());
        p.events_enabled = Some(true);
        bounded("Browser.setDownloadBehavior", browser.execute(p)).await?;
        let weak = Arc::downgrade(&self.0);
        Ok(tokio::spawn(async move {
            let mut last_pub = Instant::now() - Duration::from_secs(1);
            loop {
                tokio::select! {
                    Some(ev) = begin.next() => {
                        let Some(slot) = weak.upgrade() else { return };
                        let me = BrowserRef(slot);
                        {
                            let mut s = me.shared();
                            if s.generation != generation { return; }
                            s.downloads.push(Download {
                                id: ev.guid.clone(), name: safe_name(&ev.suggested_filename), url: ev.url.clone(),
                                received: 0, total: 0, state: DownloadState::InProgress, path: None, error: None,
                            });
                            trim_downloads(&mut s.downloads);
                        }
                        me.publish();
                    }
                    Some(ev) = progress.next() => {
                        let Some(slot) = weak.upgrade() else { return };
                        let me = BrowserRef(slot);
                        let done = match ev.state {
                            DownloadProgressState::InProgress => None,
                            DownloadProgressState::Completed => Some(true),
                            DownloadProgressState::Canceled => Some(false),
                        };
                        let name = {
                            let mut s = me.shared();
                            if s.generation != generation { return; }
                            let Some(d) = s.downloads.iter_mut().find(|d| d.id == ev.guid) else { continue };
                            d.received = ev.received_bytes.max(0.0) as u64;
                            d.total = ev.total_bytes.max(0.0) as u64;
                            if done == Some(false) { d.state = DownloadState::Canceled; }
                            d.name.clone()
                        };
                        if done == Some(true) {
                            let from = staging.join(&ev.guid);
                            let moved = tokio::task::spawn_blocking(move || move_into_downloads(&from, &name)).await;
                            let mut s = me.shared();
                            if let Some(d) = s.downloads.iter_mut().find(|d| d.id == ev.guid) {
                                match moved {
                                    Ok(Ok(path)) => {
                                        d.state = DownloadState::Completed;
                                        d.path = Some(path.to_string_lossy().into_owned());
                                    }
                                    Ok(Err(e)) => { d.state = DownloadState::Failed; d.error = Some(e); }
                                    Err(e) => { d.state = DownloadState::Failed; d.error = Some(e.to_string()); }
                                }
                            }
                        }
                        if done.is_some() || last_pub.elapsed() >= Duration::from_millis(PROGRESS_EVERY_MS) {
                            last_pub = Instant::now();
                            me.publish();
                        }
                    }
                    else => return,
                }
            }
        }))
    }
}

/// Keeps at most [`MAX_DOWNLOADS`], forgetting the oldest finished ones first.
fn trim_downloads(v: &mut Vec<Download>) {
    while v.len() > MAX_DOWNLOADS {
        let i = v.iter().position(|d| d.state != DownloadState::InProgress).unwrap_or(0);
        v.remove(i);
    }
}

/// Moves a finished download into [`download_dir`] as `name` (unique); a copy then a
/// removal when they are on different file systems.
fn move_into_downloads(from: &Path, name: &str) -> Result<PathBuf, String> {
    let dir = download_dir();
    std::fs::create_dir_all(&dir).map_err(|e| format!("create {}: {e}", dir.display()))?;
    let to = unique_path(&dir, name);
    if std::fs::rename(from, &to).is_err() {
        std::fs::copy(from, &to).map_err(|e| format!("save {}: {e}", to.display()))?;
        let _ = std::fs::remove_file(from);
    }
    Ok(to)
}

/// The `accept` attribute of the input `node` ("" when unreadable or too long).
async fn accept_of(page: &Page, node: BackendNodeId) -> String {
    let mut r = ResolveNodeParams::default();
    r.backend_node_id = Some(node);
    let Ok(obj) = bounded("DOM.resolveNode", page.execute(r)).await else { return String::new() };
    let Some(oid) = obj.result.object.object_id.clone() else { return String::new() };
    let mut c = CallFunctionOnParams::new("function () { return String(this.accept || ''); }");
    c.object_id = Some(oid);
    c.return_by_value = Some(true);
    let Ok(v) = bounded("Runtime.callFunctionOn", page.execute(c)).await else { return String::new() };
    let s = v.result.result.value.as_ref().and_then(|v| v.as_str()).unwrap_or("").to_string();
    if s.len() > MAX_ACCEPT_BYTES {
        String::new()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_made_safe_and_unique() {
        assert_eq!(safe_name("../../etc/passwd"), "passwd");
        assert_eq!(safe_name("a\\b\\report.pdf"), "report.pdf");
        assert_eq!(safe_name(".hidden"), "hidden");
        assert_eq!(safe_name(""), "download");
        assert_eq!(safe_name("x\u{0}y\n.txt"), "xy.txt");
        assert!(safe_name(&"é".repeat(300)).len() <= 200);
        let dir = std::env::temp_dir().join(format!("porthole-unique-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        assert_eq!(unique_path(&dir, "a.txt"), dir.join("a.txt"));
        std::fs::write(dir.join("a.txt"), b"1").unwrap();
        assert_eq!(unique_path(&dir, "a.txt"), dir.join("a (1).txt"));
        std::fs::write(dir.join("a (1).txt"), b"1").unwrap();
        assert_eq!(unique_path(&dir, "a.txt"), dir.join("a (2).txt"));
        std::fs::write(dir.join("noext"), b"1").unwrap();
        assert_eq!(unique_path(&dir, "noext"), dir.join("noext (1)"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
