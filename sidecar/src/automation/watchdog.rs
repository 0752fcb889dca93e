//! The watchdog's check of the active tab when a changing verb begins (issue 25 item 8): does
//! the page still answer, and does it still paint?
//!
//! A renderer busy in a script answers nothing (`unresponsive`). A page can also answer and
//! still show nothing new: its rendering is blocked (a render-blocking stylesheet or script
//! that never arrives) or its window is minimized, so a screenshot or the human's screencast
//! shows a picture that no longer tells the truth (`not_painting`). The paint probe waits for
//! one `requestAnimationFrame` callback in an isolated world (the page cannot replace that
//! function there); frame callbacks run only when the document renders (HTML "update the
//! rendering").

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::events::{self, Events};
use crate::browser::{eval_in, eval_in_isolated_world, BrowserRef};

/// The isolated world the paint probe runs in.
const WORLD: &str = "porthole-watchdog";
/// Resolves at the document's next animation frame.
const FRAME_PROBE: &str = "new Promise(r => requestAnimationFrame(() => r(1)))";
/// After the paint probe found no frame, how long the page gets to answer a trivial
/// evaluation (which tells `not_painting` from `unresponsive`), in milliseconds.
const ANSWER_MS: u64 = 500;
/// After `not_painting` was logged for a tab, how long its later verbs skip the paint probe
/// (which would wait its whole bound each time), in milliseconds.
const QUIET_MS: u64 = 30_000;

/// The tabs found not painting, with when their probe may run again. One per [`super::Automation`].
#[derive(Default)]
pub(super) struct Watchdog {
    quiet: Mutex<HashMap<String, Instant>>,
}

impl Watchdog {
    /// Checks `b`'s active tab: the paint probe bounded by [`events::RESPONSIVE_MS`] (skipped
    /// for [`QUIET_MS`] after a tab was found not painting), then, when no frame came, a trivial
    /// evaluation bounded by [`ANSWER_MS`]; logs `not_painting` or `unresponsive` in `events`
    /// (said in the verb's answer). Never fails: an evaluation that errs (a navigation
    /// replaced the document) says nothing either way. Says nothing while a dialog is pending
    /// (a paused page cannot answer), before or after the probe: it runs beside the verb,
    /// which may open one.
    pub(super) async fn check(&self, events: &Events, b: &BrowserRef) {
        if b.subscribe().borrow().dialog.is_some() {
            return;
        }
        let Ok(page) = b.active_page() else { return };
        let tab = page.target_id().as_ref().to_string();
        let bound = Duration::from_millis(events::RESPONSIVE_MS);
        let answers = |ms| tokio::time::timeout(Duration::from_millis(ms), eval_in(&page, "1".into()));
        if self.quiet(&tab) {
            if answers(events::RESPONSIVE_MS).await.is_err() && b.subscribe().borrow().dialog.is_none() {
                events.unresponsive(b.id(), b.generation(), &tab);
            }
            return;
        }
        if tokio::time::timeout(bound, eval_in_isolated_world(&page, WORLD, FRAME_PROBE.into())).await.is_ok() {
            return;
        }
        let answered = answers(ANSWER_MS).await.is_ok();
        // The verb beside the probe may have opened a dialog, which pauses the page: then
        // neither a frame nor an answer could come, and that says nothing.
        if b.subscribe().borrow().dialog.is_some() {
            return;
        }
        if answered {
            self.quiet.lock().unwrap_or_else(|p| p.into_inner()).insert(tab.clone(), Instant::now());
            events.not_painting(b.id(), b.generation(), &tab);
        } else {
            events.unresponsive(b.id(), b.generation(), &tab);
        }
    }

    /// True while tab `tab` was found not painting less than [`QUIET_MS`] ago (forgets older ones).
    fn quiet(&self, tab: &str) -> bool {
        let mut q = self.quiet.lock().unwrap_or_else(|p| p.into_inner());
        q.retain(|_, at| at.elapsed() < Duration::from_millis(QUIET_MS));
        q.contains_key(tab)
    }
}
