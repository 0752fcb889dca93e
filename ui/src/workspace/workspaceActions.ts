// The workspace actions (DESIGN §14, issue 14 item 5): switch, cycle, create, rename, move a
// pane, close. The store owns the snapshot (every workspace's layout, the active one's the
// wall on screen) and the panes' runtimes; this changes the strip through a narrow host.
import type { TerminalInfo } from '../api/protocol';
import * as L from '../layout/engine';
import { paneLabel } from './label';
import type { PaneModel, Snapshot } from './model';
import { closeReasons } from './survivors';
import { endpointFor } from '../terminal/endpoint';
import { WORKSPACES_MAX, cycle, hostOf, makeWorkspace, movePane as movePaneTo, nextWorkspaceId, renamed, unemptied, withLayout, workspaceOf } from './workspaces';

/** What the workspace actions need from the store. */
export interface WorkspaceHost {
  readonly snap: Snapshot;
  /** the wall's size (a moved pane goes right of the focused one on a wide wall, below on a tall one) */
  readonly wall: L.Rect;
  set(next: Partial<Snapshot>): void;
  /** a new terminal pane's model with its runtime on `remote` (null: local), starting in pane `cwdOf`'s working directory when given */
  newTerminal(cwdOf: L.PaneId | null, remote: string | null): PaneModel;
  /** stops pane `id`'s runtime (terminal, kept terminals, browser); the models are the caller's */
  disposePane(id: L.PaneId): void;
  scheduleFocusSync(): void;
}

/** The strip's actions. */
export class WorkspaceActions {
  constructor(private readonly host: WorkspaceHost) {}

  private get snap(): Snapshot {
    return this.host.snap;
  }

  /** Shows workspace `id` (its own layout and focus); the panes of the one left are hidden, not moved. */
  switchTo(id: string) {
    const w = this.snap.workspaces.find((x) => x.id === id);
    if (!w || id === this.snap.active) return;
    this.host.set({ active: id, layout: w.layout, renaming: null });
  }

  /** Prefix n / p: the next (+1) or previous (−1) workspace, wrapping. */
  cycle(delta: 1 | -1) {
    this.switchTo(cycle(this.snap.workspaces, this.snap.active, delta));
  }

  /**
   * Prefix c: a new workspace after the others with one terminal (in the focused terminal's
   * working directory), shown at once. Returns its id; null when WORKSPACES_MAX are open.
   */
  create(host: string | null = null): string | null {
    const list = this.snap.workspaces;
    if (list.length >= WORKSPACES_MAX) return null;
    const p = this.host.newTerminal(this.snap.layout.focused, host);
    // A remote workspace is named after its host.
    const w = makeWorkspace(nextWorkspaceId(list), L.single(p.id), host ?? '', host);
    this.host.set({ workspaces: [...list, w], active: w.id, layout: w.layout, panes: { ...this.snap.panes, [p.id]: p }, order: [...this.snap.order, p.id], renaming: null });
    return w.id;
  }

  /** Prefix , or a double-click: the strip edits workspace `id`'s name (default: the one on screen). */
  startRename(id: string | null = null) {
    const ws = id ?? this.snap.active;
    if (this.snap.workspaces.some((w) => w.id === ws)) this.host.set({ renaming: ws });
  }

  /** Names workspace `id` `name` (cleaned; '' goes back to the focused pane's label), or (null) keeps its name; the edit ends. */
  rename(id: string, name: string | null) {
    this.host.set({ renaming: null, ...(name === null ? {} : { workspaces: renamed(this.snap.workspaces, id, name) }) });
    this.host.scheduleFocusSync();
  }

  /**
   * Moves pane `id` to workspace `to` ('new': a new workspace after the others) beside that
   * workspace's focused pane; the workspace on screen stays unless the pane was the last
   * one of it (then the pane's new workspace is shown). Nothing is re-parented.
   */
  movePane(id: L.PaneId, to: string | 'new'): boolean {
    const from = workspaceOf(this.snap.workspaces, id);
    const pane = this.snap.panes[id];
    if (!from || !pane) return false;
    // A terminal pane stays on its host: it goes only to a workspace of the same host.
    const paneHost = pane.kind === 'terminal' ? (pane.remote ?? null) : undefined;
    let list = this.snap.workspaces;
    let target = to;
    if (to === 'new') {
      if (list.length >= WORKSPACES_MAX) return false;
      target = nextWorkspaceId(list);
      list = [...list, makeWorkspace(target, undefined, paneHost ?? '', paneHost ?? hostOf(from))];
    }
    if (target === from.id) return false;
    const side = (this.host.wall.w >= this.host.wall.h ? 'right' : 'down') as L.SplitSide;
    const moved = movePaneTo(list, id, target, side, paneHost);
    if (moved === list) return false;
    list = moved;
    const left = list.find((w) => w.id === from.id)!;
    const rest = unemptied(left.layout);
    if (!rest.root) {
      list = list.filter((w) => w.id !== from.id);
      const active = from.id === this.snap.active ? target : this.snap.active;
      this.host.set({ workspaces: list, active, layout: list.find((w) => w.id === active)!.layout });
      return true;
    }
    this.host.set({ workspaces: withLayout(list, from.id, rest) });
    return true;
  }

  /**
   * Prefix &: closes workspace `id` (default: the one on screen) and every pane in it, first
   * asking (`closing`) when a terminal in it is busy or its sessions still have processes.
   */
  async requestClose(id: string | null = null): Promise<void> {
    const ws = this.snap.workspaces.find((w) => w.id === (id ?? this.snap.active));
    if (!ws || this.snap.closing) return;
    const terminals = L.allPanes(ws.layout)
      .map((p) => this.snap.panes[p])
      .filter((p): p is PaneModel => p?.kind === 'terminal');
    const answers = await Promise.all(
      terminals.map(async (p) => {
        const ep = endpointFor(p.remote);
        const ask = (t: string) => ep.get(t).catch(() => null);
        const [current, ...kept] = await Promise.all([p.terminalId ? ask(p.terminalId) : Promise.resolve(null), ...(p.kept ?? []).map(ask)]);
        return closeReasons(current, kept.filter((k): k is TerminalInfo => k !== null)).map((r) => `${paneLabel(p)}: ${r}`);
      }),
    );
    if (this.snap.closing || !this.snap.workspaces.some((w) => w.id === ws.id)) return;
    const reasons = answers.flat();
    if (reasons.length) this.host.set({ closing: { workspaceId: ws.id, reasons } });
    else this.close(ws.id);
  }

  /** Closes workspace `id` at once with every pane in it; the last one is replaced by a fresh one with one terminal. */
  close(id: string) {
    const ws = this.snap.workspaces.find((w) => w.id === id);
    if (!ws) return;
    const gone = new Set(L.allPanes(ws.layout));
    for (const p of gone) this.host.disposePane(p);
    const panes = { ...this.snap.panes };
    for (const p of gone) delete panes[p];
    const order = this.snap.order.filter((o) => !gone.has(o));
    if (this.snap.workspaces.length > 1) {
      this.drop(id, { panes, order });
      return;
    }
    const p = this.host.newTerminal(null, null);
    const fresh = makeWorkspace(nextWorkspaceId(this.snap.workspaces), L.single(p.id));
    this.host.set({ workspaces: [fresh], active: fresh.id, layout: fresh.layout, panes: { ...panes, [p.id]: p }, order: [...order, p.id], renaming: null });
  }

  /** Removes workspace `id` from the strip (its panes already gone or moved), showing its neighbour if it was on screen. */
  drop(id: string, extra: Partial<Snapshot>) {
    const list = this.snap.workspaces;
    const i = list.findIndex((w) => w.id === id);
    const rest = list.filter((w) => w.id !== id);
    const active = id === this.snap.active ? rest[Math.max(0, i - 1)].id : this.snap.active;
    this.host.set({ ...extra, workspaces: rest, active, layout: rest.find((w) => w.id === active)!.layout, renaming: null });
  }
}
