//! Fixed-capacity byte ring holding a terminal's scrollback.

/// The last `capacity` bytes written, oldest dropped first.
///
/// `push` is O(len of the pushed slice); `snapshot` copies the contents out and does not
/// consume them.
pub(crate) struct Ring {
    buf: Vec<u8>,
    /// Index of the oldest byte in `buf`.
    head: usize,
    /// Number of valid bytes, ≤ capacity.
    len: usize,
}

impl Ring {
    /// Creates an empty ring that keeps at most `capacity` bytes. Panics if `capacity` is 0
    /// (a programmer error at construction).
    pub(crate) fn new(capacity: usize) -> Self {
        assert!(capacity > 0, "ring capacity must be positive");
        Ring { buf: vec![0; capacity], head: 0, len: 0 }
    }

    /// Number of bytes currently held.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Copies the newest `n` bytes out (all of them if fewer are held), oldest first.
    pub(crate) fn tail(&self, n: usize) -> Vec<u8> {
        let n = n.min(self.len);
        let cap = self.buf.len();
        let start = (self.head + self.len - n) % cap;
        let first = n.min(cap - start);
        let mut out = Vec::with_capacity(n);
        out.extend_from_slice(&self.buf[start..start + first]);
        out.extend_from_slice(&self.buf[..n - first]);
        out
    }

    /// Appends `data`, dropping the oldest bytes when the ring is full.
    pub(crate) fn push(&mut self, mut data: &[u8]) {
        let cap = self.buf.len();
        if data.len() >= cap {
            data = &data[data.len() - cap..];
            self.buf.copy_from_slice(data);
            self.head = 0;
            self.len = cap;
            return;
        }
        // Write position (one past the newest byte).
        let tail = (self.head + self.len) % cap;
        let first = data.len().min(cap - tail);
        self.buf[tail..tail + first].copy_from_slice(&data[..first]);
        self.buf[..data.len() - first].copy_from_slice(&data[first..]);
        let new_len = self.len + data.len();
        if new_len > cap {
            self.head = (self.head + new_len - cap) % cap;
            self.len = cap;
        } else {
            self.len = new_len;
        }
    }

    /// Copies the held bytes out, oldest first.
    pub(crate) fn snapshot(&self) -> Vec<u8> {
        let cap = self.buf.len();
        let mut out = Vec::with_capacity(self.len);
        let first = self.len.min(cap - self.head);
        out.extend_from_slice(&self.buf[self.head..self.head + first]);
        out.extend_from_slice(&self.buf[..self.len - first]);
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
