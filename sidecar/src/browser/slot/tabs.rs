//! Tab management of one browser: a new tab, the active tab, closing one.

use std::time::Duration;

use chromiumoxide::cdp::browser_protocol::page::CloseParams as PageCloseParams;
use chromiumoxide::cdp::browser_protocol::target::ActivateTargetParams;

use super::super::{bounded, BrowserError, Tab, ViewState};
use super::BrowserRef;

/// What a new tab is created at: not blank to `on_target` (which closes blank pages it did
/// not open), and not a tab until [`BrowserRef::new_tab`] lists it.
const NEW_TAB_URL: &str = "about:blank#porthole-new-tab";

impl BrowserRef {
    /// Opens a tab, makes it the active one with the browser's viewport, and starts
    /// navigating it to `url` (checked by the caller) once its page is followed (dialogs,
    /// the [`super::super::PageObserver`]), so nothing it does is missed. Returns its id.
    pub async fn new_tab(&self, url: String) -> Result<String, BrowserError> {
        self.active_page()?;
        let (live, generation) = {
            let s = self.shared();
            (s.live.clone(), s.generation)
        };
        let Some(live) = live else { return Err(BrowserError::Disconnected) };
        let page = {
            let b = live.browser.lock().await;
            bounded("Target.createTarget", b.new_page(NEW_TAB_URL)).await?
        };
        let id = page.target_id().as_ref().to_string();
        self.watch_page(&page, generation);
        {
            let mut s = self.shared();
            if s.generation != generation {
                return Err(BrowserError::Disconnected);
            }
            if !s.tabs.iter().any(|t| t.id == id) {
                s.tabs.push(Tab { id: id.clone(), url: NEW_TAB_URL.into(), title: String::new() });
            }
            s.pages.insert(id.clone(), page.clone());
            s.active = Some(id.clone());
        }
        self.publish();
        let _ = self.apply_wanted(&page).await;
        self.measure_and_publish(&page).await;
        self.navigate(url).await?;
        Ok(id)
    }

    /// Makes `tab` the active tab and gives it the browser's viewport.
    pub async fn select_tab(&self, tab: &str) -> Result<(), BrowserError> {
        self.active_page()?;
        let page = {
            let mut s = self.shared();
            let Some(p) = s.pages.get(tab).cloned() else {
                return Err(BrowserError::BadRequest(format!("no tab {tab:?}")));
            };
            s.active = Some(tab.to_string());
            p
        };
        self.publish();
        let _ =
            bounded("Target.activateTarget", page.execute(ActivateTargetParams::new(page.target_id().clone()))).await;
        self.apply_wanted(&page).await?;
        self.measure_and_publish(&page).await;
        Ok(())
    }

    /// Closes `tab`; refuses to close the only tab. Returns once the tab is gone from the
    /// tab list (and another tab is active if it was), or once it is held open by a
    /// `beforeunload` dialog, which the user answers.
    pub async fn close_tab(&self, tab: &str) -> Result<(), BrowserError> {
        self.active_page()?;
        let (page, count) = {
            let s = self.shared();
            (s.pages.get(tab).cloned(), s.tabs.len())
        };
        let Some(page) = page else { return Err(BrowserError::BadRequest(format!("no tab {tab:?}"))) };
        if count <= 1 {
            return Err(BrowserError::BadRequest("cannot close the only tab".into()));
        }
        // Watch before sending the command that changes the state.
        let mut view = self.subscribe();
        // `Page.close`, not `Target.closeTarget`: only it runs the page's beforeunload hooks
        // (Chromium 156 closes a target without asking). Its reply is not awaited: the tab's
        // session is detached by the very close and a reply racing that detach is lost; the
        // tab leaving the list (or its dialog opening) is the answer.
        let closing = page.clone();
        tokio::spawn(async move {
            if let Err(e) = bounded("Page.close", closing.execute(PageCloseParams::default())).await {
                tracing::debug!("close tab: {e}");
            }
        });
        let done =
            |st: &ViewState| !st.tabs.iter().any(|t| t.id == tab) || st.dialog.as_ref().is_some_and(|d| d.tab == tab);
        let bound = Duration::from_millis(super::super::CDP_CALL_BOUND_MS);
        let gone = tokio::time::timeout(bound, async { view.wait_for(done).await.is_ok() }).await;
        match gone {
            Ok(_) => Ok(()),
            Err(_) => Err(BrowserError::Timeout("Target.targetDestroyed")),
        }
    }
}
