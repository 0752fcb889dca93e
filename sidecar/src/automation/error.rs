//! The refusals of `ph browser` (protocol §9.7), each with a stable code. Nothing was done
//! when one of them is returned, except `mismatch` (the input was sent; the page did not
//! take it), `unknown_outcome` (part of the input was sent, then the page changed),
//! `user_interrupted` (stopped part way by the human) and `timed_out`.

use std::fmt;

use serde_json::{json, Value};

use crate::browser::{BrowserError, Dialog};

/// Why a ref no longer names a node (DESIGN §12).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StaleReason {
    /// The frame's document was replaced by a navigation to another URL.
    Navigated,
    /// The frame's document was replaced at the same URL (a reload, `document.open`, a
    /// same-URL navigation): a new `loaderId`.
    DocumentReplaced,
    /// The frame that held the node is gone.
    FrameDetached,
    /// The tab that held the node was closed.
    TabClosed,
    /// Chromium was relaunched (or popped out or in) since the ref was minted.
    Relaunched,
    /// The node was removed from its document.
    NodeRemoved,
}

impl StaleReason {
    /// The reason's stable name.
    pub fn as_str(self) -> &'static str {
        match self {
            StaleReason::Navigated => "navigated",
            StaleReason::DocumentReplaced => "document_replaced",
            StaleReason::FrameDetached => "frame_detached",
            StaleReason::TabClosed => "tab_closed",
            StaleReason::Relaunched => "relaunched",
            StaleReason::NodeRemoved => "node_removed",
        }
    }
}

/// What changed under an action and stopped it (`unknown_outcome`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interruption {
    /// A navigation began in the element's frame or one of its ancestors (its document is
    /// being replaced).
    Navigated,
    /// The focus left the element the keys were typed into.
    FocusMoved,
}

impl Interruption {
    /// The reason's stable name.
    pub fn as_str(self) -> &'static str {
        match self {
            Interruption::Navigated => "navigated",
            Interruption::FocusMoved => "focus_moved",
        }
    }
}

/// Most refs of the covering element's controls an `element_occluded` gives.
pub const MAX_COVER_CONTROLS: usize = 3;

/// Every way a `ph browser` verb can be refused or fail.
#[derive(Debug)]
pub enum AutomationError {
    /// Occurs when a value is out of bounds or malformed. 400 `bad_request`.
    BadRequest(String),
    /// Occurs when `eval` is asked without `allow_eval`. 400 `eval_not_allowed`.
    EvalNotAllowed,
    /// Occurs when a ref was never given out (`e99`). 404 `unknown_ref`.
    UnknownRef(String),
    /// Occurs when the pane is an iframe pane, which has no Chromium to drive, or has no
    /// browser yet. 409 `not_automatable`; the message names the command that switches it.
    NotAutomatable(String),
    /// Occurs when a ref names a node of a document, frame, tab or Chromium that is gone.
    /// 409 `stale_ref` with `reason`.
    StaleRef {
        /// The ref as given.
        r#ref: String,
        /// Why it is stale.
        reason: StaleReason,
    },
    /// Occurs when a ref names a node in a tab that is not the active one. 409 `not_active_tab`.
    NotActiveTab(String),
    /// Occurs when a JavaScript dialog is pending and the verb is not `dialog`, `tabs` or
    /// `screenshot`. 409 `dialog_pending` with the dialog.
    DialogPending(Dialog),
    /// Occurs when the element has no visible box in the viewport after scrolling (hidden,
    /// zero-size, clipped away). 409 `element_not_visible`.
    NotVisible(String),
    /// Occurs when the element is disabled or inert. 409 `element_disabled`.
    Disabled(String),
    /// Occurs when another element is on top at the point the input would land. 409
    /// `element_occluded`; `by` names it (`dialog "Cookie consent"` by role and accessible
    /// name, else `div#overlay "Cookie banner"`), `controls` up to 3 refs of what can be
    /// acted on inside it.
    Occluded {
        /// The ref acted on.
        r#ref: String,
        /// The covering element.
        by: String,
        /// The covering element's frame and `backendNodeId` (not shown), when it is of the
        /// element's frame: what names it as the snapshot does.
        cover: Option<(String, i64)>,
        /// Up to [`MAX_COVER_CONTROLS`] controls inside it: (outline label, ref).
        controls: Vec<(String, String)>,
    },
    /// Occurs when `fill` or `type` targets an element that takes no text. 409 `not_editable`.
    NotEditable(String),
    /// Occurs when `get value` names a password or credit-card field. 409 `secret_value`.
    SecretValue(String),
    /// Occurs when the input was sent but the page shows another result (a controlled input
    /// that rejected the value, a checkbox that did not change). 409 `mismatch` with
    /// `observed` (for a secret field, its length only).
    Mismatch {
        /// What was wanted and what was seen, in a sentence.
        message: String,
        /// What the page shows now.
        observed: Value,
    },
    /// Occurs when `snapshot --from` is given a cursor of another document, or of a
    /// snapshot with other options (`-i`, `--query`, `--ref`). 409 `stale_cursor`.
    StaleCursor(String),
    /// Occurs when the element's document or the focus changed in the middle of an action
    /// (a key press navigated, a handler moved the focus): the rest of its input was not
    /// sent and nothing was verified. 409 `unknown_outcome` with `reason` (`navigated`,
    /// `focus_moved`) and `delivered` (what was sent; a secret field's text never).
    UnknownOutcome {
        /// What was sent, what changed, and what was not sent, in a sentence.
        message: String,
        /// What changed.
        reason: Interruption,
        /// What was sent (`{"keys","of"}`, `{"text"}` unless secret, `{"steps"}`…).
        delivered: Value,
    },
    /// Occurs when `wait` reaches its timeout. 408 `timed_out`.
    TimedOut(String),
    /// Occurs when a mutating verb (named) waited [`crate::constants::TURN_WAIT_MS`] for the one
    /// before it on the same tab. 409 `tab_busy`; nothing was done.
    TabBusy(String),
    /// Occurs when the human pressed a button or key in a view of the pane while the action
    /// (named) ran: it was stopped where it was (part of its input may have reached the
    /// page). 409 `user_interrupted`.
    UserInterrupted(String),
    /// Occurs when the human's sealed-content policy (`[agent.sealed]`, issue 24) does not
    /// allow the call: 403 with `code` (`agent_disabled`, `sealed_disabled`,
    /// `focus_walk_disabled`, `frames_limit`…) and `key`, the config key (or environment
    /// variable) that allows it. Nothing was done.
    PolicyRefused {
        /// The stable code.
        code: &'static str,
        /// The config key that allows the call.
        key: &'static str,
        /// What was refused and how to allow it, in a sentence.
        message: String,
    },
    /// Occurs when a tab's sealed-scan budget (`agent.sealed.scans_per_minute`) is spent.
    /// 429 `rate_limited` with `retry_after` (whole seconds until a scan is allowed again).
    RateLimited {
        /// Seconds until the next scan is allowed, at least 1.
        retry_after: u64,
    },
    /// Occurs when the browser operation failed (protocol §8.3 codes).
    Browser(BrowserError),
}

impl AutomationError {
    /// The HTTP status (as a number) and the stable code; `None` for browser errors, whose
    /// status and code are protocol §8.3's.
    pub fn status_and_code(&self) -> Option<(u16, &'static str)> {
        use AutomationError as E;
        Some(match self {
            E::BadRequest(_) => (400, "bad_request"),
            E::EvalNotAllowed => (400, "eval_not_allowed"),
            E::UnknownRef(_) => (404, "unknown_ref"),
            E::NotAutomatable(_) => (409, "not_automatable"),
            E::StaleRef { .. } => (409, "stale_ref"),
            E::NotActiveTab(_) => (409, "not_active_tab"),
            E::DialogPending(_) => (409, "dialog_pending"),
            E::NotVisible(_) => (409, "element_not_visible"),
            E::Disabled(_) => (409, "element_disabled"),
            E::Occluded { .. } => (409, "element_occluded"),
            E::NotEditable(_) => (409, "not_editable"),
            E::SecretValue(_) => (409, "secret_value"),
            E::Mismatch { .. } => (409, "mismatch"),
            E::UnknownOutcome { .. } => (409, "unknown_outcome"),
            E::StaleCursor(_) => (409, "stale_cursor"),
            E::TimedOut(_) => (408, "timed_out"),
            E::TabBusy(_) => (409, "tab_busy"),
            E::UserInterrupted(_) => (409, "user_interrupted"),
            E::PolicyRefused { code, .. } => (403, code),
            E::RateLimited { .. } => (429, "rate_limited"),
            E::Browser(_) => return None,
        })
    }

    /// Fields the error body carries beside `code` and `message`: `reason` (stale_ref),
    /// `dialog` (dialog_pending), `observed` (mismatch), `by` (element_occluded).
    pub fn details(&self) -> Vec<(&'static str, Value)> {
        match self {
            AutomationError::StaleRef { reason, .. } => vec![("reason", reason.as_str().into())],
            AutomationError::DialogPending(d) => vec![("dialog", json!(d))],
            AutomationError::Mismatch { observed, .. } => vec![("observed", observed.clone())],
            AutomationError::Occluded { by, controls, .. } => vec![
                ("by", by.clone().into()),
                ("controls", controls.iter().map(|(l, r)| json!({"ref": r, "line": l})).collect()),
            ],
            AutomationError::PolicyRefused { key, .. } => vec![("key", (*key).into())],
            AutomationError::RateLimited { retry_after } => vec![("retry_after", (*retry_after).into())],
            AutomationError::UnknownOutcome { reason, delivered, .. } => {
                vec![("reason", reason.as_str().into()), ("delivered", delivered.clone())]
            }
            _ => Vec::new(),
        }
    }
}

impl From<BrowserError> for AutomationError {
    fn from(e: BrowserError) -> Self {
        AutomationError::Browser(e)
    }
}

impl fmt::Display for AutomationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use AutomationError as E;
        match self {
            E::BadRequest(m) | E::TimedOut(m) | E::NotAutomatable(m) => f.write_str(m),
            E::PolicyRefused { message, .. } => f.write_str(message),
            E::RateLimited { retry_after } => write!(
                f,
                "this tab's sealed scans per minute are spent (agent.sealed.scans_per_minute); retry after {retry_after} s"
            ),
            E::EvalNotAllowed => f.write_str("eval runs the page's JavaScript only with --allow-eval on that call"),
            E::UnknownRef(r) => write!(f, "no element has ref {r}; take a snapshot ('ph browser snapshot -i')"),
            E::StaleRef { r#ref, reason } => write!(
                f,
                "{ref} is stale ({}): take a new snapshot; nothing was done",
                reason.as_str(),
                ref = r#ref
            ),
            E::NotActiveTab(r) => write!(f, "{r} is in a tab that is not the active one"),
            E::StaleCursor(c) => write!(
                f,
                "cursor {c} is of another document or other options; take a new snapshot (its cut note gives a new cursor)"
            ),
            E::DialogPending(d) => write!(
                f,
                "{} {} dialog is open ({:?}): answer it with 'ph browser dialog accept|dismiss'",
                a_or_an(&d.kind),
                d.kind,
                d.message
            ),
            E::NotVisible(r) => write!(f, "{r} is not visible (hidden, zero-size or clipped away)"),
            E::Disabled(r) => write!(f, "{r} is disabled"),
            E::Occluded { r#ref, by, controls, .. } if controls.is_empty() => {
                write!(f, "{ref} is covered by {by}; nothing was done", ref = r#ref)
            }
            E::Occluded { r#ref, by, controls, .. } => {
                let inside: Vec<String> = controls.iter().map(|(l, r)| format!("{l} {r}")).collect();
                write!(f, "{ref} is covered by {by} (inside it: {}); nothing was done", inside.join(", "), ref = r#ref)
            }
            E::NotEditable(r) => write!(f, "{r} does not take text"),
            E::SecretValue(r) => write!(f, "{r} is a password or payment field: its value is never read"),
            E::Mismatch { message, .. } | E::UnknownOutcome { message, .. } => f.write_str(message),
            E::TabBusy(v) => write!(
                f,
                "another action on this tab did not finish within {} s; the {v} was not done",
                crate::constants::TURN_WAIT_MS / 1000
            ),
            E::UserInterrupted(v) => write!(
                f,
                "the human pressed a button or key in the pane during the {v}: it was stopped there \
                 (part of it may have been done); look at the page before acting again"
            ),
            E::Browser(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for AutomationError {}

/// The indefinite article for `word` as printed before a role or dialog kind: `an` before a
/// vowel letter (`an alert`, `an img`), else `a` (`a confirm`, `a button`). Roles and dialog
/// kinds are lowercase ASCII words, for which the first letter decides.
pub fn a_or_an(word: &str) -> &'static str {
    match word.chars().next().map(|c| c.to_ascii_lowercase()) {
        Some('a' | 'e' | 'i' | 'o' | 'u') => "an",
        _ => "a",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pending_alert_is_an_alert_dialog() {
        let d = |kind: &str| Dialog { tab: "T".into(), kind: kind.into(), message: "hi".into(), default_prompt: None };
        let alert = AutomationError::DialogPending(d("alert")).to_string();
        assert!(alert.starts_with("an alert dialog is open"), "{alert}");
        let confirm = AutomationError::DialogPending(d("confirm")).to_string();
        assert!(confirm.starts_with("a confirm dialog is open"), "{confirm}");
        assert_eq!((a_or_an("img"), a_or_an("button"), a_or_an("")), ("an", "a", "a"));
    }
}
