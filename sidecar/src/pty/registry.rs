//! The set of live terminals, in creation order, with id allocation and kill/shutdown.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::error::PtyError;
use super::id::TerminalId;
use super::terminal::{SpawnSpec, Terminal};
use crate::constants::KILL_GRACE_MS;

/// Owns every terminal. Ids are allocated from 1 upwards and never reused. At most
/// `max_terminals` are registered (running, or exited and not deleted yet) at once.
pub struct Registry {
    inner: Mutex<Inner>,
    max_terminals: usize,
}

#[derive(Default)]
struct Inner {
    terminals: BTreeMap<TerminalId, Arc<Terminal>>,
    /// Deleted terminals whose processes may not have ended yet (within the SIGKILL grace):
    /// a shutdown meanwhile must still finish them off, or a process ignoring SIGHUP (a
    /// `nohup` server) outlives the sidecar.
    dying: BTreeMap<TerminalId, Arc<Terminal>>,
    /// Spawns under way: they count toward the limit.
    starting: usize,
    next_id: u64,
    shutting_down: bool,
}

impl Registry {
    /// Creates an empty registry that holds at most `max_terminals` terminals.
    pub fn new(max_terminals: usize) -> Self {
        Registry { inner: Mutex::default(), max_terminals }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Spawns a terminal and registers it. The terminal environment (`TERM`, `COLORTERM`,
    /// `TERM_PROGRAM`, `TERM_PROGRAM_VERSION`) and `extra_env(id)` (called once with the new
    /// id, before the program starts) are added to the sidecar's own. Blocking (fork/exec):
    /// call from a blocking context. On error nothing is registered and nothing is left
    /// running; the id is not reused. Errors with [`PtyError::TooMany`] when `max_terminals`
    /// terminals are registered or being spawned.
    pub fn spawn(
        &self,
        spec: SpawnSpec,
        extra_env: impl FnOnce(TerminalId) -> Vec<(String, String)>,
    ) -> Result<Arc<Terminal>, PtyError> {
        let id = {
            let mut inner = self.lock();
            if inner.shutting_down {
                return Err(PtyError::Closed);
            }
            if inner.terminals.len() + inner.starting >= self.max_terminals {
                return Err(PtyError::TooMany { limit: self.max_terminals });
            }
            inner.starting += 1;
            inner.next_id += 1;
            TerminalId(inner.next_id)
        };
        let mut env = vec![
            ("TERM".to_string(), "xterm-256color".to_string()),
            ("COLORTERM".to_string(), "truecolor".to_string()),
            ("TERM_PROGRAM".to_string(), "porthole".to_string()),
            ("TERM_PROGRAM_VERSION".to_string(), env!("CARGO_PKG_VERSION").to_string()),
        ];
        env.extend(extra_env(id));
        let spawned = Terminal::spawn(id, spec, &env);
        let mut inner = self.lock();
        inner.starting -= 1;
        let term = Arc::new(spawned?);
        if inner.shutting_down {
            drop(inner);
            term.hang_up();
            term.kill_now();
            return Err(PtyError::Closed);
        }
        inner.terminals.insert(id, term.clone());
        tracing::info!(%id, pid = term.pid(), "terminal spawned");
        Ok(term)
    }

    /// Makes every id allocated from now on greater than `id`, so that a new terminal is
    /// never taken for an earlier one of that name (a restored session's, DESIGN §14).
    pub fn allocate_after(&self, id: TerminalId) {
        let mut inner = self.lock();
        inner.next_id = inner.next_id.max(id.0);
    }

    /// The terminal with this id, if registered.
    pub fn get(&self, id: TerminalId) -> Option<Arc<Terminal>> {
        self.lock().terminals.get(&id).cloned()
    }

    /// Every registered terminal in creation order.
    pub fn list(&self) -> Vec<Arc<Terminal>> {
        self.lock().terminals.values().cloned().collect()
    }

    /// Forgets the terminal, hangs it up (SIGHUP to its group and session) and, on a
    /// background thread, sends SIGKILL after 2 s if anything is left. Returns false if the id
    /// was unknown (a second call returns false).
    pub fn delete(self: &Arc<Self>, id: TerminalId) -> bool {
        let term = {
            let mut inner = self.lock();
            let Some(term) = inner.terminals.remove(&id) else { return false };
            inner.dying.insert(id, term.clone());
            term
        };
        term.hang_up();
        let spawned = std::thread::Builder::new().name(format!("pty-kill-{id}")).spawn({
            let (term, registry) = (term.clone(), self.clone());
            move || {
                wait_until(Duration::from_millis(KILL_GRACE_MS), || !term.anything_alive());
                if term.anything_alive() {
                    term.kill_now();
                }
                registry.lock().dying.remove(&id);
            }
        });
        if spawned.is_err() {
            term.kill_now();
            self.lock().dying.remove(&id);
        }
        tracing::info!(%id, "terminal deleted");
        true
    }

    /// Hangs up every terminal, SIGKILLs whatever is left after 2 s, and waits (bounded)
    /// until every child is reaped. Terminals deleted less than 2 s ago count too (their
    /// SIGKILL may not have come yet). Blocking; refuses later spawns. Idempotent.
    pub fn shutdown(&self) {
        let terms: Vec<Arc<Terminal>> = {
            let mut inner = self.lock();
            inner.shutting_down = true;
            let dying = std::mem::take(&mut inner.dying);
            std::mem::take(&mut inner.terminals).into_values().chain(dying.into_values()).collect()
        };
        for t in &terms {
            t.hang_up();
        }
        let grace = Duration::from_millis(KILL_GRACE_MS);
        wait_until(grace, || terms.iter().all(|t| !t.anything_alive()));
        for t in &terms {
            if t.anything_alive() {
                tracing::info!(id = %t.id(), "sending SIGKILL");
                t.kill_now();
            }
        }
        wait_until(Duration::from_millis(1500), || terms.iter().all(|t| !t.anything_alive() && t.reaped()));
    }
}

/// Polls `done` every 20 ms until it returns true or `limit` passes.
fn wait_until(limit: Duration, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() && start.elapsed() < limit {
        std::thread::sleep(Duration::from_millis(20));
    }
}
