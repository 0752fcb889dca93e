//! Per-tab sealed state: the enumeration cache (by tab and frame set, which names every
//! document revision of the tab's frame process), the scan budget, and the `sN` tokens.
//! Owned by [`crate::automation::Automation`].

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

use super::scan::Scan;
use crate::automation::refs::{Minted, NodeKey, Refs};
use crate::automation::AutomationError;

/// The window the scan budget counts over.
pub const BUDGET_WINDOW: Duration = Duration::from_secs(60);

/// The frame set of a tab's own process: `(frame id, loader id)` of each frame, in frame
/// tree order. A new document anywhere in it is a new key.
pub type FrameSet = Vec<(String, String)>;

/// One tab's cached enumeration.
pub struct Cached {
    /// The browser launch it was read in.
    pub generation: u64,
    /// The frame set it was read for.
    pub frames: FrameSet,
    /// What it found (its sessions stay attached while it is cached).
    pub scan: Scan,
}

/// Sealed state of every tab.
#[derive(Default)]
pub struct Store {
    cache: HashMap<String, Cached>,
    scans: HashMap<String, VecDeque<Instant>>,
    tokens: HashMap<String, Refs>,
}

/// Most tabs whose cache is kept (the oldest is dropped: its next call scans again).
const MAX_CACHED_TABS: usize = 64;

impl Store {
    /// The cached enumeration of tab `tab` when it is for `frames` of launch `generation`:
    /// a would-be hit, since `frames` is the tab's own process only (`ask.rs` then asks the
    /// cached out-of-process frame sessions whether their documents are still the same).
    pub fn hit(&self, tab: &str, generation: u64, frames: &FrameSet) -> Option<&Cached> {
        self.cache.get(tab).filter(|c| c.generation == generation && &c.frames == frames)
    }

    /// Spends one scan of tab `tab`'s budget (`per_minute` in [`BUDGET_WINDOW`]) at `now`,
    /// or answers `rate_limited` with the whole seconds until one is allowed.
    pub fn spend(&mut self, tab: &str, per_minute: u32, now: Instant) -> Result<(), AutomationError> {
        let q = self.scans.entry(tab.to_string()).or_default();
        while q.front().is_some_and(|t| now.duration_since(*t) >= BUDGET_WINDOW) {
            q.pop_front();
        }
        if q.len() >= per_minute as usize {
            let oldest = *q.front().expect("a full budget has a first scan");
            let wait = BUDGET_WINDOW.saturating_sub(now.duration_since(oldest));
            return Err(AutomationError::RateLimited { retry_after: wait.as_secs_f64().ceil().max(1.0) as u64 });
        }
        q.push_back(now);
        Ok(())
    }

    /// Keeps `cached` as tab `tab`'s enumeration.
    pub fn keep(&mut self, tab: &str, cached: Cached) {
        if self.cache.len() >= MAX_CACHED_TABS && !self.cache.contains_key(tab) {
            if let Some(k) = self.cache.keys().next().cloned() {
                self.cache.remove(&k);
            }
        }
        self.cache.insert(tab.to_string(), cached);
    }

    /// Tab `tab`'s cached enumeration, whatever it was read for.
    pub fn cached(&self, tab: &str) -> Option<&Cached> {
        self.cache.get(tab)
    }

    /// The token number of `key` in browser `browser` (minted when new).
    pub fn mint(&mut self, browser: &str, key: NodeKey, url: &str, targets: &[String]) -> u64 {
        self.tokens.entry(browser.to_string()).or_default().mint(key, url, targets)
    }

    /// What token `sN` of browser `browser` names.
    pub fn token(&self, browser: &str, n: u64) -> Option<Minted> {
        self.tokens.get(browser).and_then(|t| t.get(n)).cloned()
    }
}

/// Parses a sealed token as written (`s3`, or `@s3`) into its number.
pub fn parse_token(s: &str) -> Option<u64> {
    let digits = s.strip_prefix('@').unwrap_or(s).strip_prefix('s')?;
    if digits.is_empty() || digits.len() > 18 || digits.starts_with('0') || !digits.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_refuses_past_its_count_and_recovers_after_the_window() {
        let mut s = Store::default();
        let t0 = Instant::now();
        s.spend("t", 2, t0).unwrap();
        s.spend("t", 2, t0 + Duration::from_secs(10)).unwrap();
        match s.spend("t", 2, t0 + Duration::from_secs(20)) {
            Err(AutomationError::RateLimited { retry_after }) => assert_eq!(retry_after, 40),
            other => panic!("{other:?}"),
        }
        s.spend("other", 2, t0 + Duration::from_secs(20)).unwrap();
        s.spend("t", 2, t0 + Duration::from_secs(60)).unwrap();
    }

    #[test]
    fn tokens_parse() {
        assert_eq!(parse_token("s3"), Some(3));
        assert_eq!(parse_token("@s12"), Some(12));
        assert_eq!(parse_token("e3"), None);
        assert_eq!(parse_token("s0"), None);
        assert_eq!(parse_token("s"), None);
    }
}
