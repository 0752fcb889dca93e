//! `snapshot`: the page as an outline of roles, names and states, with refs on the elements
//! that can be acted on (DESIGN §12). Sources: the accessibility tree of each frame
//! (`Accessibility.getFullAXTree`), fused with DOM facts from one
//! `DOMSnapshot.captureSnapshot` per frame process ([`super::dom`]) joined by
//! `backendNodeId`. Out-of-process (cross-site) frames are read through a child session on
//! their target ([`super::frames`]) and shown in place, under their `<iframe>`.
//!
//! Rules: an element gets a ref when it has an actionable role (or is a visible clickable
//! element the accessibility tree ignores or calls generic) and is visible, enabled, not
//! inert and not inside a closed shadow root. Closed shadow roots are shown read-only.
//! Password and payment-card values are shown as `[filled]`, never as text.

use std::collections::{HashMap, HashSet};
use std::time::Instant;

use chromiumoxide::Page;
use serde_json::Value;

use super::dom::{self, DomFacts, Facts};
use super::frames::MAX_CHILD_SESSIONS;
use crate::browser::session::call;
use crate::browser::session::Session;
use crate::browser::BrowserError;

/// Default output budget of a snapshot, in bytes.
pub const DEFAULT_MAX_BYTES: usize = 16 * 1024;
/// Allowed `max_bytes`.
pub const MAX_BYTES_RANGE: std::ops::RangeInclusive<usize> = 1024..=1024 * 1024;
/// Longest name shown, in characters.
const MAX_NAME_CHARS: usize = 100;
/// Most descendants looked at to tell a clickable container from a clickable control.
const MAX_CONTAINER_SCAN: usize = 2000;

/// Roles a user acts on: each visible, enabled one gets a ref.
const ACTIONABLE: &[&str] = &[
    "button",
    "link",
    "textbox",
    "searchbox",
    "checkbox",
    "radio",
    "combobox",
    "listbox",
    "option",
    "menuitem",
    "menuitemcheckbox",
    "menuitemradio",
    "tab",
    "switch",
    "slider",
    "spinbutton",
    "treeitem",
    "ListBoxOption",
    "PopUpButton",
];
/// Roles whose value is shown (and whose children, the editor's own text, are not).
const TEXT_ENTRY: &[&str] = &["textbox", "searchbox", "spinbutton"];
/// Roles that only group: shown through their children.
const GENERIC: &[&str] = &["generic", "none", "GenericContainer", "LineBreak", "InlineTextBox", ""];

/// One frame of the tab, from `Page.getFrameTree`.
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    /// Frame id.
    pub id: String,
    /// Its document's loader id.
    pub loader: String,
    /// Its URL, without fragment.
    pub url: String,
    /// The out-of-process frame targets from the tab down to its process, outermost first
    /// (empty for the tab's own process).
    pub targets: Vec<String>,
    /// Its process's index in [`Captured::dom`].
    pub process: usize,
}

/// The frames of a `Page.getFrameTree` answer, its root first (`targets` empty, `process`
/// 0: the caller sets them).
pub fn frames(tree: &Value) -> Vec<Frame> {
    fn walk(t: &Value, out: &mut Vec<Frame>) {
        let f = &t["frame"];
        out.push(Frame {
            id: f["id"].as_str().unwrap_or("").to_string(),
            loader: f["loaderId"].as_str().unwrap_or("").to_string(),
            url: f["url"].as_str().unwrap_or("").to_string(),
            targets: Vec::new(),
            process: 0,
        });
        for c in t["childFrames"].as_array().into_iter().flatten() {
            walk(c, out);
        }
    }
    let mut out = Vec::new();
    walk(&tree["frameTree"], &mut out);
    out
}

/// One node of an accessibility tree: what the outline reads of it (the answer's other
/// fields, such as the name's sources, are dropped when it is parsed).
#[derive(Debug, Default)]
pub struct AxNode {
    /// `role.value` ("" when none).
    role: String,
    /// `name.value` ("" when none).
    name: String,
    /// `value.value` when it is a string, else "".
    value: String,
    /// The tree ignores the node (shown through its children).
    ignored: bool,
    /// `backendDOMNodeId`.
    backend: Option<i64>,
    /// The parent's index in [`AxTree::nodes`].
    parent: Option<usize>,
    /// The children's indices, in order (ids the answer does not hold are left out).
    children: Vec<usize>,
    /// `properties`: each name with its `value.value` (null when it has none).
    properties: Vec<(String, Value)>,
}

impl AxNode {
    /// The value of property `name`, if the node has it.
    fn prop(&self, name: &str) -> Option<&Value> {
        self.properties.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }
}

/// The accessibility tree of one frame: its nodes, and the root's index.
#[derive(Debug, Default)]
pub struct AxTree {
    nodes: Vec<AxNode>,
    root: Option<usize>,
}

impl AxTree {
    /// Parses a `Accessibility.getFullAXTree` answer, taking the strings it keeps out of it
    /// rather than copying them (on a page of 5,000 elements the answer holds ~11,000 nodes,
    /// ~5 MB of JSON; what is left of it is the caller's to drop).
    pub fn parse(v: &mut Value) -> AxTree {
        let Some(Value::Array(raw)) = v.get_mut("nodes") else { return AxTree::default() };
        let index: HashMap<&str, usize> = raw.iter().enumerate().map(|(i, n)| (s(&n["nodeId"]), i)).collect();
        let mut nodes = Vec::with_capacity(raw.len());
        let mut root = None;
        for (i, n) in raw.iter().enumerate() {
            let parent_id = n.get("parentId").filter(|p| !p.is_null());
            if root.is_none() && parent_id.is_none() {
                root = Some(i);
            }
            nodes.push(AxNode {
                parent: parent_id.and_then(Value::as_str).and_then(|p| index.get(p).copied()),
                children: n["childIds"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|c| index.get(s(c)).copied())
                    .collect(),
                ..AxNode::default()
            });
        }
        drop(index);
        for (n, raw) in nodes.iter_mut().zip(raw.iter_mut()) {
            n.role = take_str(raw.pointer_mut("/role/value"));
            n.name = take_str(raw.pointer_mut("/name/value"));
            n.value = take_str(raw.pointer_mut("/value/value"));
            n.ignored = raw["ignored"].as_bool().unwrap_or(false);
            n.backend = raw["backendDOMNodeId"].as_i64();
            if let Some(Value::Array(props)) = raw.get_mut("properties") {
                n.properties = props
                    .iter_mut()
                    .map(|p| {
                        let value = p.pointer_mut("/value/value").map(Value::take).unwrap_or(Value::Null);
                        (take_str(p.get_mut("name")), value)
                    })
                    .collect();
            }
        }
        AxTree { nodes, root }
    }

    /// The index of the node of DOM node `backend`.
    fn find(&self, backend: i64) -> Option<usize> {
        self.nodes.iter().position(|n| n.backend == Some(backend))
    }
}

/// What one capture read: frames, DOM facts per frame process, and each frame's
/// accessibility tree.
pub struct Captured {
    /// Frames, the main frame first, then its process's other frames, then each
    /// out-of-process frame's.
    pub frames: Vec<Frame>,
    /// DOM facts of each frame process (the tab's first): `backendNodeId`s are per process.
    pub dom: Vec<DomFacts>,
    /// Accessibility trees by frame id (frames whose tree could not be read are missing).
    pub ax: HashMap<String, AxTree>,
}

impl Captured {
    /// The DOM facts of node `backend` of frame `frame`.
    fn facts(&self, frame: &str, backend: i64) -> Option<&Facts> {
        let f = self.frames.iter().find(|f| f.id == frame)?;
        self.dom.get(f.process)?.nodes.get(&backend)
    }
}

/// What one frame process shows: its frames, its DOM facts and its frames' accessibility
/// trees. The calls go out together (the frame tree, the DOM snapshot and the root frame's
/// accessibility tree at once, the process's other frames' trees as soon as the frame tree
/// names them), each answer parsed as it arrives while Chromium computes the next: on a
/// large page the accessibility tree is most of the time, all of it Chromium's.
async fn read(
    session: &Session,
    process: usize,
) -> Result<(Vec<Frame>, DomFacts, HashMap<String, AxTree>), BrowserError> {
    let started = Instant::now();
    let ms = |t: Instant| t.elapsed().as_millis();
    let frames_and_children = async {
        let mut frames = frames(&call(session, "Page.getFrameTree", serde_json::json!({})).await?);
        let targets = session.targets();
        for f in &mut frames {
            f.targets = targets.clone();
            f.process = process;
        }
        let children = futures_util::future::join_all(frames.iter().skip(1).map(|f| async move {
            let t = Instant::now();
            let tree = call(session, "Accessibility.getFullAXTree", serde_json::json!({"frameId": f.id})).await;
            let call_ms = ms(t);
            // A child frame may be going away: its tree is then missing.
            tree.map(|v| (f.id.clone(), timed_ax(v, call_ms)))
                .map_err(|e| tracing::debug!("ax tree of frame {}: {e}", f.id))
                .ok()
        }))
        .await;
        Ok::<_, BrowserError>((frames, children.into_iter().flatten().collect::<Vec<_>>()))
    };
    let dom = async {
        let t = Instant::now();
        let snap =
            call(session, "DOMSnapshot.captureSnapshot", serde_json::json!({"computedStyles": dom::STYLES})).await?;
        let call_ms = ms(t);
        let t = Instant::now();
        let facts = dom::parse(&snap);
        drop(snap);
        tracing::debug!("snapshot: DOMSnapshot.captureSnapshot {call_ms} ms, parsed in {} ms", ms(t));
        Ok::<_, BrowserError>(facts)
    };
    // The process's root frame must be readable.
    let root = async {
        let t = Instant::now();
        let v = call(session, "Accessibility.getFullAXTree", serde_json::json!({})).await?;
        Ok::<_, BrowserError>(timed_ax(v, ms(t)))
    };
    let (frames_and_children, dom, root) = tokio::join!(frames_and_children, dom, root);
    let ((frames, children), dom, root) = (frames_and_children?, dom?, root?);
    let mut ax: HashMap<String, AxTree> = children.into_iter().collect();
    if let Some(main) = frames.first() {
        ax.insert(main.id.clone(), root);
    }
    // Quiet by default: the renderer keeps no accessibility tree up to date between asks.
    // Not waited for: nothing here depends on it, and the next ask enables it again.
    let quiet = session.clone();
    tokio::spawn(async move {
        if let Err(e) = call(&quiet, "Accessibility.disable", serde_json::json!({})).await {
            tracing::debug!("Accessibility.disable: {e}");
        }
    });
    tracing::debug!("snapshot: frame process {process} read in {} ms ({} frames)", ms(started), frames.len());
    Ok((frames, dom, ax))
}

/// Parses an `Accessibility.getFullAXTree` answer that took `call_ms` to come, logging both
/// times (where a slow snapshot spends its time). The rest of the answer (the names'
/// sources, most of its bytes) is freed on a blocking thread, off the snapshot's path.
fn timed_ax(mut v: Value, call_ms: u128) -> AxTree {
    let t = Instant::now();
    let tree = AxTree::parse(&mut v);
    tokio::task::spawn_blocking(move || drop(v));
    tracing::debug!(
        "snapshot: Accessibility.getFullAXTree {call_ms} ms ({} nodes), parsed in {} ms",
        tree.nodes.len(),
        t.elapsed().as_millis()
    );
    tree
}

/// Reads the tab's frame process, then each out-of-process frame under a frame owner it
/// shows, not inert (attached to its target, at most [`MAX_CHILD_SESSIONS`]), recursively. A frame
/// owner whose frame was read gets it as its `child_frame`.
pub async fn capture(page: &Page) -> Result<Captured, BrowserError> {
    let top = Session::from(page);
    let (frames, dom, ax) = read(&top, 0).await?;
    let mut c = Captured { frames, dom: vec![dom], ax };
    let mut sessions = vec![top];
    let mut i = 0;
    while i < sessions.len() {
        let mut owners: Vec<i64> = c.dom[i]
            .nodes
            .iter()
            // A frame the page does not show (or makes inert) offers nothing to act on.
            .filter(|(_, f)| {
                matches!(f.tag.as_str(), "iframe" | "frame") && f.child_frame.is_none() && f.visible && !f.inert
            })
            .map(|(b, _)| *b)
            .collect();
        owners.sort_unstable();
        for owner in owners {
            if sessions.len() > MAX_CHILD_SESSIONS {
                break;
            }
            let d = call(&sessions[i], "DOM.describeNode", serde_json::json!({"backendNodeId": owner})).await;
            let Some(frame) = d.ok().and_then(|d| d["node"]["frameId"].as_str().map(str::to_string)) else {
                continue;
            };
            // A frame with no target of its own (not loaded yet, or gone) stays not included.
            let child = match sessions[i].attach(&frame, owner).await {
                Ok(s) => s,
                Err(e) => {
                    tracing::debug!("attach to frame {frame}: {e}");
                    continue;
                }
            };
            let process = sessions.len();
            match read(&child, process).await {
                Ok((frames, dom, ax)) => {
                    c.frames.extend(frames);
                    c.dom.push(dom);
                    c.ax.extend(ax);
                    if let Some(f) = c.dom[i].nodes.get_mut(&owner) {
                        f.child_frame = Some(frame);
                    }
                    sessions.push(child);
                }
                Err(e) => tracing::debug!("frame {frame}: {e}"),
            }
        }
        i += 1;
    }
    Ok(c)
}

/// One line of the outline.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    /// Nesting depth (0 at the top).
    pub depth: usize,
    /// The line without indentation, e.g. `button "Save" [ref=e3]`.
    pub text: String,
    /// True for controls (with or without a ref): what `-i` lists.
    pub control: bool,
    /// True if the line carries a ref.
    pub has_ref: bool,
}

/// Builds the outline of `c`, minting refs with `mint(frame id, backendNodeId)` (which returns
/// the ref number, or `None` when the frame is unknown).
pub fn outline(c: &Captured, mint: &mut dyn FnMut(&str, i64) -> Option<u64>) -> Vec<Line> {
    let mut w = Walker { c, mint, out: Vec::new(), visited: HashSet::new() };
    if let Some(main) = c.frames.first() {
        w.frame(&main.id, 0);
    }
    w.out
}

/// The outline of one element and what is inside it: node `backend` of frame `frame` at depth
/// 0. `None` when the element is not in its frame's accessibility tree (not rendered).
pub fn outline_of(
    c: &Captured,
    frame: &str,
    backend: i64,
    mint: &mut dyn FnMut(&str, i64) -> Option<u64>,
) -> Option<Vec<Line>> {
    let tree = c.ax.get(frame)?;
    let id = tree.find(backend)?;
    let mut w = Walker { c, mint, out: Vec::new(), visited: HashSet::new() };
    w.visited.insert(frame.to_string());
    w.node(frame, tree, id, 0, "");
    Some(w.out)
}

struct Walker<'a> {
    c: &'a Captured,
    mint: &'a mut dyn FnMut(&str, i64) -> Option<u64>,
    out: Vec<Line>,
    visited: HashSet<String>,
}

fn s(v: &Value) -> &str {
    v.as_str().unwrap_or("")
}

/// The string at `v`, taken out of it ("" when it is missing or not a string).
fn take_str(v: Option<&mut Value>) -> String {
    match v.map(Value::take) {
        Some(Value::String(s)) => s,
        _ => String::new(),
    }
}

fn clip(t: &str, n: usize) -> String {
    let t = t.split_whitespace().collect::<Vec<_>>().join(" ");
    if t.chars().count() <= n {
        t
    } else {
        format!("{}…", t.chars().take(n - 1).collect::<String>())
    }
}

impl<'a> Walker<'a> {
    fn frame(&mut self, frame: &str, depth: usize) {
        if !self.visited.insert(frame.to_string()) {
            return;
        }
        let c: &'a Captured = self.c;
        let Some(tree) = c.ax.get(frame) else { return };
        let Some(root) = tree.root else { return };
        self.node(frame, tree, root, depth, "");
    }

    /// The text of node `id`'s static-text descendants, for an element the AX tree gives no
    /// name.
    fn text_of(tree: &AxTree, id: usize, out: &mut String) {
        let Some(n) = tree.nodes.get(id) else { return };
        if n.role == "StaticText" {
            out.push(' ');
            out.push_str(&n.name);
        }
        for &c in &n.children {
            if out.len() > 4 * MAX_NAME_CHARS {
                return;
            }
            Self::text_of(tree, c, out);
        }
    }

    /// True if a descendant of node `id` has an actionable role (looked at: the first
    /// [`MAX_CONTAINER_SCAN`] nodes).
    fn has_control_inside(tree: &AxTree, id: usize, seen: &mut usize) -> bool {
        let Some(n) = tree.nodes.get(id) else { return false };
        n.children.iter().any(|&c| {
            *seen += 1;
            if *seen > MAX_CONTAINER_SCAN {
                return false;
            }
            ACTIONABLE.contains(&tree.nodes[c].role.as_str()) || Self::has_control_inside(tree, c, seen)
        })
    }

    fn node(&mut self, frame: &str, tree: &'a AxTree, id: usize, depth: usize, parent_name: &str) {
        let c: &'a Captured = self.c;
        let Some(n) = tree.nodes.get(id) else { return };
        let role = n.role.as_str();
        let name = clip(&n.name, MAX_NAME_CHARS);
        let facts: Option<&'a Facts> = n.backend.and_then(|b| c.facts(frame, b));
        let disabled = n.prop("disabled").and_then(Value::as_bool).unwrap_or(false);
        let usable = |f: &Facts| f.visible && !f.inert && !f.in_closed_shadow && !disabled;
        if role == "StaticText" {
            if !name.is_empty() && name != parent_name {
                self.out.push(Line { depth, text: format!("text: {}", quote(&name)), control: false, has_ref: false });
            }
            return;
        }
        // A contenteditable's editing host takes text like a textbox (the tree calls it
        // generic, its descendants editable too).
        let rich = |n: &AxNode| n.prop("editable").and_then(Value::as_str) == Some("richtext");
        let parent = n.parent.and_then(|p| tree.nodes.get(p));
        let editing_host = !n.ignored && GENERIC.contains(&role) && rich(n) && !parent.is_some_and(rich);
        let role = if editing_host { "textbox" } else { role };
        let generic = n.ignored || GENERIC.contains(&role);
        // A container that only delegates its children's clicks (React listens on its root)
        // is not itself a control: its controls are.
        let dom_clickable = generic
            && facts.is_some_and(|f| f.clickable && usable(f) && !f.tag.starts_with('#'))
            && !matches!(facts.map(|f| f.tag.as_str()), Some("html" | "body" | "label"))
            && !Self::has_control_inside(tree, id, &mut 0);
        let mut child_depth = depth;
        let mut shown_name = None;
        if role == "RootWebArea" || (generic && !dom_clickable) {
            // Shown through its children.
        } else {
            let (shown_role, name) = if dom_clickable {
                let mut t = String::new();
                Self::text_of(tree, id, &mut t);
                ("clickable", if name.is_empty() { clip(&t, MAX_NAME_CHARS) } else { name })
            } else {
                (role, name)
            };
            let control = dom_clickable || ACTIONABLE.contains(&role);
            let mut text = shown_role.to_string();
            if !name.is_empty() {
                text.push(' ');
                text.push_str(&quote(&name));
            }
            shown_name = Some(name);
            states(n, &mut text);
            if facts.is_some_and(|f| f.in_closed_shadow) && control {
                text.push_str(" [closed shadow root: read-only]");
            }
            let mut has_ref = false;
            if control && facts.is_some_and(usable) {
                if let Some(num) = n.backend.zip(facts).and_then(|(b, f)| (self.mint)(&f.frame, b)) {
                    text.push_str(&format!(" [ref=e{num}]"));
                    has_ref = true;
                }
            }
            if TEXT_ENTRY.contains(&role) || role == "combobox" {
                let secret = facts.is_some_and(Facts::secret);
                let mut value = clip(&n.value, MAX_NAME_CHARS);
                if editing_host && value.is_empty() {
                    Self::text_of(tree, id, &mut value);
                    value = clip(value.trim(), MAX_NAME_CHARS);
                }
                if secret {
                    if facts.is_some_and(|f| f.has_value) || !value.is_empty() {
                        text.push_str(": [filled]");
                    }
                } else if !value.is_empty() {
                    text.push_str(&format!(": {}", quote(&value)));
                }
            }
            if role == "Iframe" && facts.is_none_or(|f| f.child_frame.is_none()) {
                text.push_str(" [cross-site frame: not included]");
            }
            self.out.push(Line { depth, text, control, has_ref });
            child_depth = depth + 1;
            if TEXT_ENTRY.contains(&role) {
                return;
            }
        }
        let parent = shown_name.filter(|n| !n.is_empty()).unwrap_or_else(|| parent_name.to_string());
        for &c in &n.children {
            self.node(frame, tree, c, child_depth, &parent);
        }
        if let Some(cf) = facts.and_then(|f| f.child_frame.as_deref()) {
            self.frame(cf, child_depth);
        }
    }
}

fn quote(t: &str) -> String {
    serde_json::to_string(t).unwrap_or_default()
}

/// The states shown after the name, appended to `out`: `[checked]`, `[disabled]`,
/// `[expanded]`, `[level=2]`, …
fn states(n: &AxNode, out: &mut String) {
    let t = |name: &str| n.prop(name).is_some_and(|v| v == true || v == "true");
    match n.prop("checked") {
        Some(v) if v == true || v == "true" => out.push_str(" [checked]"),
        Some(v) if v == "mixed" => out.push_str(" [mixed]"),
        Some(v) if v.is_string() || v.is_boolean() => out.push_str(" [unchecked]"),
        _ => {}
    }
    for (p, label) in [
        ("disabled", " [disabled]"),
        ("focused", " [focused]"),
        ("required", " [required]"),
        ("selected", " [selected]"),
        ("readonly", " [readonly]"),
    ] {
        if t(p) {
            out.push_str(label);
        }
    }
    match n.prop("expanded") {
        Some(v) if v == true => out.push_str(" [expanded]"),
        Some(v) if v == false => out.push_str(" [collapsed]"),
        _ => {}
    }
    if n.prop("pressed").and_then(Value::as_str) == Some("true") {
        out.push_str(" [pressed]");
    }
    if let Some(l) = n.prop("level").and_then(Value::as_i64) {
        out.push_str(&format!(" [level={l}]"));
    }
    if n.prop("invalid").and_then(Value::as_str).is_some_and(|v| v != "false") {
        out.push_str(" [invalid]");
    }
}

/// The outline as text within `max_bytes` (the header line excluded), and what was cut:
/// `(text, cut lines, cut refs)`. With `interactive`, only controls, unindented.
pub fn render(lines: &[Line], interactive: bool, max_bytes: usize) -> (String, usize, usize) {
    let mut out = String::new();
    let shown: Vec<&Line> = lines.iter().filter(|l| !interactive || l.control).collect();
    for (i, l) in shown.iter().enumerate() {
        let indent = if interactive { 0 } else { l.depth * 2 };
        let line = format!("{}- {}\n", " ".repeat(indent), l.text);
        if out.len() + line.len() > max_bytes {
            let rest = &shown[i..];
            return (out, rest.len(), rest.iter().filter(|l| l.has_ref).count());
        }
        out.push_str(&line);
    }
    (out, 0, 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ax(id: &str, role: &str, name: &str, backend: i64, children: &[&str], extra: Value) -> Value {
        let mut v = json!({"nodeId": id, "ignored": false, "role": {"value": role}, "name": {"value": name},
            "backendDOMNodeId": backend, "childIds": children});
        if id != "1" {
            v["parentId"] = "1".into();
        }
        for (k, x) in extra.as_object().cloned().unwrap_or_default() {
            v[k] = x;
        }
        v
    }

    fn facts(visible: bool, clickable: bool) -> Facts {
        Facts { frame: "F".into(), tag: "div".into(), visible, clickable, ..Facts::default() }
    }

    #[test]
    fn refs_go_to_visible_enabled_controls_and_dom_only_clickables() {
        let mut nodes = json!({"nodes": [
            ax("1", "RootWebArea", "Page", 1, &["11"], json!({})),
            ax("11", "generic", "", 11, &["2", "3", "4", "5", "6", "7", "8"], json!({})),
            ax("2", "button", "Save", 2, &["9"], json!({})),
            ax("3", "button", "Off", 3, &[], json!({"properties": [{"name": "disabled", "value": {"value": true}}]})),
            ax("4", "generic", "", 4, &["10"], json!({})),
            ax("5", "button", "Hidden", 5, &[], json!({})),
            ax("6", "textbox", "Password", 6, &[], json!({"value": {"value": "hunter2"}})),
            ax("7", "button", "Sealed", 7, &[], json!({})),
            ax("8", "checkbox", "Agree", 8, &[], json!({"properties": [{"name": "checked", "value": {"value": "true"}}]})),
            ax("9", "StaticText", "Save", 9, &[], json!({})),
            ax("10", "StaticText", "Open menu", 10, &[], json!({})),
        ]});
        let mut dom = DomFacts::default();
        for b in [2, 3, 8] {
            dom.nodes.insert(b, facts(true, false));
        }
        dom.nodes.insert(4, facts(true, true));
        dom.nodes.insert(11, facts(true, true)); // a root that delegates clicks: no ref
        dom.nodes.insert(5, facts(false, false));
        dom.nodes.insert(6, Facts { input_type: "password".into(), has_value: true, ..facts(true, false) });
        dom.nodes.insert(7, Facts { in_closed_shadow: true, ..facts(true, false) });
        let c = Captured {
            frames: vec![Frame {
                id: "F".into(),
                loader: "L".into(),
                url: "http://a/".into(),
                targets: Vec::new(),
                process: 0,
            }],
            dom: vec![dom],
            ax: HashMap::from([("F".to_string(), AxTree::parse(&mut nodes))]),
        };
        let mut next = 0;
        let lines = outline(&c, &mut |_, _| {
            next += 1;
            Some(next)
        });
        let (text, cut, _) = render(&lines, false, DEFAULT_MAX_BYTES);
        assert_eq!(
            text,
            "- button \"Save\" [ref=e1]\n\
             - button \"Off\" [disabled]\n\
             - clickable \"Open menu\" [ref=e2]\n\
             - button \"Hidden\"\n\
             - textbox \"Password\" [ref=e3]: [filled]\n\
             - button \"Sealed\" [closed shadow root: read-only]\n\
             - checkbox \"Agree\" [checked] [ref=e4]\n"
        );
        assert_eq!(cut, 0);
        assert!(!text.contains("hunter2"));
        let (short, cut, cut_refs) = render(&lines, true, 60);
        assert_eq!(short, "- button \"Save\" [ref=e1]\n- button \"Off\" [disabled]\n");
        assert_eq!((cut, cut_refs), (5, 3));
    }
}
