//! Acting on a sealed token (`click s3`, `fill s1 …`): the token's one node is resolved
//! (its document must be the one it was read in: else `stale_ref`), re-measured, scrolled
//! into view and hit-tested, and gets trusted input at its visible point, as a ref does
//! ([`crate::automation::act`]). `fill` clears with trusted Ctrl+A, Delete (a script cannot
//! reach into a closed root to clear it), and `fill`/`type` are verified in the sidecar
//! against the accessibility value: the answer says `matched` (or the call fails with
//! `mismatch`) and never carries the value.

use serde_json::{json, Value};

use super::store::parse_token;
use super::{Lever, Policy};
use crate::automation::act::{self, input, key_events, Action};
use crate::automation::node::{self, Node};
use crate::automation::{keys, page, Automation, AutomationError};
use crate::browser::session::call;
use crate::browser::{BrowserError, BrowserRef};

/// True when `r` is written as a sealed token (`s3`, `@s3`).
pub fn is_token(r: &str) -> bool {
    parse_token(r).is_some()
}

impl Automation {
    /// Performs `action` on sealed token `r` under `policy` → as [`Automation::act`], with
    /// `verified: "matched"` for `fill` and `type` (never a value). `unknown_ref` for a token
    /// never given out, `stale_ref` for one of an older document.
    pub async fn act_sealed(
        &self,
        b: &BrowserRef,
        r: &str,
        action: &Action,
        policy: &Policy,
    ) -> Result<Value, AutomationError> {
        policy.allow(Lever::Discovery)?;
        let unknown = || AutomationError::UnknownRef(r.chars().take(32).collect());
        let n = parse_token(r).ok_or_else(unknown)?;
        let minted = self.sealed_store().token(b.id(), n).ok_or_else(unknown)?;
        self.mutate(b, action.name(), async {
            let page = page(b)?;
            let node = node::resolve(b, &page, r, &minted).await?;
            let mut out = match action {
                Action::Fill(text) => typed(b, &page, &node, text, true).await?,
                Action::Type(text) => typed(b, &page, &node, text, false).await?,
                Action::Click | Action::DblClick | Action::Hover | Action::Press(_) => {
                    act::perform(b, &page, Some(&node), action).await?
                }
                other => {
                    return Err(AutomationError::BadRequest(format!(
                        "{} does not take a sealed token (click, dblclick, hover, fill, type and press do)",
                        other.name()
                    )))
                }
            };
            out["ref"] = json!(r);
            out["action"] = action.name().into();
            Ok(out)
        })
        .await
    }
}

/// The accessibility value of `node` (read in the sidecar, never returned to the caller).
async fn ax_value(node: &Node) -> Result<String, AutomationError> {
    let v = call(
        &node.session,
        "Accessibility.getPartialAXTree",
        json!({"backendNodeId": node.backend, "fetchRelatives": false}),
    )
    .await?;
    let n = v["nodes"].as_array().and_then(|a| a.iter().find(|n| n["backendDOMNodeId"] == node.backend)).cloned();
    Ok(n.and_then(|n| n["value"]["value"].as_str().map(str::to_string)).unwrap_or_default())
}

/// True when the accessibility value `seen` shows `want` (a password field's value is
/// exposed masked: one mask character per character typed).
fn shows(seen: &str, want: &str) -> bool {
    seen == want || (!want.is_empty() && seen.chars().count() == want.chars().count() && seen.chars().all(|c| c == '•'))
}

/// Types `text` into `node` with trusted input: focus, then (`fill`) Ctrl+A and Delete,
/// then the text (`fill`: one insertion; `type`: Ctrl+End, then key by key), then verifies the
/// accessibility value in the sidecar.
async fn typed(
    b: &BrowserRef,
    page: &chromiumoxide::Page,
    node: &Node,
    text: &str,
    fill: bool,
) -> Result<Value, AutomationError> {
    let st = node::state(node).await?;
    if st.disabled {
        return Err(AutomationError::Disabled(node.name.clone()));
    }
    if !st.editable {
        return Err(AutomationError::NotEditable(node.name.clone()));
    }
    let (x, y) = node::visible_point(node).await?;
    node::check_not_covered(node, x, y).await?;
    call(&node.session, "DOM.focus", json!({"backendNodeId": node.backend})).await.map_err(|e| match e {
        BrowserError::Cdp(_) => AutomationError::NotVisible(node.name.clone()),
        e => e.into(),
    })?;
    b.presence().mark_point(crate::browser::Point { x, y });
    let before = if fill { String::new() } else { ax_value(node).await? };
    let mut steps = Vec::new();
    if fill {
        let mut all = key_events(&keys::parse("Control+a").expect("Control+a is a key"));
        // The edit command Ctrl+A means on every platform (a Mac binding would differ).
        all[0].1["commands"] = json!(["selectAll"]);
        steps.extend(all);
        steps.extend(key_events(&keys::parse("Delete").expect("Delete is a key")));
        if !text.is_empty() {
            steps.push(("Input.insertText", json!({"text": text})));
        }
    } else {
        // `type` goes at the end of what is there: trusted Ctrl+End first (focusing a field
        // leaves its caret wherever it was, often at the start).
        let mut end = key_events(&keys::parse("Control+End").expect("Control+End is a key"));
        end[0].1["commands"] = json!(["moveToEndOfDocument"]);
        steps.extend(end);
        for c in text.chars() {
            steps.extend(key_events(&keys::for_char(c)));
        }
    }
    if input(b, page, steps).await? {
        // A dialog opened: the rest was not sent and nothing can be read back.
        return Ok(act::with_dialog(json!({}), b, true));
    }
    let want = if fill { text.to_string() } else { format!("{before}{text}") };
    let seen = ax_value(node).await?;
    if !shows(&seen, &want) {
        return Err(AutomationError::Mismatch {
            message: format!(
                "typed {} characters into {} but its value is not what was typed (the value is not shown)",
                text.chars().count(),
                node.name
            ),
            observed: Value::Null,
        });
    }
    Ok(act::with_dialog(
        json!({"verified": "matched", "length": text.chars().count(), "point": {"x": x, "y": y}}),
        b,
        false,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_masked_value_shows_a_password_of_its_length() {
        assert!(shows("alice", "alice"));
        assert!(shows("••••", "pw12"));
        assert!(!shows("•••", "pw12"));
        assert!(!shows("alicex", "alice"));
        assert!(is_token("s2") && !is_token("e2"));
    }
}
