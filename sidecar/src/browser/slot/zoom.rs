//! Page zoom of a headless browser (Ctrl+= / Ctrl+- / Ctrl+0 in the pane), done as Chromium
//! zooms (issue 22 item 8): by device scale. The page's CSS viewport is the wanted one divided
//! by the factor and its devicePixelRatio multiplied by it, so media queries, `innerWidth` and
//! `devicePixelRatio` follow while the frame keeps the pane's size in device pixels. (CSS
//! `zoom` on the root, the first way, left `innerWidth` and the DPR alone: `(max-width: 600px)`
//! never matched at 125 %.) One factor per browser, kept across navigations, tabs and
//! relaunches; written by the one viewport writer (`viewport.rs`), like every metrics write.

use super::super::BrowserError;
use super::*;
use crate::constants::{MAX_ZOOM, MIN_ZOOM};

/// The zoom factors allowed (Chromium's own levels; `constants.rs`).
pub const ZOOM_RANGE: std::ops::RangeInclusive<f64> = MIN_ZOOM..=MAX_ZOOM;

/// The device metrics that show viewport `vp` (CSS px and DPR, as the pane or the fixed mode
/// wants it) at zoom `z`: width and height divided by `z` (rounded, at least 1 px), DPR
/// multiplied by it. Identity at `z` = 1.
pub(super) fn zoomed(vp: Viewport, z: f64) -> Viewport {
    if (z - 1.0).abs() < 1e-9 {
        return vp;
    }
    let css = |n: u32| ((n as f64 / z).round() as u32).max(1);
    Viewport { width: css(vp.width), height: css(vp.height), dpr: vp.dpr * z }
}

impl BrowserRef {
    /// Sets the page zoom of the browser to `factor` (in [`ZOOM_RANGE`]), publishes it and,
    /// headless, writes the zoomed metrics into the active tab (other tabs get them when they
    /// become active). Returns once written and measured, like [`Self::set_viewport`]; at
    /// once while no size is known yet (the first pane size is written zoomed).
    /// Errors: `BadRequest` outside the range; `Timeout` when the write does not land.
    pub async fn set_zoom(&self, factor: f64) -> Result<(), BrowserError> {
        if !factor.is_finite() || !ZOOM_RANGE.contains(&factor) {
            return Err(BrowserError::BadRequest(format!("zoom must be in {MIN_ZOOM}..={MAX_ZOOM}, got {factor}")));
        }
        let vp = {
            let mut s = self.shared();
            s.zoom = factor;
            match s.mode {
                ViewportMode::Fixed(v, _) => Some(v),
                ViewportMode::Pane => s.pane,
            }
            .filter(|_| !s.headed && !s.popped_out)
        };
        self.publish();
        let Some(vp) = vp else { return Ok(()) };
        self.write_now(vp).await
    }

    /// The device metrics to write for the wanted viewport `vp`: `vp` at the browser's zoom.
    pub(super) fn emulated(&self, vp: Viewport) -> Viewport {
        zoomed(vp, self.shared().zoom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zoom_divides_the_css_size_and_multiplies_the_dpr() {
        let vp = Viewport { width: 700, height: 401, dpr: 2.0 };
        assert_eq!(zoomed(vp, 1.0), vp);
        assert_eq!(zoomed(vp, 1.25), Viewport { width: 560, height: 321, dpr: 2.5 });
        assert_eq!(zoomed(vp, 0.5), Viewport { width: 1400, height: 802, dpr: 1.0 });
        // The device size (CSS × DPR) stays the pane's, to within rounding.
        let z = zoomed(Viewport { width: 1386, height: 808, dpr: 1.0 }, 1.1);
        assert!((z.width as f64 * z.dpr - 1386.0).abs() <= 1.0, "{z:?}");
    }
}
