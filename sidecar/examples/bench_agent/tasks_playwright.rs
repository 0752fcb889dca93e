//! The task suite's policy through Playwright MCP: its normal loop. Every action answers
//! with a short text that links the page's new snapshot (a `.yml` file in its output
//! directory, as 0.0.83 does); the policy reads that file (counted) when it needs to see
//! the outcome or new refs, and skips it when it types into a second field of a form it
//! has already read. `browser_find` is used where an agent would search instead of reading
//! a very long page. Unread snapshot files are tallied apart (`unread`), not counted.

use serde_json::{json, Value};

use crate::playwright::Playwright;
use crate::tasks::{self, Agent, Tally};
use crate::truth::{self, Line};

pub struct PwAgent<'a> {
    pw: &'a Playwright,
    base: String,
    tally: Tally,
    /// Bytes of snapshot files linked and not read, over the whole run.
    pub unread: usize,
}

/// One tool answer: its text, and the snapshot file it links, if any.
struct Resp {
    text: String,
    file: Option<String>,
}

impl<'a> PwAgent<'a> {
    pub fn new(pw: &'a Playwright, base: &str) -> PwAgent<'a> {
        PwAgent { pw, base: base.to_string(), tally: Tally::default(), unread: 0 }
    }

    /// Calls a tool; its text is read (counted). `Err`: the tool's error text.
    async fn call(&mut self, name: &'static str, args: Value) -> Result<Resp, String> {
        let t = std::time::Instant::now();
        let (error, text) = self.pw.tool(name, args).await;
        self.tally.add(name, text.len());
        if std::env::var_os("BENCH_AGENT_TASKS_TRACE").is_some() {
            eprintln!("> {name} ({} ms)\n{text}", t.elapsed().as_millis());
        }
        if error {
            return Err(format!("{name}: {}", text.lines().take(3).collect::<Vec<_>>().join(" / ")));
        }
        let file = text
            .split("[Snapshot](")
            .nth(1)
            .and_then(|l| l.split(')').next())
            .filter(|l| l.ends_with(".yml"))
            .map(String::from);
        Ok(Resp { text, file })
    }

    /// The snapshot an answer carries: inline (`browser_snapshot`), else the file it links,
    /// read as the agent reads a file (counted as `read snapshot file`).
    fn read(&mut self, r: &mut Resp) -> Result<String, String> {
        if let Some(start) = r.text.find("```yaml\n") {
            let body = &r.text[start + 8..];
            return Ok(body[..body.find("\n```").unwrap_or(body.len())].to_string());
        }
        let f = r.file.take().ok_or_else(|| format!("no snapshot in {:?}", r.text))?;
        let s = std::fs::read_to_string(self.pw.home().join(&f)).map_err(|e| format!("{f}: {e}"))?;
        self.tally.add(tasks::FILE_READ, s.len());
        Ok(s)
    }

    /// An answer whose snapshot the policy does not read: its file's size goes to `unread`.
    fn skip(&mut self, r: Resp) {
        if let Some(f) = r.file {
            self.unread += std::fs::metadata(self.pw.home().join(f)).map(|m| m.len() as usize).unwrap_or(0);
        }
    }

    async fn navigate(&mut self, page: &str) -> Result<Resp, String> {
        let url = format!("{}/tasks/{page}", self.base);
        self.call("browser_navigate", json!({"url": url})).await
    }

    /// An action, then its snapshot read; an answer without one (a fill) is followed by
    /// `browser_snapshot`, as the agent must to see what the action did.
    async fn act(&mut self, name: &'static str, args: Value) -> Result<String, String> {
        let mut r = self.call(name, args).await?;
        if r.file.is_none() && !r.text.contains("```yaml\n") {
            r = self.call("browser_snapshot", serde_json::json!({})).await?;
        }
        self.read(&mut r)
    }

    /// An action whose snapshot is not read.
    async fn act_blind(&mut self, name: &'static str, args: Value) -> Result<(), String> {
        let r = self.call(name, args).await?;
        self.skip(r);
        Ok(())
    }

    async fn click(&mut self, r: &str) -> Result<String, String> {
        self.act("browser_click", json!({"element": "the element", "target": r})).await
    }

    async fn type_blind(&mut self, r: &str, text: &str) -> Result<(), String> {
        self.act_blind("browser_type", json!({"element": "the field", "target": r, "text": text})).await
    }
}

/// The ref of the first line of `role` whose name contains `name` (any case).
pub fn ref_by(text: &str, role: &str, name: &str) -> Result<String, String> {
    line_by(text, role, name)?.reference.ok_or_else(|| format!("{role} {name:?} has no ref"))
}

/// The first line of `role` (any role when empty) whose name contains `name` (any case).
pub fn line_by(text: &str, role: &str, name: &str) -> Result<Line, String> {
    let n = name.to_lowercase();
    truth::parse(text)
        .into_iter()
        .find(|l| (role.is_empty() || l.role == role) && l.name.to_lowercase().contains(&n))
        .ok_or_else(|| format!("no {role} {name:?} in what was read"))
}

/// The `Add to cart` button under the product heading `product` (the shop lists each
/// product as a heading, its price, then a button of the same name for all).
pub fn button_under(text: &str, product: &str, button: &str) -> Result<String, String> {
    let mut under = false;
    for l in truth::parse(text) {
        if l.role == "heading" {
            under = l.name == product;
        } else if under && l.role == "button" && l.name == button {
            return l.reference.ok_or_else(|| format!("{button:?} under {product:?} has no ref"));
        }
    }
    Err(format!("no {button:?} under heading {product:?}"))
}

/// The first `$N` or `$N.NN` in `s`.
pub fn dollars(s: &str) -> Option<String> {
    let i = s.find('$')?;
    let n: String = s[i + 1..].chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
    let n = n.trim_end_matches('.');
    (!n.is_empty()).then(|| format!("${n}"))
}

/// The confirmation code in `s` (`NL-1234-5678`).
pub fn code_in(s: &str) -> Option<String> {
    let i = s.find("NL-")?;
    Some(s[i..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '-').collect())
}

impl Agent for PwAgent<'_> {
    fn take_tally(&mut self) -> Tally {
        std::mem::take(&mut self.tally)
    }

    async fn run(&mut self, task: &'static str) -> Result<String, String> {
        match task {
            "todo" => {
                let mut r = self.navigate("todo.html").await?;
                let s = self.read(&mut r)?;
                let entry = ref_by(&s, "textbox", "New todo")?;
                let mut s = String::new();
                for t in ["Buy milk", "Walk the dog"] {
                    let args = json!({"element": "New todo", "target": entry, "text": t, "submit": true});
                    s = self.act("browser_type", args).await?;
                }
                let cb = ref_by(&s, "checkbox", "Buy milk")?;
                let s = self.click(&cb).await?;
                let left = line_by(&s, "", "left")?.name;
                Ok(left.split_whitespace().next().unwrap_or("").to_string())
            }
            "signup" => {
                let mut r = self.navigate("signup.html").await?;
                let s = self.read(&mut r)?;
                let (name, email) = (ref_by(&s, "textbox", "Full name")?, ref_by(&s, "textbox", "Email")?);
                self.type_blind(&name, "Ada Lovelace").await?;
                self.type_blind(&email, "ada@example").await?;
                let s = self.click(&ref_by(&s, "button", "Next")?).await?;
                let refusal = line_by(&s, "alert", "")?.name;
                if refusal.is_empty() {
                    return Err("the invalid email was not refused".into());
                }
                let email = ref_by(&s, "textbox", "Email")?;
                let args = json!({"element": "Email", "target": email, "text": "ada@example.com"});
                self.act_blind("browser_type", args).await?;
                let s = self.click(&ref_by(&s, "button", "Next")?).await?;
                let plan = ref_by(&s, "combobox", "Plan")?;
                let args = json!({"element": "Plan", "target": plan, "values": ["Pro"]});
                self.act_blind("browser_select_option", args).await?;
                let terms = ref_by(&s, "checkbox", "terms")?;
                self.act_blind("browser_click", json!({"element": "terms", "target": terms})).await?;
                let s = self.click(&ref_by(&s, "button", "Finish")?).await?;
                line_by(&s, "heading", "Welcome")?;
                Ok(refusal)
            }
            "docs" => {
                // The page is 2,000 paragraphs: search it rather than read its snapshot.
                let r = self.navigate("docs.html").await?;
                self.skip(r);
                let found = self.call("browser_find", json!({"text": "Pricing"})).await?.text;
                // The heading's match shows the lines around it: the section's first
                // paragraphs.
                let mut after_heading = false;
                for l in found.lines() {
                    if l.contains("heading \"Pricing\"") {
                        after_heading = true;
                    } else if after_heading {
                        if let Some(d) = dollars(l) {
                            return Ok(d);
                        }
                        if l.contains("heading ") {
                            after_heading = false;
                        }
                    }
                }
                // Else search the amounts: the match shown beside the Pricing heading.
                let found = self.call("browser_find", json!({"text": "$"})).await?.text;
                for block in found.split("\n----\n").filter(|b| b.contains("heading \"Pricing\"")) {
                    let after = &block[block.find("heading \"Pricing\"").unwrap()..];
                    if let Some(d) = after.lines().skip(1).find_map(dollars) {
                        return Ok(d);
                    }
                }
                Err("no price near the Pricing heading".into())
            }
            "table" => {
                let r = self.navigate("table.html").await?;
                self.skip(r);
                let found = self.call("browser_find", json!({"text": "Filter"})).await?.text;
                let filter = ref_by(&found, "searchbox", "Filter")?;
                let want = tasks::product(tasks::values().row);
                let s = self.act("browser_type", json!({"element": "Filter", "target": filter, "text": want})).await?;
                // The row's cells, in order: product, SKU, stock.
                let lines = truth::parse(&s);
                let at = lines
                    .iter()
                    .position(|l| l.role == "cell" && l.name == want)
                    .ok_or_else(|| format!("no cell {want:?} in what was read"))?;
                lines.get(at + 2).map(|l| l.name.clone()).ok_or_else(|| format!("no stock after {want}"))
            }
            "settings" => {
                let mut r = self.navigate("settings.html").await?;
                let s = self.read(&mut r)?;
                let s = self.click(&ref_by(&s, "button", "Account")?).await?;
                let s = self.click(&ref_by(&s, "menuitem", "Settings")?).await?;
                let sw = ref_by(&s, "switch", "Email notifications")?;
                let s2 = self.click(&sw).await?;
                if !s2.lines().any(|l| l.contains("switch \"Email notifications\"") && l.contains("[checked]")) {
                    return Err("the switch did not turn on".into());
                }
                let s = self.click(&ref_by(&s, "button", "Save")?).await?;
                Ok(line_by(&s, "status", "")?.name)
            }
            "embed" => {
                let mut r = self.navigate("embed.html").await?;
                let s = self.read(&mut r)?;
                self.type_blind(&ref_by(&s, "textbox", "Your name")?, "Ada Lovelace").await?;
                self.type_blind(&ref_by(&s, "textbox", "Email")?, "ada@example.com").await?;
                let s = self.click(&ref_by(&s, "button", "Subscribe")?).await?;
                if let Some(c) = code_in(&s) {
                    return Ok(c);
                }
                let s = self.act("browser_wait_for", json!({"text": "confirmation code"})).await?;
                code_in(&s).ok_or_else(|| "no confirmation code shown".into())
            }
            "shop" => {
                let mut r = self.navigate("shop.html").await?;
                let mut s = self.read(&mut r)?;
                for p in ["Coffee mug", "Notebook"] {
                    s = self.click(&button_under(&s, p, "Add to cart")?).await?;
                }
                let q = ref_by(&s, "spinbutton", "Notebook")?;
                let s = self.act("browser_type", json!({"element": "Quantity", "target": q, "text": "3"})).await?;
                dollars(&line_by(&s, "", "Total")?.name).ok_or_else(|| "no total".into())
            }
            "banner" => {
                let mut r = self.navigate("banner.html").await?;
                let s = self.read(&mut r)?;
                // The consent dialog covers the page: answer it first.
                line_by(&s, "dialog", "cookie")?;
                let s = self.click(&ref_by(&s, "button", "Reject all")?).await?;
                let s = self.click(&ref_by(&s, "button", "Get the report")?).await?;
                Ok(line_by(&s, "", "report is ready")?.name)
            }
            _ => Err(format!("no policy for {task}")),
        }
    }
}
