// Pure: where the screencast canvas's context menu opens inside its pane.

/**
 * Where a `w`×`h` menu opened at (`x`, `y`) goes inside a `boxW`×`boxH` container (all CSS
 * px): at the point when it fits, else shifted up (left) by what overflows, never past the
 * container's top (left) edge.
 */
export function menuPosition(x: number, y: number, w: number, h: number, boxW: number, boxH: number): { left: number; top: number } {
  return { left: Math.max(0, Math.min(x, boxW - w)), top: Math.max(0, Math.min(y, boxH - h)) };
}
