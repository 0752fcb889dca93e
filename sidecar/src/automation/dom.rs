//! DOM facts from one `DOMSnapshot.captureSnapshot`, by `backendNodeId`: whether an element
//! is rendered with a non-empty box, visible, clickable (`isClickable`, which sees click
//! listeners the accessibility tree does not), inert, inside a closed shadow root, and which
//! frame document holds it.

use std::collections::HashMap;

use serde_json::Value;

/// The computed styles asked of the snapshot, in this order.
pub const STYLES: [&str; 3] = ["display", "visibility", "opacity"];

/// What the DOM says about one node.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Facts {
    /// The frame whose document holds the node.
    pub frame: String,
    /// Lowercase tag name (`div`, `input`, `#text`).
    pub tag: String,
    /// The `id` attribute ("" when none).
    pub id: String,
    /// The `type` attribute of an input, lowercase ("" when none).
    pub input_type: String,
    /// The `autocomplete` attribute, lowercase ("" when none).
    pub autocomplete: String,
    /// Rendered with a box of positive width and height, `visibility: visible`, and no
    /// ancestor (or itself) at `opacity: 0`.
    pub visible: bool,
    /// Chromium's `isClickable`: a click listener, or an element clickable by nature.
    pub clickable: bool,
    /// The node or an ancestor has the `inert` attribute.
    pub inert: bool,
    /// The node is inside a closed shadow root (read-only: no ref).
    pub in_closed_shadow: bool,
    /// An iframe's content document's frame id (same-process frames only).
    pub child_frame: Option<String>,
    /// An input's current value is not empty (read only for `[filled]`, never returned).
    pub has_value: bool,
}

/// The facts of every node of every document of a snapshot, and each document's title by
/// frame id.
#[derive(Debug, Default)]
pub struct DomFacts {
    /// Facts by `backendNodeId`.
    pub nodes: HashMap<i64, Facts>,
    /// Document titles by frame id.
    pub titles: HashMap<String, String>,
}

fn ints(v: &Value) -> Vec<i64> {
    v.as_array().map(|a| a.iter().map(|x| x.as_i64().unwrap_or(-1)).collect()).unwrap_or_default()
}

/// Parses a `DOMSnapshot.captureSnapshot` answer taken with [`STYLES`].
pub fn parse(snap: &Value) -> DomFacts {
    let strings: Vec<&str> =
        snap["strings"].as_array().map(|a| a.iter().map(|s| s.as_str().unwrap_or("")).collect()).unwrap_or_default();
    let st = |i: i64| -> &str { usize::try_from(i).ok().and_then(|i| strings.get(i).copied()).unwrap_or("") };
    let docs: &[Value] = snap["documents"].as_array().map_or(&[], Vec::as_slice);
    let frame_of_doc: Vec<String> = docs.iter().map(|d| st(d["frameId"].as_i64().unwrap_or(-1)).to_string()).collect();
    let mut out = DomFacts::default();
    for (di, d) in docs.iter().enumerate() {
        let frame = frame_of_doc[di].clone();
        out.titles.insert(frame.clone(), st(d["title"].as_i64().unwrap_or(-1)).to_string());
        let n = &d["nodes"];
        let parent = ints(&n["parentIndex"]);
        let backend = ints(&n["backendNodeId"]);
        let names = ints(&n["nodeName"]);
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
        let shadow = rare_str("shadowRootType");
        let content_doc = rare_str("contentDocumentIndex");
        let input_value = rare_str("inputValue");
        // Layout: bounds and styles of rendered nodes.
        let l = &d["layout"];
        let mut boxes: HashMap<usize, (f64, f64, &str, &str)> = HashMap::new();
        let bounds: &[Value] = l["bounds"].as_array().map_or(&[], Vec::as_slice);
        let styles: &[Value] = l["styles"].as_array().map_or(&[], Vec::as_slice);
        for (k, ni) in ints(&l["nodeIndex"]).into_iter().enumerate() {
            let Ok(ni) = usize::try_from(ni) else { continue };
            let b = bounds.get(k).map(ints_f).unwrap_or_default();
            let s = styles.get(k).map(ints).unwrap_or_default();
            let (w, h) = (b.get(2).copied().unwrap_or(0.0), b.get(3).copied().unwrap_or(0.0));
            let vis = st(s.get(1).copied().unwrap_or(-1));
            let op = st(s.get(2).copied().unwrap_or(-1));
            // A node with several layout objects (a split inline) keeps the largest box.
            let e = boxes.entry(ni).or_insert((0.0, 0.0, vis, op));
            if w * h > e.0 * e.1 {
                *e = (w, h, vis, op);
            }
        }
        let attrs: &[Value] = n["attributes"].as_array().map_or(&[], Vec::as_slice);
        let mut inert = vec![false; count];
        let mut closed = vec![false; count];
        let mut transparent = vec![false; count];
        for i in 0..count {
            let p = usize::try_from(parent.get(i).copied().unwrap_or(-1)).ok();
            let a = attrs.get(i).map(ints).unwrap_or_default();
            let attr = |name: &str| -> Option<&str> {
                a.chunks(2).find(|kv| st(kv[0]).eq_ignore_ascii_case(name)).map(|kv| st(*kv.get(1).unwrap_or(&-1)))
            };
            inert[i] = p.is_some_and(|p| inert[p]) || attr("inert").is_some();
            closed[i] = p.is_some_and(|p| closed[p]) || shadow.get(&i).is_some_and(|v| st(*v) == "closed");
            let (w, h, vis, op) = boxes.get(&i).copied().unwrap_or((0.0, 0.0, "", ""));
            transparent[i] =
                p.is_some_and(|p| transparent[p]) || (!op.is_empty() && op.parse::<f64>().is_ok_and(|o| o == 0.0));
            let visible = w > 0.0 && h > 0.0 && vis == "visible" && !transparent[i];
            let child_frame =
                content_doc.get(&i).and_then(|d| usize::try_from(*d).ok()).and_then(|d| frame_of_doc.get(d).cloned());
            let facts = Facts {
                frame: frame.clone(),
                tag: st(names.get(i).copied().unwrap_or(-1)).to_ascii_lowercase(),
                id: attr("id").unwrap_or("").to_string(),
                input_type: attr("type").unwrap_or("").to_ascii_lowercase(),
                autocomplete: attr("autocomplete").unwrap_or("").to_ascii_lowercase(),
                visible,
                clickable: clickable[i],
                inert: inert[i],
                in_closed_shadow: closed[i],
                child_frame,
                has_value: input_value.get(&i).is_some_and(|v| !st(*v).is_empty()),
            };
            out.nodes.insert(backend.get(i).copied().unwrap_or(-1), facts);
        }
    }
    out
}

fn ints_f(v: &Value) -> Vec<f64> {
    v.as_array().map(|a| a.iter().map(|x| x.as_f64().unwrap_or(0.0)).collect()).unwrap_or_default()
}

impl Facts {
    /// A password or payment-card field: its value is never returned.
    pub fn secret(&self) -> bool {
        self.input_type == "password" || self.autocomplete.split_whitespace().any(|t| t.starts_with("cc-"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn facts_join_layout_styles_shadow_roots_and_inheritance() {
        let strings = [
            "F1",
            "T",
            "HTML",
            "BODY",
            "DIV",
            "#document-fragment",
            "BUTTON",
            "SPAN",
            "A",
            "id",
            "a",
            "inert",
            "",
            "block",
            "visible",
            "1",
            "0",
            "closed",
        ];
        let s = |x: &str| strings.iter().position(|y| *y == x).unwrap() as i64;
        let (b, v, one, zero) = (s("block"), s("visible"), s("1"), s("0"));
        // 0 html > 1 body > { 2 div#a (clickable), 3 div host > 4 closed root > 5 button,
        //                     6 div[inert] > 7 span, 8 div (opacity 0) > 9 a (clickable) }
        let snap = json!({
            "strings": strings,
            "documents": [{
                "frameId": s("F1"), "title": s("T"),
                "nodes": {
                    "parentIndex": [-1, 0, 1, 1, 3, 4, 1, 6, 1, 8],
                    "nodeName": [s("HTML"), s("BODY"), s("DIV"), s("DIV"), s("#document-fragment"), s("BUTTON"), s("DIV"), s("SPAN"), s("DIV"), s("A")],
                    "backendNodeId": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
                    "attributes": [[], [], [s("id"), s("a")], [], [], [], [s("inert"), s("")], [], [], []],
                    "isClickable": {"index": [2, 9]},
                    "shadowRootType": {"index": [4], "value": [s("closed")]},
                },
                "layout": {
                    "nodeIndex": [2, 3, 5, 7, 8, 9],
                    "bounds": [[0, 0, 10, 10], [0, 0, 10, 10], [0, 0, 10, 10], [0, 0, 10, 10], [0, 0, 10, 10], [0, 0, 10, 10]],
                    "styles": [[b, v, one], [b, v, one], [b, v, one], [b, v, one], [b, v, zero], [b, v, one]],
                },
            }],
        });
        let f = parse(&snap);
        assert_eq!(f.titles["F1"], "T");
        let a = &f.nodes[&3];
        assert!(a.visible && a.clickable && !a.inert && !a.in_closed_shadow);
        assert_eq!((a.tag.as_str(), a.id.as_str(), a.frame.as_str()), ("div", "a", "F1"));
        assert!(!f.nodes[&4].in_closed_shadow, "the host is outside its root");
        assert!(f.nodes[&6].in_closed_shadow && f.nodes[&6].visible);
        assert!(f.nodes[&8].inert, "inherited from the inert parent");
        assert!(!f.nodes[&10].visible, "opacity 0 on a parent hides the child");
        assert!(!f.nodes[&2].visible, "no layout object: not rendered");
    }
}
