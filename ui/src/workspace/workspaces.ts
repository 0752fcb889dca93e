// Workspaces (DESIGN §14, issue 14 item 5): several walls in a strip, like tmux windows. Each
// keeps its own layout (and so its own focus, zoom and baseboard); every pane is in exactly
// one. Pure: the store keeps the list in its snapshot and hides the panes of the others
// (their elements stay where they are: nothing is re-parented).
import * as L from '../layout/engine';

/** One wall of the strip. */
export interface Workspace {
  /** `w1`, `w2`, …: stable for the workspace's life, unique among the open ones */
  id: string;
  /** the name the human gave it; '' shows the focused pane's label instead */
  name: string;
  layout: L.LayoutState;
  /** a remote workspace's host (its terminals run there); absent or null: local */
  host?: string | null;
}

/** A workspace id: `w` and a number. */
export const WORKSPACE_ID_RE = /^w[0-9]{1,9}$/;
/** At most this many workspaces (creating more is refused; a document's extra ones are dropped). */
export const WORKSPACES_MAX = 50;
/** A workspace name is at most this many characters (a longer one is cut). */
export const WORKSPACE_NAME_MAX = 64;
/** How many workspaces the digit keys reach: `1`…`9` the first nine, `0` the tenth. */
export const NUMBERED = 10;

/** A fresh workspace `id` named `name` (cleaned) showing `layout`, on `host` (null: local). */
export function makeWorkspace(id: string, layout: L.LayoutState = L.EMPTY_LAYOUT, name = '', host: string | null = null): Workspace {
  return { id, name: cleanName(name), layout, ...(host ? { host } : {}) };
}

/** Workspace `w`'s host, null for a local one. */
export function hostOf(w: Workspace | undefined): string | null {
  return w?.host ?? null;
}

/** `name` on one line, trimmed, at most WORKSPACE_NAME_MAX characters. */
export function cleanName(name: string): string {
  return [...name.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim()].slice(0, WORKSPACE_NAME_MAX).join('');
}

/** The smallest `wN` id with N above every id in `list`. */
export function nextWorkspaceId(list: readonly Workspace[]): string {
  let max = 0;
  for (const w of list) max = Math.max(max, Number(w.id.slice(1)) || 0);
  return `w${max + 1}`;
}

/** The workspace pane `id` is in (on its wall or its baseboard), if any. */
export function workspaceOf(list: readonly Workspace[], id: L.PaneId): Workspace | undefined {
  return list.find((w) => L.contains(w.layout, id));
}

/** The workspace `delta` places after `active` (−1: before), wrapping; `active` itself when alone. */
export function cycle(list: readonly Workspace[], active: string, delta: number): string {
  const i = list.findIndex((w) => w.id === active);
  if (i < 0 || list.length === 0) return list[0]?.id ?? active;
  return list[(((i + delta) % list.length) + list.length) % list.length].id;
}

/** The workspace the digit `digit` (0..9) selects: `1` the first, …, `9` the ninth, `0` the tenth; null past the end. */
export function byDigit(list: readonly Workspace[], digit: number): string | null {
  if (!Number.isInteger(digit) || digit < 0 || digit > 9) return null;
  return list[digit === 0 ? 9 : digit - 1]?.id ?? null;
}

/** The number the strip shows for the workspace at `index` (1-based; the digit key for the first ten). */
export function workspaceNumber(index: number): number {
  return index + 1;
}

/** `list` with workspace `id`'s layout replaced (the same list when it is unchanged or unknown). */
export function withLayout(list: readonly Workspace[], id: string, layout: L.LayoutState): Workspace[] {
  const i = list.findIndex((w) => w.id === id);
  if (i < 0 || list[i].layout === layout) return list as Workspace[];
  const out = [...list];
  out[i] = { ...list[i], layout };
  return out;
}

/** `list` with workspace `id` renamed to `name` (cleaned). */
export function renamed(list: readonly Workspace[], id: string, name: string): Workspace[] {
  return list.map((w) => (w.id === id ? { ...w, name: cleanName(name) } : w));
}

/**
 * Pane ids by workspace (strip order), each workspace's in `order` (the render order): the
 * order in which "next pane wanting attention" walks the panes of every workspace.
 */
export function panesByWorkspace(list: readonly Workspace[], order: readonly L.PaneId[]): L.PaneId[] {
  const out: L.PaneId[] = [];
  for (const w of list) for (const id of order) if (L.contains(w.layout, id)) out.push(id);
  return out;
}

/**
 * Moves pane `id` from its workspace into workspace `to`: beside `to`'s focused pane (the
 * whole wall when `to` is empty), focused there. Returns the new list, or the same list
 * when the pane is unknown, already in `to`, or `to` is unknown. A terminal pane (`paneHost`:
 * its host, null for a local one) goes only to a workspace of the same host: otherwise the
 * move is refused (the same list). The source may be left empty (the caller decides what an
 * empty workspace becomes).
 */
export function movePane(list: readonly Workspace[], id: L.PaneId, to: string, side: L.SplitSide = 'right', paneHost?: string | null): Workspace[] {
  const from = workspaceOf(list, id);
  const target = list.find((w) => w.id === to);
  if (!from || !target || from.id === to) return list as Workspace[];
  if (paneHost !== undefined && hostOf(target) !== paneHost) return list as Workspace[];
  return list.map((w) => {
    if (w.id === from.id) return { ...w, layout: L.close(w.layout, id) };
    if (w.id === to) return { ...w, layout: L.focus(L.add(w.layout, id, side), id) };
    return w;
  });
}

/** True when workspace `w` shows nothing (no pane on its wall or its baseboard). */
export function isEmpty(w: Workspace): boolean {
  return L.allPanes(w.layout).length === 0;
}

/**
 * Brings an empty wall back from its baseboard: when no pane is on the wall but some are
 * minimized, the last one minimized is restored.
 */
export function unemptied(layout: L.LayoutState): L.LayoutState {
  if (!layout.root && layout.minimized.length) return L.restore(layout, layout.minimized[layout.minimized.length - 1]);
  return layout;
}
