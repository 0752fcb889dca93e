//! `wait --ref-state R=STATE`: the states an element can be waited for, and whether it is in
//! one now. The ref is resolved at every check, so a ref that goes stale while waiting ends
//! the wait with `stale_ref` (its reason), never with a guess.

use serde_json::Value;

use super::error::AutomationError;
use super::node::{state, Node};
use crate::browser::session::call_on;

/// A state `wait --ref-state` waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefState {
    /// Rendered with a box of positive size, `visibility: visible`, opacity above 0 (in or out
    /// of the viewport), and so is each frame owner above it.
    Visible,
    /// Not [`RefState::Visible`] (the element is still in its document).
    Hidden,
    /// Not disabled (`:disabled`, `aria-disabled`, inert).
    Enabled,
    /// Disabled.
    Disabled,
    /// A checkbox, radio or switch that is checked.
    Checked,
    /// A checkbox, radio or switch that is not checked.
    Unchecked,
    /// Takes text (a text-like input or textarea that is not read-only or disabled, or
    /// contenteditable).
    Editable,
    /// Its document's focused element (through open shadow roots), in a focused document.
    Focused,
}

/// Every state's name, in the order the docs list them.
pub const REF_STATES: [&str; 8] =
    ["visible", "hidden", "enabled", "disabled", "checked", "unchecked", "editable", "focused"];

impl RefState {
    /// Parses a state's name ([`REF_STATES`]).
    pub fn parse(s: &str) -> Option<RefState> {
        Some(match s {
            "visible" => RefState::Visible,
            "hidden" => RefState::Hidden,
            "enabled" => RefState::Enabled,
            "disabled" => RefState::Disabled,
            "checked" => RefState::Checked,
            "unchecked" => RefState::Unchecked,
            "editable" => RefState::Editable,
            "focused" => RefState::Focused,
            _ => return None,
        })
    }

    /// The state's name.
    pub fn as_str(self) -> &'static str {
        match self {
            RefState::Visible => "visible",
            RefState::Hidden => "hidden",
            RefState::Enabled => "enabled",
            RefState::Disabled => "disabled",
            RefState::Checked => "checked",
            RefState::Unchecked => "unchecked",
            RefState::Editable => "editable",
            RefState::Focused => "focused",
        }
    }
}

const VISIBLE_JS: &str = r#"function(){
  const e = this.nodeType === 1 ? this : this.parentElement;
  if (!e || !e.isConnected) return false;
  const r = e.getBoundingClientRect();
  return r.width > 0 && r.height > 0 && e.checkVisibility({opacityProperty: true, visibilityProperty: true});
}"#;

const FOCUSED_JS: &str = r#"function(){
  let a = this.ownerDocument.activeElement;
  while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
  return a === this && this.ownerDocument.hasFocus();
}"#;

/// Whether `node` is in state `want` now. `bad_request` for checked/unchecked on an element
/// that is not a checkbox, radio or switch.
pub async fn holds(node: &Node, want: RefState) -> Result<bool, AutomationError> {
    Ok(match want {
        RefState::Visible | RefState::Hidden => {
            let mut shown = call_on(&node.session, &node.object, VISIBLE_JS, vec![]).await? == Value::Bool(true);
            if shown {
                shown = node.session.owners_visible().await?;
            }
            shown == (want == RefState::Visible)
        }
        RefState::Enabled => !state(node).await?.disabled,
        RefState::Disabled => state(node).await?.disabled,
        RefState::Editable => state(node).await?.editable,
        RefState::Checked | RefState::Unchecked => match state(node).await?.checked {
            Some(c) => c == (want == RefState::Checked),
            None => {
                return Err(AutomationError::BadRequest(format!("{} is not a checkbox, radio or switch", node.name)))
            }
        },
        RefState::Focused => call_on(&node.session, &node.object, FOCUSED_JS, vec![]).await? == Value::Bool(true),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_parse_and_name_themselves() {
        for s in REF_STATES {
            assert_eq!(RefState::parse(s).unwrap().as_str(), s);
        }
        assert_eq!(RefState::parse("Visible"), None);
        assert_eq!(RefState::parse("attached"), None);
    }
}
