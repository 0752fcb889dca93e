//! Screencast benchmark: what a viewer socket delivers against what a bare CDP screencast of
//! the same page produces in the same run.
//!
//! Run: `cargo xtask bench screencast` (= `cargo run --release -p sidecar --example
//! bench_screencast`). Prints plain `name value` lines:
//! - `anim.bare_fps` / `anim.viewer_fps` / `anim.ratio`: a CSS-animated page at 1280×800,
//!   frames per second from a bare chromiumoxide screencast (the limit) and from the
//!   sidecar's viewer socket, and viewer ÷ bare;
//! - `scroll.*`: the same for a tall page scrolled by a wheel event every 16 ms;
//! - `anim.bytes_per_frame`: mean JPEG bytes per delivered frame;
//! - `anim.sidecar_cpu_ms_per_frame`: sidecar process CPU time (user+sys) per delivered frame;
//! - `latency.p50_ms` / `latency.p95_ms`: keypress that flips the page colour → first frame;
//! - `ui.delivered_fps` / `ui.painted_fps` / `ui.page_raf_fps` / `ui.painted_ratio` /
//!   `ui.painted_per_raf`: what the human sees. The real UI (`ui/dist`, web mode, in a
//!   headless Chromium of its own) shows one screencast pane of the animated page (fixed
//!   1280×800); frames that reached the pane (the canvas's `data-frame` id) and canvas paints
//!   (its `data-painted` count) per second, the page's own `requestAnimationFrame` rate, and
//!   painted ÷ `anim.bare_fps` and painted ÷ page rAF. `ui_large.*` and `ui_large_dpr2.*`: the
//!   same for a large pane (Resize with pane, about 1,400×900) in a UI at DPR 1 and at DPR 2
//!   (issue 22 item 7: fps fell as the pane grew). Skipped (said so) when `ui/dist` is
//!   missing (`npm run build` in `ui/`).
//!
//! Targets: ratio ≥ 0.9, ≥ 50 fps at 1280×800, latency p50 ≤ 50 ms, painted ratio ≥ 0.9 on
//! a quiet machine; painted ÷ page rAF ≥ 0.8 for the large pane at DPR 1 and 2.
//!
//! The bare baseline is the same workload measured the same way, without the sidecar: same
//! page and viewport, the same screencast parameters, each frame decoded and acked from its
//! own task as the sidecar does, wheel events on the same fixed-rate clock dispatched one at
//! a time in order (as the sidecar's input worker does), and frames counted by the same
//! [`Counter`] where the client receives them.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use base64::Engine;
use chromiumoxide::browser::{Browser, BrowserConfig};
use chromiumoxide::cdp::browser_protocol::emulation::SetDeviceMetricsOverrideParams;
use chromiumoxide::cdp::browser_protocol::input::{DispatchMouseEventParams, DispatchMouseEventType};
use chromiumoxide::cdp::browser_protocol::page::{
    EventScreencastFrame, NavigateParams, ScreencastFrameAckParams, StartScreencastFormat, StartScreencastParams,
};
use common::{cpu_seconds as cpu_secs, percentile as pct, start_sidecar, start_sidecar_with, Sidecar};
use futures_util::{SinkExt, StreamExt};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_tungstenite::tungstenite::Message;

const MEASURE: Duration = Duration::from_secs(5);
/// Warm-up before counting starts.
const WARM: Duration = Duration::from_millis(500);
/// One wheel event (deltaY 40 CSS px at (300, 300)) per tick of this clock.
const WHEEL_EVERY: Duration = Duration::from_millis(16);
const LATENCY_SAMPLES: usize = 30;

fn page(path: &str) -> Option<&'static str> {
    Some(match path {
        "/anim" => {
            r#"<!doctype html><style>body{margin:0}#d{width:400px;height:400px;background:linear-gradient(red,blue);
            animation:spin 1s linear infinite}@keyframes spin{from{transform:rotate(0)}to{transform:rotate(360deg)}}</style><div id=d></div>"#
        }
        "/scroll" => {
            r#"<!doctype html><style>body{margin:0}</style>
            <div style="height:200000px;background:repeating-linear-gradient(red 0,blue 300px,green 600px)"></div>"#
        }
        // The animation, counting the page's own animation frames into its title (5 times a
        // second): the rate the page renders at, which the pane's paints are judged against.
        "/anim-raf" => {
            r#"<!doctype html><style>body{margin:0}#d{width:400px;height:400px;background:linear-gradient(red,blue);
            animation:spin 1s linear infinite}@keyframes spin{from{transform:rotate(0)}to{transform:rotate(360deg)}}</style><div id=d></div>
            <script>let n=0;(function f(){n++;requestAnimationFrame(f)})();setInterval(()=>{document.title='raf:'+n},200)</script>"#
        }
        "/color" => {
            r#"<!doctype html><style>html,body{margin:0;height:100%;background:#000}</style>
            <script>let i=0;addEventListener('keydown',()=>{i++;document.body.style.background=i%2?'#fff':'#000'})</script>"#
        }
        _ => return None,
    })
}

async fn serve_pages() -> u16 {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = l.local_addr().unwrap().port();
    tokio::spawn(async move {
        loop {
            let Ok((mut s, _)) = l.accept().await else { continue };
            tokio::spawn(async move {
                let mut buf = vec![0u8; 8192];
                let mut n = 0;
                while !buf[..n].windows(4).any(|w| w == b"\r\n\r\n") {
                    match s.read(&mut buf[n..]).await {
                        Ok(0) | Err(_) => return,
                        Ok(k) => n += k,
                    }
                }
                let head = String::from_utf8_lossy(&buf[..n]).to_string();
                let path = head.split_whitespace().nth(1).unwrap_or("/").to_string();
                let body = page(&path).unwrap_or("not found");
                let resp = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = s.write_all(resp.as_bytes()).await;
            });
        }
    });
    port
}

/// Counts frames where a client receives them: after [`WARM`] the first frame starts the clock
/// (and is not counted); frames until [`MEASURE`] after the warm-up are.
struct Counter {
    warm: Instant,
    deadline: Instant,
    start: Option<Instant>,
    frames: u64,
    bytes: usize,
}

impl Counter {
    fn new() -> Counter {
        let warm = Instant::now() + WARM;
        Counter { warm, deadline: warm + MEASURE, start: None, frames: 0, bytes: 0 }
    }

    fn running(&self) -> bool {
        Instant::now() < self.deadline
    }

    /// One frame of `bytes` JPEG bytes arrived; true if and only if it started the clock.
    fn frame(&mut self, bytes: usize) -> bool {
        let now = Instant::now();
        if now < self.warm || now >= self.deadline {
            return false;
        }
        if self.start.is_none() {
            self.start = Some(now);
            return true;
        }
        self.frames += 1;
        self.bytes += bytes;
        false
    }

    /// Frames per second over the counted window (first frame to the deadline).
    fn fps(&self) -> f64 {
        let secs = self.start.map(|s| (self.deadline - s).as_secs_f64()).unwrap_or(1.0);
        self.frames as f64 / secs
    }
}

/// A clock ticking every [`WHEEL_EVERY`]; a late tick is delayed, never made up in a burst.
fn wheel_clock() -> tokio::time::Interval {
    let mut i = tokio::time::interval(WHEEL_EVERY);
    i.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    i
}

/// Frames per second a bare CDP screencast of `url` delivers (see the module doc for how this
/// matches the viewer measurement); with `wheel`, the wheel workload.
async fn bare(url: &str, profile: &Path, wheel: bool) -> f64 {
    let (mut browser, h) = launch_chromium(profile).await;
    let page = browser.new_page("about:blank").await.unwrap();
    page.execute(SetDeviceMetricsOverrideParams::new(1280, 800, 1.0, false)).await.unwrap();
    page.execute(NavigateParams::new(url)).await.unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut frames = page.event_listener::<EventScreencastFrame>().await.unwrap();
    let mut p = StartScreencastParams::default();
    p.format = Some(StartScreencastFormat::Jpeg);
    p.quality = Some(80);
    p.every_nth_frame = Some(1);
    page.execute(p).await.unwrap();
    // The clock queues wheel events; one dispatcher applies them in order, each awaited.
    let wheel_tasks = wheel.then(|| {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<()>();
        let clock = tokio::spawn(async move {
            let mut clock = wheel_clock();
            loop {
                clock.tick().await;
                if tx.send(()).is_err() {
                    return;
                }
            }
        });
        let page = page.clone();
        let dispatcher = tokio::spawn(async move {
            while rx.recv().await.is_some() {
                let mut m = DispatchMouseEventParams::new(DispatchMouseEventType::MouseWheel, 300.0, 300.0);
                m.delta_x = Some(0.0);
                m.delta_y = Some(40.0);
                let _ = page.execute(m).await;
            }
        });
        [clock, dispatcher]
    });
    let mut count = Counter::new();
    let b64 = base64::engine::general_purpose::STANDARD;
    while count.running() {
        let Ok(Some(ev)) = tokio::time::timeout(Duration::from_secs(2), frames.next()).await else { continue };
        // Acked from its own task, as the sidecar does.
        let p = page.clone();
        let sid = ev.session_id;
        tokio::spawn(async move {
            let _ = p.execute(ScreencastFrameAckParams::new(sid)).await;
        });
        // Decoded, as the sidecar does before it forwards a frame.
        let jpeg = b64.decode(AsRef::<str>::as_ref(&ev.data)).unwrap_or_default();
        count.frame(jpeg.len());
    }
    for t in wheel_tasks.into_iter().flatten() {
        t.abort();
    }
    let _ = browser.close().await;
    let _ = browser.wait().await;
    h.abort();
    count.fps()
}

type Ws = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

async fn viewer(sc: &Sidecar, url: &str) -> (String, Ws) {
    let v = sc
        .req(
            "POST",
            "/api/browsers",
            Some(json!({"url": url, "viewport": {"mode":"fixed","width":1280,"height":800,"dpr":1}})),
        )
        .await;
    let id = v["id"].as_str().unwrap_or_else(|| panic!("create: {v}")).to_string();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let g = sc.req("POST", &format!("/api/browsers/{id}/viewer"), None).await;
    let (ws, _) = tokio_tungstenite::connect_async(g["url"].as_str().unwrap()).await.unwrap();
    (id, ws)
}

/// Frames (provisional + crisp) and bytes a viewer receives in [`MEASURE`]; with `wheel`, a
/// wheel event every 16 ms. Returns (fps, bytes per frame, sidecar CPU ms per frame).
async fn through_viewer(sc: &Sidecar, url: &str, wheel: bool) -> (f64, f64, f64) {
    let (id, ws) = viewer(sc, url).await;
    let (mut tx, mut rx) = ws.split();
    // The same clock; the sidecar's input worker dispatches them in order, each awaited.
    let wheel_task = wheel.then(|| {
        tokio::spawn(async move {
            let mut clock = wheel_clock();
            loop {
                clock.tick().await;
                let m = json!({"type":"input_mouse","event":"wheel","x":300,"y":300,"deltaX":0,"deltaY":40});
                if tx.send(Message::Text(m.to_string().into())).await.is_err() {
                    return;
                }
            }
        })
    });
    let mut count = Counter::new();
    let mut cpu0 = None;
    while count.running() {
        let Ok(Some(Ok(m))) = tokio::time::timeout(Duration::from_secs(2), rx.next()).await else { continue };
        if let Message::Binary(b) = m {
            if count.frame(b.len() - 16) {
                cpu0 = Some(cpu_secs(sc.pid));
            }
        }
    }
    let cpu = cpu_secs(sc.pid) - cpu0.unwrap_or_else(|| cpu_secs(sc.pid));
    if let Some(t) = wheel_task {
        t.abort();
    }
    sc.req("DELETE", &format!("/api/browsers/{id}"), None).await;
    let n1 = count.frames.max(1) as f64;
    (count.fps(), count.bytes as f64 / n1, cpu * 1000.0 / n1)
}

/// Keypress flipping the page colour → first frame after it, in ms.
async fn latency(sc: &Sidecar, url: &str) -> Vec<f64> {
    let (id, mut ws) = viewer(sc, url).await;
    let mut out = Vec::new();
    for _ in 0..LATENCY_SAMPLES {
        // Drain until quiet (the crisp capture of the previous change included).
        loop {
            match tokio::time::timeout(Duration::from_millis(400), ws.next()).await {
                Ok(Some(Ok(_))) => continue,
                Ok(_) => panic!("viewer socket ended"),
                Err(_) => break,
            }
        }
        let down = json!({"type":"input_keyboard","event":"down","key":"a","code":"KeyA","text":"a"});
        let up = json!({"type":"input_keyboard","event":"up","key":"a","code":"KeyA","text":""});
        let t0 = Instant::now();
        ws.send(Message::Text(down.to_string().into())).await.unwrap();
        ws.send(Message::Text(up.to_string().into())).await.unwrap();
        loop {
            match tokio::time::timeout(Duration::from_secs(5), ws.next()).await {
                Ok(Some(Ok(Message::Binary(_)))) => {
                    out.push(t0.elapsed().as_secs_f64() * 1000.0);
                    break;
                }
                Ok(Some(Ok(_))) => continue,
                _ => break,
            }
        }
    }
    sc.req("DELETE", &format!("/api/browsers/{id}"), None).await;
    out.sort_by(|a, b| a.partial_cmp(b).unwrap());
    out
}

/// Launches a headless Chromium like [`bare`] does, on `profile`.
async fn launch_chromium(profile: &Path) -> (Browser, tokio::task::JoinHandle<()>) {
    let b = BrowserConfig::builder()
        .new_headless_mode()
        .viewport(None)
        .user_data_dir(profile)
        .arg("no-first-run")
        .arg("no-default-browser-check")
        .arg("disable-background-networking")
        .arg("disable-component-update")
        .arg("disable-sync");
    common::launch_browser(b).await
}

/// A number the UI page computes from `expression` (`NaN` when it is not one).
async fn ui_number(page: &chromiumoxide::Page, expression: &str) -> f64 {
    match page.evaluate(expression).await {
        Ok(v) => v.into_value::<f64>().unwrap_or(f64::NAN),
        Err(_) => f64::NAN,
    }
}

/// One pane the UI case shows: the UI window's CSS size and DPR, and the pane's viewport.
struct UiCase {
    /// The UI window, CSS px.
    window: (i64, i64),
    /// The UI window's devicePixelRatio (the human's screen).
    dpr: f64,
    /// The pane's viewport body.
    viewport: serde_json::Value,
}

/// What the human sees: the real UI (web mode) in its own headless Chromium showing one
/// screencast pane of `url` (which counts its animation frames in its title, `/anim-raf`);
/// returns (frames reaching the pane per second, canvas paints per second, the page's own
/// animation frames per second) over [`MEASURE`], or `None` when `ui_dir` has no built UI.
async fn painted(home: &Path, ui_dir: &Path, url: &str, case: &UiCase) -> Option<(f64, f64, f64)> {
    if !ui_dir.join("index.html").exists() {
        return None;
    }
    let sc = start_sidecar_with(&home.join("ui-sidecar"), &["--web", "--ui-dir", ui_dir.to_str().unwrap()]);
    let doc = json!({"workspace": {"version": 1,
        "layout": {"root": {"kind": "leaf", "id": "p1"}, "minimized": [], "homes": {}, "zoomed": null, "focused": "p1"},
        "panes": {"p1": {"kind": "browser", "url": url, "mode": "screencast", "title": "",
            "viewport": case.viewport}},
        "order": ["p1"]}});
    sc.req("PUT", "/api/workspace", Some(doc)).await;
    let login = sc.req("POST", "/api/login-codes", None).await["url"].as_str().expect("login url").to_string();
    let (mut browser, h) = launch_chromium(&home.join("ui-chromium")).await;
    let page = browser.new_page("about:blank").await.unwrap();
    page.execute(SetDeviceMetricsOverrideParams::new(case.window.0, case.window.1, case.dpr, false)).await.unwrap();
    page.execute(NavigateParams::new(login)).await.unwrap();
    let canvas = "document.querySelector('[data-testid=screencast-canvas]')";
    let painted_js = format!("Number(({canvas} || {{dataset: {{}}}}).dataset.painted || 0)");
    let frame_js = format!("Number(({canvas} || {{dataset: {{}}}}).dataset.frame || 0)");
    let until = Instant::now() + Duration::from_secs(60);
    loop {
        if ui_number(&page, &painted_js).await > 0.0 {
            break;
        }
        assert!(Instant::now() < until, "the UI painted no frame within 60 s");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    tokio::time::sleep(WARM.max(Duration::from_secs(1))).await;
    let id_js = "(document.querySelector('[data-browser-id]') || {dataset: {}}).dataset.browserId || ''";
    let id = page.evaluate(id_js).await.ok().and_then(|v| v.into_value::<String>().ok()).unwrap_or_default();
    // The page's frame count, from its title (the sidecar re-reads a viewed tab's title).
    let raf = || async {
        let v = sc.req("GET", &format!("/api/browsers/{id}"), None).await;
        v["title"].as_str().and_then(|t| t.strip_prefix("raf:")).and_then(|n| n.parse::<f64>().ok()).unwrap_or(f64::NAN)
    };
    let (p0, f0, r0, t0) =
        (ui_number(&page, &painted_js).await, ui_number(&page, &frame_js).await, raf().await, Instant::now());
    tokio::time::sleep(MEASURE).await;
    let (p1, f1, r1, secs) = (
        ui_number(&page, &painted_js).await,
        ui_number(&page, &frame_js).await,
        raf().await,
        t0.elapsed().as_secs_f64(),
    );
    // The pane's browser goes with its sidecar; the UI's Chromium is ours to close.
    let _ = browser.close().await;
    let _ = browser.wait().await;
    h.abort();
    drop(sc);
    Some(((f1 - f0) / secs, (p1 - p0) / secs, (r1 - r0) / secs))
}

#[tokio::main]
async fn main() {
    let home = std::env::temp_dir().join(format!("porthole-bench-screencast-{}", std::process::id()));
    std::fs::create_dir_all(&home).unwrap();
    let port = serve_pages().await;
    let base = format!("http://127.0.0.1:{port}");
    let bare_anim = bare(&format!("{base}/anim"), &home.join("bare1"), false).await;
    let bare_scroll = bare(&format!("{base}/scroll"), &home.join("bare2"), true).await;
    let sc = start_sidecar(&home);
    let (anim_fps, anim_bytes, anim_cpu) = through_viewer(&sc, &format!("{base}/anim"), false).await;
    let (scroll_fps, scroll_bytes, scroll_cpu) = through_viewer(&sc, &format!("{base}/scroll"), true).await;
    let lat = latency(&sc, &format!("{base}/color")).await;
    drop(sc);
    let ui_dir = std::env::var_os("PORTHOLE_UI_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../ui/dist"));
    // The pane of the original case (a fixed 1280×800 page, about unscaled), then issue 22's
    // slow ones: a large pane (Resize with pane at about 1,400×900) at DPR 1 and at DPR 2.
    let pane = json!({"mode": "pane"});
    let cases = [
        (
            "ui",
            UiCase {
                window: (1300, 880),
                dpr: 1.0,
                viewport: json!({"mode": "fixed", "width": 1280, "height": 800, "dpr": 1}),
            },
        ),
        ("ui_large", UiCase { window: (1420, 990), dpr: 1.0, viewport: pane.clone() }),
        ("ui_large_dpr2", UiCase { window: (1420, 990), dpr: 2.0, viewport: pane }),
    ];
    let mut ui = Vec::new();
    for (name, case) in &cases {
        ui.push((name, painted(&home, &ui_dir, &format!("{base}/anim-raf"), case).await));
    }
    let _ = std::fs::remove_dir_all(&home);
    println!("anim.bare_fps {bare_anim:.1}");
    println!("anim.viewer_fps {anim_fps:.1}");
    println!("anim.ratio {:.3}", anim_fps / bare_anim);
    println!("anim.bytes_per_frame {anim_bytes:.0}");
    println!("anim.sidecar_cpu_ms_per_frame {anim_cpu:.3}");
    println!("scroll.bare_fps {bare_scroll:.1}");
    println!("scroll.viewer_fps {scroll_fps:.1}");
    println!("scroll.ratio {:.3}", scroll_fps / bare_scroll);
    println!("scroll.bytes_per_frame {scroll_bytes:.0}");
    println!("scroll.sidecar_cpu_ms_per_frame {scroll_cpu:.3}");
    println!("latency.samples {}", lat.len());
    println!("latency.p50_ms {:.1}", pct(&lat, 0.5));
    println!("latency.p95_ms {:.1}", pct(&lat, 0.95));
    for (name, r) in ui {
        match r {
            Some((delivered, painted, raf)) => {
                println!("{name}.delivered_fps {delivered:.1}");
                println!("{name}.painted_fps {painted:.1}");
                println!("{name}.page_raf_fps {raf:.1}");
                println!("{name}.painted_ratio {:.3}", painted / bare_anim);
                println!("{name}.painted_per_raf {:.3}", painted / raf);
            }
            None => println!("{name}.skipped {} has no built UI (npm run build in ui/)", ui_dir.display()),
        }
    }
}
