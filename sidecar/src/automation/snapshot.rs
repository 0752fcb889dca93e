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

/// The accessibility tree of one frame: nodes by id, and the root's id.
#[derive(Debug, Default)]
pub struct AxTree {
    nodes: HashMap<String, Value>,
    root: Option<String>,
}

impl AxTree {
    /// Parses a `Accessibility.getFullAXTree` answer.
    pub fn parse(v: &Value) -> AxTree {
        let mut t = AxTree::default();
        for n in v["nodes"].as_array().into_iter().flatten() {
            let id = n["nodeId"].as_str().unwrap_or("").to_string();
            if t.root.is_none() && n.get("parentId").is_none_or(Value::is_null) {
                t.root = Some(id.clone());
            }
            t.nodes.insert(id, n.clone());
        }
        t
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
/// trees.
async fn read(
    session: &Session,
    process: usize,
) -> Result<(Vec<Frame>, DomFacts, HashMap<String, AxTree>), BrowserError> {
    let mut frames = frames(&call(session, "Page.getFrameTree", serde_json::json!({})).await?);
    let targets = session.targets();
    for f in &mut frames {
        f.targets = targets.clone();
        f.process = process;
    }
    let snap = call(session, "DOMSnapshot.captureSnapshot", serde_json::json!({"computedStyles": dom::STYLES})).await?;
    let dom = dom::parse(&snap);
    let mut ax = HashMap::new();
    for (i, f) in frames.iter().enumerate() {
        match call(session, "Accessibility.getFullAXTree", serde_json::json!({"frameId": f.id})).await {
            Ok(v) => {
                ax.insert(f.id.clone(), AxTree::parse(&v));
            }
            // The process's root frame must be readable; a child frame may be going away.
            Err(e) if i == 0 => return Err(e),
            Err(e) => tracing::debug!("ax tree of frame {}: {e}", f.id),
        }
    }
    // Quiet by default: the renderer keeps no accessibility tree up to date between asks.
    if let Err(e) = call(session, "Accessibility.disable", serde_json::json!({})).await {
        tracing::debug!("Accessibility.disable: {e}");
    }
    Ok((frames, dom, ax))
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
    let id =
        tree.nodes.iter().find(|(_, n)| n["backendDOMNodeId"].as_i64() == Some(backend)).map(|(id, _)| id.clone())?;
    let mut w = Walker { c, mint, out: Vec::new(), visited: HashSet::new() };
    w.visited.insert(frame.to_string());
    w.node(frame, &id, 0, "");
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

fn clip(t: &str, n: usize) -> String {
    let t = t.split_whitespace().collect::<Vec<_>>().join(" ");
    if t.chars().count() <= n {
        t
    } else {
        format!("{}…", t.chars().take(n - 1).collect::<String>())
    }
}

fn prop<'v>(n: &'v Value, name: &str) -> Option<&'v Value> {
    n["properties"].as_array()?.iter().find(|p| p["name"] == name).map(|p| &p["value"]["value"])
}

impl Walker<'_> {
    fn frame(&mut self, frame: &str, depth: usize) {
        if !self.visited.insert(frame.to_string()) {
            return;
        }
        let Some(root) = self.c.ax.get(frame).and_then(|t| t.root.clone()) else { return };
        self.node(frame, &root, depth, "");
    }

    /// The text of `id`'s static-text descendants, for an element the AX tree gives no name.
    fn text_of(&self, frame: &str, id: &str, out: &mut String) {
        let Some(n) = self.c.ax.get(frame).and_then(|t| t.nodes.get(id)) else { return };
        if s(&n["role"]["value"]) == "StaticText" {
            out.push(' ');
            out.push_str(s(&n["name"]["value"]));
        }
        for c in n["childIds"].as_array().into_iter().flatten() {
            if out.len() > 4 * MAX_NAME_CHARS {
                return;
            }
            self.text_of(frame, s(c), out);
        }
    }

    /// True if a descendant of `id` has an actionable role (looked at: the first
    /// [`MAX_CONTAINER_SCAN`] nodes).
    fn has_control_inside(&self, frame: &str, id: &str, seen: &mut usize) -> bool {
        let Some(n) = self.c.ax.get(frame).and_then(|t| t.nodes.get(id)) else { return false };
        n["childIds"].as_array().into_iter().flatten().any(|c| {
            *seen += 1;
            if *seen > MAX_CONTAINER_SCAN {
                return false;
            }
            let child = self.c.ax.get(frame).and_then(|t| t.nodes.get(s(c)));
            let role = child.map_or("", |c| s(&c["role"]["value"]));
            ACTIONABLE.contains(&role) || self.has_control_inside(frame, s(c), seen)
        })
    }

    fn node(&mut self, frame: &str, id: &str, depth: usize, parent_name: &str) {
        let Some(n) = self.c.ax.get(frame).and_then(|t| t.nodes.get(id)) else { return };
        let role = s(&n["role"]["value"]);
        let name = clip(s(&n["name"]["value"]), MAX_NAME_CHARS);
        let backend = n["backendDOMNodeId"].as_i64();
        let facts: Option<&Facts> = backend.and_then(|b| self.c.facts(frame, b));
        let children: Vec<String> = n["childIds"].as_array().into_iter().flatten().map(|c| s(c).to_string()).collect();
        let ignored = n["ignored"].as_bool().unwrap_or(false);
        let disabled = prop(n, "disabled").and_then(Value::as_bool).unwrap_or(false);
        let usable = |f: &Facts| f.visible && !f.inert && !f.in_closed_shadow && !disabled;
        if role == "StaticText" {
            if !name.is_empty() && name != parent_name {
                self.out.push(Line { depth, text: format!("text: {}", quote(&name)), control: false, has_ref: false });
            }
            return;
        }
        // A contenteditable's editing host takes text like a textbox (the tree calls it
        // generic, its descendants editable too).
        let rich = |n: &Value| prop(n, "editable").and_then(Value::as_str) == Some("richtext");
        let parent = n["parentId"].as_str().and_then(|p| self.c.ax.get(frame)?.nodes.get(p));
        let editing_host = !ignored && GENERIC.contains(&role) && rich(n) && !parent.is_some_and(rich);
        let role = if editing_host { "textbox" } else { role };
        let generic = ignored || GENERIC.contains(&role);
        // A container that only delegates its children's clicks (React listens on its root)
        // is not itself a control: its controls are.
        let dom_clickable = generic
            && facts.is_some_and(|f| f.clickable && usable(f) && !f.tag.starts_with('#'))
            && !matches!(facts.map(|f| f.tag.as_str()), Some("html" | "body" | "label"))
            && !self.has_control_inside(frame, id, &mut 0);
        let mut child_depth = depth;
        let mut shown_name = None;
        if role == "RootWebArea" || (generic && !dom_clickable) {
            // Shown through its children.
        } else {
            let (shown_role, name) = if dom_clickable {
                let mut t = String::new();
                self.text_of(frame, id, &mut t);
                ("clickable", if name.is_empty() { clip(&t, MAX_NAME_CHARS) } else { name })
            } else {
                (role, name)
            };
            let control = dom_clickable || ACTIONABLE.contains(&role);
            shown_name = Some(name.clone());
            let mut text = shown_role.to_string();
            if !name.is_empty() {
                text.push(' ');
                text.push_str(&quote(&name));
            }
            text.push_str(&states(n));
            if facts.is_some_and(|f| f.in_closed_shadow) && control {
                text.push_str(" [closed shadow root: read-only]");
            }
            let mut has_ref = false;
            if control && facts.is_some_and(usable) {
                if let Some(num) =
                    backend.and_then(|b| (self.mint)(&facts.map(|f| f.frame.clone()).unwrap_or_default(), b))
                {
                    text.push_str(&format!(" [ref=e{num}]"));
                    has_ref = true;
                }
            }
            if TEXT_ENTRY.contains(&role) || role == "combobox" {
                let secret = facts.is_some_and(Facts::secret);
                let mut value = clip(s(&n["value"]["value"]), MAX_NAME_CHARS);
                if editing_host && value.is_empty() {
                    self.text_of(frame, id, &mut value);
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
        for c in &children {
            self.node(frame, c, child_depth, &parent);
        }
        if let Some(cf) = facts.and_then(|f| f.child_frame.clone()) {
            self.frame(&cf, child_depth);
        }
    }
}

fn quote(t: &str) -> String {
    serde_json::to_string(t).unwrap_or_default()
}

/// The states shown after the name: `[checked]`, `[disabled]`, `[expanded]`, `[level=2]`, …
fn states(n: &Value) -> String {
    let mut out = String::new();
    let t = |name: &str| prop(n, name).is_some_and(|v| v == true || v == "true");
    match prop(n, "checked").and_then(|v| v.as_str().map(str::to_string).or(v.as_bool().map(|b| b.to_string()))) {
        Some(c) if c == "true" => out.push_str(" [checked]"),
        Some(c) if c == "mixed" => out.push_str(" [mixed]"),
        Some(_) => out.push_str(" [unchecked]"),
        None => {}
    }
    for (p, label) in [
        ("disabled", "disabled"),
        ("focused", "focused"),
        ("required", "required"),
        ("selected", "selected"),
        ("readonly", "readonly"),
    ] {
        if t(p) {
            out.push_str(&format!(" [{label}]"));
        }
    }
    match prop(n, "expanded") {
        Some(v) if v == true => out.push_str(" [expanded]"),
        Some(v) if v == false => out.push_str(" [collapsed]"),
        _ => {}
    }
    if let Some(p) = prop(n, "pressed").and_then(|v| v.as_str()) {
        if p == "true" {
            out.push_str(" [pressed]");
        }
    }
    if let Some(l) = prop(n, "level").and_then(Value::as_i64) {
        out.push_str(&format!(" [level={l}]"));
    }
    if prop(n, "invalid").and_then(Value::as_str).is_some_and(|v| v != "false") {
        out.push_str(" [invalid]");
    }
    out
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
        let nodes = json!({"nodes": [
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
            ax: HashMap::from([("F".to_string(), AxTree::parse(&nodes))]),
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
