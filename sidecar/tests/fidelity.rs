//! Screencast fidelity over the viewer socket (issue #11), against real headless Chromium and
//! pages served by a server this file starts: every click lands where it was aimed at every
//! DPR (also while a crisp capture is in flight), no input is lost however fast it comes.
//! One sidecar is shared by the file (it exits with the test process).

mod common;

use std::sync::OnceLock;
use std::time::Duration;

use common::browser::{create_at, delete, fixed, info, send, serve, until_json, until_title, view, ViewWs};
use common::{Sidecar, HANG};
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::Message;

fn page(path: &str) -> Option<String> {
    let head = "<!doctype html><style>html,body{margin:0;height:100%}</style>";
    let body = match path {
        // Records where every click lands (page CSS px) in the title: "x,y x,y …".
        "/clicks" => format!(
            r#"{head}<title>clicks</title><script>const r=[];
            addEventListener('click',e=>{{r.push(Math.round(e.clientX)+','+Math.round(e.clientY));document.title=r.join(' ')}})</script>"#
        ),
        // A textarea filling the page; its title is `<length>:<FNV-1a of the UTF-16 units>`.
        "/type" => format!(
            r#"{head}<title>type</title><textarea id=t style="width:100%;height:100%;box-sizing:border-box"></textarea>
            <script>const t=document.getElementById('t');
            const sum=s=>{{let h=0x811c9dc5;for(let i=0;i<s.length;i++){{h^=s.charCodeAt(i);h=Math.imul(h,0x01000193)>>>0}}return h.toString(16)}};
            const show=()=>{{document.title=t.value.length+':'+sum(t.value)}};
            t.addEventListener('input',show);</script>"#
        ),
        "/asks" => format!(
            r#"{head}<title>asks</title><script>addEventListener('beforeunload',e=>{{e.preventDefault();e.returnValue=''}})</script>"#
        ),
        _ => return None,
    };
    Some(body)
}

fn server() -> &'static str {
    static BASE: OnceLock<String> = OnceLock::new();
    BASE.get_or_init(|| serve(page))
}

/// The sidecar shared by this file; it exits when the test process does.
fn sidecar() -> &'static Sidecar {
    static S: OnceLock<Sidecar> = OnceLock::new();
    S.get_or_init(|| Sidecar::start(&["--exit-with-parent"]))
}

/// FNV-1a over UTF-16 code units, as the `/type` page computes it.
fn fnv(s: &str) -> String {
    let mut h: u32 = 0x811c9dc5;
    for u in s.encode_utf16() {
        h ^= u as u32;
        h = h.wrapping_mul(0x01000193);
    }
    format!("{}:{:x}", s.encode_utf16().count(), h)
}

/// Reads frames and messages until a crisp frame arrives (or `HANG`).
async fn until_crisp(ws: &mut ViewWs) {
    let fut = async {
        loop {
            match ws.next().await {
                Some(Ok(Message::Binary(b))) if b.len() > 12 && b[12] & 1 == 1 => return,
                Some(Ok(_)) => {}
                other => panic!("socket ended while waiting for a crisp frame: {other:?}"),
            }
        }
    };
    tokio::time::timeout(HANG, fut).await.expect("a crisp frame");
}

/// Drains whatever the socket has buffered for `ms` (frames, state), keeping it flowing.
async fn drain_for(ws: &mut ViewWs, ms: u64) {
    let until = tokio::time::Instant::now() + Duration::from_millis(ms);
    while let Ok(Some(Ok(_))) = tokio::time::timeout_at(until, ws.next()).await {}
}

/// Clicks `n` times at the centre of an 800×600 page, spacing the clicks so that most of
/// them arrive while a crisp capture runs (the capture starts 250 ms after the last input
/// and takes a while at a high DPR); returns where each landed.
async fn clicks_during_captures(sc: &Sidecar, id: &str, ws: &mut ViewWs, n: usize) -> Vec<String> {
    until_title(sc, id, |t| t == "clicks").await;
    until_crisp(ws).await;
    for i in 0..n {
        for ev in ["down", "up"] {
            send(ws, json!({"type":"input_mouse","event":ev,"x":400,"y":300,"button":"left","clicks":1})).await;
        }
        // 250 ms of quiet starts a capture; land the next click 0..=150 ms into it.
        drain_for(ws, 250 + (i as u64 * 37) % 160).await;
    }
    let t = until_title(sc, id, |t| t.split(' ').count() == n).await;
    t.split(' ').map(str::to_string).collect()
}

/// The clicks that landed elsewhere: (index, where).
fn misses(landed: &[String]) -> Vec<(usize, &String)> {
    landed.iter().enumerate().filter(|(_, p)| *p != "400,300").collect()
}

#[tokio::test]
async fn every_click_lands_at_every_dpr_while_crisp_captures_run() {
    let sc = sidecar();
    let mut report = Vec::new();
    for dpr in [2.0, 1.0, 1.25, 1.5, 3.0] {
        let id = create_at(sc, &format!("{}/clicks", server()), fixed(800, 600, dpr)).await;
        let mut ws = view(sc, &id).await;
        let n = if dpr == 2.0 { 24 } else { 12 };
        let landed = clicks_during_captures(sc, &id, &mut ws, n).await;
        let m = misses(&landed);
        if !m.is_empty() {
            report.push(format!("dpr {dpr}: {} of {n} missed: {m:?}", m.len()));
        }
        delete(sc, &id).await;
    }
    assert!(report.is_empty(), "clicks aimed at (400,300) landed elsewhere:\n{}", report.join("\n"));
}

#[tokio::test]
async fn every_click_lands_in_resize_with_pane_mode_at_dpr_2() {
    let sc = sidecar();
    let id = create_at(sc, &format!("{}/clicks", server()), json!({"mode":"pane"})).await;
    let mut ws = view(sc, &id).await;
    send(&mut ws, json!({"type":"sync","width":800,"height":600,"dpr":2})).await;
    until_json(&mut ws, "synced", |v| v["type"] == "sync" && v["state"] == "synced").await;
    assert_eq!(info(sc, &id).await["viewport"], json!({"width":800,"height":600,"dpr":2.0}));
    let landed = clicks_during_captures(sc, &id, &mut ws, 24).await;
    let m = misses(&landed);
    assert!(m.is_empty(), "{} of 24 clicks aimed at (400,300) landed elsewhere: {m:?}", m.len());
    delete(sc, &id).await;
}

/// Sends text messages as fast as the socket takes them (no waiting on anything).
async fn blast(ws: &mut ViewWs, msgs: Vec<Value>) {
    for m in msgs {
        ws.feed(Message::Text(m.to_string().into())).await.expect("the socket stays open");
    }
    ws.flush().await.expect("flushed");
}

/// The key messages (down with its text, up) that type `s` (ASCII letters, digits, space).
fn keys_for(s: &str) -> Vec<Value> {
    let mut v = Vec::new();
    for c in s.chars() {
        let code = match c {
            'a'..='z' => format!("Key{}", c.to_ascii_uppercase()),
            'A'..='Z' => format!("Key{c}"),
            '0'..='9' => format!("Digit{c}"),
            ' ' => "Space".into(),
            _ => unreachable!(),
        };
        let m = if c.is_ascii_uppercase() { 8 } else { 0 };
        let k = c.to_string();
        v.push(json!({"type":"input_keyboard","event":"down","key":k,"code":code,"text":k,"modifiers":m}));
        v.push(json!({"type":"input_keyboard","event":"up","key":k,"code":code,"text":"","modifiers":m}));
    }
    v
}

async fn focus_textarea(sc: &Sidecar, ws: &mut ViewWs, id: &str) {
    until_title(sc, id, |t| t == "type").await;
    for ev in ["down", "up"] {
        send(ws, json!({"type":"input_mouse","event":ev,"x":100,"y":100,"button":"left","clicks":1})).await;
    }
}

#[tokio::test]
async fn a_key_burst_far_beyond_what_cdp_keeps_up_with_arrives_complete_and_in_order() {
    let sc = sidecar();
    let id = create_at(sc, &format!("{}/type", server()), fixed(800, 600, 1.0)).await;
    let mut ws = view(sc, &id).await;
    focus_textarea(sc, &mut ws, &id).await;
    // 3000 characters (6000 messages) at once, interleaved with pointer moves.
    let alphabet = "abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ 0123456789";
    let text: String = (0..3000).map(|i| alphabet.as_bytes()[(i * 7 + i / 13) % alphabet.len()] as char).collect();
    let mut msgs = Vec::new();
    for (i, k) in keys_for(&text).into_iter().enumerate() {
        msgs.push(k);
        if i % 5 == 0 {
            msgs.push(json!({"type":"input_mouse","event":"move","x":(i % 700) as f64,"y":200}));
        }
    }
    let drain = tokio::spawn(async move {
        blast(&mut ws, msgs).await;
        ws
    });
    let want = fnv(&text);
    let got = until_title(sc, &id, |t| t == want || t.split(':').next() == Some("3000")).await;
    assert_eq!(got, want, "the text arrived complete and in order");
    let mut ws = tokio::time::timeout(HANG, drain).await.expect("sent").unwrap();
    // Still the same socket.
    send(&mut ws, json!({"type":"repaint"})).await;
    until_crisp(&mut ws).await;
    delete(sc, &id).await;
}

#[tokio::test]
async fn a_100_kb_paste_and_paced_keys_arrive_complete_and_in_order() {
    let sc = sidecar();
    let id = create_at(sc, &format!("{}/type", server()), fixed(800, 600, 1.0)).await;
    let mut ws = view(sc, &id).await;
    focus_textarea(sc, &mut ws, &id).await;
    // 100 KB of text with non-ASCII and newlines, in messages under the 64 KiB cap, then keys
    // typed at 500 characters per second right behind it.
    let line = "ünïcödé ✓ 𝄞 the quick brown fox jumps over the lazy dog 0123456789\n";
    let mut paste = String::new();
    while paste.len() < 100_000 {
        paste.push_str(line);
    }
    let chars: Vec<char> = paste.chars().collect();
    for chunk in chars.chunks(16_000) {
        send(&mut ws, json!({"type":"input_text","text": chunk.iter().collect::<String>()})).await;
    }
    let typed = "paced keys at five hundred per second";
    for k in keys_for(typed).chunks(2) {
        for m in k {
            send(&mut ws, m.clone()).await;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let want = fnv(&format!("{paste}{typed}"));
    let n = want.split(':').next().unwrap().to_string();
    let got = until_title(sc, &id, |t| t == want || t.split(':').next() == Some(n.as_str())).await;
    assert_eq!(got, want, "the paste and the keys arrived complete and in order");
    delete(sc, &id).await;
}

/// Pids of `root`'s descendants whose command line has `--type=renderer`.
fn renderers(root: u32) -> Vec<u32> {
    let mut parent = std::collections::HashMap::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { continue };
        // "pid (comm) state ppid …": comm may hold spaces, so split after the last ')'.
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
    parent
        .keys()
        .copied()
        .filter(|&p| descends(p))
        .filter(|p| {
            std::fs::read(format!("/proc/{p}/cmdline")).is_ok_and(|c| c.windows(15).any(|w| w == b"--type=renderer"))
        })
        .collect()
}

#[tokio::test]
async fn a_crashed_renderer_is_reported_at_once_and_reload_brings_the_page_back() {
    let sc = sidecar();
    let id = create_at(sc, &format!("{}/clicks", server()), fixed(800, 600, 1.0)).await;
    let mut ws = view(sc, &id).await;
    until_title(sc, &id, |t| t == "clicks").await;
    let pid = info(sc, &id).await["pid"].as_u64().expect("pid") as u32;
    let victims = renderers(pid);
    assert!(!victims.is_empty(), "no renderer process under {pid}");
    for p in victims {
        let _ = std::process::Command::new("kill").args(["-9", &p.to_string()]).status();
    }
    // What an out-of-memory renderer looks like to Chromium: the tab's page is gone.
    until_json(&mut ws, "crashed", |v| v["type"] == "status" && v["crashed"] == true).await;
    let i = info(sc, &id).await;
    assert_eq!((i["connected"].as_bool(), i["crashed"].as_bool()), (Some(true), Some(true)), "{i}");
    assert!(i["viewport"].is_null(), "a crashed page is not measured: {i}");
    // Input to the crashed page goes nowhere and holds nothing up.
    for ev in ["down", "up"] {
        send(&mut ws, json!({"type":"input_mouse","event":ev,"x":400,"y":300,"button":"left","clicks":1})).await;
    }
    // The socket and the reload's HTTP request are two connections: the barrier makes sure
    // the sidecar has read the clicks (and dropped them) before the reload, as a human's
    // click comes long before their Reload. Without it a busy sidecar read them after the
    // reload and they landed on the new page (CI).
    send(&mut ws, json!({"type":"flush","id":7})).await;
    until_json(&mut ws, "flushed", |v| v["type"] == "flushed" && v["id"] == 7).await;
    let r = sc.req("POST", &format!("/api/browsers/{id}/reload"), None).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    until_json(&mut ws, "not crashed", |v| v["type"] == "status" && v["crashed"] == false).await;
    until_title(sc, &id, |t| t == "clicks").await;
    assert_eq!(info(sc, &id).await["crashed"], false);
    // The page is live again: a click lands, and frames come.
    for ev in ["down", "up"] {
        send(&mut ws, json!({"type":"input_mouse","event":ev,"x":400,"y":300,"button":"left","clicks":1})).await;
    }
    until_title(sc, &id, |t| t == "400,300").await;
    until_crisp(&mut ws).await;
    delete(sc, &id).await;
}

#[tokio::test]
async fn unload_runs_beforeunload_stay_keeps_the_tab_leave_closes_it() {
    let sc = sidecar();
    let id = create_at(sc, &format!("{}/asks", server()), fixed(800, 600, 1.0)).await;
    let mut ws = view(sc, &id).await;
    until_title(sc, &id, |t| t == "asks").await;
    // The gesture that arms beforeunload.
    for ev in ["down", "up"] {
        send(&mut ws, json!({"type":"input_mouse","event":ev,"x":400,"y":300,"button":"left","clicks":1})).await;
    }
    until_crisp(&mut ws).await;
    // As the UI closes: behind a flush, reading the socket all along.
    send(&mut ws, json!({"type":"flush","id":1})).await;
    until_json(&mut ws, "flushed", |v| v["type"] == "flushed").await;
    unload_is_held(sc, &mut ws, &id, "first ask").await;
    send(&mut ws, json!({"type":"dialog","accept":false})).await;
    until_json(&mut ws, "no dialog", |v| v["type"] == "dialog" && v["dialog"].is_null()).await;
    assert_eq!(info(sc, &id).await["tabs"].as_array().unwrap().len(), 1, "Stay keeps the tab");
    unload_is_held(sc, &mut ws, &id, "second ask").await;
    leave_closes(sc, &mut ws, &id).await;
    delete(sc, &id).await;
}

/// Runs `fut` while reading the socket, as a view does (a view that stops reading holds the
/// sidecar's writes, and with them its reads); returns its output and the text messages read.
async fn reading<T>(ws: &mut ViewWs, fut: impl std::future::Future<Output = T>) -> (T, Vec<Value>) {
    tokio::pin!(fut);
    let mut seen = Vec::new();
    loop {
        tokio::select! {
            out = &mut fut => return (out, seen),
            m = ws.next() => match m {
                Some(Ok(Message::Text(t))) => seen.push(serde_json::from_str(t.as_str()).unwrap()),
                Some(Ok(_)) => {}
                other => panic!("socket ended: {other:?}"),
            },
        }
    }
}

/// `POST …/unload` of browser `id` while reading the socket, as the UI closes a pane.
async fn unload(sc: &Sidecar, ws: &mut ViewWs, id: &str) -> (Value, Vec<Value>) {
    reading(ws, async { sc.req("POST", &format!("/api/browsers/{id}/unload"), None).await.json() }).await
}

/// Closing is held by the page's `beforeunload` (`{"closed":false}`) and its dialog reaches
/// the view (`what` names the attempt in a failure).
async fn unload_is_held(sc: &Sidecar, ws: &mut ViewWs, id: &str, what: &str) {
    let (closed, seen) = unload(sc, ws, id).await;
    assert_eq!(closed, json!({"closed": false}), "{what}: closed without asking");
    let asks = |v: &Value| v["type"] == "dialog" && v["dialog"]["kind"] == "beforeunload";
    if !seen.iter().any(asks) {
        until_json(ws, "beforeunload", asks).await;
    }
}

/// Leave: the dialog is accepted and, once it is gone (the UI asks again only then), the
/// close goes through.
async fn leave_closes(sc: &Sidecar, ws: &mut ViewWs, id: &str) {
    send(ws, json!({"type":"dialog","accept":true})).await;
    until_json(ws, "no dialog", |v| v["type"] == "dialog" && v["dialog"].is_null()).await;
    assert_eq!(unload(sc, ws, id).await.0, json!({"closed": true}));
}

/// Closing right after the click that arms `beforeunload` still asks when the view closes as
/// the UI does, behind a `flush` barrier: that click may still wait behind a crisp capture
/// (input waits on the capture's device-metrics emulation), or even on the socket, when the
/// close comes over HTTP; `Page.close` before it lands finds no user activation.
#[tokio::test]
async fn a_close_behind_a_flush_comes_after_the_arming_click_and_asks() {
    let sc = sidecar();
    for round in 0..4u32 {
        let id = create_at(sc, &format!("{}/asks", server()), fixed(800, 600, 2.0)).await;
        let mut ws = view(sc, &id).await;
        until_title(sc, &id, |t| t == "asks").await;
        until_crisp(&mut ws).await;
        // A crisp capture now, the click behind it, and the barrier behind the click.
        send(&mut ws, json!({"type":"repaint"})).await;
        for ev in ["down", "up"] {
            send(&mut ws, json!({"type":"input_mouse","event":ev,"x":400,"y":300,"button":"left","clicks":1})).await;
        }
        send(&mut ws, json!({"type":"flush","id":round})).await;
        until_json(&mut ws, "flushed", |v| v["type"] == "flushed" && v["id"] == round).await;
        unload_is_held(sc, &mut ws, &id, &format!("round {round}")).await;
        leave_closes(sc, &mut ws, &id).await;
        delete(sc, &id).await;
    }
}

/// A renderer that dies while a crisp capture holds its device metrics at the capture's own
/// scale: after Reload, clicks still land where they were aimed (DPR 2).
#[tokio::test]
async fn a_renderer_killed_during_a_capture_comes_back_with_its_own_metrics() {
    let sc = sidecar();
    let mut checked = 0;
    for round in 0..4 {
        let id = create_at(sc, &format!("{}/clicks", server()), fixed(800, 600, 2.0)).await;
        let mut ws = view(sc, &id).await;
        until_title(sc, &id, |t| t == "clicks").await;
        until_crisp(&mut ws).await;
        let pid = info(sc, &id).await["pid"].as_u64().expect("pid") as u32;
        let victims = renderers(pid);
        assert!(!victims.is_empty(), "no renderer process under {pid}");
        // A crisp capture now; the renderer dies while it runs.
        send(&mut ws, json!({"type":"repaint"})).await;
        tokio::time::sleep(Duration::from_millis(5 * round)).await;
        for p in victims {
            let _ = std::process::Command::new("kill").args(["-9", &p.to_string()]).status();
        }
        until_json(&mut ws, "crashed", |v| v["type"] == "status" && v["crashed"] == true).await;
        let r = sc.req("POST", &format!("/api/browsers/{id}/reload"), None).await;
        if r.status != 200 {
            // Now and then Chromium's browser process itself dies with a renderer killed in
            // the middle of a capture (its CDP socket resets): the sidecar must then say the
            // browser is disconnected, and this round has no page to check.
            let i = info(sc, &id).await;
            assert_eq!(i["connected"], false, "reload failed on a live browser: {}", String::from_utf8_lossy(&r.body));
            eprintln!("round {round}: Chromium itself went down with its renderer; reported disconnected");
            delete(sc, &id).await;
            continue;
        }
        until_json(&mut ws, "not crashed", |v| v["type"] == "status" && v["crashed"] == false).await;
        until_title(sc, &id, |t| t == "clicks").await;
        for ev in ["down", "up"] {
            send(&mut ws, json!({"type":"input_mouse","event":ev,"x":400,"y":300,"button":"left","clicks":1})).await;
        }
        let title = until_title(sc, &id, |t| t != "clicks").await;
        assert_eq!(title, "400,300", "round {round}: the click after Reload landed elsewhere");
        checked += 1;
        delete(sc, &id).await;
    }
    assert!(checked > 0, "no round had a browser left to check");
}
