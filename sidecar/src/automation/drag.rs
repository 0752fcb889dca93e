//! `drag REF REF`: trusted mouse input from the source's visible point to the target's,
//! which drives both kinds of dragging a page can have:
//!
//! - pointer-event dragging (`pointerdown`, `pointermove` with the button held, `pointerup`):
//!   a press at the source, moves in steps (with `buttons: 1`) to the target, a release;
//! - HTML5 drag and drop (`draggable`, `dragstart`…`drop`): Chromium starts a platform drag
//!   there, which CDP mouse input cannot drive. With `Input.setInterceptDrags` on, the drag
//!   the page starts is handed back (`Input.dragIntercepted`, with the page's drag data), and
//!   `Input.dispatchDragEvent` delivers `dragEnter`, `dragOver` and `drop` at the target with
//!   that data, as Chromium's own drag would; then the release.
//!
//! A navigation in the source's page mid-drag stops the rest (`unknown_outcome`).

use chromiumoxide::cdp::browser_protocol::input::EventDragIntercepted;
use chromiumoxide::Page;
use futures_util::{FutureExt, StreamExt};
use serde_json::{json, Value};

use super::act::{input, with_dialog};
use super::error::AutomationError;
use super::frames::Rect;
use super::node::{check_not_covered, state, visible_point, Node};
use super::outcome::{what_happened, Watch};
use crate::browser::session::call;
use crate::browser::{bounded, BrowserRef};

/// Mouse moves from the source to the target (Chromium starts a drag after a few px).
const MOVES: usize = 8;

/// The center of the node's first content quad inside the viewport, without scrolling, in
/// top-level viewport CSS px (through every frame, [`super::frames::Session::to_top`]).
async fn point_now(node: &Node) -> Result<Option<(f64, f64)>, AutomationError> {
    let s = &node.session;
    let quads = match call(s, "DOM.getContentQuads", json!({"backendNodeId": node.backend})).await {
        Ok(v) => v["quads"].as_array().cloned().unwrap_or_default(),
        Err(_) => return Ok(None),
    };
    let (vw, vh, _, _) = s.viewport().await?;
    let viewport = Rect { x: 0.0, y: 0.0, width: vw, height: vh };
    for q in quads {
        let p: Vec<f64> = q.as_array().into_iter().flatten().filter_map(Value::as_f64).collect();
        if p.len() != 8 {
            continue;
        }
        let (xs, ys) = ([p[0], p[2], p[4], p[6]], [p[1], p[3], p[5], p[7]]);
        let (x0, x1) = (xs.iter().cloned().fold(f64::MAX, f64::min), xs.iter().cloned().fold(f64::MIN, f64::max));
        let (y0, y1) = (ys.iter().cloned().fold(f64::MAX, f64::min), ys.iter().cloned().fold(f64::MIN, f64::max));
        let Some(r) = (Rect { x: x0, y: y0, width: x1 - x0, height: y1 - y0 }).clip(viewport) else { continue };
        if let Some(r) = s.to_top(r).await? {
            return Ok(Some((r.x + r.width / 2.0, r.y + r.height / 2.0)));
        }
    }
    Ok(None)
}

fn mouse(kind: &str, (x, y): (f64, f64), buttons: i64) -> (&'static str, Value) {
    let mut p = json!({"type": kind, "x": x, "y": y, "modifiers": 0, "buttons": buttons});
    if kind != "mouseMoved" || buttons != 0 {
        p["button"] = "left".into();
    }
    if kind != "mouseMoved" {
        p["clickCount"] = 1.into();
    }
    ("Input.dispatchMouseEvent", p)
}

/// Drags `from` onto `to` → `{"from":{"x","y"},"to":{"x","y"},"kind":"html5"|"pointer",
/// "dialog"}`. Both must be enabled and visible at once (the target is scrolled into view,
/// then the source; the target must still show); the source must be on top at its point,
/// the target at its.
pub async fn drag(browser: &BrowserRef, page: &Page, from: &Node, to: &Node) -> Result<Value, AutomationError> {
    for n in [from, to] {
        if state(n).await?.disabled {
            return Err(AutomationError::Disabled(n.name.clone()));
        }
    }
    visible_point(to).await?;
    let a = visible_point(from).await?;
    let b = point_now(to).await?.ok_or_else(|| {
        AutomationError::NotVisible(format!("{} (it does not show together with {})", to.name, from.name))
    })?;
    check_not_covered(from, a.0, a.1).await?;
    check_not_covered(to, b.0, b.1).await?;

    let mut watch = Watch::start(page, from).await?;
    let mut intercepted = bounded("listen", page.event_listener::<EventDragIntercepted>()).await?;
    call(page, "Input.setInterceptDrags", json!({"enabled": true})).await?;
    let result = async {
        let mut steps = vec![mouse("mouseMoved", a, 0), mouse("mousePressed", a, 1)];
        for i in 1..=MOVES {
            let t = i as f64 / MOVES as f64;
            steps.push(mouse("mouseMoved", (a.0 + (b.0 - a.0) * t, a.1 + (b.1 - a.1) * t), 1));
        }
        let total = steps.len() + 1;
        let mut data = None;
        for (i, step) in steps.into_iter().enumerate() {
            if input(browser, page, vec![step]).await? {
                return Ok((None, true));
            }
            if let Some(why) = watch.changed(from).await? {
                return Err(AutomationError::UnknownOutcome {
                    message: format!(
                        "sent {} of {total} mouse events of the drag from {} to {}, {}: the rest were not sent",
                        i + 1,
                        from.name,
                        to.name,
                        what_happened(why, &from.name)
                    ),
                    reason: why,
                    delivered: json!({"events": i + 1, "of": total}),
                });
            }
            // The page started an HTML5 drag: Chromium handed it back.
            if let Some(Some(e)) = intercepted.next().now_or_never() {
                data = Some(serde_json::to_value(&e.data).unwrap_or(Value::Null));
                break;
            }
        }
        if let Some(data) = &data {
            for kind in ["dragEnter", "dragOver", "drop"] {
                let ev = ("Input.dispatchDragEvent", json!({"type": kind, "x": b.0, "y": b.1, "data": data}));
                if input(browser, page, vec![ev]).await? {
                    return Ok((Some("html5"), true));
                }
            }
        }
        let kind = if data.is_some() { "html5" } else { "pointer" };
        let d = input(browser, page, vec![mouse("mouseReleased", b, 0)]).await?;
        Ok::<_, AutomationError>((Some(kind), d))
    }
    .await;
    // Whatever happened, Chromium's own dragging is back for the human.
    let _ = call(page, "Input.setInterceptDrags", json!({"enabled": false})).await;
    let (kind, dialog) = result?;
    let out = json!({"from": {"x": a.0, "y": a.1}, "to": {"x": b.0, "y": b.1}, "kind": kind});
    Ok(with_dialog(out, browser, dialog))
}
