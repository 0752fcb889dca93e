//! A cheap look for the terminal queries the screen model answers (DA1, DA2, DSR, CPR,
//! DECXCPR: `CSI [>?]? Ps c|n`) in the output, so that the model parses eagerly only when a
//! batch may hold one and no client is live to answer it (protocol §5.2). It errs on the
//! side of "maybe": a false hit only costs a parse.

/// Parameter bytes a query's CSI may hold before its final byte; more is not a query.
const MAX_PARAM_BYTES: usize = 16;

/// Scans batches in order; remembers a CSI cut at a batch's end.
#[derive(Debug, Default)]
pub(crate) struct QueryScan {
    /// `Some(n)`: the previous batch ended inside `ESC [` and `n` parameter bytes (or on a
    /// lone `ESC`: `Some(usize::MAX)`).
    carry: Option<usize>,
}

enum Tail {
    /// A query's final byte.
    Query,
    /// Something else.
    Other,
    /// The bytes ended first, after this many parameter bytes.
    Cut(usize),
}

/// Reads the parameter bytes and final byte of a CSI from `b`, `seen` parameter bytes in.
fn csi_tail(b: &[u8], mut seen: usize) -> Tail {
    for &x in b {
        match x {
            b'0'..=b'9' | b';' | b'?' | b'>' if seen < MAX_PARAM_BYTES => seen += 1,
            b'c' | b'n' => return Tail::Query,
            _ => return Tail::Other,
        }
    }
    Tail::Cut(seen)
}

impl QueryScan {
    /// True if `batch` (the batch after the previous one scanned) may hold a query.
    pub(crate) fn scan(&mut self, batch: &[u8]) -> bool {
        let mut hit = false;
        let mut from = 0;
        match self.carry.take() {
            Some(usize::MAX) if batch.first() == Some(&b'[') => match csi_tail(&batch[1..], 0) {
                Tail::Query => hit = true,
                Tail::Cut(n) => self.carry = Some(n),
                Tail::Other => {}
            },
            Some(usize::MAX) | None => {}
            Some(n) => match csi_tail(batch, n) {
                Tail::Query => hit = true,
                Tail::Cut(n) => self.carry = Some(n),
                Tail::Other => {}
            },
        }
        if self.carry.is_some() {
            return hit;
        }
        while let Some(i) = memchr::memchr(0x1b, &batch[from..]) {
            let at = from + i;
            from = at + 1;
            match batch.get(at + 1) {
                None => self.carry = Some(usize::MAX),
                Some(b'[') => match csi_tail(&batch[at + 2..], 0) {
                    Tail::Query => hit = true,
                    Tail::Cut(n) => self.carry = Some(n),
                    Tail::Other => {}
                },
                Some(_) => {}
            }
            if hit {
                // One is enough; the carry only matters for a query cut at the end.
                self.carry = None;
                return true;
            }
        }
        hit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_queries_the_model_answers_and_not_other_sequences() {
        for q in ["\x1b[c", "\x1b[0c", "\x1b[>c", "\x1b[5n", "\x1b[6n", "\x1b[?6n", "text\x1b[31mred\x1b[6n"] {
            assert!(QueryScan::default().scan(q.as_bytes()), "{q:?}");
        }
        for o in ["plain text", "\x1b[31mred\x1b[0m", "\x1b]0;title\x07", "\x1b[?1049h", "\x1b[2J"] {
            assert!(!QueryScan::default().scan(o.as_bytes()), "{o:?}");
        }
    }

    #[test]
    fn finds_a_query_cut_between_two_batches_at_any_byte() {
        let q = b"abc\x1b[?6n";
        for cut in 1..q.len() {
            let mut s = QueryScan::default();
            let first = s.scan(&q[..cut]);
            let second = s.scan(&q[cut..]);
            assert!(first || second, "cut at {cut}");
        }
        let mut s = QueryScan::default();
        assert!(!s.scan(b"x\x1b["));
        assert!(!s.scan(b"31m"), "a cut SGR is no query");
        assert!(!s.scan(b"n"), "and the carry is gone after it");
    }
}
