//! The human stays in charge (DESIGN §12): one mutating action at a time per tab, shown to
//! every view of the browser while it runs, and ended by the human's own input.
//!
//! A mutating verb (an action, `navigate`, `tabs select`, `viewport`, `eval`…) waits for the
//! one before it on the same tab, in arrival order, at most [`TURN_WAIT_MS`]; past that it
//! is refused with `tab_busy` and nothing is done. Observations (`snapshot`, `get`, `wait`,
//! `screenshot`, `console`, `network`, `tabs` without an action) never wait. While an action
//! holds its turn, its verb (and, once known, the point or box it acts on) is published on
//! the browser's [`crate::browser::Presence`] for the views to draw; a human press in a view
//! (a button, a key, the wheel, a paste) ends it with `user_interrupted`.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::OwnedMutexGuard;

use super::error::AutomationError;
use crate::browser::{BrowserRef, Point, Rect};
use crate::constants::TURN_WAIT_MS;

/// The turn queues: one per (browser, tab). tokio's mutex is fair: turns go in arrival order.
#[derive(Default)]
pub(super) struct Turns {
    tabs: Mutex<HashMap<(String, String), Arc<tokio::sync::Mutex<()>>>>,
}

/// A held turn: the views show the action until it is dropped.
struct Turn {
    _held: OwnedMutexGuard<()>,
    browser: BrowserRef,
    seq: u64,
}

impl Drop for Turn {
    fn drop(&mut self) {
        self.browser.presence().end(self.seq);
    }
}

impl Turns {
    /// Waits for the turn on `b`'s active tab (bounded), then shows `verb` as acting.
    async fn take(&self, b: &BrowserRef, verb: &str) -> Result<Turn, AutomationError> {
        let tab = b.subscribe().borrow().active.clone().unwrap_or_default();
        let queue = {
            let mut tabs = self.tabs.lock().unwrap_or_else(|p| p.into_inner());
            // A queue nobody holds or waits for is forgotten (closed tabs, gone browsers).
            tabs.retain(|_, q| Arc::strong_count(q) > 1);
            tabs.entry((b.id().to_string(), tab)).or_default().clone()
        };
        let held = tokio::time::timeout(Duration::from_millis(TURN_WAIT_MS), queue.lock_owned())
            .await
            .map_err(|_| AutomationError::TabBusy(verb.to_string()))?;
        let seq = b.presence().begin(verb);
        Ok(Turn { _held: held, browser: b.clone(), seq })
    }

    /// Runs `f` as the mutating verb `verb` on `b`'s active tab: in its turn, shown to the
    /// views, and ended with `user_interrupted` (`f` dropped where it is) when a human
    /// presses in a view meanwhile.
    pub(super) async fn run<T>(
        &self,
        b: &BrowserRef,
        verb: &str,
        f: impl Future<Output = Result<T, AutomationError>>,
    ) -> Result<T, AutomationError> {
        let _turn = self.take(b, verb).await?;
        let mut human = b.presence().human();
        tokio::select! {
            biased;
            r = f => r,
            Ok(()) = human.changed() => Err(AutomationError::UserInterrupted(verb.to_string())),
        }
    }
}

/// Shows the point (`"point":{"x","y"}`) or box (`"rect":{"x","y","width","height"}`) an
/// answer names, in top-level viewport CSS px, as where the running action acted.
pub(super) fn mark_from(b: &BrowserRef, out: &Value) {
    let n = |v: &Value, k: &str| v[k].as_f64();
    if let (Some(x), Some(y)) = (n(&out["point"], "x"), n(&out["point"], "y")) {
        b.presence().mark_point(Point { x, y });
    }
    let r = &out["rect"];
    if let (Some(x), Some(y), Some(width), Some(height)) = (n(r, "x"), n(r, "y"), n(r, "width"), n(r, "height")) {
        b.presence().mark_rect(Rect { x, y, width, height });
    }
}
