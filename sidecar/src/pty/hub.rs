//! The hub of one terminal's clients: the state its handle, its threads and its clients share
//! under one lock (scrollback ring, shell-integration tracker, window sizes), and the rules
//! that run under that lock: output queued to every client in order, flow control across
//! them (pause at the high watermark, resume under the low one, detach one that stays over
//! it), and the election of the one client that answers terminal queries (protocol §5.1,
//! §5.2). The PTY and its threads are `terminal.rs`'s.

use std::collections::BTreeMap;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use bytes::Bytes;
use tokio::sync::{mpsc, oneshot};

use super::error::PtyError;
use super::flow::Credit;
use super::integration::{Attention, ShellInfo, Tracker};
use super::marks::Mark;
use super::ring::Ring;
use super::screen::Screen;
use super::sys;
use crate::constants::SLOW_CLIENT_DETACH_MS;

/// An event delivered to an attached client, in order.
#[derive(Debug, Clone)]
pub enum Event {
    /// A batch of raw PTY output (≤ 64 KiB).
    Output(Bytes),
    /// The program ended with this code (sent once, after its output).
    Exit(i32),
    /// The terminal was deleted; no more events follow.
    Closed,
    /// This client became (`true`) or stopped being (`false`) the one client that answers
    /// terminal queries found in live output (see [`Terminal::attach`] for the rule). Ordered
    /// with `Output`: it applies to the output that follows it.
    Answerer(bool),
    /// The shell's state changed (protocol §5.3): its cwd, the running command, the last
    /// exit status. Ordered with `Output`: sent after the output that carried the marks.
    Shell(ShellInfo),
    /// Something in the output wants the human (bell, notification, long command done),
    /// rate-limited per terminal.
    Attention(Attention),
}

/// What a client gets when it attaches: the scrollback, the exit status if the program has
/// already ended, and the live events that follow the scrollback with no gap and no overlap.
pub struct Attachment {
    /// The scrollback at the moment of attaching (≤ 4 MiB), oldest byte first. Must be
    /// acknowledged like output, but counts toward no watermark (protocol §5.1).
    pub replay: Vec<u8>,
    /// `Some(code)` if the `exit` event was already sent before this client attached (it will
    /// not be sent again on `events`).
    pub exited: Option<i32>,
    /// True if and only if the terminal was already closed (deleted) when attaching.
    pub closed: bool,
    /// True if and only if this client answers terminal queries in the live output that
    /// follows (always true on attach: the newest client is the answerer; later changes
    /// arrive as [`Event::Answerer`]).
    pub answers: bool,
    /// The shell's state at the moment of attaching (what the replay's marks said).
    pub shell: ShellInfo,
    /// Live events after the scrollback.
    pub events: mpsc::UnboundedReceiver<Event>,
    /// Acks flow control; detaches the client when dropped.
    pub handle: ClientHandle,
    /// Resolves if the hub detaches this client for being too slow.
    pub detached: Detached,
}

/// Resolves once the hub has detached its client because the client's unacknowledged live
/// output stayed over the high watermark for `SLOW_CLIENT_DETACH_MS` (protocol §5.1): the
/// client gets no more events, and the PTY no longer waits for it. Never resolves otherwise.
pub struct Detached(pub(super) oneshot::Receiver<()>);

impl Detached {
    /// Waits until the client is detached as too slow (forever if it never is).
    pub async fn wait(self) {
        if self.0.await.is_err() {
            // The client left on its own: it was not detached.
            std::future::pending::<()>().await;
        }
    }
}

/// One attached client. Dropping it detaches the client (which may resume a paused PTY).
pub struct ClientHandle {
    pub(super) shared: Arc<Shared>,
    pub(super) id: u64,
}

impl ClientHandle {
    /// Acknowledges `bytes` of processed output (the replay first). Errors with
    /// [`PtyError::AckOutOfRange`] if `bytes` is 0, over 2^32, or more than this client's
    /// unacknowledged bytes; the state is then unchanged. Once the client has been detached
    /// as too slow ([`Detached`]), acks are ignored.
    pub fn ack(&self, bytes: u64) -> Result<(), PtyError> {
        let mut hub = self.shared.lock();
        match hub.clients.get_mut(&self.id) {
            Some(c) => c.credit.ack(bytes)?,
            // Detached as too slow: its acks no longer matter.
            None => return Ok(()),
        }
        self.shared.maybe_resume(&mut hub);
        Ok(())
    }

    /// Records that this client sent input: it becomes the answerer (the others are told
    /// with [`Event::Answerer`]). Idempotent while it already is.
    pub fn note_input(&self) {
        let mut hub = self.shared.lock();
        hub.activity += 1;
        let stamp = hub.activity;
        if let Some(c) = hub.clients.get_mut(&self.id) {
            c.active = stamp;
        }
        Shared::elect(&mut hub);
    }
}

impl Drop for ClientHandle {
    fn drop(&mut self) {
        let mut hub = self.shared.lock();
        hub.clients.remove(&self.id);
        Shared::elect(&mut hub);
        self.shared.maybe_resume(&mut hub);
    }
}

pub(super) struct Client {
    pub(super) tx: mpsc::UnboundedSender<Event>,
    /// What this client has been sent and not yet acknowledged.
    pub(super) credit: Credit,
    /// Fires [`Detached`] when the hub detaches this client as too slow.
    pub(super) kick: oneshot::Sender<()>,
    /// `Hub::activity` when this client last attached or sent input; the highest answers.
    pub(super) active: u64,
}

/// State shared by the terminal handle, its threads and its clients; one lock.
pub(super) struct Hub {
    pub(super) ring: Ring,
    /// What the output's shell-integration marks said so far.
    pub(super) shell: Tracker,
    pub(super) clients: BTreeMap<u64, Client>,
    pub(super) next_client: u64,
    /// Counts attaches and inputs; stamps `Client::active`.
    pub(super) activity: u64,
    /// The client that answers terminal queries: the most recently active one. `None` if
    /// and only if no client is attached.
    pub(super) answerer: Option<u64>,
    pub(super) cols: u16,
    pub(super) rows: u16,
    /// Output bytes published since the start (the stream offset the screen model reads to).
    pub(super) written: u64,
    /// Recent window size changes for the screen model: (sequence, stream offset, cols, rows).
    pub(super) resizes: std::collections::VecDeque<(u64, u64, u16, u16)>,
    /// Sequence number of the newest entry in `resizes`.
    pub(super) resize_seq: u64,
    /// PTY reads are paused by flow control.
    pub(super) paused: bool,
    /// The reader saw EOF (or EIO: the slave side is gone).
    pub(super) eof: bool,
    /// Set once the child is reaped.
    pub(super) exit_code: Option<i32>,
    pub(super) exit_sent: bool,
    /// Deleted: output is discarded and clients are told `Closed` after `Exit`.
    pub(super) closed: bool,
    pub(super) last_output: Instant,
}

/// Size changes kept for the screen model; older ones have left the ring anyway.
pub(super) const MAX_KEPT_RESIZES: usize = 256;

pub(super) struct Shared {
    pub(super) hub: Mutex<Hub>,
    pub(super) cv: Condvar,
    pub(super) screen: Arc<Screen>,
}

impl Drop for Shared {
    /// The terminal is gone (its threads and handles too): free its scrollback and screen,
    /// then hand the freed memory back to the OS (glibc keeps freed chunks otherwise).
    fn drop(&mut self) {
        let hub = self.hub.get_mut().unwrap_or_else(|p| p.into_inner());
        hub.ring = Ring::new(1);
        self.screen.clear();
        sys::release_free_memory();
    }
}

impl Shared {
    pub(super) fn lock(&self) -> MutexGuard<'_, Hub> {
        // A poisoned lock means a thread panicked mid-update; the data is still usable
        // (every update is a few plain assignments), so keep serving.
        self.hub.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(super) fn broadcast(hub: &mut Hub, ev: Event) {
        for c in hub.clients.values() {
            let _ = c.tx.send(ev.clone());
        }
    }

    /// Makes the most recently active client the answerer; on a change, tells the old one
    /// (if still attached) and the new one, in order with their output.
    pub(super) fn elect(hub: &mut Hub) {
        let best = hub.clients.iter().max_by_key(|(_, c)| c.active).map(|(id, _)| *id);
        if best == hub.answerer {
            return;
        }
        for (id, answers) in [(hub.answerer, false), (best, true)] {
            if let Some(c) = id.and_then(|id| hub.clients.get(&id)) {
                let _ = c.tx.send(Event::Answerer(answers));
            }
        }
        hub.answerer = best;
    }

    /// Resumes reads if paused and every client is below the low watermark.
    pub(super) fn maybe_resume(&self, hub: &mut Hub) {
        if hub.paused && hub.clients.values().all(|c| c.credit.below_low()) {
            hub.paused = false;
            self.cv.notify_all();
        }
    }

    /// Detaches every client whose backlog has been over the high watermark for
    /// `SLOW_CLIENT_DETACH_MS` by `now` (the screen model is never detached), then resumes
    /// reads if that was all that held them. Returns the earliest moment another client
    /// will be due, if any is over the watermark.
    pub(super) fn detach_slow(&self, hub: &mut Hub, now: Instant) -> Option<Instant> {
        let limit = Duration::from_millis(SLOW_CLIENT_DETACH_MS);
        let due: Vec<u64> = hub
            .clients
            .iter()
            .filter(|(_, c)| c.credit.overdue_at(limit).is_some_and(|t| t <= now))
            .map(|(id, _)| *id)
            .collect();
        for id in &due {
            if let Some(c) = hub.clients.remove(id) {
                tracing::info!(
                    client = id,
                    backlog = c.credit.backlog(),
                    "detaching a client that stopped acknowledging"
                );
                let _ = c.kick.send(());
            }
        }
        if !due.is_empty() {
            Self::elect(hub);
            self.maybe_resume(hub);
        }
        hub.clients.values().filter_map(|c| c.credit.overdue_at(limit)).min()
    }

    /// Appends one batch to the scrollback and queues it to every client.
    pub(super) fn publish(&self, data: &[u8], marks: &[Mark]) {
        let mut hub = self.lock();
        hub.last_output = Instant::now();
        if hub.closed {
            return;
        }
        hub.ring.push(data);
        hub.written += data.len() as u64;
        let bytes = Bytes::copy_from_slice(data);
        let (len, now) = (data.len() as u64, Instant::now());
        let mut over = false;
        for c in hub.clients.values_mut() {
            if c.tx.send(Event::Output(bytes.clone())).is_ok() {
                over |= c.credit.sent(len, now);
            }
        }
        if over {
            hub.paused = true;
        }
        if !marks.is_empty() {
            let changes = hub.shell.apply(marks, now);
            let mut events: Vec<Event> = changes.attention.into_iter().map(Event::Attention).collect();
            if changes.shell {
                events.insert(0, Event::Shell(hub.shell.info().clone()));
            }
            for c in hub.clients.values() {
                for e in &events {
                    let _ = c.tx.send(e.clone());
                }
            }
        }
        drop(hub);
        self.screen.poke();
    }

    /// Blocks the reader while flow control has paused it (and the terminal is open),
    /// detaching clients that stay over the high watermark too long meanwhile.
    pub(super) fn wait_unpaused(&self) {
        let mut hub = self.lock();
        while hub.paused && !hub.closed {
            let now = Instant::now();
            hub = match self.detach_slow(&mut hub, now) {
                _ if !hub.paused => break,
                Some(due) => {
                    self.cv.wait_timeout(hub, due.saturating_duration_since(now)).unwrap_or_else(|p| p.into_inner()).0
                }
                None => self.cv.wait(hub).unwrap_or_else(|p| p.into_inner()),
            };
        }
    }

    /// Sends `exit` once: when the child is reaped and the reader saw EOF, or `force`.
    pub(super) fn maybe_send_exit(&self, hub: &mut Hub, force: bool) {
        if hub.exit_sent {
            return;
        }
        let Some(code) = hub.exit_code else { return };
        if hub.eof || force {
            hub.exit_sent = true;
            Self::broadcast(hub, Event::Exit(code));
            if hub.closed {
                Self::broadcast(hub, Event::Closed);
            }
        }
    }
}
