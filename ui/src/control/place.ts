// Where a relayed request (protocol §10) puts a new pane, and whether the wall has room.
//
// Pure: given the layout and the wall, decide. The store carries the decision out. The
// rule is the human's (DESIGN §4: beside the pane, right when it is wider than tall, else
// down) with two additions a click never needs: the focus stays where it was (opens are
// focus-neutral, DESIGN §11), and a split that would leave a pane under the minimum size
// is refused instead of squeezed.
import * as L from '../layout/engine';

/** Right when `rect` is wider than tall, else down (a square pane splits down). */
export function chooseSide(rect: L.Rect): L.SplitSide {
  return rect.w > rect.h ? 'right' : 'down';
}

/**
 * The pane a new pane goes beside: `near` when it is on the wall (in the tree, zoomed away
 * or not); else (null, or minimized) the focused pane; else the first pane on the wall.
 * Returns null only when no pane is on the wall (a wall always has one).
 */
export function besidePane(layout: L.LayoutState, near: L.PaneId | null): L.PaneId | null {
  // On the wall: in the tree, even behind a zoomed pane (the split ends the zoom).
  const visible = L.leaves(layout.root);
  if (near !== null && visible.includes(near)) return near;
  if (layout.focused !== null && visible.includes(layout.focused)) return layout.focused;
  return visible[0] ?? null;
}

/**
 * The pane a new pane goes beside when the caller named neither a pane nor a side (`ph split`,
 * `ph open` with no `--near`): the largest pane on `near`'s wall by area (laid out without
 * zoom), so repeated opens share the wall out instead of halving the caller each time (an
 * agent's own pane was down to ~20 columns after five). Among panes of equal area, one other
 * than `near` (the caller keeps its room), then the first in wall order. Falls back to
 * `besidePane` when nothing is laid out (an empty wall: null).
 */
export function largestPane(layout: L.LayoutState, wall: L.Rect, near: L.PaneId | null): L.PaneId | null {
  const rects = L.computeLayout({ ...layout, zoomed: null }, wall).panes;
  let best: L.PaneId | null = null;
  let bestArea = -1;
  for (const id of L.leaves(layout.root)) {
    const r = rects.get(id);
    if (!r) continue;
    // Areas within a pixel row of each other are equal (split weights are fractions).
    const area = Math.round(r.w * r.h);
    const tie = Math.abs(area - bestArea) <= Math.max(r.w, r.h);
    if (best === null || (!tie && area > bestArea) || (tie && best === near && id !== near)) {
      best = id;
      bestArea = area;
    }
  }
  return best ?? besidePane(layout, near);
}

/** A pane id no store ever makes (theirs are `p1`, `p2`, …): stands in for the new pane in `roomBeside`. */
const PROBE: L.PaneId = '\u0000new';

/**
 * Why a new pane cannot go beside pane `target` on `side` (null: by `chooseSide`), or null
 * when it can: the same checks as `planSplit`, for callers that place the pane themselves
 * (the store's `openBrowser`).
 */
export function roomBeside(layout: L.LayoutState, wall: L.Rect, target: L.PaneId, side: L.SplitSide | null, opts: PlanOptions): string | null {
  const plan = planSplit(layout, wall, target, side, PROBE, opts);
  return plan.ok ? null : plan.message;
}

/** The result of `planSplit`: the layout to set, or why not. */
export type SplitPlan =
  | { ok: true; layout: L.LayoutState; target: L.PaneId; side: L.SplitSide }
  | { ok: false; message: string };

export interface PlanOptions {
  /** gap between panes, in the wall's unit (CSS px) */
  gap: number;
  /** the least width and height a pane may get, in the wall's unit (CSS px) */
  minSize: number;
}

/**
 * Plans putting new pane `newId` beside pane `target` (in the tree) on `side` (null: by
 * `chooseSide` of the target's rectangle laid out without zoom) on a wall of `wall`'s size.
 * The resulting layout keeps the focus on the pane focused before (zoom ends, as with any
 * split). Refused when `target` is not visible, `newId` is already on the wall, or either
 * pane would end up narrower or lower than `minSize` (unless the wall has not been
 * measured yet: smaller than `minSize` itself).
 */
export function planSplit(layout: L.LayoutState, wall: L.Rect, target: L.PaneId, side: L.SplitSide | null, newId: L.PaneId, opts: PlanOptions): SplitPlan {
  const before = L.computeLayout({ ...layout, zoomed: null }, wall).panes.get(target);
  if (!before) return { ok: false, message: `pane ${target} is not on the wall (minimized or closed)` };
  if (L.contains(layout, newId)) return { ok: false, message: `pane ${newId} is already on the wall` };
  const s = side ?? chooseSide(before);
  let next = L.split(layout, target, s, newId);
  if (next === layout) return { ok: false, message: `pane ${target} cannot be split` };
  if (layout.focused !== null && L.leaves(next.root).includes(layout.focused)) next = { ...next, focused: layout.focused };
  if (wall.w >= opts.minSize && wall.h >= opts.minSize) {
    const rects = L.computeLayout(next, wall, { gap: opts.gap }).panes;
    for (const id of [target, newId]) {
      const r = rects.get(id);
      if (r && (r.w < opts.minSize || r.h < opts.minSize)) {
        return { ok: false, message: `no room beside pane ${target}: split ${s}, a pane would be smaller than ${opts.minSize}×${opts.minSize} px` };
      }
    }
  }
  return { ok: true, layout: next, target, side: s };
}
