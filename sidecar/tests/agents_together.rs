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
