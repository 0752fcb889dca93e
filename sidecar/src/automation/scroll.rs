//! `scroll` (trusted mouse wheel input over the page or an element) and `scroll-to` (the
//! element and every scrolling ancestor scrolled so it shows, and the part of its border box
//! still visible, clipped by every ancestor scroller and frame).

use chromiumoxide::Page;
use serde_json::{json, Value};

use super::error::AutomationError;
use super::frames::Rect;
use super::node::{visible_point, Node};
use crate::browser::session::{call, call_on};

/// Wheel delta of `top`/`bottom`, in CSS px: past any page's end (Chromium stops at it).
const TO_THE_END_PX: f64 = 1_000_000.0;
/// Largest `scroll PX`, in CSS px.
pub const MAX_SCROLL_PX: f64 = 1_000_000.0;

/// Where `scroll` goes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scroll {
    /// One viewport (or element) height up.
    Up,
    /// One height down.
    Down,
    /// To the start.
    Top,
    /// To the end.
    Bottom,
    /// This many CSS px (negative: up).
    Px(f64),
}

impl Scroll {
    /// `up`, `down`, `top`, `bottom` or a number of CSS px.
    pub fn parse(s: &str) -> Option<Scroll> {
        match s {
            "up" => Some(Scroll::Up),
            "down" => Some(Scroll::Down),
            "top" => Some(Scroll::Top),
            "bottom" => Some(Scroll::Bottom),
            n => n.parse::<f64>().ok().filter(|v| v.is_finite() && v.abs() <= MAX_SCROLL_PX).map(Scroll::Px),
        }
    }

    fn delta(self, height: f64) -> f64 {
        match self {
            Scroll::Up => -height * 0.875,
            Scroll::Down => height * 0.875,
            Scroll::Top => -TO_THE_END_PX,
            Scroll::Bottom => TO_THE_END_PX,
            Scroll::Px(v) => v,
        }
    }
}

/// Scrolls with one trusted `mouseWheel` at the viewport's center, or at `node`'s visible
/// point (so the scroller under it, then its ancestors, take the wheel) → `{"point",
/// "delta"}`.
pub async fn scroll(page: &Page, node: Option<&Node>, how: Scroll) -> Result<Value, AutomationError> {
    let m = call(page, "Page.getLayoutMetrics", json!({})).await?;
    let vw = m["cssLayoutViewport"]["clientWidth"].as_f64().unwrap_or(0.0);
    let vh = m["cssLayoutViewport"]["clientHeight"].as_f64().unwrap_or(0.0);
    let (x, y, height) = match node {
        Some(n) => {
            let (x, y) = visible_point(n).await?;
            let h = call_on(&n.session, &n.object, "function(){return this.clientHeight || 0}", vec![]).await?;
            (x, y, h.as_f64().filter(|h| *h > 0.0).unwrap_or(vh))
        }
        None => (vw / 2.0, vh / 2.0, vh),
    };
    let delta = how.delta(height);
    call(page, "Input.dispatchMouseEvent", json!({"type": "mouseMoved", "x": x, "y": y})).await?;
    call(page, "Input.dispatchMouseEvent", json!({"type": "mouseWheel", "x": x, "y": y, "deltaX": 0, "deltaY": delta}))
        .await?;
    Ok(json!({"point": {"x": x, "y": y}, "delta": delta}))
}

/// The part of the element's border box visible in the top-level viewport (CSS px), or
/// null: clipped by every ancestor that clips its overflow (through shadow roots), by its
/// window, then by each frame element's content box up to the top.
pub(super) const VISIBLE_RECT_JS: &str = concat!(
    "function(){\n",
    include_str!("clip.js"),
    r#"
  const el = this.nodeType === 1 ? this : this.parentElement;
  if (!el) return null;
  const st = getComputedStyle(el);
  if (st.visibility !== 'visible' || Number(st.opacity) === 0) return null;
  const b = el.getBoundingClientRect();
  const r = clipUp(el, {l: b.left, t: b.top, r: b.right, b: b.bottom});
  if (r.r - r.l < 1 || r.b - r.t < 1) return null;
  return {x: r.l, y: r.t, width: r.r - r.l, height: r.b - r.t};
}"#
);

/// `scroll-to`: `DOM.scrollIntoViewIfNeeded` (which scrolls every scrolling ancestor, frames
/// included, across processes), then the visible part of the border box in its frame
/// process, clipped on up through each out-of-process frame owner ([`super::frames::Session::to_top`]) →
/// `{"rect":{"x","y","width","height"}}`; `element_not_visible` when nothing of it shows.
pub async fn scroll_to(node: &Node) -> Result<Value, AutomationError> {
    let hidden = || AutomationError::NotVisible(node.name.clone());
    if call(&node.session, "DOM.scrollIntoViewIfNeeded", json!({"backendNodeId": node.backend})).await.is_err() {
        return Err(hidden());
    }
    let rect = call_on(&node.session, &node.object, VISIBLE_RECT_JS, vec![]).await?;
    let rect = Rect::from_json(&rect).ok_or_else(hidden)?;
    let rect = node.session.to_top(rect).await?.ok_or_else(hidden)?;
    Ok(json!({"rect": rect.json()}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scroll_amounts() {
        assert_eq!(Scroll::parse("down").unwrap().delta(800.0), 700.0);
        assert_eq!(Scroll::parse("-120"), Some(Scroll::Px(-120.0)));
        assert!(
            Scroll::parse("sideways").is_none() && Scroll::parse("1e9").is_none() && Scroll::parse("NaN").is_none()
        );
        assert!(Scroll::Top.delta(800.0) < -100_000.0);
    }
}
