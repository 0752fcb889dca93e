//! Text output for people (`--json` prints the sidecar's answer instead).

use serde_json::{json, Value};
use sidecar::automation::a_or_an;

use crate::cli::{BrowserCmd, Cmd};

/// `ph workspace new`: `workspace 2 "api" t7`, or for a remote pane (no handle: its
/// terminal is the remote's) `workspace 2 "box" on box: remote pane (no handle)`.
fn workspace(v: &Value) -> String {
    let n = v["workspace"].as_u64().map_or_else(|| "?".to_string(), |n| n.to_string());
    let name = v["name"].as_str().map(|n| format!(" {n:?}")).unwrap_or_default();
    match (v["pane"].as_str(), v["host"].as_str()) {
        (Some(h), _) => format!("workspace {n}{name} {h}\n"),
        (None, Some(host)) => format!("workspace {n}{name} on {host}: remote pane (no handle)\n"),
        (None, None) => format!("workspace {n}{name}\n"),
    }
}

/// The text for a successful answer to `cmd` (ends with a newline unless empty).
pub fn text(cmd: &Cmd, v: &Value) -> String {
    let s = |k: &str| v[k].as_str().unwrap_or("").to_string();
    match cmd {
        Cmd::List { ports } => list(v, *ports),
        Cmd::Split { .. } => format!("{}\n", s("handle")),
        Cmd::Ensure { .. } => {
            let how = if v["reused"].as_bool() == Some(true) { "reused" } else { "new" };
            format!("{} ({how})\n", s("handle"))
        }
        Cmd::Open { .. } => match v["handle"].as_str() {
            Some(h) => {
                let reused = if v["reused"].as_bool() == Some(true) { ", reused" } else { "" };
                format!("{h} {} ({}{reused})\n", s("url"), s("mode"))
            }
            None => format!("{} (system browser)\n", s("url")),
        },
        Cmd::Read { .. } => {
            let lines: Vec<&str> = v["lines"].as_array().into_iter().flatten().filter_map(|l| l.as_str()).collect();
            if lines.is_empty() {
                String::new()
            } else {
                format!("{}\n", lines.join("\n"))
            }
        }
        Cmd::Wait { .. } => match v["until"].as_str() {
            Some("exit") => format!("exited {}\n", v["exit_code"]),
            Some("text") => format!("{}\n", s("line")),
            _ => String::new(),
        },
        Cmd::Ports { .. } => ports_table(&v["ports"]),
        Cmd::Browser { cmd, .. } => browser(cmd, v),
        Cmd::Workspace { .. } => workspace(v),
        Cmd::Up { .. } => up(v),
        _ => String::new(),
    }
}

/// `ph up`'s text: the layout and file, then one line per pane: reused or started.
fn up(v: &Value) -> String {
    let mut out = format!("layout {} of {}\n", v["layout"].as_str().unwrap_or("?"), v["file"].as_str().unwrap_or("?"));
    let how = |p: &Value| if p["reused"].as_bool() == Some(true) { "reused " } else { "started" };
    for p in v["panes"].as_array().into_iter().flatten() {
        let cmd: Vec<&str> = p["command"].as_array().into_iter().flatten().filter_map(|a| a.as_str()).collect();
        let cmd = match cmd.as_slice() {
            ["/bin/sh", "-c", line] => line.to_string(),
            argv => argv.join(" "),
        };
        out.push_str(&format!(
            "{} {:<4} {cmd} (in {})\n",
            how(p),
            p["handle"].as_str().unwrap_or("?"),
            p["cwd"].as_str().unwrap_or("?")
        ));
    }
    for b in v["browsers"].as_array().into_iter().flatten() {
        let waiting = if b["listening"].as_bool() == Some(false) { ", not listening yet" } else { "" };
        out.push_str(&format!(
            "{} {:<4} {} ({}{waiting})\n",
            how(b),
            b["handle"].as_str().unwrap_or("-"),
            b["url"].as_str().unwrap_or("?"),
            b["mode"].as_str().unwrap_or("?")
        ));
    }
    out
}

/// `ph browser policy`'s text: one `key = value` line per `[agent.sealed]` key, then
/// whether the master switch is in effect and why.
fn policy(p: &Value) -> String {
    let mut out = String::from("[agent.sealed] (read-only for agents; the human sets it in Settings → Agent access)\n");
    for (k, v) in p.as_object().into_iter().flatten() {
        if k != "effective_enabled" && k != "env" {
            out.push_str(&format!("{k} = {v}\n"));
        }
    }
    let env = &p["env"]["switch"]["state"];
    out.push_str(&format!(
        "in effect: {} ({} {})\n",
        if p["effective_enabled"] == true { "on" } else { "off" },
        p["env"]["name"].as_str().unwrap_or(""),
        env.as_str().unwrap_or("unset")
    ));
    out
}

/// `ph browser focus-walk`'s text: one line per step (`1 button "Go" @ (x, y) [sealed=s4]`,
/// `[outside the host]` past it), then why it stopped and whether focus was put back.
fn focus_walk(v: &Value) -> String {
    let mut out = String::new();
    for st in v["steps"].as_array().into_iter().flatten() {
        out.push_str(&format!("{} {} {}", st["index"], st["role"].as_str().unwrap_or("?"), st["name"]));
        if let Some(r) = st["rect"].as_object() {
            let c = |k: &str| r.get(k).and_then(Value::as_f64).unwrap_or(0.0);
            out.push_str(&format!(" @ ({:.0}, {:.0})", c("x") + c("width") / 2.0, c("y") + c("height") / 2.0));
        }
        match st["token"].as_str() {
            Some(t) => out.push_str(&format!(" [sealed={t}]")),
            None if st["in_host"] != true => out.push_str(" [outside the host]"),
            None => {}
        }
        out.push('\n');
    }
    let why = match v["stopped"].as_str().unwrap_or("") {
        "limit" => "stopped at the step limit; focus is on the last step".to_string(),
        "left_host" => "focus left the host after the last step inside it".to_string(),
        "not_entered" if v["restored"] == true => "focus never entered the host; it was put back".to_string(),
        "not_entered" => "focus never entered the host".to_string(),
        "dialog" => "a dialog opened; the walk stopped".to_string(),
        other => format!("stopped: {other}"),
    };
    out.push_str(&format!("[{why}]\n"));
    out
}

/// `ph browser`'s text: the handle for `open`, the outline with its header for `snapshot`,
/// one line saying what was done for actions (and a dialog an action opened), then what the
/// action observably caused ([`evidence`]).
fn browser(cmd: &BrowserCmd, v: &Value) -> String {
    let mut out = browser_answer(cmd, v);
    if v["evidence"].is_object() {
        out.push_str(&evidence(&v["evidence"]));
    }
    if let Some(h) = v["hint"].as_str() {
        out.push_str(&format!("[hint: {h}]\n"));
    }
    out
}

/// An action's evidence (protocol §9.7 "Evidence"), one `→ ` line per thing it caused, or
/// `→ nothing changed …` when it caused none.
fn evidence(e: &Value) -> String {
    if e["nothing"] == true {
        return "→ nothing changed (no navigation, tab, download, focus move, state change, page or frame change)\n"
            .into();
    }
    let mut out = String::new();
    if e["navigation"].is_object() {
        match e["navigation"]["to"].as_str() {
            Some(to) => out.push_str(&format!("→ navigation to {to}\n")),
            None => out.push_str("→ a navigation started\n"),
        }
    }
    for t in e["tabs"].as_array().into_iter().flatten() {
        out.push_str(&format!("→ new tab {} ({})\n", t["tab"], t["url"].as_str().unwrap_or("")));
    }
    if e["download"].is_object() {
        out.push_str(&format!("→ download started: {} (ph browser downloads)\n", e["download"]["name"]));
    }
    if let Some(f) = e.get("focus") {
        match f.as_str() {
            Some(f) => out.push_str(&format!("→ focus moved to {f}\n")),
            None => out.push_str("→ focus left the element (now on the page)\n"),
        }
    }
    match &e["element"] {
        Value::String(s) if s == "removed" => out.push_str("→ the element left the page\n"),
        Value::Object(m) => {
            let parts: Vec<String> = m
                .iter()
                .map(|(k, v)| match v {
                    Value::Array(p) if p.len() == 2 => format!("{k} {} → {}", p[0], p[1]),
                    v => format!("{k} {}", v.as_str().unwrap_or("changed").trim_matches(['[', ']'])),
                })
                .collect();
            out.push_str(&format!("→ element: {}\n", parts.join(", ")));
        }
        _ => {}
    }
    if e["page"].is_object() {
        out.push_str(&format!("→ page: {}\n", counted(&e["page"])));
    }
    for f in e["frames"].as_array().into_iter().flatten() {
        let url = f["url"].as_str().unwrap_or("");
        let what = if f["navigated"] == true {
            "a new document".to_string()
        } else if f["navigating"] == true {
            "began to navigate".to_string()
        } else if f["appeared"] == true {
            "appeared".to_string()
        } else if f["gone"] == true {
            "went away".to_string()
        } else {
            counted(f)
        };
        out.push_str(&format!("→ frame {url}: {what}\n"));
    }
    out
}

/// A document's counts in an action's evidence: `3 nodes added, 0 removed`, then `, 2 changed
/// (class, hidden)` when attributes or text changed.
fn counted(c: &Value) -> String {
    let mut s = format!("{} nodes added, {} removed", c["added"], c["removed"]);
    if c["changed"].as_u64().unwrap_or(0) > 0 {
        s.push_str(&format!(", {} changed", c["changed"]));
        let kinds: Vec<&str> = c["kinds"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
        if !kinds.is_empty() {
            s.push_str(&format!(" ({})", kinds.join(", ")));
        }
    }
    s
}

fn browser_answer(cmd: &BrowserCmd, v: &Value) -> String {
    let s = |k: &str| v[k].as_str().unwrap_or("").to_string();
    let dialog = |d: &Value| format!("{} {}", d["kind"].as_str().unwrap_or("?"), d["message"]);
    // "an alert dialog", "a confirm dialog".
    let a_dialog = |d: &Value| format!("{} {} dialog", a_or_an(d["kind"].as_str().unwrap_or("?")), dialog(d));
    let opened =
        if v["dialog"].is_object() { format!("; it opened {}\n", a_dialog(&v["dialog"])) } else { "\n".into() };
    match cmd {
        BrowserCmd::Open { .. } => format!("{}\n", s("handle")),
        BrowserCmd::Snapshot { interactive, target, query, .. } => {
            let d =
                if v["dialog"].is_object() { format!("dialog: {}", dialog(&v["dialog"])) } else { "no dialog".into() };
            let mut out = format!("page {} {} · tab {}/{} · {d}\n", s("url"), v["title"], v["tab_index"], v["tabs"]);
            let diff = &v["diff"];
            if diff["text"].is_string() {
                out.push_str(&format!(
                    "[diff since your last snapshot of this document: {} added, {} removed, {} changed]\n",
                    diff["added"], diff["removed"], diff["changed"]
                ));
                if diff["text"] == "" {
                    out.push_str("(nothing changed)\n");
                }
            } else if diff.is_object() {
                out.push_str("[no earlier snapshot of this document by you: the whole outline]\n");
            }
            if let Some(n) = v["matched"].as_u64() {
                out.push_str(&format!("[query: {n} lines match]\n"));
            }
            out.push_str(&s("text"));
            if v["sealed_hosts"].as_u64().unwrap_or(0) > 0 || v["sealed"].is_object() {
                let p = &v["policy"];
                let on = |k: &str| if p[k] == true { "on" } else { "off" };
                out.push_str(&format!(
                    "[sealed policy: {}; discovery {}, focus-walk {}, signatures {}, force-open {} (ph browser policy)]\n",
                    on("effective_enabled"),
                    on("discovery"),
                    on("focus_walk"),
                    on("signatures"),
                    on("force_open")
                ));
            }
            if v["cut"].is_object() {
                // Only what this call did not use already narrows the next one.
                let mut narrower = Vec::new();
                if !interactive {
                    narrower.push("-i");
                }
                if query.is_none() {
                    narrower.push("--query Q");
                }
                if target.is_none() {
                    narrower.push("--ref R");
                }
                narrower.push("--max-bytes");
                let go_on = match v["cut"]["cursor"].as_str() {
                    Some(c) => format!("continue with --from {c} (same options), or "),
                    None => String::new(),
                };
                out.push_str(&format!(
                    "[cut: {} more lines ({} refs): {}; {go_on}use {}]\n",
                    v["cut"]["lines"],
                    v["cut"]["refs"],
                    v["cut"]["reason"].as_str().unwrap_or(""),
                    or_list(&narrower)
                ));
            }
            out
        }
        BrowserCmd::Type { .. } if v["navigated"] == true => {
            format!("type {}: the last key began a navigation{opened}", s("ref"))
        }
        BrowserCmd::Fill { .. } | BrowserCmd::Type { .. } if v["verified"].is_string() => {
            format!("{} {}: {} ({} characters){opened}", s("action"), s("ref"), s("verified"), v["length"])
        }
        BrowserCmd::Fill { .. } | BrowserCmd::Type { .. } => match (v.get("value"), v.get("length")) {
            (Some(val), _) => format!("{} {}: {val}{opened}", s("action"), s("ref")),
            (None, Some(n)) => format!("{} {}: {n} characters{opened}", s("action"), s("ref")),
            _ => format!("{} {}{opened}", s("action"), s("ref")),
        },
        BrowserCmd::Check { .. } | BrowserCmd::Uncheck { .. } if v["changed"] == false => {
            format!("{} was already {}ed\n", s("ref"), s("action"))
        }
        BrowserCmd::Press { key, .. } => format!("pressed {key}{opened}"),
        BrowserCmd::Click { .. }
        | BrowserCmd::Dblclick { .. }
        | BrowserCmd::Hover { .. }
        | BrowserCmd::Focus { .. }
        | BrowserCmd::Check { .. }
        | BrowserCmd::Uncheck { .. } => format!("{} {}{opened}", s("action"), s("ref")),
        BrowserCmd::Find { .. } => s("text"),
        BrowserCmd::Text { target, .. } => {
            let mut out = s("text");
            if v["cut"].is_object() {
                let narrower = if target.is_none() { "--ref R or --max-bytes" } else { "--max-bytes" };
                out.push_str(&format!(
                    "[cut: {} more bytes ({} of them navigation, header, footer or aside): {}; use {narrower}]\n",
                    v["cut"]["bytes"],
                    v["cut"]["furniture_bytes"],
                    v["cut"]["reason"].as_str().unwrap_or("")
                ));
            }
            out
        }
        BrowserCmd::Get { .. } => {
            format!("{}\n", v.get("text").or(v.get("value")).and_then(Value::as_str).unwrap_or(""))
        }
        BrowserCmd::Wait { .. } if v["event"].is_object() => events(&json!({"events": [v["event"]]})),
        BrowserCmd::Wait { .. } => format!("ok after {} ms\n", v["waited_ms"]),
        BrowserCmd::Select { .. } => {
            let shown = match v["labels"].as_array() {
                Some(all) => all.iter().map(Value::to_string).collect::<Vec<_>>().join(", "),
                None => v["label"].to_string(),
            };
            if v["changed"] == false {
                format!("{} already shows {shown}\n", s("ref"))
            } else {
                format!("select {}: {shown}{opened}", s("ref"))
            }
        }
        BrowserCmd::Set { .. } => {
            let how = if v["scripted"] == true { " (set as its picker does: it takes no keys)" } else { "" };
            format!("set {}: {}{how}{opened}", s("ref"), v["value"])
        }
        BrowserCmd::Scroll { .. } => format!(
            "scrolled {} px at ({}, {})\n",
            v["delta"].as_f64().unwrap_or(0.0).round(),
            v["point"]["x"].as_f64().unwrap_or(0.0).round(),
            v["point"]["y"].as_f64().unwrap_or(0.0).round()
        ),
        BrowserCmd::ScrollTo { .. } => {
            let n = |k: &str| v["rect"][k].as_f64().unwrap_or(0.0).round();
            format!("{} visible at x {} y {}, {}×{}\n", s("ref"), n("x"), n("y"), n("width"), n("height"))
        }
        BrowserCmd::Upload { .. } => match v["files"].as_array() {
            Some(files) => {
                let names: Vec<String> = files.iter().map(|f| f["name"].to_string()).collect();
                format!("upload {}: {}{opened}", s("ref"), names.join(", "))
            }
            None => format!("upload {}{opened}", s("ref")),
        },
        BrowserCmd::Drag { .. } => match v["kind"].as_str() {
            Some(kind) => format!("drag {} to {} ({kind}){opened}", s("ref"), s("target")),
            None => format!("drag {} to {}{opened}", s("ref"), s("target")),
        },
        BrowserCmd::Viewport { .. } => match v["viewport"].as_object() {
            Some(m) => format!("viewport {}×{} @{}\n", m["width"], m["height"], m["dpr"]),
            None => "viewport set (not measured)\n".into(),
        },
        BrowserCmd::Tabs { .. } => {
            let mut out = String::new();
            for (i, t) in v["tabs"].as_array().into_iter().flatten().enumerate() {
                let mark = if t["id"] == v["active"] { "*" } else { " " };
                out.push_str(&format!(
                    "{mark} {} {} {} {}\n",
                    i + 1,
                    t["id"].as_str().unwrap_or(""),
                    t["url"].as_str().unwrap_or(""),
                    t["title"]
                ));
            }
            if v["dialog"].is_object() {
                out.push_str(&format!("dialog: {}\n", dialog(&v["dialog"])));
            }
            out
        }
        BrowserCmd::Dialog { .. } => {
            let how = if v["accepted"] == true { "accepted" } else { "dismissed" };
            format!("{how} {}\n", dialog(&v["dialog"]))
        }
        BrowserCmd::Eval { .. } => format!("{}\n", v["value"]),
        BrowserCmd::Policy => policy(&v["policy"]),
        BrowserCmd::Stats => {
            let c = &v["counts"];
            format!(
                "tab {}: ax reads {}, pierce reads {}, sealed scans {}, cache hits {}, focus-walk steps {}\n",
                s("tab"),
                c["ax_reads"],
                c["pierce_reads"],
                c["sealed_scans"],
                c["cache_hits"],
                c["focus_walk_steps"]
            )
        }
        BrowserCmd::FocusWalk { .. } => focus_walk(v),
        BrowserCmd::Handoff { .. } => {
            let changed: Vec<&str> = v["changed"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
            let url = v["after"]["url"].as_str().unwrap_or("");
            match changed.is_empty() {
                true => format!("handed back; nothing changed ({url})\n"),
                false => format!("handed back; changed: {} (now {url} {})\n", changed.join(", "), v["after"]["title"]),
            }
        }
        BrowserCmd::Console { .. } => console(v),
        BrowserCmd::Network { id: Some(_), .. } => request(v),
        BrowserCmd::Route { .. } => routes(v),
        BrowserCmd::Offline { .. } => match v["offline"] == true {
            true => "offline: the tab's requests fail\n".into(),
            false => "online\n".into(),
        },
        BrowserCmd::Network { .. } => network(v),
        BrowserCmd::Events { .. } => events(v),
        BrowserCmd::Downloads => downloads(v),
        BrowserCmd::Navigate { .. } | BrowserCmd::Back | BrowserCmd::Forward | BrowserCmd::Reload => {
            match v["dialog"].is_object() {
                true => format!("the page opened {} instead of leaving\n", a_dialog(&v["dialog"])),
                false => String::new(),
            }
        }
        BrowserCmd::Screenshot { .. } => String::new(),
    }
}

/// One line per console entry: `LEVEL text (url:line)`, after a line saying how many older
/// entries were dropped, if any.
fn console(v: &Value) -> String {
    let mut out = dropped(v);
    for e in v["entries"].as_array().into_iter().flatten() {
        let place = match (e["url"].as_str(), e["line"].as_i64()) {
            (Some(u), Some(l)) => format!(" ({u}:{l})"),
            (Some(u), None) => format!(" ({u})"),
            _ => String::new(),
        };
        out.push_str(&format!(
            "{:<7} {}{place}\n",
            e["level"].as_str().unwrap_or(""),
            e["text"].as_str().unwrap_or("")
        ));
    }
    out
}

/// One line per request: `[N] METHOD STATUS URL (type)`, N its number for `--id`, STATUS the
/// HTTP status, `failed <error>` or `…` while waiting.
fn network(v: &Value) -> String {
    let mut out = dropped(v);
    for r in v["requests"].as_array().into_iter().flatten() {
        out.push_str(&format!("[{}] ", r["n"].as_u64().unwrap_or(0)));
        let status = match (r["error"].as_str(), r["status"].as_i64()) {
            (Some(e), _) => format!("failed {e}"),
            (None, Some(s)) => s.to_string(),
            _ => "…".into(),
        };
        let kind = r["kind"].as_str().filter(|k| !k.is_empty()).map(|k| format!(" ({k})")).unwrap_or_default();
        out.push_str(&format!(
            "{} {status} {}{kind}\n",
            r["method"].as_str().unwrap_or(""),
            r["url"].as_str().unwrap_or("")
        ));
    }
    out
}

/// The tab's routes, one a line: `PATTERN → 500 (19 bytes), 2 hits` or `PATTERN → abort`.
fn routes(v: &Value) -> String {
    let mut out = String::new();
    if let Some(n) = v["removed"].as_u64() {
        out.push_str(&format!("removed {n}\n"));
    }
    let list = v["routes"].as_array().cloned().unwrap_or_default();
    if list.is_empty() {
        out.push_str("no routes\n");
    }
    for r in list {
        let a = &r["answer"];
        let what = match a["kind"].as_str() {
            Some("fulfill") => format!("{} ({} bytes)", a["status"], a["bytes"]),
            _ => "abort".into(),
        };
        let hits = r["hits"].as_u64().unwrap_or(0);
        out.push_str(&format!(
            "{} → {what}, {hits} hit{}\n",
            r["pattern"].as_str().unwrap_or(""),
            if hits == 1 { "" } else { "s" }
        ));
    }
    if v["offline"] == true {
        out.push_str("(offline: every request fails)\n");
    }
    out
}

/// One request in full (`network --id N`): the request line, status, timing, headers and
/// bodies, as an HTTP exchange reads.
fn request(v: &Value) -> String {
    let s = |k: &str| v[k].as_str().unwrap_or("").to_string();
    let mut out = format!(
        "[{}] {} {} ({})
",
        v["n"],
        s("method"),
        s("url"),
        s("kind")
    );
    match (v["error"].as_str(), v["status"].as_i64()) {
        (Some(e), _) => out.push_str(&format!(
            "failed {e}
"
        )),
        (None, Some(st)) => out.push_str(&format!(
            "{st} {} {} {}
",
            s("status_text"),
            s("protocol"),
            s("mime")
        )),
        _ => out.push_str(
            "no response yet
",
        ),
    }
    let t = &v["timing"];
    if let Some(total) = t["total_ms"].as_f64() {
        let phase = |k: &str| t[k].as_f64().filter(|x| *x >= 0.0).map(|x| format!(" {k} {x:.1}"));
        let phases: String = ["blocked", "dns", "connect", "ssl", "send", "wait", "receive"]
            .iter()
            .filter_map(|k| phase(k))
            .collect::<Vec<_>>()
            .join(",");
        out.push_str(&format!(
            "time {total:.1} ms ({}){}
",
            phases.trim_start(),
            match v["encoded_bytes"].as_f64() {
                Some(b) => format!(", {b} bytes on the wire"),
                None => String::new(),
            }
        ));
    }
    for (title, key, body) in
        [("request", "request_headers", "request_body"), ("response", "response_headers", "response_body")]
    {
        out.push_str(&format!("-- {title} headers\n"));
        for h in v[key].as_array().into_iter().flatten() {
            out.push_str(&format!("{}: {}\n", h["name"].as_str().unwrap_or(""), h["value"].as_str().unwrap_or("")));
        }
        let b = &v[body];
        if b.is_null() {
            continue;
        }
        let size = b["bytes"].as_u64().map(|n| format!(", {n} bytes")).unwrap_or_default();
        let cut = if b["truncated"] == true { ", cut" } else { "" };
        let redacted =
            b["redacted_fields"].as_u64().map(|n| format!(", {n} secret fields redacted")).unwrap_or_default();
        match (b["text"].as_str(), b["base64"].as_str(), b["withheld"].as_str(), b["unavailable"].as_str()) {
            (Some(t), ..) => out.push_str(&format!("-- {title} body (text{size}{cut}{redacted})\n{t}\n")),
            (_, Some(b64), ..) => out.push_str(&format!("-- {title} body (base64{size}{cut})\n{b64}\n")),
            (_, _, Some(w), _) => out.push_str(&format!("-- {title} body withheld: {w}\n")),
            (_, _, _, Some(u)) => out.push_str(&format!("-- {title} body unavailable: {u}\n")),
            _ => {}
        }
    }
    if let Some(n) = v["redacted"].as_u64().filter(|n| *n > 0) {
        out.push_str(&format!(
            "({n} secret values shown as [redacted]; only the human's [agent] show_secrets shows credentials)\n"
        ));
    }
    out
}

/// One line per event, `SEQ KIND DETAIL`, after a line naming a dropped range, if any.
pub fn events(v: &Value) -> String {
    let mut out = String::new();
    if let (Some(a), Some(b)) = (v["dropped"]["first"].as_u64(), v["dropped"]["last"].as_u64()) {
        out.push_str(&format!(
            "(events {a}..{b} were dropped: only the last {} are kept)\n",
            sidecar::automation::MAX_EVENTS
        ));
    }
    for e in v["events"].as_array().into_iter().flatten() {
        out.push_str(&format!(
            "{} {} {}\n",
            e["seq"],
            e["kind"].as_str().unwrap_or(""),
            e["detail"].as_str().unwrap_or("")
        ));
    }
    out
}

/// One line per download: `NAME STATE BYTES[/TOTAL] [PATH|ERROR]`.
fn downloads(v: &Value) -> String {
    let list = v["downloads"].as_array().map(Vec::as_slice).unwrap_or_default();
    if list.is_empty() {
        return "no downloads\n".into();
    }
    let mut out = String::new();
    for d in list {
        let bytes = match d["total"].as_u64() {
            Some(t) if t > 0 => format!("{}/{t}", d["received"]),
            _ => d["received"].to_string(),
        };
        let tail = d["path"].as_str().or(d["error"].as_str()).unwrap_or("");
        out.push_str(&format!(
            "{} {} {bytes} bytes {tail}\n",
            d["name"].as_str().unwrap_or(""),
            d["state"].as_str().unwrap_or("")
        ));
    }
    out
}

fn dropped(v: &Value) -> String {
    match v["dropped"].as_u64() {
        Some(n) if n > 0 => format!("({n} older entries dropped)\n"),
        _ => String::new(),
    }
}

/// `a, b or c`.
fn or_list(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => one.to_string(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

/// The ports as a table whose columns are as wide as their widest cell (header included).
fn ports_table(ports: &Value) -> String {
    let rows = ports.as_array().cloned().unwrap_or_default();
    if rows.is_empty() {
        return "no listening ports\n".into();
    }
    // A JSON number's `Display` ignores width and fill: cells are made strings first.
    let cell = |v: &Value| match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    };
    let mut table = vec![["PORT", "ADDRESS", "PID", "PROCESS"].map(String::from)];
    table.extend(rows.iter().map(|p| [cell(&p["port"]), cell(&p["address"]), cell(&p["pid"]), cell(&p["process"])]));
    columns(&table)
}

/// Rows of cells as lines, each column but the last padded to its widest cell plus two
/// spaces, trailing blanks trimmed.
fn columns<const N: usize>(rows: &[[String; N]]) -> String {
    let widths: Vec<usize> =
        (0..N.saturating_sub(1)).map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0)).collect();
    let mut out = String::new();
    for r in rows {
        let mut line = String::new();
        for (c, w) in widths.iter().enumerate() {
            line.push_str(&format!("{:<w$}  ", r[c], w = *w));
        }
        if let Some(last) = r.last() {
            line.push_str(last);
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// Shortens `s` to at most `n` characters, marking the cut with `…`.
fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

/// `path` with the home directory written `~`.
fn tilde(path: &str) -> String {
    match std::env::var("HOME") {
        Ok(home) if !home.is_empty() && home != "/" => match path.strip_prefix(&home) {
            Some("") => "~".into(),
            Some(rest) if rest.starts_with('/') => format!("~{rest}"),
            _ => path.to_string(),
        },
        _ => path.to_string(),
    }
}

fn list(v: &Value, with_ports: bool) -> String {
    let panes = v["panes"].as_array().cloned().unwrap_or_default();
    // Which workspace a pane is in only tells something when the window has several.
    let workspaces: std::collections::BTreeSet<u64> = panes.iter().filter_map(|p| p["workspace"].as_u64()).collect();
    let mut rows: Vec<[String; 5]> = vec![["HANDLE", "KIND", "TITLE", "WHERE", "STATE"].map(String::from)];
    for p in panes {
        let kind = match (p["kind"].as_str(), p["mode"].as_str()) {
            (Some("browser"), Some(m)) => m.to_string(),
            (Some(k), _) => k.to_string(),
            _ => String::new(),
        };
        let place = match (p["url"].as_str(), p["cwd"].as_str()) {
            (Some(u), _) => u.to_string(),
            (None, Some(c)) => tilde(c),
            _ => String::new(),
        };
        let mut state = Vec::new();
        if p["focused"].as_bool() == Some(true) {
            state.push("focused".to_string());
        }
        if p["minimized"].as_bool() == Some(true) {
            state.push("minimized".to_string());
        }
        if let (true, Some(w)) = (workspaces.len() > 1, p["workspace"].as_u64()) {
            state.push(format!("workspace {w}"));
        }
        if p["shown"].as_bool() == Some(false) {
            state.push("not shown".to_string());
        }
        if let Some(code) = p["exit_code"].as_i64() {
            state.push(format!("exited {code}"));
        }
        if v["caller"].is_string() && v["caller"] == p["handle"] {
            state.push("self".to_string());
        }
        if let Some(d) = p["driver"].as_str() {
            state.push(format!("driven by {d}"));
        }
        if with_ports && p["kind"] == "terminal" {
            let ports: std::collections::BTreeSet<String> = p["ports"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|r| r["port"].as_u64())
                .map(|n| format!(":{n}"))
                .collect();
            state.push(if p["ports"].is_null() {
                "ports ?".into()
            } else {
                ports.into_iter().collect::<Vec<_>>().join(" ")
            });
        }
        state.retain(|s| !s.is_empty());
        rows.push([
            p["handle"].as_str().unwrap_or("").to_string(),
            kind,
            clip(p["title"].as_str().unwrap_or(""), 24),
            clip(&place, 48),
            state.join(", "),
        ]);
    }
    let mut out = String::new();
    if v["window"].as_bool() == Some(false) {
        out.push_str("(no window attached: the panes last reported)\n");
    }
    // Columns as wide as their widest cell, so the table fits narrow panes when it can.
    out.push_str(&columns(&rows));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn list_shows_handles_places_and_states() {
        let v = json!({"window": true, "caller": "t1", "panes": [
            {"handle":"t1","kind":"terminal","title":"bash","cwd":"/home/me","url":null,"mode":null,"minimized":false,"focused":true,"exit_code":null,"shown":true,"ports":[{"port":8000},{"port":8000}]},
            {"handle":"b1","kind":"browser","title":"Directory listing for /","cwd":null,"url":"http://localhost:8000/","mode":"iframe","minimized":true,"focused":false,"exit_code":null,"shown":true},
        ]});
        let t = list(&v, true);
        let lines: Vec<&str> = t.lines().collect();
        assert!(lines[0].starts_with("HANDLE  KIND      TITLE"), "{t}");
        assert!(lines[1].starts_with("t1      terminal  bash"), "{t}");
        assert!(lines[1].contains("/home/me") && lines[1].ends_with("focused, self, :8000"), "{t}");
        let b = lines[2];
        assert!(b.contains("iframe") && b.contains("http://localhost:8000/") && b.ends_with("minimized"), "{t}");
        assert!(b.contains("Directory listing for /"), "{t}");
        assert!(lines.iter().all(|l| l.chars().count() < 90), "compact: {t}");
    }

    #[test]
    fn the_ports_header_lines_up_with_its_rows() {
        let v = json!([
            {"port": 8000, "address": "127.0.0.1", "pid": 4242, "process": "python3"},
            {"port": 5173, "address": "::1", "pid": 77, "process": "node"},
        ]);
        let t = ports_table(&v);
        let lines: Vec<&str> = t.lines().collect();
        for name in ["ADDRESS", "PID", "PROCESS"] {
            let col = lines[0].find(name).unwrap();
            for row in &lines[1..] {
                assert!(col == 0 || row.as_bytes()[col - 1] == b' ', "{name} starts its column: {t}");
                assert_ne!(row.as_bytes()[col], b' ', "{name} starts its column: {t}");
            }
        }
        assert!(lines[1].starts_with("8000  127.0.0.1  4242  python3"), "{t}");
    }

    #[test]
    fn evidence_prints_page_changes_and_each_frame_that_changed() {
        let e = json!({"page": {"added": 3, "removed": 0, "changed": 0}, "nothing": false});
        assert_eq!(evidence(&e), "→ page: 3 nodes added, 0 removed\n");
        let e = json!({"page": {"added": 0, "removed": 0, "changed": 2, "kinds": ["class", "hidden"]},
            "frames": [{"url": "http://localhost:1/done.html", "navigated": true},
                       {"url": "http://localhost:1/a.html", "added": 1, "removed": 2, "changed": 1, "kinds": ["text"]},
                       {"url": "about:blank", "appeared": true}, {"url": "http://x/", "gone": true},
                       {"url": "http://y/", "navigating": true}],
            "nothing": false});
        assert_eq!(
            evidence(&e),
            "→ page: 0 nodes added, 0 removed, 2 changed (class, hidden)\n\
             → frame http://localhost:1/done.html: a new document\n\
             → frame http://localhost:1/a.html: 1 nodes added, 2 removed, 1 changed (text)\n\
             → frame about:blank: appeared\n\
             → frame http://x/: went away\n\
             → frame http://y/: began to navigate\n"
        );
        assert!(evidence(&json!({"nothing": true})).starts_with("→ nothing changed"));
    }

    fn snapshot_cmd(interactive: bool, target: Option<&str>) -> Cmd {
        Cmd::Browser {
            pane: None,
            cmd: BrowserCmd::Snapshot {
                interactive,
                target: target.map(str::to_string),
                max_bytes: None,
                sealed: false,
                from: None,
                query: None,
                diff: false,
            },
        }
    }

    #[test]
    fn a_page_with_closed_hosts_shows_the_policy_agents_work_under() {
        let mut v = json!({"url": "http://x/", "title": "x", "tab_index": 1, "tabs": 1,
            "text": "- x-login [closed shadow root] [ref=e1]\n", "sealed_hosts": 1,
            "policy": {"effective_enabled": true, "discovery": true, "focus_walk": false, "signatures": true, "force_open": false}});
        let t = text(&snapshot_cmd(false, None), &v);
        assert!(
            t.contains(
                "[sealed policy: on; discovery on, focus-walk off, signatures on, force-open off (ph browser policy)]"
            ),
            "{t}"
        );
        v["sealed_hosts"] = 0.into();
        assert!(!text(&snapshot_cmd(false, None), &v).contains("sealed policy"), "no closed host, no line");
    }

    #[test]
    fn the_cut_note_offers_only_what_was_not_used() {
        let v = json!({"url": "http://x/", "title": "x", "tab_index": 1, "tabs": 1, "text": "- button \"A\"\n",
            "cut": {"lines": 40, "refs": 12, "reason": "the byte budget", "cursor": "0a1b2c3d.40"}});
        let full = text(&snapshot_cmd(false, None), &v);
        assert!(
            full.ends_with(
                "continue with --from 0a1b2c3d.40 (same options), or use -i, --query Q, --ref R or --max-bytes]\n"
            ),
            "{full}"
        );
        let i = text(&snapshot_cmd(true, None), &v);
        assert!(!i.contains("-i"), "-i was given: {i}");
        assert!(i.ends_with("use --query Q, --ref R or --max-bytes]\n"), "{i}");
        let both = text(&snapshot_cmd(true, Some("e3")), &v);
        assert!(both.ends_with("use --query Q or --max-bytes]\n"), "{both}");
    }

    #[test]
    fn diff_query_and_text_say_what_they_show() {
        let mut v = json!({"url": "http://x/", "title": "x", "tab_index": 1, "tabs": 1, "text": "",
            "diff": {"text": "", "added": 0, "removed": 0, "changed": 0}});
        let t = text(&snapshot_cmd(false, None), &v);
        assert!(
            t.ends_with(
                "[diff since your last snapshot of this document: 0 added, 0 removed, 0 changed]\n(nothing changed)\n"
            ),
            "{t}"
        );
        v["diff"] = json!({"earlier": false});
        v["matched"] = 3.into();
        let t = text(&snapshot_cmd(false, None), &v);
        assert!(
            t.contains("[no earlier snapshot of this document by you: the whole outline]\n[query: 3 lines match]\n"),
            "{t}"
        );
        let cmd = Cmd::Browser { pane: None, cmd: BrowserCmd::Text { target: None, max_bytes: None } };
        let v = json!({"text": "# A\n", "cut": {"bytes": 900, "furniture_bytes": 300, "reason": "the text is over the 1024-byte budget"}});
        assert_eq!(
            text(&cmd, &v),
            "# A\n[cut: 900 more bytes (300 of them navigation, header, footer or aside): the text is over the 1024-byte budget; use --ref R or --max-bytes]\n"
        );
    }

    #[test]
    fn a_dialog_gets_its_article() {
        let click = Cmd::Browser { pane: None, cmd: BrowserCmd::Click { target: "e3".into(), button: None } };
        let v = json!({"action": "click", "ref": "e3", "dialog": {"kind": "alert", "message": "Saved"}});
        assert_eq!(text(&click, &v), "click e3; it opened an alert \"Saved\" dialog\n");
        let v = json!({"action": "click", "ref": "e3", "dialog": {"kind": "confirm", "message": "Sure?"}});
        assert_eq!(text(&click, &v), "click e3; it opened a confirm \"Sure?\" dialog\n");
        let back = Cmd::Browser { pane: None, cmd: BrowserCmd::Back };
        let v = json!({"dialog": {"kind": "beforeunload", "message": ""}});
        assert_eq!(text(&back, &v), "the page opened a beforeunload \"\" dialog instead of leaving\n");
    }

    #[test]
    fn list_names_the_workspace_only_when_there_are_several() {
        let pane = |h: &str, w: u64| json!({"handle":h,"kind":"terminal","title":"bash","cwd":"/","url":null,"mode":null,"minimized":false,"focused":false,"exit_code":null,"shown":true,"workspace":w});
        let t = list(&json!({"window": true, "panes": [pane("t1", 1), pane("t2", 2)]}), false);
        let lines: Vec<&str> = t.lines().collect();
        assert!(lines[1].ends_with("workspace 1") && lines[2].ends_with("workspace 2"), "{t}");
        let one = list(&json!({"window": true, "panes": [pane("t1", 1), pane("t2", 1)]}), false);
        assert!(!one.contains("workspace"), "{one}");
    }
}
