//! The active tab's navigation: navigate, back and forward, reload (each returning once
//! Chromium started it, or once the page's beforeunload dialog holds it), the loading state
//! the view shows, and a crashed renderer's recovery.

use super::*;

impl BrowserRef {
    /// Navigates the active tab; returns once Chromium has started the navigation, or once
    /// the page's beforeunload dialog holds it (the user's answer decides).
    pub async fn navigate(&self, url: String) -> Result<(), BrowserError> {
        let page = self.active_page()?;
        self.login_flush().await;
        let devtools = self.devtools()?;
        let target = page.target_id().as_ref().to_string();
        let was_crashed = self.loading_again(&target);
        self.set_loading(&target, Some(Some(url.clone())));
        // Not page.execute: chromiumoxide would answer only after the load (see navigate.rs).
        let call = super::super::navigate::navigate(&devtools, &target, &url);
        let r = self.unless_held(&page, bounded("Page.navigate", call)).await?;
        if was_crashed {
            self.recovered(&page).await;
        }
        match r {
            None => tracing::debug!(browser = %self.0.id, "navigation to {url} held by a beforeunload dialog"),
            Some(Some(e)) => tracing::debug!(browser = %self.0.id, "navigation to {url}: error page: {e}"),
            Some(None) => tracing::debug!(browser = %self.0.id, "navigation to {url} started"),
        }
        Ok(())
    }

    /// The `host:port` of this browser's DevTools endpoint (for commands on a connection of
    /// their own, `navigate.rs`).
    pub(crate) fn devtools(&self) -> Result<String, BrowserError> {
        let s = self.shared();
        s.live
            .as_ref()
            .and_then(|l| l.devtools.clone())
            .ok_or_else(|| BrowserError::Cdp("no DevTools endpoint known".into()))
    }

    /// Awaits a command that leaves `page`'s document; `None` once the page's beforeunload
    /// dialog holds it instead (Chromium answers such a command only after the user does,
    /// which may be later than the CDP bound).
    async fn unless_held<T>(
        &self,
        page: &Page,
        call: impl std::future::Future<Output = Result<T, BrowserError>>,
    ) -> Result<Option<T>, BrowserError> {
        let tab = page.target_id().as_ref().to_string();
        // Watch before sending the command that opens the dialog.
        let mut view = self.subscribe();
        let held = view.wait_for(|st| st.dialog.as_ref().is_some_and(|d| d.tab == tab && d.kind == "beforeunload"));
        tokio::select! {
            r = call => r.map(Some),
            _ = held => Ok(None),
        }
    }

    /// Sets tab `tab`'s loading state: `Some(pending)` loading (towards `pending` if known;
    /// a known pending URL is kept when an unknown one comes), `None` not loading.
    pub(super) fn set_loading(&self, tab: &str, to: Option<Option<String>>) {
        {
            let mut s = self.shared();
            match to {
                Some(pending) => {
                    let e = s.loading.entry(tab.to_string()).or_insert(None);
                    if pending.is_some() {
                        *e = pending;
                    }
                }
                None => {
                    s.loading.remove(tab);
                }
            }
        }
        self.publish();
    }

    /// Tab `tab` is made to load a page: a crashed renderer is replaced by a new one, so the
    /// tab is no longer reported crashed. Returns true when it was (see [`Self::recovered`]).
    fn loading_again(&self, tab: &str) -> bool {
        let was = self.shared().crashed.remove(tab);
        if was {
            self.publish();
        }
        was
    }

    /// After a crashed tab was made to load again: writes its device metrics anew. A renderer
    /// that died during a `Page.captureScreenshot` never got the capture's restore, so the
    /// new one would start at the capture's scale, and input be mapped through it (a click
    /// at (400,300) at DPR 2 landed at (200,150)).
    async fn recovered(&self, page: &Page) {
        if let Err(e) = self.apply_wanted(page).await {
            tracing::debug!("device metrics after a crash: {e}");
        }
    }

    /// Tab `tab`'s renderer crashed (`Target.targetCrashed`): reported at once, and nothing
    /// waits on the page's scripts until it loads again.
    pub(super) fn on_crashed(&self, tab: &str, generation: u64) {
        {
            let mut s = self.shared();
            if s.generation != generation || !s.tabs.iter().any(|t| t.id == tab) {
                return;
            }
            tracing::info!(browser = %self.0.id, tab, "renderer crashed");
            s.crashed.insert(tab.to_string());
        }
        self.publish();
    }

    /// Goes `delta` (−1 back, +1 forward) in the active tab's history.
    pub async fn history(&self, delta: i64) -> Result<(), BrowserError> {
        let page = self.active_page()?;
        let h = bounded("Page.getNavigationHistory", page.execute(GetNavigationHistoryParams::default())).await?;
        let idx = h.result.current_index + delta;
        let Some(entry) = usize::try_from(idx).ok().and_then(|i| h.result.entries.get(i)) else {
            return Err(BrowserError::BadRequest("no history entry in that direction".into()));
        };
        self.login_flush().await;
        let was_crashed = self.loading_again(page.target_id().as_ref());
        let go = bounded("Page.navigateToHistoryEntry", page.execute(NavigateToHistoryEntryParams::new(entry.id)));
        self.unless_held(&page, go).await?;
        if was_crashed {
            self.recovered(&page).await;
        }
        Ok(())
    }

    /// Reloads the active tab (answers once a beforeunload dialog holds it, as `navigate`).
    pub async fn reload(&self) -> Result<(), BrowserError> {
        let page = self.active_page()?;
        self.login_flush().await;
        let devtools = self.devtools()?;
        let target = page.target_id().as_ref().to_string();
        let was_crashed = self.loading_again(&target);
        // Not page.execute: on a tab whose renderer crashed, chromiumoxide can drop the
        // command while the tab's session reattaches (see navigate.rs).
        let call = super::super::navigate::reload(&devtools, &target);
        self.unless_held(&page, bounded("Page.reload", call)).await?;
        if was_crashed {
            self.recovered(&page).await;
        }
        Ok(())
    }
}
