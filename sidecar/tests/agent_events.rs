//! A tab's events (issue 25 items 4 and 8) end to end: a real Chromium behind a screencast
//! pane, real local pages (`tests/fixtures/agent/events.html`) from a real HTTP upstream. A
//! console error and a failed request logged, `--since` filtering, `wait --event download`
//! while a click starts a download (the file checked on disk, `downloads` listing its path),
//! a click opening a popup (`tab` with its number), a navigation to a server that accepts and
//! never answers reported as `stalled_navigation` (and said in a verb's answer), a page hung in
//! its script found `unresponsive`, one that answers but never paints `not_painting`, a
//! killed renderer as `crash`, and the real
//! `ph browser events --follow | head -3` in a pane ending cleanly.

mod common;

use common::agent::{browser_pane, fixture_page, Agent, BrowserPane};
use common::{temp_dir, Sidecar, HANG};
use serde_json::{json, Value};

/// The test-only stall bound given to the sidecar, in ms.
const STALL_MS: &str = "1500";

/// The ref on the line of `text` containing `needle`.
fn ref_of(text: &str, needle: &str) -> String {
    common::agent::ref_on(text, needle)
}

/// Every event of the active tab after `since` until one satisfies `done` (long polls,
/// bounded by HANG); returns them all and every watchdog line the answers carried.
async fn events_until(a: &Agent<'_>, since: u64, done: impl Fn(&Value) -> bool) -> (Vec<Value>, Vec<String>) {
    events_of_until(a, None, since, done).await
}

/// As [`events_until`], of tab `tab` (an id an answer gave) when given: an action that opens
/// a popup makes the popup the active tab, whose log counts from 1.
async fn events_of_until(
    a: &Agent<'_>,
    tab: Option<&Value>,
    since: u64,
    done: impl Fn(&Value) -> bool,
) -> (Vec<Value>, Vec<String>) {
    let deadline = tokio::time::Instant::now() + HANG;
    let (mut all, mut notes, mut since) = (Vec::new(), Vec::new(), since);
    loop {
        let mut body = json!({"since": since, "wait_ms": 2000});
        if let Some(t) = tab {
            body["tab"] = t.clone();
        }
        let v = a.ok("events", body).await;
        for n in v["watchdog"].as_array().into_iter().flatten() {
            notes.push(n.as_str().unwrap().to_string());
        }
        let evs = v["events"].as_array().unwrap().clone();
        for e in &evs {
            assert!(e["seq"].as_u64().unwrap() > since, "only after --since {since}: {e}");
        }
        since = v["last"].as_u64().unwrap();
        let found = evs.iter().any(&done);
        all.extend(evs);
        if found {
            return (all, notes);
        }
        assert!(tokio::time::Instant::now() < deadline, "never came; got {all:#?}");
    }
}

fn has(evs: &[Value], kind: &str, detail: &str) -> bool {
    evs.iter().any(|e| e["kind"] == kind && e["detail"].as_str().unwrap_or("").contains(detail))
}

/// A server that accepts connections and never answers (each kept open until the test ends).
fn silent_server() -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for s in l.incoming().flatten() {
            held.push(s);
        }
    });
    format!("http://127.0.0.1:{port}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tab_logs_errors_downloads_popups_and_a_stalled_navigation() {
    let downloads = temp_dir("events-downloads");
    let sc = Sidecar::start_with_env(
        &[],
        &[("XDG_DOWNLOAD_DIR", downloads.to_str().unwrap()), ("PORTHOLE_STALL_MS", STALL_MS)],
    );
    let BrowserPane { pane, .. } = browser_pane(&sc, fixture_page, "events.html").await;
    let a = Agent::new(&sc, pane);

    // From the tab's start: its navigation and its loads, numbered from 1.
    let (evs, _) = events_until(&a, 0, |e| e["kind"] == "load" && e["detail"] == "load").await;
    assert_eq!(evs[0]["seq"], 1, "{evs:#?}");
    assert!(has(&evs, "navigation", "events.html"), "{evs:#?}");
    assert!(has(&evs, "load", "DOMContentLoaded"), "{evs:#?}");
    let first = a.ok("events", json!({})).await;
    let (before, tab1) = (first["last"].as_u64().unwrap(), first["tab"].clone());

    // A console error and a 404, after the click only (--since).
    let s = a.ok("snapshot", json!({})).await;
    let outline = s["text"].as_str().unwrap().to_string();
    a.ok("act", json!({"action": "click", "ref": ref_of(&outline, "button \"Fail\"")})).await;
    let (evs, _) = events_until(&a, before, |e| e["kind"] == "request_failed").await;
    assert!(has(&evs, "console_error", "events: bad thing"), "{evs:#?}");
    assert!(has(&evs, "request_failed", "404 ") && has(&evs, "request_failed", "/missing.json"), "{evs:#?}");
    assert!(!has(&evs, "navigation", ""), "nothing from before --since: {evs:#?}");

    // wait --event download returns when a click starts one; it finishes on disk.
    let waiter = a.call("wait", json!({"event": "download", "timeout_ms": 30000}));
    let click = async {
        // The page starts the download 500 ms after the click: the wait is listening by then.
        a.ok("act", json!({"action": "click", "ref": ref_of(&outline, "button \"Download\"")})).await
    };
    let (w, _) = tokio::join!(waiter, click);
    assert_eq!(w.status, 200, "{}", String::from_utf8_lossy(&w.body));
    let w = w.json();
    assert_eq!(w["event"]["kind"], "download", "{w:#}");
    assert_eq!(w["event"]["data"]["name"], "report.csv", "{w:#}");
    let since = w["event"]["seq"].as_u64().unwrap() - 1;
    let (evs, _) = events_until(&a, since, |e| e["kind"] == "download" && e["data"]["state"] == "done").await;
    let done = evs.iter().find(|e| e["data"]["state"] == "done").unwrap();
    let path = done["data"]["path"].as_str().unwrap().to_string();
    assert_eq!(std::path::Path::new(&path), downloads.join("report.csv"), "{done:#}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "id,name\n1,porthole\n");
    assert!(done["detail"].as_str().unwrap().contains(&path), "the path is printed once done: {done:#}");
    let d = a.ok("downloads", json!({})).await;
    let listed = &d["downloads"][0];
    assert_eq!((listed["name"].as_str(), listed["state"].as_str()), (Some("report.csv"), Some("completed")), "{d:#}");
    assert_eq!(listed["path"].as_str(), Some(path.as_str()), "{d:#}");

    // A click that opens a popup: `tab` with its number.
    let before = a.ok("events", json!({})).await["last"].as_u64().unwrap();
    a.ok("act", json!({"action": "click", "ref": ref_of(&outline, "button \"Open popup\"")})).await;
    let (evs, _) =
        events_of_until(&a, Some(&tab1), before, |e| e["kind"] == "tab" && e["data"]["state"] == "opened").await;
    let opened = evs.iter().find(|e| e["kind"] == "tab" && e["data"]["state"] == "opened").unwrap();
    assert_eq!(opened["data"]["tab"], 2, "{opened:#}");
    assert!(opened["detail"].as_str().unwrap().starts_with("opened tab 2"), "{opened:#}");

    // wait --event refuses a kind it does not know, and times out as timed_out.
    a.refused("wait", json!({"event": "explosion"}), "bad_request").await;
    a.refused("wait", json!({"event": "crash", "timeout_ms": 300}), "timed_out").await;

    // A navigation to a server that never answers: reported as stalled, never a hang.
    let silent = silent_server();
    let v = a.ok("tabs", json!({})).await;
    let active_before = v["active"].clone();
    let before = a.ok("events", json!({})).await["last"].as_u64().unwrap();
    // Its answer may be the CDP bound's timeout (the document never commits): either way
    // it answers.
    let r = a.call("navigate", json!({"url": format!("{silent}/never")})).await;
    assert!(r.status == 200 || r.code() == "cdp_timeout", "{}", String::from_utf8_lossy(&r.body));
    let (evs, mut notes) = events_until(&a, before, |e| e["kind"] == "stalled_navigation").await;
    let stalled = evs.iter().find(|e| e["kind"] == "stalled_navigation").unwrap();
    assert!(stalled["detail"].as_str().unwrap().contains("/never"), "{stalled:#}");
    assert_eq!(stalled["data"]["ms"], 1500, "{stalled:#}");
    // Said once, in the next answer (the events poll that saw it, or the next verb's).
    if notes.is_empty() {
        let v = a.ok("tabs", json!({})).await;
        notes.extend(v["watchdog"].as_array().into_iter().flatten().map(|n| n.as_str().unwrap().to_string()));
    }
    assert!(notes.iter().any(|n| n.starts_with("stalled_navigation: ") && n.contains("/never")), "{notes:?}");
    let v = a.ok("tabs", json!({})).await;
    assert!(v["watchdog"].is_null(), "said once: {v:#}");
    assert_eq!(v["active"], active_before);
    // The download's link was no stalled navigation (the bound has long passed since).
    let v = a.ok("events", json!({"tab": tab1})).await;
    for e in v["events"].as_array().unwrap().iter().filter(|e| e["kind"] == "stalled_navigation") {
        assert!(e["detail"].as_str().unwrap().contains("/never"), "{e:#}");
    }
}

/// A page whose script never returns: the next changing verb finds it unresponsive (logged
/// and said once in a later answer) and still answers under its own deadline.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_page_is_reported_unresponsive_and_no_verb_hangs() {
    let sc = Sidecar::start(&[]);
    let BrowserPane { base, pane, .. } = browser_pane(&sc, fixture_page, "events.html").await;
    let a = Agent::new(&sc, pane);
    let before = a.ok("events", json!({})).await["last"].as_u64().unwrap();
    let r = a.call("navigate", json!({"url": format!("{base}/events_hang.html")})).await;
    assert!(r.status == 200 || r.code() == "cdp_timeout", "{}", String::from_utf8_lossy(&r.body));
    // Its document request is logged once sent (the renderer then hangs in its script).
    events_until(&a, before, |e| {
        e["kind"] == "navigation" && e["detail"].as_str().unwrap().ends_with("/events_hang.html")
    })
    .await;
    // Committed (the tab's URL is the browser's to tell), so its script runs from now on.
    a.ok("wait", json!({"url": "events_hang\\.html$", "timeout_ms": 30000})).await;
    // A changing verb checks the page first. It answers either way (done, or its own
    // deadline: the wheel event gets no answer); one that came before the script hung the
    // renderer finds it answering, so again until the watchdog sees it, bounded by HANG.
    let deadline = tokio::time::Instant::now() + HANG;
    let mut notes = Vec::new();
    let evs = loop {
        let r = a.call("scroll", json!({"to": "down"})).await;
        if let Some(n) = r.json()["watchdog"].as_array() {
            notes.extend(n.iter().map(|n| n.as_str().unwrap().to_string()));
        }
        let v = a.ok("events", json!({"since": before})).await;
        notes.extend(v["watchdog"].as_array().into_iter().flatten().map(|n| n.as_str().unwrap().to_string()));
        let evs = v["events"].as_array().unwrap().clone();
        if evs.iter().any(|e| e["kind"] == "unresponsive") {
            break evs;
        }
        assert!(tokio::time::Instant::now() < deadline, "never unresponsive: {evs:#?}");
    };
    let u = evs.iter().find(|e| e["kind"] == "unresponsive").unwrap();
    assert_eq!(u["data"]["ms"], 2000, "{u:#}");
    assert!(notes.iter().any(|n| n.starts_with("unresponsive: ")), "said in an answer: {notes:?}");
}

/// A page that answers but never paints (a render-blocking stylesheet that never arrives):
/// a changing verb finds it `not_painting` (logged, said once in an answer, not
/// `unresponsive`), and the verb still answers under its own deadline. Which verb finds it
/// is a race: the navigation's own check may already run in the new document, so the
/// watchdog lines are gathered from every answer from the navigation on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_that_answers_but_never_paints_is_reported_not_painting() {
    let sc = Sidecar::start(&[]);
    let BrowserPane { base, pane, .. } = browser_pane(&sc, fixture_page, "events.html").await;
    let a = Agent::new(&sc, pane);
    let silent = silent_server();
    let mut notes: Vec<String> = Vec::new();
    let mut gather = |v: &Value| {
        notes.extend(v["watchdog"].as_array().into_iter().flatten().map(|n| n.as_str().unwrap().to_string()));
    };
    // A painting page first: a changing verb there logs no watchdog event.
    let r = a.call("scroll", json!({"to": "down"})).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    let before = a.ok("events", json!({})).await["last"].as_u64().unwrap();
    let r = a.call("navigate", json!({"url": format!("{base}/events_unpainted.html?css={silent}/never.css")})).await;
    assert!(r.status == 200 || r.code() == "cdp_timeout", "{}", String::from_utf8_lossy(&r.body));
    if r.status == 200 {
        gather(&r.json());
    }
    gather(&a.ok("wait", json!({"url": "events_unpainted\\.html", "timeout_ms": 30000})).await);
    // The page answers: its title is read by evaluation.
    let deadline = tokio::time::Instant::now() + HANG;
    loop {
        let v = a.ok("tabs", json!({})).await;
        gather(&v);
        if v.to_string().contains("Unpainted") {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "the page never answered with its title");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let r = a.call("scroll", json!({"to": "down"})).await;
    if r.status == 200 {
        gather(&r.json());
    }
    let v = a.ok("events", json!({"since": before})).await;
    gather(&v);
    let evs = v["events"].as_array().unwrap().clone();
    let p = evs.iter().find(|e| e["kind"] == "not_painting").unwrap_or_else(|| panic!("no not_painting: {evs:#?}"));
    assert_eq!(p["data"]["ms"], 2000, "{p:#}");
    assert!(!has(&evs, "unresponsive", ""), "it answers, so it is not unresponsive: {evs:#?}");
    assert_eq!(
        notes.iter().filter(|n| n.starts_with("not_painting: ")).count(),
        1,
        "said once in an answer: {notes:?}"
    );
}

/// The renderer processes under Chromium `root` (`--type=renderer`), as fidelity.rs finds them.
fn renderers(root: u32) -> Vec<u32> {
    let mut parent = std::collections::HashMap::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { continue };
        let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r.to_string()) else { continue };
        let ppid: u32 = rest.split_whitespace().nth(1).and_then(|p| p.parse().ok()).unwrap_or(0);
        parent.insert(pid, ppid);
    }
    let descends = |mut p: u32| {
        for _ in 0..64 {
            match parent.get(&p) {
                Some(&pp) if pp == root => return true,
                Some(&pp) if pp > 1 => p = pp,
                _ => return false,
            }
        }
        false
    };
    let renderer = |p: &u32| {
        std::fs::read(format!("/proc/{p}/cmdline")).is_ok_and(|c| c.windows(15).any(|w| w == b"--type=renderer"))
    };
    parent.keys().copied().filter(|&p| descends(p)).filter(renderer).collect()
}

/// A killed renderer is a `crash` event, readable while the page is gone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_renderer_is_a_crash_event() {
    let sc = Sidecar::start(&[]);
    let BrowserPane { pane, win, .. } = browser_pane(&sc, fixture_page, "events.html").await;
    let id = win.browser_of(&pane).unwrap();
    let a = Agent::new(&sc, pane);
    let before = a.ok("events", json!({})).await["last"].as_u64().unwrap();
    let pid = common::browser::info(&sc, &id).await["pid"].as_u64().expect("pid") as u32;
    let victims = renderers(pid);
    assert!(!victims.is_empty(), "no renderer process under {pid}");
    for p in victims {
        let _ = std::process::Command::new("kill").args(["-9", &p.to_string()]).status();
    }
    let (evs, _) = events_until(&a, before, |e| e["kind"] == "crash").await;
    let crash = evs.iter().find(|e| e["kind"] == "crash").unwrap();
    assert_eq!(crash["detail"], "the renderer of tab 1 crashed", "{crash:#}");
}

/// The real `ph` in a real pane: `events --follow | head -3` ends (quietly, exit 0) once
/// `head` has its lines; `--since` filters; `downloads` says there are none.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ph_follows_events_into_head_and_ends_cleanly() {
    let sc = Sidecar::start_with_env(&[], &[("SHELL", "/bin/bash")]);
    let base = common::browser::serve(fixture_page);
    let r = sc.req("POST", "/api/terminals", Some(&json!({"cols": 220, "rows": 50}))).await;
    let t1 = r.json()["id"].as_str().unwrap().to_string();
    let _win = common::window::TestWindow::attach(&sc, &t1).await;
    let script = format!(
        r#"ph browser open {base}/events.html >/dev/null; ph browser wait --load >/dev/null; ph browser events --follow | head -3; echo "follow rc=${{PIPESTATUS[0]}}"; ph browser events --since 1 | head -1; ph browser downloads; ph browser wait --event crash --timeout 0.5; echo "wait rc=$?"; echo "DONE""#
    );
    let out = common::control::run_in(&sc, &t1, &script, "^DONE$").await;
    let follow: Vec<&str> = out.lines().skip_while(|l| !l.starts_with("1 navigation ")).take(3).collect();
    assert_eq!(follow.len(), 3, "{out}");
    assert!(follow[0].starts_with("1 navigation to ") && follow[0].ends_with("/events.html"), "{out}");
    assert!(follow[1].starts_with("2 load "), "{out}");
    assert!(out.contains("follow rc=0"), "ph ends quietly once head has its lines: {out}");
    assert!(out.lines().filter(|l| l.starts_with("2 load ")).count() >= 2, "--since 1 starts at 2: {out}");
    assert!(!out.contains("Broken pipe") && !out.contains("panicked"), "{out}");
    assert!(out.contains("no downloads"), "{out}");
    assert!(out.contains("[timed_out]") && out.contains("wait rc=4"), "{out}");
}
