//! Flow-control accounting for one consumer of a terminal's output (protocol §5.1, §5.4):
//! what it has been sent and not yet acknowledged, and which part of that is uncounted (the
//! scrollback replay and catch-up states).
//!
//! The uncounted bytes do not count toward the watermarks: a window that attaches to a
//! terminal with 4 MiB of scrollback must not fall behind while it draws that scrollback.
//! Acks pay off the bytes in the order they were queued; only live output is backlog.

use std::collections::VecDeque;

use super::error::PtyError;
use crate::constants::{HIGH_WATERMARK_BYTES, LOW_WATERMARK_BYTES, MAX_ACK_BYTES};

/// One consumer's unacknowledged output. Positions are byte offsets in what was queued to
/// this consumer (replay, live output and catch-up states, in order).
#[derive(Debug)]
pub(crate) struct Credit {
    /// Over this backlog the consumer falls behind, in bytes.
    high: u64,
    /// Under this backlog a consumer that fell behind catches up, in bytes.
    low: u64,
    /// Bytes queued so far.
    sent: u64,
    /// Bytes acknowledged so far (acks come in the order the bytes were queued).
    acked: u64,
    /// The replay and catch-up states not wholly acknowledged: (start, end) positions.
    uncounted: VecDeque<(u64, u64)>,
}

impl Credit {
    /// A client that has been queued `replay` bytes of scrollback and nothing else; its
    /// watermarks are the protocol's (`HIGH_WATERMARK_BYTES`, `LOW_WATERMARK_BYTES`).
    pub(crate) fn client(replay: u64) -> Self {
        let mut c = Credit {
            high: HIGH_WATERMARK_BYTES,
            low: LOW_WATERMARK_BYTES,
            sent: 0,
            acked: 0,
            uncounted: VecDeque::new(),
        };
        c.add_uncounted(replay);
        c
    }

    /// Bytes queued and not yet acknowledged, uncounted ones included.
    pub(crate) fn unacked(&self) -> u64 {
        self.sent - self.acked
    }

    /// Live output queued and not yet acknowledged (replay and catch-ups excluded), in bytes.
    pub(crate) fn backlog(&self) -> u64 {
        let uncounted: u64 = self.uncounted.iter().map(|&(s, e)| e - s.max(self.acked)).sum();
        self.unacked() - uncounted
    }

    /// Records `n` bytes of live output queued. Returns true if and only if the backlog is
    /// now over the high watermark (the consumer falls behind).
    pub(crate) fn sent(&mut self, n: u64) -> bool {
        self.sent += n;
        self.backlog() > self.high
    }

    /// Records `n` bytes of replay queued: acknowledged like output, counted toward no
    /// watermark.
    pub(crate) fn add_uncounted(&mut self, n: u64) {
        self.insert_uncounted(self.sent, n);
    }

    /// The position the next byte queued will have.
    pub(crate) fn position(&self) -> u64 {
        self.sent
    }

    /// Records `n` uncounted bytes (a catch-up state) queued at position `at`, before the
    /// live output queued since `at` was taken ([`Credit::position`]): it goes out first.
    /// `at` must be at or after every earlier uncounted piece and not yet acknowledged.
    pub(crate) fn insert_uncounted(&mut self, at: u64, n: u64) {
        if n > 0 {
            self.uncounted.push_back((at, at + n));
            self.sent += n;
        }
    }

    /// Records a client's ack of `n` processed bytes. Errors with
    /// [`PtyError::AckOutOfRange`] if `n` is 0, over 2^32, or more than is unacknowledged;
    /// the state is then unchanged.
    pub(crate) fn ack(&mut self, n: u64) -> Result<(), PtyError> {
        if n == 0 || n > MAX_ACK_BYTES || n > self.unacked() {
            return Err(PtyError::AckOutOfRange { acked: n, unacked: self.unacked() });
        }
        self.acked += n;
        while self.uncounted.front().is_some_and(|&(_, e)| e <= self.acked) {
            self.uncounted.pop_front();
        }
        Ok(())
    }

    /// True if and only if the backlog is below the low watermark (a consumer that fell
    /// behind may catch up).
    pub(crate) fn below_low(&self) -> bool {
        self.backlog() < self.low
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HIGH: u64 = HIGH_WATERMARK_BYTES;
    const LOW: u64 = LOW_WATERMARK_BYTES;

    #[test]
    fn the_replay_counts_toward_no_watermark() {
        let mut c = Credit::client(4 * HIGH);
        assert_eq!(c.backlog(), 0);
        assert!(c.below_low(), "a fresh client with a big replay keeps up");
        assert!(!c.sent(HIGH), "at the watermark is not over it");
        assert!(c.sent(1), "one byte of live output more is");
        c.ack(4 * HIGH).unwrap();
        assert_eq!(c.backlog(), HIGH + 1);
        c.ack(HIGH + 1 - (LOW - 1)).unwrap();
        assert!(c.below_low());
    }

    #[test]
    fn a_catch_up_state_counts_toward_no_watermark_and_is_paid_off_last() {
        let mut c = Credit::client(0);
        assert!(c.sent(HIGH + 10));
        c.ack(HIGH + 10 - (LOW - 1)).unwrap();
        assert!(c.below_low());
        // The catch-up follows the LOW - 1 bytes still queued.
        c.add_uncounted(5 * HIGH);
        assert_eq!(c.backlog(), LOW - 1, "the state adds no backlog");
        c.ack(LOW - 1).unwrap();
        c.ack(5 * HIGH).unwrap();
        assert_eq!((c.unacked(), c.backlog()), (0, 0));
        assert!(!c.sent(HIGH), "live output after it counts from zero");
    }

    #[test]
    fn a_catch_up_made_after_live_output_resumed_is_counted_where_it_goes_out() {
        let mut c = Credit::client(0);
        assert!(c.sent(HIGH + 10));
        c.ack(HIGH + 10).unwrap();
        let at = c.position();
        // Live output is queued while the state is being made; the state goes out first.
        assert!(!c.sent(1000));
        c.insert_uncounted(at, 50_000);
        assert_eq!(c.backlog(), 1000);
        c.ack(50_000).unwrap();
        assert_eq!(c.backlog(), 1000, "the acks paid off the state, not the live bytes");
        c.ack(1000).unwrap();
        assert_eq!((c.unacked(), c.backlog()), (0, 0));
    }

    #[test]
    fn acks_out_of_range_are_refused_and_change_nothing() {
        let mut c = Credit::client(100);
        for bad in [0, 101, MAX_ACK_BYTES + 1] {
            assert!(c.ack(bad).is_err(), "{bad}");
        }
        assert_eq!((c.unacked(), c.backlog()), (100, 0));
        c.ack(100).unwrap();
        assert!(c.ack(1).is_err());
    }
}
