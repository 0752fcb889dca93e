//! The viewer socket's outgoing queue: text messages, frames under the latest-only byte
//! budget, and the close frame, in order; `conn.rs`'s writer task sends them.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use tokio::sync::mpsc;

use super::MAX_QUEUED_FRAME_BYTES;

pub(super) enum Out {
    Text(String),
    Frame(Vec<u8>),
    Close(u16, String),
}

/// Bytes of frames queued to the socket writer and not yet written: the latest-only rule.
#[derive(Clone, Default)]
pub(super) struct FrameBudget(Arc<AtomicUsize>);

impl FrameBudget {
    /// Counts `n` more bytes unless more than [`MAX_QUEUED_FRAME_BYTES`] already wait;
    /// returns true if and only if they were counted.
    pub(super) fn take(&self, n: usize) -> bool {
        if self.0.load(Ordering::SeqCst) > MAX_QUEUED_FRAME_BYTES {
            return false;
        }
        self.0.fetch_add(n, Ordering::SeqCst);
        true
    }

    /// `n` counted bytes were written (or will never be).
    pub(super) fn release(&self, n: usize) {
        self.0.fetch_sub(n, Ordering::SeqCst);
    }
}

#[derive(Clone)]
pub(super) struct Outbox {
    pub(super) tx: mpsc::UnboundedSender<Out>,
    pub(super) budget: FrameBudget,
}

impl Outbox {
    pub(super) fn text(&self, s: String) {
        let _ = self.tx.send(Out::Text(s));
    }
    pub(super) fn close(&self, code: u16, reason: &str) {
        let _ = self.tx.send(Out::Close(code, reason.to_string()));
    }
    /// Queues a frame unless more than [`MAX_QUEUED_FRAME_BYTES`] are already waiting;
    /// returns true if and only if it was queued.
    pub(super) fn frame(&self, f: Vec<u8>) -> bool {
        let n = f.len();
        if !self.budget.take(n) {
            return false;
        }
        if self.tx.send(Out::Frame(f)).is_err() {
            self.budget.release(n);
            return false;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::viewer::msg;

    fn outbox() -> (Outbox, mpsc::UnboundedReceiver<Out>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (Outbox { tx, budget: FrameBudget::default() }, rx)
    }

    fn queued_frames(rx: &mut mpsc::UnboundedReceiver<Out>) -> Vec<Vec<u8>> {
        let mut v = Vec::new();
        while let Ok(o) = rx.try_recv() {
            if let Out::Frame(f) = o {
                v.push(f);
            }
        }
        v
    }

    #[test]
    fn a_frame_is_dropped_while_more_than_2_mb_of_frames_wait_and_queued_again_once_written() {
        let (out, mut rx) = outbox();
        // A real frame of 2 MB of JPEG payload: header + 2_000_000 bytes waits unwritten.
        let mut jpeg = vec![0x5A; MAX_QUEUED_FRAME_BYTES];
        jpeg[..2].copy_from_slice(&[0xFF, 0xD8]);
        let big = msg::frame(1, 1280, 800, 1.0, false, &jpeg);
        assert!(big.len() > MAX_QUEUED_FRAME_BYTES);
        assert!(out.frame(big.clone()), "an empty queue takes any frame");
        let small = msg::frame(2, 1280, 800, 1.0, false, &[0xFF, 0xD8, 0xFF, 0xD9]);
        assert!(!out.frame(small.clone()), "dropped while more than 2 MB wait");
        assert_eq!(queued_frames(&mut rx), vec![big.clone()], "the dropped frame was never queued");
        // The writer wrote the big one: the next frame goes.
        out.budget.release(big.len());
        assert!(out.frame(small.clone()));
        assert_eq!(queued_frames(&mut rx), vec![small]);
    }
    #[test]
    fn exactly_2_mb_waiting_does_not_drop_one_byte_more_does() {
        let (out, mut rx) = outbox();
        let f = |n: usize| vec![0u8; n];
        assert!(out.frame(f(MAX_QUEUED_FRAME_BYTES)));
        assert!(out.frame(f(1)), "2 MB waiting is not more than 2 MB");
        assert!(!out.frame(f(1)));
        assert_eq!(queued_frames(&mut rx).len(), 2);
    }
    #[test]
    fn a_frame_for_a_closed_socket_is_not_counted() {
        let (out, rx) = outbox();
        drop(rx);
        assert!(!out.frame(vec![0u8; 10]));
        assert!(out.budget.take(0));
        assert_eq!(out.budget.0.load(Ordering::SeqCst), 0);
    }
}
