//! `screenshot --annotate` (issue 25 item 7): numbered boxes on the refs that show in the
//! viewport, and their legend (`[3] e12 button "Save"`).
//!
//! The refs are the outline's (read afresh: a node keeps its ref, so they are the last
//! snapshot's for what did not change); each one's border box is put in top-level viewport
//! CSS px (through its frames) and cut to the viewport. The boxes are drawn in the page by
//! an overlay the isolated world adds (a closed shadow root on `<html>`, fixed, above
//! everything, taking no pointer events) and removes right after the capture, whatever the
//! capture did: the page's scripts can see that element while it lasts.

use serde::Serialize;
use serde_json::{json, Value};

use super::walk::WORLD;
use super::{frames, node, page, Automation, AutomationError};
use crate::browser::session::{call_on, Session};
use crate::browser::{eval_in_isolated_world, BrowserRef};

/// Most boxes drawn (the refs after them in page order go unboxed, and are counted).
pub const MAX_BOXES: usize = 100;
/// Most refs looked at for a box (a page's first ones in order).
const MAX_LOOKED_AT: usize = 400;
/// The boxes' and labels' colour, `#ff00ff` (RGB).
pub const BOX_RGB: [u8; 3] = [255, 0, 255];
/// The boxes' border width, in CSS px.
pub const BOX_BORDER_PX: u32 = 2;

/// One numbered box.
#[derive(Debug, Clone, Serialize)]
pub struct Boxed {
    /// Its number on the picture, from 1.
    pub n: usize,
    /// The ref (`e12`).
    pub r#ref: String,
    /// The role shown in the outline.
    pub role: String,
    /// The name, cut to 80 characters.
    pub name: String,
    /// The box in viewport CSS px: `{x,y,width,height}` (the part inside the viewport).
    pub rect: Value,
}

impl Automation {
    /// The refs that show in the active tab's viewport, numbered in page order, with their
    /// boxes → (boxes, refs on screen left unboxed past [`MAX_BOXES`]).
    async fn boxes(&self, b: &BrowserRef) -> Result<(Vec<Boxed>, usize), AutomationError> {
        let (_, _, lines) = self.read_lines(b, None, false).await?;
        let page = page(b)?;
        let (vw, vh, _, _) = Session::from(&page).viewport().await?;
        let mut out = Vec::new();
        let mut more = 0;
        for l in lines.iter().filter(|l| l.has_ref).take(MAX_LOOKED_AT) {
            let Some(num) = l.num else { continue };
            let r = format!("e{num}");
            let Ok(minted) = self.minted(b.id(), &r) else { continue };
            // A ref whose node went meanwhile, or that has no box, is simply not drawn.
            let Ok(node) = node::resolve(b, &page, &r, &minted).await else { continue };
            let Ok(rect) = call_on(
                &node.session,
                &node.object,
                "function(){const r=this.getBoundingClientRect();return {x:r.left,y:r.top,width:r.width,height:r.height}}",
                vec![],
            )
            .await
            else {
                continue;
            };
            let Some(rect) = frames::Rect::from_json(&rect) else { continue };
            let Ok(Some(top)) = node.session.to_top(rect).await else { continue };
            let (x0, y0) = (top.x.max(0.0), top.y.max(0.0));
            let (x1, y1) = ((top.x + top.width).min(vw), (top.y + top.height).min(vh));
            if x1 - x0 < 1.0 || y1 - y0 < 1.0 {
                continue;
            }
            if out.len() >= MAX_BOXES {
                more += 1;
                continue;
            }
            out.push(Boxed {
                n: out.len() + 1,
                r#ref: r,
                role: l.role.clone(),
                name: l.name.chars().take(80).collect(),
                rect: json!({"x": x0, "y": y0, "width": x1 - x0, "height": y1 - y0}),
            });
        }
        Ok((out, more))
    }

    /// `screenshot --annotate`: the viewport with numbered boxes on the refs that show (see
    /// the module) → (PNG, boxes, refs left unboxed). `max_side` as [`Automation::screenshot_scaled`].
    pub async fn screenshot_annotated(
        &self,
        b: &BrowserRef,
        max_side: Option<u32>,
    ) -> Result<(Vec<u8>, Vec<Boxed>, usize), AutomationError> {
        let (boxes, more) = self.boxes(b).await?;
        let page = page(b)?;
        let spec: Vec<Value> = boxes
            .iter()
            .map(|x| json!({"n": x.n, "x": x.rect["x"], "y": x.rect["y"], "w": x.rect["width"], "h": x.rect["height"]}))
            .collect();
        let [r, g, bl] = BOX_RGB;
        let color = format!("rgb({r},{g},{bl})");
        let script = format!(
            "(() => {{ const boxes = {spec}; const host = document.createElement('porthole-annotations'); \
             host.setAttribute('style', 'all:initial;position:fixed;left:0;top:0;width:0;height:0;z-index:2147483647;pointer-events:none;'); \
             const root = host.attachShadow({{mode: 'closed'}}); \
             for (const b of boxes) {{ const d = document.createElement('div'); \
               d.setAttribute('style', `position:fixed;left:${{b.x}}px;top:${{b.y}}px;width:${{b.w}}px;height:${{b.h}}px;box-sizing:border-box;border:{BOX_BORDER_PX}px solid {color};pointer-events:none;margin:0;padding:0;`); \
               const t = document.createElement('span'); t.textContent = String(b.n); \
               const above = b.y >= 14; \
               t.setAttribute('style', `position:absolute;left:-{BOX_BORDER_PX}px;${{above ? 'bottom:100%' : 'top:0'}};background:{color};color:#fff;font:bold 11px/13px sans-serif;padding:0 3px;margin:0;`); \
               d.appendChild(t); root.appendChild(d); }} \
             document.documentElement.appendChild(host); globalThis.__portholeAnnotations = host; return true; }})()",
            spec = Value::Array(spec),
        );
        eval_in_isolated_world(&page, WORLD, script).await?;
        let shot = self.screenshot_scaled(b, None, false, max_side).await;
        let removed = eval_in_isolated_world(
            &page,
            WORLD,
            "(() => { const h = globalThis.__portholeAnnotations; globalThis.__portholeAnnotations = null; if (h) h.remove(); return true; })()"
                .into(),
        )
        .await;
        let png = shot?;
        removed?;
        Ok((png, boxes, more))
    }
}

/// The legend, one line a box: `[3] e12 button "Save"`.
pub fn legend(boxes: &[Boxed], more: usize) -> String {
    let mut out: String = boxes.iter().map(|b| format!("[{}] {} {} {:?}\n", b.n, b.r#ref, b.role, b.name)).collect();
    if more > 0 {
        out.push_str(&format!("({more} more refs on screen not boxed: at most {MAX_BOXES})\n"));
    }
    out
}
