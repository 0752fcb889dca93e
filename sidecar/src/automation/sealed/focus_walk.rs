//! `focus-walk HOST` (issue 24 item 5, lever `agent.sealed.focus_walk`, VISIBLE: it moves
//! focus): a keyboard user by construction. Focus is put just before the closed shadow host
//! (just after it with `back`), then trusted Tab (Shift+Tab) is pressed one step at a time,
//! [`STEP_GAP`] apart, never a burst; after each step the focused node is read (inside the
//! host's closed tree through the accessibility tree of the host alone, outside it through
//! its DOM node) and the walk stops at the step limit or when focus leaves the host. This is
//! how a `delegatesFocus` closed root, or any control a closed tree holds, is reached without
//! opening the root: `press Enter` then acts on what the walk left focused.
//!
//! Each step gives role, name, rect (top-level viewport CSS px) and, inside the host, an `sN`
//! token (as `snapshot --sealed` gives) that `click`, `fill`… take; never a value. When focus
//! never entered the host, focus is put back where it was (`agent.sealed.focus_walk_restore`,
//! `--no-restore`).

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::scan::measure;
use super::{Lever, Policy};
use crate::automation::act::{input, key_events};
use crate::automation::node::{self, Node};
use crate::automation::refs::NodeKey;
use crate::automation::walk::WORLD;
use crate::automation::{keys, page, Automation, AutomationError};
use crate::browser::cdp_counts::{self, Work};
use crate::browser::session::{call, Session};
use crate::browser::{BrowserError, BrowserRef};

/// Time from one Tab to the next: a quick keyboard user's pace (the seed's input profile).
pub const STEP_GAP: Duration = Duration::from_millis(120);

const FOCUS_JS: &str = include_str!("focus_walk.js");

/// What a focus walk is asked to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WalkRequest {
    /// Most steps (default: `agent.sealed.focus_walk_max_steps`, which also bounds it).
    pub max_steps: Option<u32>,
    /// Shift+Tab from just after the host, not Tab from just before it.
    pub back: bool,
    /// Put focus back when the walk fails (`--no-restore`: false). The policy's
    /// `focus_walk_restore = false` turns it off too.
    pub restore: bool,
}

/// Why a walk stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    /// The step limit was reached with focus in the host.
    Limit,
    /// Focus went past the host after visiting it.
    LeftHost,
    /// The first step did not bring focus into the host (nothing tabbable in it, or the
    /// start could not be put next to it).
    NotEntered,
    /// A dialog opened: the rest was not sent.
    Dialog,
}

impl Stop {
    fn as_str(self) -> &'static str {
        match self {
            Stop::Limit => "limit",
            Stop::LeftHost => "left_host",
            Stop::NotEntered => "not_entered",
            Stop::Dialog => "dialog",
        }
    }
}

/// The host resolved into Porthole's isolated world of its frame (where [`FOCUS_JS`] runs).
struct Host {
    node: Node,
    object: String,
}

impl Host {
    async fn run(&self, op: &str, back: bool) -> Result<Value, BrowserError> {
        let r = call(
            &self.node.session,
            "Runtime.callFunctionOn",
            json!({"objectId": self.object, "functionDeclaration": FOCUS_JS,
                   "arguments": [{"value": op}, {"value": back}], "returnByValue": true}),
        )
        .await?;
        if let Some(ex) = r.get("exceptionDetails") {
            return Err(BrowserError::Cdp(format!("focus walk ({op}) threw: {}", ex["text"])));
        }
        Ok(r["result"]["value"].clone())
    }

    /// The focused element (deepest through open roots) as `backendNodeId`.
    async fn focused_backend(&self) -> Result<Option<i64>, BrowserError> {
        let r = call(
            &self.node.session,
            "Runtime.callFunctionOn",
            json!({"objectId": self.object, "returnByValue": false, "functionDeclaration":
                "function(){let a=document.activeElement;while(a&&a.shadowRoot&&a.shadowRoot.activeElement)a=a.shadowRoot.activeElement;return a}"}),
        )
        .await?;
        let Some(obj) = r["result"]["objectId"].as_str() else { return Ok(None) };
        let d = call(&self.node.session, "DOM.describeNode", json!({"objectId": obj})).await?;
        Ok(d["node"]["backendNodeId"].as_i64())
    }
}

/// Role and name of accessibility node `n` (never its value).
fn role_name(n: &Value) -> (String, String) {
    (
        n["role"]["value"].as_str().unwrap_or("").to_string(),
        n["name"]["value"].as_str().unwrap_or("").chars().take(100).collect(),
    )
}

/// The focused node of the host's tree: the accessibility node under the host (itself
/// included) whose `focused` state holds → (backend, role, name).
async fn focused_inside(node: &Node) -> Result<Option<(i64, String, String)>, BrowserError> {
    let tree = call(&node.session, "Accessibility.queryAXTree", json!({"backendNodeId": node.backend})).await?;
    let found = tree["nodes"].as_array().into_iter().flatten().find(|n| {
        n["properties"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|p| p["name"] == "focused" && (p["value"]["value"] == true || p["value"]["value"] == "true"))
    });
    Ok(found.and_then(|n| {
        let (role, name) = role_name(n);
        n["backendDOMNodeId"].as_i64().map(|b| (b, role, name))
    }))
}

/// Role and name of DOM node `backend` (outside the host).
async fn described(session: &Session, backend: i64) -> Result<(String, String), BrowserError> {
    let v = call(session, "Accessibility.getPartialAXTree", json!({"backendNodeId": backend, "fetchRelatives": false}))
        .await?;
    let n = v["nodes"].as_array().and_then(|a| a.iter().find(|n| n["backendDOMNodeId"] == backend)).cloned();
    Ok(n.map(|n| role_name(&n)).unwrap_or_default())
}

impl Automation {
    /// Walks focus through closed shadow host `r` (a ref from `snapshot`) under `policy` →
    /// `{"host","steps":[{"index","in_host","role","name","rect","in_viewport","token","at_ms"}],
    /// "landed": <last step>|null,"stopped":"limit"|"left_host"|"not_entered"|"dialog",
    /// "restored","start":"before"|"after"|"none"}`. `at_ms`: when the step's key was sent,
    /// from the first. Refused `focus_walk_disabled` (or `agent_disabled`) as the policy says,
    /// `focus_walk_limit` for more steps than `agent.sealed.focus_walk_max_steps`. A mutating
    /// verb ([`Automation::mutate`]).
    pub async fn focus_walk(
        &self,
        b: &BrowserRef,
        r: &str,
        req: WalkRequest,
        policy: &Policy,
    ) -> Result<Value, AutomationError> {
        policy.allow(Lever::FocusWalk)?;
        let limit = policy.file.focus_walk_max_steps.0;
        let steps = req.max_steps.unwrap_or(limit);
        if steps == 0 {
            return Err(AutomationError::BadRequest("max_steps must be at least 1".into()));
        }
        if steps > limit {
            return Err(AutomationError::PolicyRefused {
                code: "focus_walk_limit",
                key: "agent.sealed.focus_walk_max_steps",
                message: format!(
                    "a focus walk may take at most {limit} steps (the human's policy), {steps} were asked; agent.sealed.focus_walk_max_steps allows more"
                ),
            });
        }
        let restore = req.restore && policy.file.focus_walk_restore;
        let minted = self.minted(b.id(), r)?;
        self.mutate(b, "focus-walk", async {
            let page = page(b)?;
            let tab = page.target_id().as_ref().to_string();
            let node = node::resolve(b, &page, r, &minted).await?;
            let world =
                call(&node.session, "Page.createIsolatedWorld", json!({"frameId": node.frame, "worldName": WORLD}))
                    .await?;
            let object = call(
                &node.session,
                "DOM.resolveNode",
                json!({"backendNodeId": node.backend, "executionContextId": world["executionContextId"]}),
            )
            .await?["object"]["objectId"]
                .as_str()
                .map(str::to_string)
                .ok_or_else(|| AutomationError::NotVisible(r.to_string()))?;
            let host = Host { node, object };
            let start = host.run("start", req.back).await?;
            let key = keys::parse(if req.back { "Shift+Tab" } else { "Tab" }).expect("Tab is a key");
            // The frame process's viewport, once: a walk does not resize it.
            let (vw, vh, _, _) = host.node.session.viewport().await?;
            let viewport = (vw, vh);
            let began = Instant::now();
            let mut out = Vec::new();
            let mut entered = false;
            let mut stop = Stop::Limit;
            let walked: Result<(), AutomationError> = async {
                for index in 1..=steps {
                    if index > 1 {
                        tokio::time::sleep_until((began + STEP_GAP * (index - 1)).into()).await;
                    }
                    let at_ms = began.elapsed().as_millis() as u64;
                    cdp_counts::add(&tab, Work::FocusWalkStep);
                    if input(b, &page, key_events(&key)).await? {
                        stop = Stop::Dialog;
                        break;
                    }
                    let where_ = host.run("where", false).await?;
                    let inside = where_["inside"] == true;
                    let (backend, role, name) = if inside {
                        match focused_inside(&host.node).await? {
                            Some(f) => f,
                            // The host itself holds focus (tabindex on it).
                            None => {
                                let (role, name) = described(&host.node.session, host.node.backend).await?;
                                (host.node.backend, role, name)
                            }
                        }
                    } else if let Some(bk) = host.focused_backend().await? {
                        let (role, name) = described(&host.node.session, bk).await?;
                        (bk, role, name)
                    } else {
                        (0, String::new(), String::new())
                    };
                    let measured =
                        if backend > 0 { measure(&host.node.session, backend, viewport).await? } else { None };
                    let token = if inside && backend != host.node.backend {
                        let key = NodeKey { backend, ..minted.key.clone() };
                        let n = self.sealed_store().mint(b.id(), key, &minted.url, &minted.targets);
                        Some(format!("s{n}"))
                    } else {
                        None
                    };
                    out.push(json!({
                        "index": index,
                        "in_host": inside,
                        "role": role,
                        "name": name,
                        "rect": measured.map(|(rect, _)| rect.json()),
                        "in_viewport": measured.is_some_and(|(_, v)| v),
                        "token": token,
                        "at_ms": at_ms,
                    }));
                    if inside {
                        entered = true;
                    } else {
                        stop = if entered { Stop::LeftHost } else { Stop::NotEntered };
                        break;
                    }
                }
                Ok(())
            }
            .await;
            if let Err(e) = walked {
                // A walk cut short by an error is a failed one: focus goes back if it may.
                if restore {
                    let _ = host.run("restore", false).await;
                }
                return Err(e);
            }
            let restored =
                if stop == Stop::NotEntered && restore { host.run("restore", false).await? == true } else { false };
            Ok(json!({
                "host": r,
                "steps": out,
                "landed": out.last().cloned(),
                "stopped": stop.as_str(),
                "restored": restored,
                "start": start,
            }))
        })
        .await
    }
}
