//! The task suite's policy through `ph browser`: the real `ph` binary (as an agent in a
//! pane runs it) against the bench's sidecar and its screencast pane. The cheap verbs
//! first: `snapshot -i` on small pages, `find` and `text` to read, each action's evidence
//! (`→` lines) instead of a new snapshot, `snapshot --diff` to see what an action added.
//! Everything `ph` prints, stdout and stderr, is what the agent read.

use std::path::PathBuf;

use crate::tasks::{self, Agent, Tally};
use crate::tasks_playwright::{button_under, code_in, dollars, line_by, ref_by};

pub struct PhAgent {
    bin: PathBuf,
    url: String,
    token: String,
    pane: String,
    base: String,
    tally: Tally,
}

impl PhAgent {
    pub fn new(env: (String, String, String), base: &str) -> PhAgent {
        let (url, token, pane) = env;
        let bin = crate::common::binary("ph");
        PhAgent { bin, url, token, pane, base: base.to_string(), tally: Tally::default() }
    }

    /// Runs `ph browser ARGS… --pane P`; (exit code 0, stdout + stderr).
    async fn ph(&mut self, args: &[&str]) -> (bool, String) {
        let mut cmd = std::process::Command::new(&self.bin);
        cmd.arg("browser").args(args).args(["--pane", &self.pane]);
        cmd.env("PORTHOLE_URL", &self.url).env("PORTHOLE_TOKEN", &self.token);
        let out = tokio::task::spawn_blocking(move || cmd.output()).await.unwrap().expect("run ph");
        let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
        text += &String::from_utf8_lossy(&out.stderr);
        // The verb, with the flags that make it another kind of read.
        let mut label = args[0].to_string();
        for a in &args[1..] {
            if ["-i", "--diff", "--role", "--ref", "--load", "--text"].contains(a) {
                label = format!("{label} {a}");
            }
        }
        self.tally.add(&label, text.len());
        if std::env::var_os("BENCH_AGENT_TASKS_TRACE").is_some() {
            eprintln!("$ ph browser {}\n{text}", args.join(" "));
        }
        (out.status.success(), text)
    }

    /// `ph browser ARGS…`; `Err` with what it said when it failed.
    async fn must(&mut self, args: &[&str]) -> Result<String, String> {
        match self.ph(args).await {
            (true, t) => Ok(t),
            (false, t) => Err(format!("ph browser {}: {}", args.join(" "), t.trim())),
        }
    }

    async fn open(&mut self, page: &str) -> Result<(), String> {
        let url = format!("{}/tasks/{page}", self.base);
        self.must(&["navigate", &url]).await?;
        self.must(&["wait", "--load"]).await?;
        Ok(())
    }
}

/// The lines a `--diff` added or changed (`+ `, `~ `), without their marks.
fn added(diff: &str) -> String {
    diff.lines().filter_map(|l| l.strip_prefix("+ ").or_else(|| l.strip_prefix("~ "))).collect::<Vec<_>>().join("\n")
}

/// The first number in `s`.
fn number(s: &str) -> Option<String> {
    s.split(|c: char| !c.is_ascii_digit()).find(|w| !w.is_empty()).map(String::from)
}

impl Agent for PhAgent {
    fn take_tally(&mut self) -> Tally {
        std::mem::take(&mut self.tally)
    }

    async fn run(&mut self, task: &'static str) -> Result<String, String> {
        match task {
            "todo" => {
                self.open("todo.html").await?;
                let s = self.must(&["snapshot", "-i"]).await?;
                let entry = ref_by(&s, "textbox", "New todo")?;
                for t in ["Buy milk", "Walk the dog"] {
                    self.must(&["fill", &entry, t]).await?;
                    self.must(&["press", "Enter", "--ref", &entry]).await?;
                }
                let f = self.must(&["find", "--role", "checkbox", "--name", "Buy milk"]).await?;
                let cb = ref_by(&f, "checkbox", "Buy milk")?;
                // The app redraws its list: the evidence says the box left the page; the
                // count read next is what shows it took.
                self.must(&["check", &cb]).await?;
                let f = self.must(&["find", "left"]).await?;
                let line = f.lines().find(|l| l.contains(" left")).ok_or_else(|| format!("no count in {f}"))?;
                number(line).ok_or_else(|| format!("no number in {line}"))
            }
            "signup" => {
                self.open("signup.html").await?;
                let s = self.must(&["snapshot", "-i"]).await?;
                let (name, email) = (ref_by(&s, "textbox", "Full name")?, ref_by(&s, "textbox", "Email")?);
                let next = ref_by(&s, "button", "Next")?;
                self.must(&["fill", &name, "Ada Lovelace"]).await?;
                self.must(&["fill", &email, "ada@example"]).await?;
                self.must(&["click", &next]).await?;
                // What did Next do? Only what changed.
                let d = self.must(&["snapshot", "--diff"]).await?;
                let refusal = added(&d);
                if refusal.trim().is_empty() {
                    return Err(format!("Next changed nothing visible: {d}"));
                }
                self.must(&["fill", &email, "ada@example.com"]).await?;
                self.must(&["click", &next]).await?;
                let s = self.must(&["snapshot", "-i"]).await?;
                let plan = ref_by(&s, "combobox", "Plan")?;
                self.must(&["select", &plan, "Pro"]).await?;
                self.must(&["check", &ref_by(&s, "checkbox", "terms")?]).await?;
                self.must(&["click", &ref_by(&s, "button", "Finish")?]).await?;
                let f = self.must(&["find", "Welcome"]).await?;
                if !f.contains("Welcome, Ada") {
                    return Err(format!("no welcome: {f}"));
                }
                Ok(refusal)
            }
            "docs" => {
                self.open("docs.html").await?;
                let f = self.must(&["find", "Pricing"]).await?;
                if !f.contains("heading \"Pricing\"") {
                    return Err(format!("no Pricing heading: {f}"));
                }
                // The amounts on the page, each with the heading it is under.
                let f = self.must(&["find", "$"]).await?;
                let lines: Vec<&str> = f.lines().collect();
                for (i, l) in lines.iter().enumerate() {
                    if l.contains("under heading \"Pricing\"") {
                        // The match's text is the line before its locator.
                        if let Some(d) = lines[..i].iter().rev().find_map(|p| dollars(p)) {
                            return Ok(d);
                        }
                    }
                }
                Err(format!("no amount under the Pricing heading: {f}"))
            }
            "table" => {
                self.open("table.html").await?;
                let s = self.must(&["snapshot", "-i"]).await?;
                let filter = ref_by(&s, "searchbox", "Filter")?;
                let want = tasks::product(tasks::values().row);
                self.must(&["fill", &filter, &want]).await?;
                // `text` leaves table cells out (their text is in the cell's name): `find`
                // gives the row, named by its cells: product, SKU, stock.
                let f = self.must(&["find", &want]).await?;
                let row = line_by(&f, "row", &want)?.name;
                row.split_whitespace().last().and_then(number).ok_or_else(|| format!("no stock in {row:?}"))
            }
            "settings" => {
                self.open("settings.html").await?;
                let s = self.must(&["snapshot", "-i"]).await?;
                self.must(&["click", &ref_by(&s, "button", "Account")?]).await?;
                let f = self.must(&["find", "--role", "menuitem", "--name", "Settings"]).await?;
                self.must(&["click", &ref_by(&f, "menuitem", "Settings")?]).await?;
                let s = self.must(&["snapshot", "-i"]).await?;
                let e = self.must(&["check", &ref_by(&s, "switch", "Email notifications")?]).await?;
                if !e.contains("true") {
                    return Err(format!("the switch: {e}"));
                }
                self.must(&["click", &ref_by(&s, "button", "Save")?]).await?;
                // (`find --role status` finds no unnamed status: the text is what to find.)
                let f = self.must(&["find", "Saved"]).await?;
                Ok(line_by(&f, "text", "Saved")?.name)
            }
            "embed" => {
                self.open("embed.html").await?;
                let s = self.must(&["snapshot", "-i"]).await?;
                self.must(&["fill", &ref_by(&s, "textbox", "Your name")?, "Ada Lovelace"]).await?;
                self.must(&["fill", &ref_by(&s, "textbox", "Email")?, "ada@example.com"]).await?;
                self.must(&["click", &ref_by(&s, "button", "Subscribe")?]).await?;
                let f = self.must(&["find", "confirmation code"]).await?;
                if let Some(c) = code_in(&f) {
                    return Ok(c);
                }
                self.must(&["wait", "--text", "confirmation code", "--timeout", "10"]).await?;
                let f = self.must(&["find", "confirmation code"]).await?;
                code_in(&f).ok_or_else(|| format!("no code: {f}"))
            }
            "shop" => {
                self.open("shop.html").await?;
                // Every product's button is "Add to cart": the outline shows which is whose.
                let s = self.must(&["snapshot"]).await?;
                for p in ["Coffee mug", "Notebook"] {
                    self.must(&["click", &button_under(&s, p, "Add to cart")?]).await?;
                }
                let f = self.must(&["find", "--role", "spinbutton", "--name", "Notebook"]).await?;
                self.must(&["fill", &ref_by(&f, "spinbutton", "Notebook")?, "3"]).await?;
                let f = self.must(&["find", "Total"]).await?;
                dollars(f.lines().find(|l| l.contains("Total")).unwrap_or("")).ok_or_else(|| format!("no total: {f}"))
            }
            "banner" => {
                self.open("banner.html").await?;
                let s = self.must(&["snapshot", "-i"]).await?;
                let target = ref_by(&s, "button", "Get the report")?;
                // A cookie dialog in the outline is answered first; else the click's refusal
                // (`element_occluded`) says what covers it.
                if !s.to_lowercase().contains("cookie") {
                    let (ok, t) = self.ph(&["click", &target]).await;
                    if ok || !t.contains("element_occluded") {
                        return Err(format!("click {target} was not refused: {t}"));
                    }
                }
                self.must(&["click", &ref_by(&s, "button", "Reject all")?]).await?;
                self.must(&["click", &target]).await?;
                let d = self.must(&["snapshot", "--diff"]).await?;
                let a = added(&d);
                a.lines()
                    .find(|l| l.contains("report is ready"))
                    .map(|l| l.trim().to_string())
                    .ok_or_else(|| format!("nothing said the report is ready: {d}"))
            }
            _ => Err(format!("no policy for {task}")),
        }
    }
}
