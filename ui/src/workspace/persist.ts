// The wall as a saved document and back (`PUT /api/workspace`; the shape and its parser are
// in doc.ts): converting the snapshot, restoring pane models from a document, and saving
// debounced. No runtimes here: the store creates those for the models restored.
import { api } from '../api/client';
import { DisposableStore } from '../lifecycle/disposable';
import * as L from '../layout/engine';
import { PANE_VIEWPORT } from '../screencast/viewport';
import { type BrowserView, EMPTY_SCREENCAST, type RestoreTabs } from '../pane/types';
import { isHttpUrl } from '../browser/url';
import { SAVED_TABS_MAX, type SavedPane, type WorkspaceDoc } from './doc';
import { type Workspace, unemptied } from './workspaces';
import { EMPTY_BROWSER, type PaneModel, type Snapshot } from './model';
import type { RestorePlan, RestoredTerminal } from './restore';

/** How long the wall must stay unchanged before it is saved, in ms. */
export const SAVE_DEBOUNCE_MS = 300;

/**
 * A screencast pane's tabs as saved: its live tabs' http(s) URLs in order and the active one's
 * index, or, before its browser exists, the tabs it is to reopen; null for a single tab.
 */
export function savedTabs(b: BrowserView): RestoreTabs | null {
  const live = (b.screencast?.tabs ?? []).filter((t) => isHttpUrl(t.url)).slice(0, SAVED_TABS_MAX);
  if (live.length > 1) {
    const active = Math.max(0, live.findIndex((t) => t.id === b.screencast?.activeTab));
    return { tabs: live.map((t) => t.url), active };
  }
  return live.length ? null : b.restoreTabs;
}

/** The saved document (version 2) for snapshot `s`: every workspace, terminal panes with a terminal, and browser panes. */
export function toDoc(s: Snapshot): WorkspaceDoc {
  const panes: WorkspaceDoc['panes'] = {};
  for (const id of s.order) {
    const p = s.panes[id];
    if (p?.kind === 'browser' && p.browser) {
      panes[id] = { kind: 'browser', url: p.browser.url, mode: p.browser.mode, title: p.browser.title, viewport: p.browser.viewport };
      if (p.browser.mode === 'screencast' && p.browser.browserId) panes[id] = { ...panes[id], browser: p.browser.browserId } as SavedPane;
      const tabs = p.browser.mode === 'screencast' ? savedTabs(p.browser) : null;
      if (tabs) panes[id] = { ...panes[id], tabs: tabs.tabs, activeTab: tabs.active } as SavedPane;
      if (p.portOrigin) panes[id] = { ...panes[id], origin: p.portOrigin } as SavedPane;
      if (p.handle) panes[id] = { ...panes[id], handle: p.handle };
      if (p.browser.isolated) panes[id] = { ...panes[id], isolated: true } as SavedPane;
      if (p.remote) panes[id] = { ...panes[id], remote: p.remote } as SavedPane;
    }
    else if (p?.kind === 'terminal' && (p.terminalId ?? p.restoredFrom)) {
      // A restored pane whose new terminal does not exist yet keeps naming the old one, so a
      // quit meanwhile saves it again from the old record (protocol §4).
      const terminalId = (p.terminalId ?? p.restoredFrom)!;
      if (p.remote) {
        panes[id] = { terminalId, title: p.title, command: p.command, remote: p.remote };
        continue;
      }
      panes[id] = { terminalId, title: p.title, command: p.command, ...(p.handle ? { handle: p.handle } : {}), ...(p.kept?.length ? { kept: p.kept } : {}), ...(p.restoredFrom ? { restoredFrom: p.restoredFrom } : {}) };
    }
  }
  const workspaces = s.workspaces.map((w) => {
    const layout = w.id === s.active ? s.layout : w.layout;
    const mine = new Set(L.allPanes(layout));
    return { id: w.id, name: w.name, layout, order: s.order.filter((id) => panes[id] && mine.has(id)), focus: layout.focused, ...(w.host ? { host: w.host } : {}) };
  });
  return { version: 2, workspaces, active: s.active, panes };
}

/** A wall restored from a saved document: its workspaces, pane models (no runtimes yet) and render order. */
export interface RestoredWall {
  /** the workspaces that still show a pane, in strip order (empty when none does) */
  workspaces: Workspace[];
  /** the active one (the first when the saved one is gone; '' when there is none) */
  active: string;
  panes: Record<L.PaneId, PaneModel>;
  order: L.PaneId[];
  /** the smallest pane number (`pN`) not taken by a restored pane */
  nextId: number;
  /** terminal panes of a restored session (restore.ts) whose new terminal starts from a saved record, by pane */
  restored: Record<L.PaneId, RestoredTerminal>;
}

/**
 * The wall of document `doc`, dropping terminal panes whose terminal is not in `known` (the
 * sidecar's terminals now) and the earlier terminals they kept that are gone. With `plan` (the
 * sidecar restored a saved session, restore.ts), a pane whose terminal is gone but which the
 * session describes stays, without a terminal (in `restored`: a new one starts from the
 * record), and browser panes lose their dead browser ids and handles; a pane restored earlier
 * in the sidecar's life (`restoredFrom`; the page reloaded since) shows its saved output again
 * above its live terminal. A workspace left with nothing on its wall brings back its last
 * minimized pane; one left with no pane at all is dropped (the caller starts a fresh pane
 * when none is left).
 */
export function restoreDoc(doc: WorkspaceDoc, known: ReadonlySet<string>, plan: RestorePlan | null = null): RestoredWall {
  const panes: Record<string, PaneModel> = {};
  const restored: Record<string, RestoredTerminal> = {};
  let nextId = 1;
  const keep = (id: string) => {
    const d = doc.panes[id];
    // A remote pane's terminal is not the local sidecar's: it reattaches (or starts anew) there.
    return !!d && (d.kind === 'browser' || !!d.remote || known.has(d.terminalId) || !!plan?.has(d.terminalId));
  };
  const workspaces: Workspace[] = [];
  const order: L.PaneId[] = [];
  for (const w of doc.workspaces) {
    const layout = unemptied(L.prune(w.layout, keep));
    const present = new Set(L.allPanes(layout));
    if (!present.size) continue;
    workspaces.push({ id: w.id, name: w.name, layout, ...(w.host ? { host: w.host } : {}) });
    const mine = w.order.filter((id) => present.has(id) && !order.includes(id));
    for (const id of L.allPanes(layout)) if (!mine.includes(id)) mine.push(id);
    order.push(...mine);
  }
  for (const id of order) {
    const saved = doc.panes[id];
    const d = plan && saved.kind === 'browser' ? plan.browser(saved) : saved;
    if (d.kind === 'browser') {
      panes[id] = {
        id,
        kind: 'browser',
        handle: d.handle ?? null,
        terminalId: null,
        title: d.title,
        command: null,
        status: 'open',
        exitCode: null,
        browser: {
          ...EMPTY_BROWSER,
          url: d.url,
          mode: d.mode,
          title: d.title,
          viewport: d.viewport ?? PANE_VIEWPORT,
          browserId: d.browser ?? null,
          isolated: d.isolated === true,
          restoreTabs: d.mode === 'screencast' && d.tabs ? { tabs: d.tabs, active: d.activeTab ?? 0 } : null,
          screencast: d.mode === 'screencast' ? EMPTY_SCREENCAST : null,
        },
        editNonce: d.url ? 0 : 1,
        ...(d.origin ? { portOrigin: d.origin } : {}),
        ...(d.remote ? { remote: d.remote } : {}),
      };
    } else if (d.remote) {
      panes[id] = { id, kind: 'terminal', handle: null, terminalId: d.terminalId, remote: d.remote, title: d.title, command: d.command, status: 'connecting', exitCode: null };
    } else {
      // A terminal gone with the sidecar the session restores: a new one, named by the new sidecar.
      const record = known.has(d.terminalId) ? null : (plan?.terminal(d.terminalId) ?? null);
      // A pane restored earlier in this sidecar's life (a reload since): its saved output again.
      const shown = record ? null : d.restoredFrom && known.has(d.terminalId) ? (plan?.shown(d.restoredFrom) ?? null) : null;
      if (record ?? shown) restored[id] = (record ?? shown)!;
      const restoredFrom = record ? d.terminalId : shown ? d.restoredFrom : undefined;
      // A document older than handles: the terminal it shows is the best name there is.
      const handle = record ? null : (d.handle ?? d.terminalId);
      const kept = (d.kept ?? []).filter((k) => known.has(k));
      panes[id] = { id, kind: 'terminal', handle, terminalId: record ? null : d.terminalId, title: d.title, command: d.command, status: 'connecting', exitCode: null, ...(kept.length ? { kept } : {}), ...(restoredFrom ? { restoredFrom } : {}) };
    }
    const n = Number(id.slice(1));
    if (Number.isInteger(n) && n >= nextId) nextId = n + 1;
  }
  const active = workspaces.some((w) => w.id === doc.active) ? doc.active : workspaces[0]?.id ?? '';
  return { workspaces, active, panes, order, nextId, restored };
}

/** Writes the document (`keepalive`: the page is going away, the request must outlive it). */
export type PutDoc = (doc: WorkspaceDoc, keepalive: boolean) => Promise<unknown>;

const putDoc: PutDoc = (doc, keepalive) =>
  keepalive
    ? fetch('/api/workspace', {
        method: 'PUT',
        keepalive: true,
        credentials: 'same-origin',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ workspace: doc }),
      })
    : api.putWorkspace(doc);

/**
 * Saves the document `doc()` returns: debounced after each change (`schedule`), at once with
 * `saveNow`, never the same text twice in a row; a failed save is tried again on the next change.
 * Nothing is saved before `arm()`: until the saved wall was read, the wall in memory is not
 * the user's (a reload while the UI starts saved an empty one over it: issue 22, item 2a).
 */
export class DocSaver {
  private readonly store = new DisposableStore();
  /** the debounce: one pending save at most */
  private readonly timer = this.store.timer();
  private lastSaved = '';
  private armed = false;

  constructor(
    private readonly doc: () => WorkspaceDoc,
    private readonly put: PutDoc = putDoc,
  ) {}

  /** Allows saving from now on; the store calls it once the saved wall was read and restored. Idempotent. */
  arm() {
    this.armed = true;
  }

  /** Saves once nothing changed for SAVE_DEBOUNCE_MS (nothing before `arm`). */
  schedule() {
    if (!this.armed) return;
    this.timer.set(() => void this.saveNow(), SAVE_DEBOUNCE_MS);
  }

  /** Saves at once if anything changed since the last save (`keepalive`: the page is going away); nothing before `arm`. */
  async saveNow(keepalive = false): Promise<void> {
    if (!this.armed) return;
    const doc = this.doc();
    const text = JSON.stringify(doc);
    if (text === this.lastSaved) return;
    this.lastSaved = text;
    try {
      await this.put(doc, keepalive);
    } catch {
      this.lastSaved = ''; // try again on the next change
    }
  }
}
