//! Counts of CDP work per tab (issue 24 "quiet by default"): accessibility-tree reads and
//! shadow-piercing DOM reads are counted where every raw CDP command goes out
//! (`session.rs` calls [`note_command`]), so a test asserts the invariant "snapshot, find, screenshot and
//! navigate do no such work" from what was sent, not from reading code. The sealed-content
//! code adds its own events (scans, cache hits, focus-walk steps).
//!
//! One registry per process, keyed by the tab's target id, at most [`MAX_TABS`] tabs (the
//! oldest entry is forgotten first).

use std::collections::VecDeque;
use std::sync::{LazyLock, Mutex};

use serde::Serialize;
use serde_json::Value;

/// Most tabs whose counts are kept.
pub const MAX_TABS: usize = 1024;

/// What one tab's CDP work counted since the tab was first seen.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// Accessibility-tree reads (`Accessibility.getFullAXTree`, `getPartialAXTree`,
    /// `queryAXTree`, `getChildAXNodes`, `getRootAXNode`, `getAXNodeAndAncestors`).
    pub ax_reads: u64,
    /// DOM reads that pierce shadow roots (`DOM.getDocument`, `getFlattenedDocument`,
    /// `describeNode`, `requestChildNodes` with `pierce: true`).
    pub pierce_reads: u64,
    /// Sealed enumerations (one per document revision and frame set).
    pub sealed_scans: u64,
    /// Sealed answers served from the cache (no enumeration).
    pub cache_hits: u64,
    /// Tab presses sent by focus walks.
    pub focus_walk_steps: u64,
}

/// One kind of counted work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Work {
    /// See [`Counts::ax_reads`].
    AxRead,
    /// See [`Counts::pierce_reads`].
    PierceRead,
    /// See [`Counts::sealed_scans`].
    SealedScan,
    /// See [`Counts::cache_hits`].
    CacheHit,
    /// See [`Counts::focus_walk_steps`].
    FocusWalkStep,
}

static REGISTRY: LazyLock<Mutex<VecDeque<(String, Counts)>>> = LazyLock::new(|| Mutex::new(VecDeque::new()));

/// What command `method` with `params` counts as, if anything.
pub fn classify(method: &str, params: &Value) -> Option<Work> {
    const AX: &[&str] = &[
        "Accessibility.getFullAXTree",
        "Accessibility.getPartialAXTree",
        "Accessibility.queryAXTree",
        "Accessibility.getChildAXNodes",
        "Accessibility.getRootAXNode",
        "Accessibility.getAXNodeAndAncestors",
    ];
    const PIERCING: &[&str] =
        &["DOM.getDocument", "DOM.getFlattenedDocument", "DOM.describeNode", "DOM.requestChildNodes"];
    if AX.contains(&method) {
        Some(Work::AxRead)
    } else if PIERCING.contains(&method) && params["pierce"] == true {
        Some(Work::PierceRead)
    } else {
        None
    }
}

/// Adds one `work` to tab `tab`'s counts.
pub fn add(tab: &str, work: Work) {
    let mut r = REGISTRY.lock().unwrap_or_else(|p| p.into_inner());
    let i = match r.iter().position(|(t, _)| t == tab) {
        Some(i) => i,
        None => {
            if r.len() >= MAX_TABS {
                r.pop_front();
            }
            r.push_back((tab.to_string(), Counts::default()));
            r.len() - 1
        }
    };
    let c = &mut r[i].1;
    match work {
        Work::AxRead => c.ax_reads += 1,
        Work::PierceRead => c.pierce_reads += 1,
        Work::SealedScan => c.sealed_scans += 1,
        Work::CacheHit => c.cache_hits += 1,
        Work::FocusWalkStep => c.focus_walk_steps += 1,
    }
}

/// Counts command `method` with `params` sent for tab `tab`, when it is counted work.
pub fn note_command(tab: &str, method: &str, params: &Value) {
    if let Some(w) = classify(method, params) {
        add(tab, w);
    }
}

/// Tab `tab`'s counts (all zero for a tab never counted).
pub fn of(tab: &str) -> Counts {
    let r = REGISTRY.lock().unwrap_or_else(|p| p.into_inner());
    r.iter().find(|(t, _)| t == tab).map(|(_, c)| *c).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_ax_reads_and_piercing_reads_count() {
        assert_eq!(classify("Accessibility.getFullAXTree", &json!({})), Some(Work::AxRead));
        assert_eq!(classify("Accessibility.enable", &json!({})), None);
        assert_eq!(classify("DOM.getDocument", &json!({"depth": -1, "pierce": true})), Some(Work::PierceRead));
        assert_eq!(classify("DOM.getDocument", &json!({"depth": 1})), None);
        assert_eq!(classify("DOM.describeNode", &json!({"backendNodeId": 3})), None);
        assert_eq!(classify("DOMSnapshot.captureSnapshot", &json!({})), None);
        add("t-count", Work::AxRead);
        add("t-count", Work::CacheHit);
        note_command("t-count", "DOM.getFlattenedDocument", &json!({"pierce": true}));
        let c = of("t-count");
        assert_eq!((c.ax_reads, c.pierce_reads, c.cache_hits, c.sealed_scans), (1, 1, 1, 0));
        assert_eq!(of("t-never"), Counts::default());
    }
}
