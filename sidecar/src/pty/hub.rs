//! The hub of one terminal's clients: the state its handle, its threads and its clients share
//! under one lock (scrollback ring, shell-integration tracker, window sizes), and the rules
//! that run under that lock: output queued to every client in order, each client's own pace
//! (a client over the high watermark falls behind and gets no more output until it has
//! drawn what it has; then it catches up by state, from the screen model), and the election
//! of the one client that answers terminal queries (protocol §5.1, §5.2, §5.4). The PTY and
//! its threads are `terminal.rs`'s.

use std::collections::BTreeMap;
use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Instant;

use bytes::Bytes;
use tokio::sync::mpsc;

use super::error::PtyError;
use super::flow::Credit;
use super::integration::{Attention, ShellInfo, Tracker};
use super::marks::Mark;
use super::ring::Ring;
use super::screen::{Backlog, Screen};
use super::sys;
use crate::constants::SCREEN_HISTORY_LINES;

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
    /// This client fell behind and output went by without it: draw this state instead
    /// (protocol §5.4). Ordered with `Output`: the output that follows it is live again.
    CatchUp(CatchUp),
}

/// A catch-up (protocol §5.4): what went by while a client was behind, and the bytes that
/// bring its terminal to the model's state at the point where its live output resumes.
#[derive(Debug, Clone)]
pub struct CatchUp {
    /// Output bytes the client did not get.
    pub skipped_bytes: u64,
    /// Line feeds in them: how many lines went by.
    pub lines: u64,
    /// The state's bytes (VT sequences), once made; shared by the clones of the event.
    pub state: Arc<std::sync::OnceLock<Vec<u8>>>,
    /// Resolves once `state` is set (or the maker gave up: then the client should reattach).
    pub ready: Arc<tokio::sync::Notify>,
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
    /// Acks output; detaches the client when dropped.
    pub handle: ClientHandle,
}

/// One attached client. Dropping it detaches the client (which may resume a paused PTY).
pub struct ClientHandle {
    pub(super) shared: Arc<Shared>,
    pub(super) id: u64,
}

impl ClientHandle {
    /// Acknowledges `bytes` of processed output (the replay and catch-up states first).
    /// Errors with [`PtyError::AckOutOfRange`] if `bytes` is 0, over 2^32, or more than this
    /// client's unacknowledged bytes; the state is then unchanged. Returns a job when this
    /// ack brings a client that fell behind under the low watermark: run it (it parses, so
    /// off the async threads) to queue the client's catch-up (protocol §5.4).
    pub fn ack(&self, bytes: u64) -> Result<Option<CatchUpJob>, PtyError> {
        let mut hub = self.shared.lock();
        let Some(c) = hub.clients.get_mut(&self.id) else { return Ok(None) };
        c.credit.ack(bytes)?;
        if let Pace::Behind { since, lines } = c.pace {
            if c.credit.below_low() {
                c.pace = Pace::CatchingUp { since, lines };
                return Ok(Some(CatchUpJob { shared: self.shared.clone(), id: self.id }));
            }
        }
        Ok(None)
    }

    /// Records that this client sent input: it becomes the answerer (the others are told
    /// with [`Event::Answerer`]) once it is live. Idempotent while it already is.
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

/// Queues one client's catch-up: see [`ClientHandle::ack`].
pub struct CatchUpJob {
    shared: Arc<Shared>,
    id: u64,
}

impl CatchUpJob {
    /// Brings the screen model to the end of the output, makes the client live again from
    /// there (its next `Output` follows that point), queues [`Event::CatchUp`] in order, then
    /// makes the state's bytes. Blocks while the model parses (up to the ring's 4 MiB).
    pub fn run(self) {
        let shared = &self.shared;
        let mut queued: Option<(CatchUp, u64)> = None;
        let (state, replies) = shared.screen.catch_up_state(|parsed, seq| {
            let mut hub = shared.lock();
            let end = hub.written;
            let Some(c) = hub.clients.get_mut(&self.id) else { return (hub.backlog(parsed, seq), 0) };
            let Pace::CatchingUp { since, lines } = c.pace else { return (hub.backlog(parsed, seq), 0) };
            let ev = CatchUp {
                skipped_bytes: end - since,
                lines,
                state: Arc::new(std::sync::OnceLock::new()),
                ready: Arc::new(tokio::sync::Notify::new()),
            };
            if c.tx.send(Event::CatchUp(ev.clone())).is_ok() {
                c.pace = Pace::Live;
                queued = Some((ev, c.credit.position()));
                for held in std::mem::take(&mut c.held) {
                    let _ = c.tx.send(held);
                }
            }
            Shared::elect(&mut hub);
            (hub.backlog(parsed, seq), lines)
        });
        shared.reply(replies);
        let Some((ev, at)) = queued else { return };
        {
            let mut hub = shared.lock();
            if let Some(c) = hub.clients.get_mut(&self.id) {
                c.credit.insert_uncounted(at, state.len() as u64);
            }
        }
        let _ = ev.state.set(state);
        ev.ready.notify_one();
    }
}

impl Drop for ClientHandle {
    fn drop(&mut self) {
        let mut hub = self.shared.lock();
        hub.clients.remove(&self.id);
        Shared::elect(&mut hub);
    }
}

/// Whether a client gets the output as it comes (protocol §5.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Pace {
    /// Every batch is queued to it.
    Live,
    /// Over the high watermark: nothing more is queued until it has drawn what it has.
    /// `since` is the stream offset of the first byte it missed; `lines` the line feeds
    /// missed so far.
    Behind { since: u64, lines: u64 },
    /// Under the low watermark again; its catch-up is being made.
    CatchingUp { since: u64, lines: u64 },
}

pub(super) struct Client {
    pub(super) tx: mpsc::UnboundedSender<Event>,
    /// Events that follow output (exit, shell state, attention) held while this client is
    /// not live, so that they reach it after its catch-up, in order; at most
    /// `MAX_HELD_EVENTS` (the newest shell state replaces an older one).
    pub(super) held: Vec<Event>,
    /// What this client has been sent and not yet acknowledged.
    pub(super) credit: Credit,
    pub(super) pace: Pace,
    /// `Hub::activity` when this client last attached or sent input; the highest live one
    /// answers.
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
    /// The client that answers terminal queries: the most recently active live one. `None`
    /// if and only if no attached client is live.
    pub(super) answerer: Option<u64>,
    /// Output ranges `[start, end)` the screen model answers queries in (clients attached,
    /// none live), not parsed yet; at most `MAX_KEPT_RANGES`.
    pub(super) model_answers: VecDeque<(u64, u64)>,
    pub(super) cols: u16,
    pub(super) rows: u16,
    /// Output bytes published since the start (the stream offset the screen model reads to).
    pub(super) written: u64,
    /// Recent window size changes for the screen model: (sequence, stream offset, cols, rows).
    pub(super) resizes: std::collections::VecDeque<(u64, u64, u16, u16)>,
    /// Sequence number of the newest entry in `resizes`.
    pub(super) resize_seq: u64,
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
/// Answered ranges kept for the screen model (adjacent ones merge, so a flood is one).
const MAX_KEPT_RANGES: usize = 256;
/// Events held for a client that is not live (see `Client::held`).
const MAX_HELD_EVENTS: usize = 32;

impl Client {
    /// Queues `ev`, an event ordered after the output before it: at once to a live client;
    /// held until its catch-up for one that is not (protocol §5.4).
    pub(super) fn deliver(&mut self, ev: Event) {
        if self.pace == Pace::Live {
            let _ = self.tx.send(ev);
            return;
        }
        if matches!(ev, Event::Shell(_)) {
            self.held.retain(|e| !matches!(e, Event::Shell(_)));
        }
        if self.held.len() < MAX_HELD_EVENTS || matches!(ev, Event::Exit(_)) {
            self.held.push(ev);
        }
    }
}

impl Hub {
    /// What the screen model has not parsed yet, from stream offset `parsed` and size change
    /// `seq`: the ring's tail; or, from a reset terminal, only the end of it that holds the
    /// model's history and screen, when more lines than that arrived unparsed (a flood: its
    /// cost to the model is then bounded whatever its length, protocol §5.4) or when the
    /// ring no longer holds all of it. The answered ranges it covers are handed over (and
    /// forgotten); a backlog holding one is parsed whole, so that no query is skipped.
    pub(super) fn backlog(&mut self, parsed: u64, seq: u64) -> Backlog {
        let answer: Vec<(u64, u64)> = self.model_answers.drain(..).collect();
        let ring_start = self.written - self.ring.len() as u64;
        let lost = parsed < ring_start;
        let mut bytes = self.ring.tail((self.written - parsed.max(ring_start)) as usize);
        let keep = SCREEN_HISTORY_LINES + usize::from(self.rows);
        let cut = if lost || answer.is_empty() {
            memchr::memrchr_iter(b'\n', &bytes).nth(keep).map_or(0, |i| i + 1)
        } else {
            0
        };
        if lost || cut > 0 {
            bytes.drain(..cut);
            return Backlog {
                end: self.written,
                bytes,
                reset: Some((self.cols, self.rows)),
                resizes: Vec::new(),
                resize_seq: self.resize_seq,
                answer,
            };
        }
        Backlog {
            end: self.written,
            bytes,
            reset: None,
            resizes: self.resizes.iter().filter(|r| r.0 > seq).map(|r| (r.1, r.2, r.3)).collect(),
            resize_seq: self.resize_seq,
            answer,
        }
    }
}

pub(super) struct Shared {
    pub(super) hub: Mutex<Hub>,
    /// Wakes the waiter thread (exit, close).
    pub(super) cv: Condvar,
    pub(super) screen: Arc<Screen>,
    /// The PTY's input queue, for the screen model's replies to queries.
    pub(super) input: mpsc::Sender<Vec<u8>>,
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

    /// Queues `ev` to every client: [`Event::Closed`] at once (the terminal is gone, a
    /// catch-up no longer matters), anything else as [`Client::deliver`] does.
    pub(super) fn broadcast(hub: &mut Hub, ev: Event) {
        for c in hub.clients.values_mut() {
            if matches!(ev, Event::Closed) {
                let _ = c.tx.send(ev.clone());
            } else {
                c.deliver(ev.clone());
            }
        }
    }

    /// Makes the most recently active live client the answerer; on a change, tells the old
    /// one (if still attached) and the new one, in order with their output.
    pub(super) fn elect(hub: &mut Hub) {
        let best =
            hub.clients.iter().filter(|(_, c)| c.pace == Pace::Live).max_by_key(|(_, c)| c.active).map(|(id, _)| *id);
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

    /// Appends one batch to the scrollback and queues it to every live client; a client it
    /// takes over the high watermark falls behind. Returns true if and only if the screen
    /// model must answer queries in it now: clients are attached, none is live, and
    /// `has_query` (the batch may hold one).
    pub(super) fn publish(&self, data: &[u8], marks: &[Mark], has_query: bool) -> bool {
        let mut hub = self.lock();
        hub.last_output = Instant::now();
        if hub.closed {
            return false;
        }
        hub.ring.push(data);
        let start = hub.written;
        hub.written += data.len() as u64;
        let end = hub.written;
        let bytes = Bytes::copy_from_slice(data);
        let len = data.len() as u64;
        let mut feeds: Option<u64> = None;
        let mut fell_behind = false;
        for c in hub.clients.values_mut() {
            match &mut c.pace {
                Pace::Live => {
                    if c.tx.send(Event::Output(bytes.clone())).is_ok() && c.credit.sent(len) {
                        c.pace = Pace::Behind { since: end, lines: 0 };
                        fell_behind = true;
                    }
                }
                Pace::Behind { lines, .. } | Pace::CatchingUp { lines, .. } => {
                    *lines += *feeds.get_or_insert_with(|| memchr::memchr_iter(b'\n', data).count() as u64);
                }
            }
        }
        if fell_behind {
            Self::elect(&mut hub);
        }
        let model_answers = !hub.clients.is_empty() && hub.answerer.is_none();
        if model_answers {
            match hub.model_answers.back_mut() {
                Some(last) if last.1 == start => last.1 = end,
                _ => {
                    hub.model_answers.push_back((start, end));
                    if hub.model_answers.len() > MAX_KEPT_RANGES {
                        hub.model_answers.pop_front();
                    }
                }
            }
        }
        if !marks.is_empty() {
            let now = Instant::now();
            let changes = hub.shell.apply(marks, now);
            let mut events: Vec<Event> = changes.attention.into_iter().map(Event::Attention).collect();
            if changes.shell {
                events.insert(0, Event::Shell(hub.shell.info().clone()));
            }
            for c in hub.clients.values_mut() {
                for e in &events {
                    c.deliver(e.clone());
                }
            }
        }
        drop(hub);
        self.screen.poke();
        model_answers && has_query
    }

    /// Parses what the screen model has not seen yet, writing its replies to queries (in the
    /// ranges it answers) to the PTY.
    pub(super) fn sync_screen(&self) {
        let replies = self.screen.catch_up(|parsed, seq| self.lock().backlog(parsed, seq));
        self.reply(replies);
    }

    /// Writes the model's replies to the PTY's input queue; dropped (logged) if the queue is
    /// full: the program is not reading its input then.
    pub(super) fn reply(&self, replies: Vec<u8>) {
        if !replies.is_empty() && self.input.try_send(replies).is_err() {
            tracing::debug!("input queue full: a reply to a terminal query was dropped");
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
