//! Reading less of a page (issue 25 items 1 and 2): `find`, `text`, and the snapshot's
//! `--query`, `--from` (cursor) and `--diff`. All of them work on the outline's lines
//! ([`super::snapshot::outline`]): one walk of the page, one ref table, so a ref `find` or
//! `text` prints is the ref `snapshot` prints for the same node.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use serde_json::{json, Value};

use super::snapshot::{Line, MAX_NAME_CHARS};

/// Default number of matches `find` prints.
pub const DEFAULT_FIND_LIMIT: usize = 20;
/// Allowed `find` limits.
pub const FIND_LIMIT_RANGE: std::ops::RangeInclusive<usize> = 1..=500;
/// Longest text a `find` match prints whole, in characters (a longer one ends with "…").
pub const MAX_FIND_CHARS: usize = 4000;
/// Most bytes of matches `find` prints: past them, the rest are counted, not printed.
pub const MAX_FIND_BYTES: usize = 64 * 1024;
/// Default budget of `text`, in bytes.
pub const DEFAULT_TEXT_BYTES: usize = 16 * 1024;

/// Landmark roles: where a match is said to be.
const LANDMARKS: &[&str] =
    &["main", "navigation", "banner", "contentinfo", "complementary", "region", "form", "search", "dialog", "article"];
/// Roles `text` prints last (and so cuts first): the page's furniture.
const FURNITURE: &[&str] = &["navigation", "banner", "contentinfo", "complementary"];
/// Roles whose text lives in their name (the outline leaves out the text under them that
/// the name already says): `text` prints the name of such a line when nothing under it is
/// printed.
const NAMED_TEXT: &[&str] = &["cell", "columnheader", "rowheader", "gridcell", "row", "listitem"];
/// A table's cells, joined with ` | ` on their row's line in `text`.
const CELLS: &[&str] = &["cell", "columnheader", "rowheader", "gridcell"];

fn quote(t: &str) -> String {
    serde_json::to_string(t).unwrap_or_default()
}

/// `t` cut to `n` characters, the last one "…", when longer.
fn cut_chars(t: &str, n: usize) -> String {
    if t.chars().count() <= n {
        t.to_string()
    } else {
        format!("{}…", t.chars().take(n - 1).collect::<String>())
    }
}

/// Each line's parent line (the nearest earlier line less deep), by index.
fn parents(lines: &[Line]) -> Vec<Option<usize>> {
    let mut stack: Vec<usize> = Vec::new();
    let mut out = Vec::with_capacity(lines.len());
    for (i, l) in lines.iter().enumerate() {
        while stack.last().is_some_and(|&p| lines[p].depth >= l.depth) {
            stack.pop();
        }
        out.push(stack.last().copied());
        stack.push(i);
    }
    out
}

/// What `find` looks for.
#[derive(Debug, Clone, Default)]
pub struct Find {
    /// Case-insensitive substring of an element's name or a text's whole text.
    pub text: Option<String>,
    /// The role, exactly (case-insensitive).
    pub role: Option<String>,
    /// Case-insensitive substring of the name (with `role`).
    pub name: Option<String>,
}

impl Find {
    fn matches(&self, l: &Line) -> bool {
        let has = |hay: &str, needle: &str| hay.to_lowercase().contains(&needle.to_lowercase());
        // A line with no name matches a role alone (`--role status`): nothing else.
        if l.name.is_empty() && (self.role.is_none() || self.text.is_some() || self.name.is_some()) {
            return false;
        }
        if let Some(r) = &self.role {
            if !l.role.eq_ignore_ascii_case(r) {
                return false;
            }
        }
        self.text.as_deref().is_none_or(|t| has(&l.name, t)) && self.name.as_deref().is_none_or(|n| has(&l.name, n))
    }
}

/// The outline lines under line `i` (its subtree), as `snapshot` shows them, indented under
/// a `find` match, up to [`MAX_FIND_CHARS`] characters of their text; then how many more.
fn under(lines: &[Line], i: usize) -> Vec<String> {
    let depth = lines[i].depth;
    let sub = lines[i + 1..].iter().take_while(|l| l.depth > depth);
    let mut out = Vec::new();
    let mut chars = 0;
    let mut more = 0;
    for l in sub {
        if more > 0 || chars >= MAX_FIND_CHARS {
            more += 1;
            continue;
        }
        chars += l.text.chars().count();
        out.push(format!("{}- {}", "  ".repeat(l.depth - depth - 1), l.text));
    }
    if more > 0 {
        out.push(format!("[{more} more lines under it: 'ph browser snapshot' shows them]"));
    }
    out
}

/// `find`: the lines matching `q` in document order, at most `limit` (and no more once
/// [`MAX_FIND_BYTES`] are printed) → `{"text","matches":
/// [{"line","ref","locator","under"?}],"total"}`. A match with a ref is its outline line; one without
/// is its whole text (up to [`MAX_FIND_CHARS`]) and a locator: the nearest landmark around it,
/// the nearest heading at or before it, and the nearest ancestor with a ref. A match with no
/// name (found by its role alone: `find --role status`) is followed by the lines under it as
/// `snapshot` shows them (`under`, up to [`MAX_FIND_CHARS`] characters of them).
pub fn find(lines: &[Line], q: &Find, limit: usize) -> Value {
    let parent = parents(lines);
    let mut matches = Vec::new();
    let mut text = String::new();
    let mut total = 0;
    // The nearest heading at or before each line, updated as the walk goes.
    let mut heading: Option<usize> = None;
    for (i, l) in lines.iter().enumerate() {
        if l.role == "heading" {
            heading = Some(i);
        }
        if !q.matches(l) {
            continue;
        }
        total += 1;
        if matches.len() >= limit || text.len() >= MAX_FIND_BYTES {
            continue;
        }
        let line = if l.num.is_some() || !l.shortened {
            l.text.clone()
        } else if l.role == "text" {
            format!("text: {}", quote(&cut_chars(&l.name, MAX_FIND_CHARS)))
        } else {
            format!("{} {}", l.role, quote(&cut_chars(&l.name, MAX_FIND_CHARS)))
        };
        let mut at = Vec::new();
        let mut inside = None;
        let mut landmark = None;
        let mut p = parent[i];
        while let Some(k) = p {
            let a = &lines[k];
            if inside.is_none() && a.num.is_some() {
                inside = Some(k);
            }
            if landmark.is_none() && LANDMARKS.contains(&a.role.as_str()) {
                landmark = Some(k);
            }
            p = parent[k];
        }
        let label = |k: usize| {
            let a = &lines[k];
            if a.name.is_empty() {
                a.role.clone()
            } else {
                format!("{} {}", a.role, quote(&cut_chars(&a.name, 80)))
            }
        };
        if let Some(k) = landmark {
            at.push(format!("in {}", label(k)));
        }
        if let Some(k) = heading.filter(|&h| h != i) {
            at.push(format!("under {}", label(k)));
        }
        if let Some(k) = inside {
            at.push(format!("inside {} e{}", lines[k].role, lines[k].num.unwrap_or(0)));
        }
        let locator = if l.num.is_some() { String::new() } else { at.join(" · ") };
        text.push_str(&format!("- {line}\n"));
        let below = if l.name.is_empty() { under(lines, i) } else { Vec::new() };
        for b in &below {
            text.push_str(&format!("  {b}\n"));
        }
        if !locator.is_empty() {
            text.push_str(&format!("  ({locator})\n"));
        }
        let mut m = json!({"line": line, "ref": l.num.map(|n| format!("e{n}")), "locator": locator});
        if l.name.is_empty() {
            m["under"] = json!(below);
        }
        matches.push(m);
    }
    if total > matches.len() {
        text.push_str(&format!("[{} more matches; use --limit N or a narrower TEXT]\n", total - matches.len()));
    }
    if total == 0 {
        text.push_str("[no match]\n");
    }
    json!({"text": text, "matches": matches, "total": total})
}

/// `text`: the readable text of `lines` within `max_bytes` → `{"text","bytes","cut":{"bytes",
/// "furniture_bytes"}|null}`. Main content first (the first `main`, else the first
/// `article`), then the rest, then navigation, banner, contentinfo and complementary (cut
/// first when over budget). Texts are whole; headings are `#` lines; controls and links are
/// inline with their refs (`[link "Pricing" e12]`); lines under one parent run together.
/// A table row is one line, its cells joined by ` | `; a cell (or row, list item) whose text
/// is in its name is printed by its name, once.
pub fn text(lines: &[Line], max_bytes: usize) -> Value {
    let parent = parents(lines);
    // Which lines print something of their own, and which have a line under them that does
    // (a reverse pass: a line's descendants come after it).
    let mut below = vec![false; lines.len()];
    let mut own = vec![false; lines.len()];
    for i in (0..lines.len()).rev() {
        let l = &lines[i];
        let named = !l.name.is_empty();
        own[i] = l.role == "text"
            || l.num.is_some()
            || (named && (l.role == "img" || l.role == "heading"))
            || (named && NAMED_TEXT.contains(&l.role.as_str()) && !below[i]);
        if let Some(p) = parent[i] {
            below[p] |= own[i] || below[i];
        }
    }
    // Each line's row (itself or its nearest ancestor `row`) and cell: the lines of one row
    // run together, a new cell after ` | `.
    let nearest = |i: usize, roles: &[&str]| {
        let mut p = Some(i);
        while let Some(k) = p {
            if roles.contains(&lines[k].role.as_str()) {
                return Some(k);
            }
            p = parent[k];
        }
        None
    };
    // Zones: 0 main content, 1 the rest, 2 furniture.
    let main = lines.iter().position(|l| l.role == "main").or_else(|| lines.iter().position(|l| l.role == "article"));
    let zone: Vec<u8> = (0..lines.len())
        .map(|i| {
            let mut z = 1;
            let mut p = Some(i);
            while let Some(k) = p {
                if Some(k) == main {
                    return 0;
                }
                if FURNITURE.contains(&lines[k].role.as_str()) {
                    z = 2;
                }
                p = parent[k];
            }
            z
        })
        .collect();
    let mut out = String::new();
    let mut cut = 0usize;
    let mut cut_furniture = 0usize;
    for z in 0..3u8 {
        let mut para = String::new();
        let mut para_parent: Option<Option<usize>> = None;
        let mut para_cell: Option<usize> = None;
        let mut block = Vec::new();
        let flush = |para: &mut String, block: &mut Vec<String>| {
            if !para.is_empty() {
                block.push(std::mem::take(para));
            }
        };
        for (i, l) in lines.iter().enumerate().filter(|(i, _)| zone[*i] == z) {
            let inline = if l.role == "text" {
                Some(l.name.clone())
            } else if let Some(n) = l.num {
                Some(if l.name.is_empty() {
                    format!("[{} e{n}]", l.role)
                } else {
                    format!("[{} {} e{n}]", l.role, quote(&cut_chars(&l.name, MAX_NAME_CHARS)))
                })
            } else if l.role == "img" && !l.name.is_empty() {
                Some(format!("[img {}]", quote(&l.name)))
            } else if own[i] && l.role != "heading" {
                Some(l.name.clone())
            } else {
                None
            };
            let row = nearest(i, &["row"]);
            match inline {
                Some(t) => {
                    // The lines of one row are one line; others run together under one parent.
                    let leaf = NAMED_TEXT.contains(&l.role.as_str()) && row != Some(i);
                    let group = row.or(if leaf { Some(i) } else { parent[i] });
                    let cell = nearest(i, CELLS);
                    if para_parent != Some(group) {
                        flush(&mut para, &mut block);
                        para_parent = Some(group);
                        para_cell = cell;
                    }
                    if !para.is_empty() {
                        para.push_str(if row.is_some() && cell != para_cell { " | " } else { " " });
                    }
                    para_cell = cell;
                    para.push_str(&t);
                }
                // Within a row, a line that prints nothing (the row itself, a cell holding
                // a link) keeps the row's line going.
                None if row.is_some() && para_parent == Some(row) && l.role != "heading" => {}
                None => {
                    flush(&mut para, &mut block);
                    para_parent = None;
                    if l.role == "heading" && !l.name.is_empty() {
                        let hashes = "#".repeat(l.level.unwrap_or(2).clamp(1, 6) as usize);
                        block.push(format!("{hashes} {}", l.name));
                    }
                }
            }
        }
        flush(&mut para, &mut block);
        if z == 2 && !block.is_empty() && out.len() < max_bytes {
            block.insert(0, "[page furniture: navigation, header, footer, aside]".into());
        }
        for b in block {
            let line = format!("{b}\n");
            if cut == 0 && out.len() + line.len() <= max_bytes {
                out.push_str(&line);
                continue;
            }
            // The first line over the budget: what fits of it, cut on a character boundary,
            // so a long article still shows its start.
            if cut == 0 && out.len() + 64 < max_bytes {
                let mut end = max_bytes - out.len() - "…\n".len();
                while !line.is_char_boundary(end) {
                    end -= 1;
                }
                out.push_str(&line[..end]);
                out.push_str("…\n");
                cut += line.len() - end;
            } else {
                cut += line.len();
            }
            if z == 2 {
                cut_furniture += line.len();
            }
        }
    }
    let bytes = out.len();
    json!({
        "text": out,
        "bytes": bytes,
        "cut": (cut > 0).then(|| json!({"bytes": cut, "furniture_bytes": cut_furniture,
            "reason": format!("the text is over the {max_bytes}-byte budget")})),
    })
}

/// One part of a `--query`: a key (`role`, `name`) and how the value matches.
#[derive(Debug, Clone, PartialEq)]
struct Term {
    key: String,
    /// `~=`: a case-insensitive substring; `=`: equal (case-insensitive).
    contains: bool,
    value: String,
}

/// A parsed `--query` (`role=button,name~=save`).
#[derive(Debug, Clone, PartialEq)]
pub struct Query(Vec<Term>);

impl Query {
    /// Parses `role=R,name~=TEXT` (terms joined by `,`; a part that is no term belongs to
    /// the value before it, so a name may hold commas) → the query, or what is wrong.
    pub fn parse(s: &str) -> Result<Query, String> {
        let mut terms: Vec<Term> = Vec::new();
        for part in s.split(',') {
            let term = ["role", "name"].iter().find_map(|k| {
                let rest = part.trim_start().strip_prefix(k)?;
                let (contains, v) = match rest.strip_prefix("~=") {
                    Some(v) => (true, v),
                    None => (false, rest.strip_prefix('=')?),
                };
                Some(Term { key: k.to_string(), contains, value: v.to_string() })
            });
            match (term, terms.last_mut()) {
                (Some(t), _) => terms.push(t),
                (None, Some(last)) => {
                    last.value.push(',');
                    last.value.push_str(part);
                }
                (None, None) => return Err(format!("query terms are role=R or name=N or name~=N, got {part:?}")),
            }
        }
        if terms.iter().any(|t| t.value.is_empty()) {
            return Err("a query term has no value".into());
        }
        Ok(Query(terms))
    }

    fn matches(&self, l: &Line) -> bool {
        self.0.iter().all(|t| {
            let hay = if t.key == "role" { &l.role } else { &l.name };
            if t.contains {
                hay.to_lowercase().contains(&t.value.to_lowercase())
            } else {
                hay.eq_ignore_ascii_case(&t.value) || hay.to_lowercase() == t.value.to_lowercase()
            }
        })
    }

    /// The lines matching, each with its ancestors' lines (once each) for context, in
    /// document order → (lines, how many matched).
    pub fn filter(&self, lines: &[Line]) -> (Vec<Line>, usize) {
        let parent = parents(lines);
        let mut keep = vec![false; lines.len()];
        let mut matched = 0;
        for (i, l) in lines.iter().enumerate() {
            if !self.matches(l) {
                continue;
            }
            matched += 1;
            let mut p = Some(i);
            while let Some(k) = p {
                if keep[k] && k != i {
                    break;
                }
                keep[k] = true;
                p = parent[k];
            }
        }
        (lines.iter().zip(keep).filter(|(_, k)| *k).map(|(l, _)| l.clone()).collect(), matched)
    }
}

/// The revision a cursor belongs to: the tab's main document (tab, loader id) and the
/// options that shape the lines (`-i`, `--query`, `--ref`), hashed to 8 hex digits.
pub fn revision(tab: &str, loader: &str, shape: &str) -> String {
    let mut h = DefaultHasher::new();
    (tab, loader, shape).hash(&mut h);
    format!("{:08x}", h.finish() as u32)
}

/// A cursor: `REVISION.LINE`.
pub fn cursor(revision: &str, next: usize) -> String {
    format!("{revision}.{next}")
}

/// The line a cursor continues from, if it belongs to `revision`. `Err(true)` when it names
/// another revision, `Err(false)` when it is malformed.
pub fn parse_cursor(c: &str, revision: &str) -> Result<usize, bool> {
    let (rev, at) = c.split_once('.').ok_or(false)?;
    let at: usize = at.parse().map_err(|_| false)?;
    if rev.len() != 8 || !rev.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(false);
    }
    if rev != revision {
        return Err(true);
    }
    Ok(at)
}

/// Where line `at` sits, for a snapshot continued there: its ancestors' roles and names
/// (names cut at 40 characters), outermost first, joined by ` › ` ("" at the top level).
pub fn context(lines: &[Line], at: usize) -> String {
    let Some(l) = lines.get(at) else { return String::new() };
    let mut chain = Vec::new();
    let mut depth = l.depth;
    for a in lines[..at].iter().rev() {
        if depth == 0 {
            break;
        }
        if a.depth < depth {
            depth = a.depth;
            chain.push(if a.name.is_empty() {
                a.role.clone()
            } else {
                format!("{} {}", a.role, quote(&cut_chars(&a.name, 40)))
            });
        }
    }
    chain.reverse();
    chain.join(" › ")
}

/// What `--diff` compares: a line as shown (indentation and text).
pub type Shown = (usize, String);

/// The lines of `now` as they are kept for the next `--diff`.
pub fn shown(lines: &[Line]) -> Vec<Shown> {
    lines.iter().map(|l| (l.depth, l.text.clone())).collect()
}

/// Most cells (changed lines before × changed lines after, once the common start and end
/// are set aside) compared line by line (a longest common subsequence, 4 bytes a cell);
/// past it, the whole middle part is said removed and added.
const MAX_DIFF_CELLS: usize = 1_000_000;

/// `--diff`: what changed from `before` to `now`, as lines: `+ ` added, `- ` removed, `~ `
/// changed (a removed line and an added one at the same place with the same role, the new
/// text and then `(was: …)`) → (text, added, removed, changed).
pub fn diff(before: &[Shown], now: &[Shown]) -> (String, usize, usize, usize) {
    let pre = before.iter().zip(now).take_while(|(a, b)| a == b).count();
    let suf = before[pre..].iter().rev().zip(now[pre..].iter().rev()).take_while(|(a, b)| a == b).count();
    let (a, b) = (&before[pre..before.len() - suf], &now[pre..now.len() - suf]);
    // Edit script over the middle: Some(true) added, Some(false) removed, None kept.
    let mut ops: Vec<(Option<bool>, &Shown)> = Vec::new();
    if a.len().saturating_mul(b.len()) <= MAX_DIFF_CELLS {
        let (n, m) = (a.len(), b.len());
        let mut t = vec![0u32; (n + 1) * (m + 1)];
        for i in (0..n).rev() {
            for j in (0..m).rev() {
                t[i * (m + 1) + j] = if a[i] == b[j] {
                    t[(i + 1) * (m + 1) + j + 1] + 1
                } else {
                    t[(i + 1) * (m + 1) + j].max(t[i * (m + 1) + j + 1])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        while i < n || j < m {
            if i < n && j < m && a[i] == b[j] {
                ops.push((None, &a[i]));
                i += 1;
                j += 1;
            } else if j < m && (i == n || t[i * (m + 1) + j + 1] >= t[(i + 1) * (m + 1) + j]) {
                ops.push((Some(true), &b[j]));
                j += 1;
            } else {
                ops.push((Some(false), &a[i]));
                i += 1;
            }
        }
    } else {
        ops.extend(a.iter().map(|l| (Some(false), l)));
        ops.extend(b.iter().map(|l| (Some(true), l)));
    }
    let role = |l: &Shown| l.1.split(' ').next().unwrap_or("").to_string();
    let (mut out, mut added, mut removed, mut changed) = (String::new(), 0, 0, 0);
    let mut k = 0;
    while k < ops.len() {
        if ops[k].0.is_none() {
            k += 1;
            continue;
        }
        // One run of removed and added lines, in order.
        let end = (k..ops.len()).find(|&e| ops[e].0.is_none()).unwrap_or(ops.len());
        let gone: Vec<&Shown> = ops[k..end].iter().filter(|o| o.0 == Some(false)).map(|o| o.1).collect();
        let new: Vec<&Shown> = ops[k..end].iter().filter(|o| o.0 == Some(true)).map(|o| o.1).collect();
        let pairs = gone.len().min(new.len());
        let line = |mark: &str, l: &Shown| format!("{mark} {}- {}", " ".repeat(l.0 * 2), l.1);
        for x in 0..gone.len().max(new.len()) {
            match (gone.get(x), new.get(x)) {
                (Some(g), Some(n)) if x < pairs && role(g) == role(n) && g.0 == n.0 => {
                    out.push_str(&format!("{} (was: {})\n", line("~", n), g.1));
                    changed += 1;
                }
                (g, n) => {
                    if let Some(g) = g {
                        out.push_str(&format!("{}\n", line("-", g)));
                        removed += 1;
                    }
                    if let Some(n) = n {
                        out.push_str(&format!("{}\n", line("+", n)));
                        added += 1;
                    }
                }
            }
        }
        k = end;
    }
    (out, added, removed, changed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn l(depth: usize, role: &str, name: &str, num: Option<u64>) -> Line {
        let text = match (role, num) {
            ("text", _) => format!("text: {}", quote(name)),
            (_, Some(n)) => format!("{role} {} [ref=e{n}]", quote(name)),
            _ if name.is_empty() => role.to_string(),
            _ => format!("{role} {}", quote(name)),
        };
        Line {
            depth,
            text,
            control: num.is_some(),
            has_ref: num.is_some(),
            role: role.into(),
            name: name.into(),
            num,
            level: (role == "heading").then_some(2),
            shortened: name.len() > MAX_NAME_CHARS,
        }
    }

    fn page() -> Vec<Line> {
        let long = "word ".repeat(100) + "the needle sentence.";
        vec![
            l(0, "navigation", "", None),
            l(1, "link", "Pricing", Some(1)),
            l(0, "main", "", None),
            l(1, "heading", "Docs", None),
            l(1, "paragraph", "", None),
            l(2, "text", &long, None),
            l(2, "link", "more pricing", Some(2)),
            l(2, "text", "after", None),
            l(1, "button", "Save", Some(3)),
        ]
    }

    #[test]
    fn find_gives_refs_or_whole_text_with_a_locator_and_counts_the_rest() {
        let lines = page();
        let v = find(&lines, &Find { text: Some("PRICING".into()), ..Find::default() }, 20);
        assert_eq!(v["total"], 2);
        assert_eq!(v["text"], "- link \"Pricing\" [ref=e1]\n- link \"more pricing\" [ref=e2]\n");
        let v = find(&lines, &Find { text: Some("needle".into()), ..Find::default() }, 20);
        let t = v["text"].as_str().unwrap();
        assert!(t.contains("the needle sentence.\""), "whole: {t}");
        assert!(t.contains("(in main · under heading \"Docs\")"), "{t}");
        let v = find(&lines, &Find { role: Some("link".into()), ..Find::default() }, 1);
        assert!(v["text"].as_str().unwrap().ends_with("[1 more matches; use --limit N or a narrower TEXT]\n"));
        let v = find(&lines, &Find { role: Some("button".into()), name: Some("sav".into()), ..Find::default() }, 5);
        assert_eq!(v["matches"][0]["ref"], "e3");
    }

    #[test]
    fn text_puts_main_first_inline_refs_and_furniture_last() {
        let v = text(&page(), 16384);
        let t = v["text"].as_str().unwrap();
        let want_start = "## Docs\nword word";
        assert!(t.starts_with(want_start), "{t}");
        assert!(t.contains("the needle sentence. [link \"more pricing\" e2] after\n[button \"Save\" e3]\n"), "{t}");
        assert!(t.ends_with("[page furniture: navigation, header, footer, aside]\n[link \"Pricing\" e1]\n"), "{t}");
        assert!(v["cut"].is_null());
        assert_eq!(context(&page(), 6), "main › paragraph");
        assert_eq!(context(&page(), 0), "");
        let v = text(&page(), 200);
        assert!(v["text"].as_str().unwrap().len() <= 200);
        assert!(v["cut"]["furniture_bytes"].as_u64().unwrap() > 0, "furniture is cut first");
    }

    #[test]
    fn a_role_alone_finds_unnamed_elements_with_what_is_under_them() {
        let lines = vec![
            l(0, "main", "", None),
            l(1, "status", "", None),
            l(2, "text", "Saved", None),
            l(1, "button", "Save", Some(1)),
        ];
        let v = find(&lines, &Find { role: Some("status".into()), ..Find::default() }, 20);
        assert_eq!(v["total"], 1, "{v:#}");
        assert_eq!(v["text"], "- status\n  - text: \"Saved\"\n  (in main)\n");
        assert_eq!(v["matches"][0]["under"], json!(["- text: \"Saved\""]));
        // A name or a text never matches an unnamed line.
        let v = find(&lines, &Find { role: Some("status".into()), name: Some("s".into()), ..Find::default() }, 20);
        assert_eq!(v["total"], 0);
        // Bounded: past MAX_FIND_CHARS characters of lines under it, how many more.
        let mut big = vec![l(0, "list", "", None)];
        big.extend((0..2000).map(|k| l(1, "text", &format!("item {k}"), None)));
        let v = find(&big, &Find { role: Some("list".into()), ..Find::default() }, 20);
        let t = v["text"].as_str().unwrap();
        assert!(t.len() < MAX_FIND_CHARS + 2000 && t.contains("more lines under it"), "{t}");
    }

    #[test]
    fn text_prints_table_rows_as_lines_of_cells_once() {
        let lines = vec![
            l(0, "main", "", None),
            l(1, "text", "1 product", None),
            l(1, "table", "", None),
            l(2, "rowgroup", "", None),
            l(3, "row", "Product SKU In stock", None),
            l(4, "columnheader", "Product", None),
            l(4, "columnheader", "SKU", None),
            l(4, "columnheader", "In stock", None),
            l(2, "rowgroup", "", None),
            l(3, "row", "Widget W-1 42", None),
            l(4, "cell", "Widget", None),
            l(5, "link", "Widget", Some(7)),
            l(4, "cell", "W-1", None),
            l(4, "cell", "42", None),
            l(3, "row", "Gadget", None),
            l(1, "list", "", None),
            l(2, "listitem", "One", None),
            l(2, "listitem", "", None),
            l(3, "text", "Two", None),
            l(2, "listitem", "Three", None),
        ];
        let v = text(&lines, 16384);
        assert_eq!(
            v["text"],
            "1 product\nProduct | SKU | In stock\n[link \"Widget\" e7] | W-1 | 42\nGadget\nOne\nTwo\nThree\n"
        );
        let v = text(&lines, 1024);
        assert!(v["cut"].is_null());
    }

    #[test]
    fn queries_keep_ancestors_and_cursors_know_their_revision() {
        let q = Query::parse("role=link,name~=MORE").unwrap();
        let (lines, n) = q.filter(&page());
        assert_eq!(n, 1);
        let roles: Vec<&str> = lines.iter().map(|l| l.role.as_str()).collect();
        assert_eq!(roles, ["main", "paragraph", "link"]);
        assert_eq!(Query::parse("name~=a,b").unwrap().0[0].value, "a,b");
        assert!(Query::parse("colour=red").is_err());
        let r = revision("T", "L", "");
        assert_eq!(parse_cursor(&cursor(&r, 42), &r), Ok(42));
        assert_eq!(parse_cursor(&cursor(&revision("T", "L2", ""), 42), &r), Err(true));
        assert_eq!(parse_cursor("nope", &r), Err(false));
    }

    #[test]
    fn diff_shows_only_what_changed() {
        let before = shown(&page());
        let mut now = page();
        now[8] = l(1, "button", "Saved", Some(3));
        now.insert(4, l(1, "text", "new note", None));
        let (t, added, removed, changed) = diff(&before, &shown(&now));
        assert_eq!((added, removed, changed), (1, 0, 1), "{t}");
        assert_eq!(t, "+   - text: \"new note\"\n~   - button \"Saved\" [ref=e3] (was: button \"Save\" [ref=e3])\n");
        assert_eq!(diff(&before, &before).0, "");
    }
}
