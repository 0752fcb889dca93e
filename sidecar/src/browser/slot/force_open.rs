//! Force-open (issue 24, RISKY, `agent.sealed.force_open`): while armed, every tab of this
//! browser carries a document-start script (`Page.addScriptToEvaluateOnNewDocument`, main
//! world) that makes `attachShadow` create open roots, so the next documents' closed roots
//! are readable. Honest by design: the wrapper's source is its own (no `toString` forgery), so
//! a page can see it; the detectability probe ([`BrowserRef::sealed_probe`]) shows what a page
//! script sees. Disarming removes the script by its identifier: the document already loaded
//! stays patched until it is replaced.
//!
//! Ownership: the [`super::super::Host`] owns the armed flag (one `watch` for every browser)
//! and, when it changes, brings every browser's tabs in line before it returns; each slot
//! owns the script identifiers of its tabs, behind one async lock held across the CDP call,
//! so arming and a new tab never both add (or both miss) the script.

use std::collections::HashMap;

use chromiumoxide::cdp::browser_protocol::page::{
    AddScriptToEvaluateOnNewDocumentParams, RemoveScriptToEvaluateOnNewDocumentParams, ScriptIdentifier,
};
use chromiumoxide::Page;
use serde::Serialize;
use tokio::sync::watch;

use super::super::{bounded, BrowserError};
use super::BrowserRef;

/// The patch: `attachShadow` called with any mode creates an open root. A plain wrapper: its
/// `toString()` is this source, not `[native code]`.
pub const FORCE_OPEN_SCRIPT: &str = r#"(() => {
  const native = Element.prototype.attachShadow;
  Element.prototype.attachShadow = function attachShadow(init) {
    if (init === null || typeof init !== 'object') return native.call(this, init);
    return native.call(this, Object.assign({}, init, { mode: 'open' }));
  };
})();"#;

/// The closed-root probe a page script could run: a detached element is given a closed root
/// (nothing joins the document), then what the page can tell is read back.
const PROBE: &str = r#"(() => {
  const host = document.createElement('div');
  const root = host.attachShadow({ mode: 'closed' });
  const fn = Element.prototype.attachShadow;
  const source = Function.prototype.toString.call(fn);
  return {
    shadow_root_null: host.shadowRoot === null,
    root_mode: root ? root.mode : null,
    native_source: /\{\s*\[native code\]\s*\}\s*$/.test(source),
    source: source.slice(0, 200),
  };
})()"#;

/// What the closed-root probe saw in a tab's current document (protocol §8
/// `POST /api/browsers/{id}/sealed-probe`).
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct ProbeReport {
    /// The tab probed (the active one).
    pub tab: String,
    /// True if and only if force-open is armed for this browser now (new documents).
    pub armed: bool,
    /// True if and only if this document carries the patch (`attachShadow` is not native).
    pub patched: bool,
    /// True if and only if `host.shadowRoot === null` after `attachShadow({mode:'closed'})`:
    /// the page's own check that its closed root is sealed.
    pub shadow_root_null: bool,
    /// The `mode` of the root returned to the page (`"closed"` unpatched, `"open"` patched).
    pub root_mode: Option<String>,
    /// True if and only if `Function.prototype.toString` of `attachShadow` ends in
    /// `{ [native code] }`.
    pub native_source: bool,
    /// The first 200 characters of that source, as a page would read it.
    pub source: String,
    /// One plain sentence: what a fingerprinting script would conclude.
    pub verdict: String,
}

/// Per slot: the armed flag (the host's) and the patch's identifier in each tab that has it.
pub(super) struct ForceOpen {
    armed: watch::Receiver<bool>,
    scripts: tokio::sync::Mutex<HashMap<String, ScriptIdentifier>>,
}

impl ForceOpen {
    /// Follows the host's flag `armed`.
    pub(super) fn new(armed: watch::Receiver<bool>) -> ForceOpen {
        ForceOpen { armed, scripts: tokio::sync::Mutex::new(HashMap::new()) }
    }
}

impl BrowserRef {
    /// True if and only if force-open is armed for this browser's next documents.
    pub fn force_open_armed(&self) -> bool {
        *self.0.force_open.armed.borrow()
    }

    /// Brings `page`'s patch in line with the flag: added when armed and missing, removed
    /// (by identifier) when disarmed and present. Idempotent; runs before a new tab's first
    /// navigation so its first document is covered.
    pub(super) async fn sync_force_open(&self, page: &Page) -> Result<(), BrowserError> {
        let tab = page.target_id().as_ref().to_string();
        let mut scripts = self.0.force_open.scripts.lock().await;
        let want = *self.0.force_open.armed.borrow();
        match (want, scripts.get(&tab).cloned()) {
            (true, None) => {
                let p = AddScriptToEvaluateOnNewDocumentParams::new(FORCE_OPEN_SCRIPT);
                let r = bounded("Page.addScriptToEvaluateOnNewDocument", page.execute(p)).await?;
                scripts.insert(tab, r.result.identifier.clone());
            }
            (false, Some(id)) => {
                bounded(
                    "Page.removeScriptToEvaluateOnNewDocument",
                    page.execute(RemoveScriptToEvaluateOnNewDocumentParams::new(id)),
                )
                .await?;
                scripts.remove(&tab);
            }
            _ => {}
        }
        Ok(())
    }

    /// Brings every live tab in line with the flag (a tab that fails is logged and tried
    /// again at the next change); forgets the identifiers of tabs that are gone.
    pub(in crate::browser) async fn sync_force_open_all(&self) {
        let pages: Vec<Page> = self.shared().pages.values().cloned().collect();
        {
            let live: std::collections::HashSet<String> =
                pages.iter().map(|p| p.target_id().as_ref().to_string()).collect();
            self.0.force_open.scripts.lock().await.retain(|t, _| live.contains(t));
        }
        for page in pages {
            if let Err(e) = self.sync_force_open(&page).await {
                tracing::warn!(browser = self.id(), "force-open in tab {}: {e}", page.target_id().as_ref());
            }
        }
    }

    /// Runs the closed-root probe in the active tab's current document, in the page's own
    /// world (where a page script would run it): a detached element, nothing added to the
    /// document. Errors as [`BrowserRef::eval`].
    pub async fn sealed_probe(&self) -> Result<ProbeReport, BrowserError> {
        let page = self.active_page()?;
        let v = super::eval_in(&page, PROBE.into()).await?;
        let shadow_root_null = v["shadow_root_null"].as_bool().unwrap_or(false);
        let native_source = v["native_source"].as_bool().unwrap_or(false);
        let patched = !native_source;
        let verdict = match (shadow_root_null, native_source) {
            (true, true) => "closed roots are sealed and attachShadow is native: a page sees nothing unusual",
            (false, false) => {
                "this document is force-opened: a page sees closed roots come back open and attachShadow's source is not native"
            }
            (true, false) => "attachShadow is not native (another script wrapped it), but closed roots stay sealed",
            (false, true) => "closed roots come back open though attachShadow looks native",
        };
        Ok(ProbeReport {
            tab: page.target_id().as_ref().to_string(),
            armed: self.force_open_armed(),
            patched,
            shadow_root_null,
            root_mode: v["root_mode"].as_str().map(str::to_string),
            native_source,
            source: v["source"].as_str().unwrap_or_default().chars().take(200).collect(),
            verdict: verdict.to_string(),
        })
    }
}
