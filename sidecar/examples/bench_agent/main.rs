//! `ph browser` against Playwright MCP, on the same pages in the same run (issue #10,
//! Benchmark).
//!
//! Run: `cargo xtask bench agent`. A page server started here serves the fixture corpus
//! (`tests/fixtures/agent/`) and a generated page of 5,000 elements (`BENCH_AGENT_ROWS`); the ground truth is
//! `tests/fixtures/agent/bench.json` (which elements are actionable, which refs must go stale,
//! which actions must fail). Porthole is the real sidecar driven over HTTP as `ph` drives it
//! (a stand-in UI window creates the screencast pane's browser); Playwright MCP is
//! `@playwright/mcp` (pinned in `examples/bench_agent/package.json`, installed with `npm ci`
//! when missing, never a browser download) on `/usr/bin/chromium`, headless, driven over
//! stdio by rmcp's MCP client. Both get a 1280×720 viewport.
//!
//! Measured per tool:
//! - actionable recall: actionable elements offered with a ref (target 100%);
//! - false interactables: offered elements (a ref on a control role or a click target, not
//!   marked disabled) that are not actionable, over all offered (target ≤ 5%);
//! - stale refs refused and failed actions reported (target 100% each);
//! - the largest corpus snapshot in bytes (ours: `-i` and full; Playwright has one kind);
//! - on the generated page (5,000 elements by default): snapshot latency p50/p95 (target ≤ 300 ms) and bytes (≤ 16 KiB
//!   with `-i`), click and fill latency p50/p95, each a full round trip as the agent sees it.
//!
//! Prints a table (Porthole beside Playwright MCP, with ratios) and what each missed.
//! Then the sealed-content case (issue 24, `sealed.rs`): a 9,000-element page with 200
//! controls in closed shadow roots, Porthole only, printed as a second table.
//!
//! Then the task suite (issue 25, `tasks.rs`): eight tasks on small apps served here (a todo
//! list, a signup with validation, a long docs page, a filtered table, settings behind a
//! menu, a cross-site embedded form, a shop cart, a cookie banner), each done by a scripted
//! agent policy through the real `ph browser` and through Playwright MCP, checked by the
//! bench from what the apps report; printed as a task × tool table with bytes read per
//! completed task.
//!
//! Environment: `BENCH_AGENT_TASKS=0` (no task suite) or `only` (the task suite alone),
//! `BENCH_AGENT_N` (timed repetitions, default 20), `BENCH_AGENT_PLAYWRIGHT=0`
//! (Porthole only), `BENCH_AGENT_ROWS` (rows of the generated page, default 1,000),
//! `BENCH_AGENT_SEALED=0` (no sealed case) or `only` (the sealed case alone),
//! `BENCH_AGENT_SCALE=0` (no scale series) or `only` (the scale series alone, `scale.rs`),
//! `BENCH_AGENT_SCALE_N` (timed snapshots per scale step, default 5),
//! `BENCH_AGENT_PHASES` (fresh documents the sealed scan's phases are timed on, default 5;
//! 0: not timed).

#[path = "../common/mod.rs"]
mod common;
mod playwright;
mod porthole;
mod scale;
mod sealed;
mod tasks;
mod tasks_playwright;
mod tasks_porthole;
mod truth;

use std::io::{BufRead, BufReader, Write};
use std::time::Instant;

use common::{env_usize, percentile};
use truth::{Act, Check, Step, Truth, FIXTURES};

/// How an action ended: done, or refused/failed with a code (Playwright MCP gives none:
/// `error`) and a detail (our `stale_ref` reason, else the message).
pub enum Outcome {
    Done,
    Refused { code: String, detail: String },
}

/// What the bench asks of a tool; each implementation maps it onto its own verbs.
trait Driver {
    /// Whether the tool has an interactive-only snapshot (`-i`).
    const INTERACTIVE: bool;
    /// Loads `url` and returns once it has loaded.
    async fn open(&mut self, url: &str);
    /// The outline (ours: `-i` when `interactive`).
    async fn snapshot(&mut self, interactive: bool) -> String;
    /// What the last snapshot left out to stay within its bound, if anything.
    fn last_cut(&self) -> Option<String> {
        None
    }
    /// Acts on ref `r` (`text` for fill and select).
    async fn act(&mut self, act: Act, r: &str, text: Option<&str>) -> Outcome;
    /// Runs a script in the page.
    async fn eval(&mut self, js: &str);
    /// Loads the same URL again (a new document) and returns once it has loaded.
    async fn reload(&mut self);
    /// Waits until the page's text contains `t`.
    async fn wait_text(&mut self, t: &str);
}

/// Rows of the generated page (`BENCH_AGENT_ROWS`, default 1,000); five elements each (row,
/// label, button, input, link).
fn big_rows() -> usize {
    env_usize("BENCH_AGENT_ROWS", 1000)
}
/// The row whose button and input the click and fill timings use (in the first viewport).
const BIG_TARGET_ROW: usize = 20;

/// `n` with thousands separated by commas (`20,000`).
fn grouped(n: usize) -> String {
    let d = n.to_string();
    let mut out = String::new();
    for (i, c) in d.chars().enumerate() {
        if i > 0 && (d.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Elements of the generated page of `rows` rows.
fn big_elements(rows: usize) -> usize {
    rows * 5
}

/// The generated page of `rows` rows: `rows` × 5 elements.
fn big_page(rows: usize) -> String {
    let mut s = format!("<!doctype html><title>{} elements</title><p id=out>none</p>\n", big_elements(rows));
    for i in 1..=rows {
        s += &format!(
            "<div class=row><span>Row {i}</span> <button onclick=\"out.textContent='clicked {i}'\">Act {i}</button> \
             <input aria-label=\"Field {i}\"> <a href=\"#r{i}\">Link {i}</a></div>\n"
        );
    }
    s
}

/// Serves the fixture corpus at `/NAME`, the generated page at `/big.html` and the task
/// suite's apps (`tasks::handle`) on its own threads (one per connection); a second
/// listener serves the same as another site (`localhost:PORT2`, for the suite's cross-site
/// frame). Returns the first port.
fn serve() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let l2 = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    tasks::init(l2.local_addr().unwrap().port());
    let big = std::sync::Arc::new(big_page(big_rows()));
    let sealed = std::sync::Arc::new((sealed::page("closed"), sealed::page("open")));
    for l in [l, l2] {
        let (big, sealed) = (big.clone(), sealed.clone());
        std::thread::spawn(move || {
            for s in l.incoming().flatten() {
                let (big, sealed) = (big.clone(), sealed.clone());
                std::thread::spawn(move || answer(s, &big, &sealed));
            }
        });
    }
    port
}

/// Answers one request on `s`.
fn answer(s: std::net::TcpStream, big: &str, sealed: &(String, String)) {
    use std::io::Read;
    let mut r = BufReader::new(&s);
    let mut first = String::new();
    if r.read_line(&mut first).is_err() {
        return;
    }
    let mut line = String::new();
    let mut length = 0;
    while r.read_line(&mut line).is_ok_and(|n| n > 2) {
        if let Some((k, v)) = line.split_once(':') {
            if k.eq_ignore_ascii_case("content-length") {
                length = v.trim().parse().unwrap_or(0);
            }
        }
        line.clear();
    }
    let mut body = vec![0; length.min(1 << 20)];
    if r.read_exact(&mut body).is_err() {
        return;
    }
    let mut words = first.split_whitespace();
    let method = words.next().unwrap_or("GET");
    let target = words.next().unwrap_or("/").split('#').next().unwrap_or("/");
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let name = path.trim_start_matches('/');
    let (ctype, body) = if let Some(t) = tasks::handle(method, path, query, &String::from_utf8_lossy(&body)) {
        (t.0, Some(t.1))
    } else {
        let rows = query.strip_prefix("rows=").and_then(|r| r.parse::<usize>().ok()).filter(|r| *r <= 100_000);
        let body = if name == "big.html" {
            Some(rows.map_or_else(|| big.to_string(), big_page))
        } else if name == "sealed.html" {
            Some(sealed.0.clone())
        } else if name == "sealed_open.html" {
            Some(sealed.1.clone())
        } else if name.is_empty() || name.contains("..") || name.contains('/') {
            None
        } else {
            std::fs::read_to_string(format!("{FIXTURES}/{name}")).ok()
        };
        ("text/html; charset=utf-8", body)
    };
    let (status, body) = match body {
        Some(b) => ("200 OK", b),
        None => ("404 Not Found", "not found".to_string()),
    };
    let _ = write!(
        &s,
        "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    // A FIN once the answer is out (as an HTTP/1.1 server closing the connection does).
    let _ = s.shutdown(std::net::Shutdown::Write);
}

/// One tool's figures.
#[derive(Default)]
struct Figures {
    tool: String,
    found: usize,
    actionable: usize,
    offered: usize,
    false_offers: Vec<String>,
    missed: Vec<String>,
    stale: (usize, usize),
    fail: (usize, usize),
    notes: Vec<String>,
    max_bytes: usize,
    max_bytes_full: usize,
    snap: Vec<f64>,
    snap_i: Vec<f64>,
    big_bytes: usize,
    big_bytes_i: usize,
    click: Vec<f64>,
    fill: Vec<f64>,
}

/// The ref of element `name` in a fresh snapshot, or a note why there is none.
async fn ref_in<D: Driver>(d: &mut D, name: &str) -> Result<String, String> {
    let lines = truth::parse(&d.snapshot(true).await);
    truth::ref_of(&lines, name).ok_or_else(|| format!("no ref for {name:?}"))
}

/// Runs the corpus, the checks and the timings against one tool.
async fn measure<D: Driver>(d: &mut D, tool: &str, base: &str, truth: &Truth, n: usize) -> Figures {
    let mut f = Figures { tool: tool.into(), ..Figures::default() };
    for page in &truth.pages {
        eprintln!("bench agent: {tool}: {}", page.page);
        d.open(&format!("{base}/{}", page.page)).await;
        let text = d.snapshot(true).await;
        f.max_bytes = f.max_bytes.max(text.len());
        f.max_bytes_full = f.max_bytes_full.max(d.snapshot(false).await.len());
        let s = truth::score(page, &truth::parse(&text));
        f.found += s.found;
        f.actionable += s.actionable;
        f.offered += s.offered;
        f.missed.extend(s.missed.iter().map(|m| format!("{}: {m:?}", page.page)));
        f.false_offers.extend(s.false_offers.iter().map(|m| format!("{}: {m}", page.page)));
    }
    for c in &truth.stale {
        let ok = check(d, base, c, true, &mut f.notes).await;
        f.stale.0 += ok as usize;
        f.stale.1 += 1;
    }
    for c in &truth.fail {
        let ok = check(d, base, c, false, &mut f.notes).await;
        f.fail.0 += ok as usize;
        f.fail.1 += 1;
    }

    let el = grouped(big_elements(big_rows()));
    eprintln!("bench agent: {tool}: the {el}-element page");
    d.open(&format!("{base}/big.html")).await;
    let kinds: &[bool] = if D::INTERACTIVE { &[false, true] } else { &[false] };
    for &interactive in kinds {
        let mut times = Vec::with_capacity(n);
        let mut bytes = 0;
        for _ in 0..n {
            let t = Instant::now();
            bytes = d.snapshot(interactive).await.len();
            times.push(t.elapsed().as_secs_f64() * 1000.0);
        }
        times.sort_by(f64::total_cmp);
        if let Some(cut) = d.last_cut() {
            f.notes.push(format!("{el}-element snapshot{}: cut {cut}", if interactive { " -i" } else { "" }));
        }
        if interactive {
            (f.snap_i, f.big_bytes_i) = (times, bytes);
        } else {
            (f.snap, f.big_bytes) = (times, bytes);
        }
    }
    let button = ref_in(d, &format!("Act {BIG_TARGET_ROW}")).await.unwrap();
    let field = ref_in(d, &format!("Field {BIG_TARGET_ROW}")).await.unwrap();
    for (act, r, times) in [(Act::Click, &button, &mut f.click), (Act::Fill, &field, &mut f.fill)] {
        for i in 0..n {
            let text = format!("value {i}");
            let t = Instant::now();
            let o = d.act(act, r, Some(&text)).await;
            times.push(t.elapsed().as_secs_f64() * 1000.0);
            if let Outcome::Refused { code, detail } = o {
                panic!("{tool}: {act:?} on the big page failed: {code} {detail}");
            }
        }
        times.sort_by(f64::total_cmp);
    }
    f
}

/// One stale (`stale` true) or fail case; true if and only if the tool refused the action.
/// A note says how it ended (and when our code or reason is not the one expected).
async fn check<D: Driver>(d: &mut D, base: &str, c: &Check, stale: bool, notes: &mut Vec<String>) -> bool {
    eprintln!("bench agent: {} {:?}", if stale { "stale" } else { "fail" }, c.name);
    d.open(&format!("{base}/{}", c.page)).await;
    let lines = truth::parse(&d.snapshot(true).await);
    let Some(r) = truth::ref_of(&lines, &c.target) else {
        notes.push(format!("{}: no ref for {:?}, not run", c.name, c.target));
        return false;
    };
    for step in &c.steps {
        match step {
            Step::Click(name) => {
                let Some(sr) = truth::ref_of(&lines, name) else {
                    notes.push(format!("{}: no ref for step {name:?}, not run", c.name));
                    return false;
                };
                if let Outcome::Refused { code, detail } = d.act(Act::Click, &sr, None).await {
                    notes.push(format!("{}: step click {name:?} failed ({code} {detail})", c.name));
                }
            }
            Step::Reload => d.reload().await,
            Step::Eval(js) => d.eval(js).await,
            Step::WaitText(t) => d.wait_text(t).await,
        }
    }
    if let Some(js) = &c.setup {
        d.eval(js).await;
    }
    let kind = if stale { "stale" } else { "fail" };
    match d.act(c.act, &r, c.text.as_deref()).await {
        Outcome::Done => {
            notes.push(format!("{kind} {:?}: NOT DETECTED: {:?} {:?} went through, no error", c.name, c.act, c.target));
            false
        }
        Outcome::Refused { code, detail } => {
            let want =
                if stale { ("stale_ref", c.reason.as_deref()) } else { (c.code.as_deref().unwrap_or("?"), None) };
            // Playwright MCP's errors carry no code: only ours are held to the expected one.
            let wrong = code != "error" && (code != want.0 || want.1.is_some_and(|w| w != detail));
            let expected =
                if wrong { format!(" (expected {} {})", want.0, want.1.unwrap_or("")) } else { String::new() };
            notes.push(format!("{kind} {:?}: refused: {code}: {detail}{expected}", c.name));
            true
        }
    }
}

fn pct(a: usize, b: usize) -> String {
    if b == 0 {
        return "n/a".into();
    }
    format!("{a}/{b} ({:.1}%)", 100.0 * a as f64 / b as f64)
}

fn p50_95(v: &[f64]) -> String {
    format!("{:.1} / {:.1}", percentile(v, 0.5), percentile(v, 0.95))
}

fn ratio(ours: &[f64], theirs: &[f64]) -> String {
    let (a, b) = (percentile(ours, 0.5), percentile(theirs, 0.5));
    if a > 0.0 && b.is_finite() {
        format!("×{:.1}", b / a)
    } else {
        String::new()
    }
}

/// The table: one row a metric, Porthole, Playwright MCP, their p50 ratio (Playwright ÷
/// Porthole: above 1 means Porthole is faster), the target.
fn print_table(ours: &Figures, theirs: Option<&Figures>, pw_label: &str) {
    let e = Figures::default();
    let t = theirs.unwrap_or(&e);
    let dash = |s: String| if theirs.is_some() { s } else { "—".into() };
    let el = grouped(big_elements(big_rows()));
    let rows: Vec<[String; 5]> = vec![
        [
            "actionable recall (corpus)".into(),
            pct(ours.found, ours.actionable),
            dash(pct(t.found, t.actionable)),
            String::new(),
            "100%".into(),
        ],
        [
            "false interactables (corpus)".into(),
            pct(ours.false_offers.len(), ours.offered),
            dash(pct(t.false_offers.len(), t.offered)),
            String::new(),
            "≤ 5%".into(),
        ],
        [
            "stale refs refused".into(),
            pct(ours.stale.0, ours.stale.1),
            dash(pct(t.stale.0, t.stale.1)),
            String::new(),
            "100%".into(),
        ],
        [
            "failed actions reported".into(),
            pct(ours.fail.0, ours.fail.1),
            dash(pct(t.fail.0, t.fail.1)),
            String::new(),
            "100%".into(),
        ],
        [
            "max snapshot bytes (corpus)".into(),
            format!("{} -i / {} full", ours.max_bytes, ours.max_bytes_full),
            dash(t.max_bytes_full.to_string()),
            String::new(),
            String::new(),
        ],
        [
            format!("{el} el.: snapshot full p50/p95 ms"),
            p50_95(&ours.snap),
            dash(p50_95(&t.snap)),
            dash(ratio(&ours.snap, &t.snap)),
            "≤ 300".into(),
        ],
        [
            format!("{el} el.: snapshot -i p50/p95 ms"),
            p50_95(&ours.snap_i),
            "(no -i)".into(),
            dash(ratio(&ours.snap_i, &t.snap)),
            "≤ 300".into(),
        ],
        [
            format!("{el} el.: snapshot bytes"),
            format!("{} -i / {} full", ours.big_bytes_i, ours.big_bytes),
            dash(t.big_bytes.to_string()),
            String::new(),
            "≤ 16384 -i".into(),
        ],
        [
            format!("{el} el.: click p50/p95 ms"),
            p50_95(&ours.click),
            dash(p50_95(&t.click)),
            dash(ratio(&ours.click, &t.click)),
            String::new(),
        ],
        [
            format!("{el} el.: fill p50/p95 ms"),
            p50_95(&ours.fill),
            dash(p50_95(&t.fill)),
            dash(ratio(&ours.fill, &t.fill)),
            String::new(),
        ],
    ];
    let head = ["metric".to_string(), "porthole".into(), pw_label.into(), "ratio".into(), "target".into()];
    let width = |i: usize| rows.iter().chain([&head]).map(|r| r[i].chars().count()).max().unwrap_or(0);
    let w: Vec<usize> = (0..5).map(width).collect();
    println!();
    for r in [&head].into_iter().chain(rows.iter()) {
        let cells: Vec<String> = r.iter().enumerate().map(|(i, c)| format!("{c:<w$}", w = w[i])).collect();
        println!("{}", cells.join("  ").trim_end());
    }
    println!(
        "(ratio: Playwright MCP p50 ÷ Porthole p50; Playwright MCP has one snapshot kind, compared with ours -i too)"
    );
}

fn print_details(f: &Figures) {
    println!("\n{}:", f.tool);
    for (what, v) in [("missed", &f.missed), ("false interactable", &f.false_offers), ("note", &f.notes)] {
        for m in v {
            println!("  {what}: {m}");
        }
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let truth = Truth::load();
    let n = env_usize("BENCH_AGENT_N", 20);
    let port = serve();
    let base = format!("http://127.0.0.1:{port}");
    let home = std::env::temp_dir().join(format!("porthole-bench-agent-{}", std::process::id()));
    std::fs::create_dir_all(&home).unwrap();

    eprintln!(
        "bench agent: Porthole ({} pages, {} stale, {} fail cases, n = {n})",
        truth.pages.len(),
        truth.stale.len(),
        truth.fail.len()
    );
    let scale_env = std::env::var("BENCH_AGENT_SCALE").unwrap_or_default();
    let (scale_on, scale_only) = (scale_env != "0", scale_env == "only");
    let scale_n = env_usize("BENCH_AGENT_SCALE_N", 5);
    if scale_only {
        let mut p = porthole::Porthole::start(&home.join("porthole"), &format!("{base}/ax_only.html")).await;
        let ours = scale::run(&mut p, "porthole", &base, scale_n, scale::ROWS.len()).await;
        drop(p);
        let theirs = if std::env::var("BENCH_AGENT_PLAYWRIGHT").as_deref() == Ok("0") {
            None
        } else {
            match playwright::Playwright::start(&home.join("playwright")).await {
                Ok(mut pw) => {
                    let label = format!("playwright-mcp {}", pw.version);
                    Some(scale::run(&mut pw, &label, &base, scale_n, scale::PLAYWRIGHT_STEPS).await)
                }
                Err(e) => {
                    eprintln!("bench agent: Playwright MCP skipped: {e}");
                    None
                }
            }
        };
        scale::print(&ours, theirs.as_ref());
        let _ = std::fs::remove_dir_all(&home);
        return;
    }
    let tasks_env = std::env::var("BENCH_AGENT_TASKS").unwrap_or_default();
    let (tasks_on, tasks_only) = (tasks_env != "0", tasks_env == "only");
    let sealed_only = std::env::var("BENCH_AGENT_SEALED").as_deref() == Ok("only");
    let (ours, ours_scale, sealed, ours_tasks) = {
        let ph_home = home.join("porthole");
        let mut p = porthole::Porthole::start(&ph_home, &format!("{base}/ax_only.html")).await;
        let ours = if sealed_only || tasks_only {
            Figures::default()
        } else {
            measure(&mut p, "porthole", &base, &truth, n).await
        };
        let ours_scale = if scale_on && !sealed_only && !tasks_only {
            Some(scale::run(&mut p, "porthole", &base, scale_n, scale::ROWS.len()).await)
        } else {
            None
        };
        let sealed = if std::env::var("BENCH_AGENT_SEALED").as_deref() == Ok("0") || tasks_only {
            None
        } else {
            eprintln!("bench agent: porthole: the sealed case (9,000 elements, 200 closed-root controls)");
            let mut f = sealed::run(&mut p, &base, n).await;
            let m = env_usize("BENCH_AGENT_PHASES", 5);
            if m > 0 {
                eprintln!("bench agent: porthole: the sealed scan's phases");
                f.phases = Some((m, sealed::phases(&mut p, &ph_home, m).await));
            }
            Some(f)
        };
        let ours_tasks = if tasks_on && !sealed_only {
            let mut agent = tasks_porthole::PhAgent::new(p.ph_env(), &base);
            Some(tasks::run_all(&mut agent, "porthole").await)
        } else {
            None
        };
        (ours, ours_scale, sealed, ours_tasks)
    };
    if sealed_only {
        sealed::print(sealed.as_ref().unwrap());
        let _ = std::fs::remove_dir_all(&home);
        return;
    }

    let mut label = "playwright-mcp".to_string();
    let mut unread = 0;
    let (theirs, theirs_scale, theirs_tasks) = if std::env::var("BENCH_AGENT_PLAYWRIGHT").as_deref() == Ok("0") {
        (None, None, None)
    } else {
        eprintln!("bench agent: Playwright MCP");
        match playwright::Playwright::start(&home.join("playwright")).await {
            Ok(mut pw) => {
                label = format!("playwright-mcp {}", pw.version);
                let theirs = if tasks_only { None } else { Some(measure(&mut pw, &label, &base, &truth, n).await) };
                let theirs_scale = if ours_scale.is_some() {
                    Some(scale::run(&mut pw, &label, &base, scale_n, scale::PLAYWRIGHT_STEPS).await)
                } else {
                    None
                };
                let theirs_tasks = if tasks_on {
                    let mut agent = tasks_playwright::PwAgent::new(&pw, &base);
                    let runs = tasks::run_all(&mut agent, &label).await;
                    unread = agent.unread;
                    Some(runs)
                } else {
                    None
                };
                (theirs, theirs_scale, theirs_tasks)
            }
            Err(e) => {
                eprintln!("bench agent: Playwright MCP skipped: {e}");
                (None, None, None)
            }
        }
    };

    if !tasks_only {
        print_details(&ours);
        if let Some(t) = &theirs {
            print_details(t);
        }
        print_table(&ours, theirs.as_ref(), &label);
        if let Some(s) = &ours_scale {
            scale::print(s, theirs_scale.as_ref());
        }
        if let Some(s) = &sealed {
            sealed::print(s);
        }
    }
    if let Some(o) = &ours_tasks {
        tasks::print(o, theirs_tasks.as_deref(), &label);
        if theirs_tasks.is_some() {
            println!(
                "(not counted for {label}: {unread} bytes of snapshot files its answers linked and the policy did not read)"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&home);
}
