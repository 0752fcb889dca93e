//! Bounded byte ring holding a terminal's scrollback, allocated as output arrives.

/// Smallest allocation a ring makes once it holds anything, in bytes.
const MIN_ALLOC_BYTES: usize = 4096;

/// The last `capacity` bytes written, oldest dropped first.
///
/// Memory grows with the output (doubling, never past `capacity`), so an idle terminal
/// costs a few KiB rather than the whole capacity; it is freed when the ring drops. `push`
/// is O(len of the pushed slice) amortized; `snapshot` copies the contents out and does not
/// consume them.
pub(crate) struct Ring {
    /// The held bytes. While `buf.len() < cap` they are in order (oldest first); once the
    /// ring is full (`buf.len() == cap`) the oldest byte is at `head` and the ring wraps.
    buf: Vec<u8>,
    /// Most bytes held.
    cap: usize,
    /// Index of the oldest byte in `buf`; 0 until the ring is full.
    head: usize,
}

impl Ring {
    /// Creates an empty ring that keeps at most `capacity` bytes and allocates nothing yet.
    /// Panics if `capacity` is 0 (a programmer error at construction).
    pub(crate) fn new(capacity: usize) -> Self {
        assert!(capacity > 0, "ring capacity must be positive");
        Ring { buf: Vec::new(), cap: capacity, head: 0 }
    }

    /// Number of bytes currently held.
    pub(crate) fn len(&self) -> usize {
        self.buf.len()
    }

    /// Bytes allocated for the contents (≤ capacity).
    #[cfg(test)]
    pub(crate) fn allocated(&self) -> usize {
        self.buf.capacity()
    }

    /// Copies the newest `n` bytes out (all of them if fewer are held), oldest first.
    pub(crate) fn tail(&self, n: usize) -> Vec<u8> {
        let len = self.buf.len();
        let n = n.min(len);
        // In order the bytes are buf[head..] then buf[..head]; skip the oldest len - n.
        let skip = len - n;
        let first_part = len - self.head;
        let mut out = Vec::with_capacity(n);
        if skip < first_part {
            out.extend_from_slice(&self.buf[self.head + skip..]);
            out.extend_from_slice(&self.buf[..self.head]);
        } else {
            out.extend_from_slice(&self.buf[skip - first_part..self.head]);
        }
        out
    }

    /// Appends `data`, dropping the oldest bytes when the ring is full.
    pub(crate) fn push(&mut self, mut data: &[u8]) {
        let cap = self.cap;
        if data.len() >= cap {
            data = &data[data.len() - cap..];
            self.grow(cap);
            self.buf.clear();
            self.buf.extend_from_slice(data);
            self.head = 0;
            return;
        }
        if self.buf.len() < cap {
            let n = data.len().min(cap - self.buf.len());
            self.grow(self.buf.len() + n);
            self.buf.extend_from_slice(&data[..n]);
            data = &data[n..];
        }
        // Full: overwrite the oldest bytes, which start at `head`.
        let first = data.len().min(cap - self.head);
        self.buf[self.head..self.head + first].copy_from_slice(&data[..first]);
        self.buf[..data.len() - first].copy_from_slice(&data[first..]);
        self.head = (self.head + data.len()) % cap;
    }

    /// Makes room for `needed` bytes (≤ capacity): doubles the allocation (at least
    /// `MIN_ALLOC_BYTES`), never past the capacity.
    fn grow(&mut self, needed: usize) {
        if needed <= self.buf.capacity() {
            return;
        }
        let target = needed.max(2 * self.buf.capacity()).max(MIN_ALLOC_BYTES).min(self.cap);
        self.buf.reserve_exact(target - self.buf.len());
    }

    /// Copies the held bytes out, oldest first.
    pub(crate) fn snapshot(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.buf.len());
        out.extend_from_slice(&self.buf[self.head..]);
        out.extend_from_slice(&self.buf[..self.head]);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::Ring;

    /// Reference model: a Vec truncated to the last `cap` bytes.
    fn model(pushes: &[&[u8]], cap: usize) -> Vec<u8> {
        let all: Vec<u8> = pushes.concat();
        all[all.len().saturating_sub(cap)..].to_vec()
    }

    #[test]
    fn tail_is_the_end_of_the_snapshot() {
        let mut r = Ring::new(8);
        for chunk in [&b"abcde"[..], b"fghij", b"k"] {
            r.push(chunk);
            let snap = r.snapshot();
            for n in 0..=10 {
                assert_eq!(r.tail(n), snap[snap.len().saturating_sub(n)..].to_vec(), "n={n}");
            }
        }
    }

    #[test]
    fn empty_ring_snapshots_empty() {
        let r = Ring::new(8);
        assert_eq!(r.snapshot(), Vec::<u8>::new());
        assert_eq!(r.len(), 0);
    }

    #[test]
    fn ring_keeps_last_capacity_bytes_in_order() {
        let cases: Vec<Vec<&[u8]>> = vec![
            vec![b"abc"],
            vec![b"abc", b"defgh"],
            vec![b"abc", b"defghi"],
            vec![b"abcdefghijkl"],
            vec![b"ab", b"cd", b"ef", b"gh", b"ij", b"k"],
            vec![b"abcdefg", b"h", b"ijklmnop", b"q"],
        ];
        for pushes in cases {
            let mut r = Ring::new(8);
            for p in &pushes {
                r.push(p);
            }
            assert_eq!(r.snapshot(), model(&pushes, 8), "pushes {pushes:?}");
            assert_eq!(r.len(), model(&pushes, 8).len());
        }
    }

    #[test]
    fn memory_is_allocated_as_output_arrives_and_never_past_the_capacity() {
        const CAP: usize = 1 << 20;
        let mut r = Ring::new(CAP);
        assert_eq!(r.allocated(), 0, "an idle terminal allocates no scrollback");
        r.push(b"$ ");
        assert!(r.allocated() <= 4096, "{} bytes for a prompt", r.allocated());
        let chunk = vec![b'x'; 3000];
        let mut pushed = 2;
        while pushed < 3 * CAP {
            r.push(&chunk);
            pushed += chunk.len();
            let want = pushed.min(CAP);
            assert_eq!(r.len(), want);
            assert!(r.allocated() <= (2 * want).clamp(4096, CAP), "{} for {want}", r.allocated());
        }
        assert_eq!(r.allocated(), CAP);
    }

    #[test]
    fn snapshot_does_not_consume() {
        let mut r = Ring::new(4);
        r.push(b"xyz");
        assert_eq!(r.snapshot(), b"xyz");
        assert_eq!(r.snapshot(), b"xyz");
    }

    #[test]
    fn ring_matches_model_over_many_pushes() {
        // Deterministic pseudo-random push sizes.
        let mut seed: u32 = 12345;
        let mut r = Ring::new(1000);
        let mut all = Vec::new();
        for i in 0..2000u32 {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12345);
            let n = (seed >> 16) as usize % 1500;
            let chunk: Vec<u8> = (0..n).map(|j| (i as usize + j) as u8).collect();
            r.push(&chunk);
            all.extend_from_slice(&chunk);
        }
        assert_eq!(r.snapshot(), all[all.len() - 1000..].to_vec());
    }
}
