//! The flat tree of each document of one `DOMSnapshot.captureSnapshot` (no computed styles
//! asked): what the page's own script cannot see of its elements. Their `backendNodeId`
//! (what refs name, [`super::refs`]), Chromium's `isClickable` (a click listener, which page
//! script cannot see, or an element clickable by nature), whether they are inside a closed
//! shadow root, which frame an `<iframe>` shows, and whether they have a box (measured by
//! layout already: cheaper here than a rectangle per element in the page). Chromium lists the nodes of each
//! document in flat-tree pre-order (open and closed shadow trees in place of their host's
//! children, slotted nodes under their slot, no shadow root nodes), which is the order the
//! in-page walk visits (`walk.rs`): the two are joined by structure and tag.

use std::borrow::Cow;
use std::collections::HashMap;

use serde::Deserialize;
use serde_json::Value;

/// One node of a document's flat tree.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DomNode {
    /// `nodeName` as Chromium gives it (`DIV`, `svg`, `#text`).
    pub tag: String,
    /// An element (not text, comment or pseudo-element).
    pub element: bool,
    /// `backendNodeId`.
    pub backend: i64,
    /// Chromium's `isClickable`.
    pub clickable: bool,
    /// Rendered with a box of positive width and height (one of its layout objects).
    pub boxed: bool,
    /// Inside a closed shadow root (read-only: no ref).
    pub closed: bool,
    /// An `<iframe>`'s content document's frame id (same-process frames only).
    pub child_frame: Option<String>,
    /// Its `part` and `exportparts` attributes as `part=…` / `exportparts=…` (what styles
    /// outside a shadow tree can reach: a component's surface, issue 24 item 6).
    pub parts: Vec<String>,
}

/// One document: its frame, its nodes in flat-tree pre-order, and each node's element
/// children in order (pseudo-elements and text left out).
#[derive(Debug, Default)]
pub struct DomDoc {
    /// The frame whose document this is.
    pub frame: String,
    /// Nodes, the document node first.
    pub nodes: Vec<DomNode>,
    /// Element children by node index.
    pub children: Vec<Vec<usize>>,
}

/// The parts of a `DOMSnapshot.captureSnapshot` answer the outline reads (CDP
/// `DOMSnapshot.captureSnapshot` → `{documents: [DocumentSnapshot], strings}`), parsed typed
/// straight from the wire: on a 20,000-element page the answer is 4 MB, and a
/// `serde_json::Value` of it took as long again as this. Strings are borrowed where the wire
/// has no escapes. Indices are into `strings` (-1: none).
#[derive(Deserialize, Default)]
#[serde(default)]
pub struct Snapshot<'a> {
    #[serde(borrow)]
    strings: Vec<Str<'a>>,
    documents: Vec<DocumentSnapshot>,
}

/// A string of the table, borrowed unless it had escapes (serde borrows a `Cow` only as a
/// field of its own, not as a `Vec`'s item).
#[derive(Deserialize, Default)]
struct Str<'a>(#[serde(borrow)] Cow<'a, str>);

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct DocumentSnapshot {
    frame_id: i64,
    nodes: NodeTreeSnapshot,
    layout: LayoutTreeSnapshot,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct NodeTreeSnapshot {
    parent_index: Vec<i64>,
    node_type: Vec<i64>,
    node_name: Vec<i64>,
    backend_node_id: Vec<i64>,
    /// Each node's attributes as name and value string indices, alternating.
    attributes: Vec<Vec<i64>>,
    is_clickable: Rare,
    pseudo_type: Rare,
    shadow_root_type: Rare,
    content_document_index: Rare,
}

/// A `RareBooleanData`, `RareStringData` or `RareIntegerData`: the nodes that have it, and
/// (not for booleans) its value for each.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Rare {
    index: Vec<i64>,
    value: Vec<i64>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct LayoutTreeSnapshot {
    node_index: Vec<i64>,
    /// `[x, y, width, height]` per layout object, CSS px.
    bounds: Vec<Vec<f64>>,
}

/// Parses a `DOMSnapshot.captureSnapshot` answer (its `result`) into its documents.
pub fn parse(snap: &Value) -> Vec<DomDoc> {
    Snapshot::deserialize(snap).map(|s| s.documents()).unwrap_or_default()
}

/// Parses the text of a whole `DOMSnapshot.captureSnapshot` answer message
/// (`{"id":…,"result":{…}}`, as `browser::exchange_each` gives it) into its documents; `Err` with
/// Chromium's message when it answered an error, or when the text is no such answer.
pub fn parse_answer(text: &str) -> Result<Vec<DomDoc>, String> {
    #[derive(Deserialize)]
    struct Answer<'a> {
        #[serde(borrow)]
        result: Option<Snapshot<'a>>,
        error: Option<AnswerError>,
    }
    #[derive(Deserialize)]
    struct AnswerError {
        message: String,
    }
    let a: Answer = serde_json::from_str(text).map_err(|e| format!("DOMSnapshot.captureSnapshot's answer: {e}"))?;
    match (a.result, a.error) {
        (_, Some(e)) => Err(e.message),
        (Some(s), None) => Ok(s.documents()),
        (None, None) => Err("DOMSnapshot.captureSnapshot answered no result".into()),
    }
}

impl Snapshot<'_> {
    /// The documents, each a [`DomDoc`].
    pub fn documents(&self) -> Vec<DomDoc> {
        let st = |i: i64| -> &str { usize::try_from(i).ok().and_then(|i| self.strings.get(i)).map_or("", |s| &s.0) };
        let frame_of_doc: Vec<String> = self.documents.iter().map(|d| st(d.frame_id).to_string()).collect();
        let mut out = Vec::with_capacity(self.documents.len());
        for (di, d) in self.documents.iter().enumerate() {
            let n = &d.nodes;
            let count = n.backend_node_id.len();
            let rare_bool = |r: &Rare| -> Vec<bool> {
                let mut v = vec![false; count];
                for &i in &r.index {
                    if let Some(x) = usize::try_from(i).ok().and_then(|i| v.get_mut(i)) {
                        *x = true;
                    }
                }
                v
            };
            let rare_value = |r: &Rare| -> HashMap<usize, i64> {
                r.index.iter().zip(&r.value).filter_map(|(&i, &v)| Some((usize::try_from(i).ok()?, v))).collect()
            };
            let clickable = rare_bool(&n.is_clickable);
            let pseudo = rare_bool(&n.pseudo_type);
            let shadow = rare_value(&n.shadow_root_type);
            let content_doc = rare_value(&n.content_document_index);
            let parts_of = |i: usize| -> Vec<String> {
                let a = n.attributes.get(i).map_or(&[][..], Vec::as_slice);
                a.chunks_exact(2)
                    .filter(|kv| matches!(st(kv[0]), "part" | "exportparts"))
                    .map(|kv| format!("{}={}", st(kv[0]), st(kv[1]).trim()))
                    .collect()
            };
            let mut boxed = vec![false; count];
            for (k, &ni) in d.layout.node_index.iter().enumerate() {
                let b = d.layout.bounds.get(k).map_or(&[][..], Vec::as_slice);
                let size = |i: usize| b.get(i).copied().unwrap_or(0.0);
                if let Some(x) = usize::try_from(ni).ok().and_then(|i| boxed.get_mut(i)) {
                    *x |= size(2) > 0.0 && size(3) > 0.0;
                }
            }
            let mut doc =
                DomDoc { frame: frame_of_doc[di].clone(), nodes: Vec::with_capacity(count), children: vec![] };
            doc.children = vec![Vec::new(); count];
            for i in 0..count {
                let element = n.node_type.get(i) == Some(&1) && !pseudo[i];
                let p = usize::try_from(n.parent_index.get(i).copied().unwrap_or(-1)).ok().filter(|p| *p < i);
                if element {
                    if let Some(p) = p {
                        doc.children[p].push(i);
                    }
                }
                doc.nodes.push(DomNode {
                    tag: st(n.node_name.get(i).copied().unwrap_or(-1)).to_string(),
                    element,
                    backend: n.backend_node_id[i],
                    clickable: clickable[i],
                    boxed: boxed[i],
                    // Chromium gives each node in a shadow tree the type of the innermost root.
                    closed: shadow.get(&i).is_some_and(|v| st(*v) == "closed"),
                    child_frame: content_doc
                        .get(&i)
                        .and_then(|d| usize::try_from(*d).ok())
                        .and_then(|d| frame_of_doc.get(d).cloned()),
                    parts: if element { parts_of(i) } else { Vec::new() },
                });
            }
            out.push(doc);
        }
        out
    }
}

impl DomDoc {
    /// True if node `i` hosts a closed shadow root: its flat-tree children are in a closed
    /// tree while it is not.
    pub fn closed_host(&self, i: usize) -> bool {
        !self.nodes[i].closed && self.children[i].iter().any(|&c| self.nodes[c].closed)
    }

    /// The `part`/`exportparts` attributes of closed host `host`'s own shadow tree (nested
    /// closed trees included, slotted light nodes not), in flat-tree order.
    pub fn closed_parts(&self, host: usize) -> Vec<String> {
        let mut out = Vec::new();
        let mut stack: Vec<usize> = self.children[host].iter().rev().copied().collect();
        while let Some(i) = stack.pop() {
            if !self.nodes[i].closed {
                continue;
            }
            out.extend(self.nodes[i].parts.iter().cloned());
            stack.extend(self.children[i].iter().rev().copied());
        }
        out
    }

    /// The page's own elements that closed host `host`'s root shows through its slots, in
    /// flat-tree order: elements outside the closed tree whose flat-tree parent is one of
    /// its `<slot>`s. Nothing else under the host is visited past that (an open root inside
    /// the closed one is not a slotted node).
    pub fn slotted(&self, host: usize) -> Vec<usize> {
        let mut out = Vec::new();
        let mut stack: Vec<usize> = self.children[host].iter().rev().copied().collect();
        while let Some(i) = stack.pop() {
            if !self.nodes[i].closed {
                continue;
            }
            for &c in self.children[i].iter().rev() {
                if self.nodes[c].closed {
                    stack.push(c);
                }
            }
            // A slot's flat-tree children are its assigned nodes, or its (closed) fallback.
            if self.nodes[i].tag == "SLOT" {
                out.extend(self.children[i].iter().copied().filter(|&c| !self.nodes[c].closed));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_closed_hosts_slotted_nodes_are_those_under_its_slots_only() {
        let strings = ["F", "#document", "X-HOST", "SLOT", "SPAN", "X-INNER", "B", "closed", "open"];
        let s = |x: &str| strings.iter().position(|y| *y == x).unwrap() as i64;
        // 0 #document > 1 x-host > { 2 slot (closed) > 3 span (light), 4 x-inner (closed) > 5 b (its open root) }
        let snap = json!({"strings": strings, "documents": [{"frameId": s("F"), "nodes": {
            "parentIndex": [-1, 0, 1, 2, 1, 4],
            "nodeType": [9, 1, 1, 1, 1, 1],
            "nodeName": [s("#document"), s("X-HOST"), s("SLOT"), s("SPAN"), s("X-INNER"), s("B")],
            "backendNodeId": [1, 2, 3, 4, 5, 6],
            "shadowRootType": {"index": [2, 4, 5], "value": [s("closed"), s("closed"), s("open")]},
        }, "layout": {"nodeIndex": [], "bounds": []}}]});
        let d = &parse(&snap)[0];
        assert!(d.closed_host(1));
        assert_eq!(d.slotted(1), vec![3], "the open root's b inside the closed tree is not slotted");
    }

    #[test]
    fn documents_parse_into_flat_trees_of_elements() {
        let strings =
            ["F1", "F2", "#document", "HTML", "BODY", "DIV", "BUTTON", "#text", "::before", "IFRAME", "closed"];
        let s = |x: &str| strings.iter().position(|y| *y == x).unwrap() as i64;
        // 0 #document > 1 html > 2 body > { 3 div (host) > { 4 button (closed), 5 text },
        //   6 ::before of body, 7 iframe (content: document 1), 8 div (clickable) }
        let snap = json!({
            "strings": strings,
            "documents": [{
                "frameId": s("F1"),
                "nodes": {
                    "parentIndex": [-1, 0, 1, 2, 3, 4, 2, 2, 2],
                    "nodeType": [9, 1, 1, 1, 1, 3, 1, 1, 1],
                    "nodeName": [s("#document"), s("HTML"), s("BODY"), s("DIV"), s("BUTTON"), s("#text"), s("::before"), s("IFRAME"), s("DIV")],
                    "backendNodeId": [1, 2, 3, 4, 5, 6, 7, 8, 9],
                    "isClickable": {"index": [4, 8]},
                    "pseudoType": {"index": [6], "value": [s("::before")]},
                    "shadowRootType": {"index": [4, 5], "value": [s("closed"), s("closed")]},
                    "contentDocumentIndex": {"index": [7], "value": [1]},
                },
                "layout": {"nodeIndex": [3, 4, 8, 8], "bounds": [[0, 0, 10, 10], [0, 0, 0, 10], [0, 0, 0, 0], [5, 5, 4, 4]]},
            }, {
                "frameId": s("F2"),
                "nodes": {"parentIndex": [-1], "nodeType": [9], "nodeName": [s("#document")], "backendNodeId": [1]},
            }],
        });
        let docs = parse(&snap);
        assert_eq!(docs.len(), 2);
        let d = &docs[0];
        assert_eq!(d.frame, "F1");
        assert_eq!(d.children[0], vec![1]);
        assert_eq!(d.children[2], vec![3, 7, 8], "no pseudo-element, no text");
        assert!(d.nodes[4].closed && d.nodes[4].clickable && d.nodes[4].backend == 5);
        assert!(d.closed_host(3) && !d.closed_host(2));
        assert_eq!(d.nodes[7].child_frame.as_deref(), Some("F2"));
        assert!(d.nodes[3].boxed && !d.nodes[4].boxed && !d.nodes[7].boxed, "zero width is no box; no layout, no box");
        assert!(d.nodes[8].boxed, "one of its layout objects has a box");
        assert_eq!(docs[1].frame, "F2");
    }
}
