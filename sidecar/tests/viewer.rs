//! Viewer-socket behaviour against real headless Chromium, with pages served by a server this
//! file starts: `beforeunload` and `prompt` dialogs, edit operations, the input cap, frame
//! ordering across the two-stage paint, and `<select>` popups (late and in an iframe).
//! One sidecar is shared by the file (it exits with the test process).

mod common;

use std::sync::OnceLock;

use common::browser::{
    click, create_at, delete, fixed, info, key, send, serve, until_frame, until_json, until_title, view, ViewWs,
};
use common::{Sidecar, HANG};
use futures_util::SinkExt;
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::Message;

/// A full-size button at (0,0)-(200,100) that counts clicks into the title `<name>:<n>`.
fn counter_button(name: &str) -> String {
    format!(
        r#"<button style="position:absolute;left:0;top:0;width:200px;height:100px"
          onclick="n++;document.title='{name}:'+n">hit</button><script>let n=0</script>"#
    )
}

fn page(path: &str) -> Option<String> {
    let head = "<!doctype html><style>body{margin:0}</style>";
    let body = match path {
        "/static" => "<!doctype html><title>static</title><p>nothing moves</p>".to_string(),
        // Asks before leaving; Chromium shows the dialog only after a user gesture.
        "/unload" => format!(
            r#"{head}<title>unload</title>{}<a href="/static" style="position:absolute;left:0;top:200px;width:200px;height:100px;display:block">leave</a>
            <script>addEventListener('beforeunload',e=>{{e.preventDefault();e.returnValue=''}})</script>"#,
            counter_button("unload")
        ),
        // Asks before leaving; the top button opens a second tab, the lower one only counts.
        "/unload-opener" => format!(
            r#"{head}<title>unload-opener</title><button style="position:absolute;left:0;top:0;width:200px;height:100px"
              onclick="n++;document.title='unload-opener:'+n;window.open('/static')">open</button>
            <button style="position:absolute;left:0;top:100px;width:200px;height:100px"
              onclick="n++;document.title='unload-opener:'+n">count</button>
            <script>let n=0;addEventListener('beforeunload',e=>{{e.preventDefault();e.returnValue=''}})</script>"#
        ),
        "/prompt" => format!(
            r#"{head}<title>prompt</title><button style="position:absolute;left:0;top:0;width:200px;height:100px"
              onclick="setTimeout(()=>{{const r=prompt('name?','def');document.title='prompt:'+(r===null?'null':r)}},0)">ask</button>"#
        ),
        // The dialog opens inside the click handler: the release that caused it waits on it.
        "/alert-in-click" => format!(
            r#"{head}<title>alert</title><button style="position:absolute;left:0;top:0;width:200px;height:100px"
              onclick="alert('now');document.title='after'">ask</button>"#
        ),
        "/alert-on-load" => format!("{head}<title>blocked</title><script>setTimeout(()=>alert('block'),0)</script>"),
        "/edit" => format!(
            r#"{head}<title>edit</title>
            <input id=t value="hello world" autocomplete=off style="position:absolute;left:10px;top:10px;width:400px;height:40px">
            <p id=p style="position:absolute;left:10px;top:200px">some document text</p>
            <script>const t=document.getElementById('t');
            const show=()=>{{document.title='f:'+t.value+'|'+t.selectionStart+'-'+t.selectionEnd}};
            document.addEventListener('selectionchange',show);t.addEventListener('input',show);</script>"#
        ),
        // Animates for 300 ms, rests 700 ms, again: provisional frames, then a crisp capture.
        "/pulse" => format!(
            r#"{head}<title>pulse</title><style>#d{{width:300px;height:300px;background:red}}
            .on{{animation:spin 1s linear infinite}}@keyframes spin{{to{{transform:rotate(360deg)}}}}</style>
            <div id=d></div><script>const d=document.getElementById('d');
            setInterval(()=>{{d.classList.add('on');setTimeout(()=>d.classList.remove('on'),300)}},1000)</script>"#
        ),
        "/select-late" => format!(
            r#"{head}<title>late</title><script>let n=0;setTimeout(()=>{{
              document.body.insertAdjacentHTML('beforeend','<select id=s style="position:absolute;left:40px;top:60px;width:200px;height:30px"><option value=a>Alpha<option value=b>Beta</select>');
              const s=document.getElementById('s');
              s.addEventListener('change',()=>{{n++;document.title='late:'+s.value+':'+n}});
              document.title='inserted'}},300)</script>"#
        ),
        "/frame-outer" => format!(
            r#"{head}<title>outer</title><iframe src="/frame-inner" style="position:absolute;left:100px;top:50px;width:400px;height:200px;border:5px solid black"></iframe>"#
        ),
        "/frame-inner" => format!(
            r#"{head}<select id=s style="position:absolute;left:10px;top:20px;width:150px;height:30px">
            <option value=x>Ex<option value=y>Why<option value=z disabled>Zed</select>
            <script>const s=document.getElementById('s');
            s.addEventListener('change',()=>{{parent.document.title='inner:'+s.value}});
            parent.document.title='ready'</script>"#
        ),
        // A cross-site frame: the same server under `localhost` inside a page on 127.0.0.1
        // (another site, so Chromium renders it in another process). It scrolls itself by
        // 100 px; its select is then at (10, 20) of its viewport. An out-of-process frame can
        // run its script before the parent has given it a size (on a busy machine), when a
        // scroll is clamped to 0: it tries again every 20 ms until the scroll holds.
        "/xframe-outer" => format!(
            r#"{head}<title>outer</title><iframe id=f style="position:absolute;left:100px;top:50px;width:400px;height:200px;border:5px solid black"></iframe>
            <script>f.src='http://localhost:'+location.port+'/xframe-inner';
            addEventListener('message',e=>{{document.title=String(e.data)}})</script>"#
        ),
        "/xframe-inner" => format!(
            r#"{head}<div style="height:2000px"></div><select id=s style="position:absolute;left:10px;top:120px;width:150px;height:30px">
            <option value=x>Ex<option value=y>Why<option value=z>Zed</select>
            <script>const s=document.getElementById('s');
            s.addEventListener('change',()=>parent.postMessage('inner:'+s.value,'*'));
            addEventListener('mousemove',()=>parent.postMessage('hovered','*'),{{once:true}});
            function settle(){{scrollTo(0,100);if(scrollY===100)parent.postMessage('ready:'+scrollY,'*');else setTimeout(settle,20)}}
            settle()</script>"#
        ),
        // The input devices and the viewport as the page sees them, in its title, again at
        // every change of the viewport (a zoom or a device-metrics write).
        "/media" => format!(
            r#"{head}<title>media</title><button style="position:absolute;left:300px;top:200px;width:100px;height:60px"
              onclick="n++">hit</button><script>
            const show=()=>{{const m=q=>matchMedia(q).matches?1:0;
              document.title=`clicks:${{n}} hover:${{m('(hover: hover)')}} fine:${{m('(pointer: fine)')}} anyhover:${{m('(any-hover: hover)')}} coarse:${{m('(pointer: coarse)')}} touch:${{navigator.maxTouchPoints>0?1:0}} w:${{innerWidth}} dpr:${{devicePixelRatio}} narrow:${{m('(max-width: 600px)')}} ua:${{/ Mobile /.test(navigator.userAgent)?'mobile':/Headless/.test(navigator.userAgent)?'headless':'desktop'}}`}};
            let n=0;show();addEventListener('resize',show);matchMedia('(pointer: coarse)').addEventListener('change',show);
            setInterval(show,100)</script>"#
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

async fn create(sc: &Sidecar, path: &str) -> String {
    create_at(sc, &format!("{}{path}", server()), fixed(1280, 800, 1.0)).await
}

async fn answer(ws: &mut ViewWs, accept: bool, text: Option<&str>) {
    let mut m = json!({"type":"dialog","accept":accept});
    if let Some(t) = text {
        m["text"] = t.into();
    }
    send(ws, m).await;
}

async fn until_dialog(ws: &mut ViewWs, kind: &str) -> Value {
    let d = until_json(ws, "a dialog", |v| v["type"] == "dialog" && v["dialog"].is_object()).await;
    assert_eq!(d["dialog"]["kind"], kind, "{d}");
    d["dialog"].clone()
}

async fn until_no_dialog(ws: &mut ViewWs) {
    until_json(ws, "the dialog gone", |v| v["type"] == "dialog" && v["dialog"].is_null()).await;
}

async fn tab_count(sc: &Sidecar, id: &str) -> usize {
    info(sc, id).await["tabs"].as_array().unwrap().len()
}

#[tokio::test]
async fn beforeunload_holds_a_navigation_until_answered_cancel_stays_ok_leaves() {
    let sc = sidecar();
    let id = create(sc, "/unload").await;
    let mut ws = view(sc, &id).await;
    until_json(&mut ws, "loaded", |v| v["type"] == "url" && v["title"] == "unload").await;
    // The user gesture that arms beforeunload.
    click(&mut ws, 100.0, 50.0).await;
    until_title(sc, &id, |t| t == "unload:1").await;
    let id2 = id.clone();
    let t2 = format!("{}/static", server());
    let first = tokio::spawn(async move {
        sidecar().req("POST", &format!("/api/browsers/{id2}/navigate"), Some(&json!({"url": t2}))).await.status
    });
    let d = until_dialog(&mut ws, "beforeunload").await;
    assert_eq!(d["tab"], info(sc, &id).await["active_tab"]);
    // Nothing proceeded: the page is still the one asking, and the dialog is still pending.
    let i = info(sc, &id).await;
    assert!(i["url"].as_str().unwrap().ends_with("/unload"), "{i}");
    assert!(i["dialog"].is_object(), "{i}");
    answer(&mut ws, false, None).await;
    until_no_dialog(&mut ws).await;
    // The navigate call answered once the dialog held it.
    let status = tokio::time::timeout(HANG, first).await.expect("navigate answered").unwrap();
    assert_eq!(status, 200);
    // Cancel kept the very same document: its click counter goes on.
    click(&mut ws, 100.0, 50.0).await;
    until_title(sc, &id, |t| t == "unload:2").await;
    // Again, by a link the user clicks, and OK leaves. (Not a second `navigate`: chromiumoxide
    // keeps the canceled Page.navigate pending until its 10 s request timeout and queues the
    // next one of the tab behind it.)
    click(&mut ws, 100.0, 250.0).await;
    until_dialog(&mut ws, "beforeunload").await;
    assert!(info(sc, &id).await["url"].as_str().unwrap().ends_with("/unload"));
    answer(&mut ws, true, None).await;
    until_no_dialog(&mut ws).await;
    until_title(sc, &id, |t| t == "static").await;
    delete(sc, &id).await;
}

/// The tab asking is the first one (not a page opened by a page): a second tab exists only
/// so that the first may be closed.
#[tokio::test]
async fn beforeunload_holds_a_tab_close_until_answered() {
    let sc = sidecar();
    let id = create(sc, "/unload-opener").await;
    let mut ws = view(sc, &id).await;
    until_json(&mut ws, "loaded", |v| v["type"] == "url" && v["title"] == "unload-opener").await;
    let first = info(sc, &id).await["active_tab"].as_str().unwrap().to_string();
    // The gesture that arms beforeunload also opens the second tab.
    click(&mut ws, 100.0, 50.0).await;
    let tabs = until_json(&mut ws, "the new tab active", |v| {
        v["type"] == "tabs"
            && v["tabs"].as_array().unwrap().len() == 2
            && v["active"].is_string()
            && v["active"] != first.as_str()
    })
    .await;
    let second = tabs["active"].as_str().unwrap().to_string();
    let close = json!({"tab": first});
    let r = sc.req("POST", &format!("/api/browsers/{id}/tabs/close"), Some(&close)).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    let d = until_dialog(&mut ws, "beforeunload").await;
    assert_eq!(d["tab"], first.as_str());
    assert_eq!(tab_count(sc, &id).await, 2, "the tab is held open while the dialog waits");
    answer(&mut ws, false, None).await;
    until_no_dialog(&mut ws).await;
    // Cancel keeps the tab and its document (its click count goes on).
    assert_eq!(tab_count(sc, &id).await, 2);
    let r = sc.req("POST", &format!("/api/browsers/{id}/tabs/select"), Some(&json!({"tab": first}))).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    click(&mut ws, 100.0, 150.0).await;
    until_title(sc, &id, |t| t == "unload-opener:2").await;
    let r = sc.req("POST", &format!("/api/browsers/{id}/tabs/close"), Some(&close)).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    until_dialog(&mut ws, "beforeunload").await;
    answer(&mut ws, true, None).await;
    let tabs =
        until_json(&mut ws, "one tab left", |v| v["type"] == "tabs" && v["tabs"].as_array().unwrap().len() == 1).await;
    assert_eq!(tabs["tabs"][0]["id"], second.as_str());
    delete(sc, &id).await;
}

#[tokio::test]
async fn a_prompts_text_reaches_the_page_and_cancel_gives_null() {
    let sc = sidecar();
    let id = create(sc, "/prompt").await;
    let mut ws = view(sc, &id).await;
    until_json(&mut ws, "loaded", |v| v["type"] == "url" && v["title"] == "prompt").await;
    click(&mut ws, 100.0, 50.0).await;
    let d = until_dialog(&mut ws, "prompt").await;
    assert_eq!(d["message"], "name?");
    assert_eq!(d["default_prompt"], "def");
    answer(&mut ws, true, Some("héllo wörld ✓")).await;
    until_no_dialog(&mut ws).await;
    assert_eq!(until_title(sc, &id, |t| t.starts_with("prompt:")).await, "prompt:héllo wörld ✓");
    click(&mut ws, 100.0, 50.0).await;
    until_dialog(&mut ws, "prompt").await;
    answer(&mut ws, false, Some("ignored")).await;
    until_no_dialog(&mut ws).await;
    assert_eq!(until_title(sc, &id, |t| t == "prompt:null" || t.starts_with("prompt:i")).await, "prompt:null");
    delete(sc, &id).await;
}

/// A click whose handler opens a dialog leaves its release waiting on the dialog; the answer
/// must not queue behind that release (it would wait for the 10 s CDP bound and fail it).
#[tokio::test]
async fn a_dialog_opened_inside_a_click_is_answered_without_waiting_for_the_click() {
    let sc = sidecar();
    let id = create(sc, "/alert-in-click").await;
    let mut ws = view(sc, &id).await;
    until_json(&mut ws, "loaded", |v| v["type"] == "url" && v["title"] == "alert").await;
    click(&mut ws, 100.0, 50.0).await;
    until_dialog(&mut ws, "alert").await;
    answer(&mut ws, true, None).await;
    let v = until_json(&mut ws, "the dialog gone (or an error)", |v| {
        (v["type"] == "dialog" && v["dialog"].is_null()) || v["type"] == "error"
    })
    .await;
    assert_eq!(v["type"], "dialog", "the answer waited behind the click: {v}");
    assert_eq!(until_title(sc, &id, |t| t == "after").await, "after");
    delete(sc, &id).await;
}

#[tokio::test]
async fn edit_cut_copy_and_select_all() {
    let sc = sidecar();
    let id = create(sc, "/edit").await;
    let mut ws = view(sc, &id).await;
    until_json(&mut ws, "loaded", |v| v["type"] == "url" && v["title"] == "edit").await;
    // Focus the field, caret home, select "hello" with Shift+Right ×5.
    click(&mut ws, 300.0, 30.0).await;
    key(&mut ws, "Home", "Home", "", 0).await;
    for _ in 0..5 {
        key(&mut ws, "ArrowRight", "ArrowRight", "", 8).await;
    }
    until_title(sc, &id, |t| t == "f:hello world|0-5").await;
    send(&mut ws, json!({"type":"edit","op":"copy"})).await;
    let c = until_json(&mut ws, "clipboard", |v| v["type"] == "clipboard").await;
    assert_eq!(c["text"], "hello");
    // Copy leaves the field as it was.
    assert_eq!(info(sc, &id).await["title"], "f:hello world|0-5");
    send(&mut ws, json!({"type":"edit","op":"cut"})).await;
    let c = until_json(&mut ws, "clipboard", |v| v["type"] == "clipboard").await;
    assert_eq!(c["text"], "hello");
    assert_eq!(until_title(sc, &id, |t| t.starts_with("f: world")).await, "f: world|0-0");
    // Select all of the document (focus leaves the field first), then copy.
    click(&mut ws, 700.0, 500.0).await;
    send(&mut ws, json!({"type":"edit","op":"selectAll"})).await;
    send(&mut ws, json!({"type":"edit","op":"copy"})).await;
    let c = until_json(&mut ws, "clipboard", |v| v["type"] == "clipboard").await;
    assert!(c["text"].as_str().unwrap().contains("some document text"), "{c}");
    assert!(!c["text"].as_str().unwrap().contains("hello"), "{c}");
    delete(sc, &id).await;
}

/// While a dialog is pending the page takes no input: inputs wait for it, the socket is
/// still read (the answer must get through) and stays open, however many wait.
#[tokio::test]
async fn inputs_sent_while_a_dialog_is_pending_wait_for_it_and_its_answer_gets_through() {
    let sc = sidecar();
    let id = create(sc, "/alert-on-load").await;
    let mut ws = view(sc, &id).await;
    until_dialog(&mut ws, "alert").await;
    let k = |ev: &str| {
        Message::Text(
            json!({"type":"input_keyboard","event":ev,"key":"a","code":"KeyA","text":if ev == "down" {"a"} else {""}})
                .to_string()
                .into(),
        )
    };
    for i in 0..800 {
        ws.feed(k(if i % 2 == 0 { "down" } else { "up" })).await.expect("the socket stays open");
    }
    ws.flush().await.unwrap();
    answer(&mut ws, true, None).await;
    until_no_dialog(&mut ws).await;
    delete(sc, &id).await;
}

/// Frame ids on one socket go 1, 2, 3, … (+1 per frame sent) while the page alternates
/// between animation (provisional frames) and rest (crisp captures).
#[tokio::test]
async fn frame_ids_rise_by_one_across_provisional_frames_and_crisp_captures() {
    let sc = sidecar();
    let id = create(sc, "/pulse").await;
    until_title(sc, &id, |t| t == "pulse").await;
    let mut ws = view(sc, &id).await;
    let (mut crisp_then_provisional, mut crisp, mut want) = (0, 0, 1u32);
    let mut last_crisp = false;
    while crisp_then_provisional < 3 {
        let f = until_frame(&mut ws).await;
        let fid = u32::from_le_bytes([f[0], f[1], f[2], f[3]]);
        assert_eq!(fid, want, "frame ids must rise by one per frame sent");
        want += 1;
        let is_crisp = f[12] & 1 == 1;
        if is_crisp {
            crisp += 1;
        } else if last_crisp {
            crisp_then_provisional += 1;
        }
        last_crisp = is_crisp;
    }
    assert!(crisp >= 3);
    delete(sc, &id).await;
}

async fn until_popup(ws: &mut ViewWs) -> Value {
    until_json(ws, "popup", |v| v["type"] == "popup").await
}

#[tokio::test]
async fn a_select_inserted_after_load_gets_the_popup() {
    let sc = sidecar();
    let id = create(sc, "/select-late").await;
    let mut ws = view(sc, &id).await;
    until_title(sc, &id, |t| t == "inserted").await;
    click(&mut ws, 100.0, 75.0).await;
    let p = until_popup(&mut ws).await;
    assert_eq!((p["x"].as_f64(), p["y"].as_f64()), (Some(40.0), Some(60.0)), "{p}");
    let labels: Vec<&str> = p["options"].as_array().unwrap().iter().map(|o| o["label"].as_str().unwrap()).collect();
    assert_eq!(labels, ["Alpha", "Beta"]);
    send(&mut ws, json!({"type":"popup_choice","index":1})).await;
    assert_eq!(until_title(sc, &id, |t| t.starts_with("late:")).await, "late:b:1");
    delete(sc, &id).await;
}

#[tokio::test]
async fn a_select_in_a_same_origin_iframe_gets_the_popup_at_its_page_position() {
    let sc = sidecar();
    let id = create(sc, "/frame-outer").await;
    let mut ws = view(sc, &id).await;
    until_title(sc, &id, |t| t == "ready").await;
    // iframe at (100,50) with a 5 px border; the select at (10,20) inside it.
    click(&mut ws, 100.0 + 5.0 + 50.0, 50.0 + 5.0 + 35.0).await;
    let p = until_popup(&mut ws).await;
    assert_eq!((p["x"].as_f64(), p["y"].as_f64(), p["width"].as_f64()), (Some(115.0), Some(75.0), Some(150.0)), "{p}");
    assert_eq!(p["options"][2]["disabled"], true);
    // A disabled option is refused with an error; a good one applies.
    send(&mut ws, json!({"type":"popup_choice","index":2})).await;
    until_json(&mut ws, "error", |v| v["type"] == "error").await;
    send(&mut ws, json!({"type":"popup_choice","index":1})).await;
    assert_eq!(until_title(sc, &id, |t| t.starts_with("inner:")).await, "inner:y");
    delete(sc, &id).await;
}

/// A `<select>` in a cross-site iframe (an out-of-process frame: checked on Chromium's own
/// target list) gets the popup at its place in top-level viewport CSS px (the frame's offset,
/// border and own scroll), at DPR 1 and 2, and the choice reaches the frame.
#[tokio::test]
async fn a_select_in_a_cross_site_iframe_gets_the_popup_at_its_page_position() {
    let sc = sidecar();
    for dpr in [1.0, 2.0] {
        let id = create_at(sc, &format!("{}/xframe-outer", server()), fixed(1280, 800, dpr)).await;
        let mut ws = view(sc, &id).await;
        until_title(sc, &id, |t| t == "ready:100").await;
        let port = server().rsplit(':').next().unwrap();
        let child = format!("http://localhost:{port}/xframe-inner");
        let targets = common::browser::chromium_targets(sc, &id);
        assert!(targets.iter().any(|t| t["type"] == "iframe" && t["url"] == child.as_str()), "{targets:#?}");
        // iframe content at (105, 55); the select at (10, 20) of the frame's scrolled viewport.
        let (x, y) = (105.0 + 10.0 + 50.0, 55.0 + 20.0 + 15.0);
        // Chromium routes pointer input to a new out-of-process frame only once the parent's
        // compositor frame embeds it; until then (on a busy machine, for a while after load) a
        // press lands on the parent's <iframe>, as a human's would. The pointer moves over the
        // frame until the frame feels it, as a human's does before a click.
        let deadline = tokio::time::Instant::now() + HANG;
        loop {
            send(&mut ws, json!({"type":"input_mouse","event":"move","x":x,"y":y})).await;
            let hovered = async { until_title(sc, &id, |t| t == "hovered").await };
            if tokio::time::timeout(std::time::Duration::from_millis(500), hovered).await.is_ok() {
                break;
            }
            assert!(tokio::time::Instant::now() < deadline, "dpr {dpr}: the frame never got the pointer");
            send(&mut ws, json!({"type":"input_mouse","event":"move","x":x - 100.0,"y":y})).await;
        }
        click(&mut ws, x, y).await;
        let p = until_popup(&mut ws).await;
        assert_eq!(
            (p["x"].as_f64(), p["y"].as_f64(), p["width"].as_f64(), p["height"].as_f64()),
            (Some(115.0), Some(75.0), Some(150.0), Some(30.0)),
            "dpr {dpr}: {p}"
        );
        let labels: Vec<&str> = p["options"].as_array().unwrap().iter().map(|o| o["label"].as_str().unwrap()).collect();
        assert_eq!(labels, ["Ex", "Why", "Zed"]);
        send(&mut ws, json!({"type":"popup_choice","index":1})).await;
        assert_eq!(until_title(sc, &id, |t| t.starts_with("inner:")).await, "inner:y", "dpr {dpr}");
        delete(sc, &id).await;
    }
}

/// A headless page sees the human's mouse: a fine pointer that hovers (issue 22 item 6;
/// headless Chromium reports no pointer and no hover unless told).
#[tokio::test]
async fn a_page_sees_a_mouse_that_hovers() {
    let sc = sidecar();
    let id = create(sc, "/media").await;
    let t = until_title(sc, &id, |t| t.contains("hover:")).await;
    assert!(t.starts_with("clicks:0 hover:1 fine:1 anyhover:1 coarse:0 touch:0 "), "{t}");
    delete(sc, &id).await;
}

/// Page zoom is device scale, as in Chromium (issue 22 item 8): at 125 % a 700 px wide
/// viewport is 560 CSS px, so `(max-width: 600px)` matches and `devicePixelRatio` is the
/// DPR × 1.25; frames say the zoomed CSS size, and a click mapped through it (as the view
/// maps the human's) lands on its target, at DPR 1 and 2. Ctrl+0 (zoom 1) restores all.
#[tokio::test]
async fn zoom_is_device_scale_media_queries_and_dpr_follow_and_clicks_land() {
    let sc = sidecar();
    for dpr in [1.0, 2.0] {
        let id = create_at(sc, &format!("{}/media", server()), fixed(700, 500, dpr)).await;
        until_title(sc, &id, |t| t.contains(&format!(" w:700 dpr:{dpr} narrow:0"))).await;
        let mut ws = view(sc, &id).await;
        send(&mut ws, json!({"type":"zoom","factor":1.25})).await;
        until_json(&mut ws, "the zoom", |v| v["type"] == "zoom" && v["factor"] == 1.25).await;
        let zdpr = dpr * 1.25;
        until_title(sc, &id, |t| t.contains(&format!(" w:560 dpr:{zdpr} narrow:1"))).await;
        // The view maps the pane's pixels through the frame's CSS size: wait for a frame of
        // the zoomed page, then click the middle of the button as the pane shows it (its
        // pane position is the page position × 1.25), mapped back through that size.
        let (fw, fh) = loop {
            let f = until_frame(&mut ws).await;
            let (w, h) = (u16::from_le_bytes([f[4], f[5]]), u16::from_le_bytes([f[6], f[7]]));
            if w == 560 {
                break (w as f64, h as f64);
            }
        };
        assert_eq!(fh, 400.0);
        let (pane_x, pane_y) = (350.0 * 1.25, 230.0 * 1.25);
        click(&mut ws, pane_x * fw / 700.0, pane_y * fh / 500.0).await;
        until_title(sc, &id, |t| t.starts_with("clicks:1 ")).await;
        send(&mut ws, json!({"type":"zoom","factor":1.0})).await;
        until_title(sc, &id, |t| t.contains(&format!(" w:700 dpr:{dpr} narrow:0"))).await;
        delete(sc, &id).await;
    }
}

/// This Chromium sends `Network.requestWillBeSentExtraInfo` in a shape chromiumoxide 0.9
/// cannot parse (one per request): it is a known case, logged at debug, and never the
/// "WS Invalid message" warning that filled the log (issue 22 item 9). Waits for the debug
/// line (the event did arrive and was judged), then reads the whole log.
#[tokio::test]
async fn an_event_chromiumoxide_cannot_parse_is_known_and_not_warned_about() {
    let log = common::temp_dir("log").join("sidecar.log");
    let sc = Sidecar::start_with_env(
        &["--exit-with-parent", "--log-file", log.to_str().unwrap()],
        &[("PORTHOLE_LOG", "debug")],
    );
    let id = create(&sc, "/static").await;
    until_title(&sc, &id, |t| t == "static").await;
    let deadline = tokio::time::Instant::now() + HANG;
    let text = loop {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        if text.contains("cdp event chromiumoxide cannot parse, dropped: ClientSecurityState") {
            break text;
        }
        assert!(tokio::time::Instant::now() < deadline, "the known event was never judged");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    assert!(!text.contains("WS Invalid message"), "chromiumoxide's own warning is still logged");
    assert!(!text.contains("cdp message chromiumoxide cannot parse"), "an unknown message: {text}");
    delete(&sc, &id).await;
}

/// A phone viewport (`"mobile": true`) is touch: a coarse pointer without hover, touch points
/// and the Android agent; a desktop one again has no touch and the desktop agent (issue 22
/// item 6: the phone preset changed only the size). Known limit, pinned here so a Chromium
/// that fixes it is noticed: turning touch emulation off restores Blink's pointer and hover
/// from the embedder's preferences (none, headless), not from `--blink-settings`, so that
/// tab reports no pointer and no hover until the browser is relaunched.
#[tokio::test]
async fn a_phone_viewport_is_touch_with_a_mobile_agent_and_a_desktop_one_a_mouse_again() {
    let sc = sidecar();
    let phone = json!({"mode":"fixed","width":390,"height":844,"dpr":3,"mobile":true});
    let id = create_at(sc, &format!("{}/media", server()), phone).await;
    // Touch and the agent are separate calls: wait for the title that shows both.
    let t = until_title(sc, &id, |t| t.contains(" touch:1 ") && t.ends_with(" ua:mobile")).await;
    assert!(t.contains(" hover:0 fine:0 anyhover:0 coarse:1 touch:1 "), "{t}");
    let r = sc.req("POST", &format!("/api/browsers/{id}/viewport"), Some(&fixed(1280, 800, 1.0))).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    let t = until_title(sc, &id, |t| t.contains(" touch:0 ") && t.ends_with(" ua:desktop")).await;
    assert!(t.contains(" hover:0 fine:0 anyhover:0 coarse:0 touch:0 "), "{t}");
    delete(sc, &id).await;
}
