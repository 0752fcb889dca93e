//! The page's scroll position for the pane's scroll indicator (issue #11 item 8; headless
//! Chromium hides scrollbars). The frame pump pokes on each frame whose scroll offset moved
//! (and when it starts on a page); one follower per view reads `Page.getLayoutMetrics`,
//! latest-only (pokes while a read is in flight coalesce into one more read), and sends a
//! `scroll` message when the figures changed.

use chromiumoxide::cdp::browser_protocol::page::GetLayoutMetricsParams;
use chromiumoxide::Page;
use serde_json::json;
use tokio::sync::watch;

use crate::browser::bounded;

/// Where the page is scrolled, in CSS px: the visual viewport's offset and size in the
/// content's size.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Scroll {
    x: f64,
    y: f64,
    width: f64,
    height: f64,
    view_width: f64,
    view_height: f64,
}

/// The pump's side: pokes the follower. Cheap to clone.
#[derive(Clone)]
pub(super) struct ScrollPoke {
    tx: watch::Sender<Option<Page>>,
    last: std::sync::Arc<std::sync::Mutex<Option<(f64, f64)>>>,
}

impl ScrollPoke {
    /// A new page is streamed: read its scroll position.
    pub(super) fn page(&self, page: &Page) {
        *self.last.lock().unwrap_or_else(|p| p.into_inner()) = None;
        self.tx.send_replace(Some(page.clone()));
    }

    /// A frame of `page` with this scroll offset (CSS px) was seen: read again if it moved.
    pub(super) fn frame(&self, page: &Page, x: f64, y: f64) {
        let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        if *last == Some((x, y)) {
            return;
        }
        *last = Some((x, y));
        drop(last);
        self.tx.send_replace(Some(page.clone()));
    }
}

/// Starts a view's follower; `send` gets each `scroll` message. Ends when the poke is dropped.
pub(super) fn follow(send: impl Fn(String) + Send + 'static) -> (ScrollPoke, tokio::task::JoinHandle<()>) {
    let (tx, mut rx) = watch::channel::<Option<Page>>(None);
    let task = tokio::spawn(async move {
        let mut sent: Option<Scroll> = None;
        while rx.changed().await.is_ok() {
            let Some(page) = rx.borrow_and_update().clone() else { continue };
            let Ok(m) = bounded("Page.getLayoutMetrics", page.execute(GetLayoutMetricsParams::default())).await else {
                continue;
            };
            let (v, c) = (&m.result.css_visual_viewport, &m.result.css_content_size);
            let now = Scroll {
                x: v.page_x,
                y: v.page_y,
                width: c.width,
                height: c.height,
                view_width: v.client_width,
                view_height: v.client_height,
            };
            if sent == Some(now) {
                continue;
            }
            sent = Some(now);
            send(message(now));
        }
    });
    (ScrollPoke { tx, last: Default::default() }, task)
}

/// `{"type":"scroll","x","y","width","height","view_width","view_height"}`.
fn message(s: Scroll) -> String {
    json!({"type": "scroll", "x": s.x, "y": s.y, "width": s.width, "height": s.height,
        "view_width": s.view_width, "view_height": s.view_height})
    .to_string()
}
