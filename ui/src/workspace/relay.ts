// The control plane's side in this window (protocol §10): the `state` it reports and the
// requests `ph` has the sidecar relay to it, carried out as the equivalent click would.
import { ApiError, api } from '../api/client';
import { BROWSER_HANDLE_RE, type UiRequest } from '../api/protocol';
import type { RenderMode } from '../browser/modes';
import { popoutOffer } from '../browser/popout';
import { iframeRefusal } from '../browser/url';
import { Refused } from '../control/messages';
import { besidePane, largestPane, planSplit, roomBeside } from '../control/place';
import { encodeState } from '../control/state';
import * as L from '../layout/engine';
import { openExternal } from '../ports/external';
import { commandTitle } from './PaneRuntime';
import { GAP_PX, MIN_PANE_PX, type PaneModel, type Snapshot } from './model';
import { workspaceNumber } from './workspaces';

/** What the relay needs from the store: the snapshot and the actions the wall's buttons use. */
export interface RelayHost {
  readonly snap: Snapshot;
  /** the wall's size (splits are planned against it) */
  readonly wall: L.Rect;
  set(next: Partial<Snapshot>): void;
  /** the layout of pane `near`'s workspace (the one on screen for null): a relayed request acts where its pane is */
  layoutNear(near: L.PaneId | null): L.LayoutState;
  /** sets the layout of pane `near`'s workspace (with `extra` snapshot fields) */
  setLayoutNear(near: L.PaneId | null, layout: L.LayoutState, extra?: Partial<Snapshot>): void;
  takeId(): L.PaneId;
  /** a terminal pane's model with its runtime, on existing terminal `terminalId` */
  newPane(terminalId: string, title: string, command: string | null, handle: string, id: L.PaneId): PaneModel;
  openBrowser(ref: L.PaneId | null, url: string, opts: { keepSource?: boolean; mode?: RenderMode; handle?: string | null; keepFocus?: boolean; isolated?: boolean }): L.PaneId | null;
  popOut(id: L.PaneId): void;
  showPane(id: L.PaneId): void;
  restore(id: L.PaneId): void;
  close(id: L.PaneId): void;
  /** a new workspace with one terminal pane (remote on `host`, as the dialog connects), shown, named `name`; resolves with the pane's id (rejects with the sidecar's error, nothing made) */
  newWorkspace(host: string | null, name: string | null): Promise<L.PaneId>;
}

/** Reports this window's panes to the UI channel and applies the requests relayed through it. */
export class ControlRelay {
  constructor(private readonly host: RelayHost) {}

  /** The `state` message for the UI channel, as JSON text: every pane, the focused one, and whether this window has the focus. */
  stateText(): string {
    const s = this.host.snap;
    return encodeState({
      order: s.order,
      panes: s.panes,
      minimized: s.workspaces.flatMap((w) => (w.id === s.active ? s.layout : w.layout).minimized),
      workspaces: Object.fromEntries(s.workspaces.flatMap((w, i) => L.allPanes(w.id === s.active ? s.layout : w.layout).map((id) => [id, workspaceNumber(i)]))),
      focused: s.layout.focused,
      active: typeof document !== 'undefined' && document.hasFocus(),
    });
  }

  /** Records the `bN` handles the sidecar gave browser panes reported without one; other entries are ignored. */
  assignHandles(assign: Record<string, string>) {
    let panes = this.host.snap.panes;
    for (const [id, handle] of Object.entries(assign)) {
      const p = panes[id];
      if (p?.kind !== 'browser' || p.handle !== null || !BROWSER_HANDLE_RE.test(handle)) continue;
      panes = { ...panes, [id]: { ...p, handle } };
    }
    if (panes !== this.host.snap.panes) this.host.set({ panes });
  }

  /** The pane named `handle` in this window, if any. */
  private paneByHandle(handle: string): L.PaneId | null {
    return this.host.snap.order.find((id) => this.host.snap.panes[id]?.handle === handle) ?? null;
  }

  /** Refuses when pane `near` (a relayed request's reference pane) is not in this window. */
  private checkNear(near: L.PaneId | null) {
    if (near !== null && !this.host.snap.panes[near]) throw new Refused(`there is no pane ${near} in this window (closed meanwhile?)`);
  }

  /**
   * Carries out a request the sidecar relayed from `ph` (protocol §10) exactly as the
   * equivalent click would, and resolves with the new or acted-on pane's id (null for a
   * `system` open). Rejects with `Refused` (or the API's error, whose message says why)
   * having changed nothing. A request asked again after a reload whose change is already
   * on the wall (the same handle) resolves with that pane.
   */
  async applyRequest(r: UiRequest): Promise<L.PaneId | null> {
    switch (r.verb) {
      case 'split':
        return this.relaySplit(r.near, r.side, r.terminal, r.balance);
      case 'open':
        return this.relayOpen(r.near, r.url, r.mode, r.handle, r.balance, r.isolated);
      case 'pane':
        return this.relayPane(r.pane, r.action);
      case 'workspace':
        return this.host.newWorkspace(r.host, r.name);
    }
  }

  /**
   * A new terminal pane on existing terminal `terminal` (its handle), beside `near` (or, when
   * that is minimized or null, the focused pane) on `side` (null: right when that pane is
   * wider than tall, else down); with `balance`, beside the wall's largest pane instead
   * (`largestPane`). The focus stays where it was.
   */
  private async relaySplit(near: L.PaneId | null, side: L.SplitSide | null, terminal: string, balance: boolean): Promise<L.PaneId> {
    const existing = this.paneByHandle(terminal);
    if (existing) return existing;
    this.checkNear(near);
    let command: string | null;
    try {
      command = commandTitle((await api.getTerminal(terminal)).command);
    } catch (e) {
      throw new Refused(e instanceof ApiError && e.status === 404 ? `terminal ${terminal} has ended` : errorText(e));
    }
    // The wall may have changed while the terminal was asked about.
    const again = this.paneByHandle(terminal);
    if (again) return again;
    this.checkNear(near);
    const base = this.host.layoutNear(near);
    const target = balance ? largestPane(base, this.host.wall, near) : besidePane(base, near);
    if (!target) throw new Refused('there is no pane on the wall to split');
    const id = this.host.takeId();
    const plan = planSplit(base, this.host.wall, target, side, id, { gap: GAP_PX, minSize: MIN_PANE_PX });
    if (!plan.ok) throw new Refused(plan.message);
    const p = this.host.newPane(terminal, '', command, terminal, id);
    this.host.setLayoutNear(near, plan.layout, { panes: { ...this.host.snap.panes, [p.id]: p }, order: [...this.host.snap.order, p.id] });
    return p.id;
  }

  /**
   * A browser pane named `handle` at `url` in `mode`, beside `near` (or the focused pane) by
   * the placement rule (with `balance`: beside the wall's largest pane), never replacing it,
   * the focus staying where it was; as the context
   * menu's port entries do: `iframe` takes its proxy grant first (its refusal is the
   * answer), `popout` opens a screencast and pops it out, `system` hands the URL to the
   * system browser.
   */
  private async relayOpen(near: L.PaneId | null, url: string, mode: 'iframe' | 'screencast' | 'popout' | 'system', handle: string | null, balance: boolean, isolated: boolean): Promise<L.PaneId | null> {
    if (mode === 'system') {
      try {
        await openExternal(url);
      } catch (e) {
        throw new Refused(errorText(e));
      }
      return null;
    }
    const existing = handle ? this.paneByHandle(handle) : null;
    if (existing) return existing;
    this.checkNear(near);
    if (mode === 'popout') {
      // Asked afresh, as the menu offering it does (a display may have come or gone; a window
      // reloaded a moment ago may not know yet).
      const popout = popoutOffer(await api.capabilities().catch((e: unknown) => ({ error: errorText(e) })));
      this.host.set({ popout });
      if (!popout.available) throw new Refused(`pop-out is not available: ${popout.reason ?? 'no display'}`);
    }
    if (mode === 'iframe') {
      const refusal = iframeRefusal(url);
      if (refusal) throw new Refused(refusal);
      try {
        // Fails here (blocked address, too many grants, sidecar gone) before anything moves.
        await api.createProxyGrant({ url, embedders: [location.origin, ...Array.from(location.ancestorOrigins ?? [])] });
      } catch (e) {
        throw new Refused(errorText(e));
      }
    }
    // The wall may have changed while the sidecar was asked.
    const again = handle ? this.paneByHandle(handle) : null;
    if (again) return again;
    this.checkNear(near);
    const base = this.host.layoutNear(near);
    const target = balance ? largestPane(base, this.host.wall, near) : besidePane(base, near);
    if (!target) throw new Refused('there is no pane on the wall to open beside');
    const room = roomBeside(base, this.host.wall, target, null, { gap: GAP_PX, minSize: MIN_PANE_PX });
    if (room) throw new Refused(room);
    const id = this.host.openBrowser(target, url, { keepSource: true, mode: mode === 'iframe' ? 'iframe' : 'screencast', handle, keepFocus: true, isolated });
    if (!id) throw new Refused(`couldn't place a browser pane beside pane ${target}`);
    if (mode === 'popout') this.host.popOut(id);
    return id;
  }

  /** `ph focus|zoom|unzoom|minimize|restore|close`: as the header's buttons and the baseboard do; zoom and unzoom set, never toggle. */
  private relayPane(id: L.PaneId, action: 'focus' | 'zoom' | 'unzoom' | 'minimize' | 'restore' | 'close'): L.PaneId {
    if (!this.host.snap.panes[id]) throw new Refused(`there is no pane ${id} in this window (closed meanwhile?)`);
    const s = this.host.layoutNear(id);
    const minimized = s.minimized.includes(id);
    switch (action) {
      case 'focus':
        this.host.showPane(id);
        break;
      case 'zoom': {
        // A minimized pane comes back first; a lone pane has nothing to zoom over (it fills the wall).
        let next = minimized ? L.restore(s, id) : s;
        if (next.zoomed !== id) next = L.toggleZoom(next, id);
        this.host.setLayoutNear(id, next);
        break;
      }
      case 'unzoom':
        if (s.zoomed === id) this.host.setLayoutNear(id, L.toggleZoom(s, id));
        break;
      case 'minimize':
        if (!minimized) {
          const next = L.minimize(s, id);
          if (next === s) throw new Refused(`pane ${id} is the only pane on the wall: the last one cannot be minimized`);
          this.host.setLayoutNear(id, next);
        }
        break;
      case 'restore':
        if (minimized) this.host.restore(id);
        break;
      case 'close':
        this.host.close(id);
        break;
    }
    return id;
  }
}

/** An error's message for a refusal (the API's own message for an `ApiError`). */
function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
