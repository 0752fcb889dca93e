//! One terminal: a child on a PTY and its reader/writer/waiter threads; its clients and
//! scrollback are held by its hub (`hub.rs`).
//!
//! Ownership and drop order: the [`Terminal`] owns the `MasterPty` (for resize and the
//! foreground process group) and the sending half of the input channel. The writer thread
//! owns the master's writer for the PTY's whole life (dropping it writes EOF to the program,
//! design §8) and ends when the last `Terminal` handle drops. The reader thread owns its own
//! duplicate of the master fd and ends at EOF. The waiter thread reaps the child. The slave
//! is dropped right after spawn, or EOF would never come.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::io::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{CommandBuilder, MasterPty, PtySize};
use tokio::sync::mpsc;

use super::error::PtyError;
use super::flow::Credit;
use super::hub::{Attachment, Client, ClientHandle, Event, Hub, Pace, Shared, MAX_KEPT_RESIZES};
use super::id::TerminalId;
use super::integration::{ShellInfo, Tracker};
use super::marks::Scanner;
use super::queries::QueryScan;
use super::ring::Ring;
use super::screen::{Backlog, Screen, ScreenText};
use super::sys;
use crate::constants::{BATCH_MAX_BYTES, BATCH_MAX_DELAY_US, EXIT_QUIET_MS, SCROLLBACK_BYTES};

/// A read at least this large means output is streaming: wait (up to the batch deadline) for
/// more before flushing. A smaller read (typically a keystroke echo) is flushed as soon as
/// the PTY has nothing more ready, so interactive latency does not pay the batch delay.
const BULK_READ_BYTES: usize = 1024;

/// Input messages queued per terminal before a sender waits (each ≤ 64 KiB).
const INPUT_QUEUE_MESSAGES: usize = 256;

/// What to start on a new PTY. Values are already validated by the caller.
#[derive(Debug, Clone)]
pub struct SpawnSpec {
    /// Width in columns of text, 1..=1000.
    pub cols: u16,
    /// Height in lines of text, 1..=1000.
    pub rows: u16,
    /// Working directory; must exist.
    pub cwd: PathBuf,
    /// `argv`; `None` starts the user's shell as a login shell.
    pub command: Option<Vec<String>>,
    /// The shell started when `command` is `None`: its path (`None`: `$SHELL`, else the
    /// password database's) and extra arguments given after Porthole's own.
    pub shell: ShellChoice,
}

/// Which shell a terminal without a command starts (the config's `[shell]`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShellChoice {
    /// Absolute path; `None`: the user's shell.
    pub program: Option<String>,
    /// Extra arguments.
    pub args: Vec<String>,
}

/// A snapshot of a terminal's public state (protocol §4 `Terminal`).
#[derive(Debug, Clone)]
pub struct TerminalInfo {
    /// The terminal's id.
    pub id: TerminalId,
    /// The child's pid, also its process group and session id.
    pub pid: i32,
    /// Working directory the child started in.
    pub cwd: String,
    /// `argv` as started (`["-bash"]` for a login shell).
    pub command: Vec<String>,
    /// Current width in columns.
    pub cols: u16,
    /// Current height in lines.
    pub rows: u16,
    /// True if and only if the child has not been reaped yet.
    pub alive: bool,
    /// Exit status once reaped; `128 + S` for a child killed by signal S.
    pub exit_code: Option<i32>,
    /// True if and only if the PTY's foreground process group is not the child's own.
    pub busy: bool,
    /// `comm` of the foreground process group leader, if readable.
    pub foreground: Option<String>,
    /// Once the child is reaped: the processes still alive in its process group or session
    /// (a `nohup` server, a job that ignored SIGHUP), by pid; empty while the child lives.
    pub survivors: Vec<Survivor>,
    /// What the shell's integration reported (cwd, running command, last exit status).
    pub shell: ShellInfo,
    /// The working directory now: the shell's report (OSC 7), else the child's own
    /// (`/proc/<pid>/cwd`); `None` once it ended or when neither can be read.
    pub cwd_now: Option<String>,
}

/// A process left running in an exited terminal's session (protocol §4 `survivors`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Survivor {
    /// Its pid.
    pub pid: i32,
    /// Its name (`/proc/<pid>/comm`), or `?` when it cannot be read.
    pub name: String,
}

/// A live (or exited, not yet deleted) terminal. Cheap to share behind an `Arc`.
pub struct Terminal {
    id: TerminalId,
    pid: i32,
    cwd: String,
    command: Vec<String>,
    master: Mutex<Box<dyn MasterPty + Send>>,
    input: mpsc::Sender<Vec<u8>>,
    shared: Arc<Shared>,
}

impl Terminal {
    /// Opens a PTY of `spec.cols`×`spec.rows`, starts the program as a session leader on it
    /// with `env` added, and starts the reader, writer and waiter threads. On error nothing
    /// is left running.
    pub(crate) fn spawn(id: TerminalId, spec: SpawnSpec, env: &[(String, String)]) -> Result<Terminal, PtyError> {
        let size = PtySize { rows: spec.rows, cols: spec.cols, pixel_width: 0, pixel_height: 0 };
        let pair = portable_pty::native_pty_system().openpty(size).map_err(|e| PtyError::Open(format!("{e:#}")))?;
        // Take the writer and our reader fd before spawning, so that no failure after the
        // spawn can leave a child behind.
        let writer = pair.master.take_writer().map_err(|e| PtyError::Open(format!("{e:#}")))?;
        let master_fd = pair.master.as_raw_fd().ok_or_else(|| PtyError::Open("master has no fd".into()))?;
        let reader = dup_cloexec(master_fd).map_err(|e| PtyError::Open(format!("fcntl(F_DUPFD_CLOEXEC): {e}")))?;

        let (mut builder, command) = match spec.command {
            Some(argv) if argv.is_empty() => {
                return Err(PtyError::Spawn { program: String::new(), reason: "empty argv".into() })
            }
            Some(argv) => (CommandBuilder::from_argv(argv.iter().map(Into::into).collect()), argv),
            None => {
                let shell = spec.shell.program.clone().unwrap_or_else(sys::user_shell);
                let base = shell.rsplit('/').next().unwrap_or(&shell).to_string();
                // Inside Porthole (the `ph` directory is given), bash, zsh and fish start with
                // Porthole's scripts: `PATH` kept, shell integration injected (shell.rs).
                let in_porthole = env.iter().any(|(k, _)| k == super::shell::BIN_DIR_VAR);
                let ours = super::shell::Kind::of(&shell)
                    .filter(|_| in_porthole)
                    .and_then(|kind| super::shell::command(&shell, kind));
                let mut b = ours.unwrap_or_else(|| {
                    if spec.shell.args.is_empty() {
                        // portable-pty starts $SHELL (from the builder's env) with argv[0] "-<base>".
                        let mut b = CommandBuilder::new_default_prog();
                        b.env("SHELL", &shell);
                        b
                    } else {
                        CommandBuilder::new(&shell)
                    }
                });
                b.args(&spec.shell.args);
                (b, vec![format!("-{base}")])
            }
        };
        builder.cwd(&spec.cwd);
        for (k, v) in env {
            builder.env(k, v);
        }
        let program = command.first().cloned().unwrap_or_default();
        let child = pair
            .slave
            .spawn_command(builder)
            .map_err(|e| PtyError::Spawn { program: program.clone(), reason: format!("{e:#}") })?;
        // Drop the slave now: the master sees EOF only once every slave fd is closed.
        drop(pair.slave);
        let pid = child.process_id().map(|p| p as i32).unwrap_or(0);
        // Dropping a std Child neither kills nor reaps it; the waiter thread reaps by pid.
        drop(child);
        if pid <= 1 {
            return Err(PtyError::Spawn { program, reason: "no pid".into() });
        }

        let (input, input_rx) = mpsc::channel(INPUT_QUEUE_MESSAGES);
        let shared = Arc::new(Shared {
            hub: Mutex::new(Hub {
                ring: Ring::new(SCROLLBACK_BYTES),
                shell: Tracker::default(),
                clients: BTreeMap::new(),
                next_client: 0,
                activity: 0,
                answerer: None,
                model_answers: std::collections::VecDeque::new(),
                cols: spec.cols,
                rows: spec.rows,
                written: 0,
                resizes: std::collections::VecDeque::new(),
                resize_seq: 0,
                eof: false,
                exit_code: None,
                exit_sent: false,
                closed: false,
                last_output: Instant::now(),
            }),
            cv: Condvar::new(),
            screen: Screen::new(spec.cols, spec.rows),
            input: input.clone(),
        });

        let name = id.to_string();
        let threads = (|| -> std::io::Result<()> {
            std::thread::Builder::new()
                .name(format!("pty-write-{name}"))
                .spawn(move || writer_loop(writer, input_rx))?;
            let s = shared.clone();
            std::thread::Builder::new().name(format!("pty-read-{name}")).spawn(move || reader_loop(s, reader))?;
            let s = shared.clone();
            std::thread::Builder::new().name(format!("pty-wait-{name}")).spawn(move || waiter_loop(s, pid))?;
            Ok(())
        })();
        if let Err(e) = threads {
            sys::signal_session(pid, libc::SIGKILL);
            return Err(PtyError::Spawn { program, reason: format!("thread: {e}") });
        }

        Ok(Terminal {
            id,
            pid,
            cwd: spec.cwd.to_string_lossy().into_owned(),
            command,
            master: Mutex::new(pair.master),
            input,
            shared,
        })
    }

    /// The terminal's id.
    pub fn id(&self) -> TerminalId {
        self.id
    }

    /// The child's pid (= its process group and session id).
    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// A snapshot of the public state. Reads the foreground process group with
    /// `tcgetpgrp(3)` and its name from `/proc`.
    pub fn info(&self) -> TerminalInfo {
        let (cols, rows, exit_code, shell) = {
            let hub = self.shared.lock();
            (hub.cols, hub.rows, hub.exit_code, hub.shell.info().clone())
        };
        let alive = exit_code.is_none();
        let pgrp =
            if alive { self.master.lock().unwrap_or_else(|p| p.into_inner()).process_group_leader() } else { None };
        TerminalInfo {
            id: self.id,
            pid: self.pid,
            cwd: self.cwd.clone(),
            command: self.command.clone(),
            cols,
            rows,
            alive,
            exit_code,
            busy: pgrp.is_some_and(|p| p != self.pid),
            foreground: pgrp.and_then(sys::process_name),
            survivors: if alive { Vec::new() } else { self.survivors() },
            cwd_now: if alive { shell.cwd.clone().or_else(|| sys::process_cwd(self.pid)) } else { None },
            shell,
        }
    }

    /// The live processes left in the terminal's process group or session, by pid (read from
    /// `/proc`; the reaped child is not among them). Only meaningful once the child is reaped.
    pub fn survivors(&self) -> Vec<Survivor> {
        let me = std::process::id() as i32;
        let mut pids: Vec<i32> =
            sys::session_members(self.pid).into_iter().filter(|&p| p != self.pid && p != me).collect();
        pids.sort_unstable();
        pids.into_iter()
            .map(|pid| Survivor { pid, name: sys::process_name(pid).unwrap_or_else(|| "?".to_string()) })
            .collect()
    }

    /// Attaches a client. The scrollback snapshot and the subscription are taken under one
    /// lock, so `replay` followed by `events` is exactly the terminal's output stream.
    ///
    /// Pace (protocol §5.1, §5.4): a client whose unacknowledged live output (the replay
    /// excluded) goes over `HIGH_WATERMARK_BYTES` falls behind: nothing more is queued to it,
    /// and neither the PTY nor the other clients wait for it. Once its acks bring it under
    /// `LOW_WATERMARK_BYTES`, [`ClientHandle::ack`] gives the job that queues its
    /// [`Event::CatchUp`], after which its output is live again.
    ///
    /// Exactly one live client is the **answerer** (protocol §5.2): the one that most
    /// recently attached or sent input ([`ClientHandle::note_input`]). So a new client starts
    /// as the answerer, and the previous one gets `Event::Answerer(false)`; when the answerer
    /// detaches or falls behind, the most recently active of the live others gets
    /// `Event::Answerer(true)`. While clients are attached and none is live, the screen model
    /// answers.
    pub fn attach(&self) -> Attachment {
        let mut hub = self.shared.lock();
        let replay = hub.ring.snapshot();
        let (tx, events) = mpsc::unbounded_channel();
        let id = hub.next_client;
        hub.next_client += 1;
        hub.activity += 1;
        let active = hub.activity;
        // Not yet in `clients`: `elect` tells only the previous answerer; this client learns
        // it answers from `Attachment::answers`.
        if let Some(c) = hub.answerer.and_then(|old| hub.clients.get(&old)) {
            let _ = c.tx.send(Event::Answerer(false));
        }
        hub.answerer = Some(id);
        let credit = Credit::client(replay.len() as u64);
        hub.clients.insert(id, Client { tx, credit, held: Vec::new(), pace: Pace::Live, active });
        Attachment {
            replay,
            shell: hub.shell.info().clone(),
            exited: if hub.exit_sent { hub.exit_code } else { None },
            closed: hub.closed,
            answers: true,
            events,
            handle: ClientHandle { shared: self.shared.clone(), id },
        }
    }

    /// Queues `data` to be written to the PTY unchanged. Waits (asynchronously) while the
    /// input queue is full. Errors with [`PtyError::Closed`] once the writer is gone.
    pub async fn write_input(&self, data: Vec<u8>) -> Result<(), PtyError> {
        self.input.send(data).await.map_err(|_| PtyError::Closed)
    }

    /// Sets the window size (`ioctl(TIOCSWINSZ)`; the program gets SIGWINCH).
    pub fn resize(&self, cols: u16, rows: u16) -> Result<(), PtyError> {
        let size = PtySize { rows, cols, pixel_width: 0, pixel_height: 0 };
        self.master
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .resize(size)
            .map_err(|e| PtyError::Resize(format!("{e:#}")))?;
        let mut hub = self.shared.lock();
        hub.cols = cols;
        hub.rows = rows;
        // In order with the output: bytes read before the resize were drawn at the old size.
        hub.resize_seq += 1;
        let entry = (hub.resize_seq, hub.written, cols, rows);
        hub.resizes.push_back(entry);
        if hub.resizes.len() > MAX_KEPT_RESIZES {
            hub.resizes.pop_front();
        }
        drop(hub);
        self.shared.screen.poke();
        Ok(())
    }

    /// Lets the screen model parse what arrived since it last did: from the ring, or the whole
    /// ring from a reset terminal when the ring no longer holds all of it.
    fn sync_screen(&self) {
        self.shared.sync_screen();
    }

    /// The screen as text with up to `scrollback` lines of history (protocol §9.5), after
    /// every byte of output published so far (parsing what the model has not seen yet).
    pub fn screen_text(&self, scrollback: usize) -> ScreenText {
        self.sync_screen();
        self.shared.screen.text(scrollback)
    }

    /// The end of the output as text: the last `max_bytes` bytes of the scrollback ring
    /// (from the first line start in them, so no character or escape sequence is cut, unless
    /// they are the whole output) parsed on a fresh screen of the terminal's size, with up to
    /// `history` lines above it; trailing blanks trimmed, no escape sequences. Costs
    /// O(`max_bytes`) whatever the output's length, unlike [`Terminal::screen_text`], which
    /// parses everything its model has not seen yet (the session's records, DESIGN §14).
    pub fn output_tail_text(&self, max_bytes: usize, history: usize) -> Vec<String> {
        let (bytes, whole, cols, rows) = {
            let hub = self.shared.lock();
            let bytes = hub.ring.tail(max_bytes);
            (bytes.clone(), hub.written == bytes.len() as u64, hub.cols, hub.rows)
        };
        let from = if whole { 0 } else { bytes.iter().position(|&b| b == b'\n').map_or(bytes.len(), |i| i + 1) };
        let screen = Screen::new(cols, rows);
        let tail = bytes[from..].to_vec();
        screen.catch_up(|_, _| Backlog { end: tail.len() as u64, bytes: tail, ..Backlog::default() });
        screen.text(history).lines
    }

    /// True if and only if the program asked for application cursor keys (DECCKM).
    pub fn application_cursor(&self) -> bool {
        self.sync_screen();
        self.shared.screen.application_cursor()
    }

    /// The screen's rows as text (no history).
    pub fn screen_rows(&self) -> Vec<String> {
        self.sync_screen();
        self.shared.screen.rows()
    }

    /// A receiver that changes after every output batch, every resize, and the child's exit.
    pub fn changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.shared.screen.subscribe()
    }

    /// How many bytes of output the PTY has produced so far (a stream offset: unchanged means
    /// no new output).
    pub fn output_bytes(&self) -> u64 {
        self.shared.lock().written
    }

    /// When the PTY last produced output (or the terminal started).
    pub fn last_output(&self) -> Instant {
        self.shared.lock().last_output
    }

    /// The exit status once the child is reaped.
    pub fn exit_code(&self) -> Option<i32> {
        self.shared.lock().exit_code
    }

    /// The working directory now: the shell's OSC 7 report (protocol §5.3), else the child's
    /// (`/proc/<pid>/cwd` on Linux), else where it started.
    pub fn current_cwd(&self) -> String {
        let reported = self.shared.lock().shell.info().cwd.clone();
        reported.or_else(|| sys::process_cwd(self.pid)).unwrap_or_else(|| self.cwd.clone())
    }

    /// Marks the terminal closed (output discarded from now on, clients get `exit` then
    /// `Closed`) and sends SIGHUP to its process group and session. Idempotent.
    pub(crate) fn hang_up(&self) {
        {
            let mut hub = self.shared.lock();
            if !hub.closed {
                hub.closed = true;
                if hub.exit_sent {
                    Shared::broadcast(&mut hub, Event::Closed);
                }
            }
            self.shared.cv.notify_all();
        }
        sys::signal_session(self.pid, libc::SIGHUP);
    }

    /// Sends SIGKILL to the process group and session. Idempotent.
    pub(crate) fn kill_now(&self) {
        sys::signal_session(self.pid, libc::SIGKILL);
    }

    /// True if and only if some live process remains in the terminal's group or session.
    pub(crate) fn anything_alive(&self) -> bool {
        sys::session_alive(self.pid)
    }

    /// True if and only if the child has been reaped.
    pub(crate) fn reaped(&self) -> bool {
        self.shared.lock().exit_code.is_some()
    }
}

/// `fcntl(F_DUPFD_CLOEXEC)`: our own fd for the master, so the reader never polls an fd that
/// the `MasterPty` closed.
fn dup_cloexec(fd: RawFd) -> std::io::Result<File> {
    // SAFETY: fd is the master's open fd; the result is a new fd we own.
    let new = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3) };
    if new < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `new` is a fresh fd owned by nobody else.
    Ok(File::from(unsafe { OwnedFd::from_raw_fd(new) }))
}

/// Reads into `buf`. `Ok(0)` means EOF. On Linux, reading the master after the slave side is
/// closed (the child exited) fails with EIO: that is EOF, not an error (design §8).
fn read_pty(f: &mut File, buf: &mut [u8]) -> std::io::Result<usize> {
    loop {
        match f.read(buf) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) if e.raw_os_error() == Some(libc::EIO) => return Ok(0),
            r => return r,
        }
    }
}

/// Reads the PTY in batches (flushed at 64 KiB, 4 ms after the first byte, or as soon as a
/// small read finds nothing more ready) until EOF. Clients never pause it: one that falls
/// behind catches up by state (protocol §5.4).
fn reader_loop(shared: Arc<Shared>, mut f: File) {
    let fd = f.as_raw_fd();
    let mut buf = vec![0u8; BATCH_MAX_BYTES];
    let max_delay = Duration::from_micros(BATCH_MAX_DELAY_US);
    let mut eof = false;
    let (mut scanner, mut marks) = (Scanner::default(), Vec::new());
    let mut queries = QueryScan::default();
    while !eof {
        let n = match read_pty(&mut f, &mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) => {
                tracing::warn!("pty read failed: {e}");
                break;
            }
        };
        let first = Instant::now();
        let (mut filled, mut last) = (n, n);
        while filled < buf.len() {
            let budget = max_delay.saturating_sub(first.elapsed());
            let wait = if last >= BULK_READ_BYTES { budget } else { Duration::ZERO };
            if !sys::wait_readable(fd, wait) {
                break;
            }
            match read_pty(&mut f, &mut buf[filled..]) {
                Ok(0) => {
                    eof = true;
                    break;
                }
                Ok(m) => {
                    filled += m;
                    last = m;
                }
                Err(e) => {
                    tracing::warn!("pty read failed: {e}");
                    eof = true;
                    break;
                }
            }
            if budget.is_zero() {
                break;
            }
        }
        marks.clear();
        scanner.scan(&buf[..filled], &mut marks);
        let has_query = queries.scan(&buf[..filled]);
        if shared.publish(&buf[..filled], &marks, has_query) {
            // No client is live to answer the query: the model does, at once.
            shared.sync_screen();
        }
    }
    let mut hub = shared.lock();
    hub.eof = true;
    shared.cv.notify_all();
    shared.maybe_send_exit(&mut hub, false);
}

/// Writes queued input to the PTY. Owns the master's writer for the PTY's whole life; ends
/// when the terminal (the channel's sender) is dropped, and only then drops the writer.
fn writer_loop(mut writer: Box<dyn Write + Send>, mut rx: mpsc::Receiver<Vec<u8>>) {
    while let Some(data) = rx.blocking_recv() {
        if let Err(e) = writer.write_all(&data).and_then(|_| writer.flush()) {
            tracing::debug!("pty write failed: {e}");
        }
    }
}

/// Reaps the child, records its status, and sends `exit` if the reader already saw EOF, or
/// once the PTY has been quiet for `EXIT_QUIET_MS` (a stray background
/// process may hold the slave open forever), or at once if the terminal is closed.
fn waiter_loop(shared: Arc<Shared>, pid: i32) {
    let code = sys::wait_child(pid).unwrap_or(-1);
    let quiet = Duration::from_millis(EXIT_QUIET_MS);
    let mut hub = shared.lock();
    hub.exit_code = Some(code);
    shared.cv.notify_all();
    shared.screen.poke();
    loop {
        let force = hub.closed || hub.last_output.elapsed() >= quiet;
        shared.maybe_send_exit(&mut hub, force);
        if hub.exit_sent {
            return;
        }
        hub = shared.cv.wait_timeout(hub, Duration::from_millis(100)).unwrap_or_else(|p| p.into_inner()).0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::constants::MAX_ACK_BYTES;

    fn spec(argv: &[&str]) -> SpawnSpec {
        SpawnSpec {
            cols: 80,
            rows: 24,
            cwd: std::env::temp_dir(),
            command: Some(argv.iter().map(|s| s.to_string()).collect()),
            shell: Default::default(),
        }
    }

    /// Takes and acks the replay (a later call starts after it), then receives (and acks)
    /// events until `done` holds (bounded, to turn a hang into a failure).
    fn collect(a: &mut Attachment, done: impl Fn(&[u8], Option<i32>) -> bool) -> (Vec<u8>, Option<i32>) {
        let mut out = std::mem::take(&mut a.replay);
        if !out.is_empty() {
            a.handle.ack(out.len() as u64).unwrap();
        }
        let mut exit = a.exited;
        let start = Instant::now();
        while !done(&out, exit) {
            assert!(start.elapsed() < Duration::from_secs(30), "timed out: {out:?}");
            match a.events.try_recv() {
                Ok(Event::Output(b)) => {
                    // Fell behind (a busy machine): make its catch-up, as the socket does.
                    if let Some(job) = a.handle.ack(b.len() as u64).unwrap() {
                        job.run();
                    }
                    out.extend_from_slice(&b);
                }
                Ok(Event::CatchUp(c)) => {
                    let state = c.state.get().expect("made before it is received").clone();
                    a.handle.ack(state.len() as u64).unwrap();
                    out.extend_from_slice(&state);
                }
                Ok(Event::Exit(c)) => exit = Some(c),
                Ok(Event::Answerer(_) | Event::Shell(_) | Event::Attention(_)) => {}
                Ok(Event::Closed) | Err(mpsc::error::TryRecvError::Disconnected) => break,
                Err(mpsc::error::TryRecvError::Empty) => std::thread::sleep(Duration::from_millis(5)),
            }
        }
        (out, exit)
    }

    /// The `Answerer` events queued to `a` so far.
    fn answerer_events(a: &mut Attachment) -> Vec<bool> {
        let mut out = Vec::new();
        while let Ok(ev) = a.events.try_recv() {
            if let Event::Answerer(b) = ev {
                out.push(b);
            }
        }
        out
    }

    #[test]
    fn the_answerer_is_the_most_recently_active_client() {
        let t = Terminal::spawn(TerminalId(1), spec(&["sleep", "1000"]), &[]).unwrap();
        let mut a = t.attach();
        assert!(a.answers, "a lone client answers");
        let mut b = t.attach();
        assert!(b.answers, "the newest client answers");
        assert_eq!(answerer_events(&mut a), [false]);
        a.handle.note_input();
        assert_eq!(answerer_events(&mut a), [true]);
        assert_eq!(answerer_events(&mut b), [false]);
        a.handle.note_input();
        assert_eq!(answerer_events(&mut a), [] as [bool; 0], "no event while nothing changes");
        let c = t.attach();
        assert_eq!(answerer_events(&mut a), [false]);
        // The answerer leaves: the most recently active of the rest (a, by input) takes over.
        drop(c.handle);
        assert_eq!(answerer_events(&mut a), [true]);
        assert_eq!(answerer_events(&mut b), [] as [bool; 0]);
        t.hang_up();
        t.kill_now();
    }

    #[test]
    fn the_screen_model_reads_the_end_of_more_output_than_the_ring_keeps() {
        // 6.3 MB > the 4 MiB ring: the model must restart from the ring, not from stale state.
        let t = Terminal::spawn(
            TerminalId(1),
            spec(&["sh", "-c", "yes abcdefgh | head -n 700000; printf 'END\\n'; exec sleep 1000"]),
            &[],
        )
        .unwrap();
        let _ = t.screen_rows(); // parse a little first, so the model has state to lose
        let start = Instant::now();
        while !t.shared.lock().ring.tail(8).ends_with(b"END\r\n") {
            assert!(start.elapsed() < Duration::from_secs(30));
            std::thread::sleep(Duration::from_millis(20));
        }
        let rows = t.screen_rows();
        assert!(rows.iter().any(|r| r == "END"), "{rows:?}");
        assert!(rows.iter().filter(|r| *r == "abcdefgh").count() >= 10, "{rows:?}");
        let text = t.screen_text(100);
        assert_eq!(text.scrollback, 100);
        assert!(text.lines[..100].iter().all(|l| l == "abcdefgh"));
        t.hang_up();
        t.kill_now();
    }

    #[test]
    fn an_exited_terminal_names_what_still_runs_in_its_session() {
        // The holder ignores SIGHUP (as `nohup` makes a server do), so the session leader's
        // exit leaves it running; it creates `ready` once its trap is set.
        let dir = tempfile_dir();
        let script = format!(
            "cd {dir}; (trap '' HUP; : > ready; exec sleep 1000) & echo HOLDER=$!; \
             while [ ! -e ready ]; do sleep 0.05; done; exit 0"
        );
        let t = Terminal::spawn(TerminalId(1), spec(&["sh", "-c", &script]), &[]).unwrap();
        assert!(t.info().survivors.is_empty(), "nothing is a survivor while the child lives");
        let mut a = t.attach();
        let (out, exit) = collect(&mut a, |_, e| e.is_some());
        assert_eq!(exit, Some(0));
        let text = String::from_utf8_lossy(&out);
        let holder: i32 = text.split("HOLDER=").nth(1).unwrap().split_whitespace().next().unwrap().parse().unwrap();
        assert_eq!(t.info().survivors, vec![Survivor { pid: holder, name: "sleep".into() }]);
        t.hang_up();
        t.kill_now();
        let start = Instant::now();
        while !t.survivors().is_empty() {
            assert!(start.elapsed() < Duration::from_secs(5), "the holder outlived SIGKILL");
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A fresh empty directory under the temp dir, for a test's files.
    fn tempfile_dir() -> String {
        let d = std::env::temp_dir().join(format!(
            "porthole-pty-test-{}-{}",
            std::process::id(),
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos()
        ));
        std::fs::create_dir_all(&d).unwrap();
        d.to_string_lossy().into_owned()
    }

    #[test]
    fn the_model_answers_a_query_while_every_client_is_behind() {
        // `dd` reads the reply from the tty (no echo, no line editing); `od` prints it.
        let script = "read go; stty -icanon -echo; seq 1 100000; printf '\\033[6n'; \
                      r=$(dd bs=1 count=7 2>/dev/null | od -An -c | tr -d ' '); echo; echo \"GOT $r\"; exec sleep 100";
        let t = Terminal::spawn(TerminalId(1), spec(&["sh", "-c", script]), &[]).unwrap();
        let a = t.attach();
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        rt.block_on(t.write_input(b"go\n".to_vec())).unwrap();
        let start = Instant::now();
        loop {
            let rows = t.screen_rows();
            if let Some(got) = rows.iter().find(|r| r.starts_with("GOT")) {
                assert_eq!(got, "GOT 033[24;1R", "{rows:?}");
                break;
            }
            assert!(start.elapsed() < Duration::from_secs(30), "no reply: {rows:?}");
            std::thread::sleep(Duration::from_millis(50));
        }
        drop(a);
        t.hang_up();
        t.kill_now();
    }

    #[test]
    fn a_flood_costs_the_model_only_the_lines_it_keeps() {
        // 300,000 short lines (1.9 MB, inside the ring), none parsed yet.
        let t = Terminal::spawn(TerminalId(1), spec(&["sh", "-c", "seq 1 300000; echo SEQ-DONE; exec sleep 100"]), &[])
            .unwrap();
        let start = Instant::now();
        while !t.shared.lock().ring.tail(16).ends_with(b"SEQ-DONE\r\n") {
            assert!(start.elapsed() < Duration::from_secs(30));
            std::thread::sleep(Duration::from_millis(20));
        }
        let b = t.shared.lock().backlog(0, 0);
        assert!(b.reset.is_some(), "parsed from a reset terminal");
        let lines = b.bytes.iter().filter(|&&c| c == b'\n').count();
        assert_eq!(lines, crate::constants::SCREEN_HISTORY_LINES + 24, "the history and the screen, no more");
        assert!(b.bytes.ends_with(b"300000\r\nSEQ-DONE\r\n"));
        // The screen read from it is the end of the output, with a full history above.
        let text = t.screen_text(5);
        assert_eq!(text.lines[..5], ["299974", "299975", "299976", "299977", "299978"]);
        t.hang_up();
        t.kill_now();
    }

    #[test]
    fn empty_argv_is_refused_before_anything_starts() {
        assert!(matches!(Terminal::spawn(TerminalId(1), spec(&[]), &[]), Err(PtyError::Spawn { .. })));
    }

    #[test]
    fn ack_out_of_range_is_refused_and_state_unchanged() {
        let t = Terminal::spawn(TerminalId(1), spec(&["sh", "-c", "printf abc; exec sleep 1000"]), &[]).unwrap();
        let mut a = t.attach();
        let (out, _) = collect(&mut a, |o, _| o.ends_with(b"abc"));
        // `collect` acked everything it read; nothing is unacknowledged now.
        assert!(a.handle.ack(1).is_err());
        assert!(a.handle.ack(0).is_err());
        assert!(a.handle.ack(MAX_ACK_BYTES + 1).is_err());
        // A second client starts with the replay unacknowledged, and may ack exactly that.
        let b = t.attach();
        assert_eq!(b.replay, out);
        assert!(b.handle.ack(out.len() as u64 + 1).is_err());
        assert!(b.handle.ack(out.len() as u64).is_ok());
        t.hang_up();
        t.kill_now();
    }

    #[test]
    fn writer_stays_alive_across_clients_so_no_eof_reaches_the_program() {
        // `cat` would exit on EOF; detaching every client must not send one.
        let t = Terminal::spawn(TerminalId(1), spec(&["cat"]), &[]).unwrap();
        drop(t.attach());
        let mut a = t.attach();
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        rt.block_on(t.write_input(b"ping\n".to_vec())).unwrap();
        let (out, exit) = collect(&mut a, |o, _| o.windows(6).filter(|w| w == b"ping\r\n").count() == 2);
        assert_eq!(exit, None, "{out:?}");
        assert!(t.info().alive);
        t.hang_up();
        let (_, exit) = collect(&mut a, |_, e| e.is_some());
        assert_eq!(exit, Some(128 + libc::SIGHUP));
    }
}
