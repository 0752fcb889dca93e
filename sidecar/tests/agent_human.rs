//! The human stays in charge (DESIGN §12, protocol §8.4 `agent` and §9.7): one mutating
//! action at a time per tab, observations never wait, every view is told what the agent does
//! and where, and the human's press in a view ends the agent's action with
//! `user_interrupted` while the press itself reaches the page.
//!
//! The page makes an action slow without timing tricks: each key typed into "Slow" runs a
//! handler that holds the renderer 150 ms, so a `type` of 40 characters is in flight for
//! seconds; the test learns it is in flight from the view's own `agent` messages.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::agent::{browser_pane, Agent, BrowserPane};
use common::browser::{until_json, ViewWs};
use common::window::TestWindow;
use common::{Sidecar, HANG};
use serde_json::{json, Value};

const PAGE: &str = r#"<!doctype html><title>Slow</title>
<body style="margin:0">
<input id=slow aria-label="Slow" style="position:fixed;left:10px;top:10px;width:200px;height:30px">
<input id=fast aria-label="Fast" style="position:fixed;left:10px;top:60px;width:200px;height:30px">
<button id=probe style="position:fixed;left:0;top:200px;width:300px;height:100px">Probe</button>
<script>
window.events = [];
slow.addEventListener('keydown', e => { const t = performance.now(); while (performance.now() - t < 150) {} events.push('slow:' + e.key); });
fast.addEventListener('input', () => events.push('fast:' + fast.value));
probe.addEventListener('mousedown', e => events.push('down:' + e.clientX + ',' + e.clientY + ':' + e.isTrusted));
</script>"#;

fn pages(path: &str) -> Option<String> {
    (path == "/slow.html").then(|| PAGE.to_string())
}

/// Forty characters: at least six seconds of 150 ms key handlers.
const LONG: &str = "abcdefghijklmnopqrstuvwxyzabcdefghijklmn";
/// Eight characters: over a second, far under the 10 s a second action waits for its turn.
const SHORT: &str = "abcdefgh";

impl Agent<'_> {
    /// The page's event log.
    async fn events(&self) -> Vec<String> {
        let v = self.ok("eval", json!({"js": "events", "allow_eval": true})).await;
        serde_json::from_value(v["value"].clone()).unwrap()
    }

    /// The ref on the outline line containing `needle`.
    async fn ref_of(&self, needle: &str) -> String {
        let s = self.ok("snapshot", json!({"interactive": true})).await;
        let text = s["text"].as_str().unwrap();
        let line = text.lines().find(|l| l.contains(needle)).unwrap_or_else(|| panic!("no {needle:?} in\n{text}"));
        regex::Regex::new(r"\[ref=(e[0-9]+)\]").unwrap().captures(line).unwrap()[1].to_string()
    }
}

/// A browser pane on the slow page (a window attached, the page loaded) and a view of it.
async fn setup(sc: &Sidecar) -> (TestWindow, String, ViewWs) {
    let BrowserPane { win, pane, .. } = browser_pane(sc, pages, "slow.html").await;
    let id = win.browser_of(&pane).unwrap();
    let a = Agent::new(sc, pane.clone());
    a.ok("wait", json!({"text": "Probe", "timeout_ms": 30000})).await;
    a.ok("wait", json!({"load": true, "timeout_ms": 30000})).await;
    let view = common::browser::view(sc, &id).await;
    (win, pane, view)
}

/// Reads the view's messages until an `agent` one for `verb` satisfies `pred`.
async fn until_agent(view: &mut ViewWs, verb: &str, pred: impl Fn(&Value) -> bool) -> Value {
    until_json(view, &format!("agent {verb}"), |m| m["type"] == "agent" && m["verb"] == verb && pred(m)).await
}

/// A human click (through the view) during an agent's `type` ends it with
/// `user_interrupted` (exit 3 in `ph`), and the click reaches the page.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_human_click_in_the_view_interrupts_the_agent_and_is_delivered() {
    let sc = Arc::new(Sidecar::start(&[]));
    let (_win, pane, mut view) = setup(&sc).await;
    let a = Agent::new(&sc, pane);
    let slow = a.ref_of("\"Slow\"").await;

    let typing = {
        let (sc, body) = (sc.clone(), json!({"pane": a.pane, "action": "type", "ref": slow, "text": LONG}));
        tokio::spawn(async move { post(&sc, "act", body).await })
    };
    // In flight: the view is told the verb, then the box the keys go to.
    let m = until_agent(&mut view, "type", |m| m["acting"] == true && m["rect"].is_object()).await;
    let r = &m["rect"];
    assert!(r["x"].as_f64().unwrap() >= 9.0 && r["width"].as_f64().unwrap() > 150.0, "the field's box: {m}");

    common::browser::click(&mut view, 150.0, 250.0).await;
    let (status, body) = tokio::time::timeout(HANG, typing).await.expect("the action ends").unwrap();
    assert_eq!((status, body["error"]["code"].as_str()), (409, Some("user_interrupted")), "{body}");
    let seq = m["seq"].clone();
    until_agent(&mut view, "type", |m| m["seq"] == seq && m["acting"] == false).await;

    // The human's click went through, trusted, at its point; the typing stopped part way.
    let deadline = tokio::time::Instant::now() + HANG;
    let events = loop {
        let e = a.events().await;
        if e.iter().any(|x| x.starts_with("down:")) {
            break e;
        }
        assert!(tokio::time::Instant::now() < deadline, "the human's click never reached the page: {e:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(events.contains(&"down:150,250:true".to_string()), "{events:?}");
    let typed = events.iter().filter(|e| e.starts_with("slow:")).count();
    assert!(typed < LONG.len(), "the type was stopped: {typed} keys of {}", LONG.len());

    // The real `ph` exits 3 with the code.
    let slow_again = slow.clone();
    let ph = {
        let (port, token, pane) = (sc.port, sc.token.clone(), a.pane.clone());
        tokio::task::spawn_blocking(move || {
            std::process::Command::new(env!("CARGO_BIN_EXE_ph"))
                .args(["browser", "type", &slow_again, LONG, "--pane", &pane])
                .env("PORTHOLE_URL", format!("http://127.0.0.1:{port}/"))
                .env("PORTHOLE_TOKEN", token)
                .output()
                .unwrap()
        })
    };
    until_agent(&mut view, "type", |m| m["acting"] == true && m["rect"].is_object()).await;
    common::browser::key(&mut view, "x", "KeyX", "x", 0).await;
    let out = tokio::time::timeout(HANG, ph).await.expect("ph ends").unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("[user_interrupted]"), "{stderr}");
}

/// Observations answer while a mutating action runs; two mutating actions on one tab: the
/// second waits for the first (its input never lands among the first one's).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mutating_actions_take_turns_and_observations_do_not_wait() {
    let sc = Arc::new(Sidecar::start(&[]));
    let (_win, pane, mut view) = setup(&sc).await;
    let a = Agent::new(&sc, pane);
    let slow = a.ref_of("\"Slow\"").await;
    let fast = a.ref_of("\"Fast\"").await;
    let spawn_act = |mut body: Value| {
        body["pane"] = a.pane.clone().into();
        let sc = sc.clone();
        tokio::spawn(async move {
            let r = post(&sc, "act", body).await;
            (r, tokio::time::Instant::now())
        })
    };

    // Observations while a long type runs (six seconds at least): none waits for it.
    let long = spawn_act(json!({"action": "type", "ref": slow, "text": LONG}));
    until_agent(&mut view, "type", |m| m["acting"] == true && m["rect"].is_object()).await;
    a.ok("snapshot", json!({"interactive": true})).await;
    a.ok("get", json!({"what": "value", "ref": fast})).await;
    let shot = a.ok("screenshot", json!({})).await;
    assert!(shot["png"].as_str().unwrap().starts_with("iVBORw0KGgo"));
    a.ok("console", json!({})).await;
    assert!(!long.is_finished(), "observations answered while the type still ran");
    let (r, _) = long.await.unwrap();
    assert_eq!((r.0, &r.1["value"]), (200, &json!(LONG)), "{}", r.1);
    a.ok("act", json!({"action": "fill", "ref": slow, "text": ""})).await;
    a.ok("eval", json!({"js": "events.length = 0", "allow_eval": true})).await;

    // A second mutating action waits for the first.
    let first = spawn_act(json!({"action": "type", "ref": slow, "text": SHORT}));
    let begun = until_agent(&mut view, "type", |m| m["acting"] == true && m["rect"].is_object()).await;
    let second = spawn_act(json!({"action": "fill", "ref": fast, "text": "second"}));
    let ((r1, t1), (r2, t2)) = (first.await.unwrap(), second.await.unwrap());
    assert_eq!(r1.0, 200, "{}", r1.1);
    assert_eq!(r2.0, 200, "{}", r2.1);
    assert_eq!(r1.1["value"], SHORT);
    assert_eq!(r2.1["value"], "second");
    assert!(t2 >= t1, "the second answered after the first");
    // On the page: every key of the first before the second's input.
    let events = a.events().await;
    let last_slow = events.iter().rposition(|e| e.starts_with("slow:")).unwrap();
    let first_fast = events.iter().position(|e| e.starts_with("fast:")).unwrap();
    assert_eq!(events.iter().filter(|e| e.starts_with("slow:")).count(), SHORT.len(), "{events:?}");
    assert!(last_slow < first_fast, "the fill waited for the type: {events:?}");
    // The views saw the type end before the fill began.
    let seq = begun["seq"].as_u64().unwrap();
    let fill = until_agent(&mut view, "fill", |m| m["acting"] == true).await;
    assert_eq!(fill["seq"].as_u64(), Some(seq + 1), "{fill}");

    // A click shows its point: the one it clicked at.
    let probe = a.ref_of("\"Probe\"").await;
    let out = a.ok("act", json!({"action": "click", "ref": probe})).await;
    let m = until_agent(&mut view, "click", |m| m["point"].is_object()).await;
    assert_eq!(m["point"], out["point"], "{m} vs {out}");
    let (x, y) = (out["point"]["x"].as_f64().unwrap(), out["point"]["y"].as_f64().unwrap());
    assert!((x - 150.0).abs() <= 1.0 && (y - 250.0).abs() <= 1.0, "the button's center: {out}");
}

/// `POST /api/control/browser/{verb}` with the master token → (status, JSON body).
async fn post(sc: &Sidecar, verb: &str, body: Value) -> (u16, Value) {
    let r = sc.req("POST", &format!("/api/control/browser/{verb}"), Some(&body)).await;
    (r.status, serde_json::from_slice(&r.body).unwrap_or(Value::Null))
}

/// The mark (and the human's input) is mapped through the frame header's CSS size: at a
/// page DPR of 2 every screencast frame must say 800×600 for an 800×600 CSS px viewport,
/// never its device pixels. (Crisp captures take the measured size; an animated page,
/// never quiet, gets none.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn frames_at_dpr_2_carry_the_viewports_css_size() {
    fn anim(path: &str) -> Option<String> {
        (path == "/anim.html").then(|| {
            "<!doctype html><title>anim</title><div id=d style='width:50px;height:50px;background:red;position:absolute'></div>\
             <script>let i=0;setInterval(()=>{d.style.left=(i++%300)+'px'},30)</script>"
                .to_string()
        })
    }
    let sc = Sidecar::start(&[]);
    let base = common::browser::serve(anim);
    let id = common::browser::create_at(&sc, &format!("{base}/anim.html"), common::browser::fixed(800, 600, 2.0)).await;
    common::browser::until_title(&sc, &id, |t| t == "anim").await;
    let mut ws = common::browser::view(&sc, &id).await;
    let mut provisional = 0;
    while provisional < 10 {
        let f = common::browser::until_frame(&mut ws).await;
        let (w, h) = (u16::from_le_bytes([f[4], f[5]]), u16::from_le_bytes([f[6], f[7]]));
        let crisp = f[12] & 1 == 1;
        assert_eq!((w, h), (800, 600), "a {} frame", if crisp { "crisp" } else { "provisional" });
        provisional += usize::from(!crisp);
    }
}
