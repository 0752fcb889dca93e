// The orphan offer (terminals still running that no pane showed when this window started):
// Show them in new panes beside the focused one, Stop them, or dismiss the offer.
import { api } from '../api/client';
import { besidePane, planSplit } from '../control/place';
import * as L from '../layout/engine';
import { GAP_PX, MIN_PANE_PX, type PaneModel, type Snapshot } from './model';

export interface OrphanHost {
  readonly snap: Snapshot;
  readonly wall: L.Rect;
  set(next: Partial<Snapshot>): void;
  setLayout(layout: L.LayoutState, extra: Partial<Snapshot>): void;
  /** a terminal pane on terminal `terminalId` running `command`, named `handle` (its runtime created) */
  newPane(terminalId: string, command: string | null, handle: string): PaneModel;
  scheduleFocusSync(): void;
}

export class OrphanActions {
  constructor(private readonly host: OrphanHost) {}

  /** Shows every offered orphan terminal in a new pane beside the focused one (minimized when the wall has no room); the focus stays. */
  show(): void {
    const h = this.host;
    const orphans = h.snap.orphans;
    if (!orphans.length) return;
    let layout = h.snap.layout;
    const panes = { ...h.snap.panes };
    const order = [...h.snap.order];
    const shown = new Set(Object.values(panes).flatMap((p) => [p.terminalId, ...(p.kept ?? [])]));
    const handles = new Set(Object.values(panes).map((p) => p.handle));
    for (const o of orphans) {
      if (shown.has(o.id)) continue;
      // The handle of the pane it runs under (what `ph` in it knows), unless a pane here has it.
      const handle = handles.has(o.handle) ? o.id : o.handle;
      handles.add(handle);
      const p = h.newPane(o.id, o.command, handle);
      const target = besidePane(layout, null);
      const plan = target ? planSplit(layout, h.wall, target, null, p.id, { gap: GAP_PX, minSize: MIN_PANE_PX }) : null;
      if (plan?.ok) layout = plan.layout;
      else if (target) layout = L.minimize(L.split(layout, target, 'right', p.id), p.id);
      else continue;
      panes[p.id] = p;
      order.push(p.id);
    }
    h.setLayout(layout, { panes, order, orphans: [] });
    h.scheduleFocusSync(); // the keyboard leaves the offer's button
  }

  /** Stops (deletes) every offered orphan terminal: the banner's Stop names them all first. */
  stop(): void {
    for (const o of this.host.snap.orphans) void api.deleteTerminal(o.id).catch(() => undefined);
    this.dismiss();
  }

  /** Hides the orphan offer (the terminals keep running; the next start offers them again). */
  dismiss(): void {
    this.host.set({ orphans: [] });
    this.host.scheduleFocusSync();
  }
}
