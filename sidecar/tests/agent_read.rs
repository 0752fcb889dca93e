//! Reading less of a page (issue 25 items 1 and 2) end to end: a real Chromium behind a
//! screencast pane, real local pages (`tests/fixtures/agent/read_*.html`) from a real HTTP
//! upstream. `find` and `text` on a long article (its texts in an open shadow root and in
//! same-site and cross-site frames too), a text over the outline's 300 characters said and
//! read whole, `snapshot --query`, `--diff` after one DOM change, and a 20,000-element page
//! paged by cursor to its end with every ref seen exactly once.

mod common;

use std::collections::HashSet;

use common::agent::{browser_pane, fixture_page, Agent, BrowserPane};
use common::{Sidecar, HANG};
use serde_json::{json, Value};

/// The sentence deep in the article's long paragraph (past its 300th character).
const DEEP: &str = "The quiet lighthouse keeper counts exactly forty-two gulls each dawn.";

/// Navigates to fixture `name` and waits for its load, without taking a snapshot (a
/// snapshot would count as the caller's last one for `--diff`).
async fn open(a: &Agent<'_>, base: &str, name: &str) {
    a.ok("navigate", json!({"url": format!("{base}/{name}")})).await;
    let url = format!("{}$", regex::escape(name));
    a.ok("wait", json!({"url": url, "timeout_ms": 20000})).await;
    a.ok("wait", json!({"load": true, "timeout_ms": 20000})).await;
}

/// Every `[ref=eN]` in `text`, in order.
fn refs(text: &str) -> Vec<String> {
    let re = regex::Regex::new(r"\[ref=(e[0-9]+)\]").unwrap();
    re.captures_iter(text).map(|c| c[1].to_string()).collect()
}

/// The ref on the line of `text` containing `needle`.
fn ref_of(text: &str, needle: &str) -> String {
    let line = text.lines().find(|l| l.contains(needle)).unwrap_or_else(|| panic!("no {needle:?} in\n{text}"));
    refs(line).into_iter().next().unwrap_or_else(|| panic!("no ref on {line:?}"))
}

/// `find` answers until `ok` holds for one (frames load on their own time), bounded by HANG.
async fn find_until(a: &Agent<'_>, body: Value, ok: impl Fn(&Value) -> bool) -> Value {
    let deadline = tokio::time::Instant::now() + HANG;
    loop {
        let v = a.ok("find", body.clone()).await;
        if ok(&v) {
            return v;
        }
        assert!(tokio::time::Instant::now() < deadline, "find {body} never matched: {v:#}");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn find_and_text_read_a_long_article_whole_and_the_snapshot_says_what_it_shortened() {
    let sc = Sidecar::start(&[]);
    let BrowserPane { base, pane, .. } = browser_pane(&sc, fixture_page, "read_diff.html").await;
    let a = Agent::new(&sc, pane);
    open(&a, &base, "read_article.html").await;

    // Both frames' texts are found (the cross-site one is read through its own target once
    // it has loaded), and the open shadow root's.
    let v = find_until(&a, json!({"text": "harbour bell"}), |v| v["total"] == 2).await;
    assert!(v["matches"].as_array().unwrap().iter().all(|m| m["ref"].is_null()), "{v:#}");
    let v = a.ok("find", json!({"text": "VELVET anchor"})).await;
    assert_eq!(v["total"], 1, "case-insensitive, inside the open shadow root: {v:#}");

    // The snapshot shortens the long paragraph at 300 characters and says so.
    let s = a.ok("snapshot", json!({})).await;
    let outline = s["text"].as_str().unwrap();
    assert!(!outline.contains(DEEP), "the deep sentence is past the 300th character: {outline}");
    assert!(s["shortened"].as_u64().unwrap() >= 1, "{s:#}");
    assert!(outline.contains("…\""), "{outline}");
    assert!(outline.contains("'ph browser find TEXT' or 'ph browser text [--ref R]' read them whole"), "{outline}");
    let pricing = ref_of(outline, "link \"Pricing\"");

    // find: the deep sentence whole, with where it is; refs are the snapshot's.
    let v = a.ok("find", json!({"text": "forty-two gulls"})).await;
    assert_eq!(v["total"], 1, "{v:#}");
    let m = &v["matches"][0];
    assert!(m["line"].as_str().unwrap().contains(DEEP), "whole: {m:#}");
    assert!(m["ref"].is_null());
    let locator = m["locator"].as_str().unwrap();
    assert!(locator.contains("in article") && locator.contains("under heading \"Counting at dawn\""), "{locator}");
    let v = a.ok("find", json!({"text": "pricing"})).await;
    assert_eq!(v["total"], 2, "the nav link and the article's link: {v:#}");
    assert_eq!(v["matches"][0]["ref"], pricing.as_str(), "the same ref table: {v:#}");
    let v = a.ok("find", json!({"role": "link", "limit": 2})).await;
    assert!(v["total"].as_u64().unwrap() > 2);
    assert!(v["text"].as_str().unwrap().contains("more matches"), "{v:#}");
    let v = a.ok("find", json!({"role": "button", "name": "shadow"})).await;
    assert_eq!(v["total"], 1, "{v:#}");
    assert!(v["matches"][0]["ref"].as_str().is_some_and(|r| r.starts_with('e')), "{v:#}");
    a.refused("find", json!({"name": "x"}), "bad_request").await;

    // text: main content first, the deep sentence whole, links inline with their refs, the
    // page furniture last.
    let v = a.ok("text", json!({})).await;
    let t = v["text"].as_str().unwrap();
    assert!(t.starts_with("# The lighthouse ledger\n"), "{t}");
    assert!(t.contains(DEEP), "{t}");
    assert!(t.contains("[link \"our pricing plans\" e"), "{t}");
    let furniture = t.find("[page furniture").expect("furniture after the article");
    assert!(t.find(DEEP).unwrap() < furniture && t[furniture..].contains(&format!("[link \"Pricing\" {pricing}]")));
    assert!(v["cut"].is_null(), "{v:#}");
    // Over a small budget: the furniture is cut first, and the cut is said.
    let v = a.ok("text", json!({"max_bytes": 1024})).await;
    assert!(v["text"].as_str().unwrap().len() <= 1024);
    assert!(v["cut"]["bytes"].as_u64().unwrap() > 0 && v["cut"]["furniture_bytes"].as_u64().unwrap() > 0, "{v:#}");
    // One element's text.
    let plans = ref_of(outline, "link \"our pricing plans\"");
    let v = a.ok("text", json!({"ref": plans})).await;
    assert_eq!(v["text"], format!("[link \"our pricing plans\" {plans}]\n"));

    // --query: the matching lines and their ancestors only.
    let v = a.ok("snapshot", json!({"query": "role=link,name~=PRICING"})).await;
    assert_eq!(v["matched"], 2, "{v:#}");
    let q = v["text"].as_str().unwrap();
    assert_eq!(refs(q).len(), 2, "{q}");
    assert!(!q.contains("Docs") && !q.contains("Legal") && q.contains("navigation"), "{q}");
    a.refused("snapshot", json!({"query": "colour=red"}), "bad_request").await;

    // --diff: the first of a document says there was none before; after one DOM change,
    // only that change.
    open(&a, &base, "read_diff.html").await;
    let v = a.ok("snapshot", json!({"diff": true})).await;
    assert_eq!(v["diff"]["earlier"], false, "{v:#}");
    assert!(v["text"].as_str().unwrap().contains("button \"Save\""), "the whole outline: {v:#}");
    let save = ref_of(v["text"].as_str().unwrap(), "button \"Save\"");
    let v = a.ok("snapshot", json!({"diff": true})).await;
    assert_eq!(v["text"], "", "nothing changed: {v:#}");
    a.ok("eval", json!({"js": "document.getElementById('status').textContent = 'Status: saved'", "allow_eval": true}))
        .await;
    let v = a.ok("snapshot", json!({"diff": true})).await;
    assert_eq!((v["diff"]["added"].as_u64(), v["diff"]["removed"].as_u64()), (Some(0), Some(0)), "{v:#}");
    assert_eq!(v["diff"]["changed"], 1, "{v:#}");
    assert_eq!(v["text"], "~   - text: \"Status: saved\" (was: text: \"Status: idle\")\n", "{v:#}");
    a.ok("eval", json!({"js": "document.querySelector('ul').append(Object.assign(document.createElement('li'), {textContent: 'Four'}))", "allow_eval": true}))
        .await;
    let v = a.ok("snapshot", json!({"diff": true})).await;
    assert_eq!(v["diff"]["added"], 2, "the item and its text: {v:#}");
    assert!(v["text"].as_str().unwrap().contains("+   - listitem"), "{v:#}");
    // The refs are kept: the button's is the one before.
    let s = a.ok("snapshot", json!({})).await;
    assert_eq!(ref_of(s["text"].as_str().unwrap(), "button \"Save\""), save);
}

/// Found by the task-suite bench (issue 25): `find --role status` found no unnamed status
/// (its text is under it, not in its name), and `text` left out table cells (their text is
/// in their names).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn find_lists_an_unnamed_status_by_role_and_text_prints_table_rows_once() {
    let sc = Sidecar::start(&[]);
    let BrowserPane { base, pane, .. } = browser_pane(&sc, fixture_page, "read_diff.html").await;
    let a = Agent::new(&sc, pane);
    open(&a, &base, "read_table.html").await;

    // A role alone: the unnamed status, with the text under it as the snapshot shows it.
    let v = a.ok("find", json!({"role": "status"})).await;
    assert_eq!(v["total"], 1, "{v:#}");
    assert_eq!(v["text"], "- status\n  - text: \"Saved\"\n  (in main · under heading \"Inventory\")\n", "{v:#}");
    assert_eq!(v["matches"][0]["under"], json!(["- text: \"Saved\""]), "{v:#}");
    // With a name, an unnamed line still does not match.
    let v = a.ok("find", json!({"role": "status", "name": "saved"})).await;
    assert_eq!(v["total"], 0, "{v:#}");

    // text: each shown row one line of its cells, in reading order, each text once; the
    // hidden row not at all; the link inline with its ref.
    let s = a.ok("snapshot", json!({})).await;
    let gadget = ref_of(s["text"].as_str().unwrap(), "link \"Gadget\"");
    let v = a.ok("text", json!({})).await;
    let t = v["text"].as_str().unwrap();
    let want = format!(
        "# Inventory\n2 products\nProduct | SKU | In stock\nWidget | W-1 | 42\n[link \"Gadget\" {gadget}] | G-2 | 7\n\
         First note\nSecond note\nSaved\n"
    );
    assert!(t.starts_with(&want), "{t}");
    assert!(!t.contains("Hidden thing"), "{t}");
    for once in ["Widget", "W-1", "Second note", "Saved"] {
        assert_eq!(t.matches(once).count(), 1, "{once:?} once in {t}");
    }
    // Within the budget.
    let v = a.ok("text", json!({"max_bytes": 1024})).await;
    assert!(v["text"].as_str().unwrap().len() <= 1024 && v["text"].as_str().unwrap().starts_with(&want), "{v:#}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_20000_element_page_pages_by_cursor_to_its_end_with_every_ref_once() {
    let sc = Sidecar::start(&[]);
    let BrowserPane { base, pane, .. } = browser_pane(&sc, fixture_page, "read_diff.html").await;
    let a = Agent::new(&sc, pane);
    open(&a, &base, "read_big.html").await;

    let mut seen: Vec<String> = Vec::new();
    let mut from: Option<String> = None;
    let mut pages = 0;
    let mut first_cursor = None;
    loop {
        let mut body = json!({"interactive": true, "max_bytes": 131072});
        if let Some(c) = &from {
            body["from"] = c.clone().into();
        }
        let v = a.ok("snapshot", body).await;
        pages += 1;
        let text = v["text"].as_str().unwrap();
        seen.extend(refs(text));
        match v["cut"]["cursor"].as_str() {
            Some(c) => {
                first_cursor.get_or_insert_with(|| c.to_string());
                from = Some(c.to_string());
            }
            None => {
                assert!(v["cut"].is_null(), "{v:#}");
                break;
            }
        }
        assert!(pages < 100, "the cursor does not advance");
    }
    assert!(pages >= 3, "several pages: {pages}");
    assert_eq!(seen.len(), 20_000, "every button's ref");
    assert_eq!(seen.iter().collect::<HashSet<_>>().len(), 20_000, "each exactly once");

    // A cursor of another document is refused, not continued.
    open(&a, &base, "read_diff.html").await;
    let e = a.refused("snapshot", json!({"interactive": true, "from": first_cursor.unwrap()}), "stale_cursor").await;
    assert!(e["message"].as_str().unwrap().contains("take a new snapshot"), "{e:#}");
    a.refused("snapshot", json!({"from": "nonsense"}), "bad_request").await;
}

/// The real `ph` in a real pane: `find`, `text`, a cut `snapshot` continued with the cursor
/// its note gives, and `--diff` (per caller: the pane's own), as an agent reads them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ph_finds_reads_pages_and_diffs_in_a_pane() {
    let sc = Sidecar::start_with_env(&[], &[("SHELL", "/bin/bash")]);
    let base = common::browser::serve(fixture_page);
    let r = sc.req("POST", "/api/terminals", Some(&json!({"cols": 220, "rows": 50}))).await;
    let t1 = r.json()["id"].as_str().unwrap().to_string();
    let _win = common::window::TestWindow::attach(&sc, &t1).await;
    let script = format!(
        r#"ph browser open {base}/read_article.html >/dev/null; ph browser wait --load; ph browser snapshot --diff | sed -n 2p; ph browser find "forty-two gulls"; echo "find rc=$?"; ph browser text --max-bytes 1024 | tail -1; echo "text rc=${{PIPESTATUS[0]}}"; c=$(ph browser snapshot --max-bytes 1024 | sed -n 's/.*--from \([0-9a-f]*\.[0-9]*\).*/\1/p'); echo "cursor=$c"; ph browser snapshot --max-bytes 1024 --from "$c" | head -2 | tail -1; echo "from rc=${{PIPESTATUS[0]}}"; ph browser snapshot --diff | sed -n 2,3p; ph browser snapshot --from 00000000.1; echo "stale rc=$?"; echo "DONE""#
    );
    let out = common::control::run_in(&sc, &t1, &script, "^DONE$").await;
    assert!(out.contains(DEEP) && out.contains("(in article · under heading \"Counting at dawn\")"), "{out}");
    assert!(out.contains("find rc=0"), "{out}");
    assert!(out.contains("[cut: ") && out.contains("navigation, header, footer or aside") && out.contains("text rc=0"));
    let cursor = out.lines().find_map(|l| l.strip_prefix("cursor=")).unwrap_or("");
    assert!(regex::Regex::new(r"^[0-9a-f]{8}\.[0-9]+$").unwrap().is_match(cursor), "a cursor in the cut note: {out}");
    assert!(out.contains("from rc=0") && out.contains("(continued at line "), "{out}");
    assert!(out.contains("[no earlier snapshot of this document by you: the whole outline]"), "{out}");
    assert!(
        out.contains(
            "[diff since your last snapshot of this document: 0 added, 0 removed, 0 changed]\n(nothing changed)"
        ),
        "{out}"
    );
    assert!(out.contains("[stale_cursor]") && out.contains("stale rc=2"), "{out}");
}
