//! The verbs as the clap definitions declare them, walked once for `ph mcp` (a tool per verb)
//! and `ph skill` (the guide names every verb): neither lists the verbs a second time.

use clap::{ArgAction, CommandFactory};

use crate::cli::Cli;

/// Verbs that talk to no sidecar (`ph completions`, `ph skill`, `ph mcp`, `ph config`): they
/// are no tools.
pub const LOCAL: [&str; 4] = ["completions", "skill", "mcp", "config"];
/// Arguments a tool does not take: help and version, `--json` (a tool returns the text),
/// and `--stdin` (stdin is the MCP channel).
const NOT_FOR_TOOLS: [&str; 4] = ["help", "version", "json", "stdin"];

/// One verb that reaches the sidecar: its words (`["browser", "click"]`) and its clap
/// definition (globals propagated).
pub struct Verb {
    /// The words after `ph`.
    pub words: Vec<String>,
    /// The clap command.
    pub cmd: clap::Command,
}

impl Verb {
    /// The MCP tool name: the words joined with `_`, and `-` written `_` as in parameter
    /// names (`browser_click`, `browser_scroll_to`).
    pub fn tool_name(&self) -> String {
        self.words.join("_").replace('-', "_")
    }

    /// The arguments a tool takes, in declaration order.
    pub fn params(&self) -> Vec<Param> {
        self.cmd
            .get_arguments()
            .filter(|a| !NOT_FOR_TOOLS.contains(&a.get_id().as_str()))
            .map(|a| Param { name: param_name(a), arg: a.clone() })
            .collect()
    }
}

/// One argument of a verb, named as a tool parameter.
pub struct Param {
    /// The parameter's name: an option's long name, a positional's value name (`ref`).
    pub name: String,
    /// The clap argument.
    pub arg: clap::Arg,
}

impl Param {
    /// A flag without a value (`--full`).
    pub fn is_flag(&self) -> bool {
        matches!(self.arg.get_action(), ArgAction::SetTrue)
    }

    /// Takes several values (a repeatable option, the command after `--`).
    pub fn is_list(&self) -> bool {
        matches!(self.arg.get_action(), ArgAction::Append)
            || self.arg.is_last_set()
            || self.arg.get_num_args().is_some_and(|n| n.max_values() > 1)
    }
}

/// An option's long name, else a positional's value name when it is one word (`REF` →
/// `ref`), else the argument's id; `-` written `_`.
fn param_name(a: &clap::Arg) -> String {
    let word = |v: &&clap::builder::Str| v.chars().all(|c| c.is_ascii_alphabetic());
    let name = match (a.get_long(), a.get_value_names().and_then(|v| v.first()).filter(word)) {
        (Some(long), _) => long.to_string(),
        (None, Some(v)) if a.is_positional() => v.to_lowercase(),
        _ => a.get_id().to_string(),
    };
    name.replace('-', "_")
}

/// Every verb that reaches the sidecar, `browser` expanded into its verbs.
pub fn all() -> Vec<Verb> {
    let mut root = Cli::command();
    root.build();
    let mut out = Vec::new();
    for c in root.get_subcommands() {
        let name = c.get_name().to_string();
        if LOCAL.contains(&name.as_str()) || name == "help" {
            continue;
        }
        if c.has_subcommands() {
            for s in c.get_subcommands().filter(|s| s.get_name() != "help") {
                out.push(Verb { words: vec![name.clone(), s.get_name().to_string()], cmd: s.clone() });
            }
        } else {
            out.push(Verb { words: vec![name], cmd: c.clone() });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn browser_verbs_are_expanded_and_take_the_pane() {
        let verbs = all();
        let click = verbs.iter().find(|v| v.words == ["browser", "click"]).expect("browser click");
        let names: Vec<String> = click.params().into_iter().map(|p| p.name).collect();
        assert_eq!(names, ["ref", "button", "pane"]);
        assert!(verbs.iter().any(|v| v.words == ["read"]));
        assert!(verbs.iter().any(|v| v.words == ["up"]));
        assert!(!verbs.iter().any(|v| v.words[0] == "config"), "a local verb is no tool");
        assert!(!verbs.iter().any(|v| v.words == ["browser"] || v.words == ["mcp"]));
        let send = verbs.iter().find(|v| v.words == ["send"]).unwrap();
        let p = send.params();
        assert!(p.iter().any(|p| p.name == "key" && p.is_list()));
        assert!(!p.iter().any(|p| p.name == "stdin" || p.name == "json"), "stdin is the MCP channel");
        for v in &verbs {
            for p in v.params() {
                assert!(p.name.chars().all(|c| c.is_ascii_lowercase() || c == '_'), "{}: {}", v.tool_name(), p.name);
            }
        }
        let tabs = verbs.iter().find(|v| v.words == ["browser", "tabs"]).unwrap();
        let names: Vec<String> = tabs.params().into_iter().map(|p| p.name).collect();
        assert_eq!(names, ["action", "tab", "pane"]);
        let upload = verbs.iter().find(|v| v.words == ["browser", "upload"]).expect("browser upload");
        let p = upload.params();
        assert_eq!(p.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(), ["ref", "file", "pane"]);
        assert!(p[1].is_list() && p[1].arg.is_required_set(), "upload takes a list of files");
        let drag = verbs.iter().find(|v| v.words == ["browser", "drag"]).expect("browser drag");
        assert_eq!(drag.params().into_iter().map(|p| p.name).collect::<Vec<_>>(), ["ref", "to", "pane"]);
        let split = verbs.iter().find(|v| v.words == ["split"]).unwrap();
        assert!(split.params().iter().any(|p| p.name == "cmd" && p.is_list() && p.arg.is_last_set()));
    }
}
