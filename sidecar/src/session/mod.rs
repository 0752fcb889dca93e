//! Session restore (DESIGN §14, protocol §4 `GET /api/workspace`): the UI's workspace
//! document and, for every terminal it refers to, what a later start needs to bring that
//! terminal back (its last working directory, what it ran, the end of its output), kept in
//! `session.json` in the platform's state directory.
//!
//! **Architecture Invariant:** this module is the only reader and writer of the session
//! file, and the only holder of the workspace document. It writes the file debounced after
//! each `PUT /api/workspace` and once more at shutdown ([`Session::save_at_shutdown`]), always
//! atomically (`file.rs`). It reads it once, at start: a file that cannot be used is moved
//! aside and reported ([`Problem`]), never fatal. The document is opaque except for the
//! terminal ids it names (`capture::referenced_ids`).
//!
//! Running processes do not survive: a restored terminal is a new shell in the old
//! directory, with the old output shown above it by the UI.

mod capture;
mod file;

/// The one atomic writer of the state directory's files (the session, the project trust store).
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::Notify;

use crate::pty::{Registry, TerminalId};

/// The file's name inside the state directory.
pub const FILE_NAME: &str = "session.json";
/// The file's format number (`format`); another number is not read.
pub const FORMAT: u32 = 1;
/// Largest session file read, in bytes (a larger one is moved aside). What is written stays
/// under it: a 256 KiB document plus [`MAX_RECORDS`] records of at most
/// [`SCROLLBACK_TAIL_BYTES`] of text and three short strings (pinned by a test).
pub const MAX_FILE_BYTES: u64 = 16 << 20;
/// Most terminals recorded (the first ones the document names).
pub const MAX_RECORDS: usize = 64;
/// Most bytes of a terminal's output kept, as UTF-8 text of whole lines.
pub const SCROLLBACK_TAIL_BYTES: usize = 64 * 1024;
/// Most lines of a terminal's output kept.
pub const SCROLLBACK_TAIL_LINES: usize = 1000;
/// How much of a terminal's raw output (its scrollback ring's end) is read to make the text
/// kept, in bytes: enough for [`SCROLLBACK_TAIL_BYTES`] of text with colours and prompts, and
/// a bound on the work per terminal at each save (measured in a debug build: parsing a
/// terminal's whole 2 MiB of output took about 0.7 s, 256 KiB of it still 0.5 s).
pub const SCROLLBACK_TAIL_RAW_BYTES: usize = 128 * 1024;
/// Longest working directory, `argv` (all its arguments together) or command line kept, in
/// bytes.
pub const MAX_TEXT_BYTES: usize = 4096;
/// Quiet time after a `PUT` before the file is written, in milliseconds.
pub const SAVE_DEBOUNCE_MS: u64 = 500;
/// Longest a stream of `PUT`s can put the write off, in milliseconds.
pub const SAVE_MAX_DELAY_MS: u64 = 5_000;
/// How often the terminals' records are taken again and, if one changed, written, in
/// milliseconds.
pub const SAVE_REFRESH_MS: u64 = 30_000;
/// Test-only: overrides [`SAVE_REFRESH_MS`] (a positive number of milliseconds). Not for
/// production use.
pub const ENV_TEST_REFRESH_MS: &str = "PORTHOLE_SESSION_REFRESH_MS";

/// The refresh interval: [`SAVE_REFRESH_MS`], or the test-only [`ENV_TEST_REFRESH_MS`].
fn refresh_interval() -> Duration {
    let ms = std::env::var(ENV_TEST_REFRESH_MS).ok().and_then(|v| v.parse::<u64>().ok()).filter(|ms| *ms > 0);
    Duration::from_millis(ms.unwrap_or(SAVE_REFRESH_MS))
}

/// Longest the save at shutdown is waited for, in milliseconds (the terminals then still
/// get their SIGHUP-to-SIGKILL grace inside the shutdown bound).
pub const SHUTDOWN_SAVE_MS: u64 = 1_000;

/// What the session keeps of one terminal (protocol §4 `TerminalRecord`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TerminalRecord {
    /// Its last working directory: the shell's OSC 7 report, else `/proc/<pid>/cwd`, else
    /// where it started.
    pub cwd: String,
    /// `argv` as started (`["-bash"]` for a login shell), its first arguments only when
    /// they are longer than [`MAX_TEXT_BYTES`] together.
    pub command: Vec<String>,
    /// The command line running when it was recorded, when shell integration reported one.
    pub running: Option<String>,
    /// The end of its output as plain text lines joined with `\n` (the last
    /// [`SCROLLBACK_TAIL_RAW_BYTES`] of its output drawn on a screen of its size: no escape
    /// sequences), at most [`SCROLLBACK_TAIL_LINES`] lines and [`SCROLLBACK_TAIL_BYTES`] bytes.
    pub scrollback: String,
}

/// The file as written (`format` 1).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SessionFile {
    format: u32,
    /// When it was written, in milliseconds since the Unix epoch.
    saved_at: u64,
    /// The workspace document, as the UI last sent it.
    workspace: Value,
    /// A record per terminal the document names, by terminal id.
    terminals: BTreeMap<String, TerminalRecord>,
}

impl SessionFile {
    /// Checks every bound (a file edited by hand or written by another version may break
    /// them); the message names the first one broken.
    fn check(&self) -> Result<(), String> {
        if self.format != FORMAT {
            return Err(format!("format {} is not {FORMAT}", self.format));
        }
        if self.terminals.len() > MAX_RECORDS {
            return Err(format!("more than {MAX_RECORDS} terminals"));
        }
        for (id, r) in &self.terminals {
            if id.parse::<TerminalId>().is_err() {
                return Err(format!("{id:?} is not a terminal id"));
            }
            let long = |s: &str| s.len() > MAX_TEXT_BYTES;
            if long(&r.cwd)
                || r.command.iter().map(|a| a.len()).sum::<usize>() > MAX_TEXT_BYTES
                || r.running.as_deref().is_some_and(long)
                || r.scrollback.len() > SCROLLBACK_TAIL_BYTES
            {
                return Err(format!("terminal {id}: a value is out of bounds"));
            }
        }
        Ok(())
    }
}

/// A session file that could not be restored (protocol §4 `problem`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// The session file.
    pub file: PathBuf,
    /// Where it was moved (`session.json.corrupt-<unix seconds>`); `None` when moving it
    /// failed too.
    pub moved_to: Option<PathBuf>,
    /// Why it could not be used: the OS error, the JSON parser's message, or the bound broken.
    pub message: String,
}

/// The last session, as loaded at start (protocol §4 `restore`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Restore {
    /// When it was saved, in milliseconds since the Unix epoch.
    pub saved_at: u64,
    /// A record per terminal the restored document names, by the id it had then.
    pub terminals: BTreeMap<String, TerminalRecord>,
}

/// `GET /api/workspace`'s answer.
#[derive(Debug, Clone, Serialize)]
pub struct View {
    /// The document (`None` until the first `PUT`, unless one was restored).
    pub workspace: Option<Value>,
    /// 0 at start (also for a restored document), +1 per `PUT`.
    pub revision: u64,
    /// The last session's terminals, when this sidecar started from a saved session.
    pub restore: Option<Arc<Restore>>,
    /// Why the saved session was not restored, when its file was bad.
    pub problem: Option<Problem>,
}

/// The document and what is known of its terminals.
#[derive(Default)]
struct Doc {
    value: Option<Value>,
    revision: u64,
    /// The terminal ids `value` names.
    referenced: Vec<TerminalId>,
    /// The last record taken of each terminal (those of a restored session at first), so a
    /// terminal that is gone by the next save keeps what was known of it.
    records: BTreeMap<TerminalId, TerminalRecord>,
    /// The output offset of each live terminal when its record was taken (absent for the
    /// restored session's records): unchanged output is not read again.
    ends: BTreeMap<TerminalId, u64>,
    /// The revision last written to the file (`None`: not written by this sidecar yet).
    written: Option<u64>,
}

/// Why the file is written.
#[derive(Clone, Copy)]
enum Save {
    /// A `PUT` changed the document.
    Put,
    /// The periodic refresh: written only if a terminal's record changed.
    Refresh,
    /// At shutdown; no save follows.
    Last,
}

/// The session: owner of the workspace document and of the session file.
pub struct Session {
    /// `None` without a state directory (no home directory): nothing is read or written.
    file: Option<PathBuf>,
    doc: Mutex<Doc>,
    restore: Option<Arc<Restore>>,
    problem: Option<Problem>,
    /// Notified by each `PUT`: the saver writes once things are quiet.
    dirty: Notify,
    /// One write at a time, each from a fresh snapshot.
    writing: Mutex<()>,
    /// Set by the save at shutdown: a debounced save after it would record dead terminals.
    closed: AtomicBool,
    /// Set when the save at shutdown ran out of time: the terminals are being hung up and
    /// leave the registry, so what it would write is incomplete; the last file stays.
    abandoned: AtomicBool,
}

impl Session {
    /// Opens the session kept in `dir` (the state directory, `project::default_state_dir`;
    /// `None`: this run keeps no session, saying so in the log). With `restore`, the file is read: its document and
    /// records become the current ones and new terminal ids are allocated past the ones it
    /// names (so the UI never takes a new terminal for an old one); a bad file is moved
    /// aside and reported. Without, the file is not read (a bad one stays where it is) and
    /// the wall starts fresh. Either way, stale temp files of dead writers are removed and
    /// the session is saved from now on.
    pub fn open(dir: Option<&Path>, restore: bool, terminals: &Registry) -> Arc<Session> {
        let file = dir.map(|d| d.join(FILE_NAME));
        let mut doc = Doc::default();
        let (mut restored, mut problem) = (None, None);
        match &file {
            Some(file) => file::remove_stale_temps(file),
            None => tracing::warn!("no home directory: the session is neither restored nor saved"),
        }
        if let (Some(file), true) = (&file, restore) {
            match file::load(file) {
                file::Loaded::Missing => {}
                file::Loaded::Bad(p) => problem = Some(p),
                // A saved null document: nothing to restore.
                file::Loaded::Found(f) if f.workspace.is_null() => {}
                file::Loaded::Found(f) => {
                    let records: BTreeMap<TerminalId, TerminalRecord> =
                        f.terminals.iter().filter_map(|(id, r)| Some((id.parse().ok()?, r.clone()))).collect();
                    doc.referenced = capture::referenced_ids(&f.workspace);
                    if let Some(max) = doc.referenced.iter().chain(records.keys()).max() {
                        terminals.allocate_after(*max);
                    }
                    tracing::info!(file = %file.display(), terminals = records.len(), "session restored");
                    doc.records = records;
                    doc.value = Some(f.workspace);
                    restored = Some(Arc::new(Restore { saved_at: f.saved_at, terminals: f.terminals }));
                }
            }
        }
        Arc::new(Session {
            file,
            doc: Mutex::new(doc),
            restore: restored,
            problem,
            dirty: Notify::new(),
            writing: Mutex::new(()),
            closed: AtomicBool::new(false),
            abandoned: AtomicBool::new(false),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Doc> {
        self.doc.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// `GET /api/workspace`.
    pub fn view(&self) -> View {
        let doc = self.lock();
        View {
            workspace: doc.value.clone(),
            revision: doc.revision,
            restore: self.restore.clone(),
            problem: self.problem.clone(),
        }
    }

    /// `PUT /api/workspace`: replaces the document (`None`: null) and schedules a save.
    /// Returns the new revision.
    pub fn put(&self, value: Option<Value>) -> u64 {
        let mut doc = self.lock();
        doc.referenced = value.as_ref().map(capture::referenced_ids).unwrap_or_default();
        doc.value = value;
        doc.revision += 1;
        let revision = doc.revision;
        drop(doc);
        self.dirty.notify_one();
        revision
    }

    /// Starts the task that writes the file once `PUT`s have been quiet for
    /// [`SAVE_DEBOUNCE_MS`] (at most [`SAVE_MAX_DELAY_MS`] after the first), and every
    /// [`SAVE_REFRESH_MS`] when a terminal's record changed (a `cd` changes no document, and a
    /// crash gets no save at shutdown). Must run inside a tokio runtime.
    pub fn start_saver(self: &Arc<Self>, terminals: Arc<Registry>) {
        let me = self.clone();
        let every = refresh_interval();
        tokio::spawn(async move {
            loop {
                let refresh = tokio::time::sleep(every);
                let why = tokio::select! {
                    _ = me.dirty.notified() => Save::Put,
                    _ = refresh => Save::Refresh,
                };
                let (s, t) = (me.clone(), terminals.clone());
                if let Save::Refresh = why {
                    let _ = tokio::task::spawn_blocking(move || s.save(&t, Save::Refresh)).await;
                    continue;
                }
                let first = Instant::now();
                let quiet = Duration::from_millis(SAVE_DEBOUNCE_MS);
                let most = Duration::from_millis(SAVE_MAX_DELAY_MS);
                while first.elapsed() < most {
                    let wait = quiet.min(most.saturating_sub(first.elapsed()));
                    if tokio::time::timeout(wait, me.dirty.notified()).await.is_err() {
                        break;
                    }
                }
                let _ = tokio::task::spawn_blocking(move || s.save(&t, Save::Put)).await;
            }
        });
    }

    /// Writes the file now, before the terminals are hung up (blocking: call from a
    /// blocking context), and stops later saves. Nothing is written when no document was
    /// ever put or restored (a previous session's file stays as it is); a document put as
    /// null is saved as null, which restores nothing.
    pub fn save_at_shutdown(&self, terminals: &Registry) {
        self.save(terminals, Save::Last);
    }

    /// Gives up the save at shutdown under way (it ran past [`SHUTDOWN_SAVE_MS`]): it writes
    /// nothing, so the file keeps the last complete save (at most [`SAVE_REFRESH_MS`] old).
    pub fn abandon_shutdown_save(&self) {
        self.abandoned.store(true, Ordering::SeqCst);
    }

    /// Takes a record of every terminal the document names and writes the file (for
    /// [`Save::Refresh`], only when a record changed since the last write).
    fn save(&self, terminals: &Registry, why: Save) {
        let _writing = self.writing.lock().unwrap_or_else(|p| p.into_inner());
        let Some(path) = &self.file else { return };
        if self.closed.load(Ordering::SeqCst) {
            return;
        }
        if let Save::Last = why {
            self.closed.store(true, Ordering::SeqCst);
        }
        let (value, revision, referenced, previous, ends, written) = {
            let doc = self.lock();
            // Never put nor restored: a previous session's file stays as it is. A document put
            // as null is written as null (the next start begins with a fresh wall).
            if doc.value.is_none() && doc.revision == 0 {
                return;
            }
            let value = doc.value.clone().unwrap_or(Value::Null);
            (value, doc.revision, doc.referenced.clone(), doc.records.clone(), doc.ends.clone(), doc.written)
        };
        // Recorded outside the lock: reading a screen parses output, which takes a while.
        let mut records = BTreeMap::new();
        let mut new_ends = BTreeMap::new();
        for id in referenced {
            let record = match terminals.get(id) {
                Some(term) => {
                    let (record, end) = capture::record(&term, previous.get(&id).zip(ends.get(&id).copied()));
                    new_ends.insert(id, end);
                    record
                }
                None => match previous.get(&id) {
                    Some(r) => r.clone(),
                    None => continue,
                },
            };
            records.insert(id, record);
        }
        if matches!(why, Save::Refresh) && written == Some(revision) && records == previous {
            return;
        }
        if self.abandoned.load(Ordering::SeqCst) {
            return tracing::warn!("session not saved at shutdown (out of time); the last save stays");
        }
        let saved_at = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0);
        let out = SessionFile {
            format: FORMAT,
            saved_at,
            workspace: value,
            terminals: records.iter().map(|(id, r)| (id.to_string(), r.clone())).collect(),
        };
        {
            let mut doc = self.lock();
            doc.records = records;
            doc.ends = new_ends;
        }
        let bytes = match serde_json::to_vec(&out) {
            Ok(b) => b,
            Err(e) => return tracing::warn!("session not saved: {e}"),
        };
        if bytes.len() as u64 > MAX_FILE_BYTES {
            return tracing::warn!(bytes = bytes.len(), "session not saved: larger than {MAX_FILE_BYTES} bytes");
        }
        match crate::state_file::write_atomic(path, &bytes) {
            Ok(()) => {
                self.lock().written = Some(revision);
                tracing::debug!(file = %path.display(), bytes = bytes.len(), "session saved")
            }
            Err(e) => tracing::warn!(file = %path.display(), "session not saved: {e}"),
        }
    }
}

#[cfg(test)]
#[allow(clippy::assertions_on_constants)]
mod tests {
    use super::*;
    use crate::constants::{KILL_GRACE_MS, MAX_BODY_BYTES, SHUTDOWN_BOUND_MS};

    fn dir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("porthole-session-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn read(d: &Path) -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(d.join(FILE_NAME)).unwrap()).unwrap()
    }

    #[test]
    fn a_gone_terminal_keeps_its_record_and_an_unchanged_refresh_writes_nothing() {
        let d = dir("carry");
        let rec =
            TerminalRecord { cwd: "/srv".into(), command: vec!["-bash".into()], running: None, scrollback: "x".into() };
        let file = SessionFile {
            format: FORMAT,
            saved_at: 7,
            workspace: serde_json::json!({"panes": {"p1": {"terminalId": "t4"}, "p2": {"terminalId": "t9"}}}),
            terminals: [("t4".to_string(), rec.clone())].into(),
        };
        std::fs::write(d.join(FILE_NAME), serde_json::to_vec(&file).unwrap()).unwrap();
        let reg = Registry::new(4);
        let session = Session::open(Some(&d), true, &reg);
        assert_eq!(session.view().restore.unwrap().terminals["t4"], rec);
        // Saved again before the UI restores anything: the old record is kept.
        session.save(&reg, Save::Refresh);
        let first = read(&d);
        assert_eq!(first["terminals"]["t4"]["cwd"], "/srv");
        assert!(first["saved_at"].as_u64().unwrap() > 7);
        // Nothing changed since: a refresh does not write.
        std::thread::sleep(Duration::from_millis(5));
        session.save(&reg, Save::Refresh);
        assert_eq!(read(&d)["saved_at"], first["saved_at"]);
        // A document naming other terminals: the old record goes.
        session.put(Some(serde_json::json!({"panes": {}})));
        session.save(&reg, Save::Put);
        assert_eq!(read(&d)["terminals"], serde_json::json!({}));
        // After the save at shutdown nothing is written any more.
        session.save(&reg, Save::Last);
        session.put(Some(serde_json::json!({"after": true})));
        session.save(&reg, Save::Put);
        assert_eq!(read(&d)["workspace"], serde_json::json!({"panes": {}}));
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn bounds_fit_together() {
        // The save at shutdown leaves the terminals their grace before SIGKILL.
        assert!(SHUTDOWN_SAVE_MS + KILL_GRACE_MS < SHUTDOWN_BOUND_MS);
        // Everything written fits under what is read back: JSON escaping at most doubles the
        // record's text (a `"` or `\\`; the screen's text has no control characters), and the
        // document comes back no larger than the body it came in.
        let records = MAX_RECORDS * (2 * SCROLLBACK_TAIL_BYTES + 2 * 3 * MAX_TEXT_BYTES + 256);
        assert!(((MAX_BODY_BYTES + records) as u64) < MAX_FILE_BYTES, "{records}");
    }
}
