//! Network for debugging (issue 25 item 6) end to end: a real Chromium behind a screencast
//! pane, a fetch-driven page (`tests/fixtures/agent/net.html`) and its JSON API from a real
//! HTTP upstream. `network --id N` shows headers, timing and a JSON body with credentials
//! redacted (and shown once the human sets `[agent] show_secrets`); a secret form field is
//! never shown; `network --har` is HAR 1.2 that parses back.

mod common;

use common::agent::{browser_pane, fixture_page, Agent, BrowserPane};
use common::control::ph;
use common::{Sidecar, HANG};
use serde_json::{json, Value};

const ORDERS: &str = r#"{"orders":[{"id":1,"item":"tea"},{"id":2,"item":"cake"}]}"#;

/// The fixtures, and the page's API.
fn pages(path: &str) -> Option<String> {
    match path {
        "/api/orders.json" => Some(ORDERS.into()),
        "/api/login.json" => Some(r#"{"session":"sess-abc"}"#.into()),
        "/api/check.json" => Some(r#"{"ok":true}"#.into()),
        p => fixture_page(p),
    }
}

/// Navigates to fixture `name` and waits until the page's state line reads `state`.
async fn open(a: &Agent<'_>, base: &str, name: &str, state: &str) {
    a.ok("navigate", json!({"url": format!("{base}/{name}")})).await;
    a.ok("wait", json!({"text": state, "timeout_ms": 20000})).await;
}

/// The number of the last listed request whose URL ends with `tail`, once it has ended
/// (answered or failed), bounded by HANG.
async fn numbered(a: &Agent<'_>, tail: &str) -> u64 {
    let deadline = tokio::time::Instant::now() + HANG;
    loop {
        let v = a.ok("network", json!({})).await;
        let found = v["requests"]
            .as_array()
            .unwrap()
            .iter()
            .rev()
            .find(|r| r["url"].as_str().unwrap().ends_with(tail))
            .cloned();
        if let Some(r) = found.filter(|r| !r["status"].is_null() || !r["error"].is_null()) {
            let n = r["n"].as_u64().unwrap();
            // Its body is there once loading finished: the detail says so.
            let d = a.ok("network", json!({"id": n})).await;
            if !d["timing"]["total_ms"].is_null() {
                return n;
            }
        }
        assert!(tokio::time::Instant::now() < deadline, "no finished request to {tail}: {v:#}");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

fn header<'v>(list: &'v Value, name: &str) -> Option<&'v str> {
    list.as_array()?.iter().find(|h| h["name"].as_str().is_some_and(|n| n.eq_ignore_ascii_case(name)))?["value"]
        .as_str()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_request_in_full_with_credentials_redacted_and_a_har_that_parses_back() {
    let sc = Sidecar::start(&[]);
    let BrowserPane { base, pane, .. } = browser_pane(&sc, pages, "net.html").await;
    let a = Agent::new(&sc, pane);
    open(&a, &base, "net.html", "Loaded 2 orders").await;

    let n = numbered(&a, "/api/orders.json").await;
    let d = a.ok("network", json!({"id": n})).await;
    assert_eq!(
        (d["n"].as_u64(), d["method"].as_str(), d["status"].as_i64()),
        (Some(n), Some("GET"), Some(200)),
        "{d:#}"
    );
    assert_eq!(d["mime"], "application/json", "{d:#}");
    assert_eq!(header(&d["request_headers"], "authorization"), Some("[redacted]"), "{d:#}");
    assert_eq!(header(&d["request_headers"], "x-trace"), Some("trace-7"), "{d:#}");
    assert_eq!(header(&d["response_headers"], "content-type"), Some("application/json"), "{d:#}");
    let body: Value = serde_json::from_str(d["response_body"]["text"].as_str().unwrap()).unwrap();
    assert_eq!(body, serde_json::from_str::<Value>(ORDERS).unwrap());
    assert_eq!(d["response_body"]["bytes"].as_u64(), Some(ORDERS.len() as u64));
    assert!(d["timing"]["total_ms"].as_f64().unwrap() >= 0.0 && d["timing"]["wait"].as_f64().unwrap() >= 0.0, "{d:#}");
    assert!(d["encoded_bytes"].as_f64().unwrap() >= ORDERS.len() as f64, "{d:#}");
    assert!(d["redacted"].as_u64().unwrap() >= 1);
    assert!(d["request_body"].is_null(), "a GET has no body: {d:#}");

    // The login's password field is redacted, and its answer (the session) withheld.
    let login = numbered(&a, "/api/login.json").await;
    let l = a.ok("network", json!({"id": login})).await;
    assert_eq!(l["method"], "POST");
    let sent = l["request_body"]["text"].as_str().unwrap_or_else(|| panic!("{l:#}"));
    assert!(sent.contains("user=ann") && sent.contains("password=") && !sent.contains("hunter2"), "{sent}");
    assert_eq!(l["request_body"]["redacted_fields"], 1);
    assert!(l["response_body"]["withheld"].is_string(), "{l:#}");

    // A field the page's password input names ("answer") is redacted too.
    let check = numbered(&a, "/api/check.json").await;
    let c = a.ok("network", json!({"id": check})).await;
    assert_eq!(c["request_body"]["redacted_fields"], 1, "{c:#}");
    assert!(c["request_body"]["text"].as_str().unwrap().contains("user=ann"), "{c:#}");

    // HAR 1.2, written and parsed back.
    let h = a.ok("network", json!({"har": true})).await;
    let file = common::temp_dir("har").join("tab.har");
    std::fs::write(&file, serde_json::to_vec_pretty(&h["har"]).unwrap()).unwrap();
    let har: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(har["log"]["version"], "1.2");
    assert_eq!(har["log"]["creator"]["name"], "Porthole");
    let entries = har["log"]["entries"].as_array().unwrap();
    assert_eq!(entries.len() as u64, h["entries"].as_u64().unwrap());
    // The current document (an earlier one's bodies are gone with it).
    let page = entries.iter().rev().find(|e| e["request"]["url"].as_str().unwrap().ends_with("/net.html")).unwrap();
    assert_eq!(page["response"]["status"], 200);
    assert!(page["response"]["content"]["text"].as_str().is_some_and(|t| t.contains("<h1>Orders</h1>")), "{page:#}");
    let api =
        entries.iter().rev().find(|e| e["request"]["url"].as_str().unwrap().ends_with("/api/orders.json")).unwrap();
    assert_eq!(api["response"]["content"]["text"], ORDERS);
    assert_eq!(api["response"]["content"]["mimeType"], "application/json");
    assert_eq!(header(&api["request"]["headers"], "authorization"), Some("[redacted]"));
    assert!(api["startedDateTime"].as_str().unwrap().ends_with('Z') && api["time"].as_f64().unwrap() >= 0.0);
    for k in ["blocked", "dns", "connect", "send", "wait", "receive"] {
        assert!(api["timings"][k].is_number(), "{k}: {api:#}");
    }
    let post = entries.iter().find(|e| e["request"]["method"] == "POST").unwrap();
    assert!(!post["request"]["postData"]["text"].as_str().unwrap().contains("hunter2"));

    // The same through the real `ph`: the text of one request, and a HAR file it writes.
    let pane = a.pane.clone();
    let (code, out, err) =
        tokio::task::block_in_place(|| ph(&sc, &["browser", "network", "--id", &n.to_string(), "--pane", &pane]));
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with(&format!("[{n}] GET {base}/api/orders.json (fetch)\n200 OK")), "{out}");
    assert!(out.contains("Authorization: [redacted]\n") && out.contains("X-Trace: trace-7\n"), "{out}");
    assert!(out.contains(&format!("-- response body (text, {} bytes)\n{ORDERS}\n", ORDERS.len())), "{out}");
    let (code, out, _) = tokio::task::block_in_place(|| ph(&sc, &["browser", "network", "--pane", &pane]));
    assert_eq!(code, 0);
    assert!(out.lines().any(|l| l == format!("[{n}] GET 200 {base}/api/orders.json (fetch)")), "{out}");
    let file = common::temp_dir("ph-har").join("tab.har");
    let (code, out, err) = tokio::task::block_in_place(|| {
        ph(&sc, &["browser", "network", "--har", file.to_str().unwrap(), "--pane", &pane])
    });
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with(&file.display().to_string()), "{out}");
    let har: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(har["log"]["version"], "1.2");
    assert!(har["log"]["entries"].as_array().unwrap().iter().any(|e| e["response"]["content"]["text"] == ORDERS));

    // Nothing secret ever left the sidecar so far.
    let said = a.said();
    assert!(!said.contains("s3cret-token") && !said.contains("hunter2") && !said.contains("sess-abc"));
    assert!(!said.contains("xyzzy42"));

    // The human shows credentials from Settings (`PATCH /api/config/agent`, the app's token):
    // the Authorization value is there at once; the password still is not. A bad body
    // writes nothing.
    let r = sc.req("PATCH", "/api/config/agent", Some(&json!({"show_secrets": "yes"}))).await;
    assert_eq!((r.status, r.code()), (400, "bad_request".to_string()));
    let r = sc.req("PATCH", "/api/config/agent", Some(&json!({"show_secrets": true}))).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(r.json()["config"]["agent"]["show_secrets"], true);
    let file = std::fs::read_to_string(sc.home.join(".config/porthole/config.toml")).unwrap();
    assert!(file.contains("show_secrets = true"), "{file}");
    let d = a.ok("network", json!({"id": n})).await;
    assert_eq!(header(&d["request_headers"], "authorization"), Some("Bearer s3cret-token"), "{d:#}");
    let l = a.ok("network", json!({"id": login})).await;
    assert!(!l.to_string().contains("hunter2"));

    // A number the log never had is refused, naming what it keeps.
    let e = a.refused("network", json!({"id": 9999}), "bad_request").await;
    assert!(e["message"].as_str().unwrap().contains("keeps 1..="), "{e}");
}

/// The ref on the line of `text` containing `needle`.
fn ref_of(text: &str, needle: &str) -> String {
    common::agent::ref_on(text, needle)
}

/// The last listed request whose URL ends with `tail`.
async fn last_request(a: &Agent<'_>, tail: &str) -> Value {
    let v = a.ok("network", json!({})).await;
    v["requests"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|r| r["url"].as_str().unwrap().ends_with(tail))
        .cloned()
        .unwrap()
}

/// The last request whose URL ends in `tail`, once its failure is logged (polled: the page
/// may show its error before Chromium's `loadingFailed` reaches the log), within HANG.
async fn failed_request(a: &Agent<'_>, tail: &str) -> Value {
    let deadline = tokio::time::Instant::now() + common::HANG;
    loop {
        let r = last_request(a, tail).await;
        if r["error"].is_string() || tokio::time::Instant::now() >= deadline {
            return r;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mocked_500_an_abort_and_offline_show_as_the_page_s_errors_and_off_restores() {
    use base64::Engine;
    let sc = Sidecar::start(&[]);
    let BrowserPane { base, pane, .. } = browser_pane(&sc, pages, "net.html").await;
    let a = Agent::new(&sc, pane);
    open(&a, &base, "net.html", "Loaded 2 orders").await;
    const API: &str = "*/api/orders.json";

    // A mocked 500: the page shows its error state with the mocked body.
    let body = base64::engine::general_purpose::STANDARD.encode(r#"{"error":"db down"}"#);
    let r = a
        .ok(
            "route",
            json!({"pattern": API, "status": 500, "body_base64": body, "headers": ["Content-Type: application/json"]}),
        )
        .await;
    assert_eq!(r["routes"].as_array().unwrap().len(), 1, "{r:#}");
    assert_eq!(
        (r["routes"][0]["answer"]["kind"].as_str(), r["routes"][0]["answer"]["status"].as_u64()),
        (Some("fulfill"), Some(500))
    );
    open(&a, &base, "net.html", r#"Error: the server answered 500: {"error":"db down"}"#).await;
    assert_eq!(last_request(&a, "/api/orders.json").await["status"], 500);
    let l = a.ok("route", json!({"list": true})).await;
    assert_eq!(l["routes"][0]["hits"], 1, "{l:#}");
    assert_eq!(l["routes"][0]["pattern"], API);

    // The same pattern aborted: the fetch fails.
    let r = a.ok("route", json!({"pattern": API, "abort": true})).await;
    assert_eq!(r["routes"].as_array().unwrap().len(), 1, "the pattern's route is replaced: {r:#}");
    open(&a, &base, "net.html", "Error: the network failed").await;
    let failed = failed_request(&a, "/api/orders.json").await;
    assert!(failed["error"].as_str().unwrap().contains("ERR_BLOCKED_BY_CLIENT"), "{failed}");

    // Off: the real answer again.
    let r = a.ok("route", json!({"pattern": API, "off": true})).await;
    assert_eq!((r["removed"].as_u64(), r["routes"].as_array().unwrap().len()), (Some(1), 0), "{r:#}");
    open(&a, &base, "net.html", "Loaded 2 orders").await;

    // Offline: the page's own fetch (its button) fails; back online it loads.
    let again = ref_of(a.ok("snapshot", json!({"interactive": true})).await["text"].as_str().unwrap(), "Load again");
    assert_eq!(a.ok("offline", json!({"on": true})).await["offline"], true);
    a.ok("act", json!({"action": "click", "ref": again})).await;
    a.ok("wait", json!({"text": "Error: the network failed", "timeout_ms": 20000})).await;
    // Chromium reports the failure (`loadingFailed`) apart from the page's own handling.
    let cut = failed_request(&a, "/api/orders.json").await;
    assert!(cut["error"].as_str().unwrap().contains("INTERNET_DISCONNECTED"), "{cut}");
    assert_eq!(a.ok("route", json!({"list": true})).await["offline"], true);
    a.ok("offline", json!({"on": false})).await;
    a.ok("act", json!({"action": "click", "ref": again})).await;
    a.ok("wait", json!({"text": "Loaded 2 orders", "timeout_ms": 20000})).await;

    // The same through the real `ph`: a body from a file, a header; listed; off.
    let pane = a.pane.clone();
    let body = common::temp_dir("ph-route").join("body.txt");
    std::fs::write(&body, "maintenance").unwrap();
    let (code, out, err) = tokio::task::block_in_place(|| {
        ph(
            &sc,
            &[
                "browser",
                "route",
                API,
                "--status",
                "503",
                "--body-file",
                body.to_str().unwrap(),
                "--header",
                "Content-Type: text/plain",
                "--pane",
                &pane,
            ],
        )
    });
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, format!("{API} → 503 (11 bytes), 0 hits\n"));
    open(&a, &base, "net.html", "Error: the server answered 503: maintenance").await;
    let (_, out, _) = tokio::task::block_in_place(|| ph(&sc, &["browser", "route", "--list", "--pane", &pane]));
    assert_eq!(out, format!("{API} → 503 (11 bytes), 1 hit\n"));
    let (code, out, _) = tokio::task::block_in_place(|| ph(&sc, &["browser", "route", API, "--off", "--pane", &pane]));
    assert_eq!((code, out.as_str()), (0, "removed 1\nno routes\n"));
    open(&a, &base, "net.html", "Loaded 2 orders").await;

    // A route is the tab's: another tab's requests are not routed.
    a.ok("tabs", json!({"action": "new", "url": format!("{base}/net.html")})).await;
    a.ok("wait", json!({"text": "Loaded 2 orders", "timeout_ms": 20000})).await;
    a.ok("route", json!({"pattern": API, "abort": true})).await;
    a.ok("tabs", json!({"action": "select", "tab": "1"})).await;
    assert_eq!(a.ok("route", json!({"list": true})).await["routes"], json!([]));
    open(&a, &base, "net.html", "Loaded 2 orders").await;
    a.ok("tabs", json!({"action": "close", "tab": "2"})).await;

    // Bounds: a status, the count of routes.
    a.refused("route", json!({"pattern": API, "status": 700}), "bad_request").await;
    a.refused("route", json!({"pattern": API, "abort": true, "off": true}), "bad_request").await;
    for i in 0..32 {
        a.ok("route", json!({"pattern": format!("*/nothing-{i}"), "abort": true})).await;
    }
    let e = a.refused("route", json!({"pattern": "*/one-too-many", "abort": true}), "bad_request").await;
    assert!(e["message"].as_str().unwrap().contains("32 routes"), "{e}");
    let r = a.ok("route", json!({"off": true})).await;
    assert_eq!(r["removed"], 32);
    open(&a, &base, "net.html", "Loaded 2 orders").await;
}

/// What the page's own Chromium decodes of a PNG: `[width, height]` and the RGB of each point.
async fn pixels(a: &Agent<'_>, png: &Value, points: &[(f64, f64)]) -> Value {
    let pts = serde_json::to_string(points).unwrap();
    let js = format!(
        "(async () => {{ const i = new Image(); i.src = 'data:image/png;base64,{}'; await i.decode(); \
         const c = new OffscreenCanvas(i.width, i.height); const g = c.getContext('2d'); g.drawImage(i, 0, 0); \
         const at = ([x, y]) => Array.from(g.getImageData(Math.floor(x), Math.floor(y), 1, 1).data.slice(0, 3)); \
         return {{size: [i.width, i.height], at: {pts}.map(at)}}; }})()",
        png["png"].as_str().unwrap()
    );
    a.ok("eval", json!({"js": js, "allow_eval": true})).await["value"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_annotated_screenshot_boxes_the_refs_on_screen_where_they_are() {
    let sc = Sidecar::start(&[]);
    let BrowserPane { base, pane, .. } = browser_pane(&sc, pages, "annotate.html").await;
    let a = Agent::new(&sc, pane);
    a.ok("navigate", json!({"url": format!("{base}/annotate.html")})).await;
    a.ok("wait", json!({"load": true, "timeout_ms": 20000})).await;
    let snap = a.ok("snapshot", json!({"interactive": true})).await;
    let text = snap["text"].as_str().unwrap();
    let (save, far) = (ref_of(text, "\"Save\""), ref_of(text, "Far below"));

    let shot = a.ok("screenshot", json!({"annotate": true})).await;
    let boxes = shot["boxes"].as_array().unwrap();
    let of = |r: &str| boxes.iter().find(|b| b["ref"] == r).cloned();
    let b = of(&save).unwrap_or_else(|| panic!("{save} boxed: {shot:#}"));
    assert!(of(&far).is_none(), "a ref below the fold is not boxed: {boxes:?}");
    assert_eq!(boxes.len(), 2, "{boxes:?}");
    let line = format!("[{}] {save} button \"Save\"", b["n"]);
    assert!(shot["legend"].as_str().unwrap().contains(&line), "{}", shot["legend"]);
    let rect = &b["rect"];
    let (x, y, w, h) = (
        rect["x"].as_f64().unwrap(),
        rect["y"].as_f64().unwrap(),
        rect["width"].as_f64().unwrap(),
        rect["height"].as_f64().unwrap(),
    );
    assert_eq!((x, y, w, h), (100.0, 100.0, 120.0, 40.0), "the button's own box");

    // The box sits on the button's edges: magenta there, the button's blue inside it, white
    // just outside (left of it).
    let p = pixels(
        &a,
        &shot,
        &[
            (x + 0.5, y + h / 2.0),
            (x + w - 1.0, y + h / 2.0),
            (x + w / 2.0, y + h - 1.0),
            (x + w / 2.0, y + h / 2.0 + 8.0),
            (x - 3.0, y + h / 2.0),
        ],
    )
    .await;
    let magenta = json!([255, 0, 255]);
    assert_eq!(p["at"][0], magenta, "left edge: {p}");
    assert_eq!(p["at"][1], magenta, "right edge: {p}");
    assert_eq!(p["at"][2], magenta, "bottom edge: {p}");
    assert_eq!(p["at"][3], json!([32, 96, 192]), "inside: {p}");
    assert_eq!(p["at"][4], json!([255, 255, 255]), "outside: {p}");
    let gone = a
        .ok("eval", json!({"js": "document.querySelector('porthole-annotations') === null", "allow_eval": true}))
        .await;
    assert_eq!(gone["value"], true, "the overlay went with the capture");
    // A plain capture has no box.
    let plain = a.ok("screenshot", json!({})).await;
    assert_eq!(pixels(&a, &plain, &[(x + 0.5, y + h / 2.0)]).await["at"][0], json!([32, 96, 192]));

    // Scaled: the longer side at most max_side.
    let small = a.ok("screenshot", json!({"annotate": true, "max_side": 300})).await;
    let size = pixels(&a, &small, &[]).await["size"].clone();
    let (sw, sh) = (size[0].as_u64().unwrap(), size[1].as_u64().unwrap());
    assert!(sw.max(sh) <= 300 && sw.max(sh) >= 290, "{size}");
    a.refused("screenshot", json!({"annotate": true, "full": true}), "bad_request").await;

    // The real `ph`: the path, then the legend.
    let pane = a.pane.clone();
    let file = common::temp_dir("ph-annotate").join("shot.png");
    let (code, out, err) = tokio::task::block_in_place(|| {
        ph(&sc, &["browser", "screenshot", "--annotate", "-o", file.to_str().unwrap(), "--pane", &pane])
    });
    assert_eq!(code, 0, "{err}");
    let mut lines = out.lines();
    assert_eq!(lines.next(), Some(file.to_str().unwrap()));
    assert_eq!(lines.filter(|l| l.starts_with('[')).count(), 2, "{out}");
    assert!(out.contains(&line), "{out}");
    assert!(std::fs::read(&file).unwrap().starts_with(b"\x89PNG"));
}
