//! The focus walk and component signatures (issue 24 items 5 and 6) end to end, in a real
//! Chromium behind a screencast pane (`tests/fixtures/agent/sealed_focus.html`): a
//! `delegatesFocus` closed root reached by trusted Tab and activated by Enter, the walk's
//! cadence, its limit and its restore, and a closed host's signature that survives a
//! re-render and changes when its parts do.

mod common;

use common::agent::{browser_pane, configure_sealed, fixture_page, Agent};
use common::Sidecar;
use serde_json::{json, Value};

/// The ref on the snapshot line that starts with `prefix` (e.g. `x-pay`).
fn ref_of(text: &str, prefix: &str) -> String {
    let line = text
        .lines()
        .map(str::trim_start)
        .find(|l| l.starts_with(&format!("- {prefix}")))
        .unwrap_or_else(|| panic!("no line {prefix} in {text}"));
    let at = line.find("[ref=").unwrap_or_else(|| panic!("no ref on {line}"));
    line[at + 5..].split(']').next().unwrap().to_string()
}

/// The signature on the snapshot line that starts with `prefix`.
fn sig_of(text: &str, prefix: &str) -> Option<String> {
    let line = text.lines().map(str::trim_start).find(|l| l.starts_with(&format!("- {prefix}")))?;
    let at = line.find("[sig=")?;
    Some(line[at + 5..].split(']').next().unwrap().to_string())
}

impl Agent<'_> {
    async fn eval(&self, js: &str) -> Value {
        self.ok("eval", json!({"js": js, "allow_eval": true})).await["value"].clone()
    }

    async fn text(&self) -> String {
        self.ok("snapshot", json!({})).await["text"].as_str().unwrap().to_string()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_focus_walk_reaches_a_delegates_focus_closed_root_and_enter_activates_it() {
    let sc = Sidecar::start(&[]);
    let p = browser_pane(&sc, fixture_page, "sealed_focus.html").await;
    let a = Agent::new(&sc, p.pane.clone());
    a.ok("wait", json!({"load": true, "timeout_ms": 20000})).await;
    let text = a.text().await;
    assert!(text.contains("x-pay [closed shadow root]"), "{text}");
    let pay = ref_of(&text, "x-pay");
    let before = a.counts_of().await;

    // Two steps: the card field, then the button, each read from the host's own tree.
    let w = a.ok("focus_walk", json!({"ref": pay, "max_steps": 2})).await;
    let steps = w["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 2, "{w:#}");
    assert_eq!((steps[0]["role"].as_str(), steps[0]["name"].as_str()), (Some("textbox"), Some("Card")), "{w:#}");
    assert_eq!((steps[1]["role"].as_str(), steps[1]["name"].as_str()), (Some("button"), Some("Pay now")), "{w:#}");
    assert!(steps.iter().all(|s| s["in_host"] == true && s["token"].as_str().is_some_and(|t| t.starts_with('s'))));
    assert_eq!(w["stopped"], "limit");
    assert_eq!(w["start"], "before", "focus was put on the button before the host");
    let r = &steps[1]["rect"];
    assert!(r["width"].as_f64().unwrap() > 10.0 && r["height"].as_f64().unwrap() > 5.0, "{r}");
    // A keyboard user's pace, from the walk's own ledger: the gap is asked for, never less.
    let gap = steps[1]["at_ms"].as_u64().unwrap() - steps[0]["at_ms"].as_u64().unwrap();
    assert!(gap >= 80, "steps {gap} ms apart: {w:#}");
    let after = a.counts_of().await;
    assert_eq!(
        after["focus_walk_steps"].as_u64().unwrap() - before["focus_walk_steps"].as_u64().unwrap(),
        2,
        "{after}"
    );
    assert!(!a.said().contains("\"value\""), "no value is ever answered");

    // The walk left focus on the button: Enter activates it with trusted input.
    a.ok("act", json!({"action": "press", "key": "Enter"})).await;
    a.ok("wait", json!({"text": "Paid", "timeout_ms": 10000})).await;
    assert_eq!(a.eval("JSON.stringify(window.sealedLog)").await, json!("[{\"what\":\"pay\",\"trusted\":true}]"));

    // The median gap over a full walk (the limit, 8 by default): past the host, focus leaves.
    let w = a.ok("focus_walk", json!({"ref": pay})).await;
    let steps = w["steps"].as_array().unwrap();
    assert_eq!(w["stopped"], "left_host", "{w:#}");
    let last = steps.last().unwrap();
    assert_eq!((last["in_host"].as_bool(), last["name"].as_str()), (Some(false), Some("After")), "{w:#}");
    let mut gaps: Vec<u64> =
        steps.windows(2).map(|s| s[1]["at_ms"].as_u64().unwrap() - s[0]["at_ms"].as_u64().unwrap()).collect();
    gaps.sort();
    assert!(gaps[gaps.len() / 2] >= 80, "{gaps:?}");

    // Backwards: Shift+Tab from just after the host meets the button first.
    let w = a.ok("focus_walk", json!({"ref": pay, "max_steps": 1, "back": true})).await;
    assert_eq!((w["start"].as_str(), w["steps"][0]["name"].as_str()), (Some("after"), Some("Pay now")), "{w:#}");

    // A host with nothing to focus: focus never enters it, and goes back where it was.
    a.eval("document.getElementById('before').focus(); true").await;
    let empty = ref_of(&a.text().await, "x-empty");
    let w = a.ok("focus_walk", json!({"ref": empty, "max_steps": 3})).await;
    assert_eq!((w["stopped"].as_str(), w["restored"].as_bool()), (Some("not_entered"), Some(true)), "{w:#}");
    assert_eq!(a.eval("document.activeElement.id").await, "before");

    // The policy: more steps than it allows, and the lever off.
    a.refused("focus_walk", json!({"ref": pay, "max_steps": 9}), "focus_walk_limit").await;
    configure_sealed(&sc, "[agent.sealed]\nfocus_walk = false\n", |s| s["focus_walk"] == false).await;
    let r = a.refused("focus_walk", json!({"ref": pay}), "focus_walk_disabled").await;
    assert_eq!(r["key"], "agent.sealed.focus_walk", "{r}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_hosts_signature_survives_a_re_render_and_follows_its_parts() {
    let sc = Sidecar::start(&[]);
    let p = browser_pane(&sc, fixture_page, "sealed_focus.html").await;
    let a = Agent::new(&sc, p.pane.clone());
    a.ok("wait", json!({"load": true, "timeout_ms": 20000})).await;
    let first = sig_of(&a.text().await, "x-badge").expect("a signature beside the closed host");
    assert_eq!(first.len(), 8);
    let pay = sig_of(&a.text().await, "x-pay").unwrap();
    assert_ne!(first, pay, "two components, two signatures");

    // Re-rendered with the same parts: the same signature.
    a.eval("render('label'); true").await;
    assert_eq!(sig_of(&a.text().await, "x-badge").as_deref(), Some(first.as_str()));
    // A part renamed: another.
    a.eval("render('caption'); true").await;
    let renamed = sig_of(&a.text().await, "x-badge").unwrap();
    assert_ne!(renamed, first);
    // A custom property set on the host: another again; a value changed: the same.
    a.eval("document.getElementById('badge').style.setProperty('--size', '2px'); true").await;
    let themed = sig_of(&a.text().await, "x-badge").unwrap();
    assert_ne!(themed, renamed);
    a.eval("document.getElementById('badge').style.setProperty('--size', '3px'); true").await;
    assert_eq!(sig_of(&a.text().await, "x-badge").as_deref(), Some(themed.as_str()));
    // Reading it is no sealed work.
    let c = a.counts_of().await;
    assert_eq!((c["ax_reads"].as_u64(), c["pierce_reads"].as_u64()), (Some(0), Some(0)), "{c}");

    // The lever off: no signature (the host is still shown).
    configure_sealed(&sc, "[agent.sealed]\nsignatures = false\n", |s| s["signatures"] == false).await;
    let text = a.text().await;
    assert!(text.contains("x-badge [closed shadow root]") && sig_of(&text, "x-badge").is_none(), "{text}");
}

impl Agent<'_> {
    async fn counts_of(&self) -> Value {
        self.ok("stats", json!({})).await["counts"].clone()
    }
}

/// `screenshot --parts`: refused while the lever is off; on, the closed component's parts
/// are outlined in that one capture (magenta pixels over the host, none without), and the
/// style is gone right after.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parts_are_outlined_for_one_capture_only_when_the_lever_allows() {
    let sc = Sidecar::start(&[]);
    let p = browser_pane(&sc, fixture_page, "sealed_focus.html").await;
    let a = Agent::new(&sc, p.pane.clone());
    a.ok("wait", json!({"load": true, "timeout_ms": 20000})).await;
    let badge = ref_of(&a.text().await, "x-badge");
    let r = a.refused("screenshot", json!({"ref": badge, "parts": true}), "part_highlight_disabled").await;
    assert_eq!(r["key"], "agent.sealed.part_highlight", "{r}");

    configure_sealed(&sc, "[agent.sealed]\npart_highlight = true\n", |s| s["part_highlight"] == true).await;
    let sheets = a.eval("document.styleSheets.length").await;
    let outlined = a.ok("screenshot", json!({"ref": badge, "parts": true})).await;
    assert_eq!(outlined["parts"], 2, "x-badge's label and icon: {}", outlined["parts"]);
    let plain = a.ok("screenshot", json!({"ref": badge})).await;
    assert_eq!(a.eval("document.styleSheets.length").await, sheets, "the style went with the capture");
    // The pictures, decoded by the page's own Chromium: magenta outline pixels in one only.
    let magenta = |png: &Value| {
        format!(
            "(async () => {{ const i = new Image(); i.src = 'data:image/png;base64,{}'; await i.decode(); \
             const c = new OffscreenCanvas(i.width, i.height); const g = c.getContext('2d'); g.drawImage(i, 0, 0); \
             const d = g.getImageData(0, 0, i.width, i.height).data; let n = 0; \
             for (let k = 0; k < d.length; k += 4) if (d[k] > 200 && d[k + 1] < 90 && d[k + 2] > 160) n++; return n; }})()",
            png["png"].as_str().unwrap()
        )
    };
    let with = a.eval(&magenta(&outlined)).await.as_u64().unwrap();
    let without = a.eval(&magenta(&plain)).await.as_u64().unwrap();
    assert!(with > 20 && without == 0, "magenta pixels: {with} outlined, {without} plain");
    let c = a.counts_of().await;
    assert_eq!((c["ax_reads"].as_u64(), c["pierce_reads"].as_u64()), (Some(0), Some(0)), "{c}");

    // A sealed control's crop: its box, at most crop_max_side a side.
    let size = |png: &Value| {
        format!(
            "(async () => {{ const i = new Image(); i.src = 'data:image/png;base64,{}'; await i.decode(); \
             return [i.width, i.height]; }})()",
            png["png"].as_str().unwrap()
        )
    };
    let s = a.ok("snapshot", json!({"interactive": true, "sealed": true})).await;
    let card = s["sealed"]["controls"].as_array().unwrap().iter().find(|c| c["name"] == "Card").expect("Card").clone();
    let token = card["token"].as_str().unwrap();
    let full = a.eval(&size(&a.ok("screenshot", json!({"ref": token})).await)).await;
    assert_eq!(full[0].as_f64().unwrap().round(), card["rect"]["width"].as_f64().unwrap().round(), "{full} {card}");
    configure_sealed(&sc, "[agent.sealed]\npart_highlight = true\ncrop_max_side = 64\n", |s| s["crop_max_side"] == 64)
        .await;
    let cut = a.eval(&size(&a.ok("screenshot", json!({"ref": token})).await)).await;
    assert_eq!(cut[0], 64, "cut to crop_max_side: {cut}");
}
