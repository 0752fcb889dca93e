//! One sealed enumeration of a tab: which interactive accessibility nodes live under a
//! closed shadow root, in every frame (same-process frames through the tab's session,
//! out-of-process ones through a child session each). One `DOM.getDocument` with `pierce`
//! per frame process tells which elements are under a closed root; one
//! `Accessibility.getPartialAXTree` per such element (sent together, [`AX_READS_AT_ONCE`] in
//! flight) gives their role, name and states.
//! The accessibility value is dropped here, at the boundary: a sealed result never carries a
//! value or a text body.

use std::collections::HashMap;

use futures_util::StreamExt;
use serde_json::{json, Value};

use crate::automation::frames::Rect;
use crate::automation::snapshot::frames;
use crate::automation::AutomationError;
use crate::browser::session::Session;
use crate::browser::BrowserError;

/// Roles a user acts on that a sealed answer lists.
const INTERACTIVE: &[&str] = &[
    "button",
    "link",
    "textbox",
    "searchbox",
    "combobox",
    "checkbox",
    "radio",
    "switch",
    "tab",
    "menuitem",
    "menuitemcheckbox",
    "menuitemradio",
    "option",
    "slider",
    "spinbutton",
    "treeitem",
];

/// Boolean accessibility properties shown as states (in this order).
const STATES: &[&str] = &["disabled", "focused", "required", "checked", "pressed", "expanded", "selected", "readonly"];

/// Partial accessibility reads in flight at once during a scan.
const AX_READS_AT_ONCE: usize = 64;

/// Most nodes of one piercing document read (a page past it is refused as too large rather
/// than read in part).
pub const MAX_DOM_NODES: usize = 200_000;

/// One interactive node under a closed shadow root: who it is, never what it holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Identity {
    /// Index of its frame process's session in [`Scan::sessions`].
    pub session: usize,
    /// Its frame.
    pub frame: String,
    /// Its frame's document (`loaderId`) at the scan.
    pub loader: String,
    /// Its frame's URL at the scan, without fragment.
    pub url: String,
    /// Its `backendNodeId` (of its session).
    pub backend: i64,
    /// Accessibility role.
    pub role: String,
    /// Accessible name (a label; never the value).
    pub name: String,
    /// States that hold (`disabled`, `focused`…).
    pub states: Vec<&'static str>,
}

/// What one enumeration found.
pub struct Scan {
    /// The sessions read: the tab's first, then each out-of-process frame's.
    pub sessions: Vec<Session>,
    /// The frames read, `(frame id, loader id)`, in reading order.
    pub frames: Vec<(String, String)>,
    /// The sealed controls, in document order per frame.
    pub controls: Vec<Identity>,
}

/// A node of a piercing `DOM.getDocument` answer, with what the walk knows of its place.
struct At<'a> {
    node: &'a Value,
    frame: String,
    closed: bool,
}

/// Reads frame process `session` (frame id → (loader, url) from its frame tree): the closed
/// nodes of each of its frames, and the out-of-process frame owners `(frame id, owner)`.
async fn closed_nodes(
    session: &Session,
) -> Result<
    (HashMap<String, HashMap<i64, usize>>, Vec<(String, i64)>, Vec<crate::automation::snapshot::Frame>),
    AutomationError,
> {
    let tree = frames(&session.call("Page.getFrameTree", json!({})).await?);
    let root_frame = tree.first().map(|f| f.id.clone()).unwrap_or_default();
    let doc = session.call("DOM.getDocument", json!({"depth": -1, "pierce": true})).await?;
    // Closed nodes by frame, each with its place in document (flat-tree pre-)order.
    let mut closed: HashMap<String, HashMap<i64, usize>> = HashMap::new();
    let mut oopifs = Vec::new();
    let mut stack = vec![At { node: &doc["root"], frame: root_frame, closed: false }];
    let mut seen = 0usize;
    while let Some(At { node, frame, closed: inside }) = stack.pop() {
        seen += 1;
        if seen > MAX_DOM_NODES {
            return Err(AutomationError::BadRequest(format!(
                "the page has over {MAX_DOM_NODES} DOM nodes in one frame process; a sealed scan reads no part of it"
            )));
        }
        // Elements only: what the accessibility tree can name a control.
        if inside && node["nodeType"] == 1 {
            if let Some(b) = node["backendNodeId"].as_i64() {
                closed.entry(frame.clone()).or_default().insert(b, seen);
            }
        }
        // Pushed last first, so that they pop in document order: a host's shadow trees
        // (what renders in its place) before its light children.
        for c in node["children"].as_array().into_iter().flatten().rev() {
            stack.push(At { node: c, frame: frame.clone(), closed: inside });
        }
        for r in node["shadowRoots"].as_array().into_iter().flatten().rev() {
            let is_closed = inside || r["shadowRootType"] == "closed";
            stack.push(At { node: r, frame: frame.clone(), closed: is_closed });
        }
        let owner_frame = node["frameId"].as_str().map(str::to_string);
        match (&node["contentDocument"], owner_frame) {
            // A same-process frame: its document is here (a closed root's frame is not
            // itself closed: it is a document of its own).
            (d, Some(f)) if d.is_object() => stack.push(At { node: d, frame: f, closed: false }),
            // Chromium also puts `frameId` on a document's own element: only a frame owner
            // without its document here is an out-of-process frame.
            (_, Some(f)) if node["nodeType"] == 1 && matches!(node["nodeName"].as_str(), Some("IFRAME" | "FRAME")) => {
                if let Some(b) = node["backendNodeId"].as_i64() {
                    oopifs.push((f, b));
                }
            }
            _ => {}
        }
    }
    // A frame of this process is never a child process's.
    oopifs.retain(|(f, _)| !tree.iter().any(|t| &t.id == f));
    Ok((closed, oopifs, tree))
}

/// The interactive, not ignored accessibility nodes of the elements `closed` (of one frame
/// of `session`), in document order.
async fn ax_controls(session: &Session, closed: &HashMap<i64, usize>) -> Result<Vec<AxFound>, BrowserError> {
    // One partial read per element under a closed root, sent together: the frame's whole
    // tree (`getFullAXTree`) is built and serialised for every element of the page, most of
    // a scan's time on a large page, to use a few hundred nodes of it.
    let reads = futures_util::stream::iter(closed.keys().copied().map(|b| async move {
        match session.call("Accessibility.getPartialAXTree", json!({"backendNodeId": b, "fetchRelatives": false})).await
        {
            Ok(v) => Ok(v["nodes"].as_array().cloned().unwrap_or_default()),
            // Gone since the DOM read: nothing to list.
            Err(BrowserError::Cdp(_)) => Ok(Vec::new()),
            Err(e) => Err(e),
        }
    }))
    .buffer_unordered(AX_READS_AT_ONCE)
    .collect::<Vec<_>>()
    .await;
    let mut nodes = Vec::new();
    for r in reads {
        nodes.extend(r?);
    }
    Ok(pick(&json!({"nodes": nodes}), closed))
}

/// One accessibility node picked: backend, role, name, states.
#[derive(Debug, Clone, PartialEq)]
pub struct AxFound {
    /// Its DOM node.
    pub backend: i64,
    /// Role.
    pub role: String,
    /// Name.
    pub name: String,
    /// States that hold.
    pub states: Vec<&'static str>,
}

/// The interactive nodes of a `getFullAXTree` answer whose DOM node is in `closed` (text
/// nodes, ignored nodes and other roles left out; the value never read), in document order
/// (`closed` gives each node's place; the accessibility tree's own order is not the page's).
pub fn pick(tree: &Value, closed: &HashMap<i64, usize>) -> Vec<AxFound> {
    let mut out = Vec::new();
    for n in tree["nodes"].as_array().into_iter().flatten() {
        if n["ignored"] == true {
            continue;
        }
        let Some(backend) = n["backendDOMNodeId"].as_i64().filter(|b| closed.contains_key(b)) else { continue };
        let role = n["role"]["value"].as_str().unwrap_or("");
        if !INTERACTIVE.contains(&role) {
            continue;
        }
        let mut states = Vec::new();
        for s in STATES {
            let on = n["properties"].as_array().into_iter().flatten().any(|p| {
                p["name"] == *s && matches!(&p["value"]["value"], Value::Bool(true))
                    || (p["name"] == *s && p["value"]["value"] == "true")
            });
            if on {
                states.push(*s);
            }
        }
        let name: String = n["name"]["value"].as_str().unwrap_or("").chars().take(100).collect();
        out.push(AxFound { backend, role: role.to_string(), name, states });
    }
    out.sort_by_key(|a| closed.get(&a.backend).copied().unwrap_or(usize::MAX));
    out.dedup_by_key(|a| a.backend);
    out
}

/// The refusal of a page with more than `max_frames` frames.
pub fn frames_limit(max_frames: usize) -> AutomationError {
    AutomationError::PolicyRefused {
        code: "frames_limit",
        key: "agent.sealed.max_frames",
        message: format!(
            "the page has more than {max_frames} frames, and a sealed scan reads all or none; agent.sealed.max_frames allows more"
        ),
    }
}

/// Enumerates the tab of `top`: its frame process, then each out-of-process frame under it
/// (recursively), at most `max_frames` frames (more → `frames_limit`).
pub async fn enumerate(top: &Session, max_frames: usize) -> Result<Scan, AutomationError> {
    let mut scan = Scan { sessions: vec![top.clone()], frames: Vec::new(), controls: Vec::new() };
    let mut i = 0;
    while i < scan.sessions.len() {
        let session = scan.sessions[i].clone();
        let (closed, oopifs, tree) = closed_nodes(&session).await?;
        if scan.frames.len() + tree.len() > max_frames {
            return Err(frames_limit(max_frames));
        }
        for f in &tree {
            scan.frames.push((f.id.clone(), f.loader.clone()));
            let Some(set) = closed.get(&f.id).filter(|s| !s.is_empty()) else { continue };
            for a in ax_controls(&session, set).await? {
                scan.controls.push(Identity {
                    session: i,
                    frame: f.id.clone(),
                    loader: f.loader.clone(),
                    url: crate::automation::refs::without_fragment(&f.url).to_string(),
                    backend: a.backend,
                    role: a.role,
                    name: a.name,
                    states: a.states,
                });
            }
        }
        for (frame, owner) in oopifs {
            match session.attach(&frame, owner).await {
                Ok(child) => scan.sessions.push(child),
                // A frame not loaded yet, or going away: it has nothing to list.
                Err(e) => tracing::debug!("sealed scan: attach to frame {frame}: {e}"),
            }
        }
        i += 1;
    }
    Ok(scan)
}

/// The rectangle of `backend` (a node of `session`) in top-level viewport CSS px, and
/// whether any of it is in the viewport; `None` when it has no box of positive size.
/// `viewport` is `session`'s layout viewport (width, height) in CSS px
/// ([`Session::viewport`]), read once per answer by the caller rather than once per node:
/// it is the same for every node of the session.
pub async fn measure(
    session: &Session,
    backend: i64,
    viewport: (f64, f64),
) -> Result<Option<(Rect, bool)>, BrowserError> {
    let quads = match session.call("DOM.getContentQuads", json!({"backendNodeId": backend})).await {
        Ok(v) => v["quads"].as_array().cloned().unwrap_or_default(),
        Err(BrowserError::Cdp(_)) => return Ok(None),
        Err(e) => return Err(e),
    };
    let Some(p) = quads
        .first()
        .map(|q| q.as_array().into_iter().flatten().filter_map(Value::as_f64).collect::<Vec<f64>>())
        .filter(|p| p.len() == 8)
    else {
        return Ok(None);
    };
    let xs = [p[0], p[2], p[4], p[6]];
    let ys = [p[1], p[3], p[5], p[7]];
    let x0 = xs.iter().cloned().fold(f64::MAX, f64::min);
    let x1 = xs.iter().cloned().fold(f64::MIN, f64::max);
    let y0 = ys.iter().cloned().fold(f64::MAX, f64::min);
    let y1 = ys.iter().cloned().fold(f64::MIN, f64::max);
    let r = Rect { x: x0, y: y0, width: x1 - x0, height: y1 - y0 };
    if r.width < 1.0 || r.height < 1.0 {
        return Ok(None);
    }
    let (vw, vh) = viewport;
    let in_own = r.clip(Rect { x: 0.0, y: 0.0, width: vw, height: vh });
    if session.owner().is_none() {
        return Ok(Some((r, in_own.is_some())));
    }
    // Out-of-process: what shows of it, moved to the top level (clipped by each owner).
    Ok(match in_own {
        Some(c) => session.to_top(c).await?.map(|t| (t, true)),
        None => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_interactive_closed_nodes_are_picked_and_values_are_never_read() {
        let tree = json!({"nodes": [
            {"nodeId": "1", "ignored": false, "role": {"value": "textbox"}, "name": {"value": "User"},
             "value": {"value": "alice"}, "backendDOMNodeId": 10,
             "properties": [{"name": "focused", "value": {"type": "booleanOrUndefined", "value": true}},
                            {"name": "required", "value": {"type": "boolean", "value": false}}]},
            {"nodeId": "2", "ignored": false, "role": {"value": "StaticText"}, "name": {"value": "User"}, "backendDOMNodeId": 11},
            {"nodeId": "3", "ignored": true, "role": {"value": "button"}, "name": {"value": "Hidden"}, "backendDOMNodeId": 12},
            {"nodeId": "4", "ignored": false, "role": {"value": "button"}, "name": {"value": "Open"}, "backendDOMNodeId": 13},
            {"nodeId": "5", "ignored": false, "role": {"value": "button"}, "name": {"value": "Off"}, "backendDOMNodeId": 14,
             "properties": [{"name": "disabled", "value": {"type": "boolean", "value": true}}]},
        ]});
        // Document order: 14 comes before 10 in the page, whatever the tree's order.
        let closed: HashMap<i64, usize> = [(10, 5), (11, 6), (12, 7), (14, 2)].into_iter().collect();
        let got = pick(&tree, &closed);
        assert_eq!(
            got,
            vec![
                AxFound { backend: 14, role: "button".into(), name: "Off".into(), states: vec!["disabled"] },
                AxFound { backend: 10, role: "textbox".into(), name: "User".into(), states: vec!["focused"] },
            ],
            "the open button (13) is not sealed; text and ignored nodes are left out"
        );
    }
}
