//! Two-stage paint ordering (protocol §8.4): a crisp capture is sent only if no provisional
//! frame was sent while it ran, so an older picture never replaces a newer, input-driven one.

/// Counts the provisional frames sent on one socket and where the capture in flight began.
#[derive(Debug, Default)]
pub(super) struct PaintOrder {
    /// Provisional frames queued to the view so far.
    sent: u64,
    /// `sent` when the capture in flight began; `None` when no capture runs.
    capture_began: Option<u64>,
}

impl PaintOrder {
    /// A provisional frame was queued to the view (a dropped frame does not count: the view
    /// never sees it, so a capture is still newer than anything it shows).
    pub(super) fn provisional_sent(&mut self) {
        self.sent += 1;
    }

    /// A capture begins now.
    pub(super) fn capture_begins(&mut self) {
        self.capture_began = Some(self.sent);
    }

    /// The capture in flight has ended; returns true if and only if its picture may be sent,
    /// i.e. no provisional frame was sent since it began. False too when no capture ran.
    pub(super) fn capture_ends(&mut self) -> bool {
        self.capture_began.take() == Some(self.sent)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_capture_overtaken_by_a_provisional_frame_is_not_sent() {
        let mut o = PaintOrder::default();
        o.provisional_sent();
        o.capture_begins();
        o.provisional_sent();
        assert!(!o.capture_ends(), "the capture began before the newer frame");
        // The retake, with nothing in between, is sent.
        o.capture_begins();
        assert!(o.capture_ends());
    }

    #[test]
    fn frames_before_the_capture_began_do_not_hold_it_back() {
        let mut o = PaintOrder::default();
        for _ in 0..3 {
            o.provisional_sent();
        }
        o.capture_begins();
        assert!(o.capture_ends());
    }

    #[test]
    fn an_end_without_a_capture_sends_nothing() {
        let mut o = PaintOrder::default();
        assert!(!o.capture_ends());
        o.capture_begins();
        assert!(o.capture_ends());
        assert!(!o.capture_ends(), "one capture, one answer");
    }
}
