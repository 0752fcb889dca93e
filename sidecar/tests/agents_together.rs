//! Agents side by side (issue 26): two terminal panes, each running the real `ph`, on one
//! dev server (a real HTTP upstream). Each terminal's browser pane is its own: `open` gives
//! each its own pane at the URL it asked for (path, query, fragment), a terminal with no pane
//! is refused rather than handed another's, another terminal's pane can be observed by name
//! but not driven until the human hands it over, and `ph list` names each pane's driver.

mod common;

use common::control::{run_in, shell};
use common::window::TestWindow;
use common::Sidecar;
use serde_json::{json, Value};

fn pages(path: &str) -> Option<String> {
    let body = |t: &str| {
        format!("<!doctype html><title>{t}</title><h1>{t}</h1><button onclick=\"this.textContent='Clicked'\">Press</button>")
    };
    match path {
        "/counter.html" => Some(body("Counter")),
        "/todo/index.html" => Some(body("Todo")),
        _ => None,
    }
}

/// The value after `key=` on the screen's last line that has it.
fn value(screen: &str, key: &str) -> String {
    screen
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix(&format!("{key}=")))
        .unwrap_or_else(|| panic!("no {key}= in {screen}"))
        .trim()
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_terminal_drives_its_own_browser_pane_until_the_human_hands_one_over() {
    let sc = Sidecar::start_with_env(&[], &[("SHELL", "/bin/bash")]);
    let base = common::browser::serve(pages);
    let t1 = shell(&sc).await;
    let win = TestWindow::attach(&sc, &t1).await;
    let out = run_in(&sc, &t1, r#"h=$(ph split -- bash); echo "t2=${h%% *}""#, "^t2=t[0-9]").await;
    let t2 = value(&out, "t2");

    // t1 opens its pane; t2, with none of its own, is refused and told which it could name.
    let out =
        run_in(&sc, &t1, &format!("b=$(ph browser open '{base}/counter.html#A'); echo \"b1=$b rc=$?\""), "^b1=").await;
    assert!(out.contains("rc=0"), "{out}");
    let b1 = value(&out, "b1").split(' ').next().unwrap().to_string();
    let out = run_in(
        &sc,
        &t2,
        &format!(r#"ph browser snapshot > /dev/null 2> err.txt; echo "rc=$?"; echo "err=$(grep -c '\[no_browser_pane\]' err.txt),$(grep -c '{b1}, driven by {t1}' err.txt)""#),
        "^err=[0-9]",
    )
    .await;
    assert!(out.contains("rc=2") && value(&out, "err") == "1,1", "{out}");

    // t2 opens the same server at another path: its own new pane, at that path and query.
    let out =
        run_in(&sc, &t2, &format!("b=$(ph browser open '{base}/todo/index.html?x=1#B'); echo \"b2=$b rc=$?\""), "^b2=")
            .await;
    assert!(out.contains("rc=0"), "{out}");
    let b2 = value(&out, "b2").split(' ').next().unwrap().to_string();
    assert_ne!(b2, b1, "another terminal's pane is never reused");
    let out = run_in(&sc, &t2, r#"ph browser snapshot | head -1 | sed 's/^/head=/'"#, "^head=").await;
    assert!(value(&out, "head").contains(&format!("{base}/todo/index.html?x=1")), "{out}");

    // t1 opens another path: its own pane goes there (the path is not ignored).
    let out = run_in(
        &sc,
        &t1,
        &format!("ph browser open '{base}/todo/index.html' > o.txt; echo \"o=$(cat o.txt) rc=$?\""),
        "^o=",
    )
    .await;
    assert!(value(&out, "o").starts_with(&b1), "{out}");
    let out = run_in(&sc, &t1, r#"ph browser snapshot | head -1 | sed 's/^/head=/'"#, "^head=").await;
    assert!(value(&out, "head").contains("/todo/index.html"), "{out}");

    // t2 may observe t1's pane by name, not drive it.
    let out = run_in(&sc, &t2, &format!(r#"ph browser snapshot -i --pane {b1} > s.txt; echo "obs=$?"; ref=$(grep -o 'ref=e[0-9]*' s.txt | cut -d= -f2 | head -1); ph browser click $ref --pane {b1} 2> err2.txt; echo "rc=$?"; echo "err2=$(grep -c '\[pane_in_use\]' err2.txt),$(grep -c 'driven by {t1}' err2.txt)""#), "^err2=[0-9]").await;
    assert!(out.contains("obs=0") && out.contains("rc=2") && value(&out, "err2") == "1,1", "{out}");

    // ph list names each pane's driver.
    let out = run_in(&sc, &t1, &format!("ph list | grep '^{b1} ' | sed 's/^/row=/'"), "^row=").await;
    assert!(value(&out, "row").contains(&format!("driven by {t1}")), "{out}");

    // The human hands b1 to t2 (the pane menu's "Let t2 drive this"): t2 drives it, t1 no longer.
    let r = sc.req("PUT", "/api/drivers", Some(&json!({"pane": b1, "terminal": t2}))).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(r.json()["drivers"][&b1], Value::String(t2.clone()));
    let out = run_in(&sc, &t2, &format!(r#"ref=$(ph browser snapshot -i --pane {b1} | grep -o 'ref=e[0-9]*' | cut -d= -f2 | head -1); ph browser click $ref --pane {b1}; echo "click=$?""#), "^click=").await;
    assert!(out.contains("click=0"), "{out}");
    let out = run_in(
        &sc,
        &t1,
        r#"ph browser click e1 2> err3.txt; echo "rc=$?"; echo "err3=$(grep -c '\[pane_in_use\]' err3.txt)""#,
        "^err3=[0-9]",
    )
    .await;
    assert_eq!(value(&out, "err3"), "1", "{out}");
    // A pane token cannot hand anything over: the route is the app's.
    let bad = sc.req("PUT", "/api/drivers", Some(&json!({"pane": b1, "terminal": "b2"}))).await;
    assert_eq!(bad.status, 400, "{}", String::from_utf8_lossy(&bad.body));

    // A handoff: while b1 is handed to the human, no agent changes it; the human declines.
    let asking = {
        let body = json!({"pane": b1, "reason": "Type the 2FA code", "timeout_s": 60});
        let sc = &sc;
        async move { sc.req("POST", "/api/control/browser/handoff", Some(&body)).await }
    };
    let answering = async {
        let mut shown = false;
        for _ in 0..200 {
            let r = sc
                .req("POST", "/api/control/browser/act", Some(&json!({"pane": b1, "action": "press", "key": "Tab"})))
                .await;
            if r.code() == "handed_over" {
                shown = true;
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        assert!(shown, "a changing verb is refused handed_over while the pane is handed over");
        let a = sc.req("POST", &format!("/api/handoffs/{b1}"), Some(&json!({"answer": "decline"}))).await;
        assert_eq!(a.status, 200, "{}", String::from_utf8_lossy(&a.body));
    };
    let (asked, ()) = tokio::join!(asking, answering);
    assert_eq!(asked.code(), "declined", "{}", String::from_utf8_lossy(&asked.body));
    let none = sc.req("POST", &format!("/api/handoffs/{b1}"), Some(&json!({"answer": "done"}))).await;
    assert_eq!(none.code(), "unknown_target", "the handoff ended with its call");
    drop(win);
}

/// Two agents, 20 actions each, at once, each on its own pane (`open --new`): every click
/// lands in its own page, so each counter reads exactly 20.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_agents_acting_at_once_never_cross() {
    fn counter(path: &str) -> Option<String> {
        (path == "/count.html").then(|| {
            "<!doctype html><title>Count</title><button onclick=\"this.textContent=String(+this.textContent+1)\">0</button>"
                .to_string()
        })
    }
    let sc = Sidecar::start(&[]);
    let base = common::browser::serve(counter);
    let t1 = shell(&sc).await;
    let _win = TestWindow::attach(&sc, &t1).await;
    let mut panes = Vec::new();
    for _ in 0..2 {
        let r = sc
            .req(
                "POST",
                "/api/control/browser/open",
                Some(&json!({"target": format!("{base}/count.html"), "near": t1, "new": true})),
            )
            .await;
        assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
        panes.push(r.json()["handle"].as_str().unwrap().to_string());
    }
    assert_ne!(panes[0], panes[1]);
    let agents: Vec<common::agent::Agent> = panes.iter().map(|p| common::agent::Agent::new(&sc, p.clone())).collect();
    let mut refs = Vec::new();
    for a in &agents {
        let s = a.ok("snapshot", json!({"interactive": true})).await;
        let text = s["text"].as_str().unwrap();
        let at = text.find("[ref=").unwrap();
        refs.push(text[at + 5..].split(']').next().unwrap().to_string());
    }
    let run = |i: usize| {
        let a = &agents[i];
        let r = refs[i].clone();
        async move {
            for _ in 0..20 {
                a.ok("act", json!({"action": "click", "ref": r})).await;
            }
        }
    };
    tokio::join!(run(0), run(1));
    for (i, a) in agents.iter().enumerate() {
        let v = a.ok("eval", json!({"js": "document.querySelector('button').textContent", "allow_eval": true})).await;
        assert_eq!(v["value"], "20", "pane {}: every click its own", panes[i]);
    }
}

/// A dev server with a cookie login: `/login?u=NAME` sets `sid=NAME` (HttpOnly, as a real
/// session is) and redirects to `/private`, which says who is signed in; `/logout` expires it.
/// On `localhost`, as dev servers are named: its cookies are host-only, and must stay so in
/// every browser (a domain cookie copy would outlive the logout).
fn login_server() -> String {
    let base = common::browser::serve_raw(|head| {
        let target = head.split_whitespace().nth(1).unwrap_or("/").to_string();
        let (path, query) = target.split_once('?').unwrap_or((&target, ""));
        let who = head
            .lines()
            .filter_map(|l| l.strip_prefix("Cookie: ").or_else(|| l.strip_prefix("cookie: ")))
            .flat_map(|c| c.split("; "))
            .find_map(|c| c.strip_prefix("sid="))
            .map(str::to_string);
        let page = |body: String| {
            format!("HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n{body}", body.len())
        };
        let go = |cookie: String| {
            format!("HTTP/1.1 302 Found\r\nSet-Cookie: {cookie}\r\nLocation: /private\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        };
        match path {
            "/private" => page(match who {
                Some(w) => format!("<!doctype html><title>Private</title><h1>Signed in as {w}</h1>"),
                None => "<!doctype html><title>Private</title><h1>Signed out</h1>".to_string(),
            }),
            "/login" => go(format!("sid={}; Path=/; HttpOnly", query.strip_prefix("u=").unwrap_or("nobody"))),
            "/logout" => go("sid=; Path=/; Max-Age=0".to_string()),
            _ => "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_string(),
        }
    });
    base.replace("127.0.0.1", "localhost")
}

/// Shared login (issue 26 item 2): two terminals, each in its own pane, log in once; a logout
/// reaches the other too; `--isolated` shares nothing, either way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_login_in_one_pane_is_seen_in_the_others_but_not_in_an_isolated_one() {
    let sc = Sidecar::start_with_env(&[], &[("SHELL", "/bin/bash")]);
    let base = login_server();
    let t1 = shell(&sc).await;
    let win = TestWindow::attach(&sc, &t1).await;
    let out = run_in(&sc, &t1, r#"h=$(ph split -- bash); echo "t2=${h%% *}""#, "^t2=t[0-9]").await;
    let t2 = value(&out, "t2");
    // Runs `verb` in terminal `t`, waits for the load, and answers the page's first heading
    // (each answer on the screen under a key of its own).
    let calls = std::sync::atomic::AtomicUsize::new(0);
    let heading = |t: &str, verb: String, pane: &str| {
        let p = if pane.is_empty() { String::new() } else { format!(" --pane {pane}") };
        let k = format!("hd{}", calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst));
        let cmd = format!(
            r#"{verb}{p} > /dev/null; ph browser wait --load{p} > /dev/null; ph browser snapshot{p} | grep -o 'heading "[^"]*"' | head -1 | sed 's/^/{k}=/'"#
        );
        let t = t.to_string();
        let sc = &sc;
        async move { value(&run_in(sc, &t, &cmd, &format!("^{k}=")).await, &k) }
    };
    let signed = |who: &str| format!("heading \"Signed {who}\"");
    let handle = |t: &str, url: String| {
        let t = t.to_string();
        let k = format!("op{}", calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst));
        let sc = &sc;
        async move {
            let out =
                run_in(sc, &t, &format!(r#"b=$(ph browser open {url}); echo "{k}=$b""#), &format!("^{k}=b")).await;
            value(&out, &k).split(' ').next().unwrap().to_string()
        }
    };
    let b1 = handle(&t1, format!("'{base}/private'")).await;
    let b2 = handle(&t2, format!("'{base}/private'")).await;
    assert_eq!(heading(&t1, "true".into(), "").await, signed("out"));
    assert_eq!(heading(&t2, "true".into(), "").await, signed("out"));

    // t1 logs in (an HttpOnly session cookie set by a redirect); t2's pane is logged in too.
    assert_eq!(heading(&t1, format!("ph browser navigate '{base}/login?u=alice'"), "").await, signed("in as alice"));
    assert_eq!(heading(&t2, "ph browser reload".into(), "").await, signed("in as alice"));

    // An isolated pane of t2's shares nothing: signed out, and its own login stays its own.
    let b3 = handle(&t2, format!("--isolated '{base}/private'")).await;
    assert_ne!(b3, b2);
    assert_eq!(heading(&t2, "true".into(), "").await, signed("out"));
    assert_eq!(heading(&t2, format!("ph browser navigate '{base}/login?u=bob'"), "").await, signed("in as bob"));
    assert_eq!(heading(&t1, "ph browser reload".into(), "").await, signed("in as alice"));

    // A logout in t1's pane reaches t2's shared pane, never the isolated one.
    assert_eq!(heading(&t1, format!("ph browser navigate '{base}/logout'"), "").await, signed("out"));
    assert_eq!(heading(&t2, "ph browser reload".into(), &b2).await, signed("out"), "the logout reached {b2}");
    assert_eq!(
        heading(&t2, "ph browser reload".into(), &b3).await,
        signed("in as bob"),
        "the isolated pane keeps its own"
    );
    let mut isolated = Vec::new();
    for b in [&b1, &b2, &b3] {
        let id = win.browser_of(b).unwrap();
        isolated.push(sc.req("GET", &format!("/api/browsers/{id}"), None).await.json()["isolated"] == true);
    }
    assert_eq!(isolated, [false, false, true]);
    drop(win);
}
