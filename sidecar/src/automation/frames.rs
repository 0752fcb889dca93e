//! Geometry through out-of-process frames: a child session's ([`Session`],
//! `browser/session.rs`) coordinates are its frame's own viewport CSS px. A point or
//! rectangle goes up to the top-level viewport through each frame owner (`<iframe>`): moved
//! by the owner's content-box origin in its parent, clipped by the part of that content box
//! the parent shows (every scroller and frame above it).

use serde_json::{json, Value};

use crate::browser::session::{call_on, Session};
use crate::browser::BrowserError;

/// Most out-of-process frames one snapshot attaches to; past it a frame is shown as not
/// included, saying why.
pub const MAX_CHILD_SESSIONS: usize = 32;

/// An axis-aligned rectangle in CSS px.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rect {
    /// Left edge.
    pub x: f64,
    /// Top edge.
    pub y: f64,
    /// Width.
    pub width: f64,
    /// Height.
    pub height: f64,
}

impl Rect {
    /// The part of `self` inside `other`, or `None` when less than 1 px of it is.
    pub fn clip(self, other: Rect) -> Option<Rect> {
        let (x0, y0) = (self.x.max(other.x), self.y.max(other.y));
        let (x1, y1) =
            ((self.x + self.width).min(other.x + other.width), (self.y + self.height).min(other.y + other.height));
        (x1 - x0 >= 1.0 && y1 - y0 >= 1.0).then_some(Rect { x: x0, y: y0, width: x1 - x0, height: y1 - y0 })
    }

    /// The rectangle as `{"x","y","width","height"}`.
    pub fn json(self) -> Value {
        json!({"x": self.x, "y": self.y, "width": self.width, "height": self.height})
    }

    /// Reads `{"x","y","width","height"}`.
    pub fn from_json(v: &Value) -> Option<Rect> {
        Some(Rect {
            x: v["x"].as_f64()?,
            y: v["y"].as_f64()?,
            width: v["width"].as_f64()?,
            height: v["height"].as_f64()?,
        })
    }
}

/// The owner's content-box origin in its window's viewport, and the part of its content box
/// that window shows (clipped by every scroller and same-process frame above it), or null.
const OWNER_JS: &str = concat!(
    "function(){\n",
    include_str!("clip.js"),
    r#"
  const cs = getComputedStyle(this);
  const b = this.getBoundingClientRect();
  const ox = b.left + this.clientLeft + parseFloat(cs.paddingLeft), oy = b.top + this.clientTop + parseFloat(cs.paddingTop);
  const r = clipUp(this, {l: ox, t: oy, r: ox + this.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight),
           b: oy + this.clientHeight - parseFloat(cs.paddingTop) - parseFloat(cs.paddingBottom)});
  const shown = (r.r - r.l < 1 || r.b - r.t < 1) ? null : {x: r.l, y: r.t, width: r.r - r.l, height: r.b - r.t};
  let x = ox, y = oy;
  for (let w = this.ownerDocument.defaultView; w.frameElement; w = w.parent) {
    const fe = w.frameElement, f = fe.getBoundingClientRect(), fs = w.parent.getComputedStyle(fe);
    x += f.left + fe.clientLeft + parseFloat(fs.paddingLeft); y += f.top + fe.clientTop + parseFloat(fs.paddingTop);
  }
  return {x, y, shown};
}"#
);

/// One frame owner between a child session and its parent: where the child's viewport
/// origin is in the parent session's viewport px, and what of it the parent shows.
struct Hop {
    origin: (f64, f64),
    shown: Option<Rect>,
}

impl Session {
    /// The frame owners from this session up to the tab, innermost first: each one's content
    /// origin and shown part, in its parent session's viewport px.
    async fn hops(&self) -> Result<Vec<Hop>, BrowserError> {
        let mut out = Vec::new();
        let mut s = self;
        while let Some((parent, owner)) = s.owner() {
            let owner = parent.call("DOM.resolveNode", json!({"backendNodeId": owner})).await?;
            let object = owner["object"]["objectId"]
                .as_str()
                .ok_or_else(|| BrowserError::Cdp("DOM.resolveNode: the frame owner is gone".into()))?;
            let v = call_on(parent, object, OWNER_JS, vec![]).await?;
            out.push(Hop {
                origin: (v["x"].as_f64().unwrap_or(0.0), v["y"].as_f64().unwrap_or(0.0)),
                shown: Rect::from_json(&v["shown"]),
            });
            s = parent;
        }
        Ok(out)
    }

    /// True when every frame owner from this session up to the tab is rendered with a box
    /// of positive size, `visibility: visible` and opacity above 0 (in the viewport or not).
    pub async fn owners_visible(&self) -> Result<bool, BrowserError> {
        let mut s = self;
        while let Some((parent, owner)) = s.owner() {
            let owner = parent.call("DOM.resolveNode", json!({"backendNodeId": owner})).await?;
            let Some(object) = owner["object"]["objectId"].as_str() else { return Ok(false) };
            let f = "function(){const r=this.getBoundingClientRect();return r.width>0&&r.height>0&&this.checkVisibility({opacityProperty:true,visibilityProperty:true})}";
            if call_on(parent, object, f, vec![]).await? != Value::Bool(true) {
                return Ok(false);
            }
            s = parent;
        }
        Ok(true)
    }

    /// `r` (this session's viewport px) in top-level viewport CSS px, clipped by each frame
    /// owner's shown content box on the way up; `None` when nothing of it shows. The caller
    /// clips by this session's own viewport first.
    pub async fn to_top(&self, r: Rect) -> Result<Option<Rect>, BrowserError> {
        let mut r = r;
        for h in self.hops().await? {
            let moved = Rect { x: r.x + h.origin.0, y: r.y + h.origin.1, ..r };
            match h.shown.and_then(|s| moved.clip(s)) {
                Some(c) => r = c,
                None => return Ok(None),
            }
        }
        Ok(Some(r))
    }

    /// Hit-tests top-level point `(x, y)` down through the frame owners to this session:
    /// `Ok(Ok((x, y)))` (the point in this session's viewport px) when every owner on the way
    /// is on top there, else `Ok(Err(covered))`: what covers which owner.
    pub async fn hit_down(&self, x: f64, y: f64) -> Result<Result<(f64, f64), Covered>, BrowserError> {
        let mut chain = Vec::new();
        let mut s = self;
        while let Some((parent, owner)) = s.owner() {
            chain.push((parent, owner));
            s = parent;
        }
        let hops = self.hops().await?;
        let (mut x, mut y) = (x, y);
        // Outermost first: each owner must be what its parent hits at the point.
        for ((parent, owner), h) in chain.iter().zip(hops.iter()).rev() {
            if let Some(hit) = hit_test(parent, x, y).await?.filter(|b| b != owner) {
                return Ok(Err(Covered { session: (*parent).clone(), hit, owner: *owner }));
            }
            x -= h.origin.0;
            y -= h.origin.1;
        }
        Ok(Ok((x, y)))
    }
}

/// What covers a frame owner at a point.
pub struct Covered {
    /// The parent session, where both nodes live.
    pub session: Session,
    /// The node on top.
    pub hit: i64,
    /// The frame owner it covers.
    pub owner: i64,
}

/// The node `session` hit-tests at its viewport point `(x, y)` (`DOM.getNodeForLocation`
/// takes document coordinates: the scroll offset is added), `None` when nothing is there.
pub async fn hit_test(session: &Session, x: f64, y: f64) -> Result<Option<i64>, BrowserError> {
    let (_, _, sx, sy) = session.viewport().await?;
    let hit = session
        .call(
            "DOM.getNodeForLocation",
            json!({"x": (x + sx).floor() as i64, "y": (y + sy).floor() as i64,
                   "includeUserAgentShadowDOM": false, "ignorePointerEventsNone": false}),
        )
        .await;
    match hit {
        Ok(v) => Ok(v["backendNodeId"].as_i64()),
        // "No node found at given location".
        Err(BrowserError::Cdp(_)) => Ok(None),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rects_clip() {
        let a = Rect { x: 0.0, y: 0.0, width: 100.0, height: 50.0 };
        let b = Rect { x: 80.0, y: 10.0, width: 100.0, height: 100.0 };
        assert_eq!(a.clip(b), Some(Rect { x: 80.0, y: 10.0, width: 20.0, height: 40.0 }));
        assert_eq!(a.clip(Rect { x: 99.5, ..b }), None, "less than a pixel");
        assert_eq!(Rect::from_json(&a.json()), Some(a));
    }
}
