//! The events a browser follows on each page it attaches: its JavaScript dialogs, and the
//! [`PageObserver`] told of the page (agent browsing keeps its console and network there).

use chromiumoxide::cdp::browser_protocol::network::{EventResponseReceived, ResourceType};
use chromiumoxide::cdp::browser_protocol::page::{
    AddScriptToEvaluateOnNewDocumentParams, EventFrameRequestedNavigation, EventFrameStartedLoading,
    EventFrameStoppedLoading, EventJavascriptDialogClosed, EventJavascriptDialogOpening,
};
use chromiumoxide::Page;
use futures_util::StreamExt;

use super::super::{bounded, BrowserError, Dialog};
use super::BrowserRef;

impl BrowserRef {
    /// Installs the observer's document-start scripts ([`super::super::PageObserver::document_start`])
    /// in `page`, into its current document too. Fails as the first CDP call that fails.
    pub(super) async fn prepare_page(&self, page: &Page) -> Result<(), BrowserError> {
        let Some(o) = &self.0.observer else { return Ok(()) };
        for script in o.document_start() {
            let mut p = AddScriptToEvaluateOnNewDocumentParams::new(script.source);
            p.world_name = Some(script.world.into());
            p.run_immediately = Some(true);
            bounded("Page.addScriptToEvaluateOnNewDocument", page.execute(p)).await?;
        }
        Ok(())
    }

    /// Follows a page this browser attached: tells the observer, then keeps the pending
    /// dialog of its tab.
    pub(super) fn watch_page(&self, page: &Page, generation: u64) {
        if let Some(o) = &self.0.observer {
            o.attached(self.id(), generation, page, self.subscribe());
        }
        self.follow_file_chooser(page, generation);
        let me = self.clone();
        let page = page.clone();
        let tab = page.target_id().as_ref().to_string();
        tokio::spawn(async move {
            let Ok(mut open) = bounded("listen", page.event_listener::<EventJavascriptDialogOpening>()).await else {
                return;
            };
            let Ok(mut closed) = bounded("listen", page.event_listener::<EventJavascriptDialogClosed>()).await else {
                return;
            };
            // The main frame's id is the tab's target id.
            let Ok(mut started) = bounded("listen", page.event_listener::<EventFrameStartedLoading>()).await else {
                return;
            };
            let Ok(mut stopped) = bounded("listen", page.event_listener::<EventFrameStoppedLoading>()).await else {
                return;
            };
            let Ok(mut requested) = bounded("listen", page.event_listener::<EventFrameRequestedNavigation>()).await
            else {
                return;
            };
            let Ok(mut answered) = bounded("listen", page.event_listener::<EventResponseReceived>()).await else {
                return;
            };
            loop {
                tokio::select! {
                    Some(ev) = open.next() => {
                        let kind = serde_json::to_value(&ev.r#type).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
                        {
                            let mut s = me.shared();
                            if s.generation != generation { return; }
                            s.dialog = Some(Dialog { tab: tab.clone(), kind, message: ev.message.clone(), default_prompt: ev.default_prompt.clone() });
                        }
                        me.publish();
                    }
                    Some(ev) = closed.next() => {
                        {
                            let mut s = me.shared();
                            if s.generation != generation { return; }
                            let stay = !ev.result && s.dialog.as_ref().is_some_and(|d| d.tab == tab && d.kind == "beforeunload");
                            if s.dialog.as_ref().is_some_and(|d| d.tab == tab) { s.dialog = None; }
                            // "Stay": the navigation it held is refused; the page stays.
                            if stay { s.loading.remove(&tab); }
                        }
                        me.publish();
                    }
                    Some(ev) = started.next() => {
                        if ev.frame_id.as_ref() == tab && me.shared().generation == generation {
                            me.set_loading(&tab, Some(None));
                        }
                    }
                    Some(ev) = stopped.next() => {
                        if ev.frame_id.as_ref() == tab && me.shared().generation == generation {
                            me.set_loading(&tab, None);
                        }
                        me.login_changed_soon();
                    }
                    Some(ev) = answered.next() => {
                        // A login answers a form post or a fetch; images and scripts rarely set cookies.
                        if matches!(ev.r#type, ResourceType::Document | ResourceType::Xhr | ResourceType::Fetch) {
                            me.login_changed_soon();
                        }
                    }
                    Some(ev) = requested.next() => {
                        // A link or script of the page navigates: where to, until it commits.
                        if ev.frame_id.as_ref() == tab && me.shared().generation == generation && super::is_http(&ev.url) {
                            me.set_loading(&tab, Some(Some(ev.url.clone())));
                        }
                    }
                    else => return,
                }
            }
        });
    }
}
