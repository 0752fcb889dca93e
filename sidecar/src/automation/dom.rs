//! The flat tree of each document of one `DOMSnapshot.captureSnapshot` (no computed styles
//! asked): what the page's own script cannot see of its elements. Their `backendNodeId`
//! (what refs name, [`super::refs`]), Chromium's `isClickable` (a click listener, which page
//! script cannot see, or an element clickable by nature), whether they are inside a closed
//! shadow root, which frame an `<iframe>` shows, and whether they have a box (measured by
//! layout already: cheaper here than a rectangle per element in the page). Chromium lists the nodes of each
//! document in flat-tree pre-order (open and closed shadow trees in place of their host's
//! children, slotted nodes under their slot, no shadow root nodes), which is the order the
//! in-page walk visits (`walk.rs`): the two are joined by structure and tag.

use std::collections::HashMap;

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

fn ints(v: &Value) -> Vec<i64> {
    v.as_array().map(|a| a.iter().map(|x| x.as_i64().unwrap_or(-1)).collect()).unwrap_or_default()
}

/// Parses a `DOMSnapshot.captureSnapshot` answer into its documents.
pub fn parse(snap: &Value) -> Vec<DomDoc> {
    let strings: Vec<&str> =
        snap["strings"].as_array().map(|a| a.iter().map(|s| s.as_str().unwrap_or("")).collect()).unwrap_or_default();
    let st = |i: i64| -> &str { usize::try_from(i).ok().and_then(|i| strings.get(i).copied()).unwrap_or("") };
    let docs: &[Value] = snap["documents"].as_array().map_or(&[], Vec::as_slice);
    let frame_of_doc: Vec<String> = docs.iter().map(|d| st(d["frameId"].as_i64().unwrap_or(-1)).to_string()).collect();
    let mut out = Vec::with_capacity(docs.len());
    for (di, d) in docs.iter().enumerate() {
        let n = &d["nodes"];
        let parent = ints(&n["parentIndex"]);
        let backend = ints(&n["backendNodeId"]);
        let names = ints(&n["nodeName"]);
        let types = ints(&n["nodeType"]);
        let count = backend.len();
        let rare_bool = |key: &str| -> Vec<bool> {
            let mut v = vec![false; count];
            for i in ints(&n[key]["index"]) {
                if let Some(x) = usize::try_from(i).ok().and_then(|i| v.get_mut(i)) {
                    *x = true;
                }
            }
            v
        };
        let rare_str = |key: &str| -> HashMap<usize, i64> {
            ints(&n[key]["index"])
                .into_iter()
                .zip(ints(&n[key]["value"]))
                .filter_map(|(i, v)| Some((usize::try_from(i).ok()?, v)))
                .collect()
        };
        let clickable = rare_bool("isClickable");
        let pseudo = rare_bool("pseudoType");
        let shadow = rare_str("shadowRootType");
        let content_doc = rare_str("contentDocumentIndex");
        let attributes: &[Value] = n["attributes"].as_array().map_or(&[], Vec::as_slice);
        let parts_of = |i: usize| -> Vec<String> {
            let a = attributes.get(i).map(ints).unwrap_or_default();
            a.chunks_exact(2)
                .filter(|kv| matches!(st(kv[0]), "part" | "exportparts"))
                .map(|kv| format!("{}={}", st(kv[0]), st(kv[1]).trim()))
                .collect()
        };
        let mut boxed = vec![false; count];
        let bounds: &[Value] = d["layout"]["bounds"].as_array().map_or(&[], Vec::as_slice);
        for (k, ni) in ints(&d["layout"]["nodeIndex"]).into_iter().enumerate() {
            let b = bounds.get(k).and_then(Value::as_array);
            let size = |i: usize| b.and_then(|b| b.get(i)).and_then(Value::as_f64).unwrap_or(0.0);
            if let Some(x) = usize::try_from(ni).ok().and_then(|i| boxed.get_mut(i)) {
                *x |= size(2) > 0.0 && size(3) > 0.0;
            }
        }
        let mut doc = DomDoc { frame: frame_of_doc[di].clone(), nodes: Vec::with_capacity(count), children: vec![] };
        doc.children = vec![Vec::new(); count];
        for i in 0..count {
            let element = types.get(i) == Some(&1) && !pseudo[i];
            let p = usize::try_from(parent.get(i).copied().unwrap_or(-1)).ok().filter(|p| *p < i);
            if element {
                if let Some(p) = p {
                    doc.children[p].push(i);
                }
            }
            doc.nodes.push(DomNode {
                tag: st(names.get(i).copied().unwrap_or(-1)).to_string(),
                element,
                backend: backend.get(i).copied().unwrap_or(-1),
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
