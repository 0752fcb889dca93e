//! What agent browsing asks of every page the browser host attaches: its console and
//! network buffers ([`super::logs`]) and its event log ([`super::events`]) start, and the secret-field recorder runs at the start
//! of each of its documents (issue 22 item 13: a password the page shows as text before
//! Porthole's first read is still secret).

use std::sync::Arc;

use chromiumoxide::Page;

use super::events::Events;
use super::logs::Logs;
use super::walk::{SECRET_RECORDER, WORLD};
use crate::browser::{DocumentStartScript, PageObserver, ViewState};

/// Every document's start, in the walk's own world: the walk then finds the recorder's memory.
static DOCUMENT_START: [DocumentStartScript; 1] = [DocumentStartScript { world: WORLD, source: SECRET_RECORDER }];

/// The browser host's [`PageObserver`] for agent browsing.
pub(super) struct PageHooks {
    /// Every tab's console and network buffers.
    pub(super) logs: Arc<Logs>,
    /// Every tab's event log.
    pub(super) events: Arc<Events>,
}

impl PageObserver for PageHooks {
    fn attached(&self, browser: &str, generation: u64, page: &Page, view: tokio::sync::watch::Receiver<ViewState>) {
        self.logs.attached(browser, generation, page);
        self.events.attached(browser, generation, page, view);
    }

    fn document_start(&self) -> &'static [DocumentStartScript] {
        &DOCUMENT_START
    }
}
