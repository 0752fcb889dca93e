//! The in-page walk (`outline.js`, run in Porthole's isolated world of each frame) and its
//! answer: each frame's elements in flat-tree order with the roles, names and states the
//! outline shows, joined to the frame's `DOMSnapshot` document ([`super::dom`]) for what
//! page script cannot see (`backendNodeId`, `isClickable`, closed shadow roots, frames).
//!
//! The join is exact or absent, never a guess: both sides list the same flat tree, so a
//! walked element and a DOM node are the same node when they sit at the same place (the
//! same position among their parent's element children, parents joined) with the same tag.
//! A list whose length or tags differ (the page changed between the two reads) joins none
//! of its elements: they are shown, without a ref; the caller reads again once.

use serde::de::IgnoredAny;
use serde::Deserialize;
#[cfg(test)]
use serde_json::Value;

use super::dom::DomDoc;

/// The walk's source: a function Chromium calls with `this` = a document or a shadow root and
/// one argument, `{sig}` (read closed hosts' surfaces for their signatures) (`outline.js`,
/// after `secret.js`, which decides which fields' values are secret). It answers the walk
/// as one JSON string: V8 turns a walk of 20,000 elements into a string in a fraction of the
/// time `returnByValue` takes to copy the same objects into the protocol's value tree
/// (about 150 ms less per snapshot of such a page).
pub const WALK_JS: &str = concat!(
    "function (opts) {\n",
    include_str!("secret.js"),
    "\nreturn JSON.stringify((",
    include_str!("outline.js"),
    ").call(this, opts));\n}"
);
/// Run at the start of every document in [`WORLD`] (`hooks.rs`): `secret.js` starts
/// remembering which fields were passwords before the page's scripts run, so a field the
/// page switches to `type=text` before Porthole's first read still counts as one.
pub const SECRET_RECORDER: &str = concat!("(() => {\n", include_str!("secret.js"), "\n})();");
/// The isolated world the walk runs in (one per frame and CDP session, made once).
pub const WORLD: &str = "porthole-outline";

/// Flags of a walked element (bits of its `f`), as `outline.js` sets them.
pub mod flag {
    /// `visibility: visible`, and no ancestor (or itself) at opacity 0 (its box is the DOM
    /// snapshot's to tell: [`super::El::boxed`]).
    pub const VISIBLE: u32 = 1;
    /// `:disabled`, or `aria-disabled="true"` on it or an ancestor.
    pub const DISABLED: u32 = 2;
    /// The focused element of a focused document.
    pub const FOCUSED: u32 = 4;
    /// `required` or `aria-required`.
    pub const REQUIRED: u32 = 8;
    /// A selected option, or `aria-selected` on a role that takes it.
    pub const SELECTED: u32 = 16;
    /// A read-only text entry.
    pub const READONLY: u32 = 32;
    /// `aria-pressed="true"`.
    pub const PRESSED: u32 = 64;
    /// `aria-invalid` other than false.
    pub const INVALID: u32 = 128;
    /// A password or payment-card field: its value never leaves the page.
    pub const SECRET: u32 = 256;
    /// A secret field that holds a value.
    pub const FILLED: u32 = 512;
    /// `visibility` other than visible: the element itself is not shown, its children may be.
    pub const IGNORED: u32 = 2048;
    /// An open shadow root's host (the walk went into its root).
    pub const SHADOW_HOST: u32 = 4096;
}

/// A walked element.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct El {
    /// `nodeName` (`DIV`, `svg`).
    pub tag: String,
    /// Its role ("" = generic: shown through its children).
    pub role: String,
    /// Its accessible name.
    pub name: String,
    /// A text entry's or combobox's value (never a secret field's).
    pub value: String,
    /// `true`, `false` or `mixed` for the roles that are checked.
    pub checked: Option<String>,
    /// Expanded (`Some(true)`) or collapsed.
    pub expanded: Option<bool>,
    /// A heading's level.
    pub level: Option<i64>,
    /// [`flag`] bits.
    pub flags: u32,
    /// Not rendered for the accessibility tree (display: none, aria-hidden, inert): left
    /// out with all it holds.
    pub pruned: bool,
    /// What it holds was not walked (a text entry's own text).
    pub leaf: bool,
    /// `backendNodeId`, when joined.
    pub backend: Option<i64>,
    /// Chromium's `isClickable`, when joined.
    pub clickable: bool,
    /// Rendered with a box of positive size, when joined.
    pub boxed: bool,
    /// Hosts a closed shadow root, which the outline does not enter (issue 24: quiet by
    /// default; `snapshot --sealed` reads it on request).
    pub sealed_host: bool,
    /// The frame an `<iframe>` shows, once known.
    pub child_frame: Option<String>,
    /// A custom element's `:defined`, when the walk read its surface (`outline.js` does for
    /// a custom element without an open shadow root when signatures are asked for).
    pub defined: Option<bool>,
    /// The custom properties set on it (names), when the walk read its surface.
    pub vars: Vec<String>,
    /// A closed shadow host's component signature ([`crate::automation::sealed::Surface`]),
    /// once joined.
    pub signature: String,
    /// Indices (in its [`Doc`]) of the elements its `aria-owns` names, in that order.
    pub owns: Vec<usize>,
}

impl El {
    /// True if flag `f` is set.
    pub fn has(&self, f: u32) -> bool {
        self.flags & f != 0
    }
}

/// A walked node.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// Text (whitespace collapsed).
    Text(String),
    /// An element.
    El(El),
}

/// A walked node and its place.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    /// Its parent's index (`None` for a root).
    pub parent: Option<usize>,
    /// Its children's indices, in order.
    pub children: Vec<usize>,
    /// What it is.
    pub kind: Kind,
}

/// One frame's walked document.
#[derive(Debug, Default)]
pub struct Doc {
    /// The frame's id.
    pub frame: String,
    /// The document's title.
    pub title: String,
    /// Nodes, in walk order.
    pub items: Vec<Item>,
    /// The top nodes (the document element).
    pub roots: Vec<usize>,
}

/// A walk's answer (`outline.js`: `{nodes: [{p, t | s, r, n, v, c, x, l, f, z, k, g, o}],
/// title}`), parsed typed from its JSON text: a `serde_json::Value` of a 20,000-element walk
/// cost a parse, a second pass and a drop, three times this.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Walked {
    nodes: Vec<WalkedNode>,
    title: String,
}

/// One node of [`Walked`], as `outline.js` writes it.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct WalkedNode {
    /// Parent index (-1: a root); a node with none is ignored.
    p: Option<i64>,
    /// A text node's text.
    s: Option<String>,
    t: String,
    r: String,
    n: String,
    v: String,
    c: Option<String>,
    x: Option<bool>,
    l: Option<i64>,
    f: u32,
    z: Option<IgnoredAny>,
    k: Option<IgnoredAny>,
    g: Option<WalkedSurface>,
    o: Vec<u64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct WalkedSurface {
    d: Option<u64>,
    v: Vec<String>,
}

impl Walked {
    /// Parses a walk's JSON text.
    pub fn parse(text: &str) -> Result<Walked, serde_json::Error> {
        serde_json::from_str(text)
    }
}

impl Doc {
    /// [`Doc::append_walked`] of a walk answer given as a JSON value (one that is no walk
    /// appends nothing): the unit tests' way to write one.
    #[cfg(test)]
    pub fn append(&mut self, answer: &Value, parent: Option<usize>) -> Vec<usize> {
        self.append_walked(Walked::deserialize(answer).unwrap_or_default(), parent)
    }

    /// Appends the nodes of a walk answer under `parent` (their roots' parent, `None` for a
    /// document's); returns the indices of its roots.
    pub fn append_walked(&mut self, answer: Walked, parent: Option<usize>) -> Vec<usize> {
        let base = self.items.len();
        let mut roots = Vec::new();
        let len = answer.nodes.len();
        self.items.reserve(len);
        for (k, n) in answer.nodes.into_iter().enumerate() {
            let i = base + k;
            // Parents come before their children; anything else is ignored as a root-less node.
            let p = n.p.and_then(|p| usize::try_from(p).ok()).filter(|p| *p < k).map(|p| base + p);
            let kind = match n.s {
                Some(s) => Kind::Text(s),
                None => Kind::El(El {
                    tag: n.t,
                    role: n.r,
                    name: n.n,
                    value: n.v,
                    checked: n.c,
                    expanded: n.x,
                    level: n.l,
                    flags: n.f,
                    pruned: n.z.is_some(),
                    leaf: n.k.is_some(),
                    defined: n.g.as_ref().and_then(|g| g.d).map(|d| d == 1),
                    vars: n.g.map(|g| g.v.into_iter().take(32).collect()).unwrap_or_default(),
                    owns: n
                        .o
                        .into_iter()
                        .filter_map(|j| usize::try_from(j).ok())
                        .filter(|j| *j < len)
                        .map(|j| base + j)
                        .collect(),
                    ..El::default()
                }),
            };
            let root = n.p == Some(-1);
            let parent = p.or(if root { parent } else { None });
            match p {
                Some(p) => self.items[p].children.push(i),
                None if root => roots.push(i),
                None => {}
            }
            self.items.push(Item { parent, children: Vec::new(), kind });
        }
        if !answer.title.is_empty() {
            self.title = answer.title;
        }
        roots
    }

    /// The element at `i`, if it is one.
    pub fn el(&self, i: usize) -> Option<&El> {
        match &self.items.get(i)?.kind {
            Kind::El(e) => Some(e),
            Kind::Text(_) => None,
        }
    }

    /// The element at `i`, if it is one, to change.
    pub fn el_mut(&mut self, i: usize) -> Option<&mut El> {
        match &mut self.items.get_mut(i)?.kind {
            Kind::El(e) => Some(e),
            Kind::Text(_) => None,
        }
    }

    fn element_children(&self, items: &[usize]) -> Vec<usize> {
        items.iter().copied().filter(|&i| self.el(i).is_some()).collect()
    }

    /// Joins the walked elements among `items` to DOM nodes `nodes` of `dom` (the element
    /// children of one place of both trees), and so on down. Returns how many lists did not
    /// match, and pushes each closed shadow root's host met (walked index, DOM index) to
    /// `closed_hosts` (the walk cannot see into them, and the outline does not look).
    pub fn join(
        &mut self,
        items: &[usize],
        dom: &DomDoc,
        nodes: &[usize],
        closed_hosts: &mut Vec<(usize, usize)>,
    ) -> usize {
        let mut mismatches = 0;
        let mut stack = vec![(self.element_children(items), nodes.to_vec())];
        while let Some((js, ds)) = stack.pop() {
            let same = js.len() == ds.len()
                && js.iter().zip(&ds).all(|(&j, &d)| self.el(j).is_some_and(|e| e.tag == dom.nodes[d].tag));
            if !same {
                let tags = |t: Vec<&str>| t.into_iter().take(8).collect::<Vec<_>>().join(",");
                tracing::debug!(
                    "walk and DOM snapshot differ: [{}] against [{}]",
                    tags(js.iter().filter_map(|&j| self.el(j)).map(|e| e.tag.as_str()).collect()),
                    tags(ds.iter().map(|&d| dom.nodes[d].tag.as_str()).collect())
                );
                mismatches += 1;
                continue;
            }
            for (j, d) in js.into_iter().zip(ds) {
                let n = &dom.nodes[d];
                let Some(e) = self.el_mut(j) else { continue };
                e.backend = Some(n.backend);
                e.clickable = n.clickable;
                e.boxed = n.boxed;
                e.child_frame = n.child_frame.clone();
                if e.pruned || e.leaf {
                    continue;
                }
                if !e.has(flag::SHADOW_HOST) && dom.closed_host(d) {
                    e.sealed_host = true;
                    let mut parts = n.parts.clone();
                    parts.extend(dom.closed_parts(d));
                    e.signature = crate::automation::sealed::Surface {
                        tag: n.tag.to_ascii_lowercase(),
                        defined: e.defined,
                        vars: e.vars.clone(),
                        parts,
                    }
                    .signature();
                    closed_hosts.push((j, d));
                    // Its light children that a slot shows are the page's own, not the
                    // closed root's: joined (and so actionable) when the walk's list and the
                    // slotted list agree, as every list here must.
                    let kids = self.element_children(&self.items[j].children);
                    stack.push((kids, dom.slotted(d)));
                    continue;
                }
                let kids = self.element_children(&self.items[j].children);
                stack.push((kids, dom.children[d].clone()));
            }
        }
        mismatches
    }

    /// Moves each element an `aria-owns` names under its owner, after the owner's own
    /// children and in the attribute's order (WAI-ARIA 1.2, `aria-owns`: the owned element
    /// is the owner's child in the accessibility tree). An element has one owner, the first
    /// met in walk order; an owner's ancestor (a cycle) stays where it is. Call after the
    /// join, which matches the DOM's own order.
    pub fn adopt_owned(&mut self) {
        // The usual page has no aria-owns: no walk of the tree for it.
        if !self.items.iter().any(|i| matches!(&i.kind, Kind::El(e) if !e.owns.is_empty())) {
            return;
        }
        // Only what the outline shows counts: a closed shadow host's light children, walked
        // before its root was spliced in, are still in `items` but hang from nothing shown.
        let mut shown = vec![false; self.items.len()];
        let mut stack = self.roots.clone();
        while let Some(i) = stack.pop() {
            shown[i] = true;
            stack.extend(self.items[i].children.iter().copied());
        }
        let mut owned = std::collections::HashSet::new();
        for owner in (0..self.items.len()).filter(|&i| shown[i]) {
            let Some(owns) = self.el(owner).map(|e| e.owns.clone()).filter(|o| !o.is_empty()) else { continue };
            for j in owns {
                if j == owner || !shown[j] || owned.contains(&j) || self.is_ancestor(j, owner) {
                    continue;
                }
                owned.insert(j);
                match self.items[j].parent {
                    Some(p) => self.items[p].children.retain(|&c| c != j),
                    None => self.roots.retain(|&r| r != j),
                }
                self.items[j].parent = Some(owner);
                self.items[owner].children.push(j);
            }
        }
    }

    /// True if `a` is `b`'s parent, or its parent's, and so on.
    fn is_ancestor(&self, a: usize, b: usize) -> bool {
        let mut at = self.items[b].parent;
        while let Some(p) = at {
            if p == a {
                return true;
            }
            at = self.items[p].parent;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::automation::dom::DomNode;
    use serde_json::json;

    fn dom(nodes: &[(&str, i64, Option<usize>, bool)]) -> DomDoc {
        let mut d = DomDoc { frame: "F".into(), ..DomDoc::default() };
        d.children = vec![Vec::new(); nodes.len()];
        for (i, (tag, backend, parent, closed)) in nodes.iter().enumerate() {
            d.nodes.push(DomNode {
                tag: tag.to_string(),
                element: !tag.starts_with('#'),
                backend: *backend,
                clickable: *backend == 13,
                boxed: *backend == 12,
                closed: *closed,
                child_frame: None,
                parts: Vec::new(),
            });
            if let Some(p) = parent {
                if !tag.starts_with('#') {
                    d.children[*p].push(i);
                }
            }
        }
        d
    }

    #[test]
    fn aria_owns_moves_the_owned_under_the_owner_once_and_never_an_ancestor() {
        // body > { combobox (owns 4, 3, 9 out of range), p, group#g (owns 0: its ancestor),
        // listbox, button (owns 4 again) }
        let walked = json!({"nodes": [
            {"p": -1, "t": "BODY"},
            {"p": 0, "t": "DIV", "r": "combobox", "o": [4, 3, 9]},
            {"p": 0, "t": "P"},
            {"p": 0, "t": "DIV", "r": "group", "o": [0, 3]},
            {"p": 0, "t": "UL", "r": "listbox"},
            {"p": 0, "t": "BUTTON", "r": "button", "o": [4]},
        ]});
        let mut doc = Doc::default();
        doc.roots = doc.append(&walked, None);
        assert_eq!(doc.el(1).unwrap().owns, vec![4, 3], "an index past the walk is dropped");
        doc.adopt_owned();
        assert_eq!(doc.items[1].children, vec![4, 3], "in the attribute's order");
        assert_eq!((doc.items[4].parent, doc.items[3].parent), (Some(1), Some(1)));
        assert_eq!(doc.items[0].children, vec![1, 2, 5], "moved, not copied");
        assert!(doc.items[3].children.is_empty(), "its ancestor and an owned element stay put");
        assert!(doc.items[5].children.is_empty(), "one owner: the first");
        assert_eq!(doc.roots, vec![0]);

        // A node left over under a closed host (no longer its child) neither owns nor is owned.
        let walked = json!({"nodes": [
            {"p": -1, "t": "BODY"},
            {"p": 0, "t": "X-HOST"},
            {"p": 1, "t": "INPUT", "r": "combobox", "o": [3]},
            {"p": 0, "t": "UL", "r": "listbox"},
            {"p": 0, "t": "DIV", "r": "group", "o": [2, 3]},
        ]});
        let mut doc = Doc::default();
        doc.roots = doc.append(&walked, None);
        doc.items[1].children.clear();
        doc.adopt_owned();
        assert_eq!(doc.items[4].children, vec![3], "the leftover input is not taken, the list is");
        assert_eq!(doc.items[2].parent, Some(1));
    }

    #[test]
    fn walks_join_by_place_and_tag_and_stop_at_closed_hosts_but_for_slotted_light_nodes() {
        // html > body > { button, div (clickable), x-host (closed root: button, slot > span) }
        let d = dom(&[
            ("#document", 1, None, false),
            ("HTML", 10, Some(0), false),
            ("BODY", 11, Some(1), false),
            ("BUTTON", 12, Some(2), false),
            ("DIV", 13, Some(2), false),
            ("X-HOST", 14, Some(2), false),
            ("BUTTON", 15, Some(5), true),
            ("SLOT", 16, Some(5), true),
            ("SPAN", 17, Some(7), false),
        ]);
        let walked = json!({"title": "T", "nodes": [
            {"p": -1, "t": "HTML"}, {"p": 0, "t": "BODY"}, {"p": 1, "t": "BUTTON", "r": "button", "n": "Go"},
            {"p": 2, "s": "Go"}, {"p": 1, "t": "DIV"}, {"p": 1, "t": "X-HOST"}, {"p": 5, "t": "SPAN"},
        ]});
        let mut doc = Doc { frame: "F".into(), ..Doc::default() };
        let roots = doc.append(&walked, None);
        assert_eq!((roots.clone(), doc.title.as_str()), (vec![0], "T"));
        let mut hosts = Vec::new();
        assert_eq!(doc.join(&roots, &d, &d.children[0].clone(), &mut hosts), 0);
        assert_eq!(doc.el(2).unwrap().backend, Some(12));
        assert!(doc.el(2).unwrap().boxed && !doc.el(4).unwrap().boxed);
        assert!(doc.el(4).unwrap().clickable);
        assert_eq!(hosts, vec![(5, 5)], "the closed host");
        assert_eq!(doc.el(6).unwrap().backend, Some(17), "its slotted light child is the page's own");
        assert_eq!(d.slotted(5), vec![8], "the closed button is not a slotted node");
        // The page changed between the reads: that list joins nothing.
        let mut other = Doc::default();
        let changed = json!({"nodes": [{"p": -1, "t": "HTML"}, {"p": 0, "t": "BODY"}, {"p": 1, "t": "BUTTON"}, {"p": 1, "t": "P"}]});
        let roots = other.append(&changed, None);
        assert_eq!(other.join(&roots, &d, &d.children[0].clone(), &mut Vec::new()), 1);
        assert_eq!(other.el(1).unwrap().backend, Some(11));
        assert_eq!(other.el(2).unwrap().backend, None);
    }
}
