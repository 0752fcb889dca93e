//! `/api/control/browser/select`, `/scroll`, `/scroll_to`, `/viewport` and `/tabs`
//! (protocol §9.7): choosing options, scrolling, the viewport and the tabs of a browser pane.

use axum::extract::State;
use axum::{Extension, Json};
use serde::Deserialize;
use serde_json::{json, Value};

use super::body::JsonBody;
use super::browser_pane::{browser_of, browser_to_drive, with_pane};
use super::error::ApiError;
use super::state::AppState;
use crate::automation::{AutomationError, Scroll};
use crate::browser::{Device, Viewport, ViewportMode};
use crate::control::{normalize_url, Caller};

/// Body of `POST /api/control/browser/select`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SelectReq {
    #[serde(default)]
    pane: Option<String>,
    #[serde(rename = "ref")]
    r#ref: String,
    values: Vec<String>,
}

/// Most values `select` takes.
const MAX_SELECT_VALUES: usize = 256;

/// `POST /api/control/browser/select` `{"ref","values":[V…]}` → `{"ref","value","label",
/// "changed","dialog"}` (a multiple-choice select: `"values","labels"`).
pub async fn select(
    State(st): State<AppState>,
    Extension(caller): Extension<Caller>,
    JsonBody(req): JsonBody<SelectReq>,
) -> Result<Json<Value>, ApiError> {
    if req.values.is_empty() || req.values.len() > MAX_SELECT_VALUES {
        return Err(ApiError::BadRequest(format!("select takes 1..={MAX_SELECT_VALUES} values")));
    }
    if req.values.iter().any(|v| v.len() > 1024) {
        return Err(ApiError::BadRequest("a value is at most 1024 bytes".into()));
    }
    let (h, b) = browser_to_drive(&st, caller, req.pane.as_deref())?;
    Ok(with_pane(st.automation.select(&b, &req.r#ref, &req.values).await?, h, &b))
}

/// Body of `POST /api/control/browser/set`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetReq {
    #[serde(default)]
    pane: Option<String>,
    #[serde(rename = "ref")]
    r#ref: String,
    value: String,
}

/// `POST /api/control/browser/set` `{"ref","value"}` → `{"ref","value","scripted"?,
/// "evidence"}`: a date, time, datetime-local, month, week, range or colour input given the
/// value (its HTML spelling, at most 64 bytes) as a user gives it, read back (`409 mismatch`
/// when the field shows something else).
pub async fn set(
    State(st): State<AppState>,
    Extension(caller): Extension<Caller>,
    JsonBody(req): JsonBody<SetReq>,
) -> Result<Json<Value>, ApiError> {
    if req.value.is_empty() || req.value.len() > 64 {
        return Err(ApiError::BadRequest("a value is 1..=64 bytes".into()));
    }
    let (h, b) = browser_to_drive(&st, caller, req.pane.as_deref())?;
    Ok(with_pane(st.automation.set(&b, &req.r#ref, &req.value).await?, h, &b))
}

/// Body of `POST /api/control/browser/scroll`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScrollReq {
    #[serde(default)]
    pane: Option<String>,
    #[serde(default, rename = "ref")]
    r#ref: Option<String>,
    to: String,
}

/// `POST /api/control/browser/scroll` `{"to":"up"|"down"|"top"|"bottom"|"PX","ref"?}` →
/// `{"point","delta"}` (one trusted wheel event).
pub async fn scroll(
    State(st): State<AppState>,
    Extension(caller): Extension<Caller>,
    JsonBody(req): JsonBody<ScrollReq>,
) -> Result<Json<Value>, ApiError> {
    let how = Scroll::parse(&req.to).ok_or_else(|| {
        ApiError::BadRequest("to must be up, down, top, bottom or a number of CSS px (|PX| ≤ 1000000)".into())
    })?;
    let (h, b) = browser_to_drive(&st, caller, req.pane.as_deref())?;
    Ok(with_pane(st.automation.scroll(&b, req.r#ref.as_deref(), how).await?, h, &b))
}

/// Body of `POST /api/control/browser/scroll_to`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScrollToReq {
    #[serde(default)]
    pane: Option<String>,
    #[serde(rename = "ref")]
    r#ref: String,
}

/// `POST /api/control/browser/scroll_to` `{"ref"}` → `{"ref","rect":{"x","y","width",
/// "height"}}`; `409 element_not_visible` when nothing of it shows.
pub async fn scroll_to(
    State(st): State<AppState>,
    Extension(caller): Extension<Caller>,
    JsonBody(req): JsonBody<ScrollToReq>,
) -> Result<Json<Value>, ApiError> {
    let (h, b) = browser_to_drive(&st, caller, req.pane.as_deref())?;
    Ok(with_pane(st.automation.scroll_to(&b, &req.r#ref).await?, h, &b))
}

/// Body of `POST /api/control/browser/viewport`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ViewportReq {
    #[serde(default)]
    pane: Option<String>,
    width: i64,
    height: i64,
    #[serde(default)]
    dpr: Option<f64>,
}

/// `POST /api/control/browser/viewport` `{"width","height","dpr"?}` → `{"viewport"}` as
/// measured after the write (fixed size, §8.2's bounds; `dpr` default 1).
pub async fn viewport(
    State(st): State<AppState>,
    Extension(caller): Extension<Caller>,
    JsonBody(req): JsonBody<ViewportReq>,
) -> Result<Json<Value>, ApiError> {
    let vp = Viewport::checked(req.width, req.height, req.dpr.unwrap_or(1.0))?;
    let (h, b) = browser_to_drive(&st, caller, req.pane.as_deref())?;
    no_dialog(&b)?;
    st.automation
        .mutate(&b, "viewport", async { Ok(b.set_viewport(ViewportMode::Fixed(vp, Device::Desktop)).await?) })
        .await?;
    let measured = b.measure().await.ok();
    Ok(with_pane(json!({"viewport": measured}), h, &b))
}

/// Body of `POST /api/control/browser/tabs`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TabsReq {
    #[serde(default)]
    pane: Option<String>,
    #[serde(default)]
    action: Option<String>,
    #[serde(default)]
    tab: Option<String>,
    #[serde(default)]
    url: Option<String>,
}

/// `POST /api/control/browser/tabs` `{"action"?: "new"|"select"|"close", "tab"?: N|ID,
/// "url"?}` → the tabs after it `{"tabs":[{"id","url","title"}],"active","dialog"}`. Without
/// an action it only lists (answered while a dialog is pending). `tab`: a 1-based position
/// or a target id; `new` opens `url` in a new active tab.
pub async fn tabs(
    State(st): State<AppState>,
    Extension(caller): Extension<Caller>,
    JsonBody(req): JsonBody<TabsReq>,
) -> Result<Json<Value>, ApiError> {
    let (h, b) = browser_of(&st, caller, req.pane.as_deref())?;
    if req.action.is_some() {
        // Listing only observes; an action changes the pane (issue 26).
        super::browser_pane::may_change(&st, caller, h)?;
    }
    if req.action.as_deref() == Some("new") {
        let url = req.url.as_deref().ok_or_else(|| ApiError::BadRequest("tabs new needs a url".into()))?;
        let url = normalize_url(url.trim())?.to_string();
        if req.tab.is_some() {
            return Err(ApiError::BadRequest("tabs new takes a url, not a tab".into()));
        }
        no_dialog(&b)?;
        st.automation.mutate(&b, "new tab", async { Ok(b.new_tab(url).await?) }).await?;
    } else if req.url.is_some() {
        return Err(ApiError::BadRequest("url goes with tabs new".into()));
    } else if let Some(action) = req.action.as_deref() {
        let tab = req.tab.as_deref().ok_or_else(|| ApiError::BadRequest(format!("tabs {action} needs a tab")))?;
        let view = b.subscribe().borrow().clone();
        let id = match tab.parse::<usize>() {
            Ok(n) => view.tabs.get(n.wrapping_sub(1)).map(|t| t.id.clone()),
            Err(_) => view.tabs.iter().find(|t| t.id == tab).map(|t| t.id.clone()),
        }
        .ok_or_else(|| {
            ApiError::BadRequest(format!("no tab {tab:?}: there are {} (ph browser tabs)", view.tabs.len()))
        })?;
        match action {
            "select" => {
                no_dialog(&b)?;
                st.automation.mutate(&b, "select tab", async { Ok(b.select_tab(&id).await?) }).await?
            }
            "close" => st.automation.mutate(&b, "close tab", async { Ok(b.close_tab(&id).await?) }).await?,
            _ => return Err(ApiError::BadRequest("action must be new, select or close".into())),
        }
    } else if req.tab.is_some() {
        return Err(ApiError::BadRequest("tab goes with an action".into()));
    }
    let v = b.subscribe().borrow().clone();
    Ok(with_pane(json!({"tabs": v.tabs, "active": v.active, "dialog": v.dialog}), h, &b))
}

fn no_dialog(b: &crate::browser::BrowserRef) -> Result<(), ApiError> {
    match b.subscribe().borrow().dialog.clone() {
        Some(d) => Err(AutomationError::DialogPending(d).into()),
        None => Ok(()),
    }
}
