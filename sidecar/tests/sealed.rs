//! Sealed content (issue 24) end to end: a real Chromium behind a screencast pane, a login
//! form and other controls inside closed shadow roots (`tests/fixtures/agent/sealed_*.html`,
//! one in a same-site and one in a cross-site, out-of-process frame), read and driven only
//! when asked, as the human's `[agent.sealed]` policy allows, with the CDP work counted.

mod common;

use std::time::Duration;

use common::agent::{browser_pane, configure_sealed, fixture_page, Agent, BrowserPane};
use common::window::TestWindow;
use common::{Sidecar, HANG};
use serde_json::{json, Value};

impl Agent<'_> {
    async fn counts(&self) -> Value {
        self.ok("stats", json!({})).await["counts"].clone()
    }

    async fn eval(&self, js: &str) -> Value {
        self.ok("eval", json!({"js": js, "allow_eval": true})).await["value"].clone()
    }

    /// Navigates to fixture `name` and waits for its load and both frames' closed roots.
    async fn open(&self, base: &str, name: &str) {
        self.ok("navigate", json!({"url": format!("{base}/{name}")})).await;
        self.ok("wait", json!({"load": true, "timeout_ms": 20000})).await;
        let deadline = tokio::time::Instant::now() + HANG;
        while self.eval("[...document.querySelectorAll('iframe')].length").await != 2 {
            assert!(tokio::time::Instant::now() < deadline, "{name} never loaded");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The sealed controls (`snapshot --sealed`) once both frames show theirs.
    async fn sealed(&self) -> Value {
        self.ok("snapshot", json!({"interactive": true, "sealed": true})).await
    }
}

/// The sealed control named `name` of a `snapshot --sealed` answer.
fn control<'a>(s: &'a Value, name: &str) -> &'a Value {
    s["sealed"]["controls"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no sealed control {name:?} in {s:#}"))
}

fn names(s: &Value) -> Vec<String> {
    s["sealed"]["controls"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap().to_string()).collect()
}

/// The "done when" scenario and every invariant of it, in one Chromium: quiet by default
/// (zero accessibility and piercing reads across navigate, snapshot and screenshot), a
/// sealed answer with role, name, state, rect and token and never a value, a cache hit,
/// one enumeration per new document, clicks that land on the rect (the component records
/// them, in both frames too), a login through `fill s1`, `fill s2`, `click s3`, a stale
/// token, the rate budget, and each refusal with the policy off.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sealed_content_is_read_and_driven_only_when_asked_and_allowed() {
    let sc = Sidecar::start(&[]);
    configure_sealed(&sc, "[agent.sealed]\nscans_per_minute = 3\n", |s| s["scans_per_minute"] == 3).await;
    let BrowserPane { base, win, pane, .. } = browser_pane(&sc, fixture_page, "sealed_login.html").await;
    let id = win.browser_of(&pane).unwrap();
    let a = Agent::new(&sc, pane);
    a.open(&base, "sealed_login.html").await;

    // The cross-site frame really is out of process: a target of its own.
    let port = base.rsplit(':').next().unwrap();
    let cross = format!("http://localhost:{port}/sealed_frame.html");
    let targets = common::browser::chromium_targets(&sc, &id);
    assert!(targets.iter().any(|t| t["type"] == "iframe" && t["url"] == cross.as_str()), "{targets:#?}");

    // Quiet by default: navigate, snapshot (full and -i), screenshot do no AX or pierce work.
    a.open(&base, "sealed_login.html").await;
    let s = a.ok("snapshot", json!({})).await;
    let text = s["text"].as_str().unwrap();
    assert!(text.contains("x-login [closed shadow root]"), "{text}");
    assert!(text.contains("'ph browser snapshot --sealed'"), "how to ask: {text}");
    assert!(!text.contains("Log in") && !text.contains("prefilled-user"), "nothing inside is read: {text}");
    assert_eq!(s["policy"]["discovery"], true, "the policy is in the header: {s}");
    a.ok("snapshot", json!({"interactive": true})).await;
    a.ok("screenshot", json!({})).await;
    let c = a.counts().await;
    assert_eq!((c["ax_reads"].as_u64(), c["pierce_reads"].as_u64()), (Some(0), Some(0)), "{c}");
    assert_eq!(c["sealed_scans"], 0);

    // Asked: the controls of every closed root, nested ones and both frames' included.
    let s = a.sealed().await;
    assert_eq!(s["sealed"]["cache_hit"], false);
    let mut got = names(&s);
    assert_eq!(
        got[..6],
        ["User", "Password", "Log in", "Disabled action", "Nested inside", "Far below"],
        "the page's own order, frame by frame: {s:#}"
    );
    let tokens: Vec<&str> =
        ["User", "Password", "Log in"].iter().map(|n| control(&s, n)["token"].as_str().unwrap()).collect();
    assert_eq!(tokens, ["s1", "s2", "s3"], "fill s1, fill s2, click s3 log in");
    got.sort();
    let mut want = vec![
        "User",
        "Password",
        "Log in",
        "Disabled action",
        "Nested inside",
        "Far below",
        "Framed 127.0.0.1",
        "Framed localhost",
    ];
    want.sort();
    assert_eq!(got, want, "hidden, aria-hidden and zero-size variants are absent: {s:#}");
    assert_eq!(control(&s, "User")["role"], "textbox");
    assert_eq!(control(&s, "Disabled action")["states"], json!(["disabled"]));
    assert_eq!(control(&s, "Far below")["in_viewport"], false);
    assert_eq!(control(&s, "Log in")["in_viewport"], true);
    for c in s["sealed"]["controls"].as_array().unwrap() {
        assert!(c["token"].as_str().unwrap().starts_with('s') && c.get("value").is_none(), "{c}");
    }
    let c = a.counts().await;
    assert_eq!(c["sealed_scans"], 1);
    let (ax, pierce) = (c["ax_reads"].as_u64().unwrap(), c["pierce_reads"].as_u64().unwrap());
    assert!(ax >= 1 && pierce >= 2, "a piercing read per frame process (two): {c}");

    // Asked again on the same documents: the cache, no new enumeration.
    let again = a.sealed().await;
    assert_eq!(again["sealed"]["cache_hit"], true);
    let c = a.counts().await;
    assert_eq!((c["sealed_scans"].as_u64(), c["cache_hits"].as_u64()), (Some(1), Some(1)));
    assert_eq!((c["ax_reads"].as_u64(), c["pierce_reads"].as_u64()), (Some(ax), Some(pierce)));
    assert_eq!(control(&again, "Log in")["token"], control(&s, "Log in")["token"], "the same node, the same token");

    // Clicks land on the rect: the component records a trusted click inside it.
    for (name, what) in [
        ("Nested inside", "nested"),
        ("Framed localhost", "framed localhost"),
        ("Framed 127.0.0.1", "framed 127.0.0.1"),
    ] {
        let c = control(&again, name);
        a.ok("act", json!({"action": "click", "ref": c["token"]})).await;
        // A frame's record arrives by postMessage, a task after the click: waited for.
        let deadline = tokio::time::Instant::now() + HANG;
        let hit = loop {
            let log = a.eval("JSON.stringify(window.sealedLog)").await;
            let log: Vec<Value> = serde_json::from_str(log.as_str().unwrap()).unwrap();
            if let Some(hit) = log.iter().rev().find(|e| e["what"] == what) {
                break hit.clone();
            }
            assert!(tokio::time::Instant::now() < deadline, "{name}: the click never reached it: {log:?}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        assert_eq!(hit["trusted"], true, "{hit}");
        if what == "nested" {
            let r = &c["rect"];
            let (x, y) = (hit["x"].as_f64().unwrap(), hit["y"].as_f64().unwrap());
            let n = |k: &str| r[k].as_f64().unwrap();
            assert!(x >= n("x") && x <= n("x") + n("width") && y >= n("y") && y <= n("y") + n("height"), "{hit} {r}");
        }
    }

    // The login: fill s(User), fill s(Password), click s(Log in); verified, never printed.
    let user = control(&again, "User")["token"].as_str().unwrap().to_string();
    let pw = control(&again, "Password")["token"].as_str().unwrap().to_string();
    let go = control(&again, "Log in")["token"].as_str().unwrap().to_string();
    let r = a.ok("act", json!({"action": "fill", "ref": user, "text": "alice"})).await;
    assert_eq!(r["verified"], "matched", "{r}");
    let r = a.ok("act", json!({"action": "fill", "ref": pw, "text": "hunter2"})).await;
    assert_eq!(r["verified"], "matched", "{r}");
    a.ok("act", json!({"action": "click", "ref": go})).await;
    a.ok("wait", json!({"text": "Logged in", "timeout_ms": 10000})).await;
    let disabled = control(&again, "Disabled action")["token"].clone();
    a.refused("act", json!({"action": "click", "ref": disabled}), "element_disabled").await;

    // A new document: exactly one new enumeration; the old tokens are stale.
    a.open(&base, "sealed_login.html").await;
    let fresh = a.sealed().await;
    assert_eq!(fresh["sealed"]["cache_hit"], false);
    assert_eq!(a.counts().await["sealed_scans"], 2);
    let e = a.refused("act", json!({"action": "click", "ref": go}), "stale_ref").await;
    assert_eq!(e["reason"], "document_replaced", "{e}");
    // A type at the end of what is there is verified against the accessibility value too.
    let user = control(&fresh, "User")["token"].clone();
    assert_eq!(a.ok("act", json!({"action": "type", "ref": user, "text": "-x"})).await["verified"], "matched");

    // No value ever left the sidecar (the page's own text says only "Logged in").
    let said = a.said();
    for secret in ["hunter2", "prefilled-user", "alice"] {
        assert!(!said.contains(secret), "{secret} leaked");
    }

    // The page's own probe still holds: nothing was opened.
    assert_eq!(a.eval("probe()").await, true);

    // The policy is readable on the control route; off → refusals naming the key, and
    // nothing is read.
    let p = sc.req("GET", "/api/control/browser/policy", None).await.json();
    assert_eq!(p["policy"]["scans_per_minute"], 3);
    let scans = a.counts().await["sealed_scans"].clone();
    configure_sealed(&sc, "[agent.sealed]\ndiscovery = false\n", |s| s["discovery"] == false).await;
    let e = a.refused("snapshot", json!({"sealed": true}), "sealed_disabled").await;
    assert_eq!(e["key"], "agent.sealed.discovery");
    let e = a
        .refused("act", json!({"action": "click", "ref": control(&fresh, "Log in")["token"]}), "sealed_disabled")
        .await;
    assert_eq!(e["key"], "agent.sealed.discovery");
    configure_sealed(&sc, "[agent.sealed]\nenabled = false\n", |s| s["enabled"] == false).await;
    let e = a.refused("snapshot", json!({"sealed": true}), "agent_disabled").await;
    assert_eq!(e["key"], "agent.sealed.enabled");
    configure_sealed(&sc, "[agent.sealed]\nmax_frames = 1\n", |s| s["max_frames"] == 1).await;
    let e = a.refused("snapshot", json!({"sealed": true}), "frames_limit").await;
    assert_eq!(e["key"], "agent.sealed.max_frames");
    assert_eq!(a.counts().await["sealed_scans"], scans, "a refusal reads nothing");

    // The budget is per tab (1 a minute here): a new tab's first scan passes, a scan of its
    // next document within the minute is refused with when to retry.
    configure_sealed(&sc, "[agent.sealed]\nscans_per_minute = 1\n", |s| s["scans_per_minute"] == 1).await;
    a.ok("tabs", json!({"action": "new", "url": format!("{base}/sealed_login.html")})).await;
    a.open(&base, "sealed_login.html").await;
    a.sealed().await;
    a.open(&base, "sealed_login.html").await;
    let e = a.refused("snapshot", json!({"sealed": true}), "rate_limited").await;
    assert!(e["retry_after"].as_u64().is_some_and(|s| (1..=60).contains(&s)), "{e}");
    assert_eq!(a.counts().await["sealed_scans"], 1, "the new tab's own count");
}

/// `PORTHOLE_AGENT_SEALED=off` wins over the file: the master switch is off.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_environment_kill_switch_wins_over_the_file() {
    let sc = Sidecar::start_with_env(&[], &[("PORTHOLE_AGENT_SEALED", "off")]);
    let p = sc.req("GET", "/api/control/browser/policy", None).await.json();
    assert_eq!(p["policy"]["enabled"], true, "the file's value: {p}");
    assert_eq!(p["policy"]["effective_enabled"], false, "{p}");
    assert_eq!(p["policy"]["env"]["switch"]["state"], "off", "{p}");
}

/// Opens `sealed_login.html` in a screencast pane beside a fresh terminal (a stand-in window
/// shows it) and waits for its load and both frames; returns the upstream's origin, the
/// window (kept alive by the caller) and the agent.
async fn login_page(sc: &Sidecar) -> (String, TestWindow, Agent<'_>) {
    let BrowserPane { base, win, pane, .. } = browser_pane(sc, fixture_page, "sealed_login.html").await;
    let a = Agent::new(sc, pane);
    a.open(&base, "sealed_login.html").await;
    (base, win, a)
}

/// The `(role, name, token)` of each `- role "name" [sealed=sN] …` line of a snapshot text.
fn sealed_lines(text: &str) -> Vec<(String, String, String)> {
    let mut out: Vec<_> = text
        .lines()
        .filter_map(|l| {
            let rest = l.strip_prefix("- ")?;
            let (role, rest) = rest.split_once(' ')?;
            // The name is a JSON string; states (`[disabled]`) may come between it and the token.
            let name = serde_json::Deserializer::from_str(rest).into_iter::<String>().next()?.ok()?;
            let at = rest.find(" [sealed=")?;
            let token = rest[at + 9..].split(']').next()?.to_string();
            Some((role.to_string(), name, token))
        })
        .collect();
    out.sort();
    out
}

/// The MCP tool's `sealed: true` is `snapshot --sealed`: the same controls with the same
/// tokens (one enumeration: the API's call after it is a cache hit), no value, and the same
/// refusal, naming the key, once the human turns discovery off.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mcp_tool_lists_the_same_sealed_controls_and_is_refused_the_same_way() {
    use common::mcp::{initialize, pane_with_token, Mcp};
    let sc = Sidecar::start(&[]);
    let base = common::browser::serve(fixture_page);
    let (t1, token) = pane_with_token(&sc).await;
    let _win = TestWindow::attach(&sc, &t1).await;
    let mut mcp = tokio::task::block_in_place(|| Mcp::start(sc.port, &token));
    let pane = tokio::task::block_in_place(|| {
        initialize(&mut mcp);
        let (err, b, _) = mcp.call("browser_open", json!({"target": format!("{base}/sealed_login.html")}));
        assert!(!err && b.starts_with('b'), "{b}");
        b.trim().to_string()
    });
    let a = Agent::new(&sc, pane);
    a.open(&base, "sealed_login.html").await;

    let (err, text, _) =
        tokio::task::block_in_place(|| mcp.call("browser_snapshot", json!({"interactive": true, "sealed": true})));
    assert!(!err, "{text}");
    let listed = sealed_lines(&text);
    for c in [("textbox", "User"), ("textbox", "Password"), ("button", "Log in"), ("button", "Framed localhost")] {
        assert!(listed.iter().any(|(r, n, _)| (r.as_str(), n.as_str()) == c), "{c:?} in {text}");
    }
    assert!(!text.contains("prefilled-user"), "never a value: {text}");
    let c = a.counts().await;
    assert_eq!((c["sealed_scans"].as_u64(), c["cache_hits"].as_u64()), (Some(1), Some(0)), "{c}");

    // The API's answer: the same enumeration (a cache hit), the same controls and tokens.
    let s = a.sealed().await;
    assert_eq!(s["sealed"]["cache_hit"], true, "{s}");
    let mut api: Vec<(String, String, String)> = s["sealed"]["controls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let f = |k: &str| c[k].as_str().unwrap().to_string();
            (f("role"), f("name"), f("token"))
        })
        .collect();
    api.sort();
    assert_eq!(listed, api);

    configure_sealed(&sc, "[agent.sealed]\ndiscovery = false\n", |s| s["discovery"] == false).await;
    let (err, text, meta) =
        tokio::task::block_in_place(|| mcp.call("browser_snapshot", json!({"interactive": true, "sealed": true})));
    assert!(err, "{text}");
    assert!(text.ends_with("[sealed_disabled]") && text.contains("agent.sealed.discovery"), "{text}");
    assert_eq!(meta, json!({"code": "sealed_disabled", "exit": 2}));
    assert_eq!(a.counts().await["sealed_scans"], 1, "a refusal reads nothing");
}

/// Tab switches and idle time do no accessibility or piercing work: each tab's counts stay
/// what they were across switching to it and away, and across two idle seconds on it, even
/// with a sealed enumeration cached (its frame sessions attached).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tab_switches_and_idle_time_do_no_accessibility_or_piercing_work() {
    let sc = Sidecar::start(&[]);
    let (base, _win, a) = login_page(&sc).await;
    a.sealed().await;
    let first = a.ok("stats", json!({})).await;
    assert_eq!(first["counts"]["sealed_scans"], 1, "{first}");
    a.ok("tabs", json!({"action": "new", "url": format!("{base}/sealed_login.html")})).await;
    a.open(&base, "sealed_login.html").await;
    a.ok("snapshot", json!({})).await;
    let second = a.ok("stats", json!({})).await;
    assert_ne!(second["tab"], first["tab"], "{second}");
    assert_eq!((second["counts"]["ax_reads"].as_u64(), second["counts"]["pierce_reads"].as_u64()), (Some(0), Some(0)));

    for (n, before) in [("1", &first), ("2", &second), ("1", &first)] {
        a.ok("tabs", json!({"action": "select", "tab": n})).await;
        let now = a.ok("stats", json!({})).await;
        assert_eq!(now, *before, "switched to tab {n}");
        // Idle: nothing the sidecar does on its own (screencast, watchers) reads the tree.
        tokio::time::sleep(Duration::from_secs(2)).await;
        let idle = a.ok("stats", json!({})).await;
        assert_eq!(idle, *before, "idle on tab {n}");
    }
}

/// A cross-site (out-of-process) frame sent to another document by script is a new frame
/// set: the next `--sealed` enumerates again and lists the new document's controls, not the
/// old ones from the cache; the call after that is a hit again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cross_site_frame_navigating_is_a_fresh_enumeration() {
    let sc = Sidecar::start(&[]);
    let (base, _win, a) = login_page(&sc).await;
    let s = a.sealed().await;
    assert!(names(&s).contains(&"Framed localhost".to_string()), "{s:#}");
    assert_eq!(a.sealed().await["sealed"]["cache_hit"], true, "the same documents: a hit");

    let port = base.rsplit(':').next().unwrap();
    a.eval(&format!("document.getElementById('cross').src = 'http://localhost:{port}/sealed_frame_next.html'; true"))
        .await;
    let deadline = tokio::time::Instant::now() + HANG;
    while a.eval("window.sealedLog.some((e) => e.what === 'next loaded localhost')").await != true {
        assert!(tokio::time::Instant::now() < deadline, "the frame never loaded its next document");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    let fresh = a.sealed().await;
    assert_eq!(fresh["sealed"]["cache_hit"], false, "{fresh:#}");
    let got = names(&fresh);
    assert!(
        got.contains(&"Next framed localhost".to_string()) && !got.contains(&"Framed localhost".to_string()),
        "{got:?}"
    );
    assert!(got.contains(&"Framed 127.0.0.1".to_string()), "the same-site frame is still there: {got:?}");
    let c = a.counts().await;
    assert_eq!((c["sealed_scans"].as_u64(), c["cache_hits"].as_u64()), (Some(2), Some(1)), "{c}");

    let again = a.sealed().await;
    assert_eq!(again["sealed"]["cache_hit"], true, "{again:#}");
    assert_eq!(names(&again), got);
    let after = a.counts().await;
    assert_eq!(
        (after["ax_reads"].clone(), after["pierce_reads"].clone()),
        (c["ax_reads"].clone(), c["pierce_reads"].clone())
    );
}
