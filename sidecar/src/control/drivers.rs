//! Who drives which browser pane (issue 26): each terminal's own pane (the one it opened
//! last, or was handed), and each browser pane's driver (the terminal that opened it first,
//! or the one the human handed it to). A terminal's `ph browser` verbs go to its own pane by
//! default and never silently to another terminal's; a mutating verb on a pane another
//! terminal drives is refused `pane_in_use` until the human hands it over.
//!
//! Owned by [`super::Control`]; one lock, never held across an await.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use tokio::sync::watch;

use super::{ControlError, Handle};

#[derive(Default)]
struct State {
    /// Terminal pane → the browser pane it opened last (or was handed).
    own: HashMap<Handle, Handle>,
    /// Browser pane → the terminal pane that drives it.
    driver: HashMap<Handle, Handle>,
}

/// The drivers of browser panes.
pub struct Drivers {
    state: Mutex<State>,
    /// Browser pane → driving terminal, as the windows show it (`{"type":"drivers"}`).
    shown: watch::Sender<BTreeMap<String, String>>,
}

impl Default for Drivers {
    fn default() -> Self {
        Drivers { state: Mutex::default(), shown: watch::channel(BTreeMap::new()).0 }
    }
}

impl Drivers {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Publishes the drivers to the windows when they changed.
    fn publish(&self, s: &State) {
        let map: BTreeMap<String, String> = s.driver.iter().map(|(b, t)| (b.to_string(), t.to_string())).collect();
        self.shown.send_if_modified(|m| {
            let changed = *m != map;
            *m = map;
            changed
        });
    }

    /// The drivers as the windows show them, updated on every change.
    pub fn subscribe(&self) -> watch::Receiver<BTreeMap<String, String>> {
        self.shown.subscribe()
    }

    /// Terminal `caller` opened (or reused its own) browser pane `browser`: it is the
    /// caller's own pane from now on, and the caller drives it unless another terminal
    /// already does.
    pub fn opened(&self, caller: Handle, browser: Handle) {
        let mut s = self.state();
        s.own.insert(caller, browser);
        s.driver.entry(browser).or_insert(caller);
        self.publish(&s);
    }

    /// The browser pane terminal `caller` calls its own, if any (it may since have closed:
    /// the caller checks the wall).
    pub fn own(&self, caller: Handle) -> Option<Handle> {
        self.state().own.get(&caller).copied()
    }

    /// The terminal that drives browser pane `browser`, if any.
    pub fn driver(&self, browser: Handle) -> Option<Handle> {
        self.state().driver.get(&browser).copied()
    }

    /// Every browser pane with a driver: `(browser, terminal)`.
    pub fn all(&self) -> Vec<(Handle, Handle)> {
        let mut v: Vec<(Handle, Handle)> = self.state().driver.iter().map(|(b, t)| (*b, *t)).collect();
        v.sort_by_key(|(b, _)| b.to_string());
        v
    }

    /// The human hands browser pane `browser` to terminal `terminal`: it drives it, and it
    /// is that terminal's own pane. The previous driver keeps observing it by name.
    pub fn hand_over(&self, browser: Handle, terminal: Handle) {
        let mut s = self.state();
        s.driver.insert(browser, terminal);
        s.own.insert(terminal, browser);
        self.publish(&s);
    }

    /// `Ok` when `caller` may change browser pane `browser` (the app, with no caller, always
    /// may); a pane nobody drives yet becomes the caller's. Else `pane_in_use` naming its
    /// driver.
    pub fn may_drive(&self, caller: Option<Handle>, browser: Handle) -> Result<(), ControlError> {
        let Some(caller) = caller else { return Ok(()) };
        let mut s = self.state();
        match s.driver.get(&browser).copied() {
            Some(d) if d != caller => Err(ControlError::PaneInUse { pane: browser.to_string(), driver: d.to_string() }),
            Some(_) => Ok(()),
            None => {
                s.driver.insert(browser, caller);
                self.publish(&s);
                Ok(())
            }
        }
    }

    /// Forgets browser pane `browser` (closed): nobody drives it, and it is nobody's own.
    pub fn closed(&self, browser: Handle) {
        let mut s = self.state();
        s.driver.remove(&browser);
        s.own.retain(|_, b| *b != browser);
        self.publish(&s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(s: &str) -> Handle {
        s.parse().unwrap()
    }

    #[test]
    fn the_first_opener_drives_a_pane_until_the_human_hands_it_over() {
        let d = Drivers::default();
        d.opened(h("t1"), h("b1"));
        d.opened(h("t2"), h("b1"));
        assert_eq!(d.driver(h("b1")), Some(h("t1")), "a second opener does not take it");
        assert_eq!(d.own(h("t2")), Some(h("b1")));
        assert!(d.may_drive(Some(h("t1")), h("b1")).is_ok());
        assert_eq!(
            d.may_drive(Some(h("t2")), h("b1")),
            Err(ControlError::PaneInUse { pane: "b1".into(), driver: "t1".into() })
        );
        assert!(d.may_drive(None, h("b1")).is_ok(), "the app always may");
        d.hand_over(h("b1"), h("t2"));
        assert!(d.may_drive(Some(h("t2")), h("b1")).is_ok());
        assert!(d.may_drive(Some(h("t1")), h("b1")).is_err());
        assert!(d.may_drive(Some(h("t3")), h("b9")).is_ok(), "a pane nobody drives is the caller's");
        assert_eq!(d.driver(h("b9")), Some(h("t3")));
        assert_eq!(d.subscribe().borrow().get("b1").map(String::as_str), Some("t2"), "published");
        d.closed(h("b1"));
        assert_eq!((d.driver(h("b1")), d.own(h("t2"))), (None, None));
    }
}
