//! Pop-out (protocol §8.5) against real Chromium: headed under an Xvfb this test starts, with
//! a test upstream that sets a session cookie and a persistent one. Xvfb missing is a
//! failure that says what to install, never a skip.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::browser::{info, until_frame, until_json, view};
use common::{Sidecar, HANG};
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_tungstenite::tungstenite::Message;

type Ws = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// An Xvfb server on a free display number; killed on drop.
struct Xvfb {
    child: Child,
    display: String,
}

impl Xvfb {
    /// Starts `Xvfb -displayfd 1`: the server picks a free display and writes its number.
    fn start() -> Xvfb {
        let mut child = Command::new("Xvfb")
            .args(["-displayfd", "1", "-screen", "0", "1600x1000x24", "-nolisten", "tcp"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!("cannot run Xvfb ({e}): install it (Debian/Ubuntu: `apt install xvfb`, or `cargo xtask deps`)")
            });
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).expect("Xvfb display number");
        let n: u32 = line.trim().parse().unwrap_or_else(|_| panic!("Xvfb wrote {line:?}, not a display number"));
        Xvfb { child, display: format!(":{n}") }
    }
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The upstream: `/login` sets a session cookie (no expiry) and a persistent one; `/echo`
/// answers a page titled `echo ` + the Cookie header it received. Returns its base URL.
async fn upstream() -> String {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = l.local_addr().unwrap().port();
    tokio::spawn(async move {
        loop {
            let Ok((mut s, _)) = l.accept().await else {
                continue;
            };
            tokio::spawn(async move {
                let mut buf = vec![0u8; 16384];
                let mut n = 0;
                while !buf[..n].windows(4).any(|w| w == b"\r\n\r\n") {
                    match s.read(&mut buf[n..]).await {
                        Ok(0) | Err(_) => return,
                        Ok(k) => n += k,
                    }
                    if n == buf.len() {
                        return;
                    }
                }
                let head = String::from_utf8_lossy(&buf[..n]).to_string();
                let path = head.split_whitespace().nth(1).unwrap_or("/").to_string();
                let cookie = head
                    .lines()
                    .find_map(|l| l.strip_prefix("Cookie: ").or_else(|| l.strip_prefix("cookie: ")))
                    .unwrap_or("")
                    .trim()
                    .to_string();
                let (extra, body) = if path.starts_with("/login") {
                    (
                        "Set-Cookie: sid=s1; Path=/\r\nSet-Cookie: keep=p1; Path=/; Max-Age=3600\r\n",
                        "<!doctype html><title>login</title><p>logged in".to_string(),
                    )
                } else if path.starts_with("/echo") {
                    ("", format!("<!doctype html><title>echo {cookie}</title><p>{path}"))
                } else {
                    ("", "<!doctype html><title>other</title>".to_string())
                };
                let resp = format!(
                    "HTTP/1.1 200 OK\r\n{extra}Content-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = s.write_all(resp.as_bytes()).await;
            });
        }
    });
    format!("http://127.0.0.1:{port}")
}

/// Polls GET until `pred` holds; returns the info. Fails with the last info after the bound.
async fn until_info(sc: &Sidecar, id: &str, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
    let deadline = tokio::time::Instant::now() + HANG;
    loop {
        let v = info(sc, id).await;
        if pred(&v) {
            return v;
        }
        assert!(tokio::time::Instant::now() < deadline, "never {what}; last {v}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn has_both_cookies(v: &Value) -> bool {
    let t = v["title"].as_str().unwrap_or("");
    t.starts_with("echo ") && t.contains("sid=s1") && t.contains("keep=p1")
}

fn cmdline(pid: i64) -> Vec<String> {
    let raw = std::fs::read(format!("/proc/{pid}/cmdline")).expect("chromium cmdline");
    raw.split(|b| *b == 0).filter(|a| !a.is_empty()).map(|a| String::from_utf8_lossy(a).to_string()).collect()
}

fn headless(pid: i64) -> bool {
    cmdline(pid).iter().any(|a| a.starts_with("--headless"))
}

fn profile_of(pid: i64) -> String {
    cmdline(pid)
        .into_iter()
        .find_map(|a| a.strip_prefix("--user-data-dir=").map(str::to_string))
        .expect("--user-data-dir")
}

async fn post(sc: &Sidecar, id: &str, what: &str, body: Option<&Value>) -> common::Resp {
    sc.req("POST", &format!("/api/browsers/{id}/{what}"), body).await
}

async fn post_ok(sc: &Sidecar, id: &str, what: &str, body: Option<&Value>) {
    let r = post(sc, id, what, body).await;
    assert_eq!(r.status, 200, "{what}: {}", String::from_utf8_lossy(&r.body));
}

/// A CDP client on a Chromium's browser endpoint, found through its profile's
/// `DevToolsActivePort` (the sidecar launches with `--remote-debugging-port=0`).
struct Cdp {
    ws: Ws,
    next: u64,
}

impl Cdp {
    async fn connect(profile: &str) -> Cdp {
        let file = std::fs::read_to_string(format!("{profile}/DevToolsActivePort")).expect("DevToolsActivePort");
        let mut lines = file.lines();
        let (port, path) = (lines.next().unwrap(), lines.next().unwrap());
        let (ws, _) =
            tokio_tungstenite::connect_async(format!("ws://127.0.0.1:{port}{path}")).await.expect("cdp socket");
        Cdp { ws, next: 0 }
    }

    async fn call(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = self.next;
        self.ws
            .send(Message::Text(json!({"id": id, "method": method, "params": params}).to_string().into()))
            .await
            .unwrap();
        let fut = async {
            loop {
                match self.ws.next().await {
                    Some(Ok(Message::Text(t))) => {
                        let v: Value = serde_json::from_str(t.as_str()).unwrap();
                        if v["id"] == id {
                            return v;
                        }
                    }
                    Some(Ok(_)) => {}
                    other => panic!("cdp socket ended during {method}: {other:?}"),
                }
            }
        };
        tokio::time::timeout(HANG, fut).await.unwrap_or_else(|_| panic!("{method} did not answer"))
    }
}

fn pid_of(v: &Value) -> i64 {
    v["pid"].as_i64().unwrap_or_else(|| panic!("no pid in {v}"))
}

#[tokio::test]
async fn pop_out_is_headed_on_the_same_profile_keeps_cookies_and_a_closed_window_pops_back_in() {
    let x = Xvfb::start();
    let sc = Sidecar::start_with_env_changes(&["--exit-with-parent"], &[("DISPLAY", &x.display)], &["WAYLAND_DISPLAY"]);
    let base = upstream().await;

    let caps = sc.req("GET", "/api/capabilities", None).await;
    assert_eq!(caps.status, 200);
    assert_eq!(caps.json(), json!({"popout": {"available": true, "reason": null}}));

    // Log in headless: the upstream sets a session and a persistent cookie.
    let r = sc
        .req(
            "POST",
            "/api/browsers",
            Some(&json!({"url": format!("{base}/login"),
            "viewport": {"mode":"fixed","width":900,"height":700,"dpr":1.0}})),
        )
        .await;
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    let id = r.json()["id"].as_str().unwrap().to_string();
    until_info(&sc, &id, "logged in", |v| v["title"] == "login").await;
    post_ok(&sc, &id, "navigate", Some(&json!({"url": format!("{base}/echo?at=headless")}))).await;
    let before = until_info(&sc, &id, "both cookies headless", has_both_cookies).await;
    let headless_pid = pid_of(&before);
    assert!(headless(headless_pid));
    let profile = profile_of(headless_pid);
    assert_eq!(before["popped_out"], false);

    let mut ws = view(&sc, &id).await;
    until_json(&mut ws, "status in the pane", |v| {
        v["type"] == "status" && v["popped_out"] == false && v["connected"] == true
    })
    .await;

    // Pop out: headed, same profile, same URL, both cookies sent by the page's reload.
    post_ok(&sc, &id, "popout", None).await;
    // The window's inner size becomes the viewport the pane had (the renderer picks the
    // window's new bounds up asynchronously, hence the wait).
    let near = |v: &Value| {
        let d = |k: &str, want: i64| v["viewport"][k].as_i64().is_some_and(|x| (x - want).abs() <= 16);
        d("width", 900) && d("height", 700)
    };
    let out = until_info(&sc, &id, "both cookies in a window of the pane's size", |v| {
        v["popped_out"] == true && has_both_cookies(v) && near(v)
    })
    .await;
    let window_pid = pid_of(&out);
    assert_ne!(window_pid, headless_pid);
    assert!(common::wait_pid_gone(headless_pid).await, "the headless Chromium exited");
    assert!(!headless(window_pid), "headed: {:?}", cmdline(window_pid));
    // The user's window runs with our flags only, none of chromiumoxide's automation ones
    // ("Chrome is being controlled by automated test software" would take 46 px).
    let args = cmdline(window_pid);
    for bad in ["--enable-automation", "--password-store=basic", "--use-mock-keychain", "--disable-popup-blocking"] {
        assert!(!args.iter().any(|a| a == bad), "{bad} in the headed flags: {args:?}");
    }
    for good in [
        "--no-first-run",
        "--disable-sync",
        "--remote-debugging-port=0",
        "--disable-blink-features=AutomationControlled",
        // Chromium's own first tab could appear once the launch is live and pass for the
        // user's (it took the active tab from ours on a busy machine).
        "--no-startup-window",
    ] {
        assert!(args.iter().any(|a| a == good), "{good} missing from the headed flags: {args:?}");
    }
    assert_eq!(profile_of(window_pid), profile, "the same profile");
    assert!(out["url"].as_str().unwrap().ends_with("/echo?at=headless"), "{out}");
    until_json(&mut ws, "popped-out status", |v| {
        v["type"] == "status" && v["popped_out"] == true && v["connected"] == true
    })
    .await;

    // A window exists for the page target, in CDP and on the X server.
    let mut cdp = Cdp::connect(&profile).await;
    // The sidecar's active tab, not the first page Chromium lists: a headed Chromium may
    // open a blank tab of its own that the sidecar closes.
    let target = out["active_tab"].as_str().expect("an active tab").to_string();
    let w = cdp.call("Browser.getWindowForTarget", json!({"targetId": target})).await;
    assert!(w["result"]["windowId"].as_i64().is_some(), "a window for the page: {w}");
    // The X window's name follows the page title asynchronously.
    let deadline = std::time::Instant::now() + HANG;
    loop {
        let tree = Command::new("xwininfo")
            .args(["-root", "-tree", "-display", &x.display])
            .output()
            .expect("xwininfo (x11-utils)");
        let tree = String::from_utf8_lossy(&tree.stdout).to_string();
        if tree.contains("\"echo ") {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "no X window titled after the page:\n{tree}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // While popped out: url messages keep flowing; a second pop-out is refused.
    post_ok(&sc, &id, "navigate", Some(&json!({"url": format!("{base}/echo?at=window")}))).await;
    until_json(&mut ws, "url from the window", |v| {
        v["type"] == "url" && v["url"].as_str().unwrap_or("").ends_with("/echo?at=window")
    })
    .await;
    assert_eq!(post(&sc, &id, "popout", None).await.code(), "popped_out");

    // Pop back in: headless again at the window's URL with both cookies; the view stays
    // open and gets frames again.
    post_ok(&sc, &id, "popin", None).await;
    let back =
        until_info(&sc, &id, "both cookies after pop-in", |v| v["popped_out"] == false && has_both_cookies(v)).await;
    assert!(headless(pid_of(&back)));
    assert!(back["url"].as_str().unwrap().ends_with("/echo?at=window"), "{back}");
    assert!(common::wait_pid_gone(window_pid).await, "the window's Chromium exited");
    until_json(&mut ws, "back in the pane", |v| {
        v["type"] == "status" && v["popped_out"] == false && v["connected"] == true
    })
    .await;
    let f = until_frame(&mut ws).await;
    assert_eq!(&f[16..18], &[0xFF, 0xD8]);
    assert_eq!(post(&sc, &id, "popin", None).await.code(), "not_popped_out");

    // The user resizes and closes the window: the browser pops back in by itself at the
    // window's last URL, and the fixed viewport becomes the window's last inner size.
    post_ok(&sc, &id, "popout", None).await;
    // The viewport is measured per GET and is null while the new window's page cannot answer
    // yet: waited for too, since the resize below is judged against it.
    let out = until_info(&sc, &id, "popped out again", |v| {
        v["popped_out"] == true && v["connected"] == true && v["viewport"]["width"].is_i64()
    })
    .await;
    let window_pid = pid_of(&out);
    post_ok(&sc, &id, "navigate", Some(&json!({"url": format!("{base}/echo?at=last")}))).await;
    let mut cdp = Cdp::connect(&profile_of(window_pid)).await;
    // The sidecar's active tab, not the first page Chromium lists: a headed Chromium may
    // open a blank tab of its own that the sidecar closes.
    let target = out["active_tab"].as_str().expect("an active tab").to_string();
    let w = cdp.call("Browser.getWindowForTarget", json!({"targetId": target})).await;
    let side =
        |k: &str| w["result"]["bounds"][k].as_i64().unwrap_or_else(|| panic!("no {k} in the window's bounds: {w}"));
    let (win, bw, bh) = (w["result"]["windowId"].clone(), side("width"), side("height"));
    cdp.call("Browser.setWindowBounds", json!({"windowId": win, "bounds": {"width": bw + 100, "height": bh + 50}}))
        .await;
    let resized = until_info(&sc, &id, "the window resized", |v| {
        v["url"].as_str().unwrap_or("").ends_with("/echo?at=last")
            && v["viewport"]["width"].as_i64().is_some_and(|w| w != out["viewport"]["width"].as_i64().unwrap())
    })
    .await;
    let last = resized["viewport"].clone();
    let closed = cdp.call("Target.closeTarget", json!({"targetId": target})).await;
    assert!(closed.get("error").is_none(), "{closed}");
    let back = until_info(&sc, &id, "popped back in after the close", |v| {
        v["popped_out"] == false && v["connected"] == true && has_both_cookies(v)
    })
    .await;
    assert!(headless(pid_of(&back)), "headless again");
    assert!(back["url"].as_str().unwrap().ends_with("/echo?at=last"), "{back}");
    assert_eq!(back["mode"], "fixed");
    assert_eq!(back["viewport"]["width"], last["width"], "{back} vs {last}");
    assert_eq!(back["viewport"]["height"], last["height"], "{back} vs {last}");
    until_json(&mut ws, "back after the close", |v| {
        v["type"] == "status" && v["popped_out"] == false && v["connected"] == true
    })
    .await;

    // A crash of the window's Chromium is not a close: disconnected, still popped out.
    post_ok(&sc, &id, "popout", None).await;
    let near_last = |v: &Value| {
        let d = |k: &str| (v["viewport"][k].as_i64().unwrap_or(0) - last[k].as_i64().unwrap()).abs() <= 16;
        d("width") && d("height")
    };
    let out = until_info(&sc, &id, "popped out for the crash at the fixed size", |v| {
        v["popped_out"] == true && v["connected"] == true && near_last(v)
    })
    .await;
    let window_pid = pid_of(&out);
    common::send_signal(window_pid as u32, 9);
    until_json(&mut ws, "crash reported", |v| v["type"] == "status" && v["connected"] == false).await;
    let crashed = until_info(&sc, &id, "disconnected", |v| v["connected"] == false).await;
    assert_eq!(crashed["popped_out"], true, "a crash is not a close: {crashed}");
    assert!(common::wait_pid_gone(window_pid).await, "the crashed Chromium was reaped");
    // Relaunch brings the window back headed, at the size it had (the same sizing as a
    // pop-out), with the cookies of the last snapshot.
    post_ok(&sc, &id, "relaunch", None).await;
    let again = until_info(&sc, &id, "relaunched window at its size", |v| {
        v["popped_out"] == true && v["connected"] == true && near_last(v)
    })
    .await;
    assert!(!headless(pid_of(&again)));
    post_ok(&sc, &id, "popin", None).await;
    until_info(&sc, &id, "back after the crash", |v| v["popped_out"] == false && v["connected"] == true).await;

    // A window too big for the screen (1600×1000) is clamped to the screen's available size.
    post_ok(&sc, &id, "viewport", Some(&json!({"mode":"fixed","width":1580,"height":990,"dpr":1.0}))).await;
    post_ok(&sc, &id, "popout", None).await;
    let out = until_info(&sc, &id, "popped out big", |v| v["popped_out"] == true && v["connected"] == true).await;
    let mut cdp = Cdp::connect(&profile_of(pid_of(&out))).await;
    // The sidecar's active tab, not the first page Chromium lists: a headed Chromium may
    // open a blank tab of its own that the sidecar closes.
    let target = out["active_tab"].as_str().expect("an active tab").to_string();
    let w = cdp.call("Browser.getWindowForTarget", json!({"targetId": target})).await;
    let b = &w["result"]["bounds"];
    let side = |k: &str| b[k].as_i64().unwrap_or_else(|| panic!("no {k} in the window's bounds: {w}"));
    let (l, t, bw, bh) = (side("left"), side("top"), side("width"), side("height"));
    assert!(l >= 0 && t >= 0 && l + bw <= 1600 && t + bh <= 1000, "the window sticks out of the screen: {b}");
    post_ok(&sc, &id, "popin", None).await;
    until_info(&sc, &id, "back after the big window", |v| v["popped_out"] == false && v["connected"] == true).await;

    // The window opens beside the app's window: on its right where the screen has room, else
    // on its left. A `beside` out of bounds is refused and nothing pops out.
    post_ok(&sc, &id, "viewport", Some(&json!({"mode":"fixed","width":600,"height":500,"dpr":1.0}))).await;
    let bad = post(&sc, &id, "popout", Some(&json!({"beside":{"x":0,"y":0,"width":0,"height":600}}))).await;
    assert_eq!(bad.status, 400, "{}", bad.json());
    assert_eq!(info(&sc, &id).await["popped_out"], false);
    for (app, on_the_right) in [
        (json!({"x":0,"y":40,"width":800,"height":900}), true),
        (json!({"x":850,"y":40,"width":750,"height":900}), false),
    ] {
        post_ok(&sc, &id, "popout", Some(&json!({ "beside": app }))).await;
        let out =
            until_info(&sc, &id, "popped out beside", |v| v["popped_out"] == true && v["connected"] == true).await;
        let mut cdp = Cdp::connect(&profile_of(pid_of(&out))).await;
        let target = out["active_tab"].as_str().expect("an active tab").to_string();
        let w = cdp.call("Browser.getWindowForTarget", json!({"targetId": target})).await;
        let b = &w["result"]["bounds"];
        let side = |k: &str| b[k].as_i64().unwrap_or_else(|| panic!("no {k} in the window's bounds: {w}"));
        let (l, t, bw) = (side("left"), side("top"), side("width"));
        if on_the_right {
            assert!(l >= 800, "the window is not right of the app (0..800): {b}");
        } else {
            assert!(l + bw <= 850, "the window is not left of the app (850..1600): {b}");
        }
        assert_eq!(t, 40, "the window's top is the app's: {b}");
        post_ok(&sc, &id, "popin", None).await;
        until_info(&sc, &id, "back after beside", |v| v["popped_out"] == false && v["connected"] == true).await;
    }

    // Shutdown closes a popped-out window.
    post_ok(&sc, &id, "popout", None).await;
    let out =
        until_info(&sc, &id, "popped out for shutdown", |v| v["popped_out"] == true && v["connected"] == true).await;
    let window_pid = pid_of(&out);
    let r = sc.req("POST", "/api/shutdown", None).await;
    assert!(r.status < 300, "shutdown: {}", r.status);
    assert!(common::wait_pid_gone(window_pid).await, "shutdown closed the window's Chromium");
    drop(x);
}

#[tokio::test]
async fn without_a_display_pop_out_is_unavailable_and_refused() {
    let sc = Sidecar::start_with_env_changes(&["--exit-with-parent"], &[], &["DISPLAY", "WAYLAND_DISPLAY"]);
    let base = upstream().await;
    let caps = sc.req("GET", "/api/capabilities", None).await;
    assert_eq!(caps.status, 200);
    let reason = "No display to open a window on (neither DISPLAY nor WAYLAND_DISPLAY is set)";
    assert_eq!(caps.json(), json!({"popout": {"available": false, "reason": reason}}));
    let r = sc.req("POST", "/api/browsers", Some(&json!({"url": format!("{base}/echo")}))).await;
    assert_eq!(r.status, 201);
    let id = r.json()["id"].as_str().unwrap().to_string();
    let r = post(&sc, &id, "popout", None).await;
    assert_eq!((r.status, r.code()), (409, "no_display".to_string()));
    assert_eq!(r.json()["error"]["message"], reason);
    assert_eq!(post(&sc, &id, "popin", None).await.code(), "not_popped_out");
    let v = info(&sc, &id).await;
    assert_eq!((v["popped_out"].clone(), v["connected"].clone()), (json!(false), json!(true)));
    assert!(headless(pid_of(&v)));
    let r = sc.req("POST", "/api/shutdown", None).await;
    assert!(r.status < 300);
}

/// A TCP port for `127.0.0.1:<n>` as an X display: 6000 + n, free now.
fn fake_x_display() -> (std::net::TcpListener, String) {
    for n in 40..400u16 {
        if let Ok(l) = std::net::TcpListener::bind(("127.0.0.1", 6000 + n)) {
            return (l, format!("127.0.0.1:{n}"));
        }
    }
    panic!("no free port in 6040..6400 for a fake X display");
}

#[tokio::test]
async fn a_display_that_is_gone_is_unavailable_and_a_failed_window_keeps_the_session() {
    // A local display whose socket does not exist: unavailable, saying why.
    let n = (90..1000).find(|n| !std::path::Path::new(&format!("/tmp/.X11-unix/X{n}")).exists()).unwrap();
    let sc = Sidecar::start_with_env_changes(
        &["--exit-with-parent"],
        &[("DISPLAY", &format!(":{n}"))],
        &["WAYLAND_DISPLAY"],
    );
    let caps = sc.req("GET", "/api/capabilities", None).await.json();
    assert_eq!(caps["popout"]["available"], false, "{caps}");
    let want = format!(
        "Couldn't open a window on display :{n}: no X server is running there (/tmp/.X11-unix/X{n} does not exist)"
    );
    assert_eq!(caps["popout"]["reason"], want.as_str());
    let r = sc.req("POST", "/api/shutdown", None).await;
    assert!(r.status < 300);

    // A TCP display that accepts and hangs up: the check passes, Chromium cannot connect.
    // The pop-out fails with one readable line, and the browser is back in its pane,
    // headless, with the session cookie it had.
    let (listener, display) = fake_x_display();
    std::thread::spawn(move || {
        for s in listener.incoming() {
            drop(s);
        }
    });
    let sc = Sidecar::start_with_env_changes(&["--exit-with-parent"], &[("DISPLAY", &display)], &["WAYLAND_DISPLAY"]);
    let caps = sc.req("GET", "/api/capabilities", None).await.json();
    assert_eq!(caps, json!({"popout": {"available": true, "reason": null}}));
    let base = upstream().await;
    let r = sc.req("POST", "/api/browsers", Some(&json!({"url": format!("{base}/login")}))).await;
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    let id = r.json()["id"].as_str().unwrap().to_string();
    until_info(&sc, &id, "logged in", |v| v["title"] == "login").await;
    post_ok(&sc, &id, "navigate", Some(&json!({"url": format!("{base}/echo?at=before")}))).await;
    until_info(&sc, &id, "both cookies", has_both_cookies).await;
    let r = post(&sc, &id, "popout", None).await;
    assert_eq!(r.code(), "launch_failed", "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(
        r.json()["error"]["message"],
        format!("Couldn't open a window on display {display}: Chromium could not connect to it").as_str()
    );
    let back = until_info(&sc, &id, "back in the pane with both cookies", |v| {
        v["popped_out"] == false && v["connected"] == true && has_both_cookies(v)
    })
    .await;
    assert!(headless(pid_of(&back)));
    let r = sc.req("POST", "/api/shutdown", None).await;
    assert!(r.status < 300);
}
