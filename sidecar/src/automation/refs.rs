//! Refs (`e1`, `e2`, …): names for nodes, minted by snapshots (DESIGN §12).
//!
//! A ref names one node of one document of one tab of one Chromium launch: its key is
//! (browser generation, tab target id, frame id, loaderId, backendNodeId). The same key gets
//! the same number in every snapshot; a number is never given to another key. Whether the
//! node is still there is decided when the ref is used (`node.rs`), never by guessing.

use std::collections::HashMap;

/// Most refs kept per browser; past it the oldest documents' refs are forgotten (they then
/// answer `unknown_ref`, never another node).
pub const MAX_REFS_PER_BROWSER: usize = 200_000;

/// What a ref stands for.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NodeKey {
    /// The browser's launch generation (`BrowserRef::generation`).
    pub generation: u64,
    /// The tab's CDP target id.
    pub tab: String,
    /// The frame's id.
    pub frame: String,
    /// The frame's document (`loaderId`) when the ref was minted.
    pub loader: String,
    /// The node's `backendNodeId`.
    pub backend: i64,
}

/// A minted ref: its key, the frame's URL at the time (to tell a navigation from a
/// same-URL document replacement), and the out-of-process frames it is reached through.
#[derive(Debug, Clone, PartialEq)]
pub struct Minted {
    /// The node.
    pub key: NodeKey,
    /// The frame's URL (fragment removed) when the ref was minted.
    pub url: String,
    /// The out-of-process frame targets from the tab down to the node's frame process,
    /// outermost first (empty when the tab's own process holds it).
    pub targets: Vec<String>,
}

/// The refs of one browser. Owned by [`super::Automation`].
#[derive(Debug, Default)]
pub struct Refs {
    by_key: HashMap<NodeKey, u64>,
    by_number: HashMap<u64, Minted>,
    next: u64,
}

impl Refs {
    /// The number of `key`, minting the next one if it has none (`url` and `targets` as in
    /// [`Minted`]).
    pub fn mint(&mut self, key: NodeKey, url: &str, targets: &[String]) -> u64 {
        if let Some(n) = self.by_key.get(&key) {
            return *n;
        }
        if self.by_number.len() >= MAX_REFS_PER_BROWSER {
            let oldest = self.by_number.keys().min().copied();
            if let Some(m) = oldest.and_then(|n| self.by_number.remove(&n)) {
                self.by_key.remove(&m.key);
            }
        }
        self.next += 1;
        self.by_key.insert(key.clone(), self.next);
        self.by_number.insert(self.next, Minted { key, url: url.to_string(), targets: targets.to_vec() });
        self.next
    }

    /// What ref number `n` was minted for.
    pub fn get(&self, n: u64) -> Option<&Minted> {
        self.by_number.get(&n)
    }
}

/// Parses a ref as written (`e12`, or `@e12` as some agents write it) into its number.
pub fn parse_ref(s: &str) -> Option<u64> {
    let digits = s.strip_prefix('@').unwrap_or(s).strip_prefix('e')?;
    if digits.is_empty() || digits.len() > 18 || digits.starts_with('0') || !digits.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    digits.parse().ok()
}

/// `url` without its fragment (a fragment change keeps the document).
pub fn without_fragment(url: &str) -> &str {
    url.split('#').next().unwrap_or(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(loader: &str, backend: i64) -> NodeKey {
        NodeKey { generation: 1, tab: "T".into(), frame: "F".into(), loader: loader.into(), backend }
    }

    #[test]
    fn a_node_keeps_its_number_and_numbers_are_never_reused() {
        let mut r = Refs::default();
        assert_eq!(r.mint(key("L1", 5), "http://a/", &[]), 1);
        assert_eq!(r.mint(key("L1", 6), "http://a/", &[]), 2);
        assert_eq!(r.mint(key("L1", 5), "http://a/", &[]), 1, "same node, same number");
        assert_eq!(r.mint(key("L2", 5), "http://a/", &[]), 3, "same backend id in a new document is another node");
        assert_eq!(r.get(1).unwrap().key.loader, "L1");
        assert!(r.get(4).is_none());
    }

    #[test]
    fn refs_parse() {
        assert_eq!(parse_ref("e1"), Some(1));
        assert_eq!(parse_ref("@e42"), Some(42));
        for bad in ["", "e", "e0", "e01", "1", "x1", "e1x", "e-1"] {
            assert_eq!(parse_ref(bad), None, "{bad}");
        }
        assert_eq!(without_fragment("http://a/b#c"), "http://a/b");
    }
}
