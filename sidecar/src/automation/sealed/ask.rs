//! `snapshot --sealed`: the sealed controls of the active tab, from one enumeration per
//! document revision (cached by tab and frame set, out-of-process frames' documents
//! included), each measured anew per call (at most `agent.sealed.max_controls`) and named by
//! a token `sN`.

use std::time::Instant;

use serde_json::{json, Value};

use super::scan::{enumerate, measure};
use super::store::{Cached, FrameSet};
use super::{Lever, Policy};
use crate::automation::refs::NodeKey;
use crate::automation::snapshot::frames;
use crate::automation::{page, Automation, AutomationError};
use crate::browser::cdp_counts::{self, Work};
use crate::browser::session::Session;
use crate::browser::BrowserRef;

impl Automation {
    /// The sealed controls of `b`'s active tab under `policy` → `{"tab","cache_hit",
    /// "frames","controls":[{"token","role","name","states","rect","in_viewport"}],"cut",
    /// "text"}`: role, name, states and rect only, never a value. Refused as the policy says
    /// ([`Policy::allow`]), `frames_limit` past `max_frames`, `rate_limited` when the tab's
    /// scans per minute are spent (a cache hit spends none).
    pub async fn sealed_controls(&self, b: &BrowserRef, policy: &Policy) -> Result<Value, AutomationError> {
        policy.allow(Lever::Discovery)?;
        let page = page(b)?;
        let tab = page.target_id().as_ref().to_string();
        let generation = b.generation();
        let top = Session::from(&page);
        let set: FrameSet =
            frames(&top.call("Page.getFrameTree", json!({})).await?).into_iter().map(|f| (f.id, f.loader)).collect();
        let max_frames = policy.file.max_frames.0 as usize;
        if set.len() > max_frames {
            return Err(super::scan::frames_limit(max_frames));
        }
        // The top session's frame tree does not see an out-of-process frame's new document:
        // a would-be hit asks each cached frame session too (`unchanged`).
        let cached =
            self.sealed_store().hit(&tab, generation, &set).map(|c| (c.scan.sessions.clone(), c.scan.frames.clone()));
        let hit = match cached {
            Some((sessions, read)) => unchanged(&set, sessions.get(1..).unwrap_or_default(), &read).await,
            None => false,
        };
        if hit {
            cdp_counts::add(&tab, Work::CacheHit);
        } else {
            self.sealed_store().spend(&tab, policy.file.scans_per_minute.0, Instant::now())?;
            cdp_counts::add(&tab, Work::SealedScan);
            let scan = enumerate(&top, max_frames).await?;
            self.sealed_store().keep(&tab, Cached { generation, frames: set, scan });
        }
        // What to measure, read out of the cache (its lock is not held across CDP calls).
        let (identities, sessions, frame_count) = {
            let store = self.sealed_store();
            let c =
                store.cached(&tab).ok_or_else(|| AutomationError::BadRequest("the sealed cache went away".into()))?;
            (c.scan.controls.clone(), c.scan.sessions.clone(), c.scan.frames.len())
        };
        let max = policy.file.max_controls.0 as usize;
        let mut controls = Vec::new();
        let mut text = String::new();
        // Each session's viewport, once per answer (one `Page.getLayoutMetrics` per frame
        // process that has a control listed, not one per control).
        let mut viewports: Vec<Option<(f64, f64)>> = vec![None; sessions.len()];
        for id in identities.iter().take(max) {
            if viewports[id.session].is_none() {
                let (w, h, _, _) = sessions[id.session].viewport().await?;
                viewports[id.session] = Some((w, h));
            }
        }
        // The controls measured all at once (Chromium answers them in turn, without a round
        // trip each), then listed in document order.
        let measured = futures_util::future::join_all(identities.iter().take(max).map(|id| {
            let viewport = viewports[id.session].unwrap_or_default();
            measure(&sessions[id.session], id.backend, viewport)
        }))
        .await;
        for (id, m) in identities.iter().zip(measured) {
            let session = &sessions[id.session];
            // No box of positive size (zero-size, collapsed): nothing a user could act on.
            let Some((rect, in_viewport)) = m? else { continue };
            let key = NodeKey {
                generation,
                tab: tab.clone(),
                frame: id.frame.clone(),
                loader: id.loader.clone(),
                backend: id.backend,
            };
            let n = self.sealed_store().mint(b.id(), key, &id.url, &session.targets());
            let token = format!("s{n}");
            text.push_str(&format!("- {} {}", id.role, serde_json::to_string(&id.name).unwrap_or_default()));
            for s in &id.states {
                text.push_str(&format!(" [{s}]"));
            }
            text.push_str(&format!(
                " [sealed={token}] @ ({:.0}, {:.0})",
                rect.x + rect.width / 2.0,
                rect.y + rect.height / 2.0
            ));
            if !in_viewport {
                text.push_str(" [offscreen]");
            }
            text.push('\n');
            controls.push(json!({
                "token": token,
                "role": id.role,
                "name": id.name,
                "states": id.states,
                "rect": rect.json(),
                "in_viewport": in_viewport,
            }));
        }
        let cut = identities.len().saturating_sub(max);
        if cut > 0 {
            text.push_str(&format!("({cut} more sealed controls not listed: agent.sealed.max_controls is {max})\n"));
        }
        if controls.is_empty() {
            text.push_str("(no sealed controls)\n");
        }
        Ok(json!({
            "tab": tab,
            "cache_hit": hit,
            "frames": frame_count,
            "controls": controls,
            "cut": cut,
            "text": text,
        }))
    }
}

/// Whether the frames a cached enumeration read (`read`: the tab's frame set `top` first,
/// then each out-of-process frame session's, in [`super::scan::enumerate`]'s order) are still
/// those documents: each of `children` (the cached child sessions, in order) is asked for its
/// frame tree, and the concatenation must equal `read`. A frame process that navigated (a new
/// loader id), gained or lost a frame, or went away (its session detached: the call fails)
/// makes it false, so the call enumerates again. One `Page.getFrameTree` per cached child
/// session: no accessibility or piercing read, so nothing new in the per-tab counts.
async fn unchanged(top: &FrameSet, children: &[Session], read: &[(String, String)]) -> bool {
    let mut now = top.clone();
    for s in children {
        match s.call("Page.getFrameTree", json!({})).await {
            Ok(tree) => now.extend(frames(&tree).into_iter().map(|f| (f.id, f.loader))),
            Err(e) => {
                tracing::debug!("sealed cache: a frame session no longer answers ({e}): enumerating again");
                return false;
            }
        }
    }
    now == read
}
