//! Sealed captures (issue 24). `screenshot --ref sN`: the crop of one sealed control (its
//! box, scrolled into view, at most `agent.sealed.crop_max_side` CSS px a side, centred on
//! it), as `snapshot --sealed` gave its token. `screenshot --parts` (lever
//! `agent.sealed.part_highlight`, VISIBLE): one capture
//! with the exported parts of every closed shadow host outlined, so an agent sees where a
//! component's styleable pieces are without opening the root. The part names come from one
//! `DOMSnapshot.captureSnapshot` of the tab's process (the same read a `snapshot` takes; no
//! accessibility or shadow-piercing read); the outlines are one `<style>` of `host::part(name)`
//! rules (CSS Shadow Parts) added by Porthole's isolated world for that capture and removed
//! right after it. VISIBLE because the page can see the rule while it is there
//! (`document.styleSheets`, a `MutationObserver`).

use std::collections::BTreeSet;

use serde_json::{json, Value};

use chromiumoxide::cdp::browser_protocol::page::{CaptureScreenshotFormat, CaptureScreenshotParams, Viewport};

use super::scan::measure;
use super::store::parse_token;
use super::{Lever, Policy};
use crate::automation::snapshot::frames;
use crate::automation::walk::WORLD;
use crate::automation::{dom, node};
use crate::automation::{page, Automation, AutomationError};
use crate::browser::eval_in_isolated_world;
use crate::browser::session::{call, Session};

/// The outline drawn around each part: a colour no design system ships by default.
const OUTLINE: &str = "outline: 2px solid #ff00d4 !important; outline-offset: -2px !important;";

/// True for a name usable in a selector as written (custom element names and part names
/// are CSS identifiers; anything else is left out rather than escaped wrong).
fn plain_ident(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with(|c: char| c.is_ascii_digit())
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// The part names a page can style on a closed host from its `part=` / `exportparts=`
/// attributes (as [`dom::DomDoc::closed_parts`] gives them): `part` tokens as they are,
/// `exportparts` items by their outer name (`inner: outer` → `outer`).
pub fn styleable(parts: &[String]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for p in parts {
        if let Some(v) = p.strip_prefix("part=") {
            out.extend(v.split_whitespace().map(str::to_string));
        } else if let Some(v) = p.strip_prefix("exportparts=") {
            for item in v.split(',') {
                let outer = item.rsplit(':').next().unwrap_or("").trim();
                out.insert(outer.to_string());
            }
        }
    }
    out.retain(|s| plain_ident(s));
    out
}

/// The style sheet outlining every `(host tag, part)` of `rules`.
fn sheet(rules: &BTreeSet<(String, String)>) -> String {
    let selectors: Vec<String> = rules.iter().map(|(t, p)| format!("{t}::part({p})")).collect();
    format!("{} {{ {OUTLINE} }}", selectors.join(",\n"))
}

impl Automation {
    /// `screenshot [--ref R] [--full] --parts` under `policy` → the PNG and how many
    /// `(host, part)` pairs were outlined. Refused `part_highlight_disabled` (or
    /// `agent_disabled`) as the policy says; the style is removed whatever the capture did.
    pub async fn screenshot_parts(
        &self,
        b: &crate::browser::BrowserRef,
        r: Option<&str>,
        full: bool,
        policy: &Policy,
    ) -> Result<(Vec<u8>, usize), AutomationError> {
        policy.allow(Lever::PartHighlight)?;
        let page = page(b)?;
        let top = Session::from(&page);
        let main = frames(&call(&top, "Page.getFrameTree", json!({})).await?)
            .into_iter()
            .next()
            .map(|f| f.id)
            .unwrap_or_default();
        let snap = call(&top, "DOMSnapshot.captureSnapshot", json!({"computedStyles": []})).await?;
        let mut rules = BTreeSet::new();
        for d in dom::parse(&snap).iter().filter(|d| d.frame == main) {
            for i in 0..d.nodes.len() {
                let tag = d.nodes[i].tag.to_ascii_lowercase();
                if !d.nodes[i].element || !plain_ident(&tag) || !d.closed_host(i) {
                    continue;
                }
                for p in styleable(&d.closed_parts(i)) {
                    rules.insert((tag.clone(), p));
                }
            }
        }
        if rules.is_empty() {
            return Ok((self.any_screenshot(b, r, full, policy).await?, 0));
        }
        let css = Value::String(sheet(&rules));
        eval_in_isolated_world(
            &page,
            WORLD,
            format!(
                "(() => {{ const s = document.createElement('style'); s.textContent = {css}; \
                 (document.head || document.documentElement).appendChild(s); globalThis.__portholeParts = s; \
                 return true; }})()"
            ),
        )
        .await?;
        let shot = self.any_screenshot(b, r, full, policy).await;
        let removed = eval_in_isolated_world(
            &page,
            WORLD,
            "(() => { const s = globalThis.__portholeParts; globalThis.__portholeParts = null; if (s) s.remove(); return true; })()"
                .into(),
        )
        .await;
        let png = shot?;
        removed?;
        Ok((png, rules.len()))
    }
}

impl Automation {
    /// `screenshot` of a ref or a sealed token (`sN`: [`Automation::screenshot_sealed`]).
    pub async fn any_screenshot(
        &self,
        b: &crate::browser::BrowserRef,
        r: Option<&str>,
        full: bool,
        policy: &Policy,
    ) -> Result<Vec<u8>, AutomationError> {
        match r {
            Some(t) if super::is_token(t) => self.screenshot_sealed(b, t, policy).await,
            _ => self.screenshot(b, r, full).await,
        }
    }

    /// `screenshot --ref sN` under `policy` → the PNG of sealed control `sN`: its box after
    /// scrolling it into view, cut to at most `crop_max_side` CSS px a side around its centre.
    /// Refused as for acting on a token (`sealed_disabled`…), `stale_ref` for a token of an
    /// older document, `element_not_visible` for one with no box.
    pub async fn screenshot_sealed(
        &self,
        b: &crate::browser::BrowserRef,
        r: &str,
        policy: &Policy,
    ) -> Result<Vec<u8>, AutomationError> {
        policy.allow(Lever::Discovery)?;
        let unknown = || AutomationError::UnknownRef(r.chars().take(32).collect());
        let n = parse_token(r).ok_or_else(unknown)?;
        let minted = self.sealed_store().token(b.id(), n).ok_or_else(unknown)?;
        let page = page(b)?;
        let node = node::resolve(b, &page, r, &minted).await?;
        node::visible_point(&node).await?;
        let (vw, vh, _, _) = node.session.viewport().await?;
        let (rect, _) = measure(&node.session, node.backend, (vw, vh))
            .await?
            .ok_or_else(|| AutomationError::NotVisible(r.to_string()))?;
        let side = f64::from(policy.file.crop_max_side.0);
        let (w, h) = (rect.width.min(side), rect.height.min(side));
        let (x, y) = (rect.x + (rect.width - w) / 2.0, rect.y + (rect.height - h) / 2.0);
        let (_, _, sx, sy) = Session::from(&page).viewport().await?;
        let mut p = CaptureScreenshotParams::builder().format(CaptureScreenshotFormat::Png).build();
        p.clip = Some(Viewport { x: x + sx, y: y + sy, width: w, height: h, scale: 1.0 });
        let data = b.capture(&page, p).await?;
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD
            .decode(data)
            .map_err(|e| AutomationError::Browser(crate::browser::BrowserError::Cdp(format!("screenshot: {e}"))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn styleable_names_are_part_tokens_and_exported_outer_names() {
        let got =
            styleable(&["part=label  field".into(), "exportparts=inner: outer, icon".into(), "part=bad\"name".into()]);
        let want: BTreeSet<String> = ["field", "icon", "label", "outer"].into_iter().map(String::from).collect();
        assert_eq!(got, want);
        let rules: BTreeSet<(String, String)> = [("x-a".to_string(), "label".to_string())].into();
        assert_eq!(sheet(&rules), format!("x-a::part(label) {{ {OUTLINE} }}"));
    }
}
