//! The task suite (issue 25, Benchmark): eight small apps served by the bench itself, each
//! task done by a scripted agent policy through `ph browser` (`tasks_porthole.rs`) and
//! through Playwright MCP (`tasks_playwright.rs`) in the same run.
//!
//! The apps (`tasks/*.html`, two generated here) report their state to the bench's server
//! (`POST /report?task=NAME`) on every change; a task is **done** only when that state shows
//! the goal reached and the answer the policy read off the page is the right one (values a
//! policy must read, a price, a stock count, a confirmation code, change from run to run).
//! What an agent read is counted as it came: `ph`'s stdout and stderr, the text of every
//! MCP tool result (and any file a result sends the agent to instead).

use std::collections::BTreeMap;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde_json::Value;

/// The fixture apps.
const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/bench_agent/tasks");

/// The tasks, in the order they run.
pub const TASKS: [&str; 8] = ["todo", "signup", "docs", "table", "settings", "embed", "shop", "banner"];

/// Paragraphs of the docs page, rows of the table.
pub const DOC_PARAGRAPHS: usize = 2000;
pub const TABLE_ROWS: usize = 1000;

/// What this run's pages hold that a policy must read (drawn at start).
pub struct Values {
    /// The other origin (`http://localhost:PORT2`, another site than `127.0.0.1`).
    pub frame: String,
    /// The Team plan's price on the docs page, `$NN`.
    pub price: String,
    /// The table row asked about (1-based) and every row's stock.
    pub row: usize,
    pub stock: Vec<u32>,
    /// The seed the confirmation codes are drawn from.
    seed: u64,
    docs: String,
    table: String,
}

static VALUES: OnceLock<Values> = OnceLock::new();
/// The last state each app reported, and the confirmation codes the embedded form issued.
static STATE: Mutex<BTreeMap<String, Value>> = Mutex::new(BTreeMap::new());
static CODES: Mutex<Vec<(Value, String)>> = Mutex::new(Vec::new());

fn rng(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

/// Draws this run's values; `frame_port` serves the same pages as the other origin.
pub fn init(frame_port: u16) {
    let mut seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64 | 1;
    let price = format!("${}", 20 + rng(&mut seed) % 80);
    let row = 100 + (rng(&mut seed) % 900) as usize;
    let stock: Vec<u32> = (0..TABLE_ROWS).map(|_| (rng(&mut seed) % 1000) as u32).collect();
    let docs = docs_page(&price);
    let table = table_page(&stock);
    let v = Values { frame: format!("http://localhost:{frame_port}"), price, row, stock, seed, docs, table };
    assert!(VALUES.set(v).is_ok(), "tasks::init twice");
}

pub fn values() -> &'static Values {
    VALUES.get().expect("tasks::init")
}

/// The product name of table row `i` (1-based).
pub fn product(i: usize) -> String {
    format!("Widget {i:04}")
}

/// A 2,000-paragraph documentation page: 40 sections of 50 paragraphs, one of them
/// "Pricing" (the Team plan's price in its second paragraph); other sections quote other
/// dollar amounts, so a search for "$" alone does not answer.
fn docs_page(price: &str) -> String {
    const TOPICS: [&str; 40] = [
        "Introduction",
        "Installation",
        "Quick start",
        "Projects",
        "Environments",
        "Deployments",
        "Domains",
        "Certificates",
        "Build settings",
        "Caching",
        "Logs",
        "Metrics",
        "Alerts",
        "Teams",
        "Roles",
        "Audit log",
        "Single sign-on",
        "Secrets",
        "Databases",
        "Backups",
        "Storage",
        "Queues",
        "Cron jobs",
        "Webhooks",
        "API",
        "Command line",
        "Regions",
        "Support",
        "Pricing",
        "Billing",
        "Invoices",
        "Limits",
        "History",
        "Migration",
        "Security",
        "Compliance",
        "Status",
        "Glossary",
        "FAQ",
        "Changelog",
    ];
    let mut s = String::from(
        "<!doctype html><html lang=en><head><meta charset=utf-8><title>Acme Cloud documentation</title></head><body>\n\
         <header><nav aria-label=Docs><a href=#introduction>Introduction</a> · <a href=#pricing>Pricing</a> · \
         <a href=#support>Support</a> · <a href=#faq>FAQ</a></nav></header>\n<main><h1>Acme Cloud documentation</h1>\n",
    );
    let mut n = 0;
    for (k, topic) in TOPICS.iter().enumerate() {
        let id = topic.to_lowercase().replace(' ', "-");
        s += &format!("<section id=\"{id}\"><h2>{topic}</h2>\n");
        for j in 0..DOC_PARAGRAPHS / TOPICS.len() {
            n += 1;
            let p = match (*topic, j) {
                ("Pricing", 0) => "Every plan is billed per seat; a seat is one person who can deploy.".to_string(),
                ("Pricing", 1) => format!("The Team plan costs {price} per seat per month, billed yearly."),
                ("Support", 3) => "Priority support is available for $999 per year on any plan.".to_string(),
                ("History", 7) => "Until 2021 the Legacy plan cost $15 per seat per month.".to_string(),
                ("Limits", 2) => "A build that runs past its limit costs $0.02 per extra minute.".to_string(),
                _ if j % 10 == 9 => format!("Paragraph {n}: more about {topic} is in the API reference ({k}.{j})."),
                _ => format!(
                    "Paragraph {n} of the guide ({k}.{j}): the settings described here apply to each project \
                     of the team that owns it, in every region."
                ),
            };
            s += &format!("<p>{p}</p>\n");
        }
        s += "</section>\n";
    }
    s += "</main><footer><a href=#status>Status</a> · <a href=#changelog>Changelog</a></footer></body></html>\n";
    s
}

/// A 1,000-row inventory table with a filter box (rows not matching are hidden).
fn table_page(stock: &[u32]) -> String {
    let mut s = String::from(
        "<!doctype html><html lang=en><head><meta charset=utf-8><title>Inventory</title>\
         <style>body{font:15px sans-serif;margin:2em} td,th{padding:2px 8px}</style></head><body><main>\n\
         <h1>Inventory</h1><label>Filter products <input id=filter type=search autocomplete=off></label>\n\
         <p id=shown>1000 products</p><table><thead><tr><th>Product</th><th>SKU</th><th>In stock</th></tr></thead><tbody>\n",
    );
    for (i, n) in stock.iter().enumerate() {
        let i = i + 1;
        s += &format!("<tr><td>{}</td><td>W-{i:04}-{}</td><td>{n}</td></tr>\n", product(i), (i * 7919) % 97);
    }
    s += "</tbody></table></main><script>\n\
          const rows = [...document.querySelectorAll('tbody tr')];\n\
          document.getElementById('filter').addEventListener('input', e => {\n\
            const q = e.target.value.trim().toLowerCase();\n\
            let k = 0;\n\
            for (const r of rows) { const on = r.cells[0].textContent.toLowerCase().includes(q); r.hidden = !on; k += on; }\n\
            document.getElementById('shown').textContent = k + (k === 1 ? ' product' : ' products');\n\
            fetch('/report?task=table', {method: 'POST', body: JSON.stringify({filter: e.target.value, shown: k})}).then(r => r.text());\n\
          });\n</script></body></html>\n";
    s
}

/// Answers the suite's requests: `GET /tasks/NAME`, `POST /report?task=T`, `POST
/// /subscribe` (the embedded form: returns a new confirmation code). `None`: not ours.
pub fn handle(method: &str, path: &str, query: &str, body: &str) -> Option<(&'static str, String)> {
    let v = VALUES.get()?;
    if method == "POST" && path == "/report" {
        let task = query.strip_prefix("task=")?.to_string();
        let state: Value = serde_json::from_str(body).unwrap_or(Value::Null);
        STATE.lock().unwrap().insert(task, state);
        return Some(("text/plain", "ok".into()));
    }
    if method == "POST" && path == "/subscribe" {
        let mut codes = CODES.lock().unwrap();
        let mut seed = v.seed ^ (codes.len() as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let code = format!("NL-{:04}-{:04}", rng(&mut seed) % 10000, rng(&mut seed) % 10000);
        codes.push((serde_json::from_str(body).unwrap_or(Value::Null), code.clone()));
        return Some(("text/plain", code));
    }
    if path == "/favicon.ico" {
        // Neither tool's console then logs a 404 for it.
        return Some(("image/x-icon", String::new()));
    }
    let name = path.strip_prefix("/tasks/")?;
    let page = match name {
        "docs.html" => v.docs.clone(),
        "table.html" => v.table.clone(),
        _ if name.contains("..") || name.contains('/') => return None,
        _ => std::fs::read_to_string(format!("{DIR}/{name}")).ok()?.replace("{{FRAME}}", &v.frame),
    };
    Some(("text/html; charset=utf-8", page))
}

/// Forgets what `task` reported (before each tool's run of it).
pub fn reset(task: &str) {
    STATE.lock().unwrap().remove(task);
    if task == "embed" {
        CODES.lock().unwrap().clear();
    }
}

/// The bench's own check that `task` is done, from the state its app reported and the
/// answer the policy read: `Err` says what is missing. Waits up to 3 s for the last report.
pub async fn check(task: &str, answer: &str) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        let r = check_once(task, answer);
        if r.is_ok() || Instant::now() > deadline {
            return r;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn check_once(task: &str, answer: &str) -> Result<(), String> {
    let v = values();
    let s = STATE.lock().unwrap().get(task).cloned().unwrap_or(Value::Null);
    let want = |ok: bool, what: String| if ok { Ok(()) } else { Err(what) };
    match task {
        "todo" => {
            let todos =
                serde_json::json!([{"text": "Buy milk", "done": true}, {"text": "Walk the dog", "done": false}]);
            want(s["todos"] == todos, format!("page state {s}"))?;
            want(answer == "1" && s["left"] == 1, format!("answer {answer:?}, page says {} left", s["left"]))
        }
        "signup" => {
            let refused = s["refused"].as_array().is_some_and(|r| !r.is_empty());
            want(refused, format!("no invalid email was refused: {s}"))?;
            want(s["step"] == "done" && s["plan"] == "Pro", format!("not finished: {s}"))?;
            want(answer.contains("not valid"), format!("the refusal read was {answer:?}"))
        }
        "docs" => want(answer == v.price, format!("answer {answer:?}, the price is {}", v.price)),
        "table" => {
            want(s["shown"] == 1, format!("the filter shows {} rows", s["shown"]))?;
            let stock = v.stock[v.row - 1].to_string();
            want(answer == stock, format!("answer {answer:?}, {} has {stock}", product(v.row)))
        }
        "settings" => {
            want(s["saved"]["email"] == true && s["saved"]["digest"] == true, format!("saved: {}", s["saved"]))?;
            want(answer == "Saved", format!("answer {answer:?}"))
        }
        "embed" => {
            let codes = CODES.lock().unwrap();
            let Some((form, code)) = codes.last() else { return Err("the form was never submitted".into()) };
            want(form["name"] == "Ada Lovelace" && form["email"] == "ada@example.com", format!("submitted {form}"))?;
            want(answer == code, format!("answer {answer:?}, the code issued was {code}"))
        }
        "shop" => {
            let cart = serde_json::json!({"Coffee mug": 1, "Notebook": 3});
            want(s["cart"] == cart, format!("cart {}", s["cart"]))?;
            want(answer == "$25.25" && s["total"] == 2525, format!("answer {answer:?}, page total {}", s["total"]))
        }
        "banner" => {
            want(s["consent"].is_string(), format!("the banner was not answered: {s}"))?;
            want(s["got"] == true && s["gotBeforeConsent"] == false, format!("the covered button: {s}"))?;
            want(answer.contains("q3-report.pdf"), format!("answer {answer:?}"))
        }
        _ => Err(format!("unknown task {task}")),
    }
}

/// The tally's name for a snapshot file an MCP answer linked and the agent read.
pub const FILE_READ: &str = "(read snapshot file)";

/// What an agent read and did during one task.
#[derive(Default, Clone)]
pub struct Tally {
    pub bytes: usize,
    pub calls: usize,
    /// Each verb (tool) used: how many times, and the bytes its answers came to.
    pub verbs: BTreeMap<String, (usize, usize)>,
}

impl Tally {
    pub fn add(&mut self, verb: &str, bytes: usize) {
        self.bytes += bytes;
        self.calls += 1;
        let v = self.verbs.entry(verb.to_string()).or_default();
        v.0 += 1;
        v.1 += bytes;
    }
}

/// One task's outcome for one tool.
pub struct TaskRun {
    pub task: &'static str,
    pub done: bool,
    /// Why not done (the policy's own failure, or the bench's check).
    pub why: String,
    pub tally: Tally,
    pub ms: f64,
}

/// Runs `policy` for each task (the page state reset first), times it and checks it.
pub async fn run_all<A: Agent>(agent: &mut A, tool: &str) -> Vec<TaskRun> {
    let mut out = Vec::new();
    // `BENCH_AGENT_TASK_LIST=todo,shop`: only those (for iterating on a policy).
    let list = std::env::var("BENCH_AGENT_TASK_LIST").unwrap_or_default();
    for task in TASKS.into_iter().filter(|t| list.is_empty() || list.split(',').any(|l| l == *t)) {
        eprintln!("bench agent: {tool}: task {task}");
        reset(task);
        agent.take_tally();
        let t = Instant::now();
        let r = agent.run(task).await;
        let ms = t.elapsed().as_secs_f64() * 1000.0;
        let tally = agent.take_tally();
        let (done, why) = match r {
            Ok(answer) => match check(task, &answer).await {
                Ok(()) => (true, String::new()),
                Err(e) => (false, format!("check: {e}")),
            },
            Err(e) => (false, format!("policy: {e}")),
        };
        if !done {
            eprintln!("bench agent: {tool}: task {task} FAILED: {why}");
        }
        out.push(TaskRun { task, done, why, tally, ms });
    }
    out
}

/// A tool's agent: its policy for each task, and its tally of what it read.
pub trait Agent {
    /// Does `task` as the policy does; `Ok` is the answer it read off the page (what the
    /// task asks to read back), `Err` why it gave up.
    async fn run(&mut self, task: &'static str) -> Result<String, String>;
    /// What was read since the last call.
    fn take_tally(&mut self) -> Tally;
}

fn done_bytes(runs: &[TaskRun]) -> (usize, usize) {
    let done: Vec<&TaskRun> = runs.iter().filter(|r| r.done).collect();
    (done.len(), done.iter().map(|r| r.tally.bytes).sum())
}

/// The task × tool table, the totals and the bytes-per-completed-task ratio, then the
/// failures with why and the verbs each policy used.
pub fn print(ours: &[TaskRun], theirs: Option<&[TaskRun]>, pw_label: &str) {
    println!(
        "\ntask suite ({} tasks; bytes: everything the agent read, calls: tool calls and snapshot files read; \
         ms: wall time of the task)",
        TASKS.len()
    );
    let mut rows: Vec<Vec<String>> = vec![vec![
        "task".into(),
        "porthole done".into(),
        "bytes".into(),
        "calls".into(),
        "ms".into(),
        format!("{pw_label} done"),
        "bytes".into(),
        "calls".into(),
        "ms".into(),
        "bytes ratio".into(),
    ]];
    let cell = |r: Option<&TaskRun>| -> Vec<String> {
        match r {
            Some(r) => vec![
                if r.done { "yes".into() } else { "FAILED".into() },
                r.tally.bytes.to_string(),
                r.tally.calls.to_string(),
                format!("{:.0}", r.ms),
            ],
            None => vec!["—".into(); 4],
        }
    };
    for (i, o) in ours.iter().enumerate() {
        let t = theirs.and_then(|t| t.get(i));
        let mut row = vec![o.task.to_string()];
        row.extend(cell(Some(o)));
        row.extend(cell(t));
        row.push(t.map(|t| format!("{:.2}", o.tally.bytes as f64 / t.tally.bytes.max(1) as f64)).unwrap_or_default());
        rows.push(row);
    }
    let total = |runs: &[TaskRun]| -> Vec<String> {
        let (n, _) = done_bytes(runs);
        vec![
            format!("{n}/{}", runs.len()),
            runs.iter().map(|r| r.tally.bytes).sum::<usize>().to_string(),
            runs.iter().map(|r| r.tally.calls).sum::<usize>().to_string(),
            format!("{:.0}", runs.iter().map(|r| r.ms).sum::<f64>()),
        ]
    };
    let mut row = vec!["total".to_string()];
    row.extend(total(ours));
    row.extend(theirs.map(total).unwrap_or_else(|| vec!["—".into(); 4]));
    row.push(String::new());
    rows.push(row);
    let w: Vec<usize> = (0..rows[0].len()).map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap()).collect();
    for r in &rows {
        let cells: Vec<String> = r.iter().enumerate().map(|(i, c)| format!("{c:<w$}", w = w[i])).collect();
        println!("{}", cells.join("  ").trim_end());
    }
    let (n, b) = done_bytes(ours);
    let per = |n: usize, b: usize| if n == 0 { f64::NAN } else { b as f64 / n as f64 };
    let ours_per = per(n, b);
    print!("porthole: {ours_per:.0} bytes per completed task");
    if let Some(t) = theirs {
        let (tn, tb) = done_bytes(t);
        let theirs_per = per(tn, tb);
        println!(
            "; {pw_label}: {theirs_per:.0}; ratio {:.3} (≈ 1/{:.1}; target ≤ 1/3)",
            ours_per / theirs_per,
            theirs_per / ours_per
        );
        // The same without the snapshot files its answers link (were the agent to act blind).
        let files: usize = t.iter().filter(|r| r.done).filter_map(|r| r.tally.verbs.get(FILE_READ).map(|v| v.1)).sum();
        let blind = per(tn, tb - files);
        println!(
            "(counting only {pw_label}'s tool answers, not the {files} bytes of snapshot files read: {blind:.0} \
             bytes per completed task, ratio {:.3})",
            ours_per / blind
        );
    } else {
        println!();
    }
    for (tool, runs) in [("porthole", Some(ours)), (pw_label, theirs)] {
        let Some(runs) = runs else { continue };
        for r in runs {
            let verbs: Vec<String> = r.tally.verbs.iter().map(|(v, (n, b))| format!("{v}×{n} {b} B")).collect();
            println!("  {tool} {}: {}", r.task, verbs.join(", "));
            if !r.done {
                println!("  {tool} {}: FAILED: {}", r.task, r.why);
            }
        }
    }
}
