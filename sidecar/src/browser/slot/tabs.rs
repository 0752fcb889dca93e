//! Tab management of one browser: a new tab, the active tab, closing one.

use std::time::Duration;

use chromiumoxide::cdp::browser_protocol::page::CloseParams as PageCloseParams;
use chromiumoxide::cdp::browser_protocol::target::{ActivateTargetParams, EventTargetCrashed};

use super::super::{bounded, BrowserError, Tab, ViewState};
use super::*;

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
        self.login_flush().await;
        let page = {
            let b = live.browser.lock().await;
            bounded("Target.createTarget", b.new_page(NEW_TAB_URL)).await?
        };
        let id = page.target_id().as_ref().to_string();
        self.prepare_page(&page).await?;
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
        // Before the first navigation, so force-open covers the tab's first document.
        if let Err(e) = self.sync_force_open(&page).await {
            tracing::warn!(browser = self.id(), "force-open in new tab {id}: {e}");
        }
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

/// How long `unload` lets a pending `beforeunload` dialog's answer arrive, in ms.
const ANSWER_IN_FLIGHT_MS: u64 = 2000;

impl BrowserRef {
    /// Asks every tab's page to leave, as closing a window does: each tab in turn (made
    /// active, so the pane shows the page that asks) gets `Page.close`, which runs its
    /// `beforeunload`. Returns true once no tab is left (or Chromium is gone, or the browser is
    /// popped out: the window is the user's), false once a `beforeunload` dialog holds a tab
    /// (answered OK, that tab goes: call again for the rest; Cancel keeps it and the others).
    pub async fn unload(&self) -> Result<bool, BrowserError> {
        // An answer sent just before this call may still be on its way to Chromium: a
        // dialog that goes within a moment was answered, not pending.
        let mut view = self.subscribe();
        let answered = view.wait_for(|st| !st.dialog.as_ref().is_some_and(|d| d.kind == "beforeunload"));
        let _ = tokio::time::timeout(Duration::from_millis(ANSWER_IN_FLIGHT_MS), answered).await;
        drop(view);
        loop {
            if self.shared().popped_out {
                return Ok(true);
            }
            let next = {
                let s = self.shared();
                if s.phase != Phase::Live {
                    return Ok(true);
                }
                if s.dialog.as_ref().is_some_and(|d| d.kind == "beforeunload") {
                    return Ok(false);
                }
                let first = s.active.clone().filter(|a| s.pages.contains_key(a));
                first.or_else(|| s.tabs.iter().find(|t| s.pages.contains_key(&t.id)).map(|t| t.id.clone()))
            };
            let Some(tab) = next else { return Ok(true) };
            if self.shared().active.as_deref() != Some(&tab) {
                self.select_tab(&tab).await?;
            }
            let page = self.shared().pages.get(&tab).cloned();
            let Some(page) = page else { continue };
            let mut view = self.subscribe();
            let closing = page.clone();
            // As in `close_tab`: the reply races the session's detach; the tab leaving (or
            // its dialog opening) is the answer.
            tokio::spawn(async move {
                if let Err(e) = bounded("Page.close", closing.execute(PageCloseParams::default())).await {
                    tracing::debug!("unload tab: {e}");
                }
            });
            let done = |st: &ViewState| {
                !st.connected
                    || !st.tabs.iter().any(|t| t.id == tab)
                    || st.dialog.as_ref().is_some_and(|d| d.tab == tab)
            };
            let bound = Duration::from_millis(super::super::CDP_CALL_BOUND_MS);
            let held = match tokio::time::timeout(bound, view.wait_for(done)).await {
                Ok(Ok(st)) => st.dialog.as_ref().is_some_and(|d| d.tab == tab),
                Ok(Err(_)) => false,
                Err(_) => return Err(BrowserError::Timeout("Page.close")),
            };
            if held {
                return Ok(false);
            }
        }
    }
}

impl BrowserRef {
    /// Re-reads the titles of the tabs other than the active one (whose title the poll
    /// measures): CDP reports a title only at commit, so one a script sets later would
    /// never reach the tab strip. A tab held by a dialog is skipped (its scripts are blocked).
    pub(super) async fn refresh_other_titles(&self) {
        let pages: Vec<(String, Page)> = {
            let s = self.shared();
            s.pages
                .iter()
                .filter(|(id, _)| s.active.as_ref() != Some(*id) && !s.dialog.as_ref().is_some_and(|d| &d.tab == *id))
                .map(|(id, p)| (id.clone(), p.clone()))
                .collect()
        };
        let mut changed = false;
        for (id, page) in pages {
            let read = tokio::time::timeout(Duration::from_secs(2), eval_in(&page, "document.title".into())).await;
            let Ok(Ok(serde_json::Value::String(title))) = read else { continue };
            let mut s = self.shared();
            if let Some(t) = s.tabs.iter_mut().find(|t| t.id == id) {
                if t.title != title {
                    t.title = title;
                    changed = true;
                }
            }
        }
        if changed {
            self.publish();
        }
    }
}

// ---- page targets: which are tabs, opened and gone ----

impl BrowserRef {
    pub(super) async fn follow_targets(
        &self,
        browser: &Browser,
        generation: u64,
    ) -> Result<JoinHandle<()>, BrowserError> {
        let mut created = bounded("listen", browser.event_listener::<EventTargetCreated>()).await?;
        let mut changed = bounded("listen", browser.event_listener::<EventTargetInfoChanged>()).await?;
        let mut destroyed = bounded("listen", browser.event_listener::<EventTargetDestroyed>()).await?;
        let mut crashed = bounded("listen", browser.event_listener::<EventTargetCrashed>()).await?;
        let weak = Arc::downgrade(&self.0);
        Ok(tokio::spawn(async move {
            loop {
                tokio::select! {
                    Some(ev) = created.next() => {
                        let Some(slot) = weak.upgrade() else { return };
                        BrowserRef(slot).on_target(&ev.target_info, generation, true);
                    }
                    Some(ev) = changed.next() => {
                        let Some(slot) = weak.upgrade() else { return };
                        BrowserRef(slot).on_target(&ev.target_info, generation, false);
                    }
                    Some(ev) = destroyed.next() => {
                        let Some(slot) = weak.upgrade() else { return };
                        BrowserRef(slot).on_target_gone(ev.target_id.as_ref(), generation);
                    }
                    Some(ev) = crashed.next() => {
                        let Some(slot) = weak.upgrade() else { return };
                        BrowserRef(slot).on_crashed(ev.target_id.as_ref(), generation);
                    }
                    else => return,
                }
            }
        }))
    }

    pub(super) fn on_target(&self, info: &TargetInfo, generation: u64, created: bool) {
        if info.r#type != "page" {
            return;
        }
        let id = info.target_id.as_ref().to_string();
        let attach = {
            let mut s = self.shared();
            if s.generation != generation || s.gone.contains(&id) {
                return;
            }
            let is_new = !s.tabs.iter().any(|t| t.id == id);
            let opened_by_ours = info.opener_id.as_ref().is_some_and(|o| s.tabs.iter().any(|t| t.id == o.as_ref()));
            // In a popped-out window every page the user opens (Ctrl+T) is a tab too.
            let users = s.headed && s.phase == Phase::Live;
            if is_new && !opened_by_ours && !users {
                drop(s);
                if created && s_is_blank(&info.url) {
                    let me = self.clone();
                    let target = info.target_id.clone();
                    tokio::spawn(async move { me.close_stray(target).await });
                }
                return;
            }
            let mut committed = None;
            if is_new {
                s.tabs.push(Tab { id: id.clone(), url: info.url.clone(), title: info.title.clone() });
            } else if let Some(t) = s.tabs.iter_mut().find(|t| t.id == id) {
                if t.url != info.url {
                    tracing::debug!(tab = %id, "tab url {} -> {}", t.url, info.url);
                    committed = s.pages.get(&id).cloned().filter(|_| !s.headed);
                }
                let t = s.tabs.iter_mut().find(|t| t.id == id).expect("found above");
                t.url = info.url.clone();
                t.title = info.title.clone();
            }
            if committed.is_some() {
                if let Some(p) = s.loading.get_mut(&id) {
                    *p = None;
                }
            }
            if let Some(page) = committed {
                // A navigation may swap the page's renderer while a crisp capture has it
                // re-emulated at the capture's scale; the new renderer can keep that scale
                // (every click then landed at 1/DPR of its target, issue #11). The wanted
                // metrics are written again, through the gate, after whatever capture runs.
                let me = self.clone();
                tokio::spawn(async move {
                    let _ = me.apply_wanted(&page).await;
                });
            }
            if s.active.as_deref() == Some(&id) && is_http(&info.url) {
                s.last_url = info.url.clone();
            }
            is_new && !s.pages.contains_key(&id) && s.phase == Phase::Live
        };
        self.publish();
        if attach {
            let me = self.clone();
            let target = info.target_id.clone();
            tokio::spawn(async move { me.attach_opened(target, generation).await });
        }
    }

    /// Closes a page target that is not a tab (a blank page Chromium opened on its own).
    pub(super) async fn close_stray(&self, target: TargetId) {
        let live = self.shared().live.clone();
        let Some(live) = live else { return };
        let b = live.browser.lock().await;
        let _ = bounded("Target.closeTarget", b.execute(CloseTargetParams::new(target))).await;
    }

    /// A page opened by one of ours (window.open, target=_blank) becomes a tab and the active
    /// one, with the browser's viewport.
    pub(super) async fn attach_opened(&self, target: TargetId, generation: u64) {
        let live = self.shared().live.clone();
        let Some(live) = live else { return };
        let mut page = None;
        for _ in 0..50 {
            let got = {
                let b = live.browser.lock().await;
                tokio::time::timeout(Duration::from_secs(2), b.get_page(target.clone())).await
            };
            if let Ok(Ok(p)) = got {
                page = Some(p);
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let Some(page) = page else {
            tracing::debug!("could not attach to opened tab {}", target.as_ref());
            return;
        };
        let _ = self.apply_wanted(&page).await;
        // Opened by the page: its first document is already loading, so the scripts reach
        // it now and every later one from its start.
        if let Err(e) = self.prepare_page(&page).await {
            tracing::warn!("opened tab {}: document-start scripts: {e}", target.as_ref());
        }
        self.watch_page(&page, generation);
        // A page a page opened is already loading its first document: covered from its next.
        let _ = self.sync_force_open(&page).await;
        let id = target.as_ref().to_string();
        {
            let mut s = self.shared();
            if s.generation != generation || !s.tabs.iter().any(|t| t.id == id) {
                return;
            }
            s.pages.insert(id.clone(), page.clone());
            s.active = Some(id);
        }
        self.measure_and_publish(&page).await;
    }

    pub(super) fn on_target_gone(&self, id: &str, generation: u64) {
        let new_active = {
            let mut s = self.shared();
            if s.generation != generation {
                return;
            }
            s.gone.insert(id.to_string());
            let had = s.tabs.iter().any(|t| t.id == id);
            s.tabs.retain(|t| t.id != id);
            if had && s.tabs.is_empty() && s.headed && s.popped_out && s.phase == Phase::Live {
                // The user closed the window (its last page): pop back in.
                s.pages.clear();
                s.active = None;
                drop(s);
                self.publish();
                self.queue_window_gone(generation);
                return;
            }
            s.pages.remove(id);
            s.crashed.remove(id);
            s.loading.remove(id);
            if s.dialog.as_ref().is_some_and(|d| d.tab == id) {
                s.dialog = None;
            }
            if s.active.as_deref() == Some(id) {
                s.active = s.tabs.iter().rev().find(|t| s.pages.contains_key(&t.id)).map(|t| t.id.clone());
                s.active.as_ref().and_then(|a| s.pages.get(a)).cloned()
            } else {
                None
            }
        };
        self.publish();
        if let Some(page) = new_active {
            let me = self.clone();
            tokio::spawn(async move {
                let _ = me.apply_wanted(&page).await;
                me.measure_and_publish(&page).await;
            });
        }
    }

    // ---- operations ----
}
