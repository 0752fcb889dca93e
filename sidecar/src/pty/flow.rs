//! Flow-control accounting for one consumer of a terminal's output (protocol §5.1): what it
//! has been sent and not yet acknowledged, which part of that is scrollback replay, and since
//! when its backlog has been over the high watermark.
//!
//! The replay does not count toward the watermarks: a window that attaches to a terminal
//! with 4 MiB of scrollback must not pause the PTY (and so everyone's echo) while it draws
//! that scrollback. Acks pay the replay off first; only live output beyond it is backlog.

use std::time::{Duration, Instant};

use super::error::PtyError;
use crate::constants::{HIGH_WATERMARK_BYTES, LOW_WATERMARK_BYTES, MAX_ACK_BYTES};

/// One consumer's unacknowledged output.
#[derive(Debug)]
pub(crate) struct Credit {
    /// Over this backlog the PTY pauses, in bytes.
    high: u64,
    /// Under this backlog the consumer lets the PTY resume, in bytes.
    low: u64,
    /// Bytes queued to the consumer and not yet acknowledged, replay included.
    unacked: u64,
    /// Of `unacked`, the replay bytes not yet acknowledged.
    replay_left: u64,
    /// When the backlog last went over the high watermark; `None` while it is not over.
    over_since: Option<Instant>,
}

impl Credit {
    /// A client that has been queued `replay` bytes of scrollback and nothing else; its
    /// watermarks are the protocol's (`HIGH_WATERMARK_BYTES`, `LOW_WATERMARK_BYTES`).
    pub(crate) fn client(replay: u64) -> Self {
        Credit {
            high: HIGH_WATERMARK_BYTES,
            low: LOW_WATERMARK_BYTES,
            unacked: replay,
            replay_left: replay,
            over_since: None,
        }
    }

    /// Live output queued and not yet acknowledged (the replay excluded), in bytes.
    pub(crate) fn backlog(&self) -> u64 {
        self.unacked - self.replay_left
    }

    /// Records `n` bytes of live output queued at `now`. Returns true if and only if the
    /// backlog is now over the high watermark (the PTY must pause).
    pub(crate) fn sent(&mut self, n: u64, now: Instant) -> bool {
        self.unacked += n;
        let over = self.backlog() > self.high;
        if over && self.over_since.is_none() {
            self.over_since = Some(now);
        }
        over
    }

    /// Records a client's ack of `n` processed bytes. Errors with
    /// [`PtyError::AckOutOfRange`] if `n` is 0, over 2^32, or more than is unacknowledged;
    /// the state is then unchanged.
    pub(crate) fn ack(&mut self, n: u64) -> Result<(), PtyError> {
        if n == 0 || n > MAX_ACK_BYTES || n > self.unacked {
            return Err(PtyError::AckOutOfRange { acked: n, unacked: self.unacked });
        }
        self.unacked -= n;
        self.replay_left = self.replay_left.saturating_sub(n);
        if self.backlog() <= self.high {
            self.over_since = None;
        }
        Ok(())
    }

    /// True if and only if the backlog is below the low watermark (this consumer lets a
    /// paused PTY resume).
    pub(crate) fn below_low(&self) -> bool {
        self.backlog() < self.low
    }

    /// When the backlog has been over the high watermark for `limit`, the moment it will
    /// have been (possibly in the past); `None` while it is not over.
    pub(crate) fn overdue_at(&self, limit: Duration) -> Option<Instant> {
        self.over_since.map(|t| t + limit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HIGH: u64 = HIGH_WATERMARK_BYTES;
    const LOW: u64 = LOW_WATERMARK_BYTES;

    #[test]
    fn the_replay_counts_toward_no_watermark() {
        let now = Instant::now();
        let mut c = Credit::client(4 * HIGH);
        assert_eq!(c.backlog(), 0);
        assert!(c.below_low(), "a fresh client with a big replay lets the PTY run");
        assert!(!c.sent(HIGH, now), "at the watermark is not over it");
        assert!(c.sent(1, now), "one byte of live output more is");
        // Acks pay the replay off first: the backlog stays until the replay is processed.
        c.ack(4 * HIGH).unwrap();
        assert_eq!(c.backlog(), HIGH + 1);
        c.ack(HIGH + 1 - (LOW - 1)).unwrap();
        assert!(c.below_low());
    }

    #[test]
    fn over_since_is_set_when_going_over_and_cleared_when_back_at_the_watermark() {
        let t0 = Instant::now();
        let limit = Duration::from_secs(5);
        let mut c = Credit::client(0);
        assert_eq!(c.overdue_at(limit), None);
        assert!(c.sent(HIGH + 10, t0));
        assert!(c.sent(5, t0 + Duration::from_secs(1)), "still over");
        assert_eq!(c.overdue_at(limit), Some(t0 + limit), "the clock starts when it first went over");
        c.ack(5).unwrap();
        assert_eq!(c.overdue_at(limit), Some(t0 + limit), "over by 10 bytes still");
        c.ack(10).unwrap();
        assert_eq!(c.overdue_at(limit), None);
        let t1 = t0 + Duration::from_secs(2);
        assert!(c.sent(1, t1));
        assert_eq!(c.overdue_at(limit), Some(t1 + limit), "a new spell over starts a new clock");
    }

    #[test]
    fn acks_out_of_range_are_refused_and_change_nothing() {
        let mut c = Credit::client(100);
        for bad in [0, 101, MAX_ACK_BYTES + 1] {
            assert!(c.ack(bad).is_err(), "{bad}");
        }
        assert_eq!((c.unacked, c.replay_left), (100, 100));
        c.ack(100).unwrap();
        assert!(c.ack(1).is_err());
    }
}
