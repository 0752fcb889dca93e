//! A headed window's geometry: its outer bounds for a wanted viewport (the window's frame
//! added, clamped to the screen), and where a pop-out goes beside the app's window.

use super::*;

/// The window bounds of [`BrowserRef::fit_window`]: outer size = `want` + the window's frame,
/// clamped to the screen's available area.
pub(super) async fn fit_bounds(
    browser: &tokio::sync::Mutex<Browser>,
    page: &Page,
    want: Viewport,
    beside: Option<ScreenRect>,
) -> Result<(), BrowserError> {
    let inner = measure_page(page).await?;
    let v = eval_in(page, "[screen.availLeft, screen.availTop, screen.availWidth, screen.availHeight]".into()).await?;
    let avail: Vec<i64> = v.as_array().map(|a| a.iter().filter_map(|x| x.as_i64()).collect()).unwrap_or_default();
    let [al, at, aw, ah] = avail[..] else { return Err(BrowserError::Cdp(format!("screen size: {v}"))) };
    let b = browser.lock().await;
    let get = GetWindowForTargetParams { target_id: Some(page.target_id().clone()) };
    let win = bounded("Browser.getWindowForTarget", b.execute(get)).await?.result;
    let (Some(w), Some(h)) = (win.bounds.width, win.bounds.height) else { return Ok(()) };
    let now = [win.bounds.left.unwrap_or(al), win.bounds.top.unwrap_or(at), w, h];
    let mut target = window_bounds(now, (inner.width, inner.height), want, [al, at, aw, ah]);
    if let Some(app) = beside {
        target = place_beside(target, app, [al, at, aw, ah]);
    }
    let [tl, tt, tw, th] = target;
    if [tl, tt, tw, th] == now {
        return Ok(());
    }
    let bounds = Bounds { width: Some(tw), height: Some(th), left: Some(tl), top: Some(tt), ..Default::default() };
    bounded("Browser.setWindowBounds", b.execute(SetWindowBoundsParams::new(win.window_id, bounds))).await?;
    Ok(())
}

/// The bounds `[left, top, width, height]` (screen px) that give a window now at `now`, whose
/// page measures `inner`, the inner size `want`: its frame (outer minus inner) added, then
/// clamped to the available screen area `avail` (`[availLeft, availTop, availWidth,
/// availHeight]`) and moved so that it does not stick out. At least 100×100.
pub(super) fn window_bounds(now: [i64; 4], inner: (u32, u32), want: Viewport, avail: [i64; 4]) -> [i64; 4] {
    let [left, top, w, h] = now;
    let [al, at, aw, ah] = avail;
    let (fw, fh) = (w - inner.0 as i64, h - inner.1 as i64);
    let tw = (want.width as i64 + fw).clamp(100, aw.max(100));
    let th = (want.height as i64 + fh).clamp(100, ah.max(100));
    [left.min(al + aw - tw).max(al), top.min(at + ah - th).max(at), tw, th]
}

/// A rectangle of the screen, in screen px: where the app's window is, for a pop-out window
/// to open beside it (`POST /api/browsers/{id}/popout`'s `beside`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScreenRect {
    /// Left edge.
    pub x: i64,
    /// Top edge.
    pub y: i64,
    /// Width (> 0).
    pub width: i64,
    /// Height (> 0).
    pub height: i64,
}

/// Moves the window `[left, top, width, height]` (already fitted to the screen by
/// [`window_bounds`]) beside the app's window `app` on the available screen area `avail`:
/// to its right when it fits there, else to its left, else against the screen edge on the
/// side with more room (over part of the app, as little as the screen allows). Its top is
/// the app's, moved onto the screen. The size is kept.
pub(super) fn place_beside(win: [i64; 4], app: ScreenRect, avail: [i64; 4]) -> [i64; 4] {
    let [_, _, w, h] = win;
    let [al, at, aw, ah] = avail;
    let right_room = al + aw - (app.x + app.width);
    let left_room = app.x - al;
    let left = if right_room >= w {
        app.x + app.width
    } else if left_room >= w {
        app.x - w
    } else if right_room >= left_room {
        al + aw - w
    } else {
        al
    };
    let top = app.y.min(at + ah - h).max(at);
    [left.min(al + aw - w).max(al), top, w, h]
}
