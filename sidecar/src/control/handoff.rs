//! Handoff (issue 26 item 3): an agent hands one step in its browser pane to the human (a
//! 2FA code, a CAPTCHA, a consent screen) and waits. While a pane is handed over, every
//! changing verb on it is refused `handed_over`; the windows show the reason with "Done,
//! hand back" and "Decline" (`{"type":"drivers","handoffs":…}` on the UI channel), and the
//! human's answer (`POST /api/handoffs/{pane}`) ends the wait. What the human typed is never
//! seen here: the agent learns only what changed in the pane's URL, title and tabs.
//!
//! Owned by [`super::Control`]; one lock, never held across an await.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use serde::Serialize;
use tokio::sync::{oneshot, watch};

use super::{ControlError, Handle};

/// Longest reason, in characters.
pub const MAX_REASON_CHARS: usize = 200;
/// Default and longest wait for the human, in seconds.
pub const DEFAULT_HANDOFF_S: u64 = 300;
/// Longest wait for the human, in seconds.
pub const MAX_HANDOFF_S: u64 = 3600;

/// The human's answer to a handoff.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// "Done, hand back": the agent goes on.
    Done,
    /// "Decline": the human will not do it.
    Declined,
}

/// A handoff as the windows show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Shown {
    /// Why the agent asks (its words, bounded).
    pub reason: String,
    /// The terminal pane that asked.
    pub by: String,
}

struct Pending {
    shown: Shown,
    answer: Option<oneshot::Sender<Answer>>,
}

/// The pending handoffs, one at most per browser pane.
pub struct Handoffs {
    pending: Mutex<HashMap<Handle, Pending>>,
    shown: watch::Sender<BTreeMap<String, Shown>>,
}

impl Default for Handoffs {
    fn default() -> Self {
        Handoffs { pending: Mutex::default(), shown: watch::channel(BTreeMap::new()).0 }
    }
}

impl Handoffs {
    fn pending(&self) -> std::sync::MutexGuard<'_, HashMap<Handle, Pending>> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn publish(&self, p: &HashMap<Handle, Pending>) {
        let map: BTreeMap<String, Shown> = p.iter().map(|(h, v)| (h.to_string(), v.shown.clone())).collect();
        self.shown.send_replace(map);
    }

    /// The handoffs as the windows show them, updated on every change.
    pub fn subscribe(&self) -> watch::Receiver<BTreeMap<String, Shown>> {
        self.shown.subscribe()
    }

    /// Hands browser pane `pane` to the human for `reason` (asked by terminal `by`, or the
    /// app) → the receiver of the answer. `handed_over` when the pane is handed over already;
    /// `bad_request` for an empty or over-long reason.
    pub fn begin(
        &self,
        pane: Handle,
        reason: &str,
        by: Option<Handle>,
    ) -> Result<oneshot::Receiver<Answer>, ControlError> {
        let reason = reason.trim();
        if reason.is_empty() || reason.chars().count() > MAX_REASON_CHARS {
            return Err(ControlError::BadRequest(format!(
                "a handoff's reason is 1..={MAX_REASON_CHARS} characters: what the human should do"
            )));
        }
        let mut p = self.pending();
        if let Some(h) = p.get(&pane) {
            return Err(ControlError::HandedOver { pane: pane.to_string(), reason: h.shown.reason.clone() });
        }
        let (tx, rx) = oneshot::channel();
        let shown =
            Shown { reason: reason.to_string(), by: by.map(|h| h.to_string()).unwrap_or_else(|| "the app".into()) };
        p.insert(pane, Pending { shown, answer: Some(tx) });
        self.publish(&p);
        Ok(rx)
    }

    /// The human answers the handoff of `pane`. `unknown_target` when none is pending.
    pub fn answer(&self, pane: Handle, answer: Answer) -> Result<(), ControlError> {
        let mut p = self.pending();
        let tx = p.get_mut(&pane).and_then(|h| h.answer.take());
        let Some(tx) = tx else { return Err(ControlError::UnknownTarget(format!("a handoff of {pane}"))) };
        // The waiting verb may have timed out meanwhile: then nobody hears it.
        let _ = tx.send(answer);
        Ok(())
    }

    /// Ends the handoff of `pane` (answered, timed out, or the asking call went away).
    pub fn end(&self, pane: Handle) {
        let mut p = self.pending();
        if p.remove(&pane).is_some() {
            self.publish(&p);
        }
    }

    /// `Ok` unless `pane` is handed over to the human: then `handed_over`.
    pub fn check(&self, pane: Handle) -> Result<(), ControlError> {
        match self.pending().get(&pane) {
            Some(h) => Err(ControlError::HandedOver { pane: pane.to_string(), reason: h.shown.reason.clone() }),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(s: &str) -> Handle {
        s.parse().unwrap()
    }

    #[test]
    fn a_pane_is_handed_over_once_until_it_ends_and_the_answer_reaches_the_asker() {
        let hs = Handoffs::default();
        assert!(matches!(hs.begin(h("b1"), "  ", None), Err(ControlError::BadRequest(_))));
        let mut rx = hs.begin(h("b1"), "Type the 2FA code", Some(h("t2"))).unwrap();
        assert_eq!(hs.subscribe().borrow()["b1"], Shown { reason: "Type the 2FA code".into(), by: "t2".into() });
        assert!(matches!(hs.check(h("b1")), Err(ControlError::HandedOver { .. })));
        assert!(matches!(hs.begin(h("b1"), "again", None), Err(ControlError::HandedOver { .. })));
        assert!(hs.check(h("b2")).is_ok());
        hs.answer(h("b1"), Answer::Declined).unwrap();
        assert_eq!(rx.try_recv(), Ok(Answer::Declined));
        assert!(hs.answer(h("b1"), Answer::Done).is_err(), "answered once");
        hs.end(h("b1"));
        assert!(hs.check(h("b1")).is_ok() && hs.subscribe().borrow().is_empty());
    }
}
