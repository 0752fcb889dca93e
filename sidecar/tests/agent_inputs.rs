//! Inputs beyond text (issue 25 item 5): `set` gives date, time, datetime-local, month, week
//! and range inputs a value with trusted keys (a colour, which takes none, as its picker
//! does), reads it back, and says `mismatch` when the page refuses it (a React date picker
//! that takes no date before 2026). Real Chromium, a real fixture upstream.

mod common;

use common::agent::{browser_pane, fixture_page, Agent};
use common::Sidecar;
use serde_json::{json, Value};

/// The ref of the first line of the snapshot that contains `needle`.
fn ref_of(snapshot: &Value, needle: &str) -> String {
    common::agent::ref_on(snapshot["text"].as_str().unwrap(), needle)
}

/// `js`'s value in the page (the test's own check, not a verb under test).
async fn eval(a: &Agent<'_>, js: &str) -> Value {
    a.ok("eval", json!({"js": js, "allow_eval": true})).await["value"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn set_gives_each_input_type_its_value_and_reads_it_back() {
    tokio::task::block_in_place(common::agent::react_bundle);
    let sc = Sidecar::start(&[]);
    let bp = browser_pane(&sc, fixture_page, "inputs.html").await;
    let a = Agent::new(&sc, bp.pane.clone());
    let snap = a.ok("snapshot", json!({"interactive": true})).await;
    for (label, id, value) in [
        ("Birthday", "d", "1990-04-23"),
        ("Alarm", "t", "14:30"),
        ("Meeting", "dt", "2026-12-07T09:05"),
        ("Billing month", "m", "2026-12"),
        ("Sprint week", "w", "2026-W49"),
        ("Volume", "r", "35"),
        ("Accent", "c", "#ff8800"),
    ] {
        let r = ref_of(&snap, &format!("\"{label}\""));
        let out = a.ok("set", json!({"ref": r, "value": value})).await;
        assert_eq!(out["value"], value, "{label}: {out}");
        assert_eq!(eval(&a, &format!("document.getElementById('{id}').value")).await, value, "{label}");
        assert_eq!(out["scripted"] == true, id == "c", "only the colour is scripted: {out}");
    }
    // The page saw the changes a keyboard user makes (a date's change event fires as soon as
    // the typed year makes it valid: 0001, 0019, 0199, 1990), each field's last one the value.
    let log = eval(&a, "document.getElementById('log').textContent").await;
    let log = log.as_str().unwrap();
    for want in ["d=1990-04-23", "t=14:30", "dt=2026-12-07T09:05", "m=2026-12", "w=2026-W49", "r=35", "c=#ff8800"] {
        let id = want.split('=').next().unwrap();
        let last = log.split_whitespace().filter(|e| e.split('=').next() == Some(id)).last();
        assert_eq!(last, Some(want), "{log}");
    }

    // Refusals: a value in another spelling, an element of another kind, a range past its end.
    let name = ref_of(&snap, "\"Name\"");
    a.refused("set", json!({"ref": name, "value": "x"}), "bad_request").await;
    let birthday = ref_of(&snap, "\"Birthday\"");
    a.refused("set", json!({"ref": birthday, "value": "23/04/1990"}), "bad_request").await;
    let volume = ref_of(&snap, "\"Volume\"");
    a.refused("set", json!({"ref": volume, "value": "45"}), "bad_request").await;

    // A React date picker that refuses a date before 2026: mismatch, with what it shows.
    let booking = ref_of(&snap, "Check-in (React)");
    let ok = a.ok("set", json!({"ref": booking, "value": "2026-08-15"})).await;
    assert_eq!(ok["value"], "2026-08-15", "{ok}");
    assert_eq!(eval(&a, "document.getElementById('booked').textContent").await, "booked: 2026-08-15");
    let refused = a.refused("set", json!({"ref": booking, "value": "2025-08-15"}), "mismatch").await;
    assert_ne!(refused["observed"]["value"], "2025-08-15", "{refused}");
    assert_eq!(eval(&a, "document.getElementById('booked').textContent").await, "booked: 2026-08-15");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn custom_comboboxes_listboxes_context_menus_and_hover_menus() {
    let sc = Sidecar::start(&[]);
    let bp = browser_pane(&sc, fixture_page, "custom.html").await;
    let a = Agent::new(&sc, bp.pane.clone());
    let snap = a.ok("snapshot", json!({"interactive": true})).await;

    // A custom combobox: opened, the option chosen by name with clicks, read back.
    let fruit = ref_of(&snap, "combobox \"Fruit\"");
    let out = a.ok("select", json!({"ref": fruit, "values": ["Dragon fruit"]})).await;
    assert_eq!((out["label"].as_str(), out["custom"].as_bool()), (Some("Dragon fruit"), Some(true)), "{out}");
    assert_eq!(eval(&a, "document.getElementById('state').textContent").await, "fruit: Dragon fruit");
    assert_eq!(eval(&a, "document.getElementById('combo').getAttribute('aria-expanded')").await, "false");
    // An unknown option is refused naming those it has, and the list is closed again.
    let e = a.refused("select", json!({"ref": fruit, "values": ["Mango"]}), "bad_request").await;
    assert!(e["message"].as_str().unwrap().contains("\"Apple\", \"Banana\""), "{e}");
    assert_eq!(eval(&a, "document.getElementById('fruits').hidden").await, true);
    a.refused("select", json!({"ref": fruit, "values": ["Cherry"]}), "bad_request").await;

    // A listbox: the option clicked, aria-selected read back.
    let size = ref_of(&snap, "listbox \"Size\"");
    let out = a.ok("select", json!({"ref": size, "values": ["Large"]})).await;
    assert_eq!(out["label"], "Large", "{out}");
    assert_eq!(
        eval(&a, "[...document.querySelectorAll('#sizes [aria-selected=true]')].map(o => o.textContent).join()").await,
        "Large"
    );

    // A right click: the page's own context menu, seen in the evidence and the next snapshot.
    let canvas = ref_of(&a.ok("snapshot", json!({})).await, "Right-click here");
    let out = a.ok("act", json!({"action": "click", "ref": canvas, "button": "right"})).await;
    assert_eq!(out["action"], "right-click", "{out}");
    assert!(out["evidence"]["page"]["added"].as_u64().unwrap_or(0) >= 1, "{out}");
    let text = a.ok("snapshot", json!({})).await["text"].as_str().unwrap().to_string();
    assert!(text.contains("menuitem \"Copy\""), "{text}");
    a.refused("act", json!({"action": "hover", "ref": canvas, "button": "right"}), "bad_request").await;

    // A hover menu: hover, then the snapshot shows what opened.
    let products = ref_of(&a.ok("snapshot", json!({})).await, "Products");
    let before = a.ok("snapshot", json!({})).await["text"].as_str().unwrap().to_string();
    assert!(!before.contains("link \"Pricing\""), "{before}");
    a.ok("act", json!({"action": "hover", "ref": products})).await;
    let after = a.ok("snapshot", json!({})).await["text"].as_str().unwrap().to_string();
    assert!(after.contains("link \"Pricing\""), "{after}");
}
