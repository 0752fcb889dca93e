// The saved workspace document (`PUT /api/workspace`, opaque to the sidecar): its shape and
// its parser. Pure: the store converts panes to and from it.
import { BROWSER_HANDLE_RE, BROWSER_ID_RE, TERMINAL_HANDLE_RE, TERMINAL_ID_RE } from '../api/protocol';
import { type RenderMode, isRenderMode } from '../browser/modes';
import { isHttpUrl } from '../browser/url';
import * as L from '../layout/engine';
import { type PortOrigin, isPortOrigin } from '../ports/ports';
import { type ViewportChoice, parseViewportChoice } from '../screencast/viewport';

/** One pane in the saved document. `handle` is absent in documents older than the control plane. */
export type SavedPane =
  | { kind?: 'terminal'; terminalId: string; title: string; command: string | null; handle?: string; kept?: string[]; restoredFrom?: string }
  | { kind: 'browser'; url: string; mode: RenderMode; title: string; origin?: PortOrigin; viewport?: ViewportChoice; browser?: string; handle?: string };

/**
 * The saved document. Terminal entries predate `kind` and may lack it; `restoredFrom` names
 * the terminal of a restored session whose saved output the pane shows (restore.ts); `kept` lists the
 * earlier terminals of a pane whose sessions still had processes when it restarted.
 */
export interface WorkspaceDoc {
  version: 1;
  layout: L.LayoutState;
  panes: Record<string, SavedPane>;
  order: string[];
}

/**
 * Reads a saved workspace document field by field; null when it is not one (a wrong
 * version, no valid layout). Panes that do not parse are left out; a handle that is not
 * one (`tN` for terminals, `bN` for browsers) is dropped, and documents from before
 * handles (none at all) are accepted.
 */
export function parseDoc(v: unknown): WorkspaceDoc | null {
  if (typeof v !== 'object' || v === null) return null;
  const o = v as Record<string, unknown>;
  if (o.version !== 1) return null;
  const layout = L.parseLayout(o.layout);
  if (!layout || typeof o.panes !== 'object' || o.panes === null) return null;
  const panes: WorkspaceDoc['panes'] = {};
  for (const [id, p] of Object.entries(o.panes as Record<string, unknown>)) {
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
      };
      continue;
    }
    if (typeof q.terminalId !== 'string') continue;
    panes[id] = {
      terminalId: q.terminalId,
      title: typeof q.title === 'string' ? q.title : '',
      command: typeof q.command === 'string' ? q.command : null,
      ...(typeof q.handle === 'string' && TERMINAL_HANDLE_RE.test(q.handle) ? { handle: q.handle } : {}),
      ...(Array.isArray(q.kept) ? { kept: q.kept.filter((k): k is string => typeof k === 'string' && TERMINAL_ID_RE.test(k)) } : {}),
      ...(typeof q.restoredFrom === 'string' && TERMINAL_ID_RE.test(q.restoredFrom) ? { restoredFrom: q.restoredFrom } : {}),
    };
  }
  const order = Array.isArray(o.order) ? o.order.filter((x): x is string => typeof x === 'string') : [];
  return { version: 1, layout, panes, order };
}
