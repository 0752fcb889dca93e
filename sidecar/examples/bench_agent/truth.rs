//! The ground truth (`tests/fixtures/agent/bench.json`) and how an outline is scored against
//! it, the same way for both tools.

use std::collections::BTreeMap;

use serde::Deserialize;

/// The fixture corpus directory.
pub const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/agent");

/// `bench.json`: what each page offers, which refs must go stale, which actions must fail.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Truth {
    #[allow(dead_code)]
    pub about: Vec<String>,
    pub pages: Vec<Page>,
    pub stale: Vec<Check>,
    pub fail: Vec<Check>,
}

/// One page: the names a person can act on, and those left out of both counts (with why).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Page {
    pub page: String,
    pub actionable: Vec<String>,
    #[serde(default)]
    pub either: BTreeMap<String, String>,
}

/// One stale-ref or failed-action case: snapshot `page`, take the ref of `ref`, run `steps`
/// (stale) or the `setup` script (fail), then `act` on that ref.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Check {
    pub name: String,
    pub page: String,
    #[serde(rename = "ref")]
    pub target: String,
    #[serde(default)]
    pub steps: Vec<Step>,
    #[serde(default)]
    pub setup: Option<String>,
    pub act: Act,
    #[serde(default)]
    pub text: Option<String>,
    /// Stale cases: the `stale_ref` reason Porthole must give.
    #[serde(default)]
    pub reason: Option<String>,
    /// Fail cases: the error code Porthole must give.
    #[serde(default)]
    pub code: Option<String>,
}

/// What happens to the page between the snapshot and the action of a stale case.
#[derive(Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Step {
    /// Click the element of that name (its ref from the snapshot).
    Click(String),
    /// Load the same URL again (a new document) and wait until it has loaded.
    Reload,
    /// Run this script in the page.
    Eval(String),
    /// Wait until the page's text contains this.
    WaitText(String),
}

/// The action taken on the ref.
#[derive(Deserialize, Clone, Copy, PartialEq, Eq, Debug)]
#[serde(rename_all = "snake_case")]
pub enum Act {
    Click,
    Fill,
    Check,
    Select,
}

impl Truth {
    /// Reads and parses `bench.json`; panics with the reason when it is not valid.
    pub fn load() -> Truth {
        let path = format!("{FIXTURES}/bench.json");
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {path}: {e}"));
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
    }
}

/// One element line of an outline (ours or Playwright's aria snapshot): `- role "name"
/// [attr]… [ref=R]…: text`.
#[derive(Debug, Clone)]
pub struct Line {
    pub role: String,
    /// The quoted name, else the inline text (unquoted).
    pub name: String,
    pub reference: Option<String>,
    pub disabled: bool,
    /// Playwright's `[cursor=pointer]`: its hint that something listens for clicks.
    pub pointer: bool,
}

/// Roles an agent takes as controls (protocol §9.7's list), plus ours for a DOM-only
/// clickable element.
const ACTIONABLE_ROLES: &[&str] = &[
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
    "clickable",
];

impl Line {
    /// True if and only if the tool offers this element as something to act on: it has a
    /// ref, an actionable role or a click hint, and is not marked disabled.
    pub fn offered(&self) -> bool {
        self.reference.is_some() && !self.disabled && (ACTIONABLE_ROLES.contains(&self.role.as_str()) || self.pointer)
    }
}

/// Parses every element line of an outline; other lines (`/url:` properties, headers) are
/// skipped.
pub fn parse(outline: &str) -> Vec<Line> {
    outline.lines().filter_map(parse_line).collect()
}

fn parse_line(line: &str) -> Option<Line> {
    let rest = line.trim_start().strip_prefix("- ")?;
    // YAML quotes a whole entry when it holds special characters.
    let rest = rest.strip_prefix('\'').map(|r| r.trim_end_matches('\'')).unwrap_or(rest);
    let role_end = rest.find([' ', ':']).unwrap_or(rest.len());
    let role = rest[..role_end].to_string();
    if role.is_empty() || role.starts_with('/') {
        return None;
    }
    let mut rest = rest[role_end..].trim_start();
    let mut name = String::new();
    if let Some(r) = rest.strip_prefix('"') {
        let end = quoted_end(r);
        name = r[..end].replace("\\\"", "\"");
        rest = r[(end + 1).min(r.len())..].trim_start();
    }
    let (mut reference, mut disabled, mut pointer) = (None, false, false);
    while let Some(r) = rest.strip_prefix('[') {
        let end = r.find(']').unwrap_or(r.len());
        let attr = &r[..end];
        if let Some(v) = attr.strip_prefix("ref=") {
            reference = Some(v.to_string());
        }
        disabled |= attr == "disabled";
        pointer |= attr == "cursor=pointer";
        rest = r[(end + 1).min(r.len())..].trim_start();
    }
    if name.is_empty() {
        if let Some(text) = rest.strip_prefix(':') {
            name = text.trim().trim_matches('"').to_string();
        }
    }
    Some(Line { role, name, reference, disabled, pointer })
}

/// The byte index of the closing quote of a quoted string (after its opening quote).
fn quoted_end(s: &str) -> usize {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return i,
            _ => i += 1,
        }
    }
    b.len()
}

/// The ref of the first offered line named `name`, else of any line so named.
pub fn ref_of(lines: &[Line], name: &str) -> Option<String> {
    let named = || lines.iter().filter(|l| l.name == name && l.reference.is_some());
    named().find(|l| l.offered()).or_else(|| named().next()).and_then(|l| l.reference.clone())
}

/// A page's score: actionable names found, out of how many; offered elements, and which
/// of them are false.
#[derive(Default)]
pub struct Score {
    pub found: usize,
    pub actionable: usize,
    pub offered: usize,
    pub missed: Vec<String>,
    pub false_offers: Vec<String>,
}

/// Scores `lines` (one snapshot of `page`) against the page's truth.
pub fn score(page: &Page, lines: &[Line]) -> Score {
    let offered: Vec<&Line> = lines.iter().filter(|l| l.offered()).collect();
    let mut s = Score { actionable: page.actionable.len(), offered: offered.len(), ..Score::default() };
    for name in &page.actionable {
        if offered.iter().any(|l| &l.name == name) {
            s.found += 1;
        } else {
            s.missed.push(name.clone());
        }
    }
    for l in offered {
        if !page.actionable.contains(&l.name) && !page.either.contains_key(&l.name) {
            s.false_offers.push(format!("{} {:?}", l.role, l.name));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_of_both_outlines_parse() {
        let ours = parse(
            "- textbox \"User\" [ref=e3]: \"alice\"\n- button \"Send\" [disabled]\n- clickable \"Open\" [ref=e4]",
        );
        assert_eq!((ours[0].name.as_str(), ours[0].reference.as_deref()), ("User", Some("e3")));
        assert!(ours[0].offered() && !ours[1].offered() && ours[2].offered());
        let pw =
            parse("  - generic [ref=f1e2] [cursor=pointer]: Open settings\n  - /url: /x\n  - paragraph [ref=e4]: Hi");
        assert_eq!(pw.len(), 2);
        assert!(pw[0].offered() && pw[0].name == "Open settings" && !pw[1].offered());
    }
}
