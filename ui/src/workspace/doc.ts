// The saved workspace document (`PUT /api/workspace`, opaque to the sidecar): its shape and
// its parser. Pure: the store converts panes to and from it.
import { BROWSER_HANDLE_RE, BROWSER_ID_RE, TERMINAL_HANDLE_RE, TERMINAL_ID_RE } from '../api/protocol';
import { type RenderMode, isRenderMode } from '../browser/modes';
import { isHttpUrl } from '../browser/url';
import * as L from '../layout/engine';
import { type PortOrigin, isPortOrigin } from '../ports/ports';
import { type ViewportChoice, parseViewportChoice } from '../screencast/viewport';
import { isHost } from '../remote/links';
import { WORKSPACES_MAX, WORKSPACE_ID_RE, cleanName } from './workspaces';

/** One pane in the saved document. `handle` is absent in documents older than the control plane. */
export type SavedPane =
  | { kind?: 'terminal'; terminalId: string; title: string; command: string | null; handle?: string; kept?: string[]; restoredFrom?: string; remote?: string }
  | { kind: 'browser'; url: string; mode: RenderMode; title: string; origin?: PortOrigin; viewport?: ViewportChoice; browser?: string; handle?: string; tabs?: string[]; activeTab?: number; isolated?: true; remote?: string };

/** Most tabs of a screencast pane saved (and reopened, protocol §8.2). */
export const SAVED_TABS_MAX = 33;

/**
 * One workspace in the saved document: its layout, its panes in render order (a subset of
 * the document's `panes`) and its focused pane (also the layout's `focused`).
 */
export interface SavedWorkspace {
  id: string;
  name: string;
  layout: L.LayoutState;
  order: string[];
  focus: string | null;
  /** a remote workspace's host (absent: local) */
  host?: string;
}

/**
 * The saved document, version 2: the workspaces in strip order, the active one, and every
 * pane of every workspace. Terminal entries predate `kind` and may lack it; `restoredFrom`
 * names the terminal of a restored session whose saved output the pane shows (restore.ts);
 * `kept` lists the earlier terminals of a pane whose sessions still had processes when it
 * restarted. A
 * version-1 document (`{version:1, layout, panes, order}`, one wall) reads as one workspace.
 */
export interface WorkspaceDoc {
  version: 2;
  workspaces: SavedWorkspace[];
  active: string;
  panes: Record<string, SavedPane>;
}

/**
 * Reads a saved workspace document field by field; null when it is not one (an unknown
 * version, no valid layout). Panes that do not parse are left out; a handle that is not
 * one (`tN` for terminals, `bN` for browsers) is dropped, and documents from before
 * handles (none at all) are accepted. A workspace whose id or layout does not parse, or
 * whose id came before, is left out, as is a pane already in an earlier workspace; past
 * WORKSPACES_MAX they are dropped. An unknown `active` is the first workspace.
 */
export function parseDoc(v: unknown): WorkspaceDoc | null {
  if (typeof v !== 'object' || v === null) return null;
  const o = v as Record<string, unknown>;
  if (o.version !== 1 && o.version !== 2) return null;
  if (typeof o.panes !== 'object' || o.panes === null) return null;
  const panes = parsePanes(o.panes as Record<string, unknown>);
  if (o.version === 1) {
    const layout = L.parseLayout(o.layout);
    if (!layout) return null;
    return { version: 2, workspaces: [{ id: 'w1', name: '', layout, order: parseOrder(o.order), focus: layout.focused }], active: 'w1', panes };
  }
  if (!Array.isArray(o.workspaces)) return null;
  const workspaces: SavedWorkspace[] = [];
  const taken = new Set<string>();
  for (const w of o.workspaces) {
    if (workspaces.length >= WORKSPACES_MAX) break;
    if (typeof w !== 'object' || w === null) continue;
    const q = w as Record<string, unknown>;
    if (typeof q.id !== 'string' || !WORKSPACE_ID_RE.test(q.id) || workspaces.some((x) => x.id === q.id)) continue;
    let layout = L.parseLayout(q.layout);
    if (!layout) continue;
    // A pane is in one workspace: a later claim is dropped.
    layout = L.prune(layout, (id) => !taken.has(id));
    if (typeof q.focus === 'string') layout = L.focus(layout, q.focus);
    for (const id of L.allPanes(layout)) taken.add(id);
    workspaces.push({ id: q.id, name: typeof q.name === 'string' ? cleanName(q.name) : '', layout, order: parseOrder(q.order), focus: layout.focused, ...(isHost(q.host) ? { host: q.host } : {}) });
  }
  if (!workspaces.length) return null;
  const active = typeof o.active === 'string' && workspaces.some((w) => w.id === o.active) ? o.active : workspaces[0].id;
  return { version: 2, workspaces, active, panes };
}

function parseOrder(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

/** A screencast pane's saved tabs: two to SAVED_TABS_MAX http(s) URLs and the active one's index; nothing otherwise. */
function parseTabs(tabs: unknown, active: unknown): { tabs?: string[]; activeTab?: number } {
  if (!Array.isArray(tabs) || tabs.length < 2 || tabs.length > SAVED_TABS_MAX || !tabs.every((t) => isHttpUrl(t))) return {};
  const i = typeof active === 'number' && Number.isInteger(active) && active >= 0 && active < tabs.length ? active : 0;
  return { tabs: tabs as string[], activeTab: i };
}

function parsePanes(raw: Record<string, unknown>): WorkspaceDoc['panes'] {
  const panes: WorkspaceDoc['panes'] = {};
  for (const [id, p] of Object.entries(raw)) {
    if (typeof p !== 'object' || p === null) continue;
    const q = p as Record<string, unknown>;
    if (q.kind === 'browser') {
      if (q.url !== '' && !isHttpUrl(q.url)) continue;
      panes[id] = {
        kind: 'browser',
        url: q.url as string,
        mode: isRenderMode(q.mode) ? q.mode : 'iframe',
        viewport: parseViewportChoice(q.viewport),
        ...(typeof q.browser === 'string' && BROWSER_ID_RE.test(q.browser) ? { browser: q.browser } : {}),
        title: typeof q.title === 'string' ? q.title : '',
        ...(isPortOrigin(q.origin) ? { origin: q.origin } : {}),
        ...(typeof q.handle === 'string' && BROWSER_HANDLE_RE.test(q.handle) ? { handle: q.handle } : {}),
        ...parseTabs(q.tabs, q.activeTab),
        ...(q.isolated === true ? { isolated: true as const } : {}),
        // A remote pane's port: the host whose network the page is on.
        ...(isHost(q.remote) ? { remote: q.remote } : {}),
      };
      continue;
    }
    if (typeof q.terminalId !== 'string') continue;
    // A remote pane's terminal is the remote sidecar's: no local handle or kept terminals.
    if (q.remote !== undefined) {
      if (!isHost(q.remote) || !TERMINAL_ID_RE.test(q.terminalId)) continue;
      panes[id] = { terminalId: q.terminalId, title: typeof q.title === 'string' ? q.title : '', command: typeof q.command === 'string' ? q.command : null, remote: q.remote };
      continue;
    }
    panes[id] = {
      terminalId: q.terminalId,
      title: typeof q.title === 'string' ? q.title : '',
      command: typeof q.command === 'string' ? q.command : null,
      ...(typeof q.handle === 'string' && TERMINAL_HANDLE_RE.test(q.handle) ? { handle: q.handle } : {}),
      ...(Array.isArray(q.kept) ? { kept: q.kept.filter((k): k is string => typeof k === 'string' && TERMINAL_ID_RE.test(k)) } : {}),
      ...(typeof q.restoredFrom === 'string' && TERMINAL_ID_RE.test(q.restoredFrom) ? { restoredFrom: q.restoredFrom } : {}),
    };
  }
  return panes;
}
