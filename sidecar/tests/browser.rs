//! Browser panes against real headless Chromium (/usr/bin/chromium or whatever discovery
//! finds): the browser API and the viewer socket, with test pages served by a tiny HTTP
//! server started here. One sidecar is shared by the file (it exits with the test process).

mod common;

use std::sync::OnceLock;
use std::time::Duration;

use common::browser::{
    click, create_at, delete, fixed, grant, info, key, send, serve, try_connect, until_closed, until_frame, until_json,
    until_title, until_viewport, view,
};
use common::{Sidecar, HANG};
use futures_util::SinkExt;
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::Message;

/// The 20 000-character paste, built the same way by the page.
fn paste_text() -> String {
    (0..20_000).map(|i| (b'a' + (i % 26) as u8) as char).collect()
}

fn page(path: &str) -> Option<String> {
    let body = match path {
        "/anim" => r#"<!doctype html><title>anim</title><style>
            body{margin:0} #d{width:300px;height:300px;background:red;animation:spin 1s linear infinite}
            @keyframes spin{from{transform:rotate(0)}to{transform:rotate(360deg)}}</style><div id=d></div>"#.to_string(),
        "/static" => "<!doctype html><title>static</title><p>nothing moves</p>".to_string(),
        "/button" => r#"<!doctype html><title>button</title><style>body{margin:0}</style>
            <button id=b style="position:absolute;left:50px;top:50px;width:200px;height:100px"
              onclick="document.title='clicked'">click</button>"#.to_string(),
        "/form" => r#"<!doctype html><title>form</title><style>body{margin:0}</style>
            <form id=f><input id=t name=q autocomplete=off style="position:absolute;left:10px;top:10px;width:400px;height:40px"></form>
            <script>let n=0;const t=document.getElementById('t');
            const show=()=>{document.title='v:'+t.value+'|'+t.selectionStart+'|submits:'+n};
            t.addEventListener('input',show);t.addEventListener('keyup',show);
            document.getElementById('f').addEventListener('submit',e=>{e.preventDefault();n++;show()});</script>"#.to_string(),
        "/select" => r#"<!doctype html><title>select</title><style>body{margin:0}</style>
            <select id=s style="position:absolute;left:20px;top:20px;width:200px;height:30px">
            <option value=a>Alpha<option value=b>Beta<option value=c>Gamma</select>
            <script>let n=0,m=0;const s=document.getElementById('s');
            s.addEventListener('input',()=>m++);
            s.addEventListener('change',()=>{n++;document.title='sel:'+s.value+':change'+n+':input'+m});</script>"#.to_string(),
        "/paste" => r#"<!doctype html><title>paste</title><style>body{margin:0}</style>
            <textarea id=t style="position:absolute;left:0;top:0;width:400px;height:200px"></textarea>
            <script>const want=Array.from({length:20000},(_,i)=>String.fromCharCode(97+i%26)).join('');
            const t=document.getElementById('t');
            t.addEventListener('input',()=>{document.title='paste:'+t.value.length+':'+(t.value===want)});</script>"#.to_string(),
        "/scroll" => r#"<!doctype html><title>y:0</title><style>body{margin:0}</style>
            <div style="height:6000px;background:linear-gradient(red,blue)"></div>
            <script>addEventListener('scroll',()=>{document.title='y:'+Math.round(scrollY)})</script>"#.to_string(),
        "/open" => r#"<!doctype html><title>opener</title><style>body{margin:0}</style>
            <button style="position:absolute;left:0;top:0;width:200px;height:100px"
              onclick="window.open('/static')">open</button>"#.to_string(),
        "/confirm" => r#"<!doctype html><title>confirm</title><style>body{margin:0}</style>
            <button style="position:absolute;left:0;top:0;width:200px;height:100px"
              onclick="setTimeout(()=>{document.title='confirm:'+confirm('sure?')},0)">ask</button>"#.to_string(),
        "/color" => r#"<!doctype html><title>color</title><style>html,body{margin:0;height:100%;background:#000}</style>
            <script>let i=0;addEventListener('keydown',()=>{i++;document.body.style.background=i%2?'#fff':'#000'})</script>"#.to_string(),
        // `?set` sets a session cookie (no expiry: Chromium keeps it in memory only).
        "/cookie" => r#"<!doctype html><script>if(location.search=='?set')document.cookie='sess=abc;path=/';
            if(location.search=='?keep')document.cookie='login=yes;path=/;max-age=3600';
            document.title='cookie:'+document.cookie</script>"#.to_string(),
        "/agent" => r#"<!doctype html><script>document.title='wd:'+navigator.webdriver+'|'+navigator.userAgent</script>"#.to_string(),
        // Its image never loads: the document's load event never fires.
        "/never-loads" => format!(
            "<!doctype html><title>never loads</title><img src=\"http://127.0.0.1:{}/img.png\">",
            hanging_port()
        ),
        _ => return None,
    };
    Some(body)
}

/// A port that accepts connections and never answers them; started once.
fn hanging_port() -> u16 {
    static PORT: OnceLock<u16> = OnceLock::new();
    *PORT.get_or_init(|| {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        std::thread::spawn(move || {
            let mut held = Vec::new();
            for s in l.incoming().flatten() {
                held.push(s); // kept open, never answered
            }
        });
        port
    })
}

/// The test page server of this file, started once; its base URL.
fn server() -> &'static str {
    static BASE: OnceLock<String> = OnceLock::new();
    BASE.get_or_init(|| serve(page))
}

/// The sidecar shared by this file; it exits when the test process does.
fn sidecar() -> &'static Sidecar {
    static S: OnceLock<Sidecar> = OnceLock::new();
    S.get_or_init(|| Sidecar::start(&["--exit-with-parent"]))
}

async fn create(sc: &Sidecar, path: &str, viewport: Value) -> String {
    create_at(sc, &format!("{}{path}", server()), viewport).await
}

#[tokio::test]
async fn frames_arrive_as_jpeg_with_header_and_state_first() {
    let sc = sidecar();
    let id = create(sc, "/anim", fixed(1280, 800, 1.0)).await;
    let mut ws = view(sc, &id).await;
    until_json(&mut ws, "status", |v| v["type"] == "status").await;
    until_json(&mut ws, "tabs", |v| v["type"] == "tabs").await;
    let f = until_frame(&mut ws).await;
    assert!(f.len() > 16 + 2);
    assert_eq!(&f[16..18], &[0xFF, 0xD8], "JPEG magic after the 16-byte header");
    let w = u16::from_le_bytes([f[4], f[5]]);
    let h = u16::from_le_bytes([f[6], f[7]]);
    assert_eq!((w, h), (1280, 800));
    // An animated page keeps sending frames.
    for _ in 0..5 {
        let f = until_frame(&mut ws).await;
        assert_eq!(&f[16..18], &[0xFF, 0xD8]);
    }
    delete(sc, &id).await;
}

#[tokio::test]
async fn a_static_page_gets_a_crisp_capture_and_repaint_gets_another() {
    let sc = sidecar();
    let id = create(sc, "/static", fixed(800, 600, 2.0)).await;
    until_title(sc, &id, |t| t == "static").await;
    let mut ws = view(sc, &id).await;
    let crisp = |f: &Vec<u8>| f[12] & 1 == 1;
    let mut f = until_frame(&mut ws).await;
    while !crisp(&f) {
        f = until_frame(&mut ws).await;
    }
    assert_eq!(&f[16..18], &[0xFF, 0xD8]);
    assert_eq!(f32::from_le_bytes([f[8], f[9], f[10], f[11]]), 2.0);
    send(&mut ws, json!({"type":"repaint"})).await;
    let mut f = until_frame(&mut ws).await;
    while !crisp(&f) {
        f = until_frame(&mut ws).await;
    }
    delete(sc, &id).await;
}

#[tokio::test]
async fn a_click_at_a_buttons_coordinates_changes_the_page() {
    let sc = sidecar();
    let id = create(sc, "/button", fixed(1280, 800, 1.0)).await;
    let mut ws = view(sc, &id).await;
    until_json(&mut ws, "loaded", |v| v["type"] == "url" && v["title"] == "button").await;
    click(&mut ws, 150.0, 100.0).await;
    until_json(&mut ws, "url with the new title", |v| v["type"] == "url" && v["title"] == "clicked").await;
    assert_eq!(info(sc, &id).await["title"], "clicked");
    delete(sc, &id).await;
}

#[tokio::test]
async fn typed_keys_land_exactly_and_enter_submits_once() {
    let sc = sidecar();
    let id = create(sc, "/form", fixed(1280, 800, 1.0)).await;
    let mut ws = view(sc, &id).await;
    until_json(&mut ws, "loaded", |v| v["type"] == "url" && v["title"] == "form").await;
    click(&mut ws, 100.0, 30.0).await;
    for (k, c) in [("a", "KeyA"), ("b", "KeyB"), ("c", "KeyC"), (".", "Period")] {
        key(&mut ws, k, c, k, 0).await;
    }
    key(&mut ws, "Shift", "ShiftLeft", "", 0).await;
    key(&mut ws, "A", "KeyA", "A", 8).await;
    until_title(sc, &id, |t| t.starts_with("v:abc.A|5")).await;
    key(&mut ws, "Backspace", "Backspace", "", 0).await;
    until_title(sc, &id, |t| t.starts_with("v:abc.|4")).await;
    key(&mut ws, "Home", "Home", "", 0).await;
    key(&mut ws, "Delete", "Delete", "", 0).await;
    until_title(sc, &id, |t| t.starts_with("v:bc.|0")).await;
    key(&mut ws, "ArrowRight", "ArrowRight", "", 0).await;
    key(&mut ws, "x", "KeyX", "x", 0).await;
    until_title(sc, &id, |t| t.starts_with("v:bxc.|2")).await;
    key(&mut ws, "End", "End", "", 0).await;
    send(&mut ws, json!({"type":"input_text","text":"héllo → ✓ 日本"})).await;
    until_title(sc, &id, |t| t.starts_with("v:bxc.héllo → ✓ 日本|")).await;
    key(&mut ws, "Enter", "Enter", "", 0).await;
    let t = until_title(sc, &id, |t| t.ends_with("submits:1")).await;
    assert_eq!(t, "v:bxc.héllo → ✓ 日本|16|submits:1");
    // One more key proves nothing submitted twice in between.
    key(&mut ws, "ArrowLeft", "ArrowLeft", "", 0).await;
    let t = until_title(sc, &id, |t| t.contains("|15|")).await;
    assert!(t.ends_with("submits:1"), "{t}");
    delete(sc, &id).await;
}

#[tokio::test]
async fn a_select_picked_through_the_popup_changes_value_and_fires_change_once() {
    let sc = sidecar();
    let id = create(sc, "/select", fixed(1280, 800, 1.0)).await;
    let mut ws = view(sc, &id).await;
    until_json(&mut ws, "loaded", |v| v["type"] == "url" && v["title"] == "select").await;
    click(&mut ws, 100.0, 35.0).await;
    let p = until_json(&mut ws, "popup", |v| v["type"] == "popup").await;
    assert_eq!(p["kind"], "select");
    assert_eq!(p["selected"], 0);
    let labels: Vec<&str> = p["options"].as_array().unwrap().iter().map(|o| o["label"].as_str().unwrap()).collect();
    assert_eq!(labels, ["Alpha", "Beta", "Gamma"]);
    assert_eq!((p["x"].as_f64(), p["y"].as_f64(), p["width"].as_f64()), (Some(20.0), Some(20.0), Some(200.0)));
    send(&mut ws, json!({"type":"popup_choice","index":2})).await;
    let t = until_title(sc, &id, |t| t.starts_with("sel:")).await;
    assert_eq!(t, "sel:c:change1:input1");
    delete(sc, &id).await;
}

#[tokio::test]
async fn a_20000_char_paste_lands_exactly() {
    let sc = sidecar();
    let id = create(sc, "/paste", fixed(1280, 800, 1.0)).await;
    let mut ws = view(sc, &id).await;
    until_json(&mut ws, "loaded", |v| v["type"] == "url" && v["title"] == "paste").await;
    click(&mut ws, 100.0, 100.0).await;
    send(&mut ws, json!({"type":"input_text","text":paste_text()})).await;
    let t = until_title(sc, &id, |t| t.starts_with("paste:20000")).await;
    assert_eq!(t, "paste:20000:true");
    // Copy after select-all returns the same text.
    send(&mut ws, json!({"type":"edit","op":"selectAll"})).await;
    send(&mut ws, json!({"type":"edit","op":"copy"})).await;
    let c = until_json(&mut ws, "clipboard", |v| v["type"] == "clipboard").await;
    assert_eq!(c["text"].as_str().unwrap(), paste_text());
    delete(sc, &id).await;
}

#[tokio::test]
async fn the_wheel_scrolls() {
    let sc = sidecar();
    let id = create(sc, "/scroll", fixed(1280, 800, 1.0)).await;
    let mut ws = view(sc, &id).await;
    until_json(&mut ws, "loaded", |v| v["type"] == "url" && v["url"].as_str().unwrap().ends_with("/scroll")).await;
    send(&mut ws, json!({"type":"input_mouse","event":"move","x":200,"y":200})).await;
    send(&mut ws, json!({"type":"input_mouse","event":"wheel","x":200,"y":200,"deltaX":0,"deltaY":400})).await;
    let t = until_title(sc, &id, |t| t.starts_with("y:") && t != "y:0").await;
    let y: i64 = t[2..].parse().unwrap();
    assert!(y > 0, "{t}");
    delete(sc, &id).await;
}

#[tokio::test]
async fn window_open_creates_a_tab_that_can_be_selected_and_closed() {
    let sc = sidecar();
    let id = create(sc, "/open", fixed(1280, 800, 1.0)).await;
    let mut ws = view(sc, &id).await;
    until_json(&mut ws, "loaded", |v| v["type"] == "url" && v["title"] == "opener").await;
    let first = info(sc, &id).await["active_tab"].as_str().unwrap().to_string();
    click(&mut ws, 100.0, 50.0).await;
    let tabs =
        until_json(&mut ws, "two tabs", |v| v["type"] == "tabs" && v["tabs"].as_array().unwrap().len() == 2).await;
    assert!(tabs["tabs"].as_array().unwrap().iter().any(|t| t["id"] == first.as_str()));
    until_json(&mut ws, "the new tab active", |v| {
        v["type"] == "tabs" && v["active"].is_string() && v["active"] != first.as_str()
    })
    .await;
    let r = sc.req("POST", &format!("/api/browsers/{id}/tabs/select"), Some(&json!({"tab": first}))).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(info(sc, &id).await["active_tab"], first.as_str());
    let other = info(sc, &id).await["tabs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_string())
        .find(|t| *t != first)
        .unwrap();
    let r = sc.req("POST", &format!("/api/browsers/{id}/tabs/close"), Some(&json!({"tab": other}))).await;
    assert_eq!(r.status, 200);
    let deadline = tokio::time::Instant::now() + HANG;
    loop {
        let v = info(sc, &id).await;
        if v["tabs"].as_array().unwrap().len() == 1 {
            assert_eq!(v["tabs"][0]["id"], first.as_str());
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "the closed tab stayed listed: {v}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    delete(sc, &id).await;
}

#[tokio::test]
async fn a_dialog_is_reported_and_answered_only_as_the_user_chooses() {
    let sc = sidecar();
    let id = create(sc, "/confirm", fixed(1280, 800, 1.0)).await;
    let mut ws = view(sc, &id).await;
    until_json(&mut ws, "loaded", |v| v["type"] == "url" && v["title"] == "confirm").await;
    click(&mut ws, 100.0, 50.0).await;
    let d = until_json(&mut ws, "dialog", |v| v["type"] == "dialog" && v["dialog"].is_object()).await;
    assert_eq!(d["dialog"]["kind"], "confirm");
    assert_eq!(d["dialog"]["message"], "sure?");
    // Still pending: nobody answered for the user.
    assert!(info(sc, &id).await["dialog"].is_object());
    send(&mut ws, json!({"type":"dialog","accept":false})).await;
    until_json(&mut ws, "dialog gone", |v| v["type"] == "dialog" && v["dialog"].is_null()).await;
    assert_eq!(until_title(sc, &id, |t| t.starts_with("confirm:")).await, "confirm:false");
    delete(sc, &id).await;
}

#[tokio::test]
async fn fixed_and_resize_with_pane_sizes_are_what_the_page_measures() {
    let sc = sidecar();
    let id = create(sc, "/static", fixed(1024, 700, 1.0)).await;
    until_viewport(sc, &id, json!({"width":1024,"height":700,"dpr":1.0})).await;
    let r = sc.req("POST", &format!("/api/browsers/{id}/viewport"), Some(&fixed(390, 844, 2.0))).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    until_viewport(sc, &id, json!({"width":390,"height":844,"dpr":2.0})).await;
    // Resize with pane: the view's size, after the settle.
    let r = sc.req("POST", &format!("/api/browsers/{id}/viewport"), Some(&json!({"mode":"pane"}))).await;
    assert_eq!(r.status, 200);
    let mut ws = view(sc, &id).await;
    send(&mut ws, json!({"type":"sync","width":700,"height":500,"dpr":1.0})).await;
    send(&mut ws, json!({"type":"sync","width":640,"height":480,"dpr":2.0})).await;
    until_json(&mut ws, "synced", |v| v["type"] == "sync" && v["state"] == "synced").await;
    until_viewport(sc, &id, json!({"width":640,"height":480,"dpr":2.0})).await;
    // Back to fixed: sync is off and a pane size is refused with sync off.
    let r = sc.req("POST", &format!("/api/browsers/{id}/viewport"), Some(&fixed(1280, 800, 1.0))).await;
    assert_eq!(r.status, 200);
    until_json(&mut ws, "sync off", |v| v["type"] == "sync" && v["state"] == "off").await;
    send(&mut ws, json!({"type":"sync","width":640,"height":480,"dpr":2.0})).await;
    until_json(&mut ws, "sync off reply", |v| v["type"] == "sync" && v["state"] == "off").await;
    until_viewport(sc, &id, json!({"width":1280,"height":800,"dpr":1.0})).await;
    delete(sc, &id).await;
}

/// The page sees an ordinary Chromium: no `navigator.webdriver` (chromiumoxide's default
/// `--enable-automation` sets it) and no `HeadlessChrome` in the user agent (protocol §8).
#[tokio::test]
async fn a_screencast_page_sees_an_ordinary_chromium() {
    let sc = sidecar();
    let id = create(sc, "/agent", fixed(800, 600, 1.0)).await;
    let title = until_title(sc, &id, |t| t.starts_with("wd:")).await;
    assert!(title.starts_with("wd:false|"), "{title}");
    assert!(!title.contains("Headless"), "{title}");
    assert!(looks_like_chrome(&title), "{title}");
    delete(sc, &id).await;
}

/// `… Chrome/<major>.0.0.0 Safari/537.36` with a numeric major.
fn looks_like_chrome(title: &str) -> bool {
    title.split(' ').any(|w| {
        w.strip_prefix("Chrome/")
            .and_then(|v| v.strip_suffix(".0.0.0"))
            .is_some_and(|m| !m.is_empty() && m.bytes().all(|b| b.is_ascii_digit()))
    }) && title.ends_with("Safari/537.36")
}

#[tokio::test]
async fn navigation_history_and_reload_work() {
    let sc = sidecar();
    let id = create(sc, "/static", fixed(1280, 800, 1.0)).await;
    until_title(sc, &id, |t| t == "static").await;
    let r = sc
        .req("POST", &format!("/api/browsers/{id}/navigate"), Some(&json!({"url": format!("{}/button", server())})))
        .await;
    assert_eq!(r.status, 200);
    until_title(sc, &id, |t| t == "button").await;
    let r = sc.req("POST", &format!("/api/browsers/{id}/history"), Some(&json!({"delta": -1}))).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    until_title(sc, &id, |t| t == "static").await;
    let r = sc.req("POST", &format!("/api/browsers/{id}/history"), Some(&json!({"delta": 1}))).await;
    assert_eq!(r.status, 200);
    until_title(sc, &id, |t| t == "button").await;
    let r = sc.req("POST", &format!("/api/browsers/{id}/reload"), None).await;
    assert_eq!(r.status, 200);
    delete(sc, &id).await;
}

/// `navigate` answers once the navigation has started (protocol §8.2), not after the load,
/// and a page that never finishes loading holds no later navigation behind it.
#[tokio::test]
async fn a_page_that_never_finishes_loading_does_not_hold_navigation() {
    let sc = sidecar();
    let id = create(sc, "/static", fixed(1280, 800, 1.0)).await;
    until_title(sc, &id, |t| t == "static").await;
    let nav = |path: &str| json!({"url": format!("{}{path}", server())});
    let r = sc.req("POST", &format!("/api/browsers/{id}/navigate"), Some(&nav("/never-loads"))).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    until_title(sc, &id, |t| t == "never loads").await;
    let r = sc.req("POST", &format!("/api/browsers/{id}/navigate"), Some(&nav("/button"))).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    until_title(sc, &id, |t| t == "button").await;
    delete(sc, &id).await;
}

#[tokio::test]
async fn request_bodies_are_typed_and_bounded() {
    let sc = sidecar();
    for (body, code) in [
        (json!({"url":"file:///etc/passwd"}), "bad_request"),
        (json!({"url":"javascript:alert(1)"}), "bad_request"),
        (json!({"url": format!("http://a/{}", "x".repeat(9000))}), "bad_request"),
        (
            json!({"url":"http://127.0.0.1:1/","viewport":{"mode":"fixed","width":99,"height":800,"dpr":1}}),
            "bad_request",
        ),
        (
            json!({"url":"http://127.0.0.1:1/","viewport":{"mode":"fixed","width":800,"height":800,"dpr":5}}),
            "bad_request",
        ),
        (json!({"url":"http://127.0.0.1:1/","viewport":{"mode":"zoom"}}), "bad_json"),
        (json!({"url":"http://127.0.0.1:1/","extra":1}), "bad_json"),
    ] {
        let r = sc.req("POST", "/api/browsers", Some(&body)).await;
        assert_eq!(r.code(), code, "{body}");
    }
    assert_eq!(sc.req("GET", "/api/browsers/b999999", None).await.status, 404);
    assert_eq!(sc.req("POST", "/api/browsers/b999999/viewer", None).await.status, 404);
}

#[tokio::test]
async fn link_local_and_metadata_addresses_are_refused_in_every_spelling() {
    // The proxy's check (protocol §6.1), applied before any Chromium is launched; `navigate`
    // checks its body before looking the browser up, so an unknown id still shows the refusal.
    let sc = sidecar();
    for url in [
        "http://169.254.169.254/latest/meta-data",
        "http://2852039166/",
        "https://0251.0376.0251.0376/",
        "http://0xa9fea9fe/",
        "HTTP://169.254.43518/",
        "http://169.254.169.254./",
        "http://[::ffff:169.254.169.254]/",
        "http://[fe80::1]:8080/",
        "http://[fd00:ec2::254]/",
        "http://100.100.100.200/",
    ] {
        let r = sc.req("POST", "/api/browsers", Some(&json!({ "url": url }))).await;
        assert_eq!((r.status, r.code()), (403, "blocked_address".to_string()), "create {url}");
        let r = sc.req("POST", "/api/browsers/b999999/navigate", Some(&json!({ "url": url }))).await;
        assert_eq!((r.status, r.code()), (403, "blocked_address".to_string()), "navigate {url}");
    }
    let r = sc.req("POST", "/api/browsers/b999999/navigate", Some(&json!({"url": "http://10.0.0.5/"}))).await;
    assert_eq!(r.status, 404, "a LAN address passes the check (then the id is unknown)");
}

#[tokio::test]
async fn malformed_oversized_and_unknown_inbound_messages_close_the_socket() {
    let sc = sidecar();
    let id = create(sc, "/static", fixed(800, 600, 1.0)).await;
    for bad in [
        "not json".to_string(),
        json!({"type":"explode"}).to_string(),
        json!({"type":"input_mouse","event":"down","x":1e9,"y":0}).to_string(),
        json!({"type":"input_keyboard","event":"down","key":"a","code":"KeyA"}).to_string(),
        json!({"type":"sync","width":800,"height":600,"dpr":9}).to_string(),
        json!({"type":"repaint","extra":true}).to_string(),
    ] {
        let mut ws = view(sc, &id).await;
        ws.send(Message::Text(bad.clone().into())).await.unwrap();
        assert_eq!(until_closed(&mut ws).await, Some(1008), "{bad}");
    }
    // Over 64 KiB: the connection ends.
    let mut ws = view(sc, &id).await;
    let big = json!({"type":"input_text","text":"x".repeat(70 * 1024)}).to_string();
    let _ = ws.send(Message::Text(big.into())).await;
    let code = until_closed(&mut ws).await;
    assert_ne!(code, Some(1000), "oversized message must not be accepted");
    // Binary input is refused too.
    let mut ws = view(sc, &id).await;
    ws.send(Message::Binary(vec![1, 2, 3].into())).await.unwrap();
    assert_eq!(until_closed(&mut ws).await, Some(1008));
    delete(sc, &id).await;
}

#[tokio::test]
async fn killing_chromium_reports_disconnected_and_relaunch_returns_at_the_last_url() {
    let sc = sidecar();
    let id = create(sc, "/button", fixed(800, 600, 1.0)).await;
    let mut ws = view(sc, &id).await;
    until_json(&mut ws, "loaded", |v| v["type"] == "url" && v["title"] == "button").await;
    let pid = info(sc, &id).await["pid"].as_i64().expect("pid");
    common::send_signal(pid as u32, 9);
    until_json(&mut ws, "disconnected", |v| v["type"] == "status" && v["connected"] == false).await;
    assert_eq!(info(sc, &id).await["connected"], false);
    let r = sc
        .req("POST", &format!("/api/browsers/{id}/navigate"), Some(&json!({"url": format!("{}/static", server())})))
        .await;
    assert_eq!(r.code(), "disconnected");
    // The relaunch ends this view and brings the browser back at its last URL.
    let r = sc.req("POST", &format!("/api/browsers/{id}/relaunch"), None).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    until_closed(&mut ws).await;
    until_title(sc, &id, |t| t == "button").await;
    assert_eq!(info(sc, &id).await["connected"], true);
    assert!(common::wait_pid_gone(pid).await, "the killed Chromium was reaped");

    // Killed again, and relaunched somewhere else: it comes back there (the user typed an
    // address while it was stopped), not at its last URL. The URL is checked as navigate's.
    let pid = info(sc, &id).await["pid"].as_i64().expect("pid");
    common::send_signal(pid as u32, 9);
    until_disconnected(sc, &id).await;
    let path = format!("/api/browsers/{id}/relaunch");
    let r = sc.req("POST", &path, Some(&json!({"url": "http://169.254.169.254/"}))).await;
    assert_eq!(r.code(), "blocked_address");
    assert_eq!(sc.req("POST", &path, Some(&json!({"url": "file:///etc/passwd"}))).await.status, 400);
    let r = sc.req("POST", &path, Some(&json!({"url": format!("{}/static", server()), "extra": 1}))).await;
    assert_eq!(r.code(), "bad_json");
    assert_eq!(info(sc, &id).await["connected"], false, "a refused relaunch starts nothing");
    let r = sc.req("POST", &path, Some(&json!({"url": format!("{}/static", server())}))).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    until_title(sc, &id, |t| t == "static").await;
    delete(sc, &id).await;
}

/// A crash loses the session cookies Chromium held in memory; Relaunch carries over the
/// sidecar's last snapshot of a viewed browser's cookies, so the user stays logged in.
#[tokio::test]
async fn relaunch_after_a_crash_keeps_session_cookies() {
    let sc = sidecar();
    let id = create(sc, "/cookie?set", fixed(800, 600, 1.0)).await;
    let _ws = view(sc, &id).await;
    until_title(sc, &id, |t| t == "cookie:sess=abc").await;
    // The last URL must not set the cookie itself: Relaunch returns to it.
    let r = sc
        .req("POST", &format!("/api/browsers/{id}/navigate"), Some(&json!({"url": format!("{}/cookie", server())})))
        .await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    until_title(sc, &id, |t| t == "cookie:sess=abc").await;
    assert!(info(sc, &id).await["url"].as_str().unwrap().ends_with("/cookie"));
    // Snapshots are taken every second while viewed; this waits for several (a precondition,
    // not a measurement).
    tokio::time::sleep(Duration::from_secs(5)).await;
    let pid = info(sc, &id).await["pid"].as_i64().expect("pid");
    common::send_signal(pid as u32, 9);
    until_disconnected(sc, &id).await;
    let r = sc.req("POST", &format!("/api/browsers/{id}/relaunch"), None).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    // The relaunched page's own title: "cookie:" if the session cookie was lost.
    assert_eq!(until_title(sc, &id, |t| t.starts_with("cookie:")).await, "cookie:sess=abc");
    delete(sc, &id).await;
}

async fn until_disconnected(sc: &Sidecar, id: &str) {
    let deadline = tokio::time::Instant::now() + common::HANG;
    while info(sc, id).await["connected"] != false {
        assert!(tokio::time::Instant::now() < deadline, "never disconnected");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn delete_closes_chromium_and_leaves_no_process() {
    let sc = sidecar();
    let id = create(sc, "/static", fixed(800, 600, 1.0)).await;
    let pid = info(sc, &id).await["pid"].as_i64().expect("pid");
    delete(sc, &id).await;
    assert!(common::wait_pid_gone(pid).await);
    assert_eq!(sc.req("GET", &format!("/api/browsers/{id}"), None).await.status, 404);
}

/// Grants get their own sidecar (short test-only TTL, and a cap no other test touches).
#[tokio::test]
async fn viewer_grants_are_single_use_expire_and_are_capped() {
    let sc = Sidecar::start_with_env(&[], &[("PORTHOLE_TEST_VIEWER_GRANT_TTL_MS", "8000")]);
    let id = create(&sc, "/static", fixed(800, 600, 1.0)).await;
    // Single use.
    let url = grant(&sc, &id).await;
    assert!(url.starts_with(&format!("ws://127.0.0.1:{}/viewer/", sc.port)));
    let ws = try_connect(&url).await.expect("first use");
    drop(ws);
    assert!(try_connect(&url).await.is_err(), "second use refused");
    // A plain request is refused and does not burn the grant.
    let url = grant(&sc, &id).await;
    let path = url.trim_start_matches(&format!("ws://127.0.0.1:{}", sc.port)).to_string();
    let r = sc.raw("GET", &path, &[], b"").await;
    assert_eq!(r.status, 400);
    assert!(try_connect(&url).await.is_ok(), "still usable after a plain request");
    // A foreign Host is refused.
    let url2 = grant(&sc, &id).await;
    let path2 = url2.trim_start_matches(&format!("ws://127.0.0.1:{}", sc.port)).to_string();
    let r = sc.raw("GET", &path2, &[("Host", "evil.example:80")], b"").await;
    assert_eq!(r.status, 403);
    // Expiry (TTL 8 s in this sidecar).
    let stale = grant(&sc, &id).await;
    tokio::time::sleep(Duration::from_millis(8500)).await;
    assert!(try_connect(&stale).await.is_err(), "expired grant refused");
    // Cap: 1024 outstanding, the 1025th refused.
    for i in 0..1024 {
        let r = sc.req("POST", &format!("/api/browsers/{id}/viewer"), None).await;
        assert_eq!(r.status, 200, "grant {i}");
    }
    let r = sc.req("POST", &format!("/api/browsers/{id}/viewer"), None).await;
    assert_eq!(r.status, 429);
    assert_eq!(r.code(), "too_many_grants");
    delete(&sc, &id).await;
}

#[tokio::test]
async fn shutdown_closes_every_chromium() {
    let mut sc = Sidecar::start(&[]);
    let a = create(&sc, "/static", fixed(800, 600, 1.0)).await;
    let b = create(&sc, "/anim", json!({"mode":"pane"})).await;
    let pa = info(&sc, &a).await["pid"].as_i64().expect("pid");
    let pb = info(&sc, &b).await["pid"].as_i64().expect("pid");
    let r = sc.req("POST", "/api/shutdown", None).await;
    assert_eq!(r.status, 202);
    assert!(sc.wait_exit().success());
    assert!(common::wait_pid_gone(pa).await, "first Chromium closed");
    assert!(common::wait_pid_gone(pb).await, "second Chromium closed");
}

/// A sidecar that died without shutting down left a Chromium and its profile: the next
/// sidecar on the same data directory ends that Chromium and removes the profile, and never
/// touches those of a sidecar that runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_sidecars_chromium_is_ended_and_a_live_ones_is_kept() {
    let data = common::temp_dir("data");
    let root = data.join("porthole/browsers");
    let env = [("XDG_DATA_HOME", data.to_str().unwrap())];

    // A live sidecar with a browser of its own.
    let live = Sidecar::start_with_env(&[], &env);
    // Nothing listens on port 9: an error page, which is all this test needs.
    let r = live.req("POST", "/api/browsers", Some(&json!({"url": "http://127.0.0.1:9/"}))).await;
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    let id = r.json()["id"].as_str().unwrap().to_string();
    let live_pid = live.req("GET", &format!("/api/browsers/{id}"), None).await.json()["pid"].as_i64().unwrap();
    let live_profile = root.join(format!("{}-{id}", live.pid));
    assert!(live_profile.is_dir(), "{}", live_profile.display());

    // A profile named after a sidecar pid that no longer runs, its Chromium still up.
    let mut gone = std::process::Command::new("true").spawn().unwrap();
    let dead = gone.id();
    gone.wait().unwrap();
    let orphan = root.join(format!("{dead}-b1"));
    std::fs::create_dir_all(&orphan).unwrap();
    let mut chromium = std::process::Command::new("/usr/bin/chromium");
    chromium.args(["--headless=new", "--remote-debugging-port=0", "--no-first-run"]);
    chromium.arg(format!("--user-data-dir={}", orphan.display()));
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        chromium.arg("--no-sandbox");
    }
    let mut left = chromium
        .arg("about:blank")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("/usr/bin/chromium");
    // Something else under the root that is not a profile of ours stays.
    std::fs::create_dir_all(root.join("notes")).unwrap();

    let next = Sidecar::start_with_env(&[], &env);
    let start = std::time::Instant::now();
    while left.try_wait().unwrap().is_none() {
        assert!(start.elapsed() < HANG, "the orphaned Chromium was not ended");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    while orphan.exists() {
        assert!(start.elapsed() < HANG, "the orphaned profile was not removed");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(!common::pid_gone(live_pid), "a running sidecar's Chromium was ended");
    assert!(live_profile.is_dir() && root.join("notes").is_dir());
    assert_eq!(live.req("GET", &format!("/api/browsers/{id}"), None).await.json()["connected"], true);
    drop(next);
    drop(live);
    let _ = std::fs::remove_dir_all(&data);
}

/// Issue 22 item 5: a browser created with a kept `profile` keeps its logins across a restart
/// (its profile directory is not removed at shutdown, nor reaped as an orphan by the next
/// sidecar), opens the `tabs` it is given with the `active` one selected; a second browser
/// cannot share the profile; deleting the browser removes the profile.
#[tokio::test]
async fn a_kept_profile_and_its_tabs_come_back_after_a_restart() {
    let data = common::temp_dir("data");
    let env = [("XDG_DATA_HOME", data.to_str().unwrap())];
    let kept = data.join("porthole/browsers/keep-p7");
    let body = |url: String, tabs: Vec<String>| json!({"url": url, "profile": "p7", "tabs": tabs, "active": 1});

    let mut sc = Sidecar::start_with_env(&[], &env);
    let r = sc.req("POST", "/api/browsers", Some(&body(format!("{}/cookie?keep", server()), vec![]))).await;
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    let id = r.json()["id"].as_str().unwrap().to_string();
    until_title(&sc, &id, |t| t == "cookie:login=yes").await;
    let r = sc.req("POST", "/api/browsers", Some(&body(format!("{}/static", server()), vec![]))).await;
    assert_eq!((r.status, r.code()), (409, "profile_in_use".to_string()));
    let r =
        sc.req("POST", "/api/browsers", Some(&json!({"url": format!("{}/static", server()), "profile": "../x"}))).await;
    assert_eq!(r.status, 400);
    let r = sc.req("POST", "/api/shutdown", None).await;
    assert_eq!(r.status, 202);
    assert!(sc.wait_exit().success());
    assert!(kept.is_dir(), "a kept profile outlives the sidecar");

    let sc = Sidecar::start_with_env(&[], &env);
    let tabs = vec![format!("{}/static", server()), format!("{}/anim", server())];
    let r = sc.req("POST", "/api/browsers", Some(&body(format!("{}/cookie", server()), tabs))).await;
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    let id = r.json()["id"].as_str().unwrap().to_string();
    let b = info(&sc, &id).await;
    let tabs = b["tabs"].as_array().unwrap();
    assert_eq!(tabs.len(), 3, "{b}");
    assert_eq!(b["active_tab"], tabs[1]["id"], "the active one as asked: {b}");
    sc.req("POST", &format!("/api/browsers/{id}/tabs/select"), Some(&json!({"tab": tabs[0]["id"]}))).await;
    assert_eq!(until_title(&sc, &id, |t| t.starts_with("cookie:")).await, "cookie:login=yes", "still logged in");
    delete(&sc, &id).await;
    assert!(!kept.exists(), "deleting the browser removes its kept profile");
    let _ = std::fs::remove_dir_all(&data);
}

/// A kept profile's Chromium, left running by a sidecar that was killed, is ended by the next
/// sidecar (two Chromiums on one profile would corrupt it); the profile itself stays and opens
/// again. A running sidecar's kept profile is refused to another one.
#[tokio::test]
async fn a_kept_profiles_chromium_left_by_a_killed_sidecar_is_ended_and_the_profile_kept() {
    let data = common::temp_dir("data");
    let env = [("XDG_DATA_HOME", data.to_str().unwrap())];
    let kept = data.join("porthole/browsers/keep-p9");
    let body = |url: String| json!({"url": url, "profile": "p9"});

    let mut first = Sidecar::start_with_env(&[], &env);
    let r = first.req("POST", "/api/browsers", Some(&body(format!("{}/cookie?keep", server())))).await;
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    let id = r.json()["id"].as_str().unwrap().to_string();
    until_title(&first, &id, |t| t == "cookie:login=yes").await;
    let chromium = first.req("GET", &format!("/api/browsers/{id}"), None).await.json()["pid"].as_i64().unwrap();

    // Another running sidecar may not take the profile while the first holds it.
    let other = Sidecar::start_with_env(&[], &env);
    let r = other.req("POST", "/api/browsers", Some(&body(format!("{}/static", server())))).await;
    assert_eq!((r.status, r.code()), (409, "profile_in_use".to_string()), "{}", String::from_utf8_lossy(&r.body));
    assert!(!common::pid_gone(chromium), "the holder's Chromium was left alone");
    drop(other);

    common::send_signal(first.pid, 9);
    first.wait_exit();
    assert!(!common::pid_gone(chromium), "a killed sidecar leaves its Chromium running");

    let next = Sidecar::start_with_env(&[], &env);
    assert!(common::wait_pid_gone(chromium).await, "the left Chromium was not ended");
    assert!(kept.is_dir(), "the kept profile stays");
    let r = next.req("POST", "/api/browsers", Some(&body(format!("{}/cookie", server())))).await;
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    let id = r.json()["id"].as_str().unwrap().to_string();
    // The profile opens (no lock of the ended Chromium in the way). Its login is not checked:
    // Chromium writes cookies out every 30 s or at a clean exit, and this one was set just
    // before the kill.
    until_title(&next, &id, |t| t.starts_with("cookie:")).await;
    assert_eq!(std::fs::read_to_string(kept.join("porthole-owner")).unwrap(), next.pid.to_string());
    assert_eq!(next.req("GET", "/api/browsers", None).await.json(), json!({"browsers": [{"id": id}]}));
    delete(&next, &id).await;
    assert_eq!(next.req("GET", "/api/browsers", None).await.json(), json!({"browsers": []}));
    drop(next);
    let _ = std::fs::remove_dir_all(&data);
}

/// With `[session] restore = false` a `profile` key is ignored: the browser's profile is its
/// own (`<sidecar pid>-<id>`), so nothing of it outlives the browser.
#[tokio::test]
async fn with_restore_off_a_profile_key_keeps_nothing() {
    let data = common::temp_dir("data");
    let config = common::temp_dir("config");
    std::fs::create_dir_all(config.join("porthole")).unwrap();
    std::fs::write(config.join("porthole/config.toml"), "[session]\nrestore = false\n").unwrap();
    let env = [("XDG_DATA_HOME", data.to_str().unwrap()), ("XDG_CONFIG_HOME", config.to_str().unwrap())];
    let sc = Sidecar::start_with_env(&[], &env);
    let r =
        sc.req("POST", "/api/browsers", Some(&json!({"url": format!("{}/static", server()), "profile": "p8"}))).await;
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    let id = r.json()["id"].as_str().unwrap().to_string();
    let root = data.join("porthole/browsers");
    assert!(!root.join("keep-p8").exists());
    assert!(root.join(format!("{}-{id}", sc.pid)).is_dir());
    delete(&sc, &id).await;
    let _ = std::fs::remove_dir_all(&data);
    let _ = std::fs::remove_dir_all(&config);
}
