//! `/api/control/browser/*` (protocol §9.7): the verbs of `ph browser`. Pane-token auth as
//! for every control verb; each body is rebuilt into bounded values before the `automation`
//! module sees it. The pane is a browser pane whose window reports its sidecar browser id.

use std::time::Duration;

use axum::extract::State;
use axum::{Extension, Json};
use base64::Engine;
use serde::Deserialize;
use serde_json::{json, Value};

use super::body::JsonBody;
use super::browser_pane::{browser_of, browser_to_drive, with_pane};
use super::error::ApiError;
use super::panes::open_parsed;
use super::state::AppState;
use crate::automation::{
    parse_key, Action, AutomationError, Query, Read, RefState, Snapshot, WaitFor, DEFAULT_MAX_BYTES, MAX_BYTES_RANGE,
    MAX_FILL_BYTES, MAX_TYPE_CHARS, REF_STATES,
};
use crate::browser::BrowserRef;
use crate::control::{compile_regex, normalize_url, wait_ms, Caller, Handle, OpenMode, PaneMode, DEFAULT_WAIT_MS};

/// Longest script `eval` takes, in bytes.
pub const MAX_EVAL_BYTES: usize = 64 * 1024;

/// Body of `POST /api/control/browser/open`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpenBrowserReq {
    target: String,
    #[serde(default)]
    near: Option<String>,
    /// Another pane, even when the caller has one of its own.
    #[serde(default)]
    new: bool,
    /// A new pane whose browser keeps cookies of its own (implies `new`).
    #[serde(default)]
    isolated: bool,
}

/// How long `browser open` waits for the new pane's Chromium to be up and reported.
const BROWSER_START_WAIT: Duration = Duration::from_secs(20);

/// `POST /api/control/browser/open` → `{"handle","url","mode","reused"}`: the URL asked
/// for (path, query and fragment included) in a screencast pane, answered once the pane's
/// browser is live and has loaded it, so the next verb can act on it; the caller's own pane
/// from now on (issue 26). From a terminal: its own pane goes to the URL (`reused`), else
/// (none, one another terminal drives now, or `new`) a new pane opens; another terminal's
/// pane is never reused. With no caller (the app): the pane showing that origin is reused
/// and goes to the URL. `isolated`: a new pane whose browser keeps cookies of its own, out of
/// the shared login. A pane whose browser does not come up within 20 s → 500 `unverified`
/// (the pane was opened).
pub async fn open_browser(
    State(st): State<AppState>,
    Extension(caller): Extension<Caller>,
    JsonBody(req): JsonBody<OpenBrowserReq>,
) -> Result<Json<Value>, ApiError> {
    let mode = Some(OpenMode::Pane(PaneMode::Screencast));
    let new = req.new || req.isolated;
    let own = caller.0.filter(|_| !new).and_then(|c| {
        let h = st.control.drivers.own(c)?;
        let (state, _) = st.control.windows.state();
        let p = state.by_handle(h)?;
        let driven_by_caller = st.control.drivers.driver(h).is_none_or(|d| d == c);
        (p.mode.is_some_and(|m| m.has_chromium()) && driven_by_caller).then_some(h)
    });
    let out = match own {
        Some(h) => {
            let url = super::panes::open_target_url(&st, caller, req.target.trim()).await?;
            Json(json!({"handle": h.to_string(), "url": url.to_string(), "mode": "screencast", "reused": true}))
        }
        None => {
            Json(open_parsed(&st, caller, &req.target, mode, req.near, caller.0.is_none() && !new, req.isolated).await?)
        }
    };
    let Some(h) = out.0["handle"].as_str().and_then(|h| h.parse::<Handle>().ok()) else { return Ok(out) };
    if out.0["reused"] == true {
        // A reused pane goes to the URL asked for, unless it shows it already.
        let (h, b) = browser_to_drive(&st, caller, Some(&h.to_string()))?;
        let want = out.0["url"].as_str().unwrap_or_default().to_string();
        let shows = b.active_page().ok().and_then(|_| {
            let view = b.subscribe().borrow().clone();
            view.tabs.iter().find(|t| Some(&t.id) == view.active.as_ref()).map(|t| t.url.clone())
        });
        if shows.as_deref() != Some(want.as_str()) {
            st.automation.navigate(&b, want.clone()).await?;
        }
        let mut v = out.0;
        v["url"] = want.into();
        let deadline = tokio::time::Instant::now() + BROWSER_START_WAIT;
        while !first_page_loaded(&b).await && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        if let Some(c) = caller.0 {
            st.control.note_opened(c, h);
        }
        return Ok(Json(v));
    }
    let deadline = tokio::time::Instant::now() + BROWSER_START_WAIT;
    loop {
        let (state, _) = st.control.windows.state();
        let id = state.by_handle(h).and_then(|p| p.browser.clone());
        if let Some(b) = id.and_then(|id| st.browsers.get(&id)).filter(|b| b.active_page().is_ok()) {
            // The next verb (a snapshot, most often) must see the page, not the blank tab
            // before it: wait for its first load too, within the same bound; a page that
            // loads slower is answered as it is (its own `wait --load` is the agent's).
            while !first_page_loaded(&b).await && tokio::time::Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            return Ok(out);
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(crate::control::ControlError::Unverified(format!(
                "{h} was opened but its browser did not start within {} s; see the pane",
                BROWSER_START_WAIT.as_secs()
            ))
            .into());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// True once browser `b`'s active tab shows a page (not the blank tab), is not loading, and
/// its document is `complete`.
async fn first_page_loaded(b: &BrowserRef) -> bool {
    let view = b.subscribe().borrow().clone();
    let url = view.tabs.iter().find(|t| Some(&t.id) == view.active.as_ref()).map(|t| t.url.clone()).unwrap_or_default();
    if view.loading || url.is_empty() || url == "about:blank" {
        return false;
    }
    let Ok(page) = b.active_page() else { return false };
    crate::browser::eval_in(&page, "document.readyState".into()).await.ok() == Some(json!("complete"))
}

/// Body of `POST /api/control/browser/snapshot`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SnapshotReq {
    #[serde(default)]
    pane: Option<String>,
    #[serde(default)]
    interactive: bool,
    #[serde(default)]
    max_bytes: Option<usize>,
    #[serde(default, rename = "ref")]
    r#ref: Option<String>,
    #[serde(default)]
    sealed: bool,
    #[serde(default)]
    from: Option<String>,
    #[serde(default)]
    query: Option<String>,
    #[serde(default)]
    diff: bool,
}

/// `POST /api/control/browser/snapshot` → the outline (protocol §9.7): of the page, or of the
/// element `ref` and what is inside it; continued from a cursor (`from`), filtered
/// (`query`), or only what changed since this caller's last one (`diff`).
pub async fn snapshot(
    State(st): State<AppState>,
    Extension(caller): Extension<Caller>,
    JsonBody(req): JsonBody<SnapshotReq>,
) -> Result<Json<Value>, ApiError> {
    let max = req.max_bytes.unwrap_or(DEFAULT_MAX_BYTES);
    if !MAX_BYTES_RANGE.contains(&max) {
        return Err(ApiError::BadRequest(format!(
            "max_bytes must be {}..={}, got {max}",
            MAX_BYTES_RANGE.start(),
            MAX_BYTES_RANGE.end()
        )));
    }
    let query = match req.query.as_deref() {
        Some(q) if q.len() > 1024 => return Err(ApiError::BadRequest("query is at most 1024 bytes".into())),
        Some(q) => Some(Query::parse(q).map_err(ApiError::BadRequest)?),
        None => None,
    };
    if req.diff && (req.from.is_some() || req.r#ref.is_some() || query.is_some()) {
        return Err(ApiError::BadRequest("diff is of the whole page: it takes no from, ref or query".into()));
    }
    let (h, b) = browser_of(&st, caller, req.pane.as_deref())?;
    let policy = super::browser_sealed::policy_of(&st);
    if req.sealed {
        // Refused before anything is read.
        policy.allow(crate::automation::sealed::Lever::Discovery)?;
    }
    let o = Snapshot {
        interactive: req.interactive,
        max_bytes: max,
        root: req.r#ref.clone(),
        from: req.from.clone(),
        query,
        diff: req.diff,
        caller: format!("{:?}", caller.0),
    };
    let mut out = st.automation.snapshot(&b, &o, &policy).await?;
    if req.sealed {
        super::browser_sealed::add_sealed(&st, &b, &policy, &mut out).await?;
    }
    out["policy"] = policy.to_json();
    Ok(with_pane(out, h, &b))
}

/// Body of `POST /api/control/browser/act`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ActReq {
    #[serde(default)]
    pane: Option<String>,
    action: String,
    #[serde(default, rename = "ref")]
    r#ref: Option<String>,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    key: Option<String>,
    /// `click` only: `left` (default) or `right` (the page's context menu).
    #[serde(default)]
    button: Option<String>,
}

fn action_of(req: &ActReq) -> Result<Action, ApiError> {
    let text = || req.text.clone().ok_or_else(|| ApiError::BadRequest(format!("{} needs text", req.action)));
    let a = match req.action.as_str() {
        "click" => match req.button.as_deref() {
            None | Some("left") => Action::Click,
            Some("right") => Action::RightClick,
            Some(b) => {
                return Err(ApiError::BadRequest(format!(
                    "button must be left or right, got {:?}",
                    b.chars().take(16).collect::<String>()
                )))
            }
        },
        "dblclick" => Action::DblClick,
        "hover" => Action::Hover,
        "focus" => Action::Focus,
        "check" => Action::Check(true),
        "uncheck" => Action::Check(false),
        "fill" => {
            let t = text()?;
            if t.len() > MAX_FILL_BYTES {
                return Err(ApiError::BadRequest(format!("text is over {MAX_FILL_BYTES} bytes")));
            }
            Action::Fill(t)
        }
        "type" => {
            let t = text()?;
            if t.is_empty() || t.chars().count() > MAX_TYPE_CHARS {
                return Err(ApiError::BadRequest(format!("type takes 1..={MAX_TYPE_CHARS} characters")));
            }
            Action::Type(t)
        }
        "press" => {
            let k = req.key.as_deref().ok_or_else(|| ApiError::BadRequest("press needs a key".into()))?;
            Action::Press(parse_key(k)?)
        }
        a => {
            return Err(ApiError::BadRequest(format!(
                "action must be click, dblclick, hover, focus, check, uncheck, fill, type or press, got {:?}",
                a.chars().take(32).collect::<String>()
            )))
        }
    };
    if req.button.is_some() && !matches!(a, Action::Click | Action::RightClick) {
        return Err(ApiError::BadRequest(format!("{} takes no button", req.action)));
    }
    let takes_text = matches!(a, Action::Fill(_) | Action::Type(_));
    if req.text.is_some() && !takes_text {
        return Err(ApiError::BadRequest(format!("{} takes no text", req.action)));
    }
    if req.key.is_some() && !matches!(a, Action::Press(_)) {
        return Err(ApiError::BadRequest(format!("{} takes no key", req.action)));
    }
    if req.r#ref.is_none() && !matches!(a, Action::Press(_)) {
        return Err(ApiError::BadRequest(format!("{} needs a ref", req.action)));
    }
    Ok(a)
}

/// `POST /api/control/browser/act` → what was done (protocol §9.7).
pub async fn act(
    State(st): State<AppState>,
    Extension(caller): Extension<Caller>,
    JsonBody(req): JsonBody<ActReq>,
) -> Result<Json<Value>, ApiError> {
    let action = action_of(&req)?;
    let (h, b) = browser_to_drive(&st, caller, req.pane.as_deref())?;
    if let Some(r) = req.r#ref.as_deref().filter(|r| crate::automation::sealed::is_token(r)) {
        let policy = super::browser_sealed::policy_of(&st);
        return Ok(with_pane(st.automation.act_sealed(&b, r, &action, &policy).await?, h, &b));
    }
    Ok(with_pane(st.automation.act(&b, req.r#ref.as_deref(), &action).await?, h, &b))
}

/// Body of `POST /api/control/browser/get`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GetReq {
    #[serde(default)]
    pane: Option<String>,
    what: String,
    #[serde(rename = "ref")]
    r#ref: String,
}

/// `POST /api/control/browser/get` → `{"ref","text"}` or `{"ref","value"}`.
pub async fn get(
    State(st): State<AppState>,
    Extension(caller): Extension<Caller>,
    JsonBody(req): JsonBody<GetReq>,
) -> Result<Json<Value>, ApiError> {
    let what = match req.what.as_str() {
        "text" => Read::Text,
        "value" => Read::Value,
        _ => return Err(ApiError::BadRequest("what must be text or value".into())),
    };
    let (h, b) = browser_of(&st, caller, req.pane.as_deref())?;
    Ok(with_pane(st.automation.get(&b, what, &req.r#ref).await?, h, &b))
}

/// Body of `POST /api/control/browser/wait`: exactly one of `text`, `gone`, `url`, `load`,
/// `ref` (with `state`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WaitReq {
    #[serde(default)]
    pane: Option<String>,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    gone: Option<String>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    load: bool,
    #[serde(default, rename = "ref")]
    r#ref: Option<String>,
    #[serde(default)]
    state: Option<String>,
    #[serde(default)]
    event: Option<String>,
    #[serde(default)]
    timeout_ms: Option<u64>,
}

/// Longest `text`/`gone` string `wait` takes, in bytes.
const MAX_WAIT_TEXT_BYTES: usize = 1024;

/// `POST /api/control/browser/wait` → `{"waited_ms"}` (with `event`: `{"event","waited_ms"}`,
/// the active tab's next event of that kind), or `408 timed_out`.
pub async fn wait(
    State(st): State<AppState>,
    Extension(caller): Extension<Caller>,
    JsonBody(req): JsonBody<WaitReq>,
) -> Result<Json<Value>, ApiError> {
    let timeout = wait_ms("timeout_ms", req.timeout_ms, DEFAULT_WAIT_MS)?;
    let text = |t: String| {
        if t.is_empty() || t.len() > MAX_WAIT_TEXT_BYTES {
            Err(ApiError::BadRequest(format!("the text must be 1..={MAX_WAIT_TEXT_BYTES} bytes")))
        } else {
            Ok(t)
        }
    };
    if let Some(kind) = req.event.as_deref() {
        let others = req.text.is_some() || req.gone.is_some() || req.url.is_some() || req.load || req.r#ref.is_some();
        if others {
            return Err(ApiError::BadRequest("wait for exactly one of text, gone, url, load, ref, event".into()));
        }
        if !crate::automation::EVENT_KINDS.contains(&kind) {
            return Err(ApiError::BadRequest(format!(
                "event must be one of {}, got {:?}",
                crate::automation::EVENT_KINDS.join(", "),
                kind.chars().take(32).collect::<String>()
            )));
        }
        let (h, b) = browser_of(&st, caller, req.pane.as_deref())?;
        return Ok(with_pane(st.automation.wait_event(&b, kind, timeout).await?, h, &b));
    }
    let mut conds = Vec::new();
    if let Some(t) = req.text {
        conds.push(WaitFor::Text(text(t)?));
    }
    if let Some(t) = req.gone {
        conds.push(WaitFor::Gone(text(t)?));
    }
    if let Some(u) = req.url {
        conds.push(WaitFor::Url(compile_regex(&u)?));
    }
    if req.load {
        conds.push(WaitFor::Load);
    }
    match (req.r#ref, req.state) {
        (Some(r), Some(s)) => {
            let state = RefState::parse(&s).ok_or_else(|| {
                ApiError::BadRequest(format!(
                    "state must be one of {}, got {:?}",
                    REF_STATES.join(", "),
                    s.chars().take(32).collect::<String>()
                ))
            })?;
            conds.push(WaitFor::RefState(r, state));
        }
        (None, None) => {}
        _ => return Err(ApiError::BadRequest("ref and state go together".into())),
    }
    let [what] = <[WaitFor; 1]>::try_from(conds)
        .map_err(|_| ApiError::BadRequest("wait for exactly one of text, gone, url, load, ref, event".into()))?;
    let (h, b) = browser_of(&st, caller, req.pane.as_deref())?;
    Ok(with_pane(st.automation.wait(&b, &what, timeout).await?, h, &b))
}

/// Body of `POST /api/control/browser/screenshot`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScreenshotReq {
    #[serde(default)]
    pane: Option<String>,
    #[serde(default, rename = "ref")]
    r#ref: Option<String>,
    #[serde(default)]
    full: bool,
    #[serde(default)]
    parts: bool,
    #[serde(default)]
    annotate: bool,
    #[serde(default)]
    max_side: Option<u32>,
}

/// Bounds of `max_side`, in device pixels.
const MAX_SIDE_RANGE: std::ops::RangeInclusive<u32> = 64..=16_384;

/// `POST /api/control/browser/screenshot` → `{"png": base64, "bytes": N}`; with `parts`,
/// also `"parts": N`, the closed hosts' parts outlined for this capture (as the policy
/// allows: `agent.sealed.part_highlight`); with `annotate` (the viewport only), also
/// `"boxes":[{"n","ref","role","name","rect"}],"unboxed","legend"`; with `max_side`, scaled
/// down so that its longer side is at most that many pixels.
pub async fn screenshot(
    State(st): State<AppState>,
    Extension(caller): Extension<Caller>,
    JsonBody(req): JsonBody<ScreenshotReq>,
) -> Result<Json<Value>, ApiError> {
    if req.full && req.r#ref.is_some() {
        return Err(ApiError::BadRequest("full and ref do not go together".into()));
    }
    if req.max_side.is_some_and(|m| !MAX_SIDE_RANGE.contains(&m)) {
        return Err(ApiError::BadRequest(format!(
            "max_side must be {}..={}",
            MAX_SIDE_RANGE.start(),
            MAX_SIDE_RANGE.end()
        )));
    }
    if req.annotate && (req.full || req.r#ref.is_some() || req.parts) {
        return Err(ApiError::BadRequest("annotate is of the viewport (not with ref, full or parts)".into()));
    }
    if req.max_side.is_some() && req.parts {
        return Err(ApiError::BadRequest("max_side does not go with parts".into()));
    }
    let (h, b) = browser_of(&st, caller, req.pane.as_deref())?;
    if req.annotate {
        let (png, boxes, more) = st.automation.screenshot_annotated(&b, req.max_side).await?;
        let data = base64::engine::general_purpose::STANDARD.encode(&png);
        let legend = crate::automation::legend(&boxes, more);
        return Ok(with_pane(
            json!({"png": data, "bytes": png.len(), "boxes": boxes, "unboxed": more, "legend": legend}),
            h,
            &b,
        ));
    }
    if let Some(max) = req.max_side.filter(|_| !req.r#ref.as_deref().is_some_and(crate::automation::sealed::is_token)) {
        let png = st.automation.screenshot_scaled(&b, req.r#ref.as_deref(), req.full, Some(max)).await?;
        let data = base64::engine::general_purpose::STANDARD.encode(&png);
        return Ok(with_pane(json!({"png": data, "bytes": png.len()}), h, &b));
    }
    if req.parts {
        let policy = super::browser_sealed::policy_of(&st);
        let (png, parts) = st.automation.screenshot_parts(&b, req.r#ref.as_deref(), req.full, &policy).await?;
        let data = base64::engine::general_purpose::STANDARD.encode(&png);
        return Ok(with_pane(json!({"png": data, "bytes": png.len(), "parts": parts}), h, &b));
    }
    let policy = super::browser_sealed::policy_of(&st);
    let png = st.automation.any_screenshot(&b, req.r#ref.as_deref(), req.full, &policy).await?;
    let data = base64::engine::general_purpose::STANDARD.encode(&png);
    Ok(with_pane(json!({"png": data, "bytes": png.len()}), h, &b))
}

/// Body of `POST /api/control/browser/navigate`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NavigateReq {
    #[serde(default)]
    pane: Option<String>,
    url: String,
}

/// `POST /api/control/browser/navigate` → `{"url","dialog"}` once the navigation has
/// started, or once the page's `beforeunload` dialog holds it (`dialog`, never answered).
pub async fn navigate(
    State(st): State<AppState>,
    Extension(caller): Extension<Caller>,
    JsonBody(req): JsonBody<NavigateReq>,
) -> Result<Json<Value>, ApiError> {
    let url = normalize_url(req.url.trim())?.to_string();
    let (h, b) = browser_to_drive(&st, caller, req.pane.as_deref())?;
    let dialog = st.automation.navigate(&b, url.clone()).await?;
    Ok(with_pane(json!({"url": url, "dialog": dialog}), h, &b))
}

/// Body of `POST /api/control/browser/history`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HistoryReq {
    #[serde(default)]
    pane: Option<String>,
    action: String,
}

/// `POST /api/control/browser/history` `{"action":"back"|"forward"|"reload"}` →
/// `{"action","dialog"}` once started (or held by a `beforeunload` dialog).
pub async fn history(
    State(st): State<AppState>,
    Extension(caller): Extension<Caller>,
    JsonBody(req): JsonBody<HistoryReq>,
) -> Result<Json<Value>, ApiError> {
    let delta = match req.action.as_str() {
        "back" => Some(-1),
        "forward" => Some(1),
        "reload" => None,
        _ => return Err(ApiError::BadRequest("action must be back, forward or reload".into())),
    };
    let (h, b) = browser_to_drive(&st, caller, req.pane.as_deref())?;
    let dialog = match delta {
        Some(d) => st.automation.history(&b, d).await?,
        None => st.automation.reload(&b).await?,
    };
    Ok(with_pane(json!({"action": req.action, "dialog": dialog}), h, &b))
}

/// Body of `POST /api/control/browser/dialog`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DialogReq {
    #[serde(default)]
    pane: Option<String>,
    action: String,
    #[serde(default)]
    text: Option<String>,
}

/// `POST /api/control/browser/dialog` `{"action":"accept"|"dismiss","text"?}` → the dialog
/// answered.
pub async fn dialog(
    State(st): State<AppState>,
    Extension(caller): Extension<Caller>,
    JsonBody(req): JsonBody<DialogReq>,
) -> Result<Json<Value>, ApiError> {
    let accept = match req.action.as_str() {
        "accept" => true,
        "dismiss" => false,
        _ => return Err(ApiError::BadRequest("action must be accept or dismiss".into())),
    };
    if req.text.as_ref().is_some_and(|t| !accept || t.len() > MAX_FILL_BYTES) {
        return Err(ApiError::BadRequest(format!("text goes with accept, at most {MAX_FILL_BYTES} bytes")));
    }
    let (h, b) = browser_to_drive(&st, caller, req.pane.as_deref())?;
    Ok(with_pane(st.automation.dialog(&b, accept, req.text).await?, h, &b))
}

/// Body of `POST /api/control/browser/eval`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EvalReq {
    #[serde(default)]
    pane: Option<String>,
    js: String,
    #[serde(default)]
    allow_eval: bool,
}

/// `POST /api/control/browser/eval` → `{"value"}`; `400 eval_not_allowed` without
/// `allow_eval: true`.
pub async fn eval(
    State(st): State<AppState>,
    Extension(caller): Extension<Caller>,
    JsonBody(req): JsonBody<EvalReq>,
) -> Result<Json<Value>, ApiError> {
    if !req.allow_eval {
        return Err(AutomationError::EvalNotAllowed.into());
    }
    if req.js.is_empty() || req.js.len() > MAX_EVAL_BYTES {
        return Err(ApiError::BadRequest(format!("js must be 1..={MAX_EVAL_BYTES} bytes")));
    }
    let (h, b) = browser_to_drive(&st, caller, req.pane.as_deref())?;
    Ok(with_pane(st.automation.eval(&b, req.js).await?, h, &b))
}
