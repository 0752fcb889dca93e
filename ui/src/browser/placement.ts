// Where a new browser pane goes: the one placement rule every entry point shares (the
// prefix, the header button, a page's new-window request).
//
// Pure: given the layout, the wall and what each pane holds, decide. The store carries the
// decision out (DESIGN §4).
import { type LayoutState, type PaneId, type Rect, type SplitSide, computeLayout } from '../layout/engine';

export type PaneKind = 'terminal' | 'browser';

/** What the rule needs to know about a pane. */
export interface PaneFacts {
  kind: PaneKind;
  /** a terminal nobody has sent input to yet (false for browsers and restored terminals) */
  untouched: boolean;
}

export type Placement =
  /** the reference pane is an untouched terminal: the browser takes its place (its terminal is deleted) */
  | { kind: 'replace'; target: PaneId }
  /** split beside the reference pane */
  | { kind: 'split'; target: PaneId; side: SplitSide };

/**
 * Decides where a browser pane opened from pane `ref` goes: an untouched terminal is replaced
 * in place; otherwise (a browser is never replaced) the new pane splits beside it, to the
 * right when the reference pane is wider than tall (in wall units, as laid out without zoom),
 * else below. Returns null when `ref` is not a visible pane.
 */
export function decidePlacement(
  layout: LayoutState,
  ref: PaneId | null,
  wall: Rect,
  facts: (id: PaneId) => PaneFacts | undefined,
): Placement | null {
  if (ref === null) return null;
  const rect = computeLayout({ ...layout, zoomed: null }, wall).panes.get(ref);
  if (!rect) return null;
  const f = facts(ref);
  if (f && f.kind === 'terminal' && f.untouched) return { kind: 'replace', target: ref };
  return { kind: 'split', target: ref, side: rect.w > rect.h ? 'right' : 'down' };
}
