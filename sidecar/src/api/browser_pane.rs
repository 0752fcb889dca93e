//! The browser pane a `ph browser` verb acts on, for every `browser_*.rs` handler file: the
//! control plane resolves the pane and says whether it can be driven
//! (`Resolved::browser_id`); this joins that with the sidecar's browsers.

use axum::Json;
use serde_json::Value;

use super::error::ApiError;
use super::state::AppState;
use crate::automation::AutomationError;
use crate::browser::BrowserRef;
use crate::control::{Caller, Handle, Target};

/// The browser pane a verb acts on: `pane` (a target), else the caller's default
/// (`Control::default_browser`); refused (`not_automatable`) unless it is a screencast or
/// popped-out pane with a live browser.
pub(super) fn browser_of(st: &AppState, caller: Caller, pane: Option<&str>) -> Result<(Handle, BrowserRef), ApiError> {
    let r = match pane {
        Some(p) => st.control.resolve(&Target::parse(p)?, caller.0)?,
        None => st.control.default_browser(caller.0)?,
    };
    let h = r.handle;
    let id = r.browser_id().map_err(|e| AutomationError::NotAutomatable(e.to_string()))?;
    let b = st
        .browsers
        .get(id)
        .ok_or_else(|| AutomationError::NotAutomatable(format!("{h}'s browser {id} is gone; reload the pane")))?;
    Ok((h, b))
}

/// As [`browser_of`], for a verb that changes the page (issue 26): refused `handed_over`
/// while the pane is handed to the human, `pane_in_use` when another terminal drives it
/// (`control::Drivers::may_drive`); a pane nobody drives becomes the caller's.
pub(super) fn browser_to_drive(
    st: &AppState,
    caller: Caller,
    pane: Option<&str>,
) -> Result<(Handle, BrowserRef), ApiError> {
    let (h, b) = browser_of(st, caller, pane)?;
    may_change(st, caller, h)?;
    Ok((h, b))
}

/// `Ok` when `caller` may change browser pane `h` now: not handed to the human
/// (`handed_over`), and not driven by another terminal (`pane_in_use`).
pub(super) fn may_change(st: &AppState, caller: Caller, h: Handle) -> Result<(), ApiError> {
    st.control.handoffs.check(h)?;
    st.control.drivers.may_drive(caller.0, h)?;
    Ok(())
}

/// `v` with `"pane"`: the handle acted on; and `"watchdog"`: the lines of what the watchdog
/// found on `b` since the last answer (a stalled navigation, an unresponsive page), when any
/// (issue 25 item 8: said in the next verb's answer, once).
pub(super) fn with_pane(mut v: Value, h: Handle, b: &BrowserRef) -> Json<Value> {
    v["pane"] = h.to_string().into();
    let notes = crate::automation::take_watchdog_notes(b.id());
    if !notes.is_empty() {
        v["watchdog"] = notes.into();
    }
    Json(v)
}
