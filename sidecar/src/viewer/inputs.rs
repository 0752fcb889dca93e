//! The inputs a view sent that wait for CDP: in arrival order, never dropped, coalesced
//! where the page cannot tell (a pointer move followed by another move is only its latest
//! position; two pastes in a row are one paste). The socket reader stops reading while too
//! many wait (backpressure to the view); see `conn.rs`, the socket reader.

use std::collections::VecDeque;
use std::sync::Mutex;

use tokio::sync::{watch, Notify};

use super::msg::{Inbound, KeyEvent, MouseButton, MouseEvent};

/// Inputs waiting, shared by the socket reader (pushes) and the input worker (pops).
pub(super) struct InputQueue {
    q: Mutex<VecDeque<Inbound>>,
    /// Wakes the worker when something was pushed.
    pushed: Notify,
    /// The number waiting, after every push and pop (the reader waits on it to drain).
    len: watch::Sender<usize>,
    /// Text bytes waiting (pastes and key texts).
    bytes: std::sync::atomic::AtomicUsize,
}

/// The character a key down types, if it types one: text of one character that is not a
/// control character (Enter's "\r" is a key), with no modifier but Shift.
fn typed_char(i: &Inbound) -> Option<&str> {
    match i {
        Inbound::Key { event: KeyEvent::Down, text, modifiers, .. }
            if modifiers & !MOD_SHIFT == 0 && text.chars().count() == 1 && !text.chars().any(char::is_control) =>
        {
            Some(text.as_str())
        }
        _ => None,
    }
}

/// The Shift bit of the modifiers bitmask.
const MOD_SHIFT: i64 = 8;

/// Text bytes an input carries.
fn text_bytes(i: &Inbound) -> usize {
    match i {
        Inbound::Text(t) => t.len(),
        Inbound::Key { key, code, text, .. } => key.len() + code.len() + text.len(),
        _ => 0,
    }
}

impl InputQueue {
    pub(super) fn new() -> InputQueue {
        InputQueue {
            q: Mutex::new(VecDeque::new()),
            pushed: Notify::new(),
            len: watch::channel(0).0,
            bytes: std::sync::atomic::AtomicUsize::new(0),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<Inbound>> {
        self.q.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Appends `input`, merged into the last one waiting when the page cannot tell the
    /// difference: a move after a move (same buttons and modifiers) keeps the later
    /// position; a paste after a paste is one longer paste. Returns the number waiting.
    pub(super) fn push(&self, input: Inbound) -> usize {
        self.bytes.fetch_add(text_bytes(&input), std::sync::atomic::Ordering::SeqCst);
        let n = {
            let mut q = self.lock();
            match (q.back_mut(), input) {
                (
                    Some(Inbound::Mouse { event: MouseEvent::Move, x, y, button, modifiers, .. }),
                    Inbound::Mouse { event: MouseEvent::Move, x: nx, y: ny, button: nb, modifiers: nm, .. },
                ) if *button == nb && *modifiers == nm => {
                    (*x, *y) = (nx, ny);
                }
                (Some(Inbound::Text(t)), Inbound::Text(more)) => t.push_str(&more),
                (_, input) => q.push_back(input),
            }
            q.len()
        };
        self.len.send_replace(n);
        self.pushed.notify_one();
        n
    }

    /// Takes the oldest input, waiting for one.
    pub(super) async fn pop(&self) -> Inbound {
        loop {
            let next = {
                let mut q = self.lock();
                let i = q.pop_front();
                if let Some(i) = &i {
                    self.len.send_replace(q.len());
                    self.bytes.fetch_sub(text_bytes(i), std::sync::atomic::Ordering::SeqCst);
                }
                i
            };
            if let Some(i) = next {
                return i;
            }
            self.pushed.notified().await;
        }
    }

    /// When CDP is behind (at least `behind` inputs wait besides `first`) and `first` types a
    /// character, takes the typing that follows it: character key downs (no modifier but
    /// Shift), the releases of those keys, and pointer moves without a button in between
    /// (a move commutes with typing). Returns the text typed, `first`'s included, and the
    /// latest of those moves; `None` (nothing taken) otherwise. The run goes to the page as
    /// one `Input.insertText`: the field gets exactly the same text, in order, but the page
    /// sees no key events for it, which is why this is done only to catch up.
    pub(super) fn take_text_run(&self, first: &Inbound, behind: usize) -> Option<(String, Option<Inbound>)> {
        let (mut text, first_code) = match first {
            Inbound::Key { event: KeyEvent::Down, code, .. } => (typed_char(first)?.to_string(), code.clone()),
            _ => return None,
        };
        let mut q = self.lock();
        if q.len() < behind {
            return None;
        }
        let mut down = vec![first_code];
        let mut last_move = None;
        let mut taken = 0;
        while let Some(next) = q.front() {
            match next {
                Inbound::Key { event: KeyEvent::Down, code, .. } if typed_char(next).is_some() => {
                    text.push_str(typed_char(next).expect("checked"));
                    down.push(code.clone());
                }
                Inbound::Key { event: KeyEvent::Up, code, .. } if down.contains(code) => {
                    let at = down.iter().position(|c| c == code).expect("contained");
                    down.swap_remove(at);
                }
                Inbound::Mouse { event: MouseEvent::Move, button: MouseButton::None, .. } => {
                    last_move = Some(next.clone());
                }
                _ => break,
            }
            let gone = q.pop_front().expect("peeked");
            self.bytes.fetch_sub(text_bytes(&gone), std::sync::atomic::Ordering::SeqCst);
            taken += 1;
        }
        self.len.send_replace(q.len());
        (taken > 0).then_some((text, last_move))
    }

    /// Text bytes waiting.
    pub(super) fn held_bytes(&self) -> usize {
        self.bytes.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Waits until at most `n` inputs wait.
    pub(super) async fn drained_to(&self, n: usize) {
        let mut rx = self.len.subscribe();
        let _ = rx.wait_for(|len| *len <= n).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mv(x: f64, button: MouseButton) -> Inbound {
        Inbound::Mouse {
            event: MouseEvent::Move,
            x,
            y: 1.0,
            button,
            clicks: 0,
            modifiers: 0,
            delta_x: 0.0,
            delta_y: 0.0,
        }
    }

    fn key(k: &str) -> Inbound {
        Inbound::Key { event: KeyEvent::Down, key: k.into(), code: String::new(), text: k.into(), modifiers: 0 }
    }

    fn drain(q: &InputQueue) -> Vec<Inbound> {
        std::iter::from_fn(|| q.lock().pop_front()).collect()
    }

    #[test]
    fn moves_coalesce_to_the_latest_and_pastes_join_but_keys_never_merge() {
        let q = InputQueue::new();
        for i in 0..5 {
            q.push(mv(i as f64, MouseButton::None));
        }
        q.push(mv(9.0, MouseButton::Left)); // a drag begins: not the same move
        q.push(key("a"));
        q.push(key("a"));
        q.push(Inbound::Text("he".into()));
        q.push(Inbound::Text("llo".into()));
        q.push(mv(1.0, MouseButton::None));
        assert_eq!(
            drain(&q),
            vec![
                mv(4.0, MouseButton::None),
                mv(9.0, MouseButton::Left),
                key("a"),
                key("a"),
                Inbound::Text("hello".into()),
                mv(1.0, MouseButton::None),
            ]
        );
    }

    fn up(k: &str) -> Inbound {
        Inbound::Key { event: KeyEvent::Up, key: k.into(), code: k.into(), text: String::new(), modifiers: 0 }
    }

    fn down(k: &str, modifiers: i64) -> Inbound {
        Inbound::Key { event: KeyEvent::Down, key: k.into(), code: k.into(), text: k.into(), modifiers }
    }

    #[test]
    fn typing_behind_cdp_becomes_one_text_up_to_the_first_input_that_is_not_typing() {
        let q = InputQueue::new();
        for i in [up("a"), down("B", 8), mv(3.0, MouseButton::None), up("B"), down("c", 0), mv(5.0, MouseButton::None)]
        {
            q.push(i);
        }
        q.push(down("x", 2)); // Ctrl+x: a shortcut, not typing
        q.push(up("c"));
        let (text, mv5) = q.take_text_run(&down("a", 0), 4).expect("behind");
        assert_eq!(text, "aBc");
        assert_eq!(mv5, Some(mv(5.0, MouseButton::None)));
        assert_eq!(drain(&q), vec![down("x", 2), up("c")]);
        // Not behind, or not typing: nothing is taken.
        q.push(down("b", 0));
        assert_eq!(q.take_text_run(&down("a", 0), 4), None);
        assert_eq!(q.take_text_run(&up("a"), 0), None);
        let enter = Inbound::Key {
            event: KeyEvent::Down,
            key: "Enter".into(),
            code: "Enter".into(),
            text: "\r".into(),
            modifiers: 0,
        };
        assert_eq!(q.take_text_run(&enter, 0), None);
        assert_eq!(drain(&q), vec![down("b", 0)]);
    }

    #[tokio::test]
    async fn pop_waits_for_a_push_and_drained_to_for_the_worker() {
        let q = std::sync::Arc::new(InputQueue::new());
        let q2 = q.clone();
        let popped = tokio::spawn(async move { q2.pop().await });
        tokio::task::yield_now().await;
        assert_eq!(q.push(key("x")), 1);
        assert_eq!(popped.await.unwrap(), key("x"));
        q.push(key("y"));
        q.push(key("z"));
        let q3 = q.clone();
        let drained = tokio::spawn(async move { q3.drained_to(0).await });
        q.pop().await;
        q.pop().await;
        drained.await.unwrap();
    }
}
