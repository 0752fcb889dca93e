//! Evidence after every action (issue 25 item 3): each action's answer says what it
//! observably caused (a navigation, a new tab, a download, a focus move, the element's state,
//! nodes added or removed, a section shown, a text changed, a frame that changed, navigated or
//! appeared, same-process or cross-site), an action that changed nothing says so (and a focus
//! ring, a hover style or a class flashed while the button is down is nothing), and the third
//! such action in a row gets a hint that the agent is looping. Real Chromium, a real fixture
//! upstream, and the real `ph` for the printed form.

mod common;

use common::agent::{browser_pane, fixture_page, Agent};
use common::Sidecar;
use serde_json::{json, Value};

/// The ref of the first line of the interactive snapshot that contains `needle`.
fn ref_of(snapshot: &Value, needle: &str) -> String {
    common::agent::ref_on(snapshot["text"].as_str().unwrap(), needle)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_action_says_what_it_caused_and_nothing_says_nothing() {
    let sc = Sidecar::start(&[]);
    let bp = browser_pane(&sc, fixture_page, "evidence.html").await;
    let a = Agent::new(&sc, bp.pane.clone());
    let snap = a.ok("snapshot", json!({"interactive": true})).await;
    let click = |r: String| {
        let a = &a;
        async move { a.ok("act", json!({"action": "click", "ref": r})).await }
    };

    // A menu that expands: the element's state and the nodes it added.
    let out = click(ref_of(&snap, "button \"Account\"")).await;
    let ev = &out["evidence"];
    assert_eq!(ev["element"]["expanded"], json!(["false", "true"]), "{out}");
    assert_eq!(ev["page"]["added"], 3, "{out}");
    assert_eq!(ev["nothing"], false);

    // A checkbox: checked false → true.
    let out = click(ref_of(&snap, "checkbox \"I agree\"")).await;
    assert_eq!(out["evidence"]["element"]["checked"], json!([false, true]), "{out}");

    // A button that moves the focus.
    let out = click(ref_of(&snap, "button \"Go to email\"")).await;
    assert_eq!(out["evidence"]["focus"], "input[email] \"Email\"", "{out}");

    // A popup: its tab number.
    let out = click(ref_of(&snap, "button \"Open popup\"")).await;
    assert_eq!(out["evidence"]["tabs"][0]["tab"], 2, "{out}");
    assert!(out["evidence"]["tabs"][0]["url"].as_str().unwrap().contains("#popup"), "{out}");
    a.ok("tabs", json!({"action": "close", "tab": "2"})).await;

    // A download: its file name.
    let out = click(ref_of(&snap, "link \"Download report\"")).await;
    assert_eq!(out["evidence"]["download"]["name"], "report.html", "{out}");

    // Nothing: said, and the third time in a row, a hint.
    let noop = ref_of(&snap, "button \"Does nothing\"");
    for i in 1..=3 {
        let out = click(noop.clone()).await;
        assert_eq!(out["evidence"], json!({"nothing": true}), "{out}");
        assert_eq!(out["hint"].is_string(), i == 3, "{out}");
    }

    // A link: the navigation and where to.
    let out = click(ref_of(&snap, "link \"Next page\"")).await;
    assert!(out["evidence"]["navigation"]["to"].as_str().unwrap_or("").contains("page=2"), "{out}");
    assert!(out["evidence"].get("page").is_none(), "no page counts across a navigation: {out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ph_prints_the_evidence_under_the_action() {
    let sc = Sidecar::start_with_env(&[], &[("SHELL", "/bin/bash")]);
    let base = common::browser::serve(fixture_page);
    let t = common::control::shell(&sc).await;
    let _win = common::window::TestWindow::attach(&sc, &t).await;
    let cmd = format!(
        r#"ph browser open {base}/evidence.html > /dev/null && r=$(ph browser snapshot -i | grep 'Account' | grep -o 'ref=e[0-9]*' | cut -d= -f2) && ph browser click $r > ev.txt; rc=$?; sed 's/^/ev: /' ev.txt; echo "rc=$rc lines=$(wc -l < ev.txt)""#
    );
    let out = common::control::run_in(&sc, &t, &cmd, "^rc=").await;
    assert!(out.contains("rc=0 lines=3"), "{out}");
    assert!(out.contains("ev: → element: expanded \"false\" → \"true\""), "{out}");
    assert!(out.contains("ev: → page: 3 nodes added, 0 removed"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_section_shown_and_a_text_changed_are_page_changes_and_a_flash_is_nothing() {
    let sc = Sidecar::start(&[]);
    let bp = browser_pane(&sc, fixture_page, "evidence_shown.html").await;
    let a = Agent::new(&sc, bp.pane.clone());
    let snap = a.ok("snapshot", json!({"interactive": true})).await;
    let click = |needle: &str| {
        let (a, r) = (&a, ref_of(&snap, needle));
        async move { a.ok("act", json!({"action": "click", "ref": r})).await }
    };

    // Un-hidden by its `hidden` attribute, then by a class: no node added or removed.
    let out = click("button \"Show details\"").await;
    let page = json!({"added": 0, "removed": 0, "changed": 1, "kinds": ["hidden"]});
    assert_eq!(out["evidence"], json!({"page": page, "nothing": false}), "{out}");
    let out = click("button \"Show panel\"").await;
    let page = json!({"added": 0, "removed": 0, "changed": 1, "kinds": ["class"]});
    assert_eq!(out["evidence"], json!({"page": page, "nothing": false}), "{out}");

    // A text node's text: "3 items" → "4 items".
    let out = click("button \"Add one\"").await;
    let page = json!({"added": 0, "removed": 0, "changed": 1, "kinds": ["text"]});
    assert_eq!(out["evidence"], json!({"page": page, "nothing": false}), "{out}");
    assert_eq!(a.ok("eval", json!({"js": "count.textContent", "allow_eval": true})).await["value"], "4 items");

    // A class on while the button is down and off again, `hidden` set on a hidden section,
    // hover and focus styles: nothing shown differs.
    for needle in ["button \"Flash\"", "button \"Styled nothing\""] {
        let out = click(needle).await;
        assert_eq!(out["evidence"], json!({"nothing": true}), "{needle}: {out}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cross_site_frame_that_changes_or_navigates_is_never_nothing() {
    let sc = Sidecar::start(&[]);
    let bp = browser_pane(&sc, fixture_page, "evidence_frame.html").await;
    let a = Agent::new(&sc, bp.pane.clone());
    // The frame is served from the other site (localhost, the page from 127.0.0.1).
    let child = format!("{}/evidence_frame_child.html", bp.base.replace("127.0.0.1", "localhost"));
    let started = std::time::Instant::now();
    let snap = loop {
        let s = a.ok("snapshot", json!({"interactive": true})).await;
        if s["text"].as_str().unwrap().contains("Send in frame") {
            break s;
        }
        assert!(started.elapsed() < common::HANG, "the frame never loaded: {s}");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    let click = |needle: &str| {
        let (a, r) = (&a, ref_of(&snap, needle));
        async move { a.ok("act", json!({"action": "click", "ref": r})).await }
    };

    // A text changed inside the cross-site frame: that frame's counts, none of the page's.
    let out = click("button \"Count in frame\"").await;
    let frame = json!({"url": child, "added": 0, "removed": 0, "changed": 1, "kinds": ["text"]});
    assert_eq!(out["evidence"], json!({"frames": [frame], "nothing": false}), "{out}");

    // Nothing inside the frame: nothing.
    let out = click("button \"Nothing in frame\"").await;
    assert_eq!(out["evidence"], json!({"nothing": true}), "{out}");

    // The frame's script swaps its form for a confirmation.
    let out = click("button \"Send by script\"").await;
    let f = &out["evidence"]["frames"][0];
    assert_eq!((&f["url"], &f["added"], &f["removed"]), (&json!(child), &json!(1), &json!(1)), "{out}");
    assert_eq!(out["evidence"]["nothing"], false, "{out}");

    // A form submitted inside the frame: its document is replaced by the server's answer (said
    // as soon as the frame began to navigate if the answer is slow).
    let out = click("button \"Send in frame\"").await;
    let f = &out["evidence"]["frames"][0];
    let done = f["navigated"] == true && f["url"].as_str().unwrap_or("").contains("/evidence_frame_done.html?sent=1");
    assert!(done || (f["navigating"] == true && f["url"] == json!(child)), "{out}");
    assert_eq!(out["evidence"]["nothing"], false, "{out}");
    assert!(out["evidence"].get("navigation").is_none(), "the tab did not navigate: {out}");

    // A frame added by the page: the node, and the frame that appeared.
    let out = click("button \"Add a frame\"").await;
    assert_eq!(out["evidence"]["page"]["added"], 1, "{out}");
    let frames = out["evidence"]["frames"].as_array().cloned().unwrap_or_default();
    assert!(frames.iter().any(|f| f["appeared"] == true), "{out}");
}
