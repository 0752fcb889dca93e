//! The events a browser follows on each page it attaches: its JavaScript dialogs, and the
//! [`PageObserver`] told of the page (agent browsing keeps its console and network there).

use chromiumoxide::cdp::browser_protocol::page::{EventJavascriptDialogClosed, EventJavascriptDialogOpening};
use chromiumoxide::Page;
use futures_util::StreamExt;

use super::super::{bounded, Dialog};
use super::BrowserRef;

impl BrowserRef {
    /// Follows a page this browser attached: tells the observer, then keeps the pending
    /// dialog of its tab.
    pub(super) fn watch_page(&self, page: &Page, generation: u64) {
        if let Some(o) = &self.0.observer {
            o.attached(self.id(), generation, page);
        }
        self.follow_file_chooser(page, generation);
        {
            // A zoomed browser's new tab is zoomed too; a new launch registers its scripts anew.
            let me = self.clone();
            let page = page.clone();
            tokio::spawn(async move {
                if let Err(e) = me.apply_zoom(&page).await {
                    tracing::debug!("zoom a new tab: {e}");
                }
            });
        }
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
                    Some(_) = closed.next() => {
                        {
                            let mut s = me.shared();
                            if s.generation != generation { return; }
                            if s.dialog.as_ref().is_some_and(|d| d.tab == tab) { s.dialog = None; }
                        }
                        me.publish();
                    }
                    else => return,
                }
            }
        });
    }
}
