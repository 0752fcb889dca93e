//! Agent presence on one browser (DESIGN §12, "the human stays in charge"): what an agent is
//! doing in it, for every view to show (the verb, and a mark where it acts), and the human's
//! input through a view, which ends the agent's action.
//!
//! The browser only carries these between `automation` (which acts and publishes) and
//! `viewer` (which shows them and reports the human's presses); it neither acts nor draws.

use std::sync::atomic::{AtomicU64, Ordering};

use serde::Serialize;
use tokio::sync::watch;

/// A point in top-level viewport CSS px.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Point {
    /// From the viewport's left edge.
    pub x: f64,
    /// From the viewport's top edge.
    pub y: f64,
}

/// A box in top-level viewport CSS px.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Rect {
    /// Left edge.
    pub x: f64,
    /// Top edge.
    pub y: f64,
    /// Width.
    pub width: f64,
    /// Height.
    pub height: f64,
}

/// The agent's last action on this browser, as views show it.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Activity {
    /// Grows by one per action (0: none yet). A view draws one mark per `seq` that has a
    /// point or a box, even when the action began and ended between two messages.
    pub seq: u64,
    /// The verb (`click`, `fill`, `navigate`…).
    pub verb: String,
    /// True while the action runs.
    pub acting: bool,
    /// Where pointer input lands (click, hover, scroll…), once known.
    pub point: Option<Point>,
    /// The element's visible box for keyboard input and `scroll-to`, once known.
    pub rect: Option<Rect>,
}

/// One browser's presence channels. Owned by its slot.
pub struct Presence {
    activity: watch::Sender<Activity>,
    human: watch::Sender<u64>,
    seq: AtomicU64,
}

impl Default for Presence {
    fn default() -> Self {
        Presence { activity: watch::channel(Activity::default()).0, human: watch::channel(0).0, seq: AtomicU64::new(0) }
    }
}

impl Presence {
    /// An action `verb` begins → its `seq`.
    pub fn begin(&self, verb: &str) -> u64 {
        let seq = self.seq.fetch_add(1, Ordering::SeqCst) + 1;
        self.activity.send_replace(Activity { seq, verb: verb.to_string(), acting: true, point: None, rect: None });
        seq
    }

    /// The running action acts at `p` (pointer input). Ignored when no action runs.
    pub fn mark_point(&self, p: Point) {
        self.activity.send_if_modified(|a| {
            let changed = a.acting && a.point != Some(p);
            if changed {
                a.point = Some(p);
            }
            changed
        });
    }

    /// The running action acts on the element whose visible box is `r`. Ignored when no
    /// action runs.
    pub fn mark_rect(&self, r: Rect) {
        self.activity.send_if_modified(|a| {
            let changed = a.acting && a.rect != Some(r);
            if changed {
                a.rect = Some(r);
            }
            changed
        });
    }

    /// Action `seq` has ended (done, refused or interrupted).
    pub fn end(&self, seq: u64) {
        self.activity.send_if_modified(|a| {
            let changed = a.seq == seq && a.acting;
            if changed {
                a.acting = false;
            }
            changed
        });
    }

    /// Every change of the activity (the current one is marked seen).
    pub fn activity(&self) -> watch::Receiver<Activity> {
        let mut rx = self.activity.subscribe();
        rx.mark_unchanged();
        rx
    }

    /// The current activity.
    pub fn current(&self) -> Activity {
        self.activity.borrow().clone()
    }

    /// A human pressed a button or key (or pasted, or turned the wheel) in a view.
    pub fn human_input(&self) {
        self.human.send_modify(|n| *n += 1);
    }

    /// Counts human inputs: an action ends when it changes.
    pub fn human(&self) -> watch::Receiver<u64> {
        let mut rx = self.human.subscribe();
        rx.mark_unchanged();
        rx
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_go_to_the_running_action_only_and_end_keeps_them() {
        let p = Presence::default();
        p.mark_point(Point { x: 1.0, y: 2.0 });
        assert_eq!(p.current(), Activity::default(), "no action: no mark");
        let s = p.begin("click");
        p.mark_point(Point { x: 10.0, y: 20.0 });
        p.end(s);
        let a = p.current();
        assert_eq!((a.seq, a.verb.as_str(), a.acting), (1, "click", false));
        assert_eq!(a.point, Some(Point { x: 10.0, y: 20.0 }), "the last mark stays for views that come late");
        p.mark_rect(Rect { x: 0.0, y: 0.0, width: 1.0, height: 1.0 });
        assert_eq!(p.current().rect, None, "ended: no more marks");
        let s2 = p.begin("fill");
        p.end(s);
        assert!(p.current().acting && s2 == 2, "an old action's end does not end the new one");
    }

    #[tokio::test]
    async fn human_input_wakes_a_watcher() {
        let p = Presence::default();
        let mut rx = p.human();
        p.human_input();
        tokio::time::timeout(std::time::Duration::from_secs(5), rx.changed()).await.unwrap().unwrap();
        assert_eq!(*rx.borrow(), 1);
    }
}
