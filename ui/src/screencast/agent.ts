// Pure: where the pane draws the mark of an agent's action (protocol §8.4 `agent`, DESIGN
// §12 "the human stays in charge"). The sidecar names the point or box in the page's
// top-level viewport CSS px; the pane maps it through the same fit as the frame it paints
// (CSS px of the frame, so the page's DPR and the window's DPR never enter).
import type { AgentActivity } from '../api/protocol';
import { type FitRect, fromPage } from './input';

/** Diameter of the ripple drawn at a point, in pane CSS px. */
export const POINT_MARK_PX = 28;
/** How long a mark shows (it fades out), in ms. */
export const MARK_MS = 1200;
/** How long the verb stays in the header after the action ended, in ms (a click is quick). */
export const VERB_LINGER_MS = 1500;

/** A mark in the screencast host's CSS px: a ripple centred on a point, or a box's outline. */
export interface AgentMark {
  kind: 'point' | 'box';
  x: number;
  y: number;
  width: number;
  height: number;
}

/**
 * The mark for an activity through `fit`: its point (where pointer input lands) if it has
 * one, else its box (where keys go); null when it has neither.
 */
export function markFor(fit: FitRect, a: Pick<AgentActivity, 'point' | 'rect'>): AgentMark | null {
  if (a.point) {
    const c = fromPage(fit, { x: a.point.x, y: a.point.y, width: 0, height: 0 });
    const r = POINT_MARK_PX / 2;
    return { kind: 'point', x: c.x - r, y: c.y - r, width: POINT_MARK_PX, height: POINT_MARK_PX };
  }
  if (a.rect) return { kind: 'box', ...fromPage(fit, a.rect) };
  return null;
}

/** Names a mark so each is drawn once: the action's `seq` and what it marks; null for none. */
export function markKey(a: Pick<AgentActivity, 'seq' | 'point' | 'rect'>): string | null {
  if (a.point) return `${a.seq}:point:${a.point.x},${a.point.y}`;
  if (a.rect) return `${a.seq}:box:${a.rect.x},${a.rect.y},${a.rect.width},${a.rect.height}`;
  return null;
}
