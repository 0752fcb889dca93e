//! `ph mcp`: the verbs as MCP tools over stdin/stdout (the `rmcp` crate's server and stdio
//! transport), so an agent adds Porthole with `{"command":"ph","args":["mcp"]}`.
//!
//! A tool per verb ([`verbs::all`]), its parameters the verb's arguments. A call is turned
//! back into the verb's command line and parsed by the same clap definitions, then run by
//! the same code as `ph` itself ([`crate::execute`]): the same HTTP request, the same text.
//! A refusal is a tool error whose text is `ph`'s message (ending `[code]`) and whose
//! structured content is `{"code","exit"}`.

use std::sync::Arc;

use clap::Parser;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, JsonObject, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{json, Value};

use crate::cli::Cli;
use crate::verbs::{self, Param, Verb};
use crate::{execute, exit};

/// Serves MCP on stdin/stdout until the client closes it; returns the exit code.
pub fn serve() -> u8 {
    let rt = match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("ph: runtime: {e}");
            return exit::REFUSED;
        }
    };
    let done = rt.block_on(async {
        let running = Tools::new().serve(rmcp::transport::stdio()).await.map_err(|e| e.to_string())?;
        running.waiting().await.map_err(|e| e.to_string())
    });
    match done {
        Ok(_) => exit::OK,
        Err(e) => {
            eprintln!("ph: mcp: {e}");
            exit::REFUSED
        }
    }
}

/// The server: every verb's tool, built once.
struct Tools {
    verbs: Arc<Vec<Verb>>,
    tools: Arc<Vec<Tool>>,
}

impl Tools {
    fn new() -> Tools {
        let verbs = verbs::all();
        let tools = verbs.iter().map(tool).collect();
        Tools { verbs: Arc::new(verbs), tools: Arc::new(tools) }
    }
}

/// A verb's tool: its name, its help as the description, a JSON schema of its arguments.
fn tool(v: &Verb) -> Tool {
    let mut props = serde_json::Map::new();
    let mut required = Vec::new();
    for p in v.params() {
        let help = p.arg.get_long_help().or(p.arg.get_help()).map(|h| h.to_string()).unwrap_or_default();
        let choices: Vec<String> =
            p.arg.get_possible_values().iter().filter(|c| !c.is_hide_set()).map(|c| c.get_name().to_string()).collect();
        let mut s = if p.is_flag() {
            json!({"type": "boolean"})
        } else if p.is_list() {
            json!({"type": "array", "items": {"type": "string"}})
        } else {
            json!({"type": "string"})
        };
        if !choices.is_empty() && !p.is_flag() {
            s["enum"] = json!(choices);
        }
        s["description"] = help.into();
        if p.arg.is_required_set() {
            required.push(p.name.clone());
        }
        props.insert(p.name, s);
    }
    let schema = json!({"type": "object", "properties": props, "required": required, "additionalProperties": false});
    let schema: JsonObject = match schema {
        Value::Object(m) => m,
        _ => JsonObject::new(),
    };
    let about = v.cmd.get_long_about().or(v.cmd.get_about()).map(|a| a.to_string()).unwrap_or_default();
    Tool::new(v.tool_name(), format!("ph {}: {about}", v.words.join(" ")), schema)
}

/// The command line a call stands for: options as `--name=value`, then `--` and the
/// positionals (so a value starting with `-` stays a value), the command of `split`/`ensure`
/// last.
fn argv(v: &Verb, args: &JsonObject) -> Result<Vec<String>, String> {
    let params = v.params();
    if let Some(k) = args.keys().find(|k| !params.iter().any(|p| &p.name == *k)) {
        let names: Vec<&str> = params.iter().map(|p| p.name.as_str()).collect();
        return Err(format!("{} takes no argument {k:?} (it takes: {})", v.tool_name(), names.join(", ")));
    }
    let mut line: Vec<String> = std::iter::once("ph".to_string()).chain(v.words.iter().cloned()).collect();
    let mut positional = Vec::new();
    let mut last = Vec::new();
    for p in &params {
        let Some(value) = args.get(&p.name).filter(|x| !x.is_null()) else { continue };
        let values = strings(p, value)?;
        let long = p.arg.get_long().unwrap_or(p.name.as_str());
        if p.is_flag() {
            if values.iter().any(|x| x == "true") {
                line.push(format!("--{long}"));
            }
        } else if p.arg.is_last_set() {
            last = values;
        } else if p.arg.is_positional() {
            positional.extend(values);
        } else {
            line.extend(values.into_iter().map(|x| format!("--{long}={x}")));
        }
    }
    if !positional.is_empty() || !last.is_empty() {
        line.push("--".into());
        line.extend(positional);
        line.extend(last);
    }
    Ok(line)
}

/// A parameter's value(s) as command-line words.
fn strings(p: &Param, value: &Value) -> Result<Vec<String>, String> {
    let one = |x: &Value| match x {
        Value::String(s) => Ok(s.clone()),
        Value::Number(n) => Ok(n.to_string()),
        Value::Bool(b) => Ok(b.to_string()),
        other => Err(format!("{}: {other} is not a string, number or boolean", p.name)),
    };
    match value {
        Value::Array(items) if p.is_list() => items.iter().map(one).collect(),
        Value::Array(_) => Err(format!("{} takes one value, not a list", p.name)),
        x => Ok(vec![one(x)?]),
    }
}

/// A refusal as a tool error: `ph`'s message, and `{"code","exit"}`.
fn refusal(text: &str, code: &str, exit: u8) -> CallToolResult {
    let mut r = CallToolResult::error(vec![ContentBlock::text(text.trim_end().to_string())]);
    r.structured_content = Some(json!({"code": code, "exit": exit}));
    r
}

/// Runs one call: parse the command line it stands for, then what `ph` would run.
fn call(v: &Verb, args: &JsonObject) -> CallToolResult {
    let line = match argv(v, args) {
        Ok(l) => l,
        Err(m) => return refusal(&format!("ph: {m}"), "usage", exit::USAGE),
    };
    let cli = match Cli::try_parse_from(&line) {
        Ok(c) => c,
        Err(e) => return refusal(&e.render().to_string(), "usage", exit::USAGE),
    };
    if let Some((out, png)) = crate::screenshot_image(&cli) {
        if let (exit::OK, Some(png)) = (out.exit, png) {
            return CallToolResult::success(vec![
                ContentBlock::image(png, "image/png"),
                ContentBlock::text(out.stdout),
            ]);
        }
        let text = if out.stderr.is_empty() { &out.stdout } else { &out.stderr };
        return refusal(text, out.code.as_deref().unwrap_or("internal"), out.exit);
    }
    let out = execute(&cli);
    if out.exit == exit::OK {
        let text = if out.stdout.is_empty() { "done".to_string() } else { out.stdout };
        return CallToolResult::success(vec![ContentBlock::text(text)]);
    }
    // A failed program (`wait --until exit`, exit 5) says so on stdout only: `exited 7`.
    let text = if out.stderr.is_empty() { &out.stdout } else { &out.stderr };
    refusal(text, out.code.as_deref().unwrap_or("internal"), out.exit)
}

impl ServerHandler for Tools {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("porthole-ph", env!("CARGO_PKG_VERSION")))
            .with_instructions(crate::skill::GUIDE)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools.to_vec()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let verbs = self.verbs.clone();
        let Some(i) = verbs.iter().position(|v| v.tool_name() == request.name) else {
            return Err(ErrorData::invalid_params(format!("no tool named {:?}", request.name), None));
        };
        let args = request.arguments.unwrap_or_default();
        // `ph`'s client blocks on its own small runtime: run it off this one's workers.
        let result = tokio::task::spawn_blocking(move || call(&verbs[i], &args))
            .await
            .map_err(|e| ErrorData::internal_error(format!("the call failed: {e}"), None))?;
        Ok(result.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verb(words: &[&str]) -> Verb {
        verbs::all().into_iter().find(|v| v.words == words).unwrap()
    }

    fn obj(v: Value) -> JsonObject {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn a_call_becomes_the_verbs_command_line() {
        let send = verb(&["send"]);
        let line = argv(&send, &obj(json!({"pane": "t1", "text": "-n hi", "key": ["enter", "ctrl+c"]}))).unwrap();
        assert_eq!(line, ["ph", "send", "--text=-n hi", "--key=enter", "--key=ctrl+c", "--", "t1"]);
        assert!(Cli::try_parse_from(&line).is_ok());
        let fill = verb(&["browser", "fill"]);
        let line = argv(&fill, &obj(json!({"ref": "e2", "text": "-5", "pane": "b1"}))).unwrap();
        let cli = Cli::try_parse_from(&line).unwrap();
        assert!(format!("{cli:?}").contains("\"-5\""), "a value starting with - stays a value: {cli:?}");
        let snap = verb(&["browser", "snapshot"]);
        let line = argv(&snap, &obj(json!({"interactive": true, "max_bytes": 4096}))).unwrap();
        assert_eq!(line, ["ph", "browser", "snapshot", "--interactive", "--max-bytes=4096"]);
        let line = argv(&snap, &obj(json!({"ref": "e4"}))).unwrap();
        assert_eq!(line, ["ph", "browser", "snapshot", "--ref=e4"]);
        let wait = verb(&["browser", "wait"]);
        let line = argv(&wait, &obj(json!({"ref_state": "e3=checked", "timeout": 5}))).unwrap();
        assert_eq!(line, ["ph", "browser", "wait", "--ref-state=e3=checked", "--timeout=5"]);
        assert!(Cli::try_parse_from(&line).is_ok());
        let split = verb(&["split"]);
        let line = argv(&split, &obj(json!({"down": true, "cmd": ["python3", "-m", "http.server"]}))).unwrap();
        assert_eq!(line, ["ph", "split", "--down", "--", "python3", "-m", "http.server"]);
        assert!(argv(&send, &obj(json!({"pane": "t1", "stdin": true}))).is_err(), "no stdin over MCP");
    }

    /// The tool names docs/cli.md gives: those in "named by its words (…)" and every
    /// `browser_…` it mentions.
    fn documented_tool_names() -> Vec<String> {
        let doc = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/cli.md"));
        let name = regex::Regex::new(r"`([a-z]+(?:_[a-z-]+)*)`").unwrap();
        let mut names: Vec<String> = Vec::new();
        let words = doc
            .find("named by its\nwords (")
            .or_else(|| doc.find("named by its words ("))
            .expect("the tool-name sentence");
        let clause = &doc[words..words + doc[words..].find(')').unwrap()];
        names.extend(name.captures_iter(clause).map(|c| c[1].to_string()));
        let browser = regex::Regex::new(r"`(browser_[a-z_-]+)`").unwrap();
        names.extend(browser.captures_iter(doc).map(|c| c[1].to_string()));
        names
    }

    #[test]
    fn every_documented_tool_name_exists() {
        let t = Tools::new();
        let documented = documented_tool_names();
        assert!(documented.len() >= 5 && documented.contains(&"browser_scroll_to".to_string()), "{documented:?}");
        for name in documented {
            assert!(t.tools.iter().any(|t| t.name == name), "docs/cli.md names tool {name:?}, which does not exist");
        }
        for tool in t.tools.iter() {
            assert!(tool.name.chars().all(|c| c.is_ascii_lowercase() || c == '_'), "tool name {:?}", tool.name);
        }
    }

    #[test]
    fn every_verb_has_a_tool_with_a_schema() {
        let t = Tools::new();
        let read = t.tools.iter().find(|t| t.name == "read").unwrap();
        assert_eq!(read.input_schema["required"], json!(["pane"]));
        assert!(read.description.as_deref().unwrap().starts_with("ph read: "));
        let get = t.tools.iter().find(|t| t.name == "browser_get").unwrap();
        assert_eq!(get.input_schema["properties"]["what"]["enum"], json!(["text", "value"]));
        assert_eq!(t.tools.len(), verbs::all().len());
    }
}
