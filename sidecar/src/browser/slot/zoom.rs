//! Page zoom of a headless browser (issue #11 item 8: Ctrl+= / Ctrl+- / Ctrl+0 in the pane):
//! CSS `zoom` on each document's root element, set from a host-owned script in an isolated
//! world (the page's scripts cannot see the script, only the style it sets) on every new
//! document of every tab and on the current one at once. One factor per browser, kept
//! across navigations, tabs and relaunches.

use std::collections::HashMap;

use chromiumoxide::cdp::browser_protocol::page::{
    AddScriptToEvaluateOnNewDocumentParams, CreateIsolatedWorldParams, RemoveScriptToEvaluateOnNewDocumentParams,
    ScriptIdentifier,
};

use super::super::{bounded, BrowserError};
use super::*;

/// The zoom factors allowed (Chromium's own levels span 0.25..=5).
pub const ZOOM_RANGE: std::ops::RangeInclusive<f64> = 0.25..=5.0;
/// The isolated world the zoom script runs in.
const WORLD: &str = "porthole-zoom";

/// The script setting zoom `z` on the document's root now and once the parser has made it.
fn zoom_script(z: f64) -> String {
    let v = if (z - 1.0).abs() < 1e-9 { String::new() } else { format!("{z}") };
    format!(
        r#"(() => {{
  if (window !== top) return; // frames scale with the page that holds them
  const set = () => {{ const r = document.documentElement; if (r) r.style.zoom = '{v}'; return !!r; }};
  if (!set()) new MutationObserver((_, o) => {{ if (set()) o.disconnect(); }}).observe(document, {{ childList: true }});
}})()"#
    )
}

/// Zoom scripts registered per tab, so a new factor replaces the old one.
#[derive(Default)]
pub(super) struct ZoomScripts(HashMap<String, ScriptIdentifier>);

impl BrowserRef {
    /// Sets the page zoom of every tab to `factor` (in [`ZOOM_RANGE`]) and publishes it.
    /// Errors: `BadRequest` outside the range; CDP errors of the active tab.
    pub async fn set_zoom(&self, factor: f64) -> Result<(), BrowserError> {
        if !factor.is_finite() || !ZOOM_RANGE.contains(&factor) {
            return Err(BrowserError::BadRequest(format!("zoom must be in 0.25..=5, got {factor}")));
        }
        let (pages, active) = {
            let mut s = self.shared();
            s.zoom = factor;
            (s.pages.values().cloned().collect::<Vec<_>>(), s.active.clone())
        };
        self.publish();
        for p in pages {
            let r = self.apply_zoom(&p).await;
            if active.as_deref() == Some(p.target_id().as_ref()) {
                r?;
            }
        }
        Ok(())
    }

    /// Gives `page` the browser's zoom: its new documents, and its current one now.
    pub(super) async fn apply_zoom(&self, page: &Page) -> Result<(), BrowserError> {
        let (z, old, headed) = {
            let mut s = self.shared();
            let tab = page.target_id().as_ref().to_string();
            (s.zoom, s.zoom_scripts.0.remove(&tab), s.headed)
        };
        if headed || (old.is_none() && (z - 1.0).abs() < 1e-9) {
            return Ok(());
        }
        if let Some(id) = old {
            let _ = bounded(
                "Page.removeScriptToEvaluateOnNewDocument",
                page.execute(RemoveScriptToEvaluateOnNewDocumentParams::new(id)),
            )
            .await;
        }
        let mut add = AddScriptToEvaluateOnNewDocumentParams::new(zoom_script(z));
        add.world_name = Some(WORLD.into());
        let id = bounded("Page.addScriptToEvaluateOnNewDocument", page.execute(add)).await?.result.identifier;
        self.shared().zoom_scripts.0.insert(page.target_id().as_ref().to_string(), id);
        let frame = bounded("mainframe", page.mainframe())
            .await?
            .ok_or_else(|| BrowserError::Cdp("the tab has no main frame".into()))?;
        let mut w = CreateIsolatedWorldParams::new(frame);
        w.world_name = Some(WORLD.into());
        let ctx = bounded("Page.createIsolatedWorld", page.execute(w)).await?.result.execution_context_id;
        let mut e = chromiumoxide::cdp::js_protocol::runtime::EvaluateParams::new(zoom_script(z));
        e.context_id = Some(ctx);
        bounded("Runtime.evaluate", page.execute(e)).await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_script_sets_the_factor_and_clears_it_at_one() {
        assert!(zoom_script(1.25).contains("r.style.zoom = '1.25'"));
        assert!(zoom_script(1.0).contains("r.style.zoom = ''"));
    }
}
