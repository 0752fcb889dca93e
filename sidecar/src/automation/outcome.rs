//! Watching an action that takes several inputs (DESIGN §12: "a change of document or focus
//! mid-action stops the rest"): after each input, did a navigation begin in the element's
//! frame or one of its ancestors, and (for keys) is the element still focused? The first
//! change stops the action with `unknown_outcome` saying what was delivered; the rest is
//! never sent, never replayed.

use std::collections::{HashMap, HashSet};

use chromiumoxide::cdp::browser_protocol::page::{EventFrameRequestedNavigation, EventFrameStartedLoading};
use chromiumoxide::listeners::EventStream;
use chromiumoxide::Page;
use futures_util::{FutureExt, StreamExt};
use serde_json::{json, Value};

use super::cdp::{call, call_on};
use super::error::{AutomationError, Interruption};
use super::node::Node;
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
    /// The element's frame and its ancestors: a navigation in any of them replaces (or
    /// detaches) the element's document.
    frames: HashSet<String>,
    loading: EventStream<EventFrameStartedLoading>,
    requested: EventStream<EventFrameRequestedNavigation>,
    /// Watch the focus too (keyboard actions), once it was seen on the element.
    focus: bool,
}

/// The frame `frame` and its ancestors in a `Page.getFrameTree` answer.
fn lineage(tree: &Value, frame: &str) -> HashSet<String> {
    fn walk(t: &Value, parent: Option<&str>, up: &mut HashMap<String, Option<String>>) {
        let id = t["frame"]["id"].as_str().unwrap_or("").to_string();
        up.insert(id.clone(), parent.map(str::to_string));
        for c in t["childFrames"].as_array().into_iter().flatten() {
            walk(c, Some(&id), up);
        }
    }
    let mut up = HashMap::new();
    walk(&tree["frameTree"], None, &mut up);
    let mut out = HashSet::new();
    let mut at = Some(frame.to_string());
    while let Some(f) = at {
        if !out.insert(f.clone()) {
            break;
        }
        at = up.get(&f).cloned().flatten();
    }
    out
}

impl Watch {
    /// Starts watching `node`'s page; `focus`: also whether the node keeps the focus (call
    /// [`Watch::expect_focus`] once it has it).
    pub async fn start(page: &Page, node: &Node) -> Result<Watch, BrowserError> {
        let loading = bounded("listen", page.event_listener::<EventFrameStartedLoading>()).await?;
        let requested = bounded("listen", page.event_listener::<EventFrameRequestedNavigation>()).await?;
        let tree = call(page, "Page.getFrameTree", json!({})).await?;
        Ok(Watch { frames: lineage(&tree, &node.frame), loading, requested, focus: false })
    }

    /// From now on, focus leaving `node` stops the action: only when the node has it now
    /// (a page whose document never had the focus cannot tell it moved).
    pub async fn expect_focus(&mut self, page: &Page, node: &Node) -> Result<(), BrowserError> {
        self.focus = call_on(page, &node.object, FOCUSED_JS, vec![]).await? == Value::Bool(true);
        Ok(())
    }

    /// Whether a navigation event for a watched frame has arrived (without waiting).
    fn navigated(&mut self) -> bool {
        let mut hit = false;
        while let Some(Some(e)) = self.loading.next().now_or_never() {
            hit |= self.frames.contains(e.frame_id.as_ref());
        }
        while let Some(Some(e)) = self.requested.next().now_or_never() {
            hit |= self.frames.contains(e.frame_id.as_ref());
        }
        hit
    }

    /// After an input: what changed, if anything. One round trip to the element's page
    /// first, so that what the input's handlers started (a navigation's events are sent
    /// before the answer) has arrived; a node whose context is gone had its document
    /// replaced.
    pub async fn changed(&mut self, page: &Page, node: &Node) -> Result<Option<Interruption>, AutomationError> {
        let focused = call_on(page, &node.object, FOCUSED_JS, vec![]).await;
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
        let tree = json!({"frameTree": {"frame": {"id": "M"}, "childFrames": [
            {"frame": {"id": "A"}, "childFrames": [{"frame": {"id": "A1"}}]},
            {"frame": {"id": "B"}},
        ]}});
        let l = lineage(&tree, "A1");
        assert_eq!(l, HashSet::from(["A1".to_string(), "A".into(), "M".into()]));
        assert_eq!(lineage(&tree, "M"), HashSet::from(["M".to_string()]));
        assert_eq!(lineage(&tree, "gone"), HashSet::from(["gone".to_string()]), "a detached frame: itself only");
    }
}
