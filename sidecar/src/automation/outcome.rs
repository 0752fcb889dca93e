//! Watching an action that takes several inputs (DESIGN §12: "a change of document or focus
//! mid-action stops the rest"): after each input, did a navigation begin in the element's
//! frame or one of its ancestors, and (for keys) is the element still focused? The first
//! change stops the action with `unknown_outcome` saying what was delivered; the rest is
//! never sent, never replayed.

use std::collections::HashMap;

use chromiumoxide::cdp::browser_protocol::page::{
    ClientNavigationReason, EventFrameRequestedNavigation, EventFrameStartedLoading,
};
use chromiumoxide::listeners::EventStream;
use chromiumoxide::Page;
use futures_util::{FutureExt, StreamExt};
use serde_json::{json, Value};

use super::error::{AutomationError, Interruption};
use super::node::Node;
use super::refs::without_fragment;
use crate::browser::session::{call, call_on};
use crate::browser::{bounded, BrowserError};

/// Whether the node (or, in a contenteditable, something inside it) has the focus of its
/// document, and its document the focus of the page.
const FOCUSED_JS: &str = r#"function(){
  const r = this.getRootNode();
  const a = r.activeElement;
  const on = a === this || (this.isContentEditable && !!a && this.contains(a));
  return on && this.ownerDocument.hasFocus();
}"#;

/// One action's watch over its element's page, from before its first input.
pub struct Watch {
    /// The element's frame and its ancestors, with their URLs (no fragment): a navigation
    /// in any of them replaces (or detaches) the element's document.
    frames: HashMap<String, String>,
    /// `Page.frameStartedLoading`: a cross-document navigation began (browser side).
    loading: EventStream<EventFrameStartedLoading>,
    /// `Page.frameRequestedNavigation`: a handler asked for a navigation (sent by the
    /// renderer before it answers the input; fragment changes are told apart by URL).
    requested: EventStream<EventFrameRequestedNavigation>,
    /// Watch the focus too (keyboard actions), once it was seen on the element.
    focus: bool,
}

/// The frame `frame` and its ancestors in a `Page.getFrameTree` answer, each with its URL
/// without fragment ("" for a frame not in the tree).
fn lineage(tree: &Value, frame: &str) -> HashMap<String, String> {
    fn walk(t: &Value, parent: Option<&str>, up: &mut HashMap<String, (Option<String>, String)>) {
        let id = t["frame"]["id"].as_str().unwrap_or("").to_string();
        let url = without_fragment(t["frame"]["url"].as_str().unwrap_or("")).to_string();
        up.insert(id.clone(), (parent.map(str::to_string), url));
        for c in t["childFrames"].as_array().into_iter().flatten() {
            walk(c, Some(&id), up);
        }
    }
    let mut up = HashMap::new();
    walk(&tree["frameTree"], None, &mut up);
    let mut out = HashMap::new();
    let mut at = Some(frame.to_string());
    while let Some(f) = at {
        if out.contains_key(&f) {
            break;
        }
        let (parent, url) = up.get(&f).cloned().unwrap_or_default();
        out.insert(f, url);
        at = parent;
    }
    out
}

impl Watch {
    /// Starts watching `node`'s page; `focus`: also whether the node keeps the focus (call
    /// [`Watch::expect_focus`] once it has it).
    pub async fn start(page: &Page, node: &Node) -> Result<Watch, BrowserError> {
        let loading = bounded("listen", page.event_listener::<EventFrameStartedLoading>()).await?;
        let requested = bounded("listen", page.event_listener::<EventFrameRequestedNavigation>()).await?;
        // The element's process's frames (a cross-site frame's navigations are caught by its
        // context going away: the focus check below fails).
        let tree = call(&node.session, "Page.getFrameTree", json!({})).await?;
        Ok(Watch { frames: lineage(&tree, &node.frame), loading, requested, focus: false })
    }

    /// From now on, focus leaving `node` stops the action: only when the node has it now
    /// (a page whose document never had the focus cannot tell it moved).
    pub async fn expect_focus(&mut self, node: &Node) -> Result<(), BrowserError> {
        self.focus = call_on(&node.session, &node.object, FOCUSED_JS, vec![]).await? == Value::Bool(true);
        Ok(())
    }

    /// Whether a navigation event for a watched frame has arrived (without waiting).
    fn navigated(&mut self) -> bool {
        let mut hit = false;
        while let Some(Some(e)) = self.loading.next().now_or_never() {
            hit |= self.frames.contains_key(e.frame_id.as_ref());
        }
        while let Some(Some(e)) = self.requested.next().now_or_never() {
            // A fragment change keeps the document; a reload of the same URL does not.
            let Some(url) = self.frames.get(e.frame_id.as_ref()) else { continue };
            hit |= *url != without_fragment(&e.url) || e.reason == ClientNavigationReason::Reload;
        }
        hit
    }

    /// After an input: what changed, if anything. One round trip to the element's page
    /// first, so that what the input's handlers started (a navigation's events are sent
    /// before the answer) has arrived; a node whose context is gone had its document
    /// replaced.
    pub async fn changed(&mut self, node: &Node) -> Result<Option<Interruption>, AutomationError> {
        let focused = call_on(&node.session, &node.object, FOCUSED_JS, vec![]).await;
        if self.navigated() {
            return Ok(Some(Interruption::Navigated));
        }
        match focused {
            Ok(v) if self.focus && v != Value::Bool(true) => Ok(Some(Interruption::FocusMoved)),
            Ok(_) => Ok(None),
            Err(BrowserError::Cdp(_)) => Ok(Some(Interruption::Navigated)),
            Err(e) => Err(e.into()),
        }
    }
}

/// The sentence's end for an interruption: what happened to `name`.
pub fn what_happened(why: Interruption, name: &str) -> String {
    match why {
        Interruption::Navigated => format!("then a navigation began in {name}'s page (its document is being replaced)"),
        Interruption::FocusMoved => format!("then the focus moved off {name}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lineage_is_the_frame_and_its_ancestors() {
        let tree = json!({"frameTree": {"frame": {"id": "M", "url": "http://m/#top"}, "childFrames": [
            {"frame": {"id": "A"}, "childFrames": [{"frame": {"id": "A1"}}]},
            {"frame": {"id": "B"}},
        ]}});
        let ids = |l: &HashMap<String, String>| {
            let mut k: Vec<String> = l.keys().cloned().collect();
            k.sort();
            k
        };
        let l = lineage(&tree, "A1");
        assert_eq!(ids(&l), ["A", "A1", "M"]);
        assert_eq!(l["M"], "http://m/", "URLs without fragment");
        assert_eq!(ids(&lineage(&tree, "M")), ["M"]);
        assert_eq!(ids(&lineage(&tree, "gone")), ["gone"], "a detached frame: itself only");
    }
}
